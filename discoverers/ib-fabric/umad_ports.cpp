#include "discoverers/ib-fabric/umad_ports.h"

#include <endian.h>
#include <infiniband/umad.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace hypertopo::discoverers::ib_fabric {
namespace {

constexpr unsigned kNodeTypeCa = 1;  // NodeInfo.NodeType: 1 CA, 2 switch, 3 router

std::string network_order_guid_text(std::uint64_t network_order) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%016" PRIx64, static_cast<std::uint64_t>(be64toh(network_order)));
  return text;
}

// The text between the buffer's start and its first NUL, never past its end.
std::string bounded_text(const char* text, std::size_t size) {
  return std::string(text, strnlen(text, size));
}

topology::LinkLayer link_layer_of(const std::string& name) {
  if (name == "InfiniBand" || name == "IB") return topology::LinkLayer::kInfiniBand;
  if (name == "Ethernet") return topology::LinkLayer::kEthernet;
  return topology::LinkLayer::kUnknown;
}

}  // namespace

std::string port_state_name(unsigned state) {
  switch (state) {
    case 1:
      return "DOWN";
    case 2:
      return "INIT";
    case 3:
      return "ARMED";
    case 4:
      return "ACTIVE";
    case 5:
      return "ACTIVE_DEFER";
    default:
      return "NOP";
  }
}

std::string port_phys_state_name(unsigned phys_state) {
  switch (phys_state) {
    case 1:
      return "Sleep";
    case 2:
      return "Polling";
    case 3:
      return "Disabled";
    case 4:
      return "PortConfigurationTraining";
    case 5:
      return "LinkUp";
    case 6:
      return "LinkErrorRecovery";
    case 7:
      return "Phy Test";
    default:
      return "NoStateChange";
  }
}

std::expected<std::vector<topology::HcaDevice>, Error> list_umad_cas() {
  if (umad_init() < 0) {
    return fail(ErrorCode::kUnavailable,
                "libibumad could not be initialised (is the ib_umad module loaded?)");
  }
  char names[UMAD_MAX_DEVICES][UMAD_CA_NAME_LEN] = {};
  const int count = umad_get_cas_names(names, UMAD_MAX_DEVICES);
  std::vector<topology::HcaDevice> out;
  for (int i = 0; i < count && i < UMAD_MAX_DEVICES; ++i) {
    umad_ca_t ca{};
    if (umad_get_ca(names[i], &ca) < 0) continue;
    if (ca.node_type == kNodeTypeCa) {
      topology::HcaDevice device;
      device.name = bounded_text(ca.ca_name, sizeof ca.ca_name);
      device.node_guid = network_order_guid_text(ca.node_guid);
      device.sys_image_guid = network_order_guid_text(ca.system_guid);
      for (int p = 1; p <= ca.numports && p < UMAD_CA_MAX_PORTS; ++p) {
        const umad_port_t* port = ca.ports[p];
        if (port == nullptr) continue;
        topology::HcaPort out_port;
        out_port.number = port->portnum;
        out_port.port_guid = network_order_guid_text(port->port_guid);
        out_port.state = port_state_name(port->state);
        out_port.phys_state = port_phys_state_name(port->phys_state);
        out_port.link_layer = link_layer_of(bounded_text(port->link_layer, sizeof port->link_layer));
        out_port.lid = port->base_lid;
        device.ports.push_back(std::move(out_port));
      }
      out.push_back(std::move(device));
    }
    umad_release_ca(&ca);
  }
  return out;
}

}  // namespace hypertopo::discoverers::ib_fabric
