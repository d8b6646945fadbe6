/* ocal — typed device buffers, views, transfers, copies and fills. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

ocal_status ocal__check_buffer_arg(ocal_buffer buf, const char *name, const char *func) {
  if (!buf) return ocal__fail(OCAL_INVALID_HANDLE, func, "%s is NULL: pass a buffer", name);
  if (buf->magic != OCAL__BUFFER_MAGIC || atomic_load(&buf->released))
    return ocal__fail(OCAL_INVALID_HANDLE, func,
                      "%s is not a live ocal buffer (released already?)", name);
  return OCAL_OK;
}

int ocal__buffers_overlap(ocal_buffer a, ocal_buffer b) {
  if (!a->mem || a->mem != b->mem || a->numel == 0 || b->numel == 0) return 0;
  size_t as = ocal_dtype_size(a->dtype), bs = ocal_dtype_size(b->dtype);
  size_t ab = a->offset * as, bb = b->offset * bs;
  return ab < bb + b->numel * bs && bb < ab + a->numel * as;
}

ocal_status ocal__check_buffer(ocal_buffer buf, const char *func) {
  if (!buf) return ocal__fail(OCAL_INVALID_HANDLE, func, "the buffer is NULL");
  if (buf->magic != OCAL__BUFFER_MAGIC || atomic_load(&buf->released))
    return ocal__fail(OCAL_INVALID_HANDLE, func,
                      "the buffer handle is not a live ocal buffer (released already?)");
  return OCAL_OK;
}

/* Checks ndim and shape and computes the element count; the byte size must fit size_t. */
static ocal_status check_shape(const char *func, ocal_dtype dtype, int ndim, const size_t *shape,
                               size_t *numel) {
  if (ndim < 1 || ndim > OCAL_MAX_DIMS)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "ndim is %d; a buffer has 1 to %d dimensions (use shape {1} for a scalar)",
                      ndim, OCAL_MAX_DIMS);
  if (!shape) return ocal__fail(OCAL_INVALID_ARGUMENT, func, "shape must not be NULL");
  size_t n = 1, bytes;
  for (int i = 0; i < ndim; i++) {
    if (ocal__mul_overflows(n, shape[i], &n))
      return ocal__fail(OCAL_OVERFLOW, func, "the element count of the shape overflows size_t");
  }
  if (ocal__mul_overflows(n, ocal_dtype_size(dtype), &bytes))
    return ocal__fail(OCAL_OVERFLOW, func,
                      "%zu elements of %s do not fit in size_t bytes", n, ocal_dtype_name(dtype));
  *numel = n;
  return OCAL_OK;
}

ocal_status ocal__check_dtype(ocal_context ctx, ocal_dtype dtype, const char *func) {
  if ((unsigned)dtype >= (unsigned)OCAL_DTYPE_COUNT)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func, "invalid element type %d", (int)dtype);
  if ((dtype == OCAL_F64 || dtype == OCAL_C64) && !ctx->fp64) {
    return ocal__fail(OCAL_UNSUPPORTED, func,
                      "%s needs double precision, which device '%s' %s; use OCAL_F32 / "
                      "OCAL_C32 instead",
                      ocal_dtype_name(dtype), ctx->info.name,
                      ctx->info.has_fp64 ? "has but the context turned off (fp64 option or "
                                           "OCAL_FP64=0)"
                                         : "does not support (no cl_khr_fp64)");
  }
  return OCAL_OK;
}

static ocal_buffer new_handle(ocal_context ctx, ocal_dtype dtype, int ndim, const size_t *shape,
                              size_t numel) {
  /* malloc, not calloc: glibc serves small mallocs from its per-thread cache, calloc not,
   * and the handle is a third of the cost of a pooled create + release. */
  ocal_buffer buf = malloc(sizeof *buf);
  if (!buf) return NULL;
  *buf = (struct ocal_buffer_s){.magic = OCAL__BUFFER_MAGIC};
  atomic_init(&buf->refs, 1);
  atomic_init(&buf->released, 0);
  buf->ctx = ctx;
  buf->dtype = dtype;
  buf->ndim = ndim;
  memcpy(buf->shape, shape, (size_t)ndim * sizeof *shape);
  buf->numel = numel;
  ocal__context_retain(ctx);
  return buf;
}

