/* Tests of ocal's own four-step FFT (src/fft/fourstep.c, cl/fft_fourstep.cl), forced on with
 * OCAL_FFT_FOURSTEP=1 at small sizes (on PoCL the default rule never picks it): against a
 * double-precision host DFT (every bin at 2^12, a random subset of bins above), several
 * N1 x N2 splits, columns per work-group and points per work-item, batch 3, forward and
 * inverse, in and out of place, the three normalisations, round trips; the engine choice
 * (OCAL_FFT_FOURSTEP=0, named engines, unsupported shapes, bad settings) and the disk cache
 * of its kernels. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixture.h"

typedef struct fs_case {
  size_t n, batch;
  const char *tune; /* OCAL_FFT_FOURSTEP_TUNE */
  int in_place;
  ocal_fft_norm norm;
  size_t bins; /* bins checked per transform; 0: all */
} fs_case;

static double norm_scale(ocal_fft_norm norm, size_t n, int forward) {
  if (norm == OCAL_FFT_NORM_ORTHO) return 1.0 / sqrt((double)n);
  if (norm == OCAL_FFT_NORM_BACKWARD) return forward ? 1.0 : 1.0 / (double)n;
  return forward ? 1.0 / (double)n : 1.0;
}

/* Bin k of the DFT (sign -1 forward, +1 inverse) of x (n complex floats), in double, with a
 * table of cos/sin(2 pi i / n): the phase index (j k) mod n is exact. */
static void dft_bin(const float *x, size_t n, const double *cs, size_t k, int sign, double *re,
                    double *im) {
  double sr = 0, si = 0;
  for (size_t j = 0, p = 0; j < n; j++, p = (p + k) & (n - 1)) {
    double c = cs[2 * p], s = sign * cs[2 * p + 1];
    sr += x[2 * j] * c - x[2 * j + 1] * s;
    si += x[2 * j] * s + x[2 * j + 1] * c;
  }
  *re = sr;
  *im = si;
}

/* cos and sin of 2 pi i / n for i < n, interleaved: dft_bin's table. */
static double *phase_table(size_t n) {
  double *cs = fixture_malloc(2 * n * sizeof *cs);
  for (size_t i = 0; i < n; i++) {
    cs[2 * i] = cos(2.0 * M_PI * (double)i / (double)n);
    cs[2 * i + 1] = sin(2.0 * M_PI * (double)i / (double)n);
  }
  return cs;
}

/* Relative 2-norm error of direction `sign` of y = F(x) over the checked bins of each
 * transform (all, or c->bins of them chosen at random, always 0 and n - 1). */
static double check_bins(const fs_case *c, const float *x, const float *y, const double *cs,
                         int sign, uint64_t seed) {
  double num = 0, den = 0, sc = norm_scale(c->norm, c->n, sign < 0);
  size_t count = c->bins ? c->bins : c->n;
  for (size_t b = 0; b < c->batch; b++) {
    for (size_t i = 0; i < count; i++) {
      size_t k = c->bins ? (i == 0 ? 0 : i == 1 ? c->n - 1 : fixture_random(&seed) % c->n) : i;
      double re, im;
      dft_bin(x + 2 * b * c->n, c->n, cs, k, sign, &re, &im);
      re *= sc;
      im *= sc;
      const float *g = y + 2 * (b * c->n + k);
      num += (g[0] - re) * (g[0] - re) + (g[1] - im) * (g[1] - im);
      den += re * re + im * im;
    }
  }
  return sqrt(num / den);
}

/* Forces the four-step kernels on with OCAL_FFT_FOURSTEP_TUNE=tune, on a fresh context (the
 * settings are read at context creation); fourstep_off takes both settings away again. */
static void fourstep_on(const char *tune) {
  setenv("OCAL_FFT_FOURSTEP", "1", 1);
  setenv("OCAL_FFT_FOURSTEP_TUNE", tune, 1);
  unsetenv("OCAL_FFT");
  fixture_reopen();
}

static void fourstep_off(void) {
  unsetenv("OCAL_FFT_FOURSTEP");
  unsetenv("OCAL_FFT_FOURSTEP_TUNE");
}

