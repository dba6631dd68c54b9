#include "agent/reconciler/write_plan.h"

namespace hypertopo::agent {

using nlohmann::json;

std::vector<PlannedWrite> planned_hypernode_writes(const ReconcileResult& result) {
  std::vector<PlannedWrite> plan;
  for (const auto& a : result.actions) {
    if (a.kind == ActionKind::kUnchanged) continue;
    PlannedWrite w{to_string(a.kind), "HyperNode", a.name, "", a.changes};
    // An update's detail names what its changes already show field by field.
    if (a.kind != ActionKind::kCreate && a.kind != ActionKind::kUpdate) w.detail = a.detail;
    plan.push_back(std::move(w));
  }
  return plan;
}

void append_node_label_writes(const NodeLabelPlan& plan, const std::map<std::string, json>& nodes,
                              std::size_t limit, std::vector<PlannedWrite>& into) {
  static const json kNoNode = json::object();
  for (const auto& w : plan.writes) {
    auto it = nodes.find(w.node);
    into.push_back({"update", "Node", w.node, "",
                    node_label_changes(it == nodes.end() ? kNoNode : it->second, w.patch, limit)});
  }
}

std::string write_plan_text(const std::vector<PlannedWrite>& plan) {
  std::string out;
  for (const auto& w : plan) {
    out += (w.action == "held" ? std::string("held delete") : w.action) + " " + w.kind + " " + w.name;
    if (!w.detail.empty()) out += " (" + w.detail + ")";
    out += "\n";
    for (const auto& c : w.changes.changes) {
      out += "  " + c.path + ": " + describe_value(c.old_value) + " -> " + describe_value(c.new_value) + "\n";
    }
    if (w.changes.omitted > 0) {
      out += "  ... and " + std::to_string(w.changes.omitted) + " more change" +
             (w.changes.omitted == 1 ? "" : "s") + "\n";
    }
  }
  return out;
}

json write_plan_json(const std::vector<PlannedWrite>& plan) {
  json out = json::array();
  for (const auto& w : plan) {
    json entry = {{"action", w.action}, {"kind", w.kind}, {"name", w.name}, {"changes", json::array()}};
    for (const auto& c : w.changes.changes) entry["changes"].push_back(to_json(c));
    if (w.changes.omitted > 0) entry["omittedChanges"] = w.changes.omitted;
    if (!w.detail.empty()) entry["detail"] = w.detail;
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace hypertopo::agent
