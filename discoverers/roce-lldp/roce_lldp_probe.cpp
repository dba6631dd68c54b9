// Node side of roce-lldp: lldpd (liblldpctl) or lldpcli JSON -> neighbours; libnl + sysfs -> link state.
#include <lldpctl.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "discoverers/registry/source_config.h"
#include "discoverers/roce-lldp/roce_lldp.h"
#include "io/bounded_file.h"
#include "io/json_reader.h"

namespace hypertopo::discoverers::roce_lldp {

using nlohmann::json;
using topology::LldpNeighbor;

namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string str_or_empty(const char* s) { return s == nullptr ? std::string() : std::string(s); }

// Releases a liblldpctl atom (reference-counted) when the scope ends.
struct AtomRef {
  lldpctl_atom_t* atom = nullptr;
  explicit AtomRef(lldpctl_atom_t* a) : atom(a) {}
  ~AtomRef() {
    if (atom != nullptr) lldpctl_atom_dec_ref(atom);
  }
  AtomRef(const AtomRef&) = delete;
  AtomRef& operator=(const AtomRef&) = delete;
};

// Calls fn(value) for each element of an iterable atom (the library's foreach macro shadows
// its own iterator when nested).
template <typename Fn>
void for_each_atom(lldpctl_atom_t* list, Fn fn) {
  if (list == nullptr) return;
  for (lldpctl_atom_iter_t* it = lldpctl_atom_iter(list); it != nullptr;
       it = lldpctl_atom_iter_next(list, it)) {
    AtomRef value(lldpctl_atom_iter_value(list, it));
    if (value.atom != nullptr) fn(value.atom);
  }
}

// liblldpctl's I/O (lldpctl_new_name with our callbacks): the library's own synchronous callbacks
// block on the socket without a limit. These wait for the socket with poll() until one deadline for
// the whole read; past it they fail, and the library call that needed the bytes returns an error.
struct LldpdChannel {
  int fd = -1;
  std::chrono::steady_clock::time_point deadline;
  bool timed_out = false;
  ~LldpdChannel() {
    if (fd >= 0) ::close(fd);
  }

  bool wait(short events) {
    for (;;) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        timed_out = true;
        return false;
      }
      pollfd p{.fd = fd, .events = events, .revents = 0};
      const int ready = ::poll(&p, 1, static_cast<int>(std::min<std::int64_t>(left.count(), 1000)));
      if (ready > 0) return true;
      if (ready < 0 && errno != EINTR) return false;
    }
  }
};

ssize_t channel_send(lldpctl_conn_t*, const std::uint8_t* data, std::size_t length, void* user) {
  auto& channel = *static_cast<LldpdChannel*>(user);
  std::size_t sent = 0;
  while (sent < length) {
    if (!channel.wait(POLLOUT)) return LLDPCTL_ERR_CALLBACK_FAILURE;
    const ssize_t n = ::send(channel.fd, data + sent, length - sent, MSG_NOSIGNAL);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n <= 0) return LLDPCTL_ERR_CALLBACK_FAILURE;
    sent += static_cast<std::size_t>(n);
  }
  return static_cast<ssize_t>(sent);
}

ssize_t channel_recv(lldpctl_conn_t*, const std::uint8_t* data, std::size_t length, void* user) {
  auto& channel = *static_cast<LldpdChannel*>(user);
  for (;;) {
    if (!channel.wait(POLLIN)) return LLDPCTL_ERR_CALLBACK_FAILURE;
    // The library hands its receive buffer as const (its own synchronous callback casts it too).
    const ssize_t n = ::recv(channel.fd, const_cast<std::uint8_t*>(data), length, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n == 0) return LLDPCTL_ERR_EOF;
    if (n < 0) return LLDPCTL_ERR_CALLBACK_FAILURE;
    return n;
  }
}

