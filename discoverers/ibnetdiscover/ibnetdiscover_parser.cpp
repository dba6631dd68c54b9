#include "discoverers/ibnetdiscover/ibnetdiscover_parser.h"

#include <cctype>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "io/bounded_file.h"
#include "text/utf8.h"

namespace hypertopo::discoverers {
namespace {

using topology::FabricGraph;
using topology::normalize_guid;
using topology::VertexId;

struct PortRecord {
  std::size_t line = 0;  // where it was read, for messages
  int port = 0;
  std::string port_guid;  // own port GUID, when printed
  char peer_type = 0;     // 'S', 'H' or 'R'
  std::string peer_guid;  // normalised node GUID of the peer
  int peer_port = 0;
  std::string peer_port_guid;  // when printed
  std::string peer_desc;
  std::string rate;
};

struct NodeRecord {
  std::size_t line = 0;  // of its header (or first ports-report line)
  char type = 0;         // 'S', 'H', 'R'
  std::string guid;
  std::string desc;
  std::string sysimg;
  std::vector<PortRecord> ports;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

void skip_space(std::string_view& s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
}

// "[12]" -> 12. At most 11 digits, so the value always fits; the caller checks its range.
bool take_int_in(std::string_view& s, char open, char close, std::int64_t& out) {
  if (s.empty() || s.front() != open) return false;
  auto end = s.find(close);
  if (end == std::string_view::npos || end == 1 || end > 12) return false;
  std::int64_t v = 0;
  for (char c : s.substr(1, end - 1)) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    v = v * 10 + (c - '0');
  }
  out = v;
  s.remove_prefix(end + 1);
  return true;
}

// "(2c9030004e939)" -> normalised GUID; leaves `s` alone when there is none.
std::optional<std::string> take_guid_in_parens(std::string_view& s) {
  if (s.empty() || s.front() != '(') return std::nullopt;
  auto end = s.find(')');
  if (end == std::string_view::npos) return std::nullopt;
  auto g = normalize_guid(s.substr(1, end - 1));
  if (!g) return std::nullopt;
  s.remove_prefix(end + 1);
  return g;
}

bool take_quoted(std::string_view& s, std::string& out) {
  if (s.empty() || s.front() != '"') return false;
  auto end = s.find('"', 1);
  if (end == std::string_view::npos) return false;
  out = std::string(s.substr(1, end - 1));
  s.remove_prefix(end + 1);
  return true;
}

// "S-2c5eab0300b87b40" -> ('S', "0x2c5eab0300b87b40")
bool split_node_id(const std::string& id, char& type, std::string& guid) {
  if (id.size() < 3 || id[1] != '-' || (id[0] != 'S' && id[0] != 'H' && id[0] != 'R')) return false;
  auto g = normalize_guid(std::string_view(id).substr(2));
  if (!g) return false;
  type = id[0];
  guid = *g;
  return true;
}

bool looks_like_rate(std::string_view t) {
  auto x = t.find('x');
  return x != std::string_view::npos && x > 0 && x + 1 < t.size() &&
         std::isdigit(static_cast<unsigned char>(t.front())) != 0;
}

std::string last_token(std::string_view s) {
  s = trim(s);
  auto sp = s.find_last_of(" \t");
  return std::string(sp == std::string_view::npos ? s : s.substr(sp + 1));
}

// Lines that tools print to stderr and that end up in captured files.
bool looks_like_diagnostic(std::string_view line) {
  static const char* kMarkers[] = {
      "ibwarn", "umad", "mad_rpc", "query_smp", ".c:",    "ERR",    "Err",          "error",
      "Error",  "warn", "WARN",    "timed out", "failed", "Failed", "ibnetdiscover"};
  for (const char* m : kMarkers) {
    if (line.find(m) != std::string_view::npos) return true;
  }
  return false;
}

// InfiniBand's NodeDescription attribute holds 64 bytes; a longer one is not what a fabric reports.
constexpr std::size_t kNodeDescriptionBytes = 64;
// Port numbers are 8 bits on the wire (a switch has at most 254 external ports, port 0 is its own).
constexpr std::int64_t kMaxPortNumber = 255;

class Parser {
 public:
  explicit Parser(std::string_view name) : name_(name) {}

