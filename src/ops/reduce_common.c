/* ocal — shared host code of reductions and scans: per-context state, axes, launches. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reduce_internal.h"
#include "scan_engine.h"

static const char *const program_names[OCAL__RS_PROGRAMS] = {"reduce", "scan"};

static int rs_key; /* its address names the context attachment */

static ocal_status rs_create(ocal_context ctx, void **data) {
  ocal__rs *rs = calloc(1, sizeof *rs);
  /* "ocal": ocal__context_attachment puts the public call in its place. */
  if (!rs) return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, "ocal", "no memory for the reduction state");
  if (pthread_mutex_init(&rs->lock, NULL) != 0) {
    free(rs);
    return ocal__fail(OCAL_INTERNAL, "ocal", "pthread_mutex_init failed");
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

ocal_status ocal__rs_get(ocal_context ctx, ocal__rs **rs, const char *func) {
  void *data = NULL;
  ocal_status status =
      ocal__context_attachment(ctx, &rs_key, rs_create, rs_destroy, &data, func);
  *rs = data;
  return status;
}

/* The cache hint of the contig and strided_v kernels' vector loads (cl/reduce.cl's
 * OCAL_RED_LDH; 1: plain loads): OCAL_REDUCE_TUNE's ld, else OCAL__RED_LDH_AUTO where the
 * driver reports a PTX compute capability (as the SpMV's OCAL_SPMV_LOADS=auto), unless that
 * build failed on this context before. */
static int load_hint(ocal_context ctx, const ocal__rs *rs, const ocal__reduce_tune *t) {
  return ocal__ptx_hint_choose(ctx, (int)t->ld, 0, OCAL__RED_LDH_AUTO, 1, rs->plain_loads);
}

ocal_status ocal__rs_kernel(ocal_context ctx, ocal__rs *rs, int program, ocal_dtype dtype,
                            int id, const char *name, ocal__kernel **k) {
  return ocal__rs_kernel_hinted(ctx, rs, program, dtype, id, name, 0, k);
}

ocal_status ocal__rs_kernel_hinted(ocal_context ctx, ocal__rs *rs, int program, ocal_dtype dtype,
                                   int id, const char *name, int want_hint, ocal__kernel **k) {
  ocal__kernel **slot = &rs->kernels[program][dtype][id];
  if (*slot) {
    *k = *slot;
    return OCAL_OK;
  }
  char options[320];
  int hinted = 1;
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
  if (program == OCAL__RS_REDUCE) {
    ocal__reduce_tune t;
    ocal_status status = ocal__reduce_tune_read(ctx, "ocal_reduce", &t);
    if (status != OCAL_OK) return status;
    /* Only the kernel that reads a value gets it, so the others' builds stay shared. */
    size_t len = strlen(options), nlen = strlen(name);
    if (t.unroll && nlen > 7 && !strcmp(name + nlen - 7, "_contig"))
      snprintf(options + len, sizeof options - len, " -DOCAL_RED_UNROLL=%ld", t.unroll);
    const int is_v = nlen > 10 && !strcmp(name + nlen - 10, "_strided_v");
    if (t.rows && is_v)
      snprintf(options + len, sizeof options - len, " -DOCAL_RED_ROWS=%ld", t.rows);
    len = strlen(options);
    /* Loading ahead pays in strided_v (a column sum waits on its loads during its longer
     * compensated sums); in contig it changed nothing measurable, so it stays off there. */
    const int is_contig = nlen > 7 && !strcmp(name + nlen - 7, "_contig");
    if ((t.pipe == 1 && (is_v || is_contig)) || (t.pipe == 0 && is_v))
      snprintf(options + len, sizeof options - len, " -DOCAL_RED_PIPE=1");
    len = strlen(options);
    hinted = want_hint && (is_v || is_contig) && dtype != OCAL_F16 && dtype != OCAL_BF16
                 ? load_hint(ctx, rs, &t)
                 : 1;
    if (hinted > 1) snprintf(options + len, sizeof options - len, " -DOCAL_RED_LDH=%d", hinted);
  }
  const char *cut = strchr(name, '_');
  if (!cut) return OCAL_FAIL(OCAL_INTERNAL, "kernel name '%s' has no operation prefix", name);
  if (program == OCAL__RS_SCAN && !strcmp(cut + 1, "lookback")) {
    size_t len = strlen(options);
    if (ocal__scan_lookback_wide(ctx))
      snprintf(options + len, sizeof options - len, " -DOCAL_LB_WIDE");
    /* OCAL_SCAN=walk, for tests: every 7th tile alone publishes its inclusive prefix, and
     * windows of 2 predecessors, 2 kept, so look-backs slide and take the path for windows
     * not kept even where every predecessor has finished (a CPU). */
    len = strlen(options);
    if (ctx->settings.scan == OCAL__SCAN_WALK)
      snprintf(options + len, sizeof options - len,
               " -DOCAL_LB_SPARSE=7 -DOCAL_LB_WINDOW=2 -DOCAL_LB_SLOTS=2");
  }
  /* The strided kernel and the two merges share one program: a program's compile is mostly
   * its fixed cost (the parse of the file), the merges are small, and a strided launch in
   * chunks needs a merge. An operation's kernels are then three programs where they were
   * five (312 compiles of check_reduce became 182). */
  const int bundled = program == OCAL__RS_REDUCE &&
                      (!strcmp(cut + 1, "strided") || !strncmp(cut + 1, "merge_", 6));
  size_t len = strlen(options);
  snprintf(options + len, sizeof options - len,
           " -DOCAL_ONLY -DOCAL_ONLY_%.*s -DOCAL_KERNEL -DOCAL_KERNEL_%s", (int)(cut - name), name,
           bundled ? "strided -DOCAL_KERNEL_merge_group -DOCAL_KERNEL_merge_strided" : cut + 1);
  ocal_status status = ocal__library_kernel(ctx, program_names[program], options, name, slot);
  /* The automatic cache hint where the compiler refused it: plain loads from now on. */
  if (status == OCAL_BUILD_FAILED && hinted > 1 && !rs->plain_loads) {
    ocal__reduce_tune t;
    if (ocal__reduce_tune_read(ctx, "ocal_reduce", &t) == OCAL_OK && t.ld == 0) {
      rs->plain_loads = 1;
      return ocal__rs_kernel_hinted(ctx, rs, program, dtype, id, name, want_hint, k);
    }
  }
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
                      "%s buffers are not supported (element types: f32, f64, f16, bf16, i32, "
                      "u32, i64, u64, u8)",
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

/* One key of OCAL_REDUCE_TUNE: whether value v is accepted for it. */
static int tune_ok(const char *key, long long v) {
  const int pow2 = v > 0 && (v & (v - 1)) == 0;
  if (!strcmp(key, "wg") || !strcmp(key, "cwg")) return pow2 && v >= 32 && v <= OCAL__RS_WG_MAX;
  if (!strcmp(key, "gpc")) return v >= 1 && v <= 64;
  if (!strcmp(key, "unroll")) return pow2 && v <= 8;
  if (!strcmp(key, "onepass") || !strcmp(key, "pipe")) return v == 0 || v == 1;
  if (!strcmp(key, "cdiv")) return v >= 1 && v <= 16;
  if (!strcmp(key, "rows")) return v == 8 || v == 16;
  if (!strcmp(key, "ld")) return v >= 1 && v <= 9;
  return 0;
}

ocal_status ocal__reduce_tune_read(ocal_context ctx, const char *func, ocal__reduce_tune *t) {
  memset(t, 0, sizeof *t);
  const char *cursor = ctx->settings.reduce_tune;
  char key[16];
  long long v;
  while (ocal__kv_next(&cursor, key, sizeof key, &v)) {
    if (!tune_ok(key, v))
      return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                        "OCAL_REDUCE_TUNE has %s=%lld: use wg and cwg 32..%d (powers of two), "
                        "gpc 1..64, unroll 1, 2, 4 or 8, onepass and pipe 0 or 1, cdiv 1..16, "
                        "rows 8 or 16, ld 1..9",
                        key, v, OCAL__RS_WG_MAX);
    long *field = !strcmp(key, "wg")       ? &t->wg
                  : !strcmp(key, "gpc")    ? &t->gpc
                  : !strcmp(key, "unroll") ? &t->unroll
                  : !strcmp(key, "onepass") ? &t->onepass
                  : !strcmp(key, "cdiv")   ? &t->cdiv
                  : !strcmp(key, "cwg")    ? &t->cwg
                  : !strcmp(key, "pipe")   ? &t->pipe
                  : !strcmp(key, "ld")     ? &t->ld
                                           : &t->rows;
    *field = !strcmp(key, "onepass") || !strcmp(key, "pipe") ? (v ? 1 : 2) : (long)v;
  }
  if (t->ld > 1 && !ocal__ptx_hints_allowed(ctx))
    return ocal__fail(OCAL_UNSUPPORTED, func,
                      "OCAL_REDUCE_TUNE has ld=%ld, an NVIDIA PTX cache hint, but this device's "
                      "driver reports no PTX compute capability: use ld=1 (plain loads) or "
                      "leave ld unset",
                      t->ld);
  return OCAL_OK;
}

size_t ocal__rs_local(const ocal__kernel *k, size_t want) {
  return ocal__kernel_pow2_local(k, want, OCAL__RS_WG_MAX);
}

size_t ocal__rs_target_items(ocal_context ctx) {
  size_t cu = ocal__context_info(ctx)->compute_units ? ocal__context_info(ctx)->compute_units : 1;
  return cu * 2048;
}
