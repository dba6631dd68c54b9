// agent/reconciler/node_label_reconciler.h: keeps the tier labels on the cluster's Nodes in step with
// the tree (the agent's `exports.nodeLabels`).
//
// Schedulers that do not read HyperNodes (Kueue TAS, KAI-Scheduler, topograph users) learn the tree
// from one label per tier on every Node (topology/exporters/node_labels.h says which keys). After
// each rebuild the leader compares every Node it watches with the labels the tree gives it and sends
// a JSON merge patch only where they differ: an unchanged tree costs zero Node writes.
//
// Ownership: every Node we label carries the annotation `hypertopo.io/exported-labels`, the sorted
// comma list of the label keys we put there. A key is ours when that annotation names it or, while
// the export is on, when it has our key prefix (or a topograph key with topographCompatible). Only
// our keys are ever set or removed; labels of others are never touched. So:
//   - a Node that is in no domain any more (left the fabric, no longer matches nodeSelector) loses
//     all our keys, and the annotation goes with them;
//   - turning the export off (in the file, by hot reload, or by restarting without the overlay)
//     removes, once, exactly the keys the annotation names, and nothing else: labels an admin set
//     by hand from `hypertopo discover -o labels` stay when the agent never wrote them;
//   - a changed keyPrefix or topographCompatible moves the labels: the old keys are in the
//     annotation, so they are removed, not left behind.
// Removal follows the HyperNode reconciler's rule: a failed or partial discovery (or one whose
// HyperNode deletions were held back) removes nothing; keys are then added or changed only, and
// the annotation keeps naming the ones left in place so a later complete run can remove them.
//
//   NodeLabelReconciler labels(*client, {.enabled = true, .labels = {.topograph_compatible = true}});
//   auto result = labels.reconcile(&tree, nodes_by_name, run->complete);   // or plan_node_labels_of per
//                                                                         // Node, then apply(plan,
//                                                                         {.parallel = 8})
//   std::cout << result.summary_line() << "\n";    // patched=3 unchanged=97 failed=0 held=0
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "agent/reconciler/json_diff.h"
#include "k8s/client/kube_client.h"
#include "topology/exporters/node_labels.h"
#include "topology/tree.h"

