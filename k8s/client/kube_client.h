// k8s/client/kube_client.h: a small, blocking Kubernetes REST client for any resource.
//
// Resources are named by group/version/plural (no generated types): objects are nlohmann::json as
// the API server sends them. Every call is blocking and thread-safe, runs under timeouts (connect,
// and read/write per attempt), waits for the client-side QPS/burst token bucket, reuses keep-alive
// connections, and retries with capped exponential backoff on 429 (honouring Retry-After), 5xx,
// timeouts and cut connections. Retries apply to idempotent calls (everything but create, which is
// retried only on 429 and when the request never left). Errors are ApiError (api_error.h): HTTP
// status, the Status object's reason and message, and a mapped hypertopo::ErrorCode. Every call
// takes an optional stop token: once it fires, no further attempt goes out and a backoff wait ends
// at once (cancelled()), as client-go's requests end with their context; a leader that loses its
// Lease hands its term's token so that nothing it queued is written after it stepped down.
//
// clang-format off
//   auto config = load_kubeconfig(path, "");                     // or in_cluster_config(...)
//   auto client = KubeClient::create(*config, {.qps = 20, .burst = 40});
//   const Resource hypernodes{"topology.volcano.sh", "v1alpha1", "hypernodes", /*namespaced=*/false};
//
//   auto owned = (*client)->list(hypernodes, "", {.label_selector = "app.kubernetes.io/managed-by=hypertopo"});
//   auto made = (*client)->create(hypernodes, "", object);     // 409 AlreadyExists: made.error().already_exists()
//   object["metadata"]["resourceVersion"] = ...;
//   auto put = (*client)->update(hypernodes, "", object);      // stale resourceVersion: put.error().conflict()
//   auto done = (*client)->update_with_retry(hypernodes, "", "leaf-a", [](nlohmann::json& o) {
//     if (o["spec"]["tier"] == 1) return false;                // nothing to change: no write at all
//     o["spec"]["tier"] = 1;
//     return true;
//   });
//   (*client)->update_status(hypernodes, "", object_with_status);
//   (*client)->patch(hypernodes, "", "leaf-a", {{"metadata", {{"labels", {{"k", "v"}}}}}});
//   (*client)->delete_object(hypernodes, "", "leaf-a", {.uid = uid});
//
// Watching (list, then watch from the list's resourceVersion; resume after each end; relist on 410):
//
//   std::string rv = owned->resource_version;
//   for (;;) {
//     auto end = (*client)->watch(hypernodes, "", {.resource_version = rv}, [&](const WatchEvent& e) {
//       if (e.type != WatchEvent::Type::kBookmark) handle(e);
//       return true;                                           // false stops the watch
//     }, stop_token);
//     if (end) {
//       rv = end->resource_version;
//       if (end->reason == WatchEnd::Reason::kStopped) break;
//       continue;
//     }
//     if (end.error().gone()) { relist(); rv = relisted.resource_version; continue; }   // 410: relist
//     back_off();                                              // other errors: resume from the last rv seen
//   }
// clang-format on
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <stop_token>
#include <string>
#include <vector>

#include "k8s/client/api_error.h"
#include "k8s/client/kube_config.h"
#include "timing/clock.h"

namespace hypertopo::net {
class HttpTransport;  // net/http_transport.h
}  // namespace hypertopo::net

namespace hypertopo::k8s {

// A REST resource: "/apis/<group>/<version>/[namespaces/<ns>/]<plural>", or "/api/<version>/..." for
// the core group ("").
struct Resource {
  std::string group;
  std::string version;
  std::string plural;
  bool namespaced = true;

