/* mlp_train — trains a neural network on the device, in plain C.
 *
 * A two-layer perceptron, 784 -> 512 (ReLU) -> 10, learns a 10-class problem with softmax
 * cross-entropy and mini-batch SGD. Every step runs on the device through ocal:
 *
 *   forward   h = relu(x W1 + b1)            ocal_gemm, ocal_binary (bias row broadcast),
 *             z = h W2 + b2                   ocal_unary (ReLU)
 *   loss      loss, dz = softmax(z) - onehot  ocal_softmax_cross_entropy (one kernel)
 *   backward  dh = (dz W2^T) * (h > 0)        ocal_gemm, ocal_binary_scalar (mask), ocal_where
 *   update    W -= lr/B * input^T d           ocal_gemm with beta = 1 (the update in the GEMM)
 *             b -= lr/B * column sums of d    ocal_sum along axis 0, ocal_axpy
 *
 * The data is a synthetic problem the program makes itself from --seed (no download), or
 * images and labels in the IDX format of MNIST (--idx-images, --idx-labels). Before training,
 * the program runs its first SGD steps a second time on the host in double precision and
 * checks that the losses agree (--check-host); after each epoch it prints the training loss
 * and the loss and accuracy on held-out samples; it exits 1 when a check fails or the final
 * accuracy is below --min-accuracy.
 *
 *   ./mlp_train [--device SELECTOR] [--epochs N] [--bench-steps N] ...   (--help lists all)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ocal.h>

#include "mlp_common.h"

/* Stops the function at the first failing ocal call, naming the call. */
#define TRY(call)                                                                         \
  do {                                                                                    \
    ocal_status s_ = (call);                                                              \
    if (s_ != OCAL_OK) {                                                                  \
      fprintf(stderr, "mlp_train: %s failed: %s\n%s\n", #call, ocal_status_name(s_),    \
              ocal_last_error());                                                         \
      return s_;                                                                          \
    }                                                                                     \
  } while (0)

