/* bench/experiments/fft_tune — the fft suite's five shapes on the default engine, timed and checked, for
 * comparing VkFFT configurations (OCAL_VKFFT_TUNE, see src/fft/vkfft.c) one process each.
 *
 *   OCAL_VKFFT_TUNE="coalescedMemory=128" bench/experiments/fft_tune [label] [shape ...]
 *
 * shape: 0 1024x65536, 1 4096x32768, 2 2^20x128, 3 2^24x8, 4 2-D 4096x4096 (default: these
 * five); 5 2^22x32, 6 2^21x64; 7 4096x4, 8 2-D 64x128 batch 3 (small, for a CPU); or any
 * C2C shape as LENGTHS:BATCH, the lengths row-major with the contiguous one last (4096x256:16
 * is 16 2-D transforms of 4096 rows of 256 points; 256x256x256:1 one 3-D transform).
 * Prints one JSON object per shape: plan creation time, the best of three timed rounds of
 * back-to-back forward C2C transforms ended by ocal_context_finish (as the fft suite times them), and
 * the largest error of a few output bins against a double-precision DFT on the host (batch 0
 * random, the last batch, if another, constant), relative to the input's 2-norm. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ocal.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#define CHECK(x)                                                         \
  do {                                                                   \
    ocal_status s_ = (x);                                                \
    if (s_ != OCAL_OK) {                                                 \
      fprintf(stderr, "fft_tune: %s: %s\n", #x, ocal_last_error()); \
      return 1;                                                          \
    }                                                                    \
  } while (0)

typedef struct shape {
  int ndim;
  size_t n[3], batch;
} shape;

static const shape shapes[] = {{1, {1024, 0}, 65536},
                               {1, {4096, 0}, 32768},
                               {1, {1u << 20, 0}, 128},
                               {1, {1u << 24, 0}, 8},
                               {2, {4096, 4096}, 1},
                               /* more lengths that VkFFT splits in three by default */
                               {1, {1u << 22, 0}, 32},
                               {1, {1u << 21, 0}, 64},
                               /* small ones, to check this program on a CPU */
                               {1, {4096, 0}, 4},
                               {2, {64, 128}, 3},
                               /* and one more long length (9) */
                               {1, {1u << 23, 0}, 16}};
#define NSHAPES (int)(sizeof shapes / sizeof shapes[0])

/* Bin k (row-major index) of the forward DFT of x (points values), in double. */
static void dft_bin(const shape *sh, const float *x, size_t points, size_t k, double *re,
                    double *im) {
  double sr = 0, si = 0;
  for (size_t j = 0; j < points; j++) {
    /* exact phase: the sum over axes of (k_a j_a / n_a) mod 1, from integers */
    double ph = 0;
    size_t stride = 1;
    for (int a = sh->ndim - 1; a >= 0; stride *= sh->n[a], a--) {
      size_t ka = k / stride % sh->n[a], ja = j / stride % sh->n[a];
      ph += (double)((ka * ja) % sh->n[a]) / (double)sh->n[a];
    }
    double a = -2.0 * M_PI * ph, c = cos(a), s = sin(a);
    sr += x[2 * j] * c - x[2 * j + 1] * s;
    si += x[2 * j] * s + x[2 * j + 1] * c;
  }
  *re = sr;
  *im = si;
}

