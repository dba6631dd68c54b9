#include "tests/support/apiserver/resource_store.h"

#include <algorithm>
#include <charconv>
#include <ctime>

namespace hypertopo::testing {
namespace {

using nlohmann::json;

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string current;
  for (char c : text) {
    if (c == sep) {
      out.push_back(current);
      current.clear();
    } else {
      current.push_back(c);
    }
  }
  out.push_back(current);
  return out;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

std::optional<uint64_t> parse_u64(const std::string& s) {
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::string now_rfc3339() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string to_hex(const std::string& s) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

std::optional<std::string> from_hex(const std::string& s) {
  if (s.size() % 2 != 0) return std::nullopt;
  std::string out;
  for (size_t i = 0; i < s.size(); i += 2) {
    unsigned v = 0;
    auto [ptr, ec] = std::from_chars(s.data() + i, s.data() + i + 2, v, 16);
    if (ec != std::errc() || ptr != s.data() + i + 2) return std::nullopt;
    out.push_back(static_cast<char>(v));
  }
  return out;
}

// "hypernodes.topology.volcano.sh" or "secrets": how the API server names a resource in messages.
std::string qualified(const ResourcePath& path) {
  auto parts = split(path.collection, '/');
  return parts[0].empty() ? parts[2] : parts[2] + "." + parts[0];
}

std::string api_version_of(const std::string& collection) {
  auto parts = split(collection, '/');
  return parts[0].empty() ? parts[1] : parts[0] + "/" + parts[1];
}

std::string key_of(const std::string& ns, const std::string& name) { return ns + "/" + name; }

std::string meta_string(const json& object, const char* field) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return "";
  auto it = meta->find(field);
  if (it == meta->end() || !it->is_string()) return "";
  return it->get<std::string>();
}

StoreResponse status_response(int code, const std::string& reason, const std::string& message) {
  return {code, status_body(code, reason, message)};
}

StoreResponse not_found(const ResourcePath& path) {
  return status_response(404, "NotFound", qualified(path) + " \"" + path.name + "\" not found");
}

StoreResponse conflict(const ResourcePath& path, const std::string& name) {
  return status_response(409, "Conflict",
                         "Operation cannot be fulfilled on " + qualified(path) + " \"" + name +
                             "\": the object has been modified; please apply your changes to the latest "
                             "version and try again");
}

std::optional<json> parse_object(const std::string& body) {
  json parsed = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) return std::nullopt;
  return parsed;
}

// Everything but metadata and status: a change here bumps metadata.generation.
json spec_part(json object) {
  object.erase("metadata");
  object.erase("status");
  return object;
}

struct FieldSelector {
  std::string name;
  std::string namespace_;
};

std::optional<FieldSelector> parse_field_selector(const std::string& text) {
  FieldSelector out;
  if (trim(text).empty()) return out;
  for (const auto& part : split(text, ',')) {
    auto eq = part.find('=');
    if (eq == std::string::npos) return std::nullopt;
    std::string key = trim(part.substr(0, eq));
    std::string value = trim(part.substr(part[eq + 1] == '=' ? eq + 2 : eq + 1));
    if (key == "metadata.name") {
      out.name = value;
    } else if (key == "metadata.namespace") {
      out.namespace_ = value;
    } else {
      return std::nullopt;
    }
  }
  return out;
}

std::string query_value(const StoreRequest& request, const std::string& key) {
  auto it = request.query.find(key);
  return it == request.query.end() ? "" : it->second;
}

}  // namespace

