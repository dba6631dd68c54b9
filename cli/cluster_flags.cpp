#include "cli/cluster_flags.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace hypertopo::cli {

KubeconfigSearch KubeconfigSearch::from_environment() {
  KubeconfigSearch s;
  if (const char* v = std::getenv("KUBECONFIG")) s.kubeconfig_env = v;
  if (const char* v = std::getenv("HOME")) s.home = v;
  return s;
}

namespace {

std::expected<ResolvedCluster, Error> from_file(const std::string& path, const std::string& context,
                                                const std::string& source) {
  auto config = k8s::load_kubeconfig(path, context);
  if (!config) return std::unexpected(config.error().context(source));
  return ResolvedCluster{.config = std::move(*config), .source = source};
}

}  // namespace

std::expected<ResolvedCluster, Error> resolve_cluster(const ClusterFlags& flags,
                                                      const KubeconfigSearch& search) {
  namespace fs = std::filesystem;
  if (!flags.kubeconfig.empty()) {
    std::error_code ec;
    if (!fs::is_regular_file(flags.kubeconfig, ec))
      return fail(ErrorCode::kNotFound, "--kubeconfig " + flags.kubeconfig + ": no such file");
    return from_file(flags.kubeconfig, flags.context, "--kubeconfig " + flags.kubeconfig);
  }
  std::vector<std::string> looked;
  if (!search.kubeconfig_env.empty()) {
    // Every file of the list, merged as kubectl merges them (k8s::load_kubeconfig_files).
    const auto files = k8s::split_kubeconfig_list(search.kubeconfig_env);
    const bool any = std::ranges::any_of(files, [](const fs::path& path) {
      std::error_code ec;
      return fs::exists(path, ec);
    });
    if (any) {
      const std::string source = "$KUBECONFIG " + search.kubeconfig_env;
      auto config = k8s::load_kubeconfig_files(files, flags.context);
      if (!config) return std::unexpected(config.error().context(source));
      return ResolvedCluster{.config = std::move(*config), .source = source};
    }
    looked.push_back("$KUBECONFIG (" + search.kubeconfig_env + ": no file)");
  } else if (!search.home.empty()) {
    // kubectl reads ~/.kube/config only when $KUBECONFIG is unset.
    const std::string path = (fs::path(search.home) / ".kube" / "config").string();
    std::error_code ec;
    if (fs::is_regular_file(path, ec)) return from_file(path, flags.context, path);
    looked.push_back(path + " (no file)");
  }
  if (search.in_cluster.host.empty()) {
    looked.push_back("the service account (not in a pod: $KUBERNETES_SERVICE_HOST is unset)");
    std::string message = "no Kubernetes cluster to talk to: pass --kubeconfig; looked at ";
    for (std::size_t i = 0; i < looked.size(); ++i) message += (i > 0 ? ", " : "") + looked[i];
    return fail(ErrorCode::kNotFound, message);
  }
  if (!flags.context.empty())
    return fail(
        ErrorCode::kInvalidArgument,
        "--context " + flags.context + ": no kubeconfig found (in a pod the service account is used)");
  auto config = k8s::in_cluster_config(search.in_cluster);
  if (!config) return std::unexpected(config.error().context("the pod's service account"));
  return ResolvedCluster{
      .config = std::move(*config), .source = "the pod's service account", .in_cluster = true};
}

}  // namespace hypertopo::cli
