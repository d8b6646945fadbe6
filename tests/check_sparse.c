/* ocal tests — sparse matrices: SpMV/SpMM (and with the transpose) against a double host
 * reference on random matrices (empty rows, a dense row, n = 1, nnz = 0, unsorted COO with
 * duplicates, both index types, both precisions, every SpMV kernel), the Matrix Market
 * reader (through the file and on memory buffers), CG on SPD matrices, LOBPCG against the
 * analytic eigenvalues of Laplacians, and a table of bad inputs. */
#include "fixture.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "sparse_internal.h"

#define EXPECT(cond, ...)                   \
  do {                                      \
    if (!(cond)) ck_abort_msg(__VA_ARGS__); \
  } while (0)

/* ---- a host matrix in double precision with int64 indices ------------------------------ */

typedef struct hmat {
  size_t rows, cols, nnz;
  int64_t *rp, *ci;
  double *v;
} hmat;

static void hmat_free(hmat *m) {
  free(m->rp);
  free(m->ci);
  free(m->v);
}

static double urand(uint64_t *st) { return (double)(fixture_random(st) >> 11) / 9007199254740992.0; }

/* A random matrix: about `per_row` entries per row at random columns (sorted, distinct),
 * every `empty_every`-th row empty (0: none), row `dense_row` full (SIZE_MAX: none). */
static hmat random_hmat(size_t rows, size_t cols, double per_row, size_t empty_every,
                        size_t dense_row, uint64_t seed) {
  hmat m = {rows, cols, 0, NULL, NULL, NULL};
  uint64_t st = seed * 0x9e3779b97f4a7c15ull + 7;
  m.rp = fixture_malloc((rows + 1) * sizeof *m.rp);
  size_t cap = (size_t)(rows * (per_row * 2 + 2)) + cols + 16;
  m.ci = fixture_malloc(cap * sizeof *m.ci);
  m.v = fixture_malloc(cap * sizeof *m.v);
  unsigned char *mark = calloc(cols, 1);
  m.rp[0] = 0;
  for (size_t r = 0; r < rows; r++) {
    size_t want;
    if (r == dense_row)
      want = cols;
    else if (empty_every && r % empty_every == 0)
      want = 0;
    else
      want = (size_t)(urand(&st) * 2 * per_row + 0.5);
    if (want > cols) want = cols;
    memset(mark, 0, cols);
    if (want == cols)
      memset(mark, 1, cols);
    else
      for (size_t k = 0; k < want; k++) mark[fixture_random(&st) % cols] = 1;
    for (size_t c = 0; c < cols; c++)
      if (mark[c]) {
        m.ci[m.nnz] = (int64_t)c;
        m.v[m.nnz++] = urand(&st) * 2 - 1;
      }
    m.rp[r + 1] = (int64_t)m.nnz;
  }
  free(mark);
  return m;
}

/* Host arrays of the given types. */
static void *idx_array(ocal_dtype it, const int64_t *src, size_t n) {
  void *p = fixture_malloc((n ? n : 1) * ocal_dtype_size(it));
  for (size_t i = 0; i < n; i++) {
    if (it == OCAL_I32)
      ((int32_t *)p)[i] = (int32_t)src[i];
    else
      ((int64_t *)p)[i] = src[i];
  }
  return p;
}

static void *val_array(ocal_dtype vt, const double *src, size_t n) {
  void *p = fixture_malloc((n ? n : 1) * ocal_dtype_size(vt));
  for (size_t i = 0; i < n; i++) {
    if (vt == OCAL_F32)
      ((float *)p)[i] = (float)src[i];
    else
      ((double *)p)[i] = src[i];
  }
  return p;
}

/* The values as the device sees them (rounded to f32 where it holds f32). */
static double vround(ocal_dtype vt, double v) { return vt == OCAL_F32 ? (double)(float)v : v; }

static ocal_csr upload(const hmat *m, ocal_dtype vt, ocal_dtype it) {
  void *rp = idx_array(it, m->rp, m->rows + 1), *ci = idx_array(it, m->ci, m->nnz);
  void *v = val_array(vt, m->v, m->nnz);
  ocal_csr a;
  ck_assert_ocal(ocal_csr_from_host(fixture_ctx, vt, it, m->rows, m->cols, rp, ci, v, &a));
  free(rp);
  free(ci);
  free(v);
  return a;
}

/* An OCAL_SPMV value that names no kernel is refused at context creation (where the settings
 * are read), naming the variable. */
START_TEST(test_spmv_setting_refused) {
  int32_t rp[3] = {0, 1, 2}, ci[2] = {0, 1};
  float v[2] = {1.0f, 2.0f};
  static const char *const bad[] = {"bogus",  "stream3", "vector128", "stream512x",
                                    "vector0", "merge0",  "merge33",   "merge7x"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    setenv("OCAL_SPMV", bad[i], 1);
    ocal_context c = NULL;
    ocal_status st = ocal_context_create(NULL, &c);
    ck_assert_msg(st == OCAL_INVALID_ARGUMENT, "OCAL_SPMV=%s accepted (%s)", bad[i],
                  ocal_status_name(st));
    ck_assert_ptr_null(c);
    ck_assert_msg(strstr(ocal_last_error(), "OCAL_SPMV") != NULL, "%s", ocal_last_error());
  }
  setenv("OCAL_SPMV", "stream512", 1);
  fixture_reopen();
  ocal_csr a;
  ck_assert_ocal(ocal_csr_from_host(fixture_ctx, OCAL_F32, OCAL_I32, 2, 2, rp, ci, v, &a));
  ocal_csr_release(a);
  unsetenv("OCAL_SPMV");
}
END_TEST

static ocal_buffer make_block(ocal_dtype vt, size_t rows, size_t k, double *host, uint64_t seed) {
  uint64_t st = seed;
  for (size_t i = 0; i < rows * k; i++) host[i] = vround(vt, urand(&st) * 2 - 1);
  void *p = val_array(vt, host, rows * k);
  size_t shape[2] = {rows, k};
  ocal_buffer b;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, vt, k == 1 ? 1 : 2, shape, p, &b));
  free(p);
  return b;
}

static void read_block(ocal_buffer b, ocal_dtype vt, size_t n, double *out) {
  void *p = fixture_malloc((n ? n : 1) * 8);
  ck_assert_ocal(ocal_buffer_read(b, 0, n, p, NULL));
  for (size_t i = 0; i < n; i++) out[i] = vt == OCAL_F32 ? ((float *)p)[i] : ((double *)p)[i];
  free(p);
}

/* Checks Y = alpha op(A) X + beta Y0 against the host, in double, with a bound relative to
 * the sum of the magnitudes of the terms (so that cancellation does not fail f32). */
static void check_product(const hmat *m, ocal_dtype vt, ocal_csr a, int trans, size_t k,
                          double alpha, double beta, uint64_t seed) {
  size_t in = trans ? m->rows : m->cols, out = trans ? m->cols : m->rows;
  double *xh = fixture_malloc(in * k * 8), *y0 = fixture_malloc(out * k * 8);
  double *ref = calloc(out * k, 8), *mag = calloc(out * k, 8), *got = fixture_malloc(out * k * 8);
  ocal_buffer x = make_block(vt, in, k, xh, seed), y = make_block(vt, out, k, y0, seed + 1);
  for (size_t r = 0; r < m->rows; r++)
    for (int64_t j = m->rp[r]; j < m->rp[r + 1]; j++) {
      size_t c = (size_t)m->ci[j];
      double v = vround(vt, m->v[j]);
      size_t row = trans ? c : r, col = trans ? r : c;
      for (size_t q = 0; q < k; q++) {
        ref[row * k + q] += v * xh[col * k + q];
        mag[row * k + q] += fabs(v * xh[col * k + q]);
      }
    }
  if (k == 1)
    ck_assert_ocal(ocal_spmv(trans ? OCAL_TRANS : OCAL_NO_TRANS, alpha, a, x, beta, y));
  else
    ck_assert_ocal(ocal_spmm(trans ? OCAL_TRANS : OCAL_NO_TRANS, alpha, a, x, beta, y));
  read_block(y, vt, out * k, got);
  double tol = vt == OCAL_F32 ? 2e-6 : 1e-14;
  for (size_t i = 0; i < out * k; i++) {
    double want = alpha * ref[i] + beta * y0[i];
    double bound = tol * (fabs(alpha) * mag[i] + fabs(beta * y0[i]) + 1e-30) * 4;
    EXPECT(fabs(got[i] - want) <= bound,
           "%s k=%zu trans=%d element %zu (row %zu): got %.17g, want %.17g (bound %.3g)",
           ocal_dtype_name(vt), k, trans, i, i / k, got[i], want, bound);
  }
  ocal_buffer_release(x);
  ocal_buffer_release(y);
  free(xh);
  free(y0);
  free(ref);
  free(mag);
  free(got);
}

static const ocal_dtype vtypes[] = {OCAL_F32, OCAL_F64};
static const ocal_dtype itypes[] = {OCAL_I32, OCAL_I64};

/* Every product shape of one matrix. */
static void check_all_products(const hmat *m, ocal_dtype vt, ocal_dtype it, uint64_t seed) {
  ocal_csr a = upload(m, vt, it);
  check_product(m, vt, a, 0, 1, 1.0, 0.0, seed);
  check_product(m, vt, a, 0, 1, -0.75, 0.5, seed + 2);
  check_product(m, vt, a, 1, 1, 1.25, -1.0, seed + 4);
  check_product(m, vt, a, 0, 3, 0.5, 2.0, seed + 6);
  check_product(m, vt, a, 1, 8, 1.0, 0.0, seed + 8);
  check_product(m, vt, a, 0, 64, 1.0, 1.0, seed + 10);
  ck_assert_ocal(ocal_csr_release(a));
}

/* Random irregular matrices of sizes that are not powers of two, every type pair. */
START_TEST(test_spmv_random_types) {
  for (int vi = 0; vi < 2; vi++) {
    if (!fixture_dtype_usable(vtypes[vi])) continue;
    for (int ii = 0; ii < 2; ii++) {
      hmat m = random_hmat(517, 389, 6.0, 7, 100, (uint64_t)(vi * 2 + ii + 1));
      check_all_products(&m, vtypes[vi], itypes[ii], 11 + (uint64_t)vi);
      hmat_free(&m);
    }
  }
}
END_TEST

/* Each SpMV kernel (forced through OCAL_SPMV) on matrices that suit it and that do not. */
START_TEST(test_spmv_kernels) {
  static const char *kinds[] = {"scalar", "vector",    "vector2",    "vector32", "adaptive",
                                "stream", "stream256", "stream4096"};
  ocal_dtype vt = fixture_has_fp64() ? OCAL_F64 : OCAL_F32;
  hmat short_rows = random_hmat(1000, 1000, 1.0, 5, SIZE_MAX, 21);
  hmat long_rows = random_hmat(301, 3001, 5.0, 0, 7, 22);
  /* Rows of 5 (a stream block of 256 rows) with one row longer than every staging size. */
  hmat regular = random_hmat(2999, 5003, 2.5, 0, 1500, 24);
  hmat one = random_hmat(1, 1, 1.0, 0, 0, 25);
  hmat zero = random_hmat(37, 23, 1.0, 1, SIZE_MAX, 26);
  /* Rows of 0 to 400 entries: with 256-entry staging (stream256) a third of them are long
   * blocks of many lengths between the short ones, which the stream kernel takes first. */
  hmat mixed = random_hmat(203, 1501, 200.0, 0, SIZE_MAX, 27);
  const hmat *mats[] = {&short_rows, &long_rows, &regular, &one, &zero, &mixed};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    setenv("OCAL_SPMV", kinds[i], 1);
    fixture_reopen(); /* the settings are read at context creation */
    for (size_t which = 0; which < sizeof mats / sizeof mats[0]; which++) {
      const hmat *m = mats[which];
      for (int t = 0; t < 4; t++) {
        /* Both index types in both precisions where the device has doubles; the
         * transposed product goes through the transposed copy's own kernel choice. */
        ocal_dtype tv = (t & 1) && fixture_has_fp64() ? OCAL_F64 : OCAL_F32;
        ocal_dtype ti = (t & 2) ? OCAL_I64 : OCAL_I32;
        ocal_csr a = upload(m, tv, ti);
        const char *name;
        ck_assert_ocal(ocal_csr_get_spmv_kernel(a, &name));
        ck_assert_msg(strncmp(name, kinds[i], strlen(name)) == 0, "asked %s, got %s", kinds[i],
                      name);
        check_product(m, tv, a, 0, 1, 1.0, 0.5, 30 + i);
        check_product(m, tv, a, 0, 1, -1.5, 0.0, 35 + i);
        check_product(m, tv, a, 1, 1, 2.0, 0.0, 40 + i);
        ocal_csr_release(a);
      }
    }
  }
  unsetenv("OCAL_SPMV");
  fixture_reopen();
  hmat_free(&regular);
  hmat_free(&one);
  hmat_free(&zero);
  hmat_free(&mixed);
  /* The automatic choice (ocal__spmv_rule): on GPUs a matrix with long rows takes the stream
   * kernel and short regular rows one work-item each; CPUs take scalar. */
  ocal_device_info info = {sizeof info};
  ck_assert_ocal(ocal_context_get_device_info(fixture_ctx, &info));
  int cpu = info.type == OCAL_DEVICE_CPU;
  const char *name;
  ocal_csr a = upload(&long_rows, vt, OCAL_I64);
  ck_assert_ocal(ocal_csr_get_spmv_kernel(a, &name));
  ck_assert_str_eq(name, cpu ? "scalar" : "stream");
  ocal_csr_release(a);
  a = upload(&short_rows, vt, OCAL_I64);
  ck_assert_ocal(ocal_csr_get_spmv_kernel(a, &name));
  ck_assert_str_eq(name, "scalar");
  ocal_csr_release(a);
  hmat mid = random_hmat(500, 500, 40.0, 0, SIZE_MAX, 23);
  a = upload(&mid, vt, OCAL_I64);
  ck_assert_ocal(ocal_csr_get_spmv_kernel(a, &name));
  ck_assert_str_eq(name, cpu ? "scalar" : "vector");
  check_product(&mid, vt, a, 0, 1, 1.0, 0.0, 50);
  ocal_csr_release(a);
  hmat_free(&mid);
  /* The rule itself, for the devices this run does not have. */
  ck_assert_int_eq(ocal__spmv_rule(0, 5.0, 0), OCAL__SPMV_SCALAR);
  ck_assert_int_eq(ocal__spmv_rule(0, 1.5, 0), OCAL__SPMV_SCALAR);
  ck_assert_int_eq(ocal__spmv_rule(0, 20.0, 0), OCAL__SPMV_STREAM);
  ck_assert_int_eq(ocal__spmv_rule(0, 5.0, 3), OCAL__SPMV_STREAM);
  ck_assert_int_eq(ocal__spmv_rule(0, 50.0, 0), OCAL__SPMV_VECTOR);
  ck_assert_int_eq(ocal__spmv_rule(0, 50.0, 3), OCAL__SPMV_ADAPTIVE);
  ck_assert_int_eq(ocal__spmv_rule(1, 50.0, 3), OCAL__SPMV_SCALAR);
  hmat_free(&short_rows);
  hmat_free(&long_rows);
}
END_TEST

/* Power-law row lengths (a Pareto tail of exponent 1.6 from `base` entries), every 7th row
 * empty, a run of `empty_run` empty rows in the middle, and row `huge` holding every column:
 * the matrices the merge-path kernel is for. */
