/* ocal — scans: inclusive and exclusive prefix sums and prefix maxima, over a whole buffer or
 * along one axis.
 *
 * One engine for every scan: the kernels below are written once against an operation NAME
 * (NAME_A the result type, NAME_cvt from T to A, NAME_op the combination, NAME_ID its neutral
 * value, NAME_LB_IPT, NAME_BITS and NAME_FROM_BITS for the look-back) and against where the
 * values come from (OCAL_IN_PARAMS, the kernel parameters that name the input, and
 * OCAL_LOAD(NAME, i), the value at flat index i of the (outer, R, inner) block). The built-in
 * operations sum and maximum are instances defined here, reading a buffer x from element
 * xoff. ocal_gen_scan (src/gen) writes a prologue of #defines and functions that defines the
 * operation `user` from the user's strings and its own OCAL_IN_PARAMS / OCAL_LOAD (the
 * user's arguments and input expression), and builds this same file with -DOCAL_ONLY_user:
 * one host planner (src/ops/scan.c) runs both, so a generated "a + b" scan of x[i] is
 * ocal_cumsum bit for bit.
 *
 * Built once per input element type T (-DT=... -DOCAL_DTYPE_<name>). The host views the
 * input as a row-major (outer, R, inner) block and scans along R; results have type A:
 * sums of floats are T, sums of integers are 64-bit (the bits of i64 or u64: two's
 * complement, wrapping), maxima are T.
 *
 * Long rows are split into `chunks` pieces and scanned in three launches (reduce then scan):
 * (1) the total of every piece into P, (2) an exclusive scan of P, in place, by the same
 * kernels reading A, (3) every piece scanned again starting from its entry of P. With one
 * piece (chunks == 1) the third launch alone does the work.
 *   NAME_contig_reduce / NAME_tiles / NAME_tiles_acc    rows of contiguous elements (inner
 *       == 1): a work-group per piece, walking it in tiles of L * IPT elements staged through
 *       local memory (coalesced loads and stores), scanned per work-item and then across
 *       the group;
 *   NAME_strided_reduce / NAME_strided / NAME_strided_acc   any inner: a work-item per
 *       (row, piece, column), neighbours on neighbouring columns;
 *   NAME_lookback    rows of contiguous elements in ONE launch (decoupled look-back, below;
 *       docs/scan.md), which the host prefers to the three launches on CPUs (OCAL_SCAN). */
#ifdef OCAL_NEED_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#ifndef OCAL_WG_MAX
#define OCAL_WG_MAX 256
#endif
#define IPT 8 /* elements per work-item per tile */
/* Local memory index with a pad word every 32 entries, against bank conflicts when each
 * work-item walks IPT consecutive entries. */
#define PAD(k) ((k) + ((k) >> 5))
#define TILE_WORDS (OCAL_WG_MAX * IPT + OCAL_WG_MAX * IPT / 32)

#if defined(OCAL_DTYPE_f32) || defined(OCAL_DTYPE_f64)
#define IS_FLOAT 1
#endif

#if defined(OCAL_DTYPE_f32)
#define T_LOWEST (-INFINITY)
#elif defined(OCAL_DTYPE_f64)
#define T_LOWEST ((double)-INFINITY)
#elif defined(OCAL_DTYPE_i32)
#define IS_SIGNED 1
#define T_LOWEST INT_MIN
#elif defined(OCAL_DTYPE_u32)
#define T_LOWEST 0u
#elif defined(OCAL_DTYPE_i64)
#define IS_SIGNED 1
#define T_LOWEST LONG_MIN
#elif defined(OCAL_DTYPE_u64)
#define T_LOWEST 0ul
#elif defined(OCAL_DTYPE_u8)
#define T_LOWEST ((uchar)0)
#else
#error "scan.cl: unsupported element type"
#endif

