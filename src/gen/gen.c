/* ocal — kernels generated from the user's expressions: elementwise, reduction, scan: the
 * generator objects, their builds and their runs (string building is source.c, expression
 * rewriting rewrite.c, argument marshalling args.c).
 *
 * Each generator writes one OpenCL C program from the argument list and the expressions,
 * builds it through the context's caches (memory, then disk, then the compiler) as ocal's
 * own kernels are built, and keeps its kernels. A scan is cl/scan.cl itself behind a
 * generated prologue, planned and launched by the scan engine that runs ocal_cumsum
 * (src/ops/scan_engine.h); a reduction is cl/reduce.cl behind a generated prologue, planned
 * and launched by the reduction engine that runs ocal_sum (src/ops/reduce_engine.h).
 *
 * Pointer arguments are passed as (memory, offset in elements) and rebased at the top of
 * every kernel, so views work and the user's expressions index from the view's start. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_internal.h"

#define GEN_MAGIC 0x6f67656eu /* "ogen" */
#define OCAL__GEN_MAX_VEC_ARGS 32

/* ---- creation ------------------------------------------------------------------------ */

static ocal_status check_gen(ocal_gen g, const char *func) {
  if (!g || g->magic != GEN_MAGIC)
    return ocal__fail(OCAL_INVALID_HANDLE, func, "gen is NULL or not an ocal_gen");
  return OCAL_OK;
}

static void gen_free(ocal_gen g) {
  if (!g) return;
  if (g->scratch) ocal__device_free(g->ctx, g->scratch);
  if (g->lb.mem) ocal__device_free(g->ctx, g->lb.mem);
  pthread_mutex_destroy(&g->lock);
  pthread_mutex_destroy(&g->klock);
  free(g->params);
  free(g->source);
  free(g->full_source);
  g->magic = 0;
  if (g->ctx) ocal__context_unref(g->ctx);
  free(g);
}

/* The public creators check their `gen` out-parameter (check_gen_out) before anything else, so
 * that nothing is built for a result that has nowhere to go; `out` here is their local. */
static ocal_status check_gen_out(const char *func, ocal_gen *gen) {
  if (!gen) return ocal__fail(OCAL_INVALID_ARGUMENT, func, "gen (the out-parameter) must not be NULL");
  *gen = NULL;
  return OCAL_OK;
}

static ocal_status gen_new(const char *func, ocal_context ctx, gen_kind kind, ocal_dtype dtype,
                           const char *arguments, ocal_gen *out) {
  *out = NULL;
  ocal_status status = ocal__check_context(ctx, func);
  if (status != OCAL_OK) return status;
  if (kind != GEN_ELEMENTWISE) {
    if ((unsigned)dtype >= OCAL_DTYPE_COUNT)
      return ocal__fail(OCAL_INVALID_ARGUMENT, func, "unknown element type %d", (int)dtype);
    if (ocal__dtype_is_complex(dtype) || ocal__dtype_is_half(dtype))
      return ocal__fail(OCAL_UNSUPPORTED, func,
                        "%s values are not supported (element types: f32, f64, i32, u32, i64, "
                        "u64, u8; convert f16 and bf16 to f32 with ocal_cast)",
                        ocal_dtype_name(dtype));
  }
  ocal_gen g = calloc(1, sizeof *g);
  if (!g) return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, func, "no memory for the generator");
  pthread_mutex_init(&g->lock, NULL);
  pthread_mutex_init(&g->klock, NULL);
  g->kind = kind;
  g->dtype = dtype;
  if ((status = ocal__gen_parse_params(func, arguments, &g->params, &g->nparams)) != OCAL_OK) {
    gen_free(g);
    return status;
  }
  if (g->nparams > OCAL_GEN_MAX_ARGS) {
    /* Refused here, not at every run: each pointer takes two kernel arguments (the buffer
     * and its offset) beside the generated kernels' own, within OCAL__GEN_MAX_CL_ARGS. */
    status = ocal__fail(OCAL_UNSUPPORTED, func,
                        "the argument list declares %d arguments; a generator takes at most %d "
                        "(OCAL_GEN_MAX_ARGS): pass more data in fewer buffers",
                        g->nparams, OCAL_GEN_MAX_ARGS);
    gen_free(g);
    return status;
  }
  for (int k = 0; k < g->nparams; k++)
    if (ocal__gen_uses_double(g->params[k].dtype) && !ocal__context_fp64(ctx)) {
      /* The message quotes the parameter: format it before the generator is freed. */
      status = ocal__fail(OCAL_UNSUPPORTED, func,
                          "argument '%s' is %s, but device '%s' has %s", g->params[k].name,
                          ocal__dtype_cl_type(g->params[k].dtype), ocal__context_info(ctx)->name,
                          ocal__context_info(ctx)->has_fp64 ? "double precision turned off (OCAL_FP64=0 or "
                                               "the context's fp64 option)"
                                             : "no double precision");
      gen_free(g);
      return status;
    }
  if (kind != GEN_ELEMENTWISE && ocal__gen_uses_double(dtype) && !ocal__context_fp64(ctx)) {
    gen_free(g);
    return ocal__fail(OCAL_UNSUPPORTED, func, "device '%s' has no double precision",
                      ocal__context_info(ctx)->name);
  }
  g->ctx = ctx;
  ocal__context_retain(ctx);
  *out = g;
  return OCAL_OK;
}

