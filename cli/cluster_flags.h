// cli/cluster_flags.h: how `status`, `apply` and `extender` find their cluster, the way kubectl does
// (client-go's clientcmd.ClientConfigLoadingRules, then rest.InClusterConfig):
//   1. --kubeconfig FILE
//   2. else $KUBECONFIG: the files of its ':'-separated list, merged as kubectl merges them
//      (k8s::load_kubeconfig_files: missing files skipped, the first file to name an entry wins it)
//   3. else ~/.kube/config, when it exists
//   4. else the pod's service account (KUBERNETES_SERVICE_HOST and the mounted token)
// --context picks a context of the kubeconfig (default: its current-context).
//
//   auto cluster = resolve_cluster({.kubeconfig = flag, .context = context_flag});
//   if (!cluster) ...;                                   // names every place it looked
//   auto client = k8s::KubeClient::create(cluster->config);
//   // cluster->source: "--kubeconfig /home/me/.kube/prod", "$KUBECONFIG ...", "the pod's service account"
#pragma once

#include <expected>
#include <string>

#include "errors/error.h"
#include "k8s/client/kube_config.h"

namespace hypertopo::cli {

struct ClusterFlags {
  std::string kubeconfig;  // --kubeconfig ("": look further)
  std::string context;     // --context ("": the kubeconfig's current-context)
};

// Where the lookup looks besides the flags; from_environment() reads $KUBECONFIG and $HOME.
struct KubeconfigSearch {
  std::string kubeconfig_env;  // $KUBECONFIG
  std::string home;            // $HOME
  k8s::InClusterSource in_cluster = k8s::InClusterSource::from_environment();
  static KubeconfigSearch from_environment();
};

struct ResolvedCluster {
  k8s::ClusterConfig config;
  std::string source;  // where it came from, for messages
  bool in_cluster = false;
};

// Errors name where the config was looked for and what was wrong with it.
std::expected<ResolvedCluster, Error> resolve_cluster(
    const ClusterFlags& flags, const KubeconfigSearch& search = KubeconfigSearch::from_environment());

}  // namespace hypertopo::cli
