#include "scheduler/config/volcano_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>

#include "io/bounded_file.h"
#include "io/config_reader.h"
#include "io/object_reader.h"
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

// The Go value Volcano's scheduler holds for one plugin argument. Volcano unmarshals
// volcano-scheduler.conf with gopkg.in/yaml.v2 (pkg/scheduler/util.go UnmarshalSchedulerConf) into
// map[string]interface{}, so a scalar becomes what yaml.v2's resolve() (resolve.go) makes of it: a
// quoted scalar is a string; a plain one is a bool (y/yes/on/true... in any of its listed cases), a
// null, an int (strconv.ParseInt base 0 after dropping '_': 0x.., 0o.., 0b.., 0-prefixed octal), a
// uint64 beyond int64, a float, a timestamp, or else a string.
struct GoValue {
  enum class Kind { kString, kInt, kUint, kFloat, kBool, kNull, kOther };
  Kind kind = Kind::kOther;
  std::int64_t i = 0;
  double f = 0;
  bool b = false;
  std::string text;
};

const char* kind_name(GoValue::Kind k) {
  switch (k) {
    case GoValue::Kind::kString:
      return "a string";
    case GoValue::Kind::kInt:
      return "an integer";
    case GoValue::Kind::kUint:
      return "an integer beyond int64";
    case GoValue::Kind::kFloat:
      return "a float";
    case GoValue::Kind::kBool:
      return "a bool";
    case GoValue::Kind::kNull:
      return "null";
    case GoValue::Kind::kOther:
      return "neither a number, a bool nor a string";
  }
  return "";
}

// strconv.ParseInt(s, 0, 64) / ParseUint(s, 0, 64): an optional sign (ParseInt only), then 0x/0o/0b
// or a leading 0 (octal) or decimal digits, the whole string.
std::optional<std::int64_t> go_parse_int(std::string_view s, bool allow_sign, bool& out_of_range) {
  out_of_range = false;
  bool negative = false;
  if (allow_sign && !s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  int base = 10;
  if (s.size() > 1 && s[0] == '0') {
    const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(s[1])));
    if (c == 'x' || c == 'o' || c == 'b') {
      base = c == 'x' ? 16 : c == 'o' ? 8 : 2;
      s.remove_prefix(2);
    } else {
      base = 8;
      s.remove_prefix(1);
    }
  }
  if (s.empty()) return std::nullopt;
  unsigned long long value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value, base);
  if (ptr != s.data() + s.size()) return std::nullopt;
  if (ec == std::errc::result_out_of_range) {
    out_of_range = true;
    return std::nullopt;
  }
  if (ec != std::errc()) return std::nullopt;
  const unsigned long long limit =
      static_cast<unsigned long long>(std::numeric_limits<std::int64_t>::max()) + (negative ? 1 : 0);
  if (allow_sign && value > limit) {
    out_of_range = true;
    return std::nullopt;
  }
  if (!allow_sign) return static_cast<std::int64_t>(value);  // only tested for success
  return negative ? static_cast<std::int64_t>(0 - value) : static_cast<std::int64_t>(value);
}

bool digits(std::string_view s, std::size_t& at) {
  const std::size_t start = at;
  while (at < s.size() && std::isdigit(static_cast<unsigned char>(s[at]))) ++at;
  return at > start;
}

// yaml.v2's yamlStyleFloat, ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$, matched by hand
// (a scalar may be long; std::regex recurses per character).
bool yaml_style_float(std::string_view s) {
  std::size_t at = 0;
  if (at < s.size() && (s[at] == '+' || s[at] == '-')) ++at;
  if (at < s.size() && s[at] == '.') {
    ++at;
    if (!digits(s, at)) return false;
  } else {
    if (!digits(s, at)) return false;
    if (at < s.size() && s[at] == '.') {
      ++at;
      digits(s, at);
    }
  }
  if (at < s.size() && (s[at] == 'e' || s[at] == 'E')) {
    ++at;
    if (at < s.size() && (s[at] == '+' || s[at] == '-')) ++at;
    if (!digits(s, at)) return false;
  }
  return at == s.size();
}

