/* ocal — the engine "tensor cores (wgmma)": Hopper's wgmma (cl/gemm_wgmma.cl) for f32
 * products in TF32 and for f16 and bf16 products.
 *
 * Why an engine beside gemm_tc.c's mma.sync: wgmma's 128 x 256 (or 128 x 128) blocks, k steps
 * of 32 in the 128-byte swizzled layout and four stages (up to 193 KiB of local memory, which
 * a program rebuilt from PTX may take although OpenCL reports 48 KiB) run large products well
 * over twice as fast (docs/blas-engines.md, section "Tensor cores"). NVIDIA's OpenCL compiler
 * cannot emit wgmma, so the program is rebuilt from its PTX for sm_90a (src/core/ptx.c); the
 * probe (tc_probe.c) runs checked GEMMs of it per type on devices of compute capability 9.0
 * before the rule may pick it.
 *
 * The kernel reads A (m x k) and B (n x k) as k-contiguous rows at 16-byte aligned addresses
 * and lets the tensor cores truncate f32 values to TF32 (rounding them first in local memory
 * cost a third of the speed); f16/bf16 B that is not transposed is read in place, n-major
 * (the kernel's B_MN=1; wgmma's TF32 form cannot). An operand in another layout (A
 * transposed, TF32 B not transposed, an unaligned leading dimension, offset or batch stride)
 * is packed into pooled scratch first (cl/wgmma_pack.cl): one read and one write of it. Where
 * the probe passed its TMA build, the tensor copy engine fills the stages (the kernel's
 * TMA=1), else every work-item's cp.async copies. */
#include "config.h"

#include <stdio.h>

#include "tensor_cores.h"

#define FUNC "ocal_gemm"
#define WG_BM 128
#define WG_THREADS 256
/* The variant: its 4 stages of (128 + bn) rows of 128 bytes are at most 196608 bytes; compute
 * capability 9.0 gives a work-group up to 232448. */
static void options_for(ocal_dtype dtype, int b_mn, int tma, unsigned bn, char *out,
                        size_t size) {
  snprintf(out, size,
           "-DOCAL_PTX_TARGET=sm_90a -DBN=%u -DSTAGES=4 -DRASTER=8 -DSMEM_MAX=232448%s%s%s", bn,
           dtype == OCAL_F16 ? " -DWG_F16" : dtype == OCAL_BF16 ? " -DWG_BF16" : "",
           b_mn ? " -DB_MN=1" : "", tma ? " -DTMA=1" : "");
}

/* Whether offset, leading dimension and batch stride are multiples of `elems`. */
static int aligned(size_t off, size_t ld, size_t stride, size_t elems) {
  return off % elems == 0 && ld % elems == 0 && stride % elems == 0;
}

ocal_status ocal__wgmma_pack(ocal_context ctx, ocal_dtype dtype, cl_mem in, size_t off,
                             size_t ld, size_t stride, int trans, size_t rows, size_t k,
                             size_t batch, size_t ldk, cl_mem *out) {
  ocal__kernel *kern;
  const char *options = dtype == OCAL_F16 ? "-DWG_F16" : dtype == OCAL_BF16 ? "-DWG_BF16" : "";
  ocal_status s =
      ocal__library_kernel_from(ctx, "wgmma_pack", options, "ocal_wgmma_pack", &kern, NULL, FUNC);
  if (s != OCAL_OK) return s;
  size_t bytes;
  if (ocal__mul_overflows(rows * ldk, batch * ocal_dtype_size(dtype), &bytes))
    return ocal__fail(OCAL_OUT_OF_DEVICE_MEMORY, FUNC, "the packed operand's size overflows");
  if ((s = ocal__device_alloc(ctx, bytes, out, FUNC)) != OCAL_OK) return s;
  cl_ulong in_off = off, in_stride = stride;
  cl_uint ldc = (cl_uint)ld, ld_out = (cl_uint)ldk, r = (cl_uint)rows, c = (cl_uint)k;
  cl_int t = trans, vec = aligned(off, ld, stride, 16 / ocal_dtype_size(dtype));
  ocal__arg args[] = {OCAL__ARG(in),     OCAL__ARG(in_off), OCAL__ARG(ldc), OCAL__ARG(in_stride),
                      OCAL__ARG(t),      OCAL__ARG(vec),    OCAL__ARG(*out), OCAL__ARG(ld_out),
                      OCAL__ARG(r),      OCAL__ARG(c)};
  size_t group = kern->work_group_size < 256 ? kern->work_group_size : 256;
  size_t local[3] = {group, 1, 1};
  size_t global[3] = {ocal__ceil_div(ldk, 64) * group, ocal__ceil_div(rows, 64), batch};
  s = ocal__kernel_run_nd(ctx, kern, 3, global, local, sizeof args / sizeof args[0], args, FUNC);
  if (s != OCAL_OK) {
    ocal__device_free(ctx, *out);
    *out = NULL;
  }
  return s;
}

