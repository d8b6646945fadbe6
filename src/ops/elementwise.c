/* ocal — elementwise operations: argument checks and kernel choice. The kernels are in
 * cl/elementwise.cl, built per operation and type pair. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ops_common.h"

static const struct {
  const char *name;
  int float_only;
} unary_ops[OCAL_UNARY_OP_COUNT] = {
#define OCAL__UNARY_ROW(name, lname, fl) {lname, fl},
    OCAL_UNARY_OP_MAP(OCAL__UNARY_ROW)
#undef OCAL__UNARY_ROW
};

enum { ARITHMETIC = 0, FLOAT_ONLY = 1, COMPARISON = 2 };
static const struct {
  const char *name;
  int kind;
} binary_ops[OCAL_BINARY_OP_COUNT] = {
#define OCAL__BINARY_ROW(name, lname, kind) {lname, kind},
    OCAL_BINARY_OP_MAP(OCAL__BINARY_ROW)
#undef OCAL__BINARY_ROW
};

const char *ocal_unary_op_name(ocal_unary_op op) {
  return (unsigned)op < OCAL_UNARY_OP_COUNT ? unary_ops[op].name : "invalid";
}

const char *ocal_binary_op_name(ocal_binary_op op) {
  return (unsigned)op < OCAL_BINARY_OP_COUNT ? binary_ops[op].name : "invalid";
}

/* Gets the elementwise kernel for `options` and runs it over n items. */
static ocal_status run(ocal_context ctx, const char *options, const char *kernel, size_t n,
                       size_t nargs, const ocal__arg *args, const char *func) {
  ocal__kernel *k;
  ocal_status status =
      ocal__library_kernel_from(ctx, "elementwise", options, kernel, &k, NULL, func);
  if (status != OCAL_OK) return status;
  return ocal__kernel_run(ctx, k, n, nargs, args, func);
}

/* Work-items for n elements: a quarter with 4-wide loads. */
static size_t items(size_t n, int vec4) { return vec4 ? (n + 3) / 4 : n; }

static ocal_status check_same_count(ocal_buffer x, ocal_buffer out, const char *func) {
  if (x->numel == out->numel) return OCAL_OK;
  char xs[96], os[96];
  ocal__shape_format(x->ndim, x->shape, xs, sizeof xs);
  ocal__shape_format(out->ndim, out->shape, os, sizeof os);
  return ocal__fail(OCAL_SHAPE_MISMATCH, func,
                    "the output has shape %s (%zu elements) but the input has shape %s (%zu)", os,
                    out->numel, xs, x->numel);
}

static ocal_status check_type(ocal_buffer b, ocal_dtype want, const char *role, const char *why,
                              const char *func) {
  if (b->dtype == want) return OCAL_OK;
  return ocal__fail(OCAL_TYPE_MISMATCH, func, "%s is %s but must be %s (%s)", role,
                    ocal_dtype_name(b->dtype), ocal_dtype_name(want), why);
}

ocal_status ocal_unary(ocal_unary_op op, ocal_buffer x, ocal_buffer out) {
  if ((unsigned)op >= OCAL_UNARY_OP_COUNT)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "invalid unary operation %d", (int)op);
  ocal_status status = ocal__ew_check(x, NULL, "x", __func__);
  if (status == OCAL_OK) status = ocal__ew_check(out, x->ctx, "out", __func__);
  if (status == OCAL_OK) status = check_same_count(x, out, __func__);
  if (status != OCAL_OK) return status;
  const char *name = unary_ops[op].name;
  if (unary_ops[op].float_only) {
    if (!ocal__ew_is_real_float(out->dtype))
      return OCAL_FAIL(OCAL_TYPE_MISMATCH,
                       "%s needs a floating-point output, but out is %s (x is %s); pass an f32, "
                       "f64, f16 or bf16 output buffer",
                       name, ocal_dtype_name(out->dtype), ocal_dtype_name(x->dtype));
    if (ocal__ew_is_real_float(x->dtype) && x->dtype != out->dtype)
      return check_type(out, x->dtype, "out", "the type of x; use ocal_cast to convert", __func__);
  } else if ((status = check_type(out, x->dtype, "out", "the type of x", __func__)) != OCAL_OK) {
    return status;
  }
  if ((status = ocal__ew_check_alias(x, out, __func__)) != OCAL_OK) return status;
  if (x->numel == 0) return OCAL_OK;

  const ocal_buffer bufs[] = {x, out};
  int vec4 = ocal__ew_aligned4(bufs, 2);
  char options[256];
  ocal__ew_options(options, sizeof options, x->dtype, out->dtype, name, vec4, NULL);
  cl_ulong xoff = x->offset, yoff = out->offset, n = x->numel;
  const ocal__arg args[] = {OCAL__ARG(x->mem), OCAL__ARG(xoff), OCAL__ARG(out->mem),
                            OCAL__ARG(yoff), OCAL__ARG(n)};
  return run(x->ctx, options, "ocal_unary", items(x->numel, vec4), 5, args, __func__);
}

