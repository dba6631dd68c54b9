#include "discoverers/ufm/ufm_fabric.h"

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <optional>
#include <string_view>
#include <utility>

#include "topology/fabric_health.h"

namespace hypertopo::discoverers::ufm {
namespace {

namespace od = simdjson::ondemand;
using simdjson::error_code;

bool json_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// Eight bytes at a time: most values are short, and a call to memchr costs more than the scan.
bool has_backslash(std::string_view text) {
  constexpr std::uint64_t kOnes = 0x0101010101010101ull;
  constexpr std::uint64_t kHigh = 0x8080808080808080ull;
  constexpr std::uint64_t kBackslashes = kOnes * '\\';
  std::size_t i = 0;
  for (; i + 8 <= text.size(); i += 8) {
    std::uint64_t chunk;
    std::memcpy(&chunk, text.data() + i, 8);
    const std::uint64_t x = chunk ^ kBackslashes;  // a zero byte where a backslash was
    if ((x - kOnes) & ~x & kHigh) return true;
  }
  for (; i < text.size(); ++i)
    if (text[i] == '\\') return true;
  return false;
}

// A field's value as text: strings as they are, numbers as their JSON token; nullopt for null,
// booleans, arrays and objects (left unread, so the parser skips them). A string without escapes
// is its bytes in the body; only one with a backslash is unescaped (into the parser's buffer).
error_code read_text(od::value& v, std::optional<std::string_view>& out) {
  std::string_view raw = v.raw_json_token();
  while (!raw.empty() && json_space(raw.back())) raw.remove_suffix(1);
  if (raw.size() >= 2 && raw.front() == '"' && raw.back() == '"' &&
      !has_backslash(raw.substr(1, raw.size() - 2))) {
    out = raw.substr(1, raw.size() - 2);
    return simdjson::SUCCESS;
  }
  od::json_type type;
  if (auto e = v.type().get(type)) return e;
  if (type == od::json_type::string) {
    std::string_view s;
    if (auto e = v.get_string().get(s)) return e;
    out = s;
  } else if (type == od::json_type::number) {
    out = raw;
  }
  return simdjson::SUCCESS;
}

// A field's key: its bytes in the body, or unescaped when it holds a backslash (no UFM key does).
error_code key_of(od::field& field, std::string_view& out) {
  const char* begin = field.key().raw();
  const char* end = begin;
  while (*end != '"' && *end != '\\') ++end;  // stage 1 found the closing quote
  if (*end == '"') {
    out = std::string_view(begin, static_cast<std::size_t>(end - begin));
    return simdjson::SUCCESS;
  }
  return field.unescaped_key().get(out);
}

int to_int(std::string_view text) {
  int value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc{} && ptr == text.data() + text.size() ? value : 0;
}

// A GUID as UFM writes it ("0x248a070300f88fe0", "248A070300F88FE0", or a JSON number read as hex
// digits), as topology::normalize_guid accepts it; nullopt when it is not 1-16 hex digits.
std::optional<std::uint64_t> parse_guid(std::string_view text) {
  static constexpr auto kDigit = [] {
    std::array<std::uint8_t, 256> digit{};
    digit.fill(0xff);
    for (int c = 0; c < 10; ++c) digit['0' + c] = static_cast<std::uint8_t>(c);
    for (int c = 0; c < 6; ++c) {
      digit['a' + c] = static_cast<std::uint8_t>(10 + c);
      digit['A' + c] = static_cast<std::uint8_t>(10 + c);
    }
    return digit;
  }();
  if (text.starts_with("0x") || text.starts_with("0X")) text.remove_prefix(2);
  if (text.empty() || text.size() > 16) return std::nullopt;
  std::uint64_t value = 0;
  std::uint8_t invalid = 0;
  for (char c : text) {
    const std::uint8_t digit = kDigit[static_cast<unsigned char>(c)];
    invalid |= digit;
    value = value << 4 | (digit & 0xf);
  }
  if (invalid & 0xf0) return std::nullopt;
  return value;
}

std::optional<std::uint64_t> guid_of(std::optional<std::string_view> text) {
  return text ? parse_guid(*text) : std::nullopt;
}

// "<guid>_<port>" -> (guid, port); nullopt for "N/A" and other non-names.
std::optional<std::pair<std::uint64_t, int>> split_port_name(std::string_view name) {
  auto underscore = name.rfind('_');
  if (underscore == std::string_view::npos) return std::nullopt;
  auto guid = parse_guid(name.substr(0, underscore));
  if (!guid) return std::nullopt;
  return std::pair{*guid, to_int(name.substr(underscore + 1))};
}

std::string_view without_ib_prefix(std::string_view text) {
  if (text.starts_with("IB_")) text.remove_prefix(3);
  return text;
}

// "4x" + "NDR" -> "4xNDR" (the two parts; both empty when the rate is unknown).
std::pair<std::string_view, std::string_view> rate_parts(std::optional<std::string_view> width,
                                                         std::optional<std::string_view> speed) {
  if (!width || !speed || speed->empty() || *speed == "N/A") return {};
  std::string_view w = without_ib_prefix(*width);
  if (w.empty() || w == "N/A") return {};
  return {w, *speed};
}

// "4x", "IB_4x" (the links answer's spelling), "12X" -> lanes; 0 for null, "N/A" or anything else.
std::uint8_t width_lanes(std::string_view text) {
  text = without_ib_prefix(text);
  if (text.size() < 2 || (text.back() != 'x' && text.back() != 'X')) return 0;
  int lanes = to_int(text.substr(0, text.size() - 1));
  return lanes > 0 && lanes <= 64 ? static_cast<std::uint8_t>(lanes) : 0;
}

std::uint32_t lane_mbps(std::string_view text) {
  return topology::lane_speed_of(without_ib_prefix(text)).value_or(0);
}

// The converted value of the few texts every record of a fabric repeats ("NDR", "Active",
// "Link Up"), kept by content: each is worked out once per answer, not once per record.
template <typename T>
class TextMemo {
 public:
  template <typename Convert>
  T operator()(std::string_view text, Convert&& convert) {
    if (text.size() > 16) return convert(text);
    std::uint64_t key[2] = {0, 0};
    for (std::size_t i = 0; i < text.size(); ++i)
      key[i / 8] |= std::uint64_t{static_cast<unsigned char>(text[i])} << (8 * (i % 8));
    for (std::size_t i = 0; i < used_; ++i) {
      const Entry& e = entries_[i];
      if (e.key[0] == key[0] && e.key[1] == key[1] && e.size == text.size()) return e.value;
    }
    const T value = convert(text);
    Entry& slot = entries_[used_ < entries_.size() ? used_++ : next_++ % entries_.size()];
    slot = Entry{{key[0], key[1]}, text.size(), value};
    return value;
  }

