/* Tests of FFT plans (include/ocal/fft.h) on both engines against a double-precision
 * reference DFT computed on the host: power-of-two, odd and prime lengths; 1-D, 2-D and 3-D;
 * C2C, R2C and C2R; batches; in and out of place; the three normalisations; views; the plan
 * cache (also across threads); the disk cache across two processes; the errors. */
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

/* Loop index of the engine tests: 0 VkFFT, 1 clFFT. */
static const ocal_fft_engine engines[] = {OCAL_FFT_ENGINE_VKFFT, OCAL_FFT_ENGINE_CLFFT};

/* Whether the engine's kernels build on this device: a small plan naming it fails at creation
 * with OCAL_BUILD_FAILED where they do not (clFFT's on Intel's CPU runtime); test_build_failure
 * checks that failure itself. */
static int engine_builds(ocal_fft_engine e) {
  ocal_fft_desc d;
  ocal_fft_desc_init(&d);
  d.engine = e;
  d.lengths[0] = 8; /* out of place: a plan clFFT's kernels fail for on Intel's runtime */
  ocal_fft_plan plan;
  ocal_status s = ocal_fft_plan_create(fixture_ctx, &d, &plan);
  if (s == OCAL_OK) ocal_fft_plan_release(plan);
  return s != OCAL_BUILD_FAILED;
}

/* Returns 0 (and the test passes as skipped) when the engine was not built in, or its kernels
 * do not compile on this device. */
static int have_engine(ocal_fft_engine e) {
  int available = 0;
  ck_assert_ocal(ocal_fft_engine_available(e, &available));
  const char *name = ocal_fft_engine_name(e);
  if (!available) {
    fprintf(stderr, "check_fft: engine %s not built in, its tests are skipped\n", name);
  } else if (!engine_builds(e)) {
    fprintf(stderr, "check_fft: engine %s does not build on this device, its tests are skipped "
                    "(test_build_failure checks how that is reported)\n", name);
    available = 0;
  }
  return available;
}

/* ---- the reference ---------------------------------------------------------------------- */

typedef struct cd {
  double re, im;
} cd;

static size_t prod(int ndim, const size_t *lens) {
  size_t n = 1;
  for (int i = 0; i < ndim; i++) n *= lens[i];
  return n;
}

/* A naive DFT along one axis of a batch of row-major arrays, in double precision. */
static void dft_axis(cd *x, int ndim, const size_t *lens, size_t batch, int axis, int sign) {
  size_t n = lens[axis], inner = 1, outer = batch;
  for (int i = axis + 1; i < ndim; i++) inner *= lens[i];
  for (int i = 0; i < axis; i++) outer *= lens[i];
  cd *line = malloc(n * sizeof *line), *res = malloc(n * sizeof *res);
  ck_assert_ptr_nonnull(line);
  ck_assert_ptr_nonnull(res);
  for (size_t o = 0; o < outer; o++) {
    for (size_t in = 0; in < inner; in++) {
      cd *base = x + o * n * inner + in;
      for (size_t j = 0; j < n; j++) line[j] = base[j * inner];
      for (size_t k = 0; k < n; k++) {
        double re = 0, im = 0;
        for (size_t j = 0; j < n; j++) {
          double a = sign * 2.0 * M_PI * (double)((j * k) % n) / (double)n;
          double c = cos(a), s = sin(a);
          re += line[j].re * c - line[j].im * s;
          im += line[j].re * s + line[j].im * c;
        }
        res[k].re = re;
        res[k].im = im;
      }
      for (size_t k = 0; k < n; k++) base[k * inner] = res[k];
    }
  }
  free(line);
  free(res);
}

static void dft(cd *x, int ndim, const size_t *lens, size_t batch, int sign) {
  for (int a = 0; a < ndim; a++) dft_axis(x, ndim, lens, batch, a, sign);
}

static double *random_reals(size_t n, uint64_t seed) {
  double *x = malloc((n ? n : 1) * sizeof *x);
  ck_assert_ptr_nonnull(x);
  uint64_t st = seed;
  for (size_t i = 0; i < n; i++)
    x[i] = (double)(fixture_random(&st) >> 11) / 9007199254740992.0 * 2.0 - 1.0;
  return x;
}

/* ||got - want|| / ||want|| over n reals. */
static double rel_error(const double *got, const double *want, size_t n) {
  double num = 0, den = 0;
  for (size_t i = 0; i < n; i++) {
    num += (got[i] - want[i]) * (got[i] - want[i]);
    den += want[i] * want[i];
  }
  return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* Buffers hold f32/c32 or f64/c64; the host side is always double. */
static ocal_buffer upload(const double *x, size_t reals, int cplx, int dbl) {
  ocal_buffer b;
  size_t numel = cplx ? reals / 2 : reals;
  ocal_dtype t = dbl ? (cplx ? OCAL_C64 : OCAL_F64) : (cplx ? OCAL_C32 : OCAL_F32);
  if (dbl) {
    ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, t, 1, &numel, x, &b));
  } else {
    float *f = malloc(reals * sizeof *f);
    ck_assert_ptr_nonnull(f);
    for (size_t i = 0; i < reals; i++) f[i] = (float)x[i];
    ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, t, 1, &numel, f, &b));
    free(f);
  }
  return b;
}

static double *download(ocal_buffer b, size_t reals, int dbl) {
  double *x = malloc(reals * sizeof *x);
  ck_assert_ptr_nonnull(x);
  size_t numel;
  ocal_dtype t;
  ck_assert_ocal(ocal_buffer_get_numel(b, &numel));
  ck_assert_ocal(ocal_buffer_get_dtype(b, &t));
  size_t count = (t == OCAL_C32 || t == OCAL_C64) ? reals / 2 : reals;
  ck_assert_uint_eq(numel, count);
  if (dbl) {
    ck_assert_ocal(ocal_buffer_read(b, 0, count, x, NULL));
  } else {
    float *f = malloc(reals * sizeof *f);
    ck_assert_ptr_nonnull(f);
    ck_assert_ocal(ocal_buffer_read(b, 0, count, f, NULL));
    for (size_t i = 0; i < reals; i++) x[i] = f[i];
    free(f);
  }
  return x;
}

static double norm_scale(ocal_fft_norm norm, size_t n, int forward) {
  if (norm == OCAL_FFT_NORM_ORTHO) return 1.0 / sqrt((double)n);
  if (norm == OCAL_FFT_NORM_BACKWARD) return forward ? 1.0 : 1.0 / (double)n;
  return forward ? 1.0 / (double)n : 1.0;
}

typedef struct fft_case {
  ocal_fft_engine engine;
  ocal_fft_kind kind; /* C2C, or R2C (which also checks C2R back) */
  int ndim;
  size_t lens[3];
  size_t batch;
  int in_place;
  int dbl;
  ocal_fft_norm norm;
} fft_case;

static void describe(const fft_case *c, ocal_fft_kind kind, ocal_fft_desc *d) {
  ck_assert_ocal(ocal_fft_desc_init(d));
  d->ndim = c->ndim;
  memcpy(d->lengths, c->lens, sizeof d->lengths);
  d->batch = c->batch;
  d->kind = kind;
  d->precision = c->dbl ? OCAL_F64 : OCAL_F32;
  d->in_place = c->in_place;
  d->norm = c->norm;
  d->engine = c->engine;
}

/* Forward against the reference, then inverse back to the input. */
static void check_c2c(const fft_case *c, const char *label) {
  size_t n = prod(c->ndim, c->lens), total = n * c->batch;
  double tol = c->dbl ? 1e-11 : 1e-5;
  double *x = random_reals(2 * total, 1234 + total);
  cd *ref = malloc(total * sizeof *ref);
  ck_assert_ptr_nonnull(ref);
  memcpy(ref, x, total * sizeof *ref);
  dft(ref, c->ndim, c->lens, c->batch, -1);
  double fs = norm_scale(c->norm, n, 1);
  for (size_t i = 0; i < total; i++) {
    ref[i].re *= fs;
    ref[i].im *= fs;
  }

  ocal_fft_desc d;
  describe(c, OCAL_FFT_C2C, &d);
  ocal_fft_plan plan;
  ck_assert_ocal(ocal_fft_plan_create(fixture_ctx, &d, &plan));
  ocal_buffer in = upload(x, 2 * total, 1, c->dbl), out = in;
  if (!c->in_place) {
    size_t numel = total;
    ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, c->dbl ? OCAL_C64 : OCAL_C32, 1, &numel, &out));
  }
  ck_assert_ocal(ocal_fft_execute(plan, OCAL_FFT_FORWARD, in, out));
  double *y = download(out, 2 * total, c->dbl);
  double err = rel_error(y, (const double *)ref, 2 * total);
  ck_assert_msg(err < tol, "%s forward: relative error %.3g (tolerance %.g)", label, err, tol);
  if (!c->in_place) {
    /* Out of place, the input is left as it was. */
    double *x2 = download(in, 2 * total, c->dbl);
    ck_assert_msg(rel_error(x2, x, 2 * total) < 1e-7 || c->dbl, "%s: input changed", label);
    free(x2);
  }
  ocal_buffer back = in;
  if (!c->in_place) {
    ck_assert_ocal(ocal_buffer_fill(in, (double[2]){0, 0})); /* c64 zero is also a c32 zero */
    back = in;
  }
  ck_assert_ocal(ocal_fft_execute(plan, OCAL_FFT_INVERSE, out, back));
  double *z = download(back, 2 * total, c->dbl);
  err = rel_error(z, x, 2 * total);
  ck_assert_msg(err < tol, "%s round trip: relative error %.3g", label, err);
  free(y);
  free(z);
  free(x);
  free(ref);
  if (!c->in_place) ocal_buffer_release(out);
  ocal_buffer_release(in);
  ck_assert_ocal(ocal_fft_plan_release(plan));
}

/* R2C against the reference (NumPy's rfftn layout), then C2R back to the input, and the C2R
 * input left unchanged. */
