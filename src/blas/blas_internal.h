/* ocal — declarations shared by the BLAS files (src/blas), never installed. */
#ifndef OCAL_BLAS_INTERNAL_H
#define OCAL_BLAS_INTERNAL_H

#include "internal.h"
#include "ocal.h" /* an area may call any area's public API; the core sees only its own */

/* The GEMM parameters ocal tunes: CLBlast's Xgemm kernel, its XgemmDirect kernel, and the
 * GemmRoutine switch point between them. X(index, CLBlast kernel, name, min, max) */
#define OCAL__GEMM_PARAM_MAP(X)                    \
  X(GEMMK, "Xgemm", "GEMMK", 0, 1)                 \
  X(KREG, "Xgemm", "KREG", 1, 32)                  \
  X(KWG, "Xgemm", "KWG", 1, 128)                   \
  X(KWI, "Xgemm", "KWI", 1, 32)                    \
  X(MDIMA, "Xgemm", "MDIMA", 1, 64)                \
  X(MDIMC, "Xgemm", "MDIMC", 1, 64)                \
  X(MWG, "Xgemm", "MWG", 1, 256)                   \
  X(NDIMB, "Xgemm", "NDIMB", 1, 64)                \
  X(NDIMC, "Xgemm", "NDIMC", 1, 64)                \
  X(NWG, "Xgemm", "NWG", 1, 256)                   \
  X(SA, "Xgemm", "SA", 0, 1)                       \
  X(SB, "Xgemm", "SB", 0, 1)                       \
  X(STRM, "Xgemm", "STRM", 0, 1)                   \
  X(STRN, "Xgemm", "STRN", 0, 1)                   \
  X(VWM, "Xgemm", "VWM", 1, 16)                    \
  X(VWN, "Xgemm", "VWN", 1, 16)                    \
  X(KWID, "XgemmDirect", "KWID", 1, 64)            \
  X(MDIMAD, "XgemmDirect", "MDIMAD", 1, 64)        \
  X(MDIMCD, "XgemmDirect", "MDIMCD", 1, 64)        \
  X(NDIMBD, "XgemmDirect", "NDIMBD", 1, 64)        \
  X(NDIMCD, "XgemmDirect", "NDIMCD", 1, 64)        \
  X(PADA, "XgemmDirect", "PADA", 0, 1)             \
  X(PADB, "XgemmDirect", "PADB", 0, 1)             \
  X(VWMD, "XgemmDirect", "VWMD", 1, 16)            \
  X(VWND, "XgemmDirect", "VWND", 1, 16)            \
  X(WGD, "XgemmDirect", "WGD", 1, 256)             \
  X(MIN_INDIRECT, "GemmRoutine", "XGEMM_MIN_INDIRECT_SIZE", 1, 1 << 20)

enum {
#define OCAL__GEMM_PARAM_ENUM(id, kernel, name, min, max) OCAL__P_##id,
  OCAL__GEMM_PARAM_MAP(OCAL__GEMM_PARAM_ENUM)
#undef OCAL__GEMM_PARAM_ENUM
  OCAL__GEMM_NPARAMS
};
/* The first parameter of each kernel's group and the group's size. */
#define OCAL__XGEMM_FIRST OCAL__P_GEMMK
#define OCAL__XGEMM_COUNT (OCAL__P_KWID - OCAL__P_GEMMK)
#define OCAL__DIRECT_FIRST OCAL__P_KWID
#define OCAL__DIRECT_COUNT (OCAL__P_MIN_INDIRECT - OCAL__P_KWID)

typedef struct ocal__gemm_params {
  long v[OCAL__GEMM_NPARAMS];
} ocal__gemm_params;

typedef struct ocal__gemm_param_def {
  const char *kernel;
  const char *name;
  long min, max;
} ocal__gemm_param_def;
extern const ocal__gemm_param_def ocal__gemm_param_defs[OCAL__GEMM_NPARAMS];

/* Tuned parameters shipped with the library (builtin.c). */
typedef struct ocal__builtin_tuning {
  const char *device;    /* CL_DEVICE_NAME, matched exactly */
  int precision;         /* 32 or 64 */
  const char *params;    /* NAME=VALUE lines, as in a tuning file */
  const char *note;      /* where and how they were measured */
} ocal__builtin_tuning;
extern const ocal__builtin_tuning ocal__builtin_tunings[];
extern const size_t ocal__builtin_tuning_count;

/* Parses NAME=VALUE text; every parameter must be there once and the set must satisfy
 * CLBlast's constraints and the device's limits (device may be NULL to skip those). On
 * failure returns 0 and writes the reason into why. */
int ocal__gemm_params_parse(const char *text, const ocal_device_info *device, int precision,
                            ocal__gemm_params *out, char *why, size_t why_size);
