/* ocal — what the tensor-core GEMM kernels (cl/gemm_mma.cl, cl/gemm_dmma.cl, cl/gemm_wgmma.cl)
 * share: the inline-assembly and inlining macros, the shared-space address of a __local
 * pointer, and the order in which blocks run. The including kernel defines RASTER (and may
 * define ASM_KW, INL, SMEM_ADDR, MMA_EMULATE) first, then takes this file with
 * `#include "gemm_tc_common.cl"`, which build-aux/embed-cl.sh inlines. */

/* The inline-assembly keyword: clang's OpenCL C knows only __asm__, other front ends asm; a
 * probe retries a failed build with -DASM_KW=asm. */
#ifndef ASM_KW
#define ASM_KW __asm__
#endif
#define ASM ASM_KW volatile

/* Helpers are forced inline: the accumulators must stay in registers, and C99's plain
 * `inline` lets a compiler call an out-of-line copy instead. -DINL=inline where a front end
 * refuses the attribute. */
#ifndef INL
#define INL static inline __attribute__((always_inline))
#endif

#ifndef MMA_EMULATE
#define MMA_EMULATE 0
#endif
#ifndef SMEM_ADDR
#define SMEM_ADDR 2
#endif

/* The 32-bit shared-space address of a __local pointer, which cp.async, ldmatrix, mbarriers
 * and wgmma's descriptors take. SMEM_ADDR 0: the pointer's integer value is already a
 * shared-space offset (NVIDIA's OpenCL and clang's NVPTX back end); 1: it is a generic
 * address (cvta.to.shared); 2: decided at run time by isspacep.shared, so either works. */
INL uint smem_u32(__local const void *p) {
  const ulong v = (ulong)p;
#if MMA_EMULATE
  (void)v;
  return 0; /* emulated addresses are byte offsets from the kernel's tile buffer */
#elif SMEM_ADDR == 0
  return (uint)v;
#elif SMEM_ADDR == 1
  uint r;
  ASM("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(r) : "l"(v));
  return r;
#else
  uint r;
  ASM("{ .reg .pred p; .reg .u64 t; isspacep.shared p, %1; mov.u64 t, %1;\n"
      "  @p cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }"
      : "=r"(r)
      : "l"(v));
  return r;
#endif
}

/* The block (bx, by) of C that linear block index lin (x fastest) names on a grid of
 * nbx x nby blocks. With RASTER = G, consecutive indices walk down a group of G block rows
 * before moving one block column right, so that the blocks running at once share A's row
 * panels and B's column panels in L2; with RASTER 0 the index is row-major. */
INL void block_of(uint lin, uint nbx, uint nby, uint *bx, uint *by) {
#if RASTER
  const uint per = RASTER * nbx, first = lin / per * RASTER, rows = min(nby - first, (uint)RASTER);
  *bx = lin % per / rows;
  *by = first + lin % per % rows;
#else
  (void)nby;
  *bx = lin % nbx;
  *by = lin / nbx;
#endif
}