namespace hypertopo::agent {

// The label keys we put on a Node, sorted and comma-separated (label keys hold no comma).
inline constexpr std::string_view kExportedLabelsAnnotation = "hypertopo.io/exported-labels";

struct NodeLabelExportOptions {
  bool enabled = false;  // off: only remove the keys the annotation names
  topology::exporters::NodeLabelOptions labels;
};

// The merge patch {"metadata": {"labels": {...}, "annotations": {...}}} that takes a Node carrying
// `labels` (at least every key the export owns or `desired` names; other keys are ignored) and the
// ownership annotation `exported` (null: absent) to carry `desired` among our keys; nullopt when
// nothing differs. With `allow_removal` false no key is removed (set to null); the annotation then
// keeps naming the keys left in place.
std::optional<nlohmann::json> node_export_patch(const topology::exporters::LabelMap& labels,
                                                const std::string* exported,
                                                const topology::exporters::LabelMap& desired,
                                                const NodeLabelExportOptions& options, bool allow_removal);
// The same over a whole Node object.
std::optional<nlohmann::json> node_export_patch(const nlohmann::json& node,
                                                const topology::exporters::LabelMap& desired,
                                                const NodeLabelExportOptions& options, bool allow_removal);

// The label keys an ownership annotation names (null: absent, no keys).
std::set<std::string> exported_label_keys(const std::string* annotation);

// True when `key` is one the export may set or remove on a Node whose ownership annotation is
// `exported` (null: absent): the annotation names it or, with `claim_prefix`, it has our prefix (or is
// a topograph key with topographCompatible).
bool export_owns_key(std::string_view key, const std::string* exported, const NodeLabelExportOptions& options,
                     bool claim_prefix);

// True when `after` differs from `before` only in what the export itself writes (our labels, the
// annotation) and in server bookkeeping (resourceVersion, managedFields): the agent's own patches
// coming back through its Node watch, which need no rebuild.
bool differs_only_in_export(const nlohmann::json& before, const nlohmann::json& after,
                            const NodeLabelExportOptions& options);

struct NodeLabelChange {
  std::string node;
  std::string detail;  // "+key=value ~key=value -key", what the patch does
  std::string error;   // "" when the write landed
};

struct NodeLabelResult {
  int patched = 0;    // Nodes written
  int unchanged = 0;  // Nodes already as wanted
  int failed = 0;     // writes that did not land (retried by the client first)
  int held = 0;       // Nodes that keep keys of ours because removal was not allowed this cycle
  int unsent = 0;     // writes not sent because a newer plan superseded this one
  std::vector<NodeLabelChange> changes;  // one per Node patched or failed, sorted by name
  std::map<std::string, int> writes;     // outcome (ok, notfound, error) -> PATCHes sent
  std::string summary_line() const;      // exactly "patched=N unchanged=N failed=N held=N"
};

// What a sync would write, computed without the API (so the caller may hold its own lock over
// the Nodes meanwhile and copy nothing).
struct NodeLabelPlan {
  struct Write {
    std::string node;
    nlohmann::json patch;
    std::string detail;  // as NodeLabelChange::detail
  };
  std::vector<Write> writes;  // sorted by Node name
  int unchanged = 0;
  int held = 0;  // as NodeLabelResult::held
};
// Adds one Node (`labels` and `exported` as node_export_patch reads them) to `plan`, which wants
// `want` on it; Nodes must come in name order.
void plan_node_labels_of(const std::string& name, const topology::exporters::LabelMap& labels,
                         const std::string* exported, const topology::exporters::LabelMap& want,
                         const NodeLabelExportOptions& options, bool allow_removal, NodeLabelPlan& plan);
// `tree` null (or the export off): every Node's labels are taken back to none of ours. `nodes`: the
// Node objects by name; a tree host without a Node object is not written.
NodeLabelPlan plan_node_labels(const topology::Tree* tree, const std::map<std::string, nlohmann::json>& nodes,
                               const NodeLabelExportOptions& options, bool allow_removal);

// What `patch` (a plan's merge patch) changes on `node`, field by field: each label and annotation it
// sets or removes, with the value the Node has now ("absent" where it has none).
JsonDiff node_label_changes(const nlohmann::json& node, const nlohmann::json& patch, std::size_t limit);

// How apply() sends a plan.
struct NodeLabelApplyOptions {
  int parallel = 1;  // PATCHes in flight at once (each still waits for the client's rate limit)
  // Asked before each write: true stops sending (a newer plan replaces this one); what was not sent
  // is counted as unsent.
  std::function<bool()> superseded;
  // Each write that landed, with the Node as the server returned it; nothing of it is kept after.
  // Called from the sending threads, one at a time.
  std::function<void(const std::string& node, const nlohmann::json& stored)> on_written;
  // The leader's term: once it fires, a PATCH in flight is abandoned and its retries are not sent.
  std::stop_token stop;
};

class NodeLabelReconciler {
 public:
  NodeLabelReconciler(k8s::KubeClient& client, NodeLabelExportOptions options);
  // plan_node_labels, then apply.
  NodeLabelResult reconcile(const topology::Tree* tree, const std::map<std::string, nlohmann::json>& nodes,
                            bool allow_removal);
  // Sends the plan's patches, each patch dropped once sent. A Node deleted meanwhile (404) is no failure.
  NodeLabelResult apply(NodeLabelPlan plan, const NodeLabelApplyOptions& how = {});

 private:
  k8s::KubeClient& client_;
  NodeLabelExportOptions options_;
};

}  // namespace hypertopo::agent
