/* ocal tests — reductions: every op and element type against a plain host reference, on
 * random data, over whole buffers of odd sizes and along every axis of 1-D to 4-D shapes
 * (shapes chosen to take every launch plan: one launch, chunks merged per group or per
 * work-item, contiguous and strided), plus the float-sum accuracy test, integer
 * exactness, NaN / infinity / empty semantics and the error cases. */
#include "fixture.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Per-element checks: ck_assert records every passing assertion (a write per call in fork
 * mode), which costs more than the test itself over a million elements. */
#define EXPECT(cond, ...)                 \
  do {                                    \
    if (!(cond)) ck_abort_msg(__VA_ARGS__); \
  } while (0)

/* ---- helpers ------------------------------------------------------------------------- */

static const ocal_dtype real_dtypes[] = {OCAL_F32, OCAL_F64, OCAL_I32, OCAL_U32,
                                         OCAL_I64, OCAL_U64, OCAL_U8};
#define N_REAL ((int)(sizeof real_dtypes / sizeof real_dtypes[0]))

static int is_float(ocal_dtype d) { return d == OCAL_F32 || d == OCAL_F64; }
static int is_signed(ocal_dtype d) { return d == OCAL_I32 || d == OCAL_I64; }

static void set_ld(ocal_dtype d, void *p, size_t i, long double v) {
  switch (d) {
    case OCAL_F32: ((float *)p)[i] = (float)v; break;
    case OCAL_F64: ((double *)p)[i] = (double)v; break;
    case OCAL_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    case OCAL_U32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case OCAL_I64: ((int64_t *)p)[i] = (int64_t)v; break;
    case OCAL_U64: ((uint64_t *)p)[i] = (uint64_t)v; break;
    case OCAL_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    default: ck_abort_msg("bad dtype");
  }
}

/* Kinds of test data; never all zeros. */
enum {
  DATA_MIXED, /* floats: +-(1..2) * 2^(-8..8); integers: random bits over the full range */
  DATA_NEAR1, /* for products: floats +-[0.99, 1.01]; integers odd (the product never 0) */
  DATA_FEW    /* few distinct non-zero values: many ties for min/max/argmin/argmax */
};

static void *make_data(ocal_dtype d, size_t n, int kind, uint64_t seed) {
  size_t es = ocal_dtype_size(d);
  unsigned char *p = fixture_malloc(n * es);
  uint64_t st = seed * 0x9e3779b97f4a7c15ull + 1;
  for (size_t i = 0; i < n; i++) {
    uint64_t r = fixture_random(&st);
    double u = (double)(r >> 11) / 9007199254740992.0; /* [0, 1) */
    double sign = (r & 1) ? -1.0 : 1.0;
    if (kind == DATA_FEW) {
      int k = (int)(r % 9) - 4; /* -4 .. 4, 0 becomes 5 */
      if (k == 0) k = 5;
      if (!is_signed(d) && !is_float(d)) k = k < 0 ? -k + 5 : k; /* unsigned: 1 .. 9 */
      set_ld(d, p, i, is_float(d) ? (long double)k * 0.25L : (long double)k);
    } else if (is_float(d)) {
      double v = kind == DATA_NEAR1 ? sign * (0.99 + 0.02 * u)
                                    : sign * (1.0 + u) * ldexp(1.0, (int)((r >> 1) % 17) - 8);
      set_ld(d, p, i, v);
    } else if (kind == DATA_NEAR1) {
      memcpy(p + i * es, &r, es);
      p[i * es] |= 1; /* odd (little-endian) */
    } else {
      memcpy(p + i * es, &r, es);
      if (d == OCAL_U8 && p[i] == 0) p[i] = 1;
    }
  }
  return p;
}

/* A buffer holding `host` (n elements), seen through a view at `offset` when offset > 0 (so
 * that its first element is not aligned for vector loads). */
static ocal_buffer upload(ocal_dtype d, int ndim, const size_t *shape, const void *host,
                          size_t offset) {
  size_t n = fixture_numel(ndim, shape);
  size_t total = n + offset;
  ocal_buffer base, view;
  unsigned char *tmp = fixture_malloc(total * ocal_dtype_size(d));
  memset(tmp, 0x5a, offset * ocal_dtype_size(d));
  memcpy(tmp + offset * ocal_dtype_size(d), host, n * ocal_dtype_size(d));
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, d, 1, &total, tmp, &base));
  free(tmp);
  ck_assert_ocal(ocal_buffer_view(base, offset, ndim, shape, &view));
  ocal_buffer_release(base); /* the view keeps the memory */
  return view;
}

/* ---- the reference ------------------------------------------------------------------- */

/* Reduces line (o, j) of x (and y) along R; writes result i of `ref` in out_dt and the
 * magnitude that float errors scale with into scale[i]. */
static void reference(ocal_reduce_op op, ocal_dtype d, const void *x, const void *y,
                      size_t outer, size_t R, size_t inner, int ddof, ocal_dtype out_dt,
                      void *ref, double *scale) {
  for (size_t o = 0; o < outer; o++) {
    for (size_t j = 0; j < inner; j++) {
      size_t out_i = o * inner + j;
#define IDX(r) (((o) * R + (r)) * inner + (j))
      long double s = 0, c = 0, mag = 0, v;
      uint64_t u = op == OCAL_REDUCE_PROD ? 1 : 0;
      int64_t best = -1;
      long double bv = 0;
      int nan = 0;
      switch (op) {
        case OCAL_REDUCE_SUM:
        case OCAL_REDUCE_MEAN:
        case OCAL_REDUCE_DOT:
        case OCAL_REDUCE_PROD:
          if (!is_float(d) && op != OCAL_REDUCE_MEAN) {
            for (size_t r = 0; r < R; r++) {
              uint64_t a = fixture_get_bits(d, x, IDX(r));
              if (op == OCAL_REDUCE_SUM) u += a;
              if (op == OCAL_REDUCE_DOT) u += a * fixture_get_bits(d, y, IDX(r));
              if (op == OCAL_REDUCE_PROD) u *= a;
            }
            if (out_dt == OCAL_I64)
              ((int64_t *)ref)[out_i] = (int64_t)u;
            else
              ((uint64_t *)ref)[out_i] = u;
            scale[out_i] = 0;
            break;
          }
          if (op == OCAL_REDUCE_PROD) {
            s = 1;
            for (size_t r = 0; r < R; r++) s *= fixture_get(d, x, IDX(r));
            mag = fabsl(s);
          } else {
            for (size_t r = 0; r < R; r++) {
              v = fixture_get(d, x, IDX(r));
              if (op == OCAL_REDUCE_DOT) v *= fixture_get(d, y, IDX(r));
              long double t = s + v; /* Neumaier in long double */
              c += fabsl(s) >= fabsl(v) ? (s - t) + v : (v - t) + s;
              s = t;
              mag += fabsl(v);
            }
            s += c;
            if (op == OCAL_REDUCE_MEAN) {
              s = R ? s / (long double)R : NAN;
              mag = R ? mag / (long double)R : 0;
            }
          }
          set_ld(out_dt, ref, out_i, s);
          scale[out_i] = (double)mag;
          break;
        case OCAL_REDUCE_NORM2:
          for (size_t r = 0; r < R; r++) {
            v = fixture_get(d, x, IDX(r));
            s += v * v;
          }
          set_ld(out_dt, ref, out_i, sqrtl(s));
          scale[out_i] = (double)sqrtl(s);
          break;
        case OCAL_REDUCE_VAR:
        case OCAL_REDUCE_STD: {
          long double m = 0;
          for (size_t r = 0; r < R; r++) m += fixture_get(d, x, IDX(r));
          m = R ? m / (long double)R : 0;
          for (size_t r = 0; r < R; r++) {
            v = fixture_get(d, x, IDX(r)) - m;
            s += v * v;
          }
          long double var = (long double)R - ddof > 0 ? s / ((long double)R - ddof) : NAN;
          if (op == OCAL_REDUCE_STD) var = sqrtl(var);
          set_ld(out_dt, ref, out_i, var);
          scale[out_i] = (double)((long double)R > 0 ? s / (long double)R : 0) +
                         (double)(m * m); /* variance plus squared mean */
          if (op == OCAL_REDUCE_STD) scale[out_i] = sqrt(scale[out_i]);
          break;
        }
        case OCAL_REDUCE_MIN:
        case OCAL_REDUCE_MAX:
        case OCAL_REDUCE_ARGMIN:
        case OCAL_REDUCE_ARGMAX: {
          int want_min = op == OCAL_REDUCE_MIN || op == OCAL_REDUCE_ARGMIN;
          for (size_t r = 0; r < R && !nan; r++) {
            v = fixture_get(d, x, IDX(r));
            if (isnan(v)) {
              nan = 1;
              best = (int64_t)r;
              bv = v;
            } else if (best < 0 || (want_min ? v < bv : v > bv)) {
              best = (int64_t)r;
              bv = v;
            }
          }
          if (op == OCAL_REDUCE_ARGMIN || op == OCAL_REDUCE_ARGMAX)
            ((int64_t *)ref)[out_i] = best;
          else if (is_float(d) || d == OCAL_I32 || d == OCAL_U32 || d == OCAL_U8)
            set_ld(out_dt, ref, out_i, bv);
          else /* i64/u64: copy the element itself */
            memcpy((char *)ref + out_i * 8, (const char *)x + IDX((size_t)best) * 8, 8);
          scale[out_i] = 0;
          break;
        }
        default:
          ck_abort_msg("no reference for op %d", (int)op);
      }
#undef IDX
    }
  }
}

