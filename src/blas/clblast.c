/* ocal — the CLBlast engines: GEMM (one call, or strided-batched), GEMV, and the BLAS-1 calls
 * ocal has no kernel of its own for (axpy, scal), with CLBlast's status codes mapped onto
 * ocal's. Built only with CLBlast (configure --without-clblast leaves it out; the engine
 * tables in blas.c then hold NULL for it).
 *
 * Row-major buffers map onto CLBlast's layouts directly; a view's element offset is passed as
 * CLBlast's offset argument. A is pre-transposed by ocal (the rule's choice, rule.c) only
 * above CLBlast's direct/indirect switch point: the indirect kernel then runs faster, while
 * below it the direct kernel reads A in place and the extra pass only costs
 * (docs/blas-engines.md, section "CLBlast"). */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

#ifdef OCAL_HAVE_CLBLAST
#include <clblast_c.h>

/* ---- CLBlast status codes ------------------------------------------------------------- */

/* X(name, ocal status) for every code of clblast_c.h. */
#define OCAL__CLBLAST_STATUS_MAP(X)                                  \
  X(CLBlastSuccess, OCAL_OK)                                         \
  X(CLBlastOpenCLCompilerNotAvailable, OCAL_UNSUPPORTED)             \
  X(CLBlastTempBufferAllocFailure, OCAL_OUT_OF_DEVICE_MEMORY)        \
  X(CLBlastOpenCLOutOfResources, OCAL_OUT_OF_DEVICE_MEMORY)          \
  X(CLBlastOpenCLOutOfHostMemory, OCAL_OUT_OF_HOST_MEMORY)           \
  X(CLBlastOpenCLBuildProgramFailure, OCAL_BUILD_FAILED)             \
  X(CLBlastInvalidValue, OCAL_OPENCL_ERROR)                          \
  X(CLBlastInvalidCommandQueue, OCAL_OPENCL_ERROR)                   \
  X(CLBlastInvalidMemObject, OCAL_OPENCL_ERROR)                      \
  X(CLBlastInvalidBinary, OCAL_OPENCL_ERROR)                         \
  X(CLBlastInvalidBuildOptions, OCAL_BUILD_FAILED)                   \
  X(CLBlastInvalidProgram, OCAL_OPENCL_ERROR)                        \
  X(CLBlastInvalidProgramExecutable, OCAL_OPENCL_ERROR)              \
  X(CLBlastInvalidKernelName, OCAL_OPENCL_ERROR)                     \
  X(CLBlastInvalidKernelDefinition, OCAL_OPENCL_ERROR)               \
  X(CLBlastInvalidKernel, OCAL_OPENCL_ERROR)                         \
  X(CLBlastInvalidArgIndex, OCAL_OPENCL_ERROR)                       \
  X(CLBlastInvalidArgValue, OCAL_OPENCL_ERROR)                       \
  X(CLBlastInvalidArgSize, OCAL_OPENCL_ERROR)                        \
  X(CLBlastInvalidKernelArgs, OCAL_OPENCL_ERROR)                     \
  X(CLBlastInvalidLocalNumDimensions, OCAL_OPENCL_ERROR)             \
  X(CLBlastInvalidLocalThreadsTotal, OCAL_OPENCL_ERROR)              \
  X(CLBlastInvalidLocalThreadsDim, OCAL_OPENCL_ERROR)                \
  X(CLBlastInvalidGlobalOffset, OCAL_OPENCL_ERROR)                   \
  X(CLBlastInvalidEventWaitList, OCAL_OPENCL_ERROR)                  \
  X(CLBlastInvalidEvent, OCAL_OPENCL_ERROR)                          \
  X(CLBlastInvalidOperation, OCAL_OPENCL_ERROR)                      \
  X(CLBlastInvalidBufferSize, OCAL_OUT_OF_DEVICE_MEMORY)             \
  X(CLBlastInvalidGlobalWorkSize, OCAL_OPENCL_ERROR)                 \
  X(CLBlastNotImplemented, OCAL_UNSUPPORTED)                         \
  X(CLBlastInvalidMatrixA, OCAL_INVALID_ARGUMENT)                    \
  X(CLBlastInvalidMatrixB, OCAL_INVALID_ARGUMENT)                    \
  X(CLBlastInvalidMatrixC, OCAL_INVALID_ARGUMENT)                    \
  X(CLBlastInvalidVectorX, OCAL_INVALID_ARGUMENT)                    \
  X(CLBlastInvalidVectorY, OCAL_INVALID_ARGUMENT)                    \
  X(CLBlastInvalidDimension, OCAL_SHAPE_MISMATCH)                    \
  X(CLBlastInvalidLeadDimA, OCAL_SHAPE_MISMATCH)                     \
  X(CLBlastInvalidLeadDimB, OCAL_SHAPE_MISMATCH)                     \
  X(CLBlastInvalidLeadDimC, OCAL_SHAPE_MISMATCH)                     \
  X(CLBlastInvalidIncrementX, OCAL_INVALID_ARGUMENT)                 \
  X(CLBlastInvalidIncrementY, OCAL_INVALID_ARGUMENT)                 \
  X(CLBlastInsufficientMemoryA, OCAL_SHAPE_MISMATCH)                 \
  X(CLBlastInsufficientMemoryB, OCAL_SHAPE_MISMATCH)                 \
  X(CLBlastInsufficientMemoryC, OCAL_SHAPE_MISMATCH)                 \
  X(CLBlastInsufficientMemoryX, OCAL_SHAPE_MISMATCH)                 \
  X(CLBlastInsufficientMemoryY, OCAL_SHAPE_MISMATCH)                 \
  X(CLBlastInsufficientMemoryTemp, OCAL_OUT_OF_DEVICE_MEMORY)        \
  X(CLBlastInvalidBatchCount, OCAL_SHAPE_MISMATCH)                   \
  X(CLBlastInvalidOverrideKernel, OCAL_INVALID_ARGUMENT)             \
  X(CLBlastMissingOverrideParameter, OCAL_INVALID_ARGUMENT)          \
  X(CLBlastInvalidLocalMemUsage, OCAL_INVALID_ARGUMENT)              \
  X(CLBlastNoHalfPrecision, OCAL_UNSUPPORTED)                        \
  X(CLBlastNoDoublePrecision, OCAL_UNSUPPORTED)                      \
  X(CLBlastInvalidVectorScalar, OCAL_INVALID_ARGUMENT)               \
  X(CLBlastInsufficientMemoryScalar, OCAL_SHAPE_MISMATCH)            \
  X(CLBlastDatabaseError, OCAL_INTERNAL)                             \
  X(CLBlastUnknownError, OCAL_OPENCL_ERROR)                          \
  X(CLBlastUnexpectedError, OCAL_INTERNAL)

