#include "scheduler/input/placement_session.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <set>
#include <sstream>

#include "io/bounded_file.h"
#include "io/json_fields.h"
#include "io/json_writer.h"
#include "io/object_reader.h"
#include "scheduler/config/volcano_config.h"
#include "scheduler/input/cluster_loader.h"
#include "scheduler/input/cluster_snapshot.h"
#include "scheduler/input/coscheduling_pod_group.h"
#include "scheduler/input/disruption_budget.h"
#include "scheduler/input/job_loader.h"
#include "scheduler/input/kai_pod_group.h"
#include "scheduler/input/pod_request.h"
#include "scheduler/input/volcano_pod_group.h"
#include "scheduler/placement/around_bound.h"
#include "scheduler/placement/kueue_compat.h"
#include "scheduler/placement/label_levels.h"
#include "scheduler/placement/placement_engine.h"
#include "scheduler/placement/victim_planner.h"
#include "text/terminal_safe.h"

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

json engine_result(const JobPlacement& placement) {
  json out;
  out["fit"] = placement.fit;
  out["reason"] = placement.reason;
  out["podSets"] = json::array();
  for (const auto& ps : placement.pod_sets) {
    json p;
    p["name"] = ps.name;
    p["assignment"] = json::array();
    for (const auto& a : ps.assignment) {
      p["assignment"].push_back(
          {{"node", a.node_name}, {"count", a.count}, {"firstRank", a.first_rank}, {"path", a.domain_path}});
    }
    p["domains"] = ps.fit ? json(ps.domains) : json::array();
    p["tier"] = ps.fit ? ps.tier : 0;
    // A fitting pod set has a reason only when it started with fewer pods than asked (minPartitions,
    // minAvailable): it says how many.
    if (!ps.fit || !ps.reason.empty()) p["reason"] = ps.reason;
    if (ps.fit && !ps.reason.empty()) p["placed"] = ps.placed;
    if (!ps.fabric_health.empty()) p["fabricHealth"] = ps.fabric_health;
    out["podSets"].push_back(p);
  }
  return out;
}

KueuePodSet to_kueue(const PodSetRequest& ps) {
  KueuePodSet k;
  k.name = ps.name;
  k.count = ps.count;
  k.per_pod = ps.per_pod;
  k.node_selector = ps.node_selector;
  k.tolerations = ps.tolerations;
  k.group = ps.group;
  switch (ps.mode) {
    case TopologyMode::kRequired:
      k.required = ps.level;
      break;
    case TopologyMode::kPreferred:
      k.preferred = ps.level;
      break;
    case TopologyMode::kUnconstrained:
      k.unconstrained = ps.slices.empty();
      break;
    case TopologyMode::kNone:
      k.implied = true;
      break;
  }
  if (ps.slices.size() == 1) {
    k.slice_required_topology = ps.slices[0].level;
    if (ps.slices[0].size > 0) k.slice_size = ps.slices[0].size;  // 0: a group leader's, unsized
  } else {
    for (const auto& s : ps.slices) k.slice_constraints.push_back({s.level, s.size});
  }
  return k;
}

// Kueue's feature gates as its --feature-gates flag takes them: "A=true,B=false".
std::expected<KueueFeatureGates, Error> parse_kueue_gates(const std::string& text) {
  KueueFeatureGates gates;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    start = end + 1;
    if (item.empty()) continue;
    const auto eq = item.find('=');
    const std::string name = item.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (value != "true" && value != "false") {
      return fail(ErrorCode::kInvalidArgument,
                  "--kueue-feature-gates: '" + item + "' must be <gate>=true or <gate>=false");
    }
    const bool on = value == "true";
    if (name == "TASBalancedPlacement") {
      gates.balanced_placement = on;
    } else if (name == "TASProfileMixed") {
      gates.profile_mixed = on;
    } else if (name == "TASMultiLayerTopology") {
      gates.multi_layer_topology = on;
    } else {
      return fail(ErrorCode::kInvalidArgument,
                  "--kueue-feature-gates: unknown gate '" + name +
                      "' (known: TASBalancedPlacement, TASProfileMixed, TASMultiLayerTopology)");
    }
  }
  return gates;
}

// A Kueue ResourceFlavor (kueue.x-k8s.io, kind ResourceFlavor): its spec.nodeLabels.
std::expected<std::map<std::string, std::string>, Error> flavor_labels(const std::filesystem::path& path,
                                                                       const std::string& topology_name,
                                                                       io::ObjectLedger& ledger) {
  auto file = io::read_objects(path);
  if (!file) return std::unexpected(file.error());
  std::string where = path.string();
  const json* doc = nullptr;
  for (const auto& o : file->objects) {
    if (o.kind != "ResourceFlavor") continue;
    if (doc) {
      return fail(ErrorCode::kInvalidArgument,
                  where + ": " + file->where(o.origin) + ": a second ResourceFlavor; one is read");
    }
    doc = o.object;
    if (file->documents.size() > 1 || o.origin.item) where += ": " + file->where(o.origin);
  }
  if (!doc) {
    return fail(ErrorCode::kInvalidArgument,
                where + ": expected a Kueue ResourceFlavor (kind: ResourceFlavor)");
  }
  ledger.record(*file, {"ResourceFlavor"});
  const json spec = doc->value("spec", json::object());
  if (!spec.is_object()) return fail(ErrorCode::kInvalidArgument, where + ": spec must be an object");
  if (auto it = spec.find("topologyName"); it != spec.end() && it->is_string() && *it != topology_name) {
    return fail(ErrorCode::kInvalidArgument, where + ": spec.topologyName '" + it->get<std::string>() +
                                                 "' is not the Topology '" + topology_name + "'");
  }
  std::map<std::string, std::string> out;
  auto labels = spec.find("nodeLabels");
  if (labels == spec.end() || labels->is_null()) return out;
  if (!labels->is_object())
    return fail(ErrorCode::kInvalidArgument, where + ": spec.nodeLabels must be a map");
  for (const auto& [k, v] : labels->items()) {
    if (!v.is_string())
      return fail(ErrorCode::kInvalidArgument, where + ": spec.nodeLabels." + k + " must be a string");
    out[k] = v.get<std::string>();
  }
  return out;
}

