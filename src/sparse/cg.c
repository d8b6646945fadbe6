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

ocal_status ocal__check_operator(const ocal_operator *a, const char *role, const char *func) {
  if (a == NULL) return ocal__fail(OCAL_INVALID_ARGUMENT, func, "operator %s is NULL", role);
  if (a->apply == NULL)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func, "operator %s has no apply function", role);
  if (a->n == 0)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func, "operator %s has size 0", role);
  if (a->dtype != OCAL_F32 && a->dtype != OCAL_F64)
    return ocal__fail(OCAL_UNSUPPORTED, func, "operator %s has type %s; use OCAL_F32 or OCAL_F64",
                      role, ocal_dtype_name(a->dtype));
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
  return ocal__kernel_run(ctx, k, n, nargs, args);
}

/* Applies the operator to a vector through {n, 1} views, as the operator contract says. */
static ocal_status apply_vec(const ocal_operator *a, ocal_buffer x, ocal_buffer y) {
  size_t shape[2] = {a->n, 1};
  ocal_buffer xv = NULL, yv = NULL;
  ocal_status s = ocal_buffer_view(x, 0, 2, shape, &xv);
  if (s == OCAL_OK) s = ocal_buffer_view(y, 0, 2, shape, &yv);
  if (s == OCAL_OK) s = a->apply(a->user, xv, yv);
  ocal_buffer_release(xv);
  ocal_buffer_release(yv);
  return s;
}

