#!/bin/sh
# bench/experiments/half_gpu_round.sh — the f16/bf16 round on a GPU in one call: tests/check_half on the
# device, then bench/half (f16 and bf16 beside f32: casts, add, exp, sums, GEMM).
#
#   bench/experiments/half_gpu_round.sh BUILD_DIR [quick]
#
# BUILD_DIR is an in-tree build (static, so that it runs where it is copied). OCAL_DEVICE
# picks the device (default gpu). "quick" runs bench/half at CI sizes (to try the script on
# PoCL). Prints the test summary and one JSON line per figure; about a minute on an H100.
set -u
b=${1:?usage: half_gpu_round.sh BUILD_DIR [quick]}
q=
[ "${2:-}" = quick ] && q=--quick
export OCAL_DEVICE=${OCAL_DEVICE:-gpu}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
echo "== tests/check_half on $OCAL_DEVICE"
timeout 600 "$b/tests/check_half" > "$log" 2>&1
rc=$?
tail -n 15 "$log"
echo "rc $rc"
echo "== bench/half $q"
timeout 300 "$b/bench/half" $q
echo "rc $?"
