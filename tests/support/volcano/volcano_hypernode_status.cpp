// The stand-in of Volcano's HyperNode status loop (see volcano_hypernode_status.h for what it copies).
#include "tests/support/volcano/volcano_hypernode_status.h"

#include <re2/re2.h>

#include <cstdlib>
#include <set>
#include <string>

namespace hypertopo::testing {
namespace {

using nlohmann::json;

const k8s::Resource kHyperNodes{"topology.volcano.sh", "v1alpha1", "hypernodes", false};

const json& field(const json& object, const char* key) {
  static const json kNull;
  if (!object.is_object()) return kNull;
  auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

std::string text(const json& value) { return value.is_string() ? value.get<std::string>() : ""; }

// metav1.LabelSelectorAsSelector + Matches: matchLabels are equality requirements; matchExpressions
// take In, NotIn, Exists, DoesNotExist. A selector that does not convert selects nothing (Volcano
// logs the error and skips the member).
bool selects(const json& selector, const json& labels) {
  auto value_of = [&](const std::string& key) -> const json* {
    if (!labels.is_object()) return nullptr;
    auto it = labels.find(key);
    return it == labels.end() ? nullptr : &*it;
  };
  for (const auto& [key, want] : field(selector, "matchLabels").items()) {
    const json* have = value_of(key);
    if (have == nullptr || *have != want) return false;
  }
  for (const auto& requirement : field(selector, "matchExpressions")) {
    const std::string key = text(field(requirement, "key"));
    const std::string op = text(field(requirement, "operator"));
    const json* have = value_of(key);
    std::set<std::string> values;
    for (const auto& v : field(requirement, "values")) values.insert(text(v));
    if (op == "In") {
      if (have == nullptr || !values.contains(text(*have))) return false;
    } else if (op == "NotIn") {
      if (have != nullptr && values.contains(text(*have))) return false;
    } else if (op == "Exists") {
      if (have == nullptr) return false;
    } else if (op == "DoesNotExist") {
      if (have != nullptr) return false;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

std::int64_t VolcanoHyperNodeStatusLoop::actual_node_count(const json& hypernode,
                                                           const std::vector<json>& nodes) {
  std::set<std::string> names;
  for (const auto& member : field(field(hypernode, "spec"), "members")) {
    const json& selector = field(member, "selector");
    if (const json& exact = field(selector, "exactMatch"); exact.is_object()) {
      names.insert(text(field(exact, "name")));
    }
    if (const json& regex = field(selector, "regexMatch"); regex.is_object()) {
      RE2 pattern(text(field(regex, "pattern")), RE2::Quiet);
      if (pattern.ok()) {
        for (const auto& node : nodes) {
          const std::string name = text(field(field(node, "metadata"), "name"));
          if (RE2::PartialMatch(name, pattern)) names.insert(name);
        }
      }
    }
    if (const json& label = field(selector, "labelMatch"); label.is_object()) {
      for (const auto& node : nodes) {
        const json& meta = field(node, "metadata");
        if (selects(label, field(meta, "labels"))) names.insert(text(field(meta, "name")));
      }
    }
  }
  return static_cast<std::int64_t>(names.size());
}

void VolcanoHyperNodeStatusLoop::start() {
  thread_ = std::jthread([this](std::stop_token stop) { run(stop); });
}

void VolcanoHyperNodeStatusLoop::stop() {
  if (thread_.joinable()) {
    thread_.request_stop();
    thread_.join();
  }
}

void VolcanoHyperNodeStatusLoop::sync(json hypernode) {
  const std::string name = text(field(field(hypernode, "metadata"), "name"));
  // The item is requeued on a conflict; a few rounds are plenty on a loopback server.
  for (int attempt = 0; attempt < 5; ++attempt) {
    ++syncs_;
    auto nodes = client_.list(k8s::kNodesResource, "");
    const std::vector<json> node_items = nodes ? nodes->items : std::vector<json>{};
    const std::int64_t count = actual_node_count(hypernode, node_items);
    const json& status = field(hypernode, "status");
    const json& have = field(status, "nodeCount");
    if (have.is_number_integer() && have.get<std::int64_t>() == count) return;
    if (!have.is_number_integer() && count == 0) return;  // Go's zero value already matches
    json copy = hypernode;
    copy["status"]["nodeCount"] = count;
    ++writes_;
    auto put = client_.update_status(kHyperNodes, "", copy);
    if (put || !put.error().conflict()) return;
    auto fresh = client_.get(kHyperNodes, "", name);
    if (!fresh) return;
    hypernode = std::move(*fresh);
  }
}

void VolcanoHyperNodeStatusLoop::run(std::stop_token stop) {
  std::string rv;
  bool need_list = true;
  while (!stop.stop_requested()) {
    if (need_list) {
      auto listed = client_.list(kHyperNodes, "");
      if (!listed) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        continue;
      }
      for (const auto& item : listed->items) sync(item);
      rv = listed->resource_version;
      need_list = false;
      listed_ = true;
    }
    auto end = client_.watch(
        kHyperNodes, "", {.resource_version = rv},
        [&](const k8s::WatchEvent& e) {
          if (e.type == k8s::WatchEvent::Type::kAdded || e.type == k8s::WatchEvent::Type::kModified) {
            ++events_;
            sync(e.object);
          } else if (e.type == k8s::WatchEvent::Type::kBookmark) {
            bookmark_rv_ = std::strtoull(e.resource_version.c_str(), nullptr, 10);
          }
          return !stop.stop_requested();
        },
        stop);
    if (end) {
      rv = end->resource_version;
      continue;
    }
    if (end.error().gone()) {
      need_list = true;
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
}

}  // namespace hypertopo::testing
