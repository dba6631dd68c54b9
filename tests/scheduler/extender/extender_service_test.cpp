// Extender logic tests: the cluster view is set directly (no API server needed for these).
#include "scheduler/extender/extender_service.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <set>

#include "io/json_reader.h"
#include "io/json_writer.h"
#include "scheduler/extender/extender_config.h"
#include "tests/scheduler/extender/extender_cluster.h"
#include "tests/support/fixtures.h"

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;
using testing::args_by_name;
using testing::bound;
using testing::make_cluster;
using testing::pod_object;

struct Fixture {
  testing::ExtenderCluster cluster = make_cluster();
  std::shared_ptr<timing::ManualClock> clock = std::make_shared<timing::ManualClock>();
  std::unique_ptr<ExtenderService> service;

  explicit Fixture(std::filesystem::path state = {}) { service = make(std::move(state)); }
  std::unique_ptr<ExtenderService> make(std::filesystem::path state) {
    auto s = std::make_unique<ExtenderService>(ExtenderOptions{
        .plan_ttl = std::chrono::seconds(600), .state_file = std::move(state), .clock = clock});
    EXPECT_TRUE(s->set_hypernodes(cluster.hypernodes).has_value());
    EXPECT_TRUE(s->set_nodes(cluster.nodes).has_value());
    return s;
  }
  // Filters one pod over every node; returns the single admitted node ("" when none).
  std::string place(const json& pod) {
    auto r = service->filter(args_by_name(pod, cluster.node_names));
    EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message());
    if (!r) return {};
    const auto& names = (*r)["nodenames"];
    EXPECT_LE(names.size(), 1u) << r->dump();
    return names.empty() ? std::string() : names[0].get<std::string>();
  }
};

std::map<std::string, std::string> hard_gang(const std::string& name, int size, int tier) {
  return {{"hypertopo.io/gang-size", std::to_string(size)},
          {"hypertopo.io/network-topology-mode", "hard"},
          {"hypertopo.io/highest-tier-allowed", std::to_string(tier)},
          {"scheduling.k8s.io/group-name", name}};
}

TEST(ExtenderService, HardGangOf64LandsWholeInOneLeaf) {
  Fixture f;
  std::set<std::string> leaves;
  std::map<std::string, int> per_node;
  for (int i = 0; i < 64; ++i) {
    auto pod = pod_object("w-" + std::to_string(i), "u-" + std::to_string(i), "1", hard_gang("llm", 64, 1));
    const std::string node = f.place(pod);
    ASSERT_FALSE(node.empty()) << "pod " << i;
    leaves.insert(f.cluster.leaf_of[node]);
    ++per_node[node];
    ASSERT_TRUE(f.service->upsert_pod(bound(pod, node)).has_value());
  }
  EXPECT_EQ(leaves.size(), 1u);
  for (const auto& [node, n] : per_node) EXPECT_LE(n, 8) << node;
  auto plans = f.service->plans();
  ASSERT_EQ(plans["gangs"].size(), 1u);
  EXPECT_EQ(plans["gangs"][0]["slots"].size(), 64u);
  EXPECT_EQ(plans["gangs"][0]["slots"][5]["annotations"][kRankAnnotation], "5");
  EXPECT_EQ(f.service->counters().book.plans_made, 1);
}

// kube-scheduler offers only the feasible nodes it found before stopping (percentageOfNodesToScore):
// a gang pod whose planned node is not among them is refused with a reason that says so.
TEST(ExtenderService, AGangPodWhosePlannedNodeIsNotOfferedIsToldWhy) {
  Fixture f;
  auto pod = pod_object("w-0", "u-0", "1", hard_gang("llm", 8, 1));
  const std::string planned = f.place(pod);
  ASSERT_FALSE(planned.empty());
  // Nodes outside the planned node's leaf: the slot cannot move to any of them.
  std::vector<std::string> others;
  for (const auto& n : f.cluster.node_names)
    if (f.cluster.leaf_of[n] != f.cluster.leaf_of[planned] && others.size() < 40) others.push_back(n);
  auto r = f.service->filter(args_by_name(pod, others));
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_TRUE((*r)["nodenames"].empty()) << r->dump();
  ASSERT_EQ((*r)["failedNodes"].size(), others.size()) << r->dump();
  const std::string why = (*r)["failedNodes"][others[0]].get<std::string>();
  EXPECT_NE(why.find("is planned on " + planned +
                     ", which was not among the 40 nodes offered, and no offered node of " +
                     f.cluster.leaf_of[planned] + " has room for it"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("percentageOfNodesToScore: 100"), std::string::npos) << why;
  EXPECT_NE(why.find("hypertopo-gang-scheduler"), std::string::npos) << why;
  // Offered again with its node, the pod is admitted there, and the reason names the plan alone.
  others.push_back(planned);
  auto again = f.service->filter(args_by_name(pod, others));
  ASSERT_TRUE(again.has_value());
  ASSERT_EQ((*again)["nodenames"].size(), 1u) << again->dump();
  EXPECT_EQ((*again)["nodenames"][0], planned);
  const std::string plain = (*again)["failedNodes"][others[0]].get<std::string>();
  EXPECT_EQ(plain.find("not among"), std::string::npos) << plain;
  // Another pod of the gang whose planned node kube-scheduler found infeasible (taken meanwhile by
  // another profile's pod, say) while other nodes of the leaf are offered: its slot moves to one.
  auto next = pod_object("w-1", "u-1", "1", hard_gang("llm", 8, 1));
  ASSERT_TRUE(f.service->filter(args_by_name(next, f.cluster.node_names)).has_value());
  std::string next_planned;
  const json plans_now = f.service->plans();
  for (const auto& s : plans_now["gangs"][0]["slots"]) {
    if (s["podUID"] == "u-1") next_planned = s["node"];
  }
  ASSERT_FALSE(next_planned.empty());
  std::vector<std::string> same_leaf;
  for (const auto& n : f.cluster.node_names)
    if (n != next_planned && f.cluster.leaf_of[n] == f.cluster.leaf_of[next_planned]) same_leaf.push_back(n);
  auto moved = f.service->filter(args_by_name(next, same_leaf));
  ASSERT_TRUE(moved.has_value());
  ASSERT_EQ((*moved)["nodenames"].size(), 1u) << moved->dump();
  EXPECT_EQ(f.cluster.leaf_of[(*moved)["nodenames"][0].get<std::string>()], f.cluster.leaf_of[next_planned]);
  EXPECT_EQ(f.service->plans()["gangs"][0]["swaps"], 1);
}

// A normal pod's filter: a node whose 110 pod slots are taken is refused, one with a slot left is
// kept; a pod asking for a resource no node has fits nowhere.
TEST(ExtenderService, AFilterCountsPodSlotsAndRefusesAResourceNoNodeHas) {
  Fixture f;
  const std::string full = f.cluster.node_names[0];
  for (int i = 0; i < 109; ++i) {
    auto pod = pod_object("small-" + std::to_string(i), "s-" + std::to_string(i), "0", {}, {}, "10m");
    ASSERT_TRUE(f.service->upsert_pod(bound(pod, full)).has_value());
  }
  auto kept = [&](const json& pod) {
    auto r = f.service->filter(args_by_name(pod, f.cluster.node_names));
    EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message());
    std::set<std::string> out;
    if (r) {
      for (const auto& n : (*r)["nodenames"]) out.insert(n.get<std::string>());
    }
    return out;
  };
  const json next = pod_object("next", "n-1", "0", {}, {}, "10m");
  EXPECT_TRUE(kept(next).contains(full));  // one slot left
  ASSERT_TRUE(f.service->upsert_pod(bound(pod_object("small-109", "s-109", "0", {}, {}, "10m"), full)));
  const auto after = kept(next);
  EXPECT_FALSE(after.contains(full));
  EXPECT_EQ(after.size(), f.cluster.node_names.size() - 1);

  json fpga = pod_object("fpga", "f-1", "0");
  fpga["spec"]["containers"][0]["resources"]["requests"]["example.com/fpga"] = "1";
  EXPECT_TRUE(kept(fpga).empty());
}