/* Right-aligns a shape into 4 dimensions with leading ones. */
static void pad4(const ocal_buffer b, cl_ulong p[4]) {
  for (int d = 0; d < 4; d++) p[d] = 1;
  for (int i = 0; i < b->ndim; i++) p[4 - b->ndim + i] = b->shape[i];
}

/* A scalar broadcasts to its buffer operand's shape, so the output must have that shape (leading
 * ones aside, as ocal_binary takes them); the same element count in another shape is refused. */
static ocal_status check_same_shape(ocal_buffer x, ocal_buffer out, const char *role,
                                    const char *func) {
  cl_ulong px[4], po[4];
  pad4(x, px);
  pad4(out, po);
  if (memcmp(px, po, sizeof px) == 0) return OCAL_OK;
  char xs[96], os[96];
  ocal__shape_format(x->ndim, x->shape, xs, sizeof xs);
  ocal__shape_format(out->ndim, out->shape, os, sizeof os);
  return ocal__fail(OCAL_SHAPE_MISMATCH, func,
                    "the output has shape %s but %s has shape %s: out must have %s's shape (a "
                    "scalar broadcasts to it)",
                    os, role, xs, role);
}

/* NumPy broadcasting of nin inputs to out: fills the padded output dims and each input's
 * element strides (0 along broadcast dimensions); *flat says no input is broadcast. */
static ocal_status broadcast(int nin, const ocal_buffer *in, ocal_buffer out, cl_ulong dims[4],
                             cl_ulong strides[][4], int *flat, const char *func) {
  cl_ulong p[3][4], want[4];
  for (int k = 0; k < nin; k++) pad4(in[k], p[k]);
  for (int d = 0; d < 4; d++) {
    want[d] = 1;
    for (int k = 0; k < nin; k++) {
      if (p[k][d] == 1) continue;
      if (want[d] != 1 && want[d] != p[k][d]) {
        char s0[96], s1[96];
        ocal__shape_format(in[0]->ndim, in[0]->shape, s0, sizeof s0);
        ocal__shape_format(in[k]->ndim, in[k]->shape, s1, sizeof s1);
        return ocal__fail(OCAL_SHAPE_MISMATCH, func,
                          "shapes %s and %s do not broadcast: dimension %d (from the end) is %llu "
                          "against %llu; each must be equal or 1",
                          s0, s1, 4 - d, (unsigned long long)want[d],
                          (unsigned long long)p[k][d]);
      }
      want[d] = p[k][d];
    }
  }
  pad4(out, dims);
  for (int d = 0; d < 4; d++) {
    if (dims[d] != want[d]) {
      char s[96];
      ocal__shape_format(out->ndim, out->shape, s, sizeof s);
      return ocal__fail(OCAL_SHAPE_MISMATCH, func,
                        "the output has shape %s but the inputs broadcast to (%llu, %llu, %llu, "
                        "%llu) (leading ones aside)",
                        s, (unsigned long long)want[0], (unsigned long long)want[1],
                        (unsigned long long)want[2], (unsigned long long)want[3]);
    }
  }
  *flat = 1;
  for (int k = 0; k < nin; k++) {
    cl_ulong stride = 1;
    for (int d = 3; d >= 0; d--) {
      strides[k][d] = p[k][d] == 1 ? 0 : stride;
      stride *= p[k][d];
      if (p[k][d] != dims[d]) *flat = 0;
    }
  }
  return OCAL_OK;
}

/* How an input relates to a split of the output's 4 padded dimensions into rows [0, split)
 * and columns [split, 4): 0 full, 1 a row repeated (ones before the split, the output's
 * dimensions after), 2 a column repeated (the output's dimensions before, ones after),
 * 3 a single element; -1 none of these. */
