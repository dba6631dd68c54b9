// The extender's lists as the API server pages them, read both ways the extender can: the pages'
// text with simdjson (ExtenderService::set_node_pages, set_pod_pages, set_hypernode_pages) and the
// same pages parsed into objects as k8s::KubeClient::list parses them (set_nodes, set_pods,
// set_hypernodes). The first byte chooses the kind (by its value mod 3: Nodes, Pods, HyperNodes),
// the rest is the pages, separated by form feeds. Whatever the input, the two ways must agree:
//   - a page nlohmann refuses, or one that is not an object with an items array, the text way
//     refuses too (the API client refuses such a list either way);
//   - otherwise both accept, or both refuse with the same message naming the same object, and
//     what they accepted answers a filter call identically.
// A disagreement aborts: it is a bug, whatever the input.
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "scheduler/extender/extender_service.h"
#include "tests/fuzz/fuzz_target.h"
#include "tests/scheduler/extender/extender_cluster.h"

namespace {

using hypertopo::scheduler::ExtenderOptions;
using hypertopo::scheduler::ExtenderService;
using nlohmann::json;

[[noreturn]] void disagree(const std::string& what) {
  std::fprintf(stderr, "extender_list: the text and object paths disagree: %s\n", what.c_str());
  std::abort();
}

std::string outcome(const std::expected<void, hypertopo::Error>& r) { return r ? "ok" : r.error().message(); }

std::string answer(ExtenderService& service, const std::vector<std::string>& names) {
  const json args{{"pod", hypertopo::testing::pod_object("p", "p", "1")}, {"nodenames", names}};
  auto filtered = service.filter_body(args.dump());
  return filtered ? *filtered : "error: " + filtered.error().message();
}

}  // namespace

HT_FUZZ_TARGET(extender_list) {
  if (input.empty()) return;
  static const hypertopo::testing::ExtenderCluster cluster = hypertopo::testing::make_cluster(1, 2, 4);
  const int kind = static_cast<unsigned char>(input.front()) % 3;
  std::vector<std::string> pages;
  for (std::string_view rest = input.substr(1);;) {
    const auto cut = rest.find('\f');
    pages.emplace_back(rest.substr(0, cut));
    if (cut == std::string_view::npos || pages.size() == 16) break;
    rest.remove_prefix(cut + 1);
  }

  ExtenderService text(ExtenderOptions{}), objects(ExtenderOptions{});
  if (kind != 0) {
    (void)text.set_nodes(cluster.nodes);
    (void)objects.set_nodes(cluster.nodes);
  }
  std::vector<json> items;
  std::vector<std::string> names = cluster.node_names;
  bool listable = true;
  for (const auto& page : pages) {
    json doc = json::parse(page, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded() || !doc.is_object() || !doc.contains("items") || !doc["items"].is_array()) {
      listable = false;
      break;
    }
    for (auto& item : doc["items"]) {
      if (kind == 0 && item.is_object() && item.contains("metadata") && item["metadata"].is_object() &&
          item["metadata"].contains("name") && item["metadata"]["name"].is_string() && names.size() < 64)
        names.push_back(item["metadata"]["name"].get<std::string>());
      items.push_back(std::move(item));
    }
  }
  const auto by_text = kind == 0   ? text.set_node_pages(pages)
                       : kind == 1 ? text.set_pod_pages(pages)
                                   : text.set_hypernode_pages(pages);
  if (!listable) {
    if (by_text) disagree("a list the API client refuses was read from its text");
    return;
  }
  const auto by_objects = kind == 0   ? objects.set_nodes(items)
                          : kind == 1 ? objects.set_pods(items)
                                      : objects.set_hypernodes(items);
  if (outcome(by_text) != outcome(by_objects))
    disagree("text: " + outcome(by_text) + "; objects: " + outcome(by_objects));
  if (text.node_count() != objects.node_count()) disagree("node counts differ");
  if (answer(text, names) != answer(objects, names)) disagree("the filter answers differ");
}
