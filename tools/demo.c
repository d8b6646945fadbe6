/* ocal — `ocal demo`: one line per capability on one device, each result checked against a
 * plain host computation in double precision, with the time the device took.
 *
 * The sizes are odd on purpose (no power-of-two luck) and small enough that PoCL's CPU
 * device finishes in seconds. Times include the first call's kernel build or disk-cache
 * load, which the "kernel cache" line separates out. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ocal.h>

#include "tool.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Deterministic values in [-1, 1): the demo must show the same numbers on every run. */
static float uniform(uint64_t *state) {
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  return (float)((double)(*state >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
}

static void fill_random(float *x, size_t n, uint64_t seed) {
  for (size_t i = 0; i < n; i++) x[i] = uniform(&seed);
}

/* What one step reports: whether it passed, what it measured, and how long it took. */
typedef struct step {
  int ok;
  double ms;
  char detail[160];
} step;

/* A failed ocal call: the step fails with the library's message. */
static int step_fail(step *st, ocal_status s) {
  st->ok = 0;
  snprintf(st->detail, sizeof st->detail, "%s: %.120s", ocal_status_name(s),
           ocal_last_error());
  return 0;
}

#define STEP_CALL(st, expr)                 \
  do {                                      \
    ocal_status s_ = (expr);                \
    if (s_ != OCAL_OK) return step_fail((st), s_); \
  } while (0)

static void report(const char *what, const step *st) {
  printf("  %-22s %-4s %10.3f ms  %s\n", what, st->ok ? "ok" : "FAIL", st->ms, st->detail);
}

/* Host -> device -> host, bit for bit. */
static int demo_transfer(ocal_context ctx, const float *host, float *back, size_t n, step *st) {
  ocal_buffer buf;
  double t0 = now_ms();
  STEP_CALL(st, ocal_buffer_from_host(ctx, OCAL_F32, 1, &n, host, &buf));
  ocal_status s = ocal_buffer_read(buf, 0, n, back, NULL);
  st->ms = now_ms() - t0;
  ocal_buffer_release(buf);
  if (s != OCAL_OK) return step_fail(st, s);
  st->ok = memcmp(host, back, n * sizeof *host) == 0;
  snprintf(st->detail, sizeof st->detail, "%zu floats there and back, %.2f GB/s", n,
           2.0 * (double)n * sizeof(float) / (st->ms * 1e6));
  return st->ok;
}

/* The same fill twice: the first call compiles its kernel or loads it from the disk cache,
 * the second finds it in memory. */
static int demo_cache(ocal_context ctx, size_t n, step *st) {
  ocal_buffer buf;
  STEP_CALL(st, ocal_buffer_create(ctx, OCAL_F32, 1, &n, &buf));
  ocal_cache_stats before = {sizeof before}, after = {sizeof after};
  ocal_context_get_cache_stats(ctx, &before);
  float value = 0.5f;
  double t0 = now_ms();
  ocal_status s = ocal_buffer_fill(buf, &value);
  if (s == OCAL_OK) s = ocal_context_finish(ctx);
  double first = now_ms() - t0;
  value = 1.5f;
  t0 = now_ms();
  if (s == OCAL_OK) s = ocal_buffer_fill(buf, &value);
  if (s == OCAL_OK) s = ocal_context_finish(ctx);
  st->ms = now_ms() - t0;
  ocal_context_get_cache_stats(ctx, &after);
  float probe[3] = {0};
  if (s == OCAL_OK) s = ocal_buffer_read(buf, n / 2, 3, probe, NULL);
  ocal_buffer_release(buf);
  if (s != OCAL_OK) return step_fail(st, s);
  st->ok = probe[0] == 1.5f && probe[1] == 1.5f && probe[2] == 1.5f;
  snprintf(st->detail, sizeof st->detail, "first call %.3f ms (%s), second from memory",
           first, after.compiles > before.compiles ? "compiled"
                  : after.disk_hits > before.disk_hits ? "from the disk cache"
                                                       : "already in memory");
  return st->ok;
}

/* y = relu(2.5 x + y) through ocal_axpy and ocal_unary. */
static int demo_elementwise(ocal_context ctx, const float *x, const float *y, float *back,
                            size_t n, step *st) {
  ocal_buffer bx, by;
  STEP_CALL(st, ocal_buffer_from_host(ctx, OCAL_F32, 1, &n, x, &bx));
  ocal_status s = ocal_buffer_from_host(ctx, OCAL_F32, 1, &n, y, &by);
  if (s != OCAL_OK) {
    ocal_buffer_release(bx);
    return step_fail(st, s);
  }
  double t0 = now_ms();
  s = ocal_axpy(2.5, bx, by);
  if (s == OCAL_OK) s = ocal_unary(OCAL_UNARY_RELU, by, by);
  if (s == OCAL_OK) s = ocal_context_finish(ctx);
  st->ms = now_ms() - t0;
  if (s == OCAL_OK) s = ocal_buffer_read(by, 0, n, back, NULL);
  ocal_buffer_release(bx);
  ocal_buffer_release(by);
  if (s != OCAL_OK) return step_fail(st, s);
  double worst = 0;
  for (size_t i = 0; i < n; i++) {
    double ref = fmax(2.5 * (double)x[i] + (double)y[i], 0.0);
    double err = fabs((double)back[i] - ref) / (2.5 * fabs((double)x[i]) + fabs((double)y[i]));
    if (err > worst) worst = err;
  }
  st->ok = worst < 1e-6;
  snprintf(st->detail, sizeof st->detail,
           "y = relu(2.5 x + y), %zu floats, largest error %.1e (of |2.5 x| + |y|)", n, worst);
  return st->ok;
}

/* A float32 sum against the double-precision host sum. */
static int demo_reduce(ocal_context ctx, const float *x, size_t n, step *st) {
  ocal_buffer bx;
  STEP_CALL(st, ocal_buffer_from_host(ctx, OCAL_F32, 1, &n, x, &bx));
  float got = 0;
  double t0 = now_ms();
  ocal_status s = ocal_reduce_to_host(OCAL_REDUCE_SUM, bx, OCAL_F32, &got);
  st->ms = now_ms() - t0;
  ocal_buffer_release(bx);
  if (s != OCAL_OK) return step_fail(st, s);
  double ref = 0, mass = 0;
  for (size_t i = 0; i < n; i++) ref += (double)x[i], mass += fabs((double)x[i]);
  double err = fabs(got - ref) / mass;
  st->ok = err < 1e-6;
  snprintf(st->detail, sizeof st->detail, "sum of %zu floats %.6f (host %.6f), error %.1e",
           n, got, ref, err);
  return st->ok;
}

/* C = A B on odd shapes, against a host triple loop. */
static int demo_gemm(ocal_context ctx, step *st) {
  enum { M = 203, N = 301, K = 257 };
  size_t sa[2] = {M, K}, sb[2] = {K, N}, sc[2] = {M, N};
  float *a = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * K * N),
        *c = malloc(sizeof(float) * M * N);
  ocal_buffer ba = NULL, bb = NULL, bc = NULL;
  ocal_status s = a && b && c ? OCAL_OK : OCAL_OUT_OF_HOST_MEMORY;
  if (s == OCAL_OK) {
    fill_random(a, (size_t)M * K, 7);
    fill_random(b, (size_t)K * N, 8);
    s = ocal_buffer_from_host(ctx, OCAL_F32, 2, sa, a, &ba);
  }
  if (s == OCAL_OK) s = ocal_buffer_from_host(ctx, OCAL_F32, 2, sb, b, &bb);
  if (s == OCAL_OK) s = ocal_buffer_create(ctx, OCAL_F32, 2, sc, &bc);
  double t0 = now_ms();
  if (s == OCAL_OK) s = ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1.0, ba, bb, 0.0, bc);
  if (s == OCAL_OK) s = ocal_context_finish(ctx);
  st->ms = now_ms() - t0;
  if (s == OCAL_OK) s = ocal_buffer_read(bc, 0, (size_t)M * N, c, NULL);
  double worst = 0;
  for (int i = 0; s == OCAL_OK && i < M; i++)
    for (int j = 0; j < N; j++) {
      double ref = 0, mass = 0;
      for (int k = 0; k < K; k++) {
        ref += (double)a[i * K + k] * (double)b[k * N + j];
        mass += fabs((double)a[i * K + k] * (double)b[k * N + j]);
      }
      double err = fabs((double)c[i * N + j] - ref) / mass;
      if (err > worst) worst = err;
    }
  ocal_buffer_release(ba);
  ocal_buffer_release(bb);
  ocal_buffer_release(bc);
  free(a);
  free(b);
  free(c);
  if (s != OCAL_OK) return step_fail(st, s);
  st->ok = worst < 1e-5;
  snprintf(st->detail, sizeof st->detail,
           "%dx%dx%d through ocal_gemm, largest error %.1e (of the sum of |terms|)", M, N, K,
           worst);
  return st->ok;
}

