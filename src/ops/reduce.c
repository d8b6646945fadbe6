/* ocal — reductions: argument checks, the one launch plan (ocal__reduce_enqueue, which
 * ocal_gen_reduction runs too: src/ops/reduce_engine.h), the public calls.
 *
 * The kernels are in cl/reduce.cl. The input is seen as an (outer, R, inner) block reduced
 * along R; the plan picks
 *   - inner == 1 (the last axis, or the whole buffer): `contig`, a work-group per row with
 *     vector loads; long rows with few of them are split into chunks (one work-group each,
 *     enough to fill the device), whose partial states a second launch merges;
 *   - otherwise (and for very short rows): `strided`, a work-item per output column, whose
 *     neighbours read neighbouring addresses; when there are too few outputs to fill the
 *     device, R is split into chunks and a second launch merges them. Where the columns
 *     allow aligned vector loads, `strided_v` takes a vector of neighbouring columns per
 *     work-item, which brings a column sum near the copy bandwidth where one column per
 *     work-item stays near half of it (docs/measurements.md#reductions-and-scans).
 * Small inputs are one launch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reduce_engine.h"
#include "reduce_internal.h"

/* Kernel families of cl/reduce.cl: the built-in operations. */
enum {
  FAM_SUM, FAM_PROD, FAM_MIN, FAM_MAX, FAM_ARGMIN, FAM_ARGMAX, FAM_SUMSQ, FAM_DOT, FAM_VAR,
  FAM_FSUM
};
static const char *const family_names[] = {"sum",    "prod",  "minimum", "maximum", "argmin",
                                           "argmax", "sumsq", "dotp", "var",   "fsum"};
const char *const ocal__reduce_kernel_names[OCAL__RED_KINDS] = {
    "contig", "strided", "merge_strided", "merge_group", "strided_v"};

/* Per op: its name in messages, its kernel family, the finishing mode (1: divide by the
 * count, 2: square root), and whether an empty reduction is an error. */
static const struct {
  const char *name;
  int family;
  int mode;
  int needs_elements;
} ops[OCAL_REDUCE_OP_COUNT] = {
    [OCAL_REDUCE_SUM] = {"sum", FAM_SUM, 0, 0},
    [OCAL_REDUCE_PROD] = {"prod", FAM_PROD, 0, 0},
    [OCAL_REDUCE_MIN] = {"amin", FAM_MIN, 0, 1},
    [OCAL_REDUCE_MAX] = {"amax", FAM_MAX, 0, 1},
    [OCAL_REDUCE_ARGMIN] = {"argmin", FAM_ARGMIN, 0, 1},
    [OCAL_REDUCE_ARGMAX] = {"argmax", FAM_ARGMAX, 0, 1},
    [OCAL_REDUCE_MEAN] = {"mean", FAM_SUM, 1, 0},
    [OCAL_REDUCE_VAR] = {"var", FAM_VAR, 0, 0},
    [OCAL_REDUCE_STD] = {"std", FAM_VAR, 2, 0},
    [OCAL_REDUCE_NORM2] = {"norm2", FAM_SUMSQ, 2, 0},
    [OCAL_REDUCE_DOT] = {"dot", FAM_DOT, 0, 0},
};

const char *ocal_reduce_op_name(ocal_reduce_op op) {
  return (unsigned)op < OCAL_REDUCE_OP_COUNT ? ops[op].name : "invalid";
}

/* Whether the op's result is a float computed from the values (integers give f32/f64). */
static int float_result(ocal_reduce_op op) {
  return op == OCAL_REDUCE_MEAN || op == OCAL_REDUCE_VAR || op == OCAL_REDUCE_STD ||
         op == OCAL_REDUCE_NORM2;
}

