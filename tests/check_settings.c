/* ocal tests — the settings module (src/core/settings.c): every OCAL_* variable the library
 * reads is refused with a bad value by ocal_context_create, with a message naming the variable,
 * the value and what is accepted; good values take effect (through the public calls where
 * they show, through the context's settings otherwise); the parsers of each kind.
 *
 * White-box: links the core library to see ctx->settings and the variable list. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "internal.h"

/* One bad value per variable, and one good value with the field it sets. Every variable the
 * module knows must have a row (test_every_variable_has_a_row). */
typedef struct row {
  const char *name, *bad, *good;
} row;

static const row rows[] = {
    {"OCAL_DEVICE", "", ""}, /* any selector is text; a selector that finds no device fails later */
    {"OCAL_CACHE_DIR", "", ""},
    {"OCAL_CACHE", "sometimes", "off"},
    {"OCAL_LIMITS", "bogus=1", "local_mem=16384"},
    {"OCAL_FP64", "maybe", "false"},
    {"OCAL_POOL", "2", "no"},
    {"OCAL_POOL_LIMIT", "lots", "12k"},
    {"OCAL_MEMORY_LIMIT", "-1", "1GiB"},
    {"OCAL_STAGING", "fast", "on"},
    {"OCAL_STAGING_MIN", "1x", "64K"},
    {"OCAL_STAGING_CHUNK", "100", "8K"},
    {"OCAL_STAGING_THREADS", "17", "3"},
    {"OCAL_TUNING", "nope", "0"},
    {"OCAL_GEMM", "clbast", "OWN"},
    {"OCAL_GEMM_PRECISION", "tf16", "TF32"},
    {"OCAL_GEMM_TC_EMULATE", "sometimes", "0"},
    {"OCAL_GEMM_PRETRANSPOSE", "2", "1"},
    {"OCAL_GEMM_SPLITK", "four", "6"},
    {"OCAL_GEMM_OWN_TILE", "64x64x16", "64x64x16x8x4"},
    {"OCAL_GEMM_OWN_SPLITK", "0", "3"},
    {"OCAL_GEMV", "cublas", "clblast"},
    {"OCAL_FFT", "cufft", "CLFFT"},
    {"OCAL_FFT_FOURSTEP", "yes please", "true"},
    {"OCAL_FFT_FOURSTEP_TUNE", "n2=64", "n1=64,c=1"},
    {"OCAL_VKFFT_TUNE", "useLUT", "useLUT=1"},
    {"OCAL_SPMV", "vector3", "stream1024"},
    {"OCAL_SPMV_LOADS", "evict", "cs-nc"},
    {"OCAL_SCAN", "double", "THREE"},
    {"OCAL_COPY", "dma", "Kernel"},
    {"OCAL_REDUCE_TUNE", "lanes=4", "unroll=4,rows=16"},
    {"OCAL_MPI_CHUNK", "100", "64K"},
    {"OCAL_MPI_SLOTS", "0", "3"},
    {"OCAL_MPI_ASYNC", "2", "off"},
    {"OCAL_MPI_QUIET", "very", "1"},
    {"OCAL_MPI_SHARED", "maybe", "on"},
    {"OCAL_MPI_SMALL", "2G", "256K"},
    {"OCAL_MPI_NODE_SIZE", "0", "2"},
    {"OCAL_MPI_SHARED_FAULT", "disk", "speed"},
};
#define NROWS (sizeof rows / sizeof rows[0])

static void unset_all(void) {
  for (size_t i = 0; i < NROWS; i++) unsetenv(rows[i].name);
}

START_TEST(test_every_variable_has_a_row) {
  ck_assert_uint_eq(ocal__setting_count, NROWS);
  for (size_t i = 0; i < ocal__setting_count; i++) {
    const char *kind, *accepted;
    const char *name = ocal__setting_describe(i, &kind, &accepted);
    ck_assert_ptr_nonnull(name);
    ck_assert_msg(kind && accepted && accepted[0], "%s has no kind or accepted values", name);
    size_t r = 0;
    while (r < NROWS && strcmp(rows[r].name, name) != 0) r++;
    ck_assert_msg(r < NROWS, "%s has no row in this test", name);
  }
  ck_assert_ptr_null(ocal__setting_describe(ocal__setting_count, NULL, NULL));
}
END_TEST

