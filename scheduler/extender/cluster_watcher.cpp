#include "scheduler/extender/cluster_watcher.h"

#include "scheduler/input/pod_group_kinds.h"

namespace hypertopo::scheduler {
namespace {

const k8s::Resource kNodesResource{"", "v1", "nodes", false};
const k8s::Resource kPodsResource{"", "v1", "pods", true};
const k8s::Resource kHyperNodesResource{"topology.volcano.sh", "v1alpha1", "hypernodes", false};
const k8s::Resource kBudgetsResource{"policy", "v1", "poddisruptionbudgets", true};

bool is_group_kind(int kind) { return kind >= 3 && kind <= 7; }

// "Node n-1", "Pod ml/p-0": the object an error is about, as kubectl would name it.
std::string object_label(const std::string& kind, const nlohmann::json& object) {
  const nlohmann::json* meta =
      object.is_object() && object.contains("metadata") && object["metadata"].is_object()
          ? &object["metadata"]
          : nullptr;
  auto text = [&](const char* key) {
    return meta && meta->contains(key) && (*meta)[key].is_string() ? (*meta)[key].get<std::string>()
                                                                   : std::string();
  };
  const std::string ns = text("namespace");
  const std::string name = text("name");
  return kind + " " + (ns.empty() ? std::string() : ns + "/") + (name.empty() ? "(no name)" : name);
}

}  // namespace

PodGroupKind ClusterWatcher::group_kind(Kind kind) {
  switch (kind) {
    case Kind::kVolcanoPodGroups:
      return PodGroupKind::kVolcano;
    case Kind::kUpstreamPodGroups:
      return PodGroupKind::kUpstream;
    case Kind::kWorkloads:
      return PodGroupKind::kWorkload;
    case Kind::kKaiPodGroups:
      return PodGroupKind::kKai;
    default:
      return PodGroupKind::kCoscheduling;
  }
}

ClusterWatcher::ClusterWatcher(k8s::KubeClient& client, ExtenderService& service,
                               std::chrono::milliseconds retry_backoff, int list_page_size)
    : client_(client), service_(service), retry_backoff_(retry_backoff), list_page_size_(list_page_size) {}

ClusterWatcher::~ClusterWatcher() { stop(); }

const k8s::Resource& ClusterWatcher::resource_of(Kind kind) {
  switch (kind) {
    case Kind::kNodes:
      return kNodesResource;
    case Kind::kPods:
      return kPodsResource;
    case Kind::kHyperNodes:
      return kHyperNodesResource;
    case Kind::kPodGroups:
    case Kind::kVolcanoPodGroups:
    case Kind::kUpstreamPodGroups:
    case Kind::kWorkloads:
    case Kind::kKaiPodGroups:
      // The gang kinds' resources: the table `place --pod-group` reads them by (pod_group_kinds.h).
      return pod_group_kind(group_kind(kind)).resource;
    case Kind::kDisruptionBudgets:
      break;
  }
  return kBudgetsResource;
}

void ClusterWatcher::start() {
  constexpr Kind kAll[] = {Kind::kNodes,
                           Kind::kPods,
                           Kind::kHyperNodes,
                           Kind::kPodGroups,
                           Kind::kVolcanoPodGroups,
                           Kind::kUpstreamPodGroups,
                           Kind::kWorkloads,
                           Kind::kKaiPodGroups,
                           Kind::kDisruptionBudgets};
  // Every kind gates readiness, not only Nodes, Pods and HyperNodes: a gang planned before its
  // PodGroup landed is sized 1 (or by annotation) and keeps that plan, and a preempt answered before
  // the PodDisruptionBudgets landed may break one. Those lists are small, and a kind whose CRD is
  // absent (404) or not granted (403) lands at once.
  std::vector<std::string> kinds;
  for (Kind kind : kAll) kinds.push_back(resource_name(resource_of(kind)));
  service_.expect_first_lists(std::move(kinds));
  for (Kind kind : kAll) threads_.emplace_back([this, kind](std::stop_token stop) { run(kind, stop); });
}

void ClusterWatcher::stop() {
  for (auto& t : threads_) t.request_stop();
  cv_.notify_all();
  threads_.clear();  // jthread joins
}

bool ClusterWatcher::wait_synced(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return synced_ >= 9; });
}

