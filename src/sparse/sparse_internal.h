/* ocal — declarations shared by the sparse area's files (never installed). */
#ifndef OCAL_SPARSE_INTERNAL_H
#define OCAL_SPARSE_INTERNAL_H

#include "internal.h"
#include "ocal.h" /* an area may call any area's public API; the core sees only its own */

#define OCAL__CSR_MAGIC 0x6f637372u /* "ocsr" */

/* The SpMV kernels (cl/sparse_spmv.cl); csr.c picks one per matrix. */
typedef enum ocal__spmv_kind {
  OCAL__SPMV_SCALAR = 0,
  OCAL__SPMV_VECTOR = 1,
  OCAL__SPMV_ADAPTIVE = 2,
  OCAL__SPMV_STREAM = 3,
  OCAL__SPMV_MERGE = 4
} ocal__spmv_kind;

/* The work-group size of the stream kernel, and the default number of entries one of its
 * row blocks stages in local memory (OCAL_SPMV=streamN sets another power of two). */
#define OCAL__SPMV_STREAM_WG 256
#define OCAL__SPMV_STREAM_CAP 1024

/* The merge-path kernel's default items (row ends and entries) per work-item; its work-group
 * is the stream kernel's (OCAL_SPMV=mergeN sets N = 1..32). */
#define OCAL__SPMV_MERGE_IPT 7

/* The work-group size of the vector and long-row kernels. */
#define OCAL__SPMV_WG 128

struct ocal_csr_s {
  uint32_t magic;
  ocal_context ctx;
  ocal_dtype vt, it;
  size_t rows, cols, nnz;
  ocal_buffer rp;  /* rows + 1 row pointers */
  ocal_buffer ci;  /* max(nnz, 1) column indices */
  ocal_buffer v;   /* max(nnz, 1) values */
  ocal__spmv_kind kind;
  unsigned lanes;         /* work-items per row of the vector kernel */
  unsigned wg, swg;       /* work-group sizes of the vector and stream kernels: OCAL__SPMV_WG
                           * and OCAL__SPMV_STREAM_WG, or less where the device allows less */
  ocal_buffer short_rows; /* adaptive: the rows of ordinary length, and the long ones */
  ocal_buffer long_rows;
  size_t n_short, n_long;
  ocal_buffer blocks;     /* stream: each row block's first row and end, in launch order */
  size_t nblocks;
  unsigned cap;           /* stream: the entries a block stages in local memory */
  ocal_buffer tiles;      /* merge: ntiles + 1 first rows of the merge-path tiles */
  ocal_buffer carry;      /* merge: 2 ntiles partial sums of rows cut between tiles */
  size_t ntiles;
  unsigned ipt;           /* merge: path items per work-item */
  int plain_loads;        /* 1 once the stream or merge kernel with PTX cache hints failed to
                           * build on this device: plain loads from then on */
  double mean_len;       /* row-length statistics gathered at creation */
  size_t max_len;
  pthread_mutex_t lock;  /* guards t */
  struct ocal_csr_s *t;  /* the transposed copy, built on the first OCAL_TRANS product */
};

/* What one ocal_lobpcg run spent its host time on: each counter counts device calls of one
 * kind, its _s twin their seconds. For measuring the per-iteration overhead from a test or
 * bench program; not public. */
typedef struct ocal__lobpcg_profile {
  long iterations;
  long gemm, reads, uploads, allocs, applies, reduces, copies;
  double gemm_s, reads_s, uploads_s, allocs_s, applies_s, reduces_s, copies_s;
} ocal__lobpcg_profile;

/* Per-run settings of LOBPCG that tests and benchmarks take, never the public API. */
typedef struct ocal__lobpcg_tuning {
  int gram_kernel;               /* Gram products and small-matrix updates: -1 picks by block
                                    size, 1 the dedicated kernels, 0 ocal_gemm */
  ocal__lobpcg_profile *profile; /* NULL, or counters this run adds to (the caller zeroes) */
} ocal__lobpcg_tuning;