/* The README's Settings table has a row for every variable. */
START_TEST(test_readme_lists_every_variable) {
  FILE *f = fopen(OCAL_README, "rb");
  ck_assert_ptr_nonnull(f);
  static char text[1 << 20];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  for (size_t i = 0; i < ocal__setting_count; i++) {
    const char *name = ocal__setting_describe(i, NULL, NULL);
    char cell[64];
    snprintf(cell, sizeof cell, "| `%s` |", name);
    ck_assert_msg(strstr(text, cell) != NULL, "README.md's Settings table has no row for %s", name);
  }
}
END_TEST

/* Each bad value fails ocal_context_create with OCAL_INVALID_ARGUMENT naming the public call,
 * the variable, the value and what is accepted. */
START_TEST(test_bad_values_fail_context_creation) {
  unset_all();
  for (size_t i = 0; i < NROWS; i++) {
    if (!rows[i].bad[0]) continue; /* free text */
    setenv(rows[i].name, rows[i].bad, 1);
    ocal_context ctx = NULL;
    ocal_status s = ocal_context_create(NULL, &ctx);
    ck_assert_msg(s == OCAL_INVALID_ARGUMENT, "%s=%s: %s (%s)", rows[i].name, rows[i].bad,
                  ocal_status_name(s), ocal_last_error());
    ck_assert_ptr_null(ctx);
    const char *msg = ocal_last_error();
    ck_assert_msg(strstr(msg, "ocal_context_create") && strstr(msg, rows[i].name) &&
                      strstr(msg, rows[i].bad),
                  "%s=%s: message lacks the call, name or value: %s", rows[i].name, rows[i].bad,
                  msg);
    ck_assert_msg(strstr(msg, "use ") != NULL, "%s: message lacks the accepted values: %s",
                  rows[i].name, msg);
    /* ocal_setting_get refuses what ocal_context_create refuses. */
    long long v = 0;
    char text[512];
    s = ocal_setting_get(rows[i].name, &v, text, sizeof text);
    ck_assert_msg(s == OCAL_INVALID_ARGUMENT, "ocal_setting_get(%s) with %s: %s", rows[i].name,
                  rows[i].bad, ocal_status_name(s));
    unsetenv(rows[i].name);
  }
  /* OCAL_GEMM's accepted values say what README says: only f32 products on tensor cores
   * need tf32 (tc and wgmma run f16 and bf16 products in any precision mode). */
  setenv("OCAL_GEMM", "clbast", 1);
  ocal_context ctx;
  ck_assert_ocal_fails(ocal_context_create(NULL, &ctx), OCAL_INVALID_ARGUMENT);
  ck_assert_msg(strstr(ocal_last_error(), "f32 products on them need OCAL_GEMM_PRECISION=tf32"),
                "%s", ocal_last_error());
  unsetenv("OCAL_GEMM");
  /* After all that, a context under a clean environment still works. */
  ck_assert_ocal(ocal_context_create(NULL, &ctx));
  ck_assert_ocal(ocal_context_release(ctx));
}
END_TEST


/* A value far longer than any setting takes is refused with a message that quotes its start
 * only and still ends with the accepted values. */
START_TEST(test_long_value_message_is_whole) {
  unset_all();
  enum { LONG = 20000 };
  char *v = malloc(LONG + 1);
  ck_assert_ptr_nonnull(v);
  memset(v, 'x', LONG);
  v[LONG] = '\0';
  for (size_t i = 0; i < NROWS; i++) {
    if (!rows[i].bad[0]) continue;
    setenv(rows[i].name, v, 1);
    ocal_context ctx = NULL;
    ck_assert_ocal_fails(ocal_context_create(NULL, &ctx), OCAL_INVALID_ARGUMENT);
    const char *msg = ocal_last_error();
    const char *tail = "(or leave it unset)";
    size_t n = strlen(msg);
    ck_assert_msg(n < 2048 && n > strlen(tail) && strcmp(msg + n - strlen(tail), tail) == 0 &&
                      strstr(msg, "(20000 characters)") != NULL,
                  "%s: the message (%zu characters) does not end with the accepted values: "
                  "...%s", rows[i].name, n, n > 200 ? msg + n - 200 : msg);
    unsetenv(rows[i].name);
  }
  free(v);
}
END_TEST

/* Every good value together: the context takes them all, and each lands where it should. */
/* The selector these tests put in OCAL_DEVICE: "cpu" (PoCL in CI), or "gpu" on a machine
 * with no CPU device (the lent GPU machine), and the type it must select. */
