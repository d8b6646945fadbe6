#!/bin/bash
# bench/experiments/scan_round.sh — the single-pass scan's GPU round in one call: bench/experiments/scan_probe (every
# variant of cl/scan.cl's sum_lookback for f32 at 2^28 and 2^24, checked, beside a device
# copy); with "lib", also `ocal bench --suite reduce`'s cumsum and copy rows with
# OCAL_SCAN=single and OCAL_SCAN=three (what the library runs: minutes more).
#
#   bench/experiments/scan_round.sh BUILD_DIR [quick|lib]
#
# BUILD_DIR is an in-tree build (static or not) with bench/experiments/scan_probe (and tools/ocal).
# "quick" runs small sizes (to try the script on PoCL). The probe's kernels are read from the
# source tree's cl/ (this script's ../cl), so a kernel edit needs no rebuild.
set -u
b=${1:?usage: scan_round.sh BUILD_DIR [quick]}
here=$(cd "$(dirname "$0")" && pwd)
cl="$here/../cl"
if [ "${2:-}" = quick ]; then
  export SCAN_SIZES=${SCAN_SIZES:-"20 16"} SCAN_REPS=${SCAN_REPS:-3}
fi
probe="$b/bench/scan_probe"
if [ ! -x "$probe" ]; then
  # A build from before the probe existed: compile it here (it needs only the ICD loader).
  probe=$(mktemp /tmp/scan_probe.XXXXXX)
  trap 'rm -f "$probe"' EXIT
  cc -O2 -o "$probe" "$here/scan_probe.c" -lOpenCL -lm || { echo "cannot build scan_probe"; exit 1; }
fi
echo "== bench/experiments/scan_probe (${SCAN_SIZES:-28 24})"
timeout 170 "$probe" "$cl"
echo "scan_probe rc $?"
if [ "${2:-}" = lib ]; then
  for plan in single three; do
    echo "== ocal bench --suite reduce, OCAL_SCAN=$plan (cumsum and copy rows)"
    OCAL_SCAN=$plan timeout 120 "$b/tools/ocal" bench --suite reduce 2>&1 | grep -i -E "cumsum|copy" | tail -6
  done
fi
