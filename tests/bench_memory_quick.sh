#!/bin/sh
# Runs bench/memory at small sizes, as `make check` does, so the benchmark cannot rot: it must
# exit 0 and print well-formed JSON lines of every kind.
set -eu
bench=${OCAL_BENCH:-./bench}/memory
out=bench_memory_quick.out
"$bench" --quick > "$out"
cat "$out"
for kind in device alloc alloc_speedup transfer pipeline; do
  grep -q "\"bench\":\"$kind\"" "$out" || { echo "no $kind line"; exit 1; }
done
if command -v python3 > /dev/null 2>&1; then
  python3 -c 'import json, sys; [json.loads(l) for l in open(sys.argv[1])]' "$out"
fi
rm -f "$out"
echo "bench/memory --quick passed"
