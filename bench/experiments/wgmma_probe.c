/* bench/experiments/wgmma_probe — can OpenCL reach Hopper's wgmma? (docs/tensor-cores.md)
 *
 * On every GPU of every platform, builds small kernels whose inline PTX uses sm_80 and
 * sm_90a instructions and prints which the compiler takes, with the PTX target its binary
 * names. Then the route around OpenCL C: the binary of a built kernel (NVIDIA's driver
 * returns PTX text) with its target changed to sm_90a and a wgmma.fence put in, loaded back
 * with clCreateProgramWithBinary, built and run once (128 work-items; the kernel writes 1).
 *
 *   bench/experiments/wgmma_probe [BUILD_OPTIONS]      (for example "-cl-nv-arch sm_90a")
 *
 * Prints one line per kernel; exits 0 (a refused instruction is an answer, not a failure). */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct probe {
  const char *what, *source;
} probe;

/* The first kernel is the control, whose membar.gl the binary route replaces. */
static const probe probes[] = {
    {"control (membar.gl)",
     "__kernel void k(__global float *o) { __asm__ volatile(\"membar.gl;\"); o[0] = 1; }"},
    {"mma.sync m16n8k8 tf32 (sm_80)",
     "__kernel void k(__global float *o) { float d0 = 0, d1 = 0, d2 = 0, d3 = 0;"
     " uint a0 = 0, a1 = 0, a2 = 0, a3 = 0, b0 = 0, b1 = 0;"
     " __asm__ volatile(\"mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"
     " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\""
     " : \"+f\"(d0), \"+f\"(d1), \"+f\"(d2), \"+f\"(d3)"
     " : \"r\"(a0), \"r\"(a1), \"r\"(a2), \"r\"(a3), \"r\"(b0), \"r\"(b1));"
     " o[0] = d0 + d1 + d2 + d3; }"},
    {"wgmma.fence (sm_90a)",
     "__kernel void k(__global float *o) { __asm__ volatile(\"wgmma.fence.sync.aligned;\");"
     " o[0] = 1; }"},
    {"wgmma.mma_async m64n8k8 tf32 (sm_90a)",
     "__kernel void k(__global float *o, ulong da, ulong db) { float d0 = 0, d1 = 0, d2 = 0,"
     " d3 = 0; __asm__ volatile(\"wgmma.fence.sync.aligned;\\n\\t"
     "wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {%0,%1,%2,%3}, %4, %5, 1, 1, 1;\\n\\t"
     "wgmma.commit_group.sync.aligned;\\n\\twgmma.wait_group.sync.aligned 0;\""
     " : \"+f\"(d0), \"+f\"(d1), \"+f\"(d2), \"+f\"(d3) : \"l\"(da), \"l\"(db));"
     " o[get_global_id(0)] = d0 + d1 + d2 + d3; }"},
    {"setmaxnreg (sm_90a)",
     "__kernel void k(__global float *o) {"
     " __asm__ volatile(\"setmaxnreg.inc.sync.aligned.u32 240;\"); o[0] = 1; }"},
};

/* The program's build log, first line only (ptxas names the refused instruction there). */
static void print_log(cl_program p, cl_device_id d) {
  size_t n = 0;
  if (clGetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) != CL_SUCCESS || n == 0)
    return;
  char *log = calloc(1, n + 1);
  if (!log) return;
  if (clGetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_LOG, n, log, NULL) == CL_SUCCESS) {
    /* Skip the driver's "kernel overrides noinline" warning lines. */
    for (char *line = strtok(log, "\n"); line; line = strtok(NULL, "\n"))
      if (!strstr(line, "Warning: Function")) {
        printf("    %.300s\n", line);
        break;
      }
  }
  free(log);
}

/* The program's binary (NUL-terminated), or NULL. */
static char *binary_of(cl_program p, size_t *size) {
  size_t n = 0;
  if (clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof n, &n, NULL) != CL_SUCCESS || n == 0)
    return NULL;
  char *b = calloc(1, n + 1);
  unsigned char *bp[1] = {(unsigned char *)b};
  if (!b || clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bp, bp, NULL) != CL_SUCCESS) {
    free(b);
    return NULL;
  }
  *size = n;
  return b;
}

