/* mlp_train_mpi — mlp_train's perceptron trained data-parallel over MPI ranks, one device each.
 *
 * Every rank holds the same weights and takes its share of each global batch (--batch is the
 * global batch, split evenly). Its gradients are sums over its rows, in buckets; each bucket is
 * all-reduced (summed over the ranks) by ocal_mpi_iallreduce as soon as it is computed, so
 * layer 2's gradients travel while layer 1's backward pass still runs on the device. Layer 1's
 * weight gradient, the last product of the backward pass and the largest bucket, is computed
 * in row panels (--panels), each all-reduced while the next panel's product runs: only the
 * last panel's transfer is left after the backward pass. A panel of rows of W1's gradient is
 * x^T dh restricted to some of x's columns, so the batch is also kept transposed (features
 * by rows), where those columns are contiguous rows. The weight updates are ordered after the all-reduces by their events
 * (ocal_context_enqueue_wait), without the host waiting; the requests are finished at the next step.
 * Every rank then applies the same update, W -= lr / B * sum of gradients, so the weights stay
 * identical (the program checks that, bit for bit, at the end).
 *
 * --check N: rank 0 first trains a second copy of the network alone, on whole global batches,
 * and every rank compares the first N data-parallel losses with it (limit 1e-5).
 *
 *   mpirun -np 2 ./mlp_train_mpi [--check 3] [--epochs 2] ...   (--help lists all)
 *
 * With PoCL, give each rank its own POCL_CACHE_DIR (tests/mpi.sh does). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ocal/mpi.h>

#include "mlp_common.h"

#define TRY(call)                                                                         \
  do {                                                                                    \
    ocal_status s_ = (call);                                                              \
    if (s_ != OCAL_OK) {                                                                  \
      fprintf(stderr, "mlp_train_mpi: %s failed: %s\n%s\n", #call, ocal_status_name(s_), \
              ocal_last_error());                                                         \
      return s_;                                                                          \
    }                                                                                     \
  } while (0)

typedef struct options {
  size_t epochs, batch, hidden, train, test, check, bench_steps, panels, bench_alone;
  double lr, min_accuracy;
  uint64_t seed;
} options;

static int rank, nranks;
/* Row panels of layer 1's weight gradient (1: one product, one bucket). */
static size_t npanels = 1;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#define MAX_PANELS 64

/* The gradients of one rank, summed over its rows: one buffer per layer, so that one
 * all-reduce can carry a layer's weights and bias; the w and b buffers are views of it. Layer
 * 1's bucket is also cut into row panels of w1: panel i is w1's rows [lo(i), lo(i + 1)) (the
 * last panel runs on through b1, which follows w1), and panel_w[i] those rows alone. */
typedef struct grads {
  ocal_buffer bucket1, w1, b1; /* dim * hidden + hidden */
  ocal_buffer bucket2, w2, b2; /* hidden * 10 + 10 */
  size_t npanels;
  ocal_buffer panel[MAX_PANELS], panel_w[MAX_PANELS];
  ocal_mpi_request pending[MAX_PANELS + 1]; /* last step's all-reduces, finished at the next */
} grads;

static size_t panel_lo(size_t dim, size_t np, size_t i) { return dim * i / np; }

static ocal_status grads_create(ocal_context ctx, grads *g, size_t dim, size_t hidden,
                                size_t np) {
  size_t n1 = dim * hidden + hidden, n2 = hidden * CLASSES + CLASSES;
  size_t s1[2] = {dim, hidden}, s2[2] = {hidden, CLASSES}, c = CLASSES;
  memset(g, 0, sizeof *g);
  TRY(ocal_buffer_create(ctx, OCAL_F32, 1, &n1, &g->bucket1));
  TRY(ocal_buffer_view(g->bucket1, 0, 2, s1, &g->w1));
  TRY(ocal_buffer_view(g->bucket1, dim * hidden, 1, &hidden, &g->b1));
  TRY(ocal_buffer_create(ctx, OCAL_F32, 1, &n2, &g->bucket2));
  TRY(ocal_buffer_view(g->bucket2, 0, 2, s2, &g->w2));
  TRY(ocal_buffer_view(g->bucket2, hidden * CLASSES, 1, &c, &g->b2));
  g->npanels = np;
  for (size_t i = 0; i < np; i++) {
    size_t lo = panel_lo(dim, np, i), rows = panel_lo(dim, np, i + 1) - lo;
    size_t ws[2] = {rows, hidden}, n = rows * hidden + (i + 1 == np ? hidden : 0);
    TRY(ocal_buffer_view(g->bucket1, lo * hidden, 1, &n, &g->panel[i]));
    TRY(ocal_buffer_view(g->bucket1, lo * hidden, 2, ws, &g->panel_w[i]));
  }
  return OCAL_OK;
}

