#!/usr/bin/env bash
# Runs the benchmarks (release build). `--smoke` runs each one briefly, as the test command does.
#   scripts/bench.sh            # full runs, figures as quoted in the README
#   scripts/bench.sh --smoke    # a few iterations each, just to prove they run
set -euo pipefail
cd "$(dirname "$0")/.."
min_time=""
if [[ "${1:-}" == "--smoke" ]]; then min_time="--benchmark_min_time=0.01"; shift; fi
export HYPERTOPO_FIXTURES=${HYPERTOPO_FIXTURES:-$(cd .. && pwd)/shared/fixtures}
status=0
for b in build/bench/*; do
  [[ -x "$b" && -f "$b" ]] || continue
  echo "== $(basename "$b")"
  "$b" $min_time --benchmark_counters_tabular=true "$@" || status=1
done
exit $status
