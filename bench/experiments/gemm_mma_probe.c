/* bench/experiments/gemm_mma_probe — cl/gemm_mma.cl's tensor-core GEMM kernels on an NVIDIA GPU, in one run:
 *
 *   gemm_mma_probe CL_FILE [VARIANT ...]
 *
 * Plain OpenCL and the ICD loader (not libocal), so that it runs before the kernels are wired
 * into the library. It takes the first GPU of a platform whose name contains "NVIDIA" and exits
 * 77 anywhere else. Then:
 *  1. builds the one-warp probe kernel and checks every bit of its outputs: one m16n8k8 TF32
 *     product, one m16n8k16 f16 and one bf16 product (small integers, so every sum is exact),
 *     cvt.rna.tf32.f32 on 32 chosen values, and how a __local pointer's integer value maps to
 *     a shared-space address;
 *  2. for each variant (default: all; names below) and each transpose, builds the GEMM and
 *     compares it with a double-precision host product of the inputs rounded the way the
 *     hardware rounds them (TF32: to nearest, ties away from zero, as cvt.rna does; f16/bf16
 *     inputs are generated in those formats), at odd shapes, padded leading dimensions,
 *     offsets, a batch of 2, alpha = 1.5, beta = -0.5 (and beta = 0 over a C full of NaN), and
 *     checks that nothing outside C's m x n blocks was written;
 *  3. times C = A B (no transposes) at 2048^3, 4096^3 and 8192^3 (MMA_SIZES="..." overrides):
 *     one warm-up, then 5 runs timed by clGetEventProfilingInfo; the median is reported.
 * The error of an element is |got - ref| / (|alpha| sum_k |a_ik b_kj| + |beta c_ij|) and must
 * stay under (k + 8) 2^-23, plus the output format's unit roundoff (2^-11 f16, 2^-8 bf16):
 * every product of rounded inputs is exact in f32 and the hardware adds them in f32, whose
 * error for k terms is bounded by about k u with u = 2^-24, doubled here in case the tensor
 * core truncates instead of rounding; a layout or edge bug gives errors of order 1.
 * MMA_EMULATE=1 runs all but the timing on any OpenCL device (PoCL first) with the instructions
 * emulated in OpenCL C (cl/gemm_mma.cl, -DMMA_EMULATE=1) and a smaller last case: a test of
 * this program and of the kernels' indexing where no NVIDIA GPU is.
 * MMA_BUDGET_S (default 150): past this many seconds, checks and timings left are skipped (and
 * said so), so that the summary always comes out.
 * MMA_OPTS="..." adds build options to every build (e.g. -DSMEM_ADDR=0). The last lines are
 * one summary per variant: "summary NAME check ok|FAIL|nobuild  2048 T  4096 T  8192 T" in
 * TFLOP/s, which bench/experiments/gemm_mma_round.sh reads. Exit status 0 when every check passed. */
#include <math.h>
#include <stdint.h>
#include <time.h>

#include "cl_probe.h"


enum { IN_TF32, IN_F16, IN_BF16 };
enum { OUT_F32, OUT_F16, OUT_BF16 };

/* bm, bn, bk: block tile (0: the kernel's default); stages: local stages (0: 2); raster: the
 * kernel's RASTER group of block rows (0: off); ip: TF32_INPLACE (round once in local memory). */
typedef struct variant {
  const char *name;
  int in, out, cp, ldm;
  int bm, bn, bk, stages, raster, ip;
} variant;

static const variant variants[] = {
    {"tf32", IN_TF32, OUT_F32, 0, 0, 0, 0, 0, 0, 0, 0},
    {"tf32_cp", IN_TF32, OUT_F32, 1, 0, 0, 0, 0, 0, 0, 0},
    {"f16", IN_F16, OUT_F32, 0, 0, 0, 0, 0, 0, 0, 0},
    {"f16_cp", IN_F16, OUT_F32, 1, 0, 0, 0, 0, 0, 0, 0},
    {"f16_cp_ldm", IN_F16, OUT_F32, 1, 1, 0, 0, 0, 0, 0, 0},
    {"bf16_cp_ldm", IN_BF16, OUT_F32, 1, 1, 0, 0, 0, 0, 0, 0},
    {"f16_cp_ldm_o16", IN_F16, OUT_F16, 1, 1, 0, 0, 0, 0, 0, 0},
    {"bf16_cp_ldm_o16", IN_BF16, OUT_BF16, 1, 1, 0, 0, 0, 0, 0, 0},
    /* Round 2 (docs/tensor-cores.md): deeper cp.async pipelines in 48 KiB (a smaller k step
     * per stage), ldmatrix for TF32, 64 x 64 warp tiles (128 x 256 blocks), rasterised blocks. */
    {"tf32_ldm", IN_TF32, OUT_F32, 1, 1, 0, 0, 0, 0, 0, 0},
    {"tf32_ldm_s4", IN_TF32, OUT_F32, 1, 1, 128, 128, 8, 4, 8, 0},
    {"tf32_ldm_256_s3", IN_TF32, OUT_F32, 1, 1, 128, 256, 8, 3, 8, 0},
    {"tf32_ldm_s4_ip", IN_TF32, OUT_F32, 1, 1, 128, 128, 8, 4, 8, 1},
    {"tf32_ldm_256_s3_ip", IN_TF32, OUT_F32, 1, 1, 128, 256, 8, 3, 8, 1},
    {"f16_ldm_r8", IN_F16, OUT_F32, 1, 1, 0, 0, 0, 0, 8, 0},
    {"f16_ldm_s4", IN_F16, OUT_F32, 1, 1, 128, 128, 16, 4, 8, 0},
    {"f16_ldm_256_s3", IN_F16, OUT_F32, 1, 1, 128, 256, 16, 3, 8, 0},
    {"bf16_ldm_s4", IN_BF16, OUT_F32, 1, 1, 128, 128, 16, 4, 8, 0},
    {"bf16_ldm_256_s3", IN_BF16, OUT_F32, 1, 1, 128, 256, 16, 3, 8, 0},
};
#define NVARIANTS (sizeof variants / sizeof variants[0])

