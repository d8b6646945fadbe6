/* Tests of GEMM, batched GEMM, GEMV and the BLAS-1 calls (CLBlast's and ocal's kernels)
 * against a double-precision host reference, of their error reporting, and of GEMM tuning: the
 * parameter checks, the tuning file (applied by a new process, ignored when malformed or
 * foreign) and the tuner itself with a tiny budget.
 *
 * White-box where it must be: malformed tuning files are written with the library's own
 * disk-cache writer and key (src/blas/blas_internal.h). A "new process" is this program
 * exec'ed with --print-tuning DIR: it creates a context whose cache directory is DIR, runs a
 * small checked GEMM and prints the tuning in effect. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine.h"
#include "fixture.h"

/* In a build without CLBlast (configure --without-clblast) the cases that need it say so on
 * stdout, which the test's log keeps, and return: skipped visibly, not passed silently. */
#ifdef OCAL_HAVE_CLBLAST
#define HAVE_CLBLAST 1
#define NEEDS_CLBLAST() ((void)0)
#else
#define HAVE_CLBLAST 0
#define NEEDS_CLBLAST()                                                                  \
  do {                                                                                   \
    printf("check_blas: %s: SKIPPED: this ocal was built without CLBlast\n", __func__); \
    fflush(stdout);                                                                      \
    return;                                                                              \
  } while (0)
#endif

/* ---- helpers -------------------------------------------------------------------------- */

static double *random_doubles(size_t n, uint64_t seed) {
  double *d = malloc((n ? n : 1) * sizeof *d);
  ck_assert_ptr_nonnull(d);
  uint64_t st = seed * 0x9e3779b97f4a7c15ull + 1;
  for (size_t i = 0; i < n; i++)
    d[i] = (double)(fixture_random(&st) >> 11) / (double)(1ull << 53) * 2.0 - 1.0;
  return d;
}

/* A buffer of dtype dt holding host[] (rounded to f32 in place for f32, so that the host
 * reference sees exactly what the device does). */
static ocal_buffer upload(ocal_context ctx, ocal_dtype dt, int ndim, const size_t *shape,
                          double *host) {
  size_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  ocal_buffer b;
  if (dt == OCAL_F32) {
    float *f = malloc((n ? n : 1) * sizeof *f);
    ck_assert_ptr_nonnull(f);
    for (size_t i = 0; i < n; i++) {
      f[i] = (float)host[i];
      host[i] = f[i];
    }
    ck_assert_ocal(ocal_buffer_from_host(ctx, dt, ndim, shape, f, &b));
    free(f);
  } else {
    ck_assert_ocal(ocal_buffer_from_host(ctx, dt, ndim, shape, host, &b));
  }
  return b;
}

static double *download(ocal_buffer b, size_t offset, size_t n) {
  ocal_dtype dt;
  ck_assert_ocal(ocal_buffer_get_dtype(b, &dt));
  double *d = malloc((n ? n : 1) * sizeof *d);
  ck_assert_ptr_nonnull(d);
  if (dt == OCAL_F32) {
    float *f = malloc((n ? n : 1) * sizeof *f);
    ck_assert_ptr_nonnull(f);
    ck_assert_ocal(ocal_buffer_read(b, offset, n, f, NULL));
    for (size_t i = 0; i < n; i++) d[i] = f[i];
    free(f);
  } else {
    ck_assert_ocal(ocal_buffer_read(b, offset, n, d, NULL));
  }
  return d;
}

/* out = alpha * op(A) * op(B) + beta * c0 in double, with the error bound of each entry. */
static void ref_gemm(int ta, int tb, size_t m, size_t n, size_t k, double alpha,
                     const double *a, const double *b, double beta, const double *c0,
                     double *out, double *bound) {
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++) {
      double s = 0, mag = 0;
      for (size_t p = 0; p < k; p++) {
        double x = ta ? a[p * m + i] : a[i * k + p];
        double y = tb ? b[j * k + p] : b[p * n + j];
        s += x * y;
        mag += fabs(x * y);
      }
      out[i * n + j] = alpha * s + beta * c0[i * n + j];
      bound[i * n + j] = fabs(alpha) * mag + fabs(beta * c0[i * n + j]);
    }
}

static double eps_of(ocal_dtype dt) { return dt == OCAL_F32 ? 1.2e-7 : 2.3e-16; }

/* Compares n values; each may be off by a few roundings per term of its sum. */
static void assert_close(const double *got, const double *ref, const double *bound, size_t n,
                         size_t terms, ocal_dtype dt, const char *what) {
  double tol = 4.0 * (double)(terms + 2) * eps_of(dt);
  for (size_t i = 0; i < n; i++) {
    double err = fabs(got[i] - ref[i]);
    ck_assert_msg(err <= tol * (bound[i] + 1e-30) + 1e-30 || (bound[i] == 0 && got[i] == 0),
                  "%s: element %zu is %.9g, expected %.9g (error %.3g, allowed %.3g)", what, i,
                  got[i], ref[i], err, tol * bound[i]);
  }
}

/* One checked GEMM C = alpha op(A) op(B) + beta C of shape m x n x k. */
static void check_gemm(ocal_context ctx, ocal_dtype dt, int ta, int tb, size_t m, size_t n,
                       size_t k, uint64_t seed) {
  size_t as[2] = {ta ? k : m, ta ? m : k}, bs[2] = {tb ? n : k, tb ? k : n}, cs[2] = {m, n};
  double *a = random_doubles(m * k, seed), *b = random_doubles(k * n, seed + 1);
  double *c0 = random_doubles(m * n, seed + 2);
  ocal_buffer A = upload(ctx, dt, 2, as, a), B = upload(ctx, dt, 2, bs, b);
  ocal_buffer C = upload(ctx, dt, 2, cs, c0);
  double alpha = 1.5, beta = -0.75;
  ck_assert_ocal(ocal_gemm(ta ? OCAL_TRANS : OCAL_NO_TRANS, tb ? OCAL_TRANS : OCAL_NO_TRANS,
                           alpha, A, B, beta, C));
  double *got = download(C, 0, m * n);
  double *ref = malloc((m * n + 1) * sizeof *ref), *bound = malloc((m * n + 1) * sizeof *bound);
  ref_gemm(ta, tb, m, n, k, alpha, a, b, beta, c0, ref, bound);
  char what[128];
  snprintf(what, sizeof what, "%s gemm %c%c %zux%zux%zu", ocal_dtype_name(dt), ta ? 'T' : 'N',
           tb ? 'T' : 'N', m, n, k);
  assert_close(got, ref, bound, m * n, k, dt, what);
  free(a), free(b), free(c0), free(got), free(ref), free(bound);
  ocal_buffer_release(A), ocal_buffer_release(B), ocal_buffer_release(C);
}

/* The odd shapes of the issue, m x n x k. */
static const size_t shapes[][3] = {{1, 1, 1}, {7, 13, 5}, {1000, 1, 1000}, {33, 17, 65}};

static void check_all_shapes(ocal_context ctx, ocal_dtype dt) {
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
    for (int t = 0; t < 4; t++)
      check_gemm(ctx, dt, t & 1, t >> 1, shapes[s][0], shapes[s][1], shapes[s][2], 10 * s + t);
}

/* A valid parameter set for a CPU device with the given switch point. */
static void cpu_params(long min_indirect, char *out, size_t size) {
  snprintf(out, size,
           "# Xgemm\nGEMMK=0\nKREG=1\nKWG=32\nKWI=2\nMDIMA=8\nMDIMC=8\nMWG=32\nNDIMB=16\n"
           "NDIMC=16\nNWG=32\nSA=1\nSB=1\nSTRM=0\nSTRN=0\nVWM=4\nVWN=2\n"
           "# XgemmDirect\nKWID=2\nMDIMAD=8\nMDIMCD=8\nNDIMBD=8\nNDIMCD=8\nPADA=1\nPADB=1\n"
           "VWMD=1\nVWND=1\nWGD=16\n"
           "XGEMM_MIN_INDIRECT_SIZE=%ld\n",
           min_indirect);
}

static char *make_temp_dir(void) {
  char *dir = strdup("/tmp/ocal-blas-test-XXXXXX");
  ck_assert_ptr_nonnull(dir);
  ck_assert_ptr_nonnull(mkdtemp(dir));
  return dir;
}

static void remove_dir(char *dir) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);
  free(dir);
}

static ocal_context context_in(const char *cache_dir) {
  ocal_context_options o;
  ocal_context_options_init(&o);
  o.cache_dir = cache_dir;
  ocal_context ctx;
  ck_assert_ocal(ocal_context_create(&o, &ctx));
  return ctx;
}

/* Runs this program with --print-tuning dir (a new process, exec'ed), its stdout and stderr
 * into files; returns their contents (malloc'ed) and the exit status. */
static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  ck_assert_ptr_nonnull(f);
  char *s = calloc(1, 65536);
  ck_assert_ptr_nonnull(s);
  size_t n = fread(s, 1, 65535, f);
  s[n] = '\0';
  fclose(f);
  return s;
}

static int run_self(const char *dir, const char *tuning_env, char **out, char **err) {
  char out_path[600], err_path[600];
  snprintf(out_path, sizeof out_path, "%s/stdout.txt", dir);
  snprintf(err_path, sizeof err_path, "%s/stderr.txt", dir);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    int fo = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int fe = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fo < 0 || fe < 0) _exit(126);
    dup2(fo, 1), dup2(fe, 2);
    if (tuning_env)
      setenv("OCAL_TUNING", tuning_env, 1);
    else
      unsetenv("OCAL_TUNING");
    execl("/proc/self/exe", "check_blas", "--print-tuning", dir, (char *)NULL);
    _exit(127);
  }
  int status;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  *out = slurp(out_path);
  *err = slurp(err_path);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* The --print-tuning mode (no Check, no fork: a plain program). */
static int print_tuning(const char *dir) {
  ocal_context_options o;
  ocal_context_options_init(&o);
  o.cache_dir = dir;
  ocal_context ctx;
  if (ocal_context_create(&o, &ctx) != OCAL_OK) return 2;
  /* A real product through the parameters in effect, checked on the host. */
  float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, -1, 2, 0.5f, -2, 3}, c[4];
  size_t as[2] = {2, 3}, bs[2] = {3, 2}, cs[2] = {2, 2};
  ocal_buffer A, B, C;
  int rc = 0;
  if (ocal_buffer_from_host(ctx, OCAL_F32, 2, as, a, &A) ||
      ocal_buffer_from_host(ctx, OCAL_F32, 2, bs, b, &B) ||
      ocal_buffer_create(ctx, OCAL_F32, 2, cs, &C))
    return 3;
  if (ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1.0, A, B, 0.0, C) != OCAL_OK ||
      ocal_buffer_read(C, 0, 4, c, NULL) != OCAL_OK) {
    fprintf(stderr, "gemm failed: %s\n", ocal_last_error());
    rc = 4;
  } else if (c[0] != -1 || c[1] != 9 || c[2] != 2 || c[3] != 16.5f) {
    fprintf(stderr, "gemm wrong: %g %g %g %g\n", c[0], c[1], c[2], c[3]);
    rc = 5;
  }
  ocal_blas_tuning info = {sizeof info};
  if (ocal_blas_get_tuning(ctx, OCAL_F32, &info) != OCAL_OK) rc = 6;
  printf("source=%d\npath=%s\nnote=%s\n%s", (int)info.source, info.path, info.note, info.params);
  ocal_buffer_release(A), ocal_buffer_release(B), ocal_buffer_release(C);
  ocal_context_release(ctx);
  return rc;
}

/* ---- GEMM ----------------------------------------------------------------------------- */

/* Loop tests run twice: _i = 0 with the default engine choice, _i = 1 with ocal's own
 * GEMM kernel forced (src/blas/gemm_own.c). */
static void set_engine(int own) {
  if (own)
    setenv("OCAL_GEMM", "ocal", 1);
  else
    unsetenv("OCAL_GEMM");
  fixture_reopen(); /* settings are read at context creation */
}

START_TEST(test_gemm_f32_shapes_and_transposes) {
  set_engine(_i);
  check_all_shapes(fixture_ctx, OCAL_F32);
}
END_TEST

/* The same through the indirect path (Xgemm with padding and transposition kernels): a
 * switch point of 1 sends every product there. */
START_TEST(test_gemm_f32_indirect_kernel) {
  NEEDS_CLBLAST();
  char params[1024];
  cpu_params(1, params, sizeof params);
  ck_assert_ocal(ocal_blas_tuning_apply(fixture_ctx, OCAL_F32, params));
  check_all_shapes(fixture_ctx, OCAL_F32);
  check_gemm(fixture_ctx, OCAL_F32, 0, 0, 64, 64, 64, 99); /* no padding needed */
}
END_TEST

START_TEST(test_gemm_f64) {
  set_engine(_i);
  int fp64;
  ck_assert_ocal(ocal_context_get_fp64(fixture_ctx, &fp64));
  if (!fp64) return;
  check_all_shapes(fixture_ctx, OCAL_F64);
}
END_TEST

/* Views: A and B are row ranges of larger buffers, C a row range whose neighbours must
 * stay untouched; k = 0 scales C by beta. */
