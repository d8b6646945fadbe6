/* bench/experiments/l2_probe — how fast can the multiprocessors read from L2,
 * the way the tensor-core GEMM kernels read their tiles? Plain OpenCL, NVIDIA
 * only (inline PTX):
 *
 *   bench/experiments/l2_probe [MiB ...]   (default 8 16 32 1024)
 *
 * A buffer of the given size (L2-resident where it fits, the H100's and H200's
 * L2 being 50 MB) is read about 2 GiB a launch, 16 bytes a load, grid stride,
 * in four ways: ld     ld.global.cg.v4.u32 (L2 only, not L1), U loads in flight
 * a work-item, summed; cp     cp.async.cg.shared.global 16 bytes (L2 only) into
 * local memory, G copies a commit group and U groups in flight (what the GEMM
 * kernels' copies do); cpca   the same with cp.async.ca (through L1); ls
 * through registers: G loads (ld.global.cg), then G local stores; over
 * work-groups of 256 work-items, 1 / 2 / 4 groups a compute unit. Each
 * work-item's sum (ld) or last local tiles (the others) go to a small output
 * the host checks against the input (small integers, so the sums are exact).
 * Prints the best of 5 launches (profiling events), one line a build: MiB way
 * U=u G=g groups-per-cu GB/s check ok|FAIL */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl_probe.h"

#define WG 256

static const char *src =
    "#if CP_CA\n"
    "#define CP_OP \"ca\"\n"
    "#else\n"
    "#define CP_OP \"cg\"\n"
    "#endif\n"
    "#define S_(x) #x\n"
    "#define S(x) S_(x)\n"
    "uint4 ldcg(__global const uint4 *p) {\n"
    "  uint a, b, c, d;\n"
    "  __asm__ volatile(\"ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];\"\n"
    "          : \"=r\"(a), \"=r\"(b), \"=r\"(c), \"=r\"(d) : \"l\"(p));\n"
    "  return (uint4)(a, b, c, d);\n"
    "}\n"
    "uint saddr(__local const void *p) {\n"
    "  uint r;\n"
    "  __asm__ volatile(\"{ .reg .pred p; .reg .u64 t; isspacep.shared p, %1; mov.u64 t, %1;\\n\"\n"
    "      \"  @p cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }\" : \"=r\"(r) "
    ": \"l\"((ulong)p));\n"
    "  return r;\n"
    "}\n"
    /* ld: every work-item sums its vectors' words; n vectors, a multiple of the
     * global size times U. */
    "__kernel __attribute__((reqd_work_group_size(256, 1, 1)))\n"
    "void ld(__global const uint4 *x, uint n, uint reps, __global uint *out) {\n"
    "  const uint g = get_global_size(0), i0 = get_global_id(0);\n"
    "  uint acc = 0;\n"
    "  for (uint r = 0; r < reps; r++)\n"
    "    for (uint i = i0; i < n; i += g * U) {\n"
    "      uint4 v[U];\n"
    "      for (uint u = 0; u < U; u++) v[u] = ldcg(x + i + u * g);\n"
    "      for (uint u = 0; u < U; u++) acc += v[u].x + v[u].y + v[u].z + v[u].w;\n"
    "    }\n"
    "  out[i0] = acc;\n"
    "}\n"
    /* cp: the same vectors into local memory, G copies a commit group and U
     * groups in flight; the last tile each work-item holds goes out. */
    "__kernel __attribute__((reqd_work_group_size(256, 1, 1)))\n"
    "void cp(__global const uint4 *x, uint n, uint reps, __global uint *out) {\n"
    "  __local uint4 tile[(U + 1) * G * 256];\n"
    "  const uint g = get_global_size(0), i0 = get_global_id(0), lid = get_local_id(0);\n"
    "  const uint base = saddr(tile);\n"
    "  uint slot = 0, issued = 0;\n"
    "  for (uint r = 0; r < reps; r++)\n"
    "    for (uint i = i0; i < n; i += g * G) {\n"
    "      for (uint e = 0; e < G; e++)\n"
    "        __asm__ volatile(\"cp.async.\" CP_OP \".shared.global [%0], [%1], 16;\" ::\n"
    "            \"r\"(base + ((slot * G + e) * 256 + lid) * 16), "
    "\"l\"((ulong)(x + i + e * g)) : \"memory\");\n"
    "      __asm__ volatile(\"cp.async.commit_group;\" ::: \"memory\");\n"
    "      slot = slot == U ? 0 : slot + 1;\n"
    "      if (++issued > U) __asm__ volatile(\"cp.async.wait_group \" S(U) "
    "\";\" ::: \"memory\");\n"
    "    }\n"
    "  __asm__ volatile(\"cp.async.wait_group 0;\" ::: \"memory\");\n"
    "  uint acc = 0;\n"
    "  for (uint s = 0; s < (U + 1) * G; s++) { uint4 v = tile[s * 256 + lid]; "
    "acc += v.x + v.y + v.z + v.w; }\n"
    "  out[i0] = acc;\n"
    "}\n"
    /* ls: the copy through registers, G loads then G local stores an iteration
     * (the way kernels moved tiles before cp.async). */
    "__kernel __attribute__((reqd_work_group_size(256, 1, 1)))\n"
    "void ls(__global const uint4 *x, uint n, uint reps, __global uint *out) {\n"
    "  __local uint4 tile[(U + 1) * G * 256];\n"
    "  const uint g = get_global_size(0), i0 = get_global_id(0), lid = get_local_id(0);\n"
    "  uint slot = 0;\n"
    "  for (uint r = 0; r < reps; r++)\n"
    "    for (uint i = i0; i < n; i += g * G) {\n"
    "      uint4 v[G];\n"
    "      for (uint e = 0; e < G; e++) v[e] = ldcg(x + i + e * g);\n"
    "      for (uint e = 0; e < G; e++) tile[(slot * G + e) * 256 + lid] = v[e];\n"
    "      slot = slot == U ? 0 : slot + 1;\n"
    "    }\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  uint acc = 0;\n"
    "  for (uint s = 0; s < (U + 1) * G; s++) { uint4 v = tile[s * 256 + lid]; "
    "acc += v.x + v.y + v.z + v.w; }\n"
    "  out[i0] = acc;\n"
    "}\n";