static void check_real(const fft_case *c, const char *label) {
  size_t n = prod(c->ndim, c->lens), total = n * c->batch;
  size_t last = c->lens[c->ndim - 1], half = last / 2 + 1;
  size_t ctotal = total / last * half;
  double tol = c->dbl ? 1e-11 : 1e-5;
  double *x = random_reals(total, 99 + total);
  cd *full = malloc(total * sizeof *full);
  ck_assert_ptr_nonnull(full);
  for (size_t i = 0; i < total; i++) full[i] = (cd){x[i], 0};
  dft(full, c->ndim, c->lens, c->batch, -1);
  double fs = norm_scale(c->norm, n, 1);
  double *ref = malloc(2 * ctotal * sizeof *ref);
  ck_assert_ptr_nonnull(ref);
  for (size_t r = 0; r < total / last; r++)
    for (size_t k = 0; k < half; k++) {
      ref[2 * (r * half + k)] = full[r * last + k].re * fs;
      ref[2 * (r * half + k) + 1] = full[r * last + k].im * fs;
    }

  ocal_fft_desc d;
  ocal_fft_plan r2c, c2r;
  describe(c, OCAL_FFT_R2C, &d);
  ck_assert_ocal(ocal_fft_plan_create(fixture_ctx, &d, &r2c));
  describe(c, OCAL_FFT_C2R, &d);
  ck_assert_ocal(ocal_fft_plan_create(fixture_ctx, &d, &c2r));
  ocal_fft_plan_info info = {sizeof info};
  ck_assert_ocal(ocal_fft_plan_get_info(r2c, &info));
  ck_assert_uint_eq(info.in_numel, total);
  ck_assert_uint_eq(info.out_numel, ctotal);

  ocal_buffer in = upload(x, total, 0, c->dbl), spec, back;
  size_t cn = ctotal, rn = total;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, c->dbl ? OCAL_C64 : OCAL_C32, 1, &cn, &spec));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, c->dbl ? OCAL_F64 : OCAL_F32, 1, &rn, &back));
  ck_assert_ocal(ocal_fft_execute(r2c, OCAL_FFT_FORWARD, in, spec));
  double *y = download(spec, 2 * ctotal, c->dbl);
  double err = rel_error(y, ref, 2 * ctotal);
  ck_assert_msg(err < tol, "%s R2C: relative error %.3g", label, err);
  ck_assert_ocal(ocal_fft_execute(c2r, OCAL_FFT_INVERSE, spec, back));
  double *z = download(back, total, c->dbl);
  err = rel_error(z, x, total);
  ck_assert_msg(err < tol, "%s C2R round trip: relative error %.3g", label, err);
  double *y2 = download(spec, 2 * ctotal, c->dbl);
  ck_assert_msg(memcmp(y, y2, 2 * ctotal * sizeof *y) == 0, "%s: C2R changed its input", label);
  free(y2);
  free(y);
  free(z);
  free(x);
  free(full);
  free(ref);
  ocal_buffer_release(in);
  ocal_buffer_release(spec);
  ocal_buffer_release(back);
  ck_assert_ocal(ocal_fft_plan_release(r2c));
  ck_assert_ocal(ocal_fft_plan_release(c2r));
}

static void run_case(const fft_case *c) {
  char label[160];
  const char *name = ocal_fft_engine_name(c->engine);
  snprintf(label, sizeof label, "%s %s %s %zux%zux%zu (ndim %d) batch %zu %s", name,
           c->kind == OCAL_FFT_C2C ? "c2c" : "r2c/c2r", c->dbl ? "f64" : "f32", c->lens[0],
           c->lens[1], c->lens[2], c->ndim, c->batch, c->in_place ? "in place" : "out of place");
  if (c->kind == OCAL_FFT_C2C)
    check_c2c(c, label);
  else
    check_real(c, label);
}

/* ---- transforms on both engines ------------------------------------------------------- */

/* C2R of spectra that are not Hermitian (random bins, imaginary DC and Nyquist parts
 * included), in a batch, against numpy.fft.irfftn's reading of them: the inverse DFT along
 * the other axes, then each row's real transform from Re(X[0]), X[1..h-1] and their
 * conjugates, and Re(X[n/2]) for an even n. Rows must not leak into each other. */
static void check_c2r_non_hermitian(ocal_fft_engine e, int ndim, const size_t *lens,
                                    size_t batch, int dbl) {
  size_t n = lens[ndim - 1], h = n / 2 + 1, N = prod(ndim, lens);
  size_t rows = batch * N / n, ctotal = rows * h;
  double *x = random_reals(2 * ctotal, 4242 + ctotal);
  cd *a = malloc(ctotal * sizeof *a);
  double *want = malloc(rows * n * sizeof *want);
  ck_assert_ptr_nonnull(a);
  ck_assert_ptr_nonnull(want);
  memcpy(a, x, ctotal * sizeof *a);
  size_t clens[3] = {1, 1, 1};
  memcpy(clens, lens, (size_t)ndim * sizeof *lens);
  clens[ndim - 1] = h;
  for (int axis = 0; axis < ndim - 1; axis++) dft_axis(a, ndim, clens, batch, axis, 1);
  for (size_t r = 0; r < rows; r++)
    for (size_t j = 0; j < n; j++) {
      const cd *row = a + r * h;
      double v = row[0].re;
      for (size_t k = 1; k < h; k++) {
        double t = 2.0 * M_PI * (double)((j * k) % n) / (double)n;
        double re = row[k].re * cos(t) - row[k].im * sin(t);
        v += 2 * k == n ? re : 2 * re;
      }
      want[r * n + j] = v / (double)N;
    }
  ocal_fft_desc d;
  ck_assert_ocal(ocal_fft_desc_init(&d));
  d.ndim = ndim;
  memcpy(d.lengths, lens, ndim * sizeof *lens);
  d.batch = batch;
  d.kind = OCAL_FFT_C2R;
  d.precision = dbl ? OCAL_F64 : OCAL_F32;
  d.engine = e;
  ocal_fft_plan plan;
  ck_assert_ocal(ocal_fft_plan_create(fixture_ctx, &d, &plan));
  ocal_buffer in = upload(x, 2 * ctotal, 1, dbl), out;
  size_t rn = rows * n;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, dbl ? OCAL_F64 : OCAL_F32, 1, &rn, &out));
  ck_assert_ocal(ocal_fft_execute(plan, OCAL_FFT_INVERSE, in, out));
  double *got = download(out, rn, dbl), *x2 = download(in, 2 * ctotal, dbl);
  double err = rel_error(got, want, rn);
  ck_assert_msg(err < (dbl ? 1e-11 : 1e-5), "%s c2r of non-Hermitian input, %zu (ndim %d), "
                "batch %zu: relative error %.3g", ocal_fft_engine_name(e), n, ndim, batch, err);
  ck_assert_msg(rel_error(x2, x, 2 * ctotal) < (dbl ? 1e-15 : 1e-7), "C2R changed its input");
  free(got), free(x2), free(x), free(a), free(want);
  ocal_buffer_release(in);
  ocal_buffer_release(out);
  ck_assert_ocal(ocal_fft_plan_release(plan));
}

START_TEST(test_c2r_non_hermitian_batches) {
  ocal_fft_engine e = engines[_i];
  if (!have_engine(e)) return;
  check_c2r_non_hermitian(e, 1, (size_t[]){8}, 3, 0);
  check_c2r_non_hermitian(e, 1, (size_t[]){9}, 4, 0);
  check_c2r_non_hermitian(e, 2, (size_t[]){3, 6}, 2, 0);
  check_c2r_non_hermitian(e, 2, (size_t[]){5, 7}, 2, 0);
  check_c2r_non_hermitian(e, 3, (size_t[]){2, 3, 4}, 2, 0);
  if (fixture_has_fp64()) check_c2r_non_hermitian(e, 1, (size_t[]){10}, 3, 1);
}
END_TEST

START_TEST(test_c2c_1d_lengths) {
  ocal_fft_engine e = engines[_i];
  if (!have_engine(e)) return;
  /* A power of two, 1000, and an odd length: VkFFT gets the prime 97 (Bluestein's
   * algorithm); clFFT, which has no Bluestein, gets 105 = 3 * 5 * 7 (its largest prime
   * radix, 13, is in the 2-D test). clFFT compiles slowly on PoCL: it gets fewer lengths. */
  size_t vk[] = {16, 1000, 97}, cl[] = {16, 105};
  size_t *lengths = e == OCAL_FFT_ENGINE_VKFFT ? vk : cl;
  size_t count = e == OCAL_FFT_ENGINE_VKFFT ? 3 : 2;
  for (size_t i = 0; i < count; i++) {
    fft_case c = {e, OCAL_FFT_C2C, 1, {lengths[i], 0, 0}, 3, 0, 0, OCAL_FFT_NORM_BACKWARD};
    run_case(&c);
  }
}
END_TEST

START_TEST(test_c2c_2d_3d_in_and_out_of_place) {
  ocal_fft_engine e = engines[_i];
  if (!have_engine(e)) return;
  fft_case c2 = {e, OCAL_FFT_C2C, 2, {13, 20, 0}, 2, 0, 0, OCAL_FFT_NORM_BACKWARD};
  run_case(&c2);
  fft_case c3 = {e, OCAL_FFT_C2C, 3, {4, 6, 10}, 2, 1, 0, OCAL_FFT_NORM_BACKWARD};
  run_case(&c3);
}
END_TEST

START_TEST(test_real_1d_2d_3d) {
  ocal_fft_engine e = engines[_i];
  if (!have_engine(e)) return;
  /* 1-D: the prime 97 on VkFFT, 96 = 2^5 * 3 on clFFT. */
  fft_case c1 = {e, OCAL_FFT_R2C, 1, {e == OCAL_FFT_ENGINE_VKFFT ? 97 : 96, 0, 0}, 2, 0, 0,
                 OCAL_FFT_NORM_BACKWARD};
  run_case(&c1);
  /* An odd last length: n / 2 + 1 complex values, and C2R must know n is odd. */
  fft_case c2 = {e, OCAL_FFT_R2C, 2, {6, 15, 0}, 3, 0, 0, OCAL_FFT_NORM_BACKWARD};
  run_case(&c2);
  fft_case c3 = {e, OCAL_FFT_R2C, 3, {4, 6, 8}, 2, 0, 0, OCAL_FFT_NORM_BACKWARD};
  run_case(&c3);
}
END_TEST

START_TEST(test_normalisations) {
  ocal_fft_engine e = engines[_i];
  if (!have_engine(e)) return;
  fft_case o = {e, OCAL_FFT_C2C, 1, {40, 0, 0}, 2, 0, 0, OCAL_FFT_NORM_ORTHO};
  run_case(&o);
  fft_case r = {e, OCAL_FFT_R2C, 1, {40, 0, 0}, 2, 0, 0, OCAL_FFT_NORM_FORWARD};
  run_case(&r);
}
END_TEST

START_TEST(test_double_precision) {
  ocal_fft_engine e = engines[_i];
  if (!have_engine(e)) return;
  int fp64;
  ck_assert_ocal(ocal_context_get_fp64(fixture_ctx, &fp64));
  if (!fp64) return;
  fft_case c = {e, OCAL_FFT_C2C, 1, {e == OCAL_FFT_ENGINE_VKFFT ? 97 : 60, 0, 0}, 2, 0, 1,
                OCAL_FFT_NORM_BACKWARD};
  run_case(&c);
  fft_case r = {e, OCAL_FFT_R2C, 2, {6, 10, 0}, 1, 0, 1, OCAL_FFT_NORM_ORTHO};
  run_case(&r);
}
END_TEST

