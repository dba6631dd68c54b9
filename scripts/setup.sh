#!/usr/bin/env bash
# Installs what hypertopo needs from Debian's packages, then configures and builds it.
# Idempotent: a second run installs nothing new and rebuilds only what changed.
#
#   scripts/setup.sh              # release build in build/ of the binary alone (build/bin/hypertopo)
#   scripts/setup.sh --benchmarks # the same, and the benchmarks beside it (scripts/bench.sh runs it)
#   scripts/setup.sh --tests      # instead, the ASan/UBSan build of tests and benchmarks in build-asan/
set -euo pipefail
cd "$(dirname "$0")/.."

want_tests=0
want_benchmarks=0
for arg in "$@"; do
  case "$arg" in
    --tests) want_tests=1 ;;
    --benchmarks) want_benchmarks=1 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown argument '$arg'" >&2; exit 2 ;;
  esac
done

# Debian packages, one per line: scripts/packages/build.txt (what builds the binary; the Dockerfile's
# build stage installs the same list) and scripts/packages/dev.txt (tests, benchmarks, lab tools).
packages=()
for list in scripts/packages/build.txt scripts/packages/dev.txt; do
  mapfile -t -O "${#packages[@]}" packages < <(awk '{ sub(/#.*/, ""); for (i = 1; i <= NF; i++) print $i }' "$list")
done

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The deploy/ tests render every kustomize overlay with `kubectl kustomize`. Where no kubectl is
# installed, Debian's kubernetes-client is the fallback, but its kubectl (1.20, kustomize v2) cannot
# render overlays that use `labels` and `components`: a warning below says so.
command -v kubectl >/dev/null 2>&1 || missing+=(kubernetes-client)
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
kubectl_minor=$(kubectl version --client -o json 2>/dev/null | sed -n 's/.*"minor": *"\([0-9]*\).*/\1/p' | head -1)
if [[ -n $kubectl_minor ]] && ((kubectl_minor < 21)); then
  echo "setup: warning: kubectl 1.$kubectl_minor is too old to render deploy/ (kustomize v4+, kubectl >= 1.21, is needed)" >&2
fi
# lldpd's package starts a system daemon; the tests run their own in namespaces.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet lldpd 2>/dev/null; then
  systemctl stop lldpd || true
fi

jobs=${HYPERTOPO_JOBS:-$(nproc)}
werror=OFF
[[ "${CI:-}" == "true" ]] && werror=ON
# Unity build: each target's sources are compiled 16 at a time as one unit, so the headers they share
# (the standard library, nlohmann/json, Boost.Beast, GoogleTest) are parsed once per batch instead of
# once per file (the test build: 135 compile units instead of 343, ninja's log about 2,400 s of
# compiling instead of 4,100 s). A change to one file recompiles its batch: HYPERTOPO_UNITY=OFF
# configures file by file for single-file iteration (docs/development.md).
unity=(-DCMAKE_UNITY_BUILD="${HYPERTOPO_UNITY:-ON}" -DCMAKE_UNITY_BUILD_BATCH_SIZE=16)

if ((want_tests)); then
  # Tests and a benchmark smoke run need only the sanitizer build; one build keeps CI short.
  # -g1 (line tables only) keeps sanitizer stack traces readable and compiles ~18% faster than -g;
  # -O0 compiles in ~60% of -O1's CPU time (half, for the Boost.Beast units), which on 2 cores is
  # worth more than the tests' own run time it costs. HYPERTOPO_ASAN_OPT=-O1 builds as before.
  echo "setup: building build-asan/ (tests and benchmarks under ASan/UBSan)"
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS_DEBUG="${HYPERTOPO_ASAN_OPT:--O0} -g1" \
    -DHYPERTOPO_SANITIZE=ON -DHYPERTOPO_BUILD_TESTS=ON -DHYPERTOPO_BUILD_BENCHMARKS=ON \
    "${unity[@]}" -DHYPERTOPO_WERROR=$werror >/dev/null
  cmake --build build-asan -j "$jobs"
else
  echo "setup: building build/ (release)"
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DHYPERTOPO_BUILD_TESTS=OFF -DHYPERTOPO_BUILD_BENCHMARKS=ON "${unity[@]}" -DHYPERTOPO_WERROR=$werror >/dev/null
  # The binary alone unless benchmarks are asked for: the demo waits for nothing it does not run.
  # Libraries only the tests use are built in build-asan/.
  targets=(hypertopo)
  ((want_benchmarks)) && targets+=(benchmarks)
  cmake --build build -j "$jobs" --target "${targets[@]}"
fi