/* A batch of complex transforms of a length that is not a power of two, against a direct
 * DFT on the host. */
static int demo_fft(ocal_context ctx, step *st) {
  enum { LEN = 1000, BATCH = 3 };
  const size_t total = (size_t)LEN * BATCH;
  float *in = malloc(sizeof(float) * 2 * total), *out = malloc(sizeof(float) * 2 * total);
  ocal_buffer bin = NULL, bout = NULL;
  ocal_fft_plan plan = NULL;
  ocal_status s = in && out ? OCAL_OK : OCAL_OUT_OF_HOST_MEMORY;
  ocal_fft_desc d;
  ocal_fft_desc_init(&d);
  d.lengths[0] = LEN;
  d.batch = BATCH;
  if (s == OCAL_OK) {
    fill_random(in, 2 * total, 9);
    s = ocal_buffer_from_host(ctx, OCAL_C32, 1, &total, in, &bin);
  }
  if (s == OCAL_OK) s = ocal_buffer_create(ctx, OCAL_C32, 1, &total, &bout);
  double t0 = now_ms();
  if (s == OCAL_OK) s = ocal_fft_plan_create(ctx, &d, &plan);
  if (s == OCAL_OK) s = ocal_fft_execute(plan, OCAL_FFT_FORWARD, bin, bout);
  if (s == OCAL_OK) s = ocal_context_finish(ctx);
  st->ms = now_ms() - t0;
  if (s == OCAL_OK) s = ocal_buffer_read(bout, 0, total, out, NULL);
  const char *engine = "?";
  ocal_fft_plan_info info = {sizeof info};
  if (plan && ocal_fft_plan_get_info(plan, &info) == OCAL_OK) engine = info.engine_name;
  double err2 = 0, ref2 = 0;
  for (size_t b = 0; s == OCAL_OK && b < BATCH; b++)
    for (size_t k = 0; k < LEN; k++) {
      double complex acc = 0;
      for (size_t j = 0; j < LEN; j++) {
        const float *v = in + 2 * (b * LEN + j);
        acc += (v[0] + I * v[1]) * cexp(-2.0 * I * M_PI * (double)((j * k) % LEN) / LEN);
      }
      const float *o = out + 2 * (b * LEN + k);
      err2 += pow(cabs(o[0] + I * o[1] - acc), 2);
      ref2 += pow(cabs(acc), 2);
    }
  ocal_fft_plan_release(plan);
  ocal_buffer_release(bin);
  ocal_buffer_release(bout);
  free(in);
  free(out);
  if (s != OCAL_OK) return step_fail(st, s);
  double err = sqrt(err2 / ref2);
  st->ok = err < 1e-5;
  snprintf(st->detail, sizeof st->detail,
           "%d x %d-point C2C through %s (plan included), relative error %.1e", BATCH, LEN,
           engine, err);
  return st->ok;
}

