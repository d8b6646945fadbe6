/* ocal — R2C and C2R through a C2C transform of the same lengths (src/fft/viac2c.c), for the
 * shapes the engines refuse as real transforms (VkFFT on CPU devices: long odd lengths).
 * Built per real type with -DT=<OpenCL C type>. Offsets and counts are in elements of T
 * (a complex number is two); every kernel is a grid-stride loop, so any launch size covers
 * any count. `z` is the plan's complex scratch: batch x n0 x n1 x n complex numbers, where
 * n is the contiguous length and n0, n1 the outer lengths (1 where the transform has fewer
 * dimensions); the real transform's complex side keeps h = n / 2 + 1 of the n. */
#ifdef OCAL_NEED_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

/* R2C, before: z = x + 0i for the `count` reals of x. */
__kernel void ocal_fft_r2c_widen(__global const T *x, const ulong x_off, __global T *z,
                                 const ulong count) {
  for (ulong i = get_global_id(0); i < count; i += get_global_size(0)) {
    z[2 * i] = x[x_off + i];
    z[2 * i + 1] = (T)0;
  }
}

/* R2C, after: the first h bins of each of the `rows` rows of n bins. */
__kernel void ocal_fft_r2c_pick(__global const T *z, __global T *y, const ulong y_off,
                                const ulong n, const ulong h, const ulong rows) {
  const ulong count = rows * h;
  for (ulong i = get_global_id(0); i < count; i += get_global_size(0)) {
    const ulong src = (i / h) * n + i % h;
    y[y_off + 2 * i] = z[2 * src];
    y[y_off + 2 * i + 1] = z[2 * src + 1];
  }
}

/* C2R, before: the full spectrum from its h stored bins per row, by conjugate symmetry:
 * X[b][i0][i1][j] = conj(X[b][-i0 mod n0][-i1 mod n1][n - j]) for j >= h. */
__kernel void ocal_fft_c2r_expand(__global const T *x, const ulong x_off, __global T *z,
                                  const ulong n0, const ulong n1, const ulong n, const ulong h,
                                  const ulong count) {
  for (ulong i = get_global_id(0); i < count; i += get_global_size(0)) {
    const ulong j = i % n;
    ulong r = i / n;
    const ulong i1 = r % n1;
    r /= n1;
    const ulong i0 = r % n0;
    const ulong b = r / n0;
    T re, im;
    if (j < h) {
      const ulong src = ((b * n0 + i0) * n1 + i1) * h + j;
      re = x[x_off + 2 * src];
      im = x[x_off + 2 * src + 1];
    } else {
      const ulong m0 = (n0 - i0) % n0, m1 = (n1 - i1) % n1;
      const ulong src = ((b * n0 + m0) * n1 + m1) * h + (n - j);
      re = x[x_off + 2 * src];
      im = -x[x_off + 2 * src + 1];
    }
    z[2 * i] = re;
    z[2 * i + 1] = im;
  }
}

/* C2R, after: the real parts of the `count` complex numbers of z. */
__kernel void ocal_fft_c2r_real(__global const T *z, __global T *y, const ulong y_off,
                                const ulong count) {
  for (ulong i = get_global_id(0); i < count; i += get_global_size(0)) y[y_off + i] = z[2 * i];
}
