#!/usr/bin/env bash
# Builds every fuzz target (tests/fuzz) with libFuzzer under ASan/UBSan in build-fuzz/ and runs each
# for SECONDS (default 60), seeded from its corpus: the in-repo inputs and the shared fixtures,
# copied into a private work directory (nothing is written into the project). Prints the executions
# per target; a crash leaves its input in build-fuzz/artifacts/ and makes the script fail. Turn each
# one into tests/fuzz/corpus/<target>/crash-<what>, fix it, and run again.
#
#   scripts/fuzz.sh 60              # one minute per target
#   scripts/fuzz.sh 20 quantity job # only these targets
#   HYPERTOPO_FUZZ_BUILD=0 scripts/fuzz.sh 60 quantity   # run what build-fuzz/ holds, no build
#     (while another build of build-fuzz/ runs: a target is final once its link line is printed)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
jobs=${HYPERTOPO_JOBS:-$(nproc)}
fixtures=${HYPERTOPO_FIXTURES:-$(cd .. && pwd)/shared/fixtures}

# The project's compiler (GCC) with Debian's libFuzzer; see cmake/HypertopoHelpers.cmake for why not
# clang 14. -O1 and only the fuzz targets keep the build small.
if [[ ${HYPERTOPO_FUZZ_BUILD:-1} != 0 ]]; then
  cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
    -DHYPERTOPO_SANITIZE=ON -DHYPERTOPO_FUZZ=ON -DHYPERTOPO_BUILD_TESTS=OFF \
    -DHYPERTOPO_BUILD_BENCHMARKS=OFF >/dev/null
  if (($#)); then
    cmake --build build-fuzz -j "$jobs" --target "${@/%/_fuzz}"
  else
    cmake --build build-fuzz -j "$jobs" --target fuzz_targets
  fi
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
artifacts=build-fuzz/artifacts
mkdir -p "$artifacts"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

failed=()
total=0
for binary in build-fuzz/fuzz/*_fuzz; do
  name=$(basename "$binary" _fuzz)
  if (($#)) && [[ " $* " != *" $name "* ]]; then continue; fi
  corpus="$work/$name"
  mkdir -p "$corpus"
  seeds=0
  while IFS= read -r entry; do
    [[ -z $entry ]] && continue
    if [[ $entry == fixtures/* ]]; then source_path="$fixtures/${entry#fixtures/}"; else source_path="$entry"; fi
    if [[ -e $source_path ]]; then
      while IFS= read -r -d '' file; do
        cp "$file" "$corpus/seed-$((seeds++))"
      done < <(find "$source_path" -type f -print0)
    fi
  done < "build-fuzz/fuzz/$name.corpus"
  # -timeout: one input may take 10 s; -rss_limit_mb: ASan's shadow memory included.
  status=0
  "$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2560 -max_len=65536 -use_value_profile=1 \
    -print_final_stats=1 -artifact_prefix="$artifacts/$name-" "$corpus" >"$work/$name.log" 2>&1 || status=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$name.log" | tail -1)
  units=$(find "$corpus" -type f | wc -l)
  total=$((total + ${execs:-0}))
  if ((status == 0)); then
    printf 'fuzz: %-18s %10s executions in %ss, %d seeds, corpus now %d inputs: ok\n' "$name" "${execs:-?}" \
      "$seconds" "$seeds" "$units"
  else
    failed+=("$name")
    printf 'fuzz: %-18s %10s executions: FAILED (exit %d); the last lines:\n' "$name" "${execs:-?}" "$status"
    # awk, not grep: a log without a matching line must not end the run (set -e with pipefail).
    awk '/ERROR|SUMMARY|runtime error|Test unit written|artifact/' "$work/$name.log" | tail -8 | sed 's/^/fuzz:   /'
  fi
done
echo "fuzz: $total executions in all"
if ((${#failed[@]})); then
  echo "fuzz: failed: ${failed[*]} (inputs in $artifacts/)" >&2
  exit 1
fi
