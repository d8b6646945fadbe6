/* ocal — the tensor-core engine "tensor cores (mma.sync)": cl/gemm_mma.cl through inline PTX,
 * for f32 products in TF32 and for f16 and bf16 products (m16n8k16, f32 accumulation).
 *
 * Why: f32 GEMMs on a context whose precision is TF32 (OCAL_GEMM_PRECISION=tf32 or the
 * gemm_precision option; the default stays exact IEEE FP32) may round A and B to TF32 and
 * multiply on NVIDIA's tensor cores, well ahead of ocal's FP32 kernel; f16 and bf16 products
 * run there in any precision, their products being exact in f32 (figures:
 * docs/blas-engines.md, section "Tensor cores"). The rule (rule.c) picks this engine only
 * where the device's probe (tc_probe.c) passed for the type. Outputs of fewer tiles than
 * compute units split k (f32 only). */
#include "config.h"

#include <stdio.h>

#include "tensor_cores.h"

#define FUNC "ocal_gemm"
/* The kernel's block and work-group (cl/gemm_mma.cl: 8 warps of 32 as 2 x 4). */
#define TC_BLOCK 128 /* square blocks: 128 x 128, or TF32's small ones (L->small), 64 x 64 */
#define TC_SMALL 64
#define TC_THREADS 256
/* What the kernel's local tiles may take: NVIDIA's 48 KiB a work-group, or less where the
 * device (or OCAL_LIMITS) has less; stages that do not fit are dropped at build time. */
#define TC_LOCAL_MAX 49152u
#define TC_LOCAL_RESERVE 1024u /* bytes kept free of stages (see variant_options) */

/* The build options of the variant for a call. TF32: 128 x 128 blocks, k step 8 (or 64 x 64
 * blocks, k step 16: L->small), four cp.async stages and ldmatrix where every operand is
 * 16-byte aligned (VEC: offsets, leading dimensions and batch strides multiples of 16 bytes),
 * else its register-staged two-stage form (the same tile, element-wise edges). A 64 x 64
 * block needs k steps of 16: each of the 256 work-items copies whole 16-byte pieces. */
static void variant_options(ocal_context ctx, const char *spell, const ocal__tc_launch *L,
                            char *out, size_t size) {
  /* 16 bytes of elements: 4 f32 or 8 f16/bf16. */
  size_t w = L->dtype == OCAL_F32 ? 4 : 8;
  int vec = L->lda % w == 0 && L->ldb % w == 0 && L->ldc % w == 0 && L->a_off % w == 0 &&
            L->b_off % w == 0 && L->c_off % w == 0 && L->a_stride % w == 0 &&
            L->b_stride % w == 0 && L->c_stride % w == 0;
  uint64_t local = ocal__context_info(ctx)->local_mem_bytes;
  unsigned local_max = local < TC_LOCAL_MAX ? (unsigned)local : TC_LOCAL_MAX;
  /* The stages leave room for what the compiler adds to the kernel's own local memory: four
   * stages of exactly 48 KiB came out a few bytes over and did not launch. */
  local_max = local_max > TC_LOCAL_RESERVE ? local_max - TC_LOCAL_RESERVE : 0;
  if (L->dtype != OCAL_F32) {
    /* 128 x 128 x 32 blocks, two stages, cp.async (VEC) and ldmatrix for both operands, C
     * in the 16-bit type: the fastest 16-bit variant measured (docs/blas-engines.md,
     * section "Tensor cores"). */
    const char *t = L->dtype == OCAL_F16 ? "F16" : "BF16";
    snprintf(out, size,
             "-DMMA_%s -DOUT_%s%s -DTA=%d -DTB=%d -DVEC=%d -DCP_ASYNC=%d -DLDMATRIX=1 "
             "-DLOCAL_MAX=%u",
             t, t, spell, L->ta, L->tb, vec, vec, local_max);
    return;
  }
  const int block = L->small ? TC_SMALL : TC_BLOCK;
  snprintf(out, size,
           "-DMMA_TF32%s -DTA=%d -DTB=%d -DVEC=%d -DCP_ASYNC=%d -DLDMATRIX=1 -DBM=%d -DBN=%d "
           "-DBK=%d%s -DRASTER=8 -DLOCAL_MAX=%u",
           spell, L->ta, L->tb, vec, vec, block, block, L->small ? 16 : 8,
           vec ? " -DSTAGES=4" : "", local_max);
}

