/* ocal — f64 GEMM on NVIDIA's double-precision tensor cores through inline PTX (mma.sync
 * .f64, compute capability 8.0 and up): C = alpha op(A) op(B) + beta C, row-major, with the
 * conventions of ocal's other GEMM kernels (cl/blas_gemm.cl, cl/gemm_mma.cl): op(A) is m x k,
 * stored m x k (TA=0) or k x m (TA=1) with row stride lda; op(B) is k x n, stored k x n (TB=0)
 * or n x k (TB=1) with row stride ldb; C is m x n with row stride ldc; offsets and strides
 * count elements; launch z = batch entry x slices of k. Every product term is a double FMA on
 * the tensor cores (IEEE double, no reduced precision). docs/tensor-cores.md has the design.
 *
 * Build options (every one has a default):
 *   -DTA=0|1 -DTB=0|1: the transposes.
 *   -DBM -DBN -DBK: the block tile (128 x 128 x 8); -DWARPS_M -DWARPS_N: its warps (2 x 4),
 *     each warp a (BM / WARPS_M) x (BN / WARPS_N) piece of C, multiples of 16 x 16.
 *   -DSHAPE=884|1684|1688|16816: the instruction, mma.sync m8n8k4 (8.0 and up) or m16n8k4 /
 *     m16n8k8 / m16n8k16 (9.0 and up), all .f64.
 *   -DA_BY_ROWS=1: a warp loads A's fragments for one pair of row groups at a time, just before
 *     their products (B's for the whole k step), so that fewer fragments are live at once; else
 *     both for the whole k step.
 *   -DSTAGES=2..8: local stages filled by cp.async, STAGES - 1 k steps in flight; stages past
 *     LOCAL_MAX bytes (48 KiB: NVIDIA's OpenCL limit; up to the hardware's 227 KiB where the
 *     program is rebuilt from PTX, -DOCAL_PTX_TARGET=sm_90a) are dropped at build time.
 *   -DVEC=1: every offset, leading dimension and batch stride is even, so that an operand whose
 *     stored rows are the local tile's rows (A with TA=1, B with TB=0) moves in 16-byte pieces
 *     and C is written in 16-byte pieces; else 8-byte ones.
 *   -DA_MK=0|1: A kept in its stored m x k layout (below); the default where that applies (TA=0,
 *     VEC=1, BK=8).
 *   -DRASTER=G (0: off): blocks run down groups of G block rows, so that what runs at once
 *     shares A's and B's panels in L2.
 *   -DSMEM_ADDR, -DASM_KW, -DINL, -DMMA_EMULATE=1: as in cl/gemm_mma.cl (the emulation runs the
 *     instructions in OpenCL C on any device with doubles, for the tests).
 *
 * Why this layout: local tiles are k-major for both operands (As[k][m], Bs[k][n]), whatever
 * the global layout: 8-byte cp.async copies transpose a k-contiguous operand on the way in.
 * Inside a warp, the 8 rows (columns) a fragment's lane groups read are spaced 2 apart, so
 * that a lane's fragments of two neighbouring row (column) groups are one 16-byte local load;
 * a row stride of BM (BN) + 4 doubles puts the 8 lanes of each quarter warp on distinct banks.
 * The same spacing gives each lane 4 consecutive columns of C per row.
 *
 * A_MK: an A stored m x k (TA=0) would be transposed by 8-byte copies, which move half as
 * many bytes a copy as the 16-byte ones; instead its tile keeps the stored layout, rows of
 * BK = 8 doubles, two rows a 128-byte line, and moves in 16-byte pieces. The 16-byte chunks of
 * line L sit XOR-swizzled by 2 (L mod 4), so that the 16 lanes of a half warp, which read one
 * k column of rows 2 apart, hit 8 distinct chunks (mk_off). */

#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#ifndef TA
#define TA 0
#endif
#ifndef TB
#define TB 0
#endif
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 8
#endif
#ifndef WARPS_M
#define WARPS_M 2
#endif
#ifndef WARPS_N
#define WARPS_N 4
#endif
#ifndef SHAPE
#define SHAPE 884
#endif
#ifndef STAGES
#define STAGES 2
#endif
#ifndef VEC
#define VEC 0
#endif
#ifndef A_BY_ROWS
#define A_BY_ROWS 0
#endif
#ifndef RASTER
#define RASTER 0
#endif
#ifndef SMEM_ADDR
#define SMEM_ADDR 2
#endif
#ifndef MMA_EMULATE
#define MMA_EMULATE 0
#endif
#ifndef LOCAL_MAX
#define LOCAL_MAX 49152
#endif

