/* ocal — reading argument lists: the generators' "float a, const float *x, float *y", and the
 * parameter lists of users' kernels (for argument checks when the driver cannot describe
 * them, as after a program was loaded from the disk cache). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gen_internal.h"

/* ---- tokens -------------------------------------------------------------------------- */

typedef enum { TOK_END, TOK_IDENT, TOK_STAR, TOK_COMMA, TOK_OTHER } tok_kind;

typedef struct {
  tok_kind kind;
  size_t pos, len;
} token;

static token next_token(const char *s, size_t *pos) {
  size_t p = *pos;
  while (s[p] && isspace((unsigned char)s[p])) p++;
  token t = {TOK_END, p, 0};
  if (!s[p]) {
    *pos = p;
    return t;
  }
  if (isalpha((unsigned char)s[p]) || s[p] == '_') {
    size_t q = p;
    while (isalnum((unsigned char)s[q]) || s[q] == '_') q++;
    t.kind = TOK_IDENT;
    t.len = q - p;
  } else {
    t.kind = s[p] == '*' ? TOK_STAR : s[p] == ',' ? TOK_COMMA : TOK_OTHER;
    t.len = 1;
    /* An unexpected run of characters is shown whole: "123abc", not "1". */
    if (t.kind == TOK_OTHER)
      while (s[p + t.len] && !isspace((unsigned char)s[p + t.len]) && s[p + t.len] != ',' &&
             s[p + t.len] != '*')
        t.len++;
  }
  *pos = p + t.len;
  return t;
}

static int tok_is(const char *s, token t, const char *word) {
  return t.kind == TOK_IDENT && strlen(word) == t.len && strncmp(s + t.pos, word, t.len) == 0;
}

int ocal__gen_dtype_from_cl(const char *name, size_t len) {
  /* f16 and bf16 are left out: a user's expression would compute on `half` (which needs
   * cl_khr_fp16) or on bf16's raw bits; cast to f32 first. */
#define OCAL__GEN_CL_NAME(NAME, lname, cltype, size)                       \
  if (OCAL_##NAME != OCAL_F16 && OCAL_##NAME != OCAL_BF16 && strlen(cltype) == len && \
      strncmp(name, cltype, len) == 0)                                     \
    return OCAL_##NAME;
  OCAL_DTYPE_MAP(OCAL__GEN_CL_NAME)
#undef OCAL__GEN_CL_NAME
  return -1;
}

/* Fails with a message that shows the list and points at the token. */
static ocal_status parse_error(const char *func, const char *text, token t, const char *what) {
  char tokbuf[48];
  if (t.kind == TOK_END)
    snprintf(tokbuf, sizeof tokbuf, "the end of the list");
  else
    snprintf(tokbuf, sizeof tokbuf, "'%.*s'", (int)(t.len < 40 ? t.len : 40), text + t.pos);
  ocal_status status = ocal__fail(OCAL_INVALID_ARGUMENT, func,
                                  "cannot parse the argument list at column %zu, %s: %s",
                                  t.pos + 1, tokbuf, what);
  /* Show the list on one line (newlines as spaces) with a caret under the token. */
  size_t len = strlen(text);
  if (len < 400) {
    char *line = malloc(len + 1), *caret = malloc(t.pos + 2);
    if (line && caret) {
      for (size_t k = 0; k < len; k++) line[k] = isspace((unsigned char)text[k]) ? ' ' : text[k];
      line[len] = '\0';
      memset(caret, ' ', t.pos);
      caret[t.pos] = '^';
      caret[t.pos + 1] = '\0';
      ocal__append_error("\n  %s\n  %s", line, caret);
    }
    free(line);
    free(caret);
  }
  return status;
}

static const char *const reserved_words[] = {
    "const", "restrict", "__restrict", "__global", "global", "__local", "local", "__constant",
    "constant", "__private", "private", "volatile", "void", "if", "else", "for", "while", "do",
    "return", "struct", "union", "enum", "typedef", "sizeof", "static", "extern", "inline",
    "kernel", "__kernel", "unsigned", "signed", "char", "short", "half", "bool", "size_t",
    "i", "n", NULL};

