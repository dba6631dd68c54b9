// The UFM source against fixtures and against the fake UFM server (the in-tree loopback HTTPS
// server; there is no UFM Enterprise here). Backoff uses a ManualClock, so nothing waits for real
// time except the timeout cases, which need a real socket timeout (a few hundred milliseconds).
#include "discoverers/ufm/ufm_source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "discoverers/pipeline/discovery_pipeline.h"
#include "discoverers/ufm/ufm_client.h"
#include "discoverers/ufm/ufm_fabric.h"
#include "tests/support/fixtures.h"
#include "tests/support/ufm/fake_ufm_server.h"
#include "tests/support/ufm/ufm_generator.h"
#include "timing/clock.h"
#include "topology/tree_builder.h"

namespace hypertopo {
namespace {

using discoverers::ufm::UfmClientOptions;
using discoverers::ufm::UfmLink;
using discoverers::ufm::UfmPort;
using discoverers::ufm::UfmResponseParser;
using testing::FakeUfmServer;
using testing::RawHttpResponse;
using testing::TempDir;
using testing::UfmFabricShape;

constexpr const char* kUser = "ufm-admin";
constexpr const char* kPassword = "S3cret-Passw0rd";
constexpr const char* kToken = "TOKEN-abc123xyz";

// Domains per tier of a built tree.
std::map<int, int> domains_per_tier(const topology::Tree& tree) {
  std::map<int, int> out;
  for (const auto& d : tree.domains()) ++out[d.tier];
  return out;
}

// One fake UFM with a generated fabric, a credentials directory, a CA file and a log collector.
class UfmServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::write_text(dir.path() / "creds" / "username", std::string(kUser) + "\n");
    testing::write_text(dir.path() / "creds" / "password", std::string(kPassword) + "\n");
    testing::write_text(dir.path() / "token-creds" / "token", std::string(kToken) + "\n");
    server.set_basic_auth(kUser, kPassword);
    ASSERT_TRUE(server.start().has_value());
    testing::write_text(dir.path() / "ca.pem", server.ca_pem());
  }

  void serve(const UfmFabricShape& shape) {
    fabric = testing::generate_ufm_fabric(shape);
    server.set_records("ports", fabric.ports);
    server.set_records("links", fabric.links);
  }

  UfmClientOptions options() {
    UfmClientOptions o;
    o.endpoint = server.url();
    o.credentials_dir = dir.path() / "creds";
    o.ca_file = dir.path() / "ca.pem";
    o.clock = clock;
    o.timeout = std::chrono::milliseconds(5000);
    o.log = [this](const std::string& line) {
      std::lock_guard lock(log_mutex);
      log.push_back(line);
    };
    return o;
  }

  std::expected<topology::Tree, Error> build(const discoverers::Discovery& found,
                                             topology::TreeBuilderOptions builder_options = {}) {
    auto builder = topology::TreeBuilder::create(std::move(builder_options));
    if (!builder) return std::unexpected(builder.error());
    return builder->build(*found.graph);
  }

  // No log line and no error carries a credential (or its base64 form).
  void expect_no_secret(const std::string& text) {
    for (const char* secret : {kPassword, kToken, "dWZtLWFkbWluOlMzY3JldC1QYXNzdzByZA"}) {
      EXPECT_EQ(text.find(secret), std::string::npos) << "a credential leaked into: " << text;
    }
  }
  void expect_no_secret_logged() {
    std::lock_guard lock(log_mutex);
    for (const auto& line : log) expect_no_secret(line);
  }

  TempDir dir;
  FakeUfmServer server;
  testing::GeneratedUfm fabric;
  std::shared_ptr<timing::ManualClock> clock = std::make_shared<timing::ManualClock>();
  std::mutex log_mutex;
  std::vector<std::string> log;
};

TEST(UfmParse, ReadsTheReconstructedComputerPortFixture) {
  HT_REQUIRE_FIXTURE(path, "ufm/ufm-ports-computer-port.RECONSTRUCTED.json");
  std::string body = testing::read_text(path);
  UfmResponseParser parser;
  std::vector<UfmPort> ports;
  auto page = parser.ports(body, ports);
  ASSERT_TRUE(page.has_value()) << page.error().message();
  EXPECT_FALSE(page->paged);
  ASSERT_EQ(ports.size(), 1u);
  const UfmPort& p = ports[0];
  EXPECT_EQ(p.role, discoverers::ufm::PortRole::kHost);
  EXPECT_EQ(p.guid, "0xb8599f03000a77d0");
  EXPECT_EQ(p.system_guid, "0xb8599f03000a77d0");
  EXPECT_EQ(p.system_name, "dgx-node-01");
  EXPECT_EQ(p.node_description, "dgx-node-01 mlx5_0");
  EXPECT_EQ(p.number, 1);
  EXPECT_EQ(p.peer_guid, "0x248a070300f88fe0");
  EXPECT_EQ(p.peer_port, 20);
  EXPECT_EQ(p.peer_description, "MF0;leaf-sw-01:MQM9700/U1");
  EXPECT_EQ(p.rate, "4xNDR");
  EXPECT_FALSE(p.down);
  // The health facts, in the units the libibnetdisc walk uses ("Link Up" is PortPhysicalState 5).
  EXPECT_EQ(p.facts.width_active, 4);
  EXPECT_EQ(p.facts.speed_active, 106250u);
  EXPECT_EQ(p.facts.state, 4);
  EXPECT_EQ(p.facts.phys_state, 5);
}

// The documented switch port is down (logical_state "Down", physical_state "Polling", null active
// width and speed, empty enabled lists). The excerpt has no "guid"; given one, its facts read so.
TEST(UfmParse, DocumentedDownSwitchPortReadsAsDownAndPolling) {
  HT_REQUIRE_FIXTURE(path, "ufm/ufm-docs-ports-switch.PARTIAL.json");
  std::string body = testing::read_text(path);
  const auto brace = body.find('{');
  ASSERT_NE(brace, std::string::npos);
  body.insert(brace + 1, "\"guid\": \"248a070300f88fe0\", ");
  UfmResponseParser parser;
  std::vector<UfmPort> ports;
  auto page = parser.ports(body, ports);
  ASSERT_TRUE(page.has_value()) << page.error().message();
  ASSERT_EQ(ports.size(), 1u) << page->first_skip;
  const UfmPort& p = ports[0];
  EXPECT_EQ(p.role, discoverers::ufm::PortRole::kSwitch);
  EXPECT_EQ(p.number, 52);
  EXPECT_TRUE(p.down);
  EXPECT_EQ(p.rate, "");
  EXPECT_EQ(p.facts.state, 1);       // Down
  EXPECT_EQ(p.facts.phys_state, 2);  // Polling
  EXPECT_EQ(p.facts.width_active, 0);
  EXPECT_EQ(p.facts.speed_active, 0u);
  EXPECT_EQ(p.facts.width_enabled, 0);
  EXPECT_EQ(p.facts.speed_supported, 0u);
  EXPECT_TRUE(p.facts.known());
}

