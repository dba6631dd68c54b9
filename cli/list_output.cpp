#include "cli/list_output.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "text/terminal_safe.h"

namespace hypertopo::cli {
namespace {

using nlohmann::json;

// kubectl's printers.GetNewTabWriter: tabwriter.NewWriter(out, 10, 4, 3, ' ', 0), so a column is
// its widest cell and 3 spaces, at least 10 in all.
constexpr std::size_t kPadding = 3;
constexpr std::size_t kMinWidth = 10;

std::string or_none(std::string value) { return value.empty() ? "<none>" : value; }

std::string str(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::string render_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  std::ostringstream out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line.append(std::max(kMinWidth, widths[c] + kPadding) - row[c].size(), ' ');
    }
    out << line << "\n";
  }
  return out.str();
}

std::string hypernode_names(std::vector<std::string> names) {
  std::ranges::sort(names);
  std::string out;
  for (const auto& n : names) {
    out.append(kHyperNodeResource).append("/").append(text::terminal_safe(n)).append("\n");
  }
  return out;
}

std::string hypernode_names(const topology::Tree& tree) {
  std::vector<std::string> names;
  for (const auto& d : tree.domains()) names.push_back(d.name);
  return hypernode_names(std::move(names));
}

std::string hypernode_table(const topology::Tree& tree, const topology::exporters::GpuUsage* usage,
                            const std::function<std::string(const topology::Domain&)>& health) {
  std::vector<topology::DomainId> ids;
  for (topology::DomainId id = 0; id < tree.size(); ++id) ids.push_back(id);
  std::ranges::sort(ids, [&](auto a, auto b) { return tree.domain(a).name < tree.domain(b).name; });
  std::vector<std::vector<std::string>> rows{
      {"NAME", "TIER", "TIER-NAME", "PARENT", "MEMBERS", "NODES", "GPUS", "FREE", "HEALTH"}};
  for (auto id : ids) {
    const auto& d = tree.domain(id);
    std::string gpus = "<unknown>", free = "<unknown>";
    if (usage) {
      const auto t = topology::exporters::domain_gpu_totals(tree, id, *usage);
      gpus = std::to_string(t.allocatable);
      free = std::to_string(t.free());
    }
    rows.push_back(
        {text::terminal_safe(d.name), std::to_string(d.tier), or_none(text::terminal_safe(d.tier_name)),
         d.parent ? text::terminal_safe(tree.domain(*d.parent).name) : "<none>",
         std::to_string(d.children.size() + d.nodes.size()), std::to_string(tree.nodes_under(id).size()),
         gpus, free, or_none(text::terminal_safe(health(d)))});
  }
  return render_table(rows);
}

std::string placement_names(const json& result, std::size_t* domain_only) {
  std::set<std::string> seen;
  std::string out;
  std::size_t without_node = 0;
  for (const auto& ps : result.value("podSets", json::array())) {
    for (const auto& a : ps.value("assignment", json::array())) {
      const std::string node = str(a, "node");
      if (node.empty()) {
        ++without_node;
        continue;
      }
      if (seen.insert(node).second) out += "node/" + text::terminal_safe(node) + "\n";
    }
  }
  if (domain_only) *domain_only = without_node;
  return out;
}

std::string placement_table(const json& result) {
  struct Row {
    std::string pod_set, node, bound;
    std::int64_t rank = 0;
    std::vector<std::string> path;
  };
  std::vector<Row> rows;
  std::size_t depth = 0;
  for (const auto& ps : result.value("podSets", json::array())) {
    for (const auto& a : ps.value("assignment", json::array())) {
      // A Kueue domain below its last level has no node: its path is the level values.
      std::vector<std::string> path;
      for (const char* key : {"path", "domain"}) {
        if (auto it = a.find(key); it != a.end() && it->is_array()) {
          for (const auto& v : *it) path.push_back(v.is_string() ? v.get<std::string>() : v.dump());
          break;
        }
      }
      depth = std::max(depth, path.size());
      const std::int64_t first = a.value("firstRank", std::int64_t{0});
      const std::int64_t count = a.value("count", std::int64_t{0});
      for (std::int64_t rank = first; rank < first + count; ++rank) {
        rows.push_back(
            {str(ps, "name"), str(a, "node"), a.value("bound", false) ? "true" : "false", rank, path});
      }
    }
  }
  std::vector<std::vector<std::string>> table{{"POD-SET", "RANK", "NODE", "BOUND"}};
  for (std::size_t k = 1; k <= depth; ++k) table.front().push_back("DOMAIN-" + std::to_string(k));
  for (const auto& r : rows) {
    std::vector<std::string> cells{or_none(text::terminal_safe(r.pod_set)), std::to_string(r.rank),
                                   or_none(text::terminal_safe(r.node)), r.bound};
    for (std::size_t k = 0; k < depth; ++k)
      cells.push_back(k < r.path.size() ? or_none(text::terminal_safe(r.path[k])) : "<none>");
    table.push_back(std::move(cells));
  }
  return render_table(table);
}

}  // namespace hypertopo::cli
