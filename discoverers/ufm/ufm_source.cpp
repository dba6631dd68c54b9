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
    static_cast<RestEndpoint&>(options) = config_;
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
    auto secret = read_endpoint_secret(config_, deps_, ufm_service());
    if (!secret) return std::unexpected(secret.error());
    if (*secret) {
      options.credentials = std::move((*secret)->data);
      options.credentials_origin = std::move((*secret)->origin);
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

const std::vector<ConfigKey>& ufm_keys() {
  static const std::vector<ConfigKey> keys =
      rest_endpoint_keys(ufm_service(), {{"pageSize", "ask for pages of N records (default: unpaged)"}});
  return keys;
}

std::expected<SettingsPtr, Error> parse_ufm_config(const YAML::Node& node, const ConfigAt& at) {
  ConfigBlock block(node, at);
  if (auto ok = block.only(ufm_keys()); !ok) return std::unexpected(ok.error());
  auto c = std::make_shared<UfmSourceConfig>();
  if (auto ok = read_rest_endpoint(block, *c); !ok) return std::unexpected(ok.error());
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
  if (!fetched) return std::unexpected(fabric_answer_failure(fetched.error()));
  const UfmFetchStats& s = (*client)->stats();
  if (ports.empty() && s.skipped_records > 0) {
    return fail(ErrorCode::kUnavailable,
                "UFM at " + (*client)->base_url() + ": no usable port record: " + s.skip_reasons.front());
  }
  // A fabric with no ports is no fabric: an empty answer is a UFM that lost its view (or the wrong
  // UFM), as an empty capture is, and must not publish an empty tree.
  if (ports.empty()) {
    return fail(ErrorCode::kUnavailable,
                "UFM at " + (*client)->base_url() + ": resources/ports returned no ports");
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
          .keys = ufm_keys(),
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
