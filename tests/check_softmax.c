/* ocal tests — softmax, log-softmax and softmax cross-entropy against a double-precision host
 * reference: every axis of 1-D to 3-D shapes of odd sizes, f32 and f64, in place, large and
 * NaN inputs, every label type, loss only, gradient only, gradient over the logits, bad
 * labels, and the argument errors. */
#include "fixture.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ck_assert records every passing assertion; per-element checks go through this instead. */
#define EXPECT(cond, ...)                   \
  do {                                      \
    if (!(cond)) ck_abort_msg(__VA_ARGS__); \
  } while (0)

static const ocal_dtype float_types[] = {OCAL_F32, OCAL_F64};

/* Random doubles in [-scale, scale). */
static double *random_doubles(size_t n, double scale, uint64_t seed) {
  double *p = fixture_malloc((n ? n : 1) * sizeof *p);
  uint64_t st = seed * 0x9e3779b97f4a7c15ull + 11;
  for (size_t i = 0; i < n; i++)
    p[i] = ((double)(fixture_random(&st) >> 11) / 9007199254740992.0 * 2 - 1) * scale;
  return p;
}

/* A device buffer of type d holding v (rounded to f32 for f32); v is updated to the rounded
 * values so the reference sees what the device sees. */
static ocal_buffer upload(ocal_dtype d, int ndim, const size_t *shape, double *v) {
  size_t n = fixture_numel(ndim, shape);
  ocal_buffer b;
  if (d == OCAL_F32) {
    float *f = fixture_malloc((n ? n : 1) * sizeof *f);
    for (size_t i = 0; i < n; i++) v[i] = f[i] = (float)v[i];
    ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, d, ndim, shape, f, &b));
    free(f);
  } else {
    ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, d, ndim, shape, v, &b));
  }
  return b;
}

static double *download(ocal_buffer b) {
  size_t n;
  ocal_dtype d;
  ck_assert_ocal(ocal_buffer_get_numel(b, &n));
  ck_assert_ocal(ocal_buffer_get_dtype(b, &d));
  double *v = fixture_malloc((n ? n : 1) * sizeof *v);
  void *raw = fixture_malloc((n ? n : 1) * ocal_dtype_size(d));
  ck_assert_ocal(ocal_buffer_read(b, 0, n, raw, NULL));
  for (size_t i = 0; i < n; i++) v[i] = (double)fixture_get(d, raw, i);
  free(raw);
  return v;
}

/* Softmax (or log-softmax) of the lines (outer, n, inner) of x, in double. */
static void reference(const double *x, double *y, size_t outer, size_t n, size_t inner, int log_) {
  for (size_t o = 0; o < outer; o++)
    for (size_t j = 0; j < inner; j++) {
      const double *px = x + o * n * inner + j;
      double *py = y + o * n * inner + j;
      double m = -INFINITY, s = 0;
      for (size_t i = 0; i < n; i++) m = fmax(m, px[i * inner]);
      for (size_t i = 0; i < n; i++) s += exp(px[i * inner] - m);
      for (size_t i = 0; i < n; i++)
        py[i * inner] = log_ ? px[i * inner] - m - log(s) : exp(px[i * inner] - m) / s;
    }
}

static double tolerance(ocal_dtype d) { return d == OCAL_F32 ? 2e-6 : 1e-13; }

static void compare(const double *got, const double *want, size_t n, ocal_dtype d,
                    const char *what) {
  for (size_t i = 0; i < n; i++) {
    double tol = tolerance(d) * (1 + fabs(want[i]));
    EXPECT(fabs(got[i] - want[i]) <= tol, "%s (%s) element %zu: got %.17g, want %.17g", what,
           ocal_dtype_name(d), i, got[i], want[i]);
  }
}

