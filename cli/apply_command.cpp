// `hypertopo apply`: one-shot discover and reconcile from a workstation (ARCHITECTURE §4).
#include <iostream>
#include <memory>
#include <sstream>

#include "agent/reconciler/hypernode_reconciler.h"
#include "agent/reconciler/write_plan.h"
#include "cli/command_errors.h"
#include "cli/commands.h"
#include "cli/discovery_setup.h"
#include "discoverers/pipeline/discovery_pipeline.h"
#include "discoverers/registry/discoverer.h"
#include "io/object_reader.h"
#include "k8s/client/kube_client.h"
#include "k8s/client/kube_config.h"
#include "k8s/objects/node_list.h"
#include "text/terminal_safe.h"
#include "topology/label_rules.h"

namespace hypertopo::cli {
namespace {

struct ApplyOptions {
  std::string kubeconfig;
  std::string context;
  DiscoverySetup setup;
  std::string nodes_file;
  bool dry_run = false;
  std::string output = "text";       // of --dry-run's plan: text or json
  double max_delete_fraction = 0.3;  // as the agent's config (deploy/base/config.yaml) holds
  std::string source_label = "hypertopo";
};

// "create hypernode leaf-x", "held delete hypernode leaf-y (why)", ...
std::string action_line(const agent::ReconcileAction& a, bool dry_run) {
  using agent::ActionKind;
  std::string line;
  switch (a.kind) {
    case ActionKind::kHeld:
      line = "held delete hypernode " + a.name;
      break;
    case ActionKind::kFailed:
      line = "failed hypernode " + a.name;
      break;
    default:
      line = std::string(agent::to_string(a.kind)) + " hypernode " + a.name;
      break;
  }
  if (!a.detail.empty()) line += " (" + a.detail + ")";
  if (dry_run &&
      (a.kind == ActionKind::kCreate || a.kind == ActionKind::kUpdate || a.kind == ActionKind::kDelete)) {
    line += " (dry run)";
  }
  return line;
}

int run_apply(const ApplyOptions& opts) {
  auto error = [](const Error& e) { return report_error("apply", e); };
  // The API server failed to answer or to take a write: a runtime failure, whatever the error's code.
  auto api_error = [](const Error& e) { return report_error("apply", e, kExitRuntime); };
  if (opts.output == "json" && !opts.dry_run)
    return error(Error(ErrorCode::kInvalidArgument, "-o json: the plan is data only with --dry-run"));
  // The value goes on every HyperNode we write; the API server would refuse each of them.
  if (opts.source_label.empty())
    return error(Error(ErrorCode::kInvalidArgument, "--source-label: must not be empty"));
  if (auto why = topology::label_value_error(opts.source_label)) {
    return error(Error(ErrorCode::kInvalidArgument, "--source-label: " + *why));
  }
  auto client = connect_with_kubeconfig(opts.kubeconfig, opts.context);
  if (!client) return error(client.error());

  std::unique_ptr<k8s::NodeList> nodes;
  if (!opts.nodes_file.empty()) {
    io::ObjectLedger ledger;
    auto loaded = k8s::read_node_list_file(opts.nodes_file, &ledger);
    if (!loaded) return error(loaded.error().context("--nodes"));
    for (const auto& w : ledger.warnings())
      std::cerr << "hypertopo: warning: --nodes: " << text::terminal_safe(w) << "\n";
    nodes = std::make_unique<k8s::NodeList>(std::move(*loaded));
  } else {
    auto listed = (*client)->list(k8s::kNodesResource, "");
    if (!listed) return api_error(listed.error().error.context("listing Nodes (or pass --nodes FILE)"));
    auto parsed = k8s::parse_node_list(nlohmann::json{{"kind", "NodeList"}, {"items", listed->items}});
    if (!parsed) return error(parsed.error().context("the cluster's Node list"));
    if (parsed->items.empty()) {
      // Filtering by an empty list would exclude every host and make everything look deleted.
      std::cerr << "hypertopo: warning: the cluster lists no Nodes; hosts are not filtered\n";
    } else {
      nodes = std::make_unique<k8s::NodeList>(std::move(*parsed));
    }
  }

  discoverers::PipelineInput input;
  if (auto ok = prepare_pipeline_input(opts.setup, nodes.get(), input); !ok) return error(ok.error());
  discoverers::DiscovererRegistry registry;
  discoverers::register_builtin_discoverers(registry);
  auto run = discoverers::run_discovery(registry, input);
  if (!run) return error(run.error());
  for (const auto& outcome : run->outcomes) {
    for (const auto& note : outcome.notes) std::cerr << "hypertopo: " << text::terminal_safe(note) << "\n";
    for (const auto& w : outcome.warnings)
      std::cerr << "hypertopo: warning: " << text::terminal_safe(w) << "\n";
  }
  print_report_warnings(run->tree.report);

  agent::HyperNodeReconciler reconciler(**client, {.source = opts.source_label,
                                                   .max_delete_fraction = opts.max_delete_fraction,
                                                   .dry_run = opts.dry_run});
  auto result = reconciler.reconcile(run->tree, run->complete);
  if (!result) return api_error(result.error());
  if (opts.dry_run) {
    // Field by field, as kubectl diff: the admin sees what each write would change before any is made.
    const auto plan = agent::planned_hypernode_writes(*result);
    if (opts.output == "json") {
      std::cout << agent::write_plan_json(plan).dump(2) << "\n";
    } else {
      std::istringstream lines(agent::write_plan_text(plan));
      for (std::string line; std::getline(lines, line);) std::cout << text::terminal_safe(line) << "\n";
      std::cout << result->summary_line() << "\n";
    }
    std::cerr << "hypertopo: dry run: nothing was written\n";
    return 0;
  }
  for (const auto& a : result->actions) std::cout << action_line(a, opts.dry_run) << "\n";
  if (result->event_emitted) std::cerr << "hypertopo: deletions held; a MassDeletionHeld Event was written\n";
  std::cout << result->summary_line() << "\n";
  if (result->failed > 0) {
    return report_error("apply", std::to_string(result->failed) + " write(s) did not land", kExitRuntime);
  }
  return 0;
}

}  // namespace

void add_apply_command(CLI::App& app, Action& action) {
  auto opts = std::make_shared<ApplyOptions>();
  auto* cmd =
      app.add_subcommand("apply", "Discover the fabric and reconcile the cluster's HyperNodes with it");
  cmd->footer(
      "Writes only what differs (an unchanged topology costs no writes); never deletes because a source\n"
      "failed; holds deletions above --max-delete-fraction of the owned HyperNodes (with an Event).\n"
      "\nExamples:\n"
      "  hypertopo apply --kubeconfig ~/.kube/config --source ibnetdiscover:fabric.out --dry-run\n"
      "  hypertopo apply --kubeconfig ~/.kube/config --context prod --source demo");
  cmd->add_option("--kubeconfig", opts->kubeconfig,
                  "kubeconfig file (default: as kubectl: $KUBECONFIG, then ~/.kube/config, then the pod's "
                  "service account)");
  cmd->add_option("--context", opts->context, "kubeconfig context (default: its current-context)");
  cmd->add_option("-s,--source", opts->setup.sources, "A discovery source, KIND[:ARG]")->required();
  cmd->add_option("--nodes", opts->nodes_file, "Node list file (default: list the cluster's Nodes)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--config", opts->setup.config_file, "Builder config YAML")->check(CLI::ExistingFile);
  cmd->add_option("--guid-map", opts->setup.guid_map_file, "File of '<guid> <node name>' lines")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--dry-run", opts->dry_run,
                "Print what would be created, updated (field by field: path, old, new) and deleted; write "
                "nothing");
  cmd->add_option("-o,--output", opts->output,
                  "Format of the --dry-run plan: text, or json (a list of "
                  "{action, kind, name, changes: [{path, old, new}]})")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("--max-delete-fraction", opts->max_delete_fraction,
                  "Hold every deletion of a cycle when more than this share of owned HyperNodes would go")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--source-label", opts->source_label,
                  "Value of volcano.sh/network-topology-source that marks the HyperNodes we own")
      ->capture_default_str();
  cmd->callback([opts, &action] { action = [opts] { return run_apply(*opts); }; });
}

}  // namespace hypertopo::cli
