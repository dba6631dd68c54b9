// telemetry/metrics.h: Prometheus metrics for the agent, rendered in the text exposition
// format 0.0.4 (what /metrics serves).
//
// A family has a name, help text, a type and a fixed list of label names; each series is one tuple
// of label values. Counters only go up; gauges are set; histograms have fixed upper bounds (seconds)
// and expose _bucket{le=...}, _sum and _count. Thread-safe. Label values are escaped (\\, \", \n).
// Families render sorted by name, series sorted by label values, so the output is stable.
// A family without labels always shows its one series (0 until touched); a family with labels and
// no series shows only its HELP and TYPE lines. Values print as integers where they are ("3"), else
// in the shortest form that reads back exactly ("0.25"); +Inf, -Inf and NaN as the format spells them.
// Misuse (a counter decreased, a wrong number of label values, bad names or bounds) throws
// std::logic_error naming the metric.
//
//   MetricsRegistry m;
//   auto& writes = m.counter("hypertopo_api_writes_total", "API writes by verb and outcome.",
//                            {"verb", "outcome"});
//   writes.inc({"create", "ok"});
//   m.gauge("hypertopo_leader", "1 when this pod is the leader.", {}).set({}, 1);
//   m.histogram("hypertopo_discovery_duration_seconds", "...", {"source"}, kDefaultBuckets)
//       .observe({"ib-fabric"}, 0.42);
//   std::string text = m.render();
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace hypertopo::telemetry {

using LabelValues = std::vector<std::string>;

inline const std::vector<double> kDefaultBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                                    1,     2.5,  5,     10,   30,  60,   300};

class Counter {
 public:
  void inc(const LabelValues& labels, double by = 1);
  double value(const LabelValues& labels) const;  // 0 for a series never touched
 private:
  friend class MetricsRegistry;
  // Set by the registry: a call with the wrong number of label values throws std::logic_error
  // naming the metric (a programming error). Unset (empty name) for a metric made on its own.
  std::string name_;
  std::size_t label_count_ = 0;
  mutable std::mutex mutex_;
  std::map<LabelValues, double> values_;
};

class Gauge {
 public:
  void set(const LabelValues& labels, double value);
  void add(const LabelValues& labels, double by);
  double value(const LabelValues& labels) const;
  // Exactly these series from now on, in one step: a series not named goes (a HyperNode that left
  // the tree takes its series with it, and no scrape sees half of the change).
  void replace(std::map<LabelValues, double> series);

 private:
  friend class MetricsRegistry;
  // Set by the registry: a call with the wrong number of label values throws std::logic_error
  // naming the metric (a programming error). Unset (empty name) for a metric made on its own.
  std::string name_;
  std::size_t label_count_ = 0;
  mutable std::mutex mutex_;
  std::map<LabelValues, double> values_;
};

class Histogram {
 public:
  void observe(const LabelValues& labels, double value);
  std::uint64_t count(const LabelValues& labels) const;
  double sum(const LabelValues& labels) const;

 private:
  friend class MetricsRegistry;
  struct Series {
    std::vector<std::uint64_t> buckets;  // cumulative at render time, per-bucket here
    double sum = 0;
    std::uint64_t count = 0;
  };
  std::string name_;  // as for Counter
  std::size_t label_count_ = 0;
  std::vector<double> bounds_;  // sorted, finite; +Inf is implied
  mutable std::mutex mutex_;
  std::map<LabelValues, Series> series_;
};

class MetricsRegistry {
 public:
  // Registering the same name again returns the same family (same type and labels required; a
  // mismatch throws std::logic_error naming the metric: a programming error).
  Counter& counter(const std::string& name, const std::string& help, std::vector<std::string> labels);
  Gauge& gauge(const std::string& name, const std::string& help, std::vector<std::string> labels);
  Histogram& histogram(const std::string& name, const std::string& help, std::vector<std::string> labels,
                       std::vector<double> bounds = kDefaultBuckets);
  std::string render() const;

 private:
  struct Family;
  enum class Type { kCounter, kGauge, kHistogram };
  // The family called `name`, created on first use; throws std::logic_error on a mismatch.
  std::shared_ptr<Family> family(const std::string& name, const std::string& help, Type type,
                                 std::vector<std::string> labels, std::vector<double> bounds);
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Family>> families_;
};

}  // namespace hypertopo::telemetry
