/* ocal — GEMM, GEMV and the BLAS-1 calls on ocal buffers: the checks and the dispatch.
 *
 * ocal owns the interface and the checks: every call validates its operands (handles,
 * context, element type, shapes, overlap) before an engine sees them, so a mistake comes back
 * as an ocal status with the shapes in the message instead of a bare engine code. GEMM and
 * GEMV then ask the rule (rule.c) which engine runs them and run it (engine.h); the engines
 * never call back here. BLAS-1 (ocal_axpy, ocal_scale, ocal_dot, ocal_norm2) is ocal's own
 * elementwise and reduction code, in every build. */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine.h"

/* The engines this ocal was built with (NULL: left out by configure). */
#ifdef OCAL_HAVE_CLBLAST
extern const ocal__gemm_engine ocal__gemm_engine_clblast, ocal__gemm_engine_splitk;
extern const ocal__gemv_engine ocal__gemv_engine_clblast;
#define CLBLAST_OR_NULL(e) (&(e))
#else
#define CLBLAST_OR_NULL(e) NULL
#endif
const ocal__gemm_engine *const ocal__gemm_engines[OCAL__GEMM_ENGINE_COUNT] = {
    [OCAL__GEMM_OWN] = &ocal__gemm_engine_own,
    [OCAL__GEMM_CLBLAST] = CLBLAST_OR_NULL(ocal__gemm_engine_clblast),
    [OCAL__GEMM_SPLITK] = CLBLAST_OR_NULL(ocal__gemm_engine_splitk),
    [OCAL__GEMM_TC] = &ocal__gemm_engine_tc,
    [OCAL__GEMM_WGMMA] = &ocal__gemm_engine_wgmma,
    [OCAL__GEMM_DMMA] = &ocal__gemm_engine_dmma,
};
const ocal__gemv_engine *const ocal__gemv_engines[OCAL__GEMV_ENGINE_COUNT] = {
    [OCAL__GEMV_OWN] = &ocal__gemv_engine_own,
    [OCAL__GEMV_CLBLAST] = CLBLAST_OR_NULL(ocal__gemv_engine_clblast),
};

/* ---- operand checks ------------------------------------------------------------------- */

/* "{7, 13}" */
static const char *shape_text(ocal_buffer b, char *out, size_t size) {
  size_t used = 0;
  out[0] = '\0';
  used += (size_t)snprintf(out, size, "{");
  for (int i = 0; i < b->ndim && used < size; i++)
    used += (size_t)snprintf(out + used, size - used, "%s%zu", i ? ", " : "", b->shape[i]);
  if (used < size) snprintf(out + used, size - used, "}");
  return out;
}

/* Three operands' shapes as text, written only where a message needs them: formatting them on
 * every call cost more than the rest of the checks. */
typedef struct shapes3 {
  char a[96], b[96], c[96];
} shapes3;

static const shapes3 *shapes_of(ocal_buffer a, ocal_buffer b, ocal_buffer c, shapes3 *s) {
  shape_text(a, s->a, sizeof s->a);
  shape_text(b, s->b, sizeof s->b);
  shape_text(c, s->c, sizeof s->c);
  return s;
}

/* Validates handles, context, element type and fp64 of n operands; the first one's type is
 * the call's. */
