/* bench/experiments/gemm_f32_probe — exact FP32 GEMM (C = A B, square, row-major) on CUDA cores: ocal's
 * kernel (cl/blas_gemm.cl) in a table of tiles and build variants, and a cp.async pipelined
 * kernel (bench/experiments/gemm_f32_probe.cl), checked and timed in one run (docs/blas-engines.md, "Exact
 * FP32 past 0.9x").
 *
 *   gemm_f32_probe CL_DIR [MAX_N]
 *
 * Plain OpenCL and the ICD loader (not libocal), so that a variant can be tried before the
 * library's planner knows it. It takes the first GPU of any platform, else the first CPU
 * device. For each variant it builds the kernel with its -D options; a variant marked with a
 * PTX directive (".minnctapersm 2", ".maxnreg 128": what CUDA's __launch_bounds__ becomes) is
 * then rebuilt from its binary with the directive put in front of the kernel's body, which
 * works where the driver's binary is PTX text (NVIDIA) and is skipped elsewhere. With
 * -cl-nv-verbose (added on NVIDIA) the line names ptxas's registers and local memory. Each
 * size n = 1024, 2048, 4096, 8192 (up to MAX_N) runs one warm-up and then 4 rounds of a batch
 * of launches (timed by clGetEventProfilingInfo from the first start to the last end); the
 * best of rounds 2-4 is the figure, in TFLOP/s. The NN variants are checked at 200 random
 * entries of C against a double-precision host sum, with a tolerance of 1e-6 of the sum of
 * the products' magnitudes; a wrong entry prints BAD and the exit status is 1. The other
 * transposes are timed only (same buffers, square). */
#include <math.h>

#include "cl_probe.h"


/* lib: ocal's kernel with tile bm x bn x bk in tm x tn per work-item; otherwise the cp.async
 * kernel (128 x 128 x bk, 8 x 8 per work-item). op: "nn", "nt", "tn" or "tt". */
typedef struct variant {
  int lib;
  unsigned bm, bn, bk, tm, tn;
  const char *op, *extra, *ptx;
} variant;

static const variant variants[] = {
    /* What the library ran before (WARP_TILE=0) and runs now (1), every transpose. */
    {1, 128, 128, 8, 8, 8, "nn", "-DWARP_TILE=0", NULL},
    {1, 128, 128, 8, 8, 8, "nn", "-DWARP_TILE=1", NULL},
    {1, 128, 128, 8, 8, 8, "nt", "-DWARP_TILE=0", NULL},
    {1, 128, 128, 8, 8, 8, "nt", "-DWARP_TILE=1", NULL},
    {1, 128, 128, 8, 8, 8, "tn", "-DWARP_TILE=0", NULL},
    {1, 128, 128, 8, 8, 8, "tn", "-DWARP_TILE=1", NULL},
    {1, 128, 128, 8, 8, 8, "tt", "-DWARP_TILE=0", NULL},
    {1, 128, 128, 8, 8, 8, "tt", "-DWARP_TILE=1", NULL},
    /* Deeper k steps and bigger work-item tiles, with the register cap that keeps two
     * 256-item work-groups per SM or without it. */
    {1, 128, 128, 16, 8, 8, "nn", "-DWARP_TILE=0", NULL},
    {1, 128, 128, 16, 8, 8, "nn", "-DWARP_TILE=0", ".minnctapersm 2"},
    {1, 128, 128, 16, 8, 8, "nn", "-DWARP_TILE=1", ".minnctapersm 2"},
    {1, 128, 128, 32, 8, 8, "nn", "-DWARP_TILE=0", ".minnctapersm 2"},
    {1, 128, 128, 8, 8, 8, "nn", "-DWARP_TILE=1", ".minnctapersm 2"},
    {1, 128, 128, 8, 16, 8, "nn", "-DWARP_TILE=0", NULL},
    {1, 128, 256, 8, 8, 16, "nn", "-DWARP_TILE=0", NULL},
    {1, 256, 128, 8, 16, 8, "nn", "-DWARP_TILE=0", NULL},
    {1, 64, 128, 8, 8, 8, "nn", "-DWARP_TILE=0", NULL},
    /* cp.async pipelines: stages, k step, warps of 16 x 2 or 8 x 4 work-items, rows of a
     * work-item in runs of 4 or interleaved (bench/experiments/gemm_f32_probe.cl). */
    {0, 128, 128, 8, 8, 8, "nn", "-DSTAGES=2 -DWARP_ARR=0 -DROWI=0", NULL},
    {0, 128, 128, 8, 8, 8, "nn", "-DSTAGES=3 -DWARP_ARR=0 -DROWI=0", NULL},
    {0, 128, 128, 8, 8, 8, "nn", "-DSTAGES=3 -DWARP_ARR=1 -DROWI=1", NULL},
    {0, 128, 128, 8, 8, 8, "nn", "-DSTAGES=4 -DWARP_ARR=0 -DROWI=0", NULL},
    {0, 128, 128, 8, 8, 8, "nn", "-DSTAGES=4 -DWARP_ARR=1 -DROWI=1", NULL},
    {0, 128, 128, 16, 8, 8, "nn", "-DSTAGES=2 -DWARP_ARR=0 -DROWI=0", NULL},
    {0, 128, 128, 16, 8, 8, "nn", "-DSTAGES=2 -DWARP_ARR=1 -DROWI=1", NULL},
    {0, 128, 128, 16, 8, 8, "nn", "-DSTAGES=2 -DWARP_ARR=1 -DROWI=1", ".minnctapersm 2"},
};

