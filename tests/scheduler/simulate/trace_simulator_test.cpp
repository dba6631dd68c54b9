// The trace replay on small trees whose right answers are worked out by hand in the comments:
// spans, waits, FIFO admission at departures, fragmentation samples, utilisation, and trace errors
// that name the line.
#include "scheduler/simulate/trace_simulator.h"

#include <gtest/gtest.h>

#include <sstream>

#include "scheduler/simulate/job_trace.h"

namespace hypertopo::scheduler {
namespace {

NodeSpec gpu_node(std::string name) {
  NodeSpec n;
  n.name = std::move(name);
  n.allocatable = {{"cpu", 64000}, {"pods", 110}, {"nvidia.com/gpu", 8}};
  return n;
}

HyperNodeMember exact_node(std::string n) {
  return {HyperNodeMember::Type::kNode, MemberSelector::exact(std::move(n))};
}
HyperNodeMember exact_hn(std::string n) {
  return {HyperNodeMember::Type::kHyperNode, MemberSelector::exact(std::move(n))};
}

// spine (tier 2) = {leaf-a (tier 1) = {n1, n2}, leaf-b = {n3, n4}}; 8 GPUs per node, 32 in all.
TopologyIndex two_leaves() {
  auto index =
      TopologyIndex::from_hypernodes({{"leaf-a", 1, "leaf", {exact_node("n1"), exact_node("n2")}},
                                      {"leaf-b", 1, "leaf", {exact_node("n3"), exact_node("n4")}},
                                      {"spine", 2, "spine", {exact_hn("leaf-a"), exact_hn("leaf-b")}}},
                                     {gpu_node("n1"), gpu_node("n2"), gpu_node("n3"), gpu_node("n4")}, {});
  EXPECT_TRUE(index.has_value()) << index.error().message();
  return std::move(*index);
}

std::string event(int time, const std::string& id, int duration, int pods, int gpus,
                  const std::string& level) {
  return R"({"time": )" + std::to_string(time) + R"(, "job": ")" + id + R"(", "duration": )" +
         std::to_string(duration) +
         R"(, "arrive": {"kind": "PlacementRequest", "podSets": [{"name": "w", "count": )" +
         std::to_string(pods) + R"(, "requests": {"nvidia.com/gpu": ")" + std::to_string(gpus) +
         R"("}, "topology": {"mode": "required", "level": ")" + level + R"("}}]}})";
}

std::vector<TraceJob> trace_of(const std::string& text) {
  std::istringstream in(text);
  auto trace = parse_trace(in, "jobs.jsonl", {});
  EXPECT_TRUE(trace.has_value()) << trace.error().message();
  return trace ? *trace : std::vector<TraceJob>{};
}

std::string trace_error(const std::string& text) {
  std::istringstream in(text);
  auto trace = parse_trace(in, "jobs.jsonl", {});
  EXPECT_FALSE(trace.has_value());
  return trace ? "" : trace.error().message();
}

const PolicyReport& policy(const SimulationReport& r, const std::string& name) {
  return r.policies[0].policy == name ? r.policies[0] : r.policies[1];
}

