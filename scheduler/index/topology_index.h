// scheduler/index/topology_index.h: the topology tree plus capacity sums that placement reads.
//
// Built from Volcano HyperNodes (every selector kind on Node members, HyperNode members) or from a
// Kueue Topology's label levels, plus Nodes and the Pods already bound to them. Domains carry a
// tier (1 = lowest HyperNode tier; nodes are tier 0) and a virtual cluster-top root one tier above
// the highest real tier holds everything. Per-domain allocatable and used sums are kept
// incrementally as pods are placed or released, so a placement never rescans the cluster.
// Fabric health rides along: each domain keeps its HyperNode's FabricDegraded condition, and a node
// named in a holding HyperNode's hypertopo.io/degraded-members is marked as having a degraded link.
//
//   auto index = TopologyIndex::from_hypernodes(hypernodes, nodes, bound_pods);
//   if (!index) return std::unexpected(index.error());
//   int rack = index->find_domain("rack-1");
//   std::int64_t free_gpus = index->domain_allocatable(rack, "nvidia.com/gpu") -
//                            index->domain_used(rack, "nvidia.com/gpu");
#pragma once

#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "errors/error.h"
#include "scheduler/index/cluster_model.h"

namespace hypertopo::scheduler {

struct IndexDomain {
  std::string name;       // HyperNode name, or the label value path joined with "/" for label levels
  int tier = 0;           // 1 = lowest domain tier; the root is max_tier() + 1
  std::string tier_name;  // HyperNode spec.tierName or the level's label key
  int parent = -1;
  std::vector<int> children;  // child domains, sorted by name (tree order)
  std::vector<int> nodes;     // nodes directly inside this domain, sorted by name
  DomainFabricHealth health;  // from the HyperNode; the root and label levels are always healthy
};

struct IndexNode {
  NodeSpec spec;
  int domain = -1;  // the lowest domain that holds the node (the root when none)
  // Its own link is degraded: a HyperNode that holds it names it in hypertopo.io/degraded-members.
  bool link_degraded = false;
};

class TopologyIndex {
 public:
  static std::expected<TopologyIndex, Error> from_hypernodes(const std::vector<HyperNodeSpec>& hypernodes,
                                                             std::vector<NodeSpec> nodes,
                                                             const std::vector<BoundPod>& pods);
  // The same from HyperNodes kept elsewhere (a watch's view): nothing of them is copied but what
  // the index keeps (names, tiers, health).
  static std::expected<TopologyIndex, Error> from_hypernodes(std::span<const HyperNodeSpec* const> hypernodes,
                                                             std::vector<NodeSpec> nodes,
                                                             const std::vector<BoundPod>& pods);
  // Nodes missing any level label sit directly under the root. When the lowest level is the
  // hostname label, that level is the node itself.
  static std::expected<TopologyIndex, Error> from_levels(const LevelTopologySpec& topology,
                                                         std::vector<NodeSpec> nodes,
                                                         const std::vector<BoundPod>& pods);

  int root() const { return shape_->root; }
  int max_tier() const { return shape_->max_tier; }
  const std::vector<IndexDomain>& domains() const { return shape_->domains; }
  const std::vector<IndexNode>& nodes() const { return shape_->nodes; }
  const IndexDomain& domain(int id) const { return shape_->domains[static_cast<std::size_t>(id)]; }
  const IndexNode& node(int id) const { return shape_->nodes[static_cast<std::size_t>(id)]; }
  int find_domain(std::string_view name) const;
  int find_node(std::string_view name) const { return shape_->node_names.find(name); }
  // Names of domains from the top real tier down to `id` (the root excluded).
  std::vector<std::string> domain_path(int id) const;

  // Resolves a tier given as a number ("2"), a HyperNode tierName, or a level label key.
  std::expected<int, Error> resolve_tier(std::string_view level) const;
  // The widest tier whose every domain holds nodes that all carry node label `key` with one value:
  // the tier a "same value of this label" constraint (KEP-5732 PodGroup topology, KAI's and Kueue's
  // label levels) means when the HyperNodes do not name their tiers by that label. nullopt when not
  // even the lowest tier's domains are that uniform.
  std::optional<int> tier_of_label(std::string_view key) const;

  // The lowest tier any domain has (the root's when there is no other domain).
  int lowest_tier() const { return shape_->lowest_tier; }
  // The domain holding `node` at each tier from lowest_tier() up to the root's, -1 where none does;
  // where two of its domains share a tier, the higher one. Built once per build: a normal pod's
  // score reads it for each of 20,000 candidates instead of walking the tree.
  std::span<const int> tier_domains(int node) const {
    const auto span = static_cast<std::size_t>(shape_->tier_span);
    return std::span<const int>(shape_->tier_domains).subspan(static_cast<std::size_t>(node) * span, span);
  }