/* A kernel written by ocal from an expression at run time: z = x * y + 0.5 elementwise,
 * then a generated dot product of x and y, both against the host. */
static int demo_generated(ocal_context ctx, const float *x, const float *y, float *back,
                          size_t n, step *st) {
  ocal_buffer bx = NULL, by = NULL, bz = NULL, dot = NULL;
  ocal_gen mul = NULL, red = NULL;
  size_t one = 1;
  float got = 0;
  double t0 = now_ms();
  ocal_status s = ocal_buffer_from_host(ctx, OCAL_F32, 1, &n, x, &bx);
  if (s == OCAL_OK) s = ocal_buffer_from_host(ctx, OCAL_F32, 1, &n, y, &by);
  if (s == OCAL_OK) s = ocal_buffer_create(ctx, OCAL_F32, 1, &n, &bz);
  if (s == OCAL_OK) s = ocal_buffer_create(ctx, OCAL_F32, 1, &one, &dot);
  if (s == OCAL_OK)
    s = ocal_gen_elementwise(ctx, "const float *x, const float *y, float *z",
                             "z[i] = x[i] * y[i] + 0.5f", NULL, &mul);
  if (s == OCAL_OK)
    s = ocal_gen_reduction(ctx, OCAL_F32, "0", "a + b", "x[i] * y[i]",
                           "const float *x, const float *y", NULL, &red);
  ocal_gen_arg args[3] = {OCAL_GEN_BUFFER(bx), OCAL_GEN_BUFFER(by), OCAL_GEN_BUFFER(bz)};
  if (s == OCAL_OK) s = ocal_gen_run(mul, OCAL_GEN_AUTO, 3, args, NULL);
  if (s == OCAL_OK) s = ocal_gen_run(red, OCAL_GEN_AUTO, 2, args, dot);
  if (s == OCAL_OK) s = ocal_context_finish(ctx);
  st->ms = now_ms() - t0;
  if (s == OCAL_OK) s = ocal_buffer_read(bz, 0, n, back, NULL);
  if (s == OCAL_OK) s = ocal_buffer_read(dot, 0, 1, &got, NULL);
  ocal_gen_release(mul);
  ocal_gen_release(red);
  ocal_buffer_release(bx);
  ocal_buffer_release(by);
  ocal_buffer_release(bz);
  ocal_buffer_release(dot);
  if (s != OCAL_OK) return step_fail(st, s);
  double worst = 0, ref = 0, mass = 0;
  for (size_t i = 0; i < n; i++) {
    double p = (double)x[i] * (double)y[i];
    double err = fabs((double)back[i] - (p + 0.5)) / (fabs(p) + 0.5);
    if (err > worst) worst = err;
    ref += p, mass += fabs(p);
  }
  double dot_err = fabs((double)got - ref) / mass;
  st->ok = worst < 1e-6 && dot_err < 1e-6;
  snprintf(st->detail, sizeof st->detail,
           "z = x*y + 0.5 and dot(x, y) from expressions (build included), errors %.1e, %.1e",
           worst, dot_err);
  return st->ok;
}