TEST(TraceSimulator, FirstFitSplitsAJobAcrossLeavesTheEngineKeepsInOne) {
  // t=0   j1 1x4 GPUs (100 s)  engine: n1 (lowest tier is one node; ties go in tree order); ff: n1
  // t=0   j2 2x8 GPUs (100 s)  engine: leaf-a has room for one pod (n2), leaf-b for two -> n3+n4,
  //                            span 1; ff: n1 has 4 free, so n2 + n3 across the leaves -> span 2
  // t=0   j3 1x4 GPUs (50 s)   engine: n1 (4 free: the tighter fit than n2); ff: n1 (first with room)
  // t=10  j4 2x8 GPUs (100 s)  both: a single free node (engine n2, ff n4) -> waits
  // t=50  j3 leaves; j4 still needs two whole nodes
  // t=100 j1, j2 leave; j4 starts on leaf-a (n1+n2) for both, span 1, wait 90; t=200 j4 leaves.
  auto trace = trace_of(event(0, "j1", 100, 1, 4, "leaf") + "\n" + event(0, "j2", 100, 2, 8, "leaf") + "\n" +
                        event(0, "j3", 50, 1, 4, "leaf") + "\n" + event(10, "j4", 100, 2, 8, "leaf") + "\n");
  ASSERT_EQ(trace.size(), 4u);
  auto index = two_leaves();
  auto report = simulate_trace(index, trace, {});
  ASSERT_TRUE(report.has_value()) << report.error().message();
  EXPECT_EQ(report->gpus, 32);
  EXPECT_EQ(report->gpu_resource, "nvidia.com/gpu");
  ASSERT_EQ(report->policies.size(), 2u);
  const PolicyReport& engine = policy(*report, "topology-aware");
  const PolicyReport& ff = policy(*report, "first-fit");

  for (const PolicyReport* p : {&engine, &ff}) {
    EXPECT_EQ(p->admitted, 4u) << p->policy;
    EXPECT_EQ(p->never_admitted, 0u);
    EXPECT_DOUBLE_EQ(p->wait_mean, 90.0 / 4);  // only j4 waited, 10 -> 100
    EXPECT_EQ(p->wait_max, 90);
    EXPECT_EQ(p->outcomes[3].start, 100);
    EXPECT_EQ(p->end, 200);
    EXPECT_EQ(p->samples, 5u);  // instants 0, 10, 50, 100, 200
    EXPECT_EQ(p->events, 8u);
    // GPU-seconds 4*100 + 16*100 + 4*50 + 16*100 = 3800 over 32 GPUs * 200 s.
    EXPECT_DOUBLE_EQ(p->utilisation, 3800.0 / 6400.0);
  }
  // Spans: engine 0, 1, 0, 1; first fit 0, 2, 0, 1.
  EXPECT_EQ(engine.outcomes[1].span, 1);
  EXPECT_EQ(ff.outcomes[1].span, 2);
  EXPECT_DOUBLE_EQ(engine.span_mean, 0.5);
  EXPECT_EQ(engine.span_max, 1);
  EXPECT_DOUBLE_EQ(ff.span_mean, 0.75);
  EXPECT_EQ(ff.span_max, 2);
  EXPECT_EQ(engine.jobs_per_span, (std::map<int, std::size_t>{{0, 2}, {1, 2}}));
  EXPECT_EQ(ff.jobs_per_span, (std::map<int, std::size_t>{{0, 2}, {1, 1}, {2, 1}}));

  // Fragmentation per instant (used GPUs per node n1 n2 n3 n4):
  //   engine: t0,t10 8 0 8 8; t50 4 0 8 8; t100 8 8 0 0; t200 idle
  //   ff:     t0,t10 8 8 8 0; t50 4 8 8 0; t100 8 8 0 0; t200 idle
  // tier 0 stranded: only n1 at t50 (4) -> mean 4/5 for both; largest free node 8 throughout.
  // tier 1 stranded: engine leaf-a 8, 8, 12, 0, 0; ff leaf-b 8, 8, leaf-a 4 + leaf-b 8 = 12, 0, 0
  //   -> 28/5 both; largest free leaf: engine 8, 8, 12, 16, 16 = 60/5; ff 8, 8, 8, 16, 16 = 56/5.
  // tier 2 (spine) stranded: 8, 8, 12, 16, 0 = 44/5; largest 8, 8, 12, 16, 32 = 76/5 for both.
  ASSERT_EQ(engine.fragmentation.size(), 3u);
  for (const PolicyReport* p : {&engine, &ff}) {
    EXPECT_EQ(p->fragmentation[0].tier_name, "node");
    EXPECT_DOUBLE_EQ(p->fragmentation[0].stranded_free_mean, 0.8);
    EXPECT_EQ(p->fragmentation[0].stranded_free_max, 4);
    EXPECT_DOUBLE_EQ(p->fragmentation[0].largest_free_block_mean, 8.0);
    EXPECT_EQ(p->fragmentation[1].tier_name, "leaf");
    EXPECT_DOUBLE_EQ(p->fragmentation[1].stranded_free_mean, 5.6);
    EXPECT_EQ(p->fragmentation[1].stranded_free_max, 12);
    EXPECT_DOUBLE_EQ(p->fragmentation[2].stranded_free_mean, 8.8);
    EXPECT_EQ(p->fragmentation[2].stranded_free_max, 16);
    EXPECT_DOUBLE_EQ(p->fragmentation[2].largest_free_block_mean, 15.2);
    EXPECT_EQ(p->fragmentation[2].largest_free_block_min, 8);
  }
  EXPECT_DOUBLE_EQ(engine.fragmentation[1].largest_free_block_mean, 12.0);
  EXPECT_DOUBLE_EQ(ff.fragmentation[1].largest_free_block_mean, 11.2);
  EXPECT_EQ(ff.fragmentation[1].largest_free_block_min, 8);

  // The caller's index is untouched by the replay.
  EXPECT_EQ(index.domain_used(index.root(), "nvidia.com/gpu"), 0);
}

