/* What the plain-OpenCL probes of bench/ (not linked with libocal) share: DIE, which ends the
 * program with a message; OK, which dies when an OpenCL call fails, naming it; read_text, a
 * whole file as a NUL-terminated string (or death); open_gpu, the first GPU with a context and
 * an in-order queue (or death). */
#ifndef OCAL_BENCH_CL_PROBE_H
#define OCAL_BENCH_CL_PROBE_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIE(...) (fprintf(stderr, __VA_ARGS__), fputc('\n', stderr), exit(1))
#define OK(x)                                               \
  do {                                                      \
    cl_int e_ = (x);                                        \
    if (e_ != CL_SUCCESS) DIE("%s: error %d", #x, (int)e_); \
  } while (0)

static inline char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) DIE("cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = len >= 0 ? malloc((size_t)len + 1) : NULL;
  if (!s || fread(s, 1, (size_t)len, f) != (size_t)len) DIE("cannot read %s", path);
  s[len] = 0;
  fclose(f);
  return s;
}

/* The first GPU of any platform, a context on it and a queue with `queue_props`. */
static inline void open_gpu(cl_command_queue_properties queue_props, cl_device_id *dev,
                            cl_context *ctx, cl_command_queue *q) {
  cl_platform_id plats[8];
  cl_uint np = 0;
  OK(clGetPlatformIDs(8, plats, &np));
  int found = 0;
  for (cl_uint i = 0; i < np && !found; i++)
    found = clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_GPU, 1, dev, NULL) == CL_SUCCESS;
  if (!found) DIE("no GPU");
  cl_int err;
  *ctx = clCreateContext(NULL, 1, dev, NULL, NULL, &err);
  OK(err);
  *q = clCreateCommandQueue(*ctx, *dev, queue_props, &err);
  OK(err);
}

#endif