static int split_mode(const ocal_buffer in, const cl_ulong dims[4], int split) {
  cl_ulong p[4];
  pad4(in, p);
  int rows_match = 1, rows_one = 1, cols_match = 1, cols_one = 1;
  for (int d = 0; d < 4; d++) {
    int match = p[d] == dims[d], one = p[d] == 1;
    if (d < split) rows_match &= match, rows_one &= one;
    else cols_match &= match, cols_one &= one;
  }
  if (rows_match && cols_match) return 0;
  if (rows_one && cols_match) return 1;
  if (rows_match && cols_one) return 2;
  if (rows_one && cols_one) return 3;
  return -1;
}

/* Finds a split where every input has a mode (see split_mode); returns the split, or -1. */
static int find_split(int nin, const ocal_buffer *in, const cl_ulong dims[4], int modes[]) {
  for (int split = 3; split >= 1; split--) {
    int ok = 1;
    for (int k = 0; k < nin && ok; k++) ok = (modes[k] = split_mode(in[k], dims, split)) >= 0;
    if (ok) return split;
  }
  return -1;
}

/* The index type of the broadcast kernels: 32-bit arithmetic is much faster on GPUs. */
static const char *index_option(size_t n) {
  return n < ((size_t)1 << 32) ? "-DIDX=uint" : "-DIDX=ulong";
}

static ocal_status check_binary_types(ocal_binary_op op, ocal_buffer a, ocal_buffer out,
                                      const char *func) {
  const char *name = binary_ops[op].name;
  if (binary_ops[op].kind == FLOAT_ONLY && !ocal__ew_is_real_float(a->dtype))
    return ocal__fail(OCAL_TYPE_MISMATCH, func,
                      "%s needs floating-point inputs, but they are %s; convert with ocal_cast",
                      name, ocal_dtype_name(a->dtype));
  if (binary_ops[op].kind == COMPARISON)
    return check_type(out, OCAL_U8, "out", "comparisons write u8 masks", func);
  return check_type(out, a->dtype, "out", "the type of the inputs", func);
}

