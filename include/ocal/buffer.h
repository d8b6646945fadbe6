/** \file
 * ocal — typed device buffers and the transfers between them and the host.
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

/** The most dimensions a buffer has. */
#define OCAL_MAX_DIMS 4

/** Opaque handle to a device buffer or a view of one. Freed by ocal_buffer_release. */
typedef struct ocal_buffer_s *ocal_buffer;

/** Creates a buffer with uninitialised contents.
 * \param ctx the context.
 * \param dtype element type; OCAL_F64 and OCAL_C64 need a context with fp64.
 * \param ndim number of dimensions, 1 to OCAL_MAX_DIMS.
 * \param shape ndim sizes, row-major (last dimension contiguous).
 * \param buf receives the buffer, owned by the caller (ocal_buffer_release); NULL on failure.
 * \returns OCAL_OK; OCAL_INVALID_ARGUMENT, OCAL_OVERFLOW, OCAL_UNSUPPORTED (fp64),
 *          OCAL_OUT_OF_DEVICE_MEMORY (larger than the device allows). */
OCAL_API ocal_status ocal_buffer_create(ocal_context ctx, ocal_dtype dtype, int ndim,
                                        const size_t *shape, ocal_buffer *buf);

/** Creates a buffer whose elements are all zero (a device-side fill; does not block).
 * \param ctx the context.
 * \param dtype element type.
 * \param ndim number of dimensions, 1 to OCAL_MAX_DIMS.
 * \param shape ndim sizes.
 * \param buf receives the buffer, owned by the caller; NULL on failure.
 * \returns as ocal_buffer_create. */
OCAL_API ocal_status ocal_buffer_zeros(ocal_context ctx, ocal_dtype dtype, int ndim,
                                       const size_t *shape, ocal_buffer *buf);

/** Creates a buffer and copies numel elements from \p host into it (blocking).
 * \param ctx the context.
 * \param dtype element type.
 * \param ndim number of dimensions, 1 to OCAL_MAX_DIMS.
 * \param shape ndim sizes.
 * \param host numel elements of dtype (read, not kept); may be NULL only when numel is 0.
 * \param buf receives the buffer, owned by the caller; NULL on failure.
 * \returns as ocal_buffer_create; an OpenCL error when the copy fails. */
OCAL_API ocal_status ocal_buffer_from_host(ocal_context ctx, ocal_dtype dtype, int ndim,
                                           const size_t *shape, const void *host,
                                           ocal_buffer *buf);

/** Wraps memory the caller allocated (a cl_mem of another library, PyOpenCL's) as a buffer,
 * without a copy: \p ndim / \p shape elements of \p dtype from byte \p offset_bytes on.
 * ocal retains the cl_mem (clRetainMemObject) and releases it when the buffer and its views
 * are gone; the memory pool never holds it, so ocal_memory_get_stats does not count it.
 * Writes through either side are seen by the other once ordered (one queue, or
 * ocal_context_finish / clFinish between them).
 *
 * The cl_mem must let kernels both read and write it (CL_MEM_READ_WRITE, OpenCL's default):
 * any ocal call may write a buffer from a kernel, and OpenCL leaves a kernel's write to a
 * CL_MEM_READ_ONLY cl_mem (or read of a CL_MEM_WRITE_ONLY one) undefined, so those two flags
 * are refused here. Flags that limit only the host's access (CL_MEM_HOST_READ_ONLY,
 * CL_MEM_HOST_WRITE_ONLY, CL_MEM_HOST_NO_ACCESS) are taken as they are: OpenCL has the
 * driver refuse the host reads and writes they forbid, and ocal_buffer_read or
 * ocal_buffer_write then returns OCAL_OPENCL_ERROR, naming CL_INVALID_OPERATION.
 * \param ctx the context; the cl_mem must belong to its OpenCL context (ocal_context_from_cl
 *        adopts the caller's).
 * \param mem the memory object.
 * \param offset_bytes where the first element starts, a multiple of the element size.
 * \param dtype element type.
 * \param ndim number of dimensions, 1 to OCAL_MAX_DIMS.
 * \param shape ndim sizes; the elements must fit in the cl_mem after offset_bytes.
 * \param buf receives the buffer, owned by the caller (ocal_buffer_release); NULL on failure.
 * \returns OCAL_OK; OCAL_INVALID_ARGUMENT (NULL mem or buf, an offset that is not a multiple
 *          of the element size, a cl_mem of another OpenCL context, a cl_mem created with
 *          CL_MEM_READ_ONLY or CL_MEM_WRITE_ONLY); OCAL_SHAPE_MISMATCH when the elements do
 *          not fit; OCAL_INVALID_HANDLE; OCAL_UNSUPPORTED (fp64); an OpenCL error when the
 *          cl_mem cannot be queried. */
OCAL_API ocal_status ocal_buffer_from_cl_mem(ocal_context ctx, cl_mem mem, size_t offset_bytes,
                                             ocal_dtype dtype, int ndim, const size_t *shape,
                                             ocal_buffer *buf);