/* Appends the generated source with line numbers to the last error (after a build
 * failure, whose log counts lines of it). */
static void append_numbered(const char *src, size_t upto) {
  ocal__append_error("\ngenerated source:\n");
  int line = 1;
  for (const char *p = src; *p && p < src + upto;) {
    const char *e = strchr(p, '\n');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    ocal__append_error("%4d| %.*s\n", line++, (int)len, p);
    p += len + (e ? 1 : 0);
  }
}

/* Builds a program from g->source and fetches its kernel `name`: the whole source
 * (elementwise), or the kernel alone (reductions and scans: cl/reduce.cl or cl/scan.cl behind
 * the prologue, whose operation is `ocal_user`, with -D options that keep kernel `name`). */
static ocal_status gen_get(const char *func, ocal_gen g, const char *name, ocal__kernel **k) {
  char options[160] = "", kname[64];
  if (g->kind != GEN_ELEMENTWISE) {
    snprintf(options, sizeof options,
             "-DOCAL_DTYPE_%s -DOCAL_ONLY -DOCAL_ONLY_ocal_user -DOCAL_KERNEL -DOCAL_KERNEL_%s",
             ocal_dtype_name(g->dtype), name);
    snprintf(kname, sizeof kname, "ocal_user_%s", name);
    name = kname;
  }
  ocal__program *program;
  const char *label = g->kind == GEN_ELEMENTWISE ? "generated elementwise kernel"
                      : g->kind == GEN_REDUCTION  ? "generated reduction kernel"
                                                  : "generated scan kernel";
  ocal_status status = ocal__program_get_from(g->ctx, label, g->source, options, &program, NULL, func);
  if (status == OCAL_BUILD_FAILED) {
    ocal__append_error("\n(in %s)", func);
    append_numbered(g->source, g->own_len ? g->own_len : strlen(g->source));
    return status;
  }
  if (status == OCAL_OK) status = ocal__kernel_get_for(g->ctx, program, name, k, func);
  return status;
}

/* Reductions and scans: kernels[idx], built on its first use. */
static ocal_status gen_kernel(const char *func, ocal_gen g, int idx, ocal__kernel **k) {
  pthread_mutex_lock(&g->klock);
  ocal_status status = OCAL_OK;
  if (!g->kernels[idx]) status = gen_get(func, g, g->kernel_names[idx], &g->kernels[idx]);
  *k = g->kernels[idx];
  pthread_mutex_unlock(&g->klock);
  return status;
}

/* Elementwise: stores the source, builds it and fetches the named kernels. */
static ocal_status gen_build(const char *func, ocal_gen g, ocal__sbuf *b, const char *const *names,
                             int count) {
  if (b->failed) {
    free(b->text);
    return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, func, "no memory for the generated source");
  }
  g->source = b->text;
  ocal_status status = OCAL_OK;
  for (int k = 0; k < count && status == OCAL_OK; k++)
    status = gen_get(func, g, names[k], &g->kernels[k]);
  return status;
}

static void build_vector_form(ocal_gen g, const char *body, const char *preamble) {
  ocal__vec_use use[OCAL__GEN_MAX_VEC_ARGS];
  if (g->nparams == 0 || g->nparams > OCAL__GEN_MAX_VEC_ARGS) return;
  char *vbody = ocal__gen_vectorize_body(g, body, use);
  if (!vbody) return;
  const char *t = ocal__dtype_cl_type(g->params[0].dtype);
  ocal__sbuf b = {0};
  ocal__sb_header(&b, "elementwise (4-wide form)", g, preamble);
  ocal__sb_add(&b, "__kernel void ocal_elementwise_vec(const ulong n");
  ocal__sb_params(&b, g);
  ocal__sb_add(&b, ") {\n");
  ocal__sb_rebase(&b, g);
  ocal__sb_add(&b,
         "  const ulong ocal_nv = n / 4;\n"
         "  for (ulong ocal_q = get_global_id(0); ocal_q < ocal_nv; ocal_q += get_global_size(0)) {\n");
  for (int k = 0; k < g->nparams; k++) {
    const ocal__gen_param *p = &g->params[k];
    if (!p->pointer) continue;
    if (use[k].read)
      ocal__sb_add(&b, "    %s4 %s_ocal_v = ((__global %s%s4 *)%s)[ocal_q];\n", t, p->name,
             p->is_const ? "const " : "", t, p->name);
    else
      ocal__sb_add(&b, "    %s4 %s_ocal_v = (%s4)(0);\n", t, p->name, t);
  }
  ocal__sb_user(&b, "body", vbody);
  ocal__sb_add(&b, "    ;\n");
  for (int k = 0; k < g->nparams; k++) {
    const ocal__gen_param *p = &g->params[k];
    if (p->pointer && use[k].written && !p->is_const)
      ocal__sb_add(&b, "    ((__global %s4 *)%s)[ocal_q] = %s_ocal_v;\n", t, p->name, p->name);
  }
  ocal__sb_add(&b,
         "  }\n"
         "  for (ulong i = ocal_nv * 4 + get_global_id(0); i < n; i += get_global_size(0)) {\n");
  ocal__sb_user(&b, "body", body);
  ocal__sb_add(&b, "  ;}\n}\n");
  free(vbody);
  if (b.failed) {
    free(b.text);
    return;
  }
  ocal__program *program;
  ocal_status status = ocal__program_get(g->ctx, "generated elementwise kernel (4-wide form)",
                                         b.text, "", &program);
  if (status == OCAL_OK) status = ocal__kernel_get(g->ctx, program, "ocal_elementwise_vec", &g->vec);
  if (status != OCAL_OK) {
    g->vec = NULL; /* the scalar form serves; a failed build here is no error of the user's */
    free(b.text);
    return;
  }
  static const char sep[] =
      "\n/* ---- the 4-wide form: a second program, used on GPUs when every buffer starts at "
      "a multiple of 4 elements ---- */\n";
  size_t a = strlen(g->source), c = strlen(b.text);
  g->full_source = malloc(a + sizeof sep + c);
  if (g->full_source) {
    memcpy(g->full_source, g->source, a);
    memcpy(g->full_source + a, sep, sizeof sep - 1);
    memcpy(g->full_source + a + sizeof sep - 1, b.text, c + 1);
  }
  free(b.text);
}