std::string status_body(int code, const std::string& reason, const std::string& message) {
  json status = {{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", json::object()},
                 {"status", "Failure"}, {"message", message}, {"reason", reason},
                 {"code", code}};
  return status.dump();
}

std::optional<ResourcePath> parse_resource_path(const std::string& path) {
  std::vector<std::string> segs;
  for (auto& s : split(path, '/')) {
    if (!s.empty()) segs.push_back(s);
  }
  std::string group, version;
  size_t i = 0;
  if (segs.size() >= 2 && segs[0] == "api") {
    version = segs[1];
    i = 2;
  } else if (segs.size() >= 3 && segs[0] == "apis") {
    group = segs[1];
    version = segs[2];
    i = 3;
  } else {
    return std::nullopt;
  }
  std::vector<std::string> rest(segs.begin() + static_cast<long>(i), segs.end());
  ResourcePath out;
  if (rest.size() >= 3 && rest[0] == "namespaces") {
    out.namespace_ = rest[1];
    rest.erase(rest.begin(), rest.begin() + 2);
  }
  if (rest.empty() || rest.size() > 3) return std::nullopt;
  if (rest.size() == 3) {
    if (rest[2] != "status") return std::nullopt;
    out.status = true;
  }
  if (rest.size() >= 2) out.name = rest[1];
  out.collection = group + "/" + version + "/" + rest[0];
  return out;
}

std::optional<std::vector<LabelRequirement>> parse_label_selector(const std::string& selector) {
  std::vector<LabelRequirement> out;
  // Split on commas outside parentheses: "a in (x,y),b" has two requirements.
  std::vector<std::string> parts;
  std::string current;
  int depth = 0;
  for (char c : selector) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      parts.push_back(current);
      current.clear();
    } else {
      current.push_back(c);
    }
  }
  if (depth != 0) return std::nullopt;
  parts.push_back(current);
  for (auto& raw : parts) {
    std::string part = trim(raw);
    if (part.empty()) {
      if (parts.size() == 1) break;  // the empty selector matches everything
      return std::nullopt;
    }
    LabelRequirement req;
    if (part[0] == '!') {
      req.op = LabelRequirement::Op::kNotExists;
      req.key = trim(part.substr(1));
    } else if (auto open = part.find('('); open != std::string::npos) {
      if (part.back() != ')') return std::nullopt;
      auto words = trim(part.substr(0, open));
      auto space = words.find_last_of(" \t");
      if (space == std::string::npos) return std::nullopt;
      std::string op = words.substr(space + 1);
      req.key = trim(words.substr(0, space));
      if (op == "in") {
        req.op = LabelRequirement::Op::kIn;
      } else if (op == "notin") {
        req.op = LabelRequirement::Op::kNotIn;
      } else {
        return std::nullopt;
      }
      for (auto& v : split(part.substr(open + 1, part.size() - open - 2), ',')) req.values.push_back(trim(v));
    } else if (auto ne = part.find("!="); ne != std::string::npos) {
      req.op = LabelRequirement::Op::kNotEq;
      req.key = trim(part.substr(0, ne));
      req.values = {trim(part.substr(ne + 2))};
    } else if (auto eq = part.find('='); eq != std::string::npos) {
      req.op = LabelRequirement::Op::kEq;
      req.key = trim(part.substr(0, eq));
      size_t skip = (eq + 1 < part.size() && part[eq + 1] == '=') ? 2 : 1;
      req.values = {trim(part.substr(eq + skip))};
    } else {
      req.op = LabelRequirement::Op::kExists;
      req.key = part;
    }
    if (req.key.empty() || req.key.find_first_of(" \t=!()") != std::string::npos) return std::nullopt;
    out.push_back(std::move(req));
  }
  return out;
}

bool labels_match(const std::vector<LabelRequirement>& selector, const json& labels) {
  for (const auto& req : selector) {
    std::optional<std::string> value;
    if (labels.is_object()) {
      auto it = labels.find(req.key);
      if (it != labels.end() && it->is_string()) value = it->get<std::string>();
    }
    bool in_values = value && std::find(req.values.begin(), req.values.end(), *value) != req.values.end();
    bool ok = false;
    switch (req.op) {
      case LabelRequirement::Op::kEq:
      case LabelRequirement::Op::kIn:
        ok = in_values;
        break;
      case LabelRequirement::Op::kNotEq:
      case LabelRequirement::Op::kNotIn:
        ok = !in_values;
        break;
      case LabelRequirement::Op::kExists:
        ok = value.has_value();
        break;
      case LabelRequirement::Op::kNotExists:
        ok = !value.has_value();
        break;
    }
    if (!ok) return false;
  }
  return true;
}

std::string verb_of(const StoreRequest& request) {
  auto path = parse_resource_path(request.path);
  bool named = path && !path->name.empty();
  if (request.method == "GET") {
    if (named) return "get";
    auto w = request.query.find("watch");
    if (w != request.query.end() && (w->second == "1" || w->second == "true")) return "watch";
    return "list";
  }
  if (request.method == "POST") return "create";
  if (request.method == "PUT") return "update";
  if (request.method == "PATCH") return "patch";
  if (request.method == "DELETE") return "delete";
  return "unknown";
}

