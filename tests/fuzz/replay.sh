#!/bin/sh
# Replays the checked-in seed corpus of every fuzz target, and the inputs that once crashed
# one (tests/fuzz/regress/TARGET/), through the target's replay program (tests/fuzz/local.mk).
# Run by `make check` from the build tree; the inputs are read from the source tree.
set -eu
srcdir=$(cd "$(dirname "$0")" && pwd)
status=0
for t in gen_params gen_body settings disk_cache tuning mtx; do
  set -- "$srcdir/corpus/$t"
  [ -d "$srcdir/regress/$t" ] && set -- "$@" "$srcdir/regress/$t"
  echo "replay $t: $*"
  tests/fuzz/replay_$t "$@" || { echo "replay $t FAILED"; status=1; }
done
exit $status
