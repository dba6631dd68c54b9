// PodGroups, both kinds the project reads. The first byte chooses the loader, the rest is the
// document, so one corpus (and one minute of fuzzing) covers both:
//   - even: a KEP-5732 PodGroup (scheduling.k8s.io/v1alpha2), alone or in a List with its Pods (or
//     one Pod as its template), as `place --job` and `simulate` read it (parse_job);
//   - odd: coscheduling PodGroups (scheduling.x-k8s.io/v1alpha1), one object or a List, handed to
//     the extender as its watch does (the whole list, then each one as an event), followed by a
//     filter call for a pod of the first group, so the gang's size is read from spec.minMember.
#include <nlohmann/json.hpp>
#include <vector>

#include "scheduler/extender/extender_service.h"
#include "scheduler/input/cluster_loader.h"
#include "scheduler/input/job_loader.h"
#include "tests/fuzz/fuzz_target.h"
#include "tests/scheduler/extender/extender_cluster.h"

namespace {

using nlohmann::json;

void coscheduling_pod_groups(const json& doc) {
  using namespace hypertopo;
  static const hypertopo::testing::ExtenderCluster cluster = hypertopo::testing::make_cluster(1, 2, 4);
  std::vector<json> groups;
  if (doc.is_object() && doc.contains("items") && doc["items"].is_array()) {
    groups.assign(doc["items"].begin(), doc["items"].end());
  } else {
    groups.push_back(doc);
  }
  scheduler::ExtenderService service(scheduler::ExtenderOptions{});
  (void)service.set_hypernodes(cluster.hypernodes);
  (void)service.set_nodes(cluster.nodes);
  service.set_pod_groups(groups);
  for (const auto& group : groups) service.upsert_pod_group(group);
  // A pod labelled with the first group's name, in its namespace: the gang planner looks it up.
  const json meta = groups.front().is_object() ? groups.front().value("metadata", json()) : json();
  std::string name = "g", ns = "default";
  if (meta.is_object()) {
    if (auto it = meta.find("name"); it != meta.end() && it->is_string()) name = it->get<std::string>();
    if (auto it = meta.find("namespace"); it != meta.end() && it->is_string()) ns = it->get<std::string>();
  }
  json pod = hypertopo::testing::pod_object("w-0", "u0", "8", {}, {{"scheduling.x-k8s.io/pod-group", name}});
  pod["metadata"]["namespace"] = ns;
  (void)service.filter(json{{"pod", pod}, {"nodenames", cluster.node_names}});
  for (const auto& group : groups) service.remove_pod_group(group);
}

}  // namespace

HT_FUZZ_TARGET(pod_group) {
  using namespace hypertopo::scheduler;
  if (input.empty()) return;
  const bool coscheduling = (static_cast<unsigned char>(input.front()) & 1) != 0;
  auto doc = read_document(hypertopo::fuzzing::scratch_file("pod_group.yaml", input.substr(1)));
  if (!doc) return;
  if (coscheduling) {
    coscheduling_pod_groups(*doc);
    return;
  }
  static const std::vector<NodeSpec> no_nodes;
  (void)parse_job(*doc, no_nodes);
}