/* Every axis (and the whole buffer) of several shapes, softmax and log-softmax. */
START_TEST(test_softmax_axes) {
  ocal_dtype d = float_types[_i];
  if (!fixture_dtype_usable(d)) return;
  static const struct {
    int ndim;
    size_t shape[3];
  } cases[] = {{1, {1}}, {1, {1000}}, {2, {37, 10}}, {2, {5, 1}}, {3, {3, 17, 9}}, {2, {300, 7}}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    int ndim = cases[c].ndim;
    const size_t *shape = cases[c].shape;
    size_t n = fixture_numel(ndim, shape);
    double *x = random_doubles(n, 8.0, c + 1);
    ocal_buffer bx = upload(d, ndim, shape, x), by;
    ck_assert_ocal(ocal_buffer_create(fixture_ctx, d, ndim, shape, &by));
    double *want = fixture_malloc(n * sizeof *want);
    for (int log_ = 0; log_ < 2; log_++)
      for (int axis = -1; axis <= ndim; axis++) {
        int ax = axis == ndim ? OCAL_AXIS_ALL : axis;
        size_t outer = 1, len = n, inner = 1;
        if (ax != OCAL_AXIS_ALL) {
          int a = ax < 0 ? ax + ndim : ax;
          outer = fixture_numel(a, shape);
          len = shape[a];
          inner = fixture_numel(ndim - a - 1, shape + a + 1);
        }
        ck_assert_ocal(log_ ? ocal_log_softmax(bx, ax, by) : ocal_softmax(bx, ax, by));
        double *got = download(by);
        reference(x, want, outer, len, inner, log_);
        char what[96];
        snprintf(what, sizeof what, "%s case %zu axis %d", log_ ? "log_softmax" : "softmax", c,
                 axis);
        compare(got, want, n, d, what);
        free(got);
      }
    /* In place: out is x. */
    ck_assert_ocal(ocal_softmax(bx, -1, bx));
    double *got = download(bx);
    size_t last = shape[ndim - 1];
    reference(x, want, n / last, last, 1, 0);
    compare(got, want, n, d, "softmax in place");
    free(got);
    free(want);
    free(x);
    ocal_buffer_release(bx);
    ocal_buffer_release(by);
  }
}
END_TEST

/* Large logits do not overflow; a NaN poisons its own line only; views are honoured. */
START_TEST(test_softmax_special) {
  ocal_dtype d = float_types[_i];
  if (!fixture_dtype_usable(d)) return;
  size_t shape[2] = {3, 4};
  double x[12] = {1000, 1001, 999, 1000, 0, NAN, 1, 2, -1e4, -1e4, -1e4, -1e4};
  ocal_buffer bx = upload(d, 2, shape, x), by;
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, d, 2, shape, &by));
  ck_assert_ocal(ocal_softmax(bx, 1, by));
  double *got = download(by);
  double want[12];
  reference(x, want, 3, 4, 1, 0);
  for (int i = 0; i < 12; i++) {
    if (i >= 4 && i < 8) {
      EXPECT(isnan(got[i]), "element %d of the NaN row is %g, not NaN", i, got[i]);
    } else {
      EXPECT(fabs(got[i] - want[i]) <= 1e-6, "element %d: got %g, want %g", i, got[i], want[i]);
    }
  }
  free(got);
  /* A view of the last row only (offset 8). */
  size_t four = 4;
  ocal_buffer v;
  ck_assert_ocal(ocal_buffer_view(bx, 8, 1, &four, &v));
  ck_assert_ocal(ocal_softmax(v, 0, v));
  got = download(bx);
  for (int i = 8; i < 12; i++) EXPECT(fabs(got[i] - 0.25) <= 1e-7, "view element %d: %g", i, got[i]);
  EXPECT(got[0] == (d == OCAL_F32 ? (double)1000.0f : 1000.0), "the view wrote outside itself");
  free(got);
  ocal_buffer_release(v);
  ocal_buffer_release(bx);
  ocal_buffer_release(by);
}
END_TEST

