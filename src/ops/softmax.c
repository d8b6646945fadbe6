/* ocal — softmax, log-softmax and softmax cross-entropy: argument checks and launches. The
 * kernels are in cl/softmax.cl. Row-wise softmax could be composed from a max reduction, a
 * broadcast subtract, exp, a sum and a divide, but that is five launches and five passes
 * over memory where one kernel does it in one; a training step calls it every time. */
#include <stdio.h>
#include <string.h>

#include "ops_common.h"

/* Checks a floating-point operand: its handle and context as every elementwise call does,
 * then its type, which must be that of `like` (the input; NULL for the input itself). A
 * complex buffer is a wrong type here like an integer one (OCAL_TYPE_MISMATCH, ocal/nn.h), not
 * the elementwise calls' OCAL_UNSUPPORTED, whose message offers the integer types. */
static ocal_status check_float(ocal_buffer b, ocal_buffer like, const char *role,
                               const char *func) {
  ocal_status status = ocal__ew_check(b, like ? like->ctx : NULL, role, func);
  if (status != OCAL_OK && !(status == OCAL_UNSUPPORTED && ocal__dtype_is_complex(b->dtype)))
    return status;
  ocal_dtype want = like ? like->dtype : b->dtype;
  if (b->dtype != OCAL_F32 && b->dtype != OCAL_F64 && !ocal__dtype_is_half(b->dtype))
    return ocal__fail(OCAL_TYPE_MISMATCH, func,
                      "%s is %s: this operation takes f32, f64, f16 or bf16", role,
                      ocal_dtype_name(b->dtype));
  if (b->dtype != want)
    return ocal__fail(OCAL_TYPE_MISMATCH, func, "%s is %s but must be %s (the type of the input)",
                      role, ocal_dtype_name(b->dtype), ocal_dtype_name(want));
  return OCAL_OK;
}

/* "-DT=<compute type>" and the storage option of a half type. */
static const char *type_options(ocal_dtype d) {
  switch (d) {
    case OCAL_F64: return "-DT=double -DOCAL_NEED_FP64";
    case OCAL_F16: return "-DT=float -DT_HALF";
    case OCAL_BF16: return "-DT=float -DT_BF16";
    default: return "-DT=float";
  }
}

/* True when two buffers (b may be NULL) share any byte. */
static int overlap(ocal_buffer a, ocal_buffer b) {
  if (!b || !a->mem || a->mem != b->mem) return 0;
  size_t ab = a->offset * ocal_dtype_size(a->dtype), ae = ab + a->numel * ocal_dtype_size(a->dtype);
  size_t bb = b->offset * ocal_dtype_size(b->dtype), be = bb + b->numel * ocal_dtype_size(b->dtype);
  return ab < be && bb < ae;
}

static ocal_status run(ocal_context ctx, const char *options, const char *kernel, size_t items,
                       size_t nargs, const ocal__arg *args, const char *func) {
  ocal__kernel *k;
  ocal_status status = ocal__library_kernel_from(ctx, "softmax", options, kernel, &k, NULL, func);
  if (status != OCAL_OK) return status;
  return ocal__kernel_run(ctx, k, items, nargs, args, func);
}

static ocal_status softmax(ocal_buffer x, int axis, ocal_buffer out, int log, const char *func) {
  ocal_status status = check_float(x, NULL, "x", func);
  if (status == OCAL_OK) status = check_float(out, x, "out", func);
  if (status != OCAL_OK) return status;
  if (out->numel != x->numel)
    return ocal__fail(OCAL_SHAPE_MISMATCH, func,
                      "out has %zu elements but x has %zu: it must have x's shape", out->numel,
                      x->numel);
  if ((status = ocal__ew_check_alias(x, out, func)) != OCAL_OK) return status;

  /* The lines as a row-major block (outer, n, inner). */
  cl_ulong outer = 1, n, inner = 1;
  if (axis == OCAL_AXIS_ALL) {
    n = x->numel;
  } else {
    int a = axis < 0 ? axis + x->ndim : axis;
    if (a < 0 || a >= x->ndim)
      return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                        "axis %d is out of range for a %d-D buffer (valid: %d .. %d, or "
                        "OCAL_AXIS_ALL for the whole buffer)",
                        axis, x->ndim, -x->ndim, x->ndim - 1);
    for (int i = 0; i < a; i++) outer *= x->shape[i];
    n = x->shape[a];
    for (int i = a + 1; i < x->ndim; i++) inner *= x->shape[i];
  }
  if (x->numel == 0) return OCAL_OK;

  char options[160];
  snprintf(options, sizeof options, "%s%s", type_options(x->dtype), log ? " -DLOG_SOFTMAX" : "");
  cl_ulong xoff = x->offset, yoff = out->offset;
  const ocal__arg args[] = {OCAL__ARG(x->mem),   OCAL__ARG(xoff), OCAL__ARG(out->mem),
                            OCAL__ARG(yoff),     OCAL__ARG(outer), OCAL__ARG(n),
                            OCAL__ARG(inner)};
  return run(x->ctx, options, "ocal_softmax_lines", (size_t)(outer * inner), 7, args, func);
}