  std::expected<IbnetdiscoverCapture, Error> run(std::string_view text) {
    std::size_t line_no = 0;
    std::size_t pos = 0;
    bool ports_report = false;
    while (pos < text.size()) {
      auto nl = text.find('\n', pos);
      std::string_view raw =
          text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
      pos = nl == std::string_view::npos ? text.size() : nl + 1;
      ++line_no;
      for (unsigned char c : raw) {
        if (c == 0 || (c < 0x20 && c != '\t' && c != '\r' && c != '\f' && c != '\v')) {
          return error(line_no, "binary data, not ibnetdiscover text");
        }
      }
      std::string_view line = trim(raw);
      if (line.empty() || line.front() == '#') continue;
      if (auto r = parse_line(line, line_no, ports_report); !r) return std::unexpected(r.error());
    }
    if (nodes_.empty()) {
      return fail(ErrorCode::kParse,
                  std::string(name_) + ": no switches or CAs found (empty or not ibnetdiscover output)");
    }
    return build();
  }

 private:
  std::expected<void, Error> parse_line(std::string_view line, std::size_t n, bool& ports_report) {
    auto starts = [&](std::string_view p) { return line.starts_with(p); };
    if (starts("vendid=") || starts("devid=")) {
      return {};
    }
    if (starts("sysimgguid=")) {
      pending_sysimg_ = normalize_guid(trim(line.substr(11))).value_or("");
      return {};
    }
    if (starts("switchguid=") || starts("caguid=") || starts("rtguid=")) return {};
    if (starts("Non-Chassis Nodes") || starts("Chassis ") || starts("Chassis\t")) return {};
    if (starts("Switch") || starts("Ca") || starts("Rt")) {
      if (auto r = parse_header(line, n); !r) return r;
      return {};
    }
    if (line.front() == '[') {
      if (current_ < 0) return error(n, "a port line before any Switch/Ca header");
      return parse_port(line, n);
    }
    if (starts("CA ") || starts("SW ") || starts("RT ") || starts("CA\t") || starts("SW\t") ||
        starts("RT\t")) {
      ports_report = true;
      ports_report_ = true;
      return parse_ports_report_line(line, n);
    }
    if (looks_like_diagnostic(line)) {
      warn("diagnostic", where(n) + "ignored a diagnostic line: " + std::string(line.substr(0, 120)));
      return {};
    }
    return error(n, "unrecognised line '" + std::string(line.substr(0, 80)) + "'");
  }

  // Switch	65 "S-2c5eab0300b87b40"		# "MF0;A09-P1-IBLEAF-04-04:MQM9701/U1" enhanced port 0 lid 73
  // lmc
  // 0
  std::expected<void, Error> parse_header(std::string_view line, std::size_t n) {
    NodeRecord rec;
    std::string_view rest = line;
    auto word_end = rest.find_first_of(" \t");
    std::string_view word = rest.substr(0, word_end);
    if (word != "Switch" && word != "Ca" && word != "Rt") return error(n, "unrecognised node header");
    rest.remove_prefix(word_end == std::string_view::npos ? rest.size() : word_end);
    skip_space(rest);
    while (!rest.empty() && std::isdigit(static_cast<unsigned char>(rest.front()))) rest.remove_prefix(1);
    skip_space(rest);
    std::string id;
    if (!take_quoted(rest, id) || !split_node_id(id, rec.type, rec.guid)) {
      return error(n, std::string(word) + " header without a valid \"S-/H-/R-<guid>\" id");
    }
    skip_space(rest);
    if (!rest.empty() && rest.front() == '#') {
      rest.remove_prefix(1);
      skip_space(rest);
      if (!take_quoted(rest, rec.desc)) return error(n, "node description is not closed by a quote");
      cap_description(rec.desc);
    }
    rec.sysimg = pending_sysimg_;
    rec.line = n;
    pending_sysimg_.clear();
    auto [it, inserted] = index_.try_emplace(rec.type + rec.guid, nodes_.size());
    if (!inserted) {
      NodeRecord& first = nodes_[it->second];
      if (!first.desc.empty() && !rec.desc.empty() && first.desc != rec.desc) {
        // Two devices answer to one GUID: merging them would drop one host and rewire the other.
        return error(n, "GUID " + id + " names two nodes, \"" + first.desc + "\" (line " +
                            std::to_string(first.line) + ") and \"" + rec.desc +
                            "\"; the tree would be wrong");
      }
      warn("duplicate-node",
           where(n) + "node " + id + " appears twice; the later block is merged into the first");
      current_ = static_cast<long>(it->second);
      if (first.desc.empty()) first.desc = rec.desc;
      return {};
    }
    current_ = static_cast<long>(nodes_.size());
    nodes_.push_back(std::move(rec));
    return {};
  }

