#include "topology/fabric_health.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <vector>

namespace hypertopo::topology {
namespace {

constexpr std::uint8_t kPortDown = 1;
constexpr std::uint8_t kPhysLinkUp = 5;

// The most common value of a histogram, ties to the larger (a fabric built to one width has most
// of its links at it; a tie between two leaves, one with a lost uplink, expects the full count).
template <typename T>
T most_common(const std::map<T, std::size_t>& counts) {
  T best{};
  std::size_t best_count = 0;
  for (const auto& [value, count] : counts) {
    if (count >= best_count) {
      best = value;
      best_count = count;
    }
  }
  return best;
}

// The smallest non-zero of the values (0 when none is known).
template <typename T>
T least_known(std::initializer_list<T> values) {
  T out = 0;
  for (T v : values) {
    if (v != 0 && (out == 0 || v < out)) out = v;
  }
  return out;
}

// A histogram of the few values the links of one group take (one or two widths, speeds): a flat
// list beats a tree on the per-link path.
struct SmallHistogram {
  std::vector<std::pair<std::uint32_t, std::size_t>> counts;
  void add(std::uint32_t value) {
    for (auto& [v, n] : counts) {
      if (v == value) {
        ++n;
        return;
      }
    }
    counts.emplace_back(value, 1);
  }
  std::uint32_t most_common() const {
    std::uint32_t best = 0;
    std::size_t best_count = 0;
    for (const auto& [v, n] : counts) {
      if (n > best_count || (n == best_count && v > best)) {
        best = v;
        best_count = n;
      }
    }
    return best;
  }
};

// Kept small: one per link of a 100,000-endpoint fabric, written once and read twice.
struct ClassifiedLink {
  VertexId lo = 0, hi = 0;  // lo: the end nearer the hosts (an endpoint, or the lower-level switch)
  int lo_port = 0, hi_port = 0;
  std::uint32_t speed = 0;      // active per-lane Mb/s, 0 unknown
  std::uint32_t speed_cap = 0;  // the most both ends enable and support
  std::int16_t lo_level = 0, hi_level = 0;
  std::uint8_t width = 0;  // active lanes, 0 unknown
  std::uint8_t width_cap = 0;
  bool down = false;
};

struct DomainTally {
  double uplink_expected = 0, uplink_seen = 0;
  double internal_expected = 0, internal_seen = 0;
  std::vector<BadLink> bad;
};

}  // namespace

std::optional<LinkRate> parse_link_rate(std::string_view rate) {
  auto x = rate.find('x');
  if (x == std::string_view::npos || x == 0) return std::nullopt;
  unsigned lanes = 0;
  for (char c : rate.substr(0, x)) {
    if (c < '0' || c > '9') return std::nullopt;
    lanes = lanes * 10 + static_cast<unsigned>(c - '0');
    if (lanes > 64) return std::nullopt;
  }
  const auto mbps = lane_speed_of(rate.substr(x + 1));
  if (!mbps) return std::nullopt;
  return LinkRate{lanes, *mbps};
}

std::optional<std::uint32_t> lane_speed_of(std::string_view name) {
  static const std::pair<std::string_view, std::uint32_t> kSpeeds[] = {
      {"SDR", 2500},  {"DDR", 5000},  {"QDR", 10000},  {"FDR10", 10312}, {"FDR", 14062},
      {"EDR", 25781}, {"HDR", 53125}, {"NDR", 106250}, {"XDR", 212500}};
  for (const auto& [text, mbps] : kSpeeds) {
    if (name == text) return mbps;
  }
  return std::nullopt;
}

std::optional<LinkRate> parse_sysfs_rate(std::string_view text) {
  // "<Gb/s> Gb/sec (<lanes>X <speed>)": the parenthesis holds all we need.
  const auto open = text.find('(');
  const auto close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return std::nullopt;
  const auto inside = text.substr(open + 1, close - open - 1);
  const auto x = inside.find_first_of("Xx");
  if (x == std::string_view::npos || x == 0) return std::nullopt;
  unsigned lanes = 0;
  for (char c : inside.substr(0, x)) {
    if (c < '0' || c > '9') return std::nullopt;
    lanes = lanes * 10 + static_cast<unsigned>(c - '0');
    if (lanes > 64) return std::nullopt;
  }
  auto name = inside.substr(x + 1);
  while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
  const auto mbps = lane_speed_of(name);
  if (!mbps || lanes == 0) return std::nullopt;
  return LinkRate{lanes, *mbps};
}

namespace {

// Lower-case letters only: "4: ACTIVE" -> "active", "Link Up" -> "linkup".
std::string state_word(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c >= 'A' && c <= 'Z') out += static_cast<char>(c - 'A' + 'a');
    if (c >= 'a' && c <= 'z') out += c;
  }
  return out;
}

}  // namespace

