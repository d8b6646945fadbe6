/* ocal — LOBPCG: the k smallest or largest eigenpairs of a symmetric operator, following
 * SciPy's scipy/sparse/linalg/_eigen/lobpcg/lobpcg.py (1.10) step for step, so that its
 * behaviour (soft locking, restarts, the implicit/explicit Gram switch, the best iterate)
 * and its iteration counts carry over. The tall blocks {n, m} live on the device: their
 * products with small matrices and their Gram matrices X^T Y run through ocal_gemm; the
 * small dense problems (Cholesky, triangular inverse, the generalised symmetric
 * eigenproblem of at most 3k x 3k) run on the host through LAPACKE.
 *
 * The first half holds the block operations (Gram matrices, products with small matrices,
 * B-orthonormalisation, residuals); the second reads as SciPy's loop: initial_block, then
 * each iteration residual_step, search_directions, rayleigh_ritz and update_block, and at
 * the end rayleigh_ritz_x on the best block. */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "sparse_internal.h"

#ifdef OCAL_HAVE_LAPACKE
#include <lapacke.h>
#endif

ocal_status ocal_lobpcg_options_init(ocal_lobpcg_options *options) {
  if (options == NULL) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "options is NULL");
  memset(options, 0, sizeof *options);
  options->struct_size = sizeof *options;
  options->max_iter = 20;
  options->restart_control = 20;
  return OCAL_OK;
}

const char *ocal_lobpcg_stop_name(ocal_lobpcg_stop stop) {
  switch (stop) {
    case OCAL_LOBPCG_CONVERGED: return "converged";
    case OCAL_LOBPCG_MAX_ITER: return "max_iter";
    case OCAL_LOBPCG_BASIS_RANK_LOST: return "basis_rank_lost";
    case OCAL_LOBPCG_RAYLEIGH_RITZ_FAILED: return "rayleigh_ritz_failed";
    case OCAL_LOBPCG_LOCKED_NOT_CONVERGED: return "locked_not_converged";
  }
  return "invalid";
}

ocal_status ocal_lobpcg(const ocal_operator *a, ocal_buffer x, const ocal_lobpcg_options *options,
                        double *eigenvalues, double *residual_norms, ocal_lobpcg_result *result) {
  return ocal__lobpcg_run(a, x, options, NULL, eigenvalues, residual_norms, result);
}

#ifndef OCAL_HAVE_LAPACKE

ocal_status ocal__lobpcg_run(const ocal_operator *a, ocal_buffer x,
                             const ocal_lobpcg_options *options,
                             const ocal__lobpcg_tuning *tuning, double *eigenvalues,
                             double *residual_norms, ocal_lobpcg_result *result) {
  (void)a, (void)x, (void)options, (void)tuning, (void)eigenvalues, (void)residual_norms;
  (void)result;
  return ocal__fail(OCAL_UNSUPPORTED, "ocal_lobpcg",
                    "ocal was built without LAPACKE, which LOBPCG needs for its small dense "
                    "eigenproblems: install liblapacke-dev (scripts/install-deps.sh does) and "
                    "run configure again");
}

#else

/* The state of one run: the context, the type, and the operators. */
typedef struct lob {
  ocal_context ctx;
  ocal_dtype vt;
  size_t n;
  const ocal_operator *a, *b, *m;
  const char *func;
  /* The small matrices of a step (coefficients, selections, T factors) go up without
   * blocking: each is converted into the host arena wsh and written to the same offset of
   * the device workspace ws, and the step's GEMMs read it through a view. The queue is in
   * order, so after any blocking read every earlier write is done and both can be reused
   * from the start (ws_used = 0). */
  ocal_buffer ws;
  unsigned char *wsh;
  size_t ws_cap, ws_used;
  /* The Gram products and the small-matrix updates through the kernels of
   * cl/sparse_solve.cl (1) or ocal_gemm (0): the kernels for blocks of at most OWN_MAX_K
   * columns, where every product is a few thousand flops per row and launch and tiling
   * overhead, not arithmetic, sets the time (PoCL 40 x 40, k = 8: 2.3 ms per iteration
   * against 4.5 through ocal_gemm; docs/sparse.md). */
  int own;
  int gram_kernel;            /* the run's tuning: -1 (L->own decides), 0 or 1 */
  ocal__lobpcg_profile *prof; /* the run's counters: the caller's, or the run's own */
} lob;
#define OWN_MAX_K 16
/* lobpcg_gram's work-group (GRAM_WG in cl/sparse_solve.cl): a device that allows fewer items
 * (OCAL_LIMITS=max_work_group=64, say) takes ocal_gemm for the Gram blocks instead. */
#define GRAM_WG 128

#define CK(expr)                          \
  do {                                    \
    if ((s = (expr)) != OCAL_OK) goto done; \
  } while (0)

/* Every device call of this file goes through this macro, which counts it and its host time
 * in the run's profile (L->prof), so that the per-iteration overhead can be read off a run:
 * `cnt` names a counter of ocal__lobpcg_profile, `cnt##_s` its seconds. */
#define PROF(L, cnt, expr)                           \
  ({                                                 \
    double t0_ = ocal__seconds_now();                \
    ocal_status s_ = (expr);                         \
    (L)->prof->cnt++;                                \
    (L)->prof->cnt##_s += ocal__seconds_now() - t0_; \
    s_;                                              \
  })
/* A blocking read of lob L: afterwards the upload workspace is free again. */
#define read_sync(L, ...) (((L)->ws_used = 0), PROF(L, reads, ocal_buffer_read(__VA_ARGS__)))

/* Whether the LOBPCG kernels run (L->own, unless the run's tuning names a choice). */
static int own_kernels(const lob *L) { return L->gram_kernel >= 0 ? L->gram_kernel : L->own; }

/* G = X^T Y into the {a, b} buffer gb: the dedicated kernel of cl/sparse_solve.cl for
 * small blocks (L->own), else ocal_gemm; the run's tuning (gram_kernel 0 or 1) overrides that
 * for tests. */
static ocal_status gram_into(lob *L, ocal_buffer xb, size_t a, ocal_buffer yb, size_t b,
                             ocal_buffer gb) {
  int own = own_kernels(L);
  if (!own) return PROF(L, gemm, ocal_gemm(OCAL_TRANS, OCAL_NO_TRANS, 1.0, xb, yb, 0.0, gb));
  char opt[96];
  ocal__dtype_options(L->vt, opt, sizeof opt);
  ocal__kernel *k;
  ocal_status s = ocal__library_kernel_from(L->ctx, "sparse_solve", opt, "lobpcg_gram", &k, NULL,
                                            "ocal_lobpcg");
  if (s != OCAL_OK) return s;
  cl_ulong nn = L->n, xo = xb->offset, yo = yb->offset, go = gb->offset;
  cl_uint aa = (cl_uint)a, bb = (cl_uint)b;
  ocal__arg args[] = {OCAL__ARG(nn), OCAL__ARG(aa), OCAL__ARG(bb), OCAL__ARG(xb->mem),
                      OCAL__ARG(xo), OCAL__ARG(yb->mem), OCAL__ARG(yo), OCAL__ARG(gb->mem),
                      OCAL__ARG(go)};
  size_t local = GRAM_WG, global = a * b * local;
  if (global == 0) return OCAL_OK;
  return PROF(L, gemm, ocal__kernel_run_nd(L->ctx, k, 1, &global, &local, 9, args, L->func));
}

/* Y = alpha X C + beta Y for a small C {a, b}: the dedicated kernel (lobpcg_times) where
 * gram_into uses its own, else ocal_gemm. */
