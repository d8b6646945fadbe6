/* ocal — device memory: the one place ocal allocates and frees it.
 *
 * Every buffer's memory comes from ocal__device_alloc, so the context's caching pool
 * (pool.c) serves all of it without the callers knowing. */
#include <stdlib.h>

#include "memory_internal.h"

/* Messages say what failed rather than naming this internal function; the public call
 * served goes before it. */
static const char what[] = "device memory allocation";

ocal_status ocal__device_alloc(ocal_context ctx, size_t bytes, cl_mem *mem, const char *func) {
  *mem = NULL;
  ocal_status status;
  /* Drivers answer an oversized request in different ways (an error now, or a failure at
   * first use); check the device's documented limit first so the answer is always clear. */
  if ((uint64_t)bytes > ctx->info.max_alloc_bytes) {
    status = ocal__fail(OCAL_OUT_OF_DEVICE_MEMORY, what,
                        "a buffer of %zu bytes is larger than device '%s' allows for one "
                        "allocation (%llu bytes; %llu bytes of global memory in all)",
                        bytes, ctx->info.name, (unsigned long long)ctx->info.max_alloc_bytes,
                        (unsigned long long)ctx->info.global_mem_bytes);
  } else {
    status = ocal__pool_alloc(ctx, bytes, mem);
  }
  if (status != OCAL_OK) ocal__prefix_error(func);
  return status;
}

void ocal__device_free(ocal_context ctx, cl_mem mem) {
  /* OpenCL keeps the memory until the commands queued on it have finished, and the pool
   * hands it out again only to commands ordered after them. */
  if (mem) ocal__pool_free(ctx, mem);
}

ocal_status ocal__scratch_reserve(ocal_context ctx, cl_mem *mem, size_t *have, size_t bytes,
                                  const char *func) {
  if (bytes == 0) bytes = 1;
  if (*have >= bytes) return OCAL_OK;
  /* Grow by half again at least, so a sequence of growing sizes does not reallocate every
   * time. The old buffer stays alive until the commands queued on it have finished. */
  size_t want = *have + *have / 2;
  if (want < bytes) want = bytes;
  if (want < 65536) want = 65536;
  cl_mem fresh;
  ocal_status status = ocal__device_alloc(ctx, want, &fresh, func);
  if (status != OCAL_OK) return status;
  if (*mem) ocal__device_free(ctx, *mem);
  *mem = fresh;
  *have = want;
  return OCAL_OK;
}

ocal_status ocal__lookback_reserve(ocal_context ctx, ocal__lookback *lb, size_t tiles,
                                   cl_uint *base, cl_uint *epoch, const char *func) {
  int clear = 0;
  if (lb->cap < tiles) {
    size_t cap = lb->cap + lb->cap / 2;
    if (cap < tiles) cap = tiles;
    if (cap < 4096) cap = 4096;
    cap = (cap + 3) / 4 * 4; /* the values start 16-byte aligned */
    cl_mem fresh;
    ocal_status status = ocal__device_alloc(ctx, 4 * (4 + 8 * cap), &fresh, func);
    if (status != OCAL_OK) return status;
    if (lb->mem) ocal__device_free(ctx, lb->mem);
    lb->mem = fresh;
    lb->cap = cap;
    clear = 1;
  }
  if (++lb->epoch >= (1u << 30)) clear = 1; /* flags hold the epoch in 30 bits */
  if (clear) {
    /* Zeros written from the host (blocking, so the zeros need not outlive the call), not
     * clEnqueueFillBuffer: Oclgrind 21.10 counts filled memory as uninitialised. This
     * happens when the buffer is new or grows, and when the epoch wraps. */
    size_t bytes = 4 * (4 + 8 * lb->cap);
    void *zeros = calloc(1, bytes);
    if (!zeros) return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, func, "no memory to clear a scan's state");
    cl_int err = clEnqueueWriteBuffer(ctx->queue, lb->mem, CL_TRUE, 0, bytes, zeros, 0, NULL, NULL);
    free(zeros);
    if (err != CL_SUCCESS)
      return ocal__cl_fail(ctx->info.name, err, "clEnqueueWriteBuffer(scan state)", func);
    lb->tickets = 0;
    lb->epoch = 1;
  }
  *base = lb->tickets;
  *epoch = lb->epoch;
  lb->tickets += (cl_uint)tiles; /* every group takes one ticket; wraps like the counter */
  return OCAL_OK;
}

int ocal__lookback_device(ocal_context ctx) {
  const int concurrent = ctx->info.type == OCAL_DEVICE_GPU || ctx->info.type == OCAL_DEVICE_CPU;
  if (!concurrent || ctx->settings.scan == OCAL__SCAN_THREE) return 0;
  if (ctx->settings.scan == OCAL__SCAN_SINGLE || ctx->settings.scan == OCAL__SCAN_WALK) return 1;
  /* The rule: every device whose groups run concurrently (GPUs and CPU drivers) takes the
   * single pass: it reads and writes each element once where the three passes read the input
   * twice (docs/scan.md#figures). */
  return 1;
}