static void unref(ocal_buffer buf) {
  if (atomic_fetch_sub(&buf->refs, 1) != 1) return;
  ocal_context ctx = buf->ctx;
  if (buf->base)
    unref(buf->base);
  else if (buf->adopted)
    clReleaseMemObject(buf->mem); /* the retain of ocal_buffer_from_cl_mem */
  else
    ocal__device_free(ctx, buf->mem);
  buf->magic = 0;
  free(buf);
  ocal__context_unref(ctx);
}

/* Creates a buffer; messages name `func`, the public call being served. */
static ocal_status create(ocal_context ctx, ocal_dtype dtype, int ndim, const size_t *shape,
                          ocal_buffer *out, const char *func) {
  if (!out) return ocal__fail(OCAL_INVALID_ARGUMENT, func, "buf (the out-parameter) must not be NULL");
  *out = NULL;
  ocal_status status = ocal__check_context(ctx, func);
  if (status != OCAL_OK) return status;
  if ((status = ocal__check_dtype(ctx, dtype, func)) != OCAL_OK) return status;
  size_t numel;
  if ((status = check_shape(func, dtype, ndim, shape, &numel)) != OCAL_OK) return status;

  cl_mem mem = NULL;
  /* An empty buffer has no device memory: OpenCL has no zero-byte buffers. */
  if (numel > 0) {
    status = ocal__device_alloc(ctx, numel * ocal_dtype_size(dtype), &mem, func);
    if (status != OCAL_OK) return status;
  }
  ocal_buffer buf = new_handle(ctx, dtype, ndim, shape, numel);
  if (!buf) {
    ocal__device_free(ctx, mem);
    return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, func, "no memory for the buffer handle");
  }
  buf->mem = mem;
  *out = buf;
  return OCAL_OK;
}

ocal_status ocal_buffer_create(ocal_context ctx, ocal_dtype dtype, int ndim, const size_t *shape,
                               ocal_buffer *out) {
  return create(ctx, dtype, ndim, shape, out, __func__);
}

ocal_status ocal_buffer_zeros(ocal_context ctx, ocal_dtype dtype, int ndim, const size_t *shape,
                              ocal_buffer *out) {
  ocal_status status = create(ctx, dtype, ndim, shape, out, __func__);
  if (status != OCAL_OK) return status;
  static const unsigned char zero[16] = {0}; /* one element of the widest type, c64 */
  status = ocal_buffer_fill(*out, zero);
  if (status != OCAL_OK) {
    ocal_buffer_release(*out);
    *out = NULL;
  }
  return status;
}

static ocal_status write_range(ocal_buffer buf, size_t offset, size_t count, const void *src,
                               ocal_event *event, const char *func);

ocal_status ocal_buffer_from_host(ocal_context ctx, ocal_dtype dtype, int ndim,
                                  const size_t *shape, const void *host, ocal_buffer *out) {
  ocal_status status = create(ctx, dtype, ndim, shape, out, __func__);
  if (status == OCAL_OK && !host && (*out)->numel > 0) {
    ocal_buffer_release(*out);
    *out = NULL;
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "host is NULL but the shape has elements");
  }
  if (status != OCAL_OK) return status;
  status = write_range(*out, 0, (*out)->numel, host, NULL, __func__);
  if (status != OCAL_OK) {
    ocal_buffer_release(*out);
    *out = NULL;
  }
  return status;
}

