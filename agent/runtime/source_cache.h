// agent/runtime/source_cache.h: the leader's discovery sources behind a cache.
//
// Every built-in source is registered; the leader sources whose entry says kInterval (walks, UFM,
// captures) run at most once per interval, whatever the number of rebuilds: a burst of events is no
// retry storm against UFM or the fabric, and a wrong password costs one error per interval. A
// source that fails hands on its last good result until its next run, so a failure never shrinks
// the tree. Intervals run on the agent's Clock. A run still going after its source's deadline is
// overdue(): the agent's /readyz fails and names it (a wedged fabric manager or walk).
//
//   SourceCache cache(clock);
//   cache.set_intervals(leader_sources);
//   auto run = discoverers::run_discovery(cache.registry(), input);
//   for (const auto& r : cache.take_runs()) log(r.spec, r.fresh ? "ran" : "cached");
#pragma once

#include <chrono>
#include <expected>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "agent/config/agent_config.h"
#include "discoverers/registry/discoverer.h"
#include "errors/error.h"
#include "timing/clock.h"

namespace hypertopo::agent {

class SourceCache {
 public:
  struct Run {
    std::string spec;
    bool fresh = false;  // ran now (false: the cached result)
    bool ok = false;
    double seconds = 0;
    std::string error;
  };

  explicit SourceCache(timing::Clock& clock);

  const discoverers::DiscovererRegistry& registry() const { return wrapped_; }
  void set_intervals(const std::vector<SourceConfig>& sources);
  void invalidate(const std::string& spec);  // its settings changed: it runs at the next rebuild
  // When the first cached result runs out; nullopt when nothing is cached.
  std::optional<timing::Clock::TimePoint> next_due() const;
  std::vector<Run> take_runs();  // what ran (or was served from the cache) since the last call

  struct Overdue {
    std::string spec;
    std::chrono::seconds deadline;
    double running_seconds = 0;
  };
  // The runs going on now that began longer ago than their source's deadline (real time, whatever
  // clock plans the intervals: a wedge is real). Thread-safe.
  std::vector<Overdue> overdue() const;

 private:
  class CachedSource;
  // What a cached source answers until its next run: its last good result (one copy, however often
  // it is handed out: a 10,000-host fabric is megabytes), else the error of its last run.
  struct Entry {
    std::shared_ptr<const discoverers::Discovery> last_good;
    std::optional<Error> error;  // set only while there is no good result
    timing::Clock::TimePoint at;
  };
  std::expected<discoverers::Discovery, Error> discover(const discoverers::SourceSpec& spec,
                                                        const discoverers::DiscoveryDeps& deps);

  timing::Clock& clock_;
  discoverers::DiscovererRegistry base_, wrapped_;
  mutable std::mutex mutex_;
  std::map<std::string, std::chrono::seconds> intervals_;
  std::map<std::string, std::chrono::seconds> deadlines_;
  std::map<std::string, std::chrono::steady_clock::time_point> running_;  // spec -> when its run began
  std::map<std::string, Entry> cache_;
  std::vector<Run> runs_;
};

}  // namespace hypertopo::agent
