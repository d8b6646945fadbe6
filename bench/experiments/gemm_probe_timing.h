/* What bench/experiments/gemm_dmma_probe and gemm_wgmma_probe share: a deterministic value in
 * [-1, 1), the kernels' leading arguments and the best time of back-to-back launches on one
 * queue. Header-only; include it
 * after cl_probe.h and ../common.h (for now()). */
#ifndef OCAL_BENCH_GEMM_PROBE_TIMING_H
#define OCAL_BENCH_GEMM_PROBE_TIMING_H

#include <stdint.h>

/* The next value of an xorshift sequence, uniform in [-1, 1) with 52 random bits. */
static double unit(uint64_t *s) {
  *s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
  return (double)((*s * 0x2545f4914f6cdd1dull) >> 11) * 0x1p-52 - 1.0;
}

/* The arguments both tensor-core kernels begin with: A, B and C, each as its buffer, offset 0,
 * leading dimension and batch stride 0, then m, n and k. Returns the next argument's index. */
static int set_operand_args(cl_kernel k, cl_mem a, cl_uint lda, cl_mem b, cl_uint ldb, cl_mem c,
                            cl_uint ldc, cl_uint m, cl_uint n, cl_uint kk) {
  cl_ulong zero = 0;
  cl_mem mem[3] = {a, b, c};
  cl_uint ld[3] = {lda, ldb, ldc};
  int i = 0;
  for (int x = 0; x < 3; x++) {
    OK(clSetKernelArg(k, i++, sizeof mem[x], &mem[x]));
    OK(clSetKernelArg(k, i++, 8, &zero));
    OK(clSetKernelArg(k, i++, 4, &ld[x]));
    OK(clSetKernelArg(k, i++, 8, &zero));
  }
  OK(clSetKernelArg(k, i++, 4, &m));
  OK(clSetKernelArg(k, i++, 4, &n));
  OK(clSetKernelArg(k, i++, 4, &kk));
  return i;
}

/* Best seconds per call of fn(arg), which enqueues on q: one warm-up, then three rounds of
 * about `round` seconds each ended by clFinish. */
typedef void (*run_fn)(void *arg);
static double best_time(cl_command_queue q, run_fn fn, void *arg, double round) {
  fn(arg);
  OK(clFinish(q));
  double t0 = now();
  fn(arg);
  OK(clFinish(q));
  double one = now() - t0, best = one;
  long reps = (long)(round / (one > 1e-6 ? one : 1e-6));
  if (reps < 2) reps = 2;
  for (int r = 0; r < 3; r++) {
    t0 = now();
    for (long i = 0; i < reps; i++) fn(arg);
    OK(clFinish(q));
    double each = (now() - t0) / (double)reps;
    if (each < best) best = each;
  }
  return best;
}

#endif
