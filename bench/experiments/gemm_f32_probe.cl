/* ocal — bench/experiments/gemm_f32_probe's cp.async kernel: exact FP32 C = A B (row-major, n a multiple
 * of 128, no alpha/beta) on CUDA cores, for comparison with cl/blas_gemm.cl's register-staged
 * pipeline (docs/blas-engines.md, "Exact FP32 past 0.9x"). NVIDIA only (inline PTX).
 *
 * A 256-item work-group computes a 128 x 128 block of C, 8 x 8 per work-item, like ocal's
 * kernel; the tiles of A (128 x BK) and B (BK x 128) keep the global layout in local memory
 * so that cp.async copies 16-byte pieces straight from global memory, with STAGES - 1 steps
 * of k in flight. A's values are read 4 k at a time along its rows. Options: -DBK, -DSTAGES,
 * -DWARP_ARR=1 (a warp's items as 8 x 4 instead of 16 x 2), -DROWI=1 (a work-item's rows
 * interleaved, i * 16 + ty, instead of runs of 4), -DPA -DPB (padding of the tiles' rows). */
#define ASM __asm__ volatile
#define INL static inline __attribute__((always_inline))
#define BM 128
#define BN 128
#define TM 8
#define TN 8
#define DX 16
#define DY 16
#define NT 256
#ifndef PA
#define PA 4
#endif
#ifndef PB
#define PB 4
#endif
#define LA (BK + PA)            /* the A tile: [BM][LA] */
#define LB (BN + PB)            /* the B tile: [BK][LB] */
#define SA (BM * LA)
#define SB (BK * LB)
#if ROWI
#define ROW(i) ((i) * DY + ty)
#else
#define ROW(i) (((i) / 4) * (DY * 4) + ty * 4 + (i) % 4)
#endif
INL uint smem_u32(__local const void *p) { return (uint)(ulong)p; }
INL void cp16(uint dst, __global const float *src) {
  ASM("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(dst), "l"((ulong)src) : "memory");
}
#define CP_COMMIT() ASM("cp.async.commit_group;" ::: "memory")
#define CP_WAIT_(n) ASM("cp.async.wait_group " #n ";" ::: "memory")
#define CP_WAIT(n) CP_WAIT_(n)

INL void issue(__global const float *a, uint lda, __global const float *b, uint ldb, uint kb,
               uint sa, uint sb, uint lid) {
#pragma unroll
  for (int i = 0; i < BM * BK / 4 / NT; i++) {
    uint e = lid + i * NT, r = e / (BK / 4), p = (e % (BK / 4)) * 4;
    cp16(sa + (r * LA + p) * 4, a + (ulong)r * lda + kb + p);
  }
#pragma unroll
  for (int i = 0; i < BK * BN / 4 / NT; i++) {
    uint e = lid + i * NT, r = e / (BN / 4), p = (e % (BN / 4)) * 4;
    cp16(sb + (r * LB + p) * 4, b + (ulong)(kb + r) * ldb + p);
  }
}

__kernel __attribute__((reqd_work_group_size(NT, 1, 1)))
void gemm_f32_probe_nn(__global const float *a, uint lda, __global const float *b, uint ldb,
           __global float *c, uint ldc, uint k) {
  __local float4 sm4[STAGES * (SA + SB) / 4];
  __local float *sm = (__local float *)sm4;
  const uint lid = get_local_id(0);
#if WARP_ARR
  const uint w = lid / 32, ln = lid % 32;
  const uint tx = (w % 2) * 8 + ln % 8, ty = (w / 2) * 4 + ln / 8;
#else
  const uint tx = lid % DX, ty = lid / DX;
#endif
  const uint col0 = get_group_id(0) * BN, row0 = get_group_id(1) * BM;
  a += (ulong)row0 * lda;
  b += col0;
  const uint base = smem_u32(sm);
  const uint nt = k / BK;
  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; i++)
#pragma unroll
    for (int j = 0; j < TN; j++) acc[i][j] = 0.f;
#pragma unroll
  for (int s = 0; s < STAGES - 1; s++) {
    if (s < nt) issue(a, lda, b, ldb, s * BK, base + s * SA * 4, base + (STAGES * SA + s * SB) * 4, lid);
    CP_COMMIT();
  }
  for (uint t = 0; t < nt; t++) {
    CP_WAIT(STAGES - 2);
    barrier(CLK_LOCAL_MEM_FENCE);
    {
      uint tn = t + STAGES - 1, s = tn % STAGES;
      if (tn < nt) issue(a, lda, b, ldb, tn * BK, base + s * SA * 4, base + (STAGES * SA + s * SB) * 4, lid);
      CP_COMMIT();
    }
    const uint s = t % STAGES;
    __local const float *as = sm + s * SA;
    __local const float *bs = sm + STAGES * SA + s * SB;
#pragma unroll
    for (int kq = 0; kq < BK / 4; kq++) {
      float4 av[TM];
#pragma unroll
      for (int i = 0; i < TM; i++)
        av[i] = *(__local const float4 *)(as + ROW(i) * LA + kq * 4);
#pragma unroll
      for (int kk = 0; kk < 4; kk++) {
        float bv[TN];
#pragma unroll
        for (int j4 = 0; j4 < TN / 4; j4++) {
          float4 v = *(__local const float4 *)(bs + (kq * 4 + kk) * LB + j4 * (DX * 4) + tx * 4);
          bv[j4 * 4 + 0] = v.s0; bv[j4 * 4 + 1] = v.s1; bv[j4 * 4 + 2] = v.s2; bv[j4 * 4 + 3] = v.s3;
        }
#pragma unroll
        for (int i = 0; i < TM; i++) {
          float x = kk == 0 ? av[i].s0 : kk == 1 ? av[i].s1 : kk == 2 ? av[i].s2 : av[i].s3;
#pragma unroll
          for (int j = 0; j < TN; j++) acc[i][j] = fma(x, bv[j], acc[i][j]);
        }
      }
    }
  }
#pragma unroll
  for (int i = 0; i < TM; i++) {
    uint row = row0 + ROW(i);
#pragma unroll
    for (int j4 = 0; j4 < TN / 4; j4++) {
      uint col = col0 + j4 * (DX * 4) + tx * 4;
      *(__global float4 *)(c + (ulong)row * ldc + col) =
          (float4)(acc[i][j4 * 4], acc[i][j4 * 4 + 1], acc[i][j4 * 4 + 2], acc[i][j4 * 4 + 3]);
    }
  }
}
