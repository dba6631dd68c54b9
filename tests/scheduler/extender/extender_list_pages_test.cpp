// The extender's cluster view from lists as the API server pages them (ExtenderService::set_node_pages
// and so on, read with simdjson) against the same objects handed over one by one (set_nodes ...,
// read through nlohmann): the same view, the same answers, the same errors, and on bad input the
// view as it was.
#include <gtest/gtest.h>

#include <span>

#include "scheduler/extender/extender_service.h"
#include "tests/scheduler/extender/extender_answers.h"
#include "tests/scheduler/extender/extender_cluster.h"

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;
using testing::args_by_name;
using testing::bound;
using testing::make_cluster;
using testing::pod_object;

// `items` as a list's pages of `per_page` items each, as the API server sends them.
std::vector<std::string> pages_of(const std::string& kind, const std::vector<json>& items,
                                  std::size_t per_page) {
  std::vector<std::string> pages;
  for (std::size_t first = 0; first == 0 || first < items.size(); first += per_page) {
    json page{{"apiVersion", "v1"},
              {"kind", kind},
              {"metadata", {{"resourceVersion", "42"}}},
              {"items", json::array()}};
    for (std::size_t i = first; i < std::min(items.size(), first + per_page); ++i)
      page["items"].push_back(items[i]);
    if (first + per_page < items.size()) page["metadata"]["continue"] = "next-" + std::to_string(first);
    pages.push_back(page.dump());
  }
  return pages;
}

// The items of pages, parsed as the API client's list() parses them.
std::vector<json> items_of(const std::vector<std::string>& pages) {
  std::vector<json> out;
  for (const auto& page : pages) {
    json doc = json::parse(page);
    for (auto& item : doc["items"]) out.push_back(std::move(item));
  }
  return out;
}

// Bound pods of every kind the view reads: plain, no uid (keyed by namespace/name), an init
// container larger than the containers, with overhead; and pods that use nothing (pending, finished).
std::vector<json> cluster_pods() {
  std::vector<json> pods;
  pods.push_back(bound(pod_object("full", "u-full", "8"), "n-00-0"));
  pods.push_back(bound(pod_object("half", "u-half", "4"), "n-01-1"));
  json no_uid = bound(pod_object("anon", "", "2"), "n-10-0");
  no_uid["metadata"].erase("uid");
  no_uid["spec"]["initContainers"] = {
      {{"name", "init"}, {"resources", {{"requests", {{"nvidia.com/gpu", "6"}}}}}}};
  pods.push_back(no_uid);
  json overhead = bound(pod_object("over", "u-over", "1"), "n-11-2");
  overhead["spec"]["overhead"] = {{"cpu", "250m"}, {"memory", "64Mi"}};
  pods.push_back(overhead);
  pods.push_back(pod_object("pending", "u-pending", "8"));
  json done = bound(pod_object("done", "u-done", "8"), "n-02-0");
  done["status"]["phase"] = "Succeeded";
  pods.push_back(done);
  return pods;
}

// A hard gang's first pod and the plan made for it.
std::string gang_plan(ExtenderService& service, const std::vector<std::string>& names) {
  auto gang = service.filter(args_by_name(pod_object("g-0", "g-0", "4",
                                                     {{"hypertopo.io/gang", "g"},
                                                      {"hypertopo.io/gang-size", "6"},
                                                      {"hypertopo.io/network-topology-mode", "hard"},
                                                      {"hypertopo.io/highest-tier-allowed", "1"}}),
                                          names));
  EXPECT_TRUE(gang.has_value());
  return (gang ? gang->dump() : "") + "\n" + service.plans().dump();
}

struct Views {
  testing::ExtenderCluster cluster = make_cluster();
  std::vector<json> pods = cluster_pods();
  ExtenderService objects{ExtenderOptions{}};
  ExtenderService pages{ExtenderOptions{}};