START_TEST(test_gemm_views_and_empty) {
  set_engine(_i);
  ocal_context ctx = fixture_ctx;
  size_t m = 9, n = 6, k = 11, pad = 4;
  size_t big_a[2] = {m + 2 * pad, k}, big_b[2] = {k + pad, n}, big_c[2] = {m + 2 * pad, n};
  double *a = random_doubles(big_a[0] * k, 1), *b = random_doubles(big_b[0] * n, 2);
  double *c = random_doubles(big_c[0] * n, 3);
  ocal_buffer A = upload(ctx, OCAL_F32, 2, big_a, a), B = upload(ctx, OCAL_F32, 2, big_b, b);
  ocal_buffer C = upload(ctx, OCAL_F32, 2, big_c, c);
  size_t va[2] = {m, k}, vb[2] = {k, n}, vc[2] = {m, n};
  ocal_buffer Av, Bv, Cv;
  ck_assert_ocal(ocal_buffer_view(A, pad * k, 2, va, &Av));
  ck_assert_ocal(ocal_buffer_view(B, pad * n, 2, vb, &Bv));
  ck_assert_ocal(ocal_buffer_view(C, pad * n, 2, vc, &Cv));
  ck_assert_ocal(ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 2.0, Av, Bv, 0.5, Cv));
  double *got = download(C, 0, big_c[0] * n);
  double ref[9 * 6], bound[9 * 6];
  ref_gemm(0, 0, m, n, k, 2.0, a + pad * k, b + pad * n, 0.5, c + pad * n, ref, bound);
  assert_close(got + pad * n, ref, bound, m * n, k, OCAL_F32, "gemm on views");
  for (size_t i = 0; i < pad * n; i++) {
    ck_assert_msg(got[i] == c[i], "element %zu before the view changed", i);
    ck_assert_msg(got[(pad + m) * n + i] == c[(pad + m) * n + i],
                  "element %zu after the view changed", i);
  }
  free(got);

  /* k = 0: C = beta * C (beta = 0 clears it); m = 0: nothing to do. */
  size_t e0[2] = {m, 0}, e1[2] = {0, n};
  ocal_buffer E0, E1;
  ck_assert_ocal(ocal_buffer_create(ctx, OCAL_F32, 2, e0, &E0));
  ck_assert_ocal(ocal_buffer_create(ctx, OCAL_F32, 2, e1, &E1));
  ck_assert_ocal(ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1.0, E0, E1, 0.0, Cv));
  got = download(Cv, 0, m * n);
  for (size_t i = 0; i < m * n; i++) ck_assert_msg(got[i] == 0.0, "k=0, beta=0: %g", got[i]);
  free(got);
  size_t z[2] = {0, n}, za[2] = {0, k};
  ocal_buffer Z, ZA;
  ck_assert_ocal(ocal_buffer_create(ctx, OCAL_F32, 2, z, &Z));
  ck_assert_ocal(ocal_buffer_create(ctx, OCAL_F32, 2, za, &ZA));
  ck_assert_ocal(ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1.0, ZA, Bv, 0.0, Z));
  ocal_buffer_release(Z), ocal_buffer_release(ZA), ocal_buffer_release(E0);
  ocal_buffer_release(E1);
  ocal_buffer_release(Av), ocal_buffer_release(Bv), ocal_buffer_release(Cv);
  ocal_buffer_release(A), ocal_buffer_release(B), ocal_buffer_release(C);
  free(a), free(b), free(c);
}
END_TEST

/* Strided-batched: 3-D A, B, C in every transpose combination, and a 2-D B shared by all
 * batch entries; each entry must equal its own host product. */
START_TEST(test_gemm_batched) {
  set_engine(_i);
  ocal_context ctx = fixture_ctx;
  size_t batch = 3, m = 5, n = 7, k = 4;
  for (int t = 0; t < 5; t++) {
    int ta = t & 1, tb = (t >> 1) & 1, shared_b = t == 4;
    size_t as[3] = {batch, ta ? k : m, ta ? m : k}, bs[3] = {batch, tb ? n : k, tb ? k : n};
    size_t cs[3] = {batch, m, n};
    double *a = random_doubles(batch * m * k, 20 + t), *b = random_doubles(batch * k * n, 30 + t);
    double *c = random_doubles(batch * m * n, 40 + t);
    ocal_buffer A = upload(ctx, OCAL_F32, 3, as, a);
    ocal_buffer B = shared_b ? upload(ctx, OCAL_F32, 2, bs + 1, b) : upload(ctx, OCAL_F32, 3, bs, b);
    ocal_buffer C = upload(ctx, OCAL_F32, 3, cs, c);
    ck_assert_ocal(ocal_gemm(ta ? OCAL_TRANS : OCAL_NO_TRANS, tb ? OCAL_TRANS : OCAL_NO_TRANS,
                             -1.25, A, B, 2.0, C));
    double *got = download(C, 0, batch * m * n);
    for (size_t e = 0; e < batch; e++) {
      double ref[5 * 7], bound[5 * 7];
      ref_gemm(ta, tb, m, n, k, -1.25, a + e * m * k, b + (shared_b ? 0 : e * k * n), 2.0,
               c + e * m * n, ref, bound);
      char what[96];
      snprintf(what, sizeof what, "batched %c%c%s entry %zu", ta ? 'T' : 'N', tb ? 'T' : 'N',
               shared_b ? " (shared B)" : "", e);
      assert_close(got + e * m * n, ref, bound, m * n, k, OCAL_F32, what);
    }
    free(got), free(a), free(b), free(c);
    ocal_buffer_release(A), ocal_buffer_release(B), ocal_buffer_release(C);
  }
}
END_TEST

/* ---- ocal's own GEMM kernel (src/blas/gemm_own.c) ------------------------------------- */

/* Whole tiles (the unchecked fast path, 4-wide and not), several tiles, split-K over the
 * kernel, beta = 0 over NaN, f64, a batched product with a shared 2-D A; and the
 * pre-transposition of A ahead of CLBlast (blas.c). */
START_TEST(test_gemm_own_kernel_paths) {
  setenv("OCAL_GEMM", "ocal", 1);
  fixture_reopen();
  ocal_context ctx = fixture_ctx;
  int fp64;
  ck_assert_ocal(ocal_context_get_fp64(ctx, &fp64));
  static const char *const tiles[] = {"64x64x16x8x4", "32x32x8x4x4", "128x64x8x8x8"};
  for (size_t i = 0; i < sizeof tiles / sizeof tiles[0]; i++) {
    setenv("OCAL_GEMM_OWN_TILE", tiles[i], 1);
    fixture_reopen();
    ctx = fixture_ctx;
    for (int t = 0; t < 4; t++) {
      check_gemm(ctx, OCAL_F32, t & 1, t >> 1, 128, 64, 48, 200 + t); /* whole tiles */
      check_gemm(ctx, OCAL_F32, t & 1, t >> 1, 130, 66, 21, 210 + t); /* edges */
      /* edges with every leading dimension a multiple of 4 (VEC: tn loads them 16 bytes
       * at a time) */
      check_gemm(ctx, OCAL_F32, t & 1, t >> 1, 132, 68, 21, 250 + t);
      check_gemm(ctx, OCAL_F32, t & 1, t >> 1, 132, 68, 24, 254 + t);
      /* most blocks whole (SPLIT_WHOLE with the 32 x 32 tile: whole blocks unchecked, edge
       * blocks checked), leading dimensions not all multiples of 4 */
      check_gemm(ctx, OCAL_F32, t & 1, t >> 1, 130, 66, 24, 270 + t);
    }
    check_gemm(ctx, OCAL_F32, 0, 0, 64, 129, 32, 220); /* whole row tiles, ld not 4-aligned */
  }
  /* Split k, every block whole in m and n but the last slice short of a whole k step: that
   * slice takes the checked body, the others the unchecked one. */
  setenv("OCAL_GEMM_OWN_TILE", "32x32x8x4x4", 1);
  setenv("OCAL_GEMM_OWN_SPLITK", "3", 1);
  fixture_reopen();
  ctx = fixture_ctx;
  for (int t = 0; t < 4; t++) check_gemm(ctx, OCAL_F32, t & 1, t >> 1, 128, 64, 84, 274 + t);
  unsetenv("OCAL_GEMM_OWN_SPLITK");
  unsetenv("OCAL_GEMM_OWN_TILE");
  setenv("OCAL_GEMM_OWN_SPLITK", "3", 1);
  fixture_reopen();
  ctx = fixture_ctx;
  for (int t = 0; t < 4; t++) {
    check_gemm(ctx, OCAL_F32, t & 1, t >> 1, 64, 64, 96, 230 + t);
    check_gemm(ctx, OCAL_F32, t & 1, t >> 1, 33, 17, 65, 234 + t);
    if (fp64) check_gemm(ctx, OCAL_F64, t & 1, t >> 1, 64, 64, 40, 238 + t);
  }
  unsetenv("OCAL_GEMM_OWN_SPLITK");
  fixture_reopen();
  ctx = fixture_ctx;

  /* beta = 0 over NaN, on whole tiles and on edges. */
  for (int e = 0; e < 2; e++) {
    size_t m = e ? 70 : 64, n = 64, k = 32;
    size_t as[2] = {m, k}, bs[2] = {k, n}, cs[2] = {m, n};
    double *a = random_doubles(m * k, 240 + e), *b = random_doubles(k * n, 242 + e);
    double *z = calloc(m * n, sizeof *z);
    ocal_buffer A = upload(ctx, OCAL_F32, 2, as, a), B = upload(ctx, OCAL_F32, 2, bs, b), C;
    ck_assert_ocal(ocal_buffer_create(ctx, OCAL_F32, 2, cs, &C));
    float nan = NAN;
    ck_assert_ocal(ocal_buffer_fill(C, &nan));
    ck_assert_ocal(ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 0.5, A, B, 0.0, C));
    double *got = download(C, 0, m * n);
    double *ref = malloc(m * n * sizeof *ref), *bound = malloc(m * n * sizeof *bound);
    ref_gemm(0, 0, m, n, k, 0.5, a, b, 0.0, z, ref, bound);
    assert_close(got, ref, bound, m * n, k, OCAL_F32, "own kernel, beta 0 over NaN");
    free(a), free(b), free(z), free(got), free(ref), free(bound);
    ocal_buffer_release(A), ocal_buffer_release(B), ocal_buffer_release(C);
  }

  /* Batched with a shared 2-D A, and a batched f64 product. */
  for (int d = 0; d < 1 + fp64; d++) {
    ocal_dtype dt = d ? OCAL_F64 : OCAL_F32;
    size_t batch = 3, m = 20, n = 12, k = 9;
    size_t as[2] = {k, m}, bs[3] = {batch, k, n}, cs[3] = {batch, m, n};
    double *a = random_doubles(m * k, 250), *b = random_doubles(batch * k * n, 251);
    double *c = random_doubles(batch * m * n, 252);
    ocal_buffer A = upload(ctx, dt, 2, as, a), B = upload(ctx, dt, 3, bs, b);
    ocal_buffer C = upload(ctx, dt, 3, cs, c);
    ck_assert_ocal(ocal_gemm(OCAL_TRANS, OCAL_NO_TRANS, 0.75, A, B, -0.5, C));
    double *got = download(C, 0, batch * m * n);
    for (size_t e = 0; e < batch; e++) {
      double r[20 * 12], bd[20 * 12];
      ref_gemm(1, 0, m, n, k, 0.75, a, b + e * k * n, -0.5, c + e * m * n, r, bd);
      assert_close(got + e * m * n, r, bd, m * n, k, dt, "own kernel, batched, shared A");
    }
    free(got), free(a), free(b), free(c);
    ocal_buffer_release(A), ocal_buffer_release(B), ocal_buffer_release(C);
  }

  /* CLBlast with A transposed by ocal first, forced, through the indirect kernel. */
  NEEDS_CLBLAST();
  setenv("OCAL_GEMM", "clblast", 1);
  setenv("OCAL_GEMM_PRETRANSPOSE", "1", 1);
  fixture_reopen();
  ctx = fixture_ctx;
  char params[1024];
  cpu_params(1, params, sizeof params);
  ck_assert_ocal(ocal_blas_tuning_apply(ctx, OCAL_F32, params));
  for (int t = 0; t < 4; t++) {
    check_gemm(ctx, OCAL_F32, t & 1, t >> 1, 33, 17, 65, 260 + t);
    check_gemm(ctx, OCAL_F32, t & 1, t >> 1, 64, 64, 64, 264 + t);
  }
  unsetenv("OCAL_GEMM_PRETRANSPOSE");
  unsetenv("OCAL_GEMM");
}
END_TEST

/* ---- split-K (src/blas/splitk.c) ------------------------------------------------------ */

/* OCAL_GEMM_SPLITK=N forces N slices: odd shapes (k not a multiple of N, so the remainder
 * call runs too), every transpose combination, alpha and beta, f32 and f64. */
