// discoverers/ib-fabric/umad_ports.h: the local InfiniBand CAs and ports as libibumad lists them.
//
// A live walk opens a CA through libibumad, so the CAs a walk can start from are the ones
// libibumad lists (`umad_get_cas_names`, `umad_get_ca`), as `ibstat` and `ibnetdiscover` find them.
// Under ibsim's umad2sim preload that is the simulated CA, which sysfs does not show; on a host it
// is /sys/class/infiniband, read by libibumad. The node probe keeps reading sysfs itself
// (ib_local_probe.h): it needs more than libibumad tells (netdevs, rates, descriptions).
//
//   auto cas = list_umad_cas();                 // std::expected<std::vector<HcaDevice>, Error>
//   auto ports = select_compute_ports(*cas, {"mlx5_(8|9)"});
#pragma once

#include <expected>
#include <string>
#include <vector>

#include "errors/error.h"
#include "topology/node_report.h"

namespace hypertopo::discoverers::ib_fabric {

// Every channel adapter libibumad lists (switches and routers left out: a walk starts at a CA),
// with its ports' numbers, GUIDs, state and physical state in sysfs' words ("ACTIVE", "INIT",
// "LinkUp", ...) and link layer. Fails only when libibumad cannot be initialised; no CA is an empty
// list. A CA that disappears between listing and reading is skipped.
std::expected<std::vector<topology::HcaDevice>, Error> list_umad_cas();

// PortInfo's PortState and PortPhysicalState values in the words sysfs uses (IBA 14.2.5.6).
std::string port_state_name(unsigned state);
std::string port_phys_state_name(unsigned phys_state);

}  // namespace hypertopo::discoverers::ib_fabric
