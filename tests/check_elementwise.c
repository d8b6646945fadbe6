/* Tests of the elementwise operations against plain host references on random data. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

/* ---- helpers -------------------------------------------------------------------------- */

static ocal_buffer make(ocal_dtype t, int ndim, const size_t *shape, const void *data) {
  ocal_buffer b;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, t, ndim, shape, data, &b));
  return b;
}

static ocal_buffer make1(ocal_dtype t, size_t n, const void *data) { return make(t, 1, &n, data); }

static ocal_buffer empty1(ocal_dtype t, size_t n) {
  ocal_buffer b;
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, t, 1, &n, &b));
  return b;
}

static void *fetch(ocal_buffer b) {
  size_t bytes, n;
  ck_assert_ocal(ocal_buffer_get_nbytes(b, &bytes));
  ck_assert_ocal(ocal_buffer_get_numel(b, &n));
  void *host = malloc(bytes ? bytes : 1);
  ck_assert_ptr_nonnull(host);
  ck_assert_ocal(ocal_buffer_read(b, 0, n, host, NULL));
  return host;
}

/* Uniform doubles in [lo, hi). */
static void random_doubles(double *out, size_t n, double lo, double hi, uint64_t seed) {
  uint64_t s = seed;
  for (size_t i = 0; i < n; i++)
    out[i] = lo + (hi - lo) * ((double)(fixture_random(&s) >> 11) * 0x1.0p-53);
}

static void to_type(const double *in, size_t n, ocal_dtype t, void *out) {
  for (size_t i = 0; i < n; i++) {
    switch (t) {
      case OCAL_F32: ((float *)out)[i] = (float)in[i]; break;
      case OCAL_F64: ((double *)out)[i] = in[i]; break;
      case OCAL_I32: ((int32_t *)out)[i] = (int32_t)in[i]; break;
      case OCAL_U32: ((uint32_t *)out)[i] = (uint32_t)in[i]; break;
      case OCAL_I64: ((int64_t *)out)[i] = (int64_t)in[i]; break;
      case OCAL_U64: ((uint64_t *)out)[i] = (uint64_t)in[i]; break;
      case OCAL_U8: ((uint8_t *)out)[i] = (uint8_t)in[i]; break;
      default: ck_abort_msg("bad type");
    }
  }
}

static double get(const void *p, ocal_dtype t, size_t i) { return (double)fixture_get(t, p, i); }

/* Compares with a relative tolerance scaled to the type (a few ulps of f32, or f64). */
static void expect_close(const char *what, const void *got, ocal_dtype t, const double *want,
                         size_t n, double rtol) {
  double atol = t == OCAL_F32 ? 1e-6 : 1e-13;
  for (size_t i = 0; i < n; i++) {
    double g = get(got, t, i), w = want[i];
    if (isnan(w)) {
      ck_assert_msg(isnan(g), "%s[%zu]: got %.9g, want NaN", what, i, g);
      continue;
    }
    if (isinf(w)) {
      ck_assert_msg(g == w, "%s[%zu]: got %.9g, want %.9g", what, i, g, w);
      continue;
    }
    ck_assert_msg(fabs(g - w) <= atol + rtol * fabs(w), "%s[%zu]: got %.17g, want %.17g", what,
                  i, g, w);
  }
}

static void expect_exact(const char *what, const void *got, const void *want, size_t bytes) {
  if (memcmp(got, want, bytes) == 0) return;
  const unsigned char *g = got, *w = want;
  size_t i = 0;
  while (g[i] == w[i]) i++;
  ck_abort_msg("%s differs from the host reference at byte %zu", what, i);
}

/* ---- unary ---------------------------------------------------------------------------- */

typedef double (*unary_ref)(double);
static double ref_neg(double x) { return -x; }
static double ref_rsqrt(double x) { return 1 / sqrt(x); }
static double ref_sigmoid(double x) { return 1 / (1 + exp(-x)); }
static double ref_relu(double x) { return x < 0 ? 0 : x; }
static double ref_gelu(double x) { return 0.5 * x * (1 + erf(x / sqrt(2.0))); }
static double ref_sign(double x) { return x > 0 ? 1 : x < 0 ? -1 : x; }
static double ref_square(double x) { return x * x; }
static double ref_reciprocal(double x) { return 1 / x; }

static const struct {
  ocal_unary_op op;
  unary_ref ref;
  double lo, hi; /* input domain */
} unary_cases[] = {
    {OCAL_UNARY_NEG, ref_neg, -100, 100},       {OCAL_UNARY_ABS, fabs, -100, 100},
    {OCAL_UNARY_SQRT, sqrt, 0, 1000},           {OCAL_UNARY_RSQRT, ref_rsqrt, 0.01, 1000},
    {OCAL_UNARY_EXP, exp, -20, 20},             {OCAL_UNARY_LOG, log, 1e-3, 1e3},
    {OCAL_UNARY_LOG1P, log1p, -0.9, 10},        {OCAL_UNARY_EXPM1, expm1, -5, 5},
    {OCAL_UNARY_SIN, sin, -10, 10},             {OCAL_UNARY_COS, cos, -10, 10},
    {OCAL_UNARY_TANH, tanh, -8, 8},             {OCAL_UNARY_SIGMOID, ref_sigmoid, -20, 20},
    {OCAL_UNARY_RELU, ref_relu, -5, 5},         {OCAL_UNARY_GELU, ref_gelu, -6, 6},
    {OCAL_UNARY_FLOOR, floor, -50, 50},         {OCAL_UNARY_CEIL, ceil, -50, 50},
    {OCAL_UNARY_ROUND, nearbyint, -50, 50},     {OCAL_UNARY_SIGN, ref_sign, -3, 3},
    {OCAL_UNARY_SQUARE, ref_square, -30, 30},   {OCAL_UNARY_RECIPROCAL, ref_reciprocal, 0.1, 50},
};
#define NUNARY (sizeof unary_cases / sizeof unary_cases[0])

/* Runs one float unary case at size n, out of place and (for the first size) in place. */
static void check_unary_float(size_t c, ocal_dtype t, size_t n, int in_place) {
  double *x = calloc(n, sizeof *x), *want = calloc(n, sizeof *want);
  void *xt = calloc(n, 8);
  random_doubles(x, n, unary_cases[c].lo, unary_cases[c].hi, 1000 + c * 7 + n);
  if (n >= 3 && unary_cases[c].op == OCAL_UNARY_ROUND) x[0] = 2.5, x[1] = -3.5, x[2] = 0.5;
  to_type(x, n, t, xt);
  for (size_t i = 0; i < n; i++) want[i] = unary_cases[c].ref(get(xt, t, i));
  ocal_buffer bx = make1(t, n, xt), by = in_place ? bx : empty1(t, n);
  ck_assert_ocal(ocal_unary(unary_cases[c].op, bx, by));
  void *got = fetch(by);
  char what[64];
  snprintf(what, sizeof what, "%s %s n=%zu", ocal_unary_op_name(unary_cases[c].op),
           ocal_dtype_name(t), n);
  expect_close(what, got, t, want, n, t == OCAL_F32 ? 4e-6 : 1e-13);
  free(got);
  if (!in_place) ocal_buffer_release(by);
  ocal_buffer_release(bx);
  free(x);
  free(want);
  free(xt);
}

START_TEST(test_unary_f32_all_ops) {
  static const size_t sizes[] = {1, 7, 1001};
  for (size_t c = 0; c < NUNARY; c++)
    for (size_t s = 0; s < 3; s++) check_unary_float(c, OCAL_F32, sizes[s], s == 1);
  check_unary_float(4, OCAL_F32, 1000003, 0);  /* exp, large */
  check_unary_float(12, OCAL_F32, 1000003, 1); /* relu, large, in place */
}
END_TEST

START_TEST(test_unary_f64_all_ops) {
  if (!fixture_has_fp64()) return;
  for (size_t c = 0; c < NUNARY; c++) check_unary_float(c, OCAL_F64, 1001, c % 2);
}
END_TEST

/* Host references of the integer unary ops: wrapping arithmetic done in the unsigned type,
 * so the reference itself has no undefined behaviour. */
#define INT_UNARY_REF(T, UT, NEGATIVE)                                        \
  static T unary_ref_##T(ocal_unary_op op, T v) {                              \
    T minus = (T)(UT)(0u - (UT)v);                                             \
    switch (op) {                                                              \
      case OCAL_UNARY_NEG: return minus;                                       \
      case OCAL_UNARY_ABS: return NEGATIVE(v) ? minus : v;                     \
      case OCAL_UNARY_SIGN: return NEGATIVE(v) ? (T)(UT)~(UT)0 : v != 0;        \
      case OCAL_UNARY_SQUARE: return (T)(UT)((UT)v * (UT)v);                   \
      case OCAL_UNARY_RELU: return NEGATIVE(v) ? 0 : v;                        \
      default: return v; /* floor, ceil, round: identity on integers */       \
    }                                                                          \
  }
