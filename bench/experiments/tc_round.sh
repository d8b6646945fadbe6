#!/bin/bash
# bench/experiments/tc_round.sh — the GPU check of TF32 GEMM in the library (issue 17) in one call: the
# tensor-core probe (run in a fresh cache, then read back from it), tests/check_gemm_tc on the
# real mma.sync kernels, `ocal bench --suite gemm` (its f32, tf32, f16 and bf16 rows) beside
# bench/pytorch_reference.py's (TF32 off for f32, on for tf32), the ratios, and the MLP's SGD
# step (examples/mlp_train) in TF32 beside bench/mlp_torch.py --tf32. Short output; about 3-4
# minutes on an H100 (a fresh cache compiles every kernel once).
#
#   bench/experiments/tc_round.sh BUILD_DIR [OUT_DIR]
#
# BUILD_DIR: an in-tree build (static or not) with tools/ocal; tests/check_gemm_tc is built
# there if missing. OUT_DIR (default a temporary directory, removed) keeps ocal.json,
# torch.json and compare.txt.
set -u
b=${1:?usage: tc_round.sh BUILD_DIR [OUT_DIR]}
src=$(cd "$(dirname "$0")/.." && pwd)
out=${2:-}
keep=1
if [ -z "$out" ]; then
  out=$(mktemp -d /tmp/ocal-tc-round-XXXXXX)
  keep=0
fi
mkdir -p "$out"
cache=$(mktemp -d /tmp/ocal-tc-cache-XXXXXX)
trap 'rm -rf "$cache"; [ $keep = 1 ] || rm -rf "$out"' EXIT
unset OCAL_GEMM OCAL_GEMM_TC_EMULATE OCAL_GEMM_SPLITK OCAL_GEMM_PRETRANSPOSE OCAL_GEMM_OWN_TILE \
  OCAL_GEMM_OWN_SPLITK
export OCAL_CACHE_DIR=$cache

echo "== the probe: a fresh cache, then a second process reads the answer"
for run in 1 2; do
  s=$(date +%s%N)
  OCAL_GEMM_PRECISION=tf32 timeout 120 "$b/tools/ocal" info 2>&1 |
    grep -E "^(device|driver version|GEMM|tensor cores)" | sed 's/^/  /'
  echo "  (run $run: $(( ($(date +%s%N) - s) / 1000000 )) ms)"
done

echo "== tests/check_gemm_tc (real kernels where the probe passed)"
if [ ! -x "$b/tests/check_gemm_tc" ]; then
  make -C "$b" -j8 tests/check_gemm_tc > /dev/null 2>&1 || echo "  build of check_gemm_tc failed"
fi
timeout 600 "$b/tests/check_gemm_tc" > "$out/check.log" 2>&1
echo "  exit $?; $(grep -c 'worst error' "$out/check.log") products checked"
grep -E "^[0-9]+%|:[EF]:|SKIPPED|no tensor cores|probe passed" "$out/check.log" | head -12 |
  sed 's/^/  /'
# The worst error of all, as a fraction of the stated tolerance.
awk '/worst error/ { for (i = 1; i <= NF; i++) if ($i == "error") { v = $(i + 1) + 0;
     if (v > w) { w = v; l = $0 } } } END { if (l) print "  worst: " l }' "$out/check.log"

echo "== ocal bench --suite gemm"
timeout 400 "$b/tools/ocal" bench --quiet --suite gemm --json "$out/ocal.json" > /dev/null 2>&1 ||
  echo "  ocal bench failed"
echo "== PyTorch"
timeout 240 python3 "$src/bench/pytorch_reference.py" --suite gemm --json "$out/torch.json" \
  > /dev/null 2> "$out/torch.err" || { echo "  pytorch_reference.py failed:"; tail -3 "$out/torch.err"; }
if [ -s "$out/ocal.json" ] && [ -s "$out/torch.json" ]; then
  "$b/tools/ocal" bench --from "$out/ocal.json" --compare "$out/torch.json" > "$out/compare.txt" 2>&1
  echo "== ocal / PyTorch (tf32: ocal's TF32 context against PyTorch with allow_tf32; f32: both exact)"
  grep -E "gflops" "$out/compare.txt" | grep -E " (tf32|f32|f16|bf16) " |
    awk '{ printf "  %s\n", $0 }'
  # The tf32 rows' engines (the notes name them).
  python3 - "$out/ocal.json" <<'PY'
import json, sys
recs = json.load(open(sys.argv[1]))["records"]
for r in recs:
    if r.get("dtype") in ("tf32", "f16", "bf16"):
        print("  %-4s %-14s %s" % (r.get("dtype"), r.get("size"), r.get("note", "")))
PY
fi

echo "== MLP SGD step, TF32 (examples/mlp_train under OCAL_GEMM_PRECISION=tf32; PyTorch allow_tf32)"
if [ ! -x "$b/examples/mlp_train" ]; then
  make -C "$b" -j8 examples/mlp_train > /dev/null 2>&1 || echo "  build of mlp_train failed"
fi
for shape in "256 512 500" "4096 4096 50"; do
  set -- $shape
  o=$(OCAL_GEMM_PRECISION=tf32 timeout 120 "$b/examples/mlp_train" --epochs 0 --check-host 0 \
        --min-accuracy 0 --train $(( $1 * 2 )) --test 500 --batch $1 --hidden $2 \
        --bench-steps $3 2>&1 | grep "SGD step time" | sed 's/ (.*//')
  # Every product on tensor cores (OCAL_GEMM=tc), where the rule keeps small ones on FP32:
  # measures whether the rule's threshold (compute units / 4 output tiles) is right there.
  f=$(OCAL_GEMM=tc OCAL_GEMM_PRECISION=tf32 timeout 120 "$b/examples/mlp_train" --epochs 0 \
        --check-host 0 --min-accuracy 0 --train $(( $1 * 2 )) --test 500 --batch $1 \
        --hidden $2 --bench-steps $3 2>&1 | grep "SGD step time" | sed 's/ at batch.*//;s/.*: //')
  t=$(timeout 120 python3 "$src/bench/mlp_torch.py" --tf32 --batch $1 --hidden $2 --steps $3 \
        2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["us_per_step"])' \
        2>/dev/null)
  echo "  batch $1 hidden $2: ocal ${o:-failed}; every GEMM on tensor cores ${f:-failed};" \
    "PyTorch TF32 ${t:-failed} us"
done
