/* bench/experiments/scan_probe — cl/scan.cl's single-pass scan (NAME_lookback, decoupled look-back) built
 * with a matrix of variants, checked and timed against a plain device copy, in one run:
 *
 *   scan_probe CL_DIR
 *
 * Plain OpenCL and the ICD loader (not libocal), so that a variant can be tried before the
 * library's planner sizes launches for it. CL_DIR holds scan.cl and scan_probe.cl (the copy
 * kernels). It takes the first GPU of any platform, else the first CPU device, and then:
 *  1. times three copies of n floats (a float per work-item, a float4 per work-item,
 *     clEnqueueCopyBuffer) at each size; the fastest is the ceiling every ratio is taken to;
 *  2. for each variant (the table below: work-group size L, items per work-item IPT, how the
 *     tile is loaded, how the work-items' totals are scanned, flags packed with values, the
 *     look-back window, or no look-back at all), builds sum_lookback for f32 with those
 *     -D options, checks it at an odd size (untimed) and at every timed size, and times one
 *     warm-up and SCAN_REPS (10) launches by clGetEventProfilingInfo, reporting the median;
 *  3. for the variants marked, runs a build with OCAL_LB_STATS once at the largest size and
 *     prints how many predecessors a look-back looked at and how many windows it read.
 * Inputs are multiples of 1/8 in [-1, 1]: every partial sum of such a vector of up to 2^28
 * elements is a multiple of 1/8 far below 2^21 in magnitude, so every sum is exact in float
 * whatever the order of additions, and a result must equal the double-precision host prefix
 * exactly (a "none" variant, which skips the look-back on purpose, must equal the prefix of
 * its own tile). A variant with any wrong element prints FAIL and its speed is not a result.
 * Output: one line per variant, "name L IPT regs | GB/s ratio at each size | max error".
 * SCAN_SIZES (default "28 24": log2 of n), SCAN_REPS, SCAN_BUDGET_S (default 75: past it the
 * variants left are skipped, and said so) and SCAN_ONLY (a comma list of variant names).
 * SCAN_OPTS adds build options to every variant (e.g. -DOCAL_LB_WINDOW=2 -DOCAL_LB_SLOTS=2 to
 * test the look-back's sliding paths). SCAN_EMULATE_SHFL=1 runs the PTX-shuffle variants anywhere with the shuffles done through
 * local memory (-DOCAL_LB_SHFL_EMULATE): a test of their indexing where there is no NVIDIA GPU. */
#include <math.h>
#include <stdint.h>
#include <time.h>

#include "cl_probe.h"


/* load: OCAL_LB_LOAD (0 loop, 1 registers, 2 float4, 3 direct); bscan: OCAL_LB_BSCAN (0 Hillis-Steele
 * in place, 1 two buffers, 2 PTX warp shuffles); pack: OCAL_LB_PACK; window: OCAL_LB_WINDOW
 * (0: the group); none: OCAL_LB_NONE; stats: also run the OCAL_LB_STATS build. */
typedef struct variant {
  const char *name;
  int L, ipt, load, bscan, pack, window, none, stats;
  const char *extra; /* more build options */
} variant;

