// The client against the loopback API server: CRUD with real conflict semantics, selectors and
// pagination, retries under injected faults, tokens, connection reuse, rate limits and TLS.
#include "k8s/client/kube_client.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>

#include "tests/support/apiserver/loopback_apiserver.h"
#include "tests/support/fixtures.h"

namespace hypertopo::k8s {
namespace {

using hypertopo::testing::LoopbackApiServer;
using hypertopo::testing::LoopbackApiServerOptions;
using hypertopo::testing::TempDir;
using hypertopo::testing::write_text;
using nlohmann::json;
using std::chrono::milliseconds;

const Resource kThings{"hypertopo.io", "v1alpha1", "things", /*namespaced=*/false};
const Resource kReports{"hypertopo.io", "v1alpha1", "nodereports", /*namespaced=*/true};

json thing(const std::string& name, json labels = json::object()) {
  return {{"apiVersion", "hypertopo.io/v1alpha1"},
          {"kind", "Thing"},
          {"metadata", {{"name", name}, {"labels", labels}}},
          {"spec", {{"members", json::array({"a", "b"})}}}};
}

std::string base64(const std::string& in) {
  static const char* table = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    unsigned v = (static_cast<unsigned char>(in[i]) << 16) | (static_cast<unsigned char>(in[i + 1]) << 8) |
                 static_cast<unsigned char>(in[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out.push_back(table[(v >> s) & 63]);
  }
  if (i < in.size()) {
    unsigned v = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<unsigned char>(in[i + 1]) << 8;
    out.push_back(table[(v >> 18) & 63]);
    out.push_back(table[(v >> 12) & 63]);
    out.push_back(i + 1 < in.size() ? table[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

class KubeClientTest : public ::testing::Test {
 protected:
  void start(LoopbackApiServerOptions options = {}) {
    server_ = std::make_unique<LoopbackApiServer>(options);
    auto started = server_->start();
    ASSERT_TRUE(started) << started.error().message();
  }

  // Tiny backoff on a manual clock: retries are observed, never waited for.
  ClientOptions fast_options() {
    ClientOptions o;
    o.clock = clock_;
    o.qps = 0;
    o.retry.base = milliseconds(1);
    o.retry.cap = milliseconds(8);
    o.request_timeout = milliseconds(5000);
    o.connect_timeout = milliseconds(5000);
    return o;
  }

  std::unique_ptr<KubeClient> make_client(ClusterConfig config, ClientOptions options) {
    auto c = KubeClient::create(config, std::move(options));
    EXPECT_TRUE(c) << c.error().message();
    return c ? std::move(*c) : nullptr;
  }

  std::unique_ptr<KubeClient> make_client() {
    ClusterConfig config;
    config.server = server_->url();
    return make_client(config, fast_options());
  }

  std::shared_ptr<timing::ManualClock> clock_ = std::make_shared<timing::ManualClock>();
  std::unique_ptr<LoopbackApiServer> server_;
};

TEST_F(KubeClientTest, CrudWithConflictsAndPreconditions) {
  start();
  auto client = make_client();
  auto created = client->create(kThings, "", thing("leaf-a"));
  ASSERT_TRUE(created) << created.error().error.message();
  std::string rv1 = (*created)["metadata"]["resourceVersion"];
  EXPECT_FALSE(rv1.empty());

  auto again = client->create(kThings, "", thing("leaf-a"));
  ASSERT_FALSE(again);
  EXPECT_TRUE(again.error().already_exists());
  EXPECT_EQ(again.error().http_status, 409);
  EXPECT_EQ(again.error().code(), ErrorCode::kConflict);
  EXPECT_NE(again.error().error.message().find("already exists"), std::string::npos);

  json changed = *created;
  changed["spec"]["members"] = json::array({"a"});
  auto updated = client->update(kThings, "", changed);
  ASSERT_TRUE(updated) << updated.error().error.message();
  EXPECT_NE((*updated)["metadata"]["resourceVersion"], rv1);

  // `changed` still carries rv1: a stale write must be refused.
  auto stale = client->update(kThings, "", changed);
  ASSERT_FALSE(stale);
  EXPECT_TRUE(stale.error().conflict());
  EXPECT_EQ(stale.error().reason, "Conflict");

  // Without a resourceVersion the write is unconditional.
  changed["metadata"].erase("resourceVersion");
  changed["spec"]["members"] = json::array({"z"});
  auto blind = client->update(kThings, "", changed);
  ASSERT_TRUE(blind) << blind.error().error.message();
  EXPECT_EQ((*blind)["spec"]["members"], json::array({"z"}));

  auto missing = client->get(kThings, "", "nope");
  ASSERT_FALSE(missing);
  EXPECT_TRUE(missing.error().not_found());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(missing.error().reason, "NotFound");

  auto wrong_uid = client->delete_object(kThings, "", "leaf-a", {.uid = "someone-else"});
  ASSERT_FALSE(wrong_uid);
  EXPECT_TRUE(wrong_uid.error().conflict());
  std::string uid = (*blind)["metadata"]["uid"];
  auto wrong_rv = client->delete_object(kThings, "", "leaf-a", {.resource_version = rv1});
  ASSERT_FALSE(wrong_rv);
  EXPECT_TRUE(wrong_rv.error().conflict());
  ASSERT_TRUE(client->delete_object(kThings, "", "leaf-a", {.uid = uid}));
  EXPECT_TRUE(client->get(kThings, "", "leaf-a").error().not_found());
  EXPECT_TRUE(client->delete_object(kThings, "", "leaf-a").error().not_found());
}

TEST_F(KubeClientTest, StatusSubresourceAndNamespaces) {
  start();
  auto client = make_client();
  json report = thing("node-1");
  report["kind"] = "NodeReport";
  auto created = client->create(kReports, "hypertopo", report);
  ASSERT_TRUE(created) << created.error().error.message();
  EXPECT_EQ((*created)["metadata"]["namespace"], "hypertopo");

  json with_status = *created;
  with_status["status"] = {{"nodeCount", 4}};
  with_status["spec"]["members"] = json::array();  // /status must not take this
  auto status = client->update_status(kReports, "hypertopo", with_status);
  ASSERT_TRUE(status) << status.error().error.message();
  EXPECT_EQ((*status)["status"]["nodeCount"], 4);
  EXPECT_EQ((*status)["spec"]["members"].size(), 2u);

  json main = *status;
  main["status"]["nodeCount"] = 99;  // the main resource must not take this
  main["metadata"]["labels"]["x"] = "y";
  auto updated = client->update(kReports, "hypertopo", main);
  ASSERT_TRUE(updated);
  EXPECT_EQ((*updated)["status"]["nodeCount"], 4);
  EXPECT_EQ((*updated)["metadata"]["labels"]["x"], "y");

  EXPECT_TRUE(client->get(kReports, "other", "node-1").error().not_found());
  auto all = client->list(kReports, "");
  ASSERT_TRUE(all);
  EXPECT_EQ(all->items.size(), 1u);
}

TEST_F(KubeClientTest, MergePatchAndApply) {
  start();
  auto client = make_client();
  ASSERT_TRUE(client->create(kThings, "", thing("leaf-a", {{"keep", "1"}, {"drop", "1"}})));
  auto patched =
      client->patch(kThings, "", "leaf-a", {{"metadata", {{"labels", {{"drop", nullptr}, {"new", "2"}}}}}});
  ASSERT_TRUE(patched) << patched.error().error.message();
  EXPECT_EQ((*patched)["metadata"]["labels"], json({{"keep", "1"}, {"new", "2"}}));

  auto status = client->patch(kThings, "", "leaf-a", {{"status", {{"nodeCount", 3}}}}, {.status = true});
  ASSERT_TRUE(status);
  EXPECT_EQ((*status)["status"]["nodeCount"], 3);

  // Apply creates what is missing and merges into what exists.
  auto applied =
      client->patch(kThings, "", "leaf-b", thing("leaf-b"), {.type = PatchType::kApply, .force = true});
  ASSERT_TRUE(applied) << applied.error().error.message();
  EXPECT_EQ((*applied)["metadata"]["name"], "leaf-b");
  json intent = thing("leaf-b");
  intent["spec"]["members"] = json::array({"c"});
  auto reapplied = client->patch(kThings, "", "leaf-b", intent, {.type = PatchType::kApply});
  ASSERT_TRUE(reapplied);
  EXPECT_EQ((*reapplied)["spec"]["members"], json::array({"c"}));

  EXPECT_TRUE(client->patch(kThings, "", "absent", {{"spec", {}}}).error().not_found());
}

TEST_F(KubeClientTest, UpdateWithRetryConvergesWithAConcurrentWriter) {
  start();
  auto client = make_client();
  auto other = make_client();
  ASSERT_TRUE(client->create(kThings, "", thing("leaf-a")));
  int calls = 0;
  auto result = client->update_with_retry(kThings, "", "leaf-a", [&](json& o) {
    if (++calls <= 2) {
      // Someone else writes between our read and our write, twice.
      auto theirs = other->get(kThings, "", "leaf-a");
      (*theirs)["metadata"]["labels"]["writer"] = "other-" + std::to_string(calls);
      EXPECT_TRUE(other->update(kThings, "", *theirs));
    }
    o["spec"]["members"] = json::array({"mine"});
    return true;
  });
  ASSERT_TRUE(result) << result.error().error.message();
  EXPECT_TRUE(result->written);
  EXPECT_EQ(result->conflicts, 2);
  EXPECT_EQ(calls, 3);
  auto final_object = client->get(kThings, "", "leaf-a");
  EXPECT_EQ((*final_object)["spec"]["members"], json::array({"mine"}));
  EXPECT_EQ((*final_object)["metadata"]["labels"]["writer"], "other-2");  // their change survives

  // Nothing to change: no write reaches the server.
  server_->reset_counts();
  auto unchanged = client->update_with_retry(kThings, "", "leaf-a", [](json&) { return false; });
  ASSERT_TRUE(unchanged);
  EXPECT_FALSE(unchanged->written);
  EXPECT_EQ(server_->writes(), 0);
  EXPECT_EQ(server_->count("get"), 1);

  // A writer that never stops: the conflict budget runs out and the conflict is reported.
  int theirs_written = 0;
  auto endless = client->update_with_retry(
      kThings, "", "leaf-a",
      [&](json& o) {
        auto theirs = other->get(kThings, "", "leaf-a");
        (*theirs)["metadata"]["labels"]["n"] = std::to_string(++theirs_written);
        EXPECT_TRUE(other->update(kThings, "", *theirs));
        o["spec"]["members"] = json::array({"x"});
        return true;
      },
      /*max_conflicts=*/3);
  ASSERT_FALSE(endless);
  EXPECT_TRUE(endless.error().conflict());
}

TEST_F(KubeClientTest, ListWithSelectorsFollowsPagination) {
  start();
  auto client = make_client();
  for (int i = 0; i < 25; ++i) {
    json labels = {{"rack", "r" + std::to_string(i % 3)}};
    if (i % 5 == 0) labels["excluded"] = "yes";
    ASSERT_TRUE(client->create(kThings, "", thing("t" + std::to_string(100 + i), labels)));
  }
  server_->reset_counts();
  auto all = client->list(kThings, "", {.page_size = 10});
  ASSERT_TRUE(all) << all.error().error.message();
  EXPECT_EQ(all->items.size(), 25u);
  EXPECT_EQ(server_->count("list"), 3);
  EXPECT_EQ(all->resource_version, std::to_string(server_->store().resource_version()));
  std::set<std::string> names;
  for (const auto& item : all->items) names.insert(item["metadata"]["name"].get<std::string>());
  EXPECT_EQ(names.size(), 25u);

  auto count = [&](const std::string& selector) {
    auto l = client->list(kThings, "", {.label_selector = selector, .page_size = 4});
    EXPECT_TRUE(l) << selector;
    return l ? l->items.size() : 0u;
  };
  EXPECT_EQ(count("rack=r0"), 9u);
  EXPECT_EQ(count("rack==r0,!excluded"), 7u);  // i = 0 and 15 are excluded among r0's 9
  EXPECT_EQ(count("rack in (r1, r2)"), 16u);
  EXPECT_EQ(count("rack notin (r1,r2)"), 9u);
  EXPECT_EQ(count("rack!=r0"), 16u);
  EXPECT_EQ(count("excluded"), 5u);
  auto bad = client->list(kThings, "", {.label_selector = "rack in (r1"});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().http_status, 400);
  EXPECT_EQ(bad.error().code(), ErrorCode::kInvalidArgument);

  auto by_name = client->list(kThings, "", {.field_selector = "metadata.name=t107"});
  ASSERT_TRUE(by_name);
  ASSERT_EQ(by_name->items.size(), 1u);
}

// list_pages() pages exactly as list() does and hands back each page's text: the same items in the
// same order, the same resourceVersion, the same requests.
TEST_F(KubeClientTest, ListPagesHandsBackThePagesListReads) {
  start();
  auto client = make_client();
  for (int i = 0; i < 25; ++i) {
    ASSERT_TRUE(client->create(
        kThings, "", thing("t" + std::to_string(100 + i), {{"rack", "r" + std::to_string(i % 3)}})));
  }
  auto listed = client->list(kThings, "", {.label_selector = "rack!=r2", .page_size = 4});
  ASSERT_TRUE(listed) << listed.error().error.message();
  server_->reset_counts();
  auto paged = client->list_pages(kThings, "", {.label_selector = "rack!=r2", .page_size = 4});
  ASSERT_TRUE(paged) << paged.error().error.message();
  EXPECT_EQ(server_->count("list"), 5);  // 17 things, 4 a page
  ASSERT_EQ(paged->pages.size(), 5u);
  EXPECT_EQ(paged->resource_version, listed->resource_version);
  EXPECT_EQ(paged->resource_version, std::to_string(server_->store().resource_version()));
  std::vector<json> items;
  for (const auto& page : paged->pages) {
    const json doc = json::parse(page);
    EXPECT_EQ(doc["metadata"].contains("continue"), &page != &paged->pages.back());
    for (const auto& item : doc["items"]) items.push_back(item);
  }
  EXPECT_EQ(items, listed->items);
}

// list_each_page() hands each page over as it comes, before the next is asked for, and stops when
// the reader says so: a list of any length never sits in memory whole.
TEST_F(KubeClientTest, ListEachPageHandsOverOnePageAtATime) {
  start();
  auto client = make_client();
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(client->create(kThings, "", thing("t" + std::to_string(100 + i))));
  auto listed = client->list(kThings, "", {.page_size = 4});
  ASSERT_TRUE(listed);
  server_->reset_counts();
  std::vector<json> items;
  std::vector<int> lists_before_page;
  auto rv = client->list_each_page(kThings, "", {.page_size = 4}, [&](std::string& page) -> ApiResult<void> {
    lists_before_page.push_back(server_->count("list"));
    const json doc = json::parse(page);
    for (const auto& item : doc["items"]) items.push_back(item);
    return {};
  });
  ASSERT_TRUE(rv) << rv.error().error.message();
  EXPECT_EQ(*rv, listed->resource_version);
  EXPECT_EQ(lists_before_page, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(items, listed->items);

  server_->reset_counts();
  int pages = 0;
  auto stopped = client->list_each_page(kThings, "", {.page_size = 4}, [&](std::string&) -> ApiResult<void> {
    ++pages;
    return std::unexpected(ApiError{Error(ErrorCode::kParse, "page 1 refused"), 200, "", "", {}});
  });
  ASSERT_FALSE(stopped);
  EXPECT_EQ(stopped.error().error.message(), "page 1 refused");
  EXPECT_EQ(pages, 1);
  EXPECT_EQ(server_->count("list"), 1);
}

// A raw page for `things` lists, the store answering everything else.
std::unique_ptr<LoopbackApiServer> serve_list_body(std::string body) {
  auto server = std::make_unique<LoopbackApiServer>();
  server->set_raw_handler([body](const hypertopo::testing::RawHttpRequest& r)
                              -> std::optional<hypertopo::testing::RawHttpResponse> {
    if (r.method != "GET" || !r.target.starts_with("/apis/hypertopo.io/v1alpha1/things?"))
      return std::nullopt;
    return hypertopo::testing::RawHttpResponse{.body = body};
  });
  EXPECT_TRUE(server->start());
  return server;
}

// A page list() refuses, list_pages() refuses with the same error; one it reads, list_pages() keeps.
TEST_F(KubeClientTest, ListPagesRefusesWhatListRefuses) {
  const std::string deep = std::string(2000, '[') + std::string(2000, ']');
  const std::vector<std::pair<std::string, bool>> bodies = {
      {R"({"metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"caf\u00e9"}}]})", true},
      {"{\"metadata\":{\"resourceVersion\":\"7\"},\"items\":[{\"metadata\":{\"name\":\"\xc3\x28\"}}]}",
       false},
      {R"({"metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"a"}})", false},
      {R"({"metadata":{"resourceVersion":"7"},"items":{}})", false},
      {R"({"metadata":{"resourceVersion":"7"}})", false},
      {R"([{"metadata":{"name":"a"}}])", false},
      {R"({"metadata":{"resourceVersion":"7"},"items":[{"spec":)" + deep + "}]}", true},
      {R"({"metadata":{"resourceVersion":"7"},"items":[{"spec":123456789012345678901234567890}]})", true},
      {R"({"metadata":{"resourceVersion":"6","resourceVersion":"7"},"items":[]})", true},
  };
  for (const auto& [body, accepted] : bodies) {
    auto server = serve_list_body(body);
    ClusterConfig config;
    config.server = server->url();
    auto client = make_client(config, fast_options());
    auto listed = client->list(kThings, "");
    auto paged = client->list_pages(kThings, "");
    ASSERT_EQ(listed.has_value(), accepted) << body.substr(0, 80);
    ASSERT_EQ(paged.has_value(), accepted) << body.substr(0, 80);
    if (accepted) {
      EXPECT_EQ(paged->resource_version, "7");
      EXPECT_EQ(paged->resource_version, listed->resource_version);
      EXPECT_EQ(paged->pages, std::vector<std::string>{body});
    } else {
      EXPECT_EQ(paged.error().error.message(), listed.error().error.message());
      EXPECT_EQ(paged.error().code(), ErrorCode::kParse);
      EXPECT_EQ(paged.error().http_status, listed.error().http_status);
    }
  }
}

// A continue token that expired between pages is a 410 for the whole list: list again.
TEST_F(KubeClientTest, ListPagesExpiredContinueIsGone) {
  LoopbackApiServer server;
  std::atomic<int> writes{0};
  server.set_raw_handler([&server, &writes](const hypertopo::testing::RawHttpRequest& r)
                             -> std::optional<hypertopo::testing::RawHttpResponse> {
    if (r.target.find("continue=") != std::string::npos) {
      // A write since the first page, then compaction: the list's version is gone.
      hypertopo::testing::StoreRequest write{"POST",
                                             "/apis/hypertopo.io/v1alpha1/things",
                                             {},
                                             "application/json",
                                             thing("late-" + std::to_string(writes++)).dump()};
      EXPECT_EQ(server.store().handle(write).status, 201);
      server.store().compact();
    }
    return std::nullopt;
  });
  ASSERT_TRUE(server.start());
  ClusterConfig config;
  config.server = server.url();
  auto client = make_client(config, fast_options());
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(client->create(kThings, "", thing("t" + std::to_string(i))));
  auto paged = client->list_pages(kThings, "", {.page_size = 2});
  ASSERT_FALSE(paged);
  EXPECT_TRUE(paged.error().gone());
  EXPECT_EQ(paged.error().http_status, 410);
  auto listed = client->list(kThings, "", {.page_size = 2});
  ASSERT_FALSE(listed);
  EXPECT_EQ(paged.error().error.message(), listed.error().error.message());
}

TEST_F(KubeClientTest, RetriesServerErrorsWithCappedBackoff) {
  start();
  auto client = make_client();
  ASSERT_TRUE(client->create(kThings, "", thing("leaf-a")));
  clock_->clear_sleeps();
  server_->fail_next(4, 503, 0, "get");
  auto got = client->get(kThings, "", "leaf-a");
  ASSERT_TRUE(got) << got.error().error.message();
  EXPECT_EQ(server_->count("get"), 5);
  std::vector<timing::Clock::Duration> expected = {milliseconds(1), milliseconds(2), milliseconds(4),
                                                   milliseconds(8)};
  EXPECT_EQ(clock_->sleeps(), expected);

  // Out of attempts: the last answer is the error.
  clock_->clear_sleeps();
  server_->fail_next(5, 500, 0, "get");
  auto failed = client->get(kThings, "", "leaf-a");
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().http_status, 500);
  EXPECT_EQ(failed.error().code(), ErrorCode::kUnavailable);
  EXPECT_EQ(clock_->sleeps().size(), 4u);
  EXPECT_EQ(clock_->sleeps().back(), milliseconds(8));  // capped
}

