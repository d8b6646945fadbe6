/* What one kernel launch costs the host, in plain OpenCL (no libocal): a tiny kernel
 * enqueued over and over on one in-order queue, in blocks between two clFinish calls, with
 * the wall time and the thread's CPU time per launch; then the same on a second and a third
 * queue of the same context, and on a queue of a new context. It tells whether a process's
 * launch speed (the MLP step runs at one of two speeds a process, measurements.md, "Python:
 * the MLP step's two speeds") belongs to the process, to a queue or to a context.
 *
 *   bench/experiments/launch_probe [launches=2000] [blocks=10] [args=2]
 *
 * args: clSetKernelArg calls before each launch (ocal sets every argument each call). Prints
 * one line per queue: the median block's us per launch, the fastest block's, and the CPU us
 * per launch. */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "cl_probe.h"

static const char *source =
    "__kernel void bump(__global float *a, int n) {\n"
    "  int i = get_global_id(0);\n"
    "  if (i < n) a[i] += 1.0f;\n"
    "}\n";

static double clock_s(clockid_t id) {
  struct timespec t;
  clock_gettime(id, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Times launches on a new queue of ctx; returns the queue, kept until its context goes so that
 * the next queue is a new one beside it. */
static cl_command_queue one_queue(const char *label, cl_context ctx, cl_device_id dev, long launches,
                      int blocks, int args) {
  cl_int err;
  cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
  OK(err);
  cl_program p = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
  OK(err);
  OK(clBuildProgram(p, 1, &dev, "", NULL, NULL));
  cl_kernel k = clCreateKernel(p, "bump", &err);
  OK(err);
  cl_int n = 1000;
  cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_WRITE, (size_t)n * sizeof(float), NULL, &err);
  OK(err);
  OK(clSetKernelArg(k, 0, sizeof a, &a));
  OK(clSetKernelArg(k, 1, sizeof n, &n));
  size_t global = 1024, local = 256;
  for (int w = 0; w < 100; w++) OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL));
  double *wall = malloc(2 * (size_t)blocks * sizeof *wall), *cpu = wall + blocks;
  if (!wall) DIE("out of memory");
  for (int b = 0; b < blocks; b++) {
    OK(clFinish(q));
    double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
    for (long i = 0; i < launches; i++) {
      if (args > 0) OK(clSetKernelArg(k, 0, sizeof a, &a));
      if (args > 1) OK(clSetKernelArg(k, 1, sizeof n, &n));
      OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL));
    }
    cpu[b] = clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
    OK(clFinish(q));
    wall[b] = clock_s(CLOCK_MONOTONIC) - t0;
  }
  qsort(wall, (size_t)blocks, sizeof *wall, by_value);
  qsort(cpu, (size_t)blocks, sizeof *cpu, by_value);
  double per = 1e6 / (double)launches;
  printf("%s: %.2f us per launch (median of %d blocks of %ld; fastest %.2f), %.2f us of CPU\n",
         label, per * wall[blocks / 2], blocks, launches, per * wall[0], per * cpu[blocks / 2]);
  fflush(stdout);
  free(wall);
  clReleaseMemObject(a);
  clReleaseKernel(k);
  clReleaseProgram(p);
  return q;
}

int main(int argc, char **argv) {
  long launches = argc > 1 ? atol(argv[1]) : 2000;
  int blocks = argc > 2 ? atoi(argv[2]) : 10, args = argc > 3 ? atoi(argv[3]) : 2;
  if (launches < 1 || blocks < 1) DIE("usage: launch_probe [launches>=1] [blocks>=1] [args]");
  cl_platform_id plats[8];
  cl_uint np = 0;
  cl_device_id dev = NULL;
  OK(clGetPlatformIDs(8, plats, &np));
  for (cl_uint i = 0; i < np && !dev; i++)
    if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_GPU, 1, &dev, NULL) != CL_SUCCESS) dev = NULL;
  for (cl_uint i = 0; i < np && !dev; i++)
    if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS) dev = NULL;
  if (!dev) DIE("no OpenCL device");
  char name[256] = "";
  clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL);
  printf("%s, %d clSetKernelArg calls a launch\n", name, args);
  cl_int err;
  for (int c = 0; c < 2; c++) {
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    OK(err);
    char label[64];
    cl_command_queue qs[3];
    int nq = c == 0 ? 3 : 1;
    for (int q = 0; q < nq; q++) {
      snprintf(label, sizeof label, "context %d, queue %d", c + 1, q + 1);
      qs[q] = one_queue(label, ctx, dev, launches, blocks, args);
    }
    for (int q = 0; q < nq; q++) clReleaseCommandQueue(qs[q]);
    clReleaseContext(ctx);
  }
  return 0;
}
