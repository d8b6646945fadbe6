/* ocal — GEMM on NVIDIA tensor cores through inline PTX (compute capability 8.0 and up):
 * C = alpha op(A) op(B) + beta C on row-major matrices, with ocal's GEMM conventions
 * (cl/blas_gemm.cl): op(A) is m x k, stored m x k (TA=0) or k x m (TA=1) with row stride lda;
 * op(B) is k x n, stored k x n (TB=0) or n x k (TB=1) with row stride ldb; C is m x n with row
 * stride ldc; every offset and stride counts elements; launch z = batch entry x slices of k.
 * See docs/tensor-cores.md for the design and the probe that gates these kernels.
 *
 * Build options:
 *   -DMMA_TF32 (default), -DMMA_F16 or -DMMA_BF16: A and B are f32 rounded to TF32
 *     (m16n8k8), or IEEE half / bfloat16 bit patterns in ushort storage (m16n8k16); the
 *     products accumulate in f32 either way.
 *   -DOUT_F16 / -DOUT_BF16: C is half / bfloat16 (ushort storage); else C is f32.
 *   -DTA=0|1 -DTB=0|1: the transposes.
 *   -DVEC=1: every leading dimension and offset is a multiple of 16 bytes' worth of elements,
 *     so tiles move in 16-byte pieces; VEC=0 reads element by element.
 *   -DCP_ASYNC=1 (needs VEC=1): global to local copies by cp.async (no staging registers).
 *   -DLDMATRIX=1: fragments by ldmatrix instead of 32/16-bit local loads. For TF32 only the
 *     k-contiguous operands (A with TA=0, B with TB=1) use it (a 32-bit element is two b16
 *     halves, so a non-transposed 8 x 8 b16 matrix is an 8 x 4 tf32 block in the fragment's
 *     layout); the others keep 32-bit loads (.trans would split the halves).
 *   -DSTAGES=2|3|4 (CP_ASYNC=1 only for more than 2): local stages of A and B; with S stages
 *     S - 1 copies are in flight while one stage is multiplied (cp.async.wait_group S - 2).
 *   -DTF32_INPLACE=1 (TF32 with CP_ASYNC=1): each work-item rounds the pieces it copied to
 *     TF32 in local memory once they land, instead of a cvt per fragment element read.
 *   -DRASTER=G (0: off): blocks run in groups of G block rows, column by column inside a
 *     group, so that the G row panels of A and a few column panels of B stay in L2.
 *   -DSMEM_ADDR=0|1|2: how a __local pointer becomes the 32-bit shared-space address that
 *     cp.async and ldmatrix take. 0: the pointer's integer value is already a shared-space
 *     offset (clang's NVPTX back end); 1: it is a generic address (cvta.to.shared); 2 (the
 *     default): decided at run time by isspacep.shared, so either front end works.
 *   -DTF32_CVT=1 (default): f32 -> tf32 by cvt.rna.tf32.f32; 0: the same rounding (to nearest,
 *     ties away from zero) in integer arithmetic, for compilers that reject the cvt.
 *   -DMMA_EMULATE=1: no PTX; the instructions are emulated in OpenCL C (any device; tests only).
 *   -DBM -DBN -DBK: block tile (128 x 128 x 16 for TF32, 128 x 128 x 32 for 16-bit types).
 *
 * Why these shapes: 8 warps (256 work-items) in a 2 x 4 grid, each warp a (BM/2) x (BN/4)
 * = 64 x 32 piece of C as 4 x 4 mma tiles, so each fragment loaded from local memory feeds 4
 * mma instructions. NVIDIA's OpenCL gives a work-group at most 48 KiB of local memory
 * (CL_DEVICE_LOCAL_MEM_SIZE; OpenCL has no opt-in to more), which caps the k step: two stages
 * of 128 x 16 f32 (or 128 x 32 16-bit) tiles of A and B with padding take 40 KiB. */

#if defined(MMA_F16) || defined(MMA_BF16)
#define MMA_HALF 1
typedef ushort ET; /* element of A and B */
#define VW 8 /* elements in a 16-byte piece */
#define ESZ 2 /* bytes of an element (for #if) */
#ifndef BK
#define BK 32
#endif
#define KSTEP 16
#else
#define MMA_HALF 0
typedef float ET;
#define VW 4
#define ESZ 4
#ifndef BK
#define BK 16
#endif
#define KSTEP 8
#endif

#if defined(OUT_F16) || defined(OUT_BF16)
typedef ushort CT;
#else
typedef float CT;
#endif

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef TA
#define TA 0
#endif
#ifndef TB
#define TB 0
#endif
#ifndef VEC
#define VEC 0
#endif
#ifndef CP_ASYNC
#define CP_ASYNC 0
#endif
#ifndef LDMATRIX
#define LDMATRIX 0
#endif
#ifndef SMEM_ADDR
#define SMEM_ADDR 2
#endif
#ifndef TF32_CVT
#define TF32_CVT 1
#endif
#ifndef MMA_EMULATE
#define MMA_EMULATE 0
#endif

#if CP_ASYNC && !VEC
#error "CP_ASYNC=1 needs VEC=1: cp.async moves aligned 16-byte pieces"
#endif
#ifndef STAGES
#define STAGES 2
#endif
#ifndef RASTER
#define RASTER 0
#endif
#ifndef TF32_INPLACE
#define TF32_INPLACE 0
#endif
#if TF32_INPLACE && (MMA_HALF || !CP_ASYNC)
#undef TF32_INPLACE
#define TF32_INPLACE 0 /* only the cp.async TF32 path rounds after the copy */
#endif
#if STAGES < 2 || STAGES > 4 || (STAGES > 2 && !CP_ASYNC)
#error "STAGES is 2, 3 or 4, and more than 2 needs CP_ASYNC=1"
#endif