StoreResponse ResourceStore::handle(const StoreRequest& request) {
  auto path = parse_resource_path(request.path);
  if (!path) return status_response(404, "NotFound", "the server could not find the requested resource");
  if (request.method == "GET") return get_or_list(*path, request);
  if (request.method == "POST" && path->name.empty() && !path->status) return create(*path, request);
  if (request.method == "PUT" && !path->name.empty()) return update(*path, request);
  if (request.method == "PATCH" && !path->name.empty()) return patch(*path, request);
  if (request.method == "DELETE" && !path->name.empty() && !path->status) return remove(*path, request);
  return status_response(405, "MethodNotAllowed",
                         "the server does not allow this method on the requested resource");
}

StoreResponse ResourceStore::get_or_list(const ResourcePath& path, const StoreRequest& request) {
  std::lock_guard lock(mutex_);
  auto& objects = collections_[path.collection].objects;
  if (!path.name.empty()) {
    auto it = objects.find(key_of(path.namespace_, path.name));
    if (it == objects.end()) return not_found(path);
    return {200, it->second.dump()};
  }
  auto selector = parse_label_selector(query_value(request, "labelSelector"));
  if (!selector) return status_response(400, "BadRequest", "unable to parse requirement: labelSelector");
  auto fields = parse_field_selector(query_value(request, "fieldSelector"));
  if (!fields) return status_response(400, "BadRequest", "unsupported fieldSelector");
  uint64_t list_rv = resource_version_;
  std::string start_after;
  if (auto token = query_value(request, "continue"); !token.empty()) {
    auto decoded = from_hex(token);
    auto bar = decoded ? decoded->find('|') : std::string::npos;
    auto rv = bar == std::string::npos ? std::nullopt : parse_u64(decoded->substr(0, bar));
    if (!rv) return status_response(400, "BadRequest", "invalid continue token");
    if (*rv < compacted_) {
      return status_response(410, "Expired",
                             "The provided continue parameter is too old to display a consistent list "
                             "result. You can start a new list without the continue parameter.");
    }
    list_rv = *rv;
    start_after = decoded->substr(bar + 1);
  }
  uint64_t limit = 0;
  if (auto l = query_value(request, "limit"); !l.empty()) {
    auto v = parse_u64(l);
    if (!v) return status_response(400, "BadRequest", "invalid limit");
    limit = *v;
  }
  json items = json::array();
  std::string last_key;
  bool more = false;
  auto it = start_after.empty() ? objects.begin() : objects.upper_bound(start_after);
  for (; it != objects.end(); ++it) {
    const json& object = it->second;
    std::string ns = meta_string(object, "namespace");
    if (!path.namespace_.empty() && ns != path.namespace_) continue;
    if (!fields->namespace_.empty() && ns != fields->namespace_) continue;
    if (!fields->name.empty() && meta_string(object, "name") != fields->name) continue;
    const json& meta = object["metadata"];
    if (!labels_match(*selector, meta.contains("labels") ? meta["labels"] : json::object())) continue;
    if (limit != 0 && items.size() == limit) {
      more = true;
      break;
    }
    items.push_back(object);
    last_key = it->first;
  }
  std::string kind = items.empty() ? "List" : items[0].value("kind", "") + "List";
  json list = {{"kind", kind},
               {"apiVersion", api_version_of(path.collection)},
               {"metadata", {{"resourceVersion", std::to_string(list_rv)}}},
               {"items", std::move(items)}};
  if (more) list["metadata"]["continue"] = to_hex(std::to_string(list_rv) + "|" + last_key);
  return {200, list.dump()};
}

StoreResponse ResourceStore::create(const ResourcePath& path, const StoreRequest& request) {
  auto body = parse_object(request.body);
  if (!body) return status_response(400, "BadRequest", "the request body is not a JSON object");
  json& object = *body;
  if (!object.contains("metadata") || !object["metadata"].is_object()) object["metadata"] = json::object();
  json& meta = object["metadata"];
  std::lock_guard lock(mutex_);
  std::string name = meta_string(object, "name");
  if (name.empty() && !meta_string(object, "generateName").empty()) {
    name = meta_string(object, "generateName") + std::to_string(++uid_counter_);
  }
  if (name.empty())
    return status_response(422, "Invalid", "metadata.name: Required value: name or generateName is required");
  std::string ns = meta_string(object, "namespace");
  if (!ns.empty() && !path.namespace_.empty() && ns != path.namespace_) {
    return status_response(
        400, "BadRequest",
        "the namespace of the provided object does not match the namespace sent on the request");
  }
  auto& objects = collections_[path.collection].objects;
  std::string key = key_of(path.namespace_, name);
  if (objects.contains(key)) {
    return status_response(409, "AlreadyExists", qualified(path) + " \"" + name + "\" already exists");
  }
  meta["name"] = name;
  if (!path.namespace_.empty()) meta["namespace"] = path.namespace_;
  meta["uid"] = "00000000-0000-4000-8000-" + std::to_string(1000000000000 + ++uid_counter_);
  meta["creationTimestamp"] = now_rfc3339();
  meta["generation"] = 1;
  meta["resourceVersion"] = std::to_string(++resource_version_);
  object.erase("status");  // status is written through /status only
  objects[key] = object;
  record("ADDED", path.collection, object);
  return {201, object.dump()};
}

