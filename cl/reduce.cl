/* ocal — reductions: sum, prod, min, max, argmin, argmax, sum of squares (L2 norm), dot and
 * variance, over a whole buffer or along one axis.
 *
 * Built per input element type with -DT=<OpenCL C type> -DOCAL_DTYPE_<name>, and per kernel:
 * -DOCAL_ONLY -DOCAL_ONLY_<NAME> -DOCAL_KERNEL -DOCAL_KERNEL_<kind> keep one of the fifty
 * kernels below (the end of the file says why). Integer inputs
 * get -DOCAL_ACC_FP64 when the device has doubles: their means, variances and norms are then
 * computed and can be stored in double precision.
 *
 * The host (src/ops/reduce.c) views the input as a row-major (outer, R, inner) block and
 * reduces along R. Each operation NAME defines a state type NAME_st and
 *   NAME_init()                 the identity,
 *   NAME_add1/add4/addv         fold in 1, 4 or VW consecutive elements (indices i, i+1, ...),
 *   NAME_merge(&a, b)           combine two states (associative; ties resolved by index),
 *   NAME_final(dst, i, ...)     write the finished result to the output buffer,
 * and REDUCE_ALL_KERNELS(NAME) instantiates five kernels from them:
 *   NAME_contig         inner == 1: one work-group (or `chunks` groups) per row, vector loads
 *                       (clen != 0 asks for a contiguous range per work-item: CPUs);
 *   NAME_strided        any inner: one work-item per (row, chunk of R, column); coalesced
 *                       across columns;
 *   NAME_strided_v      the same with VW neighbouring columns per work-item (vector loads);
 *   NAME_merge_strided  second pass: one work-item per output merges its chunks' states;
 *   NAME_merge_group    second pass: one work-group per output (few outputs, many chunks).
 * A first pass with chunks > 1 writes states to a scratch buffer; with chunks == 1 it writes
 * the results directly, so a small reduction is one launch.
 *
 * Float sums (sum, mean, dot, norm) are compensated (Neumaier) in every work-item and in
 * every merge, in NL independent lanes so that CPUs vectorise them: their error does not
 * grow with the length of the reduction. */
#if defined(OCAL_NEED_FP64) || defined(OCAL_ACC_FP64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define HAVE_DOUBLE 1
#endif
/* x*y must be rounded before it enters a compensated sum. */
#pragma OPENCL FP_CONTRACT OFF

#ifndef OCAL_WG_MAX
#define OCAL_WG_MAX 256
#endif

/* Output kinds: the values of enum ocal_dtype (include/ocal/types.h). */
#define KIND_F32 0
#define KIND_F64 1

#define NONE_INDEX ((ulong)0xffffffffffffffffUL)
#define KIND_F16 9
#define KIND_BF16 10

