/* ocal — LOBPCG: the k smallest or largest eigenpairs of a symmetric operator, following
 * SciPy's scipy/sparse/linalg/_eigen/lobpcg/lobpcg.py (1.10) step for step, so that its
 * behaviour (soft locking, restarts, the implicit/explicit Gram switch, the best iterate)
 * and its iteration counts carry over. The tall blocks {n, m} live on the device: their
 * products with small matrices and their Gram matrices X^T Y run through ocal_gemm; the
 * small dense problems (Cholesky, triangular inverse, the generalised symmetric
 * eigenproblem of at most 3k x 3k) run on the host through LAPACKE. */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "sparse_internal.h"

#include <time.h>

#ifdef OCAL_HAVE_LAPACKE
#include <lapacke.h>
#endif

ocal__lobpcg_profile ocal__lobpcg_prof;
int ocal__lobpcg_gram_kernel = -1;

ocal_status ocal_lobpcg_options_init(ocal_lobpcg_options *options) {
  if (options == NULL) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "options is NULL");
  memset(options, 0, sizeof *options);
  options->struct_size = sizeof *options;
  options->max_iter = 20;
  options->restart_control = 20;
  return OCAL_OK;
}

#ifndef OCAL_HAVE_LAPACKE

ocal_status ocal_lobpcg(const ocal_operator *a, ocal_buffer x,
                        const ocal_lobpcg_options *options, double *eigenvalues,
                        double *residual_norms, ocal_lobpcg_result *result) {
  (void)a, (void)x, (void)eigenvalues, (void)residual_norms, (void)options, (void)result;
  return OCAL_FAIL(OCAL_UNSUPPORTED,
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
} lob;
#define OWN_MAX_K 16
/* lobpcg_gram's work-group (GRAM_WG in cl/sparse_solve.cl): a device that allows fewer items
 * (OCAL_LIMITS=max_work_group=64, say) takes ocal_gemm for the Gram blocks instead. */
#define GRAM_WG 128

#define CK(expr)                          \
  do {                                    \
    if ((s = (expr)) != OCAL_OK) goto done; \
  } while (0)

static double prof_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Every device call of this file goes through these counters (ocal__lobpcg_prof), so that
 * the per-iteration overhead can be read off a run. */
#define PROF(cnt, sec, expr)                  \
  ({                                          \
    double t0_ = prof_now();                  \
    ocal_status s_ = (expr);                  \
    ocal__lobpcg_prof.cnt++;                  \
    ocal__lobpcg_prof.sec += prof_now() - t0_; \
    s_;                                       \
  })
#define ocal_gemm(...) PROF(gemm, gemm_s, (ocal_gemm)(__VA_ARGS__))
#define ocal_buffer_read(...) PROF(reads, reads_s, (ocal_buffer_read)(__VA_ARGS__))
/* A blocking read of lob L: afterwards the upload workspace is free again. */
#define read_sync(L, ...) (((L)->ws_used = 0), ocal_buffer_read(__VA_ARGS__))
#define ocal_buffer_from_host(...) PROF(uploads, uploads_s, (ocal_buffer_from_host)(__VA_ARGS__))
#define ocal_buffer_create(...) PROF(allocs, allocs_s, (ocal_buffer_create)(__VA_ARGS__))
#define ocal_buffer_copy(...) PROF(copies, copies_s, (ocal_buffer_copy)(__VA_ARGS__))
#define ocal_dot(...) PROF(reduces, reduces_s, (ocal_dot)(__VA_ARGS__))
#define ocal_amax(...) PROF(reduces, reduces_s, (ocal_amax)(__VA_ARGS__))

/* Whether the LOBPCG kernels run (L->own, unless a test overrides it). */
static int own_kernels(const lob *L) {
  return ocal__lobpcg_gram_kernel >= 0 ? ocal__lobpcg_gram_kernel : L->own;
}

/* G = X^T Y into the {a, b} buffer gb: the dedicated kernel of cl/sparse_solve.cl for
 * small blocks (L->own), else ocal_gemm; ocal__lobpcg_gram_kernel (0 or 1) overrides that
 * for tests. */
static ocal_status gram_into(lob *L, ocal_buffer xb, size_t a, ocal_buffer yb, size_t b,
                             ocal_buffer gb) {
  int own = own_kernels(L);
  if (!own) return ocal_gemm(OCAL_TRANS, OCAL_NO_TRANS, 1.0, xb, yb, 0.0, gb);
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
  double t0 = prof_now();
  s = ocal__kernel_run_nd(L->ctx, k, 1, &global, &local, 9, args, L->func);
  ocal__lobpcg_prof.gemm++;
  ocal__lobpcg_prof.gemm_s += prof_now() - t0;
  return s;
}

/* Y = alpha X C + beta Y for a small C {a, b}: the dedicated kernel (lobpcg_times) where
 * gram_into uses its own, else ocal_gemm. */
static ocal_status small_gemm(lob *L, double alpha, ocal_buffer xb, ocal_buffer cb, double beta,
                              ocal_buffer yb) {
  int own = own_kernels(L);
  if (!own) return ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, alpha, xb, cb, beta, yb);
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
  double t0 = prof_now();
  s = ocal__kernel_run(L->ctx, k, L->n * bb, 11, args);
  ocal__lobpcg_prof.gemm++;
  ocal__lobpcg_prof.gemm_s += prof_now() - t0;
  return s;
}