static ocal_status check_operands(const char *func, int n, const ocal_buffer *bufs,
                                  const char *const *names, ocal_context *ctx,
                                  ocal_dtype *dtype, int half_ok) {
  for (int i = 0; i < n; i++) {
    if (!bufs[i]) return ocal__fail(OCAL_INVALID_HANDLE, func, "%s is NULL", names[i]);
    ocal_status s = ocal__check_buffer(bufs[i], func);
    if (s != OCAL_OK) return s;
  }
  *ctx = bufs[0]->ctx;
  *dtype = bufs[0]->dtype;
  if (*dtype != OCAL_F32 && *dtype != OCAL_F64 && !(half_ok && ocal__dtype_is_half(*dtype)))
    return ocal__fail(OCAL_UNSUPPORTED, func, "%s is %s: this call takes %s; convert with ocal_cast",
                      names[0], ocal_dtype_name(*dtype),
                      half_ok ? "f32, f64, f16 or bf16 buffers"
                              : "f32 or f64 buffers (ocal_gemm also takes f16 and bf16)");
  for (int i = 1; i < n; i++) {
    if (bufs[i]->ctx != *ctx)
      return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                        "%s and %s belong to different contexts", names[0], names[i]);
    if (bufs[i]->dtype != *dtype)
      return ocal__fail(OCAL_TYPE_MISMATCH, func, "%s is %s but %s is %s", names[0],
                        ocal_dtype_name(*dtype), names[i], ocal_dtype_name(bufs[i]->dtype));
  }
  if (*dtype == OCAL_F64 && !(*ctx)->fp64)
    return ocal__fail(OCAL_UNSUPPORTED, func, "f64 needs double precision, which %s lacks",
                      (*ctx)->info.name);
  return OCAL_OK;
}

/* Fails when two operands share memory over overlapping element ranges. */
static ocal_status check_disjoint(const char *func, ocal_buffer out, const char *out_name,
                                  ocal_buffer in, const char *in_name) {
  if (!out->mem || out->mem != in->mem || out->numel == 0 || in->numel == 0) return OCAL_OK;
  if (out->offset < in->offset + in->numel && in->offset < out->offset + out->numel)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "%s overlaps %s (views of one buffer): the result would overwrite an input",
                      out_name, in_name);
  return OCAL_OK;
}

#define OCAL__CHECK(expr)                \
  do {                                   \
    ocal_status ocal__s = (expr);        \
    if (ocal__s != OCAL_OK) return ocal__s; \
  } while (0)

/* y = beta * y for a whole buffer, as BLAS does when the product is empty: beta = 0 writes
 * zeros without reading y (so NaNs in it go), beta = 1 leaves y alone. */
ocal_status ocal__blas_scale_output(ocal_buffer y, double beta, const char *func) {
  if (y->numel == 0 || beta == 1.0) return OCAL_OK;
  if (beta == 0.0) {
    double zero = 0.0;
    float zero_f = 0.0f;
    return ocal_buffer_fill(y, y->dtype == OCAL_F32 ? (const void *)&zero_f : (const void *)&zero);
  }
#ifdef OCAL_HAVE_CLBLAST
  return ocal__clblast_scal(y->ctx, y->dtype, beta, y->mem, y->offset, y->numel, func);
#else
  (void)func;
  return ocal_scale(beta, y);
#endif
}

/* ---- GEMM ----------------------------------------------------------------------------- */

/* The facts of the context and the rule's choice for a product. The choice of any engine but
 * CLBlast's never depends on CLBlast's parameters, so the rule is asked with the device's facts
 * first: the parameters in effect sit behind the tuning table's lock, a cost small products
 * notice. */
static ocal__gemm_choice choose(ocal_context ctx, ocal_dtype dtype, ocal_transpose ta, size_t m,
                                size_t n, size_t k, size_t batch, int small_offsets) {
  ocal__blas_facts facts;
  ocal__blas_facts_of_device(ctx, dtype, &facts);
  ocal__gemm_choice c = ocal__gemm_rule(&facts, dtype, ta, m, n, k, batch, small_offsets);
  if ((c.engine == OCAL__GEMM_CLBLAST || c.engine == OCAL__GEMM_SPLITK) && facts.have_clblast) {
    ocal__blas_facts_of(ctx, dtype, &facts);
    c = ocal__gemm_rule(&facts, dtype, ta, m, n, k, batch, small_offsets);
  }
  return c;
}

static ocal_status run_widened(const ocal__gemm_call *call, const ocal__gemm_choice *choice);

/* Runs the engine the rule chose. An engine whose kernels do not build on this device ran
 * nothing (it leaves not_built 0 when OCAL_GEMM named it): ocal's kernel does an f32 or f64
 * product, the widened product an f16/bf16 one. */
