/* ocal tests — f16 and bf16 buffers: the conversions (host and device, bit-exact over every
 * 16-bit pattern, ties, subnormals, infinities, NaN, double rounding from f64 and 64-bit
 * integers), buffers (fill, transfers, copy, views), elementwise operations and their
 * broadcasts, casts to and from every type, reductions, softmax, cross-entropy and GEMM, each
 * against a double-precision host reference computed from the rounded inputs, with a
 * tolerance set by the output format's precision; and the calls that do not take them.
 *
 * The host reference conversions here are written independently of the library's (double
 * arithmetic and rint instead of integer bit manipulation), so that each checks the other. */
#include "fixture.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPECT(cond, ...)                   \
  do {                                      \
    if (!(cond)) ck_abort_msg(__VA_ARGS__); \
  } while (0)

static const ocal_dtype half_types[] = {OCAL_F16, OCAL_BF16};

/* ---- reference conversions ------------------------------------------------------------- */

/* Mantissa bits (without the implicit one), smallest normal exponent, largest exponent. */
static int fmt_mant(ocal_dtype d) { return d == OCAL_F16 ? 10 : 7; }
static int fmt_emin(ocal_dtype d) { return d == OCAL_F16 ? -14 : -126; }
static uint16_t fmt_inf(ocal_dtype d) { return d == OCAL_F16 ? 0x7c00 : 0x7f80; }

static double ref_decode(ocal_dtype d, uint16_t h) {
  int mb = fmt_mant(d), ebits = d == OCAL_F16 ? 5 : 8, bias = d == OCAL_F16 ? 15 : 127;
  int e = (h >> mb) & ((1 << ebits) - 1), m = h & ((1 << mb) - 1);
  double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (e == (1 << ebits) - 1) return m ? NAN : sign * INFINITY;
  if (e == 0) return sign * ldexp(m, 1 - bias - mb);
  return sign * ldexp((1 << mb) + m, e - bias - mb);
}

static int is_nan_bits(ocal_dtype d, uint16_t h) {
  return (h & 0x7fff) > fmt_inf(d);
}

/* Round to nearest even by scaling to an integer count of the format's quantum at v's
 * exponent: the bits are then ((e - emin) << mant) + count, a carry included. */
static uint16_t ref_encode(ocal_dtype d, double v) {
  if (isnan(v)) return (uint16_t)(fmt_inf(d) | (1u << (fmt_mant(d) - 1)) | (signbit(v) ? 0x8000u : 0u));
  uint16_t sign = signbit(v) ? 0x8000 : 0;
  double a = fabs(v);
  if (a == 0) return sign;
  int e;
  frexp(a, &e);
  e -= 1; /* a in [2^e, 2^(e+1)) */
  if (e < fmt_emin(d)) e = fmt_emin(d);
  if (e > 200) return (uint16_t)(sign | fmt_inf(d));
  double r = rint(ldexp(a, fmt_mant(d) - e)); /* the default mode: ties to even */
  double bits = ldexp(e - fmt_emin(d), fmt_mant(d)) + r;
  if (bits >= fmt_inf(d)) return (uint16_t)(sign | fmt_inf(d));
  return (uint16_t)(sign | (uint16_t)bits);
}

/* Spacing of the format's values at |v|. */
static double fmt_ulp(ocal_dtype d, double v) {
  int e;
  double a = fabs(v);
  if (a == 0 || !isfinite(a)) return ldexp(1, fmt_emin(d) - fmt_mant(d));
  frexp(a, &e);
  e -= 1;
  if (e < fmt_emin(d)) e = fmt_emin(d);
  return ldexp(1, e - fmt_mant(d));
}

/* ---- buffers ---------------------------------------------------------------------------- */

static double rand_uniform(uint64_t *st, double lo, double hi) {
  return lo + (hi - lo) * ((double)(fixture_random(st) >> 11) / 9007199254740992.0);
}

/* A buffer of n half values drawn from [lo, hi), rounded; v receives the rounded values. The
 * buffer is a view at element offset `off` into a larger one (the vector paths depend on it). */
static ocal_buffer half_buffer(ocal_dtype d, int ndim, const size_t *shape, size_t off, double lo,
                               double hi, uint64_t seed, double *v) {
  size_t n = fixture_numel(ndim, shape);
  uint16_t *h = fixture_malloc((n + off + 3) * sizeof *h);
  uint64_t st = seed * 0x9e3779b97f4a7c15ull + 17;
  for (size_t i = 0; i < n + off + 3; i++) h[i] = ref_encode(d, rand_uniform(&st, lo, hi));
  for (size_t i = 0; i < n; i++) v[i] = ref_decode(d, h[off + i]);
  size_t all = n + off + 3;
  ocal_buffer base, view;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, d, 1, &all, h, &base));
  ck_assert_ocal(ocal_buffer_view(base, off, ndim, shape, &view));
  ck_assert_ocal(ocal_buffer_release(base));
  free(h);
  return view;
}

static ocal_buffer half_out(ocal_dtype d, int ndim, const size_t *shape, size_t off) {
  size_t n = fixture_numel(ndim, shape), all = n + off + 2;
  ocal_buffer base, view;
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, d, 1, &all, &base));
  uint16_t nan_bits = d == OCAL_F16 ? 0x7e00 : 0x7fc0; /* every output must be written */
  ck_assert_ocal(ocal_buffer_fill(base, &nan_bits));
  ck_assert_ocal(ocal_buffer_view(base, off, ndim, shape, &view));
  ck_assert_ocal(ocal_buffer_release(base));
  return view;
}

static uint16_t *read_bits(ocal_buffer b, size_t n) {
  uint16_t *h = fixture_malloc((n ? n : 1) * sizeof *h);
  ck_assert_ocal(ocal_buffer_read(b, 0, n, h, NULL));
  return h;
}

/* Checks a half result against the exact reference: equal to it rounded, or within half a
 * unit of the format plus the f32 computation's error (a result next to a tie may round
 * either way). */
static void check_close(ocal_dtype d, const uint16_t *got, const double *ref, size_t n,
                        double rel, double abs_tol, const char *what) {
  for (size_t i = 0; i < n; i++) {
    double g = ref_decode(d, got[i]), r = ref[i];
    if (isnan(r)) {
      EXPECT(is_nan_bits(d, got[i]), "%s (%s) [%zu]: got %g (0x%04x), want NaN", what,
             ocal_dtype_name(d), i, g, got[i]);
      continue;
    }
    uint16_t want = ref_encode(d, r);
    if (got[i] == want) continue;
    double tol = 0.5 * fmt_ulp(d, r) + rel * fabs(r) + abs_tol;
    EXPECT(!is_nan_bits(d, got[i]) && isfinite(g) && fabs(g - r) <= tol,
           "%s (%s) [%zu]: got %.9g (0x%04x), want %.9g (0x%04x), tolerance %.3g", what,
           ocal_dtype_name(d), i, g, got[i], r, want, tol);
  }
}

/* ---- conversions ------------------------------------------------------------------------- */

