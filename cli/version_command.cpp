// `hypertopo version`: what `kubectl version` answers, for hypertopo. This binary's version, and,
// with a cluster (--kubeconfig, --context, or found as kubectl finds it), the API versions that
// cluster serves for HyperNodes (the CRD hypernodes.topology.volcano.sh) and for Volcano's own
// kinds when its CRDs are installed (batch.volcano.sh, scheduling.volcano.sh, ...), read from the
// API server's CustomResourceDefinitions: a HyperNode of v1alpha1 written to a cluster that no
// longer serves it is refused, so this is the first thing to check.
//
//   $ hypertopo version --kubeconfig ~/.kube/config
//   Client Version: hypertopo 0.1.0 (commit 1a2b3c4d5e6f, built 2026-12-07)
//   HyperNode API: topology.volcano.sh v1alpha1 (storage v1alpha1)
//   Volcano APIs: batch.volcano.sh v1alpha1, bus.volcano.sh v1alpha1, scheduling.volcano.sh v1beta1
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "cli/cluster_flags.h"
#include "cli/command_errors.h"
#include "cli/commands.h"
#include "cli/version_info.h"
#include "io/json_writer.h"
#include "k8s/client/kube_client.h"
#include "text/terminal_safe.h"

namespace hypertopo::cli {
namespace {

struct VersionOptions {
  ClusterFlags cluster;
  bool client_only = false;
  std::string output = "text";
};

const k8s::Resource kCustomResourceDefinitions{"apiextensions.k8s.io", "v1", "customresourcedefinitions",
                                               false};
constexpr const char* kHyperNodeGroup = "topology.volcano.sh";
constexpr const char* kVolcanoSuffix = ".volcano.sh";

// The served versions of one API group, read from its CRDs, and the HyperNode CRD's own.
struct ServerApis {
  bool hypernode_installed = false;
  std::vector<std::string> hypernode_served;
  std::string hypernode_storage;
  std::map<std::string, std::set<std::string>> volcano;  // group -> versions served by any of its CRDs
};

ServerApis read_server_apis(const std::vector<nlohmann::json>& crds) {
  ServerApis apis;
  for (const auto& crd : crds) {
    const auto& spec = crd.value("spec", nlohmann::json::object());
    const std::string group = spec.value("group", std::string());
    const std::string plural = spec.value("names", nlohmann::json::object()).value("plural", std::string());
    const bool hypernodes = group == kHyperNodeGroup && plural == "hypernodes";
    if (!hypernodes && !group.ends_with(kVolcanoSuffix)) continue;
    for (const auto& v : spec.value("versions", nlohmann::json::array())) {
      if (!v.is_object() || !v.value("served", false)) continue;
      const std::string name = v.value("name", std::string());
      if (hypernodes) {
        apis.hypernode_served.push_back(name);
        if (v.value("storage", false)) apis.hypernode_storage = name;
      } else {
        apis.volcano[group].insert(name);
      }
    }
    apis.hypernode_installed = apis.hypernode_installed || hypernodes;
  }
  return apis;
}

int run_version(const VersionOptions& opts) {
  nlohmann::json out = {
      {"clientVersion",
       {{"version", HT_VERSION}, {"gitCommit", HT_GIT_COMMIT}, {"buildDate", HT_BUILD_DATE}}}};
  std::optional<ServerApis> server;
  std::string source;
  if (!opts.client_only) {
    // As kubectl: the cluster it finds; with none found and none named, the client alone.
    const bool named = !opts.cluster.kubeconfig.empty() || !opts.cluster.context.empty();
    auto cluster = resolve_cluster(opts.cluster);
    if (!cluster && named) return report_error("version", cluster.error());
    if (cluster) {
      source = cluster->source;
      k8s::ClientOptions options{.qps = 50, .burst = 300};
      options.retry.max_attempts = 3;
      auto client = k8s::KubeClient::create(cluster->config, options);
      if (!client) return report_error("version", client.error().context(source));
      auto crds = (*client)->list(kCustomResourceDefinitions, "");
      if (!crds) {
        return report_error("version",
                            crds.error().error.context("listing CustomResourceDefinitions").context(source),
                            kExitRuntime);
      }
      server = read_server_apis(crds->items);
    }
  }
  if (server) {
    nlohmann::json volcano = nlohmann::json::object();
    for (const auto& [group, versions] : server->volcano) volcano[group] = versions;
    out["server"] = {{"source", source},
                     {"hyperNode",
                      {{"installed", server->hypernode_installed},
                       {"group", kHyperNodeGroup},
                       {"served", server->hypernode_served},
                       {"storage", server->hypernode_storage}}},
                     {"volcano", volcano}};
  }
  if (opts.output == "json") {
    std::cout << io::json_text(out, 2) << "\n";
    return kExitDone;
  }
  std::cout << "Client Version: hypertopo " << HT_VERSION << " (commit " << HT_GIT_COMMIT << ", built "
            << HT_BUILD_DATE << ")\n";
  if (!server) return kExitDone;
  std::cout << "HyperNode API: ";
  if (!server->hypernode_installed) {
    std::cout << "not installed (no CustomResourceDefinition hypernodes." << kHyperNodeGroup << ")\n";
  } else {
    std::cout << kHyperNodeGroup;
    for (const auto& v : server->hypernode_served) std::cout << " " << text::terminal_safe(v);
    if (server->hypernode_served.empty()) std::cout << " (no version served)";
    if (!server->hypernode_storage.empty())
      std::cout << " (storage " << text::terminal_safe(server->hypernode_storage) << ")";
    std::cout << "\n";
  }
  std::cout << "Volcano APIs: ";
  if (server->volcano.empty())
    std::cout << "none (no CustomResourceDefinition of a *.volcano.sh group but HyperNode's)";
  std::string sep;
  for (const auto& [group, versions] : server->volcano) {
    for (const auto& v : versions) {
      std::cout << sep << text::terminal_safe(group) << " " << text::terminal_safe(v);
      sep = ", ";
    }
  }
  std::cout << "\n";
  return kExitDone;
}

}  // namespace

void add_version_command(CLI::App& app, Action& action) {
  auto opts = std::make_shared<VersionOptions>();
  auto* cmd = app.add_subcommand(
      "version",
      "Print the client version and, with a cluster, the HyperNode and Volcano API versions it serves");
  cmd->footer(
      "The cluster is found as kubectl finds it ($KUBECONFIG, ~/.kube/config, the pod's service account); "
      "without one, only the client's version is printed.\n"
      "Examples:\n"
      "  hypertopo version --client\n"
      "  hypertopo version --kubeconfig ~/.kube/config -o json");
  cmd->add_flag("--client", opts->client_only, "Only this binary's version; no cluster is read");
  cmd->add_option("--kubeconfig", opts->cluster.kubeconfig,
                  "kubeconfig file (default: as kubectl: $KUBECONFIG, then ~/.kube/config, then the pod's "
                  "service account)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--context", opts->cluster.context, "kubeconfig context (default: its current-context)");
  cmd->add_option("-o,--output", opts->output, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->callback([opts, &action] { action = [opts] { return run_version(*opts); }; });
}

}  // namespace hypertopo::cli