#include "gemm_tc_common.cl"

#define NTHREADS 256
#define WTM (BM / 2) /* a warp's rows of C */
#define WTN (BN / 4) /* a warp's columns of C */
#define MT (WTM / 16) /* mma tiles per warp along m */
#define NT (WTN / 8)  /* mma tiles per warp along n */

/* Local tiles keep the global layout, so that a 16-byte piece lands whole (what cp.async
 * needs). A k-contiguous tile (A with TA=0, B with TB=1) has rows of BK + 16 bytes of
 * elements; an m- or n-contiguous tile has rows of BM (BN) + 8 elements. The padding makes the
 * fragment loads conflict-free: lanes read (row groupID, column threadID_in_group) patterns,
 * and a k-contiguous row of 80 bytes puts the 8 row groups on 8 distinct 4-bank sets; an
 * mn-contiguous row of 136 elements shifts each k row by 8 banks (f32) or 4 (16-bit). The same
 * strides keep ldmatrix's 8 rows of 16 bytes on distinct bank groups (strides of 5 and 17
 * 16-byte units are odd). */
#define PADK (16 / ESZ)
#define PADMN 8
#if TA
#define SA (BM + PADMN)
#define A_TILE (BK * SA)
#else
#define SA (BK + PADK)
#define A_TILE (BM * SA)
#endif
#if TB
#define SB (BK + PADK)
#define B_TILE (BN * SB)
#else
#define SB (BN + PADMN)
#define B_TILE (BK * SB)
#endif
/* Stages that do not fit in LOCAL_MAX bytes (NVIDIA's 48 KiB a work-group) are dropped, so
 * that one set of options builds for every transpose: padded k-contiguous tiles of B with
 * TB=1 are larger than the n-contiguous ones. */
#ifndef LOCAL_MAX
#define LOCAL_MAX 49152
#endif
#define STAGE_BYTES ((A_TILE + B_TILE) * ESZ)
#if STAGES == 4 && 4 * STAGE_BYTES > LOCAL_MAX
#undef STAGES
#define STAGES 3
#endif
#if STAGES == 3 && 3 * STAGE_BYTES > LOCAL_MAX
#undef STAGES
#define STAGES 2
#endif
/* cp.async.wait_group takes a literal. */
#if STAGES == 2
#define WAIT_PENDING 0
#elif STAGES == 3
#define WAIT_PENDING 1
#else
#define WAIT_PENDING 2
#endif

/* 16-byte pieces of each tile, and per work-item. */
#define PA (BM * BK / VW)
#define PB (BN * BK / VW)
#define NPA (PA / NTHREADS)
#define NPB (PB / NTHREADS)
#if PA % NTHREADS || PB % NTHREADS || BK % KSTEP || BK % VW || BM % 32 || BN % 32
#error "tile shape does not divide among 256 work-items"
#endif

#if VW == 4
typedef float4 VT;
#define VLOADW vload4
#else
typedef ushort8 VT;
#define VLOADW vload8
#endif

