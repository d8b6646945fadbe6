/* ocal — the tensor-core probe: whether a device runs ocal's tensor-core kernels, and with
 * which build options.
 *
 * Nothing about a device's name or vendor says whether its compiler takes inline PTX and its
 * hardware runs these instructions bit for bit as the kernels assume, so the probe builds
 * cl/gemm_mma.cl and runs it: ocal_mma_probe (one m16n8k8 TF32, one m16n8k16 f16 and bf16
 * product of small integers, exact in f32; 32 f32 -> TF32 conversions at every rounding case;
 * the __local address round trip that cp.async and ldmatrix rely on), then one small GEMM of
 * each variant the engines run (cl/gemm_dmma.cl's f64 ones too), against a host reference. It is asked only on devices whose
 * driver reports a compute capability of 8.0 or more (the PTX target with mma.sync's TF32
 * shapes, cp.async and ldmatrix); anywhere else the answer is no without a build. The answer
 * is kept in the context and in the disk cache (tc_answer.c).
 *
 * OCAL_GEMM_TC_EMULATE=1 (tests only) builds the probe and the kernels with -DMMA_EMULATE=1:
 * the three instructions emulated in OpenCL C, everything else real, on any device. PoCL then
 * runs the engines' host code, the probe and the kernels' indexing, edges and epilogue. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor_cores.h"

#define FUNC "ocal_gemm"
#define TC_THREADS 256 /* the mma.sync kernel's work-group */

/* Spellings a device's compiler may need (the probe tries them in order and keeps the first
 * that builds): clang's OpenCL C knows `__asm__` and the forced-inline attribute; the asm
 * keyword and plain `inline` are the fallbacks. */
static const char *const extras[OCAL__TC_SPELLING_COUNT] = {
    "", " -DASM_KW=asm", " -DINL=inline", " -DASM_KW=asm -DINL=inline"};

typedef struct tc_state {
  pthread_mutex_t lock;
  int known;           /* the answer below is set */
  ocal__tc_answer ans; /* ok: TF32 tensor cores usable; f16, bf16; wgmma bits; extra */
  int from_disk;       /* the answer came from the disk cache */
  unsigned probes;     /* probe kernels this context ran (tests check a cached answer runs none) */
  char detail[512];
} tc_state;

static void state_destroy(void *p) {
  tc_state *st = p;
  pthread_mutex_destroy(&st->lock);
  free(st);
}

static ocal_status state_create(ocal_context ctx, void **out) {
  (void)ctx;
  tc_state *st = calloc(1, sizeof *st);
  if (!st) return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, FUNC, "no memory for the tensor-core state");
  if (pthread_mutex_init(&st->lock, NULL) != 0) {
    free(st);
    return ocal__fail(OCAL_INTERNAL, FUNC, "pthread_mutex_init failed");
  }
  *out = st;
  return OCAL_OK;
}

int ocal__tc_emulated(ocal_context ctx) { return ctx->settings.gemm_tc_emulate == 1; }

/* The build options every kernel of a context gets: the emulation (a tests-only setting) and
 * the spelling the probe found. */
static void spelling(int emulate, int extra, char *out, size_t size) {
  snprintf(out, size, "%s%s", emulate ? " -DMMA_EMULATE=1" : "", extras[extra]);
}

/* ---- host helpers ---------------------------------------------------------------------- */

