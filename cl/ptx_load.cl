/* ocal — loads with NVIDIA cache hints, written once for every kernel that carries them
 * (cl/reduce.cl, cl/sparse_spmv.cl, cl/fft_fourstep.cl). A kernel takes this file with
 * `#include "ptx_load.cl"` (build-aux/embed-cl.sh inlines it) and defines its loads with the
 * macros below, only where its host asked for hints: inline PTX builds on NVIDIA's OpenCL
 * compiler alone, so the host asks only where the driver reports a PTX compute capability
 * (src/core/ptx_hints.c), and keeps plain loads elsewhere. Q is the qualifier text after
 * "ld.global", each with its dot (".cs", ".nc.L1::no_allocate.L2::256B"); "" is a plain
 * ld.global. */
#define OCAL_PTX_STR2(ocal_x) #ocal_x
#define OCAL_PTX_STR(ocal_x) OCAL_PTX_STR2(ocal_x)

/* static inline T NAME(__global const T *p): one element of type T, PTX type PT (f32, f64,
 * s32, s64, ...) in register class RC (f, d, r, l). */
#define OCAL_PTX_LOAD(NAME, T, Q, PT, RC)                                                   \
  static inline T NAME(__global const T *ocal_p) {                                          \
    T ocal_r;                                                                               \
    __asm__("ld.global" Q "." OCAL_PTX_STR(PT) " %0, [%1];"                                  \
            : "=" OCAL_PTX_STR(RC)(ocal_r)                                                  \
            : "l"(ocal_p));                                                                 \
    return ocal_r;                                                                          \
  }

/* RT NAME(__global const PT *p): 16 aligned bytes in one load of four 32-bit words, returned
 * as AS((uint4)(words)) (an as_<type>4 of the kernel's 16-byte vector type RT). */
#define OCAL_PTX_LOAD_V4(NAME, RT, PT, AS, Q)                                               \
  RT NAME(__global const PT *ocal_p) {                                                      \
    uint ocal_w0, ocal_w1, ocal_w2, ocal_w3;                                                \
    __asm__("ld.global" Q ".v4.u32 {%0, %1, %2, %3}, [%4];"                                  \
            : "=r"(ocal_w0), "=r"(ocal_w1), "=r"(ocal_w2), "=r"(ocal_w3)                    \
            : "l"(ocal_p));                                                                 \
    return AS((uint4)(ocal_w0, ocal_w1, ocal_w2, ocal_w3));                                 \
  }

/* static inline float2 NAME(__global const float2 *p): one complex f32 value, volatile (the
 * load stays where the kernel wrote it, as the FFT kernels' loads do). */
#define OCAL_PTX_LOAD_V2F32(NAME, Q)                                                        \
  static inline float2 NAME(__global const float2 *ocal_p) {                               \
    float2 ocal_r;                                                                          \
    __asm__ volatile("ld.global" Q ".v2.f32 {%0, %1}, [%2];"                                 \
                     : "=f"(ocal_r.x), "=f"(ocal_r.y)                                       \
                     : "l"(ocal_p));                                                        \
    return ocal_r;                                                                          \
  }
