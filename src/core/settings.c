/* ocal — the settings module: the one place that reads OCAL_* environment variables
 * (see settings.h for when they are read, their precedence and the error style).
 *
 * Every variable is one row of a table: its name, its kind (which picks the one parser for
 * that kind), where its value goes in ocal__settings and what it accepts. Adding a variable
 * is adding a row; the README's table and tests/check_settings.c follow the rows. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

/* ---- the parsers ----------------------------------------------------------------------- */

int ocal__parse_flag(const char *text, int *out) {
  if (!text) return -1;
  static const char *const on[] = {"1", "on", "yes", "true"};
  static const char *const off[] = {"0", "off", "no", "false"};
  for (size_t i = 0; i < 4; i++) {
    if (strcasecmp(text, on[i]) == 0) return *out = 1, 0;
    if (strcasecmp(text, off[i]) == 0) return *out = 0, 0;
  }
  if (strcasecmp(text, "auto") == 0) return *out = -1, 0;
  return -1;
}

int ocal__parse_bytes(const char *text, uint64_t *out) {
  /* strtoull alone would also take leading blanks and a sign, and negate what follows a
   * minus after a blank: " -1" would be 2^64 - 1 bytes. A count starts with a digit. */
  if (!text || !isdigit((unsigned char)text[0])) return -1;
  errno = 0;
  char *end;
  unsigned long long v = strtoull(text, &end, 10);
  if (errno || end == text) return -1;
  unsigned shift = 0;
  switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    case 't': case 'T': shift = 40; end++; break;
    default: break;
  }
  if (shift && (*end == 'i' || *end == 'I')) end++; /* KiB, MiB, ...: "5i" is no count */
  if (*end == 'b' || *end == 'B') end++;
  if (*end) return -1;
  if (shift && v > (~0ull >> shift)) return -1;
  *out = (uint64_t)v << shift;
  return 0;
}

