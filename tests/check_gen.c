/* ocal tests — generated kernels (src/gen/gen.c): elementwise, reduction and scan (whole
 * and along an axis; scans also against ocal_scan), against double-precision host
 * references on random data of odd sizes; argument-list parse errors; run-time argument
 * errors; build errors in the user's expressions; and the disk-cache hit of a generated
 * kernel in a second (exec'ed) process. */
#include "fixture.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static double *random_doubles(size_t n, uint64_t seed) {
  double *x = fixture_malloc(n * sizeof *x);
  uint64_t st = seed;
  for (size_t i = 0; i < n; i++)
    x[i] = (double)(fixture_random(&st) >> 11) / 9007199254740992.0 * 2.0 - 1.0;
  return x;
}

static ocal_buffer f32_buffer(const double *x, int ndim, const size_t *shape) {
  size_t n = fixture_numel(ndim, shape);
  float *f = fixture_malloc(n * sizeof *f);
  for (size_t i = 0; i < n; i++) f[i] = (float)x[i];
  ocal_buffer b;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_F32, ndim, shape, f, &b));
  free(f);
  return b;
}

static float *read_f32(ocal_buffer b, size_t n) {
  float *f = fixture_malloc(n * sizeof *f);
  ck_assert_ocal(ocal_buffer_read(b, 0, n, f, NULL));
  return f;
}

/* ---- elementwise ----------------------------------------------------------------------- */

static void check_axpy(size_t n) {
  double *x = random_doubles(n, n), *y = random_doubles(n, n + 1);
  ocal_buffer bx = f32_buffer(x, 1, &n), by = f32_buffer(y, 1, &n);
  ocal_gen g;
  ck_assert_ocal(ocal_gen_elementwise(fixture_ctx, "float a, const float *x, float *y",
                                      "y[i] = a * x[i] + y[i]", NULL, &g));
  float a = 1.5f;
  const ocal_gen_arg args[] = {OCAL_GEN_SCALAR(&a), OCAL_GEN_BUFFER(bx), OCAL_GEN_BUFFER(by)};
  ck_assert_ocal(ocal_gen_run(g, OCAL_GEN_AUTO, 3, args, NULL));
  float *out = read_f32(by, n);
  for (size_t i = 0; i < n; i++) {
    float want = a * (float)x[i] + (float)y[i];
    ck_assert_msg(fabsf(out[i] - want) <= 1e-6f * (fabsf(want) + 1), "n=%zu y[%zu] = %g, want %g",
                  n, i, out[i], want);
  }
  ck_assert_ocal(ocal_gen_release(g));
  ck_assert_ocal(ocal_buffer_release(bx));
  ck_assert_ocal(ocal_buffer_release(by));
  free(out);
  free(x);
  free(y);
}

START_TEST(test_elementwise_axpy) {
  check_axpy(1);
  check_axpy(1001);
  check_axpy(100003);
}
END_TEST

/* Every real type as scalars and pointers, a preamble, views, an explicit n. */
START_TEST(test_elementwise_types_preamble_views) {
  const size_t n = 777, m = 500;
  int fp64 = fixture_has_fp64();
  int32_t *a = fixture_malloc(n * 4);
  uint8_t *b = fixture_malloc(n);
  for (size_t i = 0; i < n; i++) {
    a[i] = (int32_t)i - 300;
    b[i] = (uint8_t)(i * 7);
  }
  ocal_buffer ba, bb, out, va, vo;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_I32, 1, &n, a, &ba));
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_U8, 1, &n, b, &bb));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, fp64 ? OCAL_F64 : OCAL_F32, 1, &n, &out));
  ck_assert_ocal(ocal_buffer_view(ba, 5, 1, &m, &va));
  ck_assert_ocal(ocal_buffer_view(out, 3, 1, &m, &vo));
  const char *args = fp64 ? "const int *a, const uchar *b, double *out, long k, uint u, ulong w, float f, double d"
                          : "const int *a, const uchar *b, float *out, long k, uint u, ulong w, float f, float d";
  ocal_gen g;
  ck_assert_ocal(ocal_gen_elementwise(
      fixture_ctx, args, "out[i] = twice(a[i]) + b[i] + k + u + (long)w + f + d",
      "long twice(int v) { return 2 * (long)v; }", &g));
  int64_t k = -1000000;
  uint32_t u = 7;
  uint64_t w = 11;
  float f = 0.5f;
  double d = 0.25;
  float df = 0.25f;
  const ocal_gen_arg gargs[] = {OCAL_GEN_BUFFER(va), OCAL_GEN_BUFFER(bb), OCAL_GEN_BUFFER(vo),
                                OCAL_GEN_SCALAR(&k), OCAL_GEN_SCALAR(&u), OCAL_GEN_SCALAR(&w),
                                OCAL_GEN_SCALAR(&f), fp64 ? OCAL_GEN_SCALAR(&d) : OCAL_GEN_SCALAR(&df)};
  ck_assert_ocal(ocal_gen_run(g, 400, 8, gargs, NULL));
  double *h = fixture_malloc(n * sizeof *h);
  if (fp64) {
    ck_assert_ocal(ocal_buffer_read(out, 0, n, h, NULL));
  } else {
    float *hf = read_f32(out, n);
    for (size_t i = 0; i < n; i++) h[i] = hf[i];
    free(hf);
  }
  for (size_t i = 0; i < n; i++) {
    double want = 0;
    if (i >= 3 && i < 403) {
      size_t j = i - 3;
      want = 2.0 * a[5 + j] + b[j] + (double)k + u + (double)w + 0.5 + 0.25;
    }
    ck_assert_msg(fabs(h[i] - want) <= (fp64 ? 0 : 1e-7 * fabs(want) + 0.5), "out[%zu] = %.17g, want %.17g", i, h[i], want);
  }
  const char *src;
  ck_assert_ocal(ocal_gen_get_source(g, &src));
  ck_assert_ptr_nonnull(strstr(src, "twice(a[i])"));
  ck_assert_ptr_nonnull(strstr(src, "long twice"));
  ck_assert_ocal(ocal_gen_release(g));
  ck_assert_ocal(ocal_buffer_release(va));
  ck_assert_ocal(ocal_buffer_release(vo));
  ck_assert_ocal(ocal_buffer_release(ba));
  ck_assert_ocal(ocal_buffer_release(bb));
  ck_assert_ocal(ocal_buffer_release(out));
  free(a);
  free(b);
  free(h);
}
END_TEST


/* The GPU form of the elementwise kernel (four indices per work-item, restrict pointers),
 * run here through the raw-kernel interface from the generated source, whatever the device. */
START_TEST(test_elementwise_wide_form) {
  const size_t n = 100003;
  double *x = random_doubles(n, 11), *y = random_doubles(n, 12);
  ocal_buffer bx = f32_buffer(x, 1, &n), by = f32_buffer(y, 1, &n);
  ocal_gen g;
  ck_assert_ocal(ocal_gen_elementwise(fixture_ctx, "float a, const float *x, float *y",
                                      "y[i] = a * x[i] + y[i]", NULL, &g));
  const char *src;
  ck_assert_ocal(ocal_gen_get_source(g, &src));
  ocal_program p;
  ocal_kernel k;
  ck_assert_ocal(ocal_program_create(fixture_ctx, src, NULL, &p));
  ck_assert_ptr_nonnull(strstr(src, "4-wide form"));
  for (int form = 0; form < 2; form++) {
  ck_assert_ocal(ocal_kernel_create(p, form ? "ocal_elementwise_vec" : "ocal_elementwise_wide", &k));
  cl_ulong cn = n, zero = 0;
  float a = -0.75f;
  ck_assert_ocal(ocal_kernel_set_scalar(k, 0, OCAL_U64, &cn));
  ck_assert_ocal(ocal_kernel_set_scalar(k, 1, OCAL_F32, &a));
  ck_assert_ocal(ocal_kernel_set_buffer(k, 2, bx));
  ck_assert_ocal(ocal_kernel_set_scalar(k, 3, OCAL_U64, &zero));
  ck_assert_ocal(ocal_kernel_set_buffer(k, 4, by));
  ck_assert_ocal(ocal_kernel_set_scalar(k, 5, OCAL_U64, &zero));
  const size_t items[] = {n / 4 + 1, 1000, 1};
  for (int round = 0; round < 3; round++) {
    ck_assert_ocal(ocal_kernel_launch(k, 1, &items[round], NULL));
    float *out = read_f32(by, n);
    for (size_t i = 0; i < n; i++) {
      double want = (double)(float)y[i];
      for (int r = 0; r <= round + 3 * form; r++) want = (double)(a * (float)x[i] + (float)want);
      ck_assert_msg(fabs(out[i] - want) <= 1e-6 * (fabs(want) + 1), "round %d: y[%zu] = %g, want %g",
                    round, i, out[i], want);
    }
    free(out);
  }
  ck_assert_ocal(ocal_kernel_release(k));
  }
  ck_assert_ocal(ocal_program_release(p));
  ck_assert_ocal(ocal_gen_release(g));
  /* Relational operators give -1 in vectors: such a body keeps the scalar form only. */
  ck_assert_ocal(ocal_gen_elementwise(fixture_ctx, "const float *x, float *y",
                                      "y[i] = x[i] > 0.5f", NULL, &g));
  ck_assert_ocal(ocal_gen_get_source(g, &src));
  ck_assert_ptr_null(strstr(src, "4-wide form"));
  ck_assert_ocal(ocal_gen_release(g));
  ck_assert_ocal(ocal_gen_elementwise(fixture_ctx, "const float *x, float *y",
                                      "y[i] = 2.0 * x[i]", NULL, &g)); /* double arithmetic */
  ck_assert_ocal(ocal_gen_get_source(g, &src));
  ck_assert_ptr_null(strstr(src, "4-wide form"));
  ck_assert_ocal(ocal_gen_release(g));
  ck_assert_ocal(ocal_gen_elementwise(fixture_ctx, "const float *x, float *y",
                                      "y[i] = fmax(2.0f * x[i], -x[i])", NULL, &g));
  ck_assert_ocal(ocal_gen_get_source(g, &src));
  ck_assert_ptr_nonnull(strstr(src, "4-wide form"));
  ck_assert_ocal(ocal_gen_release(g));
  ck_assert_ocal(ocal_buffer_release(bx));
  ck_assert_ocal(ocal_buffer_release(by));
  free(x);
  free(y);
}
END_TEST

