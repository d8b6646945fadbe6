/* The memory-bound suites: copy and transfer bandwidth, elementwise operations, reductions
 * and scans. Each figure is in GB/s with its ratio to the device copy of the same number of
 * floats measured in the same run (docs/design.md, "Yardsticks").
 *
 * Bytes counted: every element read plus every element written (a copy of n floats moves
 * 8n bytes, an add 12n); a reduction counts what it reads (dot reads two buffers), a scan
 * what it reads and writes. So a reduction at ratio 1.0 streams its input as fast as the copy
 * streams its input plus its output. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* Sizes 2^10, 2^12, ... 2^max_log2. */
#define FOR_SIZES(r, lg) for (int lg = 10; lg <= (r)->max_log2; lg += 2)

static double target(const bench_run *r) { return r->quick ? 0.002 : 0.02; }

/* Times operations 0..count-1 at n floats (run(arg) after *op = each), each in GB/s of
 * traffic[op] floats moved per element, beside the copy of n floats. */
static int sweep(bench_run *r, const char *suite, size_t n, int count, const char *const *names,
                 const int *traffic, const char *const *notes, bench_fn run, void *arg, int *op) {
  double copy = bench_copy_gbps(r, n);
  if (copy < 0) return 1;
  char size[48];
  snprintf(size, sizeof size, "%zu", n);
  for (*op = 0; *op < count; (*op)++) {
    double t = bench_time(r, run, arg, target(r));
    if (t < 0) return 1;
    double gbps = traffic[*op] * 4.0 * (double)n / t / 1e9;
    bench_add(r, suite, names[*op], "f32", size, (double)n, "bandwidth", gbps, "GB/s",
              gbps / copy, t * 1e6, notes ? notes[*op] : "");
  }
  return 0;
}

/* The cost of one small call: queued back to back (the enqueue rate) and waited for each time
 * (the round trip a user sees). */
static int small_call(bench_run *r, const char *suite, const char *name, bench_fn run,
                      void *arg) {
  double queued = bench_time(r, run, arg, r->quick ? 0.002 : 0.05), best = INFINITY;
  ocal_status s = OCAL_OK;
  for (int i = 0; i < (r->quick ? 20 : 200) && s == OCAL_OK; i++) {
    double t0 = bench_now();
    s = run(arg);
    if (s == OCAL_OK) s = ocal_context_finish(r->ctx);
    double t = bench_now() - t0;
    if (t < best) best = t;
  }
  if (queued < 0) return 1;
  if (s != OCAL_OK) return bench_fail("small call", s);
  bench_add(r, suite, name, "f32", "1024", 1024, "call_queued", queued * 1e6, "us", -1, -1,
            "calls back to back");
  bench_add(r, suite, name, "f32", "1024", 1024, "call_roundtrip", best * 1e6, "us", -1, -1,
            "one call and ocal_context_finish, best");
  return 0;
}

/* ---- bandwidth: the device copy at every size, and host<->device transfers ------------ */

typedef struct xfer_arg {
  ocal_buffer buf;
  void *host;
  size_t n;
  int to_device;
} xfer_arg;

static ocal_status run_xfer(void *p) {
  xfer_arg *x = p;
  return x->to_device ? ocal_buffer_write(x->buf, 0, x->n, x->host, NULL)
                      : ocal_buffer_read(x->buf, 0, x->n, x->host, NULL);
}

int bench_suite_bandwidth(bench_run *r) {
  char size[48];
  FOR_SIZES(r, lg) {
    size_t n = (size_t)1 << lg;
    double gbps = bench_copy_gbps(r, n);
    if (gbps < 0) return 1;
    snprintf(size, sizeof size, "%zu", n);
    bench_add(r, "bandwidth", "copy", "f32", size, (double)n, "bandwidth", gbps, "GB/s", 1.0,
              8.0 * (double)n / gbps / 1e3, "device to device, bytes read + written");
  }
  /* Transfers of pageable host memory, as a user's malloc'ed array goes. */
  int lg = r->max_log2 < 26 ? r->max_log2 : 26;
  xfer_arg x = {NULL, NULL, (size_t)1 << lg, 1};
  x.host = calloc(x.n, sizeof(float));
  ocal_status s = x.host ? ocal_buffer_create(r->ctx, OCAL_F32, 1, &x.n, &x.buf)
                         : OCAL_OUT_OF_HOST_MEMORY;
  int rc = s != OCAL_OK ? bench_fail("transfer buffer", s) : 0;
  snprintf(size, sizeof size, "%zu", x.n);
  for (int dir = 0; dir < 2 && !rc; dir++) {
    x.to_device = dir == 0;
    double t = bench_time(r, run_xfer, &x, r->quick ? 0.005 : 0.1);
    if (t < 0) {
      rc = 1;
      break;
    }
    bench_add(r, "bandwidth", x.to_device ? "h2d" : "d2h", "f32", size, (double)x.n,
              "bandwidth", 4.0 * (double)x.n / t / 1e9, "GB/s", -1, t * 1e6,
              "pageable host memory, blocking");
  }
  ocal_buffer_release(x.buf);
  free(x.host);
  return rc;
}

