/* ocal tests — scans: inclusive and exclusive prefix sums and maxima of every element type
 * against a plain host reference, on random data, over whole buffers of odd sizes and along
 * every axis of 1-D to 4-D shapes (shapes chosen to take every launch plan: one launch or
 * three, tiles of contiguous rows or a work-item per column, the single pass with decoupled
 * look-back), in place, and the errors. */
#include "fixture.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Per-element checks: ck_assert records every passing assertion (a write per call in fork
 * mode), which costs more than the test itself over a million elements. */
#define EXPECT(cond, ...)                 \
  do {                                    \
    if (!(cond)) ck_abort_msg(__VA_ARGS__); \
  } while (0)

static const ocal_dtype real_dtypes[] = {OCAL_F32, OCAL_F64, OCAL_I32, OCAL_U32,
                                         OCAL_I64, OCAL_U64, OCAL_U8};
#define N_REAL ((int)(sizeof real_dtypes / sizeof real_dtypes[0]))

static int is_float(ocal_dtype d) { return d == OCAL_F32 || d == OCAL_F64; }

/* Random non-zero data: floats +-(1..2) * 2^(-6..6), integers random bits. */
static void *make_data(ocal_dtype d, size_t n, uint64_t seed) {
  size_t es = ocal_dtype_size(d);
  unsigned char *p = fixture_malloc(n * es);
  uint64_t st = seed * 0x9e3779b97f4a7c15ull + 3;
  for (size_t i = 0; i < n; i++) {
    uint64_t r = fixture_random(&st);
    if (is_float(d)) {
      double u = (double)(r >> 11) / 9007199254740992.0;
      double v = ((r & 1) ? -1.0 : 1.0) * (1.0 + u) * ldexp(1.0, (int)((r >> 1) % 13) - 6);
      if (d == OCAL_F32)
        ((float *)p)[i] = (float)v;
      else
        ((double *)p)[i] = v;
    } else {
      memcpy(p + i * es, &r, es);
      if (d == OCAL_U8 && p[i] == 0) p[i] = 7;
    }
  }
  return p;
}

static ocal_dtype scan_out(ocal_scan_op op, ocal_dtype d) {
  ocal_dtype o;
  ck_assert_ocal(ocal_scan_dtype(op, d, &o));
  return o;
}

/* Scans every line (o, j) of x into want (in out_dt), and the running sum of magnitudes that
 * float errors scale with into mag. */
static void reference(ocal_scan_op op, ocal_dtype d, const void *x, size_t outer, size_t R,
                      size_t inner, int exclusive, ocal_dtype out_dt, void *want, double *mag) {
  for (size_t o = 0; o < outer; o++)
    for (size_t j = 0; j < inner; j++) {
      long double run = op == OCAL_SCAN_SUM ? 0 : -INFINITY, amag = 0;
      uint64_t urun = 0;
      int started = 0;
      for (size_t r = 0; r < R; r++) {
        size_t i = (o * R + r) * inner + j;
        long double v = fixture_get(d, x, i);
        /* the value before (exclusive) or after (inclusive) this element */
        for (int phase = 0; phase < 2; phase++) {
          if (phase == 1) {
            amag += fabsl(v);
            if (op == OCAL_SCAN_SUM) {
              run += v;
              if (!is_float(d)) urun += fixture_get_bits(d, x, i);
            } else if (!started) {
              run = v;
              started = 1;
            } else if (!isnan(run) && (isnan(v) || v > run)) {
              run = v; /* a NaN stays from its first appearance on */
            }
          }
          if (phase == (exclusive ? 0 : 1)) {
            mag[i] = (double)amag;
            if (op == OCAL_SCAN_SUM && !is_float(d)) {
              memcpy((char *)want + i * 8, &urun, 8);
            } else if (op == OCAL_SCAN_MAX && !started) { /* exclusive first: the identity */
              switch (out_dt) {
                case OCAL_F32: ((float *)want)[i] = -INFINITY; break;
                case OCAL_F64: ((double *)want)[i] = -INFINITY; break;
                case OCAL_I32: ((int32_t *)want)[i] = INT32_MIN; break;
                case OCAL_U32: ((uint32_t *)want)[i] = 0; break;
                case OCAL_I64: ((int64_t *)want)[i] = INT64_MIN; break;
                case OCAL_U64: ((uint64_t *)want)[i] = 0; break;
                case OCAL_U8: ((uint8_t *)want)[i] = 0; break;
                default: ck_abort();
              }
            } else if (op == OCAL_SCAN_MAX && !is_float(d)) {
              /* long double holds every 64-bit integer exactly */
              switch (d) {
                case OCAL_I32: ((int32_t *)want)[i] = (int32_t)run; break;
                case OCAL_U32: ((uint32_t *)want)[i] = (uint32_t)run; break;
                case OCAL_I64: ((int64_t *)want)[i] = (int64_t)run; break;
                case OCAL_U64: ((uint64_t *)want)[i] = (uint64_t)run; break;
                case OCAL_U8: ((uint8_t *)want)[i] = (uint8_t)run; break;
                default: ck_abort();
              }
            } else if (out_dt == OCAL_F32) {
              ((float *)want)[i] = (float)run;
            } else {
              ((double *)want)[i] = (double)run;
            }
          }
        }
      }
    }
}

