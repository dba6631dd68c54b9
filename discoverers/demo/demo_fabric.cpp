#include "discoverers/demo/demo_fabric.h"

#include <cstdio>

#include "discoverers/ib-fabric/simulated_fabric.h"
#include "discoverers/registry/source_config.h"

namespace hypertopo::discoverers {
namespace {

using topology::FabricGraph;
using topology::VertexId;

std::string guid(std::uint64_t kind, std::uint64_t n) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>((kind << 40) | n));
  return buf;
}

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return s;
}

std::string num(int v, int width) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%0*d", width, v);
  return buf;
}

}  // namespace

FabricGraph generate_demo_fabric(const DemoFabricSpec& s) {
  FabricGraph g;
  const std::string P = upper(s.prefix);
  const int pods = (s.scalable_units + s.sus_per_pod - 1) / s.sus_per_pod;
  const std::size_t hosts =
      static_cast<std::size_t>(s.scalable_units) * static_cast<std::size_t>(s.hosts_per_su);
  g.reserve(hosts * static_cast<std::size_t>(s.rails + 1) + 4096,
            hosts * static_cast<std::size_t>(s.rails + 1) * 2);
  std::uint64_t sw_serial = 0, ca_serial = 0;
  std::vector<VertexId> switches;
  std::vector<int> next_port;
  auto add_switch = [&](const std::string& name, const std::string& model) {
    VertexId v = g.add_switch(guid(0xb83fd2, ++sw_serial), "MF0;" + name + ":" + model + "/U1");
    switches.push_back(v);
    next_port.resize(g.vertex_count() + 1, 1);
    next_port[v] = 1;
    return v;
  };
  auto port_of = [&](VertexId sw) {
    if (next_port.size() <= sw) next_port.resize(sw + 1, 1);
    return next_port[sw]++;
  };
  auto add_ca = [&](const std::string& desc, int port) {
    VertexId v = g.add_endpoint(guid(0xe09d73, ++ca_serial), desc);
    g.vertex(v).node_guid = g.vertex(v).id;
    g.vertex(v).port = port;
    return v;
  };

  // Cores, then per pod its spines, then per SU one leaf per rail.
  std::vector<VertexId> cores;
  for (int c = 1; c <= s.cores; ++c) cores.push_back(add_switch(P + "-CORE-" + num(c, 2), "QM9790"));
  int core_cursor = 0;
  std::vector<std::vector<VertexId>> pod_spines(static_cast<std::size_t>(pods));
  for (int p = 1; p <= pods; ++p) {
    for (int k = 1; k <= s.spines_per_pod; ++k) {
      VertexId sp = add_switch(P + "-POD" + num(p, 2) + "-SPINE-" + num(k, 2), "QM9790");
      pod_spines[static_cast<std::size_t>(p - 1)].push_back(sp);
      for (int l = 0; l < s.core_links_per_spine && !cores.empty(); ++l) {
        VertexId core = cores[static_cast<std::size_t>(core_cursor++ % static_cast<int>(cores.size()))];
        g.add_link(sp, port_of(sp), core, port_of(core), "4xNDR");
      }
    }
  }
  VertexId storage_leaf = 0;
  if (s.storage) {
    storage_leaf = add_switch(P + "-STORAGE-LEAF-01", "QM9790");
    for (VertexId core : cores) g.add_link(storage_leaf, port_of(storage_leaf), core, port_of(core), "4xNDR");
    for (int i = 1; i <= 4; ++i) {
      VertexId ca = add_ca(s.prefix + "-storage-" + num(i, 2) + " mlx5_0", 1);
      g.add_link(storage_leaf, port_of(storage_leaf), ca, 1, "4xNDR");
    }
  }
  int firmware_left = s.firmware_default_cas;
  for (int su = 1; su <= s.scalable_units; ++su) {
    const auto& spines = pod_spines[static_cast<std::size_t>((su - 1) / s.sus_per_pod)];
    std::vector<VertexId> leaves;
    for (int r = 1; r <= s.rails; ++r) {
      VertexId leaf = add_switch(P + "-SU" + num(su, 2) + "-LEAF-R" + num(r, 1), "QM9790");
      leaves.push_back(leaf);
      for (VertexId sp : spines) g.add_link(leaf, port_of(leaf), sp, port_of(sp), "4xNDR");
    }
    for (int h = 1; h <= s.hosts_per_su; ++h) {
      const std::string host = s.prefix + "-su" + num(su, 2) + "-node" + num(h, 3);
      for (int r = 1; r <= s.rails; ++r) {
        std::string desc = host + " mlx5_" + std::to_string(r - 1);
        // A few HCAs keep their firmware-default description (rdma-ndd not running at probe time).
        if (firmware_left > 0 && h == s.hosts_per_su && r == s.rails) {
          desc = "MT4129 ConnectX7   Mellanox Technologies";
          --firmware_left;
        }
        VertexId ca = add_ca(desc, 1);
        VertexId leaf = leaves[static_cast<std::size_t>(r - 1)];
        g.add_link(leaf, port_of(leaf), ca, 1, "4xNDR");
      }
      if (s.storage) {
        VertexId ca = add_ca(host + " mlx5_8", 1);
        g.add_link(storage_leaf, port_of(storage_leaf), ca, 1, "4xNDR");
      }
    }
  }
  if (s.sharp) {
    for (VertexId sw : switches) {
      VertexId an = add_ca("Mellanox Technologies Aggregation Node", 1);
      g.vertex(an).aggregation_node = true;
      g.add_link(sw, port_of(sw), an, 1, "4xNDR");
    }
  }
  return g;
}

