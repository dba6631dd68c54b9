// discoverers/reports/reports_source.h: saved NodeReports as a source (`reports:DIR`).
//
// For offline use and tests: a directory holds one NodeReport per node (`*.yaml`, `*.yml` or
// `*.json`, the custom object body an agent publishes or `hypertopo probe -o yaml` prints). The
// source returns them in Discovery::reports; the pipeline runs it before the other sources and hands
// the reports on as node facts: exact GUID -> node mapping, NVLink cliques (merged as `nvlink`
// domains) and RoCE LLDP neighbours (for the `roce` source). Other files are ignored; a file that
// does not parse, or two files for one node, fail the run naming the files; keys a report has that
// this version does not know are warnings, once per kind of key.
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
// Keys a report carries that this version does not read (a newer agent's field, or a misspelt
// one) are no error; `warnings`, when given, gets one line per kind of key, naming the key, the
// first report that has it and how many do.
std::expected<std::vector<topology::NodeReport>, Error> load_node_reports(
    const std::filesystem::path& dir, std::vector<std::string>* warnings = nullptr);

struct ReportsConfig : SourceSettings {
  std::string dir;
  std::string describe() const override { return dir; }
};

std::expected<std::unique_ptr<Discoverer>, Error> make_reports_source(const SourceSpec& spec,
                                                                      const DiscoveryDeps& deps);
SourceEntry reports_source_entry();

}  // namespace hypertopo::discoverers
