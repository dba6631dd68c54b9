// `hypertopo probe`: this node's NodeReport, from the same probes the agent runs.

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "cli/command_errors.h"
#include "cli/commands.h"
#include "cli/discovery_setup.h"
#include "discoverers/ib-local/ib_local_probe.h"
#include "discoverers/nvlink/nvlink_probe.h"
#include "discoverers/registry/discoverer.h"
#include "discoverers/roce-lldp/roce_lldp.h"
#include "io/json_writer.h"
#include "text/terminal_safe.h"
#include "topology/node_report.h"
#include "topology/tree.h"

namespace hypertopo::cli {
namespace {

struct ProbeOptions {
  std::vector<std::string> sources;
  std::string root = "/";
  std::string node_name;
  std::string nvml_library = discoverers::nvlink::kDefaultNvmlLibrary;
  std::string output = "json";
  std::string lldpd_socket;  // --source lldp: lldpd's control socket (default: lldpd's own)
  std::string lldp_json;     // --source lldp: replay saved `lldpcli -f json|json0` output
  std::string roce_netdevs;  // --source lldp: regex of RoCE rail netdevs
  bool verbose = false;
};

int run_probe(const ProbeOptions& opts) {
  auto error = [](const Error& e) { return report_error("probe", e); };
  auto log = [&opts](const std::string& line) {
    if (opts.verbose) std::cerr << "hypertopo: " << line << "\n";
  };

  auto name = resolve_node_name(opts.node_name);
  if (!name) return error(name.error());
  topology::NodeReport report;
  report.node_name = *name;
  report.probed_at = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());

  discoverers::DiscovererRegistry registry;
  discoverers::register_builtin_discoverers(registry);
  for (const auto& source : opts.sources) {
    // The flags fill the same config structs the agent's YAML fills.
    discoverers::SourceSpec spec{.kind = source, .arg = "", .settings = nullptr};
    if (source == "nvlink") {
      auto c = std::make_shared<discoverers::nvlink::NvlinkConfig>();
      c->library = opts.nvml_library;
      spec.settings = c;
    } else if (source == "lldp") {
      auto c = std::make_shared<discoverers::roce_lldp::LldpProbeConfig>();
      c->lldpd_socket = opts.lldpd_socket;
      c->lldp_json = opts.lldp_json;
      c->netdev_pattern = opts.roce_netdevs;
      spec.settings = c;
    }
    auto probed = registry.probe(spec, {.root = opts.root, .log = log}, report);
    if (!probed) return error(probed.error().context("--source " + source));
  }
  for (const auto& w : report.warnings) std::cerr << "hypertopo: warning: " << text::terminal_safe(w) << "\n";
  if (report.nvlink) {
    for (const auto& c : report.nvlink->conflicts)
      std::cerr << "hypertopo: warning: NVLink conflict: " << c << "\n";
  }

  if (opts.output == "yaml") {
    std::cout << topology::render_node_report_yaml(report);
  } else {
    std::cout << io::json_text(topology::render_node_report(report), 2) << "\n";
  }
  return 0;
}

}  // namespace

void add_probe_command(CLI::App& app, Action& action) {
  auto opts = std::make_shared<ProbeOptions>();
  auto* cmd = app.add_subcommand("probe", "Probe this node and print its NodeReport");
  discoverers::DiscovererRegistry probes;
  discoverers::register_builtin_discoverers(probes);
  cmd->footer("Sources (--source KIND, repeatable; each fills its part of one report):\n" +
              probes.describe(discoverers::SourceRole::kNodeProbe) +
              "\nExamples:\n"
              "  hypertopo probe --source ib-local --source nvlink\n"
              "  hypertopo probe --source ib-local --root /host --node-name dgx-001 -o yaml");
  cmd->add_option("-s,--source", opts->sources, "A node probe: ib-local, lldp or nvlink")->required();
  cmd->add_option("--root", opts->root, "Host filesystem root the probes read /sys under")
      ->check(CLI::ExistingDirectory)
      ->capture_default_str();
  cmd->add_option("--node-name", opts->node_name,
                  "Kubernetes node name (default: $NODE_NAME, then the hostname)");
  cmd->add_option("--nvml-library", opts->nvml_library, "NVML library name or path")->capture_default_str();
  cmd->add_option("--lldpd-socket", opts->lldpd_socket, "lldpd control socket (lldp; default: lldpd's)");
  cmd->add_option("--lldp-json", opts->lldp_json, "Replay saved `lldpcli -f json` output instead of lldpd")
      ->check(CLI::ExistingFile);
  cmd->add_option(
      "--roce-netdevs", opts->roce_netdevs,
      "Regex of RoCE rail netdevs (lldp; default: ib-local's RoCE netdevs, else every LLDP port)");
  cmd->add_option("-o,--output", opts->output, "Output format")
      ->check(CLI::IsMember({"json", "yaml"}))
      ->capture_default_str();
  cmd->add_flag("-v,--verbose", opts->verbose, "Log what each probe saw to stderr");
  cmd->callback([opts, &action] { action = [opts] { return run_probe(*opts); }; });
}

}  // namespace hypertopo::cli
