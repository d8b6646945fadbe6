#!/bin/bash
# bench/experiments/sparse_gpu_round.sh — the sparse area's whole GPU round in one call: the sparse tests,
# every SpMV kernel variant on the bench matrices, the full sparse suite, PyTorch's figures
# and the comparison table.
#
#   bench/experiments/sparse_gpu_round.sh OUT_DIR [BUILD_DIR [quick]]
#
# BUILD_DIR (default: the current directory) is an in-tree build (static or not) with
# tools/ocal, tests/check_sparse and bench/pytorch_reference.py. "quick" runs the suites
# at CI sizes (to try the script on PoCL). OUT_DIR receives at most seven files:
#   check.log      the LOBPCG profile lines and the summary of tests/check_sparse
#   variants.json  every variant's SpMV records in one ocal-bench-1 file, the variant
#                  in each record's "size" ("lap2d:16777216@stream")
#   ocal.json      the full sparse suite with the default rule
#   torch.json     bench/pytorch_reference.py --suite sparse
#   compare.md     ocal.json beside torch.json
#   table.txt      the compact variant x matrix table (GB/s), also printed
# Output stays short: the test summary, the table and the comparison.
set -u
out=${1:?usage: sparse_gpu_round.sh OUT_DIR [BUILD_DIR]}
b=${2:-.}
q=
[ "${3:-}" = quick ] && q=--quick
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ocal="$b/tools/ocal"

echo "== tests/check_sparse"
timeout 180 "$b/tests/check_sparse" >"$tmp/check.log" 2>&1
echo "rc $?"
{ grep 'lobpcg profile' "$tmp/check.log"; grep -v 'lobpcg profile' "$tmp/check.log" | tail -n 3; } | tee "$out/check.log"

# The variants: the existing kernels (scalar, CSR-vector with the lanes from the mean and
# with 4 and 8 lanes, the two-bin adaptive split) and CSR-stream with its default staging
# size and two others.
variants="auto scalar vector vector4 vector8 adaptive stream stream512 stream2048"
for k in $variants; do
  if [ "$k" = auto ]; then
    env -u OCAL_SPMV OCAL_BENCH_SPARSE=spmv timeout 90 "$ocal" bench $q --suite sparse --quiet \
      --json "$tmp/spmv-$k.json" >/dev/null 2>"$tmp/spmv-$k.err"
  else
    OCAL_SPMV=$k OCAL_BENCH_SPARSE=spmv timeout 90 "$ocal" bench $q --suite sparse --quiet \
      --json "$tmp/spmv-$k.json" >/dev/null 2>"$tmp/spmv-$k.err"
  fi
  rc=$?
  [ $rc -eq 0 ] || { echo "variant $k: rc $rc"; tail -n 3 "$tmp/spmv-$k.err"; }
done

python3 - "$tmp" "$out" $variants <<'PY'
import json, os, sys
tmp, out, variants = sys.argv[1], sys.argv[2], sys.argv[3:]
merged, table, mats = None, {}, []
for k in variants:
    p = os.path.join(tmp, "spmv-%s.json" % k)
    try:
        d = json.load(open(p))
    except Exception as e:  # a variant that failed leaves a gap in the table
        table[k] = {}
        continue
    if merged is None:
        merged = dict(d)
        merged["records"] = []
    row = {}
    for r in d["records"]:
        if r.get("op") != "spmv" or r.get("metric") != "bandwidth":
            continue
        m = r["size"].split(":")[0]
        if m not in mats:
            mats.append(m)
        kern = r.get("note", "").split("kernel ")[-1]
        row[m] = (r["value"], r.get("ratio_to_copy"), kern)
        rr = dict(r)
        rr["size"] = "%s@%s" % (r["size"], k)
        merged["records"].append(rr)
    table[k] = row
if merged is not None:
    json.dump(merged, open(os.path.join(out, "variants.json"), "w"), indent=0)
lines = ["SpMV GB/s (x copy) [kernel run]", "%-11s" % "variant" + "".join("%-28s" % m for m in mats)]
for k in variants:
    cells = []
    for m in mats:
        c = table.get(k, {}).get(m)
        cells.append("%-28s" % ("-" if c is None else "%7.0f (%.2f) [%s]" % (c[0], c[1] or 0, c[2])))
    lines.append("%-11s" % k + "".join(cells))
open(os.path.join(out, "table.txt"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY

echo "== full sparse suite (default rule)"
env -u OCAL_SPMV timeout 120 "$ocal" bench $q --suite sparse --quiet --json "$out/ocal.json" \
  >/dev/null 2>"$tmp/ocal.err" || { echo "suite failed"; tail -n 3 "$tmp/ocal.err"; }
echo "== PyTorch"
timeout 120 python3 "$b/bench/pytorch_reference.py" $q --suite sparse --json "$out/torch.json" \
  >/dev/null 2>"$tmp/torch.err" || { echo "pytorch failed"; tail -n 3 "$tmp/torch.err"; }
if [ -s "$out/ocal.json" ] && [ -s "$out/torch.json" ]; then
  "$ocal" bench --from "$out/ocal.json" --compare "$out/torch.json" --markdown "$out/compare.md" \
    >/dev/null 2>&1
  grep '^| sparse' "$out/compare.md" | cut -d'|' -f3-6,8,10-11
fi
