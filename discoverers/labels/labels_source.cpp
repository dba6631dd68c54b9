#include "discoverers/labels/labels_source.h"

#include "discoverers/labels/label_config.h"
#include "discoverers/labels/label_tree.h"

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
    d.notes = config_.notes;
    d.notes.insert(d.notes.begin(), config_path_ + ": " + std::to_string(config_.types.size()) +
                                        " topology type(s), " + std::to_string(tree->size()) +
                                        " HyperNodes from the labels of " +
                                        std::to_string(nodes_.items.size()) + " nodes");
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
  if (spec.arg.empty()) {
    return fail(
        ErrorCode::kInvalidArgument,
        "needs a config file: --source labels:CONFIG (Volcano's networkTopologyTypes or a Kueue Topology)");
  }
  if (deps.nodes == nullptr) {
    return fail(ErrorCode::kInvalidArgument, "labels:" + spec.arg +
                                                 " reads node labels: give the nodes with --nodes nodes.json "
                                                 "(kubectl get nodes -o json)");
  }
  auto config = labels::load_label_config(spec.arg);
  if (!config) return std::unexpected(config.error());
  return std::make_unique<LabelsSource>(std::move(*config), *deps.nodes, spec.arg);
}

}  // namespace hypertopo::discoverers