static cl_context ctx;
static cl_device_id dev;
static cl_command_queue queue;
static int nvidia;

/* ptxas's "Used N registers, ..." line of a build log, or "". */
static void usage_line(cl_program p, char *out, size_t size) {
  static char log[1 << 16];
  out[0] = '\0';
  if (clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL) != CL_SUCCESS)
    return;
  char *used = strstr(log, "Used ");
  if (!used) return;
  used[strcspn(used, "\r\n")] = '\0';
  snprintf(out, size, "%s", used + 5);
}

/* The program rebuilt from its PTX binary with `directive` before the first kernel's body;
 * NULL where the binary is not PTX text or the rebuild fails (said on stdout). */
static cl_program with_directive(cl_program p, const char *directive) {
  size_t size = 0;
  OK(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL));
  char *text = calloc(1, size + 1), *out = malloc(size + strlen(directive) + 2);
  unsigned char *bins[1] = {(unsigned char *)text};
  if (!text || !out) DIE("out of memory");
  OK(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL));
  const char *entry = strstr(text, ".entry"), *body = entry ? strchr(entry, '{') : NULL;
  cl_program q = NULL;
  if (body) {
    size_t head = (size_t)(body - text);
    memcpy(out, text, head);
    sprintf(out + head, "%s\n%s", directive, body);
    size_t n = strlen(out);
    const unsigned char *bin = (const unsigned char *)out;
    cl_int e, status;
    q = clCreateProgramWithBinary(ctx, 1, &dev, &n, &bin, &status, &e);
    if (e == CL_SUCCESS &&
        clBuildProgram(q, 1, &dev, nvidia ? "-cl-nv-verbose" : "", NULL, NULL) != CL_SUCCESS) {
      clReleaseProgram(q);
      q = NULL;
    }
  }
  if (!q) printf("  (no PTX rebuild with %s here)\n", directive);
  free(text);
  free(out);
  return q;
}

