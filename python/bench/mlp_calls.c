/* The C side of python/bench/mlp_ops.py: the 15 calls of the MLP example's SGD step
 * (examples/mlp_train.c's sgd_step, into buffers made once), each timed on the host over
 * many steps, on a batch of `rows` (0: most calls queue no kernel, so the figures are ocal's
 * checks and dispatch, the floor under Python's). Prints microseconds per step per call.
 * With `best`, each call is timed alone instead, the best of five loops of `steps` calls
 * (python/bench/step_calls.py's measure).
 *
 *   cc -O2 python/bench/mlp_calls.c $(pkg-config --cflags --libs ocal) -o mlp_calls
 *   ./mlp_calls [steps=1000] [rows=0] [hidden=512] [best]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ocal.h>

#define NCALLS 15

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static ocal_status make(ocal_context ctx, ocal_dtype dt, size_t r, size_t c, int nd, ocal_buffer *b) {
  size_t shape[2] = {r, c};
  return ocal_buffer_zeros(ctx, dt, nd, nd == 1 ? shape + 1 : shape, b);
}

/* The i-th call of the step. */
static ocal_status call(int i, ocal_buffer *b, double step) {
  enum { x, y, w1, w2, b1, b2, h, z, dh, mask, loss, db1, db2, zero };
  switch (i) {
    case 0: return ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1.0, b[x], b[w1], 0.0, b[h]);
    case 1: return ocal_binary(OCAL_BINARY_ADD, b[h], b[b1], b[h]);
    case 2: return ocal_unary(OCAL_UNARY_RELU, b[h], b[h]);
    case 3: return ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1.0, b[h], b[w2], 0.0, b[z]);
    case 4: return ocal_binary(OCAL_BINARY_ADD, b[z], b[b2], b[z]);
    case 5: return ocal_softmax_cross_entropy(b[z], b[y], b[loss], b[z]);
    case 6: return ocal_gemm(OCAL_NO_TRANS, OCAL_TRANS, 1.0, b[z], b[w2], 0.0, b[dh]);
    case 7: return ocal_gemm(OCAL_TRANS, OCAL_NO_TRANS, step, b[h], b[z], 1.0, b[w2]);
    case 8: return ocal_sum(b[z], 0, b[db2]);
    case 9: return ocal_axpy(step, b[db2], b[b2]);
    case 10: return ocal_binary_scalar(OCAL_BINARY_GT, b[h], 0.0, b[mask]);
    case 11: return ocal_where(b[mask], b[dh], b[zero], b[dh]);
    case 12: return ocal_gemm(OCAL_TRANS, OCAL_NO_TRANS, step, b[x], b[dh], 1.0, b[w1]);
    case 13: return ocal_sum(b[dh], 0, b[db1]);
    default: return ocal_axpy(step, b[db1], b[b1]);
  }
}

int main(int argc, char **argv) {
  size_t steps = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;
  size_t rows = argc > 2 ? strtoul(argv[2], NULL, 10) : 0, hid = argc > 3 ? strtoul(argv[3], NULL, 10) : 512;
  static const char *names[NCALLS] = {
      "gemm x w1", "add(h, b1, out=h)", "relu(h, out=h)", "gemm h w2", "add(z, b2, out=z)",
      "softmax_cross_entropy", "gemm dz w2^T", "gemm w2 update", "sum(z, axis=0, out=)", "axpy b2",
      "greater(h, 0, out=)", "where(.., out=dh)", "gemm w1 update", "sum(dh, axis=0, out=)",
      "axpy b1"};
  double total[NCALLS] = {0};
  ocal_context ctx;
  ocal_buffer x, y, w1, w2, b1, b2, h, z, dh, mask, loss, db1, db2, zero;
  size_t one = 1;
  ocal_status s = ocal_context_create(NULL, &ctx);
  if (s == OCAL_OK) s = make(ctx, OCAL_F32, rows, 784, 2, &x);
  if (s == OCAL_OK) s = make(ctx, OCAL_I32, 0, rows, 1, &y);
  if (s == OCAL_OK) s = make(ctx, OCAL_F32, 784, hid, 2, &w1);
  if (s == OCAL_OK) s = make(ctx, OCAL_F32, hid, 10, 2, &w2);
  if (s == OCAL_OK) s = make(ctx, OCAL_F32, 0, hid, 1, &b1);
  if (s == OCAL_OK) s = make(ctx, OCAL_F32, 0, 10, 1, &b2);
  if (s == OCAL_OK) s = make(ctx, OCAL_F32, rows, hid, 2, &h);
  if (s == OCAL_OK) s = make(ctx, OCAL_F32, rows, 10, 2, &z);
  if (s == OCAL_OK) s = make(ctx, OCAL_F32, rows, hid, 2, &dh);
  if (s == OCAL_OK) s = make(ctx, OCAL_U8, rows, hid, 2, &mask);
  if (s == OCAL_OK) s = make(ctx, OCAL_F32, 0, rows, 1, &loss);
  if (s == OCAL_OK) s = make(ctx, OCAL_F32, 0, hid, 1, &db1);
  if (s == OCAL_OK) s = make(ctx, OCAL_F32, 0, 10, 1, &db2);
  if (s == OCAL_OK) s = ocal_buffer_zeros(ctx, OCAL_F32, 1, &one, &zero);
  double step = -0.1 / 256, t0 = 0;
  int best = argc > 4 && strcmp(argv[4], "best") == 0;
  ocal_buffer b[] = {x, y, w1, w2, b1, b2, h, z, dh, mask, loss, db1, db2, zero};
  for (int i = 0; best && s == OCAL_OK && i < NCALLS; i++) {
    total[i] = 1e9;
    for (int r = 0; s == OCAL_OK && r < 5; r++) {
      double c0 = now();
      for (size_t t = 0; s == OCAL_OK && t < steps; t++) s = call(i, b, step);
      double dt = now() - c0;
      if (dt < total[i]) total[i] = dt;
      if (s == OCAL_OK) s = ocal_context_finish(ctx);
    }
  }
  for (size_t t = 0; !best && s == OCAL_OK && t < steps + 5; t++) {
    if (t == 5) {
      s = ocal_context_finish(ctx);
      for (int i = 0; i < NCALLS; i++) total[i] = 0;
      t0 = now();
    }
    for (int i = 0; s == OCAL_OK && i < NCALLS; i++) {
      double c0 = now();
      s = call(i, b, step);
      total[i] += now() - c0;
    }
  }
  double queued = now() - t0;
  if (s == OCAL_OK) s = ocal_context_finish(ctx);
  if (s != OCAL_OK) {
    fprintf(stderr, "mlp_calls: %s\n", ocal_last_error());
    return 1;
  }
  double sum = 0;
  printf("C calls, %zu rows, hidden %zu, %zu steps\n%-22s %10s\n", rows, hid, steps, "call", "us/step");
  for (int i = 0; i < NCALLS; i++) {
    printf("%-22s %10.3f\n", names[i], 1e6 * total[i] / (double)steps);
    sum += total[i];
  }
  printf("%-22s %10.2f\n", "sum of the calls", 1e6 * sum / (double)steps);
  if (!best) printf("step: queued in %.1f us\n", 1e6 * queued / (double)steps);
  for (size_t i = 0; i < sizeof b / sizeof b[0]; i++) ocal_buffer_release(b[i]);
  ocal_context_release(ctx);
  return 0;
}