  // The tier names seen per tier (empty when the HyperNodes gave none).
  std::string tier_name(int tier) const;

  // Dense resource ids; -1 when no node offers the resource.
  int resource_id(std::string_view name) const;
  const std::vector<std::string>& resource_names() const { return shape_->resource_names; }
  std::size_t resource_count() const { return shape_->resource_names.size(); }

  std::int64_t node_allocatable(int node, int resource) const { return shape_->alloc[slot(node, resource)]; }
  std::int64_t node_used(int node, int resource) const { return used_[slot(node, resource)]; }
  std::int64_t domain_allocatable(int domain, std::string_view resource) const;
  std::int64_t domain_used(int domain, std::string_view resource) const;
  std::int64_t domain_allocatable(int domain, int resource) const {
    return shape_->domain_alloc[dslot(domain, resource)];
  }
  std::int64_t domain_used(int domain, int resource) const { return domain_used_[dslot(domain, resource)]; }

  // Adds (or with count < 0 removes) `count` pods of `requests` (pods: 1 implied) on a node and
  // updates every enclosing domain's sums.
  std::expected<void, Error> add_pods(int node, const ResourceAmounts& requests, std::int64_t count);

  // A node going NotReady (false) or coming back (true); placement then skips or uses it again.
  void set_node_ready(int node, bool ready) {
    own_shape().nodes[static_cast<std::size_t>(node)].spec.ready = ready;
  }

  // Bytes held by the index's own arrays and strings (an estimate for memory reports).
  std::size_t approximate_bytes() const;

 private:
  std::size_t slot(int node, int resource) const {
    return static_cast<std::size_t>(node) * shape_->resource_names.size() +
           static_cast<std::size_t>(resource);
  }
  std::size_t dslot(int domain, int resource) const {
    return static_cast<std::size_t>(domain) * shape_->resource_names.size() +
           static_cast<std::size_t>(resource);
  }
  void finish(std::vector<NodeSpec> nodes);
  // Node ids are positions in `nodes`, sorted by name: an error names a node listed twice.
  std::expected<void, Error> name_nodes(const std::vector<NodeSpec>& nodes);
  std::expected<void, Error> apply_pods(const std::vector<BoundPod>& pods);

  // Looked up by string_view without making a string: the extender resolves 6,000 names per call.
  struct NameHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view name) const { return std::hash<std::string_view>{}(name); }
  };
  using NameMap = std::unordered_map<std::string, int, NameHash, std::equal_to<>>;
  // Node names by id, looked up 20,000 times per extender call: an open-addressing table of (the
  // hash's high half, id + 1) over the names kept back to back, so that a lookup reads one slot of a
  // small table and the name's bytes, not a bucket, a list node and a key apart.
  struct NodeNames {
    std::string text;                  // every name, back to back, in id order
    std::vector<std::uint32_t> ends;   // name i is text[ends[i - 1], ends[i])
    std::vector<std::uint64_t> slots;  // 0: empty; a power of two long, at most half full
    int find(std::string_view name) const;
    std::size_t bytes() const { return text.capacity() + ends.capacity() * 4 + slots.capacity() * 8; }
  };
  // What a build fixes: the tree, the nodes, the names and the allocatable sums. Copies of an index
  // share it (an extender's snapshot of 20,000 nodes copies only the usage arrays below); a change
  // to it (set_node_ready) copies it first when another index shares it.
  struct Shape {
    std::vector<IndexDomain> domains;
    std::vector<IndexNode> nodes;
    NameMap domain_by_name;
    NodeNames node_names;
    NameMap tier_by_name;
    std::vector<std::string> resource_names;
    NameMap resource_by_name;
    std::vector<std::int64_t> alloc, domain_alloc;
    int root = -1;
    int max_tier = 0;
    int lowest_tier = 0;
    int tier_span = 0;              // tiers from lowest_tier to the root's
    std::vector<int> tier_domains;  // tier_domains(node), node after node
  };
  Shape& own_shape() {
    if (shape_.use_count() > 1) shape_ = std::make_shared<Shape>(*shape_);
    return *shape_;
  }
  std::shared_ptr<Shape> shape_ = std::make_shared<Shape>();
  // What pods change, per copy.
  std::vector<std::int64_t> used_, domain_used_;
};

}  // namespace hypertopo::scheduler
