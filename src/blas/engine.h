/* ocal — the GEMM and GEMV engine tables (never installed).
 *
 * As src/fft/engine.h does for FFTs: every engine is a const table of operations in a file of
 * its own (gemm_own.c and gemv.c: ocal's kernels; clblast.c: CLBlast; splitk.c: CLBlast's
 * batched GEMM over slices of k summed by an ocal kernel; gemm_tc.c, gemm_wgmma.c and
 * gemm_dmma.c: the tensor-core kernels), and one rule (rule.c) picks the engine for a call of any type and says
 * why. The rule is a pure function of the facts below, so a test can ask it what it picks on
 * a device it does not have (tests/check_blas.c: an H100's facts, a device without tensor
 * cores).
 *
 * blas.c checks the operands, asks the rule and runs the engine it picked; no engine calls
 * another or back into blas.c. f16/bf16 products that no tensor-core engine takes are
 * widened by blas.c: converted to f32 around the engine the rule picked for them. An engine
 * whose kernels do not build on the device reports so through *not_built with nothing run,
 * and blas.c then runs ocal's kernel, or the widened product for f16/bf16 (unless OCAL_GEMM
 * named the engine). */
#ifndef OCAL_BLAS_ENGINE_H
#define OCAL_BLAS_ENGINE_H

#include "blas_internal.h"

typedef enum ocal__gemm_engine_id {
  OCAL__GEMM_OWN,     /* ocal's kernel (cl/blas_gemm.cl), always built */
  OCAL__GEMM_CLBLAST, /* one CLBlast call (strided-batched for a batch) */
  OCAL__GEMM_SPLITK,  /* CLBlast over slices of k, then ocal's sum */
  OCAL__GEMM_TC,      /* tensor cores (cl/gemm_mma.cl), where the device's probe passed */
  OCAL__GEMM_WGMMA,   /* Hopper's wgmma (cl/gemm_wgmma.cl), where its probe passed */
  OCAL__GEMM_DMMA,    /* f64 tensor cores (cl/gemm_dmma.cl), where the probe passed for f64 */
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
  int tc;                 /* the tensor-core probe passed for TF32 (asked only when precision
                             is tf32 or OCAL_GEMM names tc or wgmma: fp32 f32 never probes) */
  int wgmma;              /* the wgmma kernel's probe passed too (compute capability 9.0) */
  int tc_f16, tc_bf16;    /* the probe passed for the f16 / bf16 kernels (asked for f16/bf16
                             products unless OCAL_GEMM names ocal or clblast) */
  int wgmma_f16, wgmma_bf16; /* the wgmma kernel's probe passed for f16 / bf16 */
  int tc_f64;             /* the probe passed for the f64 kernel (asked for f64 products unless
                             OCAL_GEMM names another engine) */
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
  int widen;        /* f16/bf16 operands converted to f32 for the engine, C rounded back */
  const char *reason;
} ocal__gemm_choice;

typedef struct ocal__gemm_engine {
  const char *name;
  const char *name_half; /* its name for f16/bf16 operands (NULL: it never takes them) */
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
extern const ocal__gemm_engine ocal__gemm_engine_dmma;
extern const ocal__gemv_engine ocal__gemv_engine_own;
extern const ocal__gemm_engine *const ocal__gemm_engines[OCAL__GEMM_ENGINE_COUNT];
extern const ocal__gemv_engine *const ocal__gemv_engines[OCAL__GEMV_ENGINE_COUNT];

/* The facts of a context for a product of dtype (applies the stored CLBlast tuning first, as
 * the first BLAS call does; f16/bf16 products widened to f32 use f32's parameters).
 * ocal__blas_facts_of_device: the device, the probe and the settings only (params_known 0),
 * all the GEMV rule needs and all the GEMM rule needs for any engine but CLBlast's, without
 * the tuning table's lock. */
void ocal__blas_facts_of(ocal_context ctx, ocal_dtype dtype, ocal__blas_facts *facts);
void ocal__blas_facts_of_device(ocal_context ctx, ocal_dtype dtype, ocal__blas_facts *facts);

/* THE rule: which engine runs an m x n x k product (k > 0, batch entries of it; ta as asked)
 * of dtype (f32, f64, f16, bf16), and why. small_offsets as in ocal__gemm_call (for a widened
 * product, of the f32 copies). An f16/bf16 product that no tensor-core engine takes is
 * widened: the choice is the f32 rule's for the same shape, with widen set. A choice that
 * cannot run (OCAL_GEMM=clblast without CLBlast, a probe that failed for the engine
 * OCAL_GEMM names, a product too large for ocal's kernel) is returned with engine =
 * OCAL__GEMM_ENGINE_COUNT and the reason. */
ocal__gemm_choice ocal__gemm_rule(const ocal__blas_facts *f, ocal_dtype dtype,
                                  ocal_transpose ta, size_t m, size_t n, size_t k, size_t batch,
                                  int small_offsets);

/* The GEMV rule: ocal's kernels unless OCAL_GEMV names CLBlast. */
ocal__gemv_engine_id ocal__gemv_rule(const ocal__blas_facts *f, const char **reason);

/* The second pass of a split product: c = sum of the slices of w ({slices, m, n}, alpha
 * applied) + beta c, mn = m n (gemm_own.c; the split-K engine uses it too). */
ocal_status ocal__gemm_splitk_sum(ocal_context ctx, ocal_dtype dtype, cl_mem w, size_t mn,
                                  size_t slices, double beta, ocal_buffer c);

/* The tensor-core probe's answer for the context (tc_probe.c; it runs once per context or
 * comes from the disk cache): whether TF32 tensor cores may run, its description (owned by
 * the context), whether it came from disk and how many probe kernels this context ran (any
 * pointer may be NULL). */
ocal_status ocal__gemm_tc_answer(ocal_context ctx, int *ok, const char **detail,
                                 int *from_disk, unsigned *probes);

/* Whether a product is large enough for the wgmma kernel to pay (rule.c): its
 * 128 x 64 blocks would keep at least an eighth of the compute units busy and k covers a few
 * stages. */
int ocal__gemm_wgmma_pays(unsigned compute_units, size_t m, size_t n, size_t k, size_t batch);

/* Whether a TF32 product on the mma.sync kernel takes its 64 x 64 blocks, in one pass over k
 * (rule.c): where its 128 x 128 tiles would fill less than a quarter of the compute units and
 * the 64 x 64 blocks at least half of them. */
int ocal__gemm_tc_small_blocks(unsigned compute_units, size_t m, size_t n, size_t batch);

/* The columns of the wgmma kernel's blocks for a product (rule.c): 256, or 128 where blocks
 * of 256 would leave more than half the compute units idle, or 64 where blocks of 128 would. */
unsigned ocal__gemm_wgmma_block_n(unsigned compute_units, size_t m, size_t n, size_t batch);

/* y = beta y over a whole buffer (blas.c), as BLAS does when the product is empty. */
ocal_status ocal__blas_scale_output(ocal_buffer y, double beta, const char *func);

#endif /* OCAL_BLAS_ENGINE_H */
