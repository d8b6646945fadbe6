/* ocal — linear operators: the callback form the solvers take, and the one made from a CSR
 * matrix (its apply is ocal_spmm). */
#include "sparse_internal.h"

static ocal_status csr_apply(void *user, ocal_buffer x, ocal_buffer y) {
  return ocal_spmm(OCAL_NO_TRANS, 1.0, (ocal_csr)user, x, 0.0, y);
}

ocal_status ocal_operator_from_csr(ocal_csr a, ocal_operator *op) {
  ocal_status s = ocal__csr_check(a, __func__);
  if (s != OCAL_OK) return s;
  if (op == NULL) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "op is NULL");
  if (a->rows != a->cols)
    return OCAL_FAIL(OCAL_SHAPE_MISMATCH,
                     "the matrix is %zu x %zu; an operator for the solvers must be square",
                     a->rows, a->cols);
  op->n = a->rows;
  op->dtype = a->vt;
  op->apply = csr_apply;
  op->user = a;
  op->csr = a;
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
  /* The matrix behind the operator (its csr field, and the one a CSR operator applies) is
   * checked here, so that a released one is named by the solver and the operator's role
   * rather than by the product the solver would run. */
  ocal_csr m[2] = {a->csr, a->apply == csr_apply ? (ocal_csr)a->user : NULL};
  int used[2] = {a->csr != NULL, a->apply == csr_apply};
  for (int i = 0; i < 2; i++) {
    if (!used[i]) continue;
    if (m[i] == NULL || m[i]->magic != OCAL__CSR_MAGIC)
      return ocal__fail(OCAL_INVALID_HANDLE, func,
                        "operator %s's CSR matrix is %s: keep the matrix (ocal_operator_from_csr "
                        "does not own it) until the solver returns",
                        role, m[i] ? "not a live ocal_csr (released already?)" : "NULL");
    if (m[i]->rows != a->n || m[i]->cols != a->n)
      return ocal__fail(OCAL_SHAPE_MISMATCH, func,
                        "operator %s has n = %zu, but its CSR matrix is %zu x %zu: make the "
                        "operator with ocal_operator_from_csr and leave n as it sets it",
                        role, a->n, m[i]->rows, m[i]->cols);
    if (m[i]->vt != a->dtype)
      return ocal__fail(OCAL_TYPE_MISMATCH, func,
                        "operator %s has type %s, but its CSR matrix holds %s: make the operator "
                        "with ocal_operator_from_csr and leave dtype as it sets it",
                        role, ocal_dtype_name(a->dtype), ocal_dtype_name(m[i]->vt));
  }
  return OCAL_OK;
}

ocal_status ocal__operator_apply(const ocal_operator *op, ocal_buffer x, ocal_buffer y,
                                 const char *func) {
  if (op->apply == csr_apply)
    return ocal__spmm_checked(OCAL_NO_TRANS, 1.0, (ocal_csr)op->user, x, 0.0, y, func);
  return op->apply(op->user, x, y);
}
