// scheduler/placement/placement_engine.h: gang placement on the TopologyIndex.
//
// For each pod set the engine counts exactly how many pods fit on every node (never a dry run per
// domain), sums those counts bottom-up in units of the slice layer that applies at each tier, and
// then:
//   1. picks the job domain at the lowest feasible tier up to the widest allowed one, preferring the
//      highest Volcano HyperNode binpack score, then the tightest fit, then tree order;
//   2. splits the pods down the tree, each child receiving whole slices of its layer (partitions
//      are a slice layer at the partition's tier), fullest-capacity first with a best fit for the
//      last piece, so the gang touches as few domains as possible;
//   3. numbers pods in tree order, so consecutive ranks share the lowest-tier domain.
// Pod sets without a topology are normal pods ranked by Volcano's fading-tier node score.
// A job-level topology (JobRequest::mode/level) binds all pod sets into one domain: domains are
// tried lowest tier first, in tree order, and the first that holds every pod set wins.
// Placed pods are added to the index; a job that does not fully fit leaves the index unchanged.
// Fabric health (fabric_health_mode.h): with prefer-healthy, a degraded domain is the last choice
// among the domains of its tier that hold the gang, and degraded child domains and nodes whose own
// link is degraded are the last to receive pods; with exclude they receive none. Each pod set says
// in `fabric_health` which degraded domain it avoided or used, and why.
//
//   PlacementEngine engine(index, BinpackWeights{});
//   auto result = engine.place(job);          // std::expected<JobPlacement, Error>
//   if (result && result->fit) { for (auto& a : result->pod_sets[0].assignment) ... }
#pragma once

#include <cstdint>
#include <expected>
#include <string>
#include <vector>

#include "errors/error.h"
#include "scheduler/index/topology_index.h"
#include "scheduler/placement/fabric_health_mode.h"
#include "scheduler/placement/job_request.h"
#include "scheduler/placement/volcano_score.h"

namespace hypertopo::scheduler {

struct NodeAssignment {
  int node = -1;
  std::string node_name;
  std::int32_t count = 0;
  std::int32_t first_rank = 0;           // pods first_rank .. first_rank + count - 1 land here
  std::vector<std::string> domain_path;  // from the top real tier down to the node's domain
};

struct PodSetPlacement {
  std::string name;
  bool fit = false;
  std::string reason;
  std::int32_t placed = 0;                 // pods placed (fewer than asked when minPartitions allowed it)
  int tier = 0;                            // tier of the chosen job domain (root tier when spread)
  std::vector<std::string> domains;        // the chosen job domain(s)
  double score = 0.0;                      // 100 * weight * binpack of the chosen domain
  std::vector<NodeAssignment> assignment;  // in rank order
  // How fabric health shaped the choice, one sentence each: the degraded domain avoided or used
  // (with its FabricDegraded reason), the degraded nodes given pods last. Empty when it did not.
  std::vector<std::string> fabric_health;
};

struct JobPlacement {
  bool fit = false;
  std::string reason;
  std::vector<PodSetPlacement> pod_sets;
};

class PlacementEngine {
 public:
  PlacementEngine(TopologyIndex& index, BinpackWeights weights,
                  FabricHealthMode health = FabricHealthMode::kPreferHealthy);

  // Errors are for inconsistent requests (unknown tier, slice size not dividing the count, ...);
  // a request that simply does not fit returns fit = false with a reason.
  std::expected<JobPlacement, Error> place(const JobRequest& job);

  // The same, with only the nodes inside `domain` counted (a gang that grows or is completed
  // around pods already bound there).
  std::expected<JobPlacement, Error> place_within(const JobRequest& job, int domain);

  // Removes a placement's pods from the index again (a job leaving).
  void release(const JobRequest& job, const JobPlacement& placement);

 private:
  struct Layer {
    int tier;
    std::int32_t size;
  };
  std::expected<PodSetPlacement, Error> place_pod_set(const PodSetRequest& ps);
  std::expected<JobPlacement, Error> place_pod_sets(const JobRequest& job);
  bool in_scope(int node) const;
  std::int32_t granularity(int tier) const;
  void compute_fit_counts(const PodSetRequest& ps);
  void compute_capacities();
  void distribute(int domain, std::int64_t pods, std::vector<std::pair<int, std::int32_t>>& out);
  // Degraded and considered so by the mode (never under ignore).
  bool degraded_domain(int domain) const;
  bool degraded_node(int node) const;
  // Under exclude: what keeps `domain`'s capacity below what it would hold, as a sentence.
  std::string exclusion_cause(int domain) const;
  void note_degraded_pieces(int chosen, const std::vector<std::pair<int, std::int32_t>>& pieces,
                            PodSetPlacement& result) const;

  TopologyIndex& index_;
  BinpackWeights weights_;
  FabricHealthMode health_;
  std::vector<int> domains_by_tier_;  // every domain, lower tiers first (children before parents)
  // Per placement scratch.
  std::vector<Layer> layers_;  // tier descending
  std::vector<std::int64_t> node_fit_;
  std::vector<std::int64_t> domain_cap_;
  std::vector<std::int64_t> open_cap_;  // under exclude: the capacity were nothing excluded
  ResourceAmounts request_total_;
  std::string excluded_nodes_;  // nodes the pod set's node constraints drop, by reason ("" when none)
  int scope_ = -1;              // when >= 0, only nodes inside this domain count (job-level topology)
};

}  // namespace hypertopo::scheduler
