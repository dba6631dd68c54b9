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
//   registry.add(ufm_source_entry());
#pragma once

#include <cstdint>
#include <string>

#include "discoverers/registry/discoverer.h"
#include "discoverers/ufm/ufm_client.h"

namespace hypertopo::discoverers::ufm {

struct UfmSourceConfig : SourceSettings {
  std::string endpoint;          // https://host[:port][/prefix]
  std::string credentials_dir;   // a mounted Secret: `token`, or `username` and `password`
  std::string secret_name;       // credentials.secretRef: read through the API on every run
  std::string secret_namespace;  // "" : the agent's own namespace
  std::string ca_file;           // PEM bundle; "" : the system store
  bool insecure = false;         // insecureSkipVerify
  double timeout_seconds = 30;
  std::uint64_t max_bytes = 512ull * 1024 * 1024;
  std::size_t page_size = 0;  // 0: unpaged
  std::string describe() const override { return endpoint; }
};

// One full fetch and graph build. Notes carry counts; warnings the skipped records.
std::expected<Discovery, Error> discover_ufm(const UfmClientOptions& options, UfmFetchStats* stats = nullptr);

std::expected<std::unique_ptr<Discoverer>, Error> make_ufm_source(const SourceSpec& spec,
                                                                  const DiscoveryDeps& deps);
SourceEntry ufm_source_entry();

}  // namespace hypertopo::discoverers::ufm