ocal_status ocal_binary(ocal_binary_op op, ocal_buffer a, ocal_buffer b, ocal_buffer out) {
  if ((unsigned)op >= OCAL_BINARY_OP_COUNT)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "invalid binary operation %d", (int)op);
  ocal_status status = ocal__ew_check(a, NULL, "a", __func__);
  if (status == OCAL_OK) status = ocal__ew_check(b, a->ctx, "b", __func__);
  if (status == OCAL_OK) status = ocal__ew_check(out, a->ctx, "out", __func__);
  if (status != OCAL_OK) return status;
  if (a->dtype != b->dtype)
    return OCAL_FAIL(OCAL_TYPE_MISMATCH, "a is %s but b is %s; convert one with ocal_cast",
                     ocal_dtype_name(a->dtype), ocal_dtype_name(b->dtype));
  if ((status = check_binary_types(op, a, out, __func__)) != OCAL_OK) return status;
  const ocal_buffer in[] = {a, b};
  cl_ulong dims[4], st[2][4];
  int flat;
  if ((status = broadcast(2, in, out, dims, st, &flat, __func__)) != OCAL_OK) return status;
  if ((status = ocal__ew_check_alias(a, out, __func__)) != OCAL_OK) return status;
  if ((status = ocal__ew_check_alias(b, out, __func__)) != OCAL_OK) return status;
  if (out->numel == 0) return OCAL_OK;

  const char *name = binary_ops[op].name;
  char options[256];
  cl_ulong aoff = a->offset, boff = b->offset, yoff = out->offset, n = out->numel;
  if (flat) {
    const ocal_buffer bufs[] = {a, b, out};
    int vec4 = ocal__ew_aligned4(bufs, 3);
    ocal__ew_options(options, sizeof options, a->dtype, out->dtype, name, vec4, NULL);
    const ocal__arg args[] = {OCAL__ARG(a->mem), OCAL__ARG(aoff), OCAL__ARG(b->mem),
                              OCAL__ARG(boff), OCAL__ARG(out->mem), OCAL__ARG(yoff),
                              OCAL__ARG(n)};
    return run(a->ctx, options, "ocal_binary_flat", items(out->numel, vec4), 7, args, __func__);
  }
  int modes[2];
  int split = find_split(2, in, dims, modes);
  if (split > 0) {
    cl_uint am = (cl_uint)modes[0], bm = (cl_uint)modes[1];
    cl_ulong rows = 1, cols = 1;
    for (int d = 0; d < 4; d++) *(d < split ? &rows : &cols) *= dims[d];
    /* 4 columns a work-item where rows and offsets keep 4-element alignment: scalar loads
     * read a bias add at half the copy's speed on an H200 (docs/measurements.md). */
    const ocal_buffer bufs[] = {a, b, out};
    const int vec4 = cols % 4 == 0 && ocal__ew_aligned4(bufs, 3);
    ocal__ew_options(options, sizeof options, a->dtype, out->dtype, name, vec4, NULL);
    const ocal__arg args[] = {OCAL__ARG(a->mem),   OCAL__ARG(aoff), OCAL__ARG(am),
                              OCAL__ARG(b->mem),   OCAL__ARG(boff), OCAL__ARG(bm),
                              OCAL__ARG(out->mem), OCAL__ARG(yoff), OCAL__ARG(cols),
                              OCAL__ARG(rows)};
    ocal__kernel *k;
    status = ocal__library_kernel_from(a->ctx, "elementwise", options,
                                       vec4 ? "ocal_binary_2d4" : "ocal_binary_2d", &k, NULL,
                                       __func__);
    if (status != OCAL_OK) return status;
    return ocal__kernel_run_2d(a->ctx, k, vec4 ? cols / 4 : cols, rows, 10, args, __func__);
  }
  ocal__ew_options(options, sizeof options, a->dtype, out->dtype, name, 0,
                   index_option(out->numel));
  cl_ulong4 ast = {{st[0][0], st[0][1], st[0][2], st[0][3]}};
  cl_ulong4 bst = {{st[1][0], st[1][1], st[1][2], st[1][3]}};
  cl_ulong4 d4 = {{dims[0], dims[1], dims[2], dims[3]}};
  const ocal__arg args[] = {OCAL__ARG(a->mem), OCAL__ARG(aoff), OCAL__ARG(ast),
                            OCAL__ARG(b->mem), OCAL__ARG(boff), OCAL__ARG(bst),
                            OCAL__ARG(out->mem), OCAL__ARG(yoff), OCAL__ARG(d4)};
  return run(a->ctx, options, "ocal_binary_bcast", out->numel, 9, args, __func__);
}

/* out = x op s (left = 0) or s op x (left = 1); `role` names x in messages. */
static ocal_status binary_with_scalar(ocal_binary_op op, ocal_buffer x, const char *role,
                                      double scalar, int left, ocal_buffer out,
                                      const char *func) {
  if ((unsigned)op >= OCAL_BINARY_OP_COUNT)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func, "invalid binary operation %d", (int)op);
  ocal_status status = ocal__ew_check(x, NULL, role, func);
  if (status == OCAL_OK) status = ocal__ew_check(out, x->ctx, "out", func);
  if (status == OCAL_OK) status = check_binary_types(op, x, out, func);
  if (status == OCAL_OK) status = check_same_shape(x, out, role, func);
  if (status == OCAL_OK) status = ocal__ew_check_alias(x, out, func);
  unsigned char s[8];
  if (status == OCAL_OK) status = ocal__ew_scalar(scalar, x->dtype, s, func);
  if (status != OCAL_OK || x->numel == 0) return status;

  const ocal_buffer bufs[] = {x, out};
  int vec4 = ocal__ew_aligned4(bufs, 2);
  char options[256];
  ocal__ew_options(options, sizeof options, x->dtype, out->dtype, binary_ops[op].name, vec4,
                   left ? "-DSCALAR_LEFT" : NULL);
  cl_ulong xoff = x->offset, yoff = out->offset, n = x->numel;
  const ocal__arg args[] = {OCAL__ARG(x->mem), OCAL__ARG(xoff), {ocal__ew_scalar_size(x->dtype), s},
                            OCAL__ARG(out->mem), OCAL__ARG(yoff), OCAL__ARG(n)};
  return run(x->ctx, options, "ocal_binary_scalar", items(x->numel, vec4), 6, args, func);
}

