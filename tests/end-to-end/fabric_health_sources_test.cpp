// One fabric seen by two sources: a live ibsim walk and UFM's REST answers (the in-tree fake UFM
// server over real HTTPS) describe the same leaves and spines with the same three faults, and
// `hypertopo discover -o json` gives the same FabricDegraded conditions for both.
//
// The faults: leaf-2's uplink to spine-1 trained at one lane, leaf-3's uplink to spine-2 went down,
// leaf-4 was never cabled to spine-2. A port that is down has no peer in either source (libibnetdisc
// follows only ports whose physical link is up; UFM lists the port as "Down"/"Polling" with a peer of
// "N/A", as NVIDIA's REST API guide shows a switch port), so a down cable is a missing uplink to both.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "discoverers/ib-fabric/simulated_fabric.h"
#include "tests/support/fixtures.h"
#include "tests/support/ibsim/ibsim_fabrics.h"
#include "tests/support/ufm/fake_ufm_server.h"

namespace hypertopo {
namespace {

namespace ibf = discoverers::ib_fabric;

const std::vector<std::string> kWalker = {HT_IB_WALKER};

constexpr int kLeaves = 5;
constexpr int kHostsPerLeaf = 2;
constexpr int kSpines = 2;
// Leaf l reaches spine s on its port kHostsPerLeaf + s; spine s reaches leaf l on its port l.
constexpr int kNarrowLeaf = 2, kNarrowSpine = 1;
constexpr int kDownLeaf = 3, kDownSpine = 2;
constexpr int kMissingLeaf = 4, kMissingSpine = 2;

int leaf_port(int spine) { return kHostsPerLeaf + spine; }
std::string leaf_name(int l) { return "leaf-" + std::to_string(l); }
std::string spine_name(int s) { return "spine-" + std::to_string(s); }
std::string host_name(int l, int h) { return "node-" + std::to_string(l) + std::to_string(h); }
std::string switch_description(const std::string& name) { return "MF0;" + name + ":MQM8700/U1"; }
bool cabled(int l, int s) { return !(l == kMissingLeaf && s == kMissingSpine); }

// The ibsim net file: the narrow uplink at 1x, the missing one never cabled (the down one is cabled
// and taken down on the running simulator).
std::string netfile() {
  return testing::health_fabric_netfile({.leaves = kLeaves,
                                         .hosts_per_leaf = kHostsPerLeaf,
                                         .spines = kSpines,
                                         .narrow_uplinks = {{kNarrowLeaf, kNarrowSpine}},
                                         .pulled_uplinks = {{kMissingLeaf, kMissingSpine}}});
}

// UFM's answers for the same fabric: port records with the fields UFM Enterprise's
// `resources/ports` carries (NVIDIA's UFM REST API guide; spellings as in the guide's samples:
// "Active"/"Down", "Link Up"/"Polling", "4x", null when down) and one `resources/links` record
// per cable that is up. GUIDs are made up: the tree is named from descriptions, not GUIDs.
struct UfmAnswers {
  std::vector<std::string> ports, links;
};

std::string hex_guid(int kind, int index) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", 0x0002c90300000000ull + kind * 0x10000ull + unsigned(index));
  return buf;
}

UfmAnswers ufm_answers() {
  UfmAnswers out;
  struct End {
    bool host;
    std::string guid, system_name, description;
    int port;
  };
  auto port_record = [](const End& self, const End* peer, const std::string& width, bool up) {
    nlohmann::json r = {
        {"description", self.host ? "Computer IB Port" : "Switch IB Port"},
        {"number", self.port},
        {"external_number", self.port},
        {"name", self.guid + "_" + std::to_string(self.port)},
        {"guid", self.guid},
        {"systemID", self.guid},
        {"system_name", self.system_name},
        {"node_description", self.description},
        {"logical_state", up ? "Active" : "Down"},
        {"physical_state", up ? "Link Up" : "Polling"},
        {"active_width", up ? nlohmann::json(width) : nlohmann::json(nullptr)},
        {"active_speed", up ? nlohmann::json("SDR") : nlohmann::json(nullptr)},
        {"enabled_width", up ? nlohmann::json::array({"1x", "4x"}) : nlohmann::json::array()},
        {"mtu", 4096},
        {"severity", "Info"},
    };
    if (peer) {
      r["peer"] = peer->guid + "_" + std::to_string(peer->port);
      r["peer_guid"] = peer->guid;
      r["peer_node_guid"] = peer->guid;
      r["peer_node_name"] = peer->system_name;
      r["peer_node_description"] = peer->description;
      r["peer_port_dname"] = std::to_string(peer->port);
    } else {
      r["peer"] = "N/A";
      r["peer_port_dname"] = "N/A";
    }
    return r.dump();
  };
  auto cable = [&](const End& a, const End& b, const std::string& width, bool up) {
    out.ports.push_back(port_record(a, up ? &b : nullptr, width, up));
    out.ports.push_back(port_record(b, up ? &a : nullptr, width, up));
    if (!up) return;
    out.links.push_back(nlohmann::json{
        {"source_guid", a.guid},
        {"source_port", std::to_string(a.port)},
        {"destination_guid", b.guid},
        {"destination_port", std::to_string(b.port)},
        {"source_port_dname", std::to_string(a.port)},
        {"destination_port_dname", std::to_string(b.port)},
        {"width", "IB_" + width},
        {"severity",
         "Info"}}.dump());
  };
  auto switch_end = [](int kind, int index, const std::string& name, int port) {
    return End{false, hex_guid(kind, index), name, switch_description(name), port};
  };
  for (int l = 1; l <= kLeaves; ++l) {
    for (int h = 1; h <= kHostsPerLeaf; ++h) {
      End host{true, hex_guid(3, l * 10 + h), host_name(l, h), host_name(l, h) + " mlx5_0", 1};
      cable(switch_end(1, l, leaf_name(l), h), host, "4x", true);
    }
    for (int s = 1; s <= kSpines; ++s) {
      if (!cabled(l, s)) continue;
      const bool narrow = l == kNarrowLeaf && s == kNarrowSpine;
      const bool down = l == kDownLeaf && s == kDownSpine;
      cable(switch_end(1, l, leaf_name(l), leaf_port(s)), switch_end(2, s, spine_name(s), l),
            narrow ? "1x" : "4x", !down);
    }
  }
  return out;
}

// HyperNode name -> "status reason: message" of its FabricDegraded condition, from -o json.
std::map<std::string, std::string> conditions_of(const std::string& json_text) {
  std::map<std::string, std::string> out;
  auto list = nlohmann::json::parse(json_text);
  for (const auto& item : list.at("items")) {
    const std::string name = item.at("metadata").at("name");
    if (!item.contains("status")) continue;
    for (const auto& c : item["status"]["conditions"]) {
      if (c.at("type") != "FabricDegraded") continue;
      out[name] = c.at("status").get<std::string>() + " " + c.at("reason").get<std::string>() + ": " +
                  c.at("message").get<std::string>();
    }
  }
  return out;
}

TEST(FabricHealthSources, UfmAndTheWalkGiveTheSameConditions) {
  HT_REQUIRE(ibf::simulator_missing().empty(), "ibsim: " + ibf::simulator_missing());

  // The walk: the narrow uplink and the never-cabled one are in the net file; the down one is
  // pulled before walking.
  auto sim = ibf::SimulatedFabric::start(netfile());
  ASSERT_TRUE(sim.has_value()) << sim.error().message();
  ASSERT_TRUE((*sim)->unlink("S-" + leaf_name(kDownLeaf), leaf_port(kDownSpine)).has_value());
  auto walked = (*sim)->walk(kWalker);
  ASSERT_TRUE(walked.has_value()) << walked.error().message();
  auto walk_json = testing::run_captured(
      cli::run_cli,
      {"discover", "--source", "ibnetdisc-cache:" + (*sim)->last_cache().string(), "-o", "json"});
  ASSERT_EQ(walk_json.code, 0) << walk_json.err;

  // UFM, as a user points the CLI at it.
  testing::TempDir dir;
  testing::write_text(dir.path() / "creds" / "username", "admin\n");
  testing::write_text(dir.path() / "creds" / "password", "ufm-pass-7\n");
  testing::FakeUfmServer server;
  server.set_basic_auth("admin", "ufm-pass-7");
  const UfmAnswers answers = ufm_answers();
  server.set_records("ports", answers.ports);
  server.set_records("links", answers.links);
  ASSERT_TRUE(server.start().has_value());
  testing::write_text(dir.path() / "ca.pem", server.ca_pem());
  auto ufm_json =
      testing::run_captured(cli::run_cli, {"discover", "--source", "ufm:" + server.url(), "--ufm-credentials",
                                           (dir.path() / "creds").string(), "--ufm-ca",
                                           (dir.path() / "ca.pem").string(), "-o", "json"});
  ASSERT_EQ(ufm_json.code, 0) << ufm_json.err;

  const auto from_walk = conditions_of(walk_json.out);
  const auto from_ufm = conditions_of(ufm_json.out);
  EXPECT_EQ(from_ufm, from_walk);
  EXPECT_EQ(from_ufm.size(), 4u);  // three leaves, and the spine domain the narrow link is internal to
  ASSERT_TRUE(from_ufm.contains("leaf-leaf-2")) << ufm_json.out;
  EXPECT_EQ(from_ufm.at("leaf-leaf-2"),
            "True DegradedLinkWidth: leaf-2[3] - spine-1[2]: DegradedLinkWidth, 1x, expected 4x");
  ASSERT_TRUE(from_ufm.contains("leaf-leaf-3"));
  EXPECT_EQ(from_ufm.at("leaf-leaf-3"),
            "True MissingUplinks: leaf-3 - spine-2: MissingUplinks, 1 uplink, expected 2 uplinks");
  ASSERT_TRUE(from_ufm.contains("leaf-leaf-4"));
  EXPECT_EQ(from_ufm.at("leaf-leaf-4"),
            "True MissingUplinks: leaf-4 - spine-2: MissingUplinks, 1 uplink, expected 2 uplinks");
  EXPECT_FALSE(from_ufm.contains("leaf-leaf-1"));
  EXPECT_FALSE(from_ufm.contains("leaf-leaf-5"));
  // The same tree too: both sources name the same domains.
  auto names = [](const std::string& text) {
    const auto list = nlohmann::json::parse(text);  // alive while its items are walked
    std::vector<std::string> out;
    for (const auto& item : list.at("items")) out.push_back(item["metadata"]["name"]);
    return out;
  };
  EXPECT_EQ(names(ufm_json.out), names(walk_json.out));
}

}  // namespace
}  // namespace hypertopo
