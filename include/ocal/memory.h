/** \file
 * ocal — memory: the caching device allocator, pinned host memory, and transfers that
 * overlap with computation.
 *
 * Device pool. Every buffer's device memory comes from a per-context pool. A released buffer's
 * memory is kept (cached) and handed to a later buffer of a fitting size instead of going back
 * to the driver, so a loop that creates and releases the same sizes costs almost nothing after
 * its first pass. Sizes are rounded up to a size class (at most 25% more than asked, at least
 * 512 bytes). Memory is never handed out again while a queued command may still use it: the
 * context's main queue runs in order, so a later command on it always runs after the earlier
 * owner's; commands on the transfer queue (below) are made to wait when they need to. If you
 * enqueue commands of your own on a buffer's cl_mem on another queue, finish them before you
 * release the buffer. When an allocation fails for lack of memory, the pool frees its cached
 * blocks and tries once more. OCAL_POOL=0 (or the context option pool = 0) turns pooling off,
 * for tools that track allocations; OCAL_POOL_LIMIT / pool_limit bounds the cached bytes;
 * OCAL_MEMORY_LIMIT / memory_limit bounds everything the context holds.
 *
 * Pinned host memory. ocal_pinned_alloc returns page-locked host memory (an OpenCL buffer
 * created with CL_MEM_ALLOC_HOST_PTR and mapped, the portable way). ocal_buffer_write and
 * ocal_buffer_read move data from and to it at the bus's speed; pass any pointer inside it.
 *
 * Staging. Blocking writes and reads of ordinary (pageable) host memory of 16 MiB or more go
 * through small pinned staging buffers: several host threads (half the processors, at most 8)
 * each copy 1 MiB chunks of their part while their previous chunk crosses the bus. Where this
 * is faster is decided per device: on by default for discrete GPUs (several times the driver's pageable
 * path: docs/benchmarks.md), off for
 * CPU devices, whose memory is host memory anyway. OCAL_STAGING=0/1 or the staging option
 * override it; OCAL_STAGING_MIN (bytes), OCAL_STAGING_CHUNK (bytes) and OCAL_STAGING_THREADS
 * tune it.
 *
 * Overlap. ocal_transfer_write / ocal_transfer_read run on transfer queues of the context (one
 * in-order queue for writes, one for reads, so uploads and downloads need not wait for each
 * other and can use both copy engines of a GPU), so they proceed while kernels run on the
 * main queue.
 * Events (ocal/event.h) order the two: a transfer waits for the events you pass it,
 * ocal_context_enqueue_wait makes later main-queue commands (kernels) wait for events, and
 * ocal_context_enqueue_marker gives an event that completes when everything queued on the
 * main queue so far has finished (both in ocal/context.h).
 *
 *   ocal_transfer_write(in, 0, n, host_in, 0, NULL, &written);  // transfer queue
 *   ocal_context_enqueue_wait(ctx, 1, &written);                 // kernels wait for it
 *   ocal_unary(OCAL_UNARY_SQRT, in, out);                        // main queue
 *   ocal_context_enqueue_marker(ctx, &computed);
 *   ocal_transfer_read(out, 0, n, host_out, 1, &computed, &read);
 *   ocal_event_wait(read);
 */
#ifndef OCAL_MEMORY_H
#define OCAL_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include "ocal/buffer.h"
#include "ocal/cl.h"
#include "ocal/context.h"
#include "ocal/export.h"
#include "ocal/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Counters of a context's device memory. Bytes are counted in allocated (rounded) sizes.
 * The library fills it; set struct_size = sizeof(ocal_memory_stats) before the call
 * (`ocal_memory_stats x = {.struct_size = sizeof x};`), as for every struct ocal fills:
 * a later version may append fields, and then writes only the ones a program compiled
 * against this struct knows. */
typedef struct ocal_memory_stats {
  size_t struct_size;            /**< sizeof(ocal_memory_stats), set by the caller */
  int pool_enabled;              /**< 1 when the context pools device memory */
  uint64_t bytes_in_use;         /**< held by live buffers (and ocal's own scratch memory) */
  uint64_t bytes_cached;         /**< freed, kept by the pool for reuse */
  uint64_t peak_bytes_in_use;    /**< highest bytes_in_use so far */
  uint64_t peak_bytes_reserved;  /**< highest bytes_in_use + bytes_cached so far */
  uint64_t device_allocs;        /**< allocations that reached the driver (clCreateBuffer) */
  uint64_t device_frees;         /**< memory given back to the driver (clReleaseMemObject) */
  uint64_t hits;                 /**< requests served from the cache */
  uint64_t misses;               /**< requests that needed a new allocation */
  uint64_t oom_retries;          /**< allocations retried after freeing the cache */
  uint64_t pool_limit;           /**< most bytes the pool keeps cached */
  uint64_t memory_limit;         /**< most bytes in use and cached together */
} ocal_memory_stats;

