#!/usr/bin/env bash
# README command 2: set everything up, run every test (under ASan/UBSan), the container image test
# and a short benchmark smoke run.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
scripts/setup.sh --tests
jobs=${HYPERTOPO_JOBS:-$(nproc)}
export HYPERTOPO_FIXTURES=${HYPERTOPO_FIXTURES:-$(cd .. && pwd)/shared/fixtures}
# umad2sim is preloaded into children that walk simulated fabrics; ASan must tolerate that order.
export ASAN_OPTIONS=${ASAN_OPTIONS:-verify_asan_link_order=0:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

# The container image: scripts/image.sh --from-build wraps the binary the tests use (with the
# sanitizer runtimes it links) in the runtime stage, in a throw-away image store; then, in a
# container without network, the binary starts, discovers the built-in fabric and ldd finds every
# library. Mostly downloads and unpacking, so it runs beside the test suite.
image_test() {
  local store version image=localhost/hypertopo:image-test rc=0 out
  store=$(mktemp -d)
  local podman=(podman --root "$store/root" --runroot "$store/run" --runtime runc)
  if ! command -v podman >/dev/null 2>&1 || ! command -v runc >/dev/null 2>&1 ||
    ! "${podman[@]}" info >/dev/null 2>&1; then
    rm -rf "$store"
    if [[ ${CI:-} == true ]]; then
      echo "image test: FAILED: podman with runc is required under CI=true (scripts/setup.sh installs them)"
      return 1
    fi
    echo "image test: SKIPPED: podman with runc cannot run here (scripts/setup.sh installs them)"
    return 0
  fi
  version=$(sed -n 's/^project(hypertopo VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
  local run=("${podman[@]}" run --rm --network none
    --ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit "nproc=32768:32768")  # the limits scripts/image.sh explains
  local build_log
  build_log=$(mktemp)
  {
    if ! HYPERTOPO_IMAGE_STORE=$store scripts/image.sh --from-build build-asan --tag "$image" >"$build_log" 2>&1; then
      tail -n 40 "$build_log"
      false
    fi &&
      grep '^image.sh: built' "$build_log" &&
      out=$("${run[@]}" "$image" --version) && echo "$out" &&
      [[ $out == "hypertopo $version (commit "*", built "*")" ]] &&
      out=$("${run[@]}" "$image" discover --source demo:model) &&
      grep -F "tier 3  core-demo-core-01  [core]  128 nodes" <<<"$out" &&
      out=$("${run[@]}" --entrypoint ldd "$image" /usr/local/bin/hypertopo) &&
      grep -q libibnetdisc <<<"$out" && ! grep 'not found' <<<"$out"
  } || rc=1
  "${podman[@]}" rmi -a -f >/dev/null 2>&1 || echo "image test: could not remove the images in $store"
  rm -rf "$store" "$build_log"
  ((rc == 0)) && echo "image test: passed" || echo "image test: FAILED"
  return $rc
}
image_log=$(mktemp)
image_test >"$image_log" 2>&1 &
image_pid=$!
# Whatever ends this script, the image test's store is cleaned up by the test itself.
trap 'wait "$image_pid" 2>/dev/null; rm -f "$image_log"' EXIT

echo "test: running the test suite"
(cd build-asan && ctest --output-on-failure --timeout 600 -j "$jobs")
echo "test: container image"
image_rc=0
wait "$image_pid" || image_rc=$?
cat "$image_log"
((image_rc == 0)) || exit 1
# The conformance counts, as the summary tests printed them in the run above (ctest keeps every
# test's output in LastTest.log), instead of running those tests a second time.
log=build-asan/Testing/Temporary/LastTest.log
for peer in Kueue Volcano KAI; do
  if line=$(grep -m1 "^$peer conformance" "$log"); then echo "test: $line"; fi
done
echo "test: benchmark smoke run"
scripts/bench.sh --smoke
echo "test: done in $(( $(date +%s) - start ))s"