const char *ocal__clblast_status_name(int code) {
  switch (code) {
#define OCAL__CLBLAST_NAME(name, status) \
  case name:                             \
    return #name;
    OCAL__CLBLAST_STATUS_MAP(OCAL__CLBLAST_NAME)
#undef OCAL__CLBLAST_NAME
    default:
      return "CLBlastUnknownStatus";
  }
}

static ocal_status clblast_status(int code) {
  switch (code) {
#define OCAL__CLBLAST_STATUS(name, status) \
  case name:                               \
    return status;
    OCAL__CLBLAST_STATUS_MAP(OCAL__CLBLAST_STATUS)
#undef OCAL__CLBLAST_STATUS
    default:
      return OCAL_OPENCL_ERROR;
  }
}

static pthread_mutex_t first_use = PTHREAD_MUTEX_INITIALIZER;
static atomic_int database_filled;
static _Thread_local int holds_first_use;

void ocal__clblast_begin(void) {
  holds_first_use = 0;
  if (atomic_load_explicit(&database_filled, memory_order_acquire)) return;
  pthread_mutex_lock(&first_use);
  holds_first_use = 1;
}

int ocal__clblast_end(int status) {
  if (holds_first_use) {
    if (status == CLBlastSuccess)
      atomic_store_explicit(&database_filled, 1, memory_order_release);
    holds_first_use = 0;
    pthread_mutex_unlock(&first_use);
  }
  return status;
}

