/* ocal — the one rule that picks the GEMM and GEMV engines for every type (see engine.h).
 *
 * The rule is a pure function of ocal__blas_facts and the shape: it reads no context and
 * no environment, so tests/check_blas.c checks its answers on PoCL's facts and on simulated
 * devices (an H100's, one without tensor cores). ocal__blas_facts_of gathers the facts,
 * asking the tensor-core probe only where the answer can matter. The measurements behind
 * each threshold are in docs/blas-engines.md. */
#include "config.h"

#include <string.h>

#include "engine.h"
#include "tensor_cores.h"

/* Work-groups per compute unit that CLBlast's indirect kernel needs to run well (it runs
 * well with several waves and is starved with one); below four per compute unit splitting
 * is tried (splitk.c). */
#define SPLITK_WG_PER_CU 4
/* No slice shorter than this: below it the sum pass and CLBlast's per-slice padding cost
 * more than the extra work-groups gain. */
#define SPLITK_MIN_KC 256
#define SPLITK_MAX_SLICES 16
/* The scratch {S, m, n} stays small beside what splitting is for. */
#define SPLITK_MAX_SCRATCH ((size_t)256 << 20)
/* ocal's kernel indexes with 32-bit counts; CLBlast with int. */
#define INDEX_MAX 0x7fffffffu

void ocal__blas_facts_of(ocal_context ctx, ocal_dtype dtype, ocal__blas_facts *f) {
  ocal__blas_facts_of_device(ctx, dtype, f);
#ifdef OCAL_HAVE_CLBLAST
  ocal__gemm_params p;
  if (ocal__blas_params_in_effect(ctx, ocal__dtype_is_half(dtype) ? OCAL_F32 : dtype, &p)) {
    f->params_known = 1;
    f->mwg = p.v[OCAL__P_MWG];
    f->nwg = p.v[OCAL__P_NWG];
    f->kwg = p.v[OCAL__P_KWG];
    f->min_indirect = p.v[OCAL__P_MIN_INDIRECT];
  }
#endif
}

void ocal__blas_facts_of_device(ocal_context ctx, ocal_dtype dtype, ocal__blas_facts *f) {
  memset(f, 0, sizeof *f);
  f->type = ocal__context_info(ctx)->type;
  f->compute_units = ocal__context_info(ctx)->compute_units;
  f->max_alloc_bytes = ocal__context_info(ctx)->max_alloc_bytes;
  f->gemm = ctx->settings.gemm;
  f->splitk = ctx->settings.gemm_splitk;
  f->pretranspose = ctx->settings.gemm_pretranspose;
  f->gemv = ctx->settings.gemv;
  f->precision = ctx->settings.gemm_precision;
  int named_tc = f->gemm == OCAL__ENGINE_TC || f->gemm == OCAL__ENGINE_WGMMA;
  if (f->precision == OCAL_GEMM_PRECISION_TF32 || named_tc) {
    f->tc = ocal__tc_probe_passed(ctx, OCAL_F32);
    f->wgmma = f->tc && ocal__tc_probe_wgmma_passed(ctx, OCAL_F32);
  }
  if (ocal__dtype_is_half(dtype) && (f->gemm == OCAL__ENGINE_AUTO || named_tc)) {
    f->tc_f16 = ocal__tc_probe_passed(ctx, OCAL_F16);
    f->tc_bf16 = ocal__tc_probe_passed(ctx, OCAL_BF16);
    f->wgmma_f16 = ocal__tc_probe_wgmma_passed(ctx, OCAL_F16);
    f->wgmma_bf16 = ocal__tc_probe_wgmma_passed(ctx, OCAL_BF16);
  }
  if (dtype == OCAL_F64 && (f->gemm == OCAL__ENGINE_AUTO || f->gemm == OCAL__ENGINE_TC))
    f->tc_f64 = ocal__tc_probe_passed(ctx, OCAL_F64);
#ifdef OCAL_HAVE_CLBLAST
  f->have_clblast = 1;
#endif
}

