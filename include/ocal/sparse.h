/** \file
 * ocal — sparse matrices on the device: CSR matrices, sparse products, linear operators,
 * conjugate gradients and LOBPCG eigenpairs.
 *
 * A CSR matrix (ocal_csr) holds rows + 1 row pointers, nnz column indices and nnz values in
 * device memory. Values are OCAL_F32 or OCAL_F64 (the latter needs a context with fp64),
 * indices OCAL_I32 or OCAL_I64. Every creation validates the structure (row pointers start
 * at 0, never decrease and end at nnz; column indices lie in [0, cols)) and names the first
 * bad row or entry in the error message. Column indices within a row need not be sorted.
 * The handle owns its device memory; ocal_csr_release frees it. A CSR matrix keeps a
 * reference to its context (release the matrix before the context, as for buffers).
 *
 * Products (ocal_spmv, ocal_spmm) enqueue work on the context's queue and return without
 * waiting, like every ocal operation. The product with the transpose (OCAL_TRANS) runs on a
 * transposed copy that is built on the first such call and cached in the handle (nnz more
 * indices and values of device memory): no atomics, so every result is deterministic.
 *
 * Solvers take a linear operator (ocal_operator): a callback that applies a square matrix to
 * a block of vectors. ocal_operator_from_csr makes one from a CSR matrix; a stencil or a
 * distributed matrix can be given as a callback without building a CSR matrix. */
#ifndef OCAL_SPARSE_H
#define OCAL_SPARSE_H

#include <stddef.h>
#include <stdint.h>

#include "ocal/blas.h"
#include "ocal/buffer.h"
#include "ocal/context.h"
#include "ocal/export.h"
#include "ocal/status.h"
#include "ocal/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Opaque handle to a CSR matrix on the device. Freed by ocal_csr_release. */
typedef struct ocal_csr_s *ocal_csr;

/** Creates a CSR matrix from host arrays (copied; the caller keeps them).
 * \param ctx the context.
 * \param value_type OCAL_F32 or OCAL_F64: the type of \p values and of the matrix.
 * \param index_type OCAL_I32 or OCAL_I64: the type of \p row_ptr and \p col_idx.
 * \param rows number of rows (>= 1).
 * \param cols number of columns (>= 1).
 * \param row_ptr rows + 1 row pointers.
 * \param col_idx row_ptr[rows] column indices (may be NULL when that is 0).
 * \param values row_ptr[rows] values (may be NULL when that is 0).
 * \param out receives the matrix; NULL on failure.
 * \returns OCAL_OK; OCAL_INVALID_ARGUMENT for a bad structure (the message names the first
 *          bad row or entry); OCAL_UNSUPPORTED for other types or f64 without fp64;
 *          OCAL_OVERFLOW when nnz does not fit the index type; OCAL_OUT_OF_DEVICE_MEMORY
 *          when the matrix's arrays do not fit the device (or its largest buffer). */
OCAL_API ocal_status ocal_csr_from_host(ocal_context ctx, ocal_dtype value_type,
                                        ocal_dtype index_type, size_t rows, size_t cols,
                                        const void *row_ptr, const void *col_idx,
                                        const void *values, ocal_csr *out);

/** Creates a CSR matrix from COO triplets (row[i], col[i], values[i]) in any order;
 * entries with the same row and column are summed (in double precision). The arrays are
 * read, not kept.
 * \param ctx the context.
 * \param value_type OCAL_F32 or OCAL_F64: the type of \p values.
 * \param index_type OCAL_I32 or OCAL_I64: the type of \p row_idx and \p col_idx, and of
 *        the matrix's indices.
 * \param rows number of rows (>= 1).
 * \param cols number of columns (>= 1).
 * \param nnz number of triplets (0 is allowed: an all-zero matrix).
 * \param row_idx nnz row indices (may be NULL when nnz is 0).
 * \param col_idx nnz column indices (may be NULL when nnz is 0).
 * \param values nnz values (may be NULL when nnz is 0).
 * \param out receives the matrix.
 * \returns OCAL_OK; OCAL_INVALID_ARGUMENT naming the first entry out of range;
 *          OCAL_OUT_OF_HOST_MEMORY when the host arrays of the conversion do not fit (the
 *          message says whether the rows + 1 row pointers or the nnz entries failed: a
 *          row count of 2^40 needs 8 TiB of row pointers whatever nnz is), or
 *          OCAL_OUT_OF_DEVICE_MEMORY where the device's checks come first (the same row
 *          count against a device whose largest buffer is smaller); as ocal_csr_from_host
 *          otherwise. */
