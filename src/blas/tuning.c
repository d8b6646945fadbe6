/* ocal — applying GEMM tuning: the per-device tuning file, the built-in table, and the
 * process-wide record of what is in effect.
 *
 * CLBlast keeps kernel parameters per device for the whole process
 * (CLBlastOverrideParameters), so ocal applies them once per (device, precision) and
 * process, lazily at the first BLAS call, and remembers what it applied in a small table
 * guarded by a mutex. The core knows nothing of this.
 *
 * The tuning file is a disk-cache file (see src/core/disk_cache.c: atomic writes, checksum,
 * the full key stored in it) whose key names "ocal-tuning gemm", the precision, platform,
 * device, driver and ocal version; its payload is NAME=VALUE text, validated like any other
 * parameter set before use. A file that fails any check is ignored with a warning. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "blas_internal.h"

#ifdef OCAL_HAVE_CLBLAST
#include <clblast_c.h>

typedef struct applied {
  struct applied *next;
  cl_device_id device;
  int precision;
  ocal_blas_tuning info;
  int has_params;            /* params holds the set in effect (not CLBlast's defaults) */
  ocal__gemm_params params;  /* for the split-K decision (splitk.c) */
} applied;

/* Entries live for the whole process, like CLBlast's own parameter cache. */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static applied *table;

/* The strings of ocal_blas_tuning (path, params, note) are kept for the whole process, as
 * the table is, so that a caller's copy stays valid and unchanged when the tuning in effect
 * changes later. Each distinct text is stored once: a process tunes a handful of times. */
typedef struct kept_text {
  struct kept_text *next;
  char text[];
} kept_text;
static kept_text *kept; /* table_lock held */

static const char *keep_locked(const char *s) {
  for (kept_text *k = kept; k; k = k->next)
    if (strcmp(k->text, s) == 0) return k->text;
  size_t n = strlen(s) + 1;
  kept_text *k = malloc(sizeof *k + n);
  if (!k) return "";
  memcpy(k->text, s, n);
  k->next = kept;
  kept = k;
  return k->text;
}

static int precision_of(ocal_dtype dtype) { return dtype == OCAL_F64 ? 64 : 32; }

static int tuning_disabled(ocal_context ctx) { return ctx->settings.tuning == 0; }

char *ocal__blas_tuning_key(ocal_context ctx, int precision) {
  const ocal_device_info *d = ocal__context_info(ctx);
#define OCAL__TUNING_KEY_FORMAT                                                          \
  "ocal-tuning gemm v1\nprecision=%d\nplatform=%s\nplatform_version=%s\ndevice=%s\n"   \
  "device_version=%s\ndriver=%s\nocal=%s\n"
  int n = snprintf(NULL, 0, OCAL__TUNING_KEY_FORMAT, precision, d->platform_name,
                   d->platform_version, d->name, d->device_version, d->driver_version,
                   ocal_version_string());
  if (n < 0) return NULL;
  char *key = malloc((size_t)n + 1);
  if (key)
    snprintf(key, (size_t)n + 1, OCAL__TUNING_KEY_FORMAT, precision, d->platform_name,
             d->platform_version, d->name, d->device_version, d->driver_version,
             ocal_version_string());
  return key;
}

/* The tuning file lives beside the disk cache: the context's cache directory, else the
 * default one (also when the disk cache of programs is off: the tuning is not a cache). */
char *ocal__blas_tuning_dir(ocal_context ctx) {
  return ocal__context_cache_dir(ctx) ? ocal__strdup(ocal__context_cache_dir(ctx)) : ocal__disk_cache_dir(NULL, ctx->settings.cache_dir);
}

/* The file name ocal__disk_cache_store gives a key (disk_cache.c names files so). */
static void tuning_path(const char *dir, const char *key, char *out, size_t size) {
  snprintf(out, size, "%s/%016llx.bin", dir,
           (unsigned long long)ocal__fnv1a64(key, strlen(key), OCAL__FNV_SEED));
}

static CLBlastPrecision clblast_precision(int precision) {
  return precision == 64 ? CLBlastPrecisionDouble : CLBlastPrecisionSingle;
}

/* Overrides one CLBlast kernel's parameters: count of them from index first. */
static CLBlastStatusCode override(cl_device_id device, int precision, const char *kernel,
                                  const ocal__gemm_params *p, int first, int count) {
  const char *names[OCAL__GEMM_NPARAMS];
  size_t values[OCAL__GEMM_NPARAMS];
  for (int i = 0; i < count; i++) {
    names[i] = ocal__gemm_param_defs[first + i].name;
    values[i] = (size_t)p->v[first + i];
  }
  return OCAL__CLBLAST(CLBlastOverrideParameters(device, kernel, clblast_precision(precision),
                                                 (size_t)count, names, values));
}

