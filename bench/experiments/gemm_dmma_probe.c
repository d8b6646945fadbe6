/* bench/experiments/gemm_dmma_probe — which build of cl/gemm_dmma.cl (the f64 tensor-core GEMM)
 * is fastest, beside what ocal_gemm runs for f64 (the rule's choice) and CLBlast's f64, in one
 * run on one device:
 *
 *   gemm_dmma_probe CL_FILE [NAME=BMxBNxBKxWMxWNxSHAPExSTAGESxRASTER[xPTX[xA_BY_ROWS]] ...]
 *
 * Without variants, a fixed list (below). Each variant is built from CL_FILE on the device of
 * an ocal context (the first GPU), checked against a host product in long double at an odd
 * shape (8-byte copies) and an even one (16-byte copies and stores), NN and TT (every
 * transpose with DMMA_CHECK_ALL=1 or DMMA_EMULATE=1), alpha
 * 1.5, beta -0.5, tolerance (k + 8) 2^-52 of |alpha| sum |a b| + |beta c|; then C = A B is timed
 * at DMMA_SIZES (default 1024,4096,8192): one warm-up, then three rounds of about DMMA_ROUND
 * seconds (default 0.25) of back-to-back launches, the best round. ocal_gemm is timed the same way with OCAL_GEMM unset
 * (the engine the rule picks) and with OCAL_GEMM=clblast. Output, TFLOP/s:
 *   variant NAME check ok|FAIL|nobuild  S T  S T ...
 *   engine default|clblast (ENGINE NAME)  S T ...
 * DMMA_EMULATE=1 builds with -DMMA_EMULATE=1 (any device with doubles, e.g. PoCL) and checks
 * only: a test of this program where no GPU is. DMMA_VERBOSE=1 builds with -cl-nv-verbose
 * (NVIDIA) and prints the compiler's register and spill lines of each timed build. DMMA_TRANS=NN
 * (the default), TN, NT or TT: the transposes the variants are timed with (square sizes, so one
 * set of buffers serves all four). DMMA_OPTIONS: further build options for every variant (e.g.
 * -cl-nv-maxrregcount=128; NVIDIA's driver accepted it and left these kernels' registers as
 * they were). DMMA_MAXNREG=N: variants built through sm_90a PTX get `.maxnreg N`. Exit status
 * 0 when every check passed. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl_probe.h"
#include <ocal.h>

#define BENCH_NAME "bench/experiments/gemm_dmma_probe"
#include "../common.h"
#include "gemm_probe_timing.h"

#define OCAL_OK_OR_DIE(x)                                                        \
  do {                                                                           \
    if ((x) != OCAL_OK) DIE("%s: %s", #x, ocal_last_error());                    \
  } while (0)

/* ptx: built through PTX retargeted to sm_90a (as src/core/ptx.c does), which lifts OpenCL's
 * 48 KiB of local memory to the hardware's 227 KiB: deeper pipelines. */
typedef struct variant {
  char name[48];
  unsigned bm, bn, bk, wm, wn, shape, stages, raster, ptx, a_by_rows;
} variant;

static const variant builtin[] = {
    {"b128_k8_s2", 128, 128, 8, 2, 4, 884, 2, 8},
    {"b128_k4_s4", 128, 128, 4, 2, 4, 884, 4, 8},
    {"b128_w4x2_k8_s2", 128, 128, 8, 4, 2, 884, 2, 8},
    {"b128_k8_s2_noraster", 128, 128, 8, 2, 4, 884, 2, 0},
    {"b128x64_k8_s3", 128, 64, 8, 2, 2, 884, 3, 8},
    {"b64x128_k8_s3", 64, 128, 8, 2, 4, 884, 3, 8},
    {"b128x64_w4x2_k8_s3", 128, 64, 8, 4, 2, 884, 3, 8},
    {"b64_k8_s4", 64, 64, 8, 2, 2, 884, 4, 8},
    {"b64_k16_s2", 64, 64, 16, 2, 2, 884, 2, 8},
    {"b256x64_k8_s2", 256, 64, 8, 4, 2, 884, 2, 8},
    {"b128_k8_s2_1684", 128, 128, 8, 2, 4, 1684, 2, 8},
    {"b128_k4_s4_1684", 128, 128, 4, 2, 4, 1684, 4, 8},
    {"b128_k8_s2_1688", 128, 128, 8, 2, 4, 1688, 2, 8},
    {"b128x64_k8_s3_1688", 128, 64, 8, 2, 2, 1688, 3, 8},
    {"b64x128_k8_s3_1688", 64, 128, 8, 2, 4, 1688, 3, 8},
    {"b64_k8_s4_1688", 64, 64, 8, 2, 2, 1688, 4, 8},
    /* Through sm_90a PTX: more stages than 48 KiB hold. */
    {"b128_k8_s4_1684_x", 128, 128, 8, 2, 4, 1684, 4, 8, 1},
    {"b128_k8_s4_1688_x", 128, 128, 8, 2, 4, 1688, 4, 8, 1},
    {"b128_k16_s3_1688_x", 128, 128, 16, 2, 4, 1688, 3, 8, 1},
    {"b128_k8_s6_1688_x", 128, 128, 8, 2, 4, 1688, 6, 8, 1},
    {"b128x64_k8_s6_1688_x", 128, 64, 8, 2, 2, 1688, 6, 8, 1},
    {"b128x64_k16_s4_1688_x", 128, 64, 16, 2, 2, 1688, 4, 8, 1},
    {"b64_k16_s4_1688_x", 64, 64, 16, 2, 2, 1688, 4, 8, 1},
};

