/** \file
 * ocal — contexts: one device, its in-order queue, and the caches of compiled kernels.
 *
 * Every ocal object is created within a context and holds a reference to it: an object stays
 * usable after the context's release, and the context goes with the last of them. Release
 * each handle once: a release may free the handle, and a later call with it (a second release
 * included) then reads freed memory. A context may be used from several threads: its kernel
 * caches are locked, and its queue is in order, so commands run in the order the calls were
 * made. */
#ifndef OCAL_CONTEXT_H
#define OCAL_CONTEXT_H

#include <stddef.h>
#include <stdint.h>

#include "ocal/cl.h"
#include "ocal/device.h"
#include "ocal/event.h"
#include "ocal/export.h"
#include "ocal/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Opaque handle to a context. Created by ocal_context_create, freed by ocal_context_release. */
typedef struct ocal_context_s *ocal_context;

/** The arithmetic of f32 GEMMs on a context (ocal_context_options.gemm_precision,
 * OCAL_GEMM_PRECISION), like PyTorch's torch.backends.cuda.matmul.allow_tf32. */
typedef enum ocal_gemm_precision {
  OCAL_GEMM_PRECISION_DEFAULT = -1, /**< OCAL_GEMM_PRECISION, else fp32 */
  OCAL_GEMM_PRECISION_FP32 = 0,     /**< exact IEEE single precision (the default) */
  OCAL_GEMM_PRECISION_TF32 = 1      /**< f32 products may reduce A and B to TF32 (10-bit
                                         mantissa: rounded to nearest, ties away, by the
                                         mma.sync kernel; truncated by the tensor cores in
                                         the wgmma kernel of compute capability 9.0) and run
                                         on tensor cores where the device's probe passed;
                                         the sums stay f32 */
} ocal_gemm_precision;

/** Short name of a GEMM precision: "fp32" or "tf32" (the values OCAL_GEMM_PRECISION takes),
 * "default" for OCAL_GEMM_PRECISION_DEFAULT.
 * \param precision any value.
 * \returns a static string; "invalid" for a value that is not an ocal_gemm_precision. */
OCAL_API const char *ocal_gemm_precision_name(ocal_gemm_precision precision);

/** Options for ocal_context_create. Start from ocal_context_options_init(), which sets
 * struct_size: a program compiled against an older, shorter struct keeps working with a newer
 * library (the fields it lacks take their defaults), and the library refuses a struct_size it
 * cannot have been compiled with. */
typedef struct ocal_context_options {
  size_t struct_size;     /**< sizeof(ocal_context_options), set by ocal_context_options_init */
  const char *device;     /**< selector (see ocal/device.h); NULL: OCAL_DEVICE, else default */
  int profiling;          /**< 1: create the queue with CL_QUEUE_PROFILING_ENABLE; 0 not */
  int disk_cache;         /**< 1 on, 0 off, -1 (default): on unless OCAL_CACHE=0 */
  const char *cache_dir;  /**< NULL (default): $OCAL_CACHE_DIR, else $XDG_CACHE_HOME/ocal,
                               else ~/.cache/ocal; created if missing. Best effort: a path
                               that cannot be used (a file, not writable) only means that
                               nothing is stored (`ocal doctor` says why) */
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
  int gemm_precision;     /**< an ocal_gemm_precision: OCAL_GEMM_PRECISION_TF32 lets f32
                               GEMMs use TF32 tensor cores (ocal_gemm_get_precision says
                               whether the device has them); OCAL_GEMM_PRECISION_DEFAULT
                               (-1, the default): $OCAL_GEMM_PRECISION, else fp32. Added in
                               0.3: a struct from 0.2 leaves it at the default */
} ocal_context_options;

/** Counters of the kernel caches of one context.
 * The library fills it; set struct_size = sizeof(ocal_cache_stats) before the call
 * (`ocal_cache_stats x = {.struct_size = sizeof x};`), as for every struct ocal fills:
 * a later version may append fields, and then writes only the ones a program compiled
 * against this struct knows. */