/* Views: an input at an odd element offset (no sub-buffer can start there: clFFT's input
 * is staged) and an output at an aligned one. */
START_TEST(test_views_with_offsets) {
  ocal_fft_engine e = engines[_i];
  if (!have_engine(e)) return;
  size_t n = 32, batch = 2, total = n * batch, big = 4096;
  double *x = random_reals(2 * total, 7);
  cd *ref = malloc(total * sizeof *ref);
  memcpy(ref, x, total * sizeof *ref);
  dft(ref, 1, &n, batch, -1);
  float *xf = malloc(2 * total * sizeof *xf), *yf = malloc(2 * total * sizeof *yf);
  for (size_t i = 0; i < 2 * total; i++) xf[i] = (float)x[i];
  ocal_buffer whole, vin, vout;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_C32, 1, &big, &whole));
  ck_assert_ocal(ocal_buffer_view(whole, 3, 1, &total, &vin));
  ck_assert_ocal(ocal_buffer_view(whole, 1024, 1, &total, &vout));
  ck_assert_ocal(ocal_buffer_write(vin, 0, total, xf, NULL));
  ocal_fft_desc d;
  ocal_fft_desc_init(&d);
  d.lengths[0] = n;
  d.batch = batch;
  d.engine = e;
  ocal_fft_plan plan;
  ck_assert_ocal(ocal_fft_plan_create(fixture_ctx, &d, &plan));
  ck_assert_ocal(ocal_fft_execute(plan, OCAL_FFT_FORWARD, vin, vout));
  ck_assert_ocal(ocal_buffer_read(vout, 0, total, yf, NULL));
  double *y = malloc(2 * total * sizeof *y);
  for (size_t i = 0; i < 2 * total; i++) y[i] = yf[i];
  double err = rel_error(y, (const double *)ref, 2 * total);
  ck_assert_msg(err < 1e-5, "views: relative error %.3g", err);
  /* The elements around the output view were not touched. */
  float around[2];
  ck_assert_ocal(ocal_buffer_read(whole, 1023, 1, around, NULL));
  ck_assert_msg(around[0] == 0 && around[1] == 0, "element before the output view changed");
  ck_assert_ocal(ocal_buffer_read(whole, 1024 + total, 1, around, NULL));
  ck_assert_msg(around[0] == 0 && around[1] == 0, "element after the output view changed");
  /* In place on an unaligned view. */
  d.in_place = 1;
  ocal_fft_plan ip;
  ck_assert_ocal(ocal_fft_plan_create(fixture_ctx, &d, &ip));
  ck_assert_ocal(ocal_fft_execute(ip, OCAL_FFT_FORWARD, vin, vin));
  ck_assert_ocal(ocal_buffer_read(vin, 0, total, yf, NULL));
  for (size_t i = 0; i < 2 * total; i++) y[i] = yf[i];
  err = rel_error(y, (const double *)ref, 2 * total);
  ck_assert_msg(err < 1e-5, "in-place view: relative error %.3g", err);
  free(x);
  free(ref);
  free(xf);
  free(yf);
  free(y);
  ocal_buffer_release(vin);
  ocal_buffer_release(vout);
  ocal_buffer_release(whole);
  ocal_fft_plan_release(plan);
  ocal_fft_plan_release(ip);
}
END_TEST

/* The real side of R2C and C2R at an odd element offset, on a length long enough for VkFFT to
 * split it over several kernels: the same numbers as at offset 0, and the elements around the
 * output view untouched. */
START_TEST(test_real_views_odd_offsets) {
  ocal_fft_engine e = engines[_i];
  if (!have_engine(e)) return;
  size_t n = 65536, batch = 2, total = n * batch, ctotal = (n / 2 + 1) * batch;
  size_t big = total + 3, cbig = ctotal + 1;
  double *x = random_reals(total, 31);
  float *xf = malloc(total * sizeof *xf);
  ck_assert_ptr_nonnull(xf);
  for (size_t i = 0; i < total; i++) xf[i] = (float)x[i];
  ocal_fft_desc d;
  ocal_fft_desc_init(&d);
  d.lengths[0] = n;
  d.batch = batch;
  d.engine = e;
  d.kind = OCAL_FFT_R2C;
  ocal_fft_plan r2c, c2r;
  ck_assert_ocal(ocal_fft_plan_create(fixture_ctx, &d, &r2c));
  d.kind = OCAL_FFT_C2R;
  ck_assert_ocal(ocal_fft_plan_create(fixture_ctx, &d, &c2r));
  ocal_buffer real0, spec0, back0, rwhole, swhole, bwhole, rview, sview, bview;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_F32, 1, &total, xf, &real0));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_C32, 1, &ctotal, &spec0));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &total, &back0));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &big, &rwhole));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_C32, 1, &cbig, &swhole));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &big, &bwhole));
  ck_assert_ocal(ocal_buffer_view(rwhole, 1, 1, &total, &rview));
  ck_assert_ocal(ocal_buffer_view(swhole, 1, 1, &ctotal, &sview));
  ck_assert_ocal(ocal_buffer_view(bwhole, 1, 1, &total, &bview));
  ck_assert_ocal(ocal_buffer_write(rview, 0, total, xf, NULL));
  ck_assert_ocal(ocal_fft_execute(r2c, OCAL_FFT_FORWARD, real0, spec0));
  ck_assert_ocal(ocal_fft_execute(r2c, OCAL_FFT_FORWARD, rview, sview));
  double *want = download(spec0, 2 * ctotal, 0), *got = download(sview, 2 * ctotal, 0);
  double err = rel_error(got, want, 2 * ctotal);
  ck_assert_msg(err < 1e-6, "%s R2C from a real view at offset 1: relative error %.3g against "
                "offset 0", ocal_fft_engine_name(e), err);
  ck_assert_ocal(ocal_fft_execute(c2r, OCAL_FFT_INVERSE, spec0, back0));
  ck_assert_ocal(ocal_fft_execute(c2r, OCAL_FFT_INVERSE, spec0, bview));
  free(want);
  free(got);
  want = download(back0, total, 0);
  got = download(bview, total, 0);
  err = rel_error(got, want, total);
  ck_assert_msg(err < 1e-6, "%s C2R into a real view at offset 1: relative error %.3g against "
                "offset 0", ocal_fft_engine_name(e), err);
  ck_assert_msg(rel_error(want, x, total) < 1e-5, "%s: the round trip is wrong",
                ocal_fft_engine_name(e));
  float around[3];
  ck_assert_ocal(ocal_buffer_read(bwhole, 0, 1, &around[0], NULL));
  ck_assert_ocal(ocal_buffer_read(bwhole, total + 1, 2, &around[1], NULL));
  ck_assert_msg(around[0] == 0 && around[1] == 0 && around[2] == 0,
                "elements around the C2R output view changed");
  free(want);
  free(got);
  free(x);
  free(xf);
  ocal_buffer bufs[] = {real0, spec0, back0, rview, sview, bview, rwhole, swhole, bwhole};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) ocal_buffer_release(bufs[i]);
  ck_assert_ocal(ocal_fft_plan_release(r2c));
  ck_assert_ocal(ocal_fft_plan_release(c2r));
}
END_TEST

/* Scratch memory that a plan or an execution cannot have under the context's memory limit:
 * OCAL_OUT_OF_DEVICE_MEMORY, as fft.h lists, with a message that names the limit. */
START_TEST(test_scratch_over_memory_limit) {
  ocal_context_options o;
  ocal_context_options_init(&o);
  o.pool = 0;
  o.memory_limit = 90000;
  ocal_context ctx;
  ck_assert_ocal(ocal_context_create(&o, &ctx));
  /* C2R stages its input on a copy: 32776 bytes more than the 65544 the buffers hold. */
  size_t n = 8192, h = n / 2 + 1;
  ocal_fft_desc d;
  ocal_fft_desc_init(&d);
  d.lengths[0] = n;
  d.kind = OCAL_FFT_C2R;
  ocal_fft_plan plan;
  ck_assert_ocal(ocal_fft_plan_create(ctx, &d, &plan));
  ocal_buffer in, out;
  ck_assert_ocal(ocal_buffer_zeros(ctx, OCAL_C32, 1, &h, &in));
  ck_assert_ocal(ocal_buffer_zeros(ctx, OCAL_F32, 1, &n, &out));
  ck_assert_ocal_fails(ocal_fft_execute(plan, OCAL_FFT_INVERSE, in, out),
                       OCAL_OUT_OF_DEVICE_MEMORY);
  ck_assert_msg(strstr(ocal_last_error(), "memory_limit") != NULL, "%s", ocal_last_error());
  ck_assert_msg(strncmp(ocal_last_error(), "ocal_fft_execute: ", 18) == 0, "%s",
                ocal_last_error());
  ck_assert_ocal(ocal_fft_plan_release(plan));
  /* An R2C whose last length is 1 runs through a C2C plan on a complex scratch buffer of
   * 4 x 1024 x 8 bytes. */
  ocal_fft_desc_init(&d);
  d.ndim = 2;
  d.lengths[0] = 1024;
  d.lengths[1] = 1;
  d.batch = 4;
  d.kind = OCAL_FFT_R2C;
  ocal_status s = ocal_fft_plan_create(ctx, &d, &plan);
  ck_assert_ocal_fails(s, OCAL_OUT_OF_DEVICE_MEMORY);
  ck_assert_msg(strstr(ocal_last_error(), "memory_limit") != NULL, "%s", ocal_last_error());
  ck_assert_msg(strncmp(ocal_last_error(), "ocal_fft_plan_create: ", 22) == 0, "%s",
                ocal_last_error());
  /* The four-step kernels' scratch of 4096 complex numbers. */
  ocal_fft_desc_init(&d);
  d.lengths[0] = 4096;
  d.engine = OCAL_FFT_ENGINE_FOURSTEP;
  s = ocal_fft_plan_create(ctx, &d, &plan);
  if (s == OCAL_UNSUPPORTED || s == OCAL_BUILD_FAILED) {
    fprintf(stderr, "check_fft: the four-step kernels do not run on this device (%s): their "
                    "scratch is not checked\n", ocal_last_error());
  } else {
    ck_assert_ocal_fails(s, OCAL_OUT_OF_DEVICE_MEMORY);
    ck_assert_msg(strstr(ocal_last_error(), "memory_limit") != NULL, "%s", ocal_last_error());
    ck_assert_msg(strncmp(ocal_last_error(), "ocal_fft_plan_create: ", 22) == 0, "%s",
                  ocal_last_error());
  }
  /* clFFT's trial transform at plan creation, on two scratch buffers of 8192 x 8 bytes: the
   * allocation's status and message, not one of clFFT's (it said CL_OUT_OF_HOST_MEMORY). */
  if (have_engine(OCAL_FFT_ENGINE_CLFFT)) {
    ocal_fft_desc_init(&d);
    d.lengths[0] = 8192;
    d.engine = OCAL_FFT_ENGINE_CLFFT;
    ck_assert_ocal_fails(ocal_fft_plan_create(ctx, &d, &plan), OCAL_OUT_OF_DEVICE_MEMORY);
    ck_assert_msg(strstr(ocal_last_error(), "memory_limit") != NULL, "%s", ocal_last_error());
    ck_assert_msg(strncmp(ocal_last_error(), "ocal_fft_plan_create: ", 22) == 0, "%s",
                  ocal_last_error());
  }
  ocal_buffer_release(in);
  ocal_buffer_release(out);
  ck_assert_ocal(ocal_context_release(ctx));
}
END_TEST

