/* ocal — GEMM, GEMV and the BLAS-1 calls on ocal buffers, through CLBlast.
 *
 * ocal owns the interface and the checks: every call validates its operands (handles,
 * context, element type, shapes, overlap) before CLBlast sees them, so a mistake comes back
 * as an ocal status with the shapes in the message instead of a bare CLBlast code. Row-major
 * buffers map onto CLBlast's row-major layout directly; a view's element offset is passed as
 * CLBlast's offset argument. */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "blas_internal.h"

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
                    ocal__clblast_status_name(code), code, ctx->info.name, hint);
}

/* ---- operand checks ------------------------------------------------------------------- */

/* "{7, 13}" */
static const char *shape_text(ocal_buffer b, char *out, size_t size) {
  size_t used = 0;
  out[0] = '\0';
  used += (size_t)snprintf(out, size, "{");
  for (int i = 0; i < b->ndim && used < size; i++)
    used += (size_t)snprintf(out + used, size - used, "%s%zu", i ? ", " : "", b->shape[i]);
  if (used < size) snprintf(out + used, size - used, "}");
  return out;
}

/* Validates handles, context, element type and fp64 of n operands; the first one's type is
 * the call's. */
static ocal_status check_operands(const char *func, int n, const ocal_buffer *bufs,
                                  const char *const *names, ocal_context *ctx,
                                  ocal_dtype *dtype) {
  for (int i = 0; i < n; i++) {
    if (!bufs[i]) return ocal__fail(OCAL_INVALID_HANDLE, func, "%s is NULL", names[i]);
    ocal_status s = ocal__check_buffer(bufs[i], func);
    if (s != OCAL_OK) return s;
  }
  *ctx = bufs[0]->ctx;
  *dtype = bufs[0]->dtype;
  if (*dtype != OCAL_F32 && *dtype != OCAL_F64)
    return ocal__fail(OCAL_UNSUPPORTED, func, "%s is %s: BLAS calls take f32 or f64 buffers",
                      names[0], ocal_dtype_name(*dtype));
  for (int i = 1; i < n; i++) {
    if (bufs[i]->ctx != *ctx)
      return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                        "%s and %s belong to different contexts", names[0], names[i]);
    if (bufs[i]->dtype != *dtype)
      return ocal__fail(OCAL_TYPE_MISMATCH, func, "%s is %s but %s is %s", names[0],
                        ocal_dtype_name(*dtype), names[i], ocal_dtype_name(bufs[i]->dtype));
  }
  if (*dtype == OCAL_F64 && !(*ctx)->fp64)
    return ocal__fail(OCAL_UNSUPPORTED, func, "f64 needs double precision, which %s lacks",
                      (*ctx)->info.name);
  return OCAL_OK;
}

/* Fails when two operands share memory over overlapping element ranges. */
static ocal_status check_disjoint(const char *func, ocal_buffer out, const char *out_name,
                                  ocal_buffer in, const char *in_name) {
  if (!out->mem || out->mem != in->mem || out->numel == 0 || in->numel == 0) return OCAL_OK;
  if (out->offset < in->offset + in->numel && in->offset < out->offset + out->numel)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "%s overlaps %s (views of one buffer): the result would overwrite an input",
                      out_name, in_name);
  return OCAL_OK;
}

#define OCAL__CHECK(expr)                \
  do {                                   \
    ocal_status ocal__s = (expr);        \
    if (ocal__s != OCAL_OK) return ocal__s; \
  } while (0)

static CLBlastTranspose clblast_trans(ocal_transpose t) {
  return t == OCAL_TRANS ? CLBlastTransposeYes : CLBlastTransposeNo;
}

/* x = alpha * x over n elements from offset (n > 0): CLBlast's scal. */
static ocal_status scale(ocal_context ctx, ocal_dtype dtype, double alpha, cl_mem mem,
                         size_t offset, size_t n, const char *func) {
  cl_command_queue q = ctx->queue;
  CLBlastStatusCode s = dtype == OCAL_F32
                            ? OCAL__CLBLAST(CLBlastSscal(n, (float)alpha, mem, offset, 1, &q, NULL))
                            : OCAL__CLBLAST(CLBlastDscal(n, alpha, mem, offset, 1, &q, NULL));
  if (s != CLBlastSuccess)
    return ocal__clblast_fail(ctx, s, dtype == OCAL_F32 ? "CLBlastSscal" : "CLBlastDscal", func);
  return OCAL_OK;
}

