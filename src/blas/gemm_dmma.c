/* ocal — the engine "tensor cores (f64, mma.sync)": f64 products on NVIDIA's double-precision
 * tensor cores, cl/gemm_dmma.cl through inline PTX (compute capability 8.0 and up).
 *
 * Why: an f64 product on the tensor cores is still exact IEEE double arithmetic (every term a
 * double FMA), and runs several times faster than the FP64 units CLBlast's kernel uses
 * (docs/tensor-cores.md). The rule (rule.c) picks this engine only where the device's probe
 * (tc_probe.c) passed for f64. Products of too few blocks to fill the device take a smaller
 * block, then split k. Compute capability 9.0 and up take Hopper's m16n8k4 / m16n8k8 shapes. */
#include "config.h"

#include <stdio.h>

#include "tensor_cores.h"

#define FUNC "ocal_gemm"
#define DMMA_LOCAL_MAX 49152u  /* NVIDIA's 48 KiB of local memory a work-group */
#define DMMA_SM90A_LOCAL_MAX 232448u /* the hardware's 227 KiB, for programs built from PTX */
#define DMMA_LOCAL_RESERVE 1024u /* kept free for what the compiler adds (gemm_tc.c says why) */

/* Per instruction set, the engine's two blocks (OCAL__DMMA_SMALL, _MID): the fastest of
 * bench/experiments/gemm_dmma_probe's variants at 1024^3 and at 4096^3 and 8192^3
 * (docs/tensor-cores.md). Hopper's m16n8k* shapes ran half again as fast as m8n8k4 on an H100;
 * with A kept m x k in local memory (cl/gemm_dmma.cl, A_MK), 128 x 64 blocks beat 128 x 128
 * ones at 8192^3 too, on an H200. */
static const ocal__dmma_variant sm80[OCAL__DMMA_BLOCKS] = {{64, 64, 8, 2, 2, 884, 4, 8, 0},
                                                           {128, 64, 8, 2, 2, 884, 3, 8, 0}};
static const ocal__dmma_variant sm90[OCAL__DMMA_BLOCKS] = {{64, 64, 8, 2, 2, 1688, 4, 8, 0},
                                                           {128, 64, 8, 2, 2, 1688, 3, 8, 0}};

const ocal__dmma_variant *ocal__gemm_dmma_variant(unsigned cc, int which) {
  return cc >= 90 ? &sm90[which] : &sm80[which];
}

static const ocal__dmma_variant *variant_of(ocal_context ctx, int which) {
  return ocal__gemm_dmma_variant(ocal__context_compute_capability(ctx), which);
}

static size_t blocks_of(size_t bm, size_t bn, size_t m, size_t n, size_t batch) {
  return ocal__ceil_div(m, bm) * ocal__ceil_div(n, bn) * batch;
}

/* The small block where 128 x 128 blocks would leave compute units idle, else the 128 x 64
 * one. */
int ocal__gemm_dmma_block(ocal_context ctx, size_t m, size_t n, size_t batch) {
  if (blocks_of(128, 128, m, n, batch) < ocal__context_info(ctx)->compute_units)
    return OCAL__DMMA_SMALL;
  return OCAL__DMMA_MID;
}

ocal_status ocal__gemm_dmma_enqueue(ocal_context ctx, const char *spell, int which,
                                    const ocal__tc_launch *L, int *not_built) {
  return ocal__gemm_dmma_enqueue_variant(ctx, spell, variant_of(ctx, which), L, not_built);
}

