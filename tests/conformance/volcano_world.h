// tests/conformance/volcano_world.h: small clusters as Kubernetes objects, for the Volcano scorer's
// tests through `hypertopo place` and the extender's prioritize.
//
// Nodes, HyperNodes and Pods are the JSON kubectl and the API server give; the scheduler config is
// the volcano-scheduler ConfigMap (data."volcano-scheduler.conf") a Volcano install carries.
//
//   VolcanoWorld w;
//   w.node("a1", "64", "512Gi", 8);
//   w.hypernode("leaf-a", 1, "Node", {"a1"});
//   w.bound_pod("hog", "a1", {{"cpu", "48"}});
//   auto run = w.place(w.volcano_job("train", 1, {{"cpu", "4"}}), configmap_with({{"weight", "2"}}));
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "scheduler/config/volcano_config.h"
#include "scheduler/extender/extender_service.h"
#include "tests/support/fixtures.h"

namespace hypertopo::testing {

// A volcano-scheduler ConfigMap whose network-topology-aware plugin has `arguments` (YAML lines,
// already indented under `arguments:`; empty: no arguments).
inline std::string volcano_configmap(const std::string& arguments, const std::string& extra_top = "") {
  std::string conf = "actions: \"enqueue, allocate, backfill\"\n" + extra_top +
                     "tiers:\n- plugins:\n  - name: priority\n  - name: gang\n- plugins:\n"
                     "  - name: drf\n  - name: network-topology-aware\n";
  if (!arguments.empty()) conf += "    arguments:\n" + arguments;
  std::string indented;
  std::size_t start = 0;
  while (start < conf.size()) {
    const std::size_t end = conf.find('\n', start);
    indented += "    " + conf.substr(start, end - start) + "\n";
    start = end == std::string::npos ? conf.size() : end + 1;
  }
  return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: volcano-scheduler-configmap\n"
         "  namespace: volcano-system\ndata:\n  volcano-scheduler.conf: |\n" +
         indented;
}

class VolcanoWorld {
 public:
  using Resources = std::map<std::string, std::string>;

  void node(const std::string& name, const Resources& allocatable) {
    nlohmann::json alloc = nlohmann::json::object();
    for (const auto& [k, v] : allocatable) alloc[k] = v;
    if (!alloc.contains("pods")) alloc["pods"] = "110";
    nodes_.push_back(
        {{"apiVersion", "v1"},
         {"kind", "Node"},
         {"metadata", {{"name", name}, {"labels", {{"kubernetes.io/hostname", name}}}}},
         {"spec", nlohmann::json::object()},
         {"status", {{"allocatable", alloc}, {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}});
  }
  // members: node names (type Node) or HyperNode names (type HyperNode), exact matches.
  void hypernode(const std::string& name, int tier, const std::string& member_type,
                 const std::vector<std::string>& members) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& m : members)
      list.push_back({{"type", member_type}, {"selector", {{"exactMatch", {{"name", m}}}}}});
    hypernodes_.push_back({{"apiVersion", "topology.volcano.sh/v1alpha1"},
                           {"kind", "HyperNode"},
                           {"metadata", {{"name", name}}},
                           {"spec", {{"tier", tier}, {"members", list}}}});
  }
  static nlohmann::json pod(const std::string& name, const Resources& requests) {
    nlohmann::json req = nlohmann::json::object();
    for (const auto& [k, v] : requests) req[k] = v;
    return {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata", {{"name", name}, {"namespace", "default"}, {"uid", "uid-" + name}}},
            {"spec", {{"containers", {{{"name", "main"}, {"resources", {{"requests", req}}}}}}}},
            {"status", {{"phase", "Pending"}}}};
  }
  void bound_pod(const std::string& name, const std::string& node, const Resources& requests) {
    nlohmann::json p = pod(name, requests);
    p["spec"]["nodeName"] = node;
    p["status"]["phase"] = "Running";
    pods_.push_back(p);
  }
  void add_pod(const nlohmann::json& pod) { pods_.push_back(pod); }
  // A Volcano Job of one task; `topology`: its spec.networkTopology (null: none, normal pods).
  static nlohmann::json volcano_job(const std::string& name, int replicas, const Resources& requests,
                                    const nlohmann::json& topology = nullptr) {
    nlohmann::json req = nlohmann::json::object();
    for (const auto& [k, v] : requests) req[k] = v;
    nlohmann::json spec{
        {"minAvailable", replicas},
        {"tasks",
         {{{"name", "worker"},
           {"replicas", replicas},
           {"template",
            {{"spec", {{"containers", {{{"name", "main"}, {"resources", {{"requests", req}}}}}}}}}}}}}};
    if (!topology.is_null()) spec["networkTopology"] = topology;
    return {{"apiVersion", "batch.volcano.sh/v1alpha1"},
            {"kind", "Job"},
            {"metadata", {{"name", name}}},
            {"spec", spec}};
  }

