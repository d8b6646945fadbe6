/* ocal — sparse products: argument checks, and the host side of the kernels in
 * cl/sparse_spmv.cl (which one runs is decided per matrix in csr.c). */
#include <stdio.h>
#include <string.h>

#include "sparse_internal.h"

/* A value-type scalar as a kernel argument. */
typedef struct scalar {
  float f;
  double d;
} scalar;

static ocal__arg scalar_arg(ocal_dtype vt, const scalar *s) {
  return vt == OCAL_F32 ? OCAL__ARG(s->f) : OCAL__ARG(s->d);
}

static ocal_status launch(ocal_csr a, const char *kernel, const char *extra, size_t global,
                          size_t local, ocal__arg *args, size_t nargs, const char *func) {
  char opt[256];
  ocal__csr_options(a->vt, a->it, extra, opt, sizeof opt);
  ocal__kernel *k;
  ocal_status s = ocal__library_kernel_from(a->ctx, "sparse_spmv", opt, kernel, &k, NULL, func);
  if (s != OCAL_OK) return s;
  if (local == 0) return ocal__kernel_run(a->ctx, k, global, nargs, args, func);
  return ocal__kernel_run_nd(a->ctx, k, 1, &global, &local, nargs, args, func);
}

/* The words of OCAL_SPMV_LOADS, by OCAL__SPMV_LOADS_* value (src/core/settings.c). */
static const char *const loads_words[] = {"auto", "plain", "cs", "nc", "cg", "cs-nc", "cs-cg"};

/* The build options of the PTX cache hints for the stream and merge kernels ("" for plain
 * loads). OCAL_SPMV_LOADS names them; auto streams the matrix (cs: read once, evicted first,
 * so that x keeps its place in L2; 1.10x on the power-law matrix on an H100,
 * docs/sparse.md) on devices whose driver reports a PTX compute capability, unless that
 * build failed for this matrix before. A hint named on a device without PTX is refused here,
 * before any build: inline PTX must not reach another compiler (src/core/ptx_hints.c). */
static ocal_status load_hints(ocal_csr a, char *out, size_t size, const char *func) {
  int named = a->ctx->settings.spmv_loads;
  out[0] = '\0';
  if (named > OCAL__SPMV_LOADS_PLAIN && !ocal__ptx_hints_allowed(a->ctx))
    return ocal__fail(OCAL_UNSUPPORTED, func,
                      "OCAL_SPMV_LOADS=%s names NVIDIA PTX cache hints for the %s kernel, but "
                      "this device's driver reports no PTX compute capability, so they cannot "
                      "be built here: unset OCAL_SPMV_LOADS, or set it to auto or plain",
                      loads_words[named], a->kind == OCAL__SPMV_STREAM ? "stream" : "merge");
  int h = ocal__ptx_hint_choose(a->ctx, named, OCAL__SPMV_LOADS_AUTO, OCAL__SPMV_LOADS_CS,
                                OCAL__SPMV_LOADS_PLAIN, a->plain_loads);
  int s = h == OCAL__SPMV_LOADS_CS || h == OCAL__SPMV_LOADS_CS_NC || h == OCAL__SPMV_LOADS_CS_CG;
  int x = h == OCAL__SPMV_LOADS_NC || h == OCAL__SPMV_LOADS_CS_NC   ? 1
          : h == OCAL__SPMV_LOADS_CG || h == OCAL__SPMV_LOADS_CS_CG ? 2
                                                                     : 0;
  if (!s && !x) return OCAL_OK;
  const char *t = "", *tc = "", *i = "", *ic = "";
  if (!ocal__ptx_type(a->vt, &t, &tc) || !ocal__ptx_type(a->it, &i, &ic)) return OCAL_OK;
  snprintf(out, size, "%s%s%s -DPTX_T=%s -DPTX_TC=%s -DPTX_I=%s -DPTX_IC=%s", s ? " -DPTX_S" : "",
           x ? " -DPTX_X=" : "", x == 1 ? "1" : x == 2 ? "2" : "", t, tc, i, ic);
  return OCAL_OK;
}

/* The number of work-groups for `items` rows handled `per_group` at a time, capped so that
 * the grid-stride loops in the kernels take the rest. */
static size_t groups_for(size_t items, size_t per_group) {
  size_t g = ocal__ceil_div(items, per_group);
  if (g > 65536 * 8) g = 65536 * 8;
  return g ? g : 1;
}

