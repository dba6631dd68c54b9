#include "discoverers/ibnetdiscover/ibnetdiscover_source.h"

#include "discoverers/ibnetdiscover/ibnetdiscover_parser.h"

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
    d.notes = std::move(parsed->warnings);
    d.notes.insert(d.notes.begin(), path_.string() + ": " + std::to_string(parsed->switches) + " switches, " +
                                        std::to_string(parsed->cas) + " CAs, " +
                                        std::to_string(parsed->graph.links().size()) + " links");
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
  if (spec.arg.empty()) {
    return fail(ErrorCode::kInvalidArgument,
                "needs a capture file: --source ibnetdiscover:PATH (or :- for stdin)");
  }
  return std::make_unique<IbnetdiscoverSource>(spec.arg, deps.stdin_stream);
}

}  // namespace hypertopo::discoverers