int ocal__parse_long(const char *text, long lo, long hi, long *out) {
  if (!text || !(isdigit((unsigned char)text[0]) || (text[0] == '-' && isdigit((unsigned char)text[1]))))
    return -1;
  errno = 0;
  char *end;
  long v = strtol(text, &end, 10);
  if (errno || *end || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

int ocal__parse_word(const char *text, const char *words) {
  if (!text) return -1;
  size_t n = strlen(text);
  int index = 0;
  for (const char *w = words; *w; index++) {
    const char *end = strchr(w, '|');
    size_t len = end ? (size_t)(end - w) : strlen(w);
    if (len == n && strncasecmp(text, w, n) == 0) return index;
    if (!end) break;
    w = end + 1;
  }
  return -1;
}

int ocal__kv_next(const char **cursor, char *key, size_t key_size, long long *value) {
  const char *q = *cursor;
  while (*q == ',' || *q == ' ') q++;
  if (!*q) return *cursor = q, 0;
  size_t len = strcspn(q, "=, ");
  if (q[len] != '=' || len == 0 || len >= key_size) return *cursor = q, 0;
  memcpy(key, q, len);
  key[len] = '\0';
  char *end;
  errno = 0;
  *value = strtoll(q + len + 1, &end, 0);
  if (end == q + len + 1 || errno || (*end && *end != ',' && *end != ' '))
    return *cursor = q, 0;
  *cursor = end;
  return 1;
}

int ocal__parse_kv(const char *text, const char *keys, char *bad, size_t bad_size) {
  const char *q = text;
  for (;;) {
    while (*q == ',' || *q == ' ') q++;
    if (!*q) return 0;
    const char *item = q;
    char key[64];
    long long v;
    if (!ocal__kv_next(&q, key, sizeof key, &v) || ocal__parse_word(key, keys) < 0) {
      snprintf(bad, bad_size, "%.*s", (int)strcspn(item, ", "), item);
      return -1;
    }
  }
}

/* ---- the table ------------------------------------------------------------------------- */

enum kind { FLAG, WORD, BYTES, INTEGER, KV, TEXT };
static const char *const kind_names[] = {"flag", "word", "bytes", "integer", "key=value list",
                                         "text"};

#define FLAG_WORDS "1, 0, on, off, yes, no, true, false or auto"

typedef struct setting_def {
  const char *name;
  enum kind kind;
  size_t offset;
  size_t size;         /* TEXT and KV: the field's capacity */
  const char *words;   /* WORD: '|'-separated words; KV: keys */
  const int *values;   /* WORD: the value of each word */
  long lo, hi;         /* INTEGER, BYTES (lo only) */
  const char *accepted;
  /* A further check of a TEXT value (NULL: any text that fits): 0 when good. */
  int (*check)(const char *text, ocal__settings *s);
} setting_def;

#define AT(field) offsetof(ocal__settings, field), sizeof(((ocal__settings *)0)->field)

static const int engine_values[] = {OCAL__ENGINE_AUTO, OCAL__ENGINE_OWN, OCAL__ENGINE_OWN,
                                    OCAL__ENGINE_CLBLAST, OCAL__ENGINE_TC, OCAL__ENGINE_WGMMA};
static const int precision_values[] = {OCAL_GEMM_PRECISION_FP32, OCAL_GEMM_PRECISION_TF32};
static const int gemv_values[] = {OCAL__ENGINE_AUTO, OCAL__ENGINE_OWN, OCAL__ENGINE_OWN,
                                  OCAL__ENGINE_CLBLAST};
static const int fft_values[] = {OCAL__FFT_ENV_DEFAULT, OCAL__FFT_ENV_DEFAULT,
                                 OCAL__FFT_ENV_VKFFT, OCAL__FFT_ENV_CLFFT};
static const int spmv_loads_values[] = {OCAL__SPMV_LOADS_AUTO,  OCAL__SPMV_LOADS_PLAIN,
                                        OCAL__SPMV_LOADS_CS,    OCAL__SPMV_LOADS_NC,
                                        OCAL__SPMV_LOADS_CG,    OCAL__SPMV_LOADS_CS_NC,
                                        OCAL__SPMV_LOADS_CS_CG};
static const int scan_values[] = {OCAL__SCAN_AUTO, OCAL__SCAN_SINGLE, OCAL__SCAN_THREE,
                                  OCAL__SCAN_WALK};
static const int copy_values[] = {OCAL__COPY_AUTO, OCAL__COPY_KERNEL, OCAL__COPY_DRIVER};
static const int fourstep_values[] = {
    OCAL__FOURSTEP_AUTO, OCAL__FOURSTEP_ON,  OCAL__FOURSTEP_ON,  OCAL__FOURSTEP_ON,
    OCAL__FOURSTEP_ON,   OCAL__FOURSTEP_OFF, OCAL__FOURSTEP_OFF, OCAL__FOURSTEP_OFF,
    OCAL__FOURSTEP_OFF,  OCAL__FOURSTEP_MEASURE};

/* BMxBNxBKxTMxTN, five positive numbers (whether the tile fits the device is decided per
 * product: a tile that does not fit falls back to one that does). */
static int check_tile(const char *text, ocal__settings *s) {
  unsigned t[5];
  char tail;
  if (sscanf(text, "%ux%ux%ux%ux%u%c", &t[0], &t[1], &t[2], &t[3], &t[4], &tail) != 5) return -1;
  for (int i = 0; i < 5; i++)
    if (t[i] == 0 || t[i] > 1024 || !isdigit((unsigned char)text[0])) return -1;
  memcpy(s->gemm_own_tile, t, sizeof t);
  return 0;
}

/* A power of two in [lo, hi] after `prefix`, or the prefix alone. */
static int pow2_suffix(const char *text, const char *prefix, long lo, long hi) {
  size_t n = strlen(prefix);
  if (strncmp(text, prefix, n) != 0) return 0;
  if (!text[n]) return 1;
  long v;
  return ocal__parse_long(text + n, lo, hi, &v) == 0 && (v & (v - 1)) == 0;
}

static int check_limits(const char *text, ocal__settings *s) {
  (void)s;
  return ocal__limits_spec_valid(text) ? 0 : -1;
}

static int check_spmv(const char *text, ocal__settings *s) {
  (void)s;
  if (strcmp(text, "auto") == 0 || strcmp(text, "scalar") == 0 || strcmp(text, "adaptive") == 0)
    return 0;
  long n;
  if (strcmp(text, "merge") == 0 ||
      (strncmp(text, "merge", 5) == 0 && ocal__parse_long(text + 5, 1, 32, &n) == 0))
    return 0;
  return pow2_suffix(text, "vector", 2, 64) || pow2_suffix(text, "stream", 256, 4096) ? 0 : -1;
}

/* The four-step FFT's keys and the VkFFT fields ocal lets users set; the values are checked by
 * the FFT area when a plan is made. */
#define FOURSTEP_KEYS "n1|c|r|skip|reg|cr|c2|tt|g|plane|sr|ld|st|r2|rows"
#define VKFFT_KEYS                                                                         \
  "coalescedMemory|aimThreads|numSharedBanks|registerBoost|registerBoostNonPow2|"         \
  "registerBoost4Step|performBandwidthBoost|useLUT|swapTo3Stage4Step|considerAllAxesStrided|" \
  "fixMaxRadixBluestein"

/* The reductions' launch shape (src/ops/reduce.c checks the values when it plans). */
#define REDUCE_KEYS "wg|gpc|unroll|onepass|cdiv|cwg|rows|pipe|ld"

static const setting_def defs[] = {
    {"OCAL_DEVICE", TEXT, AT(device), NULL, NULL, 0, 0,
     "a selector: gpu, cpu, accelerator, P:D indices or part of a device or platform name", NULL},
    {"OCAL_CACHE_DIR", TEXT, AT(cache_dir), NULL, NULL, 0, 0, "a directory path", NULL},
    {"OCAL_CACHE", FLAG, AT(cache), NULL, NULL, 0, 0, FLAG_WORDS, NULL},
    {"OCAL_LIMITS", TEXT, AT(limits), NULL, NULL, 0, 0,
     "key=value,... (local_mem, max_work_group, max_items, fp64, cl_version, max_alloc, "
     "global_mem) or a profile (amd, intel-igpu, mobile)", check_limits},
    {"OCAL_FP64", FLAG, AT(fp64), NULL, NULL, 0, 0, FLAG_WORDS, NULL},
    {"OCAL_POOL", FLAG, AT(pool), NULL, NULL, 0, 0, FLAG_WORDS, NULL},
    {"OCAL_POOL_LIMIT", BYTES, AT(pool_limit), NULL, NULL, 0, 0,
     "a byte count: digits, optionally K, M, G or T", NULL},
    {"OCAL_MEMORY_LIMIT", BYTES, AT(memory_limit), NULL, NULL, 0, 0,
     "a byte count: digits, optionally K, M, G or T", NULL},
    {"OCAL_STAGING", FLAG, AT(staging), NULL, NULL, 0, 0, FLAG_WORDS, NULL},
    {"OCAL_STAGING_MIN", BYTES, AT(staging_min), NULL, NULL, 0, 0,
     "a byte count: digits, optionally K, M, G or T", NULL},
    {"OCAL_STAGING_CHUNK", BYTES, AT(staging_chunk), NULL, NULL, 4096, 0,
     "a byte count of at least 4096: digits, optionally K, M, G or T", NULL},
    {"OCAL_STAGING_THREADS", INTEGER, AT(staging_threads), NULL, NULL, 1, 16,
     "a whole number from 1 to 16", NULL},
    {"OCAL_TUNING", FLAG, AT(tuning), NULL, NULL, 0, 0, FLAG_WORDS, NULL},
    {"OCAL_GEMM", WORD, AT(gemm), "auto|ocal|own|clblast|tc|wgmma", engine_values, 0, 0,
     "auto, ocal (or own), clblast, tc or wgmma (tensor cores; f32 products on them need "
     "OCAL_GEMM_PRECISION=tf32)", NULL},
    {"OCAL_GEMM_PRECISION", WORD, AT(gemm_precision), "fp32|tf32", precision_values, 0, 0,
     "fp32 (exact IEEE) or tf32 (tensor cores where the device's probe passes)", NULL},
    /* Tests only: the tensor-core kernels and their probe built with -DMMA_EMULATE=1, so that
     * the engine's host code and the kernels' indexing run (slowly) on any device. */
    {"OCAL_GEMM_TC_EMULATE", FLAG, AT(gemm_tc_emulate), NULL, NULL, 0, 0, FLAG_WORDS, NULL},
    {"OCAL_GEMM_PRETRANSPOSE", FLAG, AT(gemm_pretranspose), NULL, NULL, 0, 0, FLAG_WORDS, NULL},
    {"OCAL_GEMM_SPLITK", INTEGER, AT(gemm_splitk), "auto|off|no", (const int[]){-1, 0, 0}, 0,
     1024, "auto, off, 0 (never), 1 (the rule) or a number of slices from 2 to 1024", NULL},
    {"OCAL_GEMM_OWN_TILE", TEXT, AT(gemm_own_tile), NULL, NULL, 0, 0,
     "BMxBNxBKxTMxTN, five whole numbers from 1 to 1024 (e.g. 128x128x8x8x8)", check_tile},
    {"OCAL_GEMM_OWN_SPLITK", INTEGER, AT(gemm_own_splitk), NULL, NULL, 1, 64,
     "a number of slices from 1 to 64", NULL},
    {"OCAL_GEMV", WORD, AT(gemv), "auto|ocal|own|clblast", gemv_values, 0, 0,
     "auto, ocal (or own) or clblast", NULL},
    {"OCAL_FFT", WORD, AT(fft), "default|auto|vkfft|clfft", fft_values, 0, 0,
     "default (or auto), vkfft or clfft", NULL},
    {"OCAL_FFT_FOURSTEP", WORD, AT(fft_fourstep), "auto|1|on|yes|true|0|off|no|false|measure",
     fourstep_values, 0, 0, FLAG_WORDS " or measure", NULL},
    {"OCAL_FFT_FOURSTEP_TUNE", KV, AT(fft_fourstep_tune), FOURSTEP_KEYS, NULL, 0, 0,
     "key=value,... with keys n1, c, r, skip, reg, cr, c2, tt, g, plane, sr, ld, st, r2, rows", NULL},
    {"OCAL_VKFFT_TUNE", KV, AT(vkfft_tune), VKFFT_KEYS, NULL, 0, 0,
     "field=value,... with fields coalescedMemory, aimThreads, numSharedBanks, registerBoost, "
     "registerBoostNonPow2, registerBoost4Step, performBandwidthBoost, useLUT, "
     "swapTo3Stage4Step, considerAllAxesStrided, fixMaxRadixBluestein", NULL},
    {"OCAL_SPMV", TEXT, AT(spmv), NULL, NULL, 0, 0,
     "auto, scalar, adaptive, vector, vectorN (N = 2..64, a power of two), stream, streamN "
     "(N = 256..4096, a power of two), merge or mergeN (N = 1..32)", check_spmv},
    {"OCAL_SPMV_LOADS", WORD, AT(spmv_loads), "auto|plain|cs|nc|cg|cs-nc|cs-cg",
     spmv_loads_values, 0, 0,
     "auto, plain, or NVIDIA cache hints: cs, nc, cg, cs-nc or cs-cg", NULL},
    {"OCAL_SCAN", WORD, AT(scan), "auto|single|three|walk", scan_values, 0, 0,
     "auto, single, three or walk", NULL},
    {"OCAL_COPY", WORD, AT(copy), "auto|kernel|driver", copy_values, 0, 0,
     "auto, kernel or driver", NULL},
    {"OCAL_REDUCE_TUNE", KV, AT(reduce_tune), REDUCE_KEYS, NULL, 0, 0,
     "key=value,... with keys wg, gpc, unroll, onepass, cdiv, cwg, rows, pipe, ld", NULL},
    {"OCAL_MPI_CHUNK", BYTES, AT(mpi_chunk), NULL, NULL, 4096, (long)1 << 30,
     "a byte count from 4096 to 1G: digits, optionally K, M or G", NULL},
    {"OCAL_MPI_SLOTS", INTEGER, AT(mpi_slots), NULL, NULL, 1, 16, "a whole number from 1 to 16",
     NULL},
    {"OCAL_MPI_ASYNC", FLAG, AT(mpi_async), NULL, NULL, 0, 0, FLAG_WORDS, NULL},
    {"OCAL_MPI_QUIET", FLAG, AT(mpi_quiet), NULL, NULL, 0, 0, FLAG_WORDS, NULL},
    {"OCAL_MPI_SHARED", FLAG, AT(mpi_shared), NULL, NULL, 0, 0, FLAG_WORDS, NULL},
    {"OCAL_MPI_SMALL", BYTES, AT(mpi_small), NULL, NULL, 0, (long)1 << 30,
     "a byte count from 0 to 1G: digits, optionally K, M or G", NULL},
    /* Tests only: the ranks of one machine cut into pretend nodes of this many ranks, so that
     * the path between nodes runs on one machine. */
    {"OCAL_MPI_NODE_SIZE", INTEGER, AT(mpi_node_size), NULL, NULL, 1, 1 << 20,
     "a whole number of ranks from 1 to 1048576", NULL},
    /* Tests only: the shared-memory path's set-up made to fail (its window, or its speed
     * check), so that the fallback to the ring runs. */
    {"OCAL_MPI_SHARED_FAULT", WORD, AT(mpi_shared_fault), "none|window|speed",
     (const int[]){0, 1, 2}, 0, 0, "none, window or speed", NULL},
};
#define NDEFS (sizeof defs / sizeof defs[0])

const size_t ocal__setting_count = NDEFS;

const char *ocal__setting_describe(size_t i, const char **kind, const char **accepted) {
  if (i >= NDEFS) return NULL;
  if (kind) *kind = kind_names[defs[i].kind];
  if (accepted) *accepted = defs[i].accepted;
  return defs[i].name;
}

/* ---- reading --------------------------------------------------------------------------- */

static void set_default(const setting_def *d, ocal__settings *s) {
  void *field = (char *)s + d->offset;
  switch (d->kind) {
    case FLAG: *(int *)field = -1; break;
    case WORD: *(int *)field = d->values[0]; break;
    case BYTES: *(int64_t *)field = -1; break;
    case INTEGER: *(long *)field = d->words ? -1 : 0; break;
    case KV:
    case TEXT: memset(field, 0, d->size); break;
  }
}

/* The message quotes a long value's start only, so that the reason and the accepted values
 * still fit in the last error. */
#define QUOTED_MAX 64

static ocal_status bad_value(const setting_def *d, const char *v, const char *func,
                             const char *detail) {
  size_t len = strlen(v);
  char more[64] = "";
  if (len > QUOTED_MAX) snprintf(more, sizeof more, "...' (%zu characters)", len);
  return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                    "%s='%.*s%s is not accepted%s%s: use %s (or leave it unset)", d->name,
                    QUOTED_MAX, v, more[0] ? more : "'", detail ? ": " : "",
                    detail ? detail : "", d->accepted);
}

static ocal_status read_one(const setting_def *d, ocal__settings *s, const char *func) {
  set_default(d, s);
  const char *v = getenv(d->name);
  if (!v || !*v) return OCAL_OK;
  void *field = (char *)s + d->offset;
  switch (d->kind) {
    case FLAG:
      if (ocal__parse_flag(v, (int *)field) != 0) return bad_value(d, v, func, NULL);
      return OCAL_OK;
    case WORD: {
      int i = ocal__parse_word(v, d->words);
      if (i < 0) return bad_value(d, v, func, NULL);
      *(int *)field = d->values[i];
      return OCAL_OK;
    }
    case BYTES: {
      uint64_t b;
      if (ocal__parse_bytes(v, &b) != 0 || b > (uint64_t)INT64_MAX) return bad_value(d, v, func, NULL);
      if (b < (uint64_t)d->lo) return bad_value(d, v, func, "too small");
      if (d->hi && b > (uint64_t)d->hi) return bad_value(d, v, func, "too large");
      *(int64_t *)field = (int64_t)b;
      return OCAL_OK;
    }
    case INTEGER: {
      long n;
      int w = d->words ? ocal__parse_word(v, d->words) : -1;
      if (w >= 0) {
        *(long *)field = d->values[w];
        return OCAL_OK;
      }
      if (ocal__parse_long(v, d->lo, d->hi, &n) != 0) return bad_value(d, v, func, NULL);
      /* OCAL_GEMM_SPLITK: 1 means the rule, as "auto" does. */
      if (d->words && n == 1) n = -1;
      *(long *)field = n;
      return OCAL_OK;
    }
    case KV: {
      char bad[64];
      if (strlen(v) >= d->size) return bad_value(d, v, func, "too long");
      if (ocal__parse_kv(v, d->words, bad, sizeof bad) != 0) {
        char detail[128];
        snprintf(detail, sizeof detail, "'%s' is not key=number with a known key", bad);
        return bad_value(d, v, func, detail);
      }
      memcpy(field, v, strlen(v) + 1);
      return OCAL_OK;
    }
    case TEXT:
      if (d->check) {
        if (d->check(v, s) != 0) return bad_value(d, v, func, NULL);
        if (d->offset == offsetof(ocal__settings, gemm_own_tile)) return OCAL_OK;
      }
      if (strlen(v) >= d->size) return bad_value(d, v, func, "too long");
      memcpy(field, v, strlen(v) + 1);
      return OCAL_OK;
  }
  return OCAL_OK;
}

ocal_status ocal__settings_read(ocal__settings *s, const char *func) {
  for (size_t i = 0; i < NDEFS; i++) set_default(&defs[i], s);
  for (size_t i = 0; i < NDEFS; i++) {
    ocal_status st = read_one(&defs[i], s, func);
    if (st != OCAL_OK) return st;
  }
  return OCAL_OK;
}

ocal_status ocal__settings_read_one(const char *name, ocal__settings *s, const char *func) {
  for (size_t i = 0; i < NDEFS; i++)
    if (strcmp(defs[i].name, name) == 0) return read_one(&defs[i], s, func);
  return ocal__fail(OCAL_INTERNAL, func, "%s is not a setting ocal knows", name);
}

/* ---- the public accessor --------------------------------------------------------------- */

ocal_status ocal_setting_get(const char *name, long long *value, char *text, size_t text_size) {
  if (!name) return ocal__fail(OCAL_INVALID_ARGUMENT, __func__, "name is NULL");
  const setting_def *d = NULL;
  for (size_t i = 0; i < NDEFS && !d; i++)
    if (strcmp(defs[i].name, name) == 0) d = &defs[i];
  if (!d)
    return ocal__fail(OCAL_INVALID_ARGUMENT, __func__,
                      "%s is not a setting ocal knows (README.md, Settings, lists them)", name);
  int is_text = d->kind == TEXT || d->kind == KV;
  if (is_text ? !text || text_size == 0 : !value)
    return ocal__fail(OCAL_INVALID_ARGUMENT, __func__,
                      "%s is a %s setting: pass %s", name, kind_names[d->kind],
                      is_text ? "text and a text_size above 0" : "value");
  ocal__settings s;
  ocal_status st = read_one(d, &s, __func__);
  if (st != OCAL_OK) return st;
  const char *field = (const char *)&s + d->offset;
  switch (d->kind) {
    case FLAG:
    case WORD: *value = *(const int *)field; break;
    case BYTES: *value = *(const int64_t *)field; break;
    case INTEGER: *value = *(const long *)field; break;
    case KV:
    case TEXT:
      /* OCAL_GEMM_OWN_TILE's check stores numbers, not the text: give the text as set. */
      if (d->offset == offsetof(ocal__settings, gemm_own_tile)) field = getenv(name) ? getenv(name) : "";
      if (strlen(field) >= text_size)
        return ocal__fail(OCAL_INVALID_ARGUMENT, __func__,
                          "%s's value has %zu characters: text_size %zu is too small", name,
                          strlen(field), text_size);
      memcpy(text, field, strlen(field) + 1);
      break;
  }
  return OCAL_OK;
}
