/* ocal — operand packing for the wgmma GEMM kernel (cl/gemm_wgmma.cl), which reads A and B as
 * k-contiguous rows at 16-byte aligned addresses: out[z rows ld_out + r ld_out + c] =
 * in[in_off + z in_stride + (trans ? c ld + r : r ld + c)] for r < rows and c < cols, zero for
 * the other c < ld_out.
 *
 * Build options: -DWG_F16 or -DWG_BF16 (16-bit elements), else f32. Launch {ceil(ld_out /
 * 64) G, ceil(rows / 64), batch} with groups of G (256, or the device's most): a group packs
 * 64 rows x 64 columns; every work-item stores whole 16-byte pieces; a transpose goes through
 * local memory so that its reads run along in's rows. ld_out is a multiple of a piece's
 * elements, out 16-byte aligned. vec: in, in_off, ld and in_stride keep every piece of in
 * 16-byte aligned. */

#if defined(WG_F16) || defined(WG_BF16)
typedef ushort ET;
typedef ushort8 EPIECE;
#define EB 2
#define EPP 8
#define LOAD_PIECE(p) vload8(0, p)
#define PIECE_OF(f) (EPIECE)(f(0), f(1), f(2), f(3), f(4), f(5), f(6), f(7))
#define SPREAD(v, t) \
  (t)[0] = (v).s0, (t)[1] = (v).s1, (t)[2] = (v).s2, (t)[3] = (v).s3, (t)[4] = (v).s4, \
  (t)[5] = (v).s5, (t)[6] = (v).s6, (t)[7] = (v).s7
#else
typedef float ET;
typedef float4 EPIECE;
#define EB 4
#define EPP 4
#define LOAD_PIECE(p) vload4(0, p)
#define PIECE_OF(f) (EPIECE)(f(0), f(1), f(2), f(3))
#define SPREAD(v, t) (t)[0] = (v).s0, (t)[1] = (v).s1, (t)[2] = (v).s2, (t)[3] = (v).s3
#endif
/* A whole piece: one 16-byte access where the operand's pieces are 16-byte aligned (vec),
 * else an unaligned vector load. */
#define LOAD_ANY(p) (vec ? *(__global const EPIECE *)(p) : LOAD_PIECE(p))
#define TILE 64
#define PIECES (TILE / EPP) /* 16-byte pieces in a tile row */

__kernel void
ocal_wgmma_pack(__global const ET *in, ulong in_off, uint ld, ulong in_stride, int trans,
                int vec, __global ET *out, uint ld_out, uint rows, uint cols) {
  __local ET tile[TILE][TILE + 2]; /* trans: [c - c0][r - r0] */
  const uint tid = get_local_id(0), threads = get_local_size(0);
  const uint r0 = get_group_id(1) * TILE, c0 = get_group_id(0) * TILE;
  const ulong z = get_group_id(2);
  in += in_off + z * in_stride;
  out += z * rows * (ulong)ld_out;
  if (trans) { /* in's row c holds column c of the operand: pieces of it along r */
    for (uint i = tid; i < TILE * PIECES; i += threads) {
      const uint cc = i / PIECES, rr = (i % PIECES) * EPP, c = c0 + cc, r = r0 + rr;
      __global const ET *col = in + (ulong)c * ld;
#define COL_AT(j) (r + (j) < rows ? col[r + (j)] : (ET)0)
      EPIECE v = c >= cols         ? (EPIECE)(0)
                 : r + EPP <= rows ? LOAD_ANY(col + r)
                                   : PIECE_OF(COL_AT);
#undef COL_AT
      SPREAD(v, &tile[cc][rr]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (uint i = tid; i < TILE * PIECES; i += threads) {
    const uint rr = i / PIECES, p = i % PIECES, r = r0 + rr, c = c0 + p * EPP;
    if (r >= rows || c >= ld_out) continue;
    __global const ET *row = in + (ulong)r * ld;
#define TILE_AT(j) tile[p * EPP + (j)][rr]
#define ROW_AT(j) (c + (j) < cols ? row[c + (j)] : (ET)0)
    EPIECE v = trans             ? PIECE_OF(TILE_AT)
               : c + EPP <= cols ? LOAD_ANY(row + c)
                                 : PIECE_OF(ROW_AT);
#undef TILE_AT
#undef ROW_AT
    *(__global EPIECE *)(out + (ulong)r * ld_out + c) = v; /* 16-byte aligned */
  }
}