ocal_status ocal_gen_elementwise(ocal_context ctx, const char *arguments, const char *body,
                                 const char *preamble, ocal_gen *gen) {
  ocal_gen g;
  ocal_status status = check_gen_out(__func__, gen);
  if (status != OCAL_OK) return status;
  if ((status = gen_new(__func__, ctx, GEN_ELEMENTWISE, OCAL_F32, arguments, &g)) != OCAL_OK)
    return status;
  if (!body || !body[0]) {
    gen_free(g);
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "body must not be NULL or empty");
  }
  ocal__sbuf b = {0};
  ocal__sb_header(&b, "elementwise", g, preamble);
  /* CPUs: one work-item per index, straight-line code: PoCL vectorises a work-group across
   * its work-items only then (a grid-stride loop ran at about half of ocal_axpy's bandwidth
   * there, this form at or above it). */
  ocal__sb_add(&b, "__kernel void ocal_elementwise_flat(const ulong n");
  ocal__sb_params(&b, g);
  ocal__sb_add(&b, ") {\n");
  ocal__sb_rebase(&b, g);
  ocal__sb_add(&b, "  const ulong i = get_global_id(0);\n  if (i < n) {\n");
  ocal__sb_user(&b, "body", body);
  ocal__sb_add(&b, "  ;}\n}\n");
  /* GPUs: four indices per work-item, a grid-size apart (coalesced), with the pointers
   * restrict so that the compiler may issue the loads of all four before the stores: one
   * index per work-item keeps too few bytes in flight to stream at the copy bandwidth
   * (docs/measurements.md#examples). */
  ocal__sb_add(&b, "__kernel void ocal_elementwise_wide(const ulong n");
  ocal__sb_params_q(&b, g, "restrict ");
  ocal__sb_add(&b, ") {\n");
  ocal__sb_rebase_q(&b, g, "restrict ");
  ocal__sb_add(&b,
         "  const ulong ocal_s = get_global_size(0);\n"
         "  ulong ocal_b = get_global_id(0);\n"
         "  for (; ocal_b + 3 * ocal_s < n; ocal_b += 4 * ocal_s) {\n");
  for (int u = 0; u < 4; u++) {
    ocal__sb_add(&b, "  { const ulong i = ocal_b + %d * ocal_s;\n", u);
    ocal__sb_user(&b, "body", body);
    ocal__sb_add(&b, "  ;}\n");
  }
  ocal__sb_add(&b, "  }\n  for (; ocal_b < n; ocal_b += ocal_s) { const ulong i = ocal_b;\n");
  ocal__sb_user(&b, "body", body);
  ocal__sb_add(&b, "  ;}\n}\n");
  static const char *const names[] = {"ocal_elementwise_flat", "ocal_elementwise_wide"};
  status = gen_build(__func__, g, &b, names, 2);
  if (status != OCAL_OK) {
    gen_free(g);
    return status;
  }
  build_vector_form(g, body, preamble);
  g->magic = GEN_MAGIC;
  *gen = g;
  return OCAL_OK;
}

static ocal_status check_expr(const char *func, const char *what, const char *expr) {
  if (!expr || !expr[0])
    return ocal__fail(OCAL_INVALID_ARGUMENT, func, "%s must not be NULL or empty", what);
  return OCAL_OK;
}

/* The embedded source of cl/<name>.cl; NULL when the library has none. */
static const ocal__source *embedded(const char *name) {
  for (size_t k = 0; k < ocal__source_count; k++)
    if (strcmp(ocal__sources[k].name, name) == 0) return &ocal__sources[k];
  return NULL;
}