json kueue_result(const std::vector<KueuePodSetResult>& results, const JobRequest& job,
                  const TopologyIndex& index, const std::vector<std::string>& levels,
                  const std::map<std::string, std::string>& flavor) {
  json out;
  out["fit"] = results.size() == job.pod_sets.size();
  out["reason"] = "";
  out["podSets"] = json::array();
  const bool by_host = !levels.empty() && levels.back() == kHostnameLabel;
  // Kueue names hosts by their hostname label; map them back to node names for the report.
  std::map<std::string, int> host_node;
  for (std::size_t n = 0; n < index.nodes().size(); ++n) {
    auto it = index.nodes()[n].spec.labels.find(kHostnameLabel);
    host_node[it == index.nodes()[n].spec.labels.end() ? index.nodes()[n].spec.name : it->second] =
        static_cast<int>(n);
  }
  // The nodes of a domain given by its full level path, as Kueue's snapshot keeps them: ready,
  // schedulable, matching the flavor.
  auto nodes_in = [&](const std::vector<std::string>& values) {
    std::vector<std::string> names;
    for (const auto& n : index.nodes()) {
      if (!n.spec.ready || n.spec.unschedulable) continue;
      bool match = values.size() == levels.size();
      for (std::size_t l = 0; match && l < levels.size(); ++l) {
        auto it = n.spec.labels.find(levels[l]);
        match = it != n.spec.labels.end() && it->second == values[l];
      }
      for (const auto& [k, v] : flavor) {
        auto it = n.spec.labels.find(k);
        match = match && it != n.spec.labels.end() && it->second == v;
      }
      if (match) names.push_back(n.spec.name);
    }
    return names;
  };
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    json p;
    p["name"] = r.name;
    p["assignment"] = json::array();
    std::set<std::string> domains;
    int tier = 0;
    if (!r.failure.empty()) {
      out["fit"] = false;
      if (out["reason"] == "") out["reason"] = "pod set " + r.name + ": " + r.failure;
      p["reason"] = r.failure;
    } else if (r.assignment) {
      json kueue_domains = json::array();
      std::int32_t rank = 0;
      for (const auto& d : r.assignment->domains) {
        kueue_domains.push_back({{"values", d.values}, {"count", d.count}});
        json a;
        if (by_host) {
          a["node"] = d.values.back();
          if (auto it = host_node.find(d.values.back()); it != host_node.end()) {
            a["node"] = index.node(it->second).spec.name;
            auto path = index.domain_path(index.node(it->second).domain);
            a["path"] = path;
            if (!path.empty()) domains.insert(path.front());
          }
        } else {
          // A value such as "r1" may name a rack in every block: only the full path is a domain.
          a["domain"] = d.values;
          a["nodes"] = nodes_in(d.values);
          domains.insert(d.values.front());
        }
        a["count"] = d.count;
        a["firstRank"] = rank;
        rank += d.count;
        p["assignment"].push_back(std::move(a));
      }
      p["topologyAssignment"] = {{"levels", r.assignment->levels}, {"domains", std::move(kueue_domains)}};
      const auto& ps = job.pod_sets[i];
      if (!ps.level.empty()) {
        auto t = index.resolve_tier(ps.level);
        if (t) tier = *t;
      }
    }
    p["domains"] = std::vector<std::string>(domains.begin(), domains.end());
    p["tier"] = tier;
    out["podSets"].push_back(p);
  }
  if (!out["fit"].get<bool>() && out["reason"] == "") out["reason"] = "an earlier pod set did not fit";
  return out;
}

// ---- Priorities, budgets and preemption ----

using io::str_at;
using io::value_or_null;

// A scheduling.k8s.io/v1 PriorityClass as Priority admission reads it.
struct PriorityClassSpec {
  std::int32_t value = 0;
  bool global_default = false;
  std::string preemption_policy;  // "" = PreemptLowerPriority
  std::string source;             // where it was given
};
using PriorityClassMap = std::map<std::string, PriorityClassSpec>;

// The classes every cluster has (kubernetes/kubernetes pkg/apis/scheduling/types.go:
// SystemCriticalPriority = 2 x HighestUserDefinablePriority (10^9); system-node-critical is 1000
// above it, as SystemPriorityClasses() creates them).
PriorityClassMap builtin_priority_classes() {
  return {{"system-cluster-critical", {2000000000, false, "", "built-in"}},
          {"system-node-critical", {2000001000, false, "", "built-in"}}};
}

std::expected<void, Error> add_priority_class(PriorityClassMap& classes, const json& pc,
                                              const std::string& where) {
  const std::string name = str_at(value_or_null(pc, "metadata"), "name");
  const std::string who = where + ": PriorityClass " + (name.empty() ? "(no name)" : name);
  if (name.empty()) return fail(ErrorCode::kInvalidArgument, who + ": metadata.name is required");
  PriorityClassSpec spec;
  spec.source = where;
  const json& value = value_or_null(pc, "value");
  if (!value.is_number_integer() || value.get<std::int64_t>() < std::numeric_limits<std::int32_t>::min() ||
      value.get<std::int64_t>() > std::numeric_limits<std::int32_t>::max()) {
    return fail(ErrorCode::kInvalidArgument,
                who + ": value must be a 32-bit integer, got " + (value.is_null() ? "none" : value.dump()));
  }
  spec.value = static_cast<std::int32_t>(value.get<std::int64_t>());
  const json& global = value_or_null(pc, "globalDefault");
  if (!global.is_null() && !global.is_boolean())
    return fail(ErrorCode::kInvalidArgument,
                who + ": globalDefault must be true or false, got " + global.dump());
  spec.global_default = global.is_boolean() && global.get<bool>();
  const json& policy = value_or_null(pc, "preemptionPolicy");
  if (!policy.is_null() && (!policy.is_string() || (policy != "Never" && policy != "PreemptLowerPriority")))
    return fail(ErrorCode::kInvalidArgument,
                who + ": preemptionPolicy must be Never or PreemptLowerPriority, got " + policy.dump());
  if (policy.is_string()) spec.preemption_policy = policy.get<std::string>();
  if (auto it = classes.find(name);
      it != classes.end() && it->second.source != "built-in" &&
      (it->second.value != spec.value || it->second.global_default != spec.global_default ||
       it->second.preemption_policy != spec.preemption_policy)) {
    return fail(ErrorCode::kInvalidArgument,
                who + " differs from the PriorityClass " + name + " of " + it->second.source + " (value " +
                    std::to_string(it->second.value) + " here " + std::to_string(spec.value) + ")");
  }
  classes[name] = std::move(spec);
  return {};
}

