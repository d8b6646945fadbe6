/* ocal — scans (prefix sums and maxima): argument checks, the launch plan, the public calls.
 *
 * The kernels are in cl/scan.cl. The input is seen as an (outer, R, inner) block scanned
 * along R. Rows of contiguous elements (inner == 1, R not tiny) are scanned by work-groups in
 * tiles; otherwise a work-item scans one column. When there are too few rows or columns to
 * fill the device, R is cut into pieces: their totals are computed, scanned, and each piece
 * is then scanned from its starting value (three launches instead of one), or, for rows of
 * contiguous elements where ocal__lookback_device says so (GPUs and CPUs unless OCAL_SCAN=three),
 * in one launch with decoupled look-back (a work-group per tile, each taking the total of
 * the tiles before it from its predecessors' published states: docs/scan.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan_engine.h"
#include "reduce_internal.h"

const char *const ocal__scan_kernel_names[OCAL__SCAN_KINDS] = {
    "contig_reduce", "tiles", "tiles_acc", "strided_reduce", "strided", "strided_acc",
    "lookback"};
static const char *const op_names[OCAL_SCAN_OP_COUNT] = {"sum", "maximum"};
static const char *const op_public_names[OCAL_SCAN_OP_COUNT] = {"cumsum", "cummax"};

#define SCAN_IPT 8 /* OCAL_IPT in cl/scan.cl */

const char *ocal_scan_op_name(ocal_scan_op op) {
  static const char *const names[OCAL_SCAN_OP_COUNT] = {"sum", "max"};
  return (unsigned)op < OCAL_SCAN_OP_COUNT ? names[op] : "invalid";
}

ocal_status ocal_scan_dtype(ocal_scan_op op, ocal_dtype in, ocal_dtype *out) {
  if (!out) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "out must not be NULL");
  if ((unsigned)op >= OCAL_SCAN_OP_COUNT)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "unknown scan %d", (int)op);
  if ((unsigned)in >= OCAL_DTYPE_COUNT)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "unknown element type %d", (int)in);
  if (in == OCAL_C32 || in == OCAL_C64)
    return OCAL_FAIL(OCAL_UNSUPPORTED, "scans of %s buffers are not supported",
                     ocal_dtype_name(in));
  if (in == OCAL_F16 || in == OCAL_BF16)
    return OCAL_FAIL(OCAL_UNSUPPORTED,
                     "scans of %s buffers are not supported; convert to f32 with ocal_cast first",
                     ocal_dtype_name(in));
  if (op == OCAL_SCAN_SUM && !ocal__rs_is_float(in))
    *out = ocal__rs_is_signed(in) ? OCAL_I64 : OCAL_U64;
  else
    *out = in;
  return OCAL_OK;
}

/* Whether rows of contiguous elements are scanned in one pass (decoupled look-back) rather
 * than three: on devices that allow it and where the rule or OCAL_SCAN picks it
 * (ocal__lookback_device: device type and setting only), and for fewer than 2^31
 * tiles (the tickets are 32-bit). Generated scans (src/gen) run this same plan. */
static int single_pass_device(ocal_context ctx) { return ocal__lookback_device(ctx); }
static int single_pass(ocal_context ctx, size_t tiles) {
  return single_pass_device(ctx) && tiles < ((size_t)1 << 31);
}

int ocal__scan_lookback_wide(ocal_context ctx) {
  /* The tile of 256 x 32 four-byte results, its padding and the block scan's two buffers. */
  const uint64_t words = OCAL__RS_WG_MAX * 32 + OCAL__RS_WG_MAX + 2 * OCAL__RS_WG_MAX;
  return ocal__context_info(ctx)->local_mem_bytes >= 4 * words + 256;
}
size_t ocal__scan_lookback_ipt(ocal_context ctx, size_t result_bytes) {
  return result_bytes > 4 ? 12 : ocal__scan_lookback_wide(ctx) ? 32 : 24;
}

/* A launch's arguments: the job's input ones, then the kernel's own (at most 11). */
typedef struct {
  ocal__arg a[OCAL__SCAN_MAX_IN + 12];
  size_t n;
} argv_t;

