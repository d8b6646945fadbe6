/* ocal tests — GEMM on tensor cores: the engines (src/blas/gemm_tc.c with cl/gemm_mma.cl,
 * src/blas/gemm_wgmma.c), the probe (src/blas/tc_probe.c) and its cached answer
 * (src/blas/tc_answer.c), the precision mode's rule, the query beside the product, and the
 * portable fallback.
 *
 * Where the tests run decides what runs the kernels:
 *  - on a device whose tensor-core probe passes (an NVIDIA GPU of compute capability 8.0 or
 *    more), the real mma.sync kernels;
 *  - anywhere else (PoCL in CI) the same cases run twice: through the portable path with
 *    precision tf32 requested (which must then be exact FP32: the fallback never rounds), and
 *    through the tensor-core engine with its instructions emulated in OpenCL C
 *    (OCAL_GEMM_TC_EMULATE=1, a test-only setting), so the kernels' indexing, edges, stages,
 *    views, batches and epilogue are checked without a GPU.
 *
 * The reference for the tensor-core engine is a double-precision product of the inputs
 * rounded to TF32 the way the hardware's cvt.rna.tf32.f32 rounds them (to nearest, ties away
 * from zero; implemented here independently of the library), and the tolerance of an element
 * is (k + 8) 2^-23 (|alpha| sum |a b| + |beta c|): the products of TF32 inputs are exact in
 * f32 and a sum of k of them is within about k 2^-24 of the exact sum, doubled for a tensor
 * core that truncates its sums. A wrong fragment or a lost edge is off by order 1; TF32
 * against the unrounded f32 inputs is off by ~2^-11, so unrounded inputs fail too.
 *
 * White-box: links the core library for the rule (engine.h) on an H100's facts and the
 * probe's counters. */
#include "config.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "fixture.h"
#include "tensor_cores.h"

/* ---- contexts ------------------------------------------------------------------------- */

/* Reopens the fixture's context with precision tf32, OCAL_GEMM as given (NULL: unset) and
 * the emulation on or off. */
static void reopen(const char *gemm, int emulate) {
  setenv("OCAL_GEMM_PRECISION", "tf32", 1);
  if (gemm) setenv("OCAL_GEMM", gemm, 1);
  else unsetenv("OCAL_GEMM");
  if (emulate) setenv("OCAL_GEMM_TC_EMULATE", "1", 1);
  else unsetenv("OCAL_GEMM_TC_EMULATE");
  fixture_reopen();
}

/* Whether the device's real probe passes (no emulation). */
static int device_has_tc(void) {
  reopen(NULL, 0);
  ocal_gemm_precision p;
  int tc = 0;
  const char *detail = NULL;
  ck_assert_ocal(ocal_gemm_get_precision(fixture_ctx, &p, &tc, &detail));
  ck_assert_int_eq(p, OCAL_GEMM_PRECISION_TF32);
  ck_assert_ptr_nonnull(detail);
  printf("check_gemm_tc: %s\n", detail);
  fflush(stdout);
  return tc;
}

/* The tensor-core engine forced on every product: the real one where the device has it,
 * else the emulation. Returns 1 when emulated. */
/* The kernels need work-groups of 256 items; a device with smaller ones (PoCL's "mobile"
 * profile in tests/implementations.sh) has no tensor-core engine, even emulated. */
static int groups_too_small(const char *test) {
  ocal_device_info d = {sizeof d};
  ck_assert_ocal(ocal_context_get_device_info(fixture_ctx, &d));
  if (d.max_work_group_size >= 256) return 0;
  printf("check_gemm_tc: %s: SKIPPED: work-groups of %zu items at most, the kernels need 256\n",
         test, d.max_work_group_size);
  fflush(stdout);
  return 1;
}

static int open_tc(void) {
  int real = device_has_tc();
  reopen("tc", !real);
  int tc = 0;
  ocal_gemm_precision p;
  const char *detail;
  ck_assert_ocal(ocal_gemm_get_precision(fixture_ctx, &p, &tc, &detail));
  ck_assert_msg(tc, "the tensor-core probe fails%s: %s", real ? "" : " in emulation", detail);
  return !real;
}

/* ---- the reference -------------------------------------------------------------------- */

static float tf32(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  if ((u & 0x7f800000u) != 0x7f800000u) u = (u + 0x1000u) & 0xffffe000u;
  memcpy(&x, &u, 4);
  return x;
}

/* What the wgmma kernel's tensor cores do with f32 operands: the low 13 bits dropped. */
static float tf32_truncated(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  if ((u & 0x7f800000u) != 0x7f800000u) u &= 0xffffe000u;
  memcpy(&x, &u, 4);
  return x;
}

static void fill(float *p, size_t n, uint64_t seed) {
  uint64_t st = seed * 0x9e3779b97f4a7c15ull + 7;
  for (size_t i = 0; i < n; i++)
    p[i] = (float)((double)(fixture_random(&st) >> 11) / (double)(1ull << 53) * 2.0 - 1.0);
}

/* One product: C{batch, m, n} = alpha op(A) op(B) + beta C, A and B 3-D or (shared2d) 2-D,
 * every operand a view at element offset `off` of a larger buffer, whose other elements must
 * be left alone. rounded: 1, the reference rounds A and B to TF32 (mma.sync), 2 truncates
 * them (wgmma); 0, it is the exact product and the tolerance FP32's. */
typedef struct gcase {
  size_t m, n, k, batch;
  int ta, tb;
  double alpha, beta;
  int nan_c;    /* C starts as NaN (beta must be 0) */
  size_t off;   /* offset of each view in its buffer, in elements */
  int shared_b; /* B is 2-D, one matrix for every batch entry */
} gcase;

/* The case's operands on the device: whole buffers of sa, sb, sc elements of dt from the host
 * arrays (w: a, b, c) and the views the product takes at element offset t->off (v: A and B 3-D,
 * or B 2-D when shared, C 3-D for a batch). */
static void case_buffers(ocal_dtype dt, const gcase *t, const void *a, const void *b,
                         const void *c, size_t sa, size_t sb, size_t sc, ocal_buffer w[3],
                         ocal_buffer v[3]) {
  size_t m = t->m, n = t->n, k = t->k, bt = t->batch;
  size_t shape_a[3] = {bt, t->ta ? k : m, t->ta ? m : k};
  size_t shape_b[3] = {bt, t->tb ? n : k, t->tb ? k : n}, shape_c[3] = {bt, m, n};
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, dt, 1, &sa, a, &w[0]));
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, dt, 1, &sb, b, &w[1]));
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, dt, 1, &sc, c, &w[2]));
  int nd = bt > 1 ? 3 : 2;
  ck_assert_ocal(ocal_buffer_view(w[0], t->off, nd, nd == 3 ? shape_a : shape_a + 1, &v[0]));
  ck_assert_ocal(ocal_buffer_view(w[1], t->off, t->shared_b ? 2 : nd,
                                  t->shared_b || nd == 2 ? shape_b + 1 : shape_b, &v[1]));
  ck_assert_ocal(ocal_buffer_view(w[2], t->off, nd, nd == 3 ? shape_c : shape_c + 1, &v[2]));
}

static void case_buffers_release(ocal_buffer w[3], ocal_buffer v[3]) {
  for (int i = 0; i < 3; i++) ocal_buffer_release(v[i]), ocal_buffer_release(w[i]);
}

/* The engine the rule gives the case (its reason in *reason), and the case in words, with
 * `prefix`, for the messages. */
static const char *case_engine(ocal_dtype dt, const gcase *t, const char *prefix, char *what,
                               size_t size, const char **reason) {
  const char *engine = NULL;
  ck_assert_ocal(ocal_gemm_engine_query(fixture_ctx, dt, t->ta ? OCAL_TRANS : OCAL_NO_TRANS,
                                        t->m, t->n, t->k, t->batch, &engine, reason));
  snprintf(what, size, "%s%s%s %zux%zux%zu batch %zu off %zu alpha %g beta %g%s%s (%s)", prefix,
           t->ta ? "T" : "N", t->tb ? "T" : "N", t->m, t->n, t->k, t->batch, t->off, t->alpha,
           t->beta, t->nan_c ? " over NaN" : "", t->shared_b ? " B shared" : "", engine);
  return engine;
}

/* The comparison of run_case and run_f64_case: C's view (nc elements of `size` bytes, f32 or
 * f64, from element off of got) each within tol * bound[i] + slack of ref[i], and every element
 * of the buffer outside the view equal to its input in c; prints the worst error as a
 * fraction of the tolerance. */
static void assert_within_bound(const char *what, const void *got, const void *c, size_t size,
                                size_t off, size_t nc, size_t all, const double *ref,
                                const double *bound, double tol, double slack) {
#define ELEM(p, i) (size == 4 ? (double)((const float *)(p))[i] : ((const double *)(p))[i])
  double worst = 0;
  for (size_t i = 0; i < nc; i++) {
    double g = ELEM(got, off + i), e = fabs(g - ref[i]);
    ck_assert_msg(e <= tol * bound[i] + slack, "%s: C[%zu] = %.17g, expected %.17g (error "
                  "%.3g, allowed %.3g)", what, i, g, ref[i], e, tol * bound[i]);
    if (bound[i] > 0 && e / (tol * bound[i]) > worst) worst = e / (tol * bound[i]);
  }
  for (size_t i = 0; i < all; i++)
    if (i < off || i >= off + nc)
      ck_assert_msg(memcmp((const char *)got + i * size, (const char *)c + i * size, size) == 0,
                    "%s: element %zu outside C's view changed", what, i);
#undef ELEM
  printf("check_gemm_tc: %s: worst error %.3g of the tolerance\n", what, worst);
  fflush(stdout);
}

/* Device copies of A, B and C (elements of es bytes) for a direct call of an engine. */
static void device_copies(cl_context clctx, size_t es, size_t na, size_t nb, size_t nc,
                          const void *a, const void *b, const void *c, cl_mem mem[3]) {
  const size_t n[3] = {na, nb, nc};
  const void *src[3] = {a, b, c};
  for (int i = 0; i < 3; i++) {
    cl_int err;
    mem[i] = clCreateBuffer(clctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n[i] * es,
                            (void *)src[i], &err);
    ck_assert_int_eq(err, CL_SUCCESS);
  }
}