#define IS_NEGATIVE(v) ((v) < 0)
#define NEVER_NEGATIVE(v) ((void)(v), 0)
INT_UNARY_REF(int32_t, uint32_t, IS_NEGATIVE)
INT_UNARY_REF(uint32_t, uint32_t, NEVER_NEGATIVE)
INT_UNARY_REF(int64_t, uint64_t, IS_NEGATIVE)
INT_UNARY_REF(uint64_t, uint64_t, NEVER_NEGATIVE)
INT_UNARY_REF(uint8_t, uint32_t, NEVER_NEGATIVE)

START_TEST(test_unary_integers) {
  static const ocal_dtype types[] = {OCAL_I32, OCAL_U32, OCAL_I64, OCAL_U64, OCAL_U8};
  static const ocal_unary_op ops[] = {OCAL_UNARY_NEG,    OCAL_UNARY_ABS,  OCAL_UNARY_SIGN,
                                      OCAL_UNARY_SQUARE, OCAL_UNARY_RELU, OCAL_UNARY_ROUND};
  const size_t n = 1003;
  for (size_t ti = 0; ti < 5; ti++) {
    ocal_dtype t = types[ti];
    size_t es = ocal_dtype_size(t);
    unsigned char *x = malloc(n * es), *want = malloc(n * es);
    fixture_random_bytes(x, n * es, 77 + ti);
    ocal_buffer bx = make1(t, n, x), by = empty1(t, n);
    for (size_t oi = 0; oi < 6; oi++) {
      for (size_t i = 0; i < n; i++) {
        switch (t) {
          case OCAL_I32: ((int32_t *)want)[i] = unary_ref_int32_t(ops[oi], ((int32_t *)x)[i]); break;
          case OCAL_U32: ((uint32_t *)want)[i] = unary_ref_uint32_t(ops[oi], ((uint32_t *)x)[i]); break;
          case OCAL_I64: ((int64_t *)want)[i] = unary_ref_int64_t(ops[oi], ((int64_t *)x)[i]); break;
          case OCAL_U64: ((uint64_t *)want)[i] = unary_ref_uint64_t(ops[oi], ((uint64_t *)x)[i]); break;
          default: ((uint8_t *)want)[i] = unary_ref_uint8_t(ops[oi], x[i]); break;
        }
      }
      ck_assert_ocal(ocal_unary(ops[oi], bx, by));
      void *got = fetch(by);
      char what[64];
      snprintf(what, sizeof what, "%s %s", ocal_unary_op_name(ops[oi]), ocal_dtype_name(t));
      expect_exact(what, got, want, n * es);
      free(got);
    }
    ocal_buffer_release(bx);
    ocal_buffer_release(by);
    free(x);
    free(want);
  }
}
END_TEST

START_TEST(test_unary_integer_input_float_output) {
  const size_t n = 999;
  int32_t x[999];
  double want[999];
  for (size_t i = 0; i < n; i++) x[i] = (int32_t)(i * 37 % 1000) + 1;
  for (size_t i = 0; i < n; i++) want[i] = log((double)x[i]);
  ocal_buffer bx = make1(OCAL_I32, n, x), by = empty1(OCAL_F32, n);
  ck_assert_ocal(ocal_unary(OCAL_UNARY_LOG, bx, by));
  void *got = fetch(by);
  expect_close("log i32->f32", got, OCAL_F32, want, n, 4e-6);
  free(got);
  ocal_buffer_release(bx);
  ocal_buffer_release(by);
}
END_TEST

START_TEST(test_unary_errors) {
  float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  ocal_buffer f = make1(OCAL_F32, 8, x), i = empty1(OCAL_I32, 8), f7 = empty1(OCAL_F32, 7);
  ocal_buffer i2 = empty1(OCAL_I32, 8), c = empty1(OCAL_C32, 8), v1, v2;
  ck_assert_ocal_fails(ocal_unary(OCAL_UNARY_LOG, i, i2), OCAL_TYPE_MISMATCH);
  ck_assert_msg(strstr(ocal_last_error(), "floating-point output") != NULL, "%s",
                ocal_last_error());
  ck_assert_ocal_fails(ocal_unary(OCAL_UNARY_NEG, f, i), OCAL_TYPE_MISMATCH);
  ck_assert_ocal_fails(ocal_unary(OCAL_UNARY_NEG, f, f7), OCAL_SHAPE_MISMATCH);
  ck_assert_ocal_fails(ocal_unary(OCAL_UNARY_NEG, c, c), OCAL_UNSUPPORTED);
  ck_assert_ocal_fails(ocal_unary(OCAL_UNARY_NEG, NULL, f), OCAL_INVALID_HANDLE);
  ck_assert_ocal_fails(ocal_unary(OCAL_UNARY_NEG, f, NULL), OCAL_INVALID_HANDLE);
  ck_assert_ocal_fails(ocal_unary((ocal_unary_op)99, f, f), OCAL_INVALID_ARGUMENT);
  /* Messages name the call's own parameters: ocal_scale's buffer is x. */
  ck_assert_ocal_fails(ocal_scale(2.0, NULL), OCAL_INVALID_HANDLE);
  ck_assert_msg(strstr(ocal_last_error(), "ocal_scale: buffer x is NULL") != NULL, "%s",
                ocal_last_error());
  ck_assert_ocal_fails(ocal_scale(2.0, c), OCAL_UNSUPPORTED);
  ck_assert_msg(strstr(ocal_last_error(), "buffer x is c32") != NULL, "%s", ocal_last_error());
  size_t four = 4;
  ck_assert_ocal(ocal_buffer_view(f, 0, 1, &four, &v1));
  ck_assert_ocal(ocal_buffer_view(f, 2, 1, &four, &v2));
  ck_assert_ocal_fails(ocal_unary(OCAL_UNARY_NEG, v1, v2), OCAL_INVALID_ARGUMENT);
  /* Disjoint views of one buffer are fine: negate the first half into the second. */
  ocal_buffer_release(v2);
  ck_assert_ocal(ocal_buffer_view(f, 4, 1, &four, &v2));
  ck_assert_ocal(ocal_unary(OCAL_UNARY_NEG, v1, v2));
  float got[8];
  ck_assert_ocal(ocal_buffer_read(f, 0, 8, got, NULL));
  for (int k = 0; k < 4; k++) ck_assert_float_eq(got[4 + k], -x[k]);
  /* The context still works after all those errors, and empty buffers are fine. */
  ocal_buffer e = empty1(OCAL_F32, 0);
  ck_assert_ocal(ocal_unary(OCAL_UNARY_EXP, e, e));
  ocal_buffer bufs[] = {f, i, f7, i2, c, v1, v2, e};
  for (int k = 0; k < 8; k++) ocal_buffer_release(bufs[k]);
}
END_TEST

/* ---- binary --------------------------------------------------------------------------- */

static double ref_binary(ocal_binary_op op, double a, double b) {
  switch (op) {
    case OCAL_BINARY_FLOOR_DIVIDE: return fixture_floor_divide(a, b);
    case OCAL_BINARY_REMAINDER: return fixture_remainder(a, b);
    case OCAL_BINARY_ADD: return a + b;
    case OCAL_BINARY_SUB: return a - b;
    case OCAL_BINARY_MUL: return a * b;
    case OCAL_BINARY_DIV: return a / b;
    case OCAL_BINARY_POW: return pow(a, b);
    case OCAL_BINARY_MIN: return (isnan(a) || a < b) ? a : b;
    case OCAL_BINARY_MAX: return (isnan(a) || a > b) ? a : b;
    case OCAL_BINARY_ATAN2: return atan2(a, b);
    case OCAL_BINARY_FMOD: return fmod(a, b);
    case OCAL_BINARY_EQ: return a == b;
    case OCAL_BINARY_NE: return a != b;
    case OCAL_BINARY_LT: return a < b;
    case OCAL_BINARY_LE: return a <= b;
    case OCAL_BINARY_GT: return a > b;
    case OCAL_BINARY_GE: return a >= b;
    default: ck_abort_msg("bad op"); return 0;
  }
}

static int is_comparison(ocal_binary_op op) { return op >= OCAL_BINARY_EQ && op <= OCAL_BINARY_GE; }

/* All binary ops on a float type, flat and with 4-wide loads plus a tail. */
static void check_binary_float(ocal_dtype t, size_t n) {
  double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *want = malloc(n * sizeof *want);
  void *at = malloc(n * 8), *bt = malloc(n * 8);
  for (int op = 0; op < OCAL_BINARY_OP_COUNT; op++) {
    int positive = op == OCAL_BINARY_POW;
    random_doubles(a, n, positive ? 0.1 : -10, 10, 500 + op);
    random_doubles(b, n, positive ? -3 : -10, positive ? 3 : 10, 900 + op);
    for (size_t i = 0; i + 3 < n; i += 5) b[i] = a[i]; /* equal pairs for the comparisons */
    to_type(a, n, t, at);
    to_type(b, n, t, bt);
    ocal_dtype rt = is_comparison((ocal_binary_op)op) ? OCAL_U8 : t;
    for (size_t i = 0; i < n; i++)
      want[i] = ref_binary((ocal_binary_op)op, get(at, t, i), get(bt, t, i));
    if (rt == t) { /* round the reference to the type, as the device's result is */
      void *wt = malloc(n * 8);
      to_type(want, n, t, wt);
      for (size_t i = 0; i < n; i++) want[i] = get(wt, t, i);
      free(wt);
    }
    ocal_buffer ba = make1(t, n, at), bb = make1(t, n, bt), by = empty1(rt, n);
    ck_assert_ocal(ocal_binary((ocal_binary_op)op, ba, bb, by));
    void *got = fetch(by);
    char what[64];
    snprintf(what, sizeof what, "%s %s n=%zu", ocal_binary_op_name((ocal_binary_op)op),
             ocal_dtype_name(t), n);
    expect_close(what, got, rt, want, n, t == OCAL_F32 ? 4e-6 : 1e-13);
    free(got);
    ocal_buffer_release(ba);
    ocal_buffer_release(bb);
    ocal_buffer_release(by);
  }
  free(a);
  free(b);
  free(want);
  free(at);
  free(bt);
}