static void with_input(argv_t *v, const ocal__scan_job *j) {
  memcpy(v->a, j->in, j->nin * sizeof *j->in);
  v->n = j->nin;
}
static void push(argv_t *v, size_t size, const void *value) {
  v->a[v->n++] = (ocal__arg){size, value};
}

static ocal_status launch(const ocal__scan_job *j, ocal__kernel *k, const argv_t *v,
                          size_t global, size_t local) {
  return ocal__kernel_run_nd(j->ctx, k, 1, &global, &local, v->n, v->a, j->func);
}

static ocal_status scratch(const ocal__scan_job *j, size_t bytes, cl_mem *mem) {
  ocal_status status = ocal__scratch_reserve(j->ctx, j->scratch, j->scratch_bytes, bytes, j->func);
  *mem = *j->scratch;
  return status;
}

static ocal_status plan_and_launch(const ocal__scan_job *j) {
  ocal_context ctx = j->ctx;
  const size_t R = j->R, lines = j->outer * j->inner, target = ocal__rs_target_items(ctx);
  const size_t acc_bytes = j->result_bytes;
  if (j->nin > OCAL__SCAN_MAX_IN)
    return ocal__fail(OCAL_UNSUPPORTED, j->func, "more than %d kernel arguments for the input",
                      OCAL__SCAN_MAX_IN);
  ocal_status status;
  ocal__kernel *k;
  argv_t v;
  cl_mem omem = j->out, P = NULL;
  cl_ulong ooff = j->ooff, zero = 0;
  cl_ulong c_outer = j->outer, c_R = R, c_inner = j->inner;
  cl_int excl = j->exclusive ? 1 : 0, one = 1;

  if (j->inner == 1 && R >= 2 * SCAN_IPT * 32) {
    /* Rows of contiguous elements: work-groups walk them in tiles. Too few rows to fill the
     * device (the three-pass plan below would cut them into pieces): one pass with
     * decoupled look-back where the device allows it (single_pass), a work-group per tile.
     * The test sizes groups from the device's limit, as the kernel is not built yet. */
    size_t est = 1, most_wg = ocal__context_info(ctx)->max_work_group_size;
    while (est * 2 <= OCAL__RS_WG_MAX && est * 2 <= most_wg) est *= 2;
    ocal__kernel *kl = NULL;
    if (single_pass_device(ctx) && j->outer < ocal__ceil_div(target, est) &&
        R / (4 * est * SCAN_IPT) >= 2) {
      /* A device whose local memory is below the one-pass kernel's tile (OCAL_UNSUPPORTED
       * when the kernel is created) takes the three passes, whose tiles are smaller. */
      status = j->kernel(j->data, OCAL__SCAN_LOOKBACK, &kl);
      if (status != OCAL_OK && status != OCAL_UNSUPPORTED) return status;
    }
    if (kl) {
      size_t ll = ocal__rs_local(kl, OCAL__RS_WG_MAX);
      size_t per_row = ocal__ceil_div(R, ll * ocal__scan_lookback_ipt(ctx, acc_bytes));
      size_t tiles = j->outer * per_row;
      if (single_pass(ctx, tiles)) {
        cl_uint base, epoch;
        if ((status = ocal__lookback_reserve(ctx, j->lb, tiles, &base, &epoch, j->func)) != OCAL_OK)
          return status;
        cl_ulong c_tiles = per_row, c_cap = j->lb->cap;
        with_input(&v, j);
        push(&v, sizeof(cl_mem), &omem);
        push(&v, sizeof ooff, &ooff);
        push(&v, sizeof c_R, &c_R);
        push(&v, sizeof c_tiles, &c_tiles);
        push(&v, sizeof(cl_mem), &j->lb->mem);
        push(&v, sizeof c_cap, &c_cap);
        push(&v, sizeof base, &base);
        push(&v, sizeof epoch, &epoch);
        push(&v, sizeof excl, &excl);
        return launch(j, kl, &v, tiles * ll, ll);
      }
    }
    if ((status = j->kernel(j->data, OCAL__SCAN_TILES, &k)) != OCAL_OK) return status;
    size_t local = ocal__rs_local(k, OCAL__RS_WG_MAX);
    if (ocal__context_info(ctx)->type == OCAL_DEVICE_GPU) /* one size on CPUs: each is a compile on PoCL */
      while (local > 64 && R < 4 * local * SCAN_IPT) local /= 2;
    size_t tile = local * SCAN_IPT, chunks = 1;
    size_t groups_wanted = ocal__ceil_div(target, local);
    if (j->outer < groups_wanted) {
      chunks = ocal__ceil_div(groups_wanted, j->outer);
      size_t most = R / (4 * tile); /* at least 4 tiles per piece */
      if (chunks > most) chunks = most;
      if (chunks < 1) chunks = 1;
    }
    size_t clen = ocal__round_up(ocal__ceil_div(R, chunks), tile);
    chunks = ocal__ceil_div(R, clen);
    cl_ulong c_chunks = chunks, c_clen = clen;
    if (chunks > 1) {
      /* (1) piece totals, (2) their exclusive scan in place, per row. */
      if ((status = scratch(j, j->outer * chunks * acc_bytes, &P)) != OCAL_OK) return status;
      ocal__kernel *kr;
      if ((status = j->kernel(j->data, OCAL__SCAN_CONTIG_REDUCE, &kr)) != OCAL_OK) return status;
      size_t lr = ocal__rs_local(kr, local);
      with_input(&v, j);
      push(&v, sizeof c_R, &c_R);
      push(&v, sizeof c_chunks, &c_chunks);
      push(&v, sizeof c_clen, &c_clen);
      push(&v, sizeof(cl_mem), &P);
      if ((status = launch(j, kr, &v, j->outer * chunks * lr, lr)) != OCAL_OK) return status;
      ocal__kernel *ka;
      if ((status = j->kernel(j->data, OCAL__SCAN_TILES_ACC, &ka)) != OCAL_OK) return status;
      size_t la = ocal__rs_local(ka, OCAL__RS_WG_MAX);
      if (ocal__context_info(ctx)->type == OCAL_DEVICE_GPU)
        while (la > 64 && chunks < la * SCAN_IPT / 2) la /= 2;
      cl_ulong one_chunk = 1, plen = chunks;
      v.n = 0;
      push(&v, sizeof(cl_mem), &P);
      push(&v, sizeof zero, &zero);
      push(&v, sizeof(cl_mem), &P);
      push(&v, sizeof zero, &zero);
      push(&v, sizeof plen, &plen);
      push(&v, sizeof one_chunk, &one_chunk);
      push(&v, sizeof plen, &plen);
      push(&v, sizeof(cl_mem), &P);
      push(&v, sizeof one, &one);
      if ((status = launch(j, ka, &v, j->outer * la, la)) != OCAL_OK) return status;
    }
    /* (3) every piece from its starting value (P is unread with one piece). */
    cl_mem Parg = P ? P : omem;
    with_input(&v, j);
    push(&v, sizeof(cl_mem), &omem);
    push(&v, sizeof ooff, &ooff);
    push(&v, sizeof c_R, &c_R);
    push(&v, sizeof c_chunks, &c_chunks);
    push(&v, sizeof c_clen, &c_clen);
    push(&v, sizeof(cl_mem), &Parg);
    push(&v, sizeof excl, &excl);
    return launch(j, k, &v, j->outer * chunks * local, local);
  }

  /* Columns (or short rows): a work-item per (row, piece, column). */
  if ((status = j->kernel(j->data, OCAL__SCAN_STRIDED, &k)) != OCAL_OK) return status;
  size_t local = ocal__rs_local(k, OCAL__RS_WG_MAX), chunks = 1;
  if (lines < target && R > 64) {
    chunks = ocal__ceil_div(target, lines);
    size_t most = ocal__ceil_div(R, 32);
    if (chunks > most) chunks = most;
    if (chunks > 256) chunks = 256; /* the pieces' totals are scanned serially */
  }
  size_t clen = ocal__ceil_div(R, chunks);
  chunks = ocal__ceil_div(R, clen);
  cl_ulong c_chunks = chunks, c_clen = clen;
  size_t items = lines * chunks < 8 * target ? lines * chunks : 8 * target;
  size_t global = ocal__round_up(items, local);
  if (chunks > 1) {
    if ((status = scratch(j, lines * chunks * acc_bytes, &P)) != OCAL_OK) return status;
    ocal__kernel *kr, *ka;
    if ((status = j->kernel(j->data, OCAL__SCAN_STRIDED_REDUCE, &kr)) != OCAL_OK) return status;
    with_input(&v, j);
    push(&v, sizeof c_outer, &c_outer);
    push(&v, sizeof c_R, &c_R);
    push(&v, sizeof c_inner, &c_inner);
    push(&v, sizeof c_chunks, &c_chunks);
    push(&v, sizeof c_clen, &c_clen);
    push(&v, sizeof(cl_mem), &P);
    size_t lr = ocal__rs_local(kr, OCAL__RS_WG_MAX);
    if ((status = launch(j, kr, &v, ocal__round_up(items, lr), lr)) != OCAL_OK) return status;
    /* The totals as an (outer, chunks, inner) block, scanned along chunks in place. */
    if ((status = j->kernel(j->data, OCAL__SCAN_STRIDED_ACC, &ka)) != OCAL_OK) return status;
    cl_ulong one_chunk = 1;
    size_t la = ocal__rs_local(ka, OCAL__RS_WG_MAX);
    size_t litems = lines < 8 * target ? lines : 8 * target;
    v.n = 0;
    push(&v, sizeof(cl_mem), &P);
    push(&v, sizeof zero, &zero);
    push(&v, sizeof(cl_mem), &P);
    push(&v, sizeof zero, &zero);
    push(&v, sizeof c_outer, &c_outer);
    push(&v, sizeof c_chunks, &c_chunks);
    push(&v, sizeof c_inner, &c_inner);
    push(&v, sizeof one_chunk, &one_chunk);
    push(&v, sizeof c_chunks, &c_chunks);
    push(&v, sizeof(cl_mem), &P);
    push(&v, sizeof one, &one);
    if ((status = launch(j, ka, &v, ocal__round_up(litems, la), la)) != OCAL_OK) return status;
  }
  cl_mem Parg = P ? P : omem;
  with_input(&v, j);
  push(&v, sizeof(cl_mem), &omem);
  push(&v, sizeof ooff, &ooff);
  push(&v, sizeof c_outer, &c_outer);
  push(&v, sizeof c_R, &c_R);
  push(&v, sizeof c_inner, &c_inner);
  push(&v, sizeof c_chunks, &c_chunks);
  push(&v, sizeof c_clen, &c_clen);
  push(&v, sizeof(cl_mem), &Parg);
  push(&v, sizeof excl, &excl);
  return launch(j, k, &v, global, local);
}