static cl_kernel build(const char *cl_dir, const variant *v, char *regs, size_t regs_size,
                       char *name, size_t name_size) {
  char path[4096], opts[512];
  /* The probe kernel lies beside this file, ocal's in cl/. */
  snprintf(path, sizeof path, "%s/%s", cl_dir,
           v->lib ? "blas_gemm.cl" : "../bench/experiments/gemm_f32_probe.cl");
  snprintf(name, name_size, v->lib ? "ocal_gemm_%s" : "gemm_f32_probe_nn", v->op);
  if (v->lib)
    snprintf(opts, sizeof opts,
             "-DT=float -DT4=float4 -DBM=%u -DBN=%u -DBK=%u -DTM=%u -DTN=%u -DFULL=1 -DVEC=1 "
             "-DOCAL_ONLY -DOCAL_ONLY_%s %s%s",
             v->bm, v->bn, v->bk, v->tm, v->tn, name, v->extra, nvidia ? " -cl-nv-verbose" : "");
  else
    snprintf(opts, sizeof opts, "-DBK=%u %s%s", v->bk, v->extra,
             nvidia ? " -cl-nv-verbose" : "");
  char *src = read_text(path);
  const char *srcs[1] = {src};
  cl_int e;
  cl_program p = clCreateProgramWithSource(ctx, 1, srcs, NULL, &e);
  OK(e);
  free(src);
  if (clBuildProgram(p, 1, &dev, opts, NULL, NULL) != CL_SUCCESS) {
    printf("  (build failed: %s)\n", opts);
    clReleaseProgram(p);
    return NULL;
  }
  usage_line(p, regs, regs_size);
  if (v->ptx) {
    cl_program q = with_directive(p, v->ptx);
    clReleaseProgram(p);
    if (!q) return NULL;
    p = q;
    usage_line(p, regs, regs_size);
  }
  cl_kernel k = clCreateKernel(p, name, &e);
  OK(e);
  clReleaseProgram(p);
  return k;
}

