#include "k8s/lease/leader_elector.h"

#include <algorithm>
#include <ctime>

namespace hypertopo::k8s {

using nlohmann::json;

std::string format_micro_time(std::chrono::system_clock::time_point t) {
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
  std::time_t seconds = static_cast<std::time_t>(micros / 1000000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%06lldZ", date, static_cast<long long>(micros % 1000000));
  return out;
}

LeaderElector::LeaderElector(KubeClient& client, LeaderElectionOptions options,
                             std::shared_ptr<timing::Clock> clock)
    : client_(client),
      options_(std::move(options)),
      clock_(clock ? std::move(clock) : std::make_shared<timing::SystemClock>()) {}

bool LeaderElector::is_leader() const { return leader_.load(); }

std::string LeaderElector::observed_leader() const {
  std::lock_guard lock(mutex_);
  return observed_leader_;
}

int LeaderElector::transitions_observed() const {
  std::lock_guard lock(mutex_);
  return transitions_;
}

void LeaderElector::stop() { stopped_.store(true); }

void LeaderElector::pause(std::chrono::milliseconds total) {
  const auto step = std::min(total, std::chrono::milliseconds(10));
  auto left = total;
  while (left > std::chrono::milliseconds::zero() && !stopped_.load()) {
    const auto now = std::min(left, step);
    clock_->sleep_for(now);
    left -= now;
  }
}

void LeaderElector::observe(const json& spec) {
  std::lock_guard lock(mutex_);
  if (spec != observed_record_) {
    observed_record_ = spec;
    observed_time_ = clock_->now();
  }
  observed_leader_ = spec.value("holderIdentity", "");
  transitions_ = spec.value("leaseTransitions", 0);
}

namespace {

int lease_seconds(std::chrono::milliseconds d) {
  // The API counts whole seconds; never write 0 (a lease that expires as it is written).
  const auto ms = d.count();
  return static_cast<int>(std::max<long long>(1, (ms + 999) / 1000));
}

}  // namespace

bool LeaderElector::try_acquire_or_renew() {
  const std::string now_text = format_micro_time(std::chrono::system_clock::now());
  const int duration_seconds = lease_seconds(options_.lease_duration);
  auto got = client_.get(kLeasesResource, options_.lease_namespace, options_.lease_name);
  if (!got) {
    if (!got.error().not_found()) return false;
    json spec = {{"holderIdentity", options_.identity},
                 {"leaseDurationSeconds", duration_seconds},
                 {"acquireTime", now_text},
                 {"renewTime", now_text},
                 {"leaseTransitions", 0}};
    json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                  {"kind", "Lease"},
                  {"metadata", {{"name", options_.lease_name}, {"namespace", options_.lease_namespace}}},
                  {"spec", spec}};
    auto made = client_.create(kLeasesResource, options_.lease_namespace, lease);
    if (!made) return false;
    observe(spec);
    return true;
  }
  json lease = std::move(*got);
  json spec = lease.contains("spec") && lease["spec"].is_object() ? lease["spec"] : json::object();
  observe(spec);
  const std::string holder = spec.contains("holderIdentity") && spec["holderIdentity"].is_string()
                                 ? spec["holderIdentity"].get<std::string>()
                                 : "";
  const int held_seconds = spec.value("leaseDurationSeconds", 0);
  if (!holder.empty() && holder != options_.identity) {
    timing::Clock::TimePoint seen;
    {
      std::lock_guard lock(mutex_);
      seen = observed_time_;
    }
    const auto valid_for =
        held_seconds > 0
            ? std::chrono::duration_cast<timing::Clock::Duration>(std::chrono::seconds(held_seconds))
            : std::chrono::duration_cast<timing::Clock::Duration>(options_.lease_duration);
    if (clock_->now() < seen + valid_for) return false;  // someone else holds a live lease
  }
  json next = spec;
  next["holderIdentity"] = options_.identity;
  next["leaseDurationSeconds"] = duration_seconds;
  next["renewTime"] = now_text;
  if (holder != options_.identity) {
    next["acquireTime"] = now_text;
    next["leaseTransitions"] = spec.value("leaseTransitions", 0) + 1;
  }
  lease["spec"] = next;
  auto put = client_.update(kLeasesResource, options_.lease_namespace, lease);
  if (!put) return false;  // 409: another candidate won the race; anything else: try again later
  observe(next);
  return true;
}

void LeaderElector::release() {
  auto got = client_.get(kLeasesResource, options_.lease_namespace, options_.lease_name);
  if (!got) return;
  json lease = std::move(*got);
  if (!lease.contains("spec") || lease["spec"].value("holderIdentity", "") != options_.identity) return;
  const std::string now_text = format_micro_time(std::chrono::system_clock::now());
  json& spec = lease["spec"];
  spec["holderIdentity"] = "";
  spec["leaseDurationSeconds"] = 1;
  spec["renewTime"] = now_text;
  spec["acquireTime"] = now_text;
  if (client_.update(kLeasesResource, options_.lease_namespace, lease)) observe(spec);
}

void LeaderElector::run(std::function<void()> on_started_leading, std::function<void()> on_stopped_leading) {
  while (!stopped_.load()) {
    // Acquire.
    while (!stopped_.load() && !try_acquire_or_renew()) pause(options_.retry_period);
    if (stopped_.load()) break;
    leader_.store(true);
    if (on_started_leading) on_started_leading();
    // Renew until stopped or until renewals fail for renew_deadline.
    auto last_renew = clock_->now();
    while (!stopped_.load()) {
      pause(options_.retry_period);
      if (stopped_.load()) break;
      if (try_acquire_or_renew()) {
        last_renew = clock_->now();
        continue;
      }
      if (clock_->now() - last_renew >= options_.renew_deadline) break;
    }
    // Stop acting first, then give the lease back when we are shutting down.
    leader_.store(false);
    if (on_stopped_leading) on_stopped_leading();
    if (stopped_.load()) release();
  }
}

}  // namespace hypertopo::k8s