ocal_status ocal_buffer_from_cl_mem(ocal_context ctx, cl_mem mem, size_t offset_bytes,
                                    ocal_dtype dtype, int ndim, const size_t *shape,
                                    ocal_buffer *out) {
  if (!out) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "buf (the out-parameter) must not be NULL");
  *out = NULL;
  ocal_status status = ocal__check_context(ctx, __func__);
  if (status != OCAL_OK) return status;
  if ((status = ocal__check_dtype(ctx, dtype, __func__)) != OCAL_OK) return status;
  size_t numel, end;
  if ((status = check_shape(__func__, dtype, ndim, shape, &numel)) != OCAL_OK) return status;
  if (!mem) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "mem must not be NULL");
  size_t size = ocal_dtype_size(dtype);
  if (offset_bytes % size)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT,
                     "offset_bytes %zu is not a multiple of the %zu-byte elements of %s",
                     offset_bytes, size, ocal_dtype_name(dtype));
  cl_context mem_ctx = NULL;
  size_t mem_size = 0;
  cl_mem_flags flags = 0;
  cl_int err = clGetMemObjectInfo(mem, CL_MEM_CONTEXT, sizeof mem_ctx, &mem_ctx, NULL);
  if (err == CL_SUCCESS) err = clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof mem_size, &mem_size, NULL);
  if (err == CL_SUCCESS) err = clGetMemObjectInfo(mem, CL_MEM_FLAGS, sizeof flags, &flags, NULL);
  if (err != CL_SUCCESS) return ocal__cl_fail(ctx->info.name, err, "clGetMemObjectInfo", __func__);
  if (mem_ctx != ctx->cl_ctx)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT,
                     "the cl_mem belongs to another OpenCL context than ctx's; adopt its "
                     "context first (ocal_context_from_cl)");
  /* Any ocal call may write a buffer from a kernel (an output, an in-place op, the user's
   * kernels, CLBlast, the FFT engines), and may read one, and OpenCL leaves a kernel's write
   * to a read-only cl_mem (or read of a write-only one) undefined: no error, just wrong
   * memory. The flag cannot follow the buffer through all of those, so it is refused here. */
  if (flags & (CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY))
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT,
                     "the cl_mem was created with %s, but ocal's kernels may both read and "
                     "write any buffer: create it with CL_MEM_READ_WRITE, or copy it into an "
                     "ocal buffer (clEnqueueCopyBuffer into ocal_buffer_get_cl_mem's memory)",
                     flags & CL_MEM_READ_ONLY ? "CL_MEM_READ_ONLY" : "CL_MEM_WRITE_ONLY");
  if (ocal__add_overflows(offset_bytes, numel * size, &end) || end > mem_size)
    return OCAL_FAIL(OCAL_SHAPE_MISMATCH,
                     "%zu elements of %s at byte offset %zu do not fit in the cl_mem's %zu bytes",
                     numel, ocal_dtype_name(dtype), offset_bytes, mem_size);
  if ((err = clRetainMemObject(mem)) != CL_SUCCESS)
    return ocal__cl_fail(ctx->info.name, err, "clRetainMemObject", __func__);
  ocal_buffer buf = new_handle(ctx, dtype, ndim, shape, numel);
  if (!buf) {
    clReleaseMemObject(mem);
    return OCAL_FAIL(OCAL_OUT_OF_HOST_MEMORY, "no memory for the buffer handle");
  }
  buf->mem = mem;
  buf->adopted = 1;
  buf->offset = offset_bytes / size;
  *out = buf;
  return OCAL_OK;
}

ocal_status ocal_buffer_release(ocal_buffer buf) {
  if (!buf) return OCAL_OK;
  ocal_status status = ocal__check_buffer(buf, __func__);
  if (status != OCAL_OK) return status;
  /* Once only: a second release of a base whose views are alive would free their memory. */
  if (atomic_exchange(&buf->released, 1))
    return OCAL_FAIL(OCAL_INVALID_HANDLE, "the buffer handle was released already");
  unref(buf);
  return OCAL_OK;
}