static ocal_status run_product(ocal_csr a, double alpha, ocal_buffer x, double beta,
                               ocal_buffer y, size_t k, const char *func);

ocal_status ocal__spmm_run(ocal_csr a, ocal_transpose trans, double alpha, ocal_buffer x,
                           double beta, ocal_buffer y, size_t k, const char *func) {
  if (trans == OCAL_TRANS) {
    ocal_status s = ocal__csr_transposed(a, func, &a);
    if (s != OCAL_OK) return s;
  }
  ocal_status s = run_product(a, alpha, x, beta, y, k, func);
  int named = a->ctx->settings.spmv_loads;
  /* A device with PTX whose compiler still refused the named hints (load_hints refuses them
   * before any build where there is no PTX). */
  if (s == OCAL_BUILD_FAILED && named > OCAL__SPMV_LOADS_PLAIN && k == 1 &&
      (a->kind == OCAL__SPMV_STREAM || a->kind == OCAL__SPMV_MERGE)) {
    ocal__append_error(
        " -- OCAL_SPMV_LOADS=%s names NVIDIA PTX cache hints, which this "
        "device's compiler did not build: unset it, or set it to auto or plain",
        loads_words[named]);
    return s;
  }
  /* The automatic cache hints where the compiler refused them: plain loads from now on. */
  if (s == OCAL_BUILD_FAILED && !a->plain_loads &&
      a->ctx->settings.spmv_loads == OCAL__SPMV_LOADS_AUTO &&
      (a->kind == OCAL__SPMV_STREAM || a->kind == OCAL__SPMV_MERGE)) {
    a->plain_loads = 1;
    s = run_product(a, alpha, x, beta, y, k, func);
  }
  return s;
}

