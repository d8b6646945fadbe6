/* mlp_common — the synthetic data and the network's buffers of the MLP examples. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "mlp_common.h"

#define TRY(call)                                                                         \
  do {                                                                                    \
    ocal_status s_ = (call);                                                              \
    if (s_ != OCAL_OK) {                                                                  \
      fprintf(stderr, "mlp: %s failed: %s\n%s\n", #call, ocal_status_name(s_),          \
              ocal_last_error());                                                         \
      return s_;                                                                          \
    }                                                                                     \
  } while (0)


uint64_t next_u64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static double next_uniform(uint64_t *s) { return (double)(next_u64(s) >> 11) * 0x1p-53; }
static double next_normal(uint64_t *s) {
  double u = next_uniform(s), v = next_uniform(s);
  return sqrt(-2.0 * log(1.0 - u)) * cos(6.283185307179586 * v);
}

/* Ten classes, each a mixture of two prototype images (two ways to draw each class); a
 * sample is one of its class's prototypes, faint, under noise of unit variance. The
 * prototypes come from the seed, the samples from the seed and their index, so the
 * training set (indices 0..) and the held-out set (indices from 2^32) never share one. */
int make_synthetic(dataset *d, size_t n, size_t dim, uint64_t seed, uint64_t first) {
  enum { STYLES = 2 };
  /* Faint prototypes under unit noise: far apart in 784 dimensions, but the network has to
   * find them from a few thousand noisy samples. */
  const double signal = 0.25;
  float *proto = malloc(CLASSES * STYLES * dim * sizeof *proto);
  d->n = n;
  d->dim = dim;
  d->x = malloc(n * dim * sizeof *d->x);
  d->y = malloc(n * sizeof *d->y);
  if (!proto || !d->x || !d->y) {
    free(proto);
    return -1;
  }
  uint64_t s = seed;
  for (size_t i = 0; i < CLASSES * STYLES * dim; i++) proto[i] = (float)(signal * next_normal(&s));
  for (size_t i = 0; i < n; i++) {
    uint64_t r = seed ^ ((first + i) * 0xd1342543de82ef95ull);
    int64_t c = (int64_t)(next_u64(&r) % CLASSES);
    const float *p = proto + ((size_t)c * STYLES + next_u64(&r) % STYLES) * dim;
    for (size_t j = 0; j < dim; j++) d->x[i * dim + j] = p[j] + (float)next_normal(&r);
    d->y[i] = c;
  }
  free(proto);
  return 0;
}

/* He initialisation from the seed: W ~ N(0, 2 / fan_in), biases 0. The numbers are
 * ocal's counter-based stream, so every device starts from the same weights. */
ocal_status init_weights(net *m, uint64_t seed) {
  size_t n1, n2, dim, hidden, shape[OCAL_MAX_DIMS];
  int nd;
  TRY(ocal_buffer_get_shape(m->w1, &nd, shape));
  dim = shape[0];
  hidden = shape[1];
  TRY(ocal_buffer_get_numel(m->w1, &n1));
  TRY(ocal_buffer_get_numel(m->w2, &n2));
  TRY(ocal_random_normal(seed, 0, 0.0, sqrt(2.0 / (double)dim), m->w1));
  TRY(ocal_random_normal(seed, n1, 0.0, sqrt(2.0 / (double)hidden), m->w2));
  float zero = 0.0f;
  TRY(ocal_buffer_fill(m->b1, &zero));
  TRY(ocal_buffer_fill(m->b2, &zero));
  return OCAL_OK;
}

ocal_status net_create(ocal_context ctx, net *m, size_t dim, size_t hidden) {
  size_t s1[2] = {dim, hidden}, s2[2] = {hidden, CLASSES}, c = CLASSES, one = 1;
  TRY(ocal_buffer_create(ctx, OCAL_F32, 2, s1, &m->w1));
  TRY(ocal_buffer_create(ctx, OCAL_F32, 1, &hidden, &m->b1));
  TRY(ocal_buffer_create(ctx, OCAL_F32, 2, s2, &m->w2));
  TRY(ocal_buffer_create(ctx, OCAL_F32, 1, &c, &m->b2));
  TRY(ocal_buffer_zeros(ctx, OCAL_F32, 1, &one, &m->zero));
  return OCAL_OK;
}

ocal_status pass_create(ocal_context ctx, pass *p, size_t rows, size_t hidden) {
  size_t sh[2] = {rows, hidden}, sz[2] = {rows, CLASSES}, c = CLASSES;
  p->rows = rows;
  TRY(ocal_buffer_create(ctx, OCAL_F32, 2, sh, &p->h));
  TRY(ocal_buffer_create(ctx, OCAL_F32, 2, sz, &p->z));
  TRY(ocal_buffer_create(ctx, OCAL_F32, 1, &rows, &p->loss));
  TRY(ocal_buffer_create(ctx, OCAL_F32, 2, sh, &p->dh));
  TRY(ocal_buffer_create(ctx, OCAL_U8, 2, sh, &p->mask));
  TRY(ocal_buffer_create(ctx, OCAL_F32, 1, &hidden, &p->db1));
  TRY(ocal_buffer_create(ctx, OCAL_F32, 1, &c, &p->db2));
  return OCAL_OK;
}

void pass_release(pass *p) {
  ocal_buffer b[] = {p->h, p->z, p->loss, p->dh, p->mask, p->db1, p->db2};
  for (size_t i = 0; i < sizeof b / sizeof b[0]; i++) ocal_buffer_release(b[i]);
}

