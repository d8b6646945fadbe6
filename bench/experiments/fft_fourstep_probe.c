/* bench/experiments/fft_fourstep_probe — what limits cl/fft_fourstep.cl on a GPU, in one run:
 *
 *   fft_fourstep_probe CL_FILE OUTDIR CONFIG ...      CONFIG: "logl,logr,c[,maxreg]"
 *
 * For each configuration: builds CL_FILE with the options src/fft/fourstep.c uses (and
 * -cl-nv-verbose where the compiler takes NVIDIA's options, so the build log has ptxas's
 * registers and spills), prints the kernels' private and local memory sizes, and writes the
 * program binary (PTX on NVIDIA) to OUTDIR with counts of its local-memory (stack) accesses.
 * Then times plain copies of 2^24 x 8 complex floats (1 GiB each way) with the access patterns
 * of FFT passes, to separate a pattern's own speed from the kernels' (on a GPU only, or anywhere
 * with PROBE_CPU set): a contiguous copy; VkFFT's three passes over 2^24 = 256^3 (16 columns a
 * row); ocal's pass 1 (4 columns of 4096 rows at a stride of 4096 points, written back the same
 * way) with each item moving all four columns of its rows as one float8, and staged, with
 * consecutive items on consecutive columns; and reads and writes of C columns at a stride
 * (C = 1 .. 16) in groups of 4096 points. First a line with the device's
 * CL_DEVICE_GLOBAL_MEM_CACHE_SIZE (what src/fft/fourstep.c sizes its launches by). One JSON object per line; a configuration that does not build is reported and skipped. */
#include <time.h>

#include "cl_probe.h"


static int count(const char *s, const char *w) {
  int n = 0;
  for (const char *p = s; (p = strstr(p, w)); p += strlen(w)) n++;
  return n;
}

static cl_context ctx;
static cl_device_id dev;
static cl_command_queue q;

static cl_program build(const char *src, const char *opts, char **log) {
  cl_int e;
  cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &e);
  OK(e);
  cl_int be = clBuildProgram(p, 1, &dev, opts, NULL, NULL);
  size_t n = 0;
  clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &n);
  *log = calloc(n + 1, 1);
  clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, n, *log, NULL);
  if (be != CL_SUCCESS) { /* reported, and the run goes on */
    printf("{\"build_failed\": \"%s\", \"error\": %d}\n", opts, (int)be);
    clReleaseProgram(p);
    return NULL;
  }
  return p;
}

static void json_str(const char *s) {
  putchar('"');
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') putchar('\\'), putchar(*s);
    else if (*s == '\n') fputs("\\n", stdout);
    else if ((unsigned char)*s >= 32) putchar(*s);
  }
  putchar('"');
}

/* Copies with FFT passes' access patterns. tile: a group moves C = 2^lc columns x 4096 / C rows,
 * element e = t + 256 i of it being row e / C, column e % C (rm/wm 0: columns fast) or row
 * e % P, column e / P (1: rows fast); the group's origin is g0 sb0 + g1 sb1 (g = g0 + G1 g1).
 * vec and staged: pass 1 of a 4096 x 4096 split at 4 columns per group, by float8 per item
 * (rows t + 256 m) or by float2 with consecutive items on consecutive columns. */
