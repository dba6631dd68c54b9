#include "scheduler/simulate/simulation_session.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "io/json_writer.h"
#include "io/object_reader.h"
#include "scheduler/config/volcano_config.h"
#include "scheduler/input/cluster_loader.h"
#include "scheduler/input/cluster_snapshot.h"

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;

std::string fixed(double v, int digits = 2) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

json policy_json(const PolicyReport& p) {
  json out = {
      {"policy", p.policy},
      {"jobs", p.jobs},
      {"admitted", p.admitted},
      {"neverAdmitted", p.never_admitted},
      {"waitMeanSeconds", p.wait_mean},
      {"waitMaxSeconds", p.wait_max},
      {"tierSpanMean", p.span_mean},
      {"tierSpanMax", p.span_max},
      {"utilisation", p.utilisation},
      {"endSeconds", p.end},
      {"events", p.events},
      {"samples", p.samples},
      {"nodeFailures", p.node_failures},
      {"podsLost", p.pods_lost},
      {"podsReplaced", p.pods_replaced},
      {"jobsInterrupted", p.jobs_interrupted},
      {"gpuHoursLost", p.gpu_seconds_lost / 3600.0},
      {"preemptions", p.preemptions},
      {"victimPods", p.victim_pods},
      {"victimJobs", p.victim_jobs},
      {"victimsPerPreemption",
       p.preemptions > 0 ? static_cast<double>(p.victim_pods) / static_cast<double>(p.preemptions) : 0.0},
      {"victimDomainsPerPreemption", p.victim_domains_mean},
      {"preemptionGpuHoursLost", p.preemption_gpu_seconds_lost / 3600.0}};
  json spans = json::object();
  for (const auto& [tier, jobs] : p.jobs_per_span) spans[std::to_string(tier)] = jobs;
  out["jobsPerSpanTier"] = spans;
  out["fragmentation"] = json::array();
  for (const auto& f : p.fragmentation) {
    out["fragmentation"].push_back({{"tier", f.tier},
                                    {"tierName", f.tier_name},
                                    {"strandedFreeMean", f.stranded_free_mean},
                                    {"strandedFreeMax", f.stranded_free_max},
                                    {"largestFreeBlockMean", f.largest_free_block_mean},
                                    {"largestFreeBlockMin", f.largest_free_block_min}});
  }
  json never = json::array();
  for (const auto& o : p.outcomes) {
    if (o.start < 0) never.push_back({{"job", o.id}, {"reason", o.reason}});
  }
  out["neverAdmittedJobs"] = never;
  return out;
}

std::string render_json(const SimulationRun& run) {
  const SimulationReport& r = run.report;
  json out = {{"trace", run.trace},
              {"cluster", {{"nodes", r.nodes}, {"gpus", r.gpus}, {"gpuResource", r.gpu_resource}}}};
  json tiers = json::array();
  for (std::size_t t = 0; t < r.tier_names.size(); ++t)
    tiers.push_back({{"tier", t}, {"name", r.tier_names[t]}});
  out["cluster"]["tiers"] = tiers;
  out["policies"] = json::array();
  for (const auto& p : r.policies) out["policies"].push_back(policy_json(p));
  return io::json_text(out, 2) + "\n";
}

