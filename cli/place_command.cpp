// `hypertopo place`: where would this job land? A what-if answer from the live cluster or from
// kubectl output files (a file given overrides that kind of the cluster).
// Exit status: 0 it fits (once the victims it names leave, when it preempts), 1 it does not fit now
// (the reason is in the output), 2 the request or an input is invalid (one line on stderr naming the
// file and the field), 3 the cluster could not be read (the API server unreachable or refusing).
#include <chrono>
#include <iostream>

#include "cli/cluster_input.h"
#include "cli/command_errors.h"
#include "cli/commands.h"
#include "cli/heap_pages.h"
#include "cli/list_output.h"
#include "scheduler/input/placement_session.h"
#include "text/terminal_safe.h"

namespace hypertopo::cli {
namespace {

// -o name and -o wide print the list alone; what -o text says around it (no fit and why, the
// victims of a preemption, domains that name no node) goes to stderr, so a pipe never takes it for
// a node.
void print_placement_list(const scheduler::PlacementReport& report, const std::string& format) {
  const auto& result = report.result;
  if (!result.value("fit", false)) {
    std::cerr << "hypertopo place: no fit: " << text::terminal_safe(result.value("reason", std::string()))
              << "\n";
  }
  if (auto p = result.find("preemption"); p != result.end()) {
    std::cerr << "hypertopo place: fits after preempting "
              << p->value("victims", nlohmann::json::array()).size()
              << " pod(s) (-o text or -o json names them)\n";
  }
  if (format == "wide") {
    std::cout << placement_table(result);
    return;
  }
  std::size_t domain_only = 0;
  std::cout << placement_names(result, &domain_only);
  if (domain_only > 0) {
    std::cerr << "hypertopo place: warning: " << domain_only
              << " assignment(s) name a domain, not a node (the Topology's last level is not "
                 "kubernetes.io/hostname): -o wide or -o json gives their domains\n";
  }
}

}  // namespace

void add_place_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("place", "Place a gang job on the topology and print where its pods land");
  auto in = std::make_shared<scheduler::PlaceInputs>();
  auto format = std::make_shared<std::string>("json");
  auto timings = std::make_shared<bool>(false);
  auto pods = std::make_shared<std::string>();
  auto config = std::make_shared<std::string>();
  auto flavor = std::make_shared<std::string>();
  cmd->add_option("--nodes", in->nodes,
                  "kubectl get nodes -o json|yaml output (every file: one object, a List or several YAML "
                  "documents; kinds a flag does not read are named in a warning); default: the cluster's "
                  "Nodes")
      ->check(CLI::ExistingFile);
  cmd->add_option("--topology", in->topology,
                  "HyperNodes (kubectl get hn -o json|yaml, discover -o yaml) or a Kueue Topology; default: "
                  "the cluster's HyperNodes, else its one Kueue Topology")
      ->check(CLI::ExistingFile);
  cmd->add_option("--job", in->job,
                  "The gang: a Volcano Job, a batch/v1 Job with Kueue TAS or KAI annotations, a JobSet, a "
                  "KaiwoJob, a Kubeflow PyTorchJob or MPIJob, a LeaderWorkerSet, a KEP-5732 PodGroup (alone "
                  "or in a List with one of its "
                  "Pods), a KAI "
                  "(scheduling.run.ai) or Volcano (scheduling.volcano.sh) PodGroup in a List with its Pods "
                  "(sub-groups, subGroupPolicy) or a "
                  "PlacementRequest (docs/placement.md); or --pod-group")
      ->check(CLI::ExistingFile);
  auto pod_group = std::make_shared<std::string>();
  cmd->add_option("--pod-group", *pod_group,
                  "NAMESPACE/NAME: the gang is that PodGroup of the cluster (scheduling.k8s.io, "
                  "scheduling.volcano.sh or scheduling.run.ai) with the Pods naming it, read as the "
                  "extender reads them; instead of --job");
  cmd->add_option("--pods", *pods,
                  "kubectl get pods -A -o json output: bound pods count as used; PriorityClasses and "
                  "PodDisruptionBudgets in the same List are read for preemption; default, when the cluster "
                  "is read: its Pods and PodDisruptionBudgets")
      ->check(CLI::ExistingFile);
  auto classes = std::make_shared<std::string>();
  cmd->add_option("--priority-classes", *classes,
                  "PriorityClasses (kubectl get priorityclasses -o json, or one): resolve priorityClassName "
                  "when the job preempts; default, when the cluster is read: its PriorityClasses")
      ->check(CLI::ExistingFile);
  auto cluster = std::make_shared<ClusterFlags>();
  cmd->add_option("--kubeconfig", cluster->kubeconfig, kReadKubeconfigHelp);
  cmd->add_option("--context", cluster->context, kReadContextHelp);
  cmd->add_option("--scheduler-config", *config, "volcano-scheduler.conf or its ConfigMap")
      ->check(CLI::ExistingFile);
  cmd->add_option("--semantics", in->semantics,
                  "auto (Kueue's algorithm for a batch/v1 Job on a Kueue Topology, else the engine), "
                  "engine, or kueue (Kueue's exact algorithm)")
      ->check(CLI::IsMember({"auto", "engine", "kueue"}))
      ->capture_default_str();
  cmd->add_option("--resource-flavor", *flavor,
                  "Kueue ResourceFlavor whose spec.nodeLabels narrow the nodes (Kueue semantics)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--kueue-feature-gates", in->kueue_feature_gates,
                  "Kueue's TAS feature gates, as its --feature-gates: TASBalancedPlacement=true,...");
  cmd->add_option("--fabric-health", in->fabric_health,
                  "prefer-healthy (default), exclude or ignore: how a gang treats HyperNodes whose "
                  "FabricDegraded condition is True and nodes with a degraded own link (overrides "
                  "hypertopo.fabricHealth of --scheduler-config)");
  cmd->add_flag("--timings", *timings, "print read/parse/index/place/write times to stderr");
  cmd->add_option("-o,--output", *format,
                  "json, yaml, text, name (one node/<name> line per Node the gang lands on, in rank order, "
                  "for xargs kubectl ...) or wide (a table, one row per pod: pod set, rank, node, bound, "
                  "then its domains from the top down)")
      ->check(CLI::IsMember({"json", "yaml", "text", "name", "wide"}))
      ->capture_default_str();
  cmd->callback([&action, in, format, timings, pods, config, flavor, classes, cluster, pod_group] {
    action = [in, format, timings, pods, config, flavor, classes, cluster, pod_group]() -> int {
      prefer_huge_pages(std::size_t{120} << 20);  // some 40 MiB at 6,000 Nodes
      if (in->job.empty() == pod_group->empty()) {
        return report_error("place",
                            "--job, --pod-group: give the gang as one of them (a file, or NAMESPACE/NAME)",
                            kExitInvalid);
      }
      if (!pods->empty()) in->pods = *pods;
      if (!classes->empty()) in->priority_classes = *classes;
      if (!flavor->empty()) in->resource_flavor = *flavor;
      if (!config->empty()) in->scheduler_config = *config;
      auto live = read_cluster_inputs(in->nodes.empty() ? "--nodes" : "--topology", *cluster,
                                      {.nodes = in->nodes.empty(),
                                       .pods = pods->empty(),
                                       .topology = in->topology.empty(),
                                       .priority_classes = classes->empty(),
                                       .pod_group = *pod_group});
      if (!live) return report_error("place", live.error().message, live.error().exit_code);
      in->cluster = *live;
      auto report = scheduler::run_placement(*in);
      if (!report) return report_error("place", report.error(), kExitInvalid);
      for (const auto& w : report->warnings)
        std::cerr << "hypertopo place: warning: " << text::terminal_safe(w) << "\n";
      const auto writing = std::chrono::steady_clock::now();
      if (*format == "name" || *format == "wide") {
        print_placement_list(*report, *format);
      } else {
        std::cout << scheduler::render_report(*report, *format);
      }
      if (*timings) {
        std::cout.flush();
        const double write_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - writing).count();
        std::cerr << "timings (" << report->semantics << "): read " << report->read_ms << " ms, parse "
                  << report->parse_ms << " ms, index " << report->index_ms << " ms, place "
                  << report->place_ms << " ms";
        if (report->preempt_ms >= 0) std::cerr << ", preempt " << report->preempt_ms << " ms";
        std::cerr << ", write " << write_ms << " ms\n";
      }
      return report->result["fit"].get<bool>() ? 0 : 1;
    };
  });
}

}  // namespace hypertopo::cli
