#!/bin/sh
# Every public declaration of include/ocal/*.h is documented: Doxygen runs over the headers
# with the configuration of `make doc` (Doxyfile, made by configure from Doxyfile.in), which
# warns about an undocumented function, struct field, enum or macro, a parameter without
# \param and a non-void function without \returns; any warning fails. First the check is shown
# to work: a header with one undocumented parameter must make Doxygen warn.
set -u
doxygen=${OCAL_DOXYGEN-}
doxyfile=${OCAL_DOXYFILE:-Doxyfile}
if [ -z "$doxygen" ]; then doxygen=$(command -v doxygen || true); fi
# A build carried to another machine (the GPU machine's suite) names a doxygen that may not
# exist there: that is the same as none installed.
if [ -n "$doxygen" ] && ! command -v "$doxygen" > /dev/null 2>&1; then
  echo "doc.sh: $doxygen (the doxygen configure found) is not on this machine"
  doxygen=
fi
if [ -z "$doxygen" ]; then
  echo "doc.sh: SKIP: doxygen is not installed (scripts/install-deps.sh installs it), so the"
  echo "doc.sh: public headers' documentation is not checked"
  exit 77
fi
[ -r "$doxyfile" ] || { echo "doc.sh: no $doxyfile (run configure)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The probe: the same configuration on a header that lacks one \param.
cat > "$tmp/probe.h" <<'PROBE'
/** \file
 * A header with one undocumented parameter. */
/** Adds.
 * \param a the first number.
 * \returns the sum. */
int probe_add(int a, int b);
PROBE
{ cat "$doxyfile"; echo "INPUT = $tmp/probe.h"; echo "STRIP_FROM_PATH = $tmp"; } > "$tmp/probe.cfg"
OCAL_DOC_DIR="$tmp/probe" OCAL_DOC_LOG="$tmp/probe.log" OCAL_DOC_HTML=YES \
  "$doxygen" "$tmp/probe.cfg" > "$tmp/probe.out" 2>&1
if ! grep -q "probe_add" "$tmp/probe.log"; then
  echo "doc.sh: Doxygen did not warn about the probe's undocumented parameter; this doxygen"
  echo "doc.sh: cannot check the headers (log and output below)"
  cat "$tmp/probe.log" "$tmp/probe.out"
  exit 1
fi

# The headers.
OCAL_DOC_DIR="$tmp/doc" OCAL_DOC_LOG="$tmp/doxygen.log" OCAL_DOC_HTML=YES \
  "$doxygen" "$doxyfile" > "$tmp/out" 2>&1
rc=$?
if [ -s "$tmp/doxygen.log" ] || [ $rc -ne 0 ]; then
  echo "doc.sh: Doxygen warned about the public headers (exit $rc); document what it names:"
  cat "$tmp/doxygen.log" "$tmp/out"
  exit 1
fi
echo "doc.sh: every public declaration is documented (Doxygen $("$doxygen" --version), no warning)"
exit 0
