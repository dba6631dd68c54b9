#include "scheduler/placement/kueue_failure_messages.h"

#include <algorithm>
#include <utility>

namespace hypertopo::scheduler {

std::string kueue_quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string kueue_taint_string(const NodeTaint& t) {
  if (t.effect.empty()) return t.value.empty() ? t.key : t.key + "=" + t.value + ":";
  return t.value.empty() ? t.key + ":" + t.effect : t.key + "=" + t.value + ":" + t.effect;
}

std::string KueueExclusions::format() const {
  std::vector<std::string> reasons;
  if (node_selector > 0) reasons.push_back("nodeSelector: " + std::to_string(node_selector));
  for (const auto& [t, n] : taints) reasons.push_back("taint " + kueue_quoted(t) + ": " + std::to_string(n));
  for (const auto& [r, n] : resources)
    reasons.push_back("resource " + kueue_quoted(r) + ": " + std::to_string(n));
  std::sort(reasons.begin(), reasons.end());
  std::string out;
  for (const auto& r : reasons) out += (out.empty() ? "" : ", ") + r;
  return out;
}

namespace {

std::string with_exclusions(std::string message, const KueueExclusions& excluded) {
  if (excluded.any())
    message += ". Total nodes: " + std::to_string(excluded.total_nodes) + "; excluded: " + excluded.format();
  return message;
}

}  // namespace

std::string kueue_not_fit_message(const std::string& topology_name, std::int32_t fit, std::int32_t total,
                                  std::int32_t slice_size, const KueueExclusions& excluded) {
  std::string unit = slice_size == 1 ? "pod" : "slice";
  std::string out;
  if (fit == 0) {
    out = "topology " + kueue_quoted(topology_name) + " doesn't allow to fit any of " +
          std::to_string(total) + " " + unit + "(s)";
  } else {
    out = "topology " + kueue_quoted(topology_name) + " allows to fit only " + std::to_string(fit) +
          " out of " + std::to_string(total) + " " + unit + "(s)";
  }
  return with_exclusions(std::move(out), excluded);
}

std::string kueue_multi_layer_message(const std::string& topology_name,
                                      const std::optional<std::vector<KueueLayerFit>>& layers,
                                      const KueueExclusions& excluded) {
  std::string out = "topology " + kueue_quoted(topology_name) + " doesn't allow to fit";
  if (!layers) return out;
  for (const auto& layer : *layers) {
    out += "; " + std::to_string(layer.fit) + "/" + std::to_string(layer.total) + " slice(s) fit on level " +
           layer.topology;
  }
  return with_exclusions(std::move(out), excluded);
}

std::optional<std::string> kueue_request_fault(const std::string& failure) {
  // The messages the placement returns before it looks at any capacity, longest prefix first.
  static const std::pair<const char*, const char*> kFaults[] = {
      {"slice topology requested, but slice size not provided", "kueue.x-k8s.io/podset-slice-size"},
      {"no requested topology level for additional slice layer",
       "kueue.x-k8s.io/podset-slice-required-topology-constraints"},
      {"additional slice layer", "kueue.x-k8s.io/podset-slice-required-topology-constraints"},
      {"no requested topology level for slices", "kueue.x-k8s.io/podset-slice-required-topology"},
      {"podset slice topology", "kueue.x-k8s.io/podset-slice-required-topology"},
      {"no requested topology level:",
       "kueue.x-k8s.io/podset-required-topology or kueue.x-k8s.io/podset-preferred-topology"},
      {"topology level not specified", "the Topology's spec.levels"},
  };
  for (const auto& [prefix, field] : kFaults) {
    if (failure.starts_with(prefix)) return std::string(field);
  }
  return std::nullopt;
}

}  // namespace hypertopo::scheduler