// A non-blocking connection to lldpd's Unix socket within the channel's deadline; "" or why not.
std::string connect_channel(LldpdChannel& channel, const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return "the socket path is too long";
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  channel.fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (channel.fd < 0) return std::strerror(errno);
  if (::connect(channel.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) return "";
  if (errno != EINPROGRESS && errno != EAGAIN) return std::strerror(errno);
  if (!channel.wait(POLLOUT)) return "no connection within the timeout";
  int err = 0;
  socklen_t len = sizeof err;
  ::getsockopt(channel.fd, SOL_SOCKET, SO_ERROR, &err, &len);
  return err == 0 ? "" : std::strerror(err);
}

}  // namespace

std::expected<LldpSnapshot, Error> read_lldpd(const std::string& socket, std::chrono::milliseconds timeout) {
  const std::string where = socket.empty() ? str_or_empty(lldpctl_get_default_transport()) : socket;
  LldpdChannel channel;
  channel.deadline = std::chrono::steady_clock::now() + timeout;
  if (const std::string failed = connect_channel(channel, where); !failed.empty()) {
    return fail(ErrorCode::kUnavailable,
                "lldpd control socket " + where + ": " + failed + " (is lldpd running? pass --lldpd-socket)");
  }
  std::unique_ptr<lldpctl_conn_t, int (*)(lldpctl_conn_t*)> conn(
      lldpctl_new_name(where.c_str(), channel_send, channel_recv, &channel), lldpctl_release);
  if (!conn)
    return fail(ErrorCode::kInternal, "lldpd " + where + ": cannot allocate a liblldpctl connection");

  LldpSnapshot snap;
  AtomRef interfaces(lldpctl_get_interfaces(conn.get()));
  if (interfaces.atom == nullptr) {
    if (channel.timed_out) {
      return fail(ErrorCode::kUnavailable, "lldpd control socket " + where + ": no answer within " +
                                               std::to_string(timeout.count()) + " ms (is lldpd wedged?)");
    }
    return fail(ErrorCode::kUnavailable, "lldpd control socket " + where + ": " +
                                             str_or_empty(lldpctl_last_strerror(conn.get())) +
                                             " (is lldpd running? pass --lldpd-socket)");
  }
  {
    AtomRef local(lldpctl_get_local_chassis(conn.get()));
    if (local.atom != nullptr) {
      if (auto id = str_or_empty(lldpctl_atom_get_str(local.atom, lldpctl_k_chassis_id)); !id.empty())
        snap.local_chassis_ids.push_back(lower(id));
      snap.local_system_name = str_or_empty(lldpctl_atom_get_str(local.atom, lldpctl_k_chassis_name));
    }
  }
  for_each_atom(interfaces.atom, [&](lldpctl_atom_t* iface) {
    const std::string name = str_or_empty(lldpctl_atom_get_str(iface, lldpctl_k_interface_name));
    AtomRef port(lldpctl_get_port(iface));
    if (port.atom == nullptr) return;
    // Per-port chassis (lldpd can announce one chassis per port): that is us too.
    {
      AtomRef own(lldpctl_atom_get(port.atom, lldpctl_k_port_chassis));
      if (own.atom != nullptr) {
        auto id = lower(str_or_empty(lldpctl_atom_get_str(own.atom, lldpctl_k_chassis_id)));
        if (!id.empty() && std::find(snap.local_chassis_ids.begin(), snap.local_chassis_ids.end(), id) ==
                               snap.local_chassis_ids.end())
          snap.local_chassis_ids.push_back(id);
      }
    }
    AtomRef neighbors(lldpctl_atom_get(port.atom, lldpctl_k_port_neighbors));
    for_each_atom(neighbors.atom, [&](lldpctl_atom_t* nb) {
      LldpNeighbor n;
      n.port_id = str_or_empty(lldpctl_atom_get_str(nb, lldpctl_k_port_id));
      n.port_id_subtype = str_or_empty(lldpctl_atom_get_str(nb, lldpctl_k_port_id_subtype));
      n.port_description = str_or_empty(lldpctl_atom_get_str(nb, lldpctl_k_port_descr));
      AtomRef chassis(lldpctl_atom_get(nb, lldpctl_k_port_chassis));
      if (chassis.atom != nullptr) {
        n.chassis_id = lower(str_or_empty(lldpctl_atom_get_str(chassis.atom, lldpctl_k_chassis_id)));
        n.chassis_id_subtype = str_or_empty(lldpctl_atom_get_str(chassis.atom, lldpctl_k_chassis_id_subtype));
        n.system_name = str_or_empty(lldpctl_atom_get_str(chassis.atom, lldpctl_k_chassis_name));
      }
      snap.neighbors.push_back({name, std::move(n)});
    });
  });
  // A deadline passed half-way leaves ports unread: no partial answer.
  if (channel.timed_out) {
    return fail(ErrorCode::kUnavailable, "lldpd control socket " + where +
                                             ": the answer did not finish within " +
                                             std::to_string(timeout.count()) + " ms (is lldpd wedged?)");
  }
  return snap;
}

