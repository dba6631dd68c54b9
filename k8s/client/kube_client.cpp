#include "k8s/client/kube_client.h"

#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <condition_variable>
#include <mutex>

#include "io/json_view.h"
#include "io/json_writer.h"
#include "k8s/client/rate_limiter.h"
#include "net/http_transport.h"
#include "net/retry.h"
#include "net/url.h"

namespace hypertopo::k8s {
namespace {

using nlohmann::json;

// One watch event (one line of the stream) at most: the API server's largest object is bounded by
// etcd's request limit (1.5 MiB by default; --max-request-bytes), so 16 MiB leaves room for any
// object and stops a stream that never sends a newline from growing without bound.
constexpr std::size_t kMaxWatchEventBytes = std::size_t{16} << 20;

std::string percent_encode(const std::string& text) {
  static const char* digits = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(digits[c >> 4]);
      out.push_back(digits[c & 15]);
    }
  }
  return out;
}

class QueryBuilder {
 public:
  QueryBuilder& add(const std::string& key, const std::string& value) {
    if (value.empty()) return *this;
    if (!text_.empty()) text_ += "&";
    text_ += key + "=" + percent_encode(value);
    return *this;
  }
  const std::string& str() const { return text_; }

 private:
  std::string text_;
};

ApiError local_error(ErrorCode code, const std::string& message) {
  return ApiError{Error(code, message), 0, "", message, {}};
}

ApiError not_an_object(const std::string& body, const std::string& what) {
  ApiError e = local_error(ErrorCode::kParse, what + ": the response is not a JSON object (" +
                                                  std::to_string(body.size()) + " bytes, maybe truncated)");
  e.http_status = 200;
  return e;
}

ApiError no_items(const std::string& what) {
  ApiError e = local_error(ErrorCode::kParse, what + ": the list has no items array");
  e.http_status = 200;
  return e;
}

ApiResult<json> parse_json(const std::string& body, const std::string& what) {
  json parsed = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) return std::unexpected(not_an_object(body, what));
  return parsed;
}

std::string meta_string(const json& object, const char* field) {
  if (!object.is_object() || !object.contains("metadata") || !object["metadata"].is_object()) return "";
  const json& meta = object["metadata"];
  auto it = meta.find(field);
  return it != meta.end() && it->is_string() ? it->get<std::string>() : "";
}

// meta_string over simdjson's DOM (of duplicate keys the last counts, as in nlohmann).
std::string meta_string(const io::SimdjsonView& object, std::string_view field) {
  auto meta = object.find("metadata");
  auto value = meta && meta->is_object() ? meta->find(field) : std::nullopt;
  return value && value->is_string() ? std::string(value->string()) : "";
}

}  // namespace

struct KubeClient::Call {
  std::string verb;
  std::string method;
  std::string path;
  std::string query;
  std::string body;
  std::string content_type;
  bool idempotent = true;
  std::stop_token stop = {};
};

std::string Resource::path(const std::string& ns, const std::string& name,
                           const std::string& subresource) const {
  std::string out = group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
  if (namespaced && !ns.empty()) out += "/namespaces/" + ns;
  out += "/" + plural;
  if (!name.empty()) out += "/" + name;
  if (!name.empty() && !subresource.empty()) out += "/" + subresource;
  return out;
}

KubeClient::KubeClient(ClusterConfig config, ClientOptions options)
    : config_(std::move(config)), options_(std::move(options)) {}

KubeClient::~KubeClient() = default;

std::expected<std::unique_ptr<KubeClient>, Error> KubeClient::create(const ClusterConfig& config,
                                                                     ClientOptions options) {
  auto url = net::parse_http_url(config.server, {.what = "the server URL"});
  if (!url) return std::unexpected(url.error().context("while creating the Kubernetes client"));
  if (!options.clock) options.clock = std::make_shared<timing::SystemClock>();
  std::unique_ptr<KubeClient> client(new KubeClient(config, options));
  client->base_path_ = url->path;
  net::TransportConfig transport;
  transport.host = url->host;
  transport.port = url->port;
  transport.tls = url->tls;
  transport.tls_config = config.tls;
  transport.connect_timeout = options.connect_timeout;
  auto t = net::HttpTransport::create(transport);
  if (!t)
    return std::unexpected(t.error().context("while creating the Kubernetes client for " + config.server));
  client->transport_ = std::move(*t);
  client->bucket_ = std::make_unique<TokenBucket>(options.qps, options.burst, options.clock);
  return client;
}

