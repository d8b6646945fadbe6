/* ocal — raw programs and kernels: reading a kernel's parameter list from OpenCL C source,
 * moved here from the generators' parser because the raw-kernel API (kernel.c) uses it. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_internal.h"

/* ---- the parameter lists of users' kernels ------------------------------------------- */

/* A copy of source with comments replaced by spaces (string literals do not occur in
 * OpenCL C kernels' code in ways that matter here). */
static char *strip_comments(const char *src) {
  size_t len = strlen(src);
  char *out = malloc(len + 1);
  if (!out) return NULL;
  size_t i = 0;
  while (i < len) {
    if (src[i] == '/' && src[i + 1] == '/') {
      while (i < len && src[i] != '\n') out[i++] = ' ';
    } else if (src[i] == '/' && src[i + 1] == '*') {
      out[i++] = ' ';
      out[i++] = ' ';
      while (i < len && !(src[i] == '*' && src[i + 1] == '/')) {
        out[i] = src[i] == '\n' ? '\n' : ' ';
        i++;
      }
      if (i < len) {
        out[i++] = ' ';
        out[i++] = ' ';
      }
    } else {
      out[i] = src[i];
      i++;
    }
  }
  out[len] = '\0';
  return out;
}

static int word_is(const char *s, size_t len, const char *w) {
  return strlen(w) == len && strncmp(s, w, len) == 0;
}

/* Describes one parameter's text (between commas). 0 on success. */
static int read_param(const char *s, size_t len, ocal__sig_arg *a) {
  memset(a, 0, sizeof *a);
  a->kind = OCAL__ARG_SCALAR;
  const char *last = NULL, *type = NULL;
  size_t last_len = 0, type_len = 0;
  int star = 0;
  for (size_t p = 0; p < len;) {
    if (isalpha((unsigned char)s[p]) || s[p] == '_') {
      size_t q = p;
      while (q < len && (isalnum((unsigned char)s[q]) || s[q] == '_')) q++;
      const char *w = s + p;
      size_t wl = q - p;
      if (word_is(w, wl, "__global") || word_is(w, wl, "global") ||
          word_is(w, wl, "__constant") || word_is(w, wl, "constant"))
        a->kind = OCAL__ARG_GLOBAL;
      else if (word_is(w, wl, "__local") || word_is(w, wl, "local"))
        a->kind = OCAL__ARG_LOCAL;
      else if (!word_is(w, wl, "const") && !word_is(w, wl, "restrict") &&
               !word_is(w, wl, "__restrict") && !word_is(w, wl, "volatile") &&
               !word_is(w, wl, "__private") && !word_is(w, wl, "private") &&
               !word_is(w, wl, "__read_only") && !word_is(w, wl, "read_only") &&
               !word_is(w, wl, "__write_only") && !word_is(w, wl, "write_only")) {
        if (last) {
          type = last;
          type_len = last_len;
        }
        last = w;
        last_len = wl;
      }
      p = q;
    } else if (s[p] == '*') {
      star = 1;
      p++;
    } else if (isspace((unsigned char)s[p])) {
      p++;
    } else {
      return -1; /* arrays, attributes, macros with arguments: not read */
    }
  }
  if (!last || !type || type_len >= OCAL__SIG_NAME_MAX || last_len >= OCAL__SIG_NAME_MAX)
    return -1;
  if (star && a->kind == OCAL__ARG_SCALAR) return -1; /* a private pointer: not valid */
  if (!star && a->kind != OCAL__ARG_SCALAR) return -1;
  memcpy(a->type, type, type_len);
  memcpy(a->name, last, last_len);
  return 0;
}

int ocal__kernel_signature(const char *source, const char *name, ocal__sig_arg **args) {
  *args = NULL;
  char *s = strip_comments(source);
  if (!s) return -1;
  int result = -1;
  size_t nlen = strlen(name);
  for (const char *p = s; (p = strstr(p, "kernel")) != NULL; p += 6) {
    /* "kernel" or "__kernel" as a whole word */
    const char *w = p;
    if (w >= s + 2 && w[-1] == '_' && w[-2] == '_') w -= 2;
    if (w > s && (isalnum((unsigned char)w[-1]) || w[-1] == '_')) continue;
    const char *q = p + 6;
    if (isalnum((unsigned char)*q) || *q == '_') continue;
    while (isspace((unsigned char)*q)) q++;
    if (strncmp(q, "void", 4) != 0) continue;
    q += 4;
    while (isspace((unsigned char)*q)) q++;
    if (strncmp(q, name, nlen) != 0) continue;
    q += nlen;
    if (isalnum((unsigned char)*q) || *q == '_') continue;
    while (isspace((unsigned char)*q)) q++;
    if (*q != '(') continue;
    q++;
    const char *end = strchr(q, ')');
    if (!end) break;
    /* Count and read the parameters. */
    int n = 0, cap = 8;
    ocal__sig_arg *list = malloc((size_t)cap * sizeof *list);
    if (!list) break;
    const char *b = q;
    int empty = 1;
    for (const char *c = q; c < end; c++)
      if (!isspace((unsigned char)*c)) empty = 0;
    if (empty || (end - q == 4 && strncmp(q, "void", 4) == 0)) {
      *args = list;
      result = 0;
      break;
    }
    int ok = 1;
    for (const char *c = q;; c++) {
      if (c == end || *c == ',') {
        if (n == cap) {
          cap *= 2;
          ocal__sig_arg *bigger = realloc(list, (size_t)cap * sizeof *list);
          if (!bigger) {
            ok = 0;
            break;
          }
          list = bigger;
        }
        if (read_param(b, (size_t)(c - b), &list[n]) != 0) {
          ok = 0;
          break;
        }
        n++;
        b = c + 1;
        if (c == end) break;
      }
    }
    if (ok) {
      *args = list;
      result = n;
    } else {
      free(list);
    }
    break;
  }
  free(s);
  return result;
}