/* ---- parse and run errors ---------------------------------------------------------------- */

static void assert_parse_error(const char *list, const char *column, const char *token) {
  ocal_gen g = NULL;
  ck_assert_ocal_fails(ocal_gen_elementwise(fixture_ctx, list, "i", NULL, &g),
                       OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_null(g);
  const char *msg = ocal_last_error();
  ck_assert_msg(strstr(msg, column) != NULL, "'%s': no '%s' in: %s", list, column, msg);
  ck_assert_msg(strstr(msg, token) != NULL, "'%s': no '%s' in: %s", list, token, msg);
}

START_TEST(test_parse_errors) {
  assert_parse_error("float a, cnst float *x", "column 10", "'cnst'");
  assert_parse_error("float a float *x", "column 9", "'float'");
  assert_parse_error("float a, float *", "column 17", "the end of the list");
  assert_parse_error("float a, const float *x,", "column 25", "the end of the list");
  assert_parse_error("float a, float **x", "column 17", "pointers to pointers");
  assert_parse_error("float i", "column 7", "reserved");
  assert_parse_error("float n", "column 7", "reserved");
  assert_parse_error("float ocal_x", "column 7", "reserved");
  assert_parse_error("float a, int a", "column 14", "declared before");
  assert_parse_error("half a", "column 1", "'half'");
  assert_parse_error("float a; int b", "column 8", "';");
  assert_parse_error("float 1a", "column 7", "'1a'");
  /* The caret line under the list. */
  ocal_gen g = NULL;
  ck_assert_ocal_fails(ocal_gen_elementwise(fixture_ctx, "float a, cnst float *x", "i", NULL, &g),
                       OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "float a, cnst float *x\n           ^"));
}
END_TEST

START_TEST(test_run_errors) {
  const size_t n = 10;
  ocal_buffer f, d;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &n, &f));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_I32, 1, &n, &d));
  ocal_gen g;
  ck_assert_ocal(ocal_gen_elementwise(fixture_ctx, "float a, float *y", "y[i] = a", NULL, &g));
  float a = 1;
  const ocal_gen_arg ok[] = {OCAL_GEN_SCALAR(&a), OCAL_GEN_BUFFER(f)};
  const ocal_gen_arg swapped[] = {OCAL_GEN_BUFFER(f), OCAL_GEN_SCALAR(&a)};
  const ocal_gen_arg wrong_type[] = {OCAL_GEN_SCALAR(&a), OCAL_GEN_BUFFER(d)};
  ck_assert_ocal_fails(ocal_gen_run(g, n, 1, ok, NULL), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "declares 2"));
  ck_assert_ocal_fails(ocal_gen_run(g, n, 2, swapped, NULL), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_gen_run(g, n, 2, wrong_type, NULL), OCAL_TYPE_MISMATCH);
  {
    /* The message quotes the declaration as written, const included. */
    ocal_gen gc;
    ck_assert_ocal(ocal_gen_elementwise(fixture_ctx, "const float *x, float *y", "y[i] = x[i]",
                                        NULL, &gc));
    const ocal_gen_arg wrong_const[] = {OCAL_GEN_BUFFER(d), OCAL_GEN_BUFFER(f)};
    ck_assert_ocal_fails(ocal_gen_run(gc, n, 2, wrong_const, NULL), OCAL_TYPE_MISMATCH);
    ck_assert_msg(strstr(ocal_last_error(), "argument 0 ('const float *x') needs a buffer of f32") !=
                      NULL,
                  "%s", ocal_last_error());
    ck_assert_ocal(ocal_gen_release(gc));
  }
  const ocal_gen_arg null_buffer[] = {OCAL_GEN_SCALAR(&a), OCAL_GEN_BUFFER(NULL)};
  ck_assert_ocal_fails(ocal_gen_run(g, n, 2, null_buffer, NULL), OCAL_INVALID_HANDLE);
  ck_assert_msg(strstr(ocal_last_error(), "argument 1 ('float *y') is a NULL buffer") != NULL,
                "%s", ocal_last_error());
  ck_assert_ocal_fails(ocal_gen_run(g, n, 2, ok, f), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_gen_run_axis(g, 0, 2, ok, f), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_gen_run(NULL, n, 2, ok, NULL), OCAL_INVALID_HANDLE);
  ck_assert_ocal(ocal_gen_run(g, 0, 2, ok, NULL));
  /* n beyond a writable buffer's end is refused; a const table may be shorter than n. */
  ck_assert_ocal_fails(ocal_gen_run(g, n + 1, 2, ok, NULL), OCAL_INVALID_ARGUMENT);
  ck_assert_msg(strstr(ocal_last_error(), "argument 1 ('float *y') holds 10 elements") != NULL,
                "%s", ocal_last_error());
  ck_assert_ocal(ocal_gen_release(g));
  const size_t two = 2;
  ocal_buffer table;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_I32, 1, &two, &table));
  ck_assert_ocal(ocal_gen_elementwise(fixture_ctx, "const int *t, float *y", "y[i] = t[i % 2]",
                                      NULL, &g));
  const ocal_gen_arg with_table[] = {OCAL_GEN_BUFFER(table), OCAL_GEN_BUFFER(f)};
  ck_assert_ocal(ocal_gen_run(g, n, 2, with_table, NULL));
  ck_assert_ocal(ocal_buffer_release(table));
  ck_assert_ocal(ocal_gen_release(g));
  ck_assert_ocal(ocal_gen_elementwise(fixture_ctx, "", "(void)i", NULL, &g));
  ck_assert_ocal_fails(ocal_gen_run(g, OCAL_GEN_AUTO, 0, NULL, NULL), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal(ocal_gen_release(g));
  /* Reductions: out of the wrong type or size. */
  ck_assert_ocal(ocal_gen_reduction(fixture_ctx, OCAL_F32, "0", "a + b", "x[i]",
                                    "const float *x", NULL, &g));
  const ocal_gen_arg rx[] = {OCAL_GEN_BUFFER(f)};
  ck_assert_ocal_fails(ocal_gen_run(g, n, 1, rx, f), OCAL_SHAPE_MISMATCH);
  ck_assert_ocal_fails(ocal_gen_run(g, n, 1, rx, d), OCAL_TYPE_MISMATCH);
  ck_assert_ocal_fails(ocal_gen_run(g, n, 1, rx, NULL), OCAL_INVALID_HANDLE);
  ck_assert_ocal_fails(ocal_gen_run_axis(g, 1, 1, rx, f), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal(ocal_gen_release(g));
  ck_assert_ocal_fails(ocal_gen_reduction(fixture_ctx, OCAL_C32, "0", "a + b", "x[i]",
                                          "const float *x", NULL, &g), OCAL_UNSUPPORTED);
  ck_assert_ocal_fails(ocal_gen_reduction(fixture_ctx, OCAL_F32, NULL, "a + b", "x[i]",
                                          "const float *x", NULL, &g), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_gen_scan(fixture_ctx, OCAL_F32, "0", "a + b", "x[i]",
                                     "const float *x", NULL, 2, &g), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal(ocal_buffer_release(f));
  ck_assert_ocal(ocal_buffer_release(d));
}
END_TEST

/* Whether a build message points at the line of `text`: as "label:1:" where the driver
 * honours #line (PoCL), else as ":L:" with L the line of the numbered generated source that
 * holds it (NVIDIA reports lines of the whole source). */
static int log_points_at(const char *msg, const char *label, const char *text) {
  char want[64];
  snprintf(want, sizeof want, "%s:1:", label);
  if (strstr(msg, want)) return 1;
  char needle[128];
  snprintf(needle, sizeof needle, "| %s", text);
  const char *hit = strstr(msg, needle);
  if (!hit) return 0;
  const char *start = hit;
  while (start > msg && start[-1] != '\n') start--;
  int line = atoi(start);
  snprintf(want, sizeof want, ":%d:", line);
  return line > 0 && strstr(msg, want) != NULL;
}

/* A mistake in the user's expression: the build log names the user's text by its label. */
START_TEST(test_build_error_in_body) {
  ocal_gen g = NULL;
  ck_assert_ocal_fails(ocal_gen_elementwise(fixture_ctx, "float *y", "y[i] = no_such_name", NULL,
                                            &g), OCAL_BUILD_FAILED);
  ck_assert_ptr_null(g);
  const char *msg = ocal_last_error();
  ck_assert_msg(strstr(msg, "no_such_name") != NULL, "%s", msg);
  ck_assert_msg(log_points_at(msg, "body", "y[i] = no_such_name"),
                "the log does not point at the body's line: %s", msg);
  ck_assert_msg(strstr(msg, "generated source:") != NULL, "%s", msg);
  ck_assert_ocal_fails(ocal_gen_reduction(fixture_ctx, OCAL_F32, "0", "a +* b", "x[i]",
                                          "const float *x", NULL, &g), OCAL_BUILD_FAILED);
  ck_assert_msg(log_points_at(ocal_last_error(), "reduce", "a +* b"), "%s", ocal_last_error());
}
END_TEST

/* ---- reductions ------------------------------------------------------------------------- */

/* dot = sum x[i] * y[i] over n floats, against double and against ocal_dot. */
static void check_dot(size_t n) {
  double *x = random_doubles(n, 2 * n), *y = random_doubles(n, 2 * n + 1);
  ocal_buffer bx = f32_buffer(x, 1, &n), by = f32_buffer(y, 1, &n), out, ref;
  const size_t one = 1;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &one, &out));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &one, &ref));
  ocal_gen g;
  ck_assert_ocal(ocal_gen_reduction(fixture_ctx, OCAL_F32, "0", "a + b", "x[i] * y[i]",
                                    "const float *x, const float *y", NULL, &g));
  const ocal_gen_arg args[] = {OCAL_GEN_BUFFER(bx), OCAL_GEN_BUFFER(by)};
  ck_assert_ocal(ocal_gen_run(g, n, 2, args, out));
  ck_assert_ocal(ocal_dot(bx, by, OCAL_AXIS_ALL, ref));
  float got, builtin;
  ck_assert_ocal(ocal_buffer_read(out, 0, 1, &got, NULL));
  ck_assert_ocal(ocal_buffer_read(ref, 0, 1, &builtin, NULL));
  double want = 0, mag = 0;
  for (size_t i = 0; i < n; i++) {
    double p = (double)(float)x[i] * (double)(float)y[i];
    want += (double)(float)p; /* the products are rounded to float, then summed exactly */
    mag += fabs(p);
  }
  /* Compensated: within a few roundings of the result, whatever n is. */
  double tol = 4 * 1.2e-7 * fabs(want) + 1e-7 * mag / sqrt((double)n + 1) + 1e-30;
  ck_assert_msg(fabs(got - want) <= tol, "n=%zu: generated dot %.9g, want %.9g (tol %.3g)", n,
                got, want, tol);
  ck_assert_msg(fabs(got - builtin) <= tol, "n=%zu: generated dot %.9g, ocal_dot %.9g", n, got,
                builtin);
  ck_assert_ocal(ocal_gen_release(g));
  ck_assert_ocal(ocal_buffer_release(bx));
  ck_assert_ocal(ocal_buffer_release(by));
  ck_assert_ocal(ocal_buffer_release(out));
  ck_assert_ocal(ocal_buffer_release(ref));
  free(x);
  free(y);
}

