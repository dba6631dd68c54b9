// The hypertopo binary on hostile inputs: regular expressions that overflow the stack or backtrack,
// 100k-deep JSON, YAML alias bombs and YAML that yaml-cpp loops on, endless files (/dev/zero) and a
// FIFO where a file is meant.
// Each run must end within 10 s of CPU and wall time and 512 MB of resident memory, with an exit
// code (never a signal) and a short error naming the input. The limits are enforced on the child
// (RLIMIT_CPU, a wall-clock kill, and RLIMIT_AS when the binary is not built with AddressSanitizer,
// whose shadow memory reserves terabytes of address space) and measured with wait4()'s rusage.
// HYPERTOPO_BINARY overrides the binary (e.g. a release build).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/fixtures.h"

namespace hypertopo::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

constexpr long kMemoryLimitMib = 512;
constexpr int kSeconds = 10;

std::string hypertopo_binary() {
  const char* override_binary = std::getenv("HYPERTOPO_BINARY");
  return override_binary != nullptr ? override_binary : HT_HYPERTOPO_BINARY;
}

// AddressSanitizer reserves its shadow memory up front: an address-space limit would stop it from
// starting, so such a binary gets the CPU and wall limits and the measured resident size only.
bool built_with_asan(const std::string& binary) {
  const int fd = ::open(binary.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  bool found = false;
  if (::fstat(fd, &st) == 0 && st.st_size > 0) {
    void* map = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (map != MAP_FAILED) {
      static constexpr char kMarker[] = "__asan_init";
      found = ::memmem(map, static_cast<std::size_t>(st.st_size), kMarker, sizeof kMarker - 1) != nullptr;
      ::munmap(map, static_cast<std::size_t>(st.st_size));
    }
  }
  ::close(fd);
  return found;
}

struct Outcome {
  bool exited = false;  // by exit(), not by a signal or the wall-clock kill
  int code = -1;
  int signal = 0;
  bool wall_timeout = false;
  double seconds = 0;  // wall
  double cpu_seconds = 0;
  long peak_rss_mib = 0;
  std::string err;
};

Outcome run_limited(const std::vector<std::string>& args, const fs::path& dir) {
  const std::string binary = hypertopo_binary();
  const bool asan = built_with_asan(binary);
  const fs::path err_file = dir / "stderr.txt";
  const auto started = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int err = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    ::dup2(null, STDIN_FILENO);
    ::dup2(null, STDOUT_FILENO);
    ::dup2(err, STDERR_FILENO);
    rlimit cpu{kSeconds, kSeconds + 1};
    ::setrlimit(RLIMIT_CPU, &cpu);
    if (!asan) {
      rlimit as{static_cast<rlim_t>(kMemoryLimitMib) << 20, static_cast<rlim_t>(kMemoryLimitMib) << 20};
      ::setrlimit(RLIMIT_AS, &as);
    }
    // Under ASan: a hard stop well above the limit so a runaway child cannot take the machine, and
    // a small quarantine so that freed memory the sanitizer holds back does not count as ours.
    ::setenv("ASAN_OPTIONS", "detect_leaks=0:hard_rss_limit_mb=1536:quarantine_size_mb=16", 1);
    std::vector<char*> argv;
    std::vector<std::string> all{binary};
    all.insert(all.end(), args.begin(), args.end());
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  Outcome out;
  int status = 0;
  rusage usage{};
  for (;;) {
    const pid_t done = ::wait4(pid, &status, WNOHANG, &usage);
    if (done == pid) break;
    if (std::chrono::steady_clock::now() - started > std::chrono::seconds(kSeconds)) {
      out.wall_timeout = true;
      ::kill(pid, SIGKILL);
      ::wait4(pid, &status, 0, &usage);
      break;
    }
    std::this_thread::sleep_for(10ms);
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  out.cpu_seconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                    static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  out.peak_rss_mib = usage.ru_maxrss / 1024;  // KiB on Linux
  out.exited = !out.wall_timeout && WIFEXITED(status);
  out.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  out.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  out.err = read_text(err_file);
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

// What a correct run looks like; "" when it is one. A `legal` input (a pattern RE2 matches in
// linear time, an attribute the probe cannot read and reports) must succeed within the same bounds.
std::string judge(const Outcome& o, const std::string& names, bool legal) {
  std::ostringstream why;
  if (o.wall_timeout) why << "still running after " << kSeconds << " s (killed); ";
  if (o.signal != 0) why << "ended by signal " << o.signal << "; ";
  if (o.peak_rss_mib >= kMemoryLimitMib) why << "peak RSS " << o.peak_rss_mib << " MiB; ";
  if (o.cpu_seconds >= kSeconds) why << "CPU " << o.cpu_seconds << " s; ";
  if (legal) {
    if (o.exited && o.code != 0)
      why << "exit " << o.code << " on a legal input: " << o.err.substr(0, 300) << "; ";
    if (o.exited && !names.empty() && o.err.find(names) == std::string::npos)
      why << "no warning names '" << names << "'; ";
    return why.str();
  }
  if (o.exited && o.code == 0) why << "exit 0 on a hostile input; ";
  const auto lines = lines_of(o.err);
  if (lines.empty()) why << "no error message; ";
  if (lines.size() > 3) why << lines.size() << " lines on stderr (one clear error expected); ";
  if (o.exited && !names.empty() && o.err.find(names) == std::string::npos)
    why << "the error does not name '" << names << "'; ";
  return why.str();
}

struct HostileCase {
  std::string id;
  std::vector<std::string> args;
  std::string names;   // what the error must name (a file or key)
  bool legal = false;  // valid input built to exhaust a backtracking matcher or block a reader
};

// Nine levels of nine aliases: 9^9 (387 million) strings once expanded.
std::string yaml_alias_bomb(const std::string& key = "bomb") {
  std::string out = "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
  for (char level = 'b'; level <= 'i'; ++level) {
    const char prev = static_cast<char>(level - 1);
    out += std::string(1, level) + ": &" + level + " [";
    for (int i = 0; i < 9; ++i) out += std::string(i ? "," : "") + "*" + prev;
    out += "]\n";
  }
  return out + key + ": *i\n";
}

// A capture with one switch and one CA whose descriptions are the given texts.
std::string capture(const std::string& switch_desc, const std::string& ca_desc) {
  return "vendid=0x2c9\ndevid=0xd2f0\nsysimgguid=0x1\nswitchguid=0x1(1)\n"
         "Switch\t2 \"S-0000000000000001\"\t\t# \"" +
         switch_desc +
         "\" enhanced port 0 lid 1 lmc 0\n"
         "[1]\t\"H-0000000000000010\"[1](11) \t\t# \"" +
         ca_desc +
         "\" lid 3 4xNDR\n\n"
         "vendid=0x2c9\ndevid=0x1021\nsysimgguid=0x10\ncaguid=0x10\n"
         "Ca\t1 \"H-0000000000000010\"\t\t# \"" +
         ca_desc +
         "\"\n"
         "[1](11) \t\"S-0000000000000001\"[1]\t\t# lid 3 lmc 0 \"" +
         switch_desc + "\" lid 1 4xNDR\n";
}

std::vector<HostileCase> make_cases(const fs::path& dir) {
  std::vector<HostileCase> cases;
  const std::string examples = std::string(HYPERTOPO_SOURCE_DIR) + "/examples/simulate/";
  auto file = [&](const std::string& name, const std::string& text) {
    write_text(dir / name, text);
    return (dir / name).string();
  };

  // 1. Regular expressions.
  const std::string long_ca = file("long-ca.out", capture("leaf-1", std::string(40000, 'h') + " mlx5_0"));
  const std::string host_pattern = file("host-pattern.yaml", "hostDescriptionPattern: '^(\\S+) '\n");
  cases.push_back({"regex-stack-host-pattern",
                   {"discover", "--source", "ibnetdiscover:" + long_ca, "--config", host_pattern},
                   "",
                   true});
  const std::string long_switch = file("long-switch.out", capture(std::string(100000, 'l'), "node-a mlx5_0"));
  const std::string switch_pattern = file("switch-pattern.yaml", "excludedSwitchPatterns: ['^l+$']\n");
  cases.push_back({"regex-stack-switch-pattern",
                   {"discover", "--source", "ibnetdiscover:" + long_switch, "--config", switch_pattern},
                   "",
                   true});
  const std::string evil = file("evil.out", capture(std::string(30, 'a') + "!", "node-a mlx5_0"));
  const std::string evil_pattern = file("evil-pattern.yaml", "excludedSwitchPatterns: ['^((a+)+)$']\n");
  cases.push_back({"regex-backtracking",
                   {"discover", "--source", "ibnetdiscover:" + evil, "--config", evil_pattern},
                   "",
                   true});

  // 2. Deep JSON.
  const std::string deep = file("deep.jsonl", std::string(100000, '[') + "\n");
  cases.push_back({"deep-json-trace",
                   {"simulate", "--trace", deep, "--nodes", examples + "nodes.json", "--topology",
                    examples + "hypernodes.json"},
                   "deep.jsonl"});

  // 3. YAML alias bombs.
  const std::string bomb = file("bomb.yaml", yaml_alias_bomb());
  cases.push_back({"yaml-bomb-place-job",
                   {"place", "--job", bomb, "--nodes", examples + "nodes.json", "--topology",
                    examples + "hypernodes.json"},
                   "bomb.yaml"});
  const std::string place = std::string(HYPERTOPO_SOURCE_DIR) + "/examples/place/";
  cases.push_back(
      {"yaml-bomb-place-topology",
       {"place", "--job", place + "kueue-job.yaml", "--nodes", place + "nodes.json", "--topology", bomb},
       "bomb.yaml"});
  cases.push_back({"yaml-bomb-place-nodes",
                   {"place", "--job", place + "kueue-job.yaml", "--nodes", bomb, "--topology",
                    place + "kueue-topology.yaml"},
                   "bomb.yaml"});
  cases.push_back({"yaml-bomb-extender-config", {"extender", "--config", bomb}, "bomb.yaml"});
  cases.push_back({"yaml-bomb-agent-config", {"agent", "--check", "--config", bomb}, "bomb.yaml"});
  // The bomb inside the inline labels block, so that the rest of the config is valid.
  std::string agent = "sources:\n  - kind: labels\n    config:\n      networkTopologyTypes:\n";
  std::istringstream bomb_lines(yaml_alias_bomb("rack"));
  for (std::string line; std::getline(bomb_lines, line);) agent += "        " + line + "\n";
  cases.push_back({"yaml-bomb-agent-inline-labels",
                   {"agent", "--check", "--config", file("agent-bomb.yaml", agent)},
                   "agent-bomb.yaml"});
  fs::create_directories(dir / "reports");
  write_text(dir / "reports" / "node-a.yaml", yaml_alias_bomb("spec"));
  cases.push_back({"yaml-bomb-reports-dir",
                   {"discover", "--source", "demo", "--source", "reports:" + (dir / "reports").string()},
                   "node-a.yaml"});

  // YAML that yaml-cpp 0.7 loops on forever: a document whose first token cannot begin a node.
  cases.push_back({"yaml-loop-place-job",
                   {"place", "--job", file("loop-comma.yaml", "kind: Job\n---\n\"a\",\n"), "--nodes",
                    examples + "nodes.json", "--topology", examples + "hypernodes.json"},
                   "loop-comma.yaml"});
  cases.push_back(
      {"yaml-loop-agent-config",
       {"agent", "--check", "--config", file("loop-key.yaml", "sources:\n  - kind: demo\n---\n! |\n?\n")},
       "loop-key.yaml"});
  // A backtracking pattern in the agent's pattern lists: valid RE2, accepted, and checked at once.
  cases.push_back({"regex-backtracking-agent-check",
                   {"agent", "--check", "--config",
                    file("agent-patterns.yaml",
                         "sources:\n  - kind: demo\nexcludedSwitchPatterns: ['^((a+)+)$', '^l+$']\n")},
                   "",
                   true});

  // 4. Endless and blocking files.
  cases.push_back({"dev-zero-capture", {"discover", "--source", "ibnetdiscover:/dev/zero"}, "/dev/zero"});
  cases.push_back(
      {"dev-zero-builder-config", {"discover", "--source", "demo", "--config", "/dev/zero"}, "/dev/zero"});
  cases.push_back({"dev-zero-agent-config", {"agent", "--check", "--config", "/dev/zero"}, "/dev/zero"});
  cases.push_back({"dev-zero-extender-config", {"extender", "--config", "/dev/zero"}, "/dev/zero"});
  cases.push_back(
      {"dev-zero-guid-map", {"discover", "--source", "demo", "--guid-map", "/dev/zero"}, "/dev/zero"});
  const fs::path hca = dir / "root" / "sys" / "class" / "infiniband" / "mlx5_0";
  fs::create_directories(hca / "ports" / "1");
  write_text(hca / "node_guid", "0000:0000:0000:0010\n");
  write_text(hca / "ports" / "1" / "state", "4: ACTIVE\n");
  write_text(hca / "ports" / "1" / "link_layer", "InfiniBand\n");
  EXPECT_EQ(::mkfifo((hca / "node_desc").c_str(), 0600), 0);
  cases.push_back(
      {"fifo-node-desc",
       {"probe", "--source", "ib-local", "--root", (dir / "root").string(), "--node-name", "node-a"},
       "node_desc",
       true});
  fs::create_directories(dir / "ufm-creds");
  fs::create_symlink("/dev/zero", dir / "ufm-creds" / "token");
  cases.push_back(
      {"dev-zero-ufm-token",
       {"discover", "--source", "ufm:https://127.0.0.1:9", "--ufm-credentials", (dir / "ufm-creds").string()},
       "token"});
  return cases;
}

TEST(ResourceLimits, EveryCaseEndsWithOneErrorWithin10SecondsAnd512Mib) {
  TempDir dir;
  const auto cases = make_cases(dir.path());
  std::printf("[hostile] binary %s (%s)\n", hypertopo_binary().c_str(),
              built_with_asan(hypertopo_binary()) ? "ASan: no RLIMIT_AS, RSS measured" : "RLIMIT_AS 512 MiB");
  for (const auto& c : cases) {
    const fs::path scratch = dir.path() / ("run-" + c.id);
    fs::create_directories(scratch);
    const Outcome o = run_limited(c.args, scratch);
    const std::string why = judge(o, c.names, c.legal);
    const auto lines = lines_of(o.err);
    std::printf("[hostile] %-30s exit %-3d signal %-2d %5.2fs wall %5.2fs cpu %4ld MiB peak: %s\n",
                c.id.c_str(), o.code, o.signal, o.seconds, o.cpu_seconds, o.peak_rss_mib,
                why.empty() ? ("ok: " + (lines.empty() ? std::string() : lines.back().substr(0, 160))).c_str()
                            : why.c_str());
    EXPECT_TRUE(why.empty()) << c.id << ": " << why << "\nstderr:\n" << o.err.substr(0, 2000);
  }
}

}  // namespace
}  // namespace hypertopo::testing
