// Coverage feedback for libFuzzer from a GCC build.
//
// libFuzzer (Debian's libfuzzer-14-dev) learns from inline 8-bit counters that clang's
// -fsanitize=fuzzer inserts. This project needs a compiler with C++23's std::expected, which
// clang 14 cannot compile from libstdc++ 12 (constrained destructors, P0848, came in clang 16), so
// fuzz builds use GCC: -fsanitize-coverage=trace-pc calls a hook at every basic block, and this
// file turns each call into a counter (the block's address, hashed into 64K buckets) that it hands
// to libFuzzer as one module of 8-bit counters. trace-cmp hooks go to libFuzzer directly. The
// link wraps the hook (-Wl,--wrap=__sanitizer_cov_trace_pc): libFuzzer's own definition only says
// that trace-pc is unsupported.
#include <cstddef>
#include <cstdint>

extern "C" void __sanitizer_cov_8bit_counters_init(std::uint8_t* start, std::uint8_t* stop);

namespace {

std::uint8_t counters[1 << 16];

__attribute__((constructor)) void register_counters() {
  __sanitizer_cov_8bit_counters_init(counters, counters + sizeof counters);
}

}  // namespace

extern "C" __attribute__((no_sanitize_coverage)) void __wrap___sanitizer_cov_trace_pc() {
  const auto pc = reinterpret_cast<std::uintptr_t>(__builtin_return_address(0));
  ++counters[(pc ^ (pc >> 16)) & 0xffff];
}

// GCC's trace-cmp also reports floating-point comparisons, which libFuzzer has no hooks for.
extern "C" __attribute__((no_sanitize_coverage)) void __sanitizer_cov_trace_cmpf(float, float) {}
extern "C" __attribute__((no_sanitize_coverage)) void __sanitizer_cov_trace_cmpd(double, double) {}
