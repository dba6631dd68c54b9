#include "tests/support/ufm/ufm_generator.h"

#include <cstdint>
#include <cstdio>

namespace hypertopo::testing {
namespace {

std::string hex16(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

struct Builder {
  const UfmFabricShape& shape;
  GeneratedUfm out;

  std::string port_record(bool host, const std::string& guid, const std::string& system_guid, int number,
                          const std::string& system_name, const std::string& node_description,
                          const std::string& peer_guid, int peer_port, const std::string& peer_name) {
    std::string r = "{";
    r += "\"description\": \"" + std::string(host ? "Computer IB Port" : "Switch IB Port") + "\", ";
    r += "\"number\": " + std::to_string(number) + ", \"external_number\": " + std::to_string(number) + ", ";
    r += "\"physical_state\": \"Link Up\", \"logical_state\": \"Active\", ";
    if (shape.padding_fields) {
      r +=
          "\"path\": \"default(1) / " + std::string(host ? "Computer: " : "Switch: ") + system_name + " / " +
          std::to_string(number) + "\", \"tier\": " + (host ? "1" : "2") +
          ", \"lid\": " + std::to_string(number + 100) +
          ", \"mtu\": 4096, \"severity\": \"Info\", \"high_ber_severity\": \"N/A\", \"mirror\": \"disable\", "
          "\"capabilities\": [\"reset\", \"healthy_operations\", \"disable\", \"get_cables_info\"], "
          "\"enabled_speed\": [\"HDR\", \"NDR\"], \"supported_speed\": [\"HDR\", \"NDR\"], "
          "\"enabled_width\": [\"4x\"], \"module\": \"N/A\", \"system_ip\": \"10.0.0.1\", \"peer_lid\": "
          "\"7\", ";
    }
    r += "\"active_speed\": \"NDR\", \"active_width\": \"4x\", ";
    r += "\"dname\": \"" + std::to_string(number) + "\", \"name\": \"" + guid + "_" + std::to_string(number) +
         "\", ";
    r += "\"guid\": \"" + guid + "\", \"systemID\": \"" + system_guid + "\", ";
    r += "\"system_name\": \"" + system_name + "\", \"node_description\": \"" + node_description + "\", ";
    r += "\"peer\": \"" + peer_guid + "_" + std::to_string(peer_port) + "\", \"peer_guid\": \"" + peer_guid +
         "\", \"peer_node_guid\": \"" + peer_guid + "\", \"peer_node_name\": \"" + peer_name +
         "\", \"peer_port_dname\": \"" + std::to_string(peer_port) + "\"";
    r += "}";
    return r;
  }

  std::string link_record(const std::string& a, int pa, const std::string& b, int pb) {
    return "{\"source_guid\": \"" + a + "\", \"source_port\": \"" + std::to_string(pa) +
           "\", \"destination_guid\": \"" + b + "\", \"destination_port\": \"" + std::to_string(pb) +
           "\", \"source_port_dname\": \"" + std::to_string(pa) + "\", \"destination_port_dname\": \"" +
           std::to_string(pb) + "\", \"width\": \"IB_4x\", \"severity\": \"Info\", \"name\": \"" + a + "_" +
           std::to_string(pa) + ":" + b + "_" + std::to_string(pb) + "\", \"capabilities\": []}";
  }

  // A switch-to-switch (or switch-to-host) cable: both port records and the link record.
  void cable_switches(const std::string& a, const std::string& a_name, int pa, const std::string& b,
                      const std::string& b_name, int pb) {
    out.ports.push_back(port_record(false, a, a, pa, a_name, "MF0;" + a_name + ":MQM9700/U1", b, pb, b_name));
    out.ports.push_back(port_record(false, b, b, pb, b_name, "MF0;" + b_name + ":MQM9700/U1", a, pa, a_name));
    out.links.push_back(link_record(a, pa, b, pb));
  }
};

}  // namespace

GeneratedUfm generate_ufm_fabric(const UfmFabricShape& shape) {
  Builder b{shape, {}};
  const bool rail = shape.rails > 1;
  const int leaves_per_pod = rail ? shape.rails : shape.leaves_per_pod;
  auto switch_guid = [](int kind, int index) {
    return hex16(0x248a070300000000ull + kind * 0x100000ull + index);
  };
  std::vector<int> next_port;  // per switch, by a flat index
  auto leaf_index = [&](int pod, int leaf) { return pod * leaves_per_pod + leaf; };
  const int leaves = shape.pods * leaves_per_pod;
  const int spines = shape.pods * shape.spines_per_pod;
  next_port.assign(leaves + spines + shape.cores, 1);
  auto leaf_name = [](int i) { return "leaf-" + std::to_string(i); };
  auto spine_name = [](int i) { return "spine-" + std::to_string(i); };
  auto core_name = [](int i) { return "core-" + std::to_string(i); };
  // Hosts.
  int host = 0;
  for (int pod = 0; pod < shape.pods; ++pod) {
    int hosts_here = rail ? shape.hosts_per_leaf : leaves_per_pod * shape.hosts_per_leaf;
    for (int h = 0; h < hosts_here; ++h, ++host) {
      int hcas = rail ? shape.rails : 1;
      for (int r = 0; r < hcas; ++r) {
        int leaf = leaf_index(pod, rail ? r : h / shape.hosts_per_leaf);
        std::uint64_t node = 0xb8599f0300000000ull + static_cast<std::uint64_t>(host) * 0x100 + r * 0x10;
        std::string node_guid = hex16(node);
        std::string port_guid = hex16(node + 1);  // port GUID differs from the node GUID
        std::string lguid = switch_guid(1, leaf);
        int lport = next_port[leaf]++;
        std::string name = shape.host_prefix + std::to_string(host);
        std::string desc = shape.description_prefix + std::to_string(host) + " mlx5_" + std::to_string(r);
        b.out.ports.push_back(
            b.port_record(true, port_guid, node_guid, 1, name, desc, lguid, lport, leaf_name(leaf)));
        b.out.ports.push_back(b.port_record(false, lguid, lguid, lport, leaf_name(leaf),
                                            "MF0;" + leaf_name(leaf) + ":MQM9700/U1", port_guid, 1, name));
        b.out.links.push_back(b.link_record(lguid, lport, port_guid, 1));
        b.out.host_port_guids.push_back("0x" + port_guid);
        b.out.host_of_port.push_back(name);
      }
    }
  }
  b.out.hosts = host;
  // Leaves to their pod's spines, spines to every core.
  for (int pod = 0; pod < shape.pods; ++pod) {
    for (int l = 0; l < leaves_per_pod; ++l) {
      int leaf = leaf_index(pod, l);
      for (int s = 0; s < shape.spines_per_pod; ++s) {
        int spine = pod * shape.spines_per_pod + s;
        b.cable_switches(switch_guid(1, leaf), leaf_name(leaf), next_port[leaf]++, switch_guid(2, spine),
                         spine_name(spine), next_port[leaves + spine]++);
      }
    }
  }
  for (int spine = 0; spine < spines; ++spine) {
    for (int c = 0; c < shape.cores; ++c) {
      b.cable_switches(switch_guid(2, spine), spine_name(spine), next_port[leaves + spine]++,
                       switch_guid(3, c), core_name(c), next_port[leaves + spines + c]++);
    }
  }
  b.out.switches = leaves + spines + shape.cores;
  return std::move(b.out);
}

std::string json_list(const std::vector<std::string>& records) {
  std::size_t size = 2;
  for (const auto& r : records) size += r.size() + 2;
  std::string out;
  out.reserve(size);
  out += "[";
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (i) out += ",\n";
    out += records[i];
  }
  out += "]";
  return out;
}

std::string json_page(const std::vector<std::string>& records, std::size_t page, std::size_t rpp) {
  std::size_t begin = (page - 1) * rpp;
  std::vector<std::string> slice;
  for (std::size_t i = begin; i < records.size() && i < begin + rpp; ++i) slice.push_back(records[i]);
  return "{\"total_resources\": " + std::to_string(records.size()) +
         ", \"page_number\": " + std::to_string(page) + ", \"rpp\": " + std::to_string(rpp) +
         ", \"data\": " + json_list(slice) + "}";
}

}  // namespace hypertopo::testing
