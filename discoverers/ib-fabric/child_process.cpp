#include "discoverers/ib-fabric/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

extern char** environ;

namespace hypertopo::discoverers::ib_fabric {
namespace {

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// Only async-signal-safe calls between fork and exec: report failures through a pipe as errno.
[[noreturn]] void exec_child(char* const* argv, char* const* envp, int stdin_fd, int out_fd, int err_fd,
                             int report_fd) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  dup2(stdin_fd, STDIN_FILENO);
  dup2(out_fd, STDOUT_FILENO);
  dup2(err_fd, STDERR_FILENO);
  execvpe(argv[0], argv, envp);
  int err = errno;
  ssize_t ignored = write(report_fd, &err, sizeof err);
  (void)ignored;
  _exit(127);
}

int open_output(const std::filesystem::path& path) {
  if (path.empty()) return open("/dev/null", O_WRONLY | O_CLOEXEC);
  return open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
}

}  // namespace

std::vector<std::string> environment_with(const std::map<std::string, std::string>& overrides) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    auto key = entry.substr(0, entry.find('='));
    if (!overrides.contains(std::string(key))) env.emplace_back(entry);
  }
  for (const auto& [key, value] : overrides) {
    if (!value.empty()) env.push_back(key + "=" + value);
  }
  return env;
}

std::expected<std::unique_ptr<ChildProcess>, Error> ChildProcess::spawn(const ChildSpec& spec) {
  if (spec.argv.empty()) return fail(ErrorCode::kInvalidArgument, "no command to run");
  const std::string& what = spec.argv.front();
  std::vector<char*> argv;
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const auto& e : spec.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  int in_pipe[2] = {-1, -1};
  int stdin_child = -1;
  if (spec.stdin_pipe) {
    if (pipe2(in_pipe, O_CLOEXEC) != 0)
      return fail(ErrorCode::kInternal, "pipe2 failed: " + std::string(std::strerror(errno)));
    stdin_child = in_pipe[0];
  } else {
    stdin_child = open("/dev/null", O_RDONLY | O_CLOEXEC);
  }
  int out_fd = open_output(spec.stdout_path);
  int err_fd = open_output(spec.stderr_path);
  int report[2] = {-1, -1};
  bool fds_ok = stdin_child >= 0 && out_fd >= 0 && err_fd >= 0 && pipe2(report, O_CLOEXEC) == 0;
  auto close_all = [&] {
    for (int fd : {in_pipe[0], in_pipe[1], stdin_child == in_pipe[0] ? -1 : stdin_child, out_fd, err_fd,
                   report[0], report[1]}) {
      if (fd >= 0) close(fd);
    }
  };
  if (!fds_ok) {
    int err = errno;
    close_all();
    return fail(ErrorCode::kInternal, "cannot set up the files for '" + what + "': " + std::strerror(err));
  }

  pid_t pid = fork();
  if (pid < 0) {
    int err = errno;
    close_all();
    return fail(ErrorCode::kUnavailable, "fork for '" + what + "' failed: " + std::strerror(err));
  }
  if (pid == 0) exec_child(argv.data(), envp.data(), stdin_child, out_fd, err_fd, report[1]);

  // Parent: the exec report pipe reads EOF once exec succeeded (its end was close-on-exec).
  close(report[1]);
  report[1] = -1;
  int child_errno = 0;
  ssize_t n;
  do {
    n = read(report[0], &child_errno, sizeof child_errno);
  } while (n < 0 && errno == EINTR);
  int keep_stdin = spec.stdin_pipe ? in_pipe[1] : -1;
  if (spec.stdin_pipe) in_pipe[1] = -1;
  close_all();
  std::unique_ptr<ChildProcess> child(new ChildProcess(pid, keep_stdin));
  if (n == static_cast<ssize_t>(sizeof child_errno)) {
    child->stop(std::chrono::milliseconds(0));
    return fail(ErrorCode::kNotFound, "cannot run '" + what + "': " + std::strerror(child_errno));
  }
  return child;
}

ChildProcess::~ChildProcess() { stop(); }

void ChildProcess::close_stdin() {
  if (stdin_fd_ >= 0) close(stdin_fd_);
  stdin_fd_ = -1;
}

bool ChildProcess::write_stdin(std::string_view text) {
  if (stdin_fd_ < 0 || poll()) return false;
  while (!text.empty()) {
    // MSG_NOSIGNAL does not apply to pipes; a dead reader gives EPIPE because SIGPIPE is ignored below.
    struct sigaction ignore {
    }, old{};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ignore, &old);
    ssize_t n = write(stdin_fd_, text.data(), text.size());
    sigaction(SIGPIPE, &old, nullptr);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

std::optional<int> ChildProcess::poll() {
  if (exit_code_) return exit_code_;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    exit_code_ = exit_code_of(status);
    close_stdin();
  } else if (r < 0 && errno == ECHILD) {
    exit_code_ = -1;
  }
  return exit_code_;
}

std::optional<int> ChildProcess::wait_for(std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  auto step = std::chrono::microseconds(200);
  while (!poll()) {
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(step);
    step = std::min<std::chrono::microseconds>(step * 2, std::chrono::milliseconds(10));
  }
  return exit_code_;
}

int ChildProcess::stop(std::chrono::milliseconds grace) {
  if (poll()) return *exit_code_;
  close_stdin();
  kill(-pid_, SIGTERM);
  kill(pid_, SIGTERM);
  if (!wait_for(grace)) {
    kill(-pid_, SIGKILL);
    kill(pid_, SIGKILL);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    exit_code_ = exit_code_of(status);
  }
  // Anything left in the group (a child of `timeout`) goes too.
  kill(-pid_, SIGKILL);
  return *exit_code_;
}

std::expected<ChildResult, Error> run_child(const ChildSpec& spec, std::chrono::milliseconds limit) {
  auto child = ChildProcess::spawn(spec);
  if (!child) return std::unexpected(child.error());
  ChildResult result;
  if (auto code = (*child)->wait_for(limit)) {
    result.exit_code = *code;
  } else {
    result.timed_out = true;
    result.exit_code = (*child)->stop();
  }
  return result;
}

std::string file_tail(const std::filesystem::path& path, std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  auto size = static_cast<std::size_t>(in.tellg());
  std::size_t start = size > max_bytes ? size - max_bytes : 0;
  in.seekg(static_cast<std::streamoff>(start));
  std::string text(size - start, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

std::optional<std::filesystem::path> find_executable(std::string_view name,
                                                     const std::vector<std::filesystem::path>& extra_dirs) {
  std::vector<std::filesystem::path> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::string_view rest(path);
    while (!rest.empty()) {
      auto colon = rest.find(':');
      auto dir = rest.substr(0, colon);
      if (!dir.empty()) dirs.emplace_back(dir);
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  dirs.insert(dirs.end(), extra_dirs.begin(), extra_dirs.end());
  for (const auto& dir : dirs) {
    auto candidate = dir / name;
    if (access(candidate.c_str(), X_OK) == 0 && std::filesystem::is_regular_file(candidate)) return candidate;
  }
  return std::nullopt;
}

}  // namespace hypertopo::discoverers::ib_fabric
