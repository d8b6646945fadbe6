/** \file
 * ocal — reductions (sum, prod, min, max, argmin, argmax, mean, variance, standard deviation,
 * L2 norm, dot) and scans (prefix sums and prefix maxima) of device buffers.
 *
 * Every call checks its arguments, enqueues its kernels on the context's in-order queue and
 * returns without waiting (except the *_to_host conveniences, which block). The result goes
 * into a buffer `out` that the caller creates; its shape and element type are checked, and a
 * mismatch is an error whose message names what was expected. `out` must not overlap the
 * input (scans may run in place: out == x, when the types agree).
 *
 * Axes. `axis` picks the dimension to reduce or scan, NumPy style: 0 .. ndim-1, or negative
 * counting from the end (-1 is the last). OCAL_AXIS_ALL means the whole buffer, in row-major
 * order (a reduction then gives one value, a scan runs over the flattened buffer).
 *   - A reduction along an axis needs `out` with x's shape without that axis (a 1-D x gives
 *     shape {1}); x's shape with that axis set to 1 (NumPy's keepdims) is accepted too.
 *     Over OCAL_AXIS_ALL, `out` must have exactly one element (any shape).
 *   - A scan needs `out` with x's shape (over OCAL_AXIS_ALL: the same number of elements).
 *
 * Element types. Inputs: f32, f64 (contexts with fp64), f16, bf16, i32, u32, i64, u64, u8;
 * complex buffers give OCAL_UNSUPPORTED, and scans of f16 and bf16 too. f16 and bf16 are
 * floats here: read as f32, accumulated in f32 (compensated sums), and the result stored in
 * the input's type rounded to nearest even. Results, as NumPy:
 *   - sum, prod, dot, cumsum: floats keep their type; signed integers give i64, unsigned
 *     integers (u8 too) give u64. Integer arithmetic is exact 64-bit two's complement: it
 *     wraps modulo 2^64 only when the true result leaves the 64-bit range.
 *   - min, max (amin, amax), cummax: the input's type.
 *   - argmin, argmax: i64, the index along the axis (over OCAL_AXIS_ALL: the flat index).
 *   - mean, var, std, norm2: floats keep their type; integers give f64 or f32, as `out`
 *     says (f64 needs a context with fp64; it is NumPy's type). Means of i32, u32 and u8
 *     divide their exact integer sum; means of i64 and u64 (whose sums can leave the 64-bit
 *     range) and integer variances and norms are computed in double precision on devices
 *     with fp64, else in single, with compensated sums.
 * ocal_reduce_dtype and ocal_scan_dtype give these types.
 *
 * Accuracy. Float sums, means, dots and norms use compensated (Neumaier) summation in every
 * work-item and in every combination of partial results, and a float dot adds the exact
 * rounding error of every product (fma; Ogita, Rump and Oishi's Dot2): the error does not
 * grow with the length (a float32 sum of 2^24 values of mixed signs and magnitudes stays within 1e-6 of
 * the exact sum, relative). Variances use shifted sums per work-item combined by Chan's
 * formula (no catastrophic cancellation for data with a large mean). norm2 does not rescale:
 * its sum of squares overflows where x*x does (|x| > ~1.8e19 in f32). Float prefix sums
 * accumulate in the element type, as NumPy's cumsum does. The order of operations depends on
 * the device, so float results may differ between devices in the last bits.
 *
 * NaN. A NaN makes sum, prod, mean, var, dot, norm2 and min/max NaN (as NumPy's min, not
 * nanmin); argmin/argmax return the index of the first NaN; cummax is NaN from the first NaN
 * on; infinities behave as in IEEE arithmetic (the sum of 1 and +inf is +inf).
 *
 * Empty reductions (an axis of length 0, or an empty buffer over OCAL_AXIS_ALL): sum, dot
 * and norm2 give 0, prod gives 1, mean gives NaN, var and std give NaN (as NumPy, which
 * also warns); min, max, argmin and argmax have no identity and fail with
 * OCAL_INVALID_ARGUMENT. Variance with ddof >= the number of elements is NaN. */
#ifndef OCAL_REDUCE_H
#define OCAL_REDUCE_H

#include "ocal/buffer.h"
#include "ocal/export.h"
#include "ocal/status.h"
#include "ocal/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The `axis` value that means the whole buffer (NumPy's axis=None). */
#define OCAL_AXIS_ALL (-0x7fffffff - 1)

/** A reduction. */
typedef enum ocal_reduce_op {
  OCAL_REDUCE_SUM,
  OCAL_REDUCE_PROD,
  OCAL_REDUCE_MIN,
  OCAL_REDUCE_MAX,
  OCAL_REDUCE_ARGMIN,
  OCAL_REDUCE_ARGMAX,
  OCAL_REDUCE_MEAN,
  OCAL_REDUCE_VAR,   /**< population variance (ddof 0); ocal_var takes ddof */
  OCAL_REDUCE_STD,   /**< population standard deviation; ocal_std takes ddof */
  OCAL_REDUCE_NORM2, /**< sqrt of the sum of squares */
  OCAL_REDUCE_DOT,   /**< the reduction of ocal_dot: ocal_reduce_dtype and
                          ocal_reduce_op_name take it (the result type and name of a dot
                          product); ocal_reduce and ocal_reduce_to_host refuse it, as it needs
                          two inputs */
  OCAL_REDUCE_OP_COUNT
} ocal_reduce_op;