static cl_context ctx;
static cl_device_id dev;
static cl_command_queue q;
static char *src;
static const char *asm_kw = ""; /* "" or " -DASM_KW=asm" once the default spelling failed */
static const char *inl_kw = ""; /* "" or " -DINL=inline" likewise */
static int nv_verbose;
static double t_start, budget_s = 150; /* MMA_BUDGET_S: checks and timing stop past it */
static cl_int lost_context; /* the error of a kernel that faulted, else 0 */
static int emulate; /* MMA_EMULATE=1: any device, instructions emulated (see the top) */

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static int over_budget(void) { return now() - t_start > budget_s; }

/* ---- numbers ------------------------------------------------------------------------- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double urand(void) { /* uniform in [-1, 1) */
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (double)(rng >> 11) / (double)(1ull << 52) - 1.0;
}

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
/* cvt.rna.tf32.f32 for finite values: round the magnitude to 10 fraction bits, ties away. */
static float tf32_rna(float x) { return bitsf((fbits(x) + 0x1000u) & 0xffffe000u); }

static float half_to_float(uint16_t h) {
  uint32_t s = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 31, m = h & 1023;
  if (e == 0) return (s ? -1.0f : 1.0f) * ldexpf((float)m, -24);
  if (e == 31) return bitsf(s | 0x7f800000u | m << 13);
  return bitsf(s | (e + 112) << 23 | m << 13);
}
/* Round to nearest even; inputs here are finite and within f16's range. */
static uint16_t float_to_half(float f) {
  uint32_t u = fbits(f), s = (u >> 16) & 0x8000u;
  float a = fabsf(f);
  if (a < ldexpf(1.0f, -14)) { /* subnormal or zero: a multiple of 2^-24 */
    return (uint16_t)(s | (uint32_t)lrintf(ldexpf(a, 24)));
  }
  uint32_t v = fbits(a);
  uint32_t r = v + 0xfffu + ((v >> 13) & 1u);
  r = (r >> 13) - (112u << 10);
  return (uint16_t)(s | (r > 0x7bffu ? 0x7c00u : r));
}
static float bf16_to_float(uint16_t b) { return bitsf((uint32_t)b << 16); }
static uint16_t float_to_bf16(float f) {
  uint32_t u = fbits(f);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/* ---- OpenCL ------------------------------------------------------------------------ */

static void print_log(const char *log, int lines) {
  const char *p = log;
  for (int i = 0; i < lines && *p; i++) {
    const char *e = strchr(p, '\n');
    int len = e ? (int)(e - p) : (int)strlen(p);
    printf("    | %.*s%s\n", len > 150 ? 150 : len, p, len > 150 ? "..." : "");
    if (!e) break;
    p = e + 1;
  }
}

static char *build_log(cl_program p) {
  size_t n = 0;
  clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &n);
  char *log = calloc(n + 1, 1);
  clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, n, log, NULL);
  return log;
}

/* Builds with opts (plus MMA_OPTS and the spellings chosen so far). A failure whose log names
 * the inline-assembly keyword or the forced-inline attribute is retried once with the other
 * spelling (-DASM_KW=asm, -DINL=inline), which then holds for every later build. Returns NULL
 * and prints the trimmed log (log_lines of it; none when negative) on failure. */
static char src_dir[1024]; /* the kernel file's directory, for its #include */
static cl_program build(const char *opts, int log_lines, char **log_out) {
  const char *extra = getenv("MMA_OPTS");
  char full[2048];
  for (int attempt = 0; attempt < 3; attempt++) {
    /* -I the kernel's directory: it includes cl/gemm_c_io.cl, which the library inlines. */
    snprintf(full, sizeof full, "%s%s%s %s%s%s -I \"%s\"", opts, asm_kw, inl_kw,
             extra ? extra : "", nv_verbose ? " -cl-nv-verbose" : "",
             emulate ? " -DMMA_EMULATE=1" : "", src_dir);
    cl_int e;
    cl_program p = clCreateProgramWithSource(ctx, 1, (const char **)&src, NULL, &e);
    OK(e);
    cl_int be = clBuildProgram(p, 1, &dev, full, NULL, NULL);
    char *log = build_log(p);
    if (be == CL_SUCCESS) {
      if (log_out) *log_out = log;
      else free(log);
      return p;
    }
    clReleaseProgram(p);
    int retry = 0;
    if (!*asm_kw && strstr(log, "asm")) asm_kw = " -DASM_KW=asm", retry = 1;
    else if (!*inl_kw && (strstr(log, "always_inline") || strstr(log, "static")))
      inl_kw = " -DINL=inline", retry = 1;
    if (retry) {
      free(log);
      continue;
    }
    if (log_lines >= 0) { /* later failures of the same variant are only counted */
      printf("  build failed (%d): %s\n", (int)be, full);
      print_log(log, log_lines);
    }
    free(log);
    return NULL;
  }
  return NULL;
}

