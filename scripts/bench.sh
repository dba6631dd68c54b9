#!/usr/bin/env bash
# Runs the benchmarks. Figures come from the release build (built here when missing); `--smoke`
# runs each one briefly in the sanitizer build, as the test command does, just to prove they run.
#   scripts/bench.sh            # full runs in build/, figures as quoted in docs/benchmarks.md
#   scripts/bench.sh --smoke    # a few iterations each in build-asan/
set -euo pipefail
cd "$(dirname "$0")/.."
flags=(--benchmark_repetitions=5 --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true)
dir=build
if [[ "${1:-}" == "--smoke" ]]; then
  flags=(--benchmark_min_time=0.01)
  dir=build-asan
  export HYPERTOPO_BENCH_SMOKE=1  # benchmarks with a generated input make it small
  shift
fi
if [[ $dir == build ]]; then
  scripts/setup.sh --benchmarks  # idempotent: installs nothing new, rebuilds only what changed
else
  [[ -d $dir/bench ]] || scripts/setup.sh --tests
fi
export HYPERTOPO_FIXTURES=${HYPERTOPO_FIXTURES:-$(cd .. && pwd)/shared/fixtures}
status=0
for b in "$dir"/bench/*; do
  [[ -x "$b" && -f "$b" ]] || continue
  echo "== $(basename "$b")"
  "$b" "${flags[@]}" --benchmark_counters_tabular=true "$@" || status=1
done
exit $status