static uint32_t fbits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static float bitsf(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
/* f32 -> TF32 as cvt.rna.tf32.f32 does: to nearest, ties away from zero (Inf, NaN kept). */
static float tf32_round(float x) {
  uint32_t u = fbits(x);
  if ((u & 0x7f800000u) == 0x7f800000u) return x;
  return bitsf((u + 0x1000u) & 0xffffe000u);
}
/* f32 -> TF32 by truncation (the low 13 bits dropped), what the tensor cores do with the f32
 * operands the wgmma kernel gives them. */
static float tf32_truncate(float x) {
  uint32_t u = fbits(x);
  if ((u & 0x7f800000u) == 0x7f800000u) return x;
  return bitsf(u & 0xffffe000u);
}
static uint16_t to_half(float f) { /* small integers only: exact */
  uint32_t u = fbits(f), s = (u >> 16) & 0x8000u;
  if ((u & 0x7fffffffu) == 0) return (uint16_t)s;
  int e = (int)((u >> 23) & 0xff) - 127 + 15;
  return (uint16_t)(s | (uint32_t)e << 10 | ((u >> 13) & 0x3ffu));
}
static uint16_t to_bf16(float f) { return (uint16_t)(fbits(f) >> 16); } /* exact for them */

static uint64_t rng_next(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 0x2545f4914f6cdd1dull;
}
static double rng_unit(uint64_t *s) { /* [-1, 1) */
  return (double)(rng_next(s) >> 11) / (double)(1ull << 53) * 2.0 - 1.0;
}

static ocal_status make_buffer(ocal_context ctx, size_t bytes, const void *host, cl_mem *out) {
  cl_int err;
  *out = clCreateBuffer(ocal__context_cl(ctx), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes,
                        (void *)host, &err);
  if (err != CL_SUCCESS)
    return ocal__cl_fail(ocal__context_info(ctx)->name, err, "clCreateBuffer", FUNC);
  return OCAL_OK;
}

/* ---- the probe ---------------------------------------------------------------------------- */

/* ocal_mma_probe's inputs and the bits it must return (see cl/gemm_mma.cl). Returns 0 and
 * the verdicts, or a status when OpenCL failed. */
static ocal_status run_probe_kernel(ocal_context ctx, ocal__kernel *k, int *tf32_ok,
                                    int *f16_ok, int *bf16_ok, int *cvt_ok, int *addr_ok) {
  uint64_t seed = 0x7466333270726f62ull;
  float a32[128], b32[64], cv[32];
  uint16_t ah[256], bh[128], ahb[256], bhb[128];
  double ra[256], rb[128], rab[256], rbb[128];
  for (int i = 0; i < 128; i++) a32[i] = (float)(int)(rng_unit(&seed) * 9.0);
  for (int i = 0; i < 64; i++) b32[i] = (float)(int)(rng_unit(&seed) * 9.0);
  for (int i = 0; i < 256; i++) {
    ra[i] = (int)(rng_unit(&seed) * 9.0), ah[i] = to_half((float)ra[i]);
    rab[i] = (int)(rng_unit(&seed) * 9.0), ahb[i] = to_bf16((float)rab[i]);
  }
  for (int i = 0; i < 128; i++) {
    rb[i] = (int)(rng_unit(&seed) * 9.0), bh[i] = to_half((float)rb[i]);
    rbb[i] = (int)(rng_unit(&seed) * 9.0), bhb[i] = to_bf16((float)rbb[i]);
  }
  /* Around every rounding case of the low 13 bits: exact, below, at and above the tie,
   * carries into the exponent, negatives, a subnormal. */
  static const uint32_t low[8] = {0x0000, 0x0fff, 0x1000, 0x1001, 0x1fff, 0x0001, 0x17ff, 0x1800};
  for (int i = 0; i < 32; i++) {
    uint32_t hi = i < 16 ? 0x3f800000u + ((uint32_t)i << 13) : 0x40ffe000u + ((uint32_t)i << 23);
    uint32_t u = (hi & 0xffffe000u) | low[i % 8];
    if (i == 30) u = 0x3fffffffu;
    if (i == 31) u = 0x00001fffu;
    if (i & 4) u |= 0x80000000u;
    cv[i] = bitsf(u);
  }
  const void *hosts[7] = {a32, b32, ah, bh, ahb, bhb, cv};
  const size_t sizes[7] = {sizeof a32, sizeof b32, sizeof ah, sizeof bh,
                           sizeof ahb, sizeof bhb, sizeof cv};
  cl_mem mem[8] = {NULL};
  uint32_t out[419];
  memset(out, 0xff, sizeof out);
  ocal_status s = OCAL_OK;
  for (int i = 0; i < 7 && s == OCAL_OK; i++) s = make_buffer(ctx, sizes[i], hosts[i], &mem[i]);
  if (s == OCAL_OK) s = make_buffer(ctx, sizeof out, out, &mem[7]);
  if (s == OCAL_OK) {
    ocal__arg args[8];
    for (int i = 0; i < 8; i++) args[i] = OCAL__ARG(mem[i]);
    size_t g[1] = {32}, l[1] = {32};
    s = ocal__kernel_run_nd(ctx, k, 1, g, l, 8, args, FUNC);
  }
  if (s == OCAL_OK) {
    cl_int err = clEnqueueReadBuffer(ocal__context_queue(ctx), mem[7], CL_TRUE, 0, sizeof out,
                                     out, 0, NULL, NULL);
    if (err != CL_SUCCESS)
      s = ocal__cl_fail(ocal__context_info(ctx)->name, err, "clEnqueueReadBuffer", FUNC);
  }
  for (int i = 0; i < 8; i++)
    if (mem[i]) clReleaseMemObject(mem[i]);
  if (s != OCAL_OK) return s;
  int bad[3] = {0, 0, 0};
  for (int part = 0; part < 3; part++)
    for (int i = 0; i < 16; i++)
      for (int j = 0; j < 8; j++) {
        double sum = 0;
        if (part == 0)
          for (int kk = 0; kk < 8; kk++) sum += (double)a32[i * 8 + kk] * b32[kk * 8 + j];
        else if (part == 1)
          for (int kk = 0; kk < 16; kk++) sum += ra[i * 16 + kk] * rb[kk * 8 + j];
        else
          for (int kk = 0; kk < 16; kk++) sum += rab[i * 16 + kk] * rbb[kk * 8 + j];
        if (fbits((float)sum) != out[part * 128 + i * 8 + j]) bad[part]++;
      }
  int cvt_bad = 0;
  for (int i = 0; i < 32; i++)
    if (out[384 + i] != fbits(tf32_round(cv[i]))) cvt_bad++;
  *tf32_ok = !bad[0];
  *f16_ok = !bad[1];
  *bf16_ok = !bad[2];
  *cvt_ok = !cvt_bad;
  *addr_ok = out[418] == 0x5eed0000u;
  return OCAL_OK;
}

/* The wgmma builds the probe checks, each instruction width once: 1, the cp.async build in
 * blocks of 128 x 256; 2 and 3, the TMA build in blocks of 128 x 128 and 128 x 64. */
static unsigned wgmma_bn(int wgmma) { return wgmma == 1 ? 256u : wgmma == 2 ? 128u : 64u; }

/* One GEMM of the engine's variant (VEC, cp.async, ldmatrix, 4 stages) with edges in m, n
 * and k, against a double-precision product of the TF32-rounded inputs; or (wgmma 1 to 3) one
 * of a wgmma build (wgmma_bn), B packed, with edges of its tiles, against the truncated
 * inputs. The bound is the one tests/check_gemm_tc.c states: (k + 8) 2^-23 of
 * |alpha| sum |a b| + |beta c|. */
static ocal_status run_probe_gemm(ocal_context ctx, const char *spell, int wgmma, int *ok,
                                  double *worst) {
  const size_t M = 136, N = wgmma ? 264 : 72, K = wgmma ? 72 : 44;
  const size_t sa = sizeof(float) * M * K, sb = sizeof(float) * K * N,
               sc = sizeof(float) * M * N;
  float *ha = malloc(sa), *hb = malloc(sb), *hc = malloc(sc);
  double *r = malloc(sizeof(double) * M * N), *bd = malloc(sizeof(double) * M * N);
  *ok = 0;
  *worst = 0;
  ocal_status s = OCAL_OK;
  cl_mem ma = NULL, mb = NULL, mc = NULL;
  if (!ha || !hb || !hc || !r || !bd) {
    s = ocal__fail(OCAL_OUT_OF_HOST_MEMORY, FUNC, "no memory for the tensor-core probe");
    goto done;
  }
  uint64_t seed = 0x6d6d612d67656d6dull;
  for (size_t i = 0; i < M * K; i++) ha[i] = (float)rng_unit(&seed);
  for (size_t i = 0; i < K * N; i++) hb[i] = (float)rng_unit(&seed);
  for (size_t i = 0; i < M * N; i++) hc[i] = (float)rng_unit(&seed);
  const double alpha = 1.5, beta = -0.5;
  for (size_t i = 0; i < M; i++)
    for (size_t j = 0; j < N; j++) {
      double sum = 0, mag = 0;
      for (size_t p = 0; p < K; p++) {
        double x = wgmma ? (double)tf32_truncate(ha[i * K + p]) *
                               tf32_truncate(hb[p * N + j])
                         : (double)tf32_round(ha[i * K + p]) * tf32_round(hb[p * N + j]);
        sum += x;
        mag += fabs(x);
      }
      r[i * N + j] = alpha * sum + beta * hc[i * N + j];
      bd[i * N + j] = fabs(alpha) * mag + fabs(beta * hc[i * N + j]);
    }
  if ((s = make_buffer(ctx, sa, ha, &ma)) != OCAL_OK ||
      (s = make_buffer(ctx, sb, hb, &mb)) != OCAL_OK ||
      (s = make_buffer(ctx, sc, hc, &mc)) != OCAL_OK)
    goto done;
  ocal__tc_launch L = {OCAL_F32, 0, 0, M, N, K, 1, ma, mb, mc, 0, K, 0, 0, N, 0, 0, N, 0,
                 (float)alpha, (float)beta, K, 1, 0};
  int not_built;
  s = wgmma ? ocal__gemm_wgmma_run(ctx, &L, wgmma >= 2, wgmma_bn(wgmma), &not_built)
            : ocal__gemm_tc_enqueue(ctx, spell, &L, &not_built);
  if (s != OCAL_OK) {
    if (not_built) { /* a kernel that does not build: the answer is no, *worst < 0 says why */
      s = OCAL_OK;
      *worst = -1;
    }
    goto done;
  }
  cl_int err = clEnqueueReadBuffer(ocal__context_queue(ctx), mc, CL_TRUE, 0, sc, hc, 0, NULL,
                                   NULL);
  if (err != CL_SUCCESS) {
    s = ocal__cl_fail(ocal__context_info(ctx)->name, err, "clEnqueueReadBuffer", FUNC);
    goto done;
  }
  double tol = (double)(K + 8) * ldexp(1.0, -23);
  *ok = 1;
  for (size_t i = 0; i < M * N; i++) {
    double e = fabs(hc[i] - r[i]) / (bd[i] + 1e-30);
    if (!(e <= tol)) *ok = 0; /* NaN fails too */
    if (e > *worst || e != e) *worst = e;
  }
  *worst /= tol;
done:
  if (ma) clReleaseMemObject(ma);
  if (mb) clReleaseMemObject(mb);
  if (mc) clReleaseMemObject(mc);
  free(ha), free(hb), free(hc), free(r), free(bd);
  return s;
}

/* One f16 (or bf16) GEMM of the engine's 16-bit variant, C in the same type: 136 x 72 x 48
 * (VEC, cp.async; wgmma as run_probe_gemm's), alpha 1.5, beta -0.5, against a double product of the inputs; the bound
 * adds the output's rounding (2^-11 f16, 2^-8 bf16, relative; 2^-25 absolute for f16's
 * subnormals) to (k + 8) 2^-23 of |alpha| sum |a b| + |beta c|. */
static ocal_status run_probe_gemm_half(ocal_context ctx, const char *spell, ocal_dtype dtype,
                                       int wgmma, int *ok) {
  const size_t M = 136, N = wgmma ? 264 : 72, K = wgmma ? 72 : 48;
  const size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N;
  float *f = malloc(sizeof(float) * (na + nb + nc) * 2);
  uint16_t *h = malloc(sizeof(uint16_t) * (na + nb + nc));
  *ok = 0;
  ocal_status s = OCAL_OK;
  cl_mem ma = NULL, mb = NULL, mc = NULL;
  if (!f || !h) {
    s = ocal__fail(OCAL_OUT_OF_HOST_MEMORY, FUNC, "no memory for the tensor-core probe");
    goto done;
  }
  uint64_t seed = 0x68616c662d6d6d61ull;
  for (size_t i = 0; i < na + nb + nc; i++) f[i] = (float)rng_unit(&seed);
  /* The inputs as the device sees them: encoded, then decoded back (exact). */
  if ((s = ocal_half_encode(dtype, f, h, na + nb + nc)) != OCAL_OK ||
      (s = ocal_half_decode(dtype, h, f, na + nb + nc)) != OCAL_OK)
    goto done;
  const float *a = f, *b = f + na, *c0 = f + na + nb;
  float *got = f + na + nb + nc;
  if ((s = make_buffer(ctx, na * 2, h, &ma)) != OCAL_OK ||
      (s = make_buffer(ctx, nb * 2, h + na, &mb)) != OCAL_OK ||
      (s = make_buffer(ctx, nc * 2, h + na + nb, &mc)) != OCAL_OK)
    goto done;
  const double alpha = 1.5, beta = -0.5;
  ocal__tc_launch L = {dtype, 0, 0, M, N, K, 1, ma, mb, mc, 0, K, 0, 0, N, 0, 0, N, 0,
                 (float)alpha, (float)beta, K, 1, 0};
  int not_built;
  s = wgmma ? ocal__gemm_wgmma_run(ctx, &L, wgmma >= 2, wgmma_bn(wgmma), &not_built)
            : ocal__gemm_tc_enqueue(ctx, spell, &L, &not_built);
  if (s != OCAL_OK) {
    if (wgmma && not_built) s = OCAL_OK; /* does not build: the answer is no */
    goto done;
  }
  cl_int err = clEnqueueReadBuffer(ocal__context_queue(ctx), mc, CL_TRUE, 0, nc * 2,
                                   h + na + nb, 0, NULL, NULL);
  if (err != CL_SUCCESS) {
    s = ocal__cl_fail(ocal__context_info(ctx)->name, err, "clEnqueueReadBuffer", FUNC);
    goto done;
  }
  if ((s = ocal_half_decode(dtype, h + na + nb, got, nc)) != OCAL_OK) goto done;
  double u = dtype == OCAL_F16 ? ldexp(1.0, -11) : ldexp(1.0, -8);
  double tiny = dtype == OCAL_F16 ? ldexp(1.0, -25) : 0.0;
  *ok = 1;
  for (size_t i = 0; i < M; i++)
    for (size_t j = 0; j < N; j++) {
      double sum = 0, mag = 0;
      for (size_t p = 0; p < K; p++) {
        double x = (double)a[i * K + p] * b[p * N + j];
        sum += x;
        mag += fabs(x);
      }
      double ref = alpha * sum + beta * c0[i * N + j];
      double bound = fabs(alpha) * mag + fabs(beta * c0[i * N + j]);
      double e = fabs(got[i * N + j] - ref);
      double f32_term = (K + 8) * ldexp(1.0, -23) * bound;
      if (!(e <= f32_term * (1 + u) + u * fabs(ref) + tiny)) *ok = 0;
    }
done:
  if (ma) clReleaseMemObject(ma);
  if (mb) clReleaseMemObject(mb);
  if (mc) clReleaseMemObject(mc);
  free(f), free(h);
  return s;
}

/* One f64 GEMM of the engine's block `which` (OCAL__DMMA_*), 136 x 72 x 44, alpha 1.5,
 * beta -0.5, A and B not transposed (A's copies transpose, B's do not), against a host
 * product summed in double. The bound, (k + 8) 2^-52 of |alpha| sum |a b| + |beta c|, is
 * what double FMAs leave; any narrower arithmetic or a layout error is far above it. */
static ocal_status run_probe_gemm_f64(ocal_context ctx, const char *spell, int which, int *ok) {
  const size_t M = 136, N = 72, K = 44;
  const size_t na = M * K, nb = K * N, nc = M * N;
  double *h = malloc(sizeof(double) * (na + nb + 2 * nc));
  *ok = 0;
  ocal_status s = OCAL_OK;
  cl_mem ma = NULL, mb = NULL, mc = NULL;
  if (!h) return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, FUNC, "no memory for the tensor-core probe");
  uint64_t seed = 0x646d6d612d663634ull;
  for (size_t i = 0; i < na + nb + nc; i++) h[i] = rng_unit(&seed);
  const double *a = h, *b = h + na, *c0 = h + na + nb;
  double *got = h + na + nb + nc;
  if ((s = make_buffer(ctx, na * 8, a, &ma)) != OCAL_OK ||
      (s = make_buffer(ctx, nb * 8, b, &mb)) != OCAL_OK ||
      (s = make_buffer(ctx, nc * 8, c0, &mc)) != OCAL_OK)
    goto done;
  const double alpha = 1.5, beta = -0.5;
  ocal__tc_launch L = {OCAL_F64, 0, 0, M, N, K, 1, ma, mb, mc, 0, K, 0, 0, N, 0, 0, N, 0,
                       alpha, beta, K, 1, 0};
  int not_built;
  s = ocal__gemm_dmma_enqueue(ctx, spell, which, &L, &not_built);
  if (s != OCAL_OK) {
    if (not_built) s = OCAL_OK; /* does not build: the answer is no */
    goto done;
  }
  cl_int err = clEnqueueReadBuffer(ocal__context_queue(ctx), mc, CL_TRUE, 0, nc * 8, got, 0,
                                   NULL, NULL);
  if (err != CL_SUCCESS) {
    s = ocal__cl_fail(ocal__context_info(ctx)->name, err, "clEnqueueReadBuffer", FUNC);
    goto done;
  }
  *ok = 1;
  for (size_t i = 0; i < M; i++)
    for (size_t j = 0; j < N; j++) {
      double sum = 0, mag = 0;
      for (size_t p = 0; p < K; p++) {
        sum += a[i * K + p] * b[p * N + j];
        mag += fabs(a[i * K + p] * b[p * N + j]);
      }
      double ref = alpha * sum + beta * c0[i * N + j];
      double bound = fabs(alpha) * mag + fabs(beta * c0[i * N + j]);
      if (!(fabs(got[i * N + j] - ref) <= (double)(K + 8) * ldexp(1.0, -52) * bound)) *ok = 0;
    }
done:
  if (ma) clReleaseMemObject(ma);
  if (mb) clReleaseMemObject(mb);
  if (mc) clReleaseMemObject(mc);
  free(h);
  return s;
}

