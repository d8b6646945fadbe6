/* ocal — the two passes of the four-step FFT (src/fft/fourstep.c) for long 1-D
 * single-precision C2C transforms of N = N1 * N2 points, decimation in time:
 *
 *   n = N2 n1 + n2,  k = k1 + N1 k2,
 *   X[k1 + N1 k2] = sum_n2 W_N2^(n2 k2) * ( W_N^(n2 k1) * sum_n1 x[N2 n1 + n2] W_N1^(n1 k1) )
 *
 * Pass 1 (FS_L = N1): one work-group takes FS_C adjacent columns n2, does their N1-point FFTs
 * over n1 (stride N2: FS_C values in a row, one float2 / float4 / float8), multiplies by
 * W_N^(n2 k1) and writes the intermediate transposed, T'[n2][k1] (FS_TT 1: consecutive items
 * write consecutive addresses), row-major, T[k1][n2] (FS_TT 0: FS_C values in a row), or in
 * tiles (FS_TT 2, below).
 * Pass 2 (FS_L = N2): one work-group takes FS_C adjacent k1, reads their N2 values (at a stride
 * of N1 from T', contiguous rows from T, 128-byte tiles), does their N2-point FFTs and writes
 * X[k1 + N1 k2]:
 * FS_C values in a row per k2, scaled by `scale` (the plan's normalisation). The second
 * launch dimension is the transform within the launch (N points apart in every buffer).
 *
 * So each pass reads and writes the array once: two passes where VkFFT through OpenCL makes
 * three for N > 2^20 (its 48 KiB of local memory per work-group).
 *
 * Inside a work-group of FS_L / FS_R items each item holds FS_R points of every column, as
 * vectors whose FS_C lanes are the columns (the arithmetic is the same for all of them). The
 * FFT is a Stockham autosort of radix-FS_R stages (the last of a smaller radix when FS_R does
 * not divide log2 FS_L evenly), each a radix-2 FFT in registers, with the points exchanged
 * through local memory between stages, FS_CR columns at a time (as many as local memory
 * holds: 4 of 1024 points, 1 of 4096 in 48 KiB), or with FS_PLANE a column's real parts then
 * its imaginary parts (8192 points). Every private array index is a constant once the loops
 * are unrolled (checked in NVIDIA's PTX: no local-memory stack, no spills).
 *
 * With FS_2D the program does a 2-D transform of N1 rows of N2 points instead: pass 1 without
 * the twiddles (column FFTs, written transposed), pass 2 writing its FS_C rows of the output
 * contiguously, Y[k1][k2].
 *
 * Options: FS_LOGL (log2 of the FFT length, 6..13), FS_LOGR (log2 points per item, 2..4),
 * FS_C (1, 2, 4, 8, 16 columns), FS_CR, FS_PLANE, FS_TT, FS_C1 and FS_C2 (tiles), FS_2D,
 * FS_LD and FS_ST (cache hints). Both passes of one length live in one
 * program, and the direction is an argument (dir: -1 forward, 1 inverse), so a 4096 x 4096 plan
 * compiles one program. Twiddles come from tables the host computes in double (exact to float
 * rounding): per stage a table of W_(ns r)^k that consecutive items read at consecutive
 * addresses, its powers taken in registers (a few roundings); for pass 1's W_N^(n2 k1) two
 * table reads per column and item and powers of a per-group factor. (Scattered table reads of
 * every twiddle, as before, cost L1 bandwidth; sinpi/cospi per point cost as much as the
 * memory traffic on an H100.) */

#define FS_L (1 << FS_LOGL)
#define FS_R (1 << FS_LOGR)
#define FS_T (FS_L / FS_R)                /* work-items per group */
#define FS_NFULL (FS_LOGL / FS_LOGR)      /* stages of radix FS_R */
#define FS_LOGLAST (FS_LOGL % FS_LOGR)    /* log2 radix of a last, smaller stage (0: none) */
#define FS_NSTAGES (FS_NFULL + (FS_LOGLAST > 0))

#if FS_C == 1
typedef float vt;
#elif FS_C == 2
typedef float2 vt;
#elif FS_C == 4
typedef float4 vt;
#elif FS_C == 8
typedef float8 vt;
#elif FS_C == 16
typedef float16 vt;
#else
#error "FS_C must be 1, 2, 4, 8 or 16"
#endif

typedef struct {
  vt re, im;
} cx;

