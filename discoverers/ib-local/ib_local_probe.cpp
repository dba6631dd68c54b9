#include "discoverers/ib-local/ib_local_probe.h"

#include <infiniband/verbs.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>

#include "discoverers/registry/source_config.h"
#include "io/bounded_file.h"
#include "text/utf8.h"
#include "topology/fabric_graph.h"

namespace hypertopo::discoverers::ib_local {

namespace fs = std::filesystem;
using topology::HcaDevice;
using topology::HcaPort;
using topology::LinkLayer;

namespace {

std::string trim(std::string_view text) {
  auto begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return {};
  auto end = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(begin, end - begin + 1));
}

// "mlx5_2" before "mlx5_10": compares runs of digits by value.
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      std::size_t ei = i, ej = j;
      while (ei < a.size() && std::isdigit(static_cast<unsigned char>(a[ei]))) ++ei;
      while (ej < b.size() && std::isdigit(static_cast<unsigned char>(b[ej]))) ++ej;
      std::string_view na(a.data() + i, ei - i), nb(b.data() + j, ej - j);
      while (na.size() > 1 && na.front() == '0') na.remove_prefix(1);
      while (nb.size() > 1 && nb.front() == '0') nb.remove_prefix(1);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ei;
      j = ej;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

std::vector<std::string> sorted_entries(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end(), natural_less);
  return names;
}

// Reads one sysfs attribute; sysfs files are small, so a single read is enough.
class AttributeReader {
 public:
  AttributeReader(std::vector<std::string>& warnings) : warnings_(warnings) {}

  // The trimmed content, or nullopt with a warning naming `label` (e.g. "mlx5_0: ports/1/rate").
  std::optional<std::string> read(const fs::path& file, const std::string& label) {
    // A sysfs attribute is one page at most; a FIFO or device planted in the tree is refused
    // without blocking the probe, and the warning says what it is.
    auto text = io::read_bounded_file(file, io::kSysfsAttributeLimit);
    if (!text) {
      warnings_.push_back(label + ": missing or unreadable (" + text.error().message() + ")");
      return std::nullopt;
    }
    return trim(*text);
  }

  static std::optional<std::string> read_quiet(const fs::path& file) {
    auto text = io::read_bounded_file(file, io::kSysfsAttributeLimit);
    if (!text) return std::nullopt;
    return trim(*text);
  }

  void warn(std::string text) { warnings_.push_back(std::move(text)); }

 private:
  std::vector<std::string>& warnings_;
};

// sysfs prints "4: ACTIVE" and "5: LinkUp"; keep the name, which is what ibstat shows.
std::string state_name(const std::string& text) {
  auto colon = text.find(':');
  return colon == std::string::npos ? text : trim(std::string_view(text).substr(colon + 1));
}

std::optional<std::uint32_t> parse_lid(const std::string& text) {
  std::string_view v = text;
  int base = 10;
  if (v.starts_with("0x") || v.starts_with("0X")) {
    v.remove_prefix(2);
    base = 16;
  }
  std::uint32_t lid = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), lid, base);
  if (ec != std::errc() || p != v.data() + v.size() || v.empty() || lid > 0xffff) return std::nullopt;
  return lid;
}

// The netdev behind port `port` of a device: the RoCE GID table names it directly; otherwise the
// PCI function's net/ folder (one netdev, or the one whose dev_port is port - 1, as on mlx4).
std::optional<std::string> find_netdev(const fs::path& dev_dir, int port) {
  if (auto ndev =
          AttributeReader::read_quiet(dev_dir / "ports" / std::to_string(port) / "gid_attrs" / "ndevs" / "0");
      ndev && !ndev->empty()) {
    return ndev;
  }
  auto names = sorted_entries(dev_dir / "device" / "net");
  if (names.empty()) return std::nullopt;
  if (names.size() == 1) return names.front();
  for (const auto& name : names) {
    auto dev_port = AttributeReader::read_quiet(dev_dir / "device" / "net" / name / "dev_port");
    if (dev_port && *dev_port == std::to_string(port - 1)) return name;
  }
  return std::nullopt;
}

std::optional<int> parse_port_number(const std::string& name) {
  int n = 0;
  auto [p, ec] = std::from_chars(name.data(), name.data() + name.size(), n);
  if (ec != std::errc() || p != name.data() + name.size() || n <= 0 || n > 255) return std::nullopt;
  return n;
}