INL uint to_tf32(float x) {
#if TF32_CVT && !MMA_EMULATE
  uint r;
  ASM("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
#else
  /* Round to nearest, ties away from zero, on the magnitude bits; NaN and Inf stay. */
  const uint u = as_uint(x);
  return (u & 0x7f800000u) == 0x7f800000u ? u : (u + 0x1000u) & 0xffffe000u;
#endif
}

#if MMA_EMULATE
/* The emulation (-DMMA_EMULATE=1, any OpenCL device, e.g. PoCL): mma.sync, ldmatrix and
 * cp.async done in plain OpenCL C with the fragment semantics of the PTX ISA, a warp being 32
 * consecutive work-items that exchange fragments through local memory. It tests everything
 * around the instructions (tile loads, edges, local layouts, fragment and ldmatrix addressing,
 * the epilogue) without a GPU; it cannot test the instructions themselves, which the probe
 * kernel checks on the GPU. Each warp has EMU_WARP floats of scratch: A (16 x 16), B (16 x 8)
 * and 32 row addresses. */
#define EMU_WARP 416
#define EMU_DECL , __local float *emu, __local uchar *emu_sm
#define EMU_ARG , emu, emu_sm

INL float emu_half(const uint h) {
  const uint s = (h & 0x8000u) << 16, e = (h >> 10) & 31u, m = h & 1023u;
  if (e == 0) return as_float(s | as_uint((float)m * 5.9604644775390625e-8f)); /* m 2^-24 */
  if (e == 31) return as_float(s | 0x7f800000u | m << 13);
  return as_float(s | (e + 112u) << 23 | m << 13);
}
/* kind 0: m16n8k8 TF32; 1: m16n8k16 f16; 2: m16n8k16 bf16. */
INL float emu_elem(const uint h, const int kind) {
  return kind == 1 ? emu_half(h) : as_float(h << 16);
}
INL void emu_mma(float *d, const uint *a, const uint *b, const int kind, __local float *emu,
                 const uint lane) {
  const uint g = lane >> 2, t = lane & 3;
  __local float *A = emu, *B = emu + 256;
  if (kind == 0) { /* A 16 x 8, B 8 x 8 */
    A[g * 8 + t] = as_float(a[0]);
    A[(g + 8) * 8 + t] = as_float(a[1]);
    A[g * 8 + t + 4] = as_float(a[2]);
    A[(g + 8) * 8 + t + 4] = as_float(a[3]);
    B[t * 8 + g] = as_float(b[0]);
    B[(t + 4) * 8 + g] = as_float(b[1]);
  } else { /* A 16 x 16, B 16 x 8; the lower element of a pair in the low half */
    for (int r = 0; r < 4; r++) {
      const uint row = g + 8 * (r & 1), col = 2 * t + 8 * (r >> 1);
      A[row * 16 + col] = emu_elem(a[r] & 0xffffu, kind);
      A[row * 16 + col + 1] = emu_elem(a[r] >> 16, kind);
    }
    for (int r = 0; r < 2; r++) {
      const uint kk = 2 * t + 8 * r;
      B[kk * 8 + g] = emu_elem(b[r] & 0xffffu, kind);
      B[(kk + 1) * 8 + g] = emu_elem(b[r] >> 16, kind);
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const int K = kind ? 16 : 8;
  for (int r = 0; r < 4; r++) {
    const uint row = g + 8 * (r >> 1), col = 2 * t + (r & 1);
    float s = d[r];
    for (int kk = 0; kk < K; kk++) s += A[row * K + kk] * B[kk * 8 + col];
    d[r] = s;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
}
/* ldmatrix .x4: lane 8q + i gives row i of matrix q; register q of lane l receives row l/4,
 * columns 2(l%4) and 2(l%4)+1, or with .trans column l/4, rows 2(l%4) and 2(l%4)+1. */
INL void emu_ldmatrix(uint *r, const uint addr, const int trans, __local float *emu,
                      __local uchar *sm, const uint lane) {
  __local uint *ad = (__local uint *)(emu + 384);
  const uint g = lane >> 2, t = lane & 3;
  ad[lane] = addr;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int q = 0; q < 4; q++) {
    if (!trans) {
      r[q] = *(__local uint *)(sm + ad[8 * q + g] + 4 * t);
    } else {
      const uint lo = *(__local ushort *)(sm + ad[8 * q + 2 * t] + 2 * g);
      const uint hi = *(__local ushort *)(sm + ad[8 * q + 2 * t + 1] + 2 * g);
      r[q] = lo | hi << 16;
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
}
#define MMA_OP_TF32(d, a, b) emu_mma(d, a, b, 0, emu, lane)
#define MMA_OP_F16(d, a, b) emu_mma(d, a, b, 1, emu, lane)
#define MMA_OP_BF16(d, a, b) emu_mma(d, a, b, 2, emu, lane)
#define LDMATRIX_X4(r, addr) emu_ldmatrix(r, addr, 0, emu, emu_sm, lane)
#define LDMATRIX_X4_T(r, addr) emu_ldmatrix(r, addr, 1, emu, emu_sm, lane)

#else /* the real instructions */
#define EMU_DECL
#define EMU_ARG
/* D = A B + D for one m16n8k8 TF32 tile (fragments as in PTX ISA "Matrix Fragments for
 * mma.m16n8k8"). Inputs and outputs are separate operands (no "+f"), the most conservative
 * form for an unknown front end. */
#define MMA_OP_TF32(d, a, b)                                                                      \
  ASM("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, "           \
               "{%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"                                    \
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])                                \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(d[0]),  \
                 "f"(d[1]), "f"(d[2]), "f"(d[3]))
#define MMA_OP_F16(d, a, b)                                                                       \
  ASM("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "            \
               "{%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"                                    \
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])                                \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(d[0]),  \
                 "f"(d[1]), "f"(d[2]), "f"(d[3]))
#define MMA_OP_BF16(d, a, b)                                                                      \
  ASM("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, "          \
               "{%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"                                    \
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])                                \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(d[0]),  \
                 "f"(d[1]), "f"(d[2]), "f"(d[3]))
#define LDMATRIX_X4(r, addr)                                                                   \
  ASM("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"                \
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])                                \
               : "r"(addr))
#define LDMATRIX_X4_T(r, addr)                                                                 \
  ASM("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"          \
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])                                \
               : "r"(addr))
#endif /* MMA_EMULATE */

/* Where piece p of a tile lies. A stored tile is `rows` x `cols` of which the piece covers
 * VW consecutive columns; (gr, gc) is its global row and column inside the stored matrix,
 * (lr, lc) inside the local tile, and nv how many of its elements exist (0..VW). For A with
 * TA=0 the stored rows are op(A)'s rows m and the columns k; with TA=1 rows are k, columns m;
 * likewise for B. */
#define PIECE(...) PIECE_(__VA_ARGS__)
#define PIECE_(p, ROWS_IN_TILE, COLS_IN_TILE, r0, c0, rlim, clim, lr, lc, gr, gc, nv)          \
  do {                                                                                         \
    lr = (p) / ((COLS_IN_TILE) / VW);                                                          \
    lc = ((p) % ((COLS_IN_TILE) / VW)) * VW;                                                   \
    gr = (r0) + lr;                                                                            \
    gc = (c0) + lc;                                                                            \
    nv = gr < (rlim) && gc < (clim) ? min((uint)VW, (clim) - gc) : 0u;                         \
  } while (0)

/* A's tile origin and limits in stored coordinates for k step kb. */
#if TA
#define A_GEOM(row0, kb, m, kend) BK, BM, kb, row0, kend, m
#else
#define A_GEOM(row0, kb, m, kend) BM, BK, row0, kb, m, kend
#endif
#if TB
#define B_GEOM(col0, kb, n, kend) BN, BK, col0, kb, n, kend
#else
#define B_GEOM(col0, kb, n, kend) BK, BN, kb, col0, kend, n
#endif

