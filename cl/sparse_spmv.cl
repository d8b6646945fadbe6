/* ocal — sparse CSR products. Built per value and index type with -D options:
 *   -DT=float|double   value type (OCAL_NEED_FP64 for double)
 *   -DIDX=int|long     index type of the row pointers and column indices
 *   -DVL=<lanes>       spmv_vector: work-items per row (a power of two, 2..64)
 *   -DWG=<size>        spmv_vector, spmv_long: the work-group size (a power of two)
 *   -DROWLIST          spmv_vector: rows come from a list (the short rows of an irregular
 *                      matrix, whose long rows go to spmv_long)
 *   -DCAP=<entries>    spmv_stream: the entries one work-group stages in local memory
 *   -DIPT=<items>      spmv_merge, spmv_merge_fixup: merge-path items per work-item (a tile
 *                      is WG * IPT items: row ends and entries together)
 *   -DPTX_S, -DPTX_X   spmv_stream, spmv_merge: NVIDIA cache hints on the loads (below)
 * Every kernel writes y[row] = alpha * (A x)[row] + beta * y[row], each row exactly once and
 * by one work-item, adding partial sums in a fixed order, so results do not depend on timing. With beta = 0 the old y is not read
 * (BLAS semantics: NaNs in an uninitialised y must not leak through). Offsets of views come
 * as element counts. */
#ifdef OCAL_NEED_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

/* Loads of the matrix's indices and values (LDS) and gathers of x (LDX). -DPTX_S=1 reads the
 * matrix with ld.global.cs (streamed, evicted first, so that x keeps its place in L2);
 * -DPTX_X=1 gathers x with ld.global.nc (the read-only path), 2 with ld.global.cg (L2 only).
 * PTX_T, PTX_TC, PTX_I, PTX_IC: the PTX types and register classes of T and IDX. NVIDIA only:
 * the host builds these after asking for them, and plain loads otherwise. */
#include "ptx_load.cl"
#ifdef PTX_S
OCAL_PTX_LOAD(lds_t, T, ".cs", PTX_T, PTX_TC)
OCAL_PTX_LOAD(lds_i, IDX, ".cs", PTX_I, PTX_IC)
#define LDS_T(p) lds_t(p)
#define LDS_I(p) lds_i(p)
#else
#define LDS_T(p) (*(p))
#define LDS_I(p) (*(p))
#endif
#if defined(PTX_X) && PTX_X == 1
OCAL_PTX_LOAD(ldx_t, T, ".nc", PTX_T, PTX_TC)
#define LDX(p) ldx_t(p)
#elif defined(PTX_X) && PTX_X == 2
OCAL_PTX_LOAD(ldx_t, T, ".cg", PTX_T, PTX_TC)
#define LDX(p) ldx_t(p)
#else
#define LDX(p) (*(p))
#endif

#define FINISH(yv, sum) (beta == (T)0 ? alpha * (sum) : alpha * (sum) + beta * (yv))

/* One work-item per row: the best for very short rows (a few entries), where lanes of a
 * vector kernel would idle. */
__kernel void spmv_scalar(const IDX rows, __global const IDX *rp, __global const IDX *ci,
                          __global const T *v, __global const T *x, const ulong xoff,
                          __global T *y, const ulong yoff, const T alpha, const T beta) {
  x += xoff;
  y += yoff;
  for (IDX row = get_global_id(0); row < rows; row += get_global_size(0)) {
    T sum = 0;
    const IDX end = rp[row + 1];
    for (IDX j = rp[row]; j < end; j++) sum += v[j] * x[ci[j]];
    y[row] = FINISH(y[row], sum);
  }
}

