// discoverers/registry/discoverer.h: the small interface every discovery source implements, and the
// registry that knows each source's kind, role, cache policy, typed config and factory.
//
// A source turns something it can see (a capture file, a live subnet walk, node labels, UFM) into
// either a FabricGraph (the TreeBuilder applies the tier rule) or a ready Tree (label sources, whose
// tiers the admin named). Node probes (ib-local, lldp, nvlink) fill this node's NodeReport instead.
// Each source exports its own config struct (derived from SourceSettings) with its defaults; its
// registry entry parses that struct from a YAML block (the agent's config, Volcano's
// networkTopologyDiscovery list) or from the command line's `kind:ARG`, so every front end fills the
// same struct. Entries are added by one explicit register_builtin_discoverers() call, never by
// static initialisers.
//
//   DiscovererRegistry registry;
//   register_builtin_discoverers(registry);
//   auto source = registry.create(*SourceSpec::parse("ibnetdiscover:fabric.out"), deps);
//   auto found = (*source)->discover();   // std::expected<Discovery, Error>
//   const SourceEntry* ufm = registry.entry("ufm");
//   auto settings = ufm->parse_config(yaml_block, {"config.yaml", "sources[2]"});
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

namespace YAML {
class Node;
}

namespace hypertopo::discoverers {

// A source's typed config. Each source derives its own struct with defaults.
struct SourceSettings {
  virtual ~SourceSettings() = default;
  // What the source reads, for names in logs and outcomes ("fabric.out", "https://ufm:443"); never
  // a secret. "" when there is nothing to name.
  virtual std::string describe() const = 0;
};
using SettingsPtr = std::shared_ptr<const SourceSettings>;

// "kind[:ARG]" as given on the command line (`--source ibnetdiscover:fabric.out`), or a kind with
// settings a config file filled.
struct SourceSpec {
  std::string kind;
  std::string arg;       // may be empty; read by the entry's parse_arg when settings is null
  SettingsPtr settings;  // the typed config; registry.create() fills it from arg when null
  static std::expected<SourceSpec, Error> parse(const std::string& text);
  std::string to_string() const;  // "kind" or "kind:<describe()>" ("kind:ARG" before settings exist)
};

// Where a config block sits, for errors that name the file and the key:
// "config.yaml: sources[2].caFile: must be a string".
struct ConfigAt {
  std::string file;
  std::string path;  // key path of the block, "" at the top
  std::string key(const std::string& name) const {
    return path.empty() ? name : name.empty() ? path : path + "." + name;
  }
  std::unexpected<Error> bad(const std::string& name, const std::string& what) const;
};

// Everything a factory may need, handed to every factory (no globals).
struct DiscoveryDeps {
  std::filesystem::path root = "/";      // host filesystem root for probes
  std::istream* stdin_stream = nullptr;  // for "-" arguments
  const k8s::NodeList* nodes = nullptr;  // --nodes, when given
  // NodeReports the agents published (or `reports:DIR` read): exact GUID -> node facts, RoCE LLDP
  // neighbours, NVLink cliques. Null when none are known.
  const std::vector<topology::NodeReport>* reports = nullptr;
  std::filesystem::path work_dir;               // scratch space (simulator sockets)
  std::function<void(const std::string&)> log;  // progress and warnings, one line each
  // Command that walks a simulated subnet under the umad2sim preload (`hypertopo ib-walk`); empty
  // where the running program cannot serve as the walker.
  std::vector<std::string> ib_walker;
  // Reads a Secret's data (decoded) through the API: sources whose config names a Secret (UFM's
  // credentials.secretRef) call it on every run, so a rotated password is picked up. Empty where
  // no API server is at hand (the CLI: mount the Secret and name the directory instead).
  std::function<std::expected<std::map<std::string, std::string>, Error>(const std::string& ns,
                                                                         const std::string& name)>
      read_secret;
};

struct Discovery {
  std::optional<topology::FabricGraph> graph;  // fabric sources
  std::optional<topology::Tree> tree;          // sources that know their tiers already
  std::vector<std::string> notes;              // progress the admin may read (counts, where from)
  // What the admin should act on (TLS verification off, skipped records, ...): the CLI prints them
  // as warnings, the agent logs each once per change and counts it.
  std::vector<std::string> warnings;
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

// Node probes run in every agent pod (and `hypertopo probe`) and fill this node's report; leader
// sources run on the elected leader (and `hypertopo discover`) and give a graph or a tree.
enum class SourceRole { kNodeProbe, kLeader };
// kInterval: the result depends only on the fabric (a walk, UFM, a capture), so the agent reuses it
// until the source's interval has passed, and keeps the last good one when a run fails.
// kEveryRebuild: the source reads the NodeReports or the Node list, so it runs on every rebuild.
enum class CachePolicy { kEveryRebuild, kInterval };
const char* to_string(SourceRole role);

// One key of a source's config block, for docs/agent.md's reference (tested against it) and --help.
struct ConfigKey {
  std::string name;
  std::string meaning;
};

struct NodeProbeDeps {
  std::filesystem::path root = "/";
  std::function<void(const std::string&)> log;
};

using ConfigParser =
    std::function<std::expected<SettingsPtr, Error>(const YAML::Node& block, const ConfigAt& at)>;
using ArgParser = std::function<std::expected<SettingsPtr, Error>(const std::string& arg)>;
using DiscovererFactory =
    std::function<std::expected<std::unique_ptr<Discoverer>, Error>(const SourceSpec&, const DiscoveryDeps&)>;
using NodeProbeRunner = std::function<std::expected<void, Error>(const SourceSettings&, const NodeProbeDeps&,
                                                                 topology::NodeReport&)>;

struct SourceEntry {
  std::string kind;
  std::string summary;  // one line for --help
  SourceRole role = SourceRole::kLeader;
  CachePolicy cache = CachePolicy::kEveryRebuild;
  std::vector<ConfigKey> keys;  // what parse_config accepts
  ConfigParser parse_config;    // a YAML mapping (null: every default) -> the typed settings
  ArgParser parse_arg;          // the command line's ARG ("" when none) -> the typed settings
  DiscovererFactory factory;    // leader sources
  NodeProbeRunner probe;        // node probes
};

class DiscovererRegistry {
 public:
  // Fails on a duplicate or empty kind, or an entry without the function its role needs.
  std::expected<void, Error> add(SourceEntry entry);
  const SourceEntry* entry(const std::string& kind) const;  // null when unknown
  // An unknown kind as an error listing the known ones.
  std::expected<const SourceEntry*, Error> find(const std::string& kind) const;
  // Leader sources only; fills spec.settings from spec.arg when it is null.
  std::expected<std::unique_ptr<Discoverer>, Error> create(const SourceSpec& spec,
                                                           const DiscoveryDeps& deps) const;
  // Node probes only: runs one into `report`.
  std::expected<void, Error> probe(const SourceSpec& spec, const NodeProbeDeps& deps,
                                   topology::NodeReport& report) const;
  // The spec with its settings filled from its arg (unchanged when they are set already).
  std::expected<SourceSpec, Error> resolve(SourceSpec spec) const;
  // Sorted kinds, all or those of one role.
  std::vector<std::string> kinds() const;
  std::vector<std::string> kinds(SourceRole role) const;
  // "kind: summary" lines, sorted, for --help.
  std::string describe(SourceRole role = SourceRole::kLeader) const;

 private:
  std::map<std::string, SourceEntry> entries_;
};

// A leader source that takes no config (an ARG is refused): for sources made in code, e.g. in tests.
SourceEntry entry_without_config(std::string kind, std::string summary, DiscovererFactory factory);

// The typed settings of a spec that registry.create() has resolved.
template <typename T>
const T& settings_of(const SourceSpec& spec) {
  return static_cast<const T&>(*spec.settings);
}

void register_builtin_discoverers(DiscovererRegistry& registry);

}  // namespace hypertopo::discoverers
