#include "agent/runtime/node_view.h"

#include <simdjson.h>

#include <algorithm>

namespace hypertopo::agent {

const std::string* StringPool::acquire(std::string_view text) {
  auto it = counts_.find(text);
  if (it == counts_.end()) it = counts_.emplace(std::string(text), 0).first;
  ++it->second;
  return &it->first;
}

void StringPool::release(const std::string* text) {
  if (text == nullptr) return;
  auto it = counts_.find(std::string_view(*text));
  if (it == counts_.end()) return;
  if (--it->second == 0) counts_.erase(it);
}

NodeView::~NodeView() = default;

void NodeView::release(NodeRecord& record) {
  for (const auto& [k, v] : record.labels) {
    pool_.release(k);
    pool_.release(v);
  }
  record.labels.clear();
  pool_.release(record.guid_annotation);
  pool_.release(record.exported_annotation);
  record.guid_annotation = record.exported_annotation = nullptr;
}

namespace {

bool same_text(const std::string* held, const std::optional<std::string_view>& seen) {
  if (held == nullptr || !seen) return held == nullptr && !seen;
  return *held == *seen;
}

}  // namespace

bool NodeView::apply(const NodeFacts& facts, const NodeLabelExportOptions& options) {
  const std::string name(facts.name);
  if (relisting_) listed_.insert(name);
  auto it = nodes_.find(name);
  bool matters = it == nodes_.end();
  if (!matters) {
    const NodeRecord& old = it->second;
    matters = old.uid != facts.uid || !same_text(old.guid_annotation, facts.guid_annotation);
    if (!matters) {
      // Labels outside the export's keys (as either version's annotation names them, or by prefix
      // whether the export is on or off) must be the same.
      std::set<std::string> owned = exported_label_keys(old.exported_annotation);
      if (facts.exported_annotation) {
        const std::string after(*facts.exported_annotation);
        owned.merge(exported_label_keys(&after));
      }
      auto foreign = [&](std::string_view key) {
        return !topology::exporters::is_our_label_key(key, options.labels) &&
               !owned.contains(std::string(key));
      };
      auto a = old.labels.begin();
      auto b = facts.labels.begin();
      for (;;) {
        while (a != old.labels.end() && !foreign(*a->first)) ++a;
        while (b != facts.labels.end() && !foreign(b->first)) ++b;
        if (a == old.labels.end() || b == facts.labels.end()) {
          matters = a != old.labels.end() || b != facts.labels.end();
          break;
        }
        if (*a->first != b->first || *a->second != b->second) {
          matters = true;
          break;
        }
        ++a;
        ++b;
      }
    }
  }
  NodeRecord& record = nodes_[name];
  // The new strings are taken before the old ones are given back, so unchanged ones stay pooled.
  std::vector<std::pair<const std::string*, const std::string*>> labels;
  labels.reserve(facts.labels.size());
  for (const auto& [k, v] : facts.labels) labels.emplace_back(pool_.acquire(k), pool_.acquire(v));
  const std::string* guid = facts.guid_annotation ? pool_.acquire(*facts.guid_annotation) : nullptr;
  const std::string* exported =
      facts.exported_annotation ? pool_.acquire(*facts.exported_annotation) : nullptr;
  release(record);
  record.labels = std::move(labels);
  record.guid_annotation = guid;
  record.exported_annotation = exported;
  if (record.uid != facts.uid) record.uid = std::string(facts.uid);
  record.resource_version = std::string(facts.resource_version);
  return matters;
}

std::expected<std::size_t, Error> NodeView::apply_page(std::string& page,
                                                       const NodeLabelExportOptions& options) {
  // A parser per page: its buffers (a few times the page) are given back with it, not kept for the
  // life of the watch thread.
  simdjson::dom::parser parser;
  page.reserve(page.size() + simdjson::SIMDJSON_PADDING);
  simdjson::dom::element root;
  if (auto error = parser.parse(page).get(root); error)
    return fail(ErrorCode::kParse,
                std::string("a NodeList page is not JSON: ") + simdjson::error_message(error));
  const io::SimdjsonView list(root);
  auto items = list.find("items");
  if (!items || !items->is_array()) return fail(ErrorCode::kParse, "a NodeList page has no items array");
  std::size_t read = 0;
  for (const auto& item : items->elements()) {
    if (auto facts = read_node_facts(item)) {
      apply(*facts, options);
      ++read;
    }
  }
  return read;
}

bool NodeView::erase(const std::string& name) {
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return false;
  release(it->second);
  nodes_.erase(it);
  return true;
}

void NodeView::begin_relist() {
  relisting_ = true;
  listed_.clear();
}

std::size_t NodeView::end_relist() {
  relisting_ = false;
  std::size_t removed = 0;
  for (auto it = nodes_.begin(); it != nodes_.end();) {
    if (listed_.contains(it->first)) {
      ++it;
      continue;
    }
    release(it->second);
    it = nodes_.erase(it);
    ++removed;
  }
  listed_.clear();
  return removed;
}

const NodeRecord* NodeView::find(const std::string& name) const {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? nullptr : &it->second;
}

topology::exporters::LabelMap NodeView::labels_of(const NodeRecord& record) {
  return labels_of(record, [](const std::string&) { return true; });
}

bool NodeView::matches(const NodeRecord& record, const std::map<std::string, std::string>& selector) {
  for (const auto& [key, value] : selector) {
    auto it = std::lower_bound(record.labels.begin(), record.labels.end(), key,
                               [](const auto& label, const std::string& k) { return *label.first < k; });
    if (it == record.labels.end() || *it->first != key || *it->second != value) return false;
  }
  return true;
}

k8s::NodeList NodeView::node_list(const std::map<std::string, std::string>& selector,
                                  const std::optional<std::set<std::string>>& label_keys) const {
  k8s::NodeList list;
  for (const auto& [name, record] : nodes_) {
    if (!matches(record, selector)) continue;
    k8s::NodeInfo& node = list.items.emplace_back();
    node.name = name;
    node.labels =
        labels_of(record, [&](const std::string& key) { return !label_keys || label_keys->contains(key); });
    if (record.guid_annotation != nullptr)
      node.annotations.emplace(discoverers::kNodeGuidAnnotation, *record.guid_annotation);
  }
  return list;
}

NodeLabelPlan plan_node_labels(const NodeView& view, const std::map<std::string, LabelMap>* desired,
                               const NodeLabelExportOptions& options, bool allow_removal) {
  static const LabelMap kNone;
  NodeLabelPlan plan;
  for (const auto& [name, record] : view.records()) {
    const LabelMap* want = &kNone;
    if (desired != nullptr && options.enabled) {
      if (auto it = desired->find(name); it != desired->end()) want = &it->second;
    }
    const std::set<std::string> owned = exported_label_keys(record.exported_annotation);
    const LabelMap labels = NodeView::labels_of(record, [&](const std::string& key) {
      return want->contains(key) || owned.contains(key) ||
             topology::exporters::is_our_label_key(key, options.labels);
    });
    plan_node_labels_of(name, labels, record.exported_annotation, *want, options, allow_removal, plan);
  }
  return plan;
}

}  // namespace hypertopo::agent