START_TEST(test_names_and_sizes) {
  ck_assert_str_eq(ocal_dtype_name(OCAL_F16), "f16");
  ck_assert_str_eq(ocal_dtype_name(OCAL_BF16), "bf16");
  ck_assert_uint_eq(ocal_dtype_size(OCAL_F16), 2);
  ck_assert_uint_eq(ocal_dtype_size(OCAL_BF16), 2);
  ocal_dtype d;
  ck_assert_ocal(ocal_dtype_from_name("BF16", &d));
  ck_assert_int_eq(d, OCAL_BF16);
  ck_assert_ocal(ocal_dtype_from_name("f16", &d));
  ck_assert_int_eq(d, OCAL_F16);
  /* The older types kept their values (ABI). */
  ck_assert_int_eq(OCAL_C64, 8);
  ck_assert_int_eq(OCAL_F16, 9);
  ck_assert_int_eq(OCAL_BF16, 10);
  float f = 1;
  uint16_t h = 0;
  ck_assert_ocal_fails(ocal_half_encode(OCAL_F32, &f, &h, 1), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_half_encode"));
  ck_assert_ocal_fails(ocal_half_decode(OCAL_F16, NULL, &f, 1), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal(ocal_half_decode(OCAL_F16, NULL, NULL, 0));
}
END_TEST

/* The f32 inputs of the encoding tests: every finite value of the format, the midpoints to
 * its neighbour (ties), one f32 step either side of them, and special values. */
static float *encode_inputs(ocal_dtype d, size_t *count) {
  size_t cap = 65536 * 4 + 64, n = 0;
  float *f = fixture_malloc(cap * sizeof *f);
  for (uint32_t p = 0; p < 65536; p++) {
    uint16_t h = (uint16_t)p;
    if ((h & 0x7fff) >= fmt_inf(d)) continue;
    double v = ref_decode(d, h), next = ref_decode(d, (uint16_t)(h + 1)); /* away from 0 */
    f[n++] = (float)v;
    if ((h & 0x7fff) + 1 == fmt_inf(d)) next = v + copysign(fmt_ulp(d, v), v); /* overflow */
    float mid = (float)((v + next) / 2);
    EXPECT((double)mid == (v + next) / 2, "midpoint not exact in f32");
    f[n++] = mid;
    f[n++] = nextafterf(mid, 0);
    f[n++] = nextafterf(mid, mid > 0 ? INFINITY : -INFINITY);
  }
  const float specials[] = {INFINITY, -INFINITY, NAN, -NAN, 3.4028234663852886e38f,
                            -3.4028234663852886e38f, 1e-45f, -1e-45f, 1.17549435e-38f,
                            65504.0f, 65519.996f, 65520.0f, 5.9604645e-8f, 2.9802322e-8f,
                            2.9802326e-8f, 0.0f, -0.0f};
  for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++) f[n++] = specials[i];
  *count = n;
  return f;
}

/* keeps_nan_sign: ocal_half_encode keeps a NaN's sign; a device may not (OpenCL leaves it
 * to the device: NVIDIA's vstore_half gives 0x7fff for -NaN), so there any NaN is right. */
static void check_encoded(ocal_dtype d, const float *in, const uint16_t *got, size_t n,
                          const char *what, int keeps_nan_sign) {
  for (size_t i = 0; i < n; i++) {
    uint16_t want = ref_encode(d, in[i]);
    if (isnan(in[i])) {
      EXPECT(is_nan_bits(d, got[i]) &&
                 (!keeps_nan_sign || (got[i] & 0x8000) == (want & 0x8000)),
             "%s (%s): NaN gave 0x%04x", what, ocal_dtype_name(d), got[i]);
      continue;
    }
    EXPECT(got[i] == want, "%s (%s): %.9g gave 0x%04x, want 0x%04x", what, ocal_dtype_name(d),
           (double)in[i], got[i], want);
  }
}

static void check_decoded(ocal_dtype d, const uint16_t *in, const float *got, size_t n,
                          const char *what) {
  for (size_t i = 0; i < n; i++) {
    double want = ref_decode(d, in[i]);
    if (isnan(want)) {
      /* Any NaN: OpenCL leaves a NaN's sign and payload to the device (NVIDIA's vload_half
       * gives the positive canonical NaN for 0xfc01). */
      EXPECT(isnan(got[i]), "%s (%s): 0x%04x gave %g", what, ocal_dtype_name(d), in[i],
             (double)got[i]);
      continue;
    }
    EXPECT((double)got[i] == want && !signbit(got[i]) == !signbit(want),
           "%s (%s): 0x%04x gave %.9g, want %.9g", what, ocal_dtype_name(d), in[i],
           (double)got[i], want);
  }
}

START_TEST(test_conversion_host) {
  ocal_dtype d = half_types[_i];
  uint16_t *all = fixture_malloc(65536 * sizeof *all);
  float *dec = fixture_malloc(65536 * sizeof *dec);
  for (uint32_t p = 0; p < 65536; p++) all[p] = (uint16_t)p;
  ck_assert_ocal(ocal_half_decode(d, all, dec, 65536));
  check_decoded(d, all, dec, 65536, "ocal_half_decode");
  size_t n;
  float *in = encode_inputs(d, &n);
  uint16_t *enc = fixture_malloc(n * sizeof *enc);
  ck_assert_ocal(ocal_half_encode(d, in, enc, n));
  check_encoded(d, in, enc, n, "ocal_half_encode", 1);
  free(all), free(dec), free(in), free(enc);
}
END_TEST

/* The device's conversions, through ocal_cast, bit for bit. */
START_TEST(test_conversion_device) {
  ocal_dtype d = half_types[_i];
  uint16_t *all = fixture_malloc(65536 * sizeof *all);
  for (uint32_t p = 0; p < 65536; p++) all[p] = (uint16_t)p;
  size_t n = 65536;
  ocal_buffer h, f;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, d, 1, &n, all, &h));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 1, &n, &f));
  ck_assert_ocal(ocal_cast(h, f));
  float *dec = fixture_malloc(n * sizeof *dec);
  ck_assert_ocal(ocal_buffer_read(f, 0, n, dec, NULL));
  check_decoded(d, all, dec, n, "device decode");
  ocal_buffer_release(h), ocal_buffer_release(f);

  float *in = encode_inputs(d, &n);
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_F32, 1, &n, in, &f));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, d, 1, &n, &h));
  ck_assert_ocal(ocal_cast(f, h));
  uint16_t *enc = read_bits(h, n);
  check_encoded(d, in, enc, n, "device encode", 0);
  /* f16 <-> bf16 directly: every pattern of one, rounded once into the other. */
  ocal_dtype o = d == OCAL_F16 ? OCAL_BF16 : OCAL_F16;
  size_t m = 65536;
  ocal_buffer src, dst;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, d, 1, &m, all, &src));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, o, 1, &m, &dst));
  ck_assert_ocal(ocal_cast(src, dst));
  uint16_t *x = read_bits(dst, m);
  for (size_t i = 0; i < m; i++) {
    double v = ref_decode(d, all[i]);
    if (isnan(v))
      EXPECT(is_nan_bits(o, x[i]), "%s NaN 0x%04x gave 0x%04x", ocal_dtype_name(d), all[i], x[i]);
    else
      EXPECT(x[i] == ref_encode(o, v), "%s 0x%04x to %s gave 0x%04x, want 0x%04x",
             ocal_dtype_name(d), all[i], ocal_dtype_name(o), x[i], ref_encode(o, v));
  }
  ocal_buffer_release(src), ocal_buffer_release(dst);
  ocal_buffer_release(h), ocal_buffer_release(f);
  free(all), free(dec), free(in), free(enc), free(x);
}
END_TEST

/* Casts between the half types and every other real type, both ways; values that a double
 * rounding (through a round-to-nearest f32) would get wrong included. */
