// discoverers/labels/labels_source.h: the "labels:CONFIG" source.
//
// Builds HyperNodes from the labels of the nodes given with --nodes, with the levels named in CONFIG
// (Volcano's label-source config, its networkTopologyTypes map, or a Kueue Topology object). The
// config is read and checked when the source is created, so a bad file fails before any discovery.
//
// Agent config: `config: {file: PATH}`, the levels inline, `config: {networkTopologyTypes: {...}}`
// (Volcano's label source config; parsed and checked when the config is loaded, never written to a
// file), or a cloud provider's own labels, `config: {preset: eks}` (label_presets.h). It reads the
// Node list, so the agent runs it on every rebuild.
//
//   registry.add(labels_source_entry());
//   // hypertopo discover --source labels:labels.yaml --nodes nodes.json
//   // hypertopo discover --source labels:preset=eks --nodes eks-nodes.json
#pragma once

#include <optional>
#include <string>

#include "discoverers/labels/label_config.h"
#include "discoverers/registry/discoverer.h"

namespace hypertopo::discoverers {

struct LabelsSourceConfig : SourceSettings {
  std::string file;                                  // a config file, read when the source is created
  std::optional<labels::LabelConfig> inline_levels;  // networkTopologyTypes given in the config itself
  std::string origin;                                // where the inline levels came from, for messages
  std::string preset;                                // a label_presets() name (inline_levels holds it)
  std::string describe() const override {
    return !preset.empty() ? "preset=" + preset : inline_levels ? "inline" : file;
  }
};
SourceEntry labels_source_entry();

std::expected<std::unique_ptr<Discoverer>, Error> make_labels_source(const SourceSpec& spec,
                                                                     const DiscoveryDeps& deps);

}  // namespace hypertopo::discoverers
