// scheduler/config/volcano_config.h: Volcano's scheduler ConfigMap, read as-is, plus our options.
//
// Accepts the `volcano-scheduler.conf` text (actions + tiers of plugins), a ConfigMap carrying it
// under data."volcano-scheduler.conf", or JSON of either. Only the `network-topology-aware` plugin's
// arguments matter here; they get Volcano's defaults and clamping: weight 1, binpack cpu/memory 1,
// extra resources from `hypernode.binpack.resources` (comma list) each weighted by
// `hypernode.binpack.resources.<name>` (default 1), normal-pod.enable true, normal-pod.fading 0.8;
// negative integers become 1 and a negative fading becomes 0.8. Values are typed as Volcano's
// yaml.v2 types them and read as its framework.Arguments reads them: a weight is an integer only
// ("5" and 2.5 keep the default), a bool is a bool or a string strconv.ParseBool takes ("1", "t",
// "TRUE"), a fading a number; anything else keeps the default with a warning, as Volcano logs and
// goes on. Whatever Volcano ignores (an unknown key, a weight for an unlisted resource) is a
// warning naming the key; such a file still loads. A `hypertopo:` block adds our own
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
#include <vector>

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
  // What Volcano would read differently from how it looks, or ignore without a word: one line each,
  // naming the file's key (`tiers[1].plugins[0].arguments.weight: ...`). The file still loads.
  std::vector<std::string> warnings;
};

std::expected<SchedulerConfig, Error> parse_scheduler_config(const std::string& text,
                                                             const std::string& origin);
// The file as --scheduler-config and the extender's config name it: the conf, a ConfigMap, or (read
// by io::parse_objects, as every file of objects is) several YAML documents or a List, of which the one
// ConfigMap with data."volcano-scheduler.conf" is read and every other object named in a warning.
std::expected<SchedulerConfig, Error> load_scheduler_config_file(const std::filesystem::path& path);

}  // namespace hypertopo::scheduler
