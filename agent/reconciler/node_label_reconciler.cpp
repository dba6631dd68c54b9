#include "agent/reconciler/node_label_reconciler.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <thread>

namespace hypertopo::agent {

using nlohmann::json;
using topology::exporters::LabelMap;

namespace {

const json* metadata_map(const json& object, const char* field) {
  if (!object.is_object()) return nullptr;
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return nullptr;
  auto it = meta->find(field);
  if (it == meta->end() || !it->is_object()) return nullptr;
  return &*it;
}

LabelMap string_map(const json* map) {
  LabelMap out;
  if (map == nullptr) return out;
  for (const auto& [key, value] : map->items()) {
    if (value.is_string()) out[key] = value.get<std::string>();
  }
  return out;
}

// The keys the annotation names; an annotation someone mangled yields what can be read from it.
std::set<std::string> annotated_keys(const std::string* annotation) {
  std::set<std::string> keys;
  if (annotation == nullptr) return keys;
  const std::string& text = *annotation;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string key = text.substr(start, end - start);
    const auto first = key.find_first_not_of(" \t");
    const auto last = key.find_last_not_of(" \t");
    if (first != std::string::npos) keys.insert(key.substr(first, last - first + 1));
    start = end + 1;
  }
  return keys;
}

std::optional<std::string> exported_annotation(const json& node) {
  const LabelMap annotations = string_map(metadata_map(node, "annotations"));
  auto it = annotations.find(std::string(kExportedLabelsAnnotation));
  if (it == annotations.end()) return std::nullopt;
  return it->second;
}

std::set<std::string> annotated_keys(const json& node) {
  const auto text = exported_annotation(node);
  return annotated_keys(text ? &*text : nullptr);
}

std::string join(const std::set<std::string>& keys) {
  std::string out;
  for (const auto& k : keys) out += (out.empty() ? "" : ",") + k;
  return out;
}

bool ours(const std::string& key, const std::set<std::string>& annotated,
          const NodeLabelExportOptions& options) {
  return annotated.contains(key) ||
         (options.enabled && topology::exporters::is_our_label_key(key, options.labels));
}

// "+k=v ~k=v -k" for the log line of one Node.
std::string describe(const json& patch, const LabelMap& current) {
  std::string out;
  const json& labels = patch["metadata"].value("labels", json::object());
  for (const auto& [key, value] : labels.items()) {
    if (!out.empty()) out += ' ';
    if (value.is_null()) {
      out += "-" + key;
    } else {
      out += (current.contains(key) ? "~" : "+") + key + "=" + value.get<std::string>();
    }
  }
  return out.empty() ? "ownership annotation" : out;
}

}  // namespace

std::optional<json> node_export_patch(const LabelMap& current, const std::string* exported,
                                      const LabelMap& desired, const NodeLabelExportOptions& options,
                                      bool allow_removal) {
  const std::set<std::string> annotated = annotated_keys(exported);
  const LabelMap& want = options.enabled ? desired : LabelMap{};

  json labels = json::object();
  std::set<std::string> owned_after;
  for (const auto& [key, value] : want) {
    owned_after.insert(key);
    auto it = current.find(key);
    if (it == current.end() || it->second != value) labels[key] = value;
  }
  for (const auto& [key, value] : current) {
    if (want.contains(key) || !ours(key, annotated, options)) continue;
    if (allow_removal) {
      labels[key] = nullptr;
    } else {
      owned_after.insert(key);  // left in place: still ours, for a later complete run to remove
    }
  }

  json patch = json::object();
  if (!labels.empty()) patch["metadata"]["labels"] = std::move(labels);
  const std::string next = join(owned_after);
  if (owned_after.empty()) {
    if (exported != nullptr)
      patch["metadata"]["annotations"][std::string(kExportedLabelsAnnotation)] = nullptr;
  } else if (exported == nullptr || *exported != next) {
    patch["metadata"]["annotations"][std::string(kExportedLabelsAnnotation)] = next;
  }
  if (patch.empty()) return std::nullopt;
  return patch;
}

std::optional<json> node_export_patch(const json& node, const LabelMap& desired,
                                      const NodeLabelExportOptions& options, bool allow_removal) {
  const auto exported = exported_annotation(node);
  return node_export_patch(string_map(metadata_map(node, "labels")), exported ? &*exported : nullptr, desired,
                           options, allow_removal);
}

bool export_owns_key(std::string_view key, const std::string* exported, const NodeLabelExportOptions& options,
                     bool claim_prefix) {
  if (claim_prefix || options.enabled) {
    if (topology::exporters::is_our_label_key(key, options.labels)) return true;
  }
  return annotated_keys(exported).contains(std::string(key));
}

std::set<std::string> exported_label_keys(const std::string* annotation) {
  return annotated_keys(annotation);
}

bool differs_only_in_export(const json& before, const json& after, const NodeLabelExportOptions& options) {
  std::set<std::string> annotated = annotated_keys(before);
  annotated.merge(annotated_keys(after));
  NodeLabelExportOptions claim = options;
  claim.enabled = true;  // keys with our prefix count as ours here, whether the export is on or off
  auto strip = [&](json object) {
    if (!object.is_object() || !object.contains("metadata") || !object["metadata"].is_object()) return object;
    json& meta = object["metadata"];
    meta.erase("resourceVersion");
    meta.erase("managedFields");
    if (meta.contains("annotations") && meta["annotations"].is_object()) {
      meta["annotations"].erase(std::string(kExportedLabelsAnnotation));
      if (meta["annotations"].empty()) meta.erase("annotations");
    }
    if (meta.contains("labels") && meta["labels"].is_object()) {
      json kept = json::object();
      for (const auto& [key, value] : meta["labels"].items()) {
        if (!ours(key, annotated, claim)) kept[key] = value;
      }
      meta["labels"] = std::move(kept);
      if (meta["labels"].empty()) meta.erase("labels");
    }
    return object;
  };
  return strip(before) == strip(after);
}