TEST(ExtenderService, PartitionedJobGetsOneLeafPerPartition) {
  Fixture f;
  auto ann = hard_gang("part", 32, 2);
  ann["hypertopo.io/partition-size"] = "16";
  ann["hypertopo.io/partition-highest-tier-allowed"] = "1";
  std::map<std::string, std::set<std::string>> leaves_by_partition;
  for (int i = 0; i < 32; ++i) {
    auto pod = pod_object("p-" + std::to_string(i), "pu-" + std::to_string(i), "4", ann);
    const std::string node = f.place(pod);
    ASSERT_FALSE(node.empty()) << "pod " << i;
  }
  // Ranks 0-15 are partition 0, 16-31 partition 1 (the engine numbers pods in tree order).
  const json slots = f.service->plans()["gangs"][0]["slots"];
  ASSERT_EQ(slots.size(), 32u);
  for (const auto& s : slots) {
    leaves_by_partition[std::to_string(s["rank"].get<int>() / 16)].insert(
        f.cluster.leaf_of[s["node"].get<std::string>()]);
  }
  ASSERT_EQ(leaves_by_partition["0"].size(), 1u);
  ASSERT_EQ(leaves_by_partition["1"].size(), 1u);
  EXPECT_NE(*leaves_by_partition["0"].begin(), *leaves_by_partition["1"].begin());
}

// Kueue plain-pod groups and KAI annotations reach the engine through the job loaders' mappings.
TEST(ExtenderService, KueueAndKaiAnnotationsConstrainTheGang) {
  for (const auto& [key, value] :
       std::map<std::string, std::string>{{"kueue.x-k8s.io/podset-required-topology", "1"},
                                          {"kai.scheduler/topology-required-placement", "1"}}) {
    Fixture f;
    std::set<std::string> leaves;
    for (int i = 0; i < 16; ++i) {
      auto pod = pod_object("q-" + std::to_string(i), "q-" + std::to_string(i), "4",
                            {{"kueue.x-k8s.io/pod-group-total-count", "16"}, {key, value}},
                            {{"hypertopo.io/gang", "q"}});
      const std::string node = f.place(pod);
      ASSERT_FALSE(node.empty()) << key << " pod " << i;
      leaves.insert(f.cluster.leaf_of[node]);
    }
    EXPECT_EQ(leaves.size(), 1u) << key;
    // A level that does not exist is the pod's error, reported per node rather than as a 400.
    auto bad = f.service->filter(
        args_by_name(pod_object("z", "z", "1", {{key, "no-such-level"}}, {{"hypertopo.io/gang", "z"}}),
                     f.cluster.node_names));
    ASSERT_TRUE(bad.has_value());
    EXPECT_TRUE((*bad)["nodenames"].empty()) << key;
  }
}

TEST(ExtenderService, NormalPodsPackOntoTheFullerNode) {
  Fixture f;
  // A 48-CPU pod already runs on n-01-0; n-00-0's leaf is empty.
  ASSERT_TRUE(
      f.service->upsert_pod(bound(pod_object("busy", "b-1", "0", {}, {}, "48"), "n-01-0")).has_value());
  auto pod = pod_object("web", "web-1", "0");
  auto filtered = f.service->filter(args_by_name(pod, {"n-00-0", "n-01-0"}));
  ASSERT_TRUE(filtered.has_value());
  EXPECT_EQ((*filtered)["nodenames"].size(), 2u);
  auto scores = f.service->prioritize(args_by_name(pod, {"n-00-0", "n-01-0"}));
  ASSERT_TRUE(scores.has_value());
  ASSERT_EQ(scores->size(), 2u);
  EXPECT_EQ((*scores)[0]["host"], "n-00-0");
  EXPECT_GT((*scores)[1]["score"].get<int>(), (*scores)[0]["score"].get<int>()) << scores->dump();
  EXPECT_LE((*scores)[1]["score"].get<int>(), kMaxExtenderPriority);
  // A pod that needs more CPU than n-01-0 has left is filtered off it.
  auto big = pod_object("big", "big-1", "0", {}, {}, "32");
  auto only = f.service->filter(args_by_name(big, {"n-00-0", "n-01-0"}));
  ASSERT_TRUE(only.has_value());
  EXPECT_EQ((*only)["nodenames"], json::array({"n-00-0"}));
  EXPECT_TRUE((*only)["failedNodes"].contains("n-01-0"));
}