ocal_status ocal__gemm_dmma_enqueue_variant(ocal_context ctx, const char *spell,
                                            const ocal__dmma_variant *v,
                                            const ocal__tc_launch *L, int *not_built) {
  /* 16-byte pieces where every offset, leading dimension and batch stride is even. */
  int vec = L->lda % 2 == 0 && L->ldb % 2 == 0 && L->ldc % 2 == 0 && L->a_off % 2 == 0 &&
            L->b_off % 2 == 0 && L->c_off % 2 == 0 && L->a_stride % 2 == 0 &&
            L->b_stride % 2 == 0 && L->c_stride % 2 == 0;
  /* Rebuilt for sm_90a, a work-group may take the hardware's local memory (OpenCL reports
   * 48 KiB); emulated, the build keeps its stages where the device has room for them. */
  int emulated = ocal__tc_emulated(ctx), sm90a = v->sm90a && !emulated;
  uint64_t local = ocal__context_info(ctx)->local_mem_bytes;
  unsigned cap = v->sm90a ? DMMA_SM90A_LOCAL_MAX : DMMA_LOCAL_MAX;
  unsigned local_max = sm90a || local >= cap ? cap : (unsigned)local;
  local_max = local_max > DMMA_LOCAL_RESERVE ? local_max - DMMA_LOCAL_RESERVE : 0;
  char options[360];
  snprintf(options, sizeof options,
           "%s%s -DTA=%d -DTB=%d -DVEC=%d -DBM=%u -DBN=%u -DBK=%u -DWARPS_M=%u -DWARPS_N=%u "
           "-DSHAPE=%u -DSTAGES=%u -DRASTER=%u -DLOCAL_MAX=%u",
           spell, sm90a ? " -DOCAL_PTX_TARGET=sm_90a" : "", L->ta, L->tb, vec, v->bm, v->bn,
           v->bk, v->warps_m, v->warps_n, v->shape, v->stages, v->raster, local_max);
  size_t threads = 32u * v->warps_m * v->warps_n;
  ocal__kernel *kern;
  *not_built = 0;
  ocal_status s =
      ocal__library_kernel_from(ctx, "gemm_dmma", options, "ocal_gemm_dmma", &kern, NULL, FUNC);
  if (s == OCAL_OK && kern->work_group_size < threads)
    s = ocal__fail(OCAL_UNSUPPORTED, FUNC,
                   "the f64 tensor-core kernel takes %zu work-items a group on %s, fewer than "
                   "its %zu",
                   kern->work_group_size, ocal__context_info(ctx)->name, threads);
  if (s != OCAL_OK) {
    *not_built = 1;
    return s;
  }
  return ocal__tc_launch_run(ctx, kern, L, v->bm, v->bn, threads);
}

static ocal_status dmma_run(const ocal__gemm_call *g, const ocal__gemm_choice *choice,
                            int *not_built) {
  *not_built = 0;
  ocal_context ctx = g->ctx;
  if (!ocal__tc_probe_passed(ctx, OCAL_F64)) { /* the rule asked the probe: not reached */
    if (choice->named)
      return ocal__fail(OCAL_UNSUPPORTED, FUNC,
                        "OCAL_GEMM=tc: this device's tensor-core probe failed for f64");
    *not_built = 1;
    return OCAL_OK;
  }
  ocal__tc_launch L;
  ocal__tc_launch_of(g, &L);
  int which = ocal__gemm_dmma_block(ctx, g->m, g->n, g->batch);
  cl_mem w = NULL;
  if (which == OCAL__DMMA_SMALL) { /* even the small blocks leave compute units idle: split k */
    const ocal__dmma_variant *v = variant_of(ctx, which);
    ocal__tc_split_k(g, v->bm, v->bn, v->bk, sizeof(double), &L, &w);
  }
  int failed = 0;
  char spell[64];
  ocal__tc_spelling(ctx, spell, sizeof spell);
  ocal_status s = ocal__gemm_dmma_enqueue(ctx, spell, which, &L, &failed);
  if (s == OCAL_OK && w)
    s = ocal__gemm_splitk_sum(ctx, OCAL_F64, w, g->m * g->n, L.slices, g->beta, g->c);
  if (w) ocal__device_free(ctx, w);
  if (failed && !choice->named) {
    *not_built = 1; /* blas.c runs ocal's kernel; the build's message is not the caller's */
    return OCAL_OK;
  }
  return s;
}

const ocal__gemm_engine ocal__gemm_engine_dmma = {"tensor cores (f64, mma.sync)", NULL, dmma_run};