START_TEST(test_errors) {
  ocal_fft_engine e = engines[_i];
  if (!have_engine(e)) return;
  ocal_fft_desc d;
  ocal_fft_plan plan;
  ocal_fft_desc_init(&d);
  d.engine = e;
  d.lengths[0] = 0;
  ck_assert_ocal_fails(ocal_fft_plan_create(fixture_ctx, &d, &plan), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_null(plan);
  d.lengths[0] = 8;
  d.ndim = 4;
  ck_assert_ocal_fails(ocal_fft_plan_create(fixture_ctx, &d, &plan), OCAL_INVALID_ARGUMENT);
  d.ndim = 1;
  d.batch = 0;
  ck_assert_ocal_fails(ocal_fft_plan_create(fixture_ctx, &d, &plan), OCAL_INVALID_ARGUMENT);
  d.batch = 1;
  d.kind = OCAL_FFT_R2C;
  d.in_place = 1;
  ck_assert_ocal_fails(ocal_fft_plan_create(fixture_ctx, &d, &plan), OCAL_INVALID_ARGUMENT);
  ck_assert_msg(strstr(ocal_last_error(), "C2C only") != NULL, "%s", ocal_last_error());
  d.kind = OCAL_FFT_C2C;
  d.in_place = 2;
  ck_assert_ocal_fails(ocal_fft_plan_create(fixture_ctx, &d, &plan), OCAL_INVALID_ARGUMENT);
  ck_assert_msg(strstr(ocal_last_error(), "in_place is 2") != NULL, "%s", ocal_last_error());
  d.kind = OCAL_FFT_R2C;
  d.in_place = 0;
  d.precision = OCAL_I32;
  ck_assert_ocal_fails(ocal_fft_plan_create(fixture_ctx, &d, &plan), OCAL_INVALID_ARGUMENT);
  d.precision = OCAL_F32;
  d.lengths[0] = SIZE_MAX / 2;
  d.ndim = 2;
  d.lengths[1] = 4;
  ck_assert_ocal_fails(ocal_fft_plan_create(fixture_ctx, &d, &plan), OCAL_OVERFLOW);
  ck_assert_ocal_fails(ocal_fft_plan_create(NULL, &d, &plan), OCAL_INVALID_HANDLE);
  ck_assert_ocal_fails(ocal_fft_plan_create(fixture_ctx, NULL, &plan), OCAL_INVALID_ARGUMENT);

  /* Doubles on a context that turned fp64 off. */
  ocal_context_options o;
  ocal_context_options_init(&o);
  o.fp64 = 0;
  ocal_context no64;
  ck_assert_ocal(ocal_context_create(&o, &no64));
  ocal_fft_desc_init(&d);
  d.engine = e;
  d.lengths[0] = 8;
  d.precision = OCAL_F64;
  ck_assert_ocal_fails(ocal_fft_plan_create(no64, &d, &plan), OCAL_UNSUPPORTED);
  ck_assert_msg(strstr(ocal_last_error(), "fp64") != NULL, "%s", ocal_last_error());
  ocal_context_release(no64);

  /* Buffers that do not fit an R2C plan of 16 reals, batch 2. */
  ocal_fft_desc_init(&d);
  d.engine = e;
  d.kind = OCAL_FFT_R2C;
  d.lengths[0] = 16;
  d.batch = 2;
  ck_assert_ocal(ocal_fft_plan_create(fixture_ctx, &d, &plan));
  size_t n32 = 32, n18 = 18, n17 = 17, n64 = 64;
  ocal_buffer real32, cplx18, cplx17, cplx32, real64;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &n32, &real32));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_C32, 1, &n18, &cplx18));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_C32, 1, &n17, &cplx17));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_C32, 1, &n32, &cplx32));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &n64, &real64));
  ck_assert_ocal(ocal_fft_execute(plan, OCAL_FFT_FORWARD, real32, cplx18));
  ck_assert_ocal_fails(ocal_fft_execute(plan, OCAL_FFT_INVERSE, real32, cplx18),
                       OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_fft_execute(plan, (ocal_fft_direction)0, real32, cplx18),
                       OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_fft_execute(plan, OCAL_FFT_FORWARD, real32, cplx17),
                       OCAL_SHAPE_MISMATCH);
  ck_assert_msg(strstr(ocal_last_error(), "17") && strstr(ocal_last_error(), "18"), "%s",
                ocal_last_error());
  ck_assert_ocal_fails(ocal_fft_execute(plan, OCAL_FFT_FORWARD, cplx32, cplx18),
                       OCAL_TYPE_MISMATCH);
  ck_assert_ocal_fails(ocal_fft_execute(plan, OCAL_FFT_FORWARD, real64, cplx18),
                       OCAL_SHAPE_MISMATCH);
  ck_assert_ocal_fails(ocal_fft_execute(plan, OCAL_FFT_FORWARD, NULL, cplx18),
                       OCAL_INVALID_HANDLE);
  ck_assert_ocal_fails(ocal_fft_execute(NULL, OCAL_FFT_FORWARD, real32, cplx18),
                       OCAL_INVALID_HANDLE);
  ck_assert_ocal(ocal_fft_plan_release(plan));

  /* Out of place with overlapping views; in place with distinct buffers. */
  ocal_fft_desc_init(&d);
  d.engine = e;
  d.lengths[0] = 8;
  ck_assert_ocal(ocal_fft_plan_create(fixture_ctx, &d, &plan));
  ocal_buffer a, b;
  size_t n8 = 8;
  ck_assert_ocal(ocal_buffer_view(cplx32, 0, 1, &n8, &a));
  ck_assert_ocal(ocal_buffer_view(cplx32, 4, 1, &n8, &b));
  ck_assert_ocal_fails(ocal_fft_execute(plan, OCAL_FFT_FORWARD, a, b), OCAL_INVALID_ARGUMENT);
  ck_assert_msg(strstr(ocal_last_error(), "overlap") != NULL, "%s", ocal_last_error());
  ck_assert_ocal_fails(ocal_fft_execute(plan, OCAL_FFT_FORWARD, a, a), OCAL_INVALID_ARGUMENT);
  ocal_buffer_release(b);
  ck_assert_ocal(ocal_buffer_view(cplx32, 8, 1, &n8, &b));
  ck_assert_ocal(ocal_fft_execute(plan, OCAL_FFT_FORWARD, a, b)); /* adjacent is fine */
  ocal_fft_plan ip;
  d.in_place = 1;
  ck_assert_ocal(ocal_fft_plan_create(fixture_ctx, &d, &ip));
  ck_assert_ocal_fails(ocal_fft_execute(ip, OCAL_FFT_FORWARD, a, b), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal(ocal_fft_execute(ip, OCAL_FFT_FORWARD, a, a));
  ck_assert_ocal(ocal_fft_plan_release(ip));
  ck_assert_ocal(ocal_fft_plan_release(plan));
  ck_assert_ocal_fails(ocal_fft_plan_release(plan), OCAL_INVALID_HANDLE); /* once too often */
  ocal_buffer_release(a);
  ocal_buffer_release(b);
  ocal_buffer_release(real32);
  ocal_buffer_release(cplx18);
  ocal_buffer_release(cplx17);
  ocal_buffer_release(cplx32);
  ocal_buffer_release(real64);
}
END_TEST

/* ---- engine choice, the plan cache, the disk cache -------------------------------------- */

START_TEST(test_clfft_refuses_large_prime_factors) {
  if (!have_engine(OCAL_FFT_ENGINE_CLFFT)) return;
  ocal_fft_desc d;
  ocal_fft_desc_init(&d);
  d.engine = OCAL_FFT_ENGINE_CLFFT;
  d.ndim = 2;
  d.lengths[0] = 16;
  d.lengths[1] = 97 * 2;
  ocal_fft_plan plan;
  ck_assert_ocal_fails(ocal_fft_plan_create(fixture_ctx, &d, &plan), OCAL_UNSUPPORTED);
  const char *msg = ocal_last_error();
  ck_assert_msg(strstr(msg, "194") && strstr(msg, "97") && strstr(msg, "vkfft"), "%s", msg);
}
END_TEST

