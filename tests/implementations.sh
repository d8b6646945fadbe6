#!/bin/bash
# Runs ocal's test programs on every CPU OpenCL implementation this machine has, and on PoCL
# under emulated device limits (OCAL_LIMITS profiles), and prints a table implementation x
# test program: PASS/FAIL/SKIP with the Check counts (passed/run).
#
# Each test process sees one implementation: OCL_ICD_VENDORS names its .icd file (a file in a
# temporary directory for Intel's runtime, which pip installs without registering it), so the
# ICD loader sees one platform and the tests' default device is that implementation's device.
# On a machine of two processors or more, two test processes run at once, each taking the next
# job (one test program on one implementation and pass) from one list whose first entries are
# the other vendors' first passes: Intel's compiles are most of this script's time
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
# $OCAL_IMPL_FIRST_ONLY names implementations that run their first pass alone (make check: the
# PoCL profiles, whose binaries PoCL loads back as pocl-warm shows).
# $OCAL_IMPL_WARM_SKIP names test programs the warm passes leave out; an entry IMPL:PROGRAM
# leaves the program out of IMPL's warm pass alone (make check: check_blas, whose time goes to
# CLBlast's own compiles, which no disk cache holds, and on Intel's runtime, which compiles a
# binary it loads back again, the programs of ocal's own kernel families: see Makefile.am).
# The PoCL profiles compile with -cl-opt-disable but for the programs $OCAL_IMPL_OPTIMIZED
# names (default: check_fft_fourstep and check_sparse, whose kernels lose more time run
# unoptimised than their compiles save).
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

# first_only NAME: whether $OCAL_IMPL_FIRST_ONLY names the implementation.
first_only() { [[ " ${OCAL_IMPL_FIRST_ONLY:-} " == *" $1 "* ]]; }
is_pocl() { case "$1" in pocl | pocl+* | pocl-warm) return 0 ;; esac; return 1; }