/* Builds (or finds) the variant and enqueues it. *not_built = 1 when it does not build or
 * takes fewer work-items than its 256 (nothing enqueued). */
ocal_status ocal__gemm_tc_enqueue(ocal_context ctx, const char *spell, const ocal__tc_launch *L,
                                  int *not_built) {
  char options[320];
  variant_options(ctx, spell, L, options, sizeof options);
  ocal__kernel *kern;
  *not_built = 0;
  ocal_status s =
      ocal__library_kernel_from(ctx, "gemm_mma", options, "ocal_gemm_mma", &kern, NULL, FUNC);
  if (s == OCAL_OK && kern->work_group_size < TC_THREADS)
    s = ocal__fail(OCAL_UNSUPPORTED, FUNC,
                   "the tensor-core kernel takes %zu work-items a group on %s, fewer than its %d",
                   kern->work_group_size, ocal__context_info(ctx)->name, TC_THREADS);
  if (s != OCAL_OK) {
    *not_built = 1;
    return s;
  }
  const size_t block = L->small ? TC_SMALL : TC_BLOCK;
  return ocal__tc_launch_run(ctx, kern, L, block, block, TC_THREADS);
}

ocal_status ocal__tc_launch_run(ocal_context ctx, ocal__kernel *kern, const ocal__tc_launch *L,
                                size_t bm, size_t bn, size_t threads) {
  cl_ulong a_off = L->a_off, b_off = L->b_off, c_off = L->c_off;
  cl_ulong as = L->a_stride, bs = L->b_stride, cs = L->c_stride;
  cl_uint lda = (cl_uint)L->lda, ldb = (cl_uint)L->ldb, ldc = (cl_uint)L->ldc;
  cl_uint m = (cl_uint)L->m, n = (cl_uint)L->n, k = (cl_uint)L->k;
  cl_uint kc = (cl_uint)L->kc, slices = (cl_uint)L->slices;
  /* alpha and beta in the kernels' accumulation type: double for f64, else f32. */
  int f64 = L->dtype == OCAL_F64;
  double alpha = L->alpha, beta = L->beta;
  float alpha_f = (float)alpha, beta_f = (float)beta;
  cl_int read_c = f64 ? beta != 0.0 : beta_f != 0.0f;
  ocal__arg args[] = {OCAL__ARG(L->a), OCAL__ARG(a_off), OCAL__ARG(lda), OCAL__ARG(as),
                      OCAL__ARG(L->b), OCAL__ARG(b_off), OCAL__ARG(ldb), OCAL__ARG(bs),
                      OCAL__ARG(L->c), OCAL__ARG(c_off), OCAL__ARG(ldc), OCAL__ARG(cs),
                      OCAL__ARG(m),    OCAL__ARG(n),     OCAL__ARG(k),   OCAL__ARG(kc),
                      OCAL__ARG(slices),
                      f64 ? OCAL__ARG(alpha) : OCAL__ARG(alpha_f),
                      f64 ? OCAL__ARG(beta) : OCAL__ARG(beta_f),
                      OCAL__ARG(read_c)};
  size_t local[3] = {threads, 1, 1};
  size_t global[3] = {ocal__ceil_div(L->n, bn) * threads, ocal__ceil_div(L->m, bm),
                      L->batch * L->slices};
  return ocal__kernel_run_nd(ctx, kern, 3, global, local, sizeof args / sizeof args[0], args,
                             FUNC);
}

void ocal__tc_launch_of(const ocal__gemm_call *g, ocal__tc_launch *L) {
  ocal_buffer a = g->a, b = g->b, c = g->c;
  size_t lda = a->shape[a->ndim - 1], ldb = b->shape[b->ndim - 1];
  ocal__tc_launch whole = {g->dtype,
                           g->ta == OCAL_TRANS,
                           g->tb == OCAL_TRANS,
                           g->m,
                           g->n,
                           g->k,
                           g->batch,
                           a->mem,
                           b->mem,
                           c->mem,
                           a->offset,
                           lda,
                           a->ndim == 3 ? a->shape[1] * lda : 0,
                           b->offset,
                           ldb,
                           b->ndim == 3 ? b->shape[1] * ldb : 0,
                           c->offset,
                           g->n,
                           g->m * g->n,
                           g->alpha,
                           g->beta,
                           g->k,
                           1,
                           0};
  *L = whole;
}

