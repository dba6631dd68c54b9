// The loopback server's semantics, checked without HTTP: if these drift from the real API server,
// every client test built on them proves less.
#include "tests/support/apiserver/resource_store.h"

#include <gtest/gtest.h>

namespace hypertopo::testing {
namespace {

using nlohmann::json;

json labels(std::initializer_list<std::pair<const std::string, std::string>> l) {
  json out = json::object();
  for (const auto& [k, v] : l) out[k] = v;
  return out;
}

bool matches(const std::string& selector, const json& l) {
  auto parsed = parse_label_selector(selector);
  EXPECT_TRUE(parsed.has_value()) << selector;
  return parsed && labels_match(*parsed, l);
}

TEST(LabelSelector, EveryOperator) {
  json l = labels({{"tier", "1"}, {"source", "ufm"}});
  EXPECT_TRUE(matches("", l));
  EXPECT_TRUE(matches("tier=1", l));
  EXPECT_TRUE(matches("tier==1", l));
  EXPECT_FALSE(matches("tier=2", l));
  EXPECT_TRUE(matches("tier!=2", l));
  EXPECT_TRUE(matches("absent!=2", l));  // != matches objects without the key, as in Kubernetes
  EXPECT_TRUE(matches("source in (ufm, lldp)", l));
  EXPECT_FALSE(matches("source in (lldp)", l));
  EXPECT_TRUE(matches("source notin (lldp)", l));
  EXPECT_TRUE(matches("absent notin (lldp)", l));
  EXPECT_TRUE(matches("tier", l));
  EXPECT_FALSE(matches("absent", l));
  EXPECT_TRUE(matches("!absent", l));
  EXPECT_FALSE(matches("!tier", l));
  EXPECT_TRUE(matches("tier=1,source in (ufm,x),!absent", l));
  EXPECT_FALSE(matches("tier=1,source=lldp", l));
}

TEST(LabelSelector, RejectsGarbage) {
  EXPECT_FALSE(parse_label_selector("a in (b").has_value());
  EXPECT_FALSE(parse_label_selector("a,,b").has_value());
  EXPECT_FALSE(parse_label_selector("a maybe (b)").has_value());
}

TEST(ResourcePath, CoreGroupsNamespacesAndStatus) {
  auto p = parse_resource_path("/apis/topology.volcano.sh/v1alpha1/hypernodes/leaf-a/status");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->collection, "topology.volcano.sh/v1alpha1/hypernodes");
  EXPECT_EQ(p->name, "leaf-a");
  EXPECT_TRUE(p->status);
  p = parse_resource_path("/api/v1/namespaces/kube-system/secrets/ufm");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->collection, "/v1/secrets");
  EXPECT_EQ(p->namespace_, "kube-system");
  EXPECT_EQ(p->name, "ufm");
  p = parse_resource_path("/api/v1/nodes");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->name, "");
  EXPECT_FALSE(parse_resource_path("/healthz").has_value());
  EXPECT_FALSE(parse_resource_path("/api/v1/nodes/a/proxy").has_value());
}

StoreResponse send(ResourceStore& store, const std::string& method, const std::string& path,
                   const json& body = {}, const std::string& content_type = "application/json") {
  return store.handle({method, path, {}, content_type, body.is_null() ? "" : body.dump()});
}

TEST(ResourceStore, CreateConflictAndStatusSemantics) {
  ResourceStore store;
  const std::string coll = "/apis/x.io/v1/things";
  json obj = {{"kind", "Thing"}, {"metadata", {{"name", "a"}}}, {"spec", {{"n", 1}}}, {"status", {{"s", 1}}}};
  auto created = send(store, "POST", coll, obj);
  ASSERT_EQ(created.status, 201) << created.body;
  json stored = json::parse(created.body);
  EXPECT_FALSE(stored.contains("status"));  // create ignores status
  std::string rv1 = stored["metadata"]["resourceVersion"];
  EXPECT_EQ(send(store, "POST", coll, obj).status, 409);
  EXPECT_EQ(json::parse(send(store, "POST", coll, obj).body)["reason"], "AlreadyExists");

  // A no-op update keeps the resourceVersion; a real change bumps it.
  auto same = send(store, "PUT", coll + "/a", stored);
  ASSERT_EQ(same.status, 200);
  EXPECT_EQ(json::parse(same.body)["metadata"]["resourceVersion"], rv1);
  stored["spec"]["n"] = 2;
  stored["status"] = {{"s", 9}};
  auto changed = send(store, "PUT", coll + "/a", stored);
  ASSERT_EQ(changed.status, 200);
  json after = json::parse(changed.body);
  EXPECT_NE(after["metadata"]["resourceVersion"], rv1);
  EXPECT_FALSE(after.contains("status"));  // the main resource ignores status
  EXPECT_EQ(after["metadata"]["generation"], 2);

  // The stale version now conflicts.
  auto stale = send(store, "PUT", coll + "/a", stored);
  EXPECT_EQ(stale.status, 409);
  EXPECT_EQ(json::parse(stale.body)["reason"], "Conflict");

  // /status changes only status.
  after["status"] = {{"s", 3}};
  after["spec"]["n"] = 100;
  auto status = send(store, "PUT", coll + "/a/status", after);
  ASSERT_EQ(status.status, 200) << status.body;
  json with_status = json::parse(status.body);
  EXPECT_EQ(with_status["status"]["s"], 3);
  EXPECT_EQ(with_status["spec"]["n"], 2);
}

