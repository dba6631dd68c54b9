// The readers of the job kinds both doors accept beside the PodGroups (Kubeflow MPIJob,
// LeaderWorkerSet; scheduler/input/leader_worker_jobs.h) and the coscheduling PodGroup with its
// Pods (coscheduling_pod_group.h), through the path `place --job` takes: parse_job, the node-label
// levels resolved on the index (label_levels.h: exclusive-topology on kubernetes.io/hostname is the
// node itself), then the engine on a small two-leaf cluster whose nodes carry their leaf, spine and
// hostname labels. A List holding a PodGroup goes to the extender too: the PodGroup as its watch
// hands it over, each pod noted, then a filter call for each of the first pods.
// The corpus holds small hand-written objects of each kind (tests/fuzz/corpus/job_kinds).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "scheduler/extender/extender_service.h"
#include "scheduler/input/cluster_loader.h"
#include "scheduler/input/job_loader.h"
#include "scheduler/placement/label_levels.h"
#include "scheduler/placement/placement_engine.h"
#include "tests/fuzz/fuzz_target.h"
#include "tests/scheduler/extender/extender_cluster.h"

namespace {

using nlohmann::json;

const hypertopo::testing::ExtenderCluster& job_kinds_cluster() {
  static const hypertopo::testing::ExtenderCluster c = [] {
    auto made = hypertopo::testing::make_cluster(1, 2, 2);
    for (auto& n : made.nodes) {
      const std::string name = n["metadata"]["name"];
      n["metadata"]["labels"]["example.com/leaf"] = made.leaf_of.at(name);
      n["metadata"]["labels"]["example.com/spine"] = "spine-0";
    }
    return made;
  }();
  return c;
}

void job_kinds_through_place(const json& doc) {
  using namespace hypertopo::scheduler;
  static const std::vector<NodeSpec> nodes = [] {
    auto parsed = parse_nodes(json{{"kind", "NodeList"}, {"items", job_kinds_cluster().nodes}});
    return parsed ? *parsed : std::vector<NodeSpec>{};
  }();
  auto job = parse_job(doc, nodes);
  if (!job) return;
  auto topology = parse_topology(json{{"kind", "HyperNodeList"}, {"items", job_kinds_cluster().hypernodes}});
  if (!topology) return;
  auto index = TopologyIndex::from_hypernodes(topology->hypernodes, nodes, {});
  if (!index) return;
  resolve_label_levels(*index, job->request);
  PlacementEngine engine(*index, BinpackWeights{});
  (void)engine.place(job->request);
}

void job_kinds_through_extender(const json& doc) {
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
  if (!group) return;
  ExtenderService service(ExtenderOptions{});
  (void)service.set_hypernodes(job_kinds_cluster().hypernodes);
  (void)service.set_nodes(job_kinds_cluster().nodes);
  service.set_pod_groups({*group}, PodGroupKind::kCoscheduling);
  for (auto& pod : pods) {
    if (!pod.contains("metadata") || !pod["metadata"].is_object()) continue;
    // The API server gives every pod a uid; the extender keys what it notes by it.
    if (!pod["metadata"].contains("uid")) pod["metadata"]["uid"] = "u-" + std::to_string(&pod - pods.data());
    (void)service.upsert_pod(pod);
  }
  constexpr std::size_t kFiltered = 4;
  for (std::size_t i = 0; i < pods.size() && i < kFiltered; ++i)
    (void)service.filter(json{{"pod", pods[i]}, {"nodenames", job_kinds_cluster().node_names}});
  service.remove_pod_group(*group, PodGroupKind::kCoscheduling);
}

}  // namespace

HT_FUZZ_TARGET(job_kinds) {
  auto doc = hypertopo::scheduler::read_document(hypertopo::fuzzing::scratch_file("job_kinds.yaml", input));
  if (!doc) return;
  job_kinds_through_place(*doc);
  job_kinds_through_extender(*doc);
}
