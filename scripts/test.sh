#!/usr/bin/env bash
# README command 2: set everything up, run every test (under ASan/UBSan) and a short benchmark smoke run.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
scripts/setup.sh --tests
jobs=${HYPERTOPO_JOBS:-$(nproc)}
export HYPERTOPO_FIXTURES=${HYPERTOPO_FIXTURES:-$(cd .. && pwd)/shared/fixtures}
# umad2sim is preloaded into children that walk simulated fabrics; ASan must tolerate that order.
export ASAN_OPTIONS=${ASAN_OPTIONS:-verify_asan_link_order=0:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
echo "test: running the test suite"
(cd build-asan && ctest --output-on-failure --timeout 600 -j "$jobs")
kueue=build-asan/tests/scheduler_kueue_conformance_test
if [[ -x $kueue ]]; then
  echo "test: $("$kueue" --gtest_filter='KueueConformanceSummary*' | grep -m1 'Kueue conformance')"
fi
kai=build-asan/tests/scheduler_kai_conformance_test
if [[ -x $kai ]]; then
  echo "test: $("$kai" --gtest_filter='KaiConformanceSummary*' | grep -m1 'KAI conformance')"
fi
echo "test: benchmark smoke run"
scripts/bench.sh --smoke
echo "test: done in $(( $(date +%s) - start ))s"