static void run_case(const gcase *t, int rounded, const char *expect_engine, uint64_t seed) {
  size_t m = t->m, n = t->n, k = t->k, bt = t->batch;
  size_t na = bt * m * k, nb = (t->shared_b ? 1 : bt) * k * n, nc = bt * m * n;
  size_t guard = 37; /* elements after each view */
  float *a = malloc((t->off + na + guard) * 4), *b = malloc((t->off + nb + guard) * 4);
  float *c = malloc((t->off + nc + guard) * 4), *got = malloc((t->off + nc + guard) * 4);
  double *ref = malloc(nc * 8), *bound = malloc(nc * 8);
  ck_assert(a && b && c && got && ref && bound);
  fill(a, t->off + na + guard, seed);
  fill(b, t->off + nb + guard, seed + 1);
  fill(c, t->off + nc + guard, seed + 2);
  if (t->nan_c)
    for (size_t i = 0; i < nc; i++) c[t->off + i] = NAN;
  const float *A = a + t->off, *B = b + t->off, *C0 = c + t->off;
  for (size_t e = 0; e < bt; e++) {
    const float *Ae = A + e * m * k, *Be = B + (t->shared_b ? 0 : e) * k * n;
    for (size_t i = 0; i < m; i++)
      for (size_t j = 0; j < n; j++) {
        double s = 0, mag = 0;
        for (size_t p = 0; p < k; p++) {
          float x = t->ta ? Ae[p * m + i] : Ae[i * k + p];
          float y = t->tb ? Be[j * k + p] : Be[p * n + j];
          if (rounded == 1) x = tf32(x), y = tf32(y);
          if (rounded == 2) x = tf32_truncated(x), y = tf32_truncated(y);
          s += (double)x * y;
          mag += fabs((double)x * y);
        }
        size_t o = e * m * n + i * n + j;
        double cv = t->beta != 0 ? t->beta * C0[o] : 0;
        ref[o] = t->alpha * s + cv;
        bound[o] = fabs(t->alpha) * mag + fabs(cv);
      }
  }
  size_t sa = t->off + na + guard, sb = t->off + nb + guard, sc = t->off + nc + guard;
  ocal_buffer w[3], v[3];
  case_buffers(OCAL_F32, t, a, b, c, sa, sb, sc, w, v);
  ocal_buffer bc = w[2], va = v[0], vb = v[1], vc = v[2];

  const char *reason = NULL;
  char what[200];
  const char *engine = case_engine(OCAL_F32, t, "", what, sizeof what, &reason);
  if (expect_engine)
    ck_assert_msg(strcmp(engine, expect_engine) == 0, "%s: engine %s (%s), expected %s", what,
                  engine, reason, expect_engine);
  else
    ck_assert_msg(strstr(engine, "tensor cores") == NULL, "%s: the fallback ran %s (%s)", what,
                  engine, reason);
  ck_assert_ocal(ocal_gemm(t->ta ? OCAL_TRANS : OCAL_NO_TRANS, t->tb ? OCAL_TRANS : OCAL_NO_TRANS,
                           t->alpha, va, vb, t->beta, vc));
  ck_assert_ocal(ocal_buffer_read(bc, 0, sc, got, NULL));
  /* TF32: (k + 8) 2^-23 of the bound; exact FP32 engines: check_blas's 4 (k + 2) 2^-23. */
  double tol = (rounded ? (double)(k + 8) : 4.0 * (double)(k + 2)) * ldexp(1.0, -23);
  assert_within_bound(what, got, c, 4, t->off, nc, sc, ref, bound, tol, 1e-30);
  case_buffers_release(w, v);
  free(a), free(b), free(c), free(got), free(ref), free(bound);
}

/* The cases: every transpose at odd shapes (m, n, k not multiples of the 128 x 128 x 8 tile),
 * aligned shapes (the cp.async path: offsets and leading dimensions multiples of 4),
 * alpha/beta, beta = 0 over NaN, views at odd and aligned offsets, batches with B 3-D and
 * shared. The emulation is slow (a warp's mma is 32 work-items through local memory), so it
 * runs the big odd shape once; the GPU runs it at every transpose. */
static const gcase odd_shapes[] = {
    {1, 1, 1, 1, 0, 0, 1.5, -0.5, 0, 0, 0},
    {129, 7, 33, 1, 0, 0, 1.5, -0.5, 0, 0, 0},
    {67, 45, 50, 1, 0, 0, -0.75, 0.0, 1, 3, 0},
    {136, 72, 44, 1, 0, 0, 1.0, 1.0, 0, 8, 0},
};
static const gcase big_odd = {203, 301, 257, 1, 0, 0, 1.5, -0.5, 0, 0, 0};
/* One output tile and a long k: the engine splits k (fewer tiles than compute units: two
 * slices on PoCL's two, eight of 88 on an H100) and ocal's split-k sum adds beta C, here into
 * a view at offset 5. */
static const gcase split = {100, 90, 700, 1, 0, 0, 1.25, -0.5, 0, 5, 0};
static const gcase batches[] = {
    {33, 20, 24, 3, 0, 0, 2.0, 0.5, 0, 4, 0},
    {45, 17, 29, 2, 0, 0, 1.0, 0.0, 1, 1, 1},
};

static void run_all(int rounded, const char *engine, int emulated) {
  uint64_t seed = 1;
  for (size_t s = 0; s < sizeof odd_shapes / sizeof odd_shapes[0]; s++)
    for (int t = 0; t < 4; t++) {
      gcase c = odd_shapes[s];
      c.ta = t & 1, c.tb = t >> 1;
      run_case(&c, rounded, engine, seed++);
    }
  for (int t = 0; t < (emulated ? 1 : 4); t++) {
    gcase c = big_odd;
    c.ta = t & 1, c.tb = t >> 1;
    run_case(&c, rounded, engine, seed++);
  }
  for (int t = 0; t < 4; t += 3) { /* NN and TT */
    gcase c = split;
    c.ta = t & 1, c.tb = t >> 1;
    run_case(&c, rounded, engine, seed++);
  }
  for (size_t s = 0; s < sizeof batches / sizeof batches[0]; s++)
    for (int t = 0; t < 4; t += 3) { /* NN and TT */
      gcase c = batches[s];
      c.ta = t & 1, c.tb = t >> 1;
      run_case(&c, rounded, engine, seed++);
    }
}

#define TC_ENGINE "tensor cores (tf32, mma.sync)"
#define WGMMA_ENGINE "tensor cores (tf32, wgmma)"

/* ---- tests ------------------------------------------------------------------------------ */

/* Where the driver reports compute capability 8.0 or more (the only devices the probe is
 * built for), the real probe must pass: else a broken kernel or probe on the GPU would only
 * show as the emulation running there instead. */
START_TEST(test_probe_passes_where_expected) {
  reopen(NULL, 0);
  unsigned cc = ocal__context_compute_capability(fixture_ctx);
  ocal_gemm_precision p;
  int tc = 0;
  const char *detail = NULL;
  ck_assert_ocal(ocal_gemm_get_precision(fixture_ctx, &p, &tc, &detail));
  printf("check_gemm_tc: compute capability %u.%u: %s\n", cc / 10, cc % 10, detail);
  if (cc >= 80)
    ck_assert_msg(tc, "compute capability %u.%u, but the probe failed: %s", cc / 10, cc % 10,
                  detail);
  if (cc == 90)
    ck_assert_msg(strstr(detail, "wgmma passed"), "compute capability 9.0, but: %s", detail);
  else
    ck_assert_msg(!tc && strstr(detail, "probe not built"),
                  "no compute capability 8.0, yet the probe says: %s", detail);
}
END_TEST

/* The tensor-core engine, forced, on every case: real where the device has it, else emulated. */
START_TEST(test_tc_cases) {
  if (groups_too_small("test_tc_cases")) return;
  int emulated = open_tc();
  run_all(1, TC_ENGINE, emulated);
  /* A 1000 x 1000 x 1000 product on the GPU: many blocks, a full raster group and a long k
   * loop through the four-stage ring. */
  if (!emulated) {
    gcase c = {1000, 1000, 1000, 1, 0, 0, 1.5, -0.5, 0, 0, 0};
    run_case(&c, 1, TC_ENGINE, 99);
  }
}
END_TEST

/* The wgmma engine, forced, on every case where the device has it (compute capability 9.0;
 * the reference truncates to TF32 as its tensor cores do), with products of many 128 x 256
 * blocks at every transpose; refused, naming what is missing, everywhere else. */
START_TEST(test_wgmma_cases) {
  if (groups_too_small("test_wgmma_cases")) return;
  reopen("wgmma", 0);
  if (ocal__context_compute_capability(fixture_ctx) != 90) {
    size_t s2[2] = {8, 8};
    ocal_buffer a, b, c;
    ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 2, s2, &a));
    ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 2, s2, &b));
    ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 2, s2, &c));
    ck_assert_ocal_fails(ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1.0, a, b, 0.0, c),
                         OCAL_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(ocal_last_error(), "OCAL_GEMM=wgmma"));
    ocal_buffer_release(a), ocal_buffer_release(b), ocal_buffer_release(c);
    return;
  }
  run_all(2, WGMMA_ENGINE, 0);
  for (int t = 0; t < 4; t++) {
    gcase c = {1000, 1100, 300, 1, t & 1, t >> 1, 1.5, -0.5, 0, t == 1 ? 3 : 0, 0};
    run_case(&c, 2, WGMMA_ENGINE, 200 + (uint64_t)t);
  }
  gcase b = {130, 300, 100, 3, 0, 1, 1.0, 0.0, 1, 0, 1}; /* batch, B shared, beta 0 over NaN */
  run_case(&b, 2, WGMMA_ENGINE, 210);
  /* Large enough for blocks of 256 columns (ocal__gemm_wgmma_block_n; the cases above take
   * 128): edges in m, n and k, a batch with B shared. */
  unsigned cus = ocal__context_info(fixture_ctx)->compute_units;
  ck_assert_uint_eq(ocal__gemm_wgmma_block_n(cus, 1000, 1100, 1), 128);
  ck_assert_uint_eq(ocal__gemm_wgmma_block_n(cus, 2100, 2300, 1), 256);
  for (int t = 0; t < 2; t++) {
    gcase c = {2100, 2300, 40, 1 + t, t, 1 - t, 1.5, -0.5, 0, t ? 4 : 0, t};
    run_case(&c, 2, WGMMA_ENGINE, 220 + (uint64_t)t);
  }
}
END_TEST