 private:
  struct Entry {
    std::uint64_t key[2];
    std::size_t size;
    T value;
  };
  std::array<Entry, 8> entries_{};
  std::size_t used_ = 0;
  std::size_t next_ = 0;
};

struct PortConversions {
  TextMemo<std::uint32_t> speed;
  TextMemo<std::uint8_t> width;
  TextMemo<std::uint8_t> state;
  TextMemo<std::uint8_t> phys_state;
  std::uint32_t mbps(std::string_view text) { return speed(text, lane_mbps); }
  std::uint8_t lanes(std::string_view text) { return width(text, width_lanes); }
};

// A list of widths or speeds (`enabled_width: ["1x", "4x"]`): the largest entry UFM names in it,
// converted by `convert`; anything but a list of strings contributes nothing.
template <typename T, typename Convert>
error_code read_best_of_list(od::value& v, T& out, Convert&& convert) {
  od::json_type type;
  if (auto e = v.type().get(type)) return e;
  if (type != od::json_type::array) return simdjson::SUCCESS;
  od::array array;
  if (auto e = v.get_array().get(array)) return e;
  for (auto element : array) {
    od::value item;
    if (auto e = element.get(item)) return e;
    std::optional<std::string_view> text;
    if (auto e = read_text(item, text)) return e;
    if (text) out = std::max<T>(out, convert(*text));
  }
  return simdjson::SUCCESS;
}

Error json_error(error_code e, std::optional<std::size_t> offset = std::nullopt) {
  std::string message = std::string("not valid JSON (") + simdjson::error_message(e) + ")";
  if (offset) message += " at byte " + std::to_string(*offset);
  return Error(ErrorCode::kParse, message + "; the response may have been cut short");
}

void note_skip(UfmPage& page, std::string why) {
  if (page.skipped++ == 0) page.first_skip = std::move(why);
}

// Walks a plain array or the paged envelope, calling `record(object, index, page)` for each object.
template <typename Record>
std::expected<UfmPage, Error> parse_list(od::parser& parser, std::string& body, Record&& record) {
  if (body.capacity() < body.size() + simdjson::SIMDJSON_PADDING)
    body.reserve(body.size() + simdjson::SIMDJSON_PADDING);
  simdjson::padded_string_view view(body.data(), body.size(), body.capacity());
  od::document doc;
  if (auto e = parser.iterate(view).get(doc)) return std::unexpected(json_error(e));
  // Where the iteration stopped, for the message: a cut answer ends early, a stray byte is named.
  auto invalid = [&](error_code e) {
    const char* at = nullptr;
    std::optional<std::size_t> offset;
    if (doc.current_location().get(at) == simdjson::SUCCESS && at >= body.data() &&
        at <= body.data() + body.size())
      offset = static_cast<std::size_t>(at - body.data());
    return std::unexpected(json_error(e, offset));
  };
  od::json_type type;
  if (auto e = doc.type().get(type)) return invalid(e);
  UfmPage page;
  auto each = [&](od::array& array) -> error_code {
    for (auto element : array) {
      od::value value;
      if (auto e = element.get(value)) return e;
      od::json_type t;
      if (auto e = value.type().get(t)) return e;
      std::size_t index = page.records++;
      if (t != od::json_type::object) {
        note_skip(page, "element " + std::to_string(index) + " is not an object");
        continue;
      }
      od::object object;
      if (auto e = value.get_object().get(object)) return e;
      if (auto e = record(object, index, page)) return e;
    }
    return simdjson::SUCCESS;
  };
  if (type == od::json_type::array) {
    od::array array;
    if (auto e = doc.get_array().get(array)) return invalid(e);
    if (auto e = each(array)) return invalid(e);
  } else if (type == od::json_type::object) {
    page.paged = true;
    bool saw_data = false;
    od::object object;
    if (auto e = doc.get_object().get(object)) return invalid(e);
    for (auto field : object) {
      std::string_view key;
      if (auto e = field.unescaped_key().get(key)) return invalid(e);
      od::value value;
      if (auto e = field.value().get(value)) return invalid(e);
      if (key == "data") {
        od::array array;
        if (auto e = value.get_array().get(array)) {
          if (e == simdjson::INCORRECT_TYPE)
            return fail(ErrorCode::kParse, "the paged answer's \"data\" is not a list");
          return invalid(e);
        }
        saw_data = true;
        if (auto e = each(array)) return invalid(e);
      } else if (key == "total_resources") {
        std::optional<std::string_view> text;
        if (auto e = read_text(value, text)) return invalid(e);
        std::uint64_t total = 0;
        if (text && std::from_chars(text->data(), text->data() + text->size(), total).ec == std::errc{})
          page.total = total;
      }
    }
    if (!saw_data) {
      return fail(ErrorCode::kParse,
                  "expected a JSON list or a paged object with a \"data\" list; the object has no \"data\"");
    }
  } else {
    return fail(ErrorCode::kParse, "expected a JSON list or a paged object with a \"data\" list");
  }
  return page;
}

// A key against a name of known length: compiled to a few word compares, no memcmp call.
template <std::size_t N>
bool is(std::string_view key, const char (&name)[N]) {
  constexpr std::size_t n = N - 1;
  if (key.size() != n) return false;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t a, b;
    std::memcpy(&a, key.data() + i, 8);
    std::memcpy(&b, name + i, 8);
    if (a != b) return false;
  }
  for (; i < n; ++i)
    if (key[i] != name[i]) return false;
  return true;
}

// One port record's fields as the parser left them: views valid until the parser reads on.
struct PortFields {
  std::optional<std::string_view> guid, system_id, system_name, node_description, description, number, name,
      peer, peer_guid, peer_node_guid, peer_node_description, peer_node_name, width, speed, logical_state,
      physical_state;
  topology::PortFacts facts;
};

error_code read_port_fields(od::object& object, PortFields& f, PortConversions& convert) {
  auto lanes = [&](std::string_view text) { return convert.lanes(text); };
  auto mbps = [&](std::string_view text) { return convert.mbps(text); };
  for (auto result : object) {
    od::field field;
    if (auto e = std::move(result).get(field)) return e;
    std::string_view key;
    if (auto e = key_of(field, key)) return e;
    std::optional<std::string_view>* slot = nullptr;
    switch (key.size()) {
      case 4:
        slot = is(key, "guid") ? &f.guid : is(key, "name") ? &f.name : is(key, "peer") ? &f.peer : nullptr;
        break;
      case 6:
        slot = is(key, "number") ? &f.number : nullptr;
        break;
      case 8:
        slot = is(key, "systemID") ? &f.system_id : nullptr;
        break;
      case 9:
        slot = is(key, "peer_guid") ? &f.peer_guid : nullptr;
        break;
      case 11:
        slot = is(key, "system_name") ? &f.system_name : is(key, "description") ? &f.description : nullptr;
        break;
      case 12:
        slot = is(key, "active_width") ? &f.width : is(key, "active_speed") ? &f.speed : nullptr;
        break;
      case 13:
        if (is(key, "enabled_width") || is(key, "enabled_speed")) {
          od::value& value = field.value();
          if (auto e = is(key, "enabled_width") ? read_best_of_list(value, f.facts.width_enabled, lanes)
                                                : read_best_of_list(value, f.facts.speed_enabled, mbps))
            return e;
          continue;
        }
        slot = is(key, "logical_state") ? &f.logical_state : nullptr;
        break;
      case 14:
        slot = is(key, "peer_node_guid")   ? &f.peer_node_guid
               : is(key, "peer_node_name") ? &f.peer_node_name
               : is(key, "physical_state") ? &f.physical_state
                                           : nullptr;
        break;
      case 15:
        if (is(key, "supported_width") || is(key, "supported_speed")) {
          od::value& value = field.value();
          if (auto e = is(key, "supported_width") ? read_best_of_list(value, f.facts.width_supported, lanes)
                                                  : read_best_of_list(value, f.facts.speed_supported, mbps))
            return e;
          continue;
        }
        break;
      case 16:
        slot = is(key, "node_description") ? &f.node_description : nullptr;
        break;
      case 21:
        slot = is(key, "peer_node_description") ? &f.peer_node_description : nullptr;
        break;
      default:
        break;
    }
    if (!slot) continue;  // unread values are skipped by the parser
    od::value& value = field.value();
    if (auto e = read_text(value, *slot)) return e;
  }
  return simdjson::SUCCESS;
}

// The port a record describes, its texts kept in `fabric`; false (and why) when it has no usable guid.
bool add_port(const PortFields& f, std::size_t index, UfmPage& page, UfmFabric& fabric,
              PortConversions& convert) {
  auto guid = guid_of(f.guid);
  if (!guid) {
    note_skip(page, "port " + std::to_string(index) +
                        (f.guid ? " has a \"guid\" that is not hex: '" + std::string(*f.guid) + "'"
                                : " has no \"guid\""));
    return false;
  }
  UfmFabric::Port& port = fabric.ports.emplace_back();
  port.guid = *guid;
  if (auto system = guid_of(f.system_id)) {
    port.system_guid = *system;
    port.has_system_guid = true;
  }
  if (f.system_name) port.system_name = fabric.keep(*f.system_name);
  if (f.node_description) port.node_description = fabric.keep(*f.node_description);
  if (f.description) {
    if (f.description->find("Switch") != std::string_view::npos) {
      port.role = PortRole::kSwitch;
    } else if (f.description->find("Computer") != std::string_view::npos) {
      port.role = PortRole::kHost;
    }
  }
  if (f.number) port.number = to_int(*f.number);
  if (port.number == 0 && f.name) {
    if (auto split = split_port_name(*f.name)) port.number = split->second;
  }
  if (auto peer = guid_of(f.peer_guid)) {
    port.peer_guid = *peer;
    port.has_peer_guid = true;
  }
  if (f.peer) {
    if (auto split = split_port_name(*f.peer)) {
      if (!port.has_peer_guid) {
        port.peer_guid = split->first;
        port.has_peer_guid = true;
      }
      port.peer_port = split->second;
    }
  }
  if (!port.has_peer_guid) {
    if (auto peer = guid_of(f.peer_node_guid)) {
      port.peer_guid = *peer;
      port.has_peer_guid = true;
    }
  }
  if (f.peer_node_description) {
    port.peer_description = fabric.keep(*f.peer_node_description);
  } else if (f.peer_node_name) {
    port.peer_description = fabric.keep(*f.peer_node_name);
  }
  auto [width, speed] = rate_parts(f.width, f.speed);
  if (!width.empty()) port.rate = fabric.keep_joined(width, speed);
  port.facts = f.facts;
  if (f.width) port.facts.width_active = convert.lanes(*f.width);
  if (f.speed) port.facts.speed_active = convert.mbps(*f.speed);
  if (f.logical_state) port.facts.state = convert.state(*f.logical_state, topology::port_state_code);
  if (f.physical_state)
    port.facts.phys_state = convert.phys_state(*f.physical_state, topology::phys_state_code);
  port.down = port.facts.state == 1;
  return true;
}

error_code read_link(od::object& object, std::size_t index, UfmPage& page, UfmFabric& fabric) {
  std::optional<std::string_view> source_guid, source_port, destination_guid, destination_port, source_desc,
      destination_desc;
  for (auto result : object) {
    od::field field;
    if (auto e = std::move(result).get(field)) return e;
    std::string_view key;
    if (auto e = key_of(field, key)) return e;
    std::optional<std::string_view>* slot = nullptr;
    switch (key.size()) {
      case 11:
        slot = is(key, "source_guid") ? &source_guid : is(key, "source_port") ? &source_port : nullptr;
        break;
      case 16:
        slot = is(key, "destination_guid")   ? &destination_guid
               : is(key, "destination_port") ? &destination_port
                                             : nullptr;
        break;
      case 28:
        slot = is(key, "source_port_node_description") ? &source_desc : nullptr;
        break;
      case 33:
        slot = is(key, "destination_port_node_description") ? &destination_desc : nullptr;
        break;
      default:
        break;
    }
    if (!slot) continue;
    od::value& value = field.value();
    if (auto e = read_text(value, *slot)) return e;
  }
  auto source = guid_of(source_guid);
  auto destination = guid_of(destination_guid);
  if (!source || !destination) {
    note_skip(page, "link " + std::to_string(index) + " has no usable " +
                        (!source ? "\"source_guid\"" : "\"destination_guid\""));
    return simdjson::SUCCESS;
  }
  UfmFabric::Link& link = fabric.links.emplace_back();
  link.source_guid = *source;
  link.destination_guid = *destination;
  if (source_port) link.source_port = to_int(*source_port);
  if (destination_port) link.destination_port = to_int(*destination_port);
  if (source_desc) link.source_description = fabric.keep(*source_desc);
  if (destination_desc) link.destination_description = fabric.keep(*destination_desc);
  return simdjson::SUCCESS;
}

}  // namespace