ocal_status ocal_buffer_view(ocal_buffer buf, size_t offset, int ndim, const size_t *shape,
                             ocal_buffer *out) {
  if (!out) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "view (the out-parameter) must not be NULL");
  *out = NULL;
  ocal_status status = ocal__check_buffer(buf, __func__);
  if (status != OCAL_OK) return status;
  size_t numel, end;
  if ((status = check_shape(__func__, buf->dtype, ndim, shape, &numel)) != OCAL_OK) return status;
  if (ocal__add_overflows(offset, numel, &end) || end > buf->numel)
    return OCAL_FAIL(OCAL_SHAPE_MISMATCH,
                     "a view of %zu elements at offset %zu does not fit in a buffer of %zu "
                     "elements",
                     numel, offset, buf->numel);
  ocal_buffer base = buf->base ? buf->base : buf;
  ocal_buffer view = new_handle(buf->ctx, buf->dtype, ndim, shape, numel);
  if (!view) return OCAL_FAIL(OCAL_OUT_OF_HOST_MEMORY, "no memory for the view handle");
  atomic_fetch_add(&base->refs, 1);
  view->base = base;
  view->mem = numel > 0 ? base->mem : NULL;
  view->offset = buf->offset + offset;
  *out = view;
  return OCAL_OK;
}

ocal_status ocal__check_transfer(ocal_buffer buf, size_t offset, size_t count, const void *host,
                                 const char *func, size_t *bytes, size_t *origin) {
  ocal_status status = ocal__check_buffer(buf, func);
  if (status != OCAL_OK) return status;
  size_t end;
  if (ocal__add_overflows(offset, count, &end) || end > buf->numel)
    return ocal__fail(OCAL_SHAPE_MISMATCH, func,
                      "elements [%zu, %zu + %zu) are out of range for a buffer of %zu elements",
                      offset, offset, count, buf->numel);
  if (!host && count > 0)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func, "the host pointer is NULL for %zu elements",
                      count);
  size_t esize = ocal_dtype_size(buf->dtype);
  *bytes = count * esize;
  *origin = (buf->offset + offset) * esize;
  return OCAL_OK;
}

/* A transfer of nothing still owes the caller an event, ordered after earlier commands. */
static ocal_status empty_transfer(ocal_buffer buf, ocal_event *event, const char *func) {
  if (!event) return OCAL_OK;
  cl_event ev;
  cl_int err = clEnqueueMarkerWithWaitList(buf->ctx->queue, 0, NULL, &ev);
  if (err != CL_SUCCESS)
    return ocal__cl_fail(buf->ctx->info.name, err, "clEnqueueMarkerWithWaitList", func);
  return ocal__event_wrap(ev, event, func);
}

/* ocal_buffer_write's work; messages name `func`, the public call being served (also
 * ocal_buffer_from_host). */
static ocal_status write_range(ocal_buffer buf, size_t offset, size_t count, const void *src,
                               ocal_event *event, const char *func) {
  if (event) *event = NULL;
  size_t bytes, origin;
  ocal_status status = ocal__check_transfer(buf, offset, count, src, func, &bytes, &origin);
  if (status != OCAL_OK) return status;
  if (bytes == 0) return empty_transfer(buf, event, func);
  /* Large blocking copies of pageable memory may go faster through pinned staging. */
  if (!event &&
      ocal__staged_transfer(buf->ctx, 1, buf->mem, origin, bytes, (void *)src, &status, func))
    return status;
  cl_event ev = NULL;
  cl_int err = clEnqueueWriteBuffer(buf->ctx->queue, buf->mem, event ? CL_FALSE : CL_TRUE, origin,
                                    bytes, src, 0, NULL, event ? &ev : NULL);
  if (err != CL_SUCCESS)
    return ocal__cl_fail(buf->ctx->info.name, err, "clEnqueueWriteBuffer", func);
  return event ? ocal__event_wrap(ev, event, func) : OCAL_OK;
}

