/* ocal — random numbers from the counter-based generator Philox-4x32-10 (Salmon et al.,
 * "Parallel random numbers: as easy as 1, 2, 3", SC'11). Element e of the stream (e = offset
 * + i) is a pure function of (seed, e), so any device, launch shape or split of the work
 * gives the same numbers. Built with -DR=float|double and -DDIST_UNIFORM | -DDIST_NORMAL;
 * f16 and bf16 outputs are drawn as f32 (-DR=float) and stored rounded to nearest even
 * (-DR_HALF, -DR_BF16), clamped to [lo, hi], the format's values inside [low, high), so that
 * rounding cannot reach high or fall below low.
 *
 * f32: counter e / 4 gives four 32-bit words; element e takes word e % 4 (uniform) or, for
 *      normals, the pair of words (e % 4) & ~1 and its neighbour through Box-Muller.
 * f64: counter e / 2; element e takes words 2(e % 2), 2(e % 2) + 1 as one 53-bit uniform;
 *      normals take all four words (two uniforms) of counter e / 2. */
#ifdef OCAL_NEED_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
/* Contracting a * b + c into fma would change results between devices. */
#pragma OPENCL FP_CONTRACT OFF

#include "prelude.cl"

inline uint4 ocal_philox4x32_10(uint4 c, uint2 k) {
  for (int r = 0; r < 10; r++) {
    if (r > 0) {
      k.x += 0x9E3779B9u;
      k.y += 0xBB67AE85u;
    }
    const uint lo0 = 0xD2511F53u * c.x, hi0 = mul_hi(0xD2511F53u, c.x);
    const uint lo1 = 0xCD9E8D57u * c.z, hi1 = mul_hi(0xCD9E8D57u, c.z);
    c = (uint4)(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
  }
  return c;
}

inline uint4 ocal_block(ulong counter, ulong seed) {
  return ocal_philox4x32_10((uint4)((uint)counter, (uint)(counter >> 32), 0u, 0u),
                            (uint2)((uint)seed, (uint)(seed >> 32)));
}

inline uint ocal_word(uint4 w, uint i) { return i == 0 ? w.x : i == 1 ? w.y : i == 2 ? w.z : w.w; }

#if defined(R_IS_DOUBLE)
/* [0, 1) and (0, 1] with 53 random bits. */
inline double ocal_u01(uint hi, uint lo) {
  return (double)(((ulong)hi << 21) ^ (ulong)(lo >> 11)) * 0x1.0p-53;
}
inline double ocal_u01_open0(uint hi, uint lo) {
  return (double)((((ulong)hi << 21) ^ (ulong)(lo >> 11)) + 1ul) * 0x1.0p-53;
}
#define PER_BLOCK 2
#else
inline float ocal_u01(uint w) { return (float)(w >> 8) * 0x1.0p-24f; }
inline float ocal_u01_open0(uint w) { return (float)((w >> 8) + 1u) * 0x1.0p-24f; }
#define PER_BLOCK 4
#endif

/* Uniform draws of every type are clamped to [lo, hi], the type's values in [low, high):
 * low + (high - low) * u can round up to high. */
#if defined(R_HALF) || defined(R_BF16) || defined(DIST_UNIFORM)
#define RANGE_ARGS , const R lo, const R hi
#define IN_RANGE(v) fmin(fmax((v), lo), hi)
#else
#define RANGE_ARGS
#define IN_RANGE(v) (v)
#endif
#if defined(R_HALF)
#define RS half
#define ST(p, i, v) vstore_half_rte((v), (i), (p))
#elif defined(R_BF16)
#define RS ushort
#define ST(p, i, v) ((p)[i] = ocal_bf16_round(v))
#else
#define RS R
#define ST(p, i, v) ((p)[i] = (v))
#endif

__kernel void ocal_random(__global RS *y, const ulong yoff, const ulong n, const ulong offset,
                          const ulong seed, const R p0, const R p1 RANGE_ARGS) {
  for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) {
    const ulong e = offset + i;
    const uint4 w = ocal_block(e / PER_BLOCK, seed);
    const uint lane = (uint)(e % PER_BLOCK);
#if defined(DIST_UNIFORM)
    /* p0 = low, p1 = high - low, or half of it (HALF_SPAN) where the whole would overflow. */
#if defined(R_IS_DOUBLE)
    const R u = ocal_u01(ocal_word(w, 2 * lane), ocal_word(w, 2 * lane + 1));
#else
    const R u = ocal_u01(ocal_word(w, lane));
#endif
#if defined(HALF_SPAN)
    ST(y, yoff + i, IN_RANGE((p0 + p1 * u) + p1 * u));
#else
    ST(y, yoff + i, IN_RANGE(p0 + p1 * u));
#endif
#else
    /* p0 = mean, p1 = stddev; Box-Muller on a pair of uniforms. */
#if defined(R_IS_DOUBLE)
    const R u1 = ocal_u01_open0(w.x, w.y), u2 = ocal_u01(w.z, w.w);
#else
    const uint pair = lane & 2u;
    const R u1 = ocal_u01_open0(ocal_word(w, pair)), u2 = ocal_u01(ocal_word(w, pair + 1));
#endif
    const R r = sqrt((R)-2 * log(u1));
    const R theta = (R)6.283185307179586476925 * u2;
    const R z = (lane & 1u) ? r * sin(theta) : r * cos(theta);
    ST(y, yoff + i, p0 + p1 * z);
#endif
  }
}