START_TEST(test_binary_f32) {
  check_binary_float(OCAL_F32, 7);
  check_binary_float(OCAL_F32, 1001);
}
END_TEST

START_TEST(test_binary_f64) {
  if (fixture_has_fp64()) check_binary_float(OCAL_F64, 1001);
}
END_TEST

static int negative(int64_t v) { return v < 0; }

/* Integer binary ops against wrapping host arithmetic; division by zero gives 0 and
 * MIN / -1 wraps instead of trapping; floor_divide and remainder round down (NumPy's). */
#define INT_BINARY_REF(T, UT, SIGNED)                                                 \
  static T binary_ref_##T(ocal_binary_op op, T a, T b) {                               \
    switch (op) {                                                                      \
      case OCAL_BINARY_ADD: return (T)(UT)((UT)a + (UT)b);                             \
      case OCAL_BINARY_SUB: return (T)(UT)((UT)a - (UT)b);                             \
      case OCAL_BINARY_MUL: return (T)(UT)((UT)a * (UT)b);                             \
      case OCAL_BINARY_DIV:                                                            \
        if (b == 0) return 0;                                                          \
        if (SIGNED && b == (T)(UT)~(UT)0) return (T)(UT)(0u - (UT)a);                  \
        return (T)(a / b);                                                             \
      case OCAL_BINARY_FMOD:                                                           \
        if (b == 0 || (SIGNED && b == (T)(UT)~(UT)0)) return 0;                        \
        return (T)(a % b);                                                             \
      case OCAL_BINARY_FLOOR_DIVIDE:                                                   \
      case OCAL_BINARY_REMAINDER: {                                                    \
        if (b == 0) return 0;                                                          \
        if (SIGNED && b == (T)(UT)~(UT)0)                                              \
          return op == OCAL_BINARY_REMAINDER ? 0 : (T)(UT)(0u - (UT)a);                \
        T q = (T)(a / b), r = (T)(a % b);                                              \
        if (SIGNED && r != 0 && negative((int64_t)r) != negative((int64_t)b))          \
          q = (T)(q - 1), r = (T)(r + b);                                              \
        return op == OCAL_BINARY_REMAINDER ? r : q;                                    \
      }                                                                                \
      case OCAL_BINARY_MIN: return a < b ? a : b;                                      \
      case OCAL_BINARY_MAX: return a > b ? a : b;                                      \
      default: return (T)ref_binary(op, (double)a, (double)b);                         \
    }                                                                                  \
  }
INT_BINARY_REF(int32_t, uint32_t, 1)
INT_BINARY_REF(uint32_t, uint32_t, 0)
INT_BINARY_REF(int64_t, uint64_t, 1)
INT_BINARY_REF(uint64_t, uint64_t, 0)
INT_BINARY_REF(uint8_t, uint32_t, 0)

/* Integer pow by squaring with wrapping, the documented semantics. */
static uint64_t ipow_ref(uint64_t a, int64_t b, int is_signed, uint64_t mask) {
  if (is_signed && b < 0) {
    int64_t sa = (int64_t)a;
    if (sa == 1) return 1;
    if (sa == -1) return (b & 1) ? a : 1;
    return 0;
  }
  uint64_t r = 1;
  uint64_t e = (uint64_t)b;
  while (e) {
    if (e & 1) r = (r * a) & mask;
    a = (a * a) & mask;
    e >>= 1;
  }
  return r;
}

START_TEST(test_binary_integers) {
  static const ocal_dtype types[] = {OCAL_I32, OCAL_U32, OCAL_I64, OCAL_U64, OCAL_U8};
  static const ocal_binary_op ops[] = {OCAL_BINARY_ADD, OCAL_BINARY_SUB, OCAL_BINARY_MUL,
                                       OCAL_BINARY_DIV, OCAL_BINARY_FMOD, OCAL_BINARY_MIN,
                                       OCAL_BINARY_MAX, OCAL_BINARY_POW, OCAL_BINARY_LT,
                                       OCAL_BINARY_EQ, OCAL_BINARY_FLOOR_DIVIDE,
                                       OCAL_BINARY_REMAINDER};
  const size_t n = 1001;
  for (size_t ti = 0; ti < 5; ti++) {
    ocal_dtype t = types[ti];
    size_t es = ocal_dtype_size(t);
    unsigned char *a = malloc(n * es), *b = malloc(n * es), *want = malloc(n * es);
    for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++) {
      ocal_binary_op op = ops[oi];
      fixture_random_bytes(a, n * es, 11 + ti * 100 + oi);
      fixture_random_bytes(b, n * es, 12 + ti * 100 + oi);
      if (op == OCAL_BINARY_POW) /* small exponents, some negative for signed types */
        for (size_t i = 0; i < n; i++) {
          int64_t e = (int64_t)(i % 13) - (t == OCAL_I32 || t == OCAL_I64 ? 3 : 0);
          to_type((double[]){(double)e}, 1, t, b + i * es);
        }
      if (op == OCAL_BINARY_FLOOR_DIVIDE || op == OCAL_BINARY_REMAINDER)
        for (size_t i = 1; i < n; i += 2) { /* small divisors too: quotients beyond +-1 */
          int64_t d = (int64_t)(i % 23) - (t == OCAL_I32 || t == OCAL_I64 ? 11 : 0);
          to_type((double[]){(double)d}, 1, t, b + i * es);
        }
      /* Zero divisors, equal pairs, and MIN / -1. */
      memset(b, 0, es);
      memcpy(b + es, a + es, es);
      if (t == OCAL_I32) ((int32_t *)a)[2] = INT32_MIN, ((int32_t *)b)[2] = -1;
      if (t == OCAL_I64) ((int64_t *)a)[2] = INT64_MIN, ((int64_t *)b)[2] = -1;
      int cmp = op == OCAL_BINARY_LT || op == OCAL_BINARY_EQ;
      ocal_dtype rt = cmp ? OCAL_U8 : t;
      for (size_t i = 0; i < n; i++) {
        if (cmp) {
          double x = get(a, t, i), y = get(b, t, i);
          int r;
          switch (t) { /* exact comparisons: doubles cannot hold every 64-bit value */
            case OCAL_I64: r = op == OCAL_BINARY_LT ? ((int64_t *)a)[i] < ((int64_t *)b)[i] : ((int64_t *)a)[i] == ((int64_t *)b)[i]; break;
            case OCAL_U64: r = op == OCAL_BINARY_LT ? ((uint64_t *)a)[i] < ((uint64_t *)b)[i] : ((uint64_t *)a)[i] == ((uint64_t *)b)[i]; break;
            default: r = op == OCAL_BINARY_LT ? x < y : x == y; break;
          }
          want[i] = (uint8_t)r;
          continue;
        }
        if (op == OCAL_BINARY_POW) {
          uint64_t mask = es == 8 ? ~0ull : ((1ull << (8 * es)) - 1);
          uint64_t base = 0, r, ebits = 0;
          memcpy(&base, a + i * es, es);
          memcpy(&ebits, b + i * es, es);
          int64_t e = (int64_t)ebits;
          if (t == OCAL_I32) {
            base = (uint64_t)(int64_t)((int32_t *)a)[i];
            e = ((int32_t *)b)[i];
          }
          r = ipow_ref(base, e, t == OCAL_I32 || t == OCAL_I64, t == OCAL_I32 ? ~0ull : mask);
          memcpy(want + i * es, &r, es);
          continue;
        }
        switch (t) {
          case OCAL_I32: ((int32_t *)want)[i] = binary_ref_int32_t(op, ((int32_t *)a)[i], ((int32_t *)b)[i]); break;
          case OCAL_U32: ((uint32_t *)want)[i] = binary_ref_uint32_t(op, ((uint32_t *)a)[i], ((uint32_t *)b)[i]); break;
          case OCAL_I64: ((int64_t *)want)[i] = binary_ref_int64_t(op, ((int64_t *)a)[i], ((int64_t *)b)[i]); break;
          case OCAL_U64: ((uint64_t *)want)[i] = binary_ref_uint64_t(op, ((uint64_t *)a)[i], ((uint64_t *)b)[i]); break;
          default: want[i] = binary_ref_uint8_t(op, a[i], b[i]); break;
        }
      }
      ocal_buffer ba = make1(t, n, a), bb = make1(t, n, b), by = empty1(rt, n);
      ck_assert_ocal(ocal_binary(op, ba, bb, by));
      void *got = fetch(by);
      char what[64];
      snprintf(what, sizeof what, "%s %s", ocal_binary_op_name(op), ocal_dtype_name(t));
      expect_exact(what, got, want, n * ocal_dtype_size(rt));
      free(got);
      ocal_buffer_release(ba);
      ocal_buffer_release(bb);
      ocal_buffer_release(by);
    }
    free(a);
    free(b);
    free(want);
  }
}
END_TEST