# The work is one job a test program, implementation and pass: jobs holds
# "name|icd|extra|pass|program|dependency", where a warm pass's job depends on the first-pass
# job of its implementation and program (its index; -1: none). Every first pass comes before
# the warm passes, the other vendors' (their compiles are most of this script's time) before
# PoCL's; pocl-warm comes last (on the cache the rest of make check filled).
ordered=()
for i in "${chosen[@]}"; do is_pocl "${i%%|*}" || ordered+=("$i"); done
for i in "${chosen[@]}"; do is_pocl "${i%%|*}" && ordered+=("$i"); done
jobs=()
declare -A first_of
for i in "${ordered[@]}"; do
  IFS='|' read -r name icd extra <<< "$i"
  [ "$name" = pocl-warm ] && continue
  for p in "${progs[@]}"; do
    first_of["$name|$p"]=${#jobs[@]}
    jobs+=("$name|$icd|$extra|first|$p|-1")
  done
done
for i in "${ordered[@]}"; do
  IFS='|' read -r name icd extra <<< "$i"
  [ "$name" != pocl-warm ] && first_only "$name" && continue
  for p in "${progs[@]}"; do jobs+=("$name|$icd|$extra|warm|$p|${first_of["$name|$p"]:--1}"); done
done
columns=()
for i in "${chosen[@]}"; do
  name=${i%%|*}
  columns+=("$name")
  [ "$name" = pocl-warm ] || first_only "$name" || columns+=("$name warm")
done

# run_job N: job N. Its cell goes to $tmp/cells ("column|program|cell" lines), its seconds to
# $tmp/secs ("column|seconds"), a failure to $tmp/failed; its messages to stdout. Each line is
# one short write, so two workers never tear each other's lines.
run_job() {
  local name icd extra pass p dep col t log start rc secs counts total fails errs c
  IFS='|' read -r name icd extra pass p dep <<< "${jobs[$1]}"
  col=$name
  [ "$pass" = warm ] && [ "$name" != pocl-warm ] && col="$name warm"
  t=$(basename "$p")
  if [ "$pass" = warm ] && [[ " ${OCAL_IMPL_WARM_SKIP:-} " == *" $t "* || " ${OCAL_IMPL_WARM_SKIP:-} " == *" $name:$t "* ]]; then
    echo "$col|$t|not run" >> "$tmp/cells"
    return
  fi
  log="$tmp/${col// /.}.$t.log"
  # Intel's first pass compiles without the runtime's vectorizer unless the environment says
  # otherwise: its compiles are most of this script's time, and 2.4x shorter without it; the
  # faults Intel's runtime found were its front end's (docs/portability.md). Its warm pass
  # keeps the runtime's defaults (docs/measurements.md#intel-vectorizer).
  if [ "$name" = intel ] && [ "$pass" = first ]; then
    extra="CL_CONFIG_CPU_VECTORIZER_MODE=${CL_CONFIG_CPU_VECTORIZER_MODE:-1} $extra"
  fi
  # PoCL under a profile compiles without optimisation (-cl-opt-disable through PoCL's
  # POCL_EXTRA_BUILD_FLAGS, unless the environment sets that), but for the programs
  # $OCAL_IMPL_OPTIMIZED names: on a cold cache these passes are mostly LLVM's optimiser, and
  # what they test is the planners' fallbacks under the emulated limits, not the code LLVM
  # makes (docs/measurements.md#pocl-profiles-unoptimised).
  if [[ $name == pocl+* ]] && [ -z "${POCL_EXTRA_BUILD_FLAGS+set}" ] &&
    [[ " ${OCAL_IMPL_OPTIMIZED-check_fft_fourstep check_sparse} " != *" $t "* ]]; then
    extra="POCL_EXTRA_BUILD_FLAGS=-cl-opt-disable $extra"
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
  echo "$col|$secs" >> "$tmp/secs"
  echo "implementations: $col $t: $c (${secs}s)"
}

# take: under a lock (mkdir is atomic), the first job nobody took whose dependency is done:
# its number, "wait" while the jobs left wait for their dependencies, "none" when all are taken.
take() {
  local k dep left=0
  until mkdir "$tmp/lock" 2> /dev/null; do sleep 0.05; done
  for k in "${!jobs[@]}"; do
    [ -e "$tmp/taken.$k" ] && continue
    left=1
    dep=${jobs[$k]##*|}
    if [ "$dep" -lt 0 ] || [ -e "$tmp/done.$dep" ]; then
      touch "$tmp/taken.$k"
      rmdir "$tmp/lock"
      echo "$k"
      return
    fi
  done
  rmdir "$tmp/lock"
  if [ $left -eq 1 ]; then echo wait; else echo none; fi
}

worker() {
  local k
  while k=$(take); [ "$k" != none ]; do
    if [ "$k" = wait ]; then sleep 1; continue; fi
    run_job "$k"
    touch "$tmp/done.$k"
  done
}

# Two workers where the machine has two processors (the other vendors' long compiles then
# share the machine with the PoCL runs and with each other), else one.
touch "$tmp/cells" "$tmp/secs"
if [ "$(nproc 2> /dev/null || echo 1)" -ge 2 ]; then
  worker > "$tmp/worker1.out" 2>&1 &
  worker
  wait
  cat "$tmp/worker1.out"
else
  worker
fi
failed=0
[ -e "$tmp/failed" ] && failed=1
declare -A cell
while IFS='|' read -r col t c; do cell["$col,$t"]=$c; done < "$tmp/cells"
summary=()
for c in "${columns[@]}"; do
  secs=0
  while IFS='|' read -r col n; do [ "$col" = "$c" ] && secs=$((secs + n)); done < "$tmp/secs"
  summary+=("$c ${secs}s")
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
printf 'implementations: seconds per pass (the sum of its programs'"'"' times):'
printf ' %s;' "${summary[@]}"
echo
exit $failed
