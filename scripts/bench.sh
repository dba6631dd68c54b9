#!/usr/bin/env bash
# Runs the benchmarks. Figures come from the release build (built here when missing); `--smoke`
# runs each one briefly in the sanitizer build, as the test command does, just to prove they run.
#   scripts/bench.sh            # full runs in build/, figures as quoted in docs/benchmarks.md
#   scripts/bench.sh --smoke    # a few iterations each in build-asan/
#   HYPERTOPO_BENCH_BUILD=build-rel scripts/bench.sh   # another release build folder
# A full run ends with the acceptance figures beside their targets ("== targets").
set -euo pipefail
cd "$(dirname "$0")/.."
flags=(--benchmark_repetitions=5 --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true)
dir=${HYPERTOPO_BENCH_BUILD:-build}  # the release build folder
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
# The acceptance figures beside their targets (full runs only; the smoke run proves the benchmarks
# run, not how fast): `place` of the 6,000-node cluster as a process, wall and peak RSS, median of 5;
# the preempt verb with 6,000 candidates; `discover` of a 100,000-HCA capture as a process; `status`
# of a 10,000-node, 100,000-pod cluster as a process, peak RSS.
if [[ $dir != build-asan ]]; then
  echo "== targets"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  if "$dir/bench/cluster_load_bench" --write-cluster="$tmp" >/dev/null; then
    for _ in 1 2 3 4 5; do
      /usr/bin/time -f "%e %M" -o "$tmp/time" "$dir/bin/hypertopo" place --nodes "$tmp/nodes.json" \
        --topology "$tmp/hypernodes.json" --pods "$tmp/pods.json" --job "$tmp/job.json" -o json >/dev/null
      cat "$tmp/time" >>"$tmp/times"
    done
    sort -n "$tmp/times" | awk 'NR == 3 { printf "place, 6,000 nodes, 1,000-pod gang: %.0f ms wall (median of 5), peak RSS %.0f MiB (target: under 100 ms)\n", $1 * 1000, $2 / 1024 }'
  else
    status=1
  fi
  # status reads a cluster of 10,000 Nodes, 15,851 HyperNodes and 100,000 Pods (3,000 of them GPU
  # pods) from files, as it reads the cluster's lists; peak RSS, median of 5.
  if "$dir/bench/cluster_load_bench" --write-cluster="$tmp/large" --nodes=10000 --pods=100000 >/dev/null; then
    for _ in 1 2 3 4 5; do
      /usr/bin/time -f "%e %M" -o "$tmp/time" "$dir/bin/hypertopo" status --nodes "$tmp/large/nodes.json" \
        --topology "$tmp/large/hypernodes.json" --pods "$tmp/large/pods.json" >/dev/null 2>&1 || status=1
      tail -1 "$tmp/time" >>"$tmp/status-times"
    done
    sort -n -k2 "$tmp/status-times" | awk 'NR == 3 { printf "status, 10,000 nodes, 100,000 pods: peak RSS %.0f MiB (median of 5; target: under 300 MiB)\n", $2 / 1024 }'
    sort -n "$tmp/status-times" | awk 'NR == 3 { printf "status, 10,000 nodes, 100,000 pods: %.0f ms wall (median of 5)\n", $1 * 1000 }'
  else
    status=1
  fi
  "$dir/bench/extender_preempt_bench" --benchmark_filter=BM_PreemptVerbNormalPod 2>/dev/null |
    grep -o 'p50_ms=[0-9.]*\|p99_ms=[0-9.]*' | tr '\n' ' ' |
    awk '{ print "preempt verb, 6,000 candidates: " $0 "(target: p99 under 20 ms)" }' || status=1
  # discover of a rail-optimised fat tree as ibnetdiscover prints it: 12,500 hosts x 8 rails =
  # 100,000 HCAs, 7,288 switches, 300,448 links; the HyperNodes as YAML, as a process, median of 5.
  if awk -v NODES=12500 -v RAILS=8 -f bench/topology/fat_tree_capture.awk >"$tmp/fabric.out"; then
    for _ in 1 2 3 4 5; do
      /usr/bin/time -f "%e %M" -o "$tmp/time" "$dir/bin/hypertopo" discover \
        --source "ibnetdiscover:$tmp/fabric.out" -o yaml >/dev/null 2>&1 || status=1
      tail -1 "$tmp/time" >>"$tmp/discover-times"
    done
    sort -n "$tmp/discover-times" | awk 'NR == 3 { printf "discover of a 100,000-HCA capture (12,500 hosts x 8 rails): %.0f ms wall (median of 5), peak RSS %.0f MiB (target: under 1 s and 150 MiB)\n", $1 * 1000, $2 / 1024 }'
  else
    status=1
  fi
fi
exit $status