ocal_status ocal__scan_enqueue(const ocal__scan_job *j) {
  ocal_status status = plan_and_launch(j);
  if (status != OCAL_OK) ocal__claim_error(j->func);
  return status;
}

/* The built-in scans: kernel `kind` of operation op for the input's type, from the
 * per-context table (ocal__rs_kernel). */
typedef struct {
  ocal_context ctx;
  ocal__rs *rs;
  ocal_scan_op op;
  ocal_dtype dtype;
} builtin_scan;

static ocal_status builtin_kernel(void *data, int kind, ocal__kernel **k) {
  const builtin_scan *b = data;
  char name[64];
  snprintf(name, sizeof name, "%s_%s", op_names[b->op], ocal__scan_kernel_names[kind]);
  return ocal__rs_kernel(b->ctx, b->rs, OCAL__RS_SCAN, b->dtype,
                         (int)b->op * OCAL__SCAN_KINDS + kind, name, k);
}

static ocal_status enqueue(const char *func, ocal_scan_op op, ocal_buffer x,
                           const ocal__rs_geom *g, int exclusive, ocal_buffer out) {
  ocal_context ctx = x->ctx;
  ocal__rs *rs;
  ocal_status status = ocal__rs_get(ctx, &rs, func);
  if (status != OCAL_OK) return status;
  cl_mem xmem = x->mem;
  cl_ulong xoff = x->offset;
  const ocal__arg in[] = {{sizeof(cl_mem), &xmem}, {sizeof xoff, &xoff}};
  builtin_scan b = {ctx, rs, op, x->dtype};
  ocal__scan_job job = {.ctx = ctx,
                        .func = func,
                        .kernel = builtin_kernel,
                        .data = &b,
                        .in = in,
                        .nin = 2,
                        .out = out->mem,
                        .ooff = out->offset,
                        .result_bytes = ocal_dtype_size(out->dtype),
                        .outer = g->outer,
                        .R = g->R,
                        .inner = g->inner,
                        .exclusive = exclusive,
                        .lb = &rs->lb,
                        .scratch = &rs->scratch,
                        .scratch_bytes = &rs->scratch_bytes};
  pthread_mutex_lock(&rs->lock);
  status = ocal__scan_enqueue(&job);
  pthread_mutex_unlock(&rs->lock);
  return status;
}