/* ocal_lobpcg with per-run tuning (NULL: the defaults); messages name ocal_lobpcg. */
ocal_status ocal__lobpcg_run(const ocal_operator *a, ocal_buffer x,
                             const ocal_lobpcg_options *options,
                             const ocal__lobpcg_tuning *tuning, double *eigenvalues,
                             double *residual_norms, ocal_lobpcg_result *result);

/* The SpMV kernel for a matrix on a CPU (cpu = 1) or another device, from its mean row
 * length and its number of long rows (csr.c; OCAL_SPMV overrides it). */
ocal__spmv_kind ocal__spmv_rule(int cpu, double mean_len, size_t n_long);

/* Validates a CSR handle; messages name func. */
ocal_status ocal__csr_check(ocal_csr a, const char *func);

/* Creates a matrix from host arrays of the given types (validated here); the common end of
 * every creation. Messages name func. */
ocal_status ocal__csr_create(ocal_context ctx, ocal_dtype vt, ocal_dtype it, size_t rows,
                             size_t cols, const void *rp, const void *ci, const void *v,
                             const char *func, ocal_csr *out);

/* Creates a matrix from COO triplets with 0-based int64 indices and double values (any
 * order, duplicates summed); the indices must be in range. */
ocal_status ocal__csr_from_triplets(ocal_context ctx, ocal_dtype vt, ocal_dtype it, size_t rows,
                                    size_t cols, size_t nnz, const int64_t *ri,
                                    const int64_t *cj, const double *val, const char *func,
                                    ocal_csr *out);

/* A parsed Matrix Market file: 0-based triplets (symmetric files already expanded). */
typedef struct ocal__mtx {
  size_t rows, cols, nnz;
  int64_t *ri, *cj;
  double *val;
} ocal__mtx;

/* Parses a Matrix Market coordinate file held in memory (data need not end in a NUL).
 * On success fills *out (free it with ocal__mtx_free); on failure returns
 * OCAL_INVALID_ARGUMENT (or OCAL_OUT_OF_HOST_MEMORY, OCAL_OVERFLOW) with a message that names
 * func and the line. Touches nothing outside [data, data + len): a fuzzing target can call it
 * on arbitrary bytes. */
ocal_status ocal__mtx_parse(const char *data, size_t len, ocal__mtx *out, const char *func);
void ocal__mtx_free(ocal__mtx *m);

/* Runs Y = alpha op(A) X + beta Y for a block of k columns (k = 1 takes the SpMV kernels).
 * Arguments are checked by the caller. */
ocal_status ocal__spmm_run(ocal_csr a, ocal_transpose trans, double alpha, ocal_buffer x,
                           double beta, ocal_buffer y, size_t k, const char *func);

/* The transposed copy of a, built on first use. */
ocal_status ocal__csr_transposed(ocal_csr a, const char *func, ocal_csr *t);

/* Y = alpha op(A) X + beta Y with the arguments checked as ocal_spmm checks them; messages
 * name func (the public call that runs the product). */
ocal_status ocal__spmm_checked(ocal_transpose trans, double alpha, ocal_csr a, ocal_buffer x,
                               double beta, ocal_buffer y, const char *func);

/* Checks an operator's fields (apply set, n > 0, a float type, a live matrix behind a CSR
 * operator); `role` names it ("A"). */
ocal_status ocal__check_operator(const ocal_operator *a, const char *role, const char *func);

/* y = op x for a solver: a CSR operator's product runs with its messages naming func (the
 * solver), a callback is called as it is. */
ocal_status ocal__operator_apply(const ocal_operator *op, ocal_buffer x, ocal_buffer y,
                                 const char *func);

/* Build options "-DT=... -DIDX=..." (and the fp64 switch) for a matrix's types. */
void ocal__csr_options(ocal_dtype vt, ocal_dtype it, const char *extra, char *out, size_t size);

#endif /* OCAL_SPARSE_INTERNAL_H */
