/* ocal — TF32 GEMM on Hopper's wgmma (compute capability 9.0, PTX target sm_90a):
 * C = alpha A B^T + beta C for row-major A (m x k, row stride lda) and B (n x k, row stride
 * ldb), both k-contiguous as wgmma's TF32 form requires; src/blas/gemm_wgmma.c packs other
 * layouts into scratch first (ocal_wgmma_pack, below). Offsets and strides count elements;
 * launch {ceil(n / BN) 256, ceil(m / 128), batch}.
 *
 * Why the odd "//@" lines: NVIDIA's OpenCL compiler targets sm_90, where ptxas refuses every
 * wgmma instruction, and OpenCL C has no way to ask for sm_90a. So those instructions are
 * written as PTX comments "//@...": the OpenCL build substitutes their register operands like
 * any inline assembly's and ignores them; with -DOCAL_PTX_TARGET=sm_90a ocal then takes the
 * program's binary (PTX text), removes the markers, changes the target and builds that
 * (src/core/ptx.c; docs/tensor-cores.md, "wgmma from OpenCL").
 *
 * Build options: -DBN=128|256 (block columns; rows are 128, two warpgroups of 64 rows, each
 * issuing m64nBNk8), -DBK=8|16|32 (k per stage: rows of 32, 64 or 128 bytes in the matching
 * swizzle), -DSTAGES (local stages, at most SMEM_MAX bytes in all), -DRASTER=G. The engine's
 * variant and the measurements behind it are in docs/tensor-cores.md. The tensor cores
 * truncate the f32 operands to TF32 (rounding them in local memory first cost a third of the
 * speed on an H100). Every leading dimension, offset and batch stride of A and B is a
 * multiple of 4 elements (16-byte copies). */

#ifndef BN
#define BN 256
#endif
#ifndef BK
#define BK 32
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
#ifndef ASM_KW
#define ASM_KW __asm__
#endif
#define ASM ASM_KW volatile
#ifndef INL
#define INL static inline __attribute__((always_inline))
#endif

#define BM 128
#define NTHREADS 256
#define KCH (BK / 4) /* 16-byte pieces of a row per stage */
#define A_BYTES (BM * BK * 4)
#define B_BYTES (BN * BK * 4)
#define STAGE_BYTES (A_BYTES + B_BYTES)
#define A_PER (BM * KCH / NTHREADS) /* pieces a work-item copies per stage */
#define B_PER (BN * KCH / NTHREADS)
#define NACC (BN / 2) /* a work-item's f32 accumulators (64 x BN per warpgroup) */
#define AHEAD (STAGES - 2) /* k tiles in flight */

#if STAGES < 3 || STAGES > 6
#error "STAGES is 3 to 6: stage t - 2 is refilled while t - 1's wgmma may still run"
#endif
#if STAGES * STAGE_BYTES > SMEM_MAX
#error "the stages pass SMEM_MAX bytes"
#endif

/* Local tiles: row r of an operand's stage (BK f32, W = 4 BK bytes) in wgmma's k-major
 * swizzled layout of the same width (32, 64 or 128 bytes): rows W bytes apart, the 16-byte
 * piece c of row r at piece c ^ ((r W / 128) % KCH), so the 8 rows of a core matrix fall on
 * distinct banks (the unswizzled layout of 8 x 16-byte core matrices ran 20% slower). */
#define W_BYTES (BK * 4)
#define DESC_LBO 16u
#define DESC_SBO (8u * W_BYTES) /* between 8-row groups */
#define DESC_LAYOUT (BK == 32 ? 1ul : BK == 16 ? 2ul : 3ul) /* 128B, 64B, 32B swizzle */
#define KSTEP_BYTES 32u /* k8 within a row */
/* A work-item copies piece tid % KCH of rows tid / KCH + i ROW_STEP; the swizzle of those
 * rows is the same for every i. */
#define ROW_STEP (NTHREADS / KCH)

/* Matrix descriptor: start >> 4, leading byte offset >> 4 at bit 16, stride byte offset >> 4
 * at bit 32, layout (swizzle) at bit 62. */
INL ulong desc_of(uint addr) {
  return (ulong)((addr & 0x3ffffu) >> 4) | ((ulong)(DESC_LBO >> 4) << 16) |
         ((ulong)(DESC_SBO >> 4) << 32) | (DESC_LAYOUT << 62);
}