  void set_both(std::size_t per_page) {
    ASSERT_TRUE(objects.set_hypernodes(cluster.hypernodes).has_value());
    ASSERT_TRUE(objects.set_nodes(cluster.nodes).has_value());
    ASSERT_TRUE(objects.set_pods(pods).has_value());
    auto hn = pages.set_hypernode_pages(pages_of("HyperNodeList", cluster.hypernodes, per_page));
    ASSERT_TRUE(hn.has_value()) << hn.error().message();
    auto n = pages.set_node_pages(pages_of("NodeList", cluster.nodes, per_page));
    ASSERT_TRUE(n.has_value()) << n.error().message();
    auto p = pages.set_pod_pages(pages_of("PodList", pods, per_page));
    ASSERT_TRUE(p.has_value()) << p.error().message();
  }
};

TEST(ExtenderListPages, PagedListsGiveTheViewTheObjectsGive) {
  for (std::size_t per_page : {1u, 5u, 500u}) {
    Views v;
    v.set_both(per_page);
    EXPECT_EQ(v.pages.node_count(), v.cluster.nodes.size());
    const std::string want = testing::extender_answers(v.objects, v.cluster.node_names);
    EXPECT_EQ(testing::extender_answers(v.pages, v.cluster.node_names), want) << per_page << " a page";
    EXPECT_EQ(gang_plan(v.pages, v.cluster.node_names), gang_plan(v.objects, v.cluster.node_names));
    // The pods count: n-00-0 is full, so the 8-GPU pod is kept off it.
    auto eight = v.pages.filter(args_by_name(pod_object("e", "e", "8"), {"n-00-0", "n-00-1"}));
    ASSERT_TRUE(eight.has_value());
    EXPECT_EQ((*eight)["nodenames"], json::array({"n-00-1"}));
    ExtenderService empty_pods{ExtenderOptions{}};
    ASSERT_TRUE(empty_pods.set_hypernodes(v.cluster.hypernodes).has_value());
    ASSERT_TRUE(empty_pods.set_nodes(v.cluster.nodes).has_value());
    EXPECT_NE(testing::extender_answers(empty_pods, v.cluster.node_names), want);
  }
  // An empty list empties the view, as an empty list of objects does.
  Views v;
  v.set_both(5);
  ASSERT_TRUE(v.pages.set_node_pages(pages_of("NodeList", {}, 5)).has_value());
  EXPECT_EQ(v.pages.node_count(), 0u);
}

// One malformed object among many, on the second page: the error names it (and its place in the
// whole list) exactly as the object path does, and the view keeps what it had.
TEST(ExtenderListPages, AMalformedObjectIsTheSameErrorAndTheViewStays) {
  Views v;
  v.set_both(5);
  const std::string before = testing::extender_answers(v.pages, v.cluster.node_names);
  const std::size_t nodes_before = v.pages.node_count();

  auto check = [&](auto set_objects, auto set_pages, const std::vector<json>& items, const std::string& kind,
                   const std::string& named) {
    auto want = set_objects(items);
    auto got = set_pages(pages_of(kind, items, 5));
    ASSERT_FALSE(want.has_value()) << kind;
    ASSERT_FALSE(got.has_value()) << kind;
    EXPECT_EQ(got.error().message(), want.error().message());
    EXPECT_NE(got.error().message().find(named), std::string::npos) << got.error().message();
    EXPECT_EQ(v.pages.node_count(), nodes_before);
  };
  auto set_nodes_objects = [&](const std::vector<json>& items) { return v.objects.set_nodes(items); };
  auto set_nodes_pages = [&](const std::vector<std::string>& p) { return v.pages.set_node_pages(p); };
  auto set_pods_objects = [&](const std::vector<json>& items) { return v.objects.set_pods(items); };
  auto set_pods_pages = [&](const std::vector<std::string>& p) { return v.pages.set_pod_pages(p); };
  auto set_hns_objects = [&](const std::vector<json>& items) { return v.objects.set_hypernodes(items); };
  auto set_hns_pages = [&](const std::vector<std::string>& p) { return v.pages.set_hypernode_pages(p); };

  std::vector<json> nodes = v.cluster.nodes;
  nodes[7]["status"]["allocatable"]["nvidia.com/gpu"] = "lots";
  check(set_nodes_objects, set_nodes_pages, nodes, "NodeList", "node n-00-7");
  nodes = v.cluster.nodes;
  nodes[6]["metadata"].erase("name");
  check(set_nodes_objects, set_nodes_pages, nodes, "NodeList", "items[6]");

  std::vector<json> pods = v.pods;
  pods.insert(pods.begin() + 5, bound(pod_object("bad", "u-bad", "1", {}, {}, "a lot"), "n-00-3"));
  check(set_pods_objects, set_pods_pages, pods, "PodList", "Pod ml/bad");
  pods = v.pods;
  pods.insert(pods.begin() + 5, json::array({1, 2}));
  check(set_pods_objects, set_pods_pages, pods, "PodList", "items[5]: a Pod must be an object");
  pods = v.pods;
  json frac = bound(pod_object("frac", "u-frac", "500m"), "n-00-3");
  pods.insert(pods.begin() + 5, frac);
  check(set_pods_objects, set_pods_pages, pods, "PodList", "Pod ml/frac");

  std::vector<json> hns = v.cluster.hypernodes;
  hns[6]["spec"].erase("tier");
  check(set_hns_objects, set_hns_pages, hns, "HyperNodeList",
        "HyperNode " + hns[6]["metadata"]["name"].get<std::string>());

  // A page that is not a list at all.
  auto not_a_list =
      v.pages.set_node_pages(std::vector<std::string>{pages_of("NodeList", v.cluster.nodes, 500)[0], "[]"});
  ASSERT_FALSE(not_a_list.has_value());
  EXPECT_NE(not_a_list.error().message().find("page 2"), std::string::npos) << not_a_list.error().message();

  EXPECT_EQ(testing::extender_answers(v.pages, v.cluster.node_names),
            testing::extender_answers(v.objects, v.cluster.node_names));
  EXPECT_EQ(v.pages.node_count(), nodes_before);
  Views fresh;
  fresh.set_both(5);
  EXPECT_EQ(testing::extender_answers(fresh.pages, fresh.cluster.node_names), before);
}