/* Runs the probe (st locked, answer unknown). Sets the answer; never fails the caller: a
 * probe that cannot run is a "no" with the reason in detail. */
static void probe(ocal_context ctx, tc_state *st) {
  const ocal_device_info *d = ocal__context_info(ctx);
  unsigned cc = ocal__context_compute_capability(ctx);
  memset(&st->ans, 0, sizeof st->ans);
  if (!ocal__tc_emulated(ctx) && cc < 80) {
    snprintf(st->detail, sizeof st->detail,
             "no tensor cores: %.80s reports %s, and the kernels' mma.sync TF32 shape, "
             "cp.async and ldmatrix need 8.0 or more (probe not built)",
             d->name, cc ? "compute capability below 8.0" : "no compute capability");
    return; /* a fact of the device: nothing to cache */
  }
  if (d->max_work_group_size < TC_THREADS) {
    snprintf(st->detail, sizeof st->detail,
             "no tensor cores: work-groups of %zu items at most, the kernels need %d",
             d->max_work_group_size, TC_THREADS);
    return;
  }
  if (ocal__tc_answer_load(ctx, &st->ans)) {
    const ocal__tc_answer *a = &st->ans;
    st->from_disk = 1;
    snprintf(st->detail, sizeof st->detail, "%s (f16 %s, bf16 %s, f64 %s, wgmma %s; the probe's "
             "answer for this device and driver, from the disk cache)",
             a->ok ? "tensor cores (tf32, mma.sync m16n8k8): probe passed"
                   : "no tensor cores: the probe failed",
             a->f16 ? "passed" : "failed", a->bf16 ? "passed" : "failed",
             a->f64 ? "passed" : "failed",
             (a->wgmma & 7) != 7         ? (a->wgmma ? "passed in part" : "no")
             : (a->wgmma & OCAL__WG_TMA) ? "passed, its TMA build too"
                                         : "passed");
    return;
  }
  /* The probe runs in a context of its own on the same device (and disk cache): a kernel
   * that faults there (a driver that takes the PTX but runs it wrongly) loses that context,
   * not the caller's. */
  int emulate = ocal__tc_emulated(ctx);
  char sel[32];
  snprintf(sel, sizeof sel, "%d:%d", d->platform_index, d->device_index);
  ocal_context_options o;
  ocal_context_options_init(&o);
  o.device = sel;
  o.cache_dir = ocal__context_cache_dir(ctx);
  o.disk_cache = o.cache_dir != NULL;
  ocal_context pctx = NULL;
  if (ocal_context_create(&o, &pctx) != OCAL_OK) {
    snprintf(st->detail, sizeof st->detail,
             "no tensor cores: no context for the probe on %.80s (%.120s)", d->name,
             ocal_last_error());
    return;
  }
  /* Build the probe with the first spelling the compiler takes. */
  ocal__kernel *k = NULL;
  ocal_status s = OCAL_UNSUPPORTED;
  char msg[160] = "", spell[64] = "";
  size_t tries = emulate ? 1 : OCAL__TC_SPELLING_COUNT;
  for (size_t e = 0; e < tries && s != OCAL_OK; e++) {
    char options[96];
    spelling(emulate, (int)e, spell, sizeof spell);
    snprintf(options, sizeof options, "-DMMA_TF32%s", spell);
    s = ocal__library_kernel_from(pctx, "gemm_mma", options, "ocal_mma_probe", &k, NULL, FUNC);
    if (s == OCAL_OK) st->ans.extra = (int)e;
    else if (e == 0) snprintf(msg, sizeof msg, "%.150s", ocal_last_error());
  }
  st->from_disk = 0;
  if (s != OCAL_OK) {
    ocal_context_release(pctx);
    snprintf(st->detail, sizeof st->detail,
             "no tensor cores: the probe does not build on this device (%s)", msg);
    ocal__tc_answer_store(ctx, &st->ans);
    return;
  }
  int tf32 = 0, f16 = 0, bf16 = 0, cvt = 0, addr = 0, gemm = 0;
  double worst = 0;
  st->probes++;
  s = run_probe_kernel(pctx, k, &tf32, &f16, &bf16, &cvt, &addr);
  if (s == OCAL_OK && tf32 && cvt && addr) s = run_probe_gemm(pctx, spell, 0, &gemm, &worst);
  /* Hopper's wgmma (sm_90a, compute capability 9.0 exactly: later GPUs dropped it), through
   * the PTX retargeting of src/core/ptx.c: one GEMM check of each build the engine runs. */
  int wgmma = 0;
  double wgmma_worst = 0;
  char wg[200] = "not for this device";
  if (s == OCAL_OK && gemm && !emulate && cc == 90) {
    s = run_probe_gemm(pctx, spell, 1, &wgmma, &wgmma_worst);
    if (wgmma)
      snprintf(wg, sizeof wg, "passed, worst error %.3g", wgmma_worst);
    else if (wgmma_worst < 0)
      snprintf(wg, sizeof wg, "does not build: %.150s", ocal_last_error());
    else
      snprintf(wg, sizeof wg, "failed its GEMM check");
  }
  /* wgmma for f16 and bf16 (the same kernel, 16-bit operands): one GEMM check each. */
  int wg_f16 = 0, wg_bf16 = 0;
  if (s == OCAL_OK && wgmma && f16) s = run_probe_gemm_half(pctx, spell, OCAL_F16, 1, &wg_f16);
  if (s == OCAL_OK && wgmma && bf16)
    s = run_probe_gemm_half(pctx, spell, OCAL_BF16, 1, &wg_bf16);
  if (wgmma && (!wg_f16 || !wg_bf16))
    snprintf(wg + strlen(wg), sizeof wg - strlen(wg), "; f16 %s, bf16 %s",
             wg_f16 ? "passed" : "failed", wg_bf16 ? "passed" : "failed");
  /* The TMA build, last: its tensor maps are built on the device, and a fault there is no
   * reason to refuse the cp.async build. It must pass for every type whose wgmma passed. */
  int tma = 0;
  if (s == OCAL_OK && wgmma) {
    double tma_worst = 0;
    ocal_status ts = OCAL_OK;
    tma = 1;
    for (int w = 2; w <= 3 && ts == OCAL_OK && tma; w++) {
      ts = run_probe_gemm(pctx, spell, w, &tma, &tma_worst);
      if (ts == OCAL_OK && tma && f16 && wg_f16)
        ts = run_probe_gemm_half(pctx, spell, OCAL_F16, w, &tma);
      if (ts == OCAL_OK && tma && bf16 && wg_bf16)
        ts = run_probe_gemm_half(pctx, spell, OCAL_BF16, w, &tma);
    }
    if (ts != OCAL_OK) tma = 0;
    snprintf(wg + strlen(wg), sizeof wg - strlen(wg), "; TMA %s",
             tma ? "passed" : ts != OCAL_OK ? "did not run" : "failed");
  }
  /* The 16-bit kernels: their products were exact above; one GEMM each of the variant the
   * engine runs (the address mode and ldmatrix are shared with TF32's). */
  int f16_gemm = 0, bf16_gemm = 0;
  if (s == OCAL_OK && f16 && addr) s = run_probe_gemm_half(pctx, spell, OCAL_F16, 0, &f16_gemm);
  if (s == OCAL_OK && bf16 && addr)
    s = run_probe_gemm_half(pctx, spell, OCAL_BF16, 0, &bf16_gemm);
  f16 = f16 && f16_gemm;
  bf16 = bf16 && bf16_gemm;
  /* The f64 kernel, each of the engine's blocks (its PTX shares only the address mode). */
  int f64 = addr && d->has_fp64;
  for (int b = 0; b < OCAL__DMMA_BLOCKS && s == OCAL_OK && f64; b++)
    s = run_probe_gemm_f64(pctx, spell, b, &f64);
  if (s != OCAL_OK) f64 = 0;
  if (s != OCAL_OK) {
    /* A run that failed (not a wrong answer) may be a passing fault of the driver: the
     * answer is kept for this context only. */
    snprintf(st->detail, sizeof st->detail, "no tensor cores: the probe failed to run (%.150s)",
             ocal_last_error());
    ocal_context_release(pctx);
    return;
  }
  ocal_context_release(pctx);
  ocal__tc_answer *a = &st->ans;
  a->ok = tf32 && cvt && addr && gemm;
  a->f16 = f16;
  a->bf16 = bf16;
  a->f64 = f64;
  a->wgmma = a->ok && wgmma ? OCAL__WG_TF32 | (f16 && wg_f16 ? OCAL__WG_F16 : 0) |
                                  (bf16 && wg_bf16 ? OCAL__WG_BF16 : 0) |
                                  (tma ? OCAL__WG_TMA : 0)
                            : 0;
  if (a->ok)
    snprintf(st->detail, sizeof st->detail,
             "tensor cores (tf32, mma.sync m16n8k8): probe passed%s (TF32 GEMM check worst "
             "error %.3g of its bound; f16 %s, bf16 %s, f64 %s; wgmma %s)",
             emulate ? " in emulation (OCAL_GEMM_TC_EMULATE)" : "", worst,
             f16 ? "passed" : "failed", bf16 ? "passed" : "failed", f64 ? "passed" : "failed",
             wg);
  else
    snprintf(st->detail, sizeof st->detail,
             "no tensor cores: the probe ran but %s", !tf32   ? "the TF32 mma product was wrong"
                                                     : !cvt  ? "cvt.rna.tf32 rounded differently"
                                                     : !addr ? "the __local address mode failed"
                                                             : "its GEMM check failed");
  ocal__tc_answer_store(ctx, &st->ans);
}