/** Releases a buffer or view. The device memory is freed once no view of it remains and the
 * commands queued on it have finished.
 * \param buf the buffer, or NULL (nothing happens).
 * \returns OCAL_OK; OCAL_INVALID_HANDLE for a handle that is not a live buffer. */
OCAL_API ocal_status ocal_buffer_release(ocal_buffer buf);

/** Creates a view: \p ndim / \p shape over the elements [offset, offset + numel(shape)) of
 * \p buf, sharing its memory. A view keeps its base's memory alive; release it like a buffer.
 * \param buf the buffer (or view) to look into.
 * \param offset first element, counted in elements of buf's dtype.
 * \param ndim number of dimensions of the view, 1 to OCAL_MAX_DIMS.
 * \param shape ndim sizes.
 * \param view receives the view, owned by the caller (ocal_buffer_release).
 * \returns OCAL_OK; OCAL_SHAPE_MISMATCH when the range does not fit inside buf;
 *          OCAL_OVERFLOW when the shape's element count overflows size_t;
 *          OCAL_INVALID_HANDLE; OCAL_INVALID_ARGUMENT. */
OCAL_API ocal_status ocal_buffer_view(ocal_buffer buf, size_t offset, int ndim,
                                      const size_t *shape, ocal_buffer *view);

/** Copies elements [offset, offset + count) of the buffer from host memory.
 * \param buf the buffer (or view).
 * \param offset first element.
 * \param count number of elements.
 * \param src count elements of the buffer's dtype; may be NULL only when count is 0.
 * \param event NULL to block until the copy is done; else the call returns at once and
 *        *event receives an event to wait on and release. src must stay valid until then.
 * \returns OCAL_OK; OCAL_SHAPE_MISMATCH when the range does not fit in the buffer;
 *          OCAL_INVALID_HANDLE; OCAL_INVALID_ARGUMENT; an OpenCL error. */
OCAL_API ocal_status ocal_buffer_write(ocal_buffer buf, size_t offset, size_t count,
                                       const void *src, ocal_event *event);

/** Copies elements [offset, offset + count) of the buffer into host memory.
 * \param buf the buffer (or view).
 * \param offset first element.
 * \param count number of elements.
 * \param dst room for count elements; may be NULL only when count is 0.
 * \param event NULL to block; else as for ocal_buffer_write, dst is filled once the event
 *        has completed.
 * \returns as ocal_buffer_write. */
OCAL_API ocal_status ocal_buffer_read(ocal_buffer buf, size_t offset, size_t count, void *dst,
                                      ocal_event *event);

/** Copies all elements of \p src into \p dst on the device (does not block). Both must have
 * the same dtype and the same number of elements (shapes may differ); they may be views of
 * one buffer only if their ranges do not overlap, or are the same elements (src == dst:
 * nothing to move, OCAL_OK). On GPUs an ocal kernel moves whole 4-byte words, elsewhere the
 * driver's clEnqueueCopyBuffer (OCAL_COPY chooses otherwise).
 * \param src the buffer to read.
 * \param dst the buffer to write.
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_TYPE_MISMATCH; OCAL_SHAPE_MISMATCH;
 *          OCAL_INVALID_ARGUMENT (other contexts, overlap); an OpenCL error when the driver
 *          refuses the copy. */
OCAL_API ocal_status ocal_buffer_copy(ocal_buffer src, ocal_buffer dst);

/** Sets every element to \p value (a device kernel; does not block).
 * \param buf the buffer (or view).
 * \param value points to one element of the buffer's dtype (a float for f32, two floats for
 *        c32, a uint16_t bit pattern for f16 and bf16, ...); it is read before the call
 *        returns.
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_INVALID_ARGUMENT. */
OCAL_API ocal_status ocal_buffer_fill(ocal_buffer buf, const void *value);

/** The element type of a buffer.
 * \param buf the buffer.
 * \param dtype receives the type.
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_INVALID_ARGUMENT when dtype is NULL. */
OCAL_API ocal_status ocal_buffer_get_dtype(ocal_buffer buf, ocal_dtype *dtype);

/** The shape of a buffer.
 * \param buf the buffer.
 * \param ndim receives the number of dimensions.
 * \param shape receives ndim sizes (room for OCAL_MAX_DIMS).
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_INVALID_ARGUMENT for a NULL out pointer. */
OCAL_API ocal_status ocal_buffer_get_shape(ocal_buffer buf, int *ndim,
                                           size_t shape[OCAL_MAX_DIMS]);

/** The number of elements of a buffer.
 * \param buf the buffer.
 * \param numel receives the product of its shape.
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_INVALID_ARGUMENT when numel is NULL. */
OCAL_API ocal_status ocal_buffer_get_numel(ocal_buffer buf, size_t *numel);

/** The size of a buffer's elements in bytes.
 * \param buf the buffer.
 * \param nbytes receives numel times the element size.
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_INVALID_ARGUMENT when nbytes is NULL. */
OCAL_API ocal_status ocal_buffer_get_nbytes(ocal_buffer buf, size_t *nbytes);

/** The context of a buffer.
 * \param buf the buffer.
 * \param ctx receives the context (not a new reference).
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_INVALID_ARGUMENT when ctx is NULL. */
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
