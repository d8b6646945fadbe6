#!/bin/sh
# ocal — what a cold start costs: `ocal demo` and bench/first_calls, each run three times in a
# fresh process with an empty disk cache (OCAL_CACHE_DIR) and an empty NVIDIA compute cache
# (CUDA_CACHE_PATH), both new `mktemp -d` directories per run: the state of a fresh machine.
# POCL_KERNEL_CACHE=0 keeps PoCL's own cache from hiding compiles (other drivers ignore it).
# Issue 14 asks for a cold demo within 3 s on the H100.
#
#   bench/experiments/cold_demo.sh BUILD_DIR [OTHER_BUILD_DIR]
#
# BUILD_DIR is a built tree (static or not) with tools/ocal and bench/first_calls. With a
# second build, the runs alternate between the two (A, B, A, B, ...), so a before/after
# comparison sees the same machine state; columns are A1 A2 A3 (B1 B2 B3).
# Prints two tables of milliseconds: the demo's steps (the "kernel cache" row is the fill's
# first call, the one that compiles) and the process's wall time, with the wall time of an
# `ocal devices` process beside it (the ICD loader starting every installed platform, a floor
# under any first context), then first_calls' lines (with the compiles of run 1 of each
# build: programs, kernels, KB of source and of binary).
# Exits 1 when a run fails or a check in it is wrong.
set -u
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 BUILD_DIR [OTHER_BUILD_DIR]" >&2
  exit 2
fi
builds=""
for d in "$@"; do
  if [ ! -e "$d/tools/ocal" ] || [ ! -e "$d/bench/first_calls" ]; then
    echo "$0: $d has no tools/ocal or bench/first_calls (build it first)" >&2
    exit 2
  fi
  builds="$builds $(cd "$d" && pwd)"
done
runs=${COLD_DEMO_RUNS:-3} # fewer for a quick look
work=$(mktemp -d) || exit 2
trap 'rm -rf "$work"' EXIT
status=0

now() { date +%s.%N; }

# run_cold OUT CMD...: one cold run; OUT gets its output, OUT.wall its wall time in ms.
run_cold() {
  out=$1
  shift
  c=$(mktemp -d) && cc=$(mktemp -d) || exit 2
  t0=$(now)
  env OCAL_CACHE_DIR="$c" CUDA_CACHE_PATH="$cc" POCL_KERNEL_CACHE=0 timeout 300 "$@" \
    > "$out" 2>&1
  rc=$?
  t1=$(now)
  rm -rf "$c" "$cc"
  echo "$t0 $t1" | awk '{ printf "%.1f\n", ($2 - $1) * 1000 }' > "$out.wall"
  if [ $rc -ne 0 ]; then
    echo "$0: '$*' failed (exit $rc):" >&2
    tail -5 "$out" >&2
    status=1
  fi
}

r=1
while [ $r -le $runs ]; do
  i=0
  for b in $builds; do
    i=$((i + 1))
    run_cold "$work/demo.$i.$r" "$b/tools/ocal" demo
    run_cold "$work/devices.$i.$r" "$b/tools/ocal" devices
  done
  r=$((r + 1))
done
r=1
while [ $r -le $runs ]; do
  i=0
  for b in $builds; do
    i=$((i + 1))
    run_cold "$work/first.$i.$r" "$b/bench/first_calls"
  done
  r=$((r + 1))
done

nb=$(echo $builds | wc -w)
i=0
for b in $builds; do
  i=$((i + 1))
  echo "build $(echo "$i" | tr 12 AB): $b"
done
head -1 "$work/demo.1.1"

# The tables: one row per step (labels from build A's first run), one column per run.
table() { # table KIND PARSER_AWK
  kind=$1
  files=""
  i=1
  while [ $i -le "$nb" ]; do
    r=1
    while [ $r -le $runs ]; do
      files="$files $work/$kind.$i.$r"
      r=$((r + 1))
    done
    i=$((i + 1))
  done
  # shellcheck disable=SC2086
  awk -v runs=$runs -v nb="$nb" "$2"'
    FNR == 1 { f++ }
    { if (parse($0)) { if (!(label in seen)) { seen[label] = ++nl; order[nl] = label }
                       ms[f, seen[label]] = val; if (extra != "" && !(seen[label] in ex)) ex[seen[label]] = extra } }
    END {
      printf "%-40s", ""
      for (b = 1; b <= nb; b++) for (q = 1; q <= runs; q++) printf "%10s", substr("AB", b, 1) q
      printf "\n"
      for (l = 1; l <= nl; l++) {
        printf "%-40s", order[l]
        for (k = 1; k <= f; k++) printf "%10s", ((k, l) in ms) ? ms[k, l] : "-"
        printf "%s\n", (l in ex) ? "  " ex[l] : ""
      }
    }' $files
}

echo "-- ocal demo, cold, ms (process: wall time of the whole process)"
for f in "$work"/demo.*.*; do
  case "$f" in *.wall) continue ;; esac
  echo "  process wall $(cat "$f.wall") ms" >> "$f"
  echo "  devices wall $(cat "$(echo "$f" | sed 's|/demo\.|/devices.|').wall") ms" >> "$f"
done
table demo '
  function parse(s,   m) {
    extra = ""
    if (s ~ /^  process wall /) { label = "process (wall)"; split(s, w, " "); val = w[3]; return 1 }
    if (s ~ /^  devices wall /) { label = "ocal devices, a process (wall)"; split(s, w, " "); val = w[3]; return 1 }
    if (match(s, /^  [a-z][a-z ]*[a-z] +(ok|FAIL) +[0-9.]+ ms/)) {
      t = substr(s, 3, RLENGTH - 2); sub(/ +(ok|FAIL) +[0-9.]+ ms$/, "", t); label = t
      v = substr(s, 3, RLENGTH - 2); sub(/ ms$/, "", v); n = split(v, w, " "); val = sprintf("%.1f", w[n])
      if (s ~ / FAIL /) val = val "!"
      if (label == "kernel cache" && match(s, /first call [0-9.]+ ms/)) {
        v = substr(s, RSTART + 11, RLENGTH - 14); val = sprintf("%.1f", v) }
      return 1
    }
    return 0
  }'

echo "-- bench/first_calls, cold, ms (compiles: build A run 1, then B run 1)"
table first '
  function parse(s,   w, n, rest) {
    extra = ""
    if (!match(s, / +[0-9.]+ ms/)) return 0
    label = substr(s, 1, RSTART - 1)
    n = split(substr(s, RSTART, RLENGTH), w, " "); val = w[1]
    rest = substr(s, RSTART + RLENGTH)
    if (rest ~ /WRONG/) val = val "!"
    if (match(rest, /compiled [0-9]+ \([^)]*\)/)) extra = substr(rest, RSTART, RLENGTH)
    return 1
  }'
# Build B's compiles, where there is a build B.
if [ "$nb" -eq 2 ]; then
  echo "-- build B's compiles (run 1)"
  sed -n 's/^\(.*[^ ]\) \{1,\}[0-9.]\{1,\} ms  \(compiled [0-9]* ([^)]*)\).*/\1: \2/p' \
    "$work/first.2.1"
fi
exit $status
