#include <nlohmann/json.hpp>

#include "discoverers/netq/netq_source.h"
#include "discoverers/netq/netq_topology.h"
#include "discoverers/registry/source_config.h"
#include "io/yaml_reader.h"
#include "net/header_credentials.h"
#include "net/http_transport.h"
#include "net/retry.h"
#include "net/url.h"

namespace hypertopo::discoverers::netq {
namespace {

using nlohmann::json;

constexpr const char* kLoginPath = "/api/netq/auth/v1/login";
constexpr const char* kSelectPremisesPath = "/api/netq/auth/v1/select/opid/";
constexpr const char* kTopologyPath =
    "/api/netq/telemetry/v1/object/topologygraph/fetch-topology?timestamp=0";
constexpr const char* kComputeNodesPath = "/nmx/v1/compute-nodes";
constexpr int kMaxAttempts = 4;
constexpr std::size_t kMaxPremises = 1000;

const RestService& netq_service() {
  static const RestService service{.name = "NetQ",
                                   .url_form = "https://HOST[:PORT]",
                                   .secret_keys = "username and password",
                                   .default_max_bytes = kNetqDefaultMaxBytes,
                                   .insecure_hint = "set insecureSkipVerify"};
  return service;
}

class NetqClient {
 public:
  NetqClient(net::HttpUrl url, std::unique_ptr<net::HttpTransport> transport, std::string user,
             std::string password, std::string origin, const NetqConfig& config, NetqRunDeps deps)
      : url_(std::move(url)),
        transport_(std::move(transport)),
        user_(std::move(user)),
        password_(std::move(password)),
        origin_(std::move(origin)),
        config_(config),
        deps_(std::move(deps)) {
    if (!deps_.clock) deps_.clock = std::make_shared<timing::SystemClock>();
  }

  int requests() const { return requests_; }

  // One request with the retry policy; the body of a 2xx answer.
  std::expected<std::string, Error> call(const std::string& method, const std::string& path,
                                         const std::string& authorization, const std::string& body) {
    const std::string target = url_.path + path;
    const std::string where = method + " " + url_.server() + target;  // never credentials
    net::HttpRequest request{method, target, {{"Accept", "application/json"}}, body};
    if (!authorization.empty()) request.headers.emplace_back("Authorization", authorization);
    if (!body.empty()) request.headers.emplace_back("Content-Type", "application/json");
    std::string last;
    for (int attempt = 1;; ++attempt) {
      const auto left = config_.timeout - spent_;
      if (left.count() <= 0) return out_of_time(where, last, attempt - 1);
      ++requests_;
      log("netq: " + where + (attempt > 1 ? " (attempt " + std::to_string(attempt) + ")" : ""));
      auto wait =
          net::backoff_delay(std::chrono::milliseconds(500), std::chrono::milliseconds(8000), attempt - 1);
      const auto started = std::chrono::steady_clock::now();
      // The login is a POST that changes nothing on the server: safe to send again.
      auto res = transport_->round_trip(request, left, /*idempotent=*/true);
      spent_ +=
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
      const int status = res ? res->status : res.error().status;
      if (status == 401 || status == 403) {
        return fail(ErrorCode::kPermission, "NetQ refused " + where + " with HTTP " + std::to_string(status) +
                                                ": check the username and password in " + origin_ +
                                                " (not retried)");
      }
      if (res) {
        if (status >= 200 && status < 300) return std::move(res->body);
        last = "HTTP " + std::to_string(status);
        if (!net::retryable_status(status, /*idempotent=*/true))
          return fail(ErrorCode::kUnavailable,
                      where + ": " + last + " (is this a NetQ server with this API?)");
        wait = net::retry_wait(wait, res->retry_after, std::chrono::milliseconds(8000));
      } else {
        std::string message = res.error().error.message();
        if (message.find("larger than the limit") != std::string::npos)
          return fail(ErrorCode::kUnavailable,
                      where + ": " + message + " (the NetQ answer size cap, maxBytes)");
        if (message.find("TLS handshake") != std::string::npos)
          return fail(
              ErrorCode::kUnavailable,
              where + ": " + message + " (trust the server's CA with caFile; insecureSkipVerify skips it)");
        last = message;
      }
      if (attempt >= kMaxAttempts)
        return fail(ErrorCode::kUnavailable,
                    where + ": " + last + " (gave up after " + std::to_string(attempt) + " attempts)");
      if (wait >= config_.timeout - spent_) return out_of_time(where, last, attempt);
      log("netq: " + where + ": " + last + "; retrying in " + std::to_string(wait.count()) + "ms");
      deps_.clock->sleep_for(wait);
      spent_ += std::chrono::duration_cast<std::chrono::milliseconds>(wait);
    }
  }

