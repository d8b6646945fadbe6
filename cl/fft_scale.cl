/* ocal — scales n reals of x, starting at real element `offset`, by s: NumPy's norm= where the
 * FFT engine does not do it (src/fft/plan.c). Built per real type with -DT=<OpenCL C type>;
 * a grid-stride loop, so any launch size covers any count. */
#ifdef OCAL_NEED_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

__kernel void ocal_fft_scale(__global T *x, const ulong offset, const ulong n, const T s) {
  __global T *y = x + offset;
  for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) y[i] *= s;
}