// --priority-classes: one PriorityClass, or a List (PriorityClassList) of them.
// The file holds PriorityClasses only (any form io::read_objects reads): anything else is named.
std::expected<void, Error> load_priority_classes(const std::filesystem::path& path,
                                                 PriorityClassMap& classes) {
  auto file = io::read_objects(path);
  if (!file) return std::unexpected(file.error());
  const std::string where = path.string();
  if (file->documents.size() == 1 && !file->objects.empty() && !file->objects.front().origin.item &&
      file->objects.front().kind != "PriorityClass") {
    return fail(ErrorCode::kInvalidArgument, where +
                                                 ": expected a PriorityClass or a List of them, got kind '" +
                                                 file->objects.front().kind + "'");
  }
  for (const auto& o : file->objects) {
    if (o.kind != "PriorityClass")
      return fail(ErrorCode::kInvalidArgument, where + ": " + file->where(o.origin) +
                                                   ": expected kind PriorityClass, got '" + o.kind + "'");
    if (auto ok = add_priority_class(classes, *o.object, where); !ok) return ok;
  }
  return {};
}

struct ResolvedPriority {
  std::int32_t value = 0;
  bool never = false;
  bool stated = false;  // a value, class or policy was given, or a globalDefault class applies
};

// Priority admission (kubernetes/kubernetes plugin/pkg/admission/priority/admission.go, Admit and
// getDefaultPriority): a named class gives its value, and its preemptionPolicy unless the pod sets
// one; no name: the globalDefault class with the lowest value, else 0. `value_first`: a pod already
// admitted carries the value the API server computed, which then wins over the name.
std::expected<ResolvedPriority, Error> resolve_priority(const PriorityClassMap& classes,
                                                        const PriorityRequest& request, bool value_first) {
  ResolvedPriority out;
  const PriorityClassSpec* cls = nullptr;
  if (!request.class_name.empty() && !(value_first && request.value)) {
    auto it = classes.find(request.class_name);
    if (it == classes.end()) {
      std::string known;
      for (const auto& [name, spec] : classes) known += (known.empty() ? "" : ", ") + name;
      return fail(ErrorCode::kInvalidArgument,
                  request.source + ": priorityClassName '" + request.class_name +
                      "' matches no PriorityClass (known: " + known +
                      "; give them with --priority-classes or in the --pods or --nodes list)");
    }
    cls = &it->second;
  } else if (!request.value) {
    for (const auto& [name, spec] : classes) {
      if (spec.global_default && (!cls || spec.value < cls->value)) cls = &spec;
    }
  }
  if (cls) {
    out.value = cls->value;
  } else if (request.value) {
    out.value = *request.value;
  }
  const std::string& policy = !request.preemption_policy.empty() ? request.preemption_policy
                              : cls                              ? cls->preemption_policy
                                                                 : request.preemption_policy;
  out.never = policy == "Never";
  out.stated = cls || request.value || !request.preemption_policy.empty();
  return out;
}

// The gang a running pod belongs to, from its gang marks (cluster_loader.h ListedPod) with the
// extender's default keys (scheduler/extender: ExtenderService::gang_key): the pod-group label or
// annotation, else the upstream PodGroup or Workload it names.
std::string gang_of(const ListedPod& pod) {
  auto mark = [&](const std::string& key) {
    auto it = pod.gang_marks.find(key);
    return it == pod.gang_marks.end() ? std::string() : it->second;
  };
  for (const char* k : {"scheduling.x-k8s.io/pod-group", "hypertopo.io/gang", "scheduling.k8s.io/group-name",
                        kSchedulingGroupMark}) {
    if (auto v = mark(k); !v.empty()) return pod.ns + "/" + v;
  }
  if (auto workload = mark(kWorkloadNameMark); !workload.empty()) {
    std::string key = pod.ns + "/" + workload + "/" + mark(kWorkloadPodGroupMark);
    if (auto replica = mark(kWorkloadReplicaKeyMark); !replica.empty()) key += "/" + replica;
    return key;
  }
  return "";
}

// Which job the --job file holds, as its pods would name it: the pods of a job are those of its
// gang in its namespace, by the gang keys the extender reads (ExtenderOptions gang_label_keys and
// gang_annotation_keys, the upstream PodGroup or Workload they name), or by the label the job's
// controller sets on its pods (a Volcano Job's PodGroup is named `<job>-<uid>` by Volcano's job
// controller, so its pods are found by volcano.sh/job-name).
struct JobIdentity {
  std::string ns;
  std::string name;
  std::string owner_label;  // the controller's label naming the job on its pods ("" when none)
  json object;              // the job's object (a PodGroup's subGroupPolicy tells its pods' sub-groups)
};

// The identity of the first object of `objects` that is not a Pod (its kind given beside it).
std::optional<JobIdentity> first_job_identity(
    const std::vector<std::pair<std::string, const json*>>& objects) {
  for (const auto& [kind, object] : objects) {
    if (kind == "Pod" || !object || !object->is_object()) continue;
    const json& meta = object->value("metadata", json::object());
    if (!meta.is_object()) continue;
    JobIdentity id;
    id.ns = meta.value("namespace", std::string("default"));
    id.name = meta.value("name", std::string());
    if (id.name.empty()) return std::nullopt;
    id.object = *object;
    const std::string api = object->value("apiVersion", std::string());
    const std::string group = api.substr(0, api.find('/'));
    if (kind == "Job" && group == "batch.volcano.sh") {
      id.owner_label = "volcano.sh/job-name";
    } else if (kind == "Job" && (group == "batch" || api == "batch/v1")) {
      id.owner_label = "batch.kubernetes.io/job-name";
    } else if (kind == "JobSet") {
      id.owner_label = "jobset.sigs.k8s.io/jobset-name";
    } else if (group == "kubeflow.org") {
      id.owner_label = "training.kubeflow.org/job-name";
    }
    return id;
  }
  return std::nullopt;
}

std::expected<std::optional<JobIdentity>, Error> job_identity(const std::filesystem::path& path) {
  auto file = io::read_objects(path);
  if (!file) return std::unexpected(file.error());
  std::vector<std::pair<std::string, const json*>> objects;
  for (const auto& o : file->objects) objects.emplace_back(o.kind, o.object);
  return first_job_identity(objects);
}

