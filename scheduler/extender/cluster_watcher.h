// scheduler/extender/cluster_watcher.h: feeds an ExtenderService from Kubernetes list + watch.
//
// One thread per kind (Nodes, Pods, Volcano HyperNodes; coscheduling, Volcano and upstream
// scheduling.k8s.io PodGroups and upstream Workloads, which size gangs; PodDisruptionBudgets, which
// preemption respects): list, hand the whole list to
// the service, then watch from the list's resourceVersion; a watch that ends resumes from the last version
// seen, a 410 Gone lists again. Nodes, Pods and HyperNodes are listed as page texts and read with simdjson
// (ExtenderService::set_node_pages and so on): at 6,000 Nodes and 9,510 HyperNodes the lists are most of
// start-up and of every relist. PodGroups are few and read as objects; watch events are objects. A missing
// HyperNode CRD (404) leaves the topology empty (nodes sit under the cluster root), a missing PodGroup CRD
// leaves gangs sized by annotations; both are retried after the backoff.
// start() closes the service's ready gate (ExtenderService::expect_first_lists) on every kind it
// lists, and each kind's first list (or its absence) opens its part: the verbs and /readyz say the
// view is still filling until then.
//
//   ClusterWatcher watcher(client, service);
//   watcher.start();            // threads run until stop() or destruction
//   watcher.wait_synced(std::chrono::seconds(30));
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "k8s/client/kube_client.h"
#include "scheduler/extender/extender_service.h"

namespace hypertopo::scheduler {

class ClusterWatcher {
 public:
  // `list_page_size`: objects per list request (the `limit`; the client follows `continue`).
  ClusterWatcher(k8s::KubeClient& client, ExtenderService& service,
                 std::chrono::milliseconds retry_backoff = std::chrono::milliseconds(1000),
                 int list_page_size = 500);
  ~ClusterWatcher();
  ClusterWatcher(const ClusterWatcher&) = delete;
  ClusterWatcher& operator=(const ClusterWatcher&) = delete;

  void start();
  void stop();
  // True once every kind was listed at least once.
  bool wait_synced(std::chrono::milliseconds timeout);
  int relists() const { return relists_.load(); }

 private:
  // The order matters: the kinds from kPodGroups on size gangs (is_group_kind in the .cpp).
  enum class Kind {
    kNodes,
    kPods,
    kHyperNodes,
    kPodGroups,
    kVolcanoPodGroups,
    kUpstreamPodGroups,
    kWorkloads,
    kKaiPodGroups,
    kDisruptionBudgets  // policy/v1 PodDisruptionBudgets, which preemption respects
  };
  static PodGroupKind group_kind(Kind kind);
  static const k8s::Resource& resource_of(Kind kind);
  void run(Kind kind, std::stop_token stop);
  void apply(Kind kind, const k8s::WatchEvent& event);
  // Lists `kind` and hands the list to the service; the list's resourceVersion, or why it failed.
  k8s::ApiResult<std::string> relist(Kind kind, const k8s::Resource& resource);

  k8s::KubeClient& client_;
  ExtenderService& service_;
  std::chrono::milliseconds retry_backoff_;
  int list_page_size_;
  std::vector<std::jthread> threads_;
  std::mutex mu_;
  std::condition_variable cv_;
  int synced_ = 0;
  std::atomic<int> relists_{0};
};

}  // namespace hypertopo::scheduler