/* ---- elementwise ---------------------------------------------------------------------- */

enum { EW_ADD, EW_MUL_SCALAR, EW_RELU, EW_EXP, EW_AXPY, EW_BIAS_ADD, EW_COUNT };
static const char *const ew_names[EW_COUNT] = {"add", "mul_scalar", "relu",
                                               "exp", "axpy",       "bias_add"};
/* Elements moved per element of the output (reads + writes). */
static const int ew_traffic[EW_COUNT] = {3, 2, 2, 2, 3, 2};
static const char *const ew_notes[EW_COUNT] = {"", "", "", "", "", "{n/1024,1024} + {1024}"};

typedef struct ew_arg {
  int op;
  ocal_buffer x, y, z, xm, ym, bias; /* xm, ym: {n/1024, 1024} views for the broadcast */
} ew_arg;

static ocal_status run_ew(void *p) {
  ew_arg *a = p;
  switch (a->op) {
    case EW_ADD: return ocal_binary(OCAL_BINARY_ADD, a->x, a->y, a->z);
    case EW_MUL_SCALAR: return ocal_binary_scalar(OCAL_BINARY_MUL, a->x, 1.5, a->y);
    case EW_RELU: return ocal_unary(OCAL_UNARY_RELU, a->x, a->y);
    case EW_EXP: return ocal_unary(OCAL_UNARY_EXP, a->x, a->y);
    case EW_AXPY: return ocal_axpy(0.5, a->x, a->y);
    default: return ocal_binary(OCAL_BINARY_ADD, a->xm, a->bias, a->ym);
  }
}

static void release_all(ocal_buffer *b, size_t count) {
  for (size_t i = 0; i < count; i++) {
    ocal_buffer_release(b[i]);
    b[i] = NULL;
  }
}

/* Views of the first n elements of whole[0..count). */
static ocal_status views(ocal_buffer *whole, ocal_buffer *view, size_t count, size_t n) {
  ocal_status s = OCAL_OK;
  for (size_t i = 0; i < count && s == OCAL_OK; i++) s = ocal_buffer_view(whole[i], 0, 1, &n, &view[i]);
  return s;
}

int bench_suite_elementwise(bench_run *r) {
  size_t nmax = (size_t)1 << r->max_log2, row = 1024;
  ocal_buffer whole[3] = {NULL, NULL, NULL}, bias = NULL;
  ocal_status s = OCAL_OK;
  for (int i = 0; i < 3 && s == OCAL_OK; i++)
    s = ocal_buffer_create(r->ctx, OCAL_F32, 1, &nmax, &whole[i]);
  if (s == OCAL_OK) s = ocal_buffer_create(r->ctx, OCAL_F32, 1, &row, &bias);
  if (s == OCAL_OK) s = ocal_random_uniform(1, 0, -1, 1, whole[0]);
  if (s == OCAL_OK) s = ocal_random_uniform(2, 0, -1, 1, whole[1]);
  if (s == OCAL_OK) s = ocal_random_uniform(3, 0, -1, 1, bias);
  int rc = s != OCAL_OK ? bench_fail("elementwise buffers", s) : 0;
  FOR_SIZES(r, lg) {
    if (rc) break;
    size_t n = (size_t)1 << lg, mshape[2] = {n / row, row};
    ew_arg a = {0, NULL, NULL, NULL, NULL, NULL, bias};
    ocal_buffer v[3] = {NULL, NULL, NULL};
    s = views(whole, v, 3, n);
    if (s == OCAL_OK) s = ocal_buffer_view(whole[0], 0, 2, mshape, &a.xm);
    if (s == OCAL_OK) s = ocal_buffer_view(whole[1], 0, 2, mshape, &a.ym);
    a.x = v[0], a.y = v[1], a.z = v[2];
    rc = s != OCAL_OK ? bench_fail("views", s)
                      : sweep(r, "elementwise", n, EW_COUNT, ew_names, ew_traffic, ew_notes,
                              run_ew, &a, &a.op);
    release_all(v, 3);
    ocal_buffer_release(a.xm);
    ocal_buffer_release(a.ym);
  }
  /* Small calls: 1024-element operations. */
  static const int small_ops[] = {EW_ADD, EW_RELU, EW_AXPY};
  ew_arg a = {0, NULL, NULL, NULL, NULL, NULL, bias};
  ocal_buffer v[3] = {NULL, NULL, NULL};
  if (!rc && (s = views(whole, v, 3, 1024)) != OCAL_OK) rc = bench_fail("views", s);
  a.x = v[0], a.y = v[1], a.z = v[2];
  for (size_t k = 0; k < sizeof small_ops / sizeof small_ops[0] && !rc; k++) {
    a.op = small_ops[k];
    rc = small_call(r, "elementwise", ew_names[a.op], run_ew, &a);
  }
  release_all(v, 3);
  release_all(whole, 3);
  ocal_buffer_release(bias);
  return rc;
}

