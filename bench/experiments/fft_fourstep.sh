#!/bin/bash
# bench/experiments/fft_fourstep.sh — ocal's four-step FFT (src/fft/fourstep.c) against VkFFT and torch.fft
# (cuFFT) on long 1-D C2C shapes, in one session. One JSON object per line on stdout.
#
#   bench/experiments/fft_fourstep.sh BUILD_DIR SHAPES [TUNE ...]
#
# SHAPES: bench/experiments/fft_tune's shape numbers, "2,3,5,6" (2^20 x 128, 2^24 x 8, 2^22 x 32,
# 2^21 x 64). TUNE: "vkfft" (OCAL_FFT_FOURSTEP=0), "auto" (the default rule) or an
# OCAL_FFT_FOURSTEP_TUNE string ("c=2,r=16", "n1=1024") run with OCAL_FFT_FOURSTEP=1;
# "TUNE@SHAPES" limits one to some shapes. torch.fft runs before and after. Each
# configuration gets a fresh disk cache directory (plan_ms is a cold compile).
b=${1:?usage: fft_fourstep.sh BUILD_DIR SHAPES [TUNE ...]}
all=${2:?usage: fft_fourstep.sh BUILD_DIR SHAPES [TUNE ...]}
shift 2
torch() {
  python3 - "$all" <<'PY' 2>/dev/null
import json, sys, time
import torch
lens = {2: (1 << 20, 128), 3: (1 << 24, 8), 5: (1 << 22, 32), 6: (1 << 21, 64), 9: (1 << 23, 16)}
for s in sys.argv[1].split(","):
    if int(s) not in lens:
        continue
    n, b = lens[int(s)]
    x = torch.randn(b, n, dtype=torch.complex64, device="cuda")
    y = torch.fft.fft(x)
    torch.cuda.synchronize()
    best = 1e30
    for _ in range(3):
        reps = 20
        t0 = time.perf_counter()
        for _ in range(reps):
            y = torch.fft.fft(x)
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - t0) / reps)
    print(json.dumps({"label": "torch", "size": "%dx%d" % (n, b), "us": round(best * 1e6, 2)}))
    del x, y
    torch.cuda.empty_cache()
PY
}
torch
[ $# -eq 0 ] && set -- vkfft auto
for arg in "$@"; do
  cfg=${arg%%@*}
  shapes=$all
  [ "$cfg" != "$arg" ] && shapes=${arg#*@}
  IFS=, read -r -a sh <<<"$shapes"
  d=$(mktemp -d /tmp/ocal-fft-4s-XXXXXX)
  case $cfg in
    vkfft) OCAL_CACHE_DIR=$d OCAL_FFT_FOURSTEP=0 "$b/bench/fft_tune" "$cfg" "${sh[@]}" ;;
    auto) OCAL_CACHE_DIR=$d "$b/bench/fft_tune" "$cfg" "${sh[@]}" ;;
    *) OCAL_CACHE_DIR=$d OCAL_FFT_FOURSTEP=1 OCAL_FFT_FOURSTEP_TUNE=$cfg "$b/bench/fft_tune" "$cfg" \
         "${sh[@]}" ;;
  esac
  rm -rf "$d"
done
torch