static inline float lane(vt x, int c) {
#if FS_C == 1
  return x;
#elif FS_C == 2
  return c ? x.s1 : x.s0;
#elif FS_C == 4
  return c == 0 ? x.s0 : c == 1 ? x.s1 : c == 2 ? x.s2 : x.s3;
#elif FS_C == 8
  return c == 0 ? x.s0 : c == 1 ? x.s1 : c == 2 ? x.s2 : c == 3 ? x.s3
       : c == 4 ? x.s4 : c == 5 ? x.s5 : c == 6 ? x.s6 : x.s7;
#else
  return c == 0 ? x.s0 : c == 1 ? x.s1 : c == 2 ? x.s2 : c == 3 ? x.s3
       : c == 4 ? x.s4 : c == 5 ? x.s5 : c == 6 ? x.s6 : c == 7 ? x.s7
       : c == 8 ? x.s8 : c == 9 ? x.s9 : c == 10 ? x.sa : c == 11 ? x.sb
       : c == 12 ? x.sc : c == 13 ? x.sd : c == 14 ? x.se : x.sf;
#endif
}

static inline vt set_lane(vt x, int c, float v) {
#if FS_C == 1
  return v;
#elif FS_C == 2
  if (c) x.s1 = v; else x.s0 = v;
  return x;
#else
  if (c == 0) x.s0 = v;
  else if (c == 1) x.s1 = v;
  else if (c == 2) x.s2 = v;
  else if (c == 3) x.s3 = v;
#if FS_C == 8
  else if (c == 4) x.s4 = v;
  else if (c == 5) x.s5 = v;
  else if (c == 6) x.s6 = v;
  else x.s7 = v;
#elif FS_C == 16
  else if (c == 4) x.s4 = v;
  else if (c == 5) x.s5 = v;
  else if (c == 6) x.s6 = v;
  else if (c == 7) x.s7 = v;
  else if (c == 8) x.s8 = v;
  else if (c == 9) x.s9 = v;
  else if (c == 10) x.sa = v;
  else if (c == 11) x.sb = v;
  else if (c == 12) x.sc = v;
  else if (c == 13) x.sd = v;
  else if (c == 14) x.se = v;
  else x.sf = v;
#endif
  return x;
#endif
}

/* Global loads and stores of one complex value. FS_LD 1: ld.global.cs (streamed: read once,
 * evicted first), 2 and 3: an L2 prefetch of 128 or 256 bytes around each load (the
 * neighbouring groups read the rest of those bytes); FS_ST 1: st.global.cs. NVIDIA PTX only:
 * the host asks for them where the device reports a PTX compute capability, plain accesses
 * otherwise. */
#ifndef FS_LD
#define FS_LD 0
#endif
#ifndef FS_ST
#define FS_ST 0
#endif
#include "ptx_load.cl"
#if FS_LD
#if FS_LD == 1
#define FS_LDQ "cs"
#elif FS_LD == 2
#define FS_LDQ "L2::128B"
#else
#define FS_LDQ "L2::256B"
#endif
OCAL_PTX_LOAD_V2F32(ldg, "." FS_LDQ)
#else
#define ldg(p) (*(p))
#endif
#if FS_ST
static inline void stg(__global float2 *p, float2 v) {
  __asm__ volatile("st.global.cs.v2.f32 [%0], {%1, %2};" ::"l"(p), "f"(v.x), "f"(v.y) : "memory");
}
#else
#define stg(p, v) (*(p) = (v))
#endif

static inline cx cx_add(cx a, cx b) {
  cx r;
  r.re = a.re + b.re;
  r.im = a.im + b.im;
  return r;
}

static inline cx cx_sub(cx a, cx b) {
  cx r;
  r.re = a.re - b.re;
  r.im = a.im - b.im;
  return r;
}

/* a times (wr + i wi), the same twiddle for every column */
static inline cx cx_mul1(cx a, float wr, float wi) {
  cx r;
  r.re = a.re * wr - a.im * wi;
  r.im = a.re * wi + a.im * wr;
  return r;
}

/* a times one twiddle per column */
static inline cx cx_mulv(cx a, vt wr, vt wi) {
  cx r;
  r.re = a.re * wr - a.im * wi;
  r.im = a.re * wi + a.im * wr;
  return r;
}

