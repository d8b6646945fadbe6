/* ocal — GEMM on Hopper's wgmma (compute capability 9.0, PTX target sm_90a): TF32 from f32
 * operands, or f16 / bf16 (-DWG_F16, -DWG_BF16: A, B and C of that type), accumulating in f32.
 * C = alpha A B^T + beta C for row-major A (m x k, row stride lda) and B (n x k, row stride
 * ldb), both k-contiguous (wgmma's TF32 form requires it), or for f16/bf16 with -DB_MN=1,
 * C = alpha A B + beta C with B k x n (below); src/blas/gemm_wgmma.c packs other layouts into
 * scratch first (cl/wgmma_pack.cl).
 * Offsets and strides count elements; launch {ceil(n / BN) 256, ceil(m / 128), batch}, or with
 * -DWS=1 {G 384, 1, batch} for G work-groups (G = the blocks: one a block).
 *
 * Why the odd "//@" lines: NVIDIA's OpenCL compiler targets sm_90, where ptxas refuses every
 * wgmma instruction, and OpenCL C has no way to ask for sm_90a. So those instructions are
 * written as PTX comments "//@...": the OpenCL build substitutes their register operands like
 * any inline assembly's and ignores them; with -DOCAL_PTX_TARGET=sm_90a ocal then takes the
 * program's binary (PTX text), removes the markers, changes the target and builds that
 * (src/core/ptx.c; docs/tensor-cores.md, "wgmma from OpenCL").
 *
 * Build options: -DBN=64|128|256 (block columns; rows are 128, two warpgroups of 64 rows, each
 * issuing m64nBNk8 (TF32) or m64nBNk16), -DBK (k per stage, elements: rows of 32, 64 or 128
 * bytes in the matching swizzle; default 128 bytes), -DSTAGES (local stages, at most SMEM_MAX
 * bytes in all), -DRASTER=G, -DWS=1 (warp-specialised: 384 work-items, below), -DREGS=1 (with
 * WS: setmaxnreg), -DTMA=1 (stages moved by the tensor copy engine, below; the kernel then
 * takes a last argument, 256 bytes of scratch a work-group). The engine's variants and the
 * measurements behind them are in docs/tensor-cores.md, section "The wgmma kernel". The
 * tensor cores truncate f32 operands to TF32 (rounding them in local memory first cost a
 * third of the speed). Every leading dimension, offset and batch stride of A and B is a
 * multiple of 16 bytes of elements. f16 C is rounded to nearest
 * even by vstore_half, bf16 C to nearest even in integer arithmetic, as cl/gemm_mma.cl. */

#if defined(WG_F16) || defined(WG_BF16)
typedef ushort ET; /* f16 / bf16 bits */
typedef ushort4 ET4;
#define EB 2
#define WG_K "16"
#ifndef B_MN
#define B_MN 0
#endif
#if B_MN
#define WG_TRANS ", 0, 1" /* A k-major, B n-major */
#else
#define WG_TRANS ", 0, 0" /* both operands k-major */
#endif
#ifdef WG_F16
#define WG_TYPES "f32.f16.f16"
#else
#define WG_TYPES "f32.bf16.bf16"
#endif
#else
typedef float ET;
typedef float4 ET4;
#define EB 4
#define WG_K "8"
#define WG_TRANS ""
#define WG_TYPES "f32.tf32.tf32"
#if defined(B_MN) && B_MN
#error "TF32 wgmma reads B k-major only"
#endif
#define B_MN 0
#endif
#define EPP (16 / EB) /* elements in a 16-byte piece */

#ifndef BN
#define BN 256
#endif
#ifndef BK
#define BK (128 / EB)
#endif
#ifndef STAGES
#define STAGES 4
#endif
#ifndef RASTER
#define RASTER 8
#endif
#ifndef SMEM_MAX
#define SMEM_MAX 49152
#endif
/* NVIDIA's OpenCL gives a __local pointer's shared-space offset as its integer value
 * (cl/gemm_mma.cl's probe checks it). */
#define SMEM_ADDR 0
#include "gemm_tc_common.cl"

#ifndef WS
#define WS 0
#endif
#ifndef REGS
#define REGS 0
#endif
#define BM 128
#if WS
/* -DWS=1, warp-specialised: warpgroup 0 copies (the producer), warpgroups 1 and 2 multiply 64
 * rows each; stages pass between them through mbarriers. Work-group g of batch entry
 * get_group_id(2) runs blocks g, g + get_num_groups(0), ... of that entry (launched on fewer
 * groups than blocks it is persistent, and the producer fills the next block's stages while
 * the consumers store C). -DREGS=1 moves registers from the producer to the consumers. */
