/* ocal fault injection — makes the n-th call of one OpenCL entry point, or the n-th host
 * allocation made by libocal's own code, fail as a driver or a full heap would.
 *
 * The shim is linked into the test program (tests/fault/fault_program) rather than
 * preloaded: the program links libocal statically, and is built with AddressSanitizer in
 * the sanitizer build, where LD_PRELOAD of another object is refused unless the sanitizer
 * runtime comes first; an executable's own definitions come first in the dynamic linker's
 * search anyway, so libocal, CLBlast and clFFT all reach these wrappers (the program is
 * linked with --export-dynamic), and each wrapper forwards to the ICD loader's function
 * found with dlsym(RTLD_NEXT). Host allocations are wrapped with the linker's --wrap
 * option, which rewires exactly the malloc, calloc and realloc calls of the objects linked
 * into the program (libocal's and the VkFFT code compiled into it), not those of the
 * drivers or of CLBlast and clFFT.
 *
 * Settings (environment):
 *   OCAL_FAULT=NAME:N     the N-th call (1-based) of NAME fails; NAME is an OpenCL entry
 *                         point such as clCreateBuffer, or "malloc" for libocal's host
 *                         allocations (malloc, calloc and realloc counted together).
 *   OCAL_FAULT=NAME:N+    the N-th call and every later one fail (a lasting shortage).
 *   OCAL_FAULT_COUNT=FILE at exit, writes "NAME COUNT" for every entry point called, so a
 *                         driver script knows each N a program reaches.
 * Only calls made from the program's own code (libocal inside it), CLBlast or clFFT are
 * counted: calls the ICD loader or a driver makes internally are neither counted nor
 * failed, because the question is how ocal and its engines handle a failing driver. */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

/* ---- the table of entry points ------------------------------------------------------- */

/* X(name, error): every wrapped entry point and the error its injected failure returns,
 * chosen as the error a real driver gives when it runs out of what that call needs. */
#define FAULT_ENTRIES(X)                                        \
  X(malloc, 0)                                                  \
  X(clGetPlatformIDs, CL_OUT_OF_HOST_MEMORY)                    \
  X(clGetPlatformInfo, CL_OUT_OF_HOST_MEMORY)                   \
  X(clGetDeviceIDs, CL_OUT_OF_HOST_MEMORY)                      \
  X(clGetDeviceInfo, CL_OUT_OF_HOST_MEMORY)                     \
  X(clCreateContext, CL_OUT_OF_HOST_MEMORY)                     \
  X(clGetContextInfo, CL_OUT_OF_HOST_MEMORY)                    \
  X(clCreateCommandQueue, CL_OUT_OF_RESOURCES)                  \
  X(clGetCommandQueueInfo, CL_OUT_OF_HOST_MEMORY)               \
  X(clCreateBuffer, CL_MEM_OBJECT_ALLOCATION_FAILURE)           \
  X(clCreateSubBuffer, CL_OUT_OF_RESOURCES)                     \
  X(clGetMemObjectInfo, CL_OUT_OF_HOST_MEMORY)                  \
  X(clCreateProgramWithSource, CL_OUT_OF_HOST_MEMORY)           \
  X(clCreateProgramWithBinary, CL_OUT_OF_HOST_MEMORY)           \
  X(clBuildProgram, CL_BUILD_PROGRAM_FAILURE)                   \
  X(clGetProgramInfo, CL_OUT_OF_HOST_MEMORY)                    \
  X(clGetProgramBuildInfo, CL_OUT_OF_HOST_MEMORY)               \
  X(clCreateKernel, CL_OUT_OF_HOST_MEMORY)                      \
  X(clGetKernelInfo, CL_OUT_OF_HOST_MEMORY)                     \
  X(clGetKernelArgInfo, CL_OUT_OF_HOST_MEMORY)                  \
  X(clGetKernelWorkGroupInfo, CL_OUT_OF_HOST_MEMORY)            \
  X(clSetKernelArg, CL_OUT_OF_HOST_MEMORY)                      \
  X(clEnqueueNDRangeKernel, CL_OUT_OF_RESOURCES)                \
  X(clEnqueueReadBuffer, CL_OUT_OF_RESOURCES)                   \
  X(clEnqueueWriteBuffer, CL_OUT_OF_RESOURCES)                  \
  X(clEnqueueCopyBuffer, CL_OUT_OF_RESOURCES)                   \
  X(clEnqueueFillBuffer, CL_OUT_OF_RESOURCES)                   \
  X(clEnqueueMapBuffer, CL_MAP_FAILURE)                         \
  X(clEnqueueUnmapMemObject, CL_OUT_OF_RESOURCES)               \
  X(clEnqueueMarkerWithWaitList, CL_OUT_OF_HOST_MEMORY)         \
  X(clEnqueueBarrierWithWaitList, CL_OUT_OF_HOST_MEMORY)        \
  X(clGetEventInfo, CL_OUT_OF_HOST_MEMORY)                      \
  X(clWaitForEvents, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) \
  X(clFlush, CL_OUT_OF_RESOURCES)                               \
  X(clFinish, CL_OUT_OF_RESOURCES)

