/* ocal — status names, the thread-local error message, and OpenCL error names. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Large enough for a compiler log of a few hundred lines; longer logs are truncated. */
#define OCAL__ERROR_SIZE 16384

static _Thread_local char last_error[OCAL__ERROR_SIZE];

const char *ocal_status_name(ocal_status status) {
  switch (status) {
#define OCAL__STATUS_NAME(name, value, text) \
  case OCAL_##name:                          \
    return "OCAL_" #name;
    OCAL_STATUS_MAP(OCAL__STATUS_NAME)
#undef OCAL__STATUS_NAME
  }
  return "OCAL_UNKNOWN_STATUS";
}

const char *ocal_status_description(ocal_status status) {
  switch (status) {
#define OCAL__STATUS_TEXT(name, value, text) \
  case OCAL_##name:                          \
    return text;
    OCAL_STATUS_MAP(OCAL__STATUS_TEXT)
#undef OCAL__STATUS_TEXT
  }
  return "unknown status";
}

const char *ocal_last_error(void) { return last_error; }

ocal_status ocal__fail(ocal_status status, const char *func, const char *fmt, ...) {
  int n = snprintf(last_error, sizeof last_error, "%s: ", func);
  if (n < 0 || (size_t)n >= sizeof last_error) n = 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error + n, sizeof last_error - (size_t)n, fmt, ap);
  va_end(ap);
  return status;
}

ocal_status ocal_error_set(ocal_status status, const char *func, const char *fmt, ...) {
  int n = func ? snprintf(last_error, sizeof last_error, "%s%s", func, fmt ? ": " : "") : 0;
  if (n < 0 || (size_t)n >= sizeof last_error) n = 0;
  last_error[n] = '\0';
  if (fmt) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error + n, sizeof last_error - (size_t)n, fmt, ap);
    va_end(ap);
  }
  return status;
}

const char *ocal_cl_error_name(int err) { return ocal__cl_error_name((cl_int)err); }

void ocal__prefix_error(const char *func) {
  size_t add = strlen(func) + 2, used = strlen(last_error);
  if (add + 1 >= sizeof last_error) return;
  if (used + add + 1 > sizeof last_error) used = sizeof last_error - add - 1; /* cut the end */
  memmove(last_error + add, last_error, used);
  memcpy(last_error, func, add - 2);
  memcpy(last_error + add - 2, ": ", 2);
  last_error[add + used] = '\0';
}

void ocal__claim_error(const char *func) {
  static const char anonymous[] = "ocal: ";
  if (strncmp(last_error, anonymous, sizeof anonymous - 1) != 0) return;
  char rest[sizeof last_error];
  memcpy(rest, last_error + 4, sizeof last_error - 4); /* from ": " on */
  rest[sizeof rest - 5] = '\0';
  snprintf(last_error, sizeof last_error, "%s%s", func, rest);
}

void ocal__append_error(const char *fmt, ...) {
  size_t used = strlen(last_error);
  if (used + 1 >= sizeof last_error) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error + used, sizeof last_error - used, fmt, ap);
  va_end(ap);
}

/* X(name) for every error code of OpenCL 1.0 to 3.0 and the ICD loader's platform error. */
#define OCAL__CL_ERROR_MAP(X)                                                              \
  X(CL_DEVICE_NOT_FOUND, -1) X(CL_DEVICE_NOT_AVAILABLE, -2) X(CL_COMPILER_NOT_AVAILABLE, -3) \
  X(CL_MEM_OBJECT_ALLOCATION_FAILURE, -4) X(CL_OUT_OF_RESOURCES, -5)                      \
  X(CL_OUT_OF_HOST_MEMORY, -6) X(CL_PROFILING_INFO_NOT_AVAILABLE, -7)                     \
  X(CL_MEM_COPY_OVERLAP, -8) X(CL_IMAGE_FORMAT_MISMATCH, -9)                              \
  X(CL_IMAGE_FORMAT_NOT_SUPPORTED, -10) X(CL_BUILD_PROGRAM_FAILURE, -11)                  \
  X(CL_MAP_FAILURE, -12) X(CL_MISALIGNED_SUB_BUFFER_OFFSET, -13)                          \
  X(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, -14) X(CL_COMPILE_PROGRAM_FAILURE, -15) \
  X(CL_LINKER_NOT_AVAILABLE, -16) X(CL_LINK_PROGRAM_FAILURE, -17)                         \
  X(CL_DEVICE_PARTITION_FAILED, -18) X(CL_KERNEL_ARG_INFO_NOT_AVAILABLE, -19)             \
  X(CL_INVALID_VALUE, -30) X(CL_INVALID_DEVICE_TYPE, -31) X(CL_INVALID_PLATFORM, -32)     \
  X(CL_INVALID_DEVICE, -33) X(CL_INVALID_CONTEXT, -34) X(CL_INVALID_QUEUE_PROPERTIES, -35) \
  X(CL_INVALID_COMMAND_QUEUE, -36) X(CL_INVALID_HOST_PTR, -37)                            \
  X(CL_INVALID_MEM_OBJECT, -38) X(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, -39)                \
  X(CL_INVALID_IMAGE_SIZE, -40) X(CL_INVALID_SAMPLER, -41) X(CL_INVALID_BINARY, -42)      \
  X(CL_INVALID_BUILD_OPTIONS, -43) X(CL_INVALID_PROGRAM, -44)                             \
  X(CL_INVALID_PROGRAM_EXECUTABLE, -45) X(CL_INVALID_KERNEL_NAME, -46)                    \
  X(CL_INVALID_KERNEL_DEFINITION, -47) X(CL_INVALID_KERNEL, -48)                          \
  X(CL_INVALID_ARG_INDEX, -49) X(CL_INVALID_ARG_VALUE, -50) X(CL_INVALID_ARG_SIZE, -51)   \
  X(CL_INVALID_KERNEL_ARGS, -52) X(CL_INVALID_WORK_DIMENSION, -53)                        \
  X(CL_INVALID_WORK_GROUP_SIZE, -54) X(CL_INVALID_WORK_ITEM_SIZE, -55)                    \
  X(CL_INVALID_GLOBAL_OFFSET, -56) X(CL_INVALID_EVENT_WAIT_LIST, -57)                     \
  X(CL_INVALID_EVENT, -58) X(CL_INVALID_OPERATION, -59) X(CL_INVALID_GL_OBJECT, -60)      \
  X(CL_INVALID_BUFFER_SIZE, -61) X(CL_INVALID_MIP_LEVEL, -62)                             \
  X(CL_INVALID_GLOBAL_WORK_SIZE, -63) X(CL_INVALID_PROPERTY, -64)                         \
  X(CL_INVALID_IMAGE_DESCRIPTOR, -65) X(CL_INVALID_COMPILER_OPTIONS, -66)                 \
  X(CL_INVALID_LINKER_OPTIONS, -67) X(CL_INVALID_DEVICE_PARTITION_COUNT, -68)             \
  X(CL_INVALID_PIPE_SIZE, -69) X(CL_INVALID_DEVICE_QUEUE, -70)                            \
  X(CL_INVALID_SPEC_ID, -71) X(CL_MAX_SIZE_RESTRICTION_EXCEEDED, -72)                     \
  X(CL_PLATFORM_NOT_FOUND_KHR, -1001)