START_TEST(test_engine_choice) {
  ck_assert_str_eq(ocal_fft_engine_name(OCAL_FFT_ENGINE_DEFAULT), "default");
  ck_assert_str_eq(ocal_fft_engine_name(OCAL_FFT_ENGINE_VKFFT), "vkfft");
  ck_assert_str_eq(ocal_fft_engine_name(OCAL_FFT_ENGINE_CLFFT), "clfft");
  ck_assert_str_eq(ocal_fft_engine_name(OCAL_FFT_ENGINE_FOURSTEP), "fourstep");
  ck_assert_str_eq(ocal_fft_engine_name((ocal_fft_engine)7), "invalid");
  /* A description whose struct_size this library cannot have been built with is refused
   * (a struct not started from ocal_fft_desc_init). */
  {
    ocal_fft_desc bad;
    ocal_fft_desc_init(&bad);
    bad.lengths[0] = 16;
    ocal_fft_plan none;
    bad.struct_size = 8;
    ck_assert_ocal_fails(ocal_fft_plan_create(fixture_ctx, &bad, &none), OCAL_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_fft_desc_init"));
    bad.struct_size = sizeof bad + 8;
    ck_assert_ocal_fails(ocal_fft_plan_create(fixture_ctx, &bad, &none), OCAL_INVALID_ARGUMENT);
  }
  int vk = 0, cl = 0, any = 0;
  ck_assert_ocal(ocal_fft_engine_available(OCAL_FFT_ENGINE_VKFFT, &vk));
  ck_assert_ocal(ocal_fft_engine_available(OCAL_FFT_ENGINE_CLFFT, &cl));
  ck_assert_ocal(ocal_fft_engine_available(OCAL_FFT_ENGINE_DEFAULT, &any));
  ck_assert_int_eq(any, vk || cl);
  if (!any) return;

  ocal_fft_engine e;
  unsetenv("OCAL_FFT");
  ck_assert_ocal(ocal_fft_get_default_engine(&e));
  ck_assert_int_eq(e, vk ? OCAL_FFT_ENGINE_VKFFT : OCAL_FFT_ENGINE_CLFFT);
  setenv("OCAL_FFT", "bogus", 1);
  ck_assert_ocal_fails(ocal_fft_get_default_engine(&e), OCAL_INVALID_ARGUMENT);
  ocal_fft_desc d;
  ocal_fft_desc_init(&d);
  d.lengths[0] = 8;
  ocal_fft_plan plan;
  /* Settings are read at context creation: a bad one fails it. */
  ocal_context bad_ctx = NULL;
  ck_assert_ocal_fails(ocal_context_create(NULL, &bad_ctx), OCAL_INVALID_ARGUMENT);
  ck_assert_msg(strstr(ocal_last_error(), "OCAL_FFT") != NULL, "%s", ocal_last_error());
  if (cl && engine_builds(OCAL_FFT_ENGINE_CLFFT)) {
    /* OCAL_FFT picks the engine of a default plan; the description's choice wins over it. */
    setenv("OCAL_FFT", "CLFFT", 1);
    fixture_reopen();
    ck_assert_ocal(ocal_fft_plan_create(fixture_ctx, &d, &plan));
    ocal_fft_plan_info info = {sizeof info};
    ck_assert_ocal(ocal_fft_plan_get_info(plan, &info));
    ck_assert_int_eq(info.engine, OCAL_FFT_ENGINE_CLFFT);
    ck_assert_str_eq(info.engine_name, "clfft");
    ocal_fft_plan_release(plan);
    if (vk) {
      d.engine = OCAL_FFT_ENGINE_VKFFT;
      ck_assert_ocal(ocal_fft_plan_create(fixture_ctx, &d, &plan));
      ck_assert_ocal(ocal_fft_plan_get_info(plan, &info));
      ck_assert_int_eq(info.engine, OCAL_FFT_ENGINE_VKFFT);
      ocal_fft_plan_release(plan);
    }
  }
  unsetenv("OCAL_FFT");
}
END_TEST

/* A plan that names VkFFT is never the default plan of the same shape from the cache: it
 * gives the same answer before and after one exists (R2C of 4097 points, which VkFFT refuses
 * on CPU devices and the default plan runs through a C2C plan). */
START_TEST(test_plan_cache_named_engine) {
  ocal_fft_desc d;
  ocal_fft_desc_init(&d);
  d.lengths[0] = 4097;
  d.kind = OCAL_FFT_R2C;
  d.engine = OCAL_FFT_ENGINE_VKFFT;
  ocal_fft_plan named = NULL, dflt = NULL, again = NULL;
  ocal_status first = ocal_fft_plan_create(fixture_ctx, &d, &named);
  d.engine = OCAL_FFT_ENGINE_DEFAULT;
  ck_assert_ocal(ocal_fft_plan_create(fixture_ctx, &d, &dflt));
  d.engine = OCAL_FFT_ENGINE_VKFFT;
  ocal_status second = ocal_fft_plan_create(fixture_ctx, &d, &again);
  ck_assert_msg(second == first, "named VkFFT: %s before the default plan, %s after",
                ocal_status_name(first), ocal_status_name(second));
  if (second == OCAL_OK) ck_assert_ptr_eq(again, named);
  else ck_assert_ptr_null(again);
  ocal_fft_plan_release(named);
  ocal_fft_plan_release(again);
  ck_assert_ocal(ocal_fft_plan_release(dflt));
}
END_TEST

START_TEST(test_plan_cache_reuses_plans) {
  ocal_context_options o;
  ocal_context_options_init(&o);
  o.disk_cache = 0;
  ocal_context ctx;
  ck_assert_ocal(ocal_context_create(&o, &ctx));
  ocal_fft_desc d;
  ocal_fft_desc_init(&d);
  d.lengths[0] = 32;
  d.lengths[2] = 999; /* past ndim: ignored, so the descriptions are equal */
  ocal_fft_plan a, b, c;
  ck_assert_ocal(ocal_fft_plan_create(ctx, &d, &a));
  d.lengths[2] = 0;
  ck_assert_ocal(ocal_fft_plan_create(ctx, &d, &b));
  ck_assert_ptr_eq(a, b);
  d.norm = OCAL_FFT_NORM_ORTHO;
  ck_assert_ocal(ocal_fft_plan_create(ctx, &d, &c));
  ck_assert_ptr_ne(a, c);
  ocal_fft_cache_stats st = {sizeof st};
  ck_assert_ocal(ocal_fft_get_cache_stats(ctx, &st));
  ck_assert_uint_eq(st.plans_built, 2);
  ck_assert_uint_eq(st.memory_hits, 1);
  ck_assert_uint_eq(st.disk_hits, 0);
  ck_assert_uint_eq(st.disk_stores, 0);
  /* Releasing one reference leaves the other usable; the context may go before the plans,
   * which keep it alive. */
  size_t n = 32;
  ocal_buffer x, y;
  ck_assert_ocal(ocal_buffer_zeros(ctx, OCAL_C32, 1, &n, &x));
  ck_assert_ocal(ocal_buffer_zeros(ctx, OCAL_C32, 1, &n, &y));
  ck_assert_ocal(ocal_fft_plan_release(a));
  ck_assert_ocal(ocal_context_release(ctx));
  ck_assert_ocal(ocal_fft_execute(b, OCAL_FFT_FORWARD, x, y));
  float out[64];
  ck_assert_ocal(ocal_buffer_read(y, 0, n, out, NULL));
  for (size_t i = 0; i < 2 * n; i++) ck_assert(out[i] == 0.0f);
  ocal_buffer_release(x);
  ocal_buffer_release(y);
  ck_assert_ocal(ocal_fft_plan_release(b));
  ck_assert_ocal(ocal_fft_plan_release(c)); /* the last reference: the context goes now */
}
END_TEST

typedef struct thread_arg {
  ocal_context ctx;
  ocal_fft_plan plan;
  ocal_status status;
} thread_arg;

static void *create_in_thread(void *p) {
  thread_arg *t = p;
  ocal_fft_desc d;
  ocal_fft_desc_init(&d);
  d.ndim = 2;
  d.lengths[0] = 8;
  d.lengths[1] = 12;
  t->status = ocal_fft_plan_create(t->ctx, &d, &t->plan);
  return NULL;
}

START_TEST(test_plan_cache_threads) {
  ocal_context_options o;
  ocal_context_options_init(&o);
  o.disk_cache = 0;
  ocal_context ctx;
  ck_assert_ocal(ocal_context_create(&o, &ctx));
  enum { T = 4 };
  pthread_t th[T];
  thread_arg args[T];
  for (int i = 0; i < T; i++) {
    args[i] = (thread_arg){ctx, NULL, OCAL_INTERNAL};
    ck_assert_int_eq(pthread_create(&th[i], NULL, create_in_thread, &args[i]), 0);
  }
  for (int i = 0; i < T; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < T; i++) {
    ck_assert_msg(args[i].status == OCAL_OK, "thread %d: %s", i,
                  ocal_status_name(args[i].status));
    ck_assert_ptr_eq(args[i].plan, args[0].plan);
  }
  ocal_fft_cache_stats st = {sizeof st};
  ck_assert_ocal(ocal_fft_get_cache_stats(ctx, &st));
  ck_assert_uint_eq(st.plans_built, 1); /* one build; the others waited for it */
  ck_assert_uint_eq(st.memory_hits, T - 1);
  for (int i = 0; i < T; i++) ck_assert_ocal(ocal_fft_plan_release(args[i].plan));
  ocal_context_release(ctx);
}
END_TEST

/* The disk cache: the plan of this description, created by a second process (exec'ed, not
 * forked: OpenCL drivers do not survive fork), comes from the cache the first one wrote. */
static void disk_cache_desc(ocal_fft_desc *d) {
  ocal_fft_desc_init(d);
  d->engine = OCAL_FFT_ENGINE_VKFFT;
  d->lengths[0] = 48;
  d->batch = 2;
}

/* Runs in the exec'ed process: creates the plan, checks one transform, prints the facts. */
static int disk_cache_child(const char *dir) {
  ocal_context_options o;
  ocal_context_options_init(&o);
  o.cache_dir = dir;
  o.disk_cache = 1;
  ocal_context ctx;
  if (ocal_context_create(&o, &ctx) != OCAL_OK) {
    printf("error %s\n", ocal_last_error());
    return 1;
  }
  ocal_fft_desc d;
  disk_cache_desc(&d);
  ocal_fft_plan plan;
  if (ocal_fft_plan_create(ctx, &d, &plan) != OCAL_OK) {
    printf("error %s\n", ocal_last_error());
    ocal_context_release(ctx);
    return 1;
  }
  ocal_fft_plan_info info = {sizeof info};
  ocal_fft_plan_get_info(plan, &info);
  /* An impulse at 1: X[k] = exp(-2 pi i k / 48). */
  size_t n = 96;
  float x[192] = {0}, y[192];
  x[2] = 1;
  x[96 + 2] = 1;
  ocal_buffer in, out;
  double err = 1;
  if (ocal_buffer_from_host(ctx, OCAL_C32, 1, &n, x, &in) == OCAL_OK) {
    if (ocal_buffer_create(ctx, OCAL_C32, 1, &n, &out) == OCAL_OK) {
      if (ocal_fft_execute(plan, OCAL_FFT_FORWARD, in, out) == OCAL_OK &&
          ocal_buffer_read(out, 0, n, y, NULL) == OCAL_OK) {
        err = 0;
        for (size_t k = 0; k < n; k++) {
          double a = -2 * M_PI * (double)(k % 48) / 48;
          err = fmax(err, fabs(y[2 * k] - cos(a)) + fabs(y[2 * k + 1] - sin(a)));
        }
      }
      ocal_buffer_release(out);
    }
    ocal_buffer_release(in);
  }
  printf("from_disk_cache=%d max_error=%g create_seconds=%g\n", info.from_disk_cache, err,
         info.create_seconds);
  ocal_fft_plan_release(plan);
  ocal_context_release(ctx);
  return err < 1e-5 ? 0 : 1;
}

static char self_path[PATH_MAX];

static void run_child(const char *dir, char *line, size_t size) {
  char cmd[2 * PATH_MAX + 64];
  snprintf(cmd, sizeof cmd, "'%s' --disk-cache-child '%s'", self_path, dir);
  FILE *p = popen(cmd, "r");
  ck_assert_ptr_nonnull(p);
  line[0] = '\0';
  ck_assert_ptr_nonnull(fgets(line, (int)size, p));
  int rc = pclose(p);
  ck_assert_msg(rc == 0, "the second process failed (%d): %s", rc, line);
}

START_TEST(test_disk_cache_across_processes) {
  if (!have_engine(OCAL_FFT_ENGINE_VKFFT)) return;
  ssize_t len = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
  ck_assert_int_gt(len, 0);
  self_path[len] = '\0';
  char dir[] = "/tmp/ocal-check-fft-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));

  /* This process: a cold plan, compiled and stored. */
  ocal_context_options o;
  ocal_context_options_init(&o);
  o.cache_dir = dir;
  o.disk_cache = 1;
  ocal_context ctx;
  ck_assert_ocal(ocal_context_create(&o, &ctx));
  ocal_fft_desc d;
  disk_cache_desc(&d);
  ocal_fft_plan plan;
  ck_assert_ocal(ocal_fft_plan_create(ctx, &d, &plan));
  ocal_fft_plan_info info = {sizeof info};
  ck_assert_ocal(ocal_fft_plan_get_info(plan, &info));
  ck_assert_int_eq(info.from_disk_cache, 0);
  ocal_fft_cache_stats st = {sizeof st};
  ck_assert_ocal(ocal_fft_get_cache_stats(ctx, &st));
  ck_assert_uint_eq(st.disk_stores, 1);
  ck_assert_uint_eq(st.disk_hits, 0);
  ocal_fft_plan_release(plan);
  ocal_context_release(ctx);

  /* Another process: the same plan comes from the disk, and computes the right thing. */
  char line[512];
  run_child(dir, line, sizeof line);
  ck_assert_msg(strstr(line, "from_disk_cache=1") != NULL, "second process: %s", line);

  /* Corrupt every cached file: the next process notices, compiles, and still is right. */
  char cmd[256];
  snprintf(cmd, sizeof cmd, "for f in '%s'/*.bin; do printf garbage | dd of=\"$f\" bs=1 seek=40 "
           "conv=notrunc 2>/dev/null; done", dir);
  ck_assert_int_eq(system(cmd), 0);
  run_child(dir, line, sizeof line);
  ck_assert_msg(strstr(line, "from_disk_cache=0") != NULL, "after corruption: %s", line);
  /* ... and it wrote fresh files, which the next one uses. */
  run_child(dir, line, sizeof line);
  ck_assert_msg(strstr(line, "from_disk_cache=1") != NULL, "after the rewrite: %s", line);

  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* OCAL_VKFFT_TUNE: a setting changes the plan's disk cache key (a plan made with it does not
 * load the kernels of one made without it, nor the other way round), the transforms stay
 * right, and a bad setting fails the plan creation. */
static int tuned_plan_from_disk(const char *dir, const char *tune, const fft_case *c) {
  if (tune)
    setenv("OCAL_VKFFT_TUNE", tune, 1);
  else
    unsetenv("OCAL_VKFFT_TUNE");
  ocal_context_options o;
  ocal_context_options_init(&o);
  o.cache_dir = dir;
  o.disk_cache = 1;
  ocal_context ctx;
  ck_assert_ocal(ocal_context_create(&o, &ctx));
  ocal_fft_desc d;
  describe(c, OCAL_FFT_C2C, &d);
  ocal_fft_plan plan;
  ck_assert_ocal(ocal_fft_plan_create(ctx, &d, &plan));
  ocal_fft_plan_info info = {sizeof info};
  ck_assert_ocal(ocal_fft_plan_get_info(plan, &info));
  ocal_fft_plan_release(plan);
  ocal_context_release(ctx);
  return info.from_disk_cache;
}

START_TEST(test_vkfft_tune) {
  if (!have_engine(OCAL_FFT_ENGINE_VKFFT)) return;
  fft_case c = {OCAL_FFT_ENGINE_VKFFT, OCAL_FFT_C2C, 1, {512, 0, 0}, 4, 0, 0,
                OCAL_FFT_NORM_BACKWARD};
  char dir[] = "/tmp/ocal-check-fft-tune-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  ck_assert_int_eq(tuned_plan_from_disk(dir, NULL, &c), 0);
  ck_assert_int_eq(tuned_plan_from_disk(dir, NULL, &c), 1);
  /* aimThreads leaves these kernels' text as it was: the key changes all the same. */
  ck_assert_int_eq(tuned_plan_from_disk(dir, "aimThreads=64", &c), 0);
  ck_assert_int_eq(tuned_plan_from_disk(dir, " aimThreads=64 ,", &c), 1);
  ck_assert_int_eq(tuned_plan_from_disk(dir, "coalescedMemory=64,aimThreads=64", &c), 0);
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);

  /* Transforms with settings (fixture_ctx: no plan of this test is in its cache). */
  setenv("OCAL_VKFFT_TUNE", "coalescedMemory=128,numSharedBanks=64,useLUT=1", 1);
  fixture_reopen();
  run_case(&c);
  fft_case odd = {OCAL_FFT_ENGINE_VKFFT, OCAL_FFT_C2C, 1, {97, 0, 0}, 2, 0, 0,
                  OCAL_FFT_NORM_BACKWARD};
  run_case(&odd);

  const char *bad[] = {"noSuchField=1", "coalescedMemory", "coalescedMemory=x",
                       "aimThreads=64;", "disableReorderFourStep=1"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    setenv("OCAL_VKFFT_TUNE", bad[i], 1);
    ocal_context bad_ctx = NULL;
    ck_assert_ocal_fails(ocal_context_create(NULL, &bad_ctx), OCAL_INVALID_ARGUMENT);
    ck_assert_msg(strstr(ocal_last_error(), "OCAL_VKFFT_TUNE") != NULL, "%s: %s", bad[i],
                  ocal_last_error());
  }
  unsetenv("OCAL_VKFFT_TUNE");
}
END_TEST