START_TEST(test_cast_all_types) {
  ocal_dtype d = half_types[_i];
  const ocal_dtype others[] = {OCAL_F32, OCAL_F64, OCAL_I32, OCAL_U32, OCAL_I64, OCAL_U64, OCAL_U8};
  for (size_t t = 0; t < sizeof others / sizeof others[0]; t++) {
    ocal_dtype o = others[t];
    if (!fixture_dtype_usable(o)) continue;
    int is_int = o != OCAL_F32 && o != OCAL_F64;
    enum { N = 1003 };
    long double vals[N];
    uint64_t st = 0x51 + t * 7 + _i;
    for (size_t i = 0; i < N; i++) {
      double v = rand_uniform(&st, -300, 300);
      if (o == OCAL_U8 || o == OCAL_U32 || o == OCAL_U64) v = fabs(v);
      if (o == OCAL_U8) v = fmod(v, 256);
      vals[i] = is_int ? (long double)trunc(v) + 0.0L : (long double)v; /* no -0 in integers */
    }
    /* Cases that round twice through a nearest-even f32 (see cl/elementwise.cl's ocal_rto). */
    if (o == OCAL_F64) {
      vals[0] = 1.0 + ldexp(1, -8) + ldexp(1, -30);   /* bf16: up to 1 + 2^-7 */
      vals[1] = 1.0 + ldexp(1, -11) + ldexp(1, -40);  /* f16: up to 1 + 2^-10 */
      vals[2] = 1e300;
      vals[3] = -1e-300;
    } else if (o == OCAL_I64 || o == OCAL_U64) {
      vals[0] = ldexpl(1, 40) + ldexpl(1, 32) + 1;    /* bf16: up to 2^40 (1 + 2^-7) */
      vals[1] = ldexpl(1, 62);
    } else if (o == OCAL_I32 || o == OCAL_U32) {
      vals[0] = ldexpl(1, 24) + ldexpl(1, 16) + 1;    /* bf16: up to 2^24 + 2^17 */
      vals[1] = 65519, vals[2] = 65520;               /* f16: 65504 and inf */
    } else if (o == OCAL_U8) {
      vals[0] = 255;
    }
    size_t n = N, es = ocal_dtype_size(o);
    unsigned char *raw = fixture_malloc(n * es);
    for (size_t i = 0; i < n; i++) {
      long double v = vals[i];
      switch (o) {
        case OCAL_F32: ((float *)raw)[i] = (float)v; vals[i] = ((float *)raw)[i]; break;
        case OCAL_F64: ((double *)raw)[i] = (double)v; break;
        case OCAL_I32: ((int32_t *)raw)[i] = (int32_t)v; break;
        case OCAL_U32: ((uint32_t *)raw)[i] = (uint32_t)v; break;
        case OCAL_I64: ((int64_t *)raw)[i] = (int64_t)v; break;
        case OCAL_U64: ((uint64_t *)raw)[i] = (uint64_t)v; break;
        default: ((uint8_t *)raw)[i] = (uint8_t)v; break;
      }
    }
    ocal_buffer a, h, back;
    ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, o, 1, &n, raw, &a));
    ck_assert_ocal(ocal_buffer_create(fixture_ctx, d, 1, &n, &h));
    ck_assert_ocal(ocal_cast(a, h));
    uint16_t *got = read_bits(h, n);
    for (size_t i = 0; i < n; i++) {
        long double v = vals[i];
      uint16_t want = ref_encode(d, (double)v); /* every input here is a double exactly */
      EXPECT(got[i] == want, "cast %s %.21Lg to %s gave 0x%04x, want 0x%04x", ocal_dtype_name(o), v,
             ocal_dtype_name(d), got[i], want);
    }
    /* And back: the half values converted to o (integers truncate toward zero and saturate). */
    ck_assert_ocal(ocal_buffer_create(fixture_ctx, o, 1, &n, &back));
    ck_assert_ocal(ocal_cast(h, back));
    unsigned char *raw2 = fixture_malloc(n * es);
    ck_assert_ocal(ocal_buffer_read(back, 0, n, raw2, NULL));
    for (size_t i = 0; i < n; i++) {
      double hv = ref_decode(d, got[i]);
      long double want;
      if (!is_int) {
        want = o == OCAL_F32 ? (long double)(float)hv : (long double)hv;
      } else {
        double lo = o == OCAL_I32 ? -2147483648.0 : o == OCAL_I64 ? -9223372036854775808.0 : 0;
        double hi = o == OCAL_I32 ? 2147483647.0 : o == OCAL_U32 ? 4294967295.0
                    : o == OCAL_U8 ? 255.0 : o == OCAL_I64 ? 9223372036854775807.0
                                                            : 18446744073709551615.0;
        double tv = isnan(hv) ? 0 : trunc(hv);
        want = tv < lo ? lo : tv > hi ? hi : tv;
        if (tv > hi) want = o == OCAL_I64 ? (long double)INT64_MAX : o == OCAL_U64 ? (long double)UINT64_MAX : hi;
      }
      long double g = fixture_get(o, raw2, i);
      EXPECT(g == want || (isinf(hv) && !is_int && isinf((double)g)),
             "cast %s 0x%04x (%g) to %s gave %.21Lg, want %.21Lg", ocal_dtype_name(d), got[i], hv,
             ocal_dtype_name(o), g, want);
    }
    ocal_buffer_release(a), ocal_buffer_release(h), ocal_buffer_release(back);
    free(raw), free(raw2), free(got);
  }
}
END_TEST

/* ---- buffers ------------------------------------------------------------------------------ */

START_TEST(test_buffers) {
  ocal_dtype d = half_types[_i];
  size_t n = 1001, shape[2] = {7, 143};
  uint16_t *h = fixture_malloc(n * sizeof *h);
  fixture_random_bytes(h, n * sizeof *h, 0x77 + _i);
  ocal_buffer a, b, v;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, d, 2, shape, h, &a));
  size_t nbytes;
  ck_assert_ocal(ocal_buffer_get_nbytes(a, &nbytes));
  ck_assert_uint_eq(nbytes, 2 * n);
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, d, 2, shape, &b));
  ck_assert_ocal(ocal_buffer_copy(a, b));
  uint16_t *got = read_bits(b, n);
  EXPECT(memcmp(got, h, n * sizeof *h) == 0, "copy changed bits (NaN payloads must survive)");
  free(got);
  /* A view at an odd offset: written, read, filled. */
  size_t vn = 333;
  ck_assert_ocal(ocal_buffer_view(b, 5, 1, &vn, &v));
  uint16_t one = d == OCAL_F16 ? 0x3c00 : 0x3f80, part[3] = {0x1234, 0x8001, 0x7bff};
  ck_assert_ocal(ocal_buffer_fill(v, &one));
  ck_assert_ocal(ocal_buffer_write(v, 10, 3, part, NULL));
  got = read_bits(b, n);
  for (size_t i = 0; i < n; i++) {
    uint16_t want = i < 5 || i >= 5 + vn ? h[i] : i >= 15 && i < 18 ? part[i - 15] : one;
    EXPECT(got[i] == want, "element %zu is 0x%04x, want 0x%04x", i, got[i], want);
  }
  uint16_t back[3];
  ck_assert_ocal(ocal_buffer_read(v, 10, 3, back, NULL));
  EXPECT(memcmp(back, part, sizeof part) == 0, "read through the view");
  free(got), free(h);
  ocal_buffer_release(a), ocal_buffer_release(b), ocal_buffer_release(v);
}
END_TEST

/* A raw kernel takes an f16 buffer as a `half *` (vload_half/vstore_half need no
 * cl_khr_fp16) and a bf16 buffer as a `ushort *`. */
START_TEST(test_raw_kernel) {
  const char *src =
      "__kernel void twice(__global const half *x, __global half *y, __global const ushort *b,\n"
      "                    __global ushort *c) {\n"
      "  size_t i = get_global_id(0);\n"
      "  vstore_half_rte(2.0f * vload_half(i, x), i, y);\n"
      "  c[i] = (ushort)(as_uint(2.0f * as_float((uint)b[i] << 16)) >> 16);\n"
      "}\n";
  ocal_program p;
  ocal_kernel k;
  ck_assert_ocal(ocal_program_create(fixture_ctx, src, NULL, &p));
  ck_assert_ocal(ocal_kernel_create(p, "twice", &k));
  ck_assert_ocal(ocal_program_release(p));
  size_t n = 5;
  const uint16_t hx[5] = {0x3c00, 0xc000, 0x0001, 0x7bff, 0x3555};
  const uint16_t bx[5] = {0x3f80, 0xc000, 0x0080, 0x4049, 0xbe00};
  ocal_buffer x, y, b, c;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_F16, 1, &n, hx, &x));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F16, 1, &n, &y));
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_BF16, 1, &n, bx, &b));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_BF16, 1, &n, &c));
  ck_assert_ocal(ocal_kernel_set_buffer(k, 0, x));
  ck_assert_ocal(ocal_kernel_set_buffer(k, 1, y));
  ck_assert_ocal(ocal_kernel_set_buffer(k, 2, b));
  ck_assert_ocal(ocal_kernel_set_buffer(k, 3, c));
  /* A bf16 buffer where the kernel wants half is refused. */
  ck_assert_ocal_fails(ocal_kernel_set_buffer(k, 0, b), OCAL_TYPE_MISMATCH);
  ck_assert_ocal(ocal_kernel_launch(k, 1, &n, NULL));
  uint16_t *gy = read_bits(y, n), *gc = read_bits(c, n);
  for (size_t i = 0; i < n; i++) {
    EXPECT(gy[i] == ref_encode(OCAL_F16, 2 * ref_decode(OCAL_F16, hx[i])), "f16 [%zu]: 0x%04x",
           i, gy[i]);
    EXPECT(gc[i] == ref_encode(OCAL_BF16, 2 * ref_decode(OCAL_BF16, bx[i])), "bf16 [%zu]: 0x%04x",
           i, gc[i]);
  }
  free(gy), free(gc);
  ocal_kernel_release(k);
  ocal_buffer_release(x), ocal_buffer_release(y), ocal_buffer_release(b), ocal_buffer_release(c);
}
END_TEST

