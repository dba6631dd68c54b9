#include "discoverers/ib-fabric/simulated_fabric.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "discoverers/ib-fabric/graph_handover.h"
#include "io/bounded_file.h"

namespace hypertopo::discoverers::ib_fabric {
namespace {

namespace fs = std::filesystem;

const std::vector<fs::path> kSbinDirs = {"/usr/sbin", "/sbin", "/usr/local/sbin"};

std::string read_from(const fs::path& path, std::size_t offset) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  auto size = static_cast<std::size_t>(in.tellg());
  if (offset >= size) return "";
  in.seekg(static_cast<std::streamoff>(offset));
  std::string text(size - offset, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  return text;
}

std::string unique_token() {
  static std::atomic<unsigned> counter{0};
  std::random_device rd;
  std::ostringstream out;
  out << getpid() << "-" << counter.fetch_add(1) << "-" << std::hex << (rd() & 0xffffffu);
  return out.str();
}

// Counts what ibsim must allocate for a net file, so its -N/-S/-P limits can be raised to fit.
struct NetfileCapacity {
  std::size_t nodes = 0;
  std::size_t switches = 0;
  std::size_t ports = 0;
  std::string first_ca;
};

std::string quoted_id(const std::string& line) {
  auto open = line.find('"');
  if (open == std::string::npos) return "";
  auto close = line.find('"', open + 1);
  if (close == std::string::npos) return "";
  return line.substr(open + 1, close - open - 1);
}

std::size_t header_ports(const std::string& line, std::size_t skip) {
  std::size_t i = skip;
  while (i < line.size() && !std::isdigit(static_cast<unsigned char>(line[i]))) ++i;
  return static_cast<std::size_t>(std::strtoul(line.c_str() + i, nullptr, 10));
}

NetfileCapacity measure_netfile(const fs::path& path) {
  NetfileCapacity cap;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("Switch")) {
      ++cap.nodes;
      ++cap.switches;
      cap.ports += header_ports(line, 6) + 1;
    } else if (line.starts_with("Hca") || line.starts_with("Ca") || line.starts_with("Rt")) {
      ++cap.nodes;
      cap.ports += header_ports(line, line.starts_with("Hca") ? 3 : 2);
      if (cap.first_ca.empty() && !line.starts_with("Rt")) cap.first_ca = quoted_id(line);
    }
  }
  return cap;
}

bool abstract_socket_listed(const std::string& name) {
  std::ifstream in("/proc/net/unix");
  if (!in) return true;  // cannot tell; the console marker already said the simulator is serving
  std::string needle = "@" + name + ":ctl";
  std::string line;
  while (std::getline(in, line)) {
    if (line.find(needle) != std::string::npos) return true;
  }
  return false;
}

std::string strip_prompts(std::string text) {
  for (const char* prompt : {"sim (inactive)> ", "sim> "}) {
    std::string p(prompt);
    for (auto pos = text.find(p); pos != std::string::npos; pos = text.find(p)) text.erase(pos, p.size());
  }
  return text;
}

}  // namespace

std::optional<fs::path> find_umad2sim() {
  for (const char* candidate :
       {"/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so",
        "/usr/lib/aarch64-linux-gnu/umad2sim/libumad2sim.so", "/usr/lib/umad2sim/libumad2sim.so",
        "/usr/lib64/umad2sim/libumad2sim.so", "/usr/local/lib/umad2sim/libumad2sim.so"}) {
    if (fs::exists(candidate)) return fs::path(candidate);
  }
  return std::nullopt;
}

std::string simulator_missing(const SimulatorOptions& options) {
  std::string missing;
  bool have_ibsim =
      options.ibsim.empty() ? find_executable("ibsim", kSbinDirs).has_value() : fs::exists(options.ibsim);
  if (!have_ibsim) missing += "ibsim (Debian package ibsim-utils)";
  bool have_preload = options.umad2sim.empty() ? find_umad2sim().has_value() : fs::exists(options.umad2sim);
  if (!have_preload)
    missing += std::string(missing.empty() ? "" : " and ") + "the umad2sim preload (ibsim-utils)";
  if (!find_executable("timeout"))
    missing += std::string(missing.empty() ? "" : " and ") + "timeout (coreutils)";
  return missing;
}

std::vector<std::string> hypertopo_walker_command() {
  std::error_code ec;
  auto self = fs::read_symlink("/proc/self/exe", ec);
  return {ec ? std::string("hypertopo") : self.string(), "ib-walk"};
}

