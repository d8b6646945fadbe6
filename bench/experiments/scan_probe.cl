/* ocal — bench/experiments/scan_probe's copy kernels: the ceiling a scan's one read and one write of every
 * element is compared with (a float and a float4 per work-item). Not part of the library. */
__kernel void probe_copy1(__global const float *x, __global float *y) {
  const size_t i = get_global_id(0);
  y[i] = x[i];
}

__kernel void probe_copy4(__global const float4 *x, __global float4 *y) {
  const size_t i = get_global_id(0);
  y[i] = x[i];
}

/* Which of the macros a kernel could choose its variant by the device's compiler defines: the
 * extensions cl_khr_int64_base_atomics, cl_khr_subgroups, cl_nv_pragma_unroll, and
 * __NV_CL_C_VERSION and __opencl_c_subgroups (1 where defined). */
__kernel void probe_macros(__global int *out) {
  if (get_global_id(0) != 0) return;
  int m[5] = {0, 0, 0, 0, 0};
#ifdef cl_khr_int64_base_atomics
  m[0] = 1;
#endif
#ifdef cl_khr_subgroups
  m[1] = 1;
#endif
#ifdef cl_nv_pragma_unroll
  m[2] = 1;
#endif
#ifdef __NV_CL_C_VERSION
  m[3] = 1;
#endif
#ifdef __opencl_c_subgroups
  m[4] = 1;
#endif
  for (int i = 0; i < 5; i++) out[i] = m[i];
}