/* ---- elementwise -------------------------------------------------------------------------- */

static double ref_unary(ocal_unary_op op, double x) {
  switch (op) {
    case OCAL_UNARY_NEG: return -x;
    case OCAL_UNARY_ABS: return fabs(x);
    case OCAL_UNARY_SQRT: return sqrt(x);
    case OCAL_UNARY_RSQRT: return 1 / sqrt(x);
    case OCAL_UNARY_EXP: return exp(x);
    case OCAL_UNARY_LOG: return log(x);
    case OCAL_UNARY_LOG1P: return log1p(x);
    case OCAL_UNARY_EXPM1: return expm1(x);
    case OCAL_UNARY_SIN: return sin(x);
    case OCAL_UNARY_COS: return cos(x);
    case OCAL_UNARY_TANH: return tanh(x);
    case OCAL_UNARY_SIGMOID: return 1 / (1 + exp(-x));
    case OCAL_UNARY_RELU: return x < 0 ? 0 : x;
    case OCAL_UNARY_GELU: return 0.5 * x * (1 + erf(x / sqrt(2.0)));
    case OCAL_UNARY_FLOOR: return floor(x);
    case OCAL_UNARY_CEIL: return ceil(x);
    case OCAL_UNARY_ROUND: return nearbyint(x);
    case OCAL_UNARY_SIGN: return x > 0 ? 1 : x < 0 ? -1 : x;
    case OCAL_UNARY_SQUARE: return x * x;
    default: return 1 / x; /* reciprocal */
  }
}

/* Sizes and offsets: odd sizes, and offsets that turn the 4-wide path on (0, 4) and off. */
static const size_t sizes[] = {1, 7, 1001, 4099};
static const size_t offsets[] = {0, 1, 4};

START_TEST(test_unary) {
  ocal_dtype d = half_types[_i % 2];
  size_t n = sizes[(_i / 2) % 4], off = offsets[(_i / 8) % 3];
  for (int op = 0; op < OCAL_UNARY_OP_COUNT; op++) {
    int positive = op == OCAL_UNARY_SQRT || op == OCAL_UNARY_RSQRT || op == OCAL_UNARY_LOG;
    double lo = positive ? 0.01 : op == OCAL_UNARY_LOG1P ? -0.9 : -6, hi = 6;
    double *x = fixture_malloc(n * sizeof *x), *ref = fixture_malloc(n * sizeof *ref);
    ocal_buffer bx = half_buffer(d, 1, &n, off, lo, hi, 100 + (uint64_t)op + n, x);
    ocal_buffer by = half_out(d, 1, &n, (off + 3) % 5);
    ck_assert_ocal(ocal_unary((ocal_unary_op)op, bx, by));
    for (size_t i = 0; i < n; i++) ref[i] = ref_unary((ocal_unary_op)op, x[i]);
    uint16_t *got = read_bits(by, n);
    check_close(d, got, ref, n, 1e-6, 0, ocal_unary_op_name((ocal_unary_op)op));
    /* In place. */
    ck_assert_ocal(ocal_unary((ocal_unary_op)op, bx, bx));
    free(got);
    got = read_bits(bx, n);
    check_close(d, got, ref, n, 1e-6, 0, "in place");
    free(got), free(x), free(ref);
    ocal_buffer_release(bx), ocal_buffer_release(by);
  }
}
END_TEST

static double ref_binary(ocal_binary_op op, double a, double b) {
  switch (op) {
    case OCAL_BINARY_ADD: return a + b;
    case OCAL_BINARY_SUB: return a - b;
    case OCAL_BINARY_MUL: return a * b;
    case OCAL_BINARY_DIV: return a / b;
    case OCAL_BINARY_POW: return pow(a, b);
    case OCAL_BINARY_MIN: return a < b ? a : b;
    case OCAL_BINARY_MAX: return a > b ? a : b;
    case OCAL_BINARY_ATAN2: return atan2(a, b);
    case OCAL_BINARY_FMOD: return fmod(a, b);
    case OCAL_BINARY_EQ: return a == b;
    case OCAL_BINARY_NE: return a != b;
    case OCAL_BINARY_LT: return a < b;
    case OCAL_BINARY_LE: return a <= b;
    case OCAL_BINARY_GT: return a > b;
    case OCAL_BINARY_GE: return a >= b;
    case OCAL_BINARY_FLOOR_DIVIDE: return fixture_floor_divide(a, b);
    default: return fixture_remainder(a, b);
  }
}

static int is_comparison(int op) { return op >= OCAL_BINARY_EQ && op <= OCAL_BINARY_GE; }

/* Runs op on a and b (values x, y, shapes sa, sb broadcast to so) and checks out. */
static void check_binary_case(ocal_dtype d, int op, int na, const size_t *sa, int nb,
                              const size_t *sb, int no, const size_t *so, size_t off,
                              uint64_t seed) {
  size_t an = fixture_numel(na, sa), bn = fixture_numel(nb, sb), n = fixture_numel(no, so);
  double *x = fixture_malloc(an * sizeof *x), *y = fixture_malloc(bn * sizeof *y);
  double *ref = fixture_malloc(n * sizeof *ref);
  int pw = op == OCAL_BINARY_POW;
  ocal_buffer a = half_buffer(d, na, sa, off, pw ? 0.1 : -8, 8, seed, x);
  ocal_buffer b = half_buffer(d, nb, sb, (off + 1) % 5, pw ? -3 : -8, pw ? 3 : 8, seed + 1, y);
  /* Some equal pairs, so that comparisons see ties. */
  ocal_buffer out;
  if (is_comparison(op)) {
    ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_U8, no, so, &out));
  } else {
    out = half_out(d, no, so, off);
  }
  ck_assert_ocal(ocal_binary((ocal_binary_op)op, a, b, out));
  /* Reference with NumPy broadcasting over right-aligned 4-D shapes. */
  size_t pa[4], pb[4], po[4];
  for (int k = 0; k < 4; k++) pa[k] = pb[k] = po[k] = 1;
  for (int k = 0; k < na; k++) pa[4 - na + k] = sa[k];
  for (int k = 0; k < nb; k++) pb[4 - nb + k] = sb[k];
  for (int k = 0; k < no; k++) po[4 - no + k] = so[k];
  for (size_t i = 0; i < n; i++) {
    size_t rem = i, ia = 0, ib = 0, stra = 1, strb = 1, idx[4];
    for (int k = 3; k >= 0; k--) idx[k] = rem % po[k], rem /= po[k];
    for (int k = 3; k >= 0; k--) {
      ia += (pa[k] == 1 ? 0 : idx[k]) * stra, stra *= pa[k];
      ib += (pb[k] == 1 ? 0 : idx[k]) * strb, strb *= pb[k];
    }
    ref[i] = ref_binary((ocal_binary_op)op, x[ia], y[ib]);
  }
  if (is_comparison(op)) {
    uint8_t *m = fixture_malloc(n);
    ck_assert_ocal(ocal_buffer_read(out, 0, n, m, NULL));
    for (size_t i = 0; i < n; i++)
      EXPECT(m[i] == (uint8_t)ref[i], "%s [%zu]: got %u want %g", ocal_binary_op_name(op), i,
             m[i], ref[i]);
    free(m);
  } else {
    uint16_t *got = read_bits(out, n);
    check_close(d, got, ref, n, 1e-6, 0, ocal_binary_op_name((ocal_binary_op)op));
    free(got);
  }
  free(x), free(y), free(ref);
  ocal_buffer_release(a), ocal_buffer_release(b), ocal_buffer_release(out);
}