/* The input function of a generated reduction or scan: `ret ocal_input(i, n, <the user's
 * parameters>)` returning the user's expression `what` (`text`), which sees the user's
 * names, i and n; then `in_params`, defined as the kernel parameters that carry them (n,
 * then the user's arguments under mangled names, x_ocal_base and x_ocal_off for a pointer,
 * s_ocal_arg for a scalar, so that they never meet the engine's own names), and `load`,
 * defined as the call of the input at flat index ocal_i (`load_head` opens its parameter
 * list). */
static void sb_input(ocal__sbuf *b, const ocal_gen g, const char *ret, const char *what,
                     const char *text, const char *in_params, const char *load_head) {
  ocal__sb_add(b, "%s ocal_input(const ulong i, const ulong n", ret);
  for (int k = 0; k < g->nparams; k++) {
    const ocal__gen_param *p = &g->params[k];
    if (p->pointer)
      ocal__sb_add(b, ", __global %s%s *%s", p->is_const ? "const " : "",
             ocal__dtype_cl_type(p->dtype), p->name);
    else
      ocal__sb_add(b, ", const %s %s", ocal__dtype_cl_type(p->dtype), p->name);
  }
  ocal__sb_add(b, ") { return (%s)(\n", ret);
  ocal__sb_user(b, what, text);
  ocal__sb_add(b, "); }\n#define %s const ulong ocal_n", in_params);
  for (int k = 0; k < g->nparams; k++) {
    const ocal__gen_param *p = &g->params[k];
    if (p->pointer)
      ocal__sb_add(b, ", __global %s%s *%s_ocal_base, const ulong %s_ocal_off",
             p->is_const ? "const " : "", ocal__dtype_cl_type(p->dtype), p->name, p->name);
    else
      ocal__sb_add(b, ", const %s %s_ocal_arg", ocal__dtype_cl_type(p->dtype), p->name);
  }
  ocal__sb_add(b, "\n#define %s ocal_input((ocal_i), ocal_n", load_head);
  for (int k = 0; k < g->nparams; k++) {
    const ocal__gen_param *p = &g->params[k];
    if (p->pointer)
      ocal__sb_add(b, ", %s_ocal_base + %s_ocal_off", p->name, p->name);
    else
      ocal__sb_add(b, ", %s_ocal_arg", p->name);
  }
  ocal__sb_add(b, ")\n");
}

/* The reduction's program is a prologue written here, then cl/reduce.cl itself: the
 * prologue compiles the user's combination and neutral value into ocal_user_combine(a, b)
 * and ocal_user_neutral(), and defines the input (OCAL_RED_IN_PARAMS, OCAL_RED_X: the map
 * expression at flat index i) from the argument list; cl/reduce.cl then instantiates its
 * generic operation as `ocal_user` (-DOCAL_ONLY_ocal_user) and the kernels and plan are
 * ocal_sum's (src/ops/reduce_engine.h). */
ocal_status ocal_gen_reduction(ocal_context ctx, ocal_dtype dtype, const char *neutral,
                               const char *reduce, const char *map, const char *arguments,
                               const char *preamble, ocal_gen *gen) {
  ocal_status status;
  if ((status = check_gen_out(__func__, gen)) != OCAL_OK ||
      (status = check_expr(__func__, "neutral", neutral)) != OCAL_OK ||
      (status = check_expr(__func__, "reduce", reduce)) != OCAL_OK ||
      (status = check_expr(__func__, "map", map)) != OCAL_OK)
    return status;
  const ocal__source *reduce_cl = embedded("reduce");
  if (!reduce_cl) return OCAL_FAIL(OCAL_INTERNAL, "the library has no embedded cl/reduce.cl");
  ocal_gen g;
  if ((status = gen_new(__func__, ctx, GEN_REDUCTION, dtype, arguments, &g)) != OCAL_OK)
    return status;
  int compensated = ocal__dtype_is_float(dtype) && ocal__gen_is_plain_sum(reduce);
  const char *t = ocal__dtype_cl_type(dtype);
  ocal__sbuf b = {0};
  ocal__sb_header(&b, "reduction", g, preamble);
  /* Map products must be rounded before a compensated sum takes them (no fma). */
  if (compensated) ocal__sb_add(&b, "#pragma OPENCL FP_CONTRACT OFF\n");
  ocal__sb_add(&b, "%s ocal_user_combine(%s a, %s b) { return (\n", t, t, t);
  ocal__sb_user(&b, "reduce", reduce);
  ocal__sb_add(&b, "); }\n%s ocal_user_neutral(void) { return (%s)(\n", t, t);
  ocal__sb_user(&b, "neutral", neutral);
  ocal__sb_add(&b, "); }\n");
  sb_input(&b, g, t, "map", map, "OCAL_RED_IN_PARAMS", "OCAL_RED_X(ocal_i)");
  ocal__sb_add(&b,
               "#define OCAL_RED_USER 1\n%s"
               "#define OCAL_RED_GATHERS 1\n"
               "#define OCAL_RED_Y(ocal_i) ((T)0)\n"
               "#define OCAL_RED_XV(ocal_i) OCAL_RED_GATHER(OCAL_RED_X, ocal_i)\n"
               "#define OCAL_RED_YV(ocal_i) ((TV)(0))\n"
               "#define OCAL_RED_HEAD(ocal_b) (ocal_clen != 0 ? (ulong)0 : ~(ulong)0)\n",
               compensated ? "#define OCAL_RED_USER_COMPENSATED 1\n" : "");
  /* cl/reduce.cl's element-type section keeps short names; the user's texts, compiled
   * above, may have used them for their own macros: forget those, and rename the typedef TV
   * (a typedef of the user's would clash with it). T is defined only here, after the user's
   * texts. */
  ocal__sb_add(&b,
               "#undef T\n#undef TV\n#undef IS_FLOAT\n#undef IS_SIGNED\n#undef VW\n"
               "#undef T_MAX\n#undef T_LOWEST\n#define TV ocal_TV\n#define T %s\n",
               t);
  g->own_len = b.len;
  ocal__sb_add(&b, "#line 1 \"reduce.cl\"\n%s", reduce_cl->text);
  if (b.failed) {
    free(b.text);
    gen_free(g);
    return OCAL_FAIL(OCAL_OUT_OF_HOST_MEMORY, "no memory for the generated source");
  }
  g->source = b.text;
  g->kernel_names = ocal__reduce_kernel_names;
  /* Build the kernel a first run most likely launches now: it checks the user's
   * expressions; the others are built when a plan first launches them. */
  ocal__kernel *k;
  if ((status = gen_kernel(__func__, g, OCAL__RED_CONTIG, &k)) != OCAL_OK) {
    gen_free(g);
    return status;
  }
  g->magic = GEN_MAGIC;
  *gen = g;
  return OCAL_OK;
}