/** Reads the counters of the context's device memory.
 * \param ctx the context.
 * \param stats receives the counters; set its struct_size first.
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_INVALID_ARGUMENT when stats is NULL or
 *          stats->struct_size is not one this library knows (nothing is written then). */
OCAL_API ocal_status ocal_memory_get_stats(ocal_context ctx, ocal_memory_stats *stats);

/** Gives every cached block back to the driver (memory of live buffers stays). Safe while
 * commands are queued: OpenCL frees the memory once they have finished.
 * \param ctx the context.
 * \returns OCAL_OK; OCAL_INVALID_HANDLE. */
OCAL_API ocal_status ocal_memory_trim(ocal_context ctx);

/** Changes the most bytes the pool keeps cached; cached blocks beyond it are freed now.
 * \param ctx the context.
 * \param bytes the new limit; 0 caches nothing (each release frees at once).
 * \returns OCAL_OK; OCAL_INVALID_HANDLE. */
OCAL_API ocal_status ocal_memory_set_pool_limit(ocal_context ctx, uint64_t bytes);

/** Allocates pinned (page-locked) host memory, mapped for the host to read and write.
 * It keeps the context alive until freed.
 * \param ctx the context whose transfers will use it.
 * \param bytes how many bytes; more than 0.
 * \param ptr receives the host address; NULL on failure.
 * \returns OCAL_OK; OCAL_INVALID_HANDLE for a bad ctx; OCAL_INVALID_ARGUMENT (a NULL ptr,
 *          bytes 0); OCAL_OUT_OF_HOST_MEMORY or an OpenCL error when the driver cannot pin
 *          that much. */
OCAL_API ocal_status ocal_pinned_alloc(ocal_context ctx, size_t bytes, void **ptr);

/** Frees memory from ocal_pinned_alloc. Transfers that use it must have finished.
 * \param ctx the context it was allocated in.
 * \param ptr the address ocal_pinned_alloc returned; NULL is accepted (no-op).
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_INVALID_ARGUMENT when ptr is not such an
 *          address of this context (or was freed already). */
OCAL_API ocal_status ocal_pinned_free(ocal_context ctx, void *ptr);

/** Tells whether \p ptr lies inside pinned memory of the context, and where.
 * \param ctx the context.
 * \param ptr any host address.
 * \param pinned receives 1 when ptr is pinned memory of ctx, else 0.
 * \param mem receives the OpenCL buffer behind the pinned block, or NULL when ptr is not
 *        pinned memory of ctx (an escape hatch: the cl_mem stays owned by ocal); may be NULL.
 * \param offset receives ptr's byte offset in that buffer; may be NULL.
 * \returns OCAL_OK; OCAL_INVALID_HANDLE for a bad ctx; OCAL_INVALID_ARGUMENT when pinned is
 *          NULL. */
OCAL_API ocal_status ocal_pinned_query(ocal_context ctx, const void *ptr, int *pinned,
                                       cl_mem *mem, size_t *offset);

/** Copies elements [offset, offset + count) of \p buf from host memory on the transfer queue,
 * without blocking. It starts once the events in \p wait have completed; it is not ordered
 * against the main queue otherwise (use ocal_context_enqueue_marker for that).
 * \param buf the buffer (or view).
 * \param offset first element.
 * \param count number of elements.
 * \param src count elements; must stay valid and unchanged until *event has completed.
 * \param num_wait number of events in \p wait.
 * \param wait events of the buffer's context to wait for; may be NULL when num_wait is 0.
 * \param event receives an event that completes with the copy; release it. Not one of
 *        \p wait's elements: the events you wait for stay yours to release.
 * \returns OCAL_OK; OCAL_SHAPE_MISMATCH when the range does not fit in the buffer;
 *          OCAL_INVALID_HANDLE for a bad buffer or a NULL event in \p wait;
 *          OCAL_INVALID_ARGUMENT (a NULL event out-parameter, an event out-parameter that
 *          points into \p wait, a NULL src for a count above 0, a NULL wait with num_wait
 *          above 0, an event of another context in \p wait); an OpenCL error. */
OCAL_API ocal_status ocal_transfer_write(ocal_buffer buf, size_t offset, size_t count,
                                         const void *src, size_t num_wait,
                                         const ocal_event *wait, ocal_event *event);

/** Copies elements [offset, offset + count) of \p buf into host memory on the transfer
 * queue, without blocking; as ocal_transfer_write, with \p dst filled once *event has
 * completed.
 * \param buf the buffer (or view).
 * \param offset first element.
 * \param count number of elements.
 * \param dst room for count elements; must stay valid until *event has completed.
 * \param num_wait number of events in \p wait.
 * \param wait events to wait for; may be NULL when num_wait is 0.
 * \param event receives an event that completes with the copy; release it.
 * \returns as ocal_transfer_write. */
OCAL_API ocal_status ocal_transfer_read(ocal_buffer buf, size_t offset, size_t count, void *dst,
                                        size_t num_wait, const ocal_event *wait,
                                        ocal_event *event);

#ifdef __cplusplus
}
#endif

#endif /* OCAL_MEMORY_H */