static double host_value(ocal_dtype vt, const void *p, size_t i) {
  return vt == OCAL_F32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

ocal_status ocal_cg(const ocal_operator *a, ocal_buffer b, ocal_buffer x,
                    const ocal_cg_options *options, ocal_cg_result *result) {
  const char *func = __func__;
  ocal_status s = ocal__check_operator(a, "A", func);
  if (s == OCAL_OK) s = ocal__check_buffer(b, func);
  if (s == OCAL_OK) s = ocal__check_buffer(x, func);
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
  if (!(o.rtol >= 0) || !(o.atol >= 0))
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "rtol %g and atol %g must be >= 0", o.rtol, o.atol);
  if (o.precond != OCAL_PRECOND_NONE && o.precond != OCAL_PRECOND_JACOBI)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "precond is %d; use OCAL_PRECOND_NONE or _JACOBI",
                     (int)o.precond);
  int jacobi = o.precond == OCAL_PRECOND_JACOBI;
  if (jacobi && o.diagonal == NULL && a->csr == NULL)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT,
                     "the Jacobi preconditioner needs the diagonal: set options.diagonal, or "
                     "make the operator with ocal_operator_from_csr");
  if (jacobi && o.diagonal) {
    if ((s = ocal__check_buffer(o.diagonal, func)) != OCAL_OK) return s;
    if (o.diagonal->ctx != ctx || o.diagonal->dtype != vt || o.diagonal->numel != n)
      return OCAL_FAIL(OCAL_INVALID_ARGUMENT,
                       "options.diagonal must be %zu elements of %s in b's context", n,
                       ocal_dtype_name(vt));
  }
  size_t max_iter = o.max_iter ? o.max_iter : 10 * n;

  ocal_buffer r = NULL, p = NULL, q = NULL, z = NULL, dinv = NULL, sc = NULL, sv[4] = {0};
  ocal_buffer bad = NULL, diag = NULL;
  size_t one = 1, four = 4;
  unsigned char host_s[32];
  size_t it = 0;
  double rr = 0, bnorm = 0, tol = 0;
  int converged = 0;
  if ((s = ocal_buffer_create(ctx, vt, 1, &n, &r)) != OCAL_OK) goto done;
  if ((s = ocal_buffer_create(ctx, vt, 1, &n, &p)) != OCAL_OK) goto done;
  if ((s = ocal_buffer_create(ctx, vt, 1, &n, &q)) != OCAL_OK) goto done;
  if ((s = ocal_buffer_zeros(ctx, vt, 1, &four, &sc)) != OCAL_OK) goto done;
  for (size_t i = 0; i < 4; i++)
    if ((s = ocal_buffer_view(sc, i, 1, &one, &sv[i])) != OCAL_OK) goto done;
  if (jacobi) {
    if ((s = ocal_buffer_create(ctx, vt, 1, &n, &z)) != OCAL_OK) goto done;
    if ((s = ocal_buffer_create(ctx, vt, 1, &n, &dinv)) != OCAL_OK) goto done;
    if ((s = ocal_buffer_zeros(ctx, OCAL_I32, 1, &one, &bad)) != OCAL_OK) goto done;
    ocal_buffer d = o.diagonal;
    if (d == NULL) {
      if ((s = ocal_buffer_create(ctx, vt, 1, &n, &diag)) != OCAL_OK) goto done;
      if ((s = ocal_csr_diagonal(a->csr, diag)) != OCAL_OK) goto done;
      d = diag;
    }
    cl_ulong nn = n, doff = d->offset;
    ocal__arg args[] = {OCAL__ARG(nn), OCAL__ARG(dinv->mem), OCAL__ARG(d->mem), OCAL__ARG(doff),
                        OCAL__ARG(bad->mem)};
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
    z = r; /* no preconditioner: z is r */
  }

  /* ||b||, and r = b - A x0 (r = b when x0 = 0). */
  if ((s = ocal_dot(b, b, OCAL_AXIS_ALL, sv[3])) != OCAL_OK) goto done;
  if ((s = ocal_buffer_read(sc, 3, 1, host_s, NULL)) != OCAL_OK) goto done;
  bnorm = sqrt(host_value(vt, host_s, 0));
  tol = fmax(o.rtol * bnorm, o.atol);
  if (o.use_x0) {
    if ((s = apply_vec(a, x, q)) != OCAL_OK) goto done;
    if ((s = ocal_buffer_copy(b, r)) != OCAL_OK) goto done;
    if ((s = ocal_axpy(-1.0, q, r)) != OCAL_OK) goto done;
  } else {
    const double zero = 0;
    const float zf = 0;
    if ((s = ocal_buffer_fill(x, vt == OCAL_F32 ? (const void *)&zf : (const void *)&zero)) !=
        OCAL_OK)
      goto done;
    if ((s = ocal_buffer_copy(b, r)) != OCAL_OK) goto done;
  }
  if (jacobi) {
    cl_ulong nn = n, zo = 0, ro = 0, dofs = 0;
    ocal__arg args[] = {OCAL__ARG(nn), OCAL__ARG(z->mem), OCAL__ARG(zo), OCAL__ARG(r->mem),
                        OCAL__ARG(ro), OCAL__ARG(dinv->mem), OCAL__ARG(dofs)};
    if ((s = run_kernel(ctx, vt, "cg_jacobi", n, 7, args)) != OCAL_OK) goto done;
  }
  /* Slots of sc: rz alternates between 0 and 2 (old and new), 1 is p.q, 3 is r.r. */
  cl_uint cur = 0, nxt = 2;
  if ((s = ocal_dot(r, z, OCAL_AXIS_ALL, sv[cur])) != OCAL_OK) goto done;
  if (jacobi && (s = ocal_dot(r, r, OCAL_AXIS_ALL, sv[3])) != OCAL_OK) goto done;
  if ((s = ocal_buffer_read(sc, 0, 4, host_s, NULL)) != OCAL_OK) goto done;
  rr = host_value(vt, host_s, jacobi ? 3 : cur);
  if (sqrt(rr) <= tol) {
    converged = 1;
    goto done;
  }
  {
    cl_ulong nn = n, zo = 0;
    cl_uint u0 = 0;
    int first = 1;
    ocal__arg args[] = {OCAL__ARG(nn),    OCAL__ARG(p->mem), OCAL__ARG(zo), OCAL__ARG(z->mem),
                        OCAL__ARG(zo),    OCAL__ARG(sc->mem), OCAL__ARG(zo), OCAL__ARG(u0),
                        OCAL__ARG(u0),    OCAL__ARG(first)};
    if ((s = run_kernel(ctx, vt, "cg_update_p", n, 10, args)) != OCAL_OK) goto done;
  }
  while (it < max_iter) {
    it++;
    if ((s = apply_vec(a, p, q)) != OCAL_OK) goto done;
    if ((s = ocal_dot(p, q, OCAL_AXIS_ALL, sv[1])) != OCAL_OK) goto done;
    cl_ulong nn = n, o0 = 0;
    cl_uint i1 = 1;
    {
      cl_ulong xo = x->offset;
      ocal__arg args[] = {OCAL__ARG(nn),     OCAL__ARG(x->mem), OCAL__ARG(xo),
                          OCAL__ARG(r->mem), OCAL__ARG(o0),     OCAL__ARG(p->mem),
                          OCAL__ARG(o0),     OCAL__ARG(q->mem), OCAL__ARG(o0),
                          OCAL__ARG(sc->mem), OCAL__ARG(o0),    OCAL__ARG(cur),
                          OCAL__ARG(i1)};
      if ((s = run_kernel(ctx, vt, "cg_update_xr", n, 13, args)) != OCAL_OK) goto done;
    }
    if (jacobi) {
      ocal__arg args[] = {OCAL__ARG(nn), OCAL__ARG(z->mem), OCAL__ARG(o0), OCAL__ARG(r->mem),
                          OCAL__ARG(o0), OCAL__ARG(dinv->mem), OCAL__ARG(o0)};
      if ((s = run_kernel(ctx, vt, "cg_jacobi", n, 7, args)) != OCAL_OK) goto done;
      if ((s = ocal_dot(r, r, OCAL_AXIS_ALL, sv[3])) != OCAL_OK) goto done;
    }
    if ((s = ocal_dot(r, z, OCAL_AXIS_ALL, sv[nxt])) != OCAL_OK) goto done;
    if ((s = ocal_buffer_read(sc, 0, 4, host_s, NULL)) != OCAL_OK) goto done;
    double pq = host_value(vt, host_s, 1), rz = host_value(vt, host_s, nxt);
    rr = host_value(vt, host_s, jacobi ? 3 : nxt);
    if (!(pq > 0)) {
      s = OCAL_FAIL(OCAL_NOT_CONVERGED,
                    "iteration %zu: p.Ap = %g <= 0: A is not positive definite (CG needs a "
                    "symmetric positive definite matrix)",
                    it, pq);
      goto done;
    }
    if (sqrt(rr) <= tol) {
      converged = 1;
      break;
    }
    if (!(rz > 0)) {
      s = OCAL_FAIL(OCAL_NOT_CONVERGED,
                    "iteration %zu: r.Mr = %g <= 0: the preconditioner is not positive definite",
                    it, rz);
      goto done;
    }
    int first = 0;
    ocal__arg args[] = {OCAL__ARG(nn),  OCAL__ARG(p->mem), OCAL__ARG(o0), OCAL__ARG(z->mem),
                        OCAL__ARG(o0),  OCAL__ARG(sc->mem), OCAL__ARG(o0), OCAL__ARG(nxt),
                        OCAL__ARG(cur), OCAL__ARG(first)};
    if ((s = run_kernel(ctx, vt, "cg_update_p", n, 10, args)) != OCAL_OK) goto done;
    cl_uint t = cur;
    cur = nxt;
    nxt = t;
  }
  if (!converged && s == OCAL_OK)
    s = OCAL_FAIL(OCAL_NOT_CONVERGED,
                  "no convergence in %zu iterations: ||r|| = %g, the tolerance is %g "
                  "(max(rtol * ||b||, atol)); x holds the last iterate",
                  it, sqrt(rr), tol);
done:
  if (result) {
    result->iterations = it;
    result->residual_norm = sqrt(fabs(rr));
    result->b_norm = bnorm;
    result->converged = converged;
  }
  for (size_t i = 0; i < 4; i++) ocal_buffer_release(sv[i]);
  ocal_buffer_release(sc);
  ocal_buffer_release(r);
  ocal_buffer_release(p);
  ocal_buffer_release(q);
  if (jacobi) ocal_buffer_release(z);
  ocal_buffer_release(dinv);
  ocal_buffer_release(bad);
  ocal_buffer_release(diag);
  return s;
}