/* The automatic split-K rule: the number of slices, or 0 for a plain call. Split when the
 * plain call would run CLBlast's indirect kernel (m n k >= XGEMM_MIN_INDIRECT_SIZE^3) with
 * fewer than half the work-groups the device holds well; S fills them, at most 16, slices of
 * at least 256, preferring a count that divides k into whole KWG steps. */
static size_t auto_slices(const ocal__blas_facts *f, size_t m, size_t n, size_t k) {
  if (!f->params_known) return 0;
  /* ocal calls CLBlast column-major with the operands swapped: its m is our n. */
  size_t mwg = (size_t)f->mwg, nwg = (size_t)f->nwg, kwg = (size_t)f->kwg;
  size_t t = (size_t)f->min_indirect;
  double vol = (double)m * (double)n * (double)k;
  if (vol < (double)t * (double)t * (double)t) return 0;
  size_t tiles = ocal__ceil_div(n, mwg) * ocal__ceil_div(m, nwg);
  size_t full = (size_t)f->compute_units * SPLITK_WG_PER_CU;
  if (tiles * 2 > full) return 0;
  size_t s = ocal__ceil_div(full, tiles);
  if (s > SPLITK_MAX_SLICES) s = SPLITK_MAX_SLICES;
  if (s > k / SPLITK_MIN_KC) s = k / SPLITK_MIN_KC;
  if (s < 2) return 0;
  for (size_t d = s; d >= 2 && d * 2 >= s; d--)
    if (k % d == 0 && (k / d) % kwg == 0) {
      s = d;
      break;
    }
  return s;
}

/* The slices of a non-batched product after OCAL_GEMM_SPLITK and the rule; 0 = plain. */
static size_t splitk_slices(const ocal__blas_facts *f, ocal_dtype dtype, size_t m, size_t n,
                            size_t k) {
  if (f->splitk == 0) return 0;
  size_t slices = f->splitk > 0 ? (size_t)f->splitk : auto_slices(f, m, n, k);
  if (slices < 2 || k < slices) return 0;
  size_t es = dtype == OCAL_F32 ? 4 : 8, bytes;
  if (ocal__mul_overflows(m * n, slices * es, &bytes) || bytes > SPLITK_MAX_SCRATCH ||
      bytes > f->max_alloc_bytes / 4)
    return 0;
  return slices;
}

/* CLBlast's indirect kernel wants ocal's A rotated and, through the C API, transposes it into
 * a buffer created and released on every call; ocal's transpose into pooled scratch followed
 * by CLBlast on the transposed A measured faster. Below the switch point CLBlast's direct
 * kernel reads A in place and the extra pass only costs, so only products that run the
 * indirect kernel. */
static int pretranspose(const ocal__blas_facts *f, size_t m, size_t n, size_t k) {
  if (f->pretranspose == 0) return 0;
  if (m > INDEX_MAX || k > INDEX_MAX) return 0;
  if (f->pretranspose == 1) return 1;
  if (!f->params_known) return 0;
  double t = (double)f->min_indirect;
  return (double)m * (double)n * (double)k >= t * t * t;
}

/* The wgmma kernel's blocks of 128 rows x bn columns for an m x n product (times the batch). */
static size_t wgmma_blocks(size_t m, size_t n, size_t batch, size_t bn) {
  return ocal__ceil_div(m, 128) * ocal__ceil_div(n, bn) * batch;
}

/* The wgmma kernel where its narrowest blocks (128 x 64) would keep at least an eighth of the
 * compute units busy and k covers a few of its stages (the kernel does not split k); below
 * that mma.sync's or ocal's smaller tiles fill the device better. On an H200 (132 compute
 * units), `ocal_gemm` NN at 384^3 (18 blocks) ran 9.8 TFLOP/s on wgmma against 5.4 on ocal's
 * FP32 kernel and 4.7 on mma.sync for TF32, and 13.5 against 7.0 on mma.sync for f16; at
 * 640^3 37.3 against 21.9 (TF32) and 53.6 against 23.8 (f16); the MLP's 256 x 784 x 512 NT
 * product (26 blocks) 22.9 against 13.3 on ocal's kernel, its 784 x 512 x 256 TN (56 blocks;
 * both operands packed first) 13.5 against 14.1. */
