/* ocal — device memory: the one place ocal allocates and frees it.
 *
 * Every buffer's memory comes from ocal__device_alloc, so the context's caching pool
 * (pool.c) serves all of it without the callers knowing. */
#include "memory_internal.h"

/* Messages say what failed rather than naming this internal function. */
static const char func[] = "device memory allocation";

ocal_status ocal__device_alloc(ocal_context ctx, size_t bytes, cl_mem *mem) {
  *mem = NULL;
  /* Drivers answer an oversized request in different ways (an error now, or a failure at
   * first use); check the device's documented limit first so the answer is always clear. */
  if ((uint64_t)bytes > ctx->info.max_alloc_bytes) {
    return ocal__fail(OCAL_OUT_OF_DEVICE_MEMORY, func,
                     "a buffer of %zu bytes is larger than device '%s' allows for one "
                     "allocation (%llu bytes; %llu bytes of global memory in all)",
                     bytes, ctx->info.name, (unsigned long long)ctx->info.max_alloc_bytes,
                     (unsigned long long)ctx->info.global_mem_bytes);
  }
  return ocal__pool_alloc(ctx, bytes, mem);
}

void ocal__device_free(ocal_context ctx, cl_mem mem) {
  /* OpenCL keeps the memory until the commands queued on it have finished, and the pool
   * hands it out again only to commands ordered after them. */
  if (mem) ocal__pool_free(ctx, mem);
}