  // The URL path for a collection (name "") or one object; `subresource` is e.g. "status".
  std::string path(const std::string& ns, const std::string& name = "",
                   const std::string& subresource = "") const;
};

inline const Resource kNodesResource{"", "v1", "nodes", false};
inline const Resource kEventsResource{"", "v1", "events", true};
inline const Resource kSecretsResource{"", "v1", "secrets", true};
inline const Resource kConfigMapsResource{"", "v1", "configmaps", true};
inline const Resource kLeasesResource{"coordination.k8s.io", "v1", "leases", true};

struct RetryPolicy {
  int max_attempts = 5;  // attempts in all, the first included
  std::chrono::milliseconds base{200};
  std::chrono::milliseconds cap{10000};
  std::chrono::milliseconds max_retry_after{60000};  // a longer Retry-After is cut to this
};

// One attempt, as seen by an observer (metrics: API calls by verb and outcome).
struct RequestRecord {
  std::string verb;  // get, list, watch, create, update, patch, delete
  std::string path;
  int http_status = 0;  // 0: no answer (timeout, connection failure)
  int attempt = 0;      // 0 for the first try
};

struct ClientOptions {
  std::chrono::milliseconds connect_timeout{10000};
  std::chrono::milliseconds request_timeout{30000};  // write and read of one attempt
  double qps = 5;                                    // client-go's defaults; <= 0 disables the limit
  int burst = 10;
  RetryPolicy retry;
  std::shared_ptr<timing::Clock> clock;  // null: timing::SystemClock. Rate limiting and backoff sleep on it.
  std::string user_agent = "hypertopo";
  std::function<void(const RequestRecord&)> observer;  // called after every attempt; must be thread-safe
};

struct ListOptions {
  std::string label_selector;  // "a=b,c!=d,e in (x,y),!f"
  std::string field_selector;  // "metadata.name=x"
  int page_size = 500;         // `limit` per request; the client follows `continue` to the end
};

struct ObjectList {
  std::vector<nlohmann::json> items;
  std::string resource_version;  // of the list: start a watch here
};

// A list as the server sent it: each page's JSON text (an object with an `items` array), for readers
// that parse faster than a tree of nlohmann objects is built.
struct PageList {
  std::vector<std::string> pages;
  std::string resource_version;  // of the list (its first page): start a watch here
};

enum class PatchType { kMerge, kApply };  // application/merge-patch+json, server-side apply

struct PatchOptions {
  PatchType type = PatchType::kMerge;
  std::string field_manager = "hypertopo";  // required by server-side apply
  bool force = false;                       // apply: take over fields other managers own
  bool status = false;                      // patch the /status subresource
};

struct DeleteOptions {
  std::string uid;               // precondition: delete only this incarnation
  std::string resource_version;  // precondition: delete only this version
};

struct UpdateResult {
  nlohmann::json object;  // as stored after the call
  bool written = false;   // false: the mutation changed nothing and nothing was sent
  int conflicts = 0;      // 409s met and retried
};

struct WatchEvent {
  enum class Type { kAdded, kModified, kDeleted, kBookmark };
  Type type;
  nlohmann::json object;  // for a bookmark, only metadata.resourceVersion is meaningful
  std::string resource_version;
};

struct WatchOptions {
  std::string resource_version;  // "" or "0": synthetic ADDED events for what exists now, then changes
  std::string label_selector;
  std::string field_selector;
  bool allow_bookmarks = true;
  std::chrono::seconds server_timeout{300};  // the server ends the watch after this (timeoutSeconds)
  std::chrono::milliseconds idle_timeout{
      0};  // no bytes for this long: the stream is dead; 0: server_timeout + 30s
};

struct WatchEnd {
  enum class Reason {
    kServerClosed,  // the server ended the stream cleanly (timeoutSeconds): resume from resource_version
    kStopped,       // the callback returned false, or the stop token fired
    kDisconnected,  // the connection was cut or went silent: resume from resource_version
  };
  Reason reason;
  std::string resource_version;  // the last one seen (events and bookmarks); the start one if none
  size_t events = 0;             // bookmarks included
  std::string detail;            // why a disconnect happened
};

class TokenBucket;

class KubeClient {
 public:
  static std::expected<std::unique_ptr<KubeClient>, Error> create(const ClusterConfig& config,
                                                                  ClientOptions options = {});
  ~KubeClient();
  KubeClient(const KubeClient&) = delete;
  KubeClient& operator=(const KubeClient&) = delete;

