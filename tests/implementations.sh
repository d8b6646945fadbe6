#!/bin/bash
# Runs ocal's test programs on every CPU OpenCL implementation this machine has, and on PoCL
# under emulated device limits (OCAL_LIMITS profiles), and prints a table implementation x
# test program: PASS/FAIL/SKIP with the Check counts (passed/run).
#
# Each test process sees one implementation: OCL_ICD_VENDORS names its .icd file (a file in a
# temporary directory for Intel's runtime, which pip installs without registering it), so the
# ICD loader sees one platform and the tests' default device is that implementation's device.
# On a machine of two processors or more, the other vendors' runtimes run beside the PoCL runs
# (two test processes at once): Intel's compiles are most of this script's time
# (docs/measurements.md#portability has the times).
#
#   tests/implementations.sh [--list] [IMPL...]     (from the build directory)
#
# IMPL is one of the names --list prints (pocl, intel, rusticl, pocl+amd, pocl+intel-igpu,
# pocl+mobile, pocl-warm); the default is every one found, less those in $OCAL_IMPL_SKIP (make
# check sets pocl there, as the rest of make check is the plain PoCL run). $OCAL_IMPL_TESTS
# narrows the test programs (names such as check_blas). Exit status: 0 when nothing failed, 1
# when a test program failed, 77 (skipped) when the check is turned off ($OCAL_IMPL_DISABLED
# says why) or no implementation is there to run.
#
# Each implementation runs the programs twice on the kernel cache of $OCAL_CACHE_DIR: the
# first pass meets the cache as it is (empty in a fresh build tree), the second ("warm") finds
# every program there, so it takes the path a user's second run takes: binaries loaded back
# from the disk cache, which some drivers give back with less than they were built with.
# pocl-warm is the plain PoCL run's warm pass alone: one pass on the cache the rest of make
# check filled (it runs last, so under make check -j the plain run has had the most time).
# $OCAL_IMPL_WARM_SKIP names test programs the warm passes leave out (make check: check_blas,
# whose time goes to CLBlast's own compiles, which no disk cache holds: warm, it repeats its
# first pass).
set -u

if [ -n "${OCAL_IMPL_DISABLED:-}" ]; then
  echo "implementations: skipped: $OCAL_IMPL_DISABLED"
  exit 77
fi

builddir=.
if [ -n "${OCAL_TOOL:-}" ]; then builddir=$(dirname "$(dirname "$OCAL_TOOL")"); fi
vendors=${OCAL_SYSTEM_VENDORS:-/etc/OpenCL/vendors}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Intel's CPU runtime from PyPI (intel-opencl-rt) puts libintelocl.so in the lib directory of
# the Python installation it was installed into (or the user base for --user installs);
# OCAL_INTEL_OCL_LIB names it directly.
find_intel() {
  if [ -n "${OCAL_INTEL_OCL_LIB:-}" ]; then echo "$OCAL_INTEL_OCL_LIB"; return; fi
  command -v python3 > /dev/null || return
  # sysconfig's data path is where pip puts a wheel's data files (/usr/local for Debian's
  # own Python, the prefix of a virtual environment or pyenv).
  for d in $(python3 -c 'import sys, site, sysconfig; print(sysconfig.get_path("data"), sys.prefix, site.USER_BASE)' 2> /dev/null) \
           /usr/local /opt/intel/oneapi/lib /opt/intel/oclcpuexp; do
    if [ -f "$d/lib/libintelocl.so" ]; then echo "$d/lib/libintelocl.so"; return; fi
    if [ -f "$d/libintelocl.so" ]; then echo "$d/libintelocl.so"; return; fi
  done
}

# name|OCL_ICD_VENDORS|extra environment
impls=()
[ -f "$vendors/pocl.icd" ] && impls+=("pocl|$vendors/pocl.icd|")
intel=$(find_intel)
if [ -n "$intel" ]; then
  mkdir -p "$tmp/intel"
  echo "$intel" > "$tmp/intel/intel.icd"
  impls+=("intel|$tmp/intel|")
fi
# Mesa's rusticl exposes llvmpipe (a CPU rasteriser with an OpenCL front) only when asked.
[ -f "$vendors/rusticl.icd" ] && impls+=("rusticl|$vendors/rusticl.icd|RUSTICL_ENABLE=llvmpipe")
if [ -f "$vendors/pocl.icd" ]; then
  for p in amd intel-igpu mobile; do impls+=("pocl+$p|$vendors/pocl.icd|OCAL_LIMITS=$p"); done
  impls+=("pocl-warm|$vendors/pocl.icd|")
fi

if [ "${1:-}" = "--list" ]; then
  for i in "${impls[@]}"; do IFS='|' read -r n v e <<< "$i"; echo "$n  OCL_ICD_VENDORS=$v $e"; done
  exit 0
fi

