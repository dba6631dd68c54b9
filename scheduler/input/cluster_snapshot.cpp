#include "scheduler/input/cluster_snapshot.h"

#include <optional>
#include <span>
#include <utility>

#include "io/json_fields.h"
#include "k8s/client/kube_client.h"
#include "scheduler/input/pod_group_kinds.h"

namespace hypertopo::scheduler {
namespace {

const k8s::Resource kPods{"", "v1", "pods", true};
const k8s::Resource kHyperNodes{"topology.volcano.sh", "v1alpha1", "hypernodes", false};
const k8s::Resource kPriorityClasses{"scheduling.k8s.io", "v1", "priorityclasses", false};
const k8s::Resource kBudgets{"policy", "v1", "poddisruptionbudgets", true};
// Kueue serves v1beta2 from 0.15 on and v1beta1 before; an older cluster answers 404 for v1beta2.
const k8s::Resource kKueueTopologies[] = {{"kueue.x-k8s.io", "v1beta2", "topologies", false},
                                          {"kueue.x-k8s.io", "v1beta1", "topologies", false}};
std::string name_of(const k8s::Resource& r) { return resource_name(r); }

ClusterReadError api_error(const k8s::ApiError& e, const k8s::Resource& r) {
  return {e.error.context("listing " + name_of(r)), true};
}

ClusterReadError object_error(const Error& e, const k8s::Resource& r, const std::string& source) {
  return {e.context(name_of(r) + " of the cluster (" + source + ")"), false};
}

// Every page read as it arrives and dropped before the next: the list costs one page of text.
template <typename T, typename Parse>
std::expected<std::vector<T>, ClusterReadError> read_paged(k8s::KubeClient& client, const k8s::Resource& r,
                                                           int page_size, const std::string& source,
                                                           Parse parse) {
  std::vector<T> out;
  std::optional<Error> bad;
  auto listed =
      client.list_each_page(r, "", {.page_size = page_size}, [&](std::string& page) -> k8s::ApiResult<void> {
        auto read = parse(std::span<const std::string>(&page, 1));
        if (!read) {
          bad = read.error();
          return std::unexpected(k8s::ApiError{.error = read.error()});
        }
        if (out.empty()) {
          out = std::move(*read);
        } else {
          out.insert(out.end(), std::make_move_iterator(read->begin()), std::make_move_iterator(read->end()));
        }
        page.clear();
        page.shrink_to_fit();
        return {};
      });
  if (bad) return std::unexpected(object_error(*bad, r, source));
  if (!listed) return std::unexpected(api_error(listed.error(), r));
  return out;
}

// A list of a kind whose CRD may be absent: 404 is an empty list.
std::expected<std::optional<std::vector<nlohmann::json>>, ClusterReadError> list_optional(
    k8s::KubeClient& client, const k8s::Resource& r, int page_size) {
  auto listed = client.list(r, "", {.page_size = page_size});
  if (!listed && listed.error().not_found()) return std::nullopt;
  if (!listed) return std::unexpected(api_error(listed.error(), r));
  return std::move(listed->items);
}

std::expected<void, ClusterReadError> read_topology(k8s::KubeClient& client,
                                                    const ClusterReadRequest& request,
                                                    const std::string& source, ClusterSnapshot& out) {
  // The HyperNodes: read from the objects when they were listed as such, else listed a page at a time.
  std::optional<std::expected<std::vector<HyperNodeSpec>, Error>> specs;
  if (out.has_hypernode_objects) {
    specs = parse_hypernode_items(out.hypernode_objects);
  } else {
    auto hypernodes = client.list_pages(kHyperNodes, "", {.page_size = request.page_size});
    if (!hypernodes && !hypernodes.error().not_found())
      return std::unexpected(api_error(hypernodes.error(), kHyperNodes));
    if (hypernodes) specs = parse_hypernode_pages(hypernodes->pages);
  }
  if (specs) {
    if (!*specs) return std::unexpected(object_error(specs->error(), kHyperNodes, source));
    out.topology.kind = TopologySource::Kind::kHyperNodes;
    out.topology.hypernodes = std::move(**specs);
    out.topology_from = "HyperNodes";
    if (!out.topology.hypernodes.empty()) return {};
  }
  for (const auto& r : kKueueTopologies) {
    auto topologies = list_optional(client, r, request.page_size);
    if (!topologies) return std::unexpected(topologies.error());
    if (!*topologies || (*topologies)->empty()) continue;
    auto& items = **topologies;
    if (items.size() > 1) {
      std::string names;
      for (const auto& t : items) {
        names +=
            (names.empty() ? "" : ", ") + t.value("/metadata/name"_json_pointer, std::string("(no name)"));
      }
      return std::unexpected(ClusterReadError{
          Error(ErrorCode::kInvalidArgument, "the cluster (" + source + ") has no HyperNodes and " +
                                                 std::to_string(items.size()) + " Kueue Topologies (" +
                                                 names + "): give the one to place on as a --topology file"),
          false});
    }
    // A list's items may come without kind; the reader tells a Topology by it.
    nlohmann::json topology = std::move(items.front());
    if (topology.is_object()) topology["kind"] = "Topology";
    auto read = parse_topology(topology);
    if (!read) return std::unexpected(object_error(read.error(), r, source));
    out.topology = std::move(*read);
    out.topology_from = "Topology " + out.topology.levels.name + " (" + r.group + "/" + r.version + ")";
    return {};
  }
  return {};
}

using io::object_at;
using io::str_at;

// `place --pod-group`: the PodGroup `ns/name` and the Pods that name it, as one List.
std::expected<void, ClusterReadError> read_pod_group(k8s::KubeClient& client,
                                                     const ClusterReadRequest& request,
                                                     ClusterSnapshot& out) {
  const auto slash = request.pod_group.find('/');
  const std::string ns = request.pod_group.substr(0, slash);
  const std::string name = slash == std::string::npos ? "" : request.pod_group.substr(slash + 1);
  if (ns.empty() || name.empty() || name.find('/') != std::string::npos) {
    return std::unexpected(
        ClusterReadError{Error(ErrorCode::kInvalidArgument,
                               "--pod-group '" + request.pod_group + "': expected NAMESPACE/NAME"),
                         false});
  }
  const k8s::ListOptions by_name{.field_selector = "metadata.name=" + name, .page_size = request.page_size};
  const PodGroupKindInfo* kind = nullptr;
  nlohmann::json group;
  std::string kinds, searched;
  // The PodGroup kinds the extender's watcher lists, from the same table (pod_group_kinds.h). A
  // Workload is not a PodGroup: its gangs are its spec.podGroups, which --pod-group does not name.
  for (const auto& k : pod_group_kinds()) {
    if (std::string(k.object_kind) != "PodGroup") continue;
    searched += (searched.empty() ? "" : ", ") + name_of(k.resource);
    auto listed = client.list(k.resource, ns, by_name);
    if (!listed && (listed.error().not_found() || listed.error().http_status == 403)) continue;  // no CRD
    if (!listed) return std::unexpected(api_error(listed.error(), k.resource));
    for (auto& item : listed->items) {
      if (str_at(object_at(item, "metadata"), "name") != name) continue;
      kinds += (kinds.empty() ? "" : ", ") + name_of(k.resource);
      kind = &k;
      group = std::move(item);
    }
  }
  const std::string label = "PodGroup " + request.pod_group;
  if (!kind) {
    return std::unexpected(
        ClusterReadError{Error(ErrorCode::kNotFound,
                               label + " not found in the cluster (" + out.source + ") among " + searched),
                         false});
  }
  if (kinds.find(',') != std::string::npos) {
    return std::unexpected(ClusterReadError{
        Error(ErrorCode::kInvalidArgument, label + " is in several kinds of the cluster (" + out.source +
                                               "): " + kinds + "; give the one to place as a --job List"),
        false});
  }
  // List items come without kind and apiVersion; the job readers tell a PodGroup by them.
  group["kind"] = kind->object_kind;
  group["apiVersion"] = api_version(kind->resource);
  nlohmann::json items = nlohmann::json::array({std::move(group)});
  auto pods = client.list(kPods, ns, {.page_size = request.page_size});
  if (!pods) return std::unexpected(api_error(pods.error(), kPods));
  for (auto& pod : pods->items) {
    const nlohmann::json& meta = object_at(pod, "metadata");
    const std::string phase = str_at(object_at(pod, "status"), "phase");
    // A pod finished or on its way out is no longer one of the gang's: its replacement is.
    if (group_named(pod, *kind) != name || phase == "Succeeded" || phase == "Failed" ||
        (meta.contains("deletionTimestamp") && !meta["deletionTimestamp"].is_null()))
      continue;
    pod["kind"] = "Pod";
    pod["apiVersion"] = "v1";
    items.push_back(std::move(pod));
  }
  out.pod_group = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", std::move(items)}};
  out.pod_group_from = label + " (" + api_version(kind->resource) + ") of the cluster (" + out.source + ")";
  return {};
}

}  // namespace

std::expected<ClusterSnapshot, ClusterReadError> read_cluster(k8s::KubeClient& client,
                                                              const ClusterReadRequest& request,
                                                              std::string source) {
  ClusterSnapshot out;
  out.source = std::move(source);
  if (request.nodes) {
    auto nodes = read_paged<NodeSpec>(client, k8s::kNodesResource, request.page_size, out.source,
                                      [](std::span<const std::string> p) { return parse_node_pages(p); });
    if (!nodes) return std::unexpected(nodes.error());
    out.nodes = std::move(*nodes);
    out.has_nodes = true;
  }
  if (request.pods) {
    auto pods = read_paged<ListedPod>(client, kPods, request.page_size, out.source,
                                      [](std::span<const std::string> p) { return parse_pod_pages(p); });
    if (!pods) return std::unexpected(pods.error());
    out.pods = std::move(*pods);
    out.has_pods = true;
  }
  if (request.pods && request.disruption_budgets) {
    auto budgets = list_optional(client, kBudgets, request.page_size);
    if (!budgets) return std::unexpected(budgets.error());
    if (*budgets) out.disruption_budgets = std::move(**budgets);
  }
  if (request.hypernode_objects) {
    auto hypernodes = list_optional(client, kHyperNodes, request.page_size);
    if (!hypernodes) return std::unexpected(hypernodes.error());
    if (*hypernodes) out.hypernode_objects = std::move(**hypernodes);
    out.has_hypernode_objects = true;
  }
  if (request.topology) {
    if (auto ok = read_topology(client, request, out.source, out); !ok) return std::unexpected(ok.error());
    out.has_topology = true;
  }
  if (!request.pod_group.empty()) {
    if (auto ok = read_pod_group(client, request, out); !ok) return std::unexpected(ok.error());
  }
  if (request.priority_classes) {
    auto classes = list_optional(client, kPriorityClasses, request.page_size);
    if (!classes) return std::unexpected(classes.error());
    if (*classes) out.priority_classes = std::move(**classes);
    out.has_priority_classes = true;
  }
  return out;
}

std::vector<BoundPod> bound_pods(const ClusterSnapshot& snapshot) {
  std::vector<BoundPod> out;
  out.reserve(snapshot.pods.size());
  for (const auto& p : snapshot.pods) out.push_back(p.bound);
  return out;
}

}  // namespace hypertopo::scheduler
