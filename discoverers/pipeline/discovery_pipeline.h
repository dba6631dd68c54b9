// discoverers/pipeline/discovery_pipeline.h: sources -> FabricGraph/Tree -> one merged, checked Tree.
//
// The one path every front end takes (`hypertopo discover`, `hypertopo apply`, the agent's leader
// loop): apply the node list (compute hosts, GUID annotations) and NodeReports (exact GUID -> node
// mapping) to the builder options, run each source, build its tree with the tier rule, merge the
// trees and check the invariants. A source that fails either ends the run (the CLI's choice) or is
// recorded and skipped (the agent's choice); a run with a failed source is `complete == false`, and
// callers must then never delete anything because of it.
//
//   DiscovererRegistry registry;
//   register_builtin_discoverers(registry);
//   PipelineInput in;
//   in.sources = {*SourceSpec::parse("ibnetdiscover:fabric.out")};
//   in.deps.nodes = &nodes;
//   auto run = run_discovery(registry, in);          // std::expected<PipelineResult, Error>
//   if (run && run->complete) reconcile(run->tree);
#pragma once

#include <chrono>
#include <expected>
#include <string>
#include <vector>

#include "discoverers/registry/discoverer.h"
#include "errors/error.h"
#include "k8s/objects/node_list.h"
#include "topology/node_report.h"
#include "topology/nvlink_merge.h"
#include "topology/tree.h"
#include "topology/tree_builder.h"

namespace hypertopo::discoverers {

// Node annotation a node's agent (or an admin) sets: comma-separated HCA port/node GUIDs.
inline constexpr const char* kNodeGuidAnnotation = "hypertopo.io/ib-port-guids";

struct PipelineInput {
  std::vector<SourceSpec> sources;
  topology::TreeBuilderOptions builder_options;
  DiscoveryDeps deps;  // deps.nodes and deps.reports, when set, also feed the builder options
  // true: the first failing source fails the run (CLI). false: record it and go on (agent).
  bool stop_on_source_error = true;
  // NVLink domains from the NodeReports' clique ids and the nvidia.com/gpu.clique node label, merged
  // into the fabric tree (topology/nvlink_merge.h); nvlink.enabled = false leaves them out.
  topology::NvlinkMergeOptions nvlink;
};

struct SourceOutcome {
  std::string source;  // "kind:arg"
  bool ok = false;
  std::string error;  // when !ok
  std::chrono::duration<double> elapsed{};
  std::size_t domains = 0;  // domains this source contributed
  std::vector<std::string> notes;
  std::vector<std::string> warnings;  // Discovery::warnings: what the admin should act on
};

struct PipelineResult {
  topology::Tree tree;  // merged and invariant-checked; report holds every exclusion and warning
  std::vector<SourceOutcome> outcomes;
  bool complete = true;            // every source succeeded
  std::size_t nvlink_domains = 0;  // NVLink domains merged into the tree
  // Every NodeReport the run used: deps.reports plus those `reports:` sources read.
  std::vector<topology::NodeReport> reports;
};

// Adds what the node list and the NodeReports know to `options`: known_nodes (the compute hosts),
// GUIDs from the kNodeGuidAnnotation annotation, and every HCA node/port GUID a NodeReport lists.
// A GUID claimed by two nodes is left unmapped and reported in `warnings`.
void apply_node_facts(topology::TreeBuilderOptions& options, const k8s::NodeList* nodes,
                      const std::vector<topology::NodeReport>* reports, std::vector<std::string>* warnings);

// What each node's NodeReport says of its own InfiniBand ports (sysfs rate, state, phys_state) as
// the host end of the link that port is on, for the health pass: a host whose own link trained low
// or went down is known even from a source that gives no port facts (a saved ibnetdiscover text has
// only the rate, and may be older than the reports). Fills only what the source does not say of
// that end; a port GUID two reports claim is left alone. Returns the link ends filled.
std::size_t apply_host_port_facts(topology::FabricGraph& graph,
                                  const std::vector<topology::NodeReport>& reports);

// Which node is in which NVLink domain: a NodeReport's clique id, else the node's
// nvidia.com/gpu.clique label. A report whose GPUs disagree, a malformed label, or a label that
// contradicts the node's report (the report wins: it is what NVML says now) become warnings.
topology::NvlinkMembership collect_nvlink_membership(const k8s::NodeList* nodes,
                                                     const std::vector<topology::NodeReport>* reports);

// Sources run in the order given, except that `reports:` sources run first: the NodeReports they
// read feed the node facts and every other source's DiscoveryDeps::reports (for example `roce`).
std::expected<PipelineResult, Error> run_discovery(const DiscovererRegistry& registry,
                                                   const PipelineInput& input);

}  // namespace hypertopo::discoverers