std::string guid_text(std::uint64_t guid) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(18, '0');
  out[1] = 'x';
  for (int i = 17; i >= 2; --i, guid >>= 4) out[static_cast<std::size_t>(i)] = kHex[guid & 0xf];
  return out;
}

UfmFabric::Text UfmFabric::keep(std::string_view text) {
  Text t{arena_.size(), text.size()};
  arena_.append(text);
  return t;
}

UfmFabric::Text UfmFabric::keep_joined(std::string_view first, std::string_view second) {
  Text t{arena_.size(), first.size() + second.size()};
  arena_.append(first);
  arena_.append(second);
  return t;
}

void UfmFabric::clear() {
  ports.clear();
  links.clear();
  arena_.clear();
}

struct UfmResponseParser::Impl {
  od::parser parser;
  UfmFabric records;  // scratch of the record-returning calls
};

UfmResponseParser::UfmResponseParser() : impl_(std::make_unique<Impl>()) {}
UfmResponseParser::~UfmResponseParser() = default;

std::expected<UfmPage, Error> UfmResponseParser::ports(std::string& body, UfmFabric& out) {
  // A port record is several hundred bytes and keeps a few dozen bytes of text; reserving up front
  // saves re-moving everything as the arrays grow (untouched capacity costs no memory).
  out.ports.reserve(out.ports.size() + body.size() / 256);
  PortConversions convert;
  return parse_list(impl_->parser, body,
                    [&](od::object& object, std::size_t index, UfmPage& page) -> error_code {
                      PortFields fields;
                      if (auto e = read_port_fields(object, fields, convert)) return e;
                      add_port(fields, index, page, out, convert);
                      return simdjson::SUCCESS;
                    });
}