// ------------------------------------------------------------------------------------------------
// lldpcli JSON. `json` collapses single-element lists into objects and keys interfaces and chassis
// by name; `json0` keeps everything as lists of objects with "value" fields.

namespace {

// A list whatever the shape: an array as is, anything else as a one-element list.
std::vector<const json*> as_list(const json& v) {
  std::vector<const json*> out;
  if (v.is_array()) {
    for (const auto& e : v) out.push_back(&e);
  } else if (!v.is_null()) {
    out.push_back(&v);
  }
  return out;
}

// A text field: "x", {"value": "x"}, [{"value": "x"}], or for ids {"type": t, "value": x}.
std::string text_of(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array()) return v.empty() ? std::string() : text_of(v.front());
  if (v.is_object()) {
    if (auto it = v.find("value"); it != v.end()) return text_of(*it);
  }
  return {};
}

std::string type_of(const json& v) {
  if (v.is_array()) return v.empty() ? std::string() : type_of(v.front());
  if (v.is_object()) {
    if (auto it = v.find("type"); it != v.end() && it->is_string()) return it->get<std::string>();
  }
  return {};
}

const json* member(const json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

// One interface record (without its name) -> neighbour.
std::expected<LldpNeighbor, Error> neighbor_from(const json& rec, const std::string& where) {
  LldpNeighbor n;
  const json* chassis = member(rec, "chassis");
  if (chassis == nullptr) return fail(ErrorCode::kParse, where + ".chassis: missing");
  const json* ch = chassis;
  if (chassis->is_array()) {
    if (chassis->empty()) return fail(ErrorCode::kParse, where + ".chassis: empty");
    ch = &chassis->front();  // json0: [{"id": [...], "name": [...]}]
  }
  if (!ch->is_object()) return fail(ErrorCode::kParse, where + ".chassis: expected an object");
  if (member(*ch, "id") == nullptr && ch->size() == 1 && ch->begin()->is_object()) {
    // json: {"<system name>": {"id": {...}}}
    n.system_name = ch->begin().key();
    ch = &*ch->begin();
  } else if (const json* name = member(*ch, "name")) {
    n.system_name = text_of(*name);
  }
  const json* id = member(*ch, "id");
  if (id == nullptr) return fail(ErrorCode::kParse, where + ".chassis.id: missing");
  n.chassis_id = lower(text_of(*id));
  n.chassis_id_subtype = type_of(*id);

  const json* port = member(rec, "port");
  if (port == nullptr) return fail(ErrorCode::kParse, where + ".port: missing");
  const json* p = port->is_array() ? (port->empty() ? nullptr : &port->front()) : port;
  if (p == nullptr || !p->is_object()) return fail(ErrorCode::kParse, where + ".port: expected an object");
  const json* pid = member(*p, "id");
  if (pid == nullptr) return fail(ErrorCode::kParse, where + ".port.id: missing");
  n.port_id = text_of(*pid);
  n.port_id_subtype = type_of(*pid);
  if (const json* d = member(*p, "descr")) n.port_description = text_of(*d);
  return n;
}

}  // namespace