START_TEST(test_reduction_dot) {
  check_dot(1);
  check_dot(17);
  check_dot(1001);
  check_dot((1u << 20) + 3); /* two passes */
}
END_TEST

/* The compensated sum: 1 followed by many values below half an ulp of it. */
START_TEST(test_reduction_compensated) {
  const size_t n = 1u << 18;
  float *h = fixture_malloc(n * sizeof *h);
  h[0] = 1.0f;
  for (size_t i = 1; i < n; i++) h[i] = 1e-8f;
  ocal_buffer bx, out;
  const size_t one = 1;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_F32, 1, &n, h, &bx));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &one, &out));
  ocal_gen g;
  ck_assert_ocal(ocal_gen_reduction(fixture_ctx, OCAL_F32, "0", " ( b+a ) ", "x[i]",
                                    "const float *x", NULL, &g));
  const ocal_gen_arg args[] = {OCAL_GEN_BUFFER(bx)};
  ck_assert_ocal(ocal_gen_run(g, OCAL_GEN_AUTO, 1, args, out));
  float got;
  ck_assert_ocal(ocal_buffer_read(out, 0, 1, &got, NULL));
  double want = 1.0 + (double)(n - 1) * (double)1e-8f;
  ck_assert_msg(fabs(got - want) <= 1.2e-7 * want, "sum %.9g, want %.9g", got, want);
  ck_assert_ocal(ocal_gen_release(g));
  ck_assert_ocal(ocal_buffer_release(bx));
  ck_assert_ocal(ocal_buffer_release(out));
  free(h);
}
END_TEST

/* max(|x|) with a user function, and an exact 64-bit integer sum of i32 products. */
START_TEST(test_reduction_other_ops) {
  const size_t n = 100003, one = 1;
  double *x = random_doubles(n, 5);
  ocal_buffer bx = f32_buffer(x, 1, &n), out;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &one, &out));
  ocal_gen g;
  ck_assert_ocal(ocal_gen_reduction(fixture_ctx, OCAL_F32, "0", "fmax(a, b)", "absval(x[i])",
                                    "const float *x", "float absval(float v) { return fabs(v); }",
                                    &g));
  const ocal_gen_arg args[] = {OCAL_GEN_BUFFER(bx)};
  ck_assert_ocal(ocal_gen_run(g, n, 1, args, out));
  float got;
  ck_assert_ocal(ocal_buffer_read(out, 0, 1, &got, NULL));
  float want = 0;
  for (size_t i = 0; i < n; i++) want = fmaxf(want, fabsf((float)x[i]));
  ck_assert_msg(got == want, "max |x| = %g, want %g", got, want);
  ck_assert_ocal(ocal_gen_release(g));
  ck_assert_ocal(ocal_buffer_release(out));
  ck_assert_ocal(ocal_buffer_release(bx));

  int32_t *a = fixture_malloc(n * 4);
  uint64_t st = 9;
  for (size_t i = 0; i < n; i++) a[i] = (int32_t)(fixture_random(&st) >> 33) - (1 << 30);
  ocal_buffer ba;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_I32, 1, &n, a, &ba));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_I64, 1, &one, &out));
  ck_assert_ocal(ocal_gen_reduction(fixture_ctx, OCAL_I64, "0", "a + b", "(long)a[i] * k",
                                    "const int *a, int k", NULL, &g));
  int32_t k = -3;
  const ocal_gen_arg iargs[] = {OCAL_GEN_BUFFER(ba), OCAL_GEN_SCALAR(&k)};
  ck_assert_ocal(ocal_gen_run(g, OCAL_GEN_AUTO, 2, iargs, out));
  int64_t igot, iwant = 0;
  for (size_t i = 0; i < n; i++) iwant += (int64_t)a[i] * k;
  ck_assert_ocal(ocal_buffer_read(out, 0, 1, &igot, NULL));
  ck_assert_msg(igot == iwant, "integer sum %lld, want %lld", (long long)igot, (long long)iwant);
  /* An empty reduction gives the neutral value. */
  ck_assert_ocal(ocal_gen_run(g, 0, 2, iargs, out));
  ck_assert_ocal(ocal_buffer_read(out, 0, 1, &igot, NULL));
  ck_assert_int_eq(igot, 0);
  ck_assert_ocal(ocal_gen_release(g));
  ck_assert_ocal(ocal_buffer_release(ba));
  ck_assert_ocal(ocal_buffer_release(out));
  free(a);
  free(x);
}
END_TEST

