#!/bin/sh
# ocal — checks the layering of src/ (docs/design.md: "nothing in src/core knows about any
# operation", "no area includes another's internals"). Run by `make check`; reads the source
# tree only. It fails, naming the file and line, when
#   1. a file of src/core includes a header of an area: one in src/<area>/, a public header
#      that an area's fragment installs (src/<area>/local.mk: ocalinclude_HEADERS +=), or the
#      umbrella ocal.h, which includes them all;
#   2. a file of an area includes a header of another area's directory (every header there is
#      internal to it: areas meet through the public headers and src/core/internal.h);
#   3. a file of an area reads a field of struct ocal_context_s (ctx->queue, ctx->info, ...)
#      instead of the accessors of src/core/internal.h;
#   4. a file outside src/core enqueues a kernel itself instead of through the launch helpers
#      of src/core/program.c (ocal__kernel_run*, ocal__launch_1d).
# Every exception is listed below with the reason it is allowed.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
cd "$src" || exit 99
status=0
tmp=$(mktemp) || exit 99
trap 'rm -f "$tmp"' EXIT
fail() {
  echo "layering: $*"
  status=1
}

# Exceptions, one "rule:file" a line, each with its reason.
allowed() {
  case "$1" in
    # libocal-mpi is a library of its own built on the public API (it may not use ocal's
    # internals at all): it launches its accumulate kernel on its own transfer queue, and its
    # node-local path's ordered reduction there too.
    4:src/mpi/collectives.c) return 0 ;;
    4:src/mpi/shared.c) return 0 ;;
    # User kernels (ocal_kernel_launch) take any range of 1 to 3 dimensions with offsets the
    # user chose; the reduction-engine branch moves this file's launch onto
    # ocal__kernel_run_nd. Remove these lines when that branch is merged.
    4:src/kernel/kernel.c) return 0 ;;
    # The generators run their scans on the scan engine of src/ops (one engine for
    # ocal_cumsum and ocal_gen_scan); src/ops/scan_engine.h is that engine's interface for them.
    2:src/gen/gen_internal.h) return 0 ;;
  esac
  return 1
}

areas=$(cd src && for d in */; do d=${d%/}; [ "$d" != core ] && echo "$d"; done)

# The public headers each area installs, from its fragment.
area_public() {
  [ -f "src/$1/local.mk" ] &&
    sed -n 's|^ocalinclude_HEADERS += *||p' "src/$1/local.mk" | tr ' ' '\n' |
    sed -n 's|^include/\(ocal/.*\.h\)$|\1|p'
}

# 1. src/core includes nothing of an area.
for a in $areas; do
  for h in $(cd "src/$a" && ls *.h 2>/dev/null) $(area_public "$a"); do
    grep -n "^[[:space:]]*#[[:space:]]*include[[:space:]]*[\"<]$h[\">]" src/core/*.[ch] |
      while IFS= read -r hit; do
        echo "layering: rule 1: ${hit%%:#*} includes $h (area $a); src/core knows no operation"
      done
  done
done > "$tmp"
grep -n "^[[:space:]]*#[[:space:]]*include[[:space:]]*[\"<]ocal\.h[\">]" src/core/*.[ch] |
  while IFS= read -r hit; do
    echo "layering: rule 1: ${hit%%:#*} includes ocal.h, which includes every area's header; include the core's own public headers (ocal/context.h, ...)"
  done >> "$tmp"
[ -s "$tmp" ] && { cat "$tmp"; status=1; }

# 2. No area includes another area's headers.
for a in $areas; do
  for b in $areas; do
    [ "$a" = "$b" ] && continue
    for h in $(cd "src/$b" && ls *.h 2>/dev/null); do
      # A plain "h.h" names the including file's own header when its area has one of that
      # name (src/blas/engine.h and src/fft/engine.h); "../b/h.h" always reaches into b.
      pat="\(\.\./$b/\)\?$h"
      [ -e "src/$a/$h" ] && pat="\.\./$b/$h"
      for f in $(grep -l "#[[:space:]]*include[[:space:]]*\"$pat\"" src/"$a"/*.[ch] 2>/dev/null); do
        allowed "2:$f" && continue
        fail "rule 2: $f includes $h, internal to src/$b; use its public header or core"
      done
    done
  done
done

# 3. Areas read the context through the accessors.
fields='magic\|refs\|platform\|device\|cl_ctx\|queue\|info\|limits\|fp64\|cache_dir\|lock\|programs\|stats\|attachments\|memory'
for a in $areas; do
  for f in src/"$a"/*.[ch]; do
    [ -f "$f" ] || continue
    allowed "3:$f" && continue
    grep -n "\bctx->\($fields\)\b" "$f" | while IFS= read -r hit; do
      echo "layering: rule 3: $f:${hit%%:*}: reads a field of the context; use the ocal__context_* accessors of src/core/internal.h"
    done
  done
done > "$tmp"
[ -s "$tmp" ] && { cat "$tmp"; status=1; }

# 4. One launch helper.
for f in $(grep -l "clEnqueueNDRangeKernel[[:space:]]*(\|clEnqueueTask[[:space:]]*(" src/*/*.c); do
  case "$f" in src/core/program.c) continue ;; esac
  allowed "4:$f" && continue
  fail "rule 4: $f enqueues a kernel itself; launch through ocal__kernel_run_nd (src/core/program.c)"
done

[ $status -eq 0 ] && echo "layering: src/core includes no area, no area includes another's internals, areas use the context accessors and the one launch helper"
exit $status
