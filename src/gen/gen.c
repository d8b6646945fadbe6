/* ocal — kernels generated from the user's expressions: elementwise, reduction, scan.
 *
 * Each generator writes one OpenCL C program from the argument list and the expressions,
 * builds it through the context's caches (memory, then disk, then the compiler) as ocal's
 * own kernels are built, and keeps its kernels. The reduction and the scan are the same
 * trees as ocal_sum and ocal_cumsum (cl/reduce.cl, cl/scan.cl) with the user's map and
 * combining expressions in place of the built-in operations, so they run at the same speed;
 * the host plans (work-group sizes, chunks per row) are those of src/ops/reduce.c and
 * src/ops/scan.c.
 *
 * Pointer arguments are passed as (memory, offset in elements) and rebased at the top of
 * every kernel, so views work and the user's expressions index from the view's start. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ops/engine.h"
#include "gen_internal.h"

#define GEN_MAGIC 0x6f67656eu /* "ogen" */
#define WG_MAX 256            /* the generated kernels' local arrays are sized for this */
#define OCAL__GEN_MAX_VEC_ARGS 32

typedef enum { GEN_ELEMENTWISE, GEN_REDUCTION, GEN_SCAN } gen_kind;

enum { K_EW_FLAT, K_EW_WIDE, K_CONTIG = 0, K_STRIDED, K_MERGE_STRIDED, K_MERGE_GROUP, K_COUNT };
/* A scan's kernels are cl/scan.cl's (src/ops/engine.h, OCAL__SCAN_*). */
#define K_MAX ((int)K_COUNT > (int)OCAL__SCAN_KINDS ? (int)K_COUNT : (int)OCAL__SCAN_KINDS)
static const char *const reduction_kernels[K_COUNT] = {"ocal_red_contig", "ocal_red_strided",
                                                       "ocal_red_merge_strided",
                                                       "ocal_red_merge_group"};

struct ocal_gen_s {
  uint32_t magic;
  gen_kind kind;
  ocal_context ctx;
  ocal_dtype dtype; /* reduction and scan: the values' type */
  int exclusive;
  size_t state_bytes; /* reduction: bytes of one partial state */
  ocal__gen_param *params;
  int nparams;
  char *source;
  size_t own_len;      /* scan: the generated prologue's length (the rest is cl/scan.cl) */
  char *full_source;   /* source plus the vector form, for ocal_gen_source */
  ocal__kernel *vec;   /* elementwise: the 4-wide form, NULL when the body has none */
  ocal__kernel *kernels[K_MAX]; /* built on first use (gen_kernel), NULL before */
  const char *const *kernel_names; /* reduction and scan: the names of kernels[] */
  pthread_mutex_t klock; /* guards kernels[] while one is built */
  pthread_mutex_t lock; /* guards scratch across the launches of one run */
  cl_mem scratch;
  size_t scratch_bytes;
  ocal__lookback lb; /* scan: the single pass's tile states */
};

/* ---- writing source ------------------------------------------------------------------ */

typedef struct {
  char *text;
  size_t len, cap;
  int lines; /* newlines written so far */
  int failed;
} sbuf;

