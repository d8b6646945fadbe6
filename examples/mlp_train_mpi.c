/* mlp_train_mpi — mlp_train's perceptron trained data-parallel over MPI ranks, one device each.
 *
 * Every rank holds the same weights and takes its share of each global batch (--batch is the
 * global batch, split evenly). Its gradients are sums over its rows, in buckets; each bucket is
 * all-reduced (summed over the ranks) by ocal_mpi_iallreduce as soon as it is computed, so
 * layer 2's gradients travel while layer 1's backward pass still runs on the device.
 *
 * Layer 1's weight gradient, the largest bucket, is computed in --panels panels of hidden
 * units, the whole backward work of one panel after another, each panel's gradient
 * all-reduced while the next panel's work runs; each panel's update is applied at the next
 * step just before that panel's forward work, so the last panel's all-reduce runs while the
 * next step's first panels go forward.
 * For a panel to be contiguous everywhere, the hidden units are stored panel by panel: W1
 * (dim x hidden) is held as one dim x units block per panel, and so are h and its gradient
 * (rows x units blocks); b1 and W2's rows are in hidden-unit order, which the blocks keep.
 * With one panel that is the plain layout. The products keep their orientation whatever the
 * panels (x W1 forward, x^T dh for the gradient).
 *
 * The updates are ordered after the all-reduces by their events (ocal_context_enqueue_wait),
 * without the host waiting. Every rank applies the same update, W -= lr / B * sum of
 * gradients, so the weights stay identical (the program checks that, bit for bit, at the end).
 *
 * --check N: rank 0 first trains a second copy of the network alone (same panels), on whole
 * global batches, and every rank compares the first N data-parallel losses with it (limit
 * 1e-5).
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
/* Panels of hidden units of layer 1 (1: one product, one bucket, the plain layout). */
static size_t npanels = 1;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#define MAX_PANELS 64

/* A pass over `rows` rows seen panel by panel: panel i's hidden units are [lo(i), lo(i + 1)),
 * in W1 (a dim x units block), b1, W2 (rows), h, dh and the ReLU mask (rows x units blocks).
 * Views only: the memory is the net's and the pass's. */
typedef struct panels {
  size_t n;
  ocal_buffer w1[MAX_PANELS], b1[MAX_PANELS], w2[MAX_PANELS], h[MAX_PANELS], dh[MAX_PANELS],
      mask[MAX_PANELS];
} panels;

static size_t panel_lo(size_t hidden, size_t np, size_t i) { return hidden * i / np; }

static ocal_status panels_create(panels *v, const net *m, const pass *p, size_t dim,
                                 size_t hidden, size_t np) {
  size_t rows = p->rows;
  memset(v, 0, sizeof *v);
  v->n = np;
  for (size_t i = 0; i < np; i++) {
    size_t lo = panel_lo(hidden, np, i), w = panel_lo(hidden, np, i + 1) - lo;
    size_t ws[2] = {dim, w}, w2s[2] = {w, CLASSES}, hs[2] = {rows, w};
    TRY(ocal_buffer_view(m->w1, lo * dim, 2, ws, &v->w1[i]));
    TRY(ocal_buffer_view(m->b1, lo, 1, &w, &v->b1[i]));
    TRY(ocal_buffer_view(m->w2, lo * CLASSES, 2, w2s, &v->w2[i]));
    TRY(ocal_buffer_view(p->h, lo * rows, 2, hs, &v->h[i]));
    TRY(ocal_buffer_view(p->dh, lo * rows, 2, hs, &v->dh[i]));
    TRY(ocal_buffer_view(p->mask, lo * rows, 2, hs, &v->mask[i]));
  }
  return OCAL_OK;
}

static void panels_release(panels *v) {
  for (size_t i = 0; i < v->n; i++) {
    ocal_buffer b[] = {v->w1[i], v->b1[i], v->w2[i], v->h[i], v->dh[i], v->mask[i]};
    for (size_t j = 0; j < sizeof b / sizeof b[0]; j++) ocal_buffer_release(b[j]);
  }
}

