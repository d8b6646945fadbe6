/* ocal — the Matrix Market reader. The parsing core works on a memory buffer (no NUL
 * needed, nothing read outside it), so that a fuzzing target can drive it directly; the
 * public call reads the file and hands it over. */
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sparse_internal.h"

/* Lines longer than this are refused (real Matrix Market lines are far shorter). */
#define MAX_LINE 1024

void ocal__mtx_free(ocal__mtx *m) {
  if (m == NULL) return;
  free(m->ri);
  free(m->cj);
  free(m->val);
  m->ri = m->cj = NULL;
  m->val = NULL;
}

/* Copies the next line (without its newline) into buf; returns 0 at the end of data,
 * -1 for a line of MAX_LINE characters or more, -2 for a NUL byte. */
static int next_line(const char *data, size_t len, size_t *pos, char *buf, size_t *line_no) {
  if (*pos >= len) return 0;
  size_t p = *pos, n = 0;
  (*line_no)++;
  while (p < len && data[p] != '\n') {
    if (data[p] == '\0') return -2;
    if (n + 1 >= MAX_LINE) return -1;
    if (data[p] != '\r') buf[n++] = data[p];
    p++;
  }
  buf[n] = '\0';
  *pos = p < len ? p + 1 : p;
  return 1;
}

/* What is wrong with a line next_line refused. */
static const char *bad_line(int r) {
  return r == -2 ? "the line holds a NUL byte (the file is not text)"
                 : "the line is longer than 1023 characters, the most ocal reads (comments "
                   "included): shorten or remove it";
}

static int blank(const char *s) {
  while (*s && isspace((unsigned char)*s)) s++;
  return *s == '\0';
}

/* Parses one whole number token; returns 0 on failure. */
static int parse_int(const char **s, long long *out) {
  while (**s && isspace((unsigned char)**s)) (*s)++;
  if (!isdigit((unsigned char)**s) && **s != '-' && **s != '+') return 0;
  char *end;
  errno = 0;
  long long v = strtoll(*s, &end, 10);
  if (end == *s || errno == ERANGE || (*end && !isspace((unsigned char)*end))) return 0;
  *s = end;
  *out = v;
  return 1;
}

static int parse_real(const char **s, double *out) {
  while (**s && isspace((unsigned char)**s)) (*s)++;
  if (**s == '\0') return 0;
  char *end;
  double v = strtod(*s, &end);
  if (end == *s || (*end && !isspace((unsigned char)*end))) return 0;
  *s = end;
  *out = v;
  return 1;
}

