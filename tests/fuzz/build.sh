#!/bin/sh
# Builds the libFuzzer targets of tests/fuzz/ (docs/defences.md) against a build tree whose
# library was compiled by clang with coverage for the fuzzer and the sanitizers:
#   CC=clang-14 CFLAGS='-g -O1 -fsanitize=fuzzer-no-link' \
#     ./configure --enable-sanitizers --disable-shared && make src/libocal_core.la
# Usage: tests/fuzz/build.sh BUILD_DIR OUT_DIR   (BUILD_DIR: that tree; OUT_DIR: where the
# fuzz_TARGET programs go). CC (default clang-14) compiles them.
set -eu
build=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
cc=${CC:-clang-14}
lib="$build/src/.libs/libocal_core.a"
[ -f "$lib" ] || { echo "fuzz build: $lib is missing (make src/libocal_core.la there)"; exit 2; }
libs=$(sed -n 's/^\(OPENCL_LIBS\|CLBLAST_LIBS\|CLFFT_LIBS\|LAPACKE_LIBS\) = //p' "$build/Makefile" | tr '\n' ' ')
for t in gen_params gen_body settings disk_cache tuning mtx; do
  echo "fuzz build: fuzz_$t"
  $cc -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I"$src/include" -I"$build/include" -I"$build" -I"$src/src/core" -I"$src/src/gen" -I"$src/src/kernel" \
    -I"$src/src/blas" -I"$src/src/fft" -I"$src/src/sparse" \
    -o "$out/fuzz_$t" "$src/tests/fuzz/fuzz_$t.c" "$lib" $libs -lm -lpthread
done