int ocal__gemm_wgmma_pays(unsigned compute_units, size_t m, size_t n, size_t k, size_t batch) {
  return k >= 128 && wgmma_blocks(m, n, batch, 64) * 8 >= compute_units;
}

/* Blocks of 128 x 256 where they fill at least half the compute units (one block a unit: a
 * block takes 193 KiB of local memory), else 128 x 128 where those do, else 128 x 64: on an
 * H200, f16 1024^3 ran 155 against 96 TFLOP/s with 128 columns, 1536^3 202 against 225 and
 * 2048^3 398 against 429; at 1024^3 `ocal_gemm` ran 189 with 64 columns against 160 with 128
 * (TF32 122 against 97), and the kernel alone at 768^3 89 against 64 (TF32 77 against 60)
 * (docs/tensor-cores.md). */
unsigned ocal__gemm_wgmma_block_n(unsigned compute_units, size_t m, size_t n, size_t batch) {
  if (wgmma_blocks(m, n, batch, 256) * 2 >= compute_units) return 256u;
  return wgmma_blocks(m, n, batch, 128) * 2 >= compute_units ? 128u : 64u;
}

/* The mma.sync kernel's 64 x 64 blocks (TF32) where 128 x 128 tiles would fill less than a
 * quarter of the compute units and the small blocks fill half: one pass over k, no slices to
 * sum. On an H200 (132 units) the MLP's 784 x 512 x 256 TN product (104 blocks) ran 19.7
 * TFLOP/s so, against 12.0 in 128 x 128 tiles with k split and 14.1 on ocal's FP32 kernel;
 * with fewer blocks the long k loops lose (256 x 512 x 784, 32 blocks: 10.6 against 11.5-15
 * on ocal's kernel, which splits k) (docs/tensor-cores.md). */
int ocal__gemm_tc_small_blocks(unsigned compute_units, size_t m, size_t n, size_t batch) {
  size_t tiles = ocal__ceil_div(m, 128) * ocal__ceil_div(n, 128) * batch;
  size_t blocks = ocal__ceil_div(m, 64) * ocal__ceil_div(n, 64) * batch;
  return tiles * 4 < compute_units && blocks * 2 >= compute_units;
}

/* Whether the probe passed for dtype's kernels: mma.sync (wgmma 0) or wgmma. */
static int probe_passed(const ocal__blas_facts *f, ocal_dtype dtype, int wgmma) {
  switch (dtype) {
  case OCAL_F32: return wgmma ? f->wgmma : f->tc;
  case OCAL_F16: return wgmma ? f->wgmma_f16 : f->tc_f16;
  case OCAL_BF16: return wgmma ? f->wgmma_bf16 : f->tc_bf16;
  case OCAL_F64: return wgmma ? 0 : f->tc_f64;
  default: return 0;
  }
}

/* OCAL_GEMM=tc or =wgmma: that engine where it can run, else no engine and what is missing.
 * f32 needs the context to allow TF32; f16/bf16 products are exact in f32 and need none. */
