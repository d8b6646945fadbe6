/* ocal — ocal's own GEMM kernels (src/blas/gemm_own.c): C = alpha op(A) op(B) + beta C on
 * row-major matrices, for the sizes where CLBlast's kernels are weak on a given device.
 *
 * Build options: -DT=float|double -DT4=float4|double4, the tile -DBM -DBN (block tile of C),
 * -DBK (k step), -DTM -DTN (each work-item's micro-tile, multiples of 4), -DFULL=1 when m,
 * n and every slice of k are whole tiles (no block needs bounds checks), -DVEC=1 when every
 * leading dimension and offset is a multiple of 4 (4-wide global loads and stores),
 * -DEDGE_VEC=1 for 16-byte loads in edge tiles too (below, at LOAD4_EDGE), -DSPLIT_WHOLE=1
 * for whole blocks without checks where the product is not FULL (at whole_block),
 * -DOCAL_ONLY -DOCAL_ONLY_<kernel> to compile that one kernel alone.
 *
 * Design (why): a work-group of (BM/TM) x (BN/TN) work-items computes one BM x BN block of C;
 * each work-item keeps a TM x TN block of accumulators in registers, so every value read
 * from local memory feeds TM or TN multiply-adds. The A tile is stored k-major (As[k][m]):
 * the inner loop then reads 4-wide runs of A and B from local memory. A work-item's rows
 * are 4-row groups spaced DY*4 apart (and its columns likewise), so neighbouring work-items
 * read neighbouring 16-byte words: no bank conflicts on the reads, and the stores of C are
 * coalesced. Transposed operands are handled in the load stage: each layout is read along
 * its contiguous dimension. The next tile is loaded into registers while the current one is
 * multiplied (two local buffers, one barrier per k step). -DWARP_TILE=1 (gemm_own.c sets it
 * for f32 NN products in the 128 x 128 tile on 32-wide warps, where it was measured) arranges
 * each warp's work-items as 8 x 4 instead of 16 x 2, so that a warp's local reads of A and B
 * take 4 bank cycles per k instead of 6, and reads the next k's values from local memory
 * while the current ones are multiplied (docs/blas-engines.md, section "ocal's GEMM
 * kernel"). A z index of the launch selects a batch entry (strides a_stride, b_stride) and, for split-K, a slice of
 * k whose partial product goes to its own block of C. */
#ifdef OCAL_NEED_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#ifdef BM /* the GEMM kernels; the transposition below needs no tile */

#define DX (BN / TN)
#define DY (BM / TM)
#define NT (DX * DY)
/* Padding keeps 16-byte alignment and moves the transposed stores of the two k halves of
 * a warp onto different banks. */
#define LAS (BM + 4)
#define LBS (BN + 4)
#define NLA (BM * BK / 4 / NT)
#define NLB (BN * BK / 4 / NT)

/* Runs of four as single 16-byte loads where VEC says every run starts 16-byte aligned
 * (leading dimensions, offsets, tile and slice starts are multiples of 4): always in whole
 * blocks; in edge blocks only with -DEDGE_VEC=1, which gemm_own.c sets for tn products only:
 * there it was faster at every partial-tile size measured, where nn and nt lost at some
 * (docs/measurements.md, "16-byte loads in edge tiles"). */
#if VEC
#define LOAD4_WHOLE(p, i) (*(__global const T4 *)((p) + (i)))
#else
#define LOAD4_WHOLE(p, i) vload4(0, (p) + (i))
#endif
#if VEC && EDGE_VEC
#define LOAD4_EDGE(p, i) LOAD4_WHOLE(p, i)
#else
#define LOAD4_EDGE(p, i) vload4(0, (p) + (i))
#endif

/* Four consecutive values from p[idx]: the run starts at index `at` of its dimension, whose
 * values stop at `end` (zeros beyond); `inside` says whether its row or column lies in the
 * matrix at all. A whole block (`whole`, a constant where gemm_body is inlined) needs no
 * checks. */
inline T4 load_run(__global const T *p, const ulong idx, const int inside, const uint at,
                   const uint end, const int whole) {
  if (whole) return LOAD4_WHOLE(p, idx);
  T4 v = (T4)(0);
  if (inside) {
    if (at + 3 < end) v = LOAD4_EDGE(p, idx);
    else {
      if (at < end) v.s0 = p[idx];
      if (at + 1 < end) v.s1 = p[idx + 1];
      if (at + 2 < end) v.s2 = p[idx + 2];
    }
  }
  return v;
}

/* The next A tile (BM rows of op(A) x BK values of k from kb) into registers, each layout
 * read along its contiguous dimension. */