std::expected<UfmPage, Error> UfmResponseParser::links(std::string& body, UfmFabric& out) {
  out.links.reserve(out.links.size() + body.size() / 128);
  return parse_list(impl_->parser, body,
                    [&](od::object& object, std::size_t index, UfmPage& page) -> error_code {
                      return read_link(object, index, page, out);
                    });
}

std::expected<UfmPage, Error> UfmResponseParser::ports(std::string& body, std::vector<UfmPort>& out) {
  UfmFabric& scratch = impl_->records;
  scratch.clear();
  // Records read before an error are handed on too, as the fabric keeps them.
  auto page = ports(body, scratch);
  for (const UfmFabric::Port& p : scratch.ports) {
    UfmPort& port = out.emplace_back();
    port.role = p.role;
    port.guid = guid_text(p.guid);
    if (p.has_system_guid) port.system_guid = guid_text(p.system_guid);
    port.system_name = scratch.text(p.system_name);
    port.node_description = scratch.text(p.node_description);
    port.number = p.number;
    if (p.has_peer_guid) port.peer_guid = guid_text(p.peer_guid);
    port.peer_port = p.peer_port;
    port.peer_description = scratch.text(p.peer_description);
    port.rate = scratch.text(p.rate);
    port.down = p.down;
    port.facts = p.facts;
  }
  return page;
}