std::vector<std::pair<std::string, std::string>> KubeClient::headers(const std::string& token,
                                                                     const std::string& content_type) const {
  std::vector<std::pair<std::string, std::string>> out = {{"Accept", "application/json"},
                                                          {"User-Agent", options_.user_agent}};
  if (!token.empty()) out.emplace_back("Authorization", "Bearer " + token);
  if (!content_type.empty()) out.emplace_back("Content-Type", content_type);
  return out;
}

std::chrono::milliseconds KubeClient::backoff(int attempt) const {
  return net::backoff_delay(options_.retry.base, options_.retry.cap, attempt);
}

void KubeClient::pause(std::chrono::milliseconds d, std::stop_token stop) const {
  if (!stop.stop_possible()) {
    options_.clock->sleep_for(d);
    return;
  }
  std::mutex mutex;
  std::condition_variable_any never;
  std::unique_lock lock(mutex);
  options_.clock->wait_until(never, lock, stop, options_.clock->now() + d, [] { return false; });
}

namespace {
ApiError cancelled_error(const std::string& what) {
  ApiError e = local_error(ErrorCode::kUnavailable, what + ": cancelled before it was sent");
  e.reason = "Cancelled";
  return e;
}
}  // namespace

ApiResult<std::string> KubeClient::call(const Call& c) {
  std::string what = c.method + " " + c.path;
  bool reauthenticated = false;
  for (int attempt = 0;; ++attempt) {
    if (c.stop.stop_requested()) return std::unexpected(cancelled_error(what));
    bucket_->acquire();
    if (c.stop.stop_requested()) return std::unexpected(cancelled_error(what));
    auto token = config_.token.token();
    if (!token)
      return std::unexpected(local_error(token.error().code(), what + ": " + token.error().message()));
    net::HttpRequest request{c.method, base_path_ + c.path + (c.query.empty() ? "" : "?" + c.query),
                             headers(*token, c.content_type), c.body};
    auto res = transport_->round_trip(request, options_.request_timeout, c.idempotent, c.stop);
    if (options_.observer) options_.observer({c.verb, c.path, res ? res->status : 0, attempt});
    if (!res && c.stop.stop_requested()) return std::unexpected(cancelled_error(what));
    bool last = attempt + 1 >= std::max(1, options_.retry.max_attempts);
    if (!res) {
      // A create is safe to repeat only when the request never left.
      if (last || !(c.idempotent || !res.error().sent)) {
        ApiError e = local_error(res.error().error.code(), res.error().error.message());
        if (attempt > 0) e.error = e.error.context("after " + std::to_string(attempt + 1) + " attempts");
        return std::unexpected(e);
      }
      pause(backoff(attempt), c.stop);
      continue;
    }
    if (res->status >= 200 && res->status < 300) return std::move(res->body);
    if (res->status == 401 && config_.token.from_file() && !reauthenticated) {
      // The projected token may have rotated between our stat() and the server's check.
      config_.token.invalidate();
      reauthenticated = true;
      --attempt;
      continue;
    }
    // 429 means the server did not act on the request, so even a create may repeat it.
    if (!net::retryable_status(res->status, c.idempotent) || last) {
      return std::unexpected(
          api_error_from_response(what, res->status, res->body, net::parse_retry_after(res->retry_after)));
    }
    pause(net::retry_wait(backoff(attempt), res->retry_after, options_.retry.max_retry_after), c.stop);
  }
}

ApiResult<json> KubeClient::get(const Resource& resource, const std::string& ns, const std::string& name,
                                std::stop_token stop) {
  Call c{"get", "GET", resource.path(ns, name), "", "", "", true, stop};
  auto body = call(c);
  if (!body) return std::unexpected(body.error());
  return parse_json(*body, "GET " + c.path);
}

ApiResult<void> KubeClient::each_page(
    const Resource& resource, const std::string& ns, const ListOptions& options,
    const std::function<ApiResult<PageMeta>(std::string& body, const std::string& what)>& read,
    std::stop_token stop) {
  std::string next;
  for (;;) {
    QueryBuilder q;
    q.add("labelSelector", options.label_selector).add("fieldSelector", options.field_selector);
    if (options.page_size > 0) q.add("limit", std::to_string(options.page_size));
    q.add("continue", next);
    Call c{"list", "GET", resource.path(ns), q.str(), "", "", true, stop};
    auto body = call(c);
    if (!body) return std::unexpected(body.error());
    auto meta = read(*body, "GET " + c.path);
    if (!meta) return std::unexpected(meta.error());
    next = std::move(meta->next);
    if (next.empty()) return {};
  }
}