OCAL_API ocal_status ocal_csr_from_coo(ocal_context ctx, ocal_dtype value_type,
                                       ocal_dtype index_type, size_t rows, size_t cols,
                                       size_t nnz, const void *row_idx, const void *col_idx,
                                       const void *values, ocal_csr *out);

/** Creates a CSR matrix from device buffers: \p row_ptr (rows + 1 indices), \p col_idx and
 * \p values (nnz each). Their contents are read back to validate the structure and gather
 * the row-length statistics, then copied: the buffers stay the caller's.
 * \param row_ptr rows + 1 row pointers, OCAL_I32 or OCAL_I64.
 * \param col_idx nnz column indices, of row_ptr's type.
 * \param values nnz values, OCAL_F32 or OCAL_F64.
 * \param cols number of columns (>= 1); rows is row_ptr's element count minus one.
 * \param out receives the matrix.
 * \returns as ocal_csr_from_host; OCAL_TYPE_MISMATCH when col_idx's type is not row_ptr's,
 *          OCAL_SHAPE_MISMATCH when col_idx and values do not hold nnz elements. */
OCAL_API ocal_status ocal_csr_from_buffers(ocal_buffer row_ptr, ocal_buffer col_idx,
                                           ocal_buffer values, size_t cols, ocal_csr *out);

/** Reads a Matrix Market file (the `coordinate` format SuiteSparse ships: `real`, `integer`
 * or `pattern` values, `general` or `symmetric`; symmetric files are expanded to both
 * triangles, pattern entries are 1). Duplicate entries are summed. Lines (comments
 * included) may hold at most 1023 characters besides the line end; a longer line is refused
 * with OCAL_INVALID_ARGUMENT, the message naming the line and the limit.
 * \param ctx the context.
 * \param path the file.
 * \param value_type OCAL_F32 or OCAL_F64 for the matrix.
 * \param index_type OCAL_I32 or OCAL_I64 for the matrix.
 * \param out receives the matrix.
 * \returns OCAL_OK; OCAL_IO_ERROR when the file cannot be read; OCAL_INVALID_ARGUMENT for a
 *          malformed file (the message names the line and what is wrong), a format ocal
 *          does not read (array, complex, hermitian, skew-symmetric), or, for OCAL_F32, a
 *          finite value that f32 cannot hold (it would become an infinity; the message names
 *          the entry: read such a file as OCAL_F64). */
OCAL_API ocal_status ocal_csr_read_mtx(ocal_context ctx, const char *path, ocal_dtype value_type,
                                       ocal_dtype index_type, ocal_csr *out);

/** Releases a CSR matrix and its device memory (after the commands queued on it have
 * finished).
 * \param a the matrix, or NULL (nothing happens).
 * \returns OCAL_OK; OCAL_INVALID_HANDLE for a handle that is not a live matrix. */
OCAL_API ocal_status ocal_csr_release(ocal_csr a);

/** Facts of a CSR matrix. Each takes a valid matrix and non-NULL out pointers.
 * \param a the matrix.
 * \param rows receives the number of rows.
 * \param cols receives the number of columns.
 * \returns OCAL_OK; OCAL_INVALID_HANDLE or OCAL_INVALID_ARGUMENT. */
OCAL_API ocal_status ocal_csr_get_shape(ocal_csr a, size_t *rows, size_t *cols);
/** \param a the matrix. \param nnz receives the number of stored entries.
 * \returns OCAL_OK; OCAL_INVALID_HANDLE or OCAL_INVALID_ARGUMENT. */
