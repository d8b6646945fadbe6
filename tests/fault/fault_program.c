/* ocal fault injection — a representative program, run once per injected failure by
 * tests/fault/run.sh.
 *
 * Usage: fault_program SECTION, one of the names in `sections` below. The program creates
 * a context, runs the section's work (every result compared with a double-precision host
 * reference), releases everything, and when a call returned an error, disarms the shim and
 * proves that the process can still work: a new context runs one operation correctly.
 *
 * Exit status: 0 every result correct (no fault, or ocal absorbed it); 10 a call returned
 * an error status with a message, everything was released and the recovery worked;
 * 20 a wrong result with OCAL_OK; 30 the recovery failed; 40 an error status without a
 * message; 50 (with FAULT_NAMED set) a message that does not start with the name of the
 * public call that returned it; 2 usage. Crashes, hangs and leaks the script finds from outside. */
#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ocal.h>

#include "shim.h"

static ocal_context ctx;
static int wrong, no_message, misnamed;

/* Whether message m starts with "NAME: ", NAME the public call that `what` makes (ocal_...,
 * up to its argument list): a fault deep inside a call must still be reported as that
 * call's. Anything else (the program's own helpers) passes. */
static int names_call(const char *what, const char *m) {
  size_t len = strcspn(what, "(");
  if (strncmp(what, "ocal_", 5) != 0) return 1;
  return strncmp(m, what, len) == 0 && m[len] == ':' && m[len + 1] == ' ';
}

static ocal_status failed(const char *what, ocal_status s) {
  const char *m = ocal_last_error();
  fprintf(stderr, "fault-program: %s -> %s: %s\n", what, ocal_status_name(s), m ? m : "");
  if (!m || !*m) {
    no_message = 1;
  } else if (getenv("FAULT_NAMED") && !names_call(what, m)) { /* run.sh sets it */
    fprintf(stderr, "fault-program: MISNAMED: the message does not start with the call's name\n");
    misnamed = 1;
  }
  return s;
}