static cl_mem buffer(size_t bytes, const void *host) {
  cl_int e;
  cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | (host ? CL_MEM_COPY_HOST_PTR : 0),
                            bytes ? bytes : 1, (void *)host, &e);
  OK(e);
  return m;
}

/* ---- the probe ----------------------------------------------------------------------- */

static int run_probe(void) {
  char *log = NULL;
  cl_program p = build("-DMMA_TF32", 12, &log);
  if (!p) return 0;
  free(log);
  cl_int e;
  cl_kernel k = clCreateKernel(p, "ocal_mma_probe", &e);
  OK(e);
  float a32[128], b32[64], cv[32];
  uint16_t ah[256], bh[128], ahb[256], bhb[128];
  double ra[256], rb[128], rab[256], rbb[128];
  for (int i = 0; i < 128; i++) a32[i] = (float)(int)(urand() * 9.0);
  for (int i = 0; i < 64; i++) b32[i] = (float)(int)(urand() * 9.0);
  for (int i = 0; i < 256; i++) {
    ra[i] = (int)(urand() * 9.0), ah[i] = float_to_half((float)ra[i]);
    rab[i] = (int)(urand() * 9.0), ahb[i] = float_to_bf16((float)rab[i]);
  }
  for (int i = 0; i < 128; i++) {
    rb[i] = (int)(urand() * 9.0), bh[i] = float_to_half((float)rb[i]);
    rbb[i] = (int)(urand() * 9.0), bhb[i] = float_to_bf16((float)rbb[i]);
  }
  /* Values around every rounding case of the low 13 bits: exact, below, at and above the
   * tie, carries into the exponent, negatives, a subnormal. */
  static const uint32_t low[8] = {0x0000, 0x0fff, 0x1000, 0x1001, 0x1fff, 0x0001, 0x17ff, 0x1800};
  for (int i = 0; i < 32; i++) {
    uint32_t hi = i < 16 ? 0x3f800000u + ((uint32_t)i << 13) : 0x40ffe000u + ((uint32_t)i << 23);
    uint32_t u = (hi & 0xffffe000u) | low[i % 8];
    if (i == 30) u = 0x3fffffffu; /* carries into the exponent */
    if (i == 31) u = 0x00001fffu; /* subnormal */
    if (i & 4) u |= 0x80000000u;
    cv[i] = bitsf(u);
  }
  cl_mem m[7] = {buffer(sizeof a32, a32), buffer(sizeof b32, b32), buffer(sizeof ah, ah),
                 buffer(sizeof bh, bh),   buffer(sizeof ahb, ahb), buffer(sizeof bhb, bhb),
                 buffer(sizeof cv, cv)};
  uint32_t out[419];
  memset(out, 0xff, sizeof out);
  cl_mem mo = buffer(sizeof out, out);
  for (int i = 0; i < 7; i++) OK(clSetKernelArg(k, (cl_uint)i, sizeof(cl_mem), &m[i]));
  OK(clSetKernelArg(k, 7, sizeof(cl_mem), &mo));
  size_t g = 32, l = 32;
  OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, NULL));
  OK(clEnqueueReadBuffer(q, mo, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
  int bad[4] = {0, 0, 0, 0}, shown = 0;
  for (int part = 0; part < 3; part++)
    for (int i = 0; i < 16; i++)
      for (int j = 0; j < 8; j++) {
        double s = 0;
        if (part == 0)
          for (int kk = 0; kk < 8; kk++) s += (double)a32[i * 8 + kk] * b32[kk * 8 + j];
        else if (part == 1)
          for (int kk = 0; kk < 16; kk++) s += ra[i * 16 + kk] * rb[kk * 8 + j];
        else
          for (int kk = 0; kk < 16; kk++) s += rab[i * 16 + kk] * rbb[kk * 8 + j];
        uint32_t want = fbits((float)s), got = out[part * 128 + i * 8 + j];
        if (want != got) {
          bad[part]++;
          if (shown++ < 4)
            printf("  probe %s D[%d][%d] = %g, want %g\n",
                   part == 0 ? "tf32" : part == 1 ? "f16" : "bf16", i, j, (double)bitsf(got), s);
        }
      }
  for (int i = 0; i < 32; i++)
    if (out[384 + i] != fbits(tf32_rna(cv[i]))) {
      bad[3]++;
      if (shown++ < 6)
        printf("  probe cvt.rna.tf32(0x%08x) = 0x%08x, want 0x%08x\n", fbits(cv[i]),
               out[384 + i], fbits(tf32_rna(cv[i])));
    }
  printf("probe: mma tf32 %s, f16 %s, bf16 %s; cvt.rna.tf32 %s (%d/32 match the host rounding)\n",
         bad[0] ? "WRONG" : "exact", bad[1] ? "WRONG" : "exact", bad[2] ? "WRONG" : "exact",
         bad[3] ? "DIFFERS" : "ok", 32 - bad[3]);
  if (emulate)
    printf("probe: emulated (no PTX ran; this checks the host side and the kernels' indexing)\n");
  else
    printf("probe: __local pointer as integer = 0x%08x, %s; ld.shared at smem_u32(): %s\n",
         out[417], out[416] ? "a generic address (SMEM_ADDR=1 fits)"
                            : "not generic: a shared-space offset (SMEM_ADDR=0 fits)",
         out[418] == 0x5eed0000u ? "ok" : "WRONG");
  for (int i = 0; i < 7; i++) clReleaseMemObject(m[i]);
  clReleaseMemObject(mo);
  clReleaseKernel(k);
  clReleaseProgram(p);
  return !bad[0] && !bad[1] && !bad[2] && !bad[3] && out[418] == 0x5eed0000u;
}

/* ---- the GEMM ------------------------------------------------------------------------ */

typedef struct built {
  char opts[256];
  cl_program prog;
  cl_kernel kern;
  char regs[96];
} built;
static built cache[96];
static int ncache;

static size_t in_size(const variant *v) { return v->in == IN_TF32 ? 4 : 2; }
static size_t out_size(const variant *v) { return v->out == OUT_F32 ? 4 : 2; }

/* The kernel for a variant, transpose and alignment; NULL when it does not build. */
static cl_kernel kernel_for(const variant *v, int ta, int tb, int vec, int *failed_before) {
  char opts[256], tile[128] = "";
  /* More than 2 stages need cp.async, which needs VEC=1: the VEC=0 cases run 2 stages. */
  if (v->bm) snprintf(tile, sizeof tile, " -DBM=%d -DBN=%d -DBK=%d", v->bm, v->bn, v->bk);
  if (v->stages && vec)
    snprintf(tile + strlen(tile), sizeof tile - strlen(tile), " -DSTAGES=%d", v->stages);
  if (v->raster)
    snprintf(tile + strlen(tile), sizeof tile - strlen(tile), " -DRASTER=%d", v->raster);
  if (v->ip) snprintf(tile + strlen(tile), sizeof tile - strlen(tile), " -DTF32_INPLACE=1");
  snprintf(opts, sizeof opts, "%s%s -DTA=%d -DTB=%d -DVEC=%d -DCP_ASYNC=%d -DLDMATRIX=%d%s",
           v->in == IN_TF32 ? "-DMMA_TF32" : v->in == IN_F16 ? "-DMMA_F16" : "-DMMA_BF16",
           v->out == OUT_F16 ? " -DOUT_F16" : v->out == OUT_BF16 ? " -DOUT_BF16" : "", ta, tb,
           vec, v->cp && vec, v->ldm, tile);
  for (int i = 0; i < ncache; i++)
    if (strcmp(cache[i].opts, opts) == 0) return cache[i].kern;
  if (ncache == (int)(sizeof cache / sizeof cache[0])) DIE("too many builds");
  char *log = NULL;
  cl_program p = build(opts, *failed_before ? -1 : 8, &log);
  if (!p) {
    *failed_before = 1;
    return NULL;
  }
  built *b = &cache[ncache++];
  snprintf(b->opts, sizeof b->opts, "%s", opts);
  b->prog = p;
  cl_int e;
  b->kern = clCreateKernel(p, "ocal_gemm_mma", &e);
  OK(e);
  /* -cl-nv-verbose puts ptxas's "Used N registers, ... bytes spill" lines in the log. */
  b->regs[0] = 0;
  const char *r = log ? strstr(log, "Used ") : NULL;
  if (r) {
    const char *end = strchr(r, '\n');
    int len = end ? (int)(end - r) : (int)strlen(r);
    snprintf(b->regs, sizeof b->regs, "%.*s", len > 90 ? 90 : len, r);
  }
  free(log);
  return b->kern;
}

typedef struct launch {
  cl_mem a, b, c;
  cl_ulong a_off, a_stride, b_off, b_stride, c_off, c_stride;
  cl_uint lda, ldb, ldc, m, n, k, batch;
  float alpha, beta;
} launch;

static cl_int enqueue(const variant *v, cl_kernel kern, const launch *L, cl_event *ev) {
  cl_uint kc = L->k, slices = 1;
  cl_int read_c = L->beta != 0.0f;
  int i = 0;
  clSetKernelArg(kern, i++, sizeof(cl_mem), &L->a);
  clSetKernelArg(kern, i++, sizeof(cl_ulong), &L->a_off);
  clSetKernelArg(kern, i++, sizeof(cl_uint), &L->lda);
  clSetKernelArg(kern, i++, sizeof(cl_ulong), &L->a_stride);
  clSetKernelArg(kern, i++, sizeof(cl_mem), &L->b);
  clSetKernelArg(kern, i++, sizeof(cl_ulong), &L->b_off);
  clSetKernelArg(kern, i++, sizeof(cl_uint), &L->ldb);
  clSetKernelArg(kern, i++, sizeof(cl_ulong), &L->b_stride);
  clSetKernelArg(kern, i++, sizeof(cl_mem), &L->c);
  clSetKernelArg(kern, i++, sizeof(cl_ulong), &L->c_off);
  clSetKernelArg(kern, i++, sizeof(cl_uint), &L->ldc);
  clSetKernelArg(kern, i++, sizeof(cl_ulong), &L->c_stride);
  clSetKernelArg(kern, i++, sizeof(cl_uint), &L->m);
  clSetKernelArg(kern, i++, sizeof(cl_uint), &L->n);
  clSetKernelArg(kern, i++, sizeof(cl_uint), &L->k);
  clSetKernelArg(kern, i++, sizeof(cl_uint), &kc);
  clSetKernelArg(kern, i++, sizeof(cl_uint), &slices);
  clSetKernelArg(kern, i++, sizeof(float), &L->alpha);
  clSetKernelArg(kern, i++, sizeof(float), &L->beta);
  cl_int e = clSetKernelArg(kern, i++, sizeof(cl_int), &read_c);
  if (e != CL_SUCCESS) return e;
  size_t local[3] = {256, 1, 1};
  const size_t bm = v->bm ? (size_t)v->bm : 128, bn = v->bn ? (size_t)v->bn : 128;
  size_t global[3] = {(L->n + bn - 1) / bn * 256, (L->m + bm - 1) / bm, L->batch};
  return clEnqueueNDRangeKernel(q, kern, 3, NULL, global, local, 0, NULL, ev);
}

typedef struct tcase {
  unsigned m, n, k, batch;
  int pad; /* leading dimensions rounded up to 8 plus 8, offsets of 8 elements */
  float alpha, beta;
  int row_step; /* check every row_step-th row (and the last) */
} tcase;

static const tcase cases[] = {
    {1, 1, 1, 1, 0, 1.5f, -0.5f, 1},        {17, 33, 65, 1, 0, 1.5f, -0.5f, 1},
    {17, 33, 65, 1, 1, 1.5f, 0.0f, 1},      {127, 129, 255, 2, 1, 1.5f, -0.5f, 1},
    {1000, 1000, 1000, 1, 0, 1.5f, -0.5f, 11},
};
/* The emulation is ~1000x slower: a smaller last case with several blocks each way. */
static const tcase emu_last = {200, 264, 104, 1, 0, 1.5f, -0.5f, 1};
#define NCASES (sizeof cases / sizeof cases[0])

/* One element of an input array, as the value the hardware multiplies. */
static double in_value(const variant *v, const void *base, size_t i) {
  if (v->in == IN_TF32) return tf32_rna(((const float *)base)[i]);
  uint16_t h = ((const uint16_t *)base)[i];
  return v->in == IN_F16 ? half_to_float(h) : bf16_to_float(h);
}
static double out_value(const variant *v, const void *base, size_t i) {
  if (v->out == OUT_F32) return ((const float *)base)[i];
  uint16_t h = ((const uint16_t *)base)[i];
  return v->out == OUT_F16 ? half_to_float(h) : bf16_to_float(h);
}
static void fill_in(const variant *v, void *base, size_t n) {
  for (size_t i = 0; i < n; i++) {
    float x = (float)urand();
    if (v->in == IN_TF32) ((float *)base)[i] = x;
    else ((uint16_t *)base)[i] = v->in == IN_F16 ? float_to_half(x) : float_to_bf16(x);
  }
}
static void put_out(const variant *v, void *base, size_t i, float x) {
  if (v->out == OUT_F32) ((float *)base)[i] = x;
  else ((uint16_t *)base)[i] = v->out == OUT_F16 ? float_to_half(x) : float_to_bf16(x);
}

static size_t ld_for(size_t cols, int pad) { return pad ? (cols + 7) / 8 * 8 + 8 : cols; }

/* Runs one case; returns the largest error relative to the tolerance's scale (see the top),
 * or +inf when something outside C's blocks changed or a result is not finite, -1 when the
 * kernel did not build. */
static double check_case(const variant *v, int ta, int tb, const tcase *t, int *failed_before,
                         int *vec_used) {
  size_t m = t->m, n = t->n, k = t->k, batch = t->batch;
  size_t ar = ta ? k : m, acn = ta ? m : k, br = tb ? n : k, bcn = tb ? k : n;
  size_t lda = ld_for(acn, t->pad), ldb = ld_for(bcn, t->pad), ldc = ld_for(n, t->pad);
  size_t off = t->pad ? 8 : 0;
  size_t as = batch > 1 ? ar * lda + 16 : 0, bs = batch > 1 ? br * ldb + 16 : 0;
  size_t cs = batch > 1 ? m * ldc + 16 : 0;
  size_t na = off + (batch - 1) * as + ar * lda, nb = off + (batch - 1) * bs + br * ldb;
  size_t nc = off + (batch - 1) * cs + m * ldc;
  size_t es = in_size(v), os = out_size(v);
  size_t vw = 16 / es;
  int vec = lda % vw == 0 && ldb % vw == 0 && off % vw == 0 && as % vw == 0 && bs % vw == 0 &&
            ldc % 8 == 0 && off % 8 == 0 && cs % 8 == 0;
  *vec_used = vec;
  cl_kernel kern = kernel_for(v, ta, tb, vec, failed_before);
  if (!kern) return -1;

  void *ha = malloc(na * es), *hb = malloc(nb * es), *hc = malloc(nc * os), *hc0 = malloc(nc * os);
  fill_in(v, ha, na);
  fill_in(v, hb, nb);
  for (size_t i = 0; i < nc; i++) put_out(v, hc, i, (float)urand());
  if (t->beta == 0.0f) { /* C must not be read: NaN inside its blocks */
    for (size_t e = 0; e < batch; e++)
      for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) put_out(v, hc, off + e * cs + i * ldc + j, NAN);
  }
  memcpy(hc0, hc, nc * os);
  launch L = {buffer(na * es, ha), buffer(nb * es, hb), buffer(nc * os, hc), off, as, off, bs,
              off, cs, (cl_uint)lda, (cl_uint)ldb, (cl_uint)ldc, (cl_uint)m, (cl_uint)n,
              (cl_uint)k, (cl_uint)batch, t->alpha, t->beta};
  double worst = 0;
  cl_int le = enqueue(v, kern, &L, NULL);
  if (le == CL_SUCCESS) {
    le = clEnqueueReadBuffer(q, L.c, CL_TRUE, 0, nc * os, hc, 0, NULL, NULL);
    /* A fault while running loses the context: nothing after it can be trusted. */
    if (le != CL_SUCCESS) lost_context = le;
  }
  if (le != CL_SUCCESS) {
    printf("  %s TA=%d TB=%d %ux%ux%u: OpenCL error %d\n", v->name, ta, tb, t->m, t->n, t->k,
           (int)le);
    worst = INFINITY;
    memcpy(hc, hc0, nc * os);
  }

  /* Everything outside the blocks is untouched. */
  unsigned char *inside = calloc(nc, 1);
  for (size_t e = 0; e < batch; e++)
    for (size_t i = 0; i < m; i++) memset(inside + off + e * cs + i * ldc, 1, n);
  for (size_t i = 0; i < nc; i++)
    if (!inside[i] && memcmp((char *)hc + i * os, (char *)hc0 + i * os, os) != 0) worst = INFINITY;
  free(inside);

  double *arow = malloc(k * sizeof(double)), *bt = malloc(n * k * sizeof(double));
  for (size_t e = 0; e < batch && worst < INFINITY; e++) {
    const size_t ab = off + e * as, bb = off + e * bs, cb = off + e * cs;
    for (size_t j = 0; j < n; j++) /* op(B) column j, contiguous in k */
      for (size_t kk = 0; kk < k; kk++)
        bt[j * k + kk] = in_value(v, hb, bb + (tb ? j * ldb + kk : kk * ldb + j));
    for (size_t i = 0; i < m; i++) {
      if (i % (size_t)t->row_step && i != m - 1) continue;
      for (size_t kk = 0; kk < k; kk++)
        arow[kk] = in_value(v, ha, ab + (ta ? kk * lda + i : i * lda + kk));
      for (size_t j = 0; j < n; j++) {
        double s = 0, sa = 0;
        const double *bj = bt + j * k;
        for (size_t kk = 0; kk < k; kk++) s += arow[kk] * bj[kk], sa += fabs(arow[kk] * bj[kk]);
        double c0 = t->beta != 0.0f ? out_value(v, hc0, cb + i * ldc + j) : 0.0;
        double ref = t->alpha * s + t->beta * c0;
        double scale = fabs(t->alpha) * sa + fabs(t->beta) * fabs(c0);
        double got = out_value(v, hc, cb + i * ldc + j);
        double err = isfinite(got) ? fabs(got - ref) / (scale > 0 ? scale : 1e-30) : INFINITY;
        if (err > worst) worst = err;
      }
    }
  }
  free(arow);
  free(bt);
  clReleaseMemObject(L.a);
  clReleaseMemObject(L.b);
  clReleaseMemObject(L.c);
  free(ha);
  free(hb);
  free(hc);
  free(hc0);
  return worst;
}