/* f32 to bfloat16, round to nearest even; a NaN stays a quiet NaN. */
ushort ocal_bf16_round(float f) {
  uint u = as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);
  return (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/* ---- the element type -------------------------------------------------------------- */
#if defined(OCAL_DTYPE_f32)
#define IS_FLOAT 1
#define VW 4
typedef float4 TV;
#define T_MAX INFINITY
#define T_LOWEST (-INFINITY)
#elif defined(OCAL_DTYPE_f64)
#define IS_FLOAT 1
#define VW 2
typedef double2 TV;
#define T_MAX ((double)INFINITY)
#define T_LOWEST ((double)-INFINITY)
#elif defined(OCAL_DTYPE_i32)
#define IS_SIGNED 1
#define VW 4
typedef int4 TV;
#define T_MAX INT_MAX
#define T_LOWEST INT_MIN
#elif defined(OCAL_DTYPE_u32)
#define VW 4
typedef uint4 TV;
#define T_MAX UINT_MAX
#define T_LOWEST 0u
#elif defined(OCAL_DTYPE_i64)
#define IS_SIGNED 1
#define VW 2
typedef long2 TV;
#define T_MAX LONG_MAX
#define T_LOWEST LONG_MIN
#elif defined(OCAL_DTYPE_u64)
#define VW 2
typedef ulong2 TV;
#define T_MAX ULONG_MAX
#define T_LOWEST 0ul
#elif defined(OCAL_DTYPE_u8)
#define VW 16
typedef uchar16 TV;
#define T_MAX ((uchar)255)
#define T_LOWEST ((uchar)0)
#elif defined(OCAL_DTYPE_f16) || defined(OCAL_DTYPE_bf16)
/* f16 and bf16: 16-bit storage (TS; vectors of VW in TVS), values and sums in f32; the host
 * passes -DT=ushort, the storage, which the compute type replaces here. Four elements per
 * vector load (8 bytes): the f32 lanes of the compensated sums stay four. */
#undef T
#define T float
#define IS_FLOAT 1
#define VW 4
typedef float4 TV;
#define T_MAX INFINITY
#define T_LOWEST (-INFINITY)
#ifdef OCAL_DTYPE_f16
#define TS half
#define TVS ushort4
#define LD1(p, i) vload_half((i), (p))
#define LDV(p, w) vloada_half4((w), (__global const half *)(p)) /* 8-byte aligned */
#define ST1(p, i, v) vstore_half_rte((v), (i), (p))
#else
#define TS ushort
#define TVS ushort4
#define LD1(p, i) as_float((uint)(p)[i] << 16)
#define LDV(p, w) as_float4(convert_uint4((p)[w]) << 16)
#define ST1(p, i, v) ((p)[i] = ocal_bf16_round(v))
#endif
#else
#error "reduce.cl: unsupported element type"
#endif

/* Loads and stores of the storage type: T itself, except for the half types above. */
#ifndef TS
#define TS T
#define TVS TV
#define LD1(p, i) ((p)[i])
#define LDV(p, w) ((p)[w])
#define ST1(p, i, v) ((p)[i] = (v))
#endif

#ifndef IS_FLOAT
#define IS_FLOAT 0
#endif
#ifndef IS_SIGNED
#define IS_SIGNED 0
#endif

/* ACCF: the floating type of means, variances and norms. ACCV: NL lanes of it. */
#if IS_FLOAT
typedef T ACCF;
typedef TV ACCV;
#define NL VW
#elif defined(HAVE_DOUBLE)
typedef double ACCF;
typedef double2 ACCV;
#define NL 2
#else
typedef float ACCF;
typedef float2 ACCV;
#define NL 2
#endif

/* Integers are summed and multiplied as 64-bit two's complement (wrapping), as unsigned
 * arithmetic so that overflow is defined; signed inputs are sign-extended first. */
#if IS_SIGNED
#define TO_U64(v) ((ulong)(long)(v))
#define U64_TO_ACCF(u) ((ACCF)(long)(u))
#else
#define TO_U64(v) ((ulong)(v))
#define U64_TO_ACCF(u) ((ACCF)(u))
#endif

/* M(component, offset) for every component of a TV. */
#if VW == 2
#define FOR_LANES(M) M(s0, 0) M(s1, 1)
#define FOR_PAIRS(P) P(s0, s1, 0)
#elif VW == 4
#define FOR_LANES(M) M(s0, 0) M(s1, 1) M(s2, 2) M(s3, 3)
#define FOR_PAIRS(P) P(s0, s1, 0) P(s2, s3, 2)
#else
#define FOR_LANES(M)                                                                      \
  M(s0, 0) M(s1, 1) M(s2, 2) M(s3, 3) M(s4, 4) M(s5, 5) M(s6, 6) M(s7, 7) M(s8, 8)        \
  M(s9, 9) M(sa, 10) M(sb, 11) M(sc, 12) M(sd, 13) M(se, 14) M(sf, 15)
#define FOR_PAIRS(P)                                                                      \
  P(s0, s1, 0) P(s2, s3, 2) P(s4, s5, 4) P(s6, s7, 6) P(s8, s9, 8) P(sa, sb, 10)          \
  P(sc, sd, 12) P(se, sf, 14)
#endif

/* ---- stores ------------------------------------------------------------------------ */
void store_T(__global void *d, ulong i, T v) { ST1((__global TS *)d, i, v); }
void store_u64(__global void *d, ulong i, ulong v) { ((__global ulong *)d)[i] = v; }
void store_f(__global void *d, ulong i, int kind, ACCF v) {
  if (kind == KIND_F16) {
    vstore_half_rte((float)v, i, (__global half *)d);
    return;
  }
  if (kind == KIND_BF16) {
    ((__global ushort *)d)[i] = ocal_bf16_round((float)v);
    return;
  }
#ifdef HAVE_DOUBLE
  if (kind == KIND_F64) {
    ((__global double *)d)[i] = (double)v;
    return;
  }
#endif
  ((__global float *)d)[i] = (float)v;
}

/* ---- compensated sums in NL lanes ---------------------------------------------------- */
typedef struct {
  ACCV s;
  ACCV c;
} nsum_st;

nsum_st nsum_init(void) {
  nsum_st a;
  a.s = (ACCV)(0);
  a.c = (ACCV)(0);
  return a;
}

/* Neumaier's step in every lane: s + v exactly equals t + (the rounding error). */
void nsum_addv(nsum_st *a, ACCV v) {
  ACCV t = a->s + v;
  a->c += select((v - t) + a->s, (a->s - t) + v, isgreaterequal(fabs(a->s), fabs(v)));
  a->s = t;
}

void nsum_add1(nsum_st *a, ACCF v) {
  ACCV w = (ACCV)(0);
  w.s0 = v;
  nsum_addv(a, w);
}

void nsum_merge(nsum_st *a, nsum_st b) {
  nsum_addv(a, b.s);
  a->c += b.c;
}

/* Folds the lanes into one value. A non-finite sum is returned as it is: an infinity must
 * not turn into NaN through its compensation (inf - inf). */
ACCF nsum_fold(nsum_st a) {
  ACCF s = a.s.s0, c = 0;
#define NSUM_FOLD_LANE(cmp, k)                                        \
  if (k > 0) {                                                        \
    ACCF v = a.s.cmp, t = s + v;                                      \
    c += fabs(s) >= fabs(v) ? (s - t) + v : (v - t) + s;              \
    s = t;                                                            \
  }                                                                   \
  c += a.c.cmp;
#if NL == 4
  NSUM_FOLD_LANE(s0, 0) NSUM_FOLD_LANE(s1, 1) NSUM_FOLD_LANE(s2, 2) NSUM_FOLD_LANE(s3, 3)
#else
  NSUM_FOLD_LANE(s0, 0) NSUM_FOLD_LANE(s1, 1)
#endif
#undef NSUM_FOLD_LANE
  return isfinite(s) ? s + c : s;
}

/* Four scalars into the lanes (NL is 2 or 4). */
void nsum_add4(nsum_st *a, ACCF v0, ACCF v1, ACCF v2, ACCF v3) {
#if NL == 4
  nsum_addv(a, (ACCV)(v0, v1, v2, v3));
#else
  nsum_addv(a, (ACCV)(v0, v1));
  nsum_addv(a, (ACCV)(v2, v3));
#endif
}

/* ---- sum (and mean: mode 1 divides by count) ---------------------------------------- */
#if IS_FLOAT
typedef nsum_st sum_st;
sum_st sum_init(void) { return nsum_init(); }
void sum_add1(sum_st *a, T x, T y, ulong i) { nsum_add1(a, x); }
void sum_add4(sum_st *a, T x0, T x1, T x2, T x3, T y0, T y1, T y2, T y3, ulong i) {
  nsum_add4(a, x0, x1, x2, x3);
}
void sum_addv(sum_st *a, TV x, TV y, ulong i) { nsum_addv(a, x); }
void sum_merge(sum_st *a, sum_st b) { nsum_merge(a, b); }
void sum_final(__global void *d, ulong i, int kind, sum_st a, ulong count, long ddof, int mode) {
  T r = nsum_fold(a);
  if (mode == 1) r = r / (T)count;
  store_T(d, i, r);
}
#else
typedef ulong sum_st;
sum_st sum_init(void) { return 0; }
void sum_add1(sum_st *a, T x, T y, ulong i) { *a += TO_U64(x); }
void sum_add4(sum_st *a, T x0, T x1, T x2, T x3, T y0, T y1, T y2, T y3, ulong i) {
  *a += (TO_U64(x0) + TO_U64(x1)) + (TO_U64(x2) + TO_U64(x3));
}
void sum_addv(sum_st *a, TV x, TV y, ulong i) {
  ulong s = 0;
#define SUM_LANE(cmp, k) s += TO_U64(x.cmp);
  FOR_LANES(SUM_LANE)
#undef SUM_LANE
  *a += s;
}
void sum_merge(sum_st *a, sum_st b) { *a += b; }
void sum_final(__global void *d, ulong i, int kind, sum_st a, ulong count, long ddof, int mode) {
  if (mode == 1)
    store_f(d, i, kind, U64_TO_ACCF(a) / (ACCF)count);
  else
    store_u64(d, i, a);
}
#endif

/* 64-bit integers on a device without doubles: their values and deviations (up to 2^64) squared would
 * overflow float (2^128) long before the variance does, giving inf - inf = NaN. Values are
 * taken scaled by 2^-32 (a power of two: exact) and the result scaled back, so it overflows
 * only where the variance or norm itself exceeds float's range. */
#if !defined(OCAL_ACC_FP64) && (defined(OCAL_DTYPE_i64) || defined(OCAL_DTYPE_u64))
#define WIDE_SCALE 0x1p32f
#else
#define WIDE_SCALE 1
#endif

/* The same case for sums (the mean): a 64-bit integer is taken as two floats, hi = (float)x
 * and lo = x - hi (exact as an integer), both summed with compensation, so the rounding of
 * each conversion to float (up to 2^39 for values near 2^63) does not add up. */
#if !defined(OCAL_ACC_FP64) && defined(OCAL_DTYPE_i64)
#define WIDE_LO(x, hi) ((ACCF)(long)((ulong)(x) - (ulong)convert_long_sat(hi)))
#elif !defined(OCAL_ACC_FP64) && defined(OCAL_DTYPE_u64)
#define WIDE_LO(x, hi) ((ACCF)(long)((x) - convert_ulong_sat(hi)))
#endif

/* ---- float sum of any type (the mean of 64-bit integers, whose exact sum can leave the
 * 64-bit range: NumPy too sums them in float64) ----------------------------------------- */
typedef nsum_st fsum_st;
fsum_st fsum_init(void) { return nsum_init(); }
#ifdef WIDE_LO
void fsum_add1(fsum_st *a, T x, T y, ulong i) {
  ACCF hi = (ACCF)x;
  nsum_add1(a, hi);
  nsum_add1(a, WIDE_LO(x, hi));
}
void fsum_add4(fsum_st *a, T x0, T x1, T x2, T x3, T y0, T y1, T y2, T y3, ulong i) {
  fsum_add1(a, x0, y0, i);
  fsum_add1(a, x1, y1, i);
  fsum_add1(a, x2, y2, i);
  fsum_add1(a, x3, y3, i);
}
#define FSUM_LANE(cmp, k) fsum_add1(a, x.cmp, x.cmp, i + k);
void fsum_addv(fsum_st *a, TV x, TV y, ulong i) { FOR_LANES(FSUM_LANE) }
#undef FSUM_LANE
#else
void fsum_add1(fsum_st *a, T x, T y, ulong i) { nsum_add1(a, (ACCF)x); }
void fsum_add4(fsum_st *a, T x0, T x1, T x2, T x3, T y0, T y1, T y2, T y3, ulong i) {
  nsum_add4(a, (ACCF)x0, (ACCF)x1, (ACCF)x2, (ACCF)x3);
}
#endif
#if IS_FLOAT
void fsum_addv(fsum_st *a, TV x, TV y, ulong i) { nsum_addv(a, x); }
#elif defined(WIDE_LO)
/* fsum_addv: above */
#else
void fsum_addv(fsum_st *a, TV x, TV y, ulong i) {
#define FSUM_PAIR(c0, c1, k) nsum_addv(a, (ACCV)((ACCF)x.c0, (ACCF)x.c1));
  FOR_PAIRS(FSUM_PAIR)
#undef FSUM_PAIR
}
#endif
void fsum_merge(fsum_st *a, fsum_st b) { nsum_merge(a, b); }
void fsum_final(__global void *d, ulong i, int kind, fsum_st a, ulong count, long ddof,
                int mode) {
  ACCF r = nsum_fold(a);
  if (mode == 1) r = r / (ACCF)count;
  store_f(d, i, kind, r);
}

/* ---- product --------------------------------------------------------------------------- */
#if IS_FLOAT
typedef TV prod_st; /* VW lanes, multiplied together at the end */
prod_st prod_init(void) { return (TV)(1); }
void prod_add1(prod_st *a, T x, T y, ulong i) { a->s0 *= x; }
void prod_add4(prod_st *a, T x0, T x1, T x2, T x3, T y0, T y1, T y2, T y3, ulong i) {
  a->s0 *= x0;
  a->s1 *= x1;
#if VW == 4
  a->s2 *= x2;
  a->s3 *= x3;
#else
  a->s0 *= x2;
  a->s1 *= x3;
#endif
}
void prod_addv(prod_st *a, TV x, TV y, ulong i) { *a *= x; }
void prod_merge(prod_st *a, prod_st b) { *a *= b; }
void prod_final(__global void *d, ulong i, int kind, prod_st a, ulong count, long ddof, int mode) {
  T r = 1;
#define PROD_LANE(cmp, k) r *= a.cmp;
  FOR_LANES(PROD_LANE)
#undef PROD_LANE
  store_T(d, i, r);
}
#else
typedef ulong prod_st;
prod_st prod_init(void) { return 1; }
void prod_add1(prod_st *a, T x, T y, ulong i) { *a *= TO_U64(x); }
void prod_add4(prod_st *a, T x0, T x1, T x2, T x3, T y0, T y1, T y2, T y3, ulong i) {
  *a *= (TO_U64(x0) * TO_U64(x1)) * (TO_U64(x2) * TO_U64(x3));
}
void prod_addv(prod_st *a, TV x, TV y, ulong i) {
  ulong p = 1;
#define PROD_LANE(cmp, k) p *= TO_U64(x.cmp);
  FOR_LANES(PROD_LANE)
#undef PROD_LANE
  *a *= p;
}
void prod_merge(prod_st *a, prod_st b) { *a *= b; }
void prod_final(__global void *d, ulong i, int kind, prod_st a, ulong count, long ddof, int mode) {
  store_u64(d, i, a);
}
#endif

/* ---- min and max: VW lanes; a NaN anywhere makes the result NaN (as NumPy's min) ---- */
#if IS_FLOAT
#define MIN2(a, b) select((a), (b), isless((b), (a)) | isnan(b))
#define MAX2(a, b) select((a), (b), isgreater((b), (a)) | isnan(b))
#define MIN1(a, b) ((isless((b), (a)) || isnan(b)) ? (b) : (a))
#define MAX1(a, b) ((isgreater((b), (a)) || isnan(b)) ? (b) : (a))
#else
#define MIN2(a, b) min((a), (b))
#define MAX2(a, b) max((a), (b))
#define MIN1(a, b) min((a), (b))
#define MAX1(a, b) max((a), (b))
#endif

#define DEFINE_MINMAX(NAME, OP2, OP1, IDENTITY)                                              \
  typedef TV NAME##_st;                                                                      \
  NAME##_st NAME##_init(void) { return (TV)(IDENTITY); }                                     \
  void NAME##_add1(NAME##_st *a, T x, T y, ulong i) { *a = OP2(*a, (TV)(x)); }               \
  void NAME##_add4(NAME##_st *a, T x0, T x1, T x2, T x3, T y0, T y1, T y2, T y3, ulong i) {  \
    T m = OP1(OP1(x0, x1), OP1(x2, x3));                                                     \
    *a = OP2(*a, (TV)(m));                                                                   \
  }                                                                                          \
  void NAME##_addv(NAME##_st *a, TV x, TV y, ulong i) { *a = OP2(*a, x); }                   \
  void NAME##_merge(NAME##_st *a, NAME##_st b) { *a = OP2(*a, b); }                          \
  void NAME##_final(__global void *d, ulong i, int kind, NAME##_st a, ulong count, long ddof, \
                    int mode) {                                                              \
    T r = a.s0;                                                                              \
    FOR_LANES(NAME##_FOLD_LANE)                                                              \
    store_T(d, i, r);                                                                        \
  }
#define minimum_FOLD_LANE(cmp, k) r = MIN1(r, a.cmp);
#define maximum_FOLD_LANE(cmp, k) r = MAX1(r, a.cmp);
DEFINE_MINMAX(minimum, MIN2, MIN1, T_MAX)
DEFINE_MINMAX(maximum, MAX2, MAX1, T_LOWEST)

/* ---- argmin and argmax: the first index of the extreme; the first NaN wins ------------ */
typedef struct {
  ulong i; /* NONE_INDEX while empty */
  T v;
} arg_st;

arg_st arg_init(void) {
  arg_st a;
  a.i = NONE_INDEX;
  a.v = 0;
  return a;
}

/* Whether candidate (v, i) replaces the current (a->v, a->i). LESS says which is better. */
#if IS_FLOAT
#define ARG_TAKES(S_, V_, I_, LESS)                                                     \
  ((S_)->i == NONE_INDEX ||                                                             \
   (isnan(V_) ? (!isnan((S_)->v) || (I_) < (S_)->i)                                     \
              : (!isnan((S_)->v) && (LESS((V_), (S_)->v) || ((V_) == (S_)->v && (I_) < (S_)->i)))))
#else
#define ARG_TAKES(S_, V_, I_, LESS) \
  ((S_)->i == NONE_INDEX || LESS((V_), (S_)->v) || ((V_) == (S_)->v && (I_) < (S_)->i))
#endif
#define ARG_LT(p, q) ((p) < (q))
#define ARG_GT(p, q) ((p) > (q))

#define DEFINE_ARG(NAME, LESS)                                                               \
  typedef arg_st NAME##_st;                                                                  \
  NAME##_st NAME##_init(void) { return arg_init(); }                                         \
  void NAME##_add1(NAME##_st *a, T x, T y, ulong i) {                                        \
    if (ARG_TAKES(a, x, i, LESS)) {                                                          \
      a->v = x;                                                                              \
      a->i = i;                                                                              \
    }                                                                                        \
  }                                                                                          \
  void NAME##_add4(NAME##_st *a, T x0, T x1, T x2, T x3, T y0, T y1, T y2, T y3, ulong i) {  \
    NAME##_add1(a, x0, x0, i);                                                               \
    NAME##_add1(a, x1, x1, i + 1);                                                           \
    NAME##_add1(a, x2, x2, i + 2);                                                           \
    NAME##_add1(a, x3, x3, i + 3);                                                           \
  }                                                                                          \
  void NAME##_addv(NAME##_st *a, TV x, TV y, ulong i) { FOR_LANES(NAME##_ADD_LANE) }         \
  void NAME##_merge(NAME##_st *a, NAME##_st b) {                                             \
    if (b.i != NONE_INDEX) NAME##_add1(a, b.v, b.v, b.i);                                    \
  }                                                                                          \
  void NAME##_final(__global void *d, ulong i, int kind, NAME##_st a, ulong count, long ddof, \
                    int mode) {                                                              \
    ((__global long *)d)[i] = (long)a.i;                                                     \
  }
