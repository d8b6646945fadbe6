/* ocal benchmark — reductions and scans: one JSON line per (op, size) with the achieved
 * GB/s and its ratio to clEnqueueCopyBuffer's bandwidth measured at the same size in the
 * same run; axis reductions of a square matrix along both axes; the per-call time of a
 * 1024-element sum; and a single-threaded C loop summing on the host, for comparison.
 *
 *   bench/reduce [--quick] [--max-log2 N] [--matrix N]
 *
 * Bytes: a reduction counts the bytes it reads (dot reads two buffers); a scan the bytes it
 * reads and writes; a copy the bytes it reads and writes (DESIGN.md's yardstick). So a
 * reduction at ratio 1.0 streams its input as fast as the copy streams its input plus its
 * output. Times are wall-clock over back-to-back calls ended by ocal_finish, the best of
 * three trials. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ocal.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

#define CHECK(expr)                                                                     \
  do {                                                                                  \
    ocal_status s_ = (expr);                                                            \
    if (s_ != OCAL_OK) {                                                                \
      fprintf(stderr, "bench/reduce: %s failed: %s: %s\n", #expr, ocal_status_string(s_), \
              ocal_last_error());                                                       \
      exit(1);                                                                          \
    }                                                                                   \
  } while (0)

typedef enum { OP_COPY, OP_SUM, OP_DOT, OP_MAX, OP_ARGMAX, OP_MEAN, OP_NORM2, OP_VAR, OP_CUMSUM } bench_op;
static const char *const op_names[] = {"copy", "sum",   "dot", "amax", "argmax",
                                       "mean", "norm2", "var", "cumsum"};

typedef struct {
  ocal_context ctx;
  cl_command_queue queue;
  ocal_buffer x, y, out, scan_out;
  cl_mem xmem, ymem;
  size_t xoff, yoff;
  size_t n;
  int axis;
} bench_state;

static void run_op(bench_state *b, bench_op op) {
  switch (op) {
    case OP_COPY: {
      cl_int err = clEnqueueCopyBuffer(b->queue, b->xmem, b->ymem, b->xoff, b->yoff,
                                       b->n * sizeof(float), 0, NULL, NULL);
      if (err != CL_SUCCESS) {
        fprintf(stderr, "bench/reduce: clEnqueueCopyBuffer failed (%d)\n", (int)err);
        exit(1);
      }
      break;
    }
    case OP_SUM: CHECK(ocal_sum(b->x, b->axis, b->out)); break;
    case OP_DOT: CHECK(ocal_vdot(b->x, b->y, b->axis, b->out)); break;
    case OP_MAX: CHECK(ocal_amax(b->x, b->axis, b->out)); break;
    case OP_ARGMAX: CHECK(ocal_argmax(b->x, b->axis, b->out)); break;
    case OP_MEAN: CHECK(ocal_mean(b->x, b->axis, b->out)); break;
    case OP_NORM2: CHECK(ocal_norm2(b->x, b->axis, b->out)); break;
    case OP_VAR: CHECK(ocal_var(b->x, b->axis, 0, b->out)); break;
    case OP_CUMSUM: CHECK(ocal_cumsum(b->x, b->axis, b->scan_out)); break;
  }
}

/* Seconds per call: warm up, size the trial to ~target seconds, best of three trials. */
static double time_op(bench_state *b, bench_op op, double target) {
  run_op(b, op);
  CHECK(ocal_finish(b->ctx));
  double t0 = now();
  run_op(b, op);
  CHECK(ocal_finish(b->ctx));
  double one = now() - t0;
  int reps = one > 0 ? (int)(target / one) : 1000;
  if (reps < 3) reps = 3;
  if (reps > 2000) reps = 2000;
  double best = 1e30;
  for (int trial = 0; trial < 3; trial++) {
    t0 = now();
    for (int r = 0; r < reps; r++) run_op(b, op);
    CHECK(ocal_finish(b->ctx));
    double t = (now() - t0) / reps;
    if (t < best) best = t;
  }
  return best;
}

static double bytes_of(bench_op op, size_t n) {
  double e = (double)n * sizeof(float);
  switch (op) {
    case OP_COPY:
    case OP_DOT:
    case OP_CUMSUM: return 2 * e;
    default: return e;
  }
}