typedef struct ocal_cache_stats {
  size_t struct_size;    /**< sizeof(ocal_cache_stats), set by the caller */
  uint64_t compiles;     /**< programs compiled from source (the compiler ran) */
  uint64_t disk_hits;    /**< programs loaded from the disk cache (the compiler did not run) */
  uint64_t memory_hits;  /**< program requests served from the context's memory cache */
  uint64_t disk_rejects; /**< disk cache files ignored as corrupt, truncated or foreign */
} ocal_cache_stats;

/** Fills \p options with the defaults and sets its struct_size.
 * \param options the options to fill.
 * \returns OCAL_OK, or OCAL_INVALID_ARGUMENT when options is NULL. */
OCAL_API ocal_status ocal_context_options_init(ocal_context_options *options);

/** Creates a context on the selected device.
 * \param options NULL for the defaults; else start from ocal_context_options_init(). Read
 *        only during the call.
 * \param ctx receives the new context, owned by the caller (ocal_context_release); set to
 *        NULL on failure.
 * \returns OCAL_OK; OCAL_INVALID_ARGUMENT for a NULL ctx, a bad struct_size or a bad option
 *          (a switch other than 1, 0 or -1, a limit below -1, an unknown gemm_precision);
 *          OCAL_NO_DEVICE / OCAL_DEVICE_NOT_FOUND when no device fits; an OpenCL error when
 *          the driver refuses to create the context or queue. */
OCAL_API ocal_status ocal_context_create(const ocal_context_options *options, ocal_context *ctx);

/** Creates a context over OpenCL objects the caller made (another library's context,
 * PyOpenCL's), so that ocal's buffers and calls share its memory and queue. ocal retains the
 * cl_context and the queue (clRetainContext, clRetainCommandQueue) and releases them in
 * ocal_context_release; the caller keeps its own references. Everything else is as for
 * ocal_context_create: settings, caches and the memory pool are the new context's own.
 * \param cl_ctx the OpenCL context; it must hold \p device.
 * \param device the device ocal runs on: a root device the ICD loader lists.
 * \param queue an in-order command queue of cl_ctx and device, which ocal's commands then
 *        join (in order with the caller's own); NULL: ocal creates its own queue.
 * \param options NULL for the defaults; else from ocal_context_options_init(), with device
 *        NULL (the device is the one given). Read only during the call.
 * \param ctx receives the new context, owned by the caller (ocal_context_release); NULL on
 *        failure.
 * \returns OCAL_OK; OCAL_INVALID_ARGUMENT for a NULL cl_ctx, device or ctx, options->device
 *          set, a device the loader does not list, or a queue of another context or device,
 *          or one that runs out of order; an OpenCL error when a query or retain fails. */
OCAL_API ocal_status ocal_context_from_cl(cl_context cl_ctx, cl_device_id device,
                                          cl_command_queue queue,
                                          const ocal_context_options *options,
                                          ocal_context *ctx);

/** Releases the caller's context handle. Buffers, plans, programs, kernels and generators
 * made from it hold their own references and stay usable; once the last of them is released
 * too, the context waits for its queued work and frees its queue and caches. Do not use the
 * handle again: a second release is refused while those objects keep the context alive.
 * \param ctx the context, or NULL (nothing happens).
 * \returns OCAL_OK; OCAL_INVALID_HANDLE for a handle that is not a live context. */
OCAL_API ocal_status ocal_context_release(ocal_context ctx);

/* ---- ordering: the host and the context's queues ----------------------------------------
 * ocal_context_finish blocks the host; the two enqueue calls never do: they order the
 * context's main queue against events of its transfer queues (ocal/memory.h). */

/** Blocks until every command queued on the context has finished: its main queue's and its
 * transfer queues' (ocal_transfer_write, ocal_transfer_read; a transfer that waits for a
 * user event not yet set keeps it waiting).
 * \param ctx the context.
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; an OpenCL error when the implementation's clFinish
 *          reports one. A command that failed (one waiting for a user event set to an
 *          error, for one) may finish without that: its own event says so (ocal_event_wait),
 *          as PoCL's clFinish returns success for it. */
OCAL_API ocal_status ocal_context_finish(ocal_context ctx);

/** Makes the commands queued on the context's main queue after this call wait until the
 * events have completed (the host does not block).
 * \param ctx the context.
 * \param num_events number of events; 0 is a no-op.
 * \param events the events (from any queue of this context); may be NULL when num_events is
 *        0. They stay the caller's.
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_INVALID_ARGUMENT (events NULL, or an event of
 *          another context); an OpenCL error. */