/* Relative and absolute (times scale) tolerances. */
static void tolerance(ocal_reduce_op op, ocal_dtype d, ocal_dtype out_dt, double *rtol,
                      double *atol) {
  int single = out_dt == OCAL_F32 || (!is_float(d) && !fixture_has_fp64());
  *rtol = 0;
  *atol = 0;
  if (!is_float(out_dt)) return; /* exact */
  switch (op) {
    case OCAL_REDUCE_SUM:
    case OCAL_REDUCE_MEAN:
    case OCAL_REDUCE_DOT:
      *rtol = single ? 2e-7 : 1e-15;
      *atol = single ? 1e-8 : 2.3e-16; /* f64: i64 inputs round when converted */
      break;
    case OCAL_REDUCE_NORM2:
      *rtol = single ? 1e-6 : 1e-13;
      break;
    case OCAL_REDUCE_VAR:
    case OCAL_REDUCE_STD:
      *rtol = single ? 1e-4 : 1e-11;
      *atol = single ? 1e-5 : 1e-11;
      break;
    case OCAL_REDUCE_PROD:
      *rtol = single ? 1e-4 : 1e-12;
      break;
    default:
      break; /* min/max: exact */
  }
}

static void compare(const char *what, ocal_reduce_op op, ocal_dtype d, ocal_dtype out_dt,
                    const void *got, const void *want, const double *scale, size_t n) {
  double rtol, atol;
  tolerance(op, d, out_dt, &rtol, &atol);
  for (size_t i = 0; i < n; i++) {
    if (is_float(out_dt)) {
      double g = (double)fixture_get(out_dt, got, i), w = (double)fixture_get(out_dt, want, i);
      if (isnan(w)) {
        EXPECT(isnan(g), "%s: result %zu is %.17g, expected NaN", what, i, g);
        continue;
      }
      double err = fabs(g - w), allowed = rtol * fabs(w) + atol * scale[i];
      EXPECT(err <= allowed || g == w,
                    "%s: result %zu is %.17g, expected %.17g (error %.3g > %.3g)", what, i, g,
                    w, err, allowed);
    } else {
      size_t es = ocal_dtype_size(out_dt);
      EXPECT(memcmp((const char *)got + i * es, (const char *)want + i * es, es) == 0,
                    "%s: result %zu is %lld, expected %lld (as 64-bit: %llx vs %llx)", what, i,
                    (long long)fixture_get(out_dt, got, i), (long long)fixture_get(out_dt, want, i),
                    (unsigned long long)fixture_get_bits(out_dt == OCAL_F32 ? OCAL_U32 : out_dt, got, i),
                    (unsigned long long)fixture_get_bits(out_dt == OCAL_F32 ? OCAL_U32 : out_dt, want, i));
    }
  }
}

static ocal_dtype default_out(ocal_reduce_op op, ocal_dtype d) {
  ocal_dtype o;
  ck_assert_ocal(ocal_reduce_dtype(op, d, &o));
  if (o == OCAL_F64 && !fixture_has_fp64()) o = OCAL_F32;
  return o;
}

/* Runs op on random data of shape along axis (OCAL_AXIS_ALL allowed) and checks it. */
static void check_case(ocal_reduce_op op, ocal_dtype d, int ndim, const size_t *shape, int axis,
                       int kind, ocal_dtype out_dt, int ddof, size_t offset, uint64_t seed) {
  size_t n = fixture_numel(ndim, shape);
  void *hx = make_data(d, n, kind, seed);
  void *hy = op == OCAL_REDUCE_DOT ? make_data(d, n, kind, seed + 77) : NULL;
  ocal_buffer x = upload(d, ndim, shape, hx, offset);
  ocal_buffer y = hy ? upload(d, ndim, shape, hy, (offset * 3) % 4) : NULL;
  size_t outer = 1, R = n, inner = 1, oshape[OCAL_MAX_DIMS] = {1};
  int ond = 1;
  if (axis != OCAL_AXIS_ALL) {
    int a = axis < 0 ? axis + ndim : axis;
    ond = 0;
    for (int i = 0; i < ndim; i++) {
      if (i < a) outer *= shape[i];
      if (i > a) inner *= shape[i];
      if (i != a) oshape[ond++] = shape[i];
    }
    R = shape[a];
    if (ond == 0) oshape[ond++] = 1;
  }
  size_t nout = outer * inner;
  ocal_buffer out;
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, out_dt, ond, oshape, &out));
  if (op == OCAL_REDUCE_DOT)
    ck_assert_ocal(ocal_dot(x, y, axis, out));
  else if (op == OCAL_REDUCE_VAR)
    ck_assert_ocal(ocal_var(x, axis, ddof, out));
  else if (op == OCAL_REDUCE_STD)
    ck_assert_ocal(ocal_std(x, axis, ddof, out));
  else
    ck_assert_ocal(ocal_reduce(op, x, axis, out));
  void *got = fixture_malloc(nout * 8), *want = fixture_malloc(nout * 8);
  double *scale = fixture_malloc(nout * sizeof(double));
  ck_assert_ocal(ocal_buffer_read(out, 0, nout, got, NULL));
  reference(op, d, hx, hy, outer, R, inner, ddof, out_dt, want, scale);
  char what[256];
  char sh[64] = "";
  for (int i = 0; i < ndim; i++)
    snprintf(sh + strlen(sh), sizeof sh - strlen(sh), i ? "x%zu" : "%zu", shape[i]);
  snprintf(what, sizeof what, "%s of %s [%s] axis %d -> %s (offset %zu, ddof %d)",
           ocal_reduce_op_name(op), ocal_dtype_name(d), sh, axis == OCAL_AXIS_ALL ? 99 : axis,
           ocal_dtype_name(out_dt), offset, ddof);
  compare(what, op, d, out_dt, got, want, scale, nout);
  free(got);
  free(want);
  free(scale);
  free(hx);
  free(hy);
  ocal_buffer_release(x);
  ocal_buffer_release(y);
  ocal_buffer_release(out);
}

