/** \file
 * ocal — element types of device buffers. */
#ifndef OCAL_TYPES_H
#define OCAL_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include "ocal/export.h"
#include "ocal/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The element types, X(NAME, lower-case name, OpenCL C type, size in bytes): the enum
 * and the tables of names and sizes are made from it. */
#define OCAL_DTYPE_MAP(X)        \
  X(F32, "f32", "float", 4)      \
  X(F64, "f64", "double", 8)     \
  X(I32, "i32", "int", 4)        \
  X(U32, "u32", "uint", 4)       \
  X(I64, "i64", "long", 8)       \
  X(U64, "u64", "ulong", 8)      \
  X(U8, "u8", "uchar", 1)        \
  X(C32, "c32", "float2", 8)     \
  X(C64, "c64", "double2", 16)     \
  X(F16, "f16", "half", 2)         \
  X(BF16, "bf16", "ushort", 2)

/** Element type of a buffer. C32 and C64 are complex numbers stored as (re, im) pairs of
 * f32 and f64, the layout of C99 `float complex` and of OpenCL `float2`.
 *
 * F16 is IEEE binary16 and BF16 is bfloat16 (the upper half of an f32); on the host both are
 * `uint16_t` bit patterns (ocal_half_encode and ocal_half_decode convert). Operations that
 * accept them compute in f32 and store with round-to-nearest-even; they need no
 * `cl_khr_fp16` (f16 goes through the core vload_half/vstore_half, bf16 through bit
 * operations). In user kernels an F16 buffer is a `half *` and a BF16 buffer a `ushort *`.
 * F16 and BF16 were appended after C64, so the values of the older types did not change. */
typedef enum ocal_dtype {
#define OCAL__DTYPE_ENUM(name, lname, cltype, size) OCAL_##name,
  OCAL_DTYPE_MAP(OCAL__DTYPE_ENUM)
#undef OCAL__DTYPE_ENUM
  OCAL_DTYPE_COUNT
} ocal_dtype;

/** Size of one element in bytes.
 * \param dtype an element type.
 * \returns the size, or 0 when dtype is not a valid ocal_dtype. */
OCAL_API size_t ocal_dtype_size(ocal_dtype dtype);

/** Short name of an element type ("f32", "c64").
 * \param dtype any value.
 * \returns a static string, or "invalid" when dtype is not a valid ocal_dtype. */
OCAL_API const char *ocal_dtype_name(ocal_dtype dtype);

/** Parses a short name ("f32", "u8", case-insensitive) into an element type.
 * \param name the name.
 * \param dtype receives the type.
 * \returns OCAL_OK, or OCAL_INVALID_ARGUMENT for an unknown name. */
OCAL_API ocal_status ocal_dtype_from_name(const char *name, ocal_dtype *dtype);

/** Converts f32 values to F16 or BF16 bit patterns, rounding to nearest even: values beyond
 * the format's range become infinities, values below its smallest normal become subnormals
 * (or zero), and a NaN stays a (quiet) NaN of the same sign.
 * \param dtype OCAL_F16 or OCAL_BF16.
 * \param src n floats (read only; the caller keeps them).
 * \param dst receives n bit patterns (owned by the caller; may not overlap src).
 * \param n the number of values (0 does nothing; src and dst may then be NULL).
 * \returns OCAL_OK, or OCAL_INVALID_ARGUMENT for another dtype or a NULL pointer. */
OCAL_API ocal_status ocal_half_encode(ocal_dtype dtype, const float *src, uint16_t *dst,
                                      size_t n);

/** Converts F16 or BF16 bit patterns to f32 values (exact: every value of both formats is
 * an f32).
 * \param dtype OCAL_F16 or OCAL_BF16.
 * \param src n bit patterns (read only; the caller keeps them).
 * \param dst receives n floats (owned by the caller; may not overlap src).
 * \param n the number of values (0 does nothing; src and dst may then be NULL).
 * \returns OCAL_OK, or OCAL_INVALID_ARGUMENT for another dtype or a NULL pointer. */
OCAL_API ocal_status ocal_half_decode(ocal_dtype dtype, const uint16_t *src, float *dst,
                                      size_t n);

#ifdef __cplusplus
}
#endif

#endif /* OCAL_TYPES_H */
