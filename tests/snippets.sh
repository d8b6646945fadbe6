#!/bin/sh
# ocal — the C in the docs compiles against the headers. Run by `make check`; needs a C
# compiler, no device. Every ```c block of README.md and docs/*.md is compiled (syntax and
# types, warnings as errors) after `#include <ocal.h>` and the C library's headers, so that a
# reader who copies one gets code that builds with the headers as they are. A block that is a
# fragment (statements, or names it does not declare) is preceded by a comment giving the
# function it is compiled in, opening brace included:
#
#   <!-- snippet: void example(ocal_context ctx, ocal_buffer x) { -->
#
# A block of docs/mpi.md also includes <ocal/mpi.h> and <mpi.h>, and is skipped where
# configure found no MPI. First the check is shown to work: a block that calls a function with
# the wrong arguments must fail it.
#
# Environment (set by `make check`): OCAL_SNIPPET_CC, the compiler; OCAL_SNIPPET_CPPFLAGS,
# the flags that find ocal's headers (the source tree's and the build's version.h) and
# OpenCL's; OCAL_SNIPPET_MPI_CFLAGS, MPI's, empty where there is no MPI.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
cc=${OCAL_SNIPPET_CC:-cc}
cppflags=${OCAL_SNIPPET_CPPFLAGS:--I$src/include}
mpi_cflags=${OCAL_SNIPPET_MPI_CFLAGS-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
warnings="-std=c11 -Wall -Wextra -Werror -Wno-unused-parameter -Wno-unused-variable \
-Wno-unused-but-set-variable"

# Writes each ```c block of markdown file $1 to $2/N.c, wrapped as above; prints N FILE:LINE
# for each.
extract() {
  awk -v dir="$2" -v file="$1" '
    /^<!-- snippet: .* -->$/ { wrap = $0; sub(/^<!-- snippet: /, "", wrap); sub(/ -->$/, "", wrap);
                               wrapline = NR; next }
    /^```c$/ { n++; out = dir "/" n ".c"; inblock = 1;
               print "#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <ocal.h>" > out
               if (file ~ /mpi\.md$/) print "#include <mpi.h>\n#include <ocal/mpi.h>" > out
               if (wrap != "" && wrapline == NR - 1) print wrap > out
               else wrap = ""
               printf "#line %d \"%s\"\n", NR + 1, file > out
               print n, file ":" NR; next }
    inblock && /^```$/ { if (wrap != "") print "}" > out; close(out); inblock = 0; wrap = ""; next }
    inblock { print > out }
  ' "$1"
}

# Compiles the blocks of markdown file $1 (shown as $2); returns the number that failed.
check_file() {
  d="$tmp/$(echo "$2" | tr '/.' '__')"
  mkdir -p "$d"
  failed=0
  extract "$1" "$d" > "$d/list"
  while read -r n where; do
    flags=
    case "$2" in
      *mpi.md)
        if [ -z "$mpi_cflags" ]; then
          echo "snippets.sh: SKIP $where: configure found no MPI"
          continue
        fi
        flags=$mpi_cflags ;;
    esac
    # shellcheck disable=SC2086  # the flags are lists of words
    if $cc $warnings $cppflags $flags -fsyntax-only "$d/$n.c" > "$d/$n.log" 2>&1; then
      checked=$((checked + 1))
    else
      echo "snippets.sh: FAIL $where: the block does not compile against the headers:"
      sed 's/^/    /' "$d/$n.log"
      failed=$((failed + 1))
    fi
  done < "$d/list"
  return "$failed"
}

# The probe: a block with a call of the wrong arity, in a fragment's wrapper.
cat > "$tmp/probe.md" <<'PROBE'
<!-- snippet: void probe(ocal_buffer a) { -->
```c
ocal_gemm(OCAL_NO_TRANS, a);
```
PROBE
checked=0
if check_file "$tmp/probe.md" probe.md > "$tmp/probe.out" 2>&1; then
  echo "snippets.sh: a block with a wrong call compiled: this compiler ($cc) cannot check"
  echo "snippets.sh: the docs (its output below)"
  cat "$tmp/probe.out"
  exit 1
fi

checked=0
status=0
cd "$src" || exit 99
for f in README.md docs/*.md; do
  check_file "$f" "$f" || status=1
done
if [ "$checked" -eq 0 ] && [ "$status" -eq 0 ]; then
  echo "snippets.sh: no C block found in README.md or docs/: the extraction is broken"
  exit 1
fi
echo "snippets.sh: $checked blocks compiled"
exit "$status"