static ocal_status get_state(ocal_context ctx, tc_state **out) {
  static const int key = 0;
  void *data = NULL;
  ocal_status s = ocal__context_attachment(ctx, &key, state_create, state_destroy, &data, FUNC);
  *out = data;
  return s;
}

/* The state of ctx with the probe's answer known (it runs on first use). NULL when the
 * context has no memory for it. */
static tc_state *known_state(ocal_context ctx) {
  tc_state *st;
  if (get_state(ctx, &st) != OCAL_OK) return NULL;
  pthread_mutex_lock(&st->lock);
  if (!st->known) {
    probe(ctx, st);
    st->known = 1;
  }
  pthread_mutex_unlock(&st->lock);
  return st;
}

int ocal__tc_probe_passed(ocal_context ctx, ocal_dtype dtype) {
  tc_state *st = known_state(ctx);
  if (!st) return 0;
  pthread_mutex_lock(&st->lock);
  int ok = dtype == OCAL_F32    ? st->ans.ok
           : dtype == OCAL_F16  ? st->ans.f16
           : dtype == OCAL_BF16 ? st->ans.bf16
           : dtype == OCAL_F64  ? st->ans.f64
                                : 0;
  pthread_mutex_unlock(&st->lock);
  return ok;
}

/* The wgmma checks that passed (OCAL__WG_* bits); 0 before the probe ran. */
static int wgmma_bits(ocal_context ctx) {
  tc_state *st = known_state(ctx);
  if (!st) return 0;
  pthread_mutex_lock(&st->lock);
  int bits = st->ans.wgmma;
  pthread_mutex_unlock(&st->lock);
  return bits;
}