/* Checks constraints and device limits of a full set; 1 when valid. */
int ocal__gemm_params_valid(const ocal__gemm_params *p, const ocal_device_info *device,
                            int precision, char *why, size_t why_size);
/* Writes the set as NAME=VALUE lines. */
void ocal__gemm_params_format(const ocal__gemm_params *p, char *out, size_t size);

/* Applies the stored tuning for (device, dtype) once per process: called by every BLAS
 * entry point before it enqueues work. Never fails the caller: problems become warnings. */
void ocal__blas_prepare(ocal_context ctx, ocal_dtype dtype);

/* The parameter set in effect for (device, dtype), applying the stored tuning first: 1 and
 * *out, or 0 when CLBlast runs on its own defaults (which ocal does not know). */
int ocal__blas_params_in_effect(ocal_context ctx, ocal_dtype dtype, ocal__gemm_params *out);

/* Refuses a GEMM whose CLBlast temporary buffers the device cannot allocate (blas.c): m,
 * n, k of the product as ocal_gemm sees it, batch entries of it. */
ocal_status ocal__gemm_check_temp(ocal_context ctx, ocal_dtype dtype, ocal_transpose ta,
                                  ocal_transpose tb, size_t m, size_t n, size_t k,
                                  ocal_buffer a, ocal_buffer b, ocal_buffer c, size_t batch);

/* The number of slices the rule (rule.c) gives a non-batched m x n x k product (0 = a plain
 * call), after OCAL_GEMM_SPLITK and the automatic rule. */
size_t ocal__gemm_splitk_slices(ocal_context ctx, ocal_dtype dtype, size_t m, size_t n,
                                size_t k);

/* out (cols x rows, contiguous) = the rows x cols matrix a (from its offset), transposed, by
 * ocal's kernel (gemm_own.c; the CLBlast engine pre-transposes A with it). */
ocal_status ocal__gemm_transpose(ocal_context ctx, ocal_dtype dtype, ocal_buffer a,
                                 size_t rows, size_t cols, cl_mem out);

/* CLBlast's scal and axpy (clblast.c, only with CLBlast). */
ocal_status ocal__clblast_scal(ocal_context ctx, ocal_dtype dtype, double alpha, cl_mem mem,
                               size_t offset, size_t n, const char *func);
ocal_status ocal__clblast_axpy(ocal_context ctx, ocal_dtype dtype, double alpha, ocal_buffer x,
                               ocal_buffer y, const char *func);

/* The key and directory of the device's tuning file (malloc'ed; NULL when none). */
char *ocal__blas_tuning_key(ocal_context ctx, int precision);
char *ocal__blas_tuning_dir(ocal_context ctx);
/* Applies a valid full set to the context's device for the process; 1, or 0 and a reason. */
int ocal__blas_apply(ocal_context ctx, int precision, const ocal__gemm_params *p, char *why,
                     size_t why_size);
/* Records the set now in effect (for ocal_blas_get_tuning). */
void ocal__blas_record(ocal_context ctx, int precision, ocal_blas_tuning_source source,
                       const ocal__gemm_params *p, const char *note, double gflops);
/* Checks the context and dtype (f32/f64, fp64) of a tuning call. */
ocal_status ocal__blas_check_tuning_call(ocal_context ctx, ocal_dtype dtype, const char *func);

/* The first ocal_blas_tuning with struct_size ends with gflops. */
#define OCAL__BLAS_TUNING_MIN OCAL__SIZE_THROUGH(ocal_blas_tuning, gflops)

/* Records a failed CLBlast call ("CLBlastSgemm failed with CLBlastTempBufferAllocFailure
 * (-4) on <device>") and returns the ocal status it maps to. */
ocal_status ocal__clblast_fail(ocal_context ctx, int code, const char *call, const char *func);
/* The name of a CLBlast status code ("CLBlastInvalidBufferSize"). */
const char *ocal__clblast_status_name(int code);

/* Every CLBlast call ocal makes goes through OCAL__CLBLAST(call), which evaluates to the
 * call's status. CLBlast 1.5 fills its static parameter database on first use without a lock
 * (Database::Database: `if (database.size() == 0) database = {...}`), so two threads making
 * their first CLBlast calls at once write the same vector (ThreadSanitizer found it with
 * tests/tsan/stress; the heap can be corrupted). Until one call has succeeded, and so has
 * filled it, the calls are made one at a time; after that they run freely. */
void ocal__clblast_begin(void);
int ocal__clblast_end(int status);
#define OCAL__CLBLAST(call) (ocal__clblast_begin(), (CLBlastStatusCode)ocal__clblast_end(call))

#endif /* OCAL_BLAS_INTERNAL_H */