#if SHAPE == 884
#define MH 1 /* row groups of 8 an instruction covers */
#define KQ 1 /* k quarters of 4 an instruction covers */
#elif SHAPE == 1684
#define MH 2
#define KQ 1
#elif SHAPE == 1688
#define MH 2
#define KQ 2
#elif SHAPE == 16816
#define MH 2
#define KQ 4
#else
#error "SHAPE is 884, 1684, 1688 or 16816"
#endif
#define KSTEP (4 * KQ)

#define NTHREADS (32 * WARPS_M * WARPS_N)
#define WM (BM / WARPS_M)
#define WN (BN / WARPS_N)
#define RG (WM / 8) /* row groups of 8 in a warp's piece */
#define CG (WN / 8) /* column groups of 8 */
#if WM % 16 || WN % 16 || BK % KSTEP || BM % WARPS_M || BN % WARPS_N
#error "each warp's piece must be a multiple of 16 x 16 and BK of the instruction's k"
#endif

#include "gemm_tc_common.cl"

#ifndef A_MK
#define A_MK (!TA && VEC && BK == 8)
#endif
#if A_MK && (TA || !VEC || BK != 8)
#error "A_MK takes TA=0, VEC=1 and BK=8"
#endif

/* Local tiles, k-major, rows padded by 4 doubles (see above); A's m x k where A_MK. */
#define SA (BM + 4)
#define SB (BN + 4)
#if A_MK
#define A_TILE (BM * BK)
#else
#define A_TILE (BK * SA)
#endif
#define B_TILE (BK * SB)
#define STAGE (A_TILE + B_TILE)
/* Stages past LOCAL_MAX bytes are dropped, one at a time. */
#if STAGES > 8 || STAGES < 2
#error "STAGES is 2 to 8"
#endif
#if STAGES == 8 && 8 * STAGE * 8 > LOCAL_MAX
#undef STAGES
#define STAGES 7
#endif
#if STAGES == 7 && 7 * STAGE * 8 > LOCAL_MAX
#undef STAGES
#define STAGES 6
#endif
#if STAGES == 6 && 6 * STAGE * 8 > LOCAL_MAX
#undef STAGES
#define STAGES 5
#endif
#if STAGES == 5 && 5 * STAGE * 8 > LOCAL_MAX
#undef STAGES
#define STAGES 4
#endif
#if STAGES == 4 && 4 * STAGE * 8 > LOCAL_MAX
#undef STAGES
#define STAGES 3
#endif
#if STAGES == 3 && 3 * STAGE * 8 > LOCAL_MAX
#undef STAGES
#define STAGES 2
#endif
/* cp.async.wait_group takes a literal: STAGES - 2. */
#if STAGES == 2
#define WAIT_PENDING 0
#elif STAGES == 3
#define WAIT_PENDING 1
#elif STAGES == 4
#define WAIT_PENDING 2
#elif STAGES == 5
#define WAIT_PENDING 3
#elif STAGES == 6
#define WAIT_PENDING 4
#elif STAGES == 7
#define WAIT_PENDING 5
#else
#define WAIT_PENDING 6
#endif

/* Elements an operand's copy moves at once: 2 (16 bytes) where its stored rows are the local
 * tile's k rows and VEC says pieces are aligned, else 1 (8 bytes, also the transposing copy). */
#define WA ((TA || A_MK) && VEC ? 2 : 1)
#define WB (!TB && VEC ? 2 : 1)
#define PA (BM * BK / WA)
#define PB (BN * BK / WB)
#define NPA ((PA + NTHREADS - 1) / NTHREADS)
#define NPB ((PB + NTHREADS - 1) / NTHREADS)

#if MMA_EMULATE
/* The instruction in OpenCL C with the PTX ISA's fragment layout (lane = 4 g + t): A is
 * (8 MH) x KSTEP, register a[h + MH q] at (g + 8 h, t + 4 q); B is KSTEP x 8, b[q] at
 * (t + 4 q, g); D is (8 MH) x 8, d[2 h + e] at (g + 8 h, 2 t + e). A warp of 32 consecutive
 * work-items exchanges its fragments through EMU_WARP doubles of local memory. */