int ocal__tc_probe_wgmma_passed(ocal_context ctx, ocal_dtype dtype) {
  int bit = dtype == OCAL_F32 ? OCAL__WG_TF32 : dtype == OCAL_F16 ? OCAL__WG_F16
                                             : dtype == OCAL_BF16 ? OCAL__WG_BF16 : 0;
  return (wgmma_bits(ctx) & bit) != 0;
}

int ocal__tc_probe_wgmma_tma_passed(ocal_context ctx) {
  return (wgmma_bits(ctx) & OCAL__WG_TMA) != 0;
}

void ocal__tc_spelling(ocal_context ctx, char *out, size_t size) {
  tc_state *st = known_state(ctx);
  int extra = 0;
  if (st) {
    pthread_mutex_lock(&st->lock);
    extra = st->ans.extra;
    pthread_mutex_unlock(&st->lock);
  }
  spelling(ocal__tc_emulated(ctx), extra, out, size);
}

ocal_status ocal__gemm_tc_answer(ocal_context ctx, int *ok, const char **detail,
                                 int *from_disk, unsigned *probes) {
  tc_state *st;
  ocal_status s = get_state(ctx, &st);
  if (s != OCAL_OK) return s;
  known_state(ctx);
  pthread_mutex_lock(&st->lock);
  if (ok) *ok = st->ans.ok;
  if (detail) *detail = st->detail; /* fixed once known: valid while the context lives */
  if (from_disk) *from_disk = st->from_disk;
  if (probes) *probes = st->probes;
  pthread_mutex_unlock(&st->lock);
  return OCAL_OK;
}
