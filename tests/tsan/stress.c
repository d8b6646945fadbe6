/* ocal under ThreadSanitizer (docs/defences.md): threads that share one context, and threads
 * with a context each, all at once, mixing every area — buffers and staged transfers,
 * elementwise, reductions, scans, softmax, random numbers, GEMM, FFT plans of both engines,
 * generated kernels, raw programs and kernels — and creating and releasing plans, generators,
 * programs and kernels as they go. Every result is checked against a host reference, so a
 * race that corrupts data fails here even where ThreadSanitizer cannot see it (inside the
 * driver).
 *
 * Usage: stress [ITERATIONS [THREADS]] (default 3 iterations, 4 threads of each kind).
 * Exit status 0 when every check passed; ThreadSanitizer's reports fail the run through
 * TSAN_OPTIONS=halt_on_error=1 or its exit code (tests/defences.sh). */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ocal.h>

static int iterations = 3;
static atomic_int failures;
static ocal_context shared;

/* Every thread starts at once, and the process's first OpenCL use happens inside them:
 * thread 0 creates the shared context while the threads with a context of their own create
 * theirs (issue 19, bug 4: the first platform enumeration must be serialised inside ocal).
 * The other shared-context threads wait until thread 0 has published it. */
static pthread_barrier_t start_line;
static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t shared_ready = PTHREAD_COND_INITIALIZER;
static int shared_state; /* 0: not yet; 1: created; -1: creation failed */

#define CHECK(cond, ...)                                       \
  do {                                                         \
    if (!(cond)) {                                             \
      fprintf(stderr, "stress [thread %d]: ", w->id);          \
      fprintf(stderr, __VA_ARGS__);                            \
      fputc('\n', stderr);                                     \
      atomic_fetch_add(&failures, 1);                          \
      goto out;                                                \
    }                                                          \
  } while (0)