const char *ocal__cl_error_name(cl_int err) {
  switch (err) {
    case 0:
      return "CL_SUCCESS";
#define OCAL__CL_ERROR_CASE(name, value) \
  case value:                            \
    return #name;
      OCAL__CL_ERROR_MAP(OCAL__CL_ERROR_CASE)
#undef OCAL__CL_ERROR_CASE
  }
  return "CL_UNKNOWN_ERROR";
}

static ocal_status status_of_cl_error(cl_int err) {
  switch (err) {
    case CL_OUT_OF_HOST_MEMORY:
      return OCAL_OUT_OF_HOST_MEMORY;
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_INVALID_BUFFER_SIZE:
      return OCAL_OUT_OF_DEVICE_MEMORY;
    case CL_BUILD_PROGRAM_FAILURE:
    case CL_COMPILE_PROGRAM_FAILURE:
    case CL_LINK_PROGRAM_FAILURE:
      return OCAL_BUILD_FAILED;
    case CL_DEVICE_NOT_FOUND:
    case -1001: /* CL_PLATFORM_NOT_FOUND_KHR: the ICD loader found no platform */
      return OCAL_NO_DEVICE;
    default:
      return OCAL_OPENCL_ERROR;
  }
}

ocal_status ocal__cl_fail(const char *device_name, cl_int err, const char *call,
                          const char *func) {
  /* Quote only the OpenCL function's name, not its whole argument list. */
  size_t name_len = strcspn(call, "( ");
  ocal_status status = status_of_cl_error(err);
  if (device_name && device_name[0])
    return ocal__fail(status, func, "%.*s failed with %s (%d) on device '%s'", (int)name_len,
                      call, ocal__cl_error_name(err), (int)err, device_name);
  return ocal__fail(status, func, "%.*s failed with %s (%d)", (int)name_len, call,
                    ocal__cl_error_name(err), (int)err);
}

char *ocal__strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *copy = malloc(n);
  if (copy) memcpy(copy, s, n);
  return copy;
}

void ocal__put(char **at, char *end, const char *s) {
  char *p = *at;
  if (p >= end) return;
  while (*s && p + 1 < end) *p++ = *s++;
  *p = '\0';
  *at = p;
}

/* The struct sizes a library of this version takes: "104", or "16 to 24" where a struct has
 * grown since its first version. */
static const char *sizes_taken(size_t min_size, size_t max_size, char *out, size_t size) {
  if (min_size == max_size)
    snprintf(out, size, "%zu", min_size);
  else
    snprintf(out, size, "%zu to %zu", min_size, max_size);
  return out;
}

ocal_status ocal__filled_check(const char *func, const char *param, const char *type,
                               const void *dst, size_t min_size, size_t full_size) {
  if (!dst) return OCAL_OK;
  size_t size;
  memcpy(&size, dst, sizeof size);
  char taken[48];
  if (size < min_size || size > full_size)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "%s->struct_size is %zu, but this library takes %s: set it to sizeof(%s) "
                      "before the call",
                      param, size, sizes_taken(min_size, full_size, taken, sizeof taken), type);
  return OCAL_OK;
}

void ocal__filled_write(void *dst, const void *src) {
  size_t size;
  memcpy(&size, dst, sizeof size);
  memcpy((char *)dst + sizeof size, (const char *)src + sizeof size, size - sizeof size);
}

ocal_status ocal__options_copy(const char *func, const char *init, void *dst, size_t dst_size,
                               const void *src, size_t min_size) {
  size_t size;
  memcpy(&size, src, sizeof size);
  char taken[48];
  if (size < min_size || size > dst_size)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "the struct's struct_size is %zu, but this library takes %s: start the "
                      "struct from %s()",
                      size, sizes_taken(min_size, dst_size, taken, sizeof taken), init);
  memcpy(dst, src, size);
  return OCAL_OK;
}
