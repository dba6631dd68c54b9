#include "discoverers/registry/discoverer.h"

#include <algorithm>

namespace hypertopo::discoverers {

std::string redact_url_password(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (;;) {
    const auto scheme = text.find("://");
    if (scheme == std::string_view::npos) break;
    const std::size_t authority = scheme + 3;
    const std::size_t end = std::min(text.find_first_of("/?#", authority), text.size());
    const std::size_t at = text.substr(0, end).rfind('@');
    const std::size_t colon = text.substr(0, end).find(':', authority);
    out.append(text.substr(0, authority));
    if (at != std::string_view::npos && at >= authority && colon != std::string_view::npos && colon < at) {
      out.append(text.substr(authority, colon + 1 - authority)).append("REDACTED");
      text.remove_prefix(at);
    } else {
      text.remove_prefix(authority);
    }
  }
  out.append(text);
  return out;
}

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

std::expected<void, Error> DiscovererRegistry::add(const std::string& kind, std::string summary,
                                                   DiscovererFactory factory) {
  if (kind.empty()) return fail(ErrorCode::kInvalidArgument, "a discoverer needs a name");
  if (entries_.contains(kind)) {
    return fail(ErrorCode::kInvalidArgument, "discoverer '" + kind + "' is registered twice");
  }
  entries_.emplace(kind, Entry{std::move(summary), std::move(factory)});
  return {};
}

std::expected<std::unique_ptr<Discoverer>, Error> DiscovererRegistry::create(
    const SourceSpec& spec, const DiscoveryDeps& deps) const {
  auto it = entries_.find(spec.kind);
  if (it == entries_.end()) {
    std::string known;
    for (const auto& k : kinds()) known += (known.empty() ? "" : ", ") + k;
    return fail(ErrorCode::kInvalidArgument,
                "unknown source kind '" + spec.kind + "' (known: " + known + ")");
  }
  auto made = it->second.factory(spec, deps);
  if (!made) return std::unexpected(made.error().context("source " + spec.to_string()));
  return made;
}

std::vector<std::string> DiscovererRegistry::kinds() const {
  std::vector<std::string> out;
  for (const auto& [k, _] : entries_) out.push_back(k);
  return out;
}

std::string DiscovererRegistry::describe() const {
  std::string out;
  for (const auto& [k, e] : entries_) out += "  " + k + ": " + e.summary + "\n";
  return out;
}

}  // namespace hypertopo::discoverers
