#include "discoverers/registry/discoverer.h"

#include <algorithm>

#include "io/config_reader.h"
#include "net/url.h"

namespace hypertopo::discoverers {

std::expected<SourceSpec, Error> SourceSpec::parse(const std::string& text) {
  if (text.empty()) return fail(ErrorCode::kInvalidArgument, "empty --source; expected KIND[:ARG]");
  auto colon = text.find(':');
  SourceSpec spec;
  spec.kind = text.substr(0, colon);
  if (colon != std::string::npos) spec.arg = text.substr(colon + 1);
  if (spec.kind.empty()) {
    return fail(ErrorCode::kInvalidArgument, "--source '" + text + "' has no kind; expected KIND[:ARG]");
  }
  return spec;
}

std::string SourceSpec::to_string() const {
  // A password somebody wrote into a URL argument never reaches a message or a log line.
  const std::string what = net::redact_url_password(settings ? settings->describe() : arg);
  return what.empty() ? kind : kind + ":" + what;
}

std::unexpected<Error> ConfigAt::bad(const std::string& name, const std::string& what) const {
  return io::config_error(file, key(name), what);
}

namespace {
struct NoSettings : SourceSettings {
  std::string describe() const override { return ""; }
};
}  // namespace

SourceEntry entry_without_config(std::string kind, std::string summary, DiscovererFactory factory) {
  SourceEntry e;
  e.kind = std::move(kind);
  e.summary = std::move(summary);
  e.parse_config = [](const YAML::Node&, const ConfigAt&) -> std::expected<SettingsPtr, Error> {
    return std::make_shared<NoSettings>();
  };
  e.parse_arg = [kind = e.kind](const std::string& arg) -> std::expected<SettingsPtr, Error> {
    if (!arg.empty()) return fail(ErrorCode::kInvalidArgument, kind + " takes no argument");
    return std::make_shared<NoSettings>();
  };
  e.factory = std::move(factory);
  return e;
}

const char* to_string(SourceRole role) { return role == SourceRole::kNodeProbe ? "node probe" : "leader"; }

std::expected<void, Error> DiscovererRegistry::add(SourceEntry entry) {
  if (entry.kind.empty()) return fail(ErrorCode::kInvalidArgument, "a discoverer needs a name");
  if (entries_.contains(entry.kind)) {
    return fail(ErrorCode::kInvalidArgument, "discoverer '" + entry.kind + "' is registered twice");
  }
  const bool runnable =
      entry.role == SourceRole::kLeader ? static_cast<bool>(entry.factory) : static_cast<bool>(entry.probe);
  if (!runnable || !entry.parse_config || !entry.parse_arg) {
    return fail(ErrorCode::kInvalidArgument,
                "discoverer '" + entry.kind + "' lacks a parser or the function its role needs");
  }
  std::string kind = entry.kind;
  entries_.emplace(std::move(kind), std::move(entry));
  return {};
}

const SourceEntry* DiscovererRegistry::entry(const std::string& kind) const {
  auto it = entries_.find(kind);
  return it == entries_.end() ? nullptr : &it->second;
}

std::expected<const SourceEntry*, Error> DiscovererRegistry::find(const std::string& kind) const {
  if (const SourceEntry* e = entry(kind)) return e;
  std::string known;
  for (const auto& k : kinds()) known += (known.empty() ? "" : ", ") + k;
  return fail(ErrorCode::kInvalidArgument, "unknown source kind '" + kind + "' (known: " + known + ")");
}

std::expected<SourceSpec, Error> DiscovererRegistry::resolve(SourceSpec spec) const {
  auto found = find(spec.kind);
  if (!found) return std::unexpected(found.error());
  if (!spec.settings) {
    auto settings = (*found)->parse_arg(spec.arg);
    if (!settings) return std::unexpected(settings.error().context("source " + spec.to_string()));
    spec.settings = std::move(*settings);
  }
  return spec;
}

std::expected<std::unique_ptr<Discoverer>, Error> DiscovererRegistry::create(
    const SourceSpec& spec, const DiscoveryDeps& deps) const {
  // The role first: a source in the wrong place is that, whatever its argument says.
  auto found = find(spec.kind);
  if (!found) return std::unexpected(found.error());
  const SourceEntry& e = **found;
  if (e.role != SourceRole::kLeader) {
    return fail(ErrorCode::kInvalidArgument, "'" + spec.kind +
                                                 "' is a node probe: it runs in every agent pod or in "
                                                 "`hypertopo probe`, not as a fabric source");
  }
  auto resolved = resolve(spec);
  if (!resolved) return std::unexpected(resolved.error());
  auto made = e.factory(*resolved, deps);
  if (!made) return std::unexpected(made.error().context("source " + resolved->to_string()));
  return made;
}

std::expected<void, Error> DiscovererRegistry::probe(const SourceSpec& spec, const NodeProbeDeps& deps,
                                                     topology::NodeReport& report) const {
  auto found = find(spec.kind);
  if (!found) return std::unexpected(found.error());
  const SourceEntry& e = **found;
  if (e.role != SourceRole::kNodeProbe) {
    std::string probes;
    for (const auto& k : kinds(SourceRole::kNodeProbe)) probes += (probes.empty() ? "" : ", ") + k;
    return fail(ErrorCode::kInvalidArgument,
                "'" + spec.kind + "' is not a node probe (node probes: " + probes + ")");
  }
  auto resolved = resolve(spec);
  if (!resolved) return std::unexpected(resolved.error());
  return e.probe(*resolved->settings, deps, report);
}

std::vector<std::string> DiscovererRegistry::kinds() const {
  std::vector<std::string> out;
  for (const auto& [k, _] : entries_) out.push_back(k);
  return out;
}

std::vector<std::string> DiscovererRegistry::kinds(SourceRole role) const {
  std::vector<std::string> out;
  for (const auto& [k, e] : entries_) {
    if (e.role == role) out.push_back(k);
  }
  return out;
}

std::string DiscovererRegistry::describe(SourceRole role) const {
  std::string out;
  for (const auto& [k, e] : entries_) {
    if (e.role == role) out += "  " + k + ": " + e.summary + "\n";
  }
  return out;
}

}  // namespace hypertopo::discoverers