HcaPort read_port(const fs::path& dev_dir, const std::string& dev, int number, AttributeReader& reader) {
  HcaPort port;
  port.number = number;
  const fs::path dir = dev_dir / "ports" / std::to_string(number);
  const std::string label = dev + ": ports/" + std::to_string(number);

  if (auto layer = reader.read(dir / "link_layer", label + "/link_layer")) {
    if (auto parsed = topology::parse_link_layer(*layer)) {
      port.link_layer = *parsed;
    } else {
      reader.warn(label + "/link_layer: unknown value '" + *layer + "'");
    }
  }
  if (auto state = reader.read(dir / "state", label + "/state")) port.state = state_name(*state);
  if (auto phys = reader.read(dir / "phys_state", label + "/phys_state")) port.phys_state = state_name(*phys);
  if (auto rate = reader.read(dir / "rate", label + "/rate")) port.rate = *rate;
  if (auto lid_text = reader.read(dir / "lid", label + "/lid")) {
    if (auto lid = parse_lid(*lid_text)) {
      port.lid = *lid;
    } else {
      reader.warn(label + "/lid: not a LID: '" + *lid_text + "'");
    }
  }
  // Only an InfiniBand GID's interface id is the port GUID; a RoCE GID is derived from the MAC.
  if (port.link_layer == LinkLayer::kInfiniBand) {
    if (auto gid = reader.read(dir / "gids" / "0", label + "/gids/0")) {
      if (auto guid = port_guid_from_gid(*gid)) {
        port.port_guid = *guid;
      } else {
        reader.warn(label + "/gids/0: no port GUID in '" + *gid + "'");
      }
    }
  }
  if (auto netdev = find_netdev(dev_dir, number)) port.netdev = *netdev;
  return port;
}

HcaDevice read_device(const fs::path& dev_dir, const std::string& dev, AttributeReader& reader) {
  HcaDevice hca;
  hca.name = dev;
  auto read_guid = [&](const char* file, std::string& out) {
    if (auto text = reader.read(dev_dir / file, dev + ": " + file)) {
      if (auto guid = guid_from_sysfs(*text)) {
        out = *guid;
      } else {
        reader.warn(dev + ": " + file + ": not a GUID: '" + *text + "'");
      }
    }
  };
  read_guid("node_guid", hca.node_guid);
  read_guid("sys_image_guid", hca.sys_image_guid);
  if (auto desc = reader.read(dev_dir / "node_desc", dev + ": node_desc")) {
    // The NodeDescription attribute holds 64 bytes; the kernel never shows more. Its bytes are
    // whatever was written there, and the report travels as JSON.
    hca.node_description = text::valid_utf8(std::string_view(*desc).substr(0, 64));
  }

  auto port_names = sorted_entries(dev_dir / "ports");
  if (port_names.empty()) reader.warn(dev + ": no ports under " + (dev_dir / "ports").string());
  for (const auto& name : port_names) {
    auto number = parse_port_number(name);
    if (!number) {
      reader.warn(dev + ": ports/" + name + ": not a port number");
      continue;
    }
    hca.ports.push_back(read_port(dev_dir, dev, *number, reader));
  }
  return hca;
}

}  // namespace

std::optional<std::string> guid_from_sysfs(std::string_view text) {
  std::string hex;
  for (char c : text) {
    if (c == ':') continue;
    hex.push_back(c);
  }
  // sysfs always prints four groups of four hex digits; a "0x" form is taken as well.
  if (!hex.starts_with("0x") && !hex.starts_with("0X") && hex.size() != 16) return std::nullopt;
  return topology::normalize_guid(hex);
}

std::optional<std::string> port_guid_from_gid(std::string_view gid) {
  std::string hex;
  for (char c : gid) {
    if (c == ':') continue;
    if (!std::isxdigit(static_cast<unsigned char>(c))) return std::nullopt;
    hex.push_back(c);
  }
  if (hex.size() != 32) return std::nullopt;
  std::string interface_id = hex.substr(16);
  if (interface_id.find_first_not_of('0') == std::string::npos) return std::nullopt;
  return topology::normalize_guid(interface_id);
}

