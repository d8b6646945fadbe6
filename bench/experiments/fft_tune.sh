#!/bin/bash
# bench/experiments/fft_tune.sh — compares VkFFT configurations on the fft suite's five shapes, one process
# per configuration (OCAL_VKFFT_TUNE is read at plan creation), and PyTorch's torch.fft before
# and after them in the same session. One JSON object per line on stdout.
#
#   bench/experiments/fft_tune.sh BUILD_DIR [CONFIG[@SHAPES] ...]
#
# CONFIG: "default" or "field=value,..."; SHAPES: bench/experiments/fft_tune's shape numbers, "3,5,6".
#
# Each configuration gets a fresh disk cache directory, so every plan time is a cold compile.
b=${1:?usage: fft_tune.sh BUILD_DIR [CONFIG ...]}
shift
here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
torch() {
  if python3 -c 'import torch' 2>/dev/null; then
    local j
    j=$(mktemp /tmp/ocal-fft-tune-XXXXXX.json)
    python3 "$here/pytorch_reference.py" --suite fft --json "$j" &&
      python3 -c 'import json, sys
for r in json.load(open(sys.argv[1]))["records"]:
    print(json.dumps({"label": "torch", "size": r["size"], "us": r["us"], "gflops": r["value"]}))' "$j"
    rm -f "$j"
  fi
}
torch
[ $# -eq 0 ] && set -- default
for arg in "$@"; do
  cfg=${arg%%@*}
  shapes=()
  [ "$cfg" != "$arg" ] && IFS=, read -r -a shapes <<<"${arg#*@}"
  d=$(mktemp -d /tmp/ocal-fft-tune-XXXXXX)
  tune=$cfg
  [ "$cfg" = default ] && tune=
  OCAL_CACHE_DIR=$d OCAL_VKFFT_TUNE=$tune "$b/bench/fft_tune" "$cfg" "${shapes[@]}"
  rm -rf "$d"
done
torch