START_TEST(test_gemm_splitk_forced) {
  NEEDS_CLBLAST();
  static const size_t sk[][3] = {{7, 13, 5}, {33, 17, 65}, {1000, 1, 1000}, {20, 24, 64},
                                 {1, 1, 1}};
  int fp64;
  ck_assert_ocal(ocal_context_get_fp64(fixture_ctx, &fp64));
  setenv("OCAL_GEMM_SPLITK", "3", 1);
  fixture_reopen();
  ck_assert_uint_eq(ocal__gemm_splitk_slices(fixture_ctx, OCAL_F32, 33, 17, 65), 3);
  ck_assert_uint_eq(ocal__gemm_splitk_slices(fixture_ctx, OCAL_F32, 1, 1, 1), 0);
  for (size_t s = 0; s < sizeof sk / sizeof sk[0]; s++)
    for (int t = 0; t < 4; t++) {
      check_gemm(fixture_ctx, OCAL_F32, t & 1, t >> 1, sk[s][0], sk[s][1], sk[s][2], 70 + t);
      if (fp64 && s < 2)
        check_gemm(fixture_ctx, OCAL_F64, t & 1, t >> 1, sk[s][0], sk[s][1], sk[s][2], 80 + t);
    }
  /* Slices through the indirect kernel (padding and transposition kernels per slice). */
  char params[1024];
  cpu_params(1, params, sizeof params);
  ck_assert_ocal(ocal_blas_tuning_apply(fixture_ctx, OCAL_F32, params));
  setenv("OCAL_GEMM_SPLITK", "4", 1);
  fixture_reopen();
  for (int t = 0; t < 4; t++) {
    check_gemm(fixture_ctx, OCAL_F32, t & 1, t >> 1, 33, 17, 65, 90 + t);
    check_gemm(fixture_ctx, OCAL_F32, t & 1, t >> 1, 64, 64, 128, 95 + t);
  }
  setenv("OCAL_GEMM_SPLITK", "0", 1);
  fixture_reopen();
  ck_assert_uint_eq(ocal__gemm_splitk_slices(fixture_ctx, OCAL_F32, 33, 17, 65), 0);
}
END_TEST

/* The automatic rule: a small output with a long k splits (with a known parameter set),
 * a large output or a short k does not, OCAL_GEMM_SPLITK=0 turns it off; the split
 * product is right. */
START_TEST(test_gemm_splitk_auto) {
  NEEDS_CLBLAST();
  unsetenv("OCAL_GEMM_SPLITK");
  char params[1024];
  cpu_params(1, params, sizeof params);
  ck_assert_ocal(ocal_blas_tuning_apply(fixture_ctx, OCAL_F32, params));
  ocal_device_info info = {sizeof info};
  ck_assert_ocal(ocal_context_get_device_info(fixture_ctx, &info));
  /* 32 x 32 tiles: one tile, k long enough for at least two slices of 256. */
  size_t s = ocal__gemm_splitk_slices(fixture_ctx, OCAL_F32, 32, 32, 2048);
  ck_assert_uint_ge(s, 2);
  ck_assert_uint_eq(2048 % s, 0);
  ck_assert_uint_eq(ocal__gemm_splitk_slices(fixture_ctx, OCAL_F32, 32, 32, 300), 0);
  size_t big = 32 * (size_t)info.compute_units * 4;
  ck_assert_uint_eq(ocal__gemm_splitk_slices(fixture_ctx, OCAL_F32, big, big, 4096), 0);
  check_gemm(fixture_ctx, OCAL_F32, 0, 1, 32, 32, 2048, 101);
  setenv("OCAL_GEMM_SPLITK", "0", 1);
  fixture_reopen();
  ck_assert_uint_eq(ocal__gemm_splitk_slices(fixture_ctx, OCAL_F32, 32, 32, 2048), 0);
  /* Below the switch point the plain call runs the direct kernel: no split. */
  unsetenv("OCAL_GEMM_SPLITK");
  fixture_reopen();
  cpu_params(512, params, sizeof params);
  ck_assert_ocal(ocal_blas_tuning_apply(fixture_ctx, OCAL_F32, params));
  ck_assert_uint_eq(ocal__gemm_splitk_slices(fixture_ctx, OCAL_F32, 32, 32, 2048), 0);
}
END_TEST

/* Views in and out (neighbours untouched), beta = 0 over NaNs in C, and batched products,
 * which split-K leaves to CLBlast's batched call, all with split-K forced. */
START_TEST(test_gemm_splitk_views_nan_batched) {
  setenv("OCAL_GEMM_SPLITK", "2", 1);
  fixture_reopen();
  ocal_context ctx = fixture_ctx;
  size_t m = 9, n = 6, k = 11, pad = 4;
  size_t big_a[2] = {k + pad, m}, big_b[2] = {n + pad, k}, big_c[2] = {m + 2 * pad, n};
  double *a = random_doubles(big_a[0] * m, 5), *b = random_doubles(big_b[0] * k, 6);
  double *c = random_doubles(big_c[0] * n, 7);
  ocal_buffer A = upload(ctx, OCAL_F32, 2, big_a, a), B = upload(ctx, OCAL_F32, 2, big_b, b);
  ocal_buffer C = upload(ctx, OCAL_F32, 2, big_c, c);
  size_t va[2] = {k, m}, vb[2] = {n, k}, vc[2] = {m, n};
  ocal_buffer Av, Bv, Cv;
  ck_assert_ocal(ocal_buffer_view(A, pad * m, 2, va, &Av));
  ck_assert_ocal(ocal_buffer_view(B, pad * k, 2, vb, &Bv));
  ck_assert_ocal(ocal_buffer_view(C, pad * n, 2, vc, &Cv));
  ck_assert_ocal(ocal_gemm(OCAL_TRANS, OCAL_TRANS, -2.0, Av, Bv, 0.5, Cv));
  double *got = download(C, 0, big_c[0] * n);
  double ref[9 * 6], bound[9 * 6];
  ref_gemm(1, 1, m, n, k, -2.0, a + pad * m, b + pad * k, 0.5, c + pad * n, ref, bound);
  assert_close(got + pad * n, ref, bound, m * n, k, OCAL_F32, "split-K gemm on views");
  for (size_t i = 0; i < pad * n; i++) {
    ck_assert_msg(got[i] == c[i], "element %zu before the view changed", i);
    ck_assert_msg(got[(pad + m) * n + i] == c[(pad + m) * n + i],
                  "element %zu after the view changed", i);
  }
  free(got);
  /* beta = 0: NaNs in C must not survive. */
  float nan = NAN;
  ck_assert_ocal(ocal_buffer_fill(Cv, &nan));
  ck_assert_ocal(ocal_gemm(OCAL_TRANS, OCAL_TRANS, 1.0, Av, Bv, 0.0, Cv));
  got = download(Cv, 0, m * n);
  double zero[9 * 6] = {0};
  ref_gemm(1, 1, m, n, k, 1.0, a + pad * m, b + pad * k, 0.0, zero, ref, bound);
  assert_close(got, ref, bound, m * n, k, OCAL_F32, "split-K gemm, beta 0 over NaN");
  free(got);
  ocal_buffer_release(Av), ocal_buffer_release(Bv), ocal_buffer_release(Cv);
  ocal_buffer_release(A), ocal_buffer_release(B), ocal_buffer_release(C);
  free(a), free(b), free(c);

  size_t batch = 3, bm = 5, bn = 7, bk = 8;
  size_t as[3] = {batch, bm, bk}, bs[3] = {batch, bk, bn}, cs[3] = {batch, bm, bn};
  a = random_doubles(batch * bm * bk, 8), b = random_doubles(batch * bk * bn, 9);
  c = random_doubles(batch * bm * bn, 10);
  A = upload(ctx, OCAL_F32, 3, as, a), B = upload(ctx, OCAL_F32, 3, bs, b);
  C = upload(ctx, OCAL_F32, 3, cs, c);
  ck_assert_ocal(ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1.5, A, B, -1.0, C));
  got = download(C, 0, batch * bm * bn);
  for (size_t e = 0; e < batch; e++) {
    double r[5 * 7], bd[5 * 7];
    ref_gemm(0, 0, bm, bn, bk, 1.5, a + e * bm * bk, b + e * bk * bn, -1.0, c + e * bm * bn,
             r, bd);
    assert_close(got + e * bm * bn, r, bd, bm * bn, bk, OCAL_F32, "batched with split-K on");
  }
  free(got), free(a), free(b), free(c);
  ocal_buffer_release(A), ocal_buffer_release(B), ocal_buffer_release(C);
}
END_TEST

/* ---- GEMV and BLAS-1 ------------------------------------------------------------------ */

static void check_vector_calls(ocal_context ctx, ocal_dtype dt) {
  size_t rows = 37, cols = 23, n = 1001, pad = 3;
  /* gemv in both orientations; x a view into a larger buffer. */
  for (int ta = 0; ta < 2; ta++) {
    size_t as[2] = {rows, cols}, xn = (ta ? rows : cols) + pad, yn = ta ? cols : rows;
    double *a = random_doubles(rows * cols, 50 + ta), *x = random_doubles(xn, 60 + ta);
    double *y = random_doubles(yn, 70 + ta);
    ocal_buffer A = upload(ctx, dt, 2, as, a), X = upload(ctx, dt, 1, &xn, x);
    ocal_buffer Y = upload(ctx, dt, 1, &yn, y), Xv;
    size_t vn = xn - pad;
    ck_assert_ocal(ocal_buffer_view(X, pad, 1, &vn, &Xv));
    ck_assert_ocal(ocal_gemv(ta ? OCAL_TRANS : OCAL_NO_TRANS, 0.5, A, Xv, -2.0, Y));
    double *got = download(Y, 0, yn), ref[64], bound[64];
    /* y = op(A) x as a GEMM with n = 1. */
    ref_gemm(ta, 0, yn, 1, vn, 0.5, a, x + pad, -2.0, y, ref, bound);
    assert_close(got, ref, bound, yn, vn, dt, ta ? "gemv T" : "gemv N");
    free(got), free(a), free(x), free(y);
    ocal_buffer_release(Xv), ocal_buffer_release(A), ocal_buffer_release(X);
    ocal_buffer_release(Y);
  }
  double *x = random_doubles(n, 80), *y = random_doubles(n, 81);
  size_t shape2[2] = {7, 143}, one = 1;
  ocal_buffer X = upload(ctx, dt, 2, shape2, x), Y = upload(ctx, dt, 1, &n, y), R;
  ck_assert_ocal(ocal_buffer_create(ctx, dt, 1, &one, &R));
  double dot = 0, dmag = 0, nrm = 0;
  for (size_t i = 0; i < n; i++) {
    dot += x[i] * y[i];
    dmag += fabs(x[i] * y[i]);
    nrm += x[i] * x[i];
  }
  nrm = sqrt(nrm);
  /* BLAS-1 is ocal's own (ocal_dot, ocal_norm2, ocal_axpy, ocal_scale): here on vectors of
   * different shapes with as many elements, as BLAS callers pass them. */
  ck_assert_ocal(ocal_dot(X, Y, OCAL_AXIS_ALL, R));
  double *got = download(R, 0, 1);
  assert_close(got, &dot, &dmag, 1, n, dt, "dot");
  free(got);
  ck_assert_ocal(ocal_norm2(X, OCAL_AXIS_ALL, R));
  got = download(R, 0, 1);
  assert_close(got, &nrm, &nrm, 1, n, dt, "nrm2");
  free(got);
  ck_assert_ocal(ocal_axpy(-0.5, X, Y));
  got = download(Y, 0, n);
  for (size_t i = 0; i < n; i++) {
    double ref = y[i] - 0.5 * x[i], b = fabs(y[i]) + fabs(0.5 * x[i]);
    assert_close(got + i, &ref, &b, 1, 1, dt, "axpy");
  }
  free(got);
  ck_assert_ocal(ocal_scale(3.0, X));
  got = download(X, 0, n);
  for (size_t i = 0; i < n; i++) {
    double ref = 3.0 * x[i], b = fabs(ref);
    assert_close(got + i, &ref, &b, 1, 1, dt, "scal");
  }
  free(got);
  /* Empty vectors: dot and nrm2 write 0, the others do nothing. */
  size_t zero = 0;
  ocal_buffer E;
  ck_assert_ocal(ocal_buffer_create(ctx, dt, 1, &zero, &E));
  ck_assert_ocal(ocal_dot(E, E, OCAL_AXIS_ALL, R));
  got = download(R, 0, 1);
  ck_assert(got[0] == 0.0);
  free(got);
  ck_assert_ocal(ocal_axpy(1.0, E, E));
  ck_assert_ocal(ocal_scale(2.0, E));
  ocal_buffer_release(E), ocal_buffer_release(X), ocal_buffer_release(Y);
  ocal_buffer_release(R);
  free(x), free(y);
}

/* ocal's GEMV kernels (src/blas/gemv.c): 4-wide and scalar paths (cols and x's offset
 * multiples of 4 or not), tall and wide shapes, both orientations, f32 and f64, beta = 0
 * over NaNs in y; OCAL_GEMV=clblast gives the same answers through CLBlast. */