static ocal_buffer upload_labels(ocal_dtype ld, size_t rows, const long *lab) {
  size_t es = ocal_dtype_size(ld);
  unsigned char *raw = fixture_malloc(rows * es);
  for (size_t r = 0; r < rows; r++) {
    int64_t v = lab[r];
    switch (ld) {
      case OCAL_U8: raw[r] = (uint8_t)v; break;
      case OCAL_I32: { int32_t t = (int32_t)v; memcpy(raw + r * es, &t, es); break; }
      case OCAL_U32: { uint32_t t = (uint32_t)v; memcpy(raw + r * es, &t, es); break; }
      default: memcpy(raw + r * es, &v, es); break;
    }
  }
  ocal_buffer b;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, ld, 1, &rows, raw, &b));
  free(raw);
  return b;
}

/* Loss and gradient of each row in double. */
static void xent_reference(const double *z, const long *lab, size_t rows, size_t classes,
                           double *loss, double *grad) {
  for (size_t r = 0; r < rows; r++) {
    const double *pz = z + r * classes;
    double m = -INFINITY, s = 0;
    for (size_t i = 0; i < classes; i++) m = fmax(m, pz[i]);
    for (size_t i = 0; i < classes; i++) s += exp(pz[i] - m);
    loss[r] = m + log(s) - pz[lab[r]];
    for (size_t i = 0; i < classes; i++)
      grad[r * classes + i] = exp(pz[i] - m) / s - (i == (size_t)lab[r] ? 1.0 : 0.0);
  }
}

static const ocal_dtype label_types[] = {OCAL_I32, OCAL_I64, OCAL_U8, OCAL_U32, OCAL_U64};

START_TEST(test_cross_entropy) {
  ocal_dtype d = float_types[_i / 5], ld = label_types[_i % 5];
  if (!fixture_dtype_usable(d)) return;
  static const size_t sizes[][2] = {{37, 10}, {256, 10}, {3, 1000}, {1, 1}};
  for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; c++) {
    size_t rows = sizes[c][0], classes = sizes[c][1], shape[2] = {rows, classes};
    double *z = random_doubles(rows * classes, 6.0, 100 + c);
    long *lab = fixture_malloc(rows * sizeof *lab);
    uint64_t st = 77 + c;
    size_t top = ld == OCAL_U8 && classes > 256 ? 256 : classes; /* what a u8 label holds */
    for (size_t r = 0; r < rows; r++) lab[r] = (long)(fixture_random(&st) % top);
    double *wl = fixture_malloc(rows * sizeof *wl), *wg = fixture_malloc(rows * classes * sizeof *wg);
    ocal_buffer bz = upload(d, 2, shape, z), bl = upload_labels(ld, rows, lab), loss, grad;
    ck_assert_ocal(ocal_buffer_create(fixture_ctx, d, 1, &rows, &loss));
    ck_assert_ocal(ocal_buffer_create(fixture_ctx, d, 2, shape, &grad));
    xent_reference(z, lab, rows, classes, wl, wg); /* z now holds the rounded values */

    ck_assert_ocal(ocal_softmax_cross_entropy(bz, bl, loss, grad));
    double *gl = download(loss), *gg = download(grad);
    compare(gl, wl, rows, d, "loss");
    compare(gg, wg, rows * classes, d, "grad");
    free(gl);
    free(gg);

    /* Each output alone. */
    ck_assert_ocal(ocal_buffer_fill(loss, d == OCAL_F32 ? (const void *)&(float){0} : (const void *)&(double){0}));
    ck_assert_ocal(ocal_softmax_cross_entropy(bz, bl, loss, NULL));
    gl = download(loss);
    compare(gl, wl, rows, d, "loss alone");
    free(gl);
    ck_assert_ocal(ocal_softmax_cross_entropy(bz, bl, NULL, grad));
    gg = download(grad);
    compare(gg, wg, rows * classes, d, "grad alone");
    free(gg);

    /* The gradient over the logits themselves, with the loss. */
    ck_assert_ocal(ocal_softmax_cross_entropy(bz, bl, loss, bz));
    gl = download(loss);
    gg = download(bz);
    compare(gl, wl, rows, d, "loss with grad in place");
    compare(gg, wg, rows * classes, d, "grad in place");
    free(gl);
    free(gg);

    ocal_buffer_release(bz);
    ocal_buffer_release(bl);
    ocal_buffer_release(loss);
    ocal_buffer_release(grad);
    free(z);
    free(lab);
    free(wl);
    free(wg);
  }
}
END_TEST

