/** \file
 * ocal — matrix multiply (GEMM) and matrix-vector multiply (GEMV), with per-device tuning.
 *
 * Matrices are row-major ocal buffers: a 2-D buffer of shape {rows, cols} is a matrix whose
 * leading dimension is cols. Views work (they carry an element offset), so a sub-range of
 * rows of a larger matrix is a matrix too. A 3-D buffer {batch, rows, cols} is a batch of
 * matrices for the strided-batched GEMM.
 *
 * Vectors (gemv's x and y) are buffers taken as their numel elements in row-major order,
 * whatever their shape. The BLAS-1 operations are ocal's own, one function each, for every
 * real element type: ocal_axpy and ocal_scale (ocal/ops.h), ocal_dot and ocal_norm2
 * (ocal/reduce.h).
 *
 * Element types: OCAL_F32 and OCAL_F64 (the latter only where the context has fp64, see
 * ocal_context_get_fp64); ocal_gemm also OCAL_F16 and OCAL_BF16 (see ocal_gemm). Every
 * operand of one call must have the same type and belong to
 * the same context. Calls enqueue work on the context's queue and return without waiting;
 * read the result (ocal_buffer_read) or call ocal_context_finish to wait.
 *
 * Tuning. CLBlast ships tuned kernel parameters for many devices, but not for all (none for
 * NVIDIA Hopper in 1.5.3). ocal applies better ones at the first BLAS call of a process on a
 * device and precision, in this order:
 *   1. the tuning file written by `ocal tune gemm` (ocal_blas_tune) for this device, driver
 *      and ocal version, in the cache directory (the context's cache_dir, else
 *      $OCAL_CACHE_DIR, $XDG_CACHE_HOME/ocal or ~/.cache/ocal); a malformed or foreign file
 *      is ignored with a warning on stderr;
 *   2. parameters built into ocal for devices its authors measured (an NVIDIA H100);
 *   3. else CLBlast's own defaults.
 * OCAL_TUNING=0 in the environment turns 1 and 2 off. Parameters apply to the whole process
 * (CLBlast keeps them per device), so the first context on a device decides.
 *
 * A GEMM whose output has too few tiles to fill the device while its size sends it to
 * CLBlast's indirect kernel is split along k into partial products (one batched CLBlast
 * call) summed by an ocal kernel; OCAL_GEMM_SPLITK=0 turns that off. ocal_gemv runs ocal's
 * own kernels (faster than CLBlast's Xgemv); OCAL_GEMV=clblast goes back to CLBlast.
 * GEMMs below 4096^3 in f32 run ocal's own tiled kernel on GPUs (OCAL_GEMM=clblast|ocal).
 * A value of OCAL_GEMM, OCAL_GEMM_SPLITK, OCAL_GEMM_PRETRANSPOSE or OCAL_GEMV that ocal does
 * not know makes ocal_context_create fail with OCAL_INVALID_ARGUMENT, naming it (every
 * OCAL_* setting is read there, README.md's Settings). */
#ifndef OCAL_BLAS_H
#define OCAL_BLAS_H

#include <stddef.h>

#include "ocal/buffer.h"
#include "ocal/context.h"
#include "ocal/export.h"
#include "ocal/status.h"
#include "ocal/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Whether an operand is used as stored or transposed. */
typedef enum ocal_transpose {
  OCAL_NO_TRANS = 0, /**< op(X) = X */
  OCAL_TRANS = 1     /**< op(X) = X^T */
} ocal_transpose;

/** Short name of a transpose, as BLAS spells it ("N", "T").
 * \param ta any value.
 * \returns a static string; "invalid" for a value that is not an ocal_transpose. */
OCAL_API const char *ocal_transpose_name(ocal_transpose ta);