#define TYPE_LIST "float, double, int, uint, long, ulong, uchar, float2 or double2"

ocal_status ocal__gen_parse_params(const char *func, const char *text, ocal__gen_param **params,
                                   int *count) {
  *params = NULL;
  *count = 0;
  if (!text) return ocal__fail(OCAL_INVALID_ARGUMENT, func, "the argument list is NULL");
  size_t pos = 0;
  token t = next_token(text, &pos);
  if (t.kind == TOK_END) return OCAL_OK; /* no arguments */
  int cap = 8, n = 0;
  ocal__gen_param *list = malloc((size_t)cap * sizeof *list);
  if (!list) return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, func, "no memory");
  ocal_status status = OCAL_OK;
  for (;;) {
    ocal__gen_param p;
    memset(&p, 0, sizeof p);
    int dtype = -1;
    /* Qualifiers before the type. */
    while (tok_is(text, t, "const") || tok_is(text, t, "__global") || tok_is(text, t, "global")) {
      if (tok_is(text, t, "const")) p.is_const = 1;
      t = next_token(text, &pos);
    }
    if (t.kind != TOK_IDENT ||
        (dtype = ocal__gen_dtype_from_cl(text + t.pos, t.len)) < 0) {
      status = parse_error(func, text, t, "expected a type: " TYPE_LIST);
      goto fail;
    }
    p.dtype = (ocal_dtype)dtype;
    t = next_token(text, &pos);
    if (tok_is(text, t, "const")) {
      p.is_const = 1;
      t = next_token(text, &pos);
    }
    if (t.kind == TOK_STAR) {
      p.pointer = 1;
      t = next_token(text, &pos);
      while (tok_is(text, t, "restrict") || tok_is(text, t, "__restrict") ||
             tok_is(text, t, "const"))
        t = next_token(text, &pos);
      if (t.kind == TOK_STAR) {
        status = parse_error(func, text, t, "pointers to pointers are not supported");
        goto fail;
      }
    } else if (p.is_const) {
      p.is_const = 0; /* a const scalar is a scalar: kernel arguments are copies anyway */
    }
    if (t.kind != TOK_IDENT) {
      status = parse_error(func, text, t,
                           p.pointer ? "expected the argument's name" : "expected '*' or the argument's name");
      goto fail;
    }
    if (t.len >= OCAL__GEN_NAME_MAX) {
      status = parse_error(func, text, t, "the name is too long (63 characters at most)");
      goto fail;
    }
    int bad = (t.len >= 5 && strncasecmp(text + t.pos, "ocal_", 5) == 0) ||
              ocal__gen_dtype_from_cl(text + t.pos, t.len) >= 0;
    for (int k = 0; !bad && reserved_words[k]; k++) bad = tok_is(text, t, reserved_words[k]);
    if (bad) {
      status = parse_error(func, text, t,
                           "this name is reserved (i and n are the generated kernel's index and "
                           "length; OpenCL keywords, type names and names starting with ocal_ "
                           "cannot be used)");
      goto fail;
    }
    memcpy(p.name, text + t.pos, t.len);
    p.name[t.len] = '\0';
    for (int k = 0; k < n; k++)
      if (strcmp(list[k].name, p.name) == 0) {
        status = parse_error(func, text, t, "an argument of this name was declared before");
        goto fail;
      }
    if (n == cap) {
      cap *= 2;
      ocal__gen_param *bigger = realloc(list, (size_t)cap * sizeof *list);
      if (!bigger) {
        status = ocal__fail(OCAL_OUT_OF_HOST_MEMORY, func, "no memory");
        goto fail;
      }
      list = bigger;
    }
    list[n++] = p;
    t = next_token(text, &pos);
    if (t.kind == TOK_END) break;
    if (t.kind != TOK_COMMA) {
      status = parse_error(func, text, t, "expected ',' or the end of the list");
      goto fail;
    }
    t = next_token(text, &pos);
  }
  *params = list;
  *count = n;
  return OCAL_OK;
fail:
  free(list);
  return status;
}