static hmat powerlaw_hmat(size_t rows, size_t cols, double base, size_t empty_run, size_t huge,
                          uint64_t seed) {
  hmat m = {rows, cols, 0, NULL, NULL, NULL};
  uint64_t st = seed * 0x9e3779b97f4a7c15ull + 3;
  size_t *len = fixture_malloc(rows * sizeof *len), cap = 1;
  for (size_t r = 0; r < rows; r++) {
    size_t l = (size_t)floor(base / pow(1.0 - urand(&st), 1.0 / 1.6));
    if (r % 7 == 3 || (r >= rows / 2 && r < rows / 2 + empty_run)) l = 0;
    if (r == huge) l = cols;
    len[r] = l < cols ? l : cols;
    cap += len[r];
  }
  m.rp = fixture_malloc((rows + 1) * sizeof *m.rp);
  m.ci = fixture_malloc(cap * sizeof *m.ci);
  m.v = fixture_malloc(cap * sizeof *m.v);
  m.rp[0] = 0;
  for (size_t r = 0; r < rows; r++) {
    /* Columns in order from a random start with random gaps (repeats allowed: CSR takes
     * them, and the products must add them all). */
    size_t c = len[r] == cols ? 0 : (size_t)(fixture_random(&st) % cols);
    for (size_t k = 0; k < len[r]; k++) {
      m.ci[m.nnz] = (int64_t)((c + k * (len[r] == cols ? 1 : 1 + fixture_random(&st) % 3)) % cols);
      m.v[m.nnz++] = urand(&st) * 2 - 1;
    }
    m.rp[r + 1] = (int64_t)m.nnz;
  }
  free(len);
  return m;
}

/* The merge-path kernel against the host on power-law matrices of odd sizes whose rows cross
 * work-item and tile boundaries, on a 1 x 1 matrix and on one of empty rows, and its results
 * the same bits run after run. */
START_TEST(test_spmv_merge_powerlaw) {
  /* Tiles of 256 items in every type pair, the default size in the widest one (each pair
   * is a compile on PoCL). */
  static const char *kinds[] = {"merge1", "merge"};
  hmat mats[] = {powerlaw_hmat(4099, 3001, 2.0, 600, 2049, 81),
                 powerlaw_hmat(1237, 20011, 4.0, 0, 5, 82), powerlaw_hmat(3, 9001, 1.0, 0, 1, 83),
                 random_hmat(1, 1, 1.0, 0, 0, 84), random_hmat(37, 23, 1.0, 1, SIZE_MAX, 85)};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    setenv("OCAL_SPMV", kinds[i], 1);
    fixture_reopen();
    for (size_t which = 0; which < sizeof mats / sizeof mats[0]; which++)
      for (int t = i == 0 ? 0 : 3; t < 4; t++) {
        ocal_dtype tv = vtypes[t & 1], ti = itypes[t >> 1];
        if (!fixture_dtype_usable(tv)) continue;
        const hmat *m = &mats[which];
        ocal_csr a = upload(m, tv, ti);
        const char *name;
        ck_assert_ocal(ocal_csr_get_spmv_kernel(a, &name));
        ck_assert_str_eq(name, "merge");
        check_product(m, tv, a, 0, 1, 1.0, 0.0, 90 + i);
        check_product(m, tv, a, 0, 1, -0.5, 1.5, 95 + i);
        /* Deterministic: two products of the same input agree bit for bit. */
        double *xh = fixture_malloc(m->cols * 8), *yh = fixture_malloc(m->rows * 8);
        ocal_buffer x = make_block(tv, m->cols, 1, xh, 7), y1 = make_block(tv, m->rows, 1, yh, 8),
                    y2 = make_block(tv, m->rows, 1, yh, 8);
        ck_assert_ocal(ocal_spmv(OCAL_NO_TRANS, 1.0, a, x, 0.25, y1));
        ck_assert_ocal(ocal_spmv(OCAL_NO_TRANS, 1.0, a, x, 0.25, y2));
        size_t bytes = m->rows * ocal_dtype_size(tv);
        void *b1 = fixture_malloc(bytes), *b2 = fixture_malloc(bytes);
        ck_assert_ocal(ocal_buffer_read(y1, 0, m->rows, b1, NULL));
        ck_assert_ocal(ocal_buffer_read(y2, 0, m->rows, b2, NULL));
        ck_assert_msg(memcmp(b1, b2, bytes) == 0, "%s: two runs differ", kinds[i]);
        free(b1);
        free(b2);
        free(xh);
        free(yh);
        ocal_buffer_release(x);
        ocal_buffer_release(y1);
        ocal_buffer_release(y2);
        ocal_csr_release(a);
      }
  }
  unsetenv("OCAL_SPMV");
  fixture_reopen();
  for (size_t which = 0; which < sizeof mats / sizeof mats[0]; which++) hmat_free(&mats[which]);
}
END_TEST

/* Cache hints named through OCAL_SPMV_LOADS: the right products where the driver reports a
 * PTX compute capability; where it does not, the stream and merge kernels' products refused
 * before any build with OCAL_UNSUPPORTED, the message naming the setting, its value and the
 * fix, while block products (which take no hints) still compute; the automatic choice right
 * on both. */
START_TEST(test_spmv_load_hints) {
  hmat m = powerlaw_hmat(999, 1001, 2.0, 0, 500, 86);
  static const char *kinds[] = {"stream", "merge"};
  static const char *hints[] = {"cs", "cs-nc", "auto", "plain"};
  for (size_t kd = 0; kd < 2; kd++)
    for (size_t i = 0; i < sizeof hints / sizeof hints[0]; i++) {
      setenv("OCAL_SPMV", kinds[kd], 1);
      setenv("OCAL_SPMV_LOADS", hints[i], 1);
      fixture_reopen();
      int ptx = ocal__context_compute_capability(fixture_ctx) > 0;
      int named = i < 2;
      ocal_csr a = upload(&m, OCAL_F32, OCAL_I32);
      const char *name;
      ck_assert_ocal(ocal_csr_get_spmv_kernel(a, &name));
      ck_assert_str_eq(name, kinds[kd]);
      if (ptx || !named) {
        check_product(&m, OCAL_F32, a, 0, 1, 1.0, 0.5, 97);
      } else {
        size_t r = m.rows, c = m.cols;
        ocal_buffer x, y;
        ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &c, &x));
        ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &r, &y));
        ck_assert_ocal_fails(ocal_spmv(OCAL_NO_TRANS, 1.0, a, x, 0.0, y), OCAL_UNSUPPORTED);
        const char *e = ocal_last_error();
        char want[64];
        snprintf(want, sizeof want, "ocal_spmv: OCAL_SPMV_LOADS=%s names", hints[i]);
        ck_assert_msg(strstr(e, want) && strstr(e, "reports no PTX") &&
                          strstr(e, "unset OCAL_SPMV_LOADS, or set it to auto or plain"),
                      "%s", e);
        ck_assert_ocal_fails(ocal_spmm(OCAL_NO_TRANS, 1.0, a, x, 0.0, y), OCAL_UNSUPPORTED);
        ck_assert_msg(strstr(ocal_last_error(), "ocal_spmm: OCAL_SPMV_LOADS="), "%s",
                      ocal_last_error());
        ocal_buffer_release(x);
        ocal_buffer_release(y);
        /* Block products take no hints. */
        check_product(&m, OCAL_F32, a, 0, 3, 1.0, 0.5, 98);
      }
      ocal_csr_release(a);
    }
  unsetenv("OCAL_SPMV_LOADS");
  unsetenv("OCAL_SPMV");
  fixture_reopen();
  hmat_free(&m);
}
END_TEST

/* n = 1 and nnz = 0 (a matrix of zeros), in both precisions. */
START_TEST(test_spmv_degenerate) {
  for (int vi = 0; vi < 2; vi++) {
    ocal_dtype vt = vtypes[vi];
    if (!fixture_dtype_usable(vt)) continue;
    hmat one = random_hmat(1, 1, 1.0, 0, 0, 3);
    check_all_products(&one, vt, OCAL_I32, 60);
    hmat_free(&one);
    hmat zero = random_hmat(37, 23, 1.0, 1, SIZE_MAX, 4); /* every row empty */
    ck_assert_uint_eq(zero.nnz, 0);
    check_all_products(&zero, vt, OCAL_I64, 61);
    hmat_free(&zero);
  }
}
END_TEST

/* COO in shuffled order with duplicates equals the summed CSR. */
START_TEST(test_coo_unsorted_duplicates) {
  for (int vi = 0; vi < 2; vi++) {
    ocal_dtype vt = vtypes[vi];
    if (!fixture_dtype_usable(vt)) continue;
    for (int ii = 0; ii < 2; ii++) {
      ocal_dtype it = itypes[ii];
      hmat m = random_hmat(211, 157, 4.0, 9, 5, 70 + (uint64_t)ii);
      /* Each entry split in two halves (a duplicate pair), some in three, then shuffled. */
      size_t n = 0, cap = m.nnz * 3 + 1;
      int64_t *ri = fixture_malloc(cap * 8), *cj = fixture_malloc(cap * 8);
      double *val = fixture_malloc(cap * 8);
      uint64_t st = 99;
      for (size_t r = 0; r < m.rows; r++)
        for (int64_t j = m.rp[r]; j < m.rp[r + 1]; j++) {
          /* Values that f32 sums exactly: the reference keeps the f32 rounding. */
          m.v[j] = vround(vt, m.v[j]);
          int parts = 1 + (int)(fixture_random(&st) % 3);
          double piece = m.v[j] / 4;
          for (int p = 0; p < parts; p++) {
            ri[n] = (int64_t)r;
            cj[n] = m.ci[j];
            val[n++] = p == parts - 1 ? m.v[j] - piece * (parts - 1) : piece;
          }
        }
      for (size_t i = n; i > 1; i--) {
        size_t j = fixture_random(&st) % i;
        int64_t t = ri[i - 1]; ri[i - 1] = ri[j]; ri[j] = t;
        t = cj[i - 1]; cj[i - 1] = cj[j]; cj[j] = t;
        double d = val[i - 1]; val[i - 1] = val[j]; val[j] = d;
      }
      void *rip = idx_array(it, ri, n), *cjp = idx_array(it, cj, n), *vp = val_array(vt, val, n);
      ocal_csr a;
      ck_assert_ocal(ocal_csr_from_coo(fixture_ctx, vt, it, m.rows, m.cols, n, rip, cjp, vp, &a));
      size_t nnz;
      ck_assert_ocal(ocal_csr_get_nnz(a, &nnz));
      ck_assert_uint_eq(nnz, m.nnz);
      check_product(&m, vt, a, 0, 1, 1.0, 0.0, 80);
      check_product(&m, vt, a, 1, 5, 1.0, 1.0, 81);
      ocal_csr_release(a);
      free(rip); free(cjp); free(vp); free(ri); free(cj); free(val);
      hmat_free(&m);
    }
  }
}
END_TEST

/* From device buffers, and the queries. */
START_TEST(test_from_buffers_and_queries) {
  hmat m = random_hmat(100, 120, 3.0, 4, 10, 90);
  ocal_dtype vt = OCAL_F32;
  void *rp = idx_array(OCAL_I64, m.rp, m.rows + 1), *ci = idx_array(OCAL_I64, m.ci, m.nnz);
  void *v = val_array(vt, m.v, m.nnz);
  size_t nr = m.rows + 1, nz = m.nnz;
  ocal_buffer brp, bci, bv;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_I64, 1, &nr, rp, &brp));
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_I64, 1, &nz, ci, &bci));
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, vt, 1, &nz, v, &bv));
  ocal_csr a;
  ck_assert_ocal(ocal_csr_from_buffers(brp, bci, bv, m.cols, &a));
  size_t rows, cols, nnz;
  ocal_dtype qv, qi;
  ocal_context c;
  ck_assert_ocal(ocal_csr_get_shape(a, &rows, &cols));
  ck_assert_ocal(ocal_csr_get_nnz(a, &nnz));
  ck_assert_ocal(ocal_csr_get_dtypes(a, &qv, &qi));
  ck_assert_ocal(ocal_csr_get_context(a, &c));
  ck_assert_uint_eq(rows, 100);
  ck_assert_uint_eq(cols, 120);
  ck_assert_uint_eq(nnz, m.nnz);
  ck_assert_int_eq(qv, OCAL_F32);
  ck_assert_int_eq(qi, OCAL_I64);
  ck_assert_ptr_eq(c, fixture_ctx);
  /* The caller's buffers stay theirs: released before the matrix is used. */
  ocal_buffer_release(brp);
  ocal_buffer_release(bci);
  ocal_buffer_release(bv);
  check_product(&m, vt, a, 0, 1, 1.0, 0.0, 91);
  ocal_csr_release(a);
  free(rp); free(ci); free(v);
  hmat_free(&m);
}
END_TEST

/* A row_ptr whose type is no index type is refused as one (OCAL_UNSUPPORTED, as
 * ocal_csr_from_host refuses it), even when col_idx has another type: asking for the two
 * types to match would send the caller to a col_idx of a type that is refused too. */
START_TEST(test_from_buffers_index_type) {
  hmat m = random_hmat(37, 29, 3.0, 5, SIZE_MAX, (uint64_t)time(NULL));
  size_t nr = m.rows + 1, nz = m.nnz;
  float *rpf = fixture_malloc(nr * sizeof *rpf);
  uint32_t *rpu = fixture_malloc(nr * sizeof *rpu);
  for (size_t i = 0; i < nr; i++) {
    rpf[i] = (float)m.rp[i];
    rpu[i] = (uint32_t)m.rp[i];
  }
  void *rp32 = idx_array(OCAL_I32, m.rp, nr), *ci32 = idx_array(OCAL_I32, m.ci, nz);
  void *ci64 = idx_array(OCAL_I64, m.ci, nz), *v = val_array(OCAL_F32, m.v, nz);
  ocal_buffer bf, bu, brp, bci32, bci64, bv;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_F32, 1, &nr, rpf, &bf));
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_U32, 1, &nr, rpu, &bu));
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_I32, 1, &nr, rp32, &brp));
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_I32, 1, &nz, ci32, &bci32));
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_I64, 1, &nz, ci64, &bci64));
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_F32, 1, &nz, v, &bv));
  ocal_csr a = NULL;
  ck_assert_ocal_fails(ocal_csr_from_buffers(bf, bci32, bv, m.cols, &a), OCAL_UNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "index type f32"));
  ck_assert_ptr_null(a);
  ck_assert_ocal_fails(ocal_csr_from_buffers(bu, bci64, bv, m.cols, &a), OCAL_UNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "index type u32"));
  /* Two index types that differ are still a mismatch. */
  ck_assert_ocal_fails(ocal_csr_from_buffers(brp, bci64, bv, m.cols, &a), OCAL_TYPE_MISMATCH);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "row_ptr is i32 but col_idx is i64"));
  ck_assert_ocal(ocal_csr_from_buffers(brp, bci32, bv, m.cols, &a));
  size_t nnz;
  ck_assert_ocal(ocal_csr_get_nnz(a, &nnz));
  ck_assert_uint_eq(nnz, m.nnz);
  ocal_csr_release(a);
  ocal_buffer_release(bf);
  ocal_buffer_release(bu);
  ocal_buffer_release(brp);
  ocal_buffer_release(bci32);
  ocal_buffer_release(bci64);
  ocal_buffer_release(bv);
  free(rpf); free(rpu); free(rp32); free(ci32); free(ci64); free(v);
  hmat_free(&m);
}
END_TEST

/* A block product with X and Y of the right element counts but the wrong shapes (Y {k, m}
 * where {m, k} is needed) is refused, and the message shows the shapes it was given: the
 * counts alone matched what the message asked for. */
START_TEST(test_spmm_shape_message) {
  uint64_t st = (uint64_t)time(NULL);
  size_t rows = 3 + fixture_random(&st) % 20, cols = 2 + fixture_random(&st) % 20;
  size_t k = 2 + fixture_random(&st) % 7;
  if (k == rows) k++;
  hmat m = random_hmat(rows, cols, 2.0, 0, SIZE_MAX, st);
  void *rp = idx_array(OCAL_I32, m.rp, rows + 1), *ci = idx_array(OCAL_I32, m.ci, m.nnz);
  void *v = val_array(OCAL_F32, m.v, m.nnz);
  ocal_csr a;
  ck_assert_ocal(ocal_csr_from_host(fixture_ctx, OCAL_F32, OCAL_I32, rows, cols, rp, ci, v, &a));
  size_t xs[2] = {cols, k}, ys[2] = {k, rows}, good[2] = {rows, k};
  ocal_buffer x, y, y2;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 2, xs, &x));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 2, ys, &y));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 2, good, &y2));
  ck_assert_ocal_fails(ocal_spmm(OCAL_NO_TRANS, 1, a, x, 0, y), OCAL_SHAPE_MISMATCH);
  char want[64];
  snprintf(want, sizeof want, "Y is [%zu, %zu]", k, rows);
  ck_assert_msg(strstr(ocal_last_error(), want), "%s", ocal_last_error());
  snprintf(want, sizeof want, "X is [%zu, %zu]", cols, k);
  ck_assert_msg(strstr(ocal_last_error(), want), "%s", ocal_last_error());
  ck_assert_ocal(ocal_spmm(OCAL_NO_TRANS, 1, a, x, 0, y2));
  ocal_buffer_release(x);
  ocal_buffer_release(y);
  ocal_buffer_release(y2);
  ocal_csr_release(a);
  free(rp); free(ci); free(v);
  hmat_free(&m);
}
END_TEST

