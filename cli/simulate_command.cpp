// `hypertopo simulate`: replays a job trace with the topology-aware engine and a first-fit baseline
// and prints placement quality side by side.
#include <iostream>

#include "cli/cluster_input.h"
#include "cli/command_errors.h"
#include "cli/commands.h"
#include "scheduler/simulate/simulation_session.h"
#include "text/terminal_safe.h"

namespace hypertopo::cli {

void add_simulate_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "simulate",
      "Replay job arrivals and departures (JSON Lines trace) with the topology-aware placement engine and a "
      "topology-unaware first-fit baseline; report admissions, waiting time, tier span per job and GPU "
      "fragmentation side by side");
  auto in = std::make_shared<scheduler::SimulateInputs>();
  auto format = std::make_shared<std::string>("text");
  auto pods = std::make_shared<std::string>();
  auto config = std::make_shared<std::string>();
  in->progress_every = 10000;
  cmd->add_option("--nodes", in->nodes, "kubectl get nodes -o json output; default: the cluster's Nodes")
      ->check(CLI::ExistingFile);
  cmd->add_option("--topology", in->topology,
                  "HyperNode list (kubectl get hn -o json) or a Kueue Topology; default: the cluster's "
                  "HyperNodes, else its one Kueue Topology")
      ->check(CLI::ExistingFile);
  cmd->add_option(
         "--trace", in->trace,
         "JSON Lines, one arrival per line: {\"time\": s, \"job\": id, \"duration\": s, \"arrive\": <job "
         "object as place --job reads>} (docs/simulate.md)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--pods", *pods,
                  "kubectl get pods -A -o json output: bound pods stay used for the whole replay; default, "
                  "when the cluster is read: its Pods")
      ->check(CLI::ExistingFile);
  auto cluster = std::make_shared<ClusterFlags>();
  cmd->add_option("--kubeconfig", cluster->kubeconfig, kReadKubeconfigHelp);
  cmd->add_option("--context", cluster->context, kReadContextHelp);
  cmd->add_option("--scheduler-config", *config, "volcano-scheduler.conf or its ConfigMap (binpack weights)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--fabric-health", in->fabric_health,
                  "prefer-healthy (default), exclude or ignore: how the topology-aware engine treats "
                  "FabricDegraded HyperNodes and nodes with a degraded own link (overrides "
                  "hypertopo.fabricHealth of --scheduler-config)");
  cmd->add_option("--resource", in->gpu_resource,
                  "the GPU resource to measure (default: nvidia.com/gpu, else amd.com/gpu)");
  cmd->add_option("--progress-every", in->progress_every,
                  "print a progress line to stderr every N events per policy (0: never)")
      ->capture_default_str();
  cmd->add_option("-o,--output", *format, "text (side-by-side table) or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->callback([&action, in, format, pods, config, cluster] {
    action = [in, format, pods, config, cluster]() -> int {
      if (!pods->empty()) in->pods = *pods;
      if (!config->empty()) in->scheduler_config = *config;
      auto live = read_cluster_inputs(in->nodes.empty() ? "--nodes" : "--topology", *cluster,
                                      {.nodes = in->nodes.empty(),
                                       .pods = pods->empty(),
                                       .topology = in->topology.empty(),
                                       .priority_classes = false});
      if (!live) return report_error("simulate", live.error().message, live.error().exit_code);
      in->cluster = *live;
      in->progress = &std::cerr;
      auto run = scheduler::run_simulation(*in);
      if (!run) return report_error("simulate", run.error(), kExitInvalid);
      for (const auto& w : run->warnings)
        std::cerr << "hypertopo simulate: warning: " << text::terminal_safe(w) << "\n";
      std::cout << scheduler::render_simulation(*run, *format);
      return 0;
    };
  });
}

}  // namespace hypertopo::cli