ocal_status ocal_binary_scalar(ocal_binary_op op, ocal_buffer a, double scalar, ocal_buffer out) {
  return binary_with_scalar(op, a, "a", scalar, 0, out, __func__);
}

ocal_status ocal_scalar_binary(ocal_binary_op op, double scalar, ocal_buffer b, ocal_buffer out) {
  return binary_with_scalar(op, b, "b", scalar, 1, out, __func__);
}

ocal_status ocal_where(ocal_buffer mask, ocal_buffer a, ocal_buffer b, ocal_buffer out) {
  ocal_status status = ocal__ew_check(mask, NULL, "mask", __func__);
  if (status == OCAL_OK) status = ocal__ew_check(a, mask->ctx, "a", __func__);
  if (status == OCAL_OK) status = ocal__ew_check(b, mask->ctx, "b", __func__);
  if (status == OCAL_OK) status = ocal__ew_check(out, mask->ctx, "out", __func__);
  if (status == OCAL_OK) status = check_type(mask, OCAL_U8, "mask", "a u8 mask", __func__);
  if (status == OCAL_OK) status = check_type(b, a->dtype, "b", "the type of a", __func__);
  if (status == OCAL_OK) status = check_type(out, a->dtype, "out", "the type of a", __func__);
  if (status != OCAL_OK) return status;
  const ocal_buffer in[] = {mask, a, b};
  cl_ulong dims[4], st[3][4];
  int flat;
  if ((status = broadcast(3, in, out, dims, st, &flat, __func__)) != OCAL_OK) return status;
  for (int k = 0; k < 3; k++)
    if ((status = ocal__ew_check_alias(in[k], out, __func__)) != OCAL_OK) return status;
  if (out->numel == 0) return OCAL_OK;

  char options[256];
  if (ocal__dtype_is_half(a->dtype)) /* where moves bits: a half type as its 16-bit storage */
    snprintf(options, sizeof options, "-DT=ushort -DR=ushort -DOP_where %s",
             index_option(out->numel));
  else
    ocal__ew_options(options, sizeof options, a->dtype, a->dtype, "where", 0,
                     index_option(out->numel));
  cl_ulong moff = mask->offset, aoff = a->offset, boff = b->offset, yoff = out->offset;
  cl_ulong4 mst = {{st[0][0], st[0][1], st[0][2], st[0][3]}};
  cl_ulong4 ast = {{st[1][0], st[1][1], st[1][2], st[1][3]}};
  cl_ulong4 bst = {{st[2][0], st[2][1], st[2][2], st[2][3]}};
  cl_ulong4 d4 = {{dims[0], dims[1], dims[2], dims[3]}};
  const ocal__arg args[] = {OCAL__ARG(mask->mem), OCAL__ARG(moff), OCAL__ARG(mst),
                            OCAL__ARG(a->mem),    OCAL__ARG(aoff), OCAL__ARG(ast),
                            OCAL__ARG(b->mem),    OCAL__ARG(boff), OCAL__ARG(bst),
                            OCAL__ARG(out->mem),  OCAL__ARG(yoff), OCAL__ARG(d4)};
  return run(a->ctx, options, "ocal_where", out->numel, 12, args, __func__);
}

static ocal_status axpby(double alpha, ocal_buffer x, double beta, int beta_one, ocal_buffer y,
                         const char *func) {
  ocal_status status = ocal__ew_check(x, NULL, "x", func);
  if (status == OCAL_OK) status = ocal__ew_check(y, x->ctx, "y", func);
  if (status == OCAL_OK) status = check_type(y, x->dtype, "y", "the type of x", func);
  if (status == OCAL_OK) status = check_same_count(x, y, func);
  if (status == OCAL_OK) status = ocal__ew_check_alias(x, y, func);
  unsigned char a[8], b[8];
  if (status == OCAL_OK) status = ocal__ew_scalar(alpha, x->dtype, a, func);
  if (status == OCAL_OK) status = ocal__ew_scalar(beta, x->dtype, b, func);
  if (status != OCAL_OK || x->numel == 0) return status;
  const ocal_buffer bufs[] = {x, y};
  int vec4 = ocal__ew_aligned4(bufs, 2);
  char options[256];
  ocal__ew_options(options, sizeof options, x->dtype, x->dtype, "axpby", vec4,
                   beta_one ? "-DBETA_ONE" : NULL);
  size_t es = ocal__ew_scalar_size(x->dtype);
  cl_ulong xoff = x->offset, yoff = y->offset, n = x->numel;
  const ocal__arg args[] = {{es, a}, OCAL__ARG(x->mem), OCAL__ARG(xoff), {es, b},
                            OCAL__ARG(y->mem), OCAL__ARG(yoff), OCAL__ARG(n)};
  return run(x->ctx, options, "ocal_axpby", items(x->numel, vec4), 7, args, func);
}