START_TEST(test_binary) {
  ocal_dtype d = half_types[_i % 2];
  size_t n = sizes[(_i / 2) % 4], off = offsets[(_i / 8) % 3];
  for (int op = 0; op < OCAL_BINARY_OP_COUNT; op++)
    check_binary_case(d, op, 1, &n, 1, &n, 1, &n, off, 300 + (uint64_t)op + n);
}
END_TEST

START_TEST(test_broadcast) {
  ocal_dtype d = half_types[_i];
  const size_t m[2] = {37, 53}, row[1] = {53}, col[2] = {37, 1};
  const size_t g1[3] = {3, 1, 5}, g2[3] = {1, 4, 1}, go[3] = {3, 4, 5};
  const int ops[] = {OCAL_BINARY_ADD, OCAL_BINARY_MUL, OCAL_BINARY_MAX, OCAL_BINARY_LT};
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
    check_binary_case(d, ops[k], 2, m, 1, row, 2, m, 1, 500 + k);  /* a bias: the 2-D path */
    check_binary_case(d, ops[k], 2, col, 2, m, 2, m, 0, 510 + k);  /* a column */
    check_binary_case(d, ops[k], 3, g1, 3, g2, 3, go, 3, 520 + k); /* index arithmetic */
  }
}
END_TEST

START_TEST(test_scalar_axpby_where) {
  ocal_dtype d = half_types[_i % 2];
  size_t n = sizes[(_i / 2) % 4], off = offsets[(_i / 8) % 3];
  double *x = fixture_malloc(n * sizeof *x), *y = fixture_malloc(n * sizeof *y);
  double *ref = fixture_malloc(n * sizeof *ref);
  ocal_buffer bx = half_buffer(d, 1, &n, off, -4, 4, 700 + n, x);
  ocal_buffer by = half_buffer(d, 1, &n, (off + 4) % 8, -4, 4, 701 + n, y);
  ocal_buffer out = half_out(d, 1, &n, off);
  /* x - 0.3 and 0.3 / x: the scalar is an f32 value, not first rounded to 16 bits. */
  ck_assert_ocal(ocal_binary_scalar(OCAL_BINARY_SUB, bx, 0.3, out));
  for (size_t i = 0; i < n; i++) ref[i] = x[i] - (double)0.3f;
  uint16_t *got = read_bits(out, n);
  check_close(d, got, ref, n, 1e-6, 0, "x - s");
  free(got);
  ck_assert_ocal(ocal_scalar_binary(OCAL_BINARY_DIV, 0.3, bx, out));
  for (size_t i = 0; i < n; i++) ref[i] = (double)0.3f / x[i];
  got = read_bits(out, n);
  check_close(d, got, ref, n, 1e-6, 0, "s / x");
  free(got);
  /* y = 1.5 x - 0.25 y */
  ck_assert_ocal(ocal_axpby(1.5, bx, -0.25, by));
  for (size_t i = 0; i < n; i++) ref[i] = 1.5 * x[i] - 0.25 * y[i];
  got = read_bits(by, n);
  check_close(d, got, ref, n, 1e-6, 0, "axpby");
  for (size_t i = 0; i < n; i++) y[i] = ref_decode(d, got[i]);
  free(got);
  /* where(x > 0, x, y): bits move unchanged. */
  ocal_buffer mask;
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_U8, 1, &n, &mask));
  ck_assert_ocal(ocal_binary_scalar(OCAL_BINARY_GT, bx, 0, mask));
  ck_assert_ocal(ocal_where(mask, bx, by, out));
  for (size_t i = 0; i < n; i++) ref[i] = x[i] > 0 ? x[i] : y[i];
  got = read_bits(out, n);
  for (size_t i = 0; i < n; i++)
    EXPECT(ref_decode(d, got[i]) == ref[i], "where [%zu]: %g, want %g", i, ref_decode(d, got[i]),
           ref[i]);
  free(got), free(x), free(y), free(ref);
  ocal_buffer_release(bx), ocal_buffer_release(by), ocal_buffer_release(out);
  ocal_buffer_release(mask);
}
END_TEST

START_TEST(test_sequences) {
  ocal_dtype d = half_types[_i];
  size_t n = 1001;
  ocal_buffer out = half_out(d, 1, &n, 3);
  double *ref = fixture_malloc(n * sizeof *ref);
  ck_assert_ocal(ocal_arange(-7.25, 0.125, out));
  for (size_t i = 0; i < n; i++) ref[i] = -7.25 + 0.125 * (double)i;
  uint16_t *got = read_bits(out, n);
  check_close(d, got, ref, n, 0, 0, "arange");
  free(got);
  ck_assert_ocal(ocal_linspace(-1, 3, out));
  /* As the kernel computes it (in double where the device has it): start + i * step. */
  for (size_t i = 0; i < n; i++) ref[i] = i + 1 == n ? 3 : -1 + (double)i * (4.0 / (double)(n - 1));
  got = read_bits(out, n);
  /* The device may fuse start + i * step (OpenCL allows contraction): a rounding of the
   * compute type C (f32 where the device has no fp64) either way. */
  check_close(d, got, ref, n, 1e-6, 8 * ldexp(1, -24), "linspace");
  free(got), free(ref);
  ocal_buffer_release(out);
}
END_TEST

/* Special values through an operation: inf, NaN, subnormals, the largest finite. */
START_TEST(test_special_values) {
  ocal_dtype d = half_types[_i];
  uint16_t in[] = {fmt_inf(d), (uint16_t)(0x8000 | fmt_inf(d)), (uint16_t)(fmt_inf(d) | 1),
                   0x0001, 0x8001, (uint16_t)(fmt_inf(d) - 1), 0x0000, 0x8000, 0x03ff};
  size_t n = sizeof in / sizeof in[0];
  ocal_buffer x, y;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, d, 1, &n, in, &x));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, d, 1, &n, &y));
  double ref[16];
  /* x * 1 keeps every value, subnormals included (f32 holds them as normals). */
  ck_assert_ocal(ocal_binary_scalar(OCAL_BINARY_MUL, x, 1.0, y));
  uint16_t *got = read_bits(y, n);
  /* bf16's subnormals are f32 subnormals, which a device may flush in arithmetic (OpenCL
   * makes f32 denormals optional): they are checked for f16 only, whose subnormals are
   * normal f32 values. */
  for (size_t i = 0; i < n; i++) {
    int skip = d == OCAL_BF16 && (in[i] & 0x7f80) == 0 && (in[i] & 0x7f) != 0;
    EXPECT(skip || got[i] == in[i] || (is_nan_bits(d, in[i]) && is_nan_bits(d, got[i])),
           "x * 1 [%zu]: 0x%04x gave 0x%04x", i, in[i], got[i]);
  }
  free(got);
  /* x * 2 overflows the largest finite to inf, and doubles the subnormals exactly. */
  ck_assert_ocal(ocal_binary_scalar(OCAL_BINARY_MUL, x, 2.0, y));
  for (size_t i = 0; i < n; i++) ref[i] = 2 * ref_decode(d, in[i]);
  got = read_bits(y, n);
  if (d == OCAL_BF16)
    for (size_t i = 0; i < n; i++)
      if ((in[i] & 0x7f80) == 0 && (in[i] & 0x7f) != 0) got[i] = ref_encode(d, ref[i]);
  check_close(d, got, ref, n, 0, 0, "x * 2");
  EXPECT(got[5] == fmt_inf(d), "max * 2 gave 0x%04x", got[5]);
  free(got);
  ocal_buffer_release(x), ocal_buffer_release(y);
}
END_TEST

/* Random numbers: the f32 draws of the same stream, rounded (uniforms clamped into
 * [low, high): the interval [1000, 1001) holds f16's 1000 and 1000.5, and f32 draws above
 * 1000.75 round to 1001 unless clamped). */