ocal_status ocal_reduce_dtype(ocal_reduce_op op, ocal_dtype in, ocal_dtype *out) {
  if (!out) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "out must not be NULL");
  if ((unsigned)op >= OCAL_REDUCE_OP_COUNT)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "unknown reduction %d", (int)op);
  if ((unsigned)in >= OCAL_DTYPE_COUNT)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "unknown element type %d", (int)in);
  if (in == OCAL_C32 || in == OCAL_C64)
    return OCAL_FAIL(OCAL_UNSUPPORTED, "reductions of %s buffers are not supported",
                     ocal_dtype_name(in));
  switch (op) {
    case OCAL_REDUCE_MIN:
    case OCAL_REDUCE_MAX:
      *out = in;
      break;
    case OCAL_REDUCE_ARGMIN:
    case OCAL_REDUCE_ARGMAX:
      *out = OCAL_I64;
      break;
    default:
      if (ocal__rs_is_float(in))
        *out = in;
      else if (float_result(op))
        *out = OCAL_F64;
      else
        *out = ocal__rs_is_signed(in) ? OCAL_I64 : OCAL_U64;
  }
  return OCAL_OK;
}

/* Checks the result type dtype against what op on an x of type xt gives. */
static ocal_status check_dtype(const char *func, ocal_reduce_op op, ocal_dtype xt,
                               ocal_dtype dtype) {
  ocal_dtype want;
  ocal_status status = ocal_reduce_dtype(op, xt, &want);
  if (status != OCAL_OK) return status;
  int ok = dtype == want;
  if (!ok && float_result(op) && !ocal__rs_is_float(xt)) ok = dtype == OCAL_F32;
  if (!ok) {
    const char *why = "";
    if (op == OCAL_REDUCE_ARGMIN || op == OCAL_REDUCE_ARGMAX)
      why = " (indices are i64)";
    else if (want == OCAL_I64 || want == OCAL_U64)
      why = " (integer sums, products and dots are 64-bit, as in NumPy)";
    else if (float_result(op) && !ocal__rs_is_float(xt))
      why = " or f32";
    return ocal__fail(OCAL_TYPE_MISMATCH, func,
                      "out has dtype %s, but %s of a %s buffer gives %s%s", ocal_dtype_name(dtype),
                      ops[op].name, ocal_dtype_name(xt), ocal_dtype_name(want), why);
  }
  return OCAL_OK;
}

/* Checks out's dtype and shape against what op on x along g needs. */
static ocal_status check_out(const char *func, ocal_reduce_op op, ocal_buffer x,
                             const ocal__rs_geom *g, ocal_buffer out) {
  ocal_status status = check_dtype(func, op, x->dtype, out->dtype);
  if (status != OCAL_OK) return status;
  char have[96], need[96], keep[96];
  if (g->axis_all) {
    if (out->numel == 1) return OCAL_OK;
    ocal__shape_format(out->ndim, out->shape, have, sizeof have);
    return ocal__fail(OCAL_SHAPE_MISMATCH, func,
                      "out has shape %s, but %s over the whole buffer (OCAL_AXIS_ALL) gives "
                      "one element: out needs exactly one element (any shape, such as [1])",
                      have, ops[op].name);
  }
  size_t dropped[OCAL_MAX_DIMS], kept[OCAL_MAX_DIMS];
  int nd = 0;
  for (int i = 0; i < x->ndim; i++) {
    kept[i] = i == g->axis ? 1 : x->shape[i];
    if (i != g->axis) dropped[nd++] = x->shape[i];
  }
  if (nd == 0) dropped[nd++] = 1; /* a 1-D input reduces to shape [1] */
  int match = out->ndim == nd && memcmp(out->shape, dropped, (size_t)nd * sizeof(size_t)) == 0;
  if (!match)
    match = out->ndim == x->ndim &&
            memcmp(out->shape, kept, (size_t)x->ndim * sizeof(size_t)) == 0;
  if (match) return OCAL_OK;
  char xs[96];
  ocal__shape_format(out->ndim, out->shape, have, sizeof have);
  ocal__shape_format(x->ndim, x->shape, xs, sizeof xs);
  ocal__shape_format(nd, dropped, need, sizeof need);
  ocal__shape_format(x->ndim, kept, keep, sizeof keep);
  return ocal__fail(OCAL_SHAPE_MISMATCH, func,
                    "out has shape %s, but %s of x with shape %s along axis %d gives shape %s "
                    "(or %s, keeping the axis)",
                    have, ops[op].name, xs, g->axis, need, keep);
}

