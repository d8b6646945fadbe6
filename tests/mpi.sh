#!/bin/sh
# libocal-mpi under mpirun on the default device (PoCL in CI): the collectives' tests with 1,
# 2, 3 and 4 ranks (more ranks than cores: --oversubscribe) on each path (node-local shared
# memory, pretend nodes, the ring), then the examples (distributed sum,
# data-parallel training, distributed CG), whose results must equal a single rank's, and the
# benchmarks' quick forms.
#
# Each rank gets its own POCL_CACHE_DIR: PoCL crashes when processes share its kernel cache
# (ocal's own disk cache, OCAL_CACHE_DIR, is shared: its writes are atomic). CI runs as root,
# which Open MPI refuses unless told twice. A small OCAL_MPI_CHUNK makes the test sizes span
# many pipelined chunks.
set -eu
tmp="${TMPDIR:-/tmp}/ocal-mpi.$$"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Shared-memory transport only, no network probing; no warnings about a missing high-speed
# network on a CI machine.
OMPI_MCA_btl=self,vader OMPI_MCA_btl_base_warn_component_unused=0 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM OMPI_MCA_btl \
  OMPI_MCA_btl_base_warn_component_unused OMPI_MCA_rmaps_base_oversubscribe
# Under the sanitizers, LeakSanitizer reports allocations Open MPI keeps until exit inside
# libmpi, PMIx, hwloc and libevent. Those libraries are built without frame pointers, so the
# fast unwinder records no frames for their allocations and no suppression (tests/lsan.supp
# names those libraries) can match them; the slow unwinder finds the frames but makes PoCL's
# compiler (LLVM allocates a great deal) take many minutes per kernel. So leak checking is off
# for every MPI run but the last, which runs with the slow unwinder once every kernel is in
# the caches. (Without ASan these variables are ignored.)
base_asan="${ASAN_OPTIONS:-}"
ASAN_OPTIONS="${base_asan:+$base_asan:}detect_leaks=0"
export ASAN_OPTIONS
mpirun="${MPIRUN:-mpirun}"
top=$(cd "$(dirname "$0")/.." && pwd)
build="${OCAL_EXAMPLES:-$top/examples}/.."

# Runs "$@" on N ranks, each with its own PoCL cache, kept beside ocal's (in the build tree)
# so that later runs find their kernels compiled.
pocl="${OCAL_CACHE_DIR:-$tmp}/pocl-rank"
run() {
  n=$1
  shift
  "$mpirun" -np "$n" --oversubscribe sh -c \
    'POCL_CACHE_DIR="$0.${OMPI_COMM_WORLD_RANK:-0}"; export POCL_CACHE_DIR; exec "$@"' \
    "$pocl" "$@"
}

# One rank first: it compiles every kernel once (on a shared 2-core machine, compiling in
# several processes at once is what takes the time), then the other ranks start from a copy
# of its PoCL cache. One rank is also a case of its own (nothing to send).
export OCAL_MPI_CHUNK=4096 OCAL_MPI_SLOTS=3
run 1 "$build/tests/mpi_collectives"
run 1 "$build/examples/mlp_train_mpi" --check 1 --train 1536 --batch 64 --hidden 64 --epochs 1 \
  --min-accuracy 0 > /dev/null
run 1 "$build/examples/poisson_cg_mpi" --n 41 --check | tee "$tmp/cg.log"
grep -q "check: 1 ranks equal one rank's" "$tmp/cg.log"
# (Only PoCL keeps such a cache: on other devices there is nothing to copy.)
if [ -d "$pocl.0" ]; then
  for r in 1 2 3; do [ -d "$pocl.$r" ] || cp -r "$pocl.0" "$pocl.$r"; done
fi
# The node-local path through shared memory (its allreduce below 64 KiB one MPI_Allreduce);
# with 3 ranks every size through shared memory.
run 2 "$build/tests/mpi_collectives" --path node-local
OCAL_MPI_SMALL=0 OCAL_MPI_SLOTS=4 run 3 "$build/tests/mpi_collectives" --path node-local
# Pretend nodes: 4 ranks as 2 x 2 and 3 as 2 + 1, allreduce hierarchical (reduce in the node
# over shared memory, ring between the nodes' first ranks, broadcast in the node).
OCAL_MPI_NODE_SIZE=2 OCAL_MPI_SMALL=0 run 4 "$build/tests/mpi_collectives" --path node-local \
  --nodes 2
OCAL_MPI_NODE_SIZE=2 OCAL_MPI_SMALL=0 run 3 "$build/tests/mpi_collectives" --path node-local \
  --nodes 2
# The ring, where the node-local path's speed check fails (forced), and without the progress
# thread (every call runs to its end before returning) where no shared window comes (forced).
OCAL_MPI_SHARED_FAULT=speed run 2 "$build/tests/mpi_collectives" \
  --path "ring: the device moves the shared window at"
OCAL_MPI_ASYNC=0 OCAL_MPI_SHARED_FAULT=window run 2 "$build/tests/mpi_collectives" \
  --path "ring: no shared window"
