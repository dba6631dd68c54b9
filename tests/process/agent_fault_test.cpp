// The agent's leader against a failing API server, as a process with its YAML config, over loopback
// HTTP to the in-tree API server stand-in (there is no kube-apiserver here). Each case follows
// client-go's semantics for the failure (named per test) and asserts what reached the server: the
// writes, their senders, deletes, and that the cluster converges.
//
//   - cut off longer than the Lease: the leader stops acting at its renew deadline, before the Lease
//     can expire (client-go tools/leaderelection/leaderelection.go, renew: "failed to renew lease";
//     OnStoppedLeading), a new leader takes over, and nothing the old one had queued lands afterwards;
//   - the API server restarted mid-reconcile: no HyperNode lost or duplicated, the reconcile completes;
//   - a watch answered 410 Gone: relist, and only what changed meanwhile is written
//     (client-go tools/cache/reflector.go, ListAndWatch: "too old resource version" -> relist);
//   - a token rotated on disk: read again when the file changes, and after a 401
//     (client-go transport/token_source.go, cachingTokenSource; the kubelet's projected token);
//   - 429 with Retry-After: the next attempt waits at least that long (client-go rest/request.go,
//     checkWait / retryAfterSeconds), for writes and for the opening of a watch;
//   - the leader watches what it owns: an owned HyperNode deleted or edited by hand is restored from
//     the watch event (resync is an hour here), with the writes that one object needs;
//   - a fabric source that has not returned within its deadline fails /readyz, naming the source.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/process/agent_harness.h"
#include "tests/support/apiserver/loopback_apiserver.h"
#include "tests/support/apiserver/tcp_partition.h"
#include "tests/support/fixtures.h"
#include "tests/support/ufm/fake_ufm_server.h"
#include "tests/support/ufm/ufm_generator.h"

namespace hypertopo::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

const std::string kHyperNodes = "topology.volcano.sh/v1alpha1/hypernodes";
const std::string kHyperNodesPath = "/apis/topology.volcano.sh/v1alpha1/hypernodes";

// The built-in demo fabric: 7 HyperNodes, discovered once an hour, rebuilt on events only.
std::string demo_config(const std::string& extra = "") {
  return "sources:\n  - kind: demo\n    config: {mode: model}\n    interval: 1h\n"
         "reconcile:\n  debounce: 100ms\n  resync: 1h\n" +
         extra;
}

bool is_write(const LoggedRequest& r) {
  return r.verb == "create" || r.verb == "update" || r.verb == "patch" || r.verb == "delete";
}

bool on_hypernodes(const LoggedRequest& r) { return r.path.rfind(kHyperNodesPath, 0) == 0; }

std::map<std::string, std::string> uids(LoopbackApiServer& server) {
  std::map<std::string, std::string> out;
  for (const auto& o : server.store().objects(kHyperNodes))
    out[o["metadata"]["name"].get<std::string>()] = o["metadata"]["uid"].get<std::string>();
  return out;
}

std::map<std::string, std::string> versions(LoopbackApiServer& server) {
  std::map<std::string, std::string> out;
  for (const auto& o : server.store().objects(kHyperNodes))
    out[o["metadata"]["name"].get<std::string>()] = o["metadata"]["resourceVersion"].get<std::string>();
  return out;
}

// The requests logged from index `from` on that match `keep`.
template <typename F>
std::vector<LoggedRequest> since(const LoopbackApiServer& server, std::size_t from, F keep) {
  std::vector<LoggedRequest> out;
  const auto log = server.request_log();
  for (std::size_t i = from; i < log.size(); ++i) {
    if (keep(log[i])) out.push_back(log[i]);
  }
  return out;
}

std::string describe(const std::vector<LoggedRequest>& requests) {
  std::string out;
  for (const auto& r : requests) out += r.verb + " " + r.path + " -> " + std::to_string(r.status) + "\n";
  return out;
}

// A converged, idle leader: the 7 HyperNodes stand and its last reconcile succeeded.
bool converged(LoopbackApiServer& server, const AgentProcess& agent) {
  return server.store().object_count(kHyperNodes) == 7 &&
         agent.metric("hypertopo_last_reconcile_success_timestamp_seconds") > 0;
}