#define EMU_A (8 * MH * KSTEP)
#define EMU_WARP (EMU_A + KSTEP * 8)
#define EMU_DECL , __local double *emu
#define EMU_ARG , emu
INL void emu_mma(double *d, const double *a, const double *b, __local double *emu,
                 const uint lane) {
  const uint g = lane >> 2, t = lane & 3;
  __local double *A = emu, *B = emu + EMU_A;
  for (int h = 0; h < MH; h++)
    for (int q = 0; q < KQ; q++) A[(g + 8 * h) * KSTEP + t + 4 * q] = a[h + MH * q];
  for (int q = 0; q < KQ; q++) B[(t + 4 * q) * 8 + g] = b[q];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = 0; h < MH; h++)
    for (int e = 0; e < 2; e++) {
      double s = d[2 * h + e];
      for (int kk = 0; kk < KSTEP; kk++)
        s = fma(A[(g + 8 * h) * KSTEP + kk], B[kk * 8 + 2 * t + e], s);
      d[2 * h + e] = s;
    }
  barrier(CLK_LOCAL_MEM_FENCE);
}
#define MMA(d, a, b) emu_mma(d, a, b, emu, lane)
#else
#define EMU_DECL
#define EMU_ARG
/* D = A B + D; inputs and outputs separate operands, as cl/gemm_mma.cl does. */
#if SHAPE == 884
#define MMA(d, a, b)                                                                           \
  ASM("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%4,%5};"         \
      : "=d"(d[0]), "=d"(d[1])                                                                 \
      : "d"(a[0]), "d"(b[0]), "d"(d[0]), "d"(d[1]))
#elif SHAPE == 1684
#define MMA(d, a, b)                                                                           \
  ASM("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, "       \
      "{%7,%8,%9,%10};"                                                                        \
      : "=d"(d[0]), "=d"(d[1]), "=d"(d[2]), "=d"(d[3])                                         \
      : "d"(a[0]), "d"(a[1]), "d"(b[0]), "d"(d[0]), "d"(d[1]), "d"(d[2]), "d"(d[3]))
#elif SHAPE == 1688
#define MMA(d, a, b)                                                                           \
  ASM("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "       \
      "{%8,%9}, {%10,%11,%12,%13};"                                                            \
      : "=d"(d[0]), "=d"(d[1]), "=d"(d[2]), "=d"(d[3])                                         \
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]), "d"(d[0]),           \
        "d"(d[1]), "d"(d[2]), "d"(d[3]))
#else
#define MMA(d, a, b)                                                                           \
  ASM("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, "                     \
      "{%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, {%16,%17,%18,%19};"                     \
      : "=d"(d[0]), "=d"(d[1]), "=d"(d[2]), "=d"(d[3])                                         \
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]), \
        "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]), "d"(d[0]), "d"(d[1]), "d"(d[2]), "d"(d[3]))
#endif
#endif /* MMA_EMULATE */

/* One cp.async of W doubles (8 or 16 bytes); elements past nv are zero-filled, and a piece
 * wholly outside the matrix (nv 0) reads nothing from a valid address. */
#if MMA_EMULATE
#define CP_ASYNC(W, dst, src, nv)                                                              \
  do {                                                                                         \
    __local double *d_ = (__local double *)(emu_sm + (dst));                                   \
    for (uint i_ = 0; i_ < (W); i_++) d_[i_] = i_ < (nv) ? (src)[i_] : 0.0;                    \
  } while (0)
#define CP_COMMIT()
#define CP_WAIT(n)
#else
/* W is a constant expression: the branch folds at build time. Both sizes go through L1
 * (.ca): 16-byte .cg copies read L2 at half the rate on an H200 (docs/tensor-cores.md). */
#define CP_ASYNC(W, dst, src, nv)                                                              \
  do {                                                                                         \
    if ((W) == 2) CP_ASYNC_2(dst, src, nv);                                                    \
    else CP_ASYNC_1(dst, src, nv);                                                             \
  } while (0)
