#!/bin/sh
# `ocal bench` end to end at CI sizes: the results file is valid JSON of the documented format
# with every suite in it, the Markdown table has a row per figure, --compare prints a ratio for
# every figure, --from reads a results file back unchanged, --plot draws charts (or, only where
# gnuplot truly is absent, says so), bad arguments fail with a message (`ocal tune gemm`'s
# too), every command's --help prints its usage, and the bench/
# programs built on the same suites print one JSON object per line. Tests do not judge speed.
set -eu
tool=${OCAL_TOOL:-./tools/ocal}
bench=${OCAL_BENCH:-./bench}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ocal-bench-test-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "bench_tool: $*"
  exit 1
}
have_python=0
if command -v python3 > /dev/null 2>&1; then have_python=1; fi

echo "== ocal bench --quick"
"$tool" bench --quick --json "$tmp/run.json" --markdown "$tmp/run.md" 2> "$tmp/progress.log" ||
  { cat "$tmp/progress.log"; fail "ocal bench --quick failed"; }
cat "$tmp/progress.log"
for suite in bandwidth elementwise reduce gemm fft cache sparse; do
  grep -q "ocal bench: $suite done" "$tmp/progress.log" || fail "no progress line for $suite"
done

# The results file: strict JSON (Python's parser), the documented keys and types, all suites.
if [ $have_python -eq 1 ]; then
  python3 - "$tmp/run.json" > "$tmp/count" << 'PY'
import json, math, sys
doc = json.load(open(sys.argv[1]))
assert doc["format"] == "ocal-bench-1", doc.get("format")
for key in ("impl", "ocal_version", "device", "platform", "driver", "date"):
    assert isinstance(doc[key], str) and doc[key], key
assert doc["quick"] is True
recs = doc["records"]
assert recs, "no records"
for r in recs:
    for key in ("suite", "op", "dtype", "size", "metric", "unit"):
        assert isinstance(r[key], str) and r[key], (key, r)
    for key in ("n", "value"):
        assert isinstance(r[key], (int, float)) and math.isfinite(r[key]), (key, r)
    assert r["value"] > 0, r
    if "ratio_to_copy" in r:
        assert r["ratio_to_copy"] > 0 and r["unit"] == "GB/s", r
suites = {r["suite"] for r in recs}
assert suites == {"bandwidth", "elementwise", "reduce", "gemm", "fft", "cache", "sparse"}, suites
keys = [(r["suite"], r["op"], r["dtype"], r["size"], r["metric"]) for r in recs]
assert len(keys) == len(set(keys)), "two records share a key"
assert any(r["op"] == "copy" and r["suite"] == "bandwidth" for r in recs)
print(len(recs))
PY
  records=$(cat "$tmp/count")
else
  echo "(python3 not found: the results file is checked by ocal's own parser only)"
  records=$(grep -c '"suite":' "$tmp/run.json")
fi
echo "$records figures"
[ "$records" -gt 50 ] || fail "only $records figures"

# The Markdown table: a header and one row per figure.
grep -q '^| suite | op | dtype | size | metric | ocal | unit | vs copy |$' "$tmp/run.md" ||
  fail "no Markdown header"
rows=$(grep -c '^| [a-z]* | ' "$tmp/run.md")
[ "$rows" -eq $((records + 1)) ] || fail "Markdown has $rows rows for $records figures"

# --from reads the file back; writing it again gives the same bytes.
"$tool" bench --from "$tmp/run.json" --json "$tmp/again.json" || fail "--from failed"
cmp "$tmp/run.json" "$tmp/again.json" || fail "--from changed the results"

# --compare against itself: one ratio line per figure, each exactly 1.
"$tool" bench --from "$tmp/run.json" --compare "$tmp/run.json" > "$tmp/self.txt" ||
  fail "--compare failed"
[ "$(grep -c ' vs .* ratio 1\.000$' "$tmp/self.txt")" -eq "$records" ] ||
  { cat "$tmp/self.txt"; fail "--compare of a file with itself: not one ratio 1.000 per figure"; }
grep -q "^$records of $records figures matched" "$tmp/self.txt" || fail "no summary line"

# --compare of a new run of one suite against the first: a ratio for each of its figures.
"$tool" bench --quick --quiet --suite bandwidth --compare "$tmp/run.json" \
  --markdown "$tmp/cmp.md" > "$tmp/cmp.txt" || fail "--compare of a second run failed"