TEST(UfmParse, ReadsTheDocumentedSwitchPortAndLinks) {
  HT_REQUIRE_FIXTURE(ports_path, "ufm/ufm-docs-ports-switch.PARTIAL.json");
  HT_REQUIRE_FIXTURE(links_path, "ufm/ufm-docs-links-get-all.json");
  std::string ports_body = testing::read_text(ports_path);
  std::string links_body = testing::read_text(links_path);
  UfmResponseParser parser;
  std::vector<UfmPort> ports;
  std::vector<UfmLink> links;
  // The documented switch port has no "guid" (the excerpt is partial): skipped and said so.
  auto page = parser.ports(ports_body, ports);
  ASSERT_TRUE(page.has_value()) << page.error().message();
  EXPECT_EQ(page->records, 1u);
  EXPECT_EQ(page->skipped, 1u);
  EXPECT_NE(page->first_skip.find("no \"guid\""), std::string::npos) << page->first_skip;
  EXPECT_TRUE(ports.empty());
  auto lpage = parser.links(links_body, links);
  ASSERT_TRUE(lpage.has_value()) << lpage.error().message();
  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(links[0].source_guid, "0x0002c903007b78b0");
  EXPECT_EQ(links[0].source_port, 29);
  EXPECT_EQ(links[0].destination_port, 28);
}

TEST(UfmParse, FixturePortAndLinkMakeAHostUnderItsLeaf) {
  HT_REQUIRE_FIXTURE(ports_path, "ufm/ufm-ports-computer-port.RECONSTRUCTED.json");
  HT_REQUIRE_FIXTURE(links_path, "ufm/ufm-docs-links-by-system.PARTIAL.json");
  std::string ports_body = testing::read_text(ports_path);
  std::string links_body = testing::read_text(links_path);
  UfmResponseParser parser;
  std::vector<UfmPort> ports;
  std::vector<UfmLink> links;
  ASSERT_TRUE(parser.ports(ports_body, ports).has_value());
  ASSERT_TRUE(parser.links(links_body, links).has_value());
  std::vector<std::string> notes;
  auto graph = discoverers::ufm::build_ufm_graph(ports, links, &notes);
  auto leaf = graph.find("0x248a070300f88fe0");
  auto hca = graph.find("0xb8599f03000a77d0");
  ASSERT_TRUE(leaf && hca);
  EXPECT_EQ(graph.vertex(*leaf).kind, topology::VertexKind::kSwitch);
  EXPECT_EQ(graph.vertex(*hca).kind, topology::VertexKind::kEndpoint);
  EXPECT_EQ(graph.vertex(*hca).host, "dgx-node-01");
  EXPECT_EQ(graph.vertex(*hca).node_guid, "0xb8599f03000a77d0");
  auto nbrs = graph.neighbors(*hca);
  EXPECT_TRUE(std::find(nbrs.begin(), nbrs.end(), *leaf) != nbrs.end());
  auto builder = topology::TreeBuilder::create();
  ASSERT_TRUE(builder.has_value());
  auto tree = builder->build(graph);
  ASSERT_TRUE(tree.has_value()) << tree.error().message();
  EXPECT_TRUE(tree->report.unmapped_endpoints.empty());  // mapped by system_name
  EXPECT_TRUE(tree->report.unattached_hosts.empty());    // and cabled to its leaf
}

// Replaces `from` by `to` in the one generated port record of `guid_hex`'s port `port` (a record
// names itself "<guid>_<port>").
void edit_port(testing::GeneratedUfm& fabric, const std::string& guid_hex, int port, const std::string& from,
               const std::string& to) {
  const std::string name = "\"name\": \"" + guid_hex + "_" + std::to_string(port) + "\"";
  for (auto& record : fabric.ports) {
    if (record.find(name) == std::string::npos) continue;
    auto at = record.find(from);
    ASSERT_NE(at, std::string::npos) << record;
    record.replace(at, from.size(), to);
    return;
  }
  FAIL() << "no port record " << name;
}

std::optional<topology::DomainHealth> health_of(const topology::Tree& tree, const std::string& name) {
  auto id = tree.find(name);
  if (!id) return std::nullopt;
  return tree.domain(*id).health;
}

// Both ends of every cable carry UFM's facts into the graph, so the health pass judges UFM fabrics
// as it judges walks: a 1x port among 4x siblings, an HDR port among NDR ones, and a cable the links
// answer still lists whose port went Down.
TEST(UfmHealth, PortFactsOfBothEndsReachTheHealthPass) {
  // 1 pod, 4 leaves with 2 hosts each (leaf ports 1-2), each leaf cabled to 2 spines (ports 3, 4).
  auto fabric =
      testing::generate_ufm_fabric({.pods = 1, .leaves_per_pod = 4, .hosts_per_leaf = 2, .cores = 0});
  const std::string leaf1 = "248a070300100001", leaf2 = "248a070300100002", leaf3 = "248a070300100003";
  edit_port(fabric, leaf1, 3, "\"active_width\": \"4x\"", "\"active_width\": \"1x\"");
  edit_port(fabric, leaf2, 4, "\"active_speed\": \"NDR\"", "\"active_speed\": \"HDR\"");
  edit_port(fabric, leaf3, 3, "\"physical_state\": \"Link Up\", \"logical_state\": \"Active\"",
            "\"physical_state\": \"Polling\", \"logical_state\": \"Down\"");
  std::string ports_body = testing::json_list(fabric.ports);
  std::string links_body = testing::json_list(fabric.links);
  UfmResponseParser parser;
  std::vector<UfmPort> ports;
  std::vector<UfmLink> links;
  ASSERT_TRUE(parser.ports(ports_body, ports).has_value());
  ASSERT_TRUE(parser.links(links_body, links).has_value());
  auto graph = discoverers::ufm::build_ufm_graph(ports, links, nullptr);
  std::size_t with_facts = 0;
  for (const auto& l : graph.links()) with_facts += l.end_a.known() && l.end_b.known();
  EXPECT_EQ(with_facts, graph.links().size());
  auto builder = topology::TreeBuilder::create();
  ASSERT_TRUE(builder.has_value());
  auto tree = builder->build(graph);
  ASSERT_TRUE(tree.has_value()) << tree.error().message();
  auto narrow = health_of(*tree, "leaf-leaf-1");
  ASSERT_TRUE(narrow && narrow->degraded());
  EXPECT_EQ(narrow->reason(), topology::HealthReason::kDegradedLinkWidth);
  EXPECT_EQ(narrow->message(), "leaf-1[3] - spine-0[2]: DegradedLinkWidth, 1x, expected 4x");
  auto slow = health_of(*tree, "leaf-leaf-2");
  ASSERT_TRUE(slow && slow->degraded());
  EXPECT_EQ(slow->reason(), topology::HealthReason::kDegradedLinkSpeed);
  EXPECT_EQ(slow->message(), "leaf-2[4] - spine-1[3]: DegradedLinkSpeed, HDR, expected NDR");
  auto down = health_of(*tree, "leaf-leaf-3");
  ASSERT_TRUE(down && down->degraded());
  EXPECT_EQ(down->reason(), topology::HealthReason::kLinkDown);
  EXPECT_EQ(down->message(), "leaf-3[3] - spine-0[4]: LinkDown, down, expected up");
  auto healthy = health_of(*tree, "leaf-leaf-0");
  ASSERT_TRUE(healthy);
  EXPECT_FALSE(healthy->degraded()) << healthy->message();
}

// Every vertex and link of a graph with every field, in order: two graphs print the same only when
// they are the same.
std::string graph_text(const topology::FabricGraph& g) {
  std::ostringstream out;
  auto facts = [&](const topology::PortFacts& f) {
    out << ' ' << int(f.width_active) << '/' << int(f.width_enabled) << '/' << int(f.width_supported) << '/'
        << f.speed_active << '/' << f.speed_enabled << '/' << f.speed_supported << '/' << int(f.state) << '/'
        << int(f.phys_state);
  };
  for (const auto& v : g.vertices()) {
    out << int(v.kind) << ' ' << v.id << " '" << v.description << "' " << v.host << ' ' << v.node_guid << ' '
        << v.system_guid << ' ' << v.port << ' ' << v.aggregation_node << '\n';
  }
  for (const auto& l : g.links()) {
    out << l.a << ':' << l.port_a << '-' << l.b << ':' << l.port_b << ' ' << l.rate;
    facts(l.end_a);
    facts(l.end_b);
    out << '\n';
  }
  return out.str();
}