static ocal_status small_gemm(lob *L, double alpha, ocal_buffer xb, ocal_buffer cb, double beta,
                              ocal_buffer yb) {
  int own = own_kernels(L);
  if (!own) return PROF(L, gemm, ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, alpha, xb, cb, beta, yb));
  char opt[96];
  ocal__dtype_options(L->vt, opt, sizeof opt);
  ocal__kernel *k;
  ocal_status s = ocal__library_kernel_from(L->ctx, "sparse_solve", opt, "lobpcg_times", &k, NULL,
                                            "ocal_lobpcg");
  if (s != OCAL_OK) return s;
  cl_ulong nn = L->n, xo = xb->offset, co = cb->offset, yo = yb->offset;
  cl_uint aa = (cl_uint)cb->shape[0], bb = (cl_uint)cb->shape[1];
  float af = (float)alpha, bf = (float)beta;
  ocal__arg aarg = L->vt == OCAL_F64 ? OCAL__ARG(alpha) : OCAL__ARG(af);
  ocal__arg barg = L->vt == OCAL_F64 ? OCAL__ARG(beta) : OCAL__ARG(bf);
  ocal__arg args[] = {OCAL__ARG(nn),     OCAL__ARG(aa), OCAL__ARG(bb),      aarg,
                      OCAL__ARG(xb->mem), OCAL__ARG(xo), OCAL__ARG(cb->mem), OCAL__ARG(co),
                      barg,              OCAL__ARG(yb->mem), OCAL__ARG(yo)};
  return PROF(L, gemm, ocal__kernel_run(L->ctx, k, L->n * bb, 11, args, L->func));
}

static ocal_status blk(lob *L, size_t m, ocal_buffer *out) {
  size_t shape[2] = {L->n, m};
  return PROF(L, allocs, ocal_buffer_create(L->ctx, L->vt, 2, shape, out));
}

/* Replaces *dst by src, releasing the old buffer. */
static void replace(ocal_buffer *dst, ocal_buffer src) {
  if (*dst != src) ocal_buffer_release(*dst);
  *dst = src;
}

/* out = op(X) for an operator (a new buffer). */
static ocal_status apply(lob *L, const ocal_operator *op, ocal_buffer xb, size_t m,
                         ocal_buffer *out) {
  ocal_buffer y = NULL;
  ocal_status s = blk(L, m, &y);
  if (s == OCAL_OK) s = PROF(L, applies, ocal__operator_apply(op, xb, y, L->func));
  if (s != OCAL_OK) {
    ocal_buffer_release(y);
    return s;
  }
  *out = y;
  return OCAL_OK;
}

/* G = X^T Y on the host (a x b, row-major doubles). */
static ocal_status gram(lob *L, ocal_buffer xb, size_t a, ocal_buffer yb, size_t b, double *g) {
  size_t shape[2] = {a, b};
  ocal_buffer gb;
  ocal_status s = PROF(L, allocs, ocal_buffer_create(L->ctx, L->vt, 2, shape, &gb));
  if (s != OCAL_OK) return s;
  s = gram_into(L, xb, a, yb, b, gb);
  if (s == OCAL_OK) {
    if (L->vt == OCAL_F64) {
      s = read_sync(L, gb, 0, a * b, g, NULL);
    } else {
      float *f = malloc(a * b * sizeof *f);
      if (f == NULL) s = ocal__fail(OCAL_OUT_OF_HOST_MEMORY, "ocal_lobpcg", "no host memory");
      if (s == OCAL_OK) s = read_sync(L, gb, 0, a * b, f, NULL);
      for (size_t i = 0; s == OCAL_OK && i < a * b; i++) g[i] = f[i];
      free(f);
    }
  }
  ocal_buffer_release(gb);
  return s;
}

/* A small host matrix (a x b, row-major doubles) on the device, in the block's type. One
 * upload serves every product of a step that takes the matrix or a band of its rows. */
static ocal_status upload_small(lob *L, const double *c, size_t a, size_t b, ocal_buffer *out) {
  size_t shape[2] = {a, b}, n = a * b, es = ocal_dtype_size(L->vt);
  if (L->ws && n > 0 && L->ws_used + n <= L->ws_cap) {
    unsigned char *h = L->wsh + L->ws_used * es;
    for (size_t i = 0; i < n; i++) {
      if (L->vt == OCAL_F64)
        ((double *)h)[i] = c[i];
      else
        ((float *)h)[i] = (float)c[i];
    }
    ocal_event ev = NULL;
    ocal_status s = PROF(L, uploads, ocal_buffer_write(L->ws, L->ws_used, n, h, &ev));
    if (s != OCAL_OK) return s;
    ocal_event_release(ev);
    s = ocal_buffer_view(L->ws, L->ws_used, 2, shape, out);
    if (s == OCAL_OK) L->ws_used += n;
    return s;
  }
  if (L->vt == OCAL_F64) return PROF(L, uploads, ocal_buffer_from_host(L->ctx, OCAL_F64, 2, shape, c, out));
  float *f = malloc(n * sizeof *f);
  if (f == NULL) return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, "ocal_lobpcg", "no host memory");
  for (size_t i = 0; i < n; i++) f[i] = (float)c[i];
  ocal_status s = PROF(L, uploads, ocal_buffer_from_host(L->ctx, OCAL_F32, 2, shape, f, out));
  free(f);
  return s;
}

/* Rows [r0, r0 + rows) of a device matrix of `cols` columns, as a view. */
static ocal_status rows_view(ocal_buffer cb, size_t r0, size_t rows, size_t cols,
                             ocal_buffer *out) {
  size_t shape[2] = {rows, cols};
  return ocal_buffer_view(cb, r0 * cols, 2, shape, out);
}

/* X C for a device matrix C with b columns, as a new {n, b} buffer. */
static ocal_status times_dev(lob *L, ocal_buffer xb, ocal_buffer cb, size_t b, ocal_buffer *out) {
  ocal_buffer y = NULL;
  ocal_status s = blk(L, b, &y);
  if (s == OCAL_OK) s = small_gemm(L, 1.0, xb, cb, 0.0, y);
  if (s != OCAL_OK) {
    ocal_buffer_release(y);
    return s;
  }
  *out = y;
  return OCAL_OK;
}

/* The Gram matrices of one Rayleigh-Ritz step, computed into bands of one device buffer and
 * read back together: one blocking read per step instead of one per matrix. */
typedef struct gram_batch {
  ocal_buffer buf; /* room for 12 k^2 elements */
  size_t used;
  int count;
  struct {
    double *dst;
    size_t off, n;
  } e[12];
} gram_batch;

/* Queues dst = X^T Y (a x b) into the batch. */
static ocal_status batch_gram(lob *L, gram_batch *g, ocal_buffer xb, size_t a, ocal_buffer yb, size_t b,
                              double *dst) {
  size_t shape[2] = {a, b};
  ocal_buffer v;
  ocal_status s = ocal_buffer_view(g->buf, g->used, 2, shape, &v);
  if (s != OCAL_OK) return s;
  s = gram_into(L, xb, a, yb, b, v);
  ocal_buffer_release(v);
  if (s != OCAL_OK) return s;
  g->e[g->count].dst = dst;
  g->e[g->count].off = g->used;
  g->e[g->count++].n = a * b;
  g->used += a * b;
  return OCAL_OK;
}

/* Reads the queued matrices and hands each to its destination; empties the batch. */
static ocal_status batch_read(lob *L, gram_batch *g) {
  ocal_status s = OCAL_OK;
  if (g->used > 0) {
    size_t es = ocal_dtype_size(L->vt);
    unsigned char *h = malloc(g->used * es);
    if (h == NULL) return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, "ocal_lobpcg", "no host memory");
    s = read_sync(L, g->buf, 0, g->used, h, NULL);
    for (int i = 0; s == OCAL_OK && i < g->count; i++)
      for (size_t j = 0; j < g->e[i].n; j++) {
        size_t o = g->e[i].off + j;
        g->e[i].dst[j] = L->vt == OCAL_F64 ? ((double *)h)[o] : (double)((float *)h)[o];
      }
    free(h);
  }
  g->used = 0;
  g->count = 0;
  return s;
}

