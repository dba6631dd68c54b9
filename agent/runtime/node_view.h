// agent/runtime/node_view.h: the leader's picture of the cluster's Nodes, holding only what it reads.
//
// The API server sends each Node whole: managedFields, status with its images and conditions, every
// label and annotation other controllers put there; several kilobytes of JSON a Node. The leader
// reads four things of it: the name (the tree's hosts), the labels (the node selector, the labels
// source's levels, the NVLink clique label, the export's own tier labels), the GUID annotation
// (hypertopo.io/ib-port-guids) and the export's ownership annotation. So this view keeps per Node
// its name, uid and resourceVersion, its labels, and those two annotations; nothing else of the
// object survives the parse. Label keys and values are interned in one pool: the same keys sit on
// every Node and most values repeat (zone, instance type, GPU product), so a label costs two
// pointers. Every label is kept, not only those of today's config: a config reload that names
// another label (a new level, a new selector) then needs no relist. client-go's informers offer the
// same trim as a transform function (SharedIndexInformer.SetTransform) for the same reason.
//
// Not thread-safe: the agent holds its own lock around every call.
//
//   NodeView view;
//   view.begin_relist();
//   auto applied = view.apply_page(page_text, export_options);      // a NodeList page, as listed
//   view.end_relist();                                              // Nodes not listed again are gone
//   bool rebuild = view.apply(io::NlohmannView(event.object), export_options);   // a watch event
//   k8s::NodeList nodes = view.node_list({{"nvidia.com/gpu.present", "true"}}, {"rack"});
#pragma once

#include <cstddef>
#include <cstdint>
#include <expected>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "agent/reconciler/node_label_reconciler.h"
#include "discoverers/pipeline/discovery_pipeline.h"
#include "errors/error.h"
#include "io/json_view.h"
#include "k8s/objects/node_list.h"

namespace hypertopo::agent {

using LabelMap = topology::exporters::LabelMap;

// Interned strings with reference counts: acquire() returns a pointer that stays valid until the
// matching release().
class StringPool {
 public:
  const std::string* acquire(std::string_view text);
  void release(const std::string* text);
  std::size_t size() const { return counts_.size(); }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, std::uint32_t, Hash, std::equal_to<>> counts_;
};

// One Node as the leader keeps it.
struct NodeRecord {
  std::string uid;
  std::string resource_version;
  // Sorted by key; both sides point into the view's pool.
  std::vector<std::pair<const std::string*, const std::string*>> labels;
  const std::string* guid_annotation = nullptr;      // hypertopo.io/ib-port-guids; null: absent
  const std::string* exported_annotation = nullptr;  // hypertopo.io/exported-labels; null: absent
};

// What is read of one Node object before it enters the view: views into the parsed text.
struct NodeFacts {
  std::string_view name, uid, resource_version;
  std::vector<std::pair<std::string_view, std::string_view>> labels;  // sorted by key, string values only
  std::optional<std::string_view> guid_annotation, exported_annotation;
};

// Reads a Node object (through io::NlohmannView or io::SimdjsonView); nullopt without a name.
template <class View>
std::optional<NodeFacts> read_node_facts(const View& object);

class NodeView {
 public:
  NodeView() = default;
  ~NodeView();
  NodeView(const NodeView&) = delete;
  NodeView& operator=(const NodeView&) = delete;

  // Adds or replaces one Node. True when the change can alter the tree or what the export must
  // write beyond its own keys: a new Node, a new uid, a label other than the export's own, the GUID
  // annotation. The export's own patches coming back (our labels, the ownership annotation, a new
  // resourceVersion) and anything the view does not keep (status, other annotations) return false.
  bool apply(const NodeFacts& facts, const NodeLabelExportOptions& options);
  template <class View>
  bool apply(const View& object, const NodeLabelExportOptions& options) {
    auto facts = read_node_facts(object);
    return facts && apply(*facts, options);
  }
  // Every Node of one NodeList page (its JSON text; padding is added to the string); the number read.
  std::expected<std::size_t, Error> apply_page(std::string& page, const NodeLabelExportOptions& options);
  bool erase(const std::string& name);  // false when it was not there

  // A full list: Nodes not applied between the two calls are removed at the end.
  void begin_relist();
  std::size_t end_relist();  // how many were removed

  std::size_t size() const { return nodes_.size(); }
  std::size_t pooled_strings() const { return pool_.size(); }
  const std::map<std::string, NodeRecord>& records() const { return nodes_; }
  const NodeRecord* find(const std::string& name) const;

  // A record's labels as a map: all of them, or those whose key `keep` accepts.
  static topology::exporters::LabelMap labels_of(const NodeRecord& record);
  template <class Keep>
  static topology::exporters::LabelMap labels_of(const NodeRecord& record, Keep keep) {
    topology::exporters::LabelMap out;
    for (const auto& [k, v] : record.labels) {
      if (keep(*k)) out.emplace_hint(out.end(), *k, *v);
    }
    return out;
  }
  static bool matches(const NodeRecord& record, const std::map<std::string, std::string>& selector);

  // What the discovery pipeline reads of the Nodes the selector takes: names, the labels whose keys
  // are in `label_keys` (every label when it is nullopt) and the GUID annotation.
  k8s::NodeList node_list(const std::map<std::string, std::string>& selector,
                          const std::optional<std::set<std::string>>& label_keys) const;

 private:
  void release(NodeRecord& record);
  std::map<std::string, NodeRecord> nodes_;
  StringPool pool_;
  bool relisting_ = false;
  std::set<std::string> listed_;  // names applied since begin_relist()
};

// The export's plan over the view: `desired` (node -> its tier labels; null: the export takes its
// keys away) against every Node's labels, in name order. Only the export's own keys and the keys
// `desired` names are read of each Node.
NodeLabelPlan plan_node_labels(const NodeView& view, const std::map<std::string, LabelMap>* desired,
                               const NodeLabelExportOptions& options, bool allow_removal);

template <class View>
std::optional<NodeFacts> read_node_facts(const View& object) {
  auto meta = object.find("metadata");
  if (!meta || !meta->is_object()) return std::nullopt;
  auto text = [&](std::string_view key) -> std::string_view {
    auto v = meta->find(key);
    return v && v->is_string() ? v->string() : std::string_view();
  };
  NodeFacts facts;
  facts.name = text("name");
  if (facts.name.empty()) return std::nullopt;
  facts.uid = text("uid");
  facts.resource_version = text("resourceVersion");
  if (auto labels = meta->find("labels"); labels && labels->is_object()) {
    for (const auto& [key, value] : labels->fields()) {
      if (value.is_string()) facts.labels.emplace_back(key, value.string());
    }
  }
  if (auto annotations = meta->find("annotations"); annotations && annotations->is_object()) {
    auto read = [&](std::string_view key) -> std::optional<std::string_view> {
      auto v = annotations->find(key);
      if (!v || !v->is_string()) return std::nullopt;
      return v->string();
    };
    facts.guid_annotation = read(discoverers::kNodeGuidAnnotation);
    facts.exported_annotation = read(kExportedLabelsAnnotation);
  }
  return facts;
}

}  // namespace hypertopo::agent