// The fabric the answers describe, read record by record with nlohmann-json the way UFM's REST guide
// describes the fields, for well-formed answers: independent of the simdjson reading and of the
// graph assembly under test.
struct PlainUfmReading {
  using End = std::pair<std::string, int>;  // (vertex id, port number)
  struct Endpoint {
    std::string host, node_guid, description;
    int port = 0;
  };
  std::map<std::string, Endpoint> endpoints;    // by port GUID
  std::map<std::string, std::string> switches;  // by switch GUID: its description
  std::set<std::pair<End, End>> cables;         // each cable once, the smaller end first
  std::map<End, topology::PortFacts> facts;     // what each listed port says of itself
  std::map<End, std::string> rates;             // "4xNDR"

  static std::string guid(const nlohmann::json& text) {
    std::string hex = text.get<std::string>();
    if (hex.starts_with("0x")) hex.erase(0, 2);
    std::transform(hex.begin(), hex.end(), hex.begin(), [](unsigned char c) { return std::tolower(c); });
    return "0x" + std::string(16 - hex.size(), '0') + hex;
  }
  static int number(const nlohmann::json& v) {
    return v.is_string() ? std::stoi(v.get<std::string>()) : v.get<int>();
  }
  static std::uint8_t lanes(const std::string& w) {
    return w == "4x" ? 4 : w == "1x" ? 1 : w == "2x" ? 2 : 0;
  }
  static std::uint32_t mbps(const std::string& s) {
    return s == "NDR" ? 106250 : s == "HDR" ? 53125 : s == "EDR" ? 25781 : 0;
  }
  void cable(End a, End b) { cables.insert(a < b ? std::pair{a, b} : std::pair{b, a}); }

  void read(const std::string& ports_body, const std::string& links_body) {
    auto list = [](const std::string& body) {
      auto j = nlohmann::json::parse(body);
      return j.is_object() ? j["data"] : j;
    };
    for (const auto& p : list(ports_body)) {
      const bool is_switch = p.value("description", "").find("Switch") != std::string::npos;
      const std::string port_guid = guid(p["guid"]);
      const std::string owner = is_switch && p.contains("systemID") ? guid(p["systemID"]) : port_guid;
      const int number = PlainUfmReading::number(p["number"]);
      if (is_switch) {
        switches.emplace(owner, p.value("node_description", ""));
      } else {
        endpoints.emplace(port_guid, Endpoint{p.value("system_name", ""), guid(p["systemID"]),
                                              p.value("node_description", ""), number});
      }
      topology::PortFacts f;
      f.width_active = lanes(p["active_width"]);
      f.speed_active = mbps(p["active_speed"]);
      for (const auto& w : p.value("enabled_width", nlohmann::json::array()))
        f.width_enabled = std::max(f.width_enabled, lanes(w));
      for (const auto& s : p.value("enabled_speed", nlohmann::json::array()))
        f.speed_enabled = std::max(f.speed_enabled, mbps(s));
      for (const auto& w : p.value("supported_width", nlohmann::json::array()))
        f.width_supported = std::max(f.width_supported, lanes(w));
      for (const auto& s : p.value("supported_speed", nlohmann::json::array()))
        f.speed_supported = std::max(f.speed_supported, mbps(s));
      const std::string state = p.value("logical_state", "");
      f.state = state == "Active" ? 4 : state == "Down" ? 1 : 0;
      const std::string phys = p.value("physical_state", "");
      f.phys_state = phys == "Link Up" ? 5 : phys == "Polling" ? 2 : 0;
      facts[{owner, number}] = f;
      rates[{owner, number}] = p["active_width"].get<std::string>() + p["active_speed"].get<std::string>();
      // The port's own peer fields name its cable, unless the port is down.
      const std::string peer = p.value("peer", "");
      if (state != "Down" && peer.find('_') != std::string::npos) {
        const auto underscore = peer.rfind('_');
        cable({owner, number}, {guid(peer.substr(0, underscore)), std::stoi(peer.substr(underscore + 1))});
      }
    }
    for (const auto& l : list(links_body)) {
      cable({guid(l["source_guid"]), number(l["source_port"])},
            {guid(l["destination_guid"]), number(l["destination_port"])});
    }
  }

  // What the graph holds, said in the same terms.
  void expect_same_as(const topology::FabricGraph& g) const {
    std::map<std::string, Endpoint> got_endpoints;
    std::map<std::string, std::string> got_switches;
    for (const auto& v : g.vertices()) {
      if (v.kind == topology::VertexKind::kSwitch) {
        got_switches[v.id] = v.description;
      } else {
        got_endpoints[v.id] = Endpoint{v.host, v.node_guid, v.description, v.port};
        EXPECT_EQ(v.system_guid, v.node_guid) << v.id;
      }
    }
    EXPECT_EQ(got_switches, switches);
    ASSERT_EQ(got_endpoints.size(), endpoints.size());
    for (const auto& [id, e] : endpoints) {
      ASSERT_TRUE(got_endpoints.contains(id)) << id;
      const Endpoint& got = got_endpoints.at(id);
      EXPECT_EQ(std::tie(got.host, got.node_guid, got.description, got.port),
                std::tie(e.host, e.node_guid, e.description, e.port))
          << id;
    }
    std::set<std::pair<End, End>> got_cables;
    for (const auto& l : g.links()) {
      const End a{g.vertex(l.a).id, l.port_a}, b{g.vertex(l.b).id, l.port_b};
      EXPECT_TRUE(got_cables.insert(a < b ? std::pair{a, b} : std::pair{b, a}).second)
          << "a cable twice: " << a.first << '[' << a.second << "] - " << b.first << '[' << b.second << ']';
      auto facts_of = [&](const End& end) {
        auto it = facts.find(end);
        return it == facts.end() ? topology::PortFacts{} : it->second;
      };
      EXPECT_EQ(l.end_a, facts_of(a)) << a.first << '[' << a.second << ']';
      EXPECT_EQ(l.end_b, facts_of(b)) << b.first << '[' << b.second << ']';
      std::string rate = rates.contains(a) ? rates.at(a) : "";
      if (rate.empty() && rates.contains(b)) rate = rates.at(b);
      EXPECT_EQ(l.rate, rate);
    }
    EXPECT_EQ(got_cables, cables);
  }
};

