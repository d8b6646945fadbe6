/* ocal — kernel generators: argument marshalling. A run's arguments (ocal_gen_arg: buffers
 * and pointers to scalars) checked against the declared list and turned into kernel
 * arguments: a pointer becomes its buffer's memory and its offset in elements (the kernels
 * rebase it), a scalar its bytes. */
#include <stdio.h>
#include <string.h>

#include "gen_internal.h"


ocal_status ocal__gen_user_args(const char *func, ocal_gen g, int nargs, const ocal_gen_arg *args,
                             ocal__cl_args *out, ocal_buffer *first) {
  *first = NULL;
  if (nargs != g->nparams)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "%d argument%s given, but the argument list declares %d", nargs,
                      nargs == 1 ? "" : "s", g->nparams);
  if (nargs > 0 && !args) return ocal__fail(OCAL_INVALID_ARGUMENT, func, "args must not be NULL");
  if (2 * nargs > OCAL__GEN_MAX_CL_ARGS)
    return ocal__fail(OCAL_UNSUPPORTED, func, "more than %d arguments", OCAL__GEN_MAX_CL_ARGS / 2);
  out->count = 0;
  for (int k = 0; k < nargs; k++) {
    const ocal__gen_param *p = &g->params[k];
    const char *t = ocal__dtype_cl_type(p->dtype);
    if (p->pointer) {
      ocal_buffer buf = args[k].buffer;
      if (args[k].scalar)
        return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                          "argument %d ('%s%s *%s') is a pointer: pass a buffer "
                          "(OCAL_GEN_BUFFER(buf))",
                          k, p->is_const ? "const " : "", t, p->name);
      if (!buf)
        return ocal__fail(OCAL_INVALID_HANDLE, func,
                          "argument %d ('%s%s *%s') is a NULL buffer: pass a buffer of %s "
                          "(OCAL_GEN_BUFFER(buf))",
                          k, p->is_const ? "const " : "", t, p->name, ocal_dtype_name(p->dtype));
      ocal_status status = ocal__check_buffer(buf, func);
      if (status != OCAL_OK) return status;
      if (buf->ctx != g->ctx)
        return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                          "argument %d ('%s') belongs to another context", k, p->name);
      if (buf->dtype != p->dtype)
        return ocal__fail(OCAL_TYPE_MISMATCH, func,
                          "argument %d ('%s%s *%s') needs a buffer of %s (%s), but the buffer "
                          "holds %s",
                          k, p->is_const ? "const " : "", t, p->name, ocal_dtype_name(p->dtype),
                          t, ocal_dtype_name(buf->dtype));
      if (!*first) *first = buf;
      int m = out->count / 2;
      out->mems[m] = buf->mem;
      out->offs[m] = buf->offset;
      out->a[out->count++] = (ocal__arg){sizeof(cl_mem), &out->mems[m]};
      out->a[out->count++] = (ocal__arg){sizeof(cl_ulong), &out->offs[m]};
    } else {
      if (!args[k].scalar || args[k].buffer)
        return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                          "argument %d ('%s %s') is a scalar: pass a pointer to its value "
                          "(OCAL_GEN_SCALAR(&value))",
                          k, t, p->name);
      out->a[out->count++] = (ocal__arg){ocal_dtype_size(p->dtype), args[k].scalar};
    }
  }
  return OCAL_OK;
}

/* Appends kernel arguments; fails when there are too many. */
int ocal__gen_push(ocal__cl_args *a, size_t size, const void *value) {
  if (a->count >= OCAL__GEN_MAX_CL_ARGS) return -1;
  a->a[a->count++] = (ocal__arg){size, value};
  return 0;
}
