#!/bin/sh
# Builds the extension as one self-contained stable-ABI module (abi3, CPython >= 3.11) with a
# static libocal linked in, for a machine that has Python and OpenCL but no compiler or
# Python headers: the benchmark runs on GPU machines use it.
#   python/tools/abi3_static.sh PREFIX OUTDIR [PYTHON]
# PREFIX: `make install` of a `./configure --disable-shared` build; OUTDIR gets ocal/.
set -eu
prefix=$1 out=$2 py=${3:-python3}
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
"$py" "$src/tools/gen_pxd.py" "$tmp/_capi.pxd" $(pkg-config --cflags ocal)
"$py" -m cython -3 -X boundscheck=False -I "$tmp" "$src/ocal/_core.pyx" -o "$tmp/_core.c"
inc=$("$py" -c "import sysconfig; print(sysconfig.get_paths()['include'])")
npinc=$("$py" -c "import numpy; print(numpy.get_include())")
mkdir -p "$out"
rm -rf "$out/ocal"
cp -r "$src/ocal" "$out/ocal"
rm -f "$out/ocal/_core.pyx" "$out/ocal/"*.pxi
find "$out/ocal" -name '__pycache__' -prune -exec rm -rf {} +
# libocal.a and its C++ engines (CLBlast, clFFT) in, the OpenCL loader left to the machine.
${CC:-cc} -shared -fPIC -O2 -DPy_LIMITED_API=0x030B0000 -DCYTHON_LIMITED_API=1 \
  -I"$inc" -I"$npinc" $(pkg-config --cflags ocal) "$tmp/_core.c" \
  "$prefix/lib/libocal.a" $(pkg-config --static --libs-only-l ocal | sed 's/-local //') -lstdc++ \
  -o "$out/ocal/_core.abi3.so"
strip "$out/ocal/_core.abi3.so"
