/* ocal — kernel generators: expression rewriting. The 4-wide form of an elementwise body,
 * and the test that tells a reduction's combining expression is a plain sum (which then gets
 * the compensated sum). tests/fuzz/fuzz_gen_body.c feeds both arbitrary text. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_internal.h"

/* ---- the 4-wide form of an elementwise body ---------------------------------------------
 * ocal_axpy streams at the copy bandwidth on GPUs with one 16-byte load per buffer and
 * work-item; scalar code does not (docs/measurements.md#examples). So when a body can be
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


/* Returns a malloc'ed rewritten body, or NULL when the body has no 4-wide form. */
char *ocal__gen_vectorize_body(const ocal_gen g, const char *body, ocal__vec_use *use) {
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

/* "a + b" or "b + a", spaces and outer parentheses ignored. */
int ocal__gen_is_plain_sum(const char *expr) {
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
