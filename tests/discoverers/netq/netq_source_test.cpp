// The NetQ sources on the saved answers of NVIDIA topograph's tests (fixtures/netq): a two-leaf,
// one-spine Spectrum-X fabric whose eight DGX hosts NetQ learnt by LLDP, and NMX's two compute
// nodes of one NVLink domain.
#include "discoverers/netq/netq_source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "agent/config/agent_config.h"
#include "cli/commands.h"
#include "discoverers/netq/netq_topology.h"
#include "discoverers/pipeline/discovery_pipeline.h"
#include "discoverers/registry/discoverer.h"
#include "discoverers/registry/rest_endpoint.h"
#include "discoverers/roce-lldp/roce_lldp.h"
#include "discoverers/ufm/ufm_source.h"
#include "io/bounded_file.h"
#include "tests/support/fixtures.h"
#include "tests/support/netq/fake_netq_server.h"
#include "timing/clock.h"
#include "topology/nvlink_merge.h"
#include "topology/tree_builder.h"

namespace hypertopo::discoverers::netq {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

const std::set<std::string> kLeaf1 = {"dgx-01", "dgx-02", "dgx-03", "dgx-04"};
const std::set<std::string> kLeaf2 = {"dgx-05", "dgx-06", "dgx-07", "dgx-08"};
constexpr const char* kNmxDomain = "3fbfc98b-7f95-4749-ab11-bd351a2aab3e";

// tierName -> the node sets of that tier's domains (a domain's nodes: its own and its children's).
using Shape = std::map<std::string, std::set<std::set<std::string>>>;

Shape shape_of(const topology::Tree& tree) {
  Shape out;
  std::function<void(topology::DomainId, std::set<std::string>&)> collect = [&](topology::DomainId id,
                                                                                std::set<std::string>& into) {
    const auto& d = tree.domain(id);
    into.insert(d.nodes.begin(), d.nodes.end());
    for (auto c : d.children) collect(c, into);
  };
  for (topology::DomainId i = 0; i < tree.size(); ++i) {
    std::set<std::string> nodes;
    collect(i, nodes);
    out[tree.domain(i).tier_name].insert(nodes);
  }
  return out;
}

std::expected<PipelineResult, Error> run_sources(std::vector<SourceSpec> specs) {
  DiscovererRegistry registry;
  register_builtin_discoverers(registry);
  PipelineInput input;
  input.sources = std::move(specs);
  return run_discovery(registry, input);
}

TEST(NetqFile, FixtureGivesTheLeafSpineTreeAndTheNmxNvlinkDomain) {
  HT_REQUIRE_FIXTURE(graph_file, "netq/topologyGraph.json");
  const std::string dir = graph_file.parent_path().string();
  auto result = run_sources({*SourceSpec::parse("netq-file:" + dir)});
  ASSERT_TRUE(result.has_value()) << result.error().message();
  const Shape s = shape_of(result->tree);
  ASSERT_FALSE(s.empty());
  // The two leaves hold four hosts each, the spine holds both leaves.
  std::set<std::set<std::string>> fabric;
  for (const auto& [tier_name, sets] : s)
    if (tier_name != topology::kNvlinkTierName) fabric.insert(sets.begin(), sets.end());
  std::set<std::string> all = kLeaf1;
  all.insert(kLeaf2.begin(), kLeaf2.end());
  EXPECT_EQ(fabric, (std::set<std::set<std::string>>{kLeaf1, kLeaf2, all}));
  // NMX's NVLink domain: its two compute nodes.
  ASSERT_TRUE(s.contains(topology::kNvlinkTierName));
  EXPECT_EQ(s.at(topology::kNvlinkTierName), (std::set<std::set<std::string>>{{"node1", "node2"}}));
  EXPECT_EQ(result->nvlink_domains, 1u);
  ASSERT_EQ(result->outcomes.size(), 1u);
  EXPECT_THAT(result->outcomes[0].notes[0], HasSubstr("2 compute nodes in NVLink domains"));
}

// What a user runs: the HyperNodes on stdout, named after the switches.
TEST(NetqFile, DiscoverCommandPrintsTheHyperNodes) {
  HT_REQUIRE_FIXTURE(graph_file, "netq/topologyGraph.json");
  const std::string dir = graph_file.parent_path().string();
  auto run = testing::run_captured(cli::run_cli, {"discover", "--source", "netq-file:" + dir, "-o", "json"});
  ASSERT_EQ(run.code, 0) << run.err;
  const json out = json::parse(run.out);
  std::map<int, std::set<std::string>> members_by_tier;
  std::set<std::string> names;
  for (const auto& hn : out["items"]) {
    names.insert(hn["metadata"]["name"]);
    for (const auto& m : hn["spec"]["members"])
      members_by_tier[hn["spec"]["tier"].get<int>()].insert(m["selector"]["exactMatch"]["name"]);
  }
  EXPECT_EQ(out["items"].size(), 4u) << run.out;  // two leaves, the spine, the NVLink domain
  std::set<std::string> hosts = kLeaf1;
  hosts.insert(kLeaf2.begin(), kLeaf2.end());
  hosts.insert({"node1", "node2"});
  std::set<std::string> node_members;
  for (const auto& [tier, members] : members_by_tier)
    for (const auto& m : members)
      if (hosts.contains(m)) node_members.insert(m);
  EXPECT_EQ(node_members, hosts) << run.out;
  EXPECT_TRUE(std::any_of(names.begin(), names.end(), [](const std::string& n) {
    return n.find("net-unit-l1") != std::string::npos;
  })) << run.out;
}

// A host name as NetQ learnt it over LLDP is whatever the host sent: an ESC sequence in it (one that
// retitles the terminal, one that clears it) reaches `discover -o tree` spelled out, never raw.
TEST(NetqFile, AHostNameWithEscapeSequencesIsPrintedSpelledOut) {
  HT_REQUIRE_FIXTURE(graph_file, "netq/topologyGraph.json");
  json graph = json::parse(testing::read_text(graph_file));
  bool renamed = false;
  for (auto& tier : graph[0]["nodes"]) {
    for (auto& n : tier["compounded_nodes"]) {
      if (n["name"] == "dgx-05") {
        n["name"] = "dgx-05\x1b]0;evil\x07\x1b[2J";
        renamed = true;
      }
    }
  }
  ASSERT_TRUE(renamed);
  testing::TempDir dir;
  testing::write_text(dir.path() / "topologyGraph.json", graph.dump());
  testing::write_text(dir.path() / "computeNodes.json",
                      testing::read_text(graph_file.parent_path() / "computeNodes.json"));
  auto run = testing::run_captured(
      cli::run_cli, {"discover", "--source", "netq-file:" + dir.path().string(), "-o", "tree"});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(run.out.find('\x1b'), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find('\x07'), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("dgx-05\\x1b]0;evil\\x07\\x1b[2J"), std::string::npos) << run.out;
  EXPECT_EQ(run.err.find('\x1b'), std::string::npos) << run.err;
}

// The agent's YAML alone: a netq-file entry, read and run as the leader runs it.
TEST(NetqFile, AgentYamlEntryRunsTheSource) {
  HT_REQUIRE_FIXTURE(graph_file, "netq/topologyGraph.json");
  const std::string dir = graph_file.parent_path().string();
  auto config = agent::parse_agent_config(
      "sources:\n  - kind: netq-file\n    config: {dir: " + dir + ", maxBytes: 1Mi}\n", "config.yaml");
  ASSERT_TRUE(config.has_value()) << config.error().message();
  ASSERT_EQ(config->sources.size(), 1u);
  EXPECT_EQ(config->sources[0].spec(), "netq-file:" + dir);
  const auto& settings = static_cast<const NetqFileConfig&>(*config->sources[0].settings);
  EXPECT_EQ(settings.max_bytes, 1u << 20);
  auto result = run_sources({SourceSpec{"netq-file", "", config->sources[0].settings}});
  ASSERT_TRUE(result.has_value()) << result.error().message();
  EXPECT_EQ(result->nvlink_domains, 1u);

  for (const auto& [yaml, message] : std::vector<std::pair<std::string, std::string>>{
           {"sources:\n  - {kind: netq-file, config: {}}\n", "config.yaml: sources[0].config.dir"},
           {"sources:\n  - {kind: netq-file, config: {dir: /x, endpoint: y}}\n", "endpoint"},
           {"sources:\n  - {kind: netq-file, config: {dir: /x, maxBytes: lots}}\n", "maxBytes"}}) {
    auto bad = agent::parse_agent_config(yaml, "config.yaml");
    ASSERT_FALSE(bad.has_value()) << yaml;
    EXPECT_THAT(bad.error().message(), HasSubstr(message)) << yaml;
  }
}

// The same fabric as LLDP sees it: each host's rails report the switch port they are cabled to
// (the cables of the NetQ answer), the roce source builds the leaves from those, and the spine
// comes from the admin's hierarchy. The two sources must agree on every domain.
TEST(NetqFile, AgreesWithTheLldpBuiltTreeOfTheSameCables) {
  HT_REQUIRE_FIXTURE(graph_file, "netq/topologyGraph.json");
  const std::string dir = graph_file.parent_path().string();
  auto text = io::read_bounded_file(std::filesystem::path(dir) / kTopologyGraphFile, io::kDataFileLimit);
  ASSERT_TRUE(text.has_value());
  const json doc = json::parse(*text);
  std::map<std::string, std::string> name_of;
  std::set<std::string> switches;
  for (const auto& tier : doc[0]["nodes"]) {
    for (const auto& n : tier["compounded_nodes"]) {
      name_of[n["id"]] = n["name"];
      if (n["tier"] != -1) switches.insert(n["name"]);
    }
  }
  std::map<std::string, topology::NodeReport> reports;
  std::map<std::string, std::string> parents;
  for (const auto& link : doc[0]["links"]) {
    for (const auto& cable : link["compounded_links"]) {
      const auto& a = cable["interfaces"][0];
      const auto& b = cable["interfaces"][1];
      const std::string na = name_of[a["node"]], nb = name_of[b["node"]];
      if (switches.contains(na) && switches.contains(nb)) {
        // Leaf -> spine (the switch NetQ puts on the higher tier is the parent).
        (na.find("-s") != std::string::npos ? parents[nb] : parents[na]) =
            na.find("-s") != std::string::npos ? na : nb;
        continue;
      }
      const bool a_host = !switches.contains(na);
      const std::string host = a_host ? na : nb;
      const std::string sw = a_host ? nb : na;
      const std::string host_if = (a_host ? a : b)["interface"];
      const std::string sw_if = (a_host ? b : a)["interface"];
      auto& r = reports[host];
      r.node_name = host;
      topology::RoceNetdev rail;
      rail.netdev = host_if;
      rail.rdma_port = 1;
      topology::LldpNeighbor nb_info;
      nb_info.chassis_id = sw;
      nb_info.system_name = sw;
      nb_info.port_id = sw_if;
      rail.neighbor = nb_info;
      r.roce.push_back(rail);
    }
  }
  ASSERT_EQ(reports.size(), 8u);
  std::vector<topology::NodeReport> list;
  for (auto& [name, r] : reports) list.push_back(r);
  roce_lldp::RoceHierarchy hierarchy;
  for (const auto& [child, parent] : parents) hierarchy.parents[child] = parent;
  auto graph = roce_lldp::build_roce_fabric(list, hierarchy);
  ASSERT_TRUE(graph.has_value()) << graph.error().message();
  auto builder = topology::TreeBuilder::create({});
  ASSERT_TRUE(builder.has_value());
  auto lldp_tree = builder->build(*graph);
  ASSERT_TRUE(lldp_tree.has_value()) << lldp_tree.error().message();

  NetqFileConfig config;
  config.dir = dir;
  auto netq = discover_netq_dir(config);
  ASSERT_TRUE(netq.has_value()) << netq.error().message();
  auto netq_tree = builder->build(*netq->graph);
  ASSERT_TRUE(netq_tree.has_value()) << netq_tree.error().message();
  EXPECT_EQ(shape_of(*netq_tree), shape_of(*lldp_tree));
  EXPECT_EQ(shape_of(*netq_tree).size(), 2u);  // leaf and spine tiers
}

TEST(NetqFile, BadAnswersAreRefusedNamingTheFileAndField) {
  testing::TempDir dir;
  NetqFileConfig config;
  config.dir = (dir.path() / "missing").string();
  auto missing = discover_netq_dir(config);
  ASSERT_FALSE(missing.has_value());
  EXPECT_THAT(missing.error().message(), HasSubstr("not a directory"));

  config.dir = dir.path().string();
  const auto graph = dir.path() / kTopologyGraphFile;
  for (const auto& [text, message] : std::vector<std::pair<std::string, std::string>>{
           {"{\"nodes\": []}", "expected a list of topology graphs"},
           {"[]", "holds no topology graph"},
           {"[{\"nodes\": [{\"compounded_nodes\": [{\"id\": \"n1\", \"name\": \"sw\", \"tier\": "
            "\"one\"}]}]}]",
            "[0].nodes[0].compounded_nodes[0].tier: must be an integer"},
           {"[{\"nodes\": [], \"links\": [{\"compounded_links\": [{\"interfaces\": [{\"node\": \"a\"}]}]}]}]",
            "[0].links[0].compounded_links[0].interfaces: must list the cable's two ends"},
           {"[{\"nodes\": 7}]", "[0].nodes: must be a list"},
           {"[{", kTopologyGraphFile}}) {
    testing::write_text(graph, text);
    auto bad = discover_netq_dir(config);
    ASSERT_FALSE(bad.has_value()) << text;
    EXPECT_THAT(bad.error().message(), HasSubstr(message)) << text;
    EXPECT_THAT(bad.error().message(), HasSubstr(kTopologyGraphFile)) << text;
  }
  // A cable to a node that no tier lists is skipped with a warning, never guessed.
  testing::write_text(
      graph,
      "[{\"nodes\": [{\"compounded_nodes\": [{\"id\": \"s\", \"name\": \"leaf\", \"tier\": 1},"
      "{\"id\": \"h\", \"name\": \"host-1\", \"tier\": -1}]}],"
      "\"links\": [{\"compounded_links\": [{\"interfaces\": [{\"node\": \"s\", \"interface\": \"swp1\"},"
      "{\"node\": \"h\", \"interface\": \"eth0\"}]}, {\"interfaces\": [{\"node\": \"s\", "
      "\"interface\": \"swp2\"}, {\"node\": \"ghost\", \"interface\": \"eth0\"}]}]}]}]");
  auto partial = discover_netq_dir(config);
  ASSERT_TRUE(partial.has_value()) << partial.error().message();
  ASSERT_EQ(partial->warnings.size(), 1u);
  EXPECT_THAT(partial->warnings[0], HasSubstr("node ghost is in no tier"));
  EXPECT_EQ(partial->graph->links().size(), 1u);
  // NMX listing one node in two NVLink domains: the node joins neither.
  testing::write_text(
      dir.path() / kComputeNodesFile,
      "[{\"Name\": \"host-1\", \"DomainUUID\": \"a\"}, {\"Name\": \"host-1\", \"DomainUUID\": \"b\"}]");
  auto conflict = discover_netq_dir(config);
  ASSERT_TRUE(conflict.has_value()) << conflict.error().message();
  ASSERT_EQ(conflict->reports.size(), 1u);
  EXPECT_TRUE(conflict->reports[0].nvlink->clique_id.empty());
  EXPECT_EQ(conflict->reports[0].nvlink->conflicts.size(), 2u);
  // Bounded: a file over maxBytes is refused, never read.
  config.max_bytes = 64;
  auto big = discover_netq_dir(config);
  ASSERT_FALSE(big.has_value());
  EXPECT_THAT(big.error().message(), HasSubstr(kTopologyGraphFile));
}

// ---- the REST source against the NetQ stand-in serving the same answers ----

struct Served {
  testing::TempDir dir;
  std::unique_ptr<testing::FakeNetqServer> netq;
  std::string credentials;  // a credentials directory
  std::string ca;           // the stand-in's CA file
};

std::unique_ptr<Served> serve_fixture(const std::string& fixture_dir, bool tls = true) {
  auto s = std::make_unique<Served>();
  s->netq = std::make_unique<testing::FakeNetqServer>(tls);
  s->netq->set_credentials("netq-admin", "s3cret");
  auto graph =
      io::read_bounded_file(std::filesystem::path(fixture_dir) / kTopologyGraphFile, io::kDataFileLimit);
  auto nodes =
      io::read_bounded_file(std::filesystem::path(fixture_dir) / kComputeNodesFile, io::kDataFileLimit);
  if (!graph || !nodes) return nullptr;
  s->netq->add_premises(11, *graph);
  s->netq->set_compute_nodes(*nodes);
  if (!s->netq->start()) return nullptr;
  const auto creds = s->dir.path() / "creds";
  std::filesystem::create_directories(creds);
  testing::write_text(creds / "username", "netq-admin\n");
  testing::write_text(creds / "password", "s3cret\n");
  s->credentials = creds.string();
  s->ca = (s->dir.path() / "ca.crt").string();
  testing::write_text(s->ca, s->netq->ca_pem());
  return s;
}

NetqConfig config_for(const Served& s) {
  NetqConfig c;
  c.endpoint = s.netq->url();
  c.credentials_dir = s.credentials;
  c.ca_file = s.ca;
  c.timeout = std::chrono::milliseconds(20000);
  return c;
}

// What a user runs: `discover --source netq:CONFIG.yaml`, the config block in a file.
TEST(NetqRest, DiscoverAgainstTheStandInGivesTheFixturesTree) {
  HT_REQUIRE_FIXTURE(graph_file, "netq/topologyGraph.json");
  auto s = serve_fixture(graph_file.parent_path().string());
  ASSERT_TRUE(s);
  const auto config = s->dir.path() / "netq.yaml";
  testing::write_text(config, "endpoint: " + s->netq->url() + "\ncredentialsDir: " + s->credentials +
                                  "\ncaFile: " + s->ca + "\ntimeout: 20s\n");
  auto run =
      testing::run_captured(cli::run_cli, {"discover", "--source", "netq:" + config.string(), "-o", "json"});
  ASSERT_EQ(run.code, 0) << run.err;
  auto from_file = testing::run_captured(
      cli::run_cli, {"discover", "--source", "netq-file:" + graph_file.parent_path().string(), "-o", "json"});
  ASSERT_EQ(from_file.code, 0) << from_file.err;
  EXPECT_EQ(json::parse(run.out)["items"], json::parse(from_file.out)["items"]);
  EXPECT_EQ(
      s->netq->targets(),
      (std::vector<std::string>{"POST /api/netq/auth/v1/login", "GET /api/netq/auth/v1/select/opid/11",
                                "POST /api/netq/telemetry/v1/object/topologygraph/fetch-topology?timestamp=0",
                                "GET /nmx/v1/compute-nodes"}));
  // The password never reaches the output.
  EXPECT_EQ(run.err.find("s3cret"), std::string::npos) << run.err;
}

TEST(NetqRest, PremisesWithoutTopologyAreNotAskedAndTheOthersMerge) {
  HT_REQUIRE_FIXTURE(graph_file, "netq/topologyGraph.json");
  auto s = serve_fixture(graph_file.parent_path().string());
  ASSERT_TRUE(s);
  s->netq->add_premises(12, "should not be asked", /*config_key_viewed=*/false);
  s->netq->add_premises(13, R"([{"nodes": [{"compounded_nodes": [{"id": "x1", "name": "edge-leaf", "tier": 1},
      {"id": "x2", "name": "edge-host", "tier": -1}]}], "links": [{"compounded_links": [{"interfaces":
      [{"node": "x1", "interface": "swp1"}, {"node": "x2", "interface": "eth0"}]}]}]}])");
  auto found = discover_netq(config_for(*s), {});
  ASSERT_TRUE(found.has_value()) << found.error().message();
  EXPECT_EQ(found->graph->switch_count(), 4u);
  for (const auto& t : s->netq->targets()) EXPECT_EQ(t.find("opid/12"), std::string::npos) << t;
  EXPECT_THAT(found->notes[0], HasSubstr("2 premises, 4 switches, 9 hosts"));
}