/* ---- Matrix Market ------------------------------------------------------------------- */

static char tmpdir[256];

static const char *write_tmp(const char *name, const char *text) {
  static char path[512];
  if (!tmpdir[0]) {
    snprintf(tmpdir, sizeof tmpdir, "%s/ocal-sparse-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
  }
  snprintf(path, sizeof path, "%s/%s", tmpdir, name);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
  return path;
}

static void remove_tmp(const char *path) {
  unlink(path);
  rmdir(tmpdir);
}

START_TEST(test_mtx_read) {
  /* A symmetric real file with comments and a duplicate; and a pattern general one. */
  const char *sym = "%%MatrixMarket matrix coordinate real symmetric\n"
                    "% a comment\n"
                    "%\n"
                    "3 3 5\n"
                    "1 1 4.0\n"
                    "2 1 -1.5\n"
                    "2 2 4\n"
                    "3 2 -1e0\n"
                    "3 3 2.5\n";
  const char *path = write_tmp("sym.mtx", sym);
  ocal_dtype vt = fixture_has_fp64() ? OCAL_F64 : OCAL_F32;
  ocal_csr a;
  ck_assert_ocal(ocal_csr_read_mtx(fixture_ctx, path, vt, OCAL_I32, &a));
  remove_tmp(path);
  size_t nnz;
  ck_assert_ocal(ocal_csr_get_nnz(a, &nnz));
  ck_assert_uint_eq(nnz, 7);
  hmat m = {3, 3, 7, NULL, NULL, NULL};
  int64_t rp[] = {0, 2, 5, 7}, ci[] = {0, 1, 0, 1, 2, 1, 2};
  double v[] = {4, -1.5, -1.5, 4, -1, -1, 2.5};
  m.rp = rp; m.ci = ci; m.v = v;
  check_product(&m, vt, a, 0, 1, 1.0, 0.0, 100);
  check_product(&m, vt, a, 0, 2, 1.0, 0.0, 101);
  ocal_csr_release(a);

  const char *pat = "%%MatrixMarket matrix coordinate pattern general\r\n"
                    "2 4 3\r\n"
                    "1 4\r\n"
                    "2 1\r\n"
                    "1 4\r\n";
  ocal__mtx mm;
  ck_assert_ocal(ocal__mtx_parse(pat, strlen(pat), &mm, "test"));
  ck_assert_uint_eq(mm.rows, 2);
  ck_assert_uint_eq(mm.cols, 4);
  ck_assert_uint_eq(mm.nnz, 3);
  ck_assert_int_eq(mm.ri[0], 0);
  ck_assert_int_eq(mm.cj[0], 3);
  ck_assert(mm.val[2] == 1.0);
  ocal__mtx_free(&mm);
  const char *whole = "%%MatrixMarket matrix coordinate integer symmetric\n"
                      "2 2 2\n"
                      "1 1 -7\n"
                      "2 1 +3\n";
  ck_assert_ocal(ocal__mtx_parse(whole, strlen(whole), &mm, "test"));
  ck_assert(mm.val[0] == -7.0 && mm.val[1] == 3.0);
  ocal__mtx_free(&mm);
  ck_assert_ocal(ocal_csr_from_coo(fixture_ctx, OCAL_F32, OCAL_I32, 2, 4, 0, NULL, NULL, NULL, &a));
  ocal_csr_release(a);
}
END_TEST

/* A value beyond f32's range in a file read as OCAL_F32 is refused, naming the entry and
 * OCAL_F64, instead of becoming an infinity; the same file reads as OCAL_F64, and values
 * within f32's range (up to FLT_MAX) read as OCAL_F32. */
START_TEST(test_mtx_f32_range) {
  uint64_t st = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull + 1;
  double big = ldexp(1.0 + urand(&st), 128 + (int)(fixture_random(&st) % 800));
  if (fixture_random(&st) & 1) big = -big;
  double ok = 3.0e38 * (urand(&st) * 2 - 1);
  int r = 1 + (int)(fixture_random(&st) % 3), c = 1 + (int)(fixture_random(&st) % 4);
  char text[256], want[64];
  snprintf(text, sizeof text,
           "%%%%MatrixMarket matrix coordinate real general\n3 4 2\n%d %d %.17g\n%d %d %.17g\n",
           r, c, big, r % 3 + 1, c, ok);
  snprintf(want, sizeof want, "(%d, %d)", r, c);
  const char *path = write_tmp("range.mtx", text);
  ocal_csr a = NULL;
  ck_assert_ocal_fails(ocal_csr_read_mtx(fixture_ctx, path, OCAL_F32, OCAL_I32, &a),
                       OCAL_INVALID_ARGUMENT);
  const char *msg = ocal_last_error();
  ck_assert_msg(strstr(msg, want) && strstr(msg, "OCAL_F64") && strstr(msg, "range.mtx"), "%s",
                msg);
  ck_assert_ptr_null(a);
  if (fixture_has_fp64()) {
    ck_assert_ocal(ocal_csr_read_mtx(fixture_ctx, path, OCAL_F64, OCAL_I32, &a));
    double one[4] = {0, 0, 0, 0}, y[3];
    one[c - 1] = 1;
    size_t four = 4, three = 3;
    ocal_buffer x, yb;
    ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_F64, 1, &four, one, &x));
    ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F64, 1, &three, &yb));
    ck_assert_ocal(ocal_spmv(OCAL_NO_TRANS, 1.0, a, x, 0.0, yb));
    ck_assert_ocal(ocal_buffer_read(yb, 0, 3, y, NULL));
    ck_assert(y[r - 1] == big && y[r % 3] == ok);
    ocal_buffer_release(x);
    ocal_buffer_release(yb);
    ocal_csr_release(a);
  }
  unlink(path); /* the directory stays for the next file */
  snprintf(text, sizeof text,
           "%%%%MatrixMarket matrix coordinate real general\n3 4 1\n%d %d %.9g\n", r, c,
           (double)FLT_MAX);
  path = write_tmp("max.mtx", text);
  ck_assert_ocal(ocal_csr_read_mtx(fixture_ctx, path, OCAL_F32, OCAL_I32, &a));
  ocal_csr_release(a);
  remove_tmp(path);
}
END_TEST

/* Malformed files: each an OCAL_INVALID_ARGUMENT naming the line. Parsed from memory
 * without a terminating NUL (a copy of exactly len bytes), as a fuzzer would. */
START_TEST(test_mtx_malformed) {
  static const struct {
    const char *text;
    const char *line; /* what the message must contain */
  } bad[] = {
      {"", "line 1"},
      {"hello\n", "line 1"},
      {"%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", "line 1"},
      {"%%MatrixMarket matrix coordinate complex general\n", "line 1"},
      {"%%MatrixMarket matrix coordinate real hermitian\n", "line 1"},
      {"%%MatrixMarket matrix coordinate real general\n% only comments\n", "line 2"},
      {"%%MatrixMarket matrix coordinate real general\n2 2\n", "line 2"},
      {"%%MatrixMarket matrix coordinate real general\n2 x 1\n1 1 1\n", "line 2"},
      {"%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n", "line 3"},
      {"%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1\n", "line 3"},
      {"%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n", "line 3"},
      {"%%MatrixMarket matrix coordinate real general\n2 2 1\n0 1 1\n", "line 3"},
      {"%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1 7\n", "line 3"},
      {"%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 abc\n", "line 3"},
      {"%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n2 2 2\n", "line 4"},
      {"%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n1 1 1\n", "line 2"},
      {"%%MatrixMarket matrix coordinate real general\n2 2 999999999999\n1 1 1\n", "line 2"},
      {"%%MatrixMarket matrix coordinate real general\n-2 2 1\n1 1 1\n", "line 2"},
      {"%%MatrixMarket matrix coordinate real general\n2 2 1\n1 99999999999999999999 1\n",
       "line 3"},
      {"%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 2.5\n",
       "line 3: an entry must be \"row column value\", the value a whole number"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    size_t len = strlen(bad[i].text);
    char *copy = fixture_malloc(len + 1);
    memcpy(copy, bad[i].text, len);
    ocal__mtx m;
    ocal_status s = ocal__mtx_parse(copy, len, &m, "ocal_csr_read_mtx");
    free(copy);
    ck_assert_msg(s == OCAL_INVALID_ARGUMENT, "case %zu: %s", i, ocal_status_name(s));
    ck_assert_msg(strstr(ocal_last_error(), bad[i].line) != NULL, "case %zu: message \"%s\"", i,
                  ocal_last_error());
  }
  /* A comment line of 1024 characters: refused, and the message says what the limit is. */
  {
    const char *head = "%%MatrixMarket matrix coordinate real general\n%";
    size_t hl = strlen(head), len = hl + 1023 + 12;
    char *text = fixture_malloc(len + 1);
    memcpy(text, head, hl);
    memset(text + hl, 'c', 1023);
    memcpy(text + hl + 1023, "\n1 1 1\n1 1 1", 12);
    ocal__mtx m;
    ck_assert_int_eq(ocal__mtx_parse(text, len, &m, "ocal_csr_read_mtx"), OCAL_INVALID_ARGUMENT);
    ck_assert_msg(strstr(ocal_last_error(), "line 2: the line is longer than 1023 characters"),
                  "%s", ocal_last_error());
    /* One character less is read. */
    memcpy(text + hl + 1022, "\n1 1 1\n1 1 1", 12);
    ck_assert_ocal(ocal__mtx_parse(text, len - 1, &m, "ocal_csr_read_mtx"));
    ocal__mtx_free(&m);
    free(text);
  }
  /* Through the file too: the path is named, and the context still works after. */
  const char *path = write_tmp("bad.mtx", bad[10].text);
  ocal_csr a = (ocal_csr)1;
  ck_assert_ocal_fails(ocal_csr_read_mtx(fixture_ctx, path, OCAL_F32, OCAL_I32, &a),
                       OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_null(a);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "bad.mtx"));
  remove_tmp(path);
  ck_assert_ocal_fails(ocal_csr_read_mtx(fixture_ctx, "/nonexistent/x.mtx", OCAL_F32, OCAL_I32, &a),
                       OCAL_IO_ERROR);
  /* A directory opens, and its read fails: the message says why. */
  ck_assert_ocal_fails(ocal_csr_read_mtx(fixture_ctx, "/", OCAL_F32, OCAL_I32, &a), OCAL_IO_ERROR);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "cannot read /"));
  hmat m = random_hmat(20, 20, 3.0, 0, SIZE_MAX, 5);
  check_all_products(&m, OCAL_F32, OCAL_I32, 5);
  hmat_free(&m);
}
END_TEST

/* ---- bad arguments ----------------------------------------------------------------- */

/* Under AddressSanitizer a failed allocation returns NULL, as malloc does, instead of ending
 * the process: test_coo_huge_rows checks what the library says when one fails. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

/* A COO matrix of 2^40 rows (one entry) needs 8 TiB of row pointers, more than any device's
 * largest buffer: refused before host memory is taken (a system that overcommits would hand
 * it out, and filling it would end the process), the message naming them and the count. */
START_TEST(test_coo_huge_rows) {
  int64_t ri[] = {0}, cj[] = {0};
  double v[] = {1};
  ocal_csr a = NULL;
  if (!fixture_dtype_usable(OCAL_F64)) return;
  ocal_status s = ocal_csr_from_coo(fixture_ctx, OCAL_F64, OCAL_I64, (size_t)1 << 40, 1, 1, ri,
                                    cj, v, &a);
  ck_assert_msg(s == OCAL_OUT_OF_DEVICE_MEMORY, "%s: %s",
                ocal_status_name(s), ocal_last_error());
  ck_assert_ptr_null(a);
  ck_assert_msg(strstr(ocal_last_error(), "row pointers") != NULL &&
                    strstr(ocal_last_error(), "1099511627777") != NULL,
                "%s", ocal_last_error());
}
END_TEST

/* An nnz whose 8-byte conversion arrays overflow size_t (2^61 + 1 entries: 8 bytes each wrap
 * to 8 bytes in all) is refused before any array is taken: no entry is read or written. */
START_TEST(test_coo_huge_nnz) {
  int64_t ri[] = {0, 1}, cj[] = {0, 1};
  double v[] = {1, 2};
  ocal_csr a = NULL;
  if (!fixture_dtype_usable(OCAL_F64)) return;
  size_t nnz = ((size_t)1 << 61) + 1;
  ocal_status s = ocal_csr_from_coo(fixture_ctx, OCAL_F64, OCAL_I64, 3, 3, nnz, ri, cj, v, &a);
  ck_assert_msg(s == OCAL_OUT_OF_HOST_MEMORY, "%s: %s", ocal_status_name(s), ocal_last_error());
  ck_assert_ptr_null(a);
  ck_assert_msg(strstr(ocal_last_error(), "ocal_csr_from_coo") != NULL &&
                    strstr(ocal_last_error(), "2305843009213693953") != NULL &&
                    strstr(ocal_last_error(), "entries") != NULL,
                "%s", ocal_last_error());
  /* The context works on. */
  ck_assert_ocal(ocal_csr_from_coo(fixture_ctx, OCAL_F64, OCAL_I64, 3, 3, 2, ri, cj, v, &a));
  ck_assert_ocal(ocal_csr_release(a));
}
END_TEST

