#include "scheduler/config/volcano_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

#include "io/bounded_file.h"
#include "io/config_reader.h"
#include "io/yaml_reader.h"

namespace hypertopo::scheduler {
namespace {

constexpr const char* kPlugin = "network-topology-aware";

std::string trim(std::string s) {
  auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

// Volcano reads plugin arguments leniently (a number may arrive as a string, a negative weight
// becomes 1); a value that is no number at all is an error naming the key.
std::expected<double, Error> number(const io::ConfigReader& r, const YAML::Node& v, const std::string& path) {
  double value = 0;
  if (!v.IsScalar() || !YAML::convert<double>::decode(v, value) || std::isnan(value))
    return r.bad(path,
                 "must be a number, got '" + (v.IsScalar() ? v.Scalar() : std::string("a collection")) + "'");
  return value;
}

std::expected<int, Error> clamped_int(const io::ConfigReader& r, const YAML::Node& args,
                                      const std::string& key, const std::string& path) {
  if (!args[key]) return 1;
  auto v = number(r, args[key], io::key_path(path, key));
  if (!v) return std::unexpected(v.error());
  // Volcano's weights are ints; anything beyond is as heavy (or as light) as an int can say.
  const int value = static_cast<int>(std::clamp(*v, static_cast<double>(std::numeric_limits<int>::min()),
                                                static_cast<double>(std::numeric_limits<int>::max())));
  return value < 0 ? 1 : value;
}

// The arguments of one network-topology-aware plugin entry (at `path`).
std::expected<void, Error> read_plugin_arguments(const io::ConfigReader& r, const YAML::Node& args,
                                                 const std::string& path, SchedulerConfig& cfg) {
  auto w = clamped_int(r, args, "weight", path);
  if (!w) return std::unexpected(w.error());
  cfg.binpack.weight = *w;
  for (const char* resource : {"cpu", "memory"}) {
    auto v = clamped_int(r, args, std::string("hypernode.binpack.") + resource, path);
    if (!v) return std::unexpected(v.error());
    cfg.binpack.resources[resource] = *v;
  }
  if (auto list = args["hypernode.binpack.resources"]) {
    auto text = r.text(list, io::key_path(path, "hypernode.binpack.resources"));
    if (!text) return std::unexpected(text.error());
    std::stringstream ss(*text);
    std::string item;
    while (std::getline(ss, item, ',')) {
      item = trim(item);
      if (item.empty() || item == "cpu" || item == "memory") continue;
      auto v = clamped_int(r, args, "hypernode.binpack.resources." + item, path);
      if (!v) return std::unexpected(v.error());
      cfg.binpack.resources[item] = *v;
    }
  }
  if (auto enable = args["hypernode.binpack.normal-pod.enable"]) {
    auto on = r.boolean(enable, io::key_path(path, "hypernode.binpack.normal-pod.enable"));
    if (!on) return std::unexpected(on.error());
    cfg.binpack.normal_pod_enable = *on;
  }
  if (auto fading = args["hypernode.binpack.normal-pod.fading"]) {
    auto v = number(r, fading, io::key_path(path, "hypernode.binpack.normal-pod.fading"));
    if (!v) return std::unexpected(v.error());
    cfg.binpack.fading = *v < 0 ? 0.8 : *v;
  }
  return {};
}

// Our own `hypertopo:` block.
std::expected<void, Error> read_own_block(const io::ConfigReader& r, const YAML::Node& own,
                                          SchedulerConfig& cfg) {
  if (auto ok = r.mapping(own, "hypertopo", {"profile", "maxPodsPerJob", "fabricHealth"}); !ok) return ok;
  if (!own.IsMap()) return {};
  if (own["profile"]) {
    auto profile = r.text(own["profile"], "hypertopo.profile");
    if (!profile) return std::unexpected(profile.error());
    if (*profile != "volcano" && *profile != "kueue")
      return r.bad("hypertopo.profile", "must be volcano or kueue, got '" + *profile + "'");
    cfg.profile = *profile;
  }
  if (own["fabricHealth"]) {
    auto mode = r.text(own["fabricHealth"], "hypertopo.fabricHealth");
    if (!mode) return std::unexpected(mode.error());
    auto parsed = parse_fabric_health_mode(*mode);
    if (!parsed)
      return r.bad("hypertopo.fabricHealth",
                   "must be " + std::string(kFabricHealthModes) + ", got '" + *mode + "'");
    cfg.fabric_health = *parsed;
  }
  if (own["maxPodsPerJob"]) {
    auto max = r.integer(own["maxPodsPerJob"], "hypertopo.maxPodsPerJob", 1, 1'000'000);
    if (!max) return std::unexpected(max.error());
    cfg.max_pods_per_job = *max;
  }
  return {};
}

}  // namespace

std::expected<SchedulerConfig, Error> parse_scheduler_config(const std::string& text,
                                                             const std::string& origin) {
  auto loaded = io::load_yaml(text, origin);
  if (!loaded) return std::unexpected(loaded.error());
  YAML::Node doc = *loaded;
  const io::ConfigReader r(origin);
  // A ConfigMap: the scheduler conf sits under data."volcano-scheduler.conf".
  if (doc.IsMap() && doc["data"] && doc["data"].IsMap()) {
    auto conf = doc["data"]["volcano-scheduler.conf"];
    if (!conf) return r.bad("data", "the ConfigMap has no volcano-scheduler.conf");
    auto inner = r.text(conf, "data.volcano-scheduler.conf");
    if (!inner) return std::unexpected(inner.error());
    return parse_scheduler_config(*inner, origin + " data.volcano-scheduler.conf");
  }
  SchedulerConfig cfg;
  if (!doc.IsMap()) return fail(ErrorCode::kParse, origin + ": expected a mapping with 'tiers'");
  // Volcano's SchedulerConfiguration (pkg/scheduler/conf/scheduler_conf.go): actions, tiers,
  // configurations, metrics; plus our `hypertopo:` block. Anything else is a typo that would
  // silently change nothing.
  if (auto ok = r.only_keys(doc, {"actions", "tiers", "configurations", "metrics", "hypertopo"}, ""); !ok)
    return std::unexpected(ok.error());
  if (doc["hypertopo"]) {
    if (auto ok = read_own_block(r, doc["hypertopo"], cfg); !ok) return std::unexpected(ok.error());
  }
  try {
    if (auto tiers = doc["tiers"]; tiers && tiers.IsSequence()) {
      for (std::size_t t = 0; t < tiers.size(); ++t) {
        const YAML::Node plugins = tiers[t]["plugins"];
        if (!plugins || !plugins.IsSequence()) continue;
        for (std::size_t p = 0; p < plugins.size(); ++p) {
          if (plugins[p]["name"].as<std::string>("") != kPlugin) continue;
          cfg.plugin_enabled = true;
          YAML::Node args = plugins[p]["arguments"];
          if (!args || !args.IsMap()) continue;
          const std::string path = io::indexed(io::indexed("tiers", t) + ".plugins", p) + ".arguments";
          if (auto ok = read_plugin_arguments(r, args, path, cfg); !ok) return std::unexpected(ok.error());
        }
      }
    }
  } catch (const YAML::Exception& e) {
    return fail(ErrorCode::kParse, origin + ": " + e.msg);
  }
  return cfg;
}

std::expected<SchedulerConfig, Error> load_scheduler_config_file(const std::filesystem::path& path) {
  auto text = io::read_bounded_file(path, io::kConfigFileLimit);
  if (!text) return std::unexpected(text.error());
  return parse_scheduler_config(*text, path.string());
}

}  // namespace hypertopo::scheduler