static cl_context ctx;
static cl_device_id dev;
static cl_command_queue q;

/* The builds timed: ld with U loads in flight; cp with U groups of G copies in
 * flight (the local tile, (U + 1) G x 4 KiB, within OpenCL's 48 KiB). */
typedef struct way {
  const char *name;
  int u, g;
} way;
static const way ways[] = {{"ld", 4, 1}, {"ld", 8, 1},   {"cp", 4, 1},   {"cp", 5, 2},
                           {"cp", 2, 4}, {"cpca", 4, 1}, {"cpca", 2, 4}, {"ls", 1, 4},
                           {"ls", 2, 4}, {"ls", 1, 6},   {"ls", 5, 2}};
#define NWAYS (int)(sizeof ways / sizeof ways[0])

static cl_kernel build(const char *name, int u, int gcopies) {
  cl_int err;
  cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  OK(err);
  char opt[128];
  snprintf(opt, sizeof opt, "-DU=%d -DG=%d -DCP_CA=%d", u, gcopies, !strcmp(name, "cpca"));
  if (clBuildProgram(p, 1, &dev, opt, NULL, NULL) != CL_SUCCESS) {
    char log[16384] = "";
    clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
    DIE("build %s U=%d: %s", name, u, log);
  }
  cl_kernel k = clCreateKernel(p, strcmp(name, "cpca") ? name : "cp", &err);
  OK(err);
  clReleaseProgram(p);
  return k;
}

