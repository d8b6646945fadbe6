/* vector_dot — two random vectors on the device, their elementwise product and their dot
 * product, checked against the host.
 *
 * The vectors are drawn on the device (ocal_random_uniform), multiplied there (ocal_binary),
 * and reduced there twice: with ocal_dot_to_host, which brings the result to the host, and
 * with ocal_dot, which leaves it in a device buffer for further work (both run ocal's
 * compensated reduction kernel). The host reads the vectors back and checks both results in
 * double precision.
 *
 *   ./vector_dot [--device SELECTOR] [--n N] [--seed S]
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ocal.h>

#include "example_args.h"

#define TRY(call)                                                                        \
  do {                                                                                   \
    ocal_status s_ = (call);                                                             \
    if (s_ != OCAL_OK) {                                                                 \
      fprintf(stderr, "vector_dot: %s failed: %s\n%s\n", #call, ocal_status_name(s_),  \
              ocal_last_error());                                                        \
      return 1;                                                                          \
    }                                                                                    \
  } while (0)

static int usage(FILE *f, int status) {
  fprintf(f,
          "usage: vector_dot [--device SELECTOR] [--n N] [--seed S]\n"
          "Draws two random vectors of N floats (default 1000000) on the device, multiplies\n"
          "them elementwise and takes their dot product there, and checks both on the host.\n"
          "--device picks the device (gpu, cpu, pocl, P:D, ...; default OCAL_DEVICE, else the\n"
          "first GPU, accelerator, CPU). Exit status 1 when a check fails, 2 for bad arguments.\n");
  return status;
}

int main(int argc, char **argv) {
  const char *device = NULL;
  uint64_t n = 1000000, seed = 7;
  for (int i = 1; i < argc; i++) {
    int common = example_common_arg(argc, argv, &i, "vector_dot", usage, &device);
    if (common == 1) return 0;
    if (common < 0) return usage(stderr, 2);
    if (common == 2) continue;
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(argv[i], "--n") == 0 && example_parse_u64(v, 1, UINT64_MAX, &n) == 0) {
    } else if (strcmp(argv[i], "--seed") == 0 &&
               example_parse_u64(v, 0, UINT64_MAX, &seed) == 0) {
    } else {
      fprintf(stderr, "vector_dot: bad argument '%s'%s\n", argv[i],
              v ? "" : " (or its value is missing)");
      return usage(stderr, 2);
    }
    i++;
  }

  ocal_context ctx;
  if (example_context("vector_dot", device, &ctx) != OCAL_OK) return 1;

  /* x, y uniform in [-1, 1) from one random stream: y continues where x ends. */
  size_t len = (size_t)n, one = 1;
  ocal_buffer x, y, prod, dot;
  TRY(ocal_buffer_create(ctx, OCAL_F32, 1, &len, &x));
  TRY(ocal_buffer_create(ctx, OCAL_F32, 1, &len, &y));
  TRY(ocal_buffer_create(ctx, OCAL_F32, 1, &len, &prod));
  TRY(ocal_buffer_create(ctx, OCAL_F32, 1, &one, &dot));
  TRY(ocal_random_uniform(seed, 0, -1.0, 1.0, x));
  TRY(ocal_random_uniform(seed, n, -1.0, 1.0, y));

  TRY(ocal_binary(OCAL_BINARY_MUL, x, y, prod)); /* prod = x * y */
  float vdot, dev_dot;
  TRY(ocal_dot_to_host(x, y, OCAL_F32, &vdot)); /* ocal's compensated dot */
  TRY(ocal_dot(x, y, OCAL_AXIS_ALL, dot));      /* the same, left on the device */
  TRY(ocal_buffer_read(dot, 0, 1, &dev_dot, NULL));

  float *hx = malloc(len * sizeof *hx), *hy = malloc(len * sizeof *hy);
  float *hp = malloc(len * sizeof *hp);
  if (!hx || !hy || !hp) {
    fprintf(stderr, "vector_dot: out of host memory\n");
    return 1;
  }
  TRY(ocal_buffer_read(x, 0, len, hx, NULL));
  TRY(ocal_buffer_read(y, 0, len, hy, NULL));
  TRY(ocal_buffer_read(prod, 0, len, hp, NULL));

  /* Each product is one correctly rounded float multiplication: it must match exactly. The
   * dot products are judged against the double sum, relative to the sum of |x*y| (the size
   * of the rounding errors a float sum can make). */
  size_t wrong = 0;
  double want = 0, mag = 0;
  for (size_t i = 0; i < len; i++) {
    if (hp[i] != hx[i] * hy[i]) wrong++;
    want += (double)hx[i] * hy[i];
    mag += fabs((double)hx[i] * hy[i]);
  }
  double err_vdot = fabs(vdot - want) / mag, err_dev = fabs(dev_dot - want) / mag;
  int ok = wrong == 0 && err_vdot <= 1e-6 && err_dev <= 1e-6;
  printf("x * y: %zu products, %zu differ from the host's\n", len, wrong);
  printf("x . y: %.6f (to the host), %.6f (on the device), %.6f (host, double)\n", vdot, dev_dot,
         want);
  printf("relative errors: %.1e and %.1e (limit 1e-6): %s\n", err_vdot, err_dev,
         ok ? "ok" : "FAILED");

  free(hx);
  free(hy);
  free(hp);
  ocal_buffer_release(x);
  ocal_buffer_release(y);
  ocal_buffer_release(prod);
  ocal_buffer_release(dot);
  ocal_context_release(ctx);
  return ok ? 0 : 1;
}
