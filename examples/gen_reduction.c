/* gen_reduction — a reduction written from expressions: ocal generates, builds and caches
 * the kernels. Here the root-mean-square distance between two vectors,
 *   sqrt(sum over i of (x[i] - y[i])^2 / n),
 * as a reduction with map "(x[i] - y[i]) * (x[i] - y[i])" and reduce "a + b" (a plain sum:
 * ocal compensates it, as ocal_sum does), and then the same per row of a matrix (along an
 * axis). Both are checked against a double-precision loop on the host.
 *
 *   ./gen_reduction [--device SELECTOR] [--show-source] [N]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ocal.h>

static int fail(const char *what, ocal_status s) {
  fprintf(stderr, "gen_reduction: %s failed: %s\n%s\n", what, ocal_status_name(s),
          ocal_last_error());
  return 1;
}

int main(int argc, char **argv) {
  const char *device = NULL;
  size_t n = 100000;
  int show = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      printf("usage: gen_reduction [--device SELECTOR] [--show-source] [N]\n"
             "Generates a reduction kernel from expressions and computes the root-mean-square\n"
             "distance of two random vectors of N floats (default 100000), then per row of an\n"
             "(N/100) x 100 matrix, checking both against the host. --show-source prints the\n"
             "generated OpenCL C. The device is OCAL_DEVICE's, or --device SELECTOR's.\n");
      return 0;
    } else if (strcmp(argv[i], "--device") == 0) {
      if (i + 1 >= argc) {
        fprintf(stderr, "gen_reduction: --device needs a selector (gpu, cpu, P:D or a name)\n");
        return 2;
      }
      device = argv[++i];
    } else if (strcmp(argv[i], "--show-source") == 0) {
      show = 1;
    } else {
      char *end;
      unsigned long long v = strtoull(argv[i], &end, 10);
      if (*end || argv[i][0] == '-' || argv[i][0] == '\0' || v < 100) {
        fprintf(stderr, "gen_reduction: bad argument '%s' (want --device SELECTOR, "
                        "--show-source or N >= 100; --help for help)\n", argv[i]);
        return 2;
      }
      n = (size_t)v;
    }
  }
  n -= n % 100; /* a whole number of rows of 100 */

  ocal_context_options opts;
  ocal_context_options_init(&opts);
  opts.device = device;
  ocal_context ctx;
  ocal_status s = ocal_context_create(&opts, &ctx);
  if (s != OCAL_OK) return fail("ocal_context_create", s);
  ocal_device_info info = {.struct_size = sizeof info};
  ocal_context_get_device_info(ctx, &info);
  printf("device: %s (%s)\n", info.name, info.platform_name);

  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  size_t rows = n / 100;
  float *per_row = malloc(rows * sizeof *per_row);
  if (!x || !y || !per_row) return fail("malloc", OCAL_OUT_OF_HOST_MEMORY);
  srand(2);
  for (size_t i = 0; i < n; i++) {
    x[i] = (float)rand() / (float)RAND_MAX;
    y[i] = (float)rand() / (float)RAND_MAX;
  }

  ocal_gen gen = NULL;
  ocal_buffer dx = NULL, dy = NULL, total = NULL, out_rows = NULL;
  const size_t one = 1, shape[2] = {rows, 100};
  int bad = -1;
  float sum = 0;
  s = ocal_gen_reduction(ctx, OCAL_F32, "0", "a + b", "(x[i] - y[i]) * (x[i] - y[i])",
                         "const float *x, const float *y", NULL, &gen);
  if (s != OCAL_OK) return fail("ocal_gen_reduction", s);
  if (show) {
    const char *src;
    ocal_gen_get_source(gen, &src);
    printf("---- generated source ----\n%s---- end ----\n", src);
  }
  ocal_gen_arg args[2];
  if ((s = ocal_buffer_from_host(ctx, OCAL_F32, 2, shape, x, &dx)) != OCAL_OK ||
      (s = ocal_buffer_from_host(ctx, OCAL_F32, 2, shape, y, &dy)) != OCAL_OK ||
      (s = ocal_buffer_create(ctx, OCAL_F32, 1, &one, &total)) != OCAL_OK ||
      (s = ocal_buffer_create(ctx, OCAL_F32, 1, &rows, &out_rows)) != OCAL_OK) {
    fail("a buffer", s);
  } else {
    args[0] = OCAL_GEN_BUFFER(dx);
    args[1] = OCAL_GEN_BUFFER(dy);
    if ((s = ocal_gen_run(gen, OCAL_GEN_AUTO, 2, args, total)) != OCAL_OK ||
        (s = ocal_gen_run_axis(gen, 1, 2, args, out_rows)) != OCAL_OK ||
        (s = ocal_buffer_read(total, 0, 1, &sum, NULL)) != OCAL_OK ||
        (s = ocal_buffer_read(out_rows, 0, rows, per_row, NULL)) != OCAL_OK) {
      fail("running the reduction", s);
    } else {
      double want = 0;
      for (size_t i = 0; i < n; i++) {
        double d = (double)x[i] - (double)y[i];
        want += d * d;
      }
      double rms = sqrt(sum / (double)n), want_rms = sqrt(want / (double)n);
      double rel = fabs(rms - want_rms) / want_rms;
      bad = rel > 1e-6;
      printf("rms distance of %zu floats: %.7f on the device, %.7f on the host (relative "
             "difference %.2g)\n", n, rms, want_rms, rel);
      size_t bad_rows = 0;
      for (size_t r = 0; r < rows; r++) {
        double w = 0;
        for (size_t c = 0; c < 100; c++) {
          double d = (double)x[r * 100 + c] - (double)y[r * 100 + c];
          w += d * d;
        }
        if (fabs(per_row[r] - w) > 1e-5 * w + 1e-30) bad_rows++;
      }
      printf("per row of a %zu x 100 matrix (along axis 1): %s\n", rows,
             bad_rows ? "MISMATCH" : "all rows match the host");
      bad += (int)bad_rows;
    }
  }
  ocal_buffer_release(dx);
  ocal_buffer_release(dy);
  ocal_buffer_release(total);
  ocal_buffer_release(out_rows);
  ocal_gen_release(gen);
  ocal_context_release(ctx);
  free(x);
  free(y);
  free(per_row);
  return bad == 0 ? 0 : 1;
}