/* cos and sin of 2 pi k / 16, for the radix-2 steps in registers */
__constant float c16[16] = {1.0f, 0.92387953251128674f, 0.70710678118654752f,
                            0.38268343236508977f, 0.0f, -0.38268343236508977f,
                            -0.70710678118654752f, -0.92387953251128674f, -1.0f,
                            -0.92387953251128674f, -0.70710678118654752f,
                            -0.38268343236508977f, 0.0f, 0.38268343236508977f,
                            0.70710678118654752f, 0.92387953251128674f};

/* a times W_16^i (dir: -1 forward, 1 inverse); i is a constant once the loops are unrolled, so the trivial
 * ones cost nothing */
static inline cx tw16(cx a, int i, const float dir) {
  if (i == 0) return a;
  cx r;
  if (i == 4) { /* (0, dir) */
    r.re = -dir * a.im;
    r.im = dir * a.re;
    return r;
  }
  return cx_mul1(a, c16[i], dir * c16[(i + 12) & 15]);
}

/* In-register FFT of 2^logr points a[0 .. 2^logr - 1] (logr <= 4), natural order in and out:
 * radix-2 Stockham steps. */
static inline void fft_reg(cx *a, const int logr, const float dir) {
  const int r = 1 << logr;
  cx b[16];
#pragma unroll
  for (int s = 0; s < logr; s++) {
    const int ns = 1 << s;
#pragma unroll
    for (int j = 0; j < r / 2; j++) {
      const int k = j & (ns - 1);
      cx x0 = a[j], x1 = tw16(a[j + r / 2], k * (8 >> s), dir);
      const int o = ((j >> s) << (s + 1)) + k;
      b[o] = cx_add(x0, x1);
      b[o + ns] = cx_sub(x0, x1);
    }
#pragma unroll
    for (int j = 0; j < r; j++) a[j] = b[j];
  }
}

#define PAD(i) ((i) + ((i) >> 4)) /* spreads strided local-memory accesses over the banks */
#define FS_LDS (PAD(FS_L - 1) + 1)  /* local-memory entries of one column */
#ifndef FS_CR
#define FS_CR 1 /* columns exchanged at once (as many as local memory holds) */
#endif
#ifndef FS_PLANE
#define FS_PLANE 0 /* 1: exchange real and imaginary parts in separate rounds (one column) */
#endif
#if FS_PLANE
typedef float lt;
#if FS_CR != 1
#error "FS_PLANE needs FS_CR 1"
#endif
#else
typedef float2 lt;
#endif
#ifndef FS_TT
#define FS_TT 1 /* 1: pass 1 writes T transposed, T'[n2][k1] (contiguous); 0: T[k1][n2]; 2: tiles */
#endif
/* FS_TT 2: the intermediate in tiles of FS_C1 x FS_C2 values, FS_C1 and FS_C2 the columns a
 * group of pass 1 and of pass 2 take: column n2 = b FS_C1 + c1, k1 = h FS_C2 + j lies at
 * b N1 FS_C1 + h FS_C1 FS_C2 + c1 FS_C2 + j. Pass 1 writes, for each of its columns, FS_C2
 * consecutive k1 (32 bytes for 4) a piece, the whole group's output in one run; pass 2 reads
 * its FS_C2 values of FS_C1 rows n2 as one piece (128 bytes for 4 x 4). With T' (FS_TT 1) pass
 * 2 reads FS_C2 values (32 bytes) a row, at a stride of N1. */
#ifndef FS_C1
#define FS_C1 FS_C
#endif
#ifndef FS_C2
#define FS_C2 FS_C
#endif
#if FS_C % FS_CR
#error "FS_CR must divide FS_C"
#endif
#if FS_PLANE && FS_C > 8
#error "FS_PLANE takes at most 8 columns"
#endif

/* One column (rd) through local memory in two rounds, its real parts (part 0) then its imaginary
 * parts (part 1), for lengths whose complex column does not fit in local memory. */