/* ---- broadcasting ----------------------------------------------------------------------- */

/* Host reference of a broadcast binary op on f32 with shapes right-aligned into 4-D. */
static void ref_broadcast(ocal_binary_op op, const float *a, int na, const size_t *sa,
                          const float *b, int nb, const size_t *sb, int ny, const size_t *sy,
                          float *y) {
  size_t pa[4] = {1, 1, 1, 1}, pb[4] = {1, 1, 1, 1}, py[4] = {1, 1, 1, 1};
  for (int i = 0; i < na; i++) pa[4 - na + i] = sa[i];
  for (int i = 0; i < nb; i++) pb[4 - nb + i] = sb[i];
  for (int i = 0; i < ny; i++) py[4 - ny + i] = sy[i];
  size_t k = 0;
  for (size_t i0 = 0; i0 < py[0]; i0++)
    for (size_t i1 = 0; i1 < py[1]; i1++)
      for (size_t i2 = 0; i2 < py[2]; i2++)
        for (size_t i3 = 0; i3 < py[3]; i3++) {
          size_t ia = (((i0 % pa[0]) * pa[1] + i1 % pa[1]) * pa[2] + i2 % pa[2]) * pa[3] + i3 % pa[3];
          size_t ib = (((i0 % pb[0]) * pb[1] + i1 % pb[1]) * pb[2] + i2 % pb[2]) * pb[3] + i3 % pb[3];
          y[k++] = (float)ref_binary(op, a[ia], b[ib]);
        }
}

static void check_broadcast(ocal_binary_op op, int na, const size_t *sa, int nb, const size_t *sb,
                            int ny, const size_t *sy) {
  size_t ca = fixture_numel(na, sa), cb = fixture_numel(nb, sb), cy = fixture_numel(ny, sy);
  float *a = malloc(ca * 4 + 4), *b = malloc(cb * 4 + 4), *want = malloc(cy * 4 + 4);
  double *tmp = malloc((ca > cb ? ca : cb) * 8 + 8);
  random_doubles(tmp, ca, -5, 5, ca + 3);
  to_type(tmp, ca, OCAL_F32, a);
  random_doubles(tmp, cb, 0.5, 5, cb + 4);
  to_type(tmp, cb, OCAL_F32, b);
  ref_broadcast(op, a, na, sa, b, nb, sb, ny, sy, want);
  ocal_buffer ba = make(OCAL_F32, na, sa, a), bb = make(OCAL_F32, nb, sb, b), by;
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, ny, sy, &by));
  ck_assert_ocal(ocal_binary(op, ba, bb, by));
  float *got = fetch(by);
  for (size_t i = 0; i < cy; i++)
    ck_assert_msg(fabsf(got[i] - want[i]) <= 1e-6f * fabsf(want[i]) + 1e-6f,
                  "%s broadcast [%zu]: got %g want %g", ocal_binary_op_name(op), i, got[i],
                  want[i]);
  free(got);
  ocal_buffer_release(ba);
  ocal_buffer_release(bb);
  ocal_buffer_release(by);
  free(a);
  free(b);
  free(want);
  free(tmp);
}

START_TEST(test_broadcast_shapes) {
  /* A bias row added to every row: the first case that must work. */
  check_broadcast(OCAL_BINARY_ADD, 2, (size_t[]){257, 129}, 1, (size_t[]){129}, 2,
                  (size_t[]){257, 129});
  /* A column times a row gives an outer product; the row on the left. */
  check_broadcast(OCAL_BINARY_MUL, 2, (size_t[]){1, 33}, 2, (size_t[]){17, 1}, 2,
                  (size_t[]){17, 33});
  /* 3-D and 4-D, broadcast on several axes, a one-element operand, division. */
  check_broadcast(OCAL_BINARY_SUB, 3, (size_t[]){5, 1, 7}, 3, (size_t[]){1, 6, 7}, 3,
                  (size_t[]){5, 6, 7});
  check_broadcast(OCAL_BINARY_DIV, 4, (size_t[]){2, 3, 4, 5}, 4, (size_t[]){2, 1, 4, 1}, 4,
                  (size_t[]){2, 3, 4, 5});
  check_broadcast(OCAL_BINARY_MAX, 1, (size_t[]){1}, 3, (size_t[]){3, 4, 5}, 3,
                  (size_t[]){3, 4, 5});
  /* Rows of a multiple of 4 elements take 4 columns a work-item: a bias row, a column
   * repeated across (on either side), one element, and a bias over a 3-D block. */
  check_broadcast(OCAL_BINARY_ADD, 2, (size_t[]){37, 132}, 1, (size_t[]){132}, 2,
                  (size_t[]){37, 132});
  check_broadcast(OCAL_BINARY_SUB, 2, (size_t[]){37, 1}, 2, (size_t[]){37, 12}, 2,
                  (size_t[]){37, 12});
  check_broadcast(OCAL_BINARY_DIV, 2, (size_t[]){1, 8}, 2, (size_t[]){19, 1}, 2,
                  (size_t[]){19, 8});
  check_broadcast(OCAL_BINARY_MUL, 1, (size_t[]){1}, 2, (size_t[]){5, 44}, 2,
                  (size_t[]){5, 44});
  check_broadcast(OCAL_BINARY_MIN, 3, (size_t[]){3, 7, 16}, 2, (size_t[]){7, 16}, 3,
                  (size_t[]){3, 7, 16});
}
END_TEST

START_TEST(test_broadcast_errors) {
  size_t s34[] = {3, 4}, s5[] = {5}, s4[] = {4}, s43[] = {4, 3};
  ocal_buffer a, b, c, y, yw;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 2, s34, &a));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, s5, &b));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, s4, &c));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 2, s34, &y));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 2, s43, &yw));
  ck_assert_ocal_fails(ocal_binary(OCAL_BINARY_ADD, a, b, y), OCAL_SHAPE_MISMATCH);
  ck_assert_msg(strstr(ocal_last_error(), "do not broadcast") != NULL, "%s", ocal_last_error());
  /* Shapes are written the one way every area writes them (ocal__shape_format). */
  ck_assert_msg(strstr(ocal_last_error(), "[3, 4]") && strstr(ocal_last_error(), "[5]"), "%s",
                ocal_last_error());
  ck_assert_ocal_fails(ocal_binary(OCAL_BINARY_ADD, a, c, yw), OCAL_SHAPE_MISMATCH);
  ck_assert_ocal(ocal_binary(OCAL_BINARY_ADD, a, c, y));
  ocal_buffer i;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_I32, 1, s4, &i));
  ck_assert_ocal_fails(ocal_binary(OCAL_BINARY_ADD, a, i, y), OCAL_TYPE_MISMATCH);
  ck_assert_ocal_fails(ocal_binary(OCAL_BINARY_LT, a, c, y), OCAL_TYPE_MISMATCH); /* u8 out */
  ck_assert_ocal_fails(ocal_binary(OCAL_BINARY_ATAN2, i, i, i), OCAL_TYPE_MISMATCH);
  /* The other statuses ops.h lists for ocal_binary. */
  ck_assert_ocal_fails(ocal_binary(OCAL_BINARY_ADD, NULL, c, c), OCAL_INVALID_HANDLE);
  ck_assert_ocal_fails(ocal_binary(OCAL_BINARY_OP_COUNT, c, c, c), OCAL_INVALID_ARGUMENT);
  ocal_buffer head, tail, z;
  size_t s3[] = {3};
  ck_assert_ocal(ocal_buffer_view(c, 0, 1, s3, &head));
  ck_assert_ocal(ocal_buffer_view(c, 1, 1, s3, &tail));
  ck_assert_ocal_fails(ocal_binary(OCAL_BINARY_ADD, head, head, tail), OCAL_INVALID_ARGUMENT);
  ck_assert_msg(strstr(ocal_last_error(), "overlaps") != NULL, "%s", ocal_last_error());
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_C32, 1, s4, &z));
  ck_assert_ocal_fails(ocal_binary(OCAL_BINARY_ADD, z, z, z), OCAL_UNSUPPORTED);
  ocal_buffer bufs[] = {a, b, c, y, yw, i, head, tail, z};
  for (int k = 0; k < 9; k++) ocal_buffer_release(bufs[k]);
}
END_TEST

/* ---- scalars, where, axpy ----------------------------------------------------------------- */