/* sum over an axis of x * y for shapes that exercise every kernel (short and long rows,
 * columns, chunks), against double. */
static void check_axis(int ndim, const size_t *shape, int axis, int keep) {
  size_t n = fixture_numel(ndim, shape);
  double *x = random_doubles(n, n + (uint64_t)axis + 40), *y = random_doubles(n, n + 7);
  ocal_buffer bx = f32_buffer(x, ndim, shape), by = f32_buffer(y, ndim, shape), out;
  int all = axis == OCAL_AXIS_ALL, a = all ? 0 : axis < 0 ? axis + ndim : axis;
  size_t outer = 1, inner = 1, R = all ? n : shape[a], oshape[4];
  int ond = 0;
  for (int i = 0; i < ndim && !all; i++) {
    if (i < a) outer *= shape[i];
    if (i > a) inner *= shape[i];
    if (i != a || keep) oshape[ond++] = i == a ? 1 : shape[i];
  }
  if (ond == 0) oshape[ond++] = 1;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, ond, oshape, &out));
  ocal_gen g;
  ck_assert_ocal(ocal_gen_reduction(fixture_ctx, OCAL_F32, "0", "a + b", "x[i] * y[i]",
                                    "const float *x, const float *y", NULL, &g));
  const ocal_gen_arg args[] = {OCAL_GEN_BUFFER(bx), OCAL_GEN_BUFFER(by)};
  ck_assert_ocal(ocal_gen_run_axis(g, axis, 2, args, out));
  float *got = read_f32(out, outer * inner);
  for (size_t o = 0; o < outer; o++)
    for (size_t j = 0; j < inner; j++) {
      double want = 0, mag = 0;
      for (size_t r = 0; r < R; r++) {
        size_t i = (o * R + r) * inner + j;
        double p = (double)(float)x[i] * (double)(float)y[i];
        want += p;
        mag += fabs(p);
      }
      float v = got[o * inner + j];
      ck_assert_msg(fabs(v - want) <= 4e-7 * mag + 1e-30, "axis %d: out[%zu] = %.9g, want %.9g",
                    axis, o * inner + j, v, want);
    }
  free(got);
  ck_assert_ocal(ocal_gen_release(g));
  ck_assert_ocal(ocal_buffer_release(bx));
  ck_assert_ocal(ocal_buffer_release(by));
  ck_assert_ocal(ocal_buffer_release(out));
  free(x);
  free(y);
}

START_TEST(test_reduction_axis) {
  const size_t s3[3] = {7, 33, 5};
  check_axis(3, s3, 0, 0);
  check_axis(3, s3, 1, 1);
  check_axis(3, s3, 2, 0);
  check_axis(3, s3, -1, 1);
  const size_t rows[2] = {3, 100001}; /* long rows: chunks and a second pass */
  check_axis(2, rows, 1, 0);
  const size_t cols[2] = {20001, 3}; /* long columns: chunks along R */
  check_axis(2, cols, 0, 0);
  const size_t many[2] = {300, 70}; /* many short rows */
  check_axis(2, many, 1, 0);
  check_axis(1, &s3[1], 0, 0);
  check_axis(3, s3, OCAL_AXIS_ALL, 0);
}
END_TEST

START_TEST(test_reduction_axis_vector_columns) {
  /* inner a multiple of 4, where ocal_sum reads vectors of columns (strided_v) and a
   * generated reduction one column per work-item; sizes that are not powers of two. */
  const size_t a[3] = {5, 999, 12};
  check_axis(3, a, 1, 0);
  check_axis(3, a, 0, 1);
  const size_t b[2] = {3001, 8}; /* long columns: chunks and a second pass */
  check_axis(2, b, 0, 0);
}
END_TEST

/* A combination that is not a sum (one value per state, VW values folded by the user's
 * expression): max along every axis of an i32 array and over all of a u8 one (VW 16), exact. */
START_TEST(test_reduction_plain_axes_types) {
  const size_t shape[3] = {7, 1001, 12}, n = 7 * 1001 * 12;
  int32_t *h = fixture_malloc(n * 4);
  uint64_t st = 77;
  for (size_t i = 0; i < n; i++) h[i] = (int32_t)(fixture_random(&st) >> 32);
  ocal_buffer bx, out;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_I32, 3, shape, h, &bx));
  ocal_gen g;
  ck_assert_ocal(ocal_gen_reduction(fixture_ctx, OCAL_I32, "INT_MIN", "max(a, b)", "x[i] ^ k",
                                    "const int *x, int k", NULL, &g));
  int32_t k = 0x55;
  const ocal_gen_arg args[] = {OCAL_GEN_BUFFER(bx), OCAL_GEN_SCALAR(&k)};
  for (int axis = 0; axis < 3; axis++) {
    size_t outer = 1, inner = 1, oshape[2];
    int ond = 0;
    for (int d = 0; d < 3; d++) {
      if (d < axis) outer *= shape[d];
      if (d > axis) inner *= shape[d];
      if (d != axis) oshape[ond++] = shape[d];
    }
    size_t R = shape[axis];
    ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_I32, 2, oshape, &out));
    ck_assert_ocal(ocal_gen_run_axis(g, axis, 2, args, out));
    int32_t *got = fixture_malloc(outer * inner * 4);
    ck_assert_ocal(ocal_buffer_read(out, 0, outer * inner, got, NULL));
    for (size_t o = 0; o < outer; o++)
      for (size_t j = 0; j < inner; j++) {
        int32_t want = INT32_MIN;
        for (size_t r = 0; r < R; r++) {
          int32_t v = h[(o * R + r) * inner + j] ^ k;
          if (v > want) want = v;
        }
        ck_assert_msg(got[o * inner + j] == want, "axis %d: out[%zu] = %d, want %d", axis,
                      o * inner + j, got[o * inner + j], want);
      }
    free(got);
    ck_assert_ocal(ocal_buffer_release(out));
  }
  ck_assert_ocal(ocal_gen_release(g));
  ck_assert_ocal(ocal_buffer_release(bx));
  free(h);

  const size_t m = 100003, one = 1; /* u8: VW is 16 */
  uint8_t *u = fixture_malloc(m);
  for (size_t i = 0; i < m; i++) u[i] = (uint8_t)(fixture_random(&st) % 200);
  u[m - 2] = 201; /* in the scalar tail */
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_U8, 1, &m, u, &bx));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_U8, 1, &one, &out));
  ck_assert_ocal(ocal_gen_reduction(fixture_ctx, OCAL_U8, "0", "max(a, b)", "x[i]",
                                    "const uchar *x", NULL, &g));
  const ocal_gen_arg uargs[] = {OCAL_GEN_BUFFER(bx)};
  ck_assert_ocal(ocal_gen_run(g, OCAL_GEN_AUTO, 1, uargs, out));
  uint8_t ugot;
  ck_assert_ocal(ocal_buffer_read(out, 0, 1, &ugot, NULL));
  ck_assert_int_eq(ugot, 201);
  ck_assert_ocal(ocal_gen_release(g));
  ck_assert_ocal(ocal_buffer_release(bx));
  ck_assert_ocal(ocal_buffer_release(out));
  free(u);
}
END_TEST

/* A generated reduction is cl/reduce.cl behind the user's preamble: a preamble that defines
 * the short names the reduction kernels used before they were prefixed (and the element
 * type's, which the prologue forgets) must not break them. The sum is ocal_sum's (the same
 * kernels and plan) and the maximum ocal_amax's. */
static const char reduce_hostile_preamble[] =
    "#define st 1\n#define scratch (\n#define lid 0\n#define L 0\n#define g 2\n#define o 9\n"
    "#define c )\n#define head 3\n#define nvec ]\n#define vend 4\n#define stride 5\n"
    "#define per 6\n#define w 7\n#define v 4\n#define t 8\n#define r 9\n#define j 1\n"
    "#define s 2\n#define px 3\n#define P 6\n#define S 7\n#define R ]\n#define inner (\n"
    "#define outer )\n#define chunks 1\n#define clen 2\n#define dst 3\n#define doff 4\n"
    "#define kind 5\n#define count 6\n#define ddof 7\n#define mode 8\n#define h 0\n"
    "#define k 7\n#define d 1\n#define NL 3\n#define ACCF int\n#define ACCV int\n"
    "#define HAVE_DOUBLE 0\n#define FOR_LANES(M) (\n#define GROUP_TREE )\n"
    "#define VW 3\n#define IS_FLOAT 0\n#define IS_SIGNED 1\n#define T_MAX 0\n#define T char\n"
    "typedef int TV;\nint nsum_init(int q) { return q; }\nint store_T(int q) { return q; }\n"
    "float twice(float q) { return q + q; }\n";

