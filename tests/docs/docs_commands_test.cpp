// Every command README.md and docs/*.md show, as a reader would type it.
//
// The convention of the docs: a ```sh block holds commands that run as written, in a directory with
// the sample files the docs name (fabric.out, nodes.json, pods.json, labels.yaml, eks-nodes.json) and
// the repository's examples/ and deploy/ beside them; this test makes that directory, puts the built
// binary on PATH (and at build/bin/hypertopo), runs each command with bash -o pipefail, and fails
// on a non-zero exit. A ```console block holds commands that need what a test cannot have (a
// cluster, a fabric, a GPU node, a full build): each must match an entry of kNotRunnable, which says
// why, and the test prints each one it leaves out with that reason. Blocks without a shell info
// string (transcripts, diagrams, files) hold no commands to run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "tests/support/fixtures.h"

namespace hypertopo {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kRoot = HYPERTOPO_SOURCE_DIR;

// Commands the docs show that cannot run here, by a piece of their text, and why.
struct NotRunnable {
  std::string_view pattern;
  std::string_view reason;
};
constexpr NotRunnable kNotRunnable[] = {
    {"scripts/run-demo.sh",
     "installs packages and makes a release build from scratch; the discovery it ends with, "
     "hypertopo discover --source demo, runs in a ```sh block"},
    {"scripts/test.sh", "the whole suite, this test among it; CI runs it as its one command"},
    {"scripts/image.sh", "builds a container image with podman or buildah and pushes it to a registry"},
    {"kustomize edit", "rewrites a checked-in kustomization.yaml in place"},
    {"kubectl ", "needs a cluster"},
    {"--kubeconfig", "needs a cluster"},
    {"hypertopo status", "reads the cluster (kubeconfig or service account)"},
    {"--source ibnetdisc:", "walks a live InfiniBand subnet: needs an HCA and its umad device"},
    {"hypertopo ib-walk", "walks a live InfiniBand subnet: needs an HCA and its umad device"},
    {"--source ibnetdisc-cache:", "replays a recording that ib-walk made of a live subnet"},
    {"--source ufm:", "needs a UFM Enterprise server and its credentials"},
    {"--source ibsim:", "needs a net file of the reader's fabric and ibsim's umad2sim preload"},
    {"hypertopo probe", "probes the machine it runs on: a GPU node's HCAs, NVML and lldpd"},
};

struct Block {
  fs::path file;
  int line = 0;  // of the opening fence
  std::string info;
  std::vector<std::pair<int, std::string>> lines;  // line number, text
};

std::vector<fs::path> docs() {
  std::vector<fs::path> out = {kRoot / "README.md"};
  for (const auto& e : fs::directory_iterator(kRoot / "docs")) {
    if (e.path().extension() == ".md") out.push_back(e.path());
  }
  std::sort(out.begin() + 1, out.end());
  return out;
}

std::vector<Block> fenced_blocks(const fs::path& file) {
  std::ifstream in(file);
  std::vector<Block> blocks;
  std::optional<Block> open;
  std::string fence;
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    const std::size_t indent = line.find_first_not_of(' ');
    const std::string trimmed = indent == std::string::npos ? "" : line.substr(indent);
    if (!open && trimmed.starts_with("```")) {
      open = Block{file, n, trimmed.substr(3), {}};
      continue;
    }
    if (open && trimmed.starts_with("```")) {
      blocks.push_back(std::move(*open));
      open.reset();
      continue;
    }
    if (open) open->lines.emplace_back(n, indent == std::string::npos ? "" : line.substr(indent));
  }
  EXPECT_FALSE(open.has_value()) << file << ":" << open->line << ": a fence that never closes";
  return blocks;
}

struct Command {
  std::string where;  // file:line
  std::string text;
};

// The commands of a shell block: comment and blank lines dropped, lines ending in '\' joined.
std::vector<Command> commands_of(const Block& block) {
  std::vector<Command> out;
  std::string pending;
  int first = 0;
  for (const auto& [n, text] : block.lines) {
    if (pending.empty() && (text.empty() || text.starts_with("#"))) continue;
    if (pending.empty()) first = n;
    if (text.ends_with("\\")) {
      pending += text.substr(0, text.size() - 1) + " ";
      continue;
    }
    pending += text;
    out.push_back({fs::relative(block.file, kRoot).string() + ":" + std::to_string(first), pending});
    pending.clear();
  }
  return out;
}

const NotRunnable* reason_not_to_run(const std::string& command) {
  for (const auto& entry : kNotRunnable) {
    if (command.find(entry.pattern) != std::string::npos) return &entry;
  }
  return nullptr;
}

bool is_shell(const std::string& info) { return info == "sh" || info == "bash" || info == "shell"; }

