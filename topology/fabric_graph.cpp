#include "topology/fabric_graph.h"

#include <algorithm>
#include <cctype>

#include "topology/guid_text.h"

namespace hypertopo::topology {

void FabricGraph::catch_up_index() {
  for (; indexed_ < vertices_.size(); ++indexed_)
    index_.try_emplace(vertices_[indexed_].id, static_cast<VertexId>(indexed_));
}

VertexId FabricGraph::add_vertex(VertexKind kind, std::string_view id, std::string_view description) {
  catch_up_index();
  if (auto it = index_.find(id); it != index_.end()) {
    Vertex& existing = vertices_[it->second];
    if (existing.description.empty()) existing.description = std::string(description);
    // A vertex first seen as a link peer may be declared a switch later.
    if (kind == VertexKind::kSwitch) existing.kind = kind;
    return it->second;
  }
  const VertexId added = add_new_vertex(kind, std::string(id), description);
  catch_up_index();
  return added;
}

VertexId FabricGraph::add_new_vertex(VertexKind kind, std::string id, std::string_view description) {
  Vertex& v = vertices_.emplace_back();
  v.kind = kind;
  v.id = std::move(id);
  v.description = std::string(description);
  adjacency_valid_ = false;
  return static_cast<VertexId>(vertices_.size() - 1);
}

VertexId FabricGraph::add_switch(std::string_view id, std::string_view description) {
  return add_vertex(VertexKind::kSwitch, id, description);
}

VertexId FabricGraph::add_endpoint(std::string_view id, std::string_view description) {
  return add_vertex(VertexKind::kEndpoint, id, description);
}

void FabricGraph::add_link(VertexId a, int port_a, VertexId b, int port_b, std::string_view rate) {
  links_.push_back(Link{a, b, port_a, port_b, std::string(rate), {}, {}});
  adjacency_valid_ = false;
}

void FabricGraph::add_link(VertexId a, int port_a, VertexId b, int port_b, std::string_view rate,
                           const PortFacts& end_a, const PortFacts& end_b) {
  links_.push_back(Link{a, b, port_a, port_b, std::string(rate), end_a, end_b});
  adjacency_valid_ = false;
}

std::optional<VertexId> FabricGraph::find(std::string_view id) const {
  // Read-only: vertices added with add_new_vertex since the index last caught up are looked
  // through one by one (only tests ask a UFM graph by id).
  if (auto it = index_.find(id); it != index_.end()) return it->second;
  for (std::size_t v = indexed_; v < vertices_.size(); ++v)
    if (vertices_[v].id == id) return static_cast<VertexId>(v);
  return std::nullopt;
}

std::size_t FabricGraph::switch_count() const {
  return static_cast<std::size_t>(std::count_if(
      vertices_.begin(), vertices_.end(), [](const Vertex& v) { return v.kind == VertexKind::kSwitch; }));
}

std::size_t FabricGraph::endpoint_count() const { return vertices_.size() - switch_count(); }

void FabricGraph::reserve(std::size_t vertices, std::size_t links) {
  vertices_.reserve(vertices);
  links_.reserve(links);
  index_.reserve(vertices);
}

void FabricGraph::build_adjacency() const {
  const std::size_t n = vertices_.size();
  adjacency_offsets_.assign(n + 1, 0);
  for (const Link& l : links_) {
    if (l.a == l.b) continue;
    ++adjacency_offsets_[l.a + 1];
    ++adjacency_offsets_[l.b + 1];
  }
  for (std::size_t i = 0; i < n; ++i) adjacency_offsets_[i + 1] += adjacency_offsets_[i];
  adjacency_.assign(adjacency_offsets_[n], 0);
  std::vector<std::uint32_t> fill(adjacency_offsets_.begin(), adjacency_offsets_.end() - 1);
  for (const Link& l : links_) {
    if (l.a == l.b) continue;
    adjacency_[fill[l.a]++] = l.b;
    adjacency_[fill[l.b]++] = l.a;
  }
  adjacency_valid_ = true;
}

std::span<const VertexId> FabricGraph::neighbors(VertexId v) const {
  if (!adjacency_valid_) build_adjacency();
  return {adjacency_.data() + adjacency_offsets_[v], adjacency_.data() + adjacency_offsets_[v + 1]};
}

std::optional<std::string> normalize_guid(std::string_view text) {
  if (text.starts_with("0x") || text.starts_with("0X")) text.remove_prefix(2);
  if (text.empty() || text.size() > 16) return std::nullopt;
  std::string out = "0x";
  out.append(16 - text.size(), '0');
  for (char c : text) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return std::nullopt;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

std::string guid_text(std::uint64_t guid) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(18, '0');
  out[1] = 'x';
  for (int i = 17; i >= 2; --i, guid >>= 4) out[static_cast<std::size_t>(i)] = kHex[guid & 0xf];
  return out;
}

}  // namespace hypertopo::topology
