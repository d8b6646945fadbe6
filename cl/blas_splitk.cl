/* ocal — the second half of a split-K GEMM (src/blas/splitk.c): c = sum over the slices of
 * the partial products w[s][i] (alpha already applied by CLBlast) + beta * c. Built per
 * element type with -DT=float|double. beta == 0 must not read c (BLAS semantics: NaNs in
 * c go away), so that case is a flag rather than a multiplication. */
#ifdef OCAL_NEED_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

__kernel void ocal_splitk_sum(__global T *c, const ulong c_offset, __global const T *w,
                              const ulong mn, const uint slices, const T beta,
                              const int read_c) {
  __global T *out = c + c_offset;
  for (ulong i = get_global_id(0); i < mn; i += get_global_size(0)) {
    T acc = w[i];
    for (uint s = 1; s < slices; s++) acc += w[(ulong)s * mn + i];
    out[i] = read_c ? acc + beta * out[i] : acc;
  }
}