inline void load_a(__global const T *a, const uint lda, const int ta, const uint row0,
                   const uint kb, const uint m, const uint kend, const uint lid, T4 *ra,
                   const int whole) {
#pragma unroll
  for (int i = 0; i < NLA; i++) {
    const uint e = lid + (uint)i * NT;
    if (!ta) {
      const uint r = e / (BK / 4), kk = (e % (BK / 4)) * 4;
      ra[i] = load_run(a, (ulong)(row0 + r) * lda + kb + kk, row0 + r < m, kb + kk, kend, whole);
    } else {
      const uint kk = e / (BM / 4), r = (e % (BM / 4)) * 4;
      ra[i] = load_run(a, (ulong)(kb + kk) * lda + row0 + r, kb + kk < kend, row0 + r, m, whole);
    }
  }
}

/* Four values into a k-major local tile (row stride ld) at (row, col): along the row in one
 * 16-byte store, or down the column (a transposition) in four. */
inline void store_run(__local T *tile, const uint ld, const uint row, const uint col,
                      const int along, const T4 v) {
  if (along) {
    *(__local T4 *)(tile + row * ld + col) = v;
  } else {
    tile[(row + 0) * ld + col] = v.s0;
    tile[(row + 1) * ld + col] = v.s1;
    tile[(row + 2) * ld + col] = v.s2;
    tile[(row + 3) * ld + col] = v.s3;
  }
}

inline void store_a(__local T *as, const int ta, const uint lid, const T4 *ra) {
#pragma unroll
  for (int i = 0; i < NLA; i++) {
    const uint e = lid + (uint)i * NT;
    if (!ta) store_run(as, LAS, (e % (BK / 4)) * 4, e / (BK / 4), 0, ra[i]);
    else store_run(as, LAS, e / (BM / 4), (e % (BM / 4)) * 4, 1, ra[i]);
  }
}

/* The next B tile (BK values of k from kb x BN columns of op(B)). */
inline void load_b(__global const T *b, const uint ldb, const int tb, const uint col0,
                   const uint kb, const uint n, const uint kend, const uint lid, T4 *rb,
                   const int whole) {
#pragma unroll
  for (int i = 0; i < NLB; i++) {
    const uint e = lid + (uint)i * NT;
    if (!tb) {
      const uint kk = e / (BN / 4), c = (e % (BN / 4)) * 4;
      rb[i] = load_run(b, (ulong)(kb + kk) * ldb + col0 + c, kb + kk < kend, col0 + c, n, whole);
    } else {
      const uint c = e / (BK / 4), kk = (e % (BK / 4)) * 4;
      rb[i] = load_run(b, (ulong)(col0 + c) * ldb + kb + kk, col0 + c < n, kb + kk, kend, whole);
    }
  }
}

inline void store_b(__local T *bs, const int tb, const uint lid, const T4 *rb) {
#pragma unroll
  for (int i = 0; i < NLB; i++) {
    const uint e = lid + (uint)i * NT;
    if (!tb) store_run(bs, LBS, e / (BN / 4), (e % (BN / 4)) * 4, 1, rb[i]);
    else store_run(bs, LBS, (e % (BK / 4)) * 4, e / (BK / 4), 0, rb[i]);
  }
}

/* A work-item's values of A and B at step kk of the local tiles (4-wide runs). */
inline void load_frag(__local const T *ac, __local const T *bc, const int kk, const uint tx,
                      const uint ty, T4 *fa, T4 *fb) {
#pragma unroll
  for (int i4 = 0; i4 < TM / 4; i4++)
    fa[i4] = *(__local const T4 *)(ac + kk * LAS + i4 * (DY * 4) + ty * 4);
#pragma unroll
  for (int j4 = 0; j4 < TN / 4; j4++)
    fb[j4] = *(__local const T4 *)(bc + kk * LBS + j4 * (DX * 4) + tx * 4);
}

inline void gemm_body(__global const T *a, const ulong a_off, const uint lda, const ulong a_stride,
                      __global const T *b, const ulong b_off, const uint ldb, const ulong b_stride,
                      __global T *c, const ulong c_off, const uint ldc, const ulong c_stride,
                      const uint m, const uint n, const uint k, const uint kc, const uint slices,
                      const T alpha, const T beta, const int read_c, const int ta, const int tb,
                      __local T *as, __local T *bs, const int whole) {
  const uint lid = get_local_id(0);
#if WARP_TILE /* needs DX a multiple of 8 and NT of 32 */
  const uint warp = lid / 32, lane = lid % 32;
  const uint tx = (warp % (DX / 8)) * 8 + lane % 8, ty = (warp / (DX / 8)) * 4 + lane / 8;
#define NFRAG 2 /* fragment buffers: the next k's values load while these are multiplied */
#else
  const uint tx = lid % DX, ty = lid / DX;
#define NFRAG 1
#endif
  const uint col0 = get_group_id(0) * BN, row0 = get_group_id(1) * BM;
  const uint z = get_group_id(2), entry = z / slices, slice = z % slices;
  a += a_off + entry * a_stride;
  b += b_off + entry * b_stride;
  c += c_off + z * c_stride;
  const uint kbeg = slice * kc, kend = min(k, kbeg + kc);
  const uint ntiles = kend > kbeg ? (kend - kbeg + BK - 1) / BK : 0;

  T acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; i++)
