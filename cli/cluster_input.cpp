#include "cli/cluster_input.h"

#include "k8s/client/kube_client.h"

namespace hypertopo::cli {

std::expected<std::shared_ptr<const scheduler::ClusterSnapshot>, ClusterInputFailure> read_cluster_inputs(
    const std::string& missing, const ClusterFlags& flags, const scheduler::ClusterReadRequest& want) {
  const bool named = !flags.kubeconfig.empty() || !flags.context.empty();
  const bool required = want.nodes || want.topology || want.hypernode_objects;
  if (!required && want.pod_group.empty() && !named) return nullptr;
  auto cluster = resolve_cluster(flags);
  if (!cluster) {
    if (named) return std::unexpected(ClusterInputFailure{2, cluster.error().message()});
    if (!required) {
      return std::unexpected(
          ClusterInputFailure{2, "--pod-group is read from the cluster, and a kubeconfig was not found: " +
                                     cluster.error().message()});
    }
    if (missing.empty()) return std::unexpected(ClusterInputFailure{2, cluster.error().message()});
    return std::unexpected(ClusterInputFailure{
        2, missing + " not given, and a kubeconfig was not found to read the cluster instead: " +
               cluster.error().message()});
  }
  // A one-shot read: kubectl's rate (50 requests a second, bursts of 300), and an unreachable
  // server is reported after a short retry rather than the controllers' five attempts.
  k8s::ClientOptions options{.qps = 50, .burst = 300};
  options.retry.max_attempts = 3;
  auto client = k8s::KubeClient::create(cluster->config, options);
  if (!client)
    return std::unexpected(ClusterInputFailure{2, client.error().context(cluster->source).message()});
  auto snapshot = scheduler::read_cluster(**client, want, cluster->source);
  if (!snapshot) {
    const auto& e = snapshot.error();
    return std::unexpected(ClusterInputFailure{
        e.api ? 3 : 2, "reading the cluster of " + cluster->source + ": " + e.error.message()});
  }
  return std::make_shared<const scheduler::ClusterSnapshot>(std::move(*snapshot));
}

}  // namespace hypertopo::cli
