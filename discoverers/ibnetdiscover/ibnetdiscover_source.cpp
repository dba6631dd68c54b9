#include "discoverers/ibnetdiscover/ibnetdiscover_source.h"

#include "discoverers/ibnetdiscover/ibnetdiscover_parser.h"
#include "discoverers/registry/source_config.h"

namespace hypertopo::discoverers {
namespace {

class IbnetdiscoverSource : public Discoverer {
 public:
  IbnetdiscoverSource(std::filesystem::path path, std::istream* in) : path_(std::move(path)), in_(in) {}
  std::string name() const override { return "ibnetdiscover"; }

  std::expected<Discovery, Error> discover() override {
    auto parsed = parse_ibnetdiscover_file(path_, in_);
    if (!parsed) return std::unexpected(parsed.error());
    Discovery d;
    d.warnings = std::move(parsed->warnings);
    d.notes.push_back(path_.string() + ": " + std::to_string(parsed->switches) + " switches, " +
                      std::to_string(parsed->cas) + " CAs, " + std::to_string(parsed->graph.links().size()) +
                      " links");
    d.graph = std::move(parsed->graph);
    return d;
  }

 private:
  std::filesystem::path path_;
  std::istream* in_;
};

}  // namespace

std::expected<std::unique_ptr<Discoverer>, Error> make_ibnetdiscover_source(const SourceSpec& spec,
                                                                            const DiscoveryDeps& deps) {
  return std::make_unique<IbnetdiscoverSource>(settings_of<IbnetdiscoverConfig>(spec).file,
                                               deps.stdin_stream);
}

SourceEntry ibnetdiscover_source_entry() {
  const std::vector<ConfigKey> keys = {{"file", "a saved ibnetdiscover capture ('-' reads stdin)"}};
  return {.kind = "ibnetdiscover",
          .summary = "a saved ibnetdiscover capture: ibnetdiscover:PATH ('-' reads stdin)",
          .role = SourceRole::kLeader,
          .cache = CachePolicy::kInterval,
          .keys = keys,
          .parse_config = single_key_parser(keys, &IbnetdiscoverConfig::file),
          .parse_arg = single_arg_parser("a capture file: --source ibnetdiscover:PATH (or :- for stdin)",
                                         &IbnetdiscoverConfig::file),
          .factory = make_ibnetdiscover_source};
}

}  // namespace hypertopo::discoverers