typedef struct options {
  const char *device, *idx_images, *idx_labels;
  size_t epochs, batch, hidden, train, test, check_steps, bench_steps, bench_blocks, profile_steps;
  double lr, min_accuracy;
  uint64_t seed;
} options;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double thread_cpu(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median of n values (sorts them). */
static double median(double *v, size_t n) {
  qsort(v, n, sizeof *v, compare_doubles);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* --profile-steps: every operation of a step waits for the device, and its time (launch and
 * run) is added up under its name. Slower than a free-running step, but it shows which
 * operation dominates. */
static ocal_context profile_ctx; /* NULL unless profiling */
static struct {
  const char *name;
  double seconds;
} profile[32];
static double profile_last;

static void profile_mark(const char *name) {
  ocal_context_finish(profile_ctx);
  double t = now();
  int i = 0;
  while (i < 31 && profile[i].name && strcmp(profile[i].name, name) != 0) i++;
  profile[i].name = name;
  profile[i].seconds += t - profile_last;
  profile_last = t;
}

/* An operation of the training step: TRY, and a mark in the profile when profiling. */
#define OP(call)                                 \
  do {                                           \
    TRY(call);                                   \
    if (profile_ctx) profile_mark(#call);        \
  } while (0)

/* ---- data ------------------------------------------------------------------------------ */

static uint32_t be32(const unsigned char *b) {
  return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* Reads MNIST's IDX files: images (magic 0x803, count, rows, cols, then bytes) scaled to
 * [0, 1], and labels (magic 0x801, count, then bytes). */
static int read_idx(dataset *d, const char *images, const char *labels) {
  unsigned char h[16];
  FILE *fi = fopen(images, "rb"), *fl = fopen(labels, "rb");
  int ok = fi && fl;
  if (!ok) fprintf(stderr, "mlp_train: cannot open %s\n", fi ? labels : images);
  if (ok && (fread(h, 1, 16, fi) != 16 || be32(h) != 0x803)) {
    fprintf(stderr, "mlp_train: %s is not an IDX image file (magic 0x00000803)\n", images);
    ok = 0;
  }
  if (ok) {
    d->n = be32(h + 4);
    d->dim = (size_t)be32(h + 8) * be32(h + 12);
    if (fread(h, 1, 8, fl) != 8 || be32(h) != 0x801 || be32(h + 4) != d->n) {
      fprintf(stderr, "mlp_train: %s is not an IDX label file with %zu labels\n", labels, d->n);
      ok = 0;
    }
  }
  unsigned char *px = NULL, *lb = NULL;
  if (ok) {
    px = malloc(d->n * d->dim);
    lb = malloc(d->n);
    d->x = malloc(d->n * d->dim * sizeof *d->x);
    d->y = malloc(d->n * sizeof *d->y);
    ok = px && lb && d->x && d->y && d->n > 0 && d->dim > 0;
    if (ok && (fread(px, 1, d->n * d->dim, fi) != d->n * d->dim || fread(lb, 1, d->n, fl) != d->n)) {
      fprintf(stderr, "mlp_train: %s or %s is truncated\n", images, labels);
      ok = 0;
    }
  }
  for (size_t i = 0; ok && i < d->n; i++) {
    if (lb[i] >= CLASSES) {
      fprintf(stderr, "mlp_train: label %u of sample %zu is not a class 0..9\n", lb[i], i);
      ok = 0;
    }
    d->y[i] = lb[i];
  }
  for (size_t i = 0; ok && i < d->n * d->dim; i++) d->x[i] = (float)px[i] / 255.0f;
  free(px);
  free(lb);
  if (fi) fclose(fi);
  if (fl) fclose(fl);
  return ok ? 0 : -1;
}

/* ---- the network on the device --------------------------------------------------------- */

/* h = relu(x W1 + b1), z = h W2 + b2. */
static ocal_status forward(const net *m, ocal_buffer x, pass *p) {
  OP(ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1.0, x, m->w1, 0.0, p->h));
  OP(ocal_binary(OCAL_BINARY_ADD, p->h, m->b1, p->h)); /* b1 broadcast over the rows */
  OP(ocal_unary(OCAL_UNARY_RELU, p->h, p->h));
  OP(ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1.0, p->h, m->w2, 0.0, p->z));
  OP(ocal_binary(OCAL_BINARY_ADD, p->z, m->b2, p->z));
  return OCAL_OK;
}

/* One SGD step on a batch (x, y): leaves each sample's loss in p->loss. The loss is the
 * mean over the batch, so every gradient carries 1/rows, folded into the step size. */
static ocal_status sgd_step(net *m, ocal_buffer x, ocal_buffer y, pass *p, double lr) {
  double step = lr / (double)p->rows;
  TRY(forward(m, x, p));
  /* Per-sample losses, and dz = softmax(z) - onehot(y), which replaces z. */
  OP(ocal_softmax_cross_entropy(p->z, y, p->loss, p->z));
  /* Layer 2: dh = dz W2^T with the old W2, then W2 -= step * h^T dz, b2 -= step * sum(dz). */
  OP(ocal_gemm(OCAL_NO_TRANS, OCAL_TRANS, 1.0, p->z, m->w2, 0.0, p->dh));
  OP(ocal_gemm(OCAL_TRANS, OCAL_NO_TRANS, -step, p->h, p->z, 1.0, m->w2));
  OP(ocal_sum(p->z, 0, p->db2));
  OP(ocal_axpy(-step, p->db2, m->b2));
  /* Through the ReLU: the gradient passes where the unit was active (h > 0). */
  OP(ocal_binary_scalar(OCAL_BINARY_GT, p->h, 0.0, p->mask));
  OP(ocal_where(p->mask, p->dh, m->zero, p->dh));
  /* Layer 1: W1 -= step * x^T dh, b1 -= step * sum(dh). */
  OP(ocal_gemm(OCAL_TRANS, OCAL_NO_TRANS, -step, x, p->dh, 1.0, m->w1));
  OP(ocal_sum(p->dh, 0, p->db1));
  OP(ocal_axpy(-step, p->db1, m->b1));
  return OCAL_OK;
}

/* Loss and accuracy over a whole data set on the device (p sized for all of its rows). */
static ocal_status evaluate(const net *m, ocal_buffer x, ocal_buffer y, pass *p, ocal_buffer pred,
                            ocal_buffer hit, double *loss, double *accuracy) {
  TRY(forward(m, x, p));
  TRY(ocal_softmax_cross_entropy(p->z, y, p->loss, NULL));
  TRY(ocal_argmax(p->z, 1, pred));                      /* the predicted class, i64 */
  TRY(ocal_binary(OCAL_BINARY_EQ, pred, y, hit));       /* 1 where it is right */
  uint64_t hits;
  float mean_loss;
  TRY(ocal_reduce_to_host(OCAL_REDUCE_SUM, hit, OCAL_U64, &hits));
  TRY(ocal_reduce_to_host(OCAL_REDUCE_MEAN, p->loss, OCAL_F32, &mean_loss));
  *loss = mean_loss;
  *accuracy = 100.0 * (double)hits / (double)p->rows;
  return OCAL_OK;
}

/* ---- the same steps on the host, in double --------------------------------------------- */

typedef struct host_net {
  size_t dim, hidden;
  double *w1, *b1, *w2, *b2;
} host_net;

static ocal_status read_doubles(ocal_buffer b, double **out) {
  size_t n;
  TRY(ocal_buffer_get_numel(b, &n));
  float *f = malloc(n * sizeof *f);
  *out = malloc(n * sizeof **out);
  if (!f || !*out) {
    free(f);
    return OCAL_OUT_OF_HOST_MEMORY;
  }
  TRY(ocal_buffer_read(b, 0, n, f, NULL));
  for (size_t i = 0; i < n; i++) (*out)[i] = f[i];
  free(f);
  return OCAL_OK;
}

/* One SGD step of host_net on rows samples of x, the steps of sgd_step; returns the loss. */
static double host_step(host_net *m, const float *x, const int64_t *y, size_t rows, double lr) {
  size_t D = m->dim, H = m->hidden, C = CLASSES;
  double *h = calloc(rows * H, sizeof *h), *z = calloc(rows * C, sizeof *z);
  double *dh = calloc(rows * H, sizeof *dh), loss = 0, step = lr / (double)rows;
  if (!h || !z || !dh) {
    free(h);
    free(z);
    free(dh);
    return NAN;
  }
  for (size_t i = 0; i < rows; i++) {
    double *hi = h + i * H, *zi = z + i * C;
    for (size_t j = 0; j < H; j++) hi[j] = m->b1[j];
    for (size_t k = 0; k < D; k++) {
      double xk = x[i * D + k];
      for (size_t j = 0; j < H; j++) hi[j] += xk * m->w1[k * H + j];
    }
    for (size_t j = 0; j < H; j++) hi[j] = hi[j] > 0 ? hi[j] : 0;
    for (size_t c = 0; c < C; c++) zi[c] = m->b2[c];
    for (size_t j = 0; j < H; j++)
      for (size_t c = 0; c < C; c++) zi[c] += hi[j] * m->w2[j * C + c];
    double mx = zi[0], s = 0;
    for (size_t c = 1; c < C; c++) mx = fmax(mx, zi[c]);
    for (size_t c = 0; c < C; c++) s += exp(zi[c] - mx);
    loss += mx + log(s) - zi[y[i]];
    for (size_t c = 0; c < C; c++) zi[c] = exp(zi[c] - mx) / s - (c == (size_t)y[i]);
    for (size_t j = 0; j < H; j++) {
      double g = 0;
      for (size_t c = 0; c < C; c++) g += zi[c] * m->w2[j * C + c];
      dh[i * H + j] = hi[j] > 0 ? g : 0;
    }
  }
  for (size_t i = 0; i < rows; i++)
    for (size_t j = 0; j < H; j++)
      for (size_t c = 0; c < C; c++) m->w2[j * C + c] -= step * h[i * H + j] * z[i * C + c];
  for (size_t i = 0; i < rows; i++)
    for (size_t c = 0; c < C; c++) m->b2[c] -= step * z[i * C + c];
  for (size_t i = 0; i < rows; i++) {
    for (size_t k = 0; k < D; k++) {
      double xk = step * x[i * D + k];
      for (size_t j = 0; j < H; j++) m->w1[k * H + j] -= xk * dh[i * H + j];
    }
    for (size_t j = 0; j < H; j++) m->b1[j] -= step * dh[i * H + j];
  }
  free(h);
  free(z);
  free(dh);
  return loss / (double)rows;
}

/* Runs `steps` SGD steps on the device and on the host from the device's current weights,
 * over the first batches of the training data, and compares the losses. */
static ocal_status check_host(net *m, ocal_buffer xtrain, ocal_buffer ytrain, const dataset *train,
                              pass *p, const options *o, int *ok) {
  host_net h = {train->dim, o->hidden, NULL, NULL, NULL, NULL};
  TRY(read_doubles(m->w1, &h.w1));
  TRY(read_doubles(m->b1, &h.b1));
  TRY(read_doubles(m->w2, &h.w2));
  TRY(read_doubles(m->b2, &h.b2));
  size_t B = o->batch, D = train->dim, xs[2] = {B, D};
  float *loss = malloc(B * sizeof *loss);
  double worst = 0;
  ocal_status s = loss ? OCAL_OK : OCAL_OUT_OF_HOST_MEMORY;
  for (size_t t = 0; s == OCAL_OK && t < o->check_steps; t++) {
    size_t first = (t % (train->n / B)) * B;
    ocal_buffer xb = NULL, yb = NULL;
    s = ocal_buffer_view(xtrain, first * D, 2, xs, &xb);
    if (s == OCAL_OK) s = ocal_buffer_view(ytrain, first, 1, &B, &yb);
    if (s == OCAL_OK) s = sgd_step(m, xb, yb, p, o->lr);
    if (s == OCAL_OK) s = ocal_buffer_read(p->loss, 0, B, loss, NULL);
    ocal_buffer_release(xb);
    ocal_buffer_release(yb);
    if (s != OCAL_OK) break;
    double dev = 0, host = host_step(&h, train->x + first * D, train->y + first, B, o->lr);
    for (size_t i = 0; i < B; i++) dev += loss[i];
    dev /= (double)B;
    double diff = fabs(dev - host);
    if (!(diff <= worst)) worst = diff; /* NaN sticks */
    printf("  step %zu: loss %.7f on the device, %.7f on the host\n", t + 1, dev, host);
  }
  if (s == OCAL_OK) {
    *ok = worst <= 1e-4;
    printf("host check: %zu SGD steps, largest loss difference %.2e (limit 1e-4): %s\n",
           o->check_steps, worst, *ok ? "ok" : "FAILED");
  }
  free(loss);
  free(h.w1);
  free(h.b1);
  free(h.w2);
  free(h.b2);
  return s;
}

/* ---- training ---------------------------------------------------------------------------- */

/* Shuffles the samples (the same permutation on every machine for a seed). */
static void shuffle(dataset *d, uint64_t *rng, float *tmp) {
  for (size_t i = d->n - 1; i > 0; i--) {
    size_t j = (size_t)(next_u64(rng) % (i + 1));
    memcpy(tmp, d->x + i * d->dim, d->dim * sizeof *tmp);
    memcpy(d->x + i * d->dim, d->x + j * d->dim, d->dim * sizeof *tmp);
    memcpy(d->x + j * d->dim, tmp, d->dim * sizeof *tmp);
    int64_t t = d->y[i];
    d->y[i] = d->y[j];
    d->y[j] = t;
  }
}

static ocal_status run(ocal_context ctx, dataset *train, dataset *test, const options *o,
                       int *ok) {
  size_t D = train->dim, B = o->batch, xs[2] = {B, D};
  size_t trs[2] = {train->n, D}, tes[2] = {test->n, D};
  net m;
  pass p, ev;
  ocal_buffer xtrain, ytrain, xtest, ytest, pred, hit, loss_sum;
  TRY(net_create(ctx, &m, D, o->hidden));
  TRY(pass_create(ctx, &p, B, o->hidden));
  TRY(pass_create(ctx, &ev, test->n, o->hidden));
  TRY(ocal_buffer_create(ctx, OCAL_F32, 2, trs, &xtrain));
  TRY(ocal_buffer_create(ctx, OCAL_I64, 1, &train->n, &ytrain));
  TRY(ocal_buffer_from_host(ctx, OCAL_F32, 2, tes, test->x, &xtest));
  TRY(ocal_buffer_from_host(ctx, OCAL_I64, 1, &test->n, test->y, &ytest));
  TRY(ocal_buffer_create(ctx, OCAL_I64, 1, &test->n, &pred));
  TRY(ocal_buffer_create(ctx, OCAL_U8, 1, &test->n, &hit));
  TRY(ocal_buffer_create(ctx, OCAL_F32, 1, &B, &loss_sum));
  float *tmp = malloc(D * sizeof *tmp), zero = 0.0f;
  if (!tmp) return OCAL_OUT_OF_HOST_MEMORY;
  uint64_t rng = o->seed ^ 0x5eed5eed5eed5eedull;
  *ok = 1;

  /* The first SGD step builds (or loads from the disk cache) every kernel it needs. */
  TRY(init_weights(&m, o->seed));
  TRY(ocal_buffer_write(xtrain, 0, train->n * D, train->x, NULL));
  TRY(ocal_buffer_write(ytrain, 0, train->n, train->y, NULL));
  ocal_buffer xb, yb;
  TRY(ocal_buffer_view(xtrain, 0, 2, xs, &xb));
  TRY(ocal_buffer_view(ytrain, 0, 1, &B, &yb));
  TRY(ocal_context_finish(ctx));
  double t0 = now();
  TRY(sgd_step(&m, xb, yb, &p, o->lr));
  TRY(ocal_context_finish(ctx));
  ocal_cache_stats cs = {.struct_size = sizeof cs};
  TRY(ocal_context_get_cache_stats(ctx, &cs));
  /* CLBlast builds its GEMM kernels itself, outside ocal's cache (drivers may cache them). */
  printf("first SGD step: %.1f ms (ocal's kernels: %llu compiled, %llu from the disk cache)\n",
         1e3 * (now() - t0), (unsigned long long)cs.compiles, (unsigned long long)cs.disk_hits);

  if (o->check_steps > 0) {
    TRY(init_weights(&m, o->seed));
    TRY(check_host(&m, xtrain, ytrain, train, &p, o, ok));
  }

  /* Training from the seed's weights: one upload of the shuffled data per epoch, then
   * batches are views of it. */
  TRY(init_weights(&m, o->seed));
  double accuracy = 0;
  for (size_t e = 1; e <= o->epochs; e++) {
    double start = now();
    float sum;
    shuffle(train, &rng, tmp);
    TRY(ocal_buffer_fill(loss_sum, &zero));
    TRY(ocal_buffer_write(xtrain, 0, train->n * D, train->x, NULL));
    TRY(ocal_buffer_write(ytrain, 0, train->n, train->y, NULL));
    size_t steps = train->n / B;
    for (size_t t = 0; t < steps; t++) {
      ocal_buffer_release(xb);
      ocal_buffer_release(yb);
      TRY(ocal_buffer_view(xtrain, t * B * D, 2, xs, &xb));
      TRY(ocal_buffer_view(ytrain, t * B, 1, &B, &yb));
      TRY(sgd_step(&m, xb, yb, &p, o->lr));
      /* The epoch's losses add up on the device: no waiting for a step to finish. */
      TRY(ocal_axpy(1.0, p.loss, loss_sum));
    }
    TRY(ocal_reduce_to_host(OCAL_REDUCE_SUM, loss_sum, OCAL_F32, &sum));
    double test_loss;
    TRY(evaluate(&m, xtest, ytest, &ev, pred, hit, &test_loss, &accuracy));
    printf("epoch %zu: training loss %.4f, held-out loss %.4f, accuracy %.2f%% (%.2f s)\n", e,
           sum / (double)(steps * B), test_loss, accuracy, now() - start);
    fflush(stdout);
  }
  if (o->epochs > 0 && accuracy < o->min_accuracy) {
    printf("accuracy %.2f%% is below the required %.2f%%\n", accuracy, o->min_accuracy);
    *ok = 0;
  }

  /* Step time: the same step, over and over, timed between two ocal_context_finish calls, in
   * --bench-blocks blocks of --bench-steps steps. The median block is the figure: a shared
   * host's slow moments land in single blocks. The thread's CPU time per step is the host's
   * cost of queueing it, which the wall clock shows only when the host is the bound. */
  if (o->bench_steps > 0) {
    double *block = malloc(3 * o->bench_blocks * sizeof *block);
    if (!block) return OCAL_OUT_OF_HOST_MEMORY;
    double *queue = block + o->bench_blocks, *cpu = queue + o->bench_blocks;
    ocal_status s = OCAL_OK;
    for (int w = 0; w < 5 && s == OCAL_OK; w++) s = sgd_step(&m, xb, yb, &p, o->lr);
    for (size_t r = 0; r < o->bench_blocks && s == OCAL_OK; r++) {
      s = ocal_context_finish(ctx);
      double b0 = now(), c0 = thread_cpu();
      for (size_t t = 0; t < o->bench_steps && s == OCAL_OK; t++)
        s = sgd_step(&m, xb, yb, &p, o->lr);
      queue[r] = now() - b0;
      cpu[r] = thread_cpu() - c0;
      if (s == OCAL_OK) s = ocal_context_finish(ctx);
      block[r] = now() - b0;
    }
    if (s == OCAL_OK) {
      double per = 1e6 / (double)o->bench_steps, fastest = block[0];
      for (size_t r = 1; r < o->bench_blocks; r++)
        if (block[r] < fastest) fastest = block[r];
      printf("SGD step time: %.1f us per step at batch %zu (median of %zu blocks of %zu steps, "
             "fastest block %.1f; the host queued a step in %.1f us, %.1f us of its thread's CPU "
             "time)\n",
             per * median(block, o->bench_blocks), B, o->bench_blocks, o->bench_steps,
             per * fastest, per * median(queue, o->bench_blocks),
             per * median(cpu, o->bench_blocks));
    }
    free(block);
    TRY(s);
  }
  if (o->profile_steps > 0) {
    TRY(ocal_context_finish(ctx));
    profile_ctx = ctx;
    for (size_t t = 0; t < o->profile_steps; t++) {
      profile_last = now();
      TRY(sgd_step(&m, xb, yb, &p, o->lr));
    }
    profile_ctx = NULL;
    double total = 0;
    for (int i = 0; i < 32 && profile[i].name; i++) total += profile[i].seconds;
    printf("profile of %zu steps, each operation waited for: %.1f us per step\n",
           o->profile_steps, 1e6 * total / (double)o->profile_steps);
    for (int i = 0; i < 32 && profile[i].name; i++)
      printf("  %8.1f us  %.70s\n", 1e6 * profile[i].seconds / (double)o->profile_steps,
             profile[i].name);
  }

  free(tmp);
  ocal_buffer bufs[] = {xb, yb, xtrain, ytrain, xtest, ytest, pred, hit, loss_sum,
                        m.w1, m.b1, m.w2, m.b2, m.zero};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) ocal_buffer_release(bufs[i]);
  pass_release(&p);
  pass_release(&ev);
  return OCAL_OK;
}

/* ---- command line -------------------------------------------------------------------------- */

static void usage(FILE *f) {
  fprintf(f,
          "usage: mlp_train [options]\n"
          "Trains a 784 -> 512 (ReLU) -> 10 perceptron with softmax cross-entropy and SGD on\n"
          "the device, printing the loss and held-out accuracy after each epoch.\n"
          "  --device SEL        device selector (gpu, cpu, pocl, P:D, ...); default:\n"
          "                      OCAL_DEVICE, else the first GPU, accelerator, CPU\n"
          "  --epochs N          passes over the training data (default 5)\n"
          "  --batch N           samples per SGD step (default 256)\n"
          "  --lr X              learning rate (default 0.1)\n"
          "  --hidden N          hidden units (default 512)\n"
          "  --train N           synthetic training samples (default 10240)\n"
          "  --test N            held-out samples (default 2000; with IDX files, the last N\n"
          "                      samples of the files, default a sixth of them)\n"
          "  --seed N            seed of the data, the weights and the shuffles (default 1)\n"
          "  --idx-images FILE   train on IDX images (MNIST's format, uncompressed) ...\n"
          "  --idx-labels FILE   ... and their labels, instead of the synthetic problem\n"
          "  --check-host N      first run N SGD steps on the host in double and compare the\n"
          "                      losses, limit 1e-4 (default 2; 0 skips)\n"
          "  --min-accuracy P    exit 1 when the final held-out accuracy is below P percent\n"
          "                      (default 95 on the synthetic problem, 0 with IDX files)\n"
          "  --bench-steps N     after training, time N SGD steps and print us per step\n"
          "  --bench-blocks R    ... in R blocks of N steps, printing the median block\n"
          "                      (default 1)\n"
          "  --profile-steps N   then time each operation of N steps (waiting for each)\n"
          "Exit status: 0 when every check passed, 1 when one failed, 2 for bad arguments.\n");
}

static int parse_size(const char *opt, const char *arg, size_t min, size_t *out) {
  char *end;
  unsigned long long v = arg ? strtoull(arg, &end, 10) : 0;
  if (!arg || *end || !*arg || arg[0] == '-' || v < min) {
    fprintf(stderr, "mlp_train: %s wants a whole number >= %zu, not '%s' (see --help)\n", opt,
            min, arg ? arg : "");
    return -1;
  }
  *out = (size_t)v;
  return 0;
}

static int parse_double(const char *opt, const char *arg, double min, double *out) {
  char *end;
  double v = arg ? strtod(arg, &end) : 0;
  if (!arg || *end || !*arg || !(v >= min) || !isfinite(v)) {
    fprintf(stderr, "mlp_train: %s wants a number >= %g, not '%s' (see --help)\n", opt, min,
            arg ? arg : "");
    return -1;
  }
  *out = v;
  return 0;
}

int main(int argc, char **argv) {
  options o = {NULL, NULL, NULL, 5, 256, 512, 10240, 0, 2, 0, 1, 0, 0.1, -1, 1};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    size_t seed;
    int bad = 0;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return 0;
    } else if (strcmp(a, "--device") == 0 && v) {
      o.device = v;
    } else if (strcmp(a, "--idx-images") == 0 && v) {
      o.idx_images = v;
    } else if (strcmp(a, "--idx-labels") == 0 && v) {
      o.idx_labels = v;
    } else if (strcmp(a, "--epochs") == 0) {
      bad = parse_size(a, v, 0, &o.epochs);
    } else if (strcmp(a, "--batch") == 0) {
      bad = parse_size(a, v, 1, &o.batch);
    } else if (strcmp(a, "--hidden") == 0) {
      bad = parse_size(a, v, 1, &o.hidden);
    } else if (strcmp(a, "--train") == 0) {
      bad = parse_size(a, v, 1, &o.train);
    } else if (strcmp(a, "--test") == 0) {
      bad = parse_size(a, v, 1, &o.test);
    } else if (strcmp(a, "--seed") == 0) {
      bad = parse_size(a, v, 0, &seed);
      o.seed = seed;
    } else if (strcmp(a, "--check-host") == 0) {
      bad = parse_size(a, v, 0, &o.check_steps);
    } else if (strcmp(a, "--bench-steps") == 0) {
      bad = parse_size(a, v, 0, &o.bench_steps);
    } else if (strcmp(a, "--bench-blocks") == 0) {
      bad = parse_size(a, v, 1, &o.bench_blocks);
    } else if (strcmp(a, "--profile-steps") == 0) {
      bad = parse_size(a, v, 0, &o.profile_steps);
    } else if (strcmp(a, "--lr") == 0) {
      bad = parse_double(a, v, 0, &o.lr);
    } else if (strcmp(a, "--min-accuracy") == 0) {
      bad = parse_double(a, v, 0, &o.min_accuracy);
    } else {
      fprintf(stderr, "mlp_train: unknown argument '%s'%s (see --help)\n", a,
              strncmp(a, "--", 2) == 0 && !v ? " or missing value" : "");
      return 2;
    }
    if (bad) return 2;
    i++; /* every option but --help takes a value */
  }
  if (!o.idx_images != !o.idx_labels) {
    fprintf(stderr, "mlp_train: --idx-images and --idx-labels go together\n");
    return 2;
  }

  /* The data: both sets are made (or read) before any OpenCL work. */
  dataset all = {0, 0, NULL, NULL}, train, test;
  if (o.idx_images) {
    if (read_idx(&all, o.idx_images, o.idx_labels) != 0) return 2;
    size_t held = o.test ? o.test : all.n / 6;
    if (held >= all.n || all.n - held < o.batch) {
      fprintf(stderr, "mlp_train: %zu samples cannot hold %zu out and fill a batch of %zu\n",
              all.n, held, o.batch);
      return 2;
    }
    train = (dataset){all.n - held, all.dim, all.x, all.y};
    test = (dataset){held, all.dim, all.x + train.n * all.dim, all.y + train.n};
    if (o.min_accuracy < 0) o.min_accuracy = 0;
  } else {
    if (o.train < o.batch) {
      fprintf(stderr, "mlp_train: --train %zu is smaller than --batch %zu\n", o.train, o.batch);
      return 2;
    }
    if (!o.test) o.test = 2000;
    if (make_synthetic(&train, o.train, 784, o.seed, 0) != 0 ||
        make_synthetic(&test, o.test, 784, o.seed, 1ull << 32) != 0) {
      fprintf(stderr, "mlp_train: out of memory for the data\n");
      return 1;
    }
    if (o.min_accuracy < 0) o.min_accuracy = 95;
  }

  ocal_context_options co;
  ocal_context_options_init(&co);
  co.device = o.device;
  ocal_context ctx;
  ocal_status s = ocal_context_create(&co, &ctx);
  if (s != OCAL_OK) {
    fprintf(stderr, "mlp_train: no device: %s\n%s\n", ocal_status_name(s), ocal_last_error());
    return 1;
  }
  ocal_device_info info = {.struct_size = sizeof info};
  ocal_context_get_device_info(ctx, &info);
  printf("device: %s (%s)\n", info.name, info.platform_name);
  printf("data: %s, %zu training and %zu held-out samples of %zu features\n",
         o.idx_images ? o.idx_images : "synthetic 10-class problem", train.n, test.n, train.dim);
  printf("model: %zu -> %zu (ReLU) -> %d, %zu parameters; batch %zu, learning rate %g\n",
         train.dim, o.hidden, CLASSES, (train.dim + 1) * o.hidden + (o.hidden + 1) * CLASSES,
         o.batch, o.lr);
  int ok = 0;
  s = run(ctx, &train, &test, &o, &ok);
  ocal_context_release(ctx);
  if (o.idx_images) {
    free(all.x);
    free(all.y);
  } else {
    free(train.x);
    free(train.y);
    free(test.x);
    free(test.y);
  }
  return s == OCAL_OK && ok ? 0 : 1;
}