std::uint8_t port_state_code(std::string_view text) {
  const std::string w = state_word(text);
  if (w == "down") return 1;
  if (w == "init" || w == "initialize") return 2;
  if (w == "armed") return 3;
  if (w == "active") return 4;
  return 0;
}

std::uint8_t phys_state_code(std::string_view text) {
  static const std::pair<std::string_view, std::uint8_t> kStates[] = {
      {"sleep", 1},    {"polling", 2}, {"disabled", 3},          {"portconfigurationtraining", 4},
      {"training", 4}, {"linkup", 5},  {"linkerrorrecovery", 6}, {"phytest", 7}};
  const std::string w = state_word(text);
  for (const auto& [name, code] : kStates) {
    if (w == name) return code;
  }
  return 0;
}

std::string width_text(unsigned lanes) { return std::to_string(lanes) + "x"; }

std::string speed_text(std::uint32_t lane_mbps) {
  switch (lane_mbps) {
    case 2500:
      return "SDR";
    case 5000:
      return "DDR";
    case 10000:
      return "QDR";
    case 10312:
      return "FDR10";
    case 14062:
      return "FDR";
    case 25781:
      return "EDR";
    case 53125:
      return "HDR";
    case 106250:
      return "NDR";
    case 212500:
      return "XDR";
    default:
      return std::to_string(lane_mbps) + " Mb/s";
  }
}