/* NVIDIA's OpenCL gives a __local pointer's shared-space offset as its integer value
 * (cl/gemm_mma.cl's SMEM_ADDR=0, which its probe checks). */
INL uint smem_u32(__local const void *p) { return (uint)(ulong)p; }

/* One 16-byte cp.async; bytes past `bytes` are zero-filled. */
INL void cp_async16(uint dst, __global const float *src, uint bytes) {
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

/* D[o ...] += A (descriptor da, 64 x 8) B^T (descriptor db, n x 8): the operands are the
 * accumulators (in and out), the two descriptors and 1 for scale-d (accumulate). */
#define WGMMA_TF32_N128(D, o, da, db) \
  ASM("//@{ .reg .pred p; setp.ne.b32 p, %66, 0;\n\t" \
      "//@wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {" \
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, " \
      "%12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, " \
      "%24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, " \
      "%36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, " \
      "%60, %61, %62, %63" \
      "}, %64, %65, p, 1, 1; }" \
      : "+f"(D[(o) + 0]), "+f"(D[(o) + 1]), "+f"(D[(o) + 2]), "+f"(D[(o) + 3]), \
        "+f"(D[(o) + 4]), "+f"(D[(o) + 5]), "+f"(D[(o) + 6]), "+f"(D[(o) + 7]), \
        "+f"(D[(o) + 8]), "+f"(D[(o) + 9]), "+f"(D[(o) + 10]), "+f"(D[(o) + 11]), \
        "+f"(D[(o) + 12]), "+f"(D[(o) + 13]), "+f"(D[(o) + 14]), "+f"(D[(o) + 15]), \
        "+f"(D[(o) + 16]), "+f"(D[(o) + 17]), "+f"(D[(o) + 18]), "+f"(D[(o) + 19]), \
        "+f"(D[(o) + 20]), "+f"(D[(o) + 21]), "+f"(D[(o) + 22]), "+f"(D[(o) + 23]), \
        "+f"(D[(o) + 24]), "+f"(D[(o) + 25]), "+f"(D[(o) + 26]), "+f"(D[(o) + 27]), \
        "+f"(D[(o) + 28]), "+f"(D[(o) + 29]), "+f"(D[(o) + 30]), "+f"(D[(o) + 31]), \
        "+f"(D[(o) + 32]), "+f"(D[(o) + 33]), "+f"(D[(o) + 34]), "+f"(D[(o) + 35]), \
        "+f"(D[(o) + 36]), "+f"(D[(o) + 37]), "+f"(D[(o) + 38]), "+f"(D[(o) + 39]), \
        "+f"(D[(o) + 40]), "+f"(D[(o) + 41]), "+f"(D[(o) + 42]), "+f"(D[(o) + 43]), \
        "+f"(D[(o) + 44]), "+f"(D[(o) + 45]), "+f"(D[(o) + 46]), "+f"(D[(o) + 47]), \
        "+f"(D[(o) + 48]), "+f"(D[(o) + 49]), "+f"(D[(o) + 50]), "+f"(D[(o) + 51]), \
        "+f"(D[(o) + 52]), "+f"(D[(o) + 53]), "+f"(D[(o) + 54]), "+f"(D[(o) + 55]), \
        "+f"(D[(o) + 56]), "+f"(D[(o) + 57]), "+f"(D[(o) + 58]), "+f"(D[(o) + 59]), \
        "+f"(D[(o) + 60]), "+f"(D[(o) + 61]), "+f"(D[(o) + 62]), "+f"(D[(o) + 63]) \
      : "l"(da), "l"(db), "r"(1))