/* Vector width of the contiguous kernels: 16 bytes; f16 and bf16 load 4 (8 bytes), which
 * convert to one float4 (VW in cl/reduce.cl's element-type section). */
static size_t vector_width(ocal_dtype dtype) {
  return dtype == OCAL_F16 || dtype == OCAL_BF16 ? 4 : 16 / ocal_dtype_size(dtype);
}

static ocal_status plan_and_launch(const ocal__reduce_job *job) {
  ocal_context ctx = job->ctx;
  const size_t outer = job->outer, inner = job->inner, R = job->R;
  const size_t outputs = outer * inner;
  const size_t target = ocal__rs_target_items(ctx);
  const size_t vw = vector_width(job->dtype);
  const int gpu = ocal__context_info(ctx)->type == OCAL_DEVICE_GPU;
  ocal__kernel *k1 = NULL, *k2 = NULL;
  if (job->nin > OCAL__REDUCE_MAX_IN)
    return ocal__fail(OCAL_INTERNAL, job->func, "%zu input arguments (at most %d)", job->nin,
                      OCAL__REDUCE_MAX_IN);
  ocal__reduce_tune tune;
  ocal_status status = ocal__reduce_tune_read(ctx, job->func, &tune);
  if (status != OCAL_OK) return status;
  /* Plan the first launch: kernel, work-group size, chunks per output. */
  /* On a CPU a work-group is a loop over its work-items with a pass per barrier: many short
   * rows go faster as one serial row per work-item (the strided kernel with inner 1). */
  int contig = inner == 1 && R >= 16 && (gpu || outer < 64 || R >= 65536);
  /* Vector columns: VW of them per work-item, where loads of VW columns are aligned. */
  const int vcols = !contig && vw <= 4 && inner % vw == 0 && job->columns_aligned;
  /* Cache hints on the vector loads (where the built-ins' callback builds them, which it does
   * with hints only on devices with PTX) for inputs of OCAL__RED_HINT_MIN bytes or more, or
   * at every size where OCAL_REDUCE_TUNE names one. */
  const size_t bytes_in = outer * R * inner * ocal_dtype_size(job->dtype);
  const int hinted =
      job->hinted_kinds && (contig || vcols) && (tune.ld || bytes_in >= OCAL__RED_HINT_MIN);
  const int kind1 = (contig ? OCAL__RED_CONTIG : vcols ? OCAL__RED_STRIDED_V : OCAL__RED_STRIDED) +
                    (hinted ? OCAL__RED_HINTED : 0);
  const size_t cols_per_item = vcols ? vw : 1;
  size_t chunks = 1, clen = R, local1, global1;
  status = job->kernel(job->data, kind1, &k1);
  if (status != OCAL_OK) return status;
  if (contig) {
    size_t lmax = ocal__rs_local(k1, tune.wg ? (size_t)tune.wg : OCAL__RS_WG_MAX);
    /* Short rows on a GPU: smaller groups, fewer idle work-items. A CPU runs a group as a
     * loop, so one size there (every size is a separate compile on PoCL). */
    local1 = R < 2 * vw * lmax && gpu ? ocal__rs_local(k1, 64) : lmax;
    /* Split rows only when there are too few of them to fill the device, and only into
     * chunks of at least 16 vectors per work-item. Groups wanted: as many as keep 1024
     * work-items per compute unit (each with OCAL_RED_UNROLL vectors in flight: on an H100
     * 2048 and 1536 were slower, docs/reduce.md), or OCAL_REDUCE_TUNE's gpc per compute
     * unit. */
    size_t groups_wanted = ocal__ceil_div(target / 2, local1);
    if (tune.gpc) groups_wanted = (target / 2048) * (size_t)tune.gpc;
    if (outer < groups_wanted) {
      size_t most = R / (vw * local1 * 16);
      chunks = ocal__ceil_div(groups_wanted, outer);
      if (chunks > most) chunks = most;
      if (chunks < 1) chunks = 1;
    }
    global1 = outer * chunks * local1;
    clen = gpu ? 0 : 1; /* the contig kernel's layout flag */
  } else {
    local1 = ocal__rs_local(k1, tune.cwg ? (size_t)tune.cwg : OCAL__RS_WG_MAX);
    /* Every work-item runs a long serial loop, so all of them must be resident at once: a
     * second wave of a few groups would double the time. Aim at half the device's
     * threads (each keeps eight loads in flight), rounding the chunks down. A work-item of
     * vector columns keeps VW times the bytes in flight and needs more registers: a quarter
     * of the threads, the best of a half, a quarter and an eighth for a column sum
     * (docs/measurements.md#reductions-and-scans). */
    size_t strided_target = target / (tune.cdiv ? (size_t)tune.cdiv : vcols ? 4 : 2),
           columns = outputs / cols_per_item;
    if (columns < strided_target && R > 64) {
      chunks = strided_target / columns;
      size_t most = ocal__ceil_div(R, 64); /* at least 64 elements per work-item */
      if (chunks > most) chunks = most;
      if (outputs >= 256 && chunks > 64) chunks = 64; /* merged serially per output */
    }
    clen = ocal__ceil_div(R, chunks);
    if (clen == 0) clen = 1;
    chunks = ocal__ceil_div(R, clen);
    if (chunks < 1) chunks = 1;
    size_t items = columns * chunks;
    if (items > 8 * target) items = 8 * target; /* grid-stride beyond that */
    global1 = ocal__round_up(items, local1);
  }

  cl_ulong c_outer = outer, c_R = R, c_inner = inner, c_chunks = chunks, c_clen = clen;
  cl_ulong count = R, doff = job->ooff, zero = 0;
  cl_int kind = job->kind, mode = job->mode;
  cl_long c_ddof = job->ddof;
  cl_mem dst = job->out, fin = job->out;
  cl_uint fin_base = 0, fin_epoch = 0;
  /* One pass for a single output: the last work-group merges (cl/reduce.cl says how). It
   * saves the second launch: on an H100 as fast at 2^28 f32, 0.4-2.6% faster at 2^24 and
   * 1.7x at 2^22 (docs/reduce.md#the-plan). OCAL_REDUCE_TUNE's onepass=0 keeps the launch. */
  const int one_pass = contig && outputs == 1 && chunks > 1 && job->lb &&
                       ocal__context_int64_atomics(ctx) && tune.onepass != 2;
  if (one_pass) {
    status = ocal__lookback_reserve(ctx, job->lb, 2 * chunks, &fin_base, &fin_epoch,
                                    job->func);
    if (status != OCAL_OK) return status;
    fin = job->lb->mem;
  } else if (chunks > 1) {
    size_t bytes;
    if (ocal__mul_overflows(outputs * chunks, OCAL__REDUCE_STATE_BYTES, &bytes))
      return ocal__fail(OCAL_OVERFLOW, job->func, "the partial results do not fit in memory");
    status = ocal__scratch_reserve(ctx, job->scratch, job->scratch_bytes, bytes, job->func);
    if (status != OCAL_OK) return status;
    dst = *job->scratch;
  }
  ocal__arg a1[OCAL__REDUCE_MAX_IN + 14];
  memcpy(a1, job->in, job->nin * sizeof *a1);
  const ocal__arg tail1[] = {
      {sizeof c_outer, &c_outer}, {sizeof c_R, &c_R},         {sizeof c_inner, &c_inner},
      {sizeof c_chunks, &c_chunks}, {sizeof c_clen, &c_clen}, {sizeof(cl_mem), &dst},
      {sizeof(cl_ulong), chunks > 1 && !one_pass ? &zero : &doff}, {sizeof kind, &kind},
      {sizeof count, &count},   {sizeof c_ddof, &c_ddof},     {sizeof mode, &mode},
      {sizeof(cl_mem), &fin},   {sizeof fin_base, &fin_base}, {sizeof fin_epoch, &fin_epoch},
  };
  memcpy(a1 + job->nin, tail1, sizeof tail1);
  status = ocal__kernel_run_nd(ctx, k1, 1, &global1, &local1,
                               job->nin + sizeof tail1 / sizeof tail1[0], a1, job->func);
  /* A launch that was not enqueued took no tickets: the next one counts from the same base. */
  if (status != OCAL_OK && one_pass) job->lb->tickets = fin_base;
  if (status != OCAL_OK || chunks == 1 || one_pass) return status;

  /* Second launch: merge the chunks of every output. */
  int by_group = outputs < 256;
  status = job->kernel(job->data, by_group ? OCAL__RED_MERGE_GROUP : OCAL__RED_MERGE_STRIDED,
                       &k2);
  if (status != OCAL_OK) return status;
  size_t local2 = ocal__rs_local(k2, OCAL__RS_WG_MAX), global2;
  if (by_group) {
    global2 = outputs * local2;
  } else {
    size_t items = outputs < 8 * target ? outputs : 8 * target;
    global2 = ocal__round_up(items, local2);
  }
  /* The merge kernels see (outer, chunks, inner); contig chunks of rows are inner 1. */
  cl_ulong m_inner = contig ? 1 : inner;
  cl_mem out_mem = job->out;
  ocal__arg a2[] = {
      {sizeof(cl_mem), &dst},  {sizeof c_outer, &c_outer}, {sizeof c_chunks, &c_chunks},
      {sizeof m_inner, &m_inner}, {sizeof(cl_mem), &out_mem}, {sizeof doff, &doff},
      {sizeof kind, &kind},    {sizeof count, &count},     {sizeof c_ddof, &c_ddof},
      {sizeof mode, &mode},
  };
  return ocal__kernel_run_nd(ctx, k2, 1, &global2, &local2, sizeof a2 / sizeof a2[0], a2,
                             job->func);
}