/* The gradients of one rank, summed over its rows, one bucket per layer (an all-reduce
 * carries a layer's weights and bias). Layer 1's bucket holds, panel by panel, the panel's
 * block of W1's gradient and then its entries of b1's, so that a panel's bucket is contiguous. */
typedef struct grads {
  ocal_buffer bucket2, w2, b2; /* hidden * 10 + 10 */
  ocal_buffer w2p[MAX_PANELS]; /* w2's rows of panel i */
  ocal_buffer bucket1;         /* hidden * (dim + 1) */
  size_t npanels;
  ocal_buffer panel[MAX_PANELS], panel_w[MAX_PANELS], panel_b[MAX_PANELS]; /* of bucket1 */
  ocal_mpi_request pending[MAX_PANELS + 1]; /* the last step's all-reduces: 0 layer 2's */
  int due;      /* the last step's layer-1 updates are not queued yet */
  double scale; /* theirs: -lr / B */
} grads;

static ocal_status grads_create(ocal_context ctx, grads *g, size_t dim, size_t hidden,
                                size_t np) {
  size_t n1 = hidden * (dim + 1), n2 = hidden * CLASSES + CLASSES;
  size_t s2[2] = {hidden, CLASSES}, c = CLASSES;
  memset(g, 0, sizeof *g);
  TRY(ocal_buffer_create(ctx, OCAL_F32, 1, &n1, &g->bucket1));
  TRY(ocal_buffer_create(ctx, OCAL_F32, 1, &n2, &g->bucket2));
  TRY(ocal_buffer_view(g->bucket2, 0, 2, s2, &g->w2));
  TRY(ocal_buffer_view(g->bucket2, hidden * CLASSES, 1, &c, &g->b2));
  g->npanels = np;
  for (size_t i = 0; i < np; i++) {
    size_t lo = panel_lo(hidden, np, i), w = panel_lo(hidden, np, i + 1) - lo;
    size_t ws[2] = {dim, w}, w2s[2] = {w, CLASSES}, n = w * (dim + 1);
    TRY(ocal_buffer_view(g->bucket2, lo * CLASSES, 2, w2s, &g->w2p[i]));
    TRY(ocal_buffer_view(g->bucket1, lo * (dim + 1), 1, &n, &g->panel[i]));
    TRY(ocal_buffer_view(g->bucket1, lo * (dim + 1), 2, ws, &g->panel_w[i]));
    TRY(ocal_buffer_view(g->bucket1, lo * (dim + 1) + dim * w, 1, &w, &g->panel_b[i]));
  }
  return OCAL_OK;
}

static void grads_release(grads *g) {
  ocal_buffer b[] = {g->w2, g->b2, g->bucket2, g->bucket1};
  for (size_t i = 0; i < sizeof b / sizeof b[0]; i++) ocal_buffer_release(b[i]);
  for (size_t i = 0; i < g->npanels; i++) {
    ocal_buffer v[] = {g->w2p[i], g->panel[i], g->panel_w[i], g->panel_b[i]};
    for (size_t j = 0; j < sizeof v / sizeof v[0]; j++) ocal_buffer_release(v[j]);
  }
}

/* Makes device work queued from now on wait for an all-reduce, without the host waiting. */
static ocal_status after(ocal_context ctx, ocal_mpi_request req) {
  ocal_event ev;
  TRY(ocal_mpi_request_event(req, &ev));
  ocal_status s = ocal_context_enqueue_wait(ctx, 1, &ev);
  ocal_event_release(ev);
  return s;
}

