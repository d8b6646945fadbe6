#!/bin/sh
# Runs the sparse examples as a user would, at small sizes: each must pass its own checks
# against the known answer (exit 0), print its help, and refuse bad arguments with status 2.
set -eu
ex="$OCAL_EXAMPLES"
tmp="${TMPDIR:-/tmp}/ocal-example-sparse.$$"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT

refuses() {
  if "$@" > /dev/null 2> "$tmp/err"; then echo "accepted: $*"; exit 1; else rc=$?; fi
  if [ "$rc" -ne 2 ]; then echo "exit status $rc, not 2, for: $*"; cat "$tmp/err"; exit 1; fi
  if [ ! -s "$tmp/err" ]; then echo "no message for: $*"; exit 1; fi
}

"$ex/poisson_cg" --help | grep -q usage
refuses "$ex/poisson_cg" --no-such-option
refuses "$ex/poisson_cg" --n 0
refuses "$ex/poisson_cg" --rtol 2
"$ex/poisson_cg" --n 61 | tee "$tmp/cg.log"
grep -q "converged in" "$tmp/cg.log"
grep -q ": ok" "$tmp/cg.log"
"$ex/poisson_cg" --n 40 --f32 --jacobi | grep -q ": ok"

echo "sparse example checks passed"
