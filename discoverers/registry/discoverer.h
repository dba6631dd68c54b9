// discoverers/registry/discoverer.h: the small interface every discovery source implements.
//
// A source turns something it can see (a capture file, a live subnet walk, node labels, UFM) into
// either a FabricGraph (the TreeBuilder applies the tier rule) or a ready Tree (label sources, whose
// tiers the admin named). Sources are created by name through a DiscovererRegistry that is filled by
// one explicit register_builtin_discoverers() call, never by static initialisers.
//
//   DiscovererRegistry registry;
//   register_builtin_discoverers(registry);
//   auto source = registry.create({"ibnetdiscover", "fabric.out"}, deps);
//   auto found = (*source)->discover();   // std::expected<Discovery, Error>
#pragma once

#include <expected>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "errors/error.h"
#include "k8s/objects/node_list.h"
#include "topology/fabric_graph.h"
#include "topology/node_report.h"
#include "topology/tree.h"

namespace hypertopo::discoverers {

// "https://user:pw@host" -> "https://user:REDACTED@host", for every URL in `text`: a password
// somebody wrote into a URL must not reach an error or a log line.
std::string redact_url_password(std::string_view text);

// "kind:arg" as given on the command line (`--source ibnetdiscover:fabric.out`).
struct SourceSpec {
  std::string kind;
  std::string arg;  // may be empty
  static std::expected<SourceSpec, Error> parse(const std::string& text);
  // For messages and names: a password in a URL argument is redacted.
  std::string to_string() const { return arg.empty() ? kind : kind + ":" + redact_url_password(arg); }
};

// Everything a factory may need, handed to every factory (no globals).
struct DiscoveryDeps {
  std::filesystem::path root = "/";      // host filesystem root for probes
  std::istream* stdin_stream = nullptr;  // for "-" arguments
  const k8s::NodeList* nodes = nullptr;  // --nodes, when given
  // NodeReports the agents published (or `reports:DIR` read): exact GUID -> node facts, RoCE LLDP
  // neighbours, NVLink cliques. Null when none are known.
  const std::vector<topology::NodeReport>* reports = nullptr;
  std::filesystem::path work_dir;               // scratch space (simulator sockets, caches)
  std::function<void(const std::string&)> log;  // progress and warnings, one line each
  // Command that walks a simulated subnet under the umad2sim preload (`hypertopo ib-walk`); empty
  // where the running program cannot serve as the walker.
  std::vector<std::string> ib_walker;
};

struct Discovery {
  std::optional<topology::FabricGraph> graph;  // fabric sources
  std::optional<topology::Tree> tree;          // sources that know their tiers already
  std::vector<std::string> notes;              // what the source wants the admin to know
  // NodeReports the source read (`reports:DIR`); the pipeline runs such sources first and hands
  // their reports to the other sources as DiscoveryDeps::reports.
  std::vector<topology::NodeReport> reports;
  // Patterns the source knows to be storage / management (added to the admin's own).
  std::vector<std::string> excluded_device_patterns;
  std::vector<std::string> excluded_switch_patterns;
};

class Discoverer {
 public:
  virtual ~Discoverer() = default;
  virtual std::string name() const = 0;
  virtual std::expected<Discovery, Error> discover() = 0;
};

using DiscovererFactory =
    std::function<std::expected<std::unique_ptr<Discoverer>, Error>(const SourceSpec&, const DiscoveryDeps&)>;

class DiscovererRegistry {
 public:
  // Fails on a duplicate or empty name.
  std::expected<void, Error> add(const std::string& kind, std::string summary, DiscovererFactory factory);
  std::expected<std::unique_ptr<Discoverer>, Error> create(const SourceSpec& spec,
                                                           const DiscoveryDeps& deps) const;
  // Sorted kinds.
  std::vector<std::string> kinds() const;
  // "kind: summary" lines, sorted, for --help.
  std::string describe() const;

 private:
  struct Entry {
    std::string summary;
    DiscovererFactory factory;
  };
  std::map<std::string, Entry> entries_;
};

void register_builtin_discoverers(DiscovererRegistry& registry);

}  // namespace hypertopo::discoverers