static cl_context clctx;
static cl_command_queue q;
static cl_device_id dev;
static char *src;
static char src_dir[4096]; /* the kernel file's directory, for its #include */
static int emulate, check_all, verbose, time_ta, time_tb;
static const char *extra_options = "";
static int maxnreg;
static double round_s = 0.25;


/* The compiler's lines about registers and spills in p's build log (DMMA_VERBOSE=1). */
static void print_usage(cl_program p, const char *name) {
  char log[16384] = "";
  clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
  for (char *line = strtok(log, "\n"); line; line = strtok(NULL, "\n"))
    if (strstr(line, "registers") || strstr(line, "spill") || strstr(line, "stack"))
      printf("usage %s: %s\n", name, line);
}

/* p rebuilt from its PTX with the target sm_90a (NULL, and a message, where that fails). */
static cl_program retarget(cl_program p) {
  size_t size = 0;
  OK(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL));
  char *text = calloc(1, size + 64);
  unsigned char *bins[1] = {(unsigned char *)text};
  OK(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL));
  clReleaseProgram(p);
  char *t = strstr(text, ".target sm_90");
  if (!t || (t[13] != '\n' && t[13] != ' ' && t[13] != ',' && t[13] != '\r')) {
    fprintf(stderr, "retarget: no .target sm_90 in the PTX\n");
    free(text);
    return NULL;
  }
  memmove(t + 14, t + 13, strlen(t + 13) + 1);
  t[13] = 'a';
  /* DMMA_MAXNREG=N: a register cap for ptxas (.maxnreg), which the driver's
   * -cl-nv-maxrregcount did not apply to these kernels. */
  char *entry = strstr(text, ".entry"), *body = entry ? strstr(entry, "\n{") : NULL;
  if (body && maxnreg > 0) {
    char directive[32];
    int d = snprintf(directive, sizeof directive, "\n.maxnreg %d", maxnreg);
    memmove(body + d, body, strlen(body) + 1);
    memcpy(body, directive, (size_t)d);
  }
  size_t n = strlen(text);
  const unsigned char *b[1] = {(const unsigned char *)text};
  cl_int err, st;
  cl_program r = clCreateProgramWithBinary(clctx, 1, &dev, &n, b, &st, &err);
  free(text);
  if (err != CL_SUCCESS ||
      clBuildProgram(r, 1, &dev, verbose ? "-cl-nv-verbose" : NULL, NULL, NULL) != CL_SUCCESS) {
    fprintf(stderr, "retarget: the sm_90a program does not build (error %d)\n", (int)err);
    if (err == CL_SUCCESS) clReleaseProgram(r);
    return NULL;
  }
  return r;
}

/* The kernel of variant v for transposes ta, tb and VEC, or NULL (build log on stderr); with
 * usage, the compiler's register lines printed (DMMA_VERBOSE=1). */
