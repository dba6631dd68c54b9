// `hypertopo discover -o html` opened in Debian's headless Chromium, as an admin opens the file: the
// page loads without script errors, shows every domain and node, stays within the window on a big
// fabric, finds a node by name, keeps hostile names as text, and its screenshot shows the tree; a
// 100,000-node page opens on its overview in under 3 s, and the overview's gang box gives place's
// answer on the same snapshot. Without chromium the tests skip with a message; under CI=true they
// fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>

#include "cli/commands.h"
#include "tests/cli/cluster_objects.h"
#include "tests/cli/headless_browser.h"
#include "tests/support/fixtures.h"
#include "topology/exporters/capacity_html.h"

namespace hypertopo::cli {
namespace {

using nlohmann::json;
using testing::TempDir;

// The page `discover` prints for these arguments, written where the browser reads it.
std::filesystem::path write_page(const TempDir& dir, std::vector<std::string> args, const std::string& name) {
  args.insert(args.begin(), "discover");
  auto run = testing::run_captured(run_cli, args);
  EXPECT_EQ(run.code, 0) << run.err;
  const auto page = dir.path() / name;
  testing::write_text(page, run.out);
  return page;
}

// HyperNode names and Node members of `discover -o json` for the same arguments.
std::pair<std::vector<std::string>, std::vector<std::string>> names_of(std::vector<std::string> args) {
  args.insert(args.begin(), "discover");
  args.insert(args.end(), {"-o", "json"});
  auto run = testing::run_captured(run_cli, args);
  EXPECT_EQ(run.code, 0) << run.err;
  std::vector<std::string> domains, nodes;
  const json list = json::parse(run.out);
  for (const auto& h : list["items"]) {
    domains.push_back(h["metadata"]["name"]);
    for (const auto& m : h["spec"]["members"]) {
      if (m["type"] == "Node") nodes.push_back(m["selector"]["exactMatch"]["name"]);
    }
  }
  return {domains, nodes};
}

void expect_loaded(const testing::BrowserRun& run) {
  EXPECT_EQ(run.code, 0) << run.log;
  EXPECT_EQ(testing::body_attribute(run.dom, "data-state"), "ready") << run.dom.substr(0, 2000) << run.log;
  EXPECT_EQ(testing::body_attribute(run.dom, "data-error"), std::nullopt);
  EXPECT_TRUE(run.uncaught_errors().empty()) << run.uncaught_errors().front();
}

// The labels source over a generated Node list: `blocks` blocks of `racks` racks of `hosts` nodes,
// 8 GPUs each; the first `busy` nodes run a pod of 8 GPUs.
struct LabelledCluster {
  std::filesystem::path nodes, pods, labels;
  std::vector<std::string> names;
};
LabelledCluster labelled_cluster(const TempDir& dir, int blocks, int racks, int hosts, int busy,
                                 const std::string& odd_name = "") {
  LabelledCluster c{dir.path() / "nodes.json", dir.path() / "pods.json", dir.path() / "labels.yaml", {}};
  json items = json::array();
  json pods = json::array();
  for (int b = 1; b <= blocks; ++b) {
    for (int r = 1; r <= racks; ++r) {
      for (int h = 1; h <= hosts; ++h) {
        std::string name = "gpu-b" + std::to_string(b) + "-r" + std::to_string(r) + "-h" + std::to_string(h);
        if (!odd_name.empty() && c.names.empty()) name = odd_name;
        items.push_back({{"apiVersion", "v1"},
                         {"kind", "Node"},
                         {"metadata",
                          {{"name", name},
                           {"labels",
                            {{"example.com/block", "block-" + std::to_string(b)},
                             {"example.com/rack", "rack-" + std::to_string(b) + "-" + std::to_string(r)},
                             {"kubernetes.io/hostname", name}}}}},
                         {"status", {{"allocatable", {{"nvidia.com/gpu", "8"}}}}}});
        if (static_cast<int>(c.names.size()) < busy) {
          pods.push_back(
              {{"apiVersion", "v1"},
               {"kind", "Pod"},
               {"metadata", {{"name", "train-" + std::to_string(c.names.size())}, {"namespace", "ml"}}},
               {"spec",
                {{"nodeName", name},
                 {"containers",
                  {{{"name", "c"}, {"resources", {{"requests", {{"nvidia.com/gpu", "8"}}}}}}}}}},
               {"status", {{"phase", "Running"}}}});
        }
        c.names.push_back(name);
      }
    }
  }
  testing::write_text(c.nodes, json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}}.dump());
  testing::write_text(c.pods, json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", pods}}.dump());
  testing::write_text(c.labels,
                      "networkTopologyTypes:\n  fabric: [{nodeLabel: example.com/block}, {nodeLabel: "
                      "example.com/rack}, {nodeLabel: kubernetes.io/hostname}]\n");
  return c;
}

std::vector<std::string> labelled_args(const LabelledCluster& c) {
  return {"--source", "labels:" + c.labels.string(), "--nodes", c.nodes.string(), "--pods", c.pods.string()};
}

TEST(HtmlPage, TheDemoLoadsWithoutScriptErrorsAndShowsEveryDomainAndNode) {
  HT_REQUIRE_CHROMIUM(chromium);
  TempDir dir;
  const std::vector<std::string> args = {"--source", "demo:model", "--assume-gpus-per-node", "8"};
  std::vector<std::string> html_args = args;
  html_args.insert(html_args.end(), {"-o", "html"});
  const auto page = write_page(dir, html_args, "demo.html");
  const auto [domains, nodes] = names_of(args);
  ASSERT_GT(domains.size(), 3u);
  ASSERT_GT(nodes.size(), 100u);

  // Opened as it is: the tiers the window holds are open, the rest a click away.
  auto opened = testing::open_in_chromium(chromium, dir.path(), page);
  expect_loaded(opened);
  EXPECT_EQ(testing::count_of(opened.dom, "role=\"tree\""), 1u);
  EXPECT_NE(opened.dom.find("demo-"), std::string::npos);  // the summary and the tree drawn by the script
  EXPECT_NE(opened.dom.find(std::to_string(domains.size()) + " domains in"), std::string::npos);

  // #expand=all: every HyperNode and every node has its element.
  auto all = testing::open_in_chromium(chromium, dir.path(), page, {.fragment = "expand=all"});
  expect_loaded(all);
  for (const auto& d : domains) EXPECT_NE(all.dom.find("data-name=\"" + d + "\""), std::string::npos) << d;
  for (const auto& n : nodes) EXPECT_NE(all.dom.find("data-node=\"" + n + "\""), std::string::npos) << n;
  EXPECT_EQ(testing::count_of(all.dom, "class=\"dom\""), domains.size());
  EXPECT_EQ(testing::count_of(all.dom, "data-node=\""), nodes.size());
  EXPECT_EQ(testing::count_of(all.dom, "aria-expanded=\"false\""), 0u);
}

// A screenshot of the demo shows the overview's blocks in the colour of idle nodes, and once the
// page is opened fully the tree's boxes in the fill of free GPUs (#93c47d, every GPU of the demo
// is free).
TEST(HtmlPage, AScreenshotOfTheDemoShowsTheTreeInItsColours) {
  HT_REQUIRE_CHROMIUM(chromium);
  TempDir dir;
  const auto page =
      write_page(dir, {"--source", "demo:model", "--assume-gpus-per-node", "8", "-o", "html"}, "demo.html");
  auto shot = [&](const std::string& fragment, const std::string& file) {
    auto run = testing::open_in_chromium(chromium, dir.path(), page,
                                         {.fragment = fragment, .screenshot = dir.path() / file});
    EXPECT_EQ(run.code, 0) << run.log;
    EXPECT_TRUE(run.uncaught_errors().empty()) << run.uncaught_errors().front();
    return testing::read_png(dir.path() / file);
  };
  auto opened = shot("", "opened.png");
  auto all = shot("expand=all", "all.png");
  ASSERT_TRUE(opened.has_value());
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(opened->width, 1280);
  EXPECT_EQ(opened->height, 800);
  // Opened, the page shows its overview: the four leaves as blocks in the colour of "75% or more
  // idle" (#08519c, every node of the demo is idle), each ~90 pixels square, beside a 12 x 12 swatch.
  EXPECT_GT(opened->count(0x08, 0x51, 0x9c), 4u * 60 * 60);
  // #expand=all shows the list: boxes in the fill of free GPUs. The legend's swatch alone is ~1,300
  // pixels; every domain box and node chip adds ~2,000.
  const std::size_t green_opened = opened->count(0x93, 0xc4, 0x7d);
  const std::size_t green_all = all->count(0x93, 0xc4, 0x7d);
  EXPECT_GT(green_all, 5000u);
  EXPECT_GT(green_all, green_opened);
  // Nothing in the use colours of busy domains: the demo runs no pod. Only the legend's swatches.
  EXPECT_LT(opened->count(0xe0, 0x66, 0x66), 2000u);
}

// 4,096 nodes in 16 blocks of 16 racks: the page opens with what the window holds, not every node;
// the file grows with the nodes by a bounded amount each; a search opens the path to one node.
TEST(HtmlPage, ABigFabricOpensCollapsedToTheWindowAndASearchFindsANode) {
  HT_REQUIRE_CHROMIUM(chromium);
  TempDir dir;
  const auto cluster = labelled_cluster(dir, 16, 16, 16, 1000);
  auto args = labelled_args(cluster);
  args.insert(args.end(), {"-o", "html"});
  const auto page = write_page(dir, args, "big.html");
  const std::size_t bytes = std::filesystem::file_size(page);
  EXPECT_LT(bytes, 4096u * 120 + 64 * 1024) << bytes;  // ~90 bytes of data a node, and the page

  auto opened = testing::open_in_chromium(chromium, dir.path(), page);
  expect_loaded(opened);
  const auto rows = testing::body_attribute(opened.dom, "data-rows");
  const auto budget = testing::body_attribute(opened.dom, "data-row-budget");
  ASSERT_TRUE(rows && budget) << opened.dom.substr(0, 2000);
  EXPECT_LE(std::stoi(*rows), std::stoi(*budget));
  EXPECT_GE(std::stoi(*rows), 16);  // every block is shown
  for (int b = 1; b <= 16; ++b) {
    EXPECT_NE(opened.dom.find("block-" + std::to_string(b) + "\""), std::string::npos) << b;
  }
  EXPECT_LE(testing::count_of(opened.dom, "data-node=\""), 256u);
  EXPECT_LT(opened.dom.size(), bytes + 64 * 1024);  // the data, and little drawn beside it

  const std::string wanted = "gpu-b12-r7-h9";
  auto found = testing::open_in_chromium(chromium, dir.path(), page, {.fragment = "search=" + wanted});
  expect_loaded(found);
  EXPECT_EQ(testing::body_attribute(found.dom, "data-matches"), "1");
  EXPECT_NE(found.dom.find("class=\"node hit\" data-node=\"" + wanted + "\""), std::string::npos)
      << found.dom.substr(0, 3000);
  // Only the path to it was opened: one block, its 16 racks, the rack's 16 nodes.
  EXPECT_EQ(testing::count_of(found.dom, "data-node=\""), 16u);
  EXPECT_EQ(testing::count_of(found.dom, "class=\"dom\""), 16u + 16u);
  // Filled by GPU use: the first 1,000 nodes are busy, so blocks 1 to 3 are full, block 4 is 90%
  // used, and blocks 5 to 16, block 12's racks and the rack's nodes are free.
  EXPECT_EQ(testing::count_of(found.dom, "background: rgb(224, 102, 102)"), 3u);
  EXPECT_EQ(testing::count_of(found.dom, "background: rgb(246, 178, 107)"), 1u);
  EXPECT_EQ(testing::count_of(found.dom, "background: rgb(147, 196, 125)"), 12u + 16u + 16u);
}

// A node named to break out of the data block or an attribute is shown as that text; no markup of
// it runs.
TEST(HtmlPage, HostileNamesStayText) {
  HT_REQUIRE_CHROMIUM(chromium);
  TempDir dir;
  const std::string hostile =
      "x</script><script>document.body.setAttribute('data-pwned','1')</script>\"'<img src=x "
      "onerror=\"document.body.setAttribute('data-pwned','2')\">";
  const auto cluster = labelled_cluster(dir, 1, 2, 2, 0, hostile);
  auto args = labelled_args(cluster);
  args.insert(args.end(), {"-o", "html"});
  const auto page = write_page(dir, args, "hostile.html");
  const std::string html = testing::read_text(page);
  // The data block holds no '<' at all: "</script>" cannot end it.
  const std::size_t data = html.find("id=\"hypertopo-data\">");
  ASSERT_NE(data, std::string::npos);
  const std::size_t end = html.find("</script>", data);
  EXPECT_EQ(html.substr(data, end - data).find('<'), std::string::npos);

  auto run = testing::open_in_chromium(chromium, dir.path(), page, {.fragment = "expand=all"});
  expect_loaded(run);
  EXPECT_EQ(testing::body_attribute(run.dom, "data-pwned"), std::nullopt);
  EXPECT_EQ(run.dom.find("<img"), std::string::npos);
  EXPECT_EQ(testing::count_of(run.dom, "<script"), 2u);  // the data and the page's own script
  // The name is there, as text (the serializer escapes it in the attribute and in the text).
  EXPECT_NE(run.dom.find("x&lt;/script&gt;&lt;script&gt;document.body.setAttribute('data-pwned','1')"),
            std::string::npos);
}

// The real capture's degraded leaves (missing uplinks): each box in the warning frame, with its
// reason, its share of healthy uplinks and its bad links, as `-o tree` prints them.
TEST(HtmlPage, DegradedDomainsOfARealCaptureAreFramedWithTheirBadLinks) {
  HT_REQUIRE_FIXTURE(capture, "ibnetdiscover/topograph-example.out");
  HT_REQUIRE_CHROMIUM(chromium);
  TempDir dir;
  const std::string source = "ibnetdiscover:" + capture.string();
  auto tree = testing::run_captured(run_cli, {"discover", "--source", source});
  ASSERT_EQ(tree.code, 0) << tree.err;
  const std::size_t degraded = testing::count_of(tree.out, "DEGRADED ");
  ASSERT_GT(degraded, 0u);
  const auto page =
      write_page(dir, {"--source", source, "--assume-gpus-per-node", "8", "-o", "html"}, "capture.html");
  auto run = testing::open_in_chromium(chromium, dir.path(), page, {.fragment = "expand=all"});
  expect_loaded(run);
  EXPECT_EQ(testing::count_of(run.dom, "class=\"box degraded\""), degraded);
  EXPECT_EQ(testing::count_of(run.dom, "<span class=\"warn\">DEGRADED MissingUplinks (uplinks "), degraded);
  // Every bad link the text names is listed under its domain.
  std::istringstream lines(tree.out);
  std::size_t links = 0;
  for (std::string line; std::getline(lines, line);) {
    const std::size_t mark = line.find("!   ");
    if (mark == std::string::npos) continue;
    std::istringstream parts(line.substr(mark + 4));
    for (std::string link; std::getline(parts, link, ';');) {
      if (link.starts_with(" ")) link.erase(0, 1);
      if (link.starts_with("and ")) continue;
      EXPECT_NE(run.dom.find("<li>" + link + "</li>"), std::string::npos) << link;
      ++links;
    }
  }
  EXPECT_GE(links, degraded);
}

TEST(HtmlPage, WithoutGpuDataThePageIsPlainAndSaysSo) {
  TempDir dir;
  auto run = testing::run_captured(run_cli, {"discover", "--source", "demo:model", "-o", "html"});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_TRUE(run.out.starts_with("<!DOCTYPE html>"));
  EXPECT_NE(run.out.find("\"coloured\":false"), std::string::npos);
  EXPECT_EQ(run.out.find("GPUs in use:"), std::string::npos);
  // Nothing is fetched: no URL in the page, and a policy that forbids any load.
  EXPECT_EQ(run.out.find("http://"), std::string::npos);
  EXPECT_EQ(run.out.find("https://"), std::string::npos);
  EXPECT_NE(run.out.find("default-src 'none'"), std::string::npos);
}

// ---- The overview: where the free nodes are, and where a gang fits. ----

// The class attribute of the element whose `key` attribute is `value` in a dumped document.
std::string class_of(const std::string& dom, const std::string& key, const std::string& value) {
  const std::size_t at = dom.find(" " + key + "=\"" + value + "\"");
  if (at == std::string::npos) return "";
  const std::size_t tag = dom.rfind('<', at);
  const std::size_t cls = dom.find("class=\"", tag);
  if (cls == std::string::npos || cls > at) return "";
  return dom.substr(cls + 7, dom.find('"', cls + 7) - cls - 7);
}

bool has_class(const std::string& classes, const std::string& one) {
  std::istringstream words(classes);
  for (std::string w; words >> w;) {
    if (w == one) return true;
  }
  return false;
}

// Where the test binaries live (build-asan/tests): artifacts go beside them, kept after the run.
std::filesystem::path artifact_dir() {
  const auto dir = std::filesystem::path(HT_HYPERTOPO_BINARY).parent_path().parent_path() / "test-artifacts";
  std::filesystem::create_directories(dir);
  return dir;
}

// The idle share of rack r (1-based) in the 100,000-node fabric, by the overview's five steps:
// none, under 25%, 25% to 50%, 50% to 75%, 75% or more.
constexpr int kIdleOf[5] = {0, 10, 40, 70, 125};  // idle nodes of 125
constexpr const char* kIdleClass[5] = {"i0", "i1", "i2", "i3", "i4"};
constexpr std::array<unsigned char, 3> kIdleRgb[5] = {
    {0xef, 0xf3, 0xff}, {0xbd, 0xd7, 0xe7}, {0x6b, 0xae, 0xd6}, {0x31, 0x82, 0xbd}, {0x08, 0x51, 0x9c}};

// 100,000 nodes: 25 blocks (tier 2) of 32 racks (tier 1) of 125 nodes, 8 GPUs each; rack r has
// kIdleOf[r % 5] idle nodes, the rest run pods of 1 to 8 GPUs. The page is the one discover and
// status write (render_capacity_html); the tree is built here because reading 100,000 Nodes from a
// file takes most of a minute in the sanitizer build.
TEST(HtmlPage, A100000NodeFabricOpensOnItsOverviewInUnder3Seconds) {
  HT_REQUIRE_CHROMIUM(chromium);
  TempDir dir;
  topology::Tree tree;
  topology::exporters::GpuUsage usage;
  std::map<std::string, int> expected_class;  // rack name -> step
  for (int b = 1; b <= 25; ++b) {
    const auto block = tree.add_domain("block-" + std::to_string(b), 2, "block");
    for (int r = 1; r <= 32; ++r) {
      const std::string rack_name = "rack-" + std::to_string(b) + "-" + std::to_string(r);
      const auto rack = tree.add_domain(rack_name, 1, "rack");
      tree.attach(block, rack);
      const int step = r % 5;
      expected_class[rack_name] = step;
      for (int h = 1; h <= 125; ++h) {
        const std::string node =
            "gpu-b" + std::to_string(b) + "-r" + std::to_string(r) + "-h" + std::to_string(h);
        tree.domain(rack).nodes.push_back(node);
        usage[node] = {.allocatable = 8, .used = h <= kIdleOf[step] ? 0 : 1 + h % 8};
      }
      std::ranges::sort(tree.domain(rack).nodes);
    }
  }
  ASSERT_EQ(tree.node_count(), 100'000u);
  const auto page = dir.path() / "fabric-100k.html";
  testing::write_text(page,
                      topology::exporters::render_capacity_html(tree, usage, {.title = "100,000 nodes"}));
  const std::size_t bytes = std::filesystem::file_size(page);
  EXPECT_LT(bytes, 100'000u * 60) << bytes;  // bounded: the data, ~35 bytes a node, and the page

  auto run = testing::open_in_chromium(chromium, dir.path(), page);
  expect_loaded(run);
  // Measured inside the page: performance.now() once the overview is laid out, and at `load`.
  const auto open_ms = testing::body_attribute(run.dom, "data-open-ms");
  ASSERT_TRUE(open_ms.has_value()) << run.dom.substr(0, 2000);
  const auto load_ms = testing::body_attribute(run.dom, "data-load-ms");
  const int slowest = std::max(std::stoi(*open_ms), load_ms ? std::stoi(*load_ms) : 0);
  std::cout << "100,000-node page: overview drawn at " << *open_ms << " ms, load at "
            << load_ms.value_or("(not reached before the dump)") << " ms after navigation began, " << bytes
            << " bytes\n";
  EXPECT_LT(slowest, 3000);
  // One panel per block, one block per rack, each coloured by its idle share.
  EXPECT_EQ(testing::count_of(run.dom, "data-panel=\""), 25u);
  for (const auto& [rack, step] : expected_class) {
    const std::string classes = class_of(run.dom, "data-domain", rack);
    EXPECT_TRUE(has_class(classes, kIdleClass[step])) << rack << ": " << classes;
  }
  // The largest free block per tier, as status -o text names it: the first block (all blocks hold
  // the same), the first rack of the all-idle step (rack 4 of block 1).
  EXPECT_NE(run.dom.find("data-tier=\"2\" data-block=\"block-1\""), std::string::npos);
  EXPECT_NE(run.dom.find("data-tier=\"1\" data-block=\"rack-1-4\">tier 1 (rack): rack-1-4, 1000 GPUs free, "
                         "125 idle nodes"),
            std::string::npos);
  // Nodes are drawn only when a domain is opened.
  EXPECT_EQ(testing::count_of(run.dom, "data-node=\""), 0u);

  // The screenshot, kept under the build folder: the blocks in their five colours, each over many
  // pixels (a legend swatch is 12 x 12), no node chip drawn.
  const auto shot = artifact_dir() / "html-overview-100000-nodes.png";
  auto shown = testing::open_in_chromium(chromium, dir.path(), page, {.screenshot = shot});
  EXPECT_EQ(shown.code, 0) << shown.log;
  const auto image = testing::read_png(shot);
  ASSERT_TRUE(image.has_value()) << shot;
  for (int step = 0; step < 5; ++step) {
    const auto& [r, g, b] = kIdleRgb[step];
    EXPECT_GT(image->count(r, g, b), 5000u) << "idle step " << step << " in " << shot;
  }
  std::cout << "screenshot: " << shot.string() << "\n";
}

// One snapshot, three doors: `discover -o html` draws the page, `discover -o yaml` writes the
// HyperNodes, `place` places on them with the same Nodes and Pods. For 50 random gangs (seeded) of
// P pods x G GPUs inside one domain of tier <= T, the page's gang box (filled from #gang=) and
// place agree:
//   - place fits (exit 0) exactly when the page marks some domain;
//   - then place's podSet tier is the tier the page answers (the lowest tier <= T with room), and
//     the domain place chose is one of the domains the page marks at that tier.
TEST(HtmlPage, TheGangBoxAgreesWithPlaceOn50RandomGangs) {
  HT_REQUIRE_CHROMIUM(chromium);
  TempDir dir;
  std::mt19937 random(20261207);
  json nodes = json::array(), pods = json::array();
  for (int b = 1; b <= 4; ++b) {
    for (int r = 1; r <= 6; ++r) {
      for (int h = 1; h <= 8; ++h) {
        const std::string name =
            "gpu-b" + std::to_string(b) + "-r" + std::to_string(r) + "-h" + std::to_string(h);
        nodes.push_back(testing::gpu_node(
            name, {{"example.com/block", "block-" + std::to_string(b)},
                   {"example.com/rack", "rack-" + std::to_string(b) + "-" + std::to_string(r)}}));
        static constexpr int kUsed[] = {0, 0, 0, 0, 1, 2, 3, 4, 6, 7, 8, 8};
        const int used = kUsed[random() % std::size(kUsed)];
        if (used == 0) continue;
        pods.push_back({{"apiVersion", "v1"},
                        {"kind", "Pod"},
                        {"metadata", {{"name", "run-" + name}, {"namespace", "ml"}}},
                        {"spec",
                         {{"nodeName", name},
                          {"containers",
                           {{{"name", "c"},
                             {"resources", {{"requests", {{"nvidia.com/gpu", std::to_string(used)}}}}}}}}}},
                        {"status", {{"phase", "Running"}}}});
      }
    }
  }
  const auto nodes_file = dir.path() / "nodes.json", pods_file = dir.path() / "pods.json";
  const auto labels = dir.path() / "labels.yaml", hypernodes = dir.path() / "hypernodes.yaml";
  testing::write_text(nodes_file, testing::cluster_list(nodes).dump());
  testing::write_text(pods_file, testing::cluster_list(pods).dump());
  testing::write_text(labels,
                      "networkTopologyTypes:\n  fabric: [{nodeLabel: example.com/block}, {nodeLabel: "
                      "example.com/rack}, {nodeLabel: kubernetes.io/hostname}]\n");
  const std::vector<std::string> source = {
      "--source", "labels:" + labels.string(), "--nodes", nodes_file.string(), "--pods", pods_file.string()};
  auto yaml_args = source;
  yaml_args.insert(yaml_args.end(), {"-o", "yaml"});
  yaml_args.insert(yaml_args.begin(), "discover");
  auto yaml = testing::run_captured(run_cli, yaml_args);
  ASSERT_EQ(yaml.code, 0) << yaml.err;
  testing::write_text(hypernodes, yaml.out);
  auto html_args = source;
  html_args.insert(html_args.end(), {"-o", "html"});
  const auto page = write_page(dir, html_args, "gangs.html");

  struct Gang {
    int pods, gpus, tier;
  };
  std::vector<Gang> gangs;
  std::string fragment = "gang=";
  for (int i = 0; i < 50; ++i) {
    static constexpr int kGpus[] = {1, 2, 4, 8};
    const int gpus = kGpus[random() % 4];
    const Gang g{1 + static_cast<int>(random() % (320 / gpus)), gpus, 1 + static_cast<int>(random() % 2)};
    gangs.push_back(g);
    fragment +=
        (i ? ";" : "") + std::to_string(g.pods) + "x" + std::to_string(g.gpus) + "@" + std::to_string(g.tier);
  }
  auto run = testing::open_in_chromium(chromium, dir.path(), page, {.fragment = fragment});
  expect_loaded(run);

  // The page's answers, one <li> of #gang-log each, in the fragment's order.
  struct PageAnswer {
    std::string fit;
    int tier = -1;
    std::size_t count = 0;
    std::set<std::string> domains;
  };
  std::vector<PageAnswer> answers;
  const std::size_t log = run.dom.find("id=\"gang-log\"");
  ASSERT_NE(log, std::string::npos);
  const std::size_t log_end = run.dom.find("</ol>", log);
  auto attribute = [](const std::string& tag, const std::string& key) {
    const std::size_t at = tag.find(" " + key + "=\"");
    if (at == std::string::npos) return std::string();
    const std::size_t from = at + key.size() + 3;
    return tag.substr(from, tag.find('"', from) - from);
  };
  for (std::size_t at = run.dom.find("<li ", log); at < log_end; at = run.dom.find("<li ", at + 1)) {
    const std::size_t open_end = run.dom.find('>', at);
    const std::string tag = run.dom.substr(at, open_end - at);
    PageAnswer a;
    a.fit = attribute(tag, "data-fit");
    a.tier = std::stoi(attribute(tag, "data-tier").empty() ? "-1" : attribute(tag, "data-tier"));
    a.count = std::stoul(attribute(tag, "data-count").empty() ? "0" : attribute(tag, "data-count"));
    std::istringstream names(run.dom.substr(open_end + 1, run.dom.find("</li>", open_end) - open_end - 1));
    for (std::string n; names >> n;) a.domains.insert(n);
    answers.push_back(std::move(a));
  }
  ASSERT_EQ(answers.size(), gangs.size()) << run.dom.substr(log, 3000);

  std::size_t agree = 0, fits = 0;
  for (std::size_t i = 0; i < gangs.size(); ++i) {
    const Gang& g = gangs[i];
    const std::string what =
        std::to_string(g.pods) + " x " + std::to_string(g.gpus) + " GPUs, tier <= " + std::to_string(g.tier);
    const json request{{"apiVersion", "hypertopo.io/v1alpha1"},
                       {"kind", "PlacementRequest"},
                       {"name", "gang-" + std::to_string(i)},
                       {"podSets",
                        {{{"name", "worker"},
                          {"count", g.pods},
                          {"requests", {{"nvidia.com/gpu", std::to_string(g.gpus)}}},
                          {"topology", {{"mode", "required"}, {"level", std::to_string(g.tier)}}}}}}};
    const auto job = dir.path() / ("gang-" + std::to_string(i) + ".json");
    testing::write_text(job, request.dump());
    auto place = testing::run_captured(
        run_cli, {"place", "--nodes", nodes_file.string(), "--pods", pods_file.string(), "--topology",
                  hypernodes.string(), "--job", job.string(), "-o", "json"});
    ASSERT_TRUE(place.code == 0 || place.code == 1) << what << ": " << place.err;
    const json placed = json::parse(place.out);
    const PageAnswer& a = answers[i];
    bool same = false;
    if (placed["fit"] == true) {
      ++fits;
      const json& set = placed["podSets"][0];
      const std::string chosen = set["domains"].empty() ? "" : set["domains"][0].get<std::string>();
      same = place.code == 0 && a.fit == "true" && a.tier == set["tier"].get<int>() &&
             a.count == a.domains.size() && a.domains.contains(chosen);
      EXPECT_TRUE(same) << what << ": place takes " << chosen << " at tier " << set["tier"]
                        << "; the page says " << a.fit << " at tier " << a.tier << " in " << a.count
                        << " domains";
    } else {
      same = place.code == 1 && a.fit == "false" && a.count == 0;
      EXPECT_TRUE(same) << what << ": place says " << placed["reason"] << "; the page says " << a.fit
                        << " in " << a.count << " domains";
    }
    if (same) ++agree;
  }
  std::cout << "page = place: " << agree << "/" << gangs.size() << " (" << fits << " fit, "
            << gangs.size() - fits << " do not)\n";
  EXPECT_EQ(agree, gangs.size());
  // Both answers occur, so that agreement means something.
  EXPECT_GE(fits, 10u);
  EXPECT_GE(gangs.size() - fits, 10u);

  // The box shows the last gang, and the overview marks the domains that hold it (or their block).
  const PageAnswer& last = answers.back();
  const std::size_t box = run.dom.find("<p id=\"gang-answer\"");
  ASSERT_NE(box, std::string::npos);
  EXPECT_EQ(attribute(run.dom.substr(box, run.dom.find('>', box) - box), "data-fit"), last.fit);
  for (const auto& d : last.domains) {
    const std::string classes = class_of(run.dom, "data-domain", d).empty()
                                    ? class_of(run.dom, "data-panel", d)
                                    : class_of(run.dom, "data-domain", d);
    EXPECT_TRUE(has_class(classes, "fit")) << d << ": " << classes;
  }
}

}  // namespace
}  // namespace hypertopo::cli
