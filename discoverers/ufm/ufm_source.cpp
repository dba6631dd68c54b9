#include "discoverers/ufm/ufm_source.h"

namespace hypertopo::discoverers::ufm {
namespace {

class UfmSource final : public Discoverer {
 public:
  UfmSource(UfmClientOptions options, std::string name)
      : options_(std::move(options)), name_(std::move(name)) {}
  std::string name() const override { return name_; }
  std::expected<Discovery, Error> discover() override { return discover_ufm(options_); }

 private:
  UfmClientOptions options_;
  std::string name_;
};

}  // namespace

std::expected<Discovery, Error> discover_ufm(const UfmClientOptions& options, UfmFetchStats* stats) {
  auto client = UfmClient::create(options);
  if (!client) return std::unexpected(client.error());
  std::vector<UfmPort> ports;
  std::vector<UfmLink> links;
  auto fetched = (*client)->fetch_ports(ports);
  if (fetched) fetched = (*client)->fetch_links(links);
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
  found.notes = s.skip_reasons;
  found.graph = build_ufm_graph(ports, links, &found.notes);
  found.notes.push_back("UFM " + (*client)->base_url() + ": " + std::to_string(ports.size()) + " ports, " +
                        std::to_string(links.size()) + " links in " + std::to_string(s.requests) +
                        " request(s); " + std::to_string(found.graph->switch_count()) + " switches, " +
                        std::to_string(found.graph->endpoint_count()) + " CA ports");
  return found;
}

std::expected<std::unique_ptr<Discoverer>, Error> make_ufm_source(const SourceSpec& spec,
                                                                  const DiscoveryDeps& deps) {
  auto options = parse_ufm_source_arg(spec.arg);
  if (!options) return std::unexpected(options.error());
  options->log = deps.log;
  // The name shown in outcomes: the server only, never the fragment's paths.
  return std::make_unique<UfmSource>(std::move(*options), "ufm:" + spec.arg.substr(0, spec.arg.find('#')));
}

}  // namespace hypertopo::discoverers::ufm
