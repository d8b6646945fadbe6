#!/bin/bash
# libocal-mpi on 1, 2 and 4 GPUs of one host. Question: does cutting the MLP's layer-1
# gradient into row panels (--panels) hide its allreduce, and does the 4-rank allreduce gain
# from reduce-scatter + allgather through the window, and small allreduces from running on
# the calling thread? Each against a build of the commit before (BASE), in one run. Answer
# (H100s, 2026-11-27, docs/mpi.md): no (the panels' products cost more than they hide); yes,
# 14.1 -> 18.2 GB/s at 256 MiB; yes, 79 -> 31 us at 4 KiB (naive path 26 us).
# Results: $OUT/scaling.txt, $OUT/allreduce.jsonl, $OUT/tests.txt. QUICK=1: a dry run on PoCL.
# Run from a build tree, with a build of the base commit in $BASE (default ../base):
#   OUT=dir bash bench/experiments/mpi_panels_round.sh
cd "$(dirname "$0")/../.." || exit 1
BASE=${BASE:-../base}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OCAL_CACHE_DIR=/tmp/ocal-mpi-cache OMPI_MCA_btl=self,vader \
  OMPI_MCA_btl_base_warn_component_unused=0 PMIX_MCA_pcompress_base_silence_warning=1
mkdir -p $OCAL_CACHE_DIR
# R LIMIT NP PROGRAM...: one mpirun, stopped after LIMIT seconds.
R() { timeout "$1" mpirun -np "$2" --oversubscribe --bind-to none "${@:3}"; }
A=$OUT/allreduce.jsonl S=$OUT/scaling.txt T=$OUT/tests.txt
H=4096 B1=4096 STEPS=50 MAXMIB=256
[ -n "$QUICK" ] && H=64 B1=64 STEPS=3 MAXMIB=4
date -u; nvidia-smi -L 2>/dev/null | head -4
# 1. Correctness of the 4-rank path (every size through the window), and the MLP's check.
OCAL_MPI_SMALL=0 R 25 4 tests/mpi_collectives --path node-local > $T 2>&1; echo "tests rc=$?" >> $T
R 20 4 examples/mlp_train_mpi --check 3 --train 4096 --batch 512 --hidden 256 --epochs 1 --min-accuracy 0 >> $T 2>&1; echo "mlp check rc=$?" >> $T
tail -4 $T
# 2. The MLP: 1 rank at batch B1; 2 and 4 ranks at P x B1, base build and panels 1, 4, 8.
M="--hidden $H --epochs 0 --check 0 --bench-steps $STEPS --test 500 --min-accuracy 0"
mlp() { echo "== mlp $1 ranks $2 ${*:3}" >> $S; R 15 $1 $([ $2 = base ] && echo $BASE/examples || echo examples)/mlp_train_mpi $M --batch $(($1 * B1)) --train $((2 * $1 * B1)) "${@:3}" 2>&1 | grep -E "data-parallel|weights|rror|FAIL" >> $S; }
mlp 1 new
mlp 1 new --panels 4
mlp 2 base
mlp 2 new
mlp 2 new --panels 2
mlp 2 new --panels 4
mlp 4 base
mlp 4 new
mlp 4 new --panels 4
# 3. Allreduce on 2 GPUs, 4 KiB .. 256 MiB, with the naive path beside: base and new.
echo '{"build": "base"}' >> $A; R 20 2 $BASE/bench/mpi_allreduce --min-kib 4 --max-mib $MAXMIB --repeat 5 >> $A
echo '{"build": "new"}' >> $A; R 20 2 bench/mpi_allreduce --min-kib 4 --max-mib $MAXMIB --repeat 5 >> $A
# 4. Allreduce on 4 GPUs, 1 MiB .. 256 MiB: base and new.
echo '{"build": "base"}' >> $A; R 20 4 $BASE/bench/mpi_allreduce --ours-only --max-mib $MAXMIB --repeat 3 >> $A
echo '{"build": "new"}' >> $A; R 20 4 bench/mpi_allreduce --ours-only --max-mib $MAXMIB --repeat 3 >> $A
cat $S
date -u