StoreResponse ResourceStore::commit_update(const ResourcePath& path, const std::string& key, json object) {
  auto& stored = collections_[path.collection].objects[key];
  json& meta = object["metadata"];
  meta["resourceVersion"] = stored["metadata"]["resourceVersion"];
  if (object == stored) return {200, stored.dump()};  // a no-op write keeps the resourceVersion
  if (spec_part(object) != spec_part(stored))
    meta["generation"] = stored["metadata"].value("generation", 0) + 1;
  meta["resourceVersion"] = std::to_string(++resource_version_);
  json previous = std::move(stored);
  stored = object;
  record("MODIFIED", path.collection, stored, previous);
  return {200, stored.dump()};
}

// The parts of the metadata that only the server sets survive any update.
static void keep_server_fields(json& object, const json& stored) {
  json& meta = object["metadata"];
  for (const char* field : {"name", "namespace", "uid", "creationTimestamp", "generation"}) {
    if (stored["metadata"].contains(field)) {
      meta[field] = stored["metadata"][field];
    } else {
      meta.erase(field);
    }
  }
}

StoreResponse ResourceStore::update(const ResourcePath& path, const StoreRequest& request) {
  auto body = parse_object(request.body);
  if (!body) return status_response(400, "BadRequest", "the request body is not a JSON object");
  json& object = *body;
  if (!object.contains("metadata") || !object["metadata"].is_object()) object["metadata"] = json::object();
  std::string name = meta_string(object, "name");
  if (!name.empty() && name != path.name) {
    return status_response(
        400, "BadRequest",
        "the name of the object (" + name + ") does not match the name on the URL (" + path.name + ")");
  }
  std::lock_guard lock(mutex_);
  auto& objects = collections_[path.collection].objects;
  std::string key = key_of(path.namespace_, path.name);
  auto it = objects.find(key);
  if (it == objects.end()) return not_found(path);
  const json& stored = it->second;
  std::string rv = meta_string(object, "resourceVersion");
  if (!rv.empty() && rv != meta_string(stored, "resourceVersion")) return conflict(path, path.name);
  std::string uid = meta_string(object, "uid");
  if (!uid.empty() && uid != meta_string(stored, "uid")) return conflict(path, path.name);
  json next;
  if (path.status) {
    next = stored;
    if (object.contains("status")) {
      next["status"] = object["status"];
    } else {
      next.erase("status");
    }
  } else {
    next = std::move(object);
    if (stored.contains("status")) {
      next["status"] = stored["status"];
    } else {
      next.erase("status");
    }
  }
  keep_server_fields(next, stored);
  return commit_update(path, key, std::move(next));
}

