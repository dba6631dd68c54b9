#include "discoverers/ufm/ufm_fabric.h"

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <bit>
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
[[gnu::always_inline]] inline bool has_backslash(std::string_view text) {
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
[[gnu::always_inline]] inline error_code read_text(od::value& v, std::optional<std::string_view>& out) {
  std::string_view raw = v.raw_json_token();
  while (!raw.empty() && json_space(raw.back())) raw.remove_suffix(1);
  if (raw.size() >= 2 && raw.front() == '"' && raw.back() == '"' &&
      !has_backslash(std::string_view(raw.data() + 1, raw.size() - 2))) {
    out = std::string_view(raw.data() + 1, raw.size() - 2);
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

// The first quote or backslash at or after `text`, eight bytes at a time. The key it scans has its
// closing quote (stage 1 checked), and simdjson's padding lets the last word read past it.
[[gnu::always_inline]] inline const char* quote_or_backslash(const char* text) {
  constexpr std::uint64_t kOnes = 0x0101010101010101ull;
  constexpr std::uint64_t kHigh = 0x8080808080808080ull;
  for (;; text += 8) {
    std::uint64_t chunk;
    std::memcpy(&chunk, text, 8);
    const std::uint64_t q = chunk ^ (kOnes * '"');
    const std::uint64_t b = chunk ^ (kOnes * '\\');
    const std::uint64_t found = ((q - kOnes) & ~q & kHigh) | ((b - kOnes) & ~b & kHigh);
    if (found) return text + std::countr_zero(found) / 8;
  }
}

// A field's key: its bytes in the body, or unescaped when it holds a backslash (no UFM key does).
[[gnu::always_inline]] inline error_code key_of(od::field& field, std::string_view& out) {
  const char* begin = field.key().raw();
  const char* end = quote_or_backslash(begin);
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

// Eight hex digits, the first in the lowest byte of `chars`, as their value; nullopt when one is not
// a hex digit. Every port record carries three or four GUIDs of sixteen digits: a word at a time
// instead of a table lookup per digit.
[[gnu::always_inline]] inline std::optional<std::uint32_t> hex8(std::uint64_t chars) {
  constexpr std::uint64_t kOnes = 0x0101010101010101ull;
  constexpr std::uint64_t kHigh = 0x8080808080808080ull;
  if (chars & kHigh) return std::nullopt;
  // Per byte c < 0x80, c + (0x80 - lo) has its high bit set exactly when c >= lo (no carry out).
  auto at_least = [&](std::uint64_t x, std::uint8_t lo) { return (x + kOnes * (0x80u - lo)) & kHigh; };
  const std::uint64_t digit = at_least(chars, '0') & ~at_least(chars, '9' + 1);
  const std::uint64_t lower = chars | kOnes * 0x20;  // 'A'-'F' -> 'a'-'f'; digits have the bit already
  const std::uint64_t letter = at_least(lower, 'a') & ~at_least(lower, 'f' + 1);
  if ((digit | letter) != kHigh) return std::nullopt;
  // A digit's low nibble is its value; a letter's ('a' 0x61, 'A' 0x41) is 1-6, and bit 6 adds 9.
  std::uint64_t v = (chars & kOnes * 0x0f) + 9 * ((chars >> 6) & kOnes);
  v = ((v << 4) | (v >> 8)) & 0x00ff00ff00ff00ffull;   // pairs of digits
  v = ((v << 8) | (v >> 16)) & 0x0000ffff0000ffffull;  // four digits
  return static_cast<std::uint32_t>((v << 16) | (v >> 32));
}

// parse_guid (ufm_fabric.h), kept in this file's namespace so that the record readers inline it.
[[gnu::always_inline]] inline std::optional<std::uint64_t> guid_value(std::string_view text) {
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
  if (text.size() == 16) {
    std::uint64_t high_chars, low_chars;
    std::memcpy(&high_chars, text.data(), 8);
    std::memcpy(&low_chars, text.data() + 8, 8);
    if constexpr (std::endian::native == std::endian::big) {
      high_chars = __builtin_bswap64(high_chars);
      low_chars = __builtin_bswap64(low_chars);
    }
    auto high = hex8(high_chars);
    auto low = hex8(low_chars);
    if (!high || !low) return std::nullopt;
    return std::uint64_t{*high} << 32 | *low;
  }
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

[[gnu::always_inline]] inline std::optional<std::uint64_t> guid_of(std::optional<std::string_view> text) {
  return text ? guid_value(*text) : std::nullopt;
}

// "<guid>_<port>" -> (guid, port); nullopt for "N/A" and other non-names.
std::optional<std::pair<std::uint64_t, int>> split_port_name(std::string_view name) {
  auto underscore = name.rfind('_');
  if (underscore == std::string_view::npos) return std::nullopt;
  auto guid = guid_value(name.substr(0, underscore));
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

// The best entry of a list every record of a fabric repeats (`"enabled_speed": ["HDR", "NDR"]`),
// kept by the list's text: a list seen before is recognised by its bytes where it starts and left
// unread (the parser skips it), instead of each entry being read and converted again.
template <typename T>
class ListMemo {
 public:
  // The value of the list whose text starts at `at` (its '['), when its text is one seen before;
  // `body_end` bounds the comparison.
  std::optional<T> find(const char* at, const char* body_end) const {
    const auto room = static_cast<std::size_t>(body_end - at);
    for (const Entry& e : entries_)
      if (e.text.size() <= room && std::memcmp(at, e.text.data(), e.text.size()) == 0) return e.value;
    return std::nullopt;
  }
  void remember(std::string_view text, T value) {
    if (entries_.size() < kEntries && text.size() <= kLongest)
      entries_.push_back(Entry{std::string(text), value});
  }

 private:
  static constexpr std::size_t kEntries = 8;
  static constexpr std::size_t kLongest = 256;
  struct Entry {
    std::string text;
    T value;
  };
  std::vector<Entry> entries_;
};

struct PortConversions {
  TextMemo<std::uint32_t> speed;
  TextMemo<std::uint8_t> width;
  TextMemo<std::uint8_t> state;
  TextMemo<std::uint8_t> phys_state;
  ListMemo<std::uint32_t> speed_list;
  ListMemo<std::uint8_t> width_list;
  const char* body_end = nullptr;
  std::uint32_t mbps(std::string_view text) { return speed(text, lane_mbps); }
  std::uint8_t lanes(std::string_view text) { return width(text, width_lanes); }
};

// A list of widths or speeds (`enabled_width: ["1x", "4x"]`): the largest entry UFM names in it,
// converted by `convert`; anything but a list contributes nothing, an entry that is not a string or
// number neither. A list of strings and numbers is remembered in `memo` by its text.
template <typename T, typename Convert>
error_code read_best_of_list(od::value& v, T& out, Convert&& convert, ListMemo<T>& memo,
                             const char* body_end) {
  // For an array, its '[' and what follows up to the next structural character.
  const std::string_view start = v.raw_json_token();
  if (start.empty() || start.front() != '[') return simdjson::SUCCESS;
  if (auto known = memo.find(start.data(), body_end)) {
    out = std::max<T>(out, *known);
    return simdjson::SUCCESS;
  }
  od::array array;
  if (auto e = v.get_array().get(array)) return e;
  T best = 0;
  bool scalars = true;
  const char* end = start.data() + start.size();  // after the last entry: its ']'
  for (auto element : array) {
    od::value item;
    if (auto e = element.get(item)) return e;
    const std::string_view token = item.raw_json_token();
    std::optional<std::string_view> text;
    if (auto e = read_text(item, text)) return e;
    if (text) {
      best = std::max<T>(best, convert(*text));
    } else {
      scalars = false;  // a nested value: its token is not its text
    }
    end = token.data() + token.size();
  }
  if (scalars && end < body_end && *end == ']')
    memo.remember(std::string_view(start.data(), static_cast<std::size_t>(end + 1 - start.data())), best);
  out = std::max<T>(out, best);
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

// simdjson reads up to SIMDJSON_PADDING bytes past the text (the capacity, not the contents).
void make_room_for_padding(std::string& body) {
  if (body.capacity() < body.size() + simdjson::SIMDJSON_PADDING)
    body.reserve(body.size() + simdjson::SIMDJSON_PADDING);
}

// Walks a plain array or the paged envelope, calling `record(object, index, page)` for each object.
template <typename Record>
std::expected<UfmPage, Error> parse_list(od::parser& parser, std::string& body, Record&& record) {
  make_room_for_padding(body);
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
          if (auto e = is(key, "enabled_width") ? read_best_of_list(value, f.facts.width_enabled, lanes,
                                                                    convert.width_list, convert.body_end)
                                                : read_best_of_list(value, f.facts.speed_enabled, mbps,
                                                                    convert.speed_list, convert.body_end))
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
          if (auto e = is(key, "supported_width") ? read_best_of_list(value, f.facts.width_supported, lanes,
                                                                      convert.width_list, convert.body_end)
                                                  : read_best_of_list(value, f.facts.speed_supported, mbps,
                                                                      convert.speed_list, convert.body_end))
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

std::optional<std::uint64_t> parse_guid(std::string_view text) { return guid_value(text); }

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
  make_room_for_padding(body);  // before taking the end: it may move the text
  convert.body_end = body.data() + body.size();
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

}  // namespace hypertopo::discoverers::ufm
