#include "topology/exporters/slurm_topology.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <functional>
#include <map>
#include <tuple>

namespace hypertopo::topology::exporters {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

struct SplitName {
  std::string prefix;
  std::size_t width = 0;  // 0: no zero padding (natural numbers), else the fixed digit count
  unsigned long long number = 0;
  bool numeric = false;
};

SplitName split_name(const std::string& name) {
  SplitName s;
  std::size_t end = name.size();
  std::size_t start = end;
  while (start > 0 && is_digit(name[start - 1])) --start;
  // Very long digit runs would overflow; treat them as plain names.
  if (start == end || end - start > 18) {
    s.prefix = name;
    return s;
  }
  s.prefix = name.substr(0, start);
  std::string_view digits(name.data() + start, end - start);
  std::from_chars(digits.data(), digits.data() + digits.size(), s.number);
  s.width = (digits.size() > 1 && digits.front() == '0') ? digits.size() : 0;
  s.numeric = true;
  return s;
}

std::string pad(unsigned long long n, std::size_t width) {
  std::string text = std::to_string(n);
  if (text.size() < width) text.insert(0, width - text.size(), '0');
  return text;
}

std::string comment(const Domain& d) {
  return "# " + d.name + ": tier " + std::to_string(d.tier) + " (" + d.tier_name + ")\n";
}

std::vector<DomainId> sorted_children(const Tree& tree, const std::vector<DomainId>& ids) {
  std::vector<DomainId> out = ids;
  std::ranges::sort(out, [&](DomainId a, DomainId b) { return tree.domain(a).name < tree.domain(b).name; });
  return out;
}

// Depth-first from the roots, highest tier first at each level: the order Slurm reads best.
std::vector<DomainId> depth_first(const Tree& tree) {
  std::vector<DomainId> order;
  std::function<void(DomainId)> visit = [&](DomainId id) {
    order.push_back(id);
    for (DomainId c : sorted_children(tree, tree.domain(id).children)) visit(c);
  };
  for (DomainId r : sorted_children(tree, tree.roots())) visit(r);
  return order;
}

std::string switch_name(const Domain& d) { return fit_member_name(d.name); }

}  // namespace

std::string compact_hostlist(std::vector<std::string> names) {
  std::ranges::sort(names);
  names.erase(std::unique(names.begin(), names.end()), names.end());
  // (prefix, width) -> numbers; plain names kept apart.
  std::map<std::pair<std::string, std::size_t>, std::vector<unsigned long long>> groups;
  std::vector<std::string> plain;
  for (const auto& n : names) {
    SplitName s = split_name(n);
    if (!s.numeric) {
      plain.push_back(n);
    } else {
      groups[{s.prefix, s.width}].push_back(s.number);
    }
  }
  std::vector<std::string> parts = plain;
  for (auto& [key, numbers] : groups) {
    const auto& [prefix, width] = key;
    std::ranges::sort(numbers);
    if (numbers.size() == 1) {
      parts.push_back(prefix + pad(numbers.front(), width));
      continue;
    }
    std::string ranges;
    for (std::size_t i = 0; i < numbers.size();) {
      std::size_t j = i;
      while (j + 1 < numbers.size() && numbers[j + 1] == numbers[j] + 1) ++j;
      if (!ranges.empty()) ranges += ',';
      ranges += pad(numbers[i], width);
      if (j > i) ranges += "-" + pad(numbers[j], width);
      i = j + 1;
    }
    parts.push_back(prefix + "[" + ranges + "]");
  }
  std::ranges::sort(parts);
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ",") + p;
  return out;
}

std::expected<std::vector<std::string>, Error> expand_hostlist(std::string_view hostlist) {
  std::vector<std::string> out;
  auto bad = [&](std::string_view why) {
    return std::unexpected(
        Error(ErrorCode::kParse, "host list '" + std::string(hostlist) + "': " + std::string(why)));
  };
  std::size_t i = 0;
  while (i < hostlist.size()) {
    // One item: prefix, optionally [ranges], up to a comma outside brackets.
    std::size_t open = hostlist.find_first_of("[,", i);
    if (open == std::string_view::npos || hostlist[open] == ',') {
      std::size_t end = open == std::string_view::npos ? hostlist.size() : open;
      if (end == i) return bad("empty name");
      out.emplace_back(hostlist.substr(i, end - i));
      i = end + 1;
      continue;
    }
    std::string prefix(hostlist.substr(i, open - i));
    std::size_t close = hostlist.find(']', open);
    if (close == std::string_view::npos) return bad("unclosed '['");
    std::string_view inside = hostlist.substr(open + 1, close - open - 1);
    std::size_t pos = 0;
    while (pos <= inside.size()) {
      std::size_t comma = inside.find(',', pos);
      std::string_view range =
          inside.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
      std::size_t dash = range.find('-');
      std::string_view lo = range.substr(0, dash);
      std::string_view hi = dash == std::string_view::npos ? lo : range.substr(dash + 1);
      unsigned long long a = 0, b = 0;
      auto ra = std::from_chars(lo.data(), lo.data() + lo.size(), a);
      auto rb = std::from_chars(hi.data(), hi.data() + hi.size(), b);
      if (lo.empty() || hi.empty() || ra.ptr != lo.data() + lo.size() || rb.ptr != hi.data() + hi.size() ||
          b < a)
        return bad("bad range '" + std::string(range) + "'");
      if (b - a > 1000000) return bad("range too large");
      const std::size_t width = (lo.size() > 1 && lo.front() == '0') ? lo.size() : 0;
      for (auto n = a; n <= b; ++n) out.push_back(prefix + pad(n, width));
      if (comma == std::string_view::npos) break;
      pos = comma + 1;
    }
    i = close + 1;
    if (i < hostlist.size()) {
      if (hostlist[i] != ',') return bad("text after ']'");
      ++i;
    }
  }
  return out;
}