START_TEST(test_scalar_on_either_side) {
  const size_t n = 1001;
  float x[1001];
  double tmp[1001];
  random_doubles(tmp, n, 0.5, 4, 5);
  to_type(tmp, n, OCAL_F32, x);
  ocal_buffer bx = make1(OCAL_F32, n, x), by = empty1(OCAL_F32, n), bm = empty1(OCAL_U8, n);
  ck_assert_ocal(ocal_scalar_binary(OCAL_BINARY_SUB, 1.0, bx, by)); /* 1 - x */
  float *got = fetch(by);
  for (size_t i = 0; i < n; i++) ck_assert_float_eq(got[i], 1.0f - x[i]);
  free(got);
  ck_assert_ocal(ocal_binary_scalar(OCAL_BINARY_SUB, bx, 1.0, by)); /* x - 1 */
  got = fetch(by);
  for (size_t i = 0; i < n; i++) ck_assert_float_eq(got[i], x[i] - 1.0f);
  free(got);
  ck_assert_ocal(ocal_scalar_binary(OCAL_BINARY_POW, 2.0, bx, by)); /* 2 ** x */
  got = fetch(by);
  for (size_t i = 0; i < n; i++)
    ck_assert_msg(fabs(got[i] - pow(2.0, x[i])) <= 4e-6 * pow(2.0, x[i]), "2**x at %zu", i);
  free(got);
  ck_assert_ocal(ocal_binary_scalar(OCAL_BINARY_GT, bx, 2.0, bm));
  uint8_t *mask = fetch(bm);
  for (size_t i = 0; i < n; i++) ck_assert_uint_eq(mask[i], x[i] > 2.0f);
  free(mask);
  ck_assert_ocal(ocal_scale(-3.0, bx)); /* in place */
  got = fetch(bx);
  for (size_t i = 0; i < n; i++) ck_assert_float_eq(got[i], -3.0f * x[i]);
  free(got);
  /* An integer buffer takes only whole scalars in its range. */
  ocal_buffer bi = empty1(OCAL_U8, 4);
  ck_assert_ocal_fails(ocal_binary_scalar(OCAL_BINARY_ADD, bi, 2.5, bi), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_binary_scalar(OCAL_BINARY_ADD, bi, 256, bi), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_binary_scalar(OCAL_BINARY_ADD, bi, -1, bi), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_binary_scalar(OCAL_BINARY_ADD, bx, 1, bi), OCAL_TYPE_MISMATCH);
  /* An f32 buffer takes scalars within f32's range, and infinities as given. */
  ck_assert_ocal_fails(ocal_scale(1e300, bx), OCAL_INVALID_ARGUMENT);
  ck_assert_msg(strstr(ocal_last_error(), "beyond f32's range") != NULL, "%s", ocal_last_error());
  ck_assert_ocal_fails(ocal_axpy(-1e39, bx, by), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_binary_scalar(OCAL_BINARY_MUL, bx, 1e300, by), OCAL_INVALID_ARGUMENT);
  got = fetch(bx);
  for (size_t i = 0; i < n; i++) ck_assert_float_eq(got[i], -3.0f * x[i]); /* unchanged */
  free(got);
  ck_assert_ocal(ocal_binary_scalar(OCAL_BINARY_MUL, bx, INFINITY, by));
  got = fetch(by);
  for (size_t i = 0; i < n; i++)
    if (x[i] != 0.0f) ck_assert(isinf(got[i]) && (got[i] > 0) == (-3.0f * x[i] > 0));
  free(got);
  /* The output has the buffer operand's shape, as ocal_binary's has the broadcast shape: the
   * same element count in another shape is refused, leading ones are not. */
  size_t s23[] = {2, 3}, s32[] = {3, 2}, s123[] = {1, 2, 3};
  const float six[6] = {1, 2, 3, 4, 5, 6};
  ocal_buffer m23 = make(OCAL_F32, 2, s23, six), m32 = make(OCAL_F32, 2, s32, six);
  ocal_buffer m123 = make(OCAL_F32, 3, s123, six), f6 = make1(OCAL_F32, 6, six);
  ck_assert_ocal_fails(ocal_binary_scalar(OCAL_BINARY_ADD, m23, 1.0, m32), OCAL_SHAPE_MISMATCH);
  ck_assert_msg(strstr(ocal_last_error(), "ocal_binary_scalar") != NULL &&
                    strstr(ocal_last_error(), "a has shape") != NULL,
                "%s", ocal_last_error());
  ck_assert_ocal_fails(ocal_scalar_binary(OCAL_BINARY_SUB, 1.0, m23, f6), OCAL_SHAPE_MISMATCH);
  ck_assert_msg(strstr(ocal_last_error(), "ocal_scalar_binary") != NULL &&
                    strstr(ocal_last_error(), "b has shape") != NULL,
                "%s", ocal_last_error());
  float back[6];
  ck_assert_ocal(ocal_buffer_read(m32, 0, 6, back, NULL));
  for (int k = 0; k < 6; k++) ck_assert_float_eq(back[k], six[k]); /* untouched */
  ck_assert_ocal(ocal_binary_scalar(OCAL_BINARY_ADD, m23, 1.0, m123));
  ck_assert_ocal(ocal_buffer_read(m123, 0, 6, back, NULL));
  for (int k = 0; k < 6; k++) ck_assert_float_eq(back[k], six[k] + 1.0f);
  ocal_buffer_release(m23);
  ocal_buffer_release(m32);
  ocal_buffer_release(m123);
  ocal_buffer_release(f6);
  ocal_buffer_release(bi);
  ocal_buffer_release(bx);
  ocal_buffer_release(by);
  ocal_buffer_release(bm);
}
END_TEST

START_TEST(test_where_broadcast) {
  size_t sm[] = {6, 5}, sa[] = {6, 5}, sb[] = {5};
  uint8_t m[30];
  float a[30], b[5];
  fixture_random_bytes(m, sizeof m, 9);
  for (int i = 0; i < 30; i++) a[i] = (float)i + 0.5f;
  for (int i = 0; i < 5; i++) b[i] = -(float)i;
  ocal_buffer bm = make(OCAL_U8, 2, sm, m), ba = make(OCAL_F32, 2, sa, a);
  ocal_buffer bb = make(OCAL_F32, 1, sb, b), by;
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 2, sa, &by));
  ck_assert_ocal(ocal_where(bm, ba, bb, by));
  float *got = fetch(by);
  for (int i = 0; i < 30; i++) ck_assert_float_eq(got[i], m[i] ? a[i] : b[i % 5]);
  free(got);
  ck_assert_ocal_fails(ocal_where(ba, ba, ba, by), OCAL_TYPE_MISMATCH); /* mask not u8 */
  ocal_buffer_release(bm);
  ocal_buffer_release(ba);
  ocal_buffer_release(bb);
  ocal_buffer_release(by);
}
END_TEST

START_TEST(test_axpy_axpby) {
  const size_t n = 1000003;
  float *x = malloc(n * 4), *y = malloc(n * 4);
  double *tmp = malloc(n * 8);
  random_doubles(tmp, n, -1, 1, 21);
  to_type(tmp, n, OCAL_F32, x);
  random_doubles(tmp, n, -1, 1, 22);
  to_type(tmp, n, OCAL_F32, y);
  ocal_buffer bx = make1(OCAL_F32, n, x), by = make1(OCAL_F32, n, y);
  ck_assert_ocal(ocal_axpy(2.5, bx, by));
  float *got = fetch(by);
  for (size_t i = 0; i < n; i++)
    ck_assert_msg(fabsf(got[i] - (2.5f * x[i] + y[i])) <= 1e-6f, "axpy at %zu", i);
  free(got);
  ck_assert_ocal(ocal_axpby(-1.0, bx, 0.5, by));
  got = fetch(by);
  for (size_t i = 0; i < n; i++)
    ck_assert_msg(fabsf(got[i] - (-x[i] + 0.5f * (2.5f * x[i] + y[i]))) <= 1e-6f, "axpby at %zu",
                  i);
  free(got);
  int32_t xi[5] = {1, -2, 3, -4, 5}, yi[5] = {10, 20, 30, 40, 50};
  ocal_buffer bxi = make1(OCAL_I32, 5, xi), byi = make1(OCAL_I32, 5, yi);
  ck_assert_ocal(ocal_axpby(3, bxi, -2, byi));
  int32_t *gi = fetch(byi);
  for (int i = 0; i < 5; i++) ck_assert_int_eq(gi[i], 3 * xi[i] - 2 * yi[i]);
  free(gi);
  ck_assert_ocal_fails(ocal_axpy(0.5, bxi, byi), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_axpy(1, bx, byi), OCAL_TYPE_MISMATCH);
  ocal_buffer_release(bx);
  ocal_buffer_release(by);
  ocal_buffer_release(bxi);
  ocal_buffer_release(byi);
  free(x);
  free(y);
  free(tmp);
}
END_TEST

/* ---- cast ------------------------------------------------------------------------------- */

/* The documented conversion of one value: float to integer truncates and saturates (NaN
 * gives 0); integer to integer wraps; everything else rounds as C does. */