/* Copy of text with the first `from` replaced by `to`, or NULL when `from` is missing. */
static char *replace(const char *text, const char *from, const char *to) {
  const char *at = strstr(text, from);
  if (!at) return NULL;
  size_t head = (size_t)(at - text), n = strlen(text) - strlen(from) + strlen(to);
  char *out = malloc(n + 1);
  if (!out) return NULL;
  memcpy(out, text, head);
  strcpy(out + head, to);
  strcat(out, at + strlen(from));
  return out;
}

/* The binary route: the control's PTX retargeted to sm_90a with a wgmma.fence, built, run. */
static void binary_route(cl_context c, cl_device_id d, const char *ptx) {
  char *t = replace(ptx, ".target sm_90", ".target sm_90a");
  char *w = t ? replace(t, "membar.gl;", "wgmma.fence.sync.aligned;") : NULL;
  free(t);
  if (!w) {
    printf("  %-40s not tried: the binary is not sm_90 PTX with the control's membar.gl\n",
           "PTX binary, sm_90a + wgmma.fence");
    return;
  }
  size_t n = strlen(w);
  const unsigned char *wp[1] = {(const unsigned char *)w};
  cl_int err, st;
  cl_program p = clCreateProgramWithBinary(c, 1, &d, &n, wp, &st, &err);
  free(w);
  if (err != CL_SUCCESS) {
    printf("  %-40s clCreateProgramWithBinary: %d\n", "PTX binary, sm_90a + wgmma.fence", err);
    return;
  }
  err = clBuildProgram(p, 1, &d, "", NULL, NULL);
  printf("  %-40s build %s\n", "PTX binary, sm_90a + wgmma.fence", err ? "refused" : "OK");
  if (err) {
    print_log(p, d);
    clReleaseProgram(p);
    return;
  }
  cl_kernel k = clCreateKernel(p, "k", &err);
  cl_mem m = clCreateBuffer(c, CL_MEM_READ_WRITE, sizeof(float), NULL, &err);
  cl_command_queue q = clCreateCommandQueueWithProperties(c, d, NULL, &err);
  float out = 0;
  size_t global = 128, local = 128;
  if (k && m && q && clEnqueueWriteBuffer(q, m, CL_TRUE, 0, sizeof out, &out, 0, NULL, NULL) == 0 &&
      clSetKernelArg(k, 0, sizeof m, &m) == 0 &&
      clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL) == 0 &&
      clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof out, &out, 0, NULL, NULL) == 0)
    printf("    ran: o[0] = %g (%s)\n", out, out == 1 ? "right" : "WRONG");
  else
    printf("    did not run\n");
  if (q) clReleaseCommandQueue(q);
  if (m) clReleaseMemObject(m);
  if (k) clReleaseKernel(k);
  clReleaseProgram(p);
}

int main(int argc, char **argv) {
  const char *options = argc > 1 ? argv[1] : "";
  cl_platform_id platforms[16];
  cl_uint np = 0;
  if (clGetPlatformIDs(16, platforms, &np) != CL_SUCCESS) np = 0;
  int devices = 0;
  for (cl_uint i = 0; i < np && i < 16; i++) {
    cl_device_id d;
    if (clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_GPU, 1, &d, NULL) != CL_SUCCESS) continue;
    char name[256] = "";
    clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof name, name, NULL);
    printf("%s (build options \"%s\")\n", name, options);
    devices++;
    cl_int err;
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &err);
    if (err != CL_SUCCESS) continue;
    for (size_t t = 0; t < sizeof probes / sizeof probes[0]; t++) {
      const char *src = probes[t].source;
      cl_program p = clCreateProgramWithSource(c, 1, &src, NULL, &err);
      if (err != CL_SUCCESS) continue;
      err = clBuildProgram(p, 1, &d, options, NULL, NULL);
      printf("  %-40s build %s\n", probes[t].what, err ? "refused" : "OK");
      size_t n = 0;
      char *bin = err ? NULL : binary_of(p, &n);
      const char *target = bin ? strstr(bin, ".target") : NULL;
      if (target) printf("    %.*s\n", (int)strcspn(target, "\n"), target);
      if (err) print_log(p, d);
      if (t == 0 && bin) binary_route(c, d, bin);
      free(bin);
      clReleaseProgram(p);
    }
    clReleaseContext(c);
  }
  if (!devices) printf("no GPU\n");
  return 0;
}
