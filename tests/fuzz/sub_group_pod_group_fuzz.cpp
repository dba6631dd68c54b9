// PodGroups that divide a gang into sub-groups (KAI's scheduling.run.ai spec.subGroups with their
// chains of parents, Volcano's scheduling.volcano.sh spec.subGroupPolicy), as a List of the
// PodGroup and its Pods, through both doors that read them:
//   - `place --job`: parse_job, then the engine (place_sub_groups for a grouped job) on a small
//     two-leaf cluster;
//   - the extender: the PodGroup as its watch hands it over (by kind), each pod noted, then a filter
//     call for each of the first pods, as kube-scheduler makes them.
// The corpus holds small hand-written Lists of both kinds and the 20,000-deep chain of parents that
// once overflowed the placer's recursion (crash-kai-parent-chain-20000.json).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "scheduler/extender/extender_service.h"
#include "scheduler/input/cluster_loader.h"
#include "scheduler/input/job_loader.h"
#include "scheduler/placement/placement_engine.h"
#include "tests/fuzz/fuzz_target.h"
#include "tests/scheduler/extender/extender_cluster.h"

namespace {

using nlohmann::json;

// Two leaves of two 8-GPU nodes under one spine; each node labelled with its leaf and spine, so a
// KAI level given as a label resolves too.
const hypertopo::testing::ExtenderCluster& cluster() {
  static const hypertopo::testing::ExtenderCluster c = [] {
    auto made = hypertopo::testing::make_cluster(1, 2, 2);
    for (auto& n : made.nodes) {
      const std::string name = n["metadata"]["name"];
      n["metadata"]["labels"]["example.com/rack"] = made.leaf_of.at(name);
      n["metadata"]["labels"]["example.com/block"] = "spine-0";
    }
    return made;
  }();
  return c;
}

void through_place(const json& doc) {
  using namespace hypertopo::scheduler;
  static const std::vector<NodeSpec> nodes = [] {
    auto parsed = parse_nodes(json{{"kind", "NodeList"}, {"items", cluster().nodes}});
    return parsed ? *parsed : std::vector<NodeSpec>{};
  }();
  auto job = parse_job(doc, nodes);
  if (!job) return;
  auto topology = parse_topology(json{{"kind", "HyperNodeList"}, {"items", cluster().hypernodes}});
  if (!topology) return;
  auto index = TopologyIndex::from_hypernodes(topology->hypernodes, nodes, {});
  if (!index) return;
  PlacementEngine engine(*index, BinpackWeights{});
  (void)engine.place(job->request);
}

void through_extender(const json& doc) {
  using namespace hypertopo::scheduler;
  if (!doc.is_object() || !doc.contains("items") || !doc["items"].is_array()) return;
  const json* group = nullptr;
  std::vector<json> pods;
  for (const auto& item : doc["items"]) {
    if (!item.is_object()) continue;
    if (item.value("kind", json()) == "PodGroup" && !group) {
      group = &item;
    } else if (item.value("kind", json()) == "Pod") {
      pods.push_back(item);
    }
  }
  if (!group || !group->contains("apiVersion") || !(*group)["apiVersion"].is_string()) return;
  const std::string api = (*group)["apiVersion"];
  const PodGroupKind kind = api.starts_with("scheduling.run.ai/")       ? PodGroupKind::kKai
                            : api.starts_with("scheduling.volcano.sh/") ? PodGroupKind::kVolcano
                                                                        : PodGroupKind::kCoscheduling;
  ExtenderService service(ExtenderOptions{});
  (void)service.set_hypernodes(cluster().hypernodes);
  (void)service.set_nodes(cluster().nodes);
  service.set_pod_groups({*group}, kind);
  for (auto& pod : pods) {
    if (!pod.contains("metadata") || !pod["metadata"].is_object()) continue;
    // The API server gives every pod a uid; the extender keys what it notes by it.
    if (!pod["metadata"].contains("uid")) pod["metadata"]["uid"] = "u-" + std::to_string(&pod - pods.data());
    (void)service.upsert_pod(pod);
  }
  constexpr std::size_t kFiltered = 4;
  for (std::size_t i = 0; i < pods.size() && i < kFiltered; ++i)
    (void)service.filter(json{{"pod", pods[i]}, {"nodenames", cluster().node_names}});
  service.remove_pod_group(*group, kind);
}

}  // namespace

HT_FUZZ_TARGET(sub_group_pod_group) {
  auto doc = hypertopo::scheduler::read_document(
      hypertopo::fuzzing::scratch_file("sub_group_pod_group.yaml", input));
  if (!doc) return;
  through_place(*doc);
  through_extender(*doc);
}