START_TEST(test_random) {
  ocal_dtype d = half_types[_i % 2];
  int normal = _i / 2;
  size_t n = 10007;
  const double bounds[2][2] = {{-0.3, 0.7}, {1000, 1001}};
  for (int b = 0; b < (normal ? 1 : 2); b++) {
    double low = bounds[b][0], high = bounds[b][1];
    ocal_buffer h = half_out(d, 1, &n, 3), f;
    ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 1, &n, &f));
    if (normal) {
      ck_assert_ocal(ocal_random_normal(42, 1000, 1.5, 2.0, h));
      ck_assert_ocal(ocal_random_normal(42, 1000, 1.5, 2.0, f));
    } else {
      ck_assert_ocal(ocal_random_uniform(42, 1000, low, high, h));
      ck_assert_ocal(ocal_random_uniform(42, 1000, low, high, f));
    }
    uint16_t *got = read_bits(h, n);
    float *ff = fixture_malloc(n * sizeof *ff);
    ck_assert_ocal(ocal_buffer_read(f, 0, n, ff, NULL));
    /* The format's values inside [low, high). */
    double lo = ref_decode(d, ref_encode(d, low)), hi = ref_decode(d, ref_encode(d, high));
    if (lo < low) lo += fmt_ulp(d, lo);
    if (hi >= high) hi -= fmt_ulp(d, hi - fmt_ulp(d, hi) / 2);
    for (size_t i = 0; i < n; i++) {
      double v = ref_decode(d, got[i]);
      uint16_t want = ref_encode(d, ff[i]);
      if (!normal) {
        double w = ref_decode(d, want);
        want = ref_encode(d, w < lo ? lo : w > hi ? hi : w);
        EXPECT(v >= low && v < high, "uniform %s [%zu]: %.9g outside [%g, %g)",
               ocal_dtype_name(d), i, v, low, high);
      }
      EXPECT(got[i] == want, "%s %s [%zu]: 0x%04x (%.9g), want 0x%04x (f32 draw %.9g)",
             normal ? "normal" : "uniform", ocal_dtype_name(d), i, got[i], v, want,
             (double)ff[i]);
    }
    free(got), free(ff);
    ocal_buffer_release(h), ocal_buffer_release(f);
  }
}
END_TEST

/* ---- reductions --------------------------------------------------------------------------- */

typedef struct {
  const char *name;
  ocal_reduce_op op;
} red_case;

static const red_case red_cases[] = {
    {"sum", OCAL_REDUCE_SUM},       {"mean", OCAL_REDUCE_MEAN},     {"amin", OCAL_REDUCE_MIN},
    {"amax", OCAL_REDUCE_MAX},      {"argmin", OCAL_REDUCE_ARGMIN}, {"argmax", OCAL_REDUCE_ARGMAX},
    {"norm2", OCAL_REDUCE_NORM2},   {"var", OCAL_REDUCE_VAR},       {"std", OCAL_REDUCE_STD},
    {"prod", OCAL_REDUCE_PROD},     {"dot", OCAL_REDUCE_DOT},
};

/* Reference of one line x[0], x[s], ... (n values), and y for dot. */
static double ref_line(ocal_reduce_op op, const double *x, const double *y, size_t n, size_t s,
                       double *scale) {
  double acc = 0, m = x[0], sa = 0;
  size_t arg = 0;
  for (size_t i = 0; i < n; i++) {
    double v = x[i * s];
    sa += fabs(v) * (op == OCAL_REDUCE_DOT ? fabs(y[i * s]) : op == OCAL_REDUCE_NORM2 ? fabs(v) : 1);
    switch (op) {
      case OCAL_REDUCE_DOT: acc += v * y[i * s]; break;
      case OCAL_REDUCE_NORM2: acc += v * v; break;
      case OCAL_REDUCE_MIN: case OCAL_REDUCE_ARGMIN: if (v < m) m = v, arg = i; break;
      case OCAL_REDUCE_MAX: case OCAL_REDUCE_ARGMAX: if (v > m) m = v, arg = i; break;
      default: acc += v;
    }
  }
  *scale = sa;
  switch (op) {
    case OCAL_REDUCE_MEAN: *scale = sa / (double)n; return acc / (double)n;
    case OCAL_REDUCE_NORM2: *scale = sqrt(sa); return sqrt(acc);
    case OCAL_REDUCE_MIN: case OCAL_REDUCE_MAX: return m;
    case OCAL_REDUCE_ARGMIN: case OCAL_REDUCE_ARGMAX: return (double)arg;
    case OCAL_REDUCE_VAR: case OCAL_REDUCE_STD: {
      double mean = acc / (double)n, q = 0;
      for (size_t i = 0; i < n; i++) q += (x[i * s] - mean) * (x[i * s] - mean);
      *scale = q / (double)n + mean * mean;
      if (op == OCAL_REDUCE_STD) *scale = sqrt(*scale);
      return op == OCAL_REDUCE_VAR ? q / (double)n : sqrt(q / (double)n);
    }
    case OCAL_REDUCE_PROD: {
      double p = 1;
      for (size_t i = 0; i < n; i++) p *= x[i * s];
      *scale = fabs(p);
      return p;
    }
    default: return acc;
  }
}

static ocal_status run_reduce(ocal_reduce_op op, ocal_buffer x, ocal_buffer y, int axis,
                              ocal_buffer out) {
  switch (op) {
    case OCAL_REDUCE_VAR: return ocal_var(x, axis, 0, out);
    case OCAL_REDUCE_STD: return ocal_std(x, axis, 0, out);
    case OCAL_REDUCE_DOT: return ocal_dot(x, y, axis, out);
    default: return ocal_reduce(op, x, axis, out);
  }
}

/* Shapes: (rows, cols) along axis -1 (contiguous), 0 (strided; 4-wide columns when cols is a
 * multiple of 4 and the offset too) and the whole buffer; a long 1-D row (split into chunks). */
START_TEST(test_reductions) {
  ocal_dtype d = half_types[_i % 2];
  static const size_t shapes[][2] = {{37, 53}, {29, 12}, {1, 100003}, {301, 7}};
  const size_t *shape = shapes[(_i / 2) % 4];
  size_t off = (_i / 8) % 2 ? 3 : 4;
  size_t n = shape[0] * shape[1];
  for (size_t c = 0; c < sizeof red_cases / sizeof red_cases[0]; c++) {
    ocal_reduce_op op = red_cases[c].op;
    double lo = op == OCAL_REDUCE_PROD ? 0.97 : -3, hi = op == OCAL_REDUCE_PROD ? 1.03 : 5;
    double *x = fixture_malloc(n * sizeof *x), *y = fixture_malloc(n * sizeof *y);
    ocal_buffer bx = half_buffer(d, 2, shape, off, lo, hi, 900 + c + n, x);
    ocal_buffer by = half_buffer(d, 2, shape, off, -2, 2, 950 + c + n, y);
    for (int axis = -1; axis <= 1; axis++) {
      if (op == OCAL_REDUCE_PROD && n > 20000) continue; /* the product leaves the range */
      int ax = axis == -1 ? OCAL_AXIS_ALL : axis;
      size_t lines = axis == -1 ? 1 : shape[1 - axis], len = axis == -1 ? n : shape[axis];
      size_t stride = axis == 0 ? shape[1] : 1;
      ocal_dtype want;
      ck_assert_ocal(ocal_reduce_dtype(op, d, &want));
      int index = op == OCAL_REDUCE_ARGMIN || op == OCAL_REDUCE_ARGMAX;
      ck_assert_int_eq(want, index ? OCAL_I64 : d);
      ocal_buffer out;
      ck_assert_ocal(ocal_buffer_create(fixture_ctx, want, 1, &lines, &out));
      ck_assert_ocal(run_reduce(op, bx, by, ax, out));
      double *ref = fixture_malloc(lines * sizeof *ref), *scale = fixture_malloc(lines * sizeof *scale);
      for (size_t l = 0; l < lines; l++) {
        size_t start = axis == 0 ? l : axis == 1 ? l * shape[1] : 0;
        ref[l] = ref_line(op, x + start, y + start, len, stride, &scale[l]);
      }
      if (index) {
        int64_t *gi = fixture_malloc(lines * sizeof *gi);
        ck_assert_ocal(ocal_buffer_read(out, 0, lines, gi, NULL));
        for (size_t l = 0; l < lines; l++)
          EXPECT(gi[l] == (int64_t)ref[l], "%s axis %d line %zu: %lld, want %.0f",
                 red_cases[c].name, axis, l, (long long)gi[l], ref[l]);
        free(gi);
      } else {
        uint16_t *got = read_bits(out, lines);
        for (size_t l = 0; l < lines; l++) {
          double g = ref_decode(d, got[l]);
          /* Compensated sums (sum, mean, norm, dot) are accurate to about 2^-24 of the sum
           * of magnitudes; variances and products accumulate a rounding per element of a
           * work-item's share, bounded by the line's length. */
          int plain = op == OCAL_REDUCE_VAR || op == OCAL_REDUCE_STD || op == OCAL_REDUCE_PROD;
          double slack = plain ? (double)len * ldexp(1, -24) : 1e-6;
          double tol = 0.5 * fmt_ulp(d, ref[l]) + slack * scale[l];
          EXPECT(got[l] == ref_encode(d, ref[l]) || fabs(g - ref[l]) <= tol, "%s (%s) shape %zux%zu offset %zu axis %d line %zu: "
                 "%.9g, want %.9g (tolerance %.3g)", red_cases[c].name, ocal_dtype_name(d),
                 shape[0], shape[1], off, axis, l, g, ref[l], tol);
        }
        free(got);
      }
      free(ref), free(scale);
      ocal_buffer_release(out);
    }
    free(x), free(y);
    ocal_buffer_release(bx), ocal_buffer_release(by);
  }
}
END_TEST

