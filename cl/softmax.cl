/* ocal — softmax, log-softmax and softmax cross-entropy (src/ops/softmax.c). Built per type:
 *   -DT=float|double      element type of logits and results (float for f16 and bf16,
 *                         with -DT_HALF or -DT_BF16: stored in 16 bits, computed in f32)
 *   -DL=<integer type>    label type (cross-entropy only); -DL_SIGNED when it is signed
 *   -DLOG_SOFTMAX         ocal_softmax_lines writes log-softmax instead
 *   -DHAS_LOSS / -DHAS_GRAD  which outputs the cross-entropy kernel writes
 * One work-item per line; lines of the block (outer, n, inner) start at o * n * inner + j
 * and step by inner. Offsets (views) come as arguments, counted in elements. */
#ifdef OCAL_NEED_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#include "prelude.cl"

/* Storage: TS elements, read as T by LD and written from T by ST. f16 goes through the core
 * vload_half/vstore_half_rte (no cl_khr_fp16 needed), bf16 through the prelude's
 * ocal_bf16_load and ocal_bf16_round. */
#if defined(T_HALF)
#define TS half
#define LD(p, i) vload_half((i), (p))
#define ST(p, i, v) vstore_half_rte((v), (i), (p))
#elif defined(T_BF16)
#define TS ushort
#define LD(p, i) ocal_bf16_load((p)[i])
#define ST(p, i, v) ((p)[i] = ocal_bf16_round(v))
#else
#define TS T
#define LD(p, i) ((p)[i])
#define ST(p, i, v) ((p)[i] = (v))
#endif

/* The largest element of a line. fmax ignores NaN, but a NaN still spreads through
 * exp(x - m) into the sum and so into every output of its line. */
#define LINE_MAX(p, n, stride, m)                                            \
  do {                                                                       \
    m = -INFINITY;                                                           \
    for (ulong i_ = 0; i_ < (n); i_++) m = fmax(m, LD(p, i_ * (stride)));   \
  } while (0)

__kernel void ocal_softmax_lines(__global const TS *x, ulong xoff, __global TS *y, ulong yoff,
                                 ulong outer, ulong n, ulong inner) {
  ulong lines = outer * inner;
  for (ulong line = get_global_id(0); line < lines; line += get_global_size(0)) {
    ulong o = line / inner, j = line - o * inner;
    ulong start = o * n * inner + j;
    __global const TS *px = x + xoff + start;
    __global TS *py = y + yoff + start;
    T m, s = (T)0;
    LINE_MAX(px, n, inner, m);
    for (ulong i = 0; i < n; i++) s += exp(LD(px, i * inner) - m);
#ifdef LOG_SOFTMAX
    T shift = m + log(s);
    for (ulong i = 0; i < n; i++) ST(py, i * inner, LD(px, i * inner) - shift);
#else
    T r = (T)1 / s;
    for (ulong i = 0; i < n; i++) ST(py, i * inner, exp(LD(px, i * inner) - m) * r);
#endif
  }
}

#ifdef L
/* One work-item per row of `classes` logits. grad may be the logits themselves: each
 * element is read before it is written, by the same work-item. */
__kernel void ocal_softmax_xent(__global const TS *z, ulong zoff, __global const L *labels,
                                ulong loff, __global TS *loss, ulong lossoff, __global TS *grad,
                                ulong goff, ulong rows, ulong classes) {
  for (ulong r = get_global_id(0); r < rows; r += get_global_size(0)) {
    __global const TS *pz = z + zoff + r * classes;
    L lab = labels[loff + r];
#ifdef L_SIGNED
    int valid = lab >= (L)0 && (ulong)lab < classes;
#else
    int valid = (ulong)lab < classes;
#endif
    ulong y = valid ? (ulong)lab : 0;
    T m, s = (T)0;
    LINE_MAX(pz, classes, 1, m);
    for (ulong i = 0; i < classes; i++) s += exp(LD(pz, i) - m);
    T bad = valid ? (T)0 : (T)NAN; /* adds NaN to the results of a row with a bad label */
#ifdef HAS_LOSS
    ST(loss, lossoff + r, m + log(s) - LD(pz, y) + bad);
#endif
#ifdef HAS_GRAD
    __global TS *pg = grad + goff + r * classes;
    T inv = (T)1 / s;
    for (ulong i = 0; i < classes; i++)
      ST(pg, i, exp(LD(pz, i) - m) * inv - (i == y ? (T)1 : (T)0) + bad);
#endif
  }
}
#endif