#define OK(expr) \
  CHECK((st = (expr)) == OCAL_OK, "%s: %s: %s", #expr, ocal_status_name(st), ocal_last_error())

typedef struct worker {
  int id;
  int own_context; /* 1: creates and releases its own context every iteration */
  uint64_t rng;
} worker;

static double urand(worker *w) {
  w->rng ^= w->rng >> 12;
  w->rng ^= w->rng << 25;
  w->rng ^= w->rng >> 27;
  return (double)((w->rng * 2685821657736338717ull) >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static int close_to(double got, double want, double tol) {
  return fabs(got - want) <= tol * fmax(1.0, fabs(want));
}

/* One round of every area on ctx. */
static void round_of_work(worker *w, ocal_context ctx, int iter) {
  ocal_status st;
  const size_t n = 1000 + 7 * (size_t)w->id, big = 150001;
  ocal_buffer x = NULL, y = NULL, z = NULL, one = NULL, a = NULL, b = NULL, c = NULL;
  ocal_buffer fin = NULL, fout = NULL, bb = NULL;
  ocal_fft_plan plan = NULL;
  ocal_gen gen = NULL;
  ocal_program prog = NULL;
  ocal_kernel k = NULL;
  float *hx = malloc(n * sizeof *hx), *hy = malloc(n * sizeof *hy), *back = malloc(big * 4);
  float *hb = malloc(big * 4);
  if (!hx || !hy || !back || !hb) {
    fprintf(stderr, "stress: out of host memory\n");
    exit(2);
  }
  for (size_t i = 0; i < n; i++) {
    hx[i] = (float)(int)(urand(w) * 8.0); /* small integers: exact sums in any order */
    hy[i] = (float)urand(w);
  }
  for (size_t i = 0; i < big; i++) hb[i] = (float)i;

  /* Buffers and the elementwise family. */
  OK(ocal_buffer_from_host(ctx, OCAL_F32, 1, &n, hx, &x));
  OK(ocal_buffer_from_host(ctx, OCAL_F32, 1, &n, hy, &y));
  OK(ocal_buffer_create(ctx, OCAL_F32, 1, &n, &z));
  OK(ocal_binary(OCAL_BINARY_ADD, x, y, z));
  OK(ocal_buffer_read(z, 0, n, back, NULL));
  for (size_t i = 0; i < n; i++) CHECK(back[i] == hx[i] + hy[i], "add: element %zu", i);

  /* A reduction and a scan. */
  OK(ocal_buffer_create(ctx, OCAL_F32, 1, (size_t[]){1}, &one));
  OK(ocal_sum(x, OCAL_AXIS_ALL, one));
  OK(ocal_buffer_read(one, 0, 1, back, NULL));
  double s = 0;
  for (size_t i = 0; i < n; i++) s += hx[i];
  CHECK(back[0] == (float)s, "sum %g, want %g", back[0], s);
  OK(ocal_cumsum(x, 0, z));
  OK(ocal_buffer_read(z, 0, n, back, NULL));
  s = 0;
  for (size_t i = 0; i < n; i++) CHECK(back[i] == (float)(s += hx[i]), "cumsum: element %zu", i);

  /* Softmax: every row sums to one. */
  OK(ocal_buffer_view(y, 0, 2, (size_t[]){10, 100}, &bb));
  OK(ocal_buffer_create(ctx, OCAL_F32, 2, (size_t[]){10, 100}, &c));
  OK(ocal_softmax(bb, -1, c));
  OK(ocal_buffer_read(c, 0, 1000, back, NULL));
  for (int r = 0; r < 10; r++) {
    double t = 0;
    for (int j = 0; j < 100; j++) t += back[r * 100 + j];
    CHECK(close_to(t, 1.0, 1e-5), "softmax row %d sums to %g", r, t);
  }
  OK(ocal_buffer_release(bb));
  bb = NULL;
  OK(ocal_buffer_release(c));
  c = NULL;

  /* Random numbers: in range, and the same stream twice. */
  OK(ocal_random_uniform(1234 + (uint64_t)iter, 0, -2.0, 2.0, z));
  OK(ocal_buffer_read(z, 0, n, back, NULL));
  for (size_t i = 0; i < n; i++) CHECK(back[i] >= -2.0f && back[i] < 2.0f, "uniform %zu", i);

  /* GEMM: C = A B. */
  enum { M = 17, K = 19, N = 23 };
  float ha[M * K], hbm[K * N];
  for (int i = 0; i < M * K; i++) ha[i] = (float)urand(w);
  for (int i = 0; i < K * N; i++) hbm[i] = (float)urand(w);
  OK(ocal_buffer_from_host(ctx, OCAL_F32, 2, (size_t[]){M, K}, ha, &a));
  OK(ocal_buffer_from_host(ctx, OCAL_F32, 2, (size_t[]){K, N}, hbm, &b));
  OK(ocal_buffer_create(ctx, OCAL_F32, 2, (size_t[]){M, N}, &c));
  OK(ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1.0, a, b, 0.0, c));
  OK(ocal_buffer_read(c, 0, M * N, back, NULL));
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double t = 0;
      for (int q = 0; q < K; q++) t += (double)ha[i * K + q] * hbm[q * N + j];
      CHECK(close_to(back[i * N + j], t, 1e-4), "gemm (%d, %d)", i, j);
    }

  /* FFT: a plan of one engine or the other, created, run and released. */
  ocal_fft_desc d;
  ocal_fft_desc_init(&d);
  d.lengths[0] = 24 + 2 * (size_t)(w->id % 3);
  d.engine = (w->id + iter) % 2 ? OCAL_FFT_ENGINE_CLFFT : OCAL_FFT_ENGINE_VKFFT;
  size_t len = d.lengths[0];
  OK(ocal_fft_plan_create(ctx, &d, &plan));
  OK(ocal_buffer_create(ctx, OCAL_C32, 1, &len, &fin));
  OK(ocal_buffer_write(fin, 0, len, hy, NULL));
  OK(ocal_buffer_create(ctx, OCAL_C32, 1, &len, &fout));
  OK(ocal_fft_execute(plan, OCAL_FFT_FORWARD, fin, fout));
  OK(ocal_buffer_read(fout, 0, len, back, NULL));
  for (size_t q = 0; q < len; q++) {
    double re = 0, im = 0;
    for (size_t j = 0; j < len; j++) {
      double ang = -2.0 * M_PI * (double)((j * q) % len) / (double)len;
      re += hy[2 * j] * cos(ang) - hy[2 * j + 1] * sin(ang);
      im += hy[2 * j] * sin(ang) + hy[2 * j + 1] * cos(ang);
    }
    CHECK(close_to(back[2 * q], re, 1e-4) && close_to(back[2 * q + 1], im, 1e-4),
          "fft of %zu: bin %zu", len, q);
  }
  OK(ocal_fft_plan_release(plan));
  plan = NULL;

  /* A generated kernel, private to this thread, created, run and released. */
  char body[64];
  snprintf(body, sizeof body, "y[i] = x[i] * %d.0f", w->id + 1);
  OK(ocal_gen_elementwise(ctx, "const float *x, float *y", body, NULL, &gen));
  OK(ocal_gen_run(gen, OCAL_GEN_AUTO, 2, (ocal_gen_arg[]){OCAL_GEN_BUFFER(x), OCAL_GEN_BUFFER(z)},
                  NULL));
  OK(ocal_buffer_read(z, 0, n, back, NULL));
  for (size_t i = 0; i < n; i++) CHECK(back[i] == hx[i] * (float)(w->id + 1), "gen %zu", i);
  OK(ocal_gen_release(gen));
  gen = NULL;

  /* A raw program shared by every thread (one source: the caches are contended). */
  OK(ocal_program_create(ctx,
                         "__kernel void twice(__global float *x) {\n"
                         "  x[get_global_id(0)] *= 2.0f;\n"
                         "}\n",
                         NULL, &prog));
  OK(ocal_kernel_create(prog, "twice", &k));
  OK(ocal_kernel_set_buffer(k, 0, x));
  OK(ocal_kernel_launch(k, 1, &n, NULL));
  OK(ocal_buffer_read(x, 0, n, back, NULL));
  for (size_t i = 0; i < n; i++) CHECK(back[i] == 2.0f * hx[i], "raw kernel %zu", i);

  /* A transfer large enough for the staging ring (OCAL_STAGING_MIN is set low). */
  OK(ocal_buffer_create(ctx, OCAL_F32, 1, &big, &bb));
  OK(ocal_buffer_write(bb, 0, big, hb, NULL));
  memset(back, 0, big * 4);
  OK(ocal_buffer_read(bb, 0, big, back, NULL));
  CHECK(memcmp(back, hb, big * 4) == 0, "staged round trip");
out:
  ocal_kernel_release(k);
  ocal_program_release(prog);
  ocal_gen_release(gen);
  ocal_fft_plan_release(plan);
  ocal_buffer_release(x);
  ocal_buffer_release(y);
  ocal_buffer_release(z);
  ocal_buffer_release(one);
  ocal_buffer_release(a);
  ocal_buffer_release(b);
  ocal_buffer_release(c);
  ocal_buffer_release(fin);
  ocal_buffer_release(fout);
  ocal_buffer_release(bb);
  free(hx);
  free(hy);
  free(hb);
  free(back);
}

static void *work(void *arg) {
  worker *w = arg;
  ocal_status st;
  pthread_barrier_wait(&start_line);
  if (w->id == 0) {
    ocal_context made = NULL;
    st = ocal_context_create(NULL, &made);
    pthread_mutex_lock(&shared_lock);
    shared = made;
    shared_state = st == OCAL_OK ? 1 : -1;
    pthread_cond_broadcast(&shared_ready);
    pthread_mutex_unlock(&shared_lock);
    CHECK(st == OCAL_OK, "the shared context: %s: %s", ocal_status_name(st),
          ocal_last_error());
  } else if (!w->own_context) {
    pthread_mutex_lock(&shared_lock);
    while (shared_state == 0) pthread_cond_wait(&shared_ready, &shared_lock);
    int ready = shared_state == 1;
    pthread_mutex_unlock(&shared_lock);
    if (!ready) goto out; /* thread 0 has reported it */
  }
  for (int iter = 0; iter < iterations; iter++) {
    ocal_context ctx = NULL;
    if (w->own_context)
      OK(ocal_context_create(NULL, &ctx));
    else
      ctx = shared; /* published under shared_lock before this thread went on */
    round_of_work(w, ctx, iter);
    if (w->own_context) OK(ocal_context_release(ctx));
  }
out:
  return NULL;
}

int main(int argc, char **argv) {
  int threads = 4;
  if (argc > 1) iterations = atoi(argv[1]);
  if (argc > 2) threads = atoi(argv[2]);
  if (iterations < 1 || threads < 1 || threads > 64) {
    fprintf(stderr, "usage: %s [ITERATIONS [THREADS]]\n", argv[0]);
    return 2;
  }
  setenv("OCAL_STAGING", "1", 0);
  setenv("OCAL_STAGING_MIN", "65536", 0);
  if (pthread_barrier_init(&start_line, NULL, 2 * (unsigned)threads) != 0) return 2;
  worker *ws = calloc(2 * (size_t)threads, sizeof *ws);
  pthread_t *ts = calloc(2 * (size_t)threads, sizeof *ts);
  if (!ws || !ts) return 2;
  for (int i = 0; i < 2 * threads; i++) {
    ws[i].id = i;
    ws[i].own_context = i >= threads;
    ws[i].rng = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
    if (pthread_create(&ts[i], NULL, work, &ws[i]) != 0) {
      fprintf(stderr, "stress: pthread_create failed\n");
      return 2;
    }
  }
  for (int i = 0; i < 2 * threads; i++) pthread_join(ts[i], NULL);
  pthread_barrier_destroy(&start_line);
  if (shared) ocal_context_release(shared);
  free(ws);
  free(ts);
  int f = atomic_load(&failures);
  printf("stress: %d threads x %d iterations: %s\n", 2 * threads, iterations,
         f ? "FAILED" : "every check passed");
  return f ? 1 : 0;
}
