/* ocal — typed device buffers and the transfers between them and the host.
 *
 * A buffer holds numel elements of one ocal_dtype on the context's device, with a row-major
 * shape of 1 to OCAL_MAX_DIMS dimensions. A dimension may be 0 (an empty buffer, as in
 * NumPy); a shape whose byte size overflows size_t is an error. For a scalar use shape {1}.
 *
 * All commands go to the context's in-order queue. Transfers block unless the caller asks
 * for an event: then they return at once, and the host memory must stay valid and untouched
 * until the event has completed (ocal_event_wait). ocal/memory.h adds transfers on separate
 * queues that overlap with kernels, and pinned host memory. */
#ifndef OCAL_BUFFER_H
#define OCAL_BUFFER_H

#include <stddef.h>

#include "ocal/cl.h"
#include "ocal/context.h"
#include "ocal/event.h"
#include "ocal/export.h"
#include "ocal/status.h"
#include "ocal/types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OCAL_MAX_DIMS 4

/** Opaque handle to a device buffer or a view of one. Freed by ocal_buffer_release. */
typedef struct ocal_buffer_s *ocal_buffer;

/** Creates a buffer with uninitialised contents.
 * \param ctx the context.
 * \param dtype element type; OCAL_F64 and OCAL_C64 need a context with fp64.
 * \param ndim number of dimensions, 1 to OCAL_MAX_DIMS.
 * \param shape ndim sizes, row-major (last dimension contiguous).
 * \param buf receives the buffer; NULL on failure.
 * \returns OCAL_OK; OCAL_INVALID_ARGUMENT, OCAL_OVERFLOW, OCAL_UNSUPPORTED (fp64),
 *          OCAL_OUT_OF_DEVICE_MEMORY (larger than the device allows). */
OCAL_API ocal_status ocal_buffer_create(ocal_context ctx, ocal_dtype dtype, int ndim,
                                        const size_t *shape, ocal_buffer *buf);

/** Creates a buffer whose elements are all zero (a device-side fill; does not block). */
OCAL_API ocal_status ocal_buffer_zeros(ocal_context ctx, ocal_dtype dtype, int ndim,
                                       const size_t *shape, ocal_buffer *buf);

/** Creates a buffer and copies numel elements from \p host into it (blocking).
 * \param host numel elements of dtype; may be NULL only when numel is 0. */
OCAL_API ocal_status ocal_buffer_from_host(ocal_context ctx, ocal_dtype dtype, int ndim,
                                           const size_t *shape, const void *host,
                                           ocal_buffer *buf);

/** Releases a buffer or view. The device memory is freed once no view of it remains and the
 * commands queued on it have finished. NULL is accepted (no-op). */
OCAL_API ocal_status ocal_buffer_release(ocal_buffer buf);

/** Creates a view: \p ndim / \p shape over the elements [offset, offset + numel(shape)) of
 * \p buf, sharing its memory. A view keeps its base's memory alive; release it like a buffer.
 * \param offset first element, counted in elements of buf's dtype.
 * \returns OCAL_OK; OCAL_SHAPE_MISMATCH when the range does not fit inside buf. */
OCAL_API ocal_status ocal_buffer_view(ocal_buffer buf, size_t offset, int ndim,
                                      const size_t *shape, ocal_buffer *view);

/** Copies elements [offset, offset + count) of the buffer from host memory.
 * \param src count elements of the buffer's dtype; may be NULL only when count is 0.
 * \param event NULL to block until the copy is done; else the call returns at once and
 *        *event receives an event to wait on and release. src must stay valid until then.
 * \returns OCAL_OK; OCAL_SHAPE_MISMATCH when the range does not fit in the buffer. */
OCAL_API ocal_status ocal_buffer_write(ocal_buffer buf, size_t offset, size_t count,
                                       const void *src, ocal_event *event);

/** Copies elements [offset, offset + count) of the buffer into host memory.
 * \param dst room for count elements; may be NULL only when count is 0.
 * \param event NULL to block; else as for ocal_buffer_write, dst is filled once the event
 *        has completed. */
OCAL_API ocal_status ocal_buffer_read(ocal_buffer buf, size_t offset, size_t count, void *dst,
                                      ocal_event *event);

/** Copies all elements of \p src into \p dst on the device (does not block). Both must have
 * the same dtype and the same number of elements (shapes may differ); they may be views of
 * one buffer only if their ranges do not overlap. */
OCAL_API ocal_status ocal_buffer_copy(ocal_buffer src, ocal_buffer dst);

/** Sets every element to \p value (a device kernel; does not block).
 * \param value points to one element of the buffer's dtype (a float for f32, two floats for
 *        c32, ...); it is read before the call returns. */
OCAL_API ocal_status ocal_buffer_fill(ocal_buffer buf, const void *value);

/** Facts of a buffer. Each takes a valid buffer and a non-NULL out pointer. */
OCAL_API ocal_status ocal_buffer_get_dtype(ocal_buffer buf, ocal_dtype *dtype);
OCAL_API ocal_status ocal_buffer_get_shape(ocal_buffer buf, int *ndim, size_t shape[OCAL_MAX_DIMS]);
OCAL_API ocal_status ocal_buffer_get_numel(ocal_buffer buf, size_t *numel);
OCAL_API ocal_status ocal_buffer_get_nbytes(ocal_buffer buf, size_t *nbytes);
OCAL_API ocal_status ocal_buffer_get_context(ocal_buffer buf, ocal_context *ctx);

/** Escape hatch: the cl_mem that holds the buffer and the byte offset of its first element
 * in it (non-zero for views). The cl_mem stays owned by ocal and may be larger than the
 * buffer (the memory pool rounds sizes up, see ocal/memory.h); *mem is NULL for an empty
 * buffer, which has no device memory.
 * \param buf the buffer.
 * \param mem receives the cl_mem (not NULL).
 * \param offset_bytes receives the byte offset; may be NULL when it is not wanted.
 * \returns OCAL_OK; OCAL_INVALID_HANDLE or OCAL_INVALID_ARGUMENT for bad arguments. */
OCAL_API ocal_status ocal_buffer_get_cl_mem(ocal_buffer buf, cl_mem *mem, size_t *offset_bytes);

#ifdef __cplusplus
}
#endif

#endif /* OCAL_BUFFER_H */