/* ---- reductions and scans ------------------------------------------------------------- */

enum { RD_SUM, RD_DOT, RD_AMAX, RD_ARGMAX, RD_MEAN, RD_NORM2, RD_VAR, RD_CUMSUM, RD_COUNT };
static const char *const rd_names[RD_COUNT] = {"sum",  "dot",   "amax", "argmax",
                                               "mean", "norm2", "var",  "cumsum"};
/* Floats of traffic per element: reads (and the scan's writes). */
static const int rd_traffic[RD_COUNT] = {1, 2, 1, 1, 1, 1, 1, 2};

typedef struct rd_arg {
  int op, axis;
  ocal_buffer x, y, out, index_out, scan_out;
} rd_arg;

static ocal_status run_rd(void *p) {
  rd_arg *a = p;
  switch (a->op) {
    case RD_SUM: return ocal_sum(a->x, a->axis, a->out);
    case RD_DOT: return ocal_dot(a->x, a->y, a->axis, a->out);
    case RD_AMAX: return ocal_amax(a->x, a->axis, a->out);
    case RD_ARGMAX: return ocal_argmax(a->x, a->axis, a->index_out);
    case RD_MEAN: return ocal_mean(a->x, a->axis, a->out);
    case RD_NORM2: return ocal_norm2(a->x, a->axis, a->out);
    case RD_VAR: return ocal_var(a->x, a->axis, 0, a->out);
    default: return ocal_cumsum(a->x, a->axis, a->scan_out);
  }
}

/* A plain -O2 loop, one thread: what a C programmer writes without ocal. */
static float __attribute__((noinline)) host_sum(const float *x, size_t n) {
  float s = 0;
  for (size_t i = 0; i < n; i++) s += x[i];
  return s;
}

static int reduce_axes(bench_run *r, ocal_buffer *whole) {
  size_t m = r->quick ? 512 : 16384, shape[2] = {m, m}, n = m * m;
  if (n > ((size_t)1 << r->max_log2)) return 0;
  double copy = bench_copy_gbps(r, n);
  if (copy < 0) return 1;
  char size[48];
  snprintf(size, sizeof size, "%zux%zu", m, m);
  int rc = 0;
  for (int axis = 0; axis < 2 && !rc; axis++) {
    rd_arg a = {RD_SUM, axis, NULL, NULL, NULL, NULL, NULL};
    ocal_status s = ocal_buffer_view(whole[0], 0, 2, shape, &a.x);
    if (s == OCAL_OK) s = ocal_buffer_view(whole[2], 0, 1, &m, &a.out);
    if (s != OCAL_OK) rc = bench_fail("axis views", s);
    static const int axis_ops[] = {RD_SUM, RD_AMAX};
    for (int k = 0; k < 2 && !rc; k++) {
      a.op = axis_ops[k];
      double t = bench_time(r, run_rd, &a, target(r));
      if (t < 0) {
        rc = 1;
        break;
      }
      char op[32];
      snprintf(op, sizeof op, "%s_axis%d", rd_names[a.op], axis);
      double gbps = 4.0 * (double)n / t / 1e9;
      bench_add(r, "reduce", op, "f32", size, (double)n, "bandwidth", gbps, "GB/s",
                gbps / copy, t * 1e6, axis ? "row sums of a square matrix" : "column sums");
    }
    ocal_buffer_release(a.x);
    ocal_buffer_release(a.out);
  }
  return rc;
}