std::expected<UfmPage, Error> UfmResponseParser::links(std::string& body, std::vector<UfmLink>& out) {
  UfmFabric& scratch = impl_->records;
  scratch.clear();
  // Records read before an error are handed on too, as the fabric keeps them.
  auto page = links(body, scratch);
  for (const UfmFabric::Link& l : scratch.links) {
    UfmLink& link = out.emplace_back();
    link.source_guid = guid_text(l.source_guid);
    link.source_port = l.source_port;
    link.destination_guid = guid_text(l.destination_guid);
    link.destination_port = l.destination_port;
    link.source_description = scratch.text(l.source_description);
    link.destination_description = scratch.text(l.destination_description);
  }
  return page;
}

namespace {

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser: GUIDs differ in few low bits
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

struct GuidPort {
  std::uint64_t guid = 0;
  int port = 0;
  bool operator==(const GuidPort&) const = default;
};

// One cable as the graph has it: both ends (vertex, port), the smaller first.
struct CableKey {
  std::uint64_t a = 0;  // vertex << 32 | port
  std::uint64_t b = 0;
  bool operator==(const CableKey&) const = default;
};

std::uint64_t hash_of(std::uint64_t key) { return mix(key); }
std::uint64_t hash_of(const GuidPort& key) {
  return mix(key.guid ^ mix(static_cast<std::uint64_t>(static_cast<std::uint32_t>(key.port))));
}
std::uint64_t hash_of(const CableKey& key) { return mix(key.a ^ mix(key.b)); }

// An open-addressing map for the assembler's integer keys: one probe sequence in one flat array, no
// node per entry (the standard map's allocations and string keys were most of the graph build's
// time). A pointer it hands out is valid until the next insertion.
template <typename Key, typename Value>
class FlatMap {
 public:
  explicit FlatMap(std::size_t expected) { rehash(capacity_for(expected)); }