topology::TreeBuilderOptions demo_builder_options() {
  topology::TreeBuilderOptions o;
  o.excluded_device_patterns = {"mlx5_8"};
  o.excluded_switch_patterns = {"STORAGE"};
  o.source = "hypertopo";
  return o;
}

DemoShape expected_demo_shape(const DemoFabricSpec& s) {
  DemoShape shape;
  shape.hosts = s.scalable_units * s.hosts_per_su;
  shape.tier1 = s.scalable_units;
  const int pods = (s.scalable_units + s.sus_per_pod - 1) / s.sus_per_pod;
  shape.tier2 = s.sus_per_pod > 1 ? pods : 0;
  shape.tier3 = (s.cores > 0 && pods > 1) ? 1 : 0;
  return shape;
}

namespace {

class DemoSource : public Discoverer {
 public:
  DemoSource(bool live, std::vector<std::string> walker) : live_(live), walker_(std::move(walker)) {}
  std::string name() const override { return "demo"; }
  std::expected<Discovery, Error> discover() override {
    DemoFabricSpec spec;
    Discovery d;
    auto model = generate_demo_fabric(spec);
    d.notes.push_back("built-in fabric: " + std::to_string(spec.scalable_units) + " scalable units x " +
                      std::to_string(spec.hosts_per_su) + " hosts x " + std::to_string(spec.rails) +
                      " rails, pod spines, core, a storage leaf and SHARP aggregation nodes (" +
                      std::to_string(model.switch_count()) + " switches, " +
                      std::to_string(model.endpoint_count()) + " CAs)");
    const auto opts = demo_builder_options();
    d.excluded_device_patterns = opts.excluded_device_patterns;
    d.excluded_switch_patterns = opts.excluded_switch_patterns;
    if (live_) {
      // Discover it for real: ibsim simulates the fabric and libibnetdisc walks it through umad2sim.
      std::string missing = ib_fabric::simulator_missing();
      if (missing.empty() && walker_.empty()) missing = "no walker program (run the hypertopo binary)";
      if (missing.empty()) {
        auto walked = ib_fabric::walk_simulated_graph(model, walker_);
        if (walked) {
          d.notes.push_back(
              "walked live with libibnetdisc on ibsim: " + std::to_string(walked->graph.switch_count()) +
              " switches, " + std::to_string(walked->graph.endpoint_count()) + " CA ports, " +
              std::to_string(walked->graph.links().size()) + " links");
          d.graph = std::move(walked->graph);
          return d;
        }
        missing = walked.error().message();
      }
      d.notes.push_back("live walk unavailable (" + missing +
                        "); using the in-process model of the same fabric");
    }
    d.graph = std::move(model);
    return d;
  }

 private:
  bool live_;
  std::vector<std::string> walker_;
};

}  // namespace

std::expected<std::unique_ptr<Discoverer>, Error> make_demo_source(const SourceSpec& spec,
                                                                   const DiscoveryDeps& deps) {
  return std::make_unique<DemoSource>(settings_of<DemoConfig>(spec).live, deps.ib_walker);
}

namespace {

std::expected<SettingsPtr, Error> demo_mode(const std::string& mode, const std::string& where) {
  auto c = std::make_shared<DemoConfig>();
  if (mode.empty() || mode == "live") return c;
  if (mode == "model") {
    c->live = false;
    return c;
  }
  return fail(ErrorCode::kInvalidArgument, where + "'" + mode + "' is not a demo mode: use live or model");
}

}  // namespace

SourceEntry demo_source_entry() {
  const std::vector<ConfigKey> keys = {{"mode", "live (walk the model on ibsim when installed) or model"}};
  return {.kind = "demo",
          .summary =
              "the built-in rail-optimised fabric, walked live on ibsim when installed (demo[:live|:model])",
          .role = SourceRole::kLeader,
          .cache = CachePolicy::kInterval,
          .keys = keys,
          .parse_config = [keys](const YAML::Node& node,
                                 const ConfigAt& at) -> std::expected<SettingsPtr, Error> {
            ConfigBlock block(node, at);
            if (auto ok = block.only(keys); !ok) return std::unexpected(ok.error());
            auto mode = block.text("mode");
            if (!mode) return std::unexpected(mode.error());
            return demo_mode(mode->value_or(""), at.file + ": " + at.key("mode") + ": ");
          },
          .parse_arg = [](const std::string& arg) { return demo_mode(arg, ""); },
          .factory = make_demo_source};
}

}  // namespace hypertopo::discoverers
