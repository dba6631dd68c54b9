#!/usr/bin/env bash
# Installs what hypertopo needs from Debian's packages, then configures and builds it.
# Idempotent: a second run installs nothing new and rebuilds only what changed.
#
#   scripts/setup.sh            # release build in build/ (binary: build/bin/hypertopo, benchmarks)
#   scripts/setup.sh --tests    # instead, the ASan/UBSan build of tests and benchmarks in build-asan/
set -euo pipefail
cd "$(dirname "$0")/.."

want_tests=0
for arg in "$@"; do
  case "$arg" in
    --tests) want_tests=1 ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown argument '$arg'" >&2; exit 2 ;;
  esac
done

packages=(
  build-essential cmake ninja-build pkg-config lld
  libgtest-dev libgmock-dev libbenchmark-dev
  libyaml-cpp-dev nlohmann-json3-dev libsimdjson-dev libspdlog-dev libfmt-dev libcli11-dev
  libboost-dev libssl-dev
  libibverbs-dev libibumad-dev libibmad-dev libibnetdisc-dev infiniband-diags ibsim-utils
  libnl-3-dev libnl-route-3-dev liblldpctl-dev lldpd iproute2
  graphviz
  libre2-dev
)

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

if ((want_tests)); then
  # Tests and a benchmark smoke run need only the sanitizer build; one build keeps CI short.
  # -g1 (line tables only) keeps sanitizer stack traces readable and compiles ~18% faster than -g.
  echo "setup: building build-asan/ (tests and benchmarks under ASan/UBSan)"
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
    -DHYPERTOPO_SANITIZE=ON -DHYPERTOPO_BUILD_TESTS=ON -DHYPERTOPO_BUILD_BENCHMARKS=ON \
    -DHYPERTOPO_WERROR=$werror >/dev/null
  cmake --build build-asan -j "$jobs"
else
  echo "setup: building build/ (release)"
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DHYPERTOPO_BUILD_TESTS=OFF -DHYPERTOPO_BUILD_BENCHMARKS=ON -DHYPERTOPO_WERROR=$werror >/dev/null
  # The binary and the benchmarks; libraries only the tests use are built in build-asan/.
  cmake --build build -j "$jobs" --target hypertopo benchmarks
fi