/* Queues the last step's update of layer 1's panel i (net views v), after its all-reduce. */
static ocal_status update_panel(ocal_context ctx, grads *g, const panels *v, size_t i) {
  if (g->pending[1 + i]) TRY(after(ctx, g->pending[1 + i]));
  TRY(ocal_axpy(g->scale, g->panel_w[i], v->w1[i]));
  TRY(ocal_axpy(g->scale, g->panel_b[i], v->b1[i]));
  return OCAL_OK;
}

/* Queues the updates still due and finishes the last step's all-reduces: the weights are
 * then the step's (for reading them, or the timing's end). */
static ocal_status settle(ocal_context ctx, grads *g, const panels *v) {
  for (size_t i = 0; g->due && i < g->npanels; i++) TRY(update_panel(ctx, g, v, i));
  g->due = 0;
  for (size_t i = 0; i < MAX_PANELS + 1; i++)
    if (g->pending[i]) TRY(ocal_mpi_wait(&g->pending[i]));
  return OCAL_OK;
}

/* h = relu(x W1 + b1), z = h W2 + b2 = sum over the panels of h_i W2_i + b2, panel by panel
 * (v: views of the net and of p), each panel's update of the last step (if due) just before
 * its product: a panel's whole forward work runs before the next panel's update, which may
 * still wait for its all-reduce. */
static ocal_status forward(const net *m, grads *g, const panels *v, ocal_context ctx,
                           ocal_buffer x, pass *p) {
  for (size_t i = 0; i < v->n; i++) {
    if (g->due) TRY(update_panel(ctx, g, v, i));
    TRY(ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1.0, x, v->w1[i], 0.0, v->h[i]));
    TRY(ocal_binary(OCAL_BINARY_ADD, v->h[i], v->b1[i], v->h[i]));
    TRY(ocal_unary(OCAL_UNARY_RELU, v->h[i], v->h[i]));
    TRY(ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1.0, v->h[i], v->w2[i], i ? 1.0 : 0.0, p->z));
  }
  g->due = 0;
  TRY(ocal_binary(OCAL_BINARY_ADD, p->z, m->b2, p->z));
  return OCAL_OK;
}

/* One SGD step on this rank's rows (x, y) of a global batch of B rows: gradients summed over
 * the rows, all-reduced per bucket while the backward pass goes on (mpi NULL: one rank alone,
 * x the whole batch), then W -= lr / B * gradient (layer 1's at the next forward or settle).
 * Leaves each row's loss in p->loss. */
static ocal_status step(ocal_mpi mpi, ocal_context ctx, net *m, grads *g, const panels *v,
                        ocal_buffer x, ocal_buffer y, pass *p, size_t B, double lr) {
  TRY(forward(m, g, v, ctx, x, p));
  TRY(ocal_softmax_cross_entropy(p->z, y, p->loss, p->z)); /* z becomes dz */
  /* The last step's all-reduces are done once the forward pass has used them; the host
   * waits here, with this forward pass queued ahead of the device. */
  TRY(settle(ctx, g, v));
  /* Layer 2's gradients, then off they go. */
  for (size_t i = 0; i < v->n; i++)
    TRY(ocal_gemm(OCAL_TRANS, OCAL_NO_TRANS, 1.0, v->h[i], p->z, 0.0, g->w2p[i]));
  TRY(ocal_sum(p->z, 0, g->b2));
  if (mpi) TRY(ocal_mpi_iallreduce(mpi, g->bucket2, OCAL_MPI_SUM, &g->pending[0]));
  /* Layer 1's backward pass meanwhile, with the old W2 (its update comes after), panel by
   * panel: panel i's all-reduce runs beside all of panel i + 1's work. Each all-reduce starts
   * after the kernels queued before it, and the kernels queued after it do not wait for it:
   * it runs on libocal-mpi's queues and thread. */
  for (size_t i = 0; i < v->n; i++) {
    TRY(ocal_gemm(OCAL_NO_TRANS, OCAL_TRANS, 1.0, p->z, v->w2[i], 0.0, v->dh[i]));
    TRY(ocal_binary_scalar(OCAL_BINARY_GT, v->h[i], 0.0, v->mask[i]));
    TRY(ocal_where(v->mask[i], v->dh[i], m->zero, v->dh[i]));
    TRY(ocal_gemm(OCAL_TRANS, OCAL_NO_TRANS, 1.0, x, v->dh[i], 0.0, g->panel_w[i]));
    TRY(ocal_sum(v->dh[i], 0, g->panel_b[i]));
    if (mpi) TRY(ocal_mpi_iallreduce(mpi, g->panel[i], OCAL_MPI_SUM, &g->pending[1 + i]));
  }
  /* Layer 2's update waits (on the device) for its summed gradients; layer 1's is due. */
  if (mpi) TRY(after(ctx, g->pending[0]));
  g->scale = -lr / (double)B;
  TRY(ocal_axpy(g->scale, g->w2, m->w2));
  TRY(ocal_axpy(g->scale, g->b2, m->b2));
  g->due = 1;
  return OCAL_OK;
}