#define CP_ASYNC_1(dst, src, nv)                                                               \
  ASM("cp.async.ca.shared.global [%0], [%1], 8, %2;"                                          \
      :                                                                                        \
      : "r"(dst), "l"((ulong)(src)), "r"((nv) * 8u)                                            \
      : "memory")
#define CP_ASYNC_2(dst, src, nv)                                                               \
  ASM("cp.async.ca.shared.global [%0], [%1], 16, %2;"                                         \
      :                                                                                        \
      : "r"(dst), "l"((ulong)(src)), "r"((nv) * 8u)                                            \
      : "memory")
#define CP_COMMIT() ASM("cp.async.commit_group;" ::: "memory")
#define CP_WAIT(n) CP_WAIT_(n)
#define CP_WAIT_(n) ASM("cp.async.wait_group " #n ";" ::: "memory")
#endif

#if MMA_EMULATE
#define EMU_SM_DECL , __local uchar *emu_sm
#define EMU_SM_ARG , emu_sm
#else
#define EMU_SM_DECL
#define EMU_SM_ARG
#endif

/* The byte offset of A(mm, kk) in an A_MK tile: line mm / 2, 16-byte chunk 4 (mm % 2) + kk / 2
 * XOR-swizzled by 2 (line mod 4). */
INL uint mk_off(const uint mm, const uint kk) {
  const uint chunk = (((mm & 1u) << 2) | (kk >> 1)) ^ (((mm >> 1) & 3u) << 1);
  return (mm >> 1) * 128u + chunk * 16u + (kk & 1u) * 8u;
}

/* Copies k step kb of A and B into the stage at shared addresses sa, sb (local tiles As[k][m],
 * or A's m x k where A_MK, and Bs[k][n]). Pieces are numbered so that consecutive work-items
 * read consecutive addresses. */
INL void issue_tiles(__global const double *a, const uint lda, __global const double *b,
                     const uint ldb, const uint row0, const uint col0, const uint kb,
                     const uint m, const uint n, const uint kend, const uint lid, const uint sa,
                     const uint sb EMU_SM_DECL) {
#pragma unroll
  for (int i = 0; i < NPA; i++) {
    const uint p = lid + (uint)i * NTHREADS;
    if (PA % NTHREADS && p >= PA) break;
#if TA /* stored k x m: rows of the tile */
    const uint kk = p / (BM / WA), mm = (p % (BM / WA)) * WA;
    const uint gk = kb + kk, gm = row0 + mm;
    const uint nv = gk < kend && gm < m ? min((uint)WA, m - gm) : 0u;
    __global const double *src = nv ? a + (ulong)gk * lda + gm : a;
    const uint dst = (kk * SA + mm) * 8u;
#elif A_MK /* stored m x k, kept so: two k a piece */
    const uint mm = p / (BK / 2), kk = (p % (BK / 2)) * 2;
    const uint gk = kb + kk, gm = row0 + mm;
    const uint nv = gk < kend && gm < m ? min(2u, kend - gk) : 0u;
    __global const double *src = nv ? a + (ulong)gm * lda + gk : a;
    const uint dst = mk_off(mm, kk);
#else /* stored m x k: one element, transposed */
    const uint mm = p / BK, kk = p % BK;
    const uint gk = kb + kk, gm = row0 + mm;
    const uint nv = gk < kend && gm < m ? 1u : 0u;
    __global const double *src = nv ? a + (ulong)gm * lda + gk : a;
    const uint dst = (kk * SA + mm) * 8u;
#endif
    CP_ASYNC(WA, sa + dst, src, nv);
  }
#pragma unroll
  for (int i = 0; i < NPB; i++) {
    const uint p = lid + (uint)i * NTHREADS;
    if (PB % NTHREADS && p >= PB) break;
#if !TB /* stored k x n: rows of the tile */
    const uint kk = p / (BN / WB), nn = (p % (BN / WB)) * WB;
    const uint gk = kb + kk, gn = col0 + nn;
    const uint nv = gk < kend && gn < n ? min((uint)WB, n - gn) : 0u;
    __global const double *src = nv ? b + (ulong)gk * ldb + gn : b;
#else /* stored n x k: one element, transposed */
    const uint nn = p / BK, kk = p % BK;
    const uint gk = kb + kk, gn = col0 + nn;
    const uint nv = gk < kend && gn < n ? 1u : 0u;
    __global const double *src = nv ? b + (ulong)gn * ldb + gk : b;
#endif
    CP_ASYNC(WB, sb + (kk * SB + nn) * 8u, src, nv);
  }
}

