# Small helpers so that every folder's CMakeLists.txt is a few lines.
#
#   ht_library(NAME <name> SOURCES <files...> [DEPS <targets...>])
#   ht_test([NAME <name>] SOURCES <files...> [DEPS <targets...>] [LABELS <labels...>] ...)
#   ht_test_labels(<labels...> FILES <files...>)
#   ht_benchmark(NAME <name> SOURCES <files...> [DEPS <targets...>])
#   ht_add_component_dirs()

# Adds every sub-folder of the current folder that has a CMakeLists.txt, in sorted order.
function(ht_add_component_dirs)
  file(GLOB _children LIST_DIRECTORIES true RELATIVE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/*)
  list(SORT _children)
  foreach(_child IN LISTS _children)
    if(IS_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/${_child} AND EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${_child}/CMakeLists.txt)
      add_subdirectory(${_child})
    endif()
  endforeach()
endfunction()

function(ht_apply_warnings target)
  # -Wmaybe-uninitialized: GCC 12 reports false positives inside libstdc++'s <regex> and <variant>
  # at -O1/-O2 with the sanitizers; they are in the standard library's code, not ours.
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                                           -Wno-missing-field-initializers -Wno-maybe-uninitialized)
  if(HYPERTOPO_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# Precompiled headers (HYPERTOPO_PCH): the standard library and nlohmann/json for libraries, plus
# GoogleTest for tests. Each is built once and reused by every library or test, so these headers are
# parsed twice per build instead of once per translation unit.
set(HT_LIB_PCH_HEADERS <algorithm> <chrono> <cstdint> <expected> <filesystem> <functional> <map>
    <memory> <optional> <set> <string> <string_view> <unordered_map> <utility> <vector>
    <nlohmann/json.hpp>)
function(ht_pch_targets)
  if(NOT HYPERTOPO_PCH)
    return()
  endif()
  set(_stub ${CMAKE_BINARY_DIR}/ht_pch_stub.cpp)
  file(WRITE ${_stub} "// The translation unit that builds a precompiled header.\n")
  add_library(ht_lib_pch STATIC ${_stub})
  target_link_libraries(ht_lib_pch PRIVATE nlohmann_json::nlohmann_json)
  ht_apply_warnings(ht_lib_pch)
  target_precompile_headers(ht_lib_pch PRIVATE ${HT_LIB_PCH_HEADERS})
  if(HYPERTOPO_BUILD_TESTS)
    add_library(ht_test_pch STATIC ${_stub})
    target_link_libraries(ht_test_pch PRIVATE nlohmann_json::nlohmann_json GTest::gtest GTest::gmock)
    ht_apply_warnings(ht_test_pch)
    target_precompile_headers(ht_test_pch PRIVATE ${HT_LIB_PCH_HEADERS} <gtest/gtest.h> <gmock/gmock.h>)
  endif()
endfunction()

# A component library:
#
#   ht_library(NAME <name> SOURCES <files...> [PUBLIC_DEPS <targets...>] [DEPS <targets...>])
#
# PUBLIC_DEPS are what the component's own headers include (its users need them too); DEPS are what
# only its .cpp files use, linked PRIVATE so they do not leak into every user's compile line.
function(ht_library)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS;PUBLIC_DEPS" ${ARGN})
  add_library(${ARG_NAME} STATIC ${ARG_SOURCES})
  target_include_directories(${ARG_NAME} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${ARG_NAME} PUBLIC ${ARG_PUBLIC_DEPS} PRIVATE ${ARG_DEPS})
  ht_apply_warnings(${ARG_NAME})
  if(HYPERTOPO_PCH)
    target_precompile_headers(${ARG_NAME} REUSE_FROM ht_lib_pch)
  endif()
endfunction()

# A folder's tests: tests/<folder>/<file>_test.cpp tests <folder>/<file>.cpp, and each folder of
# tests/ is one executable (one link, the slow step of the sanitizer build), named after the folder:
# tests/scheduler/placement gives scheduler_placement_test. ctest still runs each test in a process
# of its own.
#
#   ht_test([NAME <name>] SOURCES <files...> [DEPS <targets...>] [LABELS <labels...>]
#           [DEFINITIONS <definitions...>] [NEEDS <targets...>])
#
# LABELS go on every test of the executable; ht_test_labels() adds labels to the tests of some of its
# files only. DEFINITIONS are compile definitions; NEEDS are the targets the tests run (the hypertopo
# binary, the fake NVML libraries), built before the executable.
#
# A TEST_F suite whose fixture class builds what its cases share once (a SetUpTestSuite()) is the
# exception: it is one ctest test, named <Suite>.*, that runs all its cases in one process, so the
# shared part is built once instead of once per case.
function(ht_test)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS;LABELS;DEFINITIONS;NEEDS" ${ARGN})
  if(NOT ARG_NAME)
    file(RELATIVE_PATH _folder ${PROJECT_SOURCE_DIR}/tests ${CMAKE_CURRENT_SOURCE_DIR})
    string(REGEX REPLACE "[/-]" "_" _folder "${_folder}")
    set(ARG_NAME ${_folder}_test)
  endif()
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} ht_test_support GTest::gtest GTest::gmock GTest::gtest_main)
  set_target_properties(${ARG_NAME} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  if(ARG_DEFINITIONS)
    target_compile_definitions(${ARG_NAME} PRIVATE ${ARG_DEFINITIONS})
  endif()
  if(ARG_NEEDS)
    add_dependencies(${ARG_NAME} ${ARG_NEEDS})
  endif()
  ht_apply_warnings(${ARG_NAME})
  if(HYPERTOPO_PCH)
    target_precompile_headers(${ARG_NAME} REUSE_FROM ht_test_pch)
  endif()

  # Suites with a SetUpTestSuite() (see above): one test each, with the labels of their file.
  set(_whole_suites)
  foreach(_src IN LISTS ARG_SOURCES)
    get_filename_component(_path ${_src} ABSOLUTE)
    file(STRINGS ${_path} _lines REGEX "class [A-Za-z0-9_]+|SetUpTestSuite")
    set(_class "")
    set(_shared)
    foreach(_line IN LISTS _lines)
      if(_line MATCHES "class ([A-Za-z0-9_]+)")
        set(_class ${CMAKE_MATCH_1})
      endif()
      if(_line MATCHES "SetUpTestSuite" AND _class)
        list(APPEND _shared ${_class})
      endif()
    endforeach()
    if(NOT _shared)
      continue()
    endif()
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_path})
    list(REMOVE_DUPLICATES _shared)
    get_source_file_property(_extra ${_src} HT_TEST_LABELS)
    set(_labels ${ARG_LABELS})
    if(_extra)
      list(APPEND _labels ${_extra})
    endif()
    foreach(_suite IN LISTS _shared)
      file(STRINGS ${_path} _cases REGEX "^[ \t]*TEST_F\\([ \t]*${_suite}[ \t]*,")
      if(NOT _cases)
        continue()
      endif()
      add_test(NAME "${_suite}.*" COMMAND ${ARG_NAME} "--gtest_filter=${_suite}.*"
               WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
      if(_labels)
        set_tests_properties("${_suite}.*" PROPERTIES LABELS "${_labels}")
      endif()
      list(APPEND _whole_suites "${_suite}.*")
    endforeach()
  endforeach()
  list(JOIN _whole_suites ":" _whole_filter)

  # Files with labels of their own (ht_test_labels): their tests are found by suite name, one
  # discovery per label set, and the other files' tests by one more that leaves those suites out.
  set(_label_sets)
  set(_labelled_suites)
  set(_unlabelled_files FALSE)
  foreach(_src IN LISTS ARG_SOURCES)
    get_source_file_property(_extra ${_src} HT_TEST_LABELS)
    if(NOT _extra)
      set(_unlabelled_files TRUE)
      continue()
    endif()
    get_filename_component(_path ${_src} ABSOLUTE)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_path})
    file(STRINGS ${_path} _lines REGEX "^[ \t]*TEST(_F|_P)?\\([ \t]*[A-Za-z0-9_]+")
    string(MAKE_C_IDENTIFIER "${_extra}" _set)
    list(APPEND _label_sets ${_set})
    set(_labels_${_set} ${_extra})
    foreach(_line IN LISTS _lines)
      string(REGEX REPLACE "^[ \t]*TEST(_F|_P)?\\([ \t]*([A-Za-z0-9_]+).*" "\\2" _suite "${_line}")
      if(DEFINED _suite_set_${_suite} AND NOT _suite_set_${_suite} STREQUAL _set)
        message(FATAL_ERROR "${ARG_NAME}: test suite ${_suite} is in files with different labels")
      endif()
      set(_suite_set_${_suite} ${_set})
      list(APPEND _suites_${_set} "${_suite}.*" "*/${_suite}.*")
      list(APPEND _labelled_suites "${_suite}.*" "*/${_suite}.*")
    endforeach()
  endforeach()
  if(NOT _label_sets)
    set(_filter "")
    if(_whole_filter)
      set(_filter "-${_whole_filter}")
    endif()
    _ht_discover_tests(${ARG_NAME} ${ARG_NAME}_TESTS "${_filter}" "${ARG_LABELS}")
    return()
  endif()
  list(REMOVE_DUPLICATES _label_sets)
  foreach(_set IN LISTS _label_sets)
    list(REMOVE_DUPLICATES _suites_${_set})
    list(JOIN _suites_${_set} ":" _filter)
    if(_whole_filter)
      string(APPEND _filter "-${_whole_filter}")
    endif()
    set(_labels ${ARG_LABELS} ${_labels_${_set}})
    _ht_discover_tests(${ARG_NAME} ${ARG_NAME}_${_set}_TESTS "${_filter}" "${_labels}")
  endforeach()
  if(_unlabelled_files)
    list(REMOVE_DUPLICATES _labelled_suites)
    list(JOIN _labelled_suites ":" _filter)
    if(_whole_filter)
      string(APPEND _filter ":${_whole_filter}")
    endif()
    _ht_discover_tests(${ARG_NAME} ${ARG_NAME}_others_TESTS "-${_filter}" "${ARG_LABELS}")
  endif()
endfunction()

# One gtest_discover_tests() of `target` (its tests matching `filter`, all when empty), labelled
# `labels`. Not through its PROPERTIES: CMake 3.25 hands them to discovery on a command line that
# splits lists, so LABELS "nvlink;ib-local" arrives as LABELS nvlink and a stray ib-local. The
# discovered names land in `list_var` in the ctest file, and a ctest include file read after it
# labels them.
function(_ht_discover_tests target list_var filter labels)
  set(_args WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} DISCOVERY_TIMEOUT 60 TEST_LIST ${list_var})
  if(filter)
    list(APPEND _args TEST_FILTER "${filter}")
  endif()
  gtest_discover_tests(${target} ${_args})
  if(labels)
    set(_file ${CMAKE_CURRENT_BINARY_DIR}/${list_var}_labels.cmake)
    file(WRITE ${_file}
         "if(${list_var})\n  set_tests_properties(\${${list_var}} PROPERTIES LABELS \"${labels}\")\nendif()\n")
    set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${_file})
  endif()
