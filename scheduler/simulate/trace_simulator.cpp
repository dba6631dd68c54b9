#include "scheduler/simulate/trace_simulator.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <queue>
#include <set>

#include "scheduler/index/node_affinity.h"
#include "scheduler/placement/nearest_room.h"
#include "scheduler/placement/placement_engine.h"
#include "scheduler/placement/victim_planner.h"

namespace hypertopo::scheduler {

const char* to_string(SimulationPolicy policy) {
  return policy == SimulationPolicy::kTopologyAware ? "topology-aware" : "first-fit";
}

namespace {

// One policy on its own copy of the index. Both policies return the engine's JobPlacement shape so
// the replay, the span and the release are the same code for both.
class Placer {
 public:
  explicit Placer(const TopologyIndex& index) : index_(std::make_unique<TopologyIndex>(index)) {}
  virtual ~Placer() = default;
  Placer(const Placer&) = delete;
  Placer& operator=(const Placer&) = delete;

  // fit = false (index unchanged) when the job does not fit now.
  virtual std::expected<JobPlacement, Error> place(const JobRequest& job) = 0;

  void release(const JobRequest& job, const JobPlacement& placement) {
    for (std::size_t i = 0; i < placement.pod_sets.size() && i < job.pod_sets.size(); ++i) {
      for (const auto& a : placement.pod_sets[i].assignment) {
        (void)index_->add_pods(a.node, job.pod_sets[i].per_pod, -a.count);
      }
    }
  }
  const TopologyIndex& index() const { return *index_; }
  TopologyIndex& index() { return *index_; }

 protected:
  std::unique_ptr<TopologyIndex> index_;  // on the heap: the engine keeps a reference to it
};

class EnginePlacer final : public Placer {
 public:
  EnginePlacer(const TopologyIndex& index, const BinpackWeights& weights, FabricHealthMode health)
      : Placer(index), engine_(*index_, weights, health) {}
  std::expected<JobPlacement, Error> place(const JobRequest& job) override { return engine_.place(job); }

 private:
  PlacementEngine engine_;
};

// The topology-unaware baseline: nodes in name order, each filled before the next.
class FirstFitPlacer final : public Placer {
 public:
  explicit FirstFitPlacer(const TopologyIndex& index) : Placer(index), order_(index.nodes().size()) {
    std::iota(order_.begin(), order_.end(), 0);
    std::ranges::sort(order_,
                      [&](int a, int b) { return index.node(a).spec.name < index.node(b).spec.name; });
  }

  std::expected<JobPlacement, Error> place(const JobRequest& job) override {
    JobPlacement out;
    out.fit = true;
    for (const auto& ps : job.pod_sets) {
      PodSetPlacement p;
      p.name = ps.name;
      std::int64_t remaining = ps.count;
      if (auto request = dense_request(ps)) {
        for (int n : order_) {
          if (remaining == 0) break;
          const std::int64_t take = std::min(remaining, pods_that_fit(n, ps, *request));
          if (take <= 0) continue;
          (void)index_->add_pods(n, ps.per_pod, take);
          NodeAssignment a;
          a.node = n;
          a.node_name = index_->node(n).spec.name;
          a.count = static_cast<std::int32_t>(take);
          a.first_rank = p.placed;
          p.placed += a.count;
          p.assignment.push_back(std::move(a));
          remaining -= take;
        }
      }
      p.fit = remaining == 0;
      out.pod_sets.push_back(std::move(p));
      if (remaining > 0) {
        out.fit = false;
        out.reason = "first fit: " + std::to_string(out.pod_sets.back().placed) + " of " +
                     std::to_string(ps.count) + " pods of pod set " + ps.name + " fit";
        release(job, out);  // all pods of the job or none
        for (auto& placed : out.pod_sets) placed.assignment.clear();
        return out;
      }
    }
    return out;
  }