ocal_status ocal__reduce_enqueue(const ocal__reduce_job *job) {
  ocal_status status = plan_and_launch(job);
  if (status != OCAL_OK) ocal__claim_error(job->func);
  return status;
}

/* A built-in family's kernel `kind`, from the context's table: the engine's callback. */
typedef struct {
  ocal__rs *rs;
  ocal_context ctx;
  ocal_dtype dtype;
  int family;
} builtin_call;

static ocal_status builtin_kernel(void *data, int kind, ocal__kernel **k) {
  const builtin_call *c = data;
  const int hinted = kind >= OCAL__RED_HINTED, base = kind % OCAL__RED_HINTED;
  char name[64], *at = name;
  ocal__put(&at, name + sizeof name, family_names[c->family]);
  ocal__put(&at, name + sizeof name, "_");
  ocal__put(&at, name + sizeof name, ocal__reduce_kernel_names[base]);
  return ocal__rs_kernel_hinted(c->ctx, c->rs, OCAL__RS_REDUCE, c->dtype,
                                c->family * OCAL__RED_KINDS + base +
                                    (hinted ? OCAL__RS_HINTED_SLOTS : 0),
                                name, hinted, k);
}

/* Enqueues op on x (and y) along g into out; arguments already checked. */
static ocal_status enqueue(const char *func, ocal_reduce_op op, ocal_buffer x, ocal_buffer y,
                           const ocal__rs_geom *g, long ddof, ocal_buffer out) {
  ocal_context ctx = x->ctx;
  const size_t vw = vector_width(x->dtype);
  /* Means of 64-bit integers: a compensated float sum, as their exact sum may wrap. */
  const int family = op == OCAL_REDUCE_MEAN && (x->dtype == OCAL_I64 || x->dtype == OCAL_U64)
                         ? FAM_FSUM
                         : ops[op].family;
  ocal__rs *rs;
  ocal_status status = ocal__rs_get(ctx, &rs, func);
  if (status != OCAL_OK) return status;
  cl_mem xmem = x->mem ? x->mem : out->mem; /* R == 0: nothing is read */
  cl_mem ymem = y && y->mem ? y->mem : xmem;
  cl_ulong xoff = x->offset, yoff = y ? y->offset : x->offset;
  const ocal__arg in[] = {{sizeof(cl_mem), &xmem}, {sizeof xoff, &xoff},
                          {sizeof(cl_mem), &ymem}, {sizeof yoff, &yoff}};
  builtin_call call = {rs, ctx, x->dtype, family};
  ocal__reduce_job job = {.ctx = ctx,
                          .func = func,
                          .kernel = builtin_kernel,
                          .data = &call,
                          .in = in,
                          .nin = 4,
                          .dtype = x->dtype,
                          .columns_aligned = x->offset % vw == 0 && (!y || y->offset % vw == 0),
                          .out = out->mem,
                          .ooff = out->offset,
                          .kind = (cl_int)out->dtype,
                          .ddof = ddof,
                          .mode = ops[op].mode,
                          .outer = g->outer,
                          .R = g->R,
                          .inner = g->inner,
                          .scratch = &rs->scratch,
                          .scratch_bytes = &rs->scratch_bytes,
                          .lb = &rs->lb,
                          .hinted_kinds = 1};
  pthread_mutex_lock(&rs->lock);
  status = ocal__reduce_enqueue(&job);
  pthread_mutex_unlock(&rs->lock);
  return status;
}

