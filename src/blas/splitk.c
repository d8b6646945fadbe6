/* ocal — split-K GEMM for outputs too small to fill the device.
 *
 * Why: CLBlast's fast (indirect) Xgemm kernel gives each work-group one MWG x NWG tile of C.
 * With the Hopper set (64 x 128 tiles of 64 threads) a 1024 x 1024 output is 128
 * work-groups for 132 SMs, each able to hold several: most of the GPU idles, and CLBlast's
 * direct kernel, which it uses below XGEMM_MIN_INDIRECT_SIZE, tops out near 15 TFLOP/s.
 * Splitting k into S slices gives S times as many work-groups: one strided-batched CLBlast
 * GEMM computes the S partial products op(A)[:, K_s] op(B)[K_s, :] into a scratch {S, m, n}
 * (batch s starts k/S columns further into op(A) and k/S rows further into op(B)), and one
 * small ocal kernel (cl/blas_splitk.cl) sums the slices into C with beta. CLBlast keeps one
 * parameter set per device, so this is the one way to get more parallelism per call
 * without switching sets (which would rebuild its programs).
 *
 * When it pays (measured on an NVIDIA H200, driver 580.159.04, built-in Hopper set with
 * XGEMM_MIN_INDIRECT_SIZE=1536, bench/gemm_splitk, GFLOP/s; PyTorch FP32 in the same run):
 *   shape            plain   split S=2/4/8          PyTorch
 *   512^3            11715   10148/9518/8634        17260
 *   1024^3           15476   14374/13963/12701      38296
 *   1536^3           17917   15693/15132/13991
 *   2048^3           31055   26486/15636/14848      50440
 *   1024x1024x4096   12078   15327/15607/15470
 *   MLP 256x512x784   7963    5459/5408/5302        15568 (every MLP shape: split slower)
 * Products below the switch point already run CLBlast's direct kernel, which is not starved
 * for work-groups (1024^3: 1024 groups of 128 threads): splitting them only adds the sum
 * pass, so they are never split. What wins is a product whose volume sends it to the
 * indirect kernel while its output has few tiles (1024x1024x4096: 128 tiles, 1.29x with
 * S=4, whose slices run the direct kernel). With the switch point lowered to 512 the
 * slices run the indirect kernel and gain more (1024x1024x4096 23390, 1.9x; 1536^3 S=8
 * 24210 vs 17917), but the lower switch point makes every unsplit product between 512^3
 * and 1536^3 slower (1024^3: 8737, 512^3: 2438), and CLBlast has one set per device, so
 * the shipped switch point stays at 1536. The rule: split when the plain call would run the
 * indirect kernel (m n k >= XGEMM_MIN_INDIRECT_SIZE^3) with fewer than half the
 * work-groups the device holds well (OCAL__SPLITK_WG_PER_CU per compute unit); S fills
 * them, at most 16, slices of at least 256.
 *
 * Since ocal's own GEMM kernel (gemm_own.c) takes f32 products below 4096^3 on GPUs, with
 * a split of k of its own, this path serves the products left to CLBlast (f64, batched
 * entries are never split, OCAL_GEMM=clblast).
 *
 * OCAL_GEMM_SPLITK: unset or 1 = the automatic rule, 0 = never, N >= 2 = always N slices
 * for every non-batched product with k >= N (tests use it to exercise the path on PoCL,
 * benches to measure it). */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "blas_internal.h"

#ifdef OCAL_HAVE_CLBLAST
#include <clblast_c.h>

/* Work-groups per compute unit that the indirect kernel needs to run well: the Hopper set
 * reaches 43 TFLOP/s at 4096^3 with 2048 work-groups on 132 SMs (about 16 per SM, several
 * waves) and is starved at 128; four per SM is the point below which splitting is tried. */
#define OCAL__SPLITK_WG_PER_CU 4
/* No slice shorter than this: below it the sum pass and CLBlast's per-slice padding cost
 * more than the extra work-groups gain. */
#define OCAL__SPLITK_MIN_KC 256
#define OCAL__SPLITK_MAX_SLICES 16
/* The scratch {S, m, n} stays small beside what splitting is for. */
#define OCAL__SPLITK_MAX_SCRATCH ((size_t)256 << 20)

/* -1 automatic, 0 off, N >= 2 forced. */
static long splitk_mode(void) {
  const char *v = getenv("OCAL_GEMM_SPLITK");
  if (!v || !*v || strcmp(v, "1") == 0 || strcasecmp(v, "auto") == 0) return -1;
  if (strcmp(v, "0") == 0 || strcasecmp(v, "off") == 0 || strcasecmp(v, "no") == 0) return 0;
  char *end;
  long n = strtol(v, &end, 10);
  if (*end || n < 2) return -1;
  return n > 1024 ? 1024 : n;
}