ocal_status ocal_buffer_write(ocal_buffer buf, size_t offset, size_t count, const void *src,
                              ocal_event *event) {
  return write_range(buf, offset, count, src, event, __func__);
}

ocal_status ocal_buffer_read(ocal_buffer buf, size_t offset, size_t count, void *dst,
                             ocal_event *event) {
  if (event) *event = NULL;
  size_t bytes, origin;
  ocal_status status = ocal__check_transfer(buf, offset, count, dst, __func__, &bytes, &origin);
  if (status != OCAL_OK) return status;
  if (bytes == 0) return empty_transfer(buf, event, __func__);
  if (!event &&
      ocal__staged_transfer(buf->ctx, 0, buf->mem, origin, bytes, dst, &status, __func__))
    return status;
  cl_event ev = NULL;
  OCAL_CL_CHECK(buf->ctx->info.name,
                clEnqueueReadBuffer(buf->ctx->queue, buf->mem, event ? CL_FALSE : CL_TRUE, origin,
                                    bytes, dst, 0, NULL, event ? &ev : NULL));
  return event ? ocal__event_wrap(ev, event, __func__) : OCAL_OK;
}

/* Device-to-device copies take ocal's kernel on GPUs, where it moves memory faster than the
 * driver's clEnqueueCopyBuffer at every size measured (docs/measurements.md#copy-kernel),
 * and the driver's copy elsewhere (a CPU driver's is a memcpy) or where the range is not
 * whole 4-byte words; OCAL_COPY forces either where both can run. */
static int copy_by_kernel(ocal_context ctx, size_t from, size_t to, size_t bytes) {
  if (from % 4 || to % 4 || bytes % 4 || ctx->settings.copy == OCAL__COPY_DRIVER) return 0;
  return ctx->settings.copy == OCAL__COPY_KERNEL || ctx->info.type == OCAL_DEVICE_GPU;
}

static ocal_status copy_kernel(ocal_context ctx, cl_mem src, size_t from, cl_mem dst, size_t to,
                               size_t words) {
  const int wide = from % 4 == 0 && to % 4 == 0;
  ocal__kernel *k;
  ocal_status status = ocal__library_kernel_from(
      ctx, "fill", wide ? "-DT=uint -DOCAL_COPY -DCOPY16" : "-DT=uint -DOCAL_COPY",
      "ocal_copy", &k, NULL, "ocal_buffer_copy");
  if (status != OCAL_OK) return status;
  cl_ulong soff = from, doff = to, n = words;
  const ocal__arg args[] = {OCAL__ARG(src), OCAL__ARG(soff), OCAL__ARG(dst), OCAL__ARG(doff),
                            OCAL__ARG(n)};
  return ocal__kernel_run(ctx, k, wide ? (words + 3) / 4 : words, 5, args, "ocal_buffer_copy");
}

ocal_status ocal_buffer_copy(ocal_buffer src, ocal_buffer dst) {
  ocal_status status = ocal__check_buffer(dst, __func__);
  if (status != OCAL_OK) return status;
  if ((status = ocal__check_buffer(src, __func__)) != OCAL_OK) return status;
  if (dst->ctx != src->ctx)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "dst and src belong to different contexts");
  if (dst->dtype != src->dtype)
    return OCAL_FAIL(OCAL_TYPE_MISMATCH, "dst is %s but src is %s (convert with a cast)",
                     ocal_dtype_name(dst->dtype), ocal_dtype_name(src->dtype));
  if (dst->numel != src->numel)
    return OCAL_FAIL(OCAL_SHAPE_MISMATCH, "dst has %zu elements but src has %zu", dst->numel,
                     src->numel);
  if (dst->numel == 0) return OCAL_OK;
  if (dst->mem == src->mem && dst->offset < src->offset + src->numel &&
      src->offset < dst->offset + dst->numel) {
    if (dst->offset == src->offset) return OCAL_OK; /* the same elements: nothing to move */
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT,
                     "dst and src are overlapping views of one buffer; copy through a "
                     "temporary buffer");
  }
  size_t esize = ocal_dtype_size(dst->dtype);
  size_t from = src->offset * esize, to = dst->offset * esize, bytes = dst->numel * esize;
  if (copy_by_kernel(dst->ctx, from, to, bytes))
    return copy_kernel(dst->ctx, src->mem, from / 4, dst->mem, to / 4, bytes / 4);
  OCAL_CL_CHECK(dst->ctx->info.name, clEnqueueCopyBuffer(dst->ctx->queue, src->mem, dst->mem,
                                                         from, to, bytes, 0, NULL, NULL));
  return OCAL_OK;
}

