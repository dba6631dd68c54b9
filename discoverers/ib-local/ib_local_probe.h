// discoverers/ib-local/ib_local_probe.h: the node's own InfiniBand / RoCE adapters (node probe).
//
// Reads <root>/sys/class/infiniband/<dev>/{node_guid,node_desc,sys_image_guid} and
// ports/<n>/{state,phys_state,link_layer,rate,lid,gids/0} plus the netdev of each port, and fills the
// HCA part of this node's NodeReport. sysfs is the source of truth; libibverbs is asked as well when
// probing the real root, only to warn about devices sysfs does not show. A machine with no RDMA
// devices (or where libibverbs fails, as in containers without the uverbs devices) reports none;
// that is a normal state, not an error. A missing or unreadable attribute is a warning in the
// report, never a failure of the whole probe.
//
//   ib_local::IbLocalOptions options;
//   options.root = "/host";                      // the host's / mounted into the agent pod
//   auto facts = ib_local::probe_ib_local(options);   // std::expected<IbLocalFacts, Error>
//   for (const auto& hca : facts->hcas) std::cout << hca.name << " " << hca.node_guid << "\n";
//   ib_local::probe_into(report, options);       // the same, written into a NodeReport
#pragma once

#include <expected>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "discoverers/registry/discoverer.h"
#include "errors/error.h"
#include "topology/node_report.h"

namespace hypertopo::discoverers::ib_local {

enum class VerbsMode {
  kAuto,  // ask libibverbs only when root is "/" (a fake tree under another root has no verbs view)
  kOn,
  kOff,
};

struct IbLocalOptions {
  std::filesystem::path root = "/";
  VerbsMode verbs = VerbsMode::kAuto;
  std::function<void(const std::string&)> log;  // one line per event; may be empty
};

struct IbLocalFacts {
  std::vector<topology::HcaDevice> hcas;   // sorted by name, natural order (mlx5_2 before mlx5_10)
  std::vector<topology::RoceNetdev> roce;  // one per Ethernet port with a netdev
  std::vector<std::string> warnings;
};

// The "ib-local" node probe's config: it has no keys (it reads <hostRoot>/sys).
struct IbLocalConfig : SourceSettings {
  std::string describe() const override { return ""; }
};
SourceEntry ib_local_probe_entry();

// Fails only when `root` itself does not exist or is not a directory.
std::expected<IbLocalFacts, Error> probe_ib_local(const IbLocalOptions& options);

// Runs probe_ib_local and stores hcas, roce and warnings into `report` (replacing earlier HCA facts).
std::expected<void, Error> probe_into(topology::NodeReport& report, const IbLocalOptions& options);

// The interface id (lower 64 bits) of a GID as sysfs prints it ("fe80:0000:0000:0000:9803:9b03:0067:ab12"),
// as "0x" + 16 hex digits; nullopt when the text is not a GID or the interface id is zero.
std::optional<std::string> port_guid_from_gid(std::string_view gid);

// "9803:9b03:0067:ab12" (sysfs node_guid form) -> "0x98039b030067ab12"; nullopt when not a GUID.
std::optional<std::string> guid_from_sysfs(std::string_view text);

// What libibverbs lists. An empty list with a note when it fails (ENOSYS without uverbs devices).
struct VerbsListing {
  std::vector<std::string> devices;
  std::string note;  // why the list is empty, when it is
};
VerbsListing list_verbs_devices();

}  // namespace hypertopo::discoverers::ib_local
