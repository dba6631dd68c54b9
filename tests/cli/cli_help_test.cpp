// What the binary tells its user, read as the user reads it: --help names every job kind `place`
// reads and the defaults it runs with, documents every key of the extender's config (the loader's own
// list of keys, so the two cannot drift), `apply` holds deletions at the agent's share; errors carry
// one "source X:" prefix, and counts read "1 HyperNode", "2 HyperNodes".
#include <gtest/gtest.h>
#include <re2/re2.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/support/fixtures.h"

namespace hypertopo::testing {
namespace {

struct HelpResult {
  int code = -1;
  std::string out;  // stdout and stderr
};

HelpResult run_help(const std::string& args) {
  const std::string command = std::string(HT_HYPERTOPO_BINARY) + " " + args + " 2>&1";
  HelpResult r;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) r.out.append(buf, n);
  const int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Standard output alone (notes on stderr left out).
std::string stdout_of(const std::string& args) {
  const std::string command = std::string(HT_HYPERTOPO_BINARY) + " " + args + " 2>/dev/null";
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  pclose(pipe);
  return out;
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(Help, PlaceNamesEveryJobKindAndItsDefaults) {
  const HelpResult r = run_help("place --help");
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* kind :
       {"Volcano Job", "batch/v1 Job", "JobSet", "KaiwoJob", "PodGroup", "PlacementRequest"})
    EXPECT_NE(r.out.find(kind), std::string::npos) << kind << "\n" << r.out;
  EXPECT_NE(r.out.find("-o,--output TEXT:{json,yaml,text,name,wide}=json"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--semantics TEXT:{auto,engine,kueue}=auto"), std::string::npos) << r.out;
  // Pods of every namespace, or the other namespaces' GPUs look free.
  EXPECT_NE(r.out.find("kubectl get pods -A -o json"), std::string::npos) << r.out;
}

TEST(Help, ExtenderDocumentsEveryKeyItsConfigLoaderKnows) {
  TempDir dir;
  const auto config = dir.path() / "extender.yaml";
  write_text(config, "noSuchKey: 1\n");
  const HelpResult refused = run_help("extender --config " + config.string());
  EXPECT_EQ(refused.code, 2) << refused.out;
  const std::string marker = "unknown key (known: ";
  const auto at = refused.out.find(marker);
  ASSERT_NE(at, std::string::npos) << refused.out;
  const std::string list =
      refused.out.substr(at + marker.size(), refused.out.find(')', at) - at - marker.size());
  const HelpResult help = run_help("extender --help");
  ASSERT_EQ(help.code, 0);
  std::stringstream keys(list);
  std::size_t documented = 0;
  for (std::string key; std::getline(keys, key, ',');) {
    key.erase(0, key.find_first_not_of(' '));
    EXPECT_NE(help.out.find("  " + key + ": "), std::string::npos) << key << " is not in extender --help";
    ++documented;
  }
  EXPECT_GE(documented, 10u) << list;
  EXPECT_EQ(help.out.find("extender_config.h"), std::string::npos) << "--help points at a header:\n"
                                                                   << help.out;
  EXPECT_NE(help.out.find("managedResources"), std::string::npos) << help.out;
}

TEST(Help, ApplyHoldsDeletionsAtTheAgentsShare) {
  // The share the agent's example config holds deletions at (deploy/base/config.yaml).
  std::ifstream in(std::filesystem::path(HYPERTOPO_SOURCE_DIR) / "deploy" / "base" / "config.yaml");
  std::stringstream text;
  text << in.rdbuf();
  const std::string key = "maxDeleteFraction: ";
  const auto at = text.str().find(key);
  ASSERT_NE(at, std::string::npos);
  const std::string agent_share =
      text.str().substr(at + key.size(), text.str().find('\n', at) - at - key.size());
  EXPECT_EQ(agent_share, "0.3");
  const HelpResult r = run_help("apply --help");
  EXPECT_NE(r.out.find("--max-delete-fraction FLOAT:FLOAT in [0 - 1]=" + agent_share), std::string::npos)
      << r.out;
}

TEST(Messages, ASourceErrorCarriesItsSourceOnce) {
  const HelpResult r = run_help("discover --source ibnetdisc-cache:/nonexistent/cache.db");
  EXPECT_NE(r.code, 0);
  EXPECT_EQ(occurrences(r.out, "source ibnetdisc-cache:/nonexistent/cache.db"), 1u) << r.out;
  EXPECT_NE(r.out.find("hypertopo discover: error: source ibnetdisc-cache:/nonexistent/cache.db: "),
            std::string::npos)
      << r.out;
}

TEST(Messages, CountsAreSingularForOne) {
  TempDir dir;
  write_text(dir.path() / "labels.yaml",
             "networkTopologyTypes:\n  t: [{nodeLabel: rack}, {nodeLabel: kubernetes.io/hostname}]\n");
  auto node = [](const std::string& name, const std::string& rack) {
    return R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + name + R"(","labels":{"rack":")" +
           rack + R"(","kubernetes.io/hostname":")" + name + R"("}}})";
  };
  write_text(dir.path() / "one.json",
             R"({"apiVersion":"v1","kind":"List","items":[)" + node("n1", "r1") + "]}");
  write_text(dir.path() / "two.json", R"({"apiVersion":"v1","kind":"List","items":[)" + node("n1", "r1") +
                                          "," + node("n2", "r1") + "," + node("n3", "r2") + "]}");
  const std::string labels = (dir.path() / "labels.yaml").string();
  HelpResult r =
      run_help("discover --source labels:" + labels + " --nodes " + (dir.path() / "one.json").string());
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("): 1 HyperNode, 1 node, 1 tier\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("labels.yaml: 1 topology type, 1 HyperNode from the labels of 1 node\n"),
            std::string::npos)
      << r.out;
  r = run_help("discover --source labels:" + labels + " --nodes " + (dir.path() / "two.json").string());
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("): 2 HyperNodes, 3 nodes, 1 tier\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("labels.yaml: 1 topology type, 2 HyperNodes from the labels of 3 nodes\n"),
            std::string::npos)
      << r.out;
}

TEST(Version, NamesTheVersionTheCommitAndTheBuildDay) {
  const HelpResult r = run_help("--version");
  ASSERT_EQ(r.code, 0) << r.out;
  // The version is the project's (CMakeLists.txt), the commit a 12-digit hash (or "unknown" outside
  // a checkout), the day the build ran.
  std::ifstream in(std::filesystem::path(HYPERTOPO_SOURCE_DIR) / "CMakeLists.txt");
  std::stringstream text;
  text << in.rdbuf();
  std::string version;
  ASSERT_TRUE(RE2::PartialMatch(text.str(), R"(project\(hypertopo VERSION ([0-9.]+))", &version));
  EXPECT_TRUE(RE2::FullMatch(
      r.out, "hypertopo " + RE2::QuoteMeta(version) +
                 R"( \(commit ([0-9a-f]{12}(-dirty)?|unknown), built [0-9]{4}-[0-9]{2}-[0-9]{2}\)\n)"))
      << r.out;
}

// The header --version prints from, as a build without .git writes it (the image's build stage:
// HYPERTOPO_GIT_COMMIT) and as a reproducible build dates it (SOURCE_DATE_EPOCH); a second run
// with nothing changed leaves the file alone, so it rebuilds nothing.
TEST(Version, TheCommitComesFromTheEnvironmentWhereThereIsNoCheckout) {
  TempDir dir;
  const auto header = dir.path() / "version_info.h";
  const std::string command =
      "env HYPERTOPO_GIT_COMMIT=0123456789ab SOURCE_DATE_EPOCH=86400 cmake -DSOURCE_DIR=" +
      dir.path().string() + " -DOUTPUT=" + header.string() +
      " -DVERSION=9.8.7 -P " HYPERTOPO_SOURCE_DIR "/cmake/version_info.cmake";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  std::ifstream in(header);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("#define HT_VERSION \"9.8.7\"\n"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("#define HT_GIT_COMMIT \"0123456789ab\"\n"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("#define HT_BUILD_DATE \"1970-01-02\"\n"), std::string::npos) << text.str();
  const auto written = std::filesystem::last_write_time(header);
  std::filesystem::last_write_time(header, written - std::chrono::hours(1));
  ASSERT_EQ(std::system(command.c_str()), 0);
  EXPECT_EQ(std::filesystem::last_write_time(header), written - std::chrono::hours(1))
      << "rewritten unchanged";
}

// The script is bash's own completion function; run it as bash does, on the words typed so far.
std::string complete(const std::string& script, const std::string& words, int cword) {
  const HelpResult r = [&] {
    const std::string command = "bash --norc -c 'source " + script + "; COMP_WORDS=(" + words +
                                "); COMP_CWORD=" + std::to_string(cword) +
                                "; _hypertopo; printf \"%s\\n\" \"${COMPREPLY[@]}\"' 2>&1";
    HelpResult out;
    FILE* pipe = popen(command.c_str(), "r");
    char buf[4096];
    for (std::size_t n; pipe != nullptr && (n = fread(buf, 1, sizeof buf, pipe)) > 0;) out.out.append(buf, n);
    out.code = pipe != nullptr ? pclose(pipe) : -1;
    return out;
  }();
  return r.out;
}

TEST(Completion, BashCompletesSubcommandsFlagsAndTheirValues) {
  TempDir dir;
  const auto script = dir.path() / "hypertopo.bash";
  const HelpResult r = run_help("completion bash");
  ASSERT_EQ(r.code, 0) << r.out;
  write_text(script, r.out);
  EXPECT_EQ(complete(script.string(), "hypertopo pla", 1), "place\n");
  EXPECT_EQ(complete(script.string(), "hypertopo st", 1), "status\n");
  EXPECT_EQ(complete(script.string(), "hypertopo agent --ro", 2), "--role\n");
  EXPECT_EQ(complete(script.string(), "hypertopo agent --role \"\"", 3), "all\nnode\nleader\n");
  EXPECT_EQ(complete(script.string(), "hypertopo place -o \"\"", 3), "json\nyaml\ntext\nname\nwide\n");
  EXPECT_EQ(complete(script.string(), "hypertopo discover -o w", 3), "wide\n");
  EXPECT_EQ(complete(script.string(), "hypertopo discover --ufm-ti", 2), "--ufm-timeout\n");
  // A flag that takes a file completes file names.
  write_text(dir.path() / "nodes-a.json", "{}");
  EXPECT_EQ(complete(script.string(), "hypertopo place --nodes " + (dir.path() / "nodes-").string(), 3),
            (dir.path() / "nodes-a.json").string() + "\n");
  // zsh gets the same function through bashcompinit.
  const HelpResult zsh = run_help("completion zsh");
  ASSERT_EQ(zsh.code, 0);
  EXPECT_TRUE(zsh.out.starts_with("# hypertopo completion for zsh")) << zsh.out;
  EXPECT_NE(zsh.out.find("autoload -U +X bashcompinit && bashcompinit\n"), std::string::npos);
  EXPECT_NE(zsh.out.find(r.out), std::string::npos);
  EXPECT_EQ(run_help("completion fish").code, 2);
}

// Values where a flag takes one of a set (output formats, --source's kinds and label presets, a
// positional's set), file names only where a flag takes a file, and nothing for any other value.
TEST(Completion, ValuesForSetsFilesOnlyForFileFlags) {
  TempDir dir;
  const auto script = dir.path() / "hypertopo.bash";
  write_text(script, run_help("completion bash").out);
  write_text(dir.path() / "nodes-a.json", "{}");
  const std::string file_prefix = (dir.path() / "nodes-").string();
  const std::string sources = complete(script.string(), "hypertopo discover --source \"\"", 3);
  for (const char* kind : {"demo\n", "ibnetdiscover\n", "ufm\n", "labels:preset=eks\n"})
    EXPECT_NE(sources.find(kind), std::string::npos) << kind << " not offered:\n" << sources;
  EXPECT_EQ(sources.find("ib-local\n"), std::string::npos) << "a node probe offered to discover:\n"
                                                           << sources;
  EXPECT_EQ(complete(script.string(), "hypertopo probe --source \"\"", 3), "ib-local\nlldp\nnvlink\n");
  EXPECT_EQ(complete(script.string(), "hypertopo status -o \"\"", 3), "text\njson\nname\nwide\nhtml\n");
  EXPECT_EQ(complete(script.string(), "hypertopo completion \"\"", 2), "bash\nzsh\n");
  // File flags, checked or not by CLI11, complete files.
  EXPECT_EQ(complete(script.string(), "hypertopo discover --nodes " + file_prefix, 3),
            (dir.path() / "nodes-a.json").string() + "\n");
  EXPECT_EQ(complete(script.string(), "hypertopo status --kubeconfig " + file_prefix, 3),
            (dir.path() / "nodes-a.json").string() + "\n");
  // A value that is no file, and a positional argument where the subcommand takes none: nothing.
  EXPECT_EQ(complete(script.string(), "hypertopo discover --label-prefix " + file_prefix, 3), "\n");
  EXPECT_EQ(complete(script.string(), "hypertopo agent --node-name " + file_prefix, 3), "\n");
  EXPECT_EQ(complete(script.string(), "hypertopo status " + file_prefix, 2), "\n");
}

// `-o labels-apply`: what `kubectl apply --server-side --field-manager=hypertopo -f -` takes: a List
// of Node objects carrying the tier labels and nothing else (no spec, no status, no other label),
// the same labels `-o labels` prints.
TEST(Exports, LabelsApplyIsNodeObjectsCarryingOnlyOurLabels) {
  TempDir dir;
  write_text(dir.path() / "labels.yaml",
             "networkTopologyTypes:\n  t: [{nodeLabel: rack}, {nodeLabel: kubernetes.io/hostname}]\n");
  auto node = [](const std::string& name, const std::string& rack) {
    return R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + name + R"(","labels":{"rack":")" +
           rack + R"(","kubernetes.io/hostname":")" + name + R"("}},"spec":{"unschedulable":false}})";
  };
  write_text(dir.path() / "nodes.json", R"({"apiVersion":"v1","kind":"List","items":[)" + node("n1", "r1") +
                                            "," + node("n2", "r1") + "," + node("n3", "r2") + "]}");
  const std::string args = "discover --source labels:" + (dir.path() / "labels.yaml").string() + " --nodes " +
                           (dir.path() / "nodes.json").string();
  const std::string out = stdout_of(args + " -o labels-apply");
  const auto list = nlohmann::json::parse(out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(list.is_discarded()) << out;
  EXPECT_EQ(list.at("apiVersion"), "v1");
  EXPECT_EQ(list.at("kind"), "List");
  ASSERT_EQ(list.at("items").size(), 3u);
  std::map<std::string, std::string> tier_of;
  for (const auto& item : list.at("items")) {
    EXPECT_EQ(item.at("apiVersion"), "v1");
    EXPECT_EQ(item.at("kind"), "Node");
    EXPECT_EQ(item.size(), 3u) << item.dump() << ": only apiVersion, kind and metadata";
    EXPECT_EQ(item.at("metadata").size(), 2u) << item.dump() << ": only the name and our labels";
    const auto& labels = item.at("metadata").at("labels");
    ASSERT_EQ(labels.size(), 1u) << item.dump();
    tier_of[item.at("metadata").at("name")] = labels.at("hypertopo.io/tier-1");
  }
  EXPECT_EQ(tier_of["n1"], tier_of["n2"]);
  EXPECT_NE(tier_of["n1"], tier_of["n3"]);
  // The labels are those of -o labels.
  const std::string plain = stdout_of(args + " -o labels");
  for (const auto& [name, value] : tier_of)
    EXPECT_NE(plain.find(name + ":\n  hypertopo.io/tier-1: \"" + value + "\""), std::string::npos) << plain;
}

}  // namespace
}  // namespace hypertopo::testing