// The reading the fetch uses (simdjson on demand into UfmFabric, page by page as the pages arrive)
// against a plain reading of the same answers: the same switches, CA ports, cables and port facts.
TEST(UfmGraph, TheFetchPathGivesTheGraphAPlainReadingDescribes) {
  auto fabric =
      testing::generate_ufm_fabric({.pods = 2, .leaves_per_pod = 3, .hosts_per_leaf = 3, .cores = 2});
  edit_port(fabric, "248a070300100001", 4, "\"active_width\": \"4x\"", "\"active_width\": \"1x\"");
  edit_port(fabric, "248a070300100002", 5, "\"physical_state\": \"Link Up\", \"logical_state\": \"Active\"",
            "\"physical_state\": \"Polling\", \"logical_state\": \"Down\"");
  // A links answer that lacks a third of the cables: the ports' peer fields add them.
  std::vector<std::string> links;
  for (std::size_t i = 0; i < fabric.links.size(); ++i)
    if (i % 3 != 1) links.push_back(fabric.links[i]);
  const std::string ports_body = testing::json_list(fabric.ports), links_body = testing::json_list(links);
  PlainUfmReading plain;
  plain.read(ports_body, links_body);
  ASSERT_FALSE(plain.cables.empty());

  UfmResponseParser parser;
  discoverers::ufm::UfmFabric read;
  const std::size_t rpp = 7;
  for (std::size_t page = 1; (page - 1) * rpp < fabric.ports.size(); ++page) {
    std::string body = testing::json_page(fabric.ports, page, rpp);
    auto parsed = parser.ports(body, read);
    ASSERT_TRUE(parsed.has_value()) << parsed.error().message();
    EXPECT_TRUE(parsed->paged);
  }
  std::string links_copy = links_body;
  ASSERT_TRUE(parser.links(links_copy, read).has_value());
  std::vector<std::string> notes;
  const auto graph = discoverers::ufm::build_ufm_graph(read, &notes);
  EXPECT_TRUE(notes.empty());
  plain.expect_same_as(graph);

  // The record reading (self-contained UfmPort / UfmLink) gives the very same graph.
  std::vector<UfmPort> ports;
  std::vector<UfmLink> link_records;
  std::string p = ports_body, l = links_body;
  ASSERT_TRUE(parser.ports(p, ports).has_value());
  ASSERT_TRUE(parser.links(l, link_records).has_value());
  EXPECT_EQ(graph_text(discoverers::ufm::build_ufm_graph(ports, link_records, nullptr)), graph_text(graph));
}

TEST(UfmGraph, TheFixturesGiveTheGraphAPlainReadingDescribes) {
  HT_REQUIRE_FIXTURE(ports_path, "ufm/ufm-ports-computer-port.RECONSTRUCTED.json");
  HT_REQUIRE_FIXTURE(links_path, "ufm/ufm-docs-links-by-system.PARTIAL.json");
  std::string ports_body = testing::read_text(ports_path);
  std::string links_body = testing::read_text(links_path);
  PlainUfmReading plain;
  plain.read(ports_body, links_body);
  UfmResponseParser parser;
  discoverers::ufm::UfmFabric read;
  ASSERT_TRUE(parser.ports(ports_body, read).has_value());
  ASSERT_TRUE(parser.links(links_body, read).has_value());
  // The links fixture's far ends are switches the ports answer does not list: they come in with
  // the links' descriptions, which the plain reading does not model; compare the CA side and cables.
  const auto graph = discoverers::ufm::build_ufm_graph(read, nullptr);
  std::set<std::pair<PlainUfmReading::End, PlainUfmReading::End>> cables;
  for (const auto& link : graph.links()) {
    PlainUfmReading::End a{graph.vertex(link.a).id, link.port_a}, b{graph.vertex(link.b).id, link.port_b};
    cables.insert(a < b ? std::pair{a, b} : std::pair{b, a});
  }
  EXPECT_EQ(cables, plain.cables);
  auto hca = graph.find("0xb8599f03000a77d0");
  ASSERT_TRUE(hca.has_value());
  const auto& expected = plain.endpoints.at("0xb8599f03000a77d0");
  EXPECT_EQ(graph.vertex(*hca).host, expected.host);
  EXPECT_EQ(graph.vertex(*hca).description, expected.description);
  EXPECT_EQ(graph.vertex(*hca).port, expected.port);
}

TEST(UfmParse, VolcanoMockPortsHaveNoGuidsAndAreSkippedNotGuessed) {
  HT_REQUIRE_FIXTURE(path, "ufm/volcano-ufm-mock-ports.json");
  std::string body = testing::read_text(path);
  UfmResponseParser parser;
  std::vector<UfmPort> ports;
  auto page = parser.ports(body, ports);
  ASSERT_TRUE(page.has_value()) << page.error().message();
  EXPECT_EQ(page->records, 8u);
  EXPECT_EQ(page->skipped, 8u);
  EXPECT_TRUE(ports.empty());
}

TEST(UfmParse, TruncatedJsonIsAClearError) {
  auto fabric = testing::generate_ufm_fabric({});
  std::string body = testing::json_list(fabric.ports);
  body.resize(body.size() / 2);
  UfmResponseParser parser;
  std::vector<UfmPort> ports;
  auto page = parser.ports(body, ports);
  ASSERT_FALSE(page.has_value());
  EXPECT_EQ(page.error().code(), ErrorCode::kParse);
  EXPECT_NE(page.error().message().find("not valid JSON"), std::string::npos) << page.error().message();
}

TEST(UfmParse, AStrayByteIsNamedByItsOffset) {
  UfmResponseParser parser;
  discoverers::ufm::UfmFabric read;
  std::string body = R"([{"guid": "1"}, x])";
  auto page = parser.ports(body, read);
  ASSERT_FALSE(page.has_value());
  EXPECT_EQ(page.error().code(), ErrorCode::kParse);
  EXPECT_NE(page.error().message().find("at byte 16"), std::string::npos) << page.error().message();
}

TEST(UfmParse, WrongShapesAndTypesAreErrorsOrSkipsNeverCrashes) {
  UfmResponseParser parser;
  std::vector<UfmPort> ports;
  std::string scalar = "42";
  EXPECT_FALSE(parser.ports(scalar, ports).has_value());
  std::string no_data = R"({"total_resources": 3})";
  auto e = parser.ports(no_data, ports);
  ASSERT_FALSE(e.has_value());
  EXPECT_NE(e.error().message().find("\"data\""), std::string::npos);
  std::string mixed =
      R"([1, "x", {"guid": 7}, {"guid": "zz-not-hex"}, {"guid": "0xAB", "number": "3", "description": "Computer IB Port", "peer": "N/A"}])";
  auto page = parser.ports(mixed, ports);
  ASSERT_TRUE(page.has_value()) << page.error().message();
  EXPECT_EQ(page->records, 5u);
  EXPECT_EQ(page->skipped, 3u);  // 1, "x", "zz-not-hex"; a numeric guid 7 is hex "7"
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_EQ(ports[1].guid, "0x00000000000000ab");
  EXPECT_EQ(ports[1].number, 3);
  EXPECT_TRUE(ports[1].peer_guid.empty());
  std::vector<UfmLink> links;
  std::string bad_link = R"([{"source_guid": "0x1", "source_port": 1}])";
  auto lpage = parser.links(bad_link, links);
  ASSERT_TRUE(lpage.has_value());
  EXPECT_EQ(lpage->skipped, 1u);
  EXPECT_NE(lpage->first_skip.find("destination_guid"), std::string::npos);
}

