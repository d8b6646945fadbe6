#!/bin/bash
# The data-parallel MLP on 1, 2 and 4 GPUs of one host with layer 1 in 1 to 4 panels of
# hidden units (--panels: each panel's all-reduce overlaps the next panel's gradient product,
# the last one the next step's first forward panels). Questions: how close do the panels
# bring 2 and 4 GPUs to one GPU's step (targets 90 % and 85 %), and how much of the 4-GPU
# step is the compute itself with every GPU busy (--bench-alone)? One panel is the plain
# layout, one rank's step the yardstick; ROUNDS rounds alternate the variants.
# Results: $OUT/scaling.txt, $OUT/tests.txt (CHECK=0 skips the checks). QUICK=1: a dry run
# on PoCL.
# Run from a build tree (examples/ built):
#   OUT=dir [ROUNDS=3] [NGPU=4] bash bench/experiments/mpi_hidden_panels_round.sh
cd "$(dirname "$0")/../.." || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OCAL_CACHE_DIR=${OCAL_CACHE_DIR:-/tmp/ocal-mpi-cache} OMPI_MCA_btl=self,vader \
  OMPI_MCA_btl_base_warn_component_unused=0 PMIX_MCA_pcompress_base_silence_warning=1
mkdir -p "$OCAL_CACHE_DIR"
R() { timeout "$1" mpirun -np "$2" --oversubscribe --bind-to none "${@:3}"; }
S=$OUT/scaling.txt T=$OUT/tests.txt
H=4096 B1=4096 STEPS=50 ROUNDS=${ROUNDS:-3} NGPU=${NGPU:-4}
[ -n "$QUICK" ] && H=64 B1=64 STEPS=3 ROUNDS=1
date -u; nvidia-smi -L 2>/dev/null | head -4
# 1. Correctness: the losses against one rank's and the weights alike on every rank.
C="--train 4096 --batch 512 --hidden 256 --epochs 1 --min-accuracy 0"
[ "${CHECK:-1}" = 0 ] || for np in 2 $NGPU; do
  for p in 2 3 4; do
    R 30 $np examples/mlp_train_mpi --check 3 $C --panels $p >> $T 2>&1
    echo "mlp check $np ranks $p panels rc=$?" >> $T
  done
done
[ -f $T ] && grep -E "rc=|check:|weights" $T
# 2. The step, in alternating rounds.
M="--hidden $H --epochs 0 --check 0 --bench-steps $STEPS --test 500 --min-accuracy 0"
mlp() { # NP PANELS [ARGS...]
  echo "== mlp $1 ranks, $2 panels ${*:3}" >> $S
  R 30 $1 examples/mlp_train_mpi $M --batch $(($1 * B1)) --train $((2 * $1 * B1)) \
    --panels $2 "${@:3}" 2>&1 | grep -E "data-parallel|rror|FAIL" >> $S
}
for r in $(seq $ROUNDS); do
  echo "# round $r" >> $S
  mlp 1 1; mlp 1 2
  mlp 2 1; mlp 2 2; mlp 2 3; mlp 2 4
  if [ "$NGPU" -ge 4 ]; then
    mlp 4 1; mlp 4 2; mlp 4 3; mlp 4 4
    [ $r = 1 ] && { mlp 4 2 --bench-alone 1; mlp 2 2 --bench-alone 1; }
  fi
done
cat $S
date -u