/* The slices of k for a product whose output has fewer bm x bn blocks than the device has
 * compute units: the kernel writes alpha times each slice's partial product into scratch *w
 * (elements of `elem` bytes) and ocal's split-k sum adds them and beta C, as gemm_own.c does.
 * Slices of at least 256 (so that a pipeline of k steps runs full), whole k steps, at most 8
 * of them; none where the scratch does not fit. */
void ocal__tc_split_k(const ocal__gemm_call *g, size_t bm, size_t bn, size_t kstep, size_t elem,
                      ocal__tc_launch *L, cl_mem *w) {
  ocal_context ctx = g->ctx;
  size_t slices = 1, kc = g->k;
  size_t cu = ocal__context_info(ctx)->compute_units ? ocal__context_info(ctx)->compute_units : 1;
  size_t tiles = ocal__ceil_div(g->m, bm) * ocal__ceil_div(g->n, bn);
  *w = NULL;
  if (g->batch == 1)
    while (slices < 8 && tiles * slices < cu && g->k / (slices * 2) >= 256) slices *= 2;
  if (slices == 1) return;
  kc = ocal__round_up(ocal__ceil_div(g->k, slices), kstep);
  slices = ocal__ceil_div(g->k, kc);
  size_t bytes;
  if (ocal__mul_overflows(g->m * g->n, slices * elem, &bytes) ||
      bytes > ocal__context_info(ctx)->max_alloc_bytes / 4 ||
      ocal__device_alloc(ctx, bytes, w, "ocal_gemm") != OCAL_OK) {
    *w = NULL; /* no room: one pass */
    return;
  }
  L->c = *w;
  L->c_off = 0;
  L->beta = 0.0;
  L->kc = kc;
  L->slices = slices;
}

static ocal_status tc_run(const ocal__gemm_call *g, const ocal__gemm_choice *choice,
                          int *not_built) {
  *not_built = 0;
  ocal_context ctx = g->ctx;
  if (!ocal__tc_probe_passed(ctx, g->dtype)) { /* the rule asked the probe: not reached */
    const char *detail = "";
    ocal__gemm_tc_answer(ctx, NULL, &detail, NULL, NULL);
    if (choice->named) return ocal__fail(OCAL_UNSUPPORTED, FUNC, "OCAL_GEMM=tc: %s", detail);
    *not_built = 1;
    return OCAL_OK;
  }
  ocal__tc_launch L;
  ocal__tc_launch_of(g, &L);
  cl_mem w = NULL;
  /* TF32: 64 x 64 blocks in one pass where those fill the device, else 128 x 128 tiles with k
   * split where they do not; the 16-bit kernels do neither. */
  if (g->dtype == OCAL_F32) {
    L.small = ocal__gemm_tc_small_blocks(ocal__context_info(ctx)->compute_units, g->m, g->n,
                                         g->batch);
    if (!L.small) ocal__tc_split_k(g, TC_BLOCK, TC_BLOCK, 8, sizeof(float), &L, &w);
  }
  int failed = 0;
  char spell[64];
  ocal__tc_spelling(ctx, spell, sizeof spell);
  ocal_status s = ocal__gemm_tc_enqueue(ctx, spell, &L, &failed);
  if (s == OCAL_OK && w)
    s = ocal__gemm_splitk_sum(ctx, OCAL_F32, w, g->m * g->n, L.slices, g->beta, g->c);
  if (w) ocal__device_free(ctx, w);
  if (failed && !choice->named) {
    /* blas.c runs the fallback; the build's message is not the caller's error. */
    *not_built = 1;
    return OCAL_OK;
  }
  if (failed && g->dtype != OCAL_F32)
    return ocal__fail(OCAL_UNSUPPORTED, FUNC,
                      "OCAL_GEMM=tc: the %s tensor-core kernel does not build on this device",
                      ocal_dtype_name(g->dtype));
  return s;
}

const ocal__gemm_engine ocal__gemm_engine_tc = {"tensor cores (tf32, mma.sync)",
                                                "tensor cores (f16/bf16, mma.sync)", tc_run};
