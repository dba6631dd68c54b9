// The gang plans as served on /plans and persisted to the state file (a cache: the cluster is the
// source of truth, and a gang without a plan is planned around its bound pods).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>

#include "io/bounded_file.h"
#include "io/durable_file.h"
#include "io/json_reader.h"
#include "io/json_writer.h"
#include "scheduler/extender/gang_book.h"
#include "scheduler/extender/object_fields.h"
#include "scheduler/input/pod_request.h"

namespace hypertopo::scheduler {

using nlohmann::json;
using namespace fields;

namespace {
json slot_json(const PlanSlot& s) {
  json out{{"rank", s.rank},
           {"node", s.node},
           {"domainPath", join_path(s.domain_path)},
           {"domains", s.domain_path},
           {"state", to_string(s.state)},
           {"podUID", s.pod_uid},
           {"bound", s.state == SlotState::kBound},
           {"takenBy", to_string(s.claim)},
           {"releases", s.releases},
           {"annotations",
            {{kRankAnnotation, std::to_string(s.rank)}, {kDomainPathAnnotation, join_path(s.domain_path)}}}};
  if (!s.waiting.empty()) out["waiting"] = s.waiting;
  return out;
}

json groups_json(const GangPlan& p) {
  json out = json::array();
  for (std::size_t i = 0; i < p.groups.size(); ++i) {
    std::int64_t pods = 0;
    for (const auto& s : p.slots) pods += s.group == static_cast<std::int32_t>(i) ? 1 : 0;
    out.push_back({{"name", p.groups[i].name}, {"domain", p.groups[i].domain}, {"slots", pods}});
  }
  return out;
}
}  // namespace

json GangBook::plans_json() const {
  json gangs = json::array();
  for (const auto& [key, p] : plans_) {
    json slots = json::array();
    std::int64_t by_arrival = 0;
    for (const auto& s : p.slots) {
      slots.push_back(slot_json(s));
      if (s.group >= 0 && static_cast<std::size_t>(s.group) < p.groups.size())
        slots.back()["subGroup"] = p.groups[static_cast<std::size_t>(s.group)].name;
      by_arrival += s.claim == SlotClaim::kArrivalOrder ? 1 : 0;
    }
    // Pods without an index took their slots in arrival order: their rank hints are not their ranks.
    gangs.push_back({{"key", key},
                     {"jobDomain", p.job_domain},
                     {"fabricHealth", p.fabric_health},
                     {"slotsTakenInArrivalOrder", by_arrival},
                     {"swaps", p.swaps},
                     {"replans", p.replans},
                     {"grown", p.grown},
                     {"slots", slots}});
    if (!p.groups.empty()) gangs.back()["subGroups"] = groups_json(p);
    if (!p.victims.empty()) {
      json victims = json::array();
      for (const auto& v : p.victims) {
        const ViewPod* pod = view_.pod(v.uid);
        const char* state = !pod || pod->node != v.node ? "gone"
                            : pod->terminating          ? "terminating"
                                                        : "running";
        victims.push_back({{"pod", v.ns + "/" + v.name},
                           {"uid", v.uid},
                           {"node", v.node},
                           {"priority", v.priority},
                           {"violatesBudget", v.violates_budget},
                           {"state", state}});
      }
      gangs.back()["victims"] = std::move(victims);
      gangs.back()["brokenGangs"] = p.broken_gangs;
    }
  }
  return json{{"gangs", gangs}};
}

namespace {

// A JSON string, its invalid bytes replaced (io/json_writer.h).
void append_string(std::string& out, const std::string& value) { out += io::json_text(json(value)); }

void append_strings(std::string& out, const std::vector<std::string>& values) {
  out += '[';
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    append_string(out, values[i]);
  }
  out += ']';
}

// A plan's pod document as the state file keeps it: the annotations the request and gang readers
// read, no others. The document comes from the pod's own metadata, so kubectl's
// last-applied-configuration (the whole manifest, env values included) or a tool's token would
// otherwise sit on disk for as long as the plan lives. `dropped` says whether anything was left out.
json saved_pod(const json& pod_doc, bool* dropped = nullptr) {
  json out = pod_doc;
  if (!out.is_object() || !out.contains("metadata") || !out["metadata"].is_object()) return out;
  json& meta = out["metadata"];
  if (!meta.contains("annotations") || !meta["annotations"].is_object()) return out;
  json& annotations = meta["annotations"];
  for (auto it = annotations.begin(); it != annotations.end();) {
    if (read_by_pod_request(it.key())) {
      ++it;
    } else {
      it = annotations.erase(it);
      if (dropped) *dropped = true;
    }
  }
  return out;
}

// The state file's bounds, checked before the file is parsed: a plan of a million slots (157 MB)
// once took 21 s and 1.6 GB to load, past the extender's 1 GiB limit, while filter calls waited.
// A saved slot is 150 to 180 bytes of JSON (rank, node, a two-level domain path, state, pod UID, how
// it was taken: 181 with names like gpu-node-12345 and leaf-su017-l3); a plan adds its pod document,
// a few hundred bytes. 20,000 nodes of 8 GPUs run at most 160,000 gang pods: about 28 MiB of slots.
// 64 MiB holds that with room, and its parse (about ten times the text) stays inside the limit. The counts
// bound what a file of tiny entries costs within those bytes ("{}," is a slot in 3 bytes).
constexpr std::uintmax_t kMaxStateFileBytes = std::uintmax_t{64} << 20;
constexpr std::size_t kMaxStatePlans = 100'000;
constexpr std::size_t kMaxStateSlots = 250'000;

// Counts the plans and their slots of an ExtenderState text without building it, and stops at the
// first bound passed: the JSON tree of a file is built only once its counts are known to fit.
class StateCounter : public json::json_sax_t {
 public:
  std::size_t plans = 0, slots = 0;
  std::string over;  // which bound was passed, "" when none

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(json::number_integer_t) override { return true; }
  bool number_unsigned(json::number_unsigned_t) override { return true; }
  bool number_float(json::number_float_t, const json::string_t&) override { return true; }
  bool string(json::string_t&) override { return true; }
  bool binary(json::binary_t&) override { return true; }
  bool key(json::string_t& k) override {
    if (!stack_.empty()) stack_.back().key = k;
    return true;
  }
  bool start_object(std::size_t) override {
    // A plan is an object in the top-level "plans" list; a slot, one in a plan's "slots" list.
    const bool in_plans = stack_.size() >= 2 && stack_[0].key == "plans" && stack_[1].array;
    if (in_plans && stack_.size() == 2 && ++plans > kMaxStatePlans) {
      over = "more than " + std::to_string(kMaxStatePlans) + " plans";
      return false;
    }
    if (in_plans && stack_.size() == 4 && stack_[2].key == "slots" && stack_[3].array &&
        ++slots > kMaxStateSlots) {
      over = "more than " + std::to_string(kMaxStateSlots) + " slots";
      return false;
    }
    stack_.push_back({false, {}});
    return true;
  }
  bool end_object() override { return pop(); }
  bool start_array(std::size_t) override {
    stack_.push_back({true, {}});
    return true;
  }
  bool end_array() override { return pop(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;  // the parse that follows names the fault
  }

 private:
  struct Frame {
    bool array = false;
    std::string key;
  };
  bool pop() {
    if (!stack_.empty()) stack_.pop_back();
    return true;
  }
  std::vector<Frame> stack_;
};

}  // namespace

// What replanning needs of each plan (the request's sources, the slots), as one line of JSON,
// written as text: it runs under the book's lock, and a tree of 2,000 plans costs a gang filter call
// several times over. Each plan's pod document never changes, so its text is kept.
std::string GangBook::state_text() const {
  std::string out = R"({"apiVersion":"hypertopo.io/v1alpha1","kind":"ExtenderState","plans":[)";
  bool first_plan = true;
  for (const auto& [key, p] : plans_) {
    if (p.pod_text.empty()) p.pod_text = io::json_text(saved_pod(p.pod_doc));
    out += first_plan ? "{" : ",{";
    first_plan = false;
    out += "\"key\":";
    append_string(out, key);
    out += ",\"pod\":" + p.pod_text;
    out += ",\"count\":" + std::to_string(p.request.count);
    out += ",\"jobDomain\":";
    append_string(out, p.job_domain);
    out += ",\"fabricHealth\":";
    append_strings(out, p.fabric_health);
    out += ",\"partitionTier\":" + std::to_string(p.partition_tier);
    out += ",\"partitionSize\":" + std::to_string(p.partition_size);
    out += ",\"swaps\":" + std::to_string(p.swaps) + ",\"replans\":" + std::to_string(p.replans) +
           ",\"grown\":" + std::to_string(p.grown);
    if (!p.victims.empty()) {
      out += ",\"victims\":[";
      for (std::size_t i = 0; i < p.victims.size(); ++i) {
        const PlanVictim& v = p.victims[i];
        out += i > 0 ? ",{\"uid\":" : "{\"uid\":";
        append_string(out, v.uid);
        out += ",\"namespace\":";
        append_string(out, v.ns);
        out += ",\"name\":";
        append_string(out, v.name);
        out += ",\"node\":";
        append_string(out, v.node);
        out += ",\"priority\":" + std::to_string(v.priority) +
               ",\"violatesBudget\":" + (v.violates_budget ? "true" : "false") + "}";
      }
      out += "],\"brokenGangs\":";
      append_strings(out, p.broken_gangs);
    }
    if (!p.groups.empty()) {
      out += ",\"groups\":[";
      for (std::size_t i = 0; i < p.groups.size(); ++i) {
        const PlanGroup& g = p.groups[i];
        out += i > 0 ? ",{\"name\":" : "{\"name\":";
        append_string(out, g.name);
        out += ",\"domain\":";
        append_string(out, g.domain);
        out += ",\"level\":";
        append_string(out, g.level);
        out += ",\"count\":" + std::to_string(std::max<std::int32_t>(g.request.count, 1));
        out += ",\"pod\":" + io::json_text(saved_pod(g.pod_doc)) + "}";
      }
      out += "]";
    }
    out += ",\"slots\":[";
    for (std::size_t i = 0; i < p.slots.size(); ++i) {
      const PlanSlot& s = p.slots[i];
      out += i > 0 ? ",{" : "{";
      out += "\"rank\":" + std::to_string(s.rank) + ",\"node\":";
      append_string(out, s.node);
      out += ",\"domains\":";
      append_strings(out, s.domain_path);
      out += ",\"state\":\"";
      out += to_string(s.state);
      out += "\",\"podUID\":";
      append_string(out, s.pod_uid);
      out += ",\"takenBy\":\"";
      out += to_string(s.claim);
      out += "\",\"releases\":" + std::to_string(s.releases);
      if (s.group >= 0) out += ",\"group\":" + std::to_string(s.group);
      out += "}";
    }
    out += "]}";
  }
  out += "]}\n";
  return out;
}

void GangBook::mark_changed() {
  if (options_.state_file.empty()) return;
  {
    std::lock_guard lock(save_mu_);
    ++state_version_;
  }
  save_cv_.notify_one();
}

void GangBook::write_state(const std::string& text) {
  // A fresh private temporary file, synced and renamed over the target: a crash or a full disk
  // leaves the old or the new file whole, and no planted link is followed.
  if (auto ok = io::write_file_durably(options_.state_file, text); !ok) {
    options_.log(telemetry::LogLevel::kError, "hypertopo extender: state not saved: " + ok.error().message());
    std::lock_guard lock(mu_);
    ++counters_.errors;
  }
}

void GangBook::flush_state() {
  if (options_.state_file.empty()) return;
  std::lock_guard write_lock(write_mu_);
  std::uint64_t version = 0;
  {
    std::lock_guard lock(save_mu_);
    version = state_version_;
    if (version == saved_version_) return;
  }
  std::string text;
  {
    std::lock_guard lock(mu_);
    text = state_text();
  }
  write_state(text);
  std::lock_guard lock(save_mu_);
  saved_version_ = std::max(saved_version_, version);
}

// The state file is written off the request path: filter and bind events only bump a version,
// and this thread writes the newest state once the plans have been quiet for state_debounce.
void GangBook::run_saver(std::stop_token stop) {
  while (!stop.stop_requested()) {
    {
      std::unique_lock lock(save_mu_);
      save_cv_.wait(lock, stop, [&] { return state_version_ != saved_version_; });
      if (stop.stop_requested()) return;
      // Debounce: a burst of filter calls (a gang of 1,000 pods) costs one write; under changes
      // that never pause, the file is still written every ten debounce periods.
      std::uint64_t seen = state_version_;
      const auto deadline = std::chrono::steady_clock::now() + 10 * options_.state_debounce;
      while (!stop.stop_requested() && std::chrono::steady_clock::now() < deadline) {
        save_cv_.wait_for(lock, stop, options_.state_debounce, [&] { return state_version_ != seen; });
        if (state_version_ == seen) break;
        seen = state_version_;
      }
    }
    flush_state();
  }
}

std::expected<void, Error> GangBook::load_state() {
  if (options_.state_file.empty() || !std::filesystem::exists(options_.state_file)) return {};
  const std::string where = "state file " + options_.state_file.string();
  bool dropped_annotations = false;
  auto read = [&]() -> std::expected<std::map<std::string, GangPlan>, Error> {
    // The size first, from the file system: a file past the bound is never read into memory.
    std::error_code size_error;
    const std::uintmax_t size = std::filesystem::file_size(options_.state_file, size_error);
    if (!size_error && size > kMaxStateFileBytes) {
      return fail(ErrorCode::kInvalidArgument, where + " is " + std::to_string(size) +
                                                   " bytes, over the bound of " +
                                                   std::to_string(kMaxStateFileBytes >> 20) + " MiB");
    }
    auto text = io::read_bounded_file(options_.state_file, static_cast<std::size_t>(kMaxStateFileBytes));
    if (!text) return std::unexpected(text.error());
    StateCounter counted;
    if (!json::sax_parse(*text, &counted, json::input_format_t::json, false) && !counted.over.empty()) {
      return fail(ErrorCode::kInvalidArgument, where + " holds " + counted.over + ", over its bound");
    }
    auto parsed = io::parse_json(*text, where);
    if (!parsed) return std::unexpected(parsed.error());
    json doc = std::move(*parsed);
    if (!doc.is_object() || !doc.contains("plans") || !doc["plans"].is_array()) {
      return fail(ErrorCode::kParse, where + ": expected an ExtenderState object with a plans list");
    }
    std::map<std::string, GangPlan> loaded;
    // The file is ours, but a disk or a hand edit can break it: a wrong type is an error naming the
    // file, never an exception that stops the extender.
    try {
      for (const auto& p : doc["plans"]) {
        GangPlan plan;
        plan.key = str_at(p, "key");
        if (plan.key.empty()) return fail(ErrorCode::kParse, where + ": a plan without key");
        // Plans written before requests were read off the pod itself carry a synthetic job instead:
        // drop them, the gang is planned again when its next pod comes.
        if (!p.contains("pod") && p.contains("job")) continue;
        plan.pod_doc = saved_pod(member(p, "pod"), &dropped_annotations);
        const json& count = member(p, "count");
        if (!count.is_number_unsigned() || count.get<std::uint64_t>() == 0 ||
            count.get<std::uint64_t>() >
                static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max())) {
          return fail(ErrorCode::kParse, where + " plan " + plan.key + ": count must be a positive integer");
        }
        auto request =
            pod_set_request(plan.pod_doc, static_cast<std::int32_t>(count.get<std::uint64_t>()), true);
        if (!request) return std::unexpected(request.error().context(where + " plan " + plan.key));
        plan.request = *request;
        plan.job_domain = str_at(p, "jobDomain");
        for (const auto& note : member(p, "fabricHealth")) {
          if (note.is_string()) plan.fabric_health.push_back(note.get<std::string>());
        }
        plan.partition_tier = p.value("partitionTier", -1);
        plan.partition_size = p.value("partitionSize", 0);
        plan.swaps = p.value("swaps", 0);
        plan.replans = p.value("replans", 0);
        plan.grown = p.value("grown", 0);
        plan.last_activity = options_.clock->now();
        for (const auto& v : member(p, "victims")) {
          plan.victims.push_back({.uid = str_at(v, "uid"),
                                  .ns = str_at(v, "namespace"),
                                  .name = str_at(v, "name"),
                                  .node = str_at(v, "node"),
                                  .priority = v.value("priority", 0),
                                  .violates_budget = v.value("violatesBudget", false)});
        }
        for (const auto& g : member(p, "brokenGangs")) {
          if (g.is_string()) plan.broken_gangs.push_back(g.get<std::string>());
        }
        for (const auto& g : member(p, "groups")) {
          PlanGroup group{.name = str_at(g, "name"),
                          .pod_doc = saved_pod(member(g, "pod"), &dropped_annotations),
                          .domain = str_at(g, "domain"),
                          .level = str_at(g, "level")};
          const json& n = member(g, "count");
          const std::int32_t pods =
              n.is_number_unsigned() && n.get<std::uint64_t>() > 0 && n.get<std::uint64_t>() < 1'000'000
                  ? static_cast<std::int32_t>(n.get<std::uint64_t>())
                  : 1;
          auto group_request = pod_set_request(group.pod_doc, pods, false);
          if (!group_request)
            return std::unexpected(
                group_request.error().context(where + " plan " + plan.key + " sub-group " + group.name));
          group.request = *group_request;
          group.request.sub_group = group.name;
          group.spec_text = member(group.pod_doc, "spec").dump();
          plan.groups.push_back(std::move(group));
        }
        for (const auto& s : member(p, "slots")) {
          PlanSlot slot;
          slot.rank = s.value("rank", 0);
          slot.node = str_at(s, "node");
          const std::string uid = str_at(s, "podUID");
          std::optional<SlotState> state = slot_state_from(str_at(s, "state"));
          if (!state) {  // files written before slots had states
            state = s.value("bound", false) ? SlotState::kBound
                    : uid.empty()           ? SlotState::kPlanned
                                            : SlotState::kReserved;
          }
          const std::string claim = str_at(s, "takenBy");
          // The saved state is reached through the slot table; a reserved or bound one that names no
          // pod stays planned.
          (void)restore(slot, *state, uid,
                        claim == "podIndex"       ? SlotClaim::kPodIndex
                        : claim == "arrivalOrder" ? SlotClaim::kArrivalOrder
                                                  : SlotClaim::kNone);
          slot.releases = s.value("releases", 0);
          slot.group = s.value("group", -1);
          if (slot.group >= static_cast<std::int32_t>(plan.groups.size()) || slot.group < -1) {
            return fail(ErrorCode::kParse, where + " plan " + plan.key + ": slot of rank " +
                                               std::to_string(slot.rank) + " names sub-group " +
                                               std::to_string(slot.group) + ", which the plan does not have");
          }
          if (s.contains("domains") && s["domains"].is_array())
            slot.domain_path = s["domains"].get<std::vector<std::string>>();
          plan.slots.push_back(std::move(slot));
        }
        loaded[plan.key] = std::move(plan);
      }
    } catch (const json::exception& e) {
      return fail(ErrorCode::kParse, where + ": " + e.what());
    }
    return loaded;
  };
  auto loaded = read();
  if (!loaded) {
    // The file cannot be read at all (permissions): that is the deployment's to fix.
    if (loaded.error().code() == ErrorCode::kPermission || loaded.error().code() == ErrorCode::kUnavailable)
      return std::unexpected(loaded.error());
    // It does not parse (a crash of the disk, a hand edit) or is past its bounds: the plans are a
    // cache of what the cluster holds, so start without them and keep the file for a look.
    auto moved = io::set_aside(options_.state_file);
    if (!moved) return std::unexpected(std::move(moved.error()).context(loaded.error().message()));
    options_.log(telemetry::LogLevel::kWarn, "hypertopo extender: " + loaded.error().message() +
                                                 "; set aside as " + moved->string() +
                                                 ", starting without saved plans");
    std::lock_guard lock(mu_);
    ++counters_.errors;
    return {};
  }
  {
    std::lock_guard lock(mu_);
    for (const auto& [key, plan] : plans_) reserve(plan, -1);
    plans_ = std::move(*loaded);
    for (const auto& [key, plan] : plans_) reserve(plan, +1);
    reindex();  // the ledger holds the plans read, every slot checked on the next call
  }
  // A file from before the state kept only the annotations it reads: written again without the rest.
  if (dropped_annotations) mark_changed();
  return {};
}

}  // namespace hypertopo::scheduler