/* NaN and infinities in reductions, and an f32 result type kept out. */
START_TEST(test_reduction_special) {
  ocal_dtype d = half_types[_i];
  /* f16 subnormals (normal in f32); for bf16 the smallest normals (its subnormals are f32's). */
  uint16_t in[11] = {0x0001, 0x0002, 0x0003, 0, 0, 0, 0, 0, 0, 0, 0};
  if (d == OCAL_BF16) in[0] = 0x0080, in[1] = 0x0080, in[2] = 0x0100;
  size_t n = 11, one = 1;
  ocal_buffer x, out, f32out;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, d, 1, &n, in, &x));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, d, 1, &one, &out));
  /* Subnormals add up exactly in f32. */
  ck_assert_ocal(ocal_sum(x, OCAL_AXIS_ALL, out));
  uint16_t got;
  ck_assert_ocal(ocal_buffer_read(out, 0, 1, &got, NULL));
  ck_assert_uint_eq(got, d == OCAL_F16 ? 0x0006 : 0x0180);
  /* An infinity makes the sum inf, a NaN makes min NaN. */
  uint16_t inf = fmt_inf(d), nan_bits = (uint16_t)(fmt_inf(d) | 1);
  ck_assert_ocal(ocal_buffer_write(x, 4, 1, &inf, NULL));
  ck_assert_ocal(ocal_sum(x, OCAL_AXIS_ALL, out));
  ck_assert_ocal(ocal_buffer_read(out, 0, 1, &got, NULL));
  ck_assert_uint_eq(got, inf);
  ck_assert_ocal(ocal_buffer_write(x, 7, 1, &nan_bits, NULL));
  ck_assert_ocal(ocal_amin(x, OCAL_AXIS_ALL, out));
  ck_assert_ocal(ocal_buffer_read(out, 0, 1, &got, NULL));
  EXPECT(is_nan_bits(d, got), "amin with a NaN gave 0x%04x", got);
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 1, &one, &f32out));
  ck_assert_ocal_fails(ocal_sum(x, OCAL_AXIS_ALL, f32out), OCAL_TYPE_MISMATCH);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_sum"));
  ocal_buffer_release(x), ocal_buffer_release(out), ocal_buffer_release(f32out);
}
END_TEST

/* ---- softmax and cross-entropy -------------------------------------------------------------- */

START_TEST(test_softmax) {
  ocal_dtype d = half_types[_i % 2];
  int log_ = _i / 2 % 2, axis = _i / 4 % 2;
  const size_t shape[2] = {13, 37};
  size_t n = shape[0] * shape[1];
  double *x = fixture_malloc(n * sizeof *x), *ref = fixture_malloc(n * sizeof *ref);
  ocal_buffer bx = half_buffer(d, 2, shape, 1, -6, 6, 1200 + _i, x);
  ocal_buffer by = half_out(d, 2, shape, 2);
  ck_assert_ocal(log_ ? ocal_log_softmax(bx, axis, by) : ocal_softmax(bx, axis, by));
  size_t lines = shape[1 - axis], len = shape[axis], stride = axis == 0 ? shape[1] : 1;
  for (size_t l = 0; l < lines; l++) {
    size_t start = axis == 0 ? l : l * shape[1];
    double m = -INFINITY, s = 0;
    for (size_t i = 0; i < len; i++) m = fmax(m, x[start + i * stride]);
    for (size_t i = 0; i < len; i++) s += exp(x[start + i * stride] - m);
    for (size_t i = 0; i < len; i++) {
      double v = x[start + i * stride] - m;
      ref[start + i * stride] = log_ ? v - log(s) : exp(v) / s;
    }
  }
  uint16_t *got = read_bits(by, n);
  check_close(d, got, ref, n, 2e-6, 0, log_ ? "log_softmax" : "softmax");
  free(got), free(x), free(ref);
  ocal_buffer_release(bx), ocal_buffer_release(by);
}
END_TEST

START_TEST(test_cross_entropy) {
  ocal_dtype d = half_types[_i];
  const size_t shape[2] = {29, 11};
  size_t rows = shape[0], classes = shape[1], n = rows * classes;
  double *z = fixture_malloc(n * sizeof *z);
  ocal_buffer logits = half_buffer(d, 2, shape, 3, -5, 5, 1300 + _i, z);
  int32_t labels[29];
  uint64_t st = 1310 + _i;
  for (size_t r = 0; r < rows; r++) labels[r] = (int32_t)(fixture_random(&st) % classes);
  ocal_buffer lab, loss = half_out(d, 1, &rows, 1), grad = half_out(d, 2, shape, 0);
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_I32, 1, &rows, labels, &lab));
  ck_assert_ocal(ocal_softmax_cross_entropy(logits, lab, loss, grad));
  double *rl = fixture_malloc(rows * sizeof *rl), *rg = fixture_malloc(n * sizeof *rg);
  for (size_t r = 0; r < rows; r++) {
    const double *p = z + r * classes;
    double m = -INFINITY, s = 0;
    for (size_t i = 0; i < classes; i++) m = fmax(m, p[i]);
    for (size_t i = 0; i < classes; i++) s += exp(p[i] - m);
    rl[r] = m + log(s) - p[labels[r]];
    for (size_t i = 0; i < classes; i++)
      rg[r * classes + i] = exp(p[i] - m) / s - (i == (size_t)labels[r] ? 1 : 0);
  }
  uint16_t *gl = read_bits(loss, rows), *gg = read_bits(grad, n);
  check_close(d, gl, rl, rows, 2e-6, 0, "cross-entropy loss");
  /* p - 1 cancels: its f32 error is absolute, about 2^-24, below a half ulp of any |g| that
   * the format can hold near 1 but not near 0; 1e-6 of slack covers it. */
  for (size_t i = 0; i < n; i++) {
    double g = ref_decode(d, gg[i]);
    EXPECT(fabs(g - rg[i]) <= 0.5 * fmt_ulp(d, rg[i]) + 2e-6 * fabs(rg[i]) + 1e-7,
           "grad [%zu]: %.9g, want %.9g", i, g, rg[i]);
  }
  free(gl), free(gg), free(z), free(rl), free(rg);
  ocal_buffer_release(logits), ocal_buffer_release(lab), ocal_buffer_release(loss);
  ocal_buffer_release(grad);
}
END_TEST