  // [1]	"H-e09d7303007a4bd8"[1](e09d7303007a4bd8) 		# "a08-p1-dgx-04-c01 mlx5_5" lid 647
  // 4xNDR [2](2c903003421b2) 	"S-e41d2d030003e470"[35]		# lid 3 lmc 0 "SwitchIB Mellanox
  // Technologies" lid 268 4xFDR
  std::expected<void, Error> parse_port(std::string_view line, std::size_t n) {
    PortRecord p;
    p.line = n;
    std::string_view rest = line;
    std::int64_t number = 0;
    if (!take_int_in(rest, '[', ']', number)) return error(n, "port line without a [port] number");
    if (number > kMaxPortNumber)
      return error(n, "port number " + std::to_string(number) + " is out of range (0-255)");
    p.port = static_cast<int>(number);
    if (auto g = take_guid_in_parens(rest)) p.port_guid = *g;
    if (!rest.empty() && rest.front() == '[') {  // extended port "[ext N]"
      auto end = rest.find(']');
      if (end == std::string_view::npos) return error(n, "unclosed '[' in port line");
      rest.remove_prefix(end + 1);
    }
    skip_space(rest);
    if (rest.empty()) {
      return error(n, "port line ends after the port number (truncated?)");
    }
    std::string peer;
    if (!take_quoted(rest, peer) || !split_node_id(peer, p.peer_type, p.peer_guid)) {
      return error(n, "port line without a valid \"S-/H-/R-<guid>\" peer");
    }
    if (!take_int_in(rest, '[', ']', number)) return error(n, "port line without the peer's [port] number");
    if (number > kMaxPortNumber) {
      return error(n, "peer port number " + std::to_string(number) + " is out of range (0-255)");
    }
    p.peer_port = static_cast<int>(number);
    if (auto g = take_guid_in_parens(rest)) p.peer_port_guid = *g;
    skip_space(rest);
    if (!rest.empty() && rest.front() == '#') {
      std::string_view comment = rest.substr(1);
      auto q1 = comment.find('"');
      if (q1 != std::string_view::npos) {
        auto q2 = comment.find('"', q1 + 1);
        if (q2 == std::string_view::npos)
          return error(n, "peer description is not closed by a quote (truncated?)");
        p.peer_desc = std::string(comment.substr(q1 + 1, q2 - q1 - 1));
        cap_description(p.peer_desc);
      }
      auto rate = last_token(comment);
      if (looks_like_rate(rate)) p.rate = rate;
    }
    return add_port(nodes_[static_cast<std::size_t>(current_)], std::move(p));
  }

