// Watches against the loopback API server: events and bookmarks, resuming after a cut stream
// without losing or repeating events, 410 Gone after compaction and the relist that follows, and
// stopping on request.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <stop_token>
#include <thread>

#include "k8s/client/kube_client.h"
#include "net/http_server.h"
#include "tests/support/apiserver/loopback_apiserver.h"

namespace hypertopo::k8s {
namespace {

using hypertopo::testing::LoopbackApiServer;
using nlohmann::json;
using std::chrono::milliseconds;

const Resource kWatchedThings{"hypertopo.io", "v1alpha1", "things", /*namespaced=*/false};

json watched_thing(const std::string& name, const std::string& rack = "r0") {
  return {{"apiVersion", "hypertopo.io/v1alpha1"},
          {"kind", "Thing"},
          {"metadata", {{"name", name}, {"labels", {{"rack", rack}}}}},
          {"spec", {{"n", 1}}}};
}

const char* type_name(WatchEvent::Type t) {
  switch (t) {
    case WatchEvent::Type::kAdded:
      return "ADDED";
    case WatchEvent::Type::kModified:
      return "MODIFIED";
    case WatchEvent::Type::kDeleted:
      return "DELETED";
    case WatchEvent::Type::kBookmark:
      return "BOOKMARK";
  }
  return "?";
}

class WatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto started = server_.start();
    ASSERT_TRUE(started) << started.error().message();
    ClusterConfig config;
    config.server = server_.url();
    ClientOptions options;
    options.clock = clock_;
    options.qps = 0;
    options.retry.base = milliseconds(1);
    options.retry.cap = milliseconds(4);
    auto c = KubeClient::create(config, options);
    ASSERT_TRUE(c) << c.error().message();
    client_ = std::move(*c);
  }

  std::shared_ptr<timing::ManualClock> clock_ = std::make_shared<timing::ManualClock>();
  LoopbackApiServer server_;
  std::unique_ptr<KubeClient> client_;
};

TEST_F(WatchTest, DeliversEventsInOrderThenABookmark) {
  auto start = client_->list(kWatchedThings, "");
  ASSERT_TRUE(start);
  ASSERT_TRUE(client_->create(kWatchedThings, "", watched_thing("a")));
  auto other_rack = client_->create(kWatchedThings, "", watched_thing("b", "r9"));
  ASSERT_TRUE(other_rack);
  auto a = client_->get(kWatchedThings, "", "a");
  (*a)["spec"]["n"] = 2;
  ASSERT_TRUE(client_->update(kWatchedThings, "", *a));
  ASSERT_TRUE(client_->delete_object(kWatchedThings, "", "a"));
  std::string delete_rv = std::to_string(server_.store().resource_version());

  std::vector<std::string> seen;
  auto end = client_->watch(kWatchedThings, "",
                            {.resource_version = start->resource_version, .label_selector = "rack=r0"},
                            [&](const WatchEvent& e) {
                              seen.push_back(std::string(type_name(e.type)) + " " + e.resource_version);
                              if (e.type == WatchEvent::Type::kDeleted) server_.store().emit_bookmark();
                              return e.type != WatchEvent::Type::kBookmark;
                            });
  ASSERT_TRUE(end) << end.error().error.message();
  EXPECT_EQ(end->reason, WatchEnd::Reason::kStopped);
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_TRUE(seen[0].starts_with("ADDED "));
  EXPECT_TRUE(seen[1].starts_with("MODIFIED "));
  EXPECT_EQ(seen[2], "DELETED " + delete_rv);
  EXPECT_EQ(seen[3], "BOOKMARK " + delete_rv);
  EXPECT_EQ(end->resource_version, delete_rv);
  EXPECT_EQ(end->events, 4u);
}

TEST_F(WatchTest, ResumesAfterACutStreamWithoutLosingOrRepeatingEvents) {
  auto start = client_->list(kWatchedThings, "");
  ASSERT_TRUE(start);
  for (int i = 0; i < 7; ++i)
    ASSERT_TRUE(client_->create(kWatchedThings, "", watched_thing("t" + std::to_string(i))));
  server_.drop_watches_after(2);  // every stream is cut after two events

  std::map<std::string, int> added;
  std::string rv = start->resource_version;
  int streams = 0;
  while (added.size() < 7 && streams < 20) {
    ++streams;
    auto end = client_->watch(kWatchedThings, "", {.resource_version = rv}, [&](const WatchEvent& e) {
      ++added[e.object["metadata"]["name"].get<std::string>()];
      return added.size() < 7;
    });
    ASSERT_TRUE(end) << end.error().error.message();
    if (added.size() < 7) {
      EXPECT_EQ(end->reason, WatchEnd::Reason::kDisconnected);
      EXPECT_FALSE(end->detail.empty());
    }
    rv = end->resource_version;
  }
  EXPECT_EQ(streams, 4);
  ASSERT_EQ(added.size(), 7u);
  for (const auto& [name, n] : added) EXPECT_EQ(n, 1) << name;
}

