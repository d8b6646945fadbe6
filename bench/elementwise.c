/* elementwise — bandwidth of ocal's elementwise kernels against clEnqueueCopyBuffer measured
 * in the same run, and the per-call time of small operations.
 *
 *   elementwise [--device SELECTOR] [--quick] [--max-log2 N]
 *
 * Bytes counted: every element read plus every element written (a copy of n floats moves
 * 8n bytes, an add 12n). Each figure is the best of 5 timed batches after a warm-up, each
 * batch long enough (about 20 ms or more) to hide the launch and the final clFinish. Prints
 * one JSON object per line. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ocal.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void check(ocal_status s, const char *what) {
  if (s == OCAL_OK) return;
  fprintf(stderr, "elementwise: %s: %s\n", what, ocal_last_error());
  exit(1);
}

typedef struct {
  ocal_context ctx;
  ocal_buffer x, y, z, bias; /* x, y, z: n floats; bias: the last dimension of an {n/1024, 1024} matrix */
  size_t n;
} state;

enum { OP_COPY, OP_ADD, OP_MUL_SCALAR, OP_RELU, OP_EXP, OP_AXPY, OP_BIAS_ADD, OP_COUNT };
static const char *op_names[OP_COUNT] = {"copy", "add", "mul_scalar", "relu", "exp", "axpy",
                                         "bias_add"};
/* Elements moved per element of the output (reads + writes). */
static const int op_traffic[OP_COUNT] = {2, 3, 2, 2, 2, 3, 2};

static void run_op(state *s, int op) {
  switch (op) {
    case OP_COPY: check(ocal_buffer_copy(s->y, s->x), "copy"); break;
    case OP_ADD: check(ocal_binary(OCAL_BINARY_ADD, s->x, s->y, s->z), "add"); break;
    case OP_MUL_SCALAR: check(ocal_binary_scalar(OCAL_BINARY_MUL, s->x, 1.5, s->y), "mul"); break;
    case OP_RELU: check(ocal_unary(OCAL_UNARY_RELU, s->x, s->y), "relu"); break;
    case OP_EXP: check(ocal_unary(OCAL_UNARY_EXP, s->x, s->y), "exp"); break;
    case OP_AXPY: check(ocal_axpy(0.5, s->x, s->y), "axpy"); break;
    case OP_BIAS_ADD: {
      /* y (n/1024 x 1024) = x + bias row: the broadcast path. */
      size_t shape[2] = {s->n / 1024, 1024};
      ocal_buffer xm, ym;
      check(ocal_buffer_view(s->x, 0, 2, shape, &xm), "view");
      check(ocal_buffer_view(s->y, 0, 2, shape, &ym), "view");
      check(ocal_binary(OCAL_BINARY_ADD, xm, s->bias, ym), "bias add");
      ocal_buffer_release(xm);
      ocal_buffer_release(ym);
      break;
    }
  }
}

/* Seconds per call: best of 5 batches of `reps` calls each. */
static double time_op(state *s, int op, int reps) {
  run_op(s, op);
  check(ocal_finish(s->ctx), "finish");
  double best = INFINITY;
  for (int b = 0; b < 5; b++) {
    double t0 = now_s();
    for (int r = 0; r < reps; r++) run_op(s, op);
    check(ocal_finish(s->ctx), "finish");
    double t = (now_s() - t0) / reps;
    if (t < best) best = t;
  }
  return best;
}