ocal_status ocal_buffer_fill(ocal_buffer buf, const void *value) {
  ocal_status status = ocal__check_buffer(buf, __func__);
  if (status != OCAL_OK) return status;
  if (!value) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "value must not be NULL");
  if (buf->numel == 0) return OCAL_OK;
  ocal_context ctx = buf->ctx;
  char options[128];
  ocal__dtype_options(buf->dtype, options, sizeof options);
  ocal__kernel *k;
  status = ocal__library_kernel_from(ctx, "fill", options, "ocal_fill", &k, NULL, __func__);
  if (status != OCAL_OK) return status;
  cl_ulong offset = buf->offset, n = buf->numel;
  const ocal__arg args[] = {OCAL__ARG(buf->mem), OCAL__ARG(offset), OCAL__ARG(n),
                            {ocal_dtype_size(buf->dtype), value}};
  return ocal__kernel_run(ctx, k, buf->numel, 4, args, __func__);
}

/* Facts of a buffer: one shape for all the getters. */
#define OCAL__BUFFER_GETTER(fn, type, expr)                                    \
  ocal_status fn(ocal_buffer buf, type *out) {                                 \
    ocal_status status = ocal__check_buffer(buf, __func__);                    \
    if (status != OCAL_OK) return status;                                      \
    if (!out) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "out must not be NULL"); \
    *out = (expr);                                                             \
    return OCAL_OK;                                                            \
  }
OCAL__BUFFER_GETTER(ocal_buffer_get_dtype, ocal_dtype, buf->dtype)
OCAL__BUFFER_GETTER(ocal_buffer_get_numel, size_t, buf->numel)
OCAL__BUFFER_GETTER(ocal_buffer_get_nbytes, size_t, buf->numel * ocal_dtype_size(buf->dtype))
OCAL__BUFFER_GETTER(ocal_buffer_get_context, ocal_context, buf->ctx)

ocal_status ocal_buffer_get_shape(ocal_buffer buf, int *ndim, size_t shape[OCAL_MAX_DIMS]) {
  ocal_status status = ocal__check_buffer(buf, __func__);
  if (status != OCAL_OK) return status;
  if (!ndim || !shape) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "ndim and shape must not be NULL");
  *ndim = buf->ndim;
  for (int i = 0; i < OCAL_MAX_DIMS; i++) shape[i] = i < buf->ndim ? buf->shape[i] : 1;
  return OCAL_OK;
}

ocal_status ocal_buffer_get_cl_mem(ocal_buffer buf, cl_mem *mem, size_t *offset_bytes) {
  ocal_status status = ocal__check_buffer(buf, __func__);
  if (status != OCAL_OK) return status;
  if (!mem) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "mem must not be NULL");
  *mem = buf->mem;
  if (offset_bytes) *offset_bytes = buf->offset * ocal_dtype_size(buf->dtype);
  return OCAL_OK;
}

const char *ocal__shape_format(int ndim, const size_t *shape, char *out, size_t size) {
  if (size == 0) return out;
  size_t used = (size_t)snprintf(out, size, "[");
  for (int i = 0; i < ndim && used < size; i++)
    used += (size_t)snprintf(out + used, size - used, i ? ", %zu" : "%zu", shape[i]);
  if (used < size) snprintf(out + used, size - used, "]");
  return out;
}
