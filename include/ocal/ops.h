/** \file
 * ocal — elementwise operations, fills and random numbers on device buffers.
 *
 * Every call checks its arguments, enqueues one kernel on the context's in-order queue and
 * returns without waiting. Element types: f32, f64, f16, bf16, i32, u32, i64, u64, u8 (a
 * complex buffer is refused with OCAL_UNSUPPORTED by every call of this header). Inputs and
 * outputs must belong to one context. f16 and bf16 are floats: computed in f32 (scalars are
 * f32 values) and stored rounded to nearest even; ocal_where moves their bits unchanged.
 *
 * Types. Inputs of a binary operation share one type, and the output has that type too
 * (comparisons write u8 masks of 0 and 1). Unary operations marked "float" below need a
 * floating-point output: their input may be an integer buffer, which is converted (the
 * output's type chooses the precision), but an integer output is an error, never a silent
 * conversion. The one binary "float" operation, atan2, keeps the binary rule: its inputs and
 * output share one floating-point type (OCAL_TYPE_MISMATCH for integers). To change types on
 * purpose, use ocal_cast.
 *
 * Shapes. A unary operation needs an output with as many elements as its input. Binary
 * operations and ocal_where broadcast as NumPy does: shapes (of up to 4 dimensions) are
 * aligned on their last dimension, and each dimension must be equal or 1; the output must
 * have the broadcast shape (a bias row of shape {n} adds to every row of an {m, n} matrix).
 *
 * Aliasing. The output may be one of the inputs (in place), or memory disjoint from them;
 * a partial overlap (two different views of one range) is an error.
 *
 * Scalars are passed as double and converted to the buffers' element type; for an integer
 * type the scalar must be a whole number within the type's range, and for f32, f16 and bf16
 * (computed in f32) a finite scalar must lie within f32's range (an infinity is taken as
 * given), else OCAL_INVALID_ARGUMENT. */
#ifndef OCAL_OPS_H
#define OCAL_OPS_H

#include <stdint.h>

#include "ocal/buffer.h"
#include "ocal/export.h"
#include "ocal/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The unary operations, X(NAME, name, needs a floating-point output). */
#define OCAL_UNARY_OP_MAP(X)                                                              \
  X(NEG, "neg", 0)                /* -x */                                               \
  X(ABS, "abs", 0)                /* |x| */                                              \
  X(SQRT, "sqrt", 1)                                                                     \
  X(RSQRT, "rsqrt", 1)            /* 1 / sqrt(x) */                                      \
  X(EXP, "exp", 1)                                                                       \
  X(LOG, "log", 1)                                                                       \
  X(LOG1P, "log1p", 1)            /* log(1 + x), accurate near 0 */                       \
  X(EXPM1, "expm1", 1)            /* exp(x) - 1, accurate near 0 */                       \
  X(SIN, "sin", 1)                                                                       \
  X(COS, "cos", 1)                                                                       \
  X(TANH, "tanh", 1)                                                                     \
  X(SIGMOID, "sigmoid", 1)        /* 1 / (1 + exp(-x)) */                                \
  X(RELU, "relu", 0)              /* max(x, 0); NaN stays NaN */                         \
  X(GELU, "gelu", 1)              /* x * (1 + erf(x / sqrt 2)) / 2, the exact form */    \
  X(FLOOR, "floor", 0)            /* identity on integers */                             \
  X(CEIL, "ceil", 0)                                                                     \
  X(ROUND, "round", 0)            /* to nearest, halves to even (NumPy's rule) */        \
  X(SIGN, "sign", 0)              /* -1, 0 or 1; NaN stays NaN */                        \
  X(SQUARE, "square", 0)                                                                 \
  X(RECIPROCAL, "reciprocal", 1)  /* 1 / x */

/** A unary operation of ocal_unary: OCAL_UNARY_NEG, ... (one per row of OCAL_UNARY_OP_MAP). */
typedef enum ocal_unary_op {
#define OCAL__UNARY_ENUM(name, lname, fl) OCAL_UNARY_##name,
  OCAL_UNARY_OP_MAP(OCAL__UNARY_ENUM)
#undef OCAL__UNARY_ENUM
  OCAL_UNARY_OP_COUNT
} ocal_unary_op;

/** The binary operations, X(NAME, name, kind): kind 0 arithmetic (any type), 1 float only,
 * 2 comparison (u8 out).
 * Integer division truncates toward zero, as C does (-7 / 2 is -3); floor_divide rounds
 * down and remainder takes the sign of the divisor, as NumPy's floor_divide (//) and
 * remainder (%) do, exactly for every integer type (-7 // 2 is -4, -7 % 2 is 1) and with
 * NumPy's rules for floats. Integer division, floor_divide, fmod and remainder by zero give
 * 0 (NumPy's result) rather than trapping, and MIN / -1 and MIN // -1 wrap to MIN; integer
 * pow with a negative exponent gives 0 unless the base is 1 or -1. min and max propagate
 * NaN (NumPy's minimum/maximum). fmod takes the sign of the dividend, as C and np.fmod. */