  // A port listed again with the same peer is the same cable; with another peer the capture
  // contradicts itself, and either choice would build a wrong tree.
  std::expected<void, Error> add_port(NodeRecord& node, PortRecord p) {
    for (const auto& q : node.ports) {
      if (q.port != p.port) continue;
      if (q.peer_type == p.peer_type && q.peer_guid == p.peer_guid && q.peer_port == p.peer_port) {
        warn("repeated-port", where(p.line) + "port [" + std::to_string(p.port) + "] of " + node.type + "-" +
                                  node.guid + " is listed twice");
        return {};
      }
      return error(p.line, "port [" + std::to_string(p.port) + "] of " + node.type + "-" + node.guid +
                               " is cabled to " + p.peer_type + "-" + p.peer_guid + "[" +
                               std::to_string(p.peer_port) + "] here and to " + q.peer_type + "-" +
                               q.peer_guid + "[" + std::to_string(q.peer_port) + "] on line " +
                               std::to_string(q.line) + "; the tree would be wrong");
    }
    node.ports.push_back(std::move(p));
    return {};
  }

  // CA     5  1 0x0000000000100003 4x SDR - SW     4  1 0x0000000000200002 ( 'hxa-gpu01 mlx5_0' -
  // 'hxa-su1-leaf-r1' )
  std::expected<void, Error> parse_ports_report_line(std::string_view line, std::size_t n) {
    std::string_view main = line;
    std::string descs;
    if (auto paren = line.find('('); paren != std::string_view::npos) {
      main = line.substr(0, paren);
      descs = std::string(line.substr(paren));
    }
    std::istringstream in{std::string(main)};
    std::string type, guid, width, speed, dash, ptype, pguid;
    int lid = 0, port = 0, plid = 0, pport = 0;
    if (!(in >> type >> lid >> port >> guid >> width >> speed))
      return error(n, "malformed ports-report line");
    if (port < 0 || port > kMaxPortNumber)
      return error(n, "port number " + std::to_string(port) + " is out of range (0-255)");
    auto g = normalize_guid(guid);
    if (!g) return error(n, "ports-report line with an invalid GUID '" + guid + "'");
    std::vector<std::string> quoted;
    for (std::size_t i = 0; i < descs.size();) {
      auto a = descs.find('\'', i);
      if (a == std::string::npos) break;
      auto b = descs.find('\'', a + 1);
      if (b == std::string::npos) return error(n, "unclosed quote in ports-report line");
      quoted.push_back(descs.substr(a + 1, b - a - 1));
      cap_description(quoted.back());
      i = b + 1;
    }
    char local_type = type == "SW" ? 'S' : type == "RT" ? 'R' : 'H';
    NodeRecord& local = record(local_type, *g, quoted.empty() ? "" : quoted[0], n);
    if (!(in >> dash)) return {};  // an unconnected port
    if (dash != "-" || !(in >> ptype >> plid >> pport >> pguid))
      return error(n, "malformed peer in ports-report line");
    if (pport < 0 || pport > kMaxPortNumber) {
      return error(n, "peer port number " + std::to_string(pport) + " is out of range (0-255)");
    }
    auto pg = normalize_guid(pguid);
    if (!pg) return error(n, "ports-report line with an invalid peer GUID '" + pguid + "'");
    PortRecord p;
    p.line = n;
    p.port = port;
    if (local_type == 'H') p.port_guid = *g;
    p.peer_type = ptype == "SW" ? 'S' : ptype == "RT" ? 'R' : 'H';
    p.peer_guid = *pg;
    p.peer_port = pport;
    if (p.peer_type == 'H') p.peer_port_guid = *pg;
    p.peer_desc = quoted.size() > 1 ? quoted[1] : "";
    p.rate = width + speed;
    (void)lid;
    (void)plid;
    return add_port(local, std::move(p));
  }

  NodeRecord& record(char type, const std::string& guid, const std::string& desc, std::size_t line) {
    auto [it, inserted] = index_.try_emplace(type + guid, nodes_.size());
    if (inserted) {
      NodeRecord rec;
      rec.line = line;
      rec.type = type;
      rec.guid = guid;
      rec.desc = desc;
      nodes_.push_back(std::move(rec));
    }
    return nodes_[it->second];
  }