endfunction()

# ht_test_labels(<labels...> FILES <files...>): ctest labels (`ctest -L`) for the tests of these files
# of the folder's executable, on top of the LABELS of its ht_test(); call it before ht_test().
function(ht_test_labels)
  cmake_parse_arguments(ARG "" "" "FILES" ${ARGN})
  set_source_files_properties(${ARG_FILES} PROPERTIES HT_TEST_LABELS "${ARG_UNPARSED_ARGUMENTS}")
endfunction()

function(ht_benchmark)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} benchmark::benchmark)
  set_target_properties(${ARG_NAME} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
  set_property(GLOBAL APPEND PROPERTY HT_BENCHMARKS ${ARG_NAME})
  ht_apply_warnings(${ARG_NAME})
endfunction()

# Fuzz targets (tests/fuzz/fuzz_target.h):
#
#   ht_fuzz(NAME <name> SOURCES <files...> [DEPS <targets...>] CORPUS <entries...>)
#
# CORPUS entries are folders or files: "fixtures/<path>" under the shared fixtures (read where they
# lie, at run time; never copied into the project), anything else relative to the source tree.
#   - HYPERTOPO_FUZZ=ON: the libFuzzer executable <name>_fuzz in <build>/fuzz, plus <name>.corpus
#     (one entry per line) that scripts/fuzz.sh seeds it from; the custom target fuzz_targets
#     builds them all.
#   - HYPERTOPO_BUILD_TESTS=ON: the GoogleTest FuzzCorpus.<name>, which replays the corpus under the
#     test build's sanitizers. Every target's test goes into one executable, fuzz_corpus_test, made
#     by ht_fuzz_corpus_test() after the last ht_fuzz() of the folder.
function(ht_fuzz)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS;CORPUS" ${ARGN})
  list(JOIN ARG_CORPUS "|" _corpus)
  if(HYPERTOPO_FUZZ)
    set(_exe ${ARG_NAME}_fuzz)
    add_executable(${_exe} ${ARG_SOURCES} ${PROJECT_SOURCE_DIR}/tests/fuzz/fuzz_scratch.cpp)
    target_include_directories(${_exe} PRIVATE ${PROJECT_SOURCE_DIR})
    target_compile_definitions(${_exe} PRIVATE HT_LIBFUZZER)
    target_link_libraries(${_exe} PRIVATE ${ARG_DEPS} ht_libfuzzer_driver)
    set_target_properties(${_exe} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/fuzz)
    ht_apply_warnings(${_exe})
    list(JOIN ARG_CORPUS "\n" _lines)
    file(WRITE ${CMAKE_BINARY_DIR}/fuzz/${ARG_NAME}.corpus "${_lines}\n")
    set_property(GLOBAL APPEND PROPERTY HT_FUZZ_EXECUTABLES ${_exe})
  endif()
  if(HYPERTOPO_BUILD_TESTS)
    foreach(_src IN LISTS ARG_SOURCES)
      set_source_files_properties(${_src} PROPERTIES COMPILE_DEFINITIONS "HT_FUZZ_CORPUS=\"${_corpus}\"")
      set_property(GLOBAL APPEND PROPERTY HT_FUZZ_REPLAY_SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/${_src})
    endforeach()
    set_property(GLOBAL APPEND PROPERTY HT_FUZZ_REPLAY_DEPS ${ARG_DEPS})
  endif()
endfunction()

# The replay test of every ht_fuzz() target so far (see above), and the fuzz_targets build target.
function(ht_fuzz_corpus_test)
  if(HYPERTOPO_FUZZ)
    get_property(_executables GLOBAL PROPERTY HT_FUZZ_EXECUTABLES)
    add_custom_target(fuzz_targets DEPENDS ${_executables})
  endif()
  if(HYPERTOPO_BUILD_TESTS)
    get_property(_sources GLOBAL PROPERTY HT_FUZZ_REPLAY_SOURCES)
    get_property(_deps GLOBAL PROPERTY HT_FUZZ_REPLAY_DEPS)
    list(REMOVE_DUPLICATES _deps)
    ht_test(NAME fuzz_corpus_test
            SOURCES ${_sources} ${PROJECT_SOURCE_DIR}/tests/fuzz/corpus_replay.cpp
                    ${PROJECT_SOURCE_DIR}/tests/fuzz/fuzz_scratch.cpp
            DEPS ${_deps} LABELS fuzz)
  endif()
endfunction()

# HYPERTOPO_FUZZ=ON: coverage instrumentation for every target of the build, and
# ht_libfuzzer_driver, the library each <name>_fuzz links for libFuzzer's main. Clang 16 or newer
# uses -fsanitize=fuzzer. GCC (the project's compiler: clang 14 cannot compile libstdc++ 12's
# std::expected) instruments with -fsanitize-coverage=trace-pc,trace-cmp and links Debian's
# libFuzzer (libfuzzer-14-dev) with tests/fuzz/libfuzzer_coverage_bridge.cpp.
macro(ht_fuzz_instrumentation)
  if(HYPERTOPO_FUZZ)
    add_library(ht_libfuzzer_driver INTERFACE)
    if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 16)
      add_compile_options(-fsanitize=fuzzer-no-link)
      target_link_options(ht_libfuzzer_driver INTERFACE -fsanitize=fuzzer)
    elseif(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      find_library(HT_LIBFUZZER_ARCHIVE NAMES libFuzzer.a Fuzzer
                   PATHS /usr/lib/llvm-14/lib /usr/lib/llvm-15/lib /usr/lib/llvm-16/lib NO_DEFAULT_PATH)
      if(NOT HT_LIBFUZZER_ARCHIVE)
        message(FATAL_ERROR "HYPERTOPO_FUZZ with GCC needs Debian's libfuzzer-14-dev (libFuzzer.a)")
      endif()
      add_compile_options(-fsanitize-coverage=trace-pc,trace-cmp)
      add_library(ht_libfuzzer_bridge OBJECT ${PROJECT_SOURCE_DIR}/tests/fuzz/libfuzzer_coverage_bridge.cpp)
      # The bridge's object itself (not an archive member the linker may skip) in every fuzz target.
      target_sources(ht_libfuzzer_driver INTERFACE $<TARGET_OBJECTS:ht_libfuzzer_bridge>)
      target_link_libraries(ht_libfuzzer_driver INTERFACE ${HT_LIBFUZZER_ARCHIVE})
      target_link_options(ht_libfuzzer_driver INTERFACE -Wl,--wrap=__sanitizer_cov_trace_pc)
    else()
      message(FATAL_ERROR "HYPERTOPO_FUZZ needs GCC, or clang 16 or newer (-fsanitize=fuzzer)")
    endif()
  endif()
endmacro()