TEST(NetqRest, WrongPasswordFailsAtOnceNamingWhereTheCredentialsCameFrom) {
  HT_REQUIRE_FIXTURE(graph_file, "netq/topologyGraph.json");
  auto s = serve_fixture(graph_file.parent_path().string());
  ASSERT_TRUE(s);
  testing::write_text(std::filesystem::path(s->credentials) / "password", "wrong");
  auto found = discover_netq(config_for(*s), {});
  ASSERT_FALSE(found.has_value());
  EXPECT_EQ(found.error().code(), ErrorCode::kPermission);
  EXPECT_THAT(found.error().message(), HasSubstr("HTTP 401"));
  EXPECT_THAT(found.error().message(), HasSubstr(s->credentials));
  EXPECT_THAT(found.error().message(), HasSubstr("not retried"));
  EXPECT_EQ(found.error().message().find("wrong"), std::string::npos);
  EXPECT_EQ(s->netq->targets().size(), 1u);
}

TEST(NetqRest, TlsIsVerifiedAndCleartextRefused) {
  HT_REQUIRE_FIXTURE(graph_file, "netq/topologyGraph.json");
  auto s = serve_fixture(graph_file.parent_path().string());
  ASSERT_TRUE(s);
  NetqConfig c = config_for(*s);
  c.ca_file.clear();  // the system store does not know the stand-in's CA
  auto untrusted = discover_netq(c, {});
  ASSERT_FALSE(untrusted.has_value());
  EXPECT_THAT(untrusted.error().message(), HasSubstr("caFile"));
  c.insecure = true;
  auto insecure = discover_netq(c, {});
  ASSERT_TRUE(insecure.has_value()) << insecure.error().message();
  ASSERT_FALSE(insecure->warnings.empty());
  EXPECT_THAT(insecure->warnings.back(), HasSubstr("TLS certificate verification is off"));

  auto plain = serve_fixture(graph_file.parent_path().string(), /*tls=*/false);
  ASSERT_TRUE(plain);
  NetqConfig p = config_for(*plain);
  p.ca_file.clear();
  auto refused = discover_netq(p, {});
  ASSERT_FALSE(refused.has_value());
  EXPECT_THAT(refused.error().message(), HasSubstr("clear text"));
  EXPECT_TRUE(plain->netq->targets().empty());
}

