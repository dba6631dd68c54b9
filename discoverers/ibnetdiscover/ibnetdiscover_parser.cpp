#include "discoverers/ibnetdiscover/ibnetdiscover_parser.h"

#include <algorithm>
#include <bit>
#include <bitset>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <sstream>
#include <unordered_map>
#include <utility>

#include "io/bounded_file.h"
#include "text/utf8.h"
#include "topology/guid_text.h"

namespace hypertopo::discoverers {
namespace {

using topology::FabricGraph;
using topology::VertexId;

// A node as the capture names it: its type ('S', 'H' or 'R') and its node GUID as an integer. Every
// node named anywhere (a block of its own or a peer on a port line) gets a dense number, the index
// of its NodeKey in Parser::keys_, so nothing past the first sight of a name is looked up by text.
struct NodeKey {
  std::uint64_t guid = 0;
  char type = 0;
  bool operator==(const NodeKey&) const = default;
};

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

// Node keys to their dense numbers: open addressing with linear probing, at most 3/4 full, so a
// lookup is one or two cache lines and a key costs no allocation of its own.
class KeyTable {
 public:
  void reserve(std::size_t keys) {
    if (keys * 4 > slots_.size() * 3) rehash(std::bit_ceil(keys * 4 / 3 + 1));
  }

  // The number `key` has, or `next` given it (`inserted` says which).
  std::uint32_t find_or_insert(NodeKey key, std::uint32_t next, bool& inserted) {
    if ((size_ + 1) * 4 > slots_.size() * 3) rehash(std::max<std::size_t>(64, slots_.size() * 2));
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = hash(key) & mask;; i = (i + 1) & mask) {
      Slot& slot = slots_[i];
      if (slot.id == kNone) {
        slot = {key.guid, next, key.type};
        ++size_;
        inserted = true;
        return next;
      }
      if (slot.guid == key.guid && slot.type == key.type) {
        inserted = false;
        return slot.id;
      }
    }
  }

 private:
  struct Slot {
    std::uint64_t guid = 0;
    std::uint32_t id = kNone;
    char type = 0;
  };
  static std::size_t hash(NodeKey key) {
    std::uint64_t h =
        (key.guid ^ std::uint64_t{static_cast<unsigned char>(key.type)} << 56) * 0x9e3779b97f4a7c15ULL;
    return static_cast<std::size_t>(h ^ h >> 32);
  }
  void rehash(std::size_t count) {
    std::vector<Slot> old = std::exchange(slots_, std::vector<Slot>(count));
    const std::size_t mask = count - 1;
    for (const Slot& slot : old) {
      if (slot.id == kNone) continue;
      std::size_t i = hash({slot.guid, slot.type}) & mask;
      while (slots_[i].id != kNone) i = (i + 1) & mask;
      slots_[i] = slot;
    }
  }
  std::vector<Slot> slots_;
  std::size_t size_ = 0;
};

// One port line, 40 bytes. Descriptions and rates are numbers of views into Parser::text_, which keeps
// what the parser needs of the capture: the capture itself is read in pieces and never held whole.
struct PortRecord {
  std::uint64_t port_guid = 0;       // own port GUID, when printed (has_port_guid)
  std::uint64_t peer_port_guid = 0;  // when printed (has_peer_port_guid)
  std::uint32_t peer_desc = 0;       // Parser::descs_, 0 = none
  std::uint32_t line = 0;            // where it was read, for messages
  std::uint32_t peer = 0;            // the peer's key (Parser::keys_)
  std::uint32_t next = kNone;        // the owner's next port (Parser::ports_), in the order they were read
  std::uint32_t rate = 0;            // Parser::rates_, 0 = none
  std::uint8_t port = 0;
  std::uint8_t peer_port = 0;
  bool has_port_guid = false;
  bool has_peer_port_guid = false;
};

struct NodeRecord {
  std::size_t line = 0;  // of its header (or first ports-report line)
  std::uint32_t key = 0;
  std::string_view desc;
  std::uint64_t sysimg = 0;
  bool has_sysimg = false;
  std::uint32_t first_port = kNone;  // its ports, a list through PortRecord::next
  std::uint32_t last_port = kNone;
  std::bitset<256> ports_seen;  // port numbers listed so far: a repeat is looked for only among these
};

struct KeyInfo {
  NodeKey key;
  std::uint32_t record = kNone;  // its block (Parser::nodes_), none for a node seen only as a peer
  std::uint32_t vertex = kNone;  // a switch's or router's vertex, once made
  std::string_view desc;         // the description seen anywhere: its own block's, else a peer line's
  std::uint32_t peer_desc = 0;   // the last description a peer line gave it (Parser::descs_), kept once
  std::uint32_t first_ca_port = kNone;  // a CA's ports as its peers and its block name them (build)
  bool has_desc = false;
  bool counted = false;  // named by a port line without a block, already counted as missing
};

using topology::guid_text;

// The GUIDs topology::normalize_guid accepts ("0x" optional, 1-16 hex digits), as integers.
std::optional<std::uint64_t> parse_guid(std::string_view text) {
  if (text.starts_with("0x") || text.starts_with("0X")) text.remove_prefix(2);
  if (text.empty() || text.size() > 16) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : text) {
    int d;
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (c >= 'a' && c <= 'f')
      d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      d = c - 'A' + 10;
    else
      return std::nullopt;
    v = v << 4 | static_cast<std::uint64_t>(d);
  }
  return v;
}

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