#define NTHREADS 384
#define COPY_THREADS 128
#else
#define NTHREADS 256
#define COPY_THREADS 256
#endif
#define W_BYTES (BK * EB) /* a row of a stage */
#define KCH (W_BYTES / 16) /* its 16-byte pieces */
#define A_BYTES (BM * W_BYTES)
#define B_BYTES (BN * W_BYTES)
#define STAGE_BYTES (A_BYTES + B_BYTES)
#define A_PER (BM * KCH / COPY_THREADS) /* pieces a work-item copies per stage */
#define B_PER (BN * KCH / COPY_THREADS)
#define NACC (BN / 2) /* a work-item's f32 accumulators (64 x BN per warpgroup) */
#define AHEAD (STAGES - 2) /* k tiles in flight */

#if STAGES < 3 || STAGES > 6
#error "STAGES is 3 to 6: stage t - 2 is refilled while t - 1's wgmma may still run"
#endif
#if STAGES * STAGE_BYTES > SMEM_MAX
#error "the stages pass SMEM_MAX bytes"
#endif

/* Local tiles: row r of an operand's stage (W bytes) in wgmma's k-major swizzled layout of
 * the same width (32, 64 or 128 bytes): rows W bytes apart, the 16-byte piece c of row r at
 * piece c ^ ((r W / 128) % KCH), so the 8 rows of a core matrix fall on distinct banks (the
 * unswizzled layout of 8 x 16-byte core matrices ran 20% slower). */
#if W_BYTES != 32 && W_BYTES != 64 && W_BYTES != 128
#error "BK makes rows of 32, 64 or 128 bytes"
#endif
#define DESC_LBO 16u
#define DESC_SBO (8u * W_BYTES) /* between 8-row groups */
#define DESC_LAYOUT (W_BYTES == 128 ? 1ul : W_BYTES == 64 ? 2ul : 3ul) /* the swizzle */
#define KSTEP_BYTES 32u /* one instruction's k (8 tf32 or 16 f16/bf16) within a row */
/* A work-item copies piece tid % KCH of rows tid / KCH + i ROW_STEP; the swizzle of those
 * rows is the same for every i. */
#define ROW_STEP (COPY_THREADS / KCH)

/* Matrix descriptor: start >> 4, leading byte offset >> 4 at bit 16, stride byte offset >> 4
 * at bit 32, layout (swizzle) at bit 62. */
INL ulong desc_with(uint addr, uint lbo, uint sbo, ulong layout) {
  return (ulong)((addr & 0x3ffffu) >> 4) | ((ulong)(lbo >> 4) << 16) | ((ulong)(sbo >> 4) << 32) |
         (layout << 62);
}
INL ulong desc_of(uint addr) { return desc_with(addr, DESC_LBO, DESC_SBO, DESC_LAYOUT); }

#if B_MN
/* B_MN=1 (f16/bf16 only): B read in place as k rows of n (k x n, row stride ldb: the common
 * A B with B not transposed), wgmma's n-major operand with the 128-byte swizzle. A stage's B
 * is BN / 64 columns of "atoms" 64 n wide: k row r of atom column j at
 * j BCOL_BYTES + r 128, its 16-byte piece c at piece c ^ (r % 8). Descriptor: leading byte
 * offset between atom columns, stride byte offset between groups of 8 k rows. */
#if W_BYTES != 128
#error "B_MN=1 takes 128-byte rows (BK 64 of 16-bit elements)"
#endif
#define BCOL_BYTES (BK * 128)
#define BP_ROW (BN * EB / 16)         /* 16-byte pieces in a k row of B's stage */
#define B_ROW_STEP (COPY_THREADS / BP_ROW) /* k rows between a work-item's pieces */
#endif


/* The descriptor of B's part of the stage at st for wgmma step kk: n-major atoms 64 columns
 * wide with B_MN, else k-major rows like A's. */
#if B_MN
#define DESC_B(st, kk) desc_with((st) + A_BYTES + (kk) * 2048u, BCOL_BYTES, 1024u, 1ul)
#else
#define DESC_B(st, kk) desc_of((st) + A_BYTES + (kk) * KSTEP_BYTES)
#endif

