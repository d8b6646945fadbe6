#!/bin/bash
# bench/experiments/gemm_mma_round.sh — one round of cl/gemm_mma.cl on the GPU machine, in one call:
# PyTorch's matmul (TF32 on for f32; f16; bf16) at 2048^3, 4096^3 and 8192^3, then
# bench/experiments/gemm_mma_probe (probe kernel, every variant's check against a host reference, timing),
# then each variant's TFLOP/s as a ratio of PyTorch's in the same precision. Short output;
# about 4 minutes at most (PyTorch 60 s, the probe 140 s of work then its summary, 170 s hard).
#
#   bench/experiments/gemm_mma_round.sh BUILD_DIR [VARIANT ...]
#
# BUILD_DIR: a configured ocal build directory; bench/experiments/gemm_mma_probe is built there if missing.
# MMA_OPTS / MMA_SIZES pass through to the probe (see bench/experiments/gemm_mma_probe.c).
b=${1:?usage: gemm_mma_round.sh BUILD_DIR [VARIANT ...]}
shift
# Without names: round 2's variants first, then round 1's best of each precision as the
# reference (round 1's slow tf32, f16 and f16_cp are left out; name them to run them).
# The probe times each variant right after checking it, so a budget cut drops the last names.
[ $# -gt 0 ] || set -- f16_ldm_256_s3 f16_ldm_s4 bf16_ldm_256_s3 bf16_ldm_s4 \
  tf32_ldm_256_s3_ip tf32_ldm_s4_ip tf32_ldm_256_s3 tf32_ldm_s4 f16_cp_ldm bf16_cp_ldm tf32_cp \
  f16_ldm_r8 tf32_ldm
src=$(cd "$(dirname "$0")/.." && pwd)
probe=$b/bench/gemm_mma_probe own_probe=
if [ ! -x "$probe" ] && ! make -C "$b" -j8 bench/experiments/gemm_mma_probe >/dev/null 2>&1; then
  # A build directory from before bench/gemm_mma.mk: the program needs only OpenCL.
  probe=$(mktemp /tmp/ocal-mma-probe-bin-XXXXXX)
  own_probe=$probe
  cc -std=gnu11 -O2 -o "$probe" "$src/bench/gemm_mma_probe.c" -lOpenCL -lm ||
    { echo "build of gemm_mma_probe failed"; exit 1; }
fi
sizes=${MMA_SIZES:-2048,4096,8192}
torch_out=$(mktemp /tmp/ocal-mma-torch-XXXXXX)
probe_out=$(mktemp /tmp/ocal-mma-probe-XXXXXX)
trap 'rm -f "$torch_out" "$probe_out" ${own_probe:+"$own_probe"}' EXIT

timeout 60 python3 - "$sizes" >"$torch_out" 2>/dev/null <<'PY'
import sys
import torch
torch.backends.cuda.matmul.allow_tf32 = True
sizes = [int(s) for s in sys.argv[1].split(",")]
for name, dt in (("tf32", torch.float32), ("f16", torch.float16), ("bf16", torch.bfloat16)):
    row = []
    for s in sizes:
        a = torch.randn(s, s, device="cuda", dtype=dt)
        b = torch.randn(s, s, device="cuda", dtype=dt)
        c = torch.matmul(a, b)
        for _ in range(3):
            torch.matmul(a, b, out=c)
        torch.cuda.synchronize()
        reps = max(2, int(2e12 / (2 * s ** 3)))
        times = []
        for _ in range(5):
            e0 = torch.cuda.Event(enable_timing=True)
            e1 = torch.cuda.Event(enable_timing=True)
            e0.record()
            for _ in range(reps):
                torch.matmul(a, b, out=c)
            e1.record()
            torch.cuda.synchronize()
            times.append(e0.elapsed_time(e1) / 1e3 / reps)
        times.sort()
        row.append("%d %.1f" % (s, 2 * s ** 3 / times[2] / 1e12))
        del a, b, c
        torch.cuda.empty_cache()
    print("torch %-5s %s TFLOP/s" % (name, "  ".join(row)))
PY
[ -s "$torch_out" ] || echo "torch: not available (no ratios)"
cat "$torch_out"

MMA_BUDGET_S=${MMA_BUDGET_S:-140} timeout 170 "$probe" "$src/cl/gemm_mma.cl" "$@" | tee "$probe_out"
rc=${PIPESTATUS[0]}
echo "gemm_mma_probe exit status $rc"

# Ratios: each variant against PyTorch in its input precision.
python3 - "$torch_out" "$probe_out" <<'PY'
import sys
torch = {}
for line in open(sys.argv[1]):
    f = line.split()
    if f and f[0] == "torch":
        nums = f[2:-1]
        torch[f[1]] = {int(nums[i]): float(nums[i + 1]) for i in range(0, len(nums), 2)}
for line in open(sys.argv[2]):
    f = line.split()
    if not f or f[0] != "summary":
        continue
    name, nums = f[1], f[4:-1]
    ours = {int(nums[i]): float(nums[i + 1]) for i in range(0, len(nums), 2)}
    peer = "tf32" if name.startswith("tf32") else "bf16" if name.startswith("bf16") else "f16"
    if peer not in torch:
        continue
    parts = ["%d %.2f" % (s, ours[s] / torch[peer][s]) for s in sorted(ours) if torch[peer].get(s)]
    print("ratio %-16s vs torch %-5s %s" % (name, peer, "  ".join(parts)))
PY
exit $rc
