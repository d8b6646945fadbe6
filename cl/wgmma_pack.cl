/* ocal — operand packing for the wgmma GEMM kernel (cl/gemm_wgmma.cl), which reads A and B as
 * k-contiguous rows: out (z, r, c) = in[in_off + z in_stride + (trans ? c ld + r : r ld + c)]
 * for r < rows and c < cols, zero for the other r < out_rows and c < ld_out, placed by
 * packed_at: plain rows of stride ld_out (tile_rows 0), or the kernel's stage images for its
 * bulk copies (tile_rows its block's rows: 128 for A, the block's columns for B).
 *
 * Build options: -DWG_F16 or -DWG_BF16 (16-bit elements), else f32. Launch {ceil(ld_out /
 * 64) G, ceil(out_rows / 64), batch} with groups of G (256, or the device's most): a group
 * packs 64 rows x 64 columns; every work-item stores whole 16-byte pieces, so the stores fill the images'
 * 128-byte lines; a transpose goes through local memory so that its reads run along in's
 * rows. ld_out is a multiple of a piece's elements, out 16-byte aligned; for stage images
 * out_rows and ld_out cover whole images (multiples of tile_rows and of 128 bytes). vec: in,
 * in_off, ld and in_stride keep every piece of in 16-byte aligned. */

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

/* Where packed element (r, c) goes: row r of a plain layout (tile_rows 0) with stride ld_out;
 * or the stage image of its block of tile_rows rows and its k tile of 128 bytes (ld_out: the
 * k tiles' elements), row r % tile_rows, its 16-byte piece p at p ^ (row % 8), as
 * cl/gemm_wgmma.cl lays out its stages. */
inline ulong packed_at(uint r, uint c, uint ld_out, uint tile_rows) {
  if (!tile_rows) return (ulong)r * ld_out + c;
  const uint byte = c * EB, rr = r % tile_rows;
  const ulong image = ((ulong)(r / tile_rows) * (ld_out * EB / 128) + byte / 128) * tile_rows;
  return ((image + rr) * 128 + (((byte % 128) / 16) ^ (rr % 8)) * 16 + byte % 16) / EB;
}

__kernel void
ocal_wgmma_pack(__global const ET *in, ulong in_off, uint ld, ulong in_stride, int trans,
                int vec, __global ET *out, uint ld_out, uint rows, uint cols, uint out_rows,
                uint tile_rows) {
  __local ET tile[TILE][TILE + 2]; /* trans: [c - c0][r - r0] */
  const uint tid = get_local_id(0), threads = get_local_size(0);
  const uint r0 = get_group_id(1) * TILE, c0 = get_group_id(0) * TILE;
  const ulong z = get_group_id(2);
  in += in_off + z * in_stride;
  out += z * out_rows * (ulong)ld_out;
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
    if (r >= out_rows || c >= ld_out) continue;
    __global const ET *row = in + (ulong)r * ld;
#define TILE_AT(j) tile[p * EPP + (j)][rr]
#define ROW_AT(j) (c + (j) < cols ? row[c + (j)] : (ET)0)
    EPIECE v = trans            ? PIECE_OF(TILE_AT)
               : r >= rows      ? (EPIECE)(0)
               : c + EPP <= cols ? LOAD_ANY(row + c)
                                 : PIECE_OF(ROW_AT);
#undef TILE_AT
#undef ROW_AT
    *(__global EPIECE *)(out + packed_at(r, c, ld_out, tile_rows)) = v; /* 16-byte aligned */
  }
}
