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
