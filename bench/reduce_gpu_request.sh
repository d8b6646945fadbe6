#!/bin/bash
# bench/reduce_gpu_request.sh — the reductions' GPU request, in one call (H100, about 4 minutes):
# PyTorch's reduce suite, then this build against OLD_BUILD (bench/compare_builds.sh, reduce
# suite, two rounds), then the full reductions and axes (OCAL_BENCH_REDUCE=big) under the
# launch shapes named in TUNES, then check_reduce and check_sparse with empty kernel caches
# (per-test seconds in Check's XML logs), then the ld.global lines of both builds' programs.
#
#   OUT=dir bench/reduce_gpu_request.sh NEW_BUILD OLD_BUILD [TUNES...]
#
# NEW_BUILD holds tools/ocal and tests/check_reduce, tests/check_sparse (static builds);
# OLD_BUILD tools/ocal. Results: $OUT/torch.json, $OUT/compare.txt, $OUT/tunes.txt,
# $OUT/checks.txt.
set -u
new=${1:?new build} old=${2:?old build}
shift 2
out=${OUT:?OUT names the results folder}
tunes=("$@")
[ ${#tunes[@]} -eq 0 ] && tunes=("" "wg=128,gpc=8" "gpc=3" "gpc=5" "onepass=0" "cdiv=3,cwg=128")
work=$(mktemp -d)
timeout 40 python3 bench/pytorch_reference.py --suite reduce --json "$out/torch.json" \
  > /dev/null 2> "$work/torch.err" || tail -n 3 "$work/torch.err"
timeout 200 bench/compare_builds.sh "$work/cmp" "$new" "$old" 2 reduce > "$out/compare.txt" 2>&1
for t in "${tunes[@]}"; do
  echo "== OCAL_REDUCE_TUNE='$t'"
  OCAL_REDUCE_TUNE="$t" OCAL_BENCH_REDUCE=big OCAL_CACHE_DIR="$work/cache-tune" timeout 60 \
    "$new/tools/ocal" bench --quiet --suite reduce --compare "$out/torch.json" 2>&1 | tail -n 30
done > "$out/tunes.txt"
{
  for t in check_reduce check_sparse; do
    rm -rf "$work/cache-$t" "$work/cuda-$t"
    start=$(date +%s)
    CUDA_CACHE_PATH="$work/cuda-$t" OCAL_CACHE_DIR="$work/cache-$t" \
      CK_XML_LOG_FILE_NAME="$work/$t.xml" timeout 300 "$new/tests/$t" 2>&1 | tail -n 3
    echo "$t: $(( $(date +%s) - start )) s with empty caches"
    grep -o '<id>[^<]*</id>\|<duration>[^<]*</duration>' "$work/$t.xml" | paste - - |
      sed 's/<[^>]*>//g' | sort -k2 -n -r | head -n 12
  done
  # The cache hints' PTX (disk caches of the compare: NVIDIA's binaries are PTX text).
  for side in new old; do
    echo "ld.global lines of the $side build's reduction programs:"
    cat "$work/cmp/cache-$side"/* 2>/dev/null | grep -a -o 'ld\.global[.a-zA-Z0-9:]*' |
      sort | uniq -c
  done
} > "$out/checks.txt" 2>&1
rm -rf "$work"