/* A plan whose engine's kernels do not compile fails at creation, not at its first execute:
 * clFFT's generated kernels on Intel's CPU runtime, or on PoCL told to treat incompatible
 * pointer types as errors, as Intel's compiler does (POCL_EXTRA_BUILD_FLAGS, read at each
 * build). A plan that names clFFT then fails with the compiler's log; a default plan falls
 * back to the next engine and says which one runs. Elsewhere clFFT builds and runs. */
START_TEST(test_build_failure) {
  int cl = 0;
  ck_assert_ocal(ocal_fft_engine_available(OCAL_FFT_ENGINE_CLFFT, &cl));
  if (!cl) return;
  ocal_device_info info = {sizeof info};
  ck_assert_ocal(ocal_context_get_device_info(fixture_ctx, &info));
  if (strstr(info.platform_name, "Portable Computing Language"))
    setenv("POCL_EXTRA_BUILD_FLAGS", "-Werror=incompatible-pointer-types", 1);
  unsetenv("OCAL_FFT");
  ocal_fft_desc d;
  ocal_fft_desc_init(&d);
  d.engine = OCAL_FFT_ENGINE_CLFFT;
  d.lengths[0] = 24; /* a shape no other test planned in this process */
  d.batch = 3;
  ocal_fft_plan plan = NULL;
  ocal_status s = ocal_fft_plan_create(fixture_ctx, &d, &plan);
  if (s == OCAL_OK) {
    /* clFFT's kernels build here (not PoCL, not Intel): nothing more to show. */
    fprintf(stderr, "check_fft: clFFT's kernels build on '%s'; the failure path is not run\n",
            info.name);
    ocal_fft_plan_release(plan);
    unsetenv("POCL_EXTRA_BUILD_FLAGS");
    return;
  }
  ck_assert_int_eq(s, OCAL_BUILD_FAILED);
  ck_assert_ptr_null(plan);
  const char *msg = ocal_last_error();
  /* Intel's runtime leaves the compiler's log, which clFFT prints; PoCL's clFFT path prints
   * only that compileKernels failed. Either is in the message. */
  ck_assert_msg(strstr(msg, "do not build") && strstr(msg, "vkfft") &&
                (strstr(msg, "incompatible pointer types") || strstr(msg, "compileKernels failed")),
                "%s", msg);
  /* The same shape on the default engine: where VkFFT builds (Intel's runtime) it runs the
   * plan and is named; where it does not either (PoCL with that flag: VkFFT's kernels have
   * incompatible pointer types of another kind, which Intel's compiler accepts), creation
   * fails, naming both engines' failures. */
  int vk = 0;
  ck_assert_ocal(ocal_fft_engine_available(OCAL_FFT_ENGINE_VKFFT, &vk));
  if (vk) {
    d.engine = OCAL_FFT_ENGINE_VKFFT;
    ocal_status vs = ocal_fft_plan_create(fixture_ctx, &d, &plan);
    if (vs == OCAL_OK) ocal_fft_plan_release(plan);
    d.engine = OCAL_FFT_ENGINE_DEFAULT;
    s = ocal_fft_plan_create(fixture_ctx, &d, &plan);
    if (vs == OCAL_OK) {
      ck_assert_ocal(s);
      ocal_fft_plan_info pi = {sizeof pi};
      ck_assert_ocal(ocal_fft_plan_get_info(plan, &pi));
      ck_assert_str_eq(pi.engine_name, "vkfft");
      ocal_fft_plan_release(plan);
    } else {
      ck_assert_int_eq(s, OCAL_BUILD_FAILED);
      msg = ocal_last_error();
      ck_assert_msg(strstr(msg, "VkFFT") && strstr(msg, "clFFT's kernels"), "%s", msg);
      /* The message names the call once, at its start, not again before each engine's own
       * message that it quotes. */
      ck_assert_msg(strncmp(msg, "ocal_fft_plan_create: ", 22) == 0 &&
                        strstr(msg + 22, "ocal_fft_plan_create: ") == NULL,
                    "%s", msg);
    }
  }
  unsetenv("POCL_EXTRA_BUILD_FLAGS");
}
END_TEST

/* clFFT 2.12 deletes its plan actions through a base-class pointer of another size (a bug
 * of clFFT's, harmless with the system allocator): AddressSanitizer would abort on it. This
 * hook is read by AddressSanitizer only; other builds never call it. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "new_delete_type_mismatch=0"; }

/* ---- lengths the default engine must take (issue 19, bugs 1 and 2) ---------------------- *
 * Long odd lengths go through Bluestein's algorithm in VkFFT, whose work-groups once overflowed
 * the stacks of PoCL's threads (SIGSEGV inside the driver after OCAL_OK); length 1, a
 * dimension of 1 and R2C f64 of some odd lengths were refused. A naive DFT of 65536 points
 * would take the host minutes, so the forward result is checked at 48 bins (the first,
 * the last and random ones) against a double-precision DFT of those bins, and the inverse
 * brings the whole array back to the input. */