ocal_status ocal_axpy(double alpha, ocal_buffer x, ocal_buffer y) {
  return axpby(alpha, x, 1.0, 1, y, __func__);
}

ocal_status ocal_axpby(double alpha, ocal_buffer x, double beta, ocal_buffer y) {
  return axpby(alpha, x, beta, 0, y, __func__);
}

ocal_status ocal_scale(double alpha, ocal_buffer x) {
  return binary_with_scalar(OCAL_BINARY_MUL, x, "x", alpha, 0, x, __func__);
}

ocal_status ocal_cast(ocal_buffer x, ocal_buffer out) {
  ocal_status status = ocal__ew_check(x, NULL, "x", __func__);
  if (status == OCAL_OK) status = ocal__ew_check(out, x->ctx, "out", __func__);
  if (status == OCAL_OK) status = check_same_count(x, out, __func__);
  if (status == OCAL_OK) status = ocal__ew_check_alias(x, out, __func__);
  if (status != OCAL_OK || x->numel == 0) return status;
  if (x->dtype == out->dtype) return ocal_buffer_copy(x, out);
  /* Integers and f64 reach a half type through an f32 rounded to odd (see cl/elementwise.cl),
   * so that they are rounded once. */
  char options[256], rto[32] = "";
  if (ocal__dtype_is_half(out->dtype) && !ocal__ew_is_real_float(x->dtype))
    snprintf(rto, sizeof rto, "-DRTO=%s", ocal__dtype_cl_type(x->dtype));
  if (ocal__dtype_is_half(out->dtype) && x->dtype == OCAL_F64)
    snprintf(rto, sizeof rto, "-DRTO=double");
  ocal__ew_options(options, sizeof options, x->dtype, out->dtype, "cast", 0, rto);
  cl_ulong xoff = x->offset, yoff = out->offset, n = x->numel;
  const ocal__arg args[] = {OCAL__ARG(x->mem), OCAL__ARG(xoff), OCAL__ARG(out->mem),
                            OCAL__ARG(yoff), OCAL__ARG(n)};
  return run(x->ctx, options, "ocal_cast", x->numel, 5, args, __func__);
}

/* An integer as a sign and a 64-bit magnitude, plus a carry of 2^64 for a sum that leaves
 * 64 bits: every value of i64 and u64, and the ends of sequences that leave them, are exact
 * without a 128-bit type (which not every compiler has). */
typedef struct whole {
  int neg;
  uint64_t mag;
  unsigned carry; /* the value's magnitude is carry * 2^64 + mag */
} whole;

/* The largest magnitudes of an integer type, below zero and above. */
static void integer_range(ocal_dtype t, uint64_t *below, uint64_t *above) {
  *below = 0;
  switch (t) {
    case OCAL_I32: *below = (uint64_t)1 << 31; *above = ((uint64_t)1 << 31) - 1; break;
    case OCAL_U32: *above = UINT32_MAX; break;
    case OCAL_I64: *below = (uint64_t)1 << 63; *above = ((uint64_t)1 << 63) - 1; break;
    case OCAL_U64: *above = UINT64_MAX; break;
    default: *above = UINT8_MAX; break;
  }
}

static int whole_fits(whole v, ocal_dtype t) {
  uint64_t below, above;
  integer_range(t, &below, &above);
  return v.carry == 0 && v.mag <= (v.neg ? below : above);
}

/* v in decimal, exactly (2^64 = 1844674407370955161 * 10 + 6 carries the 65th bit). */
static const char *whole_format(whole v, char *out, size_t size) {
  uint64_t high = v.mag / 10, low = v.mag % 10;
  if (v.carry) {
    high += 1844674407370955161ull + (low + 6) / 10;
    low = (low + 6) % 10;
  }
  if (high)
    snprintf(out, size, "%s%llu%llu", v.neg ? "-" : "", (unsigned long long)high,
             (unsigned long long)low);
  else
    snprintf(out, size, "%s%llu", v.neg && low ? "-" : "", (unsigned long long)low);
  return out;
}