#define argmin_ADD_LANE(cmp, k) argmin_add1(a, x.cmp, x.cmp, i + k);
#define argmax_ADD_LANE(cmp, k) argmax_add1(a, x.cmp, x.cmp, i + k);
DEFINE_ARG(argmin, ARG_LT)
DEFINE_ARG(argmax, ARG_GT)

/* ---- sum of squares (L2 norm: mode 2 takes the square root) ------------------------- */
typedef nsum_st sumsq_st;
sumsq_st sumsq_init(void) { return nsum_init(); }
void sumsq_add1(sumsq_st *a, T x, T y, ulong i) {
  ACCF f = (ACCF)x / (ACCF)WIDE_SCALE;
  nsum_add1(a, f * f);
}
void sumsq_add4(sumsq_st *a, T x0, T x1, T x2, T x3, T y0, T y1, T y2, T y3, ulong i) {
  const ACCF s = (ACCF)WIDE_SCALE;
  ACCF f0 = (ACCF)x0 / s, f1 = (ACCF)x1 / s, f2 = (ACCF)x2 / s, f3 = (ACCF)x3 / s;
  nsum_add4(a, f0 * f0, f1 * f1, f2 * f2, f3 * f3);
}
#if IS_FLOAT
void sumsq_addv(sumsq_st *a, TV x, TV y, ulong i) { nsum_addv(a, x * x); }
#else
void sumsq_addv(sumsq_st *a, TV x, TV y, ulong i) {
#define SUMSQ_PAIR(c0, c1, k)                          \
  {                                                    \
    ACCV f = (ACCV)((ACCF)x.c0, (ACCF)x.c1) / (ACCF)WIDE_SCALE; \
    nsum_addv(a, f * f);                               \
  }
  FOR_PAIRS(SUMSQ_PAIR)
#undef SUMSQ_PAIR
}
#endif
void sumsq_merge(sumsq_st *a, sumsq_st b) { nsum_merge(a, b); }
void sumsq_final(__global void *d, ulong i, int kind, sumsq_st a, ulong count, long ddof,
                 int mode) {
  ACCF r = nsum_fold(a);
  if (mode == 2) r = sqrt(r) * (ACCF)WIDE_SCALE;
  else r = r * (ACCF)WIDE_SCALE * (ACCF)WIDE_SCALE;
  store_f(d, i, kind, r);
}