/* Runs an ocal call; on an error, records it and leaves the section through `out`. */
#define TRY(expr)                                  \
  do {                                             \
    ocal_status try_s = (expr);                    \
    if (try_s != OCAL_OK) {                        \
      st = failed(#expr, try_s);                   \
      goto out;                                    \
    }                                              \
  } while (0)

/* A result that is wrong although every call returned OCAL_OK. */
#define EXPECT(cond, ...)                                       \
  do {                                                          \
    if (!(cond)) {                                              \
      fprintf(stderr, "fault-program: WRONG RESULT: " __VA_ARGS__); \
      fputc('\n', stderr);                                      \
      wrong = 1;                                                \
      goto out;                                                 \
    }                                                           \
  } while (0)

static void *xalloc(size_t bytes) {
  void *p = fault_host_alloc(bytes ? bytes : 1);
  if (!p) {
    fprintf(stderr, "fault-program: out of host memory for the test's own data\n");
    exit(2);
  }
  return p;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
/* Uniform in [-1, 1) (xorshift64*). */
static double urand(void) {
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return (double)((rng * 2685821657736338717ull) >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}
static float *random_floats(size_t n) {
  float *x = xalloc(n * sizeof *x);
  for (size_t i = 0; i < n; i++) x[i] = (float)urand();
  return x;
}

/* Index of the first element of got that differs from want by more than tol (relative to
 * max(1, |want|)), or -1. */
static long mismatch(const float *got, const double *want, size_t n, double tol) {
  for (size_t i = 0; i < n; i++) {
    double d = fabs((double)got[i] - want[i]);
    if (!(d <= tol * fmax(1.0, fabs(want[i])))) return (long)i;
  }
  return -1;
}

static ocal_status create_context(ocal_context *out) {
  ocal_context_options o;
  ocal_context_options_init(&o);
  o.staging = 1; /* blocking transfers of pageable memory go through the staging ring */
  return ocal_context_create(&o, out);
}

/* ---- sections --------------------------------------------------------------------------- */

static ocal_status sec_context(void) {
  ocal_status st = OCAL_OK;
  ocal_context second = NULL;
  ocal_buffer b = NULL;
  ocal_device_info info = {sizeof info}, list[8] = {{sizeof list[0]}};
  size_t count = 0;
  int fp64;
  float v = 3.25f, host[17];
  TRY(ocal_device_list(8, list, &count));
  EXPECT(count >= 1, "ocal_device_list found no device");
  TRY(ocal_context_get_device_info(ctx, &info));
  TRY(ocal_context_get_fp64(ctx, &fp64));
  TRY(ocal_device_select(NULL, &info));
  TRY(create_context(&second));
  TRY(ocal_buffer_create(second, OCAL_F32, 1, (size_t[]){17}, &b));
  TRY(ocal_buffer_fill(b, &v));
  TRY(ocal_buffer_read(b, 0, 17, host, NULL));
  for (int i = 0; i < 17; i++) EXPECT(host[i] == v, "fill: element %d is %g", i, host[i]);
  TRY(ocal_context_finish(second));
out:
  ocal_buffer_release(b);
  ocal_context_release(second);
  return st;
}

/* Completes the user event *arg a tenth of a second later. */
static void *complete_later(void *arg) {
  struct timespec t = {0, 100 * 1000 * 1000};
  nanosleep(&t, NULL);
  clSetUserEventStatus(*(cl_event *)arg, CL_COMPLETE);
  return NULL;
}

static ocal_status sec_buffers(void) {
  ocal_status st = OCAL_OK;
  enum { N = 1037, BIG = 300007 };
  ocal_buffer x = NULL, y = NULL, view = NULL, big = NULL, p1 = NULL, p2 = NULL;
  ocal_context small = NULL;
  ocal_event ev = NULL, held_by = NULL;
  cl_event user = NULL;
  pthread_t completer;
  int completing = 0;
  void *pinned = NULL;
  float *hx = random_floats(N), *hb = random_floats(BIG), *back = xalloc(BIG * sizeof *back);
  float v = -1.5f;
  TRY(ocal_buffer_from_host(ctx, OCAL_F32, 1, (size_t[]){N}, hx, &x));
  TRY(ocal_buffer_read(x, 0, N, back, NULL));
  EXPECT(memcmp(back, hx, N * sizeof *hx) == 0, "from_host then read differs");
  TRY(ocal_buffer_create(ctx, OCAL_F32, 1, (size_t[]){N}, &y));
  TRY(ocal_buffer_copy(x, y));
  TRY(ocal_buffer_view(x, 5, 1, (size_t[]){100}, &view));
  TRY(ocal_buffer_read(view, 0, 100, back, NULL));
  EXPECT(memcmp(back, hx + 5, 100 * sizeof *hx) == 0, "a view reads other elements");
  TRY(ocal_buffer_fill(view, &v));
  TRY(ocal_buffer_write(y, 10, 50, hx + 500, NULL));
  TRY(ocal_buffer_read(y, 0, N, back, NULL));
  for (size_t i = 0; i < N; i++) {
    float want = i >= 10 && i < 60 ? hx[500 + i - 10] : hx[i];
    EXPECT(back[i] == want, "copy + partial write: element %zu", i);
  }
  TRY(ocal_buffer_read(x, 0, N, back, NULL));
  for (size_t i = 0; i < N; i++)
    EXPECT(back[i] == (i >= 5 && i < 105 ? v : hx[i]), "fill of a view: element %zu", i);

  /* Large enough to go through the pinned staging ring (OCAL_STAGING_MIN is set low). */
  TRY(ocal_buffer_create(ctx, OCAL_F32, 1, (size_t[]){BIG}, &big));
  TRY(ocal_buffer_write(big, 0, BIG, hb, NULL));
  memset(back, 0, BIG * sizeof *back);
  TRY(ocal_buffer_read(big, 0, BIG, back, NULL));
  EXPECT(memcmp(back, hb, BIG * sizeof *hb) == 0, "staged write then read differs");

  /* Pinned memory and the transfer queue. */
  TRY(ocal_pinned_alloc(ctx, N * sizeof(float), &pinned));
  memcpy(pinned, hx, N * sizeof(float));
  TRY(ocal_transfer_write(big, 7, N, pinned, 0, NULL, &ev));
  TRY(ocal_event_wait(ev));
  ocal_event_release(ev);
  ev = NULL;
  memset(pinned, 0, N * sizeof(float));
  TRY(ocal_transfer_read(big, 7, N, pinned, 0, NULL, &ev));
  TRY(ocal_event_wait(ev));
  EXPECT(memcmp(pinned, hx, N * sizeof(float)) == 0, "transfer queue round trip differs");
  ocal_event_release(ev);
  ev = NULL;

  /* A read held back by a user event that a thread completes later: its wait must not say
   * OCAL_OK while the read is still queued (a wait that fails without waiting). */
  cl_context clc;
  cl_int cerr;
  TRY(ocal_context_get_cl_context(ctx, &clc));
  user = clCreateUserEvent(clc, &cerr);
  EXPECT(cerr == CL_SUCCESS, "clCreateUserEvent failed (%d)", (int)cerr);
  TRY(ocal_event_from_cl(user, &held_by));
  memset(pinned, 0, N * sizeof(float));
  /* The thread starts first: a read that fails to queue waits for its command before it
   * returns. */
  completing = pthread_create(&completer, NULL, complete_later, &user) == 0;
  if (!completing) clSetUserEventStatus(user, CL_COMPLETE);
  TRY(ocal_transfer_read(big, 7, N, pinned, 1, &held_by, &ev));
  TRY(ocal_event_wait(ev));
  EXPECT(memcmp(pinned, hx, N * sizeof(float)) == 0, "a read that waited for a user event differs");

  /* The pool's out-of-memory path: a context limited to 1 MiB refuses a second 600 KB
   * buffer with OCAL_OUT_OF_DEVICE_MEMORY, and serves it once the first is released. */
  ocal_context_options o;
  ocal_context_options_init(&o);
  o.memory_limit = 1 << 20;
  TRY(ocal_context_create(&o, &small));
  TRY(ocal_buffer_create(small, OCAL_F32, 1, (size_t[]){150000}, &p1));
  ocal_status s2 = ocal_buffer_create(small, OCAL_F32, 1, (size_t[]){150000}, &p2);
  if (s2 != OCAL_OUT_OF_DEVICE_MEMORY) {
    EXPECT(s2 != OCAL_OK, "a buffer over the context's memory limit was created");
    TRY(s2);
  }
  EXPECT(ocal_last_error()[0] != '\0', "the out-of-memory status has no message");
  TRY(ocal_buffer_release(p1));
  p1 = NULL;
  TRY(ocal_buffer_create(small, OCAL_F32, 1, (size_t[]){150000}, &p2));
  TRY(ocal_buffer_fill(p2, &v));
  TRY(ocal_buffer_read(p2, 149000, 1000, back, NULL));
  for (int i = 0; i < 1000; i++) EXPECT(back[i] == v, "buffer after the pool's trim");
  TRY(ocal_memory_trim(small));
out:
  /* Nothing may stay held by the user event: the queues would never drain. */
  if (completing) pthread_join(completer, NULL);
  else if (user) clSetUserEventStatus(user, CL_COMPLETE);
  if (ev) ocal_event_wait(ev);
  ocal_event_release(ev);
  ocal_event_release(held_by);
  if (user) clReleaseEvent(user);
  if (pinned) ocal_pinned_free(ctx, pinned);
  ocal_buffer_release(view);
  ocal_buffer_release(x);
  ocal_buffer_release(y);
  ocal_buffer_release(big);
  ocal_buffer_release(p1);
  ocal_buffer_release(p2);
  ocal_context_release(small);
  free(hx);
  free(hb);
  free(back);
  return st;
}

static ocal_status sec_elementwise(void) {
  ocal_status st = OCAL_OK;
  enum { N = 1037 };
  ocal_buffer x = NULL, y = NULL, z = NULL, r = NULL;
  float *hx = random_floats(N), *hy = random_floats(N), *back = xalloc(N * sizeof *back);
  double *want = xalloc(N * sizeof *want);
  TRY(ocal_buffer_from_host(ctx, OCAL_F32, 1, (size_t[]){N}, hx, &x));
  TRY(ocal_buffer_from_host(ctx, OCAL_F32, 1, (size_t[]){N}, hy, &y));
  TRY(ocal_buffer_create(ctx, OCAL_F32, 1, (size_t[]){N}, &z));
  TRY(ocal_binary(OCAL_BINARY_MUL, x, y, z));
  TRY(ocal_buffer_read(z, 0, N, back, NULL));
  for (size_t i = 0; i < N; i++) want[i] = (double)hx[i] * hy[i];
  EXPECT(mismatch(back, want, N, 1e-6) < 0, "mul");
  TRY(ocal_unary(OCAL_UNARY_EXP, x, z));
  TRY(ocal_buffer_read(z, 0, N, back, NULL));
  for (size_t i = 0; i < N; i++) want[i] = exp(hx[i]);
  EXPECT(mismatch(back, want, N, 1e-5) < 0, "exp");
  TRY(ocal_axpy(2.5, x, y));
  TRY(ocal_buffer_read(y, 0, N, back, NULL));
  for (size_t i = 0; i < N; i++) want[i] = 2.5 * hx[i] + hy[i];
  EXPECT(mismatch(back, want, N, 1e-6) < 0, "axpy");
  TRY(ocal_buffer_create(ctx, OCAL_I32, 1, (size_t[]){N}, &r));
  TRY(ocal_binary_scalar(OCAL_BINARY_MUL, x, 100.0, z));
  TRY(ocal_cast(z, r));
  int32_t *ir = (int32_t *)(void *)back;
  TRY(ocal_buffer_read(r, 0, N, ir, NULL));
  for (size_t i = 0; i < N; i++)
    EXPECT(ir[i] == (int32_t)(hx[i] * 100.0f), "cast: element %zu is %d", i, (int)ir[i]);
  TRY(ocal_arange(3.0, 0.5, z));
  TRY(ocal_buffer_read(z, 0, N, back, NULL));
  for (size_t i = 0; i < N; i++) want[i] = 3.0 + 0.5 * (double)i;
  EXPECT(mismatch(back, want, N, 1e-6) < 0, "arange");
out:
  ocal_buffer_release(x);
  ocal_buffer_release(y);
  ocal_buffer_release(z);
  ocal_buffer_release(r);
  free(hx);
  free(hy);
  free(back);
  free(want);
  return st;
}

static ocal_status sec_reduce(void) {
  ocal_status st = OCAL_OK;
  enum { R = 37, C = 29 };
  ocal_buffer x = NULL, rows = NULL, cols = NULL, one = NULL, idx = NULL;
  float *hx = random_floats(R * C), back[R > C ? R : C];
  double want[R > C ? R : C];
  TRY(ocal_buffer_from_host(ctx, OCAL_F32, 2, (size_t[]){R, C}, hx, &x));
  TRY(ocal_buffer_create(ctx, OCAL_F32, 1, (size_t[]){R}, &rows));
  TRY(ocal_buffer_create(ctx, OCAL_F32, 1, (size_t[]){C}, &cols));
  TRY(ocal_buffer_create(ctx, OCAL_F32, 1, (size_t[]){1}, &one));
  TRY(ocal_buffer_create(ctx, OCAL_I64, 1, (size_t[]){1}, &idx));
  TRY(ocal_sum(x, 1, rows));
  TRY(ocal_buffer_read(rows, 0, R, back, NULL));
  for (int r = 0; r < R; r++) {
    want[r] = 0;
    for (int c = 0; c < C; c++) want[r] += hx[r * C + c];
  }
  EXPECT(mismatch(back, want, R, 1e-5) < 0, "sum along axis 1");
  TRY(ocal_var(x, 0, 1, cols));
  TRY(ocal_buffer_read(cols, 0, C, back, NULL));
  for (int c = 0; c < C; c++) {
    double m = 0, s = 0;
    for (int r = 0; r < R; r++) m += hx[r * C + c];
    m /= R;
    for (int r = 0; r < R; r++) s += (hx[r * C + c] - m) * (hx[r * C + c] - m);
    want[c] = s / (R - 1);
  }
  EXPECT(mismatch(back, want, C, 1e-5) < 0, "var along axis 0");
  TRY(ocal_mean(x, OCAL_AXIS_ALL, one));
  TRY(ocal_buffer_read(one, 0, 1, back, NULL));
  double mean = 0;
  size_t best = 0;
  for (size_t i = 0; i < R * C; i++) {
    mean += hx[i];
    if (hx[i] > hx[best]) best = i;
  }
  want[0] = mean / (R * C);
  EXPECT(mismatch(back, want, 1, 1e-5) < 0, "mean");
  int64_t got_idx = -1;
  TRY(ocal_argmax(x, OCAL_AXIS_ALL, idx));
  TRY(ocal_buffer_read(idx, 0, 1, &got_idx, NULL));
  EXPECT(got_idx == (int64_t)best, "argmax %lld, want %zu", (long long)got_idx, best);
out:
  ocal_buffer_release(x);
  ocal_buffer_release(rows);
  ocal_buffer_release(cols);
  ocal_buffer_release(one);
  ocal_buffer_release(idx);
  free(hx);
  return st;
}

static ocal_status sec_scan(void) {
  ocal_status st = OCAL_OK;
  enum { N = 5003 };
  ocal_buffer x = NULL, y = NULL;
  float *hx = xalloc(N * sizeof *hx), *back = xalloc(N * sizeof *back);
  double *want = xalloc(N * sizeof *want);
  /* Small integers: every prefix sum is exact in f32, whatever the order of the adds. */
  for (size_t i = 0; i < N; i++) hx[i] = (float)(int)(urand() * 4.0);
  TRY(ocal_buffer_from_host(ctx, OCAL_F32, 1, (size_t[]){N}, hx, &x));
  TRY(ocal_buffer_create(ctx, OCAL_F32, 1, (size_t[]){N}, &y));
  TRY(ocal_cumsum(x, 0, y));
  TRY(ocal_buffer_read(y, 0, N, back, NULL));
  double s = 0;
  for (size_t i = 0; i < N; i++) want[i] = s += hx[i];
  EXPECT(mismatch(back, want, N, 0) < 0, "cumsum");
  TRY(ocal_cummax(x, 0, y));
  TRY(ocal_buffer_read(y, 0, N, back, NULL));
  double m = -INFINITY;
  for (size_t i = 0; i < N; i++) want[i] = m = fmax(m, hx[i]);
  EXPECT(mismatch(back, want, N, 0) < 0, "cummax");
out:
  ocal_buffer_release(x);
  ocal_buffer_release(y);
  free(hx);
  free(back);
  free(want);
  return st;
}

static ocal_status sec_softmax(void) {
  ocal_status st = OCAL_OK;
  enum { R = 13, C = 101 };
  ocal_buffer x = NULL, y = NULL;
  float *hx = random_floats(R * C), *back = xalloc(R * C * sizeof *back);
  double *want = xalloc(R * C * sizeof *want);
  TRY(ocal_buffer_from_host(ctx, OCAL_F32, 2, (size_t[]){R, C}, hx, &x));
  TRY(ocal_buffer_create(ctx, OCAL_F32, 2, (size_t[]){R, C}, &y));
  for (int r = 0; r < R; r++) {
    double mx = -INFINITY, s = 0;
    for (int c = 0; c < C; c++) mx = fmax(mx, hx[r * C + c]);
    for (int c = 0; c < C; c++) s += exp(hx[r * C + c] - mx);
    for (int c = 0; c < C; c++) want[r * C + c] = hx[r * C + c] - mx - log(s);
  }
  TRY(ocal_log_softmax(x, -1, y));
  TRY(ocal_buffer_read(y, 0, R * C, back, NULL));
  EXPECT(mismatch(back, want, R * C, 1e-5) < 0, "log_softmax");
  for (int i = 0; i < R * C; i++) want[i] = exp(want[i]);
  TRY(ocal_softmax(x, -1, y));
  TRY(ocal_buffer_read(y, 0, R * C, back, NULL));
  EXPECT(mismatch(back, want, R * C, 1e-5) < 0, "softmax");
out:
  ocal_buffer_release(x);
  ocal_buffer_release(y);
  free(hx);
  free(back);
  free(want);
  return st;
}

static ocal_status sec_random(void) {
  ocal_status st = OCAL_OK;
  enum { N = 40009 };
  ocal_buffer x = NULL;
  float *a = xalloc(N * sizeof *a), *b = xalloc(N * sizeof *b);
  TRY(ocal_buffer_create(ctx, OCAL_F32, 1, (size_t[]){N}, &x));
  TRY(ocal_random_uniform(42, 0, 1.0, 3.0, x));
  TRY(ocal_buffer_read(x, 0, N, a, NULL));
  double mean = 0;
  for (size_t i = 0; i < N; i++) {
    EXPECT(a[i] >= 1.0f && a[i] < 3.0f, "uniform: element %zu is %g", i, a[i]);
    mean += a[i];
  }
  EXPECT(fabs(mean / N - 2.0) < 0.02, "uniform: mean %g", mean / N);
  /* The same stream again from an offset: the same numbers. */
  TRY(ocal_random_uniform(42, 1000, 1.0, 3.0, x));
  TRY(ocal_buffer_read(x, 0, N - 1000, b, NULL));
  EXPECT(memcmp(a + 1000, b, (N - 1000) * sizeof *a) == 0, "uniform: offset stream differs");
  TRY(ocal_random_normal(7, 0, 0.0, 1.0, x));
  TRY(ocal_buffer_read(x, 0, N, a, NULL));
  double m = 0, v = 0;
  for (size_t i = 0; i < N; i++) m += a[i];
  m /= N;
  for (size_t i = 0; i < N; i++) v += (a[i] - m) * (a[i] - m);
  v /= N - 1;
  EXPECT(fabs(m) < 0.03 && fabs(v - 1.0) < 0.05, "normal: mean %g, variance %g", m, v);
out:
  ocal_buffer_release(x);
  free(a);
  free(b);
  return st;
}

static ocal_status sec_gemm(void) {
  ocal_status st = OCAL_OK;
  enum { M = 37, K = 53, N = 41 };
  ocal_buffer a = NULL, b = NULL, c = NULL;
  float *ha = random_floats(M * K), *hb = random_floats(K * N), *hc = random_floats(M * N);
  float *back = xalloc(M * N * sizeof *back);
  double *want = xalloc(M * N * sizeof *want);
  /* A is stored transposed ({K, M}) to reach the transposed path too. */
  TRY(ocal_buffer_from_host(ctx, OCAL_F32, 2, (size_t[]){K, M}, ha, &a));
  TRY(ocal_buffer_from_host(ctx, OCAL_F32, 2, (size_t[]){K, N}, hb, &b));
  TRY(ocal_buffer_from_host(ctx, OCAL_F32, 2, (size_t[]){M, N}, hc, &c));
  TRY(ocal_gemm(OCAL_TRANS, OCAL_NO_TRANS, 1.5, a, b, 0.5, c));
  TRY(ocal_buffer_read(c, 0, M * N, back, NULL));
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double s = 0;
      for (int k = 0; k < K; k++) s += (double)ha[k * M + i] * hb[k * N + j];
      want[i * N + j] = 1.5 * s + 0.5 * hc[i * N + j];
    }
  EXPECT(mismatch(back, want, M * N, 1e-4) < 0, "gemm");
out:
  ocal_buffer_release(a);
  ocal_buffer_release(b);
  ocal_buffer_release(c);
  free(ha);
  free(hb);
  free(hc);
  free(back);
  free(want);
  return st;
}

/* The forward DFT of `rows` rows of n complex numbers (real: n reals each), every bin, in
 * double precision, interleaved into want. */
static void host_dft(const float *x, int real, size_t n, size_t rows, double *want) {
  for (size_t t = 0; t < rows; t++)
    for (size_t k = 0; k < n; k++) {
      double re = 0, im = 0;
      for (size_t j = 0; j < n; j++) {
        double ang = -2.0 * M_PI * (double)((j * k) % n) / (double)n;
        double xr = real ? x[t * n + j] : x[2 * (t * n + j)];
        double xi = real ? 0 : x[2 * (t * n + j) + 1];
        re += xr * cos(ang) - xi * sin(ang);
        im += xr * sin(ang) + xi * cos(ang);
      }
      want[2 * (t * n + k)] = re;
      want[2 * (t * n + k) + 1] = im;
    }
}

/* One C2C transform of `n` points (batch 2) and one R2C of n_real points through `engine`,
 * against a naive DFT. */
static ocal_status fft_through(ocal_fft_engine engine, size_t n, size_t n_real) {
  ocal_status st = OCAL_OK;
  ocal_fft_plan plan = NULL, rplan = NULL;
  ocal_buffer in = NULL, out_b = NULL, rin = NULL, rout = NULL;
  size_t batch = 2, total = 2 * n * batch;
  float *hin = random_floats(total), *back = xalloc(total * sizeof *back);
  double *want = xalloc(total * sizeof *want);
  ocal_fft_desc d;
  ocal_fft_desc_init(&d);
  d.lengths[0] = n;
  d.batch = batch;
  d.engine = engine;
  TRY(ocal_fft_plan_create(ctx, &d, &plan));
  TRY(ocal_buffer_from_host(ctx, OCAL_C32, 1, (size_t[]){n * batch}, hin, &in));
  TRY(ocal_buffer_create(ctx, OCAL_C32, 1, (size_t[]){n * batch}, &out_b));
  TRY(ocal_fft_execute(plan, OCAL_FFT_FORWARD, in, out_b));
  TRY(ocal_buffer_read(out_b, 0, n * batch, back, NULL));
  host_dft(hin, 0, n, batch, want);
  EXPECT(mismatch(back, want, total, 2e-4 * sqrt((double)n)) < 0, "C2C FFT of %zu", n);

  d.lengths[0] = n_real;
  d.batch = 1;
  d.kind = OCAL_FFT_R2C;
  TRY(ocal_fft_plan_create(ctx, &d, &rplan));
  TRY(ocal_buffer_from_host(ctx, OCAL_F32, 1, (size_t[]){n_real}, hin, &rin));
  TRY(ocal_buffer_create(ctx, OCAL_C32, 1, (size_t[]){n_real / 2 + 1}, &rout));
  TRY(ocal_fft_execute(rplan, OCAL_FFT_FORWARD, rin, rout));
  TRY(ocal_buffer_read(rout, 0, n_real / 2 + 1, back, NULL));
  for (size_t k = 0; k <= n_real / 2; k++) {
    double re = 0, im = 0;
    for (size_t j = 0; j < n_real; j++) {
      double ang = -2.0 * M_PI * (double)((j * k) % n_real) / (double)n_real;
      re += hin[j] * cos(ang);
      im += hin[j] * sin(ang);
    }
    want[2 * k] = re;
    want[2 * k + 1] = im;
  }
  EXPECT(mismatch(back, want, n_real + 2, 2e-4 * sqrt((double)n_real)) < 0, "R2C FFT of %zu",
         n_real);
out:
  ocal_fft_plan_release(plan);
  ocal_fft_plan_release(rplan);
  ocal_buffer_release(in);
  ocal_buffer_release(out_b);
  ocal_buffer_release(rin);
  ocal_buffer_release(rout);
  free(hin);
  free(back);
  free(want);
  return st;
}

/* Lengths far from those of issue 19's bug 1 (VkFFT's large work-groups on PoCL). */
static ocal_status sec_fft_vkfft(void) { return fft_through(OCAL_FFT_ENGINE_VKFFT, 60, 126); }
static ocal_status sec_fft_clfft(void) { return fft_through(OCAL_FFT_ENGINE_CLFFT, 60, 126); }
/* OCAL_FFT_FOURSTEP=1 (set by main) sends power-of-two C2C f32 lengths from 2^12 to ocal's
 * own four-step kernels; the R2C part goes to the default engine. The section fft-measure
 * runs it under OCAL_FFT_FOURSTEP=measure (main also removes the measured answers from the
 * kernel cache first, so that every run times the four-step kernels against VkFFT again). */
static ocal_status sec_fft_fourstep(void) {
  return fft_through(OCAL_FFT_ENGINE_DEFAULT, 4096, 64);
}

/* Removes from the cache directory `dir` the records of the FFT engine choice (their key,
 * text after the file's 20-byte header, names them). */
static void forget_fft_choices(const char *dir) {
  DIR *d = dir ? opendir(dir) : NULL;
  if (!d) return;
  for (struct dirent *e; (e = readdir(d));) {
    char path[4096], buf[4096];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    FILE *f = fopen(path, "rb");
    if (!f) continue;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    if (n > 20 && strstr(buf + 20, "fft engine choice: ")) remove(path);
  }
  closedir(d);
}

/* The default engine on lengths of 1: C2C of length 1 (batch 4), C2C of 1 x 12 and R2C of
 * 5 x 1 (a full DFT of 5 reals). ocal runs them without clFFT, whose bake asserted (a failed
 * clGetProgramInfo) or crashed (a failed clEnqueueWriteBuffer) under the injected faults. */
static ocal_status sec_fft_unit(void) {
  ocal_status st = OCAL_OK;
  ocal_fft_plan plan = NULL;
  ocal_buffer in = NULL, out = NULL;
  float *hin = random_floats(24), *back = xalloc(24 * sizeof *back);
  double want[24];
  static const struct {
    int ndim;
    size_t lens[2], batch;
    ocal_fft_kind kind;
  } cases[] = {{1, {1, 0}, 4, OCAL_FFT_C2C}, {2, {1, 12}, 1, OCAL_FFT_C2C},
               {2, {5, 1}, 1, OCAL_FFT_R2C}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    ocal_fft_desc d;
    ocal_fft_desc_init(&d);
    d.ndim = cases[c].ndim;
    d.lengths[0] = cases[c].lens[0];
    d.lengths[1] = cases[c].lens[1];
    d.batch = cases[c].batch;
    d.kind = cases[c].kind;
    size_t n = cases[c].lens[0] * (cases[c].ndim > 1 ? cases[c].lens[1] : 1), rows = d.batch;
    int r2c = d.kind == OCAL_FFT_R2C;
    TRY(ocal_fft_plan_create(ctx, &d, &plan));
    TRY(ocal_buffer_from_host(ctx, r2c ? OCAL_F32 : OCAL_C32, 1, (size_t[]){n * rows}, hin, &in));
    TRY(ocal_buffer_create(ctx, OCAL_C32, 1, (size_t[]){n * rows}, &out));
    TRY(ocal_fft_execute(plan, OCAL_FFT_FORWARD, in, out));
    TRY(ocal_buffer_read(out, 0, n * rows, back, NULL));
    host_dft(hin, r2c, n, rows, want);
    EXPECT(mismatch(back, want, 2 * n * rows, 1e-5) < 0, "FFT case %zu", c);
    ocal_fft_plan_release(plan);
    ocal_buffer_release(in);
    ocal_buffer_release(out);
    plan = NULL, in = out = NULL;
  }
out:
  ocal_fft_plan_release(plan);
  ocal_buffer_release(in);
  ocal_buffer_release(out);
  free(hin);
  free(back);
  return st;
}

static ocal_status sec_gen(void) {
  ocal_status st = OCAL_OK;
  enum { N = 2053 };
  ocal_gen ew = NULL, red = NULL, scan = NULL;
  ocal_buffer x = NULL, y = NULL, one = NULL, s = NULL;
  float *hx = random_floats(N), *hy = random_floats(N), *back = xalloc(N * sizeof *back);
  double *want = xalloc(N * sizeof *want);
  float a = 0.75f;
  TRY(ocal_gen_elementwise(ctx, "float a, const float *x, float *y", "y[i] = a * x[i] + y[i]",
                           NULL, &ew));
  TRY(ocal_buffer_from_host(ctx, OCAL_F32, 1, (size_t[]){N}, hx, &x));
  TRY(ocal_buffer_from_host(ctx, OCAL_F32, 1, (size_t[]){N}, hy, &y));
  TRY(ocal_gen_run(ew, OCAL_GEN_AUTO, 3,
                   (ocal_gen_arg[]){OCAL_GEN_SCALAR(&a), OCAL_GEN_BUFFER(x), OCAL_GEN_BUFFER(y)},
                   NULL));
  TRY(ocal_buffer_read(y, 0, N, back, NULL));
  for (size_t i = 0; i < N; i++) want[i] = 0.75 * hx[i] + hy[i];
  EXPECT(mismatch(back, want, N, 1e-6) < 0, "generated elementwise");

  TRY(ocal_gen_reduction(ctx, OCAL_F32, "0", "a + b", "x[i] * x[i]", "const float *x", NULL,
                         &red));
  TRY(ocal_buffer_create(ctx, OCAL_F32, 1, (size_t[]){1}, &one));
  TRY(ocal_gen_run(red, OCAL_GEN_AUTO, 1, (ocal_gen_arg[]){OCAL_GEN_BUFFER(x)}, one));
  TRY(ocal_buffer_read(one, 0, 1, back, NULL));
  want[0] = 0;
  for (size_t i = 0; i < N; i++) want[0] += (double)hx[i] * hx[i];
  EXPECT(mismatch(back, want, 1, 1e-5) < 0, "generated reduction");

  TRY(ocal_gen_scan(ctx, OCAL_F32, "-INFINITY", "max(a, b)", "x[i]", "const float *x", NULL, 0,
                    &scan));
  TRY(ocal_buffer_create(ctx, OCAL_F32, 1, (size_t[]){N}, &s));
  TRY(ocal_gen_run(scan, OCAL_GEN_AUTO, 1, (ocal_gen_arg[]){OCAL_GEN_BUFFER(x)}, s));
  TRY(ocal_buffer_read(s, 0, N, back, NULL));
  double m = -INFINITY;
  for (size_t i = 0; i < N; i++) want[i] = m = fmax(m, hx[i]);
  EXPECT(mismatch(back, want, N, 0) < 0, "generated scan");
out:
  ocal_gen_release(ew);
  ocal_gen_release(red);
  ocal_gen_release(scan);
  ocal_buffer_release(x);
  ocal_buffer_release(y);
  ocal_buffer_release(one);
  ocal_buffer_release(s);
  free(hx);
  free(hy);
  free(back);
  free(want);
  return st;
}

static ocal_status sec_kernel(void) {
  ocal_status st = OCAL_OK;
  enum { N = 1031 };
  ocal_program prog = NULL, typed = NULL;
  ocal_kernel k = NULL, tk = NULL;
  ocal_buffer x = NULL;
  float *hx = random_floats(N), *back = xalloc(N * sizeof *back);
  double want[N];
  float f = -2.0f;
  uint64_t n = N;
  TRY(ocal_program_create(ctx,
                          "__kernel void scale(__global float *x, float f, ulong n) {\n"
                          "  size_t i = get_global_id(0);\n"
                          "  if (i < n) x[i] = f * x[i] + 1.0f;\n"
                          "}\n",
                          NULL, &prog));
  TRY(ocal_kernel_create(prog, "scale", &k));
  TRY(ocal_buffer_from_host(ctx, OCAL_F32, 1, (size_t[]){N}, hx, &x));
  TRY(ocal_kernel_set_buffer(k, 0, x));
  TRY(ocal_kernel_set_scalar(k, 1, OCAL_F32, &f));
  TRY(ocal_kernel_set_scalar(k, 2, OCAL_U64, &n));
  TRY(ocal_kernel_launch(k, 1, (size_t[]){1088}, (size_t[]){64}));
  TRY(ocal_context_finish(ctx));
  TRY(ocal_buffer_read(x, 0, N, back, NULL));
  for (size_t i = 0; i < N; i++) want[i] = -2.0 * hx[i] + 1.0;
  EXPECT(mismatch(back, want, N, 1e-6) < 0, "raw kernel");
  /* An argument typed by a macro of the build options: whatever the driver tells or keeps,
   * a value of another type must never reach the kernel. */
  TRY(ocal_program_create(ctx,
                          "__kernel void put(__global T *x, const T v) { x[0] = v; }\n",
                          "-DT=float", &typed));
  TRY(ocal_kernel_create(typed, "put", &tk));
  int32_t wrong_type = 7;
  EXPECT(ocal_kernel_set_scalar(tk, 1, OCAL_I32, &wrong_type) != OCAL_OK,
         "an int for argument 'const T v' (-DT=float) was accepted");
out:
  ocal_kernel_release(tk);
  ocal_program_release(typed);
  ocal_kernel_release(k);
  ocal_program_release(prog);
  ocal_buffer_release(x);
  free(hx);
  free(back);
  return st;
}

static const struct {
  const char *name;
  ocal_status (*run)(void);
} sections[] = {
    {"context", sec_context},     {"buffers", sec_buffers},     {"elementwise", sec_elementwise},
    {"reduce", sec_reduce},       {"scan", sec_scan},           {"softmax", sec_softmax},
    {"random", sec_random},       {"gemm-ocal", sec_gemm},      {"gemm-clblast", sec_gemm},
    {"fft-vkfft", sec_fft_vkfft}, {"fft-clfft", sec_fft_clfft}, {"fft-fourstep", sec_fft_fourstep},
    {"fft-measure", sec_fft_fourstep}, {"fft-unit", sec_fft_unit},
    {"gen", sec_gen},             {"kernel", sec_kernel},
};

/* After an error: a fresh context must still run one operation correctly. */
static int recover(void) {
  ocal_context c = NULL;
  ocal_buffer a = NULL, b = NULL;
  float ha[100], hb[100], back[100];
  int ok = 0;
  for (int i = 0; i < 100; i++) ha[i] = (float)i, hb[i] = (float)(3 * i);
  if (create_context(&c) == OCAL_OK &&
      ocal_buffer_from_host(c, OCAL_F32, 1, (size_t[]){100}, ha, &a) == OCAL_OK &&
      ocal_buffer_from_host(c, OCAL_F32, 1, (size_t[]){100}, hb, &b) == OCAL_OK &&
      ocal_binary(OCAL_BINARY_ADD, a, b, b) == OCAL_OK &&
      ocal_buffer_read(b, 0, 100, back, NULL) == OCAL_OK) {
    ok = 1;
    for (int i = 0; i < 100; i++) ok &= back[i] == (float)(4 * i);
  }
  if (!ok) fprintf(stderr, "fault-program: recovery failed: %s\n", ocal_last_error());
  ocal_buffer_release(a);
  ocal_buffer_release(b);
  ocal_context_release(c);
  return ok;
}

int main(int argc, char **argv) {
  size_t count = sizeof sections / sizeof sections[0], which = count;
  for (size_t i = 0; argc == 2 && i < count; i++)
    if (strcmp(argv[1], sections[i].name) == 0) which = i;
  if (which == count) {
    fprintf(stderr, "usage: %s SECTION, one of:", argv[0]);
    for (size_t i = 0; i < count; i++) fprintf(stderr, " %s", sections[i].name);
    fputc('\n', stderr);
    return 2;
  }
  const char *name = sections[which].name;
  if (strcmp(name, "gemm-ocal") == 0) setenv("OCAL_GEMM", "ocal", 1);
  if (strcmp(name, "gemm-clblast") == 0) setenv("OCAL_GEMM", "clblast", 1);
  if (strcmp(name, "fft-fourstep") == 0) setenv("OCAL_FFT_FOURSTEP", "1", 1);
  if (strcmp(name, "fft-measure") == 0) {
    setenv("OCAL_FFT_FOURSTEP", "measure", 1);
    forget_fft_choices(getenv("OCAL_CACHE_DIR"));
  }
  setenv("OCAL_STAGING_MIN", "65536", 0);

  ocal_status st = create_context(&ctx);
  if (st != OCAL_OK)
    failed("create_context", st);
  else
    st = sections[which].run();
  ocal_status rs = ocal_context_release(ctx);
  if (st == OCAL_OK && rs != OCAL_OK) st = failed("ocal_context_release", rs);
  if (wrong) return 20;
  if (st == OCAL_OK) return 0;
  if (no_message) return 40;
  if (misnamed) return 50;
  fault_disarm();
  if (!recover()) return 30;
  fprintf(stderr, "fault-program: %s: the error was reported and the process recovered (%lu "
                  "fault(s) injected)\n", name, fault_injected());
  return 10;
}