/* An integer arange's check, in exact integer arithmetic (a double rounds near 2^63 and 2^64,
 * where it would take a sequence that wraps and refuse one that fits): start and its last
 * value must fit out's type, so that every value between them does. start and step are whole numbers
 * here; *a and *b receive them modulo 2^64, as the kernel's long arithmetic takes them
 * (start + i * step then comes out exact, a u64 start above long's range included). */
static ocal_status arange_integer(ocal_buffer out, double start, double step, unsigned char a[8],
                                  unsigned char b[8], const char *func) {
  const char *type = ocal_dtype_name(out->dtype);
  uint64_t below, above;
  integer_range(out->dtype, &below, &above);
  char range[64], text[32];
  snprintf(range, sizeof range, "%s%llu to %llu", below ? "-" : "", (unsigned long long)below,
           (unsigned long long)above);
  const double two64 = 18446744073709551616.0; /* magnitudes from here on fit no type */
  whole first = {start < 0, fabs(start) < two64 ? (uint64_t)fabs(start) : 0, 0};
  if (fabs(start) >= two64 || !whole_fits(first, out->dtype))
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "start %.17g is outside the range of %s (out's type), %s: pick a start "
                      "inside it, or a wider integer type",
                      start, type, range);
  whole last = first;
  uint64_t stride = 0; /* |step|, used only when there is a second value */
  size_t steps = out->numel - 1;
  if (steps > 0) {
    stride = fabs(step) < two64 ? (uint64_t)fabs(step) : 0;
    if (fabs(step) >= two64 || (stride && (uint64_t)steps > UINT64_MAX / stride))
      return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                        "(numel - 1) * step = %zu * %.17g is 2^64 or more in magnitude, so the "
                        "values overflow %s (out's type), %s: use a smaller step or a shorter "
                        "buffer",
                        steps, step, type, range);
    uint64_t span = (uint64_t)steps * stride;
    if (span && (step < 0) == first.neg) {
      last.mag = first.mag + span; /* modulo 2^64: a wrap is the carry */
      last.carry = last.mag < first.mag;
    } else if (span > first.mag) {
      last.neg = step < 0;
      last.mag = span - first.mag;
    } else {
      last.mag = first.mag - span;
    }
    if (last.mag == 0 && !last.carry) last.neg = 0;
    if (!whole_fits(last, out->dtype))
      return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                        "the last value, start + %zu * step = %s, overflows %s (out's type), "
                        "whose range is %s: use a smaller start or step, a shorter buffer, or "
                        "a wider integer type",
                        steps, whole_format(last, text, sizeof text), type, range);
  }
  uint64_t w[2] = {first.neg ? (uint64_t)0 - first.mag : first.mag,
                   step < 0 ? (uint64_t)0 - stride : stride};
  memcpy(a, &w[0], sizeof w[0]);
  memcpy(b, &w[1], sizeof w[1]);
  return OCAL_OK;
}

/* A floating-point arange's check: the kernel computes start + i * step in its compute type
 * c and converts to out's type, so a value beyond their range would become an infinity
 * without a word. The ends bound the values; in f32 the product i * step is rounded before
 * the sum, so it must stay in range too. f16 and bf16 are judged against f32, the type they
 * are computed in (the header's rule for scalars). */
static ocal_status arange_float(ocal_buffer out, ocal_dtype c, double start, double step,
                                const char *func) {
  int wide = out->dtype == OCAL_F64;
  const char *type = wide ? "f64" : "f32";
  size_t steps = out->numel - 1;
  double span = (double)steps * step, last = start + span;
  char what[160];
  if (wide ? !isfinite(span) : c == OCAL_F32 && isinf((float)span))
    snprintf(what, sizeof what, "(numel - 1) * step = %zu * %.9g%s", steps, step,
             wide ? "" : ", computed in f32 (the context has no fp64),");
  else if (!wide && isinf((float)start))
    snprintf(what, sizeof what, "start %.9g", start);
  else if (wide ? !isfinite(last) : isinf((float)last))
    snprintf(what, sizeof what, "the last value, start + %zu * step = %.9g,", steps, last);
  else
    return OCAL_OK;
  return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                    "%s is beyond %s's range (magnitude at most %.9g)%s: the values would be "
                    "infinite; use a smaller start or step, or a shorter buffer%s",
                    what, type, wide ? DBL_MAX : FLT_MAX,
                    wide || out->dtype == OCAL_F32 ? "" : ", in which out's type is computed",
                    !wide && ocal__context_fp64(out->ctx) ? ", or an f64 buffer" : "");
}