// Every spelling of a GUID reads as topology::normalize_guid reads it: sixteen digits go a word at a
// time, shorter ones a digit at a time; a byte just outside each digit range makes it no GUID.
TEST(UfmParse, GuidSpellingsReadAsNormalizeGuidReadsThem) {
  std::vector<std::string> spellings = {"0x248a070300f88fe0",
                                        "248A070300F88FE0",
                                        "0X248a070300F88fE0",
                                        "ffffffffffffffff",
                                        "0000000000000000",
                                        "9aF0",
                                        "0x1",
                                        "0123456789abcdef",
                                        "fedcba9876543210"};
  // Each byte next to a digit range ('/' ':' '@' 'G' '`' 'g') at either half of a sixteen-digit
  // GUID, and a two-byte UTF-8 letter (high bits set) in the place of two digits.
  for (std::size_t at : {0u, 7u, 8u, 15u}) {
    for (char bad : {'/', ':', '@', 'G', '`', 'g'}) {
      std::string guid = "248a070300f88fe0";
      guid[at] = bad;
      spellings.push_back(guid);
    }
    std::string guid = "248a070300f88fe0";
    spellings.push_back(guid.replace(std::min<std::size_t>(at, 14), 2, "\xc3\xa9"));
  }
  std::string body = "[";
  for (std::size_t i = 0; i < spellings.size(); ++i) {
    body += (i ? ", " : "") + std::string(R"({"description": "Computer IB Port", "number": 1, "guid": ")") +
            spellings[i] + R"("})";
  }
  body += "]";
  UfmResponseParser parser;
  std::vector<UfmPort> ports;
  auto page = parser.ports(body, ports);
  ASSERT_TRUE(page.has_value()) << page.error().message();
  std::vector<std::string> read, expected;
  for (const auto& port : ports) read.push_back(port.guid);
  for (const auto& spelling : spellings)
    if (auto normal = topology::normalize_guid(spelling)) expected.push_back(*normal);
  EXPECT_EQ(read, expected);
  EXPECT_EQ(page->skipped, spellings.size() - expected.size());
  EXPECT_EQ(expected.size(), 9u);
}

// The enabled/supported lists every record repeats are recognised by their text after the first
// reading: the same lists give the same facts as lists that change from record to record, in any
// spelling (spaces, escapes, numbers, a nested list, an empty one).
TEST(UfmParse, RepeatedWidthAndSpeedListsGiveEachRecordItsOwnFacts) {
  const std::vector<std::pair<std::string, std::pair<int, int>>> lists = {
      {R"("enabled_width": ["1x", "4x"], "enabled_speed": ["HDR", "NDR"])", {4, 106250}},
      {R"("enabled_width": ["1x", "4x"], "enabled_speed": ["HDR", "NDR"])", {4, 106250}},
      {R"("enabled_width": ["1x"], "enabled_speed": ["HDR"])", {1, 53125}},
      {R"("enabled_width": ["1x", "4x"], "enabled_speed": ["HDR", "NDR"] )", {4, 106250}},
      {R"("enabled_width": [ "1x" , "4x" ], "enabled_speed": [ "HDR" ])", {4, 53125}},
      {R"("enabled_width": ["1x", "4x", "8x"], "enabled_speed": ["HDR", "NDR", "XDR"])", {8, 212500}},
      {R"("enabled_width": ["1x"], "enabled_speed": ["H\u0044R"])", {1, 53125}},
      {R"("enabled_width": ["1x", ["12x"]], "enabled_speed": [])", {1, 0}},
      {R"("enabled_width": ["1x", ["12x"]], "enabled_speed": [7, "EDR"])", {1, 25781}},
      {R"("enabled_width": [], "enabled_speed": "NDR")", {0, 0}},
      {R"("enabled_width": ["1x"], "enabled_speed": ["HDR"])", {1, 53125}},
      {R"("enabled_width": ["1x", "4x"], "enabled_speed": ["HDR", "NDR"])", {4, 106250}},
  };
  std::string body = "[";
  for (std::size_t i = 0; i < lists.size(); ++i) {
    body += (i ? ", " : "") + std::string(R"({"guid": ")") + std::to_string(100 + i) +
            R"(", "description": "Computer IB Port", )" + lists[i].first + "}";
  }
  body += "]";
  UfmResponseParser parser;
  std::vector<UfmPort> ports;
  auto page = parser.ports(body, ports);
  ASSERT_TRUE(page.has_value()) << page.error().message();
  ASSERT_EQ(ports.size(), lists.size());
  for (std::size_t i = 0; i < lists.size(); ++i) {
    EXPECT_EQ(ports[i].facts.width_enabled, lists[i].second.first) << lists[i].first;
    EXPECT_EQ(ports[i].facts.speed_enabled, static_cast<std::uint32_t>(lists[i].second.second))
        << lists[i].first;
  }
}

// One struct for every front end: the agent's YAML block and the command line fill UfmSourceConfig.
TEST(UfmSourceConfig, TheAgentBlockAndTheCommandLineFillOneStruct) {
  discoverers::DiscovererRegistry registry;
  discoverers::register_builtin_discoverers(registry);
  const auto* ufm = registry.entry("ufm");
  ASSERT_NE(ufm, nullptr);
  EXPECT_EQ(ufm->cache, discoverers::CachePolicy::kInterval);
  auto parsed =
      ufm->parse_config(YAML::Load("{endpoint: 'https://ufm.example:8443', credentials: {secretRef: "
                                   "{name: ufm-creds, namespace: ops}}, caFile: /etc/ca.pem, timeout: "
                                   "2.5, maxBytes: 1000, pageSize: 50}"),
                        {"config.yaml", "sources[1].config"});
  ASSERT_TRUE(parsed.has_value()) << parsed.error().message();
  const auto& c = static_cast<const discoverers::ufm::UfmSourceConfig&>(**parsed);
  EXPECT_EQ(c.endpoint, "https://ufm.example:8443");
  EXPECT_EQ(c.secret_name, "ufm-creds");
  EXPECT_EQ(c.secret_namespace, "ops");
  EXPECT_EQ(c.ca_file, "/etc/ca.pem");
  EXPECT_FALSE(c.insecure);
  EXPECT_EQ(c.timeout, std::chrono::milliseconds(2500));
  EXPECT_EQ(c.max_bytes, 1000u);
  EXPECT_EQ(c.page_size, 50u);
  auto error = [&](const std::string& yaml) {
    auto r = ufm->parse_config(YAML::Load(yaml), {"config.yaml", "sources[1].config"});
    return r ? std::string("accepted") : r.error().message();
  };
  EXPECT_EQ(error("{endpoint: 'ftp://x'}"),
            "config.yaml: sources[1].config.endpoint: 'ftp://x' is not an http(s):// URL");
  EXPECT_THAT(error("{endpoint: 'https://user:pw-in-url-42@x'}"),
              ::testing::AllOf(::testing::HasSubstr("must not carry credentials"),
                               ::testing::Not(::testing::HasSubstr("pw-in-url-42"))));
  EXPECT_THAT(error("{endpoint: 'https://x', bogus: 1}"),
              ::testing::HasSubstr("config.yaml: sources[1].config.bogus: unknown key (known: endpoint"));
  EXPECT_EQ(error("{caFile: /c}"), "config.yaml: sources[1].config.endpoint: is required");
  EXPECT_EQ(error("{endpoint: 'https://x', credentials: {secretRef: {namespace: x}}}"),
            "config.yaml: sources[1].config.credentials.secretRef.name: is required");
  auto from_arg = ufm->parse_arg("https://h");
  ASSERT_TRUE(from_arg.has_value());
  EXPECT_EQ(static_cast<const discoverers::ufm::UfmSourceConfig&>(**from_arg).endpoint, "https://h");
  EXPECT_FALSE(ufm->parse_arg("").has_value());
}

