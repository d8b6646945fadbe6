/* bench/fft — GFLOP/s of single-precision C2C FFTs on every engine, with plan creation cold and
 * from the disk cache.
 *
 *   bench/fft [--device SEL] [--quick] [--max-log2 N] [--gemm-max N] [--no-tuning]
 *
 * The body is the 'fft' suite of `ocal bench` (tools/bench/), run here alone: one JSON object
 * per line, each a record of the results file format described in tools/bench/bench.h. */
#include "bench.h"

int main(int argc, char **argv) { return bench_program_main(BENCH_FFT, argc, argv); }