std::expected<std::unique_ptr<SimulatedFabric>, Error> SimulatedFabric::start(std::string_view netfile_text,
                                                                              SimulatorOptions options) {
  std::unique_ptr<SimulatedFabric> sim(new SimulatedFabric());
  sim->options_ = std::move(options);
  std::error_code ec;
  if (sim->options_.work_dir.empty()) {
    sim->work_dir_ = fs::temp_directory_path(ec) / ("hypertopo-ibsim-" + unique_token());
    sim->owns_work_dir_ = true;
  } else {
    sim->work_dir_ = sim->options_.work_dir;
  }
  fs::create_directories(sim->work_dir_, ec);
  if (ec) return fail(ErrorCode::kInternal, "cannot create " + sim->work_dir_.string() + ": " + ec.message());
  auto netfile = sim->work_dir_ / "fabric.net";
  {
    std::ofstream out(netfile, std::ios::binary);
    out << netfile_text;
    if (!out) return fail(ErrorCode::kInternal, "cannot write " + netfile.string());
  }
  if (auto ok = sim->launch(netfile); !ok) return std::unexpected(ok.error());
  return sim;
}

std::expected<std::unique_ptr<SimulatedFabric>, Error> SimulatedFabric::start_file(const fs::path& netfile,
                                                                                   SimulatorOptions options) {
  auto text = io::read_bounded_file(netfile, io::kDataFileLimit);
  if (!text) return std::unexpected(text.error().context("ibsim net file"));
  // The copy keeps the simulator independent of later changes to the caller's file; `include` lines
  // still resolve against the working directory, as they would for ibsim itself.
  auto sim = start(*text, std::move(options));
  if (!sim) return std::unexpected(sim.error().context("while simulating " + netfile.string()));
  return sim;
}

SimulatedFabric::~SimulatedFabric() { stop(); }