ApiResult<ObjectList> KubeClient::list(const Resource& resource, const std::string& ns,
                                       const ListOptions& options, std::stop_token stop) {
  ObjectList out;
  bool first = true;
  auto done = each_page(
      resource, ns, options,
      [&](std::string& body, const std::string& what) -> ApiResult<PageMeta> {
        auto parsed = parse_json(body, what);
        if (!parsed) return std::unexpected(parsed.error());
        if (!parsed->contains("items") || !(*parsed)["items"].is_array())
          return std::unexpected(no_items(what));
        for (auto& item : (*parsed)["items"]) out.items.push_back(std::move(item));
        if (first) out.resource_version = meta_string(*parsed, "resourceVersion");
        first = false;
        return PageMeta{"", meta_string(*parsed, "continue")};
      },
      stop);
  if (!done) return std::unexpected(done.error());
  return out;
}

ApiResult<KubeClient::PageMeta> KubeClient::check_page(std::string& body, const std::string& what) {
  // A parser per thread: its buffers, sized for the largest page seen, are reused page after page.
  thread_local simdjson::dom::parser parser;
  // Room for simdjson's padding, kept when the page is moved out: readers parse it without a copy.
  body.reserve(body.size() + simdjson::SIMDJSON_PADDING);
  simdjson::dom::element root;
  if (!parser.parse(body).get(root)) {
    const io::SimdjsonView page(root);
    if (!page.is_object()) return std::unexpected(not_an_object(body, what));
    auto items = page.find("items");
    if (!items || !items->is_array()) return std::unexpected(no_items(what));
    return PageMeta{meta_string(page, "resourceVersion"), meta_string(page, "continue")};
  }
  // What simdjson refuses (nesting past its depth limit, an integer beyond 64 bits, text that is not
  // JSON) is read as list() reads it, so it is accepted or refused exactly as there.
  auto parsed = parse_json(body, what);
  if (!parsed) return std::unexpected(parsed.error());
  if (!parsed->contains("items") || !(*parsed)["items"].is_array()) return std::unexpected(no_items(what));
  return PageMeta{meta_string(*parsed, "resourceVersion"), meta_string(*parsed, "continue")};
}

ApiResult<std::string> KubeClient::list_each_page(
    const Resource& resource, const std::string& ns, const ListOptions& options,
    const std::function<ApiResult<void>(std::string& page)>& on_page) {
  std::string resource_version;
  bool first = true;
  auto done = each_page(resource, ns, options,
                        [&](std::string& body, const std::string& what) -> ApiResult<PageMeta> {
                          auto meta = check_page(body, what);
                          if (!meta) return std::unexpected(meta.error());
                          if (first) resource_version = std::move(meta->resource_version);
                          first = false;
                          if (auto taken = on_page(body); !taken) return std::unexpected(taken.error());
                          return meta;
                        });
  if (!done) return std::unexpected(done.error());
  return resource_version;
}

ApiResult<PageList> KubeClient::list_pages(const Resource& resource, const std::string& ns,
                                           const ListOptions& options) {
  PageList out;
  auto done = each_page(resource, ns, options,
                        [&](std::string& body, const std::string& what) -> ApiResult<PageMeta> {
                          auto meta = check_page(body, what);
                          if (!meta) return std::unexpected(meta.error());
                          if (out.pages.empty()) out.resource_version = std::move(meta->resource_version);
                          out.pages.push_back(std::move(body));
                          return meta;
                        });
  if (!done) return std::unexpected(done.error());
  return out;
}

ApiResult<json> KubeClient::create(const Resource& resource, const std::string& ns, const json& object,
                                   std::stop_token stop) {
  Call c{"create", "POST", resource.path(ns), "", io::json_text(object), "application/json", false, stop};
  auto body = call(c);
  if (!body) return std::unexpected(body.error());
  return parse_json(*body, "POST " + c.path);
}

ApiResult<json> KubeClient::update(const Resource& resource, const std::string& ns, const json& object,
                                   std::stop_token stop) {
  std::string name = meta_string(object, "name");
  if (name.empty())
    return std::unexpected(
        local_error(ErrorCode::kInvalidArgument, "update: the object has no metadata.name"));
  Call c{"update", "PUT", resource.path(ns, name), "", io::json_text(object), "application/json", true, stop};
  auto body = call(c);
  if (!body) return std::unexpected(body.error());
  return parse_json(*body, "PUT " + c.path);
}