/* A reduction's or scan's kernel `kind` (OCAL__RED_*, OCAL__SCAN_*), built on first use:
 * the engines' callback. */
typedef struct {
  const char *func;
  ocal_gen g;
} gen_call;

static ocal_status engine_kernel(void *data, int kind, ocal__kernel **k) {
  const gen_call *c = data;
  return gen_kernel(c->func, c->g, kind, k);
}

/* The scan's program is a prologue of #defines and functions written here, then cl/scan.cl
 * itself: the prologue defines the operation `ocal_user` (its type, combination, neutral value
 * and look-back tile) from the user's strings, and the input (OCAL_IN_PARAMS, OCAL_LOAD)
 * from the argument list and the input expression. The kernels and the plan are
 * ocal_cumsum's (src/ops/scan_engine.h). The user's arguments enter the kernels under mangled
 * names (x_ocal_base and x_ocal_off for a pointer, s_ocal_arg for a scalar), so that they
 * never meet cl/scan.cl's own names; the input expression is evaluated in a function of its
 * own that sees the user's names, i and n. */
ocal_status ocal_gen_scan(ocal_context ctx, ocal_dtype dtype, const char *neutral,
                          const char *op, const char *input, const char *arguments,
                          const char *preamble, int exclusive, ocal_gen *gen) {
  ocal_status status;
  if ((status = check_gen_out(__func__, gen)) != OCAL_OK ||
      (status = check_expr(__func__, "neutral", neutral)) != OCAL_OK ||
      (status = check_expr(__func__, "op", op)) != OCAL_OK ||
      (status = check_expr(__func__, "input", input)) != OCAL_OK)
    return status;
  if (exclusive != 0 && exclusive != 1)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT,
                     "exclusive is %d: 0 for an inclusive scan, 1 for an exclusive one", exclusive);
  ocal_gen g;
  if ((status = gen_new(__func__, ctx, GEN_SCAN, dtype, arguments, &g)) != OCAL_OK) return status;
  g->exclusive = exclusive;
  /* Macros must be one line: the neutral value is pasted without #line. The input is kept to
   * one line too, as before it moved into a function. */
  if (strchr(neutral, '\n') || strchr(input, '\n')) {
    gen_free(g);
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "neutral and input must be one line each");
  }
  const char *t = ocal__dtype_cl_type(dtype);
  const ocal__source *scan_cl = embedded("scan");
  if (!scan_cl) {
    gen_free(g);
    return OCAL_FAIL(OCAL_INTERNAL, "the library has no embedded cl/scan.cl");
  }
  ocal__sbuf b = {0};
  ocal__sb_header(&b, "scan", g, preamble);
  /* The operation, as cl/scan.cl's built-in ones are written. */
  ocal__sb_add(&b, "typedef %s ocal_user_A;\nocal_user_A ocal_user_cvt(%s ocal_v) { return ocal_v; }\n", t, t);
  ocal__sb_add(&b, "ocal_user_A ocal_user_acc_cvt(ocal_user_A ocal_v) { return ocal_v; }\n");
  ocal__sb_add(&b, "ocal_user_A ocal_user_op(ocal_user_A a, ocal_user_A b) { return (\n");
  ocal__sb_user(&b, "op", op);
  ocal__sb_add(&b, "); }\n#define ocal_user_ID ((ocal_user_A)(%s))\n", neutral);
  ocal__sb_add(&b, "#define ocal_user_LB_IPT %zu\n", ocal__scan_lookback_ipt(ctx, ocal_dtype_size(dtype)));
  ocal__sb_add(&b, "#define ocal_user_BITS(v) OCAL_T_BITS(v)\n#define ocal_user_FROM_BITS(b) OCAL_T_FROM_BITS(b)\n");
  /* The input at flat index i. */
  sb_input(&b, g, "ocal_user_A", "input", input, "OCAL_IN_PARAMS", "OCAL_LOAD(NAME, ocal_i)");
  /* cl/scan.cl reads T, the element type (-DT=... for the built-in scans), defined only here,
   * after the user's text, which may use the name T for itself. */
  ocal__sb_add(&b, "#define T %s\n", t);
  g->own_len = b.len;
  ocal__sb_add(&b, "#line 1 \"scan.cl\"\n%s", scan_cl->text);
  if (b.failed) {
    free(b.text);
    gen_free(g);
    return OCAL_FAIL(OCAL_OUT_OF_HOST_MEMORY, "no memory for the generated source");
  }
  g->source = b.text;
  g->kernel_names = ocal__scan_kernel_names;
  /* Build the kernel a first run most likely launches now: it checks the user's
   * expressions; the others are built when a plan first launches them. */
  ocal__kernel *k;
  status = gen_kernel(__func__, g,
                      ocal__lookback_device(ctx) ? OCAL__SCAN_LOOKBACK : OCAL__SCAN_TILES, &k);
  if (status != OCAL_OK) {
    gen_free(g);
    return status;
  }
  g->magic = GEN_MAGIC;
  *gen = g;
  return OCAL_OK;
}