START_TEST(test_bad_inputs) {
  ocal_context ctx = fixture_ctx;
  int32_t rp[] = {0, 2, 1, 3}, ci[] = {0, 1, 2}, ci_bad[] = {0, 1, 5};
  int32_t rp_ok[] = {0, 1, 2, 3};
  float v[] = {1, 2, 3};
  ocal_csr a = NULL;
  ck_assert_ocal_fails(ocal_csr_from_host(ctx, OCAL_F32, OCAL_I32, 3, 3, rp, ci, v, &a),
                       OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "row 1"));
  ck_assert_ocal_fails(ocal_csr_from_host(ctx, OCAL_F32, OCAL_I32, 3, 3, rp_ok, ci_bad, v, &a),
                       OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "entry 2 (row 2)"));
  ck_assert_ocal_fails(ocal_csr_from_host(ctx, OCAL_I32, OCAL_I32, 3, 3, rp_ok, ci, v, &a),
                       OCAL_UNSUPPORTED);
  ck_assert_ocal_fails(ocal_csr_from_host(ctx, OCAL_F32, OCAL_F32, 3, 3, rp_ok, ci, v, &a),
                       OCAL_UNSUPPORTED);
  ck_assert_ocal_fails(ocal_csr_from_host(ctx, OCAL_F32, OCAL_I32, 0, 3, rp_ok, ci, v, &a),
                       OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_csr_from_host(ctx, OCAL_F32, OCAL_I32, 3, 3, NULL, ci, v, &a),
                       OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_csr_from_host(NULL, OCAL_F32, OCAL_I32, 3, 3, rp_ok, ci, v, &a),
                       OCAL_INVALID_HANDLE);
  ck_assert_ocal_fails(ocal_csr_from_host(ctx, OCAL_F32, OCAL_I32, 3, 3, rp_ok, ci, v, NULL),
                       OCAL_INVALID_ARGUMENT);
  int32_t ri[] = {0, 3}, cj[] = {0, 0};
  ck_assert_ocal_fails(ocal_csr_from_coo(ctx, OCAL_F32, OCAL_I32, 3, 3, 2, ri, cj, v, &a),
                       OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "entry 1"));

  /* Products: shapes, types, handles, the transpose flag. */
  ocal_csr rect;
  int32_t rrp[] = {0, 1, 2}, rci[] = {0, 2};
  ck_assert_ocal(ocal_csr_from_host(ctx, OCAL_F32, OCAL_I32, 2, 3, rrp, rci, v, &rect));
  size_t n2 = 2, n3 = 3;
  ocal_buffer x2, x3, i3;
  ck_assert_ocal(ocal_buffer_zeros(ctx, OCAL_F32, 1, &n2, &x2));
  ck_assert_ocal(ocal_buffer_zeros(ctx, OCAL_F32, 1, &n3, &x3));
  ck_assert_ocal(ocal_buffer_zeros(ctx, OCAL_I32, 1, &n3, &i3));
  ck_assert_ocal_fails(ocal_spmv(OCAL_NO_TRANS, 1, rect, x2, 0, x2), OCAL_SHAPE_MISMATCH);
  ck_assert_ocal_fails(ocal_spmv(OCAL_NO_TRANS, 1, rect, i3, 0, x2), OCAL_TYPE_MISMATCH);
  ck_assert_ocal_fails(ocal_spmv((ocal_transpose)7, 1, rect, x3, 0, x2), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_spmv(OCAL_NO_TRANS, 1, NULL, x3, 0, x2), OCAL_INVALID_HANDLE);
  ck_assert_ocal_fails(ocal_spmv(OCAL_NO_TRANS, 1, rect, NULL, 0, x2), OCAL_INVALID_HANDLE);
  ck_assert_ocal_fails(ocal_spmm(OCAL_NO_TRANS, 1, rect, x2, 0, x3), OCAL_SHAPE_MISMATCH);
  ck_assert_ocal(ocal_spmv(OCAL_TRANS, 1, rect, x2, 0, x3));
  /* Non-square: no operator, no diagonal. */
  ocal_operator op;
  ck_assert_ocal_fails(ocal_operator_from_csr(rect, &op), OCAL_SHAPE_MISMATCH);
  ck_assert_ocal_fails(ocal_csr_diagonal(rect, x2), OCAL_SHAPE_MISMATCH);
  ck_assert_ocal_fails(ocal_csr_get_shape(rect, NULL, NULL), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_csr_get_nnz(NULL, NULL), OCAL_INVALID_HANDLE);
  ck_assert_ocal(ocal_csr_release(NULL));
  ck_assert_ocal(ocal_csr_release(rect));
  ocal_buffer_release(x2);
  ocal_buffer_release(x3);
  ocal_buffer_release(i3);

  /* The context is usable after all of that. */
  hmat m = random_hmat(50, 50, 3.0, 0, SIZE_MAX, 6);
  check_all_products(&m, OCAL_F32, OCAL_I32, 6);
  hmat_free(&m);
}
END_TEST

/* The diagonal of a matrix with a duplicate-free diagonal and missing diagonal entries. */
START_TEST(test_diagonal) {
  hmat m = random_hmat(300, 300, 5.0, 11, 3, 7);
  ocal_csr a = upload(&m, OCAL_F32, OCAL_I32);
  size_t n = 300;
  ocal_buffer d;
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 1, &n, &d));
  ck_assert_ocal(ocal_csr_diagonal(a, d));
  double got[300];
  read_block(d, OCAL_F32, 300, got);
  for (size_t r = 0; r < 300; r++) {
    double want = 0;
    for (int64_t j = m.rp[r]; j < m.rp[r + 1]; j++)
      if (m.ci[j] == (int64_t)r) want += (double)(float)m.v[j];
    EXPECT(got[r] == want, "row %zu: %g, want %g", r, got[r], want);
  }
  ocal_buffer_release(d);
  ocal_csr_release(a);
  hmat_free(&m);
}
END_TEST


/* ---- conjugate gradients --------------------------------------------------------------- */

/* The 2-D 5-point Laplacian of an nx x ny grid (Dirichlet), with int64 indices. */
static hmat laplacian_2d(size_t nx, size_t ny) {
  size_t n = nx * ny;
  hmat m = {n, n, 0, NULL, NULL, NULL};
  m.rp = fixture_malloc((n + 1) * 8);
  m.ci = fixture_malloc(5 * n * 8);
  m.v = fixture_malloc(5 * n * 8);
  m.rp[0] = 0;
  for (size_t i = 0; i < nx; i++)
    for (size_t j = 0; j < ny; j++) {
      size_t r = i * ny + j;
      if (i > 0) { m.ci[m.nnz] = (int64_t)(r - ny); m.v[m.nnz++] = -1; }
      if (j > 0) { m.ci[m.nnz] = (int64_t)(r - 1); m.v[m.nnz++] = -1; }
      m.ci[m.nnz] = (int64_t)r; m.v[m.nnz++] = 4;
      if (j + 1 < ny) { m.ci[m.nnz] = (int64_t)(r + 1); m.v[m.nnz++] = -1; }
      if (i + 1 < nx) { m.ci[m.nnz] = (int64_t)(r + ny); m.v[m.nnz++] = -1; }
      m.rp[r + 1] = (int64_t)m.nnz;
    }
  return m;
}

/* A random SPD matrix: B + B^T with a dominant diagonal of widely varying size (so that
 * Jacobi helps). */
static hmat random_spd(size_t n, uint64_t seed) {
  hmat b = random_hmat(n, n, 3.0, 0, SIZE_MAX, seed);
  /* Dense host copy is fine at the test sizes. */
  double *d = calloc(n * n, 8);
  for (size_t r = 0; r < n; r++)
    for (int64_t j = b.rp[r]; j < b.rp[r + 1]; j++) {
      d[r * n + (size_t)b.ci[j]] += b.v[j];
      d[(size_t)b.ci[j] * n + r] += b.v[j];
    }
  uint64_t st = seed;
  for (size_t r = 0; r < n; r++) {
    double off = 0;
    for (size_t c = 0; c < n; c++)
      if (c != r) off += fabs(d[r * n + c]);
    d[r * n + r] = (off + 0.5) * (1 + 99 * urand(&st));
  }
  hmat m = {n, n, 0, fixture_malloc((n + 1) * 8), NULL, NULL};
  size_t cnt = 0;
  for (size_t i = 0; i < n * n; i++) cnt += d[i] != 0;
  m.ci = fixture_malloc(cnt * 8);
  m.v = fixture_malloc(cnt * 8);
  m.rp[0] = 0;
  for (size_t r = 0; r < n; r++) {
    for (size_t c = 0; c < n; c++)
      if (d[r * n + c] != 0) {
        m.ci[m.nnz] = (int64_t)c;
        m.v[m.nnz++] = d[r * n + c];
      }
    m.rp[r + 1] = (int64_t)m.nnz;
  }
  free(d);
  hmat_free(&b);
  return m;
}

/* Solves A x = A u for a random u and checks x against u through the true residual. */
static size_t check_cg(const hmat *m, ocal_dtype vt, ocal_cg_precond pc, double rtol,
                       int use_operator_diag) {
  ocal_csr a = upload(m, vt, OCAL_I32);
  ocal_operator op;
  ck_assert_ocal(ocal_operator_from_csr(a, &op));
  size_t n = m->rows;
  double *u = fixture_malloc(n * 8), *bh = calloc(n, 8), *xh = fixture_malloc(n * 8);
  uint64_t st = 5;
  for (size_t i = 0; i < n; i++) u[i] = urand(&st) * 2 - 1;
  for (size_t r = 0; r < n; r++)
    for (int64_t j = m->rp[r]; j < m->rp[r + 1]; j++) bh[r] += vround(vt, m->v[j]) * u[m->ci[j]];
  void *bp = val_array(vt, bh, n);
  ocal_buffer b, x, diag = NULL;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, vt, 1, &n, bp, &b));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, vt, 1, &n, &x));
  ocal_cg_options o;
  ck_assert_ocal(ocal_cg_options_init(&o));
  o.rtol = rtol;
  o.precond = pc;
  if (pc == OCAL_PRECOND_JACOBI && !use_operator_diag) {
    ck_assert_ocal(ocal_buffer_create(fixture_ctx, vt, 1, &n, &diag));
    ck_assert_ocal(ocal_csr_diagonal(a, diag));
    o.diagonal = diag;
  }
  ocal_cg_result res = {sizeof res};
  ck_assert_ocal(ocal_cg(&op, b, x, &o, &res));
  ck_assert_int_eq(res.converged, 1);
  read_block(x, vt, n, xh);
  double rn = 0, bn = 0;
  for (size_t r = 0; r < n; r++) {
    double ax = 0;
    for (int64_t j = m->rp[r]; j < m->rp[r + 1]; j++) ax += vround(vt, m->v[j]) * xh[m->ci[j]];
    rn += (bh[r] - ax) * (bh[r] - ax);
    bn += bh[r] * bh[r];
  }
  rn = sqrt(rn);
  bn = sqrt(bn);
  /* The recurrence's residual drifts from the true one by rounding; f32 gets room for it. */
  double slack = vt == OCAL_F32 ? 1e-5 * 30 : 1e-12;
  EXPECT(rn <= rtol * bn * 2 + slack * bn, "%s: true residual %g, ||b|| %g, rtol %g",
         ocal_dtype_name(vt), rn, bn, rtol);
  EXPECT(fabs(res.b_norm - bn) <= 1e-5 * bn, "b_norm %g vs %g", res.b_norm, bn);
  EXPECT(res.residual_norm <= rtol * bn * 1.0001, "reported residual %g", res.residual_norm);
  ocal_buffer_release(b);
  ocal_buffer_release(x);
  ocal_buffer_release(diag);
  ocal_csr_release(a);
  free(bp); free(u); free(bh); free(xh);
  return res.iterations;
}

START_TEST(test_cg_spd) {
  hmat lap = laplacian_2d(23, 17);
  hmat spd = random_spd(301, 8);
  for (int vi = 0; vi < 2; vi++) {
    ocal_dtype vt = vtypes[vi];
    if (!fixture_dtype_usable(vt)) continue;
    double rtol = vt == OCAL_F32 ? 1e-5 : 1e-10;
    size_t it_lap = check_cg(&lap, vt, OCAL_PRECOND_NONE, rtol, 0);
    EXPECT(it_lap > 5 && it_lap < 200, "Laplacian: %zu iterations", it_lap);
    size_t it_none = check_cg(&spd, vt, OCAL_PRECOND_NONE, rtol, 0);
    size_t it_jac = check_cg(&spd, vt, OCAL_PRECOND_JACOBI, rtol, vi);
    /* The diagonal varies 100-fold: Jacobi must help. */
    EXPECT(it_jac < it_none, "Jacobi %zu iterations, none %zu", it_jac, it_none);
  }
  hmat_free(&lap);
  hmat_free(&spd);
}
END_TEST

/* A badly scaled SPD system: diag(10^(span * i / (n - 1))), a unit-scale b and x0 = 1, so
 * r0 = b - A x0 is span-sized while the tolerance is ||b||-sized. The recurrence residual
 * then drifts far below what the rounding of A x allows: ocal_cg may only claim
 * convergence when ||b - A x|| computed on the host meets the tolerance, and must report
 * the true residual it checked. Run directly, as the matrix, and as a callback. */
typedef struct csr_cb {
  ocal_csr a;
} csr_cb;

static ocal_status csr_cb_apply(void *user, ocal_buffer x, ocal_buffer y) {
  return ocal_spmm(OCAL_NO_TRANS, 1.0, ((csr_cb *)user)->a, x, 0.0, y);
}

static void check_cg_ill_scaled(ocal_dtype vt, double span, ocal_cg_precond pc, int callback,
                                int expect_ok) {
  const size_t n = 100;
  hmat m = {n, n, n, fixture_malloc((n + 1) * 8), fixture_malloc(n * 8), fixture_malloc(n * 8)};
  for (size_t i = 0; i <= n; i++) m.rp[i] = (int64_t)i;
  double *bh = fixture_malloc(n * 8), *ones = fixture_malloc(n * 8), *xh = fixture_malloc(n * 8);
  uint64_t st = 17;
  for (size_t i = 0; i < n; i++) {
    m.ci[i] = (int64_t)i;
    m.v[i] = pow(10.0, span * (double)i / (double)(n - 1));
    bh[i] = urand(&st) * 2 - 1;
    ones[i] = 1;
  }
  ocal_csr a = upload(&m, vt, OCAL_I32);
  csr_cb cb = {a};
  ocal_operator op;
  ck_assert_ocal(ocal_operator_from_csr(a, &op));
  if (callback) {
    op.apply = csr_cb_apply;
    op.user = &cb;
  }
  void *bp = val_array(vt, bh, n), *xp = val_array(vt, ones, n);
  ocal_buffer b, x, diag = NULL;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, vt, 1, &n, bp, &b));
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, vt, 1, &n, xp, &x));
  ocal_cg_options o;
  ck_assert_ocal(ocal_cg_options_init(&o));
  o.use_x0 = 1;
  o.precond = pc;
  if (pc == OCAL_PRECOND_JACOBI && callback) {
    ck_assert_ocal(ocal_buffer_create(fixture_ctx, vt, 1, &n, &diag));
    ck_assert_ocal(ocal_csr_diagonal(a, diag));
    o.diagonal = diag;
  }
  ocal_cg_result res = {.struct_size = sizeof res};
  ocal_status s = ocal_cg(&op, b, x, &o, &res);
  read_block(x, vt, n, xh);
  double rn = 0, bn = 0;
  for (size_t i = 0; i < n; i++) {
    double r = vround(vt, bh[i]) - vround(vt, m.v[i]) * xh[i];
    rn += r * r;
    bn += vround(vt, bh[i]) * vround(vt, bh[i]);
  }
  rn = sqrt(rn);
  bn = sqrt(bn);
  double tol = o.rtol * bn;
  const char *what = callback ? "callback" : pc == OCAL_PRECOND_JACOBI ? "Jacobi" : "plain";
  EXPECT(s == OCAL_OK || s == OCAL_NOT_CONVERGED, "%s: %s", what, ocal_last_error());
  if (s == OCAL_OK) {
    EXPECT(res.converged == 1, "%s: OCAL_OK without converged", what);
    /* The true residual of the returned x, up to the rounding of this host check. */
    EXPECT(rn <= tol * 1.01, "%s %s: OCAL_OK but ||b - A x|| = %g > tol %g (recurrence %g)",
           ocal_dtype_name(vt), what, rn, tol, res.residual_norm);
  } else {
    EXPECT(res.converged == 0, "%s: OCAL_NOT_CONVERGED with converged", what);
    EXPECT(strstr(ocal_last_error(), "true residual") != NULL, "%s: message %s", what,
           ocal_last_error());
  }
  EXPECT(expect_ok == (s == OCAL_OK), "%s %s span 1e%g: %s (%s)", ocal_dtype_name(vt), what,
         span, ocal_status_name(s), ocal_last_error());
  EXPECT(fabs(res.true_residual_norm - rn) <= 1e-3 * rn + 1e-3 * tol,
         "%s: reported true residual %g, host %g", what, res.true_residual_norm, rn);
  ocal_buffer_release(b);
  ocal_buffer_release(x);
  ocal_buffer_release(diag);
  ocal_csr_release(a);
  hmat_free(&m);
  free(bp); free(xp); free(bh); free(ones); free(xh);
}

START_TEST(test_cg_true_residual) {
  if (!fixture_dtype_usable(OCAL_F64)) return;
  /* 1e20: Jacobi's recurrence claims 1e-14 after two iterations while ||b - A x|| is 50
   * ||b||; the restart from the true residual solves the diagonal system exactly. Plain CG
   * cannot reach the tolerance from x0 = 1 and must say so, with the true residual. */
  check_cg_ill_scaled(OCAL_F64, 20, OCAL_PRECOND_JACOBI, 0, 1);
  check_cg_ill_scaled(OCAL_F64, 20, OCAL_PRECOND_JACOBI, 1, 1);
  check_cg_ill_scaled(OCAL_F64, 20, OCAL_PRECOND_NONE, 0, 0);
  check_cg_ill_scaled(OCAL_F64, 20, OCAL_PRECOND_NONE, 1, 0);
  /* 1e3: an ordinary system converges as before, the true residual confirming it. */
  check_cg_ill_scaled(OCAL_F64, 3, OCAL_PRECOND_NONE, 0, 1);
  check_cg_ill_scaled(OCAL_F64, 3, OCAL_PRECOND_NONE, 1, 1);
}
END_TEST