/* The error a 16-bit C of type dt may carry against the double reference ref with bound
 * |alpha| sum |a b| + |beta c| over k terms: rounding C to nearest is within u (2^-11 f16,
 * 2^-8 bf16; 2^-25 absolute for f16's subnormals) of the f32 value, which is within the f32
 * term of the reference: so u (|ref| + f32 term) + the f32 term. */
static double half_allowed(ocal_dtype dt, size_t k, double ref, double bound) {
  double u = dt == OCAL_F16 ? ldexp(1.0, -11) : ldexp(1.0, -8);
  double tiny = dt == OCAL_F16 ? ldexp(1.0, -25) : 0.0;
  double f32_term = (double)(k + 8) * ldexp(1.0, -23) * bound;
  return f32_term * (1 + u) + u * fabs(ref) + tiny;
}

/* Every build of the wgmma kernel the engine may run (cp.async or TMA copies, where the probe
 * passed that build; blocks of 64, 128 or 256 columns) on the same products, whatever the rule
 * would pick: TF32 and f16, A stored and transposed (packed), B not transposed (read in place
 * for f16, packed for TF32), edges in m, n and k, alpha 1.5 and beta -0.5. */
START_TEST(test_wgmma_builds) {
  if (groups_too_small("test_wgmma_builds")) return;
  reopen(NULL, 0);
  if (ocal__context_compute_capability(fixture_ctx) != 90 ||
      !ocal__tc_probe_wgmma_passed(fixture_ctx, OCAL_F32)) {
    printf("check_gemm_tc: test_wgmma_builds: SKIPPED: no wgmma probe passed on this device\n");
    return;
  }
  const int tma_ok = ocal__tc_probe_wgmma_tma_passed(fixture_ctx);
  cl_context clctx;
  cl_command_queue q;
  ck_assert_ocal(ocal_context_get_cl_context(fixture_ctx, &clctx));
  ck_assert_ocal(ocal_context_get_cl_queue(fixture_ctx, &q));
  const size_t m = 200, n = 300, k = 140, na = m * k, nb = k * n, nc = m * n;
  float *f = malloc(sizeof(float) * (na + nb + 2 * nc));
  uint16_t *h = malloc(2 * (na + nb + 2 * nc));
  double *ref = malloc(sizeof(double) * nc), *bound = malloc(sizeof(double) * nc);
  ck_assert(f && h && ref && bound);
  for (int d = 0; d < 2; d++) {
    const ocal_dtype dt = d ? OCAL_F16 : OCAL_F32;
    const size_t es = d ? 2 : 4;
    if (d && !ocal__tc_probe_wgmma_passed(fixture_ctx, OCAL_F16)) continue;
    for (int ta = 0; ta < 2; ta++) {
      fill(f, na + nb + nc, 900 + (uint64_t)(2 * d + ta));
      if (d) { /* the values as the device holds them */
        ck_assert_ocal(ocal_half_encode(OCAL_F16, f, h, na + nb + nc));
        ck_assert_ocal(ocal_half_decode(OCAL_F16, h, f, na + nb + nc));
      }
      const float *a = f, *b = f + na, *c0 = f + na + nb;
      float *got = f + na + nb + nc;
      for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
          double sum = 0, mag = 0;
          for (size_t p = 0; p < k; p++) {
            float x = ta ? a[p * m + i] : a[i * k + p], y = b[p * n + j];
            if (!d) x = tf32_truncated(x), y = tf32_truncated(y);
            sum += (double)x * y, mag += fabs((double)x * y);
          }
          ref[i * n + j] = 1.5 * sum - 0.5 * c0[i * n + j];
          bound[i * n + j] = 1.5 * mag + 0.5 * fabs((double)c0[i * n + j]);
        }
      const void *src = d ? (const void *)h : (const void *)f;
      for (int tma = 0; tma <= tma_ok; tma++)
        for (unsigned bn = 64; bn <= 256; bn *= 2) {
          cl_mem mem[3];
          device_copies(clctx, es, na, nb, nc, src, (const char *)src + na * es,
                        (const char *)src + (na + nb) * es, mem);
          cl_mem ma = mem[0], mb = mem[1], mc = mem[2];
          ocal__tc_launch L = {dt, ta, 0, m, n, k, 1, ma, mb, mc, 0, ta ? m : k, 0, 0, n, 0,
                               0, n, 0, 1.5, -0.5, k, 1, 0};
          int not_built = 0;
          ck_assert_ocal(ocal__gemm_wgmma_run(fixture_ctx, &L, tma, bn, &not_built));
          char what[120];
          snprintf(what, sizeof what, "wgmma %s build, %u columns, %s %cN %zux%zux%zu",
                   tma ? "TMA" : "cp.async", bn, d ? "f16" : "TF32", ta ? 'T' : 'N', m, n, k);
          if (d) {
            uint16_t *hg = h + na + nb + nc;
            ck_assert_int_eq(clEnqueueReadBuffer(q, mc, CL_TRUE, 0, nc * 2, hg, 0, NULL, NULL),
                             CL_SUCCESS);
            ck_assert_ocal(ocal_half_decode(OCAL_F16, hg, got, nc));
            for (size_t i = 0; i < nc; i++) {
              double allowed = half_allowed(OCAL_F16, k, ref[i], bound[i]);
              ck_assert_msg(fabs(got[i] - ref[i]) <= allowed, "%s: C[%zu] = %.6g, expected %.6g",
                            what, i, got[i], ref[i]);
            }
            printf("check_gemm_tc: %s: within the bound\n", what);
          } else {
            ck_assert_int_eq(clEnqueueReadBuffer(q, mc, CL_TRUE, 0, nc * 4, got, 0, NULL, NULL),
                             CL_SUCCESS);
            assert_within_bound(what, got, got, 4, 0, nc, nc, ref, bound,
                                (double)(k + 8) * ldexp(1.0, -23), 1e-30);
          }
          clReleaseMemObject(ma), clReleaseMemObject(mb), clReleaseMemObject(mc);
        }
    }
  }
  free(f), free(h), free(ref), free(bound);
}
END_TEST

/* Both TF32 blocks of the mma.sync kernel (128 x 128 with k steps of 8, and 64 x 64 with
 * steps of 16, which the engine takes where those fill the device: gemm_tc.c), called
 * directly whatever the rule would pick, so that a CPU's emulation runs the small one too:
 * every transpose, 16-byte aligned operands (cp.async) and not (the register-staged form),
 * edges in m, n and k, alpha 1.5 and beta -0.5, against the host product of the rounded
 * inputs. */
START_TEST(test_tc_tf32_blocks) {
  if (groups_too_small("test_tc_tf32_blocks")) return;
  open_tc();
  char spell[64];
  ocal__tc_spelling(fixture_ctx, spell, sizeof spell);
  cl_context clctx;
  cl_command_queue q;
  ck_assert_ocal(ocal_context_get_cl_context(fixture_ctx, &clctx));
  ck_assert_ocal(ocal_context_get_cl_queue(fixture_ctx, &q));
  const size_t shapes[2][3] = {{200, 136, 144}, {131, 97, 83}}; /* aligned, not */
  for (int sh = 0; sh < 2; sh++)
    for (int t = 0; t < 4; t++) {
      const int ta = t & 1, tb = t >> 1;
      const size_t m = shapes[sh][0], n = shapes[sh][1], k = shapes[sh][2];
      const size_t na = m * k, nb = k * n, nc = m * n, lda = ta ? m : k, ldb = tb ? k : n;
      float *f = malloc(sizeof(float) * (na + nb + 2 * nc));
      double *ref = malloc(sizeof(double) * nc), *bound = malloc(sizeof(double) * nc);
      ck_assert(f && ref && bound);
      fill(f, na + nb + nc, 700 + (uint64_t)(4 * sh + t));
      const float *a = f, *b = f + na, *c0 = f + na + nb;
      float *got = f + na + nb + nc;
      for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
          double sum = 0, mag = 0;
          for (size_t p = 0; p < k; p++) {
            double x = tf32(ta ? a[p * m + i] : a[i * k + p]);
            double y = tf32(tb ? b[j * k + p] : b[p * n + j]);
            sum += x * y, mag += fabs(x * y);
          }
          ref[i * n + j] = 1.5 * sum - 0.5 * c0[i * n + j];
          bound[i * n + j] = 1.5 * mag + 0.5 * fabs((double)c0[i * n + j]);
        }
      for (int small = 0; small < 2; small++) {
        cl_mem mem[3];
        device_copies(clctx, 4, na, nb, nc, a, b, c0, mem);
        cl_mem ma = mem[0], mb = mem[1], mc = mem[2];
        ocal__tc_launch L = {OCAL_F32, ta, tb, m, n, k, 1, ma, mb, mc, 0, lda, 0, 0, ldb, 0,
                             0, n, 0, 1.5, -0.5, k, 1, small};
        int not_built = 0;
        ck_assert_ocal(ocal__gemm_tc_enqueue(fixture_ctx, spell, &L, &not_built));
        ck_assert_int_eq(clEnqueueReadBuffer(q, mc, CL_TRUE, 0, nc * 4, got, 0, NULL, NULL),
                         CL_SUCCESS);
        char what[120];
        snprintf(what, sizeof what, "mma.sync TF32 %s blocks, %c%c %zux%zux%zu",
                 small ? "64 x 64" : "128 x 128", ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k);
        assert_within_bound(what, got, got, 4, 0, nc, nc, ref, bound,
                            (double)(k + 8) * ldexp(1.0, -23), 1e-30);
        clReleaseMemObject(ma), clReleaseMemObject(mb), clReleaseMemObject(mc);
      }
      free(f), free(ref), free(bound);
    }
}
END_TEST