ocal_status ocal__clblast_fail(ocal_context ctx, int code, const char *call, const char *func) {
  ocal_status status = clblast_status(code);
  if (status == OCAL_OK) status = OCAL_INTERNAL;
  const char *hint = "";
  if (code == CLBlastTempBufferAllocFailure || code == CLBlastInvalidBufferSize ||
      code == CLBlastOpenCLOutOfResources)
    hint = " (CLBlast could not allocate its temporary buffers: the shape is too large for the "
           "device's memory or largest allocation)";
  return ocal__fail(status, func, "%s failed with %s (%d) on %s%s", call,
                    ocal__clblast_status_name(code), code, ocal__context_info(ctx)->name, hint);
}

static CLBlastTranspose clblast_trans(ocal_transpose t) {
  return t == OCAL_TRANS ? CLBlastTransposeYes : CLBlastTransposeNo;
}

/* x = alpha * x over n elements from offset (n > 0): CLBlast's scal. */
ocal_status ocal__clblast_scal(ocal_context ctx, ocal_dtype dtype, double alpha, cl_mem mem,
                         size_t offset, size_t n, const char *func) {
  cl_command_queue q = ocal__context_queue(ctx);
  CLBlastStatusCode s = dtype == OCAL_F32
                            ? OCAL__CLBLAST(CLBlastSscal(n, (float)alpha, mem, offset, 1, &q, NULL))
                            : OCAL__CLBLAST(CLBlastDscal(n, alpha, mem, offset, 1, &q, NULL));
  if (s != CLBlastSuccess)
    return ocal__clblast_fail(ctx, s, dtype == OCAL_F32 ? "CLBlastSscal" : "CLBlastDscal", func);
  return OCAL_OK;
}

/* CLBlast's indirect GEMM allocates temporary copies of the operands, padded to its tile
 * sizes (for a batched product, one per batch entry). In CLBlast 1.5.3 a failed allocation
 * of those ends the process (std::terminate from the buffer's deleter) instead of returning
 * CLBlastTempBufferAllocFailure, so ocal asks CLBlast how much it will need and refuses what
 * the device cannot allocate. For a batched product the bound is batch times the temporary
 * size of one entry (CLBlast allocates it as up to three buffers). */
ocal_status ocal__gemm_check_temp(ocal_context ctx, ocal_dtype dtype, ocal_transpose ta,
                                   ocal_transpose tb, size_t m, size_t n, size_t k,
                                   ocal_buffer a, ocal_buffer b, ocal_buffer c, size_t batch) {
  cl_command_queue q = ocal__context_queue(ctx);
  size_t lda = a->shape[a->ndim - 1], ldb = b->shape[b->ndim - 1], bytes = 0;
  /* The batched routine decides on temporaries as if every offset were 0. */
  size_t ao = batch == 1 ? a->offset : 0, bo = batch == 1 ? b->offset : 0;
  size_t co = batch == 1 ? c->offset : 0;
  CLBlastStatusCode s =
      dtype == OCAL_F32
          ? OCAL__CLBLAST(CLBlastSGemmTempBufferSize(CLBlastLayoutColMajor, clblast_trans(tb),
                                                     clblast_trans(ta), n, m, k, bo, ldb, ao,
                                                     lda, co, n, &q, &bytes))
          : OCAL__CLBLAST(CLBlastDGemmTempBufferSize(CLBlastLayoutColMajor, clblast_trans(tb),
                                                     clblast_trans(ta), n, m, k, bo, ldb, ao,
                                                     lda, co, n, &q, &bytes));
  const char *call = dtype == OCAL_F32 ? "CLBlastSGemmTempBufferSize" : "CLBlastDGemmTempBufferSize";
  if (s != CLBlastSuccess) return ocal__clblast_fail(ctx, s, call, "ocal_gemm");
  size_t total;
  int overflow = ocal__mul_overflows(bytes, batch, &total);
  if (overflow || total > ocal__context_info(ctx)->max_alloc_bytes || total > ocal__context_info(ctx)->global_mem_bytes) {
    char need[64];
    if (overflow)
      snprintf(need, sizeof need, "more than SIZE_MAX bytes");
    else
      snprintf(need, sizeof need, "%zu bytes", total);
    return ocal__fail(OCAL_OUT_OF_DEVICE_MEMORY, "ocal_gemm",
                      "CLBlast's %s GEMM of %zux%zux%zu%s would need temporary buffers of %s "
                      "(padded copies of the operands), more than %s allows in one allocation "
                      "(%llu bytes): refused before CLBlast, which cannot recover from a failed "
                      "allocation of them",
                      dtype == OCAL_F32 ? "f32" : "f64", m, n, k,
                      batch > 1 ? " (batched)" : "", need, ocal__context_info(ctx)->name,
                      (unsigned long long)ocal__context_info(ctx)->max_alloc_bytes);
  }
  return OCAL_OK;
}


