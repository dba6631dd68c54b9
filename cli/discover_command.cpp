// `hypertopo discover`: run sources, build the tree, print it.
#include <fstream>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "discoverers/ib-fabric/simulated_fabric.h"
#include "discoverers/pipeline/discovery_pipeline.h"
#include "discoverers/registry/discoverer.h"
#include "k8s/objects/node_list.h"
#include "topology/builder_config.h"
#include "topology/hypernode.h"
#include "topology/tree_builder.h"
#include "topology/tree_text.h"

namespace hypertopo::cli {
namespace {

struct DiscoverOptions {
  std::vector<std::string> sources;
  std::string nodes_file;
  std::string config_file;
  std::string guid_map_file;
  std::string output = "tree";
  std::string manifests_file;
  std::size_t max_nodes_listed = 6;
};

void print_report_warnings(const topology::BuildReport& r) {
  auto warn = [](const std::string& s) { std::cerr << "hypertopo: warning: " << s << "\n"; };
  if (!r.unmapped_endpoints.empty()) {
    std::string list;
    const std::size_t shown = std::min<std::size_t>(r.unmapped_endpoints.size(), 10);
    for (std::size_t i = 0; i < shown; ++i) list += (i ? ", " : "") + r.unmapped_endpoints[i].guid;
    if (shown < r.unmapped_endpoints.size()) {
      list += ", … (+" + std::to_string(r.unmapped_endpoints.size() - shown) + " more; -o tree lists all)";
    }
    warn(std::to_string(r.unmapped_endpoints.size()) +
         " unmapped endpoint(s) (no host in the node description, no GUID mapping): " + list);
  }
  if (!r.excluded_hosts.empty()) {
    warn(std::to_string(r.excluded_hosts.size()) +
         " host(s) excluded: not in the --nodes list (first: " + r.excluded_hosts.front() + ")");
  }
  if (r.aggregation_nodes) warn(std::to_string(r.aggregation_nodes) + " SHARP aggregation node(s) excluded");
  if (!r.excluded_endpoints.empty()) {
    warn(std::to_string(r.excluded_endpoints.size()) + " storage/management endpoint(s) excluded by pattern");
  }
  if (!r.excluded_switches.empty()) {
    warn(std::to_string(r.excluded_switches.size()) + " switch(es) excluded by name pattern");
  }
  if (!r.unattached_hosts.empty()) {
    warn(std::to_string(r.unattached_hosts.size()) +
         " host(s) have no link to a switch and are in no domain");
  }
  for (const auto& w : r.warnings) warn(w);
}

int run_discover(const DiscoverOptions& opts) {
  auto error = [](const Error& e) {
    std::cerr << "hypertopo: error: " << e.message() << "\n";
    return 1;
  };
  discoverers::PipelineInput input;
  if (!opts.config_file.empty()) {
    auto loaded = topology::load_builder_config(opts.config_file);
    if (!loaded) return error(loaded.error());
    input.builder_options = std::move(*loaded);
  }
  std::unique_ptr<k8s::NodeList> nodes;
  if (!opts.nodes_file.empty()) {
    auto loaded = k8s::read_node_list_file(opts.nodes_file);
    if (!loaded) return error(loaded.error().context("--nodes"));
    nodes = std::make_unique<k8s::NodeList>(std::move(*loaded));
  }
  if (!opts.guid_map_file.empty()) {
    if (auto ok = topology::load_guid_map(opts.guid_map_file, input.builder_options); !ok)
      return error(ok.error());
  }

  discoverers::DiscovererRegistry registry;
  discoverers::register_builtin_discoverers(registry);
  auto& deps = input.deps;
  deps.stdin_stream = &std::cin;
  deps.nodes = nodes.get();
  deps.work_dir = std::filesystem::temp_directory_path();
  deps.log = [](const std::string& line) { std::cerr << "hypertopo: " << line << "\n"; };
  // Only the hypertopo binary itself can re-run as the simulated-fabric walker.
  std::error_code ec;
  if (std::filesystem::read_symlink("/proc/self/exe", ec).filename() == "hypertopo") {
    deps.ib_walker = discoverers::ib_fabric::hypertopo_walker_command();
  }
  for (const auto& text : opts.sources) {
    auto spec = discoverers::SourceSpec::parse(text);
    if (!spec) return error(spec.error());
    input.sources.push_back(std::move(*spec));
  }
  auto run = discoverers::run_discovery(registry, input);
  if (!run) return error(run.error());
  for (const auto& outcome : run->outcomes) {
    for (const auto& note : outcome.notes) std::cerr << "hypertopo: " << note << "\n";
  }
  topology::Tree tree = std::move(run->tree);

  print_report_warnings(tree.report);
  if (!opts.manifests_file.empty()) {
    std::ofstream out(opts.manifests_file);
    out << topology::render_hypernodes_yaml(tree);
    if (!out) return error(Error(ErrorCode::kUnavailable, opts.manifests_file + ": cannot write"));
    std::cerr << "hypertopo: wrote " << tree.size() << " HyperNode manifests to " << opts.manifests_file
              << "\n";
  }
  if (opts.output == "yaml") {
    std::cout << topology::render_hypernodes_yaml(tree);
  } else if (opts.output == "json") {
    std::cout << topology::render_hypernode_list(tree).dump(2) << "\n";
  } else if (opts.output == "dot") {
    std::cout << topology::render_tree_dot(tree);
  } else {
    topology::TreeTextOptions text;
    text.max_nodes_listed = opts.max_nodes_listed;
    std::cout << topology::render_tree_text(tree, text);
  }
  return 0;
}

}  // namespace

void add_discover_command(CLI::App& app, Action& action) {
  auto opts = std::make_shared<DiscoverOptions>();
  discoverers::DiscovererRegistry registry;
  discoverers::register_builtin_discoverers(registry);
  auto* cmd = app.add_subcommand("discover", "Discover the fabric and print its HyperNode tree");
  cmd->footer(
      "Sources (--source KIND[:ARG], repeatable; trees of several sources are merged):\n" +
      registry.describe() +
      "\nExamples:\n"
      "  hypertopo discover --source demo\n"
      "  hypertopo discover --source ibnetdiscover:fabric.out --nodes nodes.json -o yaml | kubectl apply -f "
      "-\n"
      "  ibnetdiscover | hypertopo discover --source ibnetdiscover:- -o dot | dot -Tsvg > fabric.svg");
  cmd->add_option("-s,--source", opts->sources, "A discovery source, KIND[:ARG]")->required();
  cmd->add_option("--nodes", opts->nodes_file,
                  "Node list (kubectl get nodes -o json): only these hosts are compute nodes; the annotation "
                  "hypertopo.io/ib-port-guids maps HCA GUIDs to a node")
      ->check(CLI::ExistingFile);
  cmd->add_option("--config", opts->config_file,
                  "Builder config YAML (tier names, exclusion patterns, GUID map)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--guid-map", opts->guid_map_file, "File of '<guid> <node name>' lines")
      ->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", opts->output, "Output format")
      ->check(CLI::IsMember({"yaml", "json", "tree", "dot"}))
      ->capture_default_str();
  cmd->add_option("--write-manifests", opts->manifests_file,
                  "Also write the HyperNodes as YAML to this file");
  cmd->add_option("--max-nodes-listed", opts->max_nodes_listed, "Node names shown per domain with -o tree")
      ->capture_default_str();
  cmd->callback([opts, &action] { action = [opts] { return run_discover(*opts); }; });
}

}  // namespace hypertopo::cli