  // Every switch a port line names must have its own block: one that does not is where a cut-off
  // capture stopped, and every cable beyond it is missing from the tree.
  std::expected<void, Error> check_complete() {
    // A ports report (-p) lists ports, not nodes: a switch may appear only as a peer there.
    if (ports_report_) return {};
    std::size_t switches = 0, cas = 0;
    const PortRecord* first_switch = nullptr;
    const PortRecord* first_ca = nullptr;
    std::set<std::string> counted;
    for (const auto& rec : nodes_) {
      for (const auto& p : rec.ports) {
        const std::string key = p.peer_type + p.peer_guid;
        if (index_.contains(key) || !counted.insert(key).second) continue;
        if (p.peer_type == 'H') {
          ++cas;
          if (!first_ca) first_ca = &p;
        } else {
          ++switches;
          if (!first_switch) first_switch = &p;
        }
      }
    }
    if (switches > 0) {
      return error(first_switch->line,
                   std::to_string(switches) +
                       " switch(es) are named by port lines but never described (first " +
                       first_switch->peer_type + "-" + first_switch->peer_guid +
                       " here); the capture is cut off or incomplete and the tree would be wrong");
    }
    if (cas > 0) {
      warn("undescribed-ca", where(first_ca->line) + std::to_string(cas) +
                                 " CA(s) are named by port lines but never described (first H-" +
                                 first_ca->peer_guid +
                                 " here); their hosts come from the switches' port lines");
    }
    return {};
  }

  std::expected<IbnetdiscoverCapture, Error> build() {
    if (auto ok = check_complete(); !ok) return std::unexpected(ok.error());
    IbnetdiscoverCapture out;
    FabricGraph& g = out.graph;
    // CA port GUIDs, from the CA's own block or from its peers' lines.
    std::map<std::pair<std::string, int>, std::string> ca_port_guid;
    std::map<std::string, std::string> desc_of;  // type+guid -> description seen anywhere
    for (const auto& rec : nodes_) {
      if (!rec.desc.empty()) desc_of[rec.type + rec.guid] = rec.desc;
      for (const auto& p : rec.ports) {
        if (rec.type == 'H' && !p.port_guid.empty()) ca_port_guid[{rec.guid, p.port}] = p.port_guid;
        if (p.peer_type == 'H' && !p.peer_port_guid.empty())
          ca_port_guid[{p.peer_guid, p.peer_port}] = p.peer_port_guid;
        if (!p.peer_desc.empty()) desc_of.try_emplace(p.peer_type + p.peer_guid, p.peer_desc);
      }
    }
    std::map<std::string, std::string> sysimg_of;
    for (const auto& rec : nodes_) sysimg_of[rec.type + rec.guid] = rec.sysimg;

    auto vertex_for = [&](char type, const std::string& guid, int port) -> VertexId {
      const std::string key = type + guid;
      auto d = desc_of.find(key);
      const std::string desc = d == desc_of.end() ? std::string() : d->second;
      if (type != 'H') return g.add_switch(guid, desc);
      auto pg = ca_port_guid.find({guid, port});
      std::string id = pg != ca_port_guid.end() ? pg->second : guid + "/" + std::to_string(port);
      VertexId v = g.add_endpoint(id, desc);
      auto& vx = g.vertex(v);
      vx.node_guid = guid;
      vx.port = port;
      vx.system_guid = sysimg_of[key];
      vx.aggregation_node = desc.find("Aggregation Node") != std::string::npos;
      return v;
    };

    std::set<std::tuple<VertexId, int, VertexId, int>> seen;
    for (const auto& rec : nodes_) {
      if (rec.type == 'S')
        ++out.switches;
      else if (rec.type == 'H')
        ++out.cas;
      else
        ++out.routers;
      if (rec.type != 'H') vertex_for(rec.type, rec.guid, 0);
      if (rec.type == 'H' && rec.ports.empty()) {
        VertexId v = g.add_endpoint(rec.guid, rec.desc);
        g.vertex(v).node_guid = rec.guid;
        g.vertex(v).system_guid = rec.sysimg;
        g.vertex(v).aggregation_node = rec.desc.find("Aggregation Node") != std::string::npos;
      }
      for (const auto& p : rec.ports) {
        VertexId a = vertex_for(rec.type, rec.guid, p.port);
        VertexId b = vertex_for(p.peer_type, p.peer_guid, p.peer_port);
        auto key = a < b || (a == b && p.port <= p.peer_port) ? std::make_tuple(a, p.port, b, p.peer_port)
                                                              : std::make_tuple(b, p.peer_port, a, p.port);
        if (!seen.insert(key).second) continue;  // the same cable seen from its other end
        if (a == b) {
          warn("self-loop", std::string(name_) + ": switch " + rec.guid + " has a self-loop (port " +
                                std::to_string(p.port) + " to port " + std::to_string(p.peer_port) + ")");
        }
        g.add_link(a, p.port, b, p.peer_port, p.rate);
      }
    }
    // One line per kind of oddity: a capture with 200,000 duplicates must not print 200,000 lines.
    for (const auto& [kind, tally] : tallies_) {
      warnings_.push_back(tally.count == 1
                              ? tally.first
                              : tally.first + " (and " + std::to_string(tally.count - 1) + " more like it)");
    }
    if (long_descriptions_ > 0) {
      warnings_.push_back(std::string(name_) + ": " + std::to_string(long_descriptions_) +
                          " node description(s) longer than InfiniBand's 64 bytes, cut to 64");
    }
    out.warnings = std::move(warnings_);
    return out;
  }