void assess_fabric_health(const BuiltFabric& fabric, Tree& tree) {
  const FabricGraph& graph = *fabric.graph;
  const auto& vertices = graph.vertices();
  const auto& links = graph.links();
  auto is_switch = [&](VertexId v) { return fabric.switch_level[v] > 0; };
  // Only compute endpoints have a host; the vertex records themselves stay out of the hot loop.
  auto is_compute = [&](VertexId v) { return fabric.endpoint_host[v] >= 0; };
  auto end_name = [&](VertexId v, int port) {
    std::string name;
    if (is_switch(v)) {
      name = fabric.switch_names[v];
    } else if (is_compute(v)) {
      name = fabric.host_names[static_cast<std::size_t>(fabric.endpoint_host[v])];
      if (!vertices[v].device.empty()) name += " " + vertices[v].device;
    } else {
      name = vertices[v].id;
    }
    return name + "[" + std::to_string(port) + "]";
  };

  // 1. The links of the tree, each oriented from the hosts upwards, with what both ends say.
  std::vector<ClassifiedLink> classified;
  classified.reserve(links.size());
  std::string last_rate_text;
  std::optional<LinkRate> last_rate;
  for (std::size_t i = 0; i < links.size(); ++i) {
    const Link& l = links[i];
    ClassifiedLink c;
    if (is_switch(l.a) && is_switch(l.b)) {
      const bool a_lower = fabric.switch_level[l.a] <= fabric.switch_level[l.b];
      c.lo = a_lower ? l.a : l.b;
      c.hi = a_lower ? l.b : l.a;
      c.lo_port = a_lower ? l.port_a : l.port_b;
      c.hi_port = a_lower ? l.port_b : l.port_a;
    } else if (is_switch(l.a) && is_compute(l.b)) {
      c.lo = l.b, c.hi = l.a, c.lo_port = l.port_b, c.hi_port = l.port_a;
    } else if (is_switch(l.b) && is_compute(l.a)) {
      c.lo = l.a, c.hi = l.b, c.lo_port = l.port_a, c.hi_port = l.port_b;
    } else {
      continue;
    }
    c.lo_level = static_cast<std::int16_t>(is_switch(c.lo) ? fabric.switch_level[c.lo] : 0);
    c.hi_level = static_cast<std::int16_t>(fabric.switch_level[c.hi]);
    const PortFacts& fa = l.end_a;
    const PortFacts& fb = l.end_b;
    if (fa.known() || fb.known()) {
      c.width = least_known<std::uint8_t>({fa.width_active, fb.width_active});
      c.speed = least_known<std::uint32_t>({fa.speed_active, fb.speed_active});
      c.width_cap = least_known<std::uint8_t>(
          {fa.width_enabled, fa.width_supported, fb.width_enabled, fb.width_supported});
      c.speed_cap = least_known<std::uint32_t>(
          {fa.speed_enabled, fa.speed_supported, fb.speed_enabled, fb.speed_supported});
      c.down = fa.state == kPortDown || fb.state == kPortDown ||
               (fa.phys_state != 0 && fa.phys_state != kPhysLinkUp) ||
               (fb.phys_state != 0 && fb.phys_state != kPhysLinkUp);
    }
    if (c.width == 0 && c.speed == 0 && !l.rate.empty()) {
      // Most links of a fabric share one rate text: parse each distinct one once in a row.
      if (l.rate != last_rate_text) {
        last_rate_text = l.rate;
        last_rate = parse_link_rate(l.rate);
      }
      if (last_rate) {
        c.width = static_cast<std::uint8_t>(last_rate->lanes);
        c.speed = last_rate->lane_mbps;
      }
    }
    classified.push_back(c);
  }

  // 2. What siblings (links between the same two levels) trained at.
  int top_level = 0;
  for (VertexId v = 0; v < vertices.size(); ++v) top_level = std::max(top_level, fabric.switch_level[v]);
  const std::size_t stride = static_cast<std::size_t>(top_level) + 1;
  auto group_of = [&](int lo, int hi) {
    return static_cast<std::size_t>(lo) * stride + static_cast<std::size_t>(hi);
  };
  std::vector<SmallHistogram> widths(stride * stride);
  std::vector<SmallHistogram> speeds(stride * stride);
  for (const auto& c : classified) {
    if (c.down) continue;
    if (c.width) widths[group_of(c.lo_level, c.hi_level)].add(c.width);
    if (c.speed) speeds[group_of(c.lo_level, c.hi_level)].add(c.speed);
  }
  std::vector<std::pair<unsigned, std::uint32_t>> sibling_rate(stride * stride);
  for (std::size_t g = 0; g < sibling_rate.size(); ++g) {
    sibling_rate[g] = {widths[g].most_common(), speeds[g].most_common()};
  }

  // 3. Each link against its ends and its siblings, tallied into the domains it belongs to.
  std::vector<DomainTally> tally(tree.size());
  auto home_of = [&](VertexId v) -> std::int64_t { return is_switch(v) ? fabric.switch_home[v] : -1; };
  auto holds = [&](std::int64_t ancestor, std::int64_t d) {
    for (; d >= 0; d = tree.domain(static_cast<DomainId>(d)).parent
                           ? static_cast<std::int64_t>(*tree.domain(static_cast<DomainId>(d)).parent)
                           : -1) {
      if (d == ancestor) return true;
    }
    return false;
  };
  auto parent_of = [&](std::int64_t d) -> std::int64_t {
    const auto& p = tree.domain(static_cast<DomainId>(d)).parent;
    return p ? static_cast<std::int64_t>(*p) : -1;
  };
  // Calls add(domain, uplink) for the domains a link between `lo` and `hi` counts in: it is an
  // uplink of the lower end's domain and of its ancestors below the lowest domain holding both ends,
  // and an internal link of that lowest common domain.
  auto attribute = [&](VertexId lo, VertexId hi, auto&& add) {
    const std::int64_t top = home_of(hi);
    std::int64_t d = is_switch(lo) ? home_of(lo) : top;
    for (; d >= 0 && !holds(d, top); d = parent_of(d)) add(d, true);
    if (d >= 0) add(d, false);
  };

  for (const auto& c : classified) {
    const auto& [sib_width, sib_speed] = sibling_rate[group_of(c.lo_level, c.hi_level)];
    const unsigned expected_width =
        std::max(sib_width, c.width_cap == 0 || c.width_cap > 64 ? 0u : c.width_cap);
    const std::uint32_t expected_speed = std::max(sib_speed, c.speed_cap);
    // Most links are healthy: a BadLink (strings and all) is only made for one that is not.
    auto make = [&](HealthReason reason, std::string expected, std::string seen) {
      BadLink b;
      b.reason = reason;
      b.end_a = end_name(c.lo, c.lo_port);
      b.end_b = end_name(c.hi, c.hi_port);
      if (is_compute(c.lo)) b.host = fabric.host_names[static_cast<std::size_t>(fabric.endpoint_host[c.lo])];
      b.expected = std::move(expected);
      b.seen = std::move(seen);
      return b;
    };
    // Bandwidth in lane-Mb/s; a link whose source says nothing of its rate counts as one unit.
    const unsigned want_w = expected_width ? expected_width : (c.width ? c.width : 1);
    const std::uint32_t want_s = expected_speed ? expected_speed : (c.speed ? c.speed : 1);
    const double expected_bw = double(want_w) * want_s;
    const double seen_bw = c.down ? 0.0 : double(c.width ? c.width : want_w) * (c.speed ? c.speed : want_s);
    auto count_in_domains = [&](const BadLink* bad) {
      attribute(c.lo, c.hi, [&](std::int64_t d, bool uplink) {
        auto& t = tally[static_cast<std::size_t>(d)];
        (uplink ? t.uplink_expected : t.internal_expected) += expected_bw;
        (uplink ? t.uplink_seen : t.internal_seen) += std::min(seen_bw, expected_bw);
        if (bad) {
          t.bad.push_back(*bad);
          t.bad.back().uplink = uplink;
        }
      });
    };
    if (c.down) {
      const BadLink bad = make(HealthReason::kLinkDown, "up", "down");
      count_in_domains(&bad);
    } else if (c.width != 0 && c.width < expected_width) {
      const BadLink bad =
          make(HealthReason::kDegradedLinkWidth, width_text(expected_width), width_text(c.width));
      count_in_domains(&bad);
    } else if (c.speed != 0 && c.speed < expected_speed) {
      const BadLink bad =
          make(HealthReason::kDegradedLinkSpeed, speed_text(expected_speed), speed_text(c.speed));
      count_in_domains(&bad);
    } else {
      count_in_domains(nullptr);
    }
  }

  // 4. Uplinks missing against the other switches of the same level.
  std::vector<std::uint32_t> uplink_count(vertices.size(), 0);
  std::map<int, std::vector<VertexId>> switches_by_level;
  for (VertexId v = 0; v < vertices.size(); ++v) {
    if (is_switch(v) && fabric.switch_home[v] >= 0) switches_by_level[fabric.switch_level[v]].push_back(v);
  }
  for (const auto& c : classified) {
    if (c.lo_level > 0 && c.hi_level > c.lo_level) ++uplink_count[c.lo];
  }
  for (const auto& [lv, group] : switches_by_level) {
    if (group.size() < 2) continue;
    std::map<std::size_t, std::size_t> counts;
    for (VertexId s : group) ++counts[uplink_count[s]];
    const std::size_t expected = most_common(counts);
    if (expected == 0) continue;
    // The upper switches most of the level reaches: those a short switch lacks are named.
    std::map<VertexId, std::size_t> reached_by;
    bool any_short = false;
    for (VertexId s : group) any_short = any_short || uplink_count[s] < expected;
    if (!any_short) continue;
    // Only a level with a short switch pays for the peer lists.
    std::unordered_map<VertexId, std::vector<VertexId>> uppers;
    for (const auto& c : classified) {
      if (c.lo_level == lv && c.hi_level > c.lo_level) uppers[c.lo].push_back(c.hi);
    }
    for (VertexId s : group) {
      std::vector<VertexId> distinct = uppers[s];
      std::sort(distinct.begin(), distinct.end());
      distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
      for (VertexId u : distinct) ++reached_by[u];
    }
    const auto [sib_width, sib_speed] =
        lv + 1 <= top_level ? sibling_rate[group_of(lv, lv + 1)] : std::pair<unsigned, std::uint32_t>{};
    const double per_uplink = double(sib_width ? sib_width : 1) * (sib_speed ? sib_speed : 1);
    for (VertexId s : group) {
      const std::size_t have = uplink_count[s];
      if (have >= expected) continue;
      const std::set<VertexId> mine(uppers[s].begin(), uppers[s].end());
      std::string lacking;
      std::size_t named = 0;
      for (const auto& [u, count] : reached_by) {
        if (mine.contains(u) || count * 2 < group.size()) continue;
        if (named++ == 4) {
          lacking += ", ...";
          break;
        }
        lacking += (lacking.empty() ? "" : ", ") + fabric.switch_names[u];
      }
      BadLink b;
      b.reason = HealthReason::kMissingUplinks;
      b.end_a = fabric.switch_names[s];
      b.end_b = lacking;
      b.expected = std::to_string(expected) + " uplinks";
      b.seen = std::to_string(have) + (have == 1 ? " uplink" : " uplinks");
      b.uplink = true;
      auto& t = tally[static_cast<std::size_t>(fabric.switch_home[s])];
      t.uplink_expected += per_uplink * double(expected - have);
      t.bad.push_back(std::move(b));
    }
  }

  // 5. Onto the domains: worst first, then by name, so messages are stable between runs.
  for (DomainId id = 0; id < tree.size(); ++id) {
    auto& t = tally[id];
    DomainHealth& h = tree.domain(id).health;
    h = {};
    h.assessed = true;
    h.uplink_healthy = t.uplink_expected > 0 ? t.uplink_seen / t.uplink_expected : 1.0;
    h.internal_healthy = t.internal_expected > 0 ? t.internal_seen / t.internal_expected : 1.0;
    std::sort(t.bad.begin(), t.bad.end(), [](const BadLink& x, const BadLink& y) {
      if (x.reason != y.reason) return x.reason > y.reason;
      return std::tie(x.end_a, x.end_b) < std::tie(y.end_a, y.end_b);
    });
    h.bad_links = std::move(t.bad);
  }
}

}  // namespace hypertopo::topology
