/* ocal — device memory: the one place ocal allocates and frees it.
 *
 * Every buffer's memory comes from ocal__device_alloc, so a caching pool can take over here
 * without touching the callers. */
#include "internal.h"

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
  cl_int err;
  *mem = clCreateBuffer(ctx->cl_ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
  if (err != CL_SUCCESS) {
    *mem = NULL;
    return ocal__cl_fail(ctx->info.name, err, "clCreateBuffer", func);
  }
  return OCAL_OK;
}

void ocal__device_free(ocal_context ctx, cl_mem mem) {
  (void)ctx;
  /* OpenCL keeps the memory until the commands queued on it have finished. */
  if (mem) clReleaseMemObject(mem);
}
