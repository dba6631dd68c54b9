// Prometheus text exposition (0.0.4) as /metrics serves it: exact text, escaping, concurrency, misuse.
#include "telemetry/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <thread>

namespace hypertopo::agent {
namespace {

using ::testing::HasSubstr;

TEST(Metrics, CounterRendersHelpTypeAndSortedSeries) {
  telemetry::MetricsRegistry m;
  auto& writes =
      m.counter("hypertopo_api_writes_total", "API writes by verb and outcome.", {"verb", "outcome"});
  writes.inc({"update", "ok"});
  writes.inc({"create", "ok"}, 2);
  writes.inc({"create", "ok"});
  writes.inc({"create", "error"}, 0.5);
  EXPECT_EQ(writes.value({"create", "ok"}), 3);
  EXPECT_EQ(writes.value({"delete", "ok"}), 0);
  EXPECT_EQ(m.render(),
            "# HELP hypertopo_api_writes_total API writes by verb and outcome.\n"
            "# TYPE hypertopo_api_writes_total counter\n"
            "hypertopo_api_writes_total{verb=\"create\",outcome=\"error\"} 0.5\n"
            "hypertopo_api_writes_total{verb=\"create\",outcome=\"ok\"} 3\n"
            "hypertopo_api_writes_total{verb=\"update\",outcome=\"ok\"} 1\n");
}

TEST(Metrics, GaugesAndFamiliesSortedByName) {
  telemetry::MetricsRegistry m;
  m.gauge("hypertopo_leader", "1 when this pod is the leader.", {}).set({}, 1);
  auto& last = m.gauge("hypertopo_last_reconcile_timestamp_seconds", "Time of the last reconcile.", {});
  last.set({}, 1764000000);
  last.add({}, 0.25);
  auto& held = m.gauge("hypertopo_held_deletions", "Deletions held by the guard.", {"reason"});
  held.set({"fraction"}, 3);
  held.add({"fraction"}, -1);
  EXPECT_EQ(held.value({"fraction"}), 2);
  EXPECT_EQ(m.render(),
            "# HELP hypertopo_held_deletions Deletions held by the guard.\n"
            "# TYPE hypertopo_held_deletions gauge\n"
            "hypertopo_held_deletions{reason=\"fraction\"} 2\n"
            "# HELP hypertopo_last_reconcile_timestamp_seconds Time of the last reconcile.\n"
            "# TYPE hypertopo_last_reconcile_timestamp_seconds gauge\n"
            "hypertopo_last_reconcile_timestamp_seconds 1764000000.25\n"
            "# HELP hypertopo_leader 1 when this pod is the leader.\n"
            "# TYPE hypertopo_leader gauge\n"
            "hypertopo_leader 1\n");
}

TEST(Metrics, EmptyFamilies) {
  telemetry::MetricsRegistry m;
  m.counter("a_total", "With labels, never touched.", {"source"});
  m.gauge("b", "No labels, never set.", {});
  EXPECT_EQ(m.render(),
            "# HELP a_total With labels, never touched.\n"
            "# TYPE a_total counter\n"
            "# HELP b No labels, never set.\n"
            "# TYPE b gauge\n"
            "b 0\n");
}

TEST(Metrics, HistogramBucketsAreCumulative) {
  telemetry::MetricsRegistry m;
  auto& h = m.histogram("hypertopo_discovery_duration_seconds", "Discovery time per source.", {"source"},
                        {0.1, 0.5, 1, 2.5});
  h.observe({"ib-fabric"}, 0.375);
  h.observe({"ib-fabric"}, 0.5);  // on a bound: counted in that bucket (le means <=)
  h.observe({"ib-fabric"}, 0.0625);
  h.observe({"ib-fabric"}, 7);  // above every bound: only in +Inf
  h.observe({"demo"}, 1);
  EXPECT_EQ(h.count({"ib-fabric"}), 4u);
  EXPECT_EQ(h.sum({"ib-fabric"}), 7.9375);
  EXPECT_EQ(h.count({"labels"}), 0u);
  EXPECT_EQ(m.render(),
            "# HELP hypertopo_discovery_duration_seconds Discovery time per source.\n"
            "# TYPE hypertopo_discovery_duration_seconds histogram\n"
            "hypertopo_discovery_duration_seconds_bucket{source=\"demo\",le=\"0.1\"} 0\n"
            "hypertopo_discovery_duration_seconds_bucket{source=\"demo\",le=\"0.5\"} 0\n"
            "hypertopo_discovery_duration_seconds_bucket{source=\"demo\",le=\"1\"} 1\n"
            "hypertopo_discovery_duration_seconds_bucket{source=\"demo\",le=\"2.5\"} 1\n"
            "hypertopo_discovery_duration_seconds_bucket{source=\"demo\",le=\"+Inf\"} 1\n"
            "hypertopo_discovery_duration_seconds_sum{source=\"demo\"} 1\n"
            "hypertopo_discovery_duration_seconds_count{source=\"demo\"} 1\n"
            "hypertopo_discovery_duration_seconds_bucket{source=\"ib-fabric\",le=\"0.1\"} 1\n"
            "hypertopo_discovery_duration_seconds_bucket{source=\"ib-fabric\",le=\"0.5\"} 3\n"
            "hypertopo_discovery_duration_seconds_bucket{source=\"ib-fabric\",le=\"1\"} 3\n"
            "hypertopo_discovery_duration_seconds_bucket{source=\"ib-fabric\",le=\"2.5\"} 3\n"
            "hypertopo_discovery_duration_seconds_bucket{source=\"ib-fabric\",le=\"+Inf\"} 4\n"
            "hypertopo_discovery_duration_seconds_sum{source=\"ib-fabric\"} 7.9375\n"
            "hypertopo_discovery_duration_seconds_count{source=\"ib-fabric\"} 4\n");
}

TEST(Metrics, HistogramWithoutLabelsAndDefaultBuckets) {
  telemetry::MetricsRegistry m;
  auto& h = m.histogram("reconcile_seconds", "Reconcile time.", {});
  const std::string before = m.render();
  EXPECT_THAT(before, HasSubstr("reconcile_seconds_bucket{le=\"0.005\"} 0\n"));
  EXPECT_THAT(before, HasSubstr("reconcile_seconds_bucket{le=\"300\"} 0\n"));
  EXPECT_THAT(before, HasSubstr("reconcile_seconds_bucket{le=\"+Inf\"} 0\nreconcile_seconds_sum 0\n"
                                "reconcile_seconds_count 0\n"));
  h.observe({}, 0.03);
  const std::string after = m.render();
  EXPECT_THAT(after, HasSubstr("reconcile_seconds_bucket{le=\"0.025\"} 0\n"
                               "reconcile_seconds_bucket{le=\"0.05\"} 1\n"));
  EXPECT_THAT(after, HasSubstr("reconcile_seconds_sum 0.03\nreconcile_seconds_count 1\n"));
  // One line per default bound, plus +Inf, _sum and _count, plus HELP and TYPE.
  EXPECT_EQ(std::count(after.begin(), after.end(), '\n'),
            static_cast<long>(telemetry::kDefaultBuckets.size() + 5));
}

TEST(Metrics, EscapesLabelValuesAndHelp) {
  telemetry::MetricsRegistry m;
  m.counter("odd_total", "Help with a \\ backslash\nand a second line.", {"path"})
      .inc({"C:\\dir \"quoted\"\nnext"});
  EXPECT_EQ(m.render(),
            "# HELP odd_total Help with a \\\\ backslash\\nand a second line.\n"
            "# TYPE odd_total counter\n"
            "odd_total{path=\"C:\\\\dir \\\"quoted\\\"\\nnext\"} 1\n");
}

TEST(Metrics, SpecialValues) {
  telemetry::MetricsRegistry m;
  auto& g = m.gauge("g", "Special values.", {"v"});
  g.set({"inf"}, std::numeric_limits<double>::infinity());
  g.set({"minus_inf"}, -std::numeric_limits<double>::infinity());
  g.set({"nan"}, std::nan(""));
  g.set({"big"}, 1e20);
  g.set({"small"}, 1e-7);
  g.set({"negative"}, -42);
  EXPECT_EQ(m.render(),
            "# HELP g Special values.\n"
            "# TYPE g gauge\n"
            "g{v=\"big\"} 1e+20\n"
            "g{v=\"inf\"} +Inf\n"
            "g{v=\"minus_inf\"} -Inf\n"
            "g{v=\"nan\"} NaN\n"
            "g{v=\"negative\"} -42\n"
            "g{v=\"small\"} 1e-07\n");
}

TEST(Metrics, SameNameReturnsTheSameFamily) {
  telemetry::MetricsRegistry m;
  auto& a = m.counter("x_total", "X.", {"k"});
  auto& b = m.counter("x_total", "X again.", {"k"});
  EXPECT_EQ(&a, &b);
  b.inc({"v"});
  EXPECT_EQ(a.value({"v"}), 1);
  EXPECT_THAT(m.render(), HasSubstr("# HELP x_total X.\n"));
}

TEST(Metrics, MisuseThrowsNamingTheMetric) {
  telemetry::MetricsRegistry m;
  m.counter("x_total", "X.", {"k"});
  auto throws_with = [](auto&& f, const std::string& text) {
    try {
      f();
      ADD_FAILURE() << "no exception, expected one with: " << text;
    } catch (const std::logic_error& e) {
      EXPECT_THAT(std::string(e.what()), HasSubstr(text));
    }
  };
  throws_with([&] { m.gauge("x_total", "X.", {"k"}); }, "x_total");
  throws_with([&] { m.counter("x_total", "X.", {"other"}); }, "x_total");
  throws_with([&] { m.histogram("x_total", "X.", {"k"}); }, "x_total");
  m.histogram("h", "H.", {}, {1, 2});
  throws_with([&] { m.histogram("h", "H.", {}, {1, 3}); }, "h: registered again");
  throws_with([&] { m.counter("x_total", "X.", {"k"}).inc({"a", "b"}); }, "x_total: 2 label values given, 1");
  throws_with([&] { m.counter("x_total", "X.", {"k"}).inc({"a"}, -1); }, "x_total: cannot go down");
  throws_with([&] { m.counter("bad-name", "X.", {}); }, "bad-name");
  throws_with([&] { m.counter("y_total", "Y.", {"__reserved"}); }, "__reserved");
  throws_with([&] { m.histogram("z", "Z.", {"le"}); }, "'le' is reserved");
  throws_with([&] { m.histogram("w", "W.", {}, {2, 1}); }, "increasing");
  // Nothing half-registered after a throw.
  EXPECT_THAT(m.render(), ::testing::Not(HasSubstr("bad-name")));
}

TEST(Metrics, ConcurrentUpdatesAreAllCounted) {
  telemetry::MetricsRegistry m;
  constexpr int kThreads = 4;
  constexpr int kPerThread = 5000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&m, t] {
      // Each thread registers the same families itself, as separate loops in the agent do.
      auto& c = m.counter("ops_total", "Ops.", {"kind"});
      auto& h = m.histogram("op_seconds", "Op time.", {}, {0.5, 1});
      auto& g = m.gauge("in_flight", "In flight.", {});
      for (int i = 0; i < kPerThread; ++i) {
        c.inc({i % 2 == 0 ? "even" : "odd"});
        h.observe({}, t % 2 == 0 ? 0.25 : 0.75);
        g.add({}, 1);
        if (i % 500 == 0) (void)m.render();  // rendering while others write
      }
    });
  }
  for (auto& th : threads) th.join();
  auto& c = m.counter("ops_total", "Ops.", {"kind"});
  EXPECT_EQ(c.value({"even"}) + c.value({"odd"}), kThreads * kPerThread);
  EXPECT_EQ(m.histogram("op_seconds", "Op time.", {}, {0.5, 1}).count({}),
            std::uint64_t{kThreads * kPerThread});
  EXPECT_EQ(m.gauge("in_flight", "In flight.", {}).value({}), kThreads * kPerThread);
  const std::string text = m.render();
  EXPECT_THAT(text, HasSubstr("op_seconds_bucket{le=\"0.5\"} 10000\n"));
  EXPECT_THAT(text, HasSubstr("op_seconds_bucket{le=\"1\"} 20000\n"));
  EXPECT_THAT(text, HasSubstr("ops_total{kind=\"even\"} 10000\nops_total{kind=\"odd\"} 10000\n"));
}

}  // namespace
}  // namespace hypertopo::agent