/** A scan (prefix operation). */
typedef enum ocal_scan_op {
  OCAL_SCAN_SUM,
  OCAL_SCAN_MAX,
  OCAL_SCAN_OP_COUNT
} ocal_scan_op;

/** Short name of a scan ("sum", "max").
 * \param op any value.
 * \returns a static string; "invalid" for a value that is not an ocal_scan_op. */
OCAL_API const char *ocal_scan_op_name(ocal_scan_op op);

/** Short name of a reduction ("sum", "argmax", ...).
 * \param op any value.
 * \returns a static string; "invalid" for a value that is not an ocal_reduce_op. */
OCAL_API const char *ocal_reduce_op_name(ocal_reduce_op op);

/** The result type of a reduction of a \p in buffer (for integer mean, var, std and norm2:
 * f64, NumPy's choice; f32 is accepted as well).
 * \param op the reduction (OCAL_REDUCE_DOT too).
 * \param in the input's element type.
 * \param out receives the result type.
 * \returns OCAL_OK; OCAL_INVALID_ARGUMENT for an unknown op or dtype; OCAL_UNSUPPORTED for
 *          complex types. */
OCAL_API ocal_status ocal_reduce_dtype(ocal_reduce_op op, ocal_dtype in, ocal_dtype *out);

/** Reduces \p x along \p axis into \p out (asynchronous).
 * \param op any ocal_reduce_op but OCAL_REDUCE_DOT; VAR and STD use ddof 0.
 * \param x the input.
 * \param axis an axis of x (negative counts from the end) or OCAL_AXIS_ALL.
 * \param out the result buffer: shape and type as described at the top of this header.
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_INVALID_ARGUMENT (bad op or axis, buffers of
 *          different contexts, min/max/argmin/argmax of nothing); OCAL_SHAPE_MISMATCH and
 *          OCAL_TYPE_MISMATCH for a wrong `out`; OCAL_UNSUPPORTED for complex inputs;
 *          OpenCL errors. */
OCAL_API ocal_status ocal_reduce(ocal_reduce_op op, ocal_buffer x, int axis, ocal_buffer out);

/* Shorthands for ocal_reduce with one op. amin/amax are NumPy's names for the min and max
 * reductions (not the elementwise minimum of two buffers). */

/** Sum: ocal_reduce with OCAL_REDUCE_SUM.
 * \param x the input. \param axis an axis or OCAL_AXIS_ALL. \param out the result.
 * \returns as ocal_reduce. */
OCAL_API ocal_status ocal_sum(ocal_buffer x, int axis, ocal_buffer out);
/** Product: ocal_reduce with OCAL_REDUCE_PROD.
 * \param x the input. \param axis an axis or OCAL_AXIS_ALL. \param out the result.
 * \returns as ocal_reduce. */
OCAL_API ocal_status ocal_prod(ocal_buffer x, int axis, ocal_buffer out);
/** Minimum (NumPy's amin): ocal_reduce with OCAL_REDUCE_MIN.
 * \param x the input. \param axis an axis or OCAL_AXIS_ALL. \param out the result.
 * \returns as ocal_reduce. */
OCAL_API ocal_status ocal_amin(ocal_buffer x, int axis, ocal_buffer out);
/** Maximum (NumPy's amax): ocal_reduce with OCAL_REDUCE_MAX.
 * \param x the input. \param axis an axis or OCAL_AXIS_ALL. \param out the result.
 * \returns as ocal_reduce. */
OCAL_API ocal_status ocal_amax(ocal_buffer x, int axis, ocal_buffer out);
/** Index of the minimum: ocal_reduce with OCAL_REDUCE_ARGMIN.
 * \param x the input. \param axis an axis or OCAL_AXIS_ALL. \param out the result (i64).
 * \returns as ocal_reduce. */
OCAL_API ocal_status ocal_argmin(ocal_buffer x, int axis, ocal_buffer out);
/** Index of the maximum: ocal_reduce with OCAL_REDUCE_ARGMAX.
 * \param x the input. \param axis an axis or OCAL_AXIS_ALL. \param out the result (i64).
 * \returns as ocal_reduce. */
OCAL_API ocal_status ocal_argmax(ocal_buffer x, int axis, ocal_buffer out);
/** Mean: ocal_reduce with OCAL_REDUCE_MEAN.
 * \param x the input. \param axis an axis or OCAL_AXIS_ALL. \param out the result.
 * \returns as ocal_reduce. */
OCAL_API ocal_status ocal_mean(ocal_buffer x, int axis, ocal_buffer out);
/** Euclidean (L2) norm, sqrt of the sum of squares: ocal_reduce with OCAL_REDUCE_NORM2, for
 * every real type (the one norm function: the BLAS ocal_nrm2 of 0.1 is gone).
 * \param x the input. \param axis an axis or OCAL_AXIS_ALL. \param out the result.
 * \returns as ocal_reduce. */
