#include "scheduler/placement/label_levels.h"

#include <algorithm>

namespace hypertopo::scheduler {

void resolve_label_level(const TopologyIndex& index, std::string& level) {
  if (level.empty() || index.resolve_tier(level)) return;
  if (auto tier = index.tier_of_label(level)) {
    level = std::to_string(*tier);
    return;
  }
  // A label every node carries whose values no tier's domains share (kubernetes.io/hostname): the
  // node itself, tier 0, as a pod affinity on that topology key means (LeaderWorkerSet's
  // exclusive-topology: kubernetes-sigs/lws pkg/webhooks/pod_webhook.go SetExclusiveAffinities).
  const auto& nodes = index.nodes();
  const bool every_node = !nodes.empty() && std::all_of(nodes.begin(), nodes.end(), [&](const IndexNode& n) {
    return n.spec.labels.contains(level);
  });
  if (every_node) level = "0";
}

void resolve_label_levels(const TopologyIndex& index, JobRequest& job) {
  for (auto& ps : job.pod_sets) resolve_label_level(index, ps.level);
  resolve_label_level(index, job.level);
  resolve_label_level(index, job.job_required);
  resolve_label_level(index, job.job_preferred);
  for (auto& sg : job.sub_groups) {
    const std::string written = sg.required;
    resolve_label_level(index, sg.required);
    if (sg.required != written && sg.required_as_written.empty()) sg.required_as_written = written;
    resolve_label_level(index, sg.preferred);
  }
}

}  // namespace hypertopo::scheduler