/* A label outside [0, classes) gives NaN in its row only; 3-D logits count rows. */
START_TEST(test_cross_entropy_bad_labels) {
  size_t shape[3] = {2, 2, 3}, rows = 4;
  double z[12] = {1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3};
  long lab[4] = {0, -1, 3, 2};
  ocal_buffer bz = upload(OCAL_F32, 3, shape, z), bl = upload_labels(OCAL_I64, rows, lab), loss,
              grad;
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 1, &rows, &loss));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 3, shape, &grad));
  ck_assert_ocal(ocal_softmax_cross_entropy(bz, bl, loss, grad));
  double *gl = download(loss), *gg = download(grad);
  double want0 = log(exp(1.0) + exp(2.0) + exp(3.0)) - 1.0;
  ck_assert_double_eq_tol(gl[0], want0, 1e-6);
  ck_assert(isnan(gl[1]) && isnan(gl[2]));
  ck_assert_double_eq_tol(gl[3], want0 - 2.0, 1e-6);
  for (int i = 3; i < 9; i++) ck_assert_msg(isnan(gg[i]), "grad %d of a bad row: %g", i, gg[i]);
  ck_assert(!isnan(gg[0]) && !isnan(gg[11]));
  free(gl);
  free(gg);
  ocal_buffer_release(bz);
  ocal_buffer_release(bl);
  ocal_buffer_release(loss);
  ocal_buffer_release(grad);
}
END_TEST

