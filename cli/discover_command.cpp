// `hypertopo discover`: run sources, build the tree, print it.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <memory>

#include "cli/command_errors.h"
#include "cli/commands.h"
#include "cli/discovery_setup.h"
#include "cli/heap_pages.h"
#include "cli/list_output.h"
#include "cli/ufm_flags.h"
#include "discoverers/ib-fabric/simulated_fabric.h"
#include "discoverers/pipeline/discovery_pipeline.h"
#include "discoverers/registry/discoverer.h"
#include "io/json_writer.h"
#include "io/object_reader.h"
#include "k8s/objects/node_list.h"
#include "scheduler/input/cluster_loader.h"
#include "text/terminal_safe.h"
#include "topology/builder_config.h"
#include "topology/exporters/capacity_dot.h"
#include "topology/exporters/capacity_html.h"
#include "topology/exporters/node_labels.h"
#include "topology/exporters/slurm_topology.h"
#include "topology/hypernode.h"
#include "topology/hypernode_status.h"
#include "topology/label_rules.h"
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
  std::string pods_file;                  // -o dot/html: GPU use from `kubectl get pods -A -o json`
  std::int64_t assume_gpus_per_node = 0;  // -o dot/html: capacity of nodes the node list does not give
  std::string label_prefix = "hypertopo.io/tier-";
  bool topograph_labels = false;
  std::string kueue_api_version = "v1beta2";  // -o kueue-topology: kueue.x-k8s.io/<this>
  discoverers::ufm::UfmSourceConfig ufm;
};

// GPU capacity and use per node for the pictures: GPUs from --nodes and --pods, or an assumed count
// per node. Empty without either: the pictures are then plain.
std::expected<topology::exporters::GpuUsage, Error> picture_usage(const topology::Tree& tree,
                                                                  const k8s::NodeList* nodes,
                                                                  const DiscoverOptions& opts) {
  std::map<std::string, std::int64_t> used;  // GPUs the bound pods request, by placement's rule
  if (!opts.pods_file.empty()) {
    auto file = io::read_objects(opts.pods_file);
    if (!file) return std::unexpected(file.error().context("--pods"));
    // A document of Pods is read whole, as a PodList; the Pods of several, or among other kinds,
    // are gathered into one.
    const bool only_pods = std::ranges::all_of(
        file->objects, [](const io::FileObject& o) { return o.kind == "Pod" || o.kind.empty(); });
    nlohmann::json pods = file->documents.size() == 1 ? file->documents.front() : nlohmann::json();
    if (file->documents.size() > 1 || !only_pods) {
      pods = {{"kind", "PodList"}, {"items", nlohmann::json::array()}};
      for (const auto& o : file->objects) {
        if (o.kind == "Pod" || o.kind.empty()) pods["items"].push_back(*o.object);
      }
    }
    io::ObjectLedger ledger;
    ledger.record(*file, {"Pod", ""});
    for (const auto& w : ledger.warnings())
      std::cerr << "hypertopo: warning: --pods: " << text::terminal_safe(w) << "\n";
    auto requested = scheduler::requested_per_node(pods, topology::exporters::kGpuResource);
    if (!requested) return std::unexpected(requested.error().context(opts.pods_file).context("--pods"));
    used = std::move(*requested);
  }
  // Nodes the list does not give (or every node, without --nodes) get the assumed GPU count, so
  // pods bound to them still count as used.
  k8s::NodeList capacity = nodes ? *nodes : k8s::NodeList{};
  if (opts.assume_gpus_per_node > 0) {
    const std::string gpus = std::to_string(opts.assume_gpus_per_node);
    for (topology::DomainId id = 0; id < tree.size(); ++id) {
      for (const auto& n : tree.domain(id).nodes) {
        if (!capacity.find(n))
          capacity.items.push_back({.name = n, .allocatable = {{"nvidia.com/gpu", gpus}}});
      }
    }
  }
  if (capacity.items.empty()) return topology::exporters::GpuUsage{};
  return scheduler::gpu_usage_per_node(capacity, used, topology::exporters::kGpuResource);
}

