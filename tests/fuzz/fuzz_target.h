// tests/fuzz/fuzz_target.h: one source file per fuzz target, built two ways.
//
// A target is a function from bytes to "handled without crashing": it hands the input to a parser
// and checks what must hold for any input (an error or a value, never an abort, a sanitizer report
// or an uncaught exception). ht_fuzz() in cmake/HypertopoHelpers.cmake compiles the same file
//   - into a libFuzzer executable <name>_fuzz (HYPERTOPO_FUZZ=ON, scripts/fuzz.sh), and
//   - into the ASan/UBSan test build as the GoogleTest FuzzCorpus.<name>, which replays the
//     target's corpus: its small in-repo files (tests/fuzz/corpus/<name>: crash reproducers and
//     hand-made inputs) and the real samples in ../shared/fixtures, read where they lie.
//
//   HT_FUZZ_TARGET(quantity) {
//     (void)scheduler::parse_quantity("memory", input);   // input: std::string_view
//   }
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace hypertopo::fuzzing {

// A file holding `bytes`, for parsers that read a path: one private directory (mkdtemp, 0700) per
// process, one file name per `stem`, rewritten on every call (O_NOFOLLOW). Never in the project.
std::filesystem::path scratch_file(const std::string& stem, std::string_view bytes);

using TargetFunction = void (*)(std::string_view input);

// Replays every corpus file of `corpus` (entries separated by '|': "fixtures/<dir or file>" under
// the shared fixtures, anything else under the source tree) through `target`. Test builds only.
void replay_corpus(const char* name, const char* corpus, TargetFunction target);

}  // namespace hypertopo::fuzzing

#ifdef HT_LIBFUZZER
#define HT_FUZZ_ENTRY(name)                                                             \
  extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {   \
    ht_fuzz_target_##name(std::string_view(reinterpret_cast<const char*>(data), size)); \
    return 0;                                                                           \
  }
#else
#include <gtest/gtest.h>
#define HT_FUZZ_ENTRY(name)                                                             \
  TEST(FuzzCorpus, name) {                                                              \
    ::hypertopo::fuzzing::replay_corpus(#name, HT_FUZZ_CORPUS, &ht_fuzz_target_##name); \
  }
#endif

#define HT_FUZZ_TARGET(name)                                 \
  static void ht_fuzz_target_##name(std::string_view input); \
  HT_FUZZ_ENTRY(name)                                        \
  static void ht_fuzz_target_##name([[maybe_unused]] std::string_view input)