// client-go leaderelection: the leader stops acting once it has failed to renew for renewDeadline,
// which is shorter than leaseDuration, so it has stopped before any other candidate may take the
// Lease. Here the leader is cut off by a black-hole partition just as its first HyperNode create goes
// out; a second agent takes over; when the partition heals, nothing of the old leader's term reaches
// the server (its create in flight is dropped, not retried). Then the new leader leaves and the old
// one leads again, writing nothing: everything is in place.
TEST(AgentFaults, ALeaderCutOffLongerThanItsLeaseStopsWritingAndTheOtherTakesOver) {
  LoopbackApiServer server({.bearer_token = "tok-a"});
  server.add_bearer_token("tok-b");
  ASSERT_TRUE(server.start());
  TcpPartition relay(server.port());
  ASSERT_TRUE(relay.start());
  relay.partition_when("POST " + kHyperNodesPath);
  TempDir dir;
  const auto config = dir.path() / "config.yaml";
  write_text(config, demo_config("leaderElection:\n  leaseDuration: 6s\n  renewDeadline: 2s\n"
                                 "  retryPeriod: 250ms\napiClient:\n  parallelWrites: 1\n"));
  AgentProcess a({.config = config,
                  .kubeconfig = write_agent_kubeconfig(dir.path() / "kubeconfig-a", relay.url(), "tok-a"),
                  .pod = "agent-a",
                  .work = dir.path() / "work-a"});
  ASSERT_TRUE(a.started());
  ASSERT_TRUE(eventually_here([&] { return relay.partitioned(); })) << a.metrics();
  ASSERT_TRUE(a.leads());

  AgentProcess b({.config = config,
                  .kubeconfig = write_agent_kubeconfig(dir.path() / "kubeconfig-b", server.url(), "tok-b"),
                  .pod = "agent-b",
                  .node = "gpu-node-2",
                  .work = dir.path() / "work-b"});
  ASSERT_TRUE(b.started());
  // Who leads, as both report it, until the other leads: the old leader must have stepped down
  // before the new one took over (4 s apart by the settings: renewDeadline 2 s, leaseDuration 6 s).
  bool a_stepped_down_first = false;
  const bool b_took_over = eventually_here([&] {
    const bool b_leads = b.leads();
    if (b_leads) a_stepped_down_first = a.follows();
    return b_leads;
  });
  ASSERT_TRUE(b_took_over) << b.metrics();
  EXPECT_TRUE(a_stepped_down_first) << "agent-a still led when agent-b took over:\n" << a.metrics();
  ASSERT_TRUE(eventually_here([&] { return converged(server, b); })) << b.metrics();

  // Healed: agent-a talks to the server again (it reads the Lease), and sends no write of its term.
  const std::size_t healed_at = server.request_log().size();
  relay.heal();
  ASSERT_TRUE(eventually_here([&] {
    return !since(server, healed_at, [](const LoggedRequest& r) {
              return r.token == "tok-a" && r.path.find("/leases/") != std::string::npos;
            }).empty();
  }));
  // Several renewals of agent-b later, agent-a has had every chance to send what it held.
  const auto b_renewals = [&] {
    return since(server, healed_at,
                 [](const LoggedRequest& r) { return r.token == "tok-b" && r.verb == "update"; })
        .size();
  };
  ASSERT_TRUE(eventually_here([&] { return b_renewals() >= 8; }));
  const auto from_a = since(server, 0, [](const LoggedRequest& r) {
    return r.token == "tok-a" && is_write(r) && on_hypernodes(r);
  });
  EXPECT_TRUE(from_a.empty()) << "the old leader wrote after it was cut off:\n" << describe(from_a);
  EXPECT_EQ(server.store().object_count(kHyperNodes), 7u);
  EXPECT_TRUE(since(server, 0, [](const LoggedRequest& r) { return r.verb == "delete"; }).empty());
  EXPECT_NE(a.get("/healthz").find(" 200 "), std::string::npos);

  // agent-b leaves (releasing the Lease): agent-a leads again and finds everything in place.
  const auto before = uids(server);
  const auto versions_before = versions(server);
  const std::size_t handed_over_at = server.request_log().size();
  ASSERT_TRUE(b.terminate());
  ASSERT_TRUE(eventually_here([&] { return a.leads() && converged(server, a); })) << a.metrics();
  EXPECT_EQ(uids(server), before);
  EXPECT_EQ(versions(server), versions_before);
  const auto rewritten =
      since(server, handed_over_at, [](const LoggedRequest& r) { return is_write(r) && on_hypernodes(r); });
  EXPECT_TRUE(rewritten.empty()) << describe(rewritten);
  EXPECT_TRUE(a.terminate());
}