int tool_demo(const char *selector) {
  ocal_context_options opts;
  ocal_context_options_init(&opts);
  opts.device = selector;
  ocal_context ctx;
  step st = {1, 0, ""};
  double t0 = now_ms();
  ocal_status s = ocal_context_create(&opts, &ctx);
  if (s != OCAL_OK) return tool_fail("creating a context", s);
  st.ms = now_ms() - t0;
  ocal_device_info d = {sizeof d};
  ocal_context_get_device_info(ctx, &d);
  printf("ocal %s demo on %s (%s, %s)\n", ocal_version_string(), d.name,
         ocal_device_type_name(d.type), d.platform_name);
  report("context", &st);

  const size_t n = 1000003;
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *back = malloc(n * sizeof *back);
  if (!x || !y || !back) {
    free(x);
    free(y);
    free(back);
    ocal_context_release(ctx);
    return tool_fail("allocating host memory", OCAL_OUT_OF_HOST_MEMORY);
  }
  fill_random(x, n, 1);
  fill_random(y, n, 2);

  int failures = 0;
#define RUN(name, call)                 \
  do {                                  \
    step st_ = {0, 0, ""};              \
    failures += !(call);                \
    report(name, &st_);                 \
  } while (0)
  RUN("transfer", demo_transfer(ctx, x, back, n, &st_));
  RUN("kernel cache", demo_cache(ctx, n, &st_));
  RUN("elementwise", demo_elementwise(ctx, x, y, back, n, &st_));
  RUN("reduction", demo_reduce(ctx, x, n, &st_));
  RUN("gemm", demo_gemm(ctx, &st_));
  RUN("fft", demo_fft(ctx, &st_));
  RUN("generated kernel", demo_generated(ctx, x, y, back, n, &st_));
#undef RUN
  free(x);
  free(y);
  free(back);
  ocal_context_release(ctx);
  printf("%s\n", failures ? "demo FAILED" : "all checks passed");
  return failures ? 1 : 0;
}
