#include "scheduler/placement/nearest_room.h"

#include <cstdint>
#include <tuple>
#include <vector>

#include "scheduler/index/node_affinity.h"

namespace hypertopo::scheduler {

int nearest_room(const TopologyIndex& index, const PodSetRequest& ps, const RoomSearch& search) {
  for (int d = search.start; d >= 0; d = index.domain(d).parent) {
    int best = -1;
    std::int64_t best_pref = 0;
    int best_taints = 0;
    int best_mates = 0;
    std::vector<int> stack{d};
    std::vector<int> order;
    while (!stack.empty()) {
      const int dom = stack.back();
      stack.pop_back();
      for (int n : index.domain(dom).nodes) order.push_back(n);
      const auto& children = index.domain(dom).children;
      for (auto it = children.rbegin(); it != children.rend(); ++it) stack.push_back(*it);
    }
    for (int n : order) {
      if (n == search.exclude || (search.usable && !search.usable(n))) continue;
      const NodeSpec& spec = index.node(n).spec;
      const std::int64_t pref = ps.affinity.preference(spec);
      const int taints = intolerable_prefer_no_schedule(spec, ps.tolerations);
      int mates = 0;
      if (search.mates) {
        if (auto it = search.mates->find(index.node(n).domain); it != search.mates->end()) mates = it->second;
      }
      if (best < 0 || std::tie(pref, best_taints, mates) > std::tie(best_pref, taints, best_mates)) {
        best = n;
        best_pref = pref;
        best_taints = taints;
        best_mates = mates;
      }
    }
    if (best >= 0) return best;
    if (d == search.limit) break;
  }
  return -1;
}

}  // namespace hypertopo::scheduler