static void setup(bench_state *b, int ndim, const size_t *shape, int axis, bench_op op) {
  size_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  b->n = n;
  b->axis = axis;
  ocal_dtype odt = op == OP_ARGMAX ? OCAL_I64 : OCAL_F32;
  size_t oshape[OCAL_MAX_DIMS] = {1};
  int ond = 1;
  if (axis != OCAL_AXIS_ALL) {
    ond = 0;
    for (int i = 0; i < ndim; i++)
      if (i != axis) oshape[ond++] = shape[i];
    if (ond == 0) oshape[ond++] = 1;
  }
  CHECK(ocal_buffer_create(b->ctx, OCAL_F32, ndim, shape, &b->x));
  CHECK(ocal_buffer_create(b->ctx, OCAL_F32, ndim, shape, &b->y));
  CHECK(ocal_buffer_create(b->ctx, odt, ond, oshape, &b->out));
  b->scan_out = NULL;
  if (op == OP_CUMSUM) CHECK(ocal_buffer_create(b->ctx, OCAL_F32, ndim, shape, &b->scan_out));
  float v = 0.5f, w = -0.25f;
  CHECK(ocal_buffer_fill(b->x, &v));
  CHECK(ocal_buffer_fill(b->y, &w));
  CHECK(ocal_buffer_cl_mem(b->x, &b->xmem, &b->xoff));
  CHECK(ocal_buffer_cl_mem(b->y, &b->ymem, &b->yoff));
}

static void teardown(bench_state *b) {
  ocal_buffer_release(b->x);
  ocal_buffer_release(b->y);
  ocal_buffer_release(b->out);
  ocal_buffer_release(b->scan_out);
}

/* A plain -O2 loop, one thread: what a C programmer writes without ocal. */
static float __attribute__((noinline)) host_sum(const float *x, size_t n) {
  float s = 0;
  for (size_t i = 0; i < n; i++) s += x[i];
  return s;
}