/* ---- the operations: type A, identity, conversion from T, combination ----------------- */
#ifdef IS_FLOAT
typedef T sum_A;
sum_A sum_cvt(T x) { return x; }
#else
typedef ulong sum_A;
#ifdef IS_SIGNED
sum_A sum_cvt(T x) { return (ulong)(long)x; }
#else
sum_A sum_cvt(T x) { return (ulong)x; }
#endif
#endif
#define sum_ID ((sum_A)0)
sum_A sum_op(sum_A a, sum_A b) { return a + b; }
sum_A sum_acc_cvt(sum_A x) { return x; }

typedef T maximum_A;
maximum_A maximum_cvt(T x) { return x; }
maximum_A maximum_acc_cvt(maximum_A x) { return x; }
#define maximum_ID ((maximum_A)T_LOWEST)
#ifdef IS_FLOAT
/* A NaN propagates to every later element (as NumPy's maximum.accumulate). */
maximum_A maximum_op(maximum_A a, maximum_A b) { return (isnan(a) || a > b) ? a : b; }
#else
maximum_A maximum_op(maximum_A a, maximum_A b) { return max(a, b); }
#endif

/* ---- where the values come from ------------------------------------------------------- */
/* The built-in scans read x[xoff + i]; a generated scan's prologue defines its own. ACC_LOAD
 * reads an array of results (the pieces' totals of the three-pass plans). */
#ifndef OCAL_IN_PARAMS
#define OCAL_IN_PARAMS __global const T *x, const ulong xoff
#define OCAL_LOAD(NAME, i) NAME##_cvt(x[xoff + (i)])
#endif
#define ACC_PARAMS(NAME) __global const NAME##_A *x, const ulong xoff
#define ACC_LOAD(NAME, i) NAME##_acc_cvt(x[xoff + (i)])

/* ---- contiguous rows ---------------------------------------------------------------- */

/* Launch 1: P[g] = the combination of piece c = g % chunks of row o = g / chunks. */
#define CONTIG_REDUCE(NAME)                                                                \
  __kernel void NAME##_contig_reduce(OCAL_IN_PARAMS, const ulong R,                        \
                                     const ulong chunks, const ulong clen,                 \
                                     __global NAME##_A *P) {                                \
    __local NAME##_A sums[OCAL_WG_MAX];                                                     \
    const uint lid = get_local_id(0), L = get_local_size(0);                               \
    const ulong g = get_group_id(0), o = g / chunks, c = g % chunks;                       \
    const ulong r0 = c * clen, r1 = r0 + clen < R ? r0 + clen : R;                         \
    const ulong base = o * R;                                                              \
    NAME##_A a = NAME##_ID;                                                                \
    for (ulong r = r0 + lid; r < r1; r += L) a = NAME##_op(a, OCAL_LOAD(NAME, base + r));  \
    sums[lid] = a;                                                                         \
    barrier(CLK_LOCAL_MEM_FENCE);                                                          \
    for (uint h = L >> 1; h > 0; h >>= 1) {                                                \
      if (lid < h) sums[lid] = NAME##_op(sums[lid], sums[lid + h]);                        \
      barrier(CLK_LOCAL_MEM_FENCE);                                                        \
    }                                                                                      \
    if (lid == 0) P[g] = sums[0];                                                          \
  }

/* Launch 3 (and 2, reading A): scans piece c of row o in tiles, starting from P[g] when
 * chunks > 1. in may equal out (in place) when reading results (ACC_LOAD). */
