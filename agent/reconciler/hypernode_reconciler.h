// agent/reconciler/hypernode_reconciler.h: keeps the cluster's HyperNodes in step with a desired Tree.
//
// ARCHITECTURE §4. Lists the HyperNodes we own (both ownership labels, paginated), compares each with
// the rendered domain semantically (spec with member order ignored, plus our labels; server fields
// ignored), and writes only what differs: an unchanged topology costs zero writes. Creates and
// updates use optimistic concurrency (409 => refetch, recompare, retry); deletes carry uid and
// resourceVersion preconditions. Transient failures (5xx, 429, timeouts, cut connections, truncated
// bodies) are retried with capped exponential backoff up to `max_attempts`; a write that still does
// not land is reported as kFailed, never dropped silently. An object with our name but without our
// labels is kForeign: reported, never touched. Deletions happen only for a complete discovery, and
// are all held back (with a MassDeletionHeld Event) when they exceed `max_delete_fraction` of what
// we own. status.nodeCount is Volcano's own value (topology::volcano_exact_member_count), merged
// into /status so that neither its hyperNode-controller nor we ever find it to correct. The ownership label
// written and listed is options.source (volcano.sh/network-topology-source), whatever tree.source says, so
// that one reconciler always sees the same set of objects as its own.
//
//   HyperNodeReconciler reconciler(*client, {.source = "hypertopo", .max_delete_fraction = 0.2});
//   auto result = reconciler.reconcile(run->tree, run->complete);
//   if (result) std::cout << result->summary_line() << "\n";   // created=3 updated=0 deleted=0 ...
#pragma once

#include <chrono>
#include <expected>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "agent/reconciler/json_diff.h"
#include "errors/error.h"
#include "k8s/client/kube_client.h"
#include "timing/clock.h"
#include "topology/tree.h"

namespace hypertopo::agent {

inline const k8s::Resource kHyperNodesResource{"topology.volcano.sh", "v1alpha1", "hypernodes",
                                               /*namespaced=*/false};

struct ReconcileOptions {
  std::string source = "hypertopo";       // value of volcano.sh/network-topology-source we own
  double max_delete_fraction = 0.2;       // mass-deletion guard per cycle
  std::size_t min_objects_for_guard = 0;  // the guard applies from this many owned HyperNodes on
  bool dry_run = false;
  // With dry_run: each create and update carries its changes field by field, at most this many per
  // HyperNode (the rest counted).
  std::size_t diff_limit = 20;
  std::string event_namespace = "hypertopo-system";  // where the guard's Event goes
  std::string reporter = "hypertopo";                // Event source/reportingController
  int max_attempts = 8;                              // per write
  // Backoff between attempts (doubling from backoff_base, capped). Null: SystemClock. Tests hand
  // the same ManualClock they give the KubeClient.
  std::shared_ptr<timing::Clock> clock;
  // Wall time for the FabricDegraded condition's lastTransitionTime; empty: the system clock.
  std::function<std::chrono::system_clock::time_point()> wall_clock;
  std::chrono::milliseconds backoff_base{200};
  std::chrono::milliseconds backoff_cap{10000};
  // Objects written at once (each write still waits for the client's rate limit): a cold start of a
  // 650-HyperNode tree is then paced by the client's QPS, not by one round trip after another.
  int parallel = 1;
  // The leader's term: once it fires (the Lease is lost), no further request goes out, backoffs end
  // and what is left is reported kFailed ("not written: ..."); nothing queued lands afterwards.
  std::stop_token stop;
};

enum class ActionKind { kCreate, kUpdate, kDelete, kUnchanged, kHeld, kForeign, kFailed };
const char* to_string(ActionKind kind);

struct ReconcileAction {
  ActionKind kind;
  std::string name;
  std::string detail;     // why (held, foreign, failed) or what changed (update)
  JsonDiff changes = {};  // dry run only: the fields a create or an update would write
};

struct ReconcileResult {
  int created = 0, updated = 0, deleted = 0, unchanged = 0, held = 0, failed = 0, foreign = 0;
  std::vector<ReconcileAction> actions;  // one per object touched or considered, sorted by name
  // "<verb>/<outcome>" -> count, verb in create, update, status, delete, event; outcome in ok,
  // conflict, exists, notfound, error. Every write attempt sent is counted once.
  std::map<std::string, int> writes;
  bool event_emitted = false;  // the mass-deletion Event was written

  int write_attempts() const;        // sum of `writes`
  std::string summary_line() const;  // exactly "created=N updated=N deleted=N unchanged=N held=N"
};

// One HyperNode as the tree wants it: the rendered object (with our labels, without status), the
// status.nodeCount Volcano computes for it and our FabricDegraded condition when health was assessed.
struct DesiredHyperNode {
  std::string name;
  nlohmann::json object;
  int node_count = 0;
  std::optional<nlohmann::json> condition;
};

// What reconcile() compares against: every HyperNode of `tree` under these options, by name.
std::map<std::string, DesiredHyperNode> desired_hypernodes(const topology::Tree& tree,
                                                           const ReconcileOptions& options);

// What of ours differs between a HyperNode as stored and as wanted, "" when nothing does: the spec
// (member order ignored), our labels, our annotation, and, once our status write has been made
// (status.nodeCount present), status.nodeCount and our condition. The leader's watch of what it owns
// asks this of every event, so that its own writes coming back cost nothing and a hand edit or a
// deletion is repaired at once.
std::string hypernode_drift(const nlohmann::json& current, const DesiredHyperNode& want);

// The fields of ours a write would change, old and new, as `kubectl diff` shows them: the spec (both
// sides with members in one order, as they are compared), our labels and annotation, status.nodeCount
// and our condition (without its transition time). `current` null: the HyperNode is created.
JsonDiff hypernode_changes(const nlohmann::json* current, const DesiredHyperNode& want, std::size_t limit);

class HyperNodeReconciler {
 public:
  HyperNodeReconciler(k8s::KubeClient& client, ReconcileOptions options);
  // complete=false (a source failed or was partial): creates and updates happen, deletes never.
  std::expected<ReconcileResult, Error> reconcile(const topology::Tree& desired, bool complete);

  const ReconcileOptions& options() const { return options_; }

 private:
  using Desired = DesiredHyperNode;
  ReconcileAction sync_one(const Desired& want, std::optional<nlohmann::json> current,
                           ReconcileResult& result);
  ReconcileAction delete_one(nlohmann::json current, ReconcileResult& result);
  // Merges our status fields into /status when they differ; returns "" or what went wrong.
  std::string write_status(const nlohmann::json& object, const Desired& want, ReconcileResult& result);
  // The status fields of ours that differ on the server (nodeCount, the FabricDegraded condition in
  // status.conditions), as a merge-patch body for /status; empty when nothing differs.
  nlohmann::json status_changes(const nlohmann::json& object, const Desired& want) const;
  // Runs `one` for items 0..count-1, options_.parallel at a time, each thread counting its writes in
  // its own ReconcileResult; the actions (in item order) and the write counts join `result`.
  void for_each_parallel(std::size_t count, ReconcileResult& result,
                         const std::function<ReconcileAction(std::size_t, ReconcileResult&)>& one);
  void emit_held_event(std::size_t count, std::size_t owned, ReconcileResult& result);
  bool owned(const nlohmann::json& object) const;
  void back_off(int attempt, std::chrono::seconds retry_after);
  bool stopped() const { return options_.stop.stop_requested(); }
  std::string label_selector() const;

  k8s::KubeClient& client_;
  ReconcileOptions options_;
};

}  // namespace hypertopo::agent
