#include "k8s/client/kube_config.h"

#include <sys/stat.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include "io/bounded_file.h"
#include "io/yaml_reader.h"
#include "net/header_credentials.h"

namespace hypertopo::k8s {
namespace {

std::expected<std::string, Error> read_file(const std::filesystem::path& path) {
  return io::read_bounded_file(path, io::kConfigFileLimit);
}

std::string trim_space(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ' || s.back() == '\t'))
    s.pop_back();
  size_t b = s.find_first_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b);
}

std::optional<std::string> base64_decode(const std::string& text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
  };
  std::string out;
  unsigned buffer = 0;
  int bits = 0;
  for (char c : text) {
    if (c == '=' || c == '\n' || c == '\r' || c == ' ' || c == '\t') continue;
    int v = value(c);
    if (v < 0) return std::nullopt;
    buffer = (buffer << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buffer >> bits) & 0xff));
    }
  }
  return out;
}

std::string scalar(const YAML::Node& node, const char* key) {
  if (!node || !node.IsMap() || !node[key] || !node[key].IsScalar()) return "";
  return node[key].as<std::string>();
}

// The `<key>-data` (base64) value, or the contents of the file `<key>`.
std::expected<std::string, Error> data_or_file(const YAML::Node& node, const std::string& key,
                                               const std::filesystem::path& base_dir,
                                               const std::string& where) {
  std::string data = scalar(node, (key + "-data").c_str());
  if (!data.empty()) {
    auto decoded = base64_decode(data);
    if (!decoded) return fail(ErrorCode::kParse, where + "." + key + "-data is not valid base64");
    return *decoded;
  }
  std::string file = scalar(node, key.c_str());
  if (file.empty()) return std::string();
  std::filesystem::path p(file);
  if (p.is_relative()) p = base_dir / p;
  auto text = read_file(p);
  if (!text) return std::unexpected(text.error().context(where + "." + key));
  return *text;
}

}  // namespace

