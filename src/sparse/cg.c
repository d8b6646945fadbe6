/* ocal — conjugate gradients on the device. The operator, ocal's dot products (results kept
 * on the device) and the fused updates of cl/sparse_solve.cl run back to back on the queue;
 * the host reads four scalars once per iteration for the stopping test. */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "sparse_internal.h"

ocal_status ocal_cg_options_init(ocal_cg_options *options) {
  if (options == NULL) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "options is NULL");
  memset(options, 0, sizeof *options);
  options->struct_size = sizeof *options;
  options->rtol = 1e-5;
  options->atol = 0.0;
  options->max_iter = 0;
  options->precond = OCAL_PRECOND_NONE;
  return OCAL_OK;
}

/* Runs a kernel of cl/sparse_solve.cl for ocal_cg (which its messages name). */
static ocal_status run_kernel(ocal_context ctx, ocal_dtype vt, const char *name, size_t n,
                              size_t nargs, const ocal__arg *args) {
  char opt[96];
  ocal__dtype_options(vt, opt, sizeof opt);
  ocal__kernel *k;
  ocal_status s = ocal__library_kernel_from(ctx, "sparse_solve", opt, name, &k, NULL, "ocal_cg");
  if (s != OCAL_OK) return s;
  return ocal__kernel_run(ctx, k, n, nargs, args, "ocal_cg");
}

/* Applies the operator to a vector through {n, 1} views, as the operator contract says. */
static ocal_status apply_vec(const ocal_operator *a, ocal_buffer x, ocal_buffer y) {
  size_t shape[2] = {a->n, 1};
  ocal_buffer xv = NULL, yv = NULL;
  ocal_status s = ocal_buffer_view(x, 0, 2, shape, &xv);
  if (s == OCAL_OK) s = ocal_buffer_view(y, 0, 2, shape, &yv);
  if (s == OCAL_OK) s = ocal__operator_apply(a, xv, yv, "ocal_cg");
  ocal_buffer_release(xv);
  ocal_buffer_release(yv);
  return s;
}

