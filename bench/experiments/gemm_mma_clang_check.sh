#!/bin/bash
# bench/experiments/gemm_mma_clang_check.sh — compiles every variant of cl/gemm_mma.cl for NVPTX with clang-14
# (no GPU needed) and counts the PTX lines that matter: mma.sync, cp.async, ldmatrix, and any
# stack (.local) traffic, which would mean the accumulators left the registers. NVIDIA's own
# OpenCL front end differs; this catches OpenCL C and inline-assembly operand errors only, and
# ptxas is not run (not installed here), so the PTX inside the asm strings is not validated.
#
#   bench/experiments/gemm_mma_clang_check.sh [SRCDIR]     exit status: number of variants that failed
src=${1:-$(dirname "$0")/..}
CLANG=${CLANG:-clang-14}
tmp=$(mktemp -d /tmp/ocal-mma-check-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# clang-14's opencl-c.h leaves vload_half/vstore_half undeclared for the nvptx targets (its
# address-space feature macros); declare the two overloads the kernels use.
cat >"$tmp/decl.h" <<'H'
float __attribute__((overloadable)) vload_half(size_t, const __global half *);
void __attribute__((overloadable)) vstore_half(float, size_t, __global half *);
H
fail=0
variants=(
  "-DMMA_TF32 -DVEC=0"
  "-DMMA_TF32 -DVEC=1"
  "-DMMA_TF32 -DVEC=1 -DCP_ASYNC=1"
  "-DMMA_TF32 -DVEC=1 -DCP_ASYNC=1 -DSMEM_ADDR=0 -DTF32_CVT=0"
  "-DMMA_TF32 -DVEC=1 -DCP_ASYNC=1 -DSMEM_ADDR=1"
  "-DMMA_F16 -DVEC=0"
  "-DMMA_F16 -DVEC=1 -DCP_ASYNC=1"
  "-DMMA_F16 -DVEC=0 -DLDMATRIX=1"
  "-DMMA_F16 -DVEC=1 -DCP_ASYNC=1 -DLDMATRIX=1"
  "-DMMA_BF16 -DVEC=1 -DCP_ASYNC=1 -DLDMATRIX=1"
  "-DMMA_F16 -DVEC=1 -DCP_ASYNC=1 -DLDMATRIX=1 -DOUT_F16"
  "-DMMA_BF16 -DVEC=1 -DCP_ASYNC=1 -DLDMATRIX=1 -DOUT_BF16"
  "-DMMA_BF16 -DVEC=0 -DOUT_BF16"
  "-DMMA_TF32 -DVEC=0 -DLDMATRIX=1"
  "-DMMA_TF32 -DVEC=1 -DCP_ASYNC=1 -DLDMATRIX=1"
  "-DMMA_TF32 -DVEC=1 -DCP_ASYNC=1 -DLDMATRIX=1 -DBK=8 -DSTAGES=4 -DRASTER=8"
  "-DMMA_TF32 -DVEC=1 -DCP_ASYNC=1 -DLDMATRIX=1 -DBN=256 -DBK=8 -DSTAGES=3 -DRASTER=8"
  "-DMMA_TF32 -DVEC=1 -DCP_ASYNC=1 -DLDMATRIX=1 -DBK=8 -DSTAGES=4 -DRASTER=8 -DTF32_INPLACE=1"
  "-DMMA_TF32 -DVEC=1 -DCP_ASYNC=1 -DLDMATRIX=1 -DBN=256 -DBK=8 -DSTAGES=3 -DTF32_INPLACE=1"
  "-DMMA_F16 -DVEC=1 -DCP_ASYNC=1 -DLDMATRIX=1 -DRASTER=8"
  "-DMMA_F16 -DVEC=1 -DCP_ASYNC=1 -DLDMATRIX=1 -DBK=16 -DSTAGES=4 -DRASTER=8"
  "-DMMA_F16 -DVEC=1 -DCP_ASYNC=1 -DLDMATRIX=1 -DBN=256 -DBK=16 -DSTAGES=3 -DRASTER=8"
  "-DMMA_BF16 -DVEC=1 -DCP_ASYNC=1 -DLDMATRIX=1 -DBN=256 -DBK=16 -DSTAGES=3 -DRASTER=8"
)
# MMA_CHECK_ONLY=REGEX compiles only the variants whose options match it.
if [ -n "$MMA_CHECK_ONLY" ]; then
  kept=()
  for v in "${variants[@]}"; do [[ $v =~ $MMA_CHECK_ONLY ]] && kept+=("$v"); done
  variants=("${kept[@]}")
fi
for t in "0 0" "0 1" "1 0" "1 1"; do
  set -- $t
  for v in "${variants[@]}"; do
    rm -f "$tmp/k.ptx"
    if ! $CLANG -x cl -cl-std=CL1.2 -target nvptx64-nvidia-nvcl -Xclang -finclude-default-header \
        -include "$tmp/decl.h" -O2 -S -Werror -DTA=$1 -DTB=$2 $v -o "$tmp/k.ptx" \
        "$src/cl/gemm_mma.cl" 2>"$tmp/err"; then
      echo "FAIL TA=$1 TB=$2 $v"; head -5 "$tmp/err"; fail=$((fail + 1)); continue
    fi
    p="$tmp/k.ptx"
    # The GEMM kernel only (the probe kernel follows it in the file).
    sed -n '/^.entry ocal_gemm_mma/,/^.entry ocal_mma_probe/p' "$p" >"$tmp/g.ptx"
    printf 'ok TA=%s TB=%s %-78s mma %2d cp.async %d ldmatrix %2d local %d shared %s\n' "$1" "$2" \
      "$v" "$(grep -c 'mma.sync' "$tmp/g.ptx")" "$(grep -c 'cp.async.cg' "$tmp/g.ptx")" \
      "$(grep -c 'ldmatrix' "$tmp/g.ptx")" "$(grep -c 'ld.local\|st.local' "$tmp/g.ptx")" \
      "$(grep -o 'smem\[[0-9]*\]' "$tmp/g.ptx" | tr -dc 0-9)"
  done
done
exit $fail