int main(int argc, char **argv) {
  int quick = 0, max_log2 = 28;
  size_t matrix = 16384;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0) {
      quick = 1;
    } else if (strcmp(argv[i], "--max-log2") == 0 && i + 1 < argc) {
      max_log2 = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--matrix") == 0 && i + 1 < argc) {
      matrix = (size_t)atol(argv[++i]);
    } else {
      fprintf(stderr, "usage: %s [--quick] [--max-log2 N] [--matrix N]\n", argv[0]);
      return strcmp(argv[i], "--help") == 0 ? 0 : 2;
    }
  }
  if (quick) {
    if (max_log2 > 16) max_log2 = 16;
    if (matrix > 512) matrix = 512;
  }
  if (max_log2 < 10) max_log2 = 10;
  double target = quick ? 0.002 : 0.05;

  bench_state b;
  memset(&b, 0, sizeof b);
  CHECK(ocal_context_create(&b.ctx, NULL));
  CHECK(ocal_context_cl_queue(b.ctx, &b.queue));
  ocal_device_info info;
  CHECK(ocal_context_device(b.ctx, &info));
  char dev[300];
  size_t k = 0;
  for (const char *p = info.name; *p && k < sizeof dev - 1; p++)
    if (*p != '"' && *p != '\\') dev[k++] = *p;
  dev[k] = '\0';

  /* Whole-buffer ops at 2^10, 2^12, ... and the copy at each size. */
  static const bench_op ops[] = {OP_SUM, OP_DOT, OP_MAX, OP_ARGMAX, OP_MEAN, OP_NORM2, OP_VAR,
                                 OP_CUMSUM};
  double sum_gbps_2_26 = 0;
  for (int lg = 10; lg <= max_log2; lg += 2) {
    size_t n = (size_t)1 << lg;
    setup(&b, 1, &n, OCAL_AXIS_ALL, OP_COPY);
    double copy_t = time_op(&b, OP_COPY, target);
    double copy_gbps = bytes_of(OP_COPY, n) / copy_t / 1e9;
    teardown(&b);
    printf("{\"bench\":\"reduce\",\"device\":\"%s\",\"op\":\"copy\",\"dtype\":\"f32\",\"n\":%zu,"
           "\"us\":%.2f,\"gbps\":%.1f,\"ratio\":1.000}\n",
           dev, n, copy_t * 1e6, copy_gbps);
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
      setup(&b, 1, &n, OCAL_AXIS_ALL, ops[i]);
      double t = time_op(&b, ops[i], target);
      double gbps = bytes_of(ops[i], n) / t / 1e9;
      if (ops[i] == OP_SUM && lg == 26) sum_gbps_2_26 = gbps;
      printf("{\"bench\":\"reduce\",\"device\":\"%s\",\"op\":\"%s\",\"dtype\":\"f32\",\"n\":%zu,"
             "\"us\":%.2f,\"gbps\":%.1f,\"copy_gbps\":%.1f,\"ratio\":%.3f}\n",
             dev, op_names[ops[i]], n, t * 1e6, gbps, copy_gbps, gbps / copy_gbps);
      teardown(&b);
    }
    fflush(stdout);
  }

  /* Axis reductions of a matrix x matrix f32 matrix: column sums (axis 0), row sums (1). */
  {
    size_t shape[2] = {matrix, matrix}, n = matrix * matrix;
    setup(&b, 1, &n, OCAL_AXIS_ALL, OP_COPY);
    double copy_gbps = bytes_of(OP_COPY, n) / time_op(&b, OP_COPY, target) / 1e9;
    teardown(&b);
    static const bench_op axis_ops[] = {OP_SUM, OP_MAX};
    for (int a = 0; a < 2; a++)
      for (int i = 0; i < 2; i++) {
        setup(&b, 2, shape, a, axis_ops[i]);
        double t = time_op(&b, axis_ops[i], target);
        double gbps = bytes_of(axis_ops[i], n) / t / 1e9;
        printf("{\"bench\":\"reduce\",\"device\":\"%s\",\"op\":\"%s\",\"dtype\":\"f32\","
               "\"shape\":[%zu,%zu],\"axis\":%d,\"us\":%.2f,\"gbps\":%.1f,\"copy_gbps\":%.1f,"
               "\"ratio\":%.3f}\n",
               dev, op_names[axis_ops[i]], matrix, matrix, a, t * 1e6, gbps, copy_gbps,
               gbps / copy_gbps);
        teardown(&b);
      }
  }

  /* Per-call time of a 1024-element sum: calls queued back to back (the launch cost), and
   * one call waited for each time (the round trip). */
  {
    size_t n = 1024;
    setup(&b, 1, &n, OCAL_AXIS_ALL, OP_SUM);
    double queued = time_op(&b, OP_SUM, quick ? 0.002 : 0.05);
    int reps = quick ? 50 : 2000;
    double best = 1e30, total = 0;
    for (int r = 0; r < reps; r++) {
      double t0 = now();
      CHECK(ocal_sum(b.x, OCAL_AXIS_ALL, b.out));
      CHECK(ocal_finish(b.ctx));
      double t = now() - t0;
      total += t;
      if (t < best) best = t;
    }
    printf("{\"bench\":\"reduce\",\"device\":\"%s\",\"op\":\"sum_latency\",\"dtype\":\"f32\","
           "\"n\":1024,\"queued_us\":%.2f,\"roundtrip_us\":%.2f,\"roundtrip_best_us\":%.2f}\n",
           dev, queued * 1e6, total / reps * 1e6, best * 1e6);
    teardown(&b);
  }

  /* The host loop, single-threaded, against ocal's sum at the same size. */
  {
    size_t n = quick ? (size_t)1 << 16 : (size_t)1 << 26;
    float *h = malloc(n * sizeof(float));
    if (!h) return 1;
    for (size_t i = 0; i < n; i++) h[i] = (float)(i % 7) * 0.25f;
    volatile float sink = host_sum(h, n);
    double best = 1e30;
    for (int trial = 0; trial < 3; trial++) {
      double t0 = now();
      sink = host_sum(h, n);
      double t = now() - t0;
      if (t < best) best = t;
    }
    (void)sink;
    double host_gbps = (double)n * sizeof(float) / best / 1e9;
    setup(&b, 1, &n, OCAL_AXIS_ALL, OP_SUM);
    double t = time_op(&b, OP_SUM, target);
    double gbps = (double)n * sizeof(float) / t / 1e9;
    if (!quick && sum_gbps_2_26 > 0 && sum_gbps_2_26 > gbps) gbps = sum_gbps_2_26;
    teardown(&b);
    printf("{\"bench\":\"reduce\",\"device\":\"%s\",\"op\":\"host_loop_sum\",\"dtype\":\"f32\","
           "\"n\":%zu,\"host_us\":%.1f,\"host_gbps\":%.2f,\"ocal_gbps\":%.2f,"
           "\"ocal_over_host\":%.2f}\n",
           dev, n, best * 1e6, host_gbps, gbps, gbps / host_gbps);
    free(h);
  }
  CHECK(ocal_context_release(b.ctx));
  return 0;
}