// The API server is gone for longer than the Lease (the only agent cannot renew): the leader stops
// acting at its renew deadline and says so, /healthz stays up; when the server is back it leads
// again and finds everything in place: no HyperNode written, none lost.
TEST(AgentFaults, TheApiServerGoneLongerThanTheLeaseEndsTheTermAndItLeadsAgainWhenItIsBack) {
  LoopbackApiServer server({.bearer_token = "tok-a"});
  ASSERT_TRUE(server.start());
  TempDir dir;
  const auto config = dir.path() / "config.yaml";
  write_text(
      config,
      demo_config("leaderElection:\n  leaseDuration: 3s\n  renewDeadline: 2s\n  retryPeriod: 250ms\n"));
  AgentProcess agent({.config = config,
                      .kubeconfig = write_agent_kubeconfig(dir.path() / "kubeconfig", server.url(), "tok-a"),
                      .work = dir.path() / "work"});
  ASSERT_TRUE(agent.started());
  ASSERT_TRUE(eventually_here([&] { return converged(server, agent); })) << agent.metrics();
  const auto before = versions(server);
  server.go_down();
  const std::size_t from = server.request_log().size();
  ASSERT_TRUE(eventually_here([&] { return agent.follows(); })) << agent.metrics();
  EXPECT_NE(agent.get("/healthz").find(" 200 "), std::string::npos);
  const double rebuilds = agent.metric("hypertopo_rebuilds_total");
  ASSERT_TRUE(server.come_back({.compact = true}));
  ASSERT_TRUE(eventually_here([&] {
    return agent.leads() && agent.metric("hypertopo_rebuilds_total") > rebuilds;
  })) << agent.metrics();
  ASSERT_TRUE(eventually_here([&] { return converged(server, agent); }));
  EXPECT_EQ(versions(server), before);
  const auto writes =
      since(server, from, [](const LoggedRequest& r) { return is_write(r) && on_hypernodes(r); });
  EXPECT_TRUE(writes.empty()) << describe(writes);
  EXPECT_TRUE(agent.terminate());
}