/* Y = alpha X C + beta Y with C a small host matrix (a x b, row-major doubles). */
static ocal_status mul_small(lob *L, ocal_buffer xb, const double *c, size_t a, size_t b,
                             double alpha, double beta, ocal_buffer yb) {
  ocal_buffer cb;
  ocal_status s = upload_small(L, c, a, b, &cb);
  if (s != OCAL_OK) return s;
  s = small_gemm(L, alpha, xb, cb, beta, yb);
  ocal_buffer_release(cb);
  return s;
}

/* X C as a new {n, b} buffer. */
static ocal_status times(lob *L, ocal_buffer xb, const double *c, size_t a, size_t b,
                         ocal_buffer *out) {
  ocal_buffer y = NULL;
  ocal_status s = blk(L, b, &y);
  if (s == OCAL_OK) s = mul_small(L, xb, c, a, b, 1.0, 0.0, y);
  if (s != OCAL_OK) {
    ocal_buffer_release(y);
    return s;
  }
  *out = y;
  return OCAL_OK;
}

/* Per-column reductions of an {n, m} block into host doubles: the sums of squares (vdot)
 * or the maxima (amax). */
static ocal_status column_reduce(lob *L, ocal_buffer xb, size_t m, int max, double *out) {
  ocal_buffer r;
  ocal_status s = PROF(L, allocs, ocal_buffer_create(L->ctx, L->vt, 1, &m, &r));
  if (s != OCAL_OK) return s;
  s = PROF(L, reduces, max ? ocal_amax(xb, 0, r) : ocal_dot(xb, xb, 0, r));
  if (s == OCAL_OK) {
    if (L->vt == OCAL_F64) {
      s = read_sync(L, r, 0, m, out, NULL);
    } else {
      float f[64];
      for (size_t o = 0; s == OCAL_OK && o < m; o += 64) {
        size_t c = m - o < 64 ? m - o : 64;
        s = read_sync(L, r, o, c, f, NULL);
        for (size_t i = 0; i < c; i++) out[o + i] = f[i];
      }
    }
  }
  ocal_buffer_release(r);
  return s;
}

/* The column maxima (max) or sums of squares of V (m doubles into amax) and gl^T gr (m x m
 * into g), computed into one device buffer and read back together. */
static ocal_status reduce_and_gram(lob *L, int max, ocal_buffer v, ocal_buffer gl,
                                   ocal_buffer gr, size_t m, double *amax, double *g) {
  size_t tot = m + m * m, gshape[2] = {m, m}, es = ocal_dtype_size(L->vt);
  ocal_buffer r = NULL, rv = NULL, gv = NULL;
  unsigned char *h = malloc(tot * es);
  ocal_status s = OCAL_OK;
  if (h == NULL) return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, "ocal_lobpcg", "no host memory");
  CK(PROF(L, allocs, ocal_buffer_create(L->ctx, L->vt, 1, &tot, &r)));
  CK(ocal_buffer_view(r, 0, 1, &m, &rv));
  CK(ocal_buffer_view(r, m, 2, gshape, &gv));
  CK(PROF(L, reduces, max ? ocal_amax(v, 0, rv) : ocal_dot(v, v, 0, rv)));
  CK(gram_into(L, gl, m, gr, m, gv));
  CK(read_sync(L, r, 0, tot, h, NULL));
  for (size_t i = 0; i < tot; i++) {
    double d = L->vt == OCAL_F64 ? ((double *)h)[i] : (double)((float *)h)[i];
    if (i < m)
      amax[i] = d;
    else
      g[i - m] = d;
  }
done:
  ocal_buffer_release(gv);
  ocal_buffer_release(rv);
  ocal_buffer_release(r);
  free(h);
  return s;
}

static ocal_status amax_and_gram(lob *L, ocal_buffer v, ocal_buffer bv, size_t m, double *amax,
                                 double *g) {
  return reduce_and_gram(L, 1, v, v, bv, m, amax, g);
}

/* Sums of squares of R's columns and gx^T R, packed [k | k x k] into both. */
static ocal_status vdot_and_gram(lob *L, ocal_buffer r, ocal_buffer gx, size_t k, double *both) {
  return reduce_and_gram(L, 0, r, gx, r, k, both, both + k);
}

static void symmetrise(double *g, size_t m) {
  for (size_t i = 0; i < m; i++)
    for (size_t j = i + 1; j < m; j++) g[i * m + j] = g[j * m + i] = (g[i * m + j] + g[j * m + i]) / 2;
}

static int all_finite(const double *g, size_t count) {
  for (size_t i = 0; i < count; i++)
    if (!isfinite(g[i])) return 0;
  return 1;
}

/* The eigenproblem A v = w B v (B NULL: the standard one) of an N x N symmetric pair:
 * ascending w, eigenvectors in A's columns. Returns 0, or nonzero when LAPACK fails (B not
 * positive definite, no convergence), SciPy's LinAlgError. */
static int eigh(size_t nn, double *a, double *b, double *w) {
  if (!all_finite(a, nn * nn) || (b && !all_finite(b, nn * nn))) return 1;
  lapack_int n = (lapack_int)nn;
  if (b == NULL) return LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'V', 'U', n, a, n, w) != 0;
  return LAPACKE_dsygv(LAPACK_ROW_MAJOR, 1, 'V', 'U', n, a, n, b, n, w) != 0;
}

/* SciPy's _b_orthonormalize, with its column scaling folded into the one small matrix T that
 * it applies: V <- V T, BV <- BV T, where T = D inv(chol(D V^T B V D)) and D scales each
 * column by 1 / (its maximum + eps). V and BV (NULL without B; then B V is V) are replaced;
 * with bv_given the caller's BV is used, else B V is computed here. Returns 1 in *ok when
 * Cholesky succeeded, 0 (leaving V and BV as they were) when it failed. t (m x m) receives T. */
static ocal_status b_orthonormalize(lob *L, ocal_buffer *v, ocal_buffer *bv, int bv_given,
                                    size_t m, double *t, int *ok) {
  ocal_status s = OCAL_OK;
  double *norm = malloc(m * sizeof *norm), *g = malloc(m * m * sizeof *g);
  ocal_buffer bvn = NULL, nv = NULL, nbv = NULL;
  *ok = 0;
  if (!norm || !g) {
    s = ocal__fail(OCAL_OUT_OF_HOST_MEMORY, "ocal_lobpcg", "no host memory");
    goto done;
  }
  ocal_buffer bvb = *v;
  if (L->b) {
    if (bv_given) {
      bvb = *bv;
    } else {
      CK(apply(L, L->b, *v, m, &bvn));
      bvb = bvn;
    }
  }
  /* The column maxima and the Gram matrix come back in one blocking read. */
  CK(amax_and_gram(L, *v, bvb, m, norm, g));
  double eps = L->vt == OCAL_F32 ? FLT_EPSILON : DBL_EPSILON;
  for (size_t i = 0; i < m; i++) norm[i] += eps;
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < m; j++) g[i * m + j] /= norm[i] * norm[j];
  if (!all_finite(g, m * m) ||
      LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'U', (lapack_int)m, g, (lapack_int)m) != 0)
    goto done; /* Cholesky failed: *ok stays 0 */
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < i; j++) g[i * m + j] = 0;
  if (LAPACKE_dtrtri(LAPACK_ROW_MAJOR, 'U', 'N', (lapack_int)m, g, (lapack_int)m) != 0) goto done;
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < m; j++) t[i * m + j] = g[i * m + j] / norm[i];
  CK(times(L, *v, t, m, m, &nv));
  if (L->b) CK(times(L, bvb, t, m, m, &nbv));
  replace(v, nv);
  nv = NULL;
  if (L->b) {
    if (bv_given) replace(bv, nbv);
    else *bv = nbv;
    nbv = NULL;
  }
  *ok = 1;
