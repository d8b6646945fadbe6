#!/bin/bash
# bench/experiments/blas_engine_round.sh — the GPU check of the BLAS engine table and the settings module
# (issue 14) in one call: the rule's choices on this device, the BLAS tests, and the GEMM
# suite of `ocal bench` beside the same suite from a build of the previous code.
#
#   bench/experiments/blas_engine_round.sh OUT_DIR NEW_BUILD [OLD_BUILD [quick]]
#
# NEW_BUILD and OLD_BUILD are in-tree builds (static or not) with tools/ocal (and, for
# NEW_BUILD, tests/check_blas). The two suites run alternately, twice each, and the better
# of each pair is kept, so a slow first run (compiles, clocks) counts for neither. OUT_DIR
# receives new.json, old.json and compare.md; the script prints the rule check, the test
# summary and every GEMM/GEMV figure whose ratio new/old is below 0.97 (none expected).
set -u
out=${1:?usage: blas_engine_round.sh OUT_DIR NEW_BUILD [OLD_BUILD [quick]]}
new=${2:?usage: blas_engine_round.sh OUT_DIR NEW_BUILD [OLD_BUILD [quick]]}
old=${3:-}
q=
[ "${4:-}" = quick ] && q=--quick
mkdir -p "$out"
unset OCAL_GEMM OCAL_GEMV OCAL_GEMM_SPLITK OCAL_GEMM_PRETRANSPOSE OCAL_GEMM_OWN_TILE \
  OCAL_GEMM_OWN_SPLITK OCAL_TUNING

echo "== the rule on this device (tests/check_blas, case rule)"
CK_RUN_CASE=rule timeout 300 "$new/tests/check_blas" 2>&1 | tail -3
echo "== tests/check_blas"
timeout 900 "$new/tests/check_blas" 2>&1 | grep -E "^[0-9]+%|:[EF]:" | head -20

run() { # build, output file
  timeout 900 "$1/tools/ocal" bench $q --quiet --suite gemm --json "$2" > /dev/null 2>&1 ||
    echo "ocal bench failed in $1"
}
if [ -z "$old" ]; then
  run "$new" "$out/new.json"
  echo "== no OLD_BUILD: $out/new.json only"
  exit 0
fi
for round in 1 2; do
  run "$new" "$out/new$round.json"
  run "$old" "$out/old$round.json"
done
# The better of the two runs of each figure (higher is better for every GEMM/GEMV unit).
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
def best(a, b):
    ra, rb = json.load(open(a)), json.load(open(b))
    key = lambda r: (r.get("suite"), r.get("op"), r.get("dtype"), str(r.get("size")))
    m = {key(r): r for r in ra["records"]}
    for r in rb["records"]:
        k = key(r)
        if k not in m or r.get("value", 0) > m[k].get("value", 0):
            m[k] = r
    ra["records"] = list(m.values())
    return ra
for side in ("new", "old"):
    json.dump(best(f"{out}/{side}1.json", f"{out}/{side}2.json"), open(f"{out}/{side}.json", "w"))
n, o = json.load(open(f"{out}/new.json")), json.load(open(f"{out}/old.json"))
key = lambda r: (r.get("suite"), r.get("op"), r.get("dtype"), str(r.get("size")))
old = {key(r): r for r in o["records"]}
slow = 0
for r in n["records"]:
    p = old.get(key(r))
    if not p or not p.get("value"):
        continue
    ratio = r["value"] / p["value"]
    if ratio < 0.97:
        slow += 1
        print(f"SLOWER {r.get('op')} {r.get('size')}: {r['value']:.1f} against {p['value']:.1f} "
              f"{r.get('unit', '')} ({ratio:.3f})")
print(f"== {len(n['records'])} figures, {slow} slower than 0.97 of the old build")
PY
"$new/tools/ocal" bench --from "$out/new.json" --compare "$out/old.json" \
  --markdown "$out/compare.md" > /dev/null 2>&1
echo "== $out/compare.md"
