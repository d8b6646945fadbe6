/* ocal — the GEMM and GEMV engine tables (never installed).
 *
 * As src/fft/engine.h does for FFTs: every engine is a const table of operations in a file of
 * its own (gemm_own.c and gemv.c: ocal's kernels; clblast.c: CLBlast; splitk.c: CLBlast's
 * batched GEMM over slices of k summed by an ocal kernel), and one rule (rule.c) picks the
 * engine for a call and says why. The rule is a pure function of the facts below, so a test
 * can ask it what it picks on a device it does not have (tests/check_blas.c: an H100's facts).
 *
 * blas.c checks the operands, asks the rule and runs the engine it picked; no engine calls
 * back into blas.c. An engine whose kernels do not build on the device reports so through
 * *not_built with nothing run, and blas.c then runs ocal's kernel (unless OCAL_GEMM named the
 * engine). */
#ifndef OCAL_BLAS_ENGINE_H
#define OCAL_BLAS_ENGINE_H

#include "blas_internal.h"

typedef enum ocal__gemm_engine_id {
  OCAL__GEMM_OWN,     /* ocal's kernel (cl/blas_gemm.cl), always built */
  OCAL__GEMM_CLBLAST, /* one CLBlast call (strided-batched for a batch) */
  OCAL__GEMM_SPLITK,  /* CLBlast over slices of k, then ocal's sum */
  OCAL__GEMM_TC,      /* tensor cores (cl/gemm_mma.cl), where the device's probe passed */
  OCAL__GEMM_WGMMA,   /* Hopper's wgmma (cl/gemm_wgmma.cl), where its probe passed */
  OCAL__GEMM_ENGINE_COUNT
} ocal__gemm_engine_id;

typedef enum ocal__gemv_engine_id {
  OCAL__GEMV_OWN,
  OCAL__GEMV_CLBLAST,
  OCAL__GEMV_ENGINE_COUNT
} ocal__gemv_engine_id;

/* What the rule decides from: the device's properties, the settings and CLBlast's parameters
 * in effect. ocal__blas_facts_of fills it for a context; a test may fill it by hand. */
typedef struct ocal__blas_facts {
  ocal_device_type type;
  unsigned compute_units;
  uint64_t max_alloc_bytes;
  int have_clblast;       /* this ocal was built with CLBlast */
  int gemm;               /* OCAL_GEMM: OCAL__ENGINE_* */
  long splitk;            /* OCAL_GEMM_SPLITK: -1 the rule, 0 never, N >= 2 */
  int pretranspose;       /* OCAL_GEMM_PRETRANSPOSE: -1 the rule, 0, 1 */
  int gemv;               /* OCAL_GEMV: OCAL__ENGINE_* */
  int params_known;       /* CLBlast's parameters in effect are known (tuning file, built in) */
  long mwg, nwg, kwg;     /* their Xgemm tile (MWG, NWG) and k step (KWG) */
  long min_indirect;      /* XGEMM_MIN_INDIRECT_SIZE: CLBlast's direct/indirect switch */
  int precision;          /* OCAL_GEMM_PRECISION or the option: OCAL_GEMM_PRECISION_FP32/TF32 */
  int tc;                 /* the tensor-core probe passed (asked only when precision is tf32
                             or OCAL_GEMM=tc, so fp32 contexts never probe) */
  int wgmma;              /* the wgmma kernel's probe passed too (compute capability 9.0) */
} ocal__blas_facts;

/* A GEMM as the engines see it: checked, non-empty (m, n, k, batch > 0). `small_offsets`: every
 * element index of A, B and C (from their offsets) fits CLBlast's int (the split-K engine
 * needs that). */
typedef struct ocal__gemm_call {
  ocal_context ctx;
  ocal_dtype dtype;
  ocal_transpose ta, tb;
  size_t m, n, k, batch;
  double alpha, beta;
  ocal_buffer a, b, c;
} ocal__gemm_call;

typedef struct ocal__gemm_choice {
  ocal__gemm_engine_id engine;
  size_t slices;    /* OCAL__GEMM_SPLITK: the number of slices of k */
  int pretranspose; /* OCAL__GEMM_CLBLAST: ocal transposes A into scratch first */
  int named;        /* OCAL_GEMM named the engine: no fallback to ocal's kernel */
  const char *reason;
} ocal__gemm_choice;

typedef struct ocal__gemm_engine {
  const char *name;
  /* Runs the product. *not_built = 1 (and nothing ran) when the engine's kernels do not build
   * on this device. */
  ocal_status (*run)(const ocal__gemm_call *call, const ocal__gemm_choice *choice,
                     int *not_built);
} ocal__gemm_engine;

typedef struct ocal__gemv_engine {
  const char *name;
  /* y = alpha op(A) x + beta y, A rows x cols, all checked and non-empty. */
  ocal_status (*run)(ocal_context ctx, ocal_dtype dtype, int trans, size_t rows, size_t cols,
                     double alpha, ocal_buffer a, ocal_buffer x, double beta, ocal_buffer y);
} ocal__gemv_engine;

/* The engines; an engine this ocal was built without is NULL in the tables. */
extern const ocal__gemm_engine ocal__gemm_engine_own;
extern const ocal__gemm_engine ocal__gemm_engine_tc;
extern const ocal__gemm_engine ocal__gemm_engine_wgmma;
extern const ocal__gemv_engine ocal__gemv_engine_own;
extern const ocal__gemm_engine *const ocal__gemm_engines[OCAL__GEMM_ENGINE_COUNT];
extern const ocal__gemv_engine *const ocal__gemv_engines[OCAL__GEMV_ENGINE_COUNT];