/* ---- GEMM ----------------------------------------------------------------------------------- */

static void check_gemm(ocal_dtype d, int ta, int tb, size_t m, size_t n, size_t k, size_t batch,
                       double alpha, double beta, uint64_t seed) {
  size_t ash[3] = {batch, ta ? k : m, ta ? m : k}, bsh[2] = {tb ? n : k, tb ? k : n};
  size_t csh[3] = {batch, m, n};
  size_t an = batch * m * k, bn = k * n, cn = batch * m * n;
  double *a = fixture_malloc(an * sizeof *a), *b = fixture_malloc(bn * sizeof *b);
  double *c = fixture_malloc(cn * sizeof *c), *ref = fixture_malloc(cn * sizeof *ref);
  double *sc = fixture_malloc(cn * sizeof *sc);
  ocal_buffer A = half_buffer(d, batch > 1 ? 3 : 2, batch > 1 ? ash : ash + 1, 1, -2, 2, seed, a);
  ocal_buffer B = half_buffer(d, 2, bsh, 0, -2, 2, seed + 1, b); /* one B for every batch */
  ocal_buffer C;
  if (beta != 0) {
    C = half_buffer(d, batch > 1 ? 3 : 2, batch > 1 ? csh : csh + 1, 3, -1, 1, seed + 2, c);
  } else {
    C = half_out(d, batch > 1 ? 3 : 2, batch > 1 ? csh : csh + 1, 2); /* NaN: must not leak */
    for (size_t i = 0; i < cn; i++) c[i] = 0;
  }
  ck_assert_ocal(ocal_gemm(ta ? OCAL_TRANS : OCAL_NO_TRANS, tb ? OCAL_TRANS : OCAL_NO_TRANS, alpha,
                           A, B, beta, C));
  for (size_t p = 0; p < batch; p++)
    for (size_t i = 0; i < m; i++)
      for (size_t j = 0; j < n; j++) {
        double s = 0, sa = 0;
        for (size_t q = 0; q < k; q++) {
          double av = a[p * m * k + (ta ? q * m + i : i * k + q)];
          double bv = b[tb ? j * k + q : q * n + j];
          s += av * bv, sa += fabs(av * bv);
        }
        size_t o = p * m * n + i * n + j;
        ref[o] = alpha * s + beta * c[o];
        sc[o] = fabs(alpha) * sa + fabs(beta * c[o]);
      }
  uint16_t *got = read_bits(C, cn);
  for (size_t i = 0; i < cn; i++) {
    double g = ref_decode(d, got[i]);
    /* f32 accumulation: k roundings of about 2^-24 of the running sum. */
    double tol = 0.5 * fmt_ulp(d, ref[i]) + (double)(k + 2) * ldexp(1, -24) * sc[i];
    EXPECT(fabs(g - ref[i]) <= tol,
           "gemm %s %c%c %zux%zux%zu batch %zu [%zu]: %.9g, want %.9g (tolerance %.3g)",
           ocal_dtype_name(d), ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, batch, i, g, ref[i], tol);
  }
  free(got), free(a), free(b), free(c), free(ref), free(sc);
  ocal_buffer_release(A), ocal_buffer_release(B), ocal_buffer_release(C);
}

START_TEST(test_gemm) {
  ocal_dtype d = half_types[_i % 2];
  int ta = _i / 2 % 2, tb = _i / 4 % 2;
  check_gemm(d, ta, tb, 13, 17, 29, 1, 1.0, 0.0, 1400 + _i);
  check_gemm(d, ta, tb, 64, 33, 70, 1, 0.5, -1.5, 1410 + _i);
  check_gemm(d, ta, tb, 5, 9, 131, 3, -1.0, 0.25, 1420 + _i);
  check_gemm(d, ta, tb, 1, 1, 1, 1, 2.0, 0.0, 1430 + _i);
}
END_TEST

/* ---- calls that do not take half types ---------------------------------------------------- */

START_TEST(test_unsupported) {
  size_t n = 16, shape[2] = {4, 4};
  ocal_buffer h, h2, mat;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F16, 1, &n, &h));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_BF16, 1, &n, &h2));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F16, 2, shape, &mat));
  /* bf16 has no value in [1.001, 1.002): nothing could be drawn. */
  ck_assert_ocal_fails(ocal_random_uniform(1, 0, 1.001, 1.002, h2), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_random_uniform"));
  ck_assert_ocal_fails(ocal_cumsum(h, 0, h), OCAL_UNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "f16"));
  ck_assert_ocal_fails(ocal_gemv(OCAL_NO_TRANS, 1, mat, h, 0, h), OCAL_UNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_gemv"));
  /* Binary operations need one type; mixing f16 and bf16 says to cast. */
  ck_assert_ocal_fails(ocal_binary(OCAL_BINARY_ADD, h, h2, h), OCAL_TYPE_MISMATCH);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_binary"));
  ocal_fft_desc desc;
  ck_assert_ocal(ocal_fft_desc_init(&desc));
  desc.lengths[0] = 16;
  desc.precision = OCAL_F16;
  ocal_fft_plan plan = NULL;
  ck_assert_ocal_fails(ocal_fft_plan_create(fixture_ctx, &desc, &plan), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_fft_plan_create"));
  const int32_t rp[2] = {0, 1}, ci[1] = {0};
  const uint16_t vals[1] = {0x3c00};
  ocal_csr csr = NULL;
  ck_assert_ocal_fails(ocal_csr_from_host(fixture_ctx, OCAL_F16, OCAL_I32, 1, 1, rp, ci, vals, &csr),
                       OCAL_UNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_csr_from_host"));
  ocal_gen gen = NULL;
  ck_assert_ocal_fails(ocal_gen_reduction(fixture_ctx, OCAL_BF16, "0", "a + b", "x[i]",
                                          "const float *x", NULL, &gen),
                       OCAL_UNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_gen_reduction"));
  ck_assert_ocal_fails(ocal_gen_elementwise(fixture_ctx, "half *x", "x[i] = 0", NULL, &gen),
                       OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_gen_elementwise"));
  ocal_buffer_release(h), ocal_buffer_release(h2), ocal_buffer_release(mat);
}
END_TEST

static Suite *half_suite(void) {
  Suite *s = suite_create("half");
  TCase *tc = fixture_tcase("conversions");
  tcase_add_test(tc, test_names_and_sizes);
  tcase_add_loop_test(tc, test_conversion_host, 0, 2);
  tcase_add_loop_test(tc, test_conversion_device, 0, 2);
  tcase_add_loop_test(tc, test_cast_all_types, 0, 2);
  tcase_add_loop_test(tc, test_buffers, 0, 2);
  tcase_add_test(tc, test_raw_kernel);
  suite_add_tcase(s, tc);
  tc = fixture_tcase("elementwise");
  tcase_add_loop_test(tc, test_unary, 0, 24);
  tcase_add_loop_test(tc, test_binary, 0, 24);
  tcase_add_loop_test(tc, test_broadcast, 0, 2);
  tcase_add_loop_test(tc, test_scalar_axpby_where, 0, 24);
  tcase_add_loop_test(tc, test_sequences, 0, 2);
  tcase_add_loop_test(tc, test_special_values, 0, 2);
  tcase_add_loop_test(tc, test_random, 0, 4);
  suite_add_tcase(s, tc);
  tc = fixture_tcase("reductions");
  tcase_add_loop_test(tc, test_reductions, 0, 16);
  tcase_add_loop_test(tc, test_reduction_special, 0, 2);
  suite_add_tcase(s, tc);
  tc = fixture_tcase("nn");
  tcase_add_loop_test(tc, test_softmax, 0, 8);
  tcase_add_loop_test(tc, test_cross_entropy, 0, 2);
  suite_add_tcase(s, tc);
  tc = fixture_tcase("gemm");
  tcase_add_loop_test(tc, test_gemm, 0, 8);
  suite_add_tcase(s, tc);
  tc = fixture_tcase("errors");
  tcase_add_test(tc, test_unsupported);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return fixture_run(half_suite()); }