static void check_reduce_hostile(const char *neutral, const char *reduce, ocal_reduce_op op) {
  const size_t n = 7 * 37449, cols[2] = {37449, 7}, one = 1;
  double *x = random_doubles(n, n + 99);
  ocal_buffer bx = f32_buffer(x, 1, &n), bx2 = f32_buffer(x, 2, cols), out, ref, out2, ref2;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &one, &out));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &one, &ref));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &cols[1], &out2));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &cols[1], &ref2));
  ck_assert_ocal(ocal_reduce(op, bx, OCAL_AXIS_ALL, ref));
  ck_assert_ocal(ocal_reduce(op, bx2, 0, ref2));
  /* twice(x[i]) * 0.5f is x[i] exactly: the preamble's function is used. */
  ocal_gen g;
  ck_assert_ocal(ocal_gen_reduction(fixture_ctx, OCAL_F32, neutral, reduce, "twice(x[i]) * 0.5f",
                                    "const float *x", reduce_hostile_preamble, &g));
  const ocal_gen_arg a1[] = {OCAL_GEN_BUFFER(bx)}, a2[] = {OCAL_GEN_BUFFER(bx2)};
  ck_assert_ocal(ocal_gen_run_axis(g, OCAL_AXIS_ALL, 1, a1, out));
  ck_assert_ocal(ocal_gen_run_axis(g, 0, 1, a2, out2));
  float *h = read_f32(out, 1), *hr = read_f32(ref, 1), *h2 = read_f32(out2, 7),
        *hr2 = read_f32(ref2, 7);
  /* Bit for bit where the plans read the same elements into the same lanes: everywhere for
   * the columns and the maximum; on GPUs a generated row is read as scalars (coalesced), so
   * a generated sum there is another compensated sum, within an ulp or two. */
  ocal_device_info info = {sizeof info};
  ck_assert_ocal(ocal_context_get_device_info(fixture_ctx, &info));
  double want = op == OCAL_REDUCE_SUM ? 0 : -INFINITY, mag = 0;
  for (size_t i = 0; i < n; i++) {
    want = op == OCAL_REDUCE_SUM ? want + (float)x[i] : fmax(want, (float)x[i]);
    mag += fabs((float)x[i]);
  }
  if (op == OCAL_REDUCE_MAX || info.type != OCAL_DEVICE_GPU)
    ck_assert_msg(memcmp(h, hr, sizeof(float)) == 0, "%s: whole reduction %.9g, ocal_%s %.9g",
                  reduce, h[0], ocal_reduce_op_name(op), hr[0]);
  else
    ck_assert_msg(fabs(h[0] - hr[0]) <= 2.4e-7 * fabs(hr[0]) + 1e-12 * mag,
                  "%s: whole reduction %.9g, ocal_%s %.9g", reduce, h[0],
                  ocal_reduce_op_name(op), hr[0]);
  for (int j = 0; j < 7; j++)
    ck_assert_msg(memcmp(&h2[j], &hr2[j], sizeof(float)) == 0,
                  "%s: column %d: %.9g, ocal_%s %.9g", reduce, j, h2[j],
                  ocal_reduce_op_name(op), hr2[j]);
  ck_assert_msg(fabs(h[0] - want) <= 1e-6 * mag, "%s: %.9g, want %.9g", reduce, h[0], want);
  const char *src;
  ck_assert_ocal(ocal_gen_get_source(g, &src));
  ck_assert_msg(strstr(src, "twice(x[i]) * 0.5f") && strstr(src, reduce) &&
                    strstr(src, "#define nvec ]"),
                "the generated source does not show the user's texts");
  ck_assert_ocal(ocal_gen_release(g));
  ocal_buffer all[] = {bx, bx2, out, ref, out2, ref2};
  for (size_t i = 0; i < 6; i++) ck_assert_ocal(ocal_buffer_release(all[i]));
  free(h);
  free(hr);
  free(h2);
  free(hr2);
  free(x);
}

START_TEST(test_reduction_hostile_preamble) {
  check_reduce_hostile("0", "a + b", OCAL_REDUCE_SUM);
  check_reduce_hostile("-INFINITY", "fmax(a, b)", OCAL_REDUCE_MAX);
}
END_TEST

/* ---- scans -------------------------------------------------------------------------- */

static void check_scan_sum(size_t n, int exclusive) {
  int32_t *a = fixture_malloc((n ? n : 1) * 4);
  uint64_t st = n + 3;
  for (size_t i = 0; i < n; i++) a[i] = (int32_t)(fixture_random(&st) >> 40) - (1 << 23);
  ocal_buffer ba, out;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_I32, 1, &n, a, &ba));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_I64, 1, &n, &out));
  ocal_gen g;
  ck_assert_ocal(ocal_gen_scan(fixture_ctx, OCAL_I64, "0", "a + b", "(long)x[i]", "const int *x",
                               NULL, exclusive, &g));
  const ocal_gen_arg args[] = {OCAL_GEN_BUFFER(ba)};
  ck_assert_ocal(ocal_gen_run(g, n, 1, args, out));
  int64_t *h = fixture_malloc((n ? n : 1) * 8), run = 0;
  ck_assert_ocal(ocal_buffer_read(out, 0, n, h, NULL));
  for (size_t i = 0; i < n; i++) {
    int64_t next = run + a[i];
    int64_t want = exclusive ? run : next;
    ck_assert_msg(h[i] == want, "n=%zu %s: out[%zu] = %lld, want %lld", n,
                  exclusive ? "exclusive" : "inclusive", i, (long long)h[i], (long long)want);
    run = next;
  }
  ck_assert_ocal(ocal_gen_release(g));
  ck_assert_ocal(ocal_buffer_release(ba));
  ck_assert_ocal(ocal_buffer_release(out));
  free(a);
  free(h);
}

START_TEST(test_scan_sum) {
  check_scan_sum(1, 0);
  check_scan_sum(1, 1);
  check_scan_sum(1000, 0);
  check_scan_sum(100003, 0); /* several pieces: three launches */
  check_scan_sum(100003, 1);
}
END_TEST

/* ---- creation errors (issue 19, bugs 5, 6, 13) ---------------------------------------- */

static unsigned long long compiles_of(ocal_context ctx) {
  ocal_cache_stats st = {sizeof st};
  ck_assert_ocal(ocal_context_get_cache_stats(ctx, &st));
  return (unsigned long long)st.compiles + st.disk_hits + st.memory_hits;
}

