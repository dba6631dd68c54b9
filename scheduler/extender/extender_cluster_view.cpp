// The extender's cluster view: HyperNodes, Nodes and bound Pods as the watches deliver them, the
// TopologyIndex built from them (with the gang plans' reservations), and the per-node fit test.
#include <algorithm>
#include <limits>
#include <tuple>

#include "scheduler/extender/extender_service.h"
#include "scheduler/extender/object_fields.h"
#include "scheduler/input/cluster_loader.h"

namespace hypertopo::scheduler {

using nlohmann::json;
using namespace fields;

namespace {

bool same_for_scheduling(const NodeSpec& a, const NodeSpec& b) {
  auto taint_key = [](const NodeTaint& t) { return std::tie(t.key, t.value, t.effect); };
  return a.ready == b.ready && a.unschedulable == b.unschedulable && a.labels == b.labels &&
         a.allocatable == b.allocatable &&
         std::equal(a.taints.begin(), a.taints.end(), b.taints.begin(), b.taints.end(),
                    [&](const NodeTaint& x, const NodeTaint& y) { return taint_key(x) == taint_key(y); });
}

}  // namespace

ExtenderService::ExtenderService(ExtenderOptions options) : options_(std::move(options)) {
  if (!options_.clock) options_.clock = std::make_shared<timing::SystemClock>();
}

// ---- cluster view ----------------------------------------------------------------------------

void ExtenderService::replace_hypernodes(std::vector<HyperNodeSpec> hypernodes) {
  std::map<std::string, HyperNodeSpec> parsed;
  for (auto& h : hypernodes) parsed[h.name] = std::move(h);
  std::lock_guard lock(mu_);
  hypernodes_ = std::move(parsed);
  dirty_ = true;
}

std::expected<void, Error> ExtenderService::set_hypernodes(const std::vector<json>& hypernodes) {
  auto parsed = parse_hypernode_items(hypernodes);
  if (!parsed) return std::unexpected(parsed.error().context("HyperNode list"));
  replace_hypernodes(std::move(*parsed));
  return {};
}

std::expected<void, Error> ExtenderService::set_hypernode_pages(std::span<const std::string> pages) {
  auto parsed = parse_hypernode_pages(pages);
  if (!parsed) return std::unexpected(parsed.error().context("HyperNode list"));
  replace_hypernodes(std::move(*parsed));
  return {};
}

std::expected<void, Error> ExtenderService::upsert_hypernode(const json& hypernode) {
  auto parsed = parse_hypernode_items(std::span(&hypernode, 1));
  if (!parsed)
    return std::unexpected(
        parsed.error().context("HyperNode " + str_at(member(hypernode, "metadata"), "name")));
  std::lock_guard lock(mu_);
  for (auto& h : *parsed) hypernodes_[h.name] = std::move(h);
  dirty_ = true;
  return {};
}

void ExtenderService::remove_hypernode(const std::string& name) {
  std::lock_guard lock(mu_);
  hypernodes_.erase(name);
  dirty_ = true;
}

void ExtenderService::replace_nodes(std::vector<NodeSpec> nodes) {
  std::lock_guard lock(mu_);
  nodes_.clear();
  for (auto& n : nodes) nodes_[n.name] = std::move(n);
  dirty_ = true;
}

std::expected<void, Error> ExtenderService::set_nodes(const std::vector<json>& nodes) {
  auto parsed = parse_node_items(nodes);
  if (!parsed) return std::unexpected(parsed.error().context("Node list"));
  replace_nodes(std::move(*parsed));
  return {};
}

std::expected<void, Error> ExtenderService::set_node_pages(std::span<const std::string> pages) {
  auto parsed = parse_node_pages(pages);
  if (!parsed) return std::unexpected(parsed.error().context("Node list"));
  replace_nodes(std::move(*parsed));
  return {};
}

std::expected<void, Error> ExtenderService::upsert_node(const json& node) {
  auto parsed = parse_node_items(std::span(&node, 1));
  if (!parsed) return std::unexpected(parsed.error());
  std::lock_guard lock(mu_);
  for (auto& n : *parsed) {
    // Heartbeat-only status updates change nothing the index holds: no rebuild for those.
    auto it = nodes_.find(n.name);
    if (it != nodes_.end() && same_for_scheduling(it->second, n)) continue;
    nodes_[n.name] = std::move(n);
    dirty_ = true;
  }
  return {};
}

void ExtenderService::remove_node(const std::string& name) {
  std::lock_guard lock(mu_);
  nodes_.erase(name);
  dirty_ = true;
}

void ExtenderService::replace_pods(std::vector<ListedPod> pods) {
  std::map<std::string, PodInfo> parsed;
  for (auto& pod : pods) {
    std::string id = pod.uid.empty() ? pod.bound.name : pod.uid;
    parsed[std::move(id)] = PodInfo{std::move(pod.uid), std::move(pod.name), std::move(pod.ns),
                                    std::move(pod.bound.node), std::move(pod.bound.requests)};
  }
  std::lock_guard lock(mu_);
  pods_ = std::move(parsed);
  for (const auto& [uid, p] : pods_) record_binding(p);
  dirty_ = true;
}

std::expected<void, Error> ExtenderService::set_pods(const std::vector<json>& pods) {
  auto parsed = parse_pod_items(pods);
  if (!parsed) return std::unexpected(parsed.error());
  replace_pods(std::move(*parsed));
  return {};
}

std::expected<void, Error> ExtenderService::set_pod_pages(std::span<const std::string> pages) {
  auto parsed = parse_pod_pages(pages);
  if (!parsed) return std::unexpected(parsed.error());
  replace_pods(std::move(*parsed));
  return {};
}

std::expected<void, Error> ExtenderService::upsert_pod(const json& pod) {
  auto parsed = parse_pod_items(std::span(&pod, 1));
  if (!parsed) return std::unexpected(parsed.error());
  const json& meta = member(pod, "metadata");
  const std::string uid = str_at(meta, "uid");
  const std::string id = uid.empty() ? pod_label(pod) : uid;
  std::lock_guard lock(mu_);
  if (parsed->empty()) {  // pending or finished: uses nothing
    if (pods_.erase(id) > 0) dirty_ = true;
    return {};
  }
  ListedPod& listed = parsed->front();
  PodInfo info{std::move(listed.uid), std::move(listed.name), std::move(listed.ns),
               std::move(listed.bound.node), std::move(listed.bound.requests)};
  record_binding(info);
  pods_[id] = std::move(info);
  dirty_ = true;
  return {};
}

void ExtenderService::remove_pod(const json& pod) {
  const json& meta = member(pod, "metadata");
  const std::string uid = str_at(meta, "uid");
  std::lock_guard lock(mu_);
  pods_.erase(uid.empty() ? pod_label(pod) : uid);
  for (auto& [key, plan] : plans_) {
    for (auto& slot : plan.slots) {
      if (!uid.empty() && slot.pod_uid == uid && !slot.bound) slot.pod_uid.clear();  // the slot is free again
    }
  }
  dirty_ = true;
}

namespace {
// sigs.k8s.io/scheduler-plugins apis/scheduling/v1alpha1 PodGroupSpec.MinMember (int32).
std::optional<std::int32_t> min_member(const json& pod_group) {
  const json& v = member(member(pod_group, "spec"), "minMember");
  if (!v.is_number_integer()) return std::nullopt;
  const auto n = v.get<std::int64_t>();
  if (n < 1 || n > std::numeric_limits<std::int32_t>::max()) return std::nullopt;
  return static_cast<std::int32_t>(n);
}
}  // namespace

void ExtenderService::set_pod_groups(const std::vector<json>& pod_groups) {
  std::map<std::string, std::int32_t> parsed;
  for (const auto& pg : pod_groups) {
    if (auto n = min_member(pg)) parsed[pod_label(pg)] = *n;
  }
  std::lock_guard lock(mu_);
  pod_group_min_member_ = std::move(parsed);
}

void ExtenderService::upsert_pod_group(const json& pod_group) {
  std::lock_guard lock(mu_);
  if (auto n = min_member(pod_group)) {
    pod_group_min_member_[pod_label(pod_group)] = *n;
  } else {
    pod_group_min_member_.erase(pod_label(pod_group));  // without a usable size it sizes nothing
  }
}

void ExtenderService::remove_pod_group(const json& pod_group) {
  std::lock_guard lock(mu_);
  pod_group_min_member_.erase(pod_label(pod_group));
}

// A gang pod that bound: its slot stops being a reservation (the pod itself now counts as used).
void ExtenderService::record_binding(const PodInfo& pod) {
  if (pod.uid.empty() || pod.node.empty()) return;
  for (auto& [key, plan] : plans_) {
    for (auto& slot : plan.slots) {
      if (slot.pod_uid == pod.uid && !slot.bound) {
        slot.bound = true;
        slot.node = pod.node;
        plan.last_activity = options_.clock->now();
        save_state();
        return;
      }
    }
  }
}

std::size_t ExtenderService::node_count() const {
  std::lock_guard lock(mu_);
  return nodes_.size();
}

ExtenderCounters ExtenderService::counters() const {
  std::lock_guard lock(mu_);
  return counters_;
}

// ---- index -------------------------------------------------------------------------------------

void ExtenderService::reserve(const GangPlan& plan, int sign) {
  if (!index_) return;
  for (const auto& slot : plan.slots) {
    if (slot.bound) continue;
    const int id = index_->find_node(slot.node);
    if (id >= 0) (void)index_->add_pods(id, plan.request.per_pod, sign);
  }
}

std::expected<void, Error> ExtenderService::ensure_index() {
  if (!dirty_ && index_) return {};
  std::vector<HyperNodeSpec> hns;
  hns.reserve(hypernodes_.size());
  for (const auto& [name, h] : hypernodes_) hns.push_back(h);
  std::vector<NodeSpec> nodes;
  nodes.reserve(nodes_.size());
  for (const auto& [name, n] : nodes_) nodes.push_back(n);
  std::vector<BoundPod> bound;
  for (const auto& [uid, p] : pods_) {
    if (nodes_.contains(p.node)) bound.push_back({p.name, p.node, p.requests});
  }
  auto index = TopologyIndex::from_hypernodes(hns, std::move(nodes), bound);
  if (!index) return std::unexpected(index.error().context("building the topology index"));
  index_ = std::move(*index);
  for (const auto& [key, plan] : plans_) reserve(plan, +1);
  dirty_ = false;
  ++counters_.index_rebuilds;
  return {};
}

bool ExtenderService::node_usable(const std::string& name) const {
  auto it = nodes_.find(name);
  return it != nodes_.end() && it->second.ready && !it->second.unschedulable;
}

ExtenderService::ResolvedRequest ExtenderService::resolve(const ResourceAmounts& request) const {
  ResolvedRequest out;
  for (const auto& [name, amount] : request) {
    if (amount <= 0) continue;
    const int r = index_->resource_id(name);
    if (r < 0) {
      out.unknown = true;  // no node has any of it
      continue;
    }
    out.amounts.emplace_back(r, amount);
  }
  if (!request.contains("pods")) out.pods = index_->resource_id("pods");
  return out;
}

bool ExtenderService::fits(int node, const ResolvedRequest& request, const PodSetRequest* ps) const {
  if (request.unknown) return false;
  const IndexNode& n = index_->node(node);
  if (!n.spec.ready || n.spec.unschedulable) return false;
  for (const auto& taint : n.spec.taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    const bool tolerated = ps && std::any_of(ps->tolerations.begin(), ps->tolerations.end(),
                                             [&](const Toleration& t) { return t.tolerates(taint); });
    if (!tolerated) return false;
  }
  if (ps) {
    for (const auto& [k, v] : ps->node_selector) {
      auto it = n.spec.labels.find(k);
      if (it == n.spec.labels.end() || it->second != v) return false;
    }
  }
  for (const auto& [r, amount] : request.amounts) {
    if (index_->node_allocatable(node, r) - index_->node_used(node, r) < amount) return false;
  }
  if (request.pods >= 0 &&
      index_->node_allocatable(node, request.pods) - index_->node_used(node, request.pods) < 1)
    return false;
  return true;
}

}  // namespace hypertopo::scheduler