// The API server dies while the leader is creating the HyperNodes one by one: one create is read and
// committed but never answered (it died in between), and the server comes back on its port with a
// new watch cache (old resourceVersions 410). The leader retries what it did not see land: no
// HyperNode is lost, none is created twice, nothing is updated or deleted, and it converges.
TEST(AgentFaults, AnApiServerRestartMidReconcileLosesNothingDuplicatesNothingAndConverges) {
  LoopbackApiServer server({.bearer_token = "tok-a"});
  ASSERT_TRUE(server.start());
  server.delay_next(7, 300ms, "create");
  TempDir dir;
  const auto config = dir.path() / "config.yaml";
  write_text(config, demo_config("leaderElection:\n  leaseDuration: 6s\n  renewDeadline: 4s\n"
                                 "  retryPeriod: 250ms\napiClient:\n  parallelWrites: 1\n"));
  AgentProcess agent({.config = config,
                      .kubeconfig = write_agent_kubeconfig(dir.path() / "kubeconfig", server.url(), "tok-a"),
                      .work = dir.path() / "work"});
  ASSERT_TRUE(agent.started());
  ASSERT_TRUE(eventually_here([&] { return server.store().object_count(kHyperNodes) >= 3; }))
      << agent.metrics();
  server.go_down();  // joins the connection that holds the next create: it lands, unanswered
  const std::size_t landed_while_down = server.store().object_count(kHyperNodes);
  ASSERT_TRUE(server.come_back({.compact = true}));

  ASSERT_TRUE(eventually_here([&] { return converged(server, agent); })) << agent.metrics();
  EXPECT_LT(landed_while_down, 7u);
  const auto log = server.request_log();
  int created = 0, exists = 0, updates = 0, deletes = 0;
  std::set<std::string> names;
  for (const auto& r : log) {
    if (!on_hypernodes(r)) continue;
    if (r.verb == "create" && r.status == 201) ++created;
    if (r.verb == "create" && r.status == 409) ++exists;
    if (r.verb == "update") ++updates;
    if (r.verb == "delete") ++deletes;
  }
  for (const auto& o : server.store().objects(kHyperNodes))
    names.insert(o["metadata"]["name"].get<std::string>());
  EXPECT_EQ(names.size(), 7u);
  EXPECT_EQ(server.store().object_count(kHyperNodes), 7u);
  // The one committed before the crash was created by that request: the agent's next attempt finds
  // it there (409) and compares instead of writing again.
  EXPECT_EQ(created, 7) << describe(log);
  EXPECT_LE(exists, 1) << describe(log);
  EXPECT_EQ(updates, 0) << describe(log);
  EXPECT_EQ(deletes, 0) << describe(log);
  const auto watch_410 =
      since(server, 0, [](const LoggedRequest& r) { return r.verb == "watch" && r.status == 410; });
  EXPECT_FALSE(watch_410.empty()) << "the restarted server's watch cache should have answered 410";

  // Converged means settled: another rebuild (the watches cut and answered 410, so relisted) writes
  // nothing.
  const auto settled = versions(server);
  const double rebuilds = agent.metric("hypertopo_rebuilds_total");
  const std::size_t from = server.request_log().size();
  server.store().compact();
  server.cut_connections();
  ASSERT_TRUE(eventually_here([&] { return agent.metric("hypertopo_rebuilds_total") > rebuilds; }));
  EXPECT_EQ(versions(server), settled);
  const auto rewritten =
      since(server, from, [](const LoggedRequest& r) { return is_write(r) && on_hypernodes(r); });
  EXPECT_TRUE(rewritten.empty()) << describe(rewritten);
  EXPECT_TRUE(agent.terminate());
}

// The leader's watches resume from a resourceVersion the server no longer has (etcd compacted while
// the API server was away): 410 Gone. The agent lists again; the one HyperNode deleted while nobody
// was watching is recreated, and nothing else is written.
TEST(AgentFaults, AWatchAnswered410GoneRelistsAndWritesOnlyWhatChanged) {
  LoopbackApiServer server({.bearer_token = "tok-a"});
  ASSERT_TRUE(server.start());
  TempDir dir;
  const auto config = dir.path() / "config.yaml";
  write_text(
      config,
      demo_config("leaderElection:\n  leaseDuration: 6s\n  renewDeadline: 4s\n  retryPeriod: 250ms\n"));
  AgentProcess agent({.config = config,
                      .kubeconfig = write_agent_kubeconfig(dir.path() / "kubeconfig", server.url(), "tok-a"),
                      .work = dir.path() / "work"});
  ASSERT_TRUE(agent.started());
  ASSERT_TRUE(eventually_here([&] { return converged(server, agent); })) << agent.metrics();
  ASSERT_TRUE(eventually_here([&] { return server.count("watch") >= 3; }));
  const auto before = versions(server);
  const std::string victim = before.begin()->first;

  server.go_down();
  auto gone = server.store().handle({.method = "DELETE", .path = kHyperNodesPath + "/" + victim});
  ASSERT_EQ(gone.status, 200) << gone.body;
  const std::size_t from = server.request_log().size();
  ASSERT_TRUE(server.come_back({.compact = true}));

  ASSERT_TRUE(eventually_here([&] { return server.store().object(kHyperNodes, "", victim).has_value(); }))
      << agent.metrics();
  ASSERT_TRUE(eventually_here([&] { return converged(server, agent); }));
  const auto after = since(server, from, [](const LoggedRequest&) { return true; });
  const auto gone_watches =
      since(server, from, [](const LoggedRequest& r) { return r.verb == "watch" && r.status == 410; });
  const auto relists = since(server, from, [](const LoggedRequest& r) { return r.verb == "list"; });
  EXPECT_GE(gone_watches.size(), 3u) << describe(after);  // NodeReports, Nodes, owned HyperNodes
  EXPECT_GE(relists.size(), 3u) << describe(after);
  const auto writes =
      since(server, from, [](const LoggedRequest& r) { return is_write(r) && on_hypernodes(r); });
  // The recreated object: its create, and the /status merge that a create cannot carry.
  ASSERT_FALSE(writes.empty());
  EXPECT_EQ(writes.front().verb, "create") << describe(writes);
  EXPECT_EQ(writes.front().status, 201);
  for (std::size_t i = 1; i < writes.size(); ++i) {
    EXPECT_EQ(writes[i].verb, "patch") << describe(writes);
    EXPECT_EQ(writes[i].path, kHyperNodesPath + "/" + victim + "/status") << describe(writes);
  }
  EXPECT_LE(writes.size(), 2u) << describe(writes);
  auto now = versions(server);
  now.erase(victim);
  auto untouched = before;
  untouched.erase(victim);
  EXPECT_EQ(now, untouched);
  EXPECT_TRUE(agent.terminate());
}

