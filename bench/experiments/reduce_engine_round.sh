#!/bin/bash
# bench/experiments/reduce_engine_round.sh — the GPU round of the one reduction engine (issue 14,
# docs/reduce.md): ocal_sum and friends and ocal_gen_reduction run cl/reduce.cl's kernels
# under one planner. Runs the reduction and generator tests, `ocal bench --suite reduce`
# (every reduction row at the largest size, and the axis sums) and bench/gen (generated dot
# beside ocal_dot at 2^28).
#
#   bench/experiments/reduce_engine_round.sh BUILD_DIR OUT_DIR [quick]
#
# BUILD_DIR is an in-tree build (static or not) with tools/ocal, bench/gen and
# tests/check_{reduce,gen}. Run it on a build of this branch and on one of main, on the same
# machine, to compare (the issue allows no figure more than 3% slower). "quick" runs the
# benches at CI sizes (to try the script on PoCL). OUT_DIR receives check.log, reduce.md (the
# whole suite's table) and gen.jsonl (bench/gen's lines); the output stays short.
set -u
b=${1:?usage: reduce_engine_round.sh BUILD_DIR OUT_DIR [quick]}
out=${2:?usage: reduce_engine_round.sh BUILD_DIR OUT_DIR [quick]}
mkdir -p "$out"
q=
[ "${3:-}" = quick ] && q=--quick

echo "== tests"
: > "$out/check.log"
for t in check_reduce check_gen; do
  timeout 600 "$b/tests/$t" > "$out/$t.full.log" 2>&1
  rc=$?
  echo "$t: rc $rc: $(grep -E '^[0-9]+%: Checks' "$out/$t.full.log" | tail -n 1)" | tee -a "$out/check.log"
  [ $rc -eq 0 ] || tail -n 20 "$out/$t.full.log" | tee -a "$out/check.log"
  rm -f "$out/$t.full.log"
done

echo "== ocal bench --suite reduce"
timeout 900 "$b/tools/ocal" bench $q --suite reduce > "$out/reduce.md" 2>&1
echo "rc $?"
# The largest size of the whole-buffer sweep (2^28 on a GPU): every reduction's row (GB/s and
# the vs-copy column), then the axis sums (column and row sums of a square matrix).
big=$(grep -E '^\| reduce \| sum \| f32 \| [0-9]+ ' "$out/reduce.md" |
  awk -F'|' '{gsub(/ /, "", $5); print $5}' | sort -n | tail -n 1)
head -n 6 "$out/reduce.md" | grep -E '^\| suite'
grep -E "^\| reduce \| (sum|dot|amax|argmax|mean|norm2|var) \| f32 \| ${big:-none} \|" "$out/reduce.md"
grep -E '^\| reduce \| [a-z0-9]+_axis[01] \|' "$out/reduce.md"

echo "== bench/gen (generated dot beside ocal_dot, largest size)"
if [ -n "$q" ]; then
  timeout 600 "$b/bench/gen" --quick > "$out/gen.jsonl" 2>&1
else
  timeout 600 "$b/bench/gen" --max-log2 28 > "$out/gen.jsonl" 2>&1
fi
echo "rc $?"
n=$(grep -o '"op":"gen_dot","dtype":"f32","n":[0-9]*' "$out/gen.jsonl" | grep -o '[0-9]*$' |
  sort -n | tail -n 1)
grep -E "\"op\":\"(dot|gen_dot)\",\"dtype\":\"f32\",\"n\":${n:-none}," "$out/gen.jsonl" |
  sed 's/"bench":"gen","device":"[^"]*",//'
grep -o '"op":"gen_cache".*' "$out/gen.jsonl"