TEST_F(KubeClientTest, TooManyRequestsHonoursRetryAfterEvenForCreate) {
  start();
  auto client = make_client();
  server_->fail_next(1, 429, /*retry_after_seconds=*/2, "create");
  auto created = client->create(kThings, "", thing("leaf-a"));
  ASSERT_TRUE(created) << created.error().error.message();
  EXPECT_EQ(server_->count("create"), 2);
  ASSERT_EQ(clock_->sleeps().size(), 1u);
  EXPECT_EQ(clock_->sleeps()[0], std::chrono::seconds(2));

  // A 500 on create may have acted: it is not repeated.
  server_->fail_next(1, 500, 0, "create");
  auto second = client->create(kThings, "", thing("leaf-b"));
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().http_status, 500);
  EXPECT_EQ(server_->count("create"), 3);
}

TEST_F(KubeClientTest, DroppedConnectionsAndTimeoutsAreRetriedForIdempotentCalls) {
  start();
  ClusterConfig config;
  config.server = server_->url();
  ClientOptions options = fast_options();
  options.request_timeout = milliseconds(150);
  auto client = make_client(config, options);
  ASSERT_TRUE(client->create(kThings, "", thing("leaf-a")));

  server_->drop_next(1, "get");
  auto after_drop = client->get(kThings, "", "leaf-a");
  ASSERT_TRUE(after_drop) << after_drop.error().error.message();

  server_->delay_next(1, milliseconds(600), "get");
  auto after_slow = client->get(kThings, "", "leaf-a");
  ASSERT_TRUE(after_slow) << after_slow.error().error.message();
  EXPECT_EQ(server_->count("get"), 4);

  // A create that timed out may have landed: it is reported, not repeated.
  server_->delay_next(1, milliseconds(600), "create");
  auto slow_create = client->create(kThings, "", thing("leaf-b"));
  ASSERT_FALSE(slow_create);
  EXPECT_EQ(slow_create.error().code(), ErrorCode::kUnavailable);
  EXPECT_EQ(slow_create.error().http_status, 0);
  EXPECT_NE(slow_create.error().error.message().find("timed out"), std::string::npos);
  EXPECT_EQ(server_->count("create"), 2);
}