#define CONTIG_TILES(KNAME, NAME, PARAMS, LOAD)                                            \
  __kernel void KNAME(PARAMS, __global NAME##_A *out,                                       \
                      const ulong ooff, const ulong R, const ulong chunks, const ulong clen, \
                      __global const NAME##_A *P, const int exclusive) {                    \
    __local NAME##_A tile[TILE_WORDS];                                                      \
    __local NAME##_A sums[OCAL_WG_MAX];                                                     \
    const uint lid = get_local_id(0), L = get_local_size(0);                               \
    const ulong g = get_group_id(0), o = g / chunks, c = g % chunks;                       \
    const ulong r0 = c * clen, r1 = r0 + clen < R ? r0 + clen : R;                         \
    const ulong base = o * R;                                                              \
    __global NAME##_A *orow = out + ooff + o * R;                                          \
    NAME##_A carry = chunks > 1 ? P[g] : NAME##_ID;                                         \
    const uint tile_len = L * IPT;                                                         \
    for (ulong t0 = r0; t0 < r1; t0 += tile_len) {                                          \
      const uint m = (uint)(r1 - t0 < tile_len ? r1 - t0 : tile_len);                      \
      for (uint k = lid; k < tile_len; k += L)                                             \
        tile[PAD(k)] = k < m ? LOAD(NAME, base + t0 + k) : NAME##_ID;                      \
      barrier(CLK_LOCAL_MEM_FENCE);                                                        \
      NAME##_A v[IPT];                                                                     \
      NAME##_A run = NAME##_ID;                                                             \
      for (uint k = 0; k < IPT; k++) {                                                     \
        v[k] = tile[PAD(lid * IPT + k)];                                                   \
        run = NAME##_op(run, v[k]);                                                        \
      }                                                                                    \
      sums[lid] = run;                                                                     \
      barrier(CLK_LOCAL_MEM_FENCE);                                                        \
      /* Inclusive scan of the work-items' totals (Hillis and Steele). */                  \
      for (uint off = 1; off < L; off <<= 1) {                                             \
        NAME##_A left = lid >= off ? sums[lid - off] : NAME##_ID;                           \
        barrier(CLK_LOCAL_MEM_FENCE);                                                      \
        if (lid >= off) sums[lid] = NAME##_op(left, sums[lid]);                            \
        barrier(CLK_LOCAL_MEM_FENCE);                                                      \
      }                                                                                    \
      run = NAME##_op(carry, lid > 0 ? sums[lid - 1] : NAME##_ID);                          \
      const NAME##_A total = sums[L - 1];                                                  \
      for (uint k = 0; k < IPT; k++) {                                                     \
        NAME##_A next = NAME##_op(run, v[k]);                                              \
        tile[PAD(lid * IPT + k)] = exclusive ? run : next;                                 \
        run = next;                                                                        \
      }                                                                                    \
      barrier(CLK_LOCAL_MEM_FENCE);                                                        \
      for (uint k = lid; k < m; k += L) orow[t0 + k] = tile[PAD(k)];                       \
      carry = NAME##_op(carry, total);                                                     \
      barrier(CLK_LOCAL_MEM_FENCE);                                                        \
    }                                                                                      \
  }

/* ---- contiguous rows in one pass: decoupled look-back (Merrill and Garland, "Single-pass
 * Parallel Prefix Scan with Decoupled Look-back", 2016) ----------------------------------
 * One work-group per tile of L * NAME_LB_IPT elements. A group takes a ticket (a global atomic
 * counter) and scans tile number `ticket` (row o = ticket / tiles, tile c = ticket % tiles):
 * tiles are handed out in the order groups start, so a group only ever waits for tiles whose
 * groups started before it and are running, which cannot deadlock whatever the device runs
 * concurrently (a CPU driver's threads included; Oclgrind runs groups one after another, so
 * there every predecessor has finished). The group scans its tile, publishes the tile's
 * total (flag AGG), then its work-items read a window of L predecessors' flags at once until
 * the nearest one with an inclusive prefix (flag PREFIX) with every tile after it published;
 * the first work-item combines that prefix with the totals after it in increasing tile order
 * (so a float result is the same left-to-right combination of tile totals whichever flags it
 * found: deterministic for a fixed tile size), and publishes its own inclusive prefix. Tile 0
 * of a row publishes PREFIX at once.
 *
 * Every word other groups read is written with 32-bit global atomics (OpenCL 1.1 core) and
 * read with volatile loads (lb_flag, lb_load); values are stored as two 32-bit halves, which
 * is safe because a value never changes after its flag says it is there. A flag word holds (epoch << 2) | state, the epoch a number
 * the host changes at every launch, so the state buffer needs no clearing between launches.
 * OpenCL 1.2 orders a work-item's own memory operations with mem_fence but says nothing of
 * when other work-groups see them; the scheme needs only that a value written before a fence
 * and a flag is visible to a group that read the flag and then fenced, which is what every
 * device's global atomics and fences do (docs/scan.md says more). The state buffer: word 0
 * the ticket counter, then `cap` flags, then `cap` totals and `cap` inclusive prefixes of
 * two words each. */