struct Shell {
  int code = -1;
  std::string out;
};
Shell run_shell(const fs::path& dir, const std::string& script_text) {
  const fs::path script = dir / ".command.sh";
  testing::write_text(script, script_text + "\n");
  const std::string line = "cd '" + dir.string() + "' && PATH='" + (dir / "bin").string() +
                           "':\"$PATH\" timeout 300 bash -o pipefail '" + script.string() + "' 2>&1";
  Shell r;
  FILE* pipe = popen(line.c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  for (std::size_t got; (got = fread(buf, 1, sizeof buf, pipe)) > 0;) r.out.append(buf, got);
  const int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// The directory the docs' commands run in: the sample files they name, examples/ and deploy/.
void make_workspace(const fs::path& dir, const fs::path& capture) {
  fs::create_directories(dir / "bin");
  fs::create_directories(dir / "build" / "bin");
  fs::create_symlink(HT_HYPERTOPO_BINARY, dir / "bin" / "hypertopo");
  fs::create_symlink(HT_HYPERTOPO_BINARY, dir / "build" / "bin" / "hypertopo");
  fs::create_directory_symlink(kRoot / "examples", dir / "examples");
  fs::create_directory_symlink(kRoot / "deploy", dir / "deploy");
  fs::copy_file(capture, dir / "fabric.out");
  // nodes.json: the capture's hosts as Nodes with 8 GPUs each, carrying the tier labels the
  // labels source reads back (labels.yaml).
  const Shell labelled =
      run_shell(dir, "hypertopo discover --source ibnetdiscover:fabric.out -o labels-apply 2>/dev/null");
  ASSERT_EQ(labelled.code, 0) << labelled.out;
  json nodes = json::parse(labelled.out);
  ASSERT_GT(nodes["items"].size(), 100u);
  for (auto& n : nodes["items"]) n["status"] = {{"allocatable", {{"nvidia.com/gpu", "8"}}}};
  testing::write_text(dir / "nodes.json", nodes.dump(1));
  testing::write_text(dir / "pods.json",
                      json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", json::array()}}.dump());
  testing::write_text(dir / "labels.yaml",
                      "networkTopologyTypes:\n  fabric: [{nodeLabel: hypertopo.io/tier-2}, {nodeLabel: "
                      "hypertopo.io/tier-1}, {nodeLabel: kubernetes.io/hostname}]\n");
  // eks-nodes.json: 16 nodes under EKS's three network layers.
  json eks = json::array();
  for (int a = 0; a < 4; ++a) {
    for (int h = 0; h < 4; ++h) {
      const std::string name = "ip-10-0-" + std::to_string(a) + "-" + std::to_string(h);
      eks.push_back({{"apiVersion", "v1"},
                     {"kind", "Node"},
                     {"metadata",
                      {{"name", name},
                       {"labels",
                        {{"topology.k8s.aws/network-node-layer-1", "nn-1"},
                         {"topology.k8s.aws/network-node-layer-2", "nn-2-" + std::to_string(a / 2)},
                         {"topology.k8s.aws/network-node-layer-3", "nn-3-" + std::to_string(a)},
                         {"kubernetes.io/hostname", name}}}}},
                     {"status", {{"allocatable", {{"nvidia.com/gpu", "8"}}}}}});
    }
  }
  testing::write_text(dir / "eks-nodes.json",
                      json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", eks}}.dump());
}

TEST(DocsCommands, EveryShBlockRunsAsWritten) {
  HT_REQUIRE_FIXTURE(capture, "ibnetdiscover/topograph-example.out");
  testing::TempDir dir;
  const fs::path ws = dir.path() / "workspace";
  ASSERT_NO_FATAL_FAILURE(make_workspace(ws, capture));
  std::size_t ran = 0;
  for (const auto& doc : docs()) {
    for (const auto& block : fenced_blocks(doc)) {
      if (block.info != "sh") continue;
      for (const auto& command : commands_of(block)) {
        if (const auto* why = reason_not_to_run(command.text)) {
          ADD_FAILURE() << command.where << ": " << command.text << "\n  is in a ```sh block, but "
                        << why->reason << ": put it in a ```console block";
          continue;
        }
        const Shell r = run_shell(ws, command.text);
        EXPECT_EQ(r.code, 0) << command.where << ": " << command.text << "\n" << r.out.substr(0, 4000);
        ++ran;
      }
    }
  }
  std::cout << "ran " << ran << " documented commands\n";
  EXPECT_GE(ran, 15u);
}

TEST(DocsCommands, EveryConsoleCommandSaysWhyItCannotRunHere) {
  std::set<std::string_view> used;
  std::size_t listed = 0;
  for (const auto& doc : docs()) {
    for (const auto& block : fenced_blocks(doc)) {
      if (block.info != "console" && !is_shell(block.info)) continue;
      if (block.info == "sh") continue;
      for (const auto& command : commands_of(block)) {
        const auto* why = reason_not_to_run(command.text);
        if (why == nullptr) {
          ADD_FAILURE() << command.where << ": " << command.text << "\n  is in a ```" << block.info
                        << " block, and nothing in kNotRunnable says why it "
                        << "cannot run here: put it in a ```sh block (the test runs it), or add the reason";
          continue;
        }
        used.insert(why->pattern);
        std::cout << "not run: " << command.where << ": " << command.text << "\n  (" << why->reason << ")\n";
        ++listed;
      }
    }
  }
  // A reason no command needs any more goes, so the list stays the docs' own.
  for (const auto& entry : kNotRunnable) {
    EXPECT_TRUE(used.contains(entry.pattern))
        << "kNotRunnable: no ```console command matches '" << entry.pattern << "'";
  }
  EXPECT_GT(listed, 0u);
}

// Every examples/ file a doc names is in the repository.
TEST(DocsCommands, EveryExampleFileADocNamesExists) {
  const std::regex path(R"(examples/[A-Za-z0-9_.\-/]*[A-Za-z0-9_])");
  std::size_t named = 0;
  for (const auto& doc : docs()) {
    const std::string text = testing::read_text(doc);
    for (auto it = std::sregex_iterator(text.begin(), text.end(), path); it != std::sregex_iterator(); ++it) {
      EXPECT_TRUE(fs::exists(kRoot / it->str())) << fs::relative(doc, kRoot) << " names " << it->str();
      ++named;
    }
  }
  EXPECT_GT(named, 0u);
}

}  // namespace
}  // namespace hypertopo