done:
  ocal_buffer_release(bvn);
  ocal_buffer_release(nv);
  ocal_buffer_release(nbv);
  free(norm);
  free(g);
  return s;
}

/* The k x m 0/1 matrix that selects the columns of an {n, k} block where mask is set: X S
 * is a GEMM (no kernel of its own, and the blocks stay row-major). */
static ocal_status selection(lob *L, const int *mask, size_t k, size_t m, ocal_buffer *out) {
  double *sel = calloc(k * m, sizeof *sel);
  if (sel == NULL) return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, "ocal_lobpcg", "no host memory");
  for (size_t i = 0, c = 0; i < k; i++)
    if (mask[i]) sel[i * m + c++] = 1;
  ocal_status s = upload_small(L, sel, k, m, out);
  free(sel);
  return s;
}

/* Writes block (rows x cols, row-major; transposed when tr) at (r0, c0) of an N x N matrix. */
static void put(double *dst, size_t nn, size_t r0, size_t c0, const double *src, size_t rows,
                size_t cols, int tr) {
  for (size_t i = 0; i < rows; i++)
    for (size_t j = 0; j < cols; j++) {
      double v = src[i * cols + j];
      if (tr)
        dst[(r0 + j) * nn + c0 + i] = v;
      else
        dst[(r0 + i) * nn + c0 + j] = v;
    }
}

/* The indices of the k wanted eigenvalues of an ascending list of nn. */
static size_t pick(size_t nn, int largest, size_t i) {
  return largest ? nn - 1 - i : i;
}

/* Y-constraints: V <- V - Y (Y^T B Y)^-1 (BY^T V), with the Cholesky factor of Y^T B Y. */
static ocal_status apply_constraints(lob *L, ocal_buffer v, size_t m, ocal_buffer y,
                                     ocal_buffer by, size_t j, const double *ybyf) {
  double *t = malloc(j * m * sizeof *t);
  if (t == NULL) return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, "ocal_lobpcg", "no host memory");
  ocal_status s = gram(L, by, j, v, m, t);
  if (s == OCAL_OK) {
    LAPACKE_dpotrs(LAPACK_ROW_MAJOR, 'U', (lapack_int)j, (lapack_int)m, ybyf, (lapack_int)j, t,
                   (lapack_int)m);
    s = mul_small(L, y, t, j, m, -1.0, 1.0, v);
  }
  free(t);
  return s;
}

/* Residuals R = AX - BX diag(lambda) and their column norms; with gx, also gxr = gx^T R
 * (k x k), read back in the same blocking read as the norms. */
static ocal_status residuals(lob *L, ocal_buffer ax, ocal_buffer bx, const double *lambda,
                             size_t k, ocal_buffer *r_out, double *norms, ocal_buffer gx,
                             double *gxr) {
  ocal_buffer r = NULL;
  double *d = calloc(k * k, sizeof *d);
  ocal_status s = OCAL_OK;
  if (d == NULL) return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, "ocal_lobpcg", "no host memory");
  for (size_t i = 0; i < k; i++) d[i * k + i] = lambda[i];
  CK(blk(L, k, &r));
  CK(PROF(L, copies, ocal_buffer_copy(ax, r)));
  CK(mul_small(L, bx, d, k, k, -1.0, 1.0, r));
  if (gx) {
    double *both = malloc((k + k * k) * sizeof *both);
    if (both == NULL) {
      s = ocal__fail(OCAL_OUT_OF_HOST_MEMORY, "ocal_lobpcg", "no host memory");
      goto done;
    }
    s = vdot_and_gram(L, r, gx, k, both);
    for (size_t i = 0; s == OCAL_OK && i < k; i++) norms[i] = both[i];
    for (size_t i = 0; s == OCAL_OK && i < k * k; i++) gxr[i] = both[k + i];
    free(both);
    if (s != OCAL_OK) goto done;
  } else {
    CK(column_reduce(L, r, k, 0, norms));
  }
  for (size_t i = 0; i < k; i++) norms[i] = sqrt(fabs(norms[i]));
  *r_out = r;
  r = NULL;
done:
  ocal_buffer_release(r);
  free(d);
  return s;
}

/* Everything one run holds besides lob: the blocks on the device, SciPy's names for them,
 * and the small matrices of the Rayleigh-Ritz steps on the host. */
typedef struct lob_run {
  size_t k, m, nj;          /* block size, active (unconverged) columns, constraints */
  int largest;
  double tol;
  ocal_buffer X, AX, BX;    /* the block, A X and B X (BX NULL without B) */
  ocal_buffer P, AP, BP;    /* the previous step's directions */
  ocal_buffer R, bestX;     /* the residuals; the block of the smallest mean residual */
  ocal_buffer Y, BY;        /* the constraints (the caller's) and B Y */
  ocal_buffer aR, aAR, aBR; /* the active residuals, preconditioned and B-orthonormal */
  ocal_buffer aP, aAP, aBP; /* the active columns of P, AP, BP */
  ocal_buffer sel, cb, cxv, crv, cpv; /* a column selection; the coefficients and their bands */
  gram_batch gbat;
  double *lambda, *res, *ga, *gb, *w, *c, *t, *ybyf;
  /* The Gram blocks of [X, R, P]: gXAR is X^T A R, and so on; gXRall is (BX)^T R for every
   * column, read with the residual norms. */
  double *gXAR, *gRAR, *gXAX, *gXBX, *gRBR, *gXBR, *gXAP, *gRAP, *gPAP, *gXBP, *gRBP, *gPBP;
  double *gXRall;
  int *mask;
  int restart, forced, explicit_gram;
  double smallest;
  size_t best_iter;
} lob_run;

static ocal_status run_alloc(lob_run *R, size_t k) {
  size_t maxn = 3 * k, kk = k * k;
  R->lambda = calloc(k, sizeof(double));
  R->res = calloc(k, sizeof(double));
  R->ga = calloc(maxn * maxn, sizeof(double));
  R->gb = calloc(maxn * maxn, sizeof(double));
  R->w = calloc(maxn, sizeof(double));
  R->c = calloc(maxn * k, sizeof(double));
  R->t = calloc(kk, sizeof(double));
  double **g[] = {&R->gXAR, &R->gRAR, &R->gXAX, &R->gXBX, &R->gRBR, &R->gXBR, &R->gXAP,
                  &R->gRAP, &R->gPAP, &R->gXBP, &R->gRBP, &R->gPBP, &R->gXRall};
  int ok = R->lambda && R->res && R->ga && R->gb && R->w && R->c && R->t;
  for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) ok &= (*g[i] = calloc(kk, sizeof(double))) != NULL;
  R->mask = calloc(k, sizeof(int));
  if (!ok || R->mask == NULL)
    return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, "ocal_lobpcg",
                      "no host memory for the Rayleigh-Ritz matrices");
  return OCAL_OK;
}

static void run_free(lob *L, lob_run *R) {
  ocal_buffer *b[] = {&R->X,  &R->AX,  &R->BX,  &R->P,   &R->AP,  &R->BP,  &R->R,
                      &R->bestX, &R->aR, &R->aAR, &R->aBR, &R->aP, &R->aAP, &R->aBP,
                      &R->sel, &R->cxv, &R->crv, &R->cpv, &R->cb,  &R->gbat.buf};
  for (size_t i = 0; i < sizeof b / sizeof b[0]; i++) ocal_buffer_release(*b[i]);
  if (R->BY != R->Y) ocal_buffer_release(R->BY);
  /* Pending uploads read the host arena: let them finish before it goes. */
  if (L->ws) ocal_context_finish(L->ctx);
  ocal_buffer_release(L->ws);
  free(L->wsh);
  double *h[] = {R->lambda, R->res, R->ga,   R->gb,   R->w,    R->c,    R->t,    R->ybyf,
                 R->gXAR,   R->gRAR, R->gXAX, R->gXBX, R->gRBR, R->gXBR, R->gXAP, R->gRAP,
                 R->gPAP,   R->gXBP, R->gRBP, R->gPBP, R->gXRall};
  for (size_t i = 0; i < sizeof h / sizeof h[0]; i++) free(h[i]);
  free(R->mask);
}