/* A NULL out-parameter is refused before anything is generated or built. */
START_TEST(test_gen_null_out) {
  unsigned long long before = compiles_of(fixture_ctx);
  ck_assert_ocal_fails(ocal_gen_elementwise(fixture_ctx, "float *y", "y[i] = 1.0f", NULL, NULL),
                       OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_gen_elementwise"));
  ck_assert_ocal_fails(ocal_gen_reduction(fixture_ctx, OCAL_F32, "0", "a + b", "x[i]",
                                          "const float *x", NULL, NULL),
                       OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_gen_reduction"));
  ck_assert_ocal_fails(ocal_gen_scan(fixture_ctx, OCAL_F32, "0", "a + b", "x[i]",
                                     "const float *x", NULL, 0, NULL),
                       OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_gen_scan"));
  ck_assert_uint_eq(compiles_of(fixture_ctx), before);
}
END_TEST

/* A double argument on a context with fp64 turned off: refused, and the message (formatted
 * from the parsed parameter, which AddressSanitizer once caught being read after free)
 * names the argument. */
START_TEST(test_gen_double_without_fp64) {
  ocal_context_options opt;
  ck_assert_ocal(ocal_context_options_init(&opt));
  opt.fp64 = 0;
  ocal_context ctx;
  ck_assert_ocal(ocal_context_create(&opt, &ctx));
  ocal_gen g = (ocal_gen)&g;
  ck_assert_ocal_fails(ocal_gen_elementwise(ctx, "double alpha_d, float *y", "y[i] = 1.0f", NULL,
                                            &g), OCAL_UNSUPPORTED);
  ck_assert_ptr_null(g);
  ck_assert_msg(strstr(ocal_last_error(), "'alpha_d'") && strstr(ocal_last_error(), "double"),
                "%s", ocal_last_error());
  ck_assert_ocal_fails(ocal_gen_reduction(ctx, OCAL_F32, "0", "a + b", "x[i] * (float)sc_d",
                                          "const float *x, double sc_d", NULL, &g),
                       OCAL_UNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "'sc_d'"));
  ck_assert_ocal_fails(ocal_gen_scan(ctx, OCAL_F32, "0", "a + b", "x[i]",
                                     "const float *x, double sc_d", NULL, 0, &g),
                       OCAL_UNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "'sc_d'"));
  ck_assert_ocal(ocal_context_release(ctx));
}
END_TEST

/* OCAL_GEN_MAX_ARGS arguments are taken (and run, checked against the host); one more is
 * refused at creation, not at every run. */
START_TEST(test_gen_too_many_args) {
  char list[4096], body[256];
  int len = snprintf(list, sizeof list, "float *y");
  for (int k = 1; k < OCAL_GEN_MAX_ARGS; k++)
    len += snprintf(list + len, sizeof list - (size_t)len, ", const float *a%d", k);
  snprintf(body, sizeof body, "y[i] = a1[i] + 2.0f * a%d[i]", OCAL_GEN_MAX_ARGS - 1);
  ocal_gen g;
  ck_assert_ocal(ocal_gen_elementwise(fixture_ctx, list, body, NULL, &g));
  const size_t n = 1001;
  double *x = random_doubles(n, 77);
  ocal_buffer bx = f32_buffer(x, 1, &n), by;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &n, &by));
  ocal_gen_arg args[OCAL_GEN_MAX_ARGS];
  args[0] = OCAL_GEN_BUFFER(by);
  for (int k = 1; k < OCAL_GEN_MAX_ARGS; k++) args[k] = OCAL_GEN_BUFFER(bx);
  ck_assert_ocal(ocal_gen_run(g, OCAL_GEN_AUTO, OCAL_GEN_MAX_ARGS, args, NULL));
  float *out = read_f32(by, n);
  for (size_t i = 0; i < n; i++)
    ck_assert_msg(fabsf(out[i] - 3.0f * (float)x[i]) <= 1e-6f, "y[%zu] = %g, want %g", i, out[i],
                  3.0 * x[i]);
  free(out);
  free(x);
  ck_assert_ocal(ocal_gen_release(g));
  ck_assert_ocal(ocal_buffer_release(bx));
  ck_assert_ocal(ocal_buffer_release(by));

  snprintf(list + len, sizeof list - (size_t)len, ", const float *a%d", OCAL_GEN_MAX_ARGS);
  unsigned long long before = compiles_of(fixture_ctx);
  g = (ocal_gen)&g;
  ck_assert_ocal_fails(ocal_gen_elementwise(fixture_ctx, list, body, NULL, &g), OCAL_UNSUPPORTED);
  ck_assert_ptr_null(g);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "at most 64"));
  ck_assert_ocal_fails(ocal_gen_reduction(fixture_ctx, OCAL_F32, "0", "a + b", "a1[i]", list,
                                          NULL, &g), OCAL_UNSUPPORTED);
  ck_assert_ocal_fails(ocal_gen_scan(fixture_ctx, OCAL_F32, "0", "a + b", "a1[i]", list, NULL,
                                     0, &g), OCAL_UNSUPPORTED);
  ck_assert_uint_eq(compiles_of(fixture_ctx), before);
}
END_TEST

/* A running maximum of x[i] * s (a user operator and a scalar), in place. */
START_TEST(test_scan_max_in_place) {
  const size_t n = 54321;
  double *x = random_doubles(n, 77);
  ocal_buffer bx = f32_buffer(x, 1, &n);
  ocal_gen g;
  ck_assert_ocal(ocal_gen_scan(fixture_ctx, OCAL_F32, "-INFINITY", "fmax(a, b)", "x[i] * s",
                               "const float *x, float s", NULL, 0, &g));
  float s = 2.0f;
  const ocal_gen_arg args[] = {OCAL_GEN_BUFFER(bx), OCAL_GEN_SCALAR(&s)};
  ck_assert_ocal(ocal_gen_run(g, OCAL_GEN_AUTO, 2, args, bx));
  float *h = read_f32(bx, n), run = -INFINITY;
  for (size_t i = 0; i < n; i++) {
    run = fmaxf(run, (float)x[i] * s);
    ck_assert_msg(h[i] == run, "out[%zu] = %g, want %g", i, h[i], run);
  }
  const char *src;
  ck_assert_ocal(ocal_gen_get_source(g, &src));
  ck_assert_ptr_nonnull(strstr(src, "fmax(a, b)"));
  ck_assert_ocal(ocal_gen_release(g));
  ck_assert_ocal(ocal_buffer_release(bx));
  free(h);
  free(x);
}
END_TEST

/* A scan whose out overlaps an argument in part (views of one buffer at different offsets)
 * is refused, naming the argument; in place (the same start) it runs. */
START_TEST(test_scan_out_overlapping_an_argument) {
  const size_t n = 1000, part = 600;
  double *x = random_doubles(n, 78);
  ocal_buffer bx = f32_buffer(x, 1, &n), in, out;
  ck_assert_ocal(ocal_buffer_view(bx, 0, 1, &part, &in));
  ck_assert_ocal(ocal_buffer_view(bx, 300, 1, &part, &out));
  ocal_gen g;
  ck_assert_ocal(ocal_gen_scan(fixture_ctx, OCAL_F32, "0", "a + b", "x[i]", "const float *x",
                               NULL, 0, &g));
  const ocal_gen_arg args[] = {OCAL_GEN_BUFFER(in)};
  ck_assert_ocal_fails(ocal_gen_run(g, OCAL_GEN_AUTO, 1, args, out), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_gen_run"));
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "'x'"));
  ck_assert_ocal_fails(ocal_gen_run_axis(g, 0, 1, args, out), OCAL_INVALID_ARGUMENT);
  /* In place: out is the argument's own view. */
  ck_assert_ocal(ocal_gen_run(g, OCAL_GEN_AUTO, 1, args, in));
  float *h = read_f32(in, part);
  double run = 0;
  for (size_t i = 0; i < part; i++) {
    run += (float)x[i];
    ck_assert_msg(fabs(h[i] - run) <= 1e-4 * (1 + fabs(run)), "out[%zu] = %g, want %g", i,
                  h[i], run);
  }
  ck_assert_ocal(ocal_gen_release(g));
  ck_assert_ocal(ocal_buffer_release(in));
  ck_assert_ocal(ocal_buffer_release(out));
  ck_assert_ocal(ocal_buffer_release(bx));
  free(h);
  free(x);
}
END_TEST

/* ---- scans along an axis -------------------------------------------------------------- */

/* A generated cumsum ("a + b" over "x[i]") or running maximum ("max(a, b)") of an f32
 * buffer along `axis`, inclusive or exclusive, against a double-precision host reference and
 * against the built-in ocal_scan, which must agree to the bit: the generated scan runs the
 * same plan and the same kernels' order of combination. With `view`, x and out are views at
 * odd offsets of larger buffers; with `in_place`, out is x. */