/* One 16-byte cp.async; bytes past `bytes` are zero-filled. */
INL void cp_async16(uint dst, __global const ET *src, uint bytes) {
  ASM("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(bytes)
      : "memory");
}
INL void cp_commit(void) { ASM("cp.async.commit_group;" ::: "memory"); }
#define CP_WAIT(n) ASM("cp.async.wait_group " #n ";" ::: "memory")
/* cp.async.wait_group takes a literal: AHEAD - 1 groups may stay in flight. */
#if AHEAD == 1
#define CP_WAIT_TILE() CP_WAIT(0)
#elif AHEAD == 2
#define CP_WAIT_TILE() CP_WAIT(1)
#elif AHEAD == 3
#define CP_WAIT_TILE() CP_WAIT(2)
#else
#define CP_WAIT_TILE() CP_WAIT(3)
#endif

/* Generic-proxy writes (cp.async) made visible to wgmma's reads (the async proxy). */
INL void fence_async(void) { ASM("//@fence.proxy.async.shared::cta;" ::: "memory"); }
INL void wg_fence(void) { ASM("//@wgmma.fence.sync.aligned;" ::: "memory"); }
INL void wg_commit(void) { ASM("//@wgmma.commit_group.sync.aligned;" ::: "memory"); }
#define WG_WAIT(n) ASM("//@wgmma.wait_group.sync.aligned " #n ";" ::: "memory")

/* D += A (descriptor da, 64 x k) B^T (descriptor db, BN x k), k = WG_K: the operands are
 * the accumulators (in and out), the two descriptors and 1 for scale-d (accumulate). The
 * accumulators' operand numbers and constraints come in runs of 64. */
#define WG_REGS_0_31 \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, " \
  "%12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, " \
  "%24, %25, %26, %27, %28, %29, %30, %31"
#define WG_REGS_0_63 \
  WG_REGS_0_31 ", %32, %33, %34, %35, " \
  "%36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, " \
  "%60, %61, %62, %63"
#define WG_REGS_64_127 \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, " \
  "%76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, " \
  "%88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, " \
  "%100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, " \
  "%124, %125, %126, %127"
#define WG_D4(D, i) "+f"(D[i]), "+f"(D[i + 1]), "+f"(D[i + 2]), "+f"(D[i + 3])
#define WG_D16(D, i) WG_D4(D, i), WG_D4(D, i + 4), WG_D4(D, i + 8), WG_D4(D, i + 12)
#define WG_D64(D, i) WG_D16(D, i), WG_D16(D, i + 16), WG_D16(D, i + 32), WG_D16(D, i + 48)

#define WGMMA_N64(D, da, db) \
  ASM("//@{ .reg .pred p; setp.ne.b32 p, %34, 0;\n\t" \
      "//@wgmma.mma_async.sync.aligned.m64n64k" WG_K "." WG_TYPES " {" \
      WG_REGS_0_31 "}, %32, %33, p, 1, 1" WG_TRANS "; }" \
      : WG_D16(D, 0), WG_D16(D, 16) \
      : "l"(da), "l"(db), "r"(1))

#define WGMMA_N128(D, da, db) \
  ASM("//@{ .reg .pred p; setp.ne.b32 p, %66, 0;\n\t" \
      "//@wgmma.mma_async.sync.aligned.m64n128k" WG_K "." WG_TYPES " {" \
      WG_REGS_0_63 "}, %64, %65, p, 1, 1" WG_TRANS "; }" \
      : WG_D64(D, 0) \
      : "l"(da), "l"(db), "r"(1))

#define WGMMA_N256(D, da, db) \
  ASM("//@{ .reg .pred p; setp.ne.b32 p, %130, 0;\n\t" \
      "//@wgmma.mma_async.sync.aligned.m64n256k" WG_K "." WG_TYPES " {" \
      WG_REGS_0_63 ", " WG_REGS_64_127 "}, %128, %129, p, 1, 1" WG_TRANS "; }" \
      : WG_D64(D, 0), WG_D64(D, 64) \
      : "l"(da), "l"(db), "r"(1))
#define WGMMA_(n) WGMMA_N##n
#define WGMMA_SIZE(n) WGMMA_(n)
#define WGMMA WGMMA_SIZE(BN)

