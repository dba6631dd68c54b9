// discoverers/ibnetdiscover/ibnetdiscover_source.h: the "ibnetdiscover:PATH" source.
//
// Reads a saved `ibnetdiscover` capture (or stdin with "-") into a FabricGraph. Agent config:
// `config: {file: PATH}`; a capture only changes when it is replaced, so the agent reads it at most
// once per interval.
//
//   registry.add(ibnetdiscover_source_entry());
#pragma once

#include <string>

#include "discoverers/registry/discoverer.h"

namespace hypertopo::discoverers {

struct IbnetdiscoverConfig : SourceSettings {
  std::string file;  // "-": stdin
  std::string describe() const override { return file; }
};

std::expected<std::unique_ptr<Discoverer>, Error> make_ibnetdiscover_source(const SourceSpec& spec,
                                                                            const DiscoveryDeps& deps);
SourceEntry ibnetdiscover_source_entry();

}  // namespace hypertopo::discoverers