static ocal_status blk(lob *L, size_t m, ocal_buffer *out) {
  size_t shape[2] = {L->n, m};
  return ocal_buffer_create(L->ctx, L->vt, 2, shape, out);
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
  if (s == OCAL_OK) s = PROF(applies, applies_s, op->apply(op->user, xb, y));
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
  ocal_status s = ocal_buffer_create(L->ctx, L->vt, 2, shape, &gb);
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
    ocal_status s = PROF(uploads, uploads_s, ocal_buffer_write(L->ws, L->ws_used, n, h, &ev));
    if (s != OCAL_OK) return s;
    ocal_event_release(ev);
    s = ocal_buffer_view(L->ws, L->ws_used, 2, shape, out);
    if (s == OCAL_OK) L->ws_used += n;
    return s;
  }
  if (L->vt == OCAL_F64) return ocal_buffer_from_host(L->ctx, OCAL_F64, 2, shape, c, out);
  float *f = malloc(n * sizeof *f);
  if (f == NULL) return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, "ocal_lobpcg", "no host memory");
  for (size_t i = 0; i < n; i++) f[i] = (float)c[i];
  ocal_status s = ocal_buffer_from_host(L->ctx, OCAL_F32, 2, shape, f, out);
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
  ocal_status s = ocal_buffer_create(L->ctx, L->vt, 1, &m, &r);
  if (s != OCAL_OK) return s;
  s = max ? ocal_amax(xb, 0, r) : ocal_dot(xb, xb, 0, r);
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
  CK(ocal_buffer_create(L->ctx, L->vt, 1, &tot, &r));
  CK(ocal_buffer_view(r, 0, 1, &m, &rv));
  CK(ocal_buffer_view(r, m, 2, gshape, &gv));
  CK(max ? ocal_amax(v, 0, rv) : ocal_dot(v, v, 0, rv));
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
  CK(ocal_buffer_copy(ax, r));
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

