#include "discoverers/ib-fabric/ib_fabric_source.h"

#include <charconv>

#include "discoverers/ib-fabric/compute_port_walk.h"
#include "discoverers/ib-fabric/fabric_walk.h"
#include "discoverers/ib-fabric/simulated_fabric.h"
#include "discoverers/ib-fabric/umad_ports.h"
#include "discoverers/ib-local/ib_local_probe.h"
#include "discoverers/registry/source_config.h"
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
    Discovery found;
    WalkOptions options = options_;
    options.notes = &found.notes;
    auto graph = ib_fabric::walk_fabric(options);
    if (!graph) return std::unexpected(graph.error());
    found.graph = std::move(*graph);
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
    // On the host, the CAs libibumad lists are the ones a walk can open (and the only ones ibsim's
    // umad2sim shows); a probe root other than "/" is a captured or test tree, read as sysfs.
    const bool host = root_ == std::filesystem::path("/");
    std::expected<std::vector<topology::HcaDevice>, Error> hcas = [&]() -> decltype(hcas) {
      if (host) return ib_fabric::list_umad_cas();
      auto facts = ib_local::probe_ib_local({.root = root_});
      if (!facts) return std::unexpected(facts.error());
      return std::move(facts->hcas);
    }();
    if (!hcas) return std::unexpected(hcas.error());
    auto ports = ib_fabric::select_compute_ports(*hcas, excluded_);
    if (!ports) return std::unexpected(ports.error());
    if (ports->empty()) {
      std::string looked = host ? "libibumad lists " : (root_ / "sys/class/infiniband").string() + ": ";
      looked += std::to_string(hcas->size()) + " CA(s)";
      for (std::size_t i = 0; i < hcas->size(); ++i) looked += (i ? ", " : ": ") + (*hcas)[i].name;
      return fail(ErrorCode::kNotFound,
                  "no local InfiniBand port is up (" + looked +
                      "; a walk needs a port in state INIT, ARMED or ACTIVE); name one with "
                      "ibnetdisc:CA[:PORT] or replay a capture with ibnetdisc-cache:PATH");
    }
    Discovery found;
    auto graph = ib_fabric::walk_compute_ports(
        *ports,
        [&](const ib_fabric::LocalPort& port) {
          WalkOptions options;
          options.ca_name = port.ca;
          options.ca_port = port.port;
          options.notes = &found.notes;
          if (!work_dir_.empty())
            options.cache_path =
                work_dir_ / ("ibnetdisc-" + port.ca + "-" + std::to_string(port.port) + ".ibnd");
          return ib_fabric::walk_fabric(options);
        },
        &found.notes);
    if (!graph) return std::unexpected(graph.error());
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
    if (!graph) return std::unexpected(graph.error());
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
    if (!sim) return std::unexpected(sim.error());
    auto graph = (*sim)->walk(ib_fabric::hypertopo_walker_command());
    if (!graph) return std::unexpected(graph.error());
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

std::string IbnetdiscConfig::describe() const {
  if (!ca.empty()) return port > 0 ? ca + ":" + std::to_string(port) : ca;
  if (exclude.empty()) return "";
  std::string out = "exclude=";
  for (std::size_t i = 0; i < exclude.size(); ++i) out += (i ? "," : "") + exclude[i];
  return out;
}

namespace {

const std::vector<ConfigKey> kIbnetdiscKeys = {
    {"ca", "local CA to walk from (default: every local compute port, merged by GUID)"},
    {"port", "port of that CA, 1-255 (default: its first ACTIVE port)"},
    {"exclude", "with no ca: HCA names (RE2) not to walk from, e.g. storage HCAs"}};
const std::vector<ConfigKey> kCacheKeys = {{"file", "a recorded walk (ibnd cache) to replay"}};
const std::vector<ConfigKey> kIbsimKeys = {{"netFile", "an ibsim net file, simulated and walked live"}};

std::expected<void, Error> check_ibnetdisc(const IbnetdiscConfig& c, const std::string& where) {
  if (!c.ca.empty() && !c.exclude.empty())
    return fail(ErrorCode::kInvalidArgument, where + ": exclude applies only when no ca is named");
  if (c.ca.empty() && c.port != 0) return fail(ErrorCode::kInvalidArgument, where + ": port needs a ca");
  if (auto ok = topology::compile_patterns(c.exclude, where + " exclude"); !ok)
    return std::unexpected(ok.error());
  return {};
}

std::expected<SettingsPtr, Error> parse_ibnetdisc_config(const YAML::Node& node, const ConfigAt& at) {
  ConfigBlock block(node, at);
  if (auto ok = block.only(kIbnetdiscKeys); !ok) return std::unexpected(ok.error());
  auto c = std::make_shared<IbnetdiscConfig>();
  auto ca = block.text("ca");
  if (!ca) return std::unexpected(ca.error());
  if (*ca) c->ca = **ca;
  auto port = block.number("port", 1, 255);
  if (!port) return std::unexpected(port.error());
  if (*port) {
    if (**port != static_cast<int>(**port)) return at.bad("port", "must be a whole number from 1 to 255");
    c->port = static_cast<int>(**port);
  }
  auto exclude = block.strings("exclude");
  if (!exclude) return std::unexpected(exclude.error());
  c->exclude = std::move(*exclude);
  if (auto ok = check_ibnetdisc(*c, at.file + ": " + at.path); !ok) return std::unexpected(ok.error());
  return c;
}

// ibnetdisc[:CA[:PORT]] or ibnetdisc:exclude=RE,...
std::expected<SettingsPtr, Error> parse_ibnetdisc_arg(const std::string& arg) {
  auto c = std::make_shared<IbnetdiscConfig>();
  if (arg.starts_with("exclude=")) {
    std::string_view list = std::string_view(arg).substr(8);
    while (!list.empty()) {
      auto comma = list.find(',');
      if (comma) c->exclude.emplace_back(list.substr(0, comma));
      if (comma == std::string_view::npos) break;
      list.remove_prefix(comma + 1);
    }
  } else if (!arg.empty()) {
    std::string_view text = arg;
    auto colon = text.find(':');
    c->ca = std::string(text.substr(0, colon));
    if (colon != std::string_view::npos) {
      auto port = text.substr(colon + 1);
      auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), c->port);
      if (ec != std::errc{} || ptr != port.data() + port.size() || c->port < 1 || c->port > 255) {
        return fail(ErrorCode::kInvalidArgument, "--source ibnetdisc:" + arg + ": port '" +
                                                     std::string(port) +
                                                     "' is not a number from 1 to 255 (expected "
                                                     "ibnetdisc[:CA[:PORT]])");
      }
    }
  }
  if (auto ok = check_ibnetdisc(*c, "--source ibnetdisc:" + arg); !ok) return std::unexpected(ok.error());
  return c;
}

}  // namespace