/* y = beta * y for a whole buffer, as BLAS does when the product is empty: beta = 0 writes
 * zeros without reading y (so NaNs in it go), beta = 1 leaves y alone. */
static ocal_status scale_output(ocal_buffer y, double beta, const char *func) {
  if (y->numel == 0 || beta == 1.0) return OCAL_OK;
  if (beta == 0.0) {
    double zero = 0.0;
    float zero_f = 0.0f;
    return ocal_buffer_fill(y, y->dtype == OCAL_F32 ? (const void *)&zero_f : (const void *)&zero);
  }
  return scale(y->ctx, y->dtype, beta, y->mem, y->offset, y->numel, func);
}

/* ---- GEMM ----------------------------------------------------------------------------- */

/* CLBlast's indirect GEMM allocates temporary copies of the operands, padded to its tile
 * sizes (for a batched product, one per batch entry). In CLBlast 1.5.3 a failed allocation
 * of those ends the process (std::terminate from the buffer's deleter) instead of returning
 * CLBlastTempBufferAllocFailure, so ocal asks CLBlast how much it will need and refuses what
 * the device cannot allocate. For a batched product the bound is batch times the temporary
 * size of one entry (CLBlast allocates it as up to three buffers). */
ocal_status ocal__gemm_check_temp(ocal_context ctx, ocal_dtype dtype, ocal_transpose ta,
                                   ocal_transpose tb, size_t m, size_t n, size_t k,
                                   ocal_buffer a, ocal_buffer b, ocal_buffer c, size_t batch) {
  cl_command_queue q = ctx->queue;
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
  if (overflow || total > ctx->info.max_alloc_bytes || total > ctx->info.global_mem_bytes) {
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
                      batch > 1 ? " (batched)" : "", need, ctx->info.name,
                      (unsigned long long)ctx->info.max_alloc_bytes);
  }
  return OCAL_OK;
}

/* 1 when v (case-insensitive) is one of the '|'-separated words of `words`. */
static int one_of(const char *v, const char *words) {
  size_t n = strlen(v);
  for (const char *w = words; *w;) {
    const char *end = strchr(w, '|');
    size_t len = end ? (size_t)(end - w) : strlen(w);
    if (len == n && strncasecmp(v, w, n) == 0) return 1;
    if (!end) break;
    w = end + 1;
  }
  return 0;
}

/* The settings that choose engines and paths are read at every call (tests and benches
 * switch them at run time); a value the library does not know is refused rather than taken
 * for the automatic choice, so a typing error cannot pass unseen. */
static ocal_status check_engine_settings(const char *func) {
  static const struct {
    const char *name, *words;
  } settings[] = {
      {"OCAL_GEMM", "auto|ocal|own|clblast"},
      {"OCAL_GEMM_PRETRANSPOSE", "auto|0|1"},
      {"OCAL_GEMV", "auto|ocal|clblast"},
  };
  for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
    const char *v = getenv(settings[i].name);
    if (v && *v && !one_of(v, settings[i].words))
      return ocal__fail(OCAL_INVALID_ARGUMENT, func, "%s='%s' is not one of %s (or unset)",
                        settings[i].name, v, settings[i].words);
  }
  const char *v = getenv("OCAL_GEMM_SPLITK");
  if (v && *v && !one_of(v, "auto|off|no")) {
    char *end;
    long n = strtol(v, &end, 10);
    if (*end || n < 0)
      return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                        "OCAL_GEMM_SPLITK='%s' is not auto, 0 (off), 1 (auto) or a number of "
                        "slices >= 2 (or unset)",
                        v);
  }
  return OCAL_OK;
}