/* ---- dot ------------------------------------------------------------------------------ */
#if IS_FLOAT
typedef nsum_st dotp_st;
dotp_st dotp_init(void) { return nsum_init(); }
/* Products are split exactly into p + e (fma gives e), as in Ogita, Rump and Oishi's Dot2:
 * p goes into the compensated sum, e into its compensation. */
void dotp_addv(dotp_st *a, TV x, TV y, ulong i) {
  TV p = x * y;
  nsum_addv(a, p);
  a->c += fma(x, y, -p);
}
void dotp_add1(dotp_st *a, T x, T y, ulong i) {
  TV xv = (TV)(0), yv = (TV)(0);
  xv.s0 = x;
  yv.s0 = y;
  dotp_addv(a, xv, yv, i);
}
void dotp_add4(dotp_st *a, T x0, T x1, T x2, T x3, T y0, T y1, T y2, T y3, ulong i) {
#if VW == 4
  dotp_addv(a, (TV)(x0, x1, x2, x3), (TV)(y0, y1, y2, y3), i);
#else
  dotp_addv(a, (TV)(x0, x1), (TV)(y0, y1), i);
  dotp_addv(a, (TV)(x2, x3), (TV)(y2, y3), i + 2);
#endif
}
void dotp_merge(dotp_st *a, dotp_st b) { nsum_merge(a, b); }
void dotp_final(__global void *d, ulong i, int kind, dotp_st a, ulong count, long ddof, int mode) {
  store_T(d, i, nsum_fold(a));
}
#else
typedef ulong dotp_st;
dotp_st dotp_init(void) { return 0; }
void dotp_add1(dotp_st *a, T x, T y, ulong i) { *a += TO_U64(x) * TO_U64(y); }
void dotp_add4(dotp_st *a, T x0, T x1, T x2, T x3, T y0, T y1, T y2, T y3, ulong i) {
  *a += (TO_U64(x0) * TO_U64(y0) + TO_U64(x1) * TO_U64(y1)) +
        (TO_U64(x2) * TO_U64(y2) + TO_U64(x3) * TO_U64(y3));
}
void dotp_addv(dotp_st *a, TV x, TV y, ulong i) {
  ulong s = 0;
#define DOT_LANE(cmp, k) s += TO_U64(x.cmp) * TO_U64(y.cmp);
  FOR_LANES(DOT_LANE)
#undef DOT_LANE
  *a += s;
}
void dotp_merge(dotp_st *a, dotp_st b) { *a += b; }
void dotp_final(__global void *d, ulong i, int kind, dotp_st a, ulong count, long ddof, int mode) {
  store_u64(d, i, a);
}
#endif