OCAL_API ocal_status ocal_csr_get_nnz(ocal_csr a, size_t *nnz);
/** \param a the matrix. \param value_type receives the value type (may be NULL).
 * \param index_type receives the index type (may be NULL).
 * \returns OCAL_OK; OCAL_INVALID_HANDLE. */
OCAL_API ocal_status ocal_csr_get_dtypes(ocal_csr a, ocal_dtype *value_type, ocal_dtype *index_type);
/** \param a the matrix. \param ctx receives its context (not a new reference).
 * \returns OCAL_OK; OCAL_INVALID_HANDLE or OCAL_INVALID_ARGUMENT. */
OCAL_API ocal_status ocal_csr_get_context(ocal_csr a, ocal_context *ctx);

/** Names the SpMV kernel chosen for the matrix at its creation, one of five:
 * "scalar" (one work-item per row), "vector" (a slice of 2 to 64 work-items per row),
 * "adaptive" (vector slices for ordinary rows, a whole work-group for each long row: one
 * longer than 1024 entries and 16 times the mean) or "stream" (a work-group stages a block
 * of consecutive rows' entries in local memory and sums each row from there) or "merge"
 * (merge-path: each work-group takes an equal share of rows and entries together, long rows
 * cut between groups and their partial sums added in a fixed order).
 * The rule, from the row-length statistics: on a CPU device always "scalar"; elsewhere
 * "scalar" when no row is long and the mean row length is at most 8, else "stream" when the
 * mean is at most 32, else "adaptive" when some rows are long, else "vector" ("merge" only
 * through OCAL_SPMV).
 * The setting OCAL_SPMV (read when the context is created, applied to each matrix created
 * in it) overrides the rule: auto (the rule), scalar, vector, vectorN (N work-items per row,
 * N = 2..64, a power of two), adaptive, stream or streamN (blocks of up to N entries,
 * N = 256..4096, a power of two), merge or mergeN (N = 1..32 rows and entries per
 * work-item). vectorN, streamN and mergeN name the kernel "vector", "stream" and "merge":
 * N is a parameter, not another kernel. docs/sparse.md has the figures behind the rule.
 * \param a the matrix.
 * \param name receives a static string.
 * \returns OCAL_OK; OCAL_INVALID_HANDLE or OCAL_INVALID_ARGUMENT. */
OCAL_API ocal_status ocal_csr_get_spmv_kernel(ocal_csr a, const char **name);

/** Writes the diagonal of a square matrix (the sum of the stored diagonal entries of each
 * row; 0 where there is none) into \p out, a buffer of rows elements of the value type.
 * \param a the matrix.
 * \param out the diagonal.
 * \returns OCAL_OK; OCAL_SHAPE_MISMATCH (a matrix that is not square, or out of another
 *          element count); OCAL_TYPE_MISMATCH; OCAL_INVALID_HANDLE (a matrix or out that is
 *          NULL or released); OCAL_INVALID_ARGUMENT (out of another context). */
OCAL_API ocal_status ocal_csr_diagonal(ocal_csr a, ocal_buffer out);

/** Sparse matrix-vector product: y = alpha * op(A) * x + beta * y.
 * \param trans OCAL_NO_TRANS or OCAL_TRANS (A^T, through the cached transposed copy).
 * \param alpha scale of the product.
 * \param a the matrix.
 * \param x a buffer of op(A)'s column count of elements (any shape), A's value type.
 * \param beta scale of y's old contents (with beta = 0 they are not read: NaNs vanish).
 * \param y a buffer of op(A)'s row count of elements, A's value type; must not overlap x.
 * \returns OCAL_OK; OCAL_SHAPE_MISMATCH; OCAL_TYPE_MISMATCH; OCAL_INVALID_ARGUMENT;
 *          OCAL_UNSUPPORTED when OCAL_SPMV_LOADS names a PTX cache hint (cs, nc, cg, cs-nc,
 *          cs-cg) for the stream or merge kernel on a device whose driver reports no PTX
 *          (refused before any build; the message names the setting). */
