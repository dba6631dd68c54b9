// discoverers/reports/reports_source.h: saved NodeReports as a source (`reports:DIR`).
//
// For offline use and tests: a directory holds one NodeReport per node (`*.yaml`, `*.yml` or
// `*.json`, the custom object body an agent publishes or `hypertopo probe -o yaml` prints). The
// source returns them in Discovery::reports; the pipeline runs it before the other sources and hands
// the reports on as node facts: exact GUID -> node mapping, NVLink cliques (merged as `nvlink`
// domains) and RoCE LLDP neighbours (for the `roce` source). Other files are ignored; a file that
// does not parse, or two files for one node, fail the run naming the files.
//
//   auto reports = load_node_reports("saved-reports/");   // std::expected<std::vector<NodeReport>, Error>
//   // hypertopo discover --source reports:saved-reports --source ibnetdiscover:fabric.out
#pragma once

#include <expected>
#include <filesystem>
#include <string>
#include <vector>

#include "discoverers/registry/discoverer.h"
#include "errors/error.h"
#include "topology/node_report.h"

namespace hypertopo::discoverers {

// Every NodeReport file directly in `dir`, read in file-name order; fails when `dir` is not a
// directory, holds no report file, a file does not parse, or two files name the same node.
std::expected<std::vector<topology::NodeReport>, Error> load_node_reports(const std::filesystem::path& dir);

struct ReportsConfig : SourceSettings {
  std::string dir;
  std::string describe() const override { return dir; }
};

std::expected<std::unique_ptr<Discoverer>, Error> make_reports_source(const SourceSpec& spec,
                                                                      const DiscoveryDeps& deps);
SourceEntry reports_source_entry();

}  // namespace hypertopo::discoverers
