// discoverers/labels/labels_source.h: the "labels:CONFIG" source.
//
// Builds HyperNodes from the labels of the nodes given with --nodes, with the levels named in CONFIG
// (Volcano's label-source config, its networkTopologyTypes map, or a Kueue Topology object). The
// config is read and checked when the source is created, so a bad file fails before any discovery.
//
//   registry.add("labels", "...", make_labels_source);
//   // hypertopo discover --source labels:labels.yaml --nodes nodes.json
#pragma once

#include "discoverers/registry/discoverer.h"

namespace hypertopo::discoverers {

std::expected<std::unique_ptr<Discoverer>, Error> make_labels_source(const SourceSpec& spec,
                                                                     const DiscoveryDeps& deps);

}  // namespace hypertopo::discoverers
