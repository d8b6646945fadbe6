/* bench/experiments/gemm_wgmma_probe — which build of cl/gemm_wgmma.cl (Hopper's wgmma: the
 * library's two-warpgroup kernel, or the warp-specialised one with a producer warpgroup,
 * mbarriers, setmaxnreg and a persistent block walk) is fastest, beside what ocal_gemm runs,
 * in one run on one device:
 *
 *   gemm_wgmma_probe CL_DIR [NAME:TYPE:GRID:OPTIONS ...]
 *
 * CL_DIR holds gemm_wgmma.cl and the files it includes. TYPE is tf32 (C = A B^T, both k-contiguous),
 * f16 or bf16 (C = A B, B read in place n-major: -DB_MN=1 is added), f16k or bf16k (C = A B^T,
 * both k-contiguous); -DTMA=1 among the options gives the build whose stages the tensor copy
 * engine fills (its tensor-map scratch is passed); GRID is 0 (a work-group
 * per block) or p (persistent: as many work-groups as compute units); OPTIONS are build options
 * (-DWS=1 gives 384 work-items a group). Without variants, a fixed list (below). Each variant is
 * built as src/core/ptx.c builds the library's (PTX retargeted to sm_90a, "//@" markers made
 * live; where the PTX's entry names no thread count, ".reqntid" is added so that ptxas can
 * honour setmaxnreg), checked against a double host product of the truncated inputs at
 * 333 x 520 x 200 and 520 x 600 x 264 on 7 work-groups (every group runs several blocks),
 * alpha 1.5, beta -0.5, tolerance (k + 8) 2^-23 of |alpha| sum |a b| + |beta c| (plus the
 * output's rounding for 16-bit C), then C = A B^T (A B) is timed at WG_SIZES (default
 * 1024,4096,8192): best of three rounds of about 0.1 s of back-to-back launches. ocal_gemm
 * (NN, precision tf32 for f32; the rule's engine, then mma.sync and wgmma under OCAL_GEMM=tc
 * and wgmma; then TF32 NT under the rule) is timed the same way, then the MLP's three large
 * products and 512^3 in TF32 under the rule, on ocal's exact FP32 kernel, on wgmma and on
 * mma.sync (OCAL_GEMM=ocal, wgmma, tc), with the calling thread's CPU time per call.
 * WG_NO_VARIANTS=1 skips the variants; WG_NO_LIBRARY=1 skips ocal_gemm. Output, TFLOP/s:
 *   variant NAME TYPE check ok|FAIL|nobuild  S T  S T ...
 *   ocal_gemm TYPE NN|NT rule|OCAL_GEMM=tc|OCAL_GEMM=wgmma  S T (ENGINE) ...
 *   mlp tf32 LABEL MxNxK rule|ocal|wgmma|tc T TFLOP/s, U us a call, host CPU C us (ENGINE)
 * Exit status 0 when every check passed. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl_probe.h"
#include <ocal.h>

#define BENCH_NAME "bench/experiments/gemm_wgmma_probe"
#include "../common.h"
#include "gemm_probe_timing.h"

#define OCAL_OK_OR_DIE(x)                                     \
  do {                                                        \
    if ((x) != OCAL_OK) DIE("%s: %s", #x, ocal_last_error()); \
  } while (0)

typedef struct variant {
  char name[40], type[8], options[200];
  int persistent;
} variant;

#define BASE "-DBN=256 -DSTAGES=4 -DRASTER=8"
static const variant builtin[] = {
    {"base", "tf32", BASE, 0},
    {"tma", "tf32", BASE " -DTMA=1", 0},
    {"tma_bn128", "tf32", "-DBN=128 -DSTAGES=4 -DRASTER=8 -DTMA=1", 0},
    {"ws", "tf32", BASE " -DWS=1", 0},
    {"ws_regs", "tf32", BASE " -DWS=1 -DREGS=1", 0},
    {"ws_persist", "tf32", BASE " -DWS=1", 1},
    {"ws_regs_persist", "tf32", BASE " -DWS=1 -DREGS=1", 1},
    {"ws_regs_persist_r16", "tf32", "-DBN=256 -DSTAGES=4 -DRASTER=16 -DWS=1 -DREGS=1", 1},
    {"base", "f16", BASE, 0},
    {"tma", "f16", BASE " -DTMA=1", 0},
    {"tma_bn128", "f16", "-DBN=128 -DSTAGES=4 -DRASTER=8 -DTMA=1", 0},
    {"ws_regs", "f16", BASE " -DWS=1 -DREGS=1", 0},
    {"ws_regs_persist", "f16", BASE " -DWS=1 -DREGS=1", 1},
    {"base", "bf16", BASE, 0},
    {"tma", "bf16", BASE " -DTMA=1", 0},
    {"ws_regs_persist", "bf16", BASE " -DWS=1 -DREGS=1", 1},
};

static cl_context clctx;
static cl_command_queue q;
static cl_device_id dev;
static char *src;
static const char *cl_dir; /* -I for the kernel's #include lines */
static unsigned cus;