static cl_kernel build_as(const variant *v, int ta, int tb, int vec, int usage) {
  static const char *const spell[] = {"", " -DASM_KW=asm", " -DINL=inline",
                                      " -DASM_KW=asm -DINL=inline"};
  for (int e = 0; e < (emulate ? 1 : 4); e++) {
    char opt[4600];
    /* -I the kernel's directory: it includes cl/gemm_tc_common.cl, which the library inlines. */
    snprintf(opt, sizeof opt,
             "-I %s %s%s%s -DTA=%d -DTB=%d -DVEC=%d -DBM=%u -DBN=%u -DBK=%u -DWARPS_M=%u "
             "-DWARPS_N=%u -DSHAPE=%u -DSTAGES=%u -DRASTER=%u -DLOCAL_MAX=%u -DA_BY_ROWS=%u %s",
             src_dir, emulate ? "-DMMA_EMULATE=1" : "", verbose && usage ? " -cl-nv-verbose" : "",
             spell[e], ta, tb, vec, v->bm, v->bn, v->bk, v->wm, v->wn, v->shape, v->stages,
             v->raster, v->ptx ? 232448u : 48128u, v->a_by_rows, extra_options);
    cl_int err;
    cl_program p = clCreateProgramWithSource(clctx, 1, (const char **)&src, NULL, &err);
    OK(err);
    if (clBuildProgram(p, 1, &dev, opt, NULL, NULL) == CL_SUCCESS) {
      if (v->ptx && !emulate && !(p = retarget(p))) return NULL;
      if (verbose && usage) print_usage(p, v->name);
      cl_kernel k = clCreateKernel(p, "ocal_gemm_dmma", &err);
      clReleaseProgram(p);
      if (err == CL_SUCCESS) return k;
      continue;
    }
    if (e == 3 || emulate) {
      char log[4096] = "";
      clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
      fprintf(stderr, "%s: build failed: %.1500s\n", v->name, log);
    }
    clReleaseProgram(p);
  }
  return NULL;
}

/* build_as, and without -cl-nv-verbose where a driver refuses that option. */
static cl_kernel build(const variant *v, int ta, int tb, int vec, int usage) {
  cl_kernel k = build_as(v, ta, tb, vec, usage);
  return k || !(verbose && usage) ? k : build_as(v, ta, tb, vec, 0);
}

static void launch(const variant *v, cl_kernel k, cl_mem a, cl_uint lda, cl_mem b, cl_uint ldb,
                   cl_mem c, cl_uint ldc, cl_uint m, cl_uint n, cl_uint kk, double alpha,
                   double beta) {
  cl_uint one = 1;
  cl_int read_c = beta != 0.0;
  int i = set_operand_args(k, a, lda, b, ldb, c, ldc, m, n, kk);
  OK(clSetKernelArg(k, i++, 4, &kk));
  OK(clSetKernelArg(k, i++, 4, &one));
  OK(clSetKernelArg(k, i++, 8, &alpha));
  OK(clSetKernelArg(k, i++, 8, &beta));
  OK(clSetKernelArg(k, i++, 4, &read_c));
  size_t threads = 32u * v->wm * v->wn;
  size_t global[3] = {(n + v->bn - 1) / v->bn * threads, (m + v->bm - 1) / v->bm, 1};
  size_t local[3] = {threads, 1, 1};
  OK(clEnqueueNDRangeKernel(q, k, 3, NULL, global, local, 0, NULL, NULL));
}


static cl_mem upload(const double *h, size_t n) {
  cl_int err;
  cl_mem m = clCreateBuffer(clctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * 8, (void *)h, &err);
  OK(err);
  return m;
}

