// The extender's parts put together (extender_service.h): watch events to the cluster view, what
// they mean for gang slots to the gang book, each change moving the view's generation.
#include "scheduler/extender/extender_service.h"

#include <algorithm>

namespace hypertopo::scheduler {

using nlohmann::json;

ExtenderService::ExtenderService(ExtenderOptions options)
    : options_(std::move(options)),
      view_(ViewOptions{.gang_label_keys = options_.gang_label_keys,
                        .gang_annotation_keys = options_.gang_annotation_keys}),
      book_(
          [&] {
            if (!options_.clock) options_.clock = std::make_shared<timing::SystemClock>();
            if (!options_.log) options_.log = telemetry::make_stderr_logger(telemetry::LogLevel::kInfo);
            return BookOptions{.binpack = options_.binpack,
                               .fabric_health = options_.fabric_health,
                               .plan_ttl = options_.plan_ttl,
                               .state_file = options_.state_file,
                               .state_debounce = options_.state_debounce,
                               .clock = options_.clock,
                               .log = options_.log};
          }(),
          view_) {}

ExtenderService::~ExtenderService() = default;

std::expected<void, Error> ExtenderService::set_hypernodes(const std::vector<json>& hypernodes) {
  auto lock = change();
  return view_.set_hypernodes(hypernodes);
}

std::expected<void, Error> ExtenderService::set_hypernode_pages(std::span<const std::string> pages) {
  auto lock = change();
  return view_.set_hypernode_pages(pages);
}

std::expected<void, Error> ExtenderService::upsert_hypernode(const json& hypernode) {
  auto lock = change();
  return view_.upsert_hypernode(hypernode);
}

void ExtenderService::remove_hypernode(const std::string& name) {
  auto lock = change();
  view_.remove_hypernode(name);
}

std::expected<void, Error> ExtenderService::set_nodes(const std::vector<json>& nodes) {
  auto lock = change();
  if (auto ok = view_.set_nodes(nodes); !ok) return ok;
  book_.recheck_all();
  return {};
}

std::expected<void, Error> ExtenderService::set_node_pages(std::span<const std::string> pages) {
  auto lock = change();
  if (auto ok = view_.set_node_pages(pages); !ok) return ok;
  book_.recheck_all();
  return {};
}

// A Node event checks the slots on that Node at once (a planned node may just have failed); a
// heartbeat, which changes nothing the view reads, checks nothing.
std::expected<void, Error> ExtenderService::upsert_node(const json& node) {
  auto lock = change();
  auto changed = view_.upsert_node(node);
  if (!changed) return std::unexpected(changed.error());
  if (*changed) {
    const json& meta = node.is_object() && node.contains("metadata") ? node["metadata"] : json();
    book_.node_changed(meta.is_object() ? meta.value("name", std::string()) : std::string());
  }
  return {};
}

void ExtenderService::remove_node(const std::string& name) {
  auto lock = change();
  view_.remove_node(name);
  book_.node_changed(name);
}

std::expected<void, Error> ExtenderService::set_pods(const std::vector<json>& pods) {
  auto lock = change();
  if (auto ok = view_.set_pods(pods); !ok) return ok;
  book_.resync();
  return {};
}

std::expected<void, Error> ExtenderService::set_pod_pages(std::span<const std::string> pages) {
  auto lock = change();
  if (auto ok = view_.set_pod_pages(pages); !ok) return ok;
  book_.resync();
  return {};
}

std::expected<void, Error> ExtenderService::upsert_pod(const json& pod) {
  auto lock = change();
  auto event = view_.upsert_pod(pod);
  if (!event) return std::unexpected(event.error());
  book_.apply(*event);
  return {};
}

void ExtenderService::remove_pod(const json& pod) {
  auto lock = change();
  book_.apply(view_.remove_pod(pod));
}

void ExtenderService::set_pod_groups(const std::vector<json>& pod_groups, PodGroupKind kind) {
  auto lock = change();
  view_.set_pod_groups(pod_groups, kind);
}

void ExtenderService::upsert_pod_group(const json& pod_group, PodGroupKind kind) {
  auto lock = change();
  view_.upsert_pod_group(pod_group, kind);
}

void ExtenderService::remove_pod_group(const json& pod_group, PodGroupKind kind) {
  auto lock = change();
  view_.remove_pod_group(pod_group, kind);
}

void ExtenderService::set_disruption_budgets(const std::vector<json>& budgets) {
  auto lock = change();
  view_.set_disruption_budgets(budgets);
}

void ExtenderService::upsert_disruption_budget(const json& budget) {
  auto lock = change();
  view_.upsert_disruption_budget(budget);
}

void ExtenderService::remove_disruption_budget(const json& budget) {
  auto lock = change();
  view_.remove_disruption_budget(budget);
}

json ExtenderService::plans() {
  auto lock = read();
  return book_.plans_json();
}

// The book reads the file and takes its own lock to swap the plans in; their reservations change
// the view's index, so the view's lock is held around it, and its generation moves.
std::expected<void, Error> ExtenderService::load_state() {
  std::lock_guard lock(mu_);
  auto loaded = book_.load_state();
  generation_.fetch_add(1, std::memory_order_acq_rel);
  return loaded;
}

void ExtenderService::flush_state() { book_.flush_state(); }

void ExtenderService::check_plans() {
  auto lock = change();
  book_.check_plans();
}

void ExtenderService::expect_first_lists(std::vector<std::string> kinds) {
  std::lock_guard lock(ready_mu_);
  waiting_for_ = std::move(kinds);
  ready_.store(waiting_for_.empty(), std::memory_order_release);
}

void ExtenderService::first_list_landed(std::string_view kind) {
  {
    std::lock_guard lock(ready_mu_);
    auto it = std::find(waiting_for_.begin(), waiting_for_.end(), kind);
    if (it == waiting_for_.end()) return;
    waiting_for_.erase(it);
    if (!waiting_for_.empty()) return;
  }
  // Only the call that took the last kind gets here. An index that does not build is no reason to
  // stay unready: the verbs report that error per call, as they would after any later change.
  bool built = true;
  {
    auto lock = change();
    built = book_.ensure_index().has_value();
  }
  if (!built) count(&VerbCounters::errors);
  std::lock_guard lock(ready_mu_);
  ready_.store(true, std::memory_order_release);
}

std::string ExtenderService::not_ready_reason() const {
  if (ready()) return {};  // the verbs' path once open: no lock
  std::lock_guard lock(ready_mu_);
  if (ready_.load(std::memory_order_relaxed)) return {};
  if (waiting_for_.empty()) return "extender view still filling: building the topology index";
  std::string out = "extender view still filling: waiting for the first list of: ";
  for (std::size_t i = 0; i < waiting_for_.size(); ++i) out += (i ? ", " : "") + waiting_for_[i];
  return out;
}

std::size_t ExtenderService::node_count() const {
  auto lock = read();
  return view_.node_count();
}

ExtenderCounters ExtenderService::counters() const {
  ExtenderCounters out;
  {
    auto lock = read();
    out.view = view_.counters();
    out.book = book_.counters();
  }
  std::lock_guard lock(verb_mu_);
  out.verbs = verb_counters_;
  out.watch_errors = watch_errors_;
  return out;
}

void ExtenderService::count(std::int64_t VerbCounters::*field) {
  std::lock_guard lock(verb_mu_);
  ++(verb_counters_.*field);
}

std::expected<std::shared_ptr<const ViewSnapshot>, Error> ExtenderService::snapshot() {
  {
    std::lock_guard lock(snapshot_mu_);
    if (snapshot_ && snapshot_->generation == generation()) return snapshot_;
  }
  // The generation moved (or nothing was published yet): the index is brought up to date and
  // copied. Changes hold the view's lock while they move the generation, so under it the generation
  // read is the one the copy shows.
  std::shared_ptr<const ViewSnapshot> fresh;
  {
    auto lock = read();
    if (auto ok = book_.ensure_index(); !ok) return std::unexpected(ok.error());
    fresh = view_.snapshot(generation());
  }
  std::lock_guard lock(snapshot_mu_);
  if (!snapshot_ || snapshot_->generation < fresh->generation) snapshot_ = fresh;
  return fresh;
}

void ExtenderService::watch_error(std::string_view resource, const std::string& what) {
  {
    std::lock_guard lock(verb_mu_);
    auto it = watch_errors_.find(resource);
    if (it == watch_errors_.end()) it = watch_errors_.emplace(std::string(resource), 0).first;
    ++it->second;
  }
  options_.log(telemetry::LogLevel::kWarn, "hypertopo extender: " + what);
}

}  // namespace hypertopo::scheduler