enum {
#define X(name, err) ID_##name,
  FAULT_ENTRIES(X)
#undef X
  ID_COUNT
};

static const char *const names[ID_COUNT] = {
#define X(name, err) #name,
    FAULT_ENTRIES(X)
#undef X
};

static const cl_int errors[ID_COUNT] = {
#define X(name, err) err,
    FAULT_ENTRIES(X)
#undef X
};

static atomic_ulong counts[ID_COUNT];
static atomic_ulong injected;
static int target = -1;     /* the entry point that fails, -1 for none */
static unsigned long nth;   /* the call (1-based) that fails */
static int lasting;         /* 1: every call from the nth on fails */
static atomic_int disarmed; /* set by fault_disarm */
static atomic_int ready;    /* settings read */

/* Reads OCAL_FAULT once. It runs from a constructor, before main, and again lazily in case
 * a wrapper runs first (another constructor allocating); both see the same environment. */
static void read_settings(void) {
  if (atomic_load(&ready)) return;
  const char *v = getenv("OCAL_FAULT");
  if (v && *v) {
    const char *colon = strchr(v, ':');
    size_t len = colon ? (size_t)(colon - v) : 0;
    for (int i = 0; colon && i < ID_COUNT; i++)
      if (strlen(names[i]) == len && strncmp(v, names[i], len) == 0) target = i;
    char *end = NULL;
    nth = colon ? strtoul(colon + 1, &end, 10) : 0;
    if (end && *end == '+') lasting = 1, end++;
    if (target < 0 || nth == 0 || !end || *end) {
      fprintf(stderr, "fault shim: OCAL_FAULT='%s' is not NAME:N or NAME:N+\n", v);
      abort();
    }
  }
  atomic_store(&ready, 1);
}

static void write_counts(void) {
  const char *path = getenv("OCAL_FAULT_COUNT");
  if (!path || !*path) return;
  FILE *f = fopen(path, "w");
  if (!f) return;
  for (int i = 0; i < ID_COUNT; i++)
    if (atomic_load(&counts[i])) fprintf(f, "%s %lu\n", names[i], atomic_load(&counts[i]));
  fclose(f);
}

__attribute__((constructor)) static void shim_init(void) {
  read_settings();
  atexit(write_counts);
}

void fault_disarm(void) { atomic_store(&disarmed, 1); }

static int entry_id(const char *name) {
  for (int i = 0; i < ID_COUNT; i++)
    if (!strcmp(names[i], name)) return i;
  return -1;
}

int fault_arm(const char *name, unsigned long n) {
  int id = entry_id(name);
  if (id < 0 || n == 0) return -1;
  atomic_store(&disarmed, 1);
  target = id;
  nth = atomic_load(&counts[id]) + n;
  lasting = 0;
  atomic_store(&disarmed, 0);
  return 0;
}

unsigned long fault_calls(const char *name) {
  int id = entry_id(name);
  return id < 0 ? 0 : atomic_load(&counts[id]);
}

unsigned long fault_injected(void) { return atomic_load(&injected); }

/* 1 when the code at `caller` is the program itself (libocal is linked into it), CLBlast,
 * clFFT, or a shared libocal: the code whose handling of failures is under test. */
static int ours(const void *caller) {
  static void *self_base;
  Dl_info me, it;
  if (!self_base && dladdr((void *)&ours, &me)) self_base = me.dli_fbase;
  if (!dladdr(caller, &it) || !it.dli_fname) return 0;
  if (it.dli_fbase == self_base) return 1;
  return strstr(it.dli_fname, "libocal") || strstr(it.dli_fname, "clblast") ||
         strstr(it.dli_fname, "clFFT");
}

