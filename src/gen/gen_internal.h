/* ocal — what the kernel generators and raw kernels share (never installed). */
#ifndef OCAL_GEN_INTERNAL_H
#define OCAL_GEN_INTERNAL_H

#include "internal.h"
#include "ocal.h" /* an area may call any area's public API; the core sees only its own */

#define OCAL__GEN_NAME_MAX 64

/* One declared argument of a generated kernel ("const float *x"). */
typedef struct ocal__gen_param {
  char name[OCAL__GEN_NAME_MAX];
  ocal_dtype dtype;
  int pointer;  /* a __global pointer to dtype elements */
  int is_const; /* the pointed-to elements are const */
} ocal__gen_param;

/* Parses an argument list such as "float a, const float *x, float *y" into a malloc'ed array
 * (*params, *count; NULL and 0 for an empty list). On failure returns OCAL_INVALID_ARGUMENT
 * with a message, for `func`, that names the column and the offending token and shows the
 * list with a caret under it. Names `i`, `n` and those starting with `ocal_` are reserved. */
ocal_status ocal__gen_parse_params(const char *func, const char *text, ocal__gen_param **params,
                                   int *count);

/* An ocal element type from its OpenCL C name ("float", "uchar", "double2"); -1 if none. */
int ocal__gen_dtype_from_cl(const char *name, size_t len);

/* A kernel argument as the raw-kernel checks see it. */
typedef enum { OCAL__ARG_UNKNOWN, OCAL__ARG_GLOBAL, OCAL__ARG_LOCAL, OCAL__ARG_SCALAR } ocal__arg_kind;

typedef struct ocal__sig_arg {
  ocal__arg_kind kind;
  char type[OCAL__GEN_NAME_MAX]; /* the element type of a pointer, or the scalar's type */
  char name[OCAL__GEN_NAME_MAX];
} ocal__sig_arg;

/* Finds `__kernel void name(...)` in OpenCL C source (comments skipped) and describes its
 * parameters: returns the number of parameters and a malloc'ed array in *args, or -1 when the
 * signature cannot be found or read (macros, for example): the caller then checks less. */
int ocal__gen_scan_signature(const char *source, const char *name, ocal__sig_arg **args);

#endif /* OCAL_GEN_INTERNAL_H */