TEST_F(WatchTest, GoneAfterCompactionThenRelistAndWatchAgain) {
  ASSERT_TRUE(client_->create(kWatchedThings, "", watched_thing("a")));
  auto first = client_->list(kWatchedThings, "");
  ASSERT_TRUE(first);
  ASSERT_TRUE(client_->create(kWatchedThings, "", watched_thing("b")));
  server_.store().compact();  // history before now is gone

  int events = 0;
  auto gone = client_->watch(kWatchedThings, "", {.resource_version = first->resource_version},
                             [&](const WatchEvent&) {
                               ++events;
                               return true;
                             });
  ASSERT_FALSE(gone);
  EXPECT_TRUE(gone.error().gone());
  EXPECT_EQ(gone.error().http_status, 410);
  EXPECT_EQ(gone.error().reason, "Expired");
  EXPECT_EQ(events, 0);

  // The caller relists (now seeing b) and watches from the new list: c arrives, nothing is missed.
  auto relisted = client_->list(kWatchedThings, "");
  ASSERT_TRUE(relisted);
  EXPECT_EQ(relisted->items.size(), 2u);
  ASSERT_TRUE(client_->create(kWatchedThings, "", watched_thing("c")));
  std::vector<std::string> names;
  auto end = client_->watch(kWatchedThings, "", {.resource_version = relisted->resource_version},
                            [&](const WatchEvent& e) {
                              names.push_back(e.object["metadata"]["name"]);
                              return false;
                            });
  ASSERT_TRUE(end) << end.error().error.message();
  EXPECT_EQ(names, std::vector<std::string>({"c"}));
}

TEST_F(WatchTest, FromZeroListsCurrentStateAndEndsWhenTheServerCloses) {
  ASSERT_TRUE(client_->create(kWatchedThings, "", watched_thing("a")));
  ASSERT_TRUE(client_->create(kWatchedThings, "", watched_thing("b")));
  int added = 0;
  auto end =
      client_->watch(kWatchedThings, "", {.resource_version = "0", .server_timeout = std::chrono::seconds(0)},
                     [&](const WatchEvent& e) {
                       added += e.type == WatchEvent::Type::kAdded;
                       return true;
                     });
  ASSERT_TRUE(end) << end.error().error.message();
  EXPECT_EQ(end->reason, WatchEnd::Reason::kServerClosed);
  EXPECT_EQ(added, 2);
}

TEST_F(WatchTest, OpeningIsRetriedAndAuthErrorsAreReported) {
  server_.fail_next(2, 503, 0, "watch");
  auto end =
      client_->watch(kWatchedThings, "", {.resource_version = "0", .server_timeout = std::chrono::seconds(0)},
                     [](const WatchEvent&) { return true; });
  ASSERT_TRUE(end) << end.error().error.message();
  EXPECT_EQ(server_.count("watch"), 3);

  server_.set_bearer_token("required");
  auto denied = client_->watch(kWatchedThings, "", {}, [](const WatchEvent&) { return true; });
  ASSERT_FALSE(denied);
  EXPECT_EQ(denied.error().code(), ErrorCode::kPermission) << denied.error().error.message();
}

// client-go's rest/request.go waits out a 429's Retry-After before the next attempt; the opening of a
// watch is a request like any other.
TEST_F(WatchTest, A429OnTheOpeningWaitsOutItsRetryAfter) {
  server_.fail_next(1, 429, 3, "watch");
  clock_->clear_sleeps();
  auto end =
      client_->watch(kWatchedThings, "", {.resource_version = "0", .server_timeout = std::chrono::seconds(0)},
                     [](const WatchEvent&) { return true; });
  ASSERT_TRUE(end) << end.error().error.message();
  EXPECT_EQ(server_.count("watch"), 2);
  ASSERT_EQ(clock_->sleeps().size(), 1u);
  EXPECT_EQ(clock_->sleeps()[0], std::chrono::seconds(3));
}

using ClientStopTest = WatchTest;