static const ocal_reduce_op all_ops[] = {
    OCAL_REDUCE_SUM,  OCAL_REDUCE_PROD,  OCAL_REDUCE_MIN, OCAL_REDUCE_MAX,
    OCAL_REDUCE_ARGMIN, OCAL_REDUCE_ARGMAX, OCAL_REDUCE_MEAN, OCAL_REDUCE_VAR,
    OCAL_REDUCE_STD,  OCAL_REDUCE_NORM2, OCAL_REDUCE_DOT};
#define N_OPS ((int)(sizeof all_ops / sizeof all_ops[0]))

static int data_for(ocal_reduce_op op) {
  if (op == OCAL_REDUCE_PROD) return DATA_NEAR1;
  if (op == OCAL_REDUCE_MIN || op == OCAL_REDUCE_MAX || op == OCAL_REDUCE_ARGMIN ||
      op == OCAL_REDUCE_ARGMAX)
    return DATA_FEW;
  return DATA_MIXED;
}

/* ---- whole buffers -------------------------------------------------------------------- */

/* One test per element type (_i indexes real_dtypes): every op over the whole buffer at
 * sizes 1, 7 and 1000003, aligned and through misaligned views. */
START_TEST(test_whole_every_op) {
  ocal_dtype d = real_dtypes[_i];
  if (!fixture_dtype_usable(d)) return;
  static const size_t sizes[] = {1, 7, 1000003};
  for (int s = 0; s < 3; s++) {
    for (int k = 0; k < N_OPS; k++) {
      ocal_reduce_op op = all_ops[k];
      size_t n = sizes[s];
      /* Float products of a million values drift by rounding alone: keep them shorter. */
      if (op == OCAL_REDUCE_PROD && is_float(d) && n > 100000) n = 100003;
      size_t offset = (size_t)(s + k) % 3; /* 0, 1, 2: aligned and misaligned starts */
      check_case(op, d, 1, &n, OCAL_AXIS_ALL, data_for(op), default_out(op, d),
                 op == OCAL_REDUCE_VAR || op == OCAL_REDUCE_STD ? (int)(k % 2) : 0, offset,
                 (uint64_t)(1000 * _i + 10 * s + k));
    }
  }
}
END_TEST

/* Integer means, variances and norms may go to f32 as well as f64. */
START_TEST(test_integer_float_results) {
  static const ocal_reduce_op fops[] = {OCAL_REDUCE_MEAN, OCAL_REDUCE_VAR, OCAL_REDUCE_STD,
                                        OCAL_REDUCE_NORM2};
  size_t n = 100003;
  for (int t = 2; t < N_REAL; t++) {
    for (int k = 0; k < 4; k++) {
      check_case(fops[k], real_dtypes[t], 1, &n, OCAL_AXIS_ALL, DATA_MIXED, OCAL_F32, 1, 0,
                 (uint64_t)(31 * t + k));
      if (fixture_has_fp64())
        check_case(fops[k], real_dtypes[t], 1, &n, OCAL_AXIS_ALL, DATA_MIXED, OCAL_F64, 0, 1,
                   (uint64_t)(37 * t + k));
    }
  }
}
END_TEST

/* ---- axes ------------------------------------------------------------------------------ */

typedef struct {
  int ndim;
  size_t shape[4];
} shape_t;

/* Shapes that take every plan: rows long and short, few and many; columns few and many. */
static const shape_t axis_shapes[] = {
    {2, {37, 1001}},       /* contig rows, one launch; strided columns in chunks */
    {2, {3, 100003}},      /* few long rows: chunks merged per group */
    {2, {5000, 300}},      /* many columns: chunks merged per work-item */
    {2, {1000, 7}},        /* short rows: a work-item per row */
    {3, {5, 6, 7}},        /* every axis of a small 3-D block */
    {4, {3, 4, 5, 6}},     /* every axis of a 4-D block */
    {4, {2, 3, 1, 2049}},  /* an axis of length 1; long last axis */
};
#define N_SHAPES ((int)(sizeof axis_shapes / sizeof axis_shapes[0]))

/* One test per element type: every op along every axis (negative ones too) of every shape. */
START_TEST(test_axes_every_op) {
  ocal_dtype d = real_dtypes[_i];
  if (!fixture_dtype_usable(d)) return;
  for (int s = 0; s < N_SHAPES; s++) {
    const shape_t *sh = &axis_shapes[s];
    for (int a = 0; a < sh->ndim; a++) {
      for (int k = 0; k < N_OPS; k++) {
        ocal_reduce_op op = all_ops[k];
        int axis = (a + s + k) % 2 ? a - sh->ndim : a; /* mix negative and positive */
        check_case(op, d, sh->ndim, sh->shape, axis, data_for(op), default_out(op, d),
                   op == OCAL_REDUCE_VAR ? 1 : 0, (size_t)(a + k) % 2,
                   (uint64_t)(7919 * _i + 101 * s + 11 * a + k));
      }
    }
  }
}
END_TEST

/* keepdims: out with the reduced axis kept as 1 is accepted and gets the same values. */
START_TEST(test_keepdims_shape) {
  size_t shape[3] = {4, 5, 6}, keep[3] = {4, 1, 6}, drop[2] = {4, 6};
  size_t n = 120;
  float *h = make_data(OCAL_F32, n, DATA_MIXED, 5);
  ocal_buffer x, a, b;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_F32, 3, shape, h, &x));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 3, keep, &a));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 2, drop, &b));
  ck_assert_ocal(ocal_sum(x, 1, a));
  ck_assert_ocal(ocal_sum(x, -2, b));
  float ra[24], rb[24];
  ck_assert_ocal(ocal_buffer_read(a, 0, 24, ra, NULL));
  ck_assert_ocal(ocal_buffer_read(b, 0, 24, rb, NULL));
  ck_assert_mem_eq(ra, rb, sizeof ra);
  for (int o = 0; o < 4; o++)
    for (int j = 0; j < 6; j++) {
      double s = 0;
      for (int r = 0; r < 5; r++) s += h[(o * 5 + r) * 6 + j];
      ck_assert_double_eq_tol(ra[o * 6 + j], s, 1e-5 * (fabs(s) + 1));
    }
  free(h);
  ocal_buffer_release(x);
  ocal_buffer_release(a);
  ocal_buffer_release(b);
}
END_TEST

/* Over OCAL_AXIS_ALL any out of one element takes the result, whatever its shape, and the
 * message for an out of another size says so (it once asked for shape [1] only). */
START_TEST(test_whole_out_any_shape) {
  size_t shape[2] = {7, 13}, one[3] = {1, 1, 1}, two = 2, n = 91;
  float *h = make_data(OCAL_F32, n, DATA_MIXED, (uint64_t)time(NULL));
  ocal_buffer x, o, o2;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_F32, 2, shape, h, &x));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 3, one, &o));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 1, &two, &o2));
  ck_assert_ocal(ocal_sum(x, OCAL_AXIS_ALL, o));
  float r;
  ck_assert_ocal(ocal_buffer_read(o, 0, 1, &r, NULL));
  double s = 0;
  for (size_t i = 0; i < n; i++) s += h[i];
  ck_assert_double_eq_tol(r, s, 1e-5 * (fabs(s) + 1));
  ck_assert_ocal_fails(ocal_sum(x, OCAL_AXIS_ALL, o2), OCAL_SHAPE_MISMATCH);
  const char *msg = ocal_last_error();
  ck_assert_msg(strstr(msg, "one element") && strstr(msg, "any shape") &&
                    !strstr(msg, "needs shape [1]"),
                "%s", msg);
  free(h);
  ocal_buffer_release(x);
  ocal_buffer_release(o);
  ocal_buffer_release(o2);
}
END_TEST