static const char *copy_src =
    "__kernel __attribute__((reqd_work_group_size(256, 1, 1))) void tile(__global const float2 *s,\n"
    "    __global float2 *d, uint lc, uint G1, ulong sb0, ulong sb1, ulong db0, ulong db1,\n"
    "    ulong scs, ulong sps, ulong dcs, ulong dps, int rm, int wm) {\n"
    "  __local float2 l[4096 + 64];\n"
    "  uint g = get_group_id(0), t = get_local_id(0), lp = 12 - lc, C = 1u << lc, P = 1u << lp;\n"
    "  ulong sb = (g % G1) * sb0 + (g / G1) * sb1, db = (g % G1) * db0 + (g / G1) * db1;\n"
    "  for (int i = 0; i < 16; i++) {\n"
    "    uint e = t + 256 * i, j = rm ? e >> lp : e & (C - 1), n = rm ? e & (P - 1) : e >> lc;\n"
    "    l[j * (P + 1) + n] = s[sb + j * scs + n * sps];\n"
    "  }\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  for (int i = 0; i < 16; i++) {\n"
    "    uint e = t + 256 * i, j = wm ? e >> lp : e & (C - 1), n = wm ? e & (P - 1) : e >> lc;\n"
    "    d[db + j * dcs + n * dps] = l[j * (P + 1) + n];\n"
    "  }\n"
    "}\n"
    "__kernel __attribute__((reqd_work_group_size(256, 1, 1))) void vec(__global const float8 *s,\n"
    "    __global float8 *d) {\n"
    "  uint g = get_group_id(0), t = get_local_id(0);\n"
    "  ulong o = (ulong)get_group_id(1) * (1 << 22) + g;\n"
    "  float8 v[16];\n"
    "  for (int m = 0; m < 16; m++) v[m] = s[o + (ulong)(t + 256 * m) * 1024];\n"
    "  for (int m = 0; m < 16; m++) d[o + (ulong)(t + 256 * m) * 1024] = v[15 - m] * 1.0001f;\n"
    "}\n"
    "__kernel __attribute__((reqd_work_group_size(256, 1, 1))) void staged(__global const float2 *s,\n"
    "    __global float2 *d) {\n"
    "  uint g = get_group_id(0), t = get_local_id(0);\n"
    "  ulong o = (ulong)get_group_id(1) * (1 << 24) + 4 * g;\n"
    "  float2 v[64];\n"
    "  for (int i = 0; i < 64; i++) {\n"
    "    uint e = t + 256 * i;\n"
    "    v[i] = s[o + (ulong)(e >> 2) * 4096 + (e & 3)];\n"
    "  }\n"
    "  for (int i = 0; i < 64; i++) {\n"
    "    uint e = t + 256 * i;\n"
    "    d[o + (ulong)(e >> 2) * 4096 + (e & 3)] = v[63 - i] * 1.0001f;\n"
    "  }\n"
    "}\n";

#define PN ((cl_ulong)1 << 24) /* points per transform */
#define PB 8                   /* transforms */
static cl_mem pa, pb;
static cl_kernel ktile, kvec, kstaged;

static void set_args(cl_kernel k, const cl_ulong *a, int na) {
  OK(clSetKernelArg(k, 0, sizeof pa, &pa));
  OK(clSetKernelArg(k, 1, sizeof pb, &pb));
  for (int i = 0; i < na; i++) OK(clSetKernelArg(k, 2 + i, 8, &a[i]));
}

static void tile(cl_uint lc, cl_uint g1, cl_ulong sb0, cl_ulong sb1, cl_ulong db0, cl_ulong db1,
                 cl_ulong scs, cl_ulong sps, cl_ulong dcs, cl_ulong dps, cl_int rm, cl_int wm) {
  cl_ulong a[] = {sb0, sb1, db0, db1, scs, sps, dcs, dps};
  OK(clSetKernelArg(ktile, 0, sizeof pa, &pa));
  OK(clSetKernelArg(ktile, 1, sizeof pb, &pb));
  OK(clSetKernelArg(ktile, 2, 4, &lc));
  OK(clSetKernelArg(ktile, 3, 4, &g1));
  for (int i = 0; i < 8; i++) OK(clSetKernelArg(ktile, 4 + i, 8, &a[i]));
  OK(clSetKernelArg(ktile, 12, 4, &rm));
  OK(clSetKernelArg(ktile, 13, 4, &wm));
  size_t gl = (size_t)(PN * PB / 4096) * 256, lo = 256;
  OK(clEnqueueNDRangeKernel(q, ktile, 1, NULL, &gl, &lo, 0, NULL, NULL));
}

