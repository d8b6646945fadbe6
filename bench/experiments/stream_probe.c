/* bench/experiments/stream_probe — how fast one read of a large f32 array can go on this
 * device, by access pattern, in plain OpenCL (no libocal): the ceiling of a full reduction.
 *
 *   bench/experiments/stream_probe [log2 elements (28)] [rounds (20)]
 *
 * Every kernel sums float4 vectors into one partial per work-group (a local-memory tree); the
 * host adds the partials in double and checks them against the exact sum of the input (small
 * integers, so every partial is exact in f32). Patterns:
 *   gs     grid stride: work-item i reads vectors i + j * (global size), U loads then U adds
 *   chunk  group g reads its own contiguous range of vectors, its work-items striding by the
 *          group's size (CUB's even share)
 *   tile   one group per tile of WG x U vectors, as many groups as tiles (no loop)
 * each with plain loads and with ld.global.nc.L1::no_allocate.L2::256B (NVIDIA only, "h"),
 * over groups per compute unit, group sizes and U. A copy (read + write, grid stride) is timed
 * too. Prints one line per variant: GB/s of the best and the median round (profiling events). */

#include "cl_probe.h"

static const char *src =
    "#ifdef HINT\n"
    "float4 ld(__global const float4 *p) {\n"
    "  uint a, b, c, d;\n"
    "  __asm__(\"ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];\"\n"
    "          : \"=r\"(a), \"=r\"(b), \"=r\"(c), \"=r\"(d) : \"l\"(p));\n"
    "  return as_float4((uint4)(a, b, c, d));\n"
    "}\n"
    "#else\n"
    "#define ld(p) (*(p))\n"
    "#endif\n"
    "#define TREE(acc)                                                   \\\n"
    "  __local float s[WG];                                              \\\n"
    "  s[get_local_id(0)] = acc.x + acc.y + acc.z + acc.w;               \\\n"
    "  for (uint w = WG / 2; w > 0; w >>= 1) {                           \\\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);                                   \\\n"
    "    if (get_local_id(0) < w) s[get_local_id(0)] += s[get_local_id(0) + w]; \\\n"
    "  }                                                                 \\\n"
    "  if (get_local_id(0) == 0) out[get_group_id(0)] = s[0];\n"
    "__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))\n"
    "void gs(__global const float4 *x, ulong n, __global float *out) {\n"
    "  size_t g = get_global_size(0), i = get_global_id(0);\n"
    "  float4 acc = 0;\n"
    "  for (; i + (U - 1) * g < n; i += U * g) {\n"
    "    float4 v[U];\n"
    "#pragma unroll\n"
    "    for (int j = 0; j < U; j++) v[j] = ld(x + i + j * g);\n"
    "#pragma unroll\n"
    "    for (int j = 0; j < U; j++) acc += v[j];\n"
    "  }\n"
    "  for (; i < n; i += g) acc += ld(x + i);\n"
    "  TREE(acc)\n"
    "}\n"
    "__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))\n"
    "void chunk(__global const float4 *x, ulong n, __global float *out) {\n"
    "  size_t len = (n + get_num_groups(0) - 1) / get_num_groups(0);\n"
    "  len = (len + WG * U - 1) / (WG * U) * (WG * U);\n"
    "  size_t lo = get_group_id(0) * len, hi = min(lo + len, (size_t)n);\n"
    "  size_t i = lo + get_local_id(0);\n"
    "  float4 acc = 0;\n"
    "  for (; i + (U - 1) * WG < hi; i += U * WG) {\n"
    "    float4 v[U];\n"
    "#pragma unroll\n"
    "    for (int j = 0; j < U; j++) v[j] = ld(x + i + j * WG);\n"
    "#pragma unroll\n"
    "    for (int j = 0; j < U; j++) acc += v[j];\n"
    "  }\n"
    "  for (; i < hi; i += WG) acc += ld(x + i);\n"
    "  TREE(acc)\n"
    "}\n"
    "__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))\n"
    "void tile(__global const float4 *x, ulong n, __global float *out) {\n"
    "  size_t i = get_group_id(0) * (WG * U) + get_local_id(0);\n"
    "  float4 v[U];\n"
    "#pragma unroll\n"
    "  for (int j = 0; j < U; j++) v[j] = i + j * WG < n ? ld(x + i + j * WG) : (float4)0;\n"
    "  float4 acc = 0;\n"
    "#pragma unroll\n"
    "  for (int j = 0; j < U; j++) acc += v[j];\n"
    "  TREE(acc)\n"
    "}\n"
    "__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))\n"
    "void copy(__global const float4 *x, ulong n, __global float4 *y) {\n"
    "  size_t g = get_global_size(0);\n"
    "  for (size_t i = get_global_id(0); i < n; i += g) y[i] = ld(x + i);\n"
    "}\n";

static cl_context ctx;
static cl_device_id dev;
static cl_command_queue q;
static int nvidia;

static cl_program build(int wg, int u, int hint) {
  char opts[128];
  snprintf(opts, sizeof opts, "-DWG=%d -DU=%d%s", wg, u, hint ? " -DHINT" : "");
  cl_int e;
  cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &e);
  OK(e);
  if (clBuildProgram(p, 1, &dev, opts, NULL, NULL) != CL_SUCCESS) {
    char log[8192] = "";
    clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
    DIE("build %s failed:\n%s", opts, log);
  }
  return p;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Times `rounds` launches of kernel `name`; returns 0 and prints a line, or 1 on a wrong sum. */