/* y = alpha A x + beta y (or the block product) with the matrix's kernel. */
static ocal_status run_product(ocal_csr a, double alpha, ocal_buffer x, double beta,
                               ocal_buffer y, size_t k, const char *func) {
  ocal_status s;
  scalar al = {(float)alpha, alpha}, be = {(float)beta, beta};
  int64_t rows64 = (int64_t)a->rows;
  int32_t rows32 = (int32_t)a->rows;
  cl_ulong xoff = x->offset, yoff = y->offset;
  ocal__arg rows_arg = a->it == OCAL_I64 ? OCAL__ARG(rows64) : OCAL__ARG(rows32);
  if (k > 1) {
    cl_ulong kk = k;
    ocal__arg args[] = {rows_arg,         OCAL__ARG(kk),   OCAL__ARG(a->rp->mem),
                        OCAL__ARG(a->ci->mem), OCAL__ARG(a->v->mem), OCAL__ARG(x->mem),
                        OCAL__ARG(xoff),  OCAL__ARG(y->mem), OCAL__ARG(yoff),
                        scalar_arg(a->vt, &al), scalar_arg(a->vt, &be)};
    return launch(a, "spmm_rowcol", NULL, a->rows * k, 0, args, 11, func);
  }
  if (a->kind == OCAL__SPMV_SCALAR) {
    ocal__arg args[] = {rows_arg,          OCAL__ARG(a->rp->mem), OCAL__ARG(a->ci->mem),
                        OCAL__ARG(a->v->mem), OCAL__ARG(x->mem), OCAL__ARG(xoff),
                        OCAL__ARG(y->mem), OCAL__ARG(yoff), scalar_arg(a->vt, &al),
                        scalar_arg(a->vt, &be)};
    return launch(a, "spmv_scalar", NULL, a->rows, 0, args, 10, func);
  }
  char extra[160], hints[96] = "";
  if (a->kind == OCAL__SPMV_STREAM || a->kind == OCAL__SPMV_MERGE) {
    s = load_hints(a, hints, sizeof hints, func);
    if (s != OCAL_OK) return s;
  }
  if (a->kind == OCAL__SPMV_STREAM) {
    const size_t swg = a->swg;
    snprintf(extra, sizeof extra, "-DWG=%zu -DCAP=%u%s", swg, a->cap, hints);
    int64_t nb64 = (int64_t)a->nblocks;
    int32_t nb32 = (int32_t)a->nblocks;
    ocal__arg args[] = {a->it == OCAL_I64 ? OCAL__ARG(nb64) : OCAL__ARG(nb32),
                        OCAL__ARG(a->blocks->mem), OCAL__ARG(a->rp->mem),
                        OCAL__ARG(a->ci->mem), OCAL__ARG(a->v->mem), OCAL__ARG(x->mem),
                        OCAL__ARG(xoff), OCAL__ARG(y->mem), OCAL__ARG(yoff),
                        scalar_arg(a->vt, &al), scalar_arg(a->vt, &be)};
    return launch(a, "spmv_stream", extra, groups_for(a->nblocks, 1) * swg, swg, args, 11, func);
  }
  if (a->kind == OCAL__SPMV_MERGE) {
    const size_t swg = a->swg;
    snprintf(extra, sizeof extra, "-DWG=%zu -DIPT=%u%s", swg, a->ipt, hints);
    int64_t nnz64 = (int64_t)a->nnz, nt64 = (int64_t)a->ntiles;
    int32_t nnz32 = (int32_t)a->nnz, nt32 = (int32_t)a->ntiles;
    int wide = a->it == OCAL_I64;
    ocal__arg args[] = {rows_arg, wide ? OCAL__ARG(nnz64) : OCAL__ARG(nnz32),
                        wide ? OCAL__ARG(nt64) : OCAL__ARG(nt32), OCAL__ARG(a->tiles->mem),
                        OCAL__ARG(a->rp->mem), OCAL__ARG(a->ci->mem), OCAL__ARG(a->v->mem),
                        OCAL__ARG(x->mem), OCAL__ARG(xoff), OCAL__ARG(y->mem), OCAL__ARG(yoff),
                        OCAL__ARG(a->carry->mem), scalar_arg(a->vt, &al), scalar_arg(a->vt, &be)};
    s = launch(a, "spmv_merge", extra, groups_for(a->ntiles, 1) * swg, swg, args, 14, func);
    if (s != OCAL_OK || a->ntiles < 2) return s;
    /* The rows cut between tiles, after every tile's part is written (in-order queue). */
    ocal__arg fix[] = {wide ? OCAL__ARG(nt64) : OCAL__ARG(nt32), OCAL__ARG(a->tiles->mem),
                       OCAL__ARG(a->rp->mem), OCAL__ARG(y->mem), OCAL__ARG(yoff),
                       OCAL__ARG(a->carry->mem), scalar_arg(a->vt, &al), scalar_arg(a->vt, &be)};
    return launch(a, "spmv_merge_fixup", extra, a->ntiles, 0, fix, 8, func);
  }
  const size_t wg = a->wg;
  if (a->kind == OCAL__SPMV_VECTOR) {
    snprintf(extra, sizeof extra, "-DVL=%u -DWG=%zu", a->lanes, wg);
    ocal__arg args[] = {rows_arg,          OCAL__ARG(a->rp->mem), OCAL__ARG(a->rp->mem),
                        OCAL__ARG(a->ci->mem), OCAL__ARG(a->v->mem), OCAL__ARG(x->mem),
                        OCAL__ARG(xoff),   OCAL__ARG(y->mem),  OCAL__ARG(yoff),
                        scalar_arg(a->vt, &al), scalar_arg(a->vt, &be)};
    size_t global = groups_for(a->rows, wg / a->lanes) * wg;
    return launch(a, "spmv_vector", extra, global, wg, args, 11, func);
  }
  /* Adaptive: the short rows through the vector kernel, the long ones a group each. The
   * two launches write disjoint rows. */
  int64_t ns64 = (int64_t)a->n_short, nl64 = (int64_t)a->n_long;
  int32_t ns32 = (int32_t)a->n_short, nl32 = (int32_t)a->n_long;
  if (a->n_short > 0) {
    snprintf(extra, sizeof extra, "-DVL=%u -DWG=%zu -DROWLIST", a->lanes, wg);
    ocal__arg args[] = {a->it == OCAL_I64 ? OCAL__ARG(ns64) : OCAL__ARG(ns32),
                        OCAL__ARG(a->short_rows->mem), OCAL__ARG(a->rp->mem),
                        OCAL__ARG(a->ci->mem), OCAL__ARG(a->v->mem), OCAL__ARG(x->mem),
                        OCAL__ARG(xoff), OCAL__ARG(y->mem), OCAL__ARG(yoff),
                        scalar_arg(a->vt, &al), scalar_arg(a->vt, &be)};
    size_t global = groups_for(a->n_short, wg / a->lanes) * wg;
    s = launch(a, "spmv_vector", extra, global, wg, args, 11, func);
    if (s != OCAL_OK) return s;
  }
  snprintf(extra, sizeof extra, "-DWG=%zu", wg);
  ocal__arg args[] = {a->it == OCAL_I64 ? OCAL__ARG(nl64) : OCAL__ARG(nl32),
                      OCAL__ARG(a->long_rows->mem), OCAL__ARG(a->rp->mem),
                      OCAL__ARG(a->ci->mem), OCAL__ARG(a->v->mem), OCAL__ARG(x->mem),
                      OCAL__ARG(xoff), OCAL__ARG(y->mem), OCAL__ARG(yoff),
                      scalar_arg(a->vt, &al), scalar_arg(a->vt, &be)};
  return launch(a, "spmv_long", extra, groups_for(a->n_long, 1) * wg, wg, args, 11, func);
}