wanted=("$@")
chosen=()
for i in "${impls[@]}"; do
  n=${i%%|*}
  if [ ${#wanted[@]} -gt 0 ]; then
    for w in "${wanted[@]}"; do [ "$w" = "$n" ] && chosen+=("$i"); done
  else
    skip=0
    for s in ${OCAL_IMPL_SKIP:-}; do [ "$s" = "$n" ] && skip=1; done
    [ $skip -eq 0 ] && chosen+=("$i")
  fi
done
if [ ${#chosen[@]} -eq 0 ]; then
  echo "implementations: skipped: none of the implementations asked for is installed"
  exit 77
fi

progs=()
if [ -n "${OCAL_IMPL_TESTS:-}" ]; then
  for t in $OCAL_IMPL_TESTS; do progs+=("$builddir/tests/$t"); done
else
  for t in "$builddir"/tests/check_*; do
    case "$t" in *.o | *.c) continue ;; esac
    [ -x "$t" ] && progs+=("$t")
  done
fi

# run_impl ENTRY: the passes of one implementation. Its cells go to $tmp/cells ("column|program|
# cell" lines), its passes' times to $tmp/times.NAME ("column|seconds"), a failure to
# $tmp/failed; its messages to stdout.
run_impl() {
  local name icd extra passes pass col pass_start p t log start rc secs counts total fails errs c
  IFS='|' read -r name icd extra <<< "$1"
  passes="first warm"
  [ "$name" = pocl-warm ] && passes=warm
  for pass in $passes; do
    col=$name
    [ "$pass" = warm ] && [ "$name" != pocl-warm ] && col="$name warm"
    pass_start=$(date +%s)
    for p in "${progs[@]}"; do
      t=$(basename "$p")
      log="$tmp/${col// /.}.$t.log"
      if [ "$pass" = warm ] && [[ " ${OCAL_IMPL_WARM_SKIP:-} " == *" $t "* ]]; then
        echo "$col|$t|not run" >> "$tmp/cells"
        continue
      fi
      start=$(date +%s)
      # shellcheck disable=SC2086 # extra is a list of VAR=value words
      env OCL_ICD_VENDORS="$icd" OCAL_DEVICE= $extra timeout 900 "$p" > "$log" 2>&1
      rc=$?
      secs=$(($(date +%s) - start))
      counts=$(sed -n 's/^[0-9]*%: Checks: \([0-9]*\), Failures: \([0-9]*\), Errors: \([0-9]*\).*/\1 \2 \3/p' "$log" | tail -1)
      read -r total fails errs <<< "${counts:-0 0 0}"
      if [ $rc -eq 77 ]; then
        c="SKIP"
      elif [ $rc -eq 0 ]; then
        c="PASS $((total - fails - errs))/$total"
      else
        c="FAIL $((total - fails - errs))/$total"
        touch "$tmp/failed"
        echo "=== $col: $t failed (exit $rc); its failures:"
        grep -E ":[EF]:|rror|ssert" "$log" | head -40
      fi
      echo "$col|$t|$c" >> "$tmp/cells"
      echo "implementations: $col $t: $c (${secs}s)"
    done
    echo "$col|$(($(date +%s) - pass_start))s" >> "$tmp/times.$name"
  done
}

# Two at once where the machine has two processors: the other vendors' runtimes (their
# compiles are most of this script's time) beside the PoCL runs, which keep their order
# (pocl-warm last, on the cache the rest of make check filled). Each line of $tmp/cells is
# one short write, so the two never tear each other's lines.
others=() pocls=()
for i in "${chosen[@]}"; do
  case "${i%%|*}" in pocl | pocl+* | pocl-warm) pocls+=("$i") ;; *) others+=("$i") ;; esac
done
if [ ${#others[@]} -gt 0 ] && [ ${#pocls[@]} -gt 0 ] && [ "$(nproc 2> /dev/null || echo 1)" -ge 2 ]; then
  (for i in "${others[@]}"; do run_impl "$i"; done) > "$tmp/others.out" 2>&1 &
  for i in "${pocls[@]}"; do run_impl "$i"; done
  wait
  cat "$tmp/others.out"
else
  for i in "${chosen[@]}"; do run_impl "$i"; done
fi
failed=0
[ -e "$tmp/failed" ] && failed=1
declare -A cell
while IFS='|' read -r col t c; do cell["$col,$t"]=$c; done < "$tmp/cells"
columns=()
summary=()
for i in "${chosen[@]}"; do
  name=${i%%|*}
  while IFS='|' read -r col secs; do
    columns+=("$col")
    summary+=("$col $secs")
  done < "$tmp/times.$name"
done

# The table: one row per test program, one column per implementation and pass.
echo
printf '%-22s' "test program"
for c in "${columns[@]}"; do printf ' | %-16s' "$c"; done
echo
for p in "${progs[@]}"; do
  t=$(basename "$p")
  printf '%-22s' "$t"
  for c in "${columns[@]}"; do printf ' | %-16s' "${cell["$c,$t"]}"; done
  echo
done
echo
printf 'implementations: time per pass:'
printf ' %s;' "${summary[@]}"
echo
exit $failed
