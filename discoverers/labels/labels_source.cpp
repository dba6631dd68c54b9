#include "discoverers/labels/labels_source.h"

#include "discoverers/labels/label_config.h"
#include "discoverers/labels/label_presets.h"
#include "discoverers/labels/label_tree.h"
#include "discoverers/registry/source_config.h"

namespace hypertopo::discoverers {
namespace {

class LabelsSource : public Discoverer {
 public:
  LabelsSource(labels::LabelConfig config, const k8s::NodeList& nodes, std::string config_path)
      : config_(std::move(config)), nodes_(nodes), config_path_(std::move(config_path)) {}
  std::string name() const override { return "labels"; }

  std::expected<Discovery, Error> discover() override {
    auto tree = labels::build_label_tree(config_, nodes_);
    if (!tree) return std::unexpected(tree.error().context("while building HyperNodes from " + config_path_));
    Discovery d;
    d.warnings = config_.notes;
    auto counted = [](std::size_t n, const char* noun) {
      return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
    };
    d.notes.push_back(config_path_ + ": " + counted(config_.types.size(), "topology type") + ", " +
                      counted(tree->size(), "HyperNode") + " from the labels of " +
                      counted(nodes_.items.size(), "node"));
    d.tree = std::move(*tree);
    return d;
  }

 private:
  labels::LabelConfig config_;
  const k8s::NodeList& nodes_;
  std::string config_path_;
};

}  // namespace

std::expected<std::unique_ptr<Discoverer>, Error> make_labels_source(const SourceSpec& spec,
                                                                     const DiscoveryDeps& deps) {
  const auto& c = settings_of<LabelsSourceConfig>(spec);
  const std::string origin = c.inline_levels ? c.origin : c.file;
  if (deps.nodes == nullptr) {
    return fail(ErrorCode::kInvalidArgument, "labels:" + origin +
                                                 " reads node labels: give the nodes with --nodes nodes.json "
                                                 "(kubectl get nodes -o json)");
  }
  if (c.inline_levels) return std::make_unique<LabelsSource>(*c.inline_levels, *deps.nodes, origin);
  auto config = labels::load_label_config(c.file);
  if (!config) return std::unexpected(config.error());
  return std::make_unique<LabelsSource>(std::move(*config), *deps.nodes, c.file);
}

SourceEntry labels_source_entry() {
  const std::vector<ConfigKey> keys = {
      {"file", "a label config file: Volcano's networkTopologyTypes or a Kueue Topology"},
      {"networkTopologyTypes", "the levels inline, as in Volcano's label source config"},
      {"preset", "a cloud provider's topology labels: eks, eks-4-layers, gke, coreweave, topograph"}};
  return {.kind = "labels",
          .summary =
              "node labels as levels: labels:CONFIG (Volcano networkTopologyTypes or a Kueue Topology) or "
              "labels:preset=eks|eks-4-layers|gke|coreweave|topograph (needs --nodes)",
          .role = SourceRole::kLeader,
          .cache = CachePolicy::kEveryRebuild,
          .keys = keys,
          .parse_config = [keys](const YAML::Node& node,
                                 const ConfigAt& at) -> std::expected<SettingsPtr, Error> {
            ConfigBlock block(node, at);
            if (auto ok = block.only(keys); !ok) return std::unexpected(ok.error());
            auto c = std::make_shared<LabelsSourceConfig>();
            auto file = block.text("file");
            if (!file) return std::unexpected(file.error());
            auto preset = block.text("preset");
            if (!preset) return std::unexpected(preset.error());
            const bool inline_levels = block.has("networkTopologyTypes");
            if (*preset) {
              if (*file || inline_levels)
                return at.bad("preset", "give one of file, networkTopologyTypes or preset");
              auto levels = labels::preset_label_config(**preset);
              if (!levels) return at.bad("preset", levels.error().message());
              c->preset = **preset;
              c->origin = "preset " + **preset;
              c->inline_levels = std::move(*levels);
              return c;
            }
            if (*file && inline_levels)
              return at.bad("networkTopologyTypes", "give either file or networkTopologyTypes, not both");
            if (!*file && !inline_levels)
              return at.bad("",
                            "a labels source needs file (a config file) or networkTopologyTypes (inline)");
            if (*file) {
              c->file = **file;
              return c;
            }
            c->origin = at.file + ": " + at.path;
            auto levels = labels::parse_label_types(block.child("networkTopologyTypes"), at.file,
                                                    at.key("networkTopologyTypes"));
            if (!levels) return std::unexpected(levels.error());
            c->inline_levels = std::move(*levels);
            return c;
          },
          .parse_arg = [](const std::string& arg) -> std::expected<SettingsPtr, Error> {
            // labels:preset=NAME names a provider's labels; anything else is a config file.
            if (arg.starts_with("preset=")) {
              const std::string name = arg.substr(7);
              auto levels = labels::preset_label_config(name);
              if (!levels) return std::unexpected(levels.error().context("--source labels:" + arg));
              auto c = std::make_shared<LabelsSourceConfig>();
              c->preset = name;
              c->origin = "preset " + name;
              c->inline_levels = std::move(*levels);
              return c;
            }
            return single_arg_parser(
                "a config file: --source labels:CONFIG (Volcano's networkTopologyTypes or a Kueue Topology) "
                "or a provider's labels: --source labels:preset=eks|eks-4-layers|gke|coreweave|topograph",
                &LabelsSourceConfig::file)(arg);
          },
          .factory = make_labels_source};
}

}  // namespace hypertopo::discoverers
