/* ocal — bench/scan_probe's copy kernels: the ceiling a scan's one read and one write of every
 * element is compared with (a float and a float4 per work-item). Not part of the library. */
__kernel void probe_copy1(__global const float *x, __global float *y) {
  const size_t i = get_global_id(0);
  y[i] = x[i];
}

__kernel void probe_copy4(__global const float4 *x, __global float4 *y) {
  const size_t i = get_global_id(0);
  y[i] = x[i];
}
