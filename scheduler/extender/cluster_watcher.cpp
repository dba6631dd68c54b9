#include "scheduler/extender/cluster_watcher.h"

namespace hypertopo::scheduler {
namespace {

const k8s::Resource kNodesResource{"", "v1", "nodes", false};
const k8s::Resource kPodsResource{"", "v1", "pods", true};
const k8s::Resource kHyperNodesResource{"topology.volcano.sh", "v1alpha1", "hypernodes", false};
const k8s::Resource kPodGroupsResource{"scheduling.x-k8s.io", "v1alpha1", "podgroups", true};

}  // namespace

ClusterWatcher::ClusterWatcher(k8s::KubeClient& client, ExtenderService& service,
                               std::chrono::milliseconds retry_backoff)
    : client_(client), service_(service), retry_backoff_(retry_backoff) {}

ClusterWatcher::~ClusterWatcher() { stop(); }

void ClusterWatcher::start() {
  for (Kind kind : {Kind::kNodes, Kind::kPods, Kind::kHyperNodes, Kind::kPodGroups}) {
    threads_.emplace_back([this, kind](std::stop_token stop) { run(kind, stop); });
  }
}

void ClusterWatcher::stop() {
  for (auto& t : threads_) t.request_stop();
  cv_.notify_all();
  threads_.clear();  // jthread joins
}

bool ClusterWatcher::wait_synced(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return synced_ >= 4; });
}

std::expected<void, Error> ClusterWatcher::replace(Kind kind, const std::vector<nlohmann::json>& items) {
  switch (kind) {
    case Kind::kNodes:
      return service_.set_nodes(items);
    case Kind::kPods:
      return service_.set_pods(items);
    case Kind::kHyperNodes:
      return service_.set_hypernodes(items);
    case Kind::kPodGroups:
      service_.set_pod_groups(items);
      return {};
  }
  return {};
}

void ClusterWatcher::apply(Kind kind, const k8s::WatchEvent& event) {
  using Type = k8s::WatchEvent::Type;
  if (event.type == Type::kBookmark) return;
  const bool gone = event.type == Type::kDeleted;
  const std::string name = event.object.value("metadata", nlohmann::json::object()).value("name", "");
  switch (kind) {
    case Kind::kNodes:
      if (gone)
        service_.remove_node(name);
      else
        (void)service_.upsert_node(event.object);
      break;
    case Kind::kPods:
      if (gone)
        service_.remove_pod(event.object);
      else
        (void)service_.upsert_pod(event.object);
      break;
    case Kind::kHyperNodes:
      if (gone)
        service_.remove_hypernode(name);
      else
        (void)service_.upsert_hypernode(event.object);
      break;
    case Kind::kPodGroups:
      if (gone)
        service_.remove_pod_group(event.object);
      else
        service_.upsert_pod_group(event.object);
      break;
  }
  if (kind == Kind::kNodes) service_.check_plans();  // a planned node may just have failed
}

void ClusterWatcher::run(Kind kind, std::stop_token stop) {
  const k8s::Resource& resource = kind == Kind::kNodes        ? kNodesResource
                                  : kind == Kind::kPods       ? kPodsResource
                                  : kind == Kind::kHyperNodes ? kHyperNodesResource
                                                              : kPodGroupsResource;
  bool counted = false;
  auto pause = [&] {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, retry_backoff_, [&] { return stop.stop_requested(); });
  };
  while (!stop.stop_requested()) {
    auto listed = client_.list(resource, "");
    if (!listed) {
      const int status = listed.error().http_status;
      const bool optional_kind = kind == Kind::kHyperNodes || kind == Kind::kPodGroups;
      if (!counted && optional_kind && (status == 404 || (status == 403 && kind == Kind::kPodGroups))) {
        // No HyperNode CRD: nodes alone still make a usable (flat) view. No PodGroup CRD: gangs are
        // sized by their annotations (also when RBAC does not grant PodGroups: older installs).
        std::lock_guard lock(mu_);
        ++synced_;
        counted = true;
        cv_.notify_all();
      }
      pause();
      continue;
    }
    (void)replace(kind, listed->items);
    if (!counted) {
      std::lock_guard lock(mu_);
      ++synced_;
      counted = true;
      cv_.notify_all();
    }
    std::string rv = listed->resource_version;
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