static const variant variants[] = {
    /* The kernel before this round. */
    {"base", 256, 16, 0, 0, 0, 0, 0, 0, "-DOCAL_LB_KEEP=0"},
    /* What the library runs (cl/scan.cl's defaults for f32). */
    {"library", 256, 24, 2, 1, 1, 128, 0, 1, "-DOCAL_LB_REREAD=1 -DOCAL_LB_CHUNK=8"},
    /* Round 1's best (0.92x at 2^28 on the H100) and its portable twin. */
    {"vec_shfl_pack_256x32", 256, 32, 2, 2, 1, 0, 0, 0, NULL},
    {"vec_pp_pack_256x32", 256, 32, 2, 1, 1, 0, 0, 0, NULL},
    /* Elements read from the local tile again after the look-back instead of held in
     * registers through it (OCAL_LB_REREAD), then loads in chunks of 8 (OCAL_LB_CHUNK):
     * fewer registers, more groups at once. */
    {"rr_pp_pack", 256, 16, 2, 1, 1, 0, 0, 1, "-DOCAL_LB_REREAD=1"},
    {"rr_pp_pack_256x24", 256, 24, 2, 1, 1, 0, 0, 0, "-DOCAL_LB_REREAD=1"},
    {"rr_pp_pack_256x32", 256, 32, 2, 1, 1, 0, 0, 1, "-DOCAL_LB_REREAD=1"},
    {"rr_pp_pack_128x48", 128, 48, 2, 1, 1, 0, 0, 0, "-DOCAL_LB_REREAD=1"},
    {"rr_pp_pack_128x64", 128, 64, 2, 1, 1, 0, 0, 0, "-DOCAL_LB_REREAD=1"},
    {"rrc8_pp_pack", 256, 16, 2, 1, 1, 0, 0, 0, "-DOCAL_LB_REREAD=1 -DOCAL_LB_CHUNK=8"},
    {"rrc8_pp_pack_256x24", 256, 24, 2, 1, 1, 0, 0, 1, "-DOCAL_LB_REREAD=1 -DOCAL_LB_CHUNK=8"},
    {"rrc4_pp_pack_256x28", 256, 28, 2, 1, 1, 0, 0, 0, "-DOCAL_LB_REREAD=1 -DOCAL_LB_CHUNK=4"},
    {"rrc8_pp_pack_256x32", 256, 32, 2, 1, 1, 0, 0, 1, "-DOCAL_LB_REREAD=1 -DOCAL_LB_CHUNK=8"},
    {"rrc8_pp_pack_256x40", 256, 40, 2, 1, 1, 0, 0, 0, "-DOCAL_LB_REREAD=1 -DOCAL_LB_CHUNK=8"},
    {"rrc8_pp_pack_128x64", 128, 64, 2, 1, 1, 0, 0, 0, "-DOCAL_LB_REREAD=1 -DOCAL_LB_CHUNK=8"},
    {"rrc8_pp_none_256x24", 256, 24, 2, 1, 0, 0, 1, 0, "-DOCAL_LB_REREAD=1 -DOCAL_LB_CHUNK=8"},
    {"rrc8_pp_none_256x32", 256, 32, 2, 1, 0, 0, 1, 0, "-DOCAL_LB_REREAD=1 -DOCAL_LB_CHUNK=8"},
    {"rrc8_shfl_pack_256x32", 256, 32, 2, 2, 1, 0, 0, 0, "-DOCAL_LB_REREAD=1 -DOCAL_LB_CHUNK=8"},
    {"rrc8_reg_pp_pack_256x24", 256, 24, 1, 1, 1, 0, 0, 0, "-DOCAL_LB_REREAD=1 -DOCAL_LB_CHUNK=8"},
    {"rrc8_pp_256x24", 256, 24, 2, 1, 0, 0, 0, 0, "-DOCAL_LB_REREAD=1 -DOCAL_LB_CHUNK=8"},
    /* Flags and values in separate words (devices without 64-bit atomics): wrong on the H100
     * in round 2 (most likely a value older than its flag; docs/scan.md). */
    {"rrc4_pp_256x12", 256, 12, 2, 1, 0, 0, 0, 0, "-DOCAL_LB_REREAD=1 -DOCAL_LB_CHUNK=4"},
    {"rrc8_pp_pack_256x32_w128", 256, 32, 2, 1, 1, 128, 0, 0, "-DOCAL_LB_REREAD=1 -DOCAL_LB_CHUNK=8"},
    /* The register theory checked with NVIDIA's own switch (fails elsewhere). */
    {"vec_shfl_pack_256x32_r64", 256, 32, 2, 2, 1, 0, 0, 0, "-cl-nv-maxrregcount=64"},
};
#define NVAR (sizeof variants / sizeof variants[0])

static cl_context ctx;
static cl_command_queue q;
static cl_device_id dev;
static char *scan_src;
static int nv_verbose, asm_kw_asm, have_int64_atomics, is_nvidia, emulate_shfl;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* Builds src with opts; returns NULL and puts the start of the log in why on failure, and the
 * ptxas register line in regs where -cl-nv-verbose gave one. */
