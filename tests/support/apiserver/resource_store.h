// tests/support/apiserver/resource_store.h: the storage and REST semantics of the loopback API server.
//
// Test code only. Keeps any resource under `/api/v1/...` or `/apis/<group>/<version>/...` the way
// a real API server does, without knowing any schema: one global resourceVersion bumped on every
// write, uid and creationTimestamp on create, 409 AlreadyExists / Conflict, 404 NotFound as Status
// objects, label and field selectors, paginated lists, a `/status` subresource (the main resource
// ignores status, `/status` changes only status), merge patches, deletes with preconditions and an
// event log that watches replay from a resourceVersion, with 410 Gone before a compaction point.
// No HTTP here (loopback_apiserver.h carries requests in and out), so it is cheap to build and test.
//
//   ResourceStore store;
//   auto r = store.handle({.method = "POST", .path = "/api/v1/namespaces/ns/secrets", .body = R"({...})"});
//   // r.status == 201, r.body is the stored object with metadata.resourceVersion set
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace hypertopo::testing {

struct StoreRequest {
  std::string method;                        // GET, POST, PUT, PATCH, DELETE
  std::string path;                          // without the query
  std::map<std::string, std::string> query;  // decoded
  std::string content_type;
  std::string body;
};

struct StoreResponse {
  int status = 200;
  std::string body;  // JSON
};

// Parsed resource path. `collection` is "<group>/<version>/<plural>" ("" group for the core API).
struct ResourcePath {
  std::string collection;
  std::string namespace_;  // empty for cluster-scoped or all-namespace requests
  std::string name;
  bool status = false;
};
std::optional<ResourcePath> parse_resource_path(const std::string& path);

// Kubernetes label selector semantics: =, ==, !=, in, notin, exists, !exists; comma means AND.
// Returns nullopt when the selector does not parse.
struct LabelRequirement {
  enum class Op { kEq, kNotEq, kIn, kNotIn, kExists, kNotExists } op;
  std::string key;
  std::vector<std::string> values;
};
std::optional<std::vector<LabelRequirement>> parse_label_selector(const std::string& selector);
bool labels_match(const std::vector<LabelRequirement>& selector, const nlohmann::json& labels);

struct WatchEventRecord {
  std::string type;  // ADDED, MODIFIED, DELETED
  std::string collection;
  uint64_t resource_version = 0;
  nlohmann::json object;
  nlohmann::json previous;  // MODIFIED: the object before, so selector watches see it enter or leave
};

// The k8s verb a request maps to: get, list, watch, create, update, patch, delete.
std::string verb_of(const StoreRequest& request);

class ResourceStore {
 public:
  // Serves every non-watch request.
  StoreResponse handle(const StoreRequest& request);

  // A watch subscription. open_watch() answers the synthetic ADDED events (for resourceVersion
  // "" or "0") or the replay from the log, then next() blocks for later events.
  struct WatchCursor {
    ResourcePath path;
    std::vector<LabelRequirement> selector;
    std::string field_name;  // metadata.name=<x> field selector, or empty
    uint64_t after = 0;      // last resourceVersion delivered
    bool allow_bookmarks = false;
    uint64_t bookmarks_seen = 0;
  };
  struct WatchOpen {
    int status = 200;                     // 200, or 400 for a bad selector
    std::string error_body;               // Status object when status != 200
    bool gone = false;                    // the resourceVersion is older than the compaction point
    std::vector<nlohmann::json> initial;  // watch events (JSON objects with type and object)
    WatchCursor cursor;
  };
  WatchOpen open_watch(const StoreRequest& request);
  // Waits up to `wait` for events after the cursor; returns them as watch event JSON objects
  // (BOOKMARKs included when asked for). Empty when nothing happened or the store is closing.
  std::vector<nlohmann::json> next_events(WatchCursor& cursor, std::chrono::milliseconds wait);

  // Test controls.
  void compact();                     // watches and continue tokens from before now get 410
  void emit_bookmark();               // every watch that allows bookmarks gets one
  uint64_t resource_version() const;  // the latest resourceVersion
  void close();                       // wakes every watcher for shutdown
  bool closed() const;
  // Direct access for tests, bypassing HTTP (a second writer, a check on what was stored).
  std::optional<nlohmann::json> object(const std::string& collection, const std::string& ns,
                                       const std::string& name) const;
  size_t object_count(const std::string& collection) const;
  std::vector<nlohmann::json> objects(const std::string& collection) const;  // every namespace

 private:
  struct Collection {
    std::map<std::string, nlohmann::json> objects;  // "<ns>/<name>" -> object
  };
  StoreResponse get_or_list(const ResourcePath& path, const StoreRequest& request);
  StoreResponse create(const ResourcePath& path, const StoreRequest& request);
  StoreResponse update(const ResourcePath& path, const StoreRequest& request);
  StoreResponse patch(const ResourcePath& path, const StoreRequest& request);
  StoreResponse remove(const ResourcePath& path, const StoreRequest& request);
  // Stores `object` (already merged) as the new state of an existing key; bumps the resourceVersion
  // unless nothing changed, as the real server does.
  StoreResponse commit_update(const ResourcePath& path, const std::string& key, nlohmann::json object);
  void record(const std::string& type, const std::string& collection, const nlohmann::json& object,
              const nlohmann::json& previous = nullptr);
  bool object_matches(const WatchCursor& cursor, const nlohmann::json& object) const;
  // The event type this watch sees, or nullopt. As in Kubernetes, an object modified into a label
  // selector is ADDED for that watch and one modified out of it is DELETED.
  std::optional<std::string> delivered_type(const WatchCursor& cursor, const WatchEventRecord& event) const;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, Collection> collections_;
  std::vector<WatchEventRecord> log_;
  uint64_t resource_version_ = 100;
  uint64_t compacted_ = 0;
  uint64_t uid_counter_ = 0;
  uint64_t bookmark_generation_ = 0;
  bool closed_ = false;
};

// A Status object as the API server writes it.
std::string status_body(int code, const std::string& reason, const std::string& message);

}  // namespace hypertopo::testing