#define WGMMA_TF32_N256(D, o, da, db) \
  ASM("//@{ .reg .pred p; setp.ne.b32 p, %130, 0;\n\t" \
      "//@wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {" \
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, " \
      "%12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, " \
      "%24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, " \
      "%36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, " \
      "%60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, " \
      "%72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, " \
      "%84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, " \
      "%108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, " \
      "%120, %121, %122, %123, %124, %125, %126, %127" \
      "}, %128, %129, p, 1, 1; }" \
      : "+f"(D[(o) + 0]), "+f"(D[(o) + 1]), "+f"(D[(o) + 2]), "+f"(D[(o) + 3]), \
        "+f"(D[(o) + 4]), "+f"(D[(o) + 5]), "+f"(D[(o) + 6]), "+f"(D[(o) + 7]), \
        "+f"(D[(o) + 8]), "+f"(D[(o) + 9]), "+f"(D[(o) + 10]), "+f"(D[(o) + 11]), \
        "+f"(D[(o) + 12]), "+f"(D[(o) + 13]), "+f"(D[(o) + 14]), "+f"(D[(o) + 15]), \
        "+f"(D[(o) + 16]), "+f"(D[(o) + 17]), "+f"(D[(o) + 18]), "+f"(D[(o) + 19]), \
        "+f"(D[(o) + 20]), "+f"(D[(o) + 21]), "+f"(D[(o) + 22]), "+f"(D[(o) + 23]), \
        "+f"(D[(o) + 24]), "+f"(D[(o) + 25]), "+f"(D[(o) + 26]), "+f"(D[(o) + 27]), \
        "+f"(D[(o) + 28]), "+f"(D[(o) + 29]), "+f"(D[(o) + 30]), "+f"(D[(o) + 31]), \
        "+f"(D[(o) + 32]), "+f"(D[(o) + 33]), "+f"(D[(o) + 34]), "+f"(D[(o) + 35]), \
        "+f"(D[(o) + 36]), "+f"(D[(o) + 37]), "+f"(D[(o) + 38]), "+f"(D[(o) + 39]), \
        "+f"(D[(o) + 40]), "+f"(D[(o) + 41]), "+f"(D[(o) + 42]), "+f"(D[(o) + 43]), \
        "+f"(D[(o) + 44]), "+f"(D[(o) + 45]), "+f"(D[(o) + 46]), "+f"(D[(o) + 47]), \
        "+f"(D[(o) + 48]), "+f"(D[(o) + 49]), "+f"(D[(o) + 50]), "+f"(D[(o) + 51]), \
        "+f"(D[(o) + 52]), "+f"(D[(o) + 53]), "+f"(D[(o) + 54]), "+f"(D[(o) + 55]), \
        "+f"(D[(o) + 56]), "+f"(D[(o) + 57]), "+f"(D[(o) + 58]), "+f"(D[(o) + 59]), \
        "+f"(D[(o) + 60]), "+f"(D[(o) + 61]), "+f"(D[(o) + 62]), "+f"(D[(o) + 63]), \
        "+f"(D[(o) + 64]), "+f"(D[(o) + 65]), "+f"(D[(o) + 66]), "+f"(D[(o) + 67]), \
        "+f"(D[(o) + 68]), "+f"(D[(o) + 69]), "+f"(D[(o) + 70]), "+f"(D[(o) + 71]), \
        "+f"(D[(o) + 72]), "+f"(D[(o) + 73]), "+f"(D[(o) + 74]), "+f"(D[(o) + 75]), \
        "+f"(D[(o) + 76]), "+f"(D[(o) + 77]), "+f"(D[(o) + 78]), "+f"(D[(o) + 79]), \
        "+f"(D[(o) + 80]), "+f"(D[(o) + 81]), "+f"(D[(o) + 82]), "+f"(D[(o) + 83]), \
        "+f"(D[(o) + 84]), "+f"(D[(o) + 85]), "+f"(D[(o) + 86]), "+f"(D[(o) + 87]), \
        "+f"(D[(o) + 88]), "+f"(D[(o) + 89]), "+f"(D[(o) + 90]), "+f"(D[(o) + 91]), \
        "+f"(D[(o) + 92]), "+f"(D[(o) + 93]), "+f"(D[(o) + 94]), "+f"(D[(o) + 95]), \
        "+f"(D[(o) + 96]), "+f"(D[(o) + 97]), "+f"(D[(o) + 98]), "+f"(D[(o) + 99]), \
        "+f"(D[(o) + 100]), "+f"(D[(o) + 101]), "+f"(D[(o) + 102]), "+f"(D[(o) + 103]), \
        "+f"(D[(o) + 104]), "+f"(D[(o) + 105]), "+f"(D[(o) + 106]), "+f"(D[(o) + 107]), \
        "+f"(D[(o) + 108]), "+f"(D[(o) + 109]), "+f"(D[(o) + 110]), "+f"(D[(o) + 111]), \
        "+f"(D[(o) + 112]), "+f"(D[(o) + 113]), "+f"(D[(o) + 114]), "+f"(D[(o) + 115]), \
        "+f"(D[(o) + 116]), "+f"(D[(o) + 117]), "+f"(D[(o) + 118]), "+f"(D[(o) + 119]), \
        "+f"(D[(o) + 120]), "+f"(D[(o) + 121]), "+f"(D[(o) + 122]), "+f"(D[(o) + 123]), \
        "+f"(D[(o) + 124]), "+f"(D[(o) + 125]), "+f"(D[(o) + 126]), "+f"(D[(o) + 127]) \
      : "l"(da), "l"(db), "r"(1))