int bench_suite_reduce(bench_run *r) {
  size_t nmax = (size_t)1 << r->max_log2, one = 1;
  /* x, y, scan output, out (room for a row of axis results), index output. */
  ocal_buffer whole[3] = {NULL, NULL, NULL}, out = NULL, index_out = NULL;
  ocal_status s = OCAL_OK;
  for (int i = 0; i < 3 && s == OCAL_OK; i++)
    s = ocal_buffer_create(r->ctx, OCAL_F32, 1, &nmax, &whole[i]);
  if (s == OCAL_OK) s = ocal_buffer_create(r->ctx, OCAL_F32, 1, &one, &out);
  if (s == OCAL_OK) s = ocal_buffer_create(r->ctx, OCAL_I64, 1, &one, &index_out);
  float half = 0.5f, quarter = -0.25f;
  if (s == OCAL_OK) s = ocal_buffer_fill(whole[0], &half);
  if (s == OCAL_OK) s = ocal_buffer_fill(whole[1], &quarter);
  int rc = s != OCAL_OK ? bench_fail("reduction buffers", s) : 0;
  /* OCAL_BENCH_REDUCE=big: only the largest size and the axis reductions (to compare launch
   * shapes through OCAL_REDUCE_TUNE, docs/reduce.md). */
  const char *only = getenv("OCAL_BENCH_REDUCE");
  if (only && strcmp(only, "big") != 0) {
    fprintf(stderr, "ocal bench: OCAL_BENCH_REDUCE is 'big' (or unset), not '%s'\n", only);
    rc = 1;
  }
  const int big = only && strcmp(only, "big") == 0;
  FOR_SIZES(r, lg) {
    if (rc) break;
    if (big && lg + 2 <= r->max_log2) continue;
    size_t n = (size_t)1 << lg;
    ocal_buffer v[3] = {NULL, NULL, NULL};
    rd_arg a = {0, OCAL_AXIS_ALL, NULL, NULL, out, index_out, NULL};
    if ((s = views(whole, v, 3, n)) != OCAL_OK) rc = bench_fail("views", s);
    a.x = v[0], a.y = v[1], a.scan_out = v[2];
    if (!rc)
      rc = sweep(r, "reduce", n, RD_COUNT, rd_names, rd_traffic, NULL, run_rd, &a, &a.op);
    release_all(v, 3);
  }
  if (!rc) rc = reduce_axes(r, whole);

  /* The cost of one 1024-element sum, queued and waited for. */
  ocal_buffer v[3] = {NULL, NULL, NULL};
  if (!rc && !big && (s = views(whole, v, 3, 1024)) != OCAL_OK) rc = bench_fail("views", s);
  rd_arg a = {RD_SUM, OCAL_AXIS_ALL, v[0], v[1], out, index_out, v[2]};
  if (!rc && !big) rc = small_call(r, "reduce", "sum", run_rd, &a);
  release_all(v, 3);

  /* A single-threaded C loop on the host against ocal's sum of the same size. */
  size_t hn = (size_t)1 << (r->max_log2 < 26 ? r->max_log2 : 26);
  float *h = rc || big ? NULL : malloc(hn * sizeof *h);
  if (h) {
    for (size_t i = 0; i < hn; i++) h[i] = (float)(i % 7) * 0.25f;
    volatile float sink = host_sum(h, hn);
    double best = INFINITY;
    for (int trial = 0; trial < 3; trial++) {
      double t0 = bench_now();
      sink = host_sum(h, hn);
      if (bench_now() - t0 < best) best = bench_now() - t0;
    }
    (void)sink;
    char size[48];
    snprintf(size, sizeof size, "%zu", hn);
    bench_add(r, "reduce", "host_loop_sum", "f32", size, (double)hn, "bandwidth",
              4.0 * (double)hn / best / 1e9, "GB/s", -1, best * 1e6,
              "one host thread, plain C loop (not ocal)");
    free(h);
  }
  release_all(whole, 3);
  ocal_buffer_release(out);
  ocal_buffer_release(index_out);
  return rc;
}