/** Matrix multiply: C = alpha * op(A) * op(B) + beta * C.
 *
 * 2-D: op(A) is m x k, op(B) is k x n, C is m x n. 3-D (strided-batched, one call to
 * CLBlast, no host loop): C is {batch, m, n}; A and B are {batch, ...} or 2-D, in which case
 * the one matrix is used for every batch entry. With k = 0, C = beta * C.
 *
 * f16 and bf16 operands give a result of the same type (f16 x f16 -> f16): their products
 * accumulate in f32, alpha and beta apply in f32 and the result is rounded to nearest even.
 * Where the device's tensor-core probe passed for the type (ocal_gemm_get_precision), one
 * tensor-core kernel does it (mma.sync m16n8k16; on compute capability 9.0, wgmma for large
 * products); elsewhere they are converted to f32 and multiplied by the engine the rule picks
 * for f32. No precision mode is involved: the 16-bit products are exact either way.
 * \param ta whether A is transposed: A has shape {m, k}, or {k, m} with OCAL_TRANS.
 * \param tb whether B is transposed: B has shape {k, n}, or {n, k} with OCAL_TRANS.
 * \param alpha scale of the product.
 * \param a the matrix A (or batch of them).
 * \param b the matrix B (or batch of them).
 * \param beta scale of C's old contents; with beta = 0 they need not be initialised.
 * \param c the result, which must not overlap A or B.
 * \returns OCAL_OK; OCAL_SHAPE_MISMATCH (the message gives the shapes); OCAL_TYPE_MISMATCH;
 *          OCAL_UNSUPPORTED (not f32/f64/f16/bf16, no fp64; without CLBlast, only
 *          OCAL_GEMM=clblast and dimensions beyond 2^31 - 1, which ocal's own kernel cannot
 *          index; OCAL_GEMM=tc or OCAL_GEMM=wgmma for an f32 product where the context's
 *          precision is fp32, or where the device's tensor-core probe failed for the type
 *          (wgmma: compute capability 9.0 only, and never for f64));
 *          OCAL_INVALID_ARGUMENT (different contexts, overlapping C, a ta or tb that is not
 *          an ocal_transpose); OCAL_INVALID_HANDLE (a NULL or released buffer);
 *          OCAL_OUT_OF_DEVICE_MEMORY when CLBlast cannot allocate its temporary buffers, and
 *          other statuses translated from CLBlast's (the message names the CLBlast code).
 *          The context stays usable after a failure. */
OCAL_API ocal_status ocal_gemm(ocal_transpose ta, ocal_transpose tb, double alpha,
                               ocal_buffer a, ocal_buffer b, double beta, ocal_buffer c);

/** Which engine ocal_gemm runs a product on, and why, without running it: the same rule
 * ocal_gemm asks (ocal's own kernel, CLBlast, split-K over CLBlast, tensor cores in TF32
 * where the context's precision allows it, tensor cores for f16/bf16 where the device's
 * probe passed for the type) under the context's settings (OCAL_GEMM and friends, read when
 * the context was created). The answer assumes the operands' offsets fit CLBlast's int.
 * \param ctx the context whose device and settings decide.
 * \param dtype OCAL_F32, OCAL_F64, OCAL_F16 or OCAL_BF16. An f16/bf16 product that no
 *        tensor-core kernel takes runs as an f32 product between conversions: the answer is
 *        that f32 product's engine.
 * \param ta whether A is transposed (as for ocal_gemm).
 * \param m rows of C.
 * \param n columns of C.
 * \param k the inner dimension.
 * \param batch batch entries (1 for a 2-D product).
 * \param engine receives the engine's name ("ocal", "CLBlast", "split-K over CLBlast",
 *        "tensor cores (tf32, mma.sync)", "tensor cores (tf32, wgmma)", for f64
 *        "tensor cores (f64, mma.sync)", and for f16/bf16 "tensor cores (f16/bf16, mma.sync)"
 *        or "tensor cores (f16/bf16, wgmma)"), a static string the caller does not free.
 * \param reason receives why, e.g. "f32 on a GPU, m*n*k < 4096^3: ocal's kernel", a static
 *        string the caller does not free.
 * \returns OCAL_OK; OCAL_UNSUPPORTED when no engine of this build can run the product
 *          (*reason says why, *engine is "none"); OCAL_INVALID_ARGUMENT for a NULL pointer,
 *          another dtype, a bad ta or a zero dimension; OCAL_INVALID_HANDLE. */
OCAL_API ocal_status ocal_gemm_engine_query(ocal_context ctx, ocal_dtype dtype, ocal_transpose ta,
                                            size_t m, size_t n, size_t k, size_t batch,
                                            const char **engine, const char **reason);