INL VT load_piece(__global const ET *p, const uint nv) {
#if VEC
  if (nv == VW) return *(__global const VT *)p;
#endif
  if (nv == VW) return VLOADW(0, p);
  /* A piece cut by the matrix's edge: element by element, the rest zero (built as a vector
   * so that no private array lands in stack memory). */
#define E(i) ((i) < nv ? p[i] : (ET)0)
#if VW == 4
  return (VT)(E(0), E(1), E(2), E(3));
#else
  return (VT)(E(0), E(1), E(2), E(3), E(4), E(5), E(6), E(7));
#endif
#undef E
}

#if !MMA_HALF
INL VT tf32_vec(const VT v) {
  return (VT)(as_float(to_tf32(v.s0)), as_float(to_tf32(v.s1)), as_float(to_tf32(v.s2)),
              as_float(to_tf32(v.s3)));
}
#endif

#if CP_ASYNC
/* One 16-byte cp.async; bytes past nv elements are zero-filled (src-size operand), and a
 * piece wholly outside the matrix reads nothing (src-size 0) from a valid address. */
INL void cp_async16(const uint dst, __global const ET *src, const uint nv EMU_DECL) {
#if MMA_EMULATE
  (void)emu;
  __local ET *d = (__local ET *)(emu_sm + dst);
  for (uint i = 0; i < VW; i++) d[i] = i < nv ? src[i] : (ET)0;
#else
  const uint bytes = nv * (uint)sizeof(ET);
  ASM("cp.async.cg.shared.global [%0], [%1], 16, %2;"
               :
               : "r"(dst), "l"((ulong)src), "r"(bytes)
               : "memory");
#endif
}
#if MMA_EMULATE
#define CP_COMMIT()
#define CP_WAIT(n)
#else
#define CP_COMMIT() ASM("cp.async.commit_group;" ::: "memory")
#define CP_WAIT(n) CP_WAIT_(n)
#define CP_WAIT_(n) ASM("cp.async.wait_group " #n ";" ::: "memory")
#endif

/* Issue the copies of both tiles of k step kb into stage buffers at shared addresses sa, sb. */
INL void issue_tiles(__global const ET *a, const uint lda, __global const ET *b,
                        const uint ldb, const uint row0, const uint col0, const uint kb,
                        const uint m, const uint n, const uint kend, const uint lid,
                        const uint sa, const uint sb EMU_DECL) {
#pragma unroll
  for (int i = 0; i < NPA; i++) {
    uint lr, lc, gr, gc, nv;
    PIECE(lid + (uint)i * NTHREADS, A_GEOM(row0, kb, m, kend), lr, lc, gr, gc, nv);
    __global const ET *src = nv ? a + (ulong)gr * lda + gc : a;
    cp_async16(sa + (lr * SA + lc) * (uint)sizeof(ET), src, nv EMU_ARG);
  }
#pragma unroll
  for (int i = 0; i < NPB; i++) {
    uint lr, lc, gr, gc, nv;
    PIECE(lid + (uint)i * NTHREADS, B_GEOM(col0, kb, n, kend), lr, lc, gr, gc, nv);
    __global const ET *src = nv ? b + (ulong)gr * ldb + gc : b;
    cp_async16(sb + (lr * SB + lc) * (uint)sizeof(ET), src, nv EMU_ARG);
  }
}
#else
/* The register-staged path: the next k step's pieces are read while this one is multiplied,
 * then written to the other stage; TF32 values are rounded on the way into local memory, once
 * per element instead of once per fragment read (cp.async cannot: it rounds at the read). */
#if !MMA_HALF
#define TF32_STORE(v) tf32_vec(v)
#else
#define TF32_STORE(v) (v)
#endif
INL void load_tiles(__global const ET *a, const uint lda, __global const ET *b,
                       const uint ldb, const uint row0, const uint col0, const uint kb,
                       const uint m, const uint n, const uint kend, const uint lid, VT *ra,
                       VT *rb) {
#pragma unroll
  for (int i = 0; i < NPA; i++) {
    uint lr, lc, gr, gc, nv;
    PIECE(lid + (uint)i * NTHREADS, A_GEOM(row0, kb, m, kend), lr, lc, gr, gc, nv);
    ra[i] = nv ? load_piece(a + (ulong)gr * lda + gc, nv) : (VT)(0);
  }
#pragma unroll
  for (int i = 0; i < NPB; i++) {
    uint lr, lc, gr, gc, nv;
    PIECE(lid + (uint)i * NTHREADS, B_GEOM(col0, kb, n, kend), lr, lc, gr, gc, nv);
    rb[i] = nv ? load_piece(b + (ulong)gr * ldb + gc, nv) : (VT)(0);
  }
}

INL void store_tiles(__local ET *as, __local ET *bs, const uint lid, const VT *ra,
                        const VT *rb) {
#pragma unroll
  for (int i = 0; i < NPA; i++) {
    const uint p = lid + (uint)i * NTHREADS;
#if TA
    const uint lr = p / (BM / VW), lc = (p % (BM / VW)) * VW;
#else
    const uint lr = p / (BK / VW), lc = (p % (BK / VW)) * VW;
#endif
    *(__local VT *)(as + lr * SA + lc) = TF32_STORE(ra[i]);
  }
#pragma unroll
  for (int i = 0; i < NPB; i++) {
    const uint p = lid + (uint)i * NTHREADS;
#if TB
    const uint lr = p / (BK / VW), lc = (p % (BK / VW)) * VW;
#else
    const uint lr = p / (BN / VW), lc = (p % (BN / VW)) * VW;
#endif
    *(__local VT *)(bs + lr * SB + lc) = TF32_STORE(rb[i]);
  }
}
#endif /* CP_ASYNC */