int main(int argc, char **argv) {
  const char *device = NULL;
  int max_log2 = 28, min_log2 = 10;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
      device = argv[++i];
    } else if (strcmp(argv[i], "--quick") == 0) {
      max_log2 = 16;
    } else if (strcmp(argv[i], "--max-log2") == 0 && i + 1 < argc) {
      max_log2 = atoi(argv[++i]);
      if (max_log2 < min_log2 || max_log2 > 30) {
        fprintf(stderr, "elementwise: --max-log2 wants %d..30\n", min_log2);
        return 2;
      }
    } else {
      fprintf(stderr, "usage: elementwise [--device SELECTOR] [--quick] [--max-log2 N]\n");
      return strcmp(argv[i], "--help") == 0 ? 0 : 2;
    }
  }
  ocal_context_options o;
  ocal_context_options_init(&o);
  o.device = device;
  state s = {0};
  check(ocal_context_create(&s.ctx, &o), "context");
  ocal_device_info info;
  ocal_context_device(s.ctx, &info);

  size_t nmax = (size_t)1 << max_log2, row = 1024;
  check(ocal_buffer_create(s.ctx, OCAL_F32, 1, &nmax, &s.x), "alloc");
  check(ocal_buffer_create(s.ctx, OCAL_F32, 1, &nmax, &s.y), "alloc");
  check(ocal_buffer_create(s.ctx, OCAL_F32, 1, &nmax, &s.z), "alloc");
  check(ocal_buffer_create(s.ctx, OCAL_F32, 1, &row, &s.bias), "alloc");
  ocal_buffer whole_x = s.x, whole_y = s.y, whole_z = s.z;
  check(ocal_random_uniform(s.x, 1, 0, -1, 1), "random");
  check(ocal_random_uniform(s.y, 2, 0, -1, 1), "random");
  check(ocal_random_uniform(s.bias, 3, 0, -1, 1), "random");

  for (int lg = min_log2; lg <= max_log2; lg += 2) {
    size_t n = (size_t)1 << lg;
    s.n = n;
    check(ocal_buffer_view(whole_x, 0, 1, &n, &s.x), "view");
    check(ocal_buffer_view(whole_y, 0, 1, &n, &s.y), "view");
    check(ocal_buffer_view(whole_z, 0, 1, &n, &s.z), "view");
    /* Enough calls for ~20 ms at the device's likely speed, at least 20. */
    double t1 = time_op(&s, OP_COPY, 3);
    int reps = (int)fmin(fmax(0.02 / t1, 20), 20000);
    double copy_t = time_op(&s, OP_COPY, reps);
    double copy_gbps = op_traffic[OP_COPY] * 4.0 * n / copy_t / 1e9;
    for (int op = 0; op < OP_COUNT; op++) {
      if (op == OP_BIAS_ADD && n < row) continue;
      double t = op == OP_COPY ? copy_t : time_op(&s, op, reps);
      double gbps = op_traffic[op] * 4.0 * n / t / 1e9;
      printf("{\"bench\":\"elementwise\",\"device\":\"%s\",\"op\":\"%s\",\"dtype\":\"f32\","
             "\"n\":%zu,\"us_per_call\":%.3f,\"gbps\":%.1f,\"copy_gbps\":%.1f,"
             "\"ratio_to_copy\":%.3f}\n",
             info.name, op_names[op], n, t * 1e6, gbps, copy_gbps, gbps / copy_gbps);
      fflush(stdout);
    }
    ocal_buffer_release(s.x);
    ocal_buffer_release(s.y);
    ocal_buffer_release(s.z);
  }

  /* Small calls: 1024 elements, asynchronous (enqueue rate) and one call waited for. */
  size_t small = 1024;
  s.n = small;
  check(ocal_buffer_view(whole_x, 0, 1, &small, &s.x), "view");
  check(ocal_buffer_view(whole_y, 0, 1, &small, &s.y), "view");
  check(ocal_buffer_view(whole_z, 0, 1, &small, &s.z), "view");
  const int small_ops[] = {OP_ADD, OP_RELU, OP_AXPY};
  for (int k = 0; k < 3; k++) {
    int op = small_ops[k];
    double async_t = time_op(&s, op, 2000);
    double sync_best = INFINITY;
    for (int r = 0; r < 200; r++) {
      double t0 = now_s();
      run_op(&s, op);
      check(ocal_finish(s.ctx), "finish");
      double t = now_s() - t0;
      if (t < sync_best) sync_best = t;
    }
    printf("{\"bench\":\"elementwise_small\",\"device\":\"%s\",\"op\":\"%s\",\"n\":1024,"
           "\"us_per_call_async\":%.2f,\"us_per_call_sync_best\":%.2f}\n",
           info.name, op_names[op], async_t * 1e6, sync_best * 1e6);
  }
  ocal_buffer_release(s.x);
  ocal_buffer_release(s.y);
  ocal_buffer_release(s.z);
  ocal_buffer_release(whole_x);
  ocal_buffer_release(whole_y);
  ocal_buffer_release(whole_z);
  ocal_buffer_release(s.bias);
  ocal_context_release(s.ctx);
  return 0;
}
