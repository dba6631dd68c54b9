#include "agent/runtime/source_cache.h"

#include <memory>
#include <utility>

namespace hypertopo::agent {

class SourceCache::CachedSource : public discoverers::Discoverer {
 public:
  CachedSource(SourceCache& owner, discoverers::SourceSpec spec, discoverers::DiscoveryDeps deps)
      : owner_(owner), spec_(std::move(spec)), deps_(std::move(deps)) {}
  std::string name() const override { return spec_.to_string(); }
  std::expected<discoverers::Discovery, Error> discover() override { return owner_.discover(spec_, deps_); }

 private:
  SourceCache& owner_;
  discoverers::SourceSpec spec_;
  discoverers::DiscoveryDeps deps_;
};

SourceCache::SourceCache(timing::Clock& clock) : clock_(clock) {
  discoverers::register_builtin_discoverers(base_);
  for (const auto& kind : base_.kinds()) {
    discoverers::SourceEntry entry = *base_.entry(kind);
    if (entry.role == SourceRole::kLeader) {
      entry.factory = [this](const discoverers::SourceSpec& spec, const discoverers::DiscoveryDeps& deps)
          -> std::expected<std::unique_ptr<discoverers::Discoverer>, Error> {
        return std::make_unique<CachedSource>(*this, spec, deps);
      };
    }
    auto added = wrapped_.add(std::move(entry));
    (void)added;  // the entries come from a registry, so they are valid and unique
  }
}

void SourceCache::set_intervals(const std::vector<SourceConfig>& sources) {
  std::lock_guard lock(mutex_);
  intervals_.clear();
  deadlines_.clear();
  for (const auto& s : sources) {
    intervals_[s.spec()] = s.interval;
    deadlines_[s.spec()] = s.deadline;
  }
}

std::vector<SourceCache::Overdue> SourceCache::overdue() const {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(mutex_);
  std::vector<Overdue> out;
  for (const auto& [spec, since] : running_) {
    auto deadline = deadlines_.find(spec);
    if (deadline == deadlines_.end() || now - since < deadline->second) continue;
    out.push_back({spec, deadline->second, std::chrono::duration<double>(now - since).count()});
  }
  return out;
}

void SourceCache::invalidate(const std::string& spec) {
  std::lock_guard lock(mutex_);
  cache_.erase(spec);
}

std::optional<timing::Clock::TimePoint> SourceCache::next_due() const {
  std::lock_guard lock(mutex_);
  std::optional<timing::Clock::TimePoint> due;
  for (const auto& [spec, entry] : cache_) {
    auto it = intervals_.find(spec);
    if (it == intervals_.end()) continue;
    auto at = entry.at + it->second;
    if (!due || at < *due) due = at;
  }
  return due;
}

std::vector<SourceCache::Run> SourceCache::take_runs() {
  std::lock_guard lock(mutex_);
  return std::exchange(runs_, {});
}

std::expected<discoverers::Discovery, Error> SourceCache::discover(const discoverers::SourceSpec& spec,
                                                                   const discoverers::DiscoveryDeps& deps) {
  const std::string key = spec.to_string();
  const bool keep = base_.entry(spec.kind)->cache == CachePolicy::kInterval;
  if (keep) {
    std::lock_guard lock(mutex_);
    auto it = cache_.find(key);
    auto interval = intervals_.find(key);
    if (it != cache_.end() && interval != intervals_.end() &&
        clock_.now() < it->second.at + interval->second) {
      runs_.push_back({key, false, it->second.last_good != nullptr, 0, ""});
      if (it->second.last_good) return *it->second.last_good;
      return std::unexpected(it->second.error.value_or(Error(ErrorCode::kInternal, "no result")));
    }
  }
  // How long the run took is measured in real time, whatever clock plans the intervals.
  const auto start = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(mutex_);
    running_[key] = start;
  }
  auto result = [&]() -> std::expected<discoverers::Discovery, Error> {
    auto source = base_.create(spec, deps);
    if (!source) return std::unexpected(source.error());
    return (*source)->discover();
  }();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::lock_guard lock(mutex_);
  running_.erase(key);
  runs_.push_back({key, true, result.has_value(), seconds, result ? "" : result.error().message()});
  if (!keep) return result;
  if (!result) {
    // Not tried again before its interval has passed; meanwhile its last good topology stands in.
    auto& entry = cache_[key];
    entry.at = clock_.now();
    if (entry.last_good) {
      runs_.back().error += " (the last good result is used until the next run)";
      return *entry.last_good;
    }
    entry.error = result.error();
    return result;
  }
  cache_[key] = Entry{std::make_shared<const discoverers::Discovery>(*result), std::nullopt, clock_.now()};
  return result;
}

}  // namespace hypertopo::agent
