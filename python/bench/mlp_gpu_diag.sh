#!/bin/bash
# The MLP step from Python against the C example's on the GPU, same run: which of thread
# placement, NumPy's BLAS/OpenMP threads, garbage collection, the warm-up (a kernel program
# first loaded inside the timed steps), pool misses and the GPU's share (batch 8) makes
# Python's step slower, each a variant beside C in every round (the GPU's clocks after
# it); then python/bench/mlp_vs_c.py (9 alternations) on the package and example as
# committed. "old" is the example with its former warm-up (no loss
# read before the timed steps). Each run prints its counters over the timed steps (--stats).
# The folder it runs from holds pkg/ocal (python/tools/abi3_static.sh), examples/mlp_train.py,
# bench/mlp_vs_c.py, mlp_train_c (examples/mlp_train, static) and this script as run.sh:
#   OUT=DIR bash run.sh      (ROUNDS, PAIRS, STEPS, BATCH, HIDDEN shrink it for a dry run)
set -u
here=$(cd "$(dirname "$0")" && pwd)
export PYTHONPATH="$here/pkg"
export OCAL_CACHE_DIR=$(mktemp -d)
C="$here/mlp_train_c"
{
  date -u; python3 --version; nproc
  lscpu | grep -E "Model name|NUMA|Socket|^CPU\(s\)"
  cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor 2>/dev/null
  nvidia-smi topo -m 2>/dev/null | head -6
  command -v perf && perf --version
  python3 -c "import numpy; numpy.show_runtime()" 2>&1 | grep -iE "num_threads|internal_api|filepath" | head -6
} > "$OUT/env.txt" 2>&1
bus=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader -i 0 2>/dev/null | tr 'A-F' 'a-f' | sed 's/^0000//')
cpus=$(cat /sys/bus/pci/devices/$bus/local_cpulist 2>/dev/null)
pin=$(( ${cpus%%[-,]*} + 2 )) 2>/dev/null || pin=2
echo "GPU 0 at $bus, local CPUs '$cpus', pinned runs on CPU $pin" >> "$OUT/env.txt"
python3 -c "import ocal; print(ocal.get_context())" || exit 1
P="$here/examples/mlp_train.py"; OLD=$(mktemp -d)/mlp_old.py
python3 - "$P" "$OLD" <<'PY'
import sys
s = open(sys.argv[1]).read()
assert s.count("    train(args.warmup)\n") == 1
open(sys.argv[2], "w").write(s.replace("    train(args.warmup)\n", "    for s in range(args.warmup):\n        sgd_step(*batches[s % len(batches)])\n"))
PY
ARGS="--steps ${STEPS:-500} --batch ${BATCH:-256} --hidden ${HIDDEN:-512} --min-accuracy 0"
times() { grep -oE "^over the timed.*|[0-9.]+ us per (SGD )?step.*queued a step in [0-9.]+ us" | tr '\n' ' '; }
one() {  # name, command...
  local name=$1; shift
  echo "$name: $(timeout 15 "$@" 2>&1 | times)" >> "$OUT/diag.txt"
}
GCOFF='import gc, runpy, sys; gc.disable(); gc.freeze(); sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name="__main__")'
for r in $(seq ${ROUNDS:-4}); do
  echo "round $r" >> "$OUT/diag.txt"
  one C "$C" --epochs 0 --min-accuracy 0 --bench-steps ${STEPS:-500} --batch ${BATCH:-256} --hidden ${HIDDEN:-512}
  one old-prealloc python3 "$OLD" --preallocated --warmup 20 --stats $ARGS
  one new-prealloc python3 "$P" --preallocated --warmup 20 --stats $ARGS
  one old-default python3 "$OLD" --warmup 20 --stats $ARGS
  one new-default python3 "$P" --warmup 20 --stats $ARGS
  one C-pinned taskset -c $pin "$C" --epochs 0 --min-accuracy 0 --bench-steps ${STEPS:-500} --batch ${BATCH:-256} --hidden ${HIDDEN:-512}
  one new-prealloc-pinned taskset -c $pin python3 "$P" --preallocated --warmup 20 $ARGS
  one new-prealloc-blas1 env OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 python3 "$P" --preallocated --warmup 20 $ARGS
  one new-prealloc-gcoff python3 -c "$GCOFF" "$P" --preallocated --warmup 20 $ARGS
  one new-prealloc-warm200 python3 "$P" --preallocated --warmup 200 $ARGS
  # Batch 8: the GPU's share near nothing, so a gap left here is the host's alone.
  one C-batch8 "$C" --epochs 0 --min-accuracy 0 --bench-steps ${STEPS:-500} --batch 8 --hidden ${HIDDEN:-512}
  one new-prealloc-batch8 python3 "$P" --preallocated --warmup 20 ${ARGS/--batch ${BATCH:-256}/--batch 8}
  echo "clocks: $(nvidia-smi -i 0 --query-gpu=pstate,clocks.sm,clocks.mem --format=csv,noheader 2>/dev/null)" >> "$OUT/diag.txt"
done
if command -v perf > /dev/null; then
  for v in "C $C --epochs 0 --min-accuracy 0 --bench-steps ${STEPS:-500} --batch ${BATCH:-256} --hidden ${HIDDEN:-512}" "old python3 $OLD --preallocated --warmup 20 $ARGS" "new python3 $P --preallocated --warmup 20 $ARGS"; do
    set -- $v; name=$1; shift
    echo "perf $name: $(timeout 15 perf stat -x, -e context-switches,cpu-migrations,task-clock "$@" 2>&1 | grep -E "us per|context-sw|cpu-migr|task-clock" | tr '\n' ' ')" >> "$OUT/diag.txt"
  done
fi
echo "diag done at ${SECONDS}s"
timeout 75 python3 "$here/bench/mlp_vs_c.py" "$C" ${PAIRS:-9} ${STEPS:-500} ${BATCH:-256} ${HIDDEN:-512} > "$OUT/mlp_vs_c.txt" 2>&1
echo "mlp_vs_c rc=$? at ${SECONDS}s"
cat "$OUT"/*.txt
