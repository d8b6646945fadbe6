/* ocal tests — the kernel caches: the context's memory cache and the disk cache of program
 * binaries (src/core/program.c, src/core/disk_cache.c).
 *
 * Every test makes its own temporary cache directory and its own contexts, and reads the
 * public counters of ocal_context_get_cache_stats. The fill kernel is the library's one kernel,
 * so its builds are what the caches hold; every fill is checked against host data. */
#include "fixture.h"

#include <dirent.h>
#include <signal.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- files and directories ----------------------------------------------------------- */

/* The directory of this run, made by main before the tests and removed after them, so that
 * nothing is left behind when a test fails (Check ends a failed test's process at once). */
static char run_root[4096];

/* A fresh empty directory of the run; free the result after rm_rf. */
static char *make_tmpdir(void) {
  char *path = malloc(strlen(run_root) + 16);
  ck_assert_ptr_nonnull(path);
  sprintf(path, "%s/test-XXXXXX", run_root);
  ck_assert_msg(mkdtemp(path) != NULL, "mkdtemp(%s): %s", path, strerror(errno));
  return path;
}

static char *join(const char *a, const char *b) {
  char *s = malloc(strlen(a) + strlen(b) + 2);
  ck_assert_ptr_nonnull(s);
  sprintf(s, "%s/%s", a, b);
  return s;
}

/* rm -rf path (best effort: used to clean up). */
static void rm_rf(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return;
  if (S_ISDIR(st.st_mode)) {
    DIR *d = opendir(path);
    if (d) {
      struct dirent *e;
      while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char *child = join(path, e->d_name);
        rm_rf(child);
        free(child);
      }
      closedir(d);
    }
    rmdir(path);
  } else {
    unlink(path);
  }
}

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

#define MAX_FILES 16

/* The names of the entries of dir: all of them (suffix NULL) or those ending in suffix.
 * Returns the count (0 when dir does not exist); names receives up to MAX_FILES. */
static int list_dir(const char *dir, const char *suffix, char names[MAX_FILES][256]) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  int count = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    if (suffix && !ends_with(e->d_name, suffix)) continue;
    if (names && count < MAX_FILES) snprintf(names[count], 256, "%s", e->d_name);
    count++;
  }
  closedir(d);
  return count;
}

static int count_bins(const char *dir) { return list_dir(dir, ".bin", NULL); }

/* Asserts that dir holds exactly `bins` .bin files and nothing else (no temporary files). */
static void assert_cache_files(const char *dir, int bins) {
  char names[MAX_FILES][256];
  int all = list_dir(dir, NULL, names);
  int n = count_bins(dir);
  ck_assert_msg(n == bins, "%s holds %d .bin files, expected %d", dir, n, bins);
  ck_assert_msg(all == bins, "%s holds %d entries, expected only the %d .bin files (first: %s)",
                dir, all, bins, all > 0 ? names[0] : "");
}

/* The path of the one .bin file in dir (asserts there is exactly one). */
static char *only_bin(const char *dir) {
  char names[MAX_FILES][256];
  int n = list_dir(dir, ".bin", names);
  ck_assert_msg(n == 1, "%s holds %d .bin files, expected 1", dir, n);
  return join(dir, names[0]);
}

static unsigned char *slurp(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot open %s: %s", path, strerror(errno));
  struct stat st;
  ck_assert_int_eq(fstat(fileno(f), &st), 0);
  *size = (size_t)st.st_size;
  unsigned char *data = malloc(*size ? *size : 1);
  ck_assert_ptr_nonnull(data);
  ck_assert_uint_eq(fread(data, 1, *size, f), *size);
  fclose(f);
  return data;
}

static void spit(const char *path, const void *data, size_t size) {
  FILE *f = fopen(path, "wb");
  ck_assert_msg(f != NULL, "cannot write %s: %s", path, strerror(errno));
  if (size) ck_assert_uint_eq(fwrite(data, 1, size, f), size);
  ck_assert_int_eq(fclose(f), 0);
}

/* ---- contexts, fills, counters -------------------------------------------------------- */

/* A context on the default device with the given disk cache settings. */
static ocal_context new_context(int disk_cache, const char *cache_dir) {
  ocal_context_options opt;
  ck_assert_ocal(ocal_context_options_init(&opt));
  opt.disk_cache = disk_cache;
  opt.cache_dir = cache_dir;
  ocal_context ctx = NULL;
  ck_assert_ocal(ocal_context_create(&opt, &ctx));
  return ctx;
}

static ocal_cache_stats stats_of(ocal_context ctx) {
  ocal_cache_stats st = {sizeof st};
  memset(&st, 0xff, sizeof st);
  st.struct_size = sizeof st;
  ck_assert_ocal(ocal_context_get_cache_stats(ctx, &st));
  return st;
}

#define ASSERT_STATS(ctx, c, d, m, r)                                                         \
  do {                                                                                        \
    ocal_cache_stats st__ = stats_of(ctx);                                                    \
    ck_assert_msg(st__.compiles == (c) && st__.disk_hits == (d) && st__.memory_hits == (m) && \
                      st__.disk_rejects == (r),                                               \
                  "cache stats: compiles %llu disk_hits %llu memory_hits %llu disk_rejects " \
                  "%llu; expected %d %d %d %d",                                               \
                  (unsigned long long)st__.compiles, (unsigned long long)st__.disk_hits,      \
                  (unsigned long long)st__.memory_hits, (unsigned long long)st__.disk_rejects, \
                  (int)(c), (int)(d), (int)(m), (int)(r));                                     \
  } while (0)

/* The value each type is filled with: never all zero bytes, never a repeated byte. */
static void fill_value(ocal_dtype dtype, unsigned char value[16]) {
  memset(value, 0, 16);
  switch (dtype) {
    case OCAL_F32: { float v = 3.25f; memcpy(value, &v, sizeof v); break; }
    case OCAL_I32: { int32_t v = -7; memcpy(value, &v, sizeof v); break; }
    case OCAL_U32: { uint32_t v = 0xdeadbeefu; memcpy(value, &v, sizeof v); break; }
    case OCAL_I64: { int64_t v = -0x123456789abLL; memcpy(value, &v, sizeof v); break; }
    case OCAL_U64: { uint64_t v = 0xfedcba9876543210ull; memcpy(value, &v, sizeof v); break; }
    case OCAL_U8: value[0] = 0xab; break;
    case OCAL_C32: { float v[2] = {1.5f, -2.5f}; memcpy(value, v, sizeof v); break; }
    default: { double v[2] = {-2.5e100, 1e200}; memcpy(value, v, sizeof v); break; }
  }
}

/* Fills a buffer of n elements that holds random data, reads it back and checks every
 * element. Returns 0 when all is well, else a short reason (in why, with the ocal error).
 * Uses no ck_assert, so a forked child can call it. */