ApiResult<json> KubeClient::update_status(const Resource& resource, const std::string& ns, const json& object,
                                          std::stop_token stop) {
  std::string name = meta_string(object, "name");
  if (name.empty()) {
    return std::unexpected(
        local_error(ErrorCode::kInvalidArgument, "update_status: the object has no metadata.name"));
  }
  Call c{"update", "PUT", resource.path(ns, name, "status"), "", io::json_text(object), "application/json",
         true,     stop};
  auto body = call(c);
  if (!body) return std::unexpected(body.error());
  return parse_json(*body, "PUT " + c.path);
}

ApiResult<UpdateResult> KubeClient::update_with_retry(const Resource& resource, const std::string& ns,
                                                      const std::string& name,
                                                      const std::function<bool(json&)>& mutate,
                                                      int max_conflicts, bool status) {
  UpdateResult result;
  for (;;) {
    auto current = get(resource, ns, name);
    if (!current) return std::unexpected(current.error());
    json object = *current;
    if (!mutate(object)) {
      result.object = std::move(*current);
      return result;
    }
    // Always write against the version just read, whatever the mutation did to metadata.
    object["metadata"]["resourceVersion"] = meta_string(*current, "resourceVersion");
    auto written = status ? update_status(resource, ns, object) : update(resource, ns, object);
    if (written) {
      result.object = std::move(*written);
      result.written = true;
      return result;
    }
    if (!written.error().conflict() || result.conflicts >= max_conflicts)
      return std::unexpected(written.error());
    ++result.conflicts;
  }
}

ApiResult<json> KubeClient::patch(const Resource& resource, const std::string& ns, const std::string& name,
                                  const json& patch, const PatchOptions& options, std::stop_token stop) {
  QueryBuilder q;
  std::string content_type = "application/merge-patch+json";
  if (options.type == PatchType::kApply) {
    content_type = "application/apply-patch+yaml";  // JSON is YAML
    q.add("fieldManager", options.field_manager);
    if (options.force) q.add("force", "true");
  }
  Call c{"patch",
         "PATCH",
         resource.path(ns, name, options.status ? "status" : ""),
         q.str(),
         io::json_text(patch),
         content_type,
         true,
         stop};
  auto body = call(c);
  if (!body) return std::unexpected(body.error());
  return parse_json(*body, "PATCH " + c.path);
}

ApiResult<void> KubeClient::delete_object(const Resource& resource, const std::string& ns,
                                          const std::string& name, const DeleteOptions& options,
                                          std::stop_token stop) {
  std::string body;
  if (!options.uid.empty() || !options.resource_version.empty()) {
    json pre = json::object();
    if (!options.uid.empty()) pre["uid"] = options.uid;
    if (!options.resource_version.empty()) pre["resourceVersion"] = options.resource_version;
    body = io::json_text(json{{"kind", "DeleteOptions"}, {"apiVersion", "v1"}, {"preconditions", pre}});
  }
  Call c{"delete", "DELETE", resource.path(ns, name), "", body, body.empty() ? "" : "application/json",
         true,     stop};
  auto res = call(c);
  if (!res) return std::unexpected(res.error());
  return {};
}