/* ---- variance (mode 2: standard deviation) ---------------------------------------------
 * A work-item sums d = x - k and d*d, with k its first element (shifted sums: no division
 * per element, and no cancellation as long as k is near the mean, which a sample is);
 * states merge with Chan's formula and then hold (k = mean, s1 = 0, s2 = M2). */
typedef struct {
  ulong n;
  ACCF k;
  ACCF s1;
  ACCF s2;
} var_st;


var_st var_init(void) {
  var_st a;
  a.n = 0;
  a.k = 0;
  a.s1 = 0;
  a.s2 = 0;
  return a;
}
void var_add1(var_st *a, T x, T y, ulong i) {
  ACCF f = (ACCF)x / (ACCF)WIDE_SCALE;
  if (a->n == 0) a->k = f;
  ACCF d = f - a->k;
  a->s1 += d;
  a->s2 += d * d;
  a->n += 1;
}
void var_add4(var_st *a, T x0, T x1, T x2, T x3, T y0, T y1, T y2, T y3, ulong i) {
  var_add1(a, x0, x0, i);
  var_add1(a, x1, x1, i + 1);
  var_add1(a, x2, x2, i + 2);
  var_add1(a, x3, x3, i + 3);
}
#define VAR_LANE(cmp, k) var_add1(a, x.cmp, x.cmp, i + k);
void var_addv(var_st *a, TV x, TV y, ulong i) { FOR_LANES(VAR_LANE) }
#undef VAR_LANE
void var_merge(var_st *a, var_st b) {
  if (b.n == 0) return;
  if (a->n == 0) {
    *a = b;
    return;
  }
  ACCF na = (ACCF)a->n, nb = (ACCF)b.n, n = na + nb;
  ACCF ma = a->k + a->s1 / na, mb = b.k + b.s1 / nb;
  ACCF m2a = a->s2 - a->s1 * (a->s1 / na), m2b = b.s2 - b.s1 * (b.s1 / nb);
  ACCF delta = mb - ma;
  a->k = ma + delta * (nb / n);
  a->s1 = 0;
  a->s2 = m2a + m2b + delta * delta * (na * (nb / n));
  a->n += b.n;
}
void var_final(__global void *d, ulong i, int kind, var_st a, ulong count, long ddof, int mode) {
  ACCF r;
  if ((long)a.n - ddof <= 0) {
    r = (ACCF)NAN;
  } else {
    ACCF m2 = a.s2 - a.s1 * (a.s1 / (ACCF)a.n);
    r = (m2 < 0 ? (ACCF)0 : m2) / (ACCF)((long)a.n - ddof); /* NaN stays NaN */
    if (mode == 2) r = sqrt(r) * (ACCF)WIDE_SCALE;
    else r = r * (ACCF)WIDE_SCALE * (ACCF)WIDE_SCALE;
  }
  store_f(d, i, kind, r);
}