/* Applies a full set to the device (valid already). Returns 1, or 0 with a reason. */
static int apply_locked(ocal_context ctx, int precision, const ocal__gemm_params *p,
                            char *why, size_t why_size) {
  static const struct {
    const char *kernel;
    int first, count;
  } groups[] = {{"Xgemm", OCAL__XGEMM_FIRST, OCAL__XGEMM_COUNT},
                {"XgemmDirect", OCAL__DIRECT_FIRST, OCAL__DIRECT_COUNT},
                {"GemmRoutine", OCAL__P_MIN_INDIRECT, 1}};
  for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
    CLBlastStatusCode s =
        override(ocal__context_device(ctx), precision, groups[g].kernel, p, groups[g].first, groups[g].count);
    if (s != CLBlastSuccess) {
      snprintf(why, why_size, "CLBlastOverrideParameters(%s) failed with %s (%d)",
               groups[g].kernel, ocal__clblast_status_name(s), s);
      return 0;
    }
  }
  return 1;
}

/* The table entry of (device, precision); table_lock held. NULL when out of memory. */
static applied *entry_locked(ocal_context ctx, int precision, int *created) {
  *created = 0;
  for (applied *e = table; e; e = e->next)
    if (e->device == ocal__context_device(ctx) && e->precision == precision) return e;
  applied *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  e->device = ocal__context_device(ctx);
  e->precision = precision;
  e->next = table;
  table = e;
  *created = 1;
  return e;
}

static void fill_info(ocal_blas_tuning *info, ocal_blas_tuning_source source,
                      const ocal__gemm_params *p, const char *note, double gflops) {
  info->source = source;
  char params[2048] = "";
  if (p) ocal__gemm_params_format(p, params, sizeof params);
  info->params = keep_locked(params);
  info->note = keep_locked(note ? note : "");
  info->gflops = gflops;
}

static void fill_entry(applied *e, ocal_blas_tuning_source source, const ocal__gemm_params *p,
                       const char *note, double gflops) {
  fill_info(&e->info, source, p, note, gflops);
  e->has_params = p != NULL;
  if (p) e->params = *p;
}

/* Applies the file, else the built-in entry, else nothing, for a new table entry. */
static void apply_stored_locked(ocal_context ctx, int precision, applied *e) {
  char path[1024] = "";
  char *dir = ocal__blas_tuning_dir(ctx);
  char *key = ocal__blas_tuning_key(ctx, precision);
  if (dir && key) tuning_path(dir, key, path, sizeof path);
  e->info.path = keep_locked(path);
  if (tuning_disabled(ctx)) {
    fill_entry(e, OCAL_TUNING_DISABLED, NULL, "OCAL_TUNING=0: CLBlast's defaults", 0);
    free(dir);
    free(key);
    return;
  }
  char why[256];
  ocal__gemm_params p;
  int done = 0;
  if (dir && key) {
    unsigned char *data = NULL;
    size_t size = 0;
    int rejected = 0;
    if (ocal__disk_cache_load(dir, key, &data, &size, &rejected)) {
      char *text = malloc(size + 1);
      if (text) {
        memcpy(text, data, size);
        text[size] = '\0';
        if (strlen(text) != size)
          snprintf(why, sizeof why, "the file holds binary data, not parameters");
        else if (ocal__gemm_params_parse(text, ocal__context_info(ctx), precision, &p, why, sizeof why) &&
                 apply_locked(ctx, precision, &p, why, sizeof why)) {
          char note[256];
          snprintf(note, sizeof note, "tuning file (ocal tune gemm) for %.100s, driver %.60s",
                   ocal__context_info(ctx)->name, ocal__context_info(ctx)->driver_version);
          fill_entry(e, OCAL_TUNING_FILE, &p, note, 0);
          done = 1;
        }
        if (!done)
          fprintf(stderr, "ocal: warning: ignoring the tuning file %s: %s\n", e->info.path, why);
        free(text);
      }
      free(data);
    } else if (rejected) {
      fprintf(stderr,
              "ocal: warning: ignoring the tuning file %s: it is corrupt, truncated or was "
              "written for another device, driver or ocal version (run `ocal tune gemm` "
              "again)\n",
              e->info.path);
    }
  }
  for (size_t i = 0; !done && i < ocal__builtin_tuning_count; i++) {
    const ocal__builtin_tuning *b = &ocal__builtin_tunings[i];
    if (b->precision != precision || strcmp(b->device, ocal__context_info(ctx)->name) != 0) continue;
    if (ocal__gemm_params_parse(b->params, ocal__context_info(ctx), precision, &p, why, sizeof why) &&
        apply_locked(ctx, precision, &p, why, sizeof why)) {
      fill_entry(e, OCAL_TUNING_BUILTIN, &p, b->note, 0);
      done = 1;
    } else {
      fprintf(stderr, "ocal: warning: built-in GEMM tuning for %s not applied: %s\n",
              ocal__context_info(ctx)->name, why);
    }
  }
  if (!done) fill_entry(e, OCAL_TUNING_DEFAULT, NULL, "CLBlast's defaults", 0);
  free(dir);
  free(key);
}

void ocal__blas_prepare(ocal_context ctx, ocal_dtype dtype) {
  int precision = precision_of(dtype), created;
  pthread_mutex_lock(&table_lock);
  applied *e = entry_locked(ctx, precision, &created);
  if (e && created) apply_stored_locked(ctx, precision, e);
  pthread_mutex_unlock(&table_lock);
}