/* The facts of a context for dtype (applies the stored CLBlast tuning first, as the first
 * BLAS call does). ocal__blas_facts_of_device: the device and settings only (params_known
 * 0), all the GEMV rule needs, without the tuning table's lock. */
void ocal__blas_facts_of(ocal_context ctx, ocal_dtype dtype, ocal__blas_facts *facts);
void ocal__blas_facts_of_device(ocal_context ctx, ocal__blas_facts *facts);

/* THE rule: which engine runs an m x n x k product (batch entries of it; ta as asked) of
 * dtype, and why. small_offsets as in ocal__gemm_call. A choice of an engine that is not
 * built (OCAL_GEMM=clblast without CLBlast, a product too large for ocal's kernel) is
 * returned with engine = OCAL__GEMM_ENGINE_COUNT and the reason. */
ocal__gemm_choice ocal__gemm_rule(const ocal__blas_facts *f, ocal_dtype dtype,
                                  ocal_transpose ta, size_t m, size_t n, size_t k, size_t batch,
                                  int small_offsets);

/* The GEMV rule: ocal's kernels unless OCAL_GEMV names CLBlast. */
ocal__gemv_engine_id ocal__gemv_rule(const ocal__blas_facts *f, const char **reason);

/* The second pass of a split product: c = sum of the slices of w ({slices, m, n}, alpha
 * applied) + beta c, mn = m n (gemm_own.c; the split-K engine uses it too). */
ocal_status ocal__gemm_splitk_sum(ocal_context ctx, ocal_dtype dtype, cl_mem w, size_t mn,
                                  size_t slices, double beta, ocal_buffer c);

/* The tensor-core probe (gemm_tc.c): runs it once per context (or reads its answer from the
 * disk cache) and says whether TF32 tensor cores may run. ocal__gemm_tc_answer also gives
 * its description (owned by the context), whether it came from disk and how many probe
 * kernels this context ran (any pointer may be NULL). */
int ocal__gemm_tc_ready(ocal_context ctx);
ocal_status ocal__gemm_tc_answer(ocal_context ctx, int *ok, const char **detail,
                                 int *from_disk, unsigned *probes);
/* f16 and bf16 GEMMs on tensor cores (gemm_tc.c): whether the probe passed for dtype, and
 * the product (call->dtype OCAL_F16 or OCAL_BF16, dimensions within 2^31 - 1). *not_built
 * = 1 (nothing run, OCAL_OK) where the kernel does not build: the portable path runs. */
int ocal__gemm_tc_half_ready(ocal_context ctx, ocal_dtype dtype);
ocal_status ocal__gemm_tc_half(const ocal__gemm_call *call, int *not_built);
/* f32 -> TF32 as the tensor cores' cvt.rna.tf32.f32: to nearest, ties away from zero. */
float ocal__tf32_round(float x);
/* f32 -> TF32 by truncation (the low 13 bits dropped), what the tensor cores do with the f32
 * operands the wgmma kernel gives them. */
float ocal__tf32_truncate(float x);

/* One tensor-core product as the kernels take it (gemm_tc.c, gemm_wgmma.c): row-major,
 * offsets and strides in elements, batch strides 0 for a matrix shared by every entry. */
typedef struct ocal__tc_launch {
  ocal_dtype dtype; /* OCAL_F32 (TF32 kernels), OCAL_F16 or OCAL_BF16 (m16n8k16, C alike) */
  int ta, tb;
  size_t m, n, k, batch;
  cl_mem a, b, c;
  size_t a_off, lda, a_stride, b_off, ldb, b_stride, c_off, ldc, c_stride;
  float alpha, beta;
  size_t kc, slices; /* slices of k (kc each, whole k steps): C entry z = batch entry x slices */
} ocal__tc_launch;

/* Whether the wgmma kernel may run for dtype (OCAL_F32 in TF32, OCAL_F16, OCAL_BF16): its
 * probe passed for that type (gemm_tc.c runs it with the others). */
int ocal__gemm_wgmma_ready(ocal_context ctx, ocal_dtype dtype);
/* Whether a product is large enough for wgmma's 128 x 256 blocks to pay (rule.c): the blocks
 * keep at least half the compute units busy and k covers a few stages. */
int ocal__gemm_wgmma_pays(unsigned compute_units, size_t m, size_t n, size_t k, size_t batch);
/* Whether an f16/bf16 product runs on wgmma (else mma.sync), under the context's OCAL_GEMM. */
int ocal__gemm_half_on_wgmma(ocal_context ctx, ocal_dtype dtype, size_t m, size_t n, size_t k,
                             size_t batch);
/* A product on the wgmma kernel (gemm_wgmma.c): OCAL_F32 in TF32, or OCAL_F16/OCAL_BF16 with C
 * of that type; one slice of k. Operands that are not k-contiguous and 16-byte aligned are
 * packed into scratch first. *not_built = 1 when the kernel does not build (nothing enqueued). */
ocal_status ocal__gemm_wgmma_run(ocal_context ctx, const ocal__tc_launch *launch,
                                 int *not_built);

/* y = beta y over a whole buffer (blas.c), as BLAS does when the product is empty. */
ocal_status ocal__blas_scale_output(ocal_buffer y, double beta, const char *func);

#endif /* OCAL_BLAS_ENGINE_H */