static int fill_verify(ocal_context ctx, ocal_dtype dtype, size_t n, uint64_t seed, char *why,
                       size_t why_size) {
  size_t esize = ocal_dtype_size(dtype);
  unsigned char value[16];
  fill_value(dtype, value);
  unsigned char *host = malloc(n * esize), *back = malloc(n * esize);
  ocal_buffer buf = NULL;
  int rc = 0;
  if (!host || !back) {
    snprintf(why, why_size, "out of host memory");
    rc = 1;
    goto done;
  }
  fixture_random_bytes(host, n * esize, seed);
  host[0] ^= value[0] == host[0] ? 1 : 0; /* the first element differs before the fill */
  ocal_status s = ocal_buffer_from_host(ctx, dtype, 1, &n, host, &buf);
  if (s == OCAL_OK) s = ocal_buffer_fill(buf, value);
  if (s == OCAL_OK) s = ocal_buffer_read(buf, 0, n, back, NULL);
  if (s != OCAL_OK) {
    snprintf(why, why_size, "%s: %s", ocal_status_name(s), ocal_last_error());
    rc = 2;
    goto done;
  }
  for (size_t i = 0; i < n; i++) {
    if (memcmp(back + i * esize, value, esize) != 0) {
      snprintf(why, why_size, "%s fill: element %zu of %zu is wrong", ocal_dtype_name(dtype), i,
               n);
      rc = 3;
      goto done;
    }
  }
done:
  ocal_buffer_release(buf);
  free(host);
  free(back);
  return rc;
}

/* fill_verify under ck_assert. */
static void assert_fill(ocal_context ctx, ocal_dtype dtype, size_t n, uint64_t seed) {
  char why[1024] = "";
  int rc = fill_verify(ctx, dtype, n, seed, why, sizeof why);
  ck_assert_msg(rc == 0, "fill of %zu %s elements failed: %s", n, ocal_dtype_name(dtype), why);
}

/* ---- other processes ----------------------------------------------------------------- *
 * A test starts another process by running this program again (fork, then exec) with
 * --child-fill: a fresh process, as a second run of a user's program would be. (A plain fork
 * is not enough: an OpenCL driver's worker threads, PoCL's for one, do not survive fork.) */

/* A child's exit codes. */
enum { CHILD_OK = 0, CHILD_USAGE = 9, CHILD_NO_CONTEXT = 10, CHILD_BAD_FILL = 11,
       CHILD_COMPILED = 12, CHILD_NO_DISK_HIT = 13, CHILD_BAD_STATS = 14, CHILD_NO_EXEC = 127 };

/* argv[0], to run this program again where /proc/self/exe does not exist. */
static const char *program_path = "";

/* The child's work: a context on dir, a fill of dtype checked against host data, and the
 * counters of a first build ("build": compiles 1, no disk hit), of a pure disk hit ("hit":
 * no compiler) or of either ("any"). Returns a CHILD_ code. */
static int child_main(const char *dir, const char *dtype_name, const char *seed_text,
                      const char *expect) {
  ocal_dtype dtype;
  int disk_hit = strcmp(expect, "hit") == 0 ? 1 : strcmp(expect, "build") == 0 ? 0 : -1;
  if (ocal_dtype_from_name(dtype_name, &dtype) != OCAL_OK ||
      (disk_hit < 0 && strcmp(expect, "any") != 0))
    return CHILD_USAGE;
  ocal_context_options opt;
  ocal_context ctx = NULL;
  char why[1024];
  int code = CHILD_OK;
  ocal_context_options_init(&opt);
  opt.disk_cache = 1;
  opt.cache_dir = dir;
  if (ocal_context_create(&opt, &ctx) != OCAL_OK) {
    fprintf(stderr, "child: %s\n", ocal_last_error());
    return CHILD_NO_CONTEXT;
  }
  if (fill_verify(ctx, dtype, 100003, strtoull(seed_text, NULL, 10), why, sizeof why) != 0) {
    fprintf(stderr, "child: %s\n", why);
    code = CHILD_BAD_FILL;
  } else {
    ocal_cache_stats st = {sizeof st};
    if (ocal_context_get_cache_stats(ctx, &st) != OCAL_OK)
      code = CHILD_BAD_STATS;
    else if (disk_hit >= 0 ? st.compiles != (disk_hit ? 0u : 1u) : st.compiles > 1)
      code = CHILD_COMPILED;
    else if (st.disk_hits + st.compiles != 1 || st.disk_rejects != 0 || st.memory_hits != 0)
      code = CHILD_NO_DISK_HIT;
    if (code != CHILD_OK)
      fprintf(stderr, "child: compiles %llu disk_hits %llu memory_hits %llu disk_rejects %llu\n",
              (unsigned long long)st.compiles, (unsigned long long)st.disk_hits,
              (unsigned long long)st.memory_hits, (unsigned long long)st.disk_rejects);
  }
  ocal_context_release(ctx);
  return code;
}

/* Starts this program again as a child that runs child_main, expecting a disk hit (1), a
 * build (0) or either (-1); returns its pid. */
static pid_t spawn_child(const char *dir, ocal_dtype dtype, uint64_t seed, int disk_hit) {
  char seed_text[32];
  snprintf(seed_text, sizeof seed_text, "%llu", (unsigned long long)seed);
  const char *expect = disk_hit > 0 ? "hit" : disk_hit == 0 ? "build" : "any";
  char *args[] = {"--child-fill", (char *)dir, (char *)ocal_dtype_name(dtype), seed_text,
                  (char *)expect, NULL};
  return fixture_spawn_self(program_path, args);
}

static const char *child_reason(int code) {
  switch (code) {
    case CHILD_OK: return "ok";
    case CHILD_USAGE: return "bad arguments";
    case CHILD_NO_EXEC: return "could not run this program again";
    case CHILD_NO_CONTEXT: return "could not create a context";
    case CHILD_BAD_FILL: return "the fill failed or gave wrong data";
    case CHILD_COMPILED: return "compiles is not as expected (see the child's stderr)";
    case CHILD_NO_DISK_HIT: return "disk_hits, disk_rejects or memory_hits not as expected";
    case CHILD_BAD_STATS: return "no cache stats";
    default: return "unexpected exit code (a sanitizer or the driver ended it: see its stderr)";
  }
}

/* Waits for a child and asserts that it exited with CHILD_OK. */
static void assert_child_ok(pid_t pid, const char *what) {
  int sig = 0, code = fixture_wait_child(pid, &sig);
  ck_assert_msg(code >= 0, "%s: the child died (signal %d)", what, sig);
  ck_assert_msg(code == CHILD_OK, "%s: the child reports: %s (exit %d)", what,
                child_reason(code), code);
}