/* ---- accuracy and exactness --------------------------------------------------------- */

/* The accuracy test: 2^24 float32 values of mixed sign and magnitude; the device sum
 * must be within 1e-6 (relative) of an exact host sum, where a naive float loop is not. */
START_TEST(test_float_sum_accuracy_2_24) {
  size_t n = (size_t)1 << 24;
  float *h = fixture_malloc(n * sizeof(float));
  uint64_t st = 424242;
  for (size_t i = 0; i < n; i++) {
    uint64_t r = fixture_random(&st);
    double u = (double)(r >> 11) / 9007199254740992.0;
    /* magnitudes 2^-12 .. 2^12, a slight positive bias so the sum is not near zero */
    double v = (1.0 + u) * ldexp(1.0, (int)((r >> 3) % 25) - 12);
    h[i] = (float)((r & 7) < 4 ? v : -0.9 * v);
  }
  long double exact = 0, c = 0;
  float naive = 0;
  for (size_t i = 0; i < n; i++) {
    long double v = h[i], t = exact + v;
    c += fabsl(exact) >= fabsl(v) ? (exact - t) + v : (v - t) + exact;
    exact = t;
    naive += h[i];
  }
  exact += c;
  double naive_err = fabs((double)((naive - exact) / exact));
  ck_assert_msg(naive_err > 1e-6, "the data is too easy: a naive float loop is off by only %g",
                naive_err);
  ocal_buffer x;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_F32, 1, &n, h, &x));
  float got;
  ck_assert_ocal(ocal_reduce_to_host(OCAL_REDUCE_SUM, x, OCAL_F32, &got));
  double err = fabs((double)((got - exact) / exact));
  ck_assert_msg(err < 1e-6, "sum of 2^24 floats: %.9g vs exact %.9Lg, relative error %g (naive "
                "loop: %g)", got, exact, err, naive_err);
  /* The mean and a misaligned view take the same path. */
  float mean;
  ck_assert_ocal(ocal_reduce_to_host(OCAL_REDUCE_MEAN, x, OCAL_F32, &mean));
  ck_assert_msg(fabs((double)((mean - exact / n) / (exact / n))) < 1e-6, "mean %g", mean);
  ocal_buffer v;
  size_t m = n - 3;
  ck_assert_ocal(ocal_buffer_view(x, 3, 1, &m, &v));
  ck_assert_ocal(ocal_reduce_to_host(OCAL_REDUCE_SUM, v, OCAL_F32, &got));
  long double exact_v = exact - (long double)h[0] - h[1] - h[2];
  ck_assert_msg(fabs((double)((got - exact_v) / exact_v)) < 1e-6, "view sum %g vs %Lg", got,
                exact_v);
  ocal_buffer_release(v);
  ocal_buffer_release(x);
  free(h);
}
END_TEST

/* Integer sums are exact where a float or 32-bit accumulation would not be. */
START_TEST(test_integer_sums_exact) {
  size_t n = 1000003;
  int32_t *a = fixture_malloc(n * 4);
  for (size_t i = 0; i < n; i++) a[i] = i % 3 == 2 ? INT32_MIN : INT32_MAX;
  ocal_buffer x;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_I32, 1, &n, a, &x));
  int64_t s, want = 0;
  for (size_t i = 0; i < n; i++) want += a[i];
  ck_assert_ocal(ocal_reduce_to_host(OCAL_REDUCE_SUM, x, OCAL_I64, &s));
  ck_assert_int_eq(s, want);
  int64_t dot;
  ck_assert_ocal(ocal_dot_to_host(x, x, OCAL_I64, &dot));
  uint64_t wd = 0;
  for (size_t i = 0; i < n; i++) wd += (uint64_t)((int64_t)a[i] * a[i]);
  ck_assert_uint_eq((uint64_t)dot, wd);
  ocal_buffer_release(x);
  free(a);

  uint8_t *b = fixture_malloc(n);
  memset(b, 255, n);
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_U8, 1, &n, b, &x));
  uint64_t us;
  ck_assert_ocal(ocal_reduce_to_host(OCAL_REDUCE_SUM, x, OCAL_U64, &us));
  ck_assert_uint_eq(us, (uint64_t)255 * n);
  ocal_buffer_release(x);
  free(b);

  /* u64 wraps modulo 2^64, like NumPy's uint64 sum. */
  uint64_t big[5] = {UINT64_MAX, UINT64_MAX, 3, (uint64_t)1 << 63, (uint64_t)1 << 63};
  size_t five = 5;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_U64, 1, &five, big, &x));
  ck_assert_ocal(ocal_reduce_to_host(OCAL_REDUCE_SUM, x, OCAL_U64, &us));
  ck_assert_uint_eq(us, 1);
  ocal_buffer_release(x);

  /* An i64 mean divides the exact sum: 2^62 + 2^62 - 2^62 + 1 over 4. */
  if (fixture_has_fp64()) {
    int64_t m[4] = {(int64_t)1 << 62, (int64_t)1 << 62, -((int64_t)1 << 62), 1};
    size_t four = 4;
    ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_I64, 1, &four, m, &x));
    double mean;
    ck_assert_ocal(ocal_reduce_to_host(OCAL_REDUCE_MEAN, x, OCAL_F64, &mean));
    ck_assert_double_eq(mean, (double)(((int64_t)1 << 62) + 1) / 4.0);
    ocal_buffer_release(x);
  }
}
END_TEST

/* Variance of data with a large mean and a small spread, where the textbook one-pass
 * formula E[x^2] - E[x]^2 loses every digit in float. */
START_TEST(test_variance_large_mean) {
  size_t n = 100003;
  float *h = fixture_malloc(n * sizeof(float));
  uint64_t st = 99;
  for (size_t i = 0; i < n; i++)
    h[i] = 10000.0f + (float)((double)(fixture_random(&st) >> 11) / 9007199254740992.0);
  long double m = 0, s = 0;
  for (size_t i = 0; i < n; i++) m += h[i];
  m /= n;
  for (size_t i = 0; i < n; i++) s += (h[i] - m) * (h[i] - m);
  ocal_buffer x;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_F32, 1, &n, h, &x));
  float v0;
  ck_assert_ocal(ocal_reduce_to_host(OCAL_REDUCE_VAR, x, OCAL_F32, &v0));
  double want0 = (double)(s / n);
  ck_assert_msg(fabs(v0 - want0) < 1e-3 * want0, "var %g vs %g", v0, want0);
  /* ddof 1 through an axis: a (1, n) matrix along its last axis. */
  size_t shape[2] = {1, n}, one = 1;
  ocal_buffer x2, out;
  ck_assert_ocal(ocal_buffer_view(x, 0, 2, shape, &x2));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 1, &one, &out));
  ck_assert_ocal(ocal_std(x2, 1, 1, out));
  float sd;
  ck_assert_ocal(ocal_buffer_read(out, 0, 1, &sd, NULL));
  double want1 = sqrt((double)(s / (n - 1)));
  ck_assert_msg(fabs(sd - want1) < 1e-3 * want1, "std %g vs %g", sd, want1);
  ocal_buffer_release(out);
  ocal_buffer_release(x2);
  ocal_buffer_release(x);
  free(h);
}
END_TEST

/* ---- NaN, infinity, empty ------------------------------------------------------------ */

