/* ocal — GEMM on tensor cores (cl/gemm_mma.cl: mma.sync through inline PTX), and the probe
 * that decides whether a device runs it.
 *
 * Why an engine of its own: f32 GEMMs on a context whose precision is TF32
 * (OCAL_GEMM_PRECISION=tf32 or the gemm_precision option; the default stays exact IEEE FP32)
 * may round A and B to TF32 and multiply on NVIDIA's tensor cores, 2.5x ocal's best FP32
 * kernel on an H100. docs/tensor-cores.md has the kernels' design and their measurements;
 * the variant built here is round 2's best, `tf32_ldm_s4` (128 x 128 blocks, k step 8, four
 * cp.async stages, ldmatrix for the k-contiguous operands, blocks rasterised by 8 rows):
 * 113-117 TFLOP/s at 4096^3 and 8192^3 on an H100 (PyTorch TF32 395-401). Outputs of fewer
 * tiles than compute units split k (tc_run).
 *
 * The probe: nothing about a device's name or vendor says whether its compiler takes inline
 * PTX and its hardware runs these instructions bit for bit as the kernels assume, so the probe
 * builds cl/gemm_mma.cl and runs it: ocal_mma_probe (one m16n8k8 TF32, one m16n8k16 f16 and
 * bf16 product of small integers, exact in f32; 32 f32 -> TF32 conversions at every rounding
 * case; the __local address round trip that cp.async and ldmatrix rely on), then one small
 * GEMM of the variant the engine runs, against a host reference. It is asked only on devices
 * whose driver reports a compute capability of 8.0 or more (limits.c: the PTX target that has
 * mma.sync's TF32 shapes, cp.async and ldmatrix); anywhere else the answer is no without a
 * build (PoCL, Mesa, other vendors, older GPUs). The answer is kept in the context and in the
 * disk cache beside the kernel binaries, keyed like them (platform, device, driver, ocal
 * version, the kernel source): a later context or process reads it instead of probing. A
 * cache file that is not exactly what ocal writes is ignored and the probe runs again.
 *
 * OCAL_GEMM_TC_EMULATE=1 (tests only) builds the probe and the kernels with -DMMA_EMULATE=1:
 * the three instructions emulated in OpenCL C, everything else real, on any device. PoCL then
 * runs this engine's host code, the probe and the kernels' indexing, edges and epilogue. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

#define FUNC "ocal_gemm"
/* The kernel's block and work-group (cl/gemm_mma.cl: 8 warps of 32 as 2 x 4). */
#define TC_BM 128
#define TC_BN 128
#define TC_THREADS 256
/* What the kernel's local tiles may take: NVIDIA's 48 KiB a work-group, or less where the
 * device (or OCAL_LIMITS) has less; stages that do not fit are dropped at build time. */
#define TC_LOCAL_MAX 49152u
#define TC_LOCAL_RESERVE 1024u /* bytes kept free of stages (see variant_options) */

/* Spellings a device's compiler may need (the probe tries them in order and keeps the first
 * that builds): clang's OpenCL C knows `__asm__` and the forced-inline attribute; the asm
 * keyword of NVIDIA's first test, and plain `inline`, are the fallbacks. */
static const char *const extras[] = {"", " -DASM_KW=asm", " -DINL=inline",
                                     " -DASM_KW=asm -DINL=inline"};
#define NEXTRAS (sizeof extras / sizeof extras[0])

enum { WG_TF32 = 1, WG_F16 = 2, WG_BF16 = 4 };