static const char *some_device(ocal_device_type *type) {
  ocal_device_info info = {sizeof info};
  *type = OCAL_DEVICE_CPU;
  if (ocal_device_select("cpu", &info) == OCAL_OK) return "cpu";
  *type = OCAL_DEVICE_GPU;
  return "gpu";
}

START_TEST(test_good_values_take_effect) {
  unset_all();
  char dir[] = "/tmp/ocal-check-settings-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  for (size_t i = 0; i < NROWS; i++)
    if (rows[i].good[0]) setenv(rows[i].name, rows[i].good, 1);
  setenv("OCAL_CACHE", "1", 1); /* so that OCAL_CACHE_DIR shows */
  setenv("OCAL_CACHE_DIR", dir, 1);
  ocal_device_type type;
  const char *sel = some_device(&type);
  ocal_device_info want = {sizeof want};
  ck_assert_ocal(ocal_device_select(sel, &want));
  setenv("OCAL_DEVICE", sel, 1);
  ocal_context ctx;
  ck_assert_ocal(ocal_context_create(NULL, &ctx));

  /* Observable through public calls. */
  ocal_device_info info = {sizeof info};
  ck_assert_ocal(ocal_context_get_device_info(ctx, &info));
  ck_assert_str_eq(info.name, want.name);
  ck_assert_uint_eq(info.local_mem_bytes, 16384); /* OCAL_LIMITS */
  int fp64;
  ck_assert_ocal(ocal_context_get_fp64(ctx, &fp64));
  ck_assert_int_eq(fp64, 0); /* OCAL_FP64=false */
  const char *cache_dir;
  ck_assert_ocal(ocal_context_get_cache_dir(ctx, &cache_dir));
  ck_assert_str_eq(cache_dir, dir);
  ocal_memory_stats ms = {sizeof ms};
  ck_assert_ocal(ocal_memory_get_stats(ctx, &ms));
  ck_assert_int_eq(ms.pool_enabled, 0);
  ck_assert_uint_eq(ms.pool_limit, 12288);
  ck_assert_uint_eq(ms.memory_limit, (uint64_t)1 << 30);

  /* The rest, as the areas read them. */
  const ocal__settings *s = &ctx->settings;
  ck_assert_int_eq(s->staging, 1);
  ck_assert_int_eq(s->staging_min, 64 << 10);
  ck_assert_int_eq(s->staging_chunk, 8 << 10);
  ck_assert_int_eq(s->staging_threads, 3);
  ck_assert_int_eq(s->tuning, 0);
  ck_assert_int_eq(s->gemm, OCAL__ENGINE_OWN);
  ck_assert_int_eq(s->gemm_precision, OCAL_GEMM_PRECISION_TF32);
  ck_assert_int_eq(s->gemm_tc_emulate, 0);
  ck_assert_int_eq(s->gemm_pretranspose, 1);
  ck_assert_int_eq(s->gemm_splitk, 6);
  ck_assert_int_eq(s->scan, OCAL__SCAN_THREE);
  static const unsigned tile[5] = {64, 64, 16, 8, 4};
  ck_assert_mem_eq(s->gemm_own_tile, tile, sizeof tile);
  ck_assert_int_eq(s->gemm_own_splitk, 3);
  ck_assert_int_eq(s->gemv, OCAL__ENGINE_CLBLAST);
  ck_assert_int_eq(s->fft, OCAL__FFT_ENV_CLFFT);
  ck_assert_int_eq(s->fft_fourstep, 1);
  ck_assert_str_eq(s->fft_fourstep_tune, "n1=64,c=1");
  ck_assert_str_eq(s->vkfft_tune, "useLUT=1");
  ck_assert_str_eq(s->spmv, "stream1024");
  ck_assert_int_eq(s->mpi_chunk, 64 << 10);
  ck_assert_int_eq(s->mpi_slots, 3);
  ck_assert_int_eq(s->mpi_async, 0);
  ck_assert_int_eq(s->mpi_quiet, 1);
  ck_assert_int_eq(s->mpi_shared, 1);
  ck_assert_int_eq(s->mpi_small, 256 << 10);
  ck_assert_int_eq(s->mpi_node_size, 2);
  ck_assert_int_eq(s->mpi_shared_fault, 2);
  ck_assert_ocal(ocal_context_release(ctx));

  /* The public accessor (libocal-mpi reads its settings so): the same values, text too. */
  long long v = 0;
  char text[64];
  ck_assert_ocal(ocal_setting_get("OCAL_MPI_CHUNK", &v, NULL, 0));
  ck_assert_int_eq(v, 64 << 10);
  ck_assert_ocal(ocal_setting_get("OCAL_MPI_SHARED_FAULT", &v, NULL, 0));
  ck_assert_int_eq(v, 2);
  ck_assert_ocal(ocal_setting_get("OCAL_MPI_ASYNC", &v, NULL, 0));
  ck_assert_int_eq(v, 0);
  ck_assert_ocal(ocal_setting_get("OCAL_SPMV", NULL, text, sizeof text));
  ck_assert_str_eq(text, "stream1024");
  ck_assert_ocal(ocal_setting_get("OCAL_GEMM_OWN_TILE", NULL, text, sizeof text));
  ck_assert_str_eq(text, "64x64x16x8x4");
  ck_assert_ocal_fails(ocal_setting_get("OCAL_SPMV", NULL, text, 4), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_setting_get("OCAL_MPI_CHUNK", NULL, text, sizeof text),
                       OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_setting_get("OCAL_NO_SUCH", &v, NULL, 0), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "OCAL_NO_SUCH"));
  setenv("OCAL_MPI_SLOTS", "17", 1);
  ck_assert_ocal_fails(ocal_setting_get("OCAL_MPI_SLOTS", &v, NULL, 0), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "OCAL_MPI_SLOTS='17'"));
  unsetenv("OCAL_MPI_SLOTS");
  ck_assert_ocal(ocal_setting_get("OCAL_MPI_SLOTS", &v, NULL, 0));
  ck_assert_int_eq(v, 0);

  /* Explicit context options win over the environment. */
  ocal_context_options o;
  ocal_context_options_init(&o);
  o.pool = 1;
  o.pool_limit = 4096;
  o.fp64 = 1;
  o.disk_cache = 0;
  o.gemm_precision = OCAL_GEMM_PRECISION_FP32; /* OCAL_GEMM_PRECISION=TF32 is still set */
  ck_assert_ocal(ocal_context_create(&o, &ctx));
  ck_assert_int_eq(ctx->settings.gemm_precision, OCAL_GEMM_PRECISION_FP32);
  ck_assert_ocal(ocal_memory_get_stats(ctx, &ms));
  ck_assert_int_eq(ms.pool_enabled, 1);
  ck_assert_uint_eq(ms.pool_limit, 4096);
  ck_assert_ocal(ocal_context_get_cache_dir(ctx, &cache_dir));
  ck_assert_ptr_null(cache_dir);
  ck_assert_ocal(ocal_context_release(ctx));
  /* A precision outside the enum is refused, naming the option. */
  o.gemm_precision = 2;
  ck_assert_ocal_fails(ocal_context_create(&o, &ctx), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "gemm_precision"));

  /* A context keeps what it was created with: the environment changing later does not
   * reach it. */
  unset_all();
  ck_assert_ocal(ocal_context_create(NULL, &ctx));
  setenv("OCAL_GEMM", "clblast", 1);
  ck_assert_int_eq(ctx->settings.gemm, OCAL__ENGINE_AUTO);
  unsetenv("OCAL_GEMM");
  ck_assert_ocal(ocal_context_release(ctx));

  /* Unset and "auto" mean the default. */
  setenv("OCAL_POOL", "auto", 1);
  setenv("OCAL_GEMM_SPLITK", "1", 1);
  ck_assert_ocal(ocal_context_create(NULL, &ctx));
  ck_assert_int_eq(ctx->settings.pool, -1);
  ck_assert_int_eq(ctx->settings.gemm_splitk, -1);
  ck_assert_int_eq(ctx->settings.gemm, OCAL__ENGINE_AUTO);
  ck_assert_int_eq(ctx->settings.gemm_precision, OCAL_GEMM_PRECISION_FP32); /* exact IEEE */
  ck_assert_int_eq(ctx->settings.staging_min, -1);
  ck_assert_ocal(ocal_memory_get_stats(ctx, &ms));
  ck_assert_int_eq(ms.pool_enabled, 1);
  ck_assert_ocal(ocal_context_release(ctx));
  unset_all();
  char cmd[96];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* The calls without a context read their one variable the same way. */
