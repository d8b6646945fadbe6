/* mlp_common — what the MLP examples share (mlp_train, mlp_train_mpi): the synthetic data,
 * the network's buffers and their initialisation. */
#ifndef OCAL_EXAMPLES_MLP_COMMON_H
#define OCAL_EXAMPLES_MLP_COMMON_H
#include <stddef.h>
#include <stdint.h>

#include <ocal.h>

#define CLASSES 10

typedef struct dataset {
  size_t n, dim;
  float *x;   /* n rows of dim features */
  int64_t *y; /* n labels in 0..9 */
} dataset;

/* splitmix64: a small, good generator, so the data is the same on every machine. */
uint64_t next_u64(uint64_t *s);

/* Makes n samples of the synthetic 10-class problem of `dim` features from the seed, the
 * samples numbered from `first`; returns 0, or -1 when out of memory. */
int make_synthetic(dataset *d, size_t n, size_t dim, uint64_t seed, uint64_t first);

typedef struct net {
  ocal_buffer w1, b1, w2, b2; /* {dim, hidden}, {hidden}, {hidden, 10}, {10} */
  ocal_buffer zero;           /* one 0, broadcast by ocal_where */
} net;

/* Work buffers of a forward and backward pass over `rows` samples. */
typedef struct pass {
  size_t rows;
  ocal_buffer h, z, loss, dh, mask, db1, db2;
} pass;

/* He initialisation of the weights from the seed (the same on every device), biases 0. */
ocal_status init_weights(net *m, uint64_t seed);
/* The network's buffers for dim inputs and `hidden` hidden units. */
ocal_status net_create(ocal_context ctx, net *m, size_t dim, size_t hidden);
/* Work buffers of a pass over `rows` samples. */
ocal_status pass_create(ocal_context ctx, pass *p, size_t rows, size_t hidden);
void pass_release(pass *p);

#endif
