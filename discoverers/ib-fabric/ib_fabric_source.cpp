#include "discoverers/ib-fabric/ib_fabric_source.h"

#include <charconv>

#include "discoverers/ib-fabric/fabric_walk.h"
#include "discoverers/ib-fabric/simulated_fabric.h"

namespace hypertopo::discoverers {
namespace {

using ib_fabric::WalkOptions;

class LiveWalkSource : public Discoverer {
 public:
  LiveWalkSource(WalkOptions options, std::string spec)
      : options_(std::move(options)), spec_(std::move(spec)) {}
  std::string name() const override { return spec_; }
  std::expected<Discovery, Error> discover() override {
    auto graph = ib_fabric::walk_fabric(options_);
    if (!graph) return std::unexpected(graph.error().context("source " + spec_));
    Discovery found;
    found.graph = std::move(*graph);
    if (options_.cache_path) found.notes.push_back("walk recorded to " + options_.cache_path->string());
    return found;
  }

 private:
  WalkOptions options_;
  std::string spec_;
};

class CacheSource : public Discoverer {
 public:
  CacheSource(std::filesystem::path path, std::string spec)
      : path_(std::move(path)), spec_(std::move(spec)) {}
  std::string name() const override { return spec_; }
  std::expected<Discovery, Error> discover() override {
    auto graph = ib_fabric::load_fabric_cache(path_);
    if (!graph) return std::unexpected(graph.error().context("source " + spec_));
    Discovery found;
    found.graph = std::move(*graph);
    return found;
  }

 private:
  std::filesystem::path path_;
  std::string spec_;
};

class SimulatorSource : public Discoverer {
 public:
  SimulatorSource(std::filesystem::path netfile, std::filesystem::path work_dir, std::string spec)
      : netfile_(std::move(netfile)), work_dir_(std::move(work_dir)), spec_(std::move(spec)) {}
  std::string name() const override { return spec_; }
  std::expected<Discovery, Error> discover() override {
    ib_fabric::SimulatorOptions options;
    auto sim = ib_fabric::SimulatedFabric::start_file(netfile_, options);
    if (!sim) return std::unexpected(sim.error().context("source " + spec_));
    auto graph = (*sim)->walk(ib_fabric::hypertopo_walker_command());
    if (!graph) return std::unexpected(graph.error().context("source " + spec_));
    Discovery found;
    found.graph = std::move(*graph);
    found.notes.push_back("walked live on ibsim (" + std::to_string(found.graph->switch_count()) +
                          " switches, " + std::to_string(found.graph->endpoint_count()) + " CA ports)");
    return found;
  }

 private:
  std::filesystem::path netfile_;
  std::filesystem::path work_dir_;
  std::string spec_;
};

}  // namespace

std::expected<std::unique_ptr<Discoverer>, Error> make_ibnetdisc_source(const SourceSpec& spec,
                                                                        const DiscoveryDeps& deps) {
  WalkOptions options;
  std::string_view arg = spec.arg;
  auto colon = arg.find(':');
  options.ca_name = std::string(arg.substr(0, colon));
  if (colon != std::string_view::npos) {
    auto port = arg.substr(colon + 1);
    auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), options.ca_port);
    if (ec != std::errc{} || ptr != port.data() + port.size() || options.ca_port < 1 ||
        options.ca_port > 255) {
      return fail(ErrorCode::kInvalidArgument,
                  "--source " + spec.to_string() + ": port '" + std::string(port) +
                      "' is not a number from 1 to 255 (expected ibnetdisc[:CA[:PORT]])");
    }
  }
  if (!deps.work_dir.empty()) options.cache_path = deps.work_dir / "ibnetdisc.ibnd";
  return std::make_unique<LiveWalkSource>(std::move(options), spec.to_string());
}

std::expected<std::unique_ptr<Discoverer>, Error> make_ibnetdisc_cache_source(const SourceSpec& spec,
                                                                              const DiscoveryDeps&) {
  if (spec.arg.empty()) {
    return fail(ErrorCode::kInvalidArgument, "--source ibnetdisc-cache needs a file: ibnetdisc-cache:PATH");
  }
  return std::make_unique<CacheSource>(spec.arg, spec.to_string());
}

std::expected<std::unique_ptr<Discoverer>, Error> make_ibsim_source(const SourceSpec& spec,
                                                                    const DiscoveryDeps& deps) {
  if (spec.arg.empty())
    return fail(ErrorCode::kInvalidArgument, "--source ibsim needs a net file: ibsim:NETFILE");
  return std::make_unique<SimulatorSource>(spec.arg, deps.work_dir, spec.to_string());
}

std::expected<void, Error> register_ib_fabric_sources(DiscovererRegistry& registry) {
  if (auto ok = registry.add("ibnetdisc", "a live subnet walk with libibnetdisc: ibnetdisc[:CA[:PORT]]",
                             make_ibnetdisc_source);
      !ok) {
    return ok;
  }
  if (auto ok = registry.add("ibnetdisc-cache", "a recorded walk (ibnd cache): ibnetdisc-cache:PATH",
                             make_ibnetdisc_cache_source);
      !ok) {
    return ok;
  }
  return registry.add("ibsim", "an ibsim net file, simulated and walked live: ibsim:NETFILE",
                      make_ibsim_source);
}

}  // namespace hypertopo::discoverers
