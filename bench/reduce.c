/* bench/reduce — GB/s of reductions and scans beside the device copy of the same size, axis
 * reductions of a square matrix, the cost of one small sum, and a plain host loop.
 *
 *   bench/reduce [--device SEL] [--quick] [--max-log2 N] [--gemm-max N] [--no-tuning]
 *
 * The body is the 'reduce' suite of `ocal bench` (tools/bench/), run here alone: one JSON object
 * per line, each a record of the results file format described in tools/bench/bench.h. */
#include "bench.h"

int main(int argc, char **argv) { return bench_program_main(BENCH_REDUCE, argc, argv); }
