// `hypertopo discover -o html` opened in Debian's headless Chromium, as an admin opens the file: the
// page loads without script errors, shows every domain and node, stays within the window on a big
// fabric, finds a node by name, keeps hostile names as text, and its screenshot shows the tree.
// Without chromium the tests skip with a message; under CI=true they fail.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.h"
#include "tests/cli/headless_browser.h"
#include "tests/support/fixtures.h"

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

// A screenshot of the demo shows the tree: boxes in the fill of free GPUs (#93c47d, every GPU of
// the demo is free), more of them once the page is opened fully.
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
  const std::size_t green_opened = opened->count(0x93, 0xc4, 0x7d);
  const std::size_t green_all = all->count(0x93, 0xc4, 0x7d);
  // The legend's swatch alone is ~1,300 pixels; every domain box and node chip adds ~2,000.
  EXPECT_GT(green_opened, 5000u);
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

}  // namespace
}  // namespace hypertopo::cli