#pragma unroll
    for (int j = 0; j < TN; j++) acc[i][j] = 0;

  T4 ra[NLA], rb[NLB];
  if (ntiles > 0) {
    load_a(a, lda, ta, row0, kbeg, m, kend, lid, ra, whole);
    load_b(b, ldb, tb, col0, kbeg, n, kend, lid, rb, whole);
    store_a(as, ta, lid, ra);
    store_b(bs, tb, lid, rb);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint t = 0; t < ntiles; t++) {
    const uint cur = t & 1;
    if (t + 1 < ntiles) {
      load_a(a, lda, ta, row0, kbeg + (t + 1) * BK, m, kend, lid, ra, whole);
      load_b(b, ldb, tb, col0, kbeg + (t + 1) * BK, n, kend, lid, rb, whole);
    }
    __local const T *ac = as + cur * (BK * LAS);
    __local const T *bc = bs + cur * (BK * LBS);
    T4 fa[NFRAG][TM / 4], fb[NFRAG][TN / 4];
    if (NFRAG == 2) load_frag(ac, bc, 0, tx, ty, fa[0], fb[0]);
#pragma unroll
    for (int kk = 0; kk < BK; kk++) {
      const int f = kk % NFRAG;
      if (NFRAG == 1) load_frag(ac, bc, kk, tx, ty, fa[0], fb[0]);
      else if (kk + 1 < BK)
        load_frag(ac, bc, kk + 1, tx, ty, fa[(kk + 1) % NFRAG], fb[(kk + 1) % NFRAG]);
      T av[TM], bv[TN];
#pragma unroll
      for (int i4 = 0; i4 < TM / 4; i4++) {
        av[i4 * 4 + 0] = fa[f][i4].s0;
        av[i4 * 4 + 1] = fa[f][i4].s1;
        av[i4 * 4 + 2] = fa[f][i4].s2;
        av[i4 * 4 + 3] = fa[f][i4].s3;
      }
#pragma unroll
      for (int j4 = 0; j4 < TN / 4; j4++) {
        bv[j4 * 4 + 0] = fb[f][j4].s0;
        bv[j4 * 4 + 1] = fb[f][j4].s1;
        bv[j4 * 4 + 2] = fb[f][j4].s2;
        bv[j4 * 4 + 3] = fb[f][j4].s3;
      }
#pragma unroll
      for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = fma(av[i], bv[j], acc[i][j]);
    }
    if (t + 1 < ntiles) {
      store_a(as + (cur ^ 1) * (BK * LAS), ta, lid, ra);
      store_b(bs + (cur ^ 1) * (BK * LBS), tb, lid, rb);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }

#pragma unroll
  for (int i4 = 0; i4 < TM / 4; i4++)
#pragma unroll
    for (int ii = 0; ii < 4; ii++) {
      const uint row = row0 + i4 * (DY * 4) + ty * 4 + ii;
#pragma unroll
      for (int j4 = 0; j4 < TN / 4; j4++) {
        const uint col = col0 + j4 * (DX * 4) + tx * 4;
        __global T *out = c + (ulong)row * ldc + col;
        T4 v = alpha * (T4)(acc[i4 * 4 + ii][j4 * 4 + 0], acc[i4 * 4 + ii][j4 * 4 + 1],
                            acc[i4 * 4 + ii][j4 * 4 + 2], acc[i4 * 4 + ii][j4 * 4 + 3]);
        if (whole && VEC) {
          if (read_c) v += beta * *(__global T4 *)out;
          *(__global T4 *)out = v;
        } else if (whole) {
          if (read_c) v += beta * vload4(0, out);
          vstore4(v, 0, out);
        } else if (row < m) {
          if (col < n) out[0] = read_c ? v.s0 + beta * out[0] : v.s0;
          if (col + 1 < n) out[1] = read_c ? v.s1 + beta * out[1] : v.s1;
          if (col + 2 < n) out[2] = read_c ? v.s2 + beta * out[2] : v.s2;
          if (col + 3 < n) out[3] = read_c ? v.s3 + beta * out[3] : v.s3;
        }
      }
    }
}

/* Whether this work-group's block takes the unchecked body: with FULL every block; with
 * -DSPLIT_WHOLE=1 the whole ones (rows and columns inside C, a slice of k of whole BK
 * steps); otherwise none. */