std::string render_text(const SimulationRun& run) {
  const SimulationReport& r = run.report;
  std::ostringstream out;
  out << "trace " << run.trace << ": " << (r.policies.empty() ? 0 : r.policies.front().jobs) << " jobs on "
      << r.nodes << " nodes, " << r.gpus << " " << r.gpu_resource << "; tiers";
  for (std::size_t t = 1; t < r.tier_names.size(); ++t) out << " " << t << "=" << r.tier_names[t];
  out << " (span " << r.max_tier + 1 << " = whole cluster)\n";
  constexpr int kLabel = 46, kColumn = 16;
  auto row = [&](const std::string& label, auto cell) {
    std::string line = label;
    line.resize(kLabel, ' ');
    for (const auto& p : r.policies) {
      std::string c = cell(p);
      line += std::string(c.size() < kColumn ? kColumn - c.size() : 1, ' ') + c;
    }
    out << line << "\n";
  };
  row("", [](const PolicyReport& p) { return p.policy; });
  row("jobs admitted",
      [](const PolicyReport& p) { return std::to_string(p.admitted) + "/" + std::to_string(p.jobs); });
  row("never admitted", [](const PolicyReport& p) { return std::to_string(p.never_admitted); });
  row("waiting time mean / max (s)",
      [](const PolicyReport& p) { return fixed(p.wait_mean, 1) + " / " + std::to_string(p.wait_max); });
  row("tier span per job mean / max",
      [](const PolicyReport& p) { return fixed(p.span_mean) + " / " + std::to_string(p.span_max); });
  for (int t = 0; t <= r.max_tier + 1; ++t) {
    row("  jobs spanning tier " + std::to_string(t), [t](const PolicyReport& p) {
      auto it = p.jobs_per_span.find(t);
      return std::to_string(it == p.jobs_per_span.end() ? 0 : it->second);
    });
  }
  for (std::size_t t = 0; t < r.tier_names.size(); ++t) {
    row("stranded free GPUs, tier " + std::to_string(t) + " " + r.tier_names[t] + " (mean/max)",
        [t](const PolicyReport& p) {
          const auto& f = p.fragmentation[t];
          return fixed(f.stranded_free_mean, 1) + " / " + std::to_string(f.stranded_free_max);
        });
  }
  for (std::size_t t = 0; t < r.tier_names.size(); ++t) {
    row("largest free block, tier " + std::to_string(t) + " " + r.tier_names[t] + " (mean/min)",
        [t](const PolicyReport& p) {
          const auto& f = p.fragmentation[t];
          return fixed(f.largest_free_block_mean, 1) + " / " + std::to_string(f.largest_free_block_min);
        });
  }
  row("GPU utilisation", [](const PolicyReport& p) { return fixed(100.0 * p.utilisation, 1) + "%"; });
  if (!r.policies.empty() && r.policies.front().node_failures > 0) {
    row("node failures / pods lost / pods replaced", [](const PolicyReport& p) {
      return std::to_string(p.node_failures) + " / " + std::to_string(p.pods_lost) + " / " +
             std::to_string(p.pods_replaced);
    });
    row("jobs interrupted / GPU-hours lost", [](const PolicyReport& p) {
      return std::to_string(p.jobs_interrupted) + " / " + fixed(p.gpu_seconds_lost / 3600.0, 2);
    });
  }
  if (std::ranges::any_of(r.policies,
                          [](const PolicyReport& p) { return p.preemptions > 0 || p.victim_pods > 0; })) {
    row("preemptions / victim pods / jobs broken", [](const PolicyReport& p) {
      return std::to_string(p.preemptions) + " / " + std::to_string(p.victim_pods) + " / " +
             std::to_string(p.victim_jobs);
    });
    row("victims per preemption / lowest domains", [](const PolicyReport& p) {
      const double per =
          p.preemptions > 0 ? static_cast<double>(p.victim_pods) / static_cast<double>(p.preemptions) : 0.0;
      return fixed(per, 2) + " / " + fixed(p.victim_domains_mean, 2);
    });
    row("GPU-hours lost to preemption",
        [](const PolicyReport& p) { return fixed(p.preemption_gpu_seconds_lost / 3600.0, 2); });
  }
  row("last departure (s)", [](const PolicyReport& p) { return std::to_string(p.end); });
  row("events / fragmentation samples",
      [](const PolicyReport& p) { return std::to_string(p.events) + " / " + std::to_string(p.samples); });
  for (const auto& p : r.policies) {
    for (const auto& o : p.outcomes) {
      if (o.start < 0) out << p.policy << ": job " << o.id << " never admitted: " << o.reason << "\n";
    }
  }
  return out.str();
}

}  // namespace

std::expected<SimulationRun, Error> run_simulation(const SimulateInputs& in) {
  io::ObjectLedger ledger;  // objects of kinds no flag reads, named in a warning
  // A kind no file gives comes from the cluster, when one was read.
  const ClusterSnapshot* cluster = in.cluster.get();
  auto nodes = in.nodes.empty() && cluster && cluster->has_nodes
                   ? std::expected<std::vector<NodeSpec>, Error>(cluster->nodes)
                   : load_nodes(in.nodes, &ledger);
  if (!nodes) return std::unexpected(nodes.error());
  std::vector<BoundPod> pods;
  if (in.pods) {
    auto p = load_pods(*in.pods, &ledger);
    if (!p) return std::unexpected(p.error());
    pods = std::move(*p);
  } else if (cluster && cluster->has_pods) {
    pods = bound_pods(*cluster);
  }
  auto topology = in.topology.empty() && cluster && cluster->has_topology
                      ? std::expected<TopologySource, Error>(cluster->topology)
                      : load_topology(in.topology, &ledger);
  if (!topology) return std::unexpected(topology.error());
  SimulationOptions options;
  std::vector<std::string> warnings = ledger.warnings();
  options.gpu_resource = in.gpu_resource;
  options.progress_every = in.progress_every;
  options.progress = in.progress;
  if (in.scheduler_config) {
    auto config = load_scheduler_config_file(*in.scheduler_config);
    if (!config) return std::unexpected(config.error());
    options.weights = config->binpack;
    options.fabric_health = config->fabric_health;
    warnings.insert(warnings.end(), config->warnings.begin(), config->warnings.end());
  }
  if (!in.fabric_health.empty()) {
    auto mode = parse_fabric_health_mode(in.fabric_health);
    if (!mode) {
      return fail(ErrorCode::kInvalidArgument, std::string("--fabric-health must be ") + kFabricHealthModes +
                                                   ", got '" + in.fabric_health + "'");
    }
    options.fabric_health = *mode;
  }
  std::vector<NodeEvent> node_events;
  auto trace = load_trace(in.trace, *nodes, &node_events);
  if (!trace) return std::unexpected(trace.error());
  auto index = build_index(*topology, std::move(*nodes), pods);
  if (!index) return std::unexpected(index.error().context("while building the topology index"));
  auto report = simulate_trace(*index, *trace, options, node_events);
  if (!report) return std::unexpected(report.error());
  return SimulationRun{std::move(*report), in.trace.string(), std::move(warnings)};
}

std::string render_simulation(const SimulationRun& run, const std::string& format) {
  return format == "json" ? render_json(run) : render_text(run);
}

}  // namespace hypertopo::scheduler
