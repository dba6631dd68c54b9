#include "scheduler/placement/kueue_snapshot.h"

#include <algorithm>
#include <unordered_map>

namespace hypertopo::scheduler {

std::string kueue_domain_id(const std::vector<std::string>& values) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    out += values[i];
  }
  return out;
}

int KueueDomainTree::level_of(const std::string& key) const {
  auto it = std::find(levels_.begin(), levels_.end(), key);
  return it == levels_.end() ? -1 : static_cast<int>(it - levels_.begin());
}

KueueDomainTree::KueueDomainTree(std::vector<std::string> levels, const std::vector<NodeSpec>& nodes,
                                 const std::vector<BoundPod>& non_tas_pods,
                                 const std::map<std::string, std::string>& flavor_labels)
    : levels_(std::move(levels)) {
  lowest_is_node_ = !levels_.empty() && levels_.back() == kHostnameLabel;
  per_level_.resize(levels_.size());
  if (levels_.empty()) return;
  nodes_.reserve(nodes.size());
  for (const auto& n : nodes) {
    if (!n.ready || n.unschedulable) continue;
    bool keep = true;
    for (const auto& [k, v] : flavor_labels) {
      auto it = n.labels.find(k);
      if (it == n.labels.end() || it->second != v) keep = false;
    }
    for (const auto& level : levels_) {
      if (!n.labels.contains(level)) keep = false;
    }
    if (keep) nodes_.push_back(n);
  }
  std::unordered_map<std::string, int> by_id;
  std::unordered_map<std::string, int> leaf_of_node;
  auto add_domain = [&](std::vector<std::string> values, std::string id) {
    int d = static_cast<int>(values_.size());
    per_level_[values.size() - 1].push_back(d);
    values_.push_back(std::move(values));
    ids_.push_back(id);
    parents_.push_back(-1);
    children_.emplace_back();
    by_id.emplace(std::move(id), d);
    return d;
  };
  for (std::size_t n = 0; n < nodes_.size(); ++n) {
    const NodeSpec& node = nodes_[n];
    std::vector<std::string> values;
    for (const auto& level : levels_) values.push_back(node.labels.at(level));
    std::string id = lowest_is_node_ ? values.back() : kueue_domain_id(values);
    auto found = by_id.find(id);
    int leaf_index;
    if (found == by_id.end()) {
      int d = add_domain(values, id);
      leaf_index = static_cast<int>(leaves_.size());
      leaves_.push_back(Leaf{d, {}, n});
    } else {
      leaf_index = -1;
      for (std::size_t l = 0; l < leaves_.size(); ++l) {
        if (leaves_[l].domain == found->second) leaf_index = static_cast<int>(l);
      }
    }
    for (const auto& [r, v] : node.allocatable) leaves_[static_cast<std::size_t>(leaf_index)].free[r] += v;
    leaf_of_node[node.name] = leaf_index;
  }
  for (const auto& pod : non_tas_pods) {
    auto it = leaf_of_node.find(pod.node);
    if (it == leaf_of_node.end()) continue;
    auto& free = leaves_[static_cast<std::size_t>(it->second)].free;
    for (const auto& [r, v] : pod.requests) free[r] -= v;
    free["pods"] -= 1;
  }
  // Connect parents, creating the upper levels on the way.
  const std::size_t leaf_count = values_.size();
  for (std::size_t leaf = 0; leaf < leaf_count; ++leaf) {
    int child = static_cast<int>(leaf);
    while (values_[static_cast<std::size_t>(child)].size() > 1) {
      std::vector<std::string> parent_values(values_[static_cast<std::size_t>(child)].begin(),
                                             values_[static_cast<std::size_t>(child)].end() - 1);
      std::string parent_id = kueue_domain_id(parent_values);
      auto it = by_id.find(parent_id);
      bool created = false;
      int parent;
      if (it == by_id.end()) {
        parent = add_domain(std::move(parent_values), parent_id);
        created = true;
      } else {
        parent = it->second;
      }
      parents_[static_cast<std::size_t>(child)] = parent;
      children_[static_cast<std::size_t>(parent)].push_back(child);
      if (!created) break;
      child = parent;
    }
    if (values_[static_cast<std::size_t>(child)].size() == 1 &&
        parents_[static_cast<std::size_t>(child)] < 0 &&
        std::find(roots_.begin(), roots_.end(), child) == roots_.end()) {
      roots_.push_back(child);
    }
  }
}

}  // namespace hypertopo::scheduler