// An empty tree is never printed without a word: say why, and which source would build one.
std::string empty_tree_reason(const std::vector<discoverers::SourceSpec>& sources,
                              const std::vector<topology::NodeReport>& reports) {
  std::size_t with_neighbours = 0;
  for (const auto& r : reports) {
    if (std::any_of(r.roce.begin(), r.roce.end(), [](const auto& rail) { return rail.neighbor.has_value(); }))
      ++with_neighbours;
  }
  const bool roce =
      std::any_of(sources.begin(), sources.end(), [](const auto& s) { return s.kind == "roce"; });
  if (with_neighbours > 0 && !roce) {
    return "the tree is empty: " + std::to_string(with_neighbours) +
           " NodeReport(s) carry LLDP neighbours, but no source builds the RoCE fabric from them; add "
           "--source roce (with a hierarchy file, --source roce:HIERARCHY.yaml, for the tiers above the "
           "leaves)";
  }
  return "the tree is empty: no switch joins two compute hosts in what the sources found (" +
         std::to_string(reports.size()) + " NodeReport(s) read)";
}

int run_discover(const DiscoverOptions& opts) {
  auto error = [](const Error& e) { return report_error("discover", e); };
  // The key of tier N is the prefix and N: it must make a key the API server accepts.
  if (auto why = topology::label_key_error(opts.label_prefix + "1")) {
    return error(Error(ErrorCode::kInvalidArgument, "--label-prefix: " + *why));
  }
  // Kueue serves v1beta2; v1beta1 (deprecated) only for a Kueue that predates it.
  if (opts.kueue_api_version != "v1beta1" && opts.kueue_api_version != "v1beta2") {
    return report_error(
        "discover", "--kueue-api-version: '" + opts.kueue_api_version + "' is not one of v1beta1, v1beta2",
        kExitInvalid);
  }
  std::unique_ptr<k8s::NodeList> nodes;
  if (!opts.nodes_file.empty()) {
    io::ObjectLedger ledger;
    auto loaded = k8s::read_node_list_file(opts.nodes_file, &ledger);
    if (!loaded) return error(loaded.error().context("--nodes"));
    for (const auto& w : ledger.warnings())
      std::cerr << "hypertopo: warning: --nodes: " << text::terminal_safe(w) << "\n";
    nodes = std::make_unique<k8s::NodeList>(std::move(*loaded));
  }
  discoverers::PipelineInput input;
  if (auto ok = prepare_pipeline_input({.sources = opts.sources,
                                        .config_file = opts.config_file,
                                        .guid_map_file = opts.guid_map_file,
                                        .ufm = opts.ufm},
                                       nodes.get(), input);
      !ok) {
    return error(ok.error());
  }
  discoverers::DiscovererRegistry registry;
  discoverers::register_builtin_discoverers(registry);
  auto run = discoverers::run_discovery(registry, input);
  if (!run) return error(run.error());
  for (const auto& outcome : run->outcomes) {
    for (const auto& note : outcome.notes) std::cerr << "hypertopo: " << text::terminal_safe(note) << "\n";
    for (const auto& w : outcome.warnings)
      std::cerr << "hypertopo: warning: " << text::terminal_safe(w) << "\n";
  }
  topology::Tree tree = std::move(run->tree);
  if (tree.size() == 0)
    std::cerr << "hypertopo: warning: " << empty_tree_reason(input.sources, run->reports) << "\n";

  print_report_warnings(tree.report);
  const std::string observed_at = topology::rfc3339(std::chrono::system_clock::now());
  if (!opts.manifests_file.empty()) {
    std::ofstream out(opts.manifests_file);
    out << topology::render_hypernodes_yaml(tree, observed_at);
    if (!out) return error(Error(ErrorCode::kUnavailable, opts.manifests_file + ": cannot write"));
    std::cerr << "hypertopo: wrote " << tree.size() << " HyperNode manifests to " << opts.manifests_file
              << "\n";
  }
  if (opts.output == "yaml" || opts.output == "json" || !opts.manifests_file.empty()) {
    // kubectl apply sends no status (it is a subresource of the CRD), so conditions in these
    // manifests never reach the cluster; said once, whatever the number of degraded domains.
    if (const std::size_t with_status = topology::hypernodes_with_status(tree, observed_at);
        with_status > 0) {
      std::cerr << "hypertopo: warning: " << with_status
                << " HyperNode(s) carry status.conditions (FabricDegraded), which `kubectl apply` drops: "
                   "status is a subresource; `hypertopo apply` (or the agent) writes it through /status\n";
    }
  }
  if (opts.output == "yaml") {
    std::cout << topology::render_hypernodes_yaml(tree, observed_at);
  } else if (opts.output == "json") {
    std::cout << io::json_text(topology::render_hypernode_list(tree, observed_at), 2) << "\n";
  } else if (opts.output == "name") {
    std::cout << hypernode_names(tree);
  } else if (opts.output == "wide") {
    // GPUs only where --nodes, --pods or --assume-gpus-per-node give them, as the pictures count them.
    auto usage = picture_usage(tree, nodes.get(), opts);
    if (!usage) return error(usage.error());
    std::cout << hypernode_table(tree, usage->empty() ? nullptr : &*usage, [](const topology::Domain& d) {
      if (!d.health.assessed) return std::string("<unknown>");
      return d.health.degraded() ? std::string(topology::reason_name(d.health.reason())) : "Healthy";
    });
  } else if (opts.output == "dot" || opts.output == "html") {
    auto usage = picture_usage(tree, nodes.get(), opts);
    if (!usage) return error(usage.error());
    if (opts.output == "dot") {
      std::cout << topology::exporters::render_capacity_dot(tree, *usage);
    } else {
      std::string from;
      for (const auto& s : opts.sources) from += (from.empty() ? "" : ", ") + s;
      std::cout << topology::exporters::render_capacity_html(
          tree, *usage,
          {.title = "hypertopo: " + from, .subtitle = "discovered from " + from + " at " + observed_at});
    }
  } else if (opts.output == "labels" || opts.output == "labels-apply" || opts.output == "kueue-topology" ||
             opts.output == "kai-topology") {
    topology::exporters::NodeLabelOptions label_opts;
    label_opts.key_prefix = opts.label_prefix;
    label_opts.topograph_compatible = opts.topograph_labels;
    if (opts.output == "labels") {
      std::cout << topology::exporters::render_node_labels_yaml(tree, label_opts);
    } else if (opts.output == "labels-apply") {
      // Node objects that carry our labels and nothing else: `kubectl apply --server-side
      // --field-manager=hypertopo -f -` owns exactly these keys under that manager, so another
      // writer's labels are never touched and a key dropped from a later run is removed.
      nlohmann::json items = nlohmann::json::array();
      for (const auto& [node, labels] : topology::exporters::node_labels(tree, label_opts)) {
        items.push_back(
            {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", node}, {"labels", labels}}}});
      }
      const nlohmann::json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", std::move(items)}};
      std::cout << io::json_text(list, 2) << "\n";
    } else if (opts.output == "kueue-topology") {
      std::cout << io::json_text(
                       topology::exporters::render_kueue_topology(tree, label_opts, "hypertopo",
                                                                  "kueue.x-k8s.io/" + opts.kueue_api_version),
                       2)
                << "\n";
    } else {
      std::cout << io::json_text(topology::exporters::render_kai_topology(tree, label_opts), 2) << "\n";
    }
  } else if (opts.output == "slurm-tree") {
    std::cout << topology::exporters::render_slurm_tree_conf(tree);
  } else if (opts.output == "slurm-block") {
    std::cout << topology::exporters::render_slurm_block_conf(tree);
  } else if (opts.output == "slurm-yaml") {
    std::cout << topology::exporters::render_slurm_topology_yaml(tree);
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
      "  hypertopo discover --source demo -o wide --assume-gpus-per-node 8\n"
      "  hypertopo discover --source ibnetdiscover:fabric.out --nodes nodes.json -o yaml | kubectl apply -f "
      "-\n"
      "  ibnetdiscover | hypertopo discover --source ibnetdiscover:- -o dot | dot -Tsvg > fabric.svg\n"
      "  hypertopo discover --source ibnetdiscover:fabric.out --nodes nodes.json --pods pods.json -o html > "
      "fabric.html\n"
      "  hypertopo discover --source ufm:https://ufm.example --ufm-credentials /etc/ufm --ufm-ca ufm-ca.pem");
  cmd->add_option("-s,--source", opts->sources, "A discovery source, KIND[:ARG]")->required();
  add_ufm_flags(cmd, opts->ufm);
  cmd->add_option("--nodes", opts->nodes_file,
                  "Node list (kubectl get nodes -o json): only these hosts are compute nodes; the annotation "
                  "hypertopo.io/ib-port-guids maps HCA GUIDs to a node")
      ->check(CLI::ExistingFile);
  cmd->add_option("--config", opts->config_file,
                  "Builder config YAML (tier names, exclusion patterns, GUID map)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--guid-map", opts->guid_map_file, "File of '<guid> <node name>' lines")
      ->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", opts->output,
                  "Output format (html: one self-contained page, the tree collapsed to what the window "
                  "holds, expandable and searchable; labels-apply: Node objects carrying only the tier "
                  "labels, for kubectl apply --server-side --field-manager=hypertopo -f -; name: one "
                  "hypernode.topology.volcano.sh/<name> line per HyperNode, as kubectl get -o name; wide: "
                  "a table of the HyperNodes, tier, parent, members, nodes, GPUs and health)")
      ->check(CLI::IsMember({"yaml", "json", "name", "wide", "tree", "dot", "html", "labels", "labels-apply",
                             "kueue-topology", "kai-topology", "slurm-tree", "slurm-block", "slurm-yaml"}))
      ->capture_default_str();
  cmd->add_option("--write-manifests", opts->manifests_file,
                  "Also write the HyperNodes as YAML to this file");
  cmd->add_option("--pods", opts->pods_file,
                  "-o dot/html/wide: pods (kubectl get pods -A -o json) whose GPU requests count as used")
      ->check(CLI::ExistingFile);
  cmd->add_option("--assume-gpus-per-node", opts->assume_gpus_per_node,
                  "-o dot/html/wide: GPUs of each node the --nodes list does not give (colours the picture "
                  "by capacity)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 20));
  cmd->add_option("--label-prefix", opts->label_prefix,
                  "-o labels/labels-apply/kueue-topology/kai-topology: key of tier N is PREFIX+N")
      ->capture_default_str();
  cmd->add_option("--kueue-api-version", opts->kueue_api_version,
                  "-o kueue-topology: the Topology's version, v1beta2 or v1beta1 (of kueue.x-k8s.io)")
      ->capture_default_str();
  cmd->add_flag(
      "--topograph-labels", opts->topograph_labels,
      "-o labels/labels-apply: also fabric.topograph.run/tier-N and accelerator.topograph.run/domain");
  cmd->add_option("--max-nodes-listed", opts->max_nodes_listed, "Node names shown per domain with -o tree")
      ->capture_default_str();
  cmd->callback([opts, &action] {
    action = [opts] {
      prefer_huge_pages(std::size_t{192} << 20);  // some 140 MiB for a 100,000-HCA capture
      return run_discover(*opts);
    };
  });
}

}  // namespace hypertopo::cli