# Fault injection: each OpenCL call of each collective failing in turn on one rank (one
# mpirun sweeps them all; tests/fault/mpi_fault_program.c): every rank must fail alike, or
# every result be right, and the next collective work. On the node-local path with 2 ranks
# and 3 (reduce-scatter + allgather), on the ring, and without the progress thread.
fault="$build/tests/fault/mpi_fault_program"
for cfg in "2" "3" "2 OCAL_MPI_SHARED=off" "2 OCAL_MPI_ASYNC=0"; do
  set -- $cfg
  env ${2:-OCAL_MPI_QUIET=0} "$mpirun" -np "$1" --oversubscribe sh -c \
    'POCL_CACHE_DIR="$0.${OMPI_COMM_WORLD_RANK:-0}"; export POCL_CACHE_DIR; exec "$@"' \
    "$pocl" "$fault" --max-n 3 | tee "$tmp/fault.log"
  grep -q "0 broke a rule" "$tmp/fault.log"
done
unset OCAL_MPI_CHUNK OCAL_MPI_SLOTS

# The distributed sum: exact on 1, 2 and 3 ranks.
for n in 1 2 3; do
  run $n "$build/examples/mpi_sum" --n 1000003 | tee "$tmp/sum.log"
  grep -q "over $n ranks = 500002500003 (exact)" "$tmp/sum.log"
done

# A bad setting fails ocal_mpi_create with a message naming it, on every rank (no hang).
for bad in OCAL_MPI_CHUNK=12x OCAL_MPI_CHUNK=100 OCAL_MPI_SLOTS=0 OCAL_MPI_ASYNC=2 \
    OCAL_MPI_SHARED_FAULT=disk; do
  if env "$bad" "$mpirun" -np 2 --oversubscribe "$build/examples/mpi_sum" --n 1000 \
      > "$tmp/bad.log" 2>&1; then
    echo "mpi.sh: $bad was accepted"; exit 1
  fi
  grep -q "${bad%%=*}" "$tmp/bad.log" || { echo "mpi.sh: no message for $bad"; cat "$tmp/bad.log"; exit 1; }
done

# Data-parallel training: its first steps' losses equal one rank's with the same global batch.
run 2 "$build/examples/mlp_train_mpi" --check 3 --train 1536 --batch 128 --hidden 64 \
  --epochs 2 --min-accuracy 60 | tee "$tmp/mlp.log"
grep -q "check: 3 steps on 2 ranks equal one rank's" "$tmp/mlp.log"
run 3 "$build/examples/mlp_train_mpi" --check 2 --train 1536 --batch 192 --hidden 64 --panels 3 \
  --epochs 1 --min-accuracy 0 --bench-steps 2 --bench-alone 1 | tee "$tmp/mlp3.log"
grep -q "check: 2 steps on 3 ranks equal one rank's" "$tmp/mlp3.log"
grep -q "3 ranks, 3 panels, no all-reduces)" "$tmp/mlp3.log"
# More panels than hidden units are refused, with the reason.
if "$mpirun" -np 1 "$build/examples/mlp_train_mpi" --hidden 4 --panels 5 > "$tmp/bad.log" 2>&1; then
  echo "mpi.sh: --panels 5 with --hidden 4 was accepted"; exit 1
fi
grep -q "at most --hidden 4" "$tmp/bad.log" || { cat "$tmp/bad.log"; exit 1; }

# Distributed CG: on 2 and 3 ranks (uneven blocks of grid rows with 3), as on 1 above, the
# iteration count, residual and solution equal one rank's ocal_cg on the whole matrix, and the
# error against the known solution is within the tolerance; N = 3 on 3 ranks leaves one grid
# row per rank (no interior rows). The benchmark mode runs once.
for n in 2 3; do
  run $n "$build/examples/poisson_cg_mpi" --n 41 --check | tee "$tmp/cg.log"
  grep -q "check: $n ranks equal one rank's" "$tmp/cg.log"
done
run 3 "$build/examples/poisson_cg_mpi" --n 3 --check | tee "$tmp/cg3.log"
grep -q "check: 3 ranks equal one rank's" "$tmp/cg3.log"
run 2 "$build/examples/poisson_cg_mpi" --n 64 --max-iter 0 --bench 5 | tee "$tmp/cgb.log"
grep -q '"bench": "poisson_cg_mpi"' "$tmp/cgb.log"

# The benchmark's quick form runs and its results check; so do sizes given by the byte.
run 2 "$build/bench/mpi_allreduce" --quick | tee "$tmp/bench.log"
grep -q '"bench": "mpi_allreduce"' "$tmp/bench.log"
run 2 "$build/bench/mpi_allreduce" --ours-only --repeat 1 --bytes 262148,4004 | tee "$tmp/bench.log"
grep -q '"bytes": 262148,' "$tmp/bench.log" && grep -q '"bytes": 4004,' "$tmp/bench.log"

# Leaks: the collectives' tests once more, with LeakSanitizer on (see the top).
ASAN_OPTIONS="${base_asan:+$base_asan:}fast_unwind_on_malloc=0" OCAL_MPI_CHUNK=4096 \
  run 2 "$build/tests/mpi_collectives"
echo "mpi checks passed"