ocal_status ocal_gemm(ocal_transpose ta, ocal_transpose tb, double alpha, ocal_buffer a,
                      ocal_buffer b, double beta, ocal_buffer c) {
  static const char *const names[] = {"a", "b", "c"};
  ocal_buffer bufs[] = {a, b, c};
  ocal_context ctx;
  ocal_dtype dtype;
  OCAL__CHECK(check_operands(__func__, 3, bufs, names, &ctx, &dtype));
  OCAL__CHECK(check_engine_settings(__func__));
  if ((ta != OCAL_NO_TRANS && ta != OCAL_TRANS) || (tb != OCAL_NO_TRANS && tb != OCAL_TRANS))
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "ta and tb must be OCAL_NO_TRANS or OCAL_TRANS");

  char sa[96], sb[96], sc[96];
  shape_text(a, sa, sizeof sa);
  shape_text(b, sb, sizeof sb);
  shape_text(c, sc, sizeof sc);
  if (c->ndim != 2 && c->ndim != 3)
    return OCAL_FAIL(OCAL_SHAPE_MISMATCH,
                     "c is %s: it must be 2-D {m, n} or 3-D {batch, m, n}", sc);
  if ((a->ndim != 2 && a->ndim != c->ndim) || (b->ndim != 2 && b->ndim != c->ndim))
    return OCAL_FAIL(OCAL_SHAPE_MISMATCH,
                     "a is %s, b is %s, c is %s: a and b must be 2-D, or 3-D like c for a "
                     "batched product",
                     sa, sb, sc);
  size_t batch = c->ndim == 3 ? c->shape[0] : 1;
  if ((a->ndim == 3 && a->shape[0] != batch) || (b->ndim == 3 && b->shape[0] != batch))
    return OCAL_FAIL(OCAL_SHAPE_MISMATCH,
                     "batch sizes differ: a is %s, b is %s, c is %s", sa, sb, sc);
  int an = a->ndim, bn = b->ndim, cn = c->ndim;
  size_t m = c->shape[cn - 2], n = c->shape[cn - 1];
  size_t a_rows = a->shape[an - 2], a_cols = a->shape[an - 1];
  size_t b_rows = b->shape[bn - 2], b_cols = b->shape[bn - 1];
  size_t am = ta ? a_cols : a_rows, ak = ta ? a_rows : a_cols;
  size_t bk = tb ? b_cols : b_rows, bnn = tb ? b_rows : b_cols;
  if (ak != bk || am != m || bnn != n)
    return OCAL_FAIL(OCAL_SHAPE_MISMATCH,
                     "%s: op(a) is %zux%zu (a %s%s), op(b) is %zux%zu (b %s%s), c is %zux%zu "
                     "(%s)",
                     ak != bk   ? "inner dimensions differ"
                     : am != m  ? "rows of op(a) and c differ"
                                : "columns of op(b) and c differ",
                     am, ak, sa, ta ? ", transposed" : "", bk, bnn, sb, tb ? ", transposed" : "",
                     m, n, sc);
  OCAL__CHECK(check_disjoint(__func__, c, "c", a, "a"));
  OCAL__CHECK(check_disjoint(__func__, c, "c", b, "b"));
  if (m == 0 || n == 0 || batch == 0) return OCAL_OK;
  if (ak == 0) return scale_output(c, beta, __func__);

  ocal__blas_prepare(ctx, dtype);
  size_t k = ak;
  cl_command_queue q = ctx->queue;
  CLBlastStatusCode s;
  const char *call;
  /* ocal's own kernel where it measured faster than CLBlast (gemm_own.c). */
  if (ocal__gemm_use_own(ctx, dtype, m, n, k, batch))
    return ocal__gemm_own(ctx, dtype, ta == OCAL_TRANS, tb == OCAL_TRANS, m, n, k, batch, alpha,
                          a, b, beta, c);
  /* Split-K for outputs too small to fill the device (splitk.c). */
  if (batch == 1) {
    ocal_status split_status;
    if (ocal__gemm_splitk(ctx, dtype, ta, tb, m, n, ak, alpha, a, b, beta, c, &split_status))
      return split_status;
  }
  OCAL__CHECK(ocal__gemm_check_temp(ctx, dtype, ta, tb, m, n, k, a, b, c, batch));
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
    if (ta == OCAL_NO_TRANS && ocal__gemm_pretranspose(ctx, dtype, m, n, k)) {
      size_t es = dtype == OCAL_F32 ? 4 : 8;
      OCAL__CHECK(ocal__device_alloc(ctx, m * k * es, &at));
      ocal_status ts = ocal__gemm_transpose(ctx, dtype, a, m, k, at);
      if (ts != OCAL_OK) {
        ocal__device_free(ctx, at);
        return ts;
      }
      a_mem = at, a_off = 0, a_ld = m, a_t = OCAL_TRANS;
    }
    call = dtype == OCAL_F32 ? "CLBlastSgemm" : "CLBlastDgemm";
    if (dtype == OCAL_F32)
      s = OCAL__CLBLAST(CLBlastSgemm(CLBlastLayoutColMajor, clblast_trans(tb), clblast_trans(a_t),
                                     n, m, k, (float)alpha, b->mem, b->offset, b_cols, a_mem,
                                     a_off, a_ld, (float)beta, c->mem, c->offset, n, &q, NULL));
    else
      s = OCAL__CLBLAST(CLBlastDgemm(CLBlastLayoutColMajor, clblast_trans(tb), clblast_trans(a_t),
                                     n, m, k, alpha, b->mem, b->offset, b_cols, a_mem, a_off,
                                     a_ld, beta, c->mem, c->offset, n, &q, NULL));
    if (at) ocal__device_free(ctx, at);
  } else {
    /* A 2-D operand of a batched product is shared: stride 0. */
    size_t a_stride = an == 3 ? a_rows * a_cols : 0, b_stride = bn == 3 ? b_rows * b_cols : 0;
    call = dtype == OCAL_F32 ? "CLBlastSgemmStridedBatched" : "CLBlastDgemmStridedBatched";
    if (dtype == OCAL_F32)
      s = OCAL__CLBLAST(CLBlastSgemmStridedBatched(
          CLBlastLayoutColMajor, clblast_trans(tb), clblast_trans(ta), n, m, k, (float)alpha,
          b->mem, b->offset, b_cols, b_stride, a->mem, a->offset, a_cols, a_stride, (float)beta,
          c->mem, c->offset, n, m * n, batch, &q, NULL));
    else
      s = OCAL__CLBLAST(CLBlastDgemmStridedBatched(
          CLBlastLayoutColMajor, clblast_trans(tb), clblast_trans(ta), n, m, k, alpha, b->mem,
          b->offset, b_cols, b_stride, a->mem, a->offset, a_cols, a_stride, beta, c->mem,
          c->offset, n, m * n, batch, &q, NULL));
  }
  /* CLBlast compiles its kernels on first use: where they do not build on this device (or
   * do not fit its local memory), ocal's own kernel does the product, unless OCAL_GEMM named
   * CLBlast. Nothing ran, so C is as it was. */
  if ((s == CLBlastOpenCLBuildProgramFailure || s == CLBlastInvalidProgram ||
       s == CLBlastInvalidBinary || s == CLBlastInvalidKernel ||
       s == CLBlastInvalidLocalMemUsage || s == CLBlastOpenCLCompilerNotAvailable) &&
      !ocal__gemm_clblast_named())
    return ocal__gemm_own(ctx, dtype, ta == OCAL_TRANS, tb == OCAL_TRANS, m, n, k, batch, alpha,
                          a, b, beta, c);
  if (s != CLBlastSuccess) return ocal__clblast_fail(ctx, s, call, __func__);
  return OCAL_OK;
}

