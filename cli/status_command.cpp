// `hypertopo status`: the live tree as the cluster holds it, with GPU capacity and use per domain,
// the largest free block per tier, and the HyperNodes that are not ours or break the rules.
//
// The tree is rebuilt from the HyperNode objects themselves (exact-name members, the form hypertopo
// and Volcano's discoverers write) and checked with the same check_invariants() the agent runs before
// it writes, so what this prints is what Volcano's scheduler will accept or refuse. A HyperNode whose
// FabricDegraded condition is True is marked with the condition's reason and message.
//
// The cluster is read as `place` reads it (cli/cluster_input.h, scheduler/input/cluster_snapshot.h):
// Nodes and Pods a page at a time, each Pod kept as placement keeps it, and the HyperNode objects
// from the same list. GPUs in use are counted by placement's rule (requested_per_node over the bound,
// unfinished pods), and a node that takes no new pod is found by placement's own check
// (check_node_for_any_pod): the largest free blocks are what `place` finds for a gang of pods
// without tolerations.
#include <algorithm>
#include <iostream>
#include <map>
#include <set>

#include "cli/cluster_input.h"
#include "cli/command_errors.h"
#include "cli/commands.h"
#include "cli/list_output.h"
#include "io/json_view.h"
#include "io/json_writer.h"
#include "io/object_reader.h"
#include "scheduler/index/node_affinity.h"
#include "scheduler/input/cluster_loader.h"
#include "scheduler/input/cluster_snapshot.h"
#include "text/terminal_safe.h"
#include "topology/exporters/capacity_dot.h"
#include "topology/exporters/capacity_html.h"
#include "topology/hypernode.h"
#include "topology/hypernode_status.h"
#include "topology/hypernode_tier.h"
#include "topology/tree.h"