static void check_gemv_one(ocal_context ctx, ocal_dtype dt, int ta, size_t rows, size_t cols,
                           size_t pad, double beta, uint64_t seed) {
  size_t as[2] = {rows, cols}, vn = ta ? rows : cols, xn = vn + pad, yn = ta ? cols : rows;
  double *a = random_doubles(rows * cols, seed), *x = random_doubles(xn, seed + 1);
  double *y = random_doubles(yn, seed + 2);
  if (beta == 0.0)
    for (size_t i = 0; i < yn; i++) y[i] = NAN;
  ocal_buffer A = upload(ctx, dt, 2, as, a), X = upload(ctx, dt, 1, &xn, x);
  ocal_buffer Y = upload(ctx, dt, 1, &yn, y), Xv;
  ck_assert_ocal(ocal_buffer_view(X, pad, 1, &vn, &Xv));
  ck_assert_ocal(ocal_gemv(ta ? OCAL_TRANS : OCAL_NO_TRANS, -1.5, A, Xv, beta, Y));
  double *got = download(Y, 0, yn);
  double *ref = malloc(yn * sizeof *ref), *bound = malloc(yn * sizeof *bound);
  double *y0 = malloc(yn * sizeof *y0);
  for (size_t i = 0; i < yn; i++) y0[i] = beta == 0.0 ? 0.0 : y[i];
  ref_gemm(ta, 0, yn, 1, vn, -1.5, a, x + pad, beta, y0, ref, bound);
  char what[96];
  snprintf(what, sizeof what, "%s gemv %c %zux%zu pad %zu beta %g%s", ocal_dtype_name(dt),
           ta ? 'T' : 'N', rows, cols, pad, beta, getenv("OCAL_GEMV") ? " (CLBlast)" : "");
  assert_close(got, ref, bound, yn, vn, dt, what);
  free(got), free(ref), free(bound), free(y0), free(a), free(x), free(y);
  ocal_buffer_release(Xv), ocal_buffer_release(A), ocal_buffer_release(X);
  ocal_buffer_release(Y);
}

START_TEST(test_gemv_own_kernels) {
  static const size_t sh[][3] = {{37, 23, 3}, {40, 64, 4}, {40, 64, 1}, {3, 1000, 0},
                                 {1000, 3, 0}, {1, 1, 0}, {300, 700, 8}};
  int fp64;
  ck_assert_ocal(ocal_context_get_fp64(fixture_ctx, &fp64));
  for (int pass = 0; pass < 2; pass++) {
    if (pass) {
      NEEDS_CLBLAST();
      setenv("OCAL_GEMV", "clblast", 1);
      fixture_reopen();
    }
    for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++)
      for (int ta = 0; ta < 2; ta++) {
        check_gemv_one(fixture_ctx, OCAL_F32, ta, sh[i][0], sh[i][1], sh[i][2],
                       i % 2 ? 0.0 : 0.25, 200 + 10 * i + ta);
        if (fp64 && !pass)
          check_gemv_one(fixture_ctx, OCAL_F64, ta, sh[i][0], sh[i][1], sh[i][2],
                         i % 2 ? 0.25 : 0.0, 300 + 10 * i + ta);
      }
  }
}
END_TEST

START_TEST(test_gemv_and_blas1) {
  check_vector_calls(fixture_ctx, OCAL_F32);
  int fp64;
  ck_assert_ocal(ocal_context_get_fp64(fixture_ctx, &fp64));
  if (fp64) check_vector_calls(fixture_ctx, OCAL_F64);
}
END_TEST

/* ---- errors --------------------------------------------------------------------------- */

static void assert_message_has(const char *needle) {
  ck_assert_msg(strstr(ocal_last_error(), needle) != NULL, "message lacks \"%s\": %s", needle,
                ocal_last_error());
}

START_TEST(test_errors_name_the_shapes) {
  ocal_context ctx = fixture_ctx;
  size_t s23[2] = {2, 3}, s43[2] = {4, 3}, s24[2] = {2, 4}, s3[1] = {3}, s5[1] = {5};
  size_t s1234[4] = {1, 2, 3, 4}, one = 1, two = 2;
  ocal_buffer a, b, c, d, i32, v3, v5, r, r2, big4;
  ck_assert_ocal(ocal_buffer_zeros(ctx, OCAL_F32, 2, s23, &a));
  ck_assert_ocal(ocal_buffer_zeros(ctx, OCAL_F32, 2, s43, &b));
  ck_assert_ocal(ocal_buffer_zeros(ctx, OCAL_F32, 2, s24, &c));
  ck_assert_ocal(ocal_buffer_zeros(ctx, OCAL_F32, 2, s23, &d));
  ck_assert_ocal(ocal_buffer_zeros(ctx, OCAL_I32, 2, s23, &i32));
  ck_assert_ocal(ocal_buffer_zeros(ctx, OCAL_F32, 1, s3, &v3));
  ck_assert_ocal(ocal_buffer_zeros(ctx, OCAL_F32, 1, s5, &v5));
  ck_assert_ocal(ocal_buffer_zeros(ctx, OCAL_F32, 1, &one, &r));
  ck_assert_ocal(ocal_buffer_zeros(ctx, OCAL_F32, 1, &two, &r2));
  ck_assert_ocal(ocal_buffer_zeros(ctx, OCAL_F32, 4, s1234, &big4));

  /* a {2,3} x b {4,3}: inner dimensions 3 and 4 differ; with b transposed it fits. */
  ck_assert_ocal_fails(ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1, a, b, 0, c),
                       OCAL_SHAPE_MISMATCH);
  assert_message_has("inner dimensions differ");
  assert_message_has("{2, 3}");
  assert_message_has("{4, 3}");
  assert_message_has("{2, 4}");
  ck_assert_ocal(ocal_gemm(OCAL_NO_TRANS, OCAL_TRANS, 1, a, b, 0, c));
  ck_assert_ocal_fails(ocal_gemm(OCAL_NO_TRANS, OCAL_TRANS, 1, a, b, 0, d), OCAL_SHAPE_MISMATCH);
  assert_message_has("columns of op(b) and c differ");
  ck_assert_ocal_fails(ocal_gemm(OCAL_TRANS, OCAL_TRANS, 1, a, b, 0, c), OCAL_SHAPE_MISMATCH);
  ck_assert_ocal_fails(ocal_gemm(OCAL_NO_TRANS, OCAL_TRANS, 1, a, b, 0, big4),
                       OCAL_SHAPE_MISMATCH);
  assert_message_has("{1, 2, 3, 4}");
  ck_assert_ocal_fails(ocal_gemm(OCAL_NO_TRANS, OCAL_TRANS, 1, i32, b, 0, c), OCAL_UNSUPPORTED);
  /* the message lists the types ocal_gemm itself takes */
  assert_message_has("takes f32, f64, f16 or bf16");
  ck_assert_ocal_fails(ocal_gemm(OCAL_NO_TRANS, OCAL_TRANS, 1, a, b, 0, i32),
                       OCAL_TYPE_MISMATCH);
  assert_message_has("i32");
  ck_assert_ocal_fails(ocal_gemm(OCAL_NO_TRANS, OCAL_TRANS, 1, a, NULL, 0, c),
                       OCAL_INVALID_HANDLE);
  ck_assert_ocal_fails(ocal_gemm((ocal_transpose)7, OCAL_TRANS, 1, a, b, 0, c),
                       OCAL_INVALID_ARGUMENT);
  /* C may not overlap an input. */
  size_t s22[2] = {2, 2}, s32[2] = {3, 2};
  ocal_buffer sq, sqv, x32;
  ck_assert_ocal(ocal_buffer_zeros(ctx, OCAL_F32, 2, s32, &x32));
  ck_assert_ocal(ocal_buffer_view(a, 0, 2, s22, &sqv));
  ck_assert_ocal(ocal_buffer_view(a, 2, 2, s22, &sq)); /* overlaps sqv */
  ck_assert_ocal_fails(ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1, sqv, sqv, 0, sq),
                       OCAL_INVALID_ARGUMENT);
  assert_message_has("overlaps");
  /* Batch sizes must agree. */
  size_t b3[3] = {3, 2, 3}, b2[3] = {2, 3, 2}, bc[3] = {3, 2, 2};
  ocal_buffer A3, B3, C3;
  ck_assert_ocal(ocal_buffer_zeros(ctx, OCAL_F32, 3, b3, &A3));
  ck_assert_ocal(ocal_buffer_zeros(ctx, OCAL_F32, 3, b2, &B3));
  ck_assert_ocal(ocal_buffer_zeros(ctx, OCAL_F32, 3, bc, &C3));
  ck_assert_ocal_fails(ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1, A3, B3, 0, C3),
                       OCAL_SHAPE_MISMATCH);
  assert_message_has("batch sizes differ");
  assert_message_has("a is {3, 2, 3}, b is {2, 3, 2}, c is {3, 2, 2}");
  ck_assert_ocal(ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1, A3, x32, 0, C3));

  /* gemv, and the BLAS-1 operations of ocal/ops.h and ocal/reduce.h. */
  ck_assert_ocal_fails(ocal_gemv(OCAL_NO_TRANS, 1, a, v5, 0, r2), OCAL_SHAPE_MISMATCH);
  assert_message_has("x must have 3 elements");
  assert_message_has("(x is {5})");
  assert_message_has("(y is {2})");
  ck_assert_ocal(ocal_gemv(OCAL_NO_TRANS, 1, a, v3, 0, r2));
  ck_assert_ocal_fails(ocal_gemv(OCAL_NO_TRANS, 1, v3, v3, 0, r2), OCAL_SHAPE_MISMATCH);
  ck_assert_ocal_fails(ocal_dot(v3, v5, OCAL_AXIS_ALL, r), OCAL_SHAPE_MISMATCH);
  ck_assert_ocal_fails(ocal_dot(v3, v3, OCAL_AXIS_ALL, r2), OCAL_SHAPE_MISMATCH);
  ck_assert_ocal_fails(ocal_axpy(1, v3, v5), OCAL_SHAPE_MISMATCH);
  ck_assert_ocal_fails(ocal_scale(1, NULL), OCAL_INVALID_HANDLE);

  /* Engine settings the library does not know are refused when the context is created (it
   * reads them once), not taken for "auto"; known ones (any case) are taken, and a context
   * that exists already is not affected. Every variable: tests/check_settings.c. */
  static const struct {
    const char *name, *bad, *good;
  } settings[] = {{"OCAL_GEMM", "clbast", "CLBlast"},
                  {"OCAL_GEMM_PRETRANSPOSE", "maybe", "auto"},
                  {"OCAL_GEMV", "mine", "ocal"},
                  {"OCAL_GEMM_SPLITK", "four", "4"},
                  {"OCAL_GEMM_SPLITK", "-2", "off"}};
  for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
    ocal_context fresh = NULL;
    setenv(settings[i].name, settings[i].bad, 1);
    ck_assert_ocal_fails(ocal_context_create(NULL, &fresh), OCAL_INVALID_ARGUMENT);
    assert_message_has(settings[i].name);
    assert_message_has(settings[i].bad);
    ck_assert_ocal(ocal_gemm(OCAL_NO_TRANS, OCAL_TRANS, 1, a, b, 0, c));
    setenv(settings[i].name, settings[i].good, 1);
    ck_assert_ocal(ocal_context_create(NULL, &fresh));
    ck_assert_ocal(ocal_context_release(fresh));
    ck_assert_ocal(ocal_gemv(OCAL_NO_TRANS, 1, a, v3, 0, r2));
    unsetenv(settings[i].name);
  }

  /* Operands of two contexts. */
  ocal_context other;
  ck_assert_ocal(ocal_context_create(NULL, &other));
  ocal_buffer o3;
  ck_assert_ocal(ocal_buffer_zeros(other, OCAL_F32, 1, s3, &o3));
  ck_assert_ocal_fails(ocal_gemv(OCAL_NO_TRANS, 1, a, o3, 0, r2), OCAL_INVALID_ARGUMENT);
  assert_message_has("different contexts");
  ocal_buffer_release(o3);
  ocal_context_release(other);

  /* f64 where double precision is turned off. */
  ocal_context_options opt;
  ocal_context_options_init(&opt);
  opt.fp64 = 0;
  ocal_context nofp64;
  ck_assert_ocal(ocal_context_create(&opt, &nofp64));
  ocal_blas_tuning info = {sizeof info};
  ck_assert_ocal_fails(ocal_blas_get_tuning(nofp64, OCAL_F64, &info), OCAL_UNSUPPORTED);
  ck_assert_ocal_fails(ocal_blas_get_tuning(nofp64, OCAL_I32, &info), OCAL_UNSUPPORTED);
  ocal_context_release(nofp64);

  ocal_buffer all[] = {a, b, c, d, i32, v3, v5, r, r2, big4, sq, sqv, x32, A3, B3, C3};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) ocal_buffer_release(all[i]);
}
END_TEST

/* ocal's GEMM kernel on a device with less local memory than its tiles need (1 KiB through
 * the limits option, OCAL_GEMM naming the engine so that nothing falls back): OCAL_UNSUPPORTED
 * from ocal_gemm, naming it and the local memory. */
START_TEST(test_gemm_small_local_memory) {
  setenv("OCAL_GEMM", "ocal", 1);
  ocal_context_options o;
  ocal_context_options_init(&o);
  o.limits = "local_mem=1k";
  ocal_context small = NULL;
  ck_assert_ocal(ocal_context_create(&o, &small));
  unsetenv("OCAL_GEMM");
  size_t sq[2] = {67, 67};
  ocal_buffer a, c;
  ck_assert_ocal(ocal_buffer_zeros(small, OCAL_F32, 2, sq, &a));
  ck_assert_ocal(ocal_buffer_zeros(small, OCAL_F32, 2, sq, &c));
  ck_assert_ocal_fails(ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1, a, a, 0, c), OCAL_UNSUPPORTED);
  ck_assert_msg(strncmp(ocal_last_error(), "ocal_gemm: ", 11) == 0 &&
                    strstr(ocal_last_error(), "local memory"),
                "message: %s", ocal_last_error());
  ocal_buffer_release(a);
  ocal_buffer_release(c);
  ocal_context_release(small);
}
END_TEST