OCAL_API ocal_status ocal_spmv(ocal_transpose trans, double alpha, ocal_csr a, ocal_buffer x,
                               double beta, ocal_buffer y);

/** Sparse matrix times dense block: Y = alpha * op(A) * X + beta * Y, with X a row-major
 * block of k columns: shape {op(A) cols, k} and Y {op(A) rows, k} (a 1-D X and Y count as
 * k = 1). Every k >= 1 works; the kernel is made for the narrow blocks of block solvers
 * (LOBPCG: k up to 64).
 * \param trans OCAL_NO_TRANS or OCAL_TRANS.
 * \param alpha scale of the product.
 * \param a the matrix.
 * \param x the dense block.
 * \param beta scale of Y's old contents.
 * \param y the result, which must not overlap X.
 * \returns OCAL_OK; OCAL_SHAPE_MISMATCH; OCAL_TYPE_MISMATCH; OCAL_INVALID_ARGUMENT;
 *          OCAL_UNSUPPORTED as for ocal_spmv (k = 1 takes the SpMV kernels). */
OCAL_API ocal_status ocal_spmm(ocal_transpose trans, double alpha, ocal_csr a, ocal_buffer x,
                               double beta, ocal_buffer y);

/* ---- linear operators ----------------------------------------------------------------- */

/** Applies an n x n operator to a block: y = A x, with x and y buffers of shape {n, k}
 * (row-major, k >= 1; the solvers pass 2-D buffers) of the operator's value type. Returns
 * OCAL_OK, or a failure status that the solver returns as is (set the error message with
 * any failing ocal call, or leave the one that call set). */
typedef ocal_status (*ocal_operator_fn)(void *user, ocal_buffer x, ocal_buffer y);

/** A square linear operator. Fill it by hand for a callback, or with
 * ocal_operator_from_csr. Plain data: nothing to release (the CSR matrix stays yours). */
typedef struct ocal_operator {
  size_t n;            /**< the operator is n x n */
  ocal_dtype dtype;    /**< OCAL_F32 or OCAL_F64: the type of the vectors it takes */
  ocal_operator_fn apply; /**< y = A x */
  void *user;          /**< passed to apply */
  ocal_csr csr;        /**< the CSR matrix behind it (ocal_operator_from_csr), else NULL:
                            ocal_cg's Jacobi preconditioner takes the diagonal from it */
} ocal_operator;

/** Makes an operator that applies \p a with ocal_spmm (the matrix must be square).
 * \param a the matrix; it must outlive the operator.
 * \param op receives the operator.
 * \returns OCAL_OK; OCAL_SHAPE_MISMATCH for a non-square matrix; OCAL_INVALID_HANDLE;
 *          OCAL_INVALID_ARGUMENT when op is NULL. */
OCAL_API ocal_status ocal_operator_from_csr(ocal_csr a, ocal_operator *op);

/* ---- conjugate gradients -------------------------------------------------------------- */

/** Preconditioners of ocal_cg. */
typedef enum ocal_cg_precond {
  OCAL_PRECOND_NONE = 0,  /**< plain CG */
  OCAL_PRECOND_JACOBI = 1 /**< z = r / diag(A): the diagonal comes from options.diagonal,
                               else from the CSR matrix behind the operator */
} ocal_cg_precond;

/** Short name of a preconditioner ("none", "jacobi").
 * \param precond any value.
 * \returns a static string; "invalid" for a value that is not an ocal_cg_precond. */
OCAL_API const char *ocal_cg_precond_name(ocal_cg_precond precond);

/** Options of ocal_cg. Start from ocal_cg_options_init(), which sets struct_size; a caller
 * compiled against an older, shorter struct keeps working (fields it lacks take defaults). */