/* Every public reduction comes here. y is NULL except for dot. */
static ocal_status reduce(const char *func, ocal_reduce_op op, ocal_buffer x, ocal_buffer y,
                          int axis, long ddof, ocal_buffer out) {
  if ((unsigned)op >= OCAL_REDUCE_OP_COUNT)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func, "unknown reduction %d", (int)op);
  ocal_status status = ocal__rs_check_buffers(func, x, out);
  if (status != OCAL_OK) return status;
  if (op == OCAL_REDUCE_DOT) {
    if (!y)
      return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                        "dot needs two buffers: call ocal_dot or ocal_dot_to_host");
    if ((status = ocal__rs_check_buffers(func, x, y)) != OCAL_OK) return status;
    if (y->dtype != x->dtype)
      return ocal__fail(OCAL_TYPE_MISMATCH, func,
                        "dot of an %s buffer and a %s buffer: the types must be the same",
                        ocal_dtype_name(x->dtype), ocal_dtype_name(y->dtype));
  }
  if (ddof < 0)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func, "ddof is %ld, it must be >= 0", ddof);
  ocal__rs_geom g;
  if ((status = ocal__rs_geometry(func, x, axis, &g)) != OCAL_OK) return status;
  if (y) {
    int same = g.axis_all ? y->numel == x->numel
                          : y->ndim == x->ndim &&
                                memcmp(y->shape, x->shape, (size_t)x->ndim * sizeof(size_t)) == 0;
    if (!same) {
      char xs[96], ys[96];
      ocal__shape_format(x->ndim, x->shape, xs, sizeof xs);
      ocal__shape_format(y->ndim, y->shape, ys, sizeof ys);
      return ocal__fail(OCAL_SHAPE_MISMATCH, func,
                        g.axis_all ? "dot of x with shape %s and y with shape %s: they need "
                                     "the same number of elements"
                                   : "dot along an axis of x with shape %s and y with shape "
                                     "%s: they need the same shape",
                        xs, ys);
    }
  }
  if ((status = check_out(func, op, x, &g, out)) != OCAL_OK) return status;
  /* The kernels write out while other groups still read the input: no overlap at all. */
  if (ocal__buffers_overlap(x, out) || (y && ocal__buffers_overlap(y, out)))
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "out overlaps %s (views of one buffer): write the result to separate "
                      "memory", ocal__buffers_overlap(x, out) ? "x" : "y");
  if (g.outer * g.inner == 0) return OCAL_OK; /* no outputs */
  if (g.R == 0 && ops[op].needs_elements)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "%s of an empty buffer%s has no result (there is no identity to return)",
                      ops[op].name, g.axis_all ? "" : " along an axis of length 0");
  return enqueue(func, op, x, y, &g, ddof, out);
}