static int run(const char *name, int wg, int u, int hint, size_t groups, cl_mem x, size_t n4,
               cl_mem out, double exact, int rounds, double bytes) {
  cl_program p = build(wg, u, hint);
  cl_int e;
  cl_kernel k = clCreateKernel(p, name, &e);
  OK(e);
  cl_ulong n = n4;
  OK(clSetKernelArg(k, 0, sizeof x, &x));
  OK(clSetKernelArg(k, 1, sizeof n, &n));
  OK(clSetKernelArg(k, 2, sizeof out, &out));
  size_t gsz = groups * (size_t)wg, lsz = (size_t)wg;
  double *t = malloc(sizeof(double) * (size_t)rounds);
  for (int r = -2; r < rounds; r++) {
    cl_event ev;
    OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &gsz, &lsz, 0, NULL, &ev));
    OK(clWaitForEvents(1, &ev));
    cl_ulong a, b;
    OK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof a, &a, NULL));
    OK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof b, &b, NULL));
    clReleaseEvent(ev);
    if (r >= 0) t[r] = (double)(b - a) * 1e-9;
  }
  int bad = 0;
  if (strcmp(name, "copy") != 0) {
    float *part = malloc(sizeof(float) * groups);
    OK(clEnqueueReadBuffer(q, out, CL_TRUE, 0, sizeof(float) * groups, part, 0, NULL, NULL));
    double s = 0;
    for (size_t g = 0; g < groups; g++) s += part[g];
    bad = s != exact;
    free(part);
  }
  qsort(t, (size_t)rounds, sizeof *t, cmp);
  printf("%-5s wg %4d u %d %s groups %7zu: best %7.1f GB/s, median %7.1f GB/s%s\n", name, wg,
         u, hint ? "h" : "-", groups, bytes / t[0] * 1e-9, bytes / t[rounds / 2] * 1e-9,
         bad ? "  WRONG SUM" : "");
  fflush(stdout);
  free(t);
  clReleaseKernel(k);
  clReleaseProgram(p);
  return bad;
}

int main(int argc, char **argv) {
  int lg = argc > 1 ? atoi(argv[1]) : 28, rounds = argc > 2 ? atoi(argv[2]) : 20;
  if (lg < 10 || lg > 31 || rounds < 1) DIE("usage: stream_probe [log2 elements 10..31] [rounds]");
  size_t n = (size_t)1 << lg, n4 = n / 4;
  cl_platform_id plats[8];
  cl_uint np = 0;
  OK(clGetPlatformIDs(8, plats, &np));
  for (cl_uint i = 0; i < np && !dev; i++)
    if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_GPU, 1, &dev, NULL) != CL_SUCCESS) dev = NULL;
  if (!dev) OK(clGetDeviceIDs(plats[0], CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
  char dname[256], vendor[256];
  cl_uint cus;
  OK(clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof dname, dname, NULL));
  OK(clGetDeviceInfo(dev, CL_DEVICE_VENDOR, sizeof vendor, vendor, NULL));
  OK(clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, NULL));
  nvidia = strstr(vendor, "NVIDIA") != NULL; /* inline PTX only builds there */
  cl_int e;
  ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
  OK(e);
  q = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &e);
  OK(e);
  printf("%s, %u compute units, 2^%d floats\n", dname, cus, lg);
  float *h = malloc(sizeof(float) * n);
  double exact = 0;
  for (size_t i = 0; i < n; i++) {
    h[i] = (float)(i % 7);
    exact += h[i];
  }
  cl_mem x = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(float) * n, h, &e);
  OK(e);
  free(h);
  size_t max_groups = n4 / 64 + 1;
  cl_mem out = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof(float) * max_groups, NULL, &e);
  OK(e);
  cl_mem y = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, sizeof(float) * n, NULL, &e);
  OK(e);
  double bytes = (double)n * sizeof(float);
  int bad = 0;
  for (int hint = 0; hint <= nvidia; hint++) {
    bad |= run("copy", 256, 1, hint, (size_t)cus * 8, x, n4, y, 0, rounds, 2 * bytes);
    static const int wgs[] = {256, 512, 1024}, us[] = {2, 4, 8}, gpcs[] = {1, 2, 4, 8};
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++) {
        int wg = wgs[a], u = us[b];
        for (int c = 0; c < 4; c++) {
          size_t gpc = (size_t)gpcs[c] * 256 / (size_t)wg; /* work-items per CU: 256 x gpcs */
          if (gpc == 0) continue;
          bad |= run("gs", wg, u, hint, cus * gpc, x, n4, out, exact, rounds, bytes);
          bad |= run("chunk", wg, u, hint, cus * gpc, x, n4, out, exact, rounds, bytes);
        }
        size_t tiles = (n4 + (size_t)(wg * u) - 1) / (size_t)(wg * u);
        if (tiles <= max_groups) bad |= run("tile", wg, u, hint, tiles, x, n4, out, exact, rounds, bytes);
      }
  }
  clReleaseMemObject(x);
  clReleaseMemObject(y);
  clReleaseMemObject(out);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  return bad;
}