static void compare(const char *what, ocal_scan_op op, ocal_dtype out_dt, const void *got,
                    const void *want, const double *mag, size_t n) {
  double tol = out_dt == OCAL_F32 ? 1e-4 : 1e-12;
  for (size_t i = 0; i < n; i++) {
    if (is_float(out_dt)) {
      double g = (double)fixture_get(out_dt, got, i), w = (double)fixture_get(out_dt, want, i);
      if (isnan(w)) {
        EXPECT(isnan(g), "%s: element %zu is %g, expected NaN", what, i, g);
        continue;
      }
      double allowed = op == OCAL_SCAN_MAX ? 0 : tol * mag[i];
      EXPECT(g == w || fabs(g - w) <= allowed,
                    "%s: element %zu is %.17g, expected %.17g (allowed error %.3g)", what, i, g,
                    w, allowed);
    } else {
      size_t es = ocal_dtype_size(out_dt);
      EXPECT(memcmp((const char *)got + i * es, (const char *)want + i * es, es) == 0,
                    "%s: element %zu is %lld, expected %lld", what, i,
                    (long long)fixture_get(out_dt, got, i), (long long)fixture_get(out_dt, want, i));
    }
  }
}

static void check_case(ocal_scan_op op, ocal_dtype d, int ndim, const size_t *shape, int axis,
                       int exclusive, size_t offset, uint64_t seed) {
  size_t n = fixture_numel(ndim, shape), es = ocal_dtype_size(d), total = n + offset;
  ocal_dtype out_dt = scan_out(op, d);
  unsigned char *hx = make_data(d, total, seed);
  ocal_buffer base, x, out;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, d, 1, &total, hx, &base));
  ck_assert_ocal(ocal_buffer_view(base, offset, ndim, shape, &x));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, out_dt, ndim, shape, &out));
  ck_assert_ocal(ocal_scan(op, x, axis, exclusive, out));
  size_t outer = 1, R = n, inner = 1;
  if (axis != OCAL_AXIS_ALL) {
    int a = axis < 0 ? axis + ndim : axis;
    for (int i = 0; i < ndim; i++) {
      if (i < a) outer *= shape[i];
      if (i > a) inner *= shape[i];
    }
    R = shape[a];
  }
  void *got = fixture_malloc(n * 8), *want = fixture_malloc(n * 8);
  double *mag = fixture_malloc(n * sizeof(double));
  ck_assert_ocal(ocal_buffer_read(out, 0, n, got, NULL));
  reference(op, d, hx + offset * es, outer, R, inner, exclusive, out_dt, want, mag);
  char what[200], sh[64] = "";
  for (int i = 0; i < ndim; i++)
    snprintf(sh + strlen(sh), sizeof sh - strlen(sh), i ? "x%zu" : "%zu", shape[i]);
  snprintf(what, sizeof what, "%s %s of %s [%s] axis %d (offset %zu)",
           exclusive ? "exclusive" : "inclusive", op == OCAL_SCAN_SUM ? "cumsum" : "cummax",
           ocal_dtype_name(d), sh, axis == OCAL_AXIS_ALL ? 99 : axis, offset);
  compare(what, op, out_dt, got, want, mag, n);
  free(got);
  free(want);
  free(mag);
  free(hx);
  ocal_buffer_release(x);
  ocal_buffer_release(base);
  ocal_buffer_release(out);
}