/** The GEMM precision of a context and whether its device runs TF32 on tensor cores.
 * The first call on a context whose device may have them (a driver reporting compute
 * capability 8.0 or more) runs the tensor-core probe: it builds cl/gemm_mma.cl, runs its
 * probe kernel and one small GEMM against a host check, and keeps the answer in the context
 * and in the disk cache (per device, driver and ocal version), so later contexts read it.
 * \param ctx the context.
 * \param precision receives the context's precision: the gemm_precision option, else
 *        OCAL_GEMM_PRECISION (OCAL_GEMM_PRECISION_FP32 or OCAL_GEMM_PRECISION_TF32).
 * \param tensor_cores receives 1 when the probe passed (f32 GEMMs of a TF32 context may run
 *        on tensor cores), else 0.
 * \param detail receives the probe's answer in words, e.g. "tensor cores (tf32, mma.sync
 *        m16n8k8): probe passed (...; wgmma passed ...)", owned by the context (valid until it
 *        is released); may be NULL. On compute capability 9.0 the probe also checks the
 *        wgmma kernel (rebuilt from PTX for sm_90a), for f32 in TF32, f16 and bf16.
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_INVALID_ARGUMENT when precision or
 *          tensor_cores is NULL. */
OCAL_API ocal_status ocal_gemm_get_precision(ocal_context ctx, ocal_gemm_precision *precision,
                                             int *tensor_cores, const char **detail);

/** Matrix-vector multiply: y = alpha * op(A) * x + beta * y.
 * \param ta whether A (2-D, {rows, cols}) is transposed.
 * \param alpha scale of the product.
 * \param a the matrix, 2-D.
 * \param x a vector with as many elements as op(A) has columns.
 * \param beta scale of y's old contents.
 * \param y a vector with as many elements as op(A) has rows; must not overlap A or x.
 * \returns OCAL_OK or an error as for ocal_gemm; OCAL_UNSUPPORTED also for f16 and bf16
 *          (f32 and f64 only). */
OCAL_API ocal_status ocal_gemv(ocal_transpose ta, double alpha, ocal_buffer a, ocal_buffer x,
                               double beta, ocal_buffer y);

/* ---- tuning ------------------------------------------------------------------------- */

/** Where the GEMM parameters in effect came from (ocal_blas_tuning.source). */
typedef enum ocal_blas_tuning_source {
  OCAL_TUNING_DEFAULT = 0, /**< CLBlast's own defaults: no tuning file, nothing built in */
  OCAL_TUNING_DISABLED,    /**< OCAL_TUNING=0: CLBlast's own defaults */
  OCAL_TUNING_BUILTIN,     /**< parameters built into ocal for this device */
  OCAL_TUNING_FILE,        /**< this device's tuning file (written by ocal_blas_tune) */
  OCAL_TUNING_USER         /**< ocal_blas_tuning_apply, or ocal_blas_tune without storing */
} ocal_blas_tuning_source;

/** Short name of a tuning source ("default", "disabled", "builtin", "file", "user").
 * \param source any value.
 * \returns a static string; "invalid" for a value that is not an ocal_blas_tuning_source. */
OCAL_API const char *ocal_blas_tuning_source_name(ocal_blas_tuning_source source);

/** The GEMM tuning in effect for one device and precision. Its strings belong to ocal and
 * stay valid and unchanged for the rest of the process (a later tuning gives new strings):
 * neither free nor modify them.
 * The library fills it; set struct_size = sizeof(ocal_blas_tuning) before the call
 * (`ocal_blas_tuning x = {.struct_size = sizeof x};`), as for every struct ocal fills:
 * a later version may append fields, and then writes only the ones a program compiled
 * against this struct knows. */
typedef struct ocal_blas_tuning {
  size_t struct_size;             /**< sizeof(ocal_blas_tuning), set by the caller */
  ocal_blas_tuning_source source; /**< where the parameters come from */
  const char *path;   /**< the tuning file for this device (whether or not it exists), ""
                           when no cache directory can be named */
  const char *params; /**< the parameters in effect, "NAME=VALUE" lines; "" for CLBlast's
                           defaults */
  const char *note;   /**< where they come from: the device and driver they were measured
                           on */
  double gflops;      /**< for ocal_blas_tune: the best GEMM rate it measured; else 0 */
} ocal_blas_tuning;

/** Reports the GEMM tuning in effect for the context's device (applying the stored tuning
 * first if no BLAS call has done so yet).
 * \param ctx the context.
 * \param dtype OCAL_F32 or OCAL_F64.
 * \param info receives the facts; set its struct_size first.
 * \returns OCAL_OK; OCAL_UNSUPPORTED for other types or without CLBlast;
 *          OCAL_INVALID_ARGUMENT for a NULL info or a bad info->struct_size;
 *          OCAL_INVALID_HANDLE. */
OCAL_API ocal_status ocal_blas_get_tuning(ocal_context ctx, ocal_dtype dtype,
                                          ocal_blas_tuning *info);