cat "$tmp/cmp.txt"
new=$(grep -c '^bandwidth ' "$tmp/cmp.txt")
[ "$new" -gt 3 ] && [ "$(grep -c '^bandwidth .* ratio [0-9.]*$' "$tmp/cmp.txt")" -eq "$new" ] ||
  fail "--compare of a second run: not a ratio per figure"
grep -q '| peer | speed ratio |$' "$tmp/cmp.md" || fail "no peer columns in the Markdown"

# --plot: charts where gnuplot is installed; elsewhere a clear refusal.
if command -v gnuplot > /dev/null 2>&1; then
  "$tool" bench --from "$tmp/run.json" --compare "$tmp/run.json" --plot "$tmp/charts" \
    > /dev/null || fail "--plot failed"
  for chart in elementwise reduce gemm fft; do
    [ -s "$tmp/charts/$chart.png" ] || fail "no $chart.png"
    head -c 4 "$tmp/charts/$chart.png" | grep -q PNG || fail "$chart.png is not a PNG"
  done
else
  if "$tool" bench --from "$tmp/run.json" --plot "$tmp/charts" 2> "$tmp/err"; then
    fail "--plot succeeded without gnuplot"
  fi
  grep -q "needs gnuplot" "$tmp/err" || fail "--plot without gnuplot: no clear message"
fi

# Bad arguments: non-zero exit and a message naming the problem.
echo '{"format": "ocal-bench-1", "records": [{"suite": "x"' > "$tmp/broken.json"
for args in "--suite nonsense" "--suite" "--max-log2 99" "--json" "--frobnicate" \
  "--from $tmp/missing.json" "--from $tmp/broken.json" "--from $tmp/run.json --quick" \
  "--compare $tmp/broken.json --from $tmp/run.json"; do
  # shellcheck disable=SC2086
  if "$tool" bench $args > /dev/null 2> "$tmp/err"; then fail "accepted: ocal bench $args"; fi
  grep -q "ocal bench" "$tmp/err" || fail "no message for: ocal bench $args"
done
"$tool" bench --help | grep -q -- "--compare FILE" || fail "--help does not list --compare"
# A narrowing variable with a value the suite does not know.
for v in OCAL_BENCH_REDUCE=bogus:reduce OCAL_BENCH_SPARSE=bogus:sparse \
  OCAL_BENCH_FFT=default,bogus:fft; do
  if env "${v%%:*}" "$tool" bench --quick --suite "${v#*:}" > /dev/null 2> "$tmp/err"; then
    fail "accepted: ${v%%:*}"
  fi
  grep -q "bogus" "$tmp/err" || fail "${v%%:*}: no message naming the value"
done
# `ocal tune gemm` alike, before any device work: the value and what the option takes.
for args in "--precision 16:'16': it takes 32 or 64" "--budget abc:'abc': it takes a number" \
  "--size 0:'0': it takes a whole number" "--budget:(no value)" "--frobnicate:unknown"; do
  # shellcheck disable=SC2086
  if "$tool" tune gemm ${args%%:*} > /dev/null 2> "$tmp/err"; then
    fail "accepted: ocal tune gemm ${args%%:*}"
  fi
  grep -q -- "${args#*:}" "$tmp/err" || fail "ocal tune gemm ${args%%:*}: message '$(cat "$tmp/err")'"
done
"$tool" tune gemm --help | grep -q -- "--no-store" || fail "tune gemm --help does not list --no-store"
# Every command takes --help: their usage on stdout, exit 0, no device work.
for cmd in devices info demo doctor tune bench; do
  "$tool" "$cmd" --help > "$tmp/help" 2> "$tmp/err" || fail "ocal $cmd --help: exit $?: $(cat "$tmp/err")"
  grep -q "^usage: ocal $cmd" "$tmp/help" || fail "ocal $cmd --help: no usage line"
done

# The bench/ programs: one JSON object per line (kernel_cache runs itself a second time).
for prog in elementwise kernel_cache; do
  "$bench/$prog" --quick > "$tmp/$prog.jsonl" || fail "bench/$prog --quick failed"
  [ -s "$tmp/$prog.jsonl" ] || fail "bench/$prog printed nothing"
  if [ $have_python -eq 1 ]; then
    python3 -c 'import json, sys
for line in open(sys.argv[1]):
    assert "suite" in json.loads(line), line' "$tmp/$prog.jsonl" || fail "bench/$prog: bad JSON"
  fi
done
if "$bench/elementwise" --frobnicate 2> /dev/null; then fail "bench/elementwise took a bad flag"; fi
echo "ocal bench checks passed"