#define OCAL_BINARY_OP_MAP(X) \
  X(ADD, "add", 0)            \
  X(SUB, "sub", 0)            \
  X(MUL, "mul", 0)            \
  X(DIV, "div", 0)            \
  X(POW, "pow", 0)            \
  X(MIN, "min", 0)            \
  X(MAX, "max", 0)            \
  X(ATAN2, "atan2", 1)        \
  X(FMOD, "fmod", 0)          \
  X(EQ, "eq", 2)              \
  X(NE, "ne", 2)              \
  X(LT, "lt", 2)              \
  X(LE, "le", 2)              \
  X(GT, "gt", 2)              \
  X(GE, "ge", 2)              \
  X(FLOOR_DIVIDE, "floor_divide", 0) \
  X(REMAINDER, "remainder", 0)

/** A binary operation of ocal_binary: OCAL_BINARY_ADD, ... (one per row of
 * OCAL_BINARY_OP_MAP). */
typedef enum ocal_binary_op {
#define OCAL__BINARY_ENUM(name, lname, kind) OCAL_BINARY_##name,
  OCAL_BINARY_OP_MAP(OCAL__BINARY_ENUM)
#undef OCAL__BINARY_ENUM
  OCAL_BINARY_OP_COUNT
} ocal_binary_op;

/** Name of a unary operation ("exp").
 * \param op any value.
 * \returns a static string; "invalid" for a value that is not an ocal_unary_op. */
OCAL_API const char *ocal_unary_op_name(ocal_unary_op op);

/** Name of a binary operation ("add").
 * \param op any value.
 * \returns a static string; "invalid" for a value that is not an ocal_binary_op. */
OCAL_API const char *ocal_binary_op_name(ocal_binary_op op);

/** out = op(x), elementwise.
 * \param op the operation.
 * \param x input buffer.
 * \param out output with as many elements as x; may be x itself (in place).
 * \returns OCAL_OK; OCAL_TYPE_MISMATCH (e.g. log into an integer buffer);
 *          OCAL_SHAPE_MISMATCH (element counts differ); OCAL_INVALID_ARGUMENT (partial
 *          overlap, other contexts, an op that is not an ocal_unary_op); OCAL_INVALID_HANDLE;
 *          OCAL_UNSUPPORTED (complex). */
OCAL_API ocal_status ocal_unary(ocal_unary_op op, ocal_buffer x, ocal_buffer out);

/** out = a op b, elementwise with NumPy broadcasting.
 * \param op the operation.
 * \param a the left operand.
 * \param b the right operand, of a's type.
 * \param out the result, of the broadcast shape.
 * \returns OCAL_OK; OCAL_TYPE_MISMATCH when a and b differ in type, out has the wrong
 *          type or a float-only operation (atan2) gets integers; OCAL_SHAPE_MISMATCH when the
 *          shapes do not broadcast or out does not have the broadcast shape;
 *          OCAL_INVALID_ARGUMENT (partial overlap, other contexts, an op that is not an
 *          ocal_binary_op); OCAL_INVALID_HANDLE; OCAL_UNSUPPORTED (complex). */
OCAL_API ocal_status ocal_binary(ocal_binary_op op, ocal_buffer a, ocal_buffer b,
                                 ocal_buffer out);

/** out = a op scalar (the scalar on the right). out has a's shape.
 * \param op the operation.
 * \param a the left operand.
 * \param scalar the right operand.
 * \param out the result.
 * \returns as ocal_binary; OCAL_INVALID_ARGUMENT for a scalar a's type cannot hold. */
OCAL_API ocal_status ocal_binary_scalar(ocal_binary_op op, ocal_buffer a, double scalar,
                                        ocal_buffer out);

/** out = scalar op b (the scalar on the left), e.g. 1 - x or 2 ** x. out has b's shape.
 * \param op the operation.
 * \param scalar the left operand.
 * \param b the right operand.
 * \param out the result.
 * \returns as ocal_binary_scalar. */
OCAL_API ocal_status ocal_scalar_binary(ocal_binary_op op, double scalar, ocal_buffer b,
                                        ocal_buffer out);

/** out = mask ? a : b, elementwise with broadcasting of all three.
 * \param mask a u8 buffer (non-zero selects a), e.g. from a comparison.
 * \param a the values where mask is non-zero.
 * \param b the values where mask is zero, of a's type.
 * \param out the result: a's type and the broadcast shape.
 * \returns as ocal_binary; OCAL_TYPE_MISMATCH also for a mask that is not u8. */
OCAL_API ocal_status ocal_where(ocal_buffer mask, ocal_buffer a, ocal_buffer b, ocal_buffer out);

