#!/bin/sh
# Runs bench/reduce at small sizes, as `make check` does, so the benchmark cannot rot: it must
# exit 0 and print one well-formed JSON line per measurement.
set -eu
bench=${OCAL_BENCH_REDUCE:-./bench/reduce}
out=bench_reduce_quick.out
"$bench" --quick > "$out"
cat "$out"
for op in copy sum dot amax argmax mean norm2 var cumsum sum_latency host_loop_sum; do
  grep -q "\"op\":\"$op\"" "$out" || { echo "no $op line"; exit 1; }
done
test "$(grep -c '"axis":' "$out")" -eq 4 || { echo "expected 4 axis lines"; exit 1; }
if command -v python3 > /dev/null 2>&1; then
  python3 -c 'import json, sys; [json.loads(l) for l in open(sys.argv[1])]' "$out"
fi
rm -f "$out"
echo "bench/reduce --quick passed"