/* Counts a call of entry point `id`; 1 when it is to fail. */
static int hit(int id) {
  read_settings();
  unsigned long n = atomic_fetch_add(&counts[id], 1) + 1;
  if (id != target || atomic_load(&disarmed)) return 0;
  if (n == nth || (lasting && n > nth)) {
    atomic_fetch_add(&injected, 1);
    return 1;
  }
  return 0;
}

static int hit_from(int id, const void *caller) { return ours(caller) && hit(id); }

/* ---- OpenCL wrappers ------------------------------------------------------------------ */

static void *next(const char *name) {
  void *f = dlsym(RTLD_NEXT, name);
  if (!f) {
    fprintf(stderr, "fault shim: %s not found after the program\n", name);
    abort();
  }
  return f;
}

#define REAL(name) \
  static __typeof__(&name) real; \
  if (!real) real = (__typeof__(&name))next(#name)

/* Entry points that return a cl_int. */
#define WRAP_INT(name, params, args)                                 \
  cl_int name params {                                               \
    REAL(name);                                                      \
    if (hit_from(ID_##name, __builtin_return_address(0)))            \
      return errors[ID_##name];                                      \
    return real args;                                                \
  }

/* Entry points that return an object and report errors through errcode_ret. */
#define WRAP_OBJ(type, name, params, args)                           \
  type name params {                                                 \
    REAL(name);                                                      \
    if (hit_from(ID_##name, __builtin_return_address(0))) {          \
      if (errcode_ret) *errcode_ret = errors[ID_##name];             \
      return NULL;                                                   \
    }                                                                \
    return real args;                                                \
  }

WRAP_INT(clGetPlatformIDs, (cl_uint n, cl_platform_id *p, cl_uint *np), (n, p, np))
WRAP_INT(clGetPlatformInfo, (cl_platform_id p, cl_platform_info i, size_t s, void *v, size_t *r),
         (p, i, s, v, r))
WRAP_INT(clGetDeviceIDs,
         (cl_platform_id p, cl_device_type t, cl_uint n, cl_device_id *d, cl_uint *nd),
         (p, t, n, d, nd))
WRAP_INT(clGetDeviceInfo, (cl_device_id d, cl_device_info i, size_t s, void *v, size_t *r),
         (d, i, s, v, r))
WRAP_OBJ(cl_context, clCreateContext,
         (const cl_context_properties *p, cl_uint n, const cl_device_id *d,
          void(CL_CALLBACK *cb)(const char *, const void *, size_t, void *), void *u,
          cl_int *errcode_ret),
         (p, n, d, cb, u, errcode_ret))
WRAP_INT(clGetContextInfo, (cl_context c, cl_context_info i, size_t s, void *v, size_t *r),
         (c, i, s, v, r))
WRAP_OBJ(cl_command_queue, clCreateCommandQueue,
         (cl_context c, cl_device_id d, cl_command_queue_properties p, cl_int *errcode_ret),
         (c, d, p, errcode_ret))
WRAP_INT(clGetCommandQueueInfo,
         (cl_command_queue q, cl_command_queue_info i, size_t s, void *v, size_t *r),
         (q, i, s, v, r))
WRAP_OBJ(cl_mem, clCreateBuffer,
         (cl_context c, cl_mem_flags f, size_t s, void *h, cl_int *errcode_ret),
         (c, f, s, h, errcode_ret))
WRAP_OBJ(cl_mem, clCreateSubBuffer,
         (cl_mem m, cl_mem_flags f, cl_buffer_create_type t, const void *i, cl_int *errcode_ret),
         (m, f, t, i, errcode_ret))
WRAP_INT(clGetMemObjectInfo, (cl_mem m, cl_mem_info i, size_t s, void *v, size_t *r),
         (m, i, s, v, r))
WRAP_OBJ(cl_program, clCreateProgramWithSource,
         (cl_context c, cl_uint n, const char **s, const size_t *l, cl_int *errcode_ret),
         (c, n, s, l, errcode_ret))
WRAP_OBJ(cl_program, clCreateProgramWithBinary,
         (cl_context c, cl_uint n, const cl_device_id *d, const size_t *l,
          const unsigned char **b, cl_int *st, cl_int *errcode_ret),
         (c, n, d, l, b, st, errcode_ret))
WRAP_INT(clBuildProgram,
         (cl_program p, cl_uint n, const cl_device_id *d, const char *o,
          void(CL_CALLBACK *cb)(cl_program, void *), void *u),
         (p, n, d, o, cb, u))
WRAP_INT(clGetProgramInfo, (cl_program p, cl_program_info i, size_t s, void *v, size_t *r),
         (p, i, s, v, r))
WRAP_INT(clGetProgramBuildInfo,
         (cl_program p, cl_device_id d, cl_program_build_info i, size_t s, void *v, size_t *r),
         (p, d, i, s, v, r))
WRAP_OBJ(cl_kernel, clCreateKernel, (cl_program p, const char *n, cl_int *errcode_ret),
         (p, n, errcode_ret))
WRAP_INT(clGetKernelInfo, (cl_kernel k, cl_kernel_info i, size_t s, void *v, size_t *r),
         (k, i, s, v, r))
WRAP_INT(clGetKernelArgInfo,
         (cl_kernel k, cl_uint a, cl_kernel_arg_info i, size_t s, void *v, size_t *r),
         (k, a, i, s, v, r))
WRAP_INT(clGetKernelWorkGroupInfo,
         (cl_kernel k, cl_device_id d, cl_kernel_work_group_info i, size_t s, void *v, size_t *r),
         (k, d, i, s, v, r))
WRAP_INT(clSetKernelArg, (cl_kernel k, cl_uint i, size_t s, const void *v), (k, i, s, v))
WRAP_INT(clEnqueueNDRangeKernel,
         (cl_command_queue q, cl_kernel k, cl_uint d, const size_t *o, const size_t *g,
          const size_t *l, cl_uint n, const cl_event *w, cl_event *e),
         (q, k, d, o, g, l, n, w, e))
WRAP_INT(clEnqueueReadBuffer,
         (cl_command_queue q, cl_mem m, cl_bool b, size_t o, size_t s, void *p, cl_uint n,
          const cl_event *w, cl_event *e),
         (q, m, b, o, s, p, n, w, e))
WRAP_INT(clEnqueueWriteBuffer,
         (cl_command_queue q, cl_mem m, cl_bool b, size_t o, size_t s, const void *p, cl_uint n,
          const cl_event *w, cl_event *e),
         (q, m, b, o, s, p, n, w, e))
WRAP_INT(clEnqueueCopyBuffer,
         (cl_command_queue q, cl_mem a, cl_mem b, size_t oa, size_t ob, size_t s, cl_uint n,
          const cl_event *w, cl_event *e),
         (q, a, b, oa, ob, s, n, w, e))
WRAP_INT(clEnqueueFillBuffer,
         (cl_command_queue q, cl_mem m, const void *p, size_t ps, size_t o, size_t s, cl_uint n,
          const cl_event *w, cl_event *e),
         (q, m, p, ps, o, s, n, w, e))
WRAP_OBJ(void *, clEnqueueMapBuffer,
         (cl_command_queue q, cl_mem m, cl_bool b, cl_map_flags f, size_t o, size_t s,
          cl_uint n, const cl_event *w, cl_event *e, cl_int *errcode_ret),
         (q, m, b, f, o, s, n, w, e, errcode_ret))
WRAP_INT(clEnqueueUnmapMemObject,
         (cl_command_queue q, cl_mem m, void *p, cl_uint n, const cl_event *w, cl_event *e),
         (q, m, p, n, w, e))
WRAP_INT(clEnqueueMarkerWithWaitList,
         (cl_command_queue q, cl_uint n, const cl_event *w, cl_event *e), (q, n, w, e))
WRAP_INT(clEnqueueBarrierWithWaitList,
         (cl_command_queue q, cl_uint n, const cl_event *w, cl_event *e), (q, n, w, e))
WRAP_INT(clGetEventInfo, (cl_event ev, cl_event_info i, size_t s, void *v, size_t *r),
         (ev, i, s, v, r))
WRAP_INT(clWaitForEvents, (cl_uint n, const cl_event *e), (n, e))
WRAP_INT(clFlush, (cl_command_queue q), (q))
WRAP_INT(clFinish, (cl_command_queue q), (q))

/* ---- host allocations of libocal (linked with -Wl,--wrap=malloc,...) ------------------- */

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);

void *__wrap_malloc(size_t size) { return hit(ID_malloc) ? NULL : __real_malloc(size); }
void *__wrap_calloc(size_t n, size_t size) {
  return hit(ID_malloc) ? NULL : __real_calloc(n, size);
}
void *__wrap_realloc(void *p, size_t size) {
  return hit(ID_malloc) ? NULL : __real_realloc(p, size);
}

void *fault_host_alloc(size_t size) { return __real_malloc(size); }