TEST(TraceSimulator, StrictFifoAdmitsWaitersAtTheDepartureAndRejectsWhatNeverFits) {
  // t=0  j1 3x8 GPUs (100 s): n1 n2 n3 for both policies (spine), span 2; n4 stays free.
  // t=1  j2 2x8 (10 s): one node free -> waits.
  // t=2  j3 1x8 (10 s): would fit n4, but j2 waits ahead of it -> waits (no backfilling).
  // t=3  j4 5x8: 40 GPUs > 32 even on the idle cluster -> never admitted, does not block the queue.
  // t=100 j1 leaves: j2 starts (wait 99, leaf-a, span 1), then j3 (wait 98, one node, span 0).
  // t=110 j2, j3 leave.
  auto trace = trace_of(event(0, "j1", 100, 3, 8, "spine") + "\n" + event(1, "j2", 10, 2, 8, "spine") + "\n" +
                        event(2, "j3", 10, 1, 8, "spine") + "\n" + event(3, "j4", 10, 5, 8, "spine") + "\n");
  auto index = two_leaves();
  for (auto kind : {SimulationPolicy::kTopologyAware, SimulationPolicy::kFirstFit}) {
    auto p = simulate_policy(index, trace, kind, {});
    ASSERT_TRUE(p.has_value()) << p.error().message();
    EXPECT_EQ(p->admitted, 3u) << p->policy;
    EXPECT_EQ(p->never_admitted, 1u);
    EXPECT_EQ(p->outcomes[3].start, -1);
    EXPECT_NE(p->outcomes[3].reason.find("does not fit the idle cluster"), std::string::npos)
        << p->outcomes[3].reason;
    EXPECT_EQ(p->outcomes[1].start, 100);
    EXPECT_EQ(p->outcomes[2].start, 100);
    EXPECT_DOUBLE_EQ(p->wait_mean, (0.0 + 99 + 98) / 3);
    EXPECT_EQ(p->wait_max, 99);
    EXPECT_EQ(p->outcomes[0].span, 2);
    EXPECT_EQ(p->outcomes[1].span, 1);
    EXPECT_EQ(p->outcomes[2].span, 0);
    EXPECT_EQ(p->end, 110);
    EXPECT_EQ(p->events, 7u);   // 4 arrivals, 3 departures
    EXPECT_EQ(p->samples, 6u);  // instants 0, 1, 2, 3, 100, 110
    // (24*100 + 16*10 + 8*10) GPU-seconds over 32 GPUs * 110 s.
    EXPECT_DOUBLE_EQ(p->utilisation, 2640.0 / 3520.0);
  }
}

TEST(TraceSimulator, ProgressLinesEveryNEvents) {
  auto trace = trace_of(event(0, "a", 10, 1, 8, "leaf") + "\n" + event(0, "b", 10, 1, 8, "leaf") + "\n");
  std::ostringstream progress;
  SimulationOptions options{.progress_every = 2, .progress = &progress};
  auto p = simulate_policy(two_leaves(), trace, SimulationPolicy::kFirstFit, options);
  ASSERT_TRUE(p.has_value());
  // 4 events: lines after the 2nd and the 4th.
  EXPECT_NE(
      progress.str().find("simulate [first-fit]: 2 events, t=0s, 2/2 jobs admitted, 2 running, 0 waiting"),
      std::string::npos)
      << progress.str();
  EXPECT_NE(progress.str().find("4 events, t=10s"), std::string::npos) << progress.str();
}