ocal_status ocal_reduce(ocal_reduce_op op, ocal_buffer x, int axis, ocal_buffer out) {
  return reduce(__func__, op, x, NULL, axis, 0, out);
}

#define OCAL__REDUCE_SHORTHAND(fn, op)                           \
  ocal_status fn(ocal_buffer x, int axis, ocal_buffer out) {     \
    return reduce(__func__, op, x, NULL, axis, 0, out);          \
  }
OCAL__REDUCE_SHORTHAND(ocal_sum, OCAL_REDUCE_SUM)
OCAL__REDUCE_SHORTHAND(ocal_prod, OCAL_REDUCE_PROD)
OCAL__REDUCE_SHORTHAND(ocal_amin, OCAL_REDUCE_MIN)
OCAL__REDUCE_SHORTHAND(ocal_amax, OCAL_REDUCE_MAX)
OCAL__REDUCE_SHORTHAND(ocal_argmin, OCAL_REDUCE_ARGMIN)
OCAL__REDUCE_SHORTHAND(ocal_argmax, OCAL_REDUCE_ARGMAX)
OCAL__REDUCE_SHORTHAND(ocal_mean, OCAL_REDUCE_MEAN)
OCAL__REDUCE_SHORTHAND(ocal_norm2, OCAL_REDUCE_NORM2)