/* The wgmma kernel's operand pack on any device (the kernel itself needs Hopper): every
 * element of the packed layout against the host's placement, f32 and f16, stored and
 * transposed, at odd sizes, with an offset and a batch of two a stride apart, aligned to 16
 * bytes or not; zero past k. */
START_TEST(test_wgmma_pack_layout) {
  ocal_context ctx = fixture_ctx;
  cl_context clctx;
  ck_assert_ocal(ocal_context_get_cl_context(ctx, &clctx));
  const size_t rows = 137, k = 75, batch = 2;
  for (int d = 0; d < 2; d++)
    for (int trans = 0; trans < 2; trans++)
      for (int tr = 0; tr < 2; tr++) {
        ocal_dtype dt = d ? OCAL_F16 : OCAL_F32;
        /* tr: offset, leading dimension and stride keep 16-byte pieces aligned (the kernel's
         * 16-byte loads) or not (its unaligned ones) */
        size_t es = d ? 2 : 4, al = tr ? 8 : 1, off = tr ? 8 : 5;
        size_t ld = ((trans ? rows : k) + 3 + al - 1) / al * al;
        size_t stride = (ld * (trans ? k : rows) + 7 + al - 1) / al * al;
        size_t n_in = off + stride * batch, bytes_in = n_in * es;
        size_t ldk = (k * es + 15) / 16 * 16 / es, n_out = rows * ldk * batch;
        unsigned char *in = malloc(bytes_in), *got = malloc(n_out * es), *want = calloc(n_out, es);
        ck_assert(in && got && want);
        for (size_t i = 0; i < n_in; i++) { /* distinct nonzero values: every element traced */
          uint32_t v = (uint32_t)(i % 65521) + 1;
          if (d) {
            uint16_t h = (uint16_t)v;
            memcpy(in + i * es, &h, 2);
          } else {
            memcpy(in + i * es, &v, 4);
          }
        }
        for (size_t z = 0; z < batch; z++)
          for (size_t r = 0; r < rows; r++)
            for (size_t c = 0; c < k; c++) {
              size_t from = off + z * stride + (trans ? c * ld + r : r * ld + c);
              size_t to = (z * rows + r) * ldk + c;
              memcpy(want + to * es, in + from * es, es);
            }
        cl_int err;
        cl_mem min = clCreateBuffer(clctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes_in,
                                    in, &err), mout = NULL;
        ck_assert_int_eq(err, CL_SUCCESS);
        ck_assert_ocal(
            ocal__wgmma_pack(ctx, dt, min, off, ld, stride, trans, rows, k, batch, ldk, &mout));
        ck_assert_int_eq(clEnqueueReadBuffer(ocal__context_queue(ctx), mout, CL_TRUE, 0,
                                             n_out * es, got, 0, NULL, NULL),
                         CL_SUCCESS);
        for (size_t i = 0; i < n_out; i++)
          ck_assert_msg(memcmp(got + i * es, want + i * es, es) == 0,
                        "%s trans %d off %zu ld %zu: packed element %zu differs",
                        ocal_dtype_name(dt), trans, off, ld, i);
        ocal__device_free(ctx, mout);
        clReleaseMemObject(min);
        free(in), free(got), free(want);
      }
}
END_TEST

/* ---- f16 and bf16 ----------------------------------------------------------------------- */

/* An f16 or bf16 product C{batch, m, n} = alpha op(A) op(B) + beta C, all of type dt, views at
 * offset `off` (elements); the reference is the double product of the inputs as stored, and
 * the bound adds the output's rounding to nearest even (relative 2^-11 f16, 2^-8 bf16;
 * 2^-25 absolute for f16's subnormals) to (k + 8) 2^-23 of |alpha| sum |a b| + |beta c|.
 * The rounding of C alone comes close to its bound (a value just above a power of two), so
 * worst errors near 1 of the tolerance are expected here; a wrong fragment or edge is off by
 * order 1 of the value, hundreds of times the tolerance. */
static void run_half_case(ocal_dtype dt, const gcase *t, const char *expect_engine,
                          uint64_t seed) {
  ocal_context ctx = fixture_ctx;
  size_t m = t->m, n = t->n, k = t->k, bt = t->batch;
  size_t na = bt * m * k, nb = (t->shared_b ? 1 : bt) * k * n, nc = bt * m * n, guard = 19;
  size_t sa = t->off + na + guard, sb = t->off + nb + guard, sc = t->off + nc + guard;
  float *fa = malloc(sa * 4), *fb = malloc(sb * 4), *fc = malloc(sc * 4), *got = malloc(sc * 4);
  uint16_t *ha = malloc(sa * 2), *hb = malloc(sb * 2), *hc = malloc(sc * 2), *hg = malloc(sc * 2);
  double *ref = malloc(nc * 8), *bound = malloc(nc * 8);
  ck_assert(fa && fb && fc && got && ha && hb && hc && hg && ref && bound);
  fill(fa, sa, seed), fill(fb, sb, seed + 1), fill(fc, sc, seed + 2);
  if (t->nan_c)
    for (size_t i = 0; i < nc; i++) fc[t->off + i] = NAN;
  ck_assert_ocal(ocal_half_encode(dt, fa, ha, sa));
  ck_assert_ocal(ocal_half_encode(dt, fb, hb, sb));
  ck_assert_ocal(ocal_half_encode(dt, fc, hc, sc));
  ck_assert_ocal(ocal_half_decode(dt, ha, fa, sa));
  ck_assert_ocal(ocal_half_decode(dt, hb, fb, sb));
  ck_assert_ocal(ocal_half_decode(dt, hc, fc, sc));
  const float *A = fa + t->off, *B = fb + t->off, *C0 = fc + t->off;
  for (size_t e = 0; e < bt; e++) {
    const float *Ae = A + e * m * k, *Be = B + (t->shared_b ? 0 : e) * k * n;
    for (size_t i = 0; i < m; i++)
      for (size_t j = 0; j < n; j++) {
        double sum = 0, mag = 0;
        for (size_t p = 0; p < k; p++) {
          double x = (double)(t->ta ? Ae[p * m + i] : Ae[i * k + p]) *
                     (t->tb ? Be[j * k + p] : Be[p * n + j]);
          sum += x;
          mag += fabs(x);
        }
        size_t o = e * m * n + i * n + j;
        double cv = t->beta != 0 ? t->beta * C0[o] : 0;
        ref[o] = t->alpha * sum + cv;
        bound[o] = fabs(t->alpha) * mag + fabs(cv);
      }
  }
  ocal_buffer w[3], v[3];
  case_buffers(dt, t, ha, hb, hc, sa, sb, sc, w, v);
  ocal_buffer bc = w[2], va = v[0], vb = v[1], vc = v[2];
  const char *engine = NULL, *reason = NULL;
  ck_assert_ocal(ocal_gemm_engine_query(ctx, dt, t->ta ? OCAL_TRANS : OCAL_NO_TRANS, m, n, k,
                                        bt, &engine, &reason));
  char what[200];
  snprintf(what, sizeof what, "%s %s%s %zux%zux%zu batch %zu off %zu beta %g%s (%s)",
           ocal_dtype_name(dt), t->ta ? "T" : "N", t->tb ? "T" : "N", m, n, k, bt, t->off,
           t->beta, t->nan_c ? " over NaN" : "", engine);
  ck_assert_msg(strcmp(engine, expect_engine) == 0, "%s: engine %s (%s)", what, engine, reason);
  ck_assert_ocal(ocal_gemm(t->ta ? OCAL_TRANS : OCAL_NO_TRANS, t->tb ? OCAL_TRANS : OCAL_NO_TRANS,
                           t->alpha, va, vb, t->beta, vc));
  ck_assert_ocal(ocal_buffer_read(bc, 0, sc, hg, NULL));
  ck_assert_ocal(ocal_half_decode(dt, hg, got, sc));
  double worst = 0;
  for (size_t i = 0; i < nc; i++) {
    double g = got[t->off + i], e = fabs(g - ref[i]);
    double allowed = half_allowed(dt, k, ref[i], bound[i]);
    ck_assert_msg(e <= allowed, "%s: C[%zu] = %.6g, expected %.6g (error %.3g, allowed %.3g)",
                  what, i, g, ref[i], e, allowed);
    if (allowed > 0 && e / allowed > worst) worst = e / allowed;
  }
  for (size_t i = 0; i < sc; i++)
    if (i < t->off || i >= t->off + nc)
      ck_assert_msg(hg[i] == hc[i], "%s: element %zu outside C's view changed", what, i);
  printf("check_gemm_tc: %s: worst error %.3g of the tolerance\n", what, worst);
  fflush(stdout);
  case_buffers_release(w, v);
  free(fa), free(fb), free(fc), free(got), free(ha), free(hb), free(hc), free(hg);
  free(ref), free(bound);
}

#define HALF_ENGINE "tensor cores (f16/bf16, mma.sync)"

/* f16 and bf16 GEMMs on the m16n8k16 kernels (real, else emulated): every transpose at an odd
 * shape, the cp.async path (offsets and leading dimensions multiples of 8), beta = 0 over
 * NaN, a batch with B shared; the emulation keeps to fewer builds. */
START_TEST(test_half_cases) {
  if (groups_too_small("test_half_cases")) return;
  int emulated = open_tc();
  static const gcase cases[] = {
      {129, 7, 33, 1, 0, 0, 1.5, -0.5, 0, 3, 0},
      {136, 72, 48, 1, 0, 0, 1.0, 0.0, 1, 8, 0},
      {1, 1, 1, 1, 0, 0, 2.0, 0.5, 0, 0, 0},
      {45, 17, 29, 2, 0, 0, 1.0, 0.25, 0, 1, 1},
  };
  uint64_t seed = 500;
  for (int d = 0; d < 2; d++) {
    ocal_dtype dt = d ? OCAL_BF16 : OCAL_F16;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
      for (int t = 0; t < 4; t++) {
        /* Emulated (PoCL in CI, where every variant is a slow build): f16 NN and TT at the
         * odd shape, NN on the cp.async path and the batch; bf16 NN on the cp.async path. */
        if (emulated && (t == 1 || t == 2 || (t == 3 && (d == 1 || i > 0)) ||
                         (d == 1 && i != 1) || i == 2))
          continue;
        gcase c = cases[i];
        c.ta = t & 1, c.tb = t >> 1;
        run_half_case(dt, &c, HALF_ENGINE, seed++);
      }
  }
  if (!emulated) {
    gcase c = {1000, 1000, 1000, 1, 0, 0, 1.0, 0.0, 0, 0, 0};
    run_half_case(OCAL_F16, &c, HALF_ENGINE, 7);
    run_half_case(OCAL_BF16, &c, HALF_ENGINE, 8);
  }
}
END_TEST

