#!/bin/bash
# bench/compare_builds.sh — before/after of two builds on one machine, in one call: the same
# `ocal bench` suites run alternately (new, old, new, old, ...), ROUNDS times each, and the best
# run of each figure is kept, so a slow first run (compiles, clocks warming up) and the noise of
# launch-bound small sizes count for neither side.
#
#   bench/compare_builds.sh OUT_DIR NEW_BUILD OLD_BUILD [ROUNDS [SUITES [EXTRA_BENCH_ARGS...]]]
#
# NEW_BUILD and OLD_BUILD are in-tree builds with tools/ocal. ROUNDS defaults to 2, SUITES to
# every suite. OUT_DIR receives new.json, old.json (the best of each figure) and compare.txt:
# one line per figure, ratio new/old (rates: new/old; times: old/new, so > 1 is faster). The
# script prints a summary and every figure below 0.97 with its runs on both sides.
set -u
out=${1:?usage: compare_builds.sh OUT_DIR NEW_BUILD OLD_BUILD [ROUNDS [SUITES [ARGS...]]]}
new=${2:?new build}
old=${3:?old build}
rounds=${4:-2}
suites=${5:-bandwidth,elementwise,reduce,gemm,fft,cache,sparse}
shift 5 2>/dev/null || shift $#
mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
  for side in new old; do
    b=$new
    [ $side = old ] && b=$old
    # Each side keeps its own disk cache, so that "from disk" figures compare like with like,
    # and every run starts with an empty NVIDIA compute cache (other drivers ignore it): a
    # shared one would hand the second build the first one's compiles.
    mkdir -p "$out/cuda-$side$r"
    CUDA_CACHE_PATH="$out/cuda-$side$r" OCAL_CACHE_DIR="$out/cache-$side" timeout 1200 \
      "$b/tools/ocal" bench --quiet --suite "$suites" --json "$out/$side$r.json" "$@" \
      > /dev/null 2> "$out/$side$r.err" ||
      echo "ocal bench failed in $b (round $r): $(tail -n 2 "$out/$side$r.err")"
    rm -rf "$out/cuda-$side$r"
  done
done
python3 - "$out" <<'PY'
import glob, json, sys
out = sys.argv[1]
TIME_UNITS = {"us", "ms", "s"}
def key(r):
    return (r["suite"], r["op"], r.get("dtype"), str(r.get("size")), r["metric"], r.get("note", ""))
def load(side):
    runs, first = {}, None
    for f in sorted(glob.glob(f"{out}/{side}[0-9]*.json")):
        d = json.load(open(f))
        first = first or d
        for r in d["records"]:
            runs.setdefault(key(r), []).append(r)
    best = {}
    for k, rs in runs.items():
        lower = rs[0].get("unit") in TIME_UNITS
        best[k] = (min if lower else max)(rs, key=lambda r: r["value"])
    if first:
        first = dict(first, records=list(best.values()))
        json.dump(first, open(f"{out}/{side}.json", "w"), indent=1)
    return runs, best
nr, nb = load("new")
orr, ob = load("old")
lines, slow, ratios = [], [], []
for k in sorted(nb):
    if k not in ob or k[4] in ("iterations",):
        continue
    n, o = nb[k]["value"], ob[k]["value"]
    if n <= 0 or o <= 0:
        continue
    lower = nb[k].get("unit") in TIME_UNITS
    ratio = o / n if lower else n / o
    ratios.append(ratio)
    line = "%-11s %-16s %-4s %-12s %-14s %10.4g %10.4g %s  ratio %.3f" % (
        k[0], k[1], k[2] or "", k[3], k[4], n, o, nb[k].get("unit", ""), ratio)
    lines.append(line)
    if ratio < 0.97:
        slow.append(line + "   runs new " + " ".join("%.4g" % r["value"] for r in nr[k]) +
                    " | old " + " ".join("%.4g" % r["value"] for r in orr[k]))
open(f"{out}/compare.txt", "w").write("\n".join(lines) + "\n")
if ratios:
    ratios.sort()
    print("figures %d; ratio new/old: median %.3f, min %.3f, max %.3f; below 0.97: %d" % (
        len(ratios), ratios[len(ratios) // 2], ratios[0], ratios[-1], len(slow)))
print("\n".join(slow))
PY