StoreResponse ResourceStore::patch(const ResourcePath& path, const StoreRequest& request) {
  const std::string& type = request.content_type;
  bool apply = type.starts_with("application/apply-patch");
  if (!apply && !type.starts_with("application/merge-patch+json") &&
      !type.starts_with("application/strategic-merge-patch+json")) {
    return status_response(415, "UnsupportedMediaType",
                           "the body of the request was in an unknown format: " + type);
  }
  // Server-side apply is served as a JSON merge patch that creates a missing object: no managed
  // fields and no field ownership conflicts. The body must be JSON (which is valid YAML).
  auto body = parse_object(request.body);
  if (!body) return status_response(400, "BadRequest", "the patch is not a JSON object");
  {
    std::unique_lock lock(mutex_);
    auto& objects = collections_[path.collection].objects;
    if (!objects.contains(key_of(path.namespace_, path.name))) {
      if (!apply || path.status) return not_found(path);
      lock.unlock();
      json object = *body;
      object["metadata"]["name"] = path.name;
      StoreRequest create_request = request;
      create_request.body = object.dump();
      ResourcePath collection_path = path;
      collection_path.name.clear();
      auto created = create(collection_path, create_request);
      return created;
    }
  }
  std::lock_guard lock(mutex_);
  std::string key = key_of(path.namespace_, path.name);
  auto& objects = collections_[path.collection].objects;
  auto it = objects.find(key);
  if (it == objects.end()) return not_found(path);
  const json& stored = it->second;
  std::string rv = meta_string(*body, "resourceVersion");
  if (!rv.empty() && rv != meta_string(stored, "resourceVersion")) return conflict(path, path.name);
  json merged = stored;
  merged.merge_patch(*body);
  json next;
  if (path.status) {
    next = stored;
    if (merged.contains("status")) {
      next["status"] = merged["status"];
    } else {
      next.erase("status");
    }
  } else {
    next = merged;
    if (stored.contains("status")) {
      next["status"] = stored["status"];
    } else {
      next.erase("status");
    }
  }
  if (!next.contains("metadata") || !next["metadata"].is_object()) next["metadata"] = json::object();
  keep_server_fields(next, stored);
  return commit_update(path, key, std::move(next));
}

StoreResponse ResourceStore::remove(const ResourcePath& path, const StoreRequest& request) {
  json options = json::object();
  if (!trim(request.body).empty()) {
    auto parsed = parse_object(request.body);
    if (!parsed) return status_response(400, "BadRequest", "the DeleteOptions body is not a JSON object");
    options = *parsed;
  }
  std::lock_guard lock(mutex_);
  auto& objects = collections_[path.collection].objects;
  std::string key = key_of(path.namespace_, path.name);
  auto it = objects.find(key);
  if (it == objects.end()) return not_found(path);
  json object = it->second;
  if (options.contains("preconditions") && options["preconditions"].is_object()) {
    const json& pre = options["preconditions"];
    if (pre.contains("uid") && pre["uid"].is_string() && pre["uid"] != object["metadata"]["uid"]) {
      return status_response(409, "Conflict",
                             "Precondition failed: UID in precondition: " + pre["uid"].get<std::string>() +
                                 ", UID in object meta: " + meta_string(object, "uid"));
    }
    if (pre.contains("resourceVersion") && pre["resourceVersion"].is_string() &&
        pre["resourceVersion"] != object["metadata"]["resourceVersion"]) {
      return status_response(
          409, "Conflict",
          "Precondition failed: ResourceVersion in precondition: " +
              pre["resourceVersion"].get<std::string>() +
              ", ResourceVersion in object meta: " + meta_string(object, "resourceVersion"));
    }
  }
  objects.erase(it);
  object["metadata"]["resourceVersion"] = std::to_string(++resource_version_);
  record("DELETED", path.collection, object);
  return {200, object.dump()};
}

void ResourceStore::record(const std::string& type, const std::string& collection, const json& object,
                           const json& previous) {
  log_.push_back({type, collection, resource_version_, object, previous});
  changed_.notify_all();
}

bool ResourceStore::object_matches(const WatchCursor& cursor, const json& object) const {
  if (!cursor.path.namespace_.empty() && meta_string(object, "namespace") != cursor.path.namespace_)
    return false;
  if (!cursor.field_name.empty() && meta_string(object, "name") != cursor.field_name) return false;
  const json& meta = object["metadata"];
  return labels_match(cursor.selector, meta.contains("labels") ? meta["labels"] : json::object());
}

std::optional<std::string> ResourceStore::delivered_type(const WatchCursor& cursor,
                                                         const WatchEventRecord& event) const {
  if (event.collection != cursor.path.collection) return std::nullopt;
  bool now = object_matches(cursor, event.object);
  if (event.type == "MODIFIED" && event.previous.is_object()) {
    bool before = object_matches(cursor, event.previous);
    if (now && before) return event.type;
    if (now) return "ADDED";
    if (before) return "DELETED";
    return std::nullopt;
  }
  return now ? std::optional<std::string>(event.type) : std::nullopt;
}