static void cast_ref(const void *src, ocal_dtype s, size_t i, void *dst, ocal_dtype d) {
  if (ocal_dtype_size(s) == 0 || ocal_dtype_size(d) == 0) ck_abort_msg("bad type");
  int sf = s == OCAL_F32 || s == OCAL_F64, df = d == OCAL_F32 || d == OCAL_F64;
  if (sf && !df) {
    double v = get(src, s, i), lo, hi;
    switch (d) {
      case OCAL_I32: lo = INT32_MIN; hi = INT32_MAX; break;
      case OCAL_U32: lo = 0; hi = UINT32_MAX; break;
      case OCAL_I64: lo = -9223372036854775808.0; hi = 9223372036854775807.0; break;
      case OCAL_U64: lo = 0; hi = 18446744073709551615.0; break;
      default: lo = 0; hi = 255; break;
    }
    v = isnan(v) ? 0 : trunc(v);
    if (v <= lo) v = lo;
    if (v >= hi) {
      /* 2^63 and 2^64 are not integers of their types: store the maximum directly. */
      switch (d) {
        case OCAL_I64: ((int64_t *)dst)[i] = INT64_MAX; return;
        case OCAL_U64: ((uint64_t *)dst)[i] = UINT64_MAX; return;
        default: v = hi; break;
      }
    }
    to_type(&v, 1, d, (char *)dst + i * ocal_dtype_size(d));
    return;
  }
  /* Read the source exactly (64-bit integers do not fit a double). */
  int64_t sv = 0;
  uint64_t uv = 0;
  double fv = 0;
  switch (s) {
    case OCAL_I32: sv = ((const int32_t *)src)[i]; uv = (uint64_t)sv; fv = (double)sv; break;
    case OCAL_U32: uv = ((const uint32_t *)src)[i]; sv = (int64_t)uv; fv = (double)uv; break;
    case OCAL_I64: sv = ((const int64_t *)src)[i]; uv = (uint64_t)sv; break;
    case OCAL_U64: uv = ((const uint64_t *)src)[i]; sv = (int64_t)uv; break;
    case OCAL_U8: uv = ((const uint8_t *)src)[i]; sv = (int64_t)uv; fv = (double)uv; break;
    default: fv = get(src, s, i); break;
  }
  switch (d) {
    case OCAL_F32:
      ((float *)dst)[i] = s == OCAL_I64 ? (float)sv : s == OCAL_U64 ? (float)uv : (float)fv;
      break;
    case OCAL_F64:
      ((double *)dst)[i] = s == OCAL_I64 ? (double)sv : s == OCAL_U64 ? (double)uv : fv;
      break;
    case OCAL_I32: ((int32_t *)dst)[i] = (int32_t)(uint32_t)uv; break;
    case OCAL_U32: ((uint32_t *)dst)[i] = (uint32_t)uv; break;
    case OCAL_I64: ((int64_t *)dst)[i] = (int64_t)uv; break;
    case OCAL_U64: ((uint64_t *)dst)[i] = uv; break;
    default: ((uint8_t *)dst)[i] = (uint8_t)uv; break;
  }
}

START_TEST(test_cast_every_pair) {
  static const ocal_dtype types[] = {OCAL_F32, OCAL_F64, OCAL_I32, OCAL_U32,
                                     OCAL_I64, OCAL_U64, OCAL_U8};
  const size_t n = 257;
  int fp64 = fixture_has_fp64();
  for (int si = 0; si < 7; si++) {
    ocal_dtype s = types[si];
    if (s == OCAL_F64 && !fp64) continue;
    size_t ss = ocal_dtype_size(s);
    unsigned char *src = malloc(n * ss);
    if (s == OCAL_F32 || s == OCAL_F64) {
      double v[257];
      random_doubles(v, n, -400, 400, 31 + si);
      v[0] = NAN, v[1] = 1e30, v[2] = -1e30, v[3] = -0.75, v[4] = 255.9, v[5] = 4294967296.5;
      to_type(v, n, s, src);
    } else {
      fixture_random_bytes(src, n * ss, 41 + si);
    }
    ocal_buffer bs = make1(s, n, src);
    for (int di = 0; di < 7; di++) {
      ocal_dtype d = types[di];
      if (d == OCAL_F64 && !fp64) continue;
      size_t ds = ocal_dtype_size(d);
      unsigned char *want = malloc(n * ds);
      for (size_t i = 0; i < n; i++) cast_ref(src, s, i, want, d);
      ocal_buffer bd = empty1(d, n);
      ck_assert_ocal(ocal_cast(bs, bd));
      void *got = fetch(bd);
      char what[64];
      snprintf(what, sizeof what, "cast %s->%s", ocal_dtype_name(s), ocal_dtype_name(d));
      expect_exact(what, got, want, n * ds);
      free(got);
      free(want);
      ocal_buffer_release(bd);
    }
    ocal_buffer_release(bs);
    free(src);
  }
}
END_TEST

/* ---- sequences and random numbers --------------------------------------------------------- */

START_TEST(test_arange_linspace) {
  const size_t n = 1001;
  ocal_buffer f = empty1(OCAL_F32, n), i = empty1(OCAL_I32, n), u8 = empty1(OCAL_U8, 7);
  uint8_t *gu8;
  ck_assert_ocal(ocal_arange(-3.0, 0.25, f));
  float *gf = fetch(f);
  for (size_t k = 0; k < n; k++) ck_assert_float_eq(gf[k], (float)(-3.0 + 0.25 * (double)k));
  free(gf);
  ck_assert_ocal(ocal_arange(100, -7, i));
  int32_t *gi = fetch(i);
  for (size_t k = 0; k < n; k++) ck_assert_int_eq(gi[k], 100 - 7 * (int32_t)k);
  free(gi);
  ck_assert_ocal_fails(ocal_arange(0.5, 1, i), OCAL_INVALID_ARGUMENT);
  /* values out's type cannot hold are refused, not wrapped */
  ck_assert_ocal_fails(ocal_arange(3e9, 1, i), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_arange(2147483647.0 - 999, 1, i), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_arange(-1, 1, u8), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_linspace(0, 300, u8), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "range of u8"));
  ck_assert_ocal(ocal_linspace(0, 2.5, u8)); /* ends need not be whole: values truncate */
  gu8 = fetch(u8);
  for (int k = 0; k < 7; k++) ck_assert_uint_eq(gu8[k], (unsigned)(2.5 * k / 6));
  free(gu8);
  ck_assert_ocal(ocal_arange(6, -1, u8)); /* a negative step counting down stays in range */
  gu8 = fetch(u8);
  for (int k = 0; k < 7; k++) ck_assert_uint_eq(gu8[k], (unsigned)(6 - k));
  free(gu8);
  ck_assert_ocal(ocal_linspace(-1.0, 2.0, f));
  gf = fetch(f);
  for (size_t k = 0; k < n; k++)
    ck_assert_msg(fabsf(gf[k] - (float)(-1.0 + 3.0 * (double)k / (double)(n - 1))) <= 1e-6f,
                  "linspace at %zu: %g", k, gf[k]);
  ck_assert_float_eq(gf[0], -1.0f);
  ck_assert_float_eq(gf[n - 1], 2.0f);
  free(gf);
  ck_assert_ocal(ocal_linspace(0, 6, u8));
  uint8_t *gu = fetch(u8);
  for (int k = 0; k < 7; k++) ck_assert_uint_eq(gu[k], (unsigned)k);
  free(gu);
  ck_assert_ocal_fails(ocal_linspace(0, INFINITY, f), OCAL_INVALID_ARGUMENT);
  ocal_buffer_release(f);
  ocal_buffer_release(i);
  ocal_buffer_release(u8);
}
END_TEST

/* Philox-4x32-10 on the host, the reference for the device's stream. */
static void philox(uint32_t c[4], uint32_t k0, uint32_t k1) {
  for (int r = 0; r < 10; r++) {
    if (r > 0) k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
    uint64_t p0 = (uint64_t)0xD2511F53u * c[0], p1 = (uint64_t)0xCD9E8D57u * c[2];
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c[1] ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c[3] ^ k1;
    c[0] = n0, c[1] = (uint32_t)p1, c[2] = n2, c[3] = (uint32_t)p0;
  }
}

/* An integer arange takes every start and step whose values fit out's type: a u64 start from
 * 2^63 on (beyond the long the kernel adds in) was refused as "not a whole number". A start
 * that is whole but out of range is refused with a message that says so. */
START_TEST(test_arange_u64_beyond_i64) {
  ocal_buffer u = empty1(OCAL_U64, 3);
  ck_assert_ocal(ocal_arange(1e19, 1, u));
  uint64_t *got = fetch(u);
  for (int k = 0; k < 3; k++) ck_assert_uint_eq(got[k], 10000000000000000000ull + (uint64_t)k);
  free(got);
  ck_assert_ocal(ocal_arange(18446744073709549568.0, -4e18, u)); /* 2^64 - 2048, counting down */
  got = fetch(u);
  ck_assert_uint_eq(got[0], 18446744073709549568ull);
  ck_assert_uint_eq(got[1], 14446744073709549568ull);
  ck_assert_uint_eq(got[2], 10446744073709549568ull);
  free(got);
  ck_assert_ocal_fails(ocal_arange(0, 1e19, u), OCAL_INVALID_ARGUMENT); /* 2e19 does not fit */
  ck_assert_msg(strstr(ocal_last_error(), "range") != NULL, "%s", ocal_last_error());
  ocal_buffer i = empty1(OCAL_I64, 2);
  ck_assert_ocal_fails(ocal_arange(9223372036854775808.0, 0, i), OCAL_INVALID_ARGUMENT);
  ck_assert_msg(strstr(ocal_last_error(), "range") != NULL, "%s", ocal_last_error());
  ck_assert_ocal_fails(ocal_arange(0.5, 1, i), OCAL_INVALID_ARGUMENT);
  ck_assert_msg(strstr(ocal_last_error(), "whole") != NULL, "%s", ocal_last_error());
  ck_assert_ocal(ocal_arange(-9223372036854775808.0, 9223372036854775808.0, i)); /* MIN, 0 */
  int64_t *gi = fetch(i);
  ck_assert(gi[0] == INT64_MIN && gi[1] == 0);
  free(gi);
  ocal_buffer_release(i);
  ocal_buffer_release(u);
}
END_TEST