static ocal_status run_choice(const ocal__gemm_call *call, const ocal__gemm_choice *choice) {
  if (choice->widen) return run_widened(call, choice);
  int not_built = 0;
  ocal_status s = ocal__gemm_engines[choice->engine]->run(call, choice, &not_built);
  if (!not_built) return s;
  if (ocal__dtype_is_half(call->dtype)) {
    int small = call->a->numel <= 0x7fffffff && call->b->numel <= 0x7fffffff;
    ocal__gemm_choice wide = choose(call->ctx, OCAL_F32, call->ta, call->m, call->n, call->k,
                                    call->batch, small);
    if (wide.engine == OCAL__GEMM_ENGINE_COUNT)
      return ocal__fail(OCAL_UNSUPPORTED, "ocal_gemm", "no engine can run this %s %zux%zux%zu "
                        "product: %s", ocal_dtype_name(call->dtype), call->m, call->n, call->k,
                        wide.reason);
    wide.widen = 1;
    return run_widened(call, &wide);
  }
  ocal__gemm_choice own = {OCAL__GEMM_OWN, 0, 0, 0, 0, "the engine's kernels do not build here"};
  return ocal__gemm_engine_own.run(call, &own, &not_built);
}

/* An f16 or bf16 product as an f32 one, the portable path for every device: the operands
 * converted to f32 in pooled buffers, the f32 product on the engine the rule chose (NULL: k
 * is 0, C is only scaled), and the result rounded back to nearest even. C is read only when
 * beta is not 0, so NaNs in an uninitialised C do not leak into the result. */
static ocal_status run_widened(const ocal__gemm_call *call, const ocal__gemm_choice *choice) {
  ocal_buffer w[3] = {NULL, NULL, NULL};
  const ocal_buffer in[3] = {call->a, call->b, call->c};
  ocal_status s = OCAL_OK;
  for (int i = 0; i < 3 && s == OCAL_OK; i++) {
    s = ocal_buffer_create(call->ctx, OCAL_F32, in[i]->ndim, in[i]->shape, &w[i]);
    if (s == OCAL_OK && ((i < 2 && choice) || (i == 2 && call->beta != 0.0)))
      s = ocal_cast(in[i], w[i]);
  }
  if (s == OCAL_OK && !choice) s = ocal__blas_scale_output(w[2], call->beta, "ocal_gemm");
  if (s == OCAL_OK && choice) {
    ocal__gemm_call wide = *call;
    wide.dtype = OCAL_F32;
    wide.a = w[0], wide.b = w[1], wide.c = w[2];
    ocal__gemm_choice f32 = *choice;
    f32.widen = 0;
    s = run_choice(&wide, &f32);
  }
  if (s == OCAL_OK) s = ocal_cast(w[2], call->c);
  for (int i = 0; i < 3; i++)
    if (w[i]) ocal_buffer_release(w[i]);
  return s;
}