#define WGMMA_HALF_ENGINE "tensor cores (f16/bf16, wgmma)"

/* f16 and bf16 on the wgmma kernel, forced, where the device has it (compute capability 9.0):
 * the cases above at every transpose and products of many 128 x 256 blocks, with B packed
 * (unaligned or transposed) or read in place (n-major); refused, naming OCAL_GEMM=wgmma,
 * everywhere else. */
START_TEST(test_wgmma_half_cases) {
  if (groups_too_small("test_wgmma_half_cases")) return;
  reopen("wgmma", 0);
  if (ocal__context_compute_capability(fixture_ctx) != 90) {
    size_t s2[2] = {8, 8};
    ocal_buffer a, b, c;
    ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F16, 2, s2, &a));
    ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F16, 2, s2, &b));
    ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F16, 2, s2, &c));
    ck_assert_ocal_fails(ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1.0, a, b, 0.0, c),
                         OCAL_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(ocal_last_error(), "OCAL_GEMM=wgmma"));
    ocal_buffer_release(a), ocal_buffer_release(b), ocal_buffer_release(c);
    return;
  }
  static const gcase cases[] = {
      {129, 7, 33, 1, 0, 0, 1.5, -0.5, 0, 3, 0},
      {136, 72, 48, 1, 0, 0, 1.0, 0.0, 1, 8, 0},
      {1, 1, 1, 1, 0, 0, 2.0, 0.5, 0, 0, 0},
      {45, 17, 29, 2, 0, 0, 1.0, 0.25, 0, 1, 1},
      {1000, 1100, 300, 1, 0, 0, 1.0, 0.5, 0, 0, 0},
      {1000, 1104, 264, 2, 0, 0, 1.5, -0.5, 0, 8, 0}, /* B read in place when not transposed */
  };
  uint64_t seed = 700;
  for (int d = 0; d < 2; d++)
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
      for (int t = 0; t < 4; t++) {
        gcase c = cases[i];
        c.ta = t & 1, c.tb = t >> 1;
        run_half_case(d ? OCAL_BF16 : OCAL_F16, &c, WGMMA_HALF_ENGINE, seed++);
      }
  /* Blocks of 256 columns: f16 NN (B read in place), bf16 TN at an offset. */
  gcase big[] = {{2100, 2300, 72, 1, 0, 0, 1.0, 0.5, 0, 0, 0},
                 {2100, 2300, 70, 1, 1, 0, 1.5, -0.5, 0, 8, 0}};
  run_half_case(OCAL_F16, &big[0], WGMMA_HALF_ENGINE, seed++);
  run_half_case(OCAL_BF16, &big[1], WGMMA_HALF_ENGINE, seed++);
}
END_TEST

/* ---- f64 ---------------------------------------------------------------------------------- */

#define DMMA_ENGINE "tensor cores (f64, mma.sync)"

/* An f64 product as run_case does it, in doubles: the reference sums the products in double
 * (long double where it is wider), and the tolerance is (k + 8) 2^-52 of |alpha| sum |a b| +
 * |beta c|, what a chain of double FMAs leaves: an f32 (or TF32) product anywhere inside is
 * off by 2^-24 or more, millions of times that; a wrong fragment by order 1. */
static void run_f64_case(const gcase *t, const char *expect_engine, uint64_t seed) {
  size_t m = t->m, n = t->n, k = t->k, bt = t->batch;
  size_t na = bt * m * k, nb = (t->shared_b ? 1 : bt) * k * n, nc = bt * m * n, guard = 23;
  size_t sa = t->off + na + guard, sb = t->off + nb + guard, sc = t->off + nc + guard;
  double *a = malloc(sa * 8), *b = malloc(sb * 8), *c = malloc(sc * 8), *got = malloc(sc * 8);
  double *ref = malloc(nc * 8), *bound = malloc(nc * 8);
  ck_assert(a && b && c && got && ref && bound);
  uint64_t st = seed * 0x9e3779b97f4a7c15ull + 11;
  for (size_t i = 0; i < sa; i++) a[i] = (double)(fixture_random(&st) >> 11) * 0x1p-52 - 1.0;
  for (size_t i = 0; i < sb; i++) b[i] = (double)(fixture_random(&st) >> 11) * 0x1p-52 - 1.0;
  for (size_t i = 0; i < sc; i++) c[i] = (double)(fixture_random(&st) >> 11) * 0x1p-52 - 1.0;
  if (t->nan_c)
    for (size_t i = 0; i < nc; i++) c[t->off + i] = NAN;
  const double *A = a + t->off, *B = b + t->off, *C0 = c + t->off;
  for (size_t e = 0; e < bt; e++) {
    const double *Ae = A + e * m * k, *Be = B + (t->shared_b ? 0 : e) * k * n;
    for (size_t i = 0; i < m; i++)
      for (size_t j = 0; j < n; j++) {
        long double s = 0, mag = 0;
        for (size_t p = 0; p < k; p++) {
          long double x = t->ta ? Ae[p * m + i] : Ae[i * k + p];
          long double y = t->tb ? Be[j * k + p] : Be[p * n + j];
          s += x * y;
          mag += fabsl(x * y);
        }
        size_t o = e * m * n + i * n + j;
        long double cv = t->beta != 0 ? (long double)t->beta * C0[o] : 0;
        ref[o] = (double)(t->alpha * s + cv);
        bound[o] = (double)(fabsl((long double)t->alpha) * mag + fabsl(cv));
      }
  }
  ocal_buffer w[3], v[3];
  case_buffers(OCAL_F64, t, a, b, c, sa, sb, sc, w, v);
  ocal_buffer bc = w[2], va = v[0], vb = v[1], vc = v[2];
  const char *reason = NULL;
  char what[200];
  const char *engine = case_engine(OCAL_F64, t, "f64 ", what, sizeof what, &reason);
  ck_assert_msg(strcmp(engine, expect_engine) == 0, "%s: engine %s (%s), expected %s", what,
                engine, reason, expect_engine);
  ck_assert_ocal(ocal_gemm(t->ta ? OCAL_TRANS : OCAL_NO_TRANS, t->tb ? OCAL_TRANS : OCAL_NO_TRANS,
                           t->alpha, va, vb, t->beta, vc));
  ck_assert_ocal(ocal_buffer_read(bc, 0, sc, got, NULL));
  assert_within_bound(what, got, c, 8, t->off, nc, sc, ref, bound, (double)(k + 8) * 0x1p-52,
                      0.0);
  case_buffers_release(w, v);
  free(a), free(b), free(c), free(got), free(ref), free(bound);
}

/* Whether the device's real probe passes for f64 (no emulation). */
static int device_has_f64_tc(void) {
  reopen(NULL, 0);
  return ocal__tc_probe_passed(fixture_ctx, OCAL_F64);
}

/* Whether `test` cannot run here (work-groups too small, no doubles), said on stdout. */
static int f64_skipped(const char *test) {
  if (groups_too_small(test)) return 1;
  ocal_device_info d = {sizeof d};
  ck_assert_ocal(ocal_context_get_device_info(fixture_ctx, &d));
  if (d.has_fp64) return 0;
  printf("check_gemm_tc: %s: SKIPPED: no double precision on this device\n", test);
  return 1;
}

/* The f64 tensor-core engine on every transpose at odd shapes (the 8-byte copies and element
 * stores), even ones (16-byte copies and stores), alpha/beta, beta = 0 over NaN, views at odd
 * and even offsets, both of the engine's blocks (the large one where its blocks cover every
 * compute unit), split k, batches with B 3-D and shared: real where the device's probe
 * passes for f64, else emulated; chosen by the rule without OCAL_GEMM, forced with it. */
START_TEST(test_f64_cases) {
  if (f64_skipped("test_f64_cases")) return;
  int emulated = !device_has_f64_tc();
  reopen(NULL, emulated);
  ck_assert_msg(ocal__tc_probe_passed(fixture_ctx, OCAL_F64), "the f64 probe fails%s",
                emulated ? " in emulation" : "");
  /* Each case with the transposes it runs (bit t: ta = t & 1, tb = t >> 1): all four on a
   * GPU; emulated (PoCL in CI, where each build takes tens of seconds), three builds: NN odd
   * and even, both blocks; test_f64_hopper_blocks takes the other copy paths of A and B (TN
   * odd, TT even) on the Hopper table's blocks. */
  static const struct {
    gcase c;
    unsigned gpu, emulated;
  } cases[] = {
      {{1, 1, 1, 1, 0, 0, 1.5, -0.5, 0, 0, 0}, 15, 1},
      {{129, 7, 33, 1, 0, 0, 1.5, -0.5, 0, 0, 0}, 15, 1},
      {{67, 45, 50, 1, 0, 0, -0.75, 0.0, 1, 3, 0}, 15, 0}, /* emulated: test_f64_hopper_blocks */
      {{136, 72, 44, 1, 0, 0, 1.0, 1.0, 0, 8, 0}, 15, 0},
      {{130, 260, 64, 1, 0, 0, 1.25, 0.5, 0, 0, 0}, 15, 1},
      {{203, 301, 257, 1, 0, 0, 1.5, -0.5, 0, 0, 0}, 9, 0},
      {{60, 50, 700, 1, 0, 0, 1.25, -0.5, 0, 5, 0}, 9, 1}, /* one small block: k split */
      {{33, 20, 24, 3, 0, 0, 2.0, 0.5, 0, 4, 0}, 9, 1},
      {{45, 17, 29, 2, 0, 0, 1.0, 0.0, 1, 1, 1}, 9, 1},
  };
  uint64_t seed = 900;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (int t = 0; t < 4; t++) {
      if (!((emulated ? cases[i].emulated : cases[i].gpu) >> t & 1)) continue;
      gcase c = cases[i].c;
      c.ta = t & 1, c.tb = t >> 1;
      /* Forced, but for the one the rule gives the engine on PoCL's few compute units. */
      reopen(emulated && c.n == 260 ? NULL : "tc", emulated);
      run_f64_case(&c, DMMA_ENGINE, seed++);
    }
  /* On a GPU, products the rule itself gives the engine (8 x 8 tiles of 128 x 128 for 132
   * compute units or fewer). */
  reopen(NULL, 0);
  if (!emulated)
    for (int t = 0; t < 4; t++) {
      gcase c = {1000, 1000, 1000, 1, t & 1, t >> 1, 1.5, -0.5, 0, 0, 0};
      run_f64_case(&c, DMMA_ENGINE, 990 + (uint64_t)t);
    }
  unsetenv("OCAL_GEMM");
  unsetenv("OCAL_GEMM_TC_EMULATE");
}
END_TEST