/* count complex values, uniform in [-1, 1) each part */
static float *random_points(size_t count, uint64_t seed) {
  float *x = fixture_malloc(2 * count * sizeof *x);
  for (size_t i = 0; i < 2 * count; i++)
    x[i] = (float)((double)(fixture_random(&seed) >> 11) / 9007199254740992.0 * 2.0 - 1.0);
  return x;
}

/* A plan of n points (1-D), or of n x cols (2-D), that must run on the four-step kernels. */
static ocal_fft_plan fourstep_plan(size_t n, size_t cols, size_t batch, int in_place,
                                   ocal_fft_norm norm) {
  ocal_fft_desc d;
  ocal_fft_desc_init(&d);
  d.ndim = cols ? 2 : 1;
  d.lengths[0] = n;
  d.lengths[1] = cols;
  d.batch = batch;
  d.in_place = in_place;
  d.norm = norm;
  ocal_fft_plan plan;
  ck_assert_ocal(ocal_fft_plan_create(fixture_ctx, &d, &plan));
  ocal_fft_plan_info info = {sizeof info};
  ck_assert_ocal(ocal_fft_plan_get_info(plan, &info));
  ck_assert_str_eq(info.engine_name, "fourstep");
  ck_assert_int_eq(info.engine, OCAL_FFT_ENGINE_FOURSTEP);
  return plan;
}

static void run_case(const fs_case *c) {
  fourstep_on(c->tune);
  size_t total = c->n * c->batch;
  uint64_t st = 77 + c->n + c->batch;
  float *x = random_points(total, st), *y = fixture_malloc(2 * total * sizeof *y);
  double *cs = phase_table(c->n);

  ocal_fft_plan plan = fourstep_plan(c->n, 0, c->batch, c->in_place, c->norm);

  ocal_buffer in, out;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_C32, 1, &total, x, &in));
  out = in;
  if (!c->in_place) ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_C32, 1, &total, &out));
  /* forward against the DFT */
  ck_assert_ocal(ocal_fft_execute(plan, OCAL_FFT_FORWARD, in, out));
  ck_assert_ocal(ocal_buffer_read(out, 0, total, y, NULL));
  double err = check_bins(c, x, y, cs, -1, st);
  ck_assert_msg(err < 1e-5, "n %zu tune '%s' forward: relative error %.3g", c->n, c->tune, err);
  if (!c->in_place) {
    float *x2 = fixture_malloc(2 * total * sizeof *x2);
    ck_assert_ocal(ocal_buffer_read(in, 0, total, x2, NULL));
    ck_assert_msg(memcmp(x, x2, 2 * total * sizeof *x) == 0, "the input changed");
    free(x2);
  }
  /* the round trip: the inverse of y gives x back */
  ocal_buffer back = in;
  if (!c->in_place) ck_assert_ocal(ocal_buffer_fill(in, (float[2]){0, 0}));
  ck_assert_ocal(ocal_fft_execute(plan, OCAL_FFT_INVERSE, out, back));
  float *z = fixture_malloc(2 * total * sizeof *z);
  ck_assert_ocal(ocal_buffer_read(back, 0, total, z, NULL));
  double num = 0, den = 0, rs = norm_scale(c->norm, c->n, 1) * norm_scale(c->norm, c->n, 0) *
                                    (double)c->n;
  for (size_t i = 0; i < 2 * total; i++) {
    num += (z[i] - x[i] * rs) * (z[i] - x[i] * rs);
    den += x[i] * rs * x[i] * rs;
  }
  ck_assert_msg(sqrt(num / den) < 1e-5, "n %zu tune '%s' round trip: relative error %.3g",
                c->n, c->tune, sqrt(num / den));
  /* the inverse on its own, of x, against the DFT */
  ck_assert_ocal(ocal_buffer_write(in, 0, total, x, NULL));
  ck_assert_ocal(ocal_fft_execute(plan, OCAL_FFT_INVERSE, in, out));
  ck_assert_ocal(ocal_buffer_read(out, 0, total, y, NULL));
  err = check_bins(c, x, y, cs, 1, st + 1);
  ck_assert_msg(err < 1e-5, "n %zu tune '%s' inverse: relative error %.3g", c->n, c->tune, err);

  if (!c->in_place) ocal_buffer_release(out);
  ocal_buffer_release(in);
  ck_assert_ocal(ocal_fft_plan_release(plan));
  free(x);
  free(y);
  free(z);
  free(cs);
  fourstep_off();
}