TEST(JobTrace, ParsesEventsAndSkipsBlankLines) {
  auto trace =
      trace_of(event(5, "first", 60, 2, 4, "leaf") + "\n\n" + event(0, "second", 1, 1, 1, "spine") + "\n");
  ASSERT_EQ(trace.size(), 2u);
  EXPECT_EQ(trace[0].id, "first");
  EXPECT_EQ(trace[0].where, "jobs.jsonl:1");
  EXPECT_EQ(trace[0].arrival, 5);
  EXPECT_EQ(trace[0].duration, 60);
  EXPECT_EQ(trace[0].request.name, "first");
  ASSERT_EQ(trace[0].request.pod_sets.size(), 1u);
  EXPECT_EQ(trace[0].request.pod_sets[0].count, 2);
  EXPECT_EQ(trace[0].request.pod_sets[0].per_pod.at("nvidia.com/gpu"), 4);
  EXPECT_EQ(trace[1].where, "jobs.jsonl:3");
}

TEST(JobTrace, ErrorsNameTheLine) {
  const std::string good = event(0, "ok", 10, 1, 1, "leaf") + "\n";
  EXPECT_EQ(trace_error(good + "{not json\n"), "jobs.jsonl:2: not a valid JSON object");
  EXPECT_EQ(trace_error(good + "\n" + R"({"time": 1, "job": "x", "arrive": {"podSets": [{"count": 1}]}})"),
            "jobs.jsonl:3: duration: is required");
  EXPECT_EQ(trace_error(good + good), "jobs.jsonl:2: job \"ok\" appears twice in the trace");
  EXPECT_EQ(
      trace_error(R"({"time": 1, "job": "x", "duration": 1, "arive": {}})"),
      "jobs.jsonl:1: arive: unknown key (known: time, job, arrive, duration, priority, preemptionPolicy)");
  EXPECT_EQ(trace_error(R"({"time": -1, "job": "x", "duration": 1, "arrive": {}})"),
            "jobs.jsonl:1: time: must be >= 0, got -1");
  EXPECT_EQ(trace_error(R"({"time": 0, "job": "x", "duration": 0, "arrive": {}})"),
            "jobs.jsonl:1: duration: must be > 0, got 0");
  EXPECT_EQ(trace_error(R"({"time": 0.5, "job": "x", "duration": 1, "arrive": {}})"),
            "jobs.jsonl:1: time: must be a whole number of seconds, got 0.5");
  // The job object's own errors come from the same loader as `hypertopo place --job`.
  EXPECT_NE(trace_error(good + R"({"time": 0, "job": "x", "duration": 1, "arrive": {"kind": "Pod"}})")
                .find("jobs.jsonl:2: job x: unsupported job kind 'Pod'"),
            std::string::npos);
}

TEST(TraceSimulator, InconsistentRequestNamesTheTraceLine) {
  auto trace = trace_of(event(0, "ok", 10, 1, 1, "leaf") + "\n" + event(1, "bad", 10, 1, 1, "rack") + "\n");
  auto report = simulate_trace(two_leaves(), trace, {});
  ASSERT_FALSE(report.has_value());
  EXPECT_EQ(report.error().message().rfind("jobs.jsonl:2: ", 0), 0u) << report.error().message();
  EXPECT_NE(report.error().message().find("rack"), std::string::npos) << report.error().message();
}

TEST(TraceSimulator, NoGpuResourceIsAnError) {
  auto trace = trace_of(event(0, "ok", 10, 1, 1, "leaf") + "\n");
  auto report = simulate_trace(two_leaves(), trace, {.gpu_resource = "amd.com/gpu"});
  ASSERT_FALSE(report.has_value());
  EXPECT_EQ(report.error().message(), "no node offers amd.com/gpu");
}

