/* Fuzz target: the Matrix Market reader (ocal__mtx_parse, src/sparse/mtx.c), which
 * ocal_csr_read_mtx hands a whole file's bytes. Invariants: a refused file leaves nothing
 * allocated and a message naming the public call; an accepted one gives entries inside the
 * announced shape, at most twice the announced count (a symmetric file's mirrored halves),
 * ones for a pattern file, a mirror beside every off-diagonal entry of a symmetric file, and
 * the same triplets again when written out as a general real file and read back. */
#define _GNU_SOURCE /* memmem */
#include <ctype.h>
#include <math.h>
#include <strings.h>

#include "fuzz.h"
#include "sparse_internal.h"

static const char func[] = "ocal_csr_read_mtx";

/* Splits the header line into its words as the reader sees them (carriage returns dropped,
 * blanks between words); returns how many there were, keeping the first six. */
static int header_words(const uint8_t *data, size_t size, char w[6][48]) {
  int n = 0;
  size_t len = 0;
  for (size_t i = 0; i < size && data[i] != '\n'; i++) {
    if (data[i] == '\r') continue;
    if (isspace(data[i])) {
      if (len) n++;
      len = 0;
      continue;
    }
    if (n < 6 && len + 1 < sizeof w[0]) {
      w[n][len++] = (char)data[i];
      w[n][len] = '\0';
    } else if (n < 6) {
      len++;
    }
  }
  return n + (len ? 1 : 0);
}

static int same_value(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ocal__mtx m;
  ocal_status s = ocal__mtx_parse((const char *)data, size, &m, func);
  if (s != OCAL_OK) {
    FUZZ_ASSERT(m.ri == NULL && m.cj == NULL && m.val == NULL);
    const char *e = ocal_last_error();
    FUZZ_ASSERT(strncmp(e, func, strlen(func)) == 0);
    /* No internal name, unless the message quotes the file's own text that holds one (the
     * reader drops carriage returns before it reads a line, so they are dropped here too). */
    char *text = malloc(size + 1);
    if (!text) abort();
    size_t n = 0;
    for (size_t i = 0; i < size; i++)
      if (data[i] != '\r') text[n++] = (char)data[i];
    if (!memmem(text, n, "ocal__", 6)) FUZZ_ASSERT(strstr(e, "ocal__") == NULL);
    free(text);
    return 0;
  }
  FUZZ_ASSERT(m.rows >= 1 && m.cols >= 1);
  /* Exactly the five words of a coordinate header, nothing after them. */
  char w[6][48];
  memset(w, 0, sizeof w);
  FUZZ_ASSERT(header_words(data, size, w) == 5);
  FUZZ_ASSERT(strcasecmp(w[2], "coordinate") == 0);
  int pattern = strcasecmp(w[3], "pattern") == 0;
  int symmetric = strcasecmp(w[4], "symmetric") == 0;
  if (symmetric) FUZZ_ASSERT(m.rows == m.cols);
  for (size_t k = 0; k < m.nnz; k++) {
    FUZZ_ASSERT(m.ri[k] >= 0 && (uint64_t)m.ri[k] < m.rows);
    FUZZ_ASSERT(m.cj[k] >= 0 && (uint64_t)m.cj[k] < m.cols);
    if (pattern) FUZZ_ASSERT(m.val[k] == 1.0);
    /* The reader writes the mirror of an off-diagonal entry right after it. */
    if (symmetric && m.ri[k] != m.cj[k]) {
      FUZZ_ASSERT(k + 1 < m.nnz && m.ri[k + 1] == m.cj[k] && m.cj[k + 1] == m.ri[k] &&
                  same_value(m.val[k + 1], m.val[k]));
      k++;
    }
  }
  /* Written out as a general real file, the triplets read back unchanged. The header takes
   * at most 46 + 3 x 20 bytes (three 19-digit sizes), an entry line at most 2 x 20 + 25. */
  size_t cap = 128 + m.nnz * 80, len = 0;
  char *text = malloc(cap);
  if (!text) abort();
  len += (size_t)snprintf(text + len, cap - len,
                          "%%%%MatrixMarket matrix coordinate real general\n%zu %zu %zu\n",
                          m.rows, m.cols, m.nnz);
  for (size_t k = 0; k < m.nnz; k++)
    len += (size_t)snprintf(text + len, cap - len, "%lld %lld %.17g\n",
                            (long long)m.ri[k] + 1, (long long)m.cj[k] + 1, m.val[k]);
  FUZZ_ASSERT(len < cap);
  ocal__mtx again;
  FUZZ_ASSERT(ocal__mtx_parse(text, len, &again, func) == OCAL_OK);
  FUZZ_ASSERT(again.rows == m.rows && again.cols == m.cols && again.nnz == m.nnz);
  for (size_t k = 0; k < m.nnz; k++)
    FUZZ_ASSERT(again.ri[k] == m.ri[k] && again.cj[k] == m.cj[k] &&
                same_value(again.val[k], m.val[k]));
  ocal__mtx_free(&again);
  ocal__mtx_free(&m);
  free(text);
  return 0;
}
