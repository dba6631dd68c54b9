#include "scheduler/config/volcano_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <optional>
#include <sstream>

#include "io/bounded_file.h"
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

// Volcano reads plugin arguments leniently (a number may arrive as a string); a value that is no
// number at all is an error naming the key.
std::expected<double, Error> number(const YAML::Node& v, const std::string& key, const std::string& origin) {
  try {
    return v.as<double>();
  } catch (const YAML::Exception&) {
    return fail(ErrorCode::kInvalidArgument, origin + ": " + std::string(kPlugin) + " argument " + key +
                                                 " must be a number, got '" + v.as<std::string>("") + "'");
  }
}

std::expected<int, Error> clamped_int(const YAML::Node& args, const std::string& key,
                                      const std::string& origin) {
  if (!args[key]) return 1;
  auto v = number(args[key], key, origin);
  if (!v) return std::unexpected(v.error());
  int value = static_cast<int>(*v);
  return value < 0 ? 1 : value;
}

}  // namespace

std::expected<SchedulerConfig, Error> parse_scheduler_config(const std::string& text,
                                                             const std::string& origin) {
  auto loaded = io::load_yaml(text, origin);
  if (!loaded) return std::unexpected(loaded.error());
  YAML::Node doc = *loaded;
  // A ConfigMap: the scheduler conf sits under data."volcano-scheduler.conf".
  if (doc.IsMap() && doc["data"] && doc["data"].IsMap()) {
    auto conf = doc["data"]["volcano-scheduler.conf"];
    if (!conf)
      return fail(ErrorCode::kInvalidArgument, origin + ": ConfigMap has no data.volcano-scheduler.conf");
    auto inner = parse_scheduler_config(conf.as<std::string>(), origin + " data.volcano-scheduler.conf");
    return inner;
  }
  SchedulerConfig cfg;
  if (!doc.IsMap()) return fail(ErrorCode::kParse, origin + ": expected a mapping with 'tiers'");
  // Volcano's SchedulerConfiguration (pkg/scheduler/conf/scheduler_conf.go): actions, tiers,
  // configurations, metrics; plus our `hypertopo:` block. Anything else is a typo that would
  // silently change nothing.
  auto unknown_key = [&](const YAML::Node& map, std::initializer_list<const char*> known,
                         const std::string& where) -> std::optional<Error> {
    for (const auto& kv : map) {
      const std::string key = kv.first.as<std::string>("");
      if (std::none_of(known.begin(), known.end(), [&](const char* k) { return key == k; })) {
        std::string list;
        for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
        return Error(ErrorCode::kInvalidArgument,
                     origin + ": unknown key '" + where + key + "' (known: " + list + ")");
      }
    }
    return std::nullopt;
  };
  if (auto bad = unknown_key(doc, {"actions", "tiers", "configurations", "metrics", "hypertopo"}, ""))
    return std::unexpected(*bad);
  if (auto own = doc["hypertopo"]; own && own.IsMap()) {
    if (auto bad = unknown_key(own, {"profile", "maxPodsPerJob", "fabricHealth"}, "hypertopo."))
      return std::unexpected(*bad);
  }
  try {
    if (auto tiers = doc["tiers"]; tiers && tiers.IsSequence()) {
      for (const auto& tier : tiers) {
        if (!tier["plugins"] || !tier["plugins"].IsSequence()) continue;
        for (const auto& plugin : tier["plugins"]) {
          if (plugin["name"].as<std::string>("") != kPlugin) continue;
          cfg.plugin_enabled = true;
          YAML::Node args = plugin["arguments"];
          if (!args || !args.IsMap()) continue;
          auto w = clamped_int(args, "weight", origin);
          if (!w) return std::unexpected(w.error());
          cfg.binpack.weight = *w;
          for (const char* r : {"cpu", "memory"}) {
            auto v = clamped_int(args, std::string("hypernode.binpack.") + r, origin);
            if (!v) return std::unexpected(v.error());
            cfg.binpack.resources[r] = *v;
          }
          if (auto list = args["hypernode.binpack.resources"]) {
            std::stringstream ss(list.as<std::string>(""));
            std::string item;
            while (std::getline(ss, item, ',')) {
              item = trim(item);
              if (item.empty() || item == "cpu" || item == "memory") continue;
              auto v = clamped_int(args, "hypernode.binpack.resources." + item, origin);
              if (!v) return std::unexpected(v.error());
              cfg.binpack.resources[item] = *v;
            }
          }
          if (auto enable = args["hypernode.binpack.normal-pod.enable"]) {
            try {
              cfg.binpack.normal_pod_enable = enable.as<bool>();
            } catch (const YAML::Exception&) {
              return fail(ErrorCode::kInvalidArgument,
                          origin + ": " + std::string(kPlugin) +
                              " argument hypernode.binpack.normal-pod.enable must be "
                              "true or false");
            }
          }
          if (auto fading = args["hypernode.binpack.normal-pod.fading"]) {
            auto v = number(fading, "hypernode.binpack.normal-pod.fading", origin);
            if (!v) return std::unexpected(v.error());
            cfg.binpack.fading = *v < 0 ? 0.8 : *v;
          }
        }
      }
    }
    if (auto own = doc["hypertopo"]; own && own.IsMap()) {
      if (own["profile"]) {
        cfg.profile = own["profile"].as<std::string>();
        if (cfg.profile != "volcano" && cfg.profile != "kueue") {
          return fail(ErrorCode::kInvalidArgument,
                      origin + ": hypertopo.profile must be volcano or kueue, got '" + cfg.profile + "'");
        }
      }
      if (own["fabricHealth"]) {
        const std::string mode = own["fabricHealth"].as<std::string>("");
        auto parsed = parse_fabric_health_mode(mode);
        if (!parsed) {
          return fail(ErrorCode::kInvalidArgument, origin + ": hypertopo.fabricHealth must be " +
                                                       kFabricHealthModes + ", got '" + mode + "'");
        }
        cfg.fabric_health = *parsed;
      }
      if (own["maxPodsPerJob"]) {
        cfg.max_pods_per_job = own["maxPodsPerJob"].as<std::int64_t>();
        if (cfg.max_pods_per_job <= 0) {
          return fail(ErrorCode::kInvalidArgument, origin + ": hypertopo.maxPodsPerJob must be positive");
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
