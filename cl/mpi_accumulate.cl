/* libocal-mpi: adds (or takes the max or min of) a received chunk into a part of a buffer.
 * Built per element type and operation with -DT=float|double|int|long and -DOCAL_OP_SUM,
 * -DOCAL_OP_MAX or -DOCAL_OP_MIN; -DOCAL_FLOAT for floating types (fmax/fmin, whose NaN rule
 * is that of the host reference: a NaN loses to a number). */
#ifdef OCAL_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#if defined(OCAL_OP_SUM)
#define OCAL_COMBINE(a, b) ((a) + (b))
#elif defined(OCAL_OP_MAX) && defined(OCAL_FLOAT)
#define OCAL_COMBINE(a, b) fmax((a), (b))
#elif defined(OCAL_OP_MIN) && defined(OCAL_FLOAT)
#define OCAL_COMBINE(a, b) fmin((a), (b))
#elif defined(OCAL_OP_MAX)
#define OCAL_COMBINE(a, b) max((a), (b))
#else
#define OCAL_COMBINE(a, b) min((a), (b))
#endif

/* acc[acc_off + i] = acc[acc_off + i] (op) in[in_off + i] for i < n, grid-stride. */
__kernel void ocal_mpi_accumulate(__global T *acc, const ulong acc_off, __global const T *in,
                                  const ulong in_off, const ulong n) {
  for (ulong i = get_global_id(0); i < n; i += get_global_size(0))
    acc[acc_off + i] = OCAL_COMBINE(acc[acc_off + i], in[in_off + i]);
}

/* The node-local path's reduction, in a fixed order so that every rank gets the same bits:
 * dst[dst_off + i] = x_0 (op) x_1 (op) ... x_{nranks-1}, where x_me is own[own_off + i] and
 * the peers' x_k are in scratch, one chunk of `stride` elements each in rank order with
 * this rank's left out, from scr_off. dst may be own (in place). */
__kernel void ocal_mpi_reduce_ordered(__global T *dst, const ulong dst_off,
                                      __global const T *own, const ulong own_off,
                                      __global const T *scr, const ulong scr_off,
                                      const ulong stride, const uint nranks, const uint me,
                                      const ulong n) {
  for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) {
    T v = me == 0 ? own[own_off + i] : scr[scr_off + i];
    for (uint k = 1; k < nranks; k++) {
      T x = k == me ? own[own_off + i] : scr[scr_off + (k < me ? k : k - 1) * stride + i];
      v = OCAL_COMBINE(v, x);
    }
    dst[dst_off + i] = v;
  }
}
