// The extender's start: its ready gate, /readyz, the verbs' answer while the view fills, and the
// shipped pod's order (deploy/overlays/extender: kube-scheduler starts once the extender's postStart
// hook saw /readyz answer 200), against kube-scheduler v1.26's queue (kube_scheduler_standin.h, kV126).
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "scheduler/extender/extender_http.h"
#include "tests/scheduler/extender/live_cluster_fixture.h"

namespace hypertopo::testing {
namespace {

constexpr const char* kUnknownNode = "node not in the extender's cluster view";

// A normal pod of one GPU (no gang).
json one_gpu_pod(const std::string& name) {
  json pod = pod_object(name, "uid-" + name, "1");
  return pod;
}

TEST(ExtenderReadyGate, VerbsSayTheViewIsFillingUntilEveryFirstListLanded) {
  scheduler::ExtenderService svc({});
  ASSERT_TRUE(svc.set_nodes({node_object("n1", 8)}).has_value());
  EXPECT_TRUE(svc.ready()) << "a service fed directly answers at once";
  svc.expect_first_lists({"nodes", "pods"});
  EXPECT_FALSE(svc.ready());
  EXPECT_EQ(svc.not_ready_reason(),
            "extender view still filling: waiting for the first list of: nodes, pods");
  auto early = svc.filter(args_by_name(one_gpu_pod("p"), {"n1", "ghost"}));
  ASSERT_TRUE(early.has_value());
  EXPECT_EQ((*early)["error"], "extender view still filling: waiting for the first list of: nodes, pods");
  EXPECT_FALSE(early->contains("failedNodes")) << "no verdict on nodes while the view fills";
  auto early_text = svc.filter_body(args_by_name(one_gpu_pod("p"), {"n1"}).dump());
  ASSERT_TRUE(early_text.has_value());
  EXPECT_NE(early_text->find("still filling"), std::string::npos) << *early_text;
  EXPECT_EQ(early_text->find(kUnknownNode), std::string::npos) << *early_text;
  auto score = svc.prioritize(args_by_name(one_gpu_pod("p"), {"n1"}));
  ASSERT_FALSE(score.has_value());
  EXPECT_EQ(score.error().code(), ErrorCode::kUnavailable);
  svc.first_list_landed("nodes");
  svc.first_list_landed("nodes");  // a kind counted once
  EXPECT_EQ(svc.not_ready_reason(), "extender view still filling: waiting for the first list of: pods");
  svc.first_list_landed("pods");
  EXPECT_TRUE(svc.ready());
  EXPECT_EQ(svc.not_ready_reason(), "");
  // Ready: a node truly unknown keeps its own reason.
  auto late = svc.filter(args_by_name(one_gpu_pod("p"), {"n1", "ghost"}));
  ASSERT_TRUE(late.has_value());
  EXPECT_EQ((*late)["failedNodes"]["ghost"], kUnknownNode);
  EXPECT_EQ((*late)["nodenames"], json::array({"n1"}));
  EXPECT_EQ(svc.counters().verbs.not_ready_calls, 3);
}

// --check's loop, on an injected clock: it asks until `wait` has passed and returns the last answer.
TEST(ExtenderProbe, WaitGivesUpAfterItsBoundWithTheLastAnswer) {
  scheduler::ExtenderService svc({});
  svc.expect_first_lists({"nodes"});
  net::HttpServer server(net::HttpServerOptions{.address = "127.0.0.1", .port = 0});
  scheduler::register_extender_routes(server, svc, "/scheduler");
  ASSERT_TRUE(server.start().has_value());
  const scheduler::ProbeTarget target{.host = "127.0.0.1", .port = server.port()};
  EXPECT_TRUE(scheduler::probe_extender(target, "/healthz", scheduler::kProbeTimeout).has_value());
  std::chrono::steady_clock::time_point now{};
  int pauses = 0;
  auto waited = scheduler::wait_extender(
      target, "/readyz", std::chrono::seconds(60), std::chrono::milliseconds(250), [&] { return now; },
      [&](std::chrono::milliseconds d) {
        ++pauses;
        now += d;
      });
  ASSERT_FALSE(waited.has_value());
  EXPECT_NE(
      waited.error().message().find("/readyz: 503 extender view still filling: waiting for the first list "
                                    "of: nodes"),
      std::string::npos)
      << waited.error().message();
  EXPECT_EQ(pauses, 240);
  svc.first_list_landed("nodes");
  pauses = 0;
  EXPECT_TRUE(scheduler::wait_extender(
                  target, "/readyz", std::chrono::seconds(60), std::chrono::milliseconds(250),
                  [&] { return now; }, [&](std::chrono::milliseconds) { ++pauses; })
                  .has_value());
  EXPECT_EQ(pauses, 0);
}

TEST(ExtenderProbe, AWildcardListenerIsProbedOnLoopback) {
  scheduler::ExtenderConfig cfg;
  cfg.listen_address = "0.0.0.0";
  cfg.listen_port = 9999;
  auto t = scheduler::probe_target(cfg);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->host, "127.0.0.1");
  EXPECT_EQ(t->port, 9999);
  EXPECT_FALSE(t->tls);
  cfg.listen_address = "::";
  EXPECT_EQ(scheduler::probe_target(cfg)->host, "::1");
  cfg.tls_cert_file = "/nonexistent/tls.crt";
  cfg.tls_key_file = "/nonexistent/tls.key";
  EXPECT_TRUE(scheduler::probe_target(cfg)->tls) << "without client CA the probe needs no files";
  cfg.tls_client_ca_file = "/nonexistent/ca.crt";
  auto missing = scheduler::probe_target(cfg);
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message().find("tls.certFile"), std::string::npos) << missing.error().message();
}

