// discoverers/ib-fabric/child_process.h: starting, feeding and always stopping helper processes.
//
// The simulator and the preloaded walker are separate processes (umad2sim must be preloaded when a
// process starts). A ChildProcess runs in its own process group, dies with its parent
// (PR_SET_PDEATHSIG) and is stopped by its destructor: SIGTERM to the group, then SIGKILL after a
// grace period. Output goes to files so a chatty child can never block on a full pipe.
//
//   ChildSpec spec{.argv = {"timeout", "60", "ibsim", "-s", "fabric.net"},
//                  .env = environment_with({{"IBSIM_SOCKNAME", "ht-1"}}),
//                  .stdout_path = dir / "ibsim.out", .stdin_pipe = true};
//   auto child = ChildProcess::spawn(spec);
//   (*child)->write_stdin("Unlink \"S-0000000000000001\"[1]\n");
//   auto done = run_child(spec, std::chrono::seconds(30));   // spawn + wait, with a deadline
#pragma once

#include <sys/types.h>

#include <chrono>
#include <expected>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "errors/error.h"

namespace hypertopo::discoverers::ib_fabric {

struct ChildSpec {
  std::vector<std::string> argv;      // argv[0] is looked up on PATH
  std::vector<std::string> env;       // the complete environment, "KEY=VALUE"
  std::filesystem::path stdout_path;  // empty: /dev/null
  std::filesystem::path stderr_path;  // empty: /dev/null
  bool stdin_pipe = false;            // otherwise stdin is /dev/null
};

// This process's environment with `overrides` set (an empty value removes the key).
std::vector<std::string> environment_with(const std::map<std::string, std::string>& overrides);

class ChildProcess {
 public:
  static std::expected<std::unique_ptr<ChildProcess>, Error> spawn(const ChildSpec& spec);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // False when the child is gone or has no stdin pipe.
  bool write_stdin(std::string_view text);
  // The exit code once the child has ended (128 + signal when killed), nullopt while it runs.
  std::optional<int> poll();
  // Waits up to `limit`; nullopt when it is still running then.
  std::optional<int> wait_for(std::chrono::milliseconds limit);
  // SIGTERM to the process group, SIGKILL after `grace`; returns the exit code.
  int stop(std::chrono::milliseconds grace = std::chrono::milliseconds(2000));

 private:
  explicit ChildProcess(pid_t pid, int stdin_fd) : pid_(pid), stdin_fd_(stdin_fd) {}
  void close_stdin();
  pid_t pid_;
  int stdin_fd_;
  std::optional<int> exit_code_;
};

struct ChildResult {
  int exit_code = 0;
  bool timed_out = false;
};

// Spawns, waits up to `limit`, and stops the child when it overruns.
std::expected<ChildResult, Error> run_child(const ChildSpec& spec, std::chrono::milliseconds limit);

// The last `max_bytes` of a file, for error messages ("" when unreadable).
std::string file_tail(const std::filesystem::path& path, std::size_t max_bytes = 2000);

// First executable named `name` on PATH or in `extra_dirs`.
std::optional<std::filesystem::path> find_executable(
    std::string_view name, const std::vector<std::filesystem::path>& extra_dirs = {});

}  // namespace hypertopo::discoverers::ib_fabric
