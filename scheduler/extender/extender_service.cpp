#include "scheduler/extender/extender_service.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "scheduler/input/cluster_loader.h"
#include "scheduler/input/job_loader.h"
#include "scheduler/placement/placement_engine.h"

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;

std::string str_at(const json& obj, const char* key) {
  if (!obj.is_object()) return {};
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

const json& member(const json& obj, const char* key) {
  static const json empty = json::object();
  if (!obj.is_object()) return empty;
  auto it = obj.find(key);
  return it == obj.end() ? empty : *it;
}

// Go's encoding/json matches field names case-insensitively; kube-scheduler sends the json tags
// ("pod", "nodes", "nodenames"), older clients the Go names. Accept both.
const json* field(const json& obj, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    auto it = obj.find(n);
    if (it != obj.end() && !it->is_null()) return &*it;
  }
  return nullptr;
}

std::string join_path(const std::vector<std::string>& path) {
  std::string out;
  for (const auto& p : path) out += (out.empty() ? "" : "/") + p;
  return out;
}

std::string pod_label(const json& pod) {
  const json& meta = member(pod, "metadata");
  return str_at(meta, "namespace") + "/" + str_at(meta, "name");
}

bool same_for_scheduling(const NodeSpec& a, const NodeSpec& b) {
  auto taint_key = [](const NodeTaint& t) { return std::tie(t.key, t.value, t.effect); };
  return a.ready == b.ready && a.unschedulable == b.unschedulable && a.labels == b.labels &&
         a.allocatable == b.allocatable &&
         std::equal(a.taints.begin(), a.taints.end(), b.taints.begin(), b.taints.end(),
                    [&](const NodeTaint& x, const NodeTaint& y) { return taint_key(x) == taint_key(y); });
}

constexpr const char* kGangSize = "hypertopo.io/gang-size";
constexpr const char* kKueueGroupCount = "kueue.x-k8s.io/pod-group-total-count";

}  // namespace

ExtenderService::ExtenderService(ExtenderOptions options) : options_(std::move(options)) {
  if (!options_.clock) options_.clock = std::make_shared<k8s::SystemClock>();
}

// ---- cluster view ----------------------------------------------------------------------------

std::expected<void, Error> ExtenderService::set_hypernodes(const std::vector<json>& hypernodes) {
  std::map<std::string, HyperNodeSpec> parsed;
  if (!hypernodes.empty()) {
    auto topo = parse_topology(json{{"items", hypernodes}});
    if (!topo) return std::unexpected(topo.error().context("HyperNode list"));
    for (auto& h : topo->hypernodes) parsed[h.name] = std::move(h);
  }
  std::lock_guard lock(mu_);
  hypernodes_ = std::move(parsed);
  dirty_ = true;
  return {};
}

std::expected<void, Error> ExtenderService::upsert_hypernode(const json& hypernode) {
  auto topo = parse_topology(json{{"items", json::array({hypernode})}});
  if (!topo)
    return std::unexpected(
        topo.error().context("HyperNode " + str_at(member(hypernode, "metadata"), "name")));
  std::lock_guard lock(mu_);
  for (auto& h : topo->hypernodes) hypernodes_[h.name] = std::move(h);
  dirty_ = true;
  return {};
}

void ExtenderService::remove_hypernode(const std::string& name) {
  std::lock_guard lock(mu_);
  hypernodes_.erase(name);
  dirty_ = true;
}

std::expected<void, Error> ExtenderService::set_nodes(const std::vector<json>& nodes) {
  auto parsed = parse_nodes(json{{"items", nodes}});
  if (!parsed) return std::unexpected(parsed.error().context("Node list"));
  std::lock_guard lock(mu_);
  nodes_.clear();
  for (auto& n : *parsed) nodes_[n.name] = std::move(n);
  dirty_ = true;
  return {};
}