TEST_F(UfmServerTest, ThreeTierFabricGivesLeafSpineAndCoreTiers) {
  // 8 pods x 8 leaves x 24 hosts: 1536 hosts, ~5000 port records.
  serve({.pods = 8, .leaves_per_pod = 8, .hosts_per_leaf = 24, .spines_per_pod = 4, .cores = 4});
  ASSERT_GE(fabric.ports.size(), 3500u);
  discoverers::ufm::UfmFetchStats stats;
  auto found = discoverers::ufm::discover_ufm(options(), &stats);
  ASSERT_TRUE(found.has_value()) << found.error().message();
  EXPECT_EQ(stats.requests, 2);  // one ports, one links
  EXPECT_EQ(found->graph->switch_count(), static_cast<std::size_t>(fabric.switches));
  EXPECT_EQ(found->graph->endpoint_count(), static_cast<std::size_t>(fabric.hosts));
  auto tree = build(*found);
  ASSERT_TRUE(tree.has_value()) << tree.error().message();
  EXPECT_EQ(tree->node_count(), 1536u);
  auto tiers = domains_per_tier(*tree);
  EXPECT_EQ(tiers[1], 64);  // one per leaf
  EXPECT_EQ(tiers[2], 8);   // one per pod (its spines)
  EXPECT_EQ(tiers[3], 1);   // the cores
  for (const auto& d : tree->domains()) {
    EXPECT_EQ(d.tier_name, d.tier == 1 ? "leaf" : d.tier == 2 ? "spine" : "core") << d.name;
    if (d.tier == 1) {
      EXPECT_EQ(d.nodes.size(), 24u) << d.name;
    }
  }
  ASSERT_TRUE(topology::check_invariants(*tree).has_value());
  expect_no_secret_logged();
}

TEST_F(UfmServerTest, RailOptimisedFabricGivesOneDomainPerScalableUnit) {
  // 4 scalable units x 32 hosts x 8 rails: 1024 HCA ports.
  serve({.pods = 4, .hosts_per_leaf = 32, .rails = 8, .spines_per_pod = 4, .cores = 8});
  auto found = discoverers::ufm::discover_ufm(options());
  ASSERT_TRUE(found.has_value()) << found.error().message();
  EXPECT_EQ(found->graph->endpoint_count(), 1024u);
  auto tree = build(*found);
  ASSERT_TRUE(tree.has_value()) << tree.error().message();
  EXPECT_EQ(tree->node_count(), 128u);
  auto tiers = domains_per_tier(*tree);
  EXPECT_EQ(tiers[1], 4);  // the rails of a unit are bridged by its hosts
  EXPECT_EQ(tiers[2], 1);  // the spines merge nothing more; the cores join the units
  EXPECT_EQ(tree->max_tier(), 2);
  for (const auto& d : tree->domains()) {
    if (d.tier == 1) {
      EXPECT_EQ(d.nodes.size(), 32u) << d.name;
    }
  }
}

TEST_F(UfmServerTest, GuidMappingBeatsSystemNameWhichBeatsTheDescription) {
  serve({.pods = 2,
         .leaves_per_pod = 2,
         .hosts_per_leaf = 4,
         .host_prefix = "sysname-",
         .description_prefix = "desc-"});
  discoverers::DiscovererRegistry registry;
  discoverers::register_builtin_discoverers(registry);
  discoverers::PipelineInput in;
  auto config = std::make_shared<discoverers::ufm::UfmSourceConfig>();
  config->endpoint = server.url();
  config->credentials_dir = (dir.path() / "creds").string();
  config->ca_file = (dir.path() / "ca.pem").string();
  in.sources = {{.kind = "ufm", .arg = "", .settings = config}};
  // Host 0's port and host 1's HCA node GUID are known to Kubernetes by GUID (a NodeReport / GUID map).
  in.builder_options.node_by_endpoint[fabric.host_port_guids[0]] = "gpu-node-a";
  in.builder_options.node_by_endpoint["0xb8599f0300000100"] = "gpu-node-b";  // host 1's node GUID
  auto run = discoverers::run_discovery(registry, in);
  ASSERT_TRUE(run.has_value()) << run.error().message();
  ASSERT_TRUE(run->complete);
  std::vector<std::string> nodes;
  for (const auto& d : run->tree.domains()) nodes.insert(nodes.end(), d.nodes.begin(), d.nodes.end());
  auto has = [&](const std::string& n) { return std::find(nodes.begin(), nodes.end(), n) != nodes.end(); };
  EXPECT_TRUE(has("gpu-node-a"));
  EXPECT_TRUE(has("gpu-node-b"));
  EXPECT_FALSE(has("sysname-0"));
  EXPECT_FALSE(has("sysname-1"));
  EXPECT_TRUE(has("sysname-2"));  // no GUID mapping: system_name
  EXPECT_FALSE(has("desc-2"));    // ... which beats the node description
  EXPECT_EQ(nodes.size(), 16u);
  ASSERT_EQ(run->outcomes.size(), 1u);
  expect_no_secret(run->outcomes[0].source);  // it names the credentials directory, never its contents
}

// A token goes into Authorization as it is: one with CR or LF (which would add a header of its
// choosing) is refused naming its file or Secret key, before any request.
TEST_F(UfmServerTest, ATokenWithALineBreakIsRefusedBeforeAnyRequest) {
  serve({});
  testing::write_text(dir.path() / "token-creds" / "token", "abc\r\nImpersonate-User: system:admin\n");
  UfmClientOptions o = options();
  o.credentials_dir = dir.path() / "token-creds";
  auto found = discoverers::ufm::discover_ufm(o);
  ASSERT_FALSE(found.has_value());
  EXPECT_NE(found.error().message().find((dir.path() / "token-creds" / "token").string()), std::string::npos)
      << found.error().message();
  EXPECT_NE(found.error().message().find("control character"), std::string::npos);
  EXPECT_EQ(found.error().message().find("system:admin"), std::string::npos);
  o.credentials = {{"token", "abc\nX-Evil: 1"}};
  o.credentials_origin = "Secret ns/ufm";
  auto from_secret = discoverers::ufm::discover_ufm(o);
  ASSERT_FALSE(from_secret.has_value());
  EXPECT_NE(from_secret.error().message().find("Secret ns/ufm key 'token'"), std::string::npos)
      << from_secret.error().message();
  EXPECT_EQ(server.requests(), 0);
}

TEST_F(UfmServerTest, WrongPasswordIsOneClearErrorAfterOneRequest) {
  serve({});
  server.set_basic_auth(kUser, "a-different-password");
  auto found = discoverers::ufm::discover_ufm(options());
  ASSERT_FALSE(found.has_value());
  EXPECT_EQ(found.error().code(), ErrorCode::kPermission);
  const std::string& message = found.error().message();
  EXPECT_NE(message.find(server.url() + "/ufmRest/resources/ports"), std::string::npos) << message;
  EXPECT_NE(message.find("401"), std::string::npos) << message;
  EXPECT_EQ(server.requests(), 1);
  EXPECT_TRUE(clock->sleeps().empty());
  expect_no_secret(message);
  expect_no_secret_logged();
}

TEST_F(UfmServerTest, ServerErrorsAreRetriedWithBackoffThenSucceed) {
  serve({});
  server.script({.status = 503, .body = "{}"});
  server.script({.status = 500, .body = "{}"});
  auto found = discoverers::ufm::discover_ufm(options());
  ASSERT_TRUE(found.has_value()) << found.error().message();
  EXPECT_EQ(server.requests(), 4);  // 503, 500, ports, links
  auto sleeps = clock->sleeps();
  ASSERT_EQ(sleeps.size(), 2u);
  EXPECT_EQ(sleeps[0], std::chrono::milliseconds(500));
  EXPECT_EQ(sleeps[1], std::chrono::milliseconds(1000));
}