/* X C, A X C and B X C for the coefficients in R->c (k x k): the block rotated to the Ritz
 * vectors. */
static ocal_status rotate_block(lob *L, lob_run *R) {
  ocal_buffer nx = NULL;
  ocal_status s = OCAL_OK;
  CK(times(L, R->X, R->c, R->k, R->k, &nx));
  replace(&R->X, nx);
  nx = NULL;
  CK(times(L, R->AX, R->c, R->k, R->k, &nx));
  replace(&R->AX, nx);
  nx = NULL;
  if (L->b) {
    CK(times(L, R->BX, R->c, R->k, R->k, &nx));
    replace(&R->BX, nx);
    nx = NULL;
  }
done:
  ocal_buffer_release(nx);
  return s;
}

/* The wanted k of the nn Ritz pairs in ga and w: R->lambda, and their coefficients in R->c
 * (nn x k). */
static void pick_ritz(lob_run *R, size_t nn) {
  for (size_t i = 0; i < R->k; i++) {
    size_t p = pick(nn, R->largest, i);
    R->lambda[i] = R->w[p];
    for (size_t r = 0; r < nn; r++) R->c[r * R->k + i] = R->ga[r * nn + p];
  }
}

/* Rayleigh-Ritz on the span of X alone, X rotated to the Ritz vectors. X is B-orthonormal,
 * so X^T B X = I is taken as it is, except with `explicit_b`, which forms X^T B X and
 * symmetrises both Gram matrices (the final step). *failed is set when LAPACK fails. */
static ocal_status rayleigh_ritz_x(lob *L, lob_run *R, int explicit_b, int *failed) {
  size_t k = R->k;
  ocal_status s = gram(L, R->X, k, R->AX, k, R->ga);
  if (s == OCAL_OK && explicit_b) s = gram(L, R->X, k, L->b ? R->BX : R->X, k, R->gb);
  if (s != OCAL_OK) return s;
  if (explicit_b) {
    symmetrise(R->ga, k);
    symmetrise(R->gb, k);
  }
  *failed = eigh(k, R->ga, explicit_b ? R->gb : NULL, R->w);
  if (*failed) return OCAL_OK;
  pick_ritz(R, k);
  return rotate_block(L, R);
}

/* SciPy's set-up: the initial block (the caller's, or uniform random numbers in [-1, 1)),
 * made B-orthogonal to the constraints and B-orthonormal, and its Rayleigh-Ritz step. */
static ocal_status initial_block(lob *L, lob_run *R, ocal_buffer x, const ocal_lobpcg_options *o) {
  ocal_status s = OCAL_OK;
  size_t k = R->k, nj = R->nj;
  CK(blk(L, k, &R->X));
  if (o->use_x0)
    CK(PROF(L, copies, ocal_buffer_copy(x, R->X)));
  else
    CK(ocal_random_uniform(o->seed, 0, -1.0, 1.0, R->X));
  /* Constraints: the Cholesky factor of Y^T B Y, and X made B-orthogonal to Y. */
  if (R->Y) {
    R->BY = R->Y;
    if (L->b) CK(apply(L, L->b, R->Y, nj, &R->BY));
    R->ybyf = malloc(nj * nj * sizeof *R->ybyf);
    if (R->ybyf == NULL) return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, L->func, "no host memory");
    CK(gram(L, R->Y, nj, R->BY, nj, R->ybyf));
    double top = 0;
    for (size_t i = 0; i < nj; i++) top = fmax(top, R->ybyf[i * nj + i]);
    int dependent =
        LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'U', (lapack_int)nj, R->ybyf, (lapack_int)nj) != 0;
    /* A pivot at rounding level of the largest column's square: dependent in the operator's
     * precision, though the factorisation in double went through. */
    double eps = L->vt == OCAL_F32 ? FLT_EPSILON : DBL_EPSILON;
    for (size_t i = 0; i < nj && !dependent; i++)
      dependent = !(R->ybyf[i * nj + i] * R->ybyf[i * nj + i] > 100 * eps * top);
    if (dependent)
      return ocal__fail(OCAL_INVALID_ARGUMENT, L->func,
                        "the constraints (columns of options->y) are linearly dependent%s: "
                        "pass independent columns",
                        L->b ? ", or B may not be symmetric positive definite (Y^T B Y is "
                               "singular or not positive definite)"
                             : " (Y^T Y is singular in the operator's precision)");
    for (size_t i = 0; i < nj; i++)
      for (size_t j = 0; j < i; j++) R->ybyf[i * nj + j] = 0;
    CK(apply_constraints(L, R->X, k, R->Y, R->BY, nj, R->ybyf));
  }
  int ok, failed;
  CK(b_orthonormalize(L, &R->X, &R->BX, 0, k, R->t, &ok));
  if (!ok)
    return ocal__fail(OCAL_INVALID_ARGUMENT, L->func,
                      "B-orthonormalisation of the initial block by Cholesky failed: %s",
                      !o->use_x0 && L->b
                          ? "B may not be symmetric positive definite (X^T B X of the random "
                            "initial block is not positive definite): pass a symmetric positive "
                            "definite B"
                      : !o->use_x0 ? "the random block came out dependent: try another seed"
                      : L->b       ? "the initial block's columns may be linearly dependent, or B "
                                     "may not be symmetric positive definite: check both"
                                   : "the initial block's columns are linearly dependent: pass "
                                     "independent columns, or use_x0 = 0 for a random block");
  CK(apply(L, L->a, R->X, k, &R->AX));
  CK(rayleigh_ritz_x(L, R, 0, &failed));
  if (failed)
    return ocal__fail(OCAL_INTERNAL, L->func,
                      "the initial Rayleigh-Ritz eigenproblem failed in LAPACK");
  for (size_t i = 0; i < k; i++) R->mask[i] = 1;
  R->smallest = DBL_MAX;
  R->restart = 1;
  /* The Gram batch, and the upload workspace: between two blocking reads a step uploads at
   * most the coefficients (3k x k), a selection, a T factor and a residual diagonal, so
   * 16 k^2 is ample. */
  CK(blk(L, k, &R->bestX));
  size_t gshape = 12 * k * k;
  CK(PROF(L, allocs, ocal_buffer_create(L->ctx, L->vt, 1, &gshape, &R->gbat.buf)));
  L->ws_cap = 16 * k * k + 16;
  L->wsh = malloc(L->ws_cap * ocal_dtype_size(L->vt));
  if (L->wsh == NULL) return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, L->func, "no host memory");
  CK(PROF(L, allocs, ocal_buffer_create(L->ctx, L->vt, 1, &L->ws_cap, &L->ws)));
done:
  return s;
}

/* SciPy's residual step: R = A X - B X diag(lambda) and its column norms, the best block so
 * far kept, a forced restart when the mean residual grew 2^restart_control times over the
 * best, and soft locking: R->m becomes the number of columns still above the tolerance.
 * `early` also brings back (BX)^T R in the same read (see the loop). */