/* Saves an environment variable, to put it back with restore_env. */
typedef struct saved_env {
  const char *name;
  char *value; /* NULL when it was unset */
} saved_env;

static saved_env save_env(const char *name) {
  saved_env s = {name, NULL};
  const char *v = getenv(name);
  if (v) {
    s.value = strdup(v);
    ck_assert_ptr_nonnull(s.value);
  }
  return s;
}

static void restore_env(saved_env *s) {
  if (s->value)
    setenv(s->name, s->value, 1);
  else
    unsetenv(s->name);
  free(s->value);
  s->value = NULL;
}

static void assert_cache_dir(ocal_context ctx, const char *want) {
  const char *dir = (const char *)&dir; /* anything but NULL */
  ck_assert_ocal(ocal_context_get_cache_dir(ctx, &dir));
  if (!want)
    ck_assert_msg(dir == NULL, "the disk cache is on, in '%s'", dir);
  else
    ck_assert_msg(dir != NULL && strcmp(dir, want) == 0, "the cache dir is '%s', expected '%s'",
                  dir ? dir : "(null)", want);
}

/* ---- the tests ----------------------------------------------------------------------- */

START_TEST(test_first_fill_compiles_once) {
  char *dir = make_tmpdir();
  ocal_context ctx = new_context(1, dir);
  assert_cache_dir(ctx, dir);
  ASSERT_STATS(ctx, 0, 0, 0, 0);
  assert_cache_files(dir, 0);

  assert_fill(ctx, OCAL_F32, 1001, 1);
  ASSERT_STATS(ctx, 1, 0, 0, 0);
  assert_cache_files(dir, 1);

  /* The file is one of ours: the magic, then a key that names the build options. */
  char *path = only_bin(dir);
  size_t size;
  unsigned char *data = slurp(path, &size);
  ck_assert_uint_gt(size, 8 + 4 + 8 + 8);
  ck_assert_int_eq(memcmp(data, "OCALBIN1", 8), 0);
  uint32_t key_len;
  memcpy(&key_len, data + 8, 4);
  ck_assert_uint_lt(20 + (size_t)key_len, size);
  char *key = strndup((const char *)data + 20, key_len);
  ck_assert_ptr_nonnull(key);
  ck_assert_msg(strstr(key, "-DT=float") != NULL, "the cache key does not name the build "
                "options: %s", key);
  free(key);
  free(data);

  /* The same type again: the memory cache, no compiler, no new file. */
  assert_fill(ctx, OCAL_F32, 3, 2);
  ASSERT_STATS(ctx, 1, 0, 1, 0);
  ocal_buffer z = NULL;
  const size_t n = 7;
  ck_assert_ocal(ocal_buffer_zeros(ctx, OCAL_F32, 1, &n, &z)); /* zeros is a fill, too */
  float back[7];
  ck_assert_ocal(ocal_buffer_read(z, 0, n, back, NULL));
  for (size_t i = 0; i < n; i++) ck_assert_msg(back[i] == 0.0f, "zeros gave %g", back[i]);
  ck_assert_ocal(ocal_buffer_release(z));
  ASSERT_STATS(ctx, 1, 0, 2, 0);
  assert_cache_files(dir, 1);
  ck_assert_ocal(ocal_context_release(ctx));

  /* A second context in this process: the disk cache, not the compiler. */
  ctx = new_context(1, dir);
  assert_fill(ctx, OCAL_F32, 1001, 3);
  ASSERT_STATS(ctx, 0, 1, 0, 0);
  assert_fill(ctx, OCAL_F32, 5, 4);
  ASSERT_STATS(ctx, 0, 1, 1, 0);
  assert_cache_files(dir, 1);
  ck_assert_ocal(ocal_context_release(ctx));

  free(path);
  rm_rf(dir);
  free(dir);
}
END_TEST

/* Runs a child to its end and asserts that it did what it was asked. */
static void run_child(const char *dir, ocal_dtype dtype, uint64_t seed, int disk_hit,
                      const char *what) {
  assert_child_ok(spawn_child(dir, dtype, seed, disk_hit), what);
}

START_TEST(test_second_process_skips_compiler) {
  char *dir = make_tmpdir();
  run_child(dir, OCAL_F32, 10, 0, "first process (builds)");
  assert_cache_files(dir, 1);
  char *path = only_bin(dir);
  size_t size1, size2;
  unsigned char *data1 = slurp(path, &size1);
  run_child(dir, OCAL_F32, 11, 1, "second process (loads, no compiler)");
  run_child(dir, OCAL_F32, 12, 1, "third process (loads, no compiler)");
  assert_cache_files(dir, 1);
  /* A disk hit does not rewrite the file. */
  unsigned char *data2 = slurp(path, &size2);
  ck_assert_uint_eq(size1, size2);
  ck_assert_int_eq(memcmp(data1, data2, size1), 0);
  free(data1);
  free(data2);

  /* This process loads it too, and while it holds its context another process adds a
   * program that this context then loads from the disk as well. */
  ocal_context ctx = new_context(1, dir);
  assert_fill(ctx, OCAL_F32, 1001, 13);
  ASSERT_STATS(ctx, 0, 1, 0, 0);
  run_child(dir, OCAL_I64, 14, 0, "process adding another type (builds)");
  assert_cache_files(dir, 2);
  assert_fill(ctx, OCAL_I64, 1001, 15);
  ASSERT_STATS(ctx, 0, 2, 0, 0);
  run_child(dir, OCAL_I64, 16, 1, "process loading the other type (no compiler)");
  ck_assert_ocal(ocal_context_release(ctx));

  free(path);
  rm_rf(dir);
  free(dir);
}
END_TEST

START_TEST(test_concurrent_processes) {
  /* Processes that build the same program into an empty cache at the same time each get a
   * working kernel, and one whole file remains that later processes load. */
  char *dir = make_tmpdir();
  pid_t pids[3];
  /* Each builds, unless another's file is already complete when it looks; it never sees a
   * partial file (no rejects). */
  for (int k = 0; k < 3; k++) pids[k] = spawn_child(dir, OCAL_I32, 20 + (uint64_t)k, -1);
  for (int k = 0; k < 3; k++) assert_child_ok(pids[k], "concurrent process");
  assert_cache_files(dir, 1);
  run_child(dir, OCAL_I32, 23, 1, "process after the concurrent ones (no compiler)");
  ocal_context ctx = new_context(1, dir);
  assert_fill(ctx, OCAL_I32, 1001, 24);
  ASSERT_STATS(ctx, 0, 1, 0, 0);
  ck_assert_ocal(ocal_context_release(ctx));
  rm_rf(dir);
  free(dir);
}
END_TEST