/* X[k] = sum_j x[j] e^(-2 pi i jk/n) for one bin of a 1-D complex signal. */
static cd dft_bin(const cd *x, size_t n, size_t k) {
  double re = 0, im = 0;
  for (size_t j = 0; j < n; j++) {
    double a = -2.0 * M_PI * (double)((j * k) % n) / (double)n;
    double c = cos(a), s = sin(a);
    re += x[j].re * c - x[j].im * s;
    im += x[j].re * s + x[j].im * c;
  }
  return (cd){re, im};
}

static void check_long_1d(ocal_fft_kind kind, size_t n, int dbl) {
  if (dbl && !fixture_has_fp64()) return;
  char label[96];
  snprintf(label, sizeof label, "default engine %s %s n=%zu", kind == OCAL_FFT_C2C ? "c2c" : "r2c",
           dbl ? "f64" : "f32", n);
  const int cplx = kind == OCAL_FFT_C2C;
  const size_t out_n = cplx ? n : n / 2 + 1;
  double *x = random_reals(cplx ? 2 * n : n, 4242 + n);
  cd *xc = malloc(n * sizeof *xc);
  ck_assert_ptr_nonnull(xc);
  for (size_t j = 0; j < n; j++) xc[j] = cplx ? (cd){x[2 * j], x[2 * j + 1]} : (cd){x[j], 0};

  ocal_fft_desc d;
  ck_assert_ocal(ocal_fft_desc_init(&d));
  d.lengths[0] = n;
  d.kind = kind;
  d.precision = dbl ? OCAL_F64 : OCAL_F32;
  ocal_fft_plan fwd, inv;
  /* R2C and C2R of long odd lengths too: where no engine takes them as real transforms
   * (VkFFT on CPU devices, clFFT for factors above 13), the default engine runs them on a
   * C2C plan of the same length (src/fft/viac2c.c). */
  ck_assert_ocal(ocal_fft_plan_create(fixture_ctx, &d, &fwd));
  d.kind = cplx ? OCAL_FFT_C2C : OCAL_FFT_C2R;
  ck_assert_ocal(ocal_fft_plan_create(fixture_ctx, &d, &inv));
  if (!cplx) {
    ocal_fft_plan_info fi = {sizeof fi}, ii = {sizeof ii};
    ck_assert_ocal(ocal_fft_plan_get_info(fwd, &fi));
    ck_assert_ocal(ocal_fft_plan_get_info(inv, &ii));
    /* Both directions come from one engine (both real, or both through C2C). */
    ck_assert_msg(strcmp(fi.engine_name, ii.engine_name) == 0, "%s: r2c on %s, c2r on %s", label,
                  fi.engine_name, ii.engine_name);
  }
  ocal_buffer in = upload(x, cplx ? 2 * n : n, cplx, dbl), spec, back;
  size_t sn = out_n, bn = n;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, dbl ? OCAL_C64 : OCAL_C32, 1, &sn, &spec));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, cplx ? (dbl ? OCAL_C64 : OCAL_C32)
                                                     : (dbl ? OCAL_F64 : OCAL_F32), 1, &bn, &back));
  ck_assert_ocal(ocal_fft_execute(fwd, OCAL_FFT_FORWARD, in, spec));
  ck_assert_ocal(ocal_fft_execute(inv, OCAL_FFT_INVERSE, spec, back));
  ck_assert_ocal(ocal_context_finish(fixture_ctx));

  double *y = download(spec, 2 * out_n, dbl);
  /* Bins: 0, the last, and random ones; the error relative to the spectrum's RMS. */
  double num = 0, den = 0;
  uint64_t st = n;
  for (int b = 0; b < 48; b++) {
    size_t k = b == 0 ? 0 : b == 1 ? out_n - 1 : (size_t)(fixture_random(&st) % out_n);
    cd want = dft_bin(xc, n, k);
    num += (y[2 * k] - want.re) * (y[2 * k] - want.re) +
           (y[2 * k + 1] - want.im) * (y[2 * k + 1] - want.im);
    den += want.re * want.re + want.im * want.im;
  }
  double tol = dbl ? 1e-10 : 2e-4;
  double err = sqrt(num / den);
  ck_assert_msg(err < tol, "%s forward: relative error %.3g at 48 bins (tolerance %.g)", label,
                err, tol);
  double *z = download(back, cplx ? 2 * n : n, dbl);
  err = rel_error(z, x, cplx ? 2 * n : n);
  ck_assert_msg(err < tol, "%s round trip: relative error %.3g", label, err);
  free(z);
  free(y);
  free(xc);
  free(x);
  ocal_buffer_release(in);
  ocal_buffer_release(spec);
  ocal_buffer_release(back);
  ck_assert_ocal(ocal_fft_plan_release(fwd));
  ck_assert_ocal(ocal_fft_plan_release(inv));
}

static const struct {
  ocal_fft_kind kind;
  size_t n;
  int dbl;
} long_cases[] = {
    {OCAL_FFT_C2C, 16385, 0}, {OCAL_FFT_C2C, 16385, 1}, {OCAL_FFT_C2C, 32769, 0},
    {OCAL_FFT_R2C, 65536, 1}, {OCAL_FFT_R2C, 32769, 0}, /* bug 1: crashed PoCL's threads */
    {OCAL_FFT_R2C, 32769, 1}, {OCAL_FFT_R2C, 65535, 1}, {OCAL_FFT_R2C, 65537, 1}, /* bug 2 */
    {OCAL_FFT_R2C, 20001, 1}, {OCAL_FFT_R2C, 4097, 0}, /* through C2C on CPU devices */
};
#define LONG_CASES (int)(sizeof long_cases / sizeof long_cases[0])

START_TEST(test_default_engine_long_lengths) {
  check_long_1d(long_cases[_i].kind, long_cases[_i].n, long_cases[_i].dbl);
}
END_TEST

/* A 2-D C2C description of batch transforms of rows x n points, the rest at the defaults. */
static ocal_fft_desc desc_2d(size_t rows, size_t n, size_t batch) {
  ocal_fft_desc d;
  ck_assert_ocal(ocal_fft_desc_init(&d));
  d.ndim = 2;
  d.lengths[0] = rows;
  d.lengths[1] = n;
  d.batch = batch;
  return d;
}

/* The relative error of y, the forward 2-D transforms of a batch of rows x n inputs x (complex
 * where cplx, else real), each output row holding h bins (n, or n / 2 + 1 for R2C), at 48
 * bins (the first, the last and 46 drawn from seed) against a double-precision 2-D DFT. */
static double forward_2d_bins_error(const double *x, int cplx, size_t batch, size_t rows,
                                    size_t n, const double *y, size_t h, uint64_t seed) {
  size_t bins = batch * rows * h;
  double num = 0, den = 0;
  for (int t = 0; t < 48; t++) {
    size_t idx = t == 0 ? 0 : t == 1 ? bins - 1 : (size_t)(fixture_random(&seed) % bins);
    size_t b = idx / (rows * h), k0 = idx / h % rows, k1 = idx % h;
    double re = 0, im = 0;
    for (size_t j0 = 0; j0 < rows; j0++)
      for (size_t j1 = 0; j1 < n; j1++) {
        double a = -2.0 * M_PI * ((double)((j0 * k0) % rows) / (double)rows +
                                  (double)((j1 * k1) % n) / (double)n);
        size_t at = (b * rows + j0) * n + j1;
        double vr = cplx ? x[2 * at] : x[at], vi = cplx ? x[2 * at + 1] : 0, c = cos(a),
               sn = sin(a);
        re += vr * c - vi * sn;
        im += vr * sn + vi * c;
      }
    num += (y[2 * idx] - re) * (y[2 * idx] - re) + (y[2 * idx + 1] - im) * (y[2 * idx + 1] - im);
    den += re * re + im * im;
  }
  return sqrt(num / den);
}

/* A 2-D real transform whose contiguous length is long and odd, batched: on CPU devices it
 * goes through a C2C plan, whose C2R side rebuilds each row's spectrum from the mirrored row
 * (conjugate symmetry over both dimensions). The forward result is checked at 48 bins
 * against a double-precision 2-D DFT, and the inverse brings the input back. */
START_TEST(test_real_2d_long_odd) {
  const size_t rows = 3, n = 4097, batch = 2, h = n / 2 + 1;
  const size_t real = batch * rows * n, cplx = batch * rows * h;
  double *x = random_reals(real, 777);
  ocal_fft_desc d = desc_2d(rows, n, batch);
  d.kind = OCAL_FFT_R2C;
  ocal_fft_plan fwd, inv;
  ck_assert_ocal(ocal_fft_plan_create(fixture_ctx, &d, &fwd));
  d.kind = OCAL_FFT_C2R;
  ck_assert_ocal(ocal_fft_plan_create(fixture_ctx, &d, &inv));
  ocal_buffer in = upload(x, real, 0, 0), spec, back;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_C32, 1, &cplx, &spec));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &real, &back));
  ck_assert_ocal(ocal_fft_execute(fwd, OCAL_FFT_FORWARD, in, spec));
  ck_assert_ocal(ocal_fft_execute(inv, OCAL_FFT_INVERSE, spec, back));
  ck_assert_ocal(ocal_context_finish(fixture_ctx));
  double *y = download(spec, 2 * cplx, 0);
  double err = forward_2d_bins_error(x, 0, batch, rows, n, y, h, 99);
  ck_assert_msg(err < 2e-4, "2-D r2c {3, 4097} x 2: relative error %.3g at 48 bins", err);
  double *z = download(back, real, 0);
  err = rel_error(z, x, real);
  ck_assert_msg(err < 2e-4, "2-D c2r round trip: relative error %.3g", err);
  free(z);
  free(y);
  free(x);
  ocal_buffer_release(in);
  ocal_buffer_release(spec);
  ocal_buffer_release(back);
  ck_assert_ocal(ocal_fft_plan_release(fwd));
  ck_assert_ocal(ocal_fft_plan_release(inv));
}
END_TEST

/* A 2-D C2C transform whose strided axis is 4096 points, batched: on NVIDIA GPUs ocal caps
 * VkFFT's register boost there at 2 (src/fft/vkfft.c), and the transform is checked here
 * under the rule and under that setting on every device. Forward at 48 bins against a
 * double-precision 2-D DFT; the inverse brings the input back. */