/* Few distinct (length, points per item, columns) kernels: each is a PoCL compile. */
static const fs_case cases[] = {
    /* 64 x 64, radix 4 (3 stages), one column per group: every bin */
    {4096, 3, "n1=64,c=1,r=4", 0, OCAL_FFT_NORM_BACKWARD, 0},
    {4096, 3, "n1=64,c=1,r=4", 1, OCAL_FFT_NORM_ORTHO, 0},
    /* 256 x 64, radix 16 then a radix-16 / radix-4 mix, two columns, the transposed
     * intermediate (the others below 2^24 default to tiles of c x c2) */
    {1 << 14, 3, "n1=256,c=2,r=16,tt=1", 1, OCAL_FFT_NORM_FORWARD, 48},
    /* 256 x 256, radix 8 (8 x 8 x 4), four columns, global memory staged in 4 rounds (as on a
     * GPU, where local memory holds a quarter of a group's 4096 x 4 points) */
    {1 << 16, 3, "n1=256,c=4,r=8,sr=4", 0, OCAL_FFT_NORM_BACKWARD, 32},
    /* the row-major intermediate, one column exchanged at a time, 2 transforms per launch
     * (a last launch of one), pass 2 with other columns per group than pass 1 */
    {1 << 13, 5, "n1=128,c=4,c2=2,r=4,cr=1,tt=0,g=2,sr=2", 0, OCAL_FFT_NORM_BACKWARD, 24},
    /* real and imaginary parts exchanged in separate rounds (forced: PoCL's local memory
     * holds whole columns), 128 x 256, one and two columns, radix 8 in pass 1 and radix 4
     * in pass 2 */
    {1 << 15, 2, "n1=128,c=1,c2=2,r=8,r2=4,plane=1", 1, OCAL_FFT_NORM_ORTHO, 32},
    /* sixteen columns per group in pass 1 (128 bytes of a row in f32), exchanged one at a
     * time (sixteen rounds), with the cache hints named (plain accesses without PTX); pass 2
     * is the first case's kernel (no compile of its own; eight columns: tests/oclgrind_set.c) */
    {4096, 3, "n1=64,c=16,c2=1,r=4,cr=1,ld=2,st=1", 1, OCAL_FFT_NORM_ORTHO, 32},
    /* the defaults of 2^20: 512 x 2048, tiles, 8 and 16 points per item */
    {1 << 20, 1, "", 0, OCAL_FFT_NORM_BACKWARD, 16},
};

START_TEST(test_fourstep_against_dft) { run_case(&cases[_i]); }
END_TEST

/* y = the 2-D DFT (sign -1 forward, +1 inverse) of the rows x cols points of x, times sc, in
 * double: a DFT of every row, then of every column, with exact phase indices. */
static void dft_2d(const float *x, size_t rows, size_t cols, int sign, double sc, double *y) {
  size_t big = rows > cols ? rows : cols;
  double *cs = fixture_malloc(2 * big * sizeof *cs), *t = fixture_malloc(2 * rows * cols * sizeof *t);
  for (int axis = 0; axis < 2; axis++) {
    size_t n = axis ? rows : cols, lines = axis ? cols : rows;
    size_t step = axis ? cols : 1, lstep = axis ? 1 : cols; /* point, line strides */
    for (size_t i = 0; i < n; i++) {
      cs[2 * i] = cos(2.0 * M_PI * (double)i / (double)n);
      cs[2 * i + 1] = sign * sin(2.0 * M_PI * (double)i / (double)n);
    }
    for (size_t l = 0; l < lines; l++)
      for (size_t k = 0; k < n; k++) {
        double sr = 0, si = 0;
        for (size_t j = 0; j < n; j++) {
          size_t at = l * lstep + j * step, p = (j * k) % n;
          double xr = axis ? t[2 * at] : x[2 * at], xi = axis ? t[2 * at + 1] : x[2 * at + 1];
          sr += xr * cs[2 * p] - xi * cs[2 * p + 1];
          si += xr * cs[2 * p + 1] + xi * cs[2 * p];
        }
        size_t o = l * lstep + k * step;
        (axis ? y : t)[2 * o] = axis ? sr * sc : sr;
        (axis ? y : t)[2 * o + 1] = axis ? si * sc : si;
      }
  }
  free(cs);
  free(t);
}