TEST(ExtenderService, DeletedPlannedNodeIsReplacedInsideItsLeaf) {
  Fixture f;
  // 8 pods x 4 GPUs: half a leaf, so the leaf keeps room for a replacement.
  std::string first_node;
  for (int i = 0; i < 2; ++i) {
    auto pod = pod_object("s-" + std::to_string(i), "s-" + std::to_string(i), "4", hard_gang("swap", 8, 1));
    first_node = f.place(pod);
    ASSERT_FALSE(first_node.empty());
    ASSERT_TRUE(f.service->upsert_pod(bound(pod, first_node)).has_value());
  }
  const json slots = f.service->plans()["gangs"][0]["slots"];
  const std::string leaf = f.cluster.leaf_of[first_node];
  std::string victim;
  for (const auto& s : slots) {
    if (!s["bound"].get<bool>() && s["node"] != first_node) victim = s["node"];
  }
  ASSERT_FALSE(victim.empty());
  f.service->remove_node(victim);
  std::set<std::string> leaves;
  for (int i = 2; i < 8; ++i) {
    auto pod = pod_object("s-" + std::to_string(i), "s-" + std::to_string(i), "4", hard_gang("swap", 8, 1));
    const std::string node = f.place(pod);
    ASSERT_FALSE(node.empty());
    EXPECT_NE(node, victim);
    leaves.insert(f.cluster.leaf_of[node]);
  }
  EXPECT_EQ(leaves, std::set<std::string>{leaf});
  EXPECT_EQ(f.service->counters().book.swaps, 2);  // the victim held two slots
  EXPECT_EQ(f.service->counters().book.replans, 0);
}

TEST(ExtenderService, GangIsReplannedWhenItsLeafHasNoRoom) {
  Fixture f;
  // 16 pods x 4 GPUs fill a whole leaf: a lost node cannot be replaced inside it.
  auto pod0 = pod_object("r-0", "r-0", "4", hard_gang("full", 16, 1));
  const std::string node0 = f.place(pod0);
  ASSERT_FALSE(node0.empty());
  const std::string leaf = f.cluster.leaf_of[node0];
  f.service->remove_node(node0);  // before pod r-0 binds
  auto fresh = f.service->filter(
      args_by_name(pod_object("r-1", "r-1", "4", hard_gang("full", 16, 1)), f.cluster.node_names));
  ASSERT_TRUE(fresh.has_value());
  EXPECT_EQ(f.service->counters().book.replans, 1);
  std::set<std::string> leaves;
  const json replanned = f.service->plans();
  for (const auto& s : replanned["gangs"][0]["slots"])
    leaves.insert(f.cluster.leaf_of[s["node"].get<std::string>()]);
  ASSERT_EQ(leaves.size(), 1u);
  EXPECT_NE(*leaves.begin(), leaf);
}

TEST(ExtenderService, PlanSurvivesARestart) {
  testing::TempDir dir;
  const auto state = dir.path() / "extender-state.json";
  std::set<std::string> planned;
  std::string node_of_0;
  {
    Fixture f(state);
    for (int i = 0; i < 3; ++i) {
      auto node = f.place(
          pod_object("k-" + std::to_string(i), "k-" + std::to_string(i), "1", hard_gang("keep", 16, 1)));
      if (i == 0) node_of_0 = node;
    }
    const json plans = f.service->plans();
    for (const auto& s : plans["gangs"][0]["slots"]) planned.insert(s["node"].get<std::string>());
    f.service->flush_state();  // written in the background otherwise, off the request path
    ASSERT_TRUE(std::filesystem::exists(state));
  }
  Fixture g(state);
  ASSERT_TRUE(g.service->load_state().has_value());
  EXPECT_EQ(g.place(pod_object("k-0", "k-0", "1", hard_gang("keep", 16, 1))), node_of_0);
  const std::string next = g.place(pod_object("k-3", "k-3", "1", hard_gang("keep", 16, 1)));
  EXPECT_TRUE(planned.contains(next)) << next;
  EXPECT_EQ(g.service->counters().book.plans_made, 0);  // nothing was planned again
}

TEST(ExtenderService, PlanExpiresAfterTtl) {
  Fixture f;
  ASSERT_FALSE(f.place(pod_object("t-0", "t-0", "1", hard_gang("ttl", 4, 1))).empty());
  f.clock->advance(std::chrono::seconds(601));
  f.service->check_plans();
  EXPECT_EQ(f.service->plans()["gangs"].size(), 0u);
  EXPECT_EQ(f.service->counters().book.plans_expired, 1);
}

TEST(ExtenderService, FullNodeObjectsModeReturnsNodeObjects) {
  Fixture f;
  json args{{"pod", pod_object("web", "web-1", "0")},
            {"nodes", {{"items", json::array({f.cluster.nodes[0], f.cluster.nodes[1]})}}}};
  auto r = f.service->filter(args);
  ASSERT_TRUE(r.has_value());
  ASSERT_TRUE(r->contains("nodes"));
  EXPECT_FALSE(r->contains("nodenames"));
  ASSERT_EQ((*r)["nodes"]["items"].size(), 2u);
  EXPECT_EQ((*r)["nodes"]["items"][1]["metadata"]["name"], f.cluster.node_names[1]);
}

TEST(ExtenderService, MalformedArgsAreErrorsNamingTheField) {
  Fixture f;
  auto no_pod = f.service->filter(json{{"nodenames", json::array()}});
  ASSERT_FALSE(no_pod.has_value());
  EXPECT_NE(no_pod.error().message().find("pod"), std::string::npos);
  auto bad_names = f.service->filter(json{{"pod", pod_object("a", "a", "0")}, {"nodenames", 3}});
  ASSERT_FALSE(bad_names.has_value());
  EXPECT_NE(bad_names.error().message().find("nodenames"), std::string::npos);
  auto bad_size = f.service->filter(args_by_name(
      pod_object("a", "a", "1", {{"hypertopo.io/gang", "g"}, {"hypertopo.io/gang-size", "many"}}),
      f.cluster.node_names));
  ASSERT_TRUE(bad_size.has_value());  // the request is fine; the pod's annotation is not
  EXPECT_NE((*bad_size)["failedNodes"][f.cluster.node_names[0]].get<std::string>().find("gang-size"),
            std::string::npos);
}