static ocal_status residual_step(lob *L, lob_run *R, size_t it, int restart_control, int early) {
  size_t k = R->k;
  ocal_buffer bx = L->b ? R->BX : R->X;
  replace(&R->R, NULL);
  ocal_status s = residuals(L, R->AX, bx, R->lambda, k, &R->R, R->res, early ? bx : NULL,
                            R->gXRall);
  if (s != OCAL_OK) return s;
  double rnorm = 0;
  for (size_t i = 0; i < k; i++) rnorm += R->res[i];
  rnorm /= (double)k;
  if (rnorm < R->smallest) {
    R->smallest = rnorm;
    R->best_iter = it;
    CK(PROF(L, copies, ocal_buffer_copy(R->X, R->bestX)));
  } else if (rnorm > ldexp(1.0, restart_control) * R->smallest) {
    R->forced = 1;
    replace(&R->AX, NULL);
    CK(apply(L, L->a, R->X, k, &R->AX));
    if (L->b) {
      replace(&R->BX, NULL);
      CK(apply(L, L->b, R->X, k, &R->BX));
    }
  }
  R->m = 0;
  for (size_t i = 0; i < k; i++) {
    R->mask[i] = R->mask[i] && R->res[i] > R->tol;
    R->m += (size_t)R->mask[i];
  }
done:
  return s;
}

/* SciPy's search directions: the active residuals, preconditioned, made B-orthogonal to the
 * constraints and to X, and B-orthonormalised (*ok = 0 when that fails: the block has lost
 * its rank, and SciPy stops), with A applied; and the active previous directions,
 * B-orthonormalised too (when that fails, this step restarts without P). */
static ocal_status search_directions(lob *L, lob_run *R, size_t it, int early, int *ok) {
  size_t k = R->k, m = R->m;
  ocal_buffer nx = NULL;
  ocal_status s = OCAL_OK;
  replace(&R->aR, NULL);
  replace(&R->sel, NULL);
  CK(selection(L, R->mask, k, m, &R->sel));
  CK(times_dev(L, R->R, R->sel, m, &R->aR));
  if (it > 0) {
    replace(&R->aP, NULL);
    replace(&R->aAP, NULL);
    replace(&R->aBP, NULL);
    CK(times_dev(L, R->P, R->sel, m, &R->aP));
    CK(times_dev(L, R->AP, R->sel, m, &R->aAP));
    if (L->b) CK(times_dev(L, R->BP, R->sel, m, &R->aBP));
  }
  if (L->m) {
    CK(apply(L, L->m, R->aR, m, &nx));
    replace(&R->aR, nx);
    nx = NULL;
  }
  if (R->Y) CK(apply_constraints(L, R->aR, m, R->Y, R->BY, R->nj, R->ybyf));
  /* B-orthogonalise the residuals to X: R -= X (BX^T R). */
  if (early) {
    for (size_t i = 0; i < k; i++)
      for (size_t q = 0, col = 0; q < k; q++)
        if (R->mask[q]) R->gXBR[i * m + col++] = R->gXRall[i * k + q];
  } else {
    CK(gram(L, L->b ? R->BX : R->X, k, R->aR, m, R->gXBR));
  }
  CK(mul_small(L, R->X, R->gXBR, k, m, -1.0, 1.0, R->aR));
  replace(&R->aBR, NULL);
  CK(b_orthonormalize(L, &R->aR, &R->aBR, 0, m, R->t, ok));
  if (!*ok) goto done;
  replace(&R->aAR, NULL);
  CK(apply(L, L->a, R->aR, m, &R->aAR));
  if (it > 0) {
    int pok;
    CK(b_orthonormalize(L, &R->aP, &R->aBP, 1, m, R->t, &pok));
    if (pok) {
      CK(times(L, R->aAP, R->t, m, m, &nx));
      replace(&R->aAP, nx);
      nx = NULL;
      R->restart = R->forced;
    } else {
      R->restart = 1;
    }
  }
done:
  ocal_buffer_release(nx);
  return s;
}

/* The Gram blocks of [X, R, P] in one batch: implicit (X^T A X = diag(lambda), the
 * B-products the identity) early, explicit and symmetrised once the residuals are small. */
static ocal_status gram_blocks(lob *L, lob_run *R) {
  size_t k = R->k, m = R->m;
  gram_batch *g = &R->gbat;
  ocal_buffer bxv = L->b ? R->BX : R->X, brv = L->b ? R->aBR : R->aR, bpv = L->b ? R->aBP : R->aP;
  ocal_status s = OCAL_OK;
  CK(batch_gram(L, g, R->X, k, R->aAR, m, R->gXAR));
  CK(batch_gram(L, g, R->aR, m, R->aAR, m, R->gRAR));
  if (R->explicit_gram) {
    CK(batch_gram(L, g, R->X, k, R->AX, k, R->gXAX));
    CK(batch_gram(L, g, R->X, k, bxv, k, R->gXBX));
    CK(batch_gram(L, g, R->aR, m, brv, m, R->gRBR));
    CK(batch_gram(L, g, R->X, k, brv, m, R->gXBR));
  } else {
    memset(R->gXAX, 0, k * k * 8);
    memset(R->gXBX, 0, k * k * 8);
    memset(R->gRBR, 0, m * m * 8);
    memset(R->gXBR, 0, k * m * 8);
    for (size_t i = 0; i < k; i++) {
      R->gXAX[i * k + i] = R->lambda[i];
      R->gXBX[i * k + i] = 1;
    }
    for (size_t i = 0; i < m; i++) R->gRBR[i * m + i] = 1;
  }
  if (!R->restart) {
    CK(batch_gram(L, g, R->X, k, R->aAP, m, R->gXAP));
    CK(batch_gram(L, g, R->aR, m, R->aAP, m, R->gRAP));
    CK(batch_gram(L, g, R->aP, m, R->aAP, m, R->gPAP));
    CK(batch_gram(L, g, R->X, k, bpv, m, R->gXBP));
    CK(batch_gram(L, g, R->aR, m, bpv, m, R->gRBP));
    if (R->explicit_gram) CK(batch_gram(L, g, R->aP, m, bpv, m, R->gPBP));
  }
  CK(batch_read(L, g));
  if (R->explicit_gram) {
    symmetrise(R->gRAR, m);
    symmetrise(R->gXAX, k);
    symmetrise(R->gXBX, k);
    symmetrise(R->gRBR, m);
  }
  if (!R->restart) {
    if (R->explicit_gram) {
      symmetrise(R->gPAP, m);
      symmetrise(R->gPBP, m);
    } else {
      memset(R->gPBP, 0, m * m * 8);
      for (size_t i = 0; i < m; i++) R->gPBP[i * m + i] = 1;
    }
  }
done:
  return s;
}

/* Assembles the symmetric pair (ga, gb) of [X, R] (with_p = 0) or [X, R, P] from the Gram
 * blocks; returns its order. */
static size_t assemble(lob_run *R, int with_p) {
  size_t k = R->k, m = R->m, nn = k + (with_p ? 2 : 1) * m;
  double *mats[2][6] = {{R->gXAX, R->gXAR, R->gRAR, R->gXAP, R->gRAP, R->gPAP},
                        {R->gXBX, R->gXBR, R->gRBR, R->gXBP, R->gRBP, R->gPBP}};
  double *dst[2] = {R->ga, R->gb};
  for (int q = 0; q < 2; q++) {
    double **g = mats[q];
    put(dst[q], nn, 0, 0, g[0], k, k, 0);
    put(dst[q], nn, 0, k, g[1], k, m, 0);
    put(dst[q], nn, k, 0, g[1], k, m, 1);
    put(dst[q], nn, k, k, g[2], m, m, 0);
    if (with_p) {
      put(dst[q], nn, 0, k + m, g[3], k, m, 0);
      put(dst[q], nn, k, k + m, g[4], m, m, 0);
      put(dst[q], nn, k + m, 0, g[3], k, m, 1);
      put(dst[q], nn, k + m, k, g[4], m, m, 1);
      put(dst[q], nn, k + m, k + m, g[5], m, m, 0);
    }
  }
  return nn;
}