ocal_status ocal_lobpcg(const ocal_operator *a, ocal_buffer x,
                        const ocal_lobpcg_options *options, double *eigenvalues,
                        double *residual_norms, ocal_lobpcg_result *result) {
  const char *func = __func__;
  ocal_status s = ocal__check_operator(a, "A", func);
  if (s == OCAL_OK) s = ocal__check_buffer(x, func);
  if (s != OCAL_OK) return s;
  if (eigenvalues == NULL) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "eigenvalues is NULL");
  ocal_lobpcg_options o;
  ocal_lobpcg_options_init(&o);
  if (options) {
    if (options->struct_size < offsetof(ocal_lobpcg_options, largest) + sizeof(int) ||
        options->struct_size > sizeof o)
      return OCAL_FAIL(OCAL_INVALID_ARGUMENT,
                       "options->struct_size is %zu; start from ocal_lobpcg_options_init",
                       options->struct_size);
    memcpy(&o, options, options->struct_size);
  }
  lob L = {x->ctx, a->dtype, a->n, a, o.b, o.m, func};
  size_t n = a->n;
  if (x->dtype != a->dtype)
    return OCAL_FAIL(OCAL_TYPE_MISMATCH, "the operator takes %s but x is %s",
                     ocal_dtype_name(a->dtype), ocal_dtype_name(x->dtype));
  if (x->ndim != 2 || x->shape[0] != n || x->shape[1] == 0)
    return OCAL_FAIL(OCAL_SHAPE_MISMATCH,
                     "x must be a {n, k} block with n = %zu (the operator's size) and k >= 1",
                     n);
  size_t k = x->shape[1];
  L.own = k <= OWN_MAX_K && ocal__context_info(x->ctx)->max_work_item_sizes[0] >= GRAM_WG;
  if (o.b && (s = ocal__check_operator(o.b, "B", func)) != OCAL_OK) return s;
  if (o.m && (s = ocal__check_operator(o.m, "M", func)) != OCAL_OK) return s;
  if ((o.b && (o.b->n != n || o.b->dtype != a->dtype)) ||
      (o.m && (o.m->n != n || o.m->dtype != a->dtype)))
    return OCAL_FAIL(OCAL_TYPE_MISMATCH,
                     "B and M must have A's size (%zu) and type (%s)", n, ocal_dtype_name(a->dtype));
  size_t nj = 0;
  if (o.y) {
    if ((s = ocal__check_buffer(o.y, func)) != OCAL_OK) return s;
    if (o.y->ctx != x->ctx || o.y->dtype != a->dtype || o.y->ndim != 2 || o.y->shape[0] != n ||
        o.y->shape[1] == 0)
      return OCAL_FAIL(OCAL_SHAPE_MISMATCH,
                       "constraints y must be a {%zu, j} block of %s in x's context", n,
                       ocal_dtype_name(a->dtype));
    nj = o.y->shape[1];
  }
  if (nj >= n || n - nj < 5 * k)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT,
                     "k = %zu eigenpairs is too many for n = %zu%s: LOBPCG needs n - j >= 5 k "
                     "(as SciPy's iterations do); use a dense eigensolver for so small a problem",
                     k, n, nj ? " with j constraints" : "");
  if (o.max_iter == 0) o.max_iter = 20;
  double eps = a->dtype == OCAL_F32 ? FLT_EPSILON : DBL_EPSILON;
  double tol = o.tol > 0 ? o.tol : sqrt(eps) * (double)n;
  int hasb = o.b != NULL;

  ocal_buffer X = NULL, AX = NULL, BX = NULL, P = NULL, AP = NULL, BP = NULL, R = NULL;
  ocal_buffer bestX = NULL, Y = o.y, BY = NULL, aR = NULL, aBR = NULL, aAR = NULL;
  ocal_buffer aP = NULL, aAP = NULL, aBP = NULL, pp = NULL, app = NULL, bpp = NULL, nx = NULL;
  ocal_buffer sel = NULL, cb = NULL, cxv = NULL, crv = NULL, cpv = NULL;
  gram_batch gbat;
  memset(&gbat, 0, sizeof gbat);
  size_t maxn = 3 * k;
  double *lambda = calloc(k, sizeof *lambda), *res = calloc(k, sizeof *res);
  double *ga = calloc(maxn * maxn, sizeof(double)), *gb = calloc(maxn * maxn, sizeof(double));
  double *w = calloc(maxn, sizeof(double)), *c = calloc(maxn * k, sizeof(double));
  double *t = calloc(k * k, sizeof(double)), *ybyf = NULL;
  double *gXAR = calloc(k * k, 8), *gRAR = calloc(k * k, 8), *gXAX = calloc(k * k, 8);
  double *gXBX = calloc(k * k, 8), *gRBR = calloc(k * k, 8), *gXBR = calloc(k * k, 8);
  double *gXAP = calloc(k * k, 8), *gRAP = calloc(k * k, 8), *gPAP = calloc(k * k, 8);
  double *gXBP = calloc(k * k, 8), *gRBP = calloc(k * k, 8), *gPBP = calloc(k * k, 8);
  double *gXRall = calloc(k * k, 8);
  int *mask = calloc(k, sizeof *mask);
  size_t iter = 0, best_iter = 0;
  long it = -1;
  int failed = 0;
  if (!lambda || !res || !ga || !gb || !w || !c || !t || !gXAR || !gRAR || !gXAX || !gXBX ||
      !gRBR || !gXBR || !gXAP || !gRAP || !gPAP || !gXBP || !gRBP || !gPBP || !mask ||
      !gXRall) {
    s = OCAL_FAIL(OCAL_OUT_OF_HOST_MEMORY, "no host memory for the Rayleigh-Ritz matrices");
    goto done;
  }

  /* The initial block: the caller's, or uniform random numbers in [-1, 1). */
  CK(blk(&L, k, &X));
  if (o.use_x0)
    CK(ocal_buffer_copy(x, X));
  else
    CK(ocal_random_uniform(o.seed, 0, -1.0, 1.0, X));

  /* Constraints: the Cholesky factor of Y^T B Y, and X made B-orthogonal to Y. */
  if (Y) {
    BY = Y;
    if (hasb) CK(apply(&L, o.b, Y, nj, &BY));
    ybyf = malloc(nj * nj * sizeof *ybyf);
    if (ybyf == NULL) {
      s = OCAL_FAIL(OCAL_OUT_OF_HOST_MEMORY, "no host memory");
      goto done;
    }
    CK(gram(&L, Y, nj, BY, nj, ybyf));
    if (LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'U', (lapack_int)nj, ybyf, (lapack_int)nj) != 0) {
      s = OCAL_FAIL(OCAL_INVALID_ARGUMENT, "the constraints (columns of y) are linearly dependent");
      goto done;
    }
    for (size_t i = 0; i < nj; i++)
      for (size_t j = 0; j < i; j++) ybyf[i * nj + j] = 0;
    CK(apply_constraints(&L, X, k, Y, BY, nj, ybyf));
  }
  int ok;
  CK(b_orthonormalize(&L, &X, &BX, 0, k, t, &ok));
  if (!ok) {
    s = OCAL_FAIL(OCAL_INVALID_ARGUMENT,
                  "the initial block's columns are linearly dependent (B-orthonormalisation by "
                  "Cholesky failed)");
    goto done;
  }
  CK(apply(&L, a, X, k, &AX));
  CK(gram(&L, X, k, AX, k, ga));
  if (eigh(k, ga, NULL, w)) {
    s = OCAL_FAIL(OCAL_INTERNAL, "the initial Rayleigh-Ritz eigenproblem failed in LAPACK");
    goto done;
  }
  for (size_t i = 0; i < k; i++) {
    size_t p = pick(k, o.largest, i);
    lambda[i] = w[p];
    for (size_t r = 0; r < k; r++) c[r * k + i] = ga[r * k + p];
  }
  CK(times(&L, X, c, k, k, &nx));
  replace(&X, nx);
  CK(times(&L, AX, c, k, k, &nx));
  replace(&AX, nx);
  if (hasb) {
    CK(times(&L, BX, c, k, k, &nx));
    replace(&BX, nx);
  }
  nx = NULL;
  for (size_t i = 0; i < k; i++) mask[i] = 1;
  double smallest = DBL_MAX;
  int restart = 1, forced = 0, explicit_gram = 0;
  CK(blk(&L, k, &bestX));
  {
    size_t gshape = 12 * k * k;
    CK(ocal_buffer_create(L.ctx, L.vt, 1, &gshape, &gbat.buf));
    /* Between two blocking reads a step uploads at most the coefficients (3k x k), a
     * selection, a T factor and a residual diagonal: 16 k^2 is ample. */
    L.ws_cap = 16 * k * k + 16;
    L.wsh = malloc(L.ws_cap * ocal_dtype_size(L.vt));
    if (L.wsh == NULL) {
      s = OCAL_FAIL(OCAL_OUT_OF_HOST_MEMORY, "no host memory");
      goto done;
    }
    CK(ocal_buffer_create(L.ctx, L.vt, 1, &L.ws_cap, &L.ws));
  }
  size_t m = k;

  while (it < (long)o.max_iter) {
    it++;
    ocal__lobpcg_prof.iterations++;
    replace(&R, NULL);
    /* With the LOBPCG kernels and neither preconditioner nor constraints, (BX)^T R comes
     * back with the residual norms: each Gram element is summed on its own in a fixed
     * order, and selecting R's active columns is exact, so the columns of this product are
     * bit for bit those of (BX)^T R_active below, one blocking read earlier. */
    int early = own_kernels(&L) && !o.m && !Y;
    CK(residuals(&L, AX, hasb ? BX : X, lambda, k, &R, res, early ? (hasb ? BX : X) : NULL,
                 gXRall));
    double rnorm = 0, rmax = 0;
    for (size_t i = 0; i < k; i++) {
      rnorm += res[i];
      rmax = fmax(rmax, res[i]);
    }
    rnorm /= (double)k;
    if (rnorm < smallest) {
      smallest = rnorm;
      best_iter = (size_t)it;
      CK(ocal_buffer_copy(X, bestX));
    } else if (rnorm > ldexp(1.0, o.restart_control) * smallest) {
      forced = 1;
      replace(&AX, NULL);
      CK(apply(&L, a, X, k, &AX));
      if (hasb) {
        replace(&BX, NULL);
        CK(apply(&L, o.b, X, k, &BX));
      }
    }
    m = 0;
    for (size_t i = 0; i < k; i++) {
      mask[i] = mask[i] && res[i] > tol;
      m += (size_t)mask[i];
    }
    if (m == 0) break;

    replace(&aR, NULL);
    replace(&sel, NULL);
    CK(selection(&L, mask, k, m, &sel));
    CK(times_dev(&L, R, sel, m, &aR));
    if (it > 0) {
      replace(&aP, NULL);
      replace(&aAP, NULL);
      replace(&aBP, NULL);
      CK(times_dev(&L, P, sel, m, &aP));
      CK(times_dev(&L, AP, sel, m, &aAP));
      if (hasb) CK(times_dev(&L, BP, sel, m, &aBP));
    }
    if (o.m) {
      CK(apply(&L, o.m, aR, m, &nx));
      replace(&aR, nx);
      nx = NULL;
    }
    if (Y) CK(apply_constraints(&L, aR, m, Y, BY, nj, ybyf));
    /* B-orthogonalise the residuals to X: R -= X (BX^T R). */
    if (early) {
      for (size_t i = 0; i < k; i++)
        for (size_t q = 0, col = 0; q < k; q++)
          if (mask[q]) gXBR[i * m + col++] = gXRall[i * k + q];
    } else {
      CK(gram(&L, hasb ? BX : X, k, aR, m, gXBR));
    }
    CK(mul_small(&L, X, gXBR, k, m, -1.0, 1.0, aR));
    replace(&aBR, NULL);
    CK(b_orthonormalize(&L, &aR, &aBR, 0, m, t, &ok));
    if (!ok) {
      failed = 1; /* SciPy: "Failed at iteration ... with accuracies ..." and stops */
      break;
    }
    replace(&aAR, NULL);
    CK(apply(&L, a, aR, m, &aAR));
    if (it > 0) {
      CK(b_orthonormalize(&L, &aP, &aBP, 1, m, t, &ok));
      if (ok) {
        CK(times(&L, aAP, t, m, m, &nx));
        replace(&aAP, nx);
        nx = NULL;
        restart = forced;
      } else {
        restart = 1;
      }
    }
    double myeps = a->dtype == OCAL_F32 ? 1.0 : sqrt(DBL_EPSILON);
    explicit_gram = !(rmax > myeps && !explicit_gram);

    ocal_buffer bxv = hasb ? BX : X, brv = hasb ? aBR : aR, bpv = hasb ? aBP : aP;
    CK(batch_gram(&L, &gbat, X, k, aAR, m, gXAR));
    CK(batch_gram(&L, &gbat, aR, m, aAR, m, gRAR));
    if (explicit_gram) {
      CK(batch_gram(&L, &gbat, X, k, AX, k, gXAX));
      CK(batch_gram(&L, &gbat, X, k, bxv, k, gXBX));
      CK(batch_gram(&L, &gbat, aR, m, brv, m, gRBR));
      CK(batch_gram(&L, &gbat, X, k, brv, m, gXBR));
    } else {
      memset(gXAX, 0, k * k * 8);
      memset(gXBX, 0, k * k * 8);
      memset(gRBR, 0, m * m * 8);
      memset(gXBR, 0, k * m * 8);
      for (size_t i = 0; i < k; i++) {
        gXAX[i * k + i] = lambda[i];
        gXBX[i * k + i] = 1;
      }
      for (size_t i = 0; i < m; i++) gRBR[i * m + i] = 1;
    }
    size_t nn = 0;
    if (!restart) {
      CK(batch_gram(&L, &gbat, X, k, aAP, m, gXAP));
      CK(batch_gram(&L, &gbat, aR, m, aAP, m, gRAP));
      CK(batch_gram(&L, &gbat, aP, m, aAP, m, gPAP));
      CK(batch_gram(&L, &gbat, X, k, bpv, m, gXBP));
      CK(batch_gram(&L, &gbat, aR, m, bpv, m, gRBP));
      if (explicit_gram) CK(batch_gram(&L, &gbat, aP, m, bpv, m, gPBP));
    }
    CK(batch_read(&L, &gbat));
    if (explicit_gram) {
      symmetrise(gRAR, m);
      symmetrise(gXAX, k);
      symmetrise(gXBX, k);
      symmetrise(gRBR, m);
    }
    if (!restart) {
      if (explicit_gram) {
        symmetrise(gPAP, m);
        symmetrise(gPBP, m);
      } else {
        memset(gPBP, 0, m * m * 8);
        for (size_t i = 0; i < m; i++) gPBP[i * m + i] = 1;
      }
      nn = k + 2 * m;
      put(ga, nn, 0, 0, gXAX, k, k, 0);
      put(ga, nn, 0, k, gXAR, k, m, 0);
      put(ga, nn, 0, k + m, gXAP, k, m, 0);
      put(ga, nn, k, 0, gXAR, k, m, 1);
      put(ga, nn, k, k, gRAR, m, m, 0);
      put(ga, nn, k, k + m, gRAP, m, m, 0);
      put(ga, nn, k + m, 0, gXAP, k, m, 1);
      put(ga, nn, k + m, k, gRAP, m, m, 1);
      put(ga, nn, k + m, k + m, gPAP, m, m, 0);
      put(gb, nn, 0, 0, gXBX, k, k, 0);
      put(gb, nn, 0, k, gXBR, k, m, 0);
      put(gb, nn, 0, k + m, gXBP, k, m, 0);
      put(gb, nn, k, 0, gXBR, k, m, 1);
      put(gb, nn, k, k, gRBR, m, m, 0);
      put(gb, nn, k, k + m, gRBP, m, m, 0);
      put(gb, nn, k + m, 0, gXBP, k, m, 1);
      put(gb, nn, k + m, k, gRBP, m, m, 1);
      put(gb, nn, k + m, k + m, gPBP, m, m, 0);
      if (eigh(nn, ga, gb, w)) restart = 1; /* try again without P */
    }
    if (restart) {
      nn = k + m;
      put(ga, nn, 0, 0, gXAX, k, k, 0);
      put(ga, nn, 0, k, gXAR, k, m, 0);
      put(ga, nn, k, 0, gXAR, k, m, 1);
      put(ga, nn, k, k, gRAR, m, m, 0);
      put(gb, nn, 0, 0, gXBX, k, k, 0);
      put(gb, nn, 0, k, gXBR, k, m, 0);
      put(gb, nn, k, 0, gXBR, k, m, 1);
      put(gb, nn, k, k, gRBR, m, m, 0);
      if (eigh(nn, ga, gb, w)) {
        failed = 1; /* SciPy: "eigh failed at iteration ..." and stops */
        break;
      }
    }
    /* The wanted Ritz pairs: coefficients c (nn x k) of [X, R, P]. */
    for (size_t i = 0; i < k; i++) {
      size_t p = pick(nn, o.largest, i);
      lambda[i] = w[p];
      for (size_t r = 0; r < nn; r++) c[r * k + i] = ga[r * nn + p];
    }
    /* One upload of the coefficients; cx, cr and cp are bands of its rows. */
    replace(&cb, NULL);
    replace(&cxv, NULL);
    replace(&crv, NULL);
    replace(&cpv, NULL);
    CK(upload_small(&L, c, nn, k, &cb));
    CK(rows_view(cb, 0, k, k, &cxv));
    CK(rows_view(cb, k, m, k, &crv));
    if (!restart) CK(rows_view(cb, k + m, m, k, &cpv));
    replace(&pp, NULL);
    replace(&app, NULL);
    replace(&bpp, NULL);
    CK(times_dev(&L, aR, crv, k, &pp));
    CK(times_dev(&L, aAR, crv, k, &app));
    if (hasb) CK(times_dev(&L, aBR, crv, k, &bpp));
    if (!restart) {
      CK(small_gemm(&L, 1.0, aP, cpv, 1.0, pp));
      CK(small_gemm(&L, 1.0, aAP, cpv, 1.0, app));
      if (hasb) CK(small_gemm(&L, 1.0, aBP, cpv, 1.0, bpp));
    }
    /* X = X cx + pp, and the same for AX and BX; then P = pp. */
    CK(blk(&L, k, &nx));
    CK(ocal_buffer_copy(pp, nx));
    CK(small_gemm(&L, 1.0, X, cxv, 1.0, nx));
    replace(&X, nx);
    CK(blk(&L, k, &nx));
    CK(ocal_buffer_copy(app, nx));
    CK(small_gemm(&L, 1.0, AX, cxv, 1.0, nx));
    replace(&AX, nx);
    if (hasb) {
      CK(blk(&L, k, &nx));
      CK(ocal_buffer_copy(bpp, nx));
      CK(small_gemm(&L, 1.0, BX, cxv, 1.0, nx));
      replace(&BX, nx);
    }
    nx = NULL;
    replace(&P, pp);
    replace(&AP, app);
    replace(&BP, bpp);
    pp = app = bpp = NULL;
  }
  iter = it < 0 ? 0 : (size_t)it;
  if (!failed && m != 0) {
    /* The loop ran out: one more residual check of the last block (SciPy does it too). */
    replace(&R, NULL);
    CK(residuals(&L, AX, hasb ? BX : X, lambda, k, &R, res, NULL, NULL));
    double rnorm = 0;
    for (size_t i = 0; i < k; i++) rnorm += res[i];
    rnorm /= (double)k;
    if (rnorm < smallest) {
      smallest = rnorm;
      best_iter = (size_t)it + 1;
      CK(ocal_buffer_copy(X, bestX));
    }
  }

  /* The best block, made to satisfy the constraints exactly, and a final Rayleigh-Ritz step
   * with explicit symmetrised Gram matrices. */
  replace(&X, bestX);
  bestX = NULL;
  if (Y) CK(apply_constraints(&L, X, k, Y, BY, nj, ybyf));
  replace(&AX, NULL);
  CK(apply(&L, a, X, k, &AX));
  if (hasb) {
    replace(&BX, NULL);
    CK(apply(&L, o.b, X, k, &BX));
  }
  CK(gram(&L, X, k, AX, k, ga));
  CK(gram(&L, X, k, hasb ? BX : X, k, gb));
  symmetrise(ga, k);
  symmetrise(gb, k);
  if (eigh(k, ga, gb, w)) {
    s = OCAL_FAIL(OCAL_NOT_CONVERGED, "the final Rayleigh-Ritz eigenproblem failed in LAPACK "
                                     "(the block lost B-orthogonality)");
    goto done;
  }
  for (size_t i = 0; i < k; i++) {
    size_t p = pick(k, o.largest, i);
    lambda[i] = w[p];
    for (size_t r = 0; r < k; r++) c[r * k + i] = ga[r * k + p];
  }
  CK(times(&L, X, c, k, k, &nx));
  replace(&X, nx);
  CK(times(&L, AX, c, k, k, &nx));
  replace(&AX, nx);
  if (hasb) {
    CK(times(&L, BX, c, k, k, &nx));
    replace(&BX, nx);
  }
  nx = NULL;
  replace(&R, NULL);
  CK(residuals(&L, AX, hasb ? BX : X, lambda, k, &R, res, NULL, NULL));
  CK(ocal_buffer_copy(X, x));
  size_t conv = 0;
  double rmax = 0;
  for (size_t i = 0; i < k; i++) {
    eigenvalues[i] = lambda[i];
    if (residual_norms) residual_norms[i] = res[i];
    conv += res[i] <= tol;
    rmax = fmax(rmax, res[i]);
  }
  if (result) {
    result->iterations = iter;
    result->best_iteration = best_iter;
    result->converged = conv;
    result->tolerance = tol;
    result->max_residual = rmax;
  }
  if (conv < k)
    s = OCAL_FAIL(OCAL_NOT_CONVERGED,
                  "%zu of %zu eigenpairs within the tolerance %g after %zu iterations%s (largest "
                  "residual norm %g); x and eigenvalues hold the best block found",
                  conv, k, tol, iter,
                  failed ? ", stopped early because the Rayleigh-Ritz basis lost its rank" : "",
                  rmax);
