/* The C side of python/bench/mlp_ops.py: the 15 calls of the MLP example's SGD step
 * (examples/mlp_train.c's sgd_step, into buffers made once), each timed on the host over
 * many steps, on a batch of `rows` (0: most calls queue no kernel, so the figures are ocal's
 * checks and dispatch, the floor under Python's). Prints microseconds per step per call.
 *
 *   cc -O2 python/bench/mlp_calls.c $(pkg-config --cflags --libs ocal) -o mlp_calls
 *   ./mlp_calls [steps=1000] [rows=0] [hidden=512]
 */
#include <stdio.h>
#include <stdlib.h>
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
  for (size_t t = 0; s == OCAL_OK && t < steps + 5; t++) {
    if (t == 5) {
      s = ocal_context_finish(ctx);
      for (int i = 0; i < NCALLS; i++) total[i] = 0;
      t0 = now();
    }
    for (int i = 0; s == OCAL_OK && i < NCALLS; i++) {
      double c0 = now();
      switch (i) {
        case 0: s = ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1.0, x, w1, 0.0, h); break;
        case 1: s = ocal_binary(OCAL_BINARY_ADD, h, b1, h); break;
        case 2: s = ocal_unary(OCAL_UNARY_RELU, h, h); break;
        case 3: s = ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1.0, h, w2, 0.0, z); break;
        case 4: s = ocal_binary(OCAL_BINARY_ADD, z, b2, z); break;
        case 5: s = ocal_softmax_cross_entropy(z, y, loss, z); break;
        case 6: s = ocal_gemm(OCAL_NO_TRANS, OCAL_TRANS, 1.0, z, w2, 0.0, dh); break;
        case 7: s = ocal_gemm(OCAL_TRANS, OCAL_NO_TRANS, step, h, z, 1.0, w2); break;
        case 8: s = ocal_sum(z, 0, db2); break;
        case 9: s = ocal_axpy(step, db2, b2); break;
        case 10: s = ocal_binary_scalar(OCAL_BINARY_GT, h, 0.0, mask); break;
        case 11: s = ocal_where(mask, dh, zero, dh); break;
        case 12: s = ocal_gemm(OCAL_TRANS, OCAL_NO_TRANS, step, x, dh, 1.0, w1); break;
        case 13: s = ocal_sum(dh, 0, db1); break;
        default: s = ocal_axpy(step, db1, b1); break;
      }
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
    printf("%-22s %10.2f\n", names[i], 1e6 * total[i] / (double)steps);
    sum += total[i];
  }
  printf("%-22s %10.2f\nstep: queued in %.1f us\n", "sum of the calls", 1e6 * sum / (double)steps,
         1e6 * queued / (double)steps);
  ocal_buffer bufs[] = {x, y, w1, w2, b1, b2, h, z, dh, mask, loss, db1, db2, zero};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) ocal_buffer_release(bufs[i]);
  ocal_context_release(ctx);
  return 0;
}
