#!/bin/bash
# bench/experiments/fft_columns_round.sh — do the four-step FFT's strided sides reach a copy's
# speed when they touch whole 128-byte pieces of a row? Sixteen columns per work-group
# (c=16: 128 bytes of f32 complex) at 2^20 x 128, the row-major intermediate (tt=0, one strided
# read instead of two) and 2-D transforms rows first (rows=1: both launches read rows and write
# transposed), each checked against a host DFT (fft_tune's "err"), beside cuFFT (torch.fft) and
# a baseline build's default plans in the same call.
#
#   OUT=DIR bench/experiments/fft_columns_round.sh NEW_BUILD [BASE_OCAL]
#
# NEW_BUILD: a build with tools/ocal and bench/experiments/fft_tune (`make experiments`);
# BASE_OCAL: the baseline's tools/ocal (optional). Writes to $OUT: torch.json (cuFFT),
# base.json and new.json (`ocal bench --suite fft`, default plans of the three shapes) and
# variants.jsonl (fft_tune, one line per variant and shape). About 110 s on an H100.
set -u
new=${1:?usage: OUT=DIR fft_columns_round.sh NEW_BUILD [BASE_OCAL]}
base=${2:-}
out=${OUT:?set OUT}
here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
torch=$here/../pytorch_reference.py
S=1048576x128,16777216x8,2d:4096x4096
t0=$(date +%s)
el() { echo "[$(($(date +%s) - t0)) s] $*"; }
el torch
timeout 40 python3 "$torch" --suite fft --json "$out/torch.json" > /dev/null 2>&1 || echo "torch failed"
if [ -n "$base" ]; then
  el base
  OCAL_CACHE_DIR=$(mktemp -d) OCAL_BENCH_FFT=default,$S timeout 25 "$base" bench --quiet \
    --suite fft --json "$out/base.json" > /dev/null || echo "base failed"
fi
el new
OCAL_CACHE_DIR=$(mktemp -d) OCAL_BENCH_FFT=default,$S timeout 25 "$new/tools/ocal" bench --quiet \
  --suite fft --json "$out/new.json" > /dev/null || echo "new failed"
v() { # label OCAL_FFT_FOURSTEP OCAL_FFT_FOURSTEP_TUNE fft_tune-shape...
  local label=$1 fs=$2 tune=$3
  shift 3
  [ $(($(date +%s) - t0)) -gt 108 ] && { echo "skip $label (time)"; return; }
  el "$label"
  OCAL_CACHE_DIR=$(mktemp -d) OCAL_FFT_FOURSTEP=$fs OCAL_FFT_FOURSTEP_TUNE=$tune timeout 12 \
    "$new/bench/experiments/fft_tune" "$label" "$@" >> "$out/variants.jsonl" 2>&1 ||
    echo "$label rc $?"
}
# fft_tune's shapes: 2 = 2^20 x 128, 3 = 2^24 x 8, 4 = 2-D 4096 x 4096
v auto auto "" 2 3 4
# 2^20 x 128: sixteen columns in pass 1; pass 2 likewise, with eight, or reading rows (tt=0)
v c16r4 1 c=16,r=4 2
v c16r4-tt0-c4r16 1 c=16,r=4,tt=0,c2=4,r2=16 2
v c16r4-tt0-c8r8 1 c=16,r=4,tt=0,c2=8,r2=8 2
v c16r4-c8r8 1 c=16,r=4,c2=8,r2=8 2
# ... with columns of 512 (64 KiB a group: two groups per multiprocessor may fit)
v n512-c16r4-tt0-c4r16 1 n1=512,c=16,r=4,tt=0,c2=4,r2=16 2
v n512-c16r4-tt0-c8r8 1 n1=512,c=16,r=4,tt=0,c2=8,r2=8 2
v n512-c16r4-c8r8 1 n1=512,c=16,r=4,c2=8,r2=8 2
v n2048-c8r8-tt0-c16r4 1 n1=2048,c=8,r=8,tt=0,c2=16,r2=4 2
v c16r8 1 c=16,r=8 2
# 2-D 4096^2 rows first: contiguous reads, 32-byte strided writes in both launches
v rows 1 rows=1 4
v rows-st2 1 rows=1,st=2 4
v rows-ld0 1 rows=1,ld=0 4
# 2^24 x 8: the row-major intermediate
v tt0 1 tt=0 3
v tt0-st2 1 tt=0,st=2 3
el torch-end
j=$(mktemp)
timeout 15 python3 "$torch" --suite fft --json "$j" > /dev/null 2>&1 &&
  python3 -c 'import json, sys
for r in json.load(open(sys.argv[1]))["records"]: print("torch-end", r["size"], r["us"])' "$j"
rm -f "$j"
el end