// A write whose stop token has fired is not sent at all; one waiting out a backoff between attempts
// ends when the token fires, and its next attempt never goes out (a leader that lost its Lease).
TEST_F(ClientStopTest, AStoppedCallSendsNothingMoreAndEndsItsBackoff) {
  std::stop_source stopped;
  stopped.request_stop();
  auto made = client_->create(kWatchedThings, "", watched_thing("a"), stopped.get_token());
  ASSERT_FALSE(made);
  EXPECT_TRUE(made.error().cancelled()) << made.error().error.message();
  EXPECT_EQ(server_.count("create"), 0);

  ASSERT_TRUE(client_->create(kWatchedThings, "", watched_thing("b")));
  auto current = client_->get(kWatchedThings, "", "b");
  ASSERT_TRUE(current);
  server_.fail_next(5, 503, 30, "update");  // each answer asks for 30 s: the client waits on its clock
  std::stop_source term;
  std::optional<ApiResult<json>> result;
  std::thread writer([&] { result = client_->update(kWatchedThings, "", *current, term.get_token()); });
  for (int i = 0; i < 5000 && server_.count("update") == 0; ++i) std::this_thread::sleep_for(milliseconds(1));
  ASSERT_EQ(server_.count("update"), 1);
  term.request_stop();
  writer.join();
  ASSERT_TRUE(result.has_value());
  ASSERT_FALSE(*result);
  EXPECT_TRUE((*result).error().cancelled()) << (*result).error().error.message();
  EXPECT_EQ(server_.count("update"), 1);
}

TEST_F(WatchTest, StopTokenEndsAnIdleWatch) {
  std::stop_source stop;
  std::optional<ApiResult<WatchEnd>> result;
  std::thread watcher([&] {
    result = client_->watch(
        kWatchedThings, "", {}, [](const WatchEvent&) { return true; }, stop.get_token());
  });
  // Wait until the stream is open (the watch request has arrived), then stop it.
  for (int i = 0; i < 2000 && server_.count("watch") == 0; ++i) std::this_thread::sleep_for(milliseconds(1));
  stop.request_stop();
  watcher.join();
  ASSERT_TRUE(result.has_value());
  ASSERT_TRUE(*result) << (*result).error().error.message();
  EXPECT_EQ((*result)->reason, WatchEnd::Reason::kStopped);
}

// A watch stream that never sends a newline (a broken or hostile server, a proxy in between): the
// event being read is bounded (16 MiB), and the watch ends with an error saying so instead of
// buffering the stream for as long as it lasts.
TEST(WatchStream, ALineWithoutANewlineIsBoundedAndEndsTheWatchWithAnError) {
  net::HttpServer server({.address = "127.0.0.1", .port = 0});
  server.handle("GET", "/api/v1/nodes", [](const net::HttpServerRequest&) {
    return net::HttpServerResponse{.content_type = "application/json", .body = std::string(24u << 20, 'x')};
  });
  ASSERT_TRUE(server.start().has_value());
  ClusterConfig config;
  config.server = "http://127.0.0.1:" + std::to_string(server.port());
  auto client = KubeClient::create(config, ClientOptions{.qps = 0});
  ASSERT_TRUE(client) << client.error().message();
  const Resource nodes{"", "v1", "nodes", /*namespaced=*/false};
  int events = 0;
  auto result = (*client)->watch(nodes, "", {}, [&](const WatchEvent&) {
    ++events;
    return true;
  });
  ASSERT_FALSE(result.has_value()) << "a 24 MiB line was buffered whole";
  EXPECT_NE(result.error().error.message().find("longer than 16 MiB without a newline"), std::string::npos)
      << result.error().error.message();
  EXPECT_EQ(events, 0);
}

// An event whose object is not a JSON object (the watch_stream fuzz target's first finding): the
// watch ends with an error, as client-go's decoder ends it, and no callback sees it.
TEST(WatchStream, AnEventWhoseObjectIsNotAnObjectEndsTheWatchWithAnError) {
  net::HttpServer server({.address = "127.0.0.1", .port = 0});
  server.handle("GET", "/api/v1/nodes", [](const net::HttpServerRequest&) {
    return net::HttpServerResponse{.content_type = "application/json",
                                   .body = "{\"type\":\"MODIFIED\",\"object\":[1,2]}\n"};
  });
  ASSERT_TRUE(server.start().has_value());
  ClusterConfig config;
  config.server = "http://127.0.0.1:" + std::to_string(server.port());
  auto client = KubeClient::create(config, ClientOptions{.qps = 0});
  ASSERT_TRUE(client) << client.error().message();
  int events = 0;
  auto result = (*client)->watch(Resource{"", "v1", "nodes", false}, "", {}, [&](const WatchEvent&) {
    ++events;
    return true;
  });
  ASSERT_FALSE(result.has_value());
  EXPECT_NE(result.error().error.message().find("object is not a JSON object"), std::string::npos)
      << result.error().error.message();
  EXPECT_EQ(events, 0);
}

}  // namespace
}  // namespace hypertopo::k8s
