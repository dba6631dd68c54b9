// discoverers/ufm/ufm_source.h: the `ufm` discovery source.
//
// Fetches resources/ports and resources/links from UFM Enterprise and hands the TreeBuilder the
// real multi-tier fabric (leaf, spine, core from the cables, never one catch-all spine). Hosts are
// mapped by GUID first (NodeReports, the node annotation or a GUID map, applied by the pipeline),
// then by the port's `system_name`, then by the rdma-ndd description.
//
// One config struct, UfmSourceConfig, filled by every front end:
//   - the CLI: `--source ufm:https://HOST[:PORT]` with --ufm-credentials DIR, --ufm-ca FILE,
//     --ufm-insecure, --ufm-timeout, --ufm-max-bytes, --ufm-page-size (cli/ufm_flags.h);
//   - the agent's YAML, `config:` of a `kind: ufm` entry:
//       {endpoint: https://ufm:443, credentials: {secretRef: {name: ufm-credentials}}, caFile:
//       /etc/ufm-ca/ca.crt}
//     or credentialsDir: /etc/ufm (a mounted Secret); insecureSkipVerify, timeout, maxBytes, pageSize;
//   - Volcano's networkTopologyDiscovery entry {source: ufm, credentials: {secretRef}, config: {endpoint,
//     insecureSkipVerify}}.
// A secretRef is read through the API (DiscoveryDeps::read_secret) on every run, a credentials
// directory is read on every run too, so a rotated password is picked up by the next run. The CA is
// verified unless insecureSkipVerify is set (a warning says so on every run).
//
//   auto found = discover_ufm(options);        // std::expected<Discovery, Error>
//   UfmRunState state;                         // a caller that runs again keeps one
//   auto again = discover_ufm(options, nullptr, &state);
//   registry.add(ufm_source_entry());
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "discoverers/registry/discoverer.h"
#include "discoverers/ufm/ufm_client.h"

namespace hypertopo::discoverers::ufm {

struct UfmSourceConfig : SourceSettings, RestEndpoint {
  UfmSourceConfig() { max_bytes = kUfmDefaultMaxBytes; }
  std::size_t page_size = 0;  // 0: unpaged
  std::string describe() const override { return endpoint; }
};

// What one run leaves for the next: the parser, its buffers grown to the largest page read, and the
// fabric's arrays. A 100 MiB answer read with a parser that has read one before costs a fraction of
// a first reading (the first touch of the buffers' memory is most of it; bench/ufm). One run at a
// time.
struct UfmRunState {
  UfmResponseParser parser;
  UfmFabric fabric;
};

// One full fetch and graph build. Notes carry counts; warnings the skipped records. `reuse`, when
// given, is read with and refilled (its earlier contents are dropped first).
std::expected<Discovery, Error> discover_ufm(const UfmClientOptions& options, UfmFetchStats* stats = nullptr,
                                             UfmRunState* reuse = nullptr);

// The run state the sources made by one registry entry share: the agent makes a new source for every
// run, so what a run leaves for the next lives with the entry (not in a global), as long as the
// registry. A source that finds it in use (two UFM sources running at once) reads with its own.
struct UfmSharedRunState {
  std::mutex mutex;
  UfmRunState state;
};

std::expected<std::unique_ptr<Discoverer>, Error> make_ufm_source(
    const SourceSpec& spec, const DiscoveryDeps& deps, std::shared_ptr<UfmSharedRunState> shared = nullptr);
SourceEntry ufm_source_entry();

}  // namespace hypertopo::discoverers::ufm