/* The text of s with its first "//@" markers removed, the target sm_90a and, where the kernel's
 * entry names no thread count, ".reqntid threads, 1, 1" after its parameter list. */
static char *retarget_text(const char *s, unsigned threads) {
  size_t n = strlen(s);
  char *out = malloc(n + 64), *w = out;
  const char *t = strstr(s, ".target sm_90");
  if (!t) return NULL;
  int has_count = strstr(s, ".reqntid") || strstr(s, ".maxntid");
  static int told;
  if (!told++) printf("the driver's PTX %s a thread count (.reqntid or .maxntid)\n",
                      has_count ? "names" : "does not name");
  const char *entry = strstr(s, ".entry ocal_gemm_wgmma");
  const char *close = entry ? strstr(entry, "\n)") : NULL;
  for (const char *p = s; *p;) {
    if (p == t) {
      memcpy(w, ".target sm_90a", 14), w += 14, p += 13;
      if (*p == 'a') p++;
      continue;
    }
    if (p[0] == '/' && p[1] == '/' && p[2] == '@') {
      p += 3;
      continue;
    }
    *w++ = *p++;
    if (!has_count && close && p == close + 2) w += sprintf(w, "\n.reqntid %u, 1, 1", threads);
  }
  *w = 0;
  return out;
}

static int is_half(const variant *v) { return strcmp(v->type, "tf32") != 0; }
/* f16 / bf16: B read n-major (k x n, C = A B); f16k / bf16k: k-major like TF32's (C = A B^T). */
static int b_mn(const variant *v) { return is_half(v) && v->type[strlen(v->type) - 1] != 'k'; }
static int is_bf16(const variant *v) { return strncmp(v->type, "bf16", 4) == 0; }
static int is_tma(const variant *v) { return strstr(v->options, "-DTMA=1") != NULL; }
static size_t bn_of(const variant *v) {
  return strstr(v->options, "-DBN=128") ? 128 : strstr(v->options, "-DBN=64") ? 64 : 256;
}
static cl_mem maps; /* the TMA build's tensor maps: 256 bytes a work-group */
#define MAPS_BYTES ((size_t)64 << 20)
static cl_kernel build(const variant *v, unsigned threads) {
  char opt[4600];
  snprintf(opt, sizeof opt, "-I %s -DOCAL_PTX_TARGET=sm_90a -DSMEM_MAX=232448 %s%s %s",
           cl_dir, !is_half(v) ? "" : is_bf16(v) ? "-DWG_BF16" : "-DWG_F16",
           b_mn(v) ? " -DB_MN=1" : "", v->options);
  cl_int err;
  cl_program p = clCreateProgramWithSource(clctx, 1, (const char **)&src, NULL, &err);
  OK(err);
  if (clBuildProgram(p, 1, &dev, opt, NULL, NULL) != CL_SUCCESS) {
    char log[4096] = "";
    clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
    fprintf(stderr, "%s %s: build failed: %.1500s\n", v->name, v->type, log);
    clReleaseProgram(p);
    return NULL;
  }
  size_t size = 0;
  OK(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL));
  char *text = calloc(1, size + 1);
  unsigned char *bins[1] = {(unsigned char *)text};
  OK(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL));
  clReleaseProgram(p);
  char *ptx = retarget_text(text, threads);
  free(text);
  if (!ptx) {
    fprintf(stderr, "%s: no .target sm_90 in the PTX\n", v->name);
    return NULL;
  }
  size_t n = strlen(ptx);
  const unsigned char *b[1] = {(const unsigned char *)ptx};
  cl_int st;
  p = clCreateProgramWithBinary(clctx, 1, &dev, &n, b, &st, &err);
  free(ptx);
  if (err != CL_SUCCESS) return NULL;
  if (clBuildProgram(p, 1, &dev, NULL, NULL, NULL) != CL_SUCCESS) {
    char log[4096] = "";
    clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
    fprintf(stderr, "%s %s: sm_90a build failed: %.1500s\n", v->name, v->type, log);
    clReleaseProgram(p);
    return NULL;
  }
  cl_kernel k = clCreateKernel(p, "ocal_gemm_wgmma", &err);
  clReleaseProgram(p);
  return err == CL_SUCCESS ? k : NULL;
}

