/* ocal — C's element of the tensor-core GEMM kernels (cl/gemm_mma.cl, cl/gemm_wgmma.cl) read
 * into f32 and written back from it. The including kernel defines C_T (C's storage type),
 * C_F16 or C_BF16 (C is half / bfloat16 bits, else f32) and INL, then takes this file with
 * `#include "gemm_c_io.cl"`, which build-aux/embed-cl.sh inlines. f16 is rounded to nearest
 * even by vstore_half's default rounding; bf16 to nearest even in integer arithmetic, a NaN
 * kept a quiet NaN (as cl/prelude.cl's ocal_bf16_round, here always inlined). */
INL float load_c(__global const C_T *p) {
#if defined(C_F16)
  return vload_half(0, (__global const half *)p);
#elif defined(C_BF16)
  return as_float((uint)*p << 16);
#else
  return *p;
#endif
}

INL void store_c(__global C_T *p, const float v) {
#if defined(C_F16)
  vstore_half(v, 0, (__global half *)p);
#elif defined(C_BF16)
  const uint u = as_uint(v);
  *p = (ushort)((u & 0x7fffffffu) > 0x7f800000u ? (u >> 16) | 0x40u
                                                  : (u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
#else
  *p = v;
#endif
}
