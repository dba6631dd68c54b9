#include "discoverers/ib-fabric/ib_fabric_source.h"

#include <charconv>

#include "discoverers/ib-fabric/compute_port_walk.h"
#include "discoverers/ib-fabric/fabric_walk.h"
#include "discoverers/ib-fabric/simulated_fabric.h"
#include "discoverers/ib-local/ib_local_probe.h"
#include "topology/tree_builder.h"

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

// `ibnetdisc` with no CA: one walk per local compute port (each rail is its own subnet on a
// rail-optimised fabric), merged by GUID.
class ComputePortsWalkSource : public Discoverer {
 public:
  ComputePortsWalkSource(std::filesystem::path root, std::vector<std::string> excluded,
                         std::filesystem::path work_dir, std::string spec)
      : root_(std::move(root)),
        excluded_(std::move(excluded)),
        work_dir_(std::move(work_dir)),
        spec_(std::move(spec)) {}
  std::string name() const override { return spec_; }
  std::expected<Discovery, Error> discover() override {
    auto facts = ib_local::probe_ib_local({.root = root_});
    if (!facts) return std::unexpected(facts.error().context("source " + spec_));
    auto ports = ib_fabric::select_compute_ports(facts->hcas, excluded_);
    if (!ports) return std::unexpected(ports.error().context("source " + spec_));
    if (ports->empty()) {
      return fail(
          ErrorCode::kNotFound,
          "source " + spec_ + ": no local InfiniBand port is ACTIVE (looked at " +
              (root_ / "sys/class/infiniband").string() + ", " + std::to_string(facts->hcas.size()) +
              " HCA(s)); name one with ibnetdisc:CA[:PORT] or replay a capture with ibnetdisc-cache:PATH");
    }
    Discovery found;
    auto graph = ib_fabric::walk_compute_ports(
        *ports,
        [&](const ib_fabric::LocalPort& port) {
          WalkOptions options;
          options.ca_name = port.ca;
          options.ca_port = port.port;
          if (!work_dir_.empty())
            options.cache_path =
                work_dir_ / ("ibnetdisc-" + port.ca + "-" + std::to_string(port.port) + ".ibnd");
          return ib_fabric::walk_fabric(options);
        },
        &found.notes);
    if (!graph) return std::unexpected(graph.error().context("source " + spec_));
    found.graph = std::move(*graph);
    found.excluded_device_patterns = excluded_;
    return found;
  }

 private:
  std::filesystem::path root_;
  std::vector<std::string> excluded_;
  std::filesystem::path work_dir_;
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
  if (spec.arg.empty() || spec.arg.starts_with("exclude=")) {
    std::vector<std::string> excluded;
    if (!spec.arg.empty()) {
      std::string_view list = std::string_view(spec.arg).substr(8);
      while (!list.empty()) {
        auto comma = list.find(',');
        if (comma) excluded.emplace_back(list.substr(0, comma));
        if (comma == std::string_view::npos) break;
        list.remove_prefix(comma + 1);
      }
    }
    if (auto ok = topology::compile_patterns(excluded, "--source ibnetdisc:exclude="); !ok) {
      return std::unexpected(ok.error());
    }
    return std::make_unique<ComputePortsWalkSource>(deps.root, std::move(excluded), deps.work_dir,
                                                    spec.to_string());
  }
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
  if (auto ok = registry.add("ibnetdisc",
                             "a live subnet walk with libibnetdisc: ibnetdisc[:CA[:PORT]] (no CA: from every "
                             "local compute port, "
                             "merged by GUID; ibnetdisc:exclude=RE,... skips HCAs)",
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