/* One test per element type: both ops, inclusive and exclusive, whole buffers of 1, 7 and
 * 1000003 elements (through misaligned views too). */
START_TEST(test_whole) {
  ocal_dtype d = real_dtypes[_i];
  if (!fixture_dtype_usable(d)) return;
  static const size_t sizes[] = {1, 7, 1000003};
  for (int s = 0; s < 3; s++)
    for (int op = 0; op < OCAL_SCAN_OP_COUNT; op++)
      for (int ex = 0; ex < 2; ex++)
        check_case((ocal_scan_op)op, d, 1, &sizes[s], OCAL_AXIS_ALL, ex, (size_t)(s + ex) % 2,
                   (uint64_t)(100 * _i + 10 * s + 2 * op + ex));
}
END_TEST

typedef struct {
  int ndim;
  size_t shape[4];
} shape_t;

static const shape_t axis_shapes[] = {
    {2, {37, 1001}},      /* tiles, one launch; columns of 37 */
    {2, {3, 100003}},     /* few long rows: three launches; columns of 3 */
    {2, {5000, 300}},     /* long columns: three launches */
    {2, {1000, 7}},       /* short rows */
    {3, {5, 6, 7}},       {4, {3, 4, 5, 6}}, {4, {2, 3, 1, 2049}},
};
#define N_SHAPES ((int)(sizeof axis_shapes / sizeof axis_shapes[0]))

/* One test per element type: both ops, inclusive and exclusive, along every axis. */
START_TEST(test_axes) {
  ocal_dtype d = real_dtypes[_i];
  if (!fixture_dtype_usable(d)) return;
  for (int s = 0; s < N_SHAPES; s++) {
    const shape_t *sh = &axis_shapes[s];
    for (int a = 0; a < sh->ndim; a++)
      for (int op = 0; op < OCAL_SCAN_OP_COUNT; op++) {
        int ex = (a + s + op) % 2, axis = (a + op) % 2 ? a - sh->ndim : a;
        check_case((ocal_scan_op)op, d, sh->ndim, sh->shape, axis, ex, (size_t)(a % 2),
                   (uint64_t)(7000 * _i + 100 * s + 10 * a + op));
      }
  }
}
END_TEST

START_TEST(test_in_place_and_nan) {
  size_t n = 300007;
  float *h = make_data(OCAL_F32, n, 1);
  h[1234] = NAN;
  ocal_buffer x;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_F32, 1, &n, h, &x));
  ck_assert_ocal(ocal_cummax(x, 0, x)); /* in place */
  float *got = fixture_malloc(n * sizeof(float));
  ck_assert_ocal(ocal_buffer_read(x, 0, n, got, NULL));
  float m = -INFINITY;
  for (size_t i = 0; i < 1234; i++) {
    m = h[i] > m ? h[i] : m;
    EXPECT(got[i] == m, "element %zu: %g vs %g", i, got[i], m);
  }
  for (size_t i = 1234; i < n; i++) EXPECT(isnan(got[i]), "element %zu: %g", i, got[i]);
  /* In-place cumsum of the original data. */
  h[1234] = 1.0f;
  ck_assert_ocal(ocal_buffer_write(x, 0, n, h, NULL));
  ck_assert_ocal(ocal_cumsum(x, OCAL_AXIS_ALL, x));
  ck_assert_ocal(ocal_buffer_read(x, 0, n, got, NULL));
  long double s = 0, a = 0;
  for (size_t i = 0; i < n; i++) {
    s += h[i];
    a += fabsl((long double)h[i]);
    EXPECT(fabs((double)(got[i] - s)) <= 1e-4 * (double)a, "element %zu: %g vs %Lg", i,
                  got[i], s);
  }
  ocal_buffer_release(x);
  free(got);
  free(h);

  /* i64 prefix sums are exact where doubles would round. */
  int64_t v[5] = {(int64_t)1 << 60, 1, (int64_t)1 << 60, -3, INT64_MIN + 5};
  int64_t r[5];
  size_t five = 5;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_I64, 1, &five, v, &x));
  ck_assert_ocal(ocal_cumsum(x, 0, x));
  ck_assert_ocal(ocal_buffer_read(x, 0, 5, r, NULL));
  ck_assert_int_eq(r[1], ((int64_t)1 << 60) + 1);
  ck_assert_int_eq(r[3], ((int64_t)1 << 61) - 2);
  ck_assert_int_eq(r[4], (int64_t)((uint64_t)(((int64_t)1 << 61) - 2) + (uint64_t)(INT64_MIN + 5)));
  ocal_buffer_release(x);
}
END_TEST