/* Every block of the f64 engine's table for compute capability 9.0 (Hopper's m16n8k* shapes),
 * run through ocal__gemm_dmma_enqueue_variant: real on a device of 9.0 or more whose probe
 * passes for f64, else emulated (OCAL_GEMM_TC_EMULATE=1), which is how the instructions'
 * fragment layouts are checked without one; test_f64_cases runs only the table of the device
 * at hand. One product a block, each on copy paths test_f64_cases leaves out when emulated:
 * TT at an even shape (A in 16-byte pieces, B transposed on the way in, 16-byte stores); NN
 * with A's rows padded to an even stride and k odd (A kept m x k, its last piece half
 * outside the k range). */
START_TEST(test_f64_hopper_blocks) {
  if (f64_skipped("test_f64_hopper_blocks")) return;
  int emulated = !device_has_f64_tc();
  if (!emulated && ocal__context_compute_capability(fixture_ctx) < 90) {
    printf("check_gemm_tc: test_f64_hopper_blocks: SKIPPED: compute capability below 9.0\n");
    return;
  }
  reopen(NULL, emulated);
  ck_assert(ocal__tc_probe_passed(fixture_ctx, OCAL_F64));
  char spell[64];
  ocal__tc_spelling(fixture_ctx, spell, sizeof spell);
  cl_context clctx;
  cl_command_queue q;
  ck_assert_ocal(ocal_context_get_cl_context(fixture_ctx, &clctx));
  ck_assert_ocal(ocal_context_get_cl_queue(fixture_ctx, &q));
  static const struct {
    int ta, tb;
    size_t m, n, k;
  } cases[OCAL__DMMA_BLOCKS] = {{1, 1, 68, 46, 50}, {0, 0, 68, 46, 49}};
  for (int which = 0; which < OCAL__DMMA_BLOCKS; which++) {
    const ocal__dmma_variant *v = ocal__gemm_dmma_variant(90, which);
    const int ta = cases[which].ta, tb = cases[which].tb;
    const size_t m = cases[which].m, n = cases[which].n, k = cases[which].k;
    const size_t lda = ta ? m : k + k % 2; /* even: the 16-byte paths */
    const size_t na = (ta ? k : m) * lda, nb = k * n, nc = m * n;
    double *h = malloc(sizeof(double) * (na + nb + 4 * nc));
    ck_assert_ptr_nonnull(h);
    uint64_t st = 4242 + (uint64_t)which;
    for (size_t i = 0; i < na + nb + nc; i++)
      h[i] = (double)(fixture_random(&st) >> 11) * 0x1p-52 - 1.0;
    const double *a = h, *b = h + na, *c0 = h + na + nb;
    double *got = h + na + nb + nc, *ref = got + nc, *bound = ref + nc;
    for (size_t i = 0; i < m; i++)
      for (size_t j = 0; j < n; j++) {
        long double sum = 0, mag = 0;
        for (size_t p = 0; p < k; p++) {
          long double x = ta ? a[p * lda + i] : a[i * lda + p];
          long double y = tb ? b[j * k + p] : b[p * n + j];
          sum += x * y, mag += fabsl(x * y);
        }
        ref[i * n + j] = (double)(1.5L * sum - 0.5L * c0[i * n + j]);
        bound[i * n + j] = (double)(1.5L * mag + 0.5L * fabsl((long double)c0[i * n + j]));
      }
    cl_mem mem[3];
    device_copies(clctx, 8, na, nb, nc, a, b, c0, mem);
    cl_mem ma = mem[0], mb = mem[1], mc = mem[2];
    ocal__tc_launch L = {OCAL_F64, ta, tb, m, n, k, 1, ma, mb, mc, 0, lda, 0, 0,
                         tb ? k : n, 0, 0, n, 0, 1.5, -0.5, k, 1, 0};
    int not_built = 0;
    ck_assert_ocal(ocal__gemm_dmma_enqueue_variant(fixture_ctx, spell, v, &L, &not_built));
    ck_assert_int_eq(clEnqueueReadBuffer(q, mc, CL_TRUE, 0, nc * 8, got, 0, NULL, NULL),
                     CL_SUCCESS);
    char what[160];
    snprintf(what, sizeof what, "f64 block %d (%u x %u x %u, shape %u%s) %c%c %zux%zux%zu",
             which, v->bm, v->bn, v->bk, v->shape, v->sm90a ? ", sm_90a" : "", ta ? 'T' : 'N',
             tb ? 'T' : 'N', m, n, k);
    assert_within_bound(what, got, c0, 8, 0, nc, nc, ref, bound, (double)(k + 8) * 0x1p-52,
                        0.0);
    clReleaseMemObject(ma), clReleaseMemObject(mb), clReleaseMemObject(mc);
    free(h);
  }
  unsetenv("OCAL_GEMM_TC_EMULATE");
}
END_TEST

/* ocal_gemm_engine_query is the product's own choice: an f16 product with a dimension beyond
 * the tensor-core kernels' 32-bit indices is not reported as running on them (with OCAL_GEMM
 * unset it is widened to f32; with OCAL_GEMM=tc it is refused, as the product is). */
START_TEST(test_query_is_the_products_choice) {
  if (groups_too_small("test_query_is_the_products_choice")) return;
  int emulate = !device_has_tc();
  reopen(NULL, emulate);
  const char *engine = NULL, *reason = NULL;
  const size_t big = (size_t)1 << 31;
  ck_assert_ocal(ocal_gemm_engine_query(fixture_ctx, OCAL_F16, OCAL_NO_TRANS, 64, 64, 64, 1,
                                        &engine, &reason));
  ck_assert_msg(strstr(engine, "tensor cores (f16/bf16"), "64^3 f16: %s (%s)", engine, reason);
  ocal_status st = ocal_gemm_engine_query(fixture_ctx, OCAL_F16, OCAL_NO_TRANS, big, 8, 8, 1,
                                          &engine, &reason);
  ck_assert_msg(!strstr(engine, "tensor cores"), "2^31 x 8 x 8 f16 (status %d): %s (%s)",
                (int)st, engine, reason);
  reopen("tc", emulate);
  ck_assert_ocal_fails(ocal_gemm_engine_query(fixture_ctx, OCAL_BF16, OCAL_NO_TRANS, big, 8, 8,
                                              1, &engine, &reason),
                       OCAL_UNSUPPORTED);
  ck_assert_str_eq(engine, "none");
  ck_assert_ptr_nonnull(strstr(reason, "2^31 - 1"));
  unsetenv("OCAL_GEMM");
  unsetenv("OCAL_GEMM_TC_EMULATE");
}
END_TEST

/* Where the device has no tensor cores, precision tf32 runs the portable kernels, exactly. */
START_TEST(test_fallback_is_exact) {
  if (device_has_tc()) {
    printf("check_gemm_tc: test_fallback_is_exact: SKIPPED: this device's probe passes, so "
           "tf32 runs tensor cores (test_tc_cases)\n");
    return;
  }
  reopen(NULL, 0);
  run_all(0, NULL, 1);
}
END_TEST

/* OCAL_GEMM=tc is refused, naming what is missing, where it cannot run. */
START_TEST(test_forced_tc_refused) {
  int real = device_has_tc();
  size_t s2[2] = {8, 8};
  ocal_buffer a, b, c;
  if (!real) {
    reopen("tc", 0);
    ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 2, s2, &a));
    ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 2, s2, &b));
    ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 2, s2, &c));
    ck_assert_ocal_fails(ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1.0, a, b, 0.0, c),
                         OCAL_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(ocal_last_error(), "OCAL_GEMM=tc"));
    ck_assert_ptr_nonnull(strstr(ocal_last_error(), "probe failed"));
    ocal_buffer_release(a), ocal_buffer_release(b), ocal_buffer_release(c);
  }
  /* Precision fp32 with OCAL_GEMM=tc: refused everywhere, naming OCAL_GEMM_PRECISION. */
  setenv("OCAL_GEMM_PRECISION", "fp32", 1);
  setenv("OCAL_GEMM", "tc", 1);
  fixture_reopen();
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 2, s2, &a));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 2, s2, &b));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 2, s2, &c));
  ck_assert_ocal_fails(ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1.0, a, b, 0.0, c),
                       OCAL_UNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "OCAL_GEMM_PRECISION=tf32"));
  const char *engine, *reason;
  ck_assert_ocal_fails(ocal_gemm_engine_query(fixture_ctx, OCAL_F32, OCAL_NO_TRANS, 8, 8, 8, 1,
                                              &engine, &reason),
                       OCAL_UNSUPPORTED);
  ck_assert_str_eq(engine, "none");
  ocal_buffer_release(a), ocal_buffer_release(b), ocal_buffer_release(c);
  /* The default is exact FP32 and never asks the probe. */
  unsetenv("OCAL_GEMM_PRECISION");
  unsetenv("OCAL_GEMM");
  fixture_reopen();
  ocal_gemm_precision p;
  int tc;
  ck_assert_ocal(ocal_gemm_get_precision(fixture_ctx, &p, &tc, NULL));
  ck_assert_int_eq(p, OCAL_GEMM_PRECISION_FP32);
  ck_assert_ocal(ocal_gemm_engine_query(fixture_ctx, OCAL_F32, OCAL_NO_TRANS, 4096, 4096, 4096,
                                        1, &engine, &reason));
  ck_assert_ptr_null(strstr(engine, "tensor cores"));
}
END_TEST

