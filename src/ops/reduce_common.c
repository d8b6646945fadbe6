/* ocal — shared host code of reductions and scans: per-context state, axes, launches. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reduce_internal.h"

static const char *const program_names[OCAL__RS_PROGRAMS] = {"reduce", "scan"};

static int rs_key; /* its address names the context attachment */

static ocal_status rs_create(ocal_context ctx, void **data) {
  ocal__rs *rs = calloc(1, sizeof *rs);
  if (!rs) return OCAL_FAIL(OCAL_OUT_OF_HOST_MEMORY, "no memory for the reduction state");
  if (pthread_mutex_init(&rs->lock, NULL) != 0) {
    free(rs);
    return OCAL_FAIL(OCAL_INTERNAL, "pthread_mutex_init failed");
  }
  rs->ctx = ctx;
  *data = rs;
  return OCAL_OK;
}

static void rs_destroy(void *data) {
  ocal__rs *rs = data;
  /* The kernels belong to the context's program cache, which frees them. */
  /* The scratch goes back through the allocator like every buffer's memory: the pool, which
   * the context destroys after its attachments, then frees it. */
  if (rs->scratch) ocal__device_free(rs->ctx, rs->scratch);
  if (rs->lb.mem) ocal__device_free(rs->ctx, rs->lb.mem);
  pthread_mutex_destroy(&rs->lock);
  free(rs);
}

ocal_status ocal__rs_get(ocal_context ctx, ocal__rs **rs) {
  void *data = NULL;
  ocal_status status = ocal__context_attachment(ctx, &rs_key, rs_create, rs_destroy, &data);
  *rs = data;
  return status;
}

ocal_status ocal__rs_kernel(ocal_context ctx, ocal__rs *rs, int program, ocal_dtype dtype,
                            int id, const char *name, ocal__kernel **k) {
  ocal__kernel **slot = &rs->kernels[program][dtype][id];
  if (*slot) {
    *k = *slot;
    return OCAL_OK;
  }
  char options[320];
  ocal__dtype_options(dtype, options, sizeof options);
  /* Integer inputs compute means, variances and norms in double where the device can. */
  if (program == OCAL__RS_REDUCE && !ocal__rs_is_float(dtype) && ocal__context_fp64(ctx)) {
    size_t len = strlen(options);
    snprintf(options + len, sizeof options - len, " -DOCAL_ACC_FP64");
  }
  /* One kernel per program: `name` is "<operation>_<kernel>" (operations have no '_'), and
   * the .cl files keep only what -DOCAL_ONLY_<operation> -DOCAL_KERNEL_<kernel> name. A
   * whole file is fifty kernels per type, seconds of compiling for a first call that runs one;
   * the options are part of the program cache's and disk cache's keys. */
  const char *cut = strchr(name, '_');
  if (!cut) return OCAL_FAIL(OCAL_INTERNAL, "kernel name '%s' has no operation prefix", name);
  size_t len = strlen(options);
  snprintf(options + len, sizeof options - len,
           " -DOCAL_ONLY -DOCAL_ONLY_%.*s -DOCAL_KERNEL -DOCAL_KERNEL_%s", (int)(cut - name), name,
           cut + 1);
  ocal_status status = ocal__library_kernel(ctx, program_names[program], options, name, slot);
  if (status != OCAL_OK) return status;
  *k = *slot;
  return OCAL_OK;
}

ocal_status ocal__rs_check_buffers(const char *func, ocal_buffer x, ocal_buffer other) {
  ocal_status status = ocal__check_buffer(x, func);
  if (status != OCAL_OK) return status;
  if (other != x) {
    if ((status = ocal__check_buffer(other, func)) != OCAL_OK) return status;
    if (other->ctx != x->ctx)
      return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                        "the buffers belong to different contexts");
  }
  if (x->dtype == OCAL_C32 || x->dtype == OCAL_C64)
    return ocal__fail(OCAL_UNSUPPORTED, func,
                      "%s buffers are not supported (element types: f32, f64, i32, u32, i64, "
                      "u64, u8)",
                      ocal_dtype_name(x->dtype));
  return OCAL_OK;
}

ocal_status ocal__rs_geometry(const char *func, ocal_buffer x, int axis, ocal__rs_geom *g) {
  memset(g, 0, sizeof *g);
  if (axis == OCAL_AXIS_ALL) {
    g->axis_all = 1;
    g->outer = 1;
    g->R = x->numel;
    g->inner = 1;
    return OCAL_OK;
  }
  int a = axis < 0 ? axis + x->ndim : axis;
  if (a < 0 || a >= x->ndim)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "axis %d is out of range for a %d-D buffer (valid: %d .. %d, or "
                      "OCAL_AXIS_ALL for the whole buffer)",
                      axis, x->ndim, -x->ndim, x->ndim - 1);
  g->axis = a;
  g->outer = 1;
  g->inner = 1;
  for (int i = 0; i < a; i++) g->outer *= x->shape[i];
  g->R = x->shape[a];
  for (int i = a + 1; i < x->ndim; i++) g->inner *= x->shape[i];
  return OCAL_OK;
}

size_t ocal__rs_local(const ocal__kernel *k, size_t want) {
  return ocal__kernel_pow2_local(k, want, OCAL__RS_WG_MAX);
}

size_t ocal__rs_target_items(ocal_context ctx) {
  size_t cu = ocal__context_info(ctx)->compute_units ? ocal__context_info(ctx)->compute_units : 1;
  return cu * 2048;
}