/* The single-pass scan (decoupled look-back, a work-group per tile of 256 * 24 elements of
 * 4-byte results or 256 * 12 of 8-byte ones on PoCL) at lengths around whole tiles, over one
 * row and a few rows, inclusive and exclusive, then the same call again on other data (the
 * tile states are reused with a new epoch: a value read before its flag says it is there is
 * the previous call's, which the H100 most likely once returned, docs/scan.md) and a longer one (they
 * grow). Integer sums must be exact, so a wrong, stale or missing predecessor shows. One test
 * per element type. */
START_TEST(test_single_pass) {
  ocal_dtype d = real_dtypes[_i];
  if (!fixture_dtype_usable(d)) return;
  static const size_t lengths[] = {1,     2047,  2048,  2049,  16383,  16384,   16385,
                                   32767, 32768, 32769, 40961, 77777, 262143, 1048577};
  for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++) {
    size_t n = lengths[k];
    int op = (int)(k % 3 == 2), ex = (int)(k % 2);
    check_case((ocal_scan_op)op, d, 1, &n, OCAL_AXIS_ALL, ex, k % 2, 9000 + 31 * (uint64_t)_i + k);
  }
  size_t rows[2] = {3, 36865}; /* 18 tiles per row and a partial one */
  check_case(OCAL_SCAN_SUM, d, 2, rows, 1, 0, 0, 9500 + (uint64_t)_i);
  check_case(OCAL_SCAN_SUM, d, 2, rows, -1, 1, 1, 9600 + (uint64_t)_i);
  check_case(OCAL_SCAN_MAX, d, 2, rows, 1, 0, 1, 9700 + (uint64_t)_i);
  size_t again = 65537;
  for (int r = 0; r < 3; r++)
    check_case(OCAL_SCAN_SUM, d, 1, &again, OCAL_AXIS_ALL, r % 2, 0, 9800 + (uint64_t)r);
}
END_TEST

/* OCAL_SCAN forces each plan of long contiguous scans (the rule picks the single pass on
 * GPUs and CPUs): both must give the reference's results, whole buffers and a few long rows,
 * inclusive and exclusive. One test per element type. */
START_TEST(test_scan_setting) {
  ocal_dtype d = real_dtypes[_i];
  static const char *const plans[] = {"three", "single"};
  static const size_t lengths[] = {40961, 262143, 1048577};
  for (int p = 0; p < 2; p++) {
    setenv("OCAL_SCAN", plans[p], 1);
    fixture_reopen(); /* settings are read at context creation */
    if (!fixture_dtype_usable(d)) break;
    for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++)
      check_case((ocal_scan_op)(k == 1), d, 1, &lengths[k], OCAL_AXIS_ALL, (int)(k % 2),
                 k % 2, 9900 + 10 * (uint64_t)_i + k);
    size_t rows[2] = {3, 36865};
    check_case(OCAL_SCAN_SUM, d, 2, rows, 1, p, 0, 9990 + (uint64_t)_i);
  }
  unsetenv("OCAL_SCAN");
  fixture_reopen();
}
END_TEST