/* Held-out loss and accuracy (every rank computes the same: the weights are the same); v:
 * views of the net and of p, whose weights are settled. */
static ocal_status evaluate(const net *m, grads *g, const panels *v, ocal_context ctx,
                            ocal_buffer x, ocal_buffer y, pass *p, ocal_buffer pred,
                            ocal_buffer hit, double *loss, double *accuracy) {
  TRY(forward(m, g, v, ctx, x, p));
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
  size_t D = train->dim, H = o->hidden, B = o->batch, b = B / (size_t)nranks;
  size_t xs[2] = {b, D}, xB[2] = {B, D}, trs[2] = {train->n, D}, tes[2] = {test->n, D}, one = 1;
  net m;
  grads g;
  pass p, ev;
  panels v, vev;
  ocal_buffer xtrain, ytrain, xtest, ytest, pred, hit, loss1, xb = NULL, yb = NULL;
  TRY(net_create(ctx, &m, D, H));
  TRY(pass_create(ctx, &p, b, H));
  TRY(pass_create(ctx, &ev, test->n, H));
  TRY(panels_create(&v, &m, &p, D, H, npanels));
  TRY(panels_create(&vev, &m, &ev, D, H, npanels));
  TRY(grads_create(ctx, &g, D, H, npanels));
  TRY(ocal_buffer_from_host(ctx, OCAL_F32, 2, trs, train->x, &xtrain));
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
    panels rv;
    TRY(net_create(ctx, &r, D, H));
    TRY(pass_create(ctx, &rp, B, H));
    TRY(panels_create(&rv, &r, &rp, D, H, npanels));
    TRY(grads_create(ctx, &rg, D, H, npanels));
    TRY(init_weights(&r, o->seed));
    for (size_t t = 0; t < o->check; t++) {
      TRY(ocal_buffer_view(xtrain, (t % steps) * B * D, 2, xB, &xb));
      TRY(ocal_buffer_view(ytrain, (t % steps) * B, 1, &B, &yb));
      TRY(step(NULL, ctx, &r, &rg, &rv, xb, yb, &rp, B, o->lr));
      float sum;
      TRY(ocal_sum(rp.loss, OCAL_AXIS_ALL, loss1));
      TRY(ocal_buffer_read(loss1, 0, 1, &sum, NULL));
      ref[t] = sum / (double)B;
      ocal_buffer_release(xb);
      ocal_buffer_release(yb);
    }
    TRY(settle(ctx, &rg, &rv));
    panels_release(&rv);
    grads_release(&rg);
    pass_release(&rp);
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
    TRY(ocal_buffer_view(ytrain, first, 1, &b, &yb));
    TRY(step(mpi, ctx, &m, &g, &v, xb, yb, &p, B, o->lr));
    double l;
    TRY(global_loss(p.loss, loss1, B, &l));
    double diff = fabs(l - ref[t]);
    if (!(diff <= worst)) worst = diff;
    if (rank == 0)
      printf("  step %zu: loss %.7f on %d ranks, %.7f on one\n", t + 1, l, nranks, ref[t]);
    ocal_buffer_release(xb);
    ocal_buffer_release(yb);
  }
  if (o->check > 0) {
    *ok = worst <= 1e-5;
    if (rank == 0)
      printf("check: %zu steps on %d ranks %s (largest loss difference %.2e, limit 1e-5)\n",
             o->check, nranks, *ok ? "equal one rank's" : "DIFFER from one rank's", worst);
  }

  /* Training from the seed's weights. Every rank shuffles alike, so the batches agree. */
  TRY(settle(ctx, &g, &v));
  TRY(init_weights(&m, o->seed));
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
    TRY(ocal_buffer_write(ytrain, 0, train->n, train->y, NULL));
    TRY(ocal_buffer_fill(loss_sum, &zero));
    for (size_t t = 0; t < steps; t++) {
      size_t first = t * B + (size_t)rank * b;
      TRY(ocal_buffer_view(xtrain, first * D, 2, xs, &xb));
      TRY(ocal_buffer_view(ytrain, first, 1, &b, &yb));
      TRY(step(mpi, ctx, &m, &g, &v, xb, yb, &p, B, o->lr));
      TRY(ocal_axpy(1.0, p.loss, loss_sum));
      ocal_buffer_release(xb);
      ocal_buffer_release(yb);
    }
    double train_loss, test_loss;
    TRY(settle(ctx, &g, &v));
    TRY(global_loss(loss_sum, loss1, steps * B, &train_loss));
    TRY(evaluate(&m, &g, &vev, ctx, xtest, ytest, &ev, pred, hit, &test_loss, &accuracy));
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
  TRY(settle(ctx, &g, &v));
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
    TRY(ocal_buffer_view(ytrain, (size_t)rank * b, 1, &b, &yb));
    for (int w = 0; w < 3; w++) TRY(step(mpi, ctx, &m, &g, &v, xb, yb, &p, B, o->lr));
    TRY(settle(ctx, &g, &v));
    TRY(ocal_context_finish(ctx));
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    for (size_t t = 0; t < o->bench_steps; t++)
      TRY(step(o->bench_alone ? NULL : mpi, ctx, &m, &g, &v, xb, yb, &p, B, o->lr));
    TRY(settle(ctx, &g, &v));
    TRY(ocal_context_finish(ctx));
    double us = 1e6 * (now() - t0) / (double)o->bench_steps;
    if (rank == 0)
      printf("data-parallel step: %.1f us at global batch %zu (%zu per rank, %d ranks, %zu "
             "panels%s)\n", us, B, b, nranks, g.npanels, o->bench_alone ? ", no all-reduces" : "");
    ocal_buffer_release(xb);
    ocal_buffer_release(yb);
  }

  free(tmp);
  free(ref);
  ocal_buffer bufs[] = {xtrain, ytrain, xtest, ytest, pred, hit, loss1, loss_sum,
                        m.w1, m.b1, m.w2, m.b2, m.zero};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) ocal_buffer_release(bufs[i]);
  panels_release(&v);
  panels_release(&vev);
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
         "  --panels N        layer 1 in N panels of hidden units, each panel's gradient\n"
         "                    all-reduced as it is done (at most 64 and --hidden; default 1\n"
         "                    on one rank, 2 on more, the fastest measured: docs/mpi.md)\n"
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
  if (!bad && (o.panels > MAX_PANELS || o.panels > o.hidden)) {
    if (rank == 0)
      fprintf(stderr, "mlp_train_mpi: --panels %zu must be at most %d and at most --hidden %zu\n",
              o.panels, MAX_PANELS, o.hidden);
    bad = 1;
  }
  if (bad) {
    MPI_Finalize();
    return 2;
  }
  npanels = o.panels ? o.panels : nranks == 1 || o.hidden < 2 ? 1 : 2;
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