std::expected<LldpSnapshot, Error> parse_lldpcli_json(const json& doc, const std::string& name) {
  const json* lldp = member(doc, "lldp");
  if (lldp == nullptr) return fail(ErrorCode::kParse, name + ": no 'lldp' key (not lldpcli JSON output)");
  LldpSnapshot snap;
  auto lldps = as_list(*lldp);
  for (const json* l : lldps) {
    const json* interfaces = member(*l, "interface");
    if (interfaces == nullptr) continue;  // no neighbours at all: lldpcli prints {"lldp": {}}
    std::size_t index = 0;
    auto add = [&](const std::string& iface, const json& rec) -> std::expected<void, Error> {
      auto n = neighbor_from(rec, name + ": lldp.interface[" + std::to_string(index) + "] (" + iface + ")");
      if (!n) return std::unexpected(n.error());
      snap.neighbors.push_back({iface, std::move(*n)});
      return {};
    };
    // Shapes: {"eth0": {...}} (one), [{"eth0": {...}}, ...] (json, several), [{"name": "eth0", ...}] (json0).
    for (const json* item : as_list(*interfaces)) {
      if (!item->is_object()) return fail(ErrorCode::kParse, name + ": lldp.interface: expected objects");
      if (const json* n = member(*item, "name"); n != nullptr && n->is_string()) {
        if (auto ok = add(n->get<std::string>(), *item); !ok) return std::unexpected(ok.error());
        ++index;
        continue;
      }
      for (auto it = item->begin(); it != item->end(); ++it) {
        if (auto ok = add(it.key(), it.value()); !ok) return std::unexpected(ok.error());
        ++index;
      }
    }
  }
  return snap;
}

std::expected<LldpSnapshot, Error> read_lldpcli_json_file(const std::filesystem::path& path) {
  auto text = io::read_bounded_file(path, io::kDataFileLimit);
  if (!text) return std::unexpected(text.error());
  auto doc = io::parse_json(*text, path.string());
  if (!doc) return std::unexpected(doc.error());
  return parse_lldpcli_json(*doc, path.string());
}

// ------------------------------------------------------------------------------------------------