TEST(NetqRest, ServerErrorsAreRetriedWithBackoffOnTheInjectedClock) {
  HT_REQUIRE_FIXTURE(graph_file, "netq/topologyGraph.json");
  auto s = serve_fixture(graph_file.parent_path().string());
  ASSERT_TRUE(s);
  s->netq->script({.status = 503});
  s->netq->script({.status = 429});
  auto clock = std::make_shared<timing::ManualClock>();
  NetqRunDeps deps;
  deps.clock = clock;
  auto found = discover_netq(config_for(*s), deps);
  ASSERT_TRUE(found.has_value()) << found.error().message();
  EXPECT_EQ(clock->sleeps().size(), 2u);
  EXPECT_EQ(s->netq->targets().size(), 6u);  // login three times, then the three other calls
}

TEST(NetqRest, TimeoutAndSizeBoundsEndTheRunWithOneClearError) {
  HT_REQUIRE_FIXTURE(graph_file, "netq/topologyGraph.json");
  auto s = serve_fixture(graph_file.parent_path().string());
  ASSERT_TRUE(s);
  NetqConfig c = config_for(*s);
  c.max_bytes = 4096;  // the topology graph is 36 KB
  auto big = discover_netq(c, {});
  ASSERT_FALSE(big.has_value());
  EXPECT_THAT(big.error().message(), HasSubstr("maxBytes"));

  s->netq->script({.status = 200, .body = "{}", .delay = std::chrono::milliseconds(1500)});
  c = config_for(*s);
  c.timeout = std::chrono::milliseconds(300);
  auto slow = discover_netq(c, {});
  ASSERT_FALSE(slow.has_value());
  EXPECT_EQ(slow.error().code(), ErrorCode::kUnavailable);
  EXPECT_THAT(slow.error().message(), HasSubstr("/api/netq/auth/v1/login"));
}