// The same of a List read from the cluster (place --pod-group): its PodGroup.
std::expected<std::optional<JobIdentity>, Error> job_identity(const json& list) {
  std::vector<std::pair<std::string, const json*>> objects;
  if (auto items = list.find("items"); items != list.end() && items->is_array()) {
    for (const auto& item : *items) objects.emplace_back(item.value("kind", std::string()), &item);
  }
  return first_job_identity(objects);
}

bool belongs_to(const ListedPod& pod, const JobIdentity& job) {
  if (pod.ns != job.ns) return false;
  if (!job.owner_label.empty()) {
    if (auto it = pod.labels.find(job.owner_label); it != pod.labels.end() && it->second == job.name)
      return true;
  }
  for (const char* k : {"scheduling.x-k8s.io/pod-group", "hypertopo.io/gang", "scheduling.k8s.io/group-name",
                        "pod-group-name", kSchedulingGroupMark, kWorkloadNameMark}) {
    if (auto it = pod.gang_marks.find(k); it != pod.gang_marks.end() && it->second == job.name) return true;
  }
  return false;
}

// A job of one pod set whose pods are partly running: the bound ones keep their nodes and ranks and
// the rest are planned around them as the extender's gang book does (around_bound.h). Assignments
// run in rank order, one per run of ranks on one node, bound pods marked.
// The sentence of a gang planned around its bound pods.
std::string around_bound_reason(const TopologyIndex& index, const AroundBound& around, bool fit,
                                const std::string& why) {
  const std::string where =
      around.common == index.root() ? std::string("the cluster") : index.domain(around.common).name;
  if (!fit) return around_bound_refusal(index, around, why);
  if (around.missing == 0)
    return "all " + std::to_string(around.bound) + " pods of the gang are bound already, in " + where;
  return std::to_string(around.bound) + " pods are bound in " + where + "; the other " +
         std::to_string(around.missing) + " are placed around them";
}

json around_pod_set(const TopologyIndex& index, const PodSetRequest& ps, const AroundBound& around);

json around_bound_result(const TopologyIndex& index, const PodSetRequest& ps, const AroundBound& around) {
  json out;
  out["fit"] = around.fit;
  out["reason"] = around_bound_reason(index, around, around.fit, around.why);
  out["podSets"] = json::array({around_pod_set(index, ps, around)});
  return out;
}

// A gang of several pod sets or sub-groups planned around its bound pods (place_gang_around_bound):
// one entry per pod set, as around_bound_result gives one.
json gang_around_bound_result(const TopologyIndex& index, const GangAroundBound& gang) {
  AroundBound whole;
  whole.bound = gang.bound;
  whole.missing = gang.missing;
  whole.common = gang.common;
  whole.widest = gang.widest;
  json out;
  out["fit"] = gang.fit;
  out["reason"] = around_bound_reason(index, whole, gang.fit, gang.why);
  out["podSets"] = json::array();
  for (std::size_t p = 0; p < gang.pod_sets.size(); ++p) {
    AroundBound set = gang.pod_sets[p];
    set.fit = gang.fit;
    out["podSets"].push_back(around_pod_set(index, gang.job.pod_sets[p], set));
  }
  return out;
}

// One pod set's entry: its slots in rank order, one assignment per run of ranks on one node.
json around_pod_set(const TopologyIndex& index, const PodSetRequest& ps, const AroundBound& around) {
  json p;
  p["name"] = ps.name;
  p["bound"] = around.bound;
  p["assignment"] = json::array();
  for (const auto& s : around.slots) {
    if (!around.fit && s.bound < 0) continue;
    json& last = p["assignment"].empty() ? p["assignment"] : p["assignment"].back();
    const bool bound = s.bound >= 0;
    if (!p["assignment"].empty() && last["node"] == s.node && last["bound"] == bound &&
        last["firstRank"].get<std::int32_t>() + last["count"].get<std::int32_t>() == s.rank) {
      last["count"] = last["count"].get<std::int32_t>() + 1;
      continue;
    }
    p["assignment"].push_back(
        {{"node", s.node}, {"count", 1}, {"firstRank", s.rank}, {"path", s.domain_path}, {"bound", bound}});
  }
  // The gang's domain: the deepest one every pod of it is in.
  std::vector<std::string> common;
  for (std::size_t i = 0; i < around.slots.size(); ++i) {
    const auto& path = around.slots[i].domain_path;
    if (i == 0) {
      common = path;
      continue;
    }
    std::size_t n = 0;
    while (n < common.size() && n < path.size() && common[n] == path[n]) ++n;
    common.resize(n);
  }
  int domain = index.root();
  for (auto it = common.rbegin(); it != common.rend() && domain == index.root(); ++it) {
    if (const int d = index.find_domain(*it); d >= 0) domain = d;
  }
  p["domains"] =
      around.fit && domain != index.root() ? json::array({index.domain(domain).name}) : json::array();
  p["tier"] = around.fit ? index.domain(domain).tier : 0;
  if (!around.fit) p["reason"] = around.why;
  if (around.placed && !around.placed->fabric_health.empty())
    p["fabricHealth"] = around.placed->fabric_health;
  return p;
}

// The pods preemption may evict: those on the index's nodes, with their priorities resolved.
std::expected<std::vector<PreemptionCandidate>, Error> running_pods(std::vector<ListedPod> listed,
                                                                    const TopologyIndex& index,
                                                                    const PriorityClassMap& classes) {
  std::vector<PreemptionCandidate> out;
  out.reserve(listed.size());
  for (auto& pod : listed) {
    const int node = index.find_node(pod.bound.node);
    if (node < 0) continue;
    PriorityRequest request;
    if (pod.priority_set) request.value = pod.priority;
    request.class_name = pod.priority_class;
    request.source = "Pod " + pod.ns + "/" + pod.name;
    auto priority = resolve_priority(classes, request, /*value_first=*/true);
    if (!priority) return std::unexpected(priority.error());
    std::string gang = gang_of(pod);
    out.push_back({.uid = std::move(pod.uid),
                   .ns = std::move(pod.ns),
                   .name = std::move(pod.name),
                   .node = node,
                   .priority = priority->value,
                   .requests = std::move(pod.bound.requests),
                   .gang = std::move(gang),
                   .start_time = std::move(pod.start_time),
                   .labels = std::move(pod.labels),
                   .terminating = pod.terminating});
  }
  return out;
}