START_TEST(test_nan_and_infinity) {
  size_t n = 1000;
  float *h = make_data(OCAL_F32, n, DATA_FEW, 3);
  h[700] = NAN;
  h[300] = NAN;
  ocal_buffer x;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_F32, 1, &n, h, &x));
  float f;
  int64_t idx;
  static const ocal_reduce_op nan_ops[] = {OCAL_REDUCE_SUM, OCAL_REDUCE_PROD, OCAL_REDUCE_MIN,
                                           OCAL_REDUCE_MAX, OCAL_REDUCE_MEAN, OCAL_REDUCE_VAR,
                                           OCAL_REDUCE_NORM2};
  for (int k = 0; k < 7; k++) {
    ck_assert_ocal(ocal_reduce_to_host(nan_ops[k], x, OCAL_F32, &f));
    ck_assert_msg(isnan(f), "%s with NaNs gave %g", ocal_reduce_op_name(nan_ops[k]), f);
  }
  ck_assert_ocal(ocal_reduce_to_host(OCAL_REDUCE_ARGMIN, x, OCAL_I64, &idx));
  ck_assert_int_eq(idx, 300);
  ck_assert_ocal(ocal_reduce_to_host(OCAL_REDUCE_ARGMAX, x, OCAL_I64, &idx));
  ck_assert_int_eq(idx, 300);
  ocal_buffer_release(x);

  /* Infinities: the sum of finite values and +inf is +inf (not NaN through compensation);
   * +inf and -inf give NaN; the max is +inf and argmax finds the first one. */
  for (size_t i = 0; i < n; i++) h[i] = (float)(i % 5) - 2.0f + 0.5f;
  h[10] = INFINITY;
  h[900] = INFINITY;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_F32, 1, &n, h, &x));
  ck_assert_ocal(ocal_reduce_to_host(OCAL_REDUCE_SUM, x, OCAL_F32, &f));
  ck_assert_msg(isinf(f) && f > 0, "sum with +inf gave %g", f);
  ck_assert_ocal(ocal_reduce_to_host(OCAL_REDUCE_MAX, x, OCAL_F32, &f));
  ck_assert_msg(isinf(f) && f > 0, "max gave %g", f);
  ck_assert_ocal(ocal_reduce_to_host(OCAL_REDUCE_ARGMAX, x, OCAL_I64, &idx));
  ck_assert_int_eq(idx, 10);
  ck_assert_ocal(ocal_reduce_to_host(OCAL_REDUCE_NORM2, x, OCAL_F32, &f));
  ck_assert_msg(isinf(f), "norm2 with inf gave %g", f);
  ocal_buffer_release(x);
  h[500] = -INFINITY;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_F32, 1, &n, h, &x));
  ck_assert_ocal(ocal_reduce_to_host(OCAL_REDUCE_SUM, x, OCAL_F32, &f));
  ck_assert_msg(isnan(f), "sum of +inf and -inf gave %g", f);
  ck_assert_ocal(ocal_reduce_to_host(OCAL_REDUCE_ARGMIN, x, OCAL_I64, &idx));
  ck_assert_int_eq(idx, 500);
  ocal_buffer_release(x);
  free(h);

  /* All elements +inf: argmin must still find index 0. */
  float infs[9];
  size_t nine = 9;
  for (int i = 0; i < 9; i++) infs[i] = INFINITY;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_F32, 1, &nine, infs, &x));
  ck_assert_ocal(ocal_reduce_to_host(OCAL_REDUCE_ARGMIN, x, OCAL_I64, &idx));
  ck_assert_int_eq(idx, 0);
  ocal_buffer_release(x);
}
END_TEST

START_TEST(test_empty) {
  size_t zero = 0, one = 1;
  ocal_buffer x, out;
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 1, &zero, &x));
  float f;
  ck_assert_ocal(ocal_reduce_to_host(OCAL_REDUCE_SUM, x, OCAL_F32, &f));
  ck_assert_float_eq(f, 0.0f);
  ck_assert_ocal(ocal_reduce_to_host(OCAL_REDUCE_PROD, x, OCAL_F32, &f));
  ck_assert_float_eq(f, 1.0f);
  ck_assert_ocal(ocal_reduce_to_host(OCAL_REDUCE_NORM2, x, OCAL_F32, &f));
  ck_assert_float_eq(f, 0.0f);
  ck_assert_ocal(ocal_reduce_to_host(OCAL_REDUCE_MEAN, x, OCAL_F32, &f));
  ck_assert(isnan(f));
  ck_assert_ocal(ocal_reduce_to_host(OCAL_REDUCE_VAR, x, OCAL_F32, &f));
  ck_assert(isnan(f));
  ck_assert_ocal(ocal_dot_to_host(x, x, OCAL_F32, &f));
  ck_assert_float_eq(f, 0.0f);
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 1, &one, &out));
  ck_assert_ocal_fails(ocal_amin(x, OCAL_AXIS_ALL, out), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "empty"));
  ck_assert_ocal_fails(ocal_amax(x, 0, out), OCAL_INVALID_ARGUMENT);
  ocal_buffer_release(out);
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_I64, 1, &one, &out));
  ck_assert_ocal_fails(ocal_argmax(x, OCAL_AXIS_ALL, out), OCAL_INVALID_ARGUMENT);
  ocal_buffer_release(out);
  int64_t s;
  ocal_buffer xi;
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_I32, 1, &zero, &xi));
  ck_assert_ocal(ocal_reduce_to_host(OCAL_REDUCE_SUM, xi, OCAL_I64, &s));
  ck_assert_int_eq(s, 0);
  ocal_buffer_release(xi);
  ocal_buffer_release(x);

  /* An axis of length 0: sums are zeros, min fails. Outputs of size 0: nothing to do. */
  size_t shape[2] = {3, 0}, three = 3, shape2[2] = {0, 4}, four = 4;
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 2, shape, &x));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 1, &three, &out));
  ck_assert_ocal(ocal_sum(x, 1, out));
  float r[3] = {9, 9, 9};
  ck_assert_ocal(ocal_buffer_read(out, 0, 3, r, NULL));
  for (int i = 0; i < 3; i++) ck_assert_float_eq(r[i], 0.0f);
  ck_assert_ocal_fails(ocal_amin(x, 1, out), OCAL_INVALID_ARGUMENT);
  ocal_buffer_release(out);
  ocal_buffer_release(x);
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 2, shape2, &x));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 1, &four, &out));
  ck_assert_ocal(ocal_sum(x, 0, out)); /* sums of nothing: zeros */
  ck_assert_ocal(ocal_buffer_read(out, 0, 3, r, NULL));
  ck_assert_float_eq(r[0], 0.0f);
  ocal_buffer_release(out);
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 1, &zero, &out));
  ck_assert_ocal(ocal_amax(x, 1, out)); /* no outputs: nothing to do */
  ocal_buffer_release(out);
  ocal_buffer_release(x);
}
END_TEST

/* ---- errors ---------------------------------------------------------------------------- */

