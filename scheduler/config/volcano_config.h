// scheduler/config/volcano_config.h: Volcano's scheduler ConfigMap, read as-is, plus our options.
//
// Accepts the `volcano-scheduler.conf` text (actions + tiers of plugins), a ConfigMap carrying it
// under data."volcano-scheduler.conf", or JSON of either. Only the `network-topology-aware` plugin's
// arguments matter here; they get Volcano's defaults and clamping: weight 1, binpack cpu/memory 1,
// extra resources from `hypernode.binpack.resources` (comma list) each weighted by
// `hypernode.binpack.resources.<name>` (default 1), normal-pod.enable true, normal-pod.fading 0.8;
// negative integers become 1 and a negative fading becomes 0.8. A `hypertopo:` block adds our own
// options (profile: volcano|kueue, limits, fabricHealth: prefer-healthy|exclude|ignore, how gangs
// treat domains whose HyperNode is FabricDegraded).
//
//   auto cfg = load_scheduler_config_file("volcano-scheduler.conf");
//   PlacementEngine engine(index, cfg->binpack);
#pragma once

#include <cstdint>
#include <expected>
#include <filesystem>
#include <string>

#include "errors/error.h"
#include "scheduler/placement/fabric_health_mode.h"
#include "scheduler/placement/volcano_score.h"

namespace hypertopo::scheduler {

struct SchedulerConfig {
  BinpackWeights binpack;
  bool plugin_enabled = false;      // the network-topology-aware plugin appears in a tier
  std::string profile = "volcano";  // volcano | kueue: the semantics jobs without a hint get
  std::int64_t max_pods_per_job = 1'000'000;
  FabricHealthMode fabric_health = FabricHealthMode::kPreferHealthy;  // hypertopo.fabricHealth
};

std::expected<SchedulerConfig, Error> parse_scheduler_config(const std::string& text,
                                                             const std::string& origin);
std::expected<SchedulerConfig, Error> load_scheduler_config_file(const std::filesystem::path& path);

}  // namespace hypertopo::scheduler