/* The rule on an H100's facts (132 SMs): tf32 with the probe passed takes the large products
 * and leaves the MLP's small ones to ocal's kernel, saying why; fp32, f64 or a failed probe
 * change nothing. */
START_TEST(test_rule) {
  ocal__blas_facts f;
  memset(&f, 0, sizeof f);
  f.type = OCAL_DEVICE_GPU;
  f.compute_units = 132;
  f.max_alloc_bytes = (uint64_t)20 << 30;
  f.have_clblast = 1;
  f.splitk = -1;
  f.pretranspose = -1;
  f.precision = OCAL_GEMM_PRECISION_TF32;
  f.tc = 1;
  ocal__gemm_choice c = ocal__gemm_rule(&f, OCAL_F32, OCAL_NO_TRANS, 4096, 4096, 4096, 1, 1);
  ck_assert_int_eq(c.engine, OCAL__GEMM_TC);
  ck_assert_ptr_nonnull(strstr(c.reason, "tensor cores (tf32"));
  c = ocal__gemm_rule(&f, OCAL_F32, OCAL_TRANS, 1024, 1024, 1024, 1, 1);
  ck_assert_int_eq(c.engine, OCAL__GEMM_TC);
  c = ocal__gemm_rule(&f, OCAL_F32, OCAL_NO_TRANS, 256, 256, 256, 16, 1); /* 4 x 16 tiles */
  ck_assert_int_eq(c.engine, OCAL__GEMM_TC);
  c = ocal__gemm_rule(&f, OCAL_F32, OCAL_NO_TRANS, 256, 512, 784, 1, 1); /* the MLP's */
  ck_assert_int_eq(c.engine, OCAL__GEMM_OWN);
  ck_assert_ptr_nonnull(strstr(c.reason, "too few 128x128 tiles"));
  /* 64 x 64 blocks where 128 x 128 tiles fill less than a quarter of the compute units and
   * they fill half: the MLP's 784 x 512 x 256 (28 tiles, 104 blocks), not 256 x 512 x 784 (32
   * blocks). */
  c = ocal__gemm_rule(&f, OCAL_F32, OCAL_TRANS, 784, 512, 256, 1, 1);
  ck_assert_int_eq(c.engine, OCAL__GEMM_TC);
  ck_assert_ptr_nonnull(strstr(c.reason, "64 x 64 blocks"));
  ck_assert_int_eq(ocal__gemm_tc_small_blocks(132, 784, 512, 1), 1);
  ck_assert_int_eq(ocal__gemm_tc_small_blocks(132, 256, 512, 1), 0);   /* 32 blocks */
  ck_assert_int_eq(ocal__gemm_tc_small_blocks(132, 1024, 1024, 1), 0); /* 64 tiles */
  ck_assert_int_eq(ocal__gemm_tc_small_blocks(132, 512, 512, 2), 1);   /* 32 tiles, 128 blocks */
  ck_assert_int_eq(ocal__gemm_tc_small_blocks(132, 512, 512, 1), 0);   /* 64 blocks */
  ck_assert_int_eq(ocal__gemm_tc_small_blocks(132, 576, 512, 1), 1);   /* 72 blocks */
  c = ocal__gemm_rule(&f, OCAL_F32, OCAL_TRANS, 784, 512, 64, 1, 1); /* k too short */
  ck_assert_int_eq(c.engine, OCAL__GEMM_OWN);
  c = ocal__gemm_rule(&f, OCAL_F32, OCAL_NO_TRANS, 2048, 2048, 16, 1, 1); /* k too short */
  ck_assert_int_ne(c.engine, OCAL__GEMM_TC);
  c = ocal__gemm_rule(&f, OCAL_F64, OCAL_NO_TRANS, 4096, 4096, 4096, 1, 1);
  ck_assert_int_ne(c.engine, OCAL__GEMM_TC);
  f.tc = 0;
  c = ocal__gemm_rule(&f, OCAL_F32, OCAL_NO_TRANS, 4096, 4096, 4096, 1, 1);
  ck_assert_int_ne(c.engine, OCAL__GEMM_TC);
  f.tc = 1;
  f.precision = OCAL_GEMM_PRECISION_FP32;
  c = ocal__gemm_rule(&f, OCAL_F32, OCAL_NO_TRANS, 4096, 4096, 4096, 1, 1);
  ck_assert_int_ne(c.engine, OCAL__GEMM_TC);
  /* OCAL_GEMM=tc: refused with fp32 precision, f64 or a failed probe. */
  f.gemm = OCAL__ENGINE_TC;
  c = ocal__gemm_rule(&f, OCAL_F32, OCAL_NO_TRANS, 64, 64, 64, 1, 1);
  ck_assert_int_eq(c.engine, OCAL__GEMM_ENGINE_COUNT);
  ck_assert_ptr_nonnull(strstr(c.reason, "OCAL_GEMM_PRECISION"));
  f.precision = OCAL_GEMM_PRECISION_TF32;
  c = ocal__gemm_rule(&f, OCAL_F32, OCAL_NO_TRANS, 1, 1, 1, 1, 1);
  ck_assert_int_eq(c.engine, OCAL__GEMM_TC);
  ck_assert_int_eq(c.named, 1);
  c = ocal__gemm_rule(&f, OCAL_F64, OCAL_NO_TRANS, 64, 64, 64, 1, 1);
  ck_assert_int_eq(c.engine, OCAL__GEMM_ENGINE_COUNT);
  f.tc = 0;
  c = ocal__gemm_rule(&f, OCAL_F32, OCAL_NO_TRANS, 64, 64, 64, 1, 1);
  ck_assert_int_eq(c.engine, OCAL__GEMM_ENGINE_COUNT);
  ck_assert_ptr_nonnull(strstr(c.reason, "probe failed"));
  /* wgmma (compute capability 9.0): products of 128 x 64 blocks for at least an eighth of the
   * compute units and k of 128 or more; mma.sync (k below 128) or ocal's kernel otherwise. */
  f.gemm = OCAL__ENGINE_AUTO;
  f.tc = 1;
  f.wgmma = 1;
  c = ocal__gemm_rule(&f, OCAL_F32, OCAL_NO_TRANS, 4096, 4096, 4096, 1, 1);
  ck_assert_int_eq(c.engine, OCAL__GEMM_WGMMA);
  ck_assert_ptr_nonnull(strstr(c.reason, "wgmma"));
  c = ocal__gemm_rule(&f, OCAL_F32, OCAL_TRANS, 1024, 1024, 1024, 1, 1); /* 128 blocks */
  ck_assert_int_eq(c.engine, OCAL__GEMM_WGMMA);
  c = ocal__gemm_rule(&f, OCAL_F32, OCAL_NO_TRANS, 384, 384, 1024, 1, 1); /* 18 blocks */
  ck_assert_int_eq(c.engine, OCAL__GEMM_WGMMA);
  c = ocal__gemm_rule(&f, OCAL_F32, OCAL_NO_TRANS, 320, 320, 1024, 1, 1); /* 15 blocks */
  ck_assert_int_ne(c.engine, OCAL__GEMM_WGMMA);
  /* A transposed (packed first): from half the compute units. */
  c = ocal__gemm_rule(&f, OCAL_F32, OCAL_TRANS, 784, 512, 256, 1, 1); /* 56 blocks */
  ck_assert_int_eq(c.engine, OCAL__GEMM_TC); /* mma.sync's 64 x 64 blocks */
  c = ocal__gemm_rule(&f, OCAL_F32, OCAL_TRANS, 768, 768, 256, 1, 1); /* 72 blocks */
  ck_assert_int_eq(c.engine, OCAL__GEMM_WGMMA);
  /* Its blocks: 128 columns where blocks of 256 would fill less than half the device, 64
   * where blocks of 128 would. */
  ck_assert_uint_eq(ocal__gemm_wgmma_block_n(132, 1024, 1024, 1), 64);  /* 32, 64 blocks */
  ck_assert_uint_eq(ocal__gemm_wgmma_block_n(132, 1280, 1280, 1), 128); /* 50, 100 */
  ck_assert_uint_eq(ocal__gemm_wgmma_block_n(132, 1024, 1024, 2), 128); /* 64, 128 */
  ck_assert_uint_eq(ocal__gemm_wgmma_block_n(132, 1024, 1024, 3), 256); /* 96 */
  ck_assert_uint_eq(ocal__gemm_wgmma_block_n(132, 1536, 1536, 1), 256); /* 72 */
  c = ocal__gemm_rule(&f, OCAL_F32, OCAL_NO_TRANS, 4096, 4096, 64, 1, 1); /* k too short */
  ck_assert_int_eq(c.engine, OCAL__GEMM_TC);
  c = ocal__gemm_rule(&f, OCAL_F64, OCAL_NO_TRANS, 4096, 4096, 4096, 1, 1);
  ck_assert_int_ne(c.engine, OCAL__GEMM_WGMMA);
  f.gemm = OCAL__ENGINE_WGMMA;
  c = ocal__gemm_rule(&f, OCAL_F32, OCAL_NO_TRANS, 1, 1, 1, 1, 1);
  ck_assert_int_eq(c.engine, OCAL__GEMM_WGMMA);
  ck_assert_int_eq(c.named, 1);
  f.wgmma = 0;
  c = ocal__gemm_rule(&f, OCAL_F32, OCAL_NO_TRANS, 64, 64, 64, 1, 1);
  ck_assert_int_eq(c.engine, OCAL__GEMM_ENGINE_COUNT);
  ck_assert_ptr_nonnull(strstr(c.reason, "wgmma probe"));
  f.wgmma = 1;
  f.precision = OCAL_GEMM_PRECISION_FP32;
  c = ocal__gemm_rule(&f, OCAL_F32, OCAL_NO_TRANS, 64, 64, 64, 1, 1);
  ck_assert_int_eq(c.engine, OCAL__GEMM_ENGINE_COUNT);
  ck_assert_ptr_nonnull(strstr(c.reason, "OCAL_GEMM_PRECISION"));
  /* f64 (any precision) where the probe passed for it: the double-precision tensor cores for
   * products of 128 x 128 tiles for a quarter of the compute units and k >= 64, CLBlast
   * below; OCAL_GEMM=tc forces them, refused where the f64 probe failed; never wgmma. */
  f.gemm = OCAL__ENGINE_AUTO;
  f.tc_f64 = 1;
  c = ocal__gemm_rule(&f, OCAL_F64, OCAL_NO_TRANS, 4096, 4096, 4096, 1, 1);
  ck_assert_int_eq(c.engine, OCAL__GEMM_DMMA);
  ck_assert_ptr_nonnull(strstr(c.reason, "tensor cores (f64"));
  c = ocal__gemm_rule(&f, OCAL_F64, OCAL_TRANS, 1024, 1024, 1024, 1, 1); /* 64 tiles */
  ck_assert_int_eq(c.engine, OCAL__GEMM_DMMA);
  c = ocal__gemm_rule(&f, OCAL_F64, OCAL_NO_TRANS, 256, 256, 256, 16, 1); /* 4 x 16 tiles */
  ck_assert_int_eq(c.engine, OCAL__GEMM_DMMA);
  c = ocal__gemm_rule(&f, OCAL_F64, OCAL_NO_TRANS, 256, 256, 4096, 1, 1); /* 4 tiles */
  ck_assert_int_eq(c.engine, OCAL__GEMM_CLBLAST);
  c = ocal__gemm_rule(&f, OCAL_F64, OCAL_NO_TRANS, 4096, 4096, 32, 1, 1); /* k too short */
  ck_assert_int_eq(c.engine, OCAL__GEMM_CLBLAST);
  f.gemm = OCAL__ENGINE_TC;
  c = ocal__gemm_rule(&f, OCAL_F64, OCAL_NO_TRANS, 8, 8, 8, 1, 1);
  ck_assert_int_eq(c.engine, OCAL__GEMM_DMMA);
  ck_assert_int_eq(c.named, 1);
  f.gemm = OCAL__ENGINE_WGMMA;
  c = ocal__gemm_rule(&f, OCAL_F64, OCAL_NO_TRANS, 4096, 4096, 4096, 1, 1);
  ck_assert_int_eq(c.engine, OCAL__GEMM_ENGINE_COUNT);
  f.gemm = OCAL__ENGINE_CLBLAST;
  c = ocal__gemm_rule(&f, OCAL_F64, OCAL_NO_TRANS, 4096, 4096, 4096, 1, 1);
  ck_assert_int_eq(c.engine, OCAL__GEMM_CLBLAST);
  f.gemm = OCAL__ENGINE_TC;
  f.tc_f64 = 0;
  c = ocal__gemm_rule(&f, OCAL_F64, OCAL_NO_TRANS, 8, 8, 8, 1, 1);
  ck_assert_int_eq(c.engine, OCAL__GEMM_ENGINE_COUNT);
  ck_assert_ptr_nonnull(strstr(c.reason, "failed for f64"));
  f.gemm = OCAL__ENGINE_AUTO;
  c = ocal__gemm_rule(&f, OCAL_F64, OCAL_NO_TRANS, 4096, 4096, 4096, 1, 1);
  ck_assert_int_ne(c.engine, OCAL__GEMM_DMMA);
}
END_TEST