done:
  ocal_buffer_release(X);
  ocal_buffer_release(AX);
  ocal_buffer_release(BX);
  ocal_buffer_release(P);
  ocal_buffer_release(AP);
  ocal_buffer_release(BP);
  ocal_buffer_release(R);
  ocal_buffer_release(bestX);
  if (BY != Y) ocal_buffer_release(BY);
  ocal_buffer_release(aR);
  ocal_buffer_release(aBR);
  ocal_buffer_release(aAR);
  ocal_buffer_release(aP);
  ocal_buffer_release(aAP);
  ocal_buffer_release(aBP);
  ocal_buffer_release(pp);
  ocal_buffer_release(app);
  ocal_buffer_release(bpp);
  ocal_buffer_release(nx);
  ocal_buffer_release(sel);
  ocal_buffer_release(gbat.buf);
  /* Pending uploads read the host arena: let them finish before it goes. */
  if (L.ws) ocal_context_finish(L.ctx);
  ocal_buffer_release(L.ws);
  free(L.wsh);
  ocal_buffer_release(cxv);
  ocal_buffer_release(crv);
  ocal_buffer_release(cpv);
  ocal_buffer_release(cb);
  free(lambda); free(res); free(ga); free(gb); free(w); free(c); free(t); free(ybyf);
  free(gXAR); free(gRAR); free(gXAX); free(gXBX); free(gRBR); free(gXBR);
  free(gXAP); free(gRAP); free(gPAP); free(gXBP); free(gRBP); free(gPBP); free(mask);
  free(gXRall);
  return s;
}

#endif /* OCAL_HAVE_LAPACKE */
