/* ocal benchmark — what the first reduction, scan and generated reduction of a process cost:
 * each runs once on a fresh context (wall-clock time to ocal_context_finish, kernel builds
 * included) and prints the programs its first call compiled or loaded from the disk cache.
 * Run it with an empty OCAL_CACHE_DIR to see cold compiles (and, on PoCL, POCL_KERNEL_CACHE=0
 * so that PoCL's own cache does not hide them); bench/engine_gpu_round.sh does that.
 *
 *   bench/first_calls
 *
 * One line per call: name, milliseconds, programs compiled, programs from the disk cache.
 * Every result is checked against a double-precision host computation: a wrong result
 * fails the program (exit 1). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <ocal.h>

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
  double t0;
} probe;

static void begin(probe *p, ocal_context ctx) {
  p->ctx = ctx;
  CHECK(ocal_context_get_cache_stats(ctx, &p->before));
  p->t0 = now_ms();
}

static void end(probe *p, const char *what, double err, double tol) {
  CHECK(ocal_context_finish(p->ctx));
  double ms = now_ms() - p->t0;
  ocal_cache_stats after;
  CHECK(ocal_context_get_cache_stats(p->ctx, &after));
  int ok = err <= tol;
  if (!ok) failed = 1;
  printf("%-28s %9.1f ms  compiled %llu  from disk %llu  %s (error %.1e)\n", what, ms,
         (unsigned long long)(after.compiles - p->before.compiles),
         (unsigned long long)(after.disk_hits - p->before.disk_hits), ok ? "ok" : "WRONG", err);
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

  ocal_gen_release(red);
  ocal_buffer_release(bx);
  ocal_buffer_release(bout);
  ocal_buffer_release(bscan);
  ocal_context_release(ctx);
  free(x);
  free(back);
  return failed;
}