  std::expected<Discovery, Error> run() {
    const json login = {{"username", user_}, {"password", password_}};
    auto answer = call("POST", kLoginPath, "", login.dump());
    if (!answer) return std::unexpected(answer.error());
    auto auth = parse_object(*answer, "the login answer");
    if (!auth) return std::unexpected(auth.error());
    auto token = token_of(*auth, "the login answer");
    if (!token) return std::unexpected(token.error());
    const json premises = auth->value("premises", json::array());
    if (!premises.is_array()) return fail(ErrorCode::kParse, where(kLoginPath) + ": premises must be a list");
    if (premises.size() > kMaxPremises)
      return fail(ErrorCode::kParse,
                  where(kLoginPath) + ": more than " + std::to_string(kMaxPremises) + " premises");
    NetqTopology topo;
    std::size_t used = 0;
    for (std::size_t i = 0; i < premises.size(); ++i) {
      const json& p = premises[i];
      if (!p.is_object() || !p.value("config_key_viewed", false)) continue;
      if (!p.contains("opid") || !p["opid"].is_number_integer())
        return fail(ErrorCode::kParse,
                    where(kLoginPath) + ": premises[" + std::to_string(i) + "].opid must be an integer");
      const std::string opid = std::to_string(p["opid"].get<std::int64_t>());
      auto selected = call("GET", kSelectPremisesPath + opid, "Bearer " + *token, "");
      if (!selected) return std::unexpected(selected.error());
      auto sel = parse_object(*selected, "the premises answer");
      if (!sel) return std::unexpected(sel.error());
      auto premises_token = token_of(*sel, "the premises answer");
      if (!premises_token) return std::unexpected(premises_token.error());
      auto graph = call("POST", kTopologyPath, "Bearer " + *premises_token,
                        R"({"filters": [], "subgroupNestingDepth": 2})");
      if (!graph) return std::unexpected(graph.error());
      if (auto ok = parse_netq_topology(*graph, where(kTopologyPath) + " (premises " + opid + ")", topo); !ok)
        return std::unexpected(ok.error());
      ++used;
    }
    if (used == 0)
      return fail(ErrorCode::kNotFound,
                  "NetQ at " + url_.server() + ": no premises with topology data for this account");
    if (topo.switches == 0)
      return fail(ErrorCode::kParse, "NetQ at " + url_.server() + ": the topology graph holds no switch");
    Discovery d;
    auto nodes = call("GET", kComputeNodesPath, net::basic_authorization(user_, password_), "");
    std::vector<topology::NodeReport> nvlink;
    if (nodes) {
      auto parsed = parse_nmx_compute_nodes(*nodes, where(kComputeNodesPath), d.warnings);
      if (parsed) {
        nvlink = std::move(*parsed);
      } else {
        d.warnings.push_back("no NVLink domains from NMX: " + parsed.error().message());
      }
    } else {
      d.warnings.push_back("no NVLink domains from NMX: " + nodes.error().message());
    }
    d.notes.push_back("NetQ " + url_.server() + ": " + std::to_string(used) + " premises, " +
                      std::to_string(topo.switches) + " switches, " + std::to_string(topo.hosts) +
                      " hosts, " + std::to_string(topo.cables) + " cables, " + std::to_string(nvlink.size()) +
                      " compute nodes in NVLink domains, in " + std::to_string(requests_) + " request(s)");
    for (auto& w : topo.warnings) d.warnings.push_back(std::move(w));
    d.graph = std::move(topo.graph);
    d.reports = std::move(nvlink);
    return d;
  }