typedef struct ocal_cg_options {
  size_t struct_size;      /**< sizeof(ocal_cg_options), set by ocal_cg_options_init */
  double rtol;             /**< relative tolerance on ||b - A x||, default 1e-5 (SciPy's) */
  double atol;             /**< absolute tolerance, default 0; stop when
                                ||r|| <= max(rtol * ||b||, atol) */
  size_t max_iter;         /**< iteration limit; 0 (default) means 10 * n, as SciPy */
  ocal_cg_precond precond; /**< default OCAL_PRECOND_NONE */
  ocal_buffer diagonal;    /**< Jacobi: the diagonal of A (n elements), or NULL */
  int use_x0;              /**< 1: x holds the initial guess; 0 (default): start from 0;
                                other values are refused */
} ocal_cg_options;

/** What ocal_cg did. The library fills it; set struct_size = sizeof(ocal_cg_result) before
 * the call (`ocal_cg_result res = {.struct_size = sizeof res};`), so that later fields
 * can be added without breaking a program compiled against this struct. */
typedef struct ocal_cg_result {
  size_t struct_size;        /**< sizeof(ocal_cg_result), set by the caller */
  size_t iterations;         /**< iterations run (restarts included) */
  double residual_norm;      /**< ||r|| as the recurrence computes it, at the last iteration */
  double true_residual_norm; /**< ||b - A x|| of the returned x, computed afresh with one
                                  product with A; NaN when the solve stopped on a breakdown
                                  (A or the preconditioner not positive definite) */
  double b_norm;             /**< ||b|| */
  size_t restarts;           /**< times the recurrence met the tolerance while the true
                                  residual did not, and restarted from the true residual */
  int converged;             /**< 1 when the true residual met the tolerance */
} ocal_cg_result;

/** Fills \p options with the defaults. \param options the struct.
 * \returns OCAL_OK, or OCAL_INVALID_ARGUMENT for NULL. */
OCAL_API ocal_status ocal_cg_options_init(ocal_cg_options *options);

/** Solves A x = b for symmetric positive definite A with (preconditioned) conjugate
 * gradients, on the device. Each iteration applies A once, runs three fused vector updates
 * and ocal's dot products, and reads one residual norm back to the host (the stopping test).
 * Convergence is never taken from the recurrence alone: when the recurrence residual meets
 * the tolerance, the true residual b - A x is computed afresh (one product with A). If it
 * meets the tolerance too, the solve has converged; if not (rounding on a badly scaled
 * system), CG restarts from the true residual, and when a restart no longer halves the true
 * residual it stops with OCAL_NOT_CONVERGED.
 * \param a the operator.
 * \param b the right-hand side, n elements of the operator's type.
 * \param x receives the solution (n elements; its input is the initial guess with use_x0).
 *        When the method does not converge, x holds the last iterate. It must not overlap
 *        b (the same buffer, or views of one buffer that share elements): x is written while
 *        b is still read, so such a call is refused with OCAL_INVALID_ARGUMENT and b is left
 *        as it was; pass x in a buffer of its own.
 * \param options NULL for the defaults.
 * \param result receives the iteration count and both residual norms; may be NULL. Its
 *        struct_size must be sizeof(ocal_cg_result).
 * \returns OCAL_OK when ||b - A x|| <= max(rtol ||b||, atol); OCAL_NOT_CONVERGED when the
 *          iteration limit was reached first, when the true residual stagnates above the
 *          tolerance, or when A or the preconditioner turned out not to be positive definite
 *          (the message says which, with both residuals); OCAL_INVALID_ARGUMENT for a bad
 *          result->struct_size or b and x that overlap; OCAL_UNSUPPORTED for an operator
 *          whose dtype is not OCAL_F32 or OCAL_F64; argument errors as for ocal_spmv. */
OCAL_API ocal_status ocal_cg(const ocal_operator *a, ocal_buffer b, ocal_buffer x,
                             const ocal_cg_options *options, ocal_cg_result *result);

/* ---- LOBPCG ---------------------------------------------------------------------------- */