ResourceStore::WatchOpen ResourceStore::open_watch(const StoreRequest& request) {
  WatchOpen out;
  auto path = parse_resource_path(request.path);
  auto selector = parse_label_selector(query_value(request, "labelSelector"));
  auto fields = parse_field_selector(query_value(request, "fieldSelector"));
  if (!path || !path->name.empty() || !selector || !fields) {
    out.status = 400;
    out.error_body = status_body(400, "BadRequest", "bad watch request");
    return out;
  }
  out.cursor.path = *path;
  out.cursor.selector = *selector;
  out.cursor.field_name = fields->name;
  if (!fields->namespace_.empty()) out.cursor.path.namespace_ = fields->namespace_;
  std::string bookmarks = query_value(request, "allowWatchBookmarks");
  out.cursor.allow_bookmarks = bookmarks == "true" || bookmarks == "1";
  std::string rv_text = query_value(request, "resourceVersion");
  std::lock_guard lock(mutex_);
  out.cursor.bookmarks_seen = bookmark_generation_;
  if (rv_text.empty() || rv_text == "0") {
    for (const auto& [key, object] : collections_[path->collection].objects) {
      if (object_matches(out.cursor, object)) out.initial.push_back({{"type", "ADDED"}, {"object", object}});
    }
    out.cursor.after = resource_version_;
    return out;
  }
  auto rv = parse_u64(rv_text);
  if (!rv) {
    out.status = 400;
    out.error_body = status_body(400, "BadRequest", "invalid resourceVersion " + rv_text);
    return out;
  }
  if (*rv < compacted_) {
    out.gone = true;
    return out;
  }
  out.cursor.after = *rv;
  for (const auto& event : log_) {
    if (event.resource_version <= *rv) continue;
    if (auto type = delivered_type(out.cursor, event))
      out.initial.push_back({{"type", *type}, {"object", event.object}});
  }
  out.cursor.after = std::max(*rv, resource_version_);
  return out;
}

std::vector<json> ResourceStore::next_events(WatchCursor& cursor, std::chrono::milliseconds wait) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, wait, [&] {
    return closed_ || resource_version_ > cursor.after ||
           (cursor.allow_bookmarks && bookmark_generation_ > cursor.bookmarks_seen);
  });
  std::vector<json> out;
  if (closed_) return out;
  if (resource_version_ > cursor.after) {
    auto first =
        std::upper_bound(log_.begin(), log_.end(), cursor.after,
                         [](uint64_t rv, const WatchEventRecord& e) { return rv < e.resource_version; });
    for (auto it = first; it != log_.end(); ++it) {
      if (auto type = delivered_type(cursor, *it)) out.push_back({{"type", *type}, {"object", it->object}});
    }
    cursor.after = resource_version_;
  }
  if (cursor.allow_bookmarks && bookmark_generation_ > cursor.bookmarks_seen) {
    cursor.bookmarks_seen = bookmark_generation_;
    out.push_back({{"type", "BOOKMARK"},
                   {"object",
                    {{"apiVersion", api_version_of(cursor.path.collection)},
                     {"metadata", {{"resourceVersion", std::to_string(cursor.after)}}}}}});
  }
  return out;
}

void ResourceStore::compact() {
  std::lock_guard lock(mutex_);
  compacted_ = resource_version_;
  log_.clear();
}

void ResourceStore::emit_bookmark() {
  std::lock_guard lock(mutex_);
  ++bookmark_generation_;
  changed_.notify_all();
}

uint64_t ResourceStore::resource_version() const {
  std::lock_guard lock(mutex_);
  return resource_version_;
}

void ResourceStore::close() {
  std::lock_guard lock(mutex_);
  closed_ = true;
  changed_.notify_all();
}

bool ResourceStore::closed() const {
  std::lock_guard lock(mutex_);
  return closed_;
}

std::optional<json> ResourceStore::object(const std::string& collection, const std::string& ns,
                                          const std::string& name) const {
  std::lock_guard lock(mutex_);
  auto c = collections_.find(collection);
  if (c == collections_.end()) return std::nullopt;
  auto it = c->second.objects.find(key_of(ns, name));
  if (it == c->second.objects.end()) return std::nullopt;
  return it->second;
}

std::vector<json> ResourceStore::objects(const std::string& collection) const {
  std::lock_guard lock(mutex_);
  std::vector<json> out;
  if (auto c = collections_.find(collection); c != collections_.end()) {
    for (const auto& [key, object] : c->second.objects) out.push_back(object);
  }
  return out;
}

size_t ResourceStore::object_count(const std::string& collection) const {
  std::lock_guard lock(mutex_);
  auto c = collections_.find(collection);
  return c == collections_.end() ? 0 : c->second.objects.size();
}

}  // namespace hypertopo::testing
