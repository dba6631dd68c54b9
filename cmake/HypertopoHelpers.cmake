# Small helpers so that every folder's CMakeLists.txt is a few lines.
#
#   ht_library(NAME <name> SOURCES <files...> [DEPS <targets...>])
#   ht_test(NAME <name> SOURCES <files...> [DEPS <targets...>] [LABELS <labels...>])
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

function(ht_library)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS" ${ARGN})
  add_library(${ARG_NAME} STATIC ${ARG_SOURCES})
  target_include_directories(${ARG_NAME} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${ARG_NAME} PUBLIC ${ARG_DEPS})
  ht_apply_warnings(${ARG_NAME})
  if(HYPERTOPO_PCH)
    target_precompile_headers(${ARG_NAME} REUSE_FROM ht_lib_pch)
  endif()
endfunction()

function(ht_test)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} ht_test_support GTest::gtest GTest::gmock GTest::gtest_main)
  set_target_properties(${ARG_NAME} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  ht_apply_warnings(${ARG_NAME})
  if(HYPERTOPO_PCH)
    target_precompile_headers(${ARG_NAME} REUSE_FROM ht_test_pch)
  endif()
  gtest_discover_tests(${ARG_NAME}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    PROPERTIES LABELS "${ARG_LABELS}"
    DISCOVERY_TIMEOUT 60)
endfunction()

function(ht_benchmark)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} benchmark::benchmark)
  set_target_properties(${ARG_NAME} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
  set_property(GLOBAL APPEND PROPERTY HT_BENCHMARKS ${ARG_NAME})
  ht_apply_warnings(${ARG_NAME})
endfunction()