/* CLBlast's temporary buffers for an enormous batched product cannot be allocated: the call
 * must fail with a status and a message, and the context must go on working (CLBlast 1.5.3
 * would end the process: ocal refuses such products before calling it). The switch point of 1 sends the product to the indirect path, which pads every
 * batch entry of the shared 1 x 65536 A into its own temporary matrix (hundreds of GB). */
START_TEST(test_clblast_failure_leaves_context_usable) {
  NEEDS_CLBLAST();
  ocal_context ctx = fixture_ctx;
  char params[1024];
  cpu_params(1, params, sizeof params);
  ck_assert_ocal(ocal_blas_tuning_apply(ctx, OCAL_F32, params));
  size_t k = 65536, batch = 65536, as[2] = {1, k}, bs[2] = {k, 1}, cs[3] = {batch, 1, 1};
  ocal_buffer A, B, C;
  ck_assert_ocal(ocal_buffer_zeros(ctx, OCAL_F32, 2, as, &A));
  ck_assert_ocal(ocal_buffer_zeros(ctx, OCAL_F32, 2, bs, &B));
  ck_assert_ocal(ocal_buffer_zeros(ctx, OCAL_F32, 3, cs, &C));
  ocal_status s = ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1, A, B, 0, C);
  ck_assert_msg(s == OCAL_OUT_OF_DEVICE_MEMORY, "enormous batched gemm returned %s: %s",
                ocal_status_name(s), ocal_last_error());
  assert_message_has("CLBlast");
  assert_message_has("temporary buffers");
  assert_message_has("1x1x65536 (batched)");
  ocal_buffer_release(A), ocal_buffer_release(B), ocal_buffer_release(C);
  check_gemm(ctx, OCAL_F32, 1, 0, 33, 17, 65, 7);
  ck_assert_ocal(ocal_context_finish(ctx));
}
END_TEST

/* Several threads make the process's first CLBlast calls at the same moment (each test runs
 * in a fresh process, before any other CLBlast call). CLBlast fills its parameter database
 * on first use without a lock; ocal makes those first calls one at a time (OCAL__CLBLAST).
 * ThreadSanitizer saw the race in tests/tsan/stress; here the results must be right and
 * AddressSanitizer (CI's sanitizer build) must see no double free. */
enum { FIRST_THREADS = 6 };
static pthread_barrier_t first_barrier;
typedef struct {
  int seed, ok;
  char message[256];
} first_job;

static void *first_gemm(void *arg) {
  first_job *j = arg;
  enum { M = 19, K = 23, N = 17 };
  float a[M * K], b[K * N], c[M * N];
  for (int i = 0; i < M * K; i++) a[i] = (float)((i * 7 + j->seed) % 11) - 5.0f;
  for (int i = 0; i < K * N; i++) b[i] = (float)((i * 3 + j->seed) % 13) - 6.0f;
  ocal_buffer A = NULL, B = NULL, C = NULL;
  ocal_status s = ocal_buffer_from_host(fixture_ctx, OCAL_F32, 2, (size_t[]){M, K}, a, &A);
  if (s == OCAL_OK) s = ocal_buffer_from_host(fixture_ctx, OCAL_F32, 2, (size_t[]){K, N}, b, &B);
  if (s == OCAL_OK) s = ocal_buffer_zeros(fixture_ctx, OCAL_F32, 2, (size_t[]){M, N}, &C);
  pthread_barrier_wait(&first_barrier);
  if (s == OCAL_OK) s = ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1.0, A, B, 0.0, C);
  if (s == OCAL_OK) s = ocal_buffer_read(C, 0, M * N, c, NULL);
  j->ok = s == OCAL_OK;
  if (!j->ok) snprintf(j->message, sizeof j->message, "%s", ocal_last_error());
  for (int i = 0; j->ok && i < M; i++)
    for (int n = 0; n < N; n++) {
      double want = 0; /* small integers: exact in f32 */
      for (int k = 0; k < K; k++) want += (double)a[i * K + k] * b[k * N + n];
      if (c[i * N + n] != (float)want) {
        j->ok = 0;
        snprintf(j->message, sizeof j->message, "C[%d][%d] = %g, want %g", i, n, c[i * N + n],
                 want);
        break;
      }
    }
  ocal_buffer_release(A), ocal_buffer_release(B), ocal_buffer_release(C);
  return NULL;
}

START_TEST(test_first_clblast_calls_from_threads) {
  NEEDS_CLBLAST();
  setenv("OCAL_GEMM", "clblast", 1);
  fixture_reopen();
  pthread_t t[FIRST_THREADS];
  first_job jobs[FIRST_THREADS];
  ck_assert_int_eq(pthread_barrier_init(&first_barrier, NULL, FIRST_THREADS), 0);
  for (int i = 0; i < FIRST_THREADS; i++) {
    jobs[i] = (first_job){.seed = i};
    ck_assert_int_eq(pthread_create(&t[i], NULL, first_gemm, &jobs[i]), 0);
  }
  for (int i = 0; i < FIRST_THREADS; i++) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&first_barrier);
  unsetenv("OCAL_GEMM");
  for (int i = 0; i < FIRST_THREADS; i++)
    ck_assert_msg(jobs[i].ok, "thread %d: %s", i, jobs[i].message);
}
END_TEST

/* CLBlast compiles its kernels at the first product: where they do not build on the device,
 * ocal's own kernel computes the product unless OCAL_GEMM named CLBlast, which then fails
 * with CLBlast's build error. On PoCL a build failure of CLBlast's GEMM kernels alone is
 * made with POCL_EXTRA_BUILD_FLAGS (read at each build), which defines their kernel names
 * to a number; ocal's kernels do not use those names. */
START_TEST(test_gemm_falls_back_when_clblast_does_not_build) {
  NEEDS_CLBLAST();
  ocal_device_info info = {sizeof info};
  ck_assert_ocal(ocal_context_get_device_info(fixture_ctx, &info));
  if (!strstr(info.platform_name, "Portable Computing Language")) return;
  setenv("POCL_EXTRA_BUILD_FLAGS",
         "-DXgemm=1 -DXgemmDirectNN=1 -DXgemmDirectNT=1 -DXgemmDirectTN=1 -DXgemmDirectTT=1", 1);
  unsetenv("OCAL_GEMM");
  check_gemm(fixture_ctx, OCAL_F32, 0, 1, 37, 19, 23, 5);
  check_gemm(fixture_ctx, OCAL_F32, 1, 0, 64, 64, 64, 6);
  setenv("OCAL_GEMM", "clblast", 1);
  fixture_reopen();
  size_t as[2] = {5, 7}, bs[2] = {7, 3}, cs[2] = {5, 3};
  ocal_buffer A, B, C;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 2, as, &A));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 2, bs, &B));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 2, cs, &C));
  ocal_status st = ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1, A, B, 0, C);
  ck_assert_msg(st != OCAL_OK, "a CLBlast that cannot build its kernels computed a product");
  assert_message_has("CLBlast");
  ocal_buffer_release(A), ocal_buffer_release(B), ocal_buffer_release(C);
  unsetenv("OCAL_GEMM");
  unsetenv("POCL_EXTRA_BUILD_FLAGS");
}
END_TEST

/* ---- the engine rule (src/blas/rule.c) ------------------------------------------------ */

/* The choices at every shape the benches use (tools/bench's gemm suite: squares 256..8192
 * and the MLP's six shapes; bench/experiments/gemm_own's and bench/experiments/gemm_splitk's shapes), written down
 * from the rule as it was spread over blas.c, gemm_own.c and splitk.c before the engine
 * table (docs/blas-engines.md): the rule must give exactly these. */
typedef struct rule_case {
  ocal_dtype dtype;
  ocal_transpose ta;
  size_t m, n, k, batch;
  int engine;       /* ocal__gemm_engine_id */
  size_t slices;    /* split-K */
  int pretranspose; /* CLBlast */
} rule_case;

static void check_rule_cases(const ocal__blas_facts *f, const rule_case *cases, size_t n,
                             const char *what) {
  for (size_t i = 0; i < n; i++) {
    const rule_case *c = &cases[i];
    ocal__gemm_choice got =
        ocal__gemm_rule(f, c->dtype, c->ta, c->m, c->n, c->k, c->batch, 1);
    ck_assert_msg((int)got.engine == c->engine && got.slices == c->slices &&
                      got.pretranspose == c->pretranspose,
                  "%s: %s %zux%zux%zu (batch %zu, ta %d): engine %d, slices %zu, "
                  "pretranspose %d (%s); expected %d, %zu, %d",
                  what, ocal_dtype_name(c->dtype), c->m, c->n, c->k, c->batch, (int)c->ta,
                  (int)got.engine, got.slices, got.pretranspose, got.reason, c->engine,
                  c->slices, c->pretranspose);
    ck_assert_msg(got.reason && got.reason[0], "%s: case %zu has no reason", what, i);
  }
}

/* An NVIDIA H100 80GB HBM3 as ocal sees it: 132 compute units, a quarter of 80 GiB in one
 * allocation, the built-in Hopper parameter set (src/blas/builtin.c). */
static ocal__blas_facts h100_facts(void) {
  ocal__blas_facts f;
  memset(&f, 0, sizeof f);
  f.type = OCAL_DEVICE_GPU;
  f.compute_units = 132;
  f.max_alloc_bytes = (uint64_t)20 << 30;
  f.have_clblast = 1;
  f.gemm = OCAL__ENGINE_AUTO;
  f.splitk = -1;
  f.pretranspose = -1;
  f.gemv = OCAL__ENGINE_AUTO;
  f.params_known = 1;
  f.mwg = 64, f.nwg = 128, f.kwg = 32, f.min_indirect = 1536;
  return f;
}

#define OWN OCAL__GEMM_OWN
#define CLB OCAL__GEMM_CLBLAST
#define SPL OCAL__GEMM_SPLITK
#define N OCAL_NO_TRANS
#define T OCAL_TRANS

static const rule_case h100_cases[] = {
      /* ocal bench gemm: squares (ocal's kernel below 4096^3, then CLBlast on a transposed A) */
      {OCAL_F32, N, 256, 256, 256, 1, OWN, 0, 0},
      {OCAL_F32, N, 512, 512, 512, 1, OWN, 0, 0},
      {OCAL_F32, N, 1024, 1024, 1024, 1, OWN, 0, 0},
      {OCAL_F32, N, 2048, 2048, 2048, 1, OWN, 0, 0},
      {OCAL_F32, N, 4096, 4096, 4096, 1, CLB, 0, 1},
      {OCAL_F32, N, 8192, 8192, 8192, 1, CLB, 0, 1},
      /* the MLP 784-512-10 at batch 256 */
      {OCAL_F32, N, 256, 512, 784, 1, OWN, 0, 0},
      {OCAL_F32, N, 256, 10, 512, 1, OWN, 0, 0},
      {OCAL_F32, T, 784, 512, 256, 1, OWN, 0, 0},
      {OCAL_F32, T, 512, 10, 256, 1, OWN, 0, 0},
      {OCAL_F32, N, 256, 512, 10, 1, OWN, 0, 0},
      {OCAL_F32, N, 256, 784, 512, 1, OWN, 0, 0},
      /* bench/experiments/gemm_own and bench/experiments/gemm_splitk */
      {OCAL_F32, N, 1536, 1536, 1536, 1, OWN, 0, 0},
      {OCAL_F32, N, 1024, 1024, 4096, 1, OWN, 0, 0},
      {OCAL_F32, T, 1024, 1024, 1024, 1, OWN, 0, 0},
      {OCAL_F32, T, 4096, 4096, 4096, 1, CLB, 0, 0},
      /* what CLBlast still takes: f64 and batches */
      {OCAL_F64, N, 1024, 1024, 1024, 1, CLB, 0, 0},
      {OCAL_F64, N, 2048, 2048, 2048, 1, CLB, 0, 1},
      {OCAL_F64, N, 1024, 1024, 4096, 1, SPL, 4, 0},
      {OCAL_F64, T, 2048, 2048, 2048, 1, CLB, 0, 0},
      {OCAL_F32, N, 256, 256, 256, 8, CLB, 0, 0},
};

