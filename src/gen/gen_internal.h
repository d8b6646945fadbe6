/* ocal — what the kernel generators and raw kernels share (never installed). */
#ifndef OCAL_GEN_INTERNAL_H
#define OCAL_GEN_INTERNAL_H

#include "internal.h"

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

#endif /* OCAL_GEN_INTERNAL_H */