/* ---- the kernels ----------------------------------------------------------------------- */
#define REDUCE_KERNEL_ARGS                                                                  \
  __global const TS *x, const ulong xoff, __global const TS *y, const ulong yoff,            \
      const ulong outer, const ulong R, const ulong inner, const ulong chunks,              \
      const ulong clen, __global void *dst, const ulong doff, const int kind,               \
      const ulong count, const long ddof, const int mode

#define MERGE_KERNEL_ARGS(NAME)                                                             \
  __global const NAME##_st *P, const ulong outer, const ulong S, const ulong inner,         \
      __global void *dst, const ulong doff, const int kind, const ulong count,              \
      const long ddof, const int mode

/* Tree reduction of the work-group's states in local memory; the result is scratch[0]. */
#define GROUP_TREE(NAME, st)                                                  \
  scratch[lid] = st;                                                          \
  barrier(CLK_LOCAL_MEM_FENCE);                                               \
  for (uint h = L >> 1; h > 0; h >>= 1) {                                     \
    if (lid < h) {                                                            \
      NAME##_st t = scratch[lid];                                             \
      NAME##_merge(&t, scratch[lid + h]);                                     \
      scratch[lid] = t;                                                       \
    }                                                                         \
    barrier(CLK_LOCAL_MEM_FENCE);                                             \
  }

#define REDUCE_CONTIG(NAME)                                                                    \
  /* Rows of R contiguous elements; group g reduces every chunks-th vector of row g/chunks  \
   * (a grid-stride loop over the row), aligned vector loads in the middle of the row. */   \
  __kernel void NAME##_contig(REDUCE_KERNEL_ARGS) {                                          \
    __local NAME##_st scratch[OCAL_WG_MAX];                                                   \
    const uint lid = get_local_id(0), L = get_local_size(0);                                 \
    const ulong g = get_group_id(0), o = g / chunks, c = g % chunks;                         \
    const ulong xb = xoff + o * R, yb = yoff + o * R;                                        \
    NAME##_st st = NAME##_init();                                                            \
    /* Scalar head up to the first VW-aligned element; all scalar when x and y disagree. */ \
    ulong head = (VW - xb % VW) % VW;                                                        \
    if (head > R || xb % VW != yb % VW) head = R;                                            \
    const ulong nvec = (R - head) / VW, vend = head + nvec * VW;                             \
    const ulong stride = chunks * L;                                                         \
    __global const TVS *xv = (__global const TVS *)(x + xb + head);                          \
    __global const TVS *yv = (__global const TVS *)(y + yb + head);                          \
    if (clen != 0) {                                                                         \
      /* CPUs (clen 1): a contiguous range per work-item, which runs alone as a loop. */      \
      const ulong per = (nvec + stride - 1) / stride, v0 = (c * L + lid) * per;              \
      const ulong v1 = v0 + per < nvec ? v0 + per : nvec;                                    \
      for (ulong w = v0; w < v1; w++)                                                        \
        NAME##_addv(&st, LDV(xv, w), LDV(yv, w), head + w * VW);                             \
    } else {                                                                                 \
      /* GPUs: neighbouring work-items read neighbouring vectors (coalesced). */             \
      ulong v = c * L + lid;                                                                 \
      for (; v + stride < nvec; v += 2 * stride) {                                           \
        TV a0 = LDV(xv, v), a1 = LDV(xv, v + stride);                                        \
        TV b0 = LDV(yv, v), b1 = LDV(yv, v + stride);                                        \
        NAME##_addv(&st, a0, b0, head + v * VW);                                             \
        NAME##_addv(&st, a1, b1, head + (v + stride) * VW);                                  \
      }                                                                                      \
      if (v < nvec) NAME##_addv(&st, LDV(xv, v), LDV(yv, v), head + v * VW);                 \
    }                                                                                        \
    const ulong nscalar = head + (R - vend);                                                 \
    for (ulong t = c * L + lid; t < nscalar; t += stride) {                                  \
      ulong r = t < head ? t : vend + (t - head);                                            \
      NAME##_add1(&st, LD1(x, xb + r), LD1(y, yb + r), r);                                   \
    }                                                                                        \
    GROUP_TREE(NAME, st)                                                                     \
    if (lid == 0) {                                                                          \
      if (chunks == 1)                                                                       \
        NAME##_final(dst, doff + o, kind, scratch[0], count, ddof, mode);                    \
      else                                                                                   \
        ((__global NAME##_st *)dst)[g] = scratch[0];                                         \
    }                                                                                        \
  }

#define REDUCE_STRIDED(NAME)                                                                   \
  /* One work-item per (o, chunk s of clen rows of R, column j): neighbours read neighbouring \
   * columns, four independent loads in flight. */                                         \
  __kernel void NAME##_strided(REDUCE_KERNEL_ARGS) {                                         \
    const ulong total = outer * chunks * inner;                                              \
    for (ulong t = get_global_id(0); t < total; t += get_global_size(0)) {                   \
      const ulong j = t % inner, q = t / inner, s = q % chunks, o = q / chunks;              \
      const ulong r0 = s * clen;                                                             \
      const ulong r1 = r0 + clen < R ? r0 + clen : R;                                        \
      ulong px = xoff + (o * R + r0) * inner + j, py = yoff + (o * R + r0) * inner + j;      \
      NAME##_st st = NAME##_init(), st2 = NAME##_init();                                     \
      ulong r = r0;                                                                          \
      /* Eight loads in flight per work-item, into two independent states. */                \
      for (; r + 8 <= r1; r += 8) {                                                          \
        T a0 = LD1(x, px), a1 = LD1(x, px + inner),                                          \
          a2 = LD1(x, px + 2 * inner), a3 = LD1(x, px + 3 * inner);                          \
        T a4 = LD1(x, px + 4 * inner), a5 = LD1(x, px + 5 * inner),                          \
          a6 = LD1(x, px + 6 * inner), a7 = LD1(x, px + 7 * inner);                          \
        T b0 = LD1(y, py), b1 = LD1(y, py + inner),                                          \
          b2 = LD1(y, py + 2 * inner), b3 = LD1(y, py + 3 * inner);                          \
        T b4 = LD1(y, py + 4 * inner), b5 = LD1(y, py + 5 * inner),                          \
          b6 = LD1(y, py + 6 * inner), b7 = LD1(y, py + 7 * inner);                          \
        NAME##_add4(&st, a0, a1, a2, a3, b0, b1, b2, b3, r);                                 \
        NAME##_add4(&st2, a4, a5, a6, a7, b4, b5, b6, b7, r + 4);                            \
        px += 8 * inner;                                                                     \
        py += 8 * inner;                                                                     \
      }                                                                                      \
      NAME##_merge(&st, st2);                                                                \
      for (; r + 4 <= r1; r += 4) {                                                          \
        T a0 = LD1(x, px), a1 = LD1(x, px + inner),                                          \
          a2 = LD1(x, px + 2 * inner), a3 = LD1(x, px + 3 * inner);                          \
        T b0 = LD1(y, py), b1 = LD1(y, py + inner),                                          \
          b2 = LD1(y, py + 2 * inner), b3 = LD1(y, py + 3 * inner);                          \
        NAME##_add4(&st, a0, a1, a2, a3, b0, b1, b2, b3, r);                                 \
        px += 4 * inner;                                                                     \
        py += 4 * inner;                                                                     \
      }                                                                                      \
      for (; r < r1; r++) {                                                                  \
        NAME##_add1(&st, LD1(x, px),                                                         \
          LD1(y, py), r);                                                                    \
        px += inner;                                                                         \
        py += inner;                                                                         \
      }                                                                                      \
      if (chunks == 1)                                                                       \
        NAME##_final(dst, doff + o * inner + j, kind, st, count, ddof, mode);                \
      else                                                                                   \
        ((__global NAME##_st *)dst)[t] = st;                                                 \
    }                                                                                        \
  }

#define REDUCE_MERGE_STRIDED(NAME)                                                             \
  /* Second pass, many outputs: states P[(o * S + s) * inner + j], s < S, per output. */    \
  __kernel void NAME##_merge_strided(MERGE_KERNEL_ARGS(NAME)) {                              \
    const ulong total = outer * inner;                                                       \
    for (ulong t = get_global_id(0); t < total; t += get_global_size(0)) {                   \
      const ulong j = t % inner, o = t / inner;                                              \
      NAME##_st st = P[o * S * inner + j];                                                   \
      for (ulong s = 1; s < S; s++) NAME##_merge(&st, P[(o * S + s) * inner + j]);           \
      NAME##_final(dst, doff + t, kind, st, count, ddof, mode);                              \
    }                                                                                        \
  }

