/* bench/fft_fourstep_probe — what limits cl/fft_fourstep.cl on a GPU, in one run:
 *
 *   fft_fourstep_probe CL_FILE OUTDIR CONFIG ...      CONFIG: "logl,logr,c[,maxreg]"
 *
 * For each configuration: builds CL_FILE with the options src/fft/fourstep.c uses (and
 * -cl-nv-verbose where the compiler takes NVIDIA's options, so the build log has ptxas's
 * registers and spills), prints the kernels' private and local memory sizes, and writes the
 * program binary (PTX on NVIDIA) to OUTDIR with counts of its local-memory (stack) accesses.
 * Then times copies with the access patterns of the two passes (2^24 complex floats: rows of
 * C values at a stride, and contiguous rows written at a stride), to separate the memory
 * pattern's own speed from the kernels' (on a GPU only, or anywhere with PROBE_CPU set). One
 * JSON object per line; a configuration that does not build is reported and skipped. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIE(...) (fprintf(stderr, __VA_ARGS__), fputc('\n', stderr), exit(1))
#define OK(x)                                                   \
  do {                                                          \
    cl_int e_ = (x);                                            \
    if (e_ != CL_SUCCESS) DIE("%s: error %d", #x, (int)e_);     \
  } while (0)

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) DIE("cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (fread(s, 1, (size_t)n, f) != (size_t)n) DIE("cannot read %s", path);
  s[n] = 0;
  fclose(f);
  return s;
}

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

/* Copies with the passes' access patterns: each item moves R chunks (VT) in rows
 * lr + m T / LPR, LPR items side by side in a row (the group covers LPR chunks of each row);
 * mode bit 1: read at a stride (rows of CPR chunks), else contiguously; bit 2: write so. */
static const char *copy_src =
    "__kernel __attribute__((reqd_work_group_size(T, 1, 1))) void strided(__global const VT *s,\n"
    "    __global VT *d, const uint cpr, const int mode) {\n"
    "  const uint t = get_local_id(0), g = get_group_id(0);\n"
    "  const uint col = g * LPR + t % LPR, lr = t / LPR;\n"
    "  VT v[R];\n"
    "  #pragma unroll\n"
    "  for (int m = 0; m < R; m++)\n"
    "    v[m] = (mode & 1) ? s[(size_t)(lr + m * (T / LPR)) * cpr + col] : s[(size_t)g * T * R + t + m * T];\n"
    "  #pragma unroll\n"
    "  for (int m = 0; m < R; m++) {\n"
    "    if (mode & 2) d[(size_t)(lr + m * (T / LPR)) * cpr + col] = v[m];\n"
    "    else d[(size_t)g * T * R + t + m * T] = v[m];\n"
    "  }\n"
    "}\n";

static double time_kernel(cl_kernel k, size_t global, size_t local) {
  double best = 1e30;
  for (int rep = 0; rep < 6; rep++) {
    cl_event ev;
    OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, &ev));
    OK(clWaitForEvents(1, &ev));
    cl_ulong a, b;
    OK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof a, &a, NULL));
    OK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof b, &b, NULL));
    clReleaseEvent(ev);
    if (rep > 0 && (double)(b - a) * 1e-3 < best) best = (double)(b - a) * 1e-3;
  }
  return best;
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
  char *src = slurp(argv[1]);
  for (int i = 3; i < argc; i++) {
    int logl, logr, c, maxreg = 0;
    if (sscanf(argv[i], "%d,%d,%d,%d", &logl, &logr, &c, &maxreg) < 3) DIE("bad config %s", argv[i]);
    char opts[256];
    /* maxreg: -cl-nv-maxrregcount=N (NVIDIA's compiler rejects the form with a space) */
    int n = snprintf(opts, sizeof opts, "-DFS_LOGL=%d -DFS_LOGR=%d -DFS_C=%d -DFS_PLANE=%d", logl,
                     logr, c, logl >= 13);
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
  /* access patterns over 2^24 complex floats (128 MiB each way) */
  size_t bytes = (size_t)8 << 24;
  cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &e);
  OK(e);
  cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &e);
  OK(e);
  char zero = 0;
  OK(clEnqueueFillBuffer(q, a, &zero, 1, 0, bytes, 0, NULL, NULL));
  OK(clEnqueueFillBuffer(q, b, &zero, 1, 0, bytes, 0, NULL, NULL));
  static const struct {
    int cb, r, t, lpr, mode;
  } cfg[] = {{32, 16, 256, 1, 0}, {32, 16, 256, 1, 1}, {32, 16, 256, 1, 2}, {32, 16, 256, 1, 3},
             {8, 16, 512, 1, 1},  {16, 16, 256, 1, 1}, {8, 16, 512, 1, 3},
             {32, 16, 128, 1, 2}, {32, 8, 256, 1, 2},  {32, 16, 16, 1, 2},
             {32, 16, 64, 1, 2},  {32, 16, 256, 2, 2}, {32, 16, 256, 4, 2}, {32, 16, 1024, 4, 2},
             {64, 16, 256, 1, 2}, {16, 16, 256, 1, 2}, {128, 4, 256, 1, 2}, {32, 16, 512, 8, 2},
             {64, 16, 256, 2, 2}, {32, 4, 256, 4, 2},  {32, 4, 1024, 1, 2}, {8, 16, 512, 1, 0}};
  for (size_t ci = 0; ci < sizeof cfg / sizeof cfg[0]; ci++) {
    const char *vt = cfg[ci].cb == 8 ? "float2" : cfg[ci].cb == 16 ? "float4" :
                     cfg[ci].cb == 32 ? "float8" : cfg[ci].cb == 64 ? "float16" : "double16";
    int r = cfg[ci].r, t = cfg[ci].t, lpr = cfg[ci].lpr;
    size_t rows = (size_t)r * t / lpr, chunks = bytes / cfg[ci].cb, cpr = chunks / rows;
    char opts[128], *log;
    snprintf(opts, sizeof opts, "-DVT=%s -DR=%d -DT=%d -DLPR=%d", vt, r, t, lpr);
    cl_program p = build(copy_src, opts, &log);
    free(log);
    if (!p) continue;
    cl_kernel k = clCreateKernel(p, "strided", &e);
    OK(e);
    cl_uint cp = (cl_uint)cpr;
    cl_int md = cfg[ci].mode;
    OK(clSetKernelArg(k, 0, sizeof a, &a));
    OK(clSetKernelArg(k, 1, sizeof b, &b));
    OK(clSetKernelArg(k, 2, sizeof cp, &cp));
    OK(clSetKernelArg(k, 3, sizeof md, &md));
    size_t groups = cpr / (size_t)lpr;
    double us = time_kernel(k, groups * (size_t)t, (size_t)t);
    printf("{\"copy\": \"%s%s\", \"chunk\": %d, \"r\": %d, \"t\": %d, \"lpr\": %d, "
           "\"rows\": %zu, \"stride_kib\": %zu, \"us\": %.1f, \"gbs\": %.0f}\n",
           md & 1 ? "SR" : "CR", md & 2 ? "+SW" : "+CW", cfg[ci].cb, r, t, lpr, rows,
           cpr * (size_t)cfg[ci].cb / 1024, us, 2.0 * (double)bytes / us * 1e-3);
    fflush(stdout);
    clReleaseKernel(k);
    clReleaseProgram(p);
  }
  return 0;
}