static int pc, plogn; /* columns and log2 rows of the strided side */
static void pat_copy(void) { tile(4, 1, 0, 4096, 0, 4096, 256, 1, 256, 1, 1, 1); }
/* VkFFT's uploads for 2^24 = 256 x 256 x 256, 16 columns a row: strides 65536, 256, 1 */
static void pat_vkfft(void) {
  /* group g: column block and b (16 (g % 16) + 256 ((g / 16) % 256) = 16 (g % 4096)), then the
   * transform; a and the transform in the second (65536 a + 2^24 b = 65536 (256 b + a)) */
  tile(4, 16 * 256, 16, PN, 16, PN, 1, 65536, 1, 65536, 0, 0);
  tile(4, 16, 16, 65536, 16, 65536, 1, 256, 1, 256, 0, 0);
  tile(4, 1, 0, 4096, 0, 4096, 256, 1, 256, 1, 1, 1);
}
/* reads of pc columns at a row stride of 2^(24 - plogn) points, contiguous writes */
static void pat_read(void) {
  cl_ulong n2 = (cl_ulong)1 << (24 - plogn), c = (cl_ulong)pc, rows = 4096 / c;
  cl_uint lc = (cl_uint)__builtin_ctzll(c);
  tile(lc, (cl_uint)(n2 / c), c, rows * n2, 4096, 4096 * (n2 / c), 1, n2, rows, 1, 0, 1);
}
/* contiguous reads, writes of pc columns at a row stride of 2^plogn points */
static void pat_write(void) {
  cl_ulong n1 = (cl_ulong)1 << plogn, c = (cl_ulong)pc, rows = 4096 / c;
  cl_uint lc = (cl_uint)__builtin_ctzll(c);
  tile(lc, (cl_uint)(n1 / c), 4096, 4096 * (n1 / c), c, rows * n1, rows, 1, 1, n1, 1, 0);
}
static void pass1(cl_kernel k) {
  set_args(k, NULL, 0);
  size_t gl[2] = {1024 * 256, PB}, lo[2] = {256, 1};
  OK(clEnqueueNDRangeKernel(q, k, 2, NULL, gl, lo, 0, NULL, NULL));
}
static void pat_vec(void) { pass1(kvec); }
static void pat_staged(void) { pass1(kstaged); }

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* best of 5 after a warm-up, in us */
static double time_pattern(void (*f)(void)) {
  f();
  OK(clFinish(q));
  double best = 1e30;
  for (int r = 0; r < 5; r++) {
    double t0 = now();
    f();
    OK(clFinish(q));
    if (now() - t0 < best) best = now() - t0;
  }
  return best * 1e6;
}