static unsigned threads_of(const variant *v) { return strstr(v->options, "-DWS=1") ? 384 : 256; }

/* C = alpha A B^T + beta C (tf32) or alpha A B + beta C (16-bit), m x n x k, on `groups`
 * work-groups (0: one per block). */
static cl_int launch(const variant *v, cl_kernel k, cl_mem a, cl_mem b, cl_mem c, cl_uint m,
                     cl_uint n, cl_uint kk, float alpha, float beta, size_t groups) {
  cl_uint lda = kk, ldb = b_mn(v) ? n : kk, ldc = n;
  cl_int read_c = beta != 0.0f;
  int i = set_operand_args(k, a, lda, b, ldb, c, ldc, m, n, kk);
  OK(clSetKernelArg(k, i++, 4, &alpha));
  OK(clSetKernelArg(k, i++, 4, &beta));
  OK(clSetKernelArg(k, i++, 4, &read_c));
  const size_t bn = bn_of(v);
  size_t threads = threads_of(v), blocks = (n + bn - 1) / bn * ((m + 127) / 128);
  if (is_tma(v)) {
    if (blocks * 256 > MAPS_BYTES) DIE("%u x %u: too many blocks for the maps' scratch", m, n);
    OK(clSetKernelArg(k, i++, sizeof maps, &maps));
  }
  size_t global[3], local[3] = {threads, 1, 1};
  if (threads == 384) {
    size_t g = groups ? groups : blocks;
    global[0] = (g < blocks ? g : blocks) * threads, global[1] = 1, global[2] = 1;
  } else {
    global[0] = (n + bn - 1) / bn * threads, global[1] = (m + 127) / 128, global[2] = 1;
  }
  return clEnqueueNDRangeKernel(q, k, 3, NULL, global, local, 0, NULL, NULL);
}


/* x's bits in the variant's element type (tf32: f32), and back as the value the tensor cores
 * see (tf32: truncated to 10 mantissa bits). */
static void encode(const variant *v, const float *x, void *out, size_t n) {
  if (!is_half(v)) {
    memcpy(out, x, n * 4);
    return;
  }
  OCAL_OK_OR_DIE(ocal_half_encode(is_bf16(v) ? OCAL_BF16 : OCAL_F16, x, (uint16_t *)out, n));
}
static void decode(const variant *v, const void *in, float *x, size_t n) {
  if (!is_half(v)) {
    memcpy(x, in, n * 4);
    return;
  }
  OCAL_OK_OR_DIE(ocal_half_decode(is_bf16(v) ? OCAL_BF16 : OCAL_F16, (const uint16_t *)in, x, n));
}
static double seen(const variant *v, float x) {
  if (is_half(v)) return x;
  uint32_t u;
  memcpy(&u, &x, 4);
  u &= 0xffffe000u;
  memcpy(&x, &u, 4);
  return x;
}

