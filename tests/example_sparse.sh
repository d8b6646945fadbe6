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

# Without LAPACKE (configure found none) ocal_lobpcg is unsupported: nothing more to run.
if "$ex/laplacian_eigs" --n 10 --k 1 2>&1 | grep -q "without LAPACKE"; then
  echo "laplacian_eigs: ocal built without LAPACKE, skipped"
  echo "sparse example checks passed"
  exit 0
fi
"$ex/laplacian_eigs" --help | grep -q usage
refuses "$ex/laplacian_eigs" --dim 4
refuses "$ex/laplacian_eigs" --k 0
refuses "$ex/laplacian_eigs" --n 3 --k 8
"$ex/laplacian_eigs" --dim 2 --n 30 --k 4 | tee "$tmp/eigs.log"
grep -q "check: ok" "$tmp/eigs.log"
"$ex/laplacian_eigs" --dim 3 --n 9 --k 3 --f32 | grep -q "check: ok"
# A Matrix Market file: the 1-D Laplacian of 50 points, symmetric (lower triangle only).
{ echo "%%MatrixMarket matrix coordinate real symmetric"; echo "% 1-D Laplacian"
  echo "50 50 99"; i=1
  while [ $i -le 50 ]; do echo "$i $i 2.0"; [ $i -lt 50 ] && echo "$((i + 1)) $i -1"; i=$((i + 1)); done
} > "$tmp/lap1.mtx"
"$ex/laplacian_eigs" --mtx "$tmp/lap1.mtx" --k 2 | tee "$tmp/mtx.log"
grep -q "check: ok" "$tmp/mtx.log"
grep -q "lambda\[0\] = 0.00379" "$tmp/mtx.log"
printf '%%%%MatrixMarket matrix coordinate real general\n2 2 1\n9 9 1\n' > "$tmp/bad.mtx"
refuses "$ex/laplacian_eigs" --mtx "$tmp/bad.mtx"

echo "sparse example checks passed"
