#!/bin/bash
# ocal's defences (docs/defences.md), as CI runs them after the sanitizer build's tests:
#   1. fault injection: tests/fault/run.sh over tests/fault/fault_program, built by clang
#      with AddressSanitizer, LeakSanitizer and UndefinedBehaviorSanitizer;
#   2. ThreadSanitizer: tests/tsan/stress and tests/tsan/lobpcg_pair in a clang --enable-tsan
#      build;
#   3. fuzzing: each libFuzzer target of tests/fuzz/ for FUZZ_SECONDS from its seed corpus.
# Builds from a clone of the repository's HEAD in a temporary directory, as .ci/run does.
# Environment: FUZZ_SECONDS (default 30), FAULT_MAX_N (default 3: n per section and entry
# point, see tests/fault/run.sh), TSAN_ITERATIONS and TSAN_THREADS (default 2 and 3),
# DEFENCES_KEEP=1 keeps the temporary directory (logs, fuzz artifacts).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
jobs=$(nproc)
fuzz_seconds=${FUZZ_SECONDS:-30}
export OCAL_DEVICE=${OCAL_DEVICE:-cpu}
# PoCL alone registered (see Makefile.am's sanitizer test environment: Mesa's Clover, loaded
# by the ICD loader in every process, leaves an allocation the sanitizers cannot attribute).
if [ -z "${OCL_ICD_VENDORS-}" ] && [ -r /etc/OpenCL/vendors/pocl.icd ]; then
  export OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd
fi
cleanup() { [ "${DEFENCES_KEEP:-0}" = 1 ] && echo "defences: kept $work" || rm -rf "$work"; }
trap cleanup EXIT
t0=$SECONDS
stamp() { echo "defences: $* ($((SECONDS - t0)) s so far)"; }

# One clang build serves the fault sweep and the fuzzers: the sanitizers, plus the
# fuzzer's coverage instrumentation (inert outside a fuzzer) in the library.
# tests/sanitizer-ignorelist.txt names the one check left out, inside VkFFT's header.
git clone -q "$src" "$work/asan"
(
  cd "$work/asan"
  ./autogen.sh > /dev/null 2>&1
  CC=clang-14 CFLAGS="-g -O1 -fsanitize=fuzzer-no-link -fsanitize-ignorelist=$src/tests/sanitizer-ignorelist.txt" \
    ./configure -q --enable-werror --enable-sanitizers --disable-shared > /dev/null
  make -j"$jobs" src/libocal_core.la tests/fault/fault_program > /dev/null
)
tests/fuzz/build.sh "$work/asan" "$work/fuzz" > /dev/null
stamp "built the fault-injection program and the fuzz targets (clang, ASan + UBSan)"

echo "=== fault injection"
(
  cd "$work/asan"
  FAULT_MAX_N=${FAULT_MAX_N:-3} FAULT_LOG_DIR="$work/fault-logs" tests/fault/run.sh
)
stamp "fault injection done"

echo "=== ThreadSanitizer"
git clone -q "$src" "$work/tsan"
(
  cd "$work/tsan"
  ./autogen.sh > /dev/null 2>&1
  CC=clang-14 ./configure -q --enable-werror --enable-tsan --disable-shared > /dev/null
  make -j"$jobs" tests/tsan/stress tests/tsan/lobpcg_pair > /dev/null
  export OCAL_CACHE_DIR="$work/tsan-cache" \
    TSAN_OPTIONS="suppressions=$src/tests/tsan.supp:halt_on_error=1:exitcode=66:second_deadlock_stack=1"
  tests/tsan/stress "${TSAN_ITERATIONS:-2}" "${TSAN_THREADS:-3}"
  tests/tsan/lobpcg_pair 2
)
stamp "ThreadSanitizer stress done"

echo "=== fuzzing, ${fuzz_seconds} s per target"
status=0
targets=(gen_params gen_body settings disk_cache tuning mtx)
fuzz_one() {
  local t=$1
  mkdir -p "$work/corpus/$t" "$work/artifacts/$t"
  cp "$src/tests/fuzz/corpus/$t/"* "$work/corpus/$t/"
  # New inputs go to the scratch copy; the seeds in the repository stay small.
  "$work/fuzz/fuzz_$t" -max_total_time="$fuzz_seconds" -print_final_stats=1 \
    -artifact_prefix="$work/artifacts/$t/" -max_len=4096 "$work/corpus/$t" \
    > "$work/fuzz-$t.log" 2>&1
}
# Two targets at a time on two processors.
for ((i = 0; i < ${#targets[@]}; i += jobs)); do
  pids=()
  for ((j = i; j < i + jobs && j < ${#targets[@]}; j++)); do
    fuzz_one "${targets[$j]}" &
    pids+=($!)
  done
  for ((j = 0; j < ${#pids[@]}; j++)); do
    t=${targets[$((i + j))]}
    if wait "${pids[$j]}"; then
      execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/fuzz-$t.log")
      echo "fuzz $t: ${execs:-?} inputs, no crash"
    else
      status=1
      echo "fuzz $t: FAILED (the crashing input is in tests/fuzz/regress/ once fixed):"
      grep -E "ERROR|invariant|SUMMARY|Test unit written" "$work/fuzz-$t.log" | head -20
      for a in "$work/artifacts/$t/"*; do
        [ -f "$a" ] && { echo "input (base64):"; base64 "$a" | head -20; }
      done
    fi
  done
done
stamp "fuzzing done"
exit $status
