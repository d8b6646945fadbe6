#!/bin/sh
# Runs the elementwise benchmark at small sizes so that it cannot rot: it must finish and
# print a figure for every operation.
set -eu
out=$("$OCAL_BENCH/elementwise" --quick)
echo "$out"
for op in copy add mul_scalar relu exp axpy bias_add; do
  echo "$out" | grep -q "\"op\":\"$op\"" || { echo "no figure for $op"; exit 1; }
done
echo "$out" | grep -q elementwise_small || { echo "no small-call figures"; exit 1; }