#ifdef VL
/* VL consecutive work-items per row: their loads of a row's indices and values are
 * contiguous, and a tree in local memory sums their partial sums. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void spmv_vector(const IDX nrows, __global const IDX *rows, __global const IDX *rp,
                 __global const IDX *ci, __global const T *v, __global const T *x,
                 const ulong xoff, __global T *y, const ulong yoff, const T alpha,
                 const T beta) {
  __local T part[WG];
  const uint lid = get_local_id(0);
  const uint lane = lid % VL, slot = lid / VL;
  const IDX per_group = WG / VL;
  x += xoff;
  y += yoff;
  for (IDX base = get_group_id(0) * per_group; base < nrows;
       base += get_num_groups(0) * per_group) {
    const IDX i = base + slot;
    T sum = 0;
    IDX row = 0;
    if (i < nrows) {
#ifdef ROWLIST
      row = rows[i];
#else
      row = i;
#endif
      const IDX end = rp[row + 1];
      for (IDX j = rp[row] + lane; j < end; j += VL) sum += v[j] * x[ci[j]];
    }
    part[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = VL / 2; s > 0; s >>= 1) {
      if (lane < s) part[lid] += part[lid + s];
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lane == 0 && i < nrows) y[row] = FINISH(y[row], part[lid]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}
#endif

#ifdef WG
/* A whole work-group per row: the long rows of an irregular matrix, which would otherwise
 * keep one slice busy while the rest of the device waits. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void spmv_long(const IDX nrows, __global const IDX *rows, __global const IDX *rp,
               __global const IDX *ci, __global const T *v, __global const T *x,
               const ulong xoff, __global T *y, const ulong yoff, const T alpha,
               const T beta) {
  __local T part[WG];
  const uint lid = get_local_id(0);
  x += xoff;
  y += yoff;
  for (IDX i = get_group_id(0); i < nrows; i += get_num_groups(0)) {
    const IDX row = rows[i];
    const IDX end = rp[row + 1];
    T sum = 0;
    for (IDX j = rp[row] + lid; j < end; j += WG) sum += v[j] * x[ci[j]];
    part[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = WG / 2; s > 0; s >>= 1) {
      if (lid < s) part[lid] += part[lid + s];
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) y[row] = FINISH(y[row], part[0]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}
#endif

#ifdef CAP
/* CSR-stream ("row blocks"): the host cut the rows into blocks of at most WG rows holding at
 * most CAP entries together, or of one longer row (blocks[2 b], blocks[2 b + 1]: block b's
 * first row and end; the long rows' blocks come first). A work-group reads its block's entries
 * with contiguous (coalesced) loads across all its work-items, whatever the row lengths,
 * and stages the products v[j] * x[ci[j]] in local memory; then work-item i sums row i of
 * the block from there. This keeps every lane busy on rows of a few entries (Laplacians),
 * where the vector kernel idles lanes and the scalar kernel's loads are strided. A block of
 * one row longer than CAP is summed by the whole group instead. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void spmv_stream(const IDX nblocks, __global const IDX *restrict blocks,
                 __global const IDX *restrict rp, __global const IDX *restrict ci,
                 __global const T *restrict v, __global const T *restrict x, const ulong xoff,
                 __global T *restrict y, const ulong yoff, const T alpha, const T beta) {
  __local T part[CAP];
  __local IDX lrp[WG + 1];
  const uint lid = get_local_id(0);
  x += xoff;
  y += yoff;
  for (IDX b = get_group_id(0); b < nblocks; b += get_num_groups(0)) {
    const IDX r0 = blocks[2 * b], r1 = blocks[2 * b + 1];
    const IDX nr = r1 - r0;
    /* The block's row pointers (nr <= WG), loaded once and contiguously. */
    for (uint i = lid; i <= (uint)nr; i += WG) lrp[i] = rp[r0 + i];
    barrier(CLK_LOCAL_MEM_FENCE);
    const IDX start = lrp[0], end = lrp[nr];
    /* The branches hold no barrier (the condition is the same for the whole group, but
     * some compilers, PoCL's among them, need barriers outside conditionals). */
    const int staged = end - start <= CAP;
    if (staged) {
      for (IDX j = start + lid; j < end; j += WG)
        part[j - start] = LDS_T(v + j) * LDX(x + LDS_I(ci + j));
    } else {
      T sum = 0;
      for (IDX j = start + lid; j < end; j += WG) sum += LDS_T(v + j) * LDX(x + LDS_I(ci + j));
      part[lid] = sum;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (staged) {
      if ((IDX)lid < nr) {
        const uint e = (uint)(lrp[lid + 1] - start);
        T sum = 0;
        for (uint j = (uint)(lrp[lid] - start); j < e; j++) sum += part[j];
        y[r0 + lid] = FINISH(y[r0 + lid], sum);
      }
    } else if (lid == 0) {
      /* A long row (rare): one work-item adds the group's WG partial sums, in order. */
      T sum = 0;
      for (uint i = 0; i < WG; i++) sum += part[i];
      y[r0] = FINISH(y[r0], sum);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}
#endif

#ifdef IPT
#define TILE (WG * IPT)
/* Merge-path CSR (Merrill and Garland): the "path" walks the row ends and the entries
 * together (rows + nnz items), and every work-group takes the next TILE items of it, so a
 * group's work is the same whatever the row lengths: long rows are cut across groups, runs
 * of empty rows cost one item each. The host stored each tile's first row (tiles[g]); the
 * tile starts at entry g * TILE - tiles[g]. A group stages its entries' products and its
 * rows' ends in local memory with coalesced loads, then each work-item walks IPT items of
 * the tile's path and writes the rows it closes. A row cut between work-items is finished by
 * the work-item that closes it, which adds the partial sums of the items before it in order;
 * a row cut between tiles leaves each earlier tile's part in carry[] and the closing tile's
 * part in head[], and spmv_merge_fixup adds them. No atomics: the same bits every run. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void spmv_merge(const IDX rows, const IDX nnz, const IDX ntiles, __global const IDX *restrict tiles,
                __global const IDX *restrict rp, __global const IDX *restrict ci,
                __global const T *restrict v, __global const T *restrict x, const ulong xoff,
                __global T *restrict y, const ulong yoff, __global T *restrict carry,
                const T alpha, const T beta) {
  __local T prod[TILE];
  __local uint lend[TILE];
  __local uint crow[WG];
  __local T csum[WG];
  __global T *restrict head = carry + ntiles;
  const uint lid = get_local_id(0);
  const long total = (long)rows + (long)nnz;
  x += xoff;
  y += yoff;
  for (IDX g = get_group_id(0); g < ntiles; g += get_num_groups(0)) {
    const IDX r0 = tiles[g], r1 = tiles[g + 1];
    const long d0 = (long)g * TILE, d1 = min(d0 + TILE, total);
    const IDX n0 = (IDX)(d0 - r0), n1 = (IDX)(d1 - r1);
    const uint nr = (uint)(r1 - r0), nz = (uint)(n1 - n0);
    /* Does the tile's first row hold entries of an earlier tile? */
    const int cont = n0 > rp[r0];
    for (uint k = lid; k < nr; k += WG) lend[k] = (uint)(rp[r0 + k + 1] - n0);
    /* Indices and values first, then the gathers of x: IPT loads in flight per work-item. */
    IDX c[IPT];
    T w[IPT];
#pragma unroll
    for (uint q = 0; q < IPT; q++) {
      const uint k = lid + q * WG;
      if (k < nz) {
        c[q] = LDS_I(ci + n0 + k);
        w[q] = LDS_T(v + n0 + k);
      }
    }
#pragma unroll
    for (uint q = 0; q < IPT; q++) {
      const uint k = lid + q * WG;
      if (k < nz) prod[k] = w[q] * LDX(x + c[q]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* This work-item's start on the tile's path: i row ends and j entries before it. */
    const uint len = nr + nz, d = min(lid * IPT, len), dend = min(d + IPT, len);
    uint lo = d > nz ? d - nz : 0, hi = min(d, nr);
    while (lo < hi) {
      const uint p = (lo + hi) / 2;
      if (lend[p] <= d - p - 1)
        lo = p + 1;
      else
        hi = p;
    }
    uint i = lo, j = d - lo, first = len;
    T sum = 0, first_sum = 0;
    for (uint k = d; k < dend; k++) {
      if (i < nr && j >= lend[i]) {
        /* Row i ends here. The first one may have begun in earlier work-items: kept. */
        if (first == len) {
          first = i;
          first_sum = sum;
        } else {
          y[r0 + i] = FINISH(y[r0 + i], sum);
        }
        sum = 0;
        i++;
      } else {
        sum += prod[j++];
      }
    }
    crow[lid] = i;
    csum[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (first != len) {
      T tot = first_sum;
      for (int k = (int)lid - 1; k >= 0 && crow[k] == first; k--) tot += csum[k];
      if (first == 0 && cont)
        head[g] = tot;
      else
        y[r0 + first] = FINISH(y[r0 + first], tot);
    }
    if (lid == WG - 1) {
      /* The row still open at the tile's end (none after the last row): its part here. */
      T tot = 0;
      for (int k = WG - 1; k >= 0 && crow[k] == nr; k--) tot += csum[k];
      carry[g] = tot;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}

/* Finishes the rows that began in an earlier tile than the one that closes them: the
 * closing tile's part, then the earlier tiles' parts from the nearest back. */
__kernel void spmv_merge_fixup(const IDX ntiles, __global const IDX *restrict tiles,
                               __global const IDX *restrict rp, __global T *restrict y,
                               const ulong yoff, __global const T *restrict carry,
                               const T alpha, const T beta) {
  __global const T *head = carry + ntiles;
  y += yoff;
  for (IDX g = get_global_id(0); g < ntiles; g += get_global_size(0)) {
    const IDX r = tiles[g];
    if (tiles[g + 1] == r || (long)g * TILE - r <= (long)rp[r]) continue;
    T sum = head[g];
    for (IDX h = g - 1;; h--) {
      sum += carry[h];
      if (h == 0 || tiles[h] != r) break;
    }
    y[r] = FINISH(y[r], sum);
  }
}
#endif

/* Y = alpha A X + beta Y for a row-major block of k columns: one work-item per (row,
 * column), columns fastest, so neighbouring work-items read neighbouring elements of X's
 * rows and share the row's indices and values through the cache. */
__kernel void spmm_rowcol(const IDX rows, const ulong k, __global const IDX *rp,
                          __global const IDX *ci, __global const T *v, __global const T *x,
                          const ulong xoff, __global T *y, const ulong yoff, const T alpha,
                          const T beta) {
  x += xoff;
  y += yoff;
  const ulong total = (ulong)rows * k;
  for (ulong g = get_global_id(0); g < total; g += get_global_size(0)) {
    const IDX row = (IDX)(g / k);
    const ulong c = g % k;
    T sum = 0;
    const IDX end = rp[row + 1];
    for (IDX j = rp[row]; j < end; j++) sum += v[j] * x[(ulong)ci[j] * k + c];
    y[g] = FINISH(y[g], sum);
  }
}

/* d[row] = the sum of the row's stored diagonal entries. */
__kernel void csr_diagonal(const IDX rows, __global const IDX *rp, __global const IDX *ci,
                           __global const T *v, __global T *d, const ulong doff) {
  d += doff;
  for (IDX row = get_global_id(0); row < rows; row += get_global_size(0)) {
    T sum = 0;
    const IDX end = rp[row + 1];
    for (IDX j = rp[row]; j < end; j++)
      if (ci[j] == row) sum += v[j];
    d[row] = sum;
  }
}
