#include "discoverers/ufm/ufm_source.h"

#include <optional>

#include "discoverers/registry/source_config.h"

namespace hypertopo::discoverers::ufm {
namespace {

class UfmSource final : public Discoverer {
 public:
  UfmSource(UfmSourceConfig config, DiscoveryDeps deps, std::shared_ptr<UfmSharedRunState> shared)
      : config_(std::move(config)), deps_(std::move(deps)), shared_(std::move(shared)) {}
  std::string name() const override { return "ufm:" + config_.endpoint; }
  std::expected<Discovery, Error> discover() override {
    UfmClientOptions options;
    options.url = config_.endpoint;
    options.credentials_dir = config_.credentials_dir;
    options.ca_file = config_.ca_file;
    options.insecure = config_.insecure;
    options.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(config_.timeout_seconds * 1000));
    options.max_response_bytes = config_.max_bytes;
    options.page_size = config_.page_size;
    std::vector<std::string> warnings;
    options.log = [&](const std::string& line) {
      // The client's warnings (TLS verification off) are the admin's business: they go with the
      // result only, so the agent logs each once per change and counts it, and the command line
      // prints it once.
      // Whoever prints a warning says "warning:" itself: the client's own word is taken out
      // ("ufm: warning: X" -> "ufm: X"), or the command line would print it twice.
      if (const auto at = line.find("warning: "); at != std::string::npos) {
        warnings.push_back(line.substr(0, at) + line.substr(at + 9));
      } else if (deps_.log) {
        deps_.log(line);
      }
    };
    if (!config_.secret_name.empty()) {
      const std::string where =
          "Secret " +
          (config_.secret_namespace.empty() ? std::string("(agent namespace)") : config_.secret_namespace) +
          "/" + config_.secret_name;
      if (!deps_.read_secret) {
        return fail(ErrorCode::kInvalidArgument,
                    "UFM credentials name " + where +
                        ", which only the agent can read; here mount it and give the directory");
      }
      // Read on every run: a rotated password is used from the next run on.
      auto data = deps_.read_secret(config_.secret_namespace, config_.secret_name);
      if (!data) return std::unexpected(data.error().context("reading the UFM credentials " + where));
      options.credentials = std::move(*data);
      options.credentials_origin = where;
    }
    std::unique_lock<std::mutex> lock;
    std::optional<UfmRunState> own;
    UfmRunState* state = nullptr;
    if (shared_) {
      lock = std::unique_lock(shared_->mutex, std::try_to_lock);
      if (lock.owns_lock()) state = &shared_->state;
    }
    if (!state) state = &own.emplace();
    auto found = discover_ufm(options, nullptr, state);
    if (!found) return found;
    for (auto& w : warnings) found->warnings.push_back(std::move(w));
    return found;
  }

 private:
  UfmSourceConfig config_;
  DiscoveryDeps deps_;
  std::shared_ptr<UfmSharedRunState> shared_;
};

const std::vector<ConfigKey> kUfmKeys = {
    {"endpoint", "UFM's URL, https://HOST[:PORT][/prefix] (required)"},
    {"credentials",
     "{secretRef: {name, namespace}}: a Secret with token, or username and password, read "
     "through the API on every run (namespace default: the agent's)"},
    {"credentialsDir", "a directory holding the same keys as files (a mounted Secret)"},
    {"caFile", "PEM CA bundle that signs UFM's certificate (default: the system store)"},
    {"insecureSkipVerify", "do not verify UFM's certificate (default false; warned on every run)"},
    {"timeout", "time for the whole fetch, a duration (30s, 2m) or seconds (default 30s)"},
    {"maxBytes", "largest response accepted, a size (512Mi, 2Gi) or bytes (default 512Mi)"},
    {"pageSize", "ask for pages of N records (default: unpaged)"}};

std::expected<SettingsPtr, Error> parse_ufm_config(const YAML::Node& node, const ConfigAt& at) {
  ConfigBlock block(node, at);
  if (auto ok = block.only(kUfmKeys); !ok) return std::unexpected(ok.error());
  auto c = std::make_shared<UfmSourceConfig>();
  auto endpoint = block.required_text("endpoint");
  if (!endpoint) return std::unexpected(endpoint.error());
  c->endpoint = *endpoint;
  if (!c->endpoint.starts_with("https://") && !c->endpoint.starts_with("http://"))
    return at.bad("endpoint", "'" + c->endpoint + "' is not an http(s):// URL");
  if (c->endpoint.find('@') != std::string::npos)
    return at.bad("endpoint", "must not carry credentials; use credentials.secretRef or credentialsDir");
  const std::pair<const char*, std::string*> paths[] = {{"credentialsDir", &c->credentials_dir},
                                                        {"caFile", &c->ca_file}};
  for (const auto& [key, target] : paths) {
    auto t = block.text(key);
    if (!t) return std::unexpected(t.error());
    if (*t) *target = **t;
  }
  if (block.has("credentials")) {
    ConfigBlock credentials(block.child("credentials"), block.at("credentials"));
    if (auto ok = credentials.only({{"secretRef", ""}}); !ok) return std::unexpected(ok.error());
    ConfigBlock ref(credentials.child("secretRef"), credentials.at("secretRef"));
    if (!credentials.has("secretRef")) return credentials.where().bad("secretRef", "is required");
    if (auto ok = ref.only({{"name", ""}, {"namespace", ""}}); !ok) return std::unexpected(ok.error());
    auto name = ref.required_text("name");
    if (!name) return std::unexpected(name.error());
    c->secret_name = *name;
    auto ns = ref.text("namespace");
    if (!ns) return std::unexpected(ns.error());
    if (*ns) c->secret_namespace = **ns;
    if (!c->credentials_dir.empty())
      return at.bad("credentials", "give either credentials.secretRef or credentialsDir, not both");
  }
  auto insecure = block.boolean("insecureSkipVerify");
  if (!insecure) return std::unexpected(insecure.error());
  if (*insecure) c->insecure = **insecure;
  if (c->insecure && !c->ca_file.empty())
    return at.bad("insecureSkipVerify", "contradicts caFile: verify against the CA, or do not verify");
  auto timeout = block.duration("timeout", std::chrono::milliseconds(1), std::chrono::hours(1));
  if (!timeout) return std::unexpected(timeout.error());
  if (*timeout) c->timeout_seconds = std::chrono::duration<double>(**timeout).count();
  auto max_bytes = block.byte_size("maxBytes", 1, 64ULL << 30);
  if (!max_bytes) return std::unexpected(max_bytes.error());
  if (*max_bytes) c->max_bytes = **max_bytes;
  auto page = block.number("pageSize", 1, 1e7);
  if (!page) return std::unexpected(page.error());
  if (*page) c->page_size = static_cast<std::size_t>(**page);
  return c;
}

}  // namespace