std::expected<void, Error> apply_snapshot(topology::NodeReport& report, const LldpSnapshot& snapshot,
                                          const RoceLldpOptions& options) {
  std::optional<text::UserPattern> rail, management;
  if (!options.netdev_pattern.empty()) {
    auto p = text::UserPattern::compile(options.netdev_pattern);
    if (!p)
      return fail(ErrorCode::kInvalidArgument,
                  "roce-lldp netdev pattern '" + options.netdev_pattern + "': " + p.error());
    rail = std::move(*p);
  }
  if (!options.management_pattern.empty()) {
    auto p = text::UserPattern::compile(options.management_pattern);
    if (!p) {
      return fail(ErrorCode::kInvalidArgument,
                  "roce-lldp management pattern '" + options.management_pattern + "': " + p.error());
    }
    management = std::move(*p);
  }
  std::set<std::string> self_ids, self_names;
  for (const auto& id : snapshot.local_chassis_ids) self_ids.insert(lower(id));
  for (const auto& id : options.self_chassis_ids) self_ids.insert(lower(id));
  if (!snapshot.local_system_name.empty()) self_names.insert(lower(snapshot.local_system_name));
  for (const auto& n : options.self_system_names) self_names.insert(lower(n));
  self_names.insert(lower(report.node_name));

  auto log = [&](const std::string& line) {
    if (options.log) options.log(line);
  };
  // Rails: the RoCE netdevs ib-local found, unless a pattern says otherwise.
  const bool from_report = !rail && !report.roce.empty();
  auto find_rail = [&](const std::string& netdev) {
    return std::find_if(report.roce.begin(), report.roce.end(),
                        [&](const topology::RoceNetdev& r) { return r.netdev == netdev; });
  };
  if (rail) {
    std::erase_if(report.roce, [&](const topology::RoceNetdev& r) { return !rail->matches_part(r.netdev); });
  }

  // A VF and its representor see each other through the eswitch: two local interfaces that name each
  // other as the neighbour port, under one chassis. Neither is a switch.
  std::map<std::string, const LldpNeighbor*> by_interface;
  for (const auto& entry : snapshot.neighbors) by_interface.emplace(entry.interface, &entry.neighbor);
  auto looped_back = [&](const std::string& iface, const LldpNeighbor& n) {
    auto peer = by_interface.find(n.port_id);
    return n.port_id_subtype == "ifname" && peer != by_interface.end() && peer->second->port_id == iface &&
           peer->second->chassis_id == n.chassis_id;
  };

  for (const auto& entry : snapshot.neighbors) {
    const auto& iface = entry.interface;
    const auto& n = entry.neighbor;
    if (management && management->matches_part(iface)) {
      log(iface + ": management NIC (pattern), neighbour " + n.system_name + " ignored");
      continue;
    }
    if (rail && !rail->matches_part(iface)) continue;
    if (looped_back(iface, n) || self_ids.contains(lower(n.chassis_id)) ||
        (!n.system_name.empty() && self_names.contains(lower(n.system_name)))) {
      log(iface + ": neighbour is this host (" + n.chassis_id + "), a VF or representor; ignored");
      continue;
    }
    auto it = find_rail(iface);
    if (it == report.roce.end()) {
      if (from_report) continue;  // not a RoCE netdev of this node
      topology::RoceNetdev r;
      r.netdev = iface;
      report.roce.push_back(std::move(r));
      it = std::prev(report.roce.end());
    }
    if (it->neighbor && *it->neighbor != n) {
      report.warnings.push_back(iface + ": several LLDP neighbours (" + it->neighbor->system_name + ", " +
                                n.system_name + "); keeping the first");
      continue;
    }
    it->neighbor = n;
  }
  std::sort(report.roce.begin(), report.roce.end(),
            [](const topology::RoceNetdev& a, const topology::RoceNetdev& b) { return a.netdev < b.netdev; });
  return {};
}

std::map<std::string, LinkState> read_link_states(const std::vector<std::string>& netdevs,
                                                  const std::filesystem::path& root) {
  std::map<std::string, LinkState> out;
  std::unique_ptr<nl_sock, void (*)(nl_sock*)> sock(nl_socket_alloc(), nl_socket_free);
  nl_cache* cache = nullptr;
  if (sock && nl_connect(sock.get(), NETLINK_ROUTE) == 0) {
    if (rtnl_link_alloc_cache(sock.get(), AF_UNSPEC, &cache) != 0) cache = nullptr;
  }
  for (const auto& name : netdevs) {
    LinkState state;
    if (cache != nullptr) {
      if (rtnl_link* link = rtnl_link_get_by_name(cache, name.c_str()); link != nullptr) {
        char buf[32] = {};
        state.oper_state = rtnl_link_operstate2str(rtnl_link_get_operstate(link), buf, sizeof buf);
        rtnl_link_put(link);
      }
    }
    // libnl has no ethtool speed; the kernel prints Mb/s in sysfs (-1 or EINVAL when unknown).
    auto attribute =
        io::read_bounded_file(root / "sys" / "class" / "net" / name / "speed", io::kSysfsAttributeLimit);
    std::string text;
    if (attribute && (std::istringstream(*attribute) >> text)) {
      std::uint64_t mbps = 0;
      auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), mbps);
      if (ec == std::errc() && p == text.data() + text.size() && mbps > 0) state.speed_mbps = mbps;
    }
    out[name] = std::move(state);
  }
  if (cache != nullptr) nl_cache_free(cache);
  return out;
}

