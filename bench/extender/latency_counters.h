// bench/extender/latency_counters.h: per-call latency percentiles as Google Benchmark counters.
//
// The extender benchmarks time each call themselves (a call's own wall time, not the loop's mean)
// and report the median, the 99th percentile and the maximum in milliseconds.
//
//   std::vector<double> ms;   // one entry per call
//   report_latency(state, ms);  // counters p50_ms, p99_ms, max_ms
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <vector>

namespace hypertopo::scheduler {

inline void report_latency(benchmark::State& state, std::vector<double>& ms) {
  if (ms.empty()) return;
  std::sort(ms.begin(), ms.end());
  auto at = [&](double q) {
    return ms[std::min(ms.size() - 1, static_cast<std::size_t>(q * static_cast<double>(ms.size())))];
  };
  state.counters["p50_ms"] = at(0.50);
  state.counters["p99_ms"] = at(0.99);
  state.counters["max_ms"] = ms.back();
}

}  // namespace hypertopo::scheduler
