#!/bin/bash
# tests/device_suite.sh — the whole test suite of an in-tree build on a machine where the build
# tree sits at another path and `make check` cannot run it (the lent GPU machine): every test
# program and script `make check` lists, with the environment it gives them, four at a time.
#
#   tests/device_suite.sh --prepare BUILD_DIR   (where the build was made: writes the list of
#                                                tests and their environment into BUILD_DIR)
#   tests/device_suite.sh BUILD_DIR [JOBS]      (anywhere: runs them, one line per test)
#                                                (DEVICE_SUITE_LOG=FILE: each line also there)
#
# BUILD_DIR is an in-tree build (static, so that it runs wherever it is copied). Each test's
# output goes to BUILD_DIR/tests/<name>.device.log; the last line is "suite on <device>: P
# passed, S skipped, F failed". Exit status 0 when nothing failed.
set -u
if [ "${1:-}" = --prepare ]; then
  b=$(cd "${2:?usage: device_suite.sh --prepare BUILD_DIR}" && pwd)
  printf 'include Makefile\ndevice-suite-list:\n\t@echo $(TESTS)\n\t@echo "$(AM_TESTS_ENVIRONMENT)"\n' |
    make -s -C "$b" -f - device-suite-list > "$b/tests/device_suite.txt"
  echo "$b" >> "$b/tests/device_suite.txt"
  exit 0
fi
b=$(cd "${1:?usage: device_suite.sh BUILD_DIR [JOBS]}" && pwd)
jobs=${2:-4}
list="$b/tests/device_suite.txt"
[ -r "$list" ] || { echo "no $list: run device_suite.sh --prepare where the build was made"; exit 2; }
tests=$(sed -n 1p "$list")
old=$(sed -n 3p "$list")
envline=$(sed -n 2p "$list" | sed "s#$old#$b#g")
export b envline
run_one() {
  t=$1
  start=$(date +%s%N)
  (cd "$b" && eval "$envline" && srcdir=. && export srcdir && timeout 600 "./$t") \
    > "$b/$t.device.log" 2>&1
  rc=$?
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  case $rc in 0) r=PASS ;; 77) r=SKIP ;; *) r="FAIL($rc)" ;; esac
  echo "$r $t ${ms}ms $(grep -E '^[0-9]+%:' "$b/$t.device.log" | tail -n 1)"
}
export -f run_one
# The suite on the other CPU implementations (tests/implementations.sh) belongs to the CPU
# machines' make check: on a GPU machine that also has PoCL it would run the whole suite eight
# more times on the CPU. OCAL_IMPL_DISABLED= (empty) in the environment runs it anyway.
export OCAL_IMPL_DISABLED=${OCAL_IMPL_DISABLED-the device suite runs the GPU, not the CPU implementations}
start=$(date +%s)
# Each line also goes to DEVICE_SUITE_LOG as its test ends, so a run cut short keeps them.
out=$(printf '%s\n' $tests | xargs -P "$jobs" -I{} bash -c 'run_one {}' |
  tee -a "${DEVICE_SUITE_LOG:-/dev/null}")
echo "$out"
p=$(grep -c '^PASS' <<< "$out")
s=$(grep -c '^SKIP' <<< "$out")
f=$(grep -c '^FAIL' <<< "$out")
dev=$("$b/tools/ocal" devices 2>/dev/null | grep -m1 -iE 'gpu|cpu' | sed 's/^ *//' | cut -c1-60)
echo "suite on ${dev:-this device}: $p passed, $s skipped, $f failed ($(( $(date +%s) - start )) s)"
[ "$f" -eq 0 ]