static cl_program build(const char *src, const char *opts, char *why, size_t whylen, char *regs,
                        size_t regslen) {
  cl_int e;
  cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &e);
  OK(e);
  char full[1024];
  snprintf(full, sizeof full, "%s%s", opts, nv_verbose ? " -cl-nv-verbose" : "");
  e = clBuildProgram(p, 1, &dev, full, NULL, NULL);
  size_t loglen = 0;
  clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &loglen);
  char *log = calloc(1, loglen + 1);
  if (log) clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, loglen, log, NULL);
  if (regs) {
    regs[0] = 0;
    const char *r = log ? strstr(log, "Used ") : NULL;
    int n = 0;
    if (r && sscanf(r, "Used %d registers", &n) == 1) snprintf(regs, regslen, "%d", n);
    if (r && strstr(r, "spill") && !strstr(r, " 0 bytes spill")) snprintf(regs + strlen(regs), regslen - strlen(regs), "s");
  }
  if (e != CL_SUCCESS) {
    if (why) {
      snprintf(why, whylen, "%s", log ? log : "");
      for (char *c = why; *c; c++)
        if (*c == '\n') *c = ' ';
    }
    free(log);
    clReleaseProgram(p);
    return NULL;
  }
  free(log);
  return p;
}

/* Appends the variant's extra options and SCAN_OPTS, and spells out the knobs the variant
 * leaves alone (OCAL_LB_REREAD 0, OCAL_LB_CHUNK all, OCAL_LB_KEEP 1, the window), so that a variant means the same
 * kernel whatever cl/scan.cl's defaults (the library's choice) are. */
static void explicit_defaults(const variant *v, char *opts, size_t size) {
  const char *more = getenv("SCAN_OPTS");
  char all[512];
  snprintf(all, sizeof all, "%s %s", v->extra ? v->extra : "", more ? more : "");
  size_t len = strlen(opts);
  snprintf(opts + len, size - len, " %s", all);
  len = strlen(opts);
  if (!strstr(all, "OCAL_LB_REREAD")) snprintf(opts + len, size - len, " -DOCAL_LB_REREAD=0");
  len = strlen(opts);
  if (!strstr(all, "OCAL_LB_CHUNK")) snprintf(opts + len, size - len, " -DOCAL_LB_CHUNK=%d", v->ipt);
  len = strlen(opts);
  if (!strstr(all, "OCAL_LB_KEEP")) snprintf(opts + len, size - len, " -DOCAL_LB_KEEP=1");
  len = strlen(opts);
  if (!strstr(all, "OCAL_LB_WINDOW"))
    snprintf(opts + len, size - len, " -DOCAL_LB_WINDOW=%d", v->window ? v->window : v->L);
}

static double event_ms(cl_event ev) {
  cl_ulong a = 0, b = 0;
  OK(clWaitForEvents(1, &ev));
  OK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof a, &a, NULL));
  OK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof b, &b, NULL));
  clReleaseEvent(ev);
  return (double)(b - a) * 1e-6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, cmp_double);
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* The single-pass scan's state (cl/scan.cl: word 0 the ticket counter, words 1 and 2 the
 * statistics, then 8 words a tile: flags and two-word values, or packed four-word ones), and the
 * tickets and epochs handed out, as src/core/alloc.c keeps them. */
static cl_mem state;
static cl_ulong cap;
static cl_uint tickets, epoch;