/* A user callback as the operator: y = 2 A x through ocal_spmm, counted. */
typedef struct twice {
  ocal_csr a;
  int calls;
} twice;

static ocal_status twice_apply(void *user, ocal_buffer x, ocal_buffer y) {
  twice *t = user;
  t->calls++;
  return ocal_spmm(OCAL_NO_TRANS, 2.0, t->a, x, 0.0, y);
}

START_TEST(test_cg_callback_and_failures) {
  hmat lap = laplacian_2d(15, 15);
  ocal_csr a = upload(&lap, OCAL_F32, OCAL_I64);
  twice t = {a, 0};
  ocal_operator op = {lap.rows, OCAL_F32, twice_apply, &t, NULL};
  size_t n = lap.rows;
  ocal_buffer b, x;
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 1, &n, &b));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 1, &n, &x));
  ck_assert_ocal(ocal_random_uniform(3, 0, -1, 1, b));
  ocal_cg_result res = {sizeof res};
  ck_assert_ocal(ocal_cg(&op, b, x, NULL, &res));
  ck_assert_int_eq(res.converged, 1);
  /* One product per iteration, and one for the true residual. */
  ck_assert_int_eq(t.calls, (int)res.iterations + 1);
  /* 2 A x = b: check A x = b / 2 with ocal_spmv. */
  float *xh = fixture_malloc(n * 4), *bh = fixture_malloc(n * 4), *ax = fixture_malloc(n * 4);
  ocal_buffer y;
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 1, &n, &y));
  ck_assert_ocal(ocal_spmv(OCAL_NO_TRANS, 2.0, a, x, 0.0, y));
  ck_assert_ocal(ocal_buffer_read(y, 0, n, ax, NULL));
  ck_assert_ocal(ocal_buffer_read(b, 0, n, bh, NULL));
  double rn = 0, bn = 0;
  for (size_t i = 0; i < n; i++) {
    rn += (double)(ax[i] - bh[i]) * (ax[i] - bh[i]);
    bn += (double)bh[i] * bh[i];
  }
  EXPECT(sqrt(rn) <= 3e-5 * sqrt(bn), "residual %g of %g", sqrt(rn), sqrt(bn));

  /* x over b (the same buffer, or views of one): refused, b left as it was. */
  ck_assert_ocal_fails(ocal_cg(&op, b, b, NULL, &res), OCAL_INVALID_ARGUMENT);
  ck_assert_msg(strstr(ocal_last_error(), "b and x overlap") != NULL, "%s", ocal_last_error());
  {
    size_t twon = 2 * n;
    ocal_buffer both, lo, hi;
    ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &twon, &both));
    ck_assert_ocal(ocal_buffer_view(both, 0, 1, &n, &lo));
    /* Views sharing all but one element, or one element, are refused; views that only
     * touch share none and solve (b = 0 there: x = 0 at once). */
    const size_t shifts[] = {1, n - 1, n};
    for (int i = 0; i < 3; i++) {
      ck_assert_ocal(ocal_buffer_view(both, shifts[i], 1, &n, &hi));
      if (shifts[i] < n)
        ck_assert_ocal_fails(ocal_cg(&op, lo, hi, NULL, &res), OCAL_INVALID_ARGUMENT);
      else
        ck_assert_ocal(ocal_cg(&op, lo, hi, NULL, &res));
      ocal_buffer_release(hi);
    }
    ocal_buffer_release(lo);
    ocal_buffer_release(both);
  }
  float *bh2 = fixture_malloc(n * 4);
  ck_assert_ocal(ocal_buffer_read(b, 0, n, bh2, NULL));
  ck_assert_int_eq(memcmp(bh2, bh, n * 4), 0);
  free(bh2);

  /* Too few iterations: OCAL_NOT_CONVERGED, the last iterate in x (from x0 = 0: not 0). */
  ocal_cg_options o;
  ocal_cg_options_init(&o);
  o.max_iter = 3;
  ck_assert_ocal_fails(ocal_cg(&op, b, x, &o, &res), OCAL_NOT_CONVERGED);
  ck_assert_uint_eq(res.iterations, 3);
  ck_assert_int_eq(res.converged, 0);
  ck_assert(res.residual_norm > 0);
  ck_assert_ocal(ocal_buffer_read(x, 0, n, xh, NULL));
  double xn = 0;
  for (size_t i = 0; i < n; i++) xn += fabs(xh[i]);
  ck_assert(xn > 0);
  /* Starting from that iterate (use_x0) finishes the job. */
  o.max_iter = 0;
  o.use_x0 = 1;
  ck_assert_ocal(ocal_cg(&op, b, x, &o, &res));

  /* A negative definite operator, bad options, mismatched vectors. */
  ocal_csr neg;
  hmat m = lap;
  double *nv = fixture_malloc(lap.nnz * 8);
  for (size_t i = 0; i < lap.nnz; i++) nv[i] = -lap.v[i];
  m.v = nv;
  neg = upload(&m, OCAL_F32, OCAL_I32);
  ocal_operator nop;
  ck_assert_ocal(ocal_operator_from_csr(neg, &nop));
  ck_assert_ocal_fails(ocal_cg(&nop, b, x, NULL, &res), OCAL_NOT_CONVERGED);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "positive definite"));
  /* After a breakdown x is not an iterate worth a residual: the header promises NaN. */
  ck_assert(isnan(res.true_residual_norm));
  ck_assert_int_eq(res.converged, 0);
  ocal_cg_options_init(&o);
  o.precond = OCAL_PRECOND_JACOBI;
  ck_assert_ocal_fails(ocal_cg(&nop, b, x, &o, &res), OCAL_NOT_CONVERGED);
  ck_assert(isnan(res.true_residual_norm));
  ck_assert_ocal_fails(ocal_cg(&op, b, x, &o, &res), OCAL_INVALID_ARGUMENT); /* no diagonal */
  ocal_cg_options_init(&o);
  o.struct_size = 3;
  ck_assert_ocal_fails(ocal_cg(&op, b, x, &o, &res), OCAL_INVALID_ARGUMENT);
  o.struct_size = sizeof o;
  o.rtol = -1;
  ck_assert_ocal_fails(ocal_cg(&op, b, x, &o, &res), OCAL_INVALID_ARGUMENT);
  ocal_cg_options_init(&o);
  o.use_x0 = 3;
  ck_assert_ocal_fails(ocal_cg(&op, b, x, &o, &res), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "use_x0 is 3"));
  ck_assert_ocal_fails(ocal_cg(NULL, b, x, NULL, &res), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_cg(&op, b, NULL, NULL, &res), OCAL_INVALID_HANDLE);
  size_t n2 = n - 1;
  ocal_buffer shortb;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &n2, &shortb));
  ck_assert_ocal_fails(ocal_cg(&op, shortb, x, NULL, &res), OCAL_SHAPE_MISMATCH);
  if (fixture_has_fp64()) {
    ocal_buffer bd;
    ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F64, 1, &n, &bd));
    ck_assert_ocal_fails(ocal_cg(&op, bd, x, NULL, &res), OCAL_TYPE_MISMATCH);
    ocal_buffer_release(bd);
  }
  /* An operator of a type the solvers do not take: OCAL_UNSUPPORTED, as the header lists. */
  {
    ocal_operator iop = {n, OCAL_I32, twice_apply, &t, NULL};
    ocal_buffer bi, xi;
    ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_I32, 1, &n, &bi));
    ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_I32, 1, &n, &xi));
    ck_assert_ocal_fails(ocal_cg(&iop, bi, xi, NULL, &res), OCAL_UNSUPPORTED);
    ck_assert_msg(strstr(ocal_last_error(), "ocal_cg: operator A has type i32; use OCAL_F32 or "
                                            "OCAL_F64"), "%s", ocal_last_error());
    ocal_buffer_release(bi);
    ocal_buffer_release(xi);
  }
  /* b = 0 gives x = 0 at once; the context still works. */
  ocal_buffer_release(y);
  ocal_buffer zb;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &n, &zb));
  ck_assert_ocal(ocal_cg(&op, zb, x, NULL, &res));
  ck_assert_uint_eq(res.iterations, 0);
  ocal_buffer_release(zb);
  ocal_buffer_release(shortb);
  ocal_buffer_release(b);
  ocal_buffer_release(x);
  ocal_csr_release(neg);
  ocal_csr_release(a);
  free(nv); free(xh); free(bh); free(ax);
  hmat_free(&lap);
}
END_TEST

/* ---- LOBPCG ---------------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The eigenvalues of the nx x ny Dirichlet Laplacian (ny = 0: 1-D), sorted ascending. */
static double *laplacian_eigenvalues(size_t nx, size_t ny) {
  const double pi = 3.14159265358979323846;
  size_t cnt = nx * (ny ? ny : 1);
  double *e = fixture_malloc(cnt * 8);
  for (size_t i = 0; i < nx; i++)
    for (size_t j = 0; j < (ny ? ny : 1); j++) {
      double a = sin(pi * (double)(i + 1) / (2.0 * (double)(nx + 1)));
      double v = 4 * a * a;
      if (ny) {
        double b = sin(pi * (double)(j + 1) / (2.0 * (double)(ny + 1)));
        v += 4 * b * b;
      }
      e[i * (ny ? ny : 1) + j] = v;
    }
  qsort(e, cnt, 8, cmp_double);
  return e;
}

static hmat laplacian_1d(size_t n) {
  hmat m = {n, n, 0, fixture_malloc((n + 1) * 8), fixture_malloc(3 * n * 8), fixture_malloc(3 * n * 8)};
  m.rp[0] = 0;
  for (size_t r = 0; r < n; r++) {
    if (r > 0) { m.ci[m.nnz] = (int64_t)r - 1; m.v[m.nnz++] = -1; }
    m.ci[m.nnz] = (int64_t)r; m.v[m.nnz++] = 2;
    if (r + 1 < n) { m.ci[m.nnz] = (int64_t)r + 1; m.v[m.nnz++] = -1; }
    m.rp[r + 1] = (int64_t)m.nnz;
  }
  return m;
}

/* Runs LOBPCG for k pairs and checks the eigenvalues against want (k values), the residual
 * norms it reports against a host recomputation, and the B-orthonormality of the vectors. */
/* How check_lobpcg forms the Gram products: -1 as the library picks, 0 ocal_gemm, 1 the
 * dedicated kernels (ocal__lobpcg_tuning.gram_kernel). */
static int check_gram_kernel = -1;

static void check_lobpcg(const hmat *m, ocal_dtype vt, size_t k, int largest, const double *want,
                         double rel, const double *bdiag, size_t max_iter) {
  ocal_csr a = upload(m, vt, OCAL_I32);
  ocal_operator op, bop;
  ck_assert_ocal(ocal_operator_from_csr(a, &op));
  size_t n = m->rows;
  ocal_csr bm = NULL;
  ocal_lobpcg_options o;
  ck_assert_ocal(ocal_lobpcg_options_init(&o));
  o.largest = largest;
  o.max_iter = max_iter;
  o.seed = 42;
  o.tol = vt == OCAL_F32 ? 1e-3 : 1e-7;
  if (bdiag) {
    int64_t *rp = fixture_malloc((n + 1) * 8), *ci = fixture_malloc(n * 8);
    for (size_t i = 0; i <= n; i++) rp[i] = (int64_t)i;
    for (size_t i = 0; i < n; i++) ci[i] = (int64_t)i;
    hmat b = {n, n, n, rp, ci, (double *)bdiag};
    bm = upload(&b, vt, OCAL_I32);
    ck_assert_ocal(ocal_operator_from_csr(bm, &bop));
    o.b = &bop;
    free(rp);
    free(ci);
  }
  size_t shape[2] = {n, k};
  ocal_buffer x;
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, vt, 2, shape, &x));
  double ev[64], rn[64];
  ocal_lobpcg_result res = {sizeof res};
  ocal__lobpcg_tuning tuning = {check_gram_kernel, NULL};
  ck_assert_ocal(ocal__lobpcg_run(&op, x, &o, &tuning, ev, rn, &res));
  ck_assert_uint_eq(res.converged, k);
  ck_assert_int_eq(res.stop, OCAL_LOBPCG_CONVERGED);
  for (size_t i = 0; i < k; i++)
    EXPECT(fabs(ev[i] - want[i]) <= rel * fabs(want[i]),
           "%s %s eigenvalue %zu: %.15g, want %.15g (rel %.3g, %zu iterations)",
           ocal_dtype_name(vt), largest ? "largest" : "smallest", i, ev[i], want[i],
           fabs(ev[i] - want[i]) / fabs(want[i]), res.iterations);
  /* Host check of the vectors: A x - lambda B x and X^T B X = I. */
  double *xh = fixture_malloc(n * k * 8);
  read_block(x, vt, n * k, xh);
  for (size_t q = 0; q < k; q++) {
    double r2 = 0;
    for (size_t r = 0; r < n; r++) {
      double ax = 0;
      for (int64_t j = m->rp[r]; j < m->rp[r + 1]; j++) ax += vround(vt, m->v[j]) * xh[(size_t)m->ci[j] * k + q];
      double bx = (bdiag ? vround(vt, bdiag[r]) : 1.0) * xh[r * k + q];
      r2 += (ax - ev[q] * bx) * (ax - ev[q] * bx);
    }
    EXPECT(fabs(sqrt(r2) - rn[q]) <= 1e-2 * rn[q] + (vt == OCAL_F32 ? 1e-4 : 1e-10),
           "residual %zu: host %g, reported %g", q, sqrt(r2), rn[q]);
    for (size_t p = 0; p < k; p++) {
      double d = 0;
      for (size_t r = 0; r < n; r++) d += xh[r * k + q] * (bdiag ? bdiag[r] : 1.0) * xh[r * k + p];
      EXPECT(fabs(d - (p == q)) <= (vt == OCAL_F32 ? 1e-3 : 1e-8), "X^T B X [%zu, %zu] = %g", q, p, d);
    }
  }
  free(xh);
  ocal_buffer_release(x);
  ocal_csr_release(a);
  ocal_csr_release(bm);
}

/* 1-D and 2-D Laplacians, smallest and largest, both precisions. */
START_TEST(test_lobpcg_laplacian) {
  hmat l1 = laplacian_1d(60);
  double *e1 = laplacian_eigenvalues(60, 0);
  hmat l2 = laplacian_2d(23, 19);
  double *e2 = laplacian_eigenvalues(23, 19);
  double want[8];
  /* Both ways of forming the Gram matrices: ocal_gemm and the dedicated kernel. */
  for (int gi = 0; gi < 4; gi++) {
    check_gram_kernel = gi / 2;
    int vi = gi % 2;
    ocal_dtype vt = vtypes[vi];
    if (!fixture_dtype_usable(vt)) continue;
    double rel = vt == OCAL_F32 ? 1e-4 : 1e-8;
    /* 2-D, the 6 smallest and the 4 largest. */
    check_lobpcg(&l2, vt, 6, 0, e2, rel, NULL, 200);
    for (int i = 0; i < 4; i++) want[i] = e2[23 * 19 - 1 - i];
    check_lobpcg(&l2, vt, 4, 1, want, rel, NULL, 200);
    /* 1-D: the 3 largest (well separated). */
    for (int i = 0; i < 3; i++) want[i] = e1[59 - i];
    check_lobpcg(&l1, vt, 3, 1, want, rel, NULL, 400);
  }
  check_gram_kernel = -1;
  hmat_free(&l1);
  hmat_free(&l2);
  free(e1);
  free(e2);
}
END_TEST

/* Generalised: A x = lambda B x with B = diag(b) and A = diag(b) L: then the eigenvalues are
 * the Laplacian's (L x = lambda x) when A is symmetric, so take A = D L D and B = D^2 with
 * y = D x: D L D x = lambda D^2 x  <=>  L y = lambda y. */
/* The host-side profile of one run (ocal__lobpcg_tuning.profile): every device call is counted, the
 * counts are per iteration, and the line it prints is the overhead figure of docs/sparse.md
 * (per iteration: GEMMs, blocking reads, uploads, buffer allocations, and their times). */