START_TEST(test_calls_without_a_context) {
  unset_all();
  ocal_device_info info = {sizeof info};
  ocal_device_type type;
  setenv("OCAL_DEVICE", some_device(&type), 1);
  ck_assert_ocal(ocal_device_select(NULL, &info));
  ck_assert_int_eq(info.type, type);
  unsetenv("OCAL_DEVICE");
  setenv("OCAL_FFT", "nonsense", 1);
  ocal_fft_engine e;
  ck_assert_ocal_fails(ocal_fft_get_default_engine(&e), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "OCAL_FFT='nonsense'"));
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_fft_get_default_engine"));
  unsetenv("OCAL_FFT");
}
END_TEST

/* One parser per kind. */
START_TEST(test_parsers) {
  int f = 7;
  static const char *const on[] = {"1", "on", "YES", "True"}, *const off[] = {"0", "OFF", "no", "false"};
  for (int i = 0; i < 4; i++) {
    ck_assert_int_eq(ocal__parse_flag(on[i], &f), 0);
    ck_assert_int_eq(f, 1);
    ck_assert_int_eq(ocal__parse_flag(off[i], &f), 0);
    ck_assert_int_eq(f, 0);
  }
  ck_assert_int_eq(ocal__parse_flag("auto", &f), 0);
  ck_assert_int_eq(f, -1);
  ck_assert_int_eq(ocal__parse_flag("2", &f), -1);
  ck_assert_int_eq(ocal__parse_flag("", &f), -1);
  ck_assert_int_eq(ocal__parse_flag(NULL, &f), -1);

  uint64_t b;
  ck_assert_int_eq(ocal__parse_bytes("12k", &b), 0);
  ck_assert_uint_eq(b, 12288);
  ck_assert_int_eq(ocal__parse_bytes("3MiB", &b), 0);
  ck_assert_uint_eq(b, 3u << 20);
  ck_assert_int_eq(ocal__parse_bytes("2G", &b), 0);
  ck_assert_uint_eq(b, (uint64_t)2 << 30);
  ck_assert_int_eq(ocal__parse_bytes(" 1", &b), -1);
  ck_assert_int_eq(ocal__parse_bytes("-1", &b), -1);
  ck_assert_int_eq(ocal__parse_bytes("5i", &b), -1);
  ck_assert_int_eq(ocal__parse_bytes("99999999999999999999", &b), -1);

  long v;
  ck_assert_int_eq(ocal__parse_long("16", 1, 16, &v), 0);
  ck_assert_int_eq(v, 16);
  ck_assert_int_eq(ocal__parse_long("17", 1, 16, &v), -1);
  ck_assert_int_eq(ocal__parse_long("-3", -5, 5, &v), 0);
  ck_assert_int_eq(v, -3);
  ck_assert_int_eq(ocal__parse_long("3 ", 1, 16, &v), -1);
  ck_assert_int_eq(ocal__parse_long("+3", 1, 16, &v), -1);

  ck_assert_int_eq(ocal__parse_word("CLBlast", "auto|ocal|clblast"), 2);
  ck_assert_int_eq(ocal__parse_word("clb", "auto|ocal|clblast"), -1);
  ck_assert_int_eq(ocal__parse_word("", "auto|ocal|clblast"), -1);

  char bad[32];
  ck_assert_int_eq(ocal__parse_kv("a=1, b=0x10,", "a|b", bad, sizeof bad), 0);
  ck_assert_int_eq(ocal__parse_kv("a=1,c=2", "a|b", bad, sizeof bad), -1);
  ck_assert_str_eq(bad, "c=2");
  ck_assert_int_eq(ocal__parse_kv("a=", "a|b", bad, sizeof bad), -1);
  ck_assert_int_eq(ocal__parse_kv("a=1;", "a|b", bad, sizeof bad), -1);
  const char *cur = "a=1, b=0x10";
  char key[8];
  long long val;
  ck_assert_int_eq(ocal__kv_next(&cur, key, sizeof key, &val), 1);
  ck_assert_str_eq(key, "a");
  ck_assert_int_eq(val, 1);
  ck_assert_int_eq(ocal__kv_next(&cur, key, sizeof key, &val), 1);
  ck_assert_str_eq(key, "b");
  ck_assert_int_eq(val, 16);
  ck_assert_int_eq(ocal__kv_next(&cur, key, sizeof key, &val), 0);
}
END_TEST

static Suite *settings_suite(void) {
  Suite *s = suite_create("settings");
  TCase *tc = tcase_create("settings");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_every_variable_has_a_row);
  tcase_add_test(tc, test_readme_lists_every_variable);
  tcase_add_test(tc, test_bad_values_fail_context_creation);
  tcase_add_test(tc, test_long_value_message_is_whole);
  tcase_add_test(tc, test_good_values_take_effect);
  tcase_add_test(tc, test_calls_without_a_context);
  tcase_add_test(tc, test_parsers);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return fixture_run(settings_suite()); }