// The extender restarted on a live cluster while its pod list does not come (as a 6,000-Node list
// takes seconds): the API server answers the extender's cluster-wide pod list 503 while held.
class ExtenderStartTest : public LiveClusterTest {
 protected:
  void SetUp() override {
    api_.set_raw_handler([this](const RawHttpRequest& r) -> std::optional<RawHttpResponse> {
      const bool pod_list = r.method == "GET" && r.target.starts_with("/api/v1/pods") &&
                            r.target.find("watch=") == std::string::npos;
      if (!pod_list || !hold_pods_.load()) return std::nullopt;
      return RawHttpResponse{.status = 503,
                             .body = R"({"kind":"Status","apiVersion":"v1","status":"Failure","code":503})"};
    });
    LiveClusterTest::SetUp();
  }

  // The extender process starts again; kube-scheduler (the stand-in, v1.26's queue) with it.
  void restart(bool hold_pods) {
    scheduler_.reset();
    http_.reset();
    ext_.reset();
    hold_pods_ = hold_pods;
    ext_ = std::make_unique<Extender>(*client_, dir_.path() / "state.json");
    ASSERT_TRUE(ext_->service.load_state().has_value());
    ext_->watcher.start();
    ASSERT_TRUE(ext_->server.start().has_value());
    auto t = net::HttpTransport::create({.host = "127.0.0.1", .port = std::to_string(ext_->server.port())});
    ASSERT_TRUE(t.has_value());
    http_ = std::move(*t);
    scheduler_ = std::make_unique<KubeSchedulerStandIn>(*client_, *http_, "/scheduler", "ml");
    scheduler_->queue = KubeSchedulerStandIn::Queue::kV126;
    scheduler_->after_bind = [this](const std::string& pod, const std::string&) {
      EXPECT_TRUE(eventually([&] { return pod_seen_bound(pod); })) << pod;
    };
  }

  scheduler::ProbeTarget target() const { return {.host = "127.0.0.1", .port = ext_->server.port()}; }

  // The postStart hook's --check /readyz --wait: asks until 200 (the stand-in starts after it).
  bool hook_waits() {
    return scheduler::wait_extender(
               target(), "/readyz", std::chrono::seconds(20), std::chrono::milliseconds(5),
               [] { return std::chrono::steady_clock::now(); },
               [](std::chrono::milliseconds d) { std::this_thread::sleep_for(d); })
        .has_value();
  }

  // Waits until the extender waits for nothing but the held pod list.
  bool only_pods_awaited() {
    return eventually([&] {
      return ext_->service.not_ready_reason() ==
             "extender view still filling: waiting for the first list of: pods";
    });
  }

  net::HttpResponse get(const std::string& path) {
    auto r = http_->round_trip({"GET", path, {}, ""}, std::chrono::seconds(5), true);
    EXPECT_TRUE(r.has_value()) << path;
    return r ? *r : net::HttpResponse{};
  }

  net::HttpResponse post(const std::string& path, const json& body) {
    auto r = http_->round_trip({"POST", path, {{"Content-Type", "application/json"}}, body.dump()},
                               std::chrono::seconds(5), false);
    EXPECT_TRUE(r.has_value()) << path;
    return r ? *r : net::HttpResponse{};
  }

  std::atomic<bool> hold_pods_{false};
};