#if TF32_INPLACE
/* After its own copies of a stage have landed (cp.async.wait_group) and before the barrier
 * that publishes them, each work-item rounds the 16-byte pieces it copied to TF32 in place:
 * (BM + BN) BK / 256 conversions a work-item per stage instead of one per fragment element
 * read (a warp's fragments read each element BN/WTN or BM/WTM times). */
INL void tf32_own_pieces(__local ET *as, __local ET *bs, const uint lid) {
#pragma unroll
  for (int i = 0; i < NPA; i++) {
    const uint p = lid + (uint)i * NTHREADS;
#if TA
    const uint lr = p / (BM / VW), lc = (p % (BM / VW)) * VW;
#else
    const uint lr = p / (BK / VW), lc = (p % (BK / VW)) * VW;
#endif
    __local VT *q = (__local VT *)(as + lr * SA + lc);
    *q = tf32_vec(*q);
  }
#pragma unroll
  for (int i = 0; i < NPB; i++) {
    const uint p = lid + (uint)i * NTHREADS;
#if TB
    const uint lr = p / (BK / VW), lc = (p % (BK / VW)) * VW;
#else
    const uint lr = p / (BN / VW), lc = (p % (BN / VW)) * VW;
#endif
    __local VT *q = (__local VT *)(bs + lr * SB + lc);
    *q = tf32_vec(*q);
  }
}
#define TF32_OWN(so) tf32_own_pieces(sm + (so), sm + (so) + A_TILE, lid)
#else
#define TF32_OWN(so)
#endif

/* A TF32 fragment element from local memory: already rounded on the register path and with
 * TF32_INPLACE. */
#if CP_ASYNC && !TF32_INPLACE
#define FRAG_TF32(x) to_tf32(x)
#else
#define FRAG_TF32(x) as_uint(x)
#endif

/* op(A)[r][k] and op(B)[k][c] inside the local tiles. */
#if TA
#define AT(as, r, k) (as)[(k) * SA + (r)]
#else
#define AT(as, r, k) (as)[(r) * SA + (k)]
#endif
#if TB
#define BT(bs, k, c) (bs)[(c) * SB + (k)]
#else
#define BT(bs, k, c) (bs)[(k) * SB + (c)]
#endif