/* C's element type from f32 and back. */
#define C_T ET
#if defined(WG_F16)
#define C_F16
#elif defined(WG_BF16)
#define C_BF16
#endif
#include "gemm_c_io.cl"

/* A work-item's copies of one operand: its first row's source (k = 0), the source's step of
 * ROW_STEP rows, how many of its rows lie inside the matrix, its local destination. */
typedef struct copy_plan {
  __global const ET *src;
  ulong step;
  uint rows, dst;
} copy_plan;

INL copy_plan plan_of(__global const ET *x, uint ld, uint first, uint limit, uint tid,
                      uint count) {
  copy_plan p;
  const uint r = tid / KCH, c = tid % KCH;
  p.src = x + (ulong)(first + r) * ld + c * EPP;
  p.step = (ulong)ROW_STEP * ld;
  p.rows = first + r < limit ? min(count, (limit - first - r + ROW_STEP - 1) / ROW_STEP) : 0u;
  p.dst = r * W_BYTES + ((c ^ ((r * W_BYTES / 128) % KCH)) * 16);
  return p;
}

#if B_MN
/* B's plan when it is read n-major: piece tid % BP_ROW of k rows tid / BP_ROW + i B_ROW_STEP
 * (row r's swizzle is r % 8: B_DST gives row i's destination). rows: the bytes of its piece
 * inside n. */
INL copy_plan plan_b_mn(__global const ET *b, uint ldb, uint col0, uint n, uint tid) {
  copy_plan p;
  const uint r = tid / BP_ROW, c = tid % BP_ROW, n0 = col0 + c * EPP;
  p.src = b + (ulong)r * ldb + n0;
  p.step = (ulong)B_ROW_STEP * ldb;
  p.rows = n0 < n ? min(16u, (n - n0) * EB) : 0u;
  p.dst = (c / 8) * BCOL_BYTES + r * 128 + (c % 8) * 16;
  return p;
}
/* Row i's destination: the unswizzled one with piece c % 8 XOR the row's r % 8. */
#define B_DST(p, tid, i) \
  ((p)->dst ^ (((((tid) / BP_ROW) + (i) * B_ROW_STEP) % 8u) * 16u))

/* Copies k tile t of B (n-major) into its part of a stage, zero past n and k. */
INL void copy_tile_b_mn(const copy_plan *p, uint dst, uint t, uint tid, uint k, uint ldb,
                        __global const ET *any) {
  const uint r = t * BK + tid / BP_ROW;
#pragma unroll
  for (uint i = 0; i < B_PER; i++) {
    const uint nb = r + i * B_ROW_STEP < k ? p->rows : 0u;
    cp_async16(dst + B_DST(p, tid, i) + i * B_ROW_STEP * 128,
               nb ? p->src + (ulong)t * BK * ldb + i * p->step : any, nb);
  }
}
#endif

/* Copies k tile t of one operand into its part of a stage (local address dst), zero past the
 * matrix's rows and k. `any`: a valid address for the copies of no bytes. */
INL void copy_tile(const copy_plan *p, uint dst, uint t, uint tid, uint k, uint count,
                   __global const ET *any) {
  const uint kk = t * BK + (tid % KCH) * EPP;
  const uint bytes = kk < k ? min(16u, (k - kk) * EB) : 0u;
#pragma unroll
  for (uint i = 0; i < count; i++) {
    const uint nb = i < p->rows ? bytes : 0u;
    cp_async16(dst + p->dst + i * ROW_STEP * W_BYTES, nb ? p->src + t * BK + i * p->step : any,
               nb);
  }
}

#ifndef TMA
#define TMA 0
#endif
#if WS || TMA
/* mbarriers (local 8-byte words, by shared-space address). A stage's "full" barrier expects
 * one arrival from each producer work-item, made by cp.async when its copies have landed;
 * its "empty" barrier one from each consumer work-item once its wgmma read the stage. */