// kube-scheduler's bodies through the text path (filter_body/prioritize_body, what the HTTP routes
// run) against the tree path (filter/prioritize on a parsed body) of a twin service with the same
// cluster and history: the answers must be the same JSON, whatever the pod and the candidate list.
// (The text path writes failedNodes in the order the names came, the tree path sorted: a map either
// way to kube-scheduler.)
TEST(ExtenderService, TextPathAnswersAsTheTreePath) {
  Fixture tree, text;
  auto both = [&](const json& args, bool prioritize) {
    const std::string body = args.dump();
    auto want = prioritize ? tree.service->prioritize(args) : tree.service->filter(args);
    auto got = prioritize ? text.service->prioritize_body(body) : text.service->filter_body(body);
    ASSERT_EQ(want.has_value(), got.has_value()) << body.substr(0, 200);
    if (!want) {
      EXPECT_EQ(want.error().message(), got.error().message());
      return;
    }
    auto parsed = json::parse(*got, nullptr, false);
    ASSERT_FALSE(parsed.is_discarded()) << got->substr(0, 200);
    EXPECT_EQ(*want, parsed) << body.substr(0, 200);
  };
  // A name sent twice, a name the cluster does not have, one that needs escaping.
  std::vector<std::string> names = tree.cluster.node_names;
  names.push_back(names[3]);
  names.push_back("not-a-node");
  names.push_back("odd\"name\\with\ttab\u0001");
  for (bool prio : {false, true}) {
    both(args_by_name(pod_object("web", "web-1", "0"), names), prio);
    both(args_by_name(pod_object("big", "big-1", "0", {}, {}, "1000"), names), prio);
    both(json{{"pod", pod_object("web", "web-1", "0")}, {"nodenames", json::array()}}, prio);
    // Other keys kube-scheduler may send, and the Go field spellings.
    both(json{{"Pod", pod_object("web", "web-1", "0")}, {"NodeNames", names}, {"extra", {{"a", 1}}}}, prio);
    // Full Node objects, and malformed requests: the tree path answers (errors included).
    both(json{{"pod", pod_object("web", "web-1", "0")},
              {"nodes", {{"items", json::array({tree.cluster.nodes[0], tree.cluster.nodes[1]})}}}},
         prio);
    both(json{{"nodenames", names}}, prio);
    both(json{{"pod", pod_object("a", "a", "0")}, {"nodenames", 3}}, prio);
    both(json{{"pod", pod_object("a", "a", "0")}, {"nodenames", json::array({"n-00-0", 7})}}, prio);
  }
  // A gang of 8, pod by pod, each pod filtered then prioritised, with a bad gang-size pod between.
  for (int i = 0; i < 8; ++i) {
    auto pod = pod_object("g-" + std::to_string(i), "g-" + std::to_string(i), "1", hard_gang("g", 8, 1));
    both(args_by_name(pod, names), false);
    both(args_by_name(pod, names), true);
  }
  both(args_by_name(
           pod_object("x", "x", "1", {{"hypertopo.io/gang", "g2"}, {"hypertopo.io/gang-size", "many"}}),
           names),
       false);
  EXPECT_EQ(tree.service->plans().dump(), text.service->plans().dump());
  // Every plain body took the text path: 4 per verb above, and the 17 gang calls.
  EXPECT_EQ(text.service->counters().verbs.text_path_calls, 2 * 4 + 17);
  EXPECT_EQ(tree.service->counters().verbs.text_path_calls, 0);
  // Bodies that are not plain JSON objects: an error, never a crash; bad JSON is named as such.
  for (const std::string& bad :
       std::vector<std::string>{"{not json", "[1,2]", "", std::string(200, '['), "{\"pod\":{}} trailing"}) {
    auto r = text.service->filter_body(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_FALSE(r.error().message().empty());
  }
  auto not_json = text.service->prioritize_body("{not json");
  ASSERT_FALSE(not_json.has_value());
  EXPECT_NE(not_json.error().message().find("request body: not valid JSON"), std::string::npos)
      << not_json.error().message();
}

// The preemptVerb's body through the text path (preempt_body, what the HTTP route runs) against the
// tree path (preempt on the parsed body) of a twin service with the same cluster and history: the same
// answer text byte for byte, or the same error, for kube-scheduler's shapes and the odd ones.
TEST(ExtenderService, PreemptTextPathAnswersAsTheTreePath) {
  Fixture tree, text;
  // Every node full: one 8-GPU pod each, every third one in a gang, priorities 0 and 5.
  std::vector<json> running;
  for (std::size_t n = 0; n < tree.cluster.node_names.size(); ++n) {
    std::map<std::string, std::string> annotations;
    if (n % 3 == 0) annotations["scheduling.k8s.io/group-name"] = "low-" + std::to_string(n / 6);
    json pod = bound(pod_object("v-" + std::to_string(n), "v-" + std::to_string(n), "8", annotations),
                     tree.cluster.node_names[n]);
    pod["spec"]["priority"] = n % 2 ? 5 : 0;
    running.push_back(std::move(pod));
  }
  ASSERT_TRUE(tree.service->set_pods(running).has_value());
  ASSERT_TRUE(text.service->set_pods(running).has_value());
  std::size_t answered = 0;  // nodes in the answers
  auto both = [&](const std::string& body) {
    auto parsed = io::parse_json(body, "ExtenderPreemptionArgs");
    std::expected<json, Error> want =
        parsed ? tree.service->preempt(*parsed) : std::unexpected(parsed.error());
    auto got = text.service->preempt_body(body);
    ASSERT_EQ(want.has_value(), got.has_value()) << body.substr(0, 200);
    if (!want) {
      EXPECT_EQ(want.error().message(), got.error().message());
      return;
    }
    EXPECT_EQ(io::json_text(*want), *got) << body.substr(0, 200);
    answered += (*want)["NodeNameToMetaVictims"].size();
  };
  json high = pod_object("high", "high", "8");
  high["spec"]["priority"] = 1000;
  json meta = json::object(), full = json::object();
  for (std::size_t n = 0; n < tree.cluster.node_names.size(); ++n) {
    const std::string uid = "v-" + std::to_string(n);
    meta[tree.cluster.node_names[n]] = {{"Pods", json::array({{{"UID", uid}}})},
                                        {"NumPDBViolations", n % 4 == 0}};
    full[tree.cluster.node_names[n]] = {{"Pods", json::array({running[n]})}, {"NumPDBViolations", 0}};
  }
  const std::string pod_text = high.dump();
  both(json{{"Pod", high}, {"NodeNameToMetaVictims", meta}}.dump());
  EXPECT_GT(answered, 0u);
  both(json{{"Pod", high}, {"NodeNameToVictims", full}}.dump());
  both(json{{"pod", high}, {"nodeNameToMetaVictims", meta}, {"extra", {{"a", 1}}}}.dump());
  both(json{{"Pod", high}, {"NodeNameToMetaVictims", json::object()}}.dump());
  both(json{{"Pod", high}}.dump());
  // A node in both maps and twice in one (the last entry counts), names that need escaping or are
  // not in the cluster, victims in every shape a decoder tolerates.
  both(
      R"({"Pod":)" + pod_text + R"(,"NodeNameToVictims":{"n-00-1":{"Pods":[{"metadata":{"uid":"v-1"}}]}},)" +
      R"("NodeNameToMetaVictims":{"n-00-1":{"Pods":[{"UID":"v-2"}]},"n-00-2":{"Pods":[{"UID":"v-2"}]},)" +
      R"("n-00-2":{"Pods":[{"UID":"v-9"}],"NumPDBViolations":0},"odd\"name\\\t\u0001\b":{"Pods":[{"UID":"x\u007f\"y"}]},)" +
      R"("n\u00f6de":{"Pods":[{"uid":"v-3","UID":""}]},"n-00-3":3,"n-00-4":{"Pods":{"UID":"v-4"}},)" +
      R"("n-00-5":{"NumPDBViolations":1.5,"Pods":[7,null,{"UID":5},{"UID":"v-5"},{"UID":"v-6"}]},)" +
      R"("n-00-6":{"NumPDBViolations":null,"numPDBViolations":2,"Pods":null,"pods":[{"UID":"v-6"}]},)" +
      R"("n-00-7":{"Pods":[{"UID":"a"}],"Pods":[{"UID":"v-7"}],"NumPDBViolations":18446744073709551615}}})");
  // Malformed requests: the tree path's errors.
  for (const std::string& bad :
       std::vector<std::string>{"{not json", "[1,2]", "", std::string(200, '['),
                                R"({"NodeNameToMetaVictims":[]})", R"({"Pod":3,"NodeNameToMetaVictims":{}})",
                                R"({"Pod":)" + pod_text + R"(,"NodeNameToMetaVictims":[]})",
                                R"({"Pod":)" + pod_text + R"(,"NodeNameToMetaVictims":{}} trailing)",
                                R"({"Pod":null,"pod":)" + pod_text +
                                    R"(,"NodeNameToMetaVictims":null,"nodenametometavictims":{}})",
                                R"({"Pod":{},"Pod":)" + pod_text + R"(,"NodeNameToVictims":{"n-00-1":{}}})"})
    both(bad);
  // A gang of 8 at a higher priority, pod by pod: the first call plans it with victims in one leaf,
  // and each pod is answered its planned node.
  answered = 0;
  for (int i = 0; i < 8; ++i) {
    auto pod = pod_object("g-" + std::to_string(i), "g-" + std::to_string(i), "8", hard_gang("g", 8, 1));
    pod["spec"]["priority"] = 1000;
    both(json{{"Pod", pod}, {"NodeNameToMetaVictims", meta}}.dump());
  }
  EXPECT_EQ(answered, 8u);
  EXPECT_EQ(tree.service->plans().dump(), text.service->plans().dump());
  EXPECT_EQ(text.service->counters().verbs.preempt_calls, tree.service->counters().verbs.preempt_calls);
}