ocal_status ocal_gen_get_source(ocal_gen gen, const char **source) {
  ocal_status status = check_gen(gen, __func__);
  if (status != OCAL_OK) return status;
  if (!source) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "source must not be NULL");
  *source = gen->full_source ? gen->full_source : gen->source;
  return OCAL_OK;
}

ocal_status ocal_gen_release(ocal_gen gen) {
  if (!gen) return OCAL_OK;
  ocal_status status = check_gen(gen, __func__);
  if (status != OCAL_OK) return status;
  gen_free(gen);
  return OCAL_OK;
}

/* ---- running ------------------------------------------------------------------------- */

/* What the reduction and scan engines pass to engine_kernel: the element count, then the
 * user's arguments. */
typedef struct engine_input {
  cl_ulong n;
  ocal__arg in[1 + OCAL__GEN_MAX_CL_ARGS];
  size_t nin;
  gen_call call;
} engine_input;

static void engine_input_fill(engine_input *e, const char *func, ocal_gen g,
                              const ocal__cl_args *ua, size_t numel) {
  e->n = numel;
  e->in[0] = (ocal__arg){sizeof e->n, &e->n};
  memcpy(e->in + 1, ua->a, (size_t)ua->count * sizeof *e->in);
  e->nin = 1 + (size_t)ua->count;
  e->call = (gen_call){func, g};
}

/* The reduction of the (outer, R, inner) block into out (outer * inner results, at
 * out->offset): the engine's plan (src/ops/reduce.c), which ocal_sum runs too. */
static ocal_status engine_reduce(const char *func, ocal_gen g, ocal__cl_args *ua, size_t outer,
                                 size_t R, size_t inner, ocal_buffer out) {
  engine_input e;
  engine_input_fill(&e, func, g, ua, outer * R * inner);
  ocal__reduce_job job = {.ctx = g->ctx,
                          .func = func,
                          .kernel = engine_kernel,
                          .data = &e.call,
                          .in = e.in,
                          .nin = e.nin,
                          .dtype = g->dtype,
                          /* A gathered vector of columns is VW scalar loads: one column
                           * per work-item keeps neighbours' loads coalesced. */
                          .columns_aligned = 0,
                          .out = out->mem,
                          .ooff = out->offset,
                          .kind = (cl_int)g->dtype,
                          .outer = outer,
                          .R = R,
                          .inner = inner,
                          .scratch = &g->scratch,
                          .scratch_bytes = &g->scratch_bytes,
                          .lb = &g->lb};
  pthread_mutex_lock(&g->lock);
  ocal_status status = ocal__reduce_enqueue(&job);
  pthread_mutex_unlock(&g->lock);
  return status;
}

/* The scan of the (outer, R, inner) block along R into out (same shape, at out->offset):
 * the engine's plan (src/ops/scan.c), which ocal_cumsum runs too. */