static void grads_release(grads *g) {
  ocal_buffer b[] = {g->w1, g->b1, g->bucket1, g->w2, g->b2, g->bucket2};
  for (size_t i = 0; i < sizeof b / sizeof b[0]; i++) ocal_buffer_release(b[i]);
  for (size_t i = 0; i < g->npanels; i++) {
    ocal_buffer_release(g->panel[i]);
    ocal_buffer_release(g->panel_w[i]);
  }
}

/* Finishes last step's all-reduces (their device work is already ordered by events). */
static ocal_status finish_pending(grads *g) {
  for (size_t i = 0; i < MAX_PANELS + 1; i++)
    if (g->pending[i]) TRY(ocal_mpi_wait(&g->pending[i]));
  return OCAL_OK;
}

/* Makes device work queued from now on wait for an all-reduce, without the host waiting. */
static ocal_status after(ocal_context ctx, ocal_mpi_request req) {
  ocal_event ev;
  TRY(ocal_mpi_request_event(req, &ev));
  ocal_status s = ocal_context_enqueue_wait(ctx, 1, &ev);
  ocal_event_release(ev);
  return s;
}

/* The rows of x (n x dim) in blocks of b rows, each block transposed (dim x b): a rank's rows
 * of a batch are one block, and a panel of its features contiguous rows of that block. */
static void transpose_blocks(const float *x, size_t n, size_t dim, size_t b, float *out) {
  for (size_t q = 0; q + b <= n; q += b)
    for (size_t r = 0; r < b; r++)
      for (size_t f = 0; f < dim; f++) out[q * dim + f * b + r] = x[(q + r) * dim + f];
}

/* h = relu(x W1 + b1), z = h W2 + b2 (mlp_train's forward pass). */
static ocal_status forward(const net *m, ocal_buffer x, pass *p) {
  TRY(ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1.0, x, m->w1, 0.0, p->h));
  TRY(ocal_binary(OCAL_BINARY_ADD, p->h, m->b1, p->h));
  TRY(ocal_unary(OCAL_UNARY_RELU, p->h, p->h));
  TRY(ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1.0, p->h, m->w2, 0.0, p->z));
  TRY(ocal_binary(OCAL_BINARY_ADD, p->z, m->b2, p->z));
  return OCAL_OK;
}

/* One SGD step on this rank's rows (x, y; xt the same rows transposed, used for the panels)
 * of a global batch of B rows: gradients summed over the rows, all-reduced per bucket while
 * the backward pass goes on (mpi NULL: one rank alone, x the whole batch), then
 * W -= lr / B * gradient. Leaves each row's loss in p->loss. */
