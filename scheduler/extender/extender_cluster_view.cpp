// The extender's cluster view: HyperNodes, Nodes and bound Pods as the watches deliver them, the
// TopologyIndex built from them (with the gang plans' reservations), and the per-node fit test.
#include <algorithm>
#include <limits>
#include <tuple>

#include "scheduler/extender/extender_service.h"
#include "scheduler/extender/object_fields.h"
#include "scheduler/input/cluster_loader.h"
#include "scheduler/input/pod_request.h"

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
  if (!options_.state_file.empty()) saver_ = std::jthread([this](std::stop_token stop) { run_saver(stop); });
}

ExtenderService::~ExtenderService() {
  if (saver_.joinable()) {
    saver_.request_stop();
    saver_.join();
  }
  flush_state();
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
  ++counters_.watch_events;
  for (auto& h : *parsed) hypernodes_[h.name] = std::move(h);
  dirty_ = true;
  return {};
}

void ExtenderService::remove_hypernode(const std::string& name) {
  std::lock_guard lock(mu_);
  ++counters_.watch_events;
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
  ++counters_.watch_events;
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
  ++counters_.watch_events;
  nodes_.erase(name);
  dirty_ = true;
}

ExtenderService::PodInfo ExtenderService::pod_info(ListedPod&& pod) const {
  PodInfo info{std::move(pod.uid), std::move(pod.name), std::move(pod.ns), std::move(pod.bound.node),
               std::move(pod.bound.requests)};
  info.priority = pod.priority;
  info.terminating = pod.terminating;
  info.start_time = std::move(pod.start_time);
  info.labels = std::move(pod.labels);
  if (pod.gang_marks.empty()) return info;
  json marks(pod.gang_marks);
  json doc{
      {"metadata", {{"namespace", info.ns}, {"name", info.name}, {"labels", marks}, {"annotations", marks}}}};
  // The spec's gang references travel as marks named by their field path (cluster_loader.h).
  for (const char* path :
       {kSchedulingGroupMark, kWorkloadNameMark, kWorkloadPodGroupMark, kWorkloadReplicaKeyMark}) {
    auto it = pod.gang_marks.find(path);
    if (it == pod.gang_marks.end()) continue;
    const std::string_view p(path);
    const auto dot = p.rfind('.');
    const std::string field(p.substr(dot + 1));
    const std::string parent(p.substr(p.find('.') + 1, dot - p.find('.') - 1));
    doc["spec"][parent][field] = it->second;
  }
  identify(doc, info);
  return info;
}

void ExtenderService::identify(const json& pod, PodInfo& info) const {
  if (auto key = gang_key(pod); key && *key) info.gang = **key;
  if (info.gang.empty()) return;
  if (auto index = pod_index(pod); index && *index) info.index = **index;
}