 private:
  // (resource id, amount per pod), `pods: 1` included; nullopt when no node offers a resource.
  std::optional<std::vector<std::pair<int, std::int64_t>>> dense_request(const PodSetRequest& ps) const {
    std::vector<std::pair<int, std::int64_t>> dense;
    for (const auto& [name, amount] : ps.per_pod) {
      if (amount <= 0 || name == "pods") continue;
      const int r = index_->resource_id(name);
      if (r < 0) return std::nullopt;
      dense.emplace_back(r, amount);
    }
    dense.emplace_back(index_->resource_id("pods"), 1);
    return dense;
  }

  std::int64_t pods_that_fit(int node, const PodSetRequest& ps,
                             const std::vector<std::pair<int, std::int64_t>>& request) const {
    const NodeSpec& spec = index_->node(node).spec;
    if (!spec.ready || spec.unschedulable ||
        !check_node_constraints(spec, ps.node_selector, ps.affinity, ps.tolerations).passed()) {
      return 0;
    }
    std::int64_t fit = std::numeric_limits<std::int64_t>::max();
    for (const auto& [r, amount] : request) {
      const std::int64_t free = index_->node_allocatable(node, r) - index_->node_used(node, r);
      fit = std::min(fit, free <= 0 ? 0 : free / amount);
    }
    return fit;
  }

  std::vector<int> order_;
};

std::unique_ptr<Placer> make_placer(SimulationPolicy policy, const TopologyIndex& index,
                                    const SimulationOptions& options) {
  if (policy == SimulationPolicy::kTopologyAware)
    return std::make_unique<EnginePlacer>(index, options.weights, options.fabric_health);
  return std::make_unique<FirstFitPlacer>(index);
}

std::expected<std::string, Error> resolve_gpu_resource(const TopologyIndex& index, const std::string& asked) {
  if (!asked.empty()) {
    if (index.resource_id(asked) < 0) return fail(ErrorCode::kInvalidArgument, "no node offers " + asked);
    return asked;
  }
  for (const char* name : {"nvidia.com/gpu", "amd.com/gpu"}) {
    if (index.resource_id(name) >= 0) return std::string(name);
  }
  return fail(ErrorCode::kInvalidArgument,
              "no node offers nvidia.com/gpu or amd.com/gpu; name the GPU resource to measure");
}

std::string tier_label(const TopologyIndex& index, int tier) {
  if (tier == 0) return "node";
  std::string name = index.tier_name(tier);
  return name.empty() ? "tier " + std::to_string(tier) : name;
}

// The tier of the lowest domain holding every node in `nodes` (0 for a single node).
int tier_span(const TopologyIndex& index, const std::vector<int>& nodes) {
  if (nodes.empty()) return 0;
  if (std::ranges::all_of(nodes, [&](int n) { return n == nodes.front(); })) return 0;
  int common = index.node(nodes.front()).domain;
  for (int n : nodes) {
    std::vector<int> ancestors;  // of `common`, itself included; a handful of tiers deep
    for (int d = common; d >= 0; d = index.domain(d).parent) ancestors.push_back(d);
    int d = index.node(n).domain;
    while (d >= 0 && std::ranges::find(ancestors, d) == ancestors.end()) d = index.domain(d).parent;
    common = d < 0 ? index.root() : d;
  }
  return index.domain(common).tier;
}

// Samples stranded free GPUs and the largest free block per tier and keeps their sums.
class FragmentationSampler {
 public:
  FragmentationSampler(const TopologyIndex& index, int gpu) : gpu_(gpu), by_tier_(index.max_tier() + 1) {
    for (std::size_t d = 0; d < index.domains().size(); ++d) {
      const int tier = index.domain(static_cast<int>(d)).tier;
      if (tier >= 1 && tier <= index.max_tier())
        by_tier_[static_cast<std::size_t>(tier)].push_back(static_cast<int>(d));
    }
    for (int t = 0; t <= index.max_tier(); ++t) {
      TierFragmentation f;
      f.tier = t;
      f.tier_name = tier_label(index, t);
      f.largest_free_block_min = std::numeric_limits<std::int64_t>::max();
      tiers_.push_back(f);
    }
    stranded_sum_.assign(tiers_.size(), 0);
    largest_sum_.assign(tiers_.size(), 0);
  }