/* One check of variant v: m x n x k, every transpose; 1 when all are within the bound. */
static int check(const variant *v, size_t m, size_t n, size_t k, int vec) {
  size_t na = m * k, nb = k * n, nc = m * n;
  double *a = malloc(na * 8), *b = malloc(nb * 8), *c = malloc(nc * 8), *got = malloc(nc * 8);
  uint64_t s = 0x1234567ull + m;
  for (size_t i = 0; i < na; i++) a[i] = unit(&s);
  for (size_t i = 0; i < nb; i++) b[i] = unit(&s);
  for (size_t i = 0; i < nc; i++) c[i] = unit(&s);
  cl_mem ma = upload(a, na), mb = upload(b, nb);
  int ok = 1;
  for (int t = 0; t < 4 && ok; t += check_all ? 1 : 3) {
    int ta = t & 1, tb = t >> 1;
    cl_kernel kern = build(v, ta, tb, vec, 0);
    if (!kern) {
      ok = -1;
      break;
    }
    cl_mem mc = upload(c, nc);
    launch(v, kern, ma, (cl_uint)(ta ? m : k), mb, (cl_uint)(tb ? k : n), mc, (cl_uint)n,
           (cl_uint)m, (cl_uint)n, (cl_uint)k, 1.5, -0.5);
    OK(clEnqueueReadBuffer(q, mc, CL_TRUE, 0, nc * 8, got, 0, NULL, NULL));
    double worst = 0;
    for (size_t i = 0; i < m; i++)
      for (size_t j = 0; j < n; j++) {
        long double sum = 0, mag = 0;
        for (size_t p = 0; p < k; p++) {
          /* The same buffers read as op(A) = A^T when ta: A is then k x m. */
          long double x = ta ? a[p * m + i] : a[i * k + p];
          long double y = tb ? b[j * k + p] : b[p * n + j];
          sum += x * y, mag += fabsl(x * y);
        }
        long double ref = 1.5L * sum - 0.5L * c[i * n + j];
        double bound = (double)(1.5L * mag + 0.5L * fabsl((long double)c[i * n + j]));
        double e = fabs(got[i * n + j] - (double)ref) / ((double)(k + 8) * 0x1p-52 * bound);
        if (!(e <= 1.0)) ok = 0;
        if (e > worst || e != e) worst = e;
      }
    printf("check %s %c%c %zux%zux%zu: worst %.3g of the bound\n", v->name, ta ? 'T' : 'N',
           tb ? 'T' : 'N', m, n, k, worst);
    clReleaseMemObject(mc);
    clReleaseKernel(kern);
  }
  clReleaseMemObject(ma), clReleaseMemObject(mb);
  free(a), free(b), free(c), free(got);
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
  launch(t->v, t->k, t->a, t->s, t->b, t->s, t->c, t->s, t->s, t->s, t->s, 1.0, 0.0);
}
static void run_ocal(void *p) {
  timed *t = p;
  OCAL_OK_OR_DIE(ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1.0, t->oa, t->ob, 0.0, t->oc));
}