/* The warp's products for one stage: acc[i][j] is the m16n8 tile (wr + 16 i, wc + 8 j). */
INL void mma_stage(__local const ET *as, __local const ET *bs, const uint sa_addr,
                      const uint sb_addr, const uint wr, const uint wc, const uint lane,
                      float acc[MT][NT][4] EMU_DECL) {
  const uint g = lane >> 2, t = lane & 3;
#if !LDMATRIX
  (void)sa_addr;
  (void)sb_addr;
#endif
#pragma unroll
  for (int ks = 0; ks < BK; ks += KSTEP) {
    uint af[MT][4], bf[NT][2];
#if !MMA_HALF
    /* m16n8k8 TF32: a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4); b0 (k t, n g),
     * b1 (k t+4, n g). */
#if LDMATRIX
    /* ldmatrix x4 on 32-bit elements: the 8 x 8 b16 matrix q is an 8 x 4 tf32 block, and
     * lane l's register q holds its element (row l/4, column l%4), i.e. (g, t). For A, matrix
     * q covers m half q&1 and k half q>>1 (a0..a3); for B (TB=1), n tile q>>1 and k half q&1
     * (b0, b1 of tiles j, j+1). Row addresses are 16-byte aligned: SA and SB are multiples of
     * 4 floats, and their odd counts of 16-byte units keep the 8 rows on distinct banks. */
    const uint q = lane >> 3, rr = lane & 7;
#endif
#pragma unroll
    for (int i = 0; i < MT; i++) {
#if LDMATRIX && !TA
      const uint off = (wr + 16 * i + (q & 1) * 8 + rr) * SA + ks + (q >> 1) * 4;
      uint r4[4];
      LDMATRIX_X4(r4, sa_addr + off * 4);
#pragma unroll
      for (int h = 0; h < 4; h++) af[i][h] = FRAG_TF32(as_float(r4[h]));
#else
      const uint r = wr + 16 * i + g;
      af[i][0] = FRAG_TF32(AT(as, r, ks + t));
      af[i][1] = FRAG_TF32(AT(as, r + 8, ks + t));
      af[i][2] = FRAG_TF32(AT(as, r, ks + t + 4));
      af[i][3] = FRAG_TF32(AT(as, r + 8, ks + t + 4));
#endif
    }
#if LDMATRIX && TB
#pragma unroll
    for (int j = 0; j < NT; j += 2) {
      uint r4[4];
      const uint off = (wc + 8 * j + (q >> 1) * 8 + rr) * SB + ks + (q & 1) * 4;
      LDMATRIX_X4(r4, sb_addr + off * 4);
      bf[j][0] = FRAG_TF32(as_float(r4[0]));
      bf[j][1] = FRAG_TF32(as_float(r4[1]));
      bf[j + 1][0] = FRAG_TF32(as_float(r4[2]));
      bf[j + 1][1] = FRAG_TF32(as_float(r4[3]));
    }
#else
#pragma unroll
    for (int j = 0; j < NT; j++) {
      const uint c = wc + 8 * j + g;
      bf[j][0] = FRAG_TF32(BT(bs, ks + t, c));
      bf[j][1] = FRAG_TF32(BT(bs, ks + t + 4, c));
    }
#endif
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
      for (int j = 0; j < NT; j++) MMA_OP_TF32(acc[i][j], af[i], bf[j]);
#else
    /* m16n8k16 f16/bf16, two elements a register, the lower k in the low half:
     * A reg0 (g, 2t..2t+1), reg1 (g+8, 2t..), reg2 (g, 2t+8..), reg3 (g+8, 2t+8..);
     * B reg0 (k 2t..2t+1, n g), reg1 (k 2t+8.., n g). */
#if LDMATRIX
    /* ldmatrix x4: lanes 8q..8q+7 give the 8 row addresses of matrix q, and register q of
     * every lane receives (row lane/4, columns 2(lane%4), +1) of matrix q, or with .trans the
     * transposed element pair. For A, matrix q covers m half q&1 and k half q>>1 (register
     * order a0..a3 above); for B, k half q&1 and n tile q>>1 (b0, b1 of tiles j, j+1). A row of
     * a stored matrix is the tile's non-contiguous coordinate. */
    const uint q = lane >> 3, rr = lane & 7;
#pragma unroll
    for (int i = 0; i < MT; i++) {
#if TA
      const uint off = (ks + (q >> 1) * 8 + rr) * SA + wr + 16 * i + (q & 1) * 8;
      LDMATRIX_X4_T(af[i], sa_addr + off * 2);
#else
      const uint off = (wr + 16 * i + (q & 1) * 8 + rr) * SA + ks + (q >> 1) * 8;
      LDMATRIX_X4(af[i], sa_addr + off * 2);
#endif
    }
#pragma unroll
    for (int j = 0; j < NT; j += 2) {
      uint r4[4];
#if TB
      const uint off = (wc + 8 * j + (q >> 1) * 8 + rr) * SB + ks + (q & 1) * 8;
      LDMATRIX_X4(r4, sb_addr + off * 2);
#else
      const uint off = (ks + (q & 1) * 8 + rr) * SB + wc + 8 * j + (q >> 1) * 8;
      LDMATRIX_X4_T(r4, sb_addr + off * 2);
#endif
      bf[j][0] = r4[0];
      bf[j][1] = r4[1];
      bf[j + 1][0] = r4[2];
      bf[j + 1][1] = r4[3];
    }
#else
#pragma unroll
    for (int i = 0; i < MT; i++) {
      const uint r = wr + 16 * i + g;
#if TA
      af[i][0] = (uint)AT(as, r, ks + 2 * t) | (uint)AT(as, r, ks + 2 * t + 1) << 16;
      af[i][1] = (uint)AT(as, r + 8, ks + 2 * t) | (uint)AT(as, r + 8, ks + 2 * t + 1) << 16;
      af[i][2] = (uint)AT(as, r, ks + 2 * t + 8) | (uint)AT(as, r, ks + 2 * t + 9) << 16;
      af[i][3] =
          (uint)AT(as, r + 8, ks + 2 * t + 8) | (uint)AT(as, r + 8, ks + 2 * t + 9) << 16;
#else
      /* Two consecutive k of one row are one aligned 32-bit word (SA and 2t are even). */
      af[i][0] = *(__local const uint *)&AT(as, r, ks + 2 * t);
      af[i][1] = *(__local const uint *)&AT(as, r + 8, ks + 2 * t);
      af[i][2] = *(__local const uint *)&AT(as, r, ks + 2 * t + 8);
      af[i][3] = *(__local const uint *)&AT(as, r + 8, ks + 2 * t + 8);
#endif
    }
#pragma unroll
    for (int j = 0; j < NT; j++) {
      const uint c = wc + 8 * j + g;
#if TB
      bf[j][0] = *(__local const uint *)&BT(bs, ks + 2 * t, c);
      bf[j][1] = *(__local const uint *)&BT(bs, ks + 2 * t + 8, c);
#else
      bf[j][0] = (uint)BT(bs, ks + 2 * t, c) | (uint)BT(bs, ks + 2 * t + 1, c) << 16;
      bf[j][1] = (uint)BT(bs, ks + 2 * t + 8, c) | (uint)BT(bs, ks + 2 * t + 9, c) << 16;
#endif
    }
#endif /* LDMATRIX */
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
      for (int j = 0; j < NT; j++) {
#ifdef MMA_BF16
        MMA_OP_BF16(acc[i][j], af[i], bf[j]);
#else
        MMA_OP_F16(acc[i][j], af[i], bf[j]);
#endif
      }
#endif /* MMA_HALF */
  }
}

/* C's element type from f32 and back. */
#define C_T CT
#if defined(OUT_F16)
#define C_F16
#elif defined(OUT_BF16)
#define C_BF16
#endif
#include "gemm_c_io.cl"

/* Local memory of one work-group: STAGES stages of A's and B's tiles. */
#define STAGE (A_TILE + B_TILE)

