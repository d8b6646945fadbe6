#!/bin/bash
# bench/experiments/gemm_dmma_ptxas_check.sh — registers, spills and local memory of builds of
# cl/gemm_dmma.cl without a GPU: clang compiles the kernel to PTX for sm_80 (the OpenCL
# built-ins it uses given as NVVM special registers), the PTX is retargeted to sm_90a as
# src/core/ptx.c does, and ptxas -v reports. NVIDIA's OpenCL compiler emits other PTX, so the
# counts are indicative (ranking builds, spotting spills), not the driver's own.
#
#   bench/experiments/gemm_dmma_ptxas_check.sh [NAME=BMxBNxBKxWMxWNxSHAPExSTAGESxRASTER[xSM90A[xA_BY_ROWS]] ...]
#
# Without names, gemm_dmma_sweep.sh's builds. CLANG (default clang-15) must know nvptx64;
# PTXAS defaults to ptxas on PATH, else /usr/local/cuda/bin/ptxas. Exit status: the number of
# builds that did not compile.
src=$(cd "$(dirname "$0")/../.." && pwd)
CLANG=${CLANG:-clang-15}
PTXAS=${PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
if [ $# -eq 0 ]; then # gemm_dmma_sweep.sh's list
  eval "$(sed -n '/^V="/,/"$/p' "$(dirname "$0")/gemm_dmma_sweep.sh")"
  set -- $V
fi
tmp=$(mktemp -d /tmp/ocal-dmma-ptxas-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/builtins.h" <<'H'
#define get_local_id(i) ((size_t)__nvvm_read_ptx_sreg_tid_x())
#define get_group_id(i) ((size_t)((i) == 0 ? __nvvm_read_ptx_sreg_ctaid_x() : (i) == 1 ? __nvvm_read_ptx_sreg_ctaid_y() : __nvvm_read_ptx_sreg_ctaid_z()))
#define get_num_groups(i) ((size_t)((i) == 0 ? __nvvm_read_ptx_sreg_nctaid_x() : (i) == 1 ? __nvvm_read_ptx_sreg_nctaid_y() : __nvvm_read_ptx_sreg_nctaid_z()))
#define barrier(f) __nvvm_bar_sync(0)
#define min(a, b) ((a) < (b) ? (a) : (b))
H
fail=0
for arg in "$@"; do
  name=${arg%%=*}
  IFS=x read -r bm bn bk wm wn shape stages raster sm90a rows <<<"${arg#*=}"
  local_max=$([ "${sm90a:-0}" = 1 ] && echo 232448 || echo 48128)
  if ! $CLANG -x cl -cl-std=CL1.2 -target nvptx64-nvidia-nvcl -Xclang -finclude-default-header \
      -Xclang -target-cpu -Xclang sm_80 -include "$tmp/builtins.h" -O2 -S -I "$src/cl" \
      -DTA=0 -DTB=0 -DVEC=1 -DBM=$bm -DBN=$bn -DBK=$bk -DWARPS_M=$wm -DWARPS_N=$wn \
      -DSHAPE=$shape -DSTAGES=$stages -DRASTER=$raster -DLOCAL_MAX=$local_max \
      -DA_BY_ROWS=${rows:-0} -o "$tmp/k.ptx" "$src/cl/gemm_dmma.cl" 2>"$tmp/err"; then
    echo "$name: does not compile"; head -3 "$tmp/err"; fail=$((fail + 1)); continue
  fi
  sed -i 's/^\.target sm_80/.target sm_90a/; s/^\.version .*/.version 8.0/' "$tmp/k.ptx"
  info=$("$PTXAS" -arch=sm_90a -v -o /dev/null "$tmp/k.ptx" 2>&1)
  regs=$(grep -o 'Used [0-9]* registers' <<<"$info" | tr -dc 0-9)
  spill=$(grep -o '[0-9]* bytes spill stores' <<<"$info" | tr -dc 0-9)
  smem=$(grep -o '[0-9]* bytes smem' <<<"$info" | tr -dc 0-9)
  [ -n "$regs" ] || { echo "$name: ptxas: $(head -2 <<<"$info")"; fail=$((fail + 1)); continue; }
  printf '%-22s mma.sync %2d  registers %3s  spill stores %4s bytes  local %6s bytes\n' "$name" \
    "$(grep -c 'mma.sync' "$tmp/k.ptx")" "$regs" "$spill" "$smem"
done
exit $fail
