/* ocal — helpers shared by the elementwise operations (never installed). */
#ifndef OCAL_OPS_COMMON_H
#define OCAL_OPS_COMMON_H

#include "internal.h"
#include "ocal.h" /* an area may call any area's public API; the core sees only its own */

/* Build options for an elementwise kernel: input type t, output type r, operation `op`
 * ("exp"), 4-wide loads when vec4, and any extra options. */
void ocal__ew_options(char *out, size_t size, ocal_dtype t, ocal_dtype r, const char *op,
                      int vec4, const char *extra);

/* Floating-point for elementwise kernels: f32, f64 and the half types (computed in f32). */
int ocal__ew_is_real_float(ocal_dtype t);

/* Size of a scalar kernel argument of element type t: half types pass an f32. */
size_t ocal__ew_scalar_size(ocal_dtype t);

/* Fails unless buf is a live buffer of ctx (ctx NULL: any) whose type elementwise kernels
 * take (the real types). `role` names it in messages ("x", "out"). */
ocal_status ocal__ew_check(ocal_buffer buf, ocal_context ctx, const char *role, const char *func);

/* Fails when in and out share memory in part: the same range (in place) or disjoint
 * ranges are fine. */
ocal_status ocal__ew_check_alias(ocal_buffer in, ocal_buffer out, const char *func);

/* Converts a scalar to one element of type t in out (8 bytes; an f32 for the half types);
 * fails for an integer type unless the value is a whole number in range, and for f32 and the
 * half types when a finite value is beyond f32's range. */
ocal_status ocal__ew_scalar(double v, ocal_dtype t, unsigned char out[8], const char *func);

/* True when every buffer's first element sits at a multiple of 4 elements (4-wide loads). */
int ocal__ew_aligned4(const ocal_buffer *bufs, int count);

#endif /* OCAL_OPS_COMMON_H */