START_TEST(test_rule_h100_bench_shapes) {
  ocal__blas_facts f = h100_facts();
  check_rule_cases(&f, h100_cases, sizeof h100_cases / sizeof h100_cases[0], "H100");

  /* OCAL_GEMM=clblast: split-K where the output starves CLBlast's indirect kernel. */
  static const rule_case clblast[] = {
      {OCAL_F32, N, 1024, 1024, 4096, 1, SPL, 4, 0},
      {OCAL_F32, N, 1024, 1024, 1024, 1, CLB, 0, 0},
      {OCAL_F32, N, 2048, 2048, 2048, 1, CLB, 0, 1},
      {OCAL_F32, N, 256, 512, 784, 1, CLB, 0, 0},
  };
  f.gemm = OCAL__ENGINE_CLBLAST;
  check_rule_cases(&f, clblast, sizeof clblast / sizeof clblast[0], "H100, OCAL_GEMM=clblast");
  ocal__gemm_choice c = ocal__gemm_rule(&f, OCAL_F32, N, 512, 512, 512, 1, 1);
  ck_assert_str_eq(c.reason, "OCAL_GEMM=clblast: CLBlast");
  ck_assert_int_eq(c.named, 1);

  /* OCAL_GEMM_SPLITK=3 and =0, OCAL_GEMM_PRETRANSPOSE=0 */
  f.splitk = 3;
  c = ocal__gemm_rule(&f, OCAL_F32, N, 33, 17, 65, 1, 1);
  ck_assert_int_eq(c.engine, SPL);
  ck_assert_uint_eq(c.slices, 3);
  c = ocal__gemm_rule(&f, OCAL_F32, N, 33, 17, 65, 1, 0); /* offsets beyond CLBlast's int */
  ck_assert_int_eq(c.engine, CLB);
  f.splitk = 0;
  c = ocal__gemm_rule(&f, OCAL_F64, N, 1024, 1024, 4096, 1, 1);
  ck_assert_int_eq(c.engine, CLB);
  f.pretranspose = 0;
  c = ocal__gemm_rule(&f, OCAL_F32, N, 4096, 4096, 4096, 1, 1);
  ck_assert_int_eq(c.pretranspose, 0);

  /* The same device in a build without CLBlast: ocal's kernel for everything it can index. */
  f = h100_facts();
  f.have_clblast = 0;
  f.params_known = 0;
  c = ocal__gemm_rule(&f, OCAL_F32, N, 8192, 8192, 8192, 1, 1);
  ck_assert_int_eq(c.engine, OWN);
  ck_assert_str_eq(c.reason, "CLBlast missing: ocal's kernel");
  c = ocal__gemm_rule(&f, OCAL_F64, N, 3, 4, 5, 7, 1);
  ck_assert_int_eq(c.engine, OWN);
  c = ocal__gemm_rule(&f, OCAL_F32, N, (size_t)1 << 32, 1, 1, 1, 1);
  ck_assert_int_eq(c.engine, OCAL__GEMM_ENGINE_COUNT);
  f.gemm = OCAL__ENGINE_CLBLAST;
  c = ocal__gemm_rule(&f, OCAL_F32, N, 8, 8, 8, 1, 1);
  ck_assert_int_eq(c.engine, OCAL__GEMM_ENGINE_COUNT);
  ck_assert_ptr_nonnull(strstr(c.reason, "without CLBlast"));

  /* GEMV: ocal's kernels unless OCAL_GEMV names CLBlast. */
  f = h100_facts();
  const char *why;
  ck_assert_int_eq(ocal__gemv_rule(&f, &why), OCAL__GEMV_OWN);
  f.gemv = OCAL__ENGINE_CLBLAST;
  ck_assert_int_eq(ocal__gemv_rule(&f, &why), OCAL__GEMV_CLBLAST);
  f.have_clblast = 0;
  ck_assert_int_eq(ocal__gemv_rule(&f, &why), OCAL__GEMV_ENGINE_COUNT);
}
END_TEST

/* The PoCL device's own facts (a CPU): CLBlast for every bench shape, as before (CLBlast's
 * defaults: no parameter set known, so no split and no pre-transposition), or ocal's kernel
 * in a build without CLBlast. */
START_TEST(test_rule_pocl_bench_shapes) {
  ocal__blas_facts f;
  ocal__blas_facts_of(fixture_ctx, OCAL_F32, &f);
  ocal_device_info info = {sizeof info};
  ck_assert_ocal(ocal_context_get_device_info(fixture_ctx, &info));
  ocal_blas_tuning tuning = {sizeof tuning};
  if (strcmp(info.name, "NVIDIA H100 80GB HBM3") == 0 && HAVE_CLBLAST &&
      ocal_blas_get_tuning(fixture_ctx, OCAL_F32, &tuning) == OCAL_OK &&
      tuning.source != OCAL_TUNING_BUILTIN)
    printf("check_blas: the H100's own facts: SKIPPED: its tuning is not the built-in set\n");
  else if (strcmp(info.name, "NVIDIA H100 80GB HBM3") == 0 && HAVE_CLBLAST) {
    /* On the H100 itself (the lead's GPU round): its real facts are the ones faked above
     * (under the built-in tuning and no OCAL_GEMM* in the environment), so the choices at
     * the bench shapes are the ones written down. */
    ocal__blas_facts h = h100_facts();
    ck_assert_int_eq(f.type, h.type);
    ck_assert_uint_eq(f.compute_units, h.compute_units);
    ck_assert_int_eq(f.params_known, 1);
    ck_assert_int_eq(f.mwg, h.mwg);
    ck_assert_int_eq(f.nwg, h.nwg);
    ck_assert_int_eq(f.kwg, h.kwg);
    ck_assert_int_eq(f.min_indirect, h.min_indirect);
    check_rule_cases(&f, h100_cases, sizeof h100_cases / sizeof h100_cases[0], "this H100");
    return;
  }
  if (info.type != OCAL_DEVICE_CPU) return; /* the facts below are a CPU's */
  f.params_known = 0;
  static const size_t rule_shapes[][4] = {{256, 256, 256, N}, {1024, 1024, 1024, N},
                                     {4096, 4096, 4096, N}, {8192, 8192, 8192, N},
                                     {256, 512, 784, N}, {256, 10, 512, N},
                                     {784, 512, 256, T}, {512, 10, 256, T},
                                     {256, 512, 10, N}, {256, 784, 512, N},
                                     {1024, 1024, 4096, N}};
  for (size_t i = 0; i < sizeof rule_shapes / sizeof rule_shapes[0]; i++) {
    ocal__gemm_choice c = ocal__gemm_rule(&f, OCAL_F32, (ocal_transpose)rule_shapes[i][3],
                                          rule_shapes[i][0], rule_shapes[i][1], rule_shapes[i][2], 1, 1);
    int want = f.have_clblast ? CLB : OWN;
    ck_assert_msg((int)c.engine == want && c.pretranspose == 0 && c.slices == 0,
                  "PoCL %zux%zux%zu: engine %d (%s), expected %d", rule_shapes[i][0], rule_shapes[i][1],
                  rule_shapes[i][2], (int)c.engine, c.reason, want);
    if (f.have_clblast) ck_assert_str_eq(c.reason, "not a GPU: CLBlast");
  }
  /* The public query says the same, and follows OCAL_GEMM (read at context creation). */
  const char *engine, *reason;
  ck_assert_ocal(ocal_gemm_engine_query(fixture_ctx, OCAL_F32, OCAL_NO_TRANS, 64, 64, 64, 1,
                                        &engine, &reason));
  ck_assert_str_eq(engine, f.have_clblast ? "CLBlast" : "ocal");
  ck_assert_str_eq(reason, f.have_clblast ? "not a GPU: CLBlast" : "CLBlast missing: ocal's kernel");
  setenv("OCAL_GEMM", "ocal", 1);
  fixture_reopen();
  ck_assert_ocal(ocal_gemm_engine_query(fixture_ctx, OCAL_F64, OCAL_TRANS, 5, 7, 9, 3, &engine,
                                        &reason));
  ck_assert_str_eq(engine, "ocal");
  ck_assert_str_eq(reason, "OCAL_GEMM=ocal: ocal's kernel");
  setenv("OCAL_GEMM", "clblast", 1);
  fixture_reopen();
  ocal_status st = ocal_gemm_engine_query(fixture_ctx, OCAL_F32, OCAL_NO_TRANS, 5, 7, 9, 1,
                                          &engine, &reason);
  if (f.have_clblast) {
    ck_assert_ocal(st);
    ck_assert_str_eq(engine, "CLBlast");
  } else {
    ck_assert_int_eq(st, OCAL_UNSUPPORTED);
    ck_assert_str_eq(engine, "none");
    ck_assert_ptr_nonnull(strstr(ocal_last_error(), "without CLBlast"));
  }
  unsetenv("OCAL_GEMM");
  ck_assert_ocal_fails(ocal_gemm_engine_query(fixture_ctx, OCAL_I32, OCAL_NO_TRANS, 5, 7, 9, 1,
                                              &engine, &reason),
                       OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_gemm_engine_query(fixture_ctx, OCAL_F32, OCAL_NO_TRANS, 0, 7, 9, 1,
                                              &engine, &reason),
                       OCAL_INVALID_ARGUMENT);
}
END_TEST

#undef OWN
#undef CLB
#undef SPL
#undef N
#undef T

/* ---- one rule for every type and device --------------------------------------------- */

/* Simulated devices: the facts the rule sees, and which of the tensor-core probe's checks
 * passed (bits by type: TF32, F16, BF16, F64), for mma.sync and for wgmma (no F64 there). */
enum { PROBE_TF32 = 1, PROBE_F16 = 2, PROBE_BF16 = 4, PROBE_F64 = 8, PROBE_ALL = 15 };
typedef enum { DEV_HOPPER, DEV_HOPPER_WG_NO_BF16, DEV_AMPERE, DEV_GPU_NO_TC, DEV_CPU } sim_device;

typedef struct rule_row {
  sim_device dev;
  int gemm;      /* OCAL_GEMM: OCAL__ENGINE_* */
  int precision; /* OCAL_GEMM_PRECISION_* */
  ocal_dtype dtype;
  ocal_transpose ta;
  size_t m, n, k, batch;
  int engine;   /* ocal__gemm_engine_id; OCAL__GEMM_ENGINE_COUNT: refused */
  int widen;    /* f16/bf16 converted to f32 around the engine */
  size_t slices;
  int pretranspose;
} rule_row;

static ocal__blas_facts sim_facts(sim_device dev, int gemm, int precision, unsigned *tc,
                                  unsigned *wg) {
  ocal__blas_facts f = h100_facts();
  f.gemm = gemm;
  f.precision = precision;
  *tc = *wg = 0;
  switch (dev) {
  case DEV_HOPPER: *tc = PROBE_ALL, *wg = PROBE_ALL; break;
  case DEV_HOPPER_WG_NO_BF16: *tc = PROBE_ALL, *wg = PROBE_TF32 | PROBE_F16; break;
  case DEV_AMPERE: *tc = PROBE_ALL, f.compute_units = 108; break;
  case DEV_GPU_NO_TC: break;
  case DEV_CPU:
    f.type = OCAL_DEVICE_CPU, f.compute_units = 4, f.params_known = 0;
    break;
  }
  return f;
}

/* The rule's answer on a simulated device (small offsets). */
static ocal__gemm_choice rule_of(const rule_row *r, int *widen) {
  unsigned tc, wg;
  ocal__blas_facts f = sim_facts(r->dev, r->gemm, r->precision, &tc, &wg);
  f.tc = (tc & PROBE_TF32) != 0;
  f.wgmma = f.tc && (wg & PROBE_TF32);
  f.tc_f16 = (tc & PROBE_F16) != 0;
  f.tc_bf16 = (tc & PROBE_BF16) != 0;
  f.wgmma_f16 = (wg & PROBE_F16) != 0;
  f.wgmma_bf16 = (wg & PROBE_BF16) != 0;
  f.tc_f64 = (tc & PROBE_F64) != 0;
  ocal__gemm_choice c = ocal__gemm_rule(&f, r->dtype, r->ta, r->m, r->n, r->k, r->batch, 1);
  *widen = c.widen;
  return c;
}

#define OWN OCAL__GEMM_OWN
#define CLB OCAL__GEMM_CLBLAST
#define SPL OCAL__GEMM_SPLITK
#define TC OCAL__GEMM_TC
#define WG OCAL__GEMM_WGMMA
#define DM OCAL__GEMM_DMMA
#define NONE OCAL__GEMM_ENGINE_COUNT
#define N OCAL_NO_TRANS
#define T OCAL_TRANS
#define AUTO OCAL__ENGINE_AUTO
#define FP32 OCAL_GEMM_PRECISION_FP32
#define TF32 OCAL_GEMM_PRECISION_TF32
#define BIG ((size_t)1 << 31)

