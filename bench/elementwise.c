/* bench/elementwise — GB/s of elementwise operations (add, scalar multiply, relu, exp, axpy, a
 * broadcast bias add) beside the device copy of the same size, and the cost of one small call.
 *
 *   bench/elementwise [--device SEL] [--quick] [--max-log2 N] [--gemm-max N] [--no-tuning]
 *
 * The body is the 'elementwise' suite of `ocal bench` (tools/bench/), run here alone: one JSON object
 * per line, each a record of the results file format described in tools/bench/bench.h. */
#include "bench.h"

int main(int argc, char **argv) { return bench_program_main(BENCH_ELEMENTWISE, argc, argv); }
