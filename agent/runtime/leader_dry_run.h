// agent/runtime/leader_dry_run.h: one leader cycle planned and nothing written: what `hypertopo
// agent --role leader --dry-run` shows an admin before the leader may act.
//
// The cycle is the leader's own (agent_rebuild.cpp): the config's enabled leader sources run once,
// over the cluster's NodeReports and the Nodes its nodeSelector takes; the tree is built with the
// config's builder keys; the HyperNode reconciler compares it with the HyperNodes we own in dry-run
// mode, and the node label export (exports.nodeLabels) is planned over every Node, with the same
// rule for taking things away (nothing while discovery is incomplete or deletions are held). Only
// lists and gets reach the API server (and a get of the Secret a source names); no create, update,
// patch or delete, no Event, no Lease.
//
//   auto plan = plan_leader_cycle(config, {.client = client.get(), .namespace_ = "hypertopo-system"});
//   if (plan) std::cout << write_plan_text(plan->writes);
#pragma once

#include <expected>
#include <filesystem>
#include <string>
#include <vector>

#include "agent/config/agent_config.h"
#include "agent/reconciler/write_plan.h"
#include "errors/error.h"
#include "k8s/client/kube_client.h"
#include "telemetry/log.h"

namespace hypertopo::agent {

struct LeaderDryRunDeps {
  k8s::KubeClient* client = nullptr;  // required; only reads go out
  std::string namespace_;             // of the NodeReports and of a source's Secret without one
  std::filesystem::path work_dir;     // scratch for sources (simulator sockets); may be empty
  telemetry::Logger log;              // the sources' debug lines; empty: none
};

struct LeaderPlan {
  std::vector<PlannedWrite> writes;    // HyperNodes by name, then Nodes by name
  ReconcileResult hypernodes;          // the dry-run reconcile (its counts, its summary line)
  NodeLabelPlan node_labels;           // patches the export would send (none when it is off and owns nothing)
  bool export_on = false;              // exports.nodeLabels
  bool complete = true;                // every source ran
  std::vector<std::string> warnings;   // from the sources and the build, each once
  std::size_t reports = 0, nodes = 0;  // NodeReports read, Nodes the selector took
};

std::expected<LeaderPlan, Error> plan_leader_cycle(const AgentConfig& config, const LeaderDryRunDeps& deps);

}  // namespace hypertopo::agent
