#include "discoverers/ufm/ufm_fabric.h"

#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "topology/fabric_health.h"

namespace hypertopo::discoverers::ufm {
namespace {

namespace od = simdjson::ondemand;
using simdjson::error_code;

// A field's value as text: strings as they are, numbers as their JSON token; nullopt for null,
// booleans, arrays and objects (left unread, so the parser skips them).
error_code read_text(od::value& v, std::optional<std::string_view>& out) {
  od::json_type type;
  if (auto e = v.type().get(type)) return e;
  if (type == od::json_type::string) {
    std::string_view s;
    if (auto e = v.get_string().get(s)) return e;
    out = s;
  } else if (type == od::json_type::number) {
    std::string_view raw = v.raw_json_token();
    while (!raw.empty() &&
           (raw.back() == ' ' || raw.back() == '\n' || raw.back() == '\r' || raw.back() == '\t'))
      raw.remove_suffix(1);
    out = raw;
  }
  return simdjson::SUCCESS;
}

int to_int(std::string_view text) {
  int value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc{} && ptr == text.data() + text.size() ? value : 0;
}

// "<guid>_<port>" -> (guid, port); nullopt for "N/A" and other non-names.
std::optional<std::pair<std::string, int>> split_port_name(std::string_view name) {
  auto underscore = name.rfind('_');
  if (underscore == std::string_view::npos) return std::nullopt;
  auto guid = topology::normalize_guid(name.substr(0, underscore));
  if (!guid) return std::nullopt;
  return std::pair{std::move(*guid), to_int(name.substr(underscore + 1))};
}

std::string guid_or_empty(std::optional<std::string_view> text) {
  if (!text) return {};
  auto guid = topology::normalize_guid(*text);
  return guid ? std::move(*guid) : std::string();
}

std::string rate_text(std::optional<std::string_view> width, std::optional<std::string_view> speed) {
  if (!width || !speed || speed->empty() || *speed == "N/A") return {};
  std::string_view w = *width;
  if (w.starts_with("IB_")) w.remove_prefix(3);
  if (w.empty() || w == "N/A") return {};
  std::string out(w);
  out += *speed;
  return out;
}

std::string_view without_ib_prefix(std::string_view text) {
  if (text.starts_with("IB_")) text.remove_prefix(3);
  return text;
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

Error json_error(error_code e) {
  return Error(ErrorCode::kParse, std::string("not valid JSON (") + simdjson::error_message(e) +
                                      "); the response may have been cut short");
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
  od::json_type type;
  if (auto e = doc.type().get(type)) return std::unexpected(json_error(e));
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
    if (auto e = doc.get_array().get(array)) return std::unexpected(json_error(e));
    if (auto e = each(array)) return std::unexpected(json_error(e));
  } else if (type == od::json_type::object) {
    page.paged = true;
    bool saw_data = false;
    od::object object;
    if (auto e = doc.get_object().get(object)) return std::unexpected(json_error(e));
    for (auto field : object) {
      std::string_view key;
      if (auto e = field.unescaped_key().get(key)) return std::unexpected(json_error(e));
      od::value value;
      if (auto e = field.value().get(value)) return std::unexpected(json_error(e));
      if (key == "data") {
        od::array array;
        if (auto e = value.get_array().get(array)) {
          if (e == simdjson::INCORRECT_TYPE)
            return fail(ErrorCode::kParse, "the paged answer's \"data\" is not a list");
          return std::unexpected(json_error(e));
        }
        saw_data = true;
        if (auto e = each(array)) return std::unexpected(json_error(e));
      } else if (key == "total_resources") {
        std::optional<std::string_view> text;
        if (auto e = read_text(value, text)) return std::unexpected(json_error(e));
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

}  // namespace

struct UfmResponseParser::Impl {
  od::parser parser;
};

UfmResponseParser::UfmResponseParser() : impl_(std::make_unique<Impl>()) {}
UfmResponseParser::~UfmResponseParser() = default;

std::expected<UfmPage, Error> UfmResponseParser::ports(std::string& body, std::vector<UfmPort>& out) {
  // A port record is several hundred bytes; reserving up front saves re-moving every record as the
  // vector grows (untouched capacity costs no memory).
  out.reserve(out.size() + body.size() / 256);
  return parse_list(
      impl_->parser, body, [&](od::object& object, std::size_t index, UfmPage& page) -> error_code {
        std::optional<std::string_view> guid, system_id, system_name, node_description, description, number,
            name, peer, peer_guid, peer_node_guid, peer_node_description, peer_node_name, width, speed,
            logical_state, physical_state;
        topology::PortFacts facts;
        for (auto field : object) {
          std::string_view key;
          if (auto e = field.unescaped_key().get(key)) return e;
          std::optional<std::string_view>* slot = nullptr;
          if (key == "enabled_width" || key == "supported_width" || key == "enabled_speed" ||
              key == "supported_speed") {
            od::value value;
            if (auto e = field.value().get(value)) return e;
            error_code e = simdjson::SUCCESS;
            if (key == "enabled_width") {
              e = read_best_of_list(value, facts.width_enabled, width_lanes);
            } else if (key == "supported_width") {
              e = read_best_of_list(value, facts.width_supported, width_lanes);
            } else if (key == "enabled_speed") {
              e = read_best_of_list(value, facts.speed_enabled, lane_mbps);
            } else {
              e = read_best_of_list(value, facts.speed_supported, lane_mbps);
            }
            if (e) return e;
            continue;
          }
          switch (key.size()) {
            case 4:
              slot = key == "guid" ? &guid : key == "name" ? &name : key == "peer" ? &peer : nullptr;
              break;
            case 6:
              slot = key == "number" ? &number : nullptr;
              break;
            case 8:
              slot = key == "systemID" ? &system_id : nullptr;
              break;
            case 9:
              slot = key == "peer_guid" ? &peer_guid : nullptr;
              break;
            case 11:
              slot = key == "system_name" ? &system_name : key == "description" ? &description : nullptr;
              break;
            case 12:
              slot = key == "active_width" ? &width : key == "active_speed" ? &speed : nullptr;
              break;
            case 13:
              slot = key == "logical_state" ? &logical_state : nullptr;
              break;
            case 14:
              slot = key == "peer_node_guid"   ? &peer_node_guid
                     : key == "peer_node_name" ? &peer_node_name
                     : key == "physical_state" ? &physical_state
                                               : nullptr;
              break;
            case 16:
              slot = key == "node_description" ? &node_description : nullptr;
              break;
            case 21:
              slot = key == "peer_node_description" ? &peer_node_description : nullptr;
              break;
            default:
              break;
          }
          if (!slot) continue;  // unread values are skipped by the parser
          od::value value;
          if (auto e = field.value().get(value)) return e;
          if (auto e = read_text(value, *slot)) return e;
        }
        UfmPort port;
        auto normalized = guid ? topology::normalize_guid(*guid) : std::nullopt;
        if (!normalized) {
          note_skip(page, "port " + std::to_string(index) +
                              (guid ? " has a \"guid\" that is not hex: '" + std::string(*guid) + "'"
                                    : " has no \"guid\""));
          return simdjson::SUCCESS;
        }
        port.guid = std::move(*normalized);
        port.system_guid = guid_or_empty(system_id);
        if (system_name) port.system_name = *system_name;
        if (node_description) port.node_description = *node_description;
        if (description) {
          if (description->find("Switch") != std::string_view::npos) {
            port.role = PortRole::kSwitch;
          } else if (description->find("Computer") != std::string_view::npos) {
            port.role = PortRole::kHost;
          }
        }
        if (number) port.number = to_int(*number);
        if (port.number == 0 && name) {
          if (auto split = split_port_name(*name)) port.number = split->second;
        }
        if (peer_guid) port.peer_guid = guid_or_empty(peer_guid);
        if (peer) {
          if (auto split = split_port_name(*peer)) {
            if (port.peer_guid.empty()) port.peer_guid = split->first;
            port.peer_port = split->second;
          }
        }
        if (port.peer_guid.empty()) port.peer_guid = guid_or_empty(peer_node_guid);
        if (peer_node_description) {
          port.peer_description = *peer_node_description;
        } else if (peer_node_name) {
          port.peer_description = *peer_node_name;
        }
        port.rate = rate_text(width, speed);
        if (width) facts.width_active = width_lanes(*width);
        if (speed) facts.speed_active = lane_mbps(*speed);
        if (logical_state) facts.state = topology::port_state_code(*logical_state);
        if (physical_state) facts.phys_state = topology::phys_state_code(*physical_state);
        port.facts = facts;
        port.down = facts.state == 1;
        out.push_back(std::move(port));
        return simdjson::SUCCESS;
      });
}

std::expected<UfmPage, Error> UfmResponseParser::links(std::string& body, std::vector<UfmLink>& out) {
  out.reserve(out.size() + body.size() / 128);
  return parse_list(
      impl_->parser, body, [&](od::object& object, std::size_t index, UfmPage& page) -> error_code {
        std::optional<std::string_view> source_guid, source_port, destination_guid, destination_port,
            source_desc, destination_desc;
        for (auto field : object) {
          std::string_view key;
          if (auto e = field.unescaped_key().get(key)) return e;
          std::optional<std::string_view>* slot = nullptr;
          if (key == "source_guid") {
            slot = &source_guid;
          } else if (key == "source_port") {
            slot = &source_port;
          } else if (key == "destination_guid") {
            slot = &destination_guid;
          } else if (key == "destination_port") {
            slot = &destination_port;
          } else if (key == "source_port_node_description") {
            slot = &source_desc;
          } else if (key == "destination_port_node_description") {
            slot = &destination_desc;
          }
          if (!slot) continue;
          od::value value;
          if (auto e = field.value().get(value)) return e;
          if (auto e = read_text(value, *slot)) return e;
        }
        UfmLink link;
        link.source_guid = guid_or_empty(source_guid);
        link.destination_guid = guid_or_empty(destination_guid);
        if (link.source_guid.empty() || link.destination_guid.empty()) {
          note_skip(page, "link " + std::to_string(index) + " has no usable " +
                              (link.source_guid.empty() ? "\"source_guid\"" : "\"destination_guid\""));
          return simdjson::SUCCESS;
        }
        if (source_port) link.source_port = to_int(*source_port);
        if (destination_port) link.destination_port = to_int(*destination_port);
        if (source_desc) link.source_description = *source_desc;
        if (destination_desc) link.destination_description = *destination_desc;
        out.push_back(std::move(link));
        return simdjson::SUCCESS;
      });
}

namespace {

std::string port_key(const std::string& guid, int port) { return guid + "#" + std::to_string(port); }

class GraphAssembler {
 public:
  GraphAssembler(const std::vector<UfmPort>& ports, std::vector<std::string>* notes) : notes_(notes) {
    graph_.reserve(ports.size(), ports.size());
    for (const UfmPort& p : ports) {
      const std::string& owner = p.system_guid.empty() ? p.guid : p.system_guid;
      port_at_.emplace(port_key(owner, p.number), &p);
      if (p.role == PortRole::kSwitch) {
        auto& desc = switch_description_[owner];
        if (desc.empty()) desc = p.node_description.empty() ? p.system_name : p.node_description;
      } else {
        ca_port_.emplace(p.guid, &p);
        if (!p.system_guid.empty()) ca_node_.insert(p.system_guid);
      }
    }
  }

  // The vertex for one end of a cable: a CA port (by port GUID, or node GUID + port number) or else a
  // switch.
  topology::VertexId end(const std::string& guid, int port, const std::string& description) {
    const UfmPort* ca = nullptr;
    if (auto it = ca_port_.find(guid); it != ca_port_.end()) {
      ca = it->second;
    } else if (ca_node_.contains(guid)) {
      if (auto at = port_at_.find(port_key(guid, port)); at != port_at_.end()) ca = at->second;
    }
    if (ca) return endpoint(*ca);
    if (ca_node_.contains(guid)) {
      // A CA port UFM did not list: keep it, keyed by node GUID and port, without a host.
      ++unlisted_ca_ports_;
      return graph_.add_endpoint(guid + "_" + std::to_string(port), description);
    }
    auto known = switch_description_.find(guid);
    return graph_.add_switch(guid, known != switch_description_.end() ? known->second : description);
  }

  void link(const std::string& a, int pa, const std::string& a_desc, const std::string& b, int pb,
            const std::string& b_desc) {
    topology::VertexId va = end(a, pa, a_desc);
    topology::VertexId vb = end(b, pb, b_desc);
    std::string ka = port_key(graph_.vertex(va).id, pa);
    std::string kb = port_key(graph_.vertex(vb).id, pb);
    if (!seen_.insert(ka < kb ? ka + "|" + kb : kb + "|" + ka).second) return;
    const UfmPort* port_a = port_of(a, pa);
    const UfmPort* port_b = port_of(b, pb);
    std::string rate = port_a ? port_a->rate : std::string();
    if (rate.empty() && port_b) rate = port_b->rate;
    graph_.add_link(va, pa, vb, pb, rate, port_a ? port_a->facts : topology::PortFacts{},
                    port_b ? port_b->facts : topology::PortFacts{});
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
  topology::VertexId endpoint(const UfmPort& p) {
    if (auto found = graph_.find(p.guid)) return *found;
    topology::VertexId v = graph_.add_endpoint(p.guid, p.node_description);
    topology::Vertex& vx = graph_.vertex(v);
    vx.host = p.system_name;
    vx.node_guid = p.system_guid;
    vx.system_guid = p.system_guid;
    vx.port = p.number;
    vx.aggregation_node = p.node_description.find("Aggregation Node") != std::string::npos;
    return v;
  }

  // The record of one cable end: a CA port by its port GUID, else "<node guid>#<port>".
  const UfmPort* port_of(const std::string& guid, int port) const {
    if (auto it = ca_port_.find(guid); it != ca_port_.end()) {
      // An HCA whose port GUID is its node GUID lists its other ports under the same GUID.
      const int number = it->second->number;
      if (number == port || number == 0 || port == 0) return it->second;
    }
    if (auto at = port_at_.find(port_key(guid, port)); at != port_at_.end()) return at->second;
    return nullptr;
  }

  std::vector<std::string>* notes_;
  topology::FabricGraph graph_;
  std::unordered_map<std::string, const UfmPort*> port_at_;  // "<owner guid>#<port>"
  std::unordered_map<std::string, const UfmPort*> ca_port_;  // port GUID
  std::unordered_set<std::string> ca_node_;                  // CA node GUIDs
  std::unordered_map<std::string, std::string> switch_description_;
  std::unordered_set<std::string> seen_;
  std::size_t unlisted_ca_ports_ = 0;
};

}  // namespace

topology::FabricGraph build_ufm_graph(const std::vector<UfmPort>& ports, const std::vector<UfmLink>& links,
                                      std::vector<std::string>* notes) {
  GraphAssembler assembler(ports, notes);
  for (const UfmLink& l : links) {
    assembler.link(l.source_guid, l.source_port, l.source_description, l.destination_guid, l.destination_port,
                   l.destination_description);
  }
  // The ports' own peer fields fill in cables the links answer lacks (or a server without it).
  for (const UfmPort& p : ports) {
    if (p.down || p.peer_guid.empty() || p.peer_port == 0) continue;
    const std::string& owner = p.role == PortRole::kSwitch && !p.system_guid.empty() ? p.system_guid : p.guid;
    assembler.link(owner, p.number, p.node_description, p.peer_guid, p.peer_port, p.peer_description);
  }
  return assembler.finish();
}

}  // namespace hypertopo::discoverers::ufm