OCAL_API ocal_status ocal_context_enqueue_wait(ocal_context ctx, size_t num_events,
                                               const ocal_event *events);

/** Gives an event that completes once every command queued on the context's main queue so
 * far has finished (the host does not block).
 * \param ctx the context.
 * \param event receives the event, owned by the caller (ocal_event_release).
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_INVALID_ARGUMENT; an OpenCL error. */
OCAL_API ocal_status ocal_context_enqueue_marker(ocal_context ctx, ocal_event *event);

/* ---- facts of a context ------------------------------------------------------------------ */

/** Copies the facts of the context's device.
 * \param ctx the context.
 * \param info receives the facts; set its struct_size first.
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_INVALID_ARGUMENT when info is NULL or
 *          info->struct_size is not one this library knows (nothing is written then). */
OCAL_API ocal_status ocal_context_get_device_info(ocal_context ctx, ocal_device_info *info);

/** Reports whether the context can use double precision (f64 and c64 buffers): the device
 * has cl_khr_fp64 and the fp64 option did not turn it off.
 * \param ctx the context.
 * \param has_fp64 receives 0 or 1.
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_INVALID_ARGUMENT when has_fp64 is NULL. */
OCAL_API ocal_status ocal_context_get_fp64(ocal_context ctx, int *has_fp64);

/** Reads the counters of the context's kernel caches.
 * \param ctx the context.
 * \param stats receives the counters; set its struct_size first.
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_INVALID_ARGUMENT when stats is NULL or
 *          stats->struct_size is not one this library knows (nothing is written then). */
OCAL_API ocal_status ocal_context_get_cache_stats(ocal_context ctx, ocal_cache_stats *stats);

/** The directory of the disk cache in use.
 * \param ctx the context.
 * \param dir receives a string owned by the context (valid until it is released), or NULL
 *        when the disk cache is off.
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_INVALID_ARGUMENT when dir is NULL. */
OCAL_API ocal_status ocal_context_get_cache_dir(ocal_context ctx, const char **dir);

/* Escape hatches, to mix your own OpenCL with ocal. The handles stay owned by the context:
 * retain them (clRetainContext etc.) to keep them beyond ocal_context_release. */

/** The OpenCL context behind an ocal context.
 * \param ctx the context.
 * \param out receives the cl_context (owned by ctx).
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_INVALID_ARGUMENT when out is NULL. */
OCAL_API ocal_status ocal_context_get_cl_context(ocal_context ctx, cl_context *out);

/** The OpenCL device of an ocal context.
 * \param ctx the context.
 * \param out receives the cl_device_id.
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_INVALID_ARGUMENT when out is NULL. */
OCAL_API ocal_status ocal_context_get_cl_device(ocal_context ctx, cl_device_id *out);

/** The context's main (in-order) command queue.
 * \param ctx the context.
 * \param out receives the cl_command_queue (owned by ctx).
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_INVALID_ARGUMENT when out is NULL. */
OCAL_API ocal_status ocal_context_get_cl_queue(ocal_context ctx, cl_command_queue *out);

/** Reads one OCAL_* environment variable through the library's settings table, validated as
 * ocal_context_create validates it, for code beside the library that has settings of its own
 * in the table (libocal-mpi's OCAL_MPI_*).
 * \param name the variable, one of README.md's Settings table.
 * \param value receives a flag (-1 unset or auto, 0, 1), word (its value), byte count (-1
 *        unset) or integer (0 unset) setting; may be NULL for a text setting.
 * \param text receives a text or key=value setting ("" unset); may be NULL otherwise.
 * \param text_size capacity of text in bytes.
 * \returns OCAL_OK; OCAL_INVALID_ARGUMENT for a value the table does not accept (the message
 *          names the variable, the value and what is accepted), a name it does not know, a
 *          NULL out-parameter of the setting's kind or a text that does not fit. */
OCAL_API ocal_status ocal_setting_get(const char *name, long long *value, char *text,
                                      size_t text_size);

#ifdef __cplusplus
}
#endif

#endif /* OCAL_CONTEXT_H */