// kube-scheduler prioritises a pod right after filtering it, over the names filter kept. The
// prioritize call reuses the node ids filter resolved only when the pod, the names (in order) and
// the index build are the same; its answer is always the one a service that never filtered gives.
TEST(ExtenderService, PrioritizeReusesItsFiltersNodesOnlyForTheSamePodNamesAndIndex) {
  Fixture f, reference;
  std::vector<std::string> names = f.cluster.node_names;
  names.push_back("not-a-node");
  const json pod = pod_object("web", "web-1", "0");
  auto same_as_reference = [&](const json& args) {
    auto got = f.service->prioritize(args);
    auto want = reference.service->prioritize(args);
    ASSERT_TRUE(got.has_value() && want.has_value());
    EXPECT_EQ(*got, *want);
  };
  auto kept_by_filter = [&]() {
    auto filtered = f.service->filter(args_by_name(pod, names));
    EXPECT_TRUE(filtered.has_value());
    return filtered ? (*filtered)["nodenames"].get<std::vector<std::string>>() : std::vector<std::string>{};
  };
  std::vector<std::string> kept = kept_by_filter();
  ASSERT_EQ(kept.size(), f.cluster.node_names.size());  // all but the unknown name
  same_as_reference(args_by_name(pod, kept));
  EXPECT_EQ(f.service->counters().verbs.prioritize_reused_filter, 1);
  // Other names, another pod: looked up again.
  std::vector<std::string> reversed(kept.rbegin(), kept.rend());
  same_as_reference(args_by_name(pod, reversed));
  same_as_reference(args_by_name(pod_object("db", "db-1", "0"), kept));
  kept.pop_back();
  same_as_reference(args_by_name(pod, kept));
  EXPECT_EQ(f.service->counters().verbs.prioritize_reused_filter, 1);
  // A pod bound between the calls changes usage in place, not the index's node ids: the ids are
  // reused and the scores see the new pod.
  kept = kept_by_filter();
  const auto rebuilds = f.service->counters().view.index_rebuilds;
  for (Fixture* x : {&f, &reference}) {
    ASSERT_TRUE(
        x->service->upsert_pod(bound(pod_object("busy", "b-1", "0", {}, {}, "48"), kept[1])).has_value());
  }
  same_as_reference(args_by_name(pod, kept));
  EXPECT_EQ(f.service->counters().verbs.prioritize_reused_filter, 2);
  EXPECT_EQ(f.service->counters().view.index_rebuilds, rebuilds);
  // The HTTP routes' text path, as kube-scheduler sends it: filter, then prioritize over the kept.
  auto filtered = f.service->filter_body(args_by_name(pod, names).dump());
  ASSERT_TRUE(filtered.has_value());
  const json kept_text = json::parse(*filtered).at("nodenames");
  auto scores = f.service->prioritize_body(json{{"pod", pod}, {"nodenames", kept_text}}.dump());
  ASSERT_TRUE(scores.has_value());
  auto want = reference.service->prioritize(json{{"pod", pod}, {"nodenames", kept_text}});
  ASSERT_TRUE(want.has_value());
  EXPECT_EQ(json::parse(*scores), *want);
  EXPECT_EQ(f.service->counters().verbs.prioritize_reused_filter, 3);
  EXPECT_EQ(reference.service->counters().verbs.prioritize_reused_filter, 0);
}

