#!/bin/sh
# Runs every kernel family ocal ships (tests/oclgrind_set.c: small sizes, each result checked
# against a host reference) under Oclgrind, which interprets each work-item and reports
# reads and writes outside a buffer, races in local and global memory, uses of uninitialised
# values and misuses of the OpenCL API. Passes only when the results are right and Oclgrind
# reported nothing at all (its reports go to standard error, which must stay empty).
#
# The kernels are built with -cl-opt-disable: Oclgrind 21.10's uninitialised-value check
# reports a vector built lane by lane from initialised values, (float4)(a, b, c, d), as
# uninitialised when Clang has optimised it into an insertelement chain starting from undef
# (docs/portability.md shows the minimal kernel); unoptimised, the same kernels are checked
# without that false report, and nothing else is excepted.
set -u
if [ -n "${OCAL_IMPL_DISABLED:-}" ]; then
  echo "oclgrind: skipped: $OCAL_IMPL_DISABLED"
  exit 77
fi
if ! command -v oclgrind > /dev/null; then
  echo "oclgrind: skipped: oclgrind is not installed (scripts/install-deps.sh installs it)"
  exit 77
fi
set_prog=${OCAL_OCLGRIND_SET:-$(dirname "$(dirname "${OCAL_TOOL:-./tools/ocal}")")/tests/oclgrind_set}
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
# The disk cache is off: every kernel is compiled (and so checked) by Oclgrind itself.
OCAL_CACHE=0 OCAL_DEVICE= timeout 600 oclgrind --build-options -cl-opt-disable \
  --check-api --data-races --uninitialized "$set_prog" > "$out" 2> "$err"
rc=$?
cat "$out"
if [ -s "$err" ]; then
  echo "oclgrind: reports (standard error):"
  head -200 "$err"
  exit 1
fi
[ $rc -eq 0 ] || { echo "oclgrind: the set failed (exit $rc)"; exit 1; }
grep -q "^oclgrind_set on Oclgrind" "$out" || { echo "oclgrind: the set did not run on Oclgrind's device"; exit 1; }
# The single-pass scan once more, every check but the race check (tests/oclgrind_set.c says why).
OCAL_CACHE=0 OCAL_DEVICE= timeout 600 oclgrind --build-options -cl-opt-disable \
  --check-api --uninitialized "$set_prog" single-pass > "$out" 2> "$err"
rc=$?
cat "$out"
if [ -s "$err" ]; then
  echo "oclgrind: reports for the single-pass scan (standard error):"
  head -200 "$err"
  exit 1
fi
[ $rc -eq 0 ] || { echo "oclgrind: the single-pass set failed (exit $rc)"; exit 1; }
echo "oclgrind: no reports"