static inline void exchange_plane(cx *v, const int t, __local float *lds, const int st,
                                  const int rd, const int part) {
  const int logr = st < FS_NFULL ? FS_LOGR : FS_LOGLAST;
  const int r = 1 << logr, nq = FS_R / r, logns = st * FS_LOGR, ns = 1 << logns;
  const int logr2 = st + 1 < FS_NFULL ? FS_LOGR : FS_LOGLAST;
  const int r2 = 1 << logr2;
  if (st > 0 || rd > 0 || part > 0) barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
  for (int q = 0; q < nq; q++) {
    const int j = t + q * FS_T, k = j & (ns - 1);
    const int base = ((j >> logns) << (logns + logr)) + k;
#pragma unroll
    for (int m = 0; m < r; m++)
      lds[PAD(base + m * ns)] = lane(part ? v[q * r + m].im : v[q * r + m].re, rd);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
  for (int q = 0; q < FS_R / r2; q++) {
#pragma unroll
    for (int m = 0; m < r2; m++) {
      const float y = lds[PAD(t + q * FS_T + m * (FS_L / r2))];
      if (part)
        v[q * r2 + m].im = set_lane(v[q * r2 + m].im, rd, y);
      else
        v[q * r2 + m].re = set_lane(v[q * r2 + m].re, rd, y);
    }
  }
}

/* Offset of stage st's twiddle table (st >= 1) in the stage tables: R + R^2 + ... + R^(st-1)
 * entries come before it (the table of stage s holds W_(ns r)^k for k < ns = R^s). */
#define FS_TOFF(st) (((1 << ((st) * FS_LOGR)) - FS_R) / (FS_R - 1))

/* p[m] = w^m for 0 < m < r, each a product of two earlier ones, at most 5 roundings deep
 * (w^2 = w w, w^3 = w^2 w, w^4 = w^2 w^2, w^(4a) = w^(4a-4) w^4, w^(4a+b) = w^(4a) w^b), all
 * in registers: m is a constant once unrolled. */
static inline void powers(float *pr, float *pi, const float wr, const float wi, const int r) {
  pr[1] = wr;
  pi[1] = wi;
#pragma unroll
  for (int m = 2; m < r; m++) {
    const int a = m < 4 ? m - 1 : m == 4 ? 2 : (m & 3) == 0 ? m - 4 : m & ~3;
    const int b = m - a;
    pr[m] = pr[a] * pr[b] - pi[a] * pi[b];
    pi[m] = pr[a] * pi[b] + pi[a] * pr[b];
  }
}

/* One round of the exchange after stage st: columns rd FS_CR .. rd FS_CR + FS_CR - 1 (rd a
 * literal, like st, so the lanes picked are constants) go through local memory, each in its
 * own FS_LDS-entry part; the barrier before the writes waits for the previous round's (or
 * stage's) reads. */
#if !FS_PLANE
static inline void exchange_round(cx *v, const int t, __local lt *lds, const int st,
                                  const int rd) {
  const int logr = st < FS_NFULL ? FS_LOGR : FS_LOGLAST;
  const int r = 1 << logr, nq = FS_R / r, logns = st * FS_LOGR, ns = 1 << logns;
  const int logr2 = st + 1 < FS_NFULL ? FS_LOGR : FS_LOGLAST;
  const int r2 = 1 << logr2;
  if (st > 0 || rd > 0) barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
  for (int cc = 0; cc < FS_CR; cc++) {
    const int c = rd * FS_CR + cc;
#pragma unroll
    for (int q = 0; q < nq; q++) {
      const int j = t + q * FS_T, k = j & (ns - 1);
      const int base = ((j >> logns) << (logns + logr)) + k;
#pragma unroll
      for (int m = 0; m < r; m++) {
        const int i = base + m * ns;
        lds[cc * FS_LDS + PAD(i)] = (float2)(lane(v[q * r + m].re, c), lane(v[q * r + m].im, c));
      }
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
  for (int cc = 0; cc < FS_CR; cc++) {
    const int c = rd * FS_CR + cc;
#pragma unroll
    for (int q = 0; q < FS_R / r2; q++) {
#pragma unroll
      for (int m = 0; m < r2; m++) {
        const int i = t + q * FS_T + m * (FS_L / r2);
        float2 y = lds[cc * FS_LDS + PAD(i)];
        v[q * r2 + m].re = set_lane(v[q * r2 + m].re, c, y.x);
        v[q * r2 + m].im = set_lane(v[q * r2 + m].im, c, y.y);
      }
    }
  }
}
#endif

/* One Stockham stage `st` (a literal at each call, so every index below is a constant once
 * the small loops are unrolled). In: v[q r + m] is element j + m FS_L / r, j = t + q FS_T.
 * Butterfly j multiplies its inputs by W_(ns r)^(k m) (k = j mod ns: one load from the stage's
 * table, which consecutive items read at consecutive addresses, and its powers in registers),
 * does its radix-r FFT in registers and, unless it is the last stage, sends output m to
 * element (j / ns) ns r + k + m ns through local memory, from where the next stage reads its
 * inputs; one column at a time. */
static inline void fs_stage(cx *v, const int t, __local lt *lds, __global const float2 *tw,
                            const float dir, const int st) {
  const int logr = st < FS_NFULL ? FS_LOGR : FS_LOGLAST;
  const int r = 1 << logr, nq = FS_R / r, logns = st * FS_LOGR, ns = 1 << logns;
#pragma unroll
  for (int q = 0; q < nq; q++) {
    const int j = t + q * FS_T, k = j & (ns - 1);
    if (st > 0) {
      const float2 w = tw[FS_TOFF(st) + k];
      float pr[16], pi[16];
      powers(pr, pi, w.x, dir * w.y, r);
#pragma unroll
      for (int m = 1; m < r; m++) v[q * r + m] = cx_mul1(v[q * r + m], pr[m], pi[m]);
    }
    fft_reg(v + q * r, logr, dir);
  }
  if (st + 1 < FS_NSTAGES) {
#if FS_PLANE
    exchange_plane(v, t, lds, st, 0, 0);
    exchange_plane(v, t, lds, st, 0, 1);
#if FS_C > 1
    exchange_plane(v, t, lds, st, 1, 0);
    exchange_plane(v, t, lds, st, 1, 1);
#endif
#if FS_C > 2
    exchange_plane(v, t, lds, st, 2, 0);
    exchange_plane(v, t, lds, st, 2, 1);
    exchange_plane(v, t, lds, st, 3, 0);
    exchange_plane(v, t, lds, st, 3, 1);
#endif
#if FS_C > 4
    exchange_plane(v, t, lds, st, 4, 0);
    exchange_plane(v, t, lds, st, 4, 1);
    exchange_plane(v, t, lds, st, 5, 0);
    exchange_plane(v, t, lds, st, 5, 1);
    exchange_plane(v, t, lds, st, 6, 0);
    exchange_plane(v, t, lds, st, 6, 1);
    exchange_plane(v, t, lds, st, 7, 0);
    exchange_plane(v, t, lds, st, 7, 1);
#endif
#else
    exchange_round(v, t, lds, st, 0);
#if FS_C / FS_CR > 1
    exchange_round(v, t, lds, st, 1);
#endif
#if FS_C / FS_CR > 2
    exchange_round(v, t, lds, st, 2);
    exchange_round(v, t, lds, st, 3);
#endif
#if FS_C / FS_CR > 4
    exchange_round(v, t, lds, st, 4);
    exchange_round(v, t, lds, st, 5);
    exchange_round(v, t, lds, st, 6);
    exchange_round(v, t, lds, st, 7);
#endif
#if FS_C / FS_CR > 8
    exchange_round(v, t, lds, st, 8);
    exchange_round(v, t, lds, st, 9);
    exchange_round(v, t, lds, st, 10);
    exchange_round(v, t, lds, st, 11);
    exchange_round(v, t, lds, st, 12);
    exchange_round(v, t, lds, st, 13);
    exchange_round(v, t, lds, st, 14);
    exchange_round(v, t, lds, st, 15);
#endif
#endif
  }
}

/* The whole FFT of the group's FS_C columns, stage by stage (at most 6: 2^12 in radix 4).
 * In: v[m] is element t + m FS_T. Out: v[q r + m] is element t + q FS_T + m FS_L / r, r the
 * last stage's radix. */
static inline void fft_group(cx *v, const int t, __local lt *lds, __global const float2 *tw,
                             const float dir) {
  fs_stage(v, t, lds, tw, dir, 0);
#if FS_NSTAGES > 1
  fs_stage(v, t, lds, tw, dir, 1);
#endif
#if FS_NSTAGES > 2
  fs_stage(v, t, lds, tw, dir, 2);
#endif
#if FS_NSTAGES > 3
  fs_stage(v, t, lds, tw, dir, 3);
#endif
#if FS_NSTAGES > 4
  fs_stage(v, t, lds, tw, dir, 4);
#endif
#if FS_NSTAGES > 5
  fs_stage(v, t, lds, tw, dir, 5);
#endif
#if FS_NSTAGES > 6
#error "more than 6 stages"
#endif
}

#define FS_LOGLASTR (FS_LOGLAST > 0 ? FS_LOGLAST : FS_LOGR)
#define FS_LASTR (1 << FS_LOGLASTR)

/* Global memory is read and written through local memory ("staging"), FS_SR rounds of FS_RB
 * rows each, so that consecutive items touch consecutive columns of a row: each warp-wide access
 * then covers whole 32-byte pieces of a few rows. An item reading or writing all FS_C columns of
 * its own rows as one vector splits every piece over two 16-byte instructions, and that ran the
 * same memory pattern twice as slowly on an H100 (docs/measurements.md#fourstep-access). */
#ifndef FS_SR
#define FS_SR 1
#endif
#define FS_RB (FS_L / FS_SR)  /* rows per staging round */
#define FS_RI (FS_RB / FS_T)  /* an item's rows per staging round */
#define FS_SS (FS_RB + 8)     /* entries per column (the 8 spreads a warp's accesses over banks) */
#define FS_STN (FS_C * FS_SS) /* staging entries */
#if FS_PLANE
#define FS_LDS2 ((FS_LDS + 1) / 2)
#else
#define FS_LDS2 (FS_CR * FS_LDS)
#endif
#define FS_LDSN (FS_LDS2 > FS_STN ? FS_LDS2 : FS_STN) /* float2 entries of local memory */
#if FS_RB % FS_T
#error "FS_SR must divide FS_R"
#endif

/* Where element e of a staging round (FS_RB rows of FS_C columns) lies: row e / FS_C, column
 * e % FS_C, at row * stride + column; or, reading pass 1's tiles (FS_TT 2: stride is a
 * tile row's N1 FS_C1), row b FS_C1 + c1 and column j for e = (b FS_C1 + c1) FS_C + j, at
 * b stride + c1 FS_C + j, so that consecutive items read a tile's consecutive values. */
static inline ulong e_at(const uint row, const uint col, const ulong stride, const int tiles) {
  return tiles ? (ulong)(row / FS_C1) * stride + row % FS_C1 * FS_C + col
               : (ulong)row * stride + col;
}

/* v[i] = row t + FS_T i of the group's FS_C columns, read from s (column 0 of row 0) at a row
 * stride of `stride` complex values (tiles: e_at). The next round's reads are issued before
 * this round's wait, so that they are in flight meanwhile. */
static inline void stage_load(cx *v, const int t, __local float2 *st,
                              __global const float2 *s, const ulong stride, const int tiles) {
  float2 g[FS_C * FS_RI], gn[FS_C * FS_RI];
#pragma unroll
  for (int j = 0; j < FS_C * FS_RI; j++) {
    const uint e = (uint)t + FS_T * (uint)j; /* row e / FS_C, column e % FS_C of the round */
    g[j] = ldg(s + e_at(e / FS_C, e % FS_C, stride, tiles));
  }
#pragma unroll
  for (int r = 0; r < FS_SR; r++) {
    if (r + 1 < FS_SR) {
#pragma unroll
      for (int j = 0; j < FS_C * FS_RI; j++) {
        const uint e = (uint)t + FS_T * (uint)j;
        gn[j] = ldg(s + e_at((r + 1) * FS_RB + e / FS_C, e % FS_C, stride, tiles));
      }
    }
    if (r > 0) barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int j = 0; j < FS_C * FS_RI; j++) {
      const uint e = (uint)t + FS_T * (uint)j;
      st[(e % FS_C) * FS_SS + e / FS_C] = g[j];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int i = 0; i < FS_RI; i++) {
#pragma unroll
      for (int c = 0; c < FS_C; c++) {
        const float2 y = st[c * FS_SS + t + i * FS_T];
        v[r * FS_RI + i].re = set_lane(v[r * FS_RI + i].re, c, y.x);
        v[r * FS_RI + i].im = set_lane(v[r * FS_RI + i].im, c, y.y);
      }
    }
#pragma unroll
    for (int j = 0; j < FS_C * FS_RI; j++) g[j] = gn[j];
  }
  barrier(CLK_LOCAL_MEM_FENCE); /* the FFT's first exchange reuses the memory */
}

/* The FFT's output, row t + FS_T i in v[q FS_LASTR + m] (i = q + m FS_R / FS_LASTR), times
 * scale, to d (column 0 of row 0) at a row stride of `stride` complex values. */
static inline void stage_store(const cx *v, const int t, __local float2 *st, __global float2 *d,
                               const ulong stride, const float scale) {
#pragma unroll
  for (int r = 0; r < FS_SR; r++) {
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int i = r * FS_RI; i < (r + 1) * FS_RI; i++) {
      const cx y = v[(i % (FS_R / FS_LASTR)) * FS_LASTR + i / (FS_R / FS_LASTR)];
#pragma unroll
      for (int c = 0; c < FS_C; c++)
        st[c * FS_SS + t + (i - r * FS_RI) * FS_T] =
            (float2)(lane(y.re, c), lane(y.im, c)) * scale;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int j = 0; j < FS_C * FS_RI; j++) {
      const uint e = (uint)t + FS_T * (uint)j;
      stg(d + (ulong)(r * FS_RB + e / FS_C) * stride + e % FS_C, st[(e % FS_C) * FS_SS + e / FS_C]);
    }
  }
}

/* The FFT's output, element k = t + FS_T i in v[q FS_LASTR + m] (i = q + m FS_R / FS_LASTR)
 * of column c, times scale: to d[c FS_L + k], each column's points contiguous, or (tiles, pass
 * 1 of FS_TT 2) to d[k / FS_C2 (FS_C FS_C2) + c FS_C2 + k % FS_C2]; consecutive items at
 * consecutive addresses either way. */
static inline void store_columns(const cx *v, const int t, __global float2 *d, const float scale,
                                 const int tiles) {
#pragma unroll
  for (int i = 0; i < FS_R; i++) {
    const int q = i % (FS_R / FS_LASTR), m = i / (FS_R / FS_LASTR);
    const uint k = (uint)(t + i * FS_T);
#pragma unroll
    for (int c = 0; c < FS_C; c++)
      stg(d + (tiles ? k / FS_C2 * (FS_C * FS_C2) + (uint)c * FS_C2 + k % FS_C2
                     : (uint)c * FS_L + k),
          (float2)(lane(v[q * FS_LASTR + m].re, c), lane(v[q * FS_LASTR + m].im, c)) * scale);
  }
}

#ifndef FS_2D
#define FS_2D 0 /* 1: a 2-D transform (no twiddles between the passes, pass 2 writes rows) */
#endif
#if FS_2D && FS_TT != 1
#error "FS_2D needs FS_TT 1"
#endif

/* Pass 1. src, dst: offsets in complex elements (multiples of FS_C); n2: the row length N2
 * (a multiple of FS_C); tw: the plan's twiddle tables (src/fft/fourstep.c), the stage tables
 * of length N1 at o_stage, W_N^l (l < N1) at o_lo, W_N2^h = W_N^(h N1) at o_hi, each (cos,
 * sin) of the positive angle. One group per FS_C columns. */
__kernel __attribute__((reqd_work_group_size(FS_T, 1, 1))) void ocal_fft_fourstep_pass1(
    __global const float *src, const ulong src_off, __global float *dst, const ulong dst_off,
    const uint n2, const float dir, __global const float2 *tw, const uint o_stage,
    const uint o_lo, const uint o_hi) {
  __local float2 lds[FS_LDSN];
  const int t = (int)get_local_id(0);
  const uint c0 = (uint)get_group_id(0) * FS_C;
  const ulong bo = (ulong)get_group_id(1) * FS_L * n2; /* transform of the launch */
  cx v[FS_R];
  stage_load(v, t, lds, (__global const float2 *)(src + 2 * (src_off + bo)) + c0, n2, 0);
  fft_group(v, t, (__local lt *)lds, tw + o_stage, dir);
#if !FS_2D
  /* W_N^(n2 k1) for k1 = t + FS_T i (i = q + m FS_R / FS_LASTR < FS_R) is
   * W_N^(n2 t) (W_N^(n2 FS_T))^i: two scattered table reads per column and item, the second
   * factor's base the same for the whole group, its powers in registers (a table entry is
   * W_N^e = W_N^(e mod N1) W_N2^(e / N1), with n2 k1 < N exactly in integers). */
  __global const float2 *lo = tw + o_lo, *hi = tw + o_hi;
  cx base, s1;
  base.re = base.im = s1.re = s1.im = (vt)0.0f;
#pragma unroll
  for (int c = 0; c < FS_C; c++) {
    const uint n2c = c0 + (uint)c, e = n2c * (uint)t, eT = n2c * (uint)FS_T;
    float2 a = lo[e & (FS_L - 1)], b = hi[e >> FS_LOGL];
    base.re = set_lane(base.re, c, a.x * b.x - a.y * b.y);
    base.im = set_lane(base.im, c, dir * (a.x * b.y + a.y * b.x));
    a = lo[eT & (FS_L - 1)];
    b = hi[eT >> FS_LOGL];
    s1.re = set_lane(s1.re, c, a.x * b.x - a.y * b.y);
    s1.im = set_lane(s1.im, c, dir * (a.x * b.y + a.y * b.x));
  }
  /* s^b for b < 4 and the running s^(4a), so twiddle i = base s^(4a) s^b, few roundings */
  cx sp[4], blk = base;
  sp[1] = s1;
  sp[2] = cx_mulv(s1, s1.re, s1.im);
  sp[3] = cx_mulv(sp[2], s1.re, s1.im);
  const cx s4 = cx_mulv(sp[2], sp[2].re, sp[2].im);
#pragma unroll
  for (int i = 0; i < FS_R; i++) {
    const int q = i % (FS_R / FS_LASTR), m = i / (FS_R / FS_LASTR);
    if (i > 0 && (i & 3) == 0) blk = cx_mulv(blk, s4.re, s4.im);
    const cx w = (i & 3) ? cx_mulv(blk, sp[i & 3].re, sp[i & 3].im) : blk;
    v[q * FS_LASTR + m] = cx_mulv(v[q * FS_LASTR + m], w.re, w.im);
  }
#endif
#if FS_TT
  /* T'[n2][k1], or its tiles: consecutive items write consecutive addresses */
  store_columns(v, t, (__global float2 *)(dst + 2 * (dst_off + bo)) + (size_t)c0 * FS_L, 1.0f,
                FS_TT == 2);
#else
  /* T[k1][n2]: FS_C values in a row */
  stage_store(v, t, lds, (__global float2 *)(dst + 2 * (dst_off + bo)) + c0, n2, 1.0f);
#endif
}

/* Pass 2. src: T, rows of FS_L points; dst: X, k1 + n1 k2; offsets in complex elements; tw +
 * o_stage: the stage tables of length N2. One group per FS_C rows. */
__kernel __attribute__((reqd_work_group_size(FS_T, 1, 1))) void ocal_fft_fourstep_pass2(
    __global const float *src, const ulong src_off, __global float *dst, const ulong dst_off,
    const uint n1, const float dir, __global const float2 *tw, const uint o_stage,
    const float scale) {
  __local float2 lds[FS_LDSN];
  const int t = (int)get_local_id(0);
  const uint r0 = (uint)get_group_id(0) * FS_C;
  const ulong bo = (ulong)get_group_id(1) * FS_L * n1; /* transform of the launch */
  cx v[FS_R];
#if FS_TT == 2
  /* tiles: this group's k1 are tile column r0 / FS_C2 (FS_C2 = FS_C here) of every row of tiles */
  stage_load(v, t, lds, (__global const float2 *)(src + 2 * (src_off + bo)) + (size_t)r0 * FS_C1,
             (ulong)n1 * FS_C1, 1);
#elif FS_TT
  /* T'[n2][k1]: FS_C values in a row at a stride of N1 */
  stage_load(v, t, lds, (__global const float2 *)(src + 2 * (src_off + bo)) + r0, n1, 0);
#else
  __global const float2 *s = (__global const float2 *)(src + 2 * (src_off + bo)) + (size_t)r0 * FS_L;
#pragma unroll
  for (int c = 0; c < FS_C; c++) {
#pragma unroll
    for (int m = 0; m < FS_R; m++) {
      float2 y = ldg(s + c * FS_L + t + m * FS_T);
      v[m].re = set_lane(v[m].re, c, y.x);
      v[m].im = set_lane(v[m].im, c, y.y);
    }
  }
#endif
  fft_group(v, t, (__local lt *)lds, tw + o_stage, dir);
#if FS_2D
  /* Y[k1][k2]: the group's rows k1 of the 2-D output, contiguous */
  store_columns(v, t, (__global float2 *)(dst + 2 * (dst_off + bo)) + (size_t)r0 * FS_L, scale,
                0);
#else
  stage_store(v, t, lds, (__global float2 *)(dst + 2 * (dst_off + bo)) + r0, n1, scale);
#endif
}