TEST(ExtenderConfig, ReadsEveryKeyAndNamesTheBadOne) {
  testing::TempDir dir;
  const auto good = dir.path() / "extender.yaml";
  std::ofstream(good)
      << "kind: ExtenderConfig\nplanTTLSeconds: 90\nlisten: 127.0.0.1:9443\nurlPrefix: /x/\n"
         "stateFile: /tmp/s.json\ntls: {certFile: a.crt, keyFile: a.key}\ngangLabelKeys: [g]\n";
  auto cfg = load_extender_config(good);
  ASSERT_TRUE(cfg.has_value()) << cfg.error().message();
  EXPECT_EQ(cfg->service.plan_ttl, std::chrono::seconds(90));
  EXPECT_EQ(cfg->listen_address, "127.0.0.1");
  EXPECT_EQ(cfg->listen_port, 9443);
  EXPECT_EQ(cfg->url_prefix, "/x");
  EXPECT_EQ(cfg->tls_key_file, "a.key");
  EXPECT_EQ(cfg->service.gang_label_keys, std::vector<std::string>{"g"});
  const auto bad = dir.path() / "bad.yaml";
  std::ofstream(bad) << "planTTL: 90\n";
  auto err = load_extender_config(bad);
  ASSERT_FALSE(err.has_value());
  EXPECT_NE(err.error().message().find("planTTL"), std::string::npos);
  std::ofstream(bad) << "tls: {certFile: a.crt}\n";
  err = load_extender_config(bad);
  ASSERT_FALSE(err.has_value());
  EXPECT_NE(err.error().message().find("tls.keyFile"), std::string::npos);
  // Wrong types and values out of range read as every config file's do: file, key path, what.
  const std::string where = bad.string() + ": ";
  for (const auto& [text, message] : std::vector<std::pair<std::string, std::string>>{
           {"planTTLSeconds: 0\n", "planTTLSeconds: must be greater than 0"},
           {"planTTLSeconds: 1e400\n",
            "planTTLSeconds: '1e400' is not a duration (Go style: 90s, 5m, 1h30m, 500ms; or a number of "
            "seconds)"},
           {"planTTLSeconds: 169h\n", "planTTLSeconds: must be at most 168h (a week)"},
           {"tls: {certFile: a.crt}\n", "tls.keyFile: is required with tls.certFile"},
           {"tls: [a]\n", "tls: must be a mapping"},
           {"gangLabelKeys: [a, '']\n", "gangLabelKeys[1]: must not be empty"},
           {"kind: Config\n", "kind: must be ExtenderConfig, got 'Config'"},
           {"urlPrefix: x\n", "urlPrefix: must start with '/'"},
           {R"({"listen": "[::1]:99999"})", "listen: port '99999' is not 0..65535"}}) {
    std::ofstream(bad) << text;
    err = load_extender_config(bad);
    ASSERT_FALSE(err.has_value()) << text;
    EXPECT_EQ(err.error().message(), where + message) << text;
  }
  // The plan TTL is a duration like every other time in our configs, or plain seconds.
  std::ofstream(bad) << "planTTLSeconds: 10m\n";
  auto ten_minutes = load_extender_config(bad);
  ASSERT_TRUE(ten_minutes.has_value()) << ten_minutes.error().message();
  EXPECT_EQ(ten_minutes->service.plan_ttl, std::chrono::minutes(10));
}

TEST(ExtenderConfig, FabricHealthComesFromItsKeyElseTheSchedulerConfig) {
  testing::TempDir dir;
  const auto conf = dir.path() / "volcano-scheduler.conf";
  std::ofstream(conf) << "tiers: []\nhypertopo: {fabricHealth: exclude}\n";
  const auto from_conf = dir.path() / "a.yaml";
  std::ofstream(from_conf) << "schedulerConfig: " << conf.string() << "\n";
  auto cfg = load_extender_config(from_conf);
  ASSERT_TRUE(cfg.has_value()) << cfg.error().message();
  EXPECT_EQ(cfg->service.fabric_health, FabricHealthMode::kExclude);
  const auto own_key = dir.path() / "b.yaml";
  std::ofstream(own_key) << "schedulerConfig: " << conf.string() << "\nfabricHealth: ignore\n";
  cfg = load_extender_config(own_key);
  ASSERT_TRUE(cfg.has_value()) << cfg.error().message();
  EXPECT_EQ(cfg->service.fabric_health, FabricHealthMode::kIgnore);
  EXPECT_EQ(ExtenderOptions{}.fabric_health, FabricHealthMode::kPreferHealthy);
  const auto bad = dir.path() / "c.yaml";
  std::ofstream(bad) << "fabricHealth: avoid\n";
  auto err = load_extender_config(bad);
  ASSERT_FALSE(err.has_value());
  EXPECT_NE(err.error().message().find(
                "c.yaml: fabricHealth: must be prefer-healthy, exclude or ignore, got 'avoid'"),
            std::string::npos)
      << err.error().message();
}