 private:
  void log(const std::string& line) const {
    if (deps_.log) deps_.log(line);
  }
  std::string where(const std::string& path) const { return url_.server() + url_.path + path; }
  std::expected<json, Error> parse_object(const std::string& text, const std::string& what) const {
    json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!doc.is_object())
      return fail(ErrorCode::kParse, "NetQ at " + url_.server() + ": " + what + " is not a JSON object");
    return doc;
  }
  std::expected<std::string, Error> token_of(const json& doc, const std::string& what) const {
    auto it = doc.find("access_token");
    if (it == doc.end() || !it->is_string() || it->get<std::string>().empty())
      return fail(ErrorCode::kParse, "NetQ at " + url_.server() + ": " + what + " has no access_token");
    if (auto ok = net::check_header_token(it->get<std::string>(),
                                          "NetQ at " + url_.server() + ": " + what + "'s access_token");
        !ok)
      return std::unexpected(Error(ErrorCode::kParse, ok.error().message()));
    return it->get<std::string>();
  }
  std::expected<std::string, Error> out_of_time(const std::string& where, const std::string& last,
                                                int attempts) const {
    return fail(ErrorCode::kUnavailable,
                where + ": " + (last.empty() ? "" : last + "; ") + "the NetQ time budget of " +
                    std::to_string(config_.timeout.count()) + "ms (timeout) is spent after " +
                    std::to_string(attempts) + " attempt(s)");
  }

  net::HttpUrl url_;
  std::unique_ptr<net::HttpTransport> transport_;
  std::string user_;
  std::string password_;
  std::string origin_;
  const NetqConfig& config_;
  NetqRunDeps deps_;
  int requests_ = 0;
  std::chrono::milliseconds spent_{0};
};

const std::vector<ConfigKey>& netq_keys() {
  static const std::vector<ConfigKey> keys = rest_endpoint_keys(netq_service());
  return keys;
}

std::expected<SettingsPtr, Error> parse_netq_config(const YAML::Node& node, const ConfigAt& at) {
  ConfigBlock block(node, at);
  if (auto ok = block.only(netq_keys()); !ok) return std::unexpected(ok.error());
  auto c = std::make_shared<NetqConfig>();
  if (auto ok = read_rest_endpoint(block, *c); !ok) return std::unexpected(ok.error());
  if (c->credentials_dir.empty() && c->secret_name.empty())
    return at.bad("credentialsDir", "NetQ needs credentials: credentialsDir or credentials.secretRef");
  return c;
}

class NetqSource final : public Discoverer {
 public:
  NetqSource(NetqConfig config, DiscoveryDeps deps) : config_(std::move(config)), deps_(std::move(deps)) {}
  std::string name() const override { return "netq:" + config_.endpoint; }
  std::expected<Discovery, Error> discover() override {
    NetqRunDeps run;
    run.log = deps_.log;
    auto secret = read_endpoint_secret(config_, deps_, netq_service());
    if (!secret) return std::unexpected(secret.error());
    if (*secret) {
      run.credentials = std::move((*secret)->data);
      run.credentials_origin = std::move((*secret)->origin);
    }
    return discover_netq(config_, run);
  }

 private:
  NetqConfig config_;
  DiscoveryDeps deps_;
};

}  // namespace