/* FNV-1a 64, as the cache files' checksum. */
static uint64_t fnv1a64(const unsigned char *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

enum {
  CORRUPT_FLIP_MIDDLE,
  CORRUPT_FLIP_KEY,
  CORRUPT_FLIP_CHECKSUM,
  CORRUPT_TRUNCATE_HALF,
  CORRUPT_TRUNCATE_LAST_BYTE,
  CORRUPT_APPEND,
  CORRUPT_GARBAGE,
  CORRUPT_EMPTY,
  CORRUPT_FOREIGN_KEY,
  CORRUPT_BAD_BINARY,
  CORRUPT_COUNT
};

static const char *const corrupt_names[CORRUPT_COUNT] = {
    "flipped byte in the middle", "flipped byte in the key", "flipped checksum byte",
    "truncated to half",          "last byte cut off",       "bytes appended",
    "garbage of the same length", "zero-length file",        "another program's file",
    "binary the driver refuses"};

START_TEST(test_corrupt_file_is_rejected) {
  const int mode = _i;
  const char *what = corrupt_names[mode];
  char *dir = make_tmpdir();
  ocal_context ctx = new_context(1, dir);
  assert_fill(ctx, OCAL_F32, 1001, 30);
  ASSERT_STATS(ctx, 1, 0, 0, 0);
  char *path = only_bin(dir);
  int bins = 1;
  if (mode == CORRUPT_FOREIGN_KEY) {
    /* u64's build options are as long as f32's, so only the key itself tells them apart. */
    assert_fill(ctx, OCAL_U64, 1001, 31);
    ASSERT_STATS(ctx, 2, 0, 0, 0);
    bins = 2;
  }
  ck_assert_ocal(ocal_context_release(ctx));
  assert_cache_files(dir, bins);

  size_t size;
  unsigned char *data = slurp(path, &size);
  ck_assert_uint_gt(size, 28);
  uint32_t key_len;
  memcpy(&key_len, data + 8, 4);
  switch (mode) {
    case CORRUPT_FLIP_MIDDLE:
      data[size / 2] ^= 0xff;
      spit(path, data, size);
      break;
    case CORRUPT_FLIP_KEY:
      data[20 + key_len / 2] ^= 0x01;
      spit(path, data, size);
      break;
    case CORRUPT_FLIP_CHECKSUM:
      data[size - 1] ^= 0x80;
      spit(path, data, size);
      break;
    case CORRUPT_TRUNCATE_HALF:
      spit(path, data, size / 2);
      break;
    case CORRUPT_TRUNCATE_LAST_BYTE:
      spit(path, data, size - 1);
      break;
    case CORRUPT_APPEND: {
      unsigned char *longer = malloc(size + 64);
      ck_assert_ptr_nonnull(longer);
      memcpy(longer, data, size);
      fixture_random_bytes(longer + size, 64, 32);
      spit(path, longer, size + 64);
      free(longer);
      break;
    }
    case CORRUPT_GARBAGE: {
      unsigned char *garbage = malloc(size);
      ck_assert_ptr_nonnull(garbage);
      fixture_random_bytes(garbage, size, 33);
      spit(path, garbage, size);
      free(garbage);
      break;
    }
    case CORRUPT_EMPTY:
      spit(path, data, 0);
      break;
    case CORRUPT_FOREIGN_KEY: {
      char names[MAX_FILES][256];
      ck_assert_int_eq(list_dir(dir, ".bin", names), 2);
      char *other = join(dir, strcmp(path + strlen(dir) + 1, names[0]) == 0 ? names[1] : names[0]);
      size_t other_size;
      unsigned char *other_data = slurp(other, &other_size);
      uint32_t other_key_len;
      memcpy(&other_key_len, other_data + 8, 4);
      ck_assert_uint_eq(other_key_len, key_len); /* a valid header of the same key length */
      spit(path, other_data, other_size);
      free(other_data);
      free(other);
      break;
    }
    case CORRUPT_BAD_BINARY: {
      /* A well-formed file with the right key and checksum whose binary is garbage: the
       * driver must refuse it, and ocal must then build from source. */
      uint64_t bin_len;
      memcpy(&bin_len, data + 12, 8);
      ck_assert_uint_eq(20 + (size_t)key_len + (size_t)bin_len + 8, size);
      fixture_random_bytes(data + 20 + key_len, (size_t)bin_len, 34);
      uint64_t h = fnv1a64(data, size - 8);
      memcpy(data + size - 8, &h, 8);
      spit(path, data, size);
      break;
    }
    default:
      ck_abort_msg("unknown corruption %d", mode);
  }
  free(data);

  /* A new context rejects the file, builds from source, and the fill is right. */
  ctx = new_context(1, dir);
  char why[1024] = "";
  int rc = fill_verify(ctx, OCAL_F32, 100003, 35, why, sizeof why);
  ck_assert_msg(rc == 0, "%s: the fill failed: %s", what, why);
  ocal_cache_stats st = stats_of(ctx);
  ck_assert_msg(st.disk_rejects >= 1, "%s: the file was not rejected", what);
  ck_assert_msg(st.compiles == 1, "%s: compiles is %llu, expected 1", what,
                (unsigned long long)st.compiles);
  ck_assert_msg(st.disk_hits == 0, "%s: counted as a disk hit", what);
  ck_assert_ocal(ocal_context_release(ctx));
  assert_cache_files(dir, bins);

  /* The file was rewritten whole: a third context loads it without the compiler. */
  ctx = new_context(1, dir);
  rc = fill_verify(ctx, OCAL_F32, 1001, 36, why, sizeof why);
  ck_assert_msg(rc == 0, "%s: the fill after the rewrite failed: %s", what, why);
  ASSERT_STATS(ctx, 0, 1, 0, 0);
  if (mode == CORRUPT_FOREIGN_KEY) { /* and the other program's file is still good */
    assert_fill(ctx, OCAL_U64, 1001, 37);
    ASSERT_STATS(ctx, 0, 2, 0, 0);
  }
  ck_assert_ocal(ocal_context_release(ctx));

  free(path);
  rm_rf(dir);
  free(dir);
}
END_TEST

START_TEST(test_directory_in_the_way) {
  /* Something that is not a file where the cache file belongs: rejected, never fatal, and
   * the failed store leaves no temporary file behind. */
  char *dir = make_tmpdir();
  ocal_context ctx = new_context(1, dir);
  assert_fill(ctx, OCAL_U8, 1001, 40);
  ck_assert_ocal(ocal_context_release(ctx));
  char *path = only_bin(dir);
  ck_assert_int_eq(unlink(path), 0);
  ck_assert_int_eq(mkdir(path, 0755), 0);

  for (int round = 0; round < 2; round++) {
    ctx = new_context(1, dir);
    assert_fill(ctx, OCAL_U8, 100003, 41 + (uint64_t)round);
    ocal_cache_stats st = stats_of(ctx);
    ck_assert_uint_eq(st.compiles, 1);
    ck_assert_uint_eq(st.disk_hits, 0);
    ck_assert_uint_ge(st.disk_rejects, 1);
    ck_assert_ocal(ocal_context_release(ctx));
    ck_assert_int_eq(list_dir(dir, NULL, NULL), 1); /* only the directory */
  }
  free(path);
  rm_rf(dir);
  free(dir);
}
END_TEST

START_TEST(test_env_cache_off) {
  static const char *const off_values[] = {"0", "off", "no", "false", "OFF"};
  saved_env cache_env = save_env("OCAL_CACHE");
  char *dir = make_tmpdir();

  setenv("OCAL_CACHE", "0", 1);
  ocal_context ctx = new_context(-1, dir);
  assert_cache_dir(ctx, NULL);
  assert_fill(ctx, OCAL_F32, 1001, 50);
  ASSERT_STATS(ctx, 1, 0, 0, 0);
  assert_fill(ctx, OCAL_F32, 3, 51); /* the memory cache still works */
  ASSERT_STATS(ctx, 1, 0, 1, 0);
  ck_assert_ocal(ocal_context_release(ctx));
  assert_cache_files(dir, 0);
  /* So a second context compiles again. */
  ctx = new_context(-1, dir);
  assert_fill(ctx, OCAL_F32, 1001, 52);
  ASSERT_STATS(ctx, 1, 0, 0, 0);
  ck_assert_ocal(ocal_context_release(ctx));
  assert_cache_files(dir, 0);

  for (size_t k = 0; k < sizeof off_values / sizeof off_values[0]; k++) {
    setenv("OCAL_CACHE", off_values[k], 1);
    ctx = new_context(-1, dir);
    assert_cache_dir(ctx, NULL);
    ck_assert_ocal(ocal_context_release(ctx));
  }
  /* The option overrides the environment. */
  ctx = new_context(1, dir);
  assert_cache_dir(ctx, dir);
  ck_assert_ocal(ocal_context_release(ctx));
  /* Any other value, or none, leaves the cache on. */
  setenv("OCAL_CACHE", "1", 1);
  ctx = new_context(-1, dir);
  assert_cache_dir(ctx, dir);
  ck_assert_ocal(ocal_context_release(ctx));
  unsetenv("OCAL_CACHE");
  ctx = new_context(-1, dir);
  assert_cache_dir(ctx, dir);
  assert_fill(ctx, OCAL_F32, 1001, 53);
  ASSERT_STATS(ctx, 1, 0, 0, 0);
  ck_assert_ocal(ocal_context_release(ctx));
  assert_cache_files(dir, 1);

  restore_env(&cache_env);
  rm_rf(dir);
  free(dir);
}
END_TEST

START_TEST(test_option_cache_off) {
  saved_env cache_env = save_env("OCAL_CACHE");
  char *dir = make_tmpdir();
  unsetenv("OCAL_CACHE");
  ocal_context ctx = new_context(0, dir);
  assert_cache_dir(ctx, NULL);
  assert_fill(ctx, OCAL_I32, 1001, 60);
  ASSERT_STATS(ctx, 1, 0, 0, 0);
  ck_assert_ocal(ocal_context_release(ctx));
  assert_cache_files(dir, 0);

  /* OCAL_CACHE=1 does not override disk_cache = 0. */
  setenv("OCAL_CACHE", "1", 1);
  ctx = new_context(0, dir);
  assert_cache_dir(ctx, NULL);
  assert_fill(ctx, OCAL_I32, 1001, 61);
  ASSERT_STATS(ctx, 1, 0, 0, 0);
  ck_assert_ocal(ocal_context_release(ctx));
  assert_cache_files(dir, 0);

  restore_env(&cache_env);
  rm_rf(dir);
  free(dir);
}
END_TEST

START_TEST(test_env_cache_dir) {
  saved_env dir_env = save_env("OCAL_CACHE_DIR"), xdg_env = save_env("XDG_CACHE_HOME"),
            home_env = save_env("HOME");
  char *dir = make_tmpdir();
  char *nested = join(dir, "not/yet/there"); /* created on the first store */
  char *other = join(dir, "other");

  setenv("OCAL_CACHE_DIR", nested, 1);
  ocal_context ctx = new_context(1, NULL);
  assert_cache_dir(ctx, nested);
  assert_fill(ctx, OCAL_F32, 1001, 70);
  ASSERT_STATS(ctx, 1, 0, 0, 0);
  ck_assert_ocal(ocal_context_release(ctx));
  assert_cache_files(nested, 1);
  ctx = new_context(1, NULL);
  assert_fill(ctx, OCAL_F32, 1001, 71);
  ASSERT_STATS(ctx, 0, 1, 0, 0);
  ck_assert_ocal(ocal_context_release(ctx));

  /* The option wins over the variable. */
  ctx = new_context(1, other);
  assert_cache_dir(ctx, other);
  assert_fill(ctx, OCAL_F32, 1001, 72);
  ASSERT_STATS(ctx, 1, 0, 0, 0);
  ck_assert_ocal(ocal_context_release(ctx));
  assert_cache_files(other, 1);
  assert_cache_files(nested, 1);

  /* Unset or empty: $XDG_CACHE_HOME/ocal, then $HOME/.cache/ocal. */
  char *xdg_dir = join(dir, "ocal"), *home_dir = join(dir, ".cache/ocal");
  setenv("OCAL_CACHE_DIR", "", 1);
  setenv("XDG_CACHE_HOME", dir, 1);
  ctx = new_context(1, NULL);
  assert_cache_dir(ctx, xdg_dir);
  ck_assert_ocal(ocal_context_release(ctx));
  unsetenv("OCAL_CACHE_DIR");
  ctx = new_context(1, "");
  assert_cache_dir(ctx, xdg_dir);
  ck_assert_ocal(ocal_context_release(ctx));
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", dir, 1);
  ctx = new_context(1, NULL);
  assert_cache_dir(ctx, home_dir);
  assert_fill(ctx, OCAL_U8, 1001, 73);
  ck_assert_ocal(ocal_context_release(ctx));
  assert_cache_files(home_dir, 1);

  restore_env(&dir_env);
  restore_env(&xdg_env);
  restore_env(&home_env);
  free(xdg_dir);
  free(home_dir);
  free(nested);
  free(other);
  rm_rf(dir);
  free(dir);
}
END_TEST

START_TEST(test_unwritable_cache_dir) {
  char *dir = make_tmpdir();
  char *file = join(dir, "a-file");
  spit(file, "not a directory", 15);
  char *under_file = join(file, "cache");
  const char *bad_dirs[] = {under_file, file};
  for (size_t k = 0; k < 2; k++) {
    for (int round = 0; round < 2; round++) {
      ocal_context ctx = new_context(1, bad_dirs[k]);
      assert_cache_dir(ctx, bad_dirs[k]);
      assert_fill(ctx, OCAL_F32, 100003, 80 + 2 * k + (uint64_t)round);
      ASSERT_STATS(ctx, 1, 0, 0, 0); /* built, never stored, so every context compiles */
      ck_assert_ocal(ocal_context_release(ctx));
    }
  }
  /* Nothing was written anywhere, and the file is unchanged. */
  ck_assert_int_eq(list_dir(dir, NULL, NULL), 1);
  size_t size;
  unsigned char *data = slurp(file, &size);
  ck_assert_uint_eq(size, 15);
  ck_assert_int_eq(memcmp(data, "not a directory", 15), 0);
  free(data);
  free(under_file);
  free(file);
  rm_rf(dir);
  free(dir);
}
END_TEST

START_TEST(test_one_file_per_program) {
  char *dir = make_tmpdir();
  ocal_context ctx = new_context(1, dir);
  assert_fill(ctx, OCAL_F32, 1001, 90);
  assert_fill(ctx, OCAL_I32, 1001, 91);
  ASSERT_STATS(ctx, 2, 0, 0, 0);
  assert_cache_files(dir, 2);
  assert_fill(ctx, OCAL_U8, 1001, 92);
  assert_fill(ctx, OCAL_F32, 3, 93);
  ASSERT_STATS(ctx, 3, 0, 1, 0);
  assert_cache_files(dir, 3);
  ck_assert_ocal(ocal_context_release(ctx));

  /* Each type finds its own file: the data would be wrong if one loaded another's. */
  ctx = new_context(1, dir);
  assert_fill(ctx, OCAL_U8, 100003, 94);
  assert_fill(ctx, OCAL_I32, 100003, 95);
  assert_fill(ctx, OCAL_F32, 100003, 96);
  ASSERT_STATS(ctx, 0, 3, 0, 0);
  assert_fill(ctx, OCAL_U32, 1001, 97); /* a type not built yet */
  ASSERT_STATS(ctx, 1, 3, 0, 0);
  ck_assert_ocal(ocal_context_release(ctx));
  assert_cache_files(dir, 4);

  /* Double precision is built with other options again. */
  ctx = new_context(1, dir);
  int fp64 = 0;
  ck_assert_ocal(ocal_context_get_fp64(ctx, &fp64));
  if (fp64) {
    assert_fill(ctx, OCAL_C64, 1001, 98);
    ASSERT_STATS(ctx, 1, 0, 0, 0);
    assert_cache_files(dir, 5);
  }
  ck_assert_ocal(ocal_context_release(ctx));
  rm_rf(dir);
  free(dir);
}
END_TEST

/* ---- hostile files ------------------------------------------------------------------ *
 * Whatever sits where a cache file or the GEMM tuning file belongs, or where the cache
 * directory belongs, ocal must neither hang (a FIFO blocks open and read), nor read without
 * end (/dev/zero), nor trust it: it builds from source (or uses CLBlast's defaults) and the
 * results stay right. Each test arms an alarm, so a hang ends the test with SIGALRM. */

enum {
  HOSTILE_FIFO,
  HOSTILE_LINK_DEV_ZERO,
  HOSTILE_LINK_DANGLING,
  HOSTILE_LINK_TO_GOOD_FILE,
  HOSTILE_DIRECTORY,
  HOSTILE_HUGE_SPARSE,
  HOSTILE_HEADER_ONLY,
  HOSTILE_COUNT
};

static const char *const hostile_names[HOSTILE_COUNT] = {
    "a FIFO",          "a link to /dev/zero", "a dangling link", "a link to a good file elsewhere",
    "a directory",     "a 4 GiB sparse file", "a file cut after the magic"};

/* Puts hostile thing `mode` at path (which holds a good file, or nothing). */
static void place_hostile(int mode, const char *path, const char *spare_dir) {
  char *copy = NULL;
  if (mode == HOSTILE_LINK_TO_GOOD_FILE) {
    /* The good file itself, moved away: a link must not be followed even to a valid file,
     * since the next store would replace the link, not write through it. */
    copy = join(spare_dir, "moved.bin");
    ck_assert_int_eq(rename(path, copy), 0);
  }
  unlink(path);
  switch (mode) {
    case HOSTILE_FIFO:
      ck_assert_msg(mkfifo(path, 0644) == 0, "mkfifo(%s): %s", path, strerror(errno));
      break;
    case HOSTILE_LINK_DEV_ZERO:
      ck_assert_int_eq(symlink("/dev/zero", path), 0);
      break;
    case HOSTILE_LINK_DANGLING:
      ck_assert_int_eq(symlink("/nonexistent/ocal/cache.bin", path), 0);
      break;
    case HOSTILE_LINK_TO_GOOD_FILE:
      ck_assert_int_eq(symlink(copy, path), 0);
      break;
    case HOSTILE_DIRECTORY:
      ck_assert_int_eq(mkdir(path, 0755), 0);
      break;
    case HOSTILE_HUGE_SPARSE: {
      FILE *f = fopen(path, "wb");
      ck_assert_ptr_nonnull(f);
      ck_assert_int_eq(ftruncate(fileno(f), (off_t)4 << 30), 0);
      fputs("OCALBIN1", f);
      ck_assert_int_eq(fclose(f), 0);
      break;
    }
    case HOSTILE_HEADER_ONLY:
      spit(path, "OCALBIN1", 8);
      break;
    default:
      ck_abort_msg("unknown hostile file %d", mode);
  }
  free(copy);
}

START_TEST(test_hostile_cache_file) {
  const int mode = _i;
  const char *what = hostile_names[mode];
  alarm(60);
  char *dir = make_tmpdir(), *spare = make_tmpdir();
  ocal_context ctx = new_context(1, dir);
  assert_fill(ctx, OCAL_F32, 1001, 100);
  ck_assert_ocal(ocal_context_release(ctx));
  char *path = only_bin(dir);
  place_hostile(mode, path, spare);

  for (int round = 0; round < 2; round++) {
    ctx = new_context(1, dir);
    char why[1024] = "";
    int rc = fill_verify(ctx, OCAL_F32, 100003, 101 + (uint64_t)round, why, sizeof why);
    ck_assert_msg(rc == 0, "%s in place of the cache file (round %d): %s", what, round, why);
    ocal_cache_stats st = stats_of(ctx);
    ck_assert_uint_eq(st.memory_hits, 0);
    if (round == 0 || mode == HOSTILE_DIRECTORY) {
      /* Refused and rebuilt; a directory stays in the way, so every context rebuilds. */
      ck_assert_msg(st.compiles == 1 && st.disk_hits == 0 && st.disk_rejects >= 1,
                    "%s: compiles %llu disk_hits %llu disk_rejects %llu, expected 1, 0, >= 1",
                    what, (unsigned long long)st.compiles, (unsigned long long)st.disk_hits,
                    (unsigned long long)st.disk_rejects);
    } else {
      /* The store replaced the thing (not what it pointed to) with a good file. */
      struct stat lst;
      ck_assert_int_eq(lstat(path, &lst), 0);
      ck_assert_msg(S_ISREG(lst.st_mode), "%s: the store left no regular file", what);
      ck_assert_msg(st.compiles == 0 && st.disk_hits == 1,
                    "%s: after the rewrite compiles %llu disk_hits %llu, expected 0 and 1", what,
                    (unsigned long long)st.compiles, (unsigned long long)st.disk_hits);
    }
    ck_assert_ocal(ocal_context_release(ctx));
  }
  /* /dev/zero and the moved good file are untouched by the store. */
  if (mode == HOSTILE_LINK_TO_GOOD_FILE) {
    char *copy = join(spare, "moved.bin");
    size_t size;
    unsigned char *data = slurp(copy, &size);
    ck_assert_int_eq(memcmp(data, "OCALBIN1", 8), 0);
    free(data);
    free(copy);
  }
  alarm(0);
  free(path);
  rm_rf(dir);
  rm_rf(spare);
  free(dir);
  free(spare);
}
END_TEST

enum {
  BADDIR_MISSING,
  BADDIR_REGULAR_FILE,
  BADDIR_FIFO,
  BADDIR_LINK_DEV_ZERO,
  BADDIR_READ_ONLY,
  BADDIR_COUNT
};

static const char *const baddir_names[BADDIR_COUNT] = {
    "a missing directory (made on the first store)", "a regular file", "a FIFO",
    "a link to /dev/zero", "a read-only directory"};

START_TEST(test_hostile_cache_dir) {
  const int mode = _i;
  const char *what = baddir_names[mode];
  alarm(60);
  char *root = make_tmpdir();
  char *dir = join(root, "cache");
  switch (mode) {
    case BADDIR_MISSING: break;
    case BADDIR_REGULAR_FILE: spit(dir, "x", 1); break;
    case BADDIR_FIFO: ck_assert_int_eq(mkfifo(dir, 0644), 0); break;
    case BADDIR_LINK_DEV_ZERO: ck_assert_int_eq(symlink("/dev/zero", dir), 0); break;
    case BADDIR_READ_ONLY: ck_assert_int_eq(mkdir(dir, 0555), 0); break;
    default: ck_abort_msg("unknown cache directory %d", mode);
  }
  /* root may write into a read-only directory anyway: then the row is an ordinary one. */
  int stores = mode == BADDIR_MISSING || (mode == BADDIR_READ_ONLY && access(dir, W_OK) == 0);
  for (int round = 0; round < 2; round++) {
    ocal_context ctx = new_context(1, dir);
    char why[1024] = "";
    int rc = fill_verify(ctx, OCAL_I32, 100003, 110 + (uint64_t)round, why, sizeof why);
    ck_assert_msg(rc == 0, "a cache directory that is %s (round %d): %s", what, round, why);
    ocal_cache_stats st = stats_of(ctx);
    if (stores && round == 1)
      ck_assert_msg(st.compiles == 0 && st.disk_hits == 1, "%s: no disk hit after a store",
                    what);
    else
      ck_assert_msg(st.compiles == 1 && st.disk_hits == 0, "%s: compiles %llu disk_hits %llu",
                    what, (unsigned long long)st.compiles, (unsigned long long)st.disk_hits);
    ck_assert_ocal(ocal_context_release(ctx));
  }
  alarm(0);
  chmod(dir, 0755);
  rm_rf(root);
  free(dir);
  free(root);
}
END_TEST

/* The GEMM tuning file is read once per device and process, at the first BLAS call: a child
 * process (--child-tuning DIR) reads it. Exit 0: ocal_blas_get_tuning answered, and not
 * from the file; 1: it failed; 2: it says it used the file; 3: this ocal has no CLBlast. */
static int child_tuning(const char *dir) {
  alarm(60);
  ocal_context_options opt;
  ocal_context ctx = NULL;
  ocal_context_options_init(&opt);
  opt.disk_cache = 1;
  opt.cache_dir = dir;
  if (ocal_context_create(&opt, &ctx) != OCAL_OK) return 1;
  ocal_blas_tuning info = {sizeof info};
  ocal_status s = ocal_blas_get_tuning(ctx, OCAL_F32, &info);
  int code = s == OCAL_UNSUPPORTED ? 3 : s != OCAL_OK ? 1 : info.source == OCAL_TUNING_FILE ? 2 : 0;
  if (s != OCAL_OK && s != OCAL_UNSUPPORTED) fprintf(stderr, "child: %s\n", ocal_last_error());
  ocal_context_release(ctx);
  return code;
}

START_TEST(test_hostile_tuning_file) {
  const int mode = _i;
  const char *what = hostile_names[mode];
  char *dir = make_tmpdir(), *spare = make_tmpdir();
  /* This process learns the file's path (and reads nothing: there is no file yet). */
  ocal_context ctx = new_context(1, dir);
  ocal_blas_tuning info = {sizeof info};
  ocal_status s = ocal_blas_get_tuning(ctx, OCAL_F32, &info);
  ck_assert_ocal(ocal_context_release(ctx));
  if (s == OCAL_UNSUPPORTED) { /* built without CLBlast: no tuning file to read */
    rm_rf(dir);
    rm_rf(spare);
    free(dir);
    free(spare);
    return;
  }
  ck_assert_msg(s == OCAL_OK, "ocal_blas_get_tuning: %s", ocal_last_error());
  ck_assert_msg(strncmp(info.path, dir, strlen(dir)) == 0, "the tuning file %s is not in %s",
                info.path, dir);
  if (mode == HOSTILE_LINK_TO_GOOD_FILE) spit(info.path, "OCALBIN1", 8);
  place_hostile(mode, info.path, spare);
  char *args[] = {"--child-tuning", dir, NULL};
  int sig = 0, code = fixture_wait_child(fixture_spawn_self(program_path, args), &sig);
  ck_assert_msg(code >= 0, "%s in place of the tuning file: the child died (signal %d%s)", what,
                sig, sig == SIGALRM ? ": it hung" : "");
  ck_assert_msg(code == 0, "%s in place of the tuning file: the child exited %d", what, code);
  rm_rf(dir);
  rm_rf(spare);
  free(dir);
  free(spare);
}
END_TEST

static TCase *cache_tcase(const char *name) {
  /* No device fixture: every test makes its own contexts on its own cache directory. */
  TCase *tc = tcase_create(name);
  tcase_set_timeout(tc, 120);
  return tc;
}


/* ---- kernel argument facts ------------------------------------------------------------ */

/* A raw kernel whose argument types come from the build options, as a user writes them. */
static const char *const macro_typed_src =
    "__kernel void put(__global T *out, const T v, const uint n) {\n"
    "  if (get_global_id(0) < n) out[get_global_id(0)] = v;\n"
    "}\n";

/* Builds macro_typed_src with -DT=float in ctx and checks that a wrong-typed scalar and
 * buffer are refused. */
static void assert_put_checks_types(ocal_context ctx) {
  ocal_program p = NULL;
  ocal_kernel k = NULL;
  ck_assert_ocal(ocal_program_create(ctx, macro_typed_src, "-DT=float", &p));
  ck_assert_ocal(ocal_kernel_create(p, "put", &k));
  int32_t i = 3;
  float f = 1.5f;
  size_t n = 4;
  ocal_buffer ib = NULL;
  ck_assert_ocal(ocal_buffer_create(ctx, OCAL_I32, 1, &n, &ib));
  ck_assert_ocal_fails(ocal_kernel_set_scalar(k, 1, OCAL_I32, &i), OCAL_TYPE_MISMATCH);
  ck_assert_ocal_fails(ocal_kernel_set_buffer(k, 0, ib), OCAL_TYPE_MISMATCH);
  ck_assert_ocal(ocal_kernel_set_scalar(k, 1, OCAL_F32, &f));
  ck_assert_ocal(ocal_buffer_release(ib));
  ck_assert_ocal(ocal_kernel_release(k));
  ck_assert_ocal(ocal_program_release(p));
}

/* Whether data holds the text s. */
static int holds(const unsigned char *data, size_t size, const char *s) {
  size_t n = strlen(s);
  for (size_t i = 0; i + n <= size; i++)
    if (memcmp(data + i, s, n) == 0) return 1;
  return 0;
}

/* A raw program's cache entry keeps what the driver said of its kernels' arguments (some
 * drivers, Intel's CPU runtime, drop it from a binary loaded back), and an entry without
 * those facts (as an older ocal wrote them) is rebuilt, not trusted. */
START_TEST(test_entry_keeps_argument_facts) {
  char *dir = make_tmpdir();
  ocal_context ctx = new_context(1, dir);
  assert_put_checks_types(ctx);
  ASSERT_STATS(ctx, 1, 0, 0, 0);
  ck_assert_ocal(ocal_context_release(ctx));

  /* The facts are in the file, with T resolved. */
  char *path = only_bin(dir);
  size_t size;
  unsigned char *data = slurp(path, &size);
  ck_assert_msg(holds(data, size, "kernel\tput\t3\n") && holds(data, size, "\tv\tfloat\n"),
                "the cache entry holds no argument facts for kernel 'put'");

  /* The same entry as the driver's binary alone: OCALBIN1, key length, payload length, key,
   * payload, checksum (src/core/disk_cache.c); the payload here is the binary after the
   * facts (src/core/program.c: "OCALARG1", facts length, facts, binary). */
  uint32_t key_len, facts_len;
  memcpy(&key_len, data + 8, 4);
  const unsigned char *payload = data + 20 + key_len;
  ck_assert_int_eq(memcmp(payload, "OCALARG1", 8), 0);
  memcpy(&facts_len, payload + 8, 4);
  uint64_t bin_len = size - 8 - (size_t)(payload - data) - 12 - facts_len;
  const unsigned char *binary = payload + 12 + facts_len;
  size_t old_size = 20 + key_len + (size_t)bin_len + 8;
  unsigned char *old = malloc(old_size);
  ck_assert_ptr_nonnull(old);
  memcpy(old, data, 8 + 4);
  memcpy(old + 12, &bin_len, 8);
  memcpy(old + 20, data + 20, key_len);
  memcpy(old + 20 + key_len, binary, (size_t)bin_len);
  uint64_t h = fnv1a64(old, old_size - 8);
  memcpy(old + old_size - 8, &h, 8);
  spit(path, old, old_size);
  free(old);
  free(data);

  ctx = new_context(1, dir);
  assert_put_checks_types(ctx);
  ASSERT_STATS(ctx, 1, 0, 0, 1); /* rejected and rebuilt */
  ck_assert_ocal(ocal_context_release(ctx));
  /* The rebuilt entry has its facts again: a pure disk hit that still checks types. */
  ctx = new_context(1, dir);
  assert_put_checks_types(ctx);
  ASSERT_STATS(ctx, 0, 1, 0, 0);
  ck_assert_ocal(ocal_context_release(ctx));
  free(path);
  rm_rf(dir);
  free(dir);
}
END_TEST

int main(int argc, char **argv) {
  if (argc == 6 && strcmp(argv[1], "--child-fill") == 0)
    return child_main(argv[2], argv[3], argv[4], argv[5]);
  if (argc == 3 && strcmp(argv[1], "--child-tuning") == 0) return child_tuning(argv[2]);
  if (argc > 0) program_path = argv[0];
  const char *tmp = getenv("TMPDIR");
  snprintf(run_root, sizeof run_root, "%s/ocal-cache-test-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
  if (!mkdtemp(run_root)) {
    fprintf(stderr, "check_cache: mkdtemp(%s): %s\n", run_root, strerror(errno));
    return EXIT_FAILURE;
  }
  Suite *s = suite_create("cache");

  TCase *hits = cache_tcase("hits");
  tcase_add_test(hits, test_first_fill_compiles_once);
  tcase_add_test(hits, test_second_process_skips_compiler);
  tcase_add_test(hits, test_concurrent_processes);
  tcase_add_test(hits, test_one_file_per_program);
  tcase_add_test(hits, test_entry_keeps_argument_facts);
  suite_add_tcase(s, hits);

  TCase *corrupt = cache_tcase("corruption");
  tcase_add_loop_test(corrupt, test_corrupt_file_is_rejected, 0, CORRUPT_COUNT);
  tcase_add_test(corrupt, test_directory_in_the_way);
  suite_add_tcase(s, corrupt);

  TCase *hostile = cache_tcase("hostile files");
  tcase_add_loop_test(hostile, test_hostile_cache_file, 0, HOSTILE_COUNT);
  tcase_add_loop_test(hostile, test_hostile_cache_dir, 0, BADDIR_COUNT);
  tcase_add_loop_test(hostile, test_hostile_tuning_file, 0, HOSTILE_COUNT);
  suite_add_tcase(s, hostile);

  TCase *config = cache_tcase("configuration");
  tcase_add_test(config, test_env_cache_off);
  tcase_add_test(config, test_option_cache_off);
  tcase_add_test(config, test_env_cache_dir);
  tcase_add_test(config, test_unwritable_cache_dir);
  suite_add_tcase(s, config);

  int rc = fixture_run(s);
  rm_rf(run_root);
  return rc;
}