// Writes `text` over the file in place: same inode; with `keep_mtime`, the old modification time is
// put back, so that only a 401 can tell the reader that the token changed.
void overwrite_in_place(const std::filesystem::path& path, const std::string& text, bool keep_mtime) {
  struct stat before {};
  ASSERT_EQ(::stat(path.c_str(), &before), 0);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(0);
    f << text;
  }
  if (keep_mtime) {
    const timespec times[2] = {before.st_atim, before.st_mtim};
    ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  }
  struct stat after {};
  ASSERT_EQ(::stat(path.c_str(), &after), 0);
  ASSERT_EQ(after.st_ino, before.st_ino);
}

// The kubelet rotates the projected service account token; a kubeconfig's tokenFile is read the same
// way. A rewrite on disk is picked up by the next request; a rewrite the file's size and time do not
// show is picked up when the server answers 401 to the old token. The leader keeps its Lease
// throughout, and no request fails for good.
TEST(AgentFaults, ATokenRotatedOnDiskIsUsedWithoutARestartAndA401MakesItReadAgain) {
  LoopbackApiServer server({.bearer_token = "tok-1"});
  ASSERT_TRUE(server.start());
  TempDir dir;
  const auto token = dir.path() / "token";
  write_text(token, "tok-1\n");
  const auto config = dir.path() / "config.yaml";
  write_text(
      config,
      demo_config("leaderElection:\n  leaseDuration: 6s\n  renewDeadline: 4s\n  retryPeriod: 250ms\n"));
  AgentProcess agent(
      {.config = config,
       .kubeconfig = write_agent_kubeconfig(dir.path() / "kubeconfig", server.url(), "", token),
       .work = dir.path() / "work"});
  ASSERT_TRUE(agent.started());
  ASSERT_TRUE(eventually_here([&] { return converged(server, agent); })) << agent.metrics();
  auto transitions = [&] {
    auto lease =
        server.store().object("coordination.k8s.io/v1/leases", "hypertopo-system", "hypertopo-agent");
    return lease ? (*lease)["spec"].value("leaseTransitions", -1) : -1;
  };
  const int held = transitions();

  // 1. A new token written over the old one (longer, so its size differs): both are valid for a while,
  //    as the kubelet's old token is; the agent moves to the new one without a 401.
  server.set_bearer_tokens({"tok-1", "tok-two"});
  std::size_t from = server.request_log().size();
  write_text(token, "tok-two\n");
  ASSERT_TRUE(eventually_here([&] {
    return since(server, from, [](const LoggedRequest& r) {
             return r.token == "tok-two" && r.status == 200;
           }).size() >= 3;
  }));
  server.set_bearer_tokens({"tok-two"});  // the old token expires
  from = server.request_log().size();
  ASSERT_TRUE(eventually_here([&] {
    return since(server, from, [](const LoggedRequest& r) {
             return r.verb == "update" && r.status == 200;
           }).size() >= 4;
  }));
  EXPECT_TRUE(since(server, 0, [](const LoggedRequest& r) { return r.status == 401; }).empty())
      << describe(since(server, 0, [](const LoggedRequest& r) { return r.status == 401; }));

  // 2. Rotated behind the file's back (same length, same inode, the old mtime put back), and the old
  //    token refused at once: the 401 makes the client read the file again and repeat the request.
  overwrite_in_place(token, "tok-333\n", /*keep_mtime=*/true);
  from = server.request_log().size();
  server.set_bearer_tokens({"tok-333"});
  ASSERT_TRUE(eventually_here([&] {
    return since(server, from, [](const LoggedRequest& r) {
             return r.token == "tok-333" && r.verb == "update" && r.status == 200;
           }).size() >= 4;
  }));
  const auto refused = since(server, from, [](const LoggedRequest& r) { return r.status == 401; });
  EXPECT_FALSE(refused.empty());  // the old token was tried, refused, and then replaced
  for (const auto& r : refused) EXPECT_EQ(r.token, "tok-two");
  EXPECT_TRUE(agent.leads());
  EXPECT_EQ(transitions(), held);
  EXPECT_EQ(server.store().object_count(kHyperNodes), 7u);
  EXPECT_TRUE(agent.terminate());
}