std::expected<void, Error> probe_into(topology::NodeReport& report, const RoceLldpOptions& options) {
  std::expected<LldpSnapshot, Error> snap = options.lldp_json.empty()
                                                ? read_lldpd(options.lldpd_socket, options.lldpd_timeout)
                                                : read_lldpcli_json_file(options.lldp_json);
  if (!snap) return std::unexpected(snap.error());
  if (options.log) {
    options.log("lldp: " + std::to_string(snap->neighbors.size()) + " neighbour(s); local chassis " +
                (snap->local_chassis_ids.empty() ? std::string("unknown") : snap->local_chassis_ids.front()));
  }
  if (auto ok = apply_snapshot(report, *snap, options); !ok) return ok;
  if (options.read_link_state && options.lldp_json.empty()) {
    std::vector<std::string> names;
    for (const auto& r : report.roce) names.push_back(r.netdev);
    auto states = read_link_states(names, options.root);
    for (auto& r : report.roce) {
      const auto& s = states[r.netdev];
      if (!s.oper_state.empty()) r.oper_state = s.oper_state;
      if (s.speed_mbps) r.speed_mbps = s.speed_mbps;
    }
  }
  for (const auto& r : report.roce) {
    if (!r.neighbor)
      report.warnings.push_back(r.netdev + ": no LLDP neighbour (is LLDP enabled on the switch?)");
  }
  return {};
}

SourceEntry lldp_probe_entry() {
  const std::vector<ConfigKey> keys = {
      {"netdevPattern",
       "regex of RoCE rail netdevs (default: ib-local's RoCE netdevs, else every LLDP port)"},
      {"lldpdSocket", "lldpd's control socket (default: lldpd's own)"},
      {"lldpJson", "replay saved `lldpcli -f json` output instead of asking lldpd"}};
  return {.kind = "lldp",
          .summary = "each RoCE netdev's state, speed and LLDP neighbour (ToR, port) from the local lldpd",
          .role = SourceRole::kNodeProbe,
          .cache = CachePolicy::kInterval,
          .keys = keys,
          .parse_config = [keys](const YAML::Node& node,
                                 const ConfigAt& at) -> std::expected<SettingsPtr, Error> {
            ConfigBlock block(node, at);
            if (auto ok = block.only(keys); !ok) return std::unexpected(ok.error());
            auto c = std::make_shared<LldpProbeConfig>();
            const std::pair<const char*, std::string*> fields[] = {{"netdevPattern", &c->netdev_pattern},
                                                                   {"lldpdSocket", &c->lldpd_socket},
                                                                   {"lldpJson", &c->lldp_json}};
            for (const auto& [key, target] : fields) {
              auto t = block.text(key);
              if (!t) return std::unexpected(t.error());
              if (*t) *target = **t;
            }
            return c;
          },
          .parse_arg = [](const std::string& arg) -> std::expected<SettingsPtr, Error> {
            auto c = std::make_shared<LldpProbeConfig>();
            c->netdev_pattern = arg;
            return c;
          },
          .factory = nullptr,
          .probe = [](const SourceSettings& settings, const NodeProbeDeps& deps,
                      topology::NodeReport& report) -> std::expected<void, Error> {
            const auto& c = static_cast<const LldpProbeConfig&>(settings);
            RoceLldpOptions o;
            o.root = deps.root;
            o.netdev_pattern = c.netdev_pattern;
            o.lldpd_socket = c.lldpd_socket;
            o.lldp_json = c.lldp_json;
            o.log = deps.log;
            return probe_into(report, o);
          }};
}

}  // namespace hypertopo::discoverers::roce_lldp