/* SciPy's Rayleigh-Ritz step on [X, R, P] (or [X, R] on a restart, or when the larger
 * problem fails): the wanted Ritz pairs in R->lambda and R->c. *nn receives the order;
 * *failed is set when even [X, R] fails (SciPy: "eigh failed", and it stops). */
static ocal_status rayleigh_ritz(lob *L, lob_run *R, size_t *nn, int *failed) {
  ocal_status s = gram_blocks(L, R);
  if (s != OCAL_OK) return s;
  *failed = 0;
  if (!R->restart) {
    *nn = assemble(R, 1);
    if (eigh(*nn, R->ga, R->gb, R->w)) R->restart = 1; /* try again without P */
  }
  if (R->restart) {
    *nn = assemble(R, 0);
    if (eigh(*nn, R->ga, R->gb, R->w)) {
      *failed = 1;
      return OCAL_OK;
    }
  }
  pick_ritz(R, *nn);
  return OCAL_OK;
}

/* X = X cx + R cr + P cp (and the same for A X, B X); P becomes R cr + P cp. */
static ocal_status update_block(lob *L, lob_run *R, size_t nn) {
  size_t k = R->k, m = R->m;
  ocal_buffer pp = NULL, app = NULL, bpp = NULL, nx = NULL;
  ocal_status s = OCAL_OK;
  /* One upload of the coefficients; cx, cr and cp are bands of its rows. */
  replace(&R->cb, NULL);
  replace(&R->cxv, NULL);
  replace(&R->crv, NULL);
  replace(&R->cpv, NULL);
  CK(upload_small(L, R->c, nn, k, &R->cb));
  CK(rows_view(R->cb, 0, k, k, &R->cxv));
  CK(rows_view(R->cb, k, m, k, &R->crv));
  if (!R->restart) CK(rows_view(R->cb, k + m, m, k, &R->cpv));
  CK(times_dev(L, R->aR, R->crv, k, &pp));
  CK(times_dev(L, R->aAR, R->crv, k, &app));
  if (L->b) CK(times_dev(L, R->aBR, R->crv, k, &bpp));
  if (!R->restart) {
    CK(small_gemm(L, 1.0, R->aP, R->cpv, 1.0, pp));
    CK(small_gemm(L, 1.0, R->aAP, R->cpv, 1.0, app));
    if (L->b) CK(small_gemm(L, 1.0, R->aBP, R->cpv, 1.0, bpp));
  }
  ocal_buffer *blocks[3] = {&R->X, &R->AX, &R->BX}, dirs[3] = {pp, app, bpp};
  for (int q = 0; q < (L->b ? 3 : 2); q++) {
    CK(blk(L, k, &nx));
    CK(PROF(L, copies, ocal_buffer_copy(dirs[q], nx)));
    CK(small_gemm(L, 1.0, *blocks[q], R->cxv, 1.0, nx));
    replace(blocks[q], nx);
    nx = NULL;
  }
  replace(&R->P, pp);
  replace(&R->AP, app);
  replace(&R->BP, bpp);
  pp = app = bpp = NULL;
done:
  ocal_buffer_release(pp);
  ocal_buffer_release(app);
  ocal_buffer_release(bpp);
  ocal_buffer_release(nx);
  return s;
}

/* Why the iterations stopped, in the words of the error message. */
static const char *stop_reason(ocal_lobpcg_stop stop) {
  switch (stop) {
    case OCAL_LOBPCG_CONVERGED: return "every pair met the tolerance";
    case OCAL_LOBPCG_MAX_ITER: return "the iteration limit (options.max_iter) was reached";
    case OCAL_LOBPCG_BASIS_RANK_LOST:
      return "stopped early: the block of residuals could no longer be B-orthonormalised "
             "(Cholesky failed; the search space lost its rank)";
    case OCAL_LOBPCG_RAYLEIGH_RITZ_FAILED:
      return "stopped early: the Rayleigh-Ritz eigenproblem failed in LAPACK even without "
             "the previous directions";
    case OCAL_LOBPCG_LOCKED_NOT_CONVERGED:
      return "every pair met the tolerance at some iteration and was locked there (soft "
             "locking, as SciPy's: a locked pair is no longer refined), which ended the "
             "iterations, but the block returned (the best, after a final Rayleigh-Ritz step) "
             "does not meet it for every pair";
  }
  return "invalid";
}