  ApiResult<nlohmann::json> get(const Resource& resource, const std::string& ns, const std::string& name,
                                std::stop_token stop = {});
  // Every page, following `continue`. A 410 here means the continue token expired: list again.
  ApiResult<ObjectList> list(const Resource& resource, const std::string& ns, const ListOptions& options = {},
                             std::stop_token stop = {});
  // Every page, following `continue`, handed to `on_page` as its JSON text (an object with an `items`
  // array, checked) before the next is fetched: a list of any length costs one page of memory, as
  // client-go's reflector pages its initial list. An error `on_page` returns ends the list. Returns
  // the list's resourceVersion (of its first page): start a watch there.
  ApiResult<std::string> list_each_page(const Resource& resource, const std::string& ns,
                                        const ListOptions& options,
                                        const std::function<ApiResult<void>(std::string& page)>& on_page);
  // list() with each page's text handed back unparsed: the same requests, paging, errors and 410
  // meaning; a page is checked (a JSON object with an items array) but its items are not parsed.
  ApiResult<PageList> list_pages(const Resource& resource, const std::string& ns,
                                 const ListOptions& options = {});
  ApiResult<nlohmann::json> create(const Resource& resource, const std::string& ns,
                                   const nlohmann::json& object, std::stop_token stop = {});
  // PUT of the whole object; metadata.resourceVersion, when set, must be current (else conflict()).
  // The server ignores status here: use update_status().
  ApiResult<nlohmann::json> update(const Resource& resource, const std::string& ns,
                                   const nlohmann::json& object, std::stop_token stop = {});
  // PUT to /status: only the object's status changes.
  ApiResult<nlohmann::json> update_status(const Resource& resource, const std::string& ns,
                                          const nlohmann::json& object, std::stop_token stop = {});
  // GET, mutate, PUT with the fetched resourceVersion; on 409 fetch again and re-apply `mutate`,
  // up to `max_conflicts` times. `mutate` returns false when the object is already as wanted: then
  // nothing is written. `status` writes through /status.
  ApiResult<UpdateResult> update_with_retry(const Resource& resource, const std::string& ns,
                                            const std::string& name,
                                            const std::function<bool(nlohmann::json&)>& mutate,
                                            int max_conflicts = 10, bool status = false);
  // A merge patch, or server-side apply of `patch` (a full intent object) as `field_manager`.
  ApiResult<nlohmann::json> patch(const Resource& resource, const std::string& ns, const std::string& name,
                                  const nlohmann::json& patch, const PatchOptions& options = {},
                                  std::stop_token stop = {});
  ApiResult<void> delete_object(const Resource& resource, const std::string& ns, const std::string& name,
                                const DeleteOptions& options = {}, std::stop_token stop = {});
  // Streams events to `on_event` until the server ends the stream, the connection drops, the
  // callback returns false or `stop` fires. Opening is retried like a GET. A 410 Gone (the
  // resourceVersion was compacted away) comes back as an error with gone() true: list again and
  // watch from the new list's resourceVersion. A 429 or 5xx answer to the opening request waits out
  // the server's Retry-After before the next attempt, as for any other call. Other ends say where to
  // resume.
  ApiResult<WatchEnd> watch(const Resource& resource, const std::string& ns, const WatchOptions& options,
                            const std::function<bool(const WatchEvent&)>& on_event,
                            std::stop_token stop = {});

  int connections_opened() const;  // for tests of connection reuse

 private:
  KubeClient(ClusterConfig config, ClientOptions options);
  struct Call;
  ApiResult<std::string> call(const Call& call);
  // What the paging needs of one page: its list's resourceVersion and the continue token.
  struct PageMeta {
    std::string resource_version;
    std::string next;
  };
  // GETs every page of a list, following `continue`; `read` takes each page's body ("what" names the
  // request for errors) and says what the paging needs.
  ApiResult<void> each_page(
      const Resource& resource, const std::string& ns, const ListOptions& options,
      const std::function<ApiResult<PageMeta>(std::string& body, const std::string& what)>& read,
      std::stop_token stop = {});
  // The one check of a page the page readers keep as text: an object with an `items` list; gives its
  // metadata. Reserves simdjson's padding in `body`, kept when the page is moved out.
  static ApiResult<PageMeta> check_page(std::string& body, const std::string& what);
  std::vector<std::pair<std::string, std::string>> headers(const std::string& token,
                                                           const std::string& content_type) const;
  std::chrono::milliseconds backoff(int attempt) const;
  // Waits `d` on the clock; with a stop token that can fire, the wait ends when it does.
  void pause(std::chrono::milliseconds d, std::stop_token stop) const;

  ClusterConfig config_;
  ClientOptions options_;
  std::string base_path_;
  std::unique_ptr<net::HttpTransport> transport_;
  std::unique_ptr<TokenBucket> bucket_;
};

}  // namespace hypertopo::k8s
