#include "discoverers/reports/reports_source.h"

#include <algorithm>
#include <map>
#include <system_error>

#include "discoverers/registry/source_config.h"

namespace hypertopo::discoverers {
namespace {

bool is_report_file(const std::filesystem::path& p) {
  const auto ext = p.extension().string();
  return ext == ".yaml" || ext == ".yml" || ext == ".json";
}

class ReportsSource : public Discoverer {
 public:
  explicit ReportsSource(std::filesystem::path dir) : dir_(std::move(dir)) {}
  std::string name() const override { return "reports"; }
  std::expected<Discovery, Error> discover() override {
    Discovery found;
    auto reports = load_node_reports(dir_, &found.warnings);
    if (!reports) return std::unexpected(reports.error());
    found.notes.push_back("reports: " + std::to_string(reports->size()) + " NodeReports from " +
                          dir_.string());
    found.reports = std::move(*reports);
    return found;
  }

 private:
  std::filesystem::path dir_;
};

}  // namespace

std::expected<std::vector<topology::NodeReport>, Error> load_node_reports(
    const std::filesystem::path& dir, std::vector<std::string>* warnings) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return fail(ErrorCode::kNotFound, dir.string() + ": not a directory of NodeReports");
  std::vector<std::filesystem::path> files;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec) && is_report_file(it->path())) files.push_back(it->path());
  }
  if (ec) return fail(ErrorCode::kNotFound, dir.string() + ": cannot list: " + ec.message());
  if (files.empty()) {
    return fail(ErrorCode::kNotFound, dir.string() + ": no NodeReport files (*.yaml, *.yml, *.json)");
  }
  std::sort(files.begin(), files.end());
  std::vector<topology::NodeReport> out;
  std::map<std::string, std::filesystem::path> file_of;  // node -> the file that named it first
  struct UnknownKey {
    std::string first;  // the first report (in file-name order) that has it: node and file
    std::size_t reports = 0;
  };
  std::map<std::string, UnknownKey> unknown;  // key path -> where
  for (const auto& f : files) {
    std::vector<std::string> unknown_keys;
    auto report = topology::read_node_report_file(f, &unknown_keys);
    if (!report) return std::unexpected(report.error());
    for (const auto& key : unknown_keys) {
      if (!unknown.contains(key) && unknown.size() >= topology::kMaxUnknownKeys) continue;  // bounded
      auto& u = unknown[key];
      if (u.reports++ == 0) u.first = report->node_name + " (" + f.string() + ")";
    }
    auto [it, inserted] = file_of.emplace(report->node_name, f);
    if (!inserted) {
      return fail(ErrorCode::kConflict, f.string() + ": node " + report->node_name +
                                            " already has a report in " + it->second.string());
    }
    out.push_back(std::move(*report));
  }
  // Reports from another agent version during a rolling upgrade still count; what they say that we
  // cannot read is said once per kind of key, not once per report.
  if (warnings) {
    for (const auto& [key, u] : unknown) {
      warnings->push_back(
          "NodeReport " + u.first + ": unknown key " + key + " ignored" +
          (u.reports > 1 ? " (also in " + std::to_string(u.reports - 1) + " other reports)" : "") +
          "; written by another agent version, or misspelt?");
    }
  }
  return out;
}

std::expected<std::unique_ptr<Discoverer>, Error> make_reports_source(const SourceSpec& spec,
                                                                      const DiscoveryDeps&) {
  return std::make_unique<ReportsSource>(settings_of<ReportsConfig>(spec).dir);
}

SourceEntry reports_source_entry() {
  const std::vector<ConfigKey> keys = {
      {"dir", "a directory of saved NodeReports, one *.yaml/*.json per node"}};
  return {.kind = "reports",
          .summary =
              "saved NodeReports, one *.yaml/*.json per node: reports:DIR (GUIDs, NVLink cliques, LLDP "
              "neighbours for the other sources)",
          .role = SourceRole::kLeader,
          .cache = CachePolicy::kEveryRebuild,
          .keys = keys,
          .parse_config = single_key_parser(keys, &ReportsConfig::dir),
          .parse_arg = single_arg_parser("a directory (reports:DIR)", &ReportsConfig::dir),
          .factory = make_reports_source};
}

}  // namespace hypertopo::discoverers