TEST(ResourceStore, PaginationAndContinueExpiry) {
  ResourceStore store;
  for (int i = 0; i < 5; ++i) {
    json obj = {{"kind", "Node"}, {"metadata", {{"name", "n" + std::to_string(i)}}}};
    ASSERT_EQ(send(store, "POST", "/api/v1/nodes", obj).status, 201);
  }
  StoreRequest list{"GET", "/api/v1/nodes", {{"limit", "2"}}, "", ""};
  json page = json::parse(store.handle(list).body);
  ASSERT_EQ(page["items"].size(), 2u);
  EXPECT_EQ(page["kind"], "NodeList");
  std::string token = page["metadata"]["continue"];
  // Compaction at the list's own version keeps it readable (as etcd does); a later one does not.
  ASSERT_EQ(send(store, "POST", "/api/v1/nodes", {{"metadata", {{"name", "late"}}}}).status, 201);
  store.compact();
  list.query["continue"] = token;
  EXPECT_EQ(store.handle(list).status, 410);
}

TEST(ResourceStore, WatchReplaysFromResourceVersionAndGoesAfterCompaction) {
  ResourceStore store;
  json obj = {{"kind", "Node"}, {"metadata", {{"name", "n"}}}};
  json created = json::parse(send(store, "POST", "/api/v1/nodes", obj).body);
  std::string rv = created["metadata"]["resourceVersion"];
  ASSERT_EQ(send(store, "DELETE", "/api/v1/nodes/n").status, 200);
  auto open = store.open_watch({"GET", "/api/v1/nodes", {{"watch", "1"}, {"resourceVersion", rv}}, "", ""});
  ASSERT_EQ(open.initial.size(), 1u);
  EXPECT_EQ(open.initial[0]["type"], "DELETED");
  store.compact();
  auto gone = store.open_watch({"GET", "/api/v1/nodes", {{"watch", "1"}, {"resourceVersion", rv}}, "", ""});
  EXPECT_TRUE(gone.gone);
}

TEST(ResourceStore, SelectorWatchSeesObjectsEnterAndLeave) {
  ResourceStore store;
  std::string start = std::to_string(store.resource_version());
  json obj = {{"metadata", {{"name", "n"}, {"labels", {{"rack", "r0"}}}}}};
  json created = json::parse(send(store, "POST", "/api/v1/nodes", obj).body);
  created["metadata"]["labels"]["rack"] = "r1";
  json moved = json::parse(send(store, "PUT", "/api/v1/nodes/n", created).body);
  moved["metadata"]["labels"]["rack"] = "r0";
  ASSERT_EQ(send(store, "PUT", "/api/v1/nodes/n", moved).status, 200);
  auto open = store.open_watch({"GET",
                                "/api/v1/nodes",
                                {{"watch", "1"}, {"resourceVersion", start}, {"labelSelector", "rack=r0"}},
                                "",
                                ""});
  std::vector<std::string> types;
  for (const auto& e : open.initial) types.push_back(e["type"]);
  EXPECT_EQ(types, std::vector<std::string>({"ADDED", "DELETED", "ADDED"}));
}

TEST(ResourceStore, DeletePreconditions) {
  ResourceStore store;
  json created = json::parse(send(store, "POST", "/api/v1/nodes", {{"metadata", {{"name", "n"}}}}).body);
  auto wrong = send(store, "DELETE", "/api/v1/nodes/n", {{"preconditions", {{"uid", "other"}}}});
  EXPECT_EQ(wrong.status, 409);
  auto right =
      send(store, "DELETE", "/api/v1/nodes/n", {{"preconditions", {{"uid", created["metadata"]["uid"]}}}});
  EXPECT_EQ(right.status, 200);
  EXPECT_EQ(send(store, "GET", "/api/v1/nodes/n").status, 404);
}

}  // namespace
}  // namespace hypertopo::testing