static cl_mem upload(const void *h, size_t bytes) {
  cl_int err;
  cl_mem m = clCreateBuffer(clctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, (void *)h, &err);
  OK(err);
  return m;
}

/* One check of variant v at m x n x k on `groups` work-groups; 1 when within the bound. */
static int check(const variant *v, cl_kernel kern, size_t m, size_t n, size_t k, size_t groups) {
  size_t es = is_half(v) ? 2 : 4, na = m * k, nb = k * n, nc = m * n;
  float *a = malloc(na * 4), *b = malloc(nb * 4), *c = malloc(nc * 4), *got = malloc(nc * 4);
  void *raw = malloc((na > nb ? (na > nc ? na : nc) : (nb > nc ? nb : nc)) * 4);
  uint64_t s = 0x1234567ull + m;
  for (size_t i = 0; i < na; i++) a[i] = (float)unit(&s);
  for (size_t i = 0; i < nb; i++) b[i] = (float)unit(&s);
  for (size_t i = 0; i < nc; i++) c[i] = (float)unit(&s);
  /* The values as stored (16-bit inputs rounded once). */
  encode(v, a, raw, na), decode(v, raw, a, na);
  cl_mem ma = upload(raw, na * es);
  encode(v, b, raw, nb), decode(v, raw, b, nb);
  cl_mem mb = upload(raw, nb * es);
  encode(v, c, raw, nc), decode(v, raw, c, nc);
  cl_mem mc = upload(raw, nc * es);
  int ok = 1;
  if (launch(v, kern, ma, mb, mc, (cl_uint)m, (cl_uint)n, (cl_uint)k, 1.5f, -0.5f, groups) !=
      CL_SUCCESS)
    ok = -1;
  double worst = 0;
  if (ok == 1) {
    OK(clEnqueueReadBuffer(q, mc, CL_TRUE, 0, nc * es, raw, 0, NULL, NULL));
    decode(v, raw, got, nc);
    const double unit_out = !is_half(v) ? 0 : is_bf16(v) ? 0x1p-8 : 0x1p-11;
    for (size_t i = 0; i < m; i++)
      for (size_t j = 0; j < n; j++) {
        double sum = 0, mag = 0;
        for (size_t p = 0; p < k; p++) {
          /* tf32, f16k, bf16k: B is n x k; f16, bf16: B is k x n. */
          double x = seen(v, a[i * k + p]), y = seen(v, b_mn(v) ? b[p * n + j] : b[j * k + p]);
          sum += x * y, mag += fabs(x * y);
        }
        double ref = 1.5 * sum - 0.5 * c[i * n + j];
        double bound = (double)(k + 8) * 0x1p-23 * (1.5 * mag + 0.5 * fabs(c[i * n + j])) +
                       unit_out * fabs(ref);
        double e = fabs(got[i * n + j] - ref) / bound;
        if (!(e <= 1.0)) ok = 0;
        if (e > worst || e != e) worst = e;
      }
  }
  printf("check %s %s %zux%zux%zu on %zu groups: worst %.3g of the bound\n", v->name, v->type, m,
         n, k, groups, worst);
  clReleaseMemObject(ma), clReleaseMemObject(mb), clReleaseMemObject(mc);
  free(a), free(b), free(c), free(got), free(raw);
  return ok;
}


typedef struct timed {
  const variant *v;
  cl_kernel k;
  cl_mem a, b, c;
  cl_uint s;
  ocal_buffer oa, ob, oc;
} timed;
static void run_variant(void *p) {
  timed *t = p;
  OK(launch(t->v, t->k, t->a, t->b, t->c, t->s, t->s, t->s, 1.0f, 0.0f,
            t->v->persistent ? cus : 0));
}
static ocal_transpose lib_tb;
static void run_ocal(void *p) {
  timed *t = p;
  OCAL_OK_OR_DIE(ocal_gemm(OCAL_NO_TRANS, lib_tb, 1.0, t->oa, t->ob, 0.0, t->oc));
}

/* The calling thread's CPU seconds per call of fn over `calls` calls queued back to back
 * (the host's share: where it matches the wall time per call, the host bounds the rate). */