/* ---- GEMM ----------------------------------------------------------------------------- */

/* 1 for the CLBlast codes that say its kernels do not build or fit on this device. */
static int not_built_code(CLBlastStatusCode s) {
  return s == CLBlastOpenCLBuildProgramFailure || s == CLBlastInvalidProgram ||
         s == CLBlastInvalidBinary || s == CLBlastInvalidKernel ||
         s == CLBlastInvalidLocalMemUsage || s == CLBlastOpenCLCompilerNotAvailable;
}

static ocal_status gemm_run(const ocal__gemm_call *g, const ocal__gemm_choice *choice,
                            int *not_built) {
  ocal_context ctx = g->ctx;
  ocal_dtype dtype = g->dtype;
  ocal_buffer a = g->a, b = g->b, c = g->c;
  size_t m = g->m, n = g->n, k = g->k, batch = g->batch;
  ocal_transpose ta = g->ta, tb = g->tb;
  int an = a->ndim, bn = b->ndim;
  size_t a_rows = a->shape[an - 2], a_cols = a->shape[an - 1];
  size_t b_rows = b->shape[bn - 2], b_cols = b->shape[bn - 1];
  *not_built = 0;
  ocal_status st = ocal__gemm_check_temp(ctx, dtype, ta, tb, m, n, k, a, b, c, batch);
  if (st != OCAL_OK) return st;
  cl_command_queue q = ocal__context_queue(ctx);
  CLBlastStatusCode s;
  const char *call;
  /* Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T over the same memory:
   * CLBlast is called so, with A and B swapped. Its fast kernel wants A' as stored and B'
   * rotated in column-major terms, so this form needs at most one pre-processing pass (over
   * A) where the row-major call would also transpose C in and out. */
  if (batch == 1) {
    /* That pass is CLBlast's own transposition of A into a buffer it creates and releases
     * on every call (its C API takes no temporary buffer); ocal can do it into pooled
     * scratch instead and hand CLBlast the transposed A, which it then reads as is. */
    cl_mem a_mem = a->mem, at = NULL;
    size_t a_off = a->offset, a_ld = a_cols;
    ocal_transpose a_t = ta;
    if (choice->pretranspose) {
      size_t es = dtype == OCAL_F32 ? 4 : 8;
      st = ocal__device_alloc(ctx, m * k * es, &at, "ocal_gemm");
      if (st != OCAL_OK) return st;
      st = ocal__gemm_transpose(ctx, dtype, a, m, k, at);
      if (st != OCAL_OK) {
        ocal__device_free(ctx, at);
        return st;
      }
      a_mem = at, a_off = 0, a_ld = m, a_t = OCAL_TRANS;
    }
    call = dtype == OCAL_F32 ? "CLBlastSgemm" : "CLBlastDgemm";
    if (dtype == OCAL_F32)
      s = OCAL__CLBLAST(CLBlastSgemm(CLBlastLayoutColMajor, clblast_trans(tb), clblast_trans(a_t),
                                     n, m, k, (float)g->alpha, b->mem, b->offset, b_cols, a_mem,
                                     a_off, a_ld, (float)g->beta, c->mem, c->offset, n, &q, NULL));
    else
      s = OCAL__CLBLAST(CLBlastDgemm(CLBlastLayoutColMajor, clblast_trans(tb), clblast_trans(a_t),
                                     n, m, k, g->alpha, b->mem, b->offset, b_cols, a_mem, a_off,
                                     a_ld, g->beta, c->mem, c->offset, n, &q, NULL));
    if (at) ocal__device_free(ctx, at);
  } else {
    /* A 2-D operand of a batched product is shared: stride 0. */
    size_t a_stride = an == 3 ? a_rows * a_cols : 0, b_stride = bn == 3 ? b_rows * b_cols : 0;
    call = dtype == OCAL_F32 ? "CLBlastSgemmStridedBatched" : "CLBlastDgemmStridedBatched";
    if (dtype == OCAL_F32)
      s = OCAL__CLBLAST(CLBlastSgemmStridedBatched(
          CLBlastLayoutColMajor, clblast_trans(tb), clblast_trans(ta), n, m, k, (float)g->alpha,
          b->mem, b->offset, b_cols, b_stride, a->mem, a->offset, a_cols, a_stride,
          (float)g->beta, c->mem, c->offset, n, m * n, batch, &q, NULL));
    else
      s = OCAL__CLBLAST(CLBlastDgemmStridedBatched(
          CLBlastLayoutColMajor, clblast_trans(tb), clblast_trans(ta), n, m, k, g->alpha,
          b->mem, b->offset, b_cols, b_stride, a->mem, a->offset, a_cols, a_stride, g->beta,
          c->mem, c->offset, n, m * n, batch, &q, NULL));
  }
  /* CLBlast compiles its kernels on first use: where they do not build on this device (or do
   * not fit its local memory), nothing ran and C is as it was; blas.c runs ocal's kernel
   * instead unless OCAL_GEMM named CLBlast. */
  if (not_built_code(s) && !choice->named) {
    *not_built = 1;
    return OCAL_UNSUPPORTED;
  }
  if (s != CLBlastSuccess) return ocal__clblast_fail(ctx, s, call, "ocal_gemm");
  return OCAL_OK;
}