// NMX is best effort, as in topograph: without it the switch tree still comes, with a warning.
TEST(NetqRest, NoNmxGivesTheSwitchTreeAndAWarning) {
  HT_REQUIRE_FIXTURE(graph_file, "netq/topologyGraph.json");
  auto s = serve_fixture(graph_file.parent_path().string());
  ASSERT_TRUE(s);
  s->netq->set_compute_nodes("");
  auto found = discover_netq(config_for(*s), {});
  ASSERT_TRUE(found.has_value()) << found.error().message();
  EXPECT_TRUE(found->reports.empty());
  ASSERT_EQ(found->warnings.size(), 1u);
  EXPECT_THAT(found->warnings[0], HasSubstr("no NVLink domains from NMX"));
}

// The agent's YAML: credentials from a Secret read through the API on every run.
TEST(NetqRest, AgentYamlWithASecretRef) {
  HT_REQUIRE_FIXTURE(graph_file, "netq/topologyGraph.json");
  auto s = serve_fixture(graph_file.parent_path().string());
  ASSERT_TRUE(s);
  auto config = agent::parse_agent_config(
      "sources:\n  - kind: netq\n    config: {endpoint: " + s->netq->url() +
          ", credentials: {secretRef: {name: netq-credentials}}, caFile: " + s->ca + "}\n",
      "config.yaml");
  ASSERT_TRUE(config.has_value()) << config.error().message();
  DiscovererRegistry registry;
  register_builtin_discoverers(registry);
  PipelineInput input;
  input.sources = {SourceSpec{"netq", "", config->sources[0].settings}};
  int reads = 0;
  input.deps.read_secret =
      [&](const std::string&,
          const std::string& name) -> std::expected<std::map<std::string, std::string>, Error> {
    ++reads;
    EXPECT_EQ(name, "netq-credentials");
    return std::map<std::string, std::string>{{"username", "netq-admin"}, {"password", "s3cret\n"}};
  };
  auto result = run_discovery(registry, input);
  ASSERT_TRUE(result.has_value()) << result.error().message();
  EXPECT_EQ(reads, 1);
  EXPECT_EQ(result->nvlink_domains, 1u);

  for (const auto& [yaml, message] : std::vector<std::pair<std::string, std::string>>{
           {"sources:\n  - {kind: netq, config: {endpoint: https://netq}}\n", "needs credentials"},
           {"sources:\n  - {kind: netq, config: {endpoint: ftp://netq, credentialsDir: /c}}\n",
            "not an http(s)"},
           {"sources:\n  - {kind: netq, config: {endpoint: https://u:p@netq, credentialsDir: /c}}\n",
            "must not carry credentials"},
           {"sources:\n  - {kind: netq, config: {endpoint: https://netq, credentialsDir: /c, caFile: /a, "
            "insecureSkipVerify: true}}\n",
            "contradicts caFile"}}) {
    auto bad = agent::parse_agent_config(yaml, "config.yaml");
    ASSERT_FALSE(bad.has_value()) << yaml;
    EXPECT_THAT(bad.error().message(), HasSubstr(message)) << yaml;
  }
}