ocal_status ocal_gemm(ocal_transpose ta, ocal_transpose tb, double alpha, ocal_buffer a,
                      ocal_buffer b, double beta, ocal_buffer c) {
  static const char *const names[] = {"a", "b", "c"};
  ocal_buffer bufs[] = {a, b, c};
  ocal_context ctx;
  ocal_dtype dtype;
  OCAL__CHECK(check_operands(__func__, 3, bufs, names, &ctx, &dtype, 1));
  if ((ta != OCAL_NO_TRANS && ta != OCAL_TRANS) || (tb != OCAL_NO_TRANS && tb != OCAL_TRANS))
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "ta and tb must be OCAL_NO_TRANS or OCAL_TRANS");

  shapes3 t;
  if (c->ndim != 2 && c->ndim != 3)
    return OCAL_FAIL(OCAL_SHAPE_MISMATCH,
                     "c is %s: it must be 2-D {m, n} or 3-D {batch, m, n}",
                     shapes_of(a, b, c, &t)->c);
  if ((a->ndim != 2 && a->ndim != c->ndim) || (b->ndim != 2 && b->ndim != c->ndim)) {
    shapes_of(a, b, c, &t);
    return OCAL_FAIL(OCAL_SHAPE_MISMATCH,
                     "a is %s, b is %s, c is %s: a and b must be 2-D, or 3-D like c for a "
                     "batched product",
                     t.a, t.b, t.c);
  }
  size_t batch = c->ndim == 3 ? c->shape[0] : 1;
  if ((a->ndim == 3 && a->shape[0] != batch) || (b->ndim == 3 && b->shape[0] != batch)) {
    shapes_of(a, b, c, &t);
    return OCAL_FAIL(OCAL_SHAPE_MISMATCH, "batch sizes differ: a is %s, b is %s, c is %s", t.a,
                     t.b, t.c);
  }
  int an = a->ndim, bn = b->ndim, cn = c->ndim;
  size_t m = c->shape[cn - 2], n = c->shape[cn - 1];
  size_t a_rows = a->shape[an - 2], a_cols = a->shape[an - 1];
  size_t b_rows = b->shape[bn - 2], b_cols = b->shape[bn - 1];
  size_t am = ta ? a_cols : a_rows, ak = ta ? a_rows : a_cols;
  size_t bk = tb ? b_cols : b_rows, bnn = tb ? b_rows : b_cols;
  if (ak != bk || am != m || bnn != n) {
    shapes_of(a, b, c, &t);
    return OCAL_FAIL(OCAL_SHAPE_MISMATCH,
                     "%s: op(a) is %zux%zu (a %s%s), op(b) is %zux%zu (b %s%s), c is %zux%zu "
                     "(%s)",
                     ak != bk   ? "inner dimensions differ"
                     : am != m  ? "rows of op(a) and c differ"
                                : "columns of op(b) and c differ",
                     am, ak, t.a, ta ? ", transposed" : "", bk, bnn, t.b,
                     tb ? ", transposed" : "", m, n, t.c);
  }
  OCAL__CHECK(check_disjoint(__func__, c, "c", a, "a"));
  OCAL__CHECK(check_disjoint(__func__, c, "c", b, "b"));
  if (m == 0 || n == 0 || batch == 0) return OCAL_OK;
  int half = ocal__dtype_is_half(dtype);
  ocal__gemm_call call = {ctx, dtype, ta, tb, m, n, ak, batch, alpha, beta, a, b, c};
  if (ak == 0) return half ? run_widened(&call, NULL) : ocal__blas_scale_output(c, beta, __func__);
  /* CLBlast's indices are int: the split-K engine needs every element index to fit (for a
   * widened product, those of its f32 copies). */
  size_t a_end = half ? a->numel : a->offset + a->numel;
  size_t b_end = half ? b->numel : b->offset + b->numel;
  int small_offsets = a_end <= 0x7fffffff && b_end <= 0x7fffffff;
  ocal__gemm_choice choice = choose(ctx, dtype, ta, m, n, ak, batch, small_offsets);
  if (choice.engine == OCAL__GEMM_ENGINE_COUNT)
    return OCAL_FAIL(OCAL_UNSUPPORTED, "no engine can run this %s %zux%zux%zu product: %s",
                     ocal_dtype_name(dtype), m, n, ak, choice.reason);
  ocal_status s = run_choice(&call, &choice);
  if (s != OCAL_OK) ocal__claim_error(__func__);
  return s;
}

