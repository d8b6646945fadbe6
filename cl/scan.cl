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
 * operation `ocal_user` from the user's strings and its own OCAL_IN_PARAMS / OCAL_LOAD (the
 * user's arguments and input expression), and builds this same file with -DOCAL_ONLY_ocal_user:
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
 *       == 1): a work-group per piece, walking it in tiles of L * OCAL_IPT elements staged through
 *       local memory (coalesced loads and stores), scanned per work-item and then across
 *       the group;
 *   NAME_strided_reduce / NAME_strided / NAME_strided_acc   any inner: a work-item per
 *       (row, piece, column), neighbours on neighbouring columns;
 *   NAME_lookback    rows of contiguous elements in ONE launch (decoupled look-back, below;
 *       docs/scan.md), which the host prefers to the three launches on GPUs and CPUs (OCAL_SCAN). */
#ifdef OCAL_NEED_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#ifndef OCAL_WG_MAX
#define OCAL_WG_MAX 256
#endif
#define OCAL_IPT 8 /* elements per work-item per tile */
/* Local memory index with a pad word every 32 entries, against bank conflicts when each
 * work-item walks OCAL_IPT consecutive entries. */
#define OCAL_PAD(ocal_k) ((ocal_k) + ((ocal_k) >> 5))
#define OCAL_TILE_WORDS (OCAL_WG_MAX * OCAL_IPT + OCAL_WG_MAX * OCAL_IPT / 32)

#if defined(OCAL_DTYPE_f32) || defined(OCAL_DTYPE_f64)
#define OCAL_IS_FLOAT 1
#endif

#if defined(OCAL_DTYPE_f32)
#define OCAL_T_LOWEST (-INFINITY)
#elif defined(OCAL_DTYPE_f64)
#define OCAL_T_LOWEST ((double)-INFINITY)
#elif defined(OCAL_DTYPE_i32)
#define OCAL_IS_SIGNED 1
#define OCAL_T_LOWEST INT_MIN
#elif defined(OCAL_DTYPE_u32)
#define OCAL_T_LOWEST 0u
#elif defined(OCAL_DTYPE_i64)
#define OCAL_IS_SIGNED 1
#define OCAL_T_LOWEST LONG_MIN
#elif defined(OCAL_DTYPE_u64)
#define OCAL_T_LOWEST 0ul
#elif defined(OCAL_DTYPE_u8)
#define OCAL_T_LOWEST ((uchar)0)
#else
#error "scan.cl: unsupported element type"
#endif

/* ---- the operations: type A, identity, conversion from T, combination ----------------- */
/* Only the operations being built are defined: a generated scan's program (OCAL_ONLY_ocal_user)
 * then declares no name outside the ocal_/OCAL_ prefixes its user's preamble cannot use. */
#if defined(OCAL_ONLY_sum) || !defined(OCAL_ONLY)
#ifdef OCAL_IS_FLOAT
typedef T sum_A;
sum_A sum_cvt(T ocal_x) { return ocal_x; }
#else
typedef ulong sum_A;
#ifdef OCAL_IS_SIGNED
sum_A sum_cvt(T ocal_x) { return (ulong)(long)ocal_x; }
#else
sum_A sum_cvt(T ocal_x) { return (ulong)ocal_x; }
#endif
#endif
#define sum_ID ((sum_A)0)
sum_A sum_op(sum_A ocal_a, sum_A ocal_b) { return ocal_a + ocal_b; }
sum_A sum_acc_cvt(sum_A ocal_x) { return ocal_x; }
#endif

#if defined(OCAL_ONLY_maximum) || !defined(OCAL_ONLY)
typedef T maximum_A;
maximum_A maximum_cvt(T ocal_x) { return ocal_x; }
maximum_A maximum_acc_cvt(maximum_A ocal_x) { return ocal_x; }
#define maximum_ID ((maximum_A)OCAL_T_LOWEST)
#ifdef OCAL_IS_FLOAT
/* A NaN propagates to every later element (as NumPy's maximum.accumulate). */
maximum_A maximum_op(maximum_A ocal_a, maximum_A ocal_b) { return (isnan(ocal_a) || ocal_a > ocal_b) ? ocal_a : ocal_b; }
#else
maximum_A maximum_op(maximum_A ocal_a, maximum_A ocal_b) { return max(ocal_a, ocal_b); }
#endif
#endif

/* ---- where the values come from ------------------------------------------------------- */
/* The built-in scans read x[xoff + i]; a generated scan's prologue defines its own. OCAL_ACC_LOAD
 * reads an array of results (the pieces' totals of the three-pass plans). */
#ifndef OCAL_IN_PARAMS
#define OCAL_IN_PARAMS __global const T *ocal_x, const ulong ocal_xoff
#define OCAL_LOAD(NAME, ocal_i) NAME##_cvt(ocal_x[ocal_xoff + (ocal_i)])
#else
#define OCAL_LB_USER_LOAD 1 /* no buffer to read vectors from (OCAL_LB_LOAD 2) */
#endif
#define OCAL_ACC_PARAMS(NAME) __global const NAME##_A *ocal_x, const ulong ocal_xoff
#define OCAL_ACC_LOAD(NAME, ocal_i) NAME##_acc_cvt(ocal_x[ocal_xoff + (ocal_i)])

/* ---- contiguous rows ---------------------------------------------------------------- */

/* Launch 1: P[g] = the combination of piece c = g % chunks of row o = g / chunks. */
#define OCAL_CONTIG_REDUCE(NAME)                                                                   \
  __kernel void NAME##_contig_reduce(OCAL_IN_PARAMS, const ulong ocal_R,                           \
                                     const ulong ocal_chunks, const ulong ocal_clen,               \
                                     __global NAME##_A *ocal_P) {                                  \
    __local NAME##_A ocal_sums[OCAL_WG_MAX];                                                       \
    const uint ocal_lid = get_local_id(0), ocal_L = get_local_size(0);                             \
    const ulong ocal_g = get_group_id(0), ocal_o = ocal_g / ocal_chunks, ocal_c = ocal_g % ocal_chunks; \
    const ulong ocal_r0 = ocal_c * ocal_clen, ocal_r1 = ocal_r0 + ocal_clen < ocal_R ? ocal_r0 + ocal_clen : ocal_R; \
    const ulong ocal_base = ocal_o * ocal_R;                                                       \
    NAME##_A ocal_a = NAME##_ID;                                                                   \
    for (ulong ocal_r = ocal_r0 + ocal_lid; ocal_r < ocal_r1; ocal_r += ocal_L) ocal_a = NAME##_op(ocal_a, OCAL_LOAD(NAME, ocal_base + ocal_r)); \
    ocal_sums[ocal_lid] = ocal_a;                                                                  \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
    for (uint ocal_h = ocal_L >> 1; ocal_h > 0; ocal_h >>= 1) {                                    \
      if (ocal_lid < ocal_h) ocal_sums[ocal_lid] = NAME##_op(ocal_sums[ocal_lid], ocal_sums[ocal_lid + ocal_h]); \
      barrier(CLK_LOCAL_MEM_FENCE);                                                                \
    }                                                                                              \
    if (ocal_lid == 0) ocal_P[ocal_g] = ocal_sums[0];                                              \
  }

/* Launch 3 (and 2, reading A): scans piece c of row o in tiles, starting from P[g] when
 * chunks > 1. in may equal out (in place) when reading results (OCAL_ACC_LOAD). */