/* The answer file of the probe: the one whose record names the probe. */
static int find_answer_file(const char *dir, char *path, size_t size) {
  DIR *d = opendir(dir);
  ck_assert_ptr_nonnull(d);
  int found = 0;
  struct dirent *e;
  while (!found && (e = readdir(d)) != NULL) {
    if (!strstr(e->d_name, ".bin")) continue;
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    FILE *f = fopen(p, "rb");
    if (!f) continue;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    for (size_t i = 0; i + 24 <= n; i++)
      if (memcmp(buf + i, "tensor-core probe answer", 24) == 0) {
        snprintf(path, size, "%s", p);
        found = 1;
        break;
      }
  }
  closedir(d);
  return found;
}

/* The probe runs once per device and driver: a second context reads its answer from the disk
 * cache and runs no probe kernel; a damaged or hostile record counts as no answer. */
START_TEST(test_probe_answer_cached) {
  if (groups_too_small("test_probe_answer_cached")) return;
  int real = device_has_tc();
  char dir[] = "/tmp/ocal-gemm-tc-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  setenv("OCAL_CACHE_DIR", dir, 1);
  setenv("OCAL_CACHE", "1", 1);
  reopen(NULL, !real);
  int ok = 0, from_disk = -1;
  unsigned probes = 99;
  const char *detail;
  ck_assert_ocal(ocal__gemm_tc_answer(fixture_ctx, &ok, &detail, &from_disk, &probes));
  ck_assert_msg(ok, "probe failed: %s", detail);
  ck_assert_int_eq(from_disk, 0);
  ck_assert_uint_eq(probes, 1);
  /* A second context (fixture_reopen makes a new one): from disk, no probe kernel. */
  fixture_reopen();
  ck_assert_ocal(ocal__gemm_tc_answer(fixture_ctx, &ok, &detail, &from_disk, &probes));
  ck_assert_int_eq(ok, 1);
  ck_assert_int_eq(from_disk, 1);
  ck_assert_uint_eq(probes, 0);
  ck_assert_ptr_nonnull(strstr(detail, "disk cache"));

  /* Records that are well-formed cache files but not what ocal writes: refused, the probe
   * runs again and rewrites the answer. The cache's key is the library's own. */
  char path[600];
  ck_assert(find_answer_file(dir, path, sizeof path));
  /* Keyed on both kernels the probe checks, cl/gemm_mma.cl then cl/gemm_dmma.cl. */
  const char *mma = NULL, *dmma = NULL;
  for (size_t i = 0; i < ocal__source_count; i++) {
    if (strcmp(ocal__sources[i].name, "gemm_mma") == 0) mma = ocal__sources[i].text;
    if (strcmp(ocal__sources[i].name, "gemm_dmma") == 0) dmma = ocal__sources[i].text;
  }
  ck_assert(mma && dmma);
  char *src = malloc(strlen(mma) + strlen(dmma) + 1);
  ck_assert_ptr_nonnull(src);
  strcat(strcpy(src, mma), dmma);
  char *key = ocal__disk_cache_key(fixture_ctx, src,
                                   real ? "tensor-core probe answer"
                                        : "tensor-core probe answer, MMA_EMULATE=1");
  ck_assert_ptr_nonnull(key);
  static const char *const hostile[] = {
      "ocal tensor-core probe 6\nok=1 f16=1 bf16=1 extra=7 wgmma=0 f64=1\n",  /* out of range */
      "ocal tensor-core probe 6\nok=2 f16=1 bf16=1 extra=0 wgmma=0 f64=1\n",  /* not a verdict */
      "ocal tensor-core probe 6\nok=1 f16=1 bf16=1 extra=0 wgmma=16 f64=1\n", /* not a verdict */
      "ocal tensor-core probe 6\nok=1 f16=1 bf16=1 extra=0 wgmma=0 f64=2\n",  /* not a verdict */
      "ocal tensor-core probe 6\nok=1 f16=1 bf16=1 extra=0 wgmma=0 f64=1\nx", /* trailing */
      "ocal tensor-core probe 6\nok=1 f16=1 bf16=1 extra=+0 wgmma=0 f64=1\n", /* not as written */
      "ocal tensor-core probe 5\nok=1 f16=1 bf16=1 extra=0 wgmma=0 f64=1\n",  /* older version */
      "ocal tensor-core probe 6\nok=1",                                        /* truncated */
  };
  for (size_t h = 0; h < sizeof hostile / sizeof hostile[0]; h++) {
    ocal__disk_cache_store(dir, key, (const unsigned char *)hostile[h], strlen(hostile[h]));
    fixture_reopen();
    ck_assert_ocal(ocal__gemm_tc_answer(fixture_ctx, &ok, &detail, &from_disk, &probes));
    ck_assert_msg(from_disk == 0 && probes == 1, "record %zu was trusted", h);
    ck_assert_int_eq(ok, 1);
  }
  /* Bytes flipped in the file: the disk cache's checksum refuses it. */
  FILE *f = fopen(path, "r+b");
  ck_assert_ptr_nonnull(f);
  fseek(f, -12, SEEK_END);
  fputc('Z', f);
  fclose(f);
  fixture_reopen();
  ck_assert_ocal(ocal__gemm_tc_answer(fixture_ctx, &ok, &detail, &from_disk, &probes));
  ck_assert_int_eq(from_disk, 0);
  ck_assert_uint_eq(probes, 1);
  free(key);
  free(src);
  unsetenv("OCAL_CACHE_DIR");
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);
}
END_TEST

static Suite *gemm_tc_suite(void) {
  Suite *s = suite_create("gemm_tc");
  TCase *tc = fixture_tcase("gemm_tc");
  /* The emulated kernels are slow on PoCL (minutes on a shared 2-core machine). */
  tcase_set_timeout(tc, 900);
  tcase_add_test(tc, test_rule);
  tcase_add_test(tc, test_probe_passes_where_expected);
  tcase_add_test(tc, test_forced_tc_refused);
  tcase_add_test(tc, test_probe_answer_cached);
  tcase_add_test(tc, test_fallback_is_exact);
  tcase_add_test(tc, test_tc_cases);
  tcase_add_test(tc, test_tc_tf32_blocks);
  tcase_add_test(tc, test_wgmma_cases);
  tcase_add_test(tc, test_wgmma_builds);
  tcase_add_test(tc, test_wgmma_pack_layout);
  tcase_add_test(tc, test_wgmma_half_cases);
  tcase_add_test(tc, test_half_cases);
  tcase_add_test(tc, test_f64_cases);
  tcase_add_test(tc, test_f64_hopper_blocks);
  tcase_add_test(tc, test_query_is_the_products_choice);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return fixture_run(gemm_tc_suite()); }