#define WGMMA_(n) WGMMA_TF32_N##n
#define WGMMA_N(n) WGMMA_(n)
#define WGMMA WGMMA_N(BN)

/* A work-item's copies of one operand: its first row's source (k = 0), the source's step of
 * ROW_STEP rows, how many of its rows lie inside the matrix, its local destination. */
typedef struct copy_plan {
  __global const float *src;
  ulong step;
  uint rows, dst;
} copy_plan;

INL copy_plan plan_of(__global const float *x, uint ld, uint first, uint limit, uint tid,
                      uint count) {
  copy_plan p;
  const uint r = tid / KCH, c = tid % KCH;
  p.src = x + (ulong)(first + r) * ld + c * 4;
  p.step = (ulong)ROW_STEP * ld;
  p.rows = first + r < limit ? min(count, (limit - first - r + ROW_STEP - 1) / ROW_STEP) : 0u;
  p.dst = r * W_BYTES + ((c ^ ((r * W_BYTES / 128) % KCH)) * 16);
  return p;
}

/* Copies k tile t of one operand into its part of a stage (local address dst), zero past the
 * matrix's rows and k. `any`: a valid address for the copies of no bytes. */
INL void copy_tile(const copy_plan *p, uint dst, uint t, uint tid, uint k, uint count,
                   __global const float *any) {
  const uint kk = t * BK + (tid % KCH) * 4;
  const uint bytes = kk < k ? min(16u, (k - kk) * 4u) : 0u;
#pragma unroll
  for (uint i = 0; i < count; i++) {
    const uint nb = i < p->rows ? bytes : 0u;
    cp_async16(dst + p->dst + i * ROW_STEP * W_BYTES, nb ? p->src + t * BK + i * p->step : any,
               nb);
  }
}

__kernel __attribute__((reqd_work_group_size(NTHREADS, 1, 1))) void
ocal_gemm_wgmma(__global const float *a, ulong a_off, uint lda, ulong a_stride,
                __global const float *b, ulong b_off, uint ldb, ulong b_stride, __global float *c,
                ulong c_off, uint ldc, ulong c_stride, uint m, uint n, uint k, float alpha,
                float beta, int read_c) {
  __local float4 tiles[STAGES * STAGE_BYTES / 16] __attribute__((aligned(1024)));
  const uint tid = get_local_id(0);
  uint bx = get_group_id(0), by = get_group_id(1);
#if RASTER
  {
    const uint nbx = get_num_groups(0), nby = get_num_groups(1), lin = by * nbx + bx;
    const uint first = lin / (RASTER * nbx) * RASTER, rows = min((uint)RASTER, nby - first);
    const uint in = lin - first * nbx;
    by = first + in % rows;
    bx = in / rows;
  }
#endif
  const ulong z = get_group_id(2);
  a += a_off + z * a_stride;
  b += b_off + z * b_stride;
  c += c_off + z * c_stride;
  const uint row0 = by * BM, col0 = bx * BN, wg = tid / 128;
  const uint sbase = smem_u32(tiles), ktiles = (k + BK - 1) / BK;
  const copy_plan pa = plan_of(a, lda, row0, m, tid, A_PER);
  const copy_plan pb = plan_of(b, ldb, col0, n, tid, B_PER);

  float d[NACC];
#pragma unroll
  for (uint i = 0; i < NACC; i++) d[i] = 0.0f;

#pragma unroll
  for (uint s = 0; s < AHEAD; s++) {
    if (s < ktiles) {
      copy_tile(&pa, sbase + s * STAGE_BYTES, s, tid, k, A_PER, a);
      copy_tile(&pb, sbase + s * STAGE_BYTES + A_BYTES, s, tid, k, B_PER, b);
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
      copy_tile(&pb, dst + A_BYTES, tn, tid, k, B_PER, b);
    }
    cp_commit();
    wg_fence();
#pragma unroll
    for (uint kk = 0; kk < BK / 8; kk++) {
      const ulong da = desc_of(st + wg * 64 * W_BYTES + kk * KSTEP_BYTES);
      const ulong db = desc_of(st + A_BYTES + kk * KSTEP_BYTES);
      WGMMA(d, 0, da, db);
    }
    wg_commit();
    WG_WAIT(1);
  }
  WG_WAIT(0);

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
      __global float *cr = c + (ulong)r * ldc + col;
#pragma unroll
      for (uint e = 0; e < 2; e++) {
        if (col + e >= n) continue;
        float v = alpha * d[4 * j + 2 * h + e];
        if (read_c) v += beta * cr[e];
        cr[e] = v;
      }
    }
  }
}

