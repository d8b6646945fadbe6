/* ocal — what src/fft/plan.c does around every engine: scales n reals of x, starting at real
 * element `offset`, by s (NumPy's norm= where the FFT engine does not do it), and makes a
 * staged C2R input Hermitian where NumPy reads only its Hermitian part. Built per real type
 * with -DT=<OpenCL C type>; grid-stride loops, so any launch size covers any count. */
#ifdef OCAL_NEED_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

__kernel void ocal_fft_scale(__global T *x, const ulong offset, const ulong n, const T s) {
  __global T *y = x + offset;
  for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) y[i] *= s;
}

/* C2R, before the engine, on the staged copy of the input (batch x n0 x n1 x h complex
 * numbers, h = n / 2 + 1): NumPy's irfftn transforms the other axes first and then keeps the
 * real part of the DC bin (and, for an even n, of the Nyquist bin) of each row, which is
 * reading only the Hermitian part of those two columns over the other axes (for 1-D rows:
 * their real parts). Engines differ on the rest (VkFFT's batched rows leak it into their
 * neighbours), so the columns are made Hermitian here: the bins at (i0, i1) and
 * (-i0, -i1) become (X + conj(X')) / 2 and its conjugate. `ncol` is 1 (column 0) or 2
 * (columns 0 and h - 1); one work-item takes each pair, the one with the lower index. */
__kernel void ocal_fft_c2r_hermitian(__global T *x, const ulong n0, const ulong n1, const ulong h,
                                     const ulong ncol, const ulong count) {
  for (ulong i = get_global_id(0); i < count; i += get_global_size(0)) {
    const ulong c = i % ncol == 0 ? 0 : h - 1;
    ulong r = i / ncol;
    const ulong i1 = r % n1;
    r /= n1;
    const ulong i0 = r % n0, b = r / n0;
    const ulong p0 = (n0 - i0) % n0, p1 = (n1 - i1) % n1;
    const ulong self = i0 * n1 + i1, other = p0 * n1 + p1;
    if (other < self) continue;
    const ulong at = 2 * ((b * n0 * n1 + self) * h + c);
    if (other == self) {
      x[at + 1] = (T)0;
      continue;
    }
    const ulong pat = 2 * ((b * n0 * n1 + other) * h + c);
    const T re = (x[at] + x[pat]) / (T)2, im = (x[at + 1] - x[pat + 1]) / (T)2;
    x[at] = re;
    x[at + 1] = im;
    x[pat] = re;
    x[pat + 1] = -im;
  }
}