// "(2c9030004e939)" -> the GUID; leaves `s` alone when there is none.
std::optional<std::uint64_t> take_guid_in_parens(std::string_view& s) {
  if (s.empty() || s.front() != '(') return std::nullopt;
  auto end = s.find(')');
  if (end == std::string_view::npos) return std::nullopt;
  auto g = parse_guid(s.substr(1, end - 1));
  if (!g) return std::nullopt;
  s.remove_prefix(end + 1);
  return g;
}

bool take_quoted(std::string_view& s, std::string_view& out) {
  if (s.empty() || s.front() != '"') return false;
  auto end = s.find('"', 1);
  if (end == std::string_view::npos) return false;
  out = s.substr(1, end - 1);
  s.remove_prefix(end + 1);
  return true;
}

// "S-2c5eab0300b87b40" -> ('S', 0x2c5eab0300b87b40)
bool split_node_id(std::string_view id, NodeKey& key) {
  if (id.size() < 3 || id[1] != '-' || (id[0] != 'S' && id[0] != 'H' && id[0] != 'R')) return false;
  auto g = parse_guid(id.substr(2));
  if (!g) return false;
  key = {*g, id[0]};
  return true;
}

bool looks_like_rate(std::string_view t) {
  auto x = t.find('x');
  return x != std::string_view::npos && x > 0 && x + 1 < t.size() &&
         std::isdigit(static_cast<unsigned char>(t.front())) != 0;
}