  void sample(const TopologyIndex& index) {
    ++samples_;
    for (std::size_t t = 0; t < tiers_.size(); ++t) {
      std::int64_t stranded = 0, largest = 0;
      auto count = [&](std::int64_t alloc, std::int64_t used) {
        const std::int64_t free = std::max<std::int64_t>(alloc - used, 0);
        if (used > 0 && free > 0) stranded += free;
        largest = std::max(largest, free);
      };
      if (gpu_ >= 0 && t == 0) {
        for (std::size_t n = 0; n < index.nodes().size(); ++n) {
          const int node = static_cast<int>(n);
          count(index.node_allocatable(node, gpu_), index.node_used(node, gpu_));
        }
      } else if (gpu_ >= 0) {
        for (int d : by_tier_[t]) count(index.domain_allocatable(d, gpu_), index.domain_used(d, gpu_));
      }
      stranded_sum_[t] += static_cast<double>(stranded);
      largest_sum_[t] += static_cast<double>(largest);
      tiers_[t].stranded_free_max = std::max(tiers_[t].stranded_free_max, stranded);
      tiers_[t].largest_free_block_min = std::min(tiers_[t].largest_free_block_min, largest);
    }
  }

  std::vector<TierFragmentation> result() const {
    std::vector<TierFragmentation> out = tiers_;
    for (std::size_t t = 0; t < out.size(); ++t) {
      if (samples_ == 0) {
        out[t].largest_free_block_min = 0;
        continue;
      }
      out[t].stranded_free_mean = stranded_sum_[t] / static_cast<double>(samples_);
      out[t].largest_free_block_mean = largest_sum_[t] / static_cast<double>(samples_);
    }
    return out;
  }
  std::size_t samples() const { return samples_; }