TEST_F(UfmServerTest, PersistentServerErrorsGiveUpAfterBoundedAttempts) {
  serve({});
  for (int i = 0; i < 10; ++i) server.script({.status = 502, .body = "{}"});
  auto o = options();
  o.timeout = std::chrono::milliseconds(30000);  // the attempt limit is under test, not the budget
  o.max_attempts = 5;
  o.max_backoff = std::chrono::milliseconds(1500);
  auto found = discoverers::ufm::discover_ufm(o);
  ASSERT_FALSE(found.has_value());
  EXPECT_NE(found.error().message().find("HTTP 502"), std::string::npos) << found.error().message();
  EXPECT_NE(found.error().message().find("gave up after 5 attempts"), std::string::npos);
  EXPECT_EQ(server.requests(), 5);
  auto sleeps = clock->sleeps();
  ASSERT_EQ(sleeps.size(), 4u);
  EXPECT_EQ(sleeps[3], std::chrono::milliseconds(1500));  // capped
}

// --ufm-timeout is the whole fetch's budget: a server that never answers costs that long once,
// not that long per attempt (it took 11.5 s with --ufm-timeout 2 when each attempt had its own).
TEST_F(UfmServerTest, TimeoutIsTheWholeFetchsBudgetNotPerAttempt) {
  serve({});
  auto o = options();
  o.timeout = std::chrono::milliseconds(300);
  o.max_attempts = 4;
  for (int i = 0; i < 4; ++i)
    server.script({.status = 200, .body = "[]", .delay = std::chrono::milliseconds(900)});
  const auto started = std::chrono::steady_clock::now();
  auto timed_out = discoverers::ufm::discover_ufm(o);
  const auto took = std::chrono::steady_clock::now() - started;
  ASSERT_FALSE(timed_out.has_value());
  const std::string& message = timed_out.error().message();
  EXPECT_NE(message.find("timed out"), std::string::npos) << message;
  EXPECT_NE(message.find("time budget of 300ms"), std::string::npos) << message;
  EXPECT_EQ(server.requests(), 1);
  EXPECT_TRUE(clock->sleeps().empty());
  // Four attempts of 300 ms each would be 1.2 s; one budget is 0.3 s (the bound leaves room for a
  // loaded machine, not for a second attempt's timeout).
  EXPECT_LT(took, std::chrono::milliseconds(1100));
}

// Backoff draws on the same budget: the client stops retrying when the next wait would overrun it.
TEST_F(UfmServerTest, BackoffStopsWhenTheBudgetIsSpent) {
  serve({});
  for (int i = 0; i < 10; ++i) server.script({.status = 503, .body = "{}"});
  auto o = options();
  o.timeout = std::chrono::milliseconds(2000);
  o.max_attempts = 10;
  auto found = discoverers::ufm::discover_ufm(o);
  ASSERT_FALSE(found.has_value());
  EXPECT_NE(found.error().message().find("HTTP 503"), std::string::npos) << found.error().message();
  EXPECT_NE(found.error().message().find("budget"), std::string::npos) << found.error().message();
  auto sleeps = clock->sleeps();
  std::chrono::steady_clock::duration slept{0};
  for (auto s : sleeps) slept += s;
  EXPECT_EQ(sleeps.size(), 2u);  // 500 + 1000; the next 2000 would overrun the 2 s budget
  EXPECT_LE(slept, std::chrono::milliseconds(2000));
  EXPECT_EQ(server.requests(), 3);
}

// A 401 whose chunked body is cut (the server hangs up after the status) keeps its status and is
// not retried; it was "stream truncated (gave up after 4 attempts)".
TEST_F(UfmServerTest, UnauthorizedWithACutChunkedBodyIsStillUnauthorizedAndNotRetried) {
  serve({});
  server.script({.status = 401, .body = "{\"error\": \"Unauthorized\"}", .chunked_cut = true});
  auto found = discoverers::ufm::discover_ufm(options());
  ASSERT_FALSE(found.has_value());
  EXPECT_EQ(found.error().code(), ErrorCode::kPermission) << found.error().message();
  EXPECT_NE(found.error().message().find("HTTP 401 Unauthorized"), std::string::npos)
      << found.error().message();
  EXPECT_EQ(server.requests(), 1);
  EXPECT_TRUE(clock->sleeps().empty());
}

// Basic auth over http:// hands the password to anyone on the path: refused unless insecure.
TEST(UfmCleartext, PlainHttpIsRefusedUnlessInsecureAndThenWarned) {
  TempDir dir;
  testing::write_text(dir.path() / "creds" / "username", std::string(kUser) + "\n");
  testing::write_text(dir.path() / "creds" / "password", std::string(kPassword) + "\n");
  FakeUfmServer plain(/*tls=*/false);
  plain.set_basic_auth(kUser, kPassword);
  auto fabric = testing::generate_ufm_fabric({});
  plain.set_records("ports", fabric.ports);
  plain.set_records("links", fabric.links);
  ASSERT_TRUE(plain.start().has_value());
  ASSERT_TRUE(plain.url().starts_with("http://")) << plain.url();
  std::vector<std::string> log;
  UfmClientOptions o;
  o.endpoint = plain.url();
  o.credentials_dir = dir.path() / "creds";
  o.log = [&](const std::string& line) { log.push_back(line); };
  auto refused = discoverers::ufm::discover_ufm(o);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message().find("clear text"), std::string::npos) << refused.error().message();
  EXPECT_NE(refused.error().message().find("--ufm-insecure"), std::string::npos) << refused.error().message();
  EXPECT_EQ(plain.requests(), 0);

  o.insecure = true;
  auto allowed = discoverers::ufm::discover_ufm(o);
  ASSERT_TRUE(allowed.has_value()) << allowed.error().message();
  EXPECT_TRUE(std::any_of(log.begin(), log.end(),
                          [](const std::string& l) { return l.find("clear text") != std::string::npos; }));
}

TEST_F(UfmServerTest, TruncatedBodyIsAClearErrorNamingTheUrl) {
  serve({});
  std::string whole = testing::json_list(fabric.ports);
  server.script({.status = 200, .body = whole.substr(0, whole.size() / 2)});
  auto found = discoverers::ufm::discover_ufm(options());
  ASSERT_FALSE(found.has_value());
  // The fabric's answer, not the caller's input, is at fault: a runtime failure (exit 3).
  EXPECT_EQ(found.error().code(), ErrorCode::kUnavailable);
  EXPECT_NE(found.error().message().find("not valid JSON"), std::string::npos) << found.error().message();
  EXPECT_NE(found.error().message().find("/ufmRest/resources/ports"), std::string::npos);
}

TEST_F(UfmServerTest, BodyCutOnTheWireIsRetriedThenReported) {
  serve({});
  for (int i = 0; i < 4; ++i) server.script({.status = 200, .body = "[{\"guid\":", .declared_length = 5000});
  auto found = discoverers::ufm::discover_ufm(options());
  ASSERT_FALSE(found.has_value());
  const std::string& message = found.error().message();
  EXPECT_TRUE(message.find("truncated") != std::string::npos || message.find("cut") != std::string::npos)
      << message;
  EXPECT_NE(message.find("gave up after 4 attempts"), std::string::npos) << message;
  EXPECT_EQ(server.requests(), 4);
}

TEST_F(UfmServerTest, OversizedResponseHitsTheCap) {
  serve({.pods = 4, .leaves_per_pod = 4, .hosts_per_leaf = 16});
  auto o = options();
  o.max_bytes = 64 * 1024;
  auto found = discoverers::ufm::discover_ufm(o);
  ASSERT_FALSE(found.has_value());
  EXPECT_NE(found.error().message().find("larger than the limit of 65536 bytes"), std::string::npos)
      << found.error().message();
  EXPECT_EQ(server.requests(), 1);  // not retried: it would not shrink
  o.max_bytes = 64ull * 1024 * 1024;
  EXPECT_TRUE(discoverers::ufm::discover_ufm(o).has_value());
}