// A 429 with Retry-After: 2 on a HyperNode create and on the opening of a watch: the next attempt of
// each comes no sooner than 2 s later (as the server saw them arrive), and the leader converges.
// (A lower bound on a wait the client must make: it cannot pass early, whatever the machine's load;
// the exact waits are checked on the injected clock in kube_client_test and kube_client_watch_test.)
TEST(AgentFaults, A429WithRetryAfterIsWaitedOutBeforeTheNextAttempt) {
  LoopbackApiServer server({.bearer_token = "tok-a"});
  ASSERT_TRUE(server.start());
  // A free Lease is there already, so the election updates it and the only creates are HyperNodes.
  ASSERT_EQ(server.store()
                .handle({.method = "POST",
                         .path = "/apis/coordination.k8s.io/v1/namespaces/hypertopo-system/leases",
                         .body = R"({"metadata":{"name":"hypertopo-agent","namespace":"hypertopo-system"},)"
                                 R"("spec":{"holderIdentity":""}})"})
                .status,
            201);
  server.fail_next(1, 429, 2, "create");
  server.fail_next(1, 429, 2, "watch");
  TempDir dir;
  const auto config = dir.path() / "config.yaml";
  write_text(config, demo_config("leaderElection:\n  leaseDuration: 6s\n  renewDeadline: 4s\n"
                                 "  retryPeriod: 250ms\napiClient:\n  parallelWrites: 1\n"));
  AgentProcess agent({.config = config,
                      .kubeconfig = write_agent_kubeconfig(dir.path() / "kubeconfig", server.url(), "tok-a"),
                      .work = dir.path() / "work"});
  ASSERT_TRUE(agent.started());
  ASSERT_TRUE(eventually_here([&] { return converged(server, agent); })) << agent.metrics();
  ASSERT_TRUE(eventually_here([&] { return server.count("watch") >= 4; }));  // 3 watches, one of them twice
  const auto log = server.request_log();
  auto retry_gap = [&](const std::string& verb) -> std::chrono::duration<double> {
    for (std::size_t i = 0; i < log.size(); ++i) {
      if (log[i].verb != verb || log[i].status != 429) continue;
      for (std::size_t j = i + 1; j < log.size(); ++j) {
        if (log[j].verb == verb && log[j].path == log[i].path) return log[j].at - log[i].at;
      }
    }
    return std::chrono::duration<double>(-1);
  };
  EXPECT_GE(retry_gap("create").count(), 2.0) << describe(log);
  EXPECT_GE(retry_gap("watch").count(), 2.0) << describe(log);
  EXPECT_EQ(server.store().object_count(kHyperNodes), 7u);
  EXPECT_TRUE(agent.terminate());
}

