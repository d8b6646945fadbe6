/* ocal — split-K GEMM for outputs too small to fill the device.
 *
 * Why: CLBlast's fast (indirect) Xgemm kernel gives each work-group one MWG x NWG tile of C,
 * so a product with a small output and a long k leaves most of the device idle. Splitting k
 * into S slices gives S times as many work-groups: one strided-batched CLBlast GEMM computes
 * the S partial products op(A)[:, K_s] op(B)[K_s, :] into a scratch {S, m, n} (batch s
 * starts k/S columns further into op(A) and k/S rows further into op(B)), and one small ocal
 * kernel (cl/blas_splitk.cl) sums the slices into C with beta. CLBlast keeps one parameter
 * set per device, so this is the one way to get more parallelism per call without switching
 * sets (which would rebuild its programs). When it pays, and why the shipped switch point
 * stays where it is: docs/blas-engines.md, section "Split-K"; the rule is in rule.c.
 *
 * OCAL_GEMM_SPLITK: unset or 1 = the automatic rule, 0 = never, N >= 2 = always N slices
 * for every non-batched product with k >= N (tests use it to exercise the path on PoCL). */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine.h"

#ifdef OCAL_HAVE_CLBLAST
#include <clblast_c.h>

/* Runs the split the rule chose: choice->slices slices (the rule checked that every index
 * CLBlast sees fits its int). */
static ocal_status splitk_run(const ocal__gemm_call *g, const ocal__gemm_choice *choice,
                              int *not_built) {
  *not_built = 0;
  ocal_status st;
  ocal_status *status = &st;
  ocal_context ctx = g->ctx;
  ocal_dtype dtype = g->dtype;
  ocal_transpose ta = g->ta, tb = g->tb;
  size_t m = g->m, n = g->n, k = g->k, slices = choice->slices;
  double alpha = g->alpha, beta = g->beta;
  ocal_buffer a = g->a, b = g->b, c = g->c;
  size_t es = dtype == OCAL_F32 ? 4 : 8, mn = m * n, bytes = mn * slices * es;

  size_t kc = k / slices, rem = k - kc * slices;
  size_t a_cols = a->shape[a->ndim - 1], b_cols = b->shape[b->ndim - 1];
  /* Slice s of op(A) is columns [s kc, (s+1) kc): for a stored A (m x k) that is kc
   * elements on, for a transposed one (k x m) kc rows of a_cols. Likewise op(B)'s rows. */
  size_t a_stride = ta ? kc * a_cols : kc, b_stride = tb ? kc : kc * b_cols;
  *status = ocal__gemm_check_temp(ctx, dtype, ta, tb, m, n, kc, a, b, c, slices);
  if (*status != OCAL_OK) return st;

  cl_mem w;
  *status = ocal__device_alloc(ctx, bytes, &w, "ocal_gemm");
  if (*status != OCAL_OK) return st;
  cl_command_queue q = ocal__context_queue(ctx);
  /* Zeros first: CLBlast reads C even with beta 0 when it pads it, and the pool's memory
   * may hold NaN patterns. */
  double zero = 0.0;
  cl_int err = clEnqueueFillBuffer(q, w, &zero, es, 0, bytes, 0, NULL, NULL);
  if (err != CL_SUCCESS) {
    ocal__device_free(ctx, w);
    return ocal__cl_fail(ocal__context_info(ctx)->name, err, "clEnqueueFillBuffer(split-K scratch)", "ocal_gemm");
  }
  CLBlastStatusCode s;
  CLBlastTranspose cta = ta ? CLBlastTransposeYes : CLBlastTransposeNo;
  CLBlastTranspose ctb = tb ? CLBlastTransposeYes : CLBlastTransposeNo;
  /* Column-major C^T = op(B)^T op(A)^T, as in ocal_gemm (blas.c). */
  if (dtype == OCAL_F32)
    s = OCAL__CLBLAST(CLBlastSgemmStridedBatched(
        CLBlastLayoutColMajor, ctb, cta, n, m, kc, (float)alpha, b->mem, b->offset, b_cols,
        b_stride, a->mem, a->offset, a_cols, a_stride, 0.0f, w, 0, n, mn, slices, &q, NULL));
  else
    s = OCAL__CLBLAST(CLBlastDgemmStridedBatched(
        CLBlastLayoutColMajor, ctb, cta, n, m, kc, alpha, b->mem, b->offset, b_cols, b_stride,
        a->mem, a->offset, a_cols, a_stride, 0.0, w, 0, n, mn, slices, &q, NULL));
  const char *call = dtype == OCAL_F32 ? "CLBlastSgemmStridedBatched (split-K)"
                                       : "CLBlastDgemmStridedBatched (split-K)";
  /* The last k mod S columns of op(A) (rows of op(B)) go into slice 0 with beta 1. */
  if (s == CLBlastSuccess && rem) {
    size_t ao = a->offset + slices * a_stride, bo = b->offset + slices * b_stride;
    call = dtype == OCAL_F32 ? "CLBlastSgemm (split-K remainder)"
                             : "CLBlastDgemm (split-K remainder)";
    if (dtype == OCAL_F32)
      s = OCAL__CLBLAST(CLBlastSgemm(CLBlastLayoutColMajor, ctb, cta, n, m, rem, (float)alpha,
                                     b->mem, bo, b_cols, a->mem, ao, a_cols, 1.0f, w, 0, n, &q,
                                     NULL));
    else
      s = OCAL__CLBLAST(CLBlastDgemm(CLBlastLayoutColMajor, ctb, cta, n, m, rem, alpha, b->mem,
                                     bo, b_cols, a->mem, ao, a_cols, 1.0, w, 0, n, &q, NULL));
  }
  if (s != CLBlastSuccess)
    *status = ocal__clblast_fail(ctx, s, call, "ocal_gemm");
  else
    *status = ocal__gemm_splitk_sum(ctx, dtype, w, mn, slices, beta, c);
  ocal__device_free(ctx, w);
  return st;
}

const ocal__gemm_engine ocal__gemm_engine_splitk = {"split-K over CLBlast", NULL, splitk_run};

#endif /* OCAL_HAVE_CLBLAST */
