// tests/net/descriptor_limit_server.cpp: net::HttpServer in a process that has almost no descriptor
// left, for HttpServer.OutOfDescriptors... in http_server_test.cpp.
//
// Test code only. Lowers its soft RLIMIT_NOFILE so that `free` descriptor numbers stay usable below
// it (a new descriptor takes the lowest free number; those above the limit stay open), serves
// GET /echo on 127.0.0.1 with a port of its own, prints the port on a line of stdout and serves until
// stdin closes; then prints "accept_errors <n> evicted <m>", raises the limit again (the leak check
// at exit reads /proc) and exits 0.
//
// It links the server library every other user links. In a sanitizer build, UBSan's vptr check
// looks up a dynamic type by testing memory through a pipe (sanitizer_common's
// IsAccessibleMemoryRange), which cannot be made in the one situation under test, so it would
// report a false error on the accept error; descriptor_limit_server.supp suppresses that check, for
// this process only, where those calls sit (Boost's headers, the server's source). Every other check
// stays on.
//
//   descriptor_limit_server 24     # prints "40123\n", serves until stdin is closed
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "net/http_server.h"

#ifdef HT_UBSAN_SUPPRESSIONS
// UBSan's options before $UBSAN_OPTIONS, which may add to them.
extern "C" const char* __ubsan_default_options() { return "suppressions=" HT_UBSAN_SUPPRESSIONS; }
#endif

int main(int argc, char** argv) {
  using namespace std::chrono_literals;
  const int free_slots = argc > 1 ? std::atoi(argv[1]) : 24;
  std::vector<int> open_fds;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd"))
    open_fds.push_back(std::atoi(entry.path().filename().c_str()));
  rlimit before{};
  if (::getrlimit(RLIMIT_NOFILE, &before) != 0) return 3;
  rlim_t limit = 0;
  for (int seen = 0; seen < free_slots; ++limit) {
    if (std::find(open_fds.begin(), open_fds.end(), static_cast<int>(limit)) == open_fds.end()) ++seen;
  }
  rlimit lowered{limit, before.rlim_max};
  if (::setrlimit(RLIMIT_NOFILE, &lowered) != 0) return 3;
  hypertopo::net::HttpServer server({.address = "127.0.0.1", .port = 0, .limits = {.read_timeout = 10min}});
  server.handle("GET", "/echo", [](const hypertopo::net::HttpServerRequest&) {
    return hypertopo::net::HttpServerResponse{.body = "ok\n"};
  });
  if (!server.start()) return 4;
  std::printf("%u\n", static_cast<unsigned>(server.port()));
  std::fflush(stdout);
  char byte;
  while (::read(STDIN_FILENO, &byte, 1) > 0) {
  }
  const auto stats = server.stats();
  std::printf("accept_errors %llu evicted %llu\n", static_cast<unsigned long long>(stats.accept_errors),
              static_cast<unsigned long long>(stats.connections_evicted));
  std::fflush(stdout);
  server.stop();
  ::setrlimit(RLIMIT_NOFILE, &before);
  return 0;
}