#define OCAL_CONTIG_TILES(KNAME, NAME, PARAMS, LOAD)                                               \
  __kernel void KNAME(PARAMS, __global NAME##_A *ocal_out,                                         \
                      const ulong ocal_ooff, const ulong ocal_R, const ulong ocal_chunks, const ulong ocal_clen, \
                      __global const NAME##_A *ocal_P, const int ocal_exclusive) {                 \
    __local NAME##_A ocal_tile[OCAL_TILE_WORDS];                                                   \
    __local NAME##_A ocal_sums[OCAL_WG_MAX];                                                       \
    const uint ocal_lid = get_local_id(0), ocal_L = get_local_size(0);                             \
    const ulong ocal_g = get_group_id(0), ocal_o = ocal_g / ocal_chunks, ocal_c = ocal_g % ocal_chunks; \
    const ulong ocal_r0 = ocal_c * ocal_clen, ocal_r1 = ocal_r0 + ocal_clen < ocal_R ? ocal_r0 + ocal_clen : ocal_R; \
    const ulong ocal_base = ocal_o * ocal_R;                                                       \
    __global NAME##_A *ocal_orow = ocal_out + ocal_ooff + ocal_o * ocal_R;                         \
    NAME##_A ocal_carry = ocal_chunks > 1 ? ocal_P[ocal_g] : NAME##_ID;                            \
    const uint ocal_tile_len = ocal_L * OCAL_IPT;                                                  \
    for (ulong ocal_t0 = ocal_r0; ocal_t0 < ocal_r1; ocal_t0 += ocal_tile_len) {                   \
      const uint ocal_m = (uint)(ocal_r1 - ocal_t0 < ocal_tile_len ? ocal_r1 - ocal_t0 : ocal_tile_len); \
      for (uint ocal_k = ocal_lid; ocal_k < ocal_tile_len; ocal_k += ocal_L)                       \
        ocal_tile[OCAL_PAD(ocal_k)] = ocal_k < ocal_m ? LOAD(NAME, ocal_base + ocal_t0 + ocal_k) : NAME##_ID; \
      barrier(CLK_LOCAL_MEM_FENCE);                                                                \
      NAME##_A ocal_v[OCAL_IPT];                                                                   \
      NAME##_A ocal_run = NAME##_ID;                                                               \
      for (uint ocal_k = 0; ocal_k < OCAL_IPT; ocal_k++) {                                         \
        ocal_v[ocal_k] = ocal_tile[OCAL_PAD(ocal_lid * OCAL_IPT + ocal_k)];                        \
        ocal_run = NAME##_op(ocal_run, ocal_v[ocal_k]);                                            \
      }                                                                                            \
      ocal_sums[ocal_lid] = ocal_run;                                                              \
      barrier(CLK_LOCAL_MEM_FENCE);                                                                \
      /* Inclusive scan of the work-items' totals (Hillis and Steele). */                          \
      for (uint ocal_off = 1; ocal_off < ocal_L; ocal_off <<= 1) {                                 \
        NAME##_A ocal_left = ocal_lid >= ocal_off ? ocal_sums[ocal_lid - ocal_off] : NAME##_ID;    \
        barrier(CLK_LOCAL_MEM_FENCE);                                                              \
        if (ocal_lid >= ocal_off) ocal_sums[ocal_lid] = NAME##_op(ocal_left, ocal_sums[ocal_lid]); \
        barrier(CLK_LOCAL_MEM_FENCE);                                                              \
      }                                                                                            \
      ocal_run = NAME##_op(ocal_carry, ocal_lid > 0 ? ocal_sums[ocal_lid - 1] : NAME##_ID);        \
      const NAME##_A ocal_total = ocal_sums[ocal_L - 1];                                           \
      for (uint ocal_k = 0; ocal_k < OCAL_IPT; ocal_k++) {                                         \
        NAME##_A ocal_next = NAME##_op(ocal_run, ocal_v[ocal_k]);                                  \
        ocal_tile[OCAL_PAD(ocal_lid * OCAL_IPT + ocal_k)] = ocal_exclusive ? ocal_run : ocal_next; \
        ocal_run = ocal_next;                                                                      \
      }                                                                                            \
      barrier(CLK_LOCAL_MEM_FENCE);                                                                \
      for (uint ocal_k = ocal_lid; ocal_k < ocal_m; ocal_k += ocal_L) ocal_orow[ocal_t0 + ocal_k] = ocal_tile[OCAL_PAD(ocal_k)]; \
      ocal_carry = NAME##_op(ocal_carry, ocal_total);                                              \
      barrier(CLK_LOCAL_MEM_FENCE);                                                                \
    }                                                                                              \
  }

/* ---- contiguous rows in one pass: decoupled look-back (Merrill and Garland, "Single-pass
 * Parallel Prefix Scan with Decoupled Look-back", 2016) ----------------------------------
 * One work-group per tile of L * NAME_LB_IPT elements. A group takes a ticket (a global atomic
 * counter) and scans tile number `ticket` (row o = ticket / tiles, tile c = ticket % tiles):
 * tiles are handed out in the order groups start, so a group only ever waits for tiles whose
 * groups started before it and are running, which cannot deadlock whatever the device runs
 * concurrently (a CPU driver's threads included; Oclgrind runs groups one after another, so
 * there every predecessor has finished). The group scans its tile, publishes the tile's
 * total (flag OCAL_LB_AGG), then its work-items read a window of predecessors at once until
 * the nearest one with an inclusive prefix (flag OCAL_LB_PREFIX) with every tile after it published;
 * the first work-item combines that prefix with the totals after it in increasing tile order
 * (so a float result is the same left-to-right combination of tile totals whichever flags it
 * found: deterministic for a fixed tile size), and publishes its own inclusive prefix. Tile 0
 * of a row publishes PREFIX at once.
 *
 * Where the device has 64-bit atomics, a published value is one or two 64-bit words, each
 * the flag and 32 bits of the value, exchanged atomically and read with volatile loads: a
 * reader takes a value only when all its words carry the flag, so nothing depends on the
 * order in which other groups see stores (ocal_lb_publish, ocal_lb_read). Elsewhere a flag
 * word and a two-word value are written with 32-bit atomics (OpenCL 1.1 core), value, then
 * mem_fence, then flag, and read flag, mem_fence, value: OpenCL 1.2 does not promise that
 * order across groups, and NVIDIA's GPUs need not keep it (docs/scan.md). A flag holds
 * (epoch << 2) | state, the epoch a number the host changes at every launch, so the state
 * buffer needs no clearing between launches. The state buffer: word 0 the ticket counter
 * (words 1 and 2: OCAL_LB_STATS's counters), then 8 words per tile for `cap` tiles: packed,
 * four of total and four of inclusive prefix; else a flag, two of total, two of prefix. */
/* Predecessors a look-back reads at once: 128, or the whole group if smaller (a wide window
 * finds the nearest PREFIX in one round where many groups run at once: on a large GPU it
 * is tens of tiles back). -DOCAL_LB_WINDOW=2, say, makes the walk slide through
 * many windows: that is how the sliding paths were tested (docs/scan.md). */
#ifndef OCAL_LB_WINDOW
#define OCAL_LB_WINDOW 128 /* faster than the whole group (256): docs/measurements.md */
#endif
#define OCAL_LB_WINDOW_OF(ocal_L) ((ocal_L) < OCAL_LB_WINDOW ? (ocal_L) : OCAL_LB_WINDOW)
#define OCAL_LB_AGG 1u
#define OCAL_LB_PREFIX 2u
/* Elements per work-item of a look-back tile: 24 for results of 4 bytes or less, 12 for 8-byte
 * results, so a tile is 24 KB of results and the kernel's local memory (tile, padding and the
 * block scan's buffers) stays under 28 KB of the 32 KB every OpenCL 1.2 device has. Large
 * tiles matter: each costs a look-back whatever its size, so small tiles lose a fifth of the
 * speed (docs/measurements.md#reductions-and-scans). With -DOCAL_LB_WIDE (the host's choice
 * where the device's local memory holds it, 36 KB) results of 4 bytes or less take 32, a tile
 * of 8192: fewer look-backs (docs/measurements.md#scan-wide-tiles). The host mirrors
 * the rule (scan.c, ocal__scan_lookback_ipt); -DOCAL_LB_IPT=n overrides it for the built-in
 * operations (the scan probe of bench/experiments/, which sizes its launches itself). */
#if defined(OCAL_LB_WIDE)
#define OCAL_LB_IPT_NARROW 32 /* results of 4 bytes or less */
#else
#define OCAL_LB_IPT_NARROW 24
#endif
#if defined(OCAL_ONLY_maximum) || !defined(OCAL_ONLY)
#if defined(OCAL_LB_IPT)
#define maximum_LB_IPT OCAL_LB_IPT
#elif defined(OCAL_DTYPE_f64) || defined(OCAL_DTYPE_i64) || defined(OCAL_DTYPE_u64)
#define maximum_LB_IPT 12
#else
#define maximum_LB_IPT OCAL_LB_IPT_NARROW
#endif
#endif
#if defined(OCAL_ONLY_sum) || !defined(OCAL_ONLY)
#if defined(OCAL_LB_IPT)
#define sum_LB_IPT OCAL_LB_IPT
#elif defined(OCAL_DTYPE_f32)
#define sum_LB_IPT OCAL_LB_IPT_NARROW
#else
#define sum_LB_IPT 12
#endif
#endif
#define OCAL_LB_TILE_WORDS(ocal_ipt) (OCAL_WG_MAX * (ocal_ipt) + OCAL_WG_MAX * (ocal_ipt) / 32)
/* The local array: the padded tile, or (OCAL_LB_LOAD 3, no tile in local memory) room for the
 * look-back's windows (four of a group's size). */
#if defined(OCAL_LB_LOAD) && OCAL_LB_LOAD == 3
#define OCAL_LB_LOCAL_WORDS(ocal_ipt) (4 * OCAL_WG_MAX)
#else
#define OCAL_LB_LOCAL_WORDS(ocal_ipt) OCAL_LB_TILE_WORDS(ocal_ipt)
#endif