// ARCHITECTURE §5: a controller watches what it owns. With a resync of an hour and the source cached
// for an hour, only the watch can bring these back: a HyperNode deleted by hand is recreated (its
// create and the /status merge a create cannot carry), one whose spec was edited by hand is put back
// with one update, and an edit of nothing of ours (another writer's label) costs no write at all.
TEST(AgentOwnedHyperNodes, DeletedOrEditedByHandIsRestoredFromTheWatchEvent) {
  LoopbackApiServer server({.bearer_token = "tok-a"});
  ASSERT_TRUE(server.start());
  TempDir dir;
  const auto config = dir.path() / "config.yaml";
  write_text(
      config,
      demo_config("leaderElection:\n  leaseDuration: 6s\n  renewDeadline: 4s\n  retryPeriod: 250ms\n"));
  AgentProcess agent({.config = config,
                      .kubeconfig = write_agent_kubeconfig(dir.path() / "kubeconfig", server.url(), "tok-a"),
                      .work = dir.path() / "work"});
  ASSERT_TRUE(agent.started());
  ASSERT_TRUE(eventually_here([&] { return converged(server, agent); })) << agent.metrics();
  const auto before = uids(server);
  auto hypernode_writes = [&](std::size_t from) {
    return since(server, from, [](const LoggedRequest& r) { return is_write(r) && on_hypernodes(r); });
  };

  // kubectl delete hypernode <name>
  const std::string deleted = before.begin()->first;
  double rebuilds_before = agent.metric("hypertopo_rebuilds_total");
  std::size_t from = server.request_log().size();
  ASSERT_EQ(server.store().handle({.method = "DELETE", .path = kHyperNodesPath + "/" + deleted}).status, 200);
  ASSERT_TRUE(eventually_here([&] { return server.store().object(kHyperNodes, "", deleted).has_value(); }))
      << agent.metrics();
  ASSERT_TRUE(eventually_here([&] {
    auto o = server.store().object(kHyperNodes, "", deleted);
    return o && (*o).contains("status") && (*o)["status"].contains("nodeCount");
  }));
  auto writes = hypernode_writes(from);
  ASSERT_EQ(writes.size(), 2u) << describe(writes);
  EXPECT_EQ(writes[0].verb, "create");
  EXPECT_EQ(writes[1].verb, "patch");
  EXPECT_EQ(writes[1].path, kHyperNodesPath + "/" + deleted + "/status");
  EXPECT_NE(uids(server)[deleted], before.at(deleted));
  EXPECT_GE(agent.metric("hypertopo_owned_hypernode_drift_total{change=\"deleted\"}"), 1);

  // Each phase starts once the previous one's rebuild has ended (its count is up), so that what one
  // phase writes is not counted in the next.
  ASSERT_TRUE(eventually_here([&] { return agent.metric("hypertopo_rebuilds_total") > rebuilds_before; }));

  // kubectl edit: the spec of another one is changed by hand.
  const std::string edited = std::next(before.begin())->first;
  const json original = *server.store().object(kHyperNodes, "", edited);
  json hand = original;
  hand["spec"]["tier"] = original["spec"]["tier"].get<int>() + 5;
  from = server.request_log().size();
  rebuilds_before = agent.metric("hypertopo_rebuilds_total");
  ASSERT_EQ(server.store()
                .handle({.method = "PUT", .path = kHyperNodesPath + "/" + edited, .body = hand.dump()})
                .status,
            200);
  ASSERT_NE((*server.store().object(kHyperNodes, "", edited))["spec"], original["spec"]);
  ASSERT_TRUE(eventually_here([&] {
    return (*server.store().object(kHyperNodes, "", edited))["spec"] == original["spec"];
  })) << agent.metrics();
  writes = hypernode_writes(from);
  ASSERT_EQ(writes.size(), 1u) << describe(since(server, from > 12 ? from - 12 : 0,
                                                 [](const LoggedRequest&) { return true; }))
                               << "\nfrom " << from << "\n"
                               << server.store().object(kHyperNodes, "", edited)->dump() << "\n"
                               << original.dump() << "\n"
                               << hand.dump();
  EXPECT_EQ(writes[0].verb, "update");
  EXPECT_EQ(writes[0].path, kHyperNodesPath + "/" + edited);

  ASSERT_TRUE(eventually_here([&] { return agent.metric("hypertopo_rebuilds_total") > rebuilds_before; }));

  // Another writer's label on an owned HyperNode: nothing of ours changed, nothing is written. The
  // debounce is 100 ms: a few rebuild opportunities pass while the lease is renewed 8 times.
  json labelled = *server.store().object(kHyperNodes, "", edited);
  labelled["metadata"]["labels"]["example.com/team"] = "ml";
  from = server.request_log().size();
  const double rebuilds = agent.metric("hypertopo_rebuilds_total");
  ASSERT_EQ(server.store()
                .handle({.method = "PUT", .path = kHyperNodesPath + "/" + edited, .body = labelled.dump()})
                .status,
            200);
  ASSERT_TRUE(eventually_here([&] {
    return since(server, from, [](const LoggedRequest& r) {
             return r.verb == "update" && !on_hypernodes(r);
           }).size() >= 8;
  }));
  EXPECT_TRUE(hypernode_writes(from).empty()) << describe(hypernode_writes(from));
  EXPECT_EQ(agent.metric("hypertopo_rebuilds_total"), rebuilds);
  EXPECT_TRUE(agent.terminate());
}