/* Operand packing for ocal_gemm_wgmma, which reads A and B as k-contiguous rows at 16-byte
 * aligned addresses: out (z, r, c) = in[in_off + z in_stride + (trans ? c ld + r : r ld + c)]
 * for r < rows and c < cols, zero for cols <= c < ld_out (ld_out a multiple of 4). Tiles of
 * 64 x 64, work-groups of 16 x 16 launched as {ceil(ld_out / 64) 16, ceil(rows / 64) 16,
 * batch}; each work-item writes 4 x 4 elements as 16-byte stores. A transpose goes through
 * local memory so that its reads are contiguous too, as 16-byte loads where `vec` (ld, in_off
 * and in_stride multiples of 4). */
__kernel __attribute__((reqd_work_group_size(16, 16, 1))) void
ocal_wgmma_pack(__global const float *in, ulong in_off, uint ld, ulong in_stride, int trans,
                int vec, __global float *out, uint ld_out, uint rows, uint cols) {
  __local float tile[64][65];
  const uint tx = get_local_id(0), ty = get_local_id(1);
  const uint r0 = get_group_id(1) * 64, c0 = get_group_id(0) * 64;
  const ulong z = get_group_id(2);
  in += in_off + z * in_stride;
  out += z * rows * (ulong)ld_out;
  if (trans) {
    /* tile[c - c0][r - r0] from in's row c. */
    for (uint i = 0; i < 4; i++) {
      const uint c = c0 + ty + 16 * i, r = r0 + 4 * tx;
      float4 v = (float4)(0.0f);
      if (c < cols && vec && r + 3 < rows) {
        v = vload4(0, in + (ulong)c * ld + r);
      } else if (c < cols) {
        __global const float *row = in + (ulong)c * ld;
        v.x = r < rows ? row[r] : 0.0f;
        v.y = r + 1 < rows ? row[r + 1] : 0.0f;
        v.z = r + 2 < rows ? row[r + 2] : 0.0f;
        v.w = r + 3 < rows ? row[r + 3] : 0.0f;
      }
      tile[ty + 16 * i][4 * tx] = v.x;
      tile[ty + 16 * i][4 * tx + 1] = v.y;
      tile[ty + 16 * i][4 * tx + 2] = v.z;
      tile[ty + 16 * i][4 * tx + 3] = v.w;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = 0; i < 4; i++) {
      const uint r = r0 + ty + 16 * i, c = c0 + 4 * tx;
      if (r >= rows || c >= ld_out) continue;
      const uint rr = ty + 16 * i;
      vstore4((float4)(tile[4 * tx][rr], tile[4 * tx + 1][rr], tile[4 * tx + 2][rr],
                       tile[4 * tx + 3][rr]),
              0, out + (ulong)r * ld_out + c);
    }
  } else {
    for (uint i = 0; i < 4; i++) {
      const uint r = r0 + ty + 16 * i, c = c0 + 4 * tx;
      if (r >= rows || c >= ld_out) continue;
      __global const float *row = in + (ulong)r * ld;
      vstore4((float4)(c < cols ? row[c] : 0.0f, c + 1 < cols ? row[c + 1] : 0.0f,
                       c + 2 < cols ? row[c + 2] : 0.0f, c + 3 < cols ? row[c + 3] : 0.0f),
              0, out + (ulong)r * ld_out + c);
    }
  }
}