// What yaml.v2 tries as a timestamp (four digits, '-', then a date time.Parse may take).
bool looks_like_date(std::string_view s) {
  std::size_t at = 0;
  if (!digits(s, at) || at != 4 || at >= s.size() || s[at] != '-') return false;
  ++at;
  const std::size_t month = at;
  if (!digits(s, at) || at - month > 2 || at >= s.size() || s[at] != '-') return false;
  ++at;
  const std::size_t day = at;
  if (!digits(s, at) || at - day > 2) return false;
  return at == s.size() || s[at] == 'T' || s[at] == 't' || s[at] == ' ';
}

GoValue go_value(const YAML::Node& v) {
  GoValue out;
  if (!v || v.IsNull()) {
    out.kind = GoValue::Kind::kNull;
    return out;
  }
  if (!v.IsScalar()) return out;
  out.text = v.Scalar();
  // yaml-cpp marks a quoted scalar with the non-specific tag "!" and a plain one with "?".
  if (v.Tag() != "?") {
    out.kind = GoValue::Kind::kString;
    return out;
  }
  const std::string& in = out.text;
  static const std::map<std::string, bool> kBools = {
      {"y", true},      {"Y", true},    {"yes", true},  {"Yes", true}, {"YES", true},    {"true", true},
      {"True", true},   {"TRUE", true}, {"on", true},   {"On", true},  {"ON", true},     {"n", false},
      {"N", false},     {"no", false},  {"No", false},  {"NO", false}, {"false", false}, {"False", false},
      {"FALSE", false}, {"off", false}, {"Off", false}, {"OFF", false}};
  if (auto it = kBools.find(in); it != kBools.end()) {
    out.kind = GoValue::Kind::kBool;
    out.b = it->second;
    return out;
  }
  for (const char* s : {".nan", ".NaN", ".NAN"}) {
    if (in == s) {
      out.kind = GoValue::Kind::kFloat;
      out.f = std::numeric_limits<double>::quiet_NaN();
      return out;
    }
  }
  for (const char* s : {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF"}) {
    if (in == s) {
      out.kind = GoValue::Kind::kFloat;
      out.f = (in[0] == '-' ? -1 : 1) * std::numeric_limits<double>::infinity();
      return out;
    }
  }
  out.kind = GoValue::Kind::kString;
  if (in.empty()) return out;
  const char first = in[0];
  auto as_float = [&](const std::string& text) {
    if (!yaml_style_float(text)) return false;
    out.kind = GoValue::Kind::kFloat;
    out.f = std::strtod(text.c_str(), nullptr);
    return true;
  };
  if (first == '.') {
    as_float(in);
    return out;
  }
  if (!std::isdigit(static_cast<unsigned char>(first)) && first != '+' && first != '-') return out;
  // A YYYY-M-D... timestamp is neither a number nor a string to Go.
  if (looks_like_date(in)) {
    out.kind = GoValue::Kind::kOther;
    return out;
  }
  std::string plain;
  for (char c : in)
    if (c != '_') plain += c;
  bool range = false;
  if (auto i = go_parse_int(plain, true, range)) {
    out.kind = GoValue::Kind::kInt;
    out.i = *i;
    return out;
  }
  if (go_parse_int(plain, false, range)) {
    out.kind = GoValue::Kind::kUint;
    return out;
  }
  as_float(plain);
  return out;
}

// framework.Arguments.GetInt: only a Go int is taken; anything else keeps the default (logged).
void get_int(const YAML::Node& args, const std::string& key, const std::string& path, std::int64_t& value,
             std::vector<std::string>& warnings) {
  if (!args[key]) return;
  const GoValue v = go_value(args[key]);
  if (v.kind != GoValue::Kind::kInt) {
    warnings.push_back(io::key_path(path, key) + ": Volcano takes integers only, got " + kind_name(v.kind) +
                       (v.text.empty() ? std::string() : " '" + v.text + "'") + "; keeping " +
                       std::to_string(value));
    return;
  }
  value = v.i;
}

// Arguments.GetFloat64: a float or an int.
void get_float(const YAML::Node& args, const std::string& key, const std::string& path, double& value,
               std::vector<std::string>& warnings) {
  if (!args[key]) return;
  const GoValue v = go_value(args[key]);
  if (v.kind == GoValue::Kind::kInt) {
    value = static_cast<double>(v.i);
  } else if (v.kind == GoValue::Kind::kFloat && std::isfinite(v.f)) {
    value = v.f;
  } else {
    // A NaN or infinite fading would turn every score into NaN; Volcano would take it.
    std::ostringstream keep;
    keep << value;
    warnings.push_back(
        io::key_path(path, key) + ": expected a number, got " +
        (v.kind == GoValue::Kind::kFloat ? std::string("a non-finite float") : kind_name(v.kind)) +
        (v.text.empty() ? std::string() : " '" + v.text + "'") + "; keeping " + keep.str());
  }
}

// Arguments.GetBool: a bool, or a string strconv.ParseBool accepts.
void get_bool(const YAML::Node& args, const std::string& key, const std::string& path, bool& value,
              std::vector<std::string>& warnings) {
  if (!args[key]) return;
  const GoValue v = go_value(args[key]);
  if (v.kind == GoValue::Kind::kBool) {
    value = v.b;
    return;
  }
  if (v.kind == GoValue::Kind::kString) {
    static const std::map<std::string, bool> kParseBool = {
        {"1", true},  {"t", true},  {"T", true},  {"TRUE", true},   {"true", true},   {"True", true},
        {"0", false}, {"f", false}, {"F", false}, {"FALSE", false}, {"false", false}, {"False", false}};
    if (auto it = kParseBool.find(v.text); it != kParseBool.end()) {
      value = it->second;
      return;
    }
  }
  warnings.push_back(io::key_path(path, key) + ": expected a bool, got " + kind_name(v.kind) +
                     (v.text.empty() ? std::string() : " '" + v.text + "'") + "; keeping " +
                     (value ? "true" : "false"));
}

constexpr const char* kWeight = "weight";
constexpr const char* kCpu = "hypernode.binpack.cpu";
constexpr const char* kMemory = "hypernode.binpack.memory";
constexpr const char* kResources = "hypernode.binpack.resources";
constexpr const char* kResourcePrefix = "hypernode.binpack.resources.";
constexpr const char* kNormalPodEnable = "hypernode.binpack.normal-pod.enable";
constexpr const char* kNormalPodFading = "hypernode.binpack.normal-pod.fading";
constexpr const char* kEvictMax = "hypernode.gradient.evict.max-hypernodes";

// The arguments of one network-topology-aware plugin entry (at `path`), read as Volcano's New()
// reads them (getPriorityWeight, getNormalPodConfig): a value of the wrong type keeps the default,
// a negative weight becomes 1, a negative fading 0.8. What Volcano would silently ignore is a
// warning naming the key.
void read_plugin_arguments(const YAML::Node& args, const std::string& path, SchedulerConfig& cfg) {
  BinpackWeights w;  // each plugin entry starts from Volcano's defaults
  auto& warnings = cfg.warnings;
  get_int(args, kWeight, path, w.weight, warnings);
  if (w.weight < 0) w.weight = 1;
  for (const char* key : {kCpu, kMemory}) {
    std::int64_t v = 1;
    get_int(args, key, path, v, warnings);
    w.resources[key == kCpu ? "cpu" : "memory"] = v < 0 ? 1 : v;
  }
  std::set<std::string> listed;
  if (auto list = args[kResources]) {
    const GoValue v = go_value(list);
    if (v.kind != GoValue::Kind::kString) {
      warnings.push_back(io::key_path(path, kResources) + ": Volcano takes a comma-separated string, got " +
                         kind_name(v.kind) + "; no extra resources are weighted");
    } else {
      std::stringstream ss(v.text);
      std::string item;
      while (std::getline(ss, item, ',')) {
        item = trim(item);
        if (item.empty() || !listed.insert(item).second) continue;
        // cpu and memory keep their own keys' weights (getBinPackWeight never looks them up here).
        if (item == "cpu" || item == "memory") {
          warnings.push_back(io::key_path(path, kResources) + ": " + item +
                             " is weighted by hypernode.binpack." + item + ", not by this list");
          continue;
        }
        std::int64_t rw = 1;
        get_int(args, kResourcePrefix + item, path, rw, warnings);
        w.resources[item] = rw < 0 ? 1 : rw;
      }
    }
  }
  get_bool(args, kNormalPodEnable, path, w.normal_pod_enable, warnings);
  get_float(args, kNormalPodFading, path, w.fading, warnings);
  if (w.fading < 0) w.fading = 0.8;
  if (args[kEvictMax]) {
    std::int64_t evict = 8;
    get_int(args, kEvictMax, path, evict, warnings);
  }
  // Keys Volcano reads nowhere.
  for (const auto& entry : args) {
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : std::string();
    if (key == kWeight || key == kCpu || key == kMemory || key == kResources || key == kNormalPodEnable ||
        key == kNormalPodFading || key == kEvictMax)
      continue;
    if (key.starts_with(kResourcePrefix)) {
      const std::string resource = key.substr(std::string(kResourcePrefix).size());
      if (resource == "cpu" || resource == "memory") {
        warnings.push_back(io::key_path(path, key) + ": ignored, as Volcano ignores it: " + resource +
                           " is weighted by hypernode.binpack." + resource);
        continue;
      }
      if (listed.contains(resource)) continue;
      warnings.push_back(io::key_path(path, key) + ": ignored, as Volcano ignores it: " + resource +
                         " is not listed in " + kResources);
      continue;
    }
    warnings.push_back(io::key_path(path, key) + ": ignored, as Volcano ignores it: not an argument of " +
                       kPlugin);
  }
  cfg.binpack = w;
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
  // configurations, metrics; plus our `hypertopo:` block. yaml.v2 drops any other key without a
  // word, so Volcano loads such a file: it loads here too, with a warning naming the key.
  for (const auto& entry : doc) {
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : std::string("?");
    static const std::set<std::string> kKnown = {"actions", "tiers", "configurations", "metrics",
                                                 "hypertopo"};
    if (!kKnown.contains(key))
      cfg.warnings.push_back(key +
                             ": ignored, as Volcano ignores it (known: actions, configurations, hypertopo, "
                             "metrics, tiers)");
  }
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
          read_plugin_arguments(args, path, cfg);
        }
      }
    }
  } catch (const YAML::Exception& e) {
    return fail(ErrorCode::kParse, origin + ": " + e.msg);
  }
  for (auto& w : cfg.warnings) w = origin + ": " + w;
  return cfg;
}

