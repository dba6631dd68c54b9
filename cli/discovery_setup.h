// cli/discovery_setup.h: what every discovering subcommand (discover, apply) does before and after
// run_discovery(): builder config, GUID map, source specs and deps in; build-report warnings out.
//
//   discoverers::PipelineInput input;
//   if (auto ok = prepare_pipeline_input({.sources = specs, .config_file = cfg}, nodes, input); !ok) ...
//   auto run = discoverers::run_discovery(registry, input);
//   print_report_warnings(run->tree.report);
#pragma once

#include <expected>
#include <memory>
#include <string>
#include <vector>

#include "discoverers/pipeline/discovery_pipeline.h"
#include "discoverers/ufm/ufm_source.h"
#include "errors/error.h"
#include "k8s/client/kube_client.h"
#include "k8s/objects/node_list.h"
#include "topology/tree.h"

namespace hypertopo::cli {

struct DiscoverySetup {
  std::vector<std::string> sources;       // "KIND[:ARG]"
  std::string config_file;                // builder config YAML, optional
  std::string guid_map_file;              // '<guid> <node name>' lines, optional
  discoverers::ufm::UfmSourceConfig ufm;  // --ufm-* flags: every ufm: source's config
};

// Fills `input` (builder options, sources, deps); `nodes` (may be null) must outlive the run.
std::expected<void, Error> prepare_pipeline_input(const DiscoverySetup& setup, const k8s::NodeList* nodes,
                                                  discoverers::PipelineInput& input);

// The node this process speaks for: `flag` (--node-name), else $NODE_NAME (the agent's downward-API
// variable), else the hostname; it must be a Kubernetes object name.
std::expected<std::string, Error> resolve_node_name(const std::string& flag);

// A client for a workstation command (apply, status), the cluster found as kubectl finds it
// (cli/cluster_flags.h: --kubeconfig, $KUBECONFIG, ~/.kube/config, the service account), paced at
// 20 requests/s with bursts of 40. Errors name where the config came from.
std::expected<std::unique_ptr<k8s::KubeClient>, Error> connect_with_kubeconfig(const std::string& kubeconfig,
                                                                               const std::string& context);

// One "hypertopo: warning: ..." line on stderr per kind of exclusion in the report.
void print_report_warnings(const topology::BuildReport& report);

}  // namespace hypertopo::cli