static cl_event run_scan(cl_kernel k, const variant *v, cl_mem x, cl_mem y, size_t n) {
  size_t tile = (size_t)v->L * v->ipt, tiles = (n + tile - 1) / tile;
  if (tiles > cap) DIE("internal: %zu tiles, state for %llu", tiles, (unsigned long long)cap);
  cl_ulong zero = 0, R = n, ctiles = tiles;
  cl_uint base = tickets, ep = ++epoch;
  cl_int excl = 0;
  tickets += (cl_uint)tiles;
  int i = 0;
  OK(clSetKernelArg(k, i++, sizeof(cl_mem), &x));
  OK(clSetKernelArg(k, i++, sizeof zero, &zero));
  OK(clSetKernelArg(k, i++, sizeof(cl_mem), &y));
  OK(clSetKernelArg(k, i++, sizeof zero, &zero));
  OK(clSetKernelArg(k, i++, sizeof R, &R));
  OK(clSetKernelArg(k, i++, sizeof ctiles, &ctiles));
  OK(clSetKernelArg(k, i++, sizeof(cl_mem), &state));
  OK(clSetKernelArg(k, i++, sizeof cap, &cap));
  OK(clSetKernelArg(k, i++, sizeof base, &base));
  OK(clSetKernelArg(k, i++, sizeof ep, &ep));
  OK(clSetKernelArg(k, i++, sizeof excl, &excl));
  size_t global = tiles * (size_t)v->L, local = (size_t)v->L;
  cl_event ev;
  OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, &ev));
  return ev;
}

/* Largest |got - exact| over n elements, the exact prefix restarting at every tile of `reset`
 * elements (0: never). */
static double check(const float *x, cl_mem y, size_t n, size_t reset, float *buf) {
  OK(clEnqueueReadBuffer(q, y, CL_TRUE, 0, n * sizeof(float), buf, 0, NULL, NULL));
  double acc = 0, worst = 0;
  for (size_t i = 0; i < n; i++) {
    if (reset && i % reset == 0) acc = 0;
    acc += x[i];
    double d = fabs((double)buf[i] - acc);
    if (!(d <= worst)) worst = isnan(d) ? INFINITY : d;
  }
  return worst;
}

