// The shared set-up of the discovering subcommands (see discovery_setup.h).
#include "cli/discovery_setup.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "cli/cluster_flags.h"
#include "cli/ufm_flags.h"
#include "discoverers/ib-fabric/simulated_fabric.h"
#include "k8s/client/kube_config.h"
#include "text/terminal_safe.h"
#include "topology/builder_config.h"
#include "topology/tree.h"

namespace hypertopo::cli {

std::expected<void, Error> prepare_pipeline_input(const DiscoverySetup& setup, const k8s::NodeList* nodes,
                                                  discoverers::PipelineInput& input) {
  if (!setup.config_file.empty()) {
    auto loaded = topology::load_builder_config(setup.config_file);
    if (!loaded) return std::unexpected(loaded.error());
    input.builder_options = std::move(*loaded);
  }
  if (!setup.guid_map_file.empty()) {
    if (auto ok = topology::load_guid_map(setup.guid_map_file, input.builder_options); !ok) {
      return std::unexpected(ok.error());
    }
  }
  auto& deps = input.deps;
  deps.stdin_stream = &std::cin;
  deps.nodes = nodes;
  // No work dir: a live walk from the command line records nothing (a fixed name in a shared /tmp
  // would let any local user block or read the walk); the agent gives its own private work dir.
  deps.log = [](const std::string& line) { std::cerr << "hypertopo: " << line << "\n"; };
  // Only the hypertopo binary itself can re-run as the simulated-fabric walker.
  std::error_code ec;
  if (std::filesystem::read_symlink("/proc/self/exe", ec).filename() == "hypertopo") {
    deps.ib_walker = discoverers::ib_fabric::hypertopo_walker_command();
  }
  for (const auto& text : setup.sources) {
    auto spec = discoverers::SourceSpec::parse(text);
    if (!spec) return std::unexpected(spec.error());
    input.sources.push_back(std::move(*spec));
  }
  return apply_ufm_flags(input.sources, setup.ufm);
}

void print_report_warnings(const topology::BuildReport& r) {
  // Endpoint and host names come from the fabric: spelled out before the terminal sees them.
  auto warn = [](const std::string& s) {
    std::cerr << "hypertopo: warning: " << text::terminal_safe(s) << "\n";
  };
  if (!r.unmapped_endpoints.empty()) {
    std::string list;
    const std::size_t shown = std::min<std::size_t>(r.unmapped_endpoints.size(), 10);
    for (std::size_t i = 0; i < shown; ++i) list += (i ? ", " : "") + r.unmapped_endpoints[i].guid;
    if (shown < r.unmapped_endpoints.size()) {
      list += ", … (+" + std::to_string(r.unmapped_endpoints.size() - shown) + " more; -o tree lists all)";
    }
    warn(std::to_string(r.unmapped_endpoints.size()) +
         " unmapped endpoint(s) (no host in the node description, no GUID mapping): " + list);
  }
  if (!r.excluded_hosts.empty()) {
    warn(std::to_string(r.excluded_hosts.size()) +
         " host(s) excluded: not in the --nodes list (first: " + r.excluded_hosts.front() + ")");
  }
  if (r.aggregation_nodes) warn(std::to_string(r.aggregation_nodes) + " SHARP aggregation node(s) excluded");
  if (!r.excluded_endpoints.empty()) {
    warn(std::to_string(r.excluded_endpoints.size()) + " storage/management endpoint(s) excluded by pattern");
  }
  if (!r.excluded_switches.empty()) {
    warn(std::to_string(r.excluded_switches.size()) + " switch(es) excluded by name pattern");
  }
  if (!r.unattached_hosts.empty()) {
    warn(std::to_string(r.unattached_hosts.size()) +
         " host(s) have no link to a switch and are in no domain");
  }
  for (const auto& w : r.warnings) warn(w);
}

std::expected<std::string, Error> resolve_node_name(const std::string& flag) {
  std::string name = flag;
  if (name.empty()) {
    if (const char* env = std::getenv("NODE_NAME"); env != nullptr) name = env;
  }
  if (name.empty()) {
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) != 0) {
      return fail(ErrorCode::kNotFound, "no --node-name, no $NODE_NAME and the hostname is unreadable");
    }
    name = host;
  }
  if (!topology::is_dns1123_subdomain(name)) {
    return fail(
        ErrorCode::kInvalidArgument,
        "node name '" + name + "' is not a Kubernetes object name (DNS-1123 subdomain); pass --node-name");
  }
  return name;
}

std::expected<std::unique_ptr<k8s::KubeClient>, Error> connect_with_kubeconfig(const std::string& kubeconfig,
                                                                               const std::string& context) {
  auto cluster = resolve_cluster({.kubeconfig = kubeconfig, .context = context});
  if (!cluster) return std::unexpected(cluster.error());
  return k8s::KubeClient::create(cluster->config, {.qps = 20, .burst = 40});
}

}  // namespace hypertopo::cli