// A node failure in the trace: the lost pods move inside the job's constraint domain when it has
// room, else the job is interrupted, loses what it ran and queues again; first fit moves them to
// the first nodes with room wherever they are.
//   t=0  j1 2x4 GPUs, required leaf: both policies put both pods on n1 (one node holds them).
//   t=0  j2 1x8 GPUs, required leaf: engine n2 (leaf-a, the tighter domain); first fit n2.
//   t=10 n1 fails. Engine: leaf-a has no room (n2 is full) -> j1 interrupted, 2 pods x 4 GPUs x 10 s
//        lost, and it starts again at once in leaf-b (n3). First fit: both pods move to n3.
//   t=20 n1 recovers (nothing changes); t=100 j2 leaves, t=110 j1 leaves (engine), t=100 (first fit).
TEST(TraceSimulator, ANodeFailureMovesPodsInsideTheDomainOrInterruptsTheJob) {
  std::istringstream in(event(0, "j1", 100, 2, 4, "leaf") + "\n" + event(0, "j2", 100, 1, 8, "leaf") + "\n" +
                        R"({"time": 10, "node": "n1", "event": "fail"})" + "\n" +
                        R"({"time": 20, "node": "n1", "event": "recover"})" + "\n");
  std::vector<NodeEvent> nodes;
  auto trace = parse_trace(in, "jobs.jsonl", {}, &nodes);
  ASSERT_TRUE(trace.has_value()) << trace.error().message();
  ASSERT_EQ(trace->size(), 2u);
  ASSERT_EQ(nodes.size(), 2u);
  auto report = simulate_trace(two_leaves(), *trace, {}, nodes);
  ASSERT_TRUE(report.has_value()) << report.error().message();
  const PolicyReport& engine = policy(*report, "topology-aware");
  const PolicyReport& ff = policy(*report, "first-fit");
  EXPECT_EQ(engine.node_failures, 1u);
  EXPECT_EQ(engine.pods_lost, 2u);
  EXPECT_EQ(engine.jobs_interrupted, 1u);
  EXPECT_DOUBLE_EQ(engine.gpu_seconds_lost, 80.0);
  EXPECT_EQ(engine.admitted, 2u);
  EXPECT_EQ(engine.end, 110);
  EXPECT_EQ(ff.pods_lost, 2u);
  EXPECT_EQ(ff.pods_replaced, 2u);
  EXPECT_EQ(ff.jobs_interrupted, 0u);
  EXPECT_EQ(ff.end, 100);
  // Without a place to replay them, node events are an error naming the line; a bad one too.
  std::istringstream plain(R"({"time": 10, "node": "n1", "event": "fail"})");
  auto refused = parse_trace(plain, "jobs.jsonl", {});
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().message(), "jobs.jsonl:1: node events are replayed by simulate only");
  std::istringstream bad(R"({"time": 10, "node": "n1", "event": "explode"})");
  auto wrong = parse_trace(bad, "jobs.jsonl", {}, &nodes);
  ASSERT_FALSE(wrong.has_value());
  EXPECT_EQ(wrong.error().message(), "jobs.jsonl:1: event: must be fail or recover, got \"explode\"");
}

// A job whose pods on the failed node find room inside its domain keeps running there.
TEST(TraceSimulator, ANodeFailureWithRoomInTheLeafMovesThePodsThere) {
  std::istringstream in(event(0, "j1", 100, 2, 4, "leaf") + "\n" +
                        R"({"time": 10, "node": "n1", "event": "fail"})" + "\n");
  std::vector<NodeEvent> nodes;
  auto trace = parse_trace(in, "jobs.jsonl", {}, &nodes);
  ASSERT_TRUE(trace.has_value());
  auto report = simulate_trace(two_leaves(), *trace, {}, nodes);
  ASSERT_TRUE(report.has_value()) << report.error().message();
  const PolicyReport& engine = policy(*report, "topology-aware");
  EXPECT_EQ(engine.pods_replaced, 2u);
  EXPECT_EQ(engine.jobs_interrupted, 0u);
  EXPECT_EQ(engine.end, 100);
}

}  // namespace
}  // namespace hypertopo::scheduler