INL void mbar_init(uint bar, uint count) {
  ASM("//@mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
INL void mbar_wait(uint bar, uint parity) {
  uint done;
  do {
    ASM("//@{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
        "//@selp.u32 %0, 1, 0, p; }"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}
INL void mbar_arrive(uint bar) {
  ASM("//@{ .reg .b64 st; mbarrier.arrive.shared::cta.b64 st, [%0]; }" ::"r"(bar) : "memory");
}
/* Arrives on bar when this work-item's earlier cp.async copies have landed. */
INL void cp_arrive(uint bar) {
  ASM("//@cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(bar) : "memory");
}
#endif
#if TMA
#if WS
#error "TMA takes the two-warpgroup build"
#endif
/* -DTMA=1: the tensor copy engine (TMA) moves each stage from A and B where they lie, swizzled
 * as wgmma reads them and zero outside the matrices, so nothing is packed and the main loop
 * has no bounds checks. A copy names its source through a tensor map, a 128-byte description
 * of a 3-D array (k, rows, batch) that CUDA's driver API makes on the host; OpenCL has no
 * such call, so each work-group builds its two maps itself with tensormap.replace on zeroed
 * local memory (every field set), copies them to its slot of `maps` and fences them for the
 * tensor proxy (PTX ISA 8.3, src/core/ptx.c). Every row stride, batch stride and base
 * address is a multiple of 16 bytes (gemm_wgmma.c packs other operands first). */
#if defined(WG_F16)
#define MAP_TYPE "6"
#elif defined(WG_BF16)
#define MAP_TYPE "10"
#else
#define MAP_TYPE "7" /* f32: the bytes as stored; the tensor cores truncate them to TF32 */
#endif
#define MAP_SET_AT(field, i, v)                                                                \
  ASM("//@tensormap.replace.tile." field ".shared::cta.b1024.b32 [%0], " #i ", %1;" ::"r"(s), \
      "r"(v)                                                                                \
      : "memory")
#define MAP_SET(field, v)                                                                    \
  ASM("//@tensormap.replace.tile." field ".shared::cta.b1024.b32 [%0], " v ";" ::"r"(s) \
      : "memory")
/* Writes into local memory at shared address s (128 zero bytes, 128-byte aligned) the map of
 * elements at base: d0 (contiguous) x d1 x d2, strides s1 and s2 bytes, boxes of b0 x b1 x 1,
 * the 128-byte swizzle, zero fill. */
INL void map_build(uint s, __global const ET *base, uint d0, uint d1, uint d2, ulong s1,
                   ulong s2, uint b0, uint b1) {
  ASM("//@tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%0], %1;" ::"r"(s),
      "l"(base)
      : "memory");
  MAP_SET("rank", "2"); /* the rank less one */
  MAP_SET_AT("box_dim", 0, b0);
  MAP_SET_AT("box_dim", 1, b1);
  MAP_SET_AT("box_dim", 2, 1u);
  MAP_SET_AT("global_dim", 0, d0);
  MAP_SET_AT("global_dim", 1, d1);
  MAP_SET_AT("global_dim", 2, d2);
  ASM("//@tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%0], 0, %1;" ::"r"(s),
      "l"(s1)
      : "memory");
  ASM("//@tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%0], 1, %1;" ::"r"(s),
      "l"(s2)
      : "memory");
  MAP_SET_AT("element_stride", 0, 1u);
  MAP_SET_AT("element_stride", 1, 1u);
  MAP_SET_AT("element_stride", 2, 1u);
  MAP_SET("elemtype", MAP_TYPE);
  MAP_SET("interleave_layout", "0");
  MAP_SET("swizzle_mode", "3"); /* 128 bytes */
  MAP_SET("fill_mode", "0");    /* zeros */
}
/* The box of map at coordinates (c0, c1, c2) into local address dst, counted by bar. */
INL void tma_copy(uint dst, __global const ulong *map, uint c0, uint c1, uint c2, uint bar) {
  ASM("//@cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
      "[%0], [%1, {%2, %3, %4}], [%5];" ::"r"(dst),
      "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
      : "memory");
}
/* k tile t of A's rows from row0 and B's columns from col0 (batch entries za, zb) into the
 * stage at dst. */
INL void tma_stage(uint bar, uint dst, __global const ulong *ma, __global const ulong *mb,
                   uint t, uint row0, uint col0, uint za, uint zb) {
  ASM("//@{ .reg .b64 st; mbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1; }"
      ::"r"(bar), "r"((uint)STAGE_BYTES) : "memory");
  tma_copy(dst, ma, t * BK, row0, za, bar);
#if B_MN
#pragma unroll
  for (uint j = 0; j < BN / 64; j++)
    tma_copy(dst + A_BYTES + j * BCOL_BYTES, mb, col0 + 64 * j, t * BK, zb, bar);
#else
  tma_copy(dst + A_BYTES, mb, t * BK, col0, zb, bar);
#endif
}
#endif

#if WS
#if REGS
/* Registers move from the producer, which needs few, to the consumers' accumulators. */
#define PRODUCER_REGS() ASM("//@setmaxnreg.dec.sync.aligned.u32 40;" ::: "memory")
#define CONSUMER_REGS() ASM("//@setmaxnreg.inc.sync.aligned.u32 232;" ::: "memory")
#else
#define PRODUCER_REGS()
#define CONSUMER_REGS()
#endif

__kernel __attribute__((reqd_work_group_size(NTHREADS, 1, 1))) void
ocal_gemm_wgmma(__global const ET *a0, ulong a_off, uint lda, ulong a_stride,
                __global const ET *b0, ulong b_off, uint ldb, ulong b_stride, __global ET *c0,
                ulong c_off, uint ldc, ulong c_stride, uint m, uint n, uint k, float alpha,
                float beta, int read_c) {
  __local float4 tiles[STAGES * STAGE_BYTES / 16] __attribute__((aligned(1024)));
  __local ulong bars[2 * STAGES];
  const uint tid = get_local_id(0), wg = tid / 128;
  const uint nbx = (n + BN - 1) / BN, nby = (m + BM - 1) / BM, per = nbx * nby;
  const uint first = get_group_id(0), step = get_num_groups(0);
  const ulong z = get_group_id(2);
  const uint sbase = smem_u32(tiles), full0 = smem_u32(bars), empty0 = full0 + 8u * STAGES;
  const uint ktiles = (k + BK - 1) / BK;
  if (tid == 0)
    for (uint s = 0; s < STAGES; s++) {
      mbar_init(full0 + 8u * s, COPY_THREADS);
      mbar_init(empty0 + 8u * s, 256u);
    }
  barrier(CLK_LOCAL_MEM_FENCE);
  uint it = 0; /* k tiles through the stages so far, over every block this group ran */
  if (wg == 0) {
    PRODUCER_REGS();
    for (uint lin = first; lin < per; lin += step) {
      uint bx, by;
      block_of(lin, nbx, nby, &bx, &by);
      __global const ET *a = a0 + a_off + z * a_stride, *b = b0 + b_off + z * b_stride;
      const copy_plan pa = plan_of(a, lda, by * BM, m, tid, A_PER);
#if B_MN
      const copy_plan pb = plan_b_mn(b, ldb, bx * BN, n, tid);
#else
      const copy_plan pb = plan_of(b, ldb, bx * BN, n, tid, B_PER);
#endif
      for (uint t = 0; t < ktiles; t++, it++) {
        const uint s = it % STAGES, dst = sbase + s * STAGE_BYTES;
        if (it >= STAGES) mbar_wait(empty0 + 8u * s, (it / STAGES - 1u) & 1u);
        copy_tile(&pa, dst, t, tid, k, A_PER, a);
#if B_MN
        copy_tile_b_mn(&pb, dst + A_BYTES, t, tid, k, ldb, b);
#else
        copy_tile(&pb, dst + A_BYTES, t, tid, k, B_PER, b);
#endif
        cp_arrive(full0 + 8u * s);
      }
    }
    CP_WAIT(0); /* no copy outlives its work-item */
    return;
  }
  CONSUMER_REGS();
  const uint cw = wg - 1u, lane = tid % 32;
  for (uint lin = first; lin < per; lin += step) {
    uint bx, by;
    block_of(lin, nbx, nby, &bx, &by);
    float d[NACC];
#pragma unroll
    for (uint i = 0; i < NACC; i++) d[i] = 0.0f;
    for (uint t = 0; t < ktiles; t++, it++) {
      const uint s = it % STAGES, st = sbase + s * STAGE_BYTES;
      mbar_wait(full0 + 8u * s, (it / STAGES) & 1u);
      fence_async(); /* the producer's cp.async writes, seen here, made visible to wgmma */
      wg_fence();
#pragma unroll
      for (uint kk = 0; kk < W_BYTES / KSTEP_BYTES; kk++) {
        const ulong da = desc_of(st + cw * 64 * W_BYTES + kk * KSTEP_BYTES);
        WGMMA(d, da, DESC_B(st, kk));
      }
      wg_commit();
      WG_WAIT(1);
      /* Step t - 1's wgmma has read its stage: the producer may refill it. */
      if (t) mbar_arrive(empty0 + 8u * ((it - 1u) % STAGES));
    }
    WG_WAIT(0);
    if (ktiles) mbar_arrive(empty0 + 8u * ((it - 1u) % STAGES));

    __global ET *c = c0 + c_off + z * c_stride;
    const uint r0 = by * BM + cw * 64 + ((tid / 32) % 4) * 16 + lane / 4;
#pragma unroll
    for (uint j = 0; j < BN / 8; j++) {
      const uint col = bx * BN + 8 * j + 2 * (lane % 4);
#pragma unroll
      for (uint h = 0; h < 2; h++) {
        const uint r = r0 + 8 * h;
        if (r >= m) continue;
        __global ET *cr = c + (ulong)r * ldc + col;
#pragma unroll
        for (uint e = 0; e < 2; e++) {
          if (col + e >= n) continue;
          float v = alpha * d[4 * j + 2 * h + e];
          if (read_c) v += beta * load_c(cr + e);
          store_c(cr + e, v);
        }
      }
    }
  }
}
#else
__kernel __attribute__((reqd_work_group_size(NTHREADS, 1, 1))) void
ocal_gemm_wgmma(__global const ET *a, ulong a_off, uint lda, ulong a_stride,
                __global const ET *b, ulong b_off, uint ldb, ulong b_stride, __global ET *c,
                ulong c_off, uint ldc, ulong c_stride, uint m, uint n, uint k, float alpha,
                float beta, int read_c
#if TMA
                ,
                __global ulong *maps
#endif
) {
  __local float4 tiles[STAGES * STAGE_BYTES / 16] __attribute__((aligned(1024)));
  const uint tid = get_local_id(0);
  uint bx, by;
  block_of(get_group_id(1) * get_num_groups(0) + get_group_id(0), get_num_groups(0),
           get_num_groups(1), &bx, &by);
  const ulong z = get_group_id(2);
#if !TMA
  a += a_off + z * a_stride;
  b += b_off + z * b_stride;
#endif
  c += c_off + z * c_stride;
  const uint row0 = by * BM, col0 = bx * BN, wg = tid / 128;
  const uint sbase = smem_u32(tiles), ktiles = (k + BK - 1) / BK;
#if TMA
  __local ulong bars[STAGES];
  const uint full0 = smem_u32(bars);
  /* This work-group's two tensor maps (A's, then B's), built in local memory by work-item 0
   * and copied to its slot of maps by warp 0. a_stride, b_stride: 0 where one matrix serves
   * every batch entry; its map then has one entry (and a batch stride that is never used). */
  __local ulong map_s[32] __attribute__((aligned(128)));
  const ulong group = ((ulong)get_group_id(2) * get_num_groups(1) + get_group_id(1)) *
                          get_num_groups(0) +
                      get_group_id(0);
  __global ulong *ma = maps + 32 * group;
  __global ulong *mb = ma + 16;
  const uint za = a_stride ? (uint)z : 0u, zb = b_stride ? (uint)z : 0u;
  if (tid < 32) {
    const uint ms = smem_u32(map_s), nz = get_num_groups(2);
    if (tid == 0) {
      for (uint i = 0; i < 32; i++) map_s[i] = 0;
      a += a_off;
      b += b_off;
      map_build(ms, a, k, m, a_stride ? nz : 1u, (ulong)lda * EB,
                a_stride ? a_stride * EB : (ulong)lda * EB, BK, BM);
#if B_MN
      map_build(ms + 128, b, n, k, b_stride ? nz : 1u, (ulong)ldb * EB,
                b_stride ? b_stride * EB : (ulong)ldb * EB, 64, BK);
#else
      map_build(ms + 128, b, k, n, b_stride ? nz : 1u, (ulong)ldb * EB,
                b_stride ? b_stride * EB : (ulong)ldb * EB, BK, BN);
#endif
    }
    ASM("bar.warp.sync -1;" ::: "memory");
    ASM("//@tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned "
        "[%0], [%1], 128;" ::"l"(ma), "r"(ms) : "memory");
    ASM("//@tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned "
        "[%0], [%1], 128;" ::"l"(mb), "r"(ms + 128u) : "memory");
    if (tid == 0) {
      ASM("//@fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" ::"l"(ma) : "memory");
      ASM("//@fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" ::"l"(mb) : "memory");
    }
  }
#define FILL(t)                                                                              \
  tma_stage(full0 + 8u * ((t) % STAGES), sbase + ((t) % STAGES) * STAGE_BYTES, ma, mb, (t), \
            row0, col0, za, zb)
  if (tid == 0) {
    for (uint s = 0; s < STAGES; s++) mbar_init(full0 + 8u * s, 1u);
    ASM("//@fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  float d[NACC];
#pragma unroll
  for (uint i = 0; i < NACC; i++) d[i] = 0.0f;
  if (tid == 0)
    for (uint s = 0; s < AHEAD && s < ktiles; s++) FILL(s);
  for (uint t = 0; t < ktiles; t++) {
    const uint st = sbase + (t % STAGES) * STAGE_BYTES;
    mbar_wait(full0 + 8u * (t % STAGES), (t / STAGES) & 1u);
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint tn = t + AHEAD;
    if (tid == 0 && tn < ktiles) FILL(tn);
    wg_fence();
#pragma unroll
    for (uint kk = 0; kk < W_BYTES / KSTEP_BYTES; kk++) {
      const ulong da = desc_of(st + wg * 64 * W_BYTES + kk * KSTEP_BYTES);
      WGMMA(d, da, DESC_B(st, kk));
    }
    wg_commit();
    WG_WAIT(1);
  }
  WG_WAIT(0);
#else
  const copy_plan pa = plan_of(a, lda, row0, m, tid, A_PER);
#if B_MN
  const copy_plan pb = plan_b_mn(b, ldb, col0, n, tid);
#define COPY_B(dst, t) copy_tile_b_mn(&pb, dst, t, tid, k, ldb, b)
#else
  const copy_plan pb = plan_of(b, ldb, col0, n, tid, B_PER);
#define COPY_B(dst, t) copy_tile(&pb, dst, t, tid, k, B_PER, b)
#endif

  float d[NACC];
#pragma unroll
  for (uint i = 0; i < NACC; i++) d[i] = 0.0f;

#pragma unroll
  for (uint s = 0; s < AHEAD; s++) {
    if (s < ktiles) {
      copy_tile(&pa, sbase + s * STAGE_BYTES, s, tid, k, A_PER, a);
      COPY_B(sbase + s * STAGE_BYTES + A_BYTES, s);
    }
    cp_commit();
  }
  for (uint t = 0; t < ktiles; t++) {
    const uint st = sbase + (t % STAGES) * STAGE_BYTES;
    CP_WAIT_TILE(); /* this work-item's copies of tile t have landed */
    fence_async();  /* ... and are visible to wgmma */
    barrier(CLK_LOCAL_MEM_FENCE);
    /* Every warpgroup is past wgmma.wait_group 1 of step t - 1: tile t - 2's stage is free. */
    const uint tn = t + AHEAD;
    if (tn < ktiles) {
      const uint dst = sbase + (tn % STAGES) * STAGE_BYTES;
      copy_tile(&pa, dst, tn, tid, k, A_PER, a);
      COPY_B(dst + A_BYTES, tn);
    }
    cp_commit();
    wg_fence();
#pragma unroll
    for (uint kk = 0; kk < W_BYTES / KSTEP_BYTES; kk++) {
      const ulong da = desc_of(st + wg * 64 * W_BYTES + kk * KSTEP_BYTES);
      WGMMA(d, da, DESC_B(st, kk));
    }
    wg_commit();
    WG_WAIT(1);
  }
  WG_WAIT(0);
#endif

  /* D's layout (64 x BN per warpgroup): warp w of the group has rows 16 w + lane / 4 (+ 8);
   * accumulator 4 j + 2 h + e is row + 8 h, column 8 j + 2 (lane % 4) + e. */
  const uint lane = tid % 32, r0 = row0 + wg * 64 + ((tid / 32) % 4) * 16 + lane / 4;
#pragma unroll
  for (uint j = 0; j < BN / 8; j++) {
    const uint col = col0 + 8 * j + 2 * (lane % 4);
#pragma unroll
    for (uint h = 0; h < 2; h++) {
      const uint r = r0 + 8 * h;
      if (r >= m) continue;
      __global ET *cr = c + (ulong)r * ldc + col;
#pragma unroll
      for (uint e = 0; e < 2; e++) {
        if (col + e >= n) continue;
        float v = alpha * d[4 * j + 2 * h + e];
        if (read_c) v += beta * load_c(cr + e);
        store_c(cr + e, v);
      }
    }
  }
}
#endif