static ocal_status run_scan(const char *func, ocal_gen g, ocal__cl_args *ua, size_t outer, size_t R,
                            size_t inner, ocal_buffer out) {
  engine_input e;
  engine_input_fill(&e, func, g, ua, outer * R * inner);
  ocal__scan_job job = {.ctx = g->ctx,
                        .func = func,
                        .kernel = engine_kernel,
                        .data = &e.call,
                        .in = e.in,
                        .nin = e.nin,
                        .out = out->mem,
                        .ooff = out->offset,
                        .result_bytes = ocal_dtype_size(g->dtype),
                        .outer = outer,
                        .R = R,
                        .inner = inner,
                        .exclusive = g->exclusive,
                        .lb = &g->lb,
                        .scratch = &g->scratch,
                        .scratch_bytes = &g->scratch_bytes};
  pthread_mutex_lock(&g->lock);
  ocal_status status = ocal__scan_enqueue(&job);
  pthread_mutex_unlock(&g->lock);
  return status;
}

/* out of a reduction or scan; args (already checked) are the run's arguments. */
static ocal_status check_out(const char *func, ocal_gen g, ocal_buffer out, int nargs,
                             const ocal_gen_arg *args) {
  if (!out) return ocal__fail(OCAL_INVALID_HANDLE, func, "out is NULL (it receives the results)");
  ocal_status status = ocal__check_buffer(out, func);
  if (status != OCAL_OK) return status;
  if (out->ctx != g->ctx)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func, "out belongs to another context");
  if (out->dtype != g->dtype)
    return ocal__fail(OCAL_TYPE_MISMATCH, func, "out holds %s, but the generator's values are %s",
                      ocal_dtype_name(out->dtype), ocal_dtype_name(g->dtype));
  /* A scan writes its tiles while later tiles still read their input: out may start where an
   * argument starts (in place, input(i) reading element i alone), as ocal_scan allows, but
   * overlap no argument otherwise. */
  for (int k = 0; k < nargs && g->kind == GEN_SCAN; k++) {
    ocal_buffer b = g->params[k].pointer ? args[k].buffer : NULL;
    if (b && ocal__buffers_overlap(b, out) &&
        !(b->offset == out->offset && b->dtype == out->dtype))
      return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                        "out overlaps argument %d ('%s') without being it: a scan writes into "
                        "an argument only as the same view (input(i) reading element i alone); "
                        "write the results to separate memory",
                        k, g->params[k].name);
  }
  return OCAL_OK;
}

ocal_status ocal_gen_run(ocal_gen gen, size_t n, int nargs, const ocal_gen_arg *args,
                         ocal_buffer out) {
  ocal_status status = check_gen(gen, __func__);
  if (status != OCAL_OK) return status;
  ocal__cl_args ua;
  ocal_buffer first;
  if ((status = ocal__gen_user_args(__func__, gen, nargs, args, &ua, &first)) != OCAL_OK) return status;
  if (n == OCAL_GEN_AUTO) {
    if (!first)
      return OCAL_FAIL(OCAL_INVALID_ARGUMENT,
                       "n is OCAL_GEN_AUTO, but there is no buffer argument to take it from");
    n = first->numel;
  }
  if (gen->kind == GEN_ELEMENTWISE) {
    if (out)
      return OCAL_FAIL(OCAL_INVALID_ARGUMENT,
                       "out must be NULL for an elementwise kernel (it writes through its "
                       "arguments)");
    /* The elementwise contract: the body writes element i of the buffers it writes, so a
     * writable buffer shorter than n would be written past its end. */
    for (int k = 0; k < nargs; k++) {
      const ocal__gen_param *p = &gen->params[k];
      if (p->pointer && !p->is_const && args[k].buffer->numel < n)
        return OCAL_FAIL(OCAL_INVALID_ARGUMENT,
                         "n = %zu, but argument %d ('%s *%s') holds %zu elements: the kernel "
                         "writes element i of it for every i < n; pass n <= %zu (or "
                         "OCAL_GEN_AUTO), a larger buffer, or declare it const if the body "
                         "only reads it",
                         n, k, ocal__dtype_cl_type(p->dtype), p->name, args[k].buffer->numel,
                         args[k].buffer->numel);
    }
    if (n == 0) return OCAL_OK;
    ocal__cl_args a = {.count = 0};
    cl_ulong c_n = n;
    int bad = ocal__gen_push(&a, sizeof c_n, &c_n);
    for (int k = 0; k < ua.count; k++) bad |= ocal__gen_push(&a, ua.a[k].size, ua.a[k].value);
    if (bad) return OCAL_FAIL(OCAL_UNSUPPORTED, "too many arguments");
    /* CPUs: one work-item per index, straight-line. GPUs: the 4-wide form where there is
     * one and every buffer is aligned for it, else four indices per work-item. */
    if (ocal__context_info(gen->ctx)->type != OCAL_DEVICE_GPU)
      return ocal__kernel_run(gen->ctx, gen->kernels[K_EW_FLAT], n, (size_t)a.count, a.a,
                              __func__);
    int aligned = gen->vec != NULL;
    for (int k = 0; k < nargs && aligned; k++)
      if (gen->params[k].pointer && args[k].buffer->offset % 4 != 0) aligned = 0;
    if (aligned)
      return ocal__kernel_run(gen->ctx, gen->vec, n / 4 + (n % 4 != 0), (size_t)a.count, a.a,
                              __func__);
    return ocal__kernel_run(gen->ctx, gen->kernels[K_EW_WIDE], n / 4 + (n % 4 != 0),
                            (size_t)a.count, a.a, __func__);
  }
  if ((status = check_out(__func__, gen, out, nargs, args)) != OCAL_OK) return status;
  if (gen->kind == GEN_REDUCTION) {
    if (out->numel != 1)
      return OCAL_FAIL(OCAL_SHAPE_MISMATCH,
                       "out has %zu elements, but a whole reduction gives one", out->numel);
    return engine_reduce(__func__, gen, &ua, 1, n, 1, out);
  }
  if (out->numel != n)
    return OCAL_FAIL(OCAL_SHAPE_MISMATCH, "out has %zu elements, but the scan of n = %zu gives %zu",
                     out->numel, n, n);
  if (n == 0) return OCAL_OK;
  return run_scan(__func__, gen, &ua, 1, n, 1, out);
}

