/* ocal — what the raw-kernel API (kernel.c) uses of its own helpers (never installed). */
#ifndef OCAL_KERNEL_INTERNAL_H
#define OCAL_KERNEL_INTERNAL_H

#include "internal.h"
#include "ocal.h" /* an area may call any area's public API; the core sees only its own */

#define OCAL__SIG_NAME_MAX 64

/* A kernel argument as the raw-kernel checks see it. */
typedef enum { OCAL__ARG_UNKNOWN, OCAL__ARG_GLOBAL, OCAL__ARG_LOCAL, OCAL__ARG_SCALAR } ocal__arg_kind;

typedef struct ocal__sig_arg {
  ocal__arg_kind kind;
  char type[OCAL__SIG_NAME_MAX]; /* the element type of a pointer, or the scalar's type */
  char name[OCAL__SIG_NAME_MAX];
} ocal__sig_arg;

/* Finds `__kernel void name(...)` in OpenCL C source (comments skipped) and describes its
 * parameters: returns the number of parameters and a malloc'ed array in *args, or -1 when the
 * signature cannot be found or read (macros, for example): the caller then checks less. */
int ocal__kernel_signature(const char *source, const char *name, ocal__sig_arg **args);

#endif /* OCAL_KERNEL_INTERNAL_H */