/* arange and linspace: computed in C (long for an integer arange; double where the context
 * has fp64, else float, otherwise), with the two scalars converted to C. */
static ocal_status sequence(ocal_buffer out, double first, double second, const char *op,
                            const char *kernel, const char *func) {
  ocal_status status = ocal__ew_check(out, NULL, "out", func);
  if (status != OCAL_OK) return status;
  int integer = !ocal__ew_is_real_float(out->dtype) && strcmp(op, "arange") == 0;
  ocal_dtype c = integer ? OCAL_I64 : ocal__context_fp64(out->ctx) ? OCAL_F64 : OCAL_F32;
  if (!integer && (!isfinite(first) || !isfinite(second)))
    return ocal__fail(OCAL_INVALID_ARGUMENT, func, "%s needs finite bounds, got %g and %g", op,
                      first, second);
  unsigned char a[8], b[8];
  if (integer) {
    /* Whole numbers here; whether the values fit out's type is checked below, so that a u64
     * start from 2^63 on (beyond the kernel's long, yet inside u64) is taken. */
    if (!isfinite(first) || first != trunc(first) || !isfinite(second) || second != trunc(second))
      return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                        "arange into a %s buffer needs whole-number start and step, got %.17g "
                        "and %.17g",
                        ocal_dtype_name(out->dtype), first, second);
  } else if ((status = ocal__ew_scalar(first, c, a, func)) != OCAL_OK ||
             (status = ocal__ew_scalar(second, c, b, func)) != OCAL_OK) {
    return status;
  }
  if (out->numel == 0) return OCAL_OK;
  if (integer) {
    if ((status = arange_integer(out, first, second, a, b, func)) != OCAL_OK) return status;
  } else if (!ocal__ew_is_real_float(out->dtype)) {
    /* Every value must fit out's type (the header's rule for integer scalars), else the
     * kernel's conversion would wrap it silently. The ends bound the sequence; the kernel
     * converts truncating toward zero (linspace's ends need not be whole). */
    unsigned char scratch[8];
    if (ocal__ew_scalar(trunc(first), out->dtype, scratch, func) != OCAL_OK ||
        ocal__ew_scalar(trunc(second), out->dtype, scratch, func) != OCAL_OK)
      return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                        "%s from %.17g to %.17g leaves the range of %s (out's type): pick "
                        "bounds inside it, or a wider integer type",
                        op, first, second, ocal_dtype_name(out->dtype));
  } else if (strcmp(op, "arange") == 0 &&
             (status = arange_float(out, c, first, second, func)) != OCAL_OK) {
    return status;
  }
  char extra[64], options[256];
  snprintf(extra, sizeof extra, "-DC=%s%s%s%s", ocal__dtype_cl_type(c),
           c == OCAL_F64 ? " -DOCAL_NEED_FP64" : "",
           ocal__dtype_is_half(out->dtype) && c != OCAL_F32 ? " -DRTO=" : "",
           ocal__dtype_is_half(out->dtype) && c != OCAL_F32 ? ocal__dtype_cl_type(c) : "");
  ocal__ew_options(options, sizeof options, out->dtype, out->dtype, op, 0, extra);
  size_t cs = ocal_dtype_size(c);
  cl_ulong yoff = out->offset, n = out->numel;
  const ocal__arg args[] = {OCAL__ARG(out->mem), OCAL__ARG(yoff), {cs, a}, {cs, b}, OCAL__ARG(n)};
  return run(out->ctx, options, kernel, out->numel, 5, args, func);
}

ocal_status ocal_arange(double start, double step, ocal_buffer out) {
  return sequence(out, start, step, "arange", "ocal_arange", __func__);
}

ocal_status ocal_linspace(double start, double stop, ocal_buffer out) {
  return sequence(out, start, stop, "linspace", "ocal_linspace", __func__);
}