static void check_scan_axis(int ndim, const size_t *shape, int axis, int is_max, int exclusive,
                            int view, int in_place) {
  const size_t n = fixture_numel(ndim, shape), xoff = view ? 5 : 0, ooff = view ? 3 : 0;
  const size_t xn = n + xoff + 2, on = n + ooff + 1;
  double *x = random_doubles(xn, n * 4 + (uint64_t)(axis + 8) * 2 + (uint64_t)is_max);
  float *hx = fixture_malloc(xn * sizeof *hx);
  for (size_t i = 0; i < xn; i++) hx[i] = (float)x[i];
  ocal_buffer bxall, boall, bx, out, ref;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_F32, 1, &xn, hx, &bxall));
  ck_assert_ocal(ocal_buffer_view(bxall, xoff, ndim, shape, &bx));
  if (in_place) {
    out = bx;
    boall = NULL;
  } else {
    ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &on, &boall));
    ck_assert_ocal(ocal_buffer_view(boall, ooff, ndim, shape, &out));
  }
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, ndim, shape, &ref));
  /* The built-in first (before an in-place run overwrites x). */
  ck_assert_ocal(ocal_scan(is_max ? OCAL_SCAN_MAX : OCAL_SCAN_SUM, bx, axis, exclusive, ref));
  ocal_gen g;
  ck_assert_ocal(ocal_gen_scan(fixture_ctx, OCAL_F32, is_max ? "-INFINITY" : "0",
                               is_max ? "max(a, b)" : "a + b", "x[i]", "const float *x", NULL,
                               exclusive, &g));
  const ocal_gen_arg args[] = {OCAL_GEN_BUFFER(bx)};
  ck_assert_ocal(ocal_gen_run_axis(g, axis, 1, args, out));
  float *got = read_f32(out, n), *want_bi = read_f32(ref, n);
  const float *xv = hx + xoff;
  int a = axis < 0 ? axis + ndim : axis;
  size_t outer = 1, inner = 1, R = shape[a];
  for (int i = 0; i < ndim; i++) {
    if (i < a) outer *= shape[i];
    if (i > a) inner *= shape[i];
  }
  for (size_t o = 0; o < outer; o++)
    for (size_t j = 0; j < inner; j++) {
      double run = is_max ? -INFINITY : 0, mag = 0;
      for (size_t r = 0; r < R; r++) {
        size_t i = (o * R + r) * inner + j;
        double next = is_max ? fmax(run, (double)xv[i]) : run + (double)xv[i];
        double want = exclusive ? run : next;
        mag += fabs((double)xv[i]);
        ck_assert_msg(is_max ? got[i] == want : fabs(got[i] - want) <= 1e-6 * mag,
                      "%s %s, shape %zux%zux%zu axis %d: out[%zu] = %.9g, want %.9g",
                      is_max ? "max" : "sum", exclusive ? "exclusive" : "inclusive", outer, R,
                      inner, axis, i, got[i], want);
        ck_assert_msg(memcmp(&got[i], &want_bi[i], sizeof(float)) == 0,
                      "%s %s, shape %zux%zux%zu axis %d: out[%zu] = %.9g, ocal_scan %.9g",
                      is_max ? "max" : "sum", exclusive ? "exclusive" : "inclusive", outer, R,
                      inner, axis, i, got[i], want_bi[i]);
        run = next;
      }
    }
  if (view && !in_place) {
    /* Nothing written outside the view. */
    float edge[3];
    ck_assert_ocal(ocal_buffer_read(boall, 0, 3, edge, NULL));
    ck_assert(edge[0] == 0 && edge[1] == 0 && edge[2] == 0);
    ck_assert_ocal(ocal_buffer_read(boall, on - 1, 1, edge, NULL));
    ck_assert(edge[0] == 0);
  }
  ck_assert_ocal(ocal_gen_release(g));
  ck_assert_ocal(ocal_buffer_release(bx));
  if (!in_place) ck_assert_ocal(ocal_buffer_release(out));
  ck_assert_ocal(ocal_buffer_release(ref));
  ck_assert_ocal(ocal_buffer_release(bxall));
  if (boall) ck_assert_ocal(ocal_buffer_release(boall));
  free(got);
  free(want_bi);
  free(hx);
  free(x);
}

/* Every axis (and a negative one) of odd 2-D and 3-D shapes, both operations, inclusive and
 * exclusive: short rows, columns and long columns cut into pieces (the strided kernels). */
START_TEST(test_scan_axis_small) {
  const size_t s2[2] = {37, 101}, s3[3] = {5, 6, 7};
  for (int is_max = 0; is_max <= 1; is_max++)
    for (int excl = 0; excl <= 1; excl++) {
      for (int axis = -1; axis < 2; axis++) check_scan_axis(2, s2, axis, is_max, excl, 0, 0);
      for (int axis = -3; axis < 3; axis += axis == -3 ? 3 : 1)
        check_scan_axis(3, s3, axis, is_max, excl, 0, 0);
    }
}
END_TEST

/* Long contiguous rows (the tile kernels; with several pieces per row: three launches), long
 * columns in pieces, views at odd offsets, and in place. */
START_TEST(test_scan_axis_long_views) {
  const size_t rows[2] = {3, 701}, long_rows[2] = {2, 40001}, cols[2] = {1500, 3};
  const size_t s3[3] = {5, 6, 7};
  check_scan_axis(2, rows, -1, 0, 1, 0, 0);
  check_scan_axis(2, rows, 1, 1, 0, 0, 0);
  check_scan_axis(2, long_rows, 1, 0, 0, 0, 0);
  check_scan_axis(2, long_rows, -1, 1, 1, 0, 0);
  check_scan_axis(2, cols, 0, 0, 1, 0, 0);
  check_scan_axis(2, cols, 0, 1, 0, 0, 0);
  check_scan_axis(3, s3, 1, 0, 0, 1, 0);
  check_scan_axis(3, s3, -1, 1, 1, 1, 0);
  check_scan_axis(2, rows, 0, 0, 0, 1, 1);
  check_scan_axis(2, cols, 0, 1, 1, 0, 1);
}
END_TEST

START_TEST(test_scan_axis_errors) {
  const size_t s2[2] = {37, 101}, t2[2] = {101, 37}, r1 = 37, n = 37 * 101, z2[2] = {0, 5};
  ocal_buffer x, out, wrong, flat, dropped, xi, zx, zo;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 2, s2, &x));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 2, s2, &out));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 2, t2, &wrong));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &n, &flat));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &r1, &dropped));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_I32, 2, s2, &xi));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 2, z2, &zx));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 2, z2, &zo));
  ocal_gen g;
  ck_assert_ocal(ocal_gen_scan(fixture_ctx, OCAL_F32, "0", "a + b", "x[i]", "const float *x",
                               NULL, 0, &g));
  const ocal_gen_arg args[] = {OCAL_GEN_BUFFER(x)};
  ck_assert_ocal_fails(ocal_gen_run_axis(g, 2, 1, args, out), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "axis 2 is out of range"));
  ck_assert_ocal_fails(ocal_gen_run_axis(g, -3, 1, args, out), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_gen_run_axis(g, 1, 1, args, wrong), OCAL_SHAPE_MISMATCH);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "out has shape [101, 37]"));
  ck_assert_ocal_fails(ocal_gen_run_axis(g, 0, 1, args, flat), OCAL_SHAPE_MISMATCH);
  ck_assert_ocal_fails(ocal_gen_run_axis(g, 1, 1, args, dropped), OCAL_SHAPE_MISMATCH);
  ck_assert_ocal_fails(ocal_gen_run_axis(g, 1, 1, args, xi), OCAL_TYPE_MISMATCH);
  ck_assert_ocal_fails(ocal_gen_run_axis(g, 1, 1, args, NULL), OCAL_INVALID_HANDLE);
  ck_assert_ocal_fails(ocal_gen_run_axis(g, OCAL_AXIS_ALL, 1, args, dropped),
                       OCAL_SHAPE_MISMATCH);
  const ocal_gen_arg iargs[] = {OCAL_GEN_BUFFER(xi)};
  ck_assert_ocal_fails(ocal_gen_run_axis(g, 1, 1, iargs, out), OCAL_TYPE_MISMATCH);
  /* The whole buffer (any out of as many elements) and empty shapes are fine. */
  ck_assert_ocal(ocal_gen_run_axis(g, OCAL_AXIS_ALL, 1, args, flat));
  const ocal_gen_arg zargs[] = {OCAL_GEN_BUFFER(zx)};
  ck_assert_ocal(ocal_gen_run_axis(g, 1, 1, zargs, zo));
  ck_assert_ocal(ocal_gen_run_axis(g, 0, 1, zargs, zo));
  ck_assert_ocal(ocal_gen_release(g));
  /* No buffer argument to take a shape from. */
  ck_assert_ocal(ocal_gen_scan(fixture_ctx, OCAL_F32, "0", "a + b", "k", "float k", NULL, 0, &g));
  float k = 1;
  const ocal_gen_arg kargs[] = {OCAL_GEN_SCALAR(&k)};
  ck_assert_ocal_fails(ocal_gen_run_axis(g, 0, 1, kargs, out), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "first buffer argument"));
  ck_assert_ocal(ocal_gen_release(g));
  ocal_buffer all[] = {x, out, wrong, flat, dropped, xi, zx, zo};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) ck_assert_ocal(ocal_buffer_release(all[i]));
}
END_TEST

/* The whole buffer through ocal_gen_run_axis(OCAL_AXIS_ALL) and ocal_gen_run agree with
 * ocal_cumsum over the whole buffer, to the bit (short: the strided kernel; long: tiles). */
