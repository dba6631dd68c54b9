#pragma once
// What the fuzz targets of gang documents (sub_group_pod_group, job_kinds) run an object through:
// both doors that read it, on one small cluster of two leaves of two 8-GPU nodes under one spine,
// each node labelled with its leaf and spine under the names KAI's levels and the job kinds' tests
// use (example.com/rack and example.com/block, example.com/leaf and example.com/spine).
//   - `place --job`: parse_job, the node-label levels resolved on the index (label_levels.h), then
//     the engine;
//   - the extender: the PodGroup of a List as its watch hands it over (by apiVersion), each pod
//     noted, then a filter call for each of the first pods, as kube-scheduler makes them.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "scheduler/extender/extender_service.h"
#include "scheduler/input/cluster_loader.h"
#include "scheduler/input/job_loader.h"
#include "scheduler/placement/label_levels.h"
#include "scheduler/placement/placement_engine.h"
#include "tests/scheduler/extender/extender_cluster.h"

namespace hypertopo::fuzzing {

inline const testing::ExtenderCluster& gang_doors_cluster() {
  static const testing::ExtenderCluster c = [] {
    auto made = testing::make_cluster(1, 2, 2);
    for (auto& n : made.nodes) {
      const std::string name = n["metadata"]["name"];
      for (const char* leaf : {"example.com/rack", "example.com/leaf"})
        n["metadata"]["labels"][leaf] = made.leaf_of.at(name);
      for (const char* spine : {"example.com/block", "example.com/spine"})
        n["metadata"]["labels"][spine] = "spine-0";
    }
    return made;
  }();
  return c;
}

inline void through_place(const nlohmann::json& doc) {
  using namespace hypertopo::scheduler;
  using nlohmann::json;
  static const std::vector<NodeSpec> nodes = [] {
    auto parsed = parse_nodes(json{{"kind", "NodeList"}, {"items", gang_doors_cluster().nodes}});
    return parsed ? *parsed : std::vector<NodeSpec>{};
  }();
  auto job = parse_job(doc, nodes);
  if (!job) return;
  auto topology = parse_topology(json{{"kind", "HyperNodeList"}, {"items", gang_doors_cluster().hypernodes}});
  if (!topology) return;
  auto index = TopologyIndex::from_hypernodes(topology->hypernodes, nodes, {});
  if (!index) return;
  resolve_label_levels(*index, job->request);
  PlacementEngine engine(*index, BinpackWeights{});
  (void)engine.place(job->request);
}

inline void through_extender(const nlohmann::json& doc) {
  using namespace hypertopo::scheduler;
  using nlohmann::json;
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
  if (!group) return;
  const json& version = group->contains("apiVersion") ? (*group)["apiVersion"] : json();
  const std::string api = version.is_string() ? version.get<std::string>() : std::string();
  const PodGroupKind kind = api.starts_with("scheduling.run.ai/")       ? PodGroupKind::kKai
                            : api.starts_with("scheduling.volcano.sh/") ? PodGroupKind::kVolcano
                                                                        : PodGroupKind::kCoscheduling;
  ExtenderService service(ExtenderOptions{});
  (void)service.set_hypernodes(gang_doors_cluster().hypernodes);
  (void)service.set_nodes(gang_doors_cluster().nodes);
  service.set_pod_groups({*group}, kind);
  for (auto& pod : pods) {
    if (!pod.contains("metadata") || !pod["metadata"].is_object()) continue;
    // The API server gives every pod a uid; the extender keys what it notes by it.
    if (!pod["metadata"].contains("uid")) pod["metadata"]["uid"] = "u-" + std::to_string(&pod - pods.data());
    (void)service.upsert_pod(pod);
  }
  constexpr std::size_t kFiltered = 4;
  for (std::size_t i = 0; i < pods.size() && i < kFiltered; ++i)
    (void)service.filter(json{{"pod", pods[i]}, {"nodenames", gang_doors_cluster().node_names}});
  service.remove_pod_group(*group, kind);
}

}  // namespace hypertopo::fuzzing