START_TEST(test_lobpcg_profile) {
  if (!fixture_dtype_usable(OCAL_F64)) return;
  hmat l2 = laplacian_2d(40, 40);
  ocal_csr a = upload(&l2, OCAL_F64, OCAL_I32);
  ocal_operator op;
  ck_assert_ocal(ocal_operator_from_csr(a, &op));
  ocal_lobpcg_options o;
  ck_assert_ocal(ocal_lobpcg_options_init(&o));
  o.seed = 7;
  o.tol = 1e-6;
  o.max_iter = 400;
  size_t shape[2] = {l2.rows, 8};
  ocal_buffer x;
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F64, 2, shape, &x));
  double ev[8], rn[8];
  ocal_lobpcg_result res = {sizeof res};
  for (int gk = 0; gk < 2; gk++) {
    ocal__lobpcg_profile prof = {0};
    ocal__lobpcg_tuning tuning = {gk, &prof};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ocal_status st = ocal__lobpcg_run(&op, x, &o, &tuning, ev, rn, &res);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ck_assert(st == OCAL_OK || st == OCAL_NOT_CONVERGED);
    const ocal__lobpcg_profile *p = &prof;
    /* The loop's last pass only finds that every pair has converged. */
    ck_assert(p->iterations == (long)res.iterations || p->iterations == (long)res.iterations + 1);
    ck_assert_int_gt(p->gemm, p->iterations);
    ck_assert_int_gt(p->reads, p->iterations);
    double it = (double)(p->iterations ? p->iterations : 1);
    double total = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    fprintf(stderr,
            "lobpcg profile 40x40 k8 f64 (gram %s): %ld its, %.3f ms/it; per it: gemm %.1f (%.3f ms), "
            "reads %.1f (%.3f ms), uploads %.1f (%.3f ms), allocs %.1f (%.3f ms), applies %.1f "
            "(%.3f ms), reduces %.1f (%.3f ms), copies %.1f (%.3f ms)\n",
            gk ? "kernel" : "gemm", p->iterations, 1e3 * total / it, p->gemm / it, 1e3 * p->gemm_s / it, p->reads / it,
            1e3 * p->reads_s / it, p->uploads / it, 1e3 * p->uploads_s / it, p->allocs / it,
            1e3 * p->allocs_s / it, p->applies / it, 1e3 * p->applies_s / it, p->reduces / it,
            1e3 * p->reduces_s / it, p->copies / it, 1e3 * p->copies_s / it);
  }
  ocal_buffer_release(x);
  ocal_csr_release(a);
  hmat_free(&l2);
}
END_TEST

START_TEST(test_lobpcg_generalised) {
  hmat l = laplacian_2d(17, 13);
  size_t n = l.rows;
  double *e = laplacian_eigenvalues(17, 13), *d = fixture_malloc(n * 8), *b = fixture_malloc(n * 8);
  uint64_t st = 3;
  for (size_t i = 0; i < n; i++) {
    d[i] = 0.5 + urand(&st);
    b[i] = d[i] * d[i];
  }
  hmat a = l;
  a.v = fixture_malloc(l.nnz * 8);
  for (size_t r = 0; r < n; r++)
    for (int64_t j = l.rp[r]; j < l.rp[r + 1]; j++) a.v[j] = d[r] * l.v[j] * d[l.ci[j]];
  ocal_dtype vt = fixture_has_fp64() ? OCAL_F64 : OCAL_F32;
  check_lobpcg(&a, vt, 5, 0, e, vt == OCAL_F64 ? 1e-8 : 1e-4, b, 300);
  free(a.v);
  free(d);
  free(b);
  free(e);
  hmat_free(&l);
}
END_TEST

/* A callback preconditioner (Jacobi: x / 4) and constraints: with the first eigenvector of
 * the 1-D Laplacian as Y, the smallest eigenvalues found are the 2nd, 3rd, ... */
typedef struct diag_scale {
  double s;
} diag_scale;

static ocal_status scale_apply(void *user, ocal_buffer x, ocal_buffer y) {
  ocal_status s = ocal_buffer_copy(x, y);
  return s == OCAL_OK ? ocal_scale(((diag_scale *)user)->s, y) : s;
}

START_TEST(test_lobpcg_precond_constraints) {
  ocal_dtype vt = fixture_has_fp64() ? OCAL_F64 : OCAL_F32;
  size_t n = 120;
  hmat l = laplacian_1d(n);
  double *e = laplacian_eigenvalues(n, 0);
  ocal_csr a = upload(&l, vt, OCAL_I64);
  ocal_operator op;
  ck_assert_ocal(ocal_operator_from_csr(a, &op));
  diag_scale ds = {0.25};
  ocal_operator m = {n, vt, scale_apply, &ds, NULL};
  /* Y: the exact first eigenvector sin(pi i / (n + 1)). */
  double *yh = fixture_malloc(n * 8);
  for (size_t i = 0; i < n; i++) yh[i] = sin(3.14159265358979323846 * (double)(i + 1) / (double)(n + 1));
  void *yp = val_array(vt, yh, n);
  size_t yshape[2] = {n, 1}, xshape[2] = {n, 3};
  ocal_buffer y, x;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, vt, 2, yshape, yp, &y));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, vt, 2, xshape, &x));
  ocal_lobpcg_options o;
  ocal_lobpcg_options_init(&o);
  o.m = &m;
  o.y = y;
  o.max_iter = 500;
  o.tol = vt == OCAL_F64 ? 1e-9 : 1e-4;
  double ev[3], rn[3];
  ocal_lobpcg_result res = {sizeof res};
  ck_assert_ocal(ocal_lobpcg(&op, x, &o, ev, rn, &res));
  double rel = vt == OCAL_F64 ? 1e-8 : 1e-4;
  for (int i = 0; i < 3; i++)
    EXPECT(fabs(ev[i] - e[i + 1]) <= rel * e[i + 1], "constrained eigenvalue %d: %.15g, want %.15g",
           i, ev[i], e[i + 1]);
  /* The initial block given (use_x0): the result of the first run converges at once. */
  o.use_x0 = 1;
  ck_assert_ocal(ocal_lobpcg(&op, x, &o, ev, rn, &res));
  ck_assert_uint_le(res.iterations, 2);

  /* Bad inputs: k too large for n, mismatched types and shapes, linearly dependent block,
   * bad options; the context works after. */
  size_t big[2] = {n, 30};
  ocal_buffer xb;
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, vt, 2, big, &xb));
  ck_assert_ocal_fails(ocal_lobpcg(&op, xb, NULL, ev, rn, &res), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "too many"));
  ocal_buffer_release(xb);
  ocal_dtype other = vt == OCAL_F64 ? OCAL_F32 : OCAL_I32;
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, other, 2, xshape, &xb));
  ck_assert_ocal_fails(ocal_lobpcg(&op, xb, NULL, ev, rn, &res), OCAL_TYPE_MISMATCH);
  ocal_buffer_release(xb);
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, vt, 1, &n, &xb));
  ck_assert_ocal_fails(ocal_lobpcg(&op, xb, NULL, ev, rn, &res), OCAL_SHAPE_MISMATCH);
  ocal_buffer_release(xb);
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, vt, 2, xshape, &xb));
  ocal_lobpcg_options_init(&o);
  o.use_x0 = 1; /* all zeros: dependent */
  ck_assert_ocal_fails(ocal_lobpcg(&op, xb, &o, ev, rn, &res), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "linearly dependent"));
  o.struct_size = 1;
  ck_assert_ocal_fails(ocal_lobpcg(&op, xb, &o, ev, rn, &res), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_lobpcg(&op, xb, NULL, NULL, rn, &res), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_lobpcg(NULL, xb, NULL, ev, rn, &res), OCAL_INVALID_ARGUMENT);
  /* Too few iterations: OCAL_NOT_CONVERGED with the best block and its eigenvalues. */
  ocal_lobpcg_options_init(&o);
  o.max_iter = 2;
  o.tol = 1e-12;
  ck_assert_ocal_fails(ocal_lobpcg(&op, xb, &o, ev, rn, &res), OCAL_NOT_CONVERGED);
  ck_assert_msg(ev[0] >= e[0] * (1 - 1e-6) && ev[0] <= 4.0, "ev[0] = %g", ev[0]);
  ck_assert_uint_lt(res.converged, 3);
  ck_assert(res.max_residual > 1e-12);
  ck_assert_int_eq(res.stop, OCAL_LOBPCG_MAX_ITER);
  ck_assert_str_eq(ocal_lobpcg_stop_name(res.stop), "max_iter");
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "iteration limit"));
  /* The counts at the limit, options out of range, B and M of another size or type,
   * dependent constraints and a B not positive definite have tests of their own below. */
  /* A result struct without its struct_size is refused before any work. */
  ocal_lobpcg_result bad = {0};
  ck_assert_ocal_fails(ocal_lobpcg(&op, xb, &o, ev, rn, &bad), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "struct_size"));
  ocal_buffer_release(xb);
  hmat m2 = random_hmat(40, 40, 3.0, 0, SIZE_MAX, 9);
  check_all_products(&m2, OCAL_F32, OCAL_I32, 9);
  hmat_free(&m2);
  ocal_buffer_release(x);
  ocal_buffer_release(y);
  ocal_csr_release(a);
  free(yp);
  free(yh);
  free(e);
  hmat_free(&l);
}
END_TEST

/* Why LOBPCG stopped, for each reason a run can be led to: a zero preconditioner leaves no
 * residual direction to B-orthonormalise (the basis loses its rank at once), and an
 * operator that turns to NaN makes the Rayleigh-Ritz eigenproblem fail. */
typedef struct nan_after {
  ocal_csr a;
  int calls, good; /* calls made; calls answered before the NaNs start */
} nan_after;

static ocal_status nan_after_apply(void *user, ocal_buffer x, ocal_buffer y) {
  nan_after *t = user;
  if (t->calls++ < t->good) return ocal_spmm(OCAL_NO_TRANS, 1.0, t->a, x, 0.0, y);
  const float nanf_ = NAN;
  const double nand = NAN;
  ocal_dtype vt;
  ocal_buffer_get_dtype(y, &vt);
  return ocal_buffer_fill(y, vt == OCAL_F32 ? (const void *)&nanf_ : (const void *)&nand);
}

START_TEST(test_lobpcg_stop_reasons) {
  ck_assert_str_eq(ocal_lobpcg_stop_name(OCAL_LOBPCG_CONVERGED), "converged");
  ck_assert_str_eq(ocal_lobpcg_stop_name(OCAL_LOBPCG_BASIS_RANK_LOST), "basis_rank_lost");
  ck_assert_str_eq(ocal_lobpcg_stop_name(OCAL_LOBPCG_RAYLEIGH_RITZ_FAILED),
                   "rayleigh_ritz_failed");
  ck_assert_str_eq(ocal_lobpcg_stop_name((ocal_lobpcg_stop)99), "invalid");
#ifdef OCAL_HAVE_LAPACKE
  hmat l = laplacian_2d(12, 10);
  size_t n = l.rows, k = 3, shape[2] = {n, k};
  ocal_dtype vt = fixture_has_fp64() ? OCAL_F64 : OCAL_F32;
  ocal_csr a = upload(&l, vt, OCAL_I32), zero;
  ck_assert_ocal(ocal_csr_from_coo(fixture_ctx, vt, OCAL_I32, n, n, 0, NULL, NULL, NULL, &zero));
  ocal_operator op, mop;
  ck_assert_ocal(ocal_operator_from_csr(a, &op));
  ck_assert_ocal(ocal_operator_from_csr(zero, &mop));
  ocal_buffer x;
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, vt, 2, shape, &x));
  double ev[3], rn[3];
  ocal_lobpcg_options o;
  ocal_lobpcg_options_init(&o);
  o.max_iter = 50;
  o.m = &mop;
  ocal_lobpcg_result res = {sizeof res};
  ck_assert_ocal_fails(ocal_lobpcg(&op, x, &o, ev, rn, &res), OCAL_NOT_CONVERGED);
  ck_assert_int_eq(res.stop, OCAL_LOBPCG_BASIS_RANK_LOST);
  ck_assert_uint_eq(res.iterations, 0);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "B-orthonormalised"));

  /* The set-up takes A twice (X, then the first residual directions): NaN from the second. */
  nan_after t = {a, 0, 1};
  ocal_operator nop = {n, vt, nan_after_apply, &t, NULL};
  o.m = NULL;
  ck_assert_ocal_fails(ocal_lobpcg(&nop, x, &o, ev, rn, &res), OCAL_NOT_CONVERGED);
  ck_assert_int_eq(res.stop, OCAL_LOBPCG_RAYLEIGH_RITZ_FAILED);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "Rayleigh-Ritz"));
  ocal_buffer_release(x);
  ocal_csr_release(zero);
  ocal_csr_release(a);
  hmat_free(&l);
#endif
}
END_TEST

#ifndef OCAL_HAVE_LAPACKE
/* Built without LAPACKE: ocal_lobpcg says so, and the context still works. */
START_TEST(test_lobpcg_unsupported) {
  hmat l = laplacian_1d(50);
  ocal_csr a = upload(&l, OCAL_F32, OCAL_I32);
  ocal_operator op;
  ck_assert_ocal(ocal_operator_from_csr(a, &op));
  size_t shape[2] = {50, 2};
  ocal_buffer x;
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 2, shape, &x));
  double ev[2];
  ck_assert_ocal_fails(ocal_lobpcg(&op, x, NULL, ev, NULL, NULL), OCAL_UNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "LAPACKE"));
  check_product(&l, OCAL_F32, a, 0, 1, 1.0, 0.0, 3);
  ocal_buffer_release(x);
  ocal_csr_release(a);
  hmat_free(&l);
}
END_TEST
#endif

#ifdef OCAL_HAVE_LAPACKE
/* ---- LOBPCG: what a run reports, and the arguments it refuses ---------------------------- */

/* ||A x_q - lambda_q x_q|| of the k columns of x, on the host in double from the matrix as
 * the device holds it. */
static void host_residuals(const hmat *m, ocal_dtype vt, ocal_buffer x, size_t k, const double *ev,
                           double *out) {
  size_t n = m->rows;
  double *xh = fixture_malloc(n * k * 8);
  read_block(x, vt, n * k, xh);
  for (size_t q = 0; q < k; q++) {
    double r2 = 0;
    for (size_t r = 0; r < n; r++) {
      double ax = 0;
      for (int64_t j = m->rp[r]; j < m->rp[r + 1]; j++)
        ax += vround(vt, m->v[j]) * xh[(size_t)m->ci[j] * k + q];
      r2 += (ax - ev[q] * xh[r * k + q]) * (ax - ev[q] * xh[r * k + q]);
    }
    out[q] = sqrt(r2);
  }
  free(xh);
}

/* The diagonal matrix diag(d[0..n-1]). */
static hmat diagonal_hmat(size_t n, const double *d) {
  hmat m = {n, n, n, fixture_malloc((n + 1) * 8), fixture_malloc(n * 8), fixture_malloc(n * 8)};
  for (size_t i = 0; i <= n; i++) m.rp[i] = (int64_t)i;
  for (size_t i = 0; i < n; i++) {
    m.ci[i] = (int64_t)i;
    m.v[i] = d[i];
  }
  return m;
}

/* Soft locking: a pair locked once it meets the tolerance is no longer refined, and a later
 * step can move it, so a run can end with every pair locked while the block returned does
 * not meet the tolerance. Its reason says so, and "converged" never comes with
 * OCAL_NOT_CONVERGED; a run again from the returned block unlocks every pair and converges.
 * The three largest of the f32 1-D Laplacian (n = 100) with the default tolerance end so on
 * PoCL from seed 0; the other seeds converge. Residual norms are checked on the host. */
