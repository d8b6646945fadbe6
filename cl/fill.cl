/* ocal — fill: every element of dst[offset .. offset + n) becomes value.
 * Built per element type with -DT=<OpenCL C type>; a grid-stride loop so that any launch
 * size covers any n. */
#ifdef OCAL_NEED_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

__kernel void ocal_fill(__global T *dst, const ulong offset, const ulong n, const T value) {
  __global T *out = dst + offset;
  for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) out[i] = value;
}
