// agent/reconciler/write_plan.h: the writes a reconcile would make, as an admin reads them before
// letting it: `hypertopo apply --dry-run` and `hypertopo agent --role leader --dry-run`.
//
// One entry per object that would change: its action (create, update, delete; held for a deletion
// the guard or an incomplete discovery holds back; foreign for an object of our name without our
// labels, left alone), its kind (HyperNode, Node), its name and, for creates and updates, the fields
// with their old and new values (agent/reconciler/json_diff.h). As text it reads like `kubectl
// diff`; as JSON it is a list of {action, kind, name, changes: [{path, old, new}]}, an absent side
// left out of its change.
//
//   std::vector<PlannedWrite> plan = planned_hypernode_writes(result);     // a dry-run reconcile
//   append_node_label_writes(label_plan, nodes_by_name, 20, plan);
//   std::cout << write_plan_text(plan);
//   // update HyperNode leaf-b11-p1-ibleaf-01-01
//   //   spec.members[3].selector.exactMatch.name: "b11-p1-dgx-03" -> "b11-p1-dgx-09"
//   //   status.nodeCount: 11 -> 12
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "agent/reconciler/hypernode_reconciler.h"
#include "agent/reconciler/json_diff.h"
#include "agent/reconciler/node_label_reconciler.h"

namespace hypertopo::agent {

struct PlannedWrite {
  std::string action;  // create, update, delete, held, foreign
  std::string kind;    // HyperNode, Node
  std::string name;
  std::string detail;  // why, for delete, held and foreign; "" otherwise
  JsonDiff changes = {};
};

// The actions of a dry-run reconcile that would write or that hold something back; unchanged ones
// are left out.
std::vector<PlannedWrite> planned_hypernode_writes(const ReconcileResult& result);

// One update per Node the label plan patches, its changes read against `nodes` (the Node objects by
// name) at most `limit` per Node.
void append_node_label_writes(const NodeLabelPlan& plan, const std::map<std::string, nlohmann::json>& nodes,
                              std::size_t limit, std::vector<PlannedWrite>& into);

// "update HyperNode x" and an indented "path: old -> new" line per change ("... and N more
// changes" past the limit); "delete HyperNode y (why)".
std::string write_plan_text(const std::vector<PlannedWrite>& plan);
nlohmann::json write_plan_json(const std::vector<PlannedWrite>& plan);

}  // namespace hypertopo::agent