  // Cable ends are looked up in answer order, which hashing scatters over the table: asking for the
  // slot a few cables ahead hides most of the cache misses that were the build's cost.
  void prefetch(const Key& key) const { __builtin_prefetch(&slots_[hash_of(key) & mask_]); }

  Value* find(const Key& key) {
    for (std::size_t i = hash_of(key) & mask_;; i = (i + 1) & mask_) {
      Slot& slot = slots_[i];
      if (!slot.used) return nullptr;
      if (slot.key == key) return &slot.value;
    }
  }
  // The value of `key`, inserted as `value` when absent; second: whether it was inserted.
  std::pair<Value*, bool> try_emplace(const Key& key, const Value& value) {
    if ((size_ + 1) * 2 > slots_.size()) rehash(slots_.size() * 2);
    for (std::size_t i = hash_of(key) & mask_;; i = (i + 1) & mask_) {
      Slot& slot = slots_[i];
      if (!slot.used) {
        slot = Slot{key, value, true};
        ++size_;
        return {&slot.value, true};
      }
      if (slot.key == key) return {&slot.value, false};
    }
  }

 private:
  struct Slot {
    Key key{};
    Value value{};
    bool used = false;
  };
  static std::size_t capacity_for(std::size_t entries) {
    std::size_t capacity = 16;
    while (capacity < entries * 2) capacity *= 2;
    return capacity;
  }
  void rehash(std::size_t capacity) {
    std::vector<Slot> old(capacity);
    std::swap(old, slots_);
    mask_ = capacity - 1;
    size_ = 0;
    for (const Slot& slot : old)
      if (slot.used) try_emplace(slot.key, slot.value);
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

constexpr std::uint32_t kNone = 0xffffffffu;

// What the ports answer says of one GUID, and the vertex it names in the graph.
struct GuidFacts {
  std::uint32_t ca_port = kNone;  // the first CA port record with this port GUID
  topology::VertexId vertex = kNone;
  // A switch port record it owns: the first with a description (node_description, else
  // system_name), else any; kNone when it owns none.
  std::uint32_t switch_port = kNone;
  bool ca_node = false;  // some CA port record names it as `systemID`
};

class GraphAssembler {
 public:
  GraphAssembler(const UfmFabric& fabric, std::vector<std::string>* notes)
      : fabric_(fabric),
        notes_(notes),
        guids_(fabric.ports.size()),
        port_at_(fabric.ports.size()),
        unlisted_(16),
        seen_(fabric.links.size() + fabric.ports.size() / 2),
        cabled_(fabric.ports.size()) {
    graph_.reserve(fabric.ports.size(), fabric.ports.size());
    const auto& ports = fabric.ports;
    for (std::uint32_t i = 0; i < ports.size(); ++i) {
      if (i + kAhead < ports.size()) {
        const UfmFabric::Port& ahead = ports[i + kAhead];
        const std::uint64_t owner = ahead.has_system_guid ? ahead.system_guid : ahead.guid;
        port_at_.prefetch(GuidPort{owner, ahead.number});
        guids_.prefetch(ahead.role == PortRole::kSwitch ? owner : ahead.guid);
      }
      const UfmFabric::Port& p = ports[i];
      const std::uint64_t owner = p.has_system_guid ? p.system_guid : p.guid;
      port_at_.try_emplace(GuidPort{owner, p.number}, i);
      if (p.role == PortRole::kSwitch) {
        GuidFacts& g = *guids_.try_emplace(owner, GuidFacts{}).first;
        if (g.switch_port == kNone || switch_description(g.switch_port).size == 0) g.switch_port = i;
      } else {
        GuidFacts& g = *guids_.try_emplace(p.guid, GuidFacts{}).first;
        if (g.ca_port == kNone) g.ca_port = i;
        if (p.has_system_guid) guids_.try_emplace(p.system_guid, GuidFacts{}).first->ca_node = true;
      }
    }
  }

  static constexpr std::size_t kAhead = 16;

  // Asks for the table slots a cable end will need (see FlatMap::prefetch).
  void prefetch(std::uint64_t guid, int port) const {
    guids_.prefetch(guid);
    port_at_.prefetch(GuidPort{guid, port});
  }

  void link(std::uint64_t a, int pa, UfmFabric::Text a_desc, std::uint64_t b, int pb,
            UfmFabric::Text b_desc) {
    const End end_a = end(a, pa, a_desc);
    const End end_b = end(b, pb, b_desc);
    remember(end_a, a, pa, end_b, b, pb);
    remember(end_b, b, pb, end_a, a, pa);
    const std::uint64_t ka = std::uint64_t{end_a.vertex} << 32 | static_cast<std::uint32_t>(pa);
    const std::uint64_t kb = std::uint64_t{end_b.vertex} << 32 | static_cast<std::uint32_t>(pb);
    if (!seen_.try_emplace(ka < kb ? CableKey{ka, kb} : CableKey{kb, ka}, 1).second) return;
    std::string_view rate = end_a.port ? fabric_.text(end_a.port->rate) : std::string_view();
    if (rate.empty() && end_b.port) rate = fabric_.text(end_b.port->rate);
    graph_.add_link(end_a.vertex, pa, end_b.vertex, pb, rate,
                    end_a.port ? end_a.port->facts : topology::PortFacts{},
                    end_b.port ? end_b.port->facts : topology::PortFacts{});
  }

  // Whether the cable port record `i` names by its peer fields was already added from the links
  // answer, from the same two (GUID, port) ends, so that adding it again would change nothing: the
  // ports pass then costs no table lookup for most ports.
  bool repeats(std::uint32_t i, std::uint64_t owner) const {
    const Cabled& c = cabled_[i];
    const UfmFabric::Port& p = fabric_.ports[i];
    if (!c.valid || c.owner != owner || c.other_guid != p.peer_guid || c.other_port != p.peer_port)
      return false;
    // A switch end seen again takes a description it still lacks.
    if (c.self_switch && graph_.vertex(c.self).description.empty()) return false;
    if (c.other_switch && graph_.vertex(c.other).description.empty()) return false;
    return true;
  }

  topology::FabricGraph finish() {
    if (notes_ && unlisted_ca_ports_ > 0) {
      notes_->push_back(
          std::to_string(unlisted_ca_ports_) +
          " cable end(s) name a CA port that resources/ports did not list; kept without a host");
    }
    return std::move(graph_);
  }

 private:
  struct End {
    topology::VertexId vertex = 0;
    const UfmFabric::Port* port = nullptr;  // the record of this end's port, when listed
    bool switch_end = false;                // a switch, named by the GUID
    bool unlisted = false;                  // a CA port resources/ports does not list
  };

  // A cable end (guid, port) resolved to the port record it names, and the other end it met.
  struct Cabled {
    std::uint64_t owner = 0;
    std::uint64_t other_guid = 0;
    int other_port = 0;
    topology::VertexId self = 0;
    topology::VertexId other = 0;
    bool self_switch = false;
    bool other_switch = false;
    bool valid = false;
  };

  void remember(const End& self, std::uint64_t guid, int port, const End& other, std::uint64_t other_guid,
                int other_port) {
    if (!self.port || self.unlisted || other.unlisted || self.port->number != port) return;
    const auto i = static_cast<std::size_t>(self.port - fabric_.ports.data());
    cabled_[i] = Cabled{guid,         other_guid,      other_port,       self.vertex,
                        other.vertex, self.switch_end, other.switch_end, true};
  }

  // One end of a cable: a CA port (by port GUID, or node GUID + port number) or else a switch; and
  // the port's record: a CA port by its port GUID, else the port `port` of node `guid`.
  End end(std::uint64_t guid, int port, UfmFabric::Text description) {
    const GuidFacts g = *guids_.try_emplace(guid, GuidFacts{}).first;
    End out;
    if (g.ca_port != kNone) {
      // An HCA whose port GUID is its node GUID lists its other ports under the same GUID.
      const UfmFabric::Port& p = fabric_.ports[g.ca_port];
      if (p.number == port || p.number == 0 || port == 0) out.port = &p;
    }
    const UfmFabric::Port* at = nullptr;
    if (!out.port) {
      if (const std::uint32_t* i = port_at_.find(GuidPort{guid, port})) at = &fabric_.ports[*i];
      if (!out.port) out.port = at;
    }
    if (g.ca_port != kNone) {
      out.vertex = endpoint(fabric_.ports[g.ca_port]);
    } else if (g.ca_node && at) {
      out.vertex = endpoint(*at);
    } else if (g.ca_node) {
      // A CA port UFM did not list: keep it, keyed by node GUID and port, without a host.
      ++unlisted_ca_ports_;
      auto [v, inserted] = unlisted_.try_emplace(GuidPort{guid, port}, kNone);
      if (inserted) {
        *v = graph_.add_endpoint(guid_text(guid) + "_" + std::to_string(port), fabric_.text(description));
      } else {
        fill_description(*v, description);
      }
      out.vertex = *v;
      out.unlisted = true;
    } else {
      out.switch_end = true;
      const UfmFabric::Text text = g.switch_port != kNone ? switch_description(g.switch_port) : description;
      GuidFacts& named = *guids_.find(guid);
      if (named.vertex == kNone) {
        named.vertex = graph_.add_switch(guid_text(guid), fabric_.text(text));
      } else {
        // As FabricGraph::add_switch: an existing vertex takes the description if it had none and
        // becomes a switch.
        fill_description(named.vertex, text);
        graph_.vertex(named.vertex).kind = topology::VertexKind::kSwitch;
      }
      out.vertex = named.vertex;
    }
    return out;
  }

  UfmFabric::Text switch_description(std::uint32_t port) const {
    const UfmFabric::Port& p = fabric_.ports[port];
    return p.node_description.size == 0 ? p.system_name : p.node_description;
  }

  void fill_description(topology::VertexId v, UfmFabric::Text description) {
    topology::Vertex& vx = graph_.vertex(v);
    if (vx.description.empty()) vx.description = fabric_.text(description);
  }

  topology::VertexId endpoint(const UfmFabric::Port& p) {
    GuidFacts& g = *guids_.try_emplace(p.guid, GuidFacts{}).first;
    if (g.vertex != kNone) return g.vertex;
    g.vertex = graph_.add_endpoint(guid_text(p.guid), fabric_.text(p.node_description));
    topology::Vertex& vx = graph_.vertex(g.vertex);
    vx.host = fabric_.text(p.system_name);
    if (p.has_system_guid) {
      vx.node_guid = guid_text(p.system_guid);
      vx.system_guid = vx.node_guid;
    }
    vx.port = p.number;
    vx.aggregation_node = vx.description.find("Aggregation Node") != std::string::npos;
    return g.vertex;
  }

  const UfmFabric& fabric_;
  std::vector<std::string>* notes_;
  topology::FabricGraph graph_;
  // Every GUID the ports answer or a cable names. Switches and CA ports share FabricGraph's one
  // namespace of ids, so one vertex per GUID whatever its kind.
  FlatMap<std::uint64_t, GuidFacts> guids_;
  FlatMap<GuidPort, std::uint32_t> port_at_;        // (owner GUID, port number) -> port record
  FlatMap<GuidPort, topology::VertexId> unlisted_;  // CA ports named "<node guid>_<port>"
  FlatMap<CableKey, std::uint8_t> seen_;
  std::vector<Cabled> cabled_;  // by port record
  std::size_t unlisted_ca_ports_ = 0;
};

}  // namespace

topology::FabricGraph build_ufm_graph(const UfmFabric& fabric, std::vector<std::string>* notes) {
  GraphAssembler assembler(fabric, notes);
  constexpr std::size_t kAhead = GraphAssembler::kAhead;
  const auto& links = fabric.links;
  for (std::size_t i = 0; i < links.size(); ++i) {
    if (i + kAhead < links.size()) {
      const UfmFabric::Link& ahead = links[i + kAhead];
      assembler.prefetch(ahead.source_guid, ahead.source_port);
      assembler.prefetch(ahead.destination_guid, ahead.destination_port);
    }
    const UfmFabric::Link& l = links[i];
    assembler.link(l.source_guid, l.source_port, l.source_description, l.destination_guid, l.destination_port,
                   l.destination_description);
  }
  // The ports' own peer fields fill in cables the links answer lacks (or a server without it).
  const auto& ports = fabric.ports;
  auto owner_of = [](const UfmFabric::Port& p) {
    return p.role == PortRole::kSwitch && p.has_system_guid ? p.system_guid : p.guid;
  };
  for (std::size_t i = 0; i < ports.size(); ++i) {
    const UfmFabric::Port& p = ports[i];
    if (p.down || !p.has_peer_guid || p.peer_port == 0) continue;
    const std::uint64_t owner = owner_of(p);
    if (assembler.repeats(static_cast<std::uint32_t>(i), owner)) continue;
    assembler.link(owner, p.number, p.node_description, p.peer_guid, p.peer_port, p.peer_description);
  }
  return assembler.finish();
}

topology::FabricGraph build_ufm_graph(const std::vector<UfmPort>& ports, const std::vector<UfmLink>& links,
                                      std::vector<std::string>* notes) {
  // Records hold normalised GUIDs ("" when absent); those that are not GUIDs cannot name a vertex.
  UfmFabric fabric;
  fabric.ports.reserve(ports.size());
  for (const UfmPort& r : ports) {
    auto guid = parse_guid(r.guid);
    if (!guid) continue;
    UfmFabric::Port& p = fabric.ports.emplace_back();
    p.guid = *guid;
    if (auto system = parse_guid(r.system_guid)) {
      p.system_guid = *system;
      p.has_system_guid = true;
    }
    if (auto peer = parse_guid(r.peer_guid)) {
      p.peer_guid = *peer;
      p.has_peer_guid = true;
    }
    p.number = r.number;
    p.peer_port = r.peer_port;
    p.system_name = fabric.keep(r.system_name);
    p.node_description = fabric.keep(r.node_description);
    p.peer_description = fabric.keep(r.peer_description);
    p.rate = fabric.keep(r.rate);
    p.facts = r.facts;
    p.role = r.role;
    p.down = r.down;
  }
  fabric.links.reserve(links.size());
  for (const UfmLink& r : links) {
    auto source = parse_guid(r.source_guid);
    auto destination = parse_guid(r.destination_guid);
    if (!source || !destination) continue;
    UfmFabric::Link& l = fabric.links.emplace_back();
    l.source_guid = *source;
    l.destination_guid = *destination;
    l.source_port = r.source_port;
    l.destination_port = r.destination_port;
    l.source_description = fabric.keep(r.source_description);
    l.destination_description = fabric.keep(r.destination_description);
  }
  return build_ufm_graph(fabric, notes);
}

}  // namespace hypertopo::discoverers::ufm