VerbsListing list_verbs_devices() {
  VerbsListing listing;
  int count = 0;
  errno = 0;
  ibv_device** devices = ibv_get_device_list(&count);
  if (devices == nullptr) {
    const int err = errno;
    listing.note = std::string("libibverbs lists no devices (ibv_get_device_list: ") +
                   (err != 0 ? std::strerror(err) : "no error code") + ")";
    return listing;
  }
  for (int i = 0; i < count && devices[i] != nullptr; ++i) {
    if (const char* name = ibv_get_device_name(devices[i])) listing.devices.emplace_back(name);
  }
  ibv_free_device_list(devices);
  if (listing.devices.empty()) listing.note = "libibverbs lists no devices";
  std::sort(listing.devices.begin(), listing.devices.end(), natural_less);
  return listing;
}

std::expected<IbLocalFacts, Error> probe_ib_local(const IbLocalOptions& options) {
  auto log = [&](const std::string& line) {
    if (options.log) options.log(line);
  };
  std::error_code ec;
  if (!fs::is_directory(options.root, ec)) {
    return fail(ErrorCode::kNotFound, "root " + options.root.string() + " is not a directory");
  }

  IbLocalFacts facts;
  AttributeReader reader(facts.warnings);
  const fs::path class_dir = options.root / "sys" / "class" / "infiniband";
  std::vector<std::string> names;
  if (fs::is_directory(class_dir, ec)) {
    names = sorted_entries(class_dir);
  } else {
    log("ib-local: " + class_dir.string() + " does not exist: no RDMA devices in sysfs");
  }
  for (const auto& name : names) {
    facts.hcas.push_back(read_device(class_dir / name, name, reader));
  }

  const bool ask_verbs = options.verbs == VerbsMode::kOn ||
                         (options.verbs == VerbsMode::kAuto && fs::equivalent(options.root, "/", ec));
  if (ask_verbs) {
    auto listing = list_verbs_devices();
    if (!listing.note.empty()) log("ib-local: " + listing.note);
    for (const auto& dev : listing.devices) {
      if (!std::binary_search(names.begin(), names.end(), dev, natural_less)) {
        facts.warnings.push_back(dev + ": listed by libibverbs but absent from " + class_dir.string());
      }
    }
  }

  for (const auto& hca : facts.hcas) {
    for (const auto& port : hca.ports) {
      if (port.link_layer != LinkLayer::kEthernet) continue;
      if (port.netdev.empty()) {
        facts.warnings.push_back(hca.name + ": ports/" + std::to_string(port.number) +
                                 ": Ethernet (RoCE) port without a netdev");
        continue;
      }
      topology::RoceNetdev roce;
      roce.netdev = port.netdev;
      roce.rdma_device = hca.name;
      roce.rdma_port = port.number;
      facts.roce.push_back(std::move(roce));
    }
  }
  log("ib-local: " + std::to_string(facts.hcas.size()) + " RDMA devices, " +
      std::to_string(facts.roce.size()) + " RoCE netdevs, " + std::to_string(facts.warnings.size()) +
      " warnings");
  return facts;
}

std::expected<void, Error> probe_into(topology::NodeReport& report, const IbLocalOptions& options) {
  auto facts = probe_ib_local(options);
  if (!facts) return std::unexpected(facts.error().context("while probing local RDMA devices"));
  report.hcas = std::move(facts->hcas);
  report.roce = std::move(facts->roce);
  report.warnings.insert(report.warnings.end(), facts->warnings.begin(), facts->warnings.end());
  return {};
}

SourceEntry ib_local_probe_entry() {
  return {
      .kind = "ib-local",
      .summary = "RDMA devices, port GUIDs, link layer, state and rate from <root>/sys/class/infiniband",
      .role = SourceRole::kNodeProbe,
      .cache = CachePolicy::kInterval,
      .keys = {},
      .parse_config = [](const YAML::Node& node, const ConfigAt& at) -> std::expected<SettingsPtr, Error> {
        if (auto ok = ConfigBlock(node, at).only({}); !ok) return std::unexpected(ok.error());
        return std::make_shared<IbLocalConfig>();
      },
      .parse_arg = [](const std::string& arg) -> std::expected<SettingsPtr, Error> {
        if (!arg.empty())
          return fail(ErrorCode::kInvalidArgument, "ib-local takes no argument ('" + arg + "')");
        return std::make_shared<IbLocalConfig>();
      },
      .factory = nullptr,
      .probe = [](const SourceSettings&, const NodeProbeDeps& deps,
                  topology::NodeReport& report) -> std::expected<void, Error> {
        IbLocalOptions o;
        o.root = deps.root;
        o.log = deps.log;
        return probe_into(report, o);
      }};
}

}  // namespace hypertopo::discoverers::ib_local
