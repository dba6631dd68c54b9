// discoverers/ib-fabric/simulated_fabric.h: a live InfiniBand subnet simulated by ibsim, for tests,
// benchmarks and the built-in demo.
//
// SimulatedFabric starts `ibsim` (under `timeout`, with its own IBSIM_SOCKNAME in its own scratch
// directory) on a net file, waits (bounded) until it serves clients, takes console commands
// (Unlink/Link/Clear...) and always stops the simulator: in its destructor, on every failure path,
// and through PR_SET_PDEATHSIG when the owning process dies. Clients need the umad2sim preload from
// the moment they start, so every walk runs in a child process: a walker command (the hidden
// `hypertopo ib-walk`, or the small `hypertopo-ib-walk` executable) records an ibnd cache that this
// process then loads. Stock `ibnetdiscover` runs the same way for comparison.
//
//   auto sim = SimulatedFabric::start(netfile_text);           // std::expected<unique_ptr<...>, Error>
//   if (!sim) return std::unexpected(sim.error());
//   auto graph = (*sim)->walk({"/usr/bin/hypertopo", "ib-walk"});
//   (*sim)->unlink("S-2c5eab0300b87b40", 1);                   // cable pulled
//   auto text = (*sim)->capture_ibnetdiscover();               // stock tool's topology text
#pragma once

#include <chrono>
#include <expected>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "discoverers/ib-fabric/child_process.h"
#include "discoverers/ib-fabric/fabric_walk.h"
#include "discoverers/ib-fabric/ibsim_netfile.h"
#include "errors/error.h"
#include "topology/fabric_graph.h"

namespace hypertopo::discoverers::ib_fabric {

struct SimulatorOptions {
  std::filesystem::path ibsim;     // empty: `ibsim` on PATH
  std::filesystem::path umad2sim;  // empty: the Debian/rdma-core install locations
  std::filesystem::path work_dir;  // empty: a fresh directory under the system temp dir, removed at stop
  std::chrono::milliseconds start_timeout{20000};
  std::chrono::milliseconds command_timeout{10000};
  std::chrono::seconds max_lifetime{900};  // `timeout` ends a forgotten simulator after this
  // SIM_HOST for clients: the ibsim node id they attach at. Empty: the first CA in the net file.
  std::string attach_node;
  // Record every walk as an ibnd cache in work_dir() (last_cache() names it) for replay.
  bool record_walks = true;
};

// Whether ibsim and the umad2sim preload are installed ("" when they are; otherwise what is missing).
std::string simulator_missing(const SimulatorOptions& options = {});

// The umad2sim preload library, if installed.
std::optional<std::filesystem::path> find_umad2sim();

// `/proc/self/exe ib-walk`: the walker command when the caller is the hypertopo binary itself.
std::vector<std::string> hypertopo_walker_command();

class SimulatedFabric {
 public:
  static std::expected<std::unique_ptr<SimulatedFabric>, Error> start(std::string_view netfile_text,
                                                                      SimulatorOptions options = {});
  static std::expected<std::unique_ptr<SimulatedFabric>, Error> start_file(
      const std::filesystem::path& netfile, SimulatorOptions options = {});
  ~SimulatedFabric();
  SimulatedFabric(const SimulatedFabric&) = delete;
  SimulatedFabric& operator=(const SimulatedFabric&) = delete;

  // One console line (e.g. `Unlink "S-..."[3]`); returns what ibsim printed for it. Fails when ibsim
  // reports a problem ("# nodeid ... not found", "# can't link ...") or does not answer in time.
  std::expected<std::string, Error> command(std::string_view line);
  std::expected<void, Error> unlink(std::string_view node_id, int port);
  std::expected<void, Error> link(std::string_view node_a, int port_a, std::string_view node_b, int port_b);

  // The environment a client needs: LD_PRELOAD, IBSIM_SOCKNAME, SIM_HOST, and ASAN_OPTIONS that let
  // a sanitised client start with the preload first.
  std::map<std::string, std::string> client_environment() const;

  // Runs `argv` as a client of this simulator; stdout and stderr land in files in work_dir().
  struct ClientRun {
    int exit_code = 0;
    bool timed_out = false;
    std::filesystem::path stdout_path;
    std::filesystem::path stderr_path;
  };
  std::expected<ClientRun, Error> run_client(const std::vector<std::string>& argv,
                                             std::chrono::milliseconds limit = std::chrono::seconds(120));

  // Walks the simulated subnet with `walker` (a command that takes the flags of `hypertopo ib-walk`,
  // walk_recorder.h): the child hands the graph over in a file, and records an ibnd cache in
  // work_dir() when SimulatorOptions::record_walks is set.
  std::expected<topology::FabricGraph, Error> walk(
      const std::vector<std::string>& walker, const WalkOptions& options = {},
      std::chrono::milliseconds limit = std::chrono::seconds(120));
  void set_record_walks(bool record) { options_.record_walks = record; }
  // The cache the last successful walk() recorded (empty when walks are not recorded).
  const std::filesystem::path& last_cache() const { return last_cache_; }

  // Stock `ibnetdiscover` (plus `extra_args`) against the simulator; returns its stdout.
  std::expected<std::string, Error> capture_ibnetdiscover(
      const std::vector<std::string>& extra_args = {},
      std::chrono::milliseconds limit = std::chrono::seconds(120));

  // Stops the simulator now (idempotent); the destructor calls it.
  void stop();
  bool running();

  const std::string& socket_name() const { return socket_name_; }
  const std::filesystem::path& work_dir() const { return work_dir_; }
  const std::string& attach_node() const { return attach_node_; }

 private:
  SimulatedFabric() = default;
  std::expected<void, Error> launch(const std::filesystem::path& netfile);
  std::expected<std::string, Error> await_marker(const std::string& marker, std::chrono::milliseconds limit);
  std::filesystem::path next_path(const std::string& stem, const std::string& ext);

  SimulatorOptions options_;
  std::filesystem::path work_dir_;
  bool owns_work_dir_ = false;
  std::filesystem::path umad2sim_;
  std::string socket_name_;
  std::string attach_node_;
  std::filesystem::path console_path_;
  std::size_t console_read_ = 0;
  std::unique_ptr<ChildProcess> simulator_;
  unsigned sequence_ = 0;
  std::filesystem::path last_cache_;
};

// Netfile -> simulator -> walk in one call (what the demo does): simulates `graph`, walks it with
// `walker` and returns the walked graph; notes say what the simulation could not reproduce.
struct SimulatedWalk {
  topology::FabricGraph graph;
  IbsimNetfileSummary netfile;
};
std::expected<SimulatedWalk, Error> walk_simulated_graph(const topology::FabricGraph& graph,
                                                         const std::vector<std::string>& walker,
                                                         const SimulatorOptions& simulator = {},
                                                         const IbsimNetfileOptions& netfile = {},
                                                         const WalkOptions& walk = {});

}  // namespace hypertopo::discoverers::ib_fabric