ocal_status ocal_var(ocal_buffer x, int axis, int ddof, ocal_buffer out) {
  return reduce(__func__, OCAL_REDUCE_VAR, x, NULL, axis, ddof, out);
}

ocal_status ocal_std(ocal_buffer x, int axis, int ddof, ocal_buffer out) {
  return reduce(__func__, OCAL_REDUCE_STD, x, NULL, axis, ddof, out);
}

ocal_status ocal_dot(ocal_buffer x, ocal_buffer y, int axis, ocal_buffer out) {
  if (!y) return OCAL_FAIL(OCAL_INVALID_HANDLE, "y is NULL");
  return reduce(__func__, OCAL_REDUCE_DOT, x, y, axis, 0, out);
}

static ocal_status to_host(const char *func, ocal_reduce_op op, ocal_buffer x, ocal_buffer y,
                           ocal_dtype dtype, void *result) {
  if (!result) return ocal__fail(OCAL_INVALID_ARGUMENT, func, "result must not be NULL");
  ocal_status status = ocal__rs_check_buffers(func, x, x);
  if (status != OCAL_OK) return status;
  if ((unsigned)dtype >= OCAL_DTYPE_COUNT)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func, "unknown element type %d", (int)dtype);
  /* The result's type is judged here, before the result buffer is made, so that a refusal
   * names this call rather than ocal_buffer_create. (An unknown op is reduce's to report.) */
  if ((unsigned)op < OCAL_REDUCE_OP_COUNT &&
      ((status = check_dtype(func, op, x->dtype, dtype)) != OCAL_OK ||
       (status = ocal__check_dtype(x->ctx, dtype, func)) != OCAL_OK))
    return status;
  size_t one = 1;
  ocal_buffer out;
  if ((status = ocal_buffer_create(x->ctx, dtype, 1, &one, &out)) != OCAL_OK) return status;
  status = reduce(func, op, x, y, OCAL_AXIS_ALL, 0, out);
  if (status == OCAL_OK) status = ocal_buffer_read(out, 0, 1, result, NULL);
  ocal_buffer_release(out);
  return status;
}

ocal_status ocal_reduce_to_host(ocal_reduce_op op, ocal_buffer x, ocal_dtype dtype,
                                void *result) {
  return to_host(__func__, op, x, NULL, dtype, result);
}

ocal_status ocal_dot_to_host(ocal_buffer x, ocal_buffer y, ocal_dtype dtype, void *result) {
  if (!y) return OCAL_FAIL(OCAL_INVALID_HANDLE, "y is NULL");
  return to_host(__func__, OCAL_REDUCE_DOT, x, y, dtype, result);
}