ApiResult<WatchEnd> KubeClient::watch(const Resource& resource, const std::string& ns,
                                      const WatchOptions& options,
                                      const std::function<bool(const WatchEvent&)>& on_event,
                                      std::stop_token stop) {
  QueryBuilder q;
  q.add("watch", "1")
      .add("resourceVersion", options.resource_version)
      .add("labelSelector", options.label_selector)
      .add("fieldSelector", options.field_selector)
      .add("allowWatchBookmarks", options.allow_bookmarks ? "true" : "")
      .add("timeoutSeconds", std::to_string(options.server_timeout.count()));
  std::string path = resource.path(ns);
  std::string what = "WATCH " + path;
  auto idle = options.idle_timeout.count() > 0 ? options.idle_timeout
                                               : std::chrono::duration_cast<std::chrono::milliseconds>(
                                                     options.server_timeout + std::chrono::seconds(30));
  WatchEnd end{WatchEnd::Reason::kStopped, options.resource_version, 0, ""};

  // Open the stream, retrying like a GET.
  std::unique_ptr<net::HttpStream> stream;
  bool reauthenticated = false;
  for (int attempt = 0;; ++attempt) {
    if (stop.stop_requested()) return end;
    bucket_->acquire();
    auto token = config_.token.token();
    if (!token)
      return std::unexpected(local_error(token.error().code(), what + ": " + token.error().message()));
    net::HttpRequest request{"GET", base_path_ + path + "?" + q.str(), headers(*token, ""), ""};
    auto opened = transport_->open_stream(request, options_.request_timeout);
    int status = opened ? (*opened)->status() : 0;
    if (options_.observer) options_.observer({"watch", path, status, attempt});
    bool last = attempt + 1 >= std::max(1, options_.retry.max_attempts);
    if (!opened) {
      if (last)
        return std::unexpected(local_error(opened.error().error.code(), opened.error().error.message()));
      pause(backoff(attempt), stop);
      continue;
    }
    if (status == 200) {
      stream = std::move(*opened);
      break;
    }
    std::string body;
    for (;;) {  // an error answer is short: read it whole
      auto more = (*opened)->read_some(body, options_.request_timeout);
      if (!more || !*more || body.size() > (1 << 20)) break;
    }
    if (status == 401 && config_.token.from_file() && !reauthenticated) {
      config_.token.invalidate();
      reauthenticated = true;
      --attempt;
      continue;
    }
    const std::string retry_after = (*opened)->retry_after();
    if (!net::retryable_status(status, /*idempotent=*/true) || last)
      return std::unexpected(
          api_error_from_response(what, status, body, net::parse_retry_after(retry_after)));
    pause(net::retry_wait(backoff(attempt), retry_after, options_.retry.max_retry_after), stop);
  }

  std::stop_callback cancel_on_stop(stop, [&] { stream->cancel(); });
  std::string pending;
  std::size_t scanned = 0;  // bytes of `pending` already searched for a newline
  for (;;) {
    if (stop.stop_requested()) return end;
    auto more = stream->read_some(pending, idle);
    if (!more) {
      if (stop.stop_requested()) return end;
      end.reason = WatchEnd::Reason::kDisconnected;
      end.detail = more.error().message();
      return end;
    }
    size_t start = 0;
    // Only the bytes that arrived are searched: a long line read in many pieces costs linear time.
    for (size_t nl, from = scanned; (nl = pending.find('\n', from)) != std::string::npos;
         from = start = nl + 1) {
      std::string_view line(pending.data() + start, nl - start);
      if (line.find_first_not_of(" \r\t") == std::string_view::npos) continue;
      json event = json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (event.is_discarded() || !event.is_object() || !event.contains("type") ||
          !event["type"].is_string()) {
        ApiError e =
            local_error(ErrorCode::kParse,
                        what + ": a watch event is not valid JSON: " + std::string(line.substr(0, 200)));
        e.http_status = 200;
        return std::unexpected(e);
      }
      std::string type = event["type"];
      json object = event.contains("object") ? event["object"] : json::object();
      // client-go decodes the object into its type and ends the watch when it cannot
      // (watch.StreamWatcher: "unable to decode an event from the watch stream").
      if (!object.is_object()) {
        ApiError e = local_error(ErrorCode::kParse, what + ": a watch event's object is not a JSON object: " +
                                                        std::string(line.substr(0, 200)));
        e.http_status = 200;
        return std::unexpected(e);
      }
      if (type == "ERROR") {
        int code = object.is_object() ? object.value("code", 500) : 500;
        return std::unexpected(api_error_from_response(what, code, io::json_text(object)));
      }
      WatchEvent ev;
      if (type == "ADDED") {
        ev.type = WatchEvent::Type::kAdded;
      } else if (type == "MODIFIED") {
        ev.type = WatchEvent::Type::kModified;
      } else if (type == "DELETED") {
        ev.type = WatchEvent::Type::kDeleted;
      } else if (type == "BOOKMARK") {
        ev.type = WatchEvent::Type::kBookmark;
      } else {
        continue;  // a type this client does not know: skip, as client-go does
      }
      ev.resource_version = meta_string(object, "resourceVersion");
      ev.object = std::move(object);
      if (!ev.resource_version.empty()) end.resource_version = ev.resource_version;
      ++end.events;
      if (!on_event(ev)) {
        end.reason = WatchEnd::Reason::kStopped;
        return end;
      }
    }
    pending.erase(0, start);
    scanned = pending.size();
    if (pending.size() > kMaxWatchEventBytes) {
      ApiError e = local_error(ErrorCode::kParse, what + ": a watch event is longer than " +
                                                      std::to_string(kMaxWatchEventBytes >> 20) +
                                                      " MiB without a newline; the stream is dropped");
      e.http_status = 200;
      return std::unexpected(e);
    }
    if (!*more) {
      end.reason = WatchEnd::Reason::kServerClosed;
      return end;
    }
  }
}

int KubeClient::connections_opened() const { return transport_->connections_opened(); }

}  // namespace hypertopo::k8s