ocal_status ocal__mtx_parse(const char *data, size_t len, ocal__mtx *out, const char *func) {
  memset(out, 0, sizeof *out);
  if (data == NULL && len > 0)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func, "no data");
  char line[MAX_LINE];
  size_t pos = 0, ln = 0;
  int r = next_line(data, len, &pos, line, &ln);
  if (r <= 0)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "line 1: %s; a Matrix Market file starts with "
                      "\"%%%%MatrixMarket matrix coordinate real general\"",
                      r == 0 ? "the file is empty" : bad_line(r));
  char w[6][32];
  int nw = sscanf(line, "%31s %31s %31s %31s %31s %31s", w[0], w[1], w[2], w[3], w[4], w[5]);
  if (nw < 5 || strcasecmp(w[0], "%%MatrixMarket") != 0 || strcasecmp(w[1], "matrix") != 0)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "line 1: not a Matrix Market header (expected \"%%%%MatrixMarket matrix "
                      "coordinate <real|integer|pattern> <general|symmetric>\")");
  if (strcasecmp(w[2], "coordinate") != 0)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "line 1: format \"%s\" is not read; only sparse \"coordinate\" files are",
                      w[2]);
  int pattern = strcasecmp(w[3], "pattern") == 0, integer = strcasecmp(w[3], "integer") == 0;
  if (!pattern && !integer && strcasecmp(w[3], "real") != 0)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "line 1: field \"%s\" is not read; use real, integer or pattern", w[3]);
  int symmetric = strcasecmp(w[4], "symmetric") == 0;
  if (!symmetric && strcasecmp(w[4], "general") != 0)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "line 1: symmetry \"%s\" is not read; use general or symmetric", w[4]);

  /* A word after the symmetry is not part of any header the reader knows ("hermitian" and
   * "skew-symmetric" would be refused above, but "general symmetric" would read as general). */
  if (nw > 5)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "line 1: \"%s\" after the symmetry \"%s\" is not part of a Matrix "
                      "Market header; remove it",
                      w[5], w[4]);

  /* Comments, then the size line. */
  long long rows = 0, cols = 0, nnz = 0;
  for (;;) {
    r = next_line(data, len, &pos, line, &ln);
    if (r == 0)
      return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                        "line %zu: the file ends before the size line \"rows cols entries\"", ln);
    if (r < 0)
      return ocal__fail(OCAL_INVALID_ARGUMENT, func, "line %zu: %s", ln, bad_line(r));
    if (line[0] == '%' || blank(line)) continue;
    const char *s = line;
    if (!parse_int(&s, &rows) || !parse_int(&s, &cols) || !parse_int(&s, &nnz) || !blank(s))
      return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                        "line %zu: the size line must be three whole numbers \"rows cols "
                        "entries\"",
                        ln);
    break;
  }
  if (rows < 1 || cols < 1 || nnz < 0)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "line %zu: sizes %lld x %lld with %lld entries; rows and columns must be "
                      ">= 1 and entries >= 0",
                      ln, rows, cols, nnz);
  if (symmetric && rows != cols)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "line %zu: a symmetric matrix must be square, not %lld x %lld", ln, rows,
                      cols);
  /* Every entry needs at least 4 bytes ("1 1\n"), so a count larger than the data can hold
   * is an error before anything is allocated for it. */
  if ((unsigned long long)nnz > len / 4 + 1)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "line %zu: %lld entries announced, but the file is too short to hold them",
                      ln, nnz);
  size_t cap = (size_t)nnz * (symmetric ? 2 : 1);
  if (cap == 0) cap = 1;
  out->ri = malloc(cap * sizeof *out->ri);
  out->cj = malloc(cap * sizeof *out->cj);
  out->val = malloc(cap * sizeof *out->val);
  if (!out->ri || !out->cj || !out->val) {
    ocal__mtx_free(out);
    return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, func, "no host memory for %lld entries", nnz);
  }
  out->rows = (size_t)rows;
  out->cols = (size_t)cols;
  size_t n = 0;
  long long seen = 0;
  while (seen < nnz) {
    r = next_line(data, len, &pos, line, &ln);
    if (r == 0) {
      ocal__mtx_free(out);
      return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                        "line %zu: the file ends after %lld of the %lld entries announced", ln,
                        seen, nnz);
    }
    if (r < 0) {
      ocal__mtx_free(out);
      return ocal__fail(OCAL_INVALID_ARGUMENT, func, "line %zu: %s", ln, bad_line(r));
    }
    if (line[0] == '%' || blank(line)) continue;
    const char *s = line;
    long long i, j, iv = 0;
    double v = 1.0;
    int ok = parse_int(&s, &i) && parse_int(&s, &j);
    if (ok && !pattern) ok = integer ? parse_int(&s, &iv) : parse_real(&s, &v);
    if (!ok || !blank(s)) {
      ocal__mtx_free(out);
      return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                        "line %zu: an entry must be \"row column%s\"%s", ln,
                        pattern ? "" : " value",
                        integer ? ", the value a whole number (the header says integer)" : "");
    }
    if (integer) v = (double)iv;
    if (i < 1 || i > rows || j < 1 || j > cols) {
      ocal__mtx_free(out);
      return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                        "line %zu: entry (%lld, %lld) is outside the %lld x %lld matrix "
                        "(indices are 1-based)",
                        ln, i, j, rows, cols);
    }
    out->ri[n] = i - 1;
    out->cj[n] = j - 1;
    out->val[n++] = v;
    if (symmetric && i != j) {
      out->ri[n] = j - 1;
      out->cj[n] = i - 1;
      out->val[n++] = v;
    }
    seen++;
  }
  /* Anything but comments and blank lines after the last entry means a wrong count. */
  for (;;) {
    r = next_line(data, len, &pos, line, &ln);
    if (r == 0) break;
    if (r > 0 && (line[0] == '%' || blank(line))) continue;
    ocal__mtx_free(out);
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "line %zu: more entries than the %lld the size line announces", ln, nnz);
  }
  out->nnz = n;
  return OCAL_OK;
}

