#!/bin/sh
# Runs the raw-kernel and generated-reduction examples as a user would (twice: the second run
# loads its kernels from the disk cache), checks their exit codes and their refusal of bad
# arguments, and runs bench/gen at small sizes so that the benchmark cannot rot.
set -eu
"$OCAL_EXAMPLES/raw_kernel" 1001
"$OCAL_EXAMPLES/raw_kernel" 1001 | grep -q "0 compiled, 1 loaded from disk"
"$OCAL_EXAMPLES/raw_kernel" --help > /dev/null
if "$OCAL_EXAMPLES/raw_kernel" nonsense 2> /dev/null; then echo "bad argument accepted"; exit 1; fi
if "$OCAL_EXAMPLES/raw_kernel" --device 2> /dev/null; then echo "--device without value accepted"; exit 1; fi
if "$OCAL_EXAMPLES/raw_kernel" --device no-such-device-anywhere 2> /dev/null; then
  echo "bad device accepted"; exit 1
fi
"$OCAL_EXAMPLES/gen_reduction" 20000
"$OCAL_EXAMPLES/gen_reduction" --show-source 1000 | grep -q "OCAL_RED_ALL_KERNELS(ocal_user)"
"$OCAL_EXAMPLES/gen_reduction" --help > /dev/null
if "$OCAL_EXAMPLES/gen_reduction" 5 2> /dev/null; then echo "bad argument accepted"; exit 1; fi
out=bench_gen_quick.out
"$OCAL_BENCH/gen" --quick > "$out"
cat "$out"
for op in axpy gen_axpy dot gen_dot gen_cache; do
  grep -q "\"op\":\"$op\"" "$out" || { echo "no $op line"; exit 1; }
done
if command -v python3 > /dev/null 2>&1; then
  python3 -c 'import json, sys; [json.loads(l) for l in open(sys.argv[1])]' "$out"
fi
rm -f "$out"
echo "kernel examples and bench/gen --quick passed"