ocal_status ocal_gemm_engine_query(ocal_context ctx, ocal_dtype dtype, ocal_transpose ta,
                                   size_t m, size_t n, size_t k, size_t batch,
                                   const char **engine, const char **reason) {
  OCAL__CHECK(ocal__check_context(ctx, __func__));
  if (!engine || !reason)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "engine and reason must not be NULL");
  if (dtype != OCAL_F32 && dtype != OCAL_F64 && !ocal__dtype_is_half(dtype))
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "dtype is %s: GEMM takes f32, f64, f16 or bf16",
                     ocal_dtype_name(dtype));
  if (ta != OCAL_NO_TRANS && ta != OCAL_TRANS)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "ta must be OCAL_NO_TRANS or OCAL_TRANS");
  if (!m || !n || !k || !batch)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT,
                     "m, n, k and batch must be at least 1 (an empty product runs no engine)");
  /* The product's own choice (its offsets taken as small). */
  ocal__gemm_choice c = choose(ctx, dtype, ta, m, n, k, batch, 1);
  *reason = c.reason;
  if (c.engine == OCAL__GEMM_ENGINE_COUNT) {
    *engine = "none";
    return OCAL_FAIL(OCAL_UNSUPPORTED, "no engine can run this %s %zux%zux%zu product: %s",
                     ocal_dtype_name(dtype), m, n, k, c.reason);
  }
  const ocal__gemm_engine *e = ocal__gemm_engines[c.engine];
  *engine = ocal__dtype_is_half(dtype) && !c.widen ? e->name_half : e->name;
  return OCAL_OK;
}

ocal_status ocal_gemm_get_precision(ocal_context ctx, ocal_gemm_precision *precision,
                                    int *tensor_cores, const char **detail) {
  OCAL__CHECK(ocal__check_context(ctx, __func__));
  if (!precision || !tensor_cores)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "precision and tensor_cores must not be NULL");
  *precision = (ocal_gemm_precision)ctx->settings.gemm_precision;
  int ok = 0;
  const char *text = NULL;
  OCAL__CHECK(ocal__gemm_tc_answer(ctx, &ok, &text, NULL, NULL));
  *tensor_cores = ok;
  if (detail) *detail = text;
  return OCAL_OK;
}

/* ---- GEMV ----------------------------------------------------------------------------- */

ocal_status ocal_gemv(ocal_transpose ta, double alpha, ocal_buffer a, ocal_buffer x,
                      double beta, ocal_buffer y) {
  static const char *const names[] = {"a", "x", "y"};
  ocal_buffer bufs[] = {a, x, y};
  ocal_context ctx;
  ocal_dtype dtype;
  OCAL__CHECK(check_operands(__func__, 3, bufs, names, &ctx, &dtype, 0));
  if (ta != OCAL_NO_TRANS && ta != OCAL_TRANS)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "ta must be OCAL_NO_TRANS or OCAL_TRANS");
  shapes3 t;
  if (a->ndim != 2)
    return OCAL_FAIL(OCAL_SHAPE_MISMATCH, "a is %s: it must be 2-D", shapes_of(a, x, y, &t)->a);
  size_t rows = a->shape[0], cols = a->shape[1];
  size_t opm = ta ? cols : rows, opn = ta ? rows : cols;
  if (x->numel != opn || y->numel != opm) {
    shapes_of(a, x, y, &t);
    return OCAL_FAIL(OCAL_SHAPE_MISMATCH,
                     "op(a) is %zux%zu (a %s%s): x must have %zu elements (x is %s) and y %zu "
                     "(y is %s)",
                     opm, opn, t.a, ta ? ", transposed" : "", opn, t.b, opm, t.c);
  }
  OCAL__CHECK(check_disjoint(__func__, y, "y", a, "a"));
  OCAL__CHECK(check_disjoint(__func__, y, "y", x, "x"));
  if (opm == 0) return OCAL_OK;
  if (opn == 0) return ocal__blas_scale_output(y, beta, __func__);
  ocal__blas_facts facts;
  ocal__blas_facts_of_device(ctx, dtype, &facts);
  const char *reason;
  ocal__gemv_engine_id id = ocal__gemv_rule(&facts, &reason);
  if (id == OCAL__GEMV_ENGINE_COUNT) return OCAL_FAIL(OCAL_UNSUPPORTED, "%s", reason);
  ocal_status s = ocal__gemv_engines[id]->run(ctx, dtype, ta == OCAL_TRANS, rows, cols, alpha,
                                              a, x, beta, y);
  if (s != OCAL_OK) ocal__claim_error(__func__);
  return s;
}

/* BLAS-1 is ocal's own: ocal_axpy and ocal_scale (ocal/ops.h), ocal_dot and ocal_norm2
 * (ocal/reduce.h), faster than CLBlast's and built without CLBlast too. */