int main(int argc, char **argv) {
  if (argc < 3) DIE("usage: fft_fourstep_probe CL_FILE OUTDIR CONFIG ...");
  cl_platform_id plats[8];
  cl_uint np = 0;
  OK(clGetPlatformIDs(8, plats, &np));
  int found = 0;
  for (cl_uint i = 0; i < np && !found; i++)
    found = clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_GPU, 1, &dev, NULL) == CL_SUCCESS;
  int gpu = found;
  for (cl_uint i = 0; i < np && !found; i++) /* a CPU, to try this program out */
    found = clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 1, &dev, NULL) == CL_SUCCESS;
  if (!found) DIE("no OpenCL device");
  cl_int e;
  ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
  OK(e);
  q = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &e);
  OK(e);
  char ext[8192] = "";
  clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, sizeof ext - 1, ext, NULL);
  int nv = strstr(ext, "cl_nv_compiler_options") != NULL;
  {
    char name[256] = "";
    cl_ulong gcache = 0;
    cl_uint line = 0;
    clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name - 1, name, NULL);
    clGetDeviceInfo(dev, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, sizeof gcache, &gcache, NULL);
    clGetDeviceInfo(dev, CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE, sizeof line, &line, NULL);
    printf("{\"device\": \"%s\", \"global_mem_cache_bytes\": %llu, \"cacheline\": %u}\n", name,
           (unsigned long long)gcache, line);
  }
  char *src = read_text(argv[1]);
  cl_ulong local = 0;
  OK(clGetDeviceInfo(dev, CL_DEVICE_LOCAL_MEM_SIZE, sizeof local, &local, NULL));
  for (int i = 3; i < argc; i++) {
    int logl, logr, c, maxreg = 0;
    if (sscanf(argv[i], "%d,%d,%d,%d", &logl, &logr, &c, &maxreg) < 3) DIE("bad config %s", argv[i]);
    char opts[256];
    /* maxreg: -cl-nv-maxrregcount=N (NVIDIA's compiler rejects the form with a space) */
    /* staging rounds as src/fft/fourstep.c picks them */
    int sr = 1;
    while (sr < (1 << logr) && (cl_ulong)c * (((cl_ulong)1 << logl) / (cl_ulong)sr + 8) * 8 > local)
      sr *= 2;
    int n = snprintf(opts, sizeof opts,
                     "-DFS_LOGL=%d -DFS_LOGR=%d -DFS_C=%d -DFS_PLANE=%d -DFS_SR=%d", logl, logr, c,
                     logl >= 13, sr);
    if (nv) n += snprintf(opts + n, sizeof opts - (size_t)n, " -cl-nv-verbose");
    if (nv && maxreg > 0)
      snprintf(opts + n, sizeof opts - (size_t)n, " -cl-nv-maxrregcount=%d", maxreg);
    char *log;
    cl_program p = build(src, opts, &log);
    if (!p) {
      free(log);
      continue;
    }
    size_t bsz = 0;
    OK(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof bsz, &bsz, NULL));
    unsigned char *bin = calloc(bsz + 1, 1);
    OK(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL));
    char path[512];
    snprintf(path, sizeof path, "%s/fs_%d_%d_%d_%d.ptx", argv[2], logl, logr, c, maxreg);
    FILE *f = fopen(path, "wb");
    if (f) fwrite(bin, 1, bsz, f), fclose(f);
    printf("{\"config\": \"%s\", \"opts\": \"%s\", \"ld_local\": %d, \"st_local\": %d, "
           "\"local_decl\": %d, \"ld_global\": %d, \"st_global\": %d, \"bar\": %d", argv[i],
           opts, count((char *)bin, "ld.local"), count((char *)bin, "st.local"),
           count((char *)bin, ".local .align"), count((char *)bin, "ld.global"),
           count((char *)bin, "st.global"), count((char *)bin, "bar.sync"));
    const char *names[2] = {"ocal_fft_fourstep_pass1", "ocal_fft_fourstep_pass2"};
    for (int k = 0; k < 2; k++) {
      cl_kernel kk = clCreateKernel(p, names[k], &e);
      OK(e);
      cl_ulong priv = 0, loc = 0;
      size_t wg = 0;
      clGetKernelWorkGroupInfo(kk, dev, CL_KERNEL_PRIVATE_MEM_SIZE, sizeof priv, &priv, NULL);
      clGetKernelWorkGroupInfo(kk, dev, CL_KERNEL_LOCAL_MEM_SIZE, sizeof loc, &loc, NULL);
      clGetKernelWorkGroupInfo(kk, dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL);
      printf(", \"pass%d\": {\"private\": %llu, \"local\": %llu, \"max_wg\": %zu}", k + 1,
             (unsigned long long)priv, (unsigned long long)loc, wg);
      clReleaseKernel(kk);
    }
    printf(", \"log\": ");
    json_str(log);
    printf("}\n");
    fflush(stdout);
    free(bin);
    free(log);
    clReleaseProgram(p);
  }
  if (!gpu && !getenv("PROBE_CPU")) return 0;
  size_t bytes = (size_t)(PN * PB * 8);
  pa = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &e);
  OK(e);
  pb = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &e);
  OK(e);
  float one = 1.0f;
  OK(clEnqueueFillBuffer(q, pa, &one, sizeof one, 0, bytes, 0, NULL, NULL));
  OK(clEnqueueFillBuffer(q, pb, &one, sizeof one, 0, bytes, 0, NULL, NULL));
  char *log;
  cl_program cp = build(copy_src, "", &log);
  free(log);
  if (!cp) return 1;
  ktile = clCreateKernel(cp, "tile", &e);
  OK(e);
  kvec = clCreateKernel(cp, "vec", &e);
  OK(e);
  kstaged = clCreateKernel(cp, "staged", &e);
  OK(e);
  printf("{\"copy\": \"contiguous\", \"us\": %.1f}\n", time_pattern(pat_copy));
  printf("{\"copy\": \"vkfft 256^3, three passes\", \"us\": %.1f}\n", time_pattern(pat_vkfft));
  printf("{\"copy\": \"pass 1 4096 x 4096, float8 per item\", \"us\": %.1f}\n",
         time_pattern(pat_vec));
  printf("{\"copy\": \"pass 1 4096 x 4096, staged\", \"us\": %.1f}\n", time_pattern(pat_staged));
  for (pc = 1; pc <= 16; pc *= 2)
    for (plogn = 10; plogn <= 14; plogn += 2) {
      printf("{\"copy\": \"strided reads\", \"columns\": %d, \"stride\": %d, \"us\": %.1f}\n", pc,
             1 << (24 - plogn), time_pattern(pat_read));
      printf("{\"copy\": \"strided writes\", \"columns\": %d, \"stride\": %d, \"us\": %.1f}\n", pc,
             1 << plogn, time_pattern(pat_write));
    }
  return 0;
}
