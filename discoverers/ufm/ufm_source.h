// discoverers/ufm/ufm_source.h: the `ufm` discovery source.
//
//   ufm:https://HOST[:PORT][#credentials=DIR&ca=FILE&insecure=true&timeout=SECONDS&max-bytes=N&rpp=N]
//
// Fetches resources/ports and resources/links from UFM Enterprise and hands the TreeBuilder the
// real multi-tier fabric (leaf, spine, core from the cables, never one catch-all spine). Hosts are
// mapped by GUID first (NodeReports, the node annotation or a GUID map, applied by the pipeline),
// then by the port's `system_name`, then by the rdma-ndd description. Front ends pass their
// --ufm-* flags through with_ufm_settings() (ufm_client.h), so the agent config takes the same
// string.
//
//   auto found = discover_ufm(options);        // std::expected<Discovery, Error>
//   registry.add("ufm", "...", make_ufm_source);
#pragma once

#include "discoverers/registry/discoverer.h"
#include "discoverers/ufm/ufm_client.h"

namespace hypertopo::discoverers::ufm {

// One full fetch and graph build. Notes carry counts and skipped records.
std::expected<Discovery, Error> discover_ufm(const UfmClientOptions& options, UfmFetchStats* stats = nullptr);

std::expected<std::unique_ptr<Discoverer>, Error> make_ufm_source(const SourceSpec& spec,
                                                                  const DiscoveryDeps& deps);

}  // namespace hypertopo::discoverers::ufm
