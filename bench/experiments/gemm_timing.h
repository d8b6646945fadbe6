/* What bench/experiments/gemm_own and bench/experiments/gemm_splitk share: a deterministic test matrix and the
 * timing of one ocal_gemm shape. Header-only, each program includes it once (after
 * defining BENCH_NAME, for common.h). */
#ifndef OCAL_BENCH_GEMM_TIMING_H
#define OCAL_BENCH_GEMM_TIMING_H

#include <stdlib.h>

#include <ocal.h>

#include "../common.h"

/* An r x c f32 matrix of values in [-0.5, 0.5) that depend on seed; NULL on failure. */
static ocal_buffer matrix(ocal_context ctx, size_t r, size_t c, unsigned seed) {
  size_t shape[2] = {r, c}, n = r * c;
  float *h = malloc(n * sizeof *h);
  if (!h) return NULL;
  for (size_t i = 0; i < n; i++)
    h[i] = (float)(((i + seed) * 2654435761u) % 1000) / 1000.0f - 0.5f;
  ocal_buffer b = NULL;
  if (ocal_buffer_from_host(ctx, OCAL_F32, 2, shape, h, &b) != OCAL_OK) b = NULL;
  free(h);
  return b;
}

/* Seconds per call of C = op(A) op(B), the best of 3 rounds of about `round` seconds of
 * back-to-back calls each ended by one ocal_context_finish; -1 on failure. */
static double time_gemm(ocal_context ctx, int ta, int tb, ocal_buffer a, ocal_buffer b,
                        ocal_buffer c, double round) {
  ocal_transpose A = ta ? OCAL_TRANS : OCAL_NO_TRANS, B = tb ? OCAL_TRANS : OCAL_NO_TRANS;
  if (ocal_gemm(A, B, 1.0, a, b, 0.0, c) != OCAL_OK || ocal_context_finish(ctx) != OCAL_OK) return -1;
  double t0 = now();
  if (ocal_gemm(A, B, 1.0, a, b, 0.0, c) != OCAL_OK || ocal_context_finish(ctx) != OCAL_OK) return -1;
  double one = now() - t0, best = one;
  long reps = (long)(round / (one > 1e-6 ? one : 1e-6));
  if (reps < 3) reps = 3;
  if (reps > 20000) reps = 20000;
  for (int r = 0; r < 3; r++) {
    t0 = now();
    for (long i = 0; i < reps; i++)
      if (ocal_gemm(A, B, 1.0, a, b, 0.0, c) != OCAL_OK) return -1;
    if (ocal_context_finish(ctx) != OCAL_OK) return -1;
    double each = (now() - t0) / (double)reps;
    if (each < best) best = each;
  }
  return best;
}

#endif