__kernel __attribute__((reqd_work_group_size(NTHREADS, 1, 1))) void ocal_gemm_mma(
    __global const ET *a, const ulong a_off, const uint lda, const ulong a_stride,
    __global const ET *b, const ulong b_off, const uint ldb, const ulong b_stride,
    __global CT *c, const ulong c_off, const uint ldc, const ulong c_stride, const uint m,
    const uint n, const uint k, const uint kc, const uint slices, const float alpha,
    const float beta, const int read_c) {
  /* uint4 keeps the buffer 16-byte aligned for vector stores, cp.async and ldmatrix. */
  __local uint4 smem[(STAGES * STAGE * sizeof(ET) + 15) / 16];
  __local ET *const sm = (__local ET *)smem;

  const uint lid = get_local_id(0), lane = lid & 31, warp = lid >> 5;
  const uint wr = (warp & 1) * WTM, wc = (warp >> 1) * WTN;
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
  (void)base;
#if MMA_EMULATE
  __local float emu_all[8 * EMU_WARP];
  __local float *const emu = emu_all + warp * EMU_WARP;
  __local uchar *const emu_sm = (__local uchar *)sm;
#endif

  float acc[MT][NT][4];
#pragma unroll
  for (int i = 0; i < MT; i++)
#pragma unroll
    for (int j = 0; j < NT; j++)
#pragma unroll
      for (int r = 0; r < 4; r++) acc[i][j][r] = 0.0f;

#if CP_ASYNC && STAGES > 2
  /* STAGES - 1 k steps in flight: step t + STAGES - 1 is issued into the stage that step t - 1
   * used, after the barrier that says every warp has finished multiplying it. One commit per
   * step, empty past the end, so that "all but the newest STAGES - 2 groups" is always step t. */
#pragma unroll
  for (uint s = 0; s < STAGES - 1; s++) {
    if (s < ntiles) {
      const uint st = base + s * STAGE * (uint)sizeof(ET);
      issue_tiles(a, lda, b, ldb, row0, col0, kbeg + s * BK, m, n, kend, lid, st,
                  st + A_TILE * (uint)sizeof(ET) EMU_ARG);
    }
    CP_COMMIT();
  }
  uint cur = 0, nxt = STAGES - 1;
  for (uint t = 0; t < ntiles; t++) {
    CP_WAIT(WAIT_PENDING);
    TF32_OWN(cur * STAGE);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t + STAGES - 1 < ntiles) {
      const uint st = base + nxt * STAGE * (uint)sizeof(ET);
      issue_tiles(a, lda, b, ldb, row0, col0, kbeg + (t + STAGES - 1) * BK, m, n, kend, lid, st,
                  st + A_TILE * (uint)sizeof(ET) EMU_ARG);
    }
    CP_COMMIT();
    const uint so = cur * STAGE;
    mma_stage(sm + so, sm + so + A_TILE, base + so * (uint)sizeof(ET),
              base + (so + A_TILE) * (uint)sizeof(ET), wr, wc, lane, acc EMU_ARG);
    cur = cur + 1 == STAGES ? 0 : cur + 1;
    nxt = nxt + 1 == STAGES ? 0 : nxt + 1;
  }
  CP_WAIT(0);