START_TEST(test_lobpcg_locked_not_converged) {
  const size_t n = 100, k = 3;
  hmat l = laplacian_1d(n);
  double *e = laplacian_eigenvalues(n, 0);
  ocal_csr a = upload(&l, OCAL_F32, OCAL_I32);
  ocal_operator op;
  ck_assert_ocal(ocal_operator_from_csr(a, &op));
  size_t shape[2] = {n, k};
  ocal_buffer x;
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 2, shape, &x));
  double ev[3], rn[3], hr[3];
  ocal_lobpcg_result res = {sizeof res};
  ocal_lobpcg_options o;
  for (uint64_t seed = 0; seed < 4; seed++)
    for (int again = 0; again < 2; again++) {
      if (!again) {
        ck_assert_ocal(ocal_lobpcg_options_init(&o));
        o.largest = 1;
        o.max_iter = 200;
        o.seed = seed;
      } else {
        o.use_x0 = 1; /* from the block the first run returned */
      }
      ocal_status st = ocal_lobpcg(&op, x, &o, ev, rn, &res);
      ck_assert_msg(st == OCAL_OK || st == OCAL_NOT_CONVERGED, "%s", ocal_last_error());
      host_residuals(&l, OCAL_F32, x, k, ev, hr);
      size_t conv = 0;
      for (size_t q = 0; q < k; q++) {
        EXPECT(fabs(hr[q] - rn[q]) <= 1e-2 * rn[q] + 1e-4,
               "seed %llu pair %zu: host %g, reported %g", (unsigned long long)seed, q, hr[q],
               rn[q]);
        conv += rn[q] <= res.tolerance;
        /* Ritz values of the largest lie below the eigenvalues, in descending order. */
        EXPECT(ev[q] <= e[n - 1 - q] * (1 + 1e-6), "seed %llu: ev[%zu] = %.9g above %.9g",
               (unsigned long long)seed, q, ev[q], e[n - 1 - q]);
        if (q) EXPECT(ev[q] <= ev[q - 1], "seed %llu: not descending", (unsigned long long)seed);
      }
      ck_assert_uint_eq(res.converged, conv);
      ck_assert_int_eq(st == OCAL_OK, conv == k);
      ck_assert_uint_le(res.iterations, o.max_iter);
      if (st == OCAL_OK) {
        ck_assert_int_eq(res.stop, OCAL_LOBPCG_CONVERGED);
        break;
      }
      ck_assert_msg(res.stop != OCAL_LOBPCG_CONVERGED, "seed %llu: %s", (unsigned long long)seed,
                    ocal_last_error());
      ck_assert_msg(!again, "seed %llu: the run from the returned block: %s",
                    (unsigned long long)seed, ocal_last_error());
      if (seed == 0) ck_assert_int_eq(res.stop, OCAL_LOBPCG_LOCKED_NOT_CONVERGED);
      if (res.stop == OCAL_LOBPCG_LOCKED_NOT_CONVERGED) {
        const char *msg = ocal_last_error();
        ck_assert_str_eq(ocal_lobpcg_stop_name(res.stop), "locked_not_converged");
        ck_assert_msg(strstr(msg, "was locked there") && strstr(msg, "run again from it") &&
                          !strstr(msg, "during the iterations"),
                      "%s", msg);
      }
    }
  ocal_buffer_release(x);
  ocal_csr_release(a);
  free(e);
  hmat_free(&l);
}
END_TEST

/* iterations and best_iteration count block updates alike: a run to the limit makes
 * max_iter of them and returns a block no later than the last (0: the initial block); a
 * converged run stops before the limit. The smallest Ritz values, from more updates, never
 * rise, and stay above the eigenvalues. */
START_TEST(test_lobpcg_iteration_counts) {
  ocal_dtype vt = fixture_has_fp64() ? OCAL_F64 : OCAL_F32;
  const size_t n = 40, k = 2;
  hmat l = laplacian_1d(n);
  double *e = laplacian_eigenvalues(n, 0);
  ocal_csr a = upload(&l, vt, OCAL_I32);
  ocal_operator op;
  ck_assert_ocal(ocal_operator_from_csr(a, &op));
  size_t shape[2] = {n, k};
  ocal_buffer x;
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, vt, 2, shape, &x));
  double ev[2], rn[2], prev[2] = {INFINITY, INFINITY};
  ocal_lobpcg_result res = {sizeof res};
  ocal_lobpcg_options o;
  ck_assert_ocal(ocal_lobpcg_options_init(&o));
  o.tol = vt == OCAL_F64 ? 1e-9 : 1e-4;
  const double rnd = vt == OCAL_F64 ? 1e-12 : 1e-5; /* rounding of a Ritz value */
  const size_t limits[] = {1, 2, 3, 300};
  for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
    o.max_iter = limits[i];
    ocal__lobpcg_profile prof = {0};
    ocal__lobpcg_tuning tuning = {-1, &prof};
    ocal_status st = ocal__lobpcg_run(&op, x, &o, &tuning, ev, rn, &res);
    ck_assert_msg(st == (limits[i] < 300 ? OCAL_NOT_CONVERGED : OCAL_OK), "max_iter %zu: %s",
                  limits[i], ocal_last_error());
    ck_assert_int_eq(res.stop, limits[i] < 300 ? OCAL_LOBPCG_MAX_ITER : OCAL_LOBPCG_CONVERGED);
    if (limits[i] < 300)
      ck_assert_uint_eq(res.iterations, limits[i]);
    else
      ck_assert_uint_lt(res.iterations, limits[i]);
    ck_assert_msg(res.best_iteration <= res.iterations, "max_iter %zu: best %zu of %zu", limits[i],
                  res.best_iteration, res.iterations);
    /* One residual check per update, and one of the last block. */
    ck_assert_int_eq(prof.iterations, (long)res.iterations + 1);
    for (size_t q = 0; q < k; q++) {
      EXPECT(ev[q] >= e[q] * (1 - rnd), "max_iter %zu: ev[%zu] = %.15g below %.15g", limits[i], q,
             ev[q], e[q]);
      if (res.best_iteration == res.iterations)
        EXPECT(ev[q] <= prev[q] * (1 + rnd), "max_iter %zu: ev[%zu] = %.15g rose from %.15g",
               limits[i], q, ev[q], prev[q]);
      prev[q] = ev[q];
    }
  }
  for (size_t q = 0; q < k; q++)
    EXPECT(fabs(ev[q] - e[q]) <= (vt == OCAL_F64 ? 1e-8 : 1e-4) * e[q],
           "ev[%zu] = %.15g, want %.15g", q, ev[q], e[q]);
  ocal_buffer_release(x);
  ocal_csr_release(a);
  free(e);
  hmat_free(&l);
}
END_TEST

/* Constraints whose columns are dependent (equal, or one a multiple of another) are refused
 * before any iteration, in both precisions and with a B; independent ones (the first two
 * eigenvectors) run, the Ritz values no lower than the next eigenvalues (their convergence:
 * test_lobpcg_precond_constraints). */
START_TEST(test_lobpcg_dependent_constraints) {
  const size_t n = 40, k = 2;
  const double pi = 3.14159265358979323846;
  hmat l = laplacian_1d(n);
  double *e = laplacian_eigenvalues(n, 0), d[40];
  for (size_t i = 0; i < n; i++) d[i] = 1.0 + (double)i;
  hmat bh = diagonal_hmat(n, d);
  for (int vi = 0; vi < 2; vi++) {
    ocal_dtype vt = vtypes[vi];
    if (!fixture_dtype_usable(vt)) continue;
    ocal_csr a = upload(&l, vt, OCAL_I32), bm = upload(&bh, vt, OCAL_I32);
    ocal_operator op, bop;
    ck_assert_ocal(ocal_operator_from_csr(a, &op));
    ck_assert_ocal(ocal_operator_from_csr(bm, &bop));
    size_t shape[2] = {n, k}, ys[2] = {n, 2};
    ocal_buffer x;
    ck_assert_ocal(ocal_buffer_create(fixture_ctx, vt, 2, shape, &x));
    double ev[2], rn[2], yh[80];
    ocal_lobpcg_result res = {sizeof res};
    ocal_lobpcg_options o;
    for (int kind = 0; kind < 3; kind++) {
      /* 0: two columns of ones; 1: sin and 3 sin; 2: the first two eigenvectors. */
      for (size_t i = 0; i < n; i++) {
        double s1 = sin(pi * (double)(i + 1) / (double)(n + 1));
        double s2 = sin(2 * pi * (double)(i + 1) / (double)(n + 1));
        yh[i * 2] = kind == 0 ? 1.0 : s1;
        yh[i * 2 + 1] = kind == 0 ? 1.0 : kind == 1 ? 3 * s1 : s2;
      }
      void *yp = val_array(vt, yh, 2 * n);
      ocal_buffer y;
      ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, vt, 2, ys, yp, &y));
      free(yp);
      for (int withb = 0; withb < 2; withb++) {
        ck_assert_ocal(ocal_lobpcg_options_init(&o));
        o.y = y;
        o.b = withb ? &bop : NULL;
        o.max_iter = 3;
        ocal_status st = ocal_lobpcg(&op, x, &o, ev, rn, &res);
        if (kind < 2) {
          ck_assert_msg(st == OCAL_INVALID_ARGUMENT, "%s kind %d B %d: %s (%s)",
                        ocal_dtype_name(vt), kind, withb, ocal_status_name(st), ocal_last_error());
          const char *msg = ocal_last_error();
          ck_assert_msg(strstr(msg,
                               "ocal_lobpcg: the constraints (columns of options->y) are "
                               "linearly dependent") &&
                            (!withb || strstr(msg, "B may not be symmetric positive definite")),
                        "%s", msg);
        } else {
          ck_assert_msg(st == OCAL_OK || st == OCAL_NOT_CONVERGED, "%s B %d: %s",
                        ocal_dtype_name(vt), withb, ocal_last_error());
          for (size_t q = 0; q < k && !withb; q++)
            EXPECT(ev[q] >= e[q + 2] * (1 - (vt == OCAL_F64 ? 1e-9 : 1e-4)),
                   "%s constrained ev[%zu] = %.15g below %.15g", ocal_dtype_name(vt), q, ev[q],
                   e[q + 2]);
        }
      }
      ocal_buffer_release(y);
    }
    ocal_buffer_release(x);
    ocal_csr_release(a);
    ocal_csr_release(bm);
  }
  free(e);
  hmat_free(&l);
  hmat_free(&bh);
}
END_TEST

/* A B that is not positive definite (-diag(1..n)) fails the B-orthonormalisation of the
 * initial block: with the random block, the message names B; with the caller's block, both
 * possibilities; a dependent block of the caller's without B names the block alone. With
 * diag(1..n) the same run converges (residuals ||A x - lambda B x|| checked on the host). */
START_TEST(test_lobpcg_b_not_positive_definite) {
  ocal_dtype vt = fixture_has_fp64() ? OCAL_F64 : OCAL_F32;
  const size_t n = 40, k = 2;
  hmat l = laplacian_1d(n);
  double dn[40], dp[40];
  for (size_t i = 0; i < n; i++) {
    dp[i] = 1.0 + (double)i;
    dn[i] = -dp[i];
  }
  hmat hneg = diagonal_hmat(n, dn), hpos = diagonal_hmat(n, dp);
  ocal_csr a = upload(&l, vt, OCAL_I32), neg = upload(&hneg, vt, OCAL_I32),
           pos = upload(&hpos, vt, OCAL_I32);
  ocal_operator op, nop, pop;
  ck_assert_ocal(ocal_operator_from_csr(a, &op));
  ck_assert_ocal(ocal_operator_from_csr(neg, &nop));
  ck_assert_ocal(ocal_operator_from_csr(pos, &pop));
  double xh[80], ev[2], rn[2];
  ocal_buffer x = make_block(vt, n, k, xh, 17);
  ocal_lobpcg_result res = {sizeof res};
  ocal_lobpcg_options o;
  ck_assert_ocal(ocal_lobpcg_options_init(&o));
  o.b = &nop;
  ck_assert_ocal_fails(ocal_lobpcg(&op, x, &o, ev, rn, &res), OCAL_INVALID_ARGUMENT);
  const char *msg = ocal_last_error();
  ck_assert_msg(strstr(msg, "ocal_lobpcg: B-orthonormalisation of the initial block") &&
                    strstr(msg, "B may not be symmetric positive definite") &&
                    !strstr(msg, "linearly dependent"),
                "%s", msg);
  ocal_buffer_release(x);
  x = make_block(vt, n, k, xh, 17);
  o.use_x0 = 1;
  ck_assert_ocal_fails(ocal_lobpcg(&op, x, &o, ev, rn, &res), OCAL_INVALID_ARGUMENT);
  msg = ocal_last_error();
  ck_assert_msg(strstr(msg,
                       "the initial block's columns may be linearly dependent, or B may "
                       "not be symmetric positive definite"),
                "%s", msg);
  /* Two equal columns, no B. */
  for (size_t i = 0; i < n; i++) xh[i * 2 + 1] = xh[i * 2];
  void *xp = val_array(vt, xh, n * k);
  ck_assert_ocal(ocal_buffer_write(x, 0, n * k, xp, NULL));
  free(xp);
  o.b = NULL;
  ck_assert_ocal_fails(ocal_lobpcg(&op, x, &o, ev, rn, &res), OCAL_INVALID_ARGUMENT);
  msg = ocal_last_error();
  ck_assert_msg(strstr(msg, "the initial block's columns are linearly dependent") &&
                    !strstr(msg, "B may not"),
                "%s", msg);
  /* A positive definite B: the generalised problem converges. */
  ck_assert_ocal(ocal_lobpcg_options_init(&o));
  o.b = &pop;
  o.max_iter = 500;
  o.tol = vt == OCAL_F64 ? 1e-8 : 1e-3;
  ck_assert_ocal(ocal_lobpcg(&op, x, &o, ev, rn, &res));
  double *xr = fixture_malloc(n * k * 8);
  read_block(x, vt, n * k, xr);
  for (size_t q = 0; q < k; q++) {
    double r2 = 0;
    for (size_t r = 0; r < n; r++) {
      double ax = 0;
      for (int64_t j = l.rp[r]; j < l.rp[r + 1]; j++) ax += l.v[j] * xr[(size_t)l.ci[j] * k + q];
      double d = ax - ev[q] * dp[r] * xr[r * k + q];
      r2 += d * d;
    }
    EXPECT(sqrt(r2) <= 1.01 * o.tol + (vt == OCAL_F64 ? 1e-12 : 1e-5), "pair %zu: host residual %g",
           q, sqrt(r2));
  }
  free(xr);
  ocal_buffer_release(x);
  ocal_csr_release(a);
  ocal_csr_release(neg);
  ocal_csr_release(pos);
  hmat_free(&l);
  hmat_free(&hneg);
  hmat_free(&hpos);
}
END_TEST

/* A B or M of another size than A is a shape mismatch naming it and both sizes; one of
 * another type a type mismatch; the context computes after. */