  static nlohmann::json list(const std::string& kind, const std::vector<nlohmann::json>& items) {
    return {{"apiVersion", "v1"}, {"kind", kind}, {"items", items}};
  }

  // `hypertopo place` on these objects, the job and a scheduler ConfigMap (empty: none).
  CapturedRun place(const nlohmann::json& job, const std::string& configmap = "",
                    std::vector<std::string> extra = {}) {
    const auto write = [&](const std::string& file, const std::string& text) {
      write_text(dir_->path() / file, text);
      return (dir_->path() / file).string();
    };
    std::vector<std::string> args{"place",
                                  "--nodes",
                                  write("nodes.json", list("NodeList", nodes_).dump()),
                                  "--topology",
                                  write("hypernodes.json", list("HyperNodeList", hypernodes_).dump()),
                                  "--pods",
                                  write("pods.json", list("PodList", pods_).dump()),
                                  "--job",
                                  write("job.json", job.dump())};
    if (!configmap.empty()) {
      args.push_back("--scheduler-config");
      args.push_back(write("volcano-scheduler-configmap.yaml", configmap));
    }
    args.insert(args.end(), extra.begin(), extra.end());
    return run_captured(cli::run_cli, args);
  }

  // The extender, fed these objects and the ConfigMap's weights, asked to prioritize `pending` over
  // `names` as kube-scheduler asks (ExtenderArgs with nodenames). Host -> score.
  std::map<std::string, std::int64_t> prioritize(const nlohmann::json& pending,
                                                 const std::vector<std::string>& names,
                                                 const std::string& configmap = "") {
    scheduler::ExtenderOptions options;
    if (!configmap.empty()) {
      auto cfg = scheduler::parse_scheduler_config(configmap, "volcano-scheduler-configmap.yaml");
      if (!cfg) {
        ADD_FAILURE() << cfg.error().message();
        return {};
      }
      options.binpack = cfg->binpack;
    }
    scheduler::ExtenderService svc(options);
    if (auto ok = svc.set_hypernodes(hypernodes_); !ok) ADD_FAILURE() << ok.error().message();
    if (auto ok = svc.set_nodes(nodes_); !ok) ADD_FAILURE() << ok.error().message();
    if (auto ok = svc.set_pods(pods_); !ok) ADD_FAILURE() << ok.error().message();
    auto reply = svc.prioritize({{"pod", pending}, {"nodenames", names}});
    if (!reply) {
      ADD_FAILURE() << reply.error().message();
      return {};
    }
    std::map<std::string, std::int64_t> out;
    for (const auto& h : *reply) out[h["host"].get<std::string>()] = h["score"].get<std::int64_t>();
    return out;
  }

  const std::vector<nlohmann::json>& nodes() const { return nodes_; }
  const std::vector<nlohmann::json>& hypernodes() const { return hypernodes_; }
  const std::vector<nlohmann::json>& pods() const { return pods_; }

 private:
  std::vector<nlohmann::json> nodes_, hypernodes_, pods_;
  std::shared_ptr<TempDir> dir_ = std::make_shared<TempDir>();  // shared: a world is returned by value
};

}  // namespace hypertopo::testing