// The cost of the chosen victims in one sentence: why this domain and these pods.
std::string cost_line(const PreemptionPlan& plan) {
  std::ostringstream out;
  out << (plan.domain.empty() ? std::string("the cluster") : plan.domain) << " (tier " << plan.tier
      << ") is the cheapest of " << plan.domains_considered
      << " domains tried, lowest tier first: " << plan.cost.victims << " victim"
      << (plan.cost.victims == 1 ? "" : "s");
  if (plan.cost.victims > 0) out << " of priority <= " << plan.cost.highest_priority;
  out << ", " << plan.cost.units << " unit" << (plan.cost.units == 1 ? "" : "s") << " of work lost ("
      << plan.broken_gangs.size() << " gang" << (plan.broken_gangs.size() == 1 ? "" : "s") << " broken), "
      << plan.cost.gpus_lost << " GPUs lost, " << plan.cost.budget_violations
      << " PodDisruptionBudget violation" << (plan.cost.budget_violations == 1 ? "" : "s");
  return out.str();
}

json preemption_result(const PreemptionPlan& plan, std::span<const PreemptionCandidate> pods,
                       const TopologyIndex& index, std::int32_t priority) {
  json victims = json::array();
  for (std::size_t i = 0; i < plan.victims.size(); ++i) {
    const PreemptionCandidate& v = pods[plan.victims[i]];
    json entry{{"namespace", v.ns},
               {"name", v.name},
               {"node", index.node(v.node).spec.name},
               {"priority", v.priority},
               {"violatesBudget", i < plan.violates_budget.size() && plan.violates_budget[i]}};
    if (!v.gang.empty()) entry["gang"] = v.gang;
    victims.push_back(std::move(entry));
  }
  json cost{{"budgetViolations", plan.cost.budget_violations},
            {"highestPriority", plan.cost.victims > 0 ? json(plan.cost.highest_priority) : json()},
            {"units", plan.cost.units},
            {"victims", plan.cost.victims},
            {"gpusLost", plan.cost.gpus_lost}};
  return {{"priority", priority},
          {"domain", plan.domain},
          {"tier", plan.tier},
          {"victims", std::move(victims)},
          {"brokenGangs", plan.broken_gangs},
          {"gpusEvicted", plan.gpus_evicted},
          {"domainsConsidered", plan.domains_considered},
          {"cost", std::move(cost)},
          {"why", cost_line(plan)}};
}

void emit_yaml(YAML::Emitter& e, const json& v) {
  if (v.is_object()) {
    e << YAML::BeginMap;
    for (const auto& [k, x] : v.items()) {
      e << YAML::Key << k << YAML::Value;
      emit_yaml(e, x);
    }
    e << YAML::EndMap;
  } else if (v.is_array()) {
    e << YAML::BeginSeq;
    for (const auto& x : v) emit_yaml(e, x);
    e << YAML::EndSeq;
  } else if (v.is_string()) {
    e << YAML::DoubleQuoted << v.get<std::string>();
  } else if (v.is_boolean()) {
    e << v.get<bool>();
  } else if (v.is_number_integer()) {
    e << v.get<std::int64_t>();
  } else if (v.is_number()) {
    e << v.get<double>();
  } else {
    e << YAML::Null;
  }
}

// The indentation of a line at `depth` of the domain tree: two spaces a level, up to 40 levels; deeper
// lines say their depth instead, so that a tree of absurd depth (30,000 tiers) prints in space linear
// in its depth, not quadratic.
std::string indent(std::size_t depth) {
  constexpr std::size_t kMaxIndentLevels = 40;
  if (depth <= kMaxIndentLevels) return std::string(2 * depth, ' ');
  return std::string(2 * kMaxIndentLevels, ' ') + "[" + std::to_string(depth) + "] ";
}

// The result with each of its strings (domain, node, pod and gang names, reasons) made safe to print:
// they come from the cluster's objects, and the text is read in a terminal.
json terminal_safe_strings(const json& value) {
  if (value.is_string()) return text::terminal_safe(value.get_ref<const std::string&>());
  if (value.is_object()) {
    json out = json::object();
    for (const auto& [k, v] : value.items()) out[k] = terminal_safe_strings(v);
    return out;
  }
  if (value.is_array()) {
    json out = json::array();
    for (const auto& v : value) out.push_back(terminal_safe_strings(v));
    return out;
  }
  return value;
}

std::string render_text(const json& raw_result) {
  const json result = terminal_safe_strings(raw_result);
  std::ostringstream out;
  const auto preemption = result.find("preemption");
  out << (result["fit"].get<bool>() ? "fit" : "no fit");
  if (preemption != result.end()) {
    const std::size_t victims = (*preemption)["victims"].size();
    // No victim: the room is that of pods already terminating.
    if (victims == 0)
      out << " once the terminating pods leave";
    else
      out << " after preempting " << victims << " pod" << (victims == 1 ? "" : "s");
  }
  if (!result["reason"].get<std::string>().empty()) out << ": " << result["reason"].get<std::string>();
  out << "\n";
  for (const auto& ps : result["podSets"]) {
    std::int64_t pods = 0;
    for (const auto& a : ps["assignment"]) pods += a["count"].get<std::int64_t>();
    out << "pod set " << ps["name"].get<std::string>() << ": " << pods << " pods, tier "
        << ps["tier"].get<int>();
    if (!ps["domains"].empty()) {
      out << ", domain";
      for (const auto& d : ps["domains"]) out << " " << d.get<std::string>();
    }
    if (ps.contains("bound")) out << ", " << ps["bound"].get<std::int64_t>() << " bound";
    out << "\n";
    if (auto notes = ps.find("fabricHealth"); notes != ps.end()) {
      for (const auto& note : *notes) out << "  fabric health: " << note.get<std::string>() << "\n";
    }
    std::vector<std::string> open;  // the domain path printed so far
    for (const auto& a : ps["assignment"]) {
      std::vector<std::string> path =
          a.contains("path") ? a["path"].get<std::vector<std::string>>() : std::vector<std::string>{};
      std::size_t common = 0;
      while (common < open.size() && common < path.size() && open[common] == path[common]) ++common;
      for (std::size_t i = common; i < path.size(); ++i) out << indent(i + 1) << path[i] << "\n";
      open = path;
      const std::int64_t first = a["firstRank"].get<std::int64_t>();
      const std::int64_t count = a["count"].get<std::int64_t>();
      std::string where;
      if (a.contains("node")) {
        where = a["node"].get<std::string>();
      } else {
        for (const auto& v : a["domain"]) where += (where.empty() ? "" : "/") + v.get<std::string>();
        where = "domain " + where;
      }
      out << indent(path.size() + 1) << where << "  x" << count << "  ranks " << first << "-"
          << first + count - 1 << (a.value("bound", false) ? "  bound" : "") << "\n";
    }
  }
  if (preemption != result.end()) {
    const json& p = *preemption;
    const std::string domain = p["domain"].get<std::string>();
    out << "preemption (priority " << p["priority"].get<std::int64_t>() << "): evict " << p["victims"].size()
        << " pod" << (p["victims"].size() == 1 ? "" : "s") << " in "
        << (domain.empty() ? "the cluster" : domain) << " (tier " << p["tier"].get<int>() << ")\n";
    for (const auto& v : p["victims"]) {
      out << "  " << v["namespace"].get<std::string>() << "/" << v["name"].get<std::string>() << "  on "
          << v["node"].get<std::string>() << "  priority " << v["priority"].get<std::int64_t>();
      if (v.contains("gang")) out << "  gang " << v["gang"].get<std::string>();
      if (v["violatesBudget"].get<bool>()) out << "  violates its PodDisruptionBudget";
      out << "\n";
    }
    if (!p["brokenGangs"].empty()) {
      out << "  gangs broken:";
      for (const auto& g : p["brokenGangs"]) out << " " << g.get<std::string>();
      out << "\n";
    }
    out << "  why: " << p["why"].get<std::string>() << "\n";
  }
  return out.str();
}