ocal_status ocal_csr_read_mtx(ocal_context ctx, const char *path, ocal_dtype value_type,
                              ocal_dtype index_type, ocal_csr *out) {
  if (out == NULL) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "out is NULL");
  *out = NULL;
  ocal_status s = ocal__check_context(ctx, __func__);
  if (s != OCAL_OK) return s;
  if (path == NULL) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "path is NULL");
  if ((value_type != OCAL_F32 && value_type != OCAL_F64) ||
      (index_type != OCAL_I32 && index_type != OCAL_I64))
    return OCAL_FAIL(OCAL_UNSUPPORTED,
                     "types %s/%s: values must be OCAL_F32 or OCAL_F64, indices OCAL_I32 or "
                     "OCAL_I64",
                     ocal_dtype_name(value_type), ocal_dtype_name(index_type));
  FILE *f = fopen(path, "rb");
  if (f == NULL)
    return OCAL_FAIL(OCAL_IO_ERROR, "cannot open %s: %s", path, strerror(errno));
  size_t cap = 1 << 16, len = 0;
  char *data = malloc(cap);
  while (data) {
    if (len == cap) {
      char *d = realloc(data, cap * 2);
      if (d == NULL) {
        free(data);
        data = NULL;
        break;
      }
      data = d;
      cap *= 2;
    }
    size_t got = fread(data + len, 1, cap - len, f);
    len += got;
    if (got == 0) break;
  }
  int err = ferror(f) ? errno : 0; /* a directory opens, and fails its first read (EISDIR) */
  fclose(f);
  if (data == NULL) return OCAL_FAIL(OCAL_OUT_OF_HOST_MEMORY, "no host memory to read %s", path);
  if (err) {
    free(data);
    return OCAL_FAIL(OCAL_IO_ERROR, "cannot read %s: %s (a Matrix Market file's path is needed)",
                     path, strerror(err));
  }
  ocal__mtx m;
  s = ocal__mtx_parse(data, len, &m, __func__);
  free(data);
  if (s != OCAL_OK) {
    ocal__append_error(" (in %s)", path);
    return s;
  }
  uint64_t lim = index_type == OCAL_I32 ? (uint64_t)INT32_MAX : (uint64_t)INT64_MAX;
  if ((uint64_t)m.rows >= lim || (uint64_t)m.cols >= lim || (uint64_t)m.nnz >= lim)
    s = OCAL_FAIL(OCAL_OVERFLOW, "%s: %zu x %zu with %zu entries does not fit %s indices", path,
                  m.rows, m.cols, m.nnz, ocal_dtype_name(index_type));
  else if (value_type == OCAL_F64 && !ocal__context_fp64(ctx))
    s = OCAL_FAIL(OCAL_UNSUPPORTED, "OCAL_F64 needs double precision, which %s lacks; use OCAL_F32",
                  ocal__context_info(ctx)->name);
  if (s == OCAL_OK && value_type == OCAL_F32) {
    /* A finite value that rounds to an infinity in f32 (from halfway between FLT_MAX and
     * 2^128 on) would change silently on the device: refused, as ocal refuses f32 scalars
     * beyond that range. */
    const double f32_overflow = 0x1.ffffffp+127;
    for (size_t i = 0; i < m.nnz; i++)
      if (isfinite(m.val[i]) && fabs(m.val[i]) >= f32_overflow) {
        s = OCAL_FAIL(OCAL_INVALID_ARGUMENT,
                      "%s: entry (%zu, %zu) is %g, beyond the range of OCAL_F32 (%g); read "
                      "the file as OCAL_F64",
                      path, (size_t)m.ri[i] + 1, (size_t)m.cj[i] + 1, m.val[i], (double)FLT_MAX);
        break;
      }
  }
  if (s == OCAL_OK)
    s = ocal__csr_from_triplets(ctx, value_type, index_type, m.rows, m.cols, m.nnz, m.ri, m.cj,
                                m.val, __func__, out);
  ocal__mtx_free(&m);
  return s;
}
