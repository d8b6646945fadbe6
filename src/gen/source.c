/* ocal — kernel generators: string building. The generated sources are written here piece by
 * piece (the user's text under #line directives of its own, so compiler messages name it),
 * with the parameter lists and the rebasing of pointer arguments every generated kernel
 * shares. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_internal.h"



void ocal__sb_add(ocal__sbuf *b, const char *fmt, ...) {
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
void ocal__sb_user(ocal__sbuf *b, const char *label, const char *text) {
  ocal__sb_add(b, "#line 1 \"%s\"\n%s\n", label, text);
  ocal__sb_add(b, "#line %d \"ocal-generated\"\n", b->lines + 2);
}

int ocal__gen_uses_double(ocal_dtype d) { return d == OCAL_F64 || d == OCAL_C64; }

void ocal__sb_header(ocal__sbuf *b, const char *what, const ocal_gen g, const char *preamble) {
  int fp64 = ocal__gen_uses_double(g->dtype) && g->kind != GEN_ELEMENTWISE;
  for (int k = 0; k < g->nparams; k++) fp64 |= ocal__gen_uses_double(g->params[k].dtype);
  ocal__sb_add(b, "/* ocal generated %s kernel */\n", what);
  if (fp64) ocal__sb_add(b, "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n");
  if (preamble && preamble[0]) ocal__sb_user(b, "preamble", preamble);
}

/* The parameter list: "const ulong n, __global const float *x_ocal_base, const ulong
 * x_ocal_off, const float a, ..." (n is the index count). */
void ocal__sb_params_q(ocal__sbuf *b, const ocal_gen g, const char *qual) {
  for (int k = 0; k < g->nparams; k++) {
    const ocal__gen_param *p = &g->params[k];
    const char *t = ocal__dtype_cl_type(p->dtype);
    if (p->pointer)
      ocal__sb_add(b, ", __global %s%s *%s%s_ocal_base, const ulong %s_ocal_off",
             p->is_const ? "const " : "", t, qual, p->name, p->name);
    else
      ocal__sb_add(b, ", const %s %s", t, p->name);
  }
}
void ocal__sb_params(ocal__sbuf *b, const ocal_gen g) { ocal__sb_params_q(b, g, ""); }

void ocal__sb_rebase_q(ocal__sbuf *b, const ocal_gen g, const char *qual) {
  for (int k = 0; k < g->nparams; k++) {
    const ocal__gen_param *p = &g->params[k];
    if (p->pointer)
      ocal__sb_add(b, "  __global %s%s *%sconst %s = %s_ocal_base + %s_ocal_off;\n",
             p->is_const ? "const " : "", ocal__dtype_cl_type(p->dtype), qual, p->name, p->name,
             p->name);
  }
  /* Arguments the expressions do not use are fine: no warnings are errors in OpenCL C. */
}
void ocal__sb_rebase(ocal__sbuf *b, const ocal_gen g) { ocal__sb_rebase_q(b, g, ""); }
