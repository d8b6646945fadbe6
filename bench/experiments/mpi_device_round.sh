#!/bin/bash
# libocal-mpi's round on a GPU machine: the tests, the examples and the benchmark, with two
# ranks (on one GPU they share it). Run from a build tree prepared as in docs/mpi.md:
#   bash .device/env.sh bash BUILD/bench/mpi_device_round.sh
cd "$(dirname "$0")/.."
export OCAL_CACHE_DIR=/tmp/ocal-cache OMPI_MCA_btl=self,vader OMPI_MCA_btl_base_warn_component_unused=0
nvidia-smi -L
tools/ocal devices
R="mpirun -np 2 --oversubscribe --bind-to none"
echo "== tests, 2 ranks on one GPU"
OCAL_MPI_CHUNK=65536 timeout 120 $R tests/mpi_collectives 2>&1 | tail -8
echo "== mpi_sum"
timeout 60 $R examples/mpi_sum --n 400000003 2>&1 | tail -3
echo "== bench, 1 rank (copies; allreduce is a no-op)"
timeout 60 mpirun -np 1 --bind-to none bench/mpi_allreduce --max-mib 1024 --repeat 5 2>&1 | tail -6
echo "== bench, 2 ranks sharing the GPU"
timeout 150 $R bench/mpi_allreduce --max-mib 1024 --repeat 5 2>&1 | tail -8
for c in 1048576 16777216; do
  echo "== bench 256 MiB, chunk $c"
  OCAL_MPI_CHUNK=$c timeout 60 $R bench/mpi_allreduce --max-mib 256 --repeat 5 2>&1 | tail -1
done
echo "== mlp check, 2 ranks"
timeout 120 $R examples/mlp_train_mpi --check 3 --epochs 2 --train 10240 --batch 256 --min-accuracy 90 2>&1 | tail -9
echo "== mlp steps, hidden 4096: 1 rank batch 4096, 2 ranks global 8192 (sharing one GPU)"
timeout 90 mpirun -np 1 --bind-to none examples/mlp_train_mpi --hidden 4096 --batch 4096 --train 8192 --test 500 --epochs 0 --check 0 --min-accuracy 0 --bench-steps 20 2>&1 | tail -2
timeout 120 $R examples/mlp_train_mpi --hidden 4096 --batch 8192 --train 16384 --test 500 --epochs 0 --check 0 --min-accuracy 0 --bench-steps 20 2>&1 | tail -2
echo "== torch peer (needs 2 GPUs)"
timeout 60 python3 bench/mpi_allreduce_torch.py --quick 2>&1 | tail -2
echo "== distributed CG: check on 2 ranks, then the benchmark at 8192^2 unknowns per rank"
timeout 120 $R examples/poisson_cg_mpi --n 512 --check 2>&1 | tail -3
# 1 rank on 8192^2, 2 ranks sharing the GPU on the same grid (strong scaling), and 2 ranks
# with 8192^2 unknowns each (N = 11586: the per-GPU size of the issue's 64M-unknown target).
# --max-iter 0 skips the solve; --bench 100 times 100 iterations and the breakdown.
timeout 150 mpirun -np 1 --bind-to none examples/poisson_cg_mpi --n 8192 --max-iter 0 --bench 100 2>&1 | tail -3
timeout 150 $R examples/poisson_cg_mpi --n 8192 --max-iter 0 --bench 100 2>&1 | tail -4
timeout 200 $R examples/poisson_cg_mpi --n 11586 --max-iter 0 --bench 100 2>&1 | tail -4