std::expected<SchedulerConfig, Error> load_scheduler_config_file(const std::filesystem::path& path) {
  auto text = io::read_bounded_file(path, io::kConfigFileLimit);
  if (!text) return std::unexpected(text.error());
  const std::string name = path.string();
  // The file is read as every file of objects is (io/object_reader.h): a bare conf or one ConfigMap
  // is one document, read as it always was; several documents or a List are searched for the one
  // ConfigMap that carries the conf, and what else they hold is named in a warning.
  auto file = io::parse_objects(*text, name);
  if (!file || (file->objects.size() <= 1 && (file->objects.empty() || !file->objects[0].origin.item)))
    return parse_scheduler_config(*text, name);
  const io::FileObject* found = nullptr;
  std::vector<std::string> warnings;
  for (const auto& o : file->objects) {
    if (o.kind != "ConfigMap") continue;
    const nlohmann::json& data = o.object->contains("data") ? (*o.object)["data"] : nlohmann::json();
    if (!data.is_object() || !data.contains("volcano-scheduler.conf")) {
      warnings.push_back(name + ": " + file->where(o.origin) +
                         ": a ConfigMap without data.volcano-scheduler.conf ignored");
      continue;
    }
    if (found) {
      return fail(ErrorCode::kInvalidArgument, name + ": " + file->where(o.origin) +
                                                   ": a second ConfigMap with volcano-scheduler.conf (the "
                                                   "first is " +
                                                   file->where(found->origin) + "); one is read");
    }
    found = &o;
  }
  if (!found) {
    return fail(ErrorCode::kInvalidArgument, name +
                                                 ": expected a volcano-scheduler.conf or a ConfigMap with "
                                                 "data.volcano-scheduler.conf; the file holds " +
                                                 file->kinds_summary());
  }
  const std::string origin = name + ": " + file->where(found->origin) + " data.volcano-scheduler.conf";
  const nlohmann::json& conf = (*found->object)["data"]["volcano-scheduler.conf"];
  if (!conf.is_string()) return fail(ErrorCode::kInvalidArgument, origin + ": must be a string");
  auto cfg = parse_scheduler_config(conf.get<std::string>(), origin);
  if (!cfg) return cfg;
  io::ObjectLedger ledger;
  ledger.record(*file, {"ConfigMap"});
  for (auto& w : ledger.warnings()) warnings.push_back(std::move(w));
  cfg->warnings.insert(cfg->warnings.end(), warnings.begin(), warnings.end());
  return cfg;
}

}  // namespace hypertopo::scheduler
