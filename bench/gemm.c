/* bench/gemm — GFLOP/s of ocal_gemm (square, and the MLP 784-512-10's shapes at batch 256) and
 * GB/s of the BLAS-1/2 calls.
 *
 *   bench/gemm [--device SEL] [--quick] [--max-log2 N] [--gemm-max N] [--no-tuning]
 *
 * The body is the 'gemm' suite of `ocal bench` (tools/bench/), run here alone: one JSON object
 * per line, each a record of the results file format described in tools/bench/bench.h. */
#include "bench.h"

int main(int argc, char **argv) { return bench_program_main(BENCH_GEMM, argc, argv); }