static ocal_status step(ocal_mpi mpi, ocal_context ctx, net *m, grads *g, ocal_buffer x,
                        ocal_buffer xt, ocal_buffer y, pass *p, size_t B, double lr) {
  double scale = -lr / (double)B;
  TRY(finish_pending(g));
  TRY(forward(m, x, p));
  TRY(ocal_softmax_cross_entropy(p->z, y, p->loss, p->z)); /* z becomes dz */
  /* Layer 2's gradients, then off they go. */
  TRY(ocal_gemm(OCAL_TRANS, OCAL_NO_TRANS, 1.0, p->h, p->z, 0.0, g->w2));
  TRY(ocal_sum(p->z, 0, g->b2));
  if (mpi) TRY(ocal_mpi_iallreduce(mpi, g->bucket2, OCAL_MPI_SUM, &g->pending[0]));
  /* Layer 1's backward pass meanwhile, with the old W2 (its update comes after). The
   * all-reduce starts after the kernels queued before it (layer 2's gradients), and these
   * kernels do not wait for it: it runs on libocal-mpi's queues and thread. */
  TRY(ocal_gemm(OCAL_NO_TRANS, OCAL_TRANS, 1.0, p->z, m->w2, 0.0, p->dh));
  TRY(ocal_binary_scalar(OCAL_BINARY_GT, p->h, 0.0, p->mask));
  TRY(ocal_where(p->mask, p->dh, m->zero, p->dh));
  if (!mpi || g->npanels == 1 || !xt) {
    TRY(ocal_gemm(OCAL_TRANS, OCAL_NO_TRANS, 1.0, x, p->dh, 0.0, g->w1));
    TRY(ocal_sum(p->dh, 0, g->b1));
    if (mpi) TRY(ocal_mpi_iallreduce(mpi, g->bucket1, OCAL_MPI_SUM, &g->pending[1]));
  } else {
    /* b1 first: it travels with the last panel. Panel i = rows of x^T (xt's rows) times dh. */
    TRY(ocal_sum(p->dh, 0, g->b1));
    size_t shape[OCAL_MAX_DIMS];
    int nd;
    TRY(ocal_buffer_get_shape(xt, &nd, shape));
    size_t D = shape[0], rows = shape[1];
    for (size_t i = 0; i < g->npanels; i++) {
      size_t lo = panel_lo(D, g->npanels, i), xs[2] = {panel_lo(D, g->npanels, i + 1) - lo, rows};
      ocal_buffer xp;
      TRY(ocal_buffer_view(xt, lo * rows, 2, xs, &xp));
      ocal_status s = ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1.0, xp, p->dh, 0.0, g->panel_w[i]);
      ocal_buffer_release(xp);
      TRY(s);
      TRY(ocal_mpi_iallreduce(mpi, g->panel[i], OCAL_MPI_SUM, &g->pending[1 + i]));
    }
  }
  /* The updates wait (on the device) for the summed gradients. */
  if (mpi) TRY(after(ctx, g->pending[0]));
  TRY(ocal_axpy(scale, g->w2, m->w2));
  TRY(ocal_axpy(scale, g->b2, m->b2));
  for (size_t i = 1; mpi && i <= MAX_PANELS; i++)
    if (g->pending[i]) TRY(after(ctx, g->pending[i]));
  TRY(ocal_axpy(scale, g->w1, m->w1));
  TRY(ocal_axpy(scale, g->b1, m->b1));
  return OCAL_OK;
}

/* Held-out loss and accuracy (every rank computes the same: the weights are the same). */
static ocal_status evaluate(const net *m, ocal_buffer x, ocal_buffer y, pass *p, ocal_buffer pred,
                            ocal_buffer hit, double *loss, double *accuracy) {
  TRY(forward(m, x, p));
  TRY(ocal_softmax_cross_entropy(p->z, y, p->loss, NULL));
  TRY(ocal_argmax(p->z, 1, pred));
  TRY(ocal_binary(OCAL_BINARY_EQ, pred, y, hit));
  uint64_t hits;
  float mean_loss;
  TRY(ocal_reduce_to_host(OCAL_REDUCE_SUM, hit, OCAL_U64, &hits));
  TRY(ocal_reduce_to_host(OCAL_REDUCE_MEAN, p->loss, OCAL_F32, &mean_loss));
  *loss = mean_loss;
  *accuracy = 100.0 * (double)hits / (double)p->rows;
  return OCAL_OK;
}

/* The summed loss of this rank's rows of the last step, summed over the ranks, over B. */
static ocal_status global_loss(ocal_buffer loss, ocal_buffer one, size_t B, double *out) {
  float mine;
  TRY(ocal_sum(loss, OCAL_AXIS_ALL, one));
  TRY(ocal_buffer_read(one, 0, 1, &mine, NULL));
  double local = mine, total = 0;
  MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  *out = total / (double)B;
  return OCAL_OK;
}

