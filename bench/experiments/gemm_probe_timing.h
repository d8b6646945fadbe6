/* What bench/experiments/gemm_dmma_probe and gemm_wgmma_probe share: a deterministic value in
 * [-1, 1) and the best time of back-to-back launches on one queue. Header-only; include it
 * after cl_probe.h and ../common.h (for now()). */
#ifndef OCAL_BENCH_GEMM_PROBE_TIMING_H
#define OCAL_BENCH_GEMM_PROBE_TIMING_H

#include <stdint.h>

/* The next value of an xorshift sequence, uniform in [-1, 1) with 52 random bits. */
static double unit(uint64_t *s) {
  *s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
  return (double)((*s * 0x2545f4914f6cdd1dull) >> 11) * 0x1p-52 - 1.0;
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
