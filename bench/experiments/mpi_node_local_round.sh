#!/bin/bash
# libocal-mpi on the GPUs of one host (two and four): correctness of the node-local path,
# then allreduce (node-local, ring, small-size switch, chunk size) beside NCCL, the
# data-parallel MLP and the distributed CG, 1 rank against 2 and 4. Run from a build tree:
#   OUT=dir bash bench/experiments/mpi_node_local_round.sh
# Results: $OUT/allreduce.jsonl, $OUT/scaling.txt, $OUT/tests.txt. QUICK=1: tiny sizes (a dry
# run on PoCL). Parts run in order of importance while the time budget (BUDGET s) lasts.
cd "$(dirname "$0")/../.." || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OCAL_CACHE_DIR=/tmp/ocal-mpi-cache OMPI_MCA_btl=self,vader \
  OMPI_MCA_btl_base_warn_component_unused=0 NCCL_NVLS_ENABLE=0
mkdir -p $OCAL_CACHE_DIR
BUDGET=${BUDGET:-268}
# lim LIMIT: LIMIT or what is left of the budget; fails when under 5 s are left.
lim() {
  local left=$((BUDGET - SECONDS)) t=$1
  [ $left -lt $t ] && t=$left
  [ $t -lt 5 ] && { echo "skipped (budget)" >&2; return 1; }
  echo $t
}
R() { local t; t=$(lim "$1") || return 1; timeout $t mpirun -np "$2" --oversubscribe --bind-to none "${@:3}"; }
TR() { local t; t=$(lim "$1") || return 1; timeout $t python3 -m torch.distributed.run --nproc_per_node "$2" bench/mpi_allreduce_torch.py "${@:3}" 2>&1 | grep bench; }
A=$OUT/allreduce.jsonl S=$OUT/scaling.txt T=$OUT/tests.txt
MAXMIB=1024 H=4096 B1=4096 N1=8192 N2=11586 N4=16384 STEPS=50 IT=100
[ -n "$QUICK" ] && MAXMIB=4 H=64 B1=64 N1=64 N2=90 N4=128 STEPS=3 IT=5
date -u; nvidia-smi -L 2>/dev/null; df -h /dev/shm | tail -1; mpirun --version | head -1
# 1. Correctness on the GPUs: every collective through the node-local path at every size.
OCAL_MPI_SMALL=0 R 30 2 tests/mpi_collectives --path node-local > $T 2>&1; echo "tests rc=$?" >> $T
tail -2 $T
# 2. Allreduce on 2 GPUs, default path (with naive, MPI host, pinned copies), 4 KiB .. 1 GiB.
R 40 2 bench/mpi_allreduce --min-kib 4 --max-mib $MAXMIB --repeat 3 | tee -a $A
[ -z "$QUICK" ] && TR 45 2 --max-mib $MAXMIB --repeat 3 | tee -a $A
# 3. Data-parallel MLP: 1 rank at batch B1, 2 ranks at 2 x B1.
M="--hidden $H --epochs 0 --check 0 --bench-steps $STEPS --test 500 --min-accuracy 0"
echo "== mlp 1 rank" >> $S; R 20 1 examples/mlp_train_mpi $M --batch $B1 --train $((2 * B1)) >> $S 2>&1
echo "== mlp 2 ranks" >> $S; R 20 2 examples/mlp_train_mpi $M --batch $((2 * B1)) --train $((4 * B1)) >> $S 2>&1
# 4. Four GPUs: allreduce 1 MiB .. 1 GiB (checked by the benchmark), NCCL, the MLP.
R 30 4 bench/mpi_allreduce --max-mib $MAXMIB --repeat 3 | tee -a $A
[ -z "$QUICK" ] && TR 45 4 --max-mib $MAXMIB --repeat 3 | tee -a $A
echo "== mlp 4 ranks" >> $S; R 25 4 examples/mlp_train_mpi $M --batch $((4 * B1)) --train $((8 * B1)) >> $S 2>&1
# 5. Distributed CG: 1 rank N1^2, 2 ranks 2 x N1^2, 4 ranks 4 x N1^2 (weak).
echo "== cg 1 rank $N1" >> $S; R 35 1 examples/poisson_cg_mpi --n $N1 --max-iter 0 --bench $IT >> $S 2>&1
echo "== cg 2 ranks $N2" >> $S; R 35 2 examples/poisson_cg_mpi --n $N2 --max-iter 0 --bench $IT >> $S 2>&1
echo "== cg 4 ranks $N4" >> $S; R 40 4 examples/poisson_cg_mpi --n $N4 --max-iter 0 --bench $IT >> $S 2>&1
# 6. The ring alone on 2 GPUs; the small-size switch (node-local always against MPI_Allreduce
# always, 4 KiB .. 4 MiB); the MLP over the ring; CG strong; bigger chunks.
OCAL_MPI_SHARED=off R 20 2 bench/mpi_allreduce --ours-only --max-mib $MAXMIB --repeat 3 | tee -a $A
OCAL_MPI_SMALL=0 R 10 2 bench/mpi_allreduce --ours-only --min-kib 4 --max-mib 4 --repeat 7 | tee -a $A
OCAL_MPI_SMALL=1G R 10 2 bench/mpi_allreduce --ours-only --min-kib 4 --max-mib 4 --repeat 7 | tee -a $A
echo "== mlp 2 ranks ring" >> $S
OCAL_MPI_SHARED=off R 20 2 examples/mlp_train_mpi $M --batch $((2 * B1)) --train $((4 * B1)) >> $S 2>&1
echo "== cg 2 ranks $N1" >> $S; R 30 2 examples/poisson_cg_mpi --n $N1 --max-iter 0 --bench $IT >> $S 2>&1
shm=$(df -k --output=avail /dev/shm | tail -1)
if [ "${shm:-0}" -gt 1048576 ]; then
  OCAL_MPI_CHUNK=16M R 15 2 bench/mpi_allreduce --ours-only --min-kib 16384 --max-mib $MAXMIB --repeat 3 | tee -a $A
fi
grep -v "^ " $S
date -u