ocal_status ocal__gemm_wgmma_run(ocal_context ctx, const ocal__tc_launch *L, int tma,
                                 unsigned bn, int *not_built) {
  *not_built = 0;
  size_t es = ocal_dtype_size(L->dtype), epp = 16 / es; /* elements in 16 bytes */
  /* f16/bf16 B not transposed (k x n) and aligned: read in place, n-major (B_MN). */
  int b_mn = L->dtype != OCAL_F32 && !L->tb && aligned(L->b_off, L->ldb, L->b_stride, epp);
  char options[160];
  options_for(L->dtype, b_mn, tma, bn, options, sizeof options);
  ocal__kernel *kern;
  ocal_status s =
      ocal__library_kernel_from(ctx, "gemm_wgmma", options, "ocal_gemm_wgmma", &kern, NULL, FUNC);
  if (s == OCAL_OK && kern->work_group_size < WG_THREADS)
    s = ocal__fail(OCAL_UNSUPPORTED, FUNC,
                   "the wgmma kernel takes %zu work-items a group on %s, fewer than its %d",
                   kern->work_group_size, ocal__context_info(ctx)->name, WG_THREADS);
  if (s != OCAL_OK) {
    *not_built = 1;
    return s;
  }
  /* A as m x k rows, B as n x k rows (or k x n with B_MN): in place where they already are,
   * else packed. A 3-D operand with a batch stride of 0 (one matrix for every entry) is
   * packed once. */
  size_t ldk = ocal__round_up(L->k, epp);
  cl_mem pa = NULL, pb = NULL;
  cl_mem a = L->a, b = L->b;
  size_t a_off = L->a_off, lda = L->lda, as = L->a_stride;
  size_t b_off = L->b_off, ldb = L->ldb, bs = L->b_stride;
  if (L->ta || !aligned(a_off, lda, as, epp)) {
    size_t n = as ? L->batch : 1;
    s = ocal__wgmma_pack(ctx, L->dtype, L->a, a_off, lda, as, L->ta, L->m, L->k, n, ldk, &pa);
    if (s != OCAL_OK) return s;
    a = pa, a_off = 0, lda = ldk, as = as ? L->m * ldk : 0;
  }
  if (!b_mn && (!L->tb || !aligned(b_off, ldb, bs, epp))) {
    size_t n = bs ? L->batch : 1;
    s = ocal__wgmma_pack(ctx, L->dtype, L->b, b_off, ldb, bs, !L->tb, L->n, L->k, n, ldk, &pb);
    if (s != OCAL_OK) {
      if (pa) ocal__device_free(ctx, pa);
      return s;
    }
    b = pb, b_off = 0, ldb = ldk, bs = bs ? L->n * ldk : 0;
  }
  /* The TMA build: 256 bytes a work-group for its two tensor maps. */
  size_t gx = ocal__ceil_div(L->n, bn), gy = ocal__ceil_div(L->m, WG_BM);
  cl_mem maps = NULL;
  if (tma && (s = ocal__device_alloc(ctx, gx * gy * L->batch * 256, &maps, FUNC)) != OCAL_OK) {
    if (pa) ocal__device_free(ctx, pa);
    if (pb) ocal__device_free(ctx, pb);
    return s;
  }
  cl_ulong ao = a_off, bo = b_off, co = L->c_off, as_ = as, bs_ = bs, cs = L->c_stride;
  cl_uint la = (cl_uint)lda, lb = (cl_uint)ldb, lc = (cl_uint)L->ldc;
  cl_uint m = (cl_uint)L->m, n = (cl_uint)L->n, k = (cl_uint)L->k;
  float alpha = (float)L->alpha, beta = (float)L->beta;
  cl_int read_c = beta != 0.0f;
  ocal__arg args[] = {OCAL__ARG(a),     OCAL__ARG(ao),    OCAL__ARG(la), OCAL__ARG(as_),
                      OCAL__ARG(b),     OCAL__ARG(bo),    OCAL__ARG(lb), OCAL__ARG(bs_),
                      OCAL__ARG(L->c),  OCAL__ARG(co),    OCAL__ARG(lc), OCAL__ARG(cs),
                      OCAL__ARG(m),     OCAL__ARG(n),     OCAL__ARG(k),  OCAL__ARG(alpha),
                      OCAL__ARG(beta),  OCAL__ARG(read_c), OCAL__ARG(maps)};
  size_t local[3] = {WG_THREADS, 1, 1};
  size_t global[3] = {gx * WG_THREADS, gy, L->batch};
  s = ocal__kernel_run_nd(ctx, kern, 3, global, local,
                          sizeof args / sizeof args[0] - (maps ? 0 : 1), args, FUNC);
  /* Pooled scratch: freed after the enqueue, reused by later calls in queue order. */
  if (pa) ocal__device_free(ctx, pa);
  if (pb) ocal__device_free(ctx, pb);
  if (maps) ocal__device_free(ctx, maps);
  return s;
}

static ocal_status wgmma_run(const ocal__gemm_call *g, const ocal__gemm_choice *choice,
                             int *not_built) {
  *not_built = 0;
  ocal_context ctx = g->ctx;
  if (!ocal__tc_probe_wgmma_passed(ctx, g->dtype)) { /* the rule asked the probe: not reached */
    if (choice->named)
      return ocal__fail(OCAL_UNSUPPORTED, FUNC,
                        "OCAL_GEMM=wgmma: this device's wgmma probe did not pass");
    *not_built = 1;
    return OCAL_OK;
  }
  ocal__tc_launch L;
  ocal__tc_launch_of(g, &L);
  int failed = 0;
  ocal_status s = ocal__gemm_wgmma_run(
      ctx, &L, ocal__tc_probe_wgmma_tma_passed(ctx),
      ocal__gemm_wgmma_block_n(ocal__context_info(ctx)->compute_units, g->m, g->n, g->batch),
      &failed);
  if (failed && !choice->named) {
    *not_built = 1; /* blas.c runs the fallback */
    return OCAL_OK;
  }
  if (failed && g->dtype != OCAL_F32)
    return ocal__fail(OCAL_UNSUPPORTED, FUNC,
                      "OCAL_GEMM=wgmma: the %s tensor-core kernel does not build on this device",
                      ocal_dtype_name(g->dtype));
  return s;
}

const ocal__gemm_engine ocal__gemm_engine_wgmma = {"tensor cores (tf32, wgmma)",
                                                   "tensor cores (f16/bf16, wgmma)", wgmma_run};