const ocal__gemm_engine ocal__gemm_engine_clblast = {"CLBlast", NULL, gemm_run};

/* ---- GEMV ----------------------------------------------------------------------------- */

static ocal_status gemv_run(ocal_context ctx, ocal_dtype dtype, int trans, size_t rows,
                            size_t cols, double alpha, ocal_buffer a, ocal_buffer x, double beta,
                            ocal_buffer y) {
  /* CLBlast's Xgemv reads y even with beta = 0 (NaNs in it would survive): clear it. */
  if (beta == 0.0) {
    ocal_status st = ocal__blas_scale_output(y, 0.0, "ocal_gemv");
    if (st != OCAL_OK) return st;
  }
  ocal__blas_prepare(ctx, dtype);
  cl_command_queue q = ocal__context_queue(ctx);
  CLBlastTranspose t = trans ? CLBlastTransposeYes : CLBlastTransposeNo;
  CLBlastStatusCode s =
      dtype == OCAL_F32
          ? OCAL__CLBLAST(CLBlastSgemv(CLBlastLayoutRowMajor, t, rows, cols, (float)alpha,
                                       a->mem, a->offset, cols, x->mem, x->offset, 1,
                                       (float)beta, y->mem, y->offset, 1, &q, NULL))
          : OCAL__CLBLAST(CLBlastDgemv(CLBlastLayoutRowMajor, t, rows, cols, alpha, a->mem,
                                       a->offset, cols, x->mem, x->offset, 1, beta, y->mem,
                                       y->offset, 1, &q, NULL));
  if (s != CLBlastSuccess)
    return ocal__clblast_fail(ctx, s, dtype == OCAL_F32 ? "CLBlastSgemv" : "CLBlastDgemv",
                              "ocal_gemv");
  return OCAL_OK;
}

const ocal__gemv_engine ocal__gemv_engine_clblast = {"CLBlast", gemv_run};

/* ---- BLAS-1 --------------------------------------------------------------------------- */

ocal_status ocal__clblast_axpy(ocal_context ctx, ocal_dtype dtype, double alpha, ocal_buffer x,
                               ocal_buffer y, const char *func) {
  cl_command_queue q = ocal__context_queue(ctx);
  CLBlastStatusCode s =
      dtype == OCAL_F32 ? OCAL__CLBLAST(CLBlastSaxpy(x->numel, (float)alpha, x->mem, x->offset, 1,
                                                     y->mem, y->offset, 1, &q, NULL))
                        : OCAL__CLBLAST(CLBlastDaxpy(x->numel, alpha, x->mem, x->offset, 1,
                                                     y->mem, y->offset, 1, &q, NULL));
  if (s != CLBlastSuccess)
    return ocal__clblast_fail(ctx, s, dtype == OCAL_F32 ? "CLBlastSaxpy" : "CLBlastDaxpy", func);
  return OCAL_OK;
}

#endif /* OCAL_HAVE_CLBLAST */
