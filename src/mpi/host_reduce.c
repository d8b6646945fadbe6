/* libocal-mpi — ordered reductions on the host, for the node-local path's non-blocking
 * allreduce on three or more ranks: out[i] = x_0[i] (op) x_1[i] (op) ... in node-rank order,
 * the same arithmetic as cl/mpi_accumulate.cl's ordered kernel, so the bits depend on nothing
 * but the inputs. A few threads of the handle's own share the elements: the window lives in
 * host memory, and one thread reads it at a fraction of the memory's speed. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

struct ocal_mpi_host_pool {
  int threads; /* the calling thread and threads - 1 workers */
  pthread_t *workers;
  pthread_mutex_t lock;
  pthread_cond_t start, done;
  unsigned long gen; /* jobs posted */
  int pending;       /* workers still on the current job */
  int stop;
  /* The current job. */
  int tidx, op, nin;
  void *out;
  const void *const *in;
  size_t n;
};

/* Elements a block: the running values stay in a buffer of the stack (out may be one of the
 * inputs, in place), and each input is read once, in order. */
#define BLOCK 1024

#define REDUCE_BLOCKS(T, COMBINE)                                                           \
  do {                                                                                      \
    T *o = out, acc[BLOCK];                                                                 \
    const T *const *x = (const T *const *)in;                                               \
    for (size_t b = lo; b < hi; b += BLOCK) {                                               \
      size_t len = hi - b < BLOCK ? hi - b : BLOCK;                                         \
      memcpy(acc, x[0] + b, len * sizeof(T));                                               \
      for (int k = 1; k < nin; k++) {                                                       \
        const T *xk = x[k] + b;                                                             \
        for (size_t j = 0; j < len; j++) acc[j] = COMBINE(acc[j], xk[j]);                   \
      }                                                                                     \
      memcpy(o + b, acc, len * sizeof(T));                                                  \
    }                                                                                       \
  } while (0)

/* Integers add modulo 2^w, as the device does (signed overflow is undefined in C). */
#define ADD_U32(a, b) ((int32_t)((uint32_t)(a) + (uint32_t)(b)))
#define ADD_U64(a, b) ((int64_t)((uint64_t)(a) + (uint64_t)(b)))
#define ADD(a, b) ((a) + (b))
#define MAXI(a, b) ((a) > (b) ? (a) : (b))
#define MINI(a, b) ((a) < (b) ? (a) : (b))

/* Thread t of T's share of out[0, n): a run of whole blocks. */
static void reduce_range(int tidx, int op, void *out, const void *const *in, int nin, size_t n,
                         int t, int T) {
  size_t blocks = (n + BLOCK - 1) / BLOCK;
  size_t lo = blocks * (size_t)t / (size_t)T * BLOCK;
  size_t hi = blocks * (size_t)(t + 1) / (size_t)T * BLOCK;
  if (hi > n) hi = n;
  if (lo >= hi) return;
  switch (tidx * 3 + op) {
  case 0: REDUCE_BLOCKS(float, ADD); break;
  case 1: REDUCE_BLOCKS(float, fmaxf); break;
  case 2: REDUCE_BLOCKS(float, fminf); break;
  case 3: REDUCE_BLOCKS(double, ADD); break;
  case 4: REDUCE_BLOCKS(double, fmax); break;
  case 5: REDUCE_BLOCKS(double, fmin); break;
  case 6: REDUCE_BLOCKS(int32_t, ADD_U32); break;
  case 7: REDUCE_BLOCKS(int32_t, MAXI); break;
  case 8: REDUCE_BLOCKS(int32_t, MINI); break;
  case 9: REDUCE_BLOCKS(int64_t, ADD_U64); break;
  case 10: REDUCE_BLOCKS(int64_t, MAXI); break;
  default: REDUCE_BLOCKS(int64_t, MINI); break;
  }
}

static void share(struct ocal_mpi_host_pool *p, int t) {
  reduce_range(p->tidx, p->op, p->out, p->in, p->nin, p->n, t, p->threads);
}

typedef struct worker_arg {
  struct ocal_mpi_host_pool *pool;
  int index;
} worker_arg;

static void *worker(void *arg) {
  worker_arg *w = arg;
  struct ocal_mpi_host_pool *p = w->pool;
  unsigned long seen = 0;
  for (;;) {
    pthread_mutex_lock(&p->lock);
    while (p->gen == seen && !p->stop) pthread_cond_wait(&p->start, &p->lock);
    if (p->stop) {
      pthread_mutex_unlock(&p->lock);
      break;
    }
    seen = p->gen;
    pthread_mutex_unlock(&p->lock);
    share(p, w->index);
    pthread_mutex_lock(&p->lock);
    if (--p->pending == 0) pthread_cond_signal(&p->done);
    pthread_mutex_unlock(&p->lock);
  }
  free(w);
  return NULL;
}

void ocal_mpi__host_pool_free(ocal_mpi m) {
  struct ocal_mpi_host_pool *p = m->host_pool;
  if (!p) return;
  pthread_mutex_lock(&p->lock);
  p->stop = 1;
  pthread_cond_broadcast(&p->start);
  pthread_mutex_unlock(&p->lock);
  for (int t = 1; t < p->threads; t++) pthread_join(p->workers[t - 1], NULL);
  pthread_cond_destroy(&p->done);
  pthread_cond_destroy(&p->start);
  pthread_mutex_destroy(&p->lock);
  free(p->workers);
  free(p);
  m->host_pool = NULL;
}

/* The pool of m->host_threads threads, made on first use; where fewer threads can be made
 * (no memory, no thread), the ones made share the work: slower, not wrong. NULL without
 * memory for the pool itself: the calling thread then reduces alone. */
static struct ocal_mpi_host_pool *pool(ocal_mpi m) {
  if (m->host_pool || m->host_threads <= 1) return m->host_pool;
  struct ocal_mpi_host_pool *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->workers = calloc((size_t)m->host_threads - 1, sizeof *p->workers);
  if (!p->workers || pthread_mutex_init(&p->lock, NULL) != 0) {
    free(p->workers);
    free(p);
    return NULL;
  }
  pthread_cond_init(&p->start, NULL);
  pthread_cond_init(&p->done, NULL);
  p->threads = 1;
  for (int t = 1; t < m->host_threads; t++) {
    worker_arg *w = malloc(sizeof *w);
    if (!w) break;
    w->pool = p;
    w->index = t;
    if (pthread_create(&p->workers[t - 1], NULL, worker, w) != 0) {
      free(w);
      break;
    }
    p->threads++;
  }
  m->host_pool = p;
  return p;
}

void ocal_mpi__host_reduce(ocal_mpi m, int tidx, int op, void *out, const void *const *in,
                           int nin, size_t n) {
  struct ocal_mpi_host_pool *p = pool(m);
  if (!p || p->threads == 1 || n < (size_t)BLOCK * 4) {
    reduce_range(tidx, op, out, in, nin, n, 0, 1);
    return;
  }
  pthread_mutex_lock(&p->lock);
  p->tidx = tidx;
  p->op = op;
  p->out = out;
  p->in = in;
  p->nin = nin;
  p->n = n;
  p->pending = p->threads - 1;
  p->gen++;
  pthread_cond_broadcast(&p->start);
  pthread_mutex_unlock(&p->lock);
  share(p, 0);
  pthread_mutex_lock(&p->lock);
  while (p->pending > 0) pthread_cond_wait(&p->done, &p->lock);
  pthread_mutex_unlock(&p->lock);
}