std::expected<std::unique_ptr<Discoverer>, Error> make_ibnetdisc_source(const SourceSpec& spec,
                                                                        const DiscoveryDeps& deps) {
  const auto& c = settings_of<IbnetdiscConfig>(spec);
  if (c.ca.empty()) {
    return std::make_unique<ComputePortsWalkSource>(deps.root, c.exclude, deps.work_dir, spec.to_string());
  }
  WalkOptions options;
  options.ca_name = c.ca;
  options.ca_port = c.port;
  if (!deps.work_dir.empty()) options.cache_path = deps.work_dir / "ibnetdisc.ibnd";
  return std::make_unique<LiveWalkSource>(std::move(options), spec.to_string());
}

std::expected<std::unique_ptr<Discoverer>, Error> make_ibnetdisc_cache_source(const SourceSpec& spec,
                                                                              const DiscoveryDeps&) {
  return std::make_unique<CacheSource>(settings_of<IbnetdiscCacheConfig>(spec).file, spec.to_string());
}

std::expected<std::unique_ptr<Discoverer>, Error> make_ibsim_source(const SourceSpec& spec,
                                                                    const DiscoveryDeps& deps) {
  return std::make_unique<SimulatorSource>(settings_of<IbsimConfig>(spec).net_file, deps.work_dir,
                                           spec.to_string());
}

std::expected<void, Error> register_ib_fabric_sources(DiscovererRegistry& registry) {
  SourceEntry walk{.kind = "ibnetdisc",
                   .summary =
                       "a live subnet walk with libibnetdisc: ibnetdisc[:CA[:PORT]] (no CA: from every "
                       "local compute port, merged by GUID; ibnetdisc:exclude=RE,... skips HCAs)",
                   .role = SourceRole::kLeader,
                   .cache = CachePolicy::kInterval,
                   .keys = kIbnetdiscKeys,
                   .parse_config = parse_ibnetdisc_config,
                   .parse_arg = parse_ibnetdisc_arg,
                   .factory = make_ibnetdisc_source};
  if (auto ok = registry.add(std::move(walk)); !ok) return ok;
  SourceEntry cache{
      .kind = "ibnetdisc-cache",
      .summary = "a recorded walk (ibnd cache): ibnetdisc-cache:PATH",
      .role = SourceRole::kLeader,
      .cache = CachePolicy::kInterval,
      .keys = kCacheKeys,
      .parse_config = single_key_parser(kCacheKeys, &IbnetdiscCacheConfig::file),
      .parse_arg = single_arg_parser("a file: ibnetdisc-cache:PATH", &IbnetdiscCacheConfig::file),
      .factory = make_ibnetdisc_cache_source};
  if (auto ok = registry.add(std::move(cache)); !ok) return ok;
  SourceEntry sim{.kind = "ibsim",
                  .summary = "an ibsim net file, simulated and walked live: ibsim:NETFILE",
                  .role = SourceRole::kLeader,
                  .cache = CachePolicy::kInterval,
                  .keys = kIbsimKeys,
                  .parse_config = single_key_parser(kIbsimKeys, &IbsimConfig::net_file),
                  .parse_arg = single_arg_parser("a net file: ibsim:NETFILE", &IbsimConfig::net_file),
                  .factory = make_ibsim_source};
  return registry.add(std::move(sim));
}

}  // namespace hypertopo::discoverers