/* ---- GEMV ----------------------------------------------------------------------------- */

ocal_status ocal_gemv(ocal_transpose ta, double alpha, ocal_buffer a, ocal_buffer x,
                      double beta, ocal_buffer y) {
  static const char *const names[] = {"a", "x", "y"};
  ocal_buffer bufs[] = {a, x, y};
  ocal_context ctx;
  ocal_dtype dtype;
  OCAL__CHECK(check_operands(__func__, 3, bufs, names, &ctx, &dtype));
  OCAL__CHECK(check_engine_settings(__func__));
  if (ta != OCAL_NO_TRANS && ta != OCAL_TRANS)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "ta must be OCAL_NO_TRANS or OCAL_TRANS");
  char sa[96], sx[96], sy[96];
  shape_text(a, sa, sizeof sa);
  shape_text(x, sx, sizeof sx);
  shape_text(y, sy, sizeof sy);
  if (a->ndim != 2) return OCAL_FAIL(OCAL_SHAPE_MISMATCH, "a is %s: it must be 2-D", sa);
  size_t rows = a->shape[0], cols = a->shape[1];
  size_t opm = ta ? cols : rows, opn = ta ? rows : cols;
  if (x->numel != opn || y->numel != opm)
    return OCAL_FAIL(OCAL_SHAPE_MISMATCH,
                     "op(a) is %zux%zu (a %s%s): x must have %zu elements (x is %s) and y %zu "
                     "(y is %s)",
                     opm, opn, sa, ta ? ", transposed" : "", opn, sx, opm, sy);
  OCAL__CHECK(check_disjoint(__func__, y, "y", a, "a"));
  OCAL__CHECK(check_disjoint(__func__, y, "y", x, "x"));
  if (opm == 0) return OCAL_OK;
  if (opn == 0) return scale_output(y, beta, __func__);
  /* ocal's kernels: 2.2 to 6.8x CLBlast's Xgemv on an H200 (gemv.c). */
  if (ocal__gemv_use_own()) return ocal__gemv_own(ctx, dtype, ta == OCAL_TRANS, rows, cols,
                                                  alpha, a, x, beta, y);
  /* CLBlast's Xgemv reads y even with beta = 0 (NaNs in it would survive): clear it. */
  if (beta == 0.0) OCAL__CHECK(scale_output(y, 0.0, __func__));
  ocal__blas_prepare(ctx, dtype);
  cl_command_queue q = ctx->queue;
  CLBlastStatusCode s =
      dtype == OCAL_F32
          ? OCAL__CLBLAST(CLBlastSgemv(CLBlastLayoutRowMajor, clblast_trans(ta), rows, cols,
                                       (float)alpha, a->mem, a->offset, cols, x->mem, x->offset,
                                       1, (float)beta, y->mem, y->offset, 1, &q, NULL))
          : OCAL__CLBLAST(CLBlastDgemv(CLBlastLayoutRowMajor, clblast_trans(ta), rows, cols,
                                       alpha, a->mem, a->offset, cols, x->mem, x->offset, 1, beta,
                                       y->mem, y->offset, 1, &q, NULL));
  if (s != CLBlastSuccess)
    return ocal__clblast_fail(ctx, s, dtype == OCAL_F32 ? "CLBlastSgemv" : "CLBlastDgemv",
                              __func__);
  return OCAL_OK;
}

/* BLAS-1 is ocal's own: ocal_axpy and ocal_scale (ocal/ops.h), ocal_dot and ocal_norm2
 * (ocal/reduce.h), faster than CLBlast's on an H100 and built without CLBlast too. */

#else /* !OCAL_HAVE_CLBLAST */

#define OCAL__NO_CLBLAST \
  OCAL_FAIL(OCAL_UNSUPPORTED, "this ocal was built without CLBlast (install libclblast-dev)")

ocal_status ocal_gemm(ocal_transpose ta, ocal_transpose tb, double alpha, ocal_buffer a,
                      ocal_buffer b, double beta, ocal_buffer c) {
  (void)ta, (void)tb, (void)alpha, (void)a, (void)b, (void)beta, (void)c;
  return OCAL__NO_CLBLAST;
}
ocal_status ocal_gemv(ocal_transpose ta, double alpha, ocal_buffer a, ocal_buffer x,
                      double beta, ocal_buffer y) {
  (void)ta, (void)alpha, (void)a, (void)x, (void)beta, (void)y;
  return OCAL__NO_CLBLAST;
}

#endif /* OCAL_HAVE_CLBLAST */