static ocal__gemm_choice named_tensor_cores(const ocal__blas_facts *f, ocal_dtype dtype,
                                            int fits) {
  int wg = f->gemm == OCAL__ENGINE_WGMMA, half = ocal__dtype_is_half(dtype);
  ocal__gemm_choice c = {OCAL__GEMM_ENGINE_COUNT, 0, 0, 1, 0, ""};
  if (dtype == OCAL_F64 && !wg) {
    /* f64 on tensor cores is exact IEEE double: no precision setting is asked. */
    if (!f->tc_f64)
      c.reason = "OCAL_GEMM=tc, but this device's tensor-core probe failed for f64 (ocal info "
                 "says why)";
    else if (!fits)
      c.reason = "OCAL_GEMM=tc, but a dimension exceeds 2^31 - 1";
    else {
      c.engine = OCAL__GEMM_DMMA;
      c.reason = "OCAL_GEMM=tc: tensor cores (f64, mma.sync)";
    }
    return c;
  }
  if (dtype != OCAL_F32 && !half)
    c.reason = wg ? "OCAL_GEMM=wgmma: the wgmma engine takes f32, f16 and bf16 products only"
                  : "OCAL_GEMM=tc: the tensor-core engine takes f32, f16, bf16 and f64 products "
                    "only";
  else if (!half && f->precision != OCAL_GEMM_PRECISION_TF32)
    c.reason = wg ? "OCAL_GEMM=wgmma, but the context's GEMM precision is fp32 (exact IEEE): "
                    "set OCAL_GEMM_PRECISION=tf32 (or the gemm_precision option) to allow TF32"
                  : "OCAL_GEMM=tc, but the context's GEMM precision is fp32 (exact IEEE): set "
                    "OCAL_GEMM_PRECISION=tf32 (or the gemm_precision option) to allow TF32";
  else if (!probe_passed(f, dtype, wg))
    c.reason = wg ? "OCAL_GEMM=wgmma, but this device's wgmma probe did not pass for this type "
                    "(it needs compute capability 9.0 and NVIDIA's PTX binaries; ocal info says "
                    "why)"
                  : "OCAL_GEMM=tc, but this device's tensor-core probe failed for this type "
                    "(ocal info says why)";
  else if (!fits)
    c.reason = wg ? "OCAL_GEMM=wgmma, but a dimension exceeds 2^31 - 1"
                  : "OCAL_GEMM=tc, but a dimension exceeds 2^31 - 1";
  else {
    c.engine = wg ? OCAL__GEMM_WGMMA : OCAL__GEMM_TC;
    c.reason = wg   ? (half ? "OCAL_GEMM=wgmma: tensor cores (wgmma, f32 accumulation)"
                            : "OCAL_GEMM=wgmma: tensor cores (tf32, wgmma)")
               : half ? "OCAL_GEMM=tc: tensor cores (mma.sync m16n8k16, f32 accumulation)"
                      : "OCAL_GEMM=tc: tensor cores (tf32, mma.sync m16n8k8)";
  }
  return c;
}