int main(int argc, char **argv) {
  if (argc < 2)
    DIE("usage: gemm_dmma_probe CL_FILE [NAME=BMxBNxBKxWMxWNxSHAPExSTAGESxRASTER[xPTX[xROWS]] ...]");
  src = read_text(argv[1]);
  /* The kernel file's directory as an absolute path: a compiler may build elsewhere. */
  if (!realpath(argv[1], src_dir)) DIE("cannot resolve %s", argv[1]);
  *strrchr(src_dir, '/') = 0;
  emulate = getenv("DMMA_EMULATE") && atoi(getenv("DMMA_EMULATE"));
  const char *tr = getenv("DMMA_TRANS");
  if (tr && (strlen(tr) != 2 || !strchr("NT", tr[0]) || !strchr("NT", tr[1])))
    DIE("DMMA_TRANS is NN, TN, NT or TT, not %s", tr);
  time_ta = tr && tr[0] == 'T', time_tb = tr && tr[1] == 'T';
  check_all = emulate || (getenv("DMMA_CHECK_ALL") && atoi(getenv("DMMA_CHECK_ALL")));
  verbose = getenv("DMMA_VERBOSE") && atoi(getenv("DMMA_VERBOSE"));
  if (getenv("DMMA_OPTIONS")) extra_options = getenv("DMMA_OPTIONS");
  if (getenv("DMMA_MAXNREG")) maxnreg = atoi(getenv("DMMA_MAXNREG"));
  if (getenv("DMMA_ROUND") && atof(getenv("DMMA_ROUND")) > 0) round_s = atof(getenv("DMMA_ROUND"));
  variant *vs = NULL;
  size_t nv = 0;
  if (argc > 2) {
    nv = (size_t)argc - 2;
    vs = calloc(nv, sizeof *vs);
    for (size_t i = 0; i < nv; i++) {
      variant *v = &vs[i];
      const char *eq = strchr(argv[i + 2], '=');
      if (!eq || sscanf(eq + 1, "%ux%ux%ux%ux%ux%ux%ux%ux%ux%u", &v->bm, &v->bn, &v->bk, &v->wm,
                        &v->wn, &v->shape, &v->stages, &v->raster, &v->ptx, &v->a_by_rows) < 8)
        DIE("bad variant %s", argv[i + 2]);
      snprintf(v->name, sizeof v->name, "%.*s", (int)(eq - argv[i + 2]), argv[i + 2]);
    }
  } else {
    nv = sizeof builtin / sizeof builtin[0];
    vs = malloc(sizeof builtin);
    memcpy(vs, builtin, sizeof builtin);
  }
  size_t sizes[8], ns = 0;
  const char *sz = getenv("DMMA_SIZES") ? getenv("DMMA_SIZES") : "1024,4096,8192";
  for (const char *p = sz; *p && ns < 8;) {
    sizes[ns++] = strtoul(p, (char **)&p, 10);
    if (*p == ',') p++;
  }
  if (emulate) ns = 0;

  ocal_context ctx;
  OCAL_OK_OR_DIE(ocal_context_create(NULL, &ctx));
  OCAL_OK_OR_DIE(ocal_context_get_cl_context(ctx, &clctx));
  OCAL_OK_OR_DIE(ocal_context_get_cl_queue(ctx, &q));
  OK(clGetContextInfo(clctx, CL_CONTEXT_DEVICES, sizeof dev, &dev, NULL));
  char dname[256] = "";
  clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof dname, dname, NULL);
  printf("device %s\n", dname);

  int all_ok = 1;
  double *h = NULL;
  size_t hmax = 0;
  for (size_t i = 0; i < ns; i++)
    if (sizes[i] * sizes[i] > hmax) hmax = sizes[i] * sizes[i];
  if (hmax) {
    h = malloc(hmax * 8);
    uint64_t s = 99;
    for (size_t i = 0; i < hmax; i++) h[i] = unit(&s);
  }
  cl_mem dm[8][3];
  for (size_t j = 0; j < ns; j++)
    for (int x = 0; x < 3; x++) dm[j][x] = upload(h, sizes[j] * sizes[j]);
  for (size_t i = 0; i < nv; i++) {
    const variant *v = &vs[i];
    int ok = check(v, 203, 77, 45, 0);
    if (ok == 1) ok = check(v, 258, 136, 72, 1);
    char line[512];
    int used = snprintf(line, sizeof line, "variant %s check %s", v->name,
                        ok == 1 ? "ok" : ok == 0 ? "FAIL" : "nobuild");
    if (ok != 1) all_ok = 0;
    if (ok == 1) {
      cl_kernel k = build(v, time_ta, time_tb, 1, 1);
      for (size_t j = 0; j < ns && k; j++) {
        size_t s = sizes[j];
        timed t = {v, k, dm[j][0], dm[j][1], dm[j][2], (cl_uint)s, NULL, NULL, NULL};
        double sec = best_time(q, run_variant, &t, round_s);
        used += snprintf(line + used, sizeof line - (size_t)used, "  %zu %.2f", s,
                         2.0 * (double)s * s * s / sec * 1e-12);
      }
      if (k) clReleaseKernel(k);
    }
    printf("%s\n", line);
    fflush(stdout);
  }
  for (size_t j = 0; j < ns; j++)
    for (int x = 0; x < 3; x++) clReleaseMemObject(dm[j][x]);
  ocal_context_release(ctx);

  /* ocal_gemm as the library runs it: the rule's engine, then CLBlast. */
  for (int e = 0; e < 2 && ns; e++) {
    if (e) setenv("OCAL_GEMM", "clblast", 1);
    else unsetenv("OCAL_GEMM");
    OCAL_OK_OR_DIE(ocal_context_create(NULL, &ctx));
    OCAL_OK_OR_DIE(ocal_context_get_cl_queue(ctx, &q));
    char line[512];
    const char *engine = "?", *reason = "";
    ocal_gemm_engine_query(ctx, OCAL_F64, OCAL_NO_TRANS, sizes[0], sizes[0], sizes[0], 1, &engine,
                           &reason);
    int used = snprintf(line, sizeof line, "engine %s (%s)", e ? "clblast" : "default", engine);
    for (size_t j = 0; j < ns; j++) {
      size_t s = sizes[j], shape[2] = {s, s};
      timed t = {NULL, NULL, NULL, NULL, NULL, (cl_uint)s, NULL, NULL, NULL};
      OCAL_OK_OR_DIE(ocal_buffer_from_host(ctx, OCAL_F64, 2, shape, h, &t.oa));
      OCAL_OK_OR_DIE(ocal_buffer_from_host(ctx, OCAL_F64, 2, shape, h, &t.ob));
      OCAL_OK_OR_DIE(ocal_buffer_create(ctx, OCAL_F64, 2, shape, &t.oc));
      double sec = best_time(q, run_ocal, &t, round_s);
      used += snprintf(line + used, sizeof line - (size_t)used, "  %zu %.2f", s,
                       2.0 * (double)s * s * s / sec * 1e-12);
      ocal_buffer_release(t.oa), ocal_buffer_release(t.ob), ocal_buffer_release(t.oc);
    }
    printf("%s\n", line);
    fflush(stdout);
    ocal_context_release(ctx);
  }
  free(h);
  free(vs);
  free(src);
  return all_ok ? 0 : 1;
}
