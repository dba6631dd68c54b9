#include "agent/reconciler/hypernode_reconciler.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <ctime>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "io/json_writer.h"
#include "topology/hypernode.h"
#include "topology/hypernode_status.h"

namespace hypertopo::agent {

using nlohmann::json;

const char* to_string(ActionKind kind) {
  switch (kind) {
    case ActionKind::kCreate:
      return "create";
    case ActionKind::kUpdate:
      return "update";
    case ActionKind::kDelete:
      return "delete";
    case ActionKind::kUnchanged:
      return "unchanged";
    case ActionKind::kHeld:
      return "held";
    case ActionKind::kForeign:
      return "foreign";
    case ActionKind::kFailed:
      return "failed";
  }
  return "unknown";
}

int ReconcileResult::write_attempts() const {
  int n = 0;
  for (const auto& [key, count] : writes) n += count;
  return n;
}

std::string ReconcileResult::summary_line() const {
  return "created=" + std::to_string(created) + " updated=" + std::to_string(updated) +
         " deleted=" + std::to_string(deleted) + " unchanged=" + std::to_string(unchanged) +
         " held=" + std::to_string(held);
}

namespace {

std::string name_of(const json& object) {
  const auto* meta = object.is_object() && object.contains("metadata") ? &object["metadata"] : nullptr;
  if (!meta || !meta->contains("name") || !(*meta)["name"].is_string()) return "";
  return (*meta)["name"].get<std::string>();
}

std::string meta_field(const json& object, const char* field) {
  if (!object.contains("metadata") || !object["metadata"].is_object()) return "";
  const auto& meta = object["metadata"];
  if (!meta.contains(field) || !meta[field].is_string()) return "";
  return meta[field].get<std::string>();
}

// The spec with member order taken out: members form a set for Volcano.
json normalized_spec(const json& object) {
  if (!object.contains("spec") || !object["spec"].is_object()) return json::object();
  json spec = object["spec"];
  if (spec.contains("members") && spec["members"].is_array()) {
    std::vector<json> members(spec["members"].begin(), spec["members"].end());
    std::sort(members.begin(), members.end(),
              [](const json& a, const json& b) { return io::json_text(a) < io::json_text(b); });
    spec["members"] = members;
  }
  return spec;
}

bool labels_cover(const json& current, const json& desired) {
  const json* have = current.contains("metadata") && current["metadata"].contains("labels")
                         ? &current["metadata"]["labels"]
                         : nullptr;
  const json& want = desired["metadata"]["labels"];
  for (const auto& [key, value] : want.items()) {
    if (!have || !have->is_object() || !have->contains(key) || (*have)[key] != value) return false;
  }
  return true;
}

// Our annotation's value on an object; "" when absent. Other annotations are other writers'.
std::string degraded_members_of(const json& object) {
  if (!object.contains("metadata") || !object["metadata"].is_object()) return "";
  const auto& meta = object["metadata"];
  if (!meta.contains("annotations") || !meta["annotations"].is_object()) return "";
  const auto& annotations = meta["annotations"];
  auto it = annotations.find(topology::kDegradedMembersAnnotation);
  return it != annotations.end() && it->is_string() ? it->get<std::string>() : "";
}

// What differs, for the update line; "" when nothing our business differs.
std::string difference(const json& current, const json& desired) {
  std::string what;
  if (normalized_spec(current) != normalized_spec(desired)) what = "spec";
  if (!labels_cover(current, desired)) what += what.empty() ? "labels" : "+labels";
  if (degraded_members_of(current) != degraded_members_of(desired)) {
    what += std::string(what.empty() ? "" : "+") + topology::kDegradedMembersAnnotation;
  }
  return what;
}

int status_node_count(const json& object) {
  if (!object.contains("status") || !object["status"].is_object()) return -1;
  const auto& status = object["status"];
  if (!status.contains("nodeCount") || !status["nodeCount"].is_number_integer()) return -1;
  return status["nodeCount"].get<int>();
}

constexpr const char* kStoppedDetail = "not written: this process stopped leading";

bool retryable(const k8s::ApiError& e) {
  if (e.cancelled()) return false;
  return e.http_status == 0 || e.http_status == 429 || e.http_status >= 500 ||
         e.code() == ErrorCode::kParse || e.code() == ErrorCode::kUnavailable;
}

std::string outcome(const k8s::ApiResult<json>& r) {
  if (r) return "ok";
  if (r.error().already_exists()) return "exists";
  if (r.error().conflict()) return "conflict";
  if (r.error().not_found()) return "notfound";
  return "error";
}

std::string describe(const k8s::ApiError& e) {
  std::string text = e.error.message();
  if (e.http_status) text += " (HTTP " + std::to_string(e.http_status) + ")";
  return text;
}

std::string rfc3339_now() {
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

std::map<std::string, DesiredHyperNode> desired_hypernodes(const topology::Tree& tree,
                                                           const ReconcileOptions& options) {
  // Desired objects by name, carrying our ownership labels.
  std::map<std::string, DesiredHyperNode> want;
  for (topology::DomainId id = 0; id < tree.size(); ++id) {
    DesiredHyperNode d;
    d.object = topology::render_hypernode(tree, id);
    d.object["metadata"]["labels"][topology::kSourceLabel] = options.source;
    d.name = tree.domain(id).name;
    // Volcano's value, not the subtree total: its hyperNode-controller writes this field too.
    d.node_count = static_cast<int>(topology::volcano_exact_member_count(d.object["spec"]));
    if (tree.domain(id).health.assessed)
      d.condition = topology::fabric_degraded_condition(tree.domain(id).health);
    want.emplace(d.name, std::move(d));
  }
  return want;
}

std::string hypernode_drift(const json& current, const DesiredHyperNode& want) {
  std::string what = difference(current, want.object);
  // Before our first status write (the object as created) there is nothing of ours in status yet.
  const int node_count = status_node_count(current);
  if (node_count < 0) return what;
  auto add = [&](const std::string& part) { what += (what.empty() ? "" : "+") + part; };
  if (node_count != want.node_count) add("status.nodeCount");
  if (want.condition) {
    // Compared without the transition time (a merge at any time gives the same fields otherwise).
    if (topology::merge_fabric_condition(current, *want.condition, "1970-01-01T00:00:00Z"))
      add(std::string("status.conditions[") + topology::kFabricDegradedCondition + "]");
  }
  return what;
}

JsonDiff hypernode_changes(const json* current, const DesiredHyperNode& want, std::size_t limit) {
  // Both sides reduced to the fields of ours, so that the server's own (uid, managedFields) and other
  // writers' labels, annotations and conditions never show as changes.
  auto ours = [&](const json* object, bool wanted) {
    json view = json::object();
    if (object == nullptr) return view;
    view["spec"] = normalized_spec(*object);
    const json& labels = want.object["metadata"]["labels"];
    const json* have = object->contains("metadata") && (*object)["metadata"].is_object() &&
                               (*object)["metadata"].contains("labels") &&
                               (*object)["metadata"]["labels"].is_object()
                           ? &(*object)["metadata"]["labels"]
                           : nullptr;
    for (const auto& [key, value] : labels.items()) {
      if (have != nullptr && have->contains(key)) view["metadata"]["labels"][key] = (*have)[key];
    }
    if (const std::string members = degraded_members_of(*object); !members.empty())
      view["metadata"]["annotations"][topology::kDegradedMembersAnnotation] = members;
    if (wanted) {
      view["status"]["nodeCount"] = want.node_count;
    } else if (const int count = status_node_count(*object); count >= 0) {
      view["status"]["nodeCount"] = count;
    }
    if (want.condition) {
      std::optional<json> condition =
          wanted ? want.condition : topology::find_condition(*object, topology::kFabricDegradedCondition);
      if (condition && condition->is_object()) {
        condition->erase("lastTransitionTime");
        view["status"]["conditions"][topology::kFabricDegradedCondition] = *condition;
      }
    }
    return view;
  };
  const json before = ours(current, false);
  const json after = ours(&want.object, true);
  JsonDiff diff;
  if (current == nullptr) {
    diff_json(nullptr, &after, "", limit, diff);
  } else {
    diff_json(&before, &after, "", limit, diff);
  }
  // Conditions are a list keyed by type on the server; the path says which one.
  const std::string keyed = std::string("status.conditions.") + topology::kFabricDegradedCondition;
  for (auto& change : diff.changes) {
    if (change.path.starts_with(keyed)) {
      change.path = std::string("status.conditions[type=") + topology::kFabricDegradedCondition + "]" +
                    change.path.substr(keyed.size());
    }
  }
  return diff;
}

HyperNodeReconciler::HyperNodeReconciler(k8s::KubeClient& client, ReconcileOptions options)
    : client_(client), options_(std::move(options)) {
  if (!options_.clock) options_.clock = std::make_shared<timing::SystemClock>();
  if (options_.max_attempts < 1) options_.max_attempts = 1;
}

std::string HyperNodeReconciler::label_selector() const {
  return std::string(topology::kSourceLabel) + "=" + options_.source + "," + topology::kManagedByLabel + "=" +
         topology::kManagedByValue;
}

bool HyperNodeReconciler::owned(const json& object) const {
  if (!object.contains("metadata") || !object["metadata"].contains("labels")) return false;
  const auto& labels = object["metadata"]["labels"];
  if (!labels.is_object()) return false;
  auto is = [&](const char* key, const std::string& value) {
    return labels.contains(key) && labels[key].is_string() && labels[key].get<std::string>() == value;
  };
  return is(topology::kSourceLabel, options_.source) &&
         is(topology::kManagedByLabel, topology::kManagedByValue);
}

void HyperNodeReconciler::back_off(int attempt, std::chrono::seconds retry_after) {
  auto wait = options_.backoff_base * (1LL << std::min(attempt, 20));
  if (wait > options_.backoff_cap) wait = options_.backoff_cap;
  if (retry_after > wait) wait = std::chrono::duration_cast<std::chrono::milliseconds>(retry_after);
  if (!options_.stop.stop_possible()) {
    options_.clock->sleep_for(wait);
    return;
  }
  std::mutex mutex;
  std::condition_variable_any never;
  std::unique_lock lock(mutex);
  options_.clock->wait_until(never, lock, options_.stop, options_.clock->now() + wait, [] { return false; });
}

std::expected<ReconcileResult, Error> HyperNodeReconciler::reconcile(const topology::Tree& desired,
                                                                     bool complete) {
  if (auto ok = topology::check_invariants(desired); !ok) {
    return std::unexpected(ok.error().context("the desired tree is not publishable"));
  }
  const std::map<std::string, Desired> want = desired_hypernodes(desired, options_);

  auto listed = client_.list(kHyperNodesResource, "", {.label_selector = label_selector()}, options_.stop);
  if (!listed) return std::unexpected(listed.error().error.context("listing owned HyperNodes"));
  std::map<std::string, json> have;
  for (auto& item : listed->items) {
    // The selector already says so; checked again because a server that ignores it must not make
    // us touch a foreign object.
    if (owned(item)) have.emplace(name_of(item), std::move(item));
  }

  ReconcileResult result;
  std::vector<const Desired*> wanted;
  wanted.reserve(want.size());
  for (const auto& [name, d] : want) wanted.push_back(&d);
  for_each_parallel(wanted.size(), result, [&](std::size_t i, ReconcileResult& local) {
    auto it = have.find(wanted[i]->name);
    std::optional<json> current;
    if (it != have.end()) current = it->second;
    return sync_one(*wanted[i], std::move(current), local);
  });

  std::vector<json> doomed;
  for (auto& [name, object] : have) {
    if (!want.contains(name)) doomed.push_back(object);
  }
  const std::size_t owned_count = have.size();
  const bool mass =
      doomed.size() > 1 && owned_count >= options_.min_objects_for_guard &&
      static_cast<double>(doomed.size()) > options_.max_delete_fraction * static_cast<double>(owned_count);
  if (!complete || mass) {
    std::string why = !complete ? "discovery incomplete: nothing is deleted this cycle"
                                : "mass-deletion guard: " + std::to_string(doomed.size()) + " of " +
                                      std::to_string(owned_count) + " owned HyperNodes would go (limit " +
                                      std::to_string(std::lround(options_.max_delete_fraction * 100)) +
                                      "% per cycle, guard.maxDeleteFraction)";
    for (const auto& object : doomed) {
      result.actions.push_back({ActionKind::kHeld, name_of(object), why});
      ++result.held;
    }
    if (complete && mass && !options_.dry_run) emit_held_event(doomed.size(), owned_count, result);
  } else {
    for_each_parallel(doomed.size(), result, [&](std::size_t i, ReconcileResult& local) {
      return delete_one(std::move(doomed[i]), local);
    });
  }

  std::stable_sort(result.actions.begin(), result.actions.end(),
                   [](const ReconcileAction& a, const ReconcileAction& b) { return a.name < b.name; });
  for (const auto& a : result.actions) {
    switch (a.kind) {
      case ActionKind::kCreate:
        ++result.created;
        break;
      case ActionKind::kUpdate:
        ++result.updated;
        break;
      case ActionKind::kDelete:
        ++result.deleted;
        break;
      case ActionKind::kUnchanged:
        ++result.unchanged;
        break;
      case ActionKind::kFailed:
        ++result.failed;
        break;
      case ActionKind::kForeign:
        ++result.foreign;
        break;
      case ActionKind::kHeld:
        break;  // counted above
    }
  }
  return result;
}

void HyperNodeReconciler::for_each_parallel(
    std::size_t count, ReconcileResult& result,
    const std::function<ReconcileAction(std::size_t, ReconcileResult&)>& one) {
  const std::size_t threads =
      std::min<std::size_t>(static_cast<std::size_t>(std::max(1, options_.parallel)), count);
  std::vector<ReconcileAction> actions(count, ReconcileAction{ActionKind::kUnchanged, "", ""});
  std::vector<ReconcileResult> partial(std::max<std::size_t>(threads, 1));
  std::atomic<std::size_t> next{0};
  auto work = [&](std::size_t slot) {
    for (std::size_t i; (i = next.fetch_add(1)) < count;) actions[i] = one(i, partial[slot]);
  };
  if (threads <= 1) {
    work(0);
  } else {
    std::vector<std::jthread> workers;
    workers.reserve(threads);
    for (std::size_t t = 0; t < threads; ++t) workers.emplace_back(work, t);
  }
  for (auto& a : actions) result.actions.push_back(std::move(a));
  for (const auto& p : partial) {
    for (const auto& [key, n] : p.writes) result.writes[key] += n;
  }
}

ReconcileAction HyperNodeReconciler::sync_one(const Desired& want, std::optional<json> current,
                                              ReconcileResult& result) {
  bool maybe_created = false;  // a create may have landed although its answer was lost
  std::string last_error;
  for (int attempt = 0; attempt < options_.max_attempts; ++attempt) {
    if (stopped()) return {ActionKind::kFailed, want.name, kStoppedDetail};
    if (!current) {
      if (options_.dry_run)
        return {ActionKind::kCreate, want.name, "", hypernode_changes(nullptr, want, options_.diff_limit)};
      auto made = client_.create(kHyperNodesResource, "", want.object, options_.stop);
      ++result.writes["create/" + outcome(made)];
      if (made) {
        std::string status_error = write_status(*made, want, result);
        if (!status_error.empty()) return {ActionKind::kFailed, want.name, "create: " + status_error};
        return {ActionKind::kCreate, want.name, ""};
      }
      if (made.error().already_exists()) {
        // Someone (or our own lost attempt) made it: look at what is there before anything else.
        auto got = client_.get(kHyperNodesResource, "", want.name, options_.stop);
        if (!got) {
          last_error = "get after AlreadyExists: " + describe(got.error());
          if (!got.error().not_found() && !retryable(got.error())) break;
          back_off(attempt, got.error().retry_after);
          continue;
        }
        current = std::move(*got);
        continue;
      }
      last_error = "create: " + describe(made.error());
      if (!retryable(made.error())) break;
      if (made.error().http_status == 0 || made.error().code() == ErrorCode::kParse) maybe_created = true;
      back_off(attempt, made.error().retry_after);
      continue;
    }

    if (!owned(*current)) {
      return {ActionKind::kForeign, want.name,
              "a HyperNode of this name exists without our labels (" + std::string(topology::kSourceLabel) +
                  "=" + options_.source + ", " + topology::kManagedByLabel + "=" + topology::kManagedByValue +
                  "); left untouched"};
    }
    std::string diff = difference(*current, want.object);
    // What the status write will change, for the one log line of this HyperNode.
    std::string status_detail;
    const json changes = status_changes(*current, want);
    if (changes.contains("nodeCount")) {
      const int stored = status_node_count(*current);
      status_detail = "status.nodeCount " + (stored < 0 ? std::string("absent") : std::to_string(stored)) +
                      " -> " + std::to_string(want.node_count);
    }
    if (changes.contains("conditions")) {
      const auto& c = *want.condition;
      status_detail += std::string(status_detail.empty() ? "" : ", ") + topology::kFabricDegradedCondition +
                       " " + c["status"].get<std::string>() + " (" + c["reason"].get<std::string>() + ")";
    }
    if (diff.empty()) {
      ActionKind kind = maybe_created ? ActionKind::kCreate : ActionKind::kUnchanged;
      if (changes.empty()) return {kind, want.name, ""};
      const std::string& detail = status_detail;
      if (options_.dry_run)
        return {maybe_created ? kind : ActionKind::kUpdate, want.name, detail,
                hypernode_changes(&*current, want, options_.diff_limit)};
      std::string status_error = write_status(*current, want, result);
      if (!status_error.empty()) return {ActionKind::kFailed, want.name, "status: " + status_error};
      return {maybe_created ? kind : ActionKind::kUpdate, want.name, detail};
    }
    if (!status_detail.empty()) diff += "; " + status_detail;
    if (options_.dry_run)
      return {ActionKind::kUpdate, want.name, diff, hypernode_changes(&*current, want, options_.diff_limit)};

    json object = *current;
    object["spec"] = want.object["spec"];
    for (const auto& [key, value] : want.object["metadata"]["labels"].items()) {
      object["metadata"]["labels"][key] = value;
    }
    // Our annotation follows the health pass; every other annotation stays as it is.
    if (const std::string members = degraded_members_of(want.object); !members.empty()) {
      object["metadata"]["annotations"][topology::kDegradedMembersAnnotation] = members;
    } else if (object["metadata"].contains("annotations") && object["metadata"]["annotations"].is_object()) {
      object["metadata"]["annotations"].erase(topology::kDegradedMembersAnnotation);
    }
    auto put = client_.update(kHyperNodesResource, "", object, options_.stop);
    ++result.writes["update/" + outcome(put)];
    if (put) {
      std::string status_error = write_status(*put, want, result);
      if (!status_error.empty()) return {ActionKind::kFailed, want.name, "status: " + status_error};
      return {maybe_created ? ActionKind::kCreate : ActionKind::kUpdate, want.name, diff};
    }
    last_error = "update: " + describe(put.error());
    if (put.error().conflict() || put.error().not_found()) {
      // Someone else wrote it: fetch the new state and compare again.
      auto got = client_.get(kHyperNodesResource, "", want.name, options_.stop);
      if (got) {
        current = std::move(*got);
      } else if (got.error().not_found()) {
        current.reset();
      } else if (!retryable(got.error())) {
        last_error = "get after conflict: " + describe(got.error());
        break;
      } else {
        back_off(attempt, got.error().retry_after);
      }
      continue;
    }
    if (!retryable(put.error())) break;
    back_off(attempt, put.error().retry_after);
  }
  return {ActionKind::kFailed, want.name,
          last_error.empty()
              ? "gave up after " + std::to_string(options_.max_attempts) + " attempts"
              : last_error + " (after up to " + std::to_string(options_.max_attempts) + " attempts)"};
}

json HyperNodeReconciler::status_changes(const json& object, const Desired& want) const {
  json changes = json::object();
  if (status_node_count(object) != want.node_count) changes["nodeCount"] = want.node_count;
  if (want.condition) {
    const auto now = options_.wall_clock ? options_.wall_clock() : std::chrono::system_clock::now();
    if (auto conditions = topology::merge_fabric_condition(object, *want.condition, topology::rfc3339(now))) {
      changes["conditions"] = std::move(*conditions);
    }
  }
  return changes;
}

std::string HyperNodeReconciler::write_status(const json& object, const Desired& want,
                                              ReconcileResult& result) {
  const json changes = status_changes(object, want);
  if (changes.empty()) return "";
  const std::string name = name_of(object);
  // A merge patch of our fields only: anything else another controller keeps in status stays as it
  // is, and the conditions list (replaced whole by a merge patch) is the server's with ours swapped.
  const json patch = {{"status", changes}};
  std::string last_error;
  for (int attempt = 0; attempt < options_.max_attempts; ++attempt) {
    if (stopped()) return kStoppedDetail;
    auto put = client_.patch(kHyperNodesResource, "", name, patch, {.status = true}, options_.stop);
    ++result.writes["status/" + outcome(put)];
    if (put) return "";
    last_error = describe(put.error());
    if (!retryable(put.error())) return last_error;
    back_off(attempt, put.error().retry_after);
  }
  return last_error;
}

ReconcileAction HyperNodeReconciler::delete_one(json current, ReconcileResult& result) {
  const std::string name = name_of(current);
  if (options_.dry_run) return {ActionKind::kDelete, name, "no longer discovered"};
  std::string last_error;
  for (int attempt = 0; attempt < options_.max_attempts; ++attempt) {
    if (stopped()) return {ActionKind::kFailed, name, kStoppedDetail};
    auto gone = client_.delete_object(
        kHyperNodesResource, "", name,
        {.uid = meta_field(current, "uid"), .resource_version = meta_field(current, "resourceVersion")},
        options_.stop);
    std::string out = gone                       ? "ok"
                      : gone.error().not_found() ? "notfound"
                      : gone.error().conflict()  ? "conflict"
                                                 : "error";
    ++result.writes["delete/" + out];
    if (gone || gone.error().not_found()) return {ActionKind::kDelete, name, "no longer discovered"};
    last_error = "delete: " + describe(gone.error());
    if (gone.error().conflict()) {
      // Changed behind our back: delete only what is still ours.
      auto got = client_.get(kHyperNodesResource, "", name, options_.stop);
      if (!got && got.error().not_found()) return {ActionKind::kDelete, name, "no longer discovered"};
      if (got) {
        if (!owned(*got)) return {ActionKind::kForeign, name, "relabelled by someone else; not deleted"};
        current = std::move(*got);
        continue;
      }
      if (!retryable(got.error())) break;
      back_off(attempt, got.error().retry_after);
      continue;
    }
    if (!retryable(gone.error())) break;
    back_off(attempt, gone.error().retry_after);
  }
  return {ActionKind::kFailed, name, last_error};
}

void HyperNodeReconciler::emit_held_event(std::size_t count, std::size_t owned_count,
                                          ReconcileResult& result) {
  const auto stamp = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  std::ostringstream suffix;
  suffix << std::hex << stamp;
  const std::string now = rfc3339_now();
  json event = {
      {"apiVersion", "v1"},
      {"kind", "Event"},
      {"metadata",
       {{"name", options_.reporter + "-mass-deletion-held." + suffix.str()},
        {"namespace", options_.event_namespace}}},
      {"involvedObject", {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"name", options_.event_namespace}}},
      {"reason", "MassDeletionHeld"},
      {"message", "held " + std::to_string(count) + " HyperNode deletion(s) of " +
                      std::to_string(owned_count) + " owned (source " + options_.source + "): more than " +
                      std::to_string(static_cast<int>(std::lround(options_.max_delete_fraction * 100))) +
                      "% per cycle; raise max_delete_fraction or delete them by hand"},
      {"type", "Warning"},
      {"source", {{"component", options_.reporter}}},
      {"reportingComponent", options_.reporter},
      {"reportingInstance", options_.reporter},
      {"firstTimestamp", now},
      {"lastTimestamp", now},
      {"count", 1}};
  for (int attempt = 0; attempt < options_.max_attempts; ++attempt) {
    if (stopped()) return;
    auto made = client_.create(k8s::kEventsResource, options_.event_namespace, event, options_.stop);
    ++result.writes["event/" + outcome(made)];
    if (made) {
      result.event_emitted = true;
      return;
    }
    if (!retryable(made.error())) return;
    back_off(attempt, made.error().retry_after);
  }
}

}  // namespace hypertopo::agent
