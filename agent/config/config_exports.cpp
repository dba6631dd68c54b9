// The agent config's `exports` section: node labels (and their Topograph-compatible form) that the
// leader writes besides the HyperNodes.
#include <yaml-cpp/yaml.h>

#include "agent/config/config_sections.h"
#include "io/config_reader.h"
#include "topology/label_rules.h"

namespace hypertopo::agent::sections {
namespace {

// A label key prefix such as "hypertopo.io/tier-": the tier name is appended to make the key.
bool is_label_key_prefix(const std::string& prefix) {
  return !prefix.empty() && !topology::label_key_error(prefix + "1");
}

}  // namespace

// exports.nodeLabels: enabled, keyPrefix, topographCompatible.
std::expected<void, Error> read_exports(const io::ConfigReader& r, const YAML::Node& root, AgentConfig& c) {
  if (const YAML::Node n = root["exports"]) {
    if (auto ok = r.mapping(n, "exports", {"nodeLabels"}); !ok) return ok;
    if (const YAML::Node labels = n.IsMap() ? n["nodeLabels"] : YAML::Node()) {
      const std::string at = "exports.nodeLabels";
      if (auto ok = r.mapping(labels, at, {"enabled", "keyPrefix", "topographCompatible"}); !ok) return ok;
      if (labels.IsMap() && labels["enabled"]) {
        auto b = r.boolean(labels["enabled"], at + ".enabled");
        if (!b) return std::unexpected(b.error());
        c.export_node_labels = *b;
      }
      if (labels.IsMap() && labels["keyPrefix"]) {
        auto p = r.text(labels["keyPrefix"], at + ".keyPrefix");
        if (!p) return std::unexpected(p.error());
        if (!is_label_key_prefix(*p))
          return r.bad(at + ".keyPrefix", "'" + *p + "' cannot start a label key (e.g. hypertopo.io/tier-)");
        c.node_label_prefix = *p;
      }
      if (labels.IsMap() && labels["topographCompatible"]) {
        auto b = r.boolean(labels["topographCompatible"], at + ".topographCompatible");
        if (!b) return std::unexpected(b.error());
        c.topograph_labels = *b;
      }
    }
  }
  return {};
}

}  // namespace hypertopo::agent::sections