JsonDiff node_label_changes(const json& node, const json& patch, std::size_t limit) {
  JsonDiff diff;
  if (!patch.is_object() || !patch.contains("metadata") || !patch["metadata"].is_object()) return diff;
  for (const char* field : {"labels", "annotations"}) {
    const auto it = patch["metadata"].find(field);
    if (it == patch["metadata"].end() || !it->is_object()) continue;
    const json* have = metadata_map(node, field);
    const std::string path = std::string("metadata.") + field;
    for (const auto& [key, value] : it->items()) {
      const json* old_value = have != nullptr && have->contains(key) ? &(*have)[key] : nullptr;
      // A merge patch's null removes the key.
      diff_json(old_value, value.is_null() ? nullptr : &value, child_path(path, key), limit, diff);
    }
  }
  return diff;
}

std::string NodeLabelResult::summary_line() const {
  return "patched=" + std::to_string(patched) + " unchanged=" + std::to_string(unchanged) +
         " failed=" + std::to_string(failed) + " held=" + std::to_string(held);
}

NodeLabelReconciler::NodeLabelReconciler(k8s::KubeClient& client, NodeLabelExportOptions options)
    : client_(client), options_(std::move(options)) {}

void plan_node_labels_of(const std::string& name, const LabelMap& labels, const std::string* exported,
                         const LabelMap& want, const NodeLabelExportOptions& options, bool allow_removal,
                         NodeLabelPlan& plan) {
  auto patch = node_export_patch(labels, exported, want, options, allow_removal);
  if (!allow_removal) {
    // Would a complete run remove something here? Then this Node keeps keys it should lose.
    auto full = node_export_patch(labels, exported, want, options, true);
    if (full && (!patch || *full != *patch)) ++plan.held;
  }
  if (!patch) {
    ++plan.unchanged;
    return;
  }
  std::string detail = describe(*patch, labels);
  plan.writes.push_back({name, std::move(*patch), std::move(detail)});
}

NodeLabelPlan plan_node_labels(const topology::Tree* tree, const std::map<std::string, json>& nodes,
                               const NodeLabelExportOptions& options, bool allow_removal) {
  std::map<std::string, LabelMap> desired;
  if (options.enabled && tree != nullptr) desired = topology::exporters::node_labels(*tree, options.labels);
  static const LabelMap kNone;
  NodeLabelPlan plan;
  for (const auto& [name, node] : nodes) {
    auto it = desired.find(name);
    const auto exported = exported_annotation(node);
    plan_node_labels_of(name, string_map(metadata_map(node, "labels")), exported ? &*exported : nullptr,
                        it == desired.end() ? kNone : it->second, options, allow_removal, plan);
  }
  return plan;
}

NodeLabelResult NodeLabelReconciler::reconcile(const topology::Tree* tree,
                                               const std::map<std::string, json>& nodes, bool allow_removal) {
  return apply(plan_node_labels(tree, nodes, options_, allow_removal));
}

NodeLabelResult NodeLabelReconciler::apply(NodeLabelPlan plan, const NodeLabelApplyOptions& how) {
  NodeLabelResult result;
  result.unchanged = plan.unchanged;
  result.held = plan.held;
  std::mutex mutex;  // result, and one on_written at a time
  std::atomic<std::size_t> next{0};
  auto send = [&] {
    for (;;) {
      const std::size_t i = next.fetch_add(1);
      if (i >= plan.writes.size()) return;
      auto& w = plan.writes[i];
      if (how.superseded && how.superseded()) {
        std::lock_guard lock(mutex);
        ++result.unsent;
        continue;
      }
      // No resourceVersion precondition: the patch names only our keys, which no one else writes, and
      // a key set to null that is already gone is no change.
      auto sent = client_.patch(k8s::kNodesResource, "", w.node, w.patch, {}, how.stop);
      w.patch = json();  // sent: nothing of it is kept
      std::lock_guard lock(mutex);
      if (sent) {
        ++result.writes["ok"];
        ++result.patched;
        if (how.on_written) how.on_written(w.node, *sent);
        result.changes.push_back({w.node, std::move(w.detail), ""});
      } else if (sent.error().not_found()) {
        ++result.writes["notfound"];  // deleted since the watch saw it: nothing left to label
      } else {
        ++result.writes["error"];
        ++result.failed;
        std::string why = sent.error().error.message();
        if (sent.error().http_status) why += " (HTTP " + std::to_string(sent.error().http_status) + ")";
        result.changes.push_back({w.node, std::move(w.detail), why});
      }
    }
  };
  const std::size_t threads =
      std::min<std::size_t>(static_cast<std::size_t>(std::max(1, how.parallel)), plan.writes.size());
  if (threads <= 1) {
    send();
  } else {
    std::vector<std::jthread> senders;
    senders.reserve(threads);
    for (std::size_t t = 0; t < threads; ++t) senders.emplace_back(send);
  }
  std::sort(result.changes.begin(), result.changes.end(),
            [](const NodeLabelChange& a, const NodeLabelChange& b) { return a.node < b.node; });
  return result;
}

}  // namespace hypertopo::agent