START_TEST(test_errors) {
  size_t s2[2] = {4, 5}, s20 = 20, s4 = 4, s3 = 3, s0[2] = {4, 0};
  ocal_buffer x, xi, y, y3, lab, labf, loss, loss3, big, v1, v2, e;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 2, s2, &x));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_I32, 2, s2, &xi));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 2, s2, &y));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &s3, &y3));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_I32, 1, &s4, &lab));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &s4, &labf));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &s4, &loss));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &s3, &loss3));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &s20, &big));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 2, s0, &e));

  ck_assert_ocal_fails(ocal_softmax(NULL, 0, y), OCAL_INVALID_HANDLE);
  ck_assert_ocal_fails(ocal_softmax(x, 0, NULL), OCAL_INVALID_HANDLE);
  ck_assert_ocal_fails(ocal_softmax(xi, 0, xi), OCAL_TYPE_MISMATCH);
  ck_assert_ocal_fails(ocal_softmax(x, 0, xi), OCAL_TYPE_MISMATCH);
  ck_assert_ocal_fails(ocal_softmax(x, 0, y3), OCAL_SHAPE_MISMATCH);
  /* Complex buffers are the wrong type, as integer ones are (not the elementwise calls'
   * OCAL_UNSUPPORTED, whose message offers integer types). */
  ocal_buffer xc, labc;
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_C32, 2, s2, &xc));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_C32, 1, &s4, &labc));
  ck_assert_ocal_fails(ocal_softmax(xc, 0, xc), OCAL_TYPE_MISMATCH);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "f32, f64, f16 or bf16"));
  ck_assert_ocal_fails(ocal_log_softmax(x, 0, xc), OCAL_TYPE_MISMATCH);
  ck_assert_ocal_fails(ocal_softmax_cross_entropy(xc, lab, loss, NULL), OCAL_TYPE_MISMATCH);
  ck_assert_ocal_fails(ocal_softmax_cross_entropy(x, lab, NULL, xc), OCAL_TYPE_MISMATCH);
  ck_assert_ocal_fails(ocal_softmax_cross_entropy(x, labc, loss, NULL), OCAL_TYPE_MISMATCH);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "integers"));
  ocal_buffer_release(xc);
  ocal_buffer_release(labc);
  ck_assert_ocal_fails(ocal_softmax(x, 2, y), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "axis 2"));
  ck_assert_ocal_fails(ocal_log_softmax(x, -3, y), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal(ocal_softmax(x, 1, big)); /* same count, other shape: fine */
  ck_assert_ocal(ocal_softmax(e, 0, e));   /* empty: nothing to do */
  size_t ten = 10;
  ck_assert_ocal(ocal_buffer_view(big, 0, 1, &ten, &v1));
  ck_assert_ocal(ocal_buffer_view(big, 5, 1, &ten, &v2));
  ck_assert_ocal_fails(ocal_softmax(v1, 0, v2), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "overlap"));

  ck_assert_ocal_fails(ocal_softmax_cross_entropy(x, lab, NULL, NULL), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_softmax_cross_entropy(NULL, lab, loss, NULL), OCAL_INVALID_HANDLE);
  ck_assert_ocal_fails(ocal_softmax_cross_entropy(x, NULL, loss, NULL), OCAL_INVALID_HANDLE);
  ck_assert_ocal_fails(ocal_softmax_cross_entropy(x, labf, loss, NULL), OCAL_TYPE_MISMATCH);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "integers"));
  ck_assert_ocal_fails(ocal_softmax_cross_entropy(xi, lab, loss, NULL), OCAL_TYPE_MISMATCH);
  ck_assert_ocal_fails(ocal_softmax_cross_entropy(x, lab, lab, NULL), OCAL_TYPE_MISMATCH);
  ck_assert_ocal_fails(ocal_softmax_cross_entropy(x, lab, loss3, NULL), OCAL_SHAPE_MISMATCH);
  ck_assert_ocal_fails(ocal_softmax_cross_entropy(x, y3, NULL, y), OCAL_TYPE_MISMATCH);
  ck_assert_ocal_fails(ocal_softmax_cross_entropy(x, lab, NULL, y3), OCAL_SHAPE_MISMATCH);
  ck_assert_ocal_fails(ocal_softmax_cross_entropy(big, lab, loss, NULL), OCAL_SHAPE_MISMATCH);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "{rows, classes}"));
  ck_assert_ocal_fails(ocal_softmax_cross_entropy(e, lab, loss, NULL), OCAL_SHAPE_MISMATCH);
  ocal_buffer lview;
  ck_assert_ocal(ocal_buffer_view(x, 0, 1, &s4, &lview));
  ck_assert_ocal_fails(ocal_softmax_cross_entropy(x, lab, lview, NULL), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "overlaps"));
  /* A released handle is named by its role (a live view keeps the handle itself valid). */
  ocal_buffer gone, gone_view;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 2, s2, &gone));
  ck_assert_ocal(ocal_buffer_view(gone, 0, 1, &s4, &gone_view));
  ck_assert_ocal(ocal_buffer_release(gone));
  ck_assert_ocal_fails(ocal_softmax(x, 1, gone), OCAL_INVALID_HANDLE);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_softmax: out is not a live"));
  ck_assert_ocal_fails(ocal_softmax_cross_entropy(x, lab, loss, gone), OCAL_INVALID_HANDLE);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_softmax_cross_entropy: grad is not a live"));
  ocal_buffer_release(gone_view);
  ck_assert_ocal(ocal_context_finish(fixture_ctx));

  ocal_buffer bufs[] = {x, xi, y, y3, lab, labf, loss, loss3, big, v1, v2, e, lview};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) ocal_buffer_release(bufs[i]);
}
END_TEST

static Suite *softmax_suite(void) {
  Suite *s = suite_create("softmax");
  TCase *tc = fixture_tcase("softmax");
  tcase_add_loop_test(tc, test_softmax_axes, 0, 2);
  tcase_add_loop_test(tc, test_softmax_special, 0, 2);
  suite_add_tcase(s, tc);
  tc = fixture_tcase("cross_entropy");
  tcase_add_loop_test(tc, test_cross_entropy, 0, 10);
  tcase_add_test(tc, test_cross_entropy_bad_labels);
  suite_add_tcase(s, tc);
  tc = fixture_tcase("errors");
  tcase_add_test(tc, test_errors);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return fixture_run(softmax_suite()); }