inline int whole_block(const uint m, const uint n, const uint k, const uint kc,
                       const uint slices) {
#if FULL
  return 1;
#elif SPLIT_WHOLE
  const uint kbeg = (get_group_id(2) % slices) * kc, kend = min(k, kbeg + kc);
  return get_group_id(1) * BM + BM <= m && get_group_id(0) * BN + BN <= n &&
         (kend - kbeg) % BK == 0;
#else
  return 0;
#endif
}

/* One kernel per transpose combination, so that the layout branches fold away. Only the
 * one a call launches is compiled (-DOCAL_ONLY -DOCAL_ONLY_<kernel name>; gemm_own.c): each
 * is a fully unrolled tile, and a first GEMM that compiled all four (and the transposition)
 * paid four times the compile it needs (bench/first_calls). Without OCAL_ONLY every kernel
 * is built. With SPLIT_WHOLE the body is inlined twice: whole blocks, the most of a large
 * product whose sizes are not multiples of the tile, take the copy without bounds checks
 * (and with VEC 16-byte loads and stores), edge blocks the checked one. */
#define OCAL_GEMM_KERNEL(name, ta, tb)                                                       \
  __kernel __attribute__((reqd_work_group_size(NT, 1, 1))) void name(                        \
      __global const T *a, const ulong a_off, const uint lda, const ulong a_stride,          \
      __global const T *b, const ulong b_off, const uint ldb, const ulong b_stride,          \
      __global T *c, const ulong c_off, const uint ldc, const ulong c_stride, const uint m,  \
      const uint n, const uint k, const uint kc, const uint slices, const T alpha,          \
      const T beta, const int read_c) {                                                      \
    __local T4 as[2 * BK * LAS / 4], bs[2 * BK * LBS / 4];                                   \
    if (whole_block(m, n, k, kc, slices))                                                    \
      gemm_body(a, a_off, lda, a_stride, b, b_off, ldb, b_stride, c, c_off, ldc, c_stride,   \
                m, n, k, kc, slices, alpha, beta, read_c, ta, tb, (__local T *)as,           \
                (__local T *)bs, 1);                                                         \
    else                                                                                     \
      gemm_body(a, a_off, lda, a_stride, b, b_off, ldb, b_stride, c, c_off, ldc, c_stride,   \
                m, n, k, kc, slices, alpha, beta, read_c, ta, tb, (__local T *)as,           \
                (__local T *)bs, 0);                                                         \
  }

#if !defined(OCAL_ONLY) || defined(OCAL_ONLY_ocal_gemm_nn)
OCAL_GEMM_KERNEL(ocal_gemm_nn, 0, 0)
#endif
#if !defined(OCAL_ONLY) || defined(OCAL_ONLY_ocal_gemm_nt)
OCAL_GEMM_KERNEL(ocal_gemm_nt, 0, 1)
#endif
#if !defined(OCAL_ONLY) || defined(OCAL_ONLY_ocal_gemm_tn)
OCAL_GEMM_KERNEL(ocal_gemm_tn, 1, 0)
#endif
#if !defined(OCAL_ONLY) || defined(OCAL_ONLY_ocal_gemm_tt)
OCAL_GEMM_KERNEL(ocal_gemm_tt, 1, 1)
#endif

#endif /* BM */

/* out (cols x rows) = in^T (in: rows x cols, row-major, from in_off): the pre-transposition
 * of A before a CLBlast call (blas.c), through a 32 x 32 local tile so both sides are
 * coalesced. Launched as 32 x TR_Y work-groups, each covering a 32 x 32 tile: TR_Y is 8 (256
 * items), or less where the device's work-groups are smaller (gemm_own.c picks it). */
#if !defined(OCAL_ONLY) || defined(OCAL_ONLY_ocal_gemm_transpose)
#ifndef TR_Y
#define TR_Y 8
#endif
__kernel __attribute__((reqd_work_group_size(32, TR_Y, 1))) void ocal_gemm_transpose(
    __global const T *in, const ulong in_off, const uint rows, const uint cols,
    __global T *out) {
  __local T tile[32][33];
  const uint lx = get_local_id(0), ly = get_local_id(1);
  const uint c0 = get_group_id(0) * 32, r0 = get_group_id(1) * 32;
  in += in_off;
  for (uint j = ly; j < 32; j += TR_Y)
    if (r0 + j < rows && c0 + lx < cols) tile[j][lx] = in[(ulong)(r0 + j) * cols + c0 + lx];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint j = ly; j < 32; j += TR_Y)
    if (c0 + j < cols && r0 + lx < rows) out[(ulong)(c0 + j) * rows + r0 + lx] = tile[lx][j];
}
#endif /* ocal_gemm_transpose */
