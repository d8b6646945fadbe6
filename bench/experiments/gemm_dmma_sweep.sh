#!/bin/bash
# bench/experiments/gemm_dmma_sweep.sh — the f64 tensor-core sweep of cl/gemm_dmma.cl's
# m16n8k16 builds and A_BY_ROWS (A's fragments a pair of row groups at a time) beside the
# engine's blocks and PyTorch's float64, in one call of about 115 s on an H100:
#
#   OUT=DIR bench/experiments/gemm_dmma_sweep.sh PROBE CL_DIR
#
# PROBE: a built bench/experiments/gemm_dmma_probe (static, for a machine without the build);
# CL_DIR: a folder holding gemm_dmma.cl and gemm_tc_common.cl. Writes DIR/torch.txt (the GPU and
# its clocks, PyTorch before and after) and DIR/probe.txt (each variant's checks, registers and
# spills from -cl-nv-verbose, TFLOP/s at 1024^3, 4096^3, 8192^3; then ocal_gemm's f64 and
# CLBlast's). Variants: NAME=BMxBNxBKxWMxWNxSHAPExSTAGESxRASTER[xSM90A[xA_BY_ROWS]]; the e_*
# are the engine's blocks, x_big the fastest 8192^3 build of the sweeps before.
probe=${1:?usage: OUT=DIR gemm_dmma_sweep.sh PROBE CL_DIR}
cl=${2:?usage: OUT=DIR gemm_dmma_sweep.sh PROBE CL_DIR}
out=${OUT:?set OUT to the results folder}
here=$(dirname "$0")
export OCAL_CACHE_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >"$out/torch.txt" 2>&1
timeout 25 python3 "$here/gemm_dmma_torch.py" 0.15 >>"$out/torch.txt" 2>&1
# Most promising first (the engine's blocks, then m16n8k16 on 32 x 32 pieces a warp, which do
# not spill: gemm_dmma_ptxas_check.sh): a cut at the time limit drops the last.
V="e_mid=128x64x8x2x2x1688x3x8 e_big=128x128x8x2x4x1684x2x8 e_small=64x64x8x2x2x1688x4x8
k16_128x64_w8_s3x=128x64x16x4x2x16816x3x8x1 k16_64x128_w8_s3x=64x128x16x2x4x16816x3x8x1
k16_128x64_w8_s4x=128x64x16x4x2x16816x4x8x1 k16_64x128_w8_s4x=64x128x16x2x4x16816x4x8x1
k16_128x64_w8_s2x=128x64x16x4x2x16816x2x8x1 k8_128x64_w8_s3=128x64x8x4x2x1688x3x8
k16_64=64x64x16x2x2x16816x2x8 k16_128x64_s3x=128x64x16x2x2x16816x3x8x1
k16_128_s3x=128x128x16x2x4x16816x3x8x1 x_big=128x128x16x2x4x1688x3x8x1
k16_64_s4x=64x64x16x2x2x16816x4x8x1 k16_128_s2x=128x128x16x2x4x16816x2x8x1
k16_128x64_s2x=128x64x16x2x2x16816x2x8x1 k16_256x64_s3x=256x64x16x4x2x16816x3x8x1
k16_128x64_s3x_rows=128x64x16x2x2x16816x3x8x1x1 k8_128x64_rows=128x64x8x2x2x1688x3x8x0x1
k16_128x64_k32_s3x=128x64x32x2x2x16816x3x8x1 k16_128_s3x_rows=128x128x16x2x4x16816x3x8x1x1"
# The probe prints each variant as it finishes: a cut at the time limit keeps the first ones.
DMMA_VERBOSE=1 DMMA_ROUND=0.15 timeout 80 "$probe" "$cl/gemm_dmma.cl" $V >"$out/probe.txt" 2>&1
echo "probe exit $?" >>"$out/probe.txt"
timeout 15 python3 "$here/gemm_dmma_torch.py" 0.15 >>"$out/torch.txt" 2>&1