/* The automatic rule: the number of slices, or 0 for a plain call. */
static size_t auto_slices(ocal_context ctx, ocal_dtype dtype, size_t m, size_t n, size_t k) {
  ocal__gemm_params p;
  if (!ocal__blas_params_in_effect(ctx, dtype, &p)) return 0;
  /* ocal calls CLBlast column-major with the operands swapped: its m is our n. */
  size_t mwg = (size_t)p.v[OCAL__P_MWG], nwg = (size_t)p.v[OCAL__P_NWG];
  size_t kwg = (size_t)p.v[OCAL__P_KWG], t = (size_t)p.v[OCAL__P_MIN_INDIRECT];
  /* Below the switch point the plain call runs the direct kernel: never starved. */
  double vol = (double)m * (double)n * (double)k;
  if (vol < (double)t * (double)t * (double)t) return 0;
  size_t tiles = ocal__ceil_div(n, mwg) * ocal__ceil_div(m, nwg);
  size_t full = (size_t)ctx->info.compute_units * OCAL__SPLITK_WG_PER_CU;
  if (tiles * 2 > full) return 0;
  size_t s = ocal__ceil_div(full, tiles);
  if (s > OCAL__SPLITK_MAX_SLICES) s = OCAL__SPLITK_MAX_SLICES;
  if (s > k / OCAL__SPLITK_MIN_KC) s = k / OCAL__SPLITK_MIN_KC;
  if (s < 2) return 0;
  /* Prefer a count that divides k into whole KWG steps: no remainder call, no padding. */
  for (size_t d = s; d >= 2 && d * 2 >= s; d--)
    if (k % d == 0 && (k / d) % kwg == 0) {
      s = d;
      break;
    }
  return s;
}

ocal_status ocal__gemm_splitk_sum(ocal_context ctx, ocal_dtype dtype, cl_mem w, size_t mn,
                                  size_t slices, double beta, ocal_buffer c) {
  char options[128];
  ocal__dtype_options(dtype, options, sizeof options);
  ocal__kernel *k;
  ocal_status s = ocal__library_kernel(ctx, "blas_splitk", options, "ocal_splitk_sum", &k);
  if (s != OCAL_OK) return s;
  cl_ulong c_offset = c->offset, n = mn;
  cl_uint count = (cl_uint)slices;
  cl_int read_c = beta != 0.0;
  float beta_f = (float)beta;
  ocal__arg args[] = {OCAL__ARG(c->mem), OCAL__ARG(c_offset), OCAL__ARG(w), OCAL__ARG(n),
                      OCAL__ARG(count),
                      dtype == OCAL_F32 ? OCAL__ARG(beta_f) : OCAL__ARG(beta),
                      OCAL__ARG(read_c)};
  return ocal__kernel_run(ctx, k, mn, sizeof args / sizeof args[0], args);
}

size_t ocal__gemm_splitk_slices(ocal_context ctx, ocal_dtype dtype, size_t m, size_t n,
                                size_t k) {
  long mode = splitk_mode();
  if (mode == 0) return 0;
  size_t slices = mode > 0 ? (size_t)mode : auto_slices(ctx, dtype, m, n, k);
  if (slices < 2 || k < slices) return 0;
  size_t es = dtype == OCAL_F32 ? 4 : 8, bytes;
  if (ocal__mul_overflows(m * n, slices * es, &bytes) || bytes > OCAL__SPLITK_MAX_SCRATCH ||
      bytes > ctx->info.max_alloc_bytes / 4)
    return 0;
  return slices;
}

int ocal__gemm_splitk(ocal_context ctx, ocal_dtype dtype, ocal_transpose ta, ocal_transpose tb,
                      size_t m, size_t n, size_t k, double alpha, ocal_buffer a,
                      ocal_buffer b, double beta, ocal_buffer c, ocal_status *status) {
  size_t slices = ocal__gemm_splitk_slices(ctx, dtype, m, n, k);
  if (!slices) return 0;
  size_t es = dtype == OCAL_F32 ? 4 : 8, mn = m * n, bytes = mn * slices * es;
  /* CLBlast indexes with int: keep every offset it sees within range. */
  if (a->offset + a->numel > 0x7fffffff || b->offset + b->numel > 0x7fffffff ||
      mn * slices > 0x7fffffff)
    return 0;

  size_t kc = k / slices, rem = k - kc * slices;
  size_t a_cols = a->shape[a->ndim - 1], b_cols = b->shape[b->ndim - 1];
  /* Slice s of op(A) is columns [s kc, (s+1) kc): for a stored A (m x k) that is kc
   * elements on, for a transposed one (k x m) kc rows of a_cols. Likewise op(B)'s rows. */
  size_t a_stride = ta ? kc * a_cols : kc, b_stride = tb ? kc : kc * b_cols;
  *status = ocal__gemm_check_temp(ctx, dtype, ta, tb, m, n, kc, a, b, c, slices);
  if (*status != OCAL_OK) return 1;

  cl_mem w;
  *status = ocal__device_alloc(ctx, bytes, &w);
  if (*status != OCAL_OK) return 1;
  cl_command_queue q = ctx->queue;
  /* Zeros first: CLBlast reads C even with beta 0 when it pads it, and the pool's memory
   * may hold NaN patterns. */
  double zero = 0.0;
  cl_int err = clEnqueueFillBuffer(q, w, &zero, es, 0, bytes, 0, NULL, NULL);
  if (err != CL_SUCCESS) {
    ocal__device_free(ctx, w);
    *status = ocal__cl_fail(ctx->info.name, err, "clEnqueueFillBuffer(split-K scratch)", "ocal_gemm");
    return 1;
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
  return 1;
}

#endif /* OCAL_HAVE_CLBLAST */
