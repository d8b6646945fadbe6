/* ocal — a buffer's own kernels: fill and copy.
 * fill: every element of dst[offset .. offset + n) becomes value; built per element type with
 * -DT=<OpenCL C type>. copy (-DOCAL_COPY, T=uint): n 4-byte words from src + soff to
 * dst + doff, whatever the buffers' element type; with -DCOPY16 both offsets are multiples of
 * four words and the body moves 16 bytes a work-item. Grid-stride loops, so that any launch
 * size covers any n. */
#ifdef OCAL_NEED_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

__kernel void ocal_fill(__global T *dst, const ulong offset, const ulong n, const T value) {
  __global T *out = dst + offset;
  for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) out[i] = value;
}

#ifdef OCAL_COPY
__kernel void ocal_copy(__global const uint *src, const ulong soff, __global uint *dst,
                        const ulong doff, const ulong n) {
  const ulong gid = get_global_id(0), gsz = get_global_size(0);
  ulong done = 0;
#ifdef COPY16
  __global const uint4 *s4 = (__global const uint4 *)(src + soff);
  __global uint4 *d4 = (__global uint4 *)(dst + doff);
  const ulong n4 = n / 4;
  for (ulong i = gid; i < n4; i += gsz) d4[i] = s4[i];
  done = n4 * 4;
#endif
  for (ulong i = done + gid; i < n; i += gsz) dst[doff + i] = src[soff + i];
}
#endif