ocal_status ocal_gen_run_axis(ocal_gen gen, int axis, int nargs, const ocal_gen_arg *args,
                              ocal_buffer out) {
  ocal_status status = check_gen(gen, __func__);
  if (status != OCAL_OK) return status;
  if (gen->kind == GEN_ELEMENTWISE)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT,
                     "an elementwise kernel does not run along an axis (use ocal_gen_run; "
                     "reductions and scans run along axes)");
  const int scan = gen->kind == GEN_SCAN;
  const char *what = scan ? "scan" : "reduction";
  ocal__cl_args ua;
  ocal_buffer x;
  if ((status = ocal__gen_user_args(__func__, gen, nargs, args, &ua, &x)) != OCAL_OK) return status;
  if (!x)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT,
                     "a %s along an axis takes the shape of the first buffer argument, and "
                     "there is none",
                     what);
  if ((status = check_out(__func__, gen, out, nargs, args)) != OCAL_OK) return status;
  if (axis == OCAL_AXIS_ALL) {
    if (scan) {
      if (out->numel != x->numel)
        return OCAL_FAIL(OCAL_SHAPE_MISMATCH,
                         "out has %zu elements, but a scan over the whole first buffer gives "
                         "%zu",
                         out->numel, x->numel);
      if (x->numel == 0) return OCAL_OK;
      return run_scan(__func__, gen, &ua, 1, x->numel, 1, out);
    }
    if (out->numel != 1)
      return OCAL_FAIL(OCAL_SHAPE_MISMATCH,
                       "out has %zu elements, but a reduction over the whole buffer gives one",
                       out->numel);
    return engine_reduce(__func__, gen, &ua, 1, x->numel, 1, out);
  }
  int a = axis < 0 ? axis + x->ndim : axis;
  if (a < 0 || a >= x->ndim)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT,
                     "axis %d is out of range for the first buffer's %d-D shape (valid: %d .. "
                     "%d, or OCAL_AXIS_ALL)",
                     axis, x->ndim, -x->ndim, x->ndim - 1);
  size_t outer = 1, inner = 1, dropped[OCAL_MAX_DIMS], kept[OCAL_MAX_DIMS];
  int nd = 0;
  for (int i = 0; i < x->ndim; i++) {
    if (i < a) outer *= x->shape[i];
    if (i > a) inner *= x->shape[i];
    kept[i] = i == a ? 1 : x->shape[i];
    if (i != a) dropped[nd++] = x->shape[i];
  }
  if (scan) {
    /* A scan keeps the shape: out is the first buffer's shape. */
    if (out->ndim != x->ndim ||
        memcmp(out->shape, x->shape, (size_t)x->ndim * sizeof(size_t)) != 0) {
      char have[96], xs[96];
      ocal__shape_format(out->ndim, out->shape, have, sizeof have);
      ocal__shape_format(x->ndim, x->shape, xs, sizeof xs);
      return OCAL_FAIL(OCAL_SHAPE_MISMATCH,
                       "out has shape %s, but the scan of shape %s along axis %d gives the "
                       "same shape %s",
                       have, xs, a, xs);
    }
    if (x->numel == 0) return OCAL_OK;
    return run_scan(__func__, gen, &ua, outer, x->shape[a], inner, out);
  }
  if (nd == 0) dropped[nd++] = 1;
  int match = out->ndim == nd && memcmp(out->shape, dropped, (size_t)nd * sizeof(size_t)) == 0;
  if (!match)
    match = out->ndim == x->ndim && memcmp(out->shape, kept, (size_t)x->ndim * sizeof(size_t)) == 0;
  if (!match) {
    char have[96], xs[96], need[96];
    ocal__shape_format(out->ndim, out->shape, have, sizeof have);
    ocal__shape_format(x->ndim, x->shape, xs, sizeof xs);
    ocal__shape_format(nd, dropped, need, sizeof need);
    return OCAL_FAIL(OCAL_SHAPE_MISMATCH,
                     "out has shape %s, but the reduction of shape %s along axis %d gives %s",
                     have, xs, a, need);
  }
  if (outer * inner == 0) return OCAL_OK;
  return engine_reduce(__func__, gen, &ua, outer, x->shape[a], inner, out);
}