ocal_status ocal__lobpcg_run(const ocal_operator *a, ocal_buffer x,
                             const ocal_lobpcg_options *options,
                             const ocal__lobpcg_tuning *tuning, double *eigenvalues,
                             double *residual_norms, ocal_lobpcg_result *result) {
  const char *func = "ocal_lobpcg";
  ocal_status s = ocal__check_operator(a, "A", func);
  if (s == OCAL_OK) s = ocal__check_buffer_arg(x, "x", func);
  if (s == OCAL_OK) s = ocal__filled_check(func, "result", "ocal_lobpcg_result", result,
                                              sizeof *result, sizeof *result);
  if (s != OCAL_OK) return s;
  if (eigenvalues == NULL) return ocal__fail(OCAL_INVALID_ARGUMENT, func, "eigenvalues is NULL");
  ocal_lobpcg_options o;
  ocal_lobpcg_options_init(&o);
  if (options) {
    if (options->struct_size < offsetof(ocal_lobpcg_options, largest) + sizeof(int) ||
        options->struct_size > sizeof o)
      return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                       "options->struct_size is %zu; start from ocal_lobpcg_options_init",
                       options->struct_size);
    memcpy(&o, options, options->struct_size);
  }
  ocal__lobpcg_profile own_prof = {0};
  lob L = {x->ctx, a->dtype, a->n, a, o.b, o.m, func};
  L.gram_kernel = tuning ? tuning->gram_kernel : -1;
  L.prof = tuning && tuning->profile ? tuning->profile : &own_prof;
  size_t n = a->n;
  if (x->dtype != a->dtype)
    return ocal__fail(OCAL_TYPE_MISMATCH, func, "the operator takes %s but x is %s",
                     ocal_dtype_name(a->dtype), ocal_dtype_name(x->dtype));
  if (x->ndim != 2 || x->shape[0] != n || x->shape[1] == 0)
    return ocal__fail(OCAL_SHAPE_MISMATCH, func,
                     "x must be a {n, k} block with n = %zu (the operator's size) and k >= 1",
                     n);
  size_t k = x->shape[1];
  L.own = k <= OWN_MAX_K && ocal__context_info(x->ctx)->max_work_item_sizes[0] >= GRAM_WG;
  /* A's type is a solver's type (checked above), so a B or M of any other type, one no solver
   * takes included, is a mismatch with A: compared before ocal__check_operator would call
   * that type unsupported. */
  if ((o.b && o.b->dtype != a->dtype) || (o.m && o.m->dtype != a->dtype))
    return ocal__fail(OCAL_TYPE_MISMATCH, func, "%s is %s, but A is %s: B and M take A's type",
                      o.b && o.b->dtype != a->dtype ? "B" : "M",
                      ocal_dtype_name(o.b && o.b->dtype != a->dtype ? o.b->dtype : o.m->dtype),
                      ocal_dtype_name(a->dtype));
  if (o.b && (s = ocal__check_operator(o.b, "B", func)) != OCAL_OK) return s;
  if (o.m && (s = ocal__check_operator(o.m, "M", func)) != OCAL_OK) return s;
  if ((o.b && o.b->n != n) || (o.m && o.m->n != n))
    return ocal__fail(OCAL_SHAPE_MISMATCH, func, "%s is %zu x %zu, but A is %zu x %zu",
                      o.b && o.b->n != n ? "B" : "M", o.b && o.b->n != n ? o.b->n : o.m->n,
                      o.b && o.b->n != n ? o.b->n : o.m->n, n, n);
  if (!isfinite(o.tol))
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "options->tol is %g: use a finite tolerance > 0, or 0 (or less) for the "
                      "default sqrt(eps) n",
                      o.tol);
  /* A negative count converted to size_t arrives as a huge one. */
  if (o.max_iter > SIZE_MAX / 2)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "options->max_iter is %zu, a negative count converted to size_t: use a "
                      "count from 1 to %zu, or 0 for the default (20)",
                      o.max_iter, SIZE_MAX / 2);
  if (o.restart_control < 0 || o.restart_control > 1000)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "options->restart_control is %d: use 0 to 1000 (default 20)",
                      o.restart_control);
  if ((o.largest != 0 && o.largest != 1) || (o.use_x0 != 0 && o.use_x0 != 1))
    return ocal__fail(OCAL_INVALID_ARGUMENT, func, "options->%s is %d: use 0 or 1",
                      o.largest != 0 && o.largest != 1 ? "largest" : "use_x0",
                      o.largest != 0 && o.largest != 1 ? o.largest : o.use_x0);
  size_t nj = 0;
  if (o.y) {
    if ((s = ocal__check_buffer_arg(o.y, "options->y", func)) != OCAL_OK) return s;
    if (o.y->ctx != x->ctx || o.y->dtype != a->dtype || o.y->ndim != 2 || o.y->shape[0] != n ||
        o.y->shape[1] == 0)
      return ocal__fail(OCAL_SHAPE_MISMATCH, func,
                       "constraints y must be a {%zu, j} block of %s in x's context", n,
                       ocal_dtype_name(a->dtype));
    nj = o.y->shape[1];
  }
  if (nj >= n || n - nj < 5 * k)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                     "k = %zu eigenpairs is too many for n = %zu%s: LOBPCG needs n - j >= 5 k "
                     "(as SciPy's iterations do); use a dense eigensolver for so small a problem",
                     k, n, nj ? " with j constraints" : "");
  if (o.max_iter == 0) o.max_iter = 20;
  double eps = a->dtype == OCAL_F32 ? FLT_EPSILON : DBL_EPSILON;

  lob_run R;
  memset(&R, 0, sizeof R);
  R.k = k;
  R.nj = nj;
  R.Y = o.y;
  R.largest = o.largest;
  R.tol = o.tol > 0 ? o.tol : sqrt(eps) * (double)n;
  ocal_lobpcg_stop stop = OCAL_LOBPCG_MAX_ITER;
  size_t it; /* the block updates made: the block in hand is iteration it's (0: the initial) */
  int failed = 0;
  CK(run_alloc(&R, k));
  CK(initial_block(&L, &R, x, &o));
  R.m = k;
  for (it = 0;; it++) {
    L.prof->iterations++;
    /* With the LOBPCG kernels and neither preconditioner nor constraints, (BX)^T R comes
     * back with the residual norms: each Gram element is summed on its own in a fixed
     * order, and selecting R's active columns is exact, so the columns of this product are
     * bit for bit those of (BX)^T R_active, one blocking read earlier. */
    int early = own_kernels(&L) && !o.m && !R.Y;
    CK(residual_step(&L, &R, it, o.restart_control, early));
    if (R.m == 0) {
      stop = OCAL_LOBPCG_CONVERGED;
      break;
    }
    /* The limit: max_iter updates made, the last block's residuals checked just above (and
     * the block kept if best). SciPy's loop counter runs to maxiter and so makes one update
     * more; here the limit, the iteration count and best_iteration all count updates. */
    if (it == o.max_iter) break;
    int ok;
    CK(search_directions(&L, &R, it, early, &ok));
    if (!ok) { /* SciPy: "Failed at iteration ... with accuracies ..." and stops */
      stop = OCAL_LOBPCG_BASIS_RANK_LOST;
      break;
    }
    double rmax = 0;
    for (size_t i = 0; i < k; i++) rmax = fmax(rmax, R.res[i]);
    double myeps = a->dtype == OCAL_F32 ? 1.0 : sqrt(DBL_EPSILON);
    R.explicit_gram = !(rmax > myeps && !R.explicit_gram);
    size_t nn;
    CK(rayleigh_ritz(&L, &R, &nn, &failed));
    if (failed) { /* SciPy: "eigh failed at iteration ..." and stops */
      stop = OCAL_LOBPCG_RAYLEIGH_RITZ_FAILED;
      break;
    }
    CK(update_block(&L, &R, nn));
  }
  size_t iter = it;

  /* The best block, made to satisfy the constraints exactly, and a final Rayleigh-Ritz step
   * with explicit symmetrised Gram matrices. */
  replace(&R.X, R.bestX);
  R.bestX = NULL;
  if (R.Y) CK(apply_constraints(&L, R.X, k, R.Y, R.BY, nj, R.ybyf));
  replace(&R.AX, NULL);
  CK(apply(&L, a, R.X, k, &R.AX));
  if (o.b) {
    replace(&R.BX, NULL);
    CK(apply(&L, o.b, R.X, k, &R.BX));
  }
  CK(rayleigh_ritz_x(&L, &R, 1, &failed));
  /* Every pair was locked, but the block returned fails the final check: CONVERGED would
   * contradict OCAL_NOT_CONVERGED. */
  if (failed && stop == OCAL_LOBPCG_CONVERGED) stop = OCAL_LOBPCG_LOCKED_NOT_CONVERGED;
  if (failed) {
    if (result) {
      result->iterations = iter;
      result->best_iteration = R.best_iter;
      result->converged = 0;
      result->tolerance = R.tol;
      result->max_residual = NAN;
      result->stop = stop;
    }
    s = ocal__fail(OCAL_NOT_CONVERGED, func,
                   "the final Rayleigh-Ritz eigenproblem failed in LAPACK (the block lost "
                   "B-orthogonality) after %zu iterations; before it, %s",
                   iter,
                   stop == OCAL_LOBPCG_LOCKED_NOT_CONVERGED
                       ? "every pair had met the tolerance at some iteration and was locked "
                         "there, which ended the iterations"
                       : stop_reason(stop));
    goto done;
  }
  replace(&R.R, NULL);
  CK(residuals(&L, R.AX, o.b ? R.BX : R.X, R.lambda, k, &R.R, R.res, NULL, NULL));
  CK(PROF(&L, copies, ocal_buffer_copy(R.X, x)));
  size_t conv = 0;
  double rmax = 0;
  for (size_t i = 0; i < k; i++) {
    eigenvalues[i] = R.lambda[i];
    if (residual_norms) residual_norms[i] = R.res[i];
    conv += R.res[i] <= R.tol;
    rmax = fmax(rmax, R.res[i]);
  }
  if (conv < k && stop == OCAL_LOBPCG_CONVERGED) stop = OCAL_LOBPCG_LOCKED_NOT_CONVERGED;
  if (result) {
    result->iterations = iter;
    result->best_iteration = R.best_iter;
    result->converged = conv;
    result->tolerance = R.tol;
    result->max_residual = rmax;
    result->stop = stop;
  }
  if (conv < k)
    s = ocal__fail(OCAL_NOT_CONVERGED, func,
                   "%zu of %zu eigenpairs within the tolerance %g after %zu iterations (largest "
                   "residual norm %g): %s; x and eigenvalues hold the best block found%s",
                   conv, k, R.tol, iter, rmax, stop_reason(stop),
                   stop == OCAL_LOBPCG_LOCKED_NOT_CONVERGED
                       ? ": run again from it (use_x0 = 1), which unlocks every pair"
                       : "");
done:
  run_free(&L, &R);
  return s;
}

#endif /* OCAL_HAVE_LAPACKE */