TEST_F(KubeClientTest, TruncatedJsonIsACleanParseError) {
  start();
  auto client = make_client();
  ASSERT_TRUE(client->create(kThings, "", thing("leaf-a")));
  server_->truncate_next(1, "get");
  auto got = client->get(kThings, "", "leaf-a");
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code(), ErrorCode::kParse);
  server_->truncate_next(1, "list");
  auto listed = client->list(kThings, "");
  ASSERT_FALSE(listed);
  EXPECT_EQ(listed.error().code(), ErrorCode::kParse);
  server_->truncate_next(1, "list");
  auto paged = client->list_pages(kThings, "");
  ASSERT_FALSE(paged);
  EXPECT_EQ(paged.error().code(), ErrorCode::kParse);
  EXPECT_EQ(paged.error().error.message(), listed.error().error.message());
  EXPECT_TRUE(client->get(kThings, "", "leaf-a"));  // the connection is still usable
}

TEST_F(KubeClientTest, BearerTokenIsCheckedAndARotatedFileIsReRead) {
  start({.bearer_token = "first-token"});
  TempDir dir;
  auto token_path = dir.path() / "token";
  write_text(token_path, "first-token\n");
  ClusterConfig config;
  config.server = server_->url();
  config.token = TokenSource::file(token_path);
  auto client = make_client(config, fast_options());
  ASSERT_TRUE(client->list(kThings, ""));
  EXPECT_EQ(server_->last_bearer_token(), "first-token");

  // The kubelet rotates the projected token; the server now only accepts the new one.
  write_text(dir.path() / "token.next", "second-token\n");
  std::filesystem::rename(dir.path() / "token.next", token_path);
  server_->set_bearer_token("second-token");
  server_->reset_counts();
  auto after = client->list(kThings, "");
  ASSERT_TRUE(after) << after.error().error.message();
  EXPECT_EQ(server_->last_bearer_token(), "second-token");
  EXPECT_EQ(server_->requests(), 1);  // no failed attempt with the old token

  ClusterConfig wrong;
  wrong.server = server_->url();
  wrong.token = TokenSource::fixed("stolen");
  auto intruder = make_client(wrong, fast_options());
  auto denied = intruder->get(kThings, "", "x");
  ASSERT_FALSE(denied);
  EXPECT_EQ(denied.error().http_status, 401);
  EXPECT_EQ(denied.error().code(), ErrorCode::kPermission);
  EXPECT_EQ(denied.error().reason, "Unauthorized");
}