namespace {
// Go's net/http.ProxyFromEnvironment (golang.org/x/net/http/httpproxy, config.proxyForURL and
// useProxy), which client-go uses by default: HTTPS_PROXY (or https_proxy) for https:// servers,
// HTTP_PROXY for http://, never for localhost or a loopback address, and not for a host NO_PROXY
// names ("*", the host, or a domain it is under; CIDR entries are not read here and so do not
// exempt). We implement no proxy: where client-go would use one, the connection would go around it,
// so that is refused with an error instead of ignored.
std::expected<void, Error> refuse_proxy_environment(const std::string& server, const std::string& what) {
  const bool tls = server.starts_with("https://");
  auto env = [](const char* upper, const char* lower) -> std::string {
    if (const char* v = std::getenv(upper); v != nullptr && *v != '\0') return v;
    if (const char* v = std::getenv(lower); v != nullptr && *v != '\0') return v;
    return "";
  };
  const std::string proxy = tls ? env("HTTPS_PROXY", "https_proxy") : env("HTTP_PROXY", "http_proxy");
  if (proxy.empty()) return {};
  std::string host = server.substr(server.find("://") + 3);
  host = host.substr(0, host.find('/'));
  if (host.starts_with("[")) {
    host = host.substr(1, host.find(']') - 1);
  } else if (const auto colon = host.rfind(':'); colon != std::string::npos) {
    host = host.substr(0, colon);
  }
  std::transform(host.begin(), host.end(), host.begin(), [](unsigned char c) { return std::tolower(c); });
  if (host == "localhost" || host == "::1" || host.starts_with("127.")) return {};
  std::stringstream no_proxy(env("NO_PROXY", "no_proxy"));
  for (std::string entry; std::getline(no_proxy, entry, ',');) {
    entry.erase(0, entry.find_first_not_of(" \t"));
    entry.erase(entry.find_last_not_of(" \t") + 1);
    std::transform(entry.begin(), entry.end(), entry.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    if (entry.empty()) continue;
    if (entry == "*") return {};
    if (const auto colon = entry.rfind(':'); colon != std::string::npos && entry.find(':') == colon)
      entry = entry.substr(0, colon);  // host:port, port not compared
    const std::string domain = entry.starts_with(".") ? entry : "." + entry;
    if (host == entry || host == domain.substr(1) || host.ends_with(domain)) return {};
  }
  return fail(ErrorCode::kInvalidArgument,
              what + ": " + std::string(tls ? "HTTPS_PROXY" : "HTTP_PROXY") +
                  " is set, but hypertopo does not use proxies; unset it or add " + host +
                  " to NO_PROXY, so that the API server is reached directly");
}
}  // namespace

struct TokenSource::State {
  enum class Kind { kNone, kFixed, kFile } kind = Kind::kNone;
  std::filesystem::path path;
  mutable std::mutex mutex;
  mutable std::string token;
  mutable bool loaded = false;
  mutable ino_t inode = 0;
  mutable off_t size = -1;
  mutable timespec mtime{};
};

TokenSource::TokenSource() : state_(std::make_shared<State>()) {}

TokenSource TokenSource::fixed(std::string token) {
  TokenSource out;
  out.state_->kind = State::Kind::kFixed;
  out.state_->token = std::move(token);
  return out;
}

TokenSource TokenSource::file(std::filesystem::path path) {
  TokenSource out;
  out.state_->kind = State::Kind::kFile;
  out.state_->path = std::move(path);
  return out;
}

bool TokenSource::from_file() const { return state_->kind == State::Kind::kFile; }

std::expected<std::string, Error> TokenSource::token() const {
  State& s = *state_;
  std::lock_guard lock(s.mutex);
  if (s.kind != State::Kind::kFile) return s.token;
  // The kubelet swaps a symlink to rotate a projected token, so the inode changes; a plain rewrite
  // changes size or mtime. stat() follows the link.
  struct stat st {};
  if (::stat(s.path.c_str(), &st) != 0) {
    return fail(ErrorCode::kPermission, "cannot read the bearer token file " + s.path.string());
  }
  bool changed = !s.loaded || st.st_ino != s.inode || st.st_size != s.size ||
                 st.st_mtim.tv_sec != s.mtime.tv_sec || st.st_mtim.tv_nsec != s.mtime.tv_nsec;
  if (changed) {
    auto text = read_file(s.path);
    if (!text) return fail(ErrorCode::kPermission, "cannot read the bearer token file " + s.path.string());
    std::string token = trim_space(*text);
    if (auto ok = net::check_header_token(token, "the bearer token file " + s.path.string()); !ok)
      return std::unexpected(ok.error());
    s.token = std::move(token);
    s.loaded = true;
    s.inode = st.st_ino;
    s.size = st.st_size;
    s.mtime = st.st_mtim;
  }
  return s.token;
}

void TokenSource::invalidate() const {
  std::lock_guard lock(state_->mutex);
  state_->loaded = false;
}

// The kubeconfig model after client-go's clientcmd merge (tools/clientcmd/loader.go,
// ClientConfigLoadingRules.Load): each named cluster, user and context as the first file that named
// it wrote it, with that file's folder (relative paths resolve against it, ResolveLocalPaths with
// LocationOfOrigin) and name (for errors); current-context from the first file that sets one.
namespace {

struct NamedEntry {
  YAML::Node body;  // the `cluster`, `user` or `context` mapping
  std::filesystem::path base_dir;
  std::string source;  // the file it came from, as errors name it
};

struct MergedKubeconfig {
  std::map<std::string, NamedEntry> clusters, users, contexts;
  std::string current_context;
  std::vector<std::string> sources;  // every file read, in order
};

// One file's text into `merged`, keeping what earlier files set. A list of one kind that names an
// entry twice is an error, as client-go's conversion of the list to a map makes it
// (tools/clientcmd/api/v1/conversion.go: "duplicate name ... in list").
std::expected<void, Error> merge_one(const std::string& yaml, const std::filesystem::path& base_dir,
                                     const std::string& source, MergedKubeconfig& merged) {
  auto where = [&](const std::string& what) { return "kubeconfig " + source + ": " + what; };
  auto loaded = io::load_yaml(yaml, "kubeconfig " + source);
  if (!loaded) return std::unexpected(loaded.error());
  const YAML::Node root = *loaded;
  merged.sources.push_back(source);
  // An empty file is an empty config (client-go's Load: "if there's no data in a file, return the
  // default object instead of failing").
  if (!root || root.IsNull()) return {};
  if (!root.IsMap()) return fail(ErrorCode::kParse, where("not a YAML mapping"));
  try {
    const std::pair<const char*, const char*> kinds[] = {
        {"clusters", "cluster"}, {"users", "user"}, {"contexts", "context"}};
    for (const auto& [list_key, inner] : kinds) {
      const YAML::Node list = root[list_key];
      if (!list || list.IsNull()) continue;
      if (!list.IsSequence())
        return fail(ErrorCode::kParse, where(std::string(list_key) + " must be a list"));
      auto& into = list_key == std::string("clusters") ? merged.clusters
                   : list_key == std::string("users")  ? merged.users
                                                       : merged.contexts;
      std::set<std::string> seen;
      for (const auto& entry : list) {
        const std::string name = scalar(entry, "name");
        if (name.empty()) continue;
        if (!seen.insert(name).second)
          return fail(ErrorCode::kParse,
                      where(std::string(list_key) + ": duplicate name \"" + name + "\" in the list"));
        // The first file to name it wins it whole: a later file's fields for it are all ignored.
        // A copy of its own: a node of the file's tree keeps the whole tree (yaml-cpp's nodes share
        // their document's memory), about 25 times the file's size, for as long as it lives.
        if (!into.contains(name)) {
          const YAML::Node body = entry[inner];
          into.emplace(name, NamedEntry{body ? YAML::Clone(body) : YAML::Node(), base_dir, source});
        }
      }
    }
    if (merged.current_context.empty()) merged.current_context = scalar(root, "current-context");
    return {};
  } catch (const YAML::Exception& e) {
    return fail(ErrorCode::kParse, where(std::string("unexpected structure: ") + e.what()));
  }
}

std::string joined(const std::vector<std::string>& sources) {
  std::string out;
  for (const auto& s : sources) out += (out.empty() ? "" : ":") + s;
  return out;
}

// The context's cluster and user into a ClusterConfig. Errors name the file the entry at fault came
// from, or every file read when an entry is missing. `check_proxy`: refuse a proxy the environment
// names (files read from disk; parse_kubeconfig's text is checked by its caller).
std::expected<ClusterConfig, Error> resolve(const MergedKubeconfig& merged, const std::string& context,
                                            bool check_proxy) {
  const std::string all = joined(merged.sources);
  auto where_all = [&](const std::string& what) { return "kubeconfig " + all + ": " + what; };
  try {
    ClusterConfig config;
    config.context = context.empty() ? merged.current_context : context;
    if (config.context.empty()) {
      return fail(ErrorCode::kInvalidArgument, where_all("no context given and current-context is not set"));
    }
    const auto ctx_it = merged.contexts.find(config.context);
    if (ctx_it == merged.contexts.end() || !ctx_it->second.body || !ctx_it->second.body.IsMap()) {
      return fail(ErrorCode::kNotFound,
                  where_all("context \"" + config.context + "\" not found in contexts"));
    }
    const YAML::Node& ctx = ctx_it->second.body;
    std::string cluster_name = scalar(ctx, "cluster");
    std::string user_name = scalar(ctx, "user");
    config.namespace_ = scalar(ctx, "namespace");
    const auto cluster_it = merged.clusters.find(cluster_name);
    if (cluster_it == merged.clusters.end() || !cluster_it->second.body || !cluster_it->second.body.IsMap()) {
      return fail(ErrorCode::kNotFound, where_all("cluster \"" + cluster_name + "\" (context \"" +
                                                  config.context + "\") not found in clusters"));
    }
    const NamedEntry& cluster_entry = cluster_it->second;
    const YAML::Node& cluster = cluster_entry.body;
    auto where = [&](const std::string& what) { return "kubeconfig " + cluster_entry.source + ": " + what; };
    std::string cluster_where = "clusters[" + cluster_name + "].cluster";
    config.server = scalar(cluster, "server");
    if (!config.server.starts_with("https://") && !config.server.starts_with("http://")) {
      return fail(ErrorCode::kInvalidArgument,
                  where(cluster_where + ".server must be an http(s) URL, found \"" + config.server + "\""));
    }
    if (cluster["proxy-url"]) {
      return fail(ErrorCode::kInvalidArgument,
                  where(cluster_where + ".proxy-url is not supported: hypertopo connects to the API server "
                                        "directly; remove it, or run where the API server is reachable"));
    }
    config.tls.insecure_skip_verify =
        cluster["insecure-skip-tls-verify"] && cluster["insecure-skip-tls-verify"].as<bool>();
    config.tls.server_name = scalar(cluster, "tls-server-name");
    auto ca = data_or_file(cluster, "certificate-authority", cluster_entry.base_dir, cluster_where);
    if (!ca) return std::unexpected(ca.error().context(where("CA")));
    config.tls.ca_pem = *ca;

    if (!user_name.empty()) {
      const auto user_it = merged.users.find(user_name);
      std::string user_where = "users[" + user_name + "].user";
      if (user_it == merged.users.end()) {
        return fail(ErrorCode::kNotFound, where_all("user \"" + user_name + "\" (context \"" +
                                                    config.context + "\") not found in users"));
      }
      const NamedEntry& user_entry = user_it->second;
      const YAML::Node& user = user_entry.body;
      auto user_at = [&](const std::string& what) { return "kubeconfig " + user_entry.source + ": " + what; };
      if (user && user.IsMap()) {
        for (const char* unsupported : {"exec", "auth-provider", "username", "password"}) {
          if (user[unsupported]) {
            return fail(ErrorCode::kInvalidArgument,
                        user_at(user_where + "." + unsupported +
                                " is not supported; use a token, tokenFile or a client certificate"));
          }
        }
        auto cert = data_or_file(user, "client-certificate", user_entry.base_dir, user_where);
        if (!cert) return std::unexpected(cert.error().context(user_at("client certificate")));
        auto key = data_or_file(user, "client-key", user_entry.base_dir, user_where);
        if (!key) return std::unexpected(key.error().context(user_at("client key")));
        if (cert->empty() != key->empty()) {
          return fail(
              ErrorCode::kInvalidArgument,
              user_at(user_where + " has a client certificate without a key or a key without a certificate"));
        }
        config.tls.client_cert_pem = *cert;
        config.tls.client_key_pem = *key;
        if (std::string token = scalar(user, "token"); !token.empty()) {
          if (auto ok = net::check_header_token(token, user_at(user_where + ".token")); !ok)
            return std::unexpected(ok.error());
          config.token = TokenSource::fixed(token);
        } else if (std::string file = scalar(user, "tokenFile"); !file.empty()) {
          std::filesystem::path p(file);
          if (p.is_relative()) p = user_entry.base_dir / p;
          config.token = TokenSource::file(p);
          if (auto t = config.token.token(); !t)
            return std::unexpected(t.error().context(user_at(user_where + ".tokenFile")));
        }
      }
    }
    if (check_proxy) {
      if (auto ok = refuse_proxy_environment(config.server, "kubeconfig " + cluster_entry.source); !ok)
        return std::unexpected(ok.error());
    }
    return config;
  } catch (const YAML::Exception& e) {
    return fail(ErrorCode::kParse, where_all(std::string("unexpected structure: ") + e.what()));
  }
}

}  // namespace

std::expected<ClusterConfig, Error> parse_kubeconfig(const std::string& yaml,
                                                     const std::filesystem::path& base_dir,
                                                     const std::string& context, const std::string& source) {
  MergedKubeconfig merged;
  if (auto ok = merge_one(yaml, base_dir, source, merged); !ok) return std::unexpected(ok.error());
  return resolve(merged, context, /*check_proxy=*/false);
}

std::expected<ClusterConfig, Error> load_kubeconfig(const std::filesystem::path& path,
                                                    const std::string& context) {
  auto text = read_file(path);
  if (!text) return std::unexpected(text.error().context("while loading the kubeconfig"));
  MergedKubeconfig merged;
  if (auto ok = merge_one(*text, path.parent_path(), path.string(), merged); !ok)
    return std::unexpected(ok.error());
  return resolve(merged, context, /*check_proxy=*/true);
}

std::vector<std::filesystem::path> split_kubeconfig_list(const std::string& value) {
  std::vector<std::filesystem::path> out;
  std::set<std::string> seen;
  std::stringstream list(value);
  for (std::string path; std::getline(list, path, ':');) {
    if (path.empty() || !seen.insert(path).second) continue;
    out.emplace_back(path);
  }
  return out;
}

std::expected<ClusterConfig, Error> load_kubeconfig_files(const std::vector<std::filesystem::path>& files,
                                                          const std::string& context) {
  auto over_bound = [](const std::filesystem::path& path, std::uintmax_t total) {
    return fail(ErrorCode::kInvalidArgument, "kubeconfig " + path.string() +
                                                 ": the $KUBECONFIG files total " + std::to_string(total) +
                                                 " bytes up to this one, over the bound of " +
                                                 std::to_string(kKubeconfigListLimit >> 20) + " MiB");
  };
  // The sizes first, from the file system: a list past the bound is refused before any file is
  // parsed. The texts are counted again as read, for a file that grows in between.
  std::uintmax_t total = 0;
  for (const auto& path : files) {
    std::error_code ec;
    const std::uintmax_t size = path.empty() ? 0 : std::filesystem::file_size(path, ec);
    if (ec) continue;  // missing, or not a regular file: the read below says what is wrong
    if ((total += size) > kKubeconfigListLimit) return over_bound(path, total);
  }
  MergedKubeconfig merged;
  total = 0;
  for (const auto& path : files) {
    if (path.empty()) continue;
    auto text = read_file(path);
    if (!text) {
      if (text.error().code() == ErrorCode::kNotFound) continue;  // a missing file is skipped
      return std::unexpected(text.error().context("while loading the kubeconfig"));
    }
    if ((total += text->size()) > kKubeconfigListLimit) return over_bound(path, total);
    if (auto ok = merge_one(*text, path.parent_path(), path.string(), merged); !ok)
      return std::unexpected(ok.error());
  }
  if (merged.sources.empty()) {
    std::vector<std::string> names;
    for (const auto& f : files) names.push_back(f.string());
    return fail(ErrorCode::kNotFound, "kubeconfig " + joined(names) + ": none of the files exists");
  }
  return resolve(merged, context, /*check_proxy=*/true);
}

InClusterSource InClusterSource::from_environment() {
  InClusterSource out;
  if (const char* h = std::getenv("KUBERNETES_SERVICE_HOST")) out.host = h;
  if (const char* p = std::getenv("KUBERNETES_SERVICE_PORT")) out.port = p;
  return out;
}

std::expected<ClusterConfig, Error> in_cluster_config(const InClusterSource& source) {
  if (source.host.empty() || source.port.empty()) {
    return fail(ErrorCode::kNotFound,
                "not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set");
  }
  ClusterConfig config;
  bool ipv6 = source.host.find(':') != std::string::npos;
  config.server = "https://" + (ipv6 ? "[" + source.host + "]" : source.host) + ":" + source.port;
  if (auto ok = refuse_proxy_environment(config.server, "in-cluster config"); !ok)
    return std::unexpected(ok.error());
  config.token = TokenSource::file(source.token_file);
  if (auto t = config.token.token(); !t) return std::unexpected(t.error().context("in-cluster config"));
  auto ca = read_file(source.ca_file);
  if (!ca) return std::unexpected(ca.error().context("in-cluster config: the service account CA bundle"));
  config.tls.ca_pem = *ca;
  if (auto ns = read_file(source.namespace_file)) config.namespace_ = trim_space(*ns);
  return config;
}

}  // namespace hypertopo::k8s