TEST_F(UfmServerTest, PagesAreFollowedToTheEnd) {
  serve({.pods = 4, .leaves_per_pod = 4, .hosts_per_leaf = 16, .spines_per_pod = 2, .cores = 2});
  auto unpaged = discoverers::ufm::discover_ufm(options());
  ASSERT_TRUE(unpaged.has_value());
  int before = server.requests();
  auto o = options();
  o.page_size = 500;
  discoverers::ufm::UfmFetchStats stats;
  auto paged = discoverers::ufm::discover_ufm(o, &stats);
  ASSERT_TRUE(paged.has_value()) << paged.error().message();
  std::size_t port_pages = (fabric.ports.size() + 499) / 500;
  std::size_t link_pages = (fabric.links.size() + 499) / 500;
  EXPECT_EQ(stats.pages, static_cast<int>(port_pages + link_pages));
  EXPECT_EQ(server.requests() - before, static_cast<int>(port_pages + link_pages));
  auto targets = server.targets();
  EXPECT_EQ(targets[before], "/ufmRest/resources/ports?page_number=1&rpp=500");
  EXPECT_EQ(targets[before + 1], "/ufmRest/resources/ports?page_number=2&rpp=500");
  EXPECT_EQ(paged->graph->vertex_count(), unpaged->graph->vertex_count());
  EXPECT_EQ(paged->graph->links().size(), unpaged->graph->links().size());
  auto tree_a = build(*paged);
  auto tree_b = build(*unpaged);
  ASSERT_TRUE(tree_a && tree_b);
  EXPECT_EQ(domains_per_tier(*tree_a), domains_per_tier(*tree_b));
}

// The agent makes a new source for every run; the parser and the arrays a run leaves live with the
// registry entry. A run after a larger one reads exactly its own answer.
TEST_F(UfmServerTest, TheAgentsSourceKeepsItsParserAndReadsOnlyTheLatestAnswer) {
  discoverers::DiscovererRegistry registry;
  discoverers::register_builtin_discoverers(registry);
  auto run = [&]() -> std::expected<discoverers::Discovery, Error> {
    auto config = std::make_shared<discoverers::ufm::UfmSourceConfig>();
    config->endpoint = server.url();
    config->credentials_dir = (dir.path() / "creds").string();
    config->ca_file = (dir.path() / "ca.pem").string();
    auto source = registry.create({"ufm", "", config}, discoverers::DiscoveryDeps{});
    if (!source) return std::unexpected(source.error());
    return (*source)->discover();
  };
  serve({.pods = 3, .leaves_per_pod = 4, .hosts_per_leaf = 8});
  auto large = run();
  ASSERT_TRUE(large.has_value()) << large.error().message();
  EXPECT_EQ(large->graph->endpoint_count(), 96u);
  serve({.pods = 1, .leaves_per_pod = 2, .hosts_per_leaf = 3, .host_prefix = "small-"});
  auto small = run();
  ASSERT_TRUE(small.has_value()) << small.error().message();
  auto fresh = discoverers::ufm::discover_ufm(options());  // a parser of its own
  ASSERT_TRUE(fresh.has_value()) << fresh.error().message();
  EXPECT_EQ(small->graph->endpoint_count(), 6u);
  EXPECT_EQ(graph_text(*small->graph), graph_text(*fresh->graph));
  for (const auto& v : small->graph->vertices()) {
    if (v.kind == topology::VertexKind::kEndpoint) {
      EXPECT_TRUE(v.host.starts_with("small-")) << v.host;
    }
  }
}

TEST_F(UfmServerTest, TokenAuthUsesTheV3PathAndTheTokenHeader) {
  serve({});
  server.set_token(kToken);
  auto o = options();
  o.credentials_dir = dir.path() / "token-creds";
  auto found = discoverers::ufm::discover_ufm(o);
  ASSERT_TRUE(found.has_value()) << found.error().message();
  auto targets = server.targets();
  auto auths = server.authorizations();
  ASSERT_EQ(targets.size(), 2u);
  EXPECT_EQ(targets[0], "/ufmRestV3/resources/ports");
  EXPECT_EQ(targets[1], "/ufmRestV3/resources/links");
  EXPECT_EQ(auths[0], std::string("Basic ") + kToken);
  expect_no_secret_logged();
}

TEST_F(UfmServerTest, UntrustedCertificateFailsUnlessInsecure) {
  serve({});
  auto o = options();
  o.ca_file.clear();  // the system store does not know the loopback server's self-signed CA
  auto found = discoverers::ufm::discover_ufm(o);
  ASSERT_FALSE(found.has_value());
  EXPECT_NE(found.error().message().find("TLS handshake"), std::string::npos) << found.error().message();
  EXPECT_NE(found.error().message().find("--ufm-ca"), std::string::npos);
  EXPECT_EQ(server.requests(), 0);
  o.insecure = true;
  auto insecure = discoverers::ufm::discover_ufm(o);
  ASSERT_TRUE(insecure.has_value()) << insecure.error().message();
  std::lock_guard lock(log_mutex);
  EXPECT_TRUE(std::any_of(log.begin(), log.end(),
                          [](const std::string& l) { return l.find("insecure") != std::string::npos; }));
}

TEST_F(UfmServerTest, MissingCredentialsAreClearErrorsWithoutARequest) {
  serve({});
  auto o = options();
  o.credentials_dir = dir.path() / "nowhere";
  auto missing = discoverers::ufm::discover_ufm(o);
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message().find("nowhere"), std::string::npos);
  testing::write_text(dir.path() / "half" / "username", "u");
  o.credentials_dir = dir.path() / "half";
  auto half = discoverers::ufm::discover_ufm(o);
  ASSERT_FALSE(half.has_value());
  EXPECT_NE(half.error().message().find("'password'"), std::string::npos) << half.error().message();
  o.credentials_dir.clear();
  EXPECT_FALSE(discoverers::ufm::discover_ufm(o).has_value());
  EXPECT_EQ(server.requests(), 0);
}

TEST_F(UfmServerTest, RegistrySourceFailsWithTheUrlInThePipeline) {
  serve({});
  server.set_basic_auth(kUser, "changed");
  discoverers::DiscovererRegistry registry;
  discoverers::register_builtin_discoverers(registry);
  discoverers::PipelineInput in;
  auto config = std::make_shared<discoverers::ufm::UfmSourceConfig>();
  config->endpoint = server.url();
  config->credentials_dir = (dir.path() / "creds").string();
  config->ca_file = (dir.path() / "ca.pem").string();
  in.sources = {{.kind = "ufm", .arg = "", .settings = config}};
  in.stop_on_source_error = false;
  std::vector<std::string> lines;
  in.deps.log = [&](const std::string& l) { lines.push_back(l); };
  auto run = discoverers::run_discovery(registry, in);
  ASSERT_TRUE(run.has_value()) << run.error().message();
  EXPECT_FALSE(run->complete);
  ASSERT_EQ(run->outcomes.size(), 1u);
  EXPECT_FALSE(run->outcomes[0].ok);
  EXPECT_NE(run->outcomes[0].error.find("HTTP 401"), std::string::npos) << run->outcomes[0].error;
  EXPECT_EQ(server.requests(), 1);
  for (const auto& l : lines) expect_no_secret(l);
  expect_no_secret(run->outcomes[0].error);
}

}  // namespace
}  // namespace hypertopo