/** y = alpha * x + y (BLAS axpy, for every real type; the one axpy: 0.1's CLBlast
 * ocal_blas_axpy is gone).
 * \param alpha the scale.
 * \param x the input.
 * \param y the vector added to, in place: x's type and element count (shapes may differ).
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_TYPE_MISMATCH; OCAL_SHAPE_MISMATCH;
 *          OCAL_INVALID_ARGUMENT (other contexts, partial overlap, alpha out of range). */
OCAL_API ocal_status ocal_axpy(double alpha, ocal_buffer x, ocal_buffer y);

/** y = alpha * x + beta * y.
 * \param alpha the scale of x.
 * \param x the input.
 * \param beta the scale of y's old contents.
 * \param y the result, in place: x's type and element count.
 * \returns as ocal_axpy. */
OCAL_API ocal_status ocal_axpby(double alpha, ocal_buffer x, double beta, ocal_buffer y);

/** x = alpha * x (BLAS scal, for every real type; the one scale: 0.1's CLBlast ocal_blas_scal
 * is gone).
 * \param alpha the scale.
 * \param x the buffer, scaled in place.
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_INVALID_ARGUMENT (alpha out of range). */
OCAL_API ocal_status ocal_scale(double alpha, ocal_buffer x);

/** out = x converted to out's element type (any pair of the real types). Floating-point to
 * integer truncates toward zero and saturates at the type's limits; NaN becomes 0. Integer to
 * narrower integer wraps, as C and NumPy's astype do.
 * \param x the input.
 * \param out the result, with x's element count.
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_UNSUPPORTED (complex); OCAL_SHAPE_MISMATCH;
 *          OCAL_INVALID_ARGUMENT (other contexts, partial overlap). */
OCAL_API ocal_status ocal_cast(ocal_buffer x, ocal_buffer out);

/** out[i] = start + i * step for every element (in row-major order). For an integer out,
 * start and step must be whole numbers and every value must fit out's type (a negative
 * step counts down), else OCAL_INVALID_ARGUMENT: nothing wraps. For a floating-point out,
 * every value must be finite in out's type (f32 for f16 and bf16, which are computed in it),
 * and so must (numel - 1) * step on a context without fp64, where the values are computed in
 * f32; else OCAL_INVALID_ARGUMENT: nothing becomes an infinity.
 * \param start the first value.
 * \param step the difference between neighbours.
 * \param out the buffer to fill (any real type).
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_INVALID_ARGUMENT or OCAL_TYPE_MISMATCH for
 *          values or a type out cannot take (see the top of this header). */
OCAL_API ocal_status ocal_arange(double start, double step, ocal_buffer out);

/** numel(out) evenly spaced values from start to stop, both included (NumPy's linspace).
 * For an integer out, the values are truncated toward zero, and start and stop must lie in
 * out's type's range, else OCAL_INVALID_ARGUMENT.
 * \param start the first value.
 * \param stop the last value.
 * \param out the buffer to fill (any real type).
 * \returns as ocal_arange. */
OCAL_API ocal_status ocal_linspace(double start, double stop, ocal_buffer out);

/** Fills an f32, f64, f16 or bf16 buffer with uniform random numbers in [low, high).
 *
 * The numbers come from the counter-based generator Philox-4x32-10 keyed by \p seed:
 * element i of out gets number offset + i of the stream, so the same seed and offset give
 * the same numbers on every device, and a program draws fresh numbers by advancing offset by
 * the count it used. Uniforms are exact across devices. f16 and bf16 get the f32 draws
 * rounded to nearest even and clamped to the format's values in [low, high) (so none equals
 * high); an interval holding no value of the format is OCAL_INVALID_ARGUMENT.
 * \param seed the key of the stream.
 * \param offset position in the stream of out's first element.
 * \param low the lower bound (included), finite.
 * \param high the upper bound (excluded), finite, > low.
 * \param out the f32, f64, f16 or bf16 buffer to fill.
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_INVALID_ARGUMENT for bad bounds;
 *          OCAL_TYPE_MISMATCH for another type. */
OCAL_API ocal_status ocal_random_uniform(uint64_t seed, uint64_t offset, double low,
                                         double high, ocal_buffer out);

/** Fills an f32, f64, f16 or bf16 buffer with normal random numbers (mean, stddev > 0) from
 * the same stream as ocal_random_uniform, through the Box-Muller transform; they agree across
 * devices to within the rounding of each device's log, sin and cos. f16 and bf16 get the f32
 * draws rounded to nearest even.
 * \param seed the key of the stream.
 * \param offset position in the stream of out's first element.
 * \param mean the mean, finite.
 * \param stddev the standard deviation, finite and > 0.
 * \param out the f32, f64, f16 or bf16 buffer to fill.
 * \returns as ocal_random_uniform. */
OCAL_API ocal_status ocal_random_normal(uint64_t seed, uint64_t offset, double mean,
                                        double stddev, ocal_buffer out);

#ifdef __cplusplus
}
#endif

#endif /* OCAL_OPS_H */