// What simdjson refuses is read as the API client's nlohmann parse reads it: nesting past 128 levels
// and integers beyond 64 bits are accepted (in fields the view does not read) and give the same
// view; invalid UTF-8 is refused, as the client refuses such a list, and the view stays.
TEST(ExtenderListPages, WhatSimdjsonRefusesReadsAsBefore) {
  Views v;
  v.set_both(5);
  const std::string before = testing::extender_answers(v.pages, v.cluster.node_names);
  const std::string deep = std::string(200, '[') + std::string(200, ']');
  const std::string odd_spec = "\"spec\":{\"x-deep\":" + deep + ",\"x-big\":123456789012345678901234567890}";
  std::vector<json> nodes = v.cluster.nodes;
  nodes.erase(nodes.begin() + 12);  // the view changes: both paths must drop the same node
  std::vector<std::string> pages = pages_of("NodeList", nodes, 5);
  for (auto* page : {&pages[1], &pages[2]}) {
    ASSERT_NE(page->find("\"spec\":{}"), std::string::npos);
    page->replace(page->find("\"spec\":{}"), 9, odd_spec);
  }
  const std::vector<json> items = items_of(pages);
  ASSERT_TRUE(v.objects.set_nodes(items).has_value());
  auto read = v.pages.set_node_pages(pages);
  ASSERT_TRUE(read.has_value()) << read.error().message();
  EXPECT_EQ(v.pages.node_count(), v.cluster.nodes.size() - 1);
  const std::string after = testing::extender_answers(v.pages, v.cluster.node_names);
  EXPECT_EQ(after, testing::extender_answers(v.objects, v.cluster.node_names));
  EXPECT_NE(after, before);

  std::vector<std::string> bad = pages_of("NodeList", v.cluster.nodes, 5);
  bad[3].replace(bad[3].find("\"kubernetes.io/hostname\":\"n-"), 28, "\"kubernetes.io/hostname\":\"\xc3\x28");
  ASSERT_TRUE(json::parse(bad[3], nullptr, false).is_discarded());
  auto refused = v.pages.set_node_pages(bad);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message().find("page 4 is not valid JSON"), std::string::npos)
      << refused.error().message();
  EXPECT_EQ(v.pages.node_count(), v.cluster.nodes.size() - 1);
  EXPECT_EQ(testing::extender_answers(v.pages, v.cluster.node_names), after);
}

}  // namespace
}  // namespace hypertopo::scheduler
