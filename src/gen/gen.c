/* ocal — kernels generated from the user's expressions: elementwise, reduction, scan: the
 * generator objects, their builds and their runs (string building is source.c, expression
 * rewriting rewrite.c, argument marshalling args.c).
 *
 * Each generator writes one OpenCL C program from the argument list and the expressions,
 * builds it through the context's caches (memory, then disk, then the compiler) as ocal's
 * own kernels are built, and keeps its kernels. A scan is cl/scan.cl itself behind a
 * generated prologue, planned and launched by the scan engine that runs ocal_cumsum
 * (src/ops/scan_engine.h). A reduction is still written here as the same trees as ocal_sum's
 * (cl/reduce.cl) with the user's map and combining expressions in place of the built-in
 * operations, and planned as src/ops/reduce.c plans them.
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
#define WG_MAX 256            /* the generated kernels' local arrays are sized for this */
#define OCAL__GEN_MAX_VEC_ARGS 32

static const char *const reduction_kernels[K_COUNT] = {"ocal_red_contig", "ocal_red_strided",
                                                       "ocal_red_merge_strided",
                                                       "ocal_red_merge_group"};

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

/* Wraps every kernel of `names` in the source in #if OCAL_GEN_<name>, so that a build with
 * -DOCAL_GEN_ONLY -DOCAL_GEN_<name> compiles that kernel alone (a reduction's plan launches
 * one or two of its four kernels, a scan's one to three of its six; on PoCL each kernel is a
 * separate compile of around a second). Each kernel runs from its "__kernel void <name>(" at
 * the start of a line to the "}" that closes it at the start of a line. Returns a malloc'ed
 * text, NULL when out of memory. */
static char *wrap_kernels(const char *src, const char *const *names, int count) {
  ocal__sbuf b = {0};
  const char *p = src;
  for (;;) {
    const char *best = NULL;
    int which = -1;
    for (int k = 0; k < count; k++) {
      char head[96];
      snprintf(head, sizeof head, "\n__kernel void %s(", names[k]);
      const char *at = strstr(p, head);
      if (at && (!best || at < best)) best = at, which = k;
    }
    if (!best) break;
    const char *end = strstr(best, "\n}\n");
    if (!end) break;
    end += 3; /* after "\n}\n" */
    ocal__sb_add(&b, "%.*s\n#if !defined(OCAL_GEN_ONLY) || defined(OCAL_GEN_%s)%.*s#endif\n",
           (int)(best - p), p, names[which], (int)(end - best), best);
    p = end;
  }
  ocal__sb_add(&b, "%s", p);
  if (b.failed) {
    free(b.text);
    return NULL;
  }
  return b.text;
}

/* Builds a program from g->source and fetches its kernel `name`: the kernel alone (-D
 * options; reductions and scans) or the whole source (elementwise). */