// Every workload's rank key gives the plan the completion index gives: rank r lands where the plan
// put rank r, whatever order the pods come in.
TEST(ExtenderService, EveryRankKeyGivesTheSamePlanAsTheCompletionIndex) {
  constexpr int kPods = 16;
  using Marks = std::pair<std::map<std::string, std::string>,
                          std::map<std::string, std::string>>;  // annotations, labels
  auto run = [&](const std::function<Marks(int)>& marks, const std::function<void(json&, int)>& edit) {
    Fixture f;
    std::map<int, std::string> node_of;
    std::vector<int> order(kPods);
    for (int i = 0; i < kPods; ++i) order[i] = (i * 7) % kPods;  // not index order
    for (int r : order) {
      auto [annotations, labels] = marks(r);
      auto a = hard_gang("ranks", kPods, 2);
      annotations.insert(a.begin(), a.end());
      json pod = pod_object("p-" + std::to_string(r), "uid-" + std::to_string(r), "4", annotations, labels);
      if (edit) edit(pod, r);
      node_of[r] = f.place(pod);
      EXPECT_FALSE(node_of[r].empty()) << r;
    }
    const json plans_now = f.service->plans();
    for (const auto& s : plans_now["gangs"][0]["slots"]) {
      EXPECT_EQ(s["takenBy"], "podIndex");
      EXPECT_EQ(node_of[s["rank"].get<int>()], s["node"]) << s["rank"];
    }
    return node_of;
  };
  const auto want = run(
      [](int r) {
        return Marks{{{"batch.kubernetes.io/job-completion-index", std::to_string(r)}}, {}};
      },
      {});
  std::set<std::string> used;
  for (const auto& [r, node] : want) used.insert(node);
  ASSERT_GT(used.size(), 1u);
  // Kubeflow's training operator: a master (replica-index 0) and workers whose env RANK is their
  // replica index + 1; without RANK, the replica index.
  EXPECT_EQ(run(
                [](int r) {
                  return Marks{{},
                               {{"training.kubeflow.org/replica-type", r == 0 ? "master" : "worker"},
                                {"training.kubeflow.org/replica-index", std::to_string(r == 0 ? 0 : r - 1)}}};
                },
                [](json& pod, int r) {
                  pod["spec"]["containers"][0]["env"] =
                      json::array({{{"name", "RANK"}, {"value", std::to_string(r)}}});
                }),
            want);
  EXPECT_EQ(run(
                [](int r) {
                  return Marks{{}, {{"training.kubeflow.org/replica-index", std::to_string(r)}}};
                },
                {}),
            want);
  // LeaderWorkerSet: the worker index, though the leader's pod-index is its group's index.
  EXPECT_EQ(run(
                [](int r) {
                  return Marks{{},
                               {{"leaderworkerset.sigs.k8s.io/worker-index", std::to_string(r)},
                                {"leaderworkerset.sigs.k8s.io/group-index", "5"},
                                {"apps.kubernetes.io/pod-index", std::to_string(r == 0 ? 5 : r)}}};
                },
                {}),
            want);
  // JobSet: two replicated Jobs of eight, each pod its Job's index and its completion index.
  EXPECT_EQ(run(
                [](int r) {
                  return Marks{{{"batch.kubernetes.io/job-completion-index", std::to_string(r % 8)}},
                               {{"jobset.sigs.k8s.io/job-index", std::to_string(r / 8)},
                                {"jobset.sigs.k8s.io/replicatedjob-replicas", "2"},
                                {"batch.kubernetes.io/job-completion-index", std::to_string(r % 8)}}};
                },
                {}),
            want);
  EXPECT_EQ(run(
                [](int r) {
                  return Marks{{}, {{"apps.kubernetes.io/pod-index", std::to_string(r)}}};
                },
                {}),
            want);
  EXPECT_EQ(run([](int r) { return Marks{{{"volcano.sh/task-index", std::to_string(r)}}, {}}; }, {}), want);
  EXPECT_EQ(run([](int r) { return Marks{{{"hypertopo.io/rank", std::to_string(r)}}, {}}; }, {}), want);
}

// A pod bound, deleted, replaced: the view changes usage in place, and every answer is the one a
// service that rebuilds its index from a fresh list gives.
TEST(ExtenderService, AnswersAfterInPlaceUpdatesEqualThoseOfAFreshRebuild) {
  Fixture f;
  std::vector<json> bound_pods;
  auto rebuilt = [&] {
    Fixture fresh;
    EXPECT_TRUE(fresh.service->set_pods(bound_pods).has_value());
    return fresh;
  };
  const auto rebuilds = [&] { return f.service->counters().view.index_rebuilds; };
  ASSERT_TRUE(
      f.service->filter(args_by_name(pod_object("warm", "w", "1"), f.cluster.node_names)).has_value());
  const auto before = rebuilds();
  for (int i = 0; i < 40; ++i) {
    json pod = pod_object("n-" + std::to_string(i), "nu-" + std::to_string(i), std::to_string(1 + i % 4));
    auto scores = f.service->prioritize(args_by_name(pod, f.cluster.node_names));
    ASSERT_TRUE(scores.has_value());
    Fixture fresh = rebuilt();
    auto want = fresh.service->prioritize(args_by_name(pod, f.cluster.node_names));
    ASSERT_TRUE(want.has_value());
    ASSERT_EQ(*scores, *want) << i;
    // kube-scheduler binds it on the best node; every fifth bound pod is deleted again.
    std::string best;
    std::int64_t top = -1;
    for (const auto& s : *scores) {
      if (s["score"].get<std::int64_t>() > top) {
        top = s["score"];
        best = s["host"];
      }
    }
    json b = bound(pod, best);
    ASSERT_TRUE(f.service->upsert_pod(b).has_value());
    bound_pods.push_back(b);
    if (i % 5 == 4) {
      f.service->remove_pod(bound_pods.front());
      bound_pods.erase(bound_pods.begin());
    }
  }
  EXPECT_EQ(rebuilds(), before);
  EXPECT_EQ(f.service->counters().view.index_pod_updates, 40 + 8);
}