static ocal_status run(ocal_mpi mpi, dataset *train, dataset *test, const options *o, int *ok) {
  ocal_context ctx;
  TRY(ocal_mpi_get_context(mpi, &ctx));
  size_t D = train->dim, B = o->batch, b = B / (size_t)nranks, xs[2] = {b, D}, xB[2] = {B, D};
  size_t trs[2] = {train->n, D}, tes[2] = {test->n, D}, one = 1, xts[2] = {D, b};
  net m;
  grads g;
  pass p, ev;
  ocal_buffer xtrain, xtrain_t, ytrain, xtest, ytest, pred, hit, loss1, xb = NULL, yb = NULL,
      xtb = NULL;
  TRY(net_create(ctx, &m, D, o->hidden));
  TRY(grads_create(ctx, &g, D, o->hidden, npanels));
  float *xt_host = malloc(train->n * D * sizeof *xt_host);
  if (!xt_host) return OCAL_OUT_OF_HOST_MEMORY;
  transpose_blocks(train->x, train->n, D, b, xt_host);
  TRY(pass_create(ctx, &p, b, o->hidden));
  TRY(pass_create(ctx, &ev, test->n, o->hidden));
  TRY(ocal_buffer_from_host(ctx, OCAL_F32, 2, trs, train->x, &xtrain));
  TRY(ocal_buffer_from_host(ctx, OCAL_F32, 2, trs, xt_host, &xtrain_t));
  TRY(ocal_buffer_from_host(ctx, OCAL_I64, 1, &train->n, train->y, &ytrain));
  TRY(ocal_buffer_from_host(ctx, OCAL_F32, 2, tes, test->x, &xtest));
  TRY(ocal_buffer_from_host(ctx, OCAL_I64, 1, &test->n, test->y, &ytest));
  TRY(ocal_buffer_create(ctx, OCAL_I64, 1, &test->n, &pred));
  TRY(ocal_buffer_create(ctx, OCAL_U8, 1, &test->n, &hit));
  TRY(ocal_buffer_create(ctx, OCAL_F32, 1, &one, &loss1));
  *ok = 1;
  size_t steps = train->n / B;

  /* Rank 0 trains alone on whole batches, the reference of the data-parallel losses. */
  double *ref = calloc(o->check + 1, sizeof *ref);
  if (!ref) return OCAL_OUT_OF_HOST_MEMORY;
  if (o->check > 0 && rank == 0) {
    net r;
    grads rg;
    pass rp;
    TRY(net_create(ctx, &r, D, o->hidden));
    TRY(grads_create(ctx, &rg, D, o->hidden, 1));
    TRY(pass_create(ctx, &rp, B, o->hidden));
    TRY(init_weights(&r, o->seed));
    for (size_t t = 0; t < o->check; t++) {
      TRY(ocal_buffer_view(xtrain, (t % steps) * B * D, 2, xB, &xb));
      TRY(ocal_buffer_view(ytrain, (t % steps) * B, 1, &B, &yb));
      TRY(step(NULL, ctx, &r, &rg, xb, NULL, yb, &rp, B, o->lr));
      float sum;
      TRY(ocal_sum(rp.loss, OCAL_AXIS_ALL, loss1));
      TRY(ocal_buffer_read(loss1, 0, 1, &sum, NULL));
      ref[t] = sum / (double)B;
      ocal_buffer_release(xb);
      ocal_buffer_release(yb);
    }
    pass_release(&rp);
    grads_release(&rg);
    ocal_buffer bufs[] = {r.w1, r.b1, r.w2, r.b2, r.zero};
    for (size_t i = 0; i < 5; i++) ocal_buffer_release(bufs[i]);
  }
  MPI_Bcast(ref, (int)o->check, MPI_DOUBLE, 0, MPI_COMM_WORLD);

  /* Data-parallel: batch t's rows [t B + rank b, t B + rank b + b). */
  TRY(init_weights(&m, o->seed));
  double worst = 0, accuracy = 0;
  for (size_t t = 0; t < o->check; t++) {
    size_t first = (t % steps) * B + (size_t)rank * b;
    TRY(ocal_buffer_view(xtrain, first * D, 2, xs, &xb));
    TRY(ocal_buffer_view(xtrain_t, first * D, 2, xts, &xtb));
    TRY(ocal_buffer_view(ytrain, first, 1, &b, &yb));
    TRY(step(mpi, ctx, &m, &g, xb, xtb, yb, &p, B, o->lr));
    double l;
    TRY(global_loss(p.loss, loss1, B, &l));
    double diff = fabs(l - ref[t]);
    if (!(diff <= worst)) worst = diff;
    if (rank == 0)
      printf("  step %zu: loss %.7f on %d ranks, %.7f on one\n", t + 1, l, nranks, ref[t]);
    ocal_buffer_release(xb);
    ocal_buffer_release(xtb);
    ocal_buffer_release(yb);
  }
  if (o->check > 0) {
    *ok = worst <= 1e-5;
    if (rank == 0)
      printf("check: %zu steps on %d ranks %s (largest loss difference %.2e, limit 1e-5)\n",
             o->check, nranks, *ok ? "equal one rank's" : "DIFFER from one rank's", worst);
  }

  /* Training from the seed's weights. Every rank shuffles alike, so the batches agree. */
  TRY(init_weights(&m, o->seed));
  TRY(finish_pending(&g));
  uint64_t rng = o->seed ^ 0x5eed5eed5eed5eedull;
  float *tmp = malloc(D * sizeof *tmp);
  if (!tmp) return OCAL_OUT_OF_HOST_MEMORY;
  ocal_buffer loss_sum;
  size_t bb = b;
  TRY(ocal_buffer_create(ctx, OCAL_F32, 1, &bb, &loss_sum));
  for (size_t e = 1; e <= o->epochs; e++) {
    double start = now();
    float zero = 0.0f;
    for (size_t i = train->n - 1; i > 0; i--) { /* Fisher-Yates, as mlp_train */
      size_t j = (size_t)(next_u64(&rng) % (i + 1));
      memcpy(tmp, train->x + i * D, D * sizeof *tmp);
      memcpy(train->x + i * D, train->x + j * D, D * sizeof *tmp);
      memcpy(train->x + j * D, tmp, D * sizeof *tmp);
      int64_t y = train->y[i];
      train->y[i] = train->y[j];
      train->y[j] = y;
    }
    TRY(ocal_buffer_write(xtrain, 0, train->n * D, train->x, NULL));
    transpose_blocks(train->x, train->n, D, b, xt_host);
    TRY(ocal_buffer_write(xtrain_t, 0, train->n * D, xt_host, NULL));
    TRY(ocal_buffer_write(ytrain, 0, train->n, train->y, NULL));
    TRY(ocal_buffer_fill(loss_sum, &zero));
    for (size_t t = 0; t < steps; t++) {
      size_t first = t * B + (size_t)rank * b;
      TRY(ocal_buffer_view(xtrain, first * D, 2, xs, &xb));
      TRY(ocal_buffer_view(xtrain_t, first * D, 2, xts, &xtb));
      TRY(ocal_buffer_view(ytrain, first, 1, &b, &yb));
      TRY(step(mpi, ctx, &m, &g, xb, xtb, yb, &p, B, o->lr));
      TRY(ocal_axpy(1.0, p.loss, loss_sum));
      ocal_buffer_release(xb);
      ocal_buffer_release(xtb);
      ocal_buffer_release(yb);
    }
    double train_loss, test_loss;
    TRY(finish_pending(&g));
    TRY(global_loss(loss_sum, loss1, steps * B, &train_loss));
    TRY(evaluate(&m, xtest, ytest, &ev, pred, hit, &test_loss, &accuracy));
    if (rank == 0)
      printf("epoch %zu: training loss %.4f, held-out loss %.4f, accuracy %.2f%% (%.2f s)\n", e,
             train_loss, test_loss, accuracy, now() - start);
    fflush(stdout);
  }
  if (o->epochs > 0 && accuracy < o->min_accuracy) {
    if (rank == 0) printf("accuracy %.2f%% is below the required %.2f%%\n", accuracy, o->min_accuracy);
    *ok = 0;
  }

  /* The ranks applied the same all-reduced updates: their weights must agree bit for bit. */
  float ws[2];
  TRY(ocal_reduce_to_host(OCAL_REDUCE_SUM, m.w1, OCAL_F32, &ws[0]));
  TRY(ocal_reduce_to_host(OCAL_REDUCE_SUM, m.w2, OCAL_F32, &ws[1]));
  double wsum[2] = {ws[0], ws[1]}, lo[2], hi[2];
  MPI_Allreduce(wsum, lo, 2, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(wsum, hi, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  int same = lo[0] == hi[0] && lo[1] == hi[1];
  if (rank == 0)
    printf("weights on the %d ranks: %s\n", nranks, same ? "identical" : "DIFFERENT");
  if (!same) *ok = 0;

  /* Step time at this global batch: the steps queued back to back, timed to the last. */
  if (o->bench_steps > 0) {
    TRY(ocal_buffer_view(xtrain, (size_t)rank * b * D, 2, xs, &xb));
    TRY(ocal_buffer_view(xtrain_t, (size_t)rank * b * D, 2, xts, &xtb));
    TRY(ocal_buffer_view(ytrain, (size_t)rank * b, 1, &b, &yb));
    for (int w = 0; w < 3; w++) TRY(step(mpi, ctx, &m, &g, xb, xtb, yb, &p, B, o->lr));
    TRY(finish_pending(&g));
    TRY(ocal_context_finish(ctx));
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    for (size_t t = 0; t < o->bench_steps; t++)
      TRY(step(o->bench_alone ? NULL : mpi, ctx, &m, &g, xb, xtb, yb, &p, B, o->lr));
    TRY(finish_pending(&g));
    TRY(ocal_context_finish(ctx));
    double us = 1e6 * (now() - t0) / (double)o->bench_steps;
    if (rank == 0)
      printf("data-parallel step: %.1f us at global batch %zu (%zu per rank, %d ranks, %zu "
             "panels%s)\n", us, B, b, nranks, g.npanels, o->bench_alone ? ", no all-reduces" : "");
    ocal_buffer_release(xb);
    ocal_buffer_release(xtb);
    ocal_buffer_release(yb);
  }

  free(tmp);
  free(ref);
  free(xt_host);
  ocal_buffer bufs[] = {xtrain, xtrain_t, ytrain, xtest, ytest, pred, hit, loss1, loss_sum,
                        m.w1, m.b1, m.w2, m.b2, m.zero};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) ocal_buffer_release(bufs[i]);
  grads_release(&g);
  pass_release(&p);
  pass_release(&ev);
  return OCAL_OK;
}

static void usage(void) {
  printf("usage: mpirun -np P mlp_train_mpi [options]\n"
         "Trains mlp_train's perceptron data-parallel: each rank a share of every batch on its\n"
         "own device, gradients all-reduced per layer while the backward pass runs.\n"
         "  --epochs N        passes over the training data (default 3)\n"
         "  --batch N         global samples per SGD step, a multiple of P (default 256)\n"
         "  --lr X            learning rate (default 0.1)\n"
         "  --hidden N        hidden units (default 512)\n"
         "  --train N         synthetic training samples (default 10240)\n"
         "  --test N          held-out samples (default 2000)\n"
         "  --seed N          seed of the data, weights and shuffles (default 1)\n"
         "  --check N         compare the first N losses with one rank's on whole batches\n"
         "                    (limit 1e-5; default 2, 0 skips)\n"
         "  --min-accuracy P  exit 1 when the final held-out accuracy is below P (default 90)\n"
         "  --bench-steps N   after training, time N steps\n"
         "  --bench-alone 1   the timed steps without the all-reduces (each rank alone on\n"
         "                    its rows: the compute's time with every device busy)\n"
         "  --panels N        layer 1's weight gradient in N row panels, each all-reduced as\n"
         "                    it is done (default 1, at most 64)\n"
         "The device: OCAL_DEVICE (or the default) names the candidates; each rank of a node\n"
         "takes a different one. Exit status 0 when every check passed, 1 when one failed, 2\n"
         "for bad arguments.\n");
}

static int parse(const char *opt, const char *arg, double min, double *out) {
  char *end;
  double v = arg ? strtod(arg, &end) : 0;
  if (!arg || !*arg || *end || !(v >= min) || !isfinite(v)) {
    if (rank == 0)
      fprintf(stderr, "mlp_train_mpi: %s wants a number >= %g, not '%s' (see --help)\n", opt,
              min, arg ? arg : "");
    return -1;
  }
  *out = v;
  return 0;
}

int main(int argc, char **argv) {
  int level;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &level);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  options o = {3, 256, 512, 10240, 2000, 2, 0, 0, 0, 0.1, 90, 1};
  int bad = 0;
  for (int i = 1; i < argc && !bad; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    double x = 0;
    struct { const char *name; size_t *field; double min; } sizes[] = {
        {"--epochs", &o.epochs, 0}, {"--batch", &o.batch, 1},  {"--hidden", &o.hidden, 1},
        {"--train", &o.train, 1},   {"--test", &o.test, 1},    {"--check", &o.check, 0},
        {"--bench-steps", &o.bench_steps, 0}, {"--panels", &o.panels, 1},
        {"--bench-alone", &o.bench_alone, 0}};
    if (!strcmp(a, "--help")) {
      if (rank == 0) usage();
      MPI_Finalize();
      return 0;
    }
    size_t k = 0;
    while (k < sizeof sizes / sizeof sizes[0] && strcmp(a, sizes[k].name)) k++;
    if (k < sizeof sizes / sizeof sizes[0]) {
      bad = parse(a, v, sizes[k].min, &x) || x != floor(x);
      *sizes[k].field = (size_t)x;
    } else if (!strcmp(a, "--lr")) {
      bad = parse(a, v, 0, &o.lr);
    } else if (!strcmp(a, "--min-accuracy")) {
      bad = parse(a, v, 0, &o.min_accuracy);
    } else if (!strcmp(a, "--seed")) {
      bad = parse(a, v, 0, &x);
      o.seed = (uint64_t)x;
    } else {
      if (rank == 0) fprintf(stderr, "mlp_train_mpi: unknown argument '%s' (see --help)\n", a);
      bad = 1;
    }
    i++;
  }
  if (!bad && (o.batch % (size_t)nranks || o.train < o.batch)) {
    if (rank == 0)
      fprintf(stderr, "mlp_train_mpi: --batch %zu must be a multiple of the %d ranks and at most "
                      "--train %zu\n", o.batch, nranks, o.train);
    bad = 1;
  }
  if (!bad && (o.panels > MAX_PANELS || o.panels > 784)) {
    if (rank == 0) fprintf(stderr, "mlp_train_mpi: --panels %zu: at most %d\n", o.panels, MAX_PANELS);
    bad = 1;
  }
  if (bad) {
    MPI_Finalize();
    return 2;
  }
  npanels = o.panels ? o.panels : 1;
  dataset train, test;
  if (make_synthetic(&train, o.train, 784, o.seed, 0) != 0 ||
      make_synthetic(&test, o.test, 784, o.seed, 1ull << 32) != 0) {
    fprintf(stderr, "mlp_train_mpi: out of memory for the data\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  ocal_mpi mpi;
  if (ocal_mpi_create(MPI_COMM_WORLD, NULL, &mpi) != OCAL_OK) {
    fprintf(stderr, "mlp_train_mpi: rank %d: %s\n", rank, ocal_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  ocal_mpi_info info = {.struct_size = sizeof info};
  ocal_context ctx;
  ocal_device_info dev = {.struct_size = sizeof dev};
  ocal_mpi_get_info(mpi, &info);
  ocal_mpi_get_context(mpi, &ctx);
  ocal_context_get_device_info(ctx, &dev);
  if (rank == 0)
    printf("%d ranks, rank 0 on %s (%s, shared by %d of the node's ranks); global batch %zu, "
           "%zu per rank; model 784 -> %zu -> %d\n",
           nranks, dev.name, info.device_id, info.device_sharers, o.batch,
           o.batch / (size_t)nranks, o.hidden, CLASSES);
  int ok = 0;
  ocal_status s = run(mpi, &train, &test, &o, &ok);
  int mine = s == OCAL_OK && ok, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  ocal_mpi_release(mpi);
  free(train.x);
  free(train.y);
  free(test.x);
  free(test.y);
  MPI_Finalize();
  return all ? 0 : 1;
}