// kube-scheduler's calls before the view filled get an honest error; /readyz names what is missing.
TEST_F(ExtenderStartTest, BeforeReadyTheVerbsSayTheViewIsFillingAndReadyzNamesTheMissingList) {
  restart(true);
  ASSERT_TRUE(only_pods_awaited());
  const json pod = one_gpu_pod("early");
  const std::string node = cluster_.node_names.front();
  const net::HttpResponse filtered = post("/scheduler/filter", args_by_name(pod, {node}));
  EXPECT_EQ(filtered.status, 200);
  const json answer = json::parse(filtered.body);
  EXPECT_EQ(answer["error"], "extender view still filling: waiting for the first list of: pods");
  EXPECT_EQ(filtered.body.find(kUnknownNode), std::string::npos) << filtered.body;
  EXPECT_EQ(post("/scheduler/prioritize", args_by_name(pod, {node})).status, 503);
  const net::HttpResponse ready = get("/readyz");
  EXPECT_EQ(ready.status, 503);
  EXPECT_EQ(ready.body, "extender view still filling: waiting for the first list of: pods\n");
  EXPECT_EQ(get("/healthz").status, 200) << "liveness is not readiness";
  EXPECT_NE(get("/metrics").body.find("hypertopo_extender_not_ready_calls_total 2"), std::string::npos);

  hold_pods_ = false;
  ASSERT_TRUE(hook_waits());
  EXPECT_EQ(get("/readyz").body, "ok\n");
  const json after = json::parse(post("/scheduler/filter", args_by_name(pod, {node, "ghost"})).body);
  EXPECT_EQ(after["failedNodes"]["ghost"], kUnknownNode) << after.dump();
  EXPECT_EQ(after["nodenames"], json::array({node}));
}

// The shipped pod: kube-scheduler starts once the hook saw /readyz answer 200, so pods created
// right after the extender's restart bind in kube-scheduler's first cycle, none parked, none left
// for the 5-minute flush.
TEST_F(ExtenderStartTest, PodsCreatedRightAfterARestartBindInTheFirstCycleOnceTheHookSawReady) {
  restart(true);
  for (int i = 0; i < 6; ++i) create(job_pod("solo", i, "8", {}));
  ASSERT_TRUE(only_pods_awaited());
  auto early = scheduler::probe_extender(target(), "/readyz", scheduler::kProbeTimeout);
  ASSERT_FALSE(early.has_value()) << "the hook keeps waiting while the pod list is missing";
  EXPECT_NE(early.error().message().find("503"), std::string::npos) << early.error().message();
  hold_pods_ = false;
  ASSERT_TRUE(hook_waits());
  EXPECT_EQ(schedule(), 6);
  EXPECT_EQ(scheduler_->parked(), 0);
  EXPECT_EQ(scheduler_->flushed(), 0);
  for (int i = 0; i < 6; ++i) EXPECT_FALSE(node_of("solo-" + std::to_string(i)).empty()) << i;
}

// What the shipped pod avoids, as kube-scheduler v1.26 does it: started beside a blind extender, its
// pods get the extender's error, are parked, and nothing moves them once the extender is ready:
// only the 5-minute flush does.
TEST_F(ExtenderStartTest, WithoutTheHookPodsThatGotTheErrorWaitForTheFiveMinuteFlush) {
  restart(true);
  for (int i = 0; i < 4; ++i) create(job_pod("blind", i, "8", {}));
  ASSERT_TRUE(only_pods_awaited());
  EXPECT_EQ(schedule(), 0);
  EXPECT_EQ(scheduler_->parked(), 4);
  const std::string why = scheduler_->failure("blind-0");
  EXPECT_NE(why.find("still filling"), std::string::npos) << why;
  EXPECT_EQ(why.find(kUnknownNode), std::string::npos) << why;
  hold_pods_ = false;
  ASSERT_TRUE(hook_waits());
  scheduler_->advance(std::chrono::seconds(30));
  EXPECT_EQ(schedule(), 0) << "no cluster event moved them";
  scheduler_->advance(std::chrono::seconds(270));
  EXPECT_EQ(schedule(), 0) << "exactly 5 minutes parked is not more than podMaxInUnschedulablePodsDuration";
  scheduler_->advance(std::chrono::seconds(1));
  EXPECT_EQ(schedule(), 4);
  EXPECT_EQ(scheduler_->flushed(), 4);
}

// v1.26 moves a pod that no plugin rejected on any Node event (here a label edit), after its backoff.
TEST_F(ExtenderStartTest, WithoutTheHookANodeUpdateMovesTheParkedPodsAfterTheirBackoff) {
  restart(true);
  create(job_pod("moved", 0, "8", {}));
  ASSERT_TRUE(only_pods_awaited());
  EXPECT_EQ(schedule(), 0);
  hold_pods_ = false;
  ASSERT_TRUE(hook_waits());
  update_node(cluster_.node_names.back(),
              [](json& n) { n["metadata"]["labels"]["example.com/edited"] = "yes"; });
  EXPECT_EQ(schedule(), 0) << "moved to backoff, 1 s after its first attempt";
  scheduler_->advance(std::chrono::seconds(1));
  EXPECT_EQ(schedule(), 1);
  EXPECT_EQ(scheduler_->flushed(), 0);
}

}  // namespace
}  // namespace hypertopo::testing