void ExtenderService::replace_pods(std::vector<ListedPod> pods) {
  std::lock_guard lock(mu_);
  std::map<std::string, PodInfo> parsed;
  for (auto& pod : pods) {
    std::string id = pod.uid.empty() ? pod.bound.name : pod.uid;
    parsed[std::move(id)] = pod_info(std::move(pod));
  }
  pods_ = std::move(parsed);
  // A relist (start-up after a state file, a watch gap): slots whose pod is no longer bound in the
  // cluster were released while unseen.
  std::vector<std::string> gone;
  for (const auto& [key, plan] : plans_) {
    for (const auto& slot : plan.slots) {
      if (slot.state == SlotState::kBound && !pods_.contains(slot.pod_uid)) gone.push_back(slot.pod_uid);
    }
  }
  for (const auto& uid : gone) release_slot_of(uid, false);
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

// A pod's usage on the index, in place: kube-scheduler's cache does the same (AddPod/RemovePod).
// Without a built index (or with one already due for a rebuild) the rebuild counts pods_ anyway.
void ExtenderService::count_pod(const PodInfo& pod, int sign) {
  if (!index_ || dirty_ || pod.node.empty()) return;
  const int id = index_->find_node(pod.node);
  if (id < 0) return;  // a node outside the view: the index holds nothing of it
  (void)index_->add_pods(id, pod.requests, sign);
  ++counters_.index_pod_updates;
}

std::expected<void, Error> ExtenderService::upsert_pod(const json& pod) {
  auto parsed = parse_pod_items(std::span(&pod, 1));
  if (!parsed) return std::unexpected(parsed.error());
  const json& meta = member(pod, "metadata");
  const std::string uid = str_at(meta, "uid");
  const std::string id = uid.empty() ? pod_label(pod) : uid;
  const std::string phase = str_at(member(pod, "status"), "phase");
  // A pod with a deletionTimestamp is on its way out: its controller may already have made the
  // pod that replaces it (Job's podReplacementPolicy TerminatingOrFailed), which takes the slot.
  const bool terminating = meta.contains("deletionTimestamp") && !meta["deletionTimestamp"].is_null();
  std::lock_guard lock(mu_);
  ++counters_.watch_events;
  auto old = pods_.find(id);
  if (parsed->empty()) {  // pending or finished: uses nothing
    if (old != pods_.end()) {
      count_pod(old->second, -1);
      pods_.erase(old);
    }
    if (phase == "Succeeded" || phase == "Failed") release_slot_of(uid, phase == "Succeeded");
    return {};
  }
  PodInfo info = pod_info(std::move(parsed->front()));
  identify(pod, info);  // the whole pod: env RANK and every rank key
  if (old != pods_.end()) count_pod(old->second, -1);
  count_pod(info, +1);
  if (terminating) {
    release_slot_of(uid, false);
  } else {
    record_binding(info);
  }
  pods_[id] = std::move(info);
  return {};
}

void ExtenderService::remove_pod(const json& pod) {
  const json& meta = member(pod, "metadata");
  const std::string uid = str_at(meta, "uid");
  std::lock_guard lock(mu_);
  ++counters_.watch_events;
  if (auto it = pods_.find(uid.empty() ? pod_label(pod) : uid); it != pods_.end()) {
    count_pod(it->second, -1);
    pods_.erase(it);
  }
  release_slot_of(uid, false);
}

namespace {

std::optional<std::int32_t> positive_int32(const json& v) {
  if (!v.is_number_integer()) return std::nullopt;
  const auto n = v.get<std::int64_t>();
  if (n < 1 || n > std::numeric_limits<std::int32_t>::max()) return std::nullopt;
  return static_cast<std::int32_t>(n);
}

// The gang sizes one object gives, by gang key.
//  - sigs.k8s.io/scheduler-plugins apis/scheduling/v1alpha1 PodGroupSpec.MinMember (int32), and
//    Volcano's pkg/apis/scheduling/v1beta1 PodGroupSpec.MinMember (the same name and type);
//  - k8s.io/api scheduling/v1alpha2 PodGroup spec.schedulingPolicy.gang.minCount;
//  - k8s.io/api scheduling/v1alpha1 Workload spec.podGroups[].policy.gang.minCount, one gang per
//    pod group (pods add spec.workloadRef.podGroupReplicaKey to split one into replicas).
std::vector<std::pair<std::string, std::int32_t>> group_sizes_of(const json& object, PodGroupKind kind) {
  std::vector<std::pair<std::string, std::int32_t>> out;
  const json& spec = member(object, "spec");
  switch (kind) {
    case PodGroupKind::kCoscheduling:
    case PodGroupKind::kVolcano:
    case PodGroupKind::kKai:
      if (auto n =
              positive_int32(spec.is_object() && spec.contains("minMember") ? spec["minMember"] : json()))
        out.emplace_back(pod_label(object), *n);
      break;
    case PodGroupKind::kUpstream:
      if (auto n = positive_int32(member(member(spec, "schedulingPolicy"), "gang").value("minCount", json())))
        out.emplace_back(pod_label(object), *n);
      break;
    case PodGroupKind::kWorkload:
      if (spec.contains("podGroups") && spec["podGroups"].is_array()) {
        for (const auto& g : spec["podGroups"]) {
          const std::string name = str_at(g, "name");
          auto n = positive_int32(member(member(g, "policy"), "gang").value("minCount", json()));
          if (!name.empty() && n) out.emplace_back(pod_label(object) + "/" + name, *n);
        }
      }
      break;
  }
  return out;
}

// A PodGroup's topology as the pod annotations that state it (empty: none).
std::map<std::string, std::string> group_topology_of(const json& object, PodGroupKind kind) {
  std::map<std::string, std::string> out;
  const json& spec = member(object, "spec");
  switch (kind) {
    case PodGroupKind::kVolcano: {
      // Volcano's networkTopology: mode (hard by default), highestTierAllowed or highestTierName.
      const json& nt = member(spec, "networkTopology");
      if (nt.empty()) break;
      out["volcano.sh/network-topology-mode"] = nt.value("mode", std::string("hard"));
      if (nt.contains("highestTierAllowed") && nt["highestTierAllowed"].is_number_integer())
        out["volcano.sh/network-topology-highest-tier"] =
            std::to_string(nt["highestTierAllowed"].get<std::int64_t>());
      if (nt.contains("highestTierName") && nt["highestTierName"].is_string())
        out["hypertopo.io/highest-tier-name"] = nt["highestTierName"];
      break;
    }
    case PodGroupKind::kKai: {
      // KAI-Scheduler pkg/apis/scheduling/v2alpha2 TopologyConstraint: the same keys its pods'
      // kai.scheduler/topology-* annotations carry (docs/topology in KAI-Scheduler).
      const json& tc = member(spec, "topologyConstraint");
      if (const std::string required = str_at(tc, "requiredTopologyLevel"); !required.empty())
        out["kai.scheduler/topology-required-placement"] = required;
      if (const std::string preferred = str_at(tc, "preferredTopologyLevel"); !preferred.empty())
        out["kai.scheduler/topology-preferred-placement"] = preferred;
      if (!out.empty()) {
        const std::string topology = str_at(tc, "topology");
        out["kai.scheduler/topology"] = topology.empty() ? std::string("default") : topology;
      }
      break;
    }
    case PodGroupKind::kUpstream: {
      // KEP-5732 (scheduling.k8s.io PodGroup spec.schedulingConstraints.topology, one entry): every
      // pod on nodes with the same value of label `key`: a required level named by that label.
      const json& topology = member(member(spec, "schedulingConstraints"), "topology");
      if (topology.is_array() && !topology.empty()) {
        if (const std::string key = str_at(topology.front(), "key"); !key.empty()) {
          out["hypertopo.io/network-topology-mode"] = "hard";
          out["hypertopo.io/highest-tier-name"] = key;
        }
      }
      break;
    }
    default:
      break;
  }
  return out;
}

}  // namespace

void ExtenderService::set_pod_groups(const std::vector<json>& pod_groups, PodGroupKind kind) {
  std::map<std::string, std::int32_t> parsed;
  for (const auto& pg : pod_groups) {
    for (auto& [key, n] : group_sizes_of(pg, kind)) parsed[key] = n;
  }
  std::lock_guard lock(mu_);
  // The kind's old groups go; what the list holds comes back.
  for (const auto& [key, n] : group_sizes_[kind]) group_topology_.erase(key);
  group_sizes_[kind] = std::move(parsed);
  for (const auto& pg : pod_groups) {
    if (auto topology = group_topology_of(pg, kind); !topology.empty())
      group_topology_[pod_label(pg)] = std::move(topology);
  }
}

void ExtenderService::upsert_pod_group(const json& pod_group, PodGroupKind kind) {
  std::lock_guard lock(mu_);
  ++counters_.watch_events;
  forget_pod_group(pod_group, kind);
  // Without a usable size it sizes nothing.
  for (auto& [key, n] : group_sizes_of(pod_group, kind)) group_sizes_[kind][key] = n;
  if (auto topology = group_topology_of(pod_group, kind); !topology.empty())
    group_topology_[pod_label(pod_group)] = std::move(topology);
}

void ExtenderService::remove_pod_group(const json& pod_group, PodGroupKind kind) {
  std::lock_guard lock(mu_);
  ++counters_.watch_events;
  forget_pod_group(pod_group, kind);
}

void ExtenderService::forget_pod_group(const json& pod_group, PodGroupKind kind) {
  auto& sizes = group_sizes_[kind];
  const std::string key = pod_label(pod_group);
  sizes.erase(key);
  if (kind == PodGroupKind::kWorkload) {  // its pod groups: namespace/workload/<group>
    for (auto it = sizes.lower_bound(key + "/"); it != sizes.end() && it->first.starts_with(key + "/");)
      it = sizes.erase(it);
  }
  group_topology_.erase(key);
}

// A gang pod seen bound: its slot goes kBound and stops being a reservation (the pod itself counts).
void ExtenderService::record_binding(const PodInfo& pod) {
  if (pod.uid.empty() || pod.node.empty()) return;
  // A pod of a planned gang that another scheduler replica bound (or that bound before this
  // replica's plan knew it) takes its rank's free slot: the slot's reservation goes, the pod counts.
  PlanSlot* by_rank = nullptr;
  GangPlan* by_rank_plan = nullptr;
  if (!pod.gang.empty() && pod.index) {
    if (auto it = plans_.find(pod.gang); it != plans_.end()) {
      const std::int32_t rank = pod.index->rank_in(it->second.request.count);
      for (auto& slot : it->second.slots) {
        if (slot.rank == rank && slot.state == SlotState::kPlanned) {
          by_rank = &slot;
          by_rank_plan = &it->second;
        }
      }
    }
  }
  for (auto& [key, plan] : plans_) {
    for (auto& slot : plan.slots) {
      if (slot.pod_uid != pod.uid || slot.state != SlotState::kReserved) continue;
      by_rank = nullptr;
      set_reservation(plan, slot, -1);
      scheduler::bind(slot, pod.uid, pod.node);
      if (index_ && !dirty_) {
        if (const int n = index_->find_node(pod.node); n >= 0)
          slot.domain_path = index_->domain_path(index_->node(n).domain);
      }
      plan.last_activity = options_.clock->now();
      mark_changed();
      return;
    }
  }
  if (!by_rank) return;
  for (const auto& slot : by_rank_plan->slots) {
    if (slot.pod_uid == pod.uid) return;  // already bound (a status update)
  }
  {
    set_reservation(*by_rank_plan, *by_rank, -1);
    scheduler::bind(*by_rank, pod.uid, pod.node);
    by_rank->claim = SlotClaim::kPodIndex;
    if (index_ && !dirty_) {
      if (const int n = index_->find_node(pod.node); n >= 0)
        by_rank->domain_path = index_->domain_path(index_->node(n).domain);
    }
    by_rank_plan->last_activity = options_.clock->now();
    mark_changed();
  }
}

// The pod `uid` went away (deleted, failed, evicted, terminating) or succeeded: its slot is free
// for the pod that replaces it, on the same node (gang_slot.h: release, complete).
void ExtenderService::release_slot_of(const std::string& uid, bool succeeded) {
  if (uid.empty()) return;
  for (auto it = plans_.begin(); it != plans_.end(); ++it) {
    GangPlan& plan = it->second;
    for (auto& slot : plan.slots) {
      if (slot.pod_uid != uid) continue;
      if (succeeded && scheduler::complete(slot)) {
        mark_changed();
        return;
      }
      const bool was_bound = slot.state == SlotState::kBound;
      if (!scheduler::release(slot)) return;
      if (was_bound) {
        set_reservation(plan, slot, +1);
        ++counters_.slots_released;
      }
      if (was_bound && plan.abandoned()) {
        // Every pod of the gang went away (the whole gang restarts, or it was deleted): nothing is
        // left to keep together, and its reservations would hold a whole domain for nobody. The
        // next pod plans the gang afresh.
        reserve(plan, -1);
        plans_.erase(it);
      }
      mark_changed();
      return;
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

void ExtenderService::set_reservation(const GangPlan& plan, const PlanSlot& slot, int sign) {
  if (!index_ || dirty_) return;  // the rebuild reserves every slot that holds a reservation
  const int id = index_->find_node(slot.node);
  if (id >= 0) (void)index_->add_pods(id, plan.request.per_pod, sign);
}

void ExtenderService::reserve(const GangPlan& plan, int sign) {
  if (!index_ || dirty_) return;
  for (const auto& slot : plan.slots) {
    if (slot.holds_reservation()) set_reservation(plan, slot, sign);
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
  auto index = TopologyIndex::from_hypernodes(hns, std::move(nodes), {});
  if (!index) return std::unexpected(index.error().context("building the topology index"));
  // The pods' usage straight from the view, as pod events apply it: no copy of every pod's name,
  // node and requests (100,000 pods at a large cluster) for one rebuild.
  for (const auto& [uid, p] : pods_) {
    if (const int id = p.node.empty() ? -1 : index->find_node(p.node); id >= 0)
      (void)index->add_pods(id, p.requests, 1);
  }
  index_ = std::move(*index);
  dirty_ = false;
  for (const auto& [key, plan] : plans_) reserve(plan, +1);
  ++counters_.index_rebuilds;
  return {};
}

// The slot's node can still take the gang's pod: it is in the view, and kube-scheduler's own node
// filters (NodeUnschedulable, NodeAffinity and nodeSelector, TaintToleration, readiness) pass it.
bool ExtenderService::node_usable_for(const GangPlan& plan, const std::string& name) const {
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return false;
  const PodSetRequest& r = plan.request;
  return it->second.ready && !it->second.unschedulable &&
         check_node_constraints(it->second, r.node_selector, r.affinity, r.tolerations).passed();
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
  // Most pods name no node and most nodes carry no taint: then there is nothing more to check (a
  // filter asks this of every one of 6,000 nodes).
  const bool constrained =
      ps && (!ps->node_selector.empty() || ps->affinity.has_required || !n.spec.taints.empty());
  if (constrained &&
      !check_node_constraints(n.spec, ps->node_selector, ps->affinity, ps->tolerations).passed())
    return false;
  if (!ps) {
    for (const auto& taint : n.spec.taints) {
      if (taint.effect == "NoSchedule" || taint.effect == "NoExecute") return false;
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
