#include "topology/link_history.h"

#include <algorithm>
#include <tuple>

namespace hypertopo::topology {
namespace {

bool is_down(HealthReason r) { return r == HealthReason::kLinkDown || r == HealthReason::kMissingUplinks; }

std::size_t episodes(const std::deque<bool>& down) {
  std::size_t n = 0;
  bool previous = false;
  for (bool d : down) {
    if (d && !previous) ++n;
    previous = d;
  }
  return n;
}

}  // namespace

LinkHistory::LinkHistory(LinkHistoryOptions options) : options_(options) {
  options_.window = std::max<std::size_t>(options_.window, 2);
  options_.min_episodes = std::max<std::size_t>(options_.min_episodes, 1);
}

std::size_t LinkHistory::apply(Tree& tree, bool record) {
  // The links this build has down, and the domains each is bad in.
  std::map<std::pair<std::string, std::string>, std::pair<BadLink, std::set<std::string>>> now_down;
  for (const auto& d : tree.domains()) {
    for (const auto& b : d.health.bad_links) {
      if (!is_down(b.reason)) continue;
      auto& entry = now_down[{b.end_a, b.end_b}];
      entry.first = b;
      entry.second.insert(d.name);
    }
  }
  if (record) {
    for (auto& [key, track] : links_) track.down.push_back(now_down.contains(key));
    for (auto& [key, seen] : now_down) {
      auto [it, fresh] = links_.try_emplace(key);
      if (fresh) it->second.down.push_back(true);
      it->second.last = seen.first;
      it->second.domains = seen.second;
    }
    for (auto it = links_.begin(); it != links_.end();) {
      auto& down = it->second.down;
      while (down.size() > options_.window) down.pop_front();
      // Forgotten once no build in the window had it down.
      if (std::none_of(down.begin(), down.end(), [](bool d) { return d; })) {
        it = links_.erase(it);
      } else {
        ++it;
      }
    }
  }
  std::size_t added = 0;
  for (const auto& [key, track] : links_) {
    if (now_down.contains(key)) continue;
    const std::size_t n = episodes(track.down);
    if (n < options_.min_episodes) continue;
    const auto downs = static_cast<std::size_t>(std::count(track.down.begin(), track.down.end(), true));
    BadLink b;
    b.reason = HealthReason::kLinkFlapping;
    b.end_a = track.last.end_a;
    b.end_b = track.last.end_b;
    b.expected = "up";
    b.seen =
        "down in " + std::to_string(downs) + " of the last " + std::to_string(track.down.size()) + " runs";
    b.uplink = track.last.uplink;
    for (const auto& name : track.domains) {
      auto id = tree.find(name);
      if (!id) continue;
      auto& health = tree.domain(*id).health;
      if (!health.assessed) continue;
      health.bad_links.push_back(b);
      // Worst first, then by name, as the health pass orders them.
      std::sort(health.bad_links.begin(), health.bad_links.end(), [](const BadLink& x, const BadLink& y) {
        if (x.reason != y.reason) return x.reason > y.reason;
        return std::tie(x.end_a, x.end_b) < std::tie(y.end_a, y.end_b);
      });
      ++added;
    }
  }
  return added;
}

}  // namespace hypertopo::topology