  // Descriptions become label values and JSON strings: at most 64 bytes, valid UTF-8.
  void warn(const std::string& kind, std::string message) {
    for (auto& [k, tally] : tallies_) {
      if (k == kind) {
        ++tally.count;
        return;
      }
    }
    tallies_.push_back({kind, {std::move(message), 1}});
  }

  void cap_description(std::string& desc) {
    if (desc.size() > kNodeDescriptionBytes) {
      desc.resize(kNodeDescriptionBytes);
      ++long_descriptions_;
    }
    for (unsigned char c : desc) {
      if (c >= 0x80) {
        desc = text::valid_utf8(desc);
        break;
      }
    }
  }

  std::string where(std::size_t n) const { return std::string(name_) + ":" + std::to_string(n) + ": "; }
  std::unexpected<Error> error(std::size_t n, const std::string& what) const {
    return std::unexpected(Error(ErrorCode::kParse, where(n) + what));
  }

  std::string_view name_;
  std::vector<NodeRecord> nodes_;
  std::map<std::string, std::size_t> index_;
  long current_ = -1;
  std::string pending_sysimg_;
  std::vector<std::string> warnings_;
  struct Tally {
    std::string first;  // the first occurrence, in full
    std::size_t count = 0;
  };
  std::vector<std::pair<std::string, Tally>> tallies_;  // by kind, in order of first sight
  std::size_t long_descriptions_ = 0;
  bool ports_report_ = false;
};

}  // namespace

std::expected<IbnetdiscoverCapture, Error> parse_ibnetdiscover(std::string_view text, std::string_view name) {
  return Parser(name).run(text);
}

std::expected<IbnetdiscoverCapture, Error> parse_ibnetdiscover_file(const std::filesystem::path& path,
                                                                    std::istream* stdin_stream) {
  const std::string name = path.string() == "-" ? "<stdin>" : path.string();
  auto text = path.string() == "-"
                  ? io::read_bounded_stream(stdin_stream ? *stdin_stream : std::cin, name, io::kDataFileLimit)
                  : io::read_bounded_file(path, io::kDataFileLimit);
  if (!text) return std::unexpected(text.error());
  return parse_ibnetdiscover(*text, name);
}

}  // namespace hypertopo::discoverers