std::expected<void, Error> SimulatedFabric::launch(const fs::path& netfile) {
  if (auto missing = simulator_missing(options_); !missing.empty()) {
    return fail(ErrorCode::kUnavailable, "cannot simulate a fabric: " + missing + " is not installed");
  }
  fs::path ibsim = options_.ibsim.empty() ? *find_executable("ibsim", kSbinDirs) : options_.ibsim;
  umad2sim_ = options_.umad2sim.empty() ? *find_umad2sim() : options_.umad2sim;
  socket_name_ = "hypertopo-" + unique_token();
  console_path_ = work_dir_ / "ibsim-console.txt";

  NetfileCapacity cap = measure_netfile(netfile);
  attach_node_ = options_.attach_node.empty() ? cap.first_ca : options_.attach_node;
  // ibsim's built-in limits are 2048 nodes, 256 switches and 13312 ports.
  auto at_least = [](std::size_t need, std::size_t floor) {
    return std::to_string(std::max(need + need / 8 + 16, floor));
  };

  ChildSpec spec;
  spec.argv = {"timeout",
               "--kill-after=5",
               std::to_string(options_.max_lifetime.count()),
               ibsim.string(),
               "-s",
               "-N",
               at_least(cap.nodes, 2048),
               "-S",
               at_least(cap.switches, 256),
               "-P",
               at_least(cap.ports, 13312),
               netfile.string()};
  spec.env = environment_with({{"IBSIM_SOCKNAME", socket_name_}, {"LD_PRELOAD", ""}});
  spec.stdout_path = console_path_;
  spec.stderr_path = work_dir_ / "ibsim-stderr.txt";
  spec.stdin_pipe = true;
  auto child = ChildProcess::spawn(spec);
  if (!child) return std::unexpected(child.error().context("while starting ibsim"));
  simulator_ = std::move(*child);

  // The console answers only once the net file is parsed and the sockets are bound.
  auto marker = "#hypertopo-ready-" + std::to_string(++sequence_);
  if (!simulator_->write_stdin(marker + "\n")) {
    auto why = file_tail(console_path_) + "\n" + file_tail(spec.stderr_path);
    stop();
    return fail(ErrorCode::kUnavailable, "ibsim exited while starting on " + netfile.string() + ":\n" + why);
  }
  auto answered = await_marker(marker, options_.start_timeout);
  if (!answered) {
    auto why = file_tail(console_path_) + "\n" + file_tail(spec.stderr_path);
    stop();
    return fail(ErrorCode::kUnavailable, "ibsim did not become ready on " + netfile.string() + " (" +
                                             answered.error().message() + "):\n" + why);
  }
  auto deadline = std::chrono::steady_clock::now() + options_.start_timeout;
  while (!abstract_socket_listed(socket_name_)) {
    if (std::chrono::steady_clock::now() >= deadline || !running()) {
      stop();
      return fail(ErrorCode::kUnavailable,
                  "ibsim answered but its socket @" + socket_name_ + ":ctl never appeared");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return {};
}

std::expected<std::string, Error> SimulatedFabric::await_marker(const std::string& marker,
                                                                std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  auto step = std::chrono::microseconds(200);
  for (;;) {
    std::string fresh = read_from(console_path_, console_read_);
    if (auto pos = fresh.find(marker); pos != std::string::npos) {
      console_read_ += pos + marker.size();
      return fresh.substr(0, pos);
    }
    if (!running()) return fail(ErrorCode::kUnavailable, "ibsim has exited");
    if (std::chrono::steady_clock::now() >= deadline) {
      return fail(ErrorCode::kUnavailable, "no answer within " + std::to_string(limit.count()) + " ms");
    }
    std::this_thread::sleep_for(step);
    step = std::min<std::chrono::microseconds>(step * 2, std::chrono::milliseconds(10));
  }
}

std::expected<std::string, Error> SimulatedFabric::command(std::string_view line) {
  if (line.find('\n') != std::string_view::npos) {
    return fail(ErrorCode::kInvalidArgument, "an ibsim console command is one line");
  }
  if (!running()) return fail(ErrorCode::kUnavailable, "ibsim is not running");
  auto marker = "#hypertopo-done-" + std::to_string(++sequence_);
  if (!simulator_->write_stdin(std::string(line) + "\n" + marker + "\n")) {
    return fail(ErrorCode::kUnavailable, "ibsim's console is closed");
  }
  auto output = await_marker(marker, options_.command_timeout);
  if (!output) return std::unexpected(output.error().context("ibsim command '" + std::string(line) + "'"));
  std::string text = strip_prompts(*output);
  std::istringstream lines(text);
  std::string l;
  while (std::getline(lines, l)) {
    if (l.starts_with("# ") || l.find("unknown - skipped") != std::string::npos || l.starts_with("bad ")) {
      return fail(ErrorCode::kInvalidArgument, "ibsim refused '" + std::string(line) + "': " + l);
    }
  }
  return text;
}

std::expected<void, Error> SimulatedFabric::unlink(std::string_view node_id, int port) {
  auto done = command("Unlink \"" + std::string(node_id) + "\"[" + std::to_string(port) + "]");
  if (!done) return std::unexpected(done.error());
  return {};
}

std::expected<void, Error> SimulatedFabric::link(std::string_view node_a, int port_a, std::string_view node_b,
                                                 int port_b) {
  auto done = command("Link \"" + std::string(node_a) + "\"[" + std::to_string(port_a) + "] \"" +
                      std::string(node_b) + "\"[" + std::to_string(port_b) + "]");
  if (!done) return std::unexpected(done.error());
  return {};
}

std::map<std::string, std::string> SimulatedFabric::client_environment() const {
  std::map<std::string, std::string> env;
  env["LD_PRELOAD"] = umad2sim_.string();
  env["IBSIM_SOCKNAME"] = socket_name_;
  env["SIM_HOST"] = attach_node_;
  // A sanitised client refuses to start with a library preloaded ahead of its runtime, and umad2sim's
  // read() copies a full MAD out of a shorter buffer, which ASan's memcpy check would abort on.
  std::string asan = std::getenv("ASAN_OPTIONS") ? std::getenv("ASAN_OPTIONS") : "";
  env["ASAN_OPTIONS"] = asan + (asan.empty() ? "" : ":") + "verify_asan_link_order=0:replace_intrin=0";
  return env;
}

fs::path SimulatedFabric::next_path(const std::string& stem, const std::string& ext) {
  return work_dir_ / (stem + "-" + std::to_string(++sequence_) + ext);
}

std::expected<SimulatedFabric::ClientRun, Error> SimulatedFabric::run_client(
    const std::vector<std::string>& argv, std::chrono::milliseconds limit) {
  if (argv.empty()) return fail(ErrorCode::kInvalidArgument, "no client command");
  if (!running()) return fail(ErrorCode::kUnavailable, "ibsim is not running");
  ClientRun run;
  run.stdout_path = next_path("client", ".out");
  run.stderr_path = run.stdout_path;
  run.stderr_path.replace_extension(".err");
  auto seconds = std::max<long long>(1, std::chrono::duration_cast<std::chrono::seconds>(limit).count());
  ChildSpec spec;
  // A client with no simulator answering waits forever; `timeout` bounds it even if we die.
  spec.argv = {"timeout", "--kill-after=2", std::to_string(seconds)};
  spec.argv.insert(spec.argv.end(), argv.begin(), argv.end());
  spec.env = environment_with(client_environment());
  spec.stdout_path = run.stdout_path;
  spec.stderr_path = run.stderr_path;
  auto result = run_child(spec, limit + std::chrono::seconds(5));
  if (!result)
    return std::unexpected(result.error().context("while running " + argv.front() + " under umad2sim"));
  run.exit_code = result->exit_code;
  run.timed_out = result->timed_out || result->exit_code == 124 || result->exit_code == 137;
  return run;
}

std::expected<topology::FabricGraph, Error> SimulatedFabric::walk(const std::vector<std::string>& walker,
                                                                  const WalkOptions& options,
                                                                  std::chrono::milliseconds limit) {
  if (walker.empty()) return fail(ErrorCode::kInvalidArgument, "no walker command");
  auto handover = next_path("walk", ".graph");
  auto cache = handover;
  cache.replace_extension(".ibnd");
  std::vector<std::string> argv = walker;
  argv.insert(argv.end(), {"--graph", handover.string()});
  if (options_.record_walks) argv.insert(argv.end(), {"--cache", cache.string()});
  if (!options.ca_name.empty()) argv.insert(argv.end(), {"--ca", options.ca_name});
  if (options.ca_port > 0) argv.insert(argv.end(), {"--port", std::to_string(options.ca_port)});
  if (options.timeout_ms > 0) argv.insert(argv.end(), {"--timeout-ms", std::to_string(options.timeout_ms)});
  if (options.retries > 0) argv.insert(argv.end(), {"--retries", std::to_string(options.retries)});
  if (options.max_hops > 0) argv.insert(argv.end(), {"--max-hops", std::to_string(options.max_hops)});
  if (options.max_smps > 0) argv.insert(argv.end(), {"--max-smps", std::to_string(options.max_smps)});
  auto run = run_client(argv, limit);
  if (!run) return std::unexpected(run.error());
  if (run->exit_code != 0) {
    return fail(run->timed_out ? ErrorCode::kUnavailable : ErrorCode::kInternal,
                "the walker '" + walker.front() + "' " +
                    (run->timed_out ? "timed out" : "exited with " + std::to_string(run->exit_code)) + ": " +
                    file_tail(run->stderr_path));
  }
  auto graph = read_graph_handover(handover);
  if (!graph) return std::unexpected(graph.error().context("while reading the walker's graph"));
  std::error_code ec;
  std::filesystem::remove(handover, ec);
  last_cache_ = options_.record_walks ? cache : fs::path();
  return graph;
}

std::expected<std::string, Error> SimulatedFabric::capture_ibnetdiscover(
    const std::vector<std::string>& extra_args, std::chrono::milliseconds limit) {
  auto tool = find_executable("ibnetdiscover", kSbinDirs);
  if (!tool) return fail(ErrorCode::kUnavailable, "ibnetdiscover (infiniband-diags) is not installed");
  std::vector<std::string> argv = {tool->string()};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  auto run = run_client(argv, limit);
  if (!run) return std::unexpected(run.error());
  if (run->exit_code != 0) {
    return fail(ErrorCode::kUnavailable, "ibnetdiscover exited with " + std::to_string(run->exit_code) +
                                             ": " + file_tail(run->stderr_path));
  }
  return read_from(run->stdout_path, 0);
}

void SimulatedFabric::stop() {
  if (simulator_) {
    simulator_->stop();
    simulator_.reset();
  }
  if (owns_work_dir_ && !work_dir_.empty()) {
    std::error_code ec;
    fs::remove_all(work_dir_, ec);
    owns_work_dir_ = false;
  }
}

bool SimulatedFabric::running() { return simulator_ && !simulator_->poll(); }

std::expected<SimulatedWalk, Error> walk_simulated_graph(const topology::FabricGraph& graph,
                                                         const std::vector<std::string>& walker,
                                                         const SimulatorOptions& simulator,
                                                         const IbsimNetfileOptions& netfile,
                                                         const WalkOptions& walk) {
  std::ostringstream text;
  auto summary = write_ibsim_netfile(graph, text, netfile);
  if (!summary) return std::unexpected(summary.error());
  auto options = simulator;
  if (options.attach_node.empty()) options.attach_node = summary->first_ca;
  auto sim = SimulatedFabric::start(text.str(), options);
  if (!sim) return std::unexpected(sim.error());
  auto walked = (*sim)->walk(walker, walk);
  if (!walked) return std::unexpected(walked.error().context("while walking the simulated fabric"));
  return SimulatedWalk{std::move(*walked), std::move(*summary)};
}

}  // namespace hypertopo::discoverers::ib_fabric