#define REDUCE_MERGE_GROUP(NAME)                                                               \
  /* Second pass, few outputs: one work-group per output. */                                \
  __kernel void NAME##_merge_group(MERGE_KERNEL_ARGS(NAME)) {                                \
    __local NAME##_st scratch[OCAL_WG_MAX];                                                   \
    const uint lid = get_local_id(0), L = get_local_size(0);                                 \
    const ulong t = get_group_id(0), j = t % inner, o = t / inner;                           \
    NAME##_st st = NAME##_init();                                                            \
    for (ulong s = lid; s < S; s += L) NAME##_merge(&st, P[(o * S + s) * inner + j]);        \
    GROUP_TREE(NAME, st)                                                                     \
    if (lid == 0) NAME##_final(dst, doff + t, kind, scratch[0], count, ddof, mode);          \
  }

/* NAME_strided_v: the strided kernel with VW neighbouring columns per work-item, read as one
 * vector per row, so that a row's read is VW times wider per work-item (GPUs fetch whole
 * 32-byte sectors; scalar column reads leave the memory system fewer, smaller requests in
 * flight). The host uses it when VW <= 4, inner % VW == 0 and the offsets are multiples of
 * VW (aligned vector loads); work-item t covers columns (t % (inner / VW)) * VW + 0..VW-1. */
#if VW == 2
#define FOR_LANES_OF(X, NAME) X(NAME, s0, 0) X(NAME, s1, 1)
#elif VW == 4
#define FOR_LANES_OF(X, NAME) X(NAME, s0, 0) X(NAME, s1, 1) X(NAME, s2, 2) X(NAME, s3, 3)
#endif
#define SV_INIT(NAME, cmp, k) NAME##_st st##k = NAME##_init();
#define SV_ADD4(NAME, cmp, k) \
  NAME##_add4(&st##k, a0.cmp, a1.cmp, a2.cmp, a3.cmp, b0.cmp, b1.cmp, b2.cmp, b3.cmp, r);
#define SV_ADD4_HI(NAME, cmp, k) \
  NAME##_add4(&st##k, a4.cmp, a5.cmp, a6.cmp, a7.cmp, b4.cmp, b5.cmp, b6.cmp, b7.cmp, r + 4);