typedef struct fs2_case {
  size_t rows, cols, batch;
  const char *tune;
  int in_place;
  ocal_fft_norm norm;
} fs2_case;

/* 2-D transforms on the four-step kernels in both orders, every bin, forward and inverse,
 * against the host's 2-D DFT. */
static const fs2_case cases_2d[] = {
    /* the columns first (rows=0), in place, 3 transforms per launch; the default order out
     * of place with eight columns per group: tests/oclgrind_set.c */
    {64, 128, 3, "rows=0,c=4,r=4", 1, OCAL_FFT_NORM_BACKWARD},
    /* the rows first, both launches reading rows and writing transposed, out of place: the
     * rows on the row-major intermediate's pass-1 kernel above, the columns with 8 points
     * per item (the stage tables of each length built for the launch that runs it) */
    {64, 128, 2, "rows=1,c=4,c2=2,r=4,r2=8,cr=1,sr=2", 0, OCAL_FFT_NORM_ORTHO},
};

START_TEST(test_fourstep_2d) {
  const fs2_case *c = &cases_2d[_i];
  fourstep_on(c->tune);
  size_t n = c->rows * c->cols, total = n * c->batch;
  float *x = random_points(total, 991 + total), *y = fixture_malloc(2 * total * sizeof *y);
  double *ref = fixture_malloc(2 * n * sizeof *ref);
  ocal_fft_plan plan = fourstep_plan(c->rows, c->cols, c->batch, c->in_place, c->norm);
  for (int dir = 0; dir < 2; dir++) {
    ocal_buffer in, out;
    ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_C32, 1, &total, x, &in));
    out = in;
    if (!c->in_place) ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_C32, 1, &total, &out));
    ck_assert_ocal(
        ocal_fft_execute(plan, dir ? OCAL_FFT_INVERSE : OCAL_FFT_FORWARD, in, out));
    ck_assert_ocal(ocal_buffer_read(out, 0, total, y, NULL));
    double num = 0, den = 0;
    for (size_t b = 0; b < c->batch; b++) {
      dft_2d(x + 2 * b * n, c->rows, c->cols, dir ? 1 : -1, norm_scale(c->norm, n, !dir), ref);
      for (size_t i = 0; i < 2 * n; i++) {
        double e = y[2 * b * n + i] - ref[i];
        num += e * e;
        den += ref[i] * ref[i];
      }
    }
    ck_assert_msg(sqrt(num / den) < 1e-5, "%zu x %zu tune '%s' %s: relative error %.3g",
                  c->rows, c->cols, c->tune, dir ? "inverse" : "forward", sqrt(num / den));
    if (!c->in_place) ocal_buffer_release(out);
    ocal_buffer_release(in);
  }
  ck_assert_ocal(ocal_fft_plan_release(plan));
  free(x);
  free(y);
  free(ref);
  fourstep_off();
}
END_TEST

/* The engine of a plan of lengths n (1-D), n x n1 (2-D) or n x n1 x n2 (3-D) made on a
 * context created under the settings now in the environment (they are read at context
 * creation). */
static const char *engine_of_nd(size_t n, size_t n1, size_t n2, ocal_fft_engine e) {
  fixture_reopen();
  ocal_fft_desc d;
  ocal_fft_desc_init(&d);
  d.ndim = n2 ? 3 : n1 ? 2 : 1;
  d.lengths[0] = n;
  d.lengths[1] = n1;
  d.lengths[2] = n2;
  d.engine = e;
  ocal_fft_plan plan;
  ck_assert_ocal(ocal_fft_plan_create(fixture_ctx, &d, &plan));
  ocal_fft_plan_info info = {sizeof info};
  ck_assert_ocal(ocal_fft_plan_get_info(plan, &info));
  ck_assert_int_ne(info.engine, OCAL_FFT_ENGINE_DEFAULT);
  ck_assert_ocal(ocal_fft_plan_release(plan));
  return info.engine_name;
}