static const rule_row rule_rows[] = {
    /* Hopper, precision tf32: wgmma for products of 128 x 64 blocks for an eighth of the
     * compute units (half of them with A transposed), mma.sync for short k and in 64 x 64
     * blocks for half of them, ocal's f32 kernel for the smallest; f16/bf16 always on tensor
     * cores. */
    {DEV_HOPPER, AUTO, TF32, OCAL_F32, N, 4096, 4096, 4096, 1, WG, 0, 0, 0},
    {DEV_HOPPER, AUTO, TF32, OCAL_F32, T, 1024, 1024, 1024, 1, WG, 0, 0, 0},
    {DEV_HOPPER, AUTO, TF32, OCAL_F32, T, 768, 768, 768, 1, WG, 0, 0, 0},
    {DEV_HOPPER, AUTO, TF32, OCAL_F32, N, 256, 256, 256, 16, WG, 0, 0, 0},
    {DEV_HOPPER, AUTO, TF32, OCAL_F32, N, 256, 512, 784, 1, OWN, 0, 0, 0},
    {DEV_HOPPER, AUTO, TF32, OCAL_F32, T, 784, 512, 256, 1, TC, 0, 0, 0},
    {DEV_HOPPER, AUTO, TF32, OCAL_F32, N, 256, 784, 512, 1, WG, 0, 0, 0},
    {DEV_HOPPER, AUTO, TF32, OCAL_F32, N, 320, 320, 320, 1, OWN, 0, 0, 0},
    {DEV_HOPPER, AUTO, TF32, OCAL_F32, N, 4096, 4096, 64, 1, TC, 0, 0, 0},
    {DEV_HOPPER, AUTO, TF32, OCAL_F64, N, 4096, 4096, 4096, 1, DM, 0, 0, 0},
    {DEV_HOPPER, AUTO, TF32, OCAL_F16, N, 4096, 4096, 4096, 1, WG, 0, 0, 0},
    {DEV_HOPPER, AUTO, TF32, OCAL_BF16, T, 8192, 8192, 8192, 1, WG, 0, 0, 0},
    {DEV_HOPPER, AUTO, TF32, OCAL_BF16, N, 1024, 1024, 1024, 1, WG, 0, 0, 0},
    {DEV_HOPPER, AUTO, TF32, OCAL_F16, T, 1024, 1024, 1024, 1, WG, 0, 0, 0},
    {DEV_HOPPER, AUTO, TF32, OCAL_F16, N, 256, 320, 1024, 1, TC, 0, 0, 0},
    {DEV_HOPPER, AUTO, TF32, OCAL_F16, N, 256, 512, 784, 1, TC, 0, 0, 0},
    {DEV_HOPPER, AUTO, TF32, OCAL_F16, N, 4096, 4096, 64, 1, TC, 0, 0, 0},
    {DEV_HOPPER, AUTO, TF32, OCAL_F16, N, 1, 1, 1, 1, TC, 0, 0, 0},
    {DEV_HOPPER, AUTO, TF32, OCAL_F16, N, BIG, 8, 8, 1, CLB, 1, 0, 0},
    /* Hopper, precision fp32 (the default): f32 exact; f16/bf16 unchanged. */
    {DEV_HOPPER, AUTO, FP32, OCAL_F32, N, 4096, 4096, 4096, 1, CLB, 0, 0, 1},
    {DEV_HOPPER, AUTO, FP32, OCAL_F32, N, 1024, 1024, 1024, 1, OWN, 0, 0, 0},
    {DEV_HOPPER, AUTO, FP32, OCAL_F32, N, 256, 256, 256, 8, CLB, 0, 0, 0},
    {DEV_HOPPER, AUTO, FP32, OCAL_F16, N, 4096, 4096, 4096, 1, WG, 0, 0, 0},
    {DEV_HOPPER, AUTO, FP32, OCAL_BF16, N, 256, 512, 784, 1, TC, 0, 0, 0},
    {DEV_HOPPER, AUTO, FP32, OCAL_F16, N, 256, 256, 256, 2, TC, 0, 0, 0},
    {DEV_HOPPER, AUTO, FP32, OCAL_F16, N, 256, 256, 256, 64, WG, 0, 0, 0},
    /* f64 where its probe passed, in any precision: tensor cores from a quarter of the compute
     * units in 128 x 128 tiles and k >= 64, CLBlast below; never wgmma */
    {DEV_HOPPER, AUTO, FP32, OCAL_F64, N, 1024, 1024, 1024, 1, DM, 0, 0, 0},
    {DEV_HOPPER, AUTO, FP32, OCAL_F64, T, 256, 256, 256, 16, DM, 0, 0, 0},
    {DEV_HOPPER, AUTO, FP32, OCAL_F64, N, 256, 256, 4096, 1, CLB, 0, 0, 0},
    {DEV_HOPPER, AUTO, FP32, OCAL_F64, N, 4096, 4096, 32, 1, CLB, 0, 0, 0},
    {DEV_HOPPER, OCAL__ENGINE_CLBLAST, FP32, OCAL_F64, N, 4096, 4096, 4096, 1, CLB, 0, 0, 1},
    {DEV_HOPPER, OCAL__ENGINE_WGMMA, FP32, OCAL_F64, N, 64, 64, 64, 1, NONE, 0, 0, 0},
    {DEV_AMPERE, AUTO, FP32, OCAL_F64, N, 4096, 4096, 4096, 1, DM, 0, 0, 0},
    {DEV_GPU_NO_TC, AUTO, FP32, OCAL_F64, N, 4096, 4096, 4096, 1, CLB, 0, 0, 1},
    {DEV_GPU_NO_TC, OCAL__ENGINE_TC, FP32, OCAL_F64, N, 64, 64, 64, 1, NONE, 0, 0, 0},
    /* wgmma's probe passed for f16 but not bf16 */
    {DEV_HOPPER_WG_NO_BF16, AUTO, FP32, OCAL_F16, N, 4096, 4096, 4096, 1, WG, 0, 0, 0},
    {DEV_HOPPER_WG_NO_BF16, AUTO, FP32, OCAL_BF16, N, 4096, 4096, 4096, 1, TC, 0, 0, 0},
    {DEV_HOPPER_WG_NO_BF16, OCAL__ENGINE_WGMMA, FP32, OCAL_BF16, N, 64, 64, 64, 1, NONE, 0, 0, 0},
    /* OCAL_GEMM=tc and =wgmma: that engine or a refusal */
    {DEV_HOPPER, OCAL__ENGINE_TC, TF32, OCAL_F32, N, 4096, 4096, 4096, 1, TC, 0, 0, 0},
    {DEV_HOPPER, OCAL__ENGINE_TC, TF32, OCAL_F32, N, 1, 1, 1, 1, TC, 0, 0, 0},
    {DEV_HOPPER, OCAL__ENGINE_TC, TF32, OCAL_F16, N, 4096, 4096, 4096, 1, TC, 0, 0, 0},
    {DEV_HOPPER, OCAL__ENGINE_TC, TF32, OCAL_F64, N, 64, 64, 64, 1, DM, 0, 0, 0},
    {DEV_HOPPER, OCAL__ENGINE_TC, FP32, OCAL_F32, N, 64, 64, 64, 1, NONE, 0, 0, 0},
    {DEV_HOPPER, OCAL__ENGINE_TC, FP32, OCAL_BF16, N, 64, 64, 64, 1, TC, 0, 0, 0},
    {DEV_HOPPER, OCAL__ENGINE_TC, FP32, OCAL_BF16, N, BIG, 8, 8, 1, NONE, 0, 0, 0},
    {DEV_HOPPER, OCAL__ENGINE_WGMMA, TF32, OCAL_F32, N, 64, 64, 64, 1, WG, 0, 0, 0},
    {DEV_HOPPER, OCAL__ENGINE_WGMMA, FP32, OCAL_F32, N, 64, 64, 64, 1, NONE, 0, 0, 0},
    {DEV_HOPPER, OCAL__ENGINE_WGMMA, FP32, OCAL_BF16, N, 64, 64, 64, 1, WG, 0, 0, 0},
    {DEV_HOPPER, OCAL__ENGINE_WGMMA, FP32, OCAL_F16, T, 1, 1, 1, 1, WG, 0, 0, 0},
    /* OCAL_GEMM=ocal and =clblast: f16/bf16 as f32 products on that engine */
    {DEV_HOPPER, OCAL__ENGINE_OWN, TF32, OCAL_F32, N, 4096, 4096, 4096, 1, OWN, 0, 0, 0},
    {DEV_HOPPER, OCAL__ENGINE_OWN, TF32, OCAL_F16, N, 4096, 4096, 4096, 1, OWN, 1, 0, 0},
    {DEV_HOPPER, OCAL__ENGINE_CLBLAST, FP32, OCAL_BF16, N, 1024, 1024, 1024, 1, CLB, 1, 0, 0},
    {DEV_HOPPER, OCAL__ENGINE_CLBLAST, FP32, OCAL_F16, N, 1024, 1024, 4096, 1, SPL, 1, 4, 0},
    /* Ampere-like (108 compute units, no wgmma): mma.sync for tf32 and f16/bf16 */
    {DEV_AMPERE, AUTO, TF32, OCAL_F32, N, 4096, 4096, 4096, 1, TC, 0, 0, 0},
    {DEV_AMPERE, AUTO, TF32, OCAL_F16, N, 4096, 4096, 4096, 1, TC, 0, 0, 0},
    {DEV_AMPERE, AUTO, FP32, OCAL_BF16, N, 256, 512, 784, 1, TC, 0, 0, 0},
    {DEV_AMPERE, OCAL__ENGINE_WGMMA, TF32, OCAL_F32, N, 64, 64, 64, 1, NONE, 0, 0, 0},
    {DEV_AMPERE, OCAL__ENGINE_WGMMA, TF32, OCAL_F16, N, 64, 64, 64, 1, NONE, 0, 0, 0},
    /* A GPU without tensor cores: f32 as ever; f16/bf16 as f32 products on the f32 rule */
    {DEV_GPU_NO_TC, AUTO, TF32, OCAL_F32, N, 4096, 4096, 4096, 1, CLB, 0, 0, 1},
    {DEV_GPU_NO_TC, AUTO, TF32, OCAL_F32, N, 1024, 1024, 1024, 1, OWN, 0, 0, 0},
    {DEV_GPU_NO_TC, AUTO, TF32, OCAL_F16, N, 4096, 4096, 4096, 1, CLB, 1, 0, 1},
    {DEV_GPU_NO_TC, AUTO, FP32, OCAL_BF16, N, 1024, 1024, 1024, 1, OWN, 1, 0, 0},
    {DEV_GPU_NO_TC, AUTO, FP32, OCAL_F16, N, 256, 512, 784, 1, OWN, 1, 0, 0},
    {DEV_GPU_NO_TC, AUTO, FP32, OCAL_F16, N, 256, 256, 256, 8, CLB, 1, 0, 0},
    {DEV_GPU_NO_TC, AUTO, FP32, OCAL_BF16, T, 4096, 4096, 4096, 1, CLB, 1, 0, 0},
    {DEV_GPU_NO_TC, OCAL__ENGINE_TC, TF32, OCAL_F32, N, 64, 64, 64, 1, NONE, 0, 0, 0},
    {DEV_GPU_NO_TC, OCAL__ENGINE_TC, TF32, OCAL_F16, N, 64, 64, 64, 1, NONE, 0, 0, 0},
    {DEV_GPU_NO_TC, OCAL__ENGINE_WGMMA, TF32, OCAL_BF16, N, 64, 64, 64, 1, NONE, 0, 0, 0},
    /* A CPU (PoCL): CLBlast on its defaults, f16/bf16 as f32 products */
    {DEV_CPU, AUTO, FP32, OCAL_F32, N, 4096, 4096, 4096, 1, CLB, 0, 0, 0},
    {DEV_CPU, AUTO, TF32, OCAL_F32, N, 64, 64, 64, 1, CLB, 0, 0, 0},
    {DEV_CPU, AUTO, FP32, OCAL_F16, N, 1024, 1024, 1024, 1, CLB, 1, 0, 0},
    {DEV_CPU, AUTO, FP32, OCAL_F64, T, 33, 17, 65, 3, CLB, 0, 0, 0},
    {DEV_CPU, OCAL__ENGINE_OWN, FP32, OCAL_BF16, N, 33, 17, 65, 1, OWN, 1, 0, 0},
};

/* Every row: the engine, the widening, the slices and the pre-transposition, and a reason. */
START_TEST(test_rule_every_type_and_device) {
  for (size_t i = 0; i < sizeof rule_rows / sizeof rule_rows[0]; i++) {
    const rule_row *r = &rule_rows[i];
    int widen = -1;
    ocal__gemm_choice c = rule_of(r, &widen);
    ck_assert_msg((int)c.engine == r->engine && widen == r->widen && c.slices == r->slices &&
                      c.pretranspose == r->pretranspose && c.reason && c.reason[0],
                  "row %zu (device %d, OCAL_GEMM %d, precision %d, %s %zux%zux%zu batch %zu): "
                  "engine %d widen %d slices %zu pretranspose %d (%s); expected %d %d %zu %d",
                  i, (int)r->dev, r->gemm, r->precision, ocal_dtype_name(r->dtype), r->m, r->n,
                  r->k, r->batch, (int)c.engine, widen, c.slices, c.pretranspose, c.reason,
                  r->engine, r->widen, r->slices, r->pretranspose);
  }
}
END_TEST

#undef OWN
#undef CLB
#undef SPL
#undef TC
#undef WG
#undef DM
#undef NONE
#undef N
#undef T
#undef AUTO
#undef FP32
#undef TF32
#undef BIG

/* ---- tuning --------------------------------------------------------------------------- */