int main(int argc, char **argv) {
  open_gpu(CL_QUEUE_PROFILING_ENABLE, &dev, &ctx, &q);
  cl_int err;
  cl_uint cus;
  OK(clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, NULL));
  static const unsigned def_mib[] = {8, 16, 32, 1024};
  int nsizes = argc > 1 ? argc - 1 : 4, fails = 0;
  cl_kernel kern[NWAYS];
  for (int j = 0; j < NWAYS; j++) kern[j] = build(ways[j].name, ways[j].u, ways[j].g);
  size_t out_words = (size_t)cus * 4 * WG;
  cl_mem out = clCreateBuffer(ctx, CL_MEM_READ_WRITE, out_words * 4, NULL, &err);
  OK(err);
  unsigned *host_out = malloc(out_words * 4);
  for (int si = 0; si < nsizes; si++) {
    unsigned mib = argc > 1 ? (unsigned)atoi(argv[si + 1]) : def_mib[si];
    size_t bytes = (size_t)mib << 20, nvec = bytes / 16;
    uint32_t *h = malloc(bytes);
    for (size_t i = 0; i < bytes / 4; i++) h[i] = (uint32_t)(i % 7);
    cl_mem x = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, h, &err);
    OK(err);
    /* about 2 GiB read a launch */
    cl_uint reps = (cl_uint)(((size_t)2 << 30) / bytes);
    if (reps == 0) reps = 1;
    for (int j = 0; j < NWAYS; j++)
      for (unsigned per = 1; per <= 4; per *= 2) {
        const int w = ways[j].name[0] != 'l' || ways[j].name[1] == 's',
                  chunk = w ? ways[j].g : ways[j].u;
        size_t global = (size_t)cus * per * WG, local = WG;
        /* whole rounds: the vectors past the last multiple of the grid's size x
         * U unread */
        size_t used = nvec - nvec % (global * (size_t)chunk);
        if (used == 0 || (w && used / global * reps < (size_t)((ways[j].u + 1) * ways[j].g)))
          continue;
        cl_uint n = (cl_uint)used;
        cl_kernel k = kern[j];
        OK(clSetKernelArg(k, 0, sizeof x, &x));
        OK(clSetKernelArg(k, 1, sizeof n, &n));
        OK(clSetKernelArg(k, 2, sizeof reps, &reps));
        OK(clSetKernelArg(k, 3, sizeof out, &out));
        double best = 0;
        for (int l = 0; l < 6; l++) {
          cl_event ev;
          OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, &ev));
          OK(clWaitForEvents(1, &ev));
          cl_ulong t0, t1;
          OK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL));
          OK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL));
          clReleaseEvent(ev);
          double gbs = (double)used * 16 * reps / (double)(t1 - t0);
          if (l > 0 && gbs > best) best = gbs; /* the first launch warms L2 */
        }
        OK(clEnqueueReadBuffer(q, out, CL_TRUE, 0, global * 4, host_out, 0, NULL, NULL));
        /* The check: ld sums, per work-item, the words of its vectors over reps
         * rounds; cp holds the last U + 1 vectors it copied (slots in issue
         * order, wrapped). */
        int ok = 1;
        for (size_t i = 0; i < global && ok; i++) {
          uint32_t want = 0;
          if (!w) {
            for (size_t v = i; v < used; v += global)
              for (int e = 0; e < 4; e++) want += h[v * 4 + e];
            want *= reps;
          } else {
            size_t per_item = used / global, total = per_item * reps;
            for (size_t c = total - (size_t)((ways[j].u + 1) * ways[j].g); c < total; c++) {
              size_t v = i + (c % per_item) * global;
              for (int e = 0; e < 4; e++) want += h[v * 4 + e];
            }
          }
          ok = host_out[i] == want;
        }
        fails += !ok;
        printf("%u %s U=%d G=%d %u %.0f check %s\n", mib, ways[j].name, ways[j].u, ways[j].g, per,
               best, ok ? "ok" : "FAIL");
        fflush(stdout);
      }
    clReleaseMemObject(x);
    free(h);
  }
  for (int j = 0; j < NWAYS; j++) clReleaseKernel(kern[j]);
  clReleaseMemObject(out);
  free(host_out);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  return fails ? 1 : 0;
}
