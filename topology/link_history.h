// topology/link_history.h: links that keep going down between discovery runs (LinkFlapping).
//
// One build sees a link up or down (or missing); only a history of builds shows a link that goes
// down, comes back, and goes down again. LinkHistory remembers, for every link some recent build
// found down or missing (a LinkDown or MissingUplinks bad link, keyed by its two ends), whether
// each of the last `window` recorded builds had it down. A link with at least `min_episodes`
// separate down episodes in that window that is up now is marked LinkFlapping on the domains it
// was last bad in; a link that is down now stays LinkDown (the worse reason). It lives as long as
// its owner (the agent's leader loop): a new leader starts with no history.
//
//   LinkHistory history({.window = 10, .min_episodes = 2});
//   history.apply(tree, /*record=*/sources_ran_fresh && run_complete);   // after every build
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "topology/tree.h"

namespace hypertopo::topology {

struct LinkHistoryOptions {
  std::size_t window = 10;       // recorded builds remembered per link
  std::size_t min_episodes = 2;  // separate down episodes in the window that make a link flapping
};

class LinkHistory {
 public:
  explicit LinkHistory(LinkHistoryOptions options = {});

  // With `record`, adds this build (every link not bad in it counts as up); then marks the links
  // that flap and are up in it. Without `record` (a build from cached source results, or an
  // incomplete one, which proves nothing about the links it lacks), only marks, from the history
  // as it is. Returns the LinkFlapping bad links added.
  std::size_t apply(Tree& tree, bool record);

  std::size_t tracked() const { return links_.size(); }

 private:
  struct Track {
    std::deque<bool> down;          // oldest first, at most options_.window entries
    std::set<std::string> domains;  // where it was last bad
    BadLink last;                   // how it was last seen bad (ends, uplink)
  };
  LinkHistoryOptions options_;
  std::map<std::pair<std::string, std::string>, Track> links_;
};

}  // namespace hypertopo::topology