TEST_F(KubeClientTest, ObserverSeesEveryAttempt) {
  start();
  ClusterConfig config;
  config.server = server_->url();
  ClientOptions options = fast_options();
  std::mutex mutex;
  std::vector<std::string> seen;
  options.observer = [&](const RequestRecord& r) {
    std::lock_guard lock(mutex);
    seen.push_back(r.verb + " " + std::to_string(r.http_status) + " " + std::to_string(r.attempt));
  };
  auto client = make_client(config, options);
  server_->fail_next(1, 503, 0, "create");
  EXPECT_FALSE(client->create(kThings, "", thing("leaf-a")));  // 503 on create is not retried
  ASSERT_TRUE(client->get(kThings, "", "missing").error().not_found());
  EXPECT_EQ(seen, std::vector<std::string>({"create 503 0", "get 404 0"}));
}

TEST_F(KubeClientTest, ConcurrentCallersShareTheClient) {
  start();
  auto client = make_client();
  ASSERT_TRUE(client->create(kThings, "", thing("leaf-a")));
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        if (client->get(kThings, "", "leaf-a")) ++ok;
        auto r = client->update_with_retry(
            kThings, "", "leaf-a",
            [&](json& o) {
              o["metadata"]["labels"]["t" + std::to_string(t)] = std::to_string(i);
              return true;
            },
            /*max_conflicts=*/1000);
        if (r) ++ok;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), 160);
  auto final_object = client->get(kThings, "", "leaf-a");
  for (int t = 0; t < 4; ++t) EXPECT_EQ((*final_object)["metadata"]["labels"]["t" + std::to_string(t)], "19");
  EXPECT_LE(client->connections_opened(), 4);
}