ocal_status ocal_softmax(ocal_buffer x, int axis, ocal_buffer out) {
  return softmax(x, axis, out, 0, __func__);
}

ocal_status ocal_log_softmax(ocal_buffer x, int axis, ocal_buffer out) {
  return softmax(x, axis, out, 1, __func__);
}

ocal_status ocal_softmax_cross_entropy(ocal_buffer logits, ocal_buffer labels, ocal_buffer loss,
                                       ocal_buffer grad) {
  const char *func = __func__;
  ocal_status status = check_float(logits, NULL, "logits", func);
  if (status == OCAL_OK) {
    status = ocal__ew_check(labels, logits->ctx, "labels", func);
    /* Complex labels are not integers either: the type check below says so. */
    if (status == OCAL_UNSUPPORTED && ocal__dtype_is_complex(labels->dtype)) status = OCAL_OK;
  }
  if (status == OCAL_OK && loss) status = check_float(loss, logits, "loss", func);
  if (status == OCAL_OK && grad) status = check_float(grad, logits, "grad", func);
  if (status != OCAL_OK) return status;
  if (!loss && !grad)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "loss and grad are both NULL: nothing to compute");
  if (ocal__dtype_is_float(labels->dtype) || ocal__dtype_is_half(labels->dtype) ||
      ocal__dtype_is_complex(labels->dtype))
    return OCAL_FAIL(OCAL_TYPE_MISMATCH,
                     "labels is %s: class labels must be integers (i32, u32, i64, u64 or u8)",
                     ocal_dtype_name(labels->dtype));

  if (logits->ndim < 2)
    return OCAL_FAIL(OCAL_SHAPE_MISMATCH,
                     "logits has 1 dimension: it must be {rows, classes} (a single row is "
                     "{1, classes})");
  size_t classes = logits->shape[logits->ndim - 1], rows = 1;
  for (int i = 0; i + 1 < logits->ndim; i++) rows *= logits->shape[i];
  if (classes == 0)
    return OCAL_FAIL(OCAL_SHAPE_MISMATCH, "logits has 0 classes (its last dimension)");
  if (labels->numel != rows)
    return OCAL_FAIL(OCAL_SHAPE_MISMATCH,
                     "labels has %zu elements but logits has %zu rows of %zu classes: one label "
                     "per row",
                     labels->numel, rows, classes);
  if (loss && loss->numel != rows)
    return OCAL_FAIL(OCAL_SHAPE_MISMATCH,
                     "loss has %zu elements but logits has %zu rows: one loss per row",
                     loss->numel, rows);
  if (grad && grad->numel != logits->numel)
    return OCAL_FAIL(OCAL_SHAPE_MISMATCH,
                     "grad has %zu elements but logits has %zu: it must have logits' shape",
                     grad->numel, logits->numel);
  /* grad may replace the logits (the same range); any other shared memory between outputs
   * and inputs would be read after it was written. */
  if (grad && (status = ocal__ew_check_alias(logits, grad, func)) != OCAL_OK) return status;
  if ((grad && overlap(grad, labels)) || (loss && (overlap(loss, logits) ||
                                                    overlap(loss, labels) || overlap(loss, grad))))
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT,
                     "%s overlaps %s: outputs need memory of their own (only grad may be logits)",
                     grad && overlap(grad, labels) ? "grad" : "loss",
                     grad && overlap(grad, labels) ? "labels"
                     : overlap(loss, logits)       ? "logits"
                     : overlap(loss, labels)       ? "labels"
                                                   : "grad");
  if (rows == 0) return OCAL_OK;

  char options[200];
  snprintf(options, sizeof options, "%s -DL=%s%s%s%s", type_options(logits->dtype),
           ocal__dtype_cl_type(labels->dtype), ocal__dtype_is_signed(labels->dtype) ? " -DL_SIGNED" : "",
           loss ? " -DHAS_LOSS" : "", grad ? " -DHAS_GRAD" : "");
  cl_mem none = NULL;
  cl_ulong zoff = logits->offset, loff = labels->offset;
  cl_ulong lossoff = loss ? loss->offset : 0, goff = grad ? grad->offset : 0;
  cl_ulong nrows = rows, ncls = classes;
  const ocal__arg args[] = {OCAL__ARG(logits->mem), OCAL__ARG(zoff),
                            OCAL__ARG(labels->mem), OCAL__ARG(loff),
                            loss ? OCAL__ARG(loss->mem) : OCAL__ARG(none), OCAL__ARG(lossoff),
                            grad ? OCAL__ARG(grad->mem) : OCAL__ARG(none), OCAL__ARG(goff),
                            OCAL__ARG(nrows), OCAL__ARG(ncls)};
  return run(logits->ctx, options, "ocal_softmax_xent", rows, 10, args, __func__);
}