static void sb_add(sbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void sb_add(sbuf *b, const char *fmt, ...) {
  if (b->failed) return;
  va_list ap;
  va_start(ap, fmt);
  va_list ap2;
  va_copy(ap2, ap);
  int need = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (need < 0 || b->len + (size_t)need + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (need >= 0 && b->len + (size_t)need + 1 > cap) cap *= 2;
    char *bigger = need < 0 ? NULL : realloc(b->text, cap);
    if (!bigger) {
      b->failed = 1;
      va_end(ap2);
      return;
    }
    b->text = bigger;
    b->cap = cap;
  }
  vsnprintf(b->text + b->len, b->cap - b->len, fmt, ap2);
  va_end(ap2);
  for (size_t k = b->len; k < b->len + (size_t)need; k++)
    if (b->text[k] == '\n') b->lines++;
  b->len += (size_t)need;
}

/* The user's text under its own file name, so that compiler messages name it ("map:1:5:
 * error: ..."); then back to the generated lines' own numbers. */
static void sb_user(sbuf *b, const char *label, const char *text) {
  sb_add(b, "#line 1 \"%s\"\n%s\n", label, text);
  sb_add(b, "#line %d \"ocal-generated\"\n", b->lines + 2);
}

static int uses_double(ocal_dtype d) { return d == OCAL_F64 || d == OCAL_C64; }

static void sb_header(sbuf *b, const char *what, const ocal_gen g, const char *preamble) {
  int fp64 = uses_double(g->dtype) && g->kind != GEN_ELEMENTWISE;
  for (int k = 0; k < g->nparams; k++) fp64 |= uses_double(g->params[k].dtype);
  sb_add(b, "/* ocal generated %s kernel */\n", what);
  if (fp64) sb_add(b, "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n");
  if (preamble && preamble[0]) sb_user(b, "preamble", preamble);
}

/* The parameter list: "const ulong n, __global const float *x_ocal_base, const ulong
 * x_ocal_off, const float a, ..." (n is the index count). */
static void sb_params_q(sbuf *b, const ocal_gen g, const char *qual) {
  for (int k = 0; k < g->nparams; k++) {
    const ocal__gen_param *p = &g->params[k];
    const char *t = ocal__dtype_cl_type(p->dtype);
    if (p->pointer)
      sb_add(b, ", __global %s%s *%s%s_ocal_base, const ulong %s_ocal_off",
             p->is_const ? "const " : "", t, qual, p->name, p->name);
    else
      sb_add(b, ", const %s %s", t, p->name);
  }
}
static void sb_params(sbuf *b, const ocal_gen g) { sb_params_q(b, g, ""); }

static void sb_rebase_q(sbuf *b, const ocal_gen g, const char *qual) {
  for (int k = 0; k < g->nparams; k++) {
    const ocal__gen_param *p = &g->params[k];
    if (p->pointer)
      sb_add(b, "  __global %s%s *%sconst %s = %s_ocal_base + %s_ocal_off;\n",
             p->is_const ? "const " : "", ocal__dtype_cl_type(p->dtype), qual, p->name, p->name,
             p->name);
  }
  /* Arguments the expressions do not use are fine: no warnings are errors in OpenCL C. */
}
static void sb_rebase(sbuf *b, const ocal_gen g) { sb_rebase_q(b, g, ""); }

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
    if (ocal__dtype_is_complex(dtype))
      return ocal__fail(OCAL_UNSUPPORTED, func,
                        "%s values are not supported (element types: f32, f64, i32, u32, i64, "
                        "u64, u8)",
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
     * and its offset) beside the generated kernels' own, within MAX_CL_ARGS. */
    status = ocal__fail(OCAL_UNSUPPORTED, func,
                        "the argument list declares %d arguments; a generator takes at most %d "
                        "(OCAL_GEN_MAX_ARGS): pass more data in fewer buffers",
                        g->nparams, OCAL_GEN_MAX_ARGS);
    gen_free(g);
    return status;
  }
  for (int k = 0; k < g->nparams; k++)
    if (uses_double(g->params[k].dtype) && !ctx->fp64) {
      /* The message quotes the parameter: format it before the generator is freed. */
      status = ocal__fail(OCAL_UNSUPPORTED, func,
                          "argument '%s' is %s, but device '%s' has %s", g->params[k].name,
                          ocal__dtype_cl_type(g->params[k].dtype), ctx->info.name,
                          ctx->info.has_fp64 ? "double precision turned off (OCAL_FP64=0 or "
                                               "the context's fp64 option)"
                                             : "no double precision");
      gen_free(g);
      return status;
    }
  if (kind != GEN_ELEMENTWISE && uses_double(dtype) && !ctx->fp64) {
    gen_free(g);
    return ocal__fail(OCAL_UNSUPPORTED, func, "device '%s' has no double precision",
                      ctx->info.name);
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
  sbuf b = {0};
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
    sb_add(&b, "%.*s\n#if !defined(OCAL_GEN_ONLY) || defined(OCAL_GEN_%s)%.*s#endif\n",
           (int)(best - p), p, names[which], (int)(end - best), best);
    p = end;
  }
  sb_add(&b, "%s", p);
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
    /* cl/scan.cl with the prologue's operation `user`, its kernel `name` alone. */
    snprintf(options, sizeof options,
             "-DOCAL_DTYPE_%s -DOCAL_ONLY -DOCAL_ONLY_user -DOCAL_KERNEL -DOCAL_KERNEL_%s",
             ocal_dtype_name(g->dtype), name);
    snprintf(kname, sizeof kname, "user_%s", name);
    name = kname;
  } else if (alone) {
    snprintf(options, sizeof options, "-DOCAL_GEN_ONLY -DOCAL_GEN_%s", name);
  }
  ocal__program *program;
  const char *label = g->kind == GEN_ELEMENTWISE ? "generated elementwise kernel"
                      : g->kind == GEN_REDUCTION  ? "generated reduction kernel"
                                                  : "generated scan kernel";
  ocal_status status = ocal__program_get(g->ctx, label, g->source, options, &program);
  if (status == OCAL_BUILD_FAILED) {
    ocal__append_error("\n(in %s)", func);
    append_numbered(g->source, g->own_len ? g->own_len : strlen(g->source));
    return status;
  }
  if (status == OCAL_OK) status = ocal__kernel_get(g->ctx, program, name, k);
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
static ocal_status gen_build(const char *func, ocal_gen g, sbuf *b, const char *const *names,
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

/* ---- the 4-wide form of an elementwise body ---------------------------------------------
 * ocal_axpy streams at the copy bandwidth on GPUs with one 16-byte load per buffer and
 * work-item; scalar code does not (H200: 3.4-3.8 TB/s against 4.37). So when a body can be
 * evaluated four elements at a time with the same result, ocal writes that form too: every
 * `p[i]` becomes a 4-vector variable, loaded before the body and stored after it. The body
 * must pass a whitelist that keeps the meaning the same: all arguments of one type; only
 * arithmetic operators, assignments, parentheses and commas; numbers (float literals with
 * the f suffix for float, so that no double arithmetic is skipped); `p[i]` subscripts of
 * pointer arguments; scalar arguments; and componentwise built-in functions. No relational
 * or logical operators (vectors give -1 for true), no casts, no other use of `i`. A body
 * that passes but does not compile (a helper function taking scalars) falls back to the
 * scalar form. */

static const char *const vec_functions[] = {
    "fma", "mad", "fmin", "fmax", "min", "max", "clamp", "exp", "exp2", "exp10", "expm1",
    "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "cbrt", "sin", "cos", "tan", "asin",
    "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "fabs", "abs",
    "pow", "pown", "powr", "floor", "ceil", "round", "trunc", "rint", "copysign", "hypot",
    "erf", "erfc", "tgamma", "lgamma", "fmod", "mix", "sign", "native_exp", "native_log",
    "native_sqrt", "native_rsqrt", "native_sin", "native_cos", "native_recip",
    "native_divide", "half_exp", NULL};

typedef struct {
  int read, written; /* per pointer argument */
} vec_use;

/* Returns a malloc'ed rewritten body, or NULL when the body has no 4-wide form. */
static char *vectorize_body(const ocal_gen g, const char *body, vec_use *use) {
  ocal_dtype t = OCAL_DTYPE_COUNT;
  for (int k = 0; k < g->nparams; k++) {
    if (k == 0) t = g->params[k].dtype;
    if (g->params[k].dtype != t) return NULL;
  }
  if (t == OCAL_DTYPE_COUNT || ocal__dtype_is_complex(t)) return NULL;
  int is_float = ocal__dtype_is_float(t);
  size_t len = strlen(body), cap = 2 * len + 64 * (size_t)(g->nparams + 1), o = 0;
  char *out = malloc(cap + 1);
  if (!out) return NULL;
  memset(use, 0, (size_t)g->nparams * sizeof *use);
  size_t p = 0;
#define VEC_FAIL() do { free(out); return NULL; } while (0)
  while (p < len) {
    char c = body[p];
    if (isspace((unsigned char)c)) {
      out[o++] = c;
      p++;
    } else if (isalpha((unsigned char)c) || c == '_') {
      size_t q = p;
      while (q < len && (isalnum((unsigned char)body[q]) || body[q] == '_')) q++;
      size_t wl = q - p;
      int k = -1;
      for (int j = 0; j < g->nparams; j++)
        if (strlen(g->params[j].name) == wl && strncmp(body + p, g->params[j].name, wl) == 0) k = j;
      if (k >= 0 && g->params[k].pointer) {
        /* exactly NAME [ i ] */
        size_t r = q;
        while (r < len && isspace((unsigned char)body[r])) r++;
        if (r >= len || body[r] != '[') VEC_FAIL();
        r++;
        while (r < len && isspace((unsigned char)body[r])) r++;
        if (r >= len || body[r] != 'i') VEC_FAIL();
        r++;
        while (r < len && isspace((unsigned char)body[r])) r++;
        if (r >= len || body[r] != ']') VEC_FAIL();
        r++;
        /* What follows: a plain '=' writes; an 'op=' reads and writes; else a read. */
        size_t f = r;
        while (f < len && isspace((unsigned char)body[f])) f++;
        if (f < len && body[f] == '=' && body[f + 1] != '=') {
          use[k].written = 1;
        } else if (f + 1 < len && strchr("+-*/", body[f]) && body[f + 1] == '=') {
          use[k].written = 1;
          use[k].read = 1;
        } else {
          use[k].read = 1;
        }
        o += (size_t)sprintf(out + o, "%s_ocal_v", g->params[k].name);
        p = r;
        continue;
      }
      int ok = k >= 0; /* a scalar argument */
      if (!ok) {
        size_t r = q;
        while (r < len && isspace((unsigned char)body[r])) r++;
        for (int j = 0; !ok && vec_functions[j]; j++)
          ok = strlen(vec_functions[j]) == wl && strncmp(body + p, vec_functions[j], wl) == 0 &&
               r < len && body[r] == '(';
      }
      if (!ok) VEC_FAIL();
      memcpy(out + o, body + p, wl);
      o += wl;
      p = q;
    } else if (isdigit((unsigned char)c) || (c == '.' && isdigit((unsigned char)body[p + 1]))) {
      size_t q = p;
      int fl = 0;
      while (q < len && (isalnum((unsigned char)body[q]) || body[q] == '.' ||
                         ((body[q] == '+' || body[q] == '-') && (body[q - 1] == 'e' || body[q - 1] == 'E')))) {
        if (body[q] == '.' || body[q] == 'e' || body[q] == 'E') fl = 1;
        q++;
      }
      char last = body[q - 1];
      if (body[p] == '0' && (body[p + 1] == 'x' || body[p + 1] == 'X')) VEC_FAIL();
      if (fl || last == 'f' || last == 'F') {
        /* a float literal: only in float bodies, only with the f suffix */
        if (t != OCAL_F32 || (last != 'f' && last != 'F')) {
          if (!(t == OCAL_F64 && last != 'f' && last != 'F')) VEC_FAIL();
        }
      } else if (!isdigit((unsigned char)last) || q - p > 9) {
        VEC_FAIL(); /* suffixes (u, l) and literals that may be long: the scalar form */
      }
      (void)is_float;
      memcpy(out + o, body + p, q - p);
      o += q - p;
      p = q;
    } else if (strchr("+-*/=(),;", c)) {
      if (c == '=' && body[p + 1] == '=') VEC_FAIL();
      out[o++] = c;
      p++;
    } else {
      VEC_FAIL(); /* < > ! & | ^ ~ % ? : [ ] { } . and anything else */
    }
    if (o + 64 > cap) VEC_FAIL();
  }
#undef VEC_FAIL
  out[o] = '\0';
  return out;
}

/* Writes and builds the 4-wide program; leaves g->vec NULL when there is none. */
static void build_vector_form(ocal_gen g, const char *body, const char *preamble) {
  vec_use use[OCAL__GEN_MAX_VEC_ARGS];
  if (g->nparams == 0 || g->nparams > OCAL__GEN_MAX_VEC_ARGS) return;
  char *vbody = vectorize_body(g, body, use);
  if (!vbody) return;
  const char *t = ocal__dtype_cl_type(g->params[0].dtype);
  sbuf b = {0};
  sb_header(&b, "elementwise (4-wide form)", g, preamble);
  sb_add(&b, "__kernel void ocal_elementwise_vec(const ulong n");
  sb_params(&b, g);
  sb_add(&b, ") {\n");
  sb_rebase(&b, g);
  sb_add(&b,
         "  const ulong ocal_nv = n / 4;\n"
         "  for (ulong ocal_q = get_global_id(0); ocal_q < ocal_nv; ocal_q += get_global_size(0)) {\n");
  for (int k = 0; k < g->nparams; k++) {
    const ocal__gen_param *p = &g->params[k];
    if (!p->pointer) continue;
    if (use[k].read)
      sb_add(&b, "    %s4 %s_ocal_v = ((__global %s%s4 *)%s)[ocal_q];\n", t, p->name,
             p->is_const ? "const " : "", t, p->name);
    else
      sb_add(&b, "    %s4 %s_ocal_v = (%s4)(0);\n", t, p->name, t);
  }
  sb_user(&b, "body", vbody);
  sb_add(&b, "    ;\n");
  for (int k = 0; k < g->nparams; k++) {
    const ocal__gen_param *p = &g->params[k];
    if (p->pointer && use[k].written && !p->is_const)
      sb_add(&b, "    ((__global %s4 *)%s)[ocal_q] = %s_ocal_v;\n", t, p->name, p->name);
  }
  sb_add(&b,
         "  }\n"
         "  for (ulong i = ocal_nv * 4 + get_global_id(0); i < n; i += get_global_size(0)) {\n");
  sb_user(&b, "body", body);
  sb_add(&b, "  ;}\n}\n");
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
  sbuf b = {0};
  sb_header(&b, "elementwise", g, preamble);
  /* CPUs: one work-item per index, straight-line code: PoCL vectorises a work-group across
   * its work-items only then (measured: a grid-stride loop ran at about half of ocal_axpy's
   * bandwidth there, this form at or above it). */
  sb_add(&b, "__kernel void ocal_elementwise_flat(const ulong n");
  sb_params(&b, g);
  sb_add(&b, ") {\n");
  sb_rebase(&b, g);
  sb_add(&b, "  const ulong i = get_global_id(0);\n  if (i < n) {\n");
  sb_user(&b, "body", body);
  sb_add(&b, "  ;}\n}\n");
  /* GPUs: four indices per work-item, a grid-size apart (coalesced), with the pointers
   * restrict so that the compiler may issue the loads of all four before the stores: one
   * index per work-item keeps too few bytes in flight to stream at the copy bandwidth
   * (measured on an H200: 3.4 TB/s against ocal_axpy's float4 kernel at 4.35 TB/s). */
  sb_add(&b, "__kernel void ocal_elementwise_wide(const ulong n");
  sb_params_q(&b, g, "restrict ");
  sb_add(&b, ") {\n");
  sb_rebase_q(&b, g, "restrict ");
  sb_add(&b,
         "  const ulong ocal_s = get_global_size(0);\n"
         "  ulong ocal_b = get_global_id(0);\n"
         "  for (; ocal_b + 3 * ocal_s < n; ocal_b += 4 * ocal_s) {\n");
  for (int u = 0; u < 4; u++) {
    sb_add(&b, "  { const ulong i = ocal_b + %d * ocal_s;\n", u);
    sb_user(&b, "body", body);
    sb_add(&b, "  ;}\n");
  }
  sb_add(&b, "  }\n  for (; ocal_b < n; ocal_b += ocal_s) { const ulong i = ocal_b;\n");
  sb_user(&b, "body", body);
  sb_add(&b, "  ;}\n}\n");
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

/* "a + b" or "b + a", spaces and outer parentheses ignored. */
static int is_plain_sum(const char *expr) {
  char s[64];
  size_t n = 0;
  for (const char *p = expr; *p; p++) {
    if (*p == ' ' || *p == '\t' || *p == '\n') continue;
    if (n + 1 >= sizeof s) return 0;
    s[n++] = *p;
  }
  s[n] = '\0';
  char *t = s;
  while (n >= 2 && t[0] == '(' && t[n - 1] == ')') {
    t++;
    n -= 2;
    t[n] = '\0';
  }
  return strcmp(t, "a+b") == 0 || strcmp(t, "b+a") == 0;
}

static ocal_status check_expr(const char *func, const char *what, const char *expr) {
  if (!expr || !expr[0])
    return ocal__fail(OCAL_INVALID_ARGUMENT, func, "%s must not be NULL or empty", what);
  return OCAL_OK;
}

/* The reduction's state and its four operations. The compensated sum is cl/reduce.cl's
 * Neumaier step in one lane. */
static void sb_reduction_state(sbuf *b, ocal_gen g, const char *neutral, const char *reduce,
                               int compensated) {
  const char *t = ocal__dtype_cl_type(g->dtype);
  sb_add(b, "typedef %s ocal_T;\ntypedef %s4 ocal_T4;\n#define OCAL_WG_MAX %d\n", t, t, WG_MAX);
  if (compensated) {
    sb_add(b,
           "#pragma OPENCL FP_CONTRACT OFF\n"
           "typedef struct { ocal_T ocal_s; ocal_T ocal_c; } ocal_st;\n"
           "ocal_st ocal_init(void) { ocal_st a; a.ocal_s = (ocal_T)(\n");
    sb_user(b, "neutral", neutral);
    sb_add(b,
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
    sb_add(b, "typedef ocal_T ocal_st;\nocal_T ocal_reduce(ocal_T a, ocal_T b) { return (\n");
    sb_user(b, "reduce", reduce);
    sb_add(b, "); }\nocal_st ocal_init(void) { return (ocal_T)(\n");
    sb_user(b, "neutral", neutral);
    sb_add(b,
           "); }\n"
           "void ocal_add(ocal_st *a, ocal_T ocal_v) { *a = ocal_reduce(*a, ocal_v); }\n"
           "void ocal_merge(ocal_st *a, ocal_st b) { *a = ocal_reduce(*a, b); }\n"
           "ocal_T ocal_final(ocal_st a) { return a; }\n");
  }
}

/* The map expression at index `idx` into variable `var`, inside its own block so that `i`
 * is a const ulong there. */
static void sb_map(sbuf *b, const char *var, const char *idx, const char *map) {
  sb_add(b, "    { const ulong i = %s; %s = (ocal_T)(\n", idx, var);
  sb_user(b, "map", map);
  sb_add(b, "); }\n");
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
  int compensated = ocal__dtype_is_float(dtype) && is_plain_sum(reduce);
  g->state_bytes = ocal_dtype_size(dtype) * (compensated ? 2 : 1);
  sbuf b = {0};
  sb_header(&b, "reduction", g, preamble);
  sb_reduction_state(&b, g, neutral, reduce, compensated);
  /* Shared arguments: the user's, then the block (outer, R, inner), the chunks, the output
   * (states when chunks > 1, else results). */
  const char *tail =
      ", const ulong ocal_outer, const ulong ocal_R, const ulong ocal_inner, const ulong ocal_chunks,"
      " const ulong ocal_clen, __global ocal_st *ocal_part, __global ocal_T *ocal_out,"
      " const ulong ocal_ooff) {\n";
  sb_add(&b,
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
  sb_add(&b, "__kernel void ocal_red_contig(const ulong n");
  sb_params(&b, g);
  sb_add(&b, "%s", tail);
  sb_rebase(&b, g);
  sb_add(&b,
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
    sb_add(&b,
           "    ocal_T4 ocal_ls = (ocal_T4)(0), ocal_lc = (ocal_T4)(0);\n"
           "    for (; ocal_r + 4 <= ocal_r1; ocal_r += 4) {\n");
  else
    sb_add(&b,
           "    ocal_st ocal_a1 = ocal_init(), ocal_a2 = ocal_init(), ocal_a3 = ocal_init();\n"
           "    for (; ocal_r + 4 <= ocal_r1; ocal_r += 4) {\n");
  sb_map(&b, "ocal_v0", "ocal_base + ocal_r", map);
  sb_map(&b, "ocal_v1", "ocal_base + ocal_r + 1", map);
  sb_map(&b, "ocal_v2", "ocal_base + ocal_r + 2", map);
  sb_map(&b, "ocal_v3", "ocal_base + ocal_r + 3", map);
  if (compensated)
    sb_add(&b,
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
    sb_add(&b,
           "      ocal_add(&ocal_state, ocal_v0); ocal_add(&ocal_a1, ocal_v1);\n"
           "      ocal_add(&ocal_a2, ocal_v2); ocal_add(&ocal_a3, ocal_v3);\n"
           "    }\n"
           "    ocal_merge(&ocal_state, ocal_a1); ocal_merge(&ocal_a2, ocal_a3);\n"
           "    ocal_merge(&ocal_state, ocal_a2);\n");
  sb_add(&b, "    for (; ocal_r < ocal_r1; ocal_r++) {\n");
  sb_map(&b, "ocal_v0", "ocal_base + ocal_r", map);
  sb_add(&b,
         "      ocal_add(&ocal_state, ocal_v0);\n"
         "    }\n"
         "  } else {\n"
         "    ulong ocal_r = ocal_c * ocal_L + ocal_lid;\n"
         "    for (; ocal_r + 3 * ocal_stride < ocal_R; ocal_r += 4 * ocal_stride) {\n");
  sb_map(&b, "ocal_v0", "ocal_base + ocal_r", map);
  sb_map(&b, "ocal_v1", "ocal_base + ocal_r + ocal_stride", map);
  sb_map(&b, "ocal_v2", "ocal_base + ocal_r + 2 * ocal_stride", map);
  sb_map(&b, "ocal_v3", "ocal_base + ocal_r + 3 * ocal_stride", map);
  sb_add(&b,
         "      ocal_add(&ocal_state, ocal_v0); ocal_add(&ocal_state, ocal_v1); ocal_add(&ocal_state, ocal_v2); ocal_add(&ocal_state, ocal_v3);\n"
         "    }\n"
         "    for (; ocal_r < ocal_R; ocal_r += ocal_stride) {\n");
  sb_map(&b, "ocal_v0", "ocal_base + ocal_r", map);
  sb_add(&b,
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
  sb_add(&b, "__kernel void ocal_red_strided(const ulong n");
  sb_params(&b, g);
  sb_add(&b, "%s", tail);
  sb_rebase(&b, g);
  sb_add(&b,
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
  sb_add(&b,
         "      ocal_add(&ocal_state, ocal_v0); ocal_add(&ocal_state2, ocal_v1);\n"
         "    }\n"
         "    if (ocal_r < ocal_r1) {\n");
  sb_map(&b, "ocal_v0", "ocal_p0 + ocal_r * ocal_inner", map);
  sb_add(&b,
         "      ocal_add(&ocal_state, ocal_v0);\n"
         "    }\n"
         "    ocal_merge(&ocal_state, ocal_state2);\n"
         "    if (ocal_chunks == 1) ocal_out[ocal_ooff + ocal_o * ocal_inner + ocal_j] = ocal_final(ocal_state);\n"
         "    else ocal_part[ocal_t] = ocal_state;\n"
         "  }\n"
         "}\n\n");
  /* The second passes, over states P[(o * S + s) * inner + j]. */
  sb_add(&b,
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
 * itself: the prologue defines the operation `user` (its type, combination, neutral value
 * and look-back tile) from the user's strings, and the input (OCAL_IN_PARAMS, OCAL_LOAD)
 * from the argument list and the input expression. The kernels and the plan are
 * ocal_cumsum's (src/ops/engine.h). The user's arguments enter the kernels under mangled
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
  sbuf b = {0};
  sb_header(&b, "scan", g, preamble);
  /* The operation, as cl/scan.cl's built-in ones are written. */
  sb_add(&b, "typedef %s user_A;\nuser_A user_cvt(%s v) { return v; }\n", t, t);
  sb_add(&b, "user_A user_acc_cvt(user_A v) { return v; }\n");
  sb_add(&b, "user_A user_op(user_A a, user_A b) { return (\n");
  sb_user(&b, "op", op);
  sb_add(&b, "); }\n#define user_ID ((user_A)(%s))\n", neutral);
  sb_add(&b, "#define user_LB_IPT %zu\n", ocal__scan_lookback_ipt(ocal_dtype_size(dtype)));
  sb_add(&b, "#define user_BITS(v) T_BITS(v)\n#define user_FROM_BITS(b) T_FROM_BITS(b)\n");
  /* The input at flat index i. */
  sb_add(&b, "user_A ocal_input(const ulong i, const ulong n");
  for (int k = 0; k < g->nparams; k++) {
    const ocal__gen_param *p = &g->params[k];
    if (p->pointer)
      sb_add(&b, ", __global %s%s *%s", p->is_const ? "const " : "",
             ocal__dtype_cl_type(p->dtype), p->name);
    else
      sb_add(&b, ", const %s %s", ocal__dtype_cl_type(p->dtype), p->name);
  }
  sb_add(&b, ") { return (user_A)(\n");
  sb_user(&b, "input", input);
  sb_add(&b, "); }\n#define OCAL_IN_PARAMS const ulong ocal_n");
  for (int k = 0; k < g->nparams; k++) {
    const ocal__gen_param *p = &g->params[k];
    if (p->pointer)
      sb_add(&b, ", __global %s%s *%s_ocal_base, const ulong %s_ocal_off",
             p->is_const ? "const " : "", ocal__dtype_cl_type(p->dtype), p->name, p->name);
    else
      sb_add(&b, ", const %s %s_ocal_arg", ocal__dtype_cl_type(p->dtype), p->name);
  }
  sb_add(&b, "\n#define OCAL_LOAD(NAME, ocal_i) ocal_input((ocal_i), ocal_n");
  for (int k = 0; k < g->nparams; k++) {
    const ocal__gen_param *p = &g->params[k];
    if (p->pointer)
      sb_add(&b, ", %s_ocal_base + %s_ocal_off", p->name, p->name);
    else
      sb_add(&b, ", %s_ocal_arg", p->name);
  }
  /* cl/scan.cl reads T, the element type (-DT=... for the built-in scans), defined only here,
   * after the user's text, which may use the name T for itself. */
  sb_add(&b, ")\n#define T %s\n", t);
  g->own_len = b.len;
  sb_add(&b, "#line 1 \"scan.cl\"\n%s", scan_cl->text);
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

ocal_status ocal_gen_source(ocal_gen gen, const char **source) {
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

/* Kernel arguments a run passes: two per user argument at most (a pointer's buffer and
 * offset), plus the generated kernels' own (fewer than 32). */
#define MAX_CL_ARGS (2 * OCAL_GEN_MAX_ARGS + 32)

/* The user's arguments as kernel arguments (after `n`): checks their count, kinds, types and
 * contexts. `first` receives the first buffer argument (NULL if none). */
typedef struct {
  ocal__arg a[MAX_CL_ARGS];
  cl_mem mems[MAX_CL_ARGS / 2];
  cl_ulong offs[MAX_CL_ARGS / 2];
  int count;
} cl_args;

static ocal_status user_args(const char *func, ocal_gen g, int nargs, const ocal_gen_arg *args,
                             cl_args *out, ocal_buffer *first) {
  *first = NULL;
  if (nargs != g->nparams)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "%d argument%s given, but the argument list declares %d", nargs,
                      nargs == 1 ? "" : "s", g->nparams);
  if (nargs > 0 && !args) return ocal__fail(OCAL_INVALID_ARGUMENT, func, "args must not be NULL");
  if (2 * nargs > MAX_CL_ARGS)
    return ocal__fail(OCAL_UNSUPPORTED, func, "more than %d arguments", MAX_CL_ARGS / 2);
  out->count = 0;
  for (int k = 0; k < nargs; k++) {
    const ocal__gen_param *p = &g->params[k];
    const char *t = ocal__dtype_cl_type(p->dtype);
    if (p->pointer) {
      ocal_buffer buf = args[k].buffer;
      if (!buf || args[k].scalar)
        return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                          "argument %d ('%s%s *%s') is a pointer: pass a buffer "
                          "(OCAL_GEN_BUFFER(buf))",
                          k, p->is_const ? "const " : "", t, p->name);
      ocal_status status = ocal__check_buffer(buf, func);
      if (status != OCAL_OK) return status;
      if (buf->ctx != g->ctx)
        return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                          "argument %d ('%s') belongs to another context", k, p->name);
      if (buf->dtype != p->dtype)
        return ocal__fail(OCAL_TYPE_MISMATCH, func,
                          "argument %d ('%s *%s') needs a buffer of %s (%s), but the buffer "
                          "holds %s",
                          k, t, p->name, ocal_dtype_name(p->dtype), t,
                          ocal_dtype_name(buf->dtype));
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

/* Appends kernel arguments; fails when there are too many. */
static int push(cl_args *a, size_t size, const void *value) {
  if (a->count >= MAX_CL_ARGS) return -1;
  a->a[a->count++] = (ocal__arg){size, value};
  return 0;
}

/* The reduction of the (outer, R, inner) block into out at element offset ooff. The plan is
 * src/ops/reduce.c's (enqueue()), element for element, so the trees match ocal_sum's. */
static ocal_status run_reduction(const char *func, ocal_gen g, cl_args *ua, size_t outer,
                                 size_t R, size_t inner, ocal_buffer out) {
  ocal_context ctx = g->ctx;
  const size_t outputs = outer * inner;
  const size_t target = (ctx->info.compute_units ? ctx->info.compute_units : 1) * 2048;
  const size_t vw = 16 / ocal_dtype_size(g->dtype); /* the built-in's vector width */
  int contig = inner == 1 && R >= 16 &&
               (ctx->info.type == OCAL_DEVICE_GPU || outer < 64 || R >= 65536);
  ocal__kernel *k1, *k2 = NULL;
  ocal_status kstatus = gen_kernel(func, g, contig ? K_CONTIG : K_STRIDED, &k1);
  if (kstatus != OCAL_OK) return kstatus;
  size_t chunks = 1, clen = R, local1, global1;
  if (contig) {
    size_t lmax = pow2_local(k1, WG_MAX);
    local1 = R < 2 * vw * lmax && ctx->info.type == OCAL_DEVICE_GPU ? pow2_local(k1, 64) : lmax;
    size_t groups_wanted = ocal__ceil_div(target, local1);
    if (outer < groups_wanted) {
      size_t most = R / (vw * local1 * 16);
      chunks = ocal__ceil_div(groups_wanted, outer);
      if (chunks > most) chunks = most;
      if (chunks < 1) chunks = 1;
    }
    global1 = outer * chunks * local1;
    clen = ctx->info.type == OCAL_DEVICE_GPU ? 0 : 1;
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
    cl_args a1 = {.count = 0};
    push(&a1, sizeof c_n, &c_n);
    int bad = 0;
    for (int k = 0; k < ua->count; k++) bad |= push(&a1, ua->a[k].size, ua->a[k].value);
    bad |= push(&a1, sizeof c_outer, &c_outer) | push(&a1, sizeof c_R, &c_R) |
           push(&a1, sizeof c_inner, &c_inner) | push(&a1, sizeof c_chunks, &c_chunks) |
           push(&a1, sizeof c_clen, &c_clen) | push(&a1, sizeof(cl_mem), &part) |
           push(&a1, sizeof(cl_mem), &out_mem) | push(&a1, sizeof(cl_ulong), chunks > 1 ? &zero : &ooff);
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
static ocal_status run_scan(const char *func, ocal_gen g, cl_args *ua, size_t outer, size_t R,
                            size_t inner, ocal_buffer out) {
  cl_ulong c_n = outer * R * inner;
  ocal__arg in[1 + MAX_CL_ARGS];
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
  cl_args ua;
  ocal_buffer first;
  if ((status = user_args(__func__, gen, nargs, args, &ua, &first)) != OCAL_OK) return status;
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
    cl_args a = {.count = 0};
    cl_ulong c_n = n;
    int bad = push(&a, sizeof c_n, &c_n);
    for (int k = 0; k < ua.count; k++) bad |= push(&a, ua.a[k].size, ua.a[k].value);
    if (bad) return OCAL_FAIL(OCAL_UNSUPPORTED, "too many arguments");
    /* CPUs: one work-item per index, straight-line. GPUs: the 4-wide form where there is
     * one and every buffer is aligned for it, else four indices per work-item. */
    if (gen->ctx->info.type != OCAL_DEVICE_GPU)
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

static void shape_string(int ndim, const size_t *shape, char *out, size_t size) {
  size_t used = (size_t)snprintf(out, size, "[");
  for (int i = 0; i < ndim && used < size; i++)
    used += (size_t)snprintf(out + used, size - used, i ? ", %zu" : "%zu", shape[i]);
  if (used < size) snprintf(out + used, size - used, "]");
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
  cl_args ua;
  ocal_buffer x;
  if ((status = user_args(__func__, gen, nargs, args, &ua, &x)) != OCAL_OK) return status;
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
      shape_string(out->ndim, out->shape, have, sizeof have);
      shape_string(x->ndim, x->shape, xs, sizeof xs);
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
    shape_string(out->ndim, out->shape, have, sizeof have);
    shape_string(x->ndim, x->shape, xs, sizeof xs);
    shape_string(nd, dropped, need, sizeof need);
    return OCAL_FAIL(OCAL_SHAPE_MISMATCH,
                     "out has shape %s, but the reduction of shape %s along axis %d gives %s",
                     have, xs, a, need);
  }
  if (outer * inner == 0) return OCAL_OK;
  return run_reduction(__func__, gen, &ua, outer, x->shape[a], inner, out);
}
