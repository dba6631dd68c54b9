// The extender's cluster view (cluster_view.h): HyperNodes, Nodes, Pods, PodGroups and
// PodDisruptionBudgets as the watches deliver them, and the TopologyIndex built from them.
#include "scheduler/extender/cluster_view.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include "scheduler/extender/object_fields.h"
#include "scheduler/index/node_affinity.h"
#include "scheduler/input/cluster_loader.h"
#include "scheduler/input/coscheduling_pod_group.h"
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

constexpr const char* kGangSize = "hypertopo.io/gang-size";
constexpr const char* kKueueGroupCount = "kueue.x-k8s.io/pod-group-total-count";
constexpr const char* kCoschedulingLabel = "scheduling.x-k8s.io/pod-group";
constexpr const char* kVolcanoGroupAnnotation = "scheduling.k8s.io/group-name";

std::string budget_key(const json& budget) {
  const json& meta = member(budget, "metadata");
  return str_at(meta, "namespace") + "/" + str_at(meta, "name");
}

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

// Whether the gang is read from its PodGroup with its pods, as `place` reads such a List
// (kai_pod_group.h, volcano_pod_group.h, job_loader.h pod_group_list): every KAI PodGroup (its pods
// of each spec are a pod set, sub-groups or not) and every scheduling.k8s.io one, and a Volcano
// PodGroup whose spec.subGroupPolicy names a sub-group (without one, the Volcano gang is its pods'
// one request).
bool read_with_its_pods(const json& pod_group, PodGroupKind kind) {
  if (kind == PodGroupKind::kKai || kind == PodGroupKind::kUpstream) return true;
  if (kind != PodGroupKind::kVolcano) return false;
  const json& spec = member(pod_group, "spec");
  if (!spec.contains("subGroupPolicy")) return false;
  const json& groups = spec["subGroupPolicy"];
  return groups.is_array() && !groups.empty();
}

// The items of a List come without kind and apiVersion; the readers know a PodGroup by them.
json typed(const json& pod_group, PodGroupKind kind) {
  json out = pod_group;
  out["kind"] = "PodGroup";
  if (!out.contains("apiVersion") || !out["apiVersion"].is_string())
    out["apiVersion"] = kind == PodGroupKind::kKai        ? "scheduling.run.ai/v2alpha2"
                        : kind == PodGroupKind::kUpstream ? "scheduling.k8s.io/v1alpha2"
                                                          : "scheduling.volcano.sh/v1beta1";
  return out;
}

}  // namespace

json request_source(const json& pod) {
  const json& meta = member(pod, "metadata");
  const json& spec = member(pod, "spec");
  json kept_spec = json::object();
  for (const char* k : {"nodeSelector", "affinity", "tolerations", "overhead"}) {
    if (spec.contains(k)) kept_spec[k] = spec[k];
  }
  json containers = json::array();
  if (spec.contains("containers") && spec["containers"].is_array()) {
    for (const auto& c : spec["containers"]) {
      json kept = json::object();
      if (c.is_object() && c.contains("name")) kept["name"] = c["name"];
      if (c.is_object() && c.contains("resources")) kept["resources"] = c["resources"];
      containers.push_back(std::move(kept));
    }
  }
  kept_spec["containers"] = std::move(containers);
  return json{{"metadata",
               {{"name", str_at(meta, "name")},
                {"namespace", str_at(meta, "namespace")},
                {"labels", member(meta, "labels")},
                {"annotations", member(meta, "annotations")}}},
              {"spec", std::move(kept_spec)}};
}

ClusterView::ClusterView(ViewOptions options) : options_(std::move(options)) {}

void ClusterView::replace_hypernodes(std::vector<HyperNodeSpec> hypernodes) {
  std::map<std::string, HyperNodeSpec> parsed;
  for (auto& h : hypernodes) parsed[h.name] = std::move(h);
  hypernodes_ = std::move(parsed);
  dirty_ = true;
}