#define SV_ADD1(NAME, cmp, k) NAME##_add1(&st##k, a0.cmp, b0.cmp, r);
#define SV_STORE(NAME, cmp, k)                                                      \
  if (chunks == 1)                                                                  \
    NAME##_final(dst, doff + o * inner + j + k, kind, st##k, count, ddof, mode);   \
  else                                                                              \
    ((__global NAME##_st *)dst)[(o * chunks + s) * inner + j + k] = st##k;

#ifdef FOR_LANES_OF
#define REDUCE_STRIDED_V(NAME)                                                                 \
  __kernel void NAME##_strided_v(REDUCE_KERNEL_ARGS) {                                       \
    const ulong iv = inner / VW, total = outer * chunks * iv;                                \
    for (ulong t = get_global_id(0); t < total; t += get_global_size(0)) {                   \
      const ulong jv = t % iv, q = t / iv, s = q % chunks, o = q / chunks, j = jv * VW;      \
      const ulong r0 = s * clen;                                                             \
      const ulong r1 = r0 + clen < R ? r0 + clen : R;                                        \
      __global const TVS *xp = (__global const TVS *)(x + xoff + (o * R + r0) * inner + j);  \
      __global const TVS *yp = (__global const TVS *)(y + yoff + (o * R + r0) * inner + j);  \
      FOR_LANES_OF(SV_INIT, NAME)                                                            \
      ulong r = r0;                                                                          \
      for (; r + 8 <= r1; r += 8) {                                                          \
        TV a0 = LDV(xp, 0), a1 = LDV(xp, iv),                                                \
          a2 = LDV(xp, 2 * iv), a3 = LDV(xp, 3 * iv);                                        \
        TV a4 = LDV(xp, 4 * iv), a5 = LDV(xp, 5 * iv),                                       \
          a6 = LDV(xp, 6 * iv), a7 = LDV(xp, 7 * iv);                                        \
        TV b0 = LDV(yp, 0), b1 = LDV(yp, iv),                                                \
          b2 = LDV(yp, 2 * iv), b3 = LDV(yp, 3 * iv);                                        \
        TV b4 = LDV(yp, 4 * iv), b5 = LDV(yp, 5 * iv),                                       \
          b6 = LDV(yp, 6 * iv), b7 = LDV(yp, 7 * iv);                                        \
        FOR_LANES_OF(SV_ADD4, NAME)                                                          \
        FOR_LANES_OF(SV_ADD4_HI, NAME)                                                       \
        xp += 8 * iv;                                                                        \
        yp += 8 * iv;                                                                        \
      }                                                                                      \
      for (; r < r1; r++) {                                                                  \
        TV a0 = LDV(xp, 0),                                                                  \
          b0 = LDV(yp, 0);                                                                   \
        FOR_LANES_OF(SV_ADD1, NAME)                                                          \
        xp += iv;                                                                            \
        yp += iv;                                                                            \
      }                                                                                      \
      FOR_LANES_OF(SV_STORE, NAME)                                                           \
    }                                                                                        \
  }
#else
#define REDUCE_STRIDED_V(NAME) /* u8: VW is 16, too many states per work-item */
#endif

/* Only the kernel the host launches is compiled: the host names one operation and one kernel
 * (-DOCAL_ONLY -DOCAL_ONLY_<operation> -DOCAL_KERNEL -DOCAL_KERNEL_<kernel>), so a first
 * reduction compiles one small program instead of fifty kernels (on an H100 the whole file
 * took 6.2 s to build per type).
 * Without OCAL_ONLY_* every kernel is built (tools and tests that compile the whole file). */
#if defined(OCAL_KERNEL_contig) || !defined(OCAL_KERNEL)
#define REDUCE_K_contig(NAME) REDUCE_CONTIG(NAME)
#else
#define REDUCE_K_contig(NAME)
#endif
#if defined(OCAL_KERNEL_strided) || !defined(OCAL_KERNEL)
#define REDUCE_K_strided(NAME) REDUCE_STRIDED(NAME)
#else
#define REDUCE_K_strided(NAME)
#endif
#if defined(OCAL_KERNEL_merge_strided) || !defined(OCAL_KERNEL)
#define REDUCE_K_merge_strided(NAME) REDUCE_MERGE_STRIDED(NAME)
#else
#define REDUCE_K_merge_strided(NAME)
#endif
#if defined(OCAL_KERNEL_merge_group) || !defined(OCAL_KERNEL)
#define REDUCE_K_merge_group(NAME) REDUCE_MERGE_GROUP(NAME)
#else
#define REDUCE_K_merge_group(NAME)
#endif
#if defined(OCAL_KERNEL_strided_v) || !defined(OCAL_KERNEL)
#define REDUCE_K_strided_v(NAME) REDUCE_STRIDED_V(NAME)
#else
#define REDUCE_K_strided_v(NAME)
#endif
#define REDUCE_ALL_KERNELS(NAME)                                                           \
  REDUCE_K_contig(NAME) REDUCE_K_strided(NAME) REDUCE_K_merge_strided(NAME)               \
  REDUCE_K_merge_group(NAME) REDUCE_K_strided_v(NAME)

#if defined(OCAL_ONLY_sum) || !defined(OCAL_ONLY)
REDUCE_ALL_KERNELS(sum)
#endif
#if defined(OCAL_ONLY_prod) || !defined(OCAL_ONLY)
REDUCE_ALL_KERNELS(prod)
#endif
#if defined(OCAL_ONLY_minimum) || !defined(OCAL_ONLY)
REDUCE_ALL_KERNELS(minimum)
#endif
#if defined(OCAL_ONLY_maximum) || !defined(OCAL_ONLY)
REDUCE_ALL_KERNELS(maximum)
#endif
#if defined(OCAL_ONLY_argmin) || !defined(OCAL_ONLY)
REDUCE_ALL_KERNELS(argmin)
#endif
#if defined(OCAL_ONLY_argmax) || !defined(OCAL_ONLY)
REDUCE_ALL_KERNELS(argmax)
#endif
#if defined(OCAL_ONLY_sumsq) || !defined(OCAL_ONLY)
REDUCE_ALL_KERNELS(sumsq)
#endif
#if defined(OCAL_ONLY_dotp) || !defined(OCAL_ONLY)
REDUCE_ALL_KERNELS(dotp)
#endif
#if defined(OCAL_ONLY_var) || !defined(OCAL_ONLY)
REDUCE_ALL_KERNELS(var)
#endif
#if defined(OCAL_ONLY_fsum) || !defined(OCAL_ONLY)
REDUCE_ALL_KERNELS(fsum)
#endif
