#include "discoverers/ib-fabric/graph_handover.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <string_view>
#include <vector>

namespace hypertopo::discoverers::ib_fabric {
namespace {

constexpr std::string_view kHeader = "hypertopo-fabric-graph 1";

std::string_view or_dash(const std::string& s) {
  return s.empty() ? std::string_view("-") : std::string_view(s);
}
std::string from_dash(std::string_view s) { return s == "-" ? std::string() : std::string(s); }

// Splits off `count` tab-separated fields; the rest of the line is the last field.
bool split(std::string_view line, std::size_t count, std::vector<std::string_view>& fields) {
  fields.clear();
  for (std::size_t i = 0; i + 1 < count; ++i) {
    auto tab = line.find('\t');
    if (tab == std::string_view::npos) return false;
    fields.push_back(line.substr(0, tab));
    line.remove_prefix(tab + 1);
  }
  fields.push_back(line);
  return true;
}

template <typename T>
bool number(std::string_view text, T& value) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc{} && ptr == text.data() + text.size();
}

void append_facts(std::string& text, const topology::PortFacts& f) {
  if (!f.known()) {
    text.push_back('-');
    return;
  }
  for (unsigned value : {unsigned(f.width_active), unsigned(f.width_enabled), unsigned(f.width_supported),
                         unsigned(f.state), unsigned(f.speed_active), unsigned(f.speed_enabled),
                         unsigned(f.speed_supported), unsigned(f.phys_state)}) {
    text.append(std::to_string(value)).push_back(',');
  }
  text.pop_back();
}

bool parse_facts(std::string_view text, topology::PortFacts& f) {
  f = {};
  if (text == "-") return true;
  unsigned values[8];
  for (std::size_t i = 0; i < 8; ++i) {
    auto comma = text.find(',');
    if ((comma == std::string_view::npos) != (i == 7)) return false;
    if (!number(text.substr(0, comma), values[i])) return false;
    text.remove_prefix(comma == std::string_view::npos ? text.size() : comma + 1);
  }
  // Lane counts and states are small; rates stay below 1 Tb/s per lane.
  for (std::size_t i : {0u, 1u, 2u, 3u, 7u}) {
    if (values[i] > 255) return false;
  }
  for (std::size_t i : {4u, 5u, 6u}) {
    if (values[i] > 1'000'000) return false;
  }
  f.width_active = static_cast<std::uint8_t>(values[0]);
  f.width_enabled = static_cast<std::uint8_t>(values[1]);
  f.width_supported = static_cast<std::uint8_t>(values[2]);
  f.state = static_cast<std::uint8_t>(values[3]);
  f.speed_active = values[4];
  f.speed_enabled = values[5];
  f.speed_supported = values[6];
  f.phys_state = static_cast<std::uint8_t>(values[7]);
  return true;
}

}  // namespace

void write_graph_handover(const topology::FabricGraph& graph, std::ostream& out) {
  std::string text;
  text.reserve(graph.vertex_count() * 96 + graph.links().size() * 48);
  text.append(kHeader).push_back('\n');
  for (const auto& v : graph.vertices()) {
    text.append("V\t").append(v.kind == topology::VertexKind::kSwitch ? "s" : "e").push_back('\t');
    text.append(v.id).push_back('\t');
    text.append(or_dash(v.system_guid)).push_back('\t');
    text.append(or_dash(v.node_guid)).push_back('\t');
    text.append(std::to_string(v.port)).push_back('\t');
    text.append(v.aggregation_node ? "1" : "0").push_back('\t');
    text.append(v.description).push_back('\n');
  }
  for (const auto& l : graph.links()) {
    text.append("L\t").append(std::to_string(l.a)).push_back('\t');
    text.append(std::to_string(l.port_a)).push_back('\t');
    text.append(std::to_string(l.b)).push_back('\t');
    text.append(std::to_string(l.port_b)).push_back('\t');
    text.append(or_dash(l.rate));
    if (l.end_a.known() || l.end_b.known()) {
      text.push_back('\t');
      append_facts(text, l.end_a);
      text.push_back('\t');
      append_facts(text, l.end_b);
    }
    text.push_back('\n');
  }
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

std::expected<topology::FabricGraph, Error> read_graph_handover(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(ErrorCode::kNotFound, "cannot read the walker's graph " + path.string());
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  std::string_view rest(text);
  auto bad = [&](std::size_t line, const std::string& what) {
    return fail(ErrorCode::kParse, path.string() + ":" + std::to_string(line) + ": " + what);
  };
  topology::FabricGraph graph;
  std::vector<std::string_view> f;
  std::size_t line_no = 0;
  while (!rest.empty()) {
    auto nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
    ++line_no;
    if (line_no == 1) {
      if (line != kHeader) return bad(1, "not a hypertopo graph hand-over file");
      continue;
    }
    if (line.starts_with("V\t")) {
      int port = 0;
      if (!split(line.substr(2), 7, f) || (f[0] != "s" && f[0] != "e") || !number(f[4], port)) {
        return bad(line_no, "malformed vertex line");
      }
      auto v = f[0] == "s" ? graph.add_switch(f[1], f[6]) : graph.add_endpoint(f[1], f[6]);
      auto& vx = graph.vertex(v);
      vx.system_guid = from_dash(f[2]);
      vx.node_guid = from_dash(f[3]);
      vx.port = port;
      vx.aggregation_node = f[5] == "1";
    } else if (line.starts_with("L\t")) {
      topology::VertexId a = 0, b = 0;
      int pa = 0, pb = 0;
      topology::PortFacts end_a, end_b;
      const auto body = line.substr(2);
      const bool with_facts = std::count(body.begin(), body.end(), '\t') == 6;
      if (!split(body, with_facts ? 7 : 5, f) || !number(f[0], a) || !number(f[1], pa) || !number(f[2], b) ||
          !number(f[3], pb) || a >= graph.vertex_count() || b >= graph.vertex_count() ||
          (with_facts && (!parse_facts(f[5], end_a) || !parse_facts(f[6], end_b)))) {
        return bad(line_no, "malformed link line");
      }
      graph.add_link(a, pa, b, pb, from_dash(f[4]), end_a, end_b);
    } else if (!line.empty()) {
      return bad(line_no, "unknown line");
    }
  }
  if (line_no == 0) return bad(1, "empty file");
  return graph;
}

}  // namespace hypertopo::discoverers::ib_fabric