// The objects that no flag read, named first: they may be why the answer surprises.
PlacementReport with_ledger_warnings(PlacementReport report, const io::ObjectLedger& ledger) {
  auto lines = ledger.warnings();
  report.warnings.insert(report.warnings.begin(), lines.begin(), lines.end());
  return report;
}

}  // namespace

std::expected<PlacementReport, Error> run_placement(const PlaceInputs& in) {
  if (in.semantics != "auto" && in.semantics != "engine" && in.semantics != "kueue") {
    return fail(ErrorCode::kInvalidArgument,
                "--semantics must be auto, engine or kueue, got '" + in.semantics + "'");
  }
  PlacementReport report;
  auto start = Clock::now();
  // What each file holds beside the kinds its flag reads: PriorityClasses and PodDisruptionBudgets
  // in the nodes or pods list (`kubectl get pods,pdb,priorityclasses -A -o json` gives one List of
  // all three) are read for preemption; a kind no flag reads is named in a warning.
  io::ObjectLedger ledger;
  // A kind no file gives comes from the cluster, when one was read.
  const ClusterSnapshot* cluster = in.cluster.get();
  const bool pods_from_cluster = !in.pods && cluster && cluster->has_pods;
  auto nodes = in.nodes.empty() && cluster && cluster->has_nodes
                   ? std::expected<std::vector<NodeSpec>, Error>(cluster->nodes)
                   : load_nodes(in.nodes, &ledger);
  if (!nodes) return std::unexpected(nodes.error());
  std::vector<BoundPod> pods;
  if (in.pods) {
    auto p = load_pods(*in.pods, &ledger);
    if (!p) return std::unexpected(p.error());
    pods = std::move(*p);
  } else if (pods_from_cluster) {
    pods = bound_pods(*cluster);
  }
  PriorityClassMap classes = builtin_priority_classes();
  for (const auto* from : {&in.nodes, in.pods ? &*in.pods : nullptr}) {
    if (!from) continue;
    for (const auto& pc : ledger.take(from->string(), "PriorityClass")) {
      if (auto ok = add_priority_class(classes, pc, from->string()); !ok) return std::unexpected(ok.error());
    }
  }
  if (in.priority_classes) {
    if (auto ok = load_priority_classes(*in.priority_classes, classes); !ok)
      return std::unexpected(ok.error());
  } else if (cluster && cluster->has_priority_classes) {
    for (const auto& pc : cluster->priority_classes) {
      if (auto ok = add_priority_class(classes, pc, cluster->source); !ok) return std::unexpected(ok.error());
    }
  }
  std::vector<DisruptionBudget> budgets;
  if (in.pods) {
    for (const auto& b : ledger.take(in.pods->string(), "PodDisruptionBudget")) {
      auto budget = parse_disruption_budget(b, in.pods->string());
      if (!budget) return std::unexpected(budget.error());
      budgets.push_back(std::move(*budget));
    }
  } else if (pods_from_cluster) {
    for (const auto& b : cluster->disruption_budgets) {
      auto budget = parse_disruption_budget(b, cluster->source);
      if (!budget) return std::unexpected(budget.error());
      budgets.push_back(std::move(*budget));
    }
  }
  auto topology = in.topology.empty() && cluster && cluster->has_topology
                      ? std::expected<TopologySource, Error>(cluster->topology)
                      : load_topology(in.topology, &ledger);
  if (!topology) return std::unexpected(topology.error());
  // The job: the --job file, else the PodGroup and its Pods read from the cluster (--pod-group).
  const bool job_from_cluster = in.job.empty() && cluster && cluster->pod_group.is_object();
  const std::string job_source = job_from_cluster ? cluster->pod_group_from : in.job.string();
  auto job = job_from_cluster ? parse_job(cluster->pod_group, *nodes) : load_job(in.job, *nodes, &ledger);
  if (!job && job_from_cluster) return std::unexpected(job.error().context(job_source));
  if (!job) return std::unexpected(job.error());
  SchedulerConfig config;
  if (in.scheduler_config) {
    auto c = load_scheduler_config_file(*in.scheduler_config);
    if (!c) return std::unexpected(c.error());
    config = *c;
    report.warnings = config.warnings;
  }
  if (!in.fabric_health.empty()) {
    auto mode = parse_fabric_health_mode(in.fabric_health);
    if (!mode) {
      return fail(ErrorCode::kInvalidArgument, std::string("--fabric-health must be ") + kFabricHealthModes +
                                                   ", got '" + in.fabric_health + "'");
    }
    config.fabric_health = *mode;
  }
  for (const auto& ps : job->request.pod_sets) {
    if (ps.count > config.max_pods_per_job) {
      return fail(ErrorCode::kInvalidArgument,
                  "pod set " + ps.name + " asks for " + std::to_string(ps.count) +
                      " pods, above hypertopo.maxPodsPerJob " + std::to_string(config.max_pods_per_job));
    }
  }
  report.read_ms = ledger.read_ms();
  report.parse_ms = ms_since(start) - report.read_ms;
  if (!job->waits.empty()) {
    // Its scheduler does not try it until its pods have come; neither does the extender.
    report.semantics = "engine";
    report.result = {{"fit", false}, {"reason", job->waits}, {"podSets", json::array()}};
    return with_ledger_warnings(std::move(report), ledger);
  }
  std::string semantics = in.semantics;
  if (semantics == "auto") {
    // A batch/v1 Job on a Kueue Topology is Kueue's to place, annotated or not (no annotation:
    // Kueue's "implied" unconstrained request).
    const bool kueue_job = job->format == "kueue" || job->format == "batch";
    semantics = topology->kind == TopologySource::Kind::kLevels && (kueue_job || config.profile == "kueue")
                    ? "kueue"
                    : "engine";
  }
  start = Clock::now();
  // The index takes the nodes; only Kueue's snapshot reads them again (a copy of 6,000 Nodes' labels
  // and amounts costs as much as building the tree).
  auto index = semantics == "kueue" ? build_index(*topology, *nodes, pods)
                                    : build_index(*topology, std::move(*nodes), pods);
  if (!index) return std::unexpected(index.error().context("while building the topology index"));
  report.index_ms = ms_since(start);
  if (job->min_resources) {
    // A coscheduling PodGroup's minResources: the plugin's PreFilter tries none of its pods while
    // the cluster's free resources fall short of them; neither does the extender.
    if (std::string gap = min_resources_gap(*job->min_resources, *index); !gap.empty()) {
      report.semantics = "engine";
      report.result = {{"fit", false}, {"reason", std::move(gap)}, {"podSets", json::array()}};
      return with_ledger_warnings(std::move(report), ledger);
    }
  }
  if (semantics == "kueue" && topology->kind != TopologySource::Kind::kLevels) {
    return fail(ErrorCode::kInvalidArgument, "--semantics kueue needs a Kueue Topology as --topology");
  }
  report.semantics = semantics;
  start = Clock::now();
  if (semantics == "kueue") {
    std::vector<KueuePodSet> sets;
    for (const auto& ps : job->request.pod_sets) {
      if (ps.partitions) {
        return fail(ErrorCode::kInvalidArgument,
                    "pod set " + ps.name + ": Kueue has no partitions; use --semantics engine");
      }
      sets.push_back(to_kueue(ps));
    }
    auto gates = parse_kueue_gates(in.kueue_feature_gates);
    if (!gates) return std::unexpected(gates.error());
    std::map<std::string, std::string> flavor;
    if (in.resource_flavor) {
      auto f = flavor_labels(*in.resource_flavor, topology->levels.name, ledger);
      if (!f) return std::unexpected(f.error());
      flavor = std::move(*f);
    }
    KueueTopologySnapshot snapshot(topology->levels.levels, *nodes, pods, flavor, topology->levels.name);
    const auto results = snapshot.find_assignments(sets, *gates);
    for (std::size_t i = 0; i < results.size(); ++i) {
      if (auto field = kueue_request_fault(results[i].failure)) {
        // Kueue rejects such a request outright; it is not a "does not fit".
        return fail(ErrorCode::kInvalidArgument, job_source + ": pod set " + results[i].name + ": " +
                                                     results[i].failure + " (" + *field + ")");
      }
    }
    report.result = kueue_result(results, job->request, *index, topology->levels.levels, flavor);
  } else {
    for (const auto& ps : job->request.pod_sets) {
      for (const auto& layer : ps.slices) {
        if (layer.size <= 0) {
          return fail(ErrorCode::kInvalidArgument, job_source + ": pod set " + ps.name +
                                                       ": slice topology requested, but slice size not "
                                                       "provided (kueue.x-k8s.io/podset-slice-size)");
        }
      }
    }
    // A level named by a node label (an upstream PodGroup's topology key) over HyperNodes not named by
    // it means a tier, as the extender reads it.
    resolve_label_levels(*index, job->request);
    PlacementEngine engine(*index, config.binpack, config.fabric_health);
    // A job of one pod set whose pods are partly running is planned around them, as the extender
    // plans such a gang; other jobs, and jobs of several pod sets, are placed whole.
    // The job's pods come from --pods, else from the cluster's pods, read by the same reader.
    // An elastic one (minAvailable below its pods) is placed for its minimum, then grows pod by pod
    // as Volcano and the extender grow it (around_bound.h place_elastic).
    if (job->request.pod_sets.size() == 1 && job->request.sub_groups.empty() &&
        (!job->request.grouped() || job->request.pod_sets.front().mode != TopologyMode::kNone)) {
      auto identity = job_from_cluster ? job_identity(cluster->pod_group) : job_identity(in.job);
      if (!identity) return std::unexpected(identity.error());
      std::expected<std::vector<ListedPod>, Error> listed = std::vector<ListedPod>{};
      if (*identity && (in.pods || pods_from_cluster))
        listed = in.pods ? load_listed_pods(*in.pods) : cluster->pods;
      if (!listed)
        return std::unexpected(listed.error().context(in.pods ? in.pods->string() : cluster->source));
      const PodSetRequest& ps = job->request.pod_sets.front();
      std::vector<BoundGangPod> bound;
      for (const auto& pod : *listed) {
        if (pod.terminating || index->find_node(pod.bound.node) < 0 || !belongs_to(pod, **identity)) continue;
        json marks{{"metadata", {{"labels", pod.gang_marks}}}};
        auto rank = pod_index(marks);
        if (!rank) return std::unexpected(rank.error().context("Pod " + pod.ns + "/" + pod.name));
        bound.push_back({.node = pod.bound.node, .rank = *rank ? (*rank)->rank_in(ps.count) : -1});
      }
      if (ps.min_count > 0 && ps.min_count < ps.count && !ps.partitions && ps.slices.empty()) {
        auto elastic = place_elastic(*index, engine, ps, bound);
        if (!elastic) return std::unexpected(elastic.error().context(job_source));
        // A minimum that fits nowhere, with no pod bound, goes on to the whole-job answer and its
        // preemption below.
        if (elastic->around.fit || !bound.empty()) {
          report.result = around_bound_result(*index, ps, elastic->around);
          if (elastic->around.fit && bound.empty()) report.result["reason"] = "";
          if (elastic->around.fit && !elastic->left.empty()) {
            // As engine_result says a pod set that started with fewer pods than asked.
            const std::int32_t placed = ps.count - static_cast<std::int32_t>(elastic->left.size());
            const std::string why = "placed " + std::to_string(placed) + " of " + std::to_string(ps.count) +
                                    " pods (minAvailable " + std::to_string(ps.min_count) +
                                    "): the others wait for room near them";
            std::string& reason = report.result["reason"].get_ref<std::string&>();
            reason += (reason.empty() ? "" : "; ") + why;
            report.result["podSets"][0]["reason"] = why;
            report.result["podSets"][0]["placed"] = placed;
          }
          report.place_ms = ms_since(start);
          return with_ledger_warnings(std::move(report), ledger);
        }
      } else if (!bound.empty()) {
        auto around =
            place_around_bound(*index, engine, ps, bound, ps.count - static_cast<std::int32_t>(bound.size()));
        if (!around) return std::unexpected(around.error().context(job_source));
        report.result = around_bound_result(*index, ps, *around);
        report.place_ms = ms_since(start);
        return with_ledger_warnings(std::move(report), ledger);
      }
    }
    // A gang of several pod sets or sub-groups read from its PodGroup (KAI's, Volcano's with
    // subGroupPolicy), some of whose pods run: planned around them by the
    // rule the extender's gang book follows for the same objects (around_bound.h
    // place_gang_around_bound), its running pods kept where they are.
    const bool pod_group_gang =
        !job->request.sub_groups.empty() || (job->request.pod_sets.size() > 1 && job->format == "kai");
    if (pod_group_gang && plans_around_bound_by_groups(job->request) && (in.pods || pods_from_cluster)) {
      auto identity = job_from_cluster ? job_identity(cluster->pod_group) : job_identity(in.job);
      if (!identity) return std::unexpected(identity.error());
      std::expected<std::vector<ListedPod>, Error> listed = std::vector<ListedPod>{};
      if (*identity) listed = in.pods ? load_listed_pods(*in.pods) : cluster->pods;
      if (!listed)
        return std::unexpected(listed.error().context(in.pods ? in.pods->string() : cluster->source));
      std::vector<GangBoundPod> bound;
      for (const auto& pod : *listed) {
        if (pod.terminating || index->find_node(pod.bound.node) < 0 || !belongs_to(pod, **identity)) continue;
        std::string sub;
        if (job->format == "kai") {
          if (auto it = pod.labels.find(kKaiSubGroupLabel); it != pod.labels.end()) sub = it->second;
        } else if (job->format == "volcano") {
          auto found = volcano_sub_group_of((*identity)->object, pod.labels);
          if (!found) return std::unexpected(found.error().context("Pod " + pod.ns + "/" + pod.name));
          sub = *found;
        }
        bound.push_back(
            {.node = pod.bound.node, .sub_group = std::move(sub), .requests = pod.bound.requests});
      }
      if (!bound.empty()) {
        auto gang = place_gang_around_bound(*index, engine, job->request, bound, /*counted=*/true);
        if (!gang) return std::unexpected(gang.error().context(job_source));
        report.result = gang_around_bound_result(*index, *gang);
        report.place_ms = ms_since(start);
        return with_ledger_warnings(std::move(report), ledger);
      }
    }
    auto placed = engine.place(job->request);
    if (!placed) return std::unexpected(placed.error());
    report.result = engine_result(*placed);
    report.place_ms = ms_since(start);
    // A job of sub-groups (KAI, Volcano subGroupPolicy) is placed group by group; the victim
    // planner knows one gang under one constraint, which a job-level KAI constraint is when its one
    // pod set carries it too (a batch/v1 Job with KAI's annotations).
    const bool one_gang =
        job->request.pod_sets.size() == 1 && job->request.sub_groups.empty() &&
        (!job->request.grouped() || job->request.pod_sets.front().mode != TopologyMode::kNone);
    if (!placed->fit && (in.pods || pods_from_cluster) && one_gang) {
      start = Clock::now();
      const PriorityRequest request = job->priorities.empty() ? PriorityRequest{} : job->priorities.front();
      auto mine = resolve_priority(classes, request, /*value_first=*/false);
      if (!mine) return std::unexpected(mine.error().context(job_source));
      const std::string pods_from = in.pods ? in.pods->string() : cluster->source;
      auto listed =
          in.pods ? load_listed_pods(*in.pods) : std::expected<std::vector<ListedPod>, Error>(cluster->pods);
      if (!listed) return std::unexpected(listed.error().context(pods_from));
      auto running = running_pods(std::move(*listed), *index, classes);
      if (!running) return std::unexpected(running.error().context(pods_from));
      const bool lower = std::any_of(running->begin(), running->end(), [&](const PreemptionCandidate& p) {
        return !p.terminating && p.priority < mine->value;
      });
      std::string why;
      if (lower) {
        auto plan = plan_with_victims(*index, job->request.pod_sets.front(), *running, budgets,
                                      {.priority = mine->value, .never = mine->never}, config.binpack,
                                      config.fabric_health);
        if (!plan) return std::unexpected(plan.error());
        if (plan->fit) {
          report.result =
              engine_result(JobPlacement{.fit = true, .reason = "", .pod_sets = {plan->placement}});
          report.result["preemption"] = preemption_result(*plan, *running, *index, mine->value);
        } else {
          why = plan->reason;
        }
      } else if (mine->stated) {
        why = "no running pod has a priority below the job's " + std::to_string(mine->value);
      }
      if (!why.empty())
        report.result["reason"] = report.result["reason"].get<std::string>() + "; with preemption: " + why;
      report.preempt_ms = ms_since(start);
    }
    return with_ledger_warnings(std::move(report), ledger);
  }
  report.place_ms = ms_since(start);
  return with_ledger_warnings(std::move(report), ledger);
}

std::string render_report(const PlacementReport& report, const std::string& format) {
  if (format == "yaml") {
    YAML::Emitter e;
    emit_yaml(e, report.result);
    return std::string(e.c_str()) + "\n";
  }
  if (format == "text") return render_text(report.result);
  return io::json_text(report.result, 2) + "\n";
}

}  // namespace hypertopo::scheduler
