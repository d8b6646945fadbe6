#!/bin/sh
# Runs the example programs as a user would, at small sizes: each must pass its own checks
# against the host (exit 0), print its help, and refuse bad arguments with exit status 2.
set -eu
ex="$OCAL_EXAMPLES"
tmp="${TMPDIR:-/tmp}/ocal-examples.$$"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT

# Runs "$@" and fails unless it exits with status 2 (a bad argument) and says something.
refuses() {
  if "$@" > /dev/null 2> "$tmp/err"; then echo "accepted: $*"; exit 1; else rc=$?; fi
  if [ "$rc" -ne 2 ]; then echo "exit status $rc, not 2, for: $*"; cat "$tmp/err"; exit 1; fi
  if [ ! -s "$tmp/err" ]; then echo "no message for: $*"; exit 1; fi
}

for e in vector_dot array_sum fft_filter mlp_train; do
  "$ex/$e" --help | grep -q usage
  refuses "$ex/$e" --no-such-option
done

"$ex/vector_dot" --n 100003
refuses "$ex/vector_dot" --n 0

"$ex/array_sum" --n 1000000 --repeat 3
refuses "$ex/array_sum" --n -5

"$ex/fft_filter" --n 4096
refuses "$ex/fft_filter" --cutoff 3
refuses "$ex/fft_filter" --n 4096x

# The network: the device's first SGD steps against the host's, then two short epochs.
"$ex/mlp_train" --train 1536 --test 500 --batch 64 --epochs 2 --check-host 3 \
  --min-accuracy 70 --bench-steps 2 --bench-blocks 3 > "$tmp/mlp.log"
cat "$tmp/mlp.log"
grep -q "host check: 3 SGD steps.*: ok" "$tmp/mlp.log"
grep -q "^epoch 2:" "$tmp/mlp.log"
grep -q "us per step at batch 64 (median of 3 blocks of 2 steps" "$tmp/mlp.log"
refuses "$ex/mlp_train" --batch 0
refuses "$ex/mlp_train" --bench-steps 2 --bench-blocks 0
refuses "$ex/mlp_train" --lr fast
refuses "$ex/mlp_train" --idx-images "$tmp/none"
refuses "$ex/mlp_train" --train 10 --batch 64

# The IDX path: 400 4x4 images whose bright pixel column says the class, written as MNIST
# stores them (big-endian header, then bytes).
n=400
{ printf '\000\000\010\003\000\000\001\220\000\000\000\004\000\000\000\004'; i=0
  while [ $i -lt $n ]; do c=$((i % 10)); j=0
    while [ $j -lt 16 ]; do
      if [ $((j % 10)) -eq $c ]; then printf '\310'; else printf '\024'; fi; j=$((j + 1)); done
    i=$((i + 1)); done; } > "$tmp/images.idx"
{ printf '\000\000\010\001\000\000\001\220'; i=0
  while [ $i -lt $n ]; do c=$((i % 10)); printf "\\0$((c / 8))$((c % 8))"; i=$((i + 1)); done
} > "$tmp/labels.idx"
"$ex/mlp_train" --idx-images "$tmp/images.idx" --idx-labels "$tmp/labels.idx" --batch 32 \
  --hidden 32 --epochs 3 --lr 0.5 --check-host 2 --min-accuracy 50 | tee "$tmp/idx.log"
grep -q "16 features" "$tmp/idx.log"
refuses "$ex/mlp_train" --idx-images "$tmp/labels.idx" --idx-labels "$tmp/labels.idx"

echo "example checks passed"
