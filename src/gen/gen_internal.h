/* ocal — what the kernel generators' files share (never installed): the parser, the generator
 * object, string building, expression rewriting and argument marshalling. */
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


/* ---- the generator object (gen.c) ----------------------------------------------------- */
#include "../ops/reduce_engine.h"
#include "../ops/scan_engine.h"

typedef enum { GEN_ELEMENTWISE, GEN_REDUCTION, GEN_SCAN } gen_kind;

/* An elementwise generator's kernels; a reduction's are cl/reduce.cl's
 * (src/ops/reduce_engine.h, OCAL__RED_*), a scan's cl/scan.cl's (src/ops/scan_engine.h,
 * OCAL__SCAN_*). */
enum { K_EW_FLAT, K_EW_WIDE };
#define K_MAX ((int)OCAL__RED_KINDS > (int)OCAL__SCAN_KINDS ? (int)OCAL__RED_KINDS : (int)OCAL__SCAN_KINDS)
struct ocal_gen_s {
  uint32_t magic;
  gen_kind kind;
  ocal_context ctx;
  ocal_dtype dtype; /* reduction and scan: the values' type */
  int exclusive;
  ocal__gen_param *params;
  int nparams;
  char *source;
  size_t own_len;      /* reduction, scan: the generated prologue's length (the rest is
                          cl/reduce.cl or cl/scan.cl) */
  char *full_source;   /* source plus the vector form, for ocal_gen_get_source */
  ocal__kernel *vec;   /* elementwise: the 4-wide form, NULL when the body has none */
  ocal__kernel *kernels[K_MAX]; /* built on first use (gen_kernel), NULL before */
  const char *const *kernel_names; /* reduction and scan: the names of kernels[] */
  pthread_mutex_t klock; /* guards kernels[] while one is built */
  pthread_mutex_t lock; /* guards scratch across the launches of one run */
  cl_mem scratch;
  size_t scratch_bytes;
  ocal__lookback lb; /* the single-pass scan's tile states; a one-pass reduction's states */
};

/* ---- string building (source.c) ------------------------------------------------------- */

/* A growing text; `failed` once an allocation failed (later appends do nothing). */
typedef struct {
  char *text;
  size_t len, cap;
  int lines; /* newlines written so far */
  int failed;
} ocal__sbuf;

void ocal__sb_add(ocal__sbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The user's text under its own file name (label), then back to the generated lines. */
void ocal__sb_user(ocal__sbuf *b, const char *label, const char *text);
/* Whether a type needs cl_khr_fp64. */
int ocal__gen_uses_double(ocal_dtype d);
/* The comment line, the fp64 pragma where any type needs it, and the user's preamble. */
void ocal__sb_header(ocal__sbuf *b, const char *what, const ocal_gen g, const char *preamble);
/* The user's parameters as kernel parameters (a pointer as its base and offset), each name
 * prefixed with qual. */
void ocal__sb_params_q(ocal__sbuf *b, const ocal_gen g, const char *qual);
void ocal__sb_params(ocal__sbuf *b, const ocal_gen g);
/* The statements that rebase every pointer parameter on its offset. */
void ocal__sb_rebase_q(ocal__sbuf *b, const ocal_gen g, const char *qual);
void ocal__sb_rebase(ocal__sbuf *b, const ocal_gen g);

/* ---- expression rewriting (rewrite.c) ------------------------------------------------- */

typedef struct {
  int read, written; /* per pointer argument */
} ocal__vec_use;

/* Returns a malloc'ed 4-wide form of an elementwise body, or NULL when it has none; use[k]
 * says whether pointer argument k is read and written. */
char *ocal__gen_vectorize_body(const ocal_gen g, const char *body, ocal__vec_use *use);
/* Whether expr is "a + b" or "b + a" (spaces and outer parentheses ignored). */
int ocal__gen_is_plain_sum(const char *expr);

/* ---- argument marshalling (args.c) ---------------------------------------------------- */

/* Kernel arguments a run passes: two per user argument at most (a pointer's buffer and
 * offset), plus the generated kernels' own (fewer than 32). */
#define OCAL__GEN_MAX_CL_ARGS (2 * OCAL_GEN_MAX_ARGS + 32)

/* The user's arguments as kernel arguments (after `n`): checks their count, kinds, types and
 * contexts. `first` receives the first buffer argument (NULL if none). */
typedef struct {
  ocal__arg a[OCAL__GEN_MAX_CL_ARGS];
  cl_mem mems[OCAL__GEN_MAX_CL_ARGS / 2];
  cl_ulong offs[OCAL__GEN_MAX_CL_ARGS / 2];
  int count;
} ocal__cl_args;
ocal_status ocal__gen_user_args(const char *func, ocal_gen g, int nargs, const ocal_gen_arg *args,
                                ocal__cl_args *out, ocal_buffer *first);
/* Appends a kernel argument; -1 when there are too many. */
int ocal__gen_push(ocal__cl_args *a, size_t size, const void *value);

#endif /* OCAL_GEN_INTERNAL_H */