START_TEST(test_errors) {
  size_t shape[2] = {4, 6}, four = 4, six = 6, one = 1, five = 5;
  float h[24];
  for (int i = 0; i < 24; i++) h[i] = (float)i + 0.5f;
  ocal_buffer x, o4, o6, o1, o5, oi, ou, oc;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_F32, 2, shape, h, &x));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 1, &four, &o4));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 1, &six, &o6));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 1, &one, &o1));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 1, &five, &o5));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_I32, 1, &one, &oi));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_U64, 1, &one, &ou));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_C32, 1, &one, &oc));

  /* The right shapes work. */
  ck_assert_ocal(ocal_sum(x, 0, o6));
  ck_assert_ocal(ocal_sum(x, 1, o4));
  ck_assert_ocal(ocal_sum(x, -1, o4));
  ck_assert_ocal(ocal_sum(x, OCAL_AXIS_ALL, o1));

  /* Shapes: the message says what was expected. */
  ck_assert_ocal_fails(ocal_sum(x, 0, o4), OCAL_SHAPE_MISMATCH);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "[6]"));
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "[4, 6]"));
  ck_assert_ocal_fails(ocal_mean(x, 1, o5), OCAL_SHAPE_MISMATCH);
  ck_assert_ocal_fails(ocal_sum(x, OCAL_AXIS_ALL, o4), OCAL_SHAPE_MISMATCH);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "one element"));

  /* Axes. */
  ck_assert_ocal_fails(ocal_sum(x, 2, o4), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "axis 2"));
  ck_assert_ocal_fails(ocal_sum(x, -3, o4), OCAL_INVALID_ARGUMENT);

  /* Types: the message names the type needed. */
  ck_assert_ocal_fails(ocal_sum(x, OCAL_AXIS_ALL, oi), OCAL_TYPE_MISMATCH);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "f32"));
  ck_assert_ocal_fails(ocal_argmax(x, OCAL_AXIS_ALL, o1), OCAL_TYPE_MISMATCH);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "i64"));
  ocal_buffer xi;
  int32_t hi[4] = {1, 2, 3, 4};
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_I32, 1, &four, hi, &xi));
  ck_assert_ocal_fails(ocal_sum(xi, 0, oi), OCAL_TYPE_MISMATCH);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "i64"));
  ck_assert_ocal_fails(ocal_sum(xi, 0, ou), OCAL_TYPE_MISMATCH);
  ck_assert_ocal_fails(ocal_mean(xi, 0, oi), OCAL_TYPE_MISMATCH);
  ck_assert_ocal_fails(ocal_amax(xi, 0, o1), OCAL_TYPE_MISMATCH);
  ck_assert_ocal(ocal_mean(xi, 0, o1)); /* f32 is allowed for integer means */
  float m;
  ck_assert_ocal(ocal_buffer_read(o1, 0, 1, &m, NULL));
  ck_assert_float_eq(m, 2.5f);

  /* Complex inputs are not supported. */
  ocal_buffer xc;
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_C32, 1, &four, &xc));
  ck_assert_ocal_fails(ocal_sum(xc, 0, oc), OCAL_UNSUPPORTED);
  ocal_dtype dt;
  ck_assert_ocal_fails(ocal_reduce_dtype(OCAL_REDUCE_SUM, OCAL_C64, &dt), OCAL_UNSUPPORTED);
  ck_assert_ocal(ocal_reduce_dtype(OCAL_REDUCE_SUM, OCAL_U8, &dt));
  ck_assert_int_eq(dt, OCAL_U64);
  ck_assert_ocal(ocal_reduce_dtype(OCAL_REDUCE_MEAN, OCAL_I32, &dt));
  ck_assert_int_eq(dt, OCAL_F64);

  /* Dot: types and shapes of x and y. */
  ck_assert_ocal_fails(ocal_dot(x, xi, OCAL_AXIS_ALL, o1), OCAL_TYPE_MISMATCH);
  ocal_buffer x5;
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 1, &five, &x5));
  ck_assert_ocal_fails(ocal_dot(x, x5, OCAL_AXIS_ALL, o1), OCAL_SHAPE_MISMATCH);
  ocal_buffer flat;
  size_t n24 = 24;
  ck_assert_ocal(ocal_buffer_view(x, 0, 1, &n24, &flat));
  ck_assert_ocal(ocal_dot(x, flat, OCAL_AXIS_ALL, o1)); /* same count, other shape: fine */
  ck_assert_ocal_fails(ocal_dot(x, flat, 1, o4), OCAL_SHAPE_MISMATCH);
  ck_assert_ocal_fails(ocal_dot(x, NULL, OCAL_AXIS_ALL, o1), OCAL_INVALID_HANDLE);
  ck_assert_ocal_fails(ocal_reduce(OCAL_REDUCE_DOT, x, OCAL_AXIS_ALL, o1), OCAL_INVALID_ARGUMENT);

  /* Bad arguments. */
  ck_assert_ocal_fails(ocal_reduce((ocal_reduce_op)99, x, 0, o6), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_var(x, 0, -1, o6), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_sum(NULL, 0, o6), OCAL_INVALID_HANDLE);
  ck_assert_ocal_fails(ocal_sum(x, 0, NULL), OCAL_INVALID_HANDLE);
  ck_assert_ocal_fails(ocal_reduce_to_host(OCAL_REDUCE_SUM, x, OCAL_F32, NULL),
                       OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_reduce_to_host(OCAL_REDUCE_SUM, x, OCAL_I32, &m), OCAL_TYPE_MISMATCH);

  /* Buffers of two contexts. */
  ocal_context other;
  ck_assert_ocal(ocal_context_create(NULL, &other));
  ocal_buffer foreign;
  ck_assert_ocal(ocal_buffer_create(other, OCAL_F32, 1, &one, &foreign));
  ck_assert_ocal_fails(ocal_sum(x, OCAL_AXIS_ALL, foreign), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "context"));
  ocal_buffer_release(foreign);
  ocal_context_release(other);

  /* Variance with ddof >= n is NaN. */
  ck_assert_ocal(ocal_var(x, 0, 4, o6));
  float v[6];
  ck_assert_ocal(ocal_buffer_read(o6, 0, 6, v, NULL));
  for (int i = 0; i < 6; i++) ck_assert(isnan(v[i]));

  /* out overlapping the input (a view of x, or of y for the dot) is refused before anything
   * is queued, and x is left as it was. */
  ocal_buffer v4, v1;
  ck_assert_ocal(ocal_buffer_view(x, 0, 1, &four, &v4));
  ck_assert_ocal(ocal_buffer_view(x, 5, 1, &one, &v1));
  ck_assert_ocal_fails(ocal_sum(x, 1, v4), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "out overlaps x"));
  ck_assert_ocal_fails(ocal_amax(x, OCAL_AXIS_ALL, v1), OCAL_INVALID_ARGUMENT);
  ocal_buffer v2;
  ck_assert_ocal(ocal_buffer_view(x, 2, 1, &one, &v2)); /* inside v4 */
  ck_assert_ocal_fails(ocal_dot(o4, v4, OCAL_AXIS_ALL, v2), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "out overlaps y"));
  ocal_buffer_release(v2);
  float back[24];
  ck_assert_ocal(ocal_buffer_read(x, 0, 24, back, NULL));
  for (int i = 0; i < 24; i++) ck_assert_float_eq(back[i], h[i]);
  ocal_buffer_release(v4);
  ocal_buffer_release(v1);

  ck_assert_str_eq(ocal_reduce_op_name(OCAL_REDUCE_ARGMAX), "argmax");
  ck_assert_str_eq(ocal_reduce_op_name((ocal_reduce_op)-1), "invalid");

  ocal_buffer_release(flat);
  ocal_buffer_release(x5);
  ocal_buffer_release(xc);
  ocal_buffer_release(xi);
  ocal_buffer_release(x);
  ocal_buffer_release(o4);
  ocal_buffer_release(o6);
  ocal_buffer_release(o1);
  ocal_buffer_release(o5);
  ocal_buffer_release(oi);
  ocal_buffer_release(ou);
  ocal_buffer_release(oc);
}
END_TEST