/* OCAL_SCAN=walk builds the single pass so that only every 7th tile publishes its inclusive
 * prefix and look-backs read windows of 2, keeping 2: the others walk up to 6 tiles back,
 * slide, and fold the totals of windows they did not keep, which a device whose groups
 * finish in order (a CPU) never does otherwise. Integer sums and maxima over 1 to 260 tiles
 * must be exact, the totals in increasing tile order. */
START_TEST(test_lookback_walk) {
  setenv("OCAL_SCAN", "walk", 1);
  fixture_reopen(); /* settings are read at context creation */
  static const size_t lengths[] = {40961, 262143, 2100001};
  for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++) {
    check_case(OCAL_SCAN_SUM, OCAL_I32, 1, &lengths[k], OCAL_AXIS_ALL, (int)(k % 2), 0,
               9400 + (uint64_t)k);
    check_case(OCAL_SCAN_MAX, OCAL_I32, 1, &lengths[k], OCAL_AXIS_ALL, (int)(k % 2), 0,
               9450 + (uint64_t)k);
  }
  size_t rows[2] = {3, 100003};
  check_case(OCAL_SCAN_SUM, OCAL_I32, 2, rows, 1, 1, 0, 9490);
  unsetenv("OCAL_SCAN");
  fixture_reopen();
}
END_TEST

/* A device with less local memory than the one-pass kernel's tile (16 KiB, below
 * OpenCL's 32 KiB for full-profile devices, through the limits option) takes the three
 * passes and gets the reference's results; one with less than any scan kernel needs (4 KiB)
 * gets OCAL_UNSUPPORTED naming ocal_cumsum, and its context keeps working. */
START_TEST(test_small_local_memory) {
  ocal_context saved = fixture_ctx, small = NULL;
  ocal_context_options o;
  ocal_context_options_init(&o);
  o.limits = "local_mem=16k";
  ck_assert_ocal(ocal_context_create(&o, &small));
  fixture_ctx = small;
  size_t n = 100003, rows[2] = {2, 40961};
  check_case(OCAL_SCAN_SUM, OCAL_F32, 1, &n, OCAL_AXIS_ALL, 0, 3, 12001);
  check_case(OCAL_SCAN_MAX, OCAL_F32, 2, rows, 1, 1, 0, 12002);
  fixture_ctx = saved;
  ocal_context_release(small);

  o.limits = "local_mem=4k";
  ck_assert_ocal(ocal_context_create(&o, &small));
  ocal_buffer x, out, y;
  ck_assert_ocal(ocal_buffer_zeros(small, OCAL_F32, 1, &n, &x));
  ck_assert_ocal(ocal_buffer_create(small, OCAL_F32, 1, &n, &out));
  ck_assert_int_eq(ocal_cumsum(x, OCAL_AXIS_ALL, out), OCAL_UNSUPPORTED);
  ck_assert_msg(strncmp(ocal_last_error(), "ocal_cumsum: ", 13) == 0 &&
                    strstr(ocal_last_error(), "local memory"),
                "message: %s", ocal_last_error());
  ck_assert_ocal(ocal_binary(OCAL_BINARY_ADD, x, x, out)); /* the context still runs kernels */
  ck_assert_ocal(ocal_buffer_create(small, OCAL_F32, 1, &n, &y));
  ck_assert_ocal(ocal_buffer_copy(out, y));
  float last = -1;
  ck_assert_ocal(ocal_buffer_read(y, n - 1, 1, &last, NULL));
  ck_assert(last == 0.0f);
  ocal_buffer_release(x);
  ocal_buffer_release(out);
  ocal_buffer_release(y);
  ocal_context_release(small);
}
END_TEST