std::string render_slurm_tree_conf(const Tree& tree, const SlurmOptions& options) {
  std::string out = "# topology.conf for TopologyPlugin=topology/tree, written by hypertopo\n";
  // Highest tier first, like Slurm's own examples: every switch is defined before it is used.
  std::vector<DomainId> order = depth_first(tree);
  std::ranges::stable_sort(order,
                           [&](DomainId a, DomainId b) { return tree.domain(a).tier > tree.domain(b).tier; });
  for (DomainId id : order) {
    const Domain& d = tree.domain(id);
    if (options.comments) out += comment(d);
    out += "SwitchName=" + switch_name(d);
    if (!d.children.empty()) {
      std::vector<std::string> names;
      for (DomainId c : d.children) names.push_back(switch_name(tree.domain(c)));
      out += " Switches=" + compact_hostlist(names);
    }
    if (!d.nodes.empty()) out += " Nodes=" + compact_hostlist(d.nodes);
    out += "\n";
  }
  return out;
}

std::vector<DomainId> slurm_blocks(const Tree& tree, const SlurmOptions& options) {
  std::vector<DomainId> order = depth_first(tree);
  const bool has_nvlink = std::ranges::any_of(
      tree.domains(), [&](const Domain& d) { return d.tier_name == options.nvlink_tier_name; });
  std::vector<DomainId> blocks;
  for (DomainId id : order) {
    const Domain& d = tree.domain(id);
    if (has_nvlink ? d.tier_name == options.nvlink_tier_name : !d.nodes.empty()) blocks.push_back(id);
  }
  return blocks;
}

std::vector<std::size_t> slurm_block_sizes(const Tree& tree, const SlurmOptions& options) {
  const auto blocks = slurm_blocks(tree, options);
  if (blocks.empty()) return {};
  std::size_t base = 0;
  for (DomainId b : blocks) {
    const std::size_t n = tree.nodes_under(b).size();
    if (n && (!base || n < base)) base = n;
  }
  if (!base) return {};
  // How many blocks the largest root holds bounds the aggregates worth offering.
  std::map<DomainId, std::size_t> per_root;
  for (DomainId b : blocks) {
    DomainId at = b;
    while (tree.domain(at).parent) at = *tree.domain(at).parent;
    ++per_root[at];
  }
  std::size_t most = 0;
  for (const auto& [root, count] : per_root) most = std::max(most, count);
  std::vector<std::size_t> sizes{base};
  for (std::size_t k = 2; k <= most; k *= 2) sizes.push_back(base * k);
  return sizes;
}

std::string render_slurm_block_conf(const Tree& tree, const SlurmOptions& options) {
  std::string out = "# topology.conf for TopologyPlugin=topology/block, written by hypertopo\n";
  for (DomainId id : slurm_blocks(tree, options)) {
    const Domain& d = tree.domain(id);
    if (options.comments) out += comment(d);
    out += "BlockName=" + switch_name(d) + " Nodes=" + compact_hostlist(tree.nodes_under(id)) + "\n";
  }
  const auto sizes = slurm_block_sizes(tree, options);
  if (!sizes.empty()) {
    out += "BlockSizes=";
    for (std::size_t i = 0; i < sizes.size(); ++i) out += (i ? "," : "") + std::to_string(sizes[i]);
    out += "\n";
  }
  return out;
}

std::string render_slurm_topology_yaml(const Tree& tree, const SlurmOptions& options) {
  YAML::Emitter out;
  out << YAML::BeginSeq;
  out << YAML::BeginMap << YAML::Key << "topology" << YAML::Value << "fabric";
  out << YAML::Key << "cluster_default" << YAML::Value << true;
  out << YAML::Key << "tree" << YAML::Value << YAML::BeginMap << YAML::Key << "switches" << YAML::Value
      << YAML::BeginSeq;
  for (DomainId id : depth_first(tree)) {
    const Domain& d = tree.domain(id);
    out << YAML::BeginMap << YAML::Key << "switch" << YAML::Value << switch_name(d);
    if (!d.children.empty()) {
      std::vector<std::string> names;
      for (DomainId c : d.children) names.push_back(switch_name(tree.domain(c)));
      out << YAML::Key << "children" << YAML::Value << compact_hostlist(names);
    }
    if (!d.nodes.empty()) out << YAML::Key << "nodes" << YAML::Value << compact_hostlist(d.nodes);
    out << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap << YAML::EndMap;

  out << YAML::BeginMap << YAML::Key << "topology" << YAML::Value << "blocks";
  out << YAML::Key << "cluster_default" << YAML::Value << false;
  out << YAML::Key << "block" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "block_sizes" << YAML::Value << YAML::Flow << slurm_block_sizes(tree, options);
  out << YAML::Key << "blocks" << YAML::Value << YAML::BeginSeq;
  for (DomainId id : slurm_blocks(tree, options)) {
    out << YAML::BeginMap << YAML::Key << "block" << YAML::Value << switch_name(tree.domain(id));
    out << YAML::Key << "nodes" << YAML::Value << compact_hostlist(tree.nodes_under(id)) << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap << YAML::EndMap;
  out << YAML::EndSeq;
  return std::string(out.c_str()) + "\n";
}

}  // namespace hypertopo::topology::exporters
