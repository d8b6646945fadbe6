/* ocal benchmark — f16 and bf16 buffers beside f32: one JSON line per measurement.
 *
 *   bench/half [--quick]
 *
 * Memory-bound operations on 2^26 elements (2^16 with --quick), each as GB/s of bytes read
 * plus written and as a ratio to the GB/s of an f32 device copy measured in the same run:
 * a device copy, casts f32 -> f16/bf16 and back, an add (4-wide loads), exp, a sum of the
 * whole buffer (contiguous kernel, vector loads) and a column sum of a 8192-column matrix
 * (vector columns). Then GEMM at 4096^3 (256^3 with --quick): f32 and the portable half path
 * (operands converted to f32, the f32 product, the result rounded back), TFLOP/s. Each figure
 * is the median of 7 timed runs after one warm-up; the device is OCAL_DEVICE's. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ocal.h>

#define BENCH_NAME "bench/half"
#include "common.h"

static ocal_context ctx;

typedef ocal_status (*op_fn)(ocal_buffer a, ocal_buffer b, ocal_buffer c);

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Median seconds of 7 runs of fn after a warm-up. */
static double time_op(op_fn fn, ocal_buffer a, ocal_buffer b, ocal_buffer c) {
  double t[7];
  CHECK(fn(a, b, c));
  CHECK(ocal_context_finish(ctx));
  for (int i = 0; i < 7; i++) {
    double t0 = now();
    CHECK(fn(a, b, c));
    CHECK(ocal_context_finish(ctx));
    t[i] = now() - t0;
  }
  qsort(t, 7, sizeof t[0], cmp_double);
  return t[3];
}

static ocal_status op_copy(ocal_buffer a, ocal_buffer b, ocal_buffer c) {
  (void)c;
  return ocal_buffer_copy(a, b);
}
static ocal_status op_cast(ocal_buffer a, ocal_buffer b, ocal_buffer c) {
  (void)c;
  return ocal_cast(a, b);
}
static ocal_status op_add(ocal_buffer a, ocal_buffer b, ocal_buffer c) {
  return ocal_binary(OCAL_BINARY_ADD, a, b, c);
}
static ocal_status op_exp(ocal_buffer a, ocal_buffer b, ocal_buffer c) {
  (void)c;
  return ocal_unary(OCAL_UNARY_EXP, a, b);
}
static ocal_status op_sum_all(ocal_buffer a, ocal_buffer b, ocal_buffer c) {
  (void)c;
  return ocal_sum(a, OCAL_AXIS_ALL, b);
}
static ocal_status op_sum_cols(ocal_buffer a, ocal_buffer b, ocal_buffer c) {
  (void)c;
  return ocal_sum(a, 0, b);
}
static ocal_status op_gemm(ocal_buffer a, ocal_buffer b, ocal_buffer c) {
  return ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1.0, a, b, 0.0, c);
}

static void report(const char *op, ocal_dtype d, size_t n, double sec, double bytes,
                   double copy_gbs) {
  double gbs = bytes / sec * 1e-9;
  printf("{\"bench\":\"half\",\"op\":\"%s\",\"dtype\":\"%s\",\"n\":%zu,\"ms\":%.4f,"
         "\"GBps\":%.1f,\"of_copy\":%.3f}\n",
         op, ocal_dtype_name(d), n, sec * 1e3, gbs, copy_gbs > 0 ? gbs / copy_gbs : 0.0);
}

static ocal_buffer make(ocal_dtype d, int ndim, const size_t *shape) {
  ocal_buffer b, f;
  size_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  CHECK(ocal_buffer_create(ctx, d, ndim, shape, &b));
  CHECK(ocal_buffer_create(ctx, OCAL_F32, ndim, shape, &f));
  CHECK(ocal_random_uniform(7, 0, -1, 1, f));
  CHECK(ocal_cast(f, b));
  CHECK(ocal_buffer_release(f));
  return b;
}

int main(int argc, char **argv) {
  int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  CHECK(ocal_context_create(NULL, &ctx));
  ocal_device_info info = {sizeof info};
  CHECK(ocal_context_get_device_info(ctx, &info));
  fprintf(stderr, "bench/half on %s\n", info.name);
  const size_t cols = quick ? 256 : 8192, n = quick ? (size_t)1 << 16 : (size_t)1 << 26;
  const size_t shape[2] = {n / cols, cols}, one = 1;
  const ocal_dtype types[] = {OCAL_F32, OCAL_F16, OCAL_BF16};
  double copy_gbs = 0;
  for (size_t t = 0; t < 3; t++) {
    ocal_dtype d = types[t];
    double es = (double)ocal_dtype_size(d);
    ocal_buffer a = make(d, 2, shape), b = make(d, 2, shape), c = make(d, 2, shape);
    ocal_buffer f32 = make(OCAL_F32, 2, shape), s1, sc;
    CHECK(ocal_buffer_create(ctx, d, 1, &one, &s1));
    CHECK(ocal_buffer_create(ctx, d, 1, &cols, &sc));
    double sec = time_op(op_copy, a, b, NULL);
    report("copy", d, n, sec, 2 * es * (double)n, 0);
    if (d == OCAL_F32) copy_gbs = 2 * es * (double)n / sec * 1e-9;
    if (d != OCAL_F32) {
      report("cast_from_f32", d, n, time_op(op_cast, f32, a, NULL), (4 + es) * (double)n,
             copy_gbs);
      report("cast_to_f32", d, n, time_op(op_cast, a, f32, NULL), (4 + es) * (double)n,
             copy_gbs);
    }
    report("add", d, n, time_op(op_add, a, b, c), 3 * es * (double)n, copy_gbs);
    report("exp", d, n, time_op(op_exp, a, b, NULL), 2 * es * (double)n, copy_gbs);
    report("sum", d, n, time_op(op_sum_all, a, s1, NULL), es * (double)n, copy_gbs);
    report("sum_axis0", d, n, time_op(op_sum_cols, a, sc, NULL), es * (double)n, copy_gbs);
    ocal_buffer_release(a), ocal_buffer_release(b), ocal_buffer_release(c);
    ocal_buffer_release(f32), ocal_buffer_release(s1), ocal_buffer_release(sc);
  }
  const size_t g = quick ? 256 : 4096, gs[2] = {g, g};
  for (size_t t = 0; t < 3; t++) {
    ocal_dtype d = types[t];
    ocal_buffer a = make(d, 2, gs), b = make(d, 2, gs), c = make(d, 2, gs);
    double sec = time_op(op_gemm, a, b, c);
    printf("{\"bench\":\"half\",\"op\":\"gemm\",\"dtype\":\"%s\",\"n\":%zu,\"ms\":%.3f,"
           "\"TFLOPs\":%.2f}\n",
           ocal_dtype_name(d), g, sec * 1e3, 2.0 * (double)g * (double)g * (double)g / sec * 1e-12);
    ocal_buffer_release(a), ocal_buffer_release(b), ocal_buffer_release(c);
  }
  CHECK(ocal_context_release(ctx));
  return 0;
}