/* How the look-back kernel does each step (build options; bench/experiments/scan_probe
 * times them):
 *   OCAL_LB_LOAD   0: the tile goes to local memory in a loop of L-strided loads whose trip
 *                     count the compiler does not know (one load in flight per work-item);
 *                  1: NAME_LB_IPT loads per work-item into registers first (all in flight at
 *                     once), then to local memory; the same for the stores;
 *                  2: as 1 with 4-element vector loads and stores, for the built-in
 *                     operations over 4-byte elements (others take 1);
 *                  3: each work-item's own NAME_LB_IPT elements straight to registers (as
 *                     vectors where 2 has them), no local memory.
 *   OCAL_LB_BSCAN  0: the work-items' totals scanned by Hillis and Steele in place (two
 *                     barriers a step); 1: the same into two buffers in turn (one barrier a
 *                     step); 2: each 32-wide warp scans with PTX shuffles (NVIDIA's inline
 *                     assembly), then one barrier for the warps' totals.
 *   OCAL_LB_PACK   1: a result is published as one or two 64-bit words each holding the flag
 *                     and 32 bits of it (cl_khr_int64_base_atomics), read with no fence.
 *   OCAL_LB_NONE   1: no look-back: every tile is scanned from the neutral value (wrong
 *                     results on purpose: the speed of the tile work alone, for the probe).
 *   OCAL_LB_STATS  1: state words 1 and 2 count predecessors looked at and windows read.
 *   OCAL_LB_KEEP   1: windows a look-back slides past stay in local memory (as many as fit)
 *                     and the fold reads them eight at a time; 0: the first work-item reads
 *                     the totals of windows slid past again from global memory, one by one.
 *   OCAL_LB_REREAD 1: (modes 0 to 2) a work-item's elements are not kept in registers through
 *                     the look-back but read from the local tile again. */
/* The defaults are what the library runs everywhere: a portable kernel (no vendor's
 * instructions) that was the fastest measured (docs/measurements.md#reductions-and-scans). */
#ifndef OCAL_LB_LOAD
#define OCAL_LB_LOAD 2
#endif
#ifndef OCAL_LB_BSCAN
#define OCAL_LB_BSCAN 1
#endif
#ifndef OCAL_LB_PACK
#if defined(cl_khr_int64_base_atomics)
#define OCAL_LB_PACK 1 /* the device's compiler says it has 64-bit atomics */
#else
#define OCAL_LB_PACK 0
#endif
#endif
#ifndef OCAL_LB_NONE
#define OCAL_LB_NONE 0
#endif
#ifndef OCAL_LB_STATS
#define OCAL_LB_STATS 0
#endif
/* Test only: -DOCAL_LB_SPARSE=n publishes the inclusive prefix of every n-th tile of a row
 * alone, so that look-backs walk up to n tiles back (sliding windows on a CPU, whose
 * predecessors have always finished). */
#ifndef OCAL_LB_SPARSE
#define OCAL_LB_SPARSE 0
#endif
#ifndef OCAL_LB_KEEP
#define OCAL_LB_KEEP 1
#endif
#ifndef OCAL_LB_REREAD
#define OCAL_LB_REREAD 1
#endif
/* Windows a look-back keeps in local memory (OCAL_LB_KEEP); -DOCAL_LB_SLOTS=n caps it, to test
 * the path that reads the totals of windows it could not keep again. */
#ifdef OCAL_LB_SLOTS
#define OCAL_LB_SLOTS_OF(ocal_n) ((ocal_n) < OCAL_LB_SLOTS ? (ocal_n) : OCAL_LB_SLOTS)
#else
#define OCAL_LB_SLOTS_OF(ocal_n) (ocal_n)
#endif
#if OCAL_LB_PACK
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#endif

#if defined(OCAL_DTYPE_f32)
#define OCAL_T_BITS(ocal_v) ((ulong)as_uint(ocal_v))
#define OCAL_T_FROM_BITS(ocal_b) as_float((uint)(ocal_b))
#define OCAL_T4 float4
#elif defined(OCAL_DTYPE_f64)
#define OCAL_T_BITS(ocal_v) as_ulong(ocal_v)
#define OCAL_T_FROM_BITS(ocal_b) as_double(ocal_b)
#elif defined(OCAL_DTYPE_i32)
#define OCAL_T_BITS(ocal_v) ((ulong)(uint)(ocal_v))
#define OCAL_T_FROM_BITS(ocal_b) ((int)(uint)(ocal_b))
#define OCAL_T4 int4
#elif defined(OCAL_DTYPE_i64)
#define OCAL_T_BITS(ocal_v) ((ulong)(ocal_v))
#define OCAL_T_FROM_BITS(ocal_b) ((long)(ocal_b))
#else
#define OCAL_T_BITS(ocal_v) ((ulong)(ocal_v))
#define OCAL_T_FROM_BITS(ocal_b) ((T)(ocal_b))
#if defined(OCAL_DTYPE_u32)
#define OCAL_T4 uint4
#endif
#endif
#if defined(OCAL_ONLY_sum) || !defined(OCAL_ONLY)
#ifdef OCAL_IS_FLOAT
#define sum_BITS(ocal_v) OCAL_T_BITS(ocal_v)
#define sum_FROM_BITS(ocal_b) OCAL_T_FROM_BITS(ocal_b)
#else
#define sum_BITS(ocal_v) (ocal_v)
#define sum_FROM_BITS(ocal_b) (ocal_b)
#endif
#endif
#if defined(OCAL_ONLY_maximum) || !defined(OCAL_ONLY)
#define maximum_BITS(ocal_v) OCAL_T_BITS(ocal_v)
#define maximum_FROM_BITS(ocal_b) OCAL_T_FROM_BITS(ocal_b)
#endif

/* Publishing is atomic (a 32-bit exchange per half, then a fence, then the flag); reading is
 * plain volatile loads, which a spinning group repeats without taking the line for a
 * read-modify-write (on NVIDIA they compile to ld.volatile, served by L2 where the atomics
 * land, as CUB's look-back does). A value is read only after its flag said it is there, and
 * never changes afterwards, so its halves are consistent. */
void ocal_lb_store(__global uint *ocal_w, ulong ocal_bits) {
  atomic_xchg(ocal_w, (uint)ocal_bits);
  atomic_xchg(ocal_w + 1, (uint)(ocal_bits >> 32));
}
uint ocal_lb_flag(volatile __global uint *ocal_w) { return *ocal_w; }
ulong ocal_lb_load(volatile __global uint *ocal_w) {
  uint ocal_lo = ocal_w[0], ocal_hi = ocal_w[1];
  return (ulong)ocal_lo | ((ulong)ocal_hi << 32);
}
/* Packed (OCAL_LB_PACK): the flag word in the low half, the value's 32 bits in the high half,
 * exchanged and loaded as one 64-bit word. A tile's total and its inclusive prefix have a word
 * each (a total never changes once published, so windows slid past can read it again). */
#if OCAL_LB_PACK
void ocal_lb_put64(__global uint *ocal_w, uint ocal_flag, ulong ocal_bits) {
  atom_xchg((volatile __global ulong *)ocal_w, ((ulong)(uint)ocal_bits << 32) | ocal_flag);
}
ulong ocal_lb_get64(__global uint *ocal_w) { return *(volatile __global ulong *)ocal_w; }
#else
void ocal_lb_put64(__global uint *ocal_w, uint ocal_flag, ulong ocal_bits) {
  ocal_lb_store(ocal_w, ((ulong)(uint)ocal_bits << 32) | ocal_flag);
}
ulong ocal_lb_get64(__global uint *ocal_w) { return ocal_lb_load(ocal_w); }
#endif
/* A packed value of `words` (1 or 2) 64-bit words, each its flag word and 32 bits of the
 * value: every word says itself whether it is there, so no fence orders the value before
 * the flag (with the flag and the value in separate words and a mem_fence between, an NVIDIA
 * GPU most likely returned a value older than the flag read before it: docs/scan.md). */
void ocal_lb_publish(__global uint *ocal_w, uint ocal_words, uint ocal_flag, ulong ocal_bits) {
  ocal_lb_put64(ocal_w, ocal_flag, ocal_bits & 0xffffffffu);
  if (ocal_words > 1) ocal_lb_put64(ocal_w + 2, ocal_flag, ocal_bits >> 32);
}
/* 1 and the value's bits in *bits if every word of the value carries `flag`, else 0. */
int ocal_lb_read(__global uint *ocal_w, uint ocal_words, uint ocal_flag, ulong *ocal_bits) {
  const ulong ocal_w0 = ocal_lb_get64(ocal_w);
  const ulong ocal_w1 = ocal_words > 1 ? ocal_lb_get64(ocal_w + 2) : (ulong)ocal_flag;
  *ocal_bits = (ocal_w0 >> 32) | (ocal_words > 1 ? (ocal_w1 >> 32) << 32 : 0);
  return (uint)ocal_w0 == ocal_flag && (uint)ocal_w1 == ocal_flag;
}

/* A warp-wide shuffle up by d lanes (OCAL_LB_BSCAN 2: NVIDIA's PTX through OpenCL C's inline
 * assembly, which NVIDIA's compiler accepts; the keyword is __asm__ unless -DOCAL_ASM_KW=asm). */
