#include "scheduler/placement/label_levels.h"

namespace hypertopo::scheduler {

void resolve_label_level(const TopologyIndex& index, std::string& level) {
  if (level.empty() || index.resolve_tier(level)) return;
  if (auto tier = index.tier_of_label(level)) level = std::to_string(*tier);
}

void resolve_label_levels(const TopologyIndex& index, JobRequest& job) {
  for (auto& ps : job.pod_sets) resolve_label_level(index, ps.level);
  resolve_label_level(index, job.level);
  resolve_label_level(index, job.job_required);
  resolve_label_level(index, job.job_preferred);
  for (auto& sg : job.sub_groups) {
    resolve_label_level(index, sg.required);
    resolve_label_level(index, sg.preferred);
  }
}

}  // namespace hypertopo::scheduler