static double host_value(ocal_dtype vt, const void *p, size_t i) {
  return vt == OCAL_F32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

/* The vectors and scalars of one solve. Slots of sc: rz alternates between 0 and 2 (old and
 * new), 1 is p.q, 3 is r.r. */
typedef struct cg_state {
  ocal_context ctx;
  ocal_dtype vt;
  size_t n;
  const ocal_operator *a;
  ocal_buffer b, x, r, p, q, z, dinv, sc, sv[4];
  int jacobi;
} cg_state;

/* z = r / diag(A) (Jacobi; without a preconditioner z is r). */
static ocal_status precondition(cg_state *c) {
  if (!c->jacobi) return OCAL_OK;
  cl_ulong nn = c->n, o0 = 0;
  ocal__arg args[] = {OCAL__ARG(nn), OCAL__ARG(c->z->mem), OCAL__ARG(o0), OCAL__ARG(c->r->mem),
                      OCAL__ARG(o0), OCAL__ARG(c->dinv->mem), OCAL__ARG(o0)};
  return run_kernel(c->ctx, c->vt, "cg_jacobi", c->n, 7, args);
}

/* Starts a search from the residual in r: z = M r, r.z into slot `slot`, r.r into slot 3,
 * p = z. Reads back and returns ||r||^2 and r.z. */
static ocal_status start_search(cg_state *c, cl_uint slot, double *rr, double *rz) {
  unsigned char h[32];
  ocal_status s = precondition(c);
  if (s == OCAL_OK) s = ocal_dot(c->r, c->z, OCAL_AXIS_ALL, c->sv[slot]);
  if (s == OCAL_OK && c->jacobi) s = ocal_dot(c->r, c->r, OCAL_AXIS_ALL, c->sv[3]);
  if (s == OCAL_OK) s = ocal_buffer_read(c->sc, 0, 4, h, NULL);
  if (s != OCAL_OK) return s;
  *rz = host_value(c->vt, h, slot);
  *rr = host_value(c->vt, h, c->jacobi ? 3 : slot);
  cl_ulong nn = c->n, zo = 0;
  cl_uint u0 = 0;
  int first = 1;
  ocal__arg args[] = {OCAL__ARG(nn), OCAL__ARG(c->p->mem), OCAL__ARG(zo), OCAL__ARG(c->z->mem),
                      OCAL__ARG(zo), OCAL__ARG(c->sc->mem), OCAL__ARG(zo), OCAL__ARG(u0),
                      OCAL__ARG(u0), OCAL__ARG(first)};
  return run_kernel(c->ctx, c->vt, "cg_update_p", c->n, 10, args);
}

/* r = b - A x, computed afresh (one product with A), and its norm: the residual the
 * recurrence only approximates. */
static ocal_status true_residual(cg_state *c, double *norm) {
  unsigned char h[8];
  ocal_status s = apply_vec(c->a, c->x, c->q);
  if (s == OCAL_OK) s = ocal_buffer_copy(c->b, c->r);
  if (s == OCAL_OK) s = ocal_axpy(-1.0, c->q, c->r);
  if (s == OCAL_OK) s = ocal_dot(c->r, c->r, OCAL_AXIS_ALL, c->sv[3]);
  if (s == OCAL_OK) s = ocal_buffer_read(c->sc, 3, 1, h, NULL);
  if (s == OCAL_OK) *norm = sqrt(fabs(host_value(c->vt, h, 0)));
  return s;
}

/* One CG step: q = A p, x += alpha p, r -= alpha q, z = M r, r.z into slot nxt. Returns p.q,
 * the new r.z and ||r||^2 as the recurrence has them. */
static ocal_status cg_step(cg_state *c, cl_uint cur, cl_uint nxt, double *pq, double *rz,
                           double *rr) {
  unsigned char h[32];
  ocal_status s = apply_vec(c->a, c->p, c->q);
  if (s == OCAL_OK) s = ocal_dot(c->p, c->q, OCAL_AXIS_ALL, c->sv[1]);
  if (s != OCAL_OK) return s;
  cl_ulong nn = c->n, o0 = 0, xo = c->x->offset;
  cl_uint i1 = 1;
  ocal__arg args[] = {OCAL__ARG(nn),        OCAL__ARG(c->x->mem), OCAL__ARG(xo),
                      OCAL__ARG(c->r->mem), OCAL__ARG(o0),        OCAL__ARG(c->p->mem),
                      OCAL__ARG(o0),        OCAL__ARG(c->q->mem), OCAL__ARG(o0),
                      OCAL__ARG(c->sc->mem), OCAL__ARG(o0),       OCAL__ARG(cur),
                      OCAL__ARG(i1)};
  s = run_kernel(c->ctx, c->vt, "cg_update_xr", c->n, 13, args);
  if (s == OCAL_OK) s = precondition(c);
  if (s == OCAL_OK && c->jacobi) s = ocal_dot(c->r, c->r, OCAL_AXIS_ALL, c->sv[3]);
  if (s == OCAL_OK) s = ocal_dot(c->r, c->z, OCAL_AXIS_ALL, c->sv[nxt]);
  if (s == OCAL_OK) s = ocal_buffer_read(c->sc, 0, 4, h, NULL);
  if (s != OCAL_OK) return s;
  *pq = host_value(c->vt, h, 1);
  *rz = host_value(c->vt, h, nxt);
  *rr = host_value(c->vt, h, c->jacobi ? 3 : nxt);
  return OCAL_OK;
}

/* p = z + (r.z new / r.z old) p. */
static ocal_status next_direction(cg_state *c, cl_uint cur, cl_uint nxt) {
  cl_ulong nn = c->n, o0 = 0;
  int first = 0;
  ocal__arg args[] = {OCAL__ARG(nn),  OCAL__ARG(c->p->mem), OCAL__ARG(o0), OCAL__ARG(c->z->mem),
                      OCAL__ARG(o0),  OCAL__ARG(c->sc->mem), OCAL__ARG(o0), OCAL__ARG(nxt),
                      OCAL__ARG(cur), OCAL__ARG(first)};
  return run_kernel(c->ctx, c->vt, "cg_update_p", c->n, 10, args);
}

ocal_status ocal_cg(const ocal_operator *a, ocal_buffer b, ocal_buffer x,
                    const ocal_cg_options *options, ocal_cg_result *result) {
  const char *func = __func__;
  ocal_status s = ocal__check_operator(a, "A", func);
  if (s == OCAL_OK) s = ocal__check_buffer_arg(b, "b", func);
  if (s == OCAL_OK) s = ocal__check_buffer_arg(x, "x", func);
  if (s == OCAL_OK)
    s = ocal__filled_check(func, "result", "ocal_cg_result", result, sizeof *result, sizeof *result);
  if (s != OCAL_OK) return s;
  ocal_cg_options o;
  ocal_cg_options_init(&o);
  if (options) {
    if (options->struct_size < offsetof(ocal_cg_options, rtol) + sizeof(double) ||
        options->struct_size > sizeof o)
      return OCAL_FAIL(OCAL_INVALID_ARGUMENT,
                       "options->struct_size is %zu; start from ocal_cg_options_init",
                       options->struct_size);
    memcpy(&o, options, options->struct_size);
  }
  ocal_context ctx = b->ctx;
  ocal_dtype vt = a->dtype;
  size_t n = a->n;
  if (x->ctx != ctx) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "b and x belong to different contexts");
  if (b->dtype != vt || x->dtype != vt)
    return OCAL_FAIL(OCAL_TYPE_MISMATCH, "the operator takes %s but b is %s and x is %s",
                     ocal_dtype_name(vt), ocal_dtype_name(b->dtype), ocal_dtype_name(x->dtype));
  if (b->numel != n || x->numel != n)
    return OCAL_FAIL(OCAL_SHAPE_MISMATCH,
                     "the operator is %zu x %zu but b has %zu elements and x %zu", n, n,
                     b->numel, x->numel);
  /* x is written from the first step on, while b is still read (r = b - A x). */
  if (ocal__buffers_overlap(b, x))
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT,
                     "b and x overlap (%s): pass x in a buffer of its own, with the initial "
                     "guess copied there",
                     b == x ? "the same buffer" : "views of one buffer");
  if (!(o.rtol >= 0) || !(o.atol >= 0))
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "rtol %g and atol %g must be >= 0", o.rtol, o.atol);
  if (o.precond != OCAL_PRECOND_NONE && o.precond != OCAL_PRECOND_JACOBI)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "precond is %d; use OCAL_PRECOND_NONE or _JACOBI",
                     (int)o.precond);
  if (o.use_x0 != 0 && o.use_x0 != 1)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT,
                     "use_x0 is %d; use 1 (x holds the initial guess) or 0 (start from 0)",
                     o.use_x0);
  int jacobi = o.precond == OCAL_PRECOND_JACOBI;
  if (jacobi && o.diagonal == NULL && a->csr == NULL)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT,
                     "the Jacobi preconditioner needs the diagonal: set options.diagonal, or "
                     "make the operator with ocal_operator_from_csr");
  if (jacobi && o.diagonal) {
    if ((s = ocal__check_buffer_arg(o.diagonal, "options->diagonal", func)) != OCAL_OK) return s;
    if (o.diagonal->ctx != ctx || o.diagonal->dtype != vt || o.diagonal->numel != n)
      return OCAL_FAIL(OCAL_INVALID_ARGUMENT,
                       "options.diagonal must be %zu elements of %s in b's context", n,
                       ocal_dtype_name(vt));
  }
  size_t max_iter = o.max_iter ? o.max_iter : 10 * n;

  cg_state c = {ctx, vt, n, a, b, x, NULL, NULL, NULL, NULL, NULL, NULL, {0}, jacobi};
  ocal_buffer bad = NULL, diag = NULL;
  size_t one = 1, four = 4;
  unsigned char host_s[8];
  size_t it = 0, restarts = 0;
  double rr = 0, rz = 0, bnorm = 0, tol = 0, true_norm = NAN;
  int converged = 0;
  if ((s = ocal_buffer_create(ctx, vt, 1, &n, &c.r)) != OCAL_OK) goto done;
  if ((s = ocal_buffer_create(ctx, vt, 1, &n, &c.p)) != OCAL_OK) goto done;
  if ((s = ocal_buffer_create(ctx, vt, 1, &n, &c.q)) != OCAL_OK) goto done;
  if ((s = ocal_buffer_zeros(ctx, vt, 1, &four, &c.sc)) != OCAL_OK) goto done;
  for (size_t i = 0; i < 4; i++)
    if ((s = ocal_buffer_view(c.sc, i, 1, &one, &c.sv[i])) != OCAL_OK) goto done;
  if (jacobi) {
    if ((s = ocal_buffer_create(ctx, vt, 1, &n, &c.z)) != OCAL_OK) goto done;
    if ((s = ocal_buffer_create(ctx, vt, 1, &n, &c.dinv)) != OCAL_OK) goto done;
    if ((s = ocal_buffer_zeros(ctx, OCAL_I32, 1, &one, &bad)) != OCAL_OK) goto done;
    ocal_buffer d = o.diagonal;
    if (d == NULL) {
      if ((s = ocal_buffer_create(ctx, vt, 1, &n, &diag)) != OCAL_OK) goto done;
      if ((s = ocal_csr_diagonal(a->csr, diag)) != OCAL_OK) goto done;
      d = diag;
    }
    cl_ulong nn = n, doff = d->offset;
    ocal__arg args[] = {OCAL__ARG(nn), OCAL__ARG(c.dinv->mem), OCAL__ARG(d->mem),
                        OCAL__ARG(doff), OCAL__ARG(bad->mem)};
    if ((s = run_kernel(ctx, vt, "cg_invert_diag", n, 5, args)) != OCAL_OK) goto done;
    int32_t nbad = 0;
    if ((s = ocal_buffer_read(bad, 0, 1, &nbad, NULL)) != OCAL_OK) goto done;
    if (nbad > 0) {
      s = OCAL_FAIL(OCAL_NOT_CONVERGED,
                    "%d diagonal entries are zero or negative: A is not positive definite, "
                    "and the Jacobi preconditioner cannot be formed",
                    (int)nbad);
      goto done;
    }
  } else {
    c.z = c.r; /* no preconditioner: z is r */
  }

  /* ||b||, and r = b - A x0 (r = b when x0 = 0). */
  if ((s = ocal_dot(b, b, OCAL_AXIS_ALL, c.sv[3])) != OCAL_OK) goto done;
  if ((s = ocal_buffer_read(c.sc, 3, 1, host_s, NULL)) != OCAL_OK) goto done;
  bnorm = sqrt(host_value(vt, host_s, 0));
  tol = fmax(o.rtol * bnorm, o.atol);
  if (o.use_x0) {
    if ((s = apply_vec(a, x, c.q)) != OCAL_OK) goto done;
    if ((s = ocal_buffer_copy(b, c.r)) != OCAL_OK) goto done;
    if ((s = ocal_axpy(-1.0, c.q, c.r)) != OCAL_OK) goto done;
  } else {
    const double zero = 0;
    const float zf = 0;
    if ((s = ocal_buffer_fill(x, vt == OCAL_F32 ? (const void *)&zf : (const void *)&zero)) !=
        OCAL_OK)
      goto done;
    if ((s = ocal_buffer_copy(b, c.r)) != OCAL_OK) goto done;
  }
  cl_uint cur = 0, nxt = 2;
  if ((s = start_search(&c, cur, &rr, &rz)) != OCAL_OK) goto done;
  true_norm = sqrt(rr); /* r0 was computed from x0, not recurred */
  if (true_norm <= tol) {
    converged = 1;
    goto done;
  }
  while (it < max_iter) {
    it++;
    double pq;
    if ((s = cg_step(&c, cur, nxt, &pq, &rz, &rr)) != OCAL_OK) goto done;
    if (!(pq > 0)) {
      /* The step rz / pq has already moved x by a meaningless amount, so the last true
       * residual no longer describes the x returned. */
      true_norm = NAN;
      s = OCAL_FAIL(OCAL_NOT_CONVERGED,
                    "iteration %zu: p.Ap = %g <= 0: A is not positive definite (CG needs a "
                    "symmetric positive definite matrix)",
                    it, pq);
      goto done;
    }
    if (sqrt(rr) <= tol) {
      /* The recurrence drifts from b - A x by rounding, far on a badly scaled system:
       * only the residual computed afresh decides. */
      double last = true_norm;
      if ((s = true_residual(&c, &true_norm)) != OCAL_OK) goto done;
      if (true_norm <= tol) {
        converged = 1;
        break;
      }
      if (restarts > 0 && !(true_norm < 0.5 * last)) {
        s = OCAL_FAIL(OCAL_NOT_CONVERGED,
                      "iteration %zu: the recurrence residual %g meets the tolerance %g, but "
                      "the true residual ||b - A x|| is %g and restarting from it no longer "
                      "reduces it (%g before): the system is too badly scaled for %s "
                      "(scale A, b and x0 to similar magnitudes); x holds the last iterate",
                      it, sqrt(rr), tol, true_norm, last, ocal_dtype_name(vt));
        goto done;
      }
      /* Restart the recurrence from the true residual, now in r. */
      restarts++;
      if ((s = start_search(&c, nxt, &rr, &rz)) != OCAL_OK) goto done;
    } else {
      if (!(rz > 0)) {
        true_norm = NAN; /* x moved on since the last true residual was computed */
        s = OCAL_FAIL(OCAL_NOT_CONVERGED,
                      "iteration %zu: r.Mr = %g <= 0: the preconditioner is not positive "
                      "definite",
                      it, rz);
        goto done;
      }
      if ((s = next_direction(&c, cur, nxt)) != OCAL_OK) goto done;
    }
    cl_uint t = cur;
    cur = nxt;
    nxt = t;
  }
  if (!converged) {
    double rec = sqrt(rr);
    if ((s = true_residual(&c, &true_norm)) != OCAL_OK) goto done;
    s = OCAL_FAIL(OCAL_NOT_CONVERGED,
                  "no convergence in %zu iterations: the true residual ||b - A x|| is %g "
                  "(the recurrence's %g), the tolerance %g (max(rtol * ||b||, atol)); x holds "
                  "the last iterate",
                  it, true_norm, rec, tol);
  }
done:
  if (result) {
    result->iterations = it;
    result->residual_norm = sqrt(fabs(rr));
    result->true_residual_norm = true_norm;
    result->b_norm = bnorm;
    result->restarts = restarts;
    result->converged = converged;
  }
  for (size_t i = 0; i < 4; i++) ocal_buffer_release(c.sv[i]);
  ocal_buffer_release(c.sc);
  ocal_buffer_release(c.r);
  ocal_buffer_release(c.p);
  ocal_buffer_release(c.q);
  if (jacobi) ocal_buffer_release(c.z);
  ocal_buffer_release(c.dinv);
  ocal_buffer_release(bad);
  ocal_buffer_release(diag);
  return s;
}
