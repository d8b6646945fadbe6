/* ocal benchmark — what the first reduction, scan, GEMM, FFT and generated kernels of a
 * process cost: each runs once on a fresh context (wall-clock time to ocal_context_finish,
 * kernel builds included) and prints what its first call compiled or loaded from the disk
 * cache.
 * Run it with an empty OCAL_CACHE_DIR to see cold compiles (and, on PoCL, POCL_KERNEL_CACHE=0
 * so that PoCL's own cache does not hide them); bench/experiments/engine_gpu_round.sh does that.
 *
 *   bench/first_calls
 *
 * One line per call: name, milliseconds, programs compiled, the kernels in them, kilobytes of
 * source given to the compiler and of binary it made (PTX on NVIDIA; a kernel compiled but
 * never launched shows here), programs from the disk cache. bench/experiments/cold_demo.sh runs it
 * beside `ocal demo`. Every result is checked against a double-precision host computation
 * (the 1024^3 GEMM on 4096 sampled entries): a wrong result fails the program (exit 1).
 * It reads the compile tally through src/core's internal interface (linked with
 * libocal_core), which ocal_cache_stats leaves out to keep its ABI. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <ocal.h>

#include "internal.h"

#define N 1000003 /* not a power of two */

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int failed = 0;

#define CHECK(expr)                                                                 \
  do {                                                                              \
    ocal_status s_ = (expr);                                                        \
    if (s_ != OCAL_OK) {                                                            \
      fprintf(stderr, "first_calls: %s failed: %s\n", #expr, ocal_last_error());    \
      exit(1);                                                                      \
    }                                                                               \
  } while (0)

typedef struct {
  ocal_context ctx;
  ocal_cache_stats before;
  ocal__compile_tally tally;
  double t0;
} probe;

static void begin(probe *p, ocal_context ctx) {
  p->ctx = ctx;
  p->before.struct_size = sizeof p->before;
  CHECK(ocal_context_get_cache_stats(ctx, &p->before));
  ocal__context_compile_tally(ctx, &p->tally);
  p->t0 = now_ms();
}

static void end(probe *p, const char *what, double err, double tol) {
  CHECK(ocal_context_finish(p->ctx));
  double ms = now_ms() - p->t0;
  ocal_cache_stats after = {sizeof after};
  CHECK(ocal_context_get_cache_stats(p->ctx, &after));
  ocal__compile_tally t;
  ocal__context_compile_tally(p->ctx, &t);
  int ok = err <= tol;
  if (!ok) failed = 1;
  printf("%-36s %9.1f ms  compiled %llu (%llu kernels, %.1f KB source, %.1f KB binary)  "
         "from disk %llu  %s (error %.1e)\n",
         what, ms, (unsigned long long)(after.compiles - p->before.compiles),
         (unsigned long long)(t.kernels - p->tally.kernels),
         (double)(t.source_bytes - p->tally.source_bytes) / 1e3,
         (double)(t.binary_bytes - p->tally.binary_bytes) / 1e3,
         (unsigned long long)(after.disk_hits - p->before.disk_hits), ok ? "ok" : "WRONG", err);
}

static void fill(float *x, size_t n, uint64_t *state) {
  for (size_t i = 0; i < n; i++) {
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    x[i] = (float)((double)(*state >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
  }
}

/* The first f32 ocal_gemm of an m x n x k product (row-major, no transposes), checked
 * against double sums on every entry, or on `samples` random entries when that is not 0;
 * the error is relative to the sum of |terms|. */
static void first_gemm(ocal_context ctx, const char *what, size_t m, size_t n, size_t k,
                       size_t samples, uint64_t *state) {
  float *a = malloc(sizeof(float) * m * k), *b = malloc(sizeof(float) * k * n),
        *c = malloc(sizeof(float) * m * n);
  if (!a || !b || !c) exit(1);
  fill(a, m * k, state);
  fill(b, k * n, state);
  size_t sa[2] = {m, k}, sb[2] = {k, n}, sc[2] = {m, n};
  ocal_buffer ba, bb, bc;
  CHECK(ocal_buffer_from_host(ctx, OCAL_F32, 2, sa, a, &ba));
  CHECK(ocal_buffer_from_host(ctx, OCAL_F32, 2, sb, b, &bb));
  CHECK(ocal_buffer_create(ctx, OCAL_F32, 2, sc, &bc));
  CHECK(ocal_context_finish(ctx));
  probe p;
  begin(&p, ctx);
  CHECK(ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1.0, ba, bb, 0.0, bc));
  CHECK(ocal_context_finish(ctx));
  double ms_end = now_ms();
  CHECK(ocal_buffer_read(bc, 0, m * n, c, NULL));
  double worst = 0;
  size_t count = samples ? samples : m * n;
  for (size_t s = 0; s < count; s++) {
    size_t e = s;
    if (samples) {
      *state = *state * 6364136223846793005ull + 1442695040888963407ull;
      e = (size_t)(*state >> 33) % (m * n);
    }
    size_t i = e / n, j = e % n;
    double ref = 0, mass = 0;
    for (size_t q = 0; q < k; q++) {
      double t = (double)a[i * k + q] * (double)b[q * n + j];
      ref += t, mass += fabs(t);
    }
    double err = fabs((double)c[e] - ref) / (mass > 0 ? mass : 1);
    if (err > worst) worst = err;
  }
  /* The check's host time is not the call's. */
  p.t0 += now_ms() - ms_end;
  const char *engine = "?", *reason = "";
  CHECK(ocal_gemm_engine_query(ctx, OCAL_F32, OCAL_NO_TRANS, m, n, k, 1, &engine, &reason));
  char label[64];
  snprintf(label, sizeof label, "%s (%s)", what, engine);
  end(&p, label, worst, 1e-5);
  ocal_buffer_release(ba);
  ocal_buffer_release(bb);
  ocal_buffer_release(bc);
  free(a);
  free(b);
  free(c);
}

/* The first FFT: the demo's 3 x 1000-point C2C (plan included), against a direct DFT. */
static void first_fft(ocal_context ctx, uint64_t *state) {
  enum { LEN = 1000, BATCH = 3 };
  const size_t total = (size_t)LEN * BATCH;
  float *in = malloc(sizeof(float) * 2 * total), *out = malloc(sizeof(float) * 2 * total);
  if (!in || !out) exit(1);
  fill(in, 2 * total, state);
  ocal_buffer bin, bout;
  CHECK(ocal_buffer_from_host(ctx, OCAL_C32, 1, &total, in, &bin));
  CHECK(ocal_buffer_create(ctx, OCAL_C32, 1, &total, &bout));
  CHECK(ocal_context_finish(ctx));
  ocal_fft_desc d;
  CHECK(ocal_fft_desc_init(&d));
  d.lengths[0] = LEN;
  d.batch = BATCH;
  ocal_fft_plan plan;
  probe p;
  begin(&p, ctx);
  CHECK(ocal_fft_plan_create(ctx, &d, &plan));
  CHECK(ocal_fft_execute(plan, OCAL_FFT_FORWARD, bin, bout));
  CHECK(ocal_context_finish(ctx));
  double ms_end = now_ms();
  CHECK(ocal_buffer_read(bout, 0, total, out, NULL));
  double err2 = 0, ref2 = 0;
  for (size_t b = 0; b < BATCH; b++)
    for (size_t f = 0; f < LEN; f++) {
      double re = 0, im = 0;
      for (size_t j = 0; j < LEN; j++) {
        const float *v = in + 2 * (b * LEN + j);
        double ang = -2.0 * M_PI * (double)((j * f) % LEN) / LEN;
        re += v[0] * cos(ang) - v[1] * sin(ang);
        im += v[0] * sin(ang) + v[1] * cos(ang);
      }
      const float *o = out + 2 * (b * LEN + f);
      err2 += (o[0] - re) * (o[0] - re) + (o[1] - im) * (o[1] - im);
      ref2 += re * re + im * im;
    }
  p.t0 += now_ms() - ms_end;
  ocal_fft_plan_info info = {sizeof info};
  char what[64];
  CHECK(ocal_fft_plan_get_info(plan, &info));
  snprintf(what, sizeof what, "first FFT 3x1000 C2C (%s)", info.engine_name);
  end(&p, what, sqrt(err2 / ref2), 1e-5);
  ocal_fft_plan_release(plan);
  ocal_buffer_release(bin);
  ocal_buffer_release(bout);
  free(in);
  free(out);
}

int main(void) {
  float *x = malloc(N * sizeof *x), *back = malloc(N * sizeof *back);
  if (!x || !back) return 1;
  uint64_t state = 12345;
  for (size_t i = 0; i < N; i++) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    x[i] = (float)((double)(state >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
  }
  double ref = 0, mass = 0;
  for (size_t i = 0; i < N; i++) ref += x[i], mass += fabs(x[i]);

  ocal_context ctx;
  double t0 = now_ms();
  CHECK(ocal_context_create(NULL, &ctx));
  printf("%-28s %9.1f ms\n", "context", now_ms() - t0);
  size_t n = N, one = 1;
  ocal_buffer bx, bout, bscan;
  CHECK(ocal_buffer_from_host(ctx, OCAL_F32, 1, &n, x, &bx));
  CHECK(ocal_buffer_create(ctx, OCAL_F32, 1, &one, &bout));
  CHECK(ocal_buffer_create(ctx, OCAL_F32, 1, &n, &bscan));
  CHECK(ocal_context_finish(ctx));

  probe p;
  float got = 0;
  begin(&p, ctx);
  CHECK(ocal_sum(bx, OCAL_AXIS_ALL, bout));
  CHECK(ocal_buffer_read(bout, 0, 1, &got, NULL));
  end(&p, "first ocal_sum f32", fabs(got - ref) / mass, 1e-6);

  begin(&p, ctx);
  CHECK(ocal_sum(bx, OCAL_AXIS_ALL, bout));
  CHECK(ocal_buffer_read(bout, 0, 1, &got, NULL));
  end(&p, "second ocal_sum f32", fabs(got - ref) / mass, 1e-6);

  begin(&p, ctx);
  CHECK(ocal_amax(bx, OCAL_AXIS_ALL, bout));
  CHECK(ocal_buffer_read(bout, 0, 1, &got, NULL));
  float mx = x[0];
  for (size_t i = 1; i < N; i++) mx = x[i] > mx ? x[i] : mx;
  end(&p, "first ocal_amax f32", fabs(got - mx), 0);

  begin(&p, ctx);
  CHECK(ocal_cumsum(bx, OCAL_AXIS_ALL, bscan));
  CHECK(ocal_buffer_read(bscan, 0, n, back, NULL));
  double run = 0, worst = 0, runmass = 0;
  for (size_t i = 0; i < N; i++) {
    run += x[i];
    runmass += fabs(x[i]);
    double e = fabs(back[i] - run) / runmass;
    if (e > worst) worst = e;
  }
  end(&p, "first ocal_cumsum f32", worst, 1e-5);

  ocal_gen red;
  begin(&p, ctx);
  CHECK(ocal_gen_reduction(ctx, OCAL_F32, "0", "a + b", "x[i] * x[i]", "const float *x", NULL,
                           &red));
  ocal_gen_arg args[1] = {OCAL_GEN_BUFFER(bx)};
  CHECK(ocal_gen_run(red, OCAL_GEN_AUTO, 1, args, bout));
  CHECK(ocal_buffer_read(bout, 0, 1, &got, NULL));
  double sq = 0;
  for (size_t i = 0; i < N; i++) sq += (double)x[i] * x[i];
  end(&p, "first ocal_gen_reduction", fabs(got - sq) / sq, 1e-6);

  /* The demo's generated elementwise kernel, z = x * y + 0.5 (creation and first run). */
  ocal_gen mul;
  begin(&p, ctx);
  CHECK(ocal_gen_elementwise(ctx, "const float *x, const float *y, float *z",
                             "z[i] = x[i] * y[i] + 0.5f", NULL, &mul));
  ocal_gen_arg margs[3] = {OCAL_GEN_BUFFER(bx), OCAL_GEN_BUFFER(bx), OCAL_GEN_BUFFER(bscan)};
  CHECK(ocal_gen_run(mul, OCAL_GEN_AUTO, 3, margs, NULL));
  CHECK(ocal_buffer_read(bscan, 0, n, back, NULL));
  worst = 0;
  for (size_t i = 0; i < N; i++) {
    double want = (double)x[i] * x[i] + 0.5;
    double e = fabs(back[i] - want) / want;
    if (e > worst) worst = e;
  }
  end(&p, "first ocal_gen_elementwise", worst, 1e-6);
  ocal_gen_release(mul);

  /* GEMM: the demo's 203 x 301 x 257 (ocal's own kernel below 4096^3 on a GPU), then a
   * 1024^3 (a split of k on large GPUs: the slice sum's program too). */
  uint64_t gstate = 99;
  first_gemm(ctx, "first gemm 203x301x257", 203, 301, 257, 0, &gstate);
  first_gemm(ctx, "then gemm 1024^3", 1024, 1024, 1024, 4096, &gstate);
  first_fft(ctx, &gstate);

  /* The demo's other first calls: a fill, then y = relu(2.5 x + y) (ocal_axpy, ocal_unary). */
  float *y = malloc(N * sizeof *y);
  if (!y) return 1;
  fill(y, N, &gstate);
  ocal_buffer by;
  CHECK(ocal_buffer_from_host(ctx, OCAL_F32, 1, &n, y, &by));
  CHECK(ocal_context_finish(ctx));
  float value = 0.5f;
  begin(&p, ctx);
  CHECK(ocal_buffer_fill(bscan, &value));
  CHECK(ocal_buffer_read(bscan, 0, n, back, NULL));
  worst = 0;
  for (size_t i = 0; i < N; i++) worst = fmax(worst, fabs(back[i] - 0.5));
  end(&p, "first ocal_buffer_fill", worst, 0);
  begin(&p, ctx);
  CHECK(ocal_axpy(2.5, bx, by));
  CHECK(ocal_buffer_read(by, 0, n, back, NULL));
  worst = 0;
  for (size_t i = 0; i < N; i++) {
    double want = 2.5 * (double)x[i] + (double)y[i];
    worst = fmax(worst, fabs(back[i] - want) / (2.5 * fabs((double)x[i]) + fabs((double)y[i])));
  }
  end(&p, "first ocal_axpy", worst, 1e-6);
  begin(&p, ctx);
  CHECK(ocal_unary(OCAL_UNARY_RELU, by, by));
  float *relu = malloc(N * sizeof *relu);
  if (!relu) return 1;
  CHECK(ocal_buffer_read(by, 0, n, relu, NULL));
  worst = 0;
  for (size_t i = 0; i < N; i++) worst = fmax(worst, fabs(relu[i] - fmax(back[i], 0.0)));
  end(&p, "first ocal_unary relu", worst, 0);
  free(relu);
  free(y);
  ocal_buffer_release(by);

  ocal_gen_release(red);
  ocal_buffer_release(bx);
  ocal_buffer_release(bout);
  ocal_buffer_release(bscan);
  ocal_context_release(ctx);
  free(x);
  free(back);
  return failed;
}