START_TEST(test_c2c_2d_strided_4096) {
  const size_t rows = 4096, n = 24, batch = 2, total = batch * rows * n;
  double *x = random_reals(2 * total, 4096);
  for (int boost = 0; boost < 2; boost++) {
    if (boost) setenv("OCAL_VKFFT_TUNE", "registerBoost=2", 1);
    fixture_reopen();
    ocal_fft_desc d = desc_2d(rows, n, batch);
    ocal_fft_plan plan;
    ck_assert_ocal(ocal_fft_plan_create(fixture_ctx, &d, &plan));
    ocal_buffer in = upload(x, 2 * total, 1, 0), spec, back;
    ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_C32, 1, &total, &spec));
    ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_C32, 1, &total, &back));
    ck_assert_ocal(ocal_fft_execute(plan, OCAL_FFT_FORWARD, in, spec));
    ck_assert_ocal(ocal_fft_execute(plan, OCAL_FFT_INVERSE, spec, back));
    double *y = download(spec, 2 * total, 0), *z = download(back, 2 * total, 0);
    double err = forward_2d_bins_error(x, 1, batch, rows, n, y, n, 7 + (uint64_t)boost);
    ck_assert_msg(err < 2e-4, "2-D c2c {4096, 24} x 2 (registerBoost %s): relative error %.3g",
                  boost ? "2" : "the rule's", err);
    err = rel_error(z, x, 2 * total);
    ck_assert_msg(err < 2e-4, "2-D c2c round trip (registerBoost %s): relative error %.3g",
                  boost ? "2" : "the rule's", err);
    free(y);
    free(z);
    ocal_buffer_release(in);
    ocal_buffer_release(spec);
    ocal_buffer_release(back);
    ck_assert_ocal(ocal_fft_plan_release(plan));
    unsetenv("OCAL_VKFFT_TUNE");
  }
  free(x);
}
END_TEST

/* Length 1 and axes of length 1, on the default engine and on each engine by name: every
 * kind, both directions, every normalisation, batched, in both precisions, against the host
 * reference. ocal runs them itself (a copy, a widening, the real parts) or drops the axes of
 * 1, so the default engine never hands them to clFFT, whose bake can end the process when
 * the driver fails under it. */
START_TEST(test_unit_lengths) {
  static const struct {
    int ndim;
    size_t lens[3];
  } shapes[] = {{1, {1, 0, 0}},  {2, {1, 1, 0}},  {3, {1, 1, 1}}, {2, {1, 16, 0}},
                {2, {16, 1, 0}}, {3, {1, 4, 1}},  {3, {3, 1, 5}}, {2, {5, 1, 0}},
                {3, {1, 1, 7}},  {3, {6, 1, 1}}};
  static const ocal_fft_norm norms[] = {OCAL_FFT_NORM_BACKWARD, OCAL_FFT_NORM_ORTHO,
                                        OCAL_FFT_NORM_FORWARD};
  int fp64 = fixture_dtype_usable(OCAL_F64);
  unsetenv("OCAL_FFT");
  for (int e = -1; e < 2; e++) {
    ocal_fft_engine eng = e < 0 ? OCAL_FFT_ENGINE_DEFAULT : engines[e];
    if (e >= 0 && (!have_engine(eng) || !engine_builds(eng))) continue;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
      for (int kind = 0; kind < 2; kind++) {
        fft_case c = {eng, kind ? OCAL_FFT_R2C : OCAL_FFT_C2C, shapes[i].ndim,
                      {shapes[i].lens[0], shapes[i].lens[1], shapes[i].lens[2]},
                      1 + i % 3, (int)(i % 2) && !kind, fp64 && i % 4 == 1, norms[i % 3]};
        run_case(&c);
        if (eng != OCAL_FFT_ENGINE_DEFAULT) continue;
        /* The default engine's plans of these shapes never run on clFFT. */
        for (int k = 0; k < 2 - !kind; k++) {
          ocal_fft_desc d;
          describe(&c, kind ? (k ? OCAL_FFT_C2R : OCAL_FFT_R2C) : OCAL_FFT_C2C, &d);
          ocal_fft_plan plan;
          ocal_fft_plan_info info = {sizeof info};
          ck_assert_ocal(ocal_fft_plan_create(fixture_ctx, &d, &plan));
          ck_assert_ocal(ocal_fft_plan_get_info(plan, &info));
          ck_assert_msg(info.engine != OCAL_FFT_ENGINE_CLFFT,
                        "the default engine ran %zux%zux%zu (ndim %d, kind %d) on %s",
                        c.lens[0], c.lens[1], c.lens[2], c.ndim, (int)d.kind,
                        info.engine_name);
          ck_assert_ocal(ocal_fft_plan_release(plan));
        }
      }
  }
}
END_TEST

/* Bug 10: a VkFFT kernel that fails to build (forced through a white-box hook that adds an
 * #error line to the next program VkFFT makes) fails the plan with OCAL_BUILD_FAILED and the
 * compiler's log in ocal_last_error; nothing is printed to standard output (VkFFT printed
 * the log, read past its end, and the generated source). */
extern int ocal__vkfft_break_next_build;

START_TEST(test_vkfft_build_failure) {
  if (!have_engine(OCAL_FFT_ENGINE_VKFFT)) return;
  ocal_fft_desc d;
  ck_assert_ocal(ocal_fft_desc_init(&d));
  d.lengths[0] = 48;
  d.batch = 5; /* a shape no other test builds, so the plan cache has none */
  d.engine = OCAL_FFT_ENGINE_VKFFT;
  char path[] = "/tmp/ocal-check-fft-stdout-XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  fflush(stdout);
  int saved = dup(1);
  ck_assert_int_ge(saved, 0);
  ck_assert_int_ge(dup2(fd, 1), 0);
  ocal__vkfft_break_next_build = 1;
  ocal_fft_plan p = (ocal_fft_plan)&p;
  ocal_status st = ocal_fft_plan_create(fixture_ctx, &d, &p);
  fflush(stdout);
  dup2(saved, 1);
  close(saved);
  off_t printed = lseek(fd, 0, SEEK_END);
  close(fd);
  unlink(path);
  ck_assert_msg(st == OCAL_BUILD_FAILED, "returned %s: %s", ocal_status_name(st),
                ocal_last_error());
  ck_assert_ptr_null(p);
  ck_assert_msg(strstr(ocal_last_error(), "build log") &&
                    strstr(ocal_last_error(), "a forced VkFFT build failure"),
                "the message lacks the compiler's log: %s", ocal_last_error());
  ck_assert_msg(printed == 0, "the library wrote %lld bytes to standard output",
                (long long)printed);
  /* The next creation builds normally and computes the right thing. */
  fft_case c = {OCAL_FFT_ENGINE_VKFFT, OCAL_FFT_C2C, 1, {48, 0, 0}, 5, 0, 0,
                OCAL_FFT_NORM_BACKWARD};
  run_case(&c);
}
END_TEST

/* The structs a plan and the cache fill take the caller's struct_size: exactly the struct
 * is written, and a size this library does not know is refused before anything is. */
START_TEST(test_filled_structs_struct_size) {
  ocal_fft_desc d;
  ck_assert_ocal(ocal_fft_desc_init(&d));
  d.lengths[0] = 16;
  ocal_fft_plan plan;
  ck_assert_ocal(ocal_fft_plan_create(fixture_ctx, &d, &plan));
  _Alignas(16) unsigned char room[sizeof(ocal_fft_plan_info) + 32];
  for (int round = 0; round < 2; round++) {
    const size_t size = round == 0 ? sizeof(ocal_fft_plan_info) : sizeof(ocal_fft_cache_stats);
    const size_t bad[] = {0, size - 1, size + 1};
    for (int b = 0; b < 3; b++) {
      memset(room, 0x5a, sizeof room);
      memcpy(room, &bad[b], sizeof bad[b]);
      ck_assert_ocal_fails(round == 0 ? ocal_fft_plan_get_info(plan, (void *)room)
                                      : ocal_fft_get_cache_stats(fixture_ctx, (void *)room),
                           OCAL_INVALID_ARGUMENT);
      ck_assert_ptr_nonnull(strstr(ocal_last_error(), round == 0 ? "sizeof(ocal_fft_plan_info)"
                                                                 : "sizeof(ocal_fft_cache_stats)"));
      for (size_t i = sizeof(size_t); i < sizeof room; i++) ck_assert_uint_eq(room[i], 0x5a);
    }
    memset(room, 0x5a, sizeof room);
    memcpy(room, &size, sizeof size);
    ck_assert_ocal(round == 0 ? ocal_fft_plan_get_info(plan, (void *)room)
                              : ocal_fft_get_cache_stats(fixture_ctx, (void *)room));
    for (size_t i = size; i < sizeof room; i++) ck_assert_uint_eq(room[i], 0x5a);
  }
  ocal_fft_plan_info info = {sizeof info};
  ck_assert_ocal(ocal_fft_plan_get_info(plan, &info));
  ck_assert_uint_eq(info.in_numel, 16);
  ck_assert_ocal(ocal_fft_plan_release(plan));
}
END_TEST

int main(int argc, char **argv) {
  /* The exec'ed second process of test_disk_cache_across_processes. */
  if (argc == 3 && strcmp(argv[1], "--disk-cache-child") == 0) return disk_cache_child(argv[2]);

  Suite *s = suite_create("fft");
  TCase *tc = fixture_tcase("engines");
  tcase_add_loop_test(tc, test_c2c_1d_lengths, 0, 2);
  tcase_add_loop_test(tc, test_c2c_2d_3d_in_and_out_of_place, 0, 2);
  tcase_add_loop_test(tc, test_real_1d_2d_3d, 0, 2);
  tcase_add_loop_test(tc, test_normalisations, 0, 2);
  tcase_add_loop_test(tc, test_double_precision, 0, 2);
  tcase_add_loop_test(tc, test_views_with_offsets, 0, 2);
  tcase_add_loop_test(tc, test_real_views_odd_offsets, 0, 2);
  tcase_add_loop_test(tc, test_errors, 0, 2);
  tcase_add_loop_test(tc, test_c2r_non_hermitian_batches, 0, 2);
  suite_add_tcase(s, tc);
  TCase *tp = fixture_tcase("plans");
  tcase_add_test(tp, test_clfft_refuses_large_prime_factors);
  tcase_add_test(tp, test_engine_choice);
  tcase_add_test(tp, test_filled_structs_struct_size);
  tcase_add_test(tp, test_build_failure);
  tcase_add_test(tp, test_plan_cache_reuses_plans);
  tcase_add_test(tp, test_plan_cache_named_engine);
  tcase_add_test(tp, test_plan_cache_threads);
  tcase_add_test(tp, test_disk_cache_across_processes);
  tcase_add_test(tp, test_vkfft_tune);
  tcase_add_test(tp, test_scratch_over_memory_limit);
  suite_add_tcase(s, tp);
  TCase *tl = fixture_tcase("lengths");
  tcase_add_loop_test(tl, test_default_engine_long_lengths, 0, LONG_CASES);
  tcase_add_test(tl, test_real_2d_long_odd);
  tcase_add_test(tl, test_c2c_2d_strided_4096);
  tcase_add_test(tl, test_unit_lengths);
  tcase_add_test(tl, test_vkfft_build_failure);
  suite_add_tcase(s, tl);
  return fixture_run(s);
}
