/* ocal — what the tensor-core files share (never installed): the launch the two kernels take
 * (gemm_tc.c: mma.sync, gemm_wgmma.c: wgmma), the probe that decides whether a device runs
 * them (tc_probe.c) and its answer kept in the disk cache (tc_answer.c). */
#ifndef OCAL_BLAS_TENSOR_CORES_H
#define OCAL_BLAS_TENSOR_CORES_H

#include "engine.h"

/* One tensor-core product as the kernels take it: row-major, offsets and strides in
 * elements, batch strides 0 for a matrix shared by every entry. */
typedef struct ocal__tc_launch {
  ocal_dtype dtype; /* OCAL_F32 (TF32 kernels), OCAL_F16 or OCAL_BF16 (m16n8k16, C alike),
                       OCAL_F64 (cl/gemm_dmma.cl) */
  int ta, tb;
  size_t m, n, k, batch;
  cl_mem a, b, c;
  size_t a_off, lda, a_stride, b_off, ldb, b_stride, c_off, ldc, c_stride;
  double alpha, beta; /* rounded to f32 for the f32-accumulating kernels */
  size_t kc, slices; /* slices of k (kc each, whole k steps): C entry z = batch entry x slices */
  int small; /* TF32 on mma.sync: 64 x 64 blocks, k steps of 16 (else 128 x 128, steps of 8) */
} ocal__tc_launch;

/* The launch of the whole product g, C in place, one slice of k. */
void ocal__tc_launch_of(const ocal__gemm_call *g, ocal__tc_launch *launch);
/* Enqueues a built mma.sync kernel (cl/gemm_mma.cl or cl/gemm_dmma.cl: the same arguments,
 * alpha and beta in double for f64, else f32) on bm x bn blocks of `threads` work-items. */
ocal_status ocal__tc_launch_run(ocal_context ctx, ocal__kernel *kern,
                                const ocal__tc_launch *launch, size_t bm, size_t bn,
                                size_t threads);
/* Splits k for a product of fewer bm x bn blocks than compute units (gemm_tc.c): C goes to
 * scratch *w (elements of `elem` bytes, NULL when not split), whole steps of kstep a slice;
 * the caller sums it into C with ocal__gemm_splitk_sum and frees it. */
void ocal__tc_split_k(const ocal__gemm_call *g, size_t bm, size_t bn, size_t kstep, size_t elem,
                      ocal__tc_launch *launch, cl_mem *w);

/* Builds (or finds) the mma.sync variant for the launch, with the build options `spell`
 * (ocal__tc_spelling), and enqueues it (gemm_tc.c). *not_built = 1 when it does not build
 * or takes fewer work-items than it needs (nothing enqueued). */
ocal_status ocal__gemm_tc_enqueue(ocal_context ctx, const char *spell,
                                  const ocal__tc_launch *launch, int *not_built);
/* The f64 kernel's blocks (gemm_dmma.c): which one an m x n output (x batch) takes, and the
 * build of it (or the one found) for the launch, enqueued; *not_built as above. */
enum { OCAL__DMMA_SMALL, OCAL__DMMA_MID, OCAL__DMMA_BLOCKS };
int ocal__gemm_dmma_block(ocal_context ctx, size_t m, size_t n, size_t batch);
ocal_status ocal__gemm_dmma_enqueue(ocal_context ctx, const char *spell, int which,
                                    const ocal__tc_launch *launch, int *not_built);
/* One build of cl/gemm_dmma.cl: block, k step, warps, instruction (884: m8n8k4, compute
 * capability 8.0; 1684 / 1688 / 16816: m16n8k4 / k8 / k16, 9.0), local stages, block raster,
 * and whether it is rebuilt from PTX for sm_90a (local memory past 48 KiB; 9.0 only). */
typedef struct ocal__dmma_variant {
  unsigned bm, bn, bk, warps_m, warps_n, shape, stages, raster, sm90a;
} ocal__dmma_variant;
/* The engine's block `which` on a device of compute capability cc (10 major + minor). */
const ocal__dmma_variant *ocal__gemm_dmma_variant(unsigned cc, int which);
/* ocal__gemm_dmma_enqueue for a given build (the tests run every table's). */
ocal_status ocal__gemm_dmma_enqueue_variant(ocal_context ctx, const char *spell,
                                            const ocal__dmma_variant *v,
                                            const ocal__tc_launch *launch, int *not_built);
/* A product on the wgmma kernel (gemm_wgmma.c): OCAL_F32 in TF32, or OCAL_F16/OCAL_BF16 with C
 * of that type; one slice of k. tma: the build whose stages the tensor copy engine fills,
 * else every work-item's cp.async copies; bn: the blocks' columns, 64, 128 or 256
 * (ocal__gemm_wgmma_block_n). *not_built = 1 when the kernel does not build (nothing
 * enqueued). */
ocal_status ocal__gemm_wgmma_run(ocal_context ctx, const ocal__tc_launch *launch, int tma,
                                 unsigned bn, int *not_built);
/* Packs one operand for the wgmma kernel (cl/wgmma_pack.cl) into new pooled scratch *out:
 * rows x k after its transpose (trans: stored k x rows), batch matrices `stride` apart, as
 * k-contiguous rows of stride ldk, zero past k. */
ocal_status ocal__wgmma_pack(ocal_context ctx, ocal_dtype dtype, cl_mem in, size_t off,
                             size_t ld, size_t stride, int trans, size_t rows, size_t k,
                             size_t batch, size_t ldk, cl_mem *out);

/* ---- the probe (tc_probe.c) ------------------------------------------------------------ */

/* Whether the probe passed (it runs once per context, or its answer comes from the disk
 * cache) for the mma.sync kernels of dtype (OCAL_F32 in TF32, OCAL_F16, OCAL_BF16, OCAL_F64),
 * and for
 * the wgmma kernel of dtype. */
int ocal__tc_probe_passed(ocal_context ctx, ocal_dtype dtype);
int ocal__tc_probe_wgmma_passed(ocal_context ctx, ocal_dtype dtype);
/* Whether the probe passed the wgmma kernel's TMA build for every type whose wgmma passed. */
int ocal__tc_probe_wgmma_tma_passed(ocal_context ctx);
/* The build options the probe found the device's compiler takes (empty before a pass). */
void ocal__tc_spelling(ocal_context ctx, char *out, size_t size);
/* Whether the context emulates the three instructions (OCAL_GEMM_TC_EMULATE=1, tests only). */
int ocal__tc_emulated(ocal_context ctx);

/* Spellings a device's compiler may need, tried in this order (tc_probe.c). */
#define OCAL__TC_SPELLING_COUNT 4

/* ---- the probe's answer in the disk cache (tc_answer.c) ------------------------------- */

/* What the probe found: TF32 tensor cores usable (ok), the f16, bf16 and f64 kernels, the
 * wgmma checks that passed (OCAL__WG_* bits), and the spelling that builds (index). */
enum { OCAL__WG_TF32 = 1, OCAL__WG_F16 = 2, OCAL__WG_BF16 = 4, OCAL__WG_TMA = 8 };
typedef struct ocal__tc_answer {
  int ok, f16, bf16, extra, wgmma, f64;
} ocal__tc_answer;

/* 1 and *answer where the context's cache holds the answer for this device, driver, ocal
 * and kernel source, exactly as ocal__tc_answer_store writes it; else 0. */
int ocal__tc_answer_load(ocal_context ctx, ocal__tc_answer *answer);
void ocal__tc_answer_store(ocal_context ctx, const ocal__tc_answer *answer);

#endif /* OCAL_BLAS_TENSOR_CORES_H */