static double cpu_per_call(cl_command_queue queue, run_fn fn, void *arg, long calls) {
  struct timespec t0, t1;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
  for (long i = 0; i < calls; i++) fn(arg);
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
  OK(clFinish(queue));
  return ((double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec)) /
         (double)calls;
}

static ocal_transpose mlp_ta, mlp_tb;
static void run_mlp(void *p) {
  timed *t = p;
  OCAL_OK_OR_DIE(ocal_gemm(mlp_ta, mlp_tb, 1.0, t->oa, t->ob, 0.0, t->oc));
}

int main(int argc, char **argv) {
  if (argc < 2) DIE("usage: gemm_wgmma_probe CL_DIR [NAME:TYPE:GRID:OPTIONS ...]");
  char path[1100];
  snprintf(path, sizeof path, "%s/gemm_wgmma.cl", argv[1]);
  src = read_text(path);
  static char dir[4096]; /* absolute: a compiler may build elsewhere */
  if (!realpath(argv[1], dir)) DIE("cannot resolve %s", argv[1]);
  cl_dir = dir;
  variant *vs;
  size_t nv;
  if (argc > 2) {
    nv = (size_t)argc - 2;
    vs = calloc(nv, sizeof *vs);
    for (size_t i = 0; i < nv; i++) {
      char grid[8] = "";
      if (sscanf(argv[i + 2], "%39[^:]:%7[^:]:%7[^:]:%199[^\n]", vs[i].name, vs[i].type, grid,
                 vs[i].options) < 3)
        DIE("bad variant %s", argv[i + 2]);
      vs[i].persistent = grid[0] == 'p';
    }
  } else {
    nv = sizeof builtin / sizeof builtin[0];
    vs = malloc(sizeof builtin);
    memcpy(vs, builtin, sizeof builtin);
  }
  if (getenv("WG_NO_VARIANTS")) nv = 0; /* the library's lines only */
  size_t sizes[8], ns = 0;
  const char *sz = getenv("WG_SIZES") ? getenv("WG_SIZES") : "1024,4096,8192";
  for (const char *p = sz; *p && ns < 8;) {
    sizes[ns++] = strtoul(p, (char **)&p, 10);
    if (*p == ',') p++;
  }

  ocal_context ctx;
  OCAL_OK_OR_DIE(ocal_context_create(NULL, &ctx));
  OCAL_OK_OR_DIE(ocal_context_get_cl_context(ctx, &clctx));
  OCAL_OK_OR_DIE(ocal_context_get_cl_queue(ctx, &q));
  OK(clGetContextInfo(clctx, CL_CONTEXT_DEVICES, sizeof dev, &dev, NULL));
  char dname[256] = "";
  clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof dname, dname, NULL);
  cl_uint cu = 0;
  clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL);
  cus = cu;
  printf("device %s, %u compute units\n", dname, cus);
  cl_int merr;
  maps = clCreateBuffer(clctx, CL_MEM_READ_WRITE, MAPS_BYTES, NULL, &merr);
  OK(merr);

  size_t hmax = 0;
  for (size_t i = 0; i < ns; i++)
    if (sizes[i] * sizes[i] > hmax) hmax = sizes[i] * sizes[i];
  if (hmax < 1024 * 1024) hmax = 1024 * 1024; /* the MLP's operands too */
  float *h = malloc(hmax * 4 + 4);
  uint16_t *h16 = malloc(hmax * 2 + 2);
  uint64_t s = 99;
  for (size_t i = 0; i < hmax; i++) h[i] = (float)unit(&s);
  OCAL_OK_OR_DIE(ocal_half_encode(OCAL_F16, h, h16, hmax));
  int all_ok = 1;
  for (size_t i = 0; i < nv; i++) {
    const variant *v = &vs[i];
    cl_kernel k = build(v, threads_of(v));
    int ok = k ? check(v, k, 333, 520, 200, v->persistent ? 7 : 0) : -1;
    if (ok == 1) ok = check(v, k, 520, 600, 264, v->persistent ? 7 : 0);
    char line[512];
    int used = snprintf(line, sizeof line, "variant %s %s check %s", v->name, v->type,
                        ok == 1 ? "ok" : ok == 0 ? "FAIL" : "nobuild");
    if (ok != 1) all_ok = 0;
    for (size_t j = 0; j < ns && ok == 1; j++) {
      size_t n = sizes[j], bytes = n * n * (is_half(v) ? 2 : 4);
      /* bf16 times f16 bits: the same magnitudes, the same work. */
      timed t = {v, k, upload(is_half(v) ? (void *)h16 : (void *)h, bytes),
                 upload(is_half(v) ? (void *)h16 : (void *)h, bytes),
                 upload(is_half(v) ? (void *)h16 : (void *)h, bytes), (cl_uint)n, NULL, NULL,
                 NULL};
      double sec = best_time(q, run_variant, &t, 0.1);
      used += snprintf(line + used, sizeof line - (size_t)used, "  %zu %.1f", n,
                       2.0 * (double)n * n * n / sec * 1e-12);
      clReleaseMemObject(t.a), clReleaseMemObject(t.b), clReleaseMemObject(t.c);
    }
    if (k) clReleaseKernel(k);
    printf("%s\n", line);
    fflush(stdout);
  }
  clReleaseMemObject(maps);
  ocal_context_release(ctx);

  /* ocal_gemm as the library runs it (NN). */
  static const char *const types[] = {"tf32", "f16", "bf16"};
  setenv("OCAL_GEMM_PRECISION", "tf32", 1);
  static const char *const lib_engines[] = {NULL, "tc", "wgmma"};
  for (int e = 0; e < 10 && !getenv("WG_NO_LIBRARY"); e++) {
    /* Rows 0-8: each type under the rule, mma.sync and wgmma; row 9: TF32 NT under the rule
     * (B already k-contiguous: no pack). */
    ocal_dtype dt = e % 3 == 0 ? OCAL_F32 : e % 3 == 1 ? OCAL_F16 : OCAL_BF16;
    const char *eng = lib_engines[e < 9 ? e / 3 : 0];
    ocal_transpose tb = e == 9 ? OCAL_TRANS : OCAL_NO_TRANS;
    if (eng) setenv("OCAL_GEMM", eng, 1);
    else unsetenv("OCAL_GEMM");
    OCAL_OK_OR_DIE(ocal_context_create(NULL, &ctx));
    OCAL_OK_OR_DIE(ocal_context_get_cl_queue(ctx, &q));
    if (e == 0) {
      const char *detail = "";
      ocal_gemm_precision pr;
      int tc = 0;
      ocal_gemm_get_precision(ctx, &pr, &tc, &detail);
      printf("probe: %s\n", detail);
    }
    char line[768];
    int used = snprintf(line, sizeof line, "ocal_gemm %s N%c %s%s", types[e % 3],
                        tb ? 'T' : 'N', eng ? "OCAL_GEMM=" : "rule", eng ? eng : "");
    for (size_t j = 0; j < ns; j++) {
      size_t n = sizes[j], shape[2] = {n, n};
      const char *engine = "?", *reason = "";
      ocal_gemm_engine_query(ctx, dt, OCAL_NO_TRANS, n, n, n, 1, &engine, &reason);
      timed t = {NULL, NULL, NULL, NULL, NULL, (cl_uint)n, NULL, NULL, NULL};
      const void *hv = dt == OCAL_F32 ? (const void *)h : (const void *)h16;
      OCAL_OK_OR_DIE(ocal_buffer_from_host(ctx, dt, 2, shape, hv, &t.oa));
      OCAL_OK_OR_DIE(ocal_buffer_from_host(ctx, dt, 2, shape, hv, &t.ob));
      OCAL_OK_OR_DIE(ocal_buffer_create(ctx, dt, 2, shape, &t.oc));
      double sec = 0;
      lib_tb = tb;
      if (ocal_gemm(OCAL_NO_TRANS, tb, 1.0, t.oa, t.ob, 0.0, t.oc) == OCAL_OK)
        sec = best_time(q, run_ocal, &t, 0.1);
      used += snprintf(line + used, sizeof line - (size_t)used, "  %zu %.1f (%s)", n,
                       sec > 0 ? 2.0 * (double)n * n * n / sec * 1e-12 : 0.0, engine);
      ocal_buffer_release(t.oa), ocal_buffer_release(t.ob), ocal_buffer_release(t.oc);
    }
    printf("%s\n", line);
    fflush(stdout);
    ocal_context_release(ctx);
  }
  /* The MLP's products in TF32 (784-512-10 at batch 256, as the gemm suite's rows) and 512^3:
   * the rule's engine, then ocal's exact FP32 kernel (OCAL_GEMM=ocal), wgmma and mma.sync. */
  static const char *const mlp_engines[] = {NULL, "ocal", "wgmma", "tc"};
  static const struct {
    const char *label;
    size_t m, n, k;
    ocal_transpose ta, tb;
  } nn[] = {{"fc1_forward_NN", 256, 512, 784, OCAL_NO_TRANS, OCAL_NO_TRANS},
            {"fc1_dW_TN", 784, 512, 256, OCAL_TRANS, OCAL_NO_TRANS},
            {"fc1_dX_NT", 256, 784, 512, OCAL_NO_TRANS, OCAL_TRANS},
            {"square_NN", 512, 512, 512, OCAL_NO_TRANS, OCAL_NO_TRANS}};
  for (int e = 0; e < 4 && !getenv("WG_NO_LIBRARY"); e++) {
    if (e) setenv("OCAL_GEMM", mlp_engines[e], 1);
    else unsetenv("OCAL_GEMM");
    OCAL_OK_OR_DIE(ocal_context_create(NULL, &ctx));
    OCAL_OK_OR_DIE(ocal_context_get_cl_queue(ctx, &q));
    for (size_t i = 0; i < sizeof nn / sizeof nn[0]; i++) {
      size_t sa[2] = {nn[i].ta ? nn[i].k : nn[i].m, nn[i].ta ? nn[i].m : nn[i].k};
      size_t sb[2] = {nn[i].tb ? nn[i].n : nn[i].k, nn[i].tb ? nn[i].k : nn[i].n};
      size_t sc[2] = {nn[i].m, nn[i].n};
      const char *engine = "?", *reason = "";
      ocal_gemm_engine_query(ctx, OCAL_F32, nn[i].ta, nn[i].m, nn[i].n, nn[i].k, 1, &engine,
                             &reason);
      timed t = {NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL};
      OCAL_OK_OR_DIE(ocal_buffer_from_host(ctx, OCAL_F32, 2, sa, h, &t.oa));
      OCAL_OK_OR_DIE(ocal_buffer_from_host(ctx, OCAL_F32, 2, sb, h, &t.ob));
      OCAL_OK_OR_DIE(ocal_buffer_create(ctx, OCAL_F32, 2, sc, &t.oc));
      mlp_ta = nn[i].ta, mlp_tb = nn[i].tb;
      double sec = 0;
      if (ocal_gemm(mlp_ta, mlp_tb, 1.0, t.oa, t.ob, 0.0, t.oc) == OCAL_OK)
        sec = best_time(q, run_mlp, &t, 0.1);
      else
        printf("mlp %s: %s\n", nn[i].label, ocal_last_error());
      double cpu = sec > 0 ? cpu_per_call(q, run_mlp, &t, 2000) : 0.0;
      printf("mlp tf32 %s %zux%zux%zu %s %.2f TFLOP/s, %.1f us a call, host CPU %.1f us (%s)\n",
             nn[i].label, nn[i].m, nn[i].n, nn[i].k, e ? mlp_engines[e] : "rule",
             sec > 0 ? 2.0 * nn[i].m * nn[i].n * nn[i].k / sec * 1e-12 : 0.0, sec * 1e6,
             cpu * 1e6, engine);
      ocal_buffer_release(t.oa), ocal_buffer_release(t.ob), ocal_buffer_release(t.oc);
    }
    fflush(stdout);
    ocal_context_release(ctx);
  }
  free(h), free(h16), free(vs), free(src);
  return all_ok ? 0 : 1;
}