static int one(const char *label, const char *tune, const shape *sh) {
  ocal_context ctx;
  CHECK(ocal_context_create(NULL, &ctx));
  ocal_fft_desc d;
  ocal_fft_desc_init(&d);
  d.ndim = sh->ndim;
  for (int a = 0; a < sh->ndim; a++) d.lengths[a] = sh->n[a];
  d.batch = sh->batch;
  ocal_fft_plan plan;
  double t0 = now();
  CHECK(ocal_fft_plan_create(ctx, &d, &plan));
  double plan_ms = (now() - t0) * 1e3;
  ocal_fft_plan_info info = {sizeof info};
  CHECK(ocal_fft_plan_get_info(plan, &info));
  size_t points = 1;
  for (int a = 0; a < sh->ndim; a++) points *= sh->n[a];
  size_t total = points * sh->batch;
  ocal_buffer in, out;
  CHECK(ocal_buffer_create(ctx, OCAL_C32, 1, &total, &in));
  CHECK(ocal_buffer_create(ctx, OCAL_C32, 1, &total, &out));
  float c[2] = {0.25f, -0.5f};
  CHECK(ocal_buffer_fill(in, c));
  float *x = malloc(points * 2 * sizeof *x);
  if (!x) return 1;
  unsigned long long r = 88172645463325252ull;
  double norm = 0;
  for (size_t i = 0; i < 2 * points; i++) {
    r ^= r << 13, r ^= r >> 7, r ^= r << 17;
    x[i] = (float)((double)(r >> 11) / 9007199254740992.0 - 0.5);
    norm += (double)x[i] * x[i];
  }
  norm = sqrt(norm);
  CHECK(ocal_buffer_write(in, 0, points, x, NULL));
  CHECK(ocal_fft_execute(plan, OCAL_FFT_FORWARD, in, out));
  CHECK(ocal_context_finish(ctx));
  /* bins of batch 0 against the host DFT; bins 0 and 1 of the last (constant) batch */
  size_t bins[3] = {1, points / 3 + 7, points - 5};
  double err = 0;
  for (int b = 0; b < 3; b++) {
    float g[2];
    double re, im;
    CHECK(ocal_buffer_read(out, bins[b], 1, g, NULL));
    dft_bin(sh, x, points, bins[b], &re, &im);
    double e = hypot(g[0] - re, g[1] - im) / norm;
    if (e > err) err = e;
  }
  double cnorm = sqrt((double)points * (c[0] * c[0] + c[1] * c[1]));
  for (size_t b = 0; b < 2 && sh->batch > 1; b++) {
    float g[2];
    CHECK(ocal_buffer_read(out, (sh->batch - 1) * points + b, 1, g, NULL));
    double re = b ? 0 : c[0] * (double)points, im = b ? 0 : c[1] * (double)points;
    double e = hypot(g[0] - re, g[1] - im) / cnorm;
    if (e > err) err = e;
  }
  free(x);
  /* timing: rounds of back-to-back calls of at least 0.1 s, best of three */
  int reps = 1;
  for (;;) {
    t0 = now();
    for (int i = 0; i < reps; i++) CHECK(ocal_fft_execute(plan, OCAL_FFT_FORWARD, in, out));
    CHECK(ocal_context_finish(ctx));
    if (now() - t0 >= 0.05) break;
    reps *= 2;
  }
  reps *= 2;
  double best = 1e30;
  for (int round = 0; round < 3; round++) {
    t0 = now();
    for (int i = 0; i < reps; i++) CHECK(ocal_fft_execute(plan, OCAL_FFT_FORWARD, in, out));
    CHECK(ocal_context_finish(ctx));
    double t = (now() - t0) / reps;
    if (t < best) best = t;
  }
  double flops = 5.0 * (double)points * log2((double)points) * (double)sh->batch;
  char size[64];
  if (sh->ndim == 3)
    snprintf(size, sizeof size, "3d:%zux%zux%zu:%zu", sh->n[0], sh->n[1], sh->n[2], sh->batch);
  else if (sh->ndim == 2 && sh->batch > 1)
    snprintf(size, sizeof size, "2d:%zux%zu:%zu", sh->n[0], sh->n[1], sh->batch);
  else if (sh->ndim == 2) /* the fft suite's label */
    snprintf(size, sizeof size, "2d:%zux%zu", sh->n[0], sh->n[1]);
  else
    snprintf(size, sizeof size, "%zux%zu", sh->n[0], sh->batch);
  printf("{\"label\": \"%s\", \"tune\": \"%s\", \"engine\": \"%s\", \"size\": \"%s\", "
         "\"us\": %.2f, \"gflops\": %.1f, \"plan_ms\": %.1f, \"disk\": %d, \"err\": %.2e}\n",
         label, tune, info.engine_name, size, best * 1e6, flops / best * 1e-9, plan_ms,
         info.from_disk_cache, err);
  fflush(stdout);
  ocal_buffer_release(in);
  ocal_buffer_release(out);
  ocal_fft_plan_release(plan);
  ocal_context_release(ctx);
  return 0;
}

/* A table index, or "N0[xN1[xN2]]:BATCH"; 0 when it is neither. */
static int parse_shape(const char *arg, shape *sh) {
  if (!strchr(arg, ':')) {
    char *end;
    long k = strtol(arg, &end, 10);
    if (end == arg || *end || k < 0 || k >= NSHAPES) return 0;
    *sh = shapes[k];
    return 1;
  }
  memset(sh, 0, sizeof *sh);
  const char *p = arg;
  for (;;) {
    char *end;
    unsigned long long v = strtoull(p, &end, 10);
    if (end == p || v == 0 || sh->ndim == 3) return 0;
    sh->n[sh->ndim++] = (size_t)v;
    if (*end == 'x') {
      p = end + 1;
      continue;
    }
    if (*end != ':') return 0;
    char *tail;
    unsigned long long b = strtoull(end + 1, &tail, 10);
    if (tail == end + 1 || *tail || b == 0) return 0;
    sh->batch = (size_t)b;
    return 1;
  }
}

int main(int argc, char **argv) {
  const char *label = argc > 1 ? argv[1] : "";
  const char *tune = getenv("OCAL_VKFFT_TUNE");
  if (!tune) tune = "";
  int rc = 0;
  if (argc > 2) {
    for (int i = 2; i < argc; i++) {
      shape sh;
      if (!parse_shape(argv[i], &sh)) {
        fprintf(stderr, "fft_tune: '%s' is neither 0..%d nor LENGTHS:BATCH\n", argv[i],
                NSHAPES - 1);
        return 2;
      }
      rc |= one(label, tune, &sh);
    }
  } else {
    for (int k = 0; k < 5; k++) rc |= one(label, tune, &shapes[k]);
  }
  return rc;
}