/* Predecessors a look-back reads at once: the whole group (a wide window finds the nearest
 * PREFIX in one round where many groups run at once). Defining OCAL_LB_WINDOW (2, say) makes
 * the walk slide through many windows: that is how the sliding path was tested (docs/scan.md). */
#ifdef OCAL_LB_WINDOW
#define LB_WINDOW(L) ((L) < OCAL_LB_WINDOW ? (L) : OCAL_LB_WINDOW)
#else
#define LB_WINDOW(L) (L)
#endif
#define LB_AGG 1u
#define LB_PREFIX 2u
/* Elements per work-item of a look-back tile: 16 for results of 4 bytes or less, 8 for 8-byte
 * results, so a tile's local array takes what NAME_tiles' takes for 8-byte results (17 KB)
 * and a 2^28-element scan has half as many tiles (look-backs) for floats. The host mirrors
 * the rule (scan.c, lookback_ipt). */
#if defined(OCAL_DTYPE_f64) || defined(OCAL_DTYPE_i64) || defined(OCAL_DTYPE_u64)
#define maximum_LB_IPT 8
#else
#define maximum_LB_IPT 16
#endif
#if defined(OCAL_DTYPE_f32)
#define sum_LB_IPT 16
#else
#define sum_LB_IPT 8
#endif
#define LB_TILE_WORDS(ipt) (OCAL_WG_MAX * (ipt) + OCAL_WG_MAX * (ipt) / 32)

#if defined(OCAL_DTYPE_f32)
#define T_BITS(v) ((ulong)as_uint(v))
#define T_FROM_BITS(b) as_float((uint)(b))
#elif defined(OCAL_DTYPE_f64)
#define T_BITS(v) as_ulong(v)
#define T_FROM_BITS(b) as_double(b)
#elif defined(OCAL_DTYPE_i32)
#define T_BITS(v) ((ulong)(uint)(v))
#define T_FROM_BITS(b) ((int)(uint)(b))
#elif defined(OCAL_DTYPE_i64)
#define T_BITS(v) ((ulong)(v))
#define T_FROM_BITS(b) ((long)(b))
#else
#define T_BITS(v) ((ulong)(v))
#define T_FROM_BITS(b) ((T)(b))
#endif
#ifdef IS_FLOAT
#define sum_BITS(v) T_BITS(v)
#define sum_FROM_BITS(b) T_FROM_BITS(b)
#else
#define sum_BITS(v) (v)
#define sum_FROM_BITS(b) (b)
#endif
#define maximum_BITS(v) T_BITS(v)
#define maximum_FROM_BITS(b) T_FROM_BITS(b)

/* Publishing is atomic (a 32-bit exchange per half, then a fence, then the flag); reading is
 * plain volatile loads, which a spinning group repeats without taking the line for a
 * read-modify-write (on NVIDIA they compile to ld.volatile, served by L2 where the atomics
 * land, as CUB's look-back does). A value is read only after its flag said it is there, and
 * never changes afterwards, so its halves are consistent. */
void lb_store(__global uint *w, ulong bits) {
  atomic_xchg(w, (uint)bits);
  atomic_xchg(w + 1, (uint)(bits >> 32));
}
uint lb_flag(volatile __global uint *w) { return *w; }
ulong lb_load(volatile __global uint *w) {
  uint lo = w[0], hi = w[1];
  return (ulong)lo | ((ulong)hi << 32);
}

