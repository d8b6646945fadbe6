/* array_sum — sums on the device, checked against the host: the sum of arange(N) (exact, in
 * 64-bit integers) and of N random floats (compensated, against a double-precision host sum),
 * with the time the device takes for the float sum.
 *
 *   ./array_sum [--device SELECTOR] [--n N] [--repeat R]
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ocal.h>

#include "example_args.h"

#define TRY(call)                                                                       \
  do {                                                                                  \
    ocal_status s_ = (call);                                                            \
    if (s_ != OCAL_OK) {                                                                \
      fprintf(stderr, "array_sum: %s failed: %s\n%s\n", #call, ocal_status_name(s_),  \
              ocal_last_error());                                                       \
      return 1;                                                                         \
    }                                                                                   \
  } while (0)

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int usage(FILE *f, int status) {
  fprintf(f,
          "usage: array_sum [--device SELECTOR] [--n N] [--repeat R]\n"
          "Sums arange(N) and N random floats (default N = 1000000) on the device, checks\n"
          "both against the host, and times the float sum over R runs (default 20).\n"
          "--device picks the device (gpu, cpu, pocl, P:D, ...; default OCAL_DEVICE, else the\n"
          "first GPU, accelerator, CPU). Exit status 1 when a check fails, 2 for bad arguments.\n");
  return status;
}

int main(int argc, char **argv) {
  const char *device = NULL;
  uint64_t n = 1000000, repeat = 20;
  for (int i = 1; i < argc; i++) {
    int common = example_common_arg(argc, argv, &i, "array_sum", usage, &device);
    if (common == 1) return 0;
    if (common < 0) return usage(stderr, 2);
    if (common == 2) continue;
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(argv[i], "--n") == 0 && example_parse_u64(v, 1, INT32_MAX, &n) == 0) {
    } else if (strcmp(argv[i], "--repeat") == 0 &&
               example_parse_u64(v, 1, 1000000, &repeat) == 0) {
    } else {
      fprintf(stderr, "array_sum: bad argument '%s'%s\n", argv[i],
              v ? "" : " (or its value is missing)");
      return usage(stderr, 2);
    }
    i++;
  }

  ocal_context ctx;
  if (example_context("array_sum", device, &ctx) != OCAL_OK) return 1;
  size_t len = (size_t)n;

  /* 0 + 1 + ... + (N-1) in i32, summed into i64: exact, so it must equal N(N-1)/2. */
  ocal_buffer ints;
  int64_t isum;
  TRY(ocal_buffer_create(ctx, OCAL_I32, 1, &len, &ints));
  TRY(ocal_arange(0.0, 1.0, ints));
  TRY(ocal_reduce_to_host(OCAL_REDUCE_SUM, ints, OCAL_I64, &isum));
  int64_t iwant = (int64_t)n * ((int64_t)n - 1) / 2;
  int ok = isum == iwant;
  printf("sum(arange(%zu)) = %lld (host: %lld): %s\n", len, (long long)isum, (long long)iwant,
         isum == iwant ? "exact" : "WRONG");

  /* N floats uniform in [0, 1): a plain float sum would lose digits as it grows past 2^24
   * times the elements; ocal's is compensated, so it stays within a float's rounding. */
  ocal_buffer x, out;
  size_t one = 1;
  TRY(ocal_buffer_create(ctx, OCAL_F32, 1, &len, &x));
  TRY(ocal_buffer_create(ctx, OCAL_F32, 1, &one, &out));
  TRY(ocal_random_uniform(2026, 0, 0.0, 1.0, x));
  float fsum;
  TRY(ocal_reduce_to_host(OCAL_REDUCE_SUM, x, OCAL_F32, &fsum));
  float *h = malloc(len * sizeof *h);
  if (!h) {
    fprintf(stderr, "array_sum: out of host memory\n");
    return 1;
  }
  TRY(ocal_buffer_read(x, 0, len, h, NULL));
  double want = 0;
  for (size_t i = 0; i < len; i++) want += h[i];
  double rel = fabs(fsum - want) / want;
  ok = ok && rel <= 1e-6;
  printf("sum of %zu random floats = %.7g (host, double: %.10g), relative error %.1e (limit "
         "1e-6): %s\n",
         len, fsum, want, rel, rel <= 1e-6 ? "ok" : "FAILED");

  /* Time: R sums queued back to back, between two waits for the queue. */
  TRY(ocal_sum(x, OCAL_AXIS_ALL, out)); /* warm up */
  TRY(ocal_context_finish(ctx));
  double t0 = now();
  for (uint64_t r = 0; r < repeat; r++) TRY(ocal_sum(x, OCAL_AXIS_ALL, out));
  TRY(ocal_context_finish(ctx));
  double sec = (now() - t0) / (double)repeat;
  printf("device time: %.1f us per sum of %zu floats (%.1f GB/s)\n", 1e6 * sec, len,
         (double)len * sizeof(float) / sec / 1e9);

  free(h);
  ocal_buffer_release(ints);
  ocal_buffer_release(x);
  ocal_buffer_release(out);
  ocal_context_release(ctx);
  return ok ? 0 : 1;
}