std::expected<void, Error> ClusterView::set_hypernodes(const std::vector<json>& hypernodes) {
  auto parsed = parse_hypernode_items(hypernodes);
  if (!parsed) return std::unexpected(parsed.error().context("HyperNode list"));
  replace_hypernodes(std::move(*parsed));
  return {};
}

std::expected<void, Error> ClusterView::set_hypernode_pages(std::span<const std::string> pages) {
  auto parsed = parse_hypernode_pages(pages);
  if (!parsed) return std::unexpected(parsed.error().context("HyperNode list"));
  replace_hypernodes(std::move(*parsed));
  return {};
}

std::expected<void, Error> ClusterView::upsert_hypernode(const json& hypernode) {
  auto parsed = parse_hypernode_items(std::span(&hypernode, 1));
  if (!parsed)
    return std::unexpected(
        parsed.error().context("HyperNode " + str_at(member(hypernode, "metadata"), "name")));
  ++counters_.watch_events;
  for (auto& h : *parsed) hypernodes_[h.name] = std::move(h);
  dirty_ = true;
  return {};
}

void ClusterView::remove_hypernode(const std::string& name) {
  ++counters_.watch_events;
  hypernodes_.erase(name);
  dirty_ = true;
}

void ClusterView::replace_nodes(std::vector<NodeSpec> nodes) {
  nodes_.clear();
  for (auto& n : nodes) nodes_[n.name] = std::move(n);
  dirty_ = true;
}

std::expected<void, Error> ClusterView::set_nodes(const std::vector<json>& nodes) {
  auto parsed = parse_node_items(nodes);
  if (!parsed) return std::unexpected(parsed.error().context("Node list"));
  replace_nodes(std::move(*parsed));
  return {};
}

std::expected<void, Error> ClusterView::set_node_pages(std::span<const std::string> pages) {
  auto parsed = parse_node_pages(pages);
  if (!parsed) return std::unexpected(parsed.error().context("Node list"));
  replace_nodes(std::move(*parsed));
  return {};
}

std::expected<bool, Error> ClusterView::upsert_node(const json& node) {
  auto parsed = parse_node_items(std::span(&node, 1));
  if (!parsed) return std::unexpected(parsed.error());
  ++counters_.watch_events;
  bool changed = false;
  for (auto& n : *parsed) {
    // Heartbeat-only status updates change nothing the index holds: no rebuild for those.
    auto it = nodes_.find(n.name);
    if (it != nodes_.end() && same_for_scheduling(it->second, n)) continue;
    nodes_[n.name] = std::move(n);
    dirty_ = true;
    changed = true;
  }
  return changed;
}

void ClusterView::remove_node(const std::string& name) {
  ++counters_.watch_events;
  nodes_.erase(name);
  dirty_ = true;
}