std::string_view last_token(std::string_view s) {
  s = trim(s);
  auto sp = s.find_last_of(" \t");
  return sp == std::string_view::npos ? s : s.substr(sp + 1);
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

// Text kept past the line it was read on, in blocks that never move.
class TextStore {
 public:
  std::string_view keep(std::string_view s) {
    if (s.empty()) return {};
    if (s.size() > kBlock - used_) {
      blocks_.push_back(std::make_unique_for_overwrite<char[]>(std::max(kBlock, s.size())));
      used_ = s.size() > kBlock ? kBlock : 0;
      if (s.size() > kBlock) {
        std::memcpy(blocks_.back().get(), s.data(), s.size());
        return {blocks_.back().get(), s.size()};
      }
    }
    char* at = blocks_.back().get() + used_;
    std::memcpy(at, s.data(), s.size());
    used_ += s.size();
    return {at, s.size()};
  }

 private:
  static constexpr std::size_t kBlock = std::size_t{64} << 10;
  std::vector<std::unique_ptr<char[]>> blocks_;
  std::size_t used_ = kBlock;
};

// Takes the capture line by line, whole (run) or in pieces as read (take, then finish).
class Parser {
 public:
  explicit Parser(std::string_view name) : name_(name) {}

  // Room for a capture of `bytes` (a port line is some 100 bytes), so the tables never grow and
  // copy; room never written costs no memory.
  void expect(std::size_t bytes) {
    ports_.reserve(bytes / 64);
    key_ids_.reserve(bytes / 500);
    keys_.reserve(bytes / 500);
    nodes_.reserve(bytes / 500);
  }

  std::expected<IbnetdiscoverCapture, Error> run(std::string_view text) {
    expect(text.size());
    std::size_t pos = 0;
    while (pos < text.size()) {
      auto nl = text.find('\n', pos);
      if (auto r = line(text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos));
          !r)
        return std::unexpected(r.error());
      pos = nl == std::string_view::npos ? text.size() : nl + 1;
    }
    return finish();
  }

  // The next piece of the capture: its whole lines are read, the last one's start is kept until
  // its end comes.
  std::expected<void, Error> take(std::string_view piece) {
    std::size_t pos = 0;
    if (!partial_.empty()) {
      auto nl = piece.find('\n');
      if (nl == std::string_view::npos) {
        partial_.append(piece);
        return {};
      }
      partial_.append(piece.substr(0, nl));
      if (auto r = line(partial_); !r) return r;
      partial_.clear();
      pos = nl + 1;
    }
    while (pos < piece.size()) {
      auto nl = piece.find('\n', pos);
      if (nl == std::string_view::npos) {
        partial_.assign(piece.substr(pos));
        break;
      }
      if (auto r = line(piece.substr(pos, nl - pos)); !r) return r;
      pos = nl + 1;
    }
    return {};
  }

  std::expected<IbnetdiscoverCapture, Error> finish() {
    if (!partial_.empty()) {
      if (auto r = line(partial_); !r) return std::unexpected(r.error());
      partial_.clear();
    }
    if (nodes_.empty()) {
      return fail(ErrorCode::kParse,
                  std::string(name_) + ": no switches or CAs found (empty or not ibnetdiscover output)");
    }
    return build();
  }

 private:
  std::expected<void, Error> line(std::string_view raw) {
    const std::size_t n = ++line_no_;
    for (unsigned char c : raw) {
      if (c == 0 || (c < 0x20 && c != '\t' && c != '\r' && c != '\f' && c != '\v')) {
        return error(n, "binary data, not ibnetdiscover text");
      }
    }
    std::string_view text = trim(raw);
    if (text.empty() || text.front() == '#') return {};
    return parse_line(text, n, ports_report_);
  }

  std::expected<void, Error> parse_line(std::string_view line, std::size_t n, bool& ports_report) {
    auto starts = [&](std::string_view p) { return line.starts_with(p); };
    if (line.front() == '[') {
      if (current_ == kNone) return error(n, "a port line before any Switch/Ca header");
      return parse_port(line, n);
    }
    if (starts("vendid=") || starts("devid=")) {
      return {};
    }
    if (starts("sysimgguid=")) {
      auto g = parse_guid(trim(line.substr(11)));
      pending_sysimg_ = g.value_or(0);
      has_pending_sysimg_ = g.has_value();
      return {};
    }
    if (starts("switchguid=") || starts("caguid=") || starts("rtguid=")) return {};
    if (starts("Non-Chassis Nodes") || starts("Chassis ") || starts("Chassis\t")) return {};
    if (starts("Switch") || starts("Ca") || starts("Rt")) {
      if (auto r = parse_header(line, n); !r) return r;
      return {};
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

  // The dense number of a node's key, a new one the first time it is named.
  std::uint32_t key_id(NodeKey key) {
    bool inserted = false;
    const std::uint32_t id = key_ids_.find_or_insert(key, static_cast<std::uint32_t>(keys_.size()), inserted);
    if (inserted) {
      KeyInfo& info = keys_.emplace_back();
      info.key = key;
    }
    return id;
  }

  std::string node_name(std::uint32_t key) const {
    return std::string(1, keys_[key].key.type) + "-" + guid_text(keys_[key].key.guid);
  }

  // Switch	65 "S-2c5eab0300b87b40"		# "MF0;A09-P1-IBLEAF-04-04:MQM9701/U1" enhanced port 0 lid 73
  // lmc
  // 0
  std::expected<void, Error> parse_header(std::string_view line, std::size_t n) {
    std::string_view rest = line;
    auto word_end = rest.find_first_of(" \t");
    std::string_view word = rest.substr(0, word_end);
    if (word != "Switch" && word != "Ca" && word != "Rt") return error(n, "unrecognised node header");
    rest.remove_prefix(word_end == std::string_view::npos ? rest.size() : word_end);
    skip_space(rest);
    while (!rest.empty() && std::isdigit(static_cast<unsigned char>(rest.front()))) rest.remove_prefix(1);
    skip_space(rest);
    std::string_view id;
    NodeKey key;
    if (!take_quoted(rest, id) || !split_node_id(id, key)) {
      return error(n, std::string(word) + " header without a valid \"S-/H-/R-<guid>\" id");
    }
    std::string_view desc;
    skip_space(rest);
    if (!rest.empty() && rest.front() == '#') {
      rest.remove_prefix(1);
      skip_space(rest);
      if (!take_quoted(rest, desc)) return error(n, "node description is not closed by a quote");
      desc = text_.keep(cap_description(desc));
    }
    const std::uint64_t sysimg = pending_sysimg_;
    const bool has_sysimg = has_pending_sysimg_;
    pending_sysimg_ = 0;
    has_pending_sysimg_ = false;
    const std::uint32_t k = key_id(key);
    if (keys_[k].record != kNone) {
      NodeRecord& first = nodes_[keys_[k].record];
      if (!first.desc.empty() && !desc.empty() && first.desc != desc) {
        // Two devices answer to one GUID: merging them would drop one host and rewire the other.
        return error(n, "GUID " + std::string(id) + " names two nodes, \"" + std::string(first.desc) +
                            "\" (line " + std::to_string(first.line) + ") and \"" + std::string(desc) +
                            "\"; the tree would be wrong");
      }
      warn("duplicate-node",
           where(n) + "node " + std::string(id) + " appears twice; the later block is merged into the first");
      current_ = keys_[k].record;
      if (first.desc.empty()) first.desc = desc;
      return {};
    }
    current_ = add_record(k, desc, n);
    nodes_[current_].sysimg = sysimg;
    nodes_[current_].has_sysimg = has_sysimg;
    return {};
  }

  std::uint32_t add_record(std::uint32_t key, std::string_view desc, std::size_t line) {
    const auto at = static_cast<std::uint32_t>(nodes_.size());
    NodeRecord& rec = nodes_.emplace_back();
    rec.line = line;
    rec.key = key;
    rec.desc = desc;
    keys_[key].record = at;
    return at;
  }

  // [1]	"H-e09d7303007a4bd8"[1](e09d7303007a4bd8) 		# "a08-p1-dgx-04-c01 mlx5_5" lid 647
  // 4xNDR [2](2c903003421b2) 	"S-e41d2d030003e470"[35]		# lid 3 lmc 0 "SwitchIB Mellanox
  // Technologies" lid 268 4xFDR
  std::expected<void, Error> parse_port(std::string_view line, std::size_t n) {
    PortRecord p;
    p.line = static_cast<std::uint32_t>(n);
    std::string_view rest = line;
    std::int64_t number = 0;
    if (!take_int_in(rest, '[', ']', number)) return error(n, "port line without a [port] number");
    if (number > kMaxPortNumber)
      return error(n, "port number " + std::to_string(number) + " is out of range (0-255)");
    p.port = static_cast<std::uint8_t>(number);
    if (auto g = take_guid_in_parens(rest)) {
      p.port_guid = *g;
      p.has_port_guid = true;
    }
    if (!rest.empty() && rest.front() == '[') {  // extended port "[ext N]"
      auto end = rest.find(']');
      if (end == std::string_view::npos) return error(n, "unclosed '[' in port line");
      rest.remove_prefix(end + 1);
    }
    skip_space(rest);
    if (rest.empty()) {
      return error(n, "port line ends after the port number (truncated?)");
    }
    std::string_view peer;
    NodeKey peer_key;
    if (!take_quoted(rest, peer) || !split_node_id(peer, peer_key)) {
      return error(n, "port line without a valid \"S-/H-/R-<guid>\" peer");
    }
    if (!take_int_in(rest, '[', ']', number)) return error(n, "port line without the peer's [port] number");
    if (number > kMaxPortNumber) {
      return error(n, "peer port number " + std::to_string(number) + " is out of range (0-255)");
    }
    p.peer_port = static_cast<std::uint8_t>(number);
    if (auto g = take_guid_in_parens(rest)) {
      p.peer_port_guid = *g;
      p.has_peer_port_guid = true;
    }
    skip_space(rest);
    std::string_view peer_desc;
    if (!rest.empty() && rest.front() == '#') {
      std::string_view comment = rest.substr(1);
      auto q1 = comment.find('"');
      if (q1 != std::string_view::npos) {
        auto q2 = comment.find('"', q1 + 1);
        if (q2 == std::string_view::npos)
          return error(n, "peer description is not closed by a quote (truncated?)");
        peer_desc = cap_description(comment.substr(q1 + 1, q2 - q1 - 1));
      }
      auto rate = last_token(comment);
      if (looks_like_rate(rate)) p.rate = rate_id(rate);
    }
    p.peer = key_id(peer_key);
    p.peer_desc = keep_peer_desc(p.peer, peer_desc);
    return add_port(current_, p);
  }

  // A peer's description as a port line gives it: most lines repeat the last one given, kept once.
  std::uint32_t keep_peer_desc(std::uint32_t peer, std::string_view desc) {
    if (desc.empty()) return 0;
    KeyInfo& k = keys_[peer];
    if (k.peer_desc == 0 || descs_[k.peer_desc] != desc) {
      if (descs_.empty()) descs_.emplace_back();  // 0: none
      k.peer_desc = static_cast<std::uint32_t>(descs_.size());
      descs_.push_back(text_.keep(desc));
    }
    return k.peer_desc;
  }

  std::uint32_t rate_id(std::string_view rate) {
    if (last_rate_ != 0 && rates_[last_rate_] == rate) return last_rate_;
    if (rates_.empty()) rates_.emplace_back();  // 0: none
    auto [it, inserted] = rate_ids_.try_emplace(std::string(rate), static_cast<std::uint32_t>(rates_.size()));
    if (inserted) rates_.push_back(text_.keep(rate));
    last_rate_ = it->second;
    return last_rate_;
  }

  // A port listed again with the same peer is the same cable; with another peer the capture
  // contradicts itself, and either choice would build a wrong tree.
  std::expected<void, Error> add_port(std::uint32_t node_at, const PortRecord& p) {
    NodeRecord& node = nodes_[node_at];
    if (node.ports_seen.test(p.port)) {
      for (std::uint32_t i = node.first_port; i != kNone; i = ports_[i].next) {
        const PortRecord& q = ports_[i];
        if (q.port != p.port) continue;
        if (q.peer == p.peer && q.peer_port == p.peer_port) {
          warn("repeated-port", where(p.line) + "port [" + std::to_string(p.port) + "] of " +
                                    node_name(node.key) + " is listed twice");
          return {};
        }
        return error(p.line, "port [" + std::to_string(p.port) + "] of " + node_name(node.key) +
                                 " is cabled to " + node_name(p.peer) + "[" + std::to_string(p.peer_port) +
                                 "] here and to " + node_name(q.peer) + "[" + std::to_string(q.peer_port) +
                                 "] on line " + std::to_string(q.line) + "; the tree would be wrong");
      }
    }
    node.ports_seen.set(p.port);
    const auto at = static_cast<std::uint32_t>(ports_.size());
    ports_.push_back(p);
    if (node.last_port == kNone)
      node.first_port = at;
    else
      ports_[node.last_port].next = at;
    node.last_port = at;
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
    auto g = parse_guid(guid);
    if (!g) return error(n, "ports-report line with an invalid GUID '" + guid + "'");
    std::vector<std::string_view> quoted;
    for (std::size_t i = 0; i < descs.size();) {
      auto a = descs.find('\'', i);
      if (a == std::string::npos) break;
      auto b = descs.find('\'', a + 1);
      if (b == std::string::npos) return error(n, "unclosed quote in ports-report line");
      quoted.push_back(text_.keep(cap_description(std::string_view(descs).substr(a + 1, b - a - 1))));
      i = b + 1;
    }
    char local_type = type == "SW" ? 'S' : type == "RT" ? 'R' : 'H';
    const std::uint32_t local = record(local_type, *g, quoted.empty() ? std::string_view() : quoted[0], n);
    if (!(in >> dash)) return {};  // an unconnected port
    if (dash != "-" || !(in >> ptype >> plid >> pport >> pguid))
      return error(n, "malformed peer in ports-report line");
    if (pport < 0 || pport > kMaxPortNumber) {
      return error(n, "peer port number " + std::to_string(pport) + " is out of range (0-255)");
    }
    auto pg = parse_guid(pguid);
    if (!pg) return error(n, "ports-report line with an invalid peer GUID '" + pguid + "'");
    PortRecord p;
    p.line = static_cast<std::uint32_t>(n);
    p.port = static_cast<std::uint8_t>(port);
    if (local_type == 'H') {
      p.port_guid = *g;
      p.has_port_guid = true;
    }
    const char peer_type = ptype == "SW" ? 'S' : ptype == "RT" ? 'R' : 'H';
    p.peer = key_id({*pg, peer_type});
    p.peer_port = static_cast<std::uint8_t>(pport);
    if (peer_type == 'H') {
      p.peer_port_guid = *pg;
      p.has_peer_port_guid = true;
    }
    p.peer_desc = keep_peer_desc(p.peer, quoted.size() > 1 ? quoted[1] : std::string_view());
    p.rate = rate_id(width + speed);
    (void)lid;
    (void)plid;
    return add_port(local, p);
  }

  std::uint32_t record(char type, std::uint64_t guid, std::string_view desc, std::size_t line) {
    const std::uint32_t k = key_id({guid, type});
    if (keys_[k].record != kNone) return keys_[k].record;
    return add_record(k, desc, line);
  }

  // Every switch a port line names must have its own block: one that does not is where a cut-off
  // capture stopped, and every cable beyond it is missing from the tree.
  std::expected<void, Error> check_complete() {
    // A ports report (-p) lists ports, not nodes: a switch may appear only as a peer there.
    if (ports_report_) return {};
    std::size_t switches = 0, cas = 0;
    const PortRecord* first_switch = nullptr;
    const PortRecord* first_ca = nullptr;
    for (const auto& rec : nodes_) {
      for (std::uint32_t i = rec.first_port; i != kNone; i = ports_[i].next) {
        const PortRecord& p = ports_[i];
        KeyInfo& peer = keys_[p.peer];
        if (peer.record != kNone || peer.counted) continue;
        peer.counted = true;
        if (peer.key.type == 'H') {
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
                       node_name(first_switch->peer) +
                       " here); the capture is cut off or incomplete and the tree would be wrong");
    }
    if (cas > 0) {
      warn("undescribed-ca", where(first_ca->line) + std::to_string(cas) +
                                 " CA(s) are named by port lines but never described (first H-" +
                                 guid_text(keys_[first_ca->peer].key.guid) +
                                 " here); their hosts come from the switches' port lines");
    }
    return {};
  }

  // One port of a CA: its port GUID where the capture prints one, and its vertex once made.
  struct CaPort {
    std::uint64_t port_guid = 0;
    VertexId vertex = kNone;
    std::uint32_t next = kNone;  // the CA's next port
    std::uint8_t port = 0;
    bool has_port_guid = false;
  };

  std::expected<IbnetdiscoverCapture, Error> build() {
    if (auto ok = check_complete(); !ok) return std::unexpected(ok.error());
    IbnetdiscoverCapture out;
    FabricGraph& g = out.graph;
    // CA port GUIDs, from the CA's own block or from its peers' lines (the last one read wins), and
    // each node's description: its own block's, else the first a peer line gives.
    std::vector<CaPort> ca_ports;  // a list per CA from KeyInfo::first_ca_port; a CA has a few
    ca_ports.reserve(ports_.size() / 4 + 1);
    auto ca_port_at = [&](std::uint32_t key, std::uint8_t port) -> std::uint32_t {
      std::uint32_t* link = &keys_[key].first_ca_port;
      for (; *link != kNone; link = &ca_ports[*link].next) {
        if (ca_ports[*link].port == port) return *link;
      }
      const auto added = static_cast<std::uint32_t>(ca_ports.size());
      *link = added;  // before the push, which may move the list `link` points into
      ca_ports.push_back({.port = port});
      return added;
    };
    auto ca_port = [&](std::uint32_t key, std::uint8_t port) -> CaPort& {
      return ca_ports[ca_port_at(key, port)];
    };
    std::size_t vertices = 0;
    for (const auto& rec : nodes_) {
      KeyInfo& self = keys_[rec.key];
      if (!rec.desc.empty()) {
        self.desc = rec.desc;
        self.has_desc = true;
      }
      vertices += self.key.type == 'H' ? 0 : 1;
      for (std::uint32_t i = rec.first_port; i != kNone; i = ports_[i].next) {
        const PortRecord& p = ports_[i];
        if (self.key.type == 'H') {
          CaPort& c = ca_port(rec.key, p.port);
          if (p.has_port_guid) {
            c.port_guid = p.port_guid;
            c.has_port_guid = true;
          }
        }
        KeyInfo& peer = keys_[p.peer];
        if (peer.key.type == 'H') {
          CaPort& c = ca_port(p.peer, p.peer_port);
          if (p.has_peer_port_guid) {
            c.port_guid = p.peer_port_guid;
            c.has_port_guid = true;
          }
        }
        if (p.peer_desc != 0 && !peer.has_desc) {
          peer.desc = descs_[p.peer_desc];
          peer.has_desc = true;
        }
      }
    }
    g.reserve(vertices + ca_ports.size() + nodes_.size(), ports_.size() / 2 + 1);

    // Which CA port last set an endpoint's node GUID, port and system GUID: another that shares the
    // vertex (two CA ports given one port GUID) sets them again when it is next named, as it would
    // if every port line looked its vertex up afresh.
    std::vector<std::uint32_t> written_by;
    constexpr std::uint32_t kByBlock = kNone - 1;
    auto sysimg_text = [&](std::uint32_t key) {
      const std::uint32_t r = keys_[key].record;
      return r != kNone && nodes_[r].has_sysimg ? guid_text(nodes_[r].sysimg) : std::string();
    };
    auto vertex_for = [&](std::uint32_t key, std::uint8_t port) -> VertexId {
      KeyInfo& k = keys_[key];
      if (k.key.type != 'H') {
        if (k.vertex == kNone) k.vertex = g.add_switch(guid_text(k.key.guid), k.desc);
        return k.vertex;
      }
      const std::uint32_t slot = ca_port_at(key, port);
      CaPort& c = ca_ports[slot];
      if (c.vertex == kNone) {
        const std::string id =
            c.has_port_guid ? guid_text(c.port_guid) : guid_text(k.key.guid) + "/" + std::to_string(port);
        c.vertex = g.add_endpoint(id, k.desc);
      }
      if (written_by.size() <= c.vertex) written_by.resize(c.vertex + std::size_t{1}, kNone);
      if (written_by[c.vertex] != slot) {
        auto& vx = g.vertex(c.vertex);
        vx.node_guid = guid_text(k.key.guid);
        vx.port = port;
        vx.system_guid = sysimg_text(key);
        vx.aggregation_node = k.desc.find("Aggregation Node") != std::string_view::npos;
        written_by[c.vertex] = slot;
      }
      return c.vertex;
    };

    // The cables added, a list from each one's lower end (a vertex has as many as it has ports): a
    // cable is added once, from the first end read.
    std::vector<std::uint32_t> cables_of;                 // by vertex: its first cable (cables)
    std::vector<std::pair<Cable, std::uint32_t>> cables;  // and the next from the same vertex
    cables.reserve(ports_.size() / 2 + 1);
    auto seen = [&](const Cable& c) {
      if (cables_of.size() <= c.a)
        cables_of.resize(std::max<std::size_t>(c.a + std::size_t{1}, g.vertex_count()), kNone);
      for (std::uint32_t i = cables_of[c.a]; i != kNone; i = cables[i].second) {
        if (cables[i].first == c) return true;
      }
      cables.emplace_back(c, cables_of[c.a]);
      cables_of[c.a] = static_cast<std::uint32_t>(cables.size() - 1);
      return false;
    };
    for (const auto& rec : nodes_) {
      const NodeKey self = keys_[rec.key].key;
      if (self.type == 'S')
        ++out.switches;
      else if (self.type == 'H')
        ++out.cas;
      else
        ++out.routers;
      if (self.type != 'H') vertex_for(rec.key, 0);
      if (self.type == 'H' && rec.first_port == kNone) {
        VertexId v = g.add_endpoint(guid_text(self.guid), rec.desc);
        g.vertex(v).node_guid = guid_text(self.guid);
        g.vertex(v).system_guid = rec.has_sysimg ? guid_text(rec.sysimg) : std::string();
        g.vertex(v).aggregation_node = rec.desc.find("Aggregation Node") != std::string_view::npos;
        if (written_by.size() <= v) written_by.resize(v + std::size_t{1}, kNone);
        written_by[v] = kByBlock;
      }
      for (std::uint32_t i = rec.first_port; i != kNone; i = ports_[i].next) {
        const PortRecord& p = ports_[i];
        VertexId a = vertex_for(rec.key, p.port);
        VertexId b = vertex_for(p.peer, p.peer_port);
        const Cable key = a < b || (a == b && p.port <= p.peer_port) ? Cable{a, b, p.port, p.peer_port}
                                                                     : Cable{b, a, p.peer_port, p.port};
        if (seen(key)) continue;  // the same cable seen from its other end
        if (a == b) {
          warn("self-loop", std::string(name_) + ": switch " + guid_text(self.guid) +
                                " has a self-loop (port " + std::to_string(p.port) + " to port " +
                                std::to_string(p.peer_port) + ")");
        }
        g.add_link(a, p.port, b, p.peer_port, p.rate == 0 ? std::string_view() : rates_[p.rate]);
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

  // A cable by its two ends, the lower vertex first.
  struct Cable {
    VertexId a = 0;
    VertexId b = 0;
    std::uint8_t port_a = 0;
    std::uint8_t port_b = 0;
    bool operator==(const Cable&) const = default;
  };

  void warn(const std::string& kind, std::string message) {
    for (auto& [k, tally] : tallies_) {
      if (k == kind) {
        ++tally.count;
        return;
      }
    }
    tallies_.push_back({kind, {std::move(message), 1}});
  }

  // Descriptions become label values and JSON strings: at most 64 bytes, valid UTF-8.
  std::string_view cap_description(std::string_view desc) {
    if (desc.size() > kNodeDescriptionBytes) {
      desc = desc.substr(0, kNodeDescriptionBytes);
      ++long_descriptions_;
    }
    for (unsigned char c : desc) {
      if (c >= 0x80) return text_.keep(text::valid_utf8(desc));
    }
    return desc;
  }

  std::string where(std::size_t n) const { return std::string(name_) + ":" + std::to_string(n) + ": "; }
  std::unexpected<Error> error(std::size_t n, const std::string& what) const {
    return std::unexpected(Error(ErrorCode::kParse, where(n) + what));
  }

  std::string_view name_;
  std::vector<KeyInfo> keys_;
  KeyTable key_ids_;
  std::vector<NodeRecord> nodes_;
  std::vector<PortRecord> ports_;
  TextStore text_;       // descriptions and rates, kept once
  std::string partial_;  // a line whose end is in the next piece
  std::size_t line_no_ = 0;
  std::vector<std::string_view> rates_;  // "4xNDR", ...; 0 is none
  std::vector<std::string_view> descs_;  // descriptions port lines give their peers; 0 is none
  std::unordered_map<std::string, std::uint32_t> rate_ids_;
  std::uint32_t last_rate_ = 0;
  std::uint32_t current_ = kNone;  // the block port lines belong to (nodes_)
  std::uint64_t pending_sysimg_ = 0;
  bool has_pending_sysimg_ = false;
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
  if (path.string() == "-") {
    auto text = io::read_bounded_stream(stdin_stream ? *stdin_stream : std::cin, name, io::kDataFileLimit);
    if (!text) return std::unexpected(text.error());
    return parse_ibnetdiscover(*text, name);
  }
  // A file is read in pieces into one buffer: the parser keeps what it needs, never the whole text.
  Parser parser(name);
  std::size_t size = 0;
  auto read = io::read_bounded_file_pieces(
      path, io::kDataFileLimit, std::size_t{1} << 20,
      [&](std::string_view piece) {
        if (size > 0) parser.expect(std::exchange(size, 0));
        return parser.take(piece);
      },
      &size);
  if (!read) return std::unexpected(read.error());
  return parser.finish();
}

}  // namespace hypertopo::discoverers