typedef struct tc_state {
  pthread_mutex_t lock;
  int known;       /* the answer below is set */
  int ok;          /* TF32 tensor cores usable */
  int f16, bf16;   /* the probe's f16 and bf16 products were exact (for later engines) */
  int wgmma;       /* the wgmma kernel's GEMM checks that passed (compute capability 9.0):
                      WG_TF32 | WG_F16 | WG_BF16 */
  int extra;       /* index into extras[] */
  int from_disk;   /* the answer came from the disk cache */
  unsigned probes; /* probe kernels this context ran (tests check a cached answer runs none) */
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

static int emulated(ocal_context ctx) { return ctx->settings.gemm_tc_emulate == 1; }

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
float ocal__tf32_round(float x) {
  uint32_t u = fbits(x);
  if ((u & 0x7f800000u) == 0x7f800000u) return x;
  return bitsf((u + 0x1000u) & 0xffffe000u);
}
float ocal__tf32_truncate(float x) {
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

/* ---- the launcher (the engine and the probe's GEMM) ------------------------------------- */


/* The build options of the variant for a call: `tf32_ldm_s4` where every operand is 16-byte
 * aligned (VEC: offsets, leading dimensions and batch strides multiples of 4 elements), else
 * its register-staged two-stage form (the same tile, element-wise edges). */
static void variant_options(ocal_context ctx, const char *spell, const ocal__tc_launch *L, char *out,
                            size_t size) {
  /* 16 bytes of elements: 4 f32 or 8 f16/bf16. */
  size_t w = L->dtype == OCAL_F32 ? 4 : 8;
  int vec = L->lda % w == 0 && L->ldb % w == 0 && L->ldc % w == 0 && L->a_off % w == 0 &&
            L->b_off % w == 0 && L->c_off % w == 0 && L->a_stride % w == 0 &&
            L->b_stride % w == 0 && L->c_stride % w == 0;
  uint64_t local = ocal__context_info(ctx)->local_mem_bytes;
  unsigned local_max = local < TC_LOCAL_MAX ? (unsigned)local : TC_LOCAL_MAX;
  /* The stages must leave room for what the compiler adds to the kernel's own local memory:
   * on the H100 (driver 580) the NT variant's four stages of exactly 49152 bytes came out at
   * 49168 and did not launch. The other transposes stay at four stages within this margin. */
  local_max = local_max > TC_LOCAL_RESERVE ? local_max - TC_LOCAL_RESERVE : 0;
  if (L->dtype != OCAL_F32) {
    /* Round 1's `f16_cp_ldm` with 16-bit C (`_o16`): 128 x 128 x 32 blocks, two stages,
     * cp.async (VEC) and ldmatrix for both operands; 280 TFLOP/s at 4096^3 on an H100 with
     * f16 C (PyTorch f16 736), ahead of round 2's deeper pipelines. */
    const char *t = L->dtype == OCAL_F16 ? "F16" : "BF16";
    snprintf(out, size,
             "-DMMA_%s -DOUT_%s%s -DTA=%d -DTB=%d -DVEC=%d -DCP_ASYNC=%d -DLDMATRIX=1 "
             "-DLOCAL_MAX=%u",
             t, t, spell, L->ta, L->tb, vec, vec, local_max);
    return;
  }
  snprintf(out, size,
           "-DMMA_TF32%s -DTA=%d -DTB=%d -DVEC=%d -DCP_ASYNC=%d -DLDMATRIX=1 -DBM=%d -DBN=%d "
           "-DBK=8%s -DRASTER=8 -DLOCAL_MAX=%u",
           spell, L->ta, L->tb, vec, vec,
           TC_BM, TC_BN, vec ? " -DSTAGES=4" : "", local_max);
}

/* Builds (or finds) the variant and enqueues it. *not_built = 1 when it does not build or
 * takes fewer work-items than its 256 (nothing enqueued). */
static ocal_status tc_enqueue(ocal_context ctx, const char *spell, const ocal__tc_launch *L,
                              int *not_built) {
  char options[320];
  variant_options(ctx, spell, L, options, sizeof options);
  ocal__kernel *kern;
  *not_built = 0;
  ocal_status s =
      ocal__library_kernel_from(ctx, "gemm_mma", options, "ocal_gemm_mma", &kern, NULL, FUNC);
  if (s == OCAL_OK && kern->work_group_size < TC_THREADS)
    s = ocal__fail(OCAL_UNSUPPORTED, FUNC,
                   "the tensor-core kernel takes %zu work-items a group on %s, fewer than its %d",
                   kern->work_group_size, ocal__context_info(ctx)->name, TC_THREADS);
  if (s != OCAL_OK) {
    *not_built = 1;
    return s;
  }
  cl_ulong a_off = L->a_off, b_off = L->b_off, c_off = L->c_off;
  cl_ulong as = L->a_stride, bs = L->b_stride, cs = L->c_stride;
  cl_uint lda = (cl_uint)L->lda, ldb = (cl_uint)L->ldb, ldc = (cl_uint)L->ldc;
  cl_uint m = (cl_uint)L->m, n = (cl_uint)L->n, k = (cl_uint)L->k;
  cl_uint kc = (cl_uint)L->kc, slices = (cl_uint)L->slices;
  float alpha = L->alpha, beta = L->beta;
  cl_int read_c = L->beta != 0.0f;
  ocal__arg args[] = {OCAL__ARG(L->a), OCAL__ARG(a_off), OCAL__ARG(lda), OCAL__ARG(as),
                      OCAL__ARG(L->b), OCAL__ARG(b_off), OCAL__ARG(ldb), OCAL__ARG(bs),
                      OCAL__ARG(L->c), OCAL__ARG(c_off), OCAL__ARG(ldc), OCAL__ARG(cs),
                      OCAL__ARG(m),    OCAL__ARG(n),     OCAL__ARG(k),   OCAL__ARG(kc),
                      OCAL__ARG(slices), OCAL__ARG(alpha), OCAL__ARG(beta), OCAL__ARG(read_c)};
  size_t local[3] = {TC_THREADS, 1, 1};
  size_t global[3] = {ocal__ceil_div(L->n, TC_BN) * TC_THREADS, ocal__ceil_div(L->m, TC_BM),
                      L->batch * L->slices};
  return ocal__kernel_run_nd(ctx, kern, 3, global, local, sizeof args / sizeof args[0], args,
                             FUNC);
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
    if (out[384 + i] != fbits(ocal__tf32_round(cv[i]))) cvt_bad++;
  *tf32_ok = !bad[0];
  *f16_ok = !bad[1];
  *bf16_ok = !bad[2];
  *cvt_ok = !cvt_bad;
  *addr_ok = out[418] == 0x5eed0000u;
  return OCAL_OK;
}

/* One GEMM of the engine's variant (VEC, cp.async, ldmatrix, 4 stages) with edges in m, n
 * and k, against a double-precision product of the TF32-rounded inputs; or (wgmma) one of
 * the wgmma kernel, B packed, with edges of its 128 x 256 x 32 tile, against the truncated
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
        double x = wgmma ? (double)ocal__tf32_truncate(ha[i * K + p]) *
                               ocal__tf32_truncate(hb[p * N + j])
                         : (double)ocal__tf32_round(ha[i * K + p]) * ocal__tf32_round(hb[p * N + j]);
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
                 (float)alpha, (float)beta, K, 1};
  int not_built;
  s = wgmma ? ocal__gemm_wgmma_run(ctx, &L, &not_built) : tc_enqueue(ctx, spell, &L, &not_built);
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
 * (VEC, cp.async), alpha 1.5, beta -0.5, against a double product of the inputs; the bound
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
                 (float)alpha, (float)beta, K, 1};
  int not_built;
  s = wgmma ? ocal__gemm_wgmma_run(ctx, &L, &not_built) : tc_enqueue(ctx, spell, &L, &not_built);
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

/* The disk cache's record of an answer: this text exactly, nothing else accepted (a file
 * edited or made by anything but ocal is "no answer", and the probe runs again). */
#define ANSWER_FORMAT "ocal tensor-core probe 3\nok=%d f16=%d bf16=%d extra=%d wgmma=%d\n"

static char *answer_key(ocal_context ctx) {
  const char *src = NULL;
  for (size_t i = 0; i < ocal__source_count; i++)
    if (strcmp(ocal__sources[i].name, "gemm_mma") == 0) src = ocal__sources[i].text;
  if (!src) return NULL;
  return ocal__disk_cache_key(ctx, src,
                              emulated(ctx) ? "tensor-core probe answer, MMA_EMULATE=1"
                                            : "tensor-core probe answer");
}

static int load_answer(ocal_context ctx, tc_state *st) {
  const char *dir = ocal__context_cache_dir(ctx);
  if (!dir) return 0;
  char *key = answer_key(ctx);
  if (!key) return 0;
  unsigned char *bin = NULL;
  size_t size = 0;
  int rejected = 0, got = ocal__disk_cache_load(dir, key, &bin, &size, &rejected);
  free(key);
  if (!got) return 0;
  char text[96];
  int ok = -1, f16 = -1, bf16 = -1, extra = -1, wgmma = -1, used = 0;
  int good = size < sizeof text;
  if (good) {
    memcpy(text, bin, size);
    text[size] = '\0';
    good = strlen(text) == size &&
           sscanf(text, ANSWER_FORMAT "%n", &ok, &f16, &bf16, &extra, &wgmma, &used) == 5 &&
           (size_t)used == size && (ok == 0 || ok == 1) && (f16 == 0 || f16 == 1) &&
           (bf16 == 0 || bf16 == 1) && extra >= 0 && extra < (int)NEXTRAS &&
           wgmma >= 0 && wgmma <= 7;
  }
  if (good) {
    /* The text must be exactly what store_answer writes for these values. */
    char again[96];
    snprintf(again, sizeof again, ANSWER_FORMAT, ok, f16, bf16, extra, wgmma);
    good = strcmp(again, text) == 0;
  }
  free(bin);
  if (!good) return 0;
  st->ok = ok, st->f16 = f16, st->bf16 = bf16, st->extra = extra, st->wgmma = wgmma;
  st->from_disk = 1;
  snprintf(st->detail, sizeof st->detail, "%s (f16 %s, bf16 %s, wgmma %s; the probe's answer "
           "for this device and driver, from the disk cache)",
           ok ? "tensor cores (tf32, mma.sync m16n8k8): probe passed"
              : "no tensor cores: the probe failed",
           f16 ? "passed" : "failed", bf16 ? "passed" : "failed",
           wgmma == 7 ? "passed" : wgmma ? "passed in part" : "no");
  return 1;
}

static void store_answer(ocal_context ctx, const tc_state *st) {
  const char *dir = ocal__context_cache_dir(ctx);
  if (!dir) return;
  char *key = answer_key(ctx);
  if (!key) return;
  char text[96];
  int n = snprintf(text, sizeof text, ANSWER_FORMAT, st->ok, st->f16, st->bf16, st->extra,
                   st->wgmma);
  ocal__disk_cache_store(dir, key, (const unsigned char *)text, (size_t)n);
  free(key);
}

/* Runs the probe (st locked, answer unknown). Sets the answer; never fails the caller: a
 * probe that cannot run is a "no" with the reason in detail. */
static void probe(ocal_context ctx, tc_state *st) {
  const ocal_device_info *d = ocal__context_info(ctx);
  unsigned cc = ocal__context_compute_capability(ctx);
  st->ok = st->f16 = st->bf16 = st->wgmma = 0;
  st->extra = 0;
  if (!emulated(ctx) && cc < 80) {
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
  if (load_answer(ctx, st)) return;
  /* The probe runs in a context of its own on the same device (and disk cache): a kernel
   * that faults there (a driver that takes the PTX but runs it wrongly) loses that context,
   * not the caller's. */
  int emulate = emulated(ctx);
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
  size_t tries = emulate ? 1 : NEXTRAS;
  for (size_t e = 0; e < tries && s != OCAL_OK; e++) {
    char options[96];
    spelling(emulate, (int)e, spell, sizeof spell);
    snprintf(options, sizeof options, "-DMMA_TF32%s", spell);
    s = ocal__library_kernel_from(pctx, "gemm_mma", options, "ocal_mma_probe", &k, NULL, FUNC);
    if (s == OCAL_OK) st->extra = (int)e;
    else if (e == 0) snprintf(msg, sizeof msg, "%.150s", ocal_last_error());
  }
  st->from_disk = 0;
  if (s != OCAL_OK) {
    ocal_context_release(pctx);
    snprintf(st->detail, sizeof st->detail,
             "no tensor cores: the probe does not build on this device (%s)", msg);
    store_answer(ctx, st);
    return;
  }
  int tf32 = 0, f16 = 0, bf16 = 0, cvt = 0, addr = 0, gemm = 0;
  double worst = 0;
  st->probes++;
  s = run_probe_kernel(pctx, k, &tf32, &f16, &bf16, &cvt, &addr);
  if (s == OCAL_OK && tf32 && cvt && addr) s = run_probe_gemm(pctx, spell, 0, &gemm, &worst);
  /* Hopper's wgmma (sm_90a, compute capability 9.0 exactly: later GPUs dropped it), through
   * the PTX retargeting of src/core/ptx.c: one GEMM check of the kernel the engine runs. */
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
  if (s == OCAL_OK && wgmma && bf16) s = run_probe_gemm_half(pctx, spell, OCAL_BF16, 1, &wg_bf16);
  if (wgmma && (!wg_f16 || !wg_bf16))
    snprintf(wg + strlen(wg), sizeof wg - strlen(wg), "; f16 %s, bf16 %s",
             wg_f16 ? "passed" : "failed", wg_bf16 ? "passed" : "failed");
  /* The 16-bit kernels: their products were exact above; one GEMM each of the variant the
   * engine runs (the address mode and ldmatrix are shared with TF32's). */
  int f16_gemm = 0, bf16_gemm = 0;
  if (s == OCAL_OK && f16 && addr) s = run_probe_gemm_half(pctx, spell, OCAL_F16, 0, &f16_gemm);
  if (s == OCAL_OK && bf16 && addr)
    s = run_probe_gemm_half(pctx, spell, OCAL_BF16, 0, &bf16_gemm);
  f16 = f16 && f16_gemm;
  bf16 = bf16 && bf16_gemm;
  if (s != OCAL_OK) {
    /* A run that failed (not a wrong answer) may be a passing fault of the driver: the
     * answer is kept for this context only. */
    snprintf(st->detail, sizeof st->detail, "no tensor cores: the probe failed to run (%.150s)",
             ocal_last_error());
    ocal_context_release(pctx);
    return;
  }
  ocal_context_release(pctx);
  st->ok = tf32 && cvt && addr && gemm;
  st->f16 = f16;
  st->bf16 = bf16;
  st->wgmma = st->ok && wgmma ? WG_TF32 | (f16 && wg_f16 ? WG_F16 : 0) |
                                    (bf16 && wg_bf16 ? WG_BF16 : 0)
                              : 0;
  if (st->ok)
    snprintf(st->detail, sizeof st->detail,
             "tensor cores (tf32, mma.sync m16n8k8): probe passed%s (TF32 GEMM check worst "
             "error %.3g of its bound; f16 %s, bf16 %s; wgmma %s)",
             emulate ? " in emulation (OCAL_GEMM_TC_EMULATE)" : "", worst,
             f16 ? "passed" : "failed", bf16 ? "passed" : "failed", wg);
  else
    snprintf(st->detail, sizeof st->detail,
             "no tensor cores: the probe ran but %s", !tf32   ? "the TF32 mma product was wrong"
                                                     : !cvt  ? "cvt.rna.tf32 rounded differently"
                                                     : !addr ? "the __local address mode failed"
                                                             : "its GEMM check failed");
  store_answer(ctx, st);
}

static ocal_status get_state(ocal_context ctx, tc_state **out) {
  static const int key = 0;
  void *data = NULL;
  ocal_status s = ocal__context_attachment(ctx, &key, state_create, state_destroy, &data);
  *out = data;
  return s;
}

int ocal__gemm_wgmma_ready(ocal_context ctx, ocal_dtype dtype) {
  tc_state *st;
  if (get_state(ctx, &st) != OCAL_OK) return 0;
  ocal__gemm_tc_ready(ctx);
  int bit = dtype == OCAL_F32 ? WG_TF32 : dtype == OCAL_F16 ? WG_F16 : dtype == OCAL_BF16 ? WG_BF16 : 0;
  pthread_mutex_lock(&st->lock);
  int ok = (st->wgmma & bit) != 0;
  pthread_mutex_unlock(&st->lock);
  return ok;
}

int ocal__gemm_half_on_wgmma(ocal_context ctx, ocal_dtype dtype, size_t m, size_t n, size_t k,
                             size_t batch) {
  int engine = ctx->settings.gemm;
  if (engine == OCAL__ENGINE_TC || !ocal__gemm_wgmma_ready(ctx, dtype)) return 0;
  return engine == OCAL__ENGINE_WGMMA ||
         ocal__gemm_wgmma_pays(ocal__context_info(ctx)->compute_units, m, n, k, batch);
}

int ocal__gemm_tc_ready(ocal_context ctx) {
  tc_state *st;
  if (get_state(ctx, &st) != OCAL_OK) return 0;
  pthread_mutex_lock(&st->lock);
  if (!st->known) {
    probe(ctx, st);
    st->known = 1;
  }
  int ok = st->ok;
  pthread_mutex_unlock(&st->lock);
  return ok;
}

ocal_status ocal__gemm_tc_answer(ocal_context ctx, int *ok, const char **detail,
                                 int *from_disk, unsigned *probes) {
  tc_state *st;
  ocal_status s = get_state(ctx, &st);
  if (s != OCAL_OK) return s;
  ocal__gemm_tc_ready(ctx);
  pthread_mutex_lock(&st->lock);
  if (ok) *ok = st->ok;
  if (detail) *detail = st->detail; /* fixed once known: valid while the context lives */
  if (from_disk) *from_disk = st->from_disk;
  if (probes) *probes = st->probes;
  pthread_mutex_unlock(&st->lock);
  return OCAL_OK;
}

/* ---- f16 and bf16 (m16n8k16, f32 accumulation) ------------------------------------------ */

int ocal__gemm_tc_half_ready(ocal_context ctx, ocal_dtype dtype) {
  tc_state *st;
  if (get_state(ctx, &st) != OCAL_OK) return 0;
  ocal__gemm_tc_ready(ctx);
  pthread_mutex_lock(&st->lock);
  int ok = dtype == OCAL_F16 ? st->f16 : dtype == OCAL_BF16 ? st->bf16 : 0;
  pthread_mutex_unlock(&st->lock);
  return ok;
}

/* An f16 or bf16 product (A, B and C of that type) in one kernel: the products of the 16-bit
 * inputs are exact and accumulate in f32, alpha and beta apply in f32 and C is rounded to
 * nearest even, the semantics of blas.c's portable path (convert to f32, f32 GEMM, convert
 * back) without its four extra passes. No split of k: the split-k sum is f32's. */
ocal_status ocal__gemm_tc_half(const ocal__gemm_call *g, int *not_built) {
  ocal_context ctx = g->ctx;
  *not_built = 0;
  tc_state *st;
  ocal_status s = get_state(ctx, &st);
  if (s != OCAL_OK) return s;
  if (!ocal__gemm_tc_half_ready(ctx, g->dtype)) {
    *not_built = 1;
    return OCAL_OK;
  }
  ocal_buffer a = g->a, b = g->b, c = g->c;
  size_t lda = a->shape[a->ndim - 1], ldb = b->shape[b->ndim - 1];
  ocal__tc_launch L = {g->dtype,
                 g->ta == OCAL_TRANS,
                 g->tb == OCAL_TRANS,
                 g->m,
                 g->n,
                 g->k,
                 g->batch,
                 a->mem,
                 b->mem,
                 c->mem,
                 a->offset,
                 lda,
                 a->ndim == 3 ? a->shape[1] * lda : 0,
                 b->offset,
                 ldb,
                 b->ndim == 3 ? b->shape[1] * ldb : 0,
                 c->offset,
                 g->n,
                 g->m * g->n,
                 (float)g->alpha,
                 (float)g->beta,
                 g->k,
                 1};
  if (ocal__gemm_half_on_wgmma(ctx, g->dtype, g->m, g->n, g->k, g->batch)) {
    s = ocal__gemm_wgmma_run(ctx, &L, not_built);
  } else {
    char spell[64];
    spelling(emulated(ctx), st->extra, spell, sizeof spell);
    s = tc_enqueue(ctx, spell, &L, not_built);
  }
  return *not_built ? OCAL_OK : s;
}

/* ---- the engine ---------------------------------------------------------------------------- */

static ocal_status tc_run(const ocal__gemm_call *g, const ocal__gemm_choice *choice,
                          int *not_built) {
  *not_built = 0;
  ocal_context ctx = g->ctx;
  tc_state *st;
  ocal_status s = get_state(ctx, &st);
  if (s != OCAL_OK) return s;
  if (!ocal__gemm_tc_ready(ctx)) { /* the rule asked the probe: not reached */
    if (choice->named)
      return ocal__fail(OCAL_UNSUPPORTED, FUNC, "OCAL_GEMM=tc: %s", st->detail);
    *not_built = 1;
    return OCAL_OK;
  }
  ocal_buffer a = g->a, b = g->b, c = g->c;
  size_t lda = a->shape[a->ndim - 1], ldb = b->shape[b->ndim - 1];
  /* Split of k where the output has fewer 128 x 128 tiles than the device has compute units
   * (1024^3 on an H100: 64 tiles for 132 SMs): the kernel writes alpha times each slice's
   * partial product into scratch and ocal's split-k sum adds them and beta C, as gemm_own.c
   * does. Slices of at least 256 (32 k steps, so the 4-stage ring runs full), whole k steps
   * of 8, at most 8 of them. */
  size_t slices = 1, kc = g->k;
  size_t cu = ocal__context_info(ctx)->compute_units ? ocal__context_info(ctx)->compute_units : 1;
  size_t tiles = ocal__ceil_div(g->m, TC_BM) * ocal__ceil_div(g->n, TC_BN);
  if (g->batch == 1)
    while (slices < 8 && tiles * slices < cu && g->k / (slices * 2) >= 256) slices *= 2;
  if (slices > 1) {
    kc = ocal__round_up(ocal__ceil_div(g->k, slices), 8);
    slices = ocal__ceil_div(g->k, kc);
  }
  cl_mem w = NULL;
  size_t bytes;
  if (slices > 1 && (ocal__mul_overflows(g->m * g->n, slices * sizeof(float), &bytes) ||
                     bytes > ocal__context_info(ctx)->max_alloc_bytes / 4 ||
                     ocal__device_alloc(ctx, bytes, &w) != OCAL_OK))
    slices = 1, kc = g->k, w = NULL; /* no room: one pass */
  ocal__tc_launch L = {OCAL_F32,
                 g->ta == OCAL_TRANS,
                 g->tb == OCAL_TRANS,
                 g->m,
                 g->n,
                 g->k,
                 g->batch,
                 a->mem,
                 b->mem,
                 w ? w : c->mem,
                 a->offset,
                 lda,
                 a->ndim == 3 ? a->shape[1] * lda : 0,
                 b->offset,
                 ldb,
                 b->ndim == 3 ? b->shape[1] * ldb : 0,
                 w ? 0 : c->offset,
                 g->n,
                 g->m * g->n,
                 (float)g->alpha,
                 w ? 0.0f : (float)g->beta,
                 kc,
                 slices};
  int failed = 0;
  char spell[64];
  spelling(emulated(ctx), st->extra, spell, sizeof spell);
  s = tc_enqueue(ctx, spell, &L, &failed);
  if (s == OCAL_OK && w) s = ocal__gemm_splitk_sum(ctx, OCAL_F32, w, g->m * g->n, slices, g->beta, c);
  if (w) ocal__device_free(ctx, w);
  if (failed && !choice->named) {
    /* ocal's kernel runs instead (blas.c); the build's message is not the caller's error. */
    *not_built = 1;
    return OCAL_OK;
  }
  return s;
}

const ocal__gemm_engine ocal__gemm_engine_tc = {"tensor cores (tf32, mma.sync)", tc_run};