std::expected<Discovery, Error> discover_ufm(const UfmClientOptions& options, UfmFetchStats* stats,
                                             UfmRunState* reuse) {
  std::optional<UfmRunState> own;
  UfmRunState& state = reuse ? *reuse : own.emplace();
  state.fabric.clear();
  auto client = UfmClient::create(options, &state.parser);
  if (!client) return std::unexpected(client.error());
  const auto& ports = state.fabric.ports;
  const auto& links = state.fabric.links;
  auto fetched = (*client)->fetch_ports(state.fabric);
  if (fetched) fetched = (*client)->fetch_links(state.fabric);
  if (stats) *stats = (*client)->stats();
  if (!fetched) return std::unexpected(fetched.error());
  const UfmFetchStats& s = (*client)->stats();
  if (ports.empty() && s.skipped_records > 0) {
    return fail(ErrorCode::kParse,
                "UFM at " + (*client)->base_url() + ": no usable port record: " + s.skip_reasons.front());
  }
  // A fabric with no ports is no fabric: an empty answer is a UFM that lost its view (or the wrong
  // UFM), as an empty capture is, and must not publish an empty tree.
  if (ports.empty()) {
    return fail(ErrorCode::kParse, "UFM at " + (*client)->base_url() + ": resources/ports returned no ports");
  }
  Discovery found;
  found.warnings = s.skip_reasons;
  found.graph = build_ufm_graph(state.fabric, &found.warnings);
  found.notes.push_back("UFM " + (*client)->base_url() + ": " + std::to_string(ports.size()) + " ports, " +
                        std::to_string(links.size()) + " links in " + std::to_string(s.requests) +
                        " request(s); " + std::to_string(found.graph->switch_count()) + " switches, " +
                        std::to_string(found.graph->endpoint_count()) + " CA ports");
  return found;
}

std::expected<std::unique_ptr<Discoverer>, Error> make_ufm_source(const SourceSpec& spec,
                                                                  const DiscoveryDeps& deps,
                                                                  std::shared_ptr<UfmSharedRunState> shared) {
  return std::make_unique<UfmSource>(settings_of<UfmSourceConfig>(spec), deps, std::move(shared));
}

SourceEntry ufm_source_entry() {
  return {.kind = "ufm",
          .summary =
              "UFM Enterprise REST: ufm:https://HOST[:PORT] (with --ufm-credentials DIR, --ufm-ca FILE, "
              "--ufm-insecure)",
          .role = SourceRole::kLeader,
          .cache = CachePolicy::kInterval,
          .keys = kUfmKeys,
          .parse_config = parse_ufm_config,
          .parse_arg = [](const std::string& arg) -> std::expected<SettingsPtr, Error> {
            if (arg.empty())
              return fail(ErrorCode::kInvalidArgument,
                          "--source ufm needs the server: ufm:https://HOST[:PORT]");
            YAML::Node node(YAML::NodeType::Map);
            node["endpoint"] = arg;
            return parse_ufm_config(node, {"--source", "ufm"});
          },
          .factory = [shared = std::make_shared<UfmSharedRunState>()](
                         const SourceSpec& spec,
                         const DiscoveryDeps& deps) { return make_ufm_source(spec, deps, shared); }};
}

}  // namespace hypertopo::discoverers::ufm
