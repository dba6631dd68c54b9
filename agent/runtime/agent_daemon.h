// agent/runtime/agent_daemon.h: what `hypertopo agent` runs in every DaemonSet pod (ARCHITECTURE §5).
//
// Every pod probes its node (the config's node sources: ib-local, nvlink, lldp) and publishes the
// result as its NodeReport, writing only when the facts changed (probedAt alone is no change). All
// pods compete for one Lease; the leader watches NodeReports and Nodes, and on changes — debounced,
// so that a burst of a thousand events costs one rebuild — runs the leader sources through the
// discovery pipeline with the published reports and reconciles the HyperNodes (and, with
// exports.nodeLabels, the Nodes' tier labels: agent/reconciler/node_label_reconciler.h). Fabric
// sources that do not read NodeReports (ib-fabric, ufm, ibnetdiscover, demo) run at their own
// interval; rebuilds in between reuse their last result. A failing source is logged and counted, the others
// go on, and the incomplete result deletes nothing (the reconciler's rule). Losing the Lease stops the
// leader's loops before anyone else may take over, and ends the term's requests: nothing the old
// leader had queued or was retrying is sent afterwards. The leader also watches the HyperNodes it owns:
// one deleted or changed by another writer (kubectl) is rebuilt at once (after the debounce), not at
// the next resync; its own writes coming back through that watch cost nothing.
//
//   AgentDaemon daemon(config, {.node_name = "dgx-001", .pod_name = pod, .namespace_ = "hypertopo-system"},
//                      {.client = client.get(), .election_client = election.get(), .metrics = &metrics});
//   daemon.register_routes(http_server);      // /healthz, /readyz, /metrics
//   daemon.start();
//   ...                                       // daemon.reload(new_config) on a config change
//   daemon.stop();                            // SIGTERM: loops end, the Lease is released
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <expected>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "agent/config/agent_config.h"
#include "agent/reconciler/hypernode_reconciler.h"
#include "agent/reconciler/node_label_reconciler.h"
#include "agent/runtime/node_view.h"
#include "discoverers/pipeline/discovery_pipeline.h"
#include "discoverers/registry/discoverer.h"
#include "errors/error.h"
#include "k8s/client/kube_client.h"
#include "k8s/lease/leader_elector.h"
#include "k8s/objects/node_list.h"
#include "net/http_server.h"
#include "telemetry/log.h"
#include "telemetry/metrics.h"
#include "timing/clock.h"
#include "topology/link_history.h"
#include "topology/node_report.h"

namespace hypertopo::agent {

class SourceCache;  // source_cache.h

inline const k8s::Resource kNodeReportsResource{"hypertopo.io", "v1alpha1", "nodereports",
                                                /*namespaced=*/true};

struct AgentIdentity {
  std::string node_name;   // the NodeReport's name
  std::string pod_name;    // the Lease holder identity
  std::string namespace_;  // of NodeReports, the Lease and Events
};

// Runs one node source (ib-local, nvlink, lldp) into this node's report. The default runs the
// registry's probe under host_root; tests hand recorded facts in.
using NodeProbe = std::function<std::expected<void, Error>(
    const SourceConfig& source, const std::filesystem::path& host_root, topology::NodeReport& report)>;
NodeProbe real_node_probe(telemetry::Logger log);

// A Secret's data, decoded (what a source's credentials come from); errors name the Secret and the
// key, never a value.
std::expected<std::map<std::string, std::string>, Error> read_secret_data(k8s::KubeClient& client,
                                                                          const std::string& ns,
                                                                          const std::string& name);

struct AgentDeps {
  k8s::KubeClient* client = nullptr;           // NodeReports, Nodes, HyperNodes, Events
  k8s::KubeClient* election_client = nullptr;  // the Lease: one attempt, timeout below renewDeadline
  // The node label export's PATCHes, on a rate limit of their own so that they never hold back a
  // HyperNode write; null: `client`.
  k8s::KubeClient* label_client = nullptr;
  telemetry::MetricsRegistry* metrics = nullptr;  // required
  telemetry::Logger log;                          // empty: no logging
  NodeProbe probe;                                // empty: real_node_probe(log)
  std::filesystem::path work_dir;                 // scratch for sources (simulator sockets); may be empty
  // The time the loops plan by: the debounce of events, the resync period, source intervals, the
  // probe period and the pauses after API errors. Empty: the system's steady clock. Leader election
  // keeps the system clock (its Lease times are wall-clock promises to the other pods).
  std::shared_ptr<timing::Clock> clock;
};

class AgentDaemon {
 public:
  AgentDaemon(AgentConfig config, AgentIdentity identity, AgentDeps deps);
  ~AgentDaemon();  // stop()s
  AgentDaemon(const AgentDaemon&) = delete;
  AgentDaemon& operator=(const AgentDaemon&) = delete;

  void start();
  void stop();  // idempotent; releases the Lease when held

  // Hot reload: only the sources whose settings changed run again; builder changes rebuild.
  // Changes to the HTTP port or the Lease name are logged as needing a pod restart.
  void reload(AgentConfig next);

  // /healthz: 200 while the loops run. /readyz: 200 once this node's report is published (at once
  // when there are no node sources) and while no leader source's run has been going for longer
  // than its deadline (a wedged source: the body names it). /metrics: Prometheus text.
  void register_routes(net::HttpServer& server);