/** Options of ocal_lobpcg. Start from ocal_lobpcg_options_init(). */
typedef struct ocal_lobpcg_options {
  size_t struct_size;     /**< sizeof(ocal_lobpcg_options), set by ocal_lobpcg_options_init */
  int largest;            /**< 0 (default): the k smallest eigenvalues; 1: the k largest;
                               other values are refused */
  double tol;             /**< residual tolerance; <= 0 (default): sqrt(eps) * n, as SciPy,
                               with eps the machine epsilon of the operator's value type
                               (FLT_EPSILON, 1.2e-7, for OCAL_F32; DBL_EPSILON, 2.2e-16,
                               for OCAL_F64); NaN and infinities are refused */
  size_t max_iter;        /**< iteration limit: at most this many block updates; default
                               20 (SciPy's number), and 0 means the default; a negative
                               count converted to size_t (above SIZE_MAX / 2) is refused.
                               SciPy's maxiter = m makes up to m + 1 updates (its loop
                               counter runs from 0 to m): pass m + 1 for SciPy's limit, as
                               the Python package's lobpcg does */
  const ocal_operator *b; /**< NULL, or B of the generalised problem A x = lambda B x
                               (symmetric positive definite) */
  const ocal_operator *m; /**< NULL, or a preconditioner (approximating A^-1) */
  ocal_buffer y;          /**< NULL, or constraints {n, j}: eigenvectors are sought
                               B-orthogonal to Y's columns */
  int use_x0;             /**< 1: x holds the initial block; 0 (default): a random one;
                               other values are refused */
  uint64_t seed;          /**< seed of the random initial block (default 0) */
  int restart_control;    /**< restart when the residual grows 2^restart_control times
                               over the best (default 20, SciPy's; 0 to 1000) */
} ocal_lobpcg_options;

/** Why ocal_lobpcg's iterations stopped (SciPy says the same in its warnings). Restarts
 * without the previous directions (when they cannot be B-orthonormalised, or when the mean
 * residual grows 2^restart_control-fold over the best) never end a run: there is no limit
 * on them, in SciPy either, so "restarts exhausted" is not a reason. */
typedef enum ocal_lobpcg_stop {
  OCAL_LOBPCG_CONVERGED = 0,            /**< every pair met the tolerance and was locked, and
                                             every pair returned meets it: ocal_lobpcg
                                             returns OCAL_OK */
  OCAL_LOBPCG_MAX_ITER = 1,             /**< options.max_iter iterations (block updates)
                                             ran */
  OCAL_LOBPCG_BASIS_RANK_LOST = 2,      /**< the block of (preconditioned) residuals could no
                                             longer be B-orthonormalised: Cholesky of its Gram
                                             matrix failed, the search space lost its rank
                                             (SciPy: "Failed at iteration") */
  OCAL_LOBPCG_RAYLEIGH_RITZ_FAILED = 3, /**< the Rayleigh-Ritz eigenproblem failed in LAPACK
                                            even without the previous directions (SciPy:
                                            "eigh failed at iteration") */
  OCAL_LOBPCG_LOCKED_NOT_CONVERGED = 4  /**< every pair met the tolerance at some iteration
                                             and was locked there (soft locking, as SciPy: a
                                             locked pair is no longer refined), which ended
                                             the iterations; but the block returned (the best,
                                             after a final Rayleigh-Ritz step) does not meet it
                                             for every pair, as when a later step moved a
                                             locked pair: ocal_lobpcg returns
                                             OCAL_NOT_CONVERGED (SciPy only warns). Running
                                             again from the returned block (use_x0) unlocks
                                             every pair */
} ocal_lobpcg_stop;

/** Names a stop reason ("converged", "max_iter", "basis_rank_lost",
 * "rayleigh_ritz_failed", "locked_not_converged"); "invalid" for a value out of range.
 * \param stop the reason.
 * \returns a static string. */
OCAL_API const char *ocal_lobpcg_stop_name(ocal_lobpcg_stop stop);

/** What ocal_lobpcg did. The library fills it; set struct_size = sizeof(ocal_lobpcg_result)
 * before the call (`ocal_lobpcg_result res = {.struct_size = sizeof res};`), so that later
 * fields can be added without breaking a program compiled against this one. */