static ocal_status scan(const char *func, ocal_scan_op op, ocal_buffer x, int axis,
                        int exclusive, ocal_buffer out) {
  if ((unsigned)op >= OCAL_SCAN_OP_COUNT)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func, "unknown scan %d", (int)op);
  if (exclusive != 0 && exclusive != 1)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "exclusive is %d: 0 for an inclusive scan, 1 for an exclusive one",
                      exclusive);
  ocal_status status = ocal__rs_check_buffers(func, x, out);
  if (status != OCAL_OK) return status;
  ocal__rs_geom g;
  if ((status = ocal__rs_geometry(func, x, axis, &g)) != OCAL_OK) return status;
  if ((status = ocal__reject_half(x->dtype, "scans", func)) != OCAL_OK) return status;
  ocal_dtype want;
  if ((status = ocal_scan_dtype(op, x->dtype, &want)) != OCAL_OK) return status;
  if (out->dtype != want)
    return ocal__fail(OCAL_TYPE_MISMATCH, func, "out has dtype %s, but %s of a %s buffer gives %s%s",
                      ocal_dtype_name(out->dtype), op_public_names[op], ocal_dtype_name(x->dtype),
                      ocal_dtype_name(want),
                      want != x->dtype ? " (integer sums are 64-bit, as in NumPy)" : "");
  int same = g.axis_all ? out->numel == x->numel
                        : out->ndim == x->ndim &&
                              memcmp(out->shape, x->shape, (size_t)x->ndim * sizeof(size_t)) == 0;
  if (!same) {
    char xs[96], os[96];
    ocal__shape_format(x->ndim, x->shape, xs, sizeof xs);
    ocal__shape_format(out->ndim, out->shape, os, sizeof os);
    if (g.axis_all)
      return ocal__fail(OCAL_SHAPE_MISMATCH, func,
                        "out has shape %s (%zu elements), but %s of x with shape %s over the "
                        "whole buffer gives %zu elements",
                        os, out->numel, op_public_names[op], xs, x->numel);
    return ocal__fail(OCAL_SHAPE_MISMATCH, func,
                      "out has shape %s, but %s of x along an axis gives x's shape %s", os,
                      op_public_names[op], xs);
  }
  if (x->numel == 0) return OCAL_OK;
  /* In place is fine (each element is read before it is written); any other overlap is not. */
  if (ocal__buffers_overlap(x, out) && !(out->offset == x->offset && out->dtype == x->dtype))
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "out overlaps x without being x: scan in place (out == x) or into "
                      "separate memory");
  return enqueue(func, op, x, &g, exclusive, out);
}

ocal_status ocal_scan(ocal_scan_op op, ocal_buffer x, int axis, int exclusive, ocal_buffer out) {
  return scan(__func__, op, x, axis, exclusive, out);
}

ocal_status ocal_cumsum(ocal_buffer x, int axis, ocal_buffer out) {
  return scan(__func__, OCAL_SCAN_SUM, x, axis, 0, out);
}

ocal_status ocal_cummax(ocal_buffer x, int axis, ocal_buffer out) {
  return scan(__func__, OCAL_SCAN_MAX, x, axis, 0, out);
}