  bool leading() const;
  bool ready() const;
  struct Counters {
    int probes = 0;                       // node probe rounds
    int reports_written = 0;              // NodeReport creates and updates sent
    int rebuilds = 0;                     // leader discover -> build -> reconcile cycles that have ended
    int source_runs = 0;                  // leader source runs (cached results not counted)
    int node_label_writes = 0;            // Node label PATCHes sent (exports.nodeLabels)
    std::string last_summary;             // the last reconcile's summary line
    std::string last_label_summary;       // the last node label sync's summary line ("" before the first)
    std::size_t reports_known = 0;        // NodeReports in the leader's view (watch applied)
    std::size_t node_labels_pending = 0;  // label PATCHes of the running export pass not sent yet
    // An event arrived after the last rebuild began, or one is running, or the node labels a rebuild
    // asked for are not all written yet.
    bool rebuild_pending = false;
  };
  // What a leader cycle changes (rebuilds, its summaries, source runs, label writes) shows when the
  // cycle has ended, all at once: a reader never sees a cycle's summary without its count.
  Counters counters() const;

  // The node label export's settings under a config (exports.nodeLabels).
  static NodeLabelExportOptions label_export_options(const AgentConfig& config);

 private:
  void probe_loop(std::stop_token stop);
  std::expected<bool, Error> publish(const topology::NodeReport& report);
  void election_loop();
  void on_started_leading();
  void on_stopped_leading();
  void leader_loop(std::stop_token stop);
  void watch_loop(std::stop_token stop, const k8s::Resource& resource, const std::string& ns);
  void rebuild(std::stop_token stop);
  void mark_dirty();
  void log(telemetry::LogLevel level, const std::string& message) const;
  void count_write(const std::string& verb, const std::string& outcome);
  std::expected<std::map<std::string, std::string>, Error> read_secret(const std::string& ns,
                                                                       const std::string& name);
  void report_warnings(const discoverers::PipelineResult& run);
  // Node labels (exports.nodeLabels) after a rebuild: hands the label loop what the tree wants of
  // every Node (`tree` null takes our keys off every Node) and returns; a pass still writing the
  // previous wants stops before its next write and the new ones are planned from the view.
  void queue_node_labels(const AgentConfig& config, const topology::Tree* tree, bool allow_removal);
  struct LabelWants {
    std::shared_ptr<const std::map<std::string, LabelMap>> desired;  // null: none of ours anywhere
    NodeLabelExportOptions options;
    bool allow_removal = true;
    int parallel = 1;
    bool export_on = false;
  };
  void label_loop(std::stop_token stop);
  void run_label_pass(const LabelWants& wants, std::uint64_t generation, std::stop_token stop);

  AgentIdentity identity_;
  AgentDeps deps_;

  mutable std::mutex mutex_;  // config_, caches, counters_, dirty state
  AgentConfig config_;
  std::condition_variable_any wake_;  // leader loop: events, reloads, stop
  std::condition_variable_any probe_wake_;
  bool dirty_ = false;
  bool reprobe_ = false;
  timing::Clock::TimePoint first_event_{}, last_event_{};
  std::uint64_t generation_ = 0;  // bumped by every event and reload: the leader loop re-plans
  std::map<std::string, topology::NodeReport> reports_;  // by object name
  // What the last built tree wants of each owned HyperNode: the owned-HyperNode watch compares its
  // events with it. Null until the term's first tree.
  std::shared_ptr<const std::map<std::string, DesiredHyperNode>> owned_desired_;
  // The tree before it: an event that matches it is one of our own writes of the last cycle coming
  // back late, not somebody else's change.
  std::shared_ptr<const std::map<std::string, DesiredHyperNode>> owned_desired_before_;
  // The owned HyperNodes this term has seen exist (listed, watched, or written by its reconcile):
  // only those can have been deleted by another writer. A wanted one missing from a list that was
  // never seen is one the leader has yet to create, not a drift.
  std::set<std::string> owned_seen_;
  NodeView nodes_;                                              // what the leader reads of each Node
  int synced_watches_ = 0;                                      // initial lists done (of 2)
  std::map<std::string, std::set<std::string>> warnings_seen_;  // by source kind, as last logged
  Counters counters_;
  bool rebuilding_ = false;
  Counters cycle_start_;                // counters_ when the running cycle began
  topology::LinkHistory link_history_;  // leader loop only: links that keep going down between runs
  // The node label export's queue: the latest wants, taken by the label loop (one pass at a time).
  std::optional<LabelWants> label_wants_;
  std::uint64_t label_generation_ = 0;  // bumped by each new wants: a running pass stops sending
  bool label_pass_running_ = false;
  std::size_t labels_pending_ = 0;
  std::condition_variable_any label_wake_;

  std::unique_ptr<SourceCache> registry_;
  std::unique_ptr<k8s::LeaderElector> elector_;
  std::atomic<bool> running_{false};
  std::atomic<bool> ready_{false};
  std::atomic<bool> leading_{false};
  std::atomic<bool> told_no_leader_source_{false};  // said once until a leader source is enabled
  std::jthread probe_thread_, election_thread_, leader_thread_;
};

}  // namespace hypertopo::agent