/* Fails when x and y share memory and their ranges overlap. */
static ocal_status check_overlap(ocal_buffer x, ocal_buffer y, const char *func) {
  if (ocal__buffers_overlap(x, y))
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "the input and the output overlap; the product cannot run in place");
  return OCAL_OK;
}

static ocal_status check_product(ocal_transpose trans, ocal_csr a, ocal_buffer x, ocal_buffer y,
                                 int block, size_t *k_out, const char *func) {
  ocal_status s = ocal__csr_check(a, func);
  if (s == OCAL_OK) s = ocal__check_buffer_arg(x, "x", func);
  if (s == OCAL_OK) s = ocal__check_buffer_arg(y, "y", func);
  if (s != OCAL_OK) return s;
  if (trans != OCAL_NO_TRANS && trans != OCAL_TRANS)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func, "trans is %d; use OCAL_NO_TRANS or OCAL_TRANS",
                      (int)trans);
  if (x->ctx != a->ctx || y->ctx != a->ctx)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "x or y belongs to another context than the matrix");
  if (x->dtype != a->vt || y->dtype != a->vt)
    return ocal__fail(OCAL_TYPE_MISMATCH, func,
                      "the matrix holds %s but x is %s and y is %s; all three must match",
                      ocal_dtype_name(a->vt), ocal_dtype_name(x->dtype), ocal_dtype_name(y->dtype));
  size_t in = trans == OCAL_TRANS ? a->rows : a->cols;
  size_t outn = trans == OCAL_TRANS ? a->cols : a->rows;
  size_t k = 1;
  if (block) {
    if (x->ndim == 2) k = x->shape[1];
    size_t yk = y->ndim == 2 ? y->shape[1] : 1;
    if ((x->ndim != 1 && x->ndim != 2) || (y->ndim != 1 && y->ndim != 2) || k == 0 ||
        yk != k || x->numel != in * k || y->numel != outn * k) {
      /* The shapes, not only the element counts: a Y of {k, m} for {m, k} has the count. */
      char xs[96], ys[96];
      ocal__shape_format(x->ndim, x->shape, xs, sizeof xs);
      ocal__shape_format(y->ndim, y->shape, ys, sizeof ys);
      return ocal__fail(OCAL_SHAPE_MISMATCH, func,
                        "op(A) is %zu x %zu, so X must be {%zu, k} and Y {%zu, k} (row-major, "
                        "k >= 1, 1-D for k = 1); X is %s and Y is %s",
                        outn, in, in, outn, xs, ys);
    }
  } else if (x->numel != in || y->numel != outn) {
    return ocal__fail(OCAL_SHAPE_MISMATCH, func,
                      "op(A) is %zu x %zu, so x needs %zu elements and y %zu; they have %zu and %zu",
                      outn, in, in, outn, x->numel, y->numel);
  }
  *k_out = k;
  return check_overlap(x, y, func);
}

ocal_status ocal_spmv(ocal_transpose trans, double alpha, ocal_csr a, ocal_buffer x, double beta,
                      ocal_buffer y) {
  size_t k;
  ocal_status s = check_product(trans, a, x, y, 0, &k, __func__);
  if (s != OCAL_OK) return s;
  return ocal__spmm_run(a, trans, alpha, x, beta, y, 1, __func__);
}

ocal_status ocal__spmm_checked(ocal_transpose trans, double alpha, ocal_csr a, ocal_buffer x,
                               double beta, ocal_buffer y, const char *func) {
  size_t k;
  ocal_status s = check_product(trans, a, x, y, 1, &k, func);
  if (s != OCAL_OK) return s;
  return ocal__spmm_run(a, trans, alpha, x, beta, y, k, func);
}

ocal_status ocal_spmm(ocal_transpose trans, double alpha, ocal_csr a, ocal_buffer x, double beta,
                      ocal_buffer y) {
  return ocal__spmm_checked(trans, alpha, a, x, beta, y, __func__);
}