/** Applies GEMM parameters to the context's device for the rest of the process (nothing is
 * stored). The text has one NAME=VALUE per line for every parameter of CLBlast's Xgemm
 * (GEMMK KREG KWG KWI MDIMA MDIMC MWG NDIMB NDIMC NWG SA SB STRM STRN VWM VWN), XgemmDirect
 * (KWID MDIMAD MDIMCD NDIMBD NDIMCD PADA PADB VWMD VWND WGD) and XGEMM_MIN_INDIRECT_SIZE
 * (the size from which the indirect Xgemm kernel takes over); '#' starts a comment.
 * \param ctx the context.
 * \param dtype OCAL_F32 or OCAL_F64.
 * \param params the text.
 * \returns OCAL_OK; OCAL_INVALID_ARGUMENT for a NULL params, an unknown name, a missing
 *          parameter, a value out of range or parameters that break CLBlast's constraints or
 *          the device's limits (the message says which); OCAL_UNSUPPORTED for a dtype other
 *          than f32 and f64, or without CLBlast; OCAL_INVALID_HANDLE. */
OCAL_API ocal_status ocal_blas_tuning_apply(ocal_context ctx, ocal_dtype dtype,
                                            const char *params);

/** Phases of ocal_blas_tune, for ocal_blas_tune_options.phases. */
#define OCAL_TUNE_XGEMM 1u  /**< CLBlast's Xgemm kernel (the indirect path, large products) */
#define OCAL_TUNE_DIRECT 2u /**< its XgemmDirect kernel (small and skinny products) */
#define OCAL_TUNE_SWITCH 4u /**< the size from which the indirect path takes over */

/** Options of ocal_blas_tune. Start from ocal_blas_tune_options_init(), which sets
 * struct_size: a program compiled against an older, shorter struct keeps working with a
 * newer library (the fields it lacks take their defaults). */
typedef struct ocal_blas_tune_options {
  size_t struct_size; /**< sizeof(ocal_blas_tune_options), set by ocal_blas_tune_options_init */
  ocal_dtype dtype; /**< OCAL_F32 (default) or OCAL_F64 */
  double budget_s;  /**< time to spend searching, in seconds (default 60); the first
                         candidate is always measured, however long it takes */
  int store;        /**< 1 (default): write the winner to the device's tuning file */
  size_t size;      /**< square size at which the indirect kernel is timed; 0 (default):
                         4096 on a GPU with room for it, else 512 */
  unsigned seed;    /**< random seed of the search (default 1) */
  unsigned phases;  /**< OCAL_TUNE_* bits to search (default all; 0 also means all); the
                         parameters of the other phases stay as they are in effect. Other
                         bits are refused with OCAL_INVALID_ARGUMENT */
  void (*progress)(const char *line, void *user); /**< NULL, or called with one line of
                                                       text per step */
  void *user;       /**< passed to progress */
} ocal_blas_tune_options;

/** Fills \p options with the defaults and sets its struct_size.
 * \param options the options to fill.
 * \returns OCAL_OK, or OCAL_INVALID_ARGUMENT when options is NULL. */
OCAL_API ocal_status ocal_blas_tune_options_init(ocal_blas_tune_options *options);

/** Searches GEMM parameters for the context's device within a time budget: CLBlast's Xgemm
 * kernel (at the large size), its XgemmDirect kernel (at a size below the switch point) and
 * the switch point between them (XGEMM_MIN_INDIRECT_SIZE). Each candidate runs a real GEMM
 * through CLBlast, checked against a double-precision host reference; the fastest correct
 * one wins, is applied for the rest of the process and (with store) written atomically to
 * the device's tuning file, which every later process then applies.
 * \param ctx the context (its device is tuned).
 * \param options NULL for the defaults.
 * \param result receives the winner; may be NULL, else set its struct_size first (checked
 *        before any tuning).
 * \returns OCAL_OK; OCAL_INVALID_ARGUMENT for bad options (a struct_size not from
 *          ocal_blas_tune_options_init, a negative or NaN budget_s, unknown phases bits) or a
 *          bad result->struct_size, checked before any tuning; OCAL_UNSUPPORTED (a dtype other
 *          than f32 and f64, or without CLBlast); OCAL_INVALID_HANDLE; OCAL_INTERNAL when no
 *          candidate ran correctly. */
OCAL_API ocal_status ocal_blas_tune(ocal_context ctx, const ocal_blas_tune_options *options,
                                    ocal_blas_tuning *result);

#ifdef __cplusplus
}
#endif

#endif /* OCAL_BLAS_H */