std::expected<void, Error> ExtenderService::upsert_node(const json& node) {
  auto parsed = parse_nodes(json{{"items", json::array({node})}});
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

namespace {
std::expected<std::optional<ResourceAmounts>, Error> bound_requests(const json& pod) {
  auto bound = parse_pods(json{{"items", json::array({pod})}});
  if (!bound) return std::unexpected(bound.error());
  if (bound->empty()) return std::optional<ResourceAmounts>();
  return std::optional<ResourceAmounts>(bound->front().requests);
}
}  // namespace

std::expected<void, Error> ExtenderService::set_pods(const std::vector<json>& pods) {
  std::map<std::string, PodInfo> parsed;
  for (const auto& pod : pods) {
    const json& meta = member(pod, "metadata");
    PodInfo info{str_at(meta, "uid"), str_at(meta, "name"), str_at(meta, "namespace"), {}, {}};
    auto req = bound_requests(pod);
    if (!req) return std::unexpected(req.error().context("Pod " + pod_label(pod)));
    if (!*req) continue;  // pending or finished: uses nothing
    info.node = str_at(member(pod, "spec"), "nodeName");
    info.requests = **req;
    parsed[info.uid.empty() ? pod_label(pod) : info.uid] = std::move(info);
  }
  std::lock_guard lock(mu_);
  pods_ = std::move(parsed);
  for (const auto& [uid, p] : pods_) record_binding(p);
  dirty_ = true;
  return {};
}

std::expected<void, Error> ExtenderService::upsert_pod(const json& pod) {
  const json& meta = member(pod, "metadata");
  PodInfo info{str_at(meta, "uid"), str_at(meta, "name"), str_at(meta, "namespace"), {}, {}};
  const std::string id = info.uid.empty() ? pod_label(pod) : info.uid;
  auto req = bound_requests(pod);
  if (!req) return std::unexpected(req.error().context("Pod " + pod_label(pod)));
  std::lock_guard lock(mu_);
  if (!*req) {
    if (pods_.erase(id) > 0) dirty_ = true;
    return {};
  }
  info.node = str_at(member(pod, "spec"), "nodeName");
  info.requests = **req;
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

bool ExtenderService::fits(int node, const ResourceAmounts& request, const PodSetRequest* ps) const {
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
  for (const auto& [name, amount] : request) {
    if (amount <= 0) continue;
    const int r = index_->resource_id(name);
    if (r < 0) return false;
    if (index_->node_allocatable(node, r) - index_->node_used(node, r) < amount) return false;
  }
  if (const int pods = index_->resource_id("pods"); pods >= 0 && !request.contains("pods")) {
    if (index_->node_allocatable(node, pods) - index_->node_used(node, pods) < 1) return false;
  }
  return true;
}

// ---- gangs -------------------------------------------------------------------------------------

std::expected<std::optional<std::string>, Error> ExtenderService::gang_key(const json& pod) const {
  const json& meta = member(pod, "metadata");
  const json& labels = member(meta, "labels");
  const json& annotations = member(meta, "annotations");
  std::string name;
  for (const auto& k : options_.gang_label_keys) {
    if (name.empty()) name = str_at(labels, k.c_str());
  }
  for (const auto& k : options_.gang_annotation_keys) {
    if (name.empty()) name = str_at(annotations, k.c_str());
  }
  if (name.empty()) return std::optional<std::string>();
  return std::optional<std::string>(str_at(meta, "namespace") + "/" + name);
}

std::expected<json, Error> ExtenderService::job_document(const json& pod, std::int32_t count,
                                                         bool gang) const {
  const json& meta = member(pod, "metadata");
  const json& annotations = member(meta, "annotations");
  json spec = member(pod, "spec");
  json tmpl_meta = json::object();
  bool foreign = false;  // Kueue or KAI annotations: their loader reads them off a batch/v1 Job
  for (const auto& [k, v] : annotations.items()) {
    if (k.rfind("kueue.x-k8s.io/podset-", 0) == 0 || k.rfind("kai.scheduler/", 0) == 0) foreign = true;
  }
  if (gang) tmpl_meta["annotations"] = annotations;
  const std::string name = pod_label(pod);
  if (!gang || foreign) {
    return json{{"apiVersion", "batch/v1"},
                {"kind", "Job"},
                {"metadata", {{"name", name}}},
                {"spec", {{"parallelism", count}, {"template", {{"metadata", tmpl_meta}, {"spec", spec}}}}}};
  }
  auto get = [&](const char* key) { return str_at(annotations, key); };
  auto as_int = [&](const char* key) -> std::expected<std::int64_t, Error> {
    const std::string v = get(key);
    try {
      std::size_t used = 0;
      const auto n = std::stoll(v, &used);
      if (used == v.size()) return n;
    } catch (const std::exception&) {
    }
    return fail(ErrorCode::kInvalidArgument,
                "Pod " + name + ": annotation " + key + " must be an integer, got '" + v + "'");
  };
  json task{{"name", "gang"}, {"replicas", count}, {"template", {{"metadata", tmpl_meta}, {"spec", spec}}}};
  json job_spec{{"tasks", json::array()}};
  auto topology = [&](const char* mode_key, const char* allowed_key, const char* name_key,
                      json& out) -> std::expected<void, Error> {
    json nt = json::object();
    if (!get(mode_key).empty()) nt["mode"] = get(mode_key);
    if (!get(allowed_key).empty()) {
      auto n = as_int(allowed_key);
      if (!n) return std::unexpected(n.error());
      nt["highestTierAllowed"] = *n;
    }
    if (!get(name_key).empty()) nt["highestTierName"] = get(name_key);
    if (!nt.empty()) out = nt;
    return {};
  };
  json nt;
  if (auto ok = topology("hypertopo.io/network-topology-mode", "hypertopo.io/highest-tier-allowed",
                         "hypertopo.io/highest-tier-name", nt);
      !ok) {
    return std::unexpected(ok.error());
  }
  if (!nt.is_null()) job_spec["networkTopology"] = nt;
  if (!get("hypertopo.io/partition-size").empty()) {
    auto size = as_int("hypertopo.io/partition-size");
    if (!size) return std::unexpected(size.error());
    if (*size <= 0 || count % *size != 0) {
      return fail(ErrorCode::kInvalidArgument, "Pod " + name + ": gang size " + std::to_string(count) +
                                                   " is not a multiple of hypertopo.io/partition-size " +
                                                   std::to_string(*size));
    }
    json pp{{"totalPartitions", count / *size}, {"partitionSize", *size}};
    if (!get("hypertopo.io/min-partitions").empty()) {
      auto min = as_int("hypertopo.io/min-partitions");
      if (!min) return std::unexpected(min.error());
      pp["minPartitions"] = *min;
    }
    json pnt;
    if (auto ok =
            topology("hypertopo.io/network-topology-mode", "hypertopo.io/partition-highest-tier-allowed",
                     "hypertopo.io/partition-highest-tier-name", pnt);
        !ok) {
      return std::unexpected(ok.error());
    }
    if (!pnt.is_null() && (pnt.contains("highestTierAllowed") || pnt.contains("highestTierName"))) {
      pp["networkTopology"] = pnt;
    }
    task["partitionPolicy"] = pp;
  }
  job_spec["tasks"].push_back(task);
  return json{{"apiVersion", "batch.volcano.sh/v1alpha1"},
              {"kind", "Job"},
              {"metadata", {{"name", name}}},
              {"spec", job_spec}};
}

std::expected<PodSetRequest, Error> ExtenderService::read_request(const json& job_doc) const {
  auto job = parse_job(job_doc, {});
  if (!job) return std::unexpected(job.error());
  if (job->request.pod_sets.size() != 1) {
    return fail(ErrorCode::kInternal,
                "expected one pod set from " + str_at(member(job_doc, "metadata"), "name"));
  }
  return job->request.pod_sets.front();
}

std::expected<void, Error> ExtenderService::make_plan(GangPlan& plan, std::int32_t count) {
  PodSetRequest ps = plan.request;
  ps.count = count;
  if (ps.partitions && ps.partitions->size > 0) {
    ps.partitions->total = count / ps.partitions->size;
    ps.partitions->min = std::min(ps.partitions->min, ps.partitions->total);
  }
  JobRequest job{.name = plan.key, .pod_sets = {ps}};
  PlacementEngine engine(*index_, options_.binpack);
  auto placed = engine.place(job);
  if (!placed) return std::unexpected(placed.error().context("gang " + plan.key));
  if (!placed->fit) {
    return fail(ErrorCode::kUnavailable,
                "gang " + plan.key + " (" + std::to_string(count) + " pods) does not fit: " + placed->reason);
  }
  const PodSetPlacement& p = placed->pod_sets.front();
  std::set<std::int32_t> taken;
  for (const auto& s : plan.slots) taken.insert(s.rank);
  std::int32_t next_rank = 0;
  for (const auto& a : p.assignment) {
    for (std::int32_t i = 0; i < a.count; ++i) {
      while (taken.contains(next_rank)) ++next_rank;
      plan.slots.push_back({next_rank++, a.node_name, a.domain_path, "", false});
    }
  }
  std::sort(plan.slots.begin(), plan.slots.end(),
            [](const PlanSlot& a, const PlanSlot& b) { return a.rank < b.rank; });
  plan.job_domain = p.domains.size() == 1 && index_->find_domain(p.domains.front()) != index_->root()
                        ? p.domains.front()
                        : std::string();
  plan.partition_tier = -1;
  plan.partition_size = 0;
  if (ps.partitions && !ps.partitions->level.empty()) {
    if (auto tier = index_->resolve_tier(ps.partitions->level)) plan.partition_tier = *tier;
    plan.partition_size = ps.partitions->size;
  }
  plan.last_activity = options_.clock->now();
  return {};
}

std::expected<GangPlan*, Error> ExtenderService::plan_for(const json& pod, const std::string& key) {
  if (auto it = plans_.find(key); it != plans_.end()) return &it->second;
  const json& annotations = member(member(pod, "metadata"), "annotations");
  std::int64_t count = 1;
  for (const char* k : {kGangSize, kKueueGroupCount}) {
    const std::string v = str_at(annotations, k);
    if (v.empty()) continue;
    try {
      std::size_t used = 0;
      count = std::stoll(v, &used);
      if (used != v.size() || count <= 0) throw std::invalid_argument(v);
    } catch (const std::exception&) {
      return fail(ErrorCode::kInvalidArgument, "Pod " + pod_label(pod) + ": annotation " + k +
                                                   " must be a positive integer, got '" + v + "'");
    }
    break;
  }
  GangPlan plan;
  plan.key = key;
  auto doc = job_document(pod, static_cast<std::int32_t>(count), true);
  if (!doc) return std::unexpected(doc.error());
  plan.job_doc = *doc;
  auto request = read_request(plan.job_doc);
  if (!request) return std::unexpected(request.error().context("Pod " + pod_label(pod)));
  plan.request = *request;
  if (auto ok = make_plan(plan, static_cast<std::int32_t>(count)); !ok) return std::unexpected(ok.error());
  ++counters_.plans_made;
  auto [it, inserted] = plans_.emplace(key, std::move(plan));
  save_state();
  return &it->second;
}

bool ExtenderService::swap_slot(GangPlan& plan, PlanSlot& slot) {
  // The innermost constraint domain: the partition's domain, else the job domain, else the root.
  int limit = index_->root();
  if (plan.partition_tier > 0) {
    limit = -1;
    for (const auto& name : slot.domain_path) {
      const int d = index_->find_domain(name);
      if (d >= 0 && index_->domain(d).tier == plan.partition_tier) limit = d;
    }
  } else if (!plan.job_domain.empty()) {
    limit = index_->find_domain(plan.job_domain);
  }
  if (limit < 0) return false;  // the constraint domain itself is gone
  int start = limit;
  for (auto it = slot.domain_path.rbegin(); it != slot.domain_path.rend(); ++it) {
    const int d = index_->find_domain(*it);
    if (d >= 0) {
      start = d;
      break;
    }
  }
  const int old_node = index_->find_node(slot.node);
  for (int d = start; d >= 0; d = index_->domain(d).parent) {
    // Nodes of d's subtree in tree order.
    int found = -1;
    std::function<void(int)> scan = [&](int dom) {
      for (int n : index_->domain(dom).nodes) {
        if (found >= 0) return;
        if (n == old_node || !node_usable(index_->node(n).spec.name)) continue;
        if (fits(n, plan.request.per_pod, &plan.request)) found = n;
      }
      for (int c : index_->domain(dom).children) {
        if (found < 0) scan(c);
      }
    };
    scan(d);
    if (found >= 0) {
      if (old_node >= 0) (void)index_->add_pods(old_node, plan.request.per_pod, -1);
      (void)index_->add_pods(found, plan.request.per_pod, +1);
      slot.node = index_->node(found).spec.name;
      slot.domain_path = index_->domain_path(index_->node(found).domain);
      ++plan.swaps;
      ++counters_.swaps;
      return true;
    }
    if (d == limit) break;
  }
  return false;
}

void ExtenderService::expire_plans() {
  const auto now = options_.clock->now();
  bool changed = false;
  for (auto it = plans_.begin(); it != plans_.end();) {
    if (now - it->second.last_activity > options_.plan_ttl) {
      reserve(it->second, -1);
      it = plans_.erase(it);
      ++counters_.plans_expired;
      changed = true;
    } else {
      ++it;
    }
  }
  if (changed) save_state();
}

void ExtenderService::check_plans() {
  std::lock_guard lock(mu_);
  check_plans_locked();
}

void ExtenderService::check_plans_locked() {
  if (!ensure_index()) return;
  expire_plans();
  bool changed = false;
  for (auto& [key, plan] : plans_) {
    bool replan = false;
    for (auto& slot : plan.slots) {
      if (slot.bound || node_usable(slot.node)) continue;
      changed = true;
      if (!swap_slot(plan, slot)) {
        replan = true;
        break;
      }
    }
    if (!replan) continue;
    // No room left inside the constraint domain: plan the pods that are not bound yet again.
    reserve(plan, -1);
    GangPlan fresh = plan;
    std::erase_if(fresh.slots, [](const PlanSlot& s) { return !s.bound; });
    const auto count = static_cast<std::int32_t>(plan.slots.size() - fresh.slots.size());
    if (make_plan(fresh, count)) {
      fresh.replans = plan.replans + 1;
      ++counters_.replans;
      plan = std::move(fresh);
    } else {
      reserve(plan, +1);  // keep the old plan; filter reports that its pods do not fit
    }
  }
  if (changed) save_state();
}

// ---- verbs -------------------------------------------------------------------------------------

std::expected<std::vector<std::string>, Error> ExtenderService::candidates(const json& args) const {
  std::vector<std::string> out;
  if (const json* names = field(args, {"nodenames", "NodeNames", "nodeNames"})) {
    if (!names->is_array())
      return fail(ErrorCode::kParse, "ExtenderArgs.nodenames must be a list of strings");
    out.reserve(names->size());
    for (const auto& n : *names) {
      if (!n.is_string()) return fail(ErrorCode::kParse, "ExtenderArgs.nodenames must be a list of strings");
      out.push_back(n.get<std::string>());
    }
    return out;
  }
  if (const json* nodes = field(args, {"nodes", "Nodes"})) {
    const json* items = nodes->is_object() ? field(*nodes, {"items", "Items"}) : nullptr;
    if (!items || !items->is_array())
      return fail(ErrorCode::kParse, "ExtenderArgs.nodes must be a NodeList with items");
    out.reserve(items->size());
    for (const auto& n : *items) {
      const std::string name = str_at(member(n, "metadata"), "name");
      if (name.empty()) return fail(ErrorCode::kParse, "ExtenderArgs.nodes.items[] without metadata.name");
      out.push_back(name);
    }
    return out;
  }
  return fail(ErrorCode::kParse, "ExtenderArgs has neither nodenames nor nodes");
}

std::expected<json, Error> ExtenderService::filter(const json& args) {
  if (!args.is_object()) return fail(ErrorCode::kParse, "ExtenderArgs must be a JSON object");
  const json* pod = field(args, {"pod", "Pod"});
  if (!pod || !pod->is_object()) return fail(ErrorCode::kParse, "ExtenderArgs.pod is missing");
  auto names = candidates(args);
  if (!names) return std::unexpected(names.error());
  const bool by_name = field(args, {"nodenames", "NodeNames", "nodeNames"}) != nullptr;

  std::lock_guard lock(mu_);
  ++counters_.filter_calls;
  if (auto ok = ensure_index(); !ok) {
    ++counters_.errors;
    return json{{"error", ok.error().message()}};
  }
  std::vector<char> pass(names->size(), 0);
  json failed = json::object();
  auto key = gang_key(*pod);
  if (!key) return std::unexpected(key.error());
  if (*key) {
    check_plans_locked();
    auto plan = plan_for(*pod, **key);
    if (!plan) {
      if (plan.error().code() != ErrorCode::kUnavailable) ++counters_.errors;
      for (const auto& n : *names) failed[n] = plan.error().message();
    } else {
      GangPlan& p = **plan;
      p.last_activity = options_.clock->now();
      const std::string uid = str_at(member(*pod, "metadata"), "uid");
      PlanSlot* mine = nullptr;
      for (auto& slot : p.slots) {
        if (!uid.empty() && slot.pod_uid == uid) mine = &slot;
      }
      if (!mine) {
        // The first offered node (kube-scheduler's order) that still has a free planned slot.
        std::unordered_map<std::string_view, PlanSlot*> free_slots;
        for (auto& slot : p.slots) {
          if (slot.pod_uid.empty() && !slot.bound) free_slots.emplace(slot.node, &slot);
        }
        for (std::size_t i = 0; i < names->size() && !mine && !free_slots.empty(); ++i) {
          if (auto it = free_slots.find((*names)[i]); it != free_slots.end()) mine = it->second;
        }
        if (mine) {
          mine->pod_uid = uid;
          save_state();
        }
      }
      const std::string why =
          mine ? "gang " + p.key + ": rank " + std::to_string(mine->rank) + " is planned on " + mine->node
               : "gang " + p.key + ": no free planned slot among the offered nodes";
      for (std::size_t i = 0; i < names->size(); ++i) {
        if (mine && (*names)[i] == mine->node) {
          pass[i] = 1;
        } else {
          failed[(*names)[i]] = why;
        }
      }
    }
  } else {
    auto doc = job_document(*pod, 1, false);
    if (!doc) return std::unexpected(doc.error());
    auto ps = read_request(*doc);
    if (!ps) return std::unexpected(ps.error().context("Pod " + pod_label(*pod)));
    for (std::size_t i = 0; i < names->size(); ++i) {
      const int id = index_->find_node((*names)[i]);
      if (id >= 0 && fits(id, ps->per_pod, &*ps)) {
        pass[i] = 1;
      } else {
        failed[(*names)[i]] = id < 0 ? "node not in the extender's cluster view"
                                     : "pod does not fit (resources, taints, selector or node state)";
      }
    }
  }
  json result{{"failedNodes", failed}, {"error", ""}};
  if (by_name) {
    json out = json::array();
    for (std::size_t i = 0; i < names->size(); ++i) {
      if (pass[i]) out.push_back((*names)[i]);
    }
    result["nodenames"] = std::move(out);
  } else {
    const json& items = *field(*field(args, {"nodes", "Nodes"}), {"items", "Items"});
    json kept = json::array();
    for (std::size_t i = 0; i < names->size(); ++i) {
      if (pass[i]) kept.push_back(items[i]);
    }
    result["nodes"] = json{
        {"apiVersion", "v1"}, {"kind", "NodeList"}, {"metadata", json::object()}, {"items", std::move(kept)}};
  }
  return result;
}

std::expected<json, Error> ExtenderService::prioritize(const json& args) {
  if (!args.is_object()) return fail(ErrorCode::kParse, "ExtenderArgs must be a JSON object");
  const json* pod = field(args, {"pod", "Pod"});
  if (!pod || !pod->is_object()) return fail(ErrorCode::kParse, "ExtenderArgs.pod is missing");
  auto names = candidates(args);
  if (!names) return std::unexpected(names.error());
  std::lock_guard lock(mu_);
  ++counters_.prioritize_calls;
  if (auto ok = ensure_index(); !ok) return std::unexpected(ok.error());
  json out = json::array();
  auto key = gang_key(*pod);
  if (!key) return std::unexpected(key.error());
  if (*key) {
    // Gang pods: the planned node of this pod's slot scores the maximum, every other node zero.
    const std::string uid = str_at(member(*pod, "metadata"), "uid");
    std::string planned;
    if (auto it = plans_.find(**key); it != plans_.end()) {
      for (const auto& s : it->second.slots) {
        if (!uid.empty() && s.pod_uid == uid) planned = s.node;
      }
    }
    for (const auto& n : *names)
      out.push_back({{"host", n}, {"score", n == planned ? kMaxExtenderPriority : 0}});
    return out;
  }
  auto doc = job_document(*pod, 1, false);
  if (!doc) return std::unexpected(doc.error());
  auto ps = read_request(*doc);
  if (!ps) return std::unexpected(ps.error().context("Pod " + pod_label(*pod)));
  // Volcano's score is in [0, 1] but small on a large, empty domain; extender scores are integers
  // 0..10, so the best candidate gets the maximum and the others keep their ratio to it.
  std::vector<double> raw(names->size(), 0.0);
  double best = 0.0;
  for (std::size_t i = 0; i < names->size(); ++i) {
    const int id = index_->find_node((*names)[i]);
    if (id >= 0 && options_.binpack.normal_pod_enable)
      raw[i] = normal_pod_node_score(*index_, id, ps->per_pod, options_.binpack);
    best = std::max(best, raw[i]);
  }
  for (std::size_t i = 0; i < names->size(); ++i) {
    const std::int64_t score =
        best > 0 ? std::clamp<std::int64_t>(
                       std::llround(raw[i] / best * static_cast<double>(kMaxExtenderPriority)), 0,
                       kMaxExtenderPriority)
                 : 0;
    out.push_back({{"host", (*names)[i]}, {"score", score}});
  }
  return out;
}

// ---- plans and state ---------------------------------------------------------------------------

namespace {
json slot_json(const PlanSlot& s) {
  return json{
      {"rank", s.rank},
      {"node", s.node},
      {"domainPath", join_path(s.domain_path)},
      {"domains", s.domain_path},
      {"podUID", s.pod_uid},
      {"bound", s.bound},
      {"annotations",
       {{kRankAnnotation, std::to_string(s.rank)}, {kDomainPathAnnotation, join_path(s.domain_path)}}}};
}
}  // namespace

json ExtenderService::plans() {
  std::lock_guard lock(mu_);
  json gangs = json::array();
  for (const auto& [key, p] : plans_) {
    json slots = json::array();
    for (const auto& s : p.slots) slots.push_back(slot_json(s));
    gangs.push_back({{"key", key},
                     {"jobDomain", p.job_domain},
                     {"swaps", p.swaps},
                     {"replans", p.replans},
                     {"slots", slots}});
  }
  return json{{"gangs", gangs}};
}

void ExtenderService::save_state() {
  if (options_.state_file.empty()) return;
  json plans = json::array();
  for (const auto& [key, p] : plans_) {
    json slots = json::array();
    for (const auto& s : p.slots) slots.push_back(slot_json(s));
    plans.push_back({{"key", key},
                     {"job", p.job_doc},
                     {"jobDomain", p.job_domain},
                     {"partitionTier", p.partition_tier},
                     {"partitionSize", p.partition_size},
                     {"swaps", p.swaps},
                     {"replans", p.replans},
                     {"slots", slots}});
  }
  const json doc{{"apiVersion", "hypertopo.io/v1alpha1"}, {"kind", "ExtenderState"}, {"plans", plans}};
  // Written next to the target and renamed over it, so a crash leaves the old or the new file whole.
  auto tmp = options_.state_file;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << doc.dump(1) << "\n";
    if (!out) {
      ++counters_.errors;
      return;
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, options_.state_file, ec);
  if (ec) ++counters_.errors;
}

std::expected<void, Error> ExtenderService::load_state() {
  if (options_.state_file.empty() || !std::filesystem::exists(options_.state_file)) return {};
  const std::string where = "state file " + options_.state_file.string();
  std::ifstream in(options_.state_file);
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::exception& e) {
    return fail(ErrorCode::kParse, where + ": " + e.what());
  }
  if (!doc.is_object() || !doc.contains("plans") || !doc["plans"].is_array()) {
    return fail(ErrorCode::kParse, where + ": expected an ExtenderState object with a plans list");
  }
  std::map<std::string, GangPlan> loaded;
  for (const auto& p : doc["plans"]) {
    GangPlan plan;
    plan.key = str_at(p, "key");
    if (plan.key.empty()) return fail(ErrorCode::kParse, where + ": a plan without key");
    plan.job_doc = member(p, "job");
    auto request = read_request(plan.job_doc);
    if (!request) return std::unexpected(request.error().context(where + " plan " + plan.key));
    plan.request = *request;
    plan.job_domain = str_at(p, "jobDomain");
    plan.partition_tier = p.value("partitionTier", -1);
    plan.partition_size = p.value("partitionSize", 0);
    plan.swaps = p.value("swaps", 0);
    plan.replans = p.value("replans", 0);
    plan.last_activity = options_.clock->now();
    for (const auto& s : member(p, "slots")) {
      PlanSlot slot;
      slot.rank = s.value("rank", 0);
      slot.node = str_at(s, "node");
      slot.pod_uid = str_at(s, "podUID");
      slot.bound = s.value("bound", false);
      if (s.contains("domains") && s["domains"].is_array())
        slot.domain_path = s["domains"].get<std::vector<std::string>>();
      plan.slots.push_back(std::move(slot));
    }
    loaded[plan.key] = std::move(plan);
  }
  std::lock_guard lock(mu_);
  plans_ = std::move(loaded);
  dirty_ = true;
  return {};
}

}  // namespace hypertopo::scheduler
