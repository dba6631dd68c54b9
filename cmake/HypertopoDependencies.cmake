# Every dependency comes from Debian's packages (scripts/setup.sh installs them).
find_package(PkgConfig REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(fmt REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(Threads REQUIRED)
find_package(OpenSSL REQUIRED)
find_package(Boost 1.74 REQUIRED)
# simdjson reads the large answers: UFM's ports and links, kube-scheduler's extender requests.
find_package(simdjson CONFIG REQUIRED)
# simdjson's classes change layout with the definitions its package sets (SIMDJSON_THREADS_ENABLED):
# a file that includes <simdjson.h> without them while another has them breaks the one-definition
# rule, and a parser made in one file crashes in the other's inline code (seen in a release build of
# a benchmark that included the header without linking the target). Every file gets them.
get_target_property(HT_SIMDJSON_DEFINITIONS simdjson::simdjson INTERFACE_COMPILE_DEFINITIONS)
if(HT_SIMDJSON_DEFINITIONS)
  add_compile_definitions(${HT_SIMDJSON_DEFINITIONS})
endif()
# RE2 matches every user-supplied regular expression in linear time (Go's syntax, as Volcano's).
pkg_check_modules(RE2 REQUIRED re2)
# Only RE2's headers and libraries: its pkg-config cflags add -pthread, which defines _REENTRANT and
# makes every dependent's precompiled header unusable (-Winvalid-pch, an error with -Werror).
add_library(ht_re2 INTERFACE)
target_include_directories(ht_re2 SYSTEM INTERFACE ${RE2_INCLUDE_DIRS})
target_link_libraries(ht_re2 INTERFACE ${RE2_LINK_LIBRARIES} Threads::Threads)
if(HYPERTOPO_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(HYPERTOPO_BUILD_BENCHMARKS)
  find_package(benchmark REQUIRED)
endif()

# rdma-core: libibnetdisc walks a subnet (live or from a cache file).
find_library(IBNETDISC_LIB ibnetdisc REQUIRED)
find_library(IBMAD_LIB ibmad REQUIRED)
find_library(IBUMAD_LIB ibumad REQUIRED)
find_path(IBNETDISC_INCLUDE infiniband/ibnetdisc.h REQUIRED)
add_library(ht_ibnetdisc INTERFACE)
target_include_directories(ht_ibnetdisc INTERFACE ${IBNETDISC_INCLUDE})
target_link_libraries(ht_ibnetdisc INTERFACE ${IBNETDISC_LIB} ${IBMAD_LIB} ${IBUMAD_LIB})

if(HYPERTOPO_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
  # Executables of the sanitizer build are linked as position-dependent: a PIE of this size carries
  # millions of relative relocations (ASan's global descriptors among them) that the loader applies,
  # page by page, on every start. The tests start a process per test case and the CLI tests many
  # more: -no-pie halves each start (cli_test 1.2 s -> 0.53 s, hypertopo 0.83 s -> 0.42 s).
  add_link_options($<$<STREQUAL:$<TARGET_PROPERTY:TYPE>,EXECUTABLE>:-no-pie>)
endif()