/* A(mm, kk) of an A_MK tile. */
INL double a_mk(__local const double *as, const uint mm, const uint kk) {
  return *(__local const double *)((__local const uchar *)as + mk_off(mm, kk));
}

/* A warp's products for one stage. acc[r][c] is row group r, column group c: lane (g, t)
 * holds its rows wr + 16 (r / 2) + 2 g + r % 2, columns wc + 16 (c / 2) + 2 (2 t + e) + c % 2
 * for e = 0, 1. */
INL void mma_stage(__local const double *as, __local const double *bs, const uint wr,
                   const uint wc, const uint lane, double acc[RG][CG][2] EMU_DECL) {
  const uint g = lane >> 2, t = lane & 3;
#pragma unroll
  for (uint ks = 0; ks < BK; ks += KSTEP) {
    double af[RG][KQ], bf[CG][KQ];
#pragma unroll
    for (uint q = 0; q < KQ; q++) {
      const uint kk = ks + 4 * q + t;
#if !A_BY_ROWS
#pragma unroll
      for (uint r = 0; r < RG; r += 2) {
#if A_MK
        af[r][q] = a_mk(as, wr + 8 * r + 2 * g, kk);
        af[r + 1][q] = a_mk(as, wr + 8 * r + 2 * g + 1, kk);
#else
        const double2 v = *(__local const double2 *)(as + kk * SA + wr + 8 * r + 2 * g);
        af[r][q] = v.s0;
        af[r + 1][q] = v.s1;
#endif
      }
#endif
#pragma unroll
      for (uint c = 0; c < CG; c += 2) {
        const double2 v = *(__local const double2 *)(bs + kk * SB + wc + 8 * c + 2 * g);
        bf[c][q] = v.s0;
        bf[c + 1][q] = v.s1;
      }
    }
#pragma unroll
    for (uint r = 0; r < RG; r += MH) {
#if A_BY_ROWS /* row groups r and r + 1 (one 16-byte load holds both), just before their use */
      if (r % 2 == 0)
#pragma unroll
        for (uint q = 0; q < KQ; q++) {
#if A_MK
          af[r][q] = a_mk(as, wr + 8 * r + 2 * g, ks + 4 * q + t);
          af[r + 1][q] = a_mk(as, wr + 8 * r + 2 * g + 1, ks + 4 * q + t);
#else
          const double2 v =
              *(__local const double2 *)(as + (ks + 4 * q + t) * SA + wr + 8 * r + 2 * g);
          af[r][q] = v.s0;
          af[r + 1][q] = v.s1;
#endif
        }
#endif
#pragma unroll
      for (uint c = 0; c < CG; c++) {
        double a[MH * KQ], d[2 * MH];
#pragma unroll
        for (uint q = 0; q < KQ; q++)
#pragma unroll
          for (uint h = 0; h < MH; h++) a[h + MH * q] = af[r + h][q];
#pragma unroll
        for (uint h = 0; h < MH; h++) d[2 * h] = acc[r + h][c][0], d[2 * h + 1] = acc[r + h][c][1];
        MMA(d, a, bf[c]);
#pragma unroll
        for (uint h = 0; h < MH; h++) acc[r + h][c][0] = d[2 * h], acc[r + h][c][1] = d[2 * h + 1];
      }
    }
  }
}