static const char *engine_of(size_t n, ocal_fft_engine e) { return engine_of_nd(n, 0, 0, e); }

static ocal_status plan_under_env(const ocal_fft_desc *d, ocal_fft_plan *plan);

START_TEST(test_fourstep_choice) {
  int vk = 0;
  ck_assert_ocal(ocal_fft_engine_available(OCAL_FFT_ENGINE_VKFFT, &vk));
  unsetenv("OCAL_FFT");
  setenv("OCAL_FFT_FOURSTEP_TUNE", "n1=64,c=1,r=4", 1);
  /* the rule: not on a CPU device */
  unsetenv("OCAL_FFT_FOURSTEP");
  ocal_device_info di = {sizeof di};
  ck_assert_ocal(ocal_context_get_device_info(fixture_ctx, &di));
  if (di.type != OCAL_DEVICE_GPU)
    ck_assert_str_ne(engine_of(4096, OCAL_FFT_ENGINE_DEFAULT), "fourstep");
  if (di.type == OCAL_DEVICE_GPU && di.local_mem_bytes >= 48 * 1024 &&
      di.local_mem_bytes < 69624) { /* 8192-point columns do not fit */
    /* 2^24: the longest column local memory holds (4096 points), squared, where a
     * measurement decides between the four-step kernels and VkFFT; 2^23: VkFFT */
    unsetenv("OCAL_FFT_FOURSTEP_TUNE");
    const char *big = engine_of((size_t)1 << 24, OCAL_FFT_ENGINE_DEFAULT);
    ck_assert_msg(strcmp(big, "fourstep") == 0 || (vk && strcmp(big, "vkfft") == 0), "%s", big);
    ck_assert_str_ne(engine_of((size_t)1 << 23, OCAL_FFT_ENGINE_DEFAULT), "fourstep");
    /* 2-D: that column length on both axes */
    big = engine_of_nd(4096, 4096, 0, OCAL_FFT_ENGINE_DEFAULT);
    ck_assert_msg(strcmp(big, "fourstep") == 0 || (vk && strcmp(big, "vkfft") == 0), "%s", big);
    ck_assert_str_ne(engine_of_nd(2048, 4096, 0, OCAL_FFT_ENGINE_DEFAULT), "fourstep");
    setenv("OCAL_FFT_FOURSTEP_TUNE", "n1=64,c=1,r=4", 1);
  }
  setenv("OCAL_FFT_FOURSTEP", "1", 1);
  ck_assert_str_eq(engine_of(4096, OCAL_FFT_ENGINE_DEFAULT), "fourstep");
  /* 2-D of powers of two from 64 on each axis; not 3-D, not other 2-D lengths */
  /* forced on, but: a named engine, or a shape it does not do */
  if (vk) ck_assert_str_eq(engine_of(4096, OCAL_FFT_ENGINE_VKFFT), "vkfft");
  ck_assert_str_ne(engine_of(2048, OCAL_FFT_ENGINE_DEFAULT), "fourstep");  /* < 2^12 */
  ck_assert_str_ne(engine_of(6144, OCAL_FFT_ENGINE_DEFAULT), "fourstep");  /* not 2^k */
  /* the same description with it off is another plan, of the default engine */
  setenv("OCAL_FFT_FOURSTEP", "0", 1);
  ck_assert_str_ne(engine_of(4096, OCAL_FFT_ENGINE_DEFAULT), "fourstep");
  /* named by the description, the four-step engine runs whatever OCAL_FFT_FOURSTEP says,
   * and refuses shapes it does not do instead of handing them on */
  ck_assert_str_eq(engine_of(4096, OCAL_FFT_ENGINE_FOURSTEP), "fourstep");
  {
    ocal_fft_desc n;
    ocal_fft_desc_init(&n);
    n.lengths[0] = 6144;
    n.engine = OCAL_FFT_ENGINE_FOURSTEP;
    ocal_fft_plan none;
    ck_assert_ocal_fails(ocal_fft_plan_create(fixture_ctx, &n, &none), OCAL_UNSUPPORTED);
    ck_assert_ptr_null(none);
    /* 2-D: powers of two from 64 on each axis (the test of 2-D transforms plans those); not
     * other 2-D lengths, not 3-D */
    const size_t refused[3][3] = {{64, 96, 0}, {32, 128, 0}, {64, 64, 64}};
    for (int i = 0; i < 3; i++) {
      n.ndim = refused[i][2] ? 3 : 2;
      memcpy(n.lengths, refused[i], sizeof n.lengths);
      ck_assert_ocal_fails(ocal_fft_plan_create(fixture_ctx, &n, &none), OCAL_UNSUPPORTED);
      ck_assert_ptr_null(none);
    }
    int have = 0;
    ck_assert_ocal(ocal_fft_engine_available(OCAL_FFT_ENGINE_FOURSTEP, &have));
    ck_assert_int_eq(have, 1);
    ck_assert_str_eq(ocal_fft_engine_name(OCAL_FFT_ENGINE_FOURSTEP), "fourstep");
    ck_assert_str_eq(ocal_fft_engine_name(OCAL_FFT_ENGINE_COUNT), "invalid");
  }
  setenv("OCAL_FFT_FOURSTEP", "auto", 1);
  engine_of(4096, OCAL_FFT_ENGINE_DEFAULT);
  /* bad settings fail context creation (a word or key the settings do not know) or plan
   * creation (a value the four-step planner does not take) */
  ocal_fft_desc d;
  ocal_fft_desc_init(&d);
  d.lengths[0] = 4096;
  ocal_fft_plan plan;
  setenv("OCAL_FFT_FOURSTEP", "maybe", 1);
  ck_assert_ocal_fails(plan_under_env(&d, &plan), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_null(plan);
  ck_assert_msg(strstr(ocal_last_error(), "OCAL_FFT_FOURSTEP") != NULL, "%s", ocal_last_error());
  setenv("OCAL_FFT_FOURSTEP", "1", 1);
  const char *bad[] = {"c=3",  "r=32", "n1=100", "n1=16384",      "x=1",    "c",
                       "sr=3", "c=32", "r2=2",   "r=16,r2=4,sr=8", "rows=2", "r=4,sr=8",
                       "c=2,", "tt=3"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    setenv("OCAL_FFT_FOURSTEP_TUNE", bad[i], 1);
    if (strcmp(bad[i], "c=2,") == 0) { /* an empty item is skipped */
      ck_assert_ocal(plan_under_env(&d, &plan));
      ck_assert_ocal(ocal_fft_plan_release(plan));
      continue;
    }
    ck_assert_ocal_fails(plan_under_env(&d, &plan), OCAL_INVALID_ARGUMENT);
    ck_assert_msg(strstr(ocal_last_error(), "OCAL_FFT_FOURSTEP_TUNE") != NULL, "%s: %s", bad[i],
                  ocal_last_error());
  }
  unsetenv("OCAL_FFT_FOURSTEP");
  unsetenv("OCAL_FFT_FOURSTEP_TUNE");
}
END_TEST

/* A plan of d on a context created under the settings now in the environment: the status
 * of the context's creation when a setting is refused there, else the plan's. */
static ocal_status plan_under_env(const ocal_fft_desc *d, ocal_fft_plan *plan) {
  ocal_context probe = NULL;
  *plan = NULL;
  ocal_status s = ocal_context_create(NULL, &probe);
  if (s != OCAL_OK) return s;
  ck_assert_ocal(ocal_context_release(probe));
  fixture_reopen();
  return ocal_fft_plan_create(fixture_ctx, d, plan);
}

/* Removes the test's cache directory and its settings. */
static void remove_cache_dir(const char *dir) {
  char cmd[64];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert_int_eq(system(cmd), 0);
  fourstep_off();
}

/* A new context of options o (its disk cache directory) and a plan of d in it; the plan's
 * info. */
static ocal_fft_plan_info plan_in_context(const ocal_context_options *o, const ocal_fft_desc *d,
                                          ocal_context *ctx, ocal_fft_plan *plan) {
  ck_assert_ocal(ocal_context_create(o, ctx));
  ck_assert_ocal(ocal_fft_plan_create(*ctx, d, plan));
  ocal_fft_plan_info info = {sizeof info};
  ck_assert_ocal(ocal_fft_plan_get_info(*plan, &info));
  return info;
}

/* A second context with the same disk cache directory loads the compiled kernels. */
START_TEST(test_fourstep_disk_cache) {
  char dir[] = "/tmp/ocal-check-fft4s-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  setenv("OCAL_FFT_FOURSTEP", "1", 1);
  setenv("OCAL_FFT_FOURSTEP_TUNE", "n1=64,c=1,r=4", 1);
  ocal_context_options o;
  ocal_context_options_init(&o);
  o.cache_dir = dir;
  ocal_fft_desc d;
  ocal_fft_desc_init(&d);
  d.lengths[0] = 4096;
  d.batch = 2;
  for (int round = 0; round < 2; round++) {
    ocal_context ctx;
    ocal_fft_plan plan;
    ocal_fft_plan_info info = plan_in_context(&o, &d, &ctx, &plan);
    ck_assert_str_eq(info.engine_name, "fourstep");
    ck_assert_int_eq(info.from_disk_cache, round);
    ocal_fft_cache_stats cs = {sizeof cs};
    ck_assert_ocal(ocal_fft_get_cache_stats(ctx, &cs));
    ck_assert_uint_eq(cs.disk_hits, (uint64_t)round);
    ck_assert_uint_eq(cs.disk_stores, (uint64_t)(1 - round));
    ck_assert_ocal(ocal_fft_plan_release(plan));
    ck_assert_ocal(ocal_context_release(ctx));
  }
  remove_cache_dir(dir);
}
END_TEST

/* The files of dir holding a record of the measured choice (one, else the test fails):
 * its path in path, its contents in text, its inode in *ino. */
/* The measured-choice records in dir: how many; path, text and inode of the last one read. */
static int choice_files(const char *dir, char *path, size_t path_size, char *text,
                        size_t text_size, ino_t *ino) {
  DIR *d = opendir(dir);
  ck_assert_ptr_nonnull(d);
  int found = 0;
  for (struct dirent *e; (e = readdir(d));) {
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    FILE *f = fopen(p, "rb");
    if (!f) continue;
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* the record's key, NUL-free text after the file's 20-byte header, names what it holds */
    if (n < 20 || !strstr(buf + 20, "fft engine choice: ")) continue;
    found++;
    snprintf(path, path_size, "%s", p);
    size_t t = n < text_size - 1 ? n : text_size - 1;
    memcpy(text, buf, t);
    text[t] = '\0';
    struct stat st;
    ck_assert_int_eq(stat(p, &st), 0);
    *ino = st.st_ino;
  }
  closedir(d);
  return found;
}

/* OCAL_FFT_FOURSTEP=measure: the plan times the four-step kernels against VkFFT and keeps
 * the faster, which computes the transform; the answer goes to the disk cache, where a second
 * context reads it (the record is not written again), a corrupt record is measured again
 * and rewritten, and another OCAL_VKFFT_TUNE is measured and stored beside. Without VkFFT
 * the four-step kernels run and nothing is measured. */
START_TEST(test_fourstep_measured) {
  int vk = 0;
  ck_assert_ocal(ocal_fft_engine_available(OCAL_FFT_ENGINE_VKFFT, &vk));
  char dir[] = "/tmp/ocal-check-fft4m-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  unsetenv("OCAL_FFT");
  setenv("OCAL_FFT_FOURSTEP", "measure", 1);
  setenv("OCAL_FFT_FOURSTEP_TUNE", "n1=64,c=1,r=4", 1);
  ocal_context_options o;
  ocal_context_options_init(&o);
  o.cache_dir = dir;
  const fs_case c = {4096, 2, "n1=64,c=1,r=4", 0, OCAL_FFT_NORM_BACKWARD, 64};
  ocal_fft_desc d;
  ocal_fft_desc_init(&d);
  d.lengths[0] = c.n;
  d.batch = c.batch;
  size_t total = c.n * c.batch;
  float *x = random_points(total, 5), *y = fixture_malloc(2 * total * sizeof *y);
  double *cs = phase_table(c.n);
  ocal_fft_engine first = OCAL_FFT_ENGINE_DEFAULT;
  ino_t ino = 0;
  for (int round = 0; round < 3; round++) {
    ocal_context ctx;
    ocal_fft_plan plan;
    ocal_fft_plan_info info = plan_in_context(&o, &d, &ctx, &plan);
    ck_assert_msg(info.engine == OCAL_FFT_ENGINE_FOURSTEP ||
                      (vk && info.engine == OCAL_FFT_ENGINE_VKFFT),
                  "round %d: %s", round, info.engine_name);
    if (round == 0) first = info.engine;
    if (round == 1) ck_assert_int_eq(info.engine, first); /* the answer on disk */
    ocal_buffer in, out;
    ck_assert_ocal(ocal_buffer_from_host(ctx, OCAL_C32, 1, &total, x, &in));
    ck_assert_ocal(ocal_buffer_zeros(ctx, OCAL_C32, 1, &total, &out));
    ck_assert_ocal(ocal_fft_execute(plan, OCAL_FFT_FORWARD, in, out));
    ck_assert_ocal(ocal_buffer_read(out, 0, total, y, NULL));
    double err = check_bins(&c, x, y, cs, -1, 9 + (uint64_t)round);
    ck_assert_msg(err < 1e-5, "round %d (%s): relative error %.3g", round, info.engine_name, err);
    ocal_buffer_release(in);
    ocal_buffer_release(out);
    ck_assert_ocal(ocal_fft_plan_release(plan));
    ck_assert_ocal(ocal_context_release(ctx));
    if (!vk) continue;
    char path[512], text[4096];
    ino_t now;
    ck_assert_int_eq(choice_files(dir, path, sizeof path, text, sizeof text, &now), 1);
    char want[32];
    snprintf(want, sizeof want, "engine=%s\n", ocal_fft_engine_name(info.engine));
    ck_assert_msg(strstr(text + 20, want) != NULL, "round %d: the record does not say %s",
                  round, want);
    if (round == 1) ck_assert_msg(now == ino, "the second context measured again");
    if (round == 2) ck_assert_msg(now != ino, "the corrupt record was not written again");
    ino = now;
    if (round == 1) { /* corrupt the record: the next context measures again */
      FILE *f = fopen(path, "wb");
      ck_assert_ptr_nonnull(f);
      fputs("OCALBIN1 not a record", f);
      fclose(f);
    }
  }
  if (vk) { /* another VkFFT configuration is another question: measured and stored beside */
    setenv("OCAL_VKFFT_TUNE", "aimThreads=128", 1);
    ocal_context ctx;
    ocal_fft_plan plan;
    plan_in_context(&o, &d, &ctx, &plan);
    ck_assert_ocal(ocal_fft_plan_release(plan));
    ck_assert_ocal(ocal_context_release(ctx));
    unsetenv("OCAL_VKFFT_TUNE");
    char path[512], text[4096];
    ino_t ino2;
    ck_assert_int_eq(choice_files(dir, path, sizeof path, text, sizeof text, &ino2), 2);
  }
  free(x);
  free(y);
  free(cs);
  remove_cache_dir(dir);
}
END_TEST

int main(void) {
  Suite *s = suite_create("fft_fourstep");
  TCase *tc = fixture_tcase("fourstep");
  tcase_add_loop_test(tc, test_fourstep_against_dft, 0, (int)(sizeof cases / sizeof cases[0]));
  tcase_add_loop_test(tc, test_fourstep_2d, 0, (int)(sizeof cases_2d / sizeof cases_2d[0]));
  tcase_add_test(tc, test_fourstep_choice);
  tcase_add_test(tc, test_fourstep_disk_cache);
  tcase_add_test(tc, test_fourstep_measured);
  suite_add_tcase(s, tc);
  return fixture_run(s);
}
