#include "discoverers/netq/netq_source.h"

#include <system_error>

#include "discoverers/netq/netq_topology.h"
#include "discoverers/registry/source_config.h"

namespace hypertopo::discoverers::netq {
namespace {

class NetqFileSource : public Discoverer {
 public:
  explicit NetqFileSource(NetqFileConfig config) : config_(std::move(config)) {}
  std::string name() const override { return "netq-file"; }
  std::expected<Discovery, Error> discover() override { return discover_netq_dir(config_); }

 private:
  NetqFileConfig config_;
};

// Notes and warnings for one answer; the graph and reports move into `d`.
void finish(NetqTopology topo, std::vector<topology::NodeReport> nvlink, const std::string& from,
            Discovery& d) {
  d.notes.push_back(from + ": " + std::to_string(topo.switches) + " switches, " + std::to_string(topo.hosts) +
                    " hosts, " + std::to_string(topo.cables) + " cables");
  for (auto& w : topo.warnings) d.warnings.push_back(std::move(w));
  d.graph = std::move(topo.graph);
  d.reports = std::move(nvlink);
}

}  // namespace

std::expected<Discovery, Error> discover_netq_dir(const NetqFileConfig& config) {
  const std::filesystem::path dir(config.dir);
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return fail(ErrorCode::kNotFound, config.dir + ": not a directory (netq-file reads " +
                                          kTopologyGraphFile + " and " + kComputeNodesFile + " from one)");
  }
  const auto graph_path = dir / kTopologyGraphFile;
  auto text = io::read_bounded_file(graph_path, config.max_bytes);
  if (!text) return std::unexpected(text.error());
  NetqTopology topo;
  if (auto ok = parse_netq_topology(*text, graph_path.string(), topo); !ok)
    return std::unexpected(ok.error());
  Discovery d;
  std::vector<topology::NodeReport> nvlink;
  const auto nodes_path = dir / kComputeNodesFile;
  if (std::filesystem::exists(nodes_path, ec)) {
    auto nodes_text = io::read_bounded_file(nodes_path, config.max_bytes);
    if (!nodes_text) return std::unexpected(nodes_text.error());
    auto parsed = parse_nmx_compute_nodes(*nodes_text, nodes_path.string(), d.warnings);
    if (!parsed) return std::unexpected(parsed.error());
    nvlink = std::move(*parsed);
    d.notes.push_back(nodes_path.string() + ": " + std::to_string(nvlink.size()) +
                      " compute nodes in NVLink domains");
  } else {
    d.notes.push_back(nodes_path.string() + " absent: no NVLink domains from NMX");
  }
  finish(std::move(topo), std::move(nvlink), graph_path.string(), d);
  return d;
}

SourceEntry netq_file_source_entry() {
  const std::vector<ConfigKey> keys = {
      {"dir",
       "a directory holding NetQ's saved answers, topologyGraph.json and (optional) "
       "computeNodes.json"},
      {"maxBytes", "the largest file read (default 256Mi)"}};
  return {.kind = "netq-file",
          .summary = "saved NVIDIA NetQ answers: netq-file:DIR (topologyGraph.json, computeNodes.json)",
          .role = SourceRole::kLeader,
          .cache = CachePolicy::kInterval,
          .keys = keys,
          .parse_config = [keys](const YAML::Node& node,
                                 const ConfigAt& at) -> std::expected<SettingsPtr, Error> {
            ConfigBlock block(node, at);
            if (auto ok = block.only(keys); !ok) return std::unexpected(ok.error());
            auto c = std::make_shared<NetqFileConfig>();
            auto dir = block.required_text("dir");
            if (!dir) return std::unexpected(dir.error());
            c->dir = *dir;
            auto max = block.byte_size("maxBytes", 1024, std::uint64_t{4} << 30);
            if (!max) return std::unexpected(max.error());
            if (*max) c->max_bytes = **max;
            return c;
          },
          .parse_arg = single_arg_parser("a directory: --source netq-file:DIR", &NetqFileConfig::dir),
          .factory = [](const SourceSpec& spec,
                        const DiscoveryDeps&) -> std::expected<std::unique_ptr<Discoverer>, Error> {
            return std::make_unique<NetqFileSource>(settings_of<NetqFileConfig>(spec));
          }};
}

}  // namespace hypertopo::discoverers::netq
