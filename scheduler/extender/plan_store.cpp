// The gang plans as served on /plans and persisted to the state file (temp file + rename).
#include <fstream>
#include <limits>

#include "io/bounded_file.h"
#include "io/json_reader.h"
#include "io/json_writer.h"
#include "scheduler/extender/extender_service.h"
#include "scheduler/extender/object_fields.h"
#include "scheduler/input/pod_request.h"

namespace hypertopo::scheduler {

using nlohmann::json;
using namespace fields;

namespace {
json slot_json(const PlanSlot& s) {
  return json{
      {"rank", s.rank},
      {"node", s.node},
      {"domainPath", join_path(s.domain_path)},
      {"domains", s.domain_path},
      {"podUID", s.pod_uid},
      {"bound", s.bound},
      {"takenBy", s.taken_by},
      {"annotations",
       {{kRankAnnotation, std::to_string(s.rank)}, {kDomainPathAnnotation, join_path(s.domain_path)}}}};
}
}  // namespace

json ExtenderService::plans() {
  std::lock_guard lock(mu_);
  json gangs = json::array();
  for (const auto& [key, p] : plans_) {
    json slots = json::array();
    std::int64_t by_arrival = 0;
    for (const auto& s : p.slots) {
      slots.push_back(slot_json(s));
      by_arrival += s.taken_by == "arrivalOrder" ? 1 : 0;
    }
    // Pods without an index took their slots in arrival order: their rank hints are not their ranks.
    gangs.push_back({{"key", key},
                     {"jobDomain", p.job_domain},
                     {"fabricHealth", p.fabric_health},
                     {"slotsTakenInArrivalOrder", by_arrival},
                     {"swaps", p.swaps},
                     {"replans", p.replans},
                     {"slots", slots}});
  }
  return json{{"gangs", gangs}};
}

void ExtenderService::save_state() {
  if (options_.state_file.empty()) return;
  json plans = json::array();
  for (const auto& [key, p] : plans_) {
    json slots = json::array();
    for (const auto& s : p.slots) slots.push_back(slot_json(s));
    plans.push_back({{"key", key},
                     {"pod", p.pod_doc},
                     {"count", p.slots.size()},
                     {"jobDomain", p.job_domain},
                     {"fabricHealth", p.fabric_health},
                     {"partitionTier", p.partition_tier},
                     {"partitionSize", p.partition_size},
                     {"swaps", p.swaps},
                     {"replans", p.replans},
                     {"slots", slots}});
  }
  const json doc{{"apiVersion", "hypertopo.io/v1alpha1"}, {"kind", "ExtenderState"}, {"plans", plans}};
  // Written next to the target and renamed over it, so a crash leaves the old or the new file whole.
  auto tmp = options_.state_file;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << io::json_text(doc, 1) << "\n";
    if (!out) {
      ++counters_.errors;
      return;
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, options_.state_file, ec);
  if (ec) ++counters_.errors;
}

std::expected<void, Error> ExtenderService::load_state() {
  if (options_.state_file.empty() || !std::filesystem::exists(options_.state_file)) return {};
  const std::string where = "state file " + options_.state_file.string();
  auto text = io::read_bounded_file(options_.state_file, io::kDataFileLimit);
  if (!text) return std::unexpected(text.error());
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
      plan.pod_doc = member(p, "pod");
      const json& count = member(p, "count");
      if (!count.is_number_unsigned() || count.get<std::uint64_t>() == 0 ||
          count.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max())) {
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
      plan.last_activity = options_.clock->now();
      for (const auto& s : member(p, "slots")) {
        PlanSlot slot;
        slot.rank = s.value("rank", 0);
        slot.node = str_at(s, "node");
        slot.pod_uid = str_at(s, "podUID");
        slot.bound = s.value("bound", false);
        slot.taken_by = str_at(s, "takenBy");
        if (s.contains("domains") && s["domains"].is_array())
          slot.domain_path = s["domains"].get<std::vector<std::string>>();
        plan.slots.push_back(std::move(slot));
      }
      loaded[plan.key] = std::move(plan);
    }
  } catch (const json::exception& e) {
    return fail(ErrorCode::kParse, where + ": " + e.what());
  }
  std::lock_guard lock(mu_);
  plans_ = std::move(loaded);
  dirty_ = true;
  return {};
}

}  // namespace hypertopo::scheduler