// The upstream Workload API (Kubernetes 1.35+): a pod's spec.schedulingGroup names a
// scheduling.k8s.io/v1alpha2 PodGroup (spec.schedulingPolicy.gang.minCount), spec.workloadRef a
// pod group of a scheduling.k8s.io/v1alpha1 Workload, split by podGroupReplicaKey into gangs.
TEST(ExtenderService, UpstreamPodGroupsAndWorkloadsNameAndSizeGangs) {
  Fixture f;
  f.service->set_pod_groups({json{{"apiVersion", "scheduling.k8s.io/v1alpha2"},
                                  {"kind", "PodGroup"},
                                  {"metadata", {{"name", "trainer-0"}, {"namespace", "ml"}}},
                                  {"spec", {{"schedulingPolicy", {{"gang", {{"minCount", 4}}}}}}}}},
                            PodGroupKind::kUpstream);
  f.service->set_pod_groups(
      {json{{"apiVersion", "scheduling.k8s.io/v1alpha1"},
            {"kind", "Workload"},
            {"metadata", {{"name", "job"}, {"namespace", "ml"}}},
            {"spec",
             {{"podGroups", json::array({{{"name", "workers"}, {"policy", {{"gang", {{"minCount", 2}}}}}},
                                         {{"name", "driver"}, {"policy", {{"basic", json::object()}}}}})}}}}},
      PodGroupKind::kWorkload);
  const std::map<std::string, std::string> hard{{"hypertopo.io/network-topology-mode", "hard"},
                                                {"hypertopo.io/highest-tier-allowed", "1"}};
  std::set<std::string> leaves;
  // The PodGroup's gang is planned once minCount of its pods are seen (KEP-4671: a gang waits for
  // all its pods to be created), as `place` reads the PodGroup with its pods.
  std::vector<json> members;
  for (int i = 0; i < 4; ++i) {
    json pod = pod_object("sg-" + std::to_string(i), "sg-" + std::to_string(i), "8", hard);
    pod["spec"]["schedulingGroup"] = {{"podGroupName", "trainer-0"}};
    ASSERT_TRUE(f.service->upsert_pod(pod).has_value());
    members.push_back(std::move(pod));
  }
  for (const json& pod : members) {
    const std::string node = f.place(pod);
    ASSERT_FALSE(node.empty()) << pod["metadata"]["name"];
    leaves.insert(f.cluster.leaf_of[node]);
  }
  EXPECT_EQ(leaves.size(), 1u);
  for (const std::string replica : {"0", "1"}) {
    for (int i = 0; i < 2; ++i) {
      json pod =
          pod_object("wl-" + replica + std::to_string(i), "wl-" + replica + std::to_string(i), "8", hard);
      pod["spec"]["workloadRef"] = {
          {"name", "job"}, {"podGroup", "workers"}, {"podGroupReplicaKey", replica}};
      ASSERT_FALSE(f.place(pod).empty());
    }
  }
  const json plans = f.service->plans();
  std::map<std::string, std::size_t> sizes;
  for (const auto& g : plans["gangs"]) sizes[g["key"]] = g["slots"].size();
  EXPECT_EQ(sizes, (std::map<std::string, std::size_t>{
                       {"ml/job/workers/0", 2}, {"ml/job/workers/1", 2}, {"ml/trainer-0", 4}}));
  // A pod naming a group nobody has made waits, and says which.
  json lost = pod_object("lost", "lost", "8", hard);
  lost["spec"]["schedulingGroup"] = {{"podGroupName", "nowhere"}};
  auto r = f.service->filter(args_by_name(lost, f.cluster.node_names));
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE((*r)["nodenames"].empty());
  EXPECT_NE(r->dump().find("PodGroup ml/nowhere (scheduling.k8s.io, spec.schedulingGroup) not found"),
            std::string::npos)
      << r->dump();
}

// A pod joining a running gang that spans two leaves goes where more of the gang runs (Volcano's
// scoreWithTaskNum), not to the leaf that comes first.
TEST(ExtenderService, AJoiningPodPrefersTheLeafHoldingMoreOfItsGang) {
  Fixture f;
  std::vector<json> busy;
  for (const auto& n : f.cluster.node_names) {
    const std::string leaf = f.cluster.leaf_of[n];
    const int i = n.back() - '0';
    const bool free = (leaf == "leaf-00" && i < 2) || (leaf == "leaf-01" && i < 4);
    if (free) continue;
    busy.push_back(bound(pod_object("busy-" + n, "busy-" + n, "8"), n));
    ASSERT_TRUE(f.service->upsert_pod(busy.back()).has_value());
  }
  std::map<std::string, int> per_leaf;
  for (int r = 0; r < 6; ++r) {
    auto a = hard_gang("split", 6, 2);
    a["batch.kubernetes.io/job-completion-index"] = std::to_string(r);
    json pod = pod_object("s-" + std::to_string(r), "s-" + std::to_string(r), "8", a);
    const std::string node = f.place(pod);
    ASSERT_FALSE(node.empty()) << r;
    ++per_leaf[f.cluster.leaf_of[node]];
    ASSERT_TRUE(f.service->upsert_pod(bound(pod, node)).has_value());
  }
  ASSERT_EQ(per_leaf, (std::map<std::string, int>{{"leaf-00", 2}, {"leaf-01", 4}}));
  // One node frees in each leaf; rank 6 joins (the gang grows past its six).
  for (const json& b : busy) {
    const std::string node = b["spec"]["nodeName"];
    if (node == "n-00-2" || node == "n-01-4") f.service->remove_pod(b);
  }
  auto a = hard_gang("split", 6, 2);
  a["batch.kubernetes.io/job-completion-index"] = "6";
  const std::string joined = f.place(pod_object("s-6", "s-6", "8", a));
  EXPECT_EQ(joined, "n-01-4");
}

// A pod of a planned gang bound by another scheduler replica (it never filtered here) takes its
// rank's slot: the slot is bound to it and its reservation no longer counts beside the pod.
TEST(ExtenderService, APodBoundElsewhereTakesItsRanksSlot) {
  Fixture f;
  // Three 2-GPU pods: the plan packs them on one 8-GPU node.
  auto gang = [](int rank) {
    auto a = hard_gang("other", 3, 1);
    a["batch.kubernetes.io/job-completion-index"] = std::to_string(rank);
    return pod_object("o-" + std::to_string(rank), "o-uid-" + std::to_string(rank), "2", a);
  };
  ASSERT_FALSE(f.place(gang(0)).empty());
  std::string planned;
  const json before = f.service->plans();
  for (const auto& s : before["gangs"][0]["slots"]) {
    if (s["rank"] == 2) planned = s["node"];
  }
  ASSERT_FALSE(planned.empty());
  ASSERT_TRUE(f.service->upsert_pod(bound(gang(2), planned)).has_value());
  const json after = f.service->plans();
  const json& slot = after["gangs"][0]["slots"][2];
  EXPECT_EQ(slot["state"], "bound");
  EXPECT_EQ(slot["podUID"], "o-uid-2");
  // The node counts 6 GPUs (the pod and two reservations), not 8: a 2-GPU pod still fits there.
  auto r = f.service->filter(args_by_name(pod_object("probe", "probe", "2"), {planned}));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ((*r)["nodenames"].size(), 1u) << r->dump();
}

}  // namespace
}  // namespace hypertopo::scheduler