typedef struct ocal_lobpcg_result {
  size_t struct_size;     /**< sizeof(ocal_lobpcg_result), set by the caller */
  size_t iterations;      /**< block updates made (Rayleigh-Ritz steps on [X, R, P]); at
                               most options.max_iter; SciPy's count where the iterations end
                               before the limit */
  size_t best_iteration;  /**< the iteration whose block was returned, counted as
                               iterations counts: 0 the initial block (after its own
                               Rayleigh-Ritz step), i the block after i updates; at most
                               iterations */
  size_t converged;       /**< eigenpairs whose residual norm is within the tolerance */
  double tolerance;       /**< the residual tolerance used */
  double max_residual;    /**< the largest residual norm of the returned pairs */
  ocal_lobpcg_stop stop;  /**< why the iterations stopped (the error message says it too);
                               OCAL_LOBPCG_CONVERGED only with OCAL_OK */
} ocal_lobpcg_result;

/** Fills \p options with the defaults. \param options the struct.
 * \returns OCAL_OK, or OCAL_INVALID_ARGUMENT for NULL. */
OCAL_API ocal_status ocal_lobpcg_options_init(ocal_lobpcg_options *options);

/** The k smallest (or largest) eigenpairs of a symmetric operator A, optionally of the
 * generalised problem A x = lambda B x, by the locally optimal block preconditioned
 * conjugate gradient method, following SciPy's lobpcg step by step: Cholesky
 * B-orthonormalisation, soft locking of converged vectors, implicit Gram matrices early and
 * explicit symmetrised ones near convergence, a restart without P when orthonormalisation
 * fails, the best iterate returned after a final Rayleigh-Ritz step. The block products run
 * on the device through ocal_gemm; the small dense eigenproblems (at most 3k x 3k) run on the
 * host through LAPACK. Needs n - j >= 5 k (j constraints), as SciPy's iterations do.
 * \param a the operator A.
 * \param x the block {n, k} (1 <= k): with use_x0 its contents are the initial vectors; on
 *        return, the eigenvectors (B-orthonormal columns), in the order of \p eigenvalues.
 * \param options NULL for the defaults.
 * \param eigenvalues receives k eigenvalues (host memory), ascending for the smallest,
 *        descending for the largest.
 * \param residual_norms receives the k residual norms ||A x - lambda B x|| (host memory), or
 *        NULL.
 * \param result receives the facts of the run, why the iterations stopped included, or
 *        NULL. Its struct_size must be sizeof(ocal_lobpcg_result).
 * \returns OCAL_OK when every pair returned meets the tolerance (result->stop is
 *          OCAL_LOBPCG_CONVERGED, or the reason a run stopped for when its best block met
 *          the tolerance only after the final Rayleigh-Ritz step); OCAL_NOT_CONVERGED when
 *          some pair does not (the best block found is still returned, and the message and
 *          result->stop say why the iterations stopped: the limit, a basis that lost its
 *          rank, a Rayleigh-Ritz eigenproblem LAPACK could not solve, or every pair locked
 *          while the block returned no longer meets the tolerance); OCAL_UNSUPPORTED when
 *          ocal was built without LAPACKE, or for an A whose dtype is not OCAL_F32 or
 *          OCAL_F64; OCAL_INVALID_ARGUMENT for k too large for n, linearly dependent initial
 *          vectors or constraints (Y^T B Y singular in the operator's precision), a B found
 *          not positive definite while the initial block is B-orthonormalised, options
 *          outside their ranges, or a bad result->struct_size; OCAL_SHAPE_MISMATCH for a B
 *          or M of another size than A, OCAL_TYPE_MISMATCH for an x, B or M of another type
 *          than A's; argument errors as for ocal_spmm. */
OCAL_API ocal_status ocal_lobpcg(const ocal_operator *a, ocal_buffer x,
                                 const ocal_lobpcg_options *options, double *eigenvalues,
                                 double *residual_norms, ocal_lobpcg_result *result);

#ifdef __cplusplus
}
#endif

#endif /* OCAL_SPARSE_H */