#ifndef OCAL_ASM_KW
#define OCAL_ASM_KW __asm__
#endif
#if OCAL_LB_BSCAN == 2 && !defined(OCAL_LB_SHFL_EMULATE)
uint ocal_shfl_up32(uint ocal_x, uint ocal_d) {
  uint ocal_r;
  OCAL_ASM_KW volatile("shfl.sync.up.b32 %0, %1, %2, 0, 0xffffffff;" : "=r"(ocal_r) : "r"(ocal_x), "r"(ocal_d));
  return ocal_r;
}
#define OCAL_LB_XCHG_DECL(NAME)
#define OCAL_LB_SHFL_UP(NAME, ocal_dst, ocal_x, ocal_d)                                            \
  ocal_dst = sizeof(NAME##_A) <= 4                                                                 \
                 ? NAME##_FROM_BITS((ulong)ocal_shfl_up32((uint)NAME##_BITS(ocal_x), (ocal_d)))    \
                 : NAME##_FROM_BITS((ulong)ocal_shfl_up32((uint)NAME##_BITS(ocal_x), (ocal_d)) |   \
                                    ((ulong)ocal_shfl_up32((uint)(NAME##_BITS(ocal_x) >> 32), (ocal_d)) << 32));
#elif OCAL_LB_BSCAN == 2
/* -DOCAL_LB_SHFL_EMULATE: the same shuffle through local memory, so that the warp scan's
 * indexing is tested where there is no PTX (PoCL; docs/scan.md). */
#define OCAL_LB_XCHG_DECL(NAME) __local NAME##_A ocal_xchg[OCAL_WG_MAX];
#define OCAL_LB_SHFL_UP(NAME, ocal_dst, ocal_x, ocal_d)                                            \
  barrier(CLK_LOCAL_MEM_FENCE);                                                                    \
  ocal_xchg[ocal_lid] = (ocal_x);                                                                  \
  barrier(CLK_LOCAL_MEM_FENCE);                                                                    \
  ocal_dst = (ocal_lid & 31) >= (ocal_d) ? ocal_xchg[ocal_lid - (ocal_d)] : (ocal_x);
#else
#define OCAL_LB_XCHG_DECL(NAME)
#endif

/* The tile into the work-items' registers, NAME_LB_IPT consecutive elements each (ocal_val,
 * NAME_ID past the tile's end m), and the results back out (OCAL_LB_TO_VAL, OCAL_LB_FROM_VAL).
 * Modes 0 to 2 go through local memory (entry OCAL_PAD(k) holds element k of the tile): the
 * loads of modes 1 and 2 are all issued before the first local store, so a work-item has
 * NAME_LB_IPT loads in flight, and neighbouring work-items read neighbouring elements (or
 * 4-element vectors), so every load instruction is coalesced. Mode 3 loads each work-item's
 * own elements straight into registers as 4-element vectors (a warp's instruction then reads
 * every other 16 bytes of 1 KB, and the next one the rest: the caches merge them) and stores
 * them the same way, with no trip through local memory and two barriers fewer. Vectors are
 * for the built-in operations over 4-byte elements (results too for f32), others are read
 * and written an element at a time. */
#if OCAL_LB_LOAD >= 2 && defined(OCAL_T4) && !defined(OCAL_LB_USER_LOAD)
#define OCAL_LB_VEC 1
#if defined(OCAL_DTYPE_f32)
#define OCAL_LB_VEC_OUT 1
#endif
#endif
/* Loads a work-item keeps in flight at once (OCAL_LB_CHUNK, a multiple of 4 dividing
 * NAME_LB_IPT; default 8 where it divides, else 4): fewer registers for the loads, so more
 * groups fit, and still 256 x 8 loads in flight per group. */
#ifdef OCAL_LB_CHUNK
#define OCAL_LB_CH(NAME) OCAL_LB_CHUNK
#else
#define OCAL_LB_CH(NAME) (NAME##_LB_IPT % 8 == 0 ? 8 : 4)
#endif
#if OCAL_LB_LOAD == 0
#define OCAL_LB_TILE_IN(NAME)                                                                      \
  for (uint ocal_k = ocal_lid; ocal_k < ocal_tile_len; ocal_k += ocal_L)                           \
    ocal_tile[OCAL_PAD(ocal_k)] = ocal_k < ocal_m ? OCAL_LOAD(NAME, ocal_base + ocal_t0 + ocal_k) : NAME##_ID;
#define OCAL_LB_TILE_OUT(NAME)                                                                     \
  for (uint ocal_k = ocal_lid; ocal_k < ocal_m; ocal_k += ocal_L) ocal_orow[ocal_t0 + ocal_k] = ocal_tile[OCAL_PAD(ocal_k)];
#elif OCAL_LB_LOAD == 2 && defined(OCAL_LB_VEC)
#define OCAL_LB_TILE_IN(NAME)                                                                      \
  for (uint ocal_c0 = 0; ocal_c0 < NAME##_LB_IPT; ocal_c0 += OCAL_LB_CH(NAME)) {                   \
    NAME##_A ocal_r[OCAL_LB_CH(NAME)];                                                             \
    const ulong ocal_g0 = ocal_xoff + ocal_base + ocal_t0;                                         \
    if (ocal_m == ocal_tile_len && (ocal_g0 & 3) == 0) {                                           \
      __global const OCAL_T4 *ocal_p4 = (__global const OCAL_T4 *)(ocal_x + ocal_g0);              \
      for (uint ocal_k = 0; ocal_k < OCAL_LB_CH(NAME) / 4; ocal_k++) {                             \
        const OCAL_T4 ocal_q = ocal_p4[ocal_lid + (ocal_c0 / 4 + ocal_k) * ocal_L];                \
        ocal_r[4 * ocal_k] = NAME##_cvt(ocal_q.s0);                                                \
        ocal_r[4 * ocal_k + 1] = NAME##_cvt(ocal_q.s1);                                            \
        ocal_r[4 * ocal_k + 2] = NAME##_cvt(ocal_q.s2);                                            \
        ocal_r[4 * ocal_k + 3] = NAME##_cvt(ocal_q.s3);                                            \
      }                                                                                            \
    } else {                                                                                       \
      for (uint ocal_k = 0; ocal_k < OCAL_LB_CH(NAME); ocal_k++) {                                 \
        const uint ocal_kk = ocal_c0 + ocal_k;                                                     \
        const uint ocal_e = 4 * (ocal_lid + (ocal_kk >> 2) * ocal_L) + (ocal_kk & 3);              \
        ocal_r[ocal_k] = ocal_e < ocal_m ? OCAL_LOAD(NAME, ocal_base + ocal_t0 + ocal_e) : NAME##_ID; \
      }                                                                                            \
    }                                                                                              \
    for (uint ocal_k = 0; ocal_k < OCAL_LB_CH(NAME); ocal_k++) {                                   \
      const uint ocal_kk = ocal_c0 + ocal_k;                                                       \
      ocal_tile[OCAL_PAD(4 * (ocal_lid + (ocal_kk >> 2) * ocal_L) + (ocal_kk & 3))] = ocal_r[ocal_k]; \
    }                                                                                              \
  }
#if defined(OCAL_LB_VEC_OUT)
#define OCAL_LB_TILE_OUT(NAME)                                                                     \
  {                                                                                                \
    __global NAME##_A *ocal_o1 = ocal_orow + ocal_t0;                                              \
    if (ocal_m == ocal_tile_len && ((ocal_ooff + ocal_o * ocal_R + ocal_t0) & 3) == 0) {           \
      __global float4 *ocal_o4 = (__global float4 *)ocal_o1;                                       \
      for (uint ocal_k = 0; ocal_k < NAME##_LB_IPT / 4; ocal_k++) {                                \
        const uint ocal_e = 4 * (ocal_lid + ocal_k * ocal_L);                                      \
        ocal_o4[ocal_lid + ocal_k * ocal_L] =                                                      \
            (float4)(ocal_tile[OCAL_PAD(ocal_e)], ocal_tile[OCAL_PAD(ocal_e + 1)],                 \
                     ocal_tile[OCAL_PAD(ocal_e + 2)], ocal_tile[OCAL_PAD(ocal_e + 3)]);            \
      }                                                                                            \
    } else {                                                                                       \
      for (uint ocal_k = 0; ocal_k < NAME##_LB_IPT; ocal_k++) {                                    \
        const uint ocal_e = 4 * (ocal_lid + (ocal_k >> 2) * ocal_L) + (ocal_k & 3);                \
        if (ocal_e < ocal_m) ocal_o1[ocal_e] = ocal_tile[OCAL_PAD(ocal_e)];                        \
      }                                                                                            \
    }                                                                                              \
  }
#else
#define OCAL_LB_TILE_OUT(NAME)                                                                     \
  {                                                                                                \
    __global NAME##_A *ocal_o1 = ocal_orow + ocal_t0;                                              \
    for (uint ocal_k = 0; ocal_k < NAME##_LB_IPT; ocal_k++) {                                      \
      const uint ocal_e = 4 * (ocal_lid + (ocal_k >> 2) * ocal_L) + (ocal_k & 3);                  \
      if (ocal_e < ocal_m) ocal_o1[ocal_e] = ocal_tile[OCAL_PAD(ocal_e)];                          \
    }                                                                                              \
  }
#endif
#elif OCAL_LB_LOAD <= 2
#define OCAL_LB_TILE_IN(NAME)                                                                      \
  for (uint ocal_c0 = 0; ocal_c0 < NAME##_LB_IPT; ocal_c0 += OCAL_LB_CH(NAME)) {                   \
    NAME##_A ocal_r[OCAL_LB_CH(NAME)];                                                             \
    if (ocal_m == ocal_tile_len) {                                                                 \
      for (uint ocal_k = 0; ocal_k < OCAL_LB_CH(NAME); ocal_k++)                                   \
        ocal_r[ocal_k] = OCAL_LOAD(NAME, ocal_base + ocal_t0 + ocal_lid + (ocal_c0 + ocal_k) * ocal_L); \
    } else {                                                                                       \
      for (uint ocal_k = 0; ocal_k < OCAL_LB_CH(NAME); ocal_k++) {                                 \
        const uint ocal_e = ocal_lid + (ocal_c0 + ocal_k) * ocal_L;                                \
        ocal_r[ocal_k] = ocal_e < ocal_m ? OCAL_LOAD(NAME, ocal_base + ocal_t0 + ocal_e) : NAME##_ID; \
      }                                                                                            \
    }                                                                                              \
    for (uint ocal_k = 0; ocal_k < OCAL_LB_CH(NAME); ocal_k++)                                     \
      ocal_tile[OCAL_PAD(ocal_lid + (ocal_c0 + ocal_k) * ocal_L)] = ocal_r[ocal_k];                \
  }
#define OCAL_LB_TILE_OUT(NAME)                                                                     \
  {                                                                                                \
    __global NAME##_A *ocal_o1 = ocal_orow + ocal_t0;                                              \
    if (ocal_m == ocal_tile_len) {                                                                 \
      for (uint ocal_k = 0; ocal_k < NAME##_LB_IPT; ocal_k++)                                      \
        ocal_o1[ocal_lid + ocal_k * ocal_L] = ocal_tile[OCAL_PAD(ocal_lid + ocal_k * ocal_L)];     \
    } else {                                                                                       \
      for (uint ocal_k = 0; ocal_k < NAME##_LB_IPT; ocal_k++) {                                    \
        const uint ocal_e = ocal_lid + ocal_k * ocal_L;                                            \
        if (ocal_e < ocal_m) ocal_o1[ocal_e] = ocal_tile[OCAL_PAD(ocal_e)];                        \
      }                                                                                            \
    }                                                                                              \
  }
#endif

/* A work-item's elements: in registers (ocal_val) or, with OCAL_LB_REREAD, read from the local
 * tile where they stay (two passes over local memory, and no registers held through the
 * look-back, so more groups fit on a compute unit). The look-back's windows then have a local
 * array of their own (ocal_wbuf), as the tile must stay intact. */
#if OCAL_LB_REREAD && OCAL_LB_LOAD <= 2
#if OCAL_LB_BSCAN == 1
/* The block scan's two buffers are free once every work-item has read its results from them
 * (before the look-back's first barrier): the windows go there. */
#define OCAL_LB_VAL_DECL(NAME)
#define OCAL_LB_WBUF ocal_sums
#else
#define OCAL_LB_VAL_DECL(NAME) __local NAME##_A ocal_wbuf[2 * OCAL_WG_MAX];
#define OCAL_LB_WBUF ocal_wbuf
#endif
#define OCAL_LB_ELEM(NAME, ocal_k) ocal_tile[OCAL_PAD(ocal_lid * NAME##_LB_IPT + (ocal_k))]
#define OCAL_LB_WBUF_WORDS(ocal_ipt) (2 * OCAL_WG_MAX)
#define OCAL_LB_TO_VAL(NAME)                                                                       \
  OCAL_LB_TILE_IN(NAME)                                                                            \
  barrier(CLK_LOCAL_MEM_FENCE);
#define OCAL_LB_FROM_VAL(NAME)                                                                     \
  barrier(CLK_LOCAL_MEM_FENCE);                                                                    \
  OCAL_LB_TILE_OUT(NAME)
#else
#define OCAL_LB_VAL_DECL(NAME) NAME##_A ocal_val[NAME##_LB_IPT];
#define OCAL_LB_ELEM(NAME, ocal_k) ocal_val[ocal_k]
#define OCAL_LB_WBUF ocal_tile
#define OCAL_LB_WBUF_WORDS(ocal_ipt) OCAL_LB_LOCAL_WORDS(ocal_ipt)
#endif
#if OCAL_LB_REREAD && OCAL_LB_LOAD <= 2
#elif OCAL_LB_LOAD <= 2
#define OCAL_LB_TO_VAL(NAME)                                                                       \
  OCAL_LB_TILE_IN(NAME)                                                                            \
  barrier(CLK_LOCAL_MEM_FENCE);                                                                    \
  for (uint ocal_k = 0; ocal_k < NAME##_LB_IPT; ocal_k++)                                          \
    ocal_val[ocal_k] = ocal_tile[OCAL_PAD(ocal_lid * NAME##_LB_IPT + ocal_k)];
#define OCAL_LB_FROM_VAL(NAME)                                                                     \
  for (uint ocal_k = 0; ocal_k < NAME##_LB_IPT; ocal_k++)                                          \
    ocal_tile[OCAL_PAD(ocal_lid * NAME##_LB_IPT + ocal_k)] = ocal_val[ocal_k];                     \
  barrier(CLK_LOCAL_MEM_FENCE);                                                                    \
  OCAL_LB_TILE_OUT(NAME)
#elif OCAL_LB_LOAD == 3
#if defined(OCAL_LB_VEC)
#define OCAL_LB_DIRECT_IN_FULL(NAME)                                                               \
  if (((ocal_xoff + ocal_e0) & 3) == 0) {                                                          \
    __global const OCAL_T4 *ocal_p4 = (__global const OCAL_T4 *)(ocal_x + ocal_xoff + ocal_e0);    \
    for (uint ocal_k = 0; ocal_k < NAME##_LB_IPT / 4; ocal_k++) {                                  \
      const OCAL_T4 ocal_q = ocal_p4[ocal_k];                                                      \
      ocal_val[4 * ocal_k] = NAME##_cvt(ocal_q.s0);                                                \
      ocal_val[4 * ocal_k + 1] = NAME##_cvt(ocal_q.s1);                                            \
      ocal_val[4 * ocal_k + 2] = NAME##_cvt(ocal_q.s2);                                            \
      ocal_val[4 * ocal_k + 3] = NAME##_cvt(ocal_q.s3);                                            \
    }                                                                                              \
  } else
#else
#define OCAL_LB_DIRECT_IN_FULL(NAME)
#endif
#if defined(OCAL_LB_VEC_OUT)
#define OCAL_LB_DIRECT_OUT_FULL(NAME)                                                              \
  if (((ocal_ooff + ocal_e0) & 3) == 0) {                                                          \
    __global float4 *ocal_o4 = (__global float4 *)(ocal_out + ocal_ooff + ocal_e0);                \
    for (uint ocal_k = 0; ocal_k < NAME##_LB_IPT / 4; ocal_k++)                                    \
      ocal_o4[ocal_k] = (float4)(ocal_val[4 * ocal_k], ocal_val[4 * ocal_k + 1], ocal_val[4 * ocal_k + 2], \
                                 ocal_val[4 * ocal_k + 3]);                                        \
  } else
#else
#define OCAL_LB_DIRECT_OUT_FULL(NAME)
#endif
#define OCAL_LB_TO_VAL(NAME)                                                                       \
  const ulong ocal_e0 = ocal_base + ocal_t0 + ocal_lid * NAME##_LB_IPT;                            \
  if (ocal_m == ocal_tile_len) {                                                                   \
    OCAL_LB_DIRECT_IN_FULL(NAME)                                                                   \
    for (uint ocal_k = 0; ocal_k < NAME##_LB_IPT; ocal_k++) ocal_val[ocal_k] = OCAL_LOAD(NAME, ocal_e0 + ocal_k); \
  } else {                                                                                         \
    for (uint ocal_k = 0; ocal_k < NAME##_LB_IPT; ocal_k++)                                        \
      ocal_val[ocal_k] = ocal_lid * NAME##_LB_IPT + ocal_k < ocal_m ? OCAL_LOAD(NAME, ocal_e0 + ocal_k) : NAME##_ID; \
  }
#define OCAL_LB_FROM_VAL(NAME)                                                                     \
  if (ocal_m == ocal_tile_len) {                                                                   \
    OCAL_LB_DIRECT_OUT_FULL(NAME)                                                                  \
    for (uint ocal_k = 0; ocal_k < NAME##_LB_IPT; ocal_k++) ocal_out[ocal_ooff + ocal_e0 + ocal_k] = ocal_val[ocal_k]; \
  } else {                                                                                         \
    for (uint ocal_k = 0; ocal_k < NAME##_LB_IPT; ocal_k++)                                        \
      if (ocal_lid * NAME##_LB_IPT + ocal_k < ocal_m) ocal_out[ocal_ooff + ocal_e0 + ocal_k] = ocal_val[ocal_k]; \
  }
#else
#error "OCAL_LB_LOAD is 0, 1, 2 or 3"
#endif

/* The scan of the work-items' totals ocal_run across the group: ocal_excl, the combination of
 * the totals of the work-items before this one, and ocal_total, the tile's. */
#if OCAL_LB_BSCAN == 0
#define OCAL_LB_SUMS_WORDS OCAL_WG_MAX
#define OCAL_LB_BLOCK_SCAN(NAME)                                                                   \
  ocal_sums[ocal_lid] = ocal_run;                                                                  \
  barrier(CLK_LOCAL_MEM_FENCE);                                                                    \
  for (uint ocal_off = 1; ocal_off < ocal_L; ocal_off <<= 1) {                                     \
    NAME##_A ocal_left = ocal_lid >= ocal_off ? ocal_sums[ocal_lid - ocal_off] : NAME##_ID;        \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
    if (ocal_lid >= ocal_off) ocal_sums[ocal_lid] = NAME##_op(ocal_left, ocal_sums[ocal_lid]);     \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
  }                                                                                                \
  const NAME##_A ocal_excl = ocal_lid > 0 ? ocal_sums[ocal_lid - 1] : NAME##_ID;                   \
  const NAME##_A ocal_total = ocal_sums[ocal_L - 1];
#elif OCAL_LB_BSCAN == 1
#define OCAL_LB_SUMS_WORDS (2 * OCAL_WG_MAX)
#define OCAL_LB_BLOCK_SCAN(NAME)                                                                   \
  uint ocal_pp = 0;                                                                                \
  ocal_sums[ocal_lid] = ocal_run;                                                                  \
  barrier(CLK_LOCAL_MEM_FENCE);                                                                    \
  for (uint ocal_off = 1; ocal_off < ocal_L; ocal_off <<= 1) {                                     \
    NAME##_A ocal_s = ocal_sums[ocal_pp + ocal_lid];                                               \
    if (ocal_lid >= ocal_off) ocal_s = NAME##_op(ocal_sums[ocal_pp + ocal_lid - ocal_off], ocal_s); \
    ocal_pp ^= OCAL_WG_MAX;                                                                        \
    ocal_sums[ocal_pp + ocal_lid] = ocal_s;                                                        \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
  }                                                                                                \
  const NAME##_A ocal_excl = ocal_lid > 0 ? ocal_sums[ocal_pp + ocal_lid - 1] : NAME##_ID;         \
  const NAME##_A ocal_total = ocal_sums[ocal_pp + ocal_L - 1];
#elif OCAL_LB_BSCAN == 2
#define OCAL_LB_SUMS_WORDS (OCAL_WG_MAX / 32)
#define OCAL_LB_BLOCK_SCAN(NAME)                                                                   \
  const uint ocal_lane = ocal_lid & 31, ocal_warp = ocal_lid >> 5;                                 \
  NAME##_A ocal_s = ocal_run;                                                                      \
  for (uint ocal_d = 1; ocal_d < 32; ocal_d <<= 1) {                                               \
    NAME##_A ocal_y;                                                                               \
    OCAL_LB_SHFL_UP(NAME, ocal_y, ocal_s, ocal_d)                                                  \
    if (ocal_lane >= ocal_d) ocal_s = NAME##_op(ocal_y, ocal_s);                                   \
  }                                                                                                \
  NAME##_A ocal_ws;                                                                                \
  OCAL_LB_SHFL_UP(NAME, ocal_ws, ocal_s, 1u)                                                       \
  if (ocal_lane == 31) ocal_sums[ocal_warp] = ocal_s;                                              \
  barrier(CLK_LOCAL_MEM_FENCE);                                                                    \
  NAME##_A ocal_wp = NAME##_ID;                                                                    \
  for (uint ocal_w = 0; ocal_w < ocal_warp; ocal_w++) ocal_wp = NAME##_op(ocal_wp, ocal_sums[ocal_w]); \
  NAME##_A ocal_total = ocal_wp;                                                                   \
  for (uint ocal_w = ocal_warp; ocal_w < (ocal_L >> 5); ocal_w++) ocal_total = NAME##_op(ocal_total, ocal_sums[ocal_w]); \
  const NAME##_A ocal_excl = ocal_lane > 0 ? NAME##_op(ocal_wp, ocal_ws) : ocal_wp;
#else
#error "OCAL_LB_BSCAN is 0, 1 or 2"
#endif

/* ocal_p combined with ocal_a[ocal_f - 1], ocal_a[ocal_f - 2], ..., ocal_a[0] in that order
 * (ocal_f ends at 0), eight loads at a time so that they need not wait for the additions. */
#define OCAL_LB_FOLD_DOWN(NAME, ocal_p, ocal_a, ocal_f)                                            \
  for (; ocal_f >= 8; ocal_f -= 8) {                                                               \
    const NAME##_A ocal_a0 = ocal_a[ocal_f - 1], ocal_a1 = ocal_a[ocal_f - 2], ocal_a2 = ocal_a[ocal_f - 3], \
                   ocal_a3 = ocal_a[ocal_f - 4], ocal_a4 = ocal_a[ocal_f - 5], ocal_a5 = ocal_a[ocal_f - 6], \
                   ocal_a6 = ocal_a[ocal_f - 7], ocal_a7 = ocal_a[ocal_f - 8];                     \
    ocal_p = NAME##_op(NAME##_op(NAME##_op(NAME##_op(ocal_p, ocal_a0), ocal_a1), ocal_a2), ocal_a3); \
    ocal_p = NAME##_op(NAME##_op(NAME##_op(NAME##_op(ocal_p, ocal_a4), ocal_a5), ocal_a6), ocal_a7); \
  }                                                                                                \
  while (ocal_f > 0) ocal_p = NAME##_op(ocal_p, ocal_a[--ocal_f]);

#define OCAL_CONTIG_LOOKBACK(NAME)                                                                 \
  __kernel void NAME##_lookback(OCAL_IN_PARAMS,                                                    \
                                __global NAME##_A *ocal_out, const ulong ocal_ooff, const ulong ocal_R, \
                                const ulong ocal_tiles, __global uint *ocal_state, const ulong ocal_cap, \
                                const uint ocal_ticket_base, const uint ocal_epoch,                \
                                const int ocal_exclusive) {                                        \
    __local NAME##_A ocal_tile[OCAL_LB_LOCAL_WORDS(NAME##_LB_IPT)];                                \
    __local NAME##_A ocal_sums[OCAL_LB_SUMS_WORDS];                                                \
    __local uint ocal_ticket_l;                                                                    \
    __local NAME##_A ocal_prefix_l;                                                                \
    __local uint ocal_lb_kp, ocal_lb_kz; /* nearest PREFIX, nearest unpublished in the window */   \
    OCAL_LB_XCHG_DECL(NAME)                                                                        \
    const uint ocal_lid = get_local_id(0), ocal_L = get_local_size(0);                             \
    /* Packed: per tile four words of total and four of inclusive prefix (one or two 64-bit  \
     * words used). Else a flag word, then two words of each. 4 + 8 cap words in all. */      \
    const int ocal_packed = OCAL_LB_PACK && sizeof(NAME##_A) <= 8;                                 \
    const uint ocal_pw = sizeof(NAME##_A) <= 4 ? 1 : 2; /* 64-bit words of a packed value */   \
    __global uint *ocal_flags = ocal_state + 4;                                                    \
    __global uint *ocal_aggs = ocal_packed ? ocal_state + 4 : ocal_flags + ocal_cap;              \
    __global uint *ocal_incls = ocal_packed ? ocal_aggs + 4 * ocal_cap : ocal_aggs + 2 * ocal_cap; \
    const ulong ocal_ps = ocal_packed ? 4 : 2; /* words per tile in aggs and incls */           \
    if (ocal_lid == 0) ocal_ticket_l = atomic_inc(ocal_state) - ocal_ticket_base;                  \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
    const ulong ocal_v = ocal_ticket_l, ocal_o = ocal_v / ocal_tiles, ocal_c = ocal_v % ocal_tiles; \
    const uint ocal_tile_len = ocal_L * NAME##_LB_IPT;                                             \
    const ulong ocal_t0 = ocal_c * ocal_tile_len;                                                  \
    const uint ocal_m = (uint)(ocal_R - ocal_t0 < ocal_tile_len ? ocal_R - ocal_t0 : ocal_tile_len); \
    const ulong ocal_base = ocal_o * ocal_R;                                                       \
    __global NAME##_A *ocal_orow = ocal_out + ocal_ooff + ocal_o * ocal_R;                         \
    OCAL_LB_VAL_DECL(NAME)                                                                         \
    OCAL_LB_TO_VAL(NAME)                                                                           \
    NAME##_A ocal_run = NAME##_ID;                                                                 \
    for (uint ocal_k = 0; ocal_k < NAME##_LB_IPT; ocal_k++) ocal_run = NAME##_op(ocal_run, OCAL_LB_ELEM(NAME, ocal_k)); \
    OCAL_LB_BLOCK_SCAN(NAME)                                                                       \
    const uint ocal_tag = ocal_epoch << 2;                                                         \
    if (OCAL_LB_NONE) {                                                                            \
      if (ocal_lid == 0) ocal_prefix_l = NAME##_ID;                                                \
    } else if (ocal_lid == 0) {                                                                    \
      if (ocal_packed) {                                                                           \
        ocal_lb_publish(ocal_c > 0 ? ocal_aggs + 4 * ocal_v : ocal_incls + 4 * ocal_v, ocal_pw,    \
                        ocal_tag | (ocal_c > 0 ? OCAL_LB_AGG : OCAL_LB_PREFIX), NAME##_BITS(ocal_total)); \
      } else if (ocal_c > 0) {                                                                     \
        ocal_lb_store(ocal_aggs + 2 * ocal_v, NAME##_BITS(ocal_total));                            \
        mem_fence(CLK_GLOBAL_MEM_FENCE);                                                           \
        atomic_xchg(ocal_flags + ocal_v, ocal_tag | OCAL_LB_AGG);                                  \
      } else {                                                                                     \
        ocal_lb_store(ocal_incls + 2 * ocal_v, NAME##_BITS(ocal_total));                           \
        mem_fence(CLK_GLOBAL_MEM_FENCE);                                                           \
        atomic_xchg(ocal_flags + ocal_v, ocal_tag | OCAL_LB_PREFIX);                               \
      }                                                                                            \
      if (ocal_c == 0) ocal_prefix_l = NAME##_ID;                                                  \
    }                                                                                              \
    if (!OCAL_LB_NONE && ocal_c > 0) {                                                             \
      /* The look-back in windows of W predecessors: work-item k reads the flag of tile            \
       * hi - k and, if it is published, its value (into tile[k]: the elements are in val[] \
       * now). The nearest PREFIX with every tile after it published ends the walk; a tile \
       * before it not yet published means the window is read again; a window of AGGs only \
       * slides back by W (tile 0 of the row publishes PREFIX, so the walk stops there). \
       * Packed, a tile's inclusive prefix and its total are two words read together (no \
       * fence, one round trip): the prefix if its flag is there, else the total. */              \
      const ulong ocal_first = ocal_v - ocal_c;                                                    \
      ulong ocal_hi = ocal_v - 1;                                                                  \
      const uint ocal_W = OCAL_LB_WINDOW_OF(ocal_L);                                               \
      uint ocal_kp, ocal_kz, ocal_rounds = 0, ocal_slot = 0, ocal_over = 0;                       \
      const uint ocal_slots = OCAL_LB_KEEP ? OCAL_LB_SLOTS_OF(OCAL_LB_WBUF_WORDS(NAME##_LB_IPT) / ocal_W) : 1; \
      __local NAME##_A *ocal_win = OCAL_LB_WBUF;                                                   \
      for (;;) {                                                                                   \
        if (ocal_lid == 0) ocal_lb_kp = ocal_lb_kz = ocal_W;                                       \
        barrier(CLK_LOCAL_MEM_FENCE);                                                              \
        if (ocal_lid < ocal_W && ocal_lid <= ocal_hi - ocal_first) {                               \
          const ulong ocal_q = ocal_hi - ocal_lid;                                                 \
          if (ocal_packed) {                                                                       \
            ulong ocal_bi, ocal_ba;                                                                \
            const int ocal_hp = ocal_lb_read(ocal_incls + 4 * ocal_q, ocal_pw, ocal_tag | OCAL_LB_PREFIX, &ocal_bi); \
            const int ocal_ha = ocal_lb_read(ocal_aggs + 4 * ocal_q, ocal_pw, ocal_tag | OCAL_LB_AGG, &ocal_ba); \
            if (ocal_hp) {                                                                         \
              ocal_win[ocal_lid] = NAME##_FROM_BITS(ocal_bi);                                      \
              atomic_min(&ocal_lb_kp, ocal_lid);                                                   \
            } else if (ocal_ha) {                                                                  \
              ocal_win[ocal_lid] = NAME##_FROM_BITS(ocal_ba);                                      \
            } else {                                                                               \
              atomic_min(&ocal_lb_kz, ocal_lid);                                                   \
            }                                                                                      \
          } else {                                                                                 \
            const uint ocal_f = ocal_lb_flag(ocal_flags + ocal_q);                                 \
            if ((ocal_f & ~3u) != ocal_tag) {                                                      \
              atomic_min(&ocal_lb_kz, ocal_lid);                                                   \
            } else {                                                                               \
              mem_fence(CLK_GLOBAL_MEM_FENCE);                                                     \
              const uint ocal_pre = (ocal_f & 3u) == OCAL_LB_PREFIX;                               \
              ocal_win[ocal_lid] = NAME##_FROM_BITS(ocal_lb_load((ocal_pre ? ocal_incls : ocal_aggs) + 2 * ocal_q)); \
              if (ocal_pre) atomic_min(&ocal_lb_kp, ocal_lid);                                     \
            }                                                                                      \
          }                                                                                        \
        }                                                                                          \
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);                                       \
        ocal_kp = ocal_lb_kp;                                                                      \
        ocal_kz = ocal_lb_kz;                                                                      \
        ocal_rounds++;                                                                             \
        barrier(CLK_LOCAL_MEM_FENCE);                                                              \
        if (ocal_kp < ocal_kz) break;   /* found, every tile after it published */                 \
        if (ocal_kz == ocal_W) { /* all AGG: slide back, keeping the window's values if there is room */ \
          ocal_hi -= ocal_W;                                                                       \
          if (ocal_slot + 1 < ocal_slots) ocal_win = OCAL_LB_WBUF + ++ocal_slot * ocal_W;          \
          else ocal_over = 1;                                                                      \
        }                                                                                          \
      }                                                                                            \
      if (ocal_over) {                                                                             \
        /* More windows slid past than were kept: the window holding the prefix is folded       \
         * first, then the published totals of the tiles after it are read again by the whole   \
         * group, a window buffer at a time (latest tile first, as the windows are kept), and   \
         * folded in increasing tile order by the first work-item (one work-item reading them   \
         * one by one cost 5x: docs/scan.md). */                                                 \
        if (ocal_lid == 0) {                                                                       \
          NAME##_A ocal_s = ocal_win[ocal_kp];                                                     \
          uint ocal_f = ocal_kp;                                                                   \
          OCAL_LB_FOLD_DOWN(NAME, ocal_s, ocal_win, ocal_f)                                        \
          ocal_prefix_l = ocal_s;                                                                  \
        }                                                                                          \
        const uint ocal_cw = ocal_slots * ocal_W;                                                  \
        for (ulong ocal_q0 = ocal_hi + 1; ocal_q0 < ocal_v; ocal_q0 += ocal_cw) {                  \
          barrier(CLK_LOCAL_MEM_FENCE);                                                            \
          const uint ocal_n = (uint)(ocal_v - ocal_q0 < ocal_cw ? ocal_v - ocal_q0 : ocal_cw);     \
          for (uint ocal_k = ocal_lid; ocal_k < ocal_n; ocal_k += ocal_L) {                        \
            ulong ocal_b;                                                                          \
            if (ocal_packed) /* seen published by another work-item: wait until this one sees it too */ \
              while (!ocal_lb_read(ocal_aggs + 4 * (ocal_q0 + ocal_k), ocal_pw, ocal_tag | OCAL_LB_AGG, &ocal_b)) \
                ;                                                                                  \
            else                                                                                   \
              ocal_b = ocal_lb_load(ocal_aggs + 2 * (ocal_q0 + ocal_k));                           \
            OCAL_LB_WBUF[ocal_n - 1 - ocal_k] = NAME##_FROM_BITS(ocal_b);                          \
          }                                                                                        \
          barrier(CLK_LOCAL_MEM_FENCE);                                                            \
          if (ocal_lid == 0) {                                                                     \
            NAME##_A ocal_s = ocal_prefix_l;                                                       \
            uint ocal_f = ocal_n;                                                                  \
            OCAL_LB_FOLD_DOWN(NAME, ocal_s, OCAL_LB_WBUF, ocal_f)                                  \
            ocal_prefix_l = ocal_s;                                                                \
          }                                                                                        \
        }                                                                                          \
        barrier(CLK_LOCAL_MEM_FENCE);                                                              \
      }                                                                                            \
      if (ocal_lid == 0) {                                                                         \
        /* The left fold from the inclusive prefix of tile hi - kp, in increasing tile             \
         * order, so a float result does not depend on which prefix was found: the windows        \
         * kept are one array, tile hi - kp at ocal_f and the tiles after it below it (the fold  \
         * over windows not kept is done above). */                                                \
        uint ocal_f = ocal_over ? 0 : ocal_slot * ocal_W + ocal_kp;                                \
        NAME##_A ocal_p = ocal_over ? ocal_prefix_l : OCAL_LB_WBUF[ocal_f];                        \
        OCAL_LB_FOLD_DOWN(NAME, ocal_p, OCAL_LB_WBUF, ocal_f)                                      \
        if (OCAL_LB_SPARSE && ocal_c % OCAL_LB_SPARSE != 0) {                                      \
          /* test only: no inclusive prefix here, so later look-backs walk further */              \
        } else if (ocal_packed) {                                                                  \
          ocal_lb_publish(ocal_incls + 4 * ocal_v, ocal_pw, ocal_tag | OCAL_LB_PREFIX, NAME##_BITS(NAME##_op(ocal_p, ocal_total))); \
        } else {                                                                                   \
          ocal_lb_store(ocal_incls + 2 * ocal_v, NAME##_BITS(NAME##_op(ocal_p, ocal_total)));      \
          mem_fence(CLK_GLOBAL_MEM_FENCE);                                                         \
          atomic_xchg(ocal_flags + ocal_v, ocal_tag | OCAL_LB_PREFIX);                             \
        }                                                                                          \
        ocal_prefix_l = ocal_p;                                                                    \
        if (OCAL_LB_STATS) {                                                                       \
          atomic_add(ocal_state + 1, (uint)(ocal_v - (ocal_hi - ocal_kp)));                        \
          atomic_add(ocal_state + 2, ocal_rounds);                                                 \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
    ocal_run = NAME##_op(ocal_prefix_l, ocal_excl);                                                \
    for (uint ocal_k = 0; ocal_k < NAME##_LB_IPT; ocal_k++) {                                      \
      NAME##_A ocal_next = NAME##_op(ocal_run, OCAL_LB_ELEM(NAME, ocal_k));                        \
      OCAL_LB_ELEM(NAME, ocal_k) = ocal_exclusive ? ocal_run : ocal_next;                          \
      ocal_run = ocal_next;                                                                        \
    }                                                                                              \
    OCAL_LB_FROM_VAL(NAME)                                                                         \
  }

/* ---- any inner ------------------------------------------------------------------------ */

#define OCAL_STRIDED_REDUCE(NAME)                                                                  \
  __kernel void NAME##_strided_reduce(OCAL_IN_PARAMS, const ulong ocal_outer,                      \
                                      const ulong ocal_R, const ulong ocal_inner, const ulong ocal_chunks, \
                                      const ulong ocal_clen, __global NAME##_A *ocal_P) {          \
    const ulong ocal_total = ocal_outer * ocal_chunks * ocal_inner;                                \
    for (ulong ocal_t = get_global_id(0); ocal_t < ocal_total; ocal_t += get_global_size(0)) {     \
      const ulong ocal_j = ocal_t % ocal_inner, ocal_q = ocal_t / ocal_inner, ocal_s = ocal_q % ocal_chunks, ocal_o = ocal_q / ocal_chunks; \
      const ulong ocal_r0 = ocal_s * ocal_clen, ocal_r1 = ocal_r0 + ocal_clen < ocal_R ? ocal_r0 + ocal_clen : ocal_R; \
      ulong ocal_p = (ocal_o * ocal_R + ocal_r0) * ocal_inner + ocal_j;                            \
      NAME##_A ocal_a = NAME##_ID;                                                                 \
      for (ulong ocal_r = ocal_r0; ocal_r < ocal_r1; ocal_r++, ocal_p += ocal_inner) ocal_a = NAME##_op(ocal_a, OCAL_LOAD(NAME, ocal_p)); \
      ocal_P[ocal_t] = ocal_a;                                                                     \
    }                                                                                              \
  }

#define OCAL_STRIDED_SCAN(KNAME, NAME, PARAMS, LOAD)                                               \
  __kernel void KNAME(PARAMS, __global NAME##_A *ocal_out,                                         \
                      const ulong ocal_ooff, const ulong ocal_outer, const ulong ocal_R, const ulong ocal_inner, \
                      const ulong ocal_chunks, const ulong ocal_clen, __global const NAME##_A *ocal_P, \
                      const int ocal_exclusive) {                                                  \
    const ulong ocal_total = ocal_outer * ocal_chunks * ocal_inner;                                \
    for (ulong ocal_t = get_global_id(0); ocal_t < ocal_total; ocal_t += get_global_size(0)) {     \
      const ulong ocal_j = ocal_t % ocal_inner, ocal_q = ocal_t / ocal_inner, ocal_s = ocal_q % ocal_chunks, ocal_o = ocal_q / ocal_chunks; \
      const ulong ocal_r0 = ocal_s * ocal_clen, ocal_r1 = ocal_r0 + ocal_clen < ocal_R ? ocal_r0 + ocal_clen : ocal_R; \
      const ulong ocal_base = (ocal_o * ocal_R + ocal_r0) * ocal_inner + ocal_j;                   \
      ulong ocal_p = ocal_base, ocal_w = ocal_ooff + ocal_base;                                    \
      NAME##_A ocal_run = ocal_chunks > 1 ? ocal_P[ocal_t] : NAME##_ID;                            \
      for (ulong ocal_r = ocal_r0; ocal_r < ocal_r1; ocal_r++, ocal_p += ocal_inner, ocal_w += ocal_inner) { \
        NAME##_A ocal_next = NAME##_op(ocal_run, LOAD(NAME, ocal_p));                              \
        ocal_out[ocal_w] = ocal_exclusive ? ocal_run : ocal_next;                                  \
        ocal_run = ocal_next;                                                                      \
      }                                                                                            \
    }                                                                                              \
  }

/* Only the kernel the host launches is compiled (-DOCAL_ONLY -DOCAL_ONLY_<operation>
 * -DOCAL_KERNEL -DOCAL_KERNEL_<kernel>): a first scan compiles one small program instead of
 * twelve kernels. Without OCAL_ONLY every kernel is built. */
#if defined(OCAL_KERNEL_contig_reduce) || !defined(OCAL_KERNEL)
#define OCAL_SCAN_K_contig_reduce(NAME) OCAL_CONTIG_REDUCE(NAME)
#else
#define OCAL_SCAN_K_contig_reduce(NAME)
#endif
#if defined(OCAL_KERNEL_tiles) || !defined(OCAL_KERNEL)
#define OCAL_SCAN_K_tiles(NAME) OCAL_CONTIG_TILES(NAME##_tiles, NAME, OCAL_IN_PARAMS, OCAL_LOAD)
#else
#define OCAL_SCAN_K_tiles(NAME)
#endif
#if defined(OCAL_KERNEL_tiles_acc) || !defined(OCAL_KERNEL)
#define OCAL_SCAN_K_tiles_acc(NAME) OCAL_CONTIG_TILES(NAME##_tiles_acc, NAME, OCAL_ACC_PARAMS(NAME), OCAL_ACC_LOAD)
#else
#define OCAL_SCAN_K_tiles_acc(NAME)
#endif
#if defined(OCAL_KERNEL_strided_reduce) || !defined(OCAL_KERNEL)
#define OCAL_SCAN_K_strided_reduce(NAME) OCAL_STRIDED_REDUCE(NAME)
#else
#define OCAL_SCAN_K_strided_reduce(NAME)
#endif
#if defined(OCAL_KERNEL_strided) || !defined(OCAL_KERNEL)
#define OCAL_SCAN_K_strided(NAME) OCAL_STRIDED_SCAN(NAME##_strided, NAME, OCAL_IN_PARAMS, OCAL_LOAD)
#else
#define OCAL_SCAN_K_strided(NAME)
#endif
#if defined(OCAL_KERNEL_lookback) || !defined(OCAL_KERNEL)
#define OCAL_SCAN_K_lookback(NAME) OCAL_CONTIG_LOOKBACK(NAME)
#else
#define OCAL_SCAN_K_lookback(NAME)
#endif
#if defined(OCAL_KERNEL_strided_acc) || !defined(OCAL_KERNEL)
#define OCAL_SCAN_K_strided_acc(NAME) OCAL_STRIDED_SCAN(NAME##_strided_acc, NAME, OCAL_ACC_PARAMS(NAME), OCAL_ACC_LOAD)
#else
#define OCAL_SCAN_K_strided_acc(NAME)
#endif
#define OCAL_SCAN_KERNELS(NAME)                                                                    \
  OCAL_SCAN_K_contig_reduce(NAME)                                                                  \
  OCAL_SCAN_K_tiles(NAME)                                                                          \
  OCAL_SCAN_K_tiles_acc(NAME)                                                                      \
  OCAL_SCAN_K_strided_reduce(NAME)                                                                 \
  OCAL_SCAN_K_strided(NAME)                                                                        \
  OCAL_SCAN_K_strided_acc(NAME)                                                                    \
  OCAL_SCAN_K_lookback(NAME)

#if defined(OCAL_ONLY_sum) || !defined(OCAL_ONLY)
OCAL_SCAN_KERNELS(sum)
#endif
#if defined(OCAL_ONLY_maximum) || !defined(OCAL_ONLY)
OCAL_SCAN_KERNELS(maximum)
#endif
/* A generated scan's operation (its prologue defines user_A, user_op, ...). */
#if defined(OCAL_ONLY_ocal_user)
OCAL_SCAN_KERNELS(ocal_user)
#endif