// A fabric source that does not come back (a UFM that accepts the request and sits on it) makes the
// leader's /readyz fail after the source's deadline, and the body names the source; once it returns,
// /readyz is 200 again.
TEST(AgentReadiness, AFabricSourceWedgedPastItsDeadlineFailsReadyzNamingIt) {
  FakeUfmServer ufm;
  ufm.set_basic_auth("ufm-admin", "Passw0rd");
  auto fabric = generate_ufm_fabric({.pods = 1, .leaves_per_pod = 2, .hosts_per_leaf = 2});
  ufm.set_records("ports", fabric.ports);
  ufm.set_records("links", fabric.links);
  ASSERT_TRUE(ufm.start().has_value());
  ufm.script({.status = 503, .body = "{}", .delay = 6s});
  TempDir dir;
  write_text(dir.path() / "ufm" / "username", "ufm-admin\n");
  write_text(dir.path() / "ufm" / "password", "Passw0rd\n");
  write_text(dir.path() / "ufm-ca" / "ca.crt", ufm.ca_pem());
  LoopbackApiServer server({.bearer_token = "tok-a"});
  ASSERT_TRUE(server.start());
  const auto config = dir.path() / "config.yaml";
  write_text(config,
             "sources:\n  - kind: ufm\n    interval: 1h\n    deadline: 1s\n    config:\n"
             "      endpoint: " +
                 ufm.url() + "\n      credentialsDir: " + (dir.path() / "ufm").string() +
                 "\n      caFile: " + (dir.path() / "ufm-ca" / "ca.crt").string() +
                 "\n      timeout: 120\n"
                 "reconcile: {debounce: 100ms, resync: 1h}\n"
                 "leaderElection: {leaseDuration: 6s, renewDeadline: 4s, retryPeriod: 250ms}\n");
  AgentProcess agent({.config = config,
                      .kubeconfig = write_agent_kubeconfig(dir.path() / "kubeconfig", server.url(), "tok-a"),
                      .work = dir.path() / "work"});
  ASSERT_TRUE(agent.started());
  std::string wedged;
  ASSERT_TRUE(eventually_here([&] {
    wedged = agent.get("/readyz");
    return wedged.find(" 503 ") != std::string::npos && wedged.find("fabric source") != std::string::npos;
  })) << wedged;
  EXPECT_NE(wedged.find("fabric source ufm"), std::string::npos) << wedged;
  EXPECT_NE(wedged.find("deadline of 1s"), std::string::npos) << wedged;
  EXPECT_NE(agent.get("/healthz").find(" 200 "), std::string::npos);
  // The source returns (its answer is an error): ready again, and the tree comes on the next run.
  ASSERT_TRUE(eventually_here([&] { return agent.get("/readyz").find(" 200 ") != std::string::npos; }))
      << agent.get("/readyz");
  EXPECT_TRUE(agent.terminate());
}

}  // namespace
}  // namespace hypertopo::testing