__kernel __attribute__((reqd_work_group_size(NTHREADS, 1, 1))) void ocal_gemm_dmma(
    __global const double *a, const ulong a_off, const uint lda, const ulong a_stride,
    __global const double *b, const ulong b_off, const uint ldb, const ulong b_stride,
    __global double *c, const ulong c_off, const uint ldc, const ulong c_stride, const uint m,
    const uint n, const uint k, const uint kc, const uint slices, const double alpha,
    const double beta, const int read_c) {
  __local double2 smem[(STAGES * STAGE + 1) / 2];
  __local double *const sm = (__local double *)smem;

  const uint lid = get_local_id(0), lane = lid & 31, warp = lid >> 5;
  const uint wr = (warp % WARPS_M) * WM, wc = (warp / WARPS_M) * WN;
  uint bx, by;
  block_of(get_group_id(1) * get_num_groups(0) + get_group_id(0), get_num_groups(0),
           get_num_groups(1), &bx, &by);
  const uint col0 = bx * BN, row0 = by * BM;
  const uint z = get_group_id(2), entry = z / slices, slice = z % slices;
  a += a_off + entry * a_stride;
  b += b_off + entry * b_stride;
  c += c_off + z * c_stride;
  const uint kbeg = slice * kc, kend = min(k, kbeg + kc);
  const uint ntiles = kend > kbeg ? (kend - kbeg + BK - 1) / BK : 0;
  const uint base = smem_u32(sm);
#if MMA_EMULATE
  __local double emu_all[WARPS_M * WARPS_N * EMU_WARP];
  __local double *const emu = emu_all + warp * EMU_WARP;
  __local uchar *const emu_sm = (__local uchar *)sm;
#endif

  double acc[RG][CG][2];
#pragma unroll
  for (uint r = 0; r < RG; r++)
#pragma unroll
    for (uint j = 0; j < CG; j++) acc[r][j][0] = 0.0, acc[r][j][1] = 0.0;

  /* STAGES - 1 k steps in flight: step t + STAGES - 1 goes into the stage step t - 1 used,
   * after the barrier that says every warp has finished with it; one commit a step (empty past
   * the end), so that "all but the newest STAGES - 2 groups" is always step t. */
#pragma unroll
  for (uint s = 0; s < STAGES - 1; s++) {
    if (s < ntiles) {
      const uint st = base + s * STAGE * 8u;
      issue_tiles(a, lda, b, ldb, row0, col0, kbeg + s * BK, m, n, kend, lid, st,
                  st + A_TILE * 8u EMU_SM_ARG);
    }
    CP_COMMIT();
  }
  uint cur = 0, nxt = STAGES - 1;
  for (uint t = 0; t < ntiles; t++) {
    CP_WAIT(WAIT_PENDING);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t + STAGES - 1 < ntiles) {
      const uint st = base + nxt * STAGE * 8u;
      issue_tiles(a, lda, b, ldb, row0, col0, kbeg + (t + STAGES - 1) * BK, m, n, kend, lid, st,
                  st + A_TILE * 8u EMU_SM_ARG);
    }
    CP_COMMIT();
    mma_stage(sm + cur * STAGE, sm + cur * STAGE + A_TILE, wr, wc, lane, acc EMU_ARG);
    cur = cur + 1 == STAGES ? 0 : cur + 1;
    nxt = nxt + 1 == STAGES ? 0 : nxt + 1;
  }
  CP_WAIT(0);

  /* Lane (g, t) holds 4 consecutive columns of each row: (c 2p, e 0), (2p + 1, 0), (2p, 1),
   * (2p + 1, 1) at wc + 16 p + 4 t. */
  const uint g = lane >> 2, tq = lane & 3;
#pragma unroll
  for (uint r = 0; r < RG; r++) {
    const uint row = row0 + wr + 16 * (r / 2) + 2 * g + r % 2;
    if (row >= m) continue;
#pragma unroll
    for (uint p = 0; p < CG / 2; p++) {
      const uint col = col0 + wc + 16 * p + 4 * tq;
      __global double *out = c + (ulong)row * ldc + col;
      const double v[4] = {alpha * acc[r][2 * p][0], alpha * acc[r][2 * p + 1][0],
                           alpha * acc[r][2 * p][1], alpha * acc[r][2 * p + 1][1]};
#if VEC
      if (col + 3 < n) { /* VEC: ldc and the offset are even, so 16-byte aligned */
        double2 o0 = (double2)(v[0], v[1]), o1 = (double2)(v[2], v[3]);
        if (read_c) {
          o0 += beta * *(__global double2 *)out;
          o1 += beta * *(__global double2 *)(out + 2);
        }
        *(__global double2 *)out = o0;
        *(__global double2 *)(out + 2) = o1;
        continue;
      }
#endif
#pragma unroll
      for (uint e = 0; e < 4; e++)
        if (col + e < n) out[e] = read_c ? v[e] + beta * out[e] : v[e];
    }
  }
}
