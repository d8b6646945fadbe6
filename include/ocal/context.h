/* ocal — contexts: one device, its in-order queue, and the caches of compiled kernels.
 *
 * Every ocal object is created within a context and must be released before it. A context
 * may be used from several threads: its kernel caches are locked, and its queue is in order,
 * so commands run in the order the calls were made. */
#ifndef OCAL_CONTEXT_H
#define OCAL_CONTEXT_H

#include <stddef.h>
#include <stdint.h>

#include "ocal/cl.h"
#include "ocal/device.h"
#include "ocal/export.h"
#include "ocal/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Opaque handle to a context. Created by ocal_context_create, freed by ocal_context_release. */
typedef struct ocal_context_s *ocal_context;

/** Options for ocal_context_create. Start from ocal_context_options_init() so that fields
 * added in later versions get their defaults. */
typedef struct ocal_context_options {
  const char *device;     /**< selector (see ocal/device.h); NULL: OCAL_DEVICE, else default */
  int profiling;          /**< 1: create the queue with CL_QUEUE_PROFILING_ENABLE */
  int disk_cache;         /**< 1 on, 0 off, -1 (default): on unless OCAL_CACHE=0 */
  const char *cache_dir;  /**< NULL (default): $OCAL_CACHE_DIR, else $XDG_CACHE_HOME/ocal,
                               else ~/.cache/ocal */
  int fp64;               /**< 1 use fp64 where the device has it, 0 act as if the device had
                               none (to test a program's fallback on a machine that has fp64),
                               -1 (default): on unless OCAL_FP64=0 */
  int pool;               /**< caching device allocator (see ocal/memory.h): 1 on, 0 off,
                               -1 (default): on unless OCAL_POOL=0 */
  int64_t pool_limit;     /**< most bytes the pool keeps cached (freed, not yet reused);
                               -1 (default): $OCAL_POOL_LIMIT, else half the device's global
                               memory */
  int64_t memory_limit;   /**< most device bytes the context's buffers may hold, in use and
                               cached together (like a per-process memory fraction); -1
                               (default): $OCAL_MEMORY_LIMIT, else the device's global memory */
  int staging;            /**< blocking transfers of pageable host memory through pinned
                               staging buffers: 1 on, 0 off, -1 (default): $OCAL_STAGING, else
                               decided per device (see ocal/memory.h) */
  const char *limits;     /**< make the device look smaller than it is, to run the paths a
                               smaller GPU takes: "key=value,..." with keys local_mem,
                               max_work_group, max_items (AxBxC), fp64 (0), cl_version (1.2),
                               max_alloc, global_mem (sizes take k, m, g), or a profile (amd,
                               intel-igpu, mobile); values only ever shrink the device's own.
                               NULL (default): $OCAL_LIMITS; "" none. docs/portability.md */
} ocal_context_options;

/** Counters of the kernel caches of one context. */
typedef struct ocal_cache_stats {
  uint64_t compiles;     /**< programs compiled from source (the compiler ran) */
  uint64_t disk_hits;    /**< programs loaded from the disk cache (the compiler did not run) */
  uint64_t memory_hits;  /**< program requests served from the context's memory cache */
  uint64_t disk_rejects; /**< disk cache files ignored as corrupt, truncated or foreign */
} ocal_cache_stats;

/** Fills \p options with the defaults. \returns OCAL_OK, or OCAL_INVALID_ARGUMENT if NULL. */
OCAL_API ocal_status ocal_context_options_init(ocal_context_options *options);

/** Creates a context on the selected device.
 * \param ctx receives the new context; set to NULL on failure.
 * \param options NULL for the defaults.
 * \returns OCAL_OK; OCAL_NO_DEVICE / OCAL_DEVICE_NOT_FOUND when no device fits; an OpenCL
 *          error when the driver refuses to create the context or queue. */
OCAL_API ocal_status ocal_context_create(ocal_context *ctx, const ocal_context_options *options);

/** Waits for the context's queued work, then frees the context, its queue and caches.
 * Every buffer of the context must have been released before. NULL is accepted (no-op). */
OCAL_API ocal_status ocal_context_release(ocal_context ctx);

/** Blocks until every command queued on the context has finished. */
OCAL_API ocal_status ocal_context_finish(ocal_context ctx);

/** Copies the facts of the context's device into \p info. */
OCAL_API ocal_status ocal_context_get_device_info(ocal_context ctx, ocal_device_info *info);

/** Reports whether the context can use double precision (f64 and c64 buffers): the device
 * has cl_khr_fp64 and the fp64 option did not turn it off. \param has_fp64 receives 0 or 1. */
OCAL_API ocal_status ocal_context_get_fp64(ocal_context ctx, int *has_fp64);

/** Reads the counters of the context's kernel caches. */
OCAL_API ocal_status ocal_context_get_cache_stats(ocal_context ctx, ocal_cache_stats *stats);

/** The directory of the disk cache in use. \param dir receives a string owned by the
 * context, or NULL when the disk cache is off. */
OCAL_API ocal_status ocal_context_get_cache_dir(ocal_context ctx, const char **dir);

/** Escape hatches, to mix your own OpenCL with ocal. The handles stay owned by the context:
 * retain them (clRetainContext etc.) to keep them beyond ocal_context_release. */
OCAL_API ocal_status ocal_context_get_cl_context(ocal_context ctx, cl_context *out);
OCAL_API ocal_status ocal_context_get_cl_device(ocal_context ctx, cl_device_id *out);
OCAL_API ocal_status ocal_context_get_cl_queue(ocal_context ctx, cl_command_queue *out);

#ifdef __cplusplus
}
#endif

#endif /* OCAL_CONTEXT_H */