static ocal_status gen_get(const char *func, ocal_gen g, const char *name, int alone,
                           ocal__kernel **k) {
  char options[160] = "", kname[64];
  if (g->kind == GEN_SCAN) {
    /* cl/scan.cl with the prologue's operation `ocal_user`, its kernel `name` alone. */
    snprintf(options, sizeof options,
             "-DOCAL_DTYPE_%s -DOCAL_ONLY -DOCAL_ONLY_ocal_user -DOCAL_KERNEL -DOCAL_KERNEL_%s",
             ocal_dtype_name(g->dtype), name);
    snprintf(kname, sizeof kname, "ocal_user_%s", name);
    name = kname;
  } else if (alone) {
    snprintf(options, sizeof options, "-DOCAL_GEN_ONLY -DOCAL_GEN_%s", name);
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
  if (!g->kernels[idx]) status = gen_get(func, g, g->kernel_names[idx], 1, &g->kernels[idx]);
  *k = g->kernels[idx];
  pthread_mutex_unlock(&g->klock);
  return status;
}

/* Stores the source. Elementwise: builds it and fetches the named kernels. Reductions and
 * scans: wraps each kernel (wrap_kernels) and builds kernel `first` only, which checks the
 * user's expressions now; the others are built when a plan first launches them. */
static ocal_status gen_build(const char *func, ocal_gen g, ocal__sbuf *b, const char *const *names,
                             int count, int first) {
  if (b->failed) {
    free(b->text);
    return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, func, "no memory for the generated source");
  }
  if (first < 0) {
    g->source = b->text;
    ocal_status status = OCAL_OK;
    for (int k = 0; k < count && status == OCAL_OK; k++)
      status = gen_get(func, g, names[k], 0, &g->kernels[k]);
    return status;
  }
  g->source = wrap_kernels(b->text, names, count);
  free(b->text);
  if (!g->source) return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, func, "no memory for the generated source");
  g->kernel_names = names;
  ocal__kernel *k;
  return gen_kernel(func, g, first, &k);
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
   * its work-items only then (measured: a grid-stride loop ran at about half of ocal_axpy's
   * bandwidth there, this form at or above it). */
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
   * (measured on an H200: 3.4 TB/s against ocal_axpy's float4 kernel at 4.35 TB/s). */
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
  status = gen_build(__func__, g, &b, names, 2, -1);
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

/* The reduction's state and its four operations. The compensated sum is cl/reduce.cl's
 * Neumaier step in one lane. */
static void sb_reduction_state(ocal__sbuf *b, ocal_gen g, const char *neutral, const char *reduce,
                               int compensated) {
  const char *t = ocal__dtype_cl_type(g->dtype);
  ocal__sb_add(b, "typedef %s ocal_T;\ntypedef %s4 ocal_T4;\n#define OCAL_WG_MAX %d\n", t, t, WG_MAX);
  if (compensated) {
    ocal__sb_add(b,
           "#pragma OPENCL FP_CONTRACT OFF\n"
           "typedef struct { ocal_T ocal_s; ocal_T ocal_c; } ocal_st;\n"
           "ocal_st ocal_init(void) { ocal_st a; a.ocal_s = (ocal_T)(\n");
    ocal__sb_user(b, "neutral", neutral);
    ocal__sb_add(b,
           "); a.ocal_c = 0; return a; }\n"
           "void ocal_add(ocal_st *a, ocal_T ocal_v) {\n"
           "  ocal_T ocal_t = a->ocal_s + ocal_v;\n"
           "  a->ocal_c += fabs(a->ocal_s) >= fabs(ocal_v) ? (a->ocal_s - ocal_t) + ocal_v : (ocal_v - ocal_t) + a->ocal_s;\n"
           "  a->ocal_s = ocal_t;\n"
           "}\n"
           "void ocal_merge(ocal_st *a, ocal_st b) { ocal_add(a, b.ocal_s); a->ocal_c += b.ocal_c; }\n"
           "/* A non-finite sum stays as it is: no inf - inf = NaN from the compensation. */\n"
           "ocal_T ocal_final(ocal_st a) { return isfinite(a.ocal_s) ? a.ocal_s + a.ocal_c : a.ocal_s; }\n");
  } else {
    ocal__sb_add(b, "typedef ocal_T ocal_st;\nocal_T ocal_reduce(ocal_T a, ocal_T b) { return (\n");
    ocal__sb_user(b, "reduce", reduce);
    ocal__sb_add(b, "); }\nocal_st ocal_init(void) { return (ocal_T)(\n");
    ocal__sb_user(b, "neutral", neutral);
    ocal__sb_add(b,
           "); }\n"
           "void ocal_add(ocal_st *a, ocal_T ocal_v) { *a = ocal_reduce(*a, ocal_v); }\n"
           "void ocal_merge(ocal_st *a, ocal_st b) { *a = ocal_reduce(*a, b); }\n"
           "ocal_T ocal_final(ocal_st a) { return a; }\n");
  }
}

/* The map expression at index `idx` into variable `var`, inside its own block so that `i`
 * is a const ulong there. */
static void sb_map(ocal__sbuf *b, const char *var, const char *idx, const char *map) {
  ocal__sb_add(b, "    { const ulong i = %s; %s = (ocal_T)(\n", idx, var);
  ocal__sb_user(b, "map", map);
  ocal__sb_add(b, "); }\n");
}

ocal_status ocal_gen_reduction(ocal_context ctx, ocal_dtype dtype, const char *neutral,
                               const char *reduce, const char *map, const char *arguments,
                               const char *preamble, ocal_gen *gen) {
  ocal_status status;
  if ((status = check_gen_out(__func__, gen)) != OCAL_OK ||
      (status = check_expr(__func__, "neutral", neutral)) != OCAL_OK ||
      (status = check_expr(__func__, "reduce", reduce)) != OCAL_OK ||
      (status = check_expr(__func__, "map", map)) != OCAL_OK)
    return status;
  ocal_gen g;
  if ((status = gen_new(__func__, ctx, GEN_REDUCTION, dtype, arguments, &g)) != OCAL_OK)
    return status;
  int compensated = ocal__dtype_is_float(dtype) && ocal__gen_is_plain_sum(reduce);
  g->state_bytes = ocal_dtype_size(dtype) * (compensated ? 2 : 1);
  ocal__sbuf b = {0};
  ocal__sb_header(&b, "reduction", g, preamble);
  sb_reduction_state(&b, g, neutral, reduce, compensated);
  /* Shared arguments: the user's, then the block (outer, R, inner), the chunks, the output
   * (states when chunks > 1, else results). */
  const char *tail =
      ", const ulong ocal_outer, const ulong ocal_R, const ulong ocal_inner, const ulong ocal_chunks,"
      " const ulong ocal_clen, __global ocal_st *ocal_part, __global ocal_T *ocal_out,"
      " const ulong ocal_ooff) {\n";
  ocal__sb_add(&b,
         "#define OCAL_GROUP_TREE(ocal_sv)                                            \\\n"
         "  ocal_scratch[ocal_lid] = ocal_sv;                                                   \\\n"
         "  barrier(CLK_LOCAL_MEM_FENCE);                                        \\\n"
         "  for (uint ocal_h = ocal_L >> 1; ocal_h > 0; ocal_h >>= 1) {                              \\\n"
         "    if (ocal_lid < ocal_h) {                                                     \\\n"
         "      ocal_st ocal_t = ocal_scratch[ocal_lid];                                        \\\n"
         "      ocal_merge(&ocal_t, ocal_scratch[ocal_lid + ocal_h]);                                \\\n"
         "      ocal_scratch[ocal_lid] = ocal_t;                                                \\\n"
         "    }                                                                  \\\n"
         "    barrier(CLK_LOCAL_MEM_FENCE);                                      \\\n"
         "  }\n");
  /* contig: rows of R contiguous indices (inner == 1); group g reduces every chunks-th
   * stretch of L of row g / chunks (GPUs: four loads in flight per work-item, neighbours on
   * neighbouring elements), or a contiguous range per work-item (CPUs: clen != 0). */
  ocal__sb_add(&b, "__kernel void ocal_red_contig(const ulong n");
  ocal__sb_params(&b, g);
  ocal__sb_add(&b, "%s", tail);
  ocal__sb_rebase(&b, g);
  ocal__sb_add(&b,
         "  __local ocal_st ocal_scratch[OCAL_WG_MAX];\n"
         "  const uint ocal_lid = get_local_id(0), ocal_L = get_local_size(0);\n"
         "  const ulong ocal_g = get_group_id(0), ocal_o = ocal_g / ocal_chunks, ocal_c = ocal_g %% ocal_chunks;\n"
         "  const ulong ocal_base = ocal_o * ocal_R, ocal_stride = ocal_chunks * ocal_L;\n"
         "  ocal_st ocal_state = ocal_init();\n"
         "  ocal_T ocal_v0, ocal_v1, ocal_v2, ocal_v3;\n"
         "  if (ocal_clen != 0) {\n"
         "    const ulong ocal_per = (ocal_R + ocal_stride - 1) / ocal_stride, ocal_r0 = (ocal_c * ocal_L + ocal_lid) * ocal_per;\n"
         "    const ulong ocal_r1 = ocal_r0 + ocal_per < ocal_R ? ocal_r0 + ocal_per : ocal_R;\n"
         "    ulong ocal_r = ocal_r0;\n");
  /* Four independent lanes, as cl/reduce.cl's NL lanes: a CPU runs this loop alone, and
   * one dependent chain of (compensated) adds would be latency-bound. */
  if (compensated)
    ocal__sb_add(&b,
           "    ocal_T4 ocal_ls = (ocal_T4)(0), ocal_lc = (ocal_T4)(0);\n"
           "    for (; ocal_r + 4 <= ocal_r1; ocal_r += 4) {\n");
  else
    ocal__sb_add(&b,
           "    ocal_st ocal_a1 = ocal_init(), ocal_a2 = ocal_init(), ocal_a3 = ocal_init();\n"
           "    for (; ocal_r + 4 <= ocal_r1; ocal_r += 4) {\n");
  sb_map(&b, "ocal_v0", "ocal_base + ocal_r", map);
  sb_map(&b, "ocal_v1", "ocal_base + ocal_r + 1", map);
  sb_map(&b, "ocal_v2", "ocal_base + ocal_r + 2", map);
  sb_map(&b, "ocal_v3", "ocal_base + ocal_r + 3", map);
  if (compensated)
    ocal__sb_add(&b,
           "      const ocal_T4 ocal_v = (ocal_T4)(ocal_v0, ocal_v1, ocal_v2, ocal_v3);\n"
           "      const ocal_T4 ocal_t = ocal_ls + ocal_v;\n"
           "      ocal_lc += select((ocal_v - ocal_t) + ocal_ls, (ocal_ls - ocal_t) + ocal_v,\n"
           "                        isgreaterequal(fabs(ocal_ls), fabs(ocal_v)));\n"
           "      ocal_ls = ocal_t;\n"
           "    }\n"
           "    ocal_add(&ocal_state, ocal_ls.s0); ocal_add(&ocal_state, ocal_ls.s1);\n"
           "    ocal_add(&ocal_state, ocal_ls.s2); ocal_add(&ocal_state, ocal_ls.s3);\n"
           "    ocal_state.ocal_c += (ocal_lc.s0 + ocal_lc.s1) + (ocal_lc.s2 + ocal_lc.s3);\n");
  else
    ocal__sb_add(&b,
           "      ocal_add(&ocal_state, ocal_v0); ocal_add(&ocal_a1, ocal_v1);\n"
           "      ocal_add(&ocal_a2, ocal_v2); ocal_add(&ocal_a3, ocal_v3);\n"
           "    }\n"
           "    ocal_merge(&ocal_state, ocal_a1); ocal_merge(&ocal_a2, ocal_a3);\n"
           "    ocal_merge(&ocal_state, ocal_a2);\n");
  ocal__sb_add(&b, "    for (; ocal_r < ocal_r1; ocal_r++) {\n");
  sb_map(&b, "ocal_v0", "ocal_base + ocal_r", map);
  ocal__sb_add(&b,
         "      ocal_add(&ocal_state, ocal_v0);\n"
         "    }\n"
         "  } else {\n"
         "    ulong ocal_r = ocal_c * ocal_L + ocal_lid;\n"
         "    for (; ocal_r + 3 * ocal_stride < ocal_R; ocal_r += 4 * ocal_stride) {\n");
  sb_map(&b, "ocal_v0", "ocal_base + ocal_r", map);
  sb_map(&b, "ocal_v1", "ocal_base + ocal_r + ocal_stride", map);
  sb_map(&b, "ocal_v2", "ocal_base + ocal_r + 2 * ocal_stride", map);
  sb_map(&b, "ocal_v3", "ocal_base + ocal_r + 3 * ocal_stride", map);
  ocal__sb_add(&b,
         "      ocal_add(&ocal_state, ocal_v0); ocal_add(&ocal_state, ocal_v1); ocal_add(&ocal_state, ocal_v2); ocal_add(&ocal_state, ocal_v3);\n"
         "    }\n"
         "    for (; ocal_r < ocal_R; ocal_r += ocal_stride) {\n");
  sb_map(&b, "ocal_v0", "ocal_base + ocal_r", map);
  ocal__sb_add(&b,
         "      ocal_add(&ocal_state, ocal_v0);\n"
         "    }\n"
         "  }\n"
         "  OCAL_GROUP_TREE(ocal_state)\n"
         "  if (ocal_lid == 0) {\n"
         "    if (ocal_chunks == 1) ocal_out[ocal_ooff + ocal_o] = ocal_final(ocal_scratch[0]);\n"
         "    else ocal_part[ocal_g] = ocal_scratch[0];\n"
         "  }\n"
         "}\n\n");
  /* strided: one work-item per (row o, chunk s of ocal_clen indices along R, column j). */
  ocal__sb_add(&b, "__kernel void ocal_red_strided(const ulong n");
  ocal__sb_params(&b, g);
  ocal__sb_add(&b, "%s", tail);
  ocal__sb_rebase(&b, g);
  ocal__sb_add(&b,
         "  const ulong ocal_total = ocal_outer * ocal_chunks * ocal_inner;\n"
         "  ocal_T ocal_v0, ocal_v1;\n"
         "  for (ulong ocal_t = get_global_id(0); ocal_t < ocal_total; ocal_t += get_global_size(0)) {\n"
         "    const ulong ocal_j = ocal_t %% ocal_inner, ocal_q = ocal_t / ocal_inner, ocal_s = ocal_q %% ocal_chunks, ocal_o = ocal_q / ocal_chunks;\n"
         "    const ulong ocal_r0 = ocal_s * ocal_clen, ocal_r1 = ocal_r0 + ocal_clen < ocal_R ? ocal_r0 + ocal_clen : ocal_R;\n"
         "    const ulong ocal_p0 = ocal_o * ocal_R * ocal_inner + ocal_j;\n"
         "    ocal_st ocal_state = ocal_init(), ocal_state2 = ocal_init();\n"
         "    ulong ocal_r = ocal_r0;\n"
         "    for (; ocal_r + 2 <= ocal_r1; ocal_r += 2) {\n");
  sb_map(&b, "ocal_v0", "ocal_p0 + ocal_r * ocal_inner", map);
  sb_map(&b, "ocal_v1", "ocal_p0 + (ocal_r + 1) * ocal_inner", map);
  ocal__sb_add(&b,
         "      ocal_add(&ocal_state, ocal_v0); ocal_add(&ocal_state2, ocal_v1);\n"
         "    }\n"
         "    if (ocal_r < ocal_r1) {\n");
  sb_map(&b, "ocal_v0", "ocal_p0 + ocal_r * ocal_inner", map);
  ocal__sb_add(&b,
         "      ocal_add(&ocal_state, ocal_v0);\n"
         "    }\n"
         "    ocal_merge(&ocal_state, ocal_state2);\n"
         "    if (ocal_chunks == 1) ocal_out[ocal_ooff + ocal_o * ocal_inner + ocal_j] = ocal_final(ocal_state);\n"
         "    else ocal_part[ocal_t] = ocal_state;\n"
         "  }\n"
         "}\n\n");
  /* The second passes, over states P[(o * S + s) * inner + j]. */
  ocal__sb_add(&b,
         "__kernel void ocal_red_merge_strided(__global const ocal_st *ocal_P, const ulong ocal_outer,\n"
         "    const ulong ocal_S, const ulong ocal_inner, __global ocal_T *ocal_out, const ulong ocal_ooff) {\n"
         "  const ulong ocal_total = ocal_outer * ocal_inner;\n"
         "  for (ulong ocal_t = get_global_id(0); ocal_t < ocal_total; ocal_t += get_global_size(0)) {\n"
         "    const ulong ocal_j = ocal_t %% ocal_inner, ocal_o = ocal_t / ocal_inner;\n"
         "    ocal_st ocal_state = ocal_P[ocal_o * ocal_S * ocal_inner + ocal_j];\n"
         "    for (ulong ocal_s = 1; ocal_s < ocal_S; ocal_s++) ocal_merge(&ocal_state, ocal_P[(ocal_o * ocal_S + ocal_s) * ocal_inner + ocal_j]);\n"
         "    ocal_out[ocal_ooff + ocal_t] = ocal_final(ocal_state);\n"
         "  }\n"
         "}\n\n"
         "__kernel void ocal_red_merge_group(__global const ocal_st *ocal_P, const ulong ocal_outer,\n"
         "    const ulong ocal_S, const ulong ocal_inner, __global ocal_T *ocal_out, const ulong ocal_ooff) {\n"
         "  __local ocal_st ocal_scratch[OCAL_WG_MAX];\n"
         "  const uint ocal_lid = get_local_id(0), ocal_L = get_local_size(0);\n"
         "  const ulong ocal_t = get_group_id(0), ocal_j = ocal_t %% ocal_inner, ocal_o = ocal_t / ocal_inner;\n"
         "  ocal_st ocal_state = ocal_init();\n"
         "  for (ulong ocal_s = ocal_lid; ocal_s < ocal_S; ocal_s += ocal_L) ocal_merge(&ocal_state, ocal_P[(ocal_o * ocal_S + ocal_s) * ocal_inner + ocal_j]);\n"
         "  OCAL_GROUP_TREE(ocal_state)\n"
         "  if (ocal_lid == 0) ocal_out[ocal_ooff + ocal_t] = ocal_final(ocal_scratch[0]);\n"
         "}\n");
  status = gen_build(__func__, g, &b, reduction_kernels, K_COUNT, K_CONTIG);
  if (status != OCAL_OK) {
    gen_free(g);
    return status;
  }
  g->magic = GEN_MAGIC;
  *gen = g;
  return OCAL_OK;
}

/* The scan's kernel `kind` (OCAL__SCAN_*), built on first use: the engine's callback. */
typedef struct {
  const char *func;
  ocal_gen g;
} gen_scan_call;

static ocal_status scan_kernel(void *data, int kind, ocal__kernel **k) {
  const gen_scan_call *c = data;
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
  const ocal__source *scan_cl = NULL;
  for (size_t k = 0; k < ocal__source_count; k++)
    if (strcmp(ocal__sources[k].name, "scan") == 0) scan_cl = &ocal__sources[k];
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
  ocal__sb_add(&b, "#define ocal_user_LB_IPT %zu\n", ocal__scan_lookback_ipt(ocal_dtype_size(dtype)));
  ocal__sb_add(&b, "#define ocal_user_BITS(v) OCAL_T_BITS(v)\n#define ocal_user_FROM_BITS(b) OCAL_T_FROM_BITS(b)\n");
  /* The input at flat index i. */
  ocal__sb_add(&b, "ocal_user_A ocal_input(const ulong i, const ulong n");
  for (int k = 0; k < g->nparams; k++) {
    const ocal__gen_param *p = &g->params[k];
    if (p->pointer)
      ocal__sb_add(&b, ", __global %s%s *%s", p->is_const ? "const " : "",
             ocal__dtype_cl_type(p->dtype), p->name);
    else
      ocal__sb_add(&b, ", const %s %s", ocal__dtype_cl_type(p->dtype), p->name);
  }
  ocal__sb_add(&b, ") { return (ocal_user_A)(\n");
  ocal__sb_user(&b, "input", input);
  ocal__sb_add(&b, "); }\n#define OCAL_IN_PARAMS const ulong ocal_n");
  for (int k = 0; k < g->nparams; k++) {
    const ocal__gen_param *p = &g->params[k];
    if (p->pointer)
      ocal__sb_add(&b, ", __global %s%s *%s_ocal_base, const ulong %s_ocal_off",
             p->is_const ? "const " : "", ocal__dtype_cl_type(p->dtype), p->name, p->name);
    else
      ocal__sb_add(&b, ", const %s %s_ocal_arg", ocal__dtype_cl_type(p->dtype), p->name);
  }
  ocal__sb_add(&b, "\n#define OCAL_LOAD(NAME, ocal_i) ocal_input((ocal_i), ocal_n");
  for (int k = 0; k < g->nparams; k++) {
    const ocal__gen_param *p = &g->params[k];
    if (p->pointer)
      ocal__sb_add(&b, ", %s_ocal_base + %s_ocal_off", p->name, p->name);
    else
      ocal__sb_add(&b, ", %s_ocal_arg", p->name);
  }
  /* cl/scan.cl reads T, the element type (-DT=... for the built-in scans), defined only here,
   * after the user's text, which may use the name T for itself. */
  ocal__sb_add(&b, ")\n#define T %s\n", t);
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

/* Sets every argument of k and enqueues global work-items in groups of local. */
static ocal_status launch(ocal_gen g, ocal__kernel *k, size_t nargs, const ocal__arg *args,
                          size_t global, size_t local) {
  return ocal__kernel_run_nd(g->ctx, k, 1, &global, &local, nargs, args,
                             "ocal generated kernel");
}

/* Largest power of two <= want, <= WG_MAX and <= what the kernel allows. */
static size_t pow2_local(const ocal__kernel *k, size_t want) {
  return ocal__kernel_pow2_local(k, want, WG_MAX);
}

/* With g->lock held: the generator's scratch buffer, at least `bytes` bytes. */
static ocal_status scratch(ocal_gen g, size_t bytes, cl_mem *mem) {
  ocal_status status = ocal__scratch_reserve(g->ctx, &g->scratch, &g->scratch_bytes, bytes);
  *mem = g->scratch;
  return status;
}

/* The reduction of the (outer, R, inner) block into out at element offset ooff. The plan is
 * src/ops/reduce.c's (enqueue()), element for element, so the trees match ocal_sum's. */
static ocal_status run_reduction(const char *func, ocal_gen g, ocal__cl_args *ua, size_t outer,
                                 size_t R, size_t inner, ocal_buffer out) {
  ocal_context ctx = g->ctx;
  const size_t outputs = outer * inner;
  const size_t target = (ocal__context_info(ctx)->compute_units ? ocal__context_info(ctx)->compute_units : 1) * 2048;
  const size_t vw = 16 / ocal_dtype_size(g->dtype); /* the built-in's vector width */
  int contig = inner == 1 && R >= 16 &&
               (ocal__context_info(ctx)->type == OCAL_DEVICE_GPU || outer < 64 || R >= 65536);
  ocal__kernel *k1, *k2 = NULL;
  ocal_status kstatus = gen_kernel(func, g, contig ? K_CONTIG : K_STRIDED, &k1);
  if (kstatus != OCAL_OK) return kstatus;
  size_t chunks = 1, clen = R, local1, global1;
  if (contig) {
    size_t lmax = pow2_local(k1, WG_MAX);
    local1 = R < 2 * vw * lmax && ocal__context_info(ctx)->type == OCAL_DEVICE_GPU ? pow2_local(k1, 64) : lmax;
    size_t groups_wanted = ocal__ceil_div(target, local1);
    if (outer < groups_wanted) {
      size_t most = R / (vw * local1 * 16);
      chunks = ocal__ceil_div(groups_wanted, outer);
      if (chunks > most) chunks = most;
      if (chunks < 1) chunks = 1;
    }
    global1 = outer * chunks * local1;
    clen = ocal__context_info(ctx)->type == OCAL_DEVICE_GPU ? 0 : 1;
  } else {
    local1 = pow2_local(k1, WG_MAX);
    size_t strided_target = target / 2;
    if (outputs < strided_target && R > 64) {
      chunks = strided_target / outputs;
      size_t most = ocal__ceil_div(R, 64);
      if (chunks > most) chunks = most;
      if (outputs >= 256 && chunks > 64) chunks = 64;
    }
    if (chunks < 1) chunks = 1;
    clen = ocal__ceil_div(R, chunks);
    if (clen == 0) clen = 1;
    chunks = ocal__ceil_div(R, clen);
    if (chunks < 1) chunks = 1;
    size_t items = outputs * chunks;
    if (items > 8 * target) items = 8 * target;
    global1 = ocal__round_up(items, local1);
  }
  cl_ulong c_n = outer * R * inner, c_outer = outer, c_R = R, c_inner = inner,
           c_chunks = chunks, c_clen = clen, ooff = out->offset, zero = 0;
  cl_mem out_mem = out->mem, part = NULL;
  pthread_mutex_lock(&g->lock);
  ocal_status status = OCAL_OK;
  if (chunks > 1) {
    size_t bytes;
    if (ocal__mul_overflows(outputs * chunks, g->state_bytes, &bytes))
      status = ocal__fail(OCAL_OVERFLOW, func, "the partial results do not fit in memory");
    else
      status = scratch(g, bytes, &part);
  }
  if (status == OCAL_OK) {
    ocal__cl_args a1 = {.count = 0};
    ocal__gen_push(&a1, sizeof c_n, &c_n);
    int bad = 0;
    for (int k = 0; k < ua->count; k++) bad |= ocal__gen_push(&a1, ua->a[k].size, ua->a[k].value);
    bad |= ocal__gen_push(&a1, sizeof c_outer, &c_outer) | ocal__gen_push(&a1, sizeof c_R, &c_R) |
           ocal__gen_push(&a1, sizeof c_inner, &c_inner) | ocal__gen_push(&a1, sizeof c_chunks, &c_chunks) |
           ocal__gen_push(&a1, sizeof c_clen, &c_clen) | ocal__gen_push(&a1, sizeof(cl_mem), &part) |
           ocal__gen_push(&a1, sizeof(cl_mem), &out_mem) | ocal__gen_push(&a1, sizeof(cl_ulong), chunks > 1 ? &zero : &ooff);
    if (bad)
      status = ocal__fail(OCAL_UNSUPPORTED, func, "too many arguments");
    else
      status = launch(g, k1, (size_t)a1.count, a1.a, global1, local1);
  }
  int by_group = outputs < 256;
  if (status == OCAL_OK && chunks > 1)
    status = gen_kernel(func, g, by_group ? K_MERGE_GROUP : K_MERGE_STRIDED, &k2);
  if (status == OCAL_OK && chunks > 1) {
    size_t local2 = pow2_local(k2, WG_MAX), global2;
    if (by_group) {
      global2 = outputs * local2;
    } else {
      size_t items = outputs < 8 * target ? outputs : 8 * target;
      global2 = ocal__round_up(items, local2);
    }
    cl_ulong m_inner = contig ? 1 : inner;
    const ocal__arg a2[] = {{sizeof(cl_mem), &part},   {sizeof c_outer, &c_outer},
                            {sizeof c_chunks, &c_chunks}, {sizeof m_inner, &m_inner},
                            {sizeof(cl_mem), &out_mem}, {sizeof ooff, &ooff}};
    status = launch(g, k2, 6, a2, global2, local2);
  }
  pthread_mutex_unlock(&g->lock);
  return status;
}

/* Builds a launch's arguments: `n`, the user's arguments, then `count` more. */
/* The scan of the (outer, R, inner) block along R into out (same shape, at out->offset):
 * the engine's plan (src/ops/scan.c), which ocal_cumsum runs too. */
static ocal_status run_scan(const char *func, ocal_gen g, ocal__cl_args *ua, size_t outer, size_t R,
                            size_t inner, ocal_buffer out) {
  cl_ulong c_n = outer * R * inner;
  ocal__arg in[1 + OCAL__GEN_MAX_CL_ARGS];
  in[0] = (ocal__arg){sizeof c_n, &c_n};
  memcpy(in + 1, ua->a, (size_t)ua->count * sizeof *in);
  gen_scan_call call = {func, g};
  ocal__scan_job job = {.ctx = g->ctx,
                        .func = func,
                        .kernel = scan_kernel,
                        .data = &call,
                        .in = in,
                        .nin = 1 + (size_t)ua->count,
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

static ocal_status check_out(const char *func, ocal_gen g, ocal_buffer out) {
  if (!out) return ocal__fail(OCAL_INVALID_HANDLE, func, "out is NULL (it receives the results)");
  ocal_status status = ocal__check_buffer(out, func);
  if (status != OCAL_OK) return status;
  if (out->ctx != g->ctx)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func, "out belongs to another context");
  if (out->dtype != g->dtype)
    return ocal__fail(OCAL_TYPE_MISMATCH, func, "out holds %s, but the generator's values are %s",
                      ocal_dtype_name(out->dtype), ocal_dtype_name(g->dtype));
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
    if (n == 0) return OCAL_OK;
    ocal__cl_args a = {.count = 0};
    cl_ulong c_n = n;
    int bad = ocal__gen_push(&a, sizeof c_n, &c_n);
    for (int k = 0; k < ua.count; k++) bad |= ocal__gen_push(&a, ua.a[k].size, ua.a[k].value);
    if (bad) return OCAL_FAIL(OCAL_UNSUPPORTED, "too many arguments");
    /* CPUs: one work-item per index, straight-line. GPUs: the 4-wide form where there is
     * one and every buffer is aligned for it, else four indices per work-item. */
    if (ocal__context_info(gen->ctx)->type != OCAL_DEVICE_GPU)
      return ocal__kernel_run(gen->ctx, gen->kernels[K_EW_FLAT], n, (size_t)a.count, a.a);
    int aligned = gen->vec != NULL;
    for (int k = 0; k < nargs && aligned; k++)
      if (gen->params[k].pointer && args[k].buffer->offset % 4 != 0) aligned = 0;
    if (aligned)
      return ocal__kernel_run(gen->ctx, gen->vec, n / 4 + (n % 4 != 0), (size_t)a.count, a.a);
    return ocal__kernel_run(gen->ctx, gen->kernels[K_EW_WIDE], n / 4 + (n % 4 != 0),
                            (size_t)a.count, a.a);
  }
  if ((status = check_out(__func__, gen, out)) != OCAL_OK) return status;
  if (gen->kind == GEN_REDUCTION) {
    if (out->numel != 1)
      return OCAL_FAIL(OCAL_SHAPE_MISMATCH,
                       "out has %zu elements, but a whole reduction gives one", out->numel);
    return run_reduction(__func__, gen, &ua, 1, n, 1, out);
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
  if ((status = check_out(__func__, gen, out)) != OCAL_OK) return status;
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
    return run_reduction(__func__, gen, &ua, 1, x->numel, 1, out);
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
  return run_reduction(__func__, gen, &ua, outer, x->shape[a], inner, out);
}