static void check_scan_whole(size_t n) {
  double *x = random_doubles(n, n + 91);
  const size_t shape[2] = {n / 7, 7};
  ocal_buffer bx = f32_buffer(x, 2, shape), o1, o2, ref;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &n, &o1));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 2, shape, &o2));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 2, shape, &ref));
  ck_assert_ocal(ocal_cumsum(bx, OCAL_AXIS_ALL, ref));
  ocal_gen g;
  ck_assert_ocal(ocal_gen_scan(fixture_ctx, OCAL_F32, "0", "a + b", "x[i]", "const float *x",
                               NULL, 0, &g));
  const ocal_gen_arg args[] = {OCAL_GEN_BUFFER(bx)};
  ck_assert_ocal(ocal_gen_run_axis(g, OCAL_AXIS_ALL, 1, args, o1));
  ck_assert_ocal(ocal_gen_run(g, OCAL_GEN_AUTO, 1, args, o2));
  float *h1 = read_f32(o1, n), *h2 = read_f32(o2, n), *hr = read_f32(ref, n);
  ck_assert_msg(memcmp(h1, hr, n * sizeof(float)) == 0, "n=%zu: axis-all scan differs from ocal_cumsum", n);
  ck_assert_msg(memcmp(h2, hr, n * sizeof(float)) == 0, "n=%zu: whole scan differs from ocal_cumsum", n);
  ck_assert_ocal(ocal_gen_release(g));
  ocal_buffer all[] = {bx, o1, o2, ref};
  for (size_t i = 0; i < 4; i++) ck_assert_ocal(ocal_buffer_release(all[i]));
  free(h1);
  free(h2);
  free(hr);
  free(x);
}

START_TEST(test_scan_whole_matches_builtin) {
  check_scan_whole(7 * 61);
  check_scan_whole(7 * 11113);
}
END_TEST

/* A generated scan's program is the user's preamble followed by cl/scan.cl, so a preamble
 * that #defines the short names a kernel might use for its own variables, helpers or macros
 * (with values that break any code that declares them) must not break the scan: cl/scan.cl
 * declares only ocal_/OCAL_ names. Both plans of long contiguous rows (OCAL_SCAN=three and
 * single) and the strided kernels, each against ocal_cumsum to the bit. */
static const char hostile_preamble[] =
    "#define tile 1\n#define L 0\n#define run (\n#define val 3\n#define sums +\n"
    "#define carry 2.0f\n#define m 0\n#define c )\n#define o 9\n#define v 4\n#define R ]\n"
    "#define P 6\n#define k 7\n#define lid 0\n#define total (\n#define base 1\n"
    "#define chunks 1\n#define clen 2\n#define out 3\n#define W 1\n#define hi 0\n"
    "#define state 5\n#define IPT 1\n#define PAD(q) 0\n#define sum_A int\n#define lb_store 8\n"
    "#define user_A char\n#define T_BITS(q) 0\n"
    "float twice(float q) { return q + q; }\n";

static void check_scan_hostile(size_t n) {
  double *x = random_doubles(n, n + 4242);
  const size_t cols[2] = {n / 7, 7};
  ocal_buffer bx = f32_buffer(x, 1, &n), bx2 = f32_buffer(x, 2, cols), out, ref, out2, ref2;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &n, &out));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &n, &ref));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 2, cols, &out2));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 2, cols, &ref2));
  ck_assert_ocal(ocal_cumsum(bx, OCAL_AXIS_ALL, ref));
  ck_assert_ocal(ocal_cumsum(bx2, 0, ref2));
  /* twice(x[i]) / 2 is x[i] exactly: the preamble's function is used, the sum is cumsum's. */
  ocal_gen g;
  ck_assert_ocal(ocal_gen_scan(fixture_ctx, OCAL_F32, "0", "a + b", "twice(x[i]) * 0.5f",
                               "const float *x", hostile_preamble, 0, &g));
  const ocal_gen_arg a1[] = {OCAL_GEN_BUFFER(bx)}, a2[] = {OCAL_GEN_BUFFER(bx2)};
  ck_assert_ocal(ocal_gen_run_axis(g, OCAL_AXIS_ALL, 1, a1, out));
  ck_assert_ocal(ocal_gen_run_axis(g, 0, 1, a2, out2));
  float *h = read_f32(out, n), *hr = read_f32(ref, n), *h2 = read_f32(out2, n),
        *hr2 = read_f32(ref2, n);
  ck_assert_msg(memcmp(h, hr, n * sizeof(float)) == 0,
                "n=%zu: whole scan under a hostile preamble differs from ocal_cumsum", n);
  ck_assert_msg(memcmp(h2, hr2, n * sizeof(float)) == 0,
                "n=%zu: column scan under a hostile preamble differs from ocal_cumsum", n);
  ck_assert_ocal(ocal_gen_release(g));
  ocal_buffer all[] = {bx, bx2, out, ref, out2, ref2};
  for (size_t i = 0; i < 6; i++) ck_assert_ocal(ocal_buffer_release(all[i]));
  free(h);
  free(hr);
  free(h2);
  free(hr2);
  free(x);
}

START_TEST(test_scan_hostile_preamble) {
  static const char *const plans[] = {"three", "single"};
  for (int p = 0; p < 2; p++) {
    setenv("OCAL_SCAN", plans[p], 1);
    fixture_reopen(); /* settings are read at context creation */
    check_scan_hostile(7 * 37449); /* 262143 */
  }
  unsetenv("OCAL_SCAN");
  fixture_reopen();
}
END_TEST

/* ---- the disk cache, seen from a second process --------------------------------------- */

static const char *program_path = "";

static int child_main(const char *dir, int expect_hit) {
  ocal_context_options opt;
  ocal_context_options_init(&opt);
  opt.disk_cache = 1;
  opt.cache_dir = dir;
  ocal_context ctx;
  if (ocal_context_create(&opt, &ctx) != OCAL_OK) return 10;
  int code = 0;
  ocal_gen g = NULL;
  ocal_buffer b = NULL, out = NULL;
  ocal_cache_stats st = {sizeof st};
  const size_t n = 1000, one = 1;
  float h[1000], sum = 0;
  for (size_t i = 0; i < n; i++) h[i] = (float)(i % 10);
  if (ocal_gen_reduction(ctx, OCAL_F32, "0", "a + b", "x[i] * x[i]", "const float *x", NULL,
                         &g) != OCAL_OK)
    code = 11;
  else if (ocal_context_get_cache_stats(ctx, &st) != OCAL_OK ||
           (expect_hit ? st.compiles != 0 || st.disk_hits != 1 : st.compiles != 1))
    code = 12;
  else if (ocal_buffer_from_host(ctx, OCAL_F32, 1, &n, h, &b) != OCAL_OK ||
           ocal_buffer_zeros(ctx, OCAL_F32, 1, &one, &out) != OCAL_OK ||
           ocal_gen_run(g, n, 1, (const ocal_gen_arg[]){OCAL_GEN_BUFFER(b)}, out) != OCAL_OK ||
           ocal_buffer_read(out, 0, 1, &sum, NULL) != OCAL_OK)
    code = 13;
  else if (sum != 28500.0f) /* 100 * (0 + 1 + 4 + ... + 81) */
    code = 14;
  if (code) fprintf(stderr, "child: code %d: %s\n", code, ocal_last_error());
  ocal_buffer_release(b);
  ocal_buffer_release(out);
  ocal_gen_release(g);
  ocal_context_release(ctx);
  return code;
}

START_TEST(test_disk_cache_second_process) {
  fixture_check_cache_children(program_path, "gen");
}
END_TEST

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "--child") == 0) return child_main(argv[2], atoi(argv[3]));
  program_path = argv[0];
  Suite *s = suite_create("gen");
  TCase *tc = fixture_tcase("gen");
  tcase_add_test(tc, test_elementwise_axpy);
  tcase_add_test(tc, test_elementwise_types_preamble_views);
  tcase_add_test(tc, test_elementwise_wide_form);
  tcase_add_test(tc, test_parse_errors);
  tcase_add_test(tc, test_run_errors);
  tcase_add_test(tc, test_build_error_in_body);
  tcase_add_test(tc, test_reduction_dot);
  tcase_add_test(tc, test_reduction_compensated);
  tcase_add_test(tc, test_reduction_other_ops);
  tcase_add_test(tc, test_reduction_axis);
  tcase_add_test(tc, test_reduction_axis_vector_columns);
  tcase_add_test(tc, test_reduction_plain_axes_types);
  tcase_add_test(tc, test_reduction_hostile_preamble);
  tcase_add_test(tc, test_scan_sum);
  tcase_add_test(tc, test_scan_max_in_place);
  tcase_add_test(tc, test_scan_out_overlapping_an_argument);
  tcase_add_test(tc, test_scan_axis_small);
  tcase_add_test(tc, test_scan_axis_long_views);
  tcase_add_test(tc, test_scan_axis_errors);
  tcase_add_test(tc, test_scan_whole_matches_builtin);
  tcase_add_test(tc, test_scan_hostile_preamble);
  tcase_add_test(tc, test_disk_cache_second_process);
  tcase_add_test(tc, test_gen_null_out);
  tcase_add_test(tc, test_gen_double_without_fp64);
  tcase_add_test(tc, test_gen_too_many_args);
  suite_add_tcase(s, tc);
  return fixture_run(s);
}