namespace hypertopo::scheduler {
namespace {

// The same event with a priority (and a preemption policy).
std::string with_priority(const std::string& event_text, int priority, const std::string& policy = "") {
  std::string extra = R"("priority": )" + std::to_string(priority) + ", ";
  if (!policy.empty()) extra += R"("preemptionPolicy": ")" + policy + R"(", )";
  return "{" + extra + event_text.substr(1);
}

TEST(TraceSimulatorPreemption, TheGangTakesOneLeafWhereFirstFitEvictsTheCheapestPodsAcrossLeaves) {
  // t=0  four 1x8 GPU jobs fill n1..n4 in that order for both policies: lo1 (priority 0) on n1,
  //      lo2 (10) on n2, lo3 (0) on n3, lo4 (10) on n4.
  // t=10 a priority-1000 gang of 2x8 GPUs required in one leaf arrives on the full cluster.
  //      topology-aware: one leaf, either costs the same (highest victim priority 10, two pods
  //      alone) -> leaf-a in tree order: lo1 and lo2 evicted, span 1, one victim domain.
  //      first fit, pod by pod: the cheapest victim each time is a priority-0 pod: lo1 on n1, then
  //      lo3 on n3 -> span 2 (the spine), two victim domains.
  //      Either way two jobs are broken, 2 x 8 GPUs x 10 s = 160 GPU-seconds lost; they queue again
  //      and restart at t=110, when the gang leaves.
  const std::string text = with_priority(event(0, "lo1", 1000, 1, 8, "leaf"), 0) + "\n" +
                           with_priority(event(0, "lo2", 1000, 1, 8, "leaf"), 10) + "\n" +
                           with_priority(event(0, "lo3", 1000, 1, 8, "leaf"), 0) + "\n" +
                           with_priority(event(0, "lo4", 1000, 1, 8, "leaf"), 10) + "\n" +
                           with_priority(event(10, "gang", 100, 2, 8, "leaf"), 1000) + "\n";
  auto trace = trace_of(text);
  ASSERT_EQ(trace.size(), 5u);
  EXPECT_EQ(trace[4].priority, 1000);
  auto index = two_leaves();
  auto report = simulate_trace(index, trace, {});
  ASSERT_TRUE(report.has_value()) << report.error().message();
  const PolicyReport& engine = policy(*report, "topology-aware");
  const PolicyReport& ff = policy(*report, "first-fit");
  for (const PolicyReport* p : {&engine, &ff}) {
    EXPECT_EQ(p->admitted, 5u) << p->policy;
    EXPECT_EQ(p->outcomes[4].start, 10) << p->policy;  // no wait: it preempted
    EXPECT_EQ(p->preemptions, 1u) << p->policy;
    EXPECT_EQ(p->victim_pods, 2u) << p->policy;
    EXPECT_EQ(p->victim_jobs, 2u) << p->policy;
    EXPECT_DOUBLE_EQ(p->preemption_gpu_seconds_lost, 160.0) << p->policy;
  }
  EXPECT_EQ(engine.outcomes[4].span, 1);
  EXPECT_EQ(ff.outcomes[4].span, 2);
  EXPECT_DOUBLE_EQ(engine.victim_domains_mean, 1.0);
  EXPECT_DOUBLE_EQ(ff.victim_domains_mean, 2.0);
  // The caller's index is untouched.
  EXPECT_EQ(index.domain_used(index.root(), "nvidia.com/gpu"), 0);
}

TEST(TraceSimulatorPreemption, NeverAndEqualPrioritiesEvictNothingAndWaitInPriorityOrder) {
  // The cluster full of priority-10 jobs until t=1000. At t=10 a priority-10 gang (equal) and a
  // priority-1000 gang with preemptionPolicy Never arrive: neither preempts; at t=1000 the queue
  // starts the priority-1000 one first although it came second.
  const std::string text = with_priority(event(0, "a", 1000, 4, 8, "spine"), 10) + "\n" +
                           with_priority(event(10, "equal", 100, 2, 8, "leaf"), 10) + "\n" +
                           with_priority(event(20, "polite", 100, 4, 8, "spine"), 1000, "Never") + "\n";
  auto trace = trace_of(text);
  ASSERT_EQ(trace.size(), 3u);
  EXPECT_TRUE(trace[2].preempt_never);
  auto index = two_leaves();
  auto report = simulate_trace(index, trace, {});
  ASSERT_TRUE(report.has_value()) << report.error().message();
  for (const PolicyReport& p : report->policies) {
    EXPECT_EQ(p.preemptions, 0u) << p.policy;
    EXPECT_EQ(p.victim_pods, 0u) << p.policy;
    EXPECT_EQ(p.outcomes[2].start, 1000) << p.policy;  // the higher priority first
    EXPECT_EQ(p.outcomes[1].start, 1100) << p.policy;  // then the equal one, when it leaves
  }
}

TEST(TraceSimulatorPreemption, PriorityKeysAreCheckedAndNamed) {
  EXPECT_NE(
      trace_error(with_priority(event(0, "j", 10, 1, 1, "leaf"), 0, "Sometimes")).find("preemptionPolicy"),
      std::string::npos);
  const std::string big = R"({"priority": 3000000000, )" + event(0, "j", 10, 1, 1, "leaf").substr(1);
  const std::string message = trace_error(big);
  EXPECT_NE(message.find("jobs.jsonl:1"), std::string::npos) << message;
  EXPECT_NE(message.find("priority"), std::string::npos) << message;
}

}  // namespace
}  // namespace hypertopo::scheduler
