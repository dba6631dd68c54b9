// discoverers/netq/netq_source.h: the `netq-file` source (and the `netq` REST source beside it).
//
// `netq-file:DIR` reads a saved NetQ answer: DIR/topologyGraph.json (NetQ's fetch-topology answer:
// the switches, the hosts NetQ learnt by LLDP, and the cables between them) and, when present,
// DIR/computeNodes.json (NMX's compute-nodes answer: each node's NVLink domain). The switch tree
// comes from the cables through the TreeBuilder's tier rule; the NVLink domains reach the pipeline
// as NodeReports whose nvlink facts come from NMX (source "nmx"), merged like NVML's cliques.
//
// Agent YAML, a `kind: netq-file` entry: `config: {dir: /var/lib/netq-capture, maxBytes: 256Mi}`.
// A saved answer only changes when it is replaced, so the agent reads it once per interval.
//
// `netq:https://HOST[:PORT]` asks a NetQ server the same questions over HTTPS, as NVIDIA topograph's
// netq provider does (pkg/providers/netq): `POST api/netq/auth/v1/login` with the username and
// password (JSON) gives an access token and the premises; for each premises whose configuration
// key was viewed, `GET api/netq/auth/v1/select/opid/{opid}` (Bearer) gives that premises' token and
// `POST api/netq/telemetry/v1/object/topologygraph/fetch-topology?timestamp=0` (Bearer) its graph;
// the premises' graphs merge. `GET nmx/v1/compute-nodes` (Basic auth) gives the NVLink domains; it
// is best effort, as in topograph: a failure there is a warning and the switch tree still comes.
// Credentials: `username` and `password` in a directory (a mounted Secret, --netq-credentials DIR
// on the command line is `credentialsDir`) or credentials.secretRef read through the API on every
// run. TLS verifies the server against caFile (or the system store) unless insecureSkipVerify;
// plain http:// is refused unless insecureSkipVerify too. 401/403 end the run at once; 5xx, 429 and
// transport failures are retried with capped backoff inside one time budget (`timeout`); an answer
// larger than maxBytes is an error.
//   agent YAML: {kind: netq, config: {endpoint: https://netq:443, credentials: {secretRef: {name:
//   netq-credentials}}, caFile: /etc/netq-ca/ca.crt, timeout: 30s, maxBytes: 256Mi}}
//
//   registry.add(netq_file_source_entry());
//   registry.add(netq_source_entry());
//   // hypertopo discover --source netq-file:fixtures/netq
//   // hypertopo discover --source netq:https://netq.example:443,credentials=/etc/netq
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "discoverers/registry/discoverer.h"
#include "discoverers/registry/rest_endpoint.h"
#include "io/bounded_file.h"
#include "timing/clock.h"

namespace hypertopo::discoverers::netq {

inline constexpr const char* kTopologyGraphFile = "topologyGraph.json";
inline constexpr const char* kComputeNodesFile = "computeNodes.json";

struct NetqFileConfig : SourceSettings {
  std::string dir;
  std::uint64_t max_bytes = io::kDataFileLimit;  // per file
  std::string describe() const override { return dir; }
};

// Reads DIR's answers into a graph (and NMX's NVLink facts as reports).
std::expected<Discovery, Error> discover_netq_dir(const NetqFileConfig& config);

SourceEntry netq_file_source_entry();

inline constexpr std::uint64_t kNetqDefaultMaxBytes = io::kDataFileLimit;

// The endpoint's settings (discoverers/registry/rest_endpoint.h); NetQ's credentials are `username`
// and `password`.
struct NetqConfig : SourceSettings, RestEndpoint {
  NetqConfig() { max_bytes = kNetqDefaultMaxBytes; }
  std::string describe() const override { return endpoint; }
};

// Everything a run needs besides the config: the Secret's data when the config names one, a clock
// for the backoff between retries (null: the system clock), and where progress lines go.
struct NetqRunDeps {
  std::map<std::string, std::string> credentials;
  std::string credentials_origin;
  std::shared_ptr<timing::Clock> clock;
  std::function<void(const std::string&)> log;
};

std::expected<Discovery, Error> discover_netq(const NetqConfig& config, const NetqRunDeps& deps);

SourceEntry netq_source_entry();

}  // namespace hypertopo::discoverers::netq
