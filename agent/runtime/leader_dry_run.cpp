#include "agent/runtime/leader_dry_run.h"

#include <set>

#include "agent/runtime/agent_daemon.h"
#include "agent/runtime/node_view.h"
#include "discoverers/pipeline/discovery_pipeline.h"
#include "discoverers/registry/discoverer.h"
#include "io/json_view.h"
#include "topology/node_report.h"

namespace hypertopo::agent {

using nlohmann::json;

namespace {

std::string name_of(const json& object) {
  if (!object.is_object() || !object.contains("metadata") || !object["metadata"].is_object()) return "";
  const auto& meta = object["metadata"];
  return meta.contains("name") && meta["name"].is_string() ? meta["name"].get<std::string>() : "";
}

}  // namespace

std::expected<LeaderPlan, Error> plan_leader_cycle(const AgentConfig& config, const LeaderDryRunDeps& deps) {
  if (deps.client == nullptr) return fail(ErrorCode::kInvalidArgument, "the dry run needs an API client");
  k8s::KubeClient& client = *deps.client;
  LeaderPlan plan;
  plan.export_on = config.export_node_labels;

  std::vector<SourceConfig> leader_sources;
  for (const auto& s : config.sources) {
    if (s.enabled && s.role == SourceRole::kLeader) leader_sources.push_back(s);
  }
  if (leader_sources.empty()) {
    // The leader would build no tree, so it would write nothing; an empty plan would look like an
    // up-to-date cluster, which it need not be.
    return fail(ErrorCode::kInvalidArgument,
                "the config has no enabled leader source: the leader builds no tree and writes nothing");
  }

  // What the leader's watches would hold: every Node (the export plans over all of them), and the
  // NodeReports of its namespace.
  auto listed_nodes = client.list(k8s::kNodesResource, "");
  if (!listed_nodes) return std::unexpected(listed_nodes.error().error.context("listing Nodes"));
  const NodeLabelExportOptions export_options = AgentDaemon::label_export_options(config);
  std::map<std::string, json> nodes_by_name;
  NodeView view;
  for (auto& item : listed_nodes->items) {
    view.apply(io::NlohmannView(item), export_options);
    if (std::string name = name_of(item); !name.empty())
      nodes_by_name.emplace(std::move(name), std::move(item));
  }
  auto listed_reports = client.list(kNodeReportsResource, deps.namespace_);
  if (!listed_reports)
    return std::unexpected(listed_reports.error().error.context("listing NodeReports in " + deps.namespace_));
  std::vector<topology::NodeReport> reports;
  for (const auto& item : listed_reports->items) {
    auto parsed = topology::parse_node_report(item);
    if (!parsed) {
      plan.warnings.push_back("NodeReport " + name_of(item) + " left out: " + parsed.error().message());
      continue;
    }
    reports.push_back(std::move(*parsed));
  }
  plan.reports = reports.size();

  discoverers::PipelineInput input;
  for (const auto& s : leader_sources)
    input.sources.push_back({.kind = s.kind, .arg = "", .settings = s.settings});
  input.builder_options = config.builder;
  input.stop_on_source_error = false;
  input.deps.root = config.host_root;
  input.deps.work_dir = deps.work_dir;
  input.deps.reports = &reports;
  if (deps.log) {
    input.deps.log = [&deps](const std::string& line) { deps.log(telemetry::LogLevel::kDebug, line); };
  }
  input.deps.read_secret =
      [&](const std::string& ns,
          const std::string& name) -> std::expected<std::map<std::string, std::string>, Error> {
    return read_secret_data(client, ns.empty() ? deps.namespace_ : ns, name);
  };
  k8s::NodeList nodes = view.node_list(config.node_selector, std::nullopt);
  plan.nodes = nodes.items.size();
  // As the leader: with no Node at all hosts are not filtered (an empty list would exclude them all).
  if (!nodes.items.empty()) input.deps.nodes = &nodes;

  discoverers::DiscovererRegistry registry;
  discoverers::register_builtin_discoverers(registry);
  auto run = discoverers::run_discovery(registry, input);
  if (!run) return std::unexpected(run.error().context("discovery"));
  plan.complete = run->complete;
  std::set<std::string> seen;
  auto warn = [&](const std::string& line) {
    if (seen.insert(line).second) plan.warnings.push_back(line);
  };
  for (const auto& outcome : run->outcomes) {
    if (!outcome.ok) warn("source " + outcome.source + " failed: " + outcome.error);
    for (const auto& w : outcome.warnings) warn(outcome.source + ": " + w);
  }
  for (const auto& w : run->tree.report.warnings) warn(w);

  HyperNodeReconciler reconciler(
      client, {.source = config.builder.source,
               .max_delete_fraction = config.max_delete_fraction,
               .min_objects_for_guard = static_cast<std::size_t>(config.min_objects_for_guard),
               .dry_run = true});
  auto result = reconciler.reconcile(run->tree, run->complete);
  if (!result) return std::unexpected(result.error());
  plan.hypernodes = *result;
  plan.writes = planned_hypernode_writes(*result);

  // The leader's rule (agent_rebuild.cpp): with the export off its keys come off every Node; with it
  // on nothing is removed while discovery is incomplete or deletions are held.
  const bool allow_removal = !config.export_node_labels || (run->complete && result->held == 0);
  plan.node_labels = plan_node_labels(config.export_node_labels ? &run->tree : nullptr, nodes_by_name,
                                      export_options, allow_removal);
  append_node_label_writes(plan.node_labels, nodes_by_name, ReconcileOptions{}.diff_limit, plan.writes);
  return plan;
}

}  // namespace hypertopo::agent