int ocal__blas_params_in_effect(ocal_context ctx, ocal_dtype dtype, ocal__gemm_params *out) {
  int precision = precision_of(dtype), created, known = 0;
  pthread_mutex_lock(&table_lock);
  applied *e = entry_locked(ctx, precision, &created);
  if (e && created) apply_stored_locked(ctx, precision, e);
  if (e && e->has_params) {
    *out = e->params;
    known = 1;
  }
  pthread_mutex_unlock(&table_lock);
  return known;
}

int ocal__blas_apply(ocal_context ctx, int precision, const ocal__gemm_params *p, char *why,
                     size_t why_size) {
  pthread_mutex_lock(&table_lock);
  int ok = apply_locked(ctx, precision, p, why, why_size);
  pthread_mutex_unlock(&table_lock);
  return ok;
}

/* Records what the tuner or ocal_blas_tuning_apply put in effect. */
void ocal__blas_record(ocal_context ctx, int precision, ocal_blas_tuning_source source,
                       const ocal__gemm_params *p, const char *note, double gflops) {
  int created;
  pthread_mutex_lock(&table_lock);
  applied *e = entry_locked(ctx, precision, &created);
  if (e) {
    if (created) {
      char *dir = ocal__blas_tuning_dir(ctx);
      char *key = ocal__blas_tuning_key(ctx, precision);
      char path[1024] = "";
      if (dir && key) tuning_path(dir, key, path, sizeof path);
      e->info.path = keep_locked(path);
      free(dir);
      free(key);
    }
    fill_entry(e, source, p, note, gflops);
  }
  pthread_mutex_unlock(&table_lock);
}

/* Checks the context and the type of a tuning call. */
static ocal_status check_tuning_call(ocal_context ctx, ocal_dtype dtype, const char *func) {
  ocal_status s = ocal__check_context(ctx, func);
  if (s != OCAL_OK) return s;
  if (dtype != OCAL_F32 && dtype != OCAL_F64)
    return ocal__fail(OCAL_UNSUPPORTED, func, "GEMM tuning is for f32 and f64, not %s",
                      ocal_dtype_name(dtype));
  if (dtype == OCAL_F64 && !ocal__context_fp64(ctx))
    return ocal__fail(OCAL_UNSUPPORTED, func, "f64 needs double precision, which %s lacks",
                      ocal__context_info(ctx)->name);
  return OCAL_OK;
}

ocal_status ocal__blas_check_tuning_call(ocal_context ctx, ocal_dtype dtype, const char *func) {
  return check_tuning_call(ctx, dtype, func);
}

ocal_status ocal_blas_get_tuning(ocal_context ctx, ocal_dtype dtype, ocal_blas_tuning *info) {
  ocal_status s = check_tuning_call(ctx, dtype, __func__);
  if (s != OCAL_OK) return s;
  if (!info) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "info must not be NULL");
  s = ocal__filled_check(__func__, "info", "ocal_blas_tuning", info, OCAL__BLAS_TUNING_MIN,
                         sizeof *info);
  if (s != OCAL_OK) return s;
  int precision = precision_of(dtype), created;
  pthread_mutex_lock(&table_lock);
  applied *e = entry_locked(ctx, precision, &created);
  if (e && created) apply_stored_locked(ctx, precision, e);
  if (e) ocal__filled_write(info, &e->info);
  pthread_mutex_unlock(&table_lock);
  if (!e) return OCAL_FAIL(OCAL_OUT_OF_HOST_MEMORY, "no memory for the tuning table");
  return OCAL_OK;
}

ocal_status ocal_blas_tuning_apply(ocal_context ctx, ocal_dtype dtype, const char *params) {
  ocal_status s = check_tuning_call(ctx, dtype, __func__);
  if (s != OCAL_OK) return s;
  if (!params) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "params must not be NULL");
  int precision = precision_of(dtype);
  ocal__gemm_params p;
  char why[256];
  if (!ocal__gemm_params_parse(params, ocal__context_info(ctx), precision, &p, why, sizeof why))
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "GEMM parameters not applied: %s", why);
  /* Whatever was stored must not be applied over these later. */
  ocal__blas_prepare(ctx, dtype);
  if (!ocal__blas_apply(ctx, precision, &p, why, sizeof why))
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "GEMM parameters not applied: %s", why);
  ocal__blas_record(ctx, precision, OCAL_TUNING_USER, &p, "ocal_blas_tuning_apply", 0);
  return OCAL_OK;
}

#else /* !OCAL_HAVE_CLBLAST */

ocal_status ocal_blas_get_tuning(ocal_context ctx, ocal_dtype dtype, ocal_blas_tuning *info) {
  (void)ctx, (void)dtype, (void)info;
  return OCAL_FAIL(OCAL_UNSUPPORTED, "this ocal was built without CLBlast");
}
ocal_status ocal_blas_tuning_apply(ocal_context ctx, ocal_dtype dtype, const char *params) {
  (void)ctx, (void)dtype, (void)params;
  return OCAL_FAIL(OCAL_UNSUPPORTED, "this ocal was built without CLBlast");
}

#endif /* OCAL_HAVE_CLBLAST */