TEST_F(KubeClientTest, KeepAliveReusesOneConnection) {
  start();
  auto client = make_client();
  ASSERT_TRUE(client->create(kThings, "", thing("leaf-a")));
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(client->get(kThings, "", "leaf-a"));
  EXPECT_EQ(client->connections_opened(), 1);
  EXPECT_EQ(server_->connections_accepted(), 1);
}

TEST_F(KubeClientTest, QpsLimitPacesRequests) {
  start();
  ClusterConfig config;
  config.server = server_->url();
  ClientOptions options = fast_options();
  options.qps = 4;
  options.burst = 2;
  auto client = make_client(config, options);
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(client->list(kThings, ""));
  // Two go at once; the other four wait a quarter second each.
  auto sleeps = clock_->sleeps();
  ASSERT_EQ(sleeps.size(), 4u);
  for (auto s : sleeps) EXPECT_NEAR(std::chrono::duration<double>(s).count(), 0.25, 1e-6);
}

TEST_F(KubeClientTest, KubeconfigEndToEnd) {
  start({.bearer_token = "kc-token", .tls = true});
  TempDir dir;
  std::string kubeconfig =
      "apiVersion: v1\nkind: Config\ncurrent-context: loop\nclusters:\n- name: loop\n  cluster:\n"
      "    server: " +
      server_->url() + "\n    certificate-authority-data: " + base64(server_->certificate().cert_pem) +
      "\ncontexts:\n- name: loop\n  context: {cluster: loop, user: me}\n"
      "users:\n- name: me\n  user: {token: kc-token}\n";
  write_text(dir.path() / "config", kubeconfig);
  auto config = load_kubeconfig(dir.path() / "config");
  ASSERT_TRUE(config) << config.error().message();
  auto client = make_client(*config, fast_options());
  ASSERT_TRUE(client->create(kThings, "", thing("leaf-a")));
  EXPECT_TRUE(client->get(kThings, "", "leaf-a"));
}