int main(int argc, char **argv) {
  if (argc < 2) DIE("usage: gemm_f32_probe CL_DIR [MAX_N]");
  size_t max_n = argc > 2 ? strtoul(argv[2], NULL, 10) : 8192;
  cl_platform_id plats[16];
  cl_uint np = 0;
  if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS || np == 0) DIE("no OpenCL platform");
  int found = 0;
  for (int want_gpu = 1; want_gpu >= 0 && !found; want_gpu--)
    for (cl_uint i = 0; i < np && !found; i++)
      found = clGetDeviceIDs(plats[i], want_gpu ? CL_DEVICE_TYPE_GPU : CL_DEVICE_TYPE_CPU, 1,
                             &dev, NULL) == CL_SUCCESS;
  if (!found) DIE("no GPU or CPU OpenCL device");
  char dname[256] = "", vendor[256] = "";
  clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof dname, dname, NULL);
  clGetDeviceInfo(dev, CL_DEVICE_VENDOR, sizeof vendor, vendor, NULL);
  nvidia = strstr(vendor, "NVIDIA") != NULL;
  cl_int e;
  ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
  OK(e);
  queue = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &e);
  OK(e);
  printf("gemm_f32_probe on %s: TFLOP/s, C = op(A) op(B), n x n x n\n", dname);

  size_t elems = max_n * max_n;
  float *ha = malloc(elems * sizeof *ha), *hb = malloc(elems * sizeof *hb),
        *hc = malloc(elems * sizeof *hc);
  if (!ha || !hb || !hc) DIE("out of memory");
  srand(7);
  for (size_t i = 0; i < elems; i++) {
    ha[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    hb[i] = (float)rand() / (float)RAND_MAX - 0.5f;
  }
  cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, elems * 4, ha, &e);
  OK(e);
  cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, elems * 4, hb, &e);
  OK(e);
  cl_mem c = clCreateBuffer(ctx, CL_MEM_READ_WRITE, elems * 4, NULL, &e);
  OK(e);

  int bad = 0;
  for (size_t vi = 0; vi < sizeof variants / sizeof variants[0]; vi++) {
    const variant *v = &variants[vi];
    if (!v->lib && !nvidia) continue; /* inline PTX */
    char regs[256], name[64];
    cl_kernel k = build(argv[1], v, regs, sizeof regs, name, sizeof name);
    if (!k) continue;
    printf("%-3s %s %3ux%3ux%2u %2ux%-2u %-34s %-16s", v->lib ? "lib" : "cp", v->op, v->bm,
           v->bn, v->bk, v->tm, v->tn, v->extra, v->ptx ? v->ptx : "");
    static const size_t sizes[] = {1024, 2048, 4096, 8192};
    for (size_t si = 0; si < 4 && sizes[si] <= max_n; si++) {
      cl_uint n = (cl_uint)sizes[si], one = 1;
      cl_ulong zero = 0;
      float alpha = 1, beta = 0;
      cl_int read_c = 0;
      size_t items = (size_t)(v->bm / v->tm) * (v->bn / v->tn);
      size_t global[3] = {n / v->bn * items, n / v->bm, 1}, local[3] = {items, 1, 1};
      if (v->lib) {
        /* ocal_gemm_*(a, a_off, lda, a_stride, b, ..., c, ..., m, n, k, kc, slices, alpha,
         * beta, read_c) */
        cl_mem bufs[3] = {a, b, c};
        for (int j = 0; j < 3; j++) {
          OK(clSetKernelArg(k, (cl_uint)(4 * j), sizeof(cl_mem), &bufs[j]));
          OK(clSetKernelArg(k, (cl_uint)(4 * j + 1), 8, &zero));
          OK(clSetKernelArg(k, (cl_uint)(4 * j + 2), 4, &n));
          OK(clSetKernelArg(k, (cl_uint)(4 * j + 3), 8, &zero));
        }
        for (cl_uint j = 12; j < 16; j++) OK(clSetKernelArg(k, j, 4, &n));
        OK(clSetKernelArg(k, 16, 4, &one));
        OK(clSetKernelArg(k, 17, 4, &alpha));
        OK(clSetKernelArg(k, 18, 4, &beta));
        OK(clSetKernelArg(k, 19, 4, &read_c));
      } else {
        OK(clSetKernelArg(k, 0, sizeof(cl_mem), &a));
        OK(clSetKernelArg(k, 1, 4, &n));
        OK(clSetKernelArg(k, 2, sizeof(cl_mem), &b));
        OK(clSetKernelArg(k, 3, 4, &n));
        OK(clSetKernelArg(k, 4, sizeof(cl_mem), &c));
        OK(clSetKernelArg(k, 5, 4, &n));
        OK(clSetKernelArg(k, 6, 4, &n));
      }
      int reps = n <= 2048 ? 50 : n == 4096 ? 10 : 4;
      if (!nvidia) reps = 1;
      double best = 1e30;
      for (int round = 0; round < 4; round++) {
        cl_event first, last;
        OK(clEnqueueNDRangeKernel(queue, k, 3, NULL, global, local, 0, NULL, &first));
        for (int r = 2; r < reps; r++)
          OK(clEnqueueNDRangeKernel(queue, k, 3, NULL, global, local, 0, NULL, NULL));
        if (reps > 1)
          OK(clEnqueueNDRangeKernel(queue, k, 3, NULL, global, local, 0, NULL, &last));
        else
          OK(clRetainEvent(last = first));
        OK(clWaitForEvents(1, &last));
        cl_ulong t0, t1;
        OK(clGetEventProfilingInfo(first, CL_PROFILING_COMMAND_START, 8, &t0, NULL));
        OK(clGetEventProfilingInfo(last, CL_PROFILING_COMMAND_END, 8, &t1, NULL));
        double s = (double)(t1 - t0) * 1e-9 / reps;
        if (round > 0 && s < best) best = s;
        clReleaseEvent(first);
        clReleaseEvent(last);
      }
      const char *verdict = "";
      if (!strcmp(v->op, "nn")) {
        OK(clEnqueueReadBuffer(queue, c, CL_TRUE, 0, (size_t)n * n * 4, hc, 0, NULL, NULL));
        for (int t = 0; t < 200; t++) {
          size_t i = (size_t)rand() % n, j = (size_t)rand() % n;
          double sum = 0, mag = 0;
          for (size_t q = 0; q < n; q++) {
            double p = (double)ha[i * n + q] * hb[q * n + j];
            sum += p;
            mag += fabs(p);
          }
          if (fabs(hc[i * n + j] - sum) > 1e-6 * mag) verdict = " BAD", bad = 1;
        }
      }
      printf(" %5u: %5.1f%s", n, 2.0 * n * n * n / best * 1e-12, verdict);
      fflush(stdout);
    }
    printf("  %s\n", regs);
    clReleaseKernel(k);
  }
  clReleaseMemObject(a);
  clReleaseMemObject(b);
  clReleaseMemObject(c);
  clReleaseCommandQueue(queue);
  clReleaseContext(ctx);
  free(ha);
  free(hb);
  free(hc);
  return bad;
}
