#!/bin/bash
# bench/experiments/engine_gpu_round.sh — the reduction and scan engine's GPU round in one call: a cold
# `ocal demo` (empty disk cache), the first calls' compile times, the reduction, scan and
# generator tests, and `ocal bench --suite reduce` (cumsum beside copy at 2^28).
#
#   bench/experiments/engine_gpu_round.sh BUILD_DIR OUT_DIR [quick]
#
# "quick" runs the bench at CI sizes (to try the script on PoCL).
#
# BUILD_DIR is an in-tree build (static or not) with tools/ocal, bench/first_calls and
# tests/check_{reduce,scan,gen}. Cold means: an empty OCAL_CACHE_DIR, and the drivers' own
# caches off where they have a switch (NVIDIA: CUDA_CACHE_DISABLE=1; PoCL:
# POCL_KERNEL_CACHE=0), so every program is compiled. OUT_DIR receives:
#   demo_cold.txt    the cold demo, its per-step times and the wall time
#   demo_warm.txt    the same demo again with the disk cache it filled
#   first_calls.txt  first ocal_sum / ocal_amax / ocal_cumsum / generated reduction: ms and
#                    programs compiled (cold), then the same from the disk cache
#   check.log        the three test programs' summaries
#   reduce.md        `ocal bench --suite reduce` (Markdown table with the vs-copy column)
#   reduce_single.md, reduce_three.md   the same with OCAL_SCAN=single and OCAL_SCAN=three
# Output stays short: the demo's steps, the first calls, the test summaries and the sum and
# cumsum rows (GB/s and vs copy) at the largest size.
set -u
b=${1:?usage: engine_gpu_round.sh BUILD_DIR OUT_DIR}
out=${2:?usage: engine_gpu_round.sh BUILD_DIR OUT_DIR}
mkdir -p "$out"
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
cold="env OCAL_CACHE_DIR=$cache CUDA_CACHE_DISABLE=1 POCL_KERNEL_CACHE=0"

echo "== cold ocal demo (empty disk cache)"
start=$(date +%s%N)
$cold timeout 300 "$b/tools/ocal" demo > "$out/demo_cold.txt" 2>&1
rc=$?
end=$(date +%s%N)
sed -n '2,$p' "$out/demo_cold.txt" | cut -c1-60
echo "wall $(( (end - start) / 1000000 )) ms (rc $rc)" | tee -a "$out/demo_cold.txt"

echo "== warm ocal demo (disk cache filled by the cold run)"
start=$(date +%s%N)
env OCAL_CACHE_DIR="$cache" timeout 300 "$b/tools/ocal" demo > "$out/demo_warm.txt" 2>&1
rc=$?
end=$(date +%s%N)
echo "wall $(( (end - start) / 1000000 )) ms (rc $rc)" | tee -a "$out/demo_warm.txt"

echo "== first calls (cold: fresh cache dir)"
cache2=$(mktemp -d)
env OCAL_CACHE_DIR="$cache2" CUDA_CACHE_DISABLE=1 POCL_KERNEL_CACHE=0 timeout 300 \
  "$b/bench/first_calls" > "$out/first_calls.txt" 2>&1
echo "rc $?" >> "$out/first_calls.txt"
echo "-- again from the disk cache" >> "$out/first_calls.txt"
env OCAL_CACHE_DIR="$cache2" CUDA_CACHE_DISABLE=1 timeout 300 "$b/bench/first_calls" \
  >> "$out/first_calls.txt" 2>&1
echo "rc $?" >> "$out/first_calls.txt"
rm -rf "$cache2"
cat "$out/first_calls.txt"

echo "== tests"
: > "$out/check.log"
for t in check_reduce check_scan check_gen; do
  timeout 600 "$b/tests/$t" > "$out/$t.full.log" 2>&1
  rc=$?
  echo "$t: rc $rc: $(grep -E '^[0-9]+%: Checks' "$out/$t.full.log" | tail -n 1)" | tee -a "$out/check.log"
  [ $rc -eq 0 ] || tail -n 20 "$out/$t.full.log" >> "$out/check.log"
  rm -f "$out/$t.full.log"
done

echo "== ocal bench --suite reduce"
q=
[ "${3:-}" = quick ] && q=--quick
timeout 900 "$b/tools/ocal" bench $q --suite reduce > "$out/reduce.md" 2>&1
echo "rc $?"
# The largest size of the sweep (2^28 on a GPU): sum and cumsum with their ratio to the copy
# of the same number of floats (the "vs copy" column).
big=$(grep -E '^\| reduce \| cumsum \| f32 \| [0-9]+ ' "$out/reduce.md" |
  awk -F'|' '{gsub(/ /, "", $5); print $5}' | sort -n | tail -n 1)
head -n 6 "$out/reduce.md" | grep -E '^\| suite'
grep -E "^\| reduce \| (sum|cumsum) \| f32 \| ${big:-none} \|" "$out/reduce.md"

# The scan plan both ways in one run (OCAL_SCAN, docs/scan.md): cumsum f32 at 2^24 and 2^28
# (and the largest size of the sweep: CI sizes with "quick") with the single pass (decoupled
# look-back) and with three passes, each row with its GB/s and ratio to a copy.
for plan in single three; do
  echo "== OCAL_SCAN=$plan ocal bench --suite reduce (cumsum f32)"
  OCAL_SCAN=$plan timeout 900 "$b/tools/ocal" bench $q --suite reduce > "$out/reduce_$plan.md" 2>&1
  echo "rc $?"
  top=$(grep -E '^\| reduce \| cumsum \| f32 \| [0-9]+ ' "$out/reduce_$plan.md" |
    awk -F'|' '{gsub(/ /, "", $5); print $5}' | sort -n | tail -n 1)
  grep -E "^\| reduce \| cumsum \| f32 \| (16777216|268435456|${top:-none}) \|" \
    "$out/reduce_$plan.md" | sort -u
done