TEST_F(KubeClientTest, TlsVerifiesTheServer) {
  start({.tls = true});
  ClusterConfig config;
  config.server = server_->url();
  config.tls.ca_pem = server_->certificate().cert_pem;
  auto trusted = make_client(config, fast_options());
  ASSERT_TRUE(trusted->list(kThings, "")) << "a CA that signed the server's certificate";

  auto other_ca = hypertopo::testing::make_self_signed_cert("someone-else");
  ASSERT_TRUE(other_ca);
  ClusterConfig untrusted = config;
  untrusted.tls.ca_pem = other_ca->cert_pem;
  auto refused = make_client(untrusted, fast_options())->list(kThings, "");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), ErrorCode::kUnavailable);
  EXPECT_NE(refused.error().error.message().find("TLS handshake"), std::string::npos);

  ClusterConfig wrong_name = config;
  wrong_name.tls.server_name = "not-the-server.example";
  EXPECT_FALSE(make_client(wrong_name, fast_options())->list(kThings, ""));

  ClusterConfig insecure = untrusted;
  insecure.tls.insecure_skip_verify = true;
  EXPECT_TRUE(make_client(insecure, fast_options())->list(kThings, ""));

  ClusterConfig plain;
  plain.server = "http://127.0.0.1:" + std::to_string(server_->port());
  EXPECT_FALSE(make_client(plain, fast_options())->list(kThings, ""));
}