std::expected<Discovery, Error> discover_netq(const NetqConfig& config, const NetqRunDeps& deps) {
  auto url = net::parse_http_url(config.endpoint, {.what = "NetQ URL",
                                                   .scheme_hint = ": expected netq:https://HOST[:PORT]",
                                                   .credentials_hint = "; put them in credentialsDir"});
  if (!url) return std::unexpected(url.error());
  if (auto ok = refuse_cleartext(*url, config, netq_service()); !ok) return std::unexpected(ok.error());
  std::string user, password, origin;
  if (!deps.credentials.empty()) {
    auto value = [&](const char* key) {
      auto it = deps.credentials.find(key);
      return it == deps.credentials.end() ? std::string() : trim_credential(it->second);
    };
    user = value("username");
    password = value("password");
    origin = deps.credentials_origin;
    if (user.empty() || password.empty())
      return fail(ErrorCode::kNotFound,
                  "NetQ credentials " + origin + " hold not both 'username' and 'password'");
  } else {
    if (config.credentials_dir.empty())
      return fail(ErrorCode::kInvalidArgument,
                  "NetQ at " + url->origin() + " needs credentials: credentialsDir or credentials.secretRef");
    const std::filesystem::path dir(config.credentials_dir);
    auto u = read_credential_file(dir / "username");
    if (!u) return std::unexpected(u.error().context("NetQ username"));
    auto p = read_credential_file(dir / "password");
    if (!p) return std::unexpected(p.error().context("NetQ password"));
    user = *u;
    password = *p;
    origin = config.credentials_dir;
  }
  auto tc = rest_transport_config(*url, config, netq_service());
  if (!tc) return std::unexpected(tc.error());
  auto transport = net::HttpTransport::create(*tc);
  if (!transport) return std::unexpected(transport.error().context("NetQ at " + url->origin()));
  const bool insecure_tls = url->tls && config.insecure;
  const bool cleartext = !url->tls;
  const std::string origin_url = url->origin();
  NetqClient client(std::move(*url), std::move(*transport), user, password, origin, config, deps);
  auto found = client.run();
  if (!found) return std::unexpected(fabric_answer_failure(found.error()));
  if (insecure_tls) found->warnings.push_back("netq: TLS certificate verification is off for " + origin_url);
  if (cleartext)
    found->warnings.push_back("netq: the NetQ credentials went in clear text to " + origin_url +
                              " (http://, allowed by insecureSkipVerify)");
  return found;
}

SourceEntry netq_source_entry() {
  return {.kind = "netq",
          .summary =
              "NVIDIA NetQ REST (Spectrum-X): netq:CONFIG.yaml, a file holding the agent's config block "
              "(endpoint, credentialsDir, caFile, ...)",
          .role = SourceRole::kLeader,
          .cache = CachePolicy::kInterval,
          .keys = netq_keys(),
          .parse_config = parse_netq_config,
          .parse_arg = [](const std::string& arg) -> std::expected<SettingsPtr, Error> {
            if (arg.empty())
              return fail(ErrorCode::kInvalidArgument, "--source netq needs a config file: netq:CONFIG.yaml");
            if (arg.starts_with("https://") || arg.starts_with("http://")) {
              YAML::Node node(YAML::NodeType::Map);
              node["endpoint"] = arg;
              return parse_netq_config(node, {"--source", "netq"});
            }
            auto text = io::read_bounded_file(arg, io::kConfigFileLimit);
            if (!text) return std::unexpected(text.error());
            auto yaml = io::load_yaml(*text, arg);
            if (!yaml) return std::unexpected(yaml.error());
            return parse_netq_config(*yaml, {arg, ""});
          },
          .factory = [](const SourceSpec& spec,
                        const DiscoveryDeps& deps) -> std::expected<std::unique_ptr<Discoverer>, Error> {
            return std::make_unique<NetqSource>(settings_of<NetqConfig>(spec), deps);
          }};
}

}  // namespace hypertopo::discoverers::netq