/* Many reductions queued back to back share the scratch buffer: each must see its own. */
START_TEST(test_queued_back_to_back) {
  enum { K = 8 };
  size_t n = 300007;
  ocal_buffer x[K], out;
  float *h[K];
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 1,
                                    (size_t[]){K}, &out));
  for (int k = 0; k < K; k++) {
    h[k] = make_data(OCAL_F32, n, DATA_MIXED, (uint64_t)k + 500);
    ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_F32, 1, &n, h[k], &x[k]));
  }
  ocal_buffer slots[K];
  for (int k = 0; k < K; k++) {
    size_t one = 1;
    ck_assert_ocal(ocal_buffer_view(out, (size_t)k, 1, &one, &slots[k]));
    ck_assert_ocal(ocal_sum(x[k], OCAL_AXIS_ALL, slots[k]));
  }
  float got[K];
  ck_assert_ocal(ocal_buffer_read(out, 0, K, got, NULL));
  for (int k = 0; k < K; k++) {
    long double s = 0, a = 0;
    for (size_t i = 0; i < n; i++) {
      s += h[k][i];
      a += fabsl((long double)h[k][i]);
    }
    ck_assert_msg(fabs((double)(got[k] - s)) <= 1e-6 * fabs((double)s) + 1e-7 * (double)a,
                  "sum %d: %g vs %Lg", k, got[k], s);
    ocal_buffer_release(slots[k]);
    ocal_buffer_release(x[k]);
    free(h[k]);
  }
  ocal_buffer_release(out);
}
END_TEST

/* ---- launch shapes (OCAL_REDUCE_TUNE) --------------------------------------------------- */

/* Launch shapes that take each path of the plan: one pass (the last work-group merges) and a
 * second launch, groups per compute unit, work-group sizes, vectors in flight and loaded a
 * step ahead, rows in flight of the vector columns (1003 rows: 16-row steps, 8-row steps,
 * single rows). */
static const char *const tunes[] = {"onepass=0,rows=16,cdiv=1", "gpc=3,wg=64,cwg=64,cdiv=16",
                                    "unroll=8,pipe=1"};

/* The sum of x over the whole buffer, read back as bytes (f32 or f64). */
static void whole_sum(ocal_buffer x, ocal_dtype d, void *result) {
  size_t one = 1;
  ocal_buffer out;
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, d, 1, &one, &out));
  ck_assert_ocal(ocal_sum(x, OCAL_AXIS_ALL, out));
  ck_assert_ocal(ocal_buffer_read(out, 0, 1, result, NULL));
  ocal_buffer_release(out);
}

/* Every shape gives the host reference's results on odd sizes; a float sum in one pass is
 * the same bits as with the second launch (the same states merged in the same order), and
 * the same bits when run again. */
START_TEST(test_launch_shapes) {
  /* A compensated sum, a plain lane-wise state, and the two states with padding bytes. */
  static const ocal_reduce_op ops[] = {OCAL_REDUCE_DOT, OCAL_REDUCE_MAX, OCAL_REDUCE_ARGMIN,
                                       OCAL_REDUCE_VAR};
  static const ocal_dtype types[] = {OCAL_F32, OCAL_I32, OCAL_F64};
  size_t n = 777781, cols[2] = {1003, 516};
  for (size_t t = 0; t < sizeof tunes / sizeof tunes[0]; t++) {
    setenv("OCAL_REDUCE_TUNE", tunes[t], 1);
    fixture_reopen();
    for (int k = 0; k < (int)(sizeof types / sizeof types[0]); k++) {
      ocal_dtype d = types[k];
      if (!fixture_dtype_usable(d) || (d != OCAL_F32 && t > 0)) continue;
      for (int o = 0; o < (int)(sizeof ops / sizeof ops[0]); o++) {
        ocal_reduce_op op = ops[o];
        /* unroll is a build option: two operations are enough to build it (seconds each). */
        if (t == 2 && op != OCAL_REDUCE_DOT && op != OCAL_REDUCE_ARGMIN) continue;
        check_case(op, d, 1, &n, OCAL_AXIS_ALL, data_for(op), default_out(op, d),
                   op == OCAL_REDUCE_VAR, (t + (size_t)o) % 3, (uint64_t)(100 * t + 10 * k + o));
        if (op == OCAL_REDUCE_DOT || op == OCAL_REDUCE_VAR)
          check_case(op, d, 2, cols, 0, data_for(op), default_out(op, d), 0, (size_t)k % 2 * 4,
                     (uint64_t)(100 * t + 10 * k + o + 5));
      }
    }
  }
  /* One pass against the second launch, bit for bit, at one work-group size. */
  float *h = make_data(OCAL_F32, n, DATA_MIXED, 4242);
  ocal_buffer x;
  float got[3];
  for (int pass = 0; pass < 2; pass++) {
    setenv("OCAL_REDUCE_TUNE", pass ? "onepass=1" : "onepass=0", 1);
    fixture_reopen();
    ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_F32, 1, &n, h, &x));
    whole_sum(x, OCAL_F32, &got[pass]);
    if (pass) whole_sum(x, OCAL_F32, &got[2]);
    ocal_buffer_release(x);
  }
  ck_assert_msg(memcmp(&got[0], &got[1], sizeof got[0]) == 0 &&
                    memcmp(&got[1], &got[2], sizeof got[0]) == 0,
                "one pass %.9g (again %.9g), second launch %.9g", got[1], got[2], got[0]);
  free(h);
  unsetenv("OCAL_REDUCE_TUNE");
  fixture_reopen();
}
END_TEST

/* A value out of range fails the reduction with a message that names the setting; an unknown
 * key fails the context. */
START_TEST(test_launch_shape_errors) {
  static const char *const bad[] = {"unroll=3", "wg=100",  "gpc=0", "onepass=2", "rows=12",
                                    "cdiv=17",  "cwg=512", "pipe=2", "ld=0",      "ld=10"};
  size_t n = 100;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    setenv("OCAL_REDUCE_TUNE", bad[i], 1);
    fixture_reopen();
    ocal_buffer x, out;
    size_t one = 1;
    ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 1, &n, &x));
    ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 1, &one, &out));
    ck_assert_ocal_fails(ocal_sum(x, OCAL_AXIS_ALL, out), OCAL_INVALID_ARGUMENT);
    ck_assert_msg(strstr(ocal_last_error(), "OCAL_REDUCE_TUNE") != NULL, "%s: %s", bad[i],
                  ocal_last_error());
    ocal_buffer_release(x);
    ocal_buffer_release(out);
  }
  setenv("OCAL_REDUCE_TUNE", "lanes=4", 1);
  ocal_context ctx = NULL;
  ck_assert_ocal_fails(ocal_context_create(NULL, &ctx), OCAL_INVALID_ARGUMENT);
  ck_assert_msg(strstr(ocal_last_error(), "OCAL_REDUCE_TUNE") != NULL, "%s", ocal_last_error());
  unsetenv("OCAL_REDUCE_TUNE");
  fixture_reopen();
}
END_TEST

/* Cache hints named through OCAL_REDUCE_TUNE's ld: the right results where the driver reports
 * a PTX compute capability, a refusal that names the setting where it does not (inline PTX
 * never reaches another compiler: PoCL crashes on it); plain loads (ld=1) and the automatic
 * choice right on both. A whole-buffer sum (contig) and a column dot (strided_v). */
START_TEST(test_load_hints) {
  static const char *const lds[] = {"ld=1", "ld=4", "ld=7", "ld=8", NULL};
  size_t n = 777781, cols[2] = {1003, 516}, one = 1;
  for (size_t i = 0; i < sizeof lds / sizeof lds[0]; i++) {
    if (lds[i])
      setenv("OCAL_REDUCE_TUNE", lds[i], 1);
    else
      unsetenv("OCAL_REDUCE_TUNE");
    fixture_reopen();
    /* A hint is taken (then the results below must be right) or refused, naming it. */
    ocal_buffer x, out;
    ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 1, &n, &x));
    ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 1, &one, &out));
    ocal_status s = ocal_sum(x, OCAL_AXIS_ALL, out);
    ocal_buffer_release(x);
    ocal_buffer_release(out);
    if (i == 0 || !lds[i]) ck_assert_ocal(s);
    if (s != OCAL_OK) {
      ck_assert_ocal_fails(s, OCAL_UNSUPPORTED);
      ck_assert_msg(strstr(ocal_last_error(), lds[i]) != NULL &&
                        strstr(ocal_last_error(), "PTX") != NULL,
                    "%s: %s", lds[i], ocal_last_error());
      continue;
    }
    check_case(OCAL_REDUCE_SUM, OCAL_F32, 1, &n, OCAL_AXIS_ALL, DATA_MIXED, OCAL_F32, 0, 1,
               (uint64_t)(700 + i));
    check_case(OCAL_REDUCE_DOT, OCAL_F32, 2, cols, 0, DATA_MIXED, OCAL_F32, 0, 0,
               (uint64_t)(710 + i));
  }
  unsetenv("OCAL_REDUCE_TUNE");
  fixture_reopen();
}
END_TEST