TEST_F(KubeClientTest, TlsClientCertificate) {
  start({.tls = true, .require_client_cert = true});
  ClusterConfig config;
  config.server = server_->url();
  config.tls.ca_pem = server_->certificate().cert_pem;
  EXPECT_FALSE(make_client(config, fast_options())->list(kThings, ""));
  config.tls.client_cert_pem = server_->certificate().cert_pem;
  config.tls.client_key_pem = server_->certificate().key_pem;
  auto client = make_client(config, fast_options());
  auto listed = client->list(kThings, "");
  ASSERT_TRUE(listed) << listed.error().error.message();
  EXPECT_TRUE(server_->last_request_had_client_cert());
}

TEST_F(KubeClientTest, UnreachableServerIsUnavailable) {
  start();
  uint16_t port = server_->port();
  server_->stop();
  ClusterConfig config;
  config.server = "http://127.0.0.1:" + std::to_string(port);
  auto client = make_client(config, fast_options());
  auto got = client->get(kThings, "", "x");
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code(), ErrorCode::kUnavailable);
  EXPECT_EQ(got.error().http_status, 0);
  EXPECT_EQ(clock_->sleeps().size(), 4u);  // connect failures are retried too

  EXPECT_FALSE(KubeClient::create(ClusterConfig{.server = "ftp://x"}, fast_options()));
}

}  // namespace
}  // namespace hypertopo::k8s
