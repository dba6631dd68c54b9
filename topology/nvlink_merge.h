// topology/nvlink_merge.h: NVLink domains (NVL72 racks) merged into a fabric tree.
//
// An NVLink domain (every node whose GPUs report one clique id "<clusterUUID>.<cliqueId>", from a
// NodeReport or GPU Feature Discovery's nvidia.com/gpu.clique label) becomes a domain with tierName
// `nvlink` that sits under the lowest fabric domain holding all its nodes; its nodes leave their
// fabric domain and become its members. Nodes without an NVLink domain (HGX H100) stay where the
// fabric put them, directly in their leaf domain, so one leaf may hold both NVLink domains and nodes
// (Volcano's CRD and admission policy accept a HyperNode whose members mix the two kinds).
//
// Tier numbers in a mixed cluster (NvlinkTierPolicy), Volcano issue 5732:
//   kShiftEverywhere (default): `nvlink` is tier 1 and every fabric domain moves up one tier in the
//     whole cluster, even in branches without NVLink. A tier number and a tierName then mean the same
//     physical layer everywhere: `leaf` is tier 2 for GB200 and H100 nodes alike, so a job with
//     `highestTierName: leaf` (or `highestTierAllowed: 2`) may use the leaf of either kind.
//   kShiftBranches: only domains with an NVLink domain somewhere below them move up; branches without
//     NVLink keep their tiers. tierNames stay consistent but tier numbers differ per branch (what issue
//     5732 describes as the problem); for schedulers that only match on tier numbers per node pool.
// A tree without NVLink domains is never changed.
//
// Conflicts are reported in tree.report.warnings, never guessed: a clique whose nodes lie under
// different root domains (no fabric domain holds them all) leaves its nodes where the fabric put them;
// a clique spanning several leaves is placed under their lowest common domain and that is reported.
//
//   NvlinkMembership m;
//   m.clique_by_node = {{"gb-001", "dc6e40c4-d722-4357-9ba6-5291dd461278.2"}, ...};
//   auto added = merge_nvlink_domains(tree, m);   // std::expected<std::size_t, Error>: domains added
//   for (const auto& w : tree.report.warnings) std::cerr << w << "\n";
#pragma once

#include <cstddef>
#include <expected>
#include <map>
#include <string>
#include <vector>

#include "errors/error.h"
#include "topology/tree.h"

namespace hypertopo::topology {

inline constexpr const char* kNvlinkTierName = "nvlink";
// Label on each NVLink HyperNode: the clique id it stands for (GPU Feature Discovery's label key).
inline constexpr const char* kNvlinkCliqueLabel = "nvidia.com/gpu.clique";

enum class NvlinkTierPolicy { kShiftEverywhere, kShiftBranches };

// "shift-everywhere" / "shift-branches"; the parse fails naming the accepted values.
const char* to_string(NvlinkTierPolicy policy);
std::expected<NvlinkTierPolicy, Error> parse_nvlink_tier_policy(std::string_view text);

struct NvlinkMergeOptions {
  bool enabled = true;
  NvlinkTierPolicy policy = NvlinkTierPolicy::kShiftEverywhere;
  std::string tier_name = kNvlinkTierName;
};

// Which node is in which NVLink domain, plus what the collector already found suspicious.
struct NvlinkMembership {
  std::map<std::string, std::string> clique_by_node;  // node -> clique id
  std::vector<std::string> warnings;                  // copied into the tree's report
};

// "nvlink-<clique id, sanitised>", shortened with a hash past 63 characters.
std::string nvlink_domain_name(const std::string& clique_id);

// Merges the domains into `tree` as described above and returns how many NVLink domains it added.
// Fails only when a name would collide with an existing domain (the error names both).
std::expected<std::size_t, Error> merge_nvlink_domains(Tree& tree, const NvlinkMembership& membership,
                                                       const NvlinkMergeOptions& options = {});

}  // namespace hypertopo::topology