START_TEST(test_errors) {
  size_t shape[2] = {4, 6}, n24 = 24, n23 = 23, zero = 0;
  ocal_buffer x, xi, o, oi, o24, o23, oc, e, eo;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 2, shape, &x));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_I32, 2, shape, &xi));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 2, shape, &o));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_I32, 2, shape, &oi));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 1, &n24, &o24));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 1, &n23, &o23));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_C32, 2, shape, &oc));

  ck_assert_ocal(ocal_cumsum(x, OCAL_AXIS_ALL, o24)); /* flattened: any shape of 24 */
  ck_assert_ocal_fails(ocal_cumsum(x, OCAL_AXIS_ALL, o23), OCAL_SHAPE_MISMATCH);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "24"));
  ck_assert_ocal_fails(ocal_cumsum(x, 0, o24), OCAL_SHAPE_MISMATCH);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "[4, 6]"));
  ck_assert_ocal_fails(ocal_cumsum(xi, 0, oi), OCAL_TYPE_MISMATCH);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "i64"));
  ck_assert_ocal(ocal_cummax(xi, 1, oi)); /* max keeps the type */
  ck_assert_ocal_fails(ocal_cummax(x, 1, oi), OCAL_TYPE_MISMATCH);
  ck_assert_ocal_fails(ocal_cumsum(x, 2, o), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "axis 2"));
  ck_assert_ocal_fails(ocal_scan(OCAL_SCAN_SUM, x, 0, 2, o), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_scan((ocal_scan_op)5, x, 0, 0, o), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_cumsum(oc, 0, oc), OCAL_UNSUPPORTED);
  ck_assert_ocal_fails(ocal_cumsum(NULL, 0, o), OCAL_INVALID_HANDLE);
  ck_assert_ocal_fails(ocal_cumsum(x, 0, NULL), OCAL_INVALID_HANDLE);
  ocal_dtype dt;
  ck_assert_ocal(ocal_scan_dtype(OCAL_SCAN_SUM, OCAL_U8, &dt));
  ck_assert_int_eq(dt, OCAL_U64);
  ck_assert_ocal_fails(ocal_scan_dtype(OCAL_SCAN_MAX, OCAL_C64, &dt), OCAL_UNSUPPORTED);

  /* Overlap other than in place. */
  size_t big = 48, half = 24;
  ocal_buffer b, v1, v2;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &big, &b));
  ck_assert_ocal(ocal_buffer_view(b, 0, 1, &half, &v1));
  ck_assert_ocal(ocal_buffer_view(b, 12, 1, &half, &v2));
  ck_assert_ocal_fails(ocal_cumsum(v1, 0, v2), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "overlap"));
  ocal_buffer_release(v2);
  ck_assert_ocal(ocal_buffer_view(b, 24, 1, &half, &v2));
  ck_assert_ocal(ocal_cumsum(v1, 0, v2)); /* disjoint views of one buffer are fine */

  /* Empty: nothing to do. */
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 1, &zero, &e));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 1, &zero, &eo));
  ck_assert_ocal(ocal_cumsum(e, 0, eo));
  ck_assert_ocal(ocal_context_finish(fixture_ctx));

  ocal_buffer_release(e);
  ocal_buffer_release(eo);
  ocal_buffer_release(v1);
  ocal_buffer_release(v2);
  ocal_buffer_release(b);
  ocal_buffer_release(x);
  ocal_buffer_release(xi);
  ocal_buffer_release(o);
  ocal_buffer_release(oi);
  ocal_buffer_release(o24);
  ocal_buffer_release(o23);
  ocal_buffer_release(oc);
}
END_TEST

static Suite *scan_suite(void) {
  Suite *s = suite_create("scan");
  TCase *tc = fixture_tcase("whole");
  tcase_add_loop_test(tc, test_whole, 0, N_REAL);
  suite_add_tcase(s, tc);
  tc = fixture_tcase("axes");
  tcase_add_loop_test(tc, test_axes, 0, N_REAL);
  suite_add_tcase(s, tc);
  tc = fixture_tcase("single_pass");
  tcase_add_loop_test(tc, test_single_pass, 0, N_REAL);
  suite_add_tcase(s, tc);
  tc = fixture_tcase("scan_setting");
  tcase_add_loop_test(tc, test_scan_setting, 0, N_REAL);
  suite_add_tcase(s, tc);
  tc = fixture_tcase("semantics");
  tcase_add_test(tc, test_in_place_and_nan);
  tcase_add_test(tc, test_errors);
  tcase_add_test(tc, test_small_local_memory);
  tcase_add_test(tc, test_lookback_walk);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return fixture_run(scan_suite()); }