START_TEST(test_params_validation) {
  NEEDS_CLBLAST();
  ocal_device_info info = {sizeof info};
  ck_assert_ocal(ocal_context_get_device_info(fixture_ctx, &info));
  char text[1024], why[256];
  ocal__gemm_params p;
  cpu_params(300, text, sizeof text);
  ck_assert_msg(ocal__gemm_params_parse(text, &info, 32, &p, why, sizeof why), "%s", why);
  ck_assert_int_eq(p.v[OCAL__P_MIN_INDIRECT], 300);
  ck_assert_int_eq(p.v[OCAL__P_MWG], 32);
  /* Round trip through the text form. */
  char again[1024];
  ocal__gemm_params q;
  ocal__gemm_params_format(&p, again, sizeof again);
  ck_assert(ocal__gemm_params_parse(again, &info, 32, &q, why, sizeof why));
  ck_assert(memcmp(&p, &q, sizeof p) == 0);

  static const struct {
    const char *from, *to, *why;
  } bad[] = {{"MWG=32\n", "MWG=48\n", "multiple of MDIMC*VWM"},
             {"MWG=32\n", "MWG=1000\n", "out of range"},
             {"MWG=32\n", "MWG=3x\n", "not an integer"},
             {"MWG=32\n", "MWX=32\n", "unknown parameter"},
             {"MWG=32\n", "", "MWG is missing"},
             {"MWG=32\n", "MWG=32\nMWG=32\n", "given twice"},
             {"VWM=4\n", "VWM=3\n", "powers of two"},
             {"KREG=1\n", "KREG=2\n", "KREG must be 1"},
             {"WGD=16\n", "WGD=20\n", "WGD must be a multiple"},
             {"MWG=32\n", "MWG 32\n", "not NAME=VALUE"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char t[1100];
    const char *at = strstr(text, bad[i].from);
    ck_assert_ptr_nonnull(at);
    snprintf(t, sizeof t, "%.*s%s%s", (int)(at - text), text, bad[i].to,
             at + strlen(bad[i].from));
    ck_assert_msg(!ocal__gemm_params_parse(t, &info, 32, &p, why, sizeof why), "case %zu passed",
                  i);
    ck_assert_msg(strstr(why, bad[i].why) != NULL, "case %zu: \"%s\" lacks \"%s\"", i, why,
                  bad[i].why);
    ck_assert_ocal_fails(ocal_blas_tuning_apply(fixture_ctx, OCAL_F32, t), OCAL_INVALID_ARGUMENT);
  }
  /* Local memory beyond the device's. */
  ocal_device_info small = info;
  small.local_mem_bytes = 1024;
  ck_assert(!ocal__gemm_params_parse(text, &small, 32, &p, why, sizeof why));
  ck_assert_msg(strstr(why, "local memory") != NULL, "%s", why);
  /* Every shipped set is valid (without device limits). */
  for (size_t i = 0; i < ocal__builtin_tuning_count; i++)
    ck_assert_msg(ocal__gemm_params_parse(ocal__builtin_tunings[i].params, NULL,
                                          ocal__builtin_tunings[i].precision, &p, why, sizeof why),
                  "built-in entry %zu: %s", i, why);
}
END_TEST

/* Without a tuning file, CLBlast's defaults (PoCL has no built-in entry); OCAL_TUNING=0
 * turns tuning off; ocal_blas_tuning_apply is reported as the user's. */
START_TEST(test_tuning_info_sources) {
  NEEDS_CLBLAST();
  char *dir = make_temp_dir();
  ocal_context ctx = context_in(dir);
  ocal_blas_tuning info = {sizeof info};
  ck_assert_ocal(ocal_blas_get_tuning(ctx, OCAL_F32, &info));
  ocal_device_info d = {sizeof d};
  ck_assert_ocal(ocal_context_get_device_info(ctx, &d));
  int builtin = 0;
  for (size_t i = 0; i < ocal__builtin_tuning_count; i++)
    builtin |= strcmp(ocal__builtin_tunings[i].device, d.name) == 0;
  ck_assert_int_eq(info.source, builtin ? OCAL_TUNING_BUILTIN : OCAL_TUNING_DEFAULT);
  ck_assert_msg(strncmp(info.path, dir, strlen(dir)) == 0, "path %s not in %s", info.path, dir);
  char params[1024];
  cpu_params(1, params, sizeof params);
  /* The strings of an earlier ocal_blas_tuning stay valid and unchanged after the tuning in
   * effect changes (they are ocal's, for the rest of the process). */
  ocal_blas_tuning before = info;
  char *before_params = strdup(before.params);
  ck_assert_ptr_nonnull(before_params);
  ck_assert_ocal(ocal_blas_tuning_apply(ctx, OCAL_F32, params));
  ck_assert_ocal(ocal_blas_get_tuning(ctx, OCAL_F32, &info));
  ck_assert_int_eq(info.source, OCAL_TUNING_USER);
  ck_assert_str_eq(before.params, before_params);
  ck_assert_str_eq(before.path, info.path);
  free(before_params);
  ck_assert_msg(strstr(info.params, "XGEMM_MIN_INDIRECT_SIZE=1\n") != NULL, "%s", info.params);
  check_gemm(ctx, OCAL_F32, 0, 1, 7, 13, 5, 3);
  ocal_context_release(ctx);

  char *out, *err;
  ck_assert_int_eq(run_self(dir, "0", &out, &err), 0);
  ck_assert_msg(strstr(out, "source=1\n") != NULL, "OCAL_TUNING=0 not honoured: %s", out);
  free(out), free(err);
  remove_dir(dir);
}
END_TEST

/* Writes a tuning file for the fixture's device into dir with the library's own writer. */
static void write_tuning_file(const char *dir, const char *payload, size_t size) {
  ocal_context ctx = context_in(dir);
  char *key = ocal__blas_tuning_key(ctx, 32);
  ck_assert_ptr_nonnull(key);
  ocal__disk_cache_store(dir, key, (const unsigned char *)payload, size);
  free(key);
  ocal_context_release(ctx);
}

/* A tuning file is used by a new process; a malformed, corrupt or foreign one is ignored
 * with a warning, and the GEMM still works. */
START_TEST(test_tuning_file_checked_before_use) {
  NEEDS_CLBLAST();
  char *dir = make_temp_dir(), params[1024], *out, *err;
  cpu_params(1, params, sizeof params);
  write_tuning_file(dir, params, strlen(params));
  ck_assert_int_eq(run_self(dir, NULL, &out, &err), 0);
  ck_assert_msg(strstr(out, "source=3\n") != NULL, "file not applied: %s %s", out, err);
  ck_assert_msg(strstr(out, "XGEMM_MIN_INDIRECT_SIZE=1\n") != NULL, "%s", out);
  free(out), free(err);

  /* Valid container, bad payload: an unknown name; a value that breaks a constraint. */
  for (int i = 0; i < 2; i++) {
    char text[1200];
    snprintf(text, sizeof text, "%s%s", params, i == 0 ? "BOGUS=1\n" : "");
    if (i == 1) memcpy(strstr(text, "WGD=16"), "WGD=99", 6);
    write_tuning_file(dir, text, strlen(text));
    ck_assert_int_eq(run_self(dir, NULL, &out, &err), 0);
    ck_assert_msg(strstr(out, "source=3\n") == NULL, "bad file %d applied: %s", i, out);
    ck_assert_msg(strstr(err, "warning: ignoring the tuning file") != NULL, "no warning: %s", err);
    ck_assert_msg(strstr(err, i == 0 ? "BOGUS" : "WGD") != NULL, "warning lacks why: %s", err);
    free(out), free(err);
  }
  /* Corrupt bytes where the file should be (OCAL_TUNING=0 here: only its name is wanted). */
  setenv("OCAL_TUNING", "0", 1);
  ocal_context ctx = context_in(dir);
  ocal_blas_tuning info = {sizeof info};
  ck_assert_ocal(ocal_blas_get_tuning(ctx, OCAL_F32, &info));
  ocal_context_release(ctx);
  FILE *f = fopen(info.path, "wb");
  ck_assert_ptr_nonnull(f);
  fputs("OCALBIN1 this is not a tuning file", f);
  fclose(f);
  ck_assert_int_eq(run_self(dir, NULL, &out, &err), 0);
  ck_assert_msg(strstr(out, "source=3\n") == NULL, "corrupt file applied: %s", out);
  ck_assert_msg(strstr(err, "corrupt") != NULL, "no warning: %s", err);
  free(out), free(err);
  remove_dir(dir);
}
END_TEST

/* The tuner with a tiny budget stores a file, and a new process applies exactly its winner. */
START_TEST(test_tuner_stores_file_for_new_process) {
  NEEDS_CLBLAST();
  char *dir = make_temp_dir(), *out, *err;
  ocal_context ctx = context_in(dir);
  ocal_blas_tune_options o;
  ck_assert_ocal(ocal_blas_tune_options_init(&o));
  ck_assert_uint_eq(o.struct_size, sizeof o);
  o.budget_s = 4;
  o.size = 128;
  ocal_blas_tuning result = {sizeof result};
  /* A struct_size this library cannot have been built with is refused before any tuning. */
  o.struct_size = sizeof(size_t);
  ck_assert_ocal_fails(ocal_blas_tune(ctx, &o, &result), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_blas_tune_options_init"));
  o.struct_size = sizeof o;
  /* So are phases that name no phase: they would search nothing and store the old set. */
  o.phases = OCAL_TUNE_SWITCH << 1;
  ck_assert_ocal_fails(ocal_blas_tune(ctx, &o, &result), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "OCAL_TUNE_SWITCH"));
  ocal_blas_tuning before = {sizeof before};
  ck_assert_ocal(ocal_blas_get_tuning(ctx, OCAL_F32, &before));
  ck_assert_msg(access(before.path, F_OK) != 0, "a refused tuning stored %s", before.path);
  o.phases = OCAL_TUNE_XGEMM | OCAL_TUNE_DIRECT | OCAL_TUNE_SWITCH;
  ck_assert_ocal(ocal_blas_tune(ctx, &o, &result));
  ck_assert_int_eq(result.source, OCAL_TUNING_FILE);
  ck_assert(result.gflops > 0);
  ck_assert_msg(access(result.path, R_OK) == 0, "no tuning file at %s", result.path);
  check_gemm(ctx, OCAL_F32, 1, 1, 33, 17, 65, 5);
  ocal_context_release(ctx);
  ck_assert_int_eq(run_self(dir, NULL, &out, &err), 0);
  ck_assert_msg(strstr(out, "source=3\n") != NULL, "tuned file not applied: %s %s", out, err);
  ck_assert_msg(strstr(out, result.params) != NULL, "new process runs other parameters:\n%s\n"
                "tuner's:\n%s", out, result.params);
  free(out), free(err);
  remove_dir(dir);
}
END_TEST

/* `ocal tune gemm` does the same from the command line (when the tool is at hand). */
START_TEST(test_tune_command) {
  NEEDS_CLBLAST();
  const char *tool = getenv("OCAL_TOOL");
  if (!tool || access(tool, X_OK) != 0) return;
  char *dir = make_temp_dir(), cmd[1024], *out, *err;
  snprintf(cmd, sizeof cmd,
           "OCAL_CACHE_DIR='%s' '%s' tune gemm --budget 2 --size 128 > '%s/tool.txt' 2>&1", dir,
           tool, dir);
  int rc = system(cmd);
  snprintf(cmd, sizeof cmd, "%s/tool.txt", dir);
  char *log = slurp(cmd);
  size_t len = strlen(log);
  ck_assert_msg(rc == 0, "ocal tune gemm failed (%d):\n%s", rc, log + (len > 1500 ? len - 1500 : 0));
  ck_assert_msg(strstr(log, "XGEMM_MIN_INDIRECT_SIZE=") != NULL, "no winner printed:\n%s", log);
  free(log);
  ck_assert_int_eq(run_self(dir, NULL, &out, &err), 0);
  ck_assert_msg(strstr(out, "source=3\n") != NULL, "tool's file not applied: %s %s", out, err);
  free(out), free(err);
  remove_dir(dir);
}
END_TEST

static Suite *blas_suite(void) {
  Suite *s = suite_create("blas");
  TCase *tc = fixture_tcase("gemm");
  tcase_add_loop_test(tc, test_gemm_f32_shapes_and_transposes, 0, 2);
  tcase_add_test(tc, test_gemm_f32_indirect_kernel);
  tcase_add_loop_test(tc, test_gemm_f64, 0, 2);
  tcase_add_loop_test(tc, test_gemm_views_and_empty, 0, 2);
  tcase_add_loop_test(tc, test_gemm_batched, 0, 2);
  suite_add_tcase(s, tc);
  tc = fixture_tcase("splitk");
  tcase_add_test(tc, test_gemm_own_kernel_paths);
  tcase_add_test(tc, test_gemm_splitk_forced);
  tcase_add_test(tc, test_gemm_splitk_auto);
  tcase_add_test(tc, test_gemm_splitk_views_nan_batched);
  suite_add_tcase(s, tc);
  tc = fixture_tcase("vectors");
  tcase_add_test(tc, test_gemv_and_blas1);
  tcase_add_test(tc, test_gemv_own_kernels);
  tcase_add_test(tc, test_first_clblast_calls_from_threads);
  suite_add_tcase(s, tc);
  tc = fixture_tcase("errors");
  tcase_add_test(tc, test_errors_name_the_shapes);
  tcase_add_test(tc, test_gemm_small_local_memory);
  tcase_add_test(tc, test_clblast_failure_leaves_context_usable);
  tcase_add_test(tc, test_gemm_falls_back_when_clblast_does_not_build);
  suite_add_tcase(s, tc);
  tc = fixture_tcase("rule");
  tcase_add_test(tc, test_rule_h100_bench_shapes);
  tcase_add_test(tc, test_rule_pocl_bench_shapes);
  tcase_add_test(tc, test_rule_every_type_and_device);
  suite_add_tcase(s, tc);

  tc = fixture_tcase("tuning");
  tcase_add_test(tc, test_params_validation);
  tcase_add_test(tc, test_tuning_info_sources);
  tcase_add_test(tc, test_tuning_file_checked_before_use);
  tcase_add_test(tc, test_tuner_stores_file_for_new_process);
  tcase_add_test(tc, test_tune_command);
  suite_add_tcase(s, tc);
  return s;
}

int main(int argc, char **argv) {
  /* Without CLBlast the suite still runs: ocal's own GEMM and GEMV, ocal_dot and ocal_nrm2
   * are tested, and the CLBlast-only cases say they are skipped (NEEDS_CLBLAST). */
  if (argc == 3 && strcmp(argv[1], "--print-tuning") == 0) return print_tuning(argv[2]);
  return fixture_run(blas_suite());
}