static double tolerance(const variant *v, size_t k) {
  double t = ((double)k + 8.0) * ldexp(1.0, -23);
  if (v->out == OUT_F16) t += ldexp(1.0, -11);
  if (v->out == OUT_BF16) t += ldexp(1.0, -8);
  return t;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Median TFLOP/s of 5 timed runs after one warm-up, or 0 when it could not run. */
static double time_gemm(const variant *v, size_t s, cl_mem a, cl_mem b, cl_mem c,
                        int *failed_before) {
  cl_kernel kern = kernel_for(v, 0, 0, 1, failed_before);
  if (!kern) return 0;
  launch L = {a, b, c, 0, 0, 0, 0, 0, 0, (cl_uint)s, (cl_uint)s, (cl_uint)s, (cl_uint)s,
              (cl_uint)s, (cl_uint)s, 1, 1.0f, 0.0f};
  double t[5];
  if (enqueue(v, kern, &L, NULL) != CL_SUCCESS || clFinish(q) != CL_SUCCESS) return 0;
  for (int r = 0; r < 5; r++) {
    cl_event ev;
    if (enqueue(v, kern, &L, &ev) != CL_SUCCESS) return 0;
    clWaitForEvents(1, &ev);
    cl_ulong t0 = 0, t1 = 0;
    clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
    clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
    clReleaseEvent(ev);
    t[r] = (double)(t1 - t0) * 1e-9;
  }
  qsort(t, 5, sizeof t[0], cmp_double);
  return 2.0 * (double)s * (double)s * (double)s / t[2] * 1e-12;
}

int main(int argc, char **argv) {
  if (argc < 2) DIE("usage: gemm_mma_probe CL_FILE [VARIANT ...]");
  setvbuf(stdout, NULL, _IOLBF, 0); /* every line out at once, even through a pipe cut short */
  t_start = now();
  const char *bs = getenv("MMA_BUDGET_S");
  if (bs && atof(bs) > 0) budget_s = atof(bs);
  cl_platform_id plats[16];
  cl_uint np = 0;
  if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS) np = 0;
  int found = 0;
  char pname[256] = "";
  const char *em = getenv("MMA_EMULATE");
  emulate = em && strcmp(em, "1") == 0;
  for (cl_uint i = 0; i < np && !found; i++) {
    clGetPlatformInfo(plats[i], CL_PLATFORM_NAME, sizeof pname, pname, NULL);
    if (emulate) { /* PoCL where there is one, else the first device anywhere */
      if (strstr(pname, "Portable") || i + 1 == np)
        found = clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 1, &dev, NULL) == CL_SUCCESS;
      continue;
    }
    if (!strstr(pname, "NVIDIA")) continue;
    found = clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_GPU, 1, &dev, NULL) == CL_SUCCESS;
  }
  if (!found) {
    printf("gemm_mma_probe: no NVIDIA GPU among %u OpenCL platform(s); the tensor-core kernels "
           "need one (skipped)\n", np);
    return 77;
  }
  snprintf(src_dir, sizeof src_dir, "%s", argv[1]);
  char *slash = strrchr(src_dir, '/');
  if (slash) *slash = '\0';
  else snprintf(src_dir, sizeof src_dir, ".");
  FILE *f = fopen(argv[1], "rb");
  if (!f) DIE("cannot open %s", argv[1]);
  fseek(f, 0, SEEK_END);
  long sz = ftell(f);
  fseek(f, 0, SEEK_SET);
  src = malloc((size_t)sz + 1);
  if (fread(src, 1, (size_t)sz, f) != (size_t)sz) DIE("cannot read %s", argv[1]);
  src[sz] = 0;
  fclose(f);

  char name[256] = "", drv[64] = "", ext[8192] = "";
  cl_ulong local = 0;
  clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL);
  clGetDeviceInfo(dev, CL_DRIVER_VERSION, sizeof drv, drv, NULL);
  clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, sizeof ext - 1, ext, NULL);
  clGetDeviceInfo(dev, CL_DEVICE_LOCAL_MEM_SIZE, sizeof local, &local, NULL);
  nv_verbose = !emulate && strstr(ext, "cl_nv_compiler_options") != NULL;
  printf("device: %s, driver %s, %lu B local memory per work-group%s\n", name, drv,
         (unsigned long)local,
         emulate ? " (EMULATION: instructions emulated; timing only for MMA_SIZES)" : "");
  cl_int e;
  ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
  OK(e);
  q = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &e);
  OK(e);

  int all_ok = run_probe();

  /* Variants named on the command line, else all. */
  int chosen[NVARIANTS], nchosen = 0;
  for (int i = 2; i < argc; i++) {
    int hit = 0;
    for (size_t j = 0; j < NVARIANTS; j++)
      if (strcmp(argv[i], variants[j].name) == 0) chosen[nchosen++] = (int)j, hit = 1;
    if (!hit) DIE("unknown variant %s", argv[i]);
  }
  if (!nchosen)
    for (size_t j = 0; j < NVARIANTS; j++) chosen[nchosen++] = (int)j;

  size_t sizes[4] = {2048, 4096, 8192, 0}, nsizes = 3;
  const char *ms = getenv("MMA_SIZES");
  if (emulate) nsizes = 0; /* unless sizes are named: a test of the timing code on PoCL */
  if (ms && *ms) {
    nsizes = 0;
    for (const char *p = ms; *p && nsizes < 4;) {
      sizes[nsizes++] = strtoul(p, (char **)&p, 10);
      while (*p == ',' || *p == ' ') p++;
    }
  }
  const char *status[NVARIANTS] = {0};
  double tf[NVARIANTS][4];
  memset(tf, 0, sizeof tf);

  /* Timing buffers, one set per size, filled once (f32 values for TF32; f16 bits for the
   * 16-bit variants, which read them as f16 or bf16, finite either way). Each variant is timed
   * right after its checks, so that a budget cut leaves whole variants out, not all timings. */
  cl_mem ta32[4] = {0}, tb32[4] = {0}, ta16[4] = {0}, tb16[4] = {0}, tcm[4] = {0};
  for (size_t si = 0; si < nsizes; si++) {
    size_t nel = sizes[si] * sizes[si];
    float *h32 = malloc(nel * 4);
    uint16_t *h16 = malloc(nel * 2);
    for (size_t i = 0; i < nel; i++) {
      float x = (float)urand();
      h32[i] = x;
      h16[i] = float_to_half(x);
    }
    ta32[si] = buffer(nel * 4, h32), tb32[si] = buffer(nel * 4, h32);
    ta16[si] = buffer(nel * 2, h16), tb16[si] = buffer(nel * 2, h16);
    tcm[si] = buffer(nel * 4, NULL);
    free(h32);
    free(h16);
  }

  for (int vi = 0; vi < nchosen && !lost_context; vi++) {
    const variant *v = &variants[chosen[vi]];
    int failed = 0, nfail = 0, ncheck = 0, vec0 = 0;
    if (over_budget()) {
      printf("  %s: not checked, past the %.0f s budget (MMA_BUDGET_S)\n", v->name, budget_s);
      status[vi] = "notrun";
      all_ok = 0;
      continue;
    }
    double worst_ratio = 0, worst = 0;
    for (int tt = 0; tt < 4; tt++)
      for (size_t ci = 0; ci < NCASES; ci++) {
        int vec = 0;
        const tcase *tc = emulate && ci == NCASES - 1 ? &emu_last : &cases[ci];
        double err = check_case(v, tt >> 1, tt & 1, tc, &failed, &vec);
        if (lost_context) break;
        if (err < 0) continue;
        ncheck++;
        vec0 += !vec;
        double tol = tolerance(v, tc->k);
        if (err / tol > worst_ratio) worst_ratio = err / tol, worst = err;
        if (!(err <= tol)) {
          if (nfail++ < 3)
            printf("  %s %s%s %ux%ux%u batch %u%s%s: error %.3g > tolerance %.3g\n", v->name,
                   tt >> 1 ? "T" : "N", tt & 1 ? "T" : "N", tc->m, tc->n, tc->k, tc->batch,
                   tc->pad ? " padded" : "",
                   vec ? "" : " (VEC=0)", err, tol);
        }
      }
    const char *regs = "";
    for (int i = 0; i < ncache; i++)
      if (strstr(cache[i].opts, "-DTA=0 -DTB=0 -DVEC=1") && cache[i].regs[0]) regs = cache[i].regs;
    if (failed && !ncheck) status[vi] = "nobuild";
    else status[vi] = nfail || failed ? "FAIL" : "ok";
    if (ncheck)
      printf("check %-16s %s: %d runs (4 transposes x %u cases, %d with VEC=0), worst error "
             "%.2g = %.2g of tolerance%s%s\n", v->name, status[vi], ncheck, (unsigned)NCASES,
             vec0, worst, worst_ratio, *regs ? "; " : "", regs);
    if (nfail || failed) all_ok = 0;
    if (strcmp(status[vi], "nobuild") == 0) continue;
    for (size_t si = 0; si < nsizes && !lost_context; si++) {
      if (over_budget()) {
        printf("  %s %zu^3: not timed, past the budget\n", v->name, sizes[si]);
        continue;
      }
      int tfailed = 0;
      tf[vi][si] = v->in == IN_TF32
                       ? time_gemm(v, sizes[si], ta32[si], tb32[si], tcm[si], &tfailed)
                       : time_gemm(v, sizes[si], ta16[si], tb16[si], tcm[si], &tfailed);
    }
  }

  if (lost_context) {
    printf("stopped: a kernel failed while running (OpenCL error %d); no further timing\n",
           (int)lost_context);
    for (int vi = 0; vi < nchosen; vi++)
      if (!status[vi]) status[vi] = "notrun", all_ok = 0;
  }
  for (size_t si = 0; si < nsizes; si++) {
    clReleaseMemObject(ta32[si]);
    clReleaseMemObject(tb32[si]);
    clReleaseMemObject(ta16[si]);
    clReleaseMemObject(tb16[si]);
    clReleaseMemObject(tcm[si]);
  }
  if (*asm_kw || *inl_kw)
    printf("note: the default spelling was refused; built with%s%s\n", asm_kw, inl_kw);
  for (int vi = 0; vi < nchosen; vi++) {
    printf("summary %-16s check %-7s", variants[chosen[vi]].name, status[vi]);
    for (size_t si = 0; si < nsizes; si++) printf("  %zu %.4g", sizes[si], tf[vi][si]);
    printf("  TFLOP/s\n");
  }
  for (int i = 0; i < ncache; i++) {
    clReleaseKernel(cache[i].kern);
    clReleaseProgram(cache[i].prog);
  }
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  free(src);
  return all_ok ? 0 : 1;
}
