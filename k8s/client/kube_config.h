// k8s/client/kube_config.h: where the API server is and how to prove who we are.
//
// Two sources, as kubectl and client-go have them:
//  - a kubeconfig file (the current context, or a named one): server, CA (data or file), client
//    certificate and key (data or file), token (inline or tokenFile), and insecure-skip-tls-verify
//    only when the file says so. Relative file paths are relative to the kubeconfig's folder.
//    exec and auth-provider plugins are not supported and say so, naming the user.
//  - several kubeconfig files ($KUBECONFIG=a:b), merged as kubectl merges them (client-go
//    tools/clientcmd/loader.go, ClientConfigLoadingRules.Load): a missing file is skipped, an empty
//    entry ignored, a path named twice read once; the first file to name a cluster, user or context
//    wins it whole (a later file's entry of that name is ignored, even its other fields);
//    current-context comes from the first file that sets one; relative paths resolve against the
//    folder of the file the entry came from. An error names the file at fault.
//  - in-cluster: KUBERNETES_SERVICE_HOST/PORT and the service account's token, CA bundle and
//    namespace files. The token is a projected token that the kubelet rotates, so TokenSource re-reads
//    the file whenever it changes (inode, size or mtime) and again after a 401.
//
//   auto config = load_kubeconfig(home / ".kube/config", /*context=*/"");     // current context
//   auto merged = load_kubeconfig_files(split_kubeconfig_list(getenv("KUBECONFIG")), "");
//   auto config = in_cluster_config(InClusterSource::from_environment());
//   auto client = KubeClient::create(*config, {});                           // kube_client.h
#pragma once

#include <cstddef>
#include <expected>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "errors/error.h"
#include "net/tls_config.h"

namespace hypertopo::k8s {

// The bearer token: none, a fixed string, or a file re-read when it changes. Copies share one cache.
// Thread-safe.
class TokenSource {
 public:
  TokenSource();  // no token
  static TokenSource fixed(std::string token);
  static TokenSource file(std::filesystem::path path);

  // The current token ("" for none). For a file: re-read when its inode, size or mtime changed since
  // the last read, or after invalidate(). Fails when the file cannot be read.
  std::expected<std::string, Error> token() const;
  // Forces the next token() to re-read the file (after the server said 401).
  void invalidate() const;
  bool from_file() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

struct ClusterConfig {
  std::string server;  // "https://10.96.0.1:443"; http:// is accepted (loopback tests, proxies)
  net::TlsConfig tls;
  TokenSource token;
  std::string namespace_;  // the context's namespace, or the pod's namespace in-cluster; may be empty
  std::string context;     // the kubeconfig context used ("" in-cluster)
};

// Reads a kubeconfig. `context` empty: the file's current-context. Errors name the file and the key.
std::expected<ClusterConfig, Error> load_kubeconfig(const std::filesystem::path& path,
                                                    const std::string& context = "");
// The same from text; `base_dir` resolves relative paths, `source` names it in errors.
std::expected<ClusterConfig, Error> parse_kubeconfig(const std::string& yaml,
                                                     const std::filesystem::path& base_dir,
                                                     const std::string& context, const std::string& source);

// The files of a $KUBECONFIG value in order: split on ':', empty entries dropped, a path named again
// dropped (client-go's NewDefaultClientConfigLoadingRules: filepath.SplitList, then deduplicate).
std::vector<std::filesystem::path> split_kubeconfig_list(const std::string& value);
// The files merged (the rules above), then the context (`context` empty: the merged
// current-context). Files that do not exist are skipped; kNotFound when none exists. A file that
// cannot be read or parsed, or an entry that is wrong, is an error naming that file. Each file is
// bounded by io::kConfigFileLimit and the list by kKubeconfigListLimit (an error names the file that
// passed it); of each file only the entries the merge keeps stay in memory once it is merged.
inline constexpr std::size_t kKubeconfigListLimit = std::size_t{16} << 20;
std::expected<ClusterConfig, Error> load_kubeconfig_files(const std::vector<std::filesystem::path>& files,
                                                          const std::string& context = "");

struct InClusterSource {
  std::string host;  // KUBERNETES_SERVICE_HOST
  std::string port;  // KUBERNETES_SERVICE_PORT
  std::filesystem::path token_file = "/var/run/secrets/kubernetes.io/serviceaccount/token";
  std::filesystem::path ca_file = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";
  std::filesystem::path namespace_file = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

  // host and port from the environment, the standard paths for the files.
  static InClusterSource from_environment();
};

// Fails with kNotFound when not in a cluster (no host/port), or when the token or CA is missing.
std::expected<ClusterConfig, Error> in_cluster_config(const InClusterSource& source);

}  // namespace hypertopo::k8s
