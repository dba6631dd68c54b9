// scheduler/placement/kueue_snapshot.h: the domains Kueue's TAS snapshot sees, with their free
// capacity, built from the nodes, the non-TAS pods and a Topology's levels.
//
// Like Kueue's TAS flavor snapshot (kubernetes-sigs/kueue, tas_flavor_snapshot.go): only nodes that
// are ready, schedulable, match the ResourceFlavor's labels and carry every level label count; each
// distinct path of level values is a domain; a leaf's free capacity is its nodes' allocatable minus
// the requests of the non-TAS pods bound there (and one `pods` each). When the lowest level is
// kubernetes.io/hostname a leaf is one node and its id is the node name alone. The tree never
// changes; one placement attempt keeps its counts in KueueFitState (kueue_fit.h).
//
//   KueueDomainTree tree(levels, nodes, non_tas_pods, /*flavor_labels=*/{});
//   for (int root : tree.roots())
//     for (int rack : tree.children(root)) use(tree.values(rack));  // {"b1", "r1"}
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "scheduler/index/cluster_model.h"

namespace hypertopo::scheduler {

// A domain's id as Kueue keys its usage: the level values joined by commas.
std::string kueue_domain_id(const std::vector<std::string>& values);

class KueueDomainTree {
 public:
  struct Leaf {
    int domain = -1;
    std::map<std::string, std::int64_t> free;
    std::size_t node = 0;  // index into nodes(): the first node of this leaf
  };

  KueueDomainTree(std::vector<std::string> levels, const std::vector<NodeSpec>& nodes,
                  const std::vector<BoundPod>& non_tas_pods,
                  const std::map<std::string, std::string>& flavor_labels);

  const std::vector<std::string>& levels() const { return levels_; }
  int level_count() const { return static_cast<int>(levels_.size()); }
  // The level index of a label key, -1 when the Topology has no such level.
  int level_of(const std::string& key) const;
  bool lowest_is_node() const { return lowest_is_node_; }

  std::size_t domain_count() const { return values_.size(); }
  const std::vector<std::string>& values(int d) const { return values_[static_cast<std::size_t>(d)]; }
  const std::string& id(int d) const { return ids_[static_cast<std::size_t>(d)]; }
  int parent(int d) const { return parents_[static_cast<std::size_t>(d)]; }
  const std::vector<int>& children(int d) const { return children_[static_cast<std::size_t>(d)]; }
  const std::vector<int>& level_domains(int level) const {
    return per_level_[static_cast<std::size_t>(level)];
  }
  const std::vector<int>& roots() const { return roots_; }
  const std::vector<Leaf>& leaves() const { return leaves_; }
  const NodeSpec& node(const Leaf& leaf) const { return nodes_[leaf.node]; }

 private:
  std::vector<std::string> levels_;
  bool lowest_is_node_ = false;
  std::vector<std::vector<std::string>> values_;  // per domain: level values
  std::vector<std::string> ids_;
  std::vector<int> parents_;
  std::vector<std::vector<int>> children_;
  std::vector<std::vector<int>> per_level_;
  std::vector<int> roots_;
  std::vector<Leaf> leaves_;
  std::vector<NodeSpec> nodes_;  // the nodes kept
};

}  // namespace hypertopo::scheduler