k8s::ApiResult<std::string> ClusterWatcher::relist(Kind kind, const k8s::Resource& resource) {
  const k8s::ListOptions options{.page_size = list_page_size_};
  if (is_group_kind(static_cast<int>(kind)) || kind == Kind::kDisruptionBudgets) {
    auto listed = client_.list(resource, "", options);
    if (!listed) return std::unexpected(listed.error());
    if (kind == Kind::kDisruptionBudgets)
      service_.set_disruption_budgets(listed->items);
    else
      service_.set_pod_groups(listed->items, group_kind(kind));
    return std::move(listed->resource_version);
  }
  auto listed = client_.list_pages(resource, "", options);
  if (!listed) return std::unexpected(listed.error());
  // A list that does not read leaves the view as it was; the watch that follows still applies each
  // event that reads.
  std::expected<void, Error> read;
  switch (kind) {
    case Kind::kNodes:
      read = service_.set_node_pages(listed->pages);
      break;
    case Kind::kPods:
      read = service_.set_pod_pages(listed->pages);
      break;
    case Kind::kHyperNodes:
      read = service_.set_hypernode_pages(listed->pages);
      break;
    default:
      break;
  }
  if (!read) {
    const std::string name = resource_name(resource);
    service_.watch_error(
        name, "list of " + name + " not applied, the view keeps the one before: " + read.error().message());
  }
  return std::move(listed->resource_version);
}

void ClusterWatcher::apply(Kind kind, const k8s::WatchEvent& event) {
  using Type = k8s::WatchEvent::Type;
  if (event.type == Type::kBookmark) return;
  const bool gone = event.type == Type::kDeleted;
  const nlohmann::json& meta = event.object.is_object() && event.object.contains("metadata")
                                   ? event.object["metadata"]
                                   : nlohmann::json::object();
  const std::string name = meta.is_object() ? meta.value("name", "") : std::string();
  // An object that does not read is logged once, naming it, and counted; the watch goes on.
  auto applied = [&](const std::expected<void, Error>& ok, const char* object_kind) {
    if (ok) return;
    service_.watch_error(
        resource_name(resource_of(kind)),
        object_label(object_kind, event.object) + " from the watch not applied: " + ok.error().message());
  };
  switch (kind) {
    case Kind::kNodes:
      if (gone)
        service_.remove_node(name);
      else
        applied(service_.upsert_node(event.object), "Node");
      break;
    case Kind::kPods:
      if (gone)
        service_.remove_pod(event.object);
      else
        applied(service_.upsert_pod(event.object), "Pod");
      break;
    case Kind::kHyperNodes:
      if (gone)
        service_.remove_hypernode(name);
      else
        applied(service_.upsert_hypernode(event.object), "HyperNode");
      break;
    case Kind::kDisruptionBudgets:
      if (gone)
        service_.remove_disruption_budget(event.object);
      else
        service_.upsert_disruption_budget(event.object);
      break;
    default: {
      const PodGroupKind group = group_kind(kind);
      if (gone)
        service_.remove_pod_group(event.object, group);
      else
        service_.upsert_pod_group(event.object, group);
      break;
    }
  }
}

void ClusterWatcher::run(Kind kind, std::stop_token stop) {
  const k8s::Resource& resource = resource_of(kind);
  bool counted = false;
  // The first list landed (or its kind is absent): counted for wait_synced and the service's gate.
  // The first list landed (or its kind is absent). The gate's part opens first: whoever
  // wait_synced() releases finds the verbs answering.
  auto landed = [&] {
    service_.first_list_landed(resource_name(resource));
    std::lock_guard lock(mu_);
    ++synced_;
    counted = true;
    cv_.notify_all();
  };
  auto pause = [&] {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, retry_backoff_, [&] { return stop.stop_requested(); });
  };
  while (!stop.stop_requested()) {
    auto listed = relist(kind, resource);
    if (!listed) {
      const int status = listed.error().http_status;
      // PodDisruptionBudgets not granted (an older ClusterRole): preemption sees no budget.
      const bool pod_groups = is_group_kind(static_cast<int>(kind)) || kind == Kind::kDisruptionBudgets;
      const bool optional_kind = kind == Kind::kHyperNodes || pod_groups;
      if (!counted && optional_kind && (status == 404 || (status == 403 && pod_groups))) {
        // No HyperNode CRD: nodes alone still make a usable (flat) view. No PodGroup CRD: gangs are
        // sized by their annotations (also when RBAC does not grant PodGroups: older installs).
        landed();
      }
      pause();
      continue;
    }
    if (!counted) landed();
    std::string rv = std::move(*listed);
    while (!stop.stop_requested()) {
      auto end = client_.watch(
          resource, "", {.resource_version = rv},
          [&](const k8s::WatchEvent& e) {
            apply(kind, e);
            return true;
          },
          stop);
      if (!end) {
        if (end.error().gone())
          ++relists_;
        else
          pause();
        break;  // list again
      }
      rv = end->resource_version;
      if (end->reason == k8s::WatchEnd::Reason::kStopped) return;
      if (end->reason == k8s::WatchEnd::Reason::kDisconnected) pause();
    }
  }
}

}  // namespace hypertopo::scheduler
