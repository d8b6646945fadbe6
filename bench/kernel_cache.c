/* bench/kernel_cache — the time to a ready kernel when the compiler runs, from the disk cache
 * in a second process (this program again), and from the memory cache.
 *
 *   bench/kernel_cache [--device SEL] [--quick] [--max-log2 N] [--gemm-max N] [--no-tuning]
 *
 * The body is the 'cache' suite of `ocal bench` (tools/bench/), run here alone: one JSON object
 * per line, each a record of the results file format described in tools/bench/bench.h. */
#include "bench.h"

int main(int argc, char **argv) { return bench_program_main(BENCH_CACHE, argc, argv); }