START_TEST(test_lobpcg_b_m_shapes) {
  ocal_dtype vt = fixture_has_fp64() ? OCAL_F64 : OCAL_F32;
  const size_t n = 40;
  hmat l = laplacian_1d(n), l39 = laplacian_1d(39), l41 = laplacian_1d(41);
  ocal_csr a = upload(&l, vt, OCAL_I32), b39 = upload(&l39, vt, OCAL_I32),
           m41 = upload(&l41, vt, OCAL_I32);
  ocal_operator op, bop, mop;
  ck_assert_ocal(ocal_operator_from_csr(a, &op));
  ck_assert_ocal(ocal_operator_from_csr(b39, &bop));
  ck_assert_ocal(ocal_operator_from_csr(m41, &mop));
  size_t shape[2] = {n, 2};
  ocal_buffer x;
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, vt, 2, shape, &x));
  double ev[2], rn[2];
  ocal_lobpcg_result res = {sizeof res};
  ocal_lobpcg_options o;
  ck_assert_ocal(ocal_lobpcg_options_init(&o));
  o.b = &bop;
  ck_assert_ocal_fails(ocal_lobpcg(&op, x, &o, ev, rn, &res), OCAL_SHAPE_MISMATCH);
  ck_assert_msg(strstr(ocal_last_error(), "ocal_lobpcg: B is 39 x 39, but A is 40 x 40"), "%s",
                ocal_last_error());
  o.b = NULL;
  o.m = &mop;
  ck_assert_ocal_fails(ocal_lobpcg(&op, x, &o, ev, rn, &res), OCAL_SHAPE_MISMATCH);
  ck_assert_msg(strstr(ocal_last_error(), "ocal_lobpcg: M is 41 x 41, but A is 40 x 40"), "%s",
                ocal_last_error());
  if (vt == OCAL_F64) {
    ocal_csr b32 = upload(&l, OCAL_F32, OCAL_I32);
    ocal_operator b32op;
    ck_assert_ocal(ocal_operator_from_csr(b32, &b32op));
    o.m = NULL;
    o.b = &b32op;
    ck_assert_ocal_fails(ocal_lobpcg(&op, x, &o, ev, rn, &res), OCAL_TYPE_MISMATCH);
    ck_assert_msg(strstr(ocal_last_error(), "B is f32, but A is f64"), "%s", ocal_last_error());
    o.b = NULL;
    o.m = &b32op;
    ck_assert_ocal_fails(ocal_lobpcg(&op, x, &o, ev, rn, &res), OCAL_TYPE_MISMATCH);
    ck_assert_msg(strstr(ocal_last_error(), "M is f32, but A is f64"), "%s", ocal_last_error());
    ocal_csr_release(b32);
  }
  /* A B or M of a type no solver takes is one of another type than A: OCAL_TYPE_MISMATCH, as
   * for f32 against f64 and as the header lists. An A of such a type is OCAL_UNSUPPORTED. */
  ocal_operator iop = {n, OCAL_I32, twice_apply, NULL, NULL};
  o.m = NULL;
  o.b = &iop;
  ck_assert_ocal_fails(ocal_lobpcg(&op, x, &o, ev, rn, &res), OCAL_TYPE_MISMATCH);
  ck_assert_msg(strstr(ocal_last_error(), "B is i32, but A is"), "%s", ocal_last_error());
  o.b = NULL;
  o.m = &iop;
  ck_assert_ocal_fails(ocal_lobpcg(&op, x, &o, ev, rn, &res), OCAL_TYPE_MISMATCH);
  ck_assert_msg(strstr(ocal_last_error(), "M is i32, but A is"), "%s", ocal_last_error());
  ck_assert_ocal_fails(ocal_lobpcg(&iop, x, NULL, ev, rn, &res), OCAL_UNSUPPORTED);
  ck_assert_msg(strstr(ocal_last_error(), "ocal_lobpcg: operator A has type i32"), "%s",
                ocal_last_error());
  ocal_buffer_release(x);
  check_product(&l, vt, a, 0, 1, 1.0, 0.0, 41);
  ocal_csr_release(a);
  ocal_csr_release(b39);
  ocal_csr_release(m41);
  hmat_free(&l);
  hmat_free(&l39);
  hmat_free(&l41);
}
END_TEST

/* Options outside their ranges are refused, naming the field and the range: tolerances that
 * are NaN or infinite, negative counts (max_iter arrives as a huge size_t), restart_control
 * outside 0..1000, largest and use_x0 other than 0 and 1. max_iter = 0 is the default: the
 * same run as max_iter = 20, bit for bit; the ends of restart_control's range run. */
START_TEST(test_lobpcg_option_ranges) {
  ocal_dtype vt = fixture_has_fp64() ? OCAL_F64 : OCAL_F32;
  const size_t n = 60, k = 2;
  hmat l = laplacian_1d(n);
  ocal_csr a = upload(&l, vt, OCAL_I32);
  ocal_operator op;
  ck_assert_ocal(ocal_operator_from_csr(a, &op));
  size_t shape[2] = {n, k};
  ocal_buffer x;
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, vt, 2, shape, &x));
  double ev[2], rn[2], ev20[2], rn20[2];
  ocal_lobpcg_result res = {sizeof res}, res20 = {sizeof res20};
  ocal_lobpcg_options o;
  const double tols[] = {NAN, INFINITY, -INFINITY};
  for (size_t i = 0; i < 3; i++) {
    ck_assert_ocal(ocal_lobpcg_options_init(&o));
    o.tol = tols[i];
    ck_assert_ocal_fails(ocal_lobpcg(&op, x, &o, ev, rn, &res), OCAL_INVALID_ARGUMENT);
    ck_assert_msg(strstr(ocal_last_error(), "ocal_lobpcg: options->tol is") &&
                      strstr(ocal_last_error(), "use a finite tolerance > 0"),
                  "%s", ocal_last_error());
  }
  const long counts[] = {-1, -20};
  for (size_t i = 0; i < 2; i++) {
    ck_assert_ocal(ocal_lobpcg_options_init(&o));
    o.max_iter = (size_t)counts[i];
    ck_assert_ocal_fails(ocal_lobpcg(&op, x, &o, ev, rn, &res), OCAL_INVALID_ARGUMENT);
    ck_assert_msg(strstr(ocal_last_error(), "options->max_iter is") &&
                      strstr(ocal_last_error(), "a negative count"),
                  "%s", ocal_last_error());
  }
  const int controls[] = {-3, 1001};
  for (size_t i = 0; i < 2; i++) {
    ck_assert_ocal(ocal_lobpcg_options_init(&o));
    o.restart_control = controls[i];
    ck_assert_ocal_fails(ocal_lobpcg(&op, x, &o, ev, rn, &res), OCAL_INVALID_ARGUMENT);
    ck_assert_msg(strstr(ocal_last_error(), "options->restart_control is") &&
                      strstr(ocal_last_error(), "use 0 to 1000"),
                  "%s", ocal_last_error());
  }
  ck_assert_ocal(ocal_lobpcg_options_init(&o));
  o.largest = 2;
  ck_assert_ocal_fails(ocal_lobpcg(&op, x, &o, ev, rn, &res), OCAL_INVALID_ARGUMENT);
  ck_assert_msg(strstr(ocal_last_error(), "options->largest is 2: use 0 or 1"), "%s",
                ocal_last_error());
  ck_assert_ocal(ocal_lobpcg_options_init(&o));
  o.use_x0 = -1;
  ck_assert_ocal_fails(ocal_lobpcg(&op, x, &o, ev, rn, &res), OCAL_INVALID_ARGUMENT);
  ck_assert_msg(strstr(ocal_last_error(), "options->use_x0 is -1: use 0 or 1"), "%s",
                ocal_last_error());
  /* 0 is the default limit. */
  ck_assert_ocal(ocal_lobpcg_options_init(&o));
  o.tol = 1e-14; /* not met in 20 iterations */
  o.max_iter = 20;
  ck_assert_ocal_fails(ocal_lobpcg(&op, x, &o, ev20, rn20, &res20), OCAL_NOT_CONVERGED);
  ck_assert_uint_eq(res20.iterations, 20);
  o.max_iter = 0;
  ck_assert_ocal_fails(ocal_lobpcg(&op, x, &o, ev, rn, &res), OCAL_NOT_CONVERGED);
  ck_assert_uint_eq(res.iterations, 20);
  ck_assert_uint_eq(res.best_iteration, res20.best_iteration);
  ck_assert_int_eq(memcmp(ev, ev20, sizeof ev), 0);
  ck_assert_int_eq(memcmp(rn, rn20, sizeof rn), 0);
  for (size_t i = 0; i < 2; i++) {
    ck_assert_ocal(ocal_lobpcg_options_init(&o));
    o.restart_control = i ? 1000 : 0;
    o.max_iter = 5;
    ocal_status st = ocal_lobpcg(&op, x, &o, ev, rn, &res);
    ck_assert_msg(st == OCAL_OK || st == OCAL_NOT_CONVERGED, "%s", ocal_last_error());
  }
  ocal_buffer_release(x);
  ocal_csr_release(a);
  hmat_free(&l);
}
END_TEST
#endif

/* A refused argument is named in the message, under the public call's name: NULL buffers of
 * the products, of CG, of ocal_csr_diagonal and of ocal_csr_from_buffers; a solver's
 * operator whose CSR matrix is gone (zeroed, as a release zeroes it, or NULL) or does not
 * match the operator's n is refused by the solver, not by the product it would run. */
#define EXPECT_REFUSED(call, status, text)                                                   \
  do {                                                                                       \
    ck_assert_ocal_fails(call, status);                                                      \
    ck_assert_msg(strstr(ocal_last_error(), text) != NULL, "%s: \"%s\", want \"%s\"", #call, \
                  ocal_last_error(), text);                                                  \
  } while (0)

START_TEST(test_messages_name_arguments) {
  hmat l = laplacian_1d(30);
  size_t n = l.rows, n1 = n - 1, nr = n + 1, nz = l.nnz;
  ocal_csr a = upload(&l, OCAL_F32, OCAL_I32);
  ocal_operator op;
  ck_assert_ocal(ocal_operator_from_csr(a, &op));
  ocal_buffer x, y, x1, y1;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &n, &x));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &n, &y));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &n1, &x1));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &n1, &y1));
  EXPECT_REFUSED(ocal_spmv(OCAL_NO_TRANS, 1.0, a, NULL, 0.0, y), OCAL_INVALID_HANDLE,
                 "ocal_spmv: x is NULL");
  EXPECT_REFUSED(ocal_spmv(OCAL_NO_TRANS, 1.0, a, x, 0.0, NULL), OCAL_INVALID_HANDLE,
                 "ocal_spmv: y is NULL");
  EXPECT_REFUSED(ocal_spmm(OCAL_NO_TRANS, 1.0, a, NULL, 0.0, y), OCAL_INVALID_HANDLE,
                 "ocal_spmm: x is NULL");
  EXPECT_REFUSED(ocal_spmm(OCAL_NO_TRANS, 1.0, a, x, 0.0, NULL), OCAL_INVALID_HANDLE,
                 "ocal_spmm: y is NULL");
  EXPECT_REFUSED(ocal_csr_diagonal(a, NULL), OCAL_INVALID_HANDLE, "ocal_csr_diagonal: out is NULL");
  EXPECT_REFUSED(ocal_cg(&op, NULL, x, NULL, NULL), OCAL_INVALID_HANDLE, "ocal_cg: b is NULL");
  EXPECT_REFUSED(ocal_cg(&op, y, NULL, NULL, NULL), OCAL_INVALID_HANDLE, "ocal_cg: x is NULL");
  /* ocal_csr_from_buffers: each of its three buffers. */
  void *rp = idx_array(OCAL_I32, l.rp, nr), *ci = idx_array(OCAL_I32, l.ci, nz);
  void *v = val_array(OCAL_F32, l.v, nz);
  ocal_buffer brp, bci, bv;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_I32, 1, &nr, rp, &brp));
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_I32, 1, &nz, ci, &bci));
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_F32, 1, &nz, v, &bv));
  free(rp);
  free(ci);
  free(v);
  ocal_csr c = NULL;
  EXPECT_REFUSED(ocal_csr_from_buffers(NULL, bci, bv, n, &c), OCAL_INVALID_HANDLE,
                 "ocal_csr_from_buffers: row_ptr is NULL");
  EXPECT_REFUSED(ocal_csr_from_buffers(brp, NULL, bv, n, &c), OCAL_INVALID_HANDLE,
                 "ocal_csr_from_buffers: col_idx is NULL");
  EXPECT_REFUSED(ocal_csr_from_buffers(brp, bci, NULL, n, &c), OCAL_INVALID_HANDLE,
                 "ocal_csr_from_buffers: values is NULL");
  ck_assert_ocal(ocal_csr_from_buffers(brp, bci, bv, n, &c));
  check_product(&l, OCAL_F32, c, 0, 1, 1.0, 0.0, 31);
  ocal_csr_release(c);
  ocal_buffer_release(brp);
  ocal_buffer_release(bci);
  ocal_buffer_release(bv);
  /* Operators whose matrix is gone, or of another size than their n. */
  struct ocal_csr_s dead;
  memset(&dead, 0, sizeof dead);
  ocal_operator gone = op;
  gone.user = gone.csr = &dead;
  EXPECT_REFUSED(ocal_cg(&gone, y, x, NULL, NULL), OCAL_INVALID_HANDLE,
                 "ocal_cg: operator A's CSR matrix is not a live ocal_csr (released already?)");
  gone.user = gone.csr = NULL;
  EXPECT_REFUSED(ocal_cg(&gone, y, x, NULL, NULL), OCAL_INVALID_HANDLE,
                 "ocal_cg: operator A's CSR matrix is NULL");
  ocal_operator shrunk = op;
  shrunk.n = n1;
  EXPECT_REFUSED(ocal_cg(&shrunk, y1, x1, NULL, NULL), OCAL_SHAPE_MISMATCH,
                 "ocal_cg: operator A has n = 29, but its CSR matrix is 30 x 30");
#ifdef OCAL_HAVE_LAPACKE
  double ev[2];
  EXPECT_REFUSED(ocal_lobpcg(&op, NULL, NULL, ev, NULL, NULL), OCAL_INVALID_HANDLE,
                 "ocal_lobpcg: x is NULL");
  size_t shape[2] = {n, 2};
  ocal_buffer xb;
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 2, shape, &xb));
  ocal_lobpcg_options o;
  ck_assert_ocal(ocal_lobpcg_options_init(&o));
  gone.user = gone.csr = &dead;
  o.b = &gone;
  EXPECT_REFUSED(ocal_lobpcg(&op, xb, &o, ev, NULL, NULL), OCAL_INVALID_HANDLE,
                 "ocal_lobpcg: operator B's CSR matrix is not a live ocal_csr");
  ocal_buffer_release(xb);
#endif
  /* The context computes after. */
  ocal_cg_result res = {sizeof res};
  ck_assert_ocal(ocal_random_uniform(9, 0, -1.0, 1.0, y));
  ck_assert_ocal(ocal_cg(&op, y, x, NULL, &res));
  ck_assert_int_eq(res.converged, 1);
  check_product(&l, OCAL_F32, a, 0, 1, 1.0, 0.0, 32);
  ocal_buffer_release(x);
  ocal_buffer_release(y);
  ocal_buffer_release(x1);
  ocal_buffer_release(y1);
  ocal_csr_release(a);
  hmat_free(&l);
}
END_TEST

Suite *sparse_suite(void);
Suite *sparse_suite(void) {
  Suite *s = suite_create("sparse");
  TCase *tc = fixture_tcase("spmv");
  tcase_add_test(tc, test_spmv_random_types);
  tcase_add_test(tc, test_spmv_kernels);
  tcase_add_test(tc, test_spmv_setting_refused);
  tcase_add_test(tc, test_spmv_degenerate);
  tcase_add_test(tc, test_coo_unsorted_duplicates);
  tcase_add_test(tc, test_from_buffers_and_queries);
  tcase_add_test(tc, test_from_buffers_index_type);
  tcase_add_test(tc, test_spmm_shape_message);
  tcase_add_test(tc, test_diagonal);
  suite_add_tcase(s, tc);
  tc = fixture_tcase("spmv_merge");
  tcase_add_test(tc, test_spmv_merge_powerlaw);
  tcase_add_test(tc, test_spmv_load_hints);
  suite_add_tcase(s, tc);
  tc = fixture_tcase("cg");
  tcase_add_test(tc, test_cg_spd);
  tcase_add_test(tc, test_cg_callback_and_failures);
  tcase_add_test(tc, test_cg_true_residual);
  suite_add_tcase(s, tc);
  tc = fixture_tcase("lobpcg");
#ifdef OCAL_HAVE_LAPACKE
  tcase_add_test(tc, test_lobpcg_laplacian);
  tcase_add_test(tc, test_lobpcg_generalised);
  tcase_add_test(tc, test_lobpcg_profile);
  tcase_add_test(tc, test_lobpcg_stop_reasons);
  tcase_add_test(tc, test_lobpcg_precond_constraints);
  tcase_add_test(tc, test_lobpcg_locked_not_converged);
  tcase_add_test(tc, test_lobpcg_iteration_counts);
  tcase_add_test(tc, test_lobpcg_dependent_constraints);
  tcase_add_test(tc, test_lobpcg_b_not_positive_definite);
  tcase_add_test(tc, test_lobpcg_b_m_shapes);
  tcase_add_test(tc, test_lobpcg_option_ranges);
#else
  tcase_add_test(tc, test_lobpcg_unsupported);
#endif
  suite_add_tcase(s, tc);
  tc = fixture_tcase("mtx");
  tcase_add_test(tc, test_mtx_read);
  tcase_add_test(tc, test_mtx_malformed);
  tcase_add_test(tc, test_mtx_f32_range);
  tcase_add_test(tc, test_bad_inputs);
  tcase_add_test(tc, test_coo_huge_nnz);
  tcase_add_test(tc, test_coo_huge_rows);
  tcase_add_test(tc, test_messages_name_arguments);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return fixture_run(sparse_suite()); }
