#include "scheduler/index/node_affinity.h"

#include <algorithm>
#include <charconv>
#include <optional>

namespace hypertopo::scheduler {
namespace {

std::optional<std::int64_t> int64_of(const std::string& text) {
  std::int64_t v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return v;
}

// apimachinery labels.NewRequirement's validation: what makes a requirement unusable.
bool valid_label_requirement(const NodeSelectorRequirement& r) {
  if (r.op == "In" || r.op == "NotIn") return !r.values.empty();
  if (r.op == "Exists" || r.op == "DoesNotExist") return r.values.empty();
  if (r.op == "Gt" || r.op == "Lt") return r.values.size() == 1 && int64_of(r.values.front()).has_value();
  return false;
}

bool label_matches(const NodeSelectorRequirement& r, const std::map<std::string, std::string>& labels) {
  auto it = labels.find(r.key);
  const bool has = it != labels.end();
  const auto listed = [&] {
    return std::find(r.values.begin(), r.values.end(), it->second) != r.values.end();
  };
  if (r.op == "In") return has && listed();
  if (r.op == "NotIn") return !has || !listed();
  if (r.op == "Exists") return has;
  if (r.op == "DoesNotExist") return !has;
  if (!has) return false;  // Gt, Lt
  const auto label = int64_of(it->second);
  const auto bound = int64_of(r.values.front());
  if (!label || !bound) return false;
  return r.op == "Gt" ? *label > *bound : *label < *bound;
}

// nodeaffinity.go nodeSelectorRequirementsAsFieldSelector: metadata.name only, In/NotIn, one value.
std::optional<bool> field_matches(const NodeSelectorRequirement& r, const NodeSpec& node) {
  if (r.key != "metadata.name" || r.values.size() != 1) return std::nullopt;
  if (r.op == "In") return node.name == r.values.front();
  if (r.op == "NotIn") return node.name != r.values.front();
  return std::nullopt;
}

}  // namespace

bool NodeSelectorTerm::matches(const NodeSpec& node) const {
  if (match_expressions.empty() && match_fields.empty()) return false;
  for (const auto& r : match_expressions) {
    if (!valid_label_requirement(r) || !label_matches(r, node.labels)) return false;
  }
  for (const auto& r : match_fields) {
    const auto ok = field_matches(r, node);
    if (!ok || !*ok) return false;
  }
  return true;
}

bool NodeAffinity::matches(const NodeSpec& node) const {
  if (!has_required) return true;
  return std::any_of(required.begin(), required.end(),
                     [&](const NodeSelectorTerm& t) { return t.matches(node); });
}

std::int64_t NodeAffinity::preference(const NodeSpec& node) const {
  std::int64_t sum = 0;
  for (const auto& p : preferred) {
    if (p.weight != 0 && p.term.matches(node)) sum += p.weight;
  }
  return sum;
}

NodeConstraintCheck check_node_constraints(const NodeSpec& node,
                                           const std::map<std::string, std::string>& selector,
                                           const NodeAffinity& affinity,
                                           const std::vector<Toleration>& tolerations) {
  using Kind = NodeConstraintCheck::Kind;
  auto tolerated = [&](const NodeTaint& taint) {
    return std::any_of(tolerations.begin(), tolerations.end(),
                       [&](const Toleration& t) { return t.tolerates(taint); });
  };
  // NodeUnschedulable (nodeunschedulable.go): an unschedulable node admits only pods that tolerate
  // node.kubernetes.io/unschedulable:NoSchedule.
  if (node.unschedulable && !tolerated({"node.kubernetes.io/unschedulable", "", "NoSchedule"}))
    return {Kind::kUnschedulable};
  // A NotReady node carries node.kubernetes.io/not-ready (the node lifecycle controller's taint).
  if (!node.ready && !tolerated({"node.kubernetes.io/not-ready", "", "NoSchedule"})) return {Kind::kNotReady};
  for (const auto& [k, v] : selector) {
    auto it = node.labels.find(k);
    if (it == node.labels.end() || it->second != v) return {Kind::kAffinity};
  }
  if (!affinity.matches(node)) return {Kind::kAffinity};
  for (const auto& taint : node.taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    if (!tolerated(taint)) return {Kind::kTaint, &taint};
  }
  return {};
}

NodeConstraintCheck check_node_for_any_pod(const NodeSpec& node) {
  return check_node_constraints(node, {}, {}, {});
}

std::string NodeConstraintCheck::message() const {
  switch (kind) {
    case Kind::kPass:
      return {};
    case Kind::kUnschedulable:
      return "node(s) were unschedulable";
    case Kind::kNotReady:
      return "node(s) had untolerated taint {node.kubernetes.io/not-ready: }";
    case Kind::kAffinity:
      return "node(s) didn't match Pod's node affinity/selector";
    case Kind::kTaint:
      return "node(s) had untolerated taint {" + taint->key + ": " + taint->value + "}";
  }
  return {};
}

int intolerable_prefer_no_schedule(const NodeSpec& node, const std::vector<Toleration>& tolerations) {
  int n = 0;
  for (const auto& taint : node.taints) {
    if (taint.effect != "PreferNoSchedule") continue;
    // tainttoleration.go getAllTolerationPreferNoSchedule: tolerations with an empty effect or
    // PreferNoSchedule count.
    const bool ok = std::any_of(tolerations.begin(), tolerations.end(), [&](const Toleration& t) {
      return (t.effect.empty() || t.effect == "PreferNoSchedule") && t.tolerates(taint);
    });
    if (!ok) ++n;
  }
  return n;
}

}  // namespace hypertopo::scheduler