/* An integer arange is judged in exact integer arithmetic: near 2^63 and 2^64 the last value
 * rounded in double, so a sequence ending just inside the range was refused and one ending
 * just below INT64_MIN was taken (and wrapped). Starts are exact doubles (multiples of 1024
 * or 2048 there). */
START_TEST(test_arange_int64_ends_exact) {
  const int64_t top = INT64_MAX - 1023; /* 2^63 - 1024 */
  ocal_buffer i = empty1(OCAL_I64, 1000);
  ck_assert_ocal(ocal_arange((double)top, 1, i)); /* ends at 2^63 - 25 */
  int64_t *gi = fetch(i);
  for (int64_t k = 0; k < 1000; k++) ck_assert(gi[k] == top + k);
  free(gi);
  ocal_buffer_release(i);
  i = empty1(OCAL_I64, 1024);
  ck_assert_ocal(ocal_arange((double)top, 1, i)); /* ends at INT64_MAX itself */
  gi = fetch(i);
  ck_assert(gi[0] == top && gi[1023] == INT64_MAX);
  free(gi);
  ocal_buffer_release(i);
  i = empty1(OCAL_I64, 1025);
  ck_assert_ocal_fails(ocal_arange((double)top, 1, i), OCAL_INVALID_ARGUMENT); /* 2^63 */
  ck_assert_msg(strstr(ocal_last_error(), "ocal_arange") &&
                    strstr(ocal_last_error(), "9223372036854775808") &&
                    strstr(ocal_last_error(), "i64"),
                "%s", ocal_last_error());
  ocal_buffer_release(i);
  /* Counting down past INT64_MIN by one: -2^63 - 1 rounded to -2^63 in double. */
  i = empty1(OCAL_I64, 1026);
  ck_assert_ocal_fails(ocal_arange((double)(INT64_MIN + 1024), -1, i), OCAL_INVALID_ARGUMENT);
  ck_assert_msg(strstr(ocal_last_error(), "-9223372036854775809"), "%s", ocal_last_error());
  ocal_buffer_release(i);
  i = empty1(OCAL_I64, 1025);
  ck_assert_ocal(ocal_arange((double)(INT64_MIN + 1024), -1, i)); /* ends at INT64_MIN */
  gi = fetch(i);
  ck_assert(gi[0] == INT64_MIN + 1024 && gi[1024] == INT64_MIN);
  free(gi);
  ocal_buffer_release(i);

  const uint64_t utop = UINT64_MAX - 2047; /* 2^64 - 2048 */
  ocal_buffer u = empty1(OCAL_U64, 2000);
  ck_assert_ocal(ocal_arange((double)utop, 1, u)); /* ends at 2^64 - 49 */
  uint64_t *gu = fetch(u);
  for (uint64_t k = 0; k < 2000; k++) ck_assert(gu[k] == utop + k);
  free(gu);
  ocal_buffer_release(u);
  u = empty1(OCAL_U64, 2048);
  ck_assert_ocal(ocal_arange((double)utop, 1, u)); /* ends at UINT64_MAX */
  gu = fetch(u);
  ck_assert(gu[2047] == UINT64_MAX);
  free(gu);
  ocal_buffer_release(u);
  u = empty1(OCAL_U64, 2049);
  ck_assert_ocal_fails(ocal_arange((double)utop, 1, u), OCAL_INVALID_ARGUMENT); /* 2^64 */
  ck_assert_msg(strstr(ocal_last_error(), "18446744073709551616") &&
                    strstr(ocal_last_error(), "u64"),
                "%s", ocal_last_error());
  /* A step whose product with numel - 1 leaves 64 bits. */
  ck_assert_ocal_fails(ocal_arange(0, 1e16, u), OCAL_INVALID_ARGUMENT);
  ck_assert_msg(strstr(ocal_last_error(), "step"), "%s", ocal_last_error());
  ocal_buffer_release(u);
}
END_TEST

/* A floating-point arange whose values leave f32's range was filled with infinities without
 * a word; on a context without fp64 it is computed in f32, so (numel - 1) * step must stay
 * in range too. */
START_TEST(test_arange_f32_overflow_refused) {
  ocal_buffer f = empty1(OCAL_F32, 7);
  /* computed in f64 where the context has it: the values themselves do not fit f32 */
  ck_assert_ocal_fails(ocal_arange(3e38, 1e38, f), OCAL_INVALID_ARGUMENT);
  ck_assert_msg(strstr(ocal_last_error(), "f32"), "%s", ocal_last_error());
  ocal_buffer_release(f);
  setenv("OCAL_FP64", "0", 1);
  fixture_reopen();
  unsetenv("OCAL_FP64");
  f = empty1(OCAL_F32, 7);
  ck_assert_ocal_fails(ocal_arange(3e38, 1e38, f), OCAL_INVALID_ARGUMENT);
  ck_assert_msg(strstr(ocal_last_error(), "ocal_arange") && strstr(ocal_last_error(), "f32"),
                "%s", ocal_last_error());
  ck_assert_ocal_fails(ocal_arange(3e38, -1e38, f), OCAL_INVALID_ARGUMENT); /* 6e38 between */
  ck_assert_msg(strstr(ocal_last_error(), "step"), "%s", ocal_last_error());
  ck_assert_ocal(ocal_arange(-3e38, 5e37, f)); /* 6 * step = 3e38 still fits */
  float *gf = fetch(f);
  for (int k = 0; k < 7; k++)
    ck_assert_msg(isfinite(gf[k]) && fabs(gf[k] - (-3e38 + 5e37 * k)) <= 1e32, "f32[%d]: %g", k,
                  gf[k]);
  free(gf);
  ocal_buffer_release(f);
}
END_TEST

/* linspace between bounds whose difference exceeds the type's range (stop - start overflows):
 * the values were NaN and inf; they are the evenly spaced finite values, the ends exact. Run
 * on f64 where the context has it, and on f32 on a context without fp64 (computed in f32). */
START_TEST(test_linspace_span_beyond_range) {
  if (fixture_has_fp64()) {
    ocal_buffer d = empty1(OCAL_F64, 3), d2 = empty1(OCAL_F64, 2);
    ck_assert_ocal(ocal_linspace(-1.5e308, 1.5e308, d));
    double *g = fetch(d);
    ck_assert_msg(g[0] == -1.5e308 && g[1] == 0 && g[2] == 1.5e308, "f64: %g %g %g", g[0], g[1],
                  g[2]);
    free(g);
    ck_assert_ocal(ocal_linspace(DBL_MAX, -DBL_MAX, d2));
    g = fetch(d2);
    ck_assert_msg(g[0] == DBL_MAX && g[1] == -DBL_MAX, "f64 n=2: %g %g", g[0], g[1]);
    free(g);
    ocal_buffer_release(d);
    ocal_buffer_release(d2);
  }
  setenv("OCAL_FP64", "0", 1);
  fixture_reopen();
  unsetenv("OCAL_FP64");
  ocal_buffer f = empty1(OCAL_F32, 5);
  ck_assert_ocal(ocal_linspace(-3e38, 3e38, f));
  float *gf = fetch(f);
  for (int k = 0; k < 5; k++)
    ck_assert_msg(isfinite(gf[k]) && fabs(gf[k] - (-3e38 + 1.5e38 * k)) <= 1e32, "f32[%d]: %g", k,
                  gf[k]);
  ck_assert_float_eq(gf[0], -3e38f);
  ck_assert_float_eq(gf[4], 3e38f);
  free(gf);
  ocal_buffer_release(f);
}
END_TEST

START_TEST(test_philox_known_answer) {
  /* The published known-answer vectors of Random123 for philox4x32-10. */
  uint32_t c[4] = {0, 0, 0, 0};
  philox(c, 0, 0);
  ck_assert_uint_eq(c[0], 0x6627e8d5u);
  ck_assert_uint_eq(c[1], 0xe169c58du);
  ck_assert_uint_eq(c[2], 0xbc57ac4cu);
  ck_assert_uint_eq(c[3], 0x9b00dbd8u);
  uint32_t d[4] = {0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u};
  philox(d, 0xa4093822u, 0x299f31d0u);
  ck_assert_uint_eq(d[0], 0xd16cfe09u);
  ck_assert_uint_eq(d[1], 0x94fdccebu);
  ck_assert_uint_eq(d[2], 0x5001e420u);
  ck_assert_uint_eq(d[3], 0x24126ea1u);
}
END_TEST