 private:
  int gpu_;
  std::vector<std::vector<int>> by_tier_;
  std::vector<TierFragmentation> tiers_;
  std::vector<double> stranded_sum_, largest_sum_;
  std::size_t samples_ = 0;
};

struct Departure {
  std::int64_t end;
  std::size_t seq;  // start order breaks ties, so the replay is deterministic
  std::size_t job;
  bool operator>(const Departure& o) const { return end != o.end ? end > o.end : seq > o.seq; }
};

// A node for one lost pod of `ps`: Ready, schedulable, passing the pod's node constraints, with
// room; the nodes of `limit`'s subtree searched from `start` outwards (nearest first), or, with
// limit < 0, every node in name order (the first-fit baseline). -1: none.
int replacement_node(const TopologyIndex& index, const PodSetRequest& ps, int start, int limit) {
  auto fits = [&](int n) {
    const NodeSpec& spec = index.node(n).spec;
    if (!spec.ready || spec.unschedulable ||
        !check_node_constraints(spec, ps.node_selector, ps.affinity, ps.tolerations).passed())
      return false;
    for (const auto& [name, amount] : ps.per_pod) {
      if (amount <= 0 || name == "pods") continue;
      const int r = index.resource_id(name);
      if (r < 0 || index.node_allocatable(n, r) - index.node_used(n, r) < amount) return false;
    }
    const int pods = index.resource_id("pods");
    return pods < 0 || index.node_allocatable(n, pods) - index.node_used(n, pods) >= 1;
  };
  if (limit < 0) {
    std::vector<int> order(index.nodes().size());
    std::iota(order.begin(), order.end(), 0);
    std::ranges::sort(order, [&](int a, int b) { return index.node(a).spec.name < index.node(b).spec.name; });
    for (int n : order) {
      if (fits(n)) return n;
    }
    return -1;
  }
  // Inside the job's constraint domain, nearest first, as the extender's gang book moves a slot.
  return nearest_room(index, ps, {.start = start, .limit = limit, .usable = fits});
}

// The lowest domain holding every node of `nodes` (the root when they share none).
int common_domain(const TopologyIndex& index, const std::vector<int>& nodes) {
  int common = -1;
  for (int n : nodes) {
    const int d = index.node(n).domain;
    if (common < 0) {
      common = d;
      continue;
    }
    std::vector<int> ancestors;
    for (int a = d; a >= 0; a = index.domain(a).parent) ancestors.push_back(a);
    while (common >= 0 && std::ranges::find(ancestors, common) == ancestors.end())
      common = index.domain(common).parent;
  }
  return common < 0 ? index.root() : common;
}

}  // namespace

std::expected<PolicyReport, Error> simulate_policy(const TopologyIndex& index,
                                                   const std::vector<TraceJob>& trace,
                                                   SimulationPolicy policy, const SimulationOptions& options,
                                                   const std::vector<NodeEvent>& node_events) {
  auto gpu_name = resolve_gpu_resource(index, options.gpu_resource);
  if (!gpu_name) return std::unexpected(gpu_name.error());
  const int gpu = index.resource_id(*gpu_name);
  auto live = make_placer(policy, index, options);
  auto idle = make_placer(policy, index, options);  // stays idle: "could this job ever fit?"
  const TopologyIndex& cluster = live->index();

  PolicyReport report;
  report.policy = to_string(policy);
  report.jobs = trace.size();
  for (const auto& job : trace) report.outcomes.push_back({.id = job.id, .arrival = job.arrival});
  std::vector<std::size_t> arrivals(trace.size());
  std::iota(arrivals.begin(), arrivals.end(), 0);
  std::ranges::stable_sort(arrivals,
                           [&](std::size_t a, std::size_t b) { return trace[a].arrival < trace[b].arrival; });

  std::vector<JobPlacement> placements(trace.size());
  std::deque<std::size_t> waiting;
  std::priority_queue<Departure, std::vector<Departure>, std::greater<>> running;
  FragmentationSampler sampler(cluster, gpu);
  std::size_t started = 0;
  double gpu_seconds = 0;
  std::int64_t wait_sum = 0, span_sum = 0;
  // A job runs from its (last) start; an interrupted job's departure left in `running` is stale.
  std::vector<std::size_t> run_seq(trace.size(), 0);
  std::vector<bool> active(trace.size(), false);
  std::vector<std::int64_t> run_start(trace.size(), 0);

  const bool with_priorities = std::ranges::any_of(trace, [](const TraceJob& t) { return t.priority != 0; });
  std::vector<std::size_t> requeue;
  // A running job loses its place (a node failed under it, or it was preempted): all of it is
  // released, what it ran is lost, and it queues again.
  auto interrupt = [&](std::size_t j, std::int64_t now) -> double {
    live->release(trace[j].request, placements[j]);
    active[j] = false;
    const double gpus = static_cast<double>(report.outcomes[j].gpus);
    const double lost = gpus * static_cast<double>(now - run_start[j]);
    gpu_seconds -= gpus * static_cast<double>(run_start[j] + trace[j].duration - now);
    requeue.push_back(j);
    return lost;
  };
  std::size_t victim_domains = 0;
  std::set<int> preemption_domains;  // the lowest domains of one preemption's victims
  // Preemption for job j, which does not fit now: its placement with victims evicted, or nullopt.
  auto preempt = [&](std::size_t j, std::int64_t now) -> std::expected<std::optional<JobPlacement>, Error> {
    const TraceJob& job = trace[j];
    TopologyIndex& idx = live->index();
    preemption_domains.clear();
    // Every pod of every running job of lower priority, as a candidate victim.
    std::vector<PreemptionCandidate> candidates;
    std::vector<std::size_t> owner;
    auto collect = [&] {
      candidates.clear();
      owner.clear();
      for (std::size_t k = 0; k < trace.size(); ++k) {
        if (!active[k] || trace[k].priority >= job.priority) continue;
        std::int64_t pods = 0;
        for (const auto& p : placements[k].pod_sets) {
          for (const auto& a : p.assignment) pods += a.count;
        }
        for (std::size_t i = 0; i < placements[k].pod_sets.size() && i < trace[k].request.pod_sets.size();
             ++i) {
          for (const auto& a : placements[k].pod_sets[i].assignment) {
            for (std::int32_t c = 0; c < a.count; ++c) {
              candidates.push_back({.uid = trace[k].id + "/" + std::to_string(candidates.size()),
                                    .ns = "",
                                    .name = trace[k].id,
                                    .node = a.node,
                                    .priority = trace[k].priority,
                                    .requests = trace[k].request.pod_sets[i].per_pod,
                                    .gang = pods > 1 ? trace[k].id : std::string()});
              owner.push_back(k);
            }
          }
        }
      }
    };
    // The jobs of `victims` are interrupted; their figures counted.
    auto evict = [&](const std::vector<std::size_t>& victims) {
      std::vector<std::size_t> jobs;
      for (std::size_t v : victims) {
        jobs.push_back(owner[v]);
        preemption_domains.insert(idx.node(candidates[v].node).domain);
      }
      std::ranges::sort(jobs);
      jobs.erase(std::unique(jobs.begin(), jobs.end()), jobs.end());
      report.victim_pods += victims.size();
      report.victim_jobs += jobs.size();
      for (std::size_t k : jobs) report.preemption_gpu_seconds_lost += interrupt(k, now);
    };
    const PreemptionOptions preempting{.priority = job.priority};
    if (policy == SimulationPolicy::kTopologyAware) {
      if (job.request.pod_sets.size() != 1) return std::nullopt;
      PodSetRequest ps = job.request.pod_sets.front();
      if (job.request.mode != TopologyMode::kNone) {
        ps.mode = job.request.mode;
        ps.level = job.request.level;
      }
      collect();
      if (candidates.empty()) return std::nullopt;
      auto plan =
          plan_with_victims(idx, ps, candidates, {}, preempting, options.weights, options.fabric_health);
      if (!plan) return std::unexpected(plan.error().context(job.where));
      if (!plan->fit) return std::nullopt;
      evict(plan->victims);
      JobPlacement out;
      out.fit = true;
      out.pod_sets.push_back(plan->placement);
      return out;
    }
    // First fit: pod by pod, a free node in name order, else the cheapest node to free.
    JobPlacement out;
    out.fit = true;
    for (std::size_t i = 0; i < job.request.pod_sets.size(); ++i) {
      PodSetRequest one = job.request.pod_sets[i];
      one.count = 1;
      one.mode = TopologyMode::kNone;
      one.slices.clear();
      one.partitions.reset();
      one.min_count = 0;
      PodSetPlacement placed;
      placed.name = one.name;
      for (std::int32_t k = 0; k < job.request.pod_sets[i].count; ++k) {
        int node = replacement_node(idx, one, -1, -1);
        if (node >= 0) {
          (void)idx.add_pods(node, one.per_pod, 1);
        } else {
          collect();
          auto plan = candidates.empty() ? std::expected<PreemptionPlan, Error>(PreemptionPlan{})
                                         : plan_with_victims(idx, one, candidates, {}, preempting,
                                                             options.weights, options.fabric_health);
          if (!plan) return std::unexpected(plan.error().context(job.where));
          if (!plan->fit || plan->placement.assignment.empty()) {
            // This pod finds no room even by preempting: the job waits; its placed pods go back,
            // the evictions already made stay made.
            out.pod_sets.push_back(std::move(placed));
            live->release(job.request, out);
            return std::nullopt;
          }
          node = plan->placement.assignment.front().node;
          evict(plan->victims);
        }
        placed.assignment.push_back(
            {.node = node, .node_name = idx.node(node).spec.name, .count = 1, .first_rank = k});
        ++placed.placed;
      }
      placed.fit = true;
      out.pod_sets.push_back(std::move(placed));
    }
    return out;
  };
  auto commit = [&](std::size_t j, JobPlacement&& placement, std::int64_t now) {
    std::optional<JobPlacement> placed(std::move(placement));
    JobOutcome& o = report.outcomes[j];
    const bool restart = o.start >= 0;
    std::vector<int> nodes;
    std::int64_t gpus = 0;
    for (std::size_t i = 0; i < placed->pod_sets.size(); ++i) {
      const auto& per_pod = trace[j].request.pod_sets[i].per_pod;
      auto g = per_pod.find(*gpu_name);
      for (const auto& a : placed->pod_sets[i].assignment) {
        if (a.count <= 0) continue;
        nodes.push_back(a.node);
        if (g != per_pod.end()) gpus += g->second * a.count;
      }
    }
    placements[j] = std::move(*placed);
    run_seq[j] = started;
    active[j] = true;
    run_start[j] = now;
    running.push({now + trace[j].duration, started++, j});
    gpu_seconds += static_cast<double>(gpus) * static_cast<double>(trace[j].duration);
    if (restart) return;  // an interrupted job starting again: counted once, at its first start
    o.gpus = gpus;
    o.start = now;
    o.span = tier_span(cluster, nodes);
    ++report.admitted;
    wait_sum += now - o.arrival;
    report.wait_max = std::max(report.wait_max, now - o.arrival);
    span_sum += o.span;
    report.span_max = std::max(report.span_max, o.span);
    ++report.jobs_per_span[o.span];
  };
  auto start = [&](std::size_t j, std::int64_t now) -> std::expected<bool, Error> {
    auto placed = live->place(trace[j].request);
    if (!placed) return std::unexpected(placed.error().context(trace[j].where));
    if (!placed->fit) {
      if (!with_priorities || trace[j].preempt_never) return false;
      const std::size_t victims_before = report.victim_pods;
      auto pre = preempt(j, now);
      if (!pre) return std::unexpected(pre.error());
      if (!*pre) return false;
      if (report.victim_pods > victims_before) {
        ++report.preemptions;
        victim_domains += preemption_domains.size();
      }
      placed = std::move(**pre);
    }
    commit(j, std::move(*placed), now);
    return true;
  };
  // A node fails: the pods it held are lost. Each running job that had pods there moves them to
  // nodes with room (topology-aware: inside its constraint domain, nearest first; first fit: the
  // first nodes in name order) or, when they do not all find one, is interrupted and queues again
  // at the head (it restarts from the beginning; what it ran is lost).
  auto fail_node = [&](int node, std::int64_t now) {
    TopologyIndex& idx = live->index();
    idx.set_node_ready(node, false);
    ++report.node_failures;
    for (std::size_t j = 0; j < trace.size(); ++j) {
      if (!active[j]) continue;
      JobPlacement& placement = placements[j];
      std::vector<int> job_nodes;
      std::size_t lost_here = 0;
      for (const auto& ps : placement.pod_sets) {
        for (const auto& a : ps.assignment) {
          if (a.count <= 0) continue;
          job_nodes.push_back(a.node);
          if (a.node == node) lost_here += static_cast<std::size_t>(a.count);
        }
      }
      if (lost_here == 0) continue;
      report.pods_lost += lost_here;
      bool replaced_all = true;
      for (std::size_t i = 0; i < placement.pod_sets.size() && i < trace[j].request.pod_sets.size(); ++i) {
        const PodSetRequest& ps = trace[j].request.pod_sets[i];
        auto& assignment = placement.pod_sets[i].assignment;
        // The constraint domain: the ancestor, at the required tier, of the lowest domain holding
        // the job's pods; the root for a job without a required topology.
        int start_domain = common_domain(idx, job_nodes);
        int limit = idx.root();
        const TopologyMode mode =
            trace[j].request.mode != TopologyMode::kNone ? trace[j].request.mode : ps.mode;
        const std::string& level =
            trace[j].request.mode != TopologyMode::kNone ? trace[j].request.level : ps.level;
        if (mode == TopologyMode::kRequired && !level.empty()) {
          if (auto tier = idx.resolve_tier(level)) {
            limit = start_domain;
            for (int d = start_domain; d >= 0 && idx.domain(d).tier <= *tier; d = idx.domain(d).parent)
              limit = d;
          }
        }
        const std::size_t entries = assignment.size();
        for (std::size_t e = 0; e < entries; ++e) {
          if (assignment[e].node != node || assignment[e].count <= 0) continue;
          const std::int32_t lost = assignment[e].count;
          (void)idx.add_pods(node, ps.per_pod, -lost);
          assignment[e].count = 0;
          for (std::int32_t k = 0; k < lost; ++k) {
            const int to = policy == SimulationPolicy::kTopologyAware
                               ? replacement_node(idx, ps, start_domain, limit)
                               : replacement_node(idx, ps, -1, -1);
            if (to < 0) {
              replaced_all = false;
              break;
            }
            (void)idx.add_pods(to, ps.per_pod, 1);
            assignment.push_back({.node = to, .node_name = idx.node(to).spec.name, .count = 1});
            ++report.pods_replaced;
          }
        }
      }
      if (replaced_all) continue;
      ++report.jobs_interrupted;
      report.gpu_seconds_lost += interrupt(j, now);
    }
  };
  std::vector<std::size_t> node_order(node_events.size());
  std::iota(node_order.begin(), node_order.end(), 0);
  std::ranges::stable_sort(
      node_order, [&](std::size_t a, std::size_t b) { return node_events[a].time < node_events[b].time; });
  std::size_t next_node_event = 0;
  auto progress = [&](std::int64_t now) {
    ++report.events;
    if (options.progress == nullptr || options.progress_every == 0 ||
        report.events % options.progress_every != 0)
      return;
    *options.progress << "simulate [" << report.policy << "]: " << report.events << " events, t=" << now
                      << "s, " << report.admitted << "/" << report.jobs << " jobs admitted, "
                      << running.size() << " running, " << waiting.size() << " waiting\n";
  };

  // The queue: FIFO; with priorities, higher priority first and FIFO among equals. `head`: first
  // among its equals (an interrupted job), else last.
  auto enqueue = [&](std::size_t j, bool head) {
    if (!with_priorities) {
      if (head)
        waiting.push_front(j);
      else
        waiting.push_back(j);
      return;
    }
    auto at = std::find_if(waiting.begin(), waiting.end(), [&](std::size_t w) {
      return head ? trace[w].priority <= trace[j].priority : trace[w].priority < trace[j].priority;
    });
    waiting.insert(at, j);
  };
  std::size_t next = 0;
  const std::int64_t first = trace.empty() ? 0 : trace[arrivals.front()].arrival;
  while (next < arrivals.size() || !running.empty() || next_node_event < node_order.size()) {
    std::int64_t now = std::numeric_limits<std::int64_t>::max();
    if (next < arrivals.size()) now = trace[arrivals[next]].arrival;
    if (!running.empty()) now = std::min(now, running.top().end);
    if (next_node_event < node_order.size())
      now = std::min(now, node_events[node_order[next_node_event]].time);
    bool freed = false;
    while (!running.empty() && running.top().end == now) {
      const Departure d = running.top();
      running.pop();
      if (!active[d.job] || run_seq[d.job] != d.seq) continue;  // interrupted: left earlier
      active[d.job] = false;
      live->release(trace[d.job].request, placements[d.job]);
      freed = true;
      progress(now);
    }
    for (; next_node_event < node_order.size() && node_events[node_order[next_node_event]].time == now;
         ++next_node_event) {
      const NodeEvent& e = node_events[node_order[next_node_event]];
      const int node = cluster.find_node(e.node);
      if (node < 0)
        return fail(ErrorCode::kInvalidArgument, e.where + ": node " + e.node + " is not in --nodes");
      if (e.fail) {
        if (cluster.node(node).spec.ready) fail_node(node, now);
      } else {
        live->index().set_node_ready(node, true);
      }
      freed = true;  // a node back, or pods released: the queue may move
      progress(now);
    }
    // Interrupted jobs start again first, before the jobs that waited behind them (with priorities:
    // first among the jobs of their priority).
    for (auto it = requeue.rbegin(); it != requeue.rend(); ++it) enqueue(*it, true);
    requeue.clear();
    while (freed && !waiting.empty()) {
      auto ok = start(waiting.front(), now);
      if (!ok) return std::unexpected(ok.error());
      if (!*ok) break;
      waiting.pop_front();
    }
    for (; next < arrivals.size() && trace[arrivals[next]].arrival == now; ++next) {
      const std::size_t j = arrivals[next];
      auto probe = idle->place(trace[j].request);
      if (!probe) return std::unexpected(probe.error().context(trace[j].where));
      if (!probe->fit) {
        ++report.never_admitted;
        report.outcomes[j].reason = "does not fit the idle cluster: " + probe->reason;
      } else {
        idle->release(trace[j].request, *probe);
        bool placed_now = false;
        if (waiting.empty() || (with_priorities && trace[waiting.front()].priority < trace[j].priority)) {
          auto ok = start(j, now);
          if (!ok) return std::unexpected(ok.error());
          placed_now = *ok;
        }
        if (!placed_now) enqueue(j, false);
      }
      progress(now);
    }
    sampler.sample(cluster);
    report.end = now;
  }

  // Unreachable when placement is deterministic (the head fits the idle cluster it was probed on),
  // but a job left waiting must still be counted.
  for (std::size_t j : waiting) {
    if (report.outcomes[j].start >= 0) continue;  // interrupted, and not started again: admitted once
    ++report.never_admitted;
    report.outcomes[j].reason = "still waiting when the trace ended";
  }
  if (report.preemptions > 0)
    report.victim_domains_mean =
        static_cast<double>(victim_domains) / static_cast<double>(report.preemptions);
  report.samples = sampler.samples();
  report.fragmentation = sampler.result();
  if (report.admitted > 0) {
    report.wait_mean = static_cast<double>(wait_sum) / static_cast<double>(report.admitted);
    report.span_mean = static_cast<double>(span_sum) / static_cast<double>(report.admitted);
  }
  const double capacity = static_cast<double>(index.domain_allocatable(index.root(), gpu)) *
                          static_cast<double>(report.end - first);
  report.utilisation = capacity > 0 ? gpu_seconds / capacity : 0.0;
  return report;
}

std::expected<SimulationReport, Error> simulate_trace(const TopologyIndex& index,
                                                      const std::vector<TraceJob>& trace,
                                                      const SimulationOptions& options,
                                                      const std::vector<NodeEvent>& node_events) {
  auto gpu_name = resolve_gpu_resource(index, options.gpu_resource);
  if (!gpu_name) return std::unexpected(gpu_name.error());
  SimulationReport report;
  report.nodes = index.nodes().size();
  report.gpu_resource = *gpu_name;
  report.gpus = index.domain_allocatable(index.root(), index.resource_id(*gpu_name));
  report.max_tier = index.max_tier();
  for (int t = 0; t <= index.max_tier(); ++t) report.tier_names.push_back(tier_label(index, t));
  SimulationOptions resolved = options;
  resolved.gpu_resource = *gpu_name;
  for (auto policy : {SimulationPolicy::kTopologyAware, SimulationPolicy::kFirstFit}) {
    auto r = simulate_policy(index, trace, policy, resolved, node_events);
    if (!r) return std::unexpected(r.error());
    report.policies.push_back(std::move(*r));
  }
  return report;
}

}  // namespace hypertopo::scheduler
