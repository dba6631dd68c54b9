// discoverers/ibnetdiscover/ibnetdiscover_source.h: the "ibnetdiscover:PATH" source.
//
// Reads a saved `ibnetdiscover` capture (or stdin with "-") into a FabricGraph.
//
//   registry.add("ibnetdiscover", "...", make_ibnetdiscover_source);
#pragma once

#include "discoverers/registry/discoverer.h"

namespace hypertopo::discoverers {

std::expected<std::unique_ptr<Discoverer>, Error> make_ibnetdiscover_source(const SourceSpec& spec,
                                                                            const DiscoveryDeps& deps);

}  // namespace hypertopo::discoverers