OCAL_API ocal_status ocal_norm2(ocal_buffer x, int axis, ocal_buffer out);

/** Variance: the sum of squared deviations from the mean divided by (n - ddof), n the number
 * of elements reduced. ddof 0 is the population variance (NumPy's default), ddof 1 the
 * unbiased sample variance (R's, pandas'). n <= ddof gives NaN.
 * \param x the input.
 * \param axis an axis or OCAL_AXIS_ALL.
 * \param ddof delta degrees of freedom, >= 0.
 * \param out the result.
 * \returns as ocal_reduce; OCAL_INVALID_ARGUMENT for a negative ddof. */
OCAL_API ocal_status ocal_var(ocal_buffer x, int axis, int ddof, ocal_buffer out);

/** Standard deviation: the square root of ocal_var.
 * \param x the input. \param axis an axis or OCAL_AXIS_ALL. \param ddof as for ocal_var.
 * \param out the result.
 * \returns as ocal_var. */
OCAL_API ocal_status ocal_std(ocal_buffer x, int axis, int ddof, ocal_buffer out);

/** Dot product: the sum of x[i] * y[i] (NumPy's vdot for real data), with ocal's own kernel:
 * every real element type, compensated for floats, exact for integers, along an axis too.
 * It is also the BLAS dot (the one dot function: 0.1's BLAS form is gone): over
 * OCAL_AXIS_ALL, x and y need the same number of elements, whatever their shapes, and the
 * result stays on the device. Along an axis x and y need the same shape (then out[...] is
 * the dot product of matching lines). Same dtype for x and y; result type as for sum
 * (ocal_reduce_dtype with OCAL_REDUCE_DOT).
 * \param x the first input.
 * \param y the second input.
 * \param axis an axis or OCAL_AXIS_ALL.
 * \param out the result.
 * \returns as ocal_reduce. */
OCAL_API ocal_status ocal_dot(ocal_buffer x, ocal_buffer y, int axis, ocal_buffer out);

/** Reduces the whole of \p x and copies the one result to host memory (blocks until done).
 * \param op as for ocal_reduce.
 * \param x the input.
 * \param dtype the type of *result: what ocal_reduce_dtype gives (or f32 for integer mean,
 *        var, std and norm2).
 * \param result room for one element of dtype.
 * \returns as ocal_reduce; OCAL_TYPE_MISMATCH for a dtype that is not the result type. */
OCAL_API ocal_status ocal_reduce_to_host(ocal_reduce_op op, ocal_buffer x, ocal_dtype dtype,
                                         void *result);

/** ocal_dot over the whole buffers, its result copied to host memory (blocks).
 * \param x the first input. \param y the second input.
 * \param dtype the type of *result, as for ocal_reduce_to_host.
 * \param result room for one element of dtype.
 * \returns as ocal_reduce_to_host. */
OCAL_API ocal_status ocal_dot_to_host(ocal_buffer x, ocal_buffer y, ocal_dtype dtype,
                                      void *result);

/** The result type of a scan of a \p in buffer (i64/u64 for integer sums).
 * \param op the scan. \param in the input's element type. \param out receives the type.
 * \returns OCAL_OK; OCAL_INVALID_ARGUMENT for an unknown op or dtype; OCAL_UNSUPPORTED for
 *          complex types. */
OCAL_API ocal_status ocal_scan_dtype(ocal_scan_op op, ocal_dtype in, ocal_dtype *out);

/** Prefix sum or prefix maximum of \p x along \p axis into \p out (asynchronous).
 * \param op the scan.
 * \param x the input.
 * \param axis an axis of x or OCAL_AXIS_ALL.
 * Inclusive: out[i] = x[0] op ... op x[i]. Exclusive: out[i] = x[0] op ... op x[i-1], and
 * out[0] is the identity (0 for sums; for maxima -inf, or the type's lowest value).
 * \param exclusive 0 for an inclusive scan, 1 for an exclusive one.
 * \param out the type of ocal_scan_dtype; x's shape (OCAL_AXIS_ALL: x's number of elements).
 *        out may be x itself when the types agree.
 * \returns as ocal_reduce. */
OCAL_API ocal_status ocal_scan(ocal_scan_op op, ocal_buffer x, int axis, int exclusive,
                               ocal_buffer out);

/** Inclusive prefix sum (NumPy's cumsum): ocal_scan with OCAL_SCAN_SUM.
 * \param x the input. \param axis an axis or OCAL_AXIS_ALL. \param out the result.
 * \returns as ocal_scan. */
OCAL_API ocal_status ocal_cumsum(ocal_buffer x, int axis, ocal_buffer out);
/** Inclusive prefix maximum (NumPy's maximum.accumulate): ocal_scan with OCAL_SCAN_MAX.
 * \param x the input. \param axis an axis or OCAL_AXIS_ALL. \param out the result.
 * \returns as ocal_scan. */
OCAL_API ocal_status ocal_cummax(ocal_buffer x, int axis, ocal_buffer out);

#ifdef __cplusplus
}
#endif

#endif /* OCAL_REDUCE_H */