#define CONTIG_LOOKBACK(NAME)                                                               \
  __kernel void NAME##_lookback(OCAL_IN_PARAMS,                                             \
                                __global NAME##_A *out, const ulong ooff, const ulong R,    \
                                const ulong tiles, __global uint *state, const ulong cap,   \
                                const uint ticket_base, const uint epoch,                   \
                                const int exclusive) {                                      \
    __local NAME##_A tile[LB_TILE_WORDS(NAME##_LB_IPT)];                                    \
    __local NAME##_A sums[OCAL_WG_MAX];                                                     \
    __local uint ticket_l;                                                                  \
    __local NAME##_A prefix_l;                                                              \
    __local uint lb_kp, lb_kz; /* nearest PREFIX, nearest unpublished in the window */       \
    const uint lid = get_local_id(0), L = get_local_size(0);                               \
    __global uint *flags = state + 4;                                                       \
    __global uint *aggs = flags + cap, *incls = aggs + 2 * cap;                             \
    if (lid == 0) ticket_l = atomic_inc(state) - ticket_base;                               \
    barrier(CLK_LOCAL_MEM_FENCE);                                                           \
    const ulong v = ticket_l, o = v / tiles, c = v % tiles;                                 \
    const uint tile_len = L * NAME##_LB_IPT;                                                          \
    const ulong t0 = c * tile_len;                                                          \
    const uint m = (uint)(R - t0 < tile_len ? R - t0 : tile_len);                           \
    const ulong base = o * R;                                                               \
    __global NAME##_A *orow = out + ooff + o * R;                                           \
    for (uint k = lid; k < tile_len; k += L)                                                \
      tile[PAD(k)] = k < m ? OCAL_LOAD(NAME, base + t0 + k) : NAME##_ID;                    \
    barrier(CLK_LOCAL_MEM_FENCE);                                                           \
    NAME##_A val[NAME##_LB_IPT];                                                                      \
    NAME##_A run = NAME##_ID;                                                               \
    for (uint k = 0; k < NAME##_LB_IPT; k++) {                                                        \
      val[k] = tile[PAD(lid * NAME##_LB_IPT + k)];                                                    \
      run = NAME##_op(run, val[k]);                                                         \
    }                                                                                       \
    sums[lid] = run;                                                                        \
    barrier(CLK_LOCAL_MEM_FENCE);                                                           \
    for (uint off = 1; off < L; off <<= 1) {                                                \
      NAME##_A left = lid >= off ? sums[lid - off] : NAME##_ID;                             \
      barrier(CLK_LOCAL_MEM_FENCE);                                                         \
      if (lid >= off) sums[lid] = NAME##_op(left, sums[lid]);                               \
      barrier(CLK_LOCAL_MEM_FENCE);                                                         \
    }                                                                                       \
    const NAME##_A total = sums[L - 1];                                                  \
    const uint tag = epoch << 2;                                                         \
    if (lid == 0) {                                                                      \
      if (c > 0) {                                                                       \
        lb_store(aggs + 2 * v, NAME##_BITS(total));                                      \
        mem_fence(CLK_GLOBAL_MEM_FENCE);                                                 \
        atomic_xchg(flags + v, tag | LB_AGG);                                            \
      } else {                                                                           \
        lb_store(incls + 2 * v, NAME##_BITS(total));                                     \
        mem_fence(CLK_GLOBAL_MEM_FENCE);                                                 \
        atomic_xchg(flags + v, tag | LB_PREFIX);                                         \
        prefix_l = NAME##_ID;                                                            \
      }                                                                                  \
    }                                                                                    \
    if (c > 0) {                                                                         \
      /* The look-back in windows of W predecessors: work-item k reads the flag of tile  \
       * hi - k and, if it is published, its value (into tile[k]: the elements are in val[] \
       * now). The nearest PREFIX with every tile after it published ends the walk; a tile \
       * before it not yet published means the window is read again; a window of AGGs only \
       * slides back by W (tile 0 of the row publishes PREFIX, so the walk stops there). */ \
      const ulong first = v - c;                                                         \
      ulong hi = v - 1;                                                                  \
      const uint W = LB_WINDOW(L);                                                       \
      uint kp, kz;                                                                       \
      for (;;) {                                                                         \
        if (lid == 0) lb_kp = lb_kz = W;                                                 \
        barrier(CLK_LOCAL_MEM_FENCE);                                                    \
        if (lid < W && lid <= hi - first) {                                                       \
          const ulong q = hi - lid;                                                      \
          const uint f = lb_flag(flags + q);                                             \
          if ((f & ~3u) != tag) {                                                        \
            atomic_min(&lb_kz, lid);                                                     \
          } else {                                                                       \
            mem_fence(CLK_GLOBAL_MEM_FENCE);                                             \
            const uint pre = (f & 3u) == LB_PREFIX;                                      \
            tile[lid] = NAME##_FROM_BITS(lb_load((pre ? incls : aggs) + 2 * q));         \
            if (pre) atomic_min(&lb_kp, lid);                                            \
          }                                                                              \
        }                                                                                \
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);                             \
        kp = lb_kp;                                                                      \
        kz = lb_kz;                                                                      \
        barrier(CLK_LOCAL_MEM_FENCE);                                                    \
        if (kp < kz) break;   /* found, every tile after it published */                 \
        if (kz == W) hi -= W; /* all AGG: slide back */                                  \
      }                                                                                  \
      if (lid == 0) {                                                                    \
        /* The left fold from the inclusive prefix of tile hi - kp, in increasing tile   \
         * order, so a float result does not depend on which prefix was found. */        \
        NAME##_A p = tile[kp];                                                           \
        for (uint k = kp; k-- > 0;) p = NAME##_op(p, tile[k]);                           \
        for (ulong q = hi + 1; q < v; q++) /* windows slid past: published AGGs */       \
          p = NAME##_op(p, NAME##_FROM_BITS(lb_load(aggs + 2 * q)));                     \
        lb_store(incls + 2 * v, NAME##_BITS(NAME##_op(p, total)));                       \
        mem_fence(CLK_GLOBAL_MEM_FENCE);                                                 \
        atomic_xchg(flags + v, tag | LB_PREFIX);                                         \
        prefix_l = p;                                                                    \
      }                                                                                  \
    }                                                                                    \
    barrier(CLK_LOCAL_MEM_FENCE);                                                           \
    run = NAME##_op(prefix_l, lid > 0 ? sums[lid - 1] : NAME##_ID);                         \
    for (uint k = 0; k < NAME##_LB_IPT; k++) {                                                        \
      NAME##_A next = NAME##_op(run, val[k]);                                               \
      tile[PAD(lid * NAME##_LB_IPT + k)] = exclusive ? run : next;                                    \
      run = next;                                                                           \
    }                                                                                       \
    barrier(CLK_LOCAL_MEM_FENCE);                                                           \
    for (uint k = lid; k < m; k += L) orow[t0 + k] = tile[PAD(k)];                          \
  }

/* ---- any inner ------------------------------------------------------------------------ */

#define STRIDED_REDUCE(NAME)                                                                \
  __kernel void NAME##_strided_reduce(OCAL_IN_PARAMS, const ulong outer,                   \
                                      const ulong R, const ulong inner, const ulong chunks,  \
                                      const ulong clen, __global NAME##_A *P) {             \
    const ulong total = outer * chunks * inner;                                             \
    for (ulong t = get_global_id(0); t < total; t += get_global_size(0)) {                  \
      const ulong j = t % inner, q = t / inner, s = q % chunks, o = q / chunks;             \
      const ulong r0 = s * clen, r1 = r0 + clen < R ? r0 + clen : R;                        \
      ulong p = (o * R + r0) * inner + j;                                                   \
      NAME##_A a = NAME##_ID;                                                               \
      for (ulong r = r0; r < r1; r++, p += inner) a = NAME##_op(a, OCAL_LOAD(NAME, p));     \
      P[t] = a;                                                                             \
    }                                                                                       \
  }

#define STRIDED_SCAN(KNAME, NAME, PARAMS, LOAD)                                             \
  __kernel void KNAME(PARAMS, __global NAME##_A *out,                                        \
                      const ulong ooff, const ulong outer, const ulong R, const ulong inner, \
                      const ulong chunks, const ulong clen, __global const NAME##_A *P,     \
                      const int exclusive) {                                                \
    const ulong total = outer * chunks * inner;                                             \
    for (ulong t = get_global_id(0); t < total; t += get_global_size(0)) {                  \
      const ulong j = t % inner, q = t / inner, s = q % chunks, o = q / chunks;             \
      const ulong r0 = s * clen, r1 = r0 + clen < R ? r0 + clen : R;                        \
      const ulong base = (o * R + r0) * inner + j;                                          \
      ulong p = base, w = ooff + base;                                                      \
      NAME##_A run = chunks > 1 ? P[t] : NAME##_ID;                                         \
      for (ulong r = r0; r < r1; r++, p += inner, w += inner) {                             \
        NAME##_A next = NAME##_op(run, LOAD(NAME, p));                                      \
        out[w] = exclusive ? run : next;                                                    \
        run = next;                                                                         \
      }                                                                                     \
    }                                                                                       \
  }

/* Only the kernel the host launches is compiled (-DOCAL_ONLY -DOCAL_ONLY_<operation>
 * -DOCAL_KERNEL -DOCAL_KERNEL_<kernel>): a first scan compiles one small program instead of
 * twelve kernels. Without OCAL_ONLY every kernel is built. */
#if defined(OCAL_KERNEL_contig_reduce) || !defined(OCAL_KERNEL)
#define SCAN_K_contig_reduce(NAME) CONTIG_REDUCE(NAME)
#else
#define SCAN_K_contig_reduce(NAME)
#endif
#if defined(OCAL_KERNEL_tiles) || !defined(OCAL_KERNEL)
#define SCAN_K_tiles(NAME) CONTIG_TILES(NAME##_tiles, NAME, OCAL_IN_PARAMS, OCAL_LOAD)
#else
#define SCAN_K_tiles(NAME)
#endif
#if defined(OCAL_KERNEL_tiles_acc) || !defined(OCAL_KERNEL)
#define SCAN_K_tiles_acc(NAME) CONTIG_TILES(NAME##_tiles_acc, NAME, ACC_PARAMS(NAME), ACC_LOAD)
#else
#define SCAN_K_tiles_acc(NAME)
#endif
#if defined(OCAL_KERNEL_strided_reduce) || !defined(OCAL_KERNEL)
#define SCAN_K_strided_reduce(NAME) STRIDED_REDUCE(NAME)
#else
#define SCAN_K_strided_reduce(NAME)
#endif
#if defined(OCAL_KERNEL_strided) || !defined(OCAL_KERNEL)
#define SCAN_K_strided(NAME) STRIDED_SCAN(NAME##_strided, NAME, OCAL_IN_PARAMS, OCAL_LOAD)
#else
#define SCAN_K_strided(NAME)
#endif
#if defined(OCAL_KERNEL_lookback) || !defined(OCAL_KERNEL)
#define SCAN_K_lookback(NAME) CONTIG_LOOKBACK(NAME)
#else
#define SCAN_K_lookback(NAME)
#endif
#if defined(OCAL_KERNEL_strided_acc) || !defined(OCAL_KERNEL)
#define SCAN_K_strided_acc(NAME) STRIDED_SCAN(NAME##_strided_acc, NAME, ACC_PARAMS(NAME), ACC_LOAD)
#else
#define SCAN_K_strided_acc(NAME)
#endif
#define SCAN_KERNELS(NAME)                                                     \
  SCAN_K_contig_reduce(NAME) \
  SCAN_K_tiles(NAME) \
  SCAN_K_tiles_acc(NAME) \
  SCAN_K_strided_reduce(NAME) \
  SCAN_K_strided(NAME) \
  SCAN_K_strided_acc(NAME) \
  SCAN_K_lookback(NAME)

#if defined(OCAL_ONLY_sum) || !defined(OCAL_ONLY)
SCAN_KERNELS(sum)
#endif
#if defined(OCAL_ONLY_maximum) || !defined(OCAL_ONLY)
SCAN_KERNELS(maximum)
#endif
/* A generated scan's operation (its prologue defines user_A, user_op, ...). */
#if defined(OCAL_ONLY_user)
SCAN_KERNELS(user)
#endif