// UFM and NetQ read their endpoint keys through one reader (discoverers/registry/rest_endpoint.h): the
// same block gives the same settings and the same errors through both doors, with one set of bounds
// and units. NetQ's maxBytes once refused anything under 1024 while UFM's took 1; both now take what
// either took, and the timeout is kept in milliseconds by both.
TEST(RestEndpoint, UfmAndNetqReadTheSameKeysAlike) {
  DiscovererRegistry registry;
  register_builtin_discoverers(registry);
  const SourceEntry* netq = registry.entry("netq");
  const SourceEntry* ufm = registry.entry("ufm");
  ASSERT_NE(netq, nullptr);
  ASSERT_NE(ufm, nullptr);
  const std::string block =
      "{endpoint: 'https://fabric.example:8443', credentials: {secretRef: {name: creds, namespace: ops}}, "
      "timeout: 2.5, maxBytes: 1000}";
  auto from_netq = netq->parse_config(YAML::Load(block), {"config.yaml", "sources[0].config"});
  auto from_ufm = ufm->parse_config(YAML::Load(block), {"config.yaml", "sources[1].config"});
  ASSERT_TRUE(from_netq.has_value()) << from_netq.error().message();
  ASSERT_TRUE(from_ufm.has_value()) << from_ufm.error().message();
  const auto& n = static_cast<const RestEndpoint&>(static_cast<const NetqConfig&>(**from_netq));
  const auto& u = static_cast<const RestEndpoint&>(static_cast<const ufm::UfmSourceConfig&>(**from_ufm));
  for (const RestEndpoint* e : {&n, &u}) {
    EXPECT_EQ(e->endpoint, "https://fabric.example:8443");
    EXPECT_EQ(e->secret_name, "creds");
    EXPECT_EQ(e->secret_namespace, "ops");
    EXPECT_EQ(e->timeout, std::chrono::milliseconds(2500));
    EXPECT_EQ(e->max_bytes, 1000u);
  }
  // Each service keeps its own default size cap.
  auto netq_default =
      netq->parse_config(YAML::Load("{endpoint: 'https://n', credentialsDir: /c}"), {"f", ""});
  auto ufm_default = ufm->parse_config(YAML::Load("{endpoint: 'https://u'}"), {"f", ""});
  ASSERT_TRUE(netq_default && ufm_default);
  EXPECT_EQ(static_cast<const NetqConfig&>(**netq_default).max_bytes, io::kDataFileLimit);
  EXPECT_EQ(static_cast<const ufm::UfmSourceConfig&>(**ufm_default).max_bytes, 512ull << 20);

  auto errors = [&](const std::string& keys) {
    std::vector<std::string> out;
    for (const SourceEntry* entry : {netq, ufm}) {
      auto r = entry->parse_config(YAML::Load("{endpoint: 'https://x', credentialsDir: /c, " + keys + "}"),
                                   {"config.yaml", "sources[0].config"});
      out.push_back(r ? "accepted" : r.error().message());
    }
    return out;
  };
  for (const char* keys : {"maxBytes: 0", "maxBytes: 100Gi", "timeout: 2h", "timeout: 0s",
                           "caFile: /a, insecureSkipVerify: true", "insecureSkipVerify: maybe"}) {
    const auto both = errors(keys);
    EXPECT_NE(both[0], "accepted") << keys;
    EXPECT_EQ(both[0], both[1]) << keys;
  }
  EXPECT_EQ(errors("maxBytes: 100Gi")[0], "config.yaml: sources[0].config.maxBytes: must be from 1 to 64Gi");
}

}  // namespace
}  // namespace hypertopo::discoverers::netq