int main(int argc, char **argv) {
  if (argc < 2) DIE("usage: scan_probe CL_DIR");
  const double t_start = now();
  const double budget = getenv("SCAN_BUDGET_S") ? atof(getenv("SCAN_BUDGET_S")) : 75;
  const int reps = getenv("SCAN_REPS") ? atoi(getenv("SCAN_REPS")) : 10;
  const char *only = getenv("SCAN_ONLY");
  emulate_shfl = getenv("SCAN_EMULATE_SHFL") && atoi(getenv("SCAN_EMULATE_SHFL"));
  int lg[4], nsizes = 0;
  {
    const char *s = getenv("SCAN_SIZES") ? getenv("SCAN_SIZES") : "28 24";
    int used;
    while (nsizes < 4 && sscanf(s, "%d%n", &lg[nsizes], &used) == 1) {
      if (lg[nsizes] < 12 || lg[nsizes] > 30) DIE("SCAN_SIZES: log2 sizes from 12 to 30");
      nsizes++;
      s += used;
    }
    if (!nsizes) DIE("SCAN_SIZES names no size");
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/scan.cl", argv[1]);
  scan_src = read_text(path);
  snprintf(path, sizeof path, "%s/../bench/experiments/scan_probe.cl", argv[1]);
  char *copy_src = read_text(path);

  /* The first GPU, else the first CPU, of any platform. */
  cl_platform_id plats[16];
  cl_uint np = 0;
  OK(clGetPlatformIDs(16, plats, &np));
  int found = 0;
  for (int want = 0; want < 2 && !found; want++)
    for (cl_uint i = 0; i < np && !found; i++)
      if (clGetDeviceIDs(plats[i], want == 0 ? CL_DEVICE_TYPE_GPU : CL_DEVICE_TYPE_CPU, 1, &dev,
                         NULL) == CL_SUCCESS)
        found = 1;
  if (!found) DIE("no GPU or CPU OpenCL device");
  char name[256] = "", drv[128] = "", ext[8192] = "";
  cl_uint cus = 0;
  clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL);
  clGetDeviceInfo(dev, CL_DRIVER_VERSION, sizeof drv, drv, NULL);
  clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, sizeof ext, ext, NULL);
  clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, NULL);
  nv_verbose = strstr(ext, "cl_nv_compiler_options") != NULL;
  is_nvidia = strstr(ext, "cl_nv_device_attribute_query") != NULL;
  have_int64_atomics = strstr(ext, "cl_khr_int64_base_atomics") != NULL;
  printf("device %s, driver %s, %u CUs; int64 atomics %s, cl_khr_subgroups %s, PTX shuffles %s\n",
         name, drv, cus, have_int64_atomics ? "yes" : "no",
         strstr(ext, "cl_khr_subgroups") ? "yes" : "no", is_nvidia ? "tried" : "no");
  cl_int e;
  ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
  OK(e);
  q = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &e);
  OK(e);

  size_t nmax = 0;
  for (int s = 0; s < nsizes; s++)
    if (((size_t)1 << lg[s]) > nmax) nmax = (size_t)1 << lg[s];
  /* An odd size: a last tile part full, checked, not timed (SCAN_ODD: smaller for Oclgrind). */
  const size_t nodd = getenv("SCAN_ODD") ? (size_t)atol(getenv("SCAN_ODD")) : 3000017;
  if (nodd < 1) DIE("SCAN_ODD must be positive");
  if (nodd > nmax) nmax = nodd;
  float *x = malloc(nmax * sizeof *x), *buf = malloc(nmax * sizeof *buf);
  if (!x || !buf) DIE("no host memory for %zu floats", nmax);
  uint64_t r = 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i < nmax; i++) {
    r ^= r << 13, r ^= r >> 7, r ^= r << 17;
    x[i] = (float)((int)(r % 17) - 8) / 8.0f;
  }
  cl_mem dx = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, nmax * sizeof(float), x, &e);
  OK(e);
  cl_mem dy = clCreateBuffer(ctx, CL_MEM_READ_WRITE, nmax * sizeof(float), NULL, &e);
  OK(e);
  cap = (nmax / (128 * 8) + 16 + 3) / 4 * 4; /* the smallest tile: L 128 x IPT 8 */
  size_t sbytes = 4 * (4 + 8 * cap);
  state = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sbytes, NULL, &e);
  OK(e);
  {
    void *zeros = calloc(1, sbytes);
    OK(clEnqueueWriteBuffer(q, state, CL_TRUE, 0, sbytes, zeros, 0, NULL, NULL));
    free(zeros);
  }

  /* 1. The copies. */
  char why[600], regs[32];
  cl_program cp = build(copy_src, "", why, sizeof why, NULL, 0);
  if (!cp) DIE("copy kernels do not build: %.300s", why);
  cl_kernel c1 = clCreateKernel(cp, "probe_copy1", &e);
  OK(e);
  cl_kernel c4 = clCreateKernel(cp, "probe_copy4", &e);
  OK(e);
  {
    /* The macros a kernel could pick its variant by (bench/experiments/scan_probe.cl, probe_macros). */
    cl_kernel km = clCreateKernel(cp, "probe_macros", &e);
    OK(e);
    cl_mem dm = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 5 * sizeof(cl_int), NULL, &e);
    OK(e);
    cl_int m[5] = {0, 0, 0, 0, 0};
    size_t one = 1;
    OK(clSetKernelArg(km, 0, sizeof(cl_mem), &dm));
    OK(clEnqueueNDRangeKernel(q, km, 1, NULL, &one, NULL, 0, NULL, NULL));
    OK(clEnqueueReadBuffer(q, dm, CL_TRUE, 0, sizeof m, m, 0, NULL, NULL));
    printf("kernel macros: cl_khr_int64_base_atomics %d, cl_khr_subgroups %d, cl_nv_pragma_unroll %d, "
           "__NV_CL_C_VERSION %d, __opencl_c_subgroups %d\n", m[0], m[1], m[2], m[3], m[4]);
    clReleaseMemObject(dm);
    clReleaseKernel(km);
  }
  double ceiling[4];
  for (int s = 0; s < nsizes; s++) {
    size_t n = (size_t)1 << lg[s];
    double t[3][64], best[3];
    int nr = reps < 64 ? reps : 64;
    for (int which = 0; which < 3; which++) {
      for (int i = -1; i < nr; i++) {
        cl_event ev;
        if (which == 2) {
          OK(clEnqueueCopyBuffer(q, dx, dy, 0, 0, n * sizeof(float), 0, NULL, &ev));
        } else {
          cl_kernel k = which ? c4 : c1;
          size_t global = which ? n / 4 : n;
          OK(clSetKernelArg(k, 0, sizeof(cl_mem), &dx));
          OK(clSetKernelArg(k, 1, sizeof(cl_mem), &dy));
          OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, &ev));
        }
        double ms = event_ms(ev);
        if (i >= 0) t[which][i] = ms;
      }
      best[which] = 2.0 * n * sizeof(float) / (median(t[which], nr) * 1e-3) / 1e9;
    }
    ceiling[s] = fmax(best[0], fmax(best[1], best[2]));
    printf("copy 2^%d: float %.0f GB/s, float4 %.0f, clEnqueueCopyBuffer %.0f -> ceiling %.0f GB/s\n",
           lg[s], best[0], best[1], best[2], ceiling[s]);
  }

  /* 2. The variants. Each starts from a cleared state (as the library's is when it is new):
   * packed and separate-word variants lay the state out differently. */
  void *zero_state = calloc(1, sbytes);
  if (!zero_state) DIE("no host memory for the state");
  printf("%-26s %4s %3s %4s", "variant", "L", "IPT", "regs");
  for (int s = 0; s < nsizes; s++) printf(" | 2^%d GB/s  xcopy", lg[s]);
  printf(" | max err\n");
  int shown_log = 0, stats_wanted[NVAR] = {0}, failures = 0;
  for (size_t vi = 0; vi < NVAR; vi++) {
    const variant *v = &variants[vi];
    if (only) {
      char key[64];
      snprintf(key, sizeof key, ",%s,", v->name);
      char list[1024];
      snprintf(list, sizeof list, ",%s,", only);
      if (!strstr(list, key)) continue;
    }
    if (now() - t_start > budget) {
      printf("%-26s skipped: past SCAN_BUDGET_S=%.0f s\n", v->name, budget);
      continue;
    }
    if (v->bscan == 2 && !is_nvidia && !emulate_shfl) {
      printf("%-26s skipped: PTX shuffles need NVIDIA's compiler\n", v->name);
      continue;
    }
    if (v->pack && !have_int64_atomics) {
      printf("%-26s skipped: no cl_khr_int64_base_atomics\n", v->name);
      continue;
    }
    OK(clEnqueueWriteBuffer(q, state, CL_TRUE, 0, sbytes, zero_state, 0, NULL, NULL));
    tickets = 0;
    epoch = 0;
    char opts[1024];
    snprintf(opts, sizeof opts,
             "-DT=float -DOCAL_DTYPE_f32 -DOCAL_ONLY -DOCAL_ONLY_sum -DOCAL_KERNEL "
             "-DOCAL_KERNEL_lookback -DOCAL_WG_MAX=%d -DOCAL_LB_IPT=%d -DOCAL_LB_LOAD=%d "
             "-DOCAL_LB_BSCAN=%d -DOCAL_LB_PACK=%d -DOCAL_LB_NONE=%d%s%s",
             v->L, v->ipt, v->load, v->bscan, v->pack, v->none, asm_kw_asm ? " -DOCAL_ASM_KW=asm" : "",
             emulate_shfl ? " -DOCAL_LB_SHFL_EMULATE=1" : "");
    explicit_defaults(v, opts, sizeof opts);
    cl_program p = build(scan_src, opts, why, sizeof why, regs, sizeof regs);
    if (!p && v->bscan == 2 && !asm_kw_asm && strstr(why, "asm")) {
      /* NVIDIA's front end may want the keyword asm rather than clang's __asm__. */
      char again[1100];
      snprintf(again, sizeof again, "%s -DOCAL_ASM_KW=asm", opts);
      p = build(scan_src, again, why, sizeof why, regs, sizeof regs);
      if (p) {
        asm_kw_asm = 1;
        printf("note: built with -DOCAL_ASM_KW=asm from here on\n");
      }
    }
    if (!p) {
      printf("%-26s nobuild%s%.*s\n", v->name, shown_log ? "" : ": ", shown_log ? 0 : 300, why);
      shown_log = 1;
      failures++;
      continue;
    }
    cl_kernel k = clCreateKernel(p, "sum_lookback", &e);
    OK(e);
    size_t wg = 0;
    clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL);
    if (wg < (size_t)v->L) {
      printf("%-26s skipped: the kernel allows %zu work-items a group\n", v->name, wg);
      clReleaseKernel(k);
      clReleaseProgram(p);
      continue;
    }
    size_t tile = (size_t)v->L * v->ipt, reset = v->none ? tile : 0;
    double worst = 0;
    clReleaseEvent(run_scan(k, v, dx, dy, nodd));
    worst = fmax(worst, check(x, dy, nodd, reset, buf));
    printf("%-26s %4d %3d %4s", v->name, v->L, v->ipt, regs[0] ? regs : "-");
    for (int s = 0; s < nsizes; s++) {
      size_t n = (size_t)1 << lg[s];
      double t[64];
      int nr = reps < 64 ? reps : 64;
      for (int i = -1; i < nr; i++) {
        double ms = event_ms(run_scan(k, v, dx, dy, n));
        if (i >= 0) t[i] = ms;
      }
      worst = fmax(worst, check(x, dy, n, reset, buf));
      double gbs = 2.0 * n * sizeof(float) / (median(t, nr) * 1e-3) / 1e9;
      printf(" | %9.0f  %5.3f", gbs, gbs / ceiling[s]);
    }
    printf(" | %g %s\n", worst, worst == 0 ? (v->none ? "ok (tile work only)" : "ok") : "FAIL");
    if (worst != 0) failures++;
    stats_wanted[vi] = v->stats && worst == 0;
    clReleaseKernel(k);
    clReleaseProgram(p);
    fflush(stdout);
  }

  /* 3. Look-back statistics (a separate build: the counters' atomics cost time). */
  size_t n = (size_t)1 << lg[0];
  for (size_t vi = 0; vi < NVAR; vi++) {
    if (!stats_wanted[vi]) continue;
    if (now() - t_start > budget + 10) {
      printf("stats %s skipped: past the budget\n", variants[vi].name);
      continue;
    }
    const variant *v = &variants[vi];
    char opts[1024];
    snprintf(opts, sizeof opts,
             "-DT=float -DOCAL_DTYPE_f32 -DOCAL_ONLY -DOCAL_ONLY_sum -DOCAL_KERNEL "
             "-DOCAL_KERNEL_lookback -DOCAL_WG_MAX=%d -DOCAL_LB_IPT=%d -DOCAL_LB_LOAD=%d "
             "-DOCAL_LB_BSCAN=%d -DOCAL_LB_PACK=%d -DOCAL_LB_STATS=1%s%s",
             v->L, v->ipt, v->load, v->bscan, v->pack, asm_kw_asm ? " -DOCAL_ASM_KW=asm" : "",
             emulate_shfl ? " -DOCAL_LB_SHFL_EMULATE=1" : "");
    explicit_defaults(v, opts, sizeof opts);
    cl_program p = build(scan_src, opts, why, sizeof why, NULL, 0);
    if (!p) continue;
    cl_kernel k = clCreateKernel(p, "sum_lookback", &e);
    OK(e);
    cl_uint got[2];
    OK(clEnqueueWriteBuffer(q, state, CL_TRUE, 0, sbytes, zero_state, 0, NULL, NULL));
    tickets = 0;
    epoch = 0;
    double ms = event_ms(run_scan(k, v, dx, dy, n));
    OK(clEnqueueReadBuffer(q, state, CL_TRUE, 4, sizeof got, got, 0, NULL, NULL));
    size_t tiles = (n + (size_t)v->L * v->ipt - 1) / ((size_t)v->L * v->ipt);
    printf("stats %-20s 2^%d: %zu tiles, look-back %.1f predecessors and %.2f windows a tile (%.2f ms)\n",
           v->name, lg[0], tiles, (double)got[0] / (double)(tiles - 1),
           (double)got[1] / (double)(tiles - 1), ms);
    clReleaseKernel(k);
    clReleaseProgram(p);
  }
  free(zero_state);
  printf("total %.0f s, %d variant(s) failed or did not build\n", now() - t_start, failures);
  return failures ? 1 : 0;
}