namespace hypertopo::cli {
namespace {

using nlohmann::json;

struct StatusOptions {
  std::string kubeconfig;
  std::string context;
  std::string output = "text";
  // Files that stand in for the cluster's objects of their kind, as place's flags of the same names.
  std::string nodes;
  std::string pods;
  std::string topology;
};

// The tree the HyperNodes describe, and what could not be represented or checked.
// A HyperNode's FabricDegraded condition while its status is True.
struct Degraded {
  std::string reason;
  std::string message;
};

struct LiveTree {
  topology::Tree tree;
  std::map<std::string, Degraded> degraded;  // by HyperNode name
  std::vector<std::string> problems;         // "<hypernode>: what is wrong"
  std::vector<std::string> foreign;          // "<hypernode> (managed-by: X)"
  std::set<std::string> selector_members;    // HyperNodes with regexMatch/labelMatch Node members
  std::set<std::string> selector_children;   // HyperNodes with regexMatch/labelMatch HyperNode members
  std::set<std::string> assessed;            // HyperNodes that carry a FabricDegraded condition
};

LiveTree rebuild_tree(const std::vector<json>& hypernodes) {
  LiveTree live;
  std::vector<std::pair<std::string, std::string>> edges;  // parent, child
  for (const auto& h : hypernodes) {
    const std::string name = h.value("/metadata/name"_json_pointer, std::string());
    const std::string owner =
        h.value(json::json_pointer("/metadata/labels/" + std::string("app.kubernetes.io~1managed-by")),
                std::string());
    if (owner != topology::kManagedByValue) {
      live.foreign.push_back(name + " (managed-by: " + (owner.empty() ? "<none>" : owner) + ")");
    }
    const json* spec = h.contains("spec") && h["spec"].is_object() ? &h["spec"] : nullptr;
    auto tier =
        topology::read_hypernode_tier(spec ? io::NlohmannView(*spec).find("tier") : std::nullopt, name);
    if (!tier) {
      live.problems.push_back(tier.error().message());
      continue;
    }
    auto id = live.tree.add_domain(name, *tier, h.value("/spec/tierName"_json_pointer, std::string()));
    if (auto c = topology::find_condition(h, topology::kFabricDegradedCondition)) {
      live.assessed.insert(name);
      if (c->value("status", "") == "True")
        live.degraded[name] = {c->value("reason", ""), c->value("message", "")};
    }
    for (const auto& m : h.value("/spec/members"_json_pointer, json::array())) {
      const std::string type = m.value("type", "");
      const std::string exact = m.value("/selector/exactMatch/name"_json_pointer, std::string());
      if (exact.empty()) {
        if (type == "Node") {
          live.selector_members.insert(name);
        } else if (type == "HyperNode") {
          live.selector_children.insert(name);
        } else {
          live.problems.push_back(name + ": member type '" + type + "' is neither Node nor HyperNode");
        }
        continue;
      }
      if (type == "Node") {
        live.tree.domain(id).nodes.push_back(exact);
      } else if (type == "HyperNode") {
        edges.emplace_back(name, exact);
      } else {
        live.problems.push_back(name + ": member type '" + type + "' is neither Node nor HyperNode");
      }
    }
    std::ranges::sort(live.tree.domain(id).nodes);
  }
  std::set<std::string> has_parent;
  for (const auto& [parent, child] : edges) {
    auto p = live.tree.find(parent);
    auto c = live.tree.find(child);
    if (!c) {
      live.problems.push_back(parent + ": member HyperNode " + child + " does not exist");
    } else if (!has_parent.insert(child).second) {
      live.problems.push_back(child + ": member of more than one HyperNode (second: " + parent + ")");
    } else if (p) {
      live.tree.attach(*p, *c);
    }
  }
  return live;
}

// Members chosen by regex or labels: the scheduler's index already resolves every selector kind,
// Node members against the Nodes and HyperNode members against the other HyperNodes, so it decides
// which nodes and which child HyperNodes those HyperNodes hold, as place and the extender see them.
void resolve_selector_members(LiveTree& live, const std::vector<json>& hypernodes,
                              const std::vector<scheduler::NodeSpec>& nodes) {
  if (live.selector_members.empty() && live.selector_children.empty()) return;
  auto fail = [&](const Error& e) {
    for (const auto* set : {&live.selector_members, &live.selector_children}) {
      for (const auto& name : *set)
        live.problems.push_back(name + ": regexMatch/labelMatch members not resolved: " + e.message());
    }
  };
  auto specs = scheduler::parse_hypernode_items(hypernodes);
  if (!specs) return fail(specs.error());
  auto index = scheduler::TopologyIndex::from_hypernodes(*specs, nodes, {});
  if (!index) return fail(index.error());
  for (const auto& name : live.selector_members) {
    auto id = live.tree.find(name);
    const int at = index->find_domain(name);
    if (!id || at < 0) continue;
    auto& members = live.tree.domain(*id).nodes;
    for (int n : index->domain(at).nodes) members.push_back(index->node(n).spec.name);
    std::ranges::sort(members);
    members.erase(std::unique(members.begin(), members.end()), members.end());
  }
  for (const auto& name : live.selector_children) {
    auto id = live.tree.find(name);
    const int at = index->find_domain(name);
    if (!id || at < 0) continue;
    for (int child : index->domain(at).children) {
      const std::string& child_name = index->domain(child).name;
      auto c = live.tree.find(child_name);
      if (!c) continue;
      if (live.tree.domain(*c).parent) {
        if (*live.tree.domain(*c).parent != *id)
          live.problems.push_back(child_name + ": member of more than one HyperNode (second: " + name + ")");
        continue;
      }
      live.tree.attach(*id, *c);
    }
  }
}

struct FreeBlock {
  int tier = 0;
  std::string tier_name;
  std::string domain;
  std::int64_t free_gpus = 0;
  std::size_t idle_nodes = 0;
};

std::size_t idle_nodes(const topology::Tree& tree, topology::DomainId id,
                       const topology::exporters::GpuUsage& usage) {
  std::size_t idle = 0;
  for (const auto& n : tree.nodes_under(id)) {
    auto it = usage.find(n);
    if (it != usage.end() && it->second.allocatable > 0 && it->second.used == 0) ++idle;
  }
  return idle;
}

std::vector<FreeBlock> largest_free_blocks(const topology::Tree& tree,
                                           const topology::exporters::GpuUsage& usage) {
  std::map<int, FreeBlock> best;
  for (topology::DomainId id = 0; id < tree.size(); ++id) {
    const auto& d = tree.domain(id);
    const auto totals = topology::exporters::domain_gpu_totals(tree, id, usage);
    auto [it, fresh] = best.try_emplace(d.tier);
    if (fresh || totals.free() > it->second.free_gpus) {
      it->second = {d.tier, d.tier_name, d.name, totals.free(), idle_nodes(tree, id, usage)};
    }
  }
  std::vector<FreeBlock> out;
  for (auto it = best.rbegin(); it != best.rend(); ++it) out.push_back(it->second);
  return out;
}

// HyperNodes nest at most this deep, as the placement index allows (scheduler/index/
// topology_index.cpp); a live tree nested deeper is refused before any output walks it.
constexpr std::size_t kMaxNesting = 64;

// The deepest domain of the tree and its depth (roots are 1), found without recursion.
std::pair<topology::DomainId, std::size_t> deepest_domain(const topology::Tree& tree) {
  std::pair<topology::DomainId, std::size_t> deepest{0, 0};
  std::vector<std::pair<topology::DomainId, std::size_t>> stack;
  for (auto r : tree.roots()) stack.emplace_back(r, 1);
  std::size_t guard = 0;
  while (!stack.empty() && guard++ <= tree.size()) {
    const auto [id, depth] = stack.back();
    stack.pop_back();
    if (depth > deepest.second) deepest = {id, depth};
    for (auto c : tree.domain(id).children) stack.emplace_back(c, depth + 1);
  }
  return deepest;
}

// One line per domain, children by name, without recursion.
void print_domain_text(const LiveTree& live, topology::DomainId root,
                       const topology::exporters::GpuUsage& usage, std::ostream& out) {
  const auto& tree = live.tree;
  std::vector<std::pair<topology::DomainId, std::size_t>> stack{{root, 0}};
  while (!stack.empty()) {
    const auto [id, depth] = stack.back();
    stack.pop_back();
    const auto& d = tree.domain(id);
    const auto t = topology::exporters::domain_gpu_totals(tree, id, usage);
    const std::size_t nodes = tree.nodes_under(id).size();
    const std::string indent(depth * 2, ' ');
    out << indent << text::terminal_safe(d.name) << " (" << text::terminal_safe(d.tier_name) << ", tier "
        << d.tier << "): " << nodes << (nodes == 1 ? " node" : " nodes") << ", GPUs " << t.used << "/"
        << t.allocatable << " used, " << t.free() << " free";
    if (auto it = live.degraded.find(d.name); it != live.degraded.end()) {
      out << "  DEGRADED " << text::terminal_safe(it->second.reason) << "\n"
          << indent << "    " << text::terminal_safe(it->second.message);
    }
    out << "\n";
    std::vector<topology::DomainId> children = d.children;
    // Pushed in reverse name order, so they print in name order.
    std::ranges::sort(children, [&](auto a, auto b) { return tree.domain(a).name > tree.domain(b).name; });
    for (auto c : children) stack.emplace_back(c, depth + 1);
  }
}

// What status says of a node that takes no new pod, from the check that decides it.
std::string unavailable_reason(const scheduler::NodeConstraintCheck& check) {
  using Kind = scheduler::NodeConstraintCheck::Kind;
  switch (check.kind) {
    case Kind::kUnschedulable:
      return "cordoned";
    case Kind::kNotReady:
      return "NotReady";
    case Kind::kTaint:
      return "taint " + check.taint->key + (check.taint->value.empty() ? "" : "=" + check.taint->value) +
             ":" + check.taint->effect;
    case Kind::kPass:
    case Kind::kAffinity:
      break;
  }
  return check.message();
}

int run_status(const StatusOptions& opts) {
  auto error = [](const Error& e) { return report_error("status", e); };
  // The cluster read as place reads it (cluster_snapshot.h): Nodes and Pods a page at a time, a Pod
  // kept as placement reads it, and the HyperNode objects themselves for the tree. A file flag gives
  // its kind instead, as place's do; with --nodes and --topology and no --kubeconfig or --context,
  // the files alone.
  const bool no_files = opts.nodes.empty() && opts.pods.empty() && opts.topology.empty();
  auto snapshot = read_cluster_inputs(no_files             ? ""
                                      : opts.nodes.empty() ? "--nodes"
                                                           : "--topology",
                                      {.kubeconfig = opts.kubeconfig, .context = opts.context},
                                      {.nodes = opts.nodes.empty(),
                                       .pods = opts.pods.empty(),
                                       .disruption_budgets = false,
                                       .topology = false,
                                       .hypernode_objects = opts.topology.empty(),
                                       .priority_classes = false});
  if (!snapshot) return report_error("status", snapshot.error().message, snapshot.error().exit_code);
  const scheduler::ClusterSnapshot* cluster = snapshot->get();  // null: files alone
  const auto gpu = topology::exporters::kGpuResource;
  io::ObjectLedger ledger;
  std::vector<scheduler::NodeSpec> file_nodes;
  if (!opts.nodes.empty()) {
    auto read = scheduler::load_nodes(opts.nodes, &ledger);
    if (!read) return error(read.error());
    file_nodes = std::move(*read);
  }
  const std::vector<scheduler::NodeSpec>& nodes = opts.nodes.empty() ? cluster->nodes : file_nodes;
  // GPUs in use as placement counts them: the requests of the bound, unfinished pods.
  std::map<std::string, std::int64_t> requested;
  if (!opts.pods.empty()) {
    auto read = scheduler::load_pods(opts.pods, &ledger);
    if (!read) return error(read.error());
    requested = scheduler::requested_per_node(std::span<const scheduler::BoundPod>(*read), gpu);
  } else if (cluster && cluster->has_pods) {
    requested = scheduler::requested_per_node(std::span<const scheduler::ListedPod>(cluster->pods), gpu);
  }
  const auto usage = scheduler::gpu_usage_per_node(nodes, requested, gpu);

  std::vector<json> items;
  if (!opts.topology.empty()) {
    auto file = io::read_objects(opts.topology);
    if (!file) return error(file.error());
    for (const auto& o : file->objects) {
      if (o.kind == "HyperNode" || o.kind.empty()) items.push_back(*o.object);
    }
    ledger.record(*file, {"HyperNode", ""});
  } else {
    items = cluster->hypernode_objects;
  }
  for (const auto& w : ledger.warnings())
    std::cerr << "hypertopo status: warning: " << text::terminal_safe(w) << "\n";
  std::ranges::sort(items, [](const json& a, const json& b) {
    return a.value("/metadata/name"_json_pointer, std::string()) <
           b.value("/metadata/name"_json_pointer, std::string());
  });
  LiveTree live = rebuild_tree(items);
  resolve_selector_members(live, items, nodes);
  if (auto ok = topology::check_invariants(live.tree); !ok) live.problems.push_back(ok.error().message());
  if (auto [deep, depth] = deepest_domain(live.tree); depth > kMaxNesting) {
    return error(Error(ErrorCode::kInvalidArgument,
                       "the cluster's HyperNodes nest " + std::to_string(depth) + " deep (HyperNode " +
                           live.tree.domain(deep).name + "); HyperNodes nest at most " +
                           std::to_string(kMaxNesting) + " deep (members of type HyperNode)"));
  }
  const auto& tree = live.tree;
  // A node that takes no new pod (cordoned, NotReady, a NoSchedule or NoExecute taint: the check
  // placement and the extender make of each node) adds nothing to a free block, and a node holds no
  // less than nothing free: the blocks are what a gang of pods without tolerations finds. The tree
  // still shows what the nodes hold.
  std::map<std::string, std::string> unavailable;  // node -> why
  auto schedulable = usage;
  for (const auto& n : nodes) {
    auto& u = schedulable[n.name];
    u.used = std::min(u.used, u.allocatable);
    const auto check = scheduler::check_node_for_any_pod(n);
    if (check.passed()) continue;
    unavailable[n.name] = unavailable_reason(check);
    u.used = u.allocatable;
  }
  std::vector<std::string> unavailable_names;
  for (const auto& [name, why] : unavailable) unavailable_names.push_back(name);
  const auto blocks = largest_free_blocks(tree, schedulable);
  std::int64_t alloc = 0, used = 0;
  for (const auto& [name, u] : usage) {
    alloc += u.allocatable;
    used += u.used;
  }

  if (opts.output == "name" || opts.output == "wide") {
    // The list alone, as kubectl prints it; what the text view adds about the HyperNodes that break
    // the rules goes to stderr, so a pipe never drops it unseen.
    for (const auto& p : live.problems)
      std::cerr << "hypertopo status: warning: " << text::terminal_safe(p) << "\n";
    if (opts.output == "name") {
      // Every HyperNode the cluster holds, those the tree could not take included.
      std::vector<std::string> names;
      for (const auto& h : items) names.push_back(h.value("/metadata/name"_json_pointer, std::string()));
      std::cout << hypernode_names(std::move(names));
      return 0;
    }
    std::cout << hypernode_table(tree, &usage, [&](const topology::Domain& d) {
      if (auto it = live.degraded.find(d.name); it != live.degraded.end())
        return it->second.reason.empty() ? std::string(topology::kFabricDegradedCondition)
                                         : it->second.reason;
      return live.assessed.contains(d.name) ? std::string("Healthy") : std::string("<unknown>");
    });
    return 0;
  }
  if (opts.output == "html") {
    topology::exporters::CapacityHtmlOptions page{
        .title = "hypertopo status",
        .subtitle = std::to_string(items.size()) + " HyperNodes (" + std::to_string(live.foreign.size()) +
                    " not ours), " + std::to_string(nodes.size()) + " Nodes, read at " +
                    topology::rfc3339(std::chrono::system_clock::now()) +
                    (live.problems.empty() ? std::string()
                                           : "; " + std::to_string(live.problems.size()) +
                                                 " problem(s), listed by hypertopo status")};
    for (const auto& [name, d] : live.degraded) page.degraded[name] = {d.reason, d.message};
    for (const auto& [name, why] : unavailable) page.unavailable_nodes.insert(name);
    std::cout << topology::exporters::render_capacity_html(tree, usage, page);
    return 0;
  }
  if (opts.output == "json") {
    json domains = json::array();
    for (topology::DomainId id = 0; id < tree.size(); ++id) {
      const auto& d = tree.domain(id);
      const auto t = topology::exporters::domain_gpu_totals(tree, id, usage);
      json domain = {{"name", d.name},
                     {"tier", d.tier},
                     {"tierName", d.tier_name},
                     {"parent", d.parent ? json(tree.domain(*d.parent).name) : json(nullptr)},
                     {"nodes", tree.nodes_under(id).size()},
                     {"gpus", {{"allocatable", t.allocatable}, {"used", t.used}, {"free", t.free()}}}};
      if (auto it = live.degraded.find(d.name); it != live.degraded.end()) {
        domain["fabricDegraded"] = {{"reason", it->second.reason}, {"message", it->second.message}};
      }
      domains.push_back(std::move(domain));
    }
    json free = json::array();
    for (const auto& b : blocks) {
      free.push_back({{"tier", b.tier},
                      {"tierName", b.tier_name},
                      {"domain", b.domain},
                      {"freeGpus", b.free_gpus},
                      {"idleNodes", b.idle_nodes}});
    }
    std::cout << io::json_text(json{{"hyperNodes", items.size()},
                                    {"nodes", nodes.size()},
                                    {"gpus", {{"allocatable", alloc}, {"used", used}}},
                                    {"domains", domains},
                                    {"largestFreeBlocks", free},
                                    {"unschedulableNodes", unavailable_names},
                                    {"unschedulableReasons", unavailable},
                                    {"degraded", live.degraded.size()},
                                    {"notOurs", live.foreign},
                                    {"problems", live.problems}},
                               2)
              << "\n";
    return 0;
  }
  std::cout << "HyperNodes: " << items.size() << " (" << live.foreign.size() << " not ours, "
            << live.degraded.size() << " degraded), Nodes: " << nodes.size() << ", GPUs: " << used << "/"
            << alloc << " used\n\n";
  std::vector<topology::DomainId> roots = tree.roots();
  std::ranges::sort(roots, [&](auto a, auto b) { return tree.domain(a).name < tree.domain(b).name; });
  for (auto r : roots) print_domain_text(live, r, usage, std::cout);
  std::cout << "\nLargest free block per tier";
  if (!unavailable.empty()) {
    // Counted by why: "1 cordoned, 2 NotReady, 3 tainted".
    std::map<std::string, std::size_t> why;
    for (const auto& [name, reason] : unavailable) ++why[reason.starts_with("taint ") ? "tainted" : reason];
    std::cout << " (leaving out " << unavailable.size() << (unavailable.size() == 1 ? " node" : " nodes")
              << " that take no new pod:";
    const char* sep = " ";
    for (const auto& [reason, count] : why) {
      std::cout << sep << count << " " << reason;
      sep = ", ";
    }
    std::cout << ")";
  }
  std::cout << ":\n";
  for (const auto& b : blocks) {
    std::cout << "  tier " << b.tier << " (" << text::terminal_safe(b.tier_name)
              << "): " << text::terminal_safe(b.domain) << ", " << b.free_gpus
              << (b.free_gpus == 1 ? " GPU" : " GPUs") << " free, " << b.idle_nodes
              << (b.idle_nodes == 1 ? " idle node\n" : " idle nodes\n");
  }
  std::cout << "\nNot ours (" << live.foreign.size() << "):\n";
  for (const auto& f : live.foreign) std::cout << "  " << text::terminal_safe(f) << "\n";
  std::cout << "\nProblems (" << live.problems.size() << "):\n";
  for (const auto& p : live.problems) std::cout << "  " << text::terminal_safe(p) << "\n";
  return 0;
}

}  // namespace

void add_status_command(CLI::App& app, Action& action) {
  auto opts = std::make_shared<StatusOptions>();
  auto* cmd = app.add_subcommand("status", "Show the live HyperNode tree with GPU capacity and use");
  cmd->footer(
      "Reads HyperNodes, Nodes and Pods; marks the HyperNodes whose FabricDegraded condition is True "
      "(DEGRADED <reason> and the bad links); lists the HyperNodes that are not managed by hypertopo and "
      "any that break the rules Volcano's scheduler needs.\n"
      "Examples:\n  hypertopo status --kubeconfig ~/.kube/config -o json\n"
      "  hypertopo status -o html > status.html\n"
      "  hypertopo status -o wide");
  cmd->add_option("--kubeconfig", opts->kubeconfig,
                  "kubeconfig file (default: as kubectl: $KUBECONFIG, then ~/.kube/config, then the pod's "
                  "service account)");
  cmd->add_option("--context", opts->context, "kubeconfig context (default: its current-context)");
  cmd->add_option("--nodes", opts->nodes,
                  "Nodes (kubectl get nodes -o json|yaml) instead of the cluster's, as place reads them")
      ->check(CLI::ExistingFile);
  cmd->add_option("--pods", opts->pods,
                  "Pods (kubectl get pods -A -o json|yaml) instead of the cluster's: bound, unfinished pods "
                  "count as used")
      ->check(CLI::ExistingFile);
  cmd->add_option("--topology", opts->topology,
                  "HyperNodes (kubectl get hn -o json|yaml, discover -o yaml) instead of the cluster's; "
                  "with --nodes and no --kubeconfig or --context, status reads the files alone")
      ->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", opts->output,
                  "Output format (html: one self-contained page of the tree, coloured by GPU use, degraded "
                  "HyperNodes and cordoned or NotReady nodes marked, expandable and searchable; name: one "
                  "hypernode.topology.volcano.sh/<name> line per HyperNode of the cluster, as kubectl get "
                  "-o name; wide: a table of the HyperNodes, tier, parent, members, nodes, GPUs and health; "
                  "with name and wide the problems go to stderr)")
      ->check(CLI::IsMember({"text", "json", "name", "wide", "html"}))
      ->capture_default_str();
  cmd->callback([opts, &action] { action = [opts] { return run_status(*opts); }; });
}

}  // namespace hypertopo::cli