/* A device with less local memory than a reduction's kernel needs (1 KiB through the limits
 * option): OCAL_UNSUPPORTED naming the public call and the local memory, and the context
 * keeps working. */
START_TEST(test_small_local_memory) {
  ocal_context_options o;
  ocal_context_options_init(&o);
  o.limits = "local_mem=1k";
  ocal_context small = NULL;
  ck_assert_ocal(ocal_context_create(&o, &small));
  size_t n = 100003, one = 1;
  ocal_buffer x, out;
  ck_assert_ocal(ocal_buffer_zeros(small, OCAL_F32, 1, &n, &x));
  ck_assert_ocal(ocal_buffer_zeros(small, OCAL_F32, 1, &one, &out));
  ck_assert_ocal_fails(ocal_sum(x, OCAL_AXIS_ALL, out), OCAL_UNSUPPORTED);
  ck_assert_msg(strncmp(ocal_last_error(), "ocal_sum: ", 10) == 0 &&
                    strstr(ocal_last_error(), "local memory"),
                "message: %s", ocal_last_error());
  ocal_buffer two;
  float v = -1;
  ck_assert_ocal(ocal_buffer_create(small, OCAL_F32, 1, &one, &two));
  ck_assert_ocal(ocal_binary_scalar(OCAL_BINARY_ADD, out, 2.0, two)); /* a kernel still runs */
  ck_assert_ocal(ocal_buffer_read(two, 0, 1, &v, NULL));
  ck_assert(v == 2.0f);
  ocal_buffer_release(x);
  ocal_buffer_release(out);
  ocal_buffer_release(two);
  ocal_context_release(small);
}
END_TEST

/* The *_to_host calls on a context without fp64: an f64 result that is the right type (an
 * integer mean) is OCAL_UNSUPPORTED and one that is not (an f32 sum) OCAL_TYPE_MISMATCH, as
 * the header says, each message naming the public call rather than the buffer it makes. */
START_TEST(test_to_host_without_fp64) {
  ocal_context_options o;
  ocal_context_options_init(&o);
  o.fp64 = 0;
  ocal_context c = NULL;
  ck_assert_ocal(ocal_context_create(&o, &c));
  size_t n = 7;
  int32_t iv[7] = {1, 2, 3, 4, 5, 6, 7};
  float fv[7] = {1, 2, 3, 4, 5, 6, 7};
  ocal_buffer xi, xf;
  ck_assert_ocal(ocal_buffer_from_host(c, OCAL_I32, 1, &n, iv, &xi));
  ck_assert_ocal(ocal_buffer_from_host(c, OCAL_F32, 1, &n, fv, &xf));
  double d = 0;
  ck_assert_ocal_fails(ocal_reduce_to_host(OCAL_REDUCE_MEAN, xi, OCAL_F64, &d), OCAL_UNSUPPORTED);
  ck_assert_msg(strncmp(ocal_last_error(), "ocal_reduce_to_host: ", 21) == 0 &&
                    strstr(ocal_last_error(), "OCAL_F32"),
                "message: %s", ocal_last_error());
  ck_assert_ocal_fails(ocal_reduce_to_host(OCAL_REDUCE_SUM, xf, OCAL_F64, &d), OCAL_TYPE_MISMATCH);
  ck_assert_msg(strncmp(ocal_last_error(), "ocal_reduce_to_host: ", 21) == 0,
                "message: %s", ocal_last_error());
  ck_assert_ocal_fails(ocal_dot_to_host(xf, xf, OCAL_F64, &d), OCAL_TYPE_MISMATCH);
  ck_assert_msg(strncmp(ocal_last_error(), "ocal_dot_to_host: ", 18) == 0,
                "message: %s", ocal_last_error());
  float m = 0;
  ck_assert_ocal(ocal_reduce_to_host(OCAL_REDUCE_MEAN, xi, OCAL_F32, &m));
  ck_assert(m == 4.0f);
  ocal_buffer_release(xi);
  ocal_buffer_release(xf);
  ocal_context_release(c);
}
END_TEST

/* Programs compiled or loaded so far by the fixture's context. */
static uint64_t programs_built(void) {
  ocal_cache_stats st = {.struct_size = sizeof st};
  ck_assert_ocal(ocal_context_get_cache_stats(fixture_ctx, &st));
  return st.compiles + st.disk_hits;
}

/* The strided kernel and both merges of one operation come from one program (one compile
 * where there were three): a one-launch column reduction, then chunks merged per group (few
 * outputs) and per work-item (many), each right against the host reference. */
START_TEST(test_strided_merges_one_program) {
  static const size_t one_launch[3] = {5, 6, 7}, by_group[2] = {1001, 7}, by_item[2] = {1000, 301};
  check_case(OCAL_REDUCE_SUM, OCAL_F32, 3, one_launch, 1, DATA_MIXED, OCAL_F32, 0, 0, 8101);
  const uint64_t first = programs_built();
  check_case(OCAL_REDUCE_SUM, OCAL_F32, 2, by_group, 0, DATA_MIXED, OCAL_F32, 0, 1, 8102);
  check_case(OCAL_REDUCE_SUM, OCAL_F32, 2, by_item, 0, DATA_MIXED, OCAL_F32, 0, 0, 8103);
  ck_assert_msg(programs_built() == first, "%llu more programs for the merges",
                (unsigned long long)(programs_built() - first));
}
END_TEST

static Suite *reduce_suite(void) {
  Suite *s = suite_create("reduce");
  TCase *tc = fixture_tcase("whole");
  tcase_add_loop_test(tc, test_whole_every_op, 0, N_REAL);
  tcase_add_test(tc, test_integer_float_results);
  suite_add_tcase(s, tc);
  tc = fixture_tcase("axes");
  tcase_add_loop_test(tc, test_axes_every_op, 0, N_REAL);
  tcase_add_test(tc, test_keepdims_shape);
  tcase_add_test(tc, test_whole_out_any_shape);
  suite_add_tcase(s, tc);
  tc = fixture_tcase("accuracy");
  tcase_add_test(tc, test_float_sum_accuracy_2_24);
  tcase_add_test(tc, test_integer_sums_exact);
  tcase_add_test(tc, test_variance_large_mean);
  suite_add_tcase(s, tc);
  tc = fixture_tcase("semantics");
  tcase_add_test(tc, test_nan_and_infinity);
  tcase_add_test(tc, test_empty);
  tcase_add_test(tc, test_errors);
  tcase_add_test(tc, test_queued_back_to_back);
  suite_add_tcase(s, tc);
  tc = fixture_tcase("shapes");
  tcase_add_test(tc, test_launch_shapes);
  tcase_add_test(tc, test_launch_shape_errors);
  tcase_add_test(tc, test_load_hints);
  tcase_add_test(tc, test_strided_merges_one_program);
  tcase_add_test(tc, test_small_local_memory);
  tcase_add_test(tc, test_to_host_without_fp64);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return fixture_run(reduce_suite()); }