#elif CP_ASYNC
  if (ntiles > 0)
    issue_tiles(a, lda, b, ldb, row0, col0, kbeg, m, n, kend, lid, base,
                base + A_TILE * (uint)sizeof(ET) EMU_ARG);
  CP_COMMIT();
  for (uint t = 0; t < ntiles; t++) {
    const uint cur = t & 1;
    if (t + 1 < ntiles) {
      const uint nxt = base + (cur ^ 1) * STAGE * (uint)sizeof(ET);
      issue_tiles(a, lda, b, ldb, row0, col0, kbeg + (t + 1) * BK, m, n, kend, lid, nxt,
                  nxt + A_TILE * (uint)sizeof(ET) EMU_ARG);
    }
    /* An empty group when nothing was issued keeps "all but the newest" = this step's. */
    CP_COMMIT();
    CP_WAIT(1);
    TF32_OWN(cur * STAGE);
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint so = cur * STAGE;
    mma_stage(sm + so, sm + so + A_TILE, base + so * (uint)sizeof(ET),
              base + (so + A_TILE) * (uint)sizeof(ET), wr, wc, lane, acc EMU_ARG);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  CP_WAIT(0);
#else
  VT ra[NPA], rb[NPB];
  if (ntiles > 0) {
    load_tiles(a, lda, b, ldb, row0, col0, kbeg, m, n, kend, lid, ra, rb);
    store_tiles(sm, sm + A_TILE, lid, ra, rb);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint t = 0; t < ntiles; t++) {
    const uint cur = t & 1;
    if (t + 1 < ntiles)
      load_tiles(a, lda, b, ldb, row0, col0, kbeg + (t + 1) * BK, m, n, kend, lid, ra, rb);
    const uint so = cur * STAGE;
    mma_stage(sm + so, sm + so + A_TILE, base + so * (uint)sizeof(ET),
              base + (so + A_TILE) * (uint)sizeof(ET), wr, wc, lane, acc EMU_ARG);
    if (t + 1 < ntiles) {
      const uint sn = (cur ^ 1) * STAGE;
      store_tiles(sm + sn, sm + sn + A_TILE, lid, ra, rb);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
#endif

  /* C fragment: c0 (g, 2t), c1 (g, 2t+1), c2 (g+8, 2t), c3 (g+8, 2t+1). */
  const uint g = lane >> 2, tq = lane & 3;
#pragma unroll
  for (int i = 0; i < MT; i++)
#pragma unroll
    for (int h = 0; h < 2; h++) {
      const uint row = row0 + wr + 16 * i + 8 * h + g;
      if (row >= m) continue;
#pragma unroll
      for (int j = 0; j < NT; j++) {
        const uint col = col0 + wc + 8 * j + 2 * tq;
        __global CT *out = c + (ulong)row * ldc + col;
        float v0 = alpha * acc[i][j][2 * h], v1 = alpha * acc[i][j][2 * h + 1];
#if VEC && !defined(OUT_F16) && !defined(OUT_BF16)
        if (col + 1 < n) { /* VEC: ldc and the offset are even, so this is 8-byte aligned */
          float2 o = (float2)(v0, v1);
          if (read_c) o += beta * *(__global float2 *)out;
          *(__global float2 *)out = o;
          continue;
        }
#endif
        if (col < n) store_c(out, read_c ? v0 + beta * load_c(out) : v0);
        if (col + 1 < n) store_c(out + 1, read_c ? v1 + beta * load_c(out + 1) : v1);
      }
    }
}

/* The probe's m16n8k16 fragments of lane (g, t): A 16 x 16 and B 16 x 8 (k x n), row-major
 * 16-bit values, two to a register. */
INL void probe_frag16(__global const ushort *a, __global const ushort *b, const uint g,
                      const uint t, uint *h, uint *hb) {
  h[0] = (uint)a[g * 16 + 2 * t] | (uint)a[g * 16 + 2 * t + 1] << 16;
  h[1] = (uint)a[(g + 8) * 16 + 2 * t] | (uint)a[(g + 8) * 16 + 2 * t + 1] << 16;
  h[2] = (uint)a[g * 16 + 2 * t + 8] | (uint)a[g * 16 + 2 * t + 9] << 16;
  h[3] = (uint)a[(g + 8) * 16 + 2 * t + 8] | (uint)a[(g + 8) * 16 + 2 * t + 9] << 16;
  hb[0] = (uint)b[(2 * t) * 8 + g] | (uint)b[(2 * t + 1) * 8 + g] << 16;
  hb[1] = (uint)b[(2 * t + 8) * 8 + g] | (uint)b[(2 * t + 9) * 8 + g] << 16;
}

/* Lane (g, t)'s four values of a 16 x 8 D into out, row-major, as bits. */
INL void probe_store_d(__global uint *out, const uint g, const uint t, const float *d) {
  out[g * 8 + 2 * t] = as_uint(d[0]);
  out[g * 8 + 2 * t + 1] = as_uint(d[1]);
  out[(g + 8) * 8 + 2 * t] = as_uint(d[2]);
  out[(g + 8) * 8 + 2 * t + 1] = as_uint(d[3]);
}

/* The probe: one warp, one m16n8k8 TF32 product, one m16n8k16 f16 and one bf16 product, the
 * tf32 conversion of 32 values, and the shared-address mode. The host fills the inputs with
 * values whose products and sums are exact in f32 and checks every output bit.
 *   a32: 16 x 8 (row-major), b32: 8 x 8 (k x n, row-major), ah: 16 x 16, bh: 16 x 8 (k x n)
 *   f16 bits, ahb, bhb: the same shapes in bf16 bits, cv: 32 values to convert;
 *   out (uint): [0,128) TF32 D (16 x 8 row-major), [128,256) f16 D,
 *   [256,384) bf16 D, [384,416) tf32 bits of cv, [416] isspacep.shared of a __local pointer's
 *   integer value, [417] the raw 32 low bits of that value, [418] a value stored through
 *   OpenCL and read back by ld.shared at smem_u32()'s address (expects 0x5eed0000 + lane 0). */
__kernel __attribute__((reqd_work_group_size(32, 1, 1))) void ocal_mma_probe(
    __global const float *a32, __global const float *b32, __global const ushort *ah,
    __global const ushort *bh, __global const ushort *ahb, __global const ushort *bhb,
    __global const float *cv, __global uint *out) {
  __local uint buf[32];
  const uint lane = get_local_id(0), g = lane >> 2, t = lane & 3;
  buf[lane] = 0x5eed0000u + lane;
  barrier(CLK_LOCAL_MEM_FENCE);
#if MMA_EMULATE
  __local float emu[EMU_WARP];
#endif

  uint a[4], bb[2];
  float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  a[0] = to_tf32(a32[g * 8 + t]);
  a[1] = to_tf32(a32[(g + 8) * 8 + t]);
  a[2] = to_tf32(a32[g * 8 + t + 4]);
  a[3] = to_tf32(a32[(g + 8) * 8 + t + 4]);
  bb[0] = to_tf32(b32[t * 8 + g]);
  bb[1] = to_tf32(b32[(t + 4) * 8 + g]);
  MMA_OP_TF32(d, a, bb);
  probe_store_d(out, g, t, d);

  uint h[4], hb[2];
  probe_frag16(ah, bh, g, t, h, hb);
  float e[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  MMA_OP_F16(e, h, hb);
  probe_store_d(out + 128, g, t, e);
  probe_frag16(ahb, bhb, g, t, h, hb);
  float f[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  MMA_OP_BF16(f, h, hb);
  probe_store_d(out + 256, g, t, f);

  out[384 + lane] = to_tf32(cv[lane]);
#if MMA_EMULATE
  if (lane == 0) out[416] = 0, out[417] = 0, out[418] = buf[0];
#else
  if (lane == 0) {
    const ulong v = (ulong)(__local uint *)buf;
    uint sp, rd;
    ASM("{ .reg .pred p; isspacep.shared p, %1; selp.u32 %0, 1, 0, p; }"
                 : "=r"(sp)
                 : "l"(v));
    ASM("ld.shared.u32 %0, [%1];" : "=r"(rd) : "r"(smem_u32(buf)) : "memory");
    out[416] = sp;
    out[417] = (uint)v;
    out[418] = rd;
  }
#endif
}