START_TEST(test_random_uniform_matches_host_stream) {
  const size_t n = 100003;
  const uint64_t seed = 0x0123456789abcdefull, offset = 5; /* an offset that is not a multiple of 4 */
  ocal_buffer b = empty1(OCAL_F32, n);
  ck_assert_ocal(ocal_random_uniform(seed, offset, -2.0, 3.0, b));
  float *got = fetch(b);
  double mean = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t e = offset + i;
    uint32_t c[4] = {(uint32_t)(e / 4), (uint32_t)((e / 4) >> 32), 0, 0};
    philox(c, (uint32_t)seed, (uint32_t)(seed >> 32));
    float u = (float)(c[e % 4] >> 8) * 0x1.0p-24f;
    float want = -2.0f + 5.0f * u;
    ck_assert_msg(got[i] == want, "uniform[%zu]: got %.9g want %.9g", i, got[i], want);
    mean += got[i];
  }
  mean /= (double)n;
  ck_assert_msg(fabs(mean - 0.5) < 0.03, "mean %g", mean);
  /* The same stream split in two calls gives the same numbers. */
  size_t half = n / 2, rest = n - half;
  ocal_buffer v1, v2;
  ck_assert_ocal(ocal_buffer_view(b, 0, 1, &half, &v1));
  ck_assert_ocal(ocal_buffer_view(b, half, 1, &rest, &v2));
  ck_assert_ocal(ocal_random_uniform(seed, offset + half, -2.0, 3.0, v2));
  ck_assert_ocal(ocal_random_uniform(seed, offset, -2.0, 3.0, v1));
  float *again = fetch(b);
  expect_exact("split stream", again, got, n * sizeof(float));
  free(again);
  free(got);
  ocal_buffer_release(v1);
  ocal_buffer_release(v2);
  ocal_buffer_release(b);
}
END_TEST

/* Uniform draws stay inside [low, high) for every float type: a draw whose f32 sum low + (high
 * - low) * u rounds up to high (u = 1 - 2^-24 over [1, 2)), a high that f32 cannot hold, and
 * bounds whose difference exceeds the type's range (which made every draw inf); bounds beyond
 * f32's range are refused as for every scalar of ocal/ops.h. */
START_TEST(test_random_uniform_stays_below_high) {
  /* The first element of seed 3's stream whose word is all ones in its top 24 bits. */
  uint64_t e = 0;
  for (;; e++) {
    uint32_t c[4] = {(uint32_t)(e / 4), (uint32_t)((e / 4) >> 32), 0, 0};
    philox(c, 3, 0);
    if ((c[e % 4] >> 8) == 0xffffffu) break;
  }
  ocal_buffer b = empty1(OCAL_F32, 1);
  ck_assert_ocal(ocal_random_uniform(3, e, 1.0, 2.0, b));
  float *got = fetch(b);
  ck_assert_msg(got[0] >= 1.0f && got[0] < 2.0f, "uniform [1, 2) at %llu gave %.9g",
                (unsigned long long)e, got[0]);
  free(got);
  ocal_buffer_release(b);
  const size_t n = 1001;
  const double bounds[][2] = {{1.0, 1.0 + 1e-7}, {-3.4e38, 3.4e38}, {-FLT_MAX, FLT_MAX},
                              {1.0 + 1e-9, 1.5}};
  b = empty1(OCAL_F32, n);
  for (size_t t = 0; t < sizeof bounds / sizeof bounds[0]; t++) {
    double low = bounds[t][0], high = bounds[t][1];
    ck_assert_ocal(ocal_random_uniform(11, 7, low, high, b));
    got = fetch(b);
    for (size_t k = 0; k < n; k++)
      ck_assert_msg((double)got[k] >= low && (double)got[k] < high,
                    "uniform [%.17g, %.17g) gave %.9g at %zu", low, high, got[k], k);
    free(got);
  }
  ck_assert_ocal_fails(ocal_random_uniform(1, 0, 1.0 + 1e-9, 1.0 + 2e-9, b),
                       OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_random_uniform(1, 0, -1e39, 1.0, b), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_random_normal(1, 0, 1e39, 1.0, b), OCAL_INVALID_ARGUMENT);
  ck_assert_msg(strstr(ocal_last_error(), "ocal_random_normal") != NULL, "%s", ocal_last_error());
  ocal_buffer_release(b);
  if (fixture_has_fp64()) {
    ocal_buffer d = empty1(OCAL_F64, n);
    ck_assert_ocal(ocal_random_uniform(11, 7, -1.7e308, 1.7e308, d));
    double *gd = fetch(d);
    for (size_t k = 0; k < n; k++)
      ck_assert_msg(gd[k] >= -1.7e308 && gd[k] < 1.7e308, "f64 uniform gave %g at %zu", gd[k], k);
    free(gd);
    ocal_buffer_release(d);
  }
}
END_TEST

START_TEST(test_random_normal_moments_and_stream) {
  const size_t n = 200001;
  ocal_buffer b = empty1(OCAL_F32, n);
  ck_assert_ocal(ocal_random_normal(42, 0, 1.5, 2.0, b));
  float *got = fetch(b);
  double m = 0, v = 0;
  for (size_t i = 0; i < n; i++) m += got[i];
  m /= (double)n;
  for (size_t i = 0; i < n; i++) v += (got[i] - m) * (got[i] - m);
  v /= (double)(n - 1);
  ck_assert_msg(fabs(m - 1.5) < 0.03 && fabs(v - 4.0) < 0.08, "mean %g variance %g", m, v);
  /* Element 6 (counter 1, pair 1, cosine) against the host's Box-Muller. */
  uint32_t c[4] = {1, 0, 0, 0};
  philox(c, 42, 0);
  double u1 = ((c[2] >> 8) + 1) * 0x1.0p-24, u2 = (c[3] >> 8) * 0x1.0p-24;
  double z = sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
  ck_assert_msg(fabs(got[6] - (1.5 + 2.0 * z)) < 1e-4, "normal[6] %g vs %g", got[6], 1.5 + 2 * z);
  free(got);
  ck_assert_ocal_fails(ocal_random_normal(1, 0, 0, -1, b), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_random_uniform(1, 0, 1, 1, b), OCAL_INVALID_ARGUMENT);
  ocal_buffer i = empty1(OCAL_I32, 3);
  ck_assert_ocal_fails(ocal_random_uniform(1, 0, 0, 1, i), OCAL_TYPE_MISMATCH);
  ocal_buffer_release(i);
  if (fixture_has_fp64()) {
    ocal_buffer d = empty1(OCAL_F64, 1001);
    ck_assert_ocal(ocal_random_uniform(7, 3, 0, 1, d));
    double *gd = fetch(d);
    for (size_t k = 0; k < 1001; k++) {
      uint64_t e = 3 + k;
      uint32_t w[4] = {(uint32_t)(e / 2), 0, 0, 0};
      philox(w, 7, 0);
      uint32_t hi = w[2 * (e % 2)], lo = w[2 * (e % 2) + 1];
      double want = (double)((((uint64_t)hi) << 21) ^ (lo >> 11)) * 0x1.0p-53;
      ck_assert_msg(gd[k] == want, "f64 uniform[%zu]", k);
    }
    free(gd);
    ck_assert_ocal(ocal_random_normal(7, 0, 0, 1, d));
    ocal_buffer_release(d);
  }
  ocal_buffer_release(b);
}
END_TEST

int main(void) {
  Suite *s = suite_create("elementwise");
  TCase *tc = fixture_tcase("unary");
  tcase_add_test(tc, test_unary_f32_all_ops);
  tcase_add_test(tc, test_unary_f64_all_ops);
  tcase_add_test(tc, test_unary_integers);
  tcase_add_test(tc, test_unary_integer_input_float_output);
  tcase_add_test(tc, test_unary_errors);
  suite_add_tcase(s, tc);
  tc = fixture_tcase("binary");
  tcase_add_test(tc, test_binary_f32);
  tcase_add_test(tc, test_binary_f64);
  tcase_add_test(tc, test_binary_integers);
  tcase_add_test(tc, test_broadcast_shapes);
  tcase_add_test(tc, test_broadcast_errors);
  tcase_add_test(tc, test_scalar_on_either_side);
  tcase_add_test(tc, test_where_broadcast);
  tcase_add_test(tc, test_axpy_axpby);
  suite_add_tcase(s, tc);
  tc = fixture_tcase("conversions and generators");
  tcase_add_test(tc, test_cast_every_pair);
  tcase_add_test(tc, test_arange_linspace);
  tcase_add_test(tc, test_arange_u64_beyond_i64);
  tcase_add_test(tc, test_arange_int64_ends_exact);
  tcase_add_test(tc, test_arange_f32_overflow_refused);
  tcase_add_test(tc, test_linspace_span_beyond_range);
  tcase_add_test(tc, test_philox_known_answer);
  tcase_add_test(tc, test_random_uniform_matches_host_stream);
  tcase_add_test(tc, test_random_normal_moments_and_stream);
  tcase_add_test(tc, test_random_uniform_stays_below_high);
  suite_add_tcase(s, tc);
  return fixture_run(s);
}