ocal__gemm_choice ocal__gemm_rule(const ocal__blas_facts *f, ocal_dtype dtype,
                                  ocal_transpose ta, size_t m, size_t n, size_t k, size_t batch,
                                  int small_offsets) {
  ocal__gemm_choice c = {OCAL__GEMM_OWN, 0, 0, 0, 0, ""};
  int fits = m <= INDEX_MAX && n <= INDEX_MAX && k <= INDEX_MAX;
  if (f->gemm == OCAL__ENGINE_TC || f->gemm == OCAL__ENGINE_WGMMA)
    return named_tensor_cores(f, dtype, fits);
  if (ocal__dtype_is_half(dtype)) {
    /* f16/bf16 on tensor cores wherever the probe passed for the type, in any precision (the
     * 16-bit products are exact in f32): wgmma where its blocks pay, else mma.sync. */
    if (f->gemm == OCAL__ENGINE_AUTO && fits && probe_passed(f, dtype, 0)) {
      if (probe_passed(f, dtype, 1) &&
          ocal__gemm_wgmma_pays(f->compute_units, m, n, k, batch)) {
        c.engine = OCAL__GEMM_WGMMA;
        c.reason = "f16/bf16 operands, wgmma probe passed, 128 x 64 blocks for at least an "
                   "eighth of the compute units: tensor cores (wgmma, f32 accumulation)";
      } else {
        c.engine = OCAL__GEMM_TC;
        c.reason = "f16/bf16 operands, probe passed: tensor cores (m16n8k16, f32 "
                   "accumulation)";
      }
      return c;
    }
    /* Else the portable path: an f32 product between conversions, on the f32 rule. */
    c = ocal__gemm_rule(f, OCAL_F32, ta, m, n, k, batch, small_offsets);
    c.widen = 1;
    return c;
  }
  /* f64 on the double-precision tensor cores where the probe passed for f64 and the output
   * has 128 x 128 tiles for at least a quarter of the compute units (the engine takes smaller
   * blocks, then splits k, to fill the rest); smaller products keep CLBlast's kernel. */
  if (f->gemm == OCAL__ENGINE_AUTO && dtype == OCAL_F64 && f->tc_f64 && fits) {
    size_t tiles = ocal__ceil_div(m, 128) * ocal__ceil_div(n, 128) * batch;
    if (k >= 64 && tiles * 4 >= f->compute_units) {
      c.engine = OCAL__GEMM_DMMA;
      c.reason = "f64, probe passed: tensor cores (f64, mma.sync)";
      return c;
    }
  }
  /* With TF32 allowed: wgmma where it pays (Hopper), else the mma.sync kernel in 128 x 128
   * tiles (gemm_tc.c splits k for outputs of fewer tiles than compute units) where the output
   * fills at least a quarter of the device's compute units with tiles and k covers several k
   * steps, or in 64 x 64 blocks where those fill half of them (ocal__gemm_tc_small_blocks).
   * Smaller products stay on the rule below, where ocal's FP32 kernel splits k to fill the
   * device (docs/measurements.md). */
  int tf32_small = 0;
  if (f->gemm == OCAL__ENGINE_AUTO && dtype == OCAL_F32 &&
      f->precision == OCAL_GEMM_PRECISION_TF32 && f->tc && fits) {
    /* With A transposed, TF32's wgmma packs it first (it reads k-major operands only), and B
     * too unless B is transposed: three launches, which a small product does not hide. The
     * MLP's 784 x 512 x 256 TN (56 blocks) ran 8.7 TFLOP/s on wgmma against 14.1 on ocal's
     * FP32 kernel (H200, `ocal bench --suite gemm`); so such products take wgmma where its
     * blocks fill half the device. */
    if (f->wgmma && ocal__gemm_wgmma_pays(f->compute_units, m, n, k, batch) &&
        (ta == OCAL_NO_TRANS || wgmma_blocks(m, n, batch, 64) * 2 >= f->compute_units)) {
      c.engine = OCAL__GEMM_WGMMA;
      c.reason = "precision tf32, wgmma probe passed, 128 x 64 blocks for at least an eighth "
                 "of the compute units: tensor cores (tf32, wgmma)";
      return c;
    }
    size_t tiles = ocal__ceil_div(m, 128) * ocal__ceil_div(n, 128) * batch;
    if (k >= 64 && tiles * 4 >= f->compute_units) {
      c.engine = OCAL__GEMM_TC;
      c.reason = "precision tf32, probe passed: tensor cores (tf32, mma.sync m16n8k8)";
      return c;
    }
    if (k >= 128 && ocal__gemm_tc_small_blocks(f->compute_units, m, n, batch)) {
      c.engine = OCAL__GEMM_TC;
      c.reason = "precision tf32, probe passed, 64 x 64 blocks for at least half the compute "
                 "units: tensor cores (tf32, mma.sync m16n8k8)";
      return c;
    }
    tf32_small = 1;
  }
  if (!f->have_clblast) {
    if (f->gemm == OCAL__ENGINE_CLBLAST) {
      c.engine = OCAL__GEMM_ENGINE_COUNT;
      c.reason = "OCAL_GEMM=clblast, but this ocal was built without CLBlast";
    } else if (!fits) {
      c.engine = OCAL__GEMM_ENGINE_COUNT;
      c.reason = "a dimension exceeds 2^31 - 1, which ocal's kernel cannot index, and this "
                 "ocal was built without CLBlast";
    } else {
      c.named = f->gemm == OCAL__ENGINE_OWN;
      c.reason = c.named ? "OCAL_GEMM=ocal: ocal's kernel" : "CLBlast missing: ocal's kernel";
    }
    return c;
  }
  if (fits && f->gemm == OCAL__ENGINE_OWN) {
    c.named = 1;
    c.reason = "OCAL_GEMM=ocal: ocal's kernel";
    return c;
  }
  /* On GPUs f32 products smaller than 4096^3 run ocal's kernel; from 4096^3 CLBlast with A
   * pre-transposed is ahead (docs/blas-engines.md). Batched products and f64 stay with
   * CLBlast, as do CPUs and other devices. */
  if (fits && f->gemm == OCAL__ENGINE_AUTO) {
    if (f->type == OCAL_DEVICE_GPU && dtype == OCAL_F32 && batch == 1 &&
        (double)m * (double)n * (double)k < 4096.0 * 4096.0 * 4096.0) {
      c.reason = tf32_small ? "precision tf32, but too few 128x128 tiles (or k < 64) for the "
                              "tensor-core kernel: f32 on a GPU, ocal's kernel"
                            : "f32 on a GPU, m*n*k < 4096^3: ocal's kernel";
      return c;
    }
  }
  c.named = f->gemm == OCAL__ENGINE_CLBLAST;
  if (batch == 1 && small_offsets) {
    size_t s = splitk_slices(f, dtype, m, n, k);
    if (s && (double)m * (double)n * (double)s <= (double)INDEX_MAX) {
      c.engine = OCAL__GEMM_SPLITK;
      c.slices = s;
      c.reason = f->splitk > 0 ? "OCAL_GEMM_SPLITK=N: split-K over CLBlast"
                               : "output too small to fill the device: split-K over CLBlast";
      return c;
    }
  }
  c.engine = OCAL__GEMM_CLBLAST;
  c.pretranspose = batch == 1 && ta == OCAL_NO_TRANS && pretranspose(f, m, n, k);
  /* The reasons are fixed strings (the call may keep the pointer). */
  if (c.pretranspose) {
    c.reason = c.named                     ? "OCAL_GEMM=clblast: CLBlast, A pre-transposed"
               : !fits                     ? "too large for ocal's kernel: CLBlast, A pre-transposed"
               : f->type != OCAL_DEVICE_GPU ? "not a GPU: CLBlast, A pre-transposed"
               : dtype != OCAL_F32          ? "f64: CLBlast, A pre-transposed"
                                            : "m*n*k >= 4096^3: CLBlast, A pre-transposed";
  } else {
    c.reason = c.named                     ? "OCAL_GEMM=clblast: CLBlast"
               : !fits                     ? "too large for ocal's kernel: CLBlast"
               : f->type != OCAL_DEVICE_GPU ? "not a GPU: CLBlast"
               : dtype != OCAL_F32          ? "f64: CLBlast"
               : batch != 1                 ? "batched: CLBlast"
                                            : "m*n*k >= 4096^3: CLBlast";
  }
  return c;
}

size_t ocal__gemm_splitk_slices(ocal_context ctx, ocal_dtype dtype, size_t m, size_t n,
                                size_t k) {
  ocal__blas_facts f;
  ocal__blas_facts_of(ctx, dtype, &f);
  return f.have_clblast ? splitk_slices(&f, dtype, m, n, k) : 0;
}

ocal__gemv_engine_id ocal__gemv_rule(const ocal__blas_facts *f, const char **reason) {
  if (f->gemv == OCAL__ENGINE_CLBLAST) {
    *reason = f->have_clblast ? "OCAL_GEMV=clblast: CLBlast"
                              : "OCAL_GEMV=clblast, but this ocal was built without CLBlast";
    return f->have_clblast ? OCAL__GEMV_CLBLAST : OCAL__GEMV_ENGINE_COUNT;
  }
  /* ocal's kernels are several times faster than CLBlast's Xgemv (docs/blas-engines.md). */
  *reason = "ocal's kernels (faster than CLBlast's Xgemv)";
  return OCAL__GEMV_OWN;
}