ViewPod ClusterView::pod_info(ListedPod&& pod) const {
  ViewPod info{std::move(pod.uid), std::move(pod.name), std::move(pod.ns), std::move(pod.bound.node),
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

void ClusterView::identify(const json& pod, ViewPod& info) const {
  if (auto key = gang_key(pod); key && *key) info.gang = **key;
  if (info.gang.empty()) return;
  if (auto index = pod_index(pod); index && *index) info.index = **index;
}

void ClusterView::replace_pods(std::vector<ListedPod> pods, std::span<const std::string> waiting) {
  std::map<std::string, ViewPod> parsed;
  for (auto& pod : pods) {
    std::string id = pod.uid.empty() ? pod.bound.name : pod.uid;
    parsed[std::move(id)] = pod_info(std::move(pod));
  }
  pods_ = std::move(parsed);
  // The pending gang pods are those the list holds, no more (one deleted while the watch was down
  // is gone) and no fewer: a gang waiting for its quorum counts the members that exist, as the
  // coscheduling plugin counts them from its pod lister, not only those kube-scheduler has asked
  // for since the extender started.
  pending_.clear();
  for (const auto& text : waiting) {
    const json pod = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (auto key = gang_key(pod); key && *key) note_pending(pod, **key);
  }
  dirty_ = true;
}

std::expected<void, Error> ClusterView::set_pods(const std::vector<json>& pods) {
  std::vector<std::string> waiting;
  auto parsed = parse_pod_items(pods, &waiting);
  if (!parsed) return std::unexpected(parsed.error());
  replace_pods(std::move(*parsed), waiting);
  return {};
}

std::expected<void, Error> ClusterView::set_pod_pages(std::span<const std::string> pages) {
  std::vector<std::string> waiting;
  auto parsed = parse_pod_pages(pages, &waiting);
  if (!parsed) return std::unexpected(parsed.error());
  replace_pods(std::move(*parsed), waiting);
  return {};
}

// A pod's usage on the index, in place: kube-scheduler's cache does the same (AddPod/RemovePod).
// Without a built index (or with one already due for a rebuild) the rebuild counts pods_ anyway.
void ClusterView::count_pod(const ViewPod& pod, int sign) {
  if (!index_ || dirty_ || pod.node.empty()) return;
  const int id = index_->find_node(pod.node);
  if (id < 0) return;  // a node outside the view: the index holds nothing of it
  (void)index_->add_pods(id, pod.requests, sign);
  ++counters_.index_pod_updates;
}

std::expected<PodEvent, Error> ClusterView::upsert_pod(const json& pod) {
  auto parsed = parse_pod_items(std::span(&pod, 1));
  if (!parsed) return std::unexpected(parsed.error());
  const json& meta = member(pod, "metadata");
  const std::string uid = str_at(meta, "uid");
  const std::string id = uid.empty() ? pod_label(pod) : uid;
  const std::string phase = str_at(member(pod, "status"), "phase");
  // A pod with a deletionTimestamp is on its way out: its controller may already have made the
  // pod that replaces it (Job's podReplacementPolicy TerminatingOrFailed), which takes the slot.
  const bool terminating = meta.contains("deletionTimestamp") && !meta["deletionTimestamp"].is_null();
  ++counters_.watch_events;
  auto old = pods_.find(id);
  if (parsed->empty()) {  // pending or finished: uses nothing
    if (old != pods_.end()) {
      count_pod(old->second, -1);
      pods_.erase(old);
    }
    if (phase == "Succeeded" || phase == "Failed") {
      pending_.erase(id);
      return PodEvent{phase == "Succeeded" ? PodEvent::Kind::kSucceeded : PodEvent::Kind::kGone, uid};
    }
    if (terminating) {
      pending_.erase(id);
    } else if (auto key = gang_key(pod); key && *key) {
      note_pending(pod, **key);
    }
    return PodEvent{};
  }
  pending_.erase(id);
  ViewPod info = pod_info(std::move(parsed->front()));
  identify(pod, info);  // the whole pod: env RANK and every rank key
  if (old != pods_.end()) count_pod(old->second, -1);
  count_pod(info, +1);
  auto& kept = pods_[id];
  kept = std::move(info);
  if (terminating) return PodEvent{PodEvent::Kind::kGone, uid};
  return PodEvent{PodEvent::Kind::kBound, uid, &kept};
}

PodEvent ClusterView::remove_pod(const json& pod) {
  const json& meta = member(pod, "metadata");
  const std::string uid = str_at(meta, "uid");
  const std::string id = uid.empty() ? pod_label(pod) : uid;
  ++counters_.watch_events;
  if (auto it = pods_.find(id); it != pods_.end()) {
    count_pod(it->second, -1);
    pods_.erase(it);
  }
  pending_.erase(id);
  return PodEvent{PodEvent::Kind::kGone, uid};
}

void ClusterView::note_pending(const json& pod, const std::string& key, bool replace) {
  const json& meta = member(pod, "metadata");
  const std::string uid = str_at(meta, "uid");
  if (uid.empty() || pods_.contains(uid)) return;
  if (!replace && pending_.contains(uid)) return;
  pending_[uid] = {key, request_source(pod)};
}

std::optional<GroupedGang> ClusterView::grouped_gang(const std::string& key, bool with_pending) const {
  auto it = grouped_.find(key);
  if (it == grouped_.end()) return std::nullopt;
  GroupedGang out{.kind = it->second.first, .pod_group = &it->second.second};
  if (!with_pending) return out;
  for (const auto& [uid, entry] : pending_) {
    if (entry.first == key) out.pending.push_back(&entry.second);
  }
  return out;
}

const std::map<std::string, std::string>* ClusterView::group_topology(const std::string& key) const {
  auto it = group_topology_.find(key);
  return it == group_topology_.end() ? nullptr : &it->second;
}

const ViewPod* ClusterView::pod(const std::string& uid) const {
  auto it = pods_.find(uid);
  return it == pods_.end() ? nullptr : &it->second;
}

const NodeSpec* ClusterView::node(const std::string& name) const {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? nullptr : &it->second;
}

void ClusterView::set_pod_groups(const std::vector<json>& pod_groups, PodGroupKind kind) {
  std::map<std::string, std::int32_t> parsed;
  for (const auto& pg : pod_groups) {
    for (auto& [key, n] : group_sizes_of(pg, kind)) parsed[key] = n;
  }
  // The kind's old groups go; what the list holds comes back.
  for (const auto& [key, n] : group_sizes_[kind]) group_topology_.erase(key);
  for (const auto& [key, n] : group_sizes_[kind]) grouped_.erase(key);
  if (kind == PodGroupKind::kCoscheduling) min_resources_.clear();
  group_sizes_[kind] = std::move(parsed);
  for (const auto& pg : pod_groups) {
    remember_min_resources(pg, kind);
    if (auto topology = group_topology_of(pg, kind); !topology.empty())
      group_topology_[pod_label(pg)] = std::move(topology);
    if (read_with_its_pods(pg, kind)) grouped_[pod_label(pg)] = {kind, typed(pg, kind)};
  }
}

void ClusterView::upsert_pod_group(const json& pod_group, PodGroupKind kind) {
  ++counters_.watch_events;
  forget_pod_group(pod_group, kind);
  // Without a usable size it sizes nothing.
  for (auto& [key, n] : group_sizes_of(pod_group, kind)) group_sizes_[kind][key] = n;
  if (auto topology = group_topology_of(pod_group, kind); !topology.empty())
    group_topology_[pod_label(pod_group)] = std::move(topology);
  if (read_with_its_pods(pod_group, kind)) grouped_[pod_label(pod_group)] = {kind, typed(pod_group, kind)};
  remember_min_resources(pod_group, kind);
}

void ClusterView::remember_min_resources(const json& pod_group, PodGroupKind kind) {
  if (kind != PodGroupKind::kCoscheduling) return;
  // A quantity that does not read checks nothing (the API server admits none such).
  auto check = coscheduling_min_resources(pod_group);
  if (check && *check) {
    check->value().group = pod_label(pod_group);
    min_resources_[pod_label(pod_group)] = std::move(check->value());
  }
}

void ClusterView::remove_pod_group(const json& pod_group, PodGroupKind kind) {
  ++counters_.watch_events;
  forget_pod_group(pod_group, kind);
}

void ClusterView::forget_pod_group(const json& pod_group, PodGroupKind kind) {
  auto& sizes = group_sizes_[kind];
  const std::string key = pod_label(pod_group);
  sizes.erase(key);
  if (kind == PodGroupKind::kWorkload) {  // its pod groups: namespace/workload/<group>
    for (auto it = sizes.lower_bound(key + "/"); it != sizes.end() && it->first.starts_with(key + "/");)
      it = sizes.erase(it);
  }
  group_topology_.erase(key);
  grouped_.erase(key);
  min_resources_.erase(key);
}

std::expected<std::optional<std::string>, Error> ClusterView::gang_key(const json& pod) const {
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
  if (!name.empty()) return std::optional<std::string>(str_at(meta, "namespace") + "/" + name);
  // The upstream Workload API (Kubernetes 1.35+): spec.schedulingGroup names a PodGroup, or
  // spec.workloadRef a Workload's pod group (and, with podGroupReplicaKey, one replica of it).
  const json& spec = member(pod, "spec");
  if (const std::string group = str_at(member(spec, "schedulingGroup"), "podGroupName"); !group.empty())
    return std::optional<std::string>(str_at(meta, "namespace") + "/" + group);
  const json& ref = member(spec, "workloadRef");
  if (const std::string workload = str_at(ref, "name"); !workload.empty()) {
    std::string key = str_at(meta, "namespace") + "/" + workload + "/" + str_at(ref, "podGroup");
    if (const std::string replica = str_at(ref, "podGroupReplicaKey"); !replica.empty()) key += "/" + replica;
    return std::optional<std::string>(key);
  }
  return std::optional<std::string>();
}

std::size_t ClusterView::gang_members_seen(const std::string& key) const {
  std::size_t seen = 0;
  for (const auto& [id, p] : pods_) seen += p.gang == key && !p.terminating;
  for (const auto& [uid, entry] : pending_) seen += entry.first == key;
  return seen;
}

std::expected<std::int32_t, Error> ClusterView::gang_size(const json& pod, const std::string& key,
                                                          std::optional<PodGroupKind>* from) const {
  if (from) from->reset();
  const json& meta = member(pod, "metadata");
  const json& annotations = member(meta, "annotations");
  for (const char* k : {kGangSize, kKueueGroupCount}) {
    const std::string v = str_at(annotations, k);
    if (!v.empty()) return positive_count(v, std::string("annotation ") + k, "Pod " + pod_label(pod));
  }
  auto size_of = [&](PodGroupKind kind, const std::string& group_key) -> std::optional<std::int32_t> {
    auto sizes = group_sizes_.find(kind);
    if (sizes == group_sizes_.end()) return std::nullopt;
    auto it = sizes->second.find(group_key);
    return it == sizes->second.end() ? std::nullopt : std::optional<std::int32_t>(it->second);
  };
  auto sized_by = [&](PodGroupKind kind, const std::string& group_key,
                      const std::string& what) -> std::expected<std::int32_t, Error> {
    if (auto n = size_of(kind, group_key)) {
      if (from) *from = kind;
      return *n;
    }
    return fail(ErrorCode::kUnavailable, "Pod " + pod_label(pod) + ": " + what + " not found");
  };
  const json& spec = member(pod, "spec");
  if (const std::string group = str_at(member(spec, "schedulingGroup"), "podGroupName"); !group.empty())
    return sized_by(PodGroupKind::kUpstream, key,
                    "PodGroup " + key + " (scheduling.k8s.io, spec.schedulingGroup)");
  if (const json& ref = member(spec, "workloadRef"); !str_at(ref, "name").empty()) {
    const std::string group_key =
        str_at(meta, "namespace") + "/" + str_at(ref, "name") + "/" + str_at(ref, "podGroup");
    return sized_by(PodGroupKind::kWorkload, group_key,
                    "pod group " + str_at(ref, "podGroup") + " of Workload " + str_at(ref, "name") +
                        " (scheduling.k8s.io, spec.workloadRef)");
  }
  // sigs.k8s.io/scheduler-plugins pkg/coscheduling: the pod-group label names a PodGroup in the
  // pod's namespace whose spec.minMember is the gang's quorum.
  if (!str_at(member(meta, "labels"), kCoschedulingLabel).empty()) {
    return sized_by(PodGroupKind::kCoscheduling, key,
                    "PodGroup " + key + " (label " + std::string(kCoschedulingLabel) + ")");
  }
  // Volcano: the annotation scheduling.k8s.io/group-name names a scheduling.volcano.sh PodGroup
  // (made by Volcano's job controller, minMember = the Job's minAvailable).
  if (!str_at(annotations, kVolcanoGroupAnnotation).empty()) {
    if (auto n = size_of(PodGroupKind::kVolcano, key)) {
      if (from) *from = PodGroupKind::kVolcano;
      return *n;
    }
  }
  // KAI-Scheduler: its pod grouper names the scheduling.run.ai PodGroup in pod-group-name
  // (minMember: the workload's gang, e.g. a PyTorchJob's replicas).
  if (!str_at(annotations, "pod-group-name").empty()) {
    if (auto n = size_of(PodGroupKind::kKai, key)) {
      if (from) *from = PodGroupKind::kKai;
      return *n;
    }
  }
  return 1;
}

std::expected<bool, Error> ClusterView::ensure_index() {
  if (!dirty_ && index_) return false;
  // The HyperNodes by reference (9,510 of them with their member lists at 6,000 Nodes); the Nodes
  // are copied, as the index keeps its own NodeSpecs (the view's stay the newest between builds).
  std::vector<const HyperNodeSpec*> hns;
  hns.reserve(hypernodes_.size());
  for (const auto& [name, h] : hypernodes_) hns.push_back(&h);
  std::vector<NodeSpec> nodes;
  nodes.reserve(nodes_.size());
  for (const auto& [name, n] : nodes_) nodes.push_back(n);
  auto index =
      TopologyIndex::from_hypernodes(std::span<const HyperNodeSpec* const>(hns), std::move(nodes), {});
  if (!index) return std::unexpected(index.error().context("building the topology index"));
  // The pods' usage straight from the view, as pod events apply it: no copy of every pod's name,
  // node and requests (100,000 pods at a large cluster) for one rebuild.
  for (const auto& [uid, p] : pods_) {
    if (const int id = p.node.empty() ? -1 : index->find_node(p.node); id >= 0)
      (void)index->add_pods(id, p.requests, 1);
  }
  index_ = std::move(*index);
  dirty_ = false;
  ++counters_.index_rebuilds;
  return true;
}

bool ClusterView::node_usable_for(const PodSetRequest& ps, const std::string& name) const {
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return false;
  return it->second.ready && !it->second.unschedulable &&
         check_node_constraints(it->second, ps.node_selector, ps.affinity, ps.tolerations).passed();
}

std::string ClusterView::why_unusable(const PodSetRequest& ps, const std::string& name) const {
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return "left the cluster";
  const NodeSpec& spec = it->second;
  if (!spec.ready) return "is NotReady";
  if (spec.unschedulable) return "is unschedulable (cordoned)";
  return check_node_constraints(spec, ps.node_selector, ps.affinity, ps.tolerations).message();
}

void ClusterView::set_disruption_budgets(const std::vector<json>& budgets) {
  budgets_.clear();
  for (const auto& b : budgets) {
    // The API server validated it; one that still does not read protects nothing (counted).
    if (auto parsed = parse_disruption_budget(b, "PodDisruptionBudget list"))
      budgets_[budget_key(b)] = std::move(*parsed);
    else
      ++counters_.errors;
  }
}

void ClusterView::upsert_disruption_budget(const json& budget) {
  ++counters_.watch_events;
  if (auto parsed = parse_disruption_budget(budget, "PodDisruptionBudget watch")) {
    budgets_[budget_key(budget)] = std::move(*parsed);
  } else {
    budgets_.erase(budget_key(budget));
    ++counters_.errors;
  }
}

void ClusterView::remove_disruption_budget(const json& budget) {
  ++counters_.watch_events;
  budgets_.erase(budget_key(budget));
}

std::vector<PreemptionCandidate> ClusterView::preemption_candidates() const {
  std::vector<PreemptionCandidate> out;
  out.reserve(pods_.size());
  for (const auto& [id, p] : pods_) {
    const int node = index_->find_node(p.node);
    if (node < 0) continue;
    out.push_back({.uid = p.uid,
                   .ns = p.ns,
                   .name = p.name,
                   .node = node,
                   .priority = p.priority,
                   .requests = p.requests,
                   .gang = p.gang,
                   .start_time = p.start_time,
                   .labels = p.labels,
                   .terminating = p.terminating});
  }
  return out;
}

std::vector<DisruptionBudget> ClusterView::disruption_budgets() const {
  std::vector<DisruptionBudget> out;
  out.reserve(budgets_.size());
  for (const auto& [key, b] : budgets_) out.push_back(b);
  return out;
}

bool ClusterView::leaving(const std::string& uid, const std::string& node) const {
  auto it = pods_.find(uid);
  return it == pods_.end() || it->second.terminating || it->second.node != node;
}

}  // namespace hypertopo::scheduler
