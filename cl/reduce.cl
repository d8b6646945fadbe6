/* ocal — reductions: sum, prod, min, max, argmin, argmax, sum of squares (L2 norm), dot and
 * variance, over a whole buffer or along one axis, and the reductions ocal_gen_reduction
 * writes from a user's expressions: one engine for all of them.
 *
 * Built per input element type with -DT=<OpenCL C type> -DOCAL_DTYPE_<name>, and per kernel:
 * -DOCAL_ONLY -DOCAL_ONLY_<NAME> -DOCAL_KERNEL -DOCAL_KERNEL_<kind> keep one of the kernels
 * below (the end of the file says why). Integer inputs get -DOCAL_ACC_FP64 when the device
 * has doubles: their means, variances and norms are then computed and can be stored in
 * double precision.
 *
 * The host (src/ops/reduce.c, the one planner: src/ops/reduce_engine.h) views the input as a
 * row-major (outer, R, inner) block and reduces along R. The kernels are written once, in
 * two layers:
 *   - the input: OCAL_RED_IN_PARAMS, the kernel parameters that name it, and OCAL_RED_X(i),
 *     OCAL_RED_Y(i) (values of type T) and OCAL_RED_XV(i), OCAL_RED_YV(i) (VW of them, a
 *     TV, at an index the host aligned) at flat index i of the block, loads included, with
 *     OCAL_RED_HEAD(b): how many elements after flat index b come before the first one
 *     where vector loads are aligned. The built-in reductions read buffers x and y; a
 *     generated reduction's prologue defines OCAL_RED_X as its map expression over its own
 *     arguments (as cl/scan.cl's OCAL_LOAD);
 *   - the operation NAME: a state type NAME_st and
 *       NAME_init()                 the identity,
 *       NAME_add1/add4/addv         fold in 1, 4 or VW consecutive elements (their x and y
 *                                   values and the index of the first along R),
 *       NAME_merge(&a, b)           combine two states (associative; ties resolved by index),
 *       NAME_final(dst, i, ...)     write the finished result to the output buffer.
 *     Operations that are a map, a combination and its neutral value are instances of the
 *     generic operation (OCAL_RED_PLAIN, OCAL_RED_COMPENSATED below): sum, prod, min, max,
 *     the sum of squares, dot, mean, and every generated reduction (`ocal_user`). Those whose
 *     state is more than one value (argmin and argmax carry an index, the variance a count
 *     and two sums, the mean of 64-bit integers a two-part value) define the functions
 *     themselves.
 * OCAL_RED_ALL_KERNELS(NAME) instantiates five kernels from them:
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
 * Float sums (sum, mean, dot, norm, a generated "a + b" of floats) are compensated
 * (Neumaier) in every work-item and in every merge, in OCAL_NL independent lanes so that CPUs
 * vectorise them: their error does not grow with the length of the reduction.
 *
 * A generated reduction puts the user's preamble and expressions before this file in one
 * program (built with -DOCAL_ONLY_ocal_user), so every name this file declares for it starts
 * with ocal_ or OCAL_, which the user may not use; the built-in operations' own names are
 * compiled only without OCAL_RED_USER. The element-type section keeps its short names
 * (IS_FLOAT, IS_SIGNED, VW, TV, T_MAX, T_LOWEST): the generated prologue #undefs them after
 * the user's texts, which it has compiled by then, and renames the typedef TV to ocal_TV. */
#if defined(OCAL_NEED_FP64) || defined(OCAL_ACC_FP64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define OCAL_HAVE_DOUBLE 1
#endif
/* x*y must be rounded before it enters a compensated sum. */
#pragma OPENCL FP_CONTRACT OFF

#ifndef OCAL_WG_MAX
#define OCAL_WG_MAX 256
#endif

/* Output kinds: the values of enum ocal_dtype (include/ocal/types.h). */
#define OCAL_KIND_F32 0
#define OCAL_KIND_F64 1

#define OCAL_NONE_INDEX ((ulong)0xffffffffffffffffUL)
#define OCAL_KIND_F16 9
#define OCAL_KIND_BF16 10

#include "prelude.cl"

/* ---- the element type -------------------------------------------------------------- */
#if defined(OCAL_DTYPE_f32)
#define IS_FLOAT 1
#define VW 4
typedef float4 TV;
#define OCAL_AS_TV as_float4
#define T_MAX INFINITY
#define T_LOWEST (-INFINITY)
#elif defined(OCAL_DTYPE_f64)
#define IS_FLOAT 1
#define VW 2
typedef double2 TV;
#define OCAL_AS_TV as_double2
#define T_MAX ((double)INFINITY)
#define T_LOWEST ((double)-INFINITY)
#elif defined(OCAL_DTYPE_i32)
#define IS_SIGNED 1
#define VW 4
typedef int4 TV;
#define OCAL_AS_TV as_int4
#define T_MAX INT_MAX
#define T_LOWEST INT_MIN
#elif defined(OCAL_DTYPE_u32)
#define VW 4
typedef uint4 TV;
#define OCAL_AS_TV as_uint4
#define T_MAX UINT_MAX
#define T_LOWEST 0u
#elif defined(OCAL_DTYPE_i64)
#define IS_SIGNED 1
#define VW 2
typedef long2 TV;
#define OCAL_AS_TV as_long2
#define T_MAX LONG_MAX
#define T_LOWEST LONG_MIN
#elif defined(OCAL_DTYPE_u64)
#define VW 2
typedef ulong2 TV;
#define OCAL_AS_TV as_ulong2
#define T_MAX ULONG_MAX
#define T_LOWEST 0ul
#elif defined(OCAL_DTYPE_u8)
#define VW 16
typedef uchar16 TV;
#define OCAL_AS_TV as_uchar16
#define T_MAX ((uchar)255)
#define T_LOWEST ((uchar)0)
#elif defined(OCAL_DTYPE_f16) || defined(OCAL_DTYPE_bf16)
/* f16 and bf16: 16-bit storage (OCAL_TS), values and sums in f32; the host passes -DT=ushort,
 * the storage, which the compute type replaces here. Four elements per vector load (8
 * bytes, aligned by the host as for any type): the f32 lanes of the compensated sums stay
 * four. f16 goes through the core vload_half/vloada_half4/vstore_half_rte (no cl_khr_fp16),
 * bf16 through bit operations. */
#undef T
#define T float
#define IS_FLOAT 1
#define VW 4
typedef float4 TV;
#define T_MAX INFINITY
#define T_LOWEST (-INFINITY)
#ifdef OCAL_DTYPE_f16
#define OCAL_TS half
#define OCAL_LD1(ocal_p, ocal_i) vload_half((ocal_i), (ocal_p))
#define OCAL_LDV(ocal_p) vloada_half4(0, (ocal_p))
#define OCAL_ST1(ocal_p, ocal_i, ocal_v) vstore_half_rte((ocal_v), (ocal_i), (ocal_p))
#else
#define OCAL_TS ushort
#define OCAL_LD1(ocal_p, ocal_i) as_float((uint)(ocal_p)[ocal_i] << 16)
#define OCAL_LDV(ocal_p) as_float4(convert_uint4(*(__global const ushort4 *)(ocal_p)) << 16)
#define OCAL_ST1(ocal_p, ocal_i, ocal_v) ((ocal_p)[ocal_i] = ocal_bf16_round(ocal_v))
#endif
#else
#error "reduce.cl: unsupported element type"
#endif

/* Loads and stores of the storage type: T itself, except for the half types above. */
#ifndef OCAL_TS
#define OCAL_TS T
#define OCAL_LD1(ocal_p, ocal_i) ((ocal_p)[ocal_i])
#if defined(OCAL_RED_LDH) && OCAL_RED_LDH > 1
#define OCAL_RED_HINTED 1
#define OCAL_LDV(ocal_p) ocal_ldv_hinted((__global const TV *)(ocal_p))
#else
#define OCAL_LDV(ocal_p) (*(__global const TV *)(ocal_p))
#endif
#define OCAL_ST1(ocal_p, ocal_i, ocal_v) ((ocal_p)[ocal_i] = (ocal_v))
#endif

/* -DOCAL_RED_LDH=N (the contig and strided_v kernels of 16-byte types; src/ops/reduce_common.c
 * asks for it only where the driver reports a PTX compute capability): the vector loads
 * carry an NVIDIA cache hint, one 16-byte ld.global, N naming the qualifiers (1: plain
 * OpenCL loads; f16 and bf16, whose vectors are 8 bytes, keep them). A device without PTX fails
 * the build, and the host then keeps plain loads. */
#include "ptx_load.cl"
#ifdef OCAL_RED_HINTED
#if OCAL_RED_LDH == 2
#define OCAL_RED_LDH_Q ".cs"
#elif OCAL_RED_LDH == 3
#define OCAL_RED_LDH_Q ".nc"
#elif OCAL_RED_LDH == 4
#define OCAL_RED_LDH_Q ".nc.L1::no_allocate"
#elif OCAL_RED_LDH == 5
#define OCAL_RED_LDH_Q ".L2::256B"
#elif OCAL_RED_LDH == 6
#define OCAL_RED_LDH_Q ".nc.L1::no_allocate.L2::256B"
#elif OCAL_RED_LDH == 7
#define OCAL_RED_LDH_Q ".cs.L2::256B"
#elif OCAL_RED_LDH == 8
#define OCAL_RED_LDH_Q ".L1::no_allocate"
#elif OCAL_RED_LDH == 9
#define OCAL_RED_LDH_Q ".lu"
#else
#error "reduce.cl: OCAL_RED_LDH is 1..9"
#endif
OCAL_PTX_LOAD_V4(ocal_ldv_hinted, TV, TV, OCAL_AS_TV, OCAL_RED_LDH_Q)
#endif

#ifndef IS_FLOAT
#define IS_FLOAT 0
#endif
#ifndef IS_SIGNED
#define IS_SIGNED 0
#endif

/* ocal_ACCF: the floating type of means, variances and norms. ocal_ACCV: OCAL_NL lanes of it. */
#if IS_FLOAT
typedef T ocal_ACCF;
typedef TV ocal_ACCV;
#define OCAL_NL VW
#elif defined(OCAL_HAVE_DOUBLE)
typedef double ocal_ACCF;
typedef double2 ocal_ACCV;
#define OCAL_NL 2
#else
typedef float ocal_ACCF;
typedef float2 ocal_ACCV;
#define OCAL_NL 2
#endif

/* Integers are summed and multiplied as 64-bit two's complement (wrapping), as unsigned
 * arithmetic so that overflow is defined; signed inputs are sign-extended first. */
#if IS_SIGNED
#define OCAL_TO_U64(ocal_v) ((ulong)(long)(ocal_v))
#define OCAL_U64_TO_ACCF(ocal_u) ((ocal_ACCF)(long)(ocal_u))
#else
#define OCAL_TO_U64(ocal_v) ((ulong)(ocal_v))
#define OCAL_U64_TO_ACCF(ocal_u) ((ocal_ACCF)(ocal_u))
#endif

/* M(component, offset) for every component of a TV; P(c0, c1, offset) for every pair. */
#if VW == 2
#define OCAL_FOR_LANES(M) M(s0, 0) M(s1, 1)
#define OCAL_FOR_PAIRS(P) P(s0, s1, 0)
#elif VW == 4
#define OCAL_FOR_LANES(M) M(s0, 0) M(s1, 1) M(s2, 2) M(s3, 3)
#define OCAL_FOR_PAIRS(P) P(s0, s1, 0) P(s2, s3, 2)
#else
#define OCAL_FOR_LANES(M)                                                                 \
  M(s0, 0) M(s1, 1) M(s2, 2) M(s3, 3) M(s4, 4) M(s5, 5) M(s6, 6) M(s7, 7) M(s8, 8)        \
  M(s9, 9) M(sa, 10) M(sb, 11) M(sc, 12) M(sd, 13) M(se, 14) M(sf, 15)
#define OCAL_FOR_PAIRS(P)                                                                 \
  P(s0, s1, 0) P(s2, s3, 2) P(s4, s5, 4) P(s6, s7, 6) P(s8, s9, 8) P(sa, sb, 10)          \
  P(sc, sd, 12) P(se, sf, 14)
#endif

/* OCAL_RED_FOLDV(C, v): the VW components of v combined by C in a balanced tree.
 * OCAL_RED_GATHER(M, i): the TV of M(i), M(i + 1), ... M(i + VW - 1). */
#if VW == 2
#define OCAL_RED_FOLDV(C, v) C((v).s0, (v).s1)
#define OCAL_RED_GATHER(M, i) ((TV)(M(i), M((i) + 1)))
#elif VW == 4
#define OCAL_RED_FOLDV(C, v) C(C((v).s0, (v).s1), C((v).s2, (v).s3))
#define OCAL_RED_GATHER(M, i) ((TV)(M(i), M((i) + 1), M((i) + 2), M((i) + 3)))
#else
#define OCAL_RED_FOLDV(C, v)                                                              \
  C(C(C(C((v).s0, (v).s1), C((v).s2, (v).s3)), C(C((v).s4, (v).s5), C((v).s6, (v).s7))),  \
    C(C(C((v).s8, (v).s9), C((v).sa, (v).sb)), C(C((v).sc, (v).sd), C((v).se, (v).sf))))
#define OCAL_RED_GATHER(M, i)                                                             \
  ((TV)(M(i), M((i) + 1), M((i) + 2), M((i) + 3), M((i) + 4), M((i) + 5), M((i) + 6),     \
        M((i) + 7), M((i) + 8), M((i) + 9), M((i) + 10), M((i) + 11), M((i) + 12),         \
        M((i) + 13), M((i) + 14), M((i) + 15)))
#endif

/* ---- the input ------------------------------------------------------------------------ */
/* The built-in reductions read x[xoff + i] and y[yoff + i] (dot; the others pass y = x and
 * never use its values, whose loads the compiler then drops). A generated reduction's
 * prologue defines its own. */
#ifndef OCAL_RED_IN_PARAMS
#define OCAL_RED_IN_PARAMS                                                                \
  __global const OCAL_TS *ocal_x, const ulong ocal_xoff, __global const OCAL_TS *ocal_y,  \
      const ulong ocal_yoff
#define OCAL_RED_X(ocal_i) OCAL_LD1(ocal_x, ocal_xoff + (ocal_i))
#define OCAL_RED_Y(ocal_i) OCAL_LD1(ocal_y, ocal_yoff + (ocal_i))
#define OCAL_RED_XV(ocal_i) OCAL_LDV(ocal_x + ocal_xoff + (ocal_i))
#define OCAL_RED_YV(ocal_i) OCAL_LDV(ocal_y + ocal_yoff + (ocal_i))
/* Scalar elements from flat index b to the first VW-aligned one; all of them (any value
 * beyond R) when x and y are aligned differently. */
#define OCAL_RED_HEAD(ocal_b)                                                             \
  ((ocal_xoff + (ocal_b)) % VW != (ocal_yoff + (ocal_b)) % VW                             \
       ? ~(ulong)0                                                                        \
       : (VW - (ocal_xoff + (ocal_b)) % VW) % VW)
/* Cursors: the kernels read through a cursor set at a flat index and moved along by
 * element offsets. A built-in's is a pair of pointers that advance: addressing every load
 * from the buffer's start instead, x + xoff + (p + k * inner), is slower on NVIDIA
 * (docs/reduce.md#code-generation). */
#define OCAL_RED_CURSOR(ocal_c, ocal_i)                                                   \
  __global const OCAL_TS *ocal_c##_x = ocal_x + ocal_xoff + (ocal_i),                     \
                         *ocal_c##_y = ocal_y + ocal_yoff + (ocal_i)
#define OCAL_RED_CX(ocal_c, ocal_d) OCAL_LD1(ocal_c##_x, ocal_d)
#define OCAL_RED_CY(ocal_c, ocal_d) OCAL_LD1(ocal_c##_y, ocal_d)
#define OCAL_RED_CXV(ocal_c, ocal_d) OCAL_LDV(ocal_c##_x + (ocal_d))
#define OCAL_RED_CYV(ocal_c, ocal_d) OCAL_LDV(ocal_c##_y + (ocal_d))
#define OCAL_RED_ADVANCE(ocal_c, ocal_d) (ocal_c##_x += (ocal_d), ocal_c##_y += (ocal_d))
#endif

/* A generated reduction's cursor is the flat index its OCAL_RED_X and OCAL_RED_XV gather
 * from (its prologue may define its own). */
#ifndef OCAL_RED_CURSOR
#define OCAL_RED_CURSOR(ocal_c, ocal_i) ulong ocal_c = (ocal_i)
#define OCAL_RED_CX(ocal_c, ocal_d) OCAL_RED_X((ocal_c) + (ocal_d))
#define OCAL_RED_CY(ocal_c, ocal_d) OCAL_RED_Y((ocal_c) + (ocal_d))
#define OCAL_RED_CXV(ocal_c, ocal_d) OCAL_RED_XV((ocal_c) + (ocal_d))
#define OCAL_RED_CYV(ocal_c, ocal_d) OCAL_RED_YV((ocal_c) + (ocal_d))
#define OCAL_RED_ADVANCE(ocal_c, ocal_d) (ocal_c += (ocal_d))
#endif

/* ---- stores ------------------------------------------------------------------------ */
void ocal_store_T(__global void *ocal_d, ulong ocal_i, T ocal_v) {
  OCAL_ST1((__global OCAL_TS *)ocal_d, ocal_i, ocal_v);
}
void ocal_store_u64(__global void *ocal_d, ulong ocal_i, ulong ocal_v) {
  ((__global ulong *)ocal_d)[ocal_i] = ocal_v;
}
void ocal_store_f(__global void *ocal_d, ulong ocal_i, int ocal_kind, ocal_ACCF ocal_v) {
  if (ocal_kind == OCAL_KIND_F16) {
    vstore_half_rte((float)ocal_v, ocal_i, (__global half *)ocal_d);
    return;
  }
  if (ocal_kind == OCAL_KIND_BF16) {
    ((__global ushort *)ocal_d)[ocal_i] = ocal_bf16_round((float)ocal_v);
    return;
  }
#ifdef OCAL_HAVE_DOUBLE
  if (ocal_kind == OCAL_KIND_F64) {
    ((__global double *)ocal_d)[ocal_i] = (double)ocal_v;
    return;
  }
#endif
  ((__global float *)ocal_d)[ocal_i] = (float)ocal_v;
}

/* ---- compensated sums in OCAL_NL lanes --------------------------------------------------- */
typedef struct {
  ocal_ACCV ocal_s; /* the sums */
  ocal_ACCV ocal_c; /* their compensations */
} ocal_nsum_st;

ocal_nsum_st ocal_nsum_init(void) {
  ocal_nsum_st ocal_a;
  ocal_a.ocal_s = (ocal_ACCV)(0);
  ocal_a.ocal_c = (ocal_ACCV)(0);
  return ocal_a;
}

/* Neumaier's step in every lane: s + v exactly equals t + (the rounding error). */
void ocal_nsum_addv(ocal_nsum_st *ocal_a, ocal_ACCV ocal_v) {
  ocal_ACCV ocal_t = ocal_a->ocal_s + ocal_v;
  ocal_a->ocal_c += select((ocal_v - ocal_t) + ocal_a->ocal_s, (ocal_a->ocal_s - ocal_t) + ocal_v,
                      isgreaterequal(fabs(ocal_a->ocal_s), fabs(ocal_v)));
  ocal_a->ocal_s = ocal_t;
}

void ocal_nsum_add1(ocal_nsum_st *ocal_a, ocal_ACCF ocal_v) {
  ocal_ACCV ocal_w = (ocal_ACCV)(0);
  ocal_w.s0 = ocal_v;
  ocal_nsum_addv(ocal_a, ocal_w);
}

void ocal_nsum_merge(ocal_nsum_st *ocal_a, ocal_nsum_st ocal_b) {
  ocal_nsum_addv(ocal_a, ocal_b.ocal_s);
  ocal_a->ocal_c += ocal_b.ocal_c;
}

/* Folds the lanes into one value. A non-finite sum is returned as it is: an infinity must
 * not turn into NaN through its compensation (inf - inf). */
ocal_ACCF ocal_nsum_fold(ocal_nsum_st ocal_a) {
  ocal_ACCF ocal_s = ocal_a.ocal_s.s0, ocal_c = 0;
#define OCAL_NSUM_FOLD_LANE(cmp, k)                                                        \
  if (k > 0) {                                                                            \
    ocal_ACCF ocal_v = ocal_a.ocal_s.cmp, ocal_t = ocal_s + ocal_v;                            \
    ocal_c += fabs(ocal_s) >= fabs(ocal_v) ? (ocal_s - ocal_t) + ocal_v                   \
                                           : (ocal_v - ocal_t) + ocal_s;                  \
    ocal_s = ocal_t;                                                                      \
  }                                                                                       \
  ocal_c += ocal_a.ocal_c.cmp;
#if OCAL_NL == 4
  OCAL_NSUM_FOLD_LANE(s0, 0) OCAL_NSUM_FOLD_LANE(s1, 1) OCAL_NSUM_FOLD_LANE(s2, 2)
  OCAL_NSUM_FOLD_LANE(s3, 3)
#else
  OCAL_NSUM_FOLD_LANE(s0, 0) OCAL_NSUM_FOLD_LANE(s1, 1)
#endif
#undef OCAL_NSUM_FOLD_LANE
  return isfinite(ocal_s) ? ocal_s + ocal_c : ocal_s;
}

/* Four scalars into the lanes (OCAL_NL is 2 or 4). */
void ocal_nsum_add4(ocal_nsum_st *ocal_a, ocal_ACCF ocal_v0, ocal_ACCF ocal_v1, ocal_ACCF ocal_v2,
                    ocal_ACCF ocal_v3) {
#if OCAL_NL == 4
  ocal_nsum_addv(ocal_a, (ocal_ACCV)(ocal_v0, ocal_v1, ocal_v2, ocal_v3));
#else
  ocal_nsum_addv(ocal_a, (ocal_ACCV)(ocal_v0, ocal_v1));
  ocal_nsum_addv(ocal_a, (ocal_ACCV)(ocal_v2, ocal_v3));
#endif
}

/* ---- the generic operation ------------------------------------------------------------
 * OCAL_RED_PLAIN(NAME): an operation defined by
 *   NAME_S                     its state: one value, or a vector of independent lanes
 *                              (combined componentwise; the final step folds them);
 *   NAME_NEUTRAL               the state of no elements (the identity in every lane);
 *   NAME_COMBINE(a, b)         two states combined (associative and commutative: the
 *                              kernels combine in trees, not left to right);
 *   NAME_MAP1(x, y)            the state of one element whose input values are x and y;
 *   NAME_MAP4(x0, .., y3)      the state of four elements;
 *   NAME_MAPV(x, y)            the state of the VW elements of the vectors x and y (this is
 *                              where the built-ins keep their vector arithmetic; a generated
 *                              reduction falls back to OCAL_RED_FOLDV of its combination);
 *   NAME_FINAL(d, i, kind, a, count, mode)   stores state a as result i of d.
 * OCAL_RED_COMPENSATED(NAME): a float sum of the mapped values in OCAL_NL lanes, with
 * Neumaier's compensation, defined by
 *   NAME_MAP1(x, y)            one element's value (ocal_ACCF);
 *   NAME_MAPV(x, y)            VW elements' values (ocal_ACCV; float inputs, where OCAL_NL is
 *                              VW; integer inputs go in by pairs of NAME_MAP1);
 *   NAME_FIX1(a, x, y, m), NAME_FIXV(a, x, y, m)   statements that may add the rounding error
 *                              of a mapped value m to the compensation a->ocal_c (dot: the
 *                              product's, exactly, by fma), or nothing;
 *   NAME_FINAL(d, i, kind, r, count, mode)   stores the folded sum r as result i of d. */
#define OCAL_RED_PLAIN(NAME)                                                                  \
  /* Mapped values are bound to a local first: COMBINE may name its arguments more than     \
   * once (max and min with NaN tests do), and NVIDIA's compiler does not merge the copies   \
   * (docs/reduce.md#code-generation). */                                                   \
  typedef NAME##_S NAME##_st;                                                                 \
  NAME##_st NAME##_init(void) { return NAME##_NEUTRAL; }                                      \
  void NAME##_add1(NAME##_st *ocal_a, T ocal_x, T ocal_y, ulong ocal_i) {                     \
    const NAME##_st ocal_m = NAME##_MAP1(ocal_x, ocal_y);                                     \
    *ocal_a = NAME##_COMBINE(*ocal_a, ocal_m);                                                \
  }                                                                                           \
  void NAME##_add4(NAME##_st *ocal_a, T ocal_x0, T ocal_x1, T ocal_x2, T ocal_x3, T ocal_y0,  \
                   T ocal_y1, T ocal_y2, T ocal_y3, ulong ocal_i) {                           \
    const NAME##_st ocal_m =                                                                  \
        NAME##_MAP4(ocal_x0, ocal_x1, ocal_x2, ocal_x3, ocal_y0, ocal_y1, ocal_y2, ocal_y3);  \
    *ocal_a = NAME##_COMBINE(*ocal_a, ocal_m);                                                \
  }                                                                                           \
  void NAME##_addv(NAME##_st *ocal_a, TV ocal_x, TV ocal_y, ulong ocal_i) {                   \
    const NAME##_st ocal_m = NAME##_MAPV(ocal_x, ocal_y);                                     \
    *ocal_a = NAME##_COMBINE(*ocal_a, ocal_m);                                                \
  }                                                                                           \
  void NAME##_merge(NAME##_st *ocal_a, NAME##_st ocal_b) {                                    \
    *ocal_a = NAME##_COMBINE(*ocal_a, ocal_b);                                                \
  }                                                                                           \
  void NAME##_final(__global void *ocal_d, ulong ocal_i, int ocal_kind, NAME##_st ocal_a,     \
                    ulong ocal_count, long ocal_ddof, int ocal_mode) {                        \
    NAME##_FINAL(ocal_d, ocal_i, ocal_kind, ocal_a, ocal_count, ocal_mode);                   \
  }

/* How OCAL_RED_COMPENSATED folds in VW and four elements. */
#if IS_FLOAT
#define OCAL_NSUM_ADDV(NAME, ocal_a, ocal_x, ocal_y)                                          \
  {                                                                                           \
    const ocal_ACCV ocal_m = NAME##_MAPV(ocal_x, ocal_y);                                     \
    ocal_nsum_addv(ocal_a, ocal_m);                                                           \
    NAME##_FIXV(ocal_a, ocal_x, ocal_y, ocal_m);                                              \
  }
#if VW == 4
#define OCAL_NSUM_ADD4(NAME, ocal_a, x0, x1, x2, x3, y0, y1, y2, y3) \
  NAME##_addv(ocal_a, (TV)(x0, x1, x2, x3), (TV)(y0, y1, y2, y3), 0);
#else
#define OCAL_NSUM_ADD4(NAME, ocal_a, x0, x1, x2, x3, y0, y1, y2, y3) \
  NAME##_addv(ocal_a, (TV)(x0, x1), (TV)(y0, y1), 0);                \
  NAME##_addv(ocal_a, (TV)(x2, x3), (TV)(y2, y3), 0);
#endif
#else
#define OCAL_NSUM_PAIR_OF(NAME, ocal_a, ocal_x, ocal_y, c0, c1)                           \
  ocal_nsum_addv(ocal_a, (ocal_ACCV)(NAME##_MAP1(ocal_x.c0, ocal_y.c0),                   \
                                     NAME##_MAP1(ocal_x.c1, ocal_y.c1)));
#if VW == 2
#define OCAL_NSUM_PAIRS(NAME, a, x, y) OCAL_NSUM_PAIR_OF(NAME, a, x, y, s0, s1)
#elif VW == 4
#define OCAL_NSUM_PAIRS(NAME, a, x, y) \
  OCAL_NSUM_PAIR_OF(NAME, a, x, y, s0, s1) OCAL_NSUM_PAIR_OF(NAME, a, x, y, s2, s3)
#else
#define OCAL_NSUM_PAIRS(NAME, a, x, y)                                                    \
  OCAL_NSUM_PAIR_OF(NAME, a, x, y, s0, s1) OCAL_NSUM_PAIR_OF(NAME, a, x, y, s2, s3)       \
  OCAL_NSUM_PAIR_OF(NAME, a, x, y, s4, s5) OCAL_NSUM_PAIR_OF(NAME, a, x, y, s6, s7)       \
  OCAL_NSUM_PAIR_OF(NAME, a, x, y, s8, s9) OCAL_NSUM_PAIR_OF(NAME, a, x, y, sa, sb)       \
  OCAL_NSUM_PAIR_OF(NAME, a, x, y, sc, sd) OCAL_NSUM_PAIR_OF(NAME, a, x, y, se, sf)
#endif
/* Integer inputs: ocal_ACCV has two lanes, which VW elements enter by pairs. */
#define OCAL_NSUM_ADDV(NAME, ocal_a, ocal_x, ocal_y) { OCAL_NSUM_PAIRS(NAME, ocal_a, ocal_x, ocal_y) }
#define OCAL_NSUM_ADD4(NAME, ocal_a, x0, x1, x2, x3, y0, y1, y2, y3)                     \
  ocal_nsum_add4(ocal_a, NAME##_MAP1(x0, y0), NAME##_MAP1(x1, y1), NAME##_MAP1(x2, y2),   \
                 NAME##_MAP1(x3, y3));
#endif

#define OCAL_RED_COMPENSATED(NAME)                                                            \
  typedef ocal_nsum_st NAME##_st;                                                             \
  NAME##_st NAME##_init(void) { return ocal_nsum_init(); }                                    \
  void NAME##_add1(NAME##_st *ocal_a, T ocal_x, T ocal_y, ulong ocal_i) {                     \
    const ocal_ACCF ocal_m = NAME##_MAP1(ocal_x, ocal_y);                                     \
    ocal_nsum_add1(ocal_a, ocal_m);                                                           \
    NAME##_FIX1(ocal_a, ocal_x, ocal_y, ocal_m);                                              \
  }                                                                                           \
  void NAME##_addv(NAME##_st *ocal_a, TV ocal_x, TV ocal_y, ulong ocal_i)                     \
      OCAL_NSUM_ADDV(NAME, ocal_a, ocal_x, ocal_y)                                            \
  void NAME##_add4(NAME##_st *ocal_a, T ocal_x0, T ocal_x1, T ocal_x2, T ocal_x3, T ocal_y0,  \
                   T ocal_y1, T ocal_y2, T ocal_y3, ulong ocal_i) {                           \
    OCAL_NSUM_ADD4(NAME, ocal_a, ocal_x0, ocal_x1, ocal_x2, ocal_x3, ocal_y0, ocal_y1,        \
                   ocal_y2, ocal_y3)                                                          \
  }                                                                                           \
  void NAME##_merge(NAME##_st *ocal_a, NAME##_st ocal_b) { ocal_nsum_merge(ocal_a, ocal_b); } \
  void NAME##_final(__global void *ocal_d, ulong ocal_i, int ocal_kind, NAME##_st ocal_a,     \
                    ulong ocal_count, long ocal_ddof, int ocal_mode) {                        \
    NAME##_FINAL(ocal_d, ocal_i, ocal_kind, ocal_nsum_fold(ocal_a), ocal_count, ocal_mode);   \
  }
#define OCAL_RED_NOFIX(ocal_a, ocal_x, ocal_y, ocal_m)

#ifndef OCAL_RED_USER
/* ---- the built-in operations ------------------------------------------------------------ */

/* ---- sum (and mean: mode 1 divides by count) ---------------------------------------- */
#if IS_FLOAT
#define sum_MAP1(x, y) (x)
#define sum_MAPV(x, y) (x)
#define sum_FIX1 OCAL_RED_NOFIX
#define sum_FIXV OCAL_RED_NOFIX
#define sum_FINAL(d, i, kind, r, count, mode) ocal_store_T(d, i, (mode) == 1 ? (r) / (T)(count) : (r))
OCAL_RED_COMPENSATED(sum)
#else
ulong sum_lanes(TV x) {
  ulong s = 0;
#define SUM_LANE(cmp, k) s += OCAL_TO_U64(x.cmp);
  OCAL_FOR_LANES(SUM_LANE)
#undef SUM_LANE
  return s;
}
#define sum_S ulong
#define sum_NEUTRAL 0
#define sum_COMBINE(a, b) ((a) + (b))
#define sum_MAP1(x, y) OCAL_TO_U64(x)
#define sum_MAP4(x0, x1, x2, x3, y0, y1, y2, y3) \
  ((OCAL_TO_U64(x0) + OCAL_TO_U64(x1)) + (OCAL_TO_U64(x2) + OCAL_TO_U64(x3)))
#define sum_MAPV(x, y) sum_lanes(x)
#define sum_FINAL(d, i, kind, a, count, mode)                                    \
  if ((mode) == 1)                                                               \
    ocal_store_f(d, i, kind, OCAL_U64_TO_ACCF(a) / (ocal_ACCF)(count));          \
  else                                                                           \
    ocal_store_u64(d, i, a);
OCAL_RED_PLAIN(sum)
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
#define WIDE_LO(x, hi) ((ocal_ACCF)(long)((ulong)(x) - (ulong)convert_long_sat(hi)))
#elif !defined(OCAL_ACC_FP64) && defined(OCAL_DTYPE_u64)
#define WIDE_LO(x, hi) ((ocal_ACCF)(long)((x) - convert_ulong_sat(hi)))
#endif

/* ---- float sum of any type (the mean of 64-bit integers, whose exact sum can leave the
 * 64-bit range: NumPy too sums them in float64). A registered operation: without doubles
 * each element enters as two values (WIDE_LO). ----------------------------------------- */
typedef ocal_nsum_st fsum_st;
fsum_st fsum_init(void) { return ocal_nsum_init(); }
#ifdef WIDE_LO
void fsum_add1(fsum_st *a, T x, T y, ulong i) {
  ocal_ACCF hi = (ocal_ACCF)x;
  ocal_nsum_add1(a, hi);
  ocal_nsum_add1(a, WIDE_LO(x, hi));
}
void fsum_add4(fsum_st *a, T x0, T x1, T x2, T x3, T y0, T y1, T y2, T y3, ulong i) {
  fsum_add1(a, x0, y0, i);
  fsum_add1(a, x1, y1, i);
  fsum_add1(a, x2, y2, i);
  fsum_add1(a, x3, y3, i);
}
#define FSUM_LANE(cmp, k) fsum_add1(a, x.cmp, x.cmp, i + k);
void fsum_addv(fsum_st *a, TV x, TV y, ulong i) { OCAL_FOR_LANES(FSUM_LANE) }
#undef FSUM_LANE
#else
void fsum_add1(fsum_st *a, T x, T y, ulong i) { ocal_nsum_add1(a, (ocal_ACCF)x); }
void fsum_add4(fsum_st *a, T x0, T x1, T x2, T x3, T y0, T y1, T y2, T y3, ulong i) {
  ocal_nsum_add4(a, (ocal_ACCF)x0, (ocal_ACCF)x1, (ocal_ACCF)x2, (ocal_ACCF)x3);
}
#endif
#if IS_FLOAT
void fsum_addv(fsum_st *a, TV x, TV y, ulong i) { ocal_nsum_addv(a, x); }
#elif defined(WIDE_LO)
/* fsum_addv: above */
#else
void fsum_addv(fsum_st *a, TV x, TV y, ulong i) {
#define FSUM_PAIR(c0, c1, k) ocal_nsum_addv(a, (ocal_ACCV)((ocal_ACCF)x.c0, (ocal_ACCF)x.c1));
  OCAL_FOR_PAIRS(FSUM_PAIR)
#undef FSUM_PAIR
}
#endif
void fsum_merge(fsum_st *a, fsum_st b) { ocal_nsum_merge(a, b); }
void fsum_final(__global void *d, ulong i, int kind, fsum_st a, ulong count, long ddof,
                int mode) {
  ocal_ACCF r = ocal_nsum_fold(a);
  if (mode == 1) r = r / (ocal_ACCF)count;
  ocal_store_f(d, i, kind, r);
}

/* ---- product: floats in VW lanes, multiplied together at the end ------------------------- */
#if IS_FLOAT
TV prod_lift(T x) {
  TV v = (TV)(1);
  v.s0 = x;
  return v;
}
T prod_lanes(TV a) {
  T r = 1;
#define PROD_LANE(cmp, k) r *= a.cmp;
  OCAL_FOR_LANES(PROD_LANE)
#undef PROD_LANE
  return r;
}
#define prod_S TV
#define prod_NEUTRAL ((TV)(1))
#define prod_MAP1(x, y) prod_lift(x)
#if VW == 4
#define prod_MAP4(x0, x1, x2, x3, y0, y1, y2, y3) ((TV)(x0, x1, x2, x3))
#else
#define prod_MAP4(x0, x1, x2, x3, y0, y1, y2, y3) ((TV)(x0, x1) * (TV)(x2, x3))
#endif
#define prod_FINAL(d, i, kind, a, count, mode) ocal_store_T(d, i, prod_lanes(a));
#else
ulong prod_lanes(TV x) {
  ulong p = 1;
#define PROD_LANE(cmp, k) p *= OCAL_TO_U64(x.cmp);
  OCAL_FOR_LANES(PROD_LANE)
#undef PROD_LANE
  return p;
}
#define prod_S ulong
#define prod_NEUTRAL 1
#define prod_MAP1(x, y) OCAL_TO_U64(x)
#define prod_MAP4(x0, x1, x2, x3, y0, y1, y2, y3) \
  ((OCAL_TO_U64(x0) * OCAL_TO_U64(x1)) * (OCAL_TO_U64(x2) * OCAL_TO_U64(x3)))
#define prod_FINAL(d, i, kind, a, count, mode) ocal_store_u64(d, i, a);
#endif
#define prod_COMBINE(a, b) ((a) * (b))
#if IS_FLOAT
#define prod_MAPV(x, y) (x)
#else
#define prod_MAPV(x, y) prod_lanes(x)
#endif
OCAL_RED_PLAIN(prod)

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

/* The lanes folded into the result. */
#define DEFINE_LANES_FOLD(NAME)                                                              \
  T NAME##_lanes(TV a) {                                                                     \
    T r = a.s0;                                                                              \
    OCAL_FOR_LANES(NAME##_FOLD_LANE)                                                         \
    return r;                                                                                \
  }
#define minimum_FOLD_LANE(cmp, k) r = MIN1(r, a.cmp);
#define maximum_FOLD_LANE(cmp, k) r = MAX1(r, a.cmp);
DEFINE_LANES_FOLD(minimum)
DEFINE_LANES_FOLD(maximum)
#define minimum_S TV
#define minimum_NEUTRAL ((TV)(T_MAX))
#define minimum_COMBINE(a, b) MIN2(a, b)
#define minimum_MAP1(x, y) ((TV)(x))
#define minimum_MAP4(x0, x1, x2, x3, y0, y1, y2, y3) ((TV)(MIN1(MIN1(x0, x1), MIN1(x2, x3))))
#define minimum_MAPV(x, y) (x)
#define minimum_FINAL(d, i, kind, a, count, mode) ocal_store_T(d, i, minimum_lanes(a));
OCAL_RED_PLAIN(minimum)
#define maximum_S TV
#define maximum_NEUTRAL ((TV)(T_LOWEST))
#define maximum_COMBINE(a, b) MAX2(a, b)
#define maximum_MAP1(x, y) ((TV)(x))
#define maximum_MAP4(x0, x1, x2, x3, y0, y1, y2, y3) ((TV)(MAX1(MAX1(x0, x1), MAX1(x2, x3))))
#define maximum_MAPV(x, y) (x)
#define maximum_FINAL(d, i, kind, a, count, mode) ocal_store_T(d, i, maximum_lanes(a));
OCAL_RED_PLAIN(maximum)

/* ---- argmin and argmax: the first index of the extreme; the first NaN wins ------------ */
typedef struct {
  ulong i; /* OCAL_NONE_INDEX while empty */
  T v;
} arg_st;

/* States with padding bytes are made from zeroed words, so that copies of them are fully
 * initialised (the one-pass reduction publishes every byte of a state: cl/reduce.cl's
 * NAME_publish, which Oclgrind checks). */
#define OCAL_ZEROED(ST, v)                                 \
  union {                                                  \
    ST ocal_s;                                             \
    ulong ocal_w[4];                                       \
  } v;                                                     \
  for (int ocal_k = 0; ocal_k < 4; ocal_k++) v.ocal_w[ocal_k] = 0;

arg_st arg_init(void) {
  OCAL_ZEROED(arg_st, u)
  u.ocal_s.i = OCAL_NONE_INDEX;
  u.ocal_s.v = 0;
  return u.ocal_s;
}

/* Whether candidate (v, i) replaces the current (a->v, a->i). LESS says which is better. */
#if IS_FLOAT
#define ARG_TAKES(S_, V_, I_, LESS)                                                     \
  ((S_)->i == OCAL_NONE_INDEX ||                                                        \
   (isnan(V_) ? (!isnan((S_)->v) || (I_) < (S_)->i)                                     \
              : (!isnan((S_)->v) && (LESS((V_), (S_)->v) || ((V_) == (S_)->v && (I_) < (S_)->i)))))
#else
#define ARG_TAKES(S_, V_, I_, LESS) \
  ((S_)->i == OCAL_NONE_INDEX || LESS((V_), (S_)->v) || ((V_) == (S_)->v && (I_) < (S_)->i))
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
  void NAME##_addv(NAME##_st *a, TV x, TV y, ulong i) { OCAL_FOR_LANES(NAME##_ADD_LANE) }    \
  void NAME##_merge(NAME##_st *a, NAME##_st b) {                                             \
    if (b.i != OCAL_NONE_INDEX) NAME##_add1(a, b.v, b.v, b.i);                               \
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
ocal_ACCF sumsq_map1(T x) {
  ocal_ACCF f = (ocal_ACCF)x / (ocal_ACCF)WIDE_SCALE;
  return f * f;
}
#define sumsq_MAP1(x, y) sumsq_map1(x)
#define sumsq_MAPV(x, y) ((x) * (x))
#define sumsq_FIX1 OCAL_RED_NOFIX
#define sumsq_FIXV OCAL_RED_NOFIX
#define sumsq_FINAL(d, i, kind, r, count, mode)                                          \
  ocal_store_f(d, i, kind,                                                               \
               (mode) == 2 ? sqrt(r) * (ocal_ACCF)WIDE_SCALE                             \
                           : (r) * (ocal_ACCF)WIDE_SCALE * (ocal_ACCF)WIDE_SCALE);
OCAL_RED_COMPENSATED(sumsq)

/* ---- dot ------------------------------------------------------------------------------ */
#if IS_FLOAT
/* Products are split exactly into p + e (fma gives e), as in Ogita, Rump and Oishi's Dot2:
 * p goes into the compensated sum, e into its compensation. */
#define dotp_MAP1(x, y) ((x) * (y))
#define dotp_MAPV(x, y) ((x) * (y))
#define dotp_FIX1(a, x, y, m) (a)->ocal_c.s0 += fma(x, y, -(m));
#define dotp_FIXV(a, x, y, m) (a)->ocal_c += fma(x, y, -(m));
#define dotp_FINAL(d, i, kind, r, count, mode) ocal_store_T(d, i, r);
OCAL_RED_COMPENSATED(dotp)
#else
ulong dotp_lanes(TV x, TV y) {
  ulong s = 0;
#define DOT_LANE(cmp, k) s += OCAL_TO_U64(x.cmp) * OCAL_TO_U64(y.cmp);
  OCAL_FOR_LANES(DOT_LANE)
#undef DOT_LANE
  return s;
}
#define dotp_S ulong
#define dotp_NEUTRAL 0
#define dotp_COMBINE(a, b) ((a) + (b))
#define dotp_MAP1(x, y) (OCAL_TO_U64(x) * OCAL_TO_U64(y))
#define dotp_MAP4(x0, x1, x2, x3, y0, y1, y2, y3)                    \
  ((OCAL_TO_U64(x0) * OCAL_TO_U64(y0) + OCAL_TO_U64(x1) * OCAL_TO_U64(y1)) + \
   (OCAL_TO_U64(x2) * OCAL_TO_U64(y2) + OCAL_TO_U64(x3) * OCAL_TO_U64(y3)))
#define dotp_MAPV(x, y) dotp_lanes(x, y)
#define dotp_FINAL(d, i, kind, a, count, mode) ocal_store_u64(d, i, a);
OCAL_RED_PLAIN(dotp)
#endif

/* ---- variance (mode 2: standard deviation) ---------------------------------------------
 * A work-item sums d = x - k and d*d, with k its first element (shifted sums: no division
 * per element, and no cancellation as long as k is near the mean, which a sample is);
 * states merge with Chan's formula and then hold (k = mean, s1 = 0, s2 = M2). */
typedef struct {
  ulong n;
  ocal_ACCF k;
  ocal_ACCF s1;
  ocal_ACCF s2;
} var_st;

var_st var_init(void) {
  OCAL_ZEROED(var_st, u)
  return u.ocal_s;
}
void var_add1(var_st *a, T x, T y, ulong i) {
  ocal_ACCF f = (ocal_ACCF)x / (ocal_ACCF)WIDE_SCALE;
  if (a->n == 0) a->k = f;
  ocal_ACCF d = f - a->k;
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
void var_addv(var_st *a, TV x, TV y, ulong i) { OCAL_FOR_LANES(VAR_LANE) }
#undef VAR_LANE
void var_merge(var_st *a, var_st b) {
  if (b.n == 0) return;
  if (a->n == 0) {
    *a = b;
    return;
  }
  ocal_ACCF na = (ocal_ACCF)a->n, nb = (ocal_ACCF)b.n, n = na + nb;
  ocal_ACCF ma = a->k + a->s1 / na, mb = b.k + b.s1 / nb;
  ocal_ACCF m2a = a->s2 - a->s1 * (a->s1 / na), m2b = b.s2 - b.s1 * (b.s1 / nb);
  ocal_ACCF delta = mb - ma;
  a->k = ma + delta * (nb / n);
  a->s1 = 0;
  a->s2 = m2a + m2b + delta * delta * (na * (nb / n));
  a->n += b.n;
}
void var_final(__global void *d, ulong i, int kind, var_st a, ulong count, long ddof, int mode) {
  ocal_ACCF r;
  if ((long)a.n - ddof <= 0) {
    r = (ocal_ACCF)NAN;
  } else {
    ocal_ACCF m2 = a.s2 - a.s1 * (a.s1 / (ocal_ACCF)a.n);
    r = (m2 < 0 ? (ocal_ACCF)0 : m2) / (ocal_ACCF)((long)a.n - ddof); /* NaN stays NaN */
    if (mode == 2) r = sqrt(r) * (ocal_ACCF)WIDE_SCALE;
    else r = r * (ocal_ACCF)WIDE_SCALE * (ocal_ACCF)WIDE_SCALE;
  }
  ocal_store_f(d, i, kind, r);
}
#endif /* !OCAL_RED_USER: the built-in operations */

#ifdef OCAL_RED_USER
/* ---- a generated reduction (ocal_gen_reduction, src/gen) ---------------------------------
 * The prologue has compiled the user's texts into ocal_user_combine(a, b) and
 * ocal_user_neutral(), and defined the input (OCAL_RED_X: the map expression at flat index
 * i). Its values are T (the generator's type). A float "a + b" is the built-in sum's
 * compensated operation (OCAL_RED_USER_COMPENSATED); any other combination is evaluated as
 * written, one value per state, VW values folded in a balanced tree. */
#define ocal_user_MAP1(ocal_x, ocal_y) (ocal_x)
#ifdef OCAL_RED_USER_COMPENSATED
#define ocal_user_MAPV(ocal_x, ocal_y) (ocal_x)
#define ocal_user_FIX1 OCAL_RED_NOFIX
#define ocal_user_FIXV OCAL_RED_NOFIX
#define ocal_user_FINAL(ocal_d, ocal_i, ocal_kind, ocal_r, ocal_count, ocal_mode) \
  ocal_store_T(ocal_d, ocal_i, ocal_r);
OCAL_RED_COMPENSATED(ocal_user)
#else
#define ocal_user_S T
#define ocal_user_NEUTRAL ocal_user_neutral()
#define ocal_user_COMBINE(ocal_a, ocal_b) ocal_user_combine(ocal_a, ocal_b)
#define ocal_user_MAP4(ocal_x0, ocal_x1, ocal_x2, ocal_x3, ocal_y0, ocal_y1, ocal_y2, ocal_y3) \
  ocal_user_combine(ocal_user_combine(ocal_x0, ocal_x1), ocal_user_combine(ocal_x2, ocal_x3))
#define ocal_user_MAPV(ocal_x, ocal_y) OCAL_RED_FOLDV(ocal_user_combine, ocal_x)
#define ocal_user_FINAL(ocal_d, ocal_i, ocal_kind, ocal_a, ocal_count, ocal_mode) \
  ocal_store_T(ocal_d, ocal_i, ocal_a);
OCAL_RED_PLAIN(ocal_user)
#endif
#endif /* OCAL_RED_USER */

/* ---- one pass: the last work-group merges the others' states ------------------------------
 * A single-output contig reduction with chunks > 1 and ocal_fin_epoch != 0 (the host asks for
 * it where the device has 64-bit atomics) needs no second launch: each group publishes its
 * state to the state buffer `fin` (src/core's look-back state, which the scans use too: word
 * 0 a ticket counter, then 64 bytes per group) and takes two tickets; the group that takes
 * the last ticket merges every group's state, group 0 first, in the order merge_group does,
 * so the result depends on the launch shape only, never on which group ran last.
 * A state is published as eight 64-bit words, each 32 bits of it beside a tag, (epoch << 2)
 * | 3, exchanged atomically; the last group reads them with volatile loads and waits for
 * every word to carry this launch's tag. So nothing depends on the order in which groups
 * see each other's stores, which OpenCL 1.2 does not promise (the same design as the scans'
 * packed words: docs/scan.md). A device without 64-bit atomics keeps the second launch. */
#if defined(cl_khr_int64_base_atomics)
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#define OCAL_RED_ONE_PASS 1
#define OCAL_RED_FIN_TAG(ocal_e) ((ulong)(((ocal_e) << 2) | 3u))
#define OCAL_RED_FIN_FUNCS(NAME)                                                               \
  typedef union {                                                                            \
    NAME##_st ocal_s;                                                                        \
    uint ocal_w[8];                                                                          \
  } NAME##_words;                                                                            \
  void NAME##_publish(__global uint *ocal_fin, ulong ocal_g, NAME##_st ocal_st, uint ocal_e) { \
    NAME##_words ocal_u;                                                                     \
    for (int ocal_k = 0; ocal_k < 8; ocal_k++) ocal_u.ocal_w[ocal_k] = 0;                   \
    ocal_u.ocal_s = ocal_st;                                                                 \
    volatile __global ulong *ocal_p = (volatile __global ulong *)(ocal_fin + 4) + 8 * ocal_g; \
    for (int ocal_k = 0; ocal_k < (int)((sizeof(NAME##_st) + 3) / 4); ocal_k++)              \
      atom_xchg(ocal_p + ocal_k, ((ulong)ocal_u.ocal_w[ocal_k] << 32) | OCAL_RED_FIN_TAG(ocal_e)); \
  }                                                                                          \
  /* Every word is loaded before any is checked: one round trip per state, not one per word  \
   * (the last group's merge is on the critical path of the whole reduction). */             \
  void NAME##_take_load(__global uint *ocal_fin, ulong ocal_g, ulong *ocal_w) {              \
    volatile __global ulong *ocal_p = (volatile __global ulong *)(ocal_fin + 4) + 8 * ocal_g; \
    for (int ocal_k = 0; ocal_k < (int)((sizeof(NAME##_st) + 3) / 4); ocal_k++)              \
      ocal_w[ocal_k] = ocal_p[ocal_k];                                                       \
  }                                                                                          \
  NAME##_st NAME##_take_check(__global uint *ocal_fin, ulong ocal_g, uint ocal_e,            \
                              ulong *ocal_w) {                                               \
    NAME##_words ocal_u;                                                                     \
    for (int ocal_k = 0; ocal_k < 8; ocal_k++) ocal_u.ocal_w[ocal_k] = 0;                   \
    volatile __global ulong *ocal_p = (volatile __global ulong *)(ocal_fin + 4) + 8 * ocal_g; \
    for (int ocal_k = 0; ocal_k < (int)((sizeof(NAME##_st) + 3) / 4); ocal_k++) {            \
      while ((uint)ocal_w[ocal_k] != (uint)OCAL_RED_FIN_TAG(ocal_e))                         \
        ocal_w[ocal_k] = ocal_p[ocal_k];                                                     \
      ocal_u.ocal_w[ocal_k] = (uint)(ocal_w[ocal_k] >> 32);                                  \
    }                                                                                        \
    return ocal_u.ocal_s;                                                                    \
  }
/* In the contig kernel after its group tree (ocal_scratch[0] holds the group's state). */
#define OCAL_RED_FINISH(NAME)                                                                  \
  if (ocal_lid == 0) {                                                                       \
    NAME##_publish(ocal_fin, ocal_g, ocal_scratch[0], ocal_fin_epoch);                       \
    const uint ocal_ticket = atomic_add(ocal_fin, 2u) - ocal_fin_base;                       \
    ocal_last[0] = ocal_ticket == 2u * (uint)(get_num_groups(0) - 1);                        \
  }                                                                                          \
  barrier(CLK_LOCAL_MEM_FENCE);                                                              \
  if (ocal_last[0]) {                                                                        \
    NAME##_st ocal_m = NAME##_init();                                                        \
    /* States s and s + L loaded together, merged in the order s, s + L, s + 2L, ... */      \
    for (ulong ocal_s = ocal_lid; ocal_s < ocal_chunks; ocal_s += 2 * (ulong)ocal_L) {       \
      ulong ocal_wa[8], ocal_wb[8];                                                          \
      const int ocal_two = ocal_s + ocal_L < ocal_chunks;                                    \
      NAME##_take_load(ocal_fin, ocal_s, ocal_wa);                                           \
      if (ocal_two) NAME##_take_load(ocal_fin, ocal_s + ocal_L, ocal_wb);                    \
      NAME##_merge(&ocal_m, NAME##_take_check(ocal_fin, ocal_s, ocal_fin_epoch, ocal_wa));   \
      if (ocal_two)                                                                          \
        NAME##_merge(&ocal_m,                                                                \
                     NAME##_take_check(ocal_fin, ocal_s + ocal_L, ocal_fin_epoch, ocal_wb)); \
    }                                                                                        \
    OCAL_GROUP_TREE(NAME, ocal_m)                                                            \
    if (ocal_lid == 0)                                                                       \
      NAME##_final(ocal_dst, ocal_doff, ocal_kind, ocal_scratch[0], ocal_count, ocal_ddof,   \
                   ocal_mode);                                                               \
  }
#define OCAL_RED_LAST_DECL __local uint ocal_last[1];
#define OCAL_RED_FIN_ON (ocal_fin_epoch != 0 && ocal_chunks > 1)
#else
#define OCAL_RED_FIN_FUNCS(NAME)
#define OCAL_RED_LAST_DECL
#define OCAL_RED_FIN_ON 0
#define OCAL_RED_FINISH(NAME)
#endif

/* Vectors in flight per work-item in the contig kernel's GPU loop (1, 2, 4 or 8): the host
 * may set it (OCAL_REDUCE_TUNE's unroll); the order of the sums does not depend on it. */
#ifndef OCAL_RED_UNROLL
#define OCAL_RED_UNROLL 4 /* 2 and 8 were slower on an H100: docs/reduce.md */
#endif
#if OCAL_RED_UNROLL == 1
#define OCAL_RED_REP(M, X) M(X, 0)
#elif OCAL_RED_UNROLL == 2
#define OCAL_RED_REP(M, X) M(X, 0) M(X, 1)
#elif OCAL_RED_UNROLL == 4
#define OCAL_RED_REP(M, X) M(X, 0) M(X, 1) M(X, 2) M(X, 3)
#elif OCAL_RED_UNROLL == 8
#define OCAL_RED_REP(M, X) M(X, 0) M(X, 1) M(X, 2) M(X, 3) M(X, 4) M(X, 5) M(X, 6) M(X, 7)
#else
#error "reduce.cl: OCAL_RED_UNROLL is 1, 2, 4 or 8"
#endif
#define OCAL_RED_UNROLL_LOAD(NAME, k)                                                          \
  const ulong ocal_p##k = (ocal_v + (k) * ocal_stride) * VW;                                 \
  TV ocal_a##k = OCAL_RED_CXV(ocal_cv, ocal_p##k), ocal_b##k = OCAL_RED_CYV(ocal_cv, ocal_p##k);
#define OCAL_RED_UNROLL_ADD(NAME, k) NAME##_addv(&ocal_st, ocal_a##k, ocal_b##k, ocal_head + ocal_p##k);

/* OCAL_RED_PIPE=1 (OCAL_REDUCE_TUNE's pipe): the contig and strided_v loops load the next
 * step's vectors before they fold in the current ones, so that a work-item keeps loads in
 * flight while it computes (a compensated sum spends longer there than a max). The order of
 * the sums is the same as without it. */
#ifndef OCAL_RED_PIPE
#define OCAL_RED_PIPE 0
#endif
#if OCAL_RED_PIPE
#define OCAL_RED_PL_DECL(NAME, k) TV ocal_pa##k, ocal_pb##k;
#define OCAL_RED_PL_FIRST(NAME, k)                                                             \
  ocal_pa##k = OCAL_RED_CXV(ocal_cv, (ocal_v + (k) * ocal_stride) * VW);                     \
  ocal_pb##k = OCAL_RED_CYV(ocal_cv, (ocal_v + (k) * ocal_stride) * VW);
#define OCAL_RED_PL_NEXT(NAME, k)                                                              \
  const ulong ocal_q##k = (ocal_v + (OCAL_RED_UNROLL + (k)) * ocal_stride) * VW;             \
  const TV ocal_qa##k = OCAL_RED_CXV(ocal_cv, ocal_q##k), ocal_qb##k = OCAL_RED_CYV(ocal_cv, ocal_q##k);
#define OCAL_RED_PL_ADD(NAME, k)                                                               \
  NAME##_addv(&ocal_st, ocal_pa##k, ocal_pb##k, ocal_head + (ocal_v + (k) * ocal_stride) * VW);
#define OCAL_RED_PL_SHIFT(NAME, k) ocal_pa##k = ocal_qa##k; ocal_pb##k = ocal_qb##k;
#define OCAL_RED_PIPE_CONTIG(NAME)                                                             \
  if (ocal_v + (OCAL_RED_UNROLL - 1) * ocal_stride < ocal_nvec) {                            \
    OCAL_RED_REP(OCAL_RED_PL_DECL, NAME)                                                     \
    OCAL_RED_REP(OCAL_RED_PL_FIRST, NAME)                                                    \
    for (; ocal_v + (2 * OCAL_RED_UNROLL - 1) * ocal_stride < ocal_nvec;                     \
         ocal_v += OCAL_RED_UNROLL * ocal_stride) {                                          \
      OCAL_RED_REP(OCAL_RED_PL_NEXT, NAME)                                                   \
      OCAL_RED_REP(OCAL_RED_PL_ADD, NAME)                                                    \
      OCAL_RED_REP(OCAL_RED_PL_SHIFT, NAME)                                                  \
    }                                                                                        \
    OCAL_RED_REP(OCAL_RED_PL_ADD, NAME)                                                      \
    ocal_v += OCAL_RED_UNROLL * ocal_stride;                                                 \
  }
#else
#define OCAL_RED_PIPE_CONTIG(NAME)
#endif

/* ---- the kernels ----------------------------------------------------------------------- */
#define OCAL_RED_KERNEL_ARGS                                                                \
  OCAL_RED_IN_PARAMS, const ulong ocal_outer, const ulong ocal_R, const ulong ocal_inner,   \
      const ulong ocal_chunks, const ulong ocal_clen, __global void *ocal_dst,              \
      const ulong ocal_doff, const int ocal_kind, const ulong ocal_count,                   \
      const long ocal_ddof, const int ocal_mode, __global uint *ocal_fin,                   \
      const uint ocal_fin_base, const uint ocal_fin_epoch

#define OCAL_RED_MERGE_ARGS(NAME)                                                           \
  __global const NAME##_st *ocal_P, const ulong ocal_outer, const ulong ocal_S,             \
      const ulong ocal_inner, __global void *ocal_dst, const ulong ocal_doff,               \
      const int ocal_kind, const ulong ocal_count, const long ocal_ddof, const int ocal_mode

/* Tree reduction of the work-group's states in local memory; the result is ocal_scratch[0]. */
#define OCAL_GROUP_TREE(NAME, ocal_sv)                                        \
  ocal_scratch[ocal_lid] = ocal_sv;                                           \
  barrier(CLK_LOCAL_MEM_FENCE);                                               \
  for (uint ocal_h = ocal_L >> 1; ocal_h > 0; ocal_h >>= 1) {                 \
    if (ocal_lid < ocal_h) {                                                  \
      NAME##_st ocal_t = ocal_scratch[ocal_lid];                              \
      NAME##_merge(&ocal_t, ocal_scratch[ocal_lid + ocal_h]);                 \
      ocal_scratch[ocal_lid] = ocal_t;                                        \
    }                                                                         \
    barrier(CLK_LOCAL_MEM_FENCE);                                             \
  }

/* The scalar elements of a contig row (the head and tail beside the vectors: fewer than 2 VW
 * for the built-ins, whose loop below is then the one-at-a-time loop alone). An input that
 * gathers (OCAL_RED_GATHERS: a generated reduction's map) sets OCAL_RED_HEAD to the whole row
 * on GPUs (clen 0), whose work-items then read neighbouring elements (coalesced scalar loads,
 * where a gathered vector would be VW scalar loads 16 bytes apart across the work-items),
 * four loads in flight, folded in by one NAME_add4 (whose elements are then not consecutive:
 * only an operation that ignores their indices, ocal_user, is built with OCAL_RED_GATHERS). */
#ifdef OCAL_RED_GATHERS
#define OCAL_RED_SCALARS4(NAME)                                                               \
  for (; ocal_t + 3 * ocal_stride < ocal_nscalar; ocal_t += 4 * ocal_stride) {               \
    ulong ocal_r4[4];                                                                         \
    T ocal_x4[4], ocal_y4[4];                                                                \
    for (int ocal_k = 0; ocal_k < 4; ocal_k++) {                                             \
      const ulong ocal_u = ocal_t + ocal_k * ocal_stride;                                    \
      ocal_r4[ocal_k] = ocal_u < ocal_head ? ocal_u : ocal_vend + (ocal_u - ocal_head);       \
      ocal_x4[ocal_k] = OCAL_RED_X(ocal_rb + ocal_r4[ocal_k]);                                \
      ocal_y4[ocal_k] = OCAL_RED_Y(ocal_rb + ocal_r4[ocal_k]);                                \
    }                                                                                        \
    NAME##_add4(&ocal_st, ocal_x4[0], ocal_x4[1], ocal_x4[2], ocal_x4[3], ocal_y4[0],         \
                ocal_y4[1], ocal_y4[2], ocal_y4[3], ocal_r4[0]);                             \
  }
#else
#define OCAL_RED_SCALARS4(NAME)
#endif

#define OCAL_RED_CONTIG(NAME)                                                                  \
  /* Rows of R contiguous elements; group g reduces every chunks-th vector of row g/chunks  \
   * (a grid-stride loop over the row), aligned vector loads in the middle of the row. */   \
  __kernel void NAME##_contig(OCAL_RED_KERNEL_ARGS) {                                        \
    __local NAME##_st ocal_scratch[OCAL_WG_MAX];                                             \
    OCAL_RED_LAST_DECL                                                                       \
    const uint ocal_lid = get_local_id(0), ocal_L = get_local_size(0);                       \
    const ulong ocal_g = get_group_id(0), ocal_o = ocal_g / ocal_chunks,                     \
                ocal_c = ocal_g % ocal_chunks;                                               \
    const ulong ocal_rb = ocal_o * ocal_R; /* the row's first flat index */                  \
    NAME##_st ocal_st = NAME##_init();                                                       \
    /* Scalar head up to the first VW-aligned element; all scalar when x and y disagree. */ \
    ulong ocal_head = OCAL_RED_HEAD(ocal_rb);                                                \
    if (ocal_head > ocal_R) ocal_head = ocal_R;                                              \
    const ulong ocal_nvec = (ocal_R - ocal_head) / VW, ocal_vend = ocal_head + ocal_nvec * VW; \
    const ulong ocal_stride = ocal_chunks * ocal_L;                                          \
    OCAL_RED_CURSOR(ocal_cv, ocal_rb + ocal_head); /* at vector 0 */                         \
    if (ocal_clen != 0) {                                                                    \
      /* CPUs (clen 1): a contiguous range per work-item, which runs alone as a loop. */      \
      const ulong ocal_per = (ocal_nvec + ocal_stride - 1) / ocal_stride,                    \
                  ocal_v0 = (ocal_c * ocal_L + ocal_lid) * ocal_per;                         \
      const ulong ocal_v1 = ocal_v0 + ocal_per < ocal_nvec ? ocal_v0 + ocal_per : ocal_nvec; \
      for (ulong ocal_w = ocal_v0; ocal_w < ocal_v1; ocal_w++)                               \
        NAME##_addv(&ocal_st, OCAL_RED_CXV(ocal_cv, ocal_w * VW),                            \
                    OCAL_RED_CYV(ocal_cv, ocal_w * VW), ocal_head + ocal_w * VW);            \
    } else {                                                                                 \
      /* GPUs: neighbouring work-items read neighbouring vectors (coalesced), with       \
       * OCAL_RED_UNROLL of them in flight. */                                                \
      ulong ocal_v = ocal_c * ocal_L + ocal_lid;                                             \
      OCAL_RED_PIPE_CONTIG(NAME)                                                             \
      for (; ocal_v + (OCAL_RED_UNROLL - 1) * ocal_stride < ocal_nvec;                       \
           ocal_v += OCAL_RED_UNROLL * ocal_stride) {                                        \
        OCAL_RED_REP(OCAL_RED_UNROLL_LOAD, NAME)                                             \
        OCAL_RED_REP(OCAL_RED_UNROLL_ADD, NAME)                                              \
      }                                                                                      \
      for (; ocal_v < ocal_nvec; ocal_v += ocal_stride)                                      \
        NAME##_addv(&ocal_st, OCAL_RED_CXV(ocal_cv, ocal_v * VW),                            \
                    OCAL_RED_CYV(ocal_cv, ocal_v * VW), ocal_head + ocal_v * VW);            \
    }                                                                                        \
    const ulong ocal_nscalar = ocal_head + (ocal_R - ocal_vend);                             \
    ulong ocal_t = ocal_c * ocal_L + ocal_lid;                                               \
    OCAL_RED_SCALARS4(NAME)                                                                  \
    for (; ocal_t < ocal_nscalar; ocal_t += ocal_stride) {                                   \
      ulong ocal_r = ocal_t < ocal_head ? ocal_t : ocal_vend + (ocal_t - ocal_head);         \
      NAME##_add1(&ocal_st, OCAL_RED_X(ocal_rb + ocal_r), OCAL_RED_Y(ocal_rb + ocal_r),      \
                  ocal_r);                                                                   \
    }                                                                                        \
    OCAL_GROUP_TREE(NAME, ocal_st)                                                           \
    if (OCAL_RED_FIN_ON) {                                                                   \
      OCAL_RED_FINISH(NAME)                                                                  \
    } else if (ocal_lid == 0) {                                                              \
      if (ocal_chunks == 1)                                                                  \
        NAME##_final(ocal_dst, ocal_doff + ocal_o, ocal_kind, ocal_scratch[0], ocal_count,   \
                     ocal_ddof, ocal_mode);                                                  \
      else                                                                                   \
        ((__global NAME##_st *)ocal_dst)[ocal_g] = ocal_scratch[0];                          \
    }                                                                                        \
  }

/* Rows k * n1 (k < 4, or k < 8) from cursor c into P0.. P3 (P7): type TT, load LD. */
#define OCAL_RED_LOADS4(TT, LD, P, c, n1)                                                    \
  TT P##0 = LD(c, 0), P##1 = LD(c, n1), P##2 = LD(c, 2 * (n1)), P##3 = LD(c, 3 * (n1));
#define OCAL_RED_LOADS8(TT, LD, P, c, n1)                                                    \
  OCAL_RED_LOADS4(TT, LD, P, c, n1)                                                          \
  TT P##4 = LD(c, 4 * (n1)), P##5 = LD(c, 5 * (n1)), P##6 = LD(c, 6 * (n1)),                \
     P##7 = LD(c, 7 * (n1));

#define OCAL_RED_STRIDED(NAME)                                                                 \
  /* One work-item per (o, chunk s of clen rows of R, column j): neighbours read neighbouring \
   * columns, eight loads in flight into two independent states. */                        \
  __kernel void NAME##_strided(OCAL_RED_KERNEL_ARGS) {                                       \
    const ulong ocal_total = ocal_outer * ocal_chunks * ocal_inner;                          \
    for (ulong ocal_t = get_global_id(0); ocal_t < ocal_total; ocal_t += get_global_size(0)) { \
      const ulong ocal_j = ocal_t % ocal_inner, ocal_q = ocal_t / ocal_inner,                \
                  ocal_s = ocal_q % ocal_chunks, ocal_o = ocal_q / ocal_chunks;              \
      const ulong ocal_r0 = ocal_s * ocal_clen;                                              \
      const ulong ocal_r1 = ocal_r0 + ocal_clen < ocal_R ? ocal_r0 + ocal_clen : ocal_R;     \
      const ulong ocal_n1 = ocal_inner;                                                      \
      OCAL_RED_CURSOR(ocal_p, (ocal_o * ocal_R + ocal_r0) * ocal_inner + ocal_j);            \
      NAME##_st ocal_st = NAME##_init(), ocal_st2 = NAME##_init();                           \
      ulong ocal_r = ocal_r0;                                                                \
      for (; ocal_r + 8 <= ocal_r1; ocal_r += 8) {                                           \
        OCAL_RED_LOADS8(T, OCAL_RED_CX, ocal_a, ocal_p, ocal_n1)                             \
        OCAL_RED_LOADS8(T, OCAL_RED_CY, ocal_b, ocal_p, ocal_n1)                             \
        NAME##_add4(&ocal_st, ocal_a0, ocal_a1, ocal_a2, ocal_a3, ocal_b0, ocal_b1, ocal_b2, \
                    ocal_b3, ocal_r);                                                        \
        NAME##_add4(&ocal_st2, ocal_a4, ocal_a5, ocal_a6, ocal_a7, ocal_b4, ocal_b5, ocal_b6, \
                    ocal_b7, ocal_r + 4);                                                    \
        OCAL_RED_ADVANCE(ocal_p, 8 * ocal_n1);                                               \
      }                                                                                      \
      NAME##_merge(&ocal_st, ocal_st2);                                                      \
      for (; ocal_r + 4 <= ocal_r1; ocal_r += 4) {                                           \
        OCAL_RED_LOADS4(T, OCAL_RED_CX, ocal_a, ocal_p, ocal_n1)                             \
        OCAL_RED_LOADS4(T, OCAL_RED_CY, ocal_b, ocal_p, ocal_n1)                             \
        NAME##_add4(&ocal_st, ocal_a0, ocal_a1, ocal_a2, ocal_a3, ocal_b0, ocal_b1, ocal_b2, \
                    ocal_b3, ocal_r);                                                        \
        OCAL_RED_ADVANCE(ocal_p, 4 * ocal_n1);                                               \
      }                                                                                      \
      for (; ocal_r < ocal_r1; ocal_r++) {                                                   \
        NAME##_add1(&ocal_st, OCAL_RED_CX(ocal_p, 0), OCAL_RED_CY(ocal_p, 0), ocal_r);       \
        OCAL_RED_ADVANCE(ocal_p, ocal_n1);                                                   \
      }                                                                                      \
      if (ocal_chunks == 1)                                                                  \
        NAME##_final(ocal_dst, ocal_doff + ocal_o * ocal_inner + ocal_j, ocal_kind, ocal_st, \
                     ocal_count, ocal_ddof, ocal_mode);                                      \
      else                                                                                   \
        ((__global NAME##_st *)ocal_dst)[ocal_t] = ocal_st;                                  \
    }                                                                                        \
  }

#define OCAL_RED_MERGE_STRIDED(NAME)                                                           \
  /* Second pass, many outputs: states P[(o * S + s) * inner + j], s < S, per output. */    \
  __kernel void NAME##_merge_strided(OCAL_RED_MERGE_ARGS(NAME)) {                            \
    const ulong ocal_total = ocal_outer * ocal_inner;                                        \
    for (ulong ocal_t = get_global_id(0); ocal_t < ocal_total; ocal_t += get_global_size(0)) { \
      const ulong ocal_j = ocal_t % ocal_inner, ocal_o = ocal_t / ocal_inner;                \
      __global const NAME##_st *ocal_q = ocal_P + ocal_o * ocal_S * ocal_inner + ocal_j;     \
      NAME##_st ocal_st = ocal_q[0];                                                         \
      ulong ocal_s = 1;                                                                      \
      /* Eight states loaded before they are merged (in order): a work-item per output has   \
       * few neighbours to hide a load's latency behind. */                                  \
      for (; ocal_s + 8 <= ocal_S; ocal_s += 8) {                                            \
        const NAME##_st ocal_m0 = ocal_q[ocal_s * ocal_inner],                               \
                        ocal_m1 = ocal_q[(ocal_s + 1) * ocal_inner],                         \
                        ocal_m2 = ocal_q[(ocal_s + 2) * ocal_inner],                         \
                        ocal_m3 = ocal_q[(ocal_s + 3) * ocal_inner],                         \
                        ocal_m4 = ocal_q[(ocal_s + 4) * ocal_inner],                         \
                        ocal_m5 = ocal_q[(ocal_s + 5) * ocal_inner],                         \
                        ocal_m6 = ocal_q[(ocal_s + 6) * ocal_inner],                         \
                        ocal_m7 = ocal_q[(ocal_s + 7) * ocal_inner];                         \
        NAME##_merge(&ocal_st, ocal_m0);                                                     \
        NAME##_merge(&ocal_st, ocal_m1);                                                     \
        NAME##_merge(&ocal_st, ocal_m2);                                                     \
        NAME##_merge(&ocal_st, ocal_m3);                                                     \
        NAME##_merge(&ocal_st, ocal_m4);                                                     \
        NAME##_merge(&ocal_st, ocal_m5);                                                     \
        NAME##_merge(&ocal_st, ocal_m6);                                                     \
        NAME##_merge(&ocal_st, ocal_m7);                                                     \
      }                                                                                      \
      for (; ocal_s < ocal_S; ocal_s++) NAME##_merge(&ocal_st, ocal_q[ocal_s * ocal_inner]); \
      NAME##_final(ocal_dst, ocal_doff + ocal_t, ocal_kind, ocal_st, ocal_count, ocal_ddof,  \
                   ocal_mode);                                                               \
    }                                                                                        \
  }

#define OCAL_RED_MERGE_GROUP(NAME)                                                             \
  /* Second pass, few outputs: one work-group per output. */                                \
  __kernel void NAME##_merge_group(OCAL_RED_MERGE_ARGS(NAME)) {                              \
    __local NAME##_st ocal_scratch[OCAL_WG_MAX];                                             \
    const uint ocal_lid = get_local_id(0), ocal_L = get_local_size(0);                       \
    const ulong ocal_t = get_group_id(0), ocal_j = ocal_t % ocal_inner,                      \
                ocal_o = ocal_t / ocal_inner;                                                \
    NAME##_st ocal_st = NAME##_init();                                                       \
    for (ulong ocal_s = ocal_lid; ocal_s < ocal_S; ocal_s += ocal_L)                         \
      NAME##_merge(&ocal_st, ocal_P[(ocal_o * ocal_S + ocal_s) * ocal_inner + ocal_j]);      \
    OCAL_GROUP_TREE(NAME, ocal_st)                                                           \
    if (ocal_lid == 0)                                                                       \
      NAME##_final(ocal_dst, ocal_doff + ocal_t, ocal_kind, ocal_scratch[0], ocal_count,     \
                   ocal_ddof, ocal_mode);                                                    \
  }

/* NAME_strided_v: the strided kernel with VW neighbouring columns per work-item, read as one
 * vector per row, so that a row's read is VW times wider per work-item (GPUs fetch whole
 * 32-byte sectors; scalar column reads leave the memory system fewer, smaller requests in
 * flight). The host uses it when VW <= 4, inner % VW == 0 and the offsets are multiples of
 * VW (aligned vector loads); work-item t covers columns (t % (inner / VW)) * VW + 0..VW-1. */
#if VW == 2
#define OCAL_FOR_LANES_OF(X, NAME) X(NAME, s0, 0) X(NAME, s1, 1)
#elif VW == 4
#define OCAL_FOR_LANES_OF(X, NAME) X(NAME, s0, 0) X(NAME, s1, 1) X(NAME, s2, 2) X(NAME, s3, 3)
#endif
#define OCAL_SV_INIT(NAME, cmp, k) NAME##_st ocal_st##k = NAME##_init();
#define OCAL_SV_ADD4(NAME, cmp, k)                                                     \
  NAME##_add4(&ocal_st##k, ocal_a0.cmp, ocal_a1.cmp, ocal_a2.cmp, ocal_a3.cmp, ocal_b0.cmp, \
              ocal_b1.cmp, ocal_b2.cmp, ocal_b3.cmp, ocal_r);
#define OCAL_SV_ADD4_HI(NAME, cmp, k)                                                  \
  NAME##_add4(&ocal_st##k, ocal_a4.cmp, ocal_a5.cmp, ocal_a6.cmp, ocal_a7.cmp, ocal_b4.cmp, \
              ocal_b5.cmp, ocal_b6.cmp, ocal_b7.cmp, ocal_r + 4);
#define OCAL_SV_ADD1(NAME, cmp, k) NAME##_add1(&ocal_st##k, ocal_a0.cmp, ocal_b0.cmp, ocal_r);
#define OCAL_SV_STORE(NAME, cmp, k)                                                       \
  if (ocal_chunks == 1)                                                                   \
    NAME##_final(ocal_dst, ocal_doff + ocal_o * ocal_inner + ocal_j + k, ocal_kind,        \
                 ocal_st##k, ocal_count, ocal_ddof, ocal_mode);                           \
  else                                                                                    \
    ((__global NAME##_st *)ocal_dst)[(ocal_o * ocal_chunks + ocal_s) * ocal_inner + ocal_j + k] = \
        ocal_st##k;

/* Rows in flight per work-item of NAME_strided_v: 8, or 16 (OCAL_REDUCE_TUNE's rows): the
 * second eight are loaded with the first and added after them, so the sums' order is the
 * same as with 8 for every row that an 8-row step takes. */
#ifndef OCAL_RED_ROWS
#define OCAL_RED_ROWS 8
#endif
#if OCAL_RED_ROWS == 16
#define OCAL_SV_ADD4_C(NAME, cmp, k)                                                   \
  NAME##_add4(&ocal_st##k, ocal_c0.cmp, ocal_c1.cmp, ocal_c2.cmp, ocal_c3.cmp, ocal_d0.cmp, \
              ocal_d1.cmp, ocal_d2.cmp, ocal_d3.cmp, ocal_r + 8);
#define OCAL_SV_ADD4_C_HI(NAME, cmp, k)                                                \
  NAME##_add4(&ocal_st##k, ocal_c4.cmp, ocal_c5.cmp, ocal_c6.cmp, ocal_c7.cmp, ocal_d4.cmp, \
              ocal_d5.cmp, ocal_d6.cmp, ocal_d7.cmp, ocal_r + 12);
#define OCAL_SV_ROWS16(NAME)                                                                   \
  for (; ocal_r + 16 <= ocal_r1; ocal_r += 16) {                                             \
    OCAL_RED_LOADS8(TV, OCAL_RED_CXV, ocal_a, ocal_p, ocal_n1)                               \
    OCAL_RED_LOADS8(TV, OCAL_RED_CYV, ocal_b, ocal_p, ocal_n1)                               \
    OCAL_RED_ADVANCE(ocal_p, 8 * ocal_n1);                                                   \
    OCAL_RED_LOADS8(TV, OCAL_RED_CXV, ocal_c, ocal_p, ocal_n1)                               \
    OCAL_RED_LOADS8(TV, OCAL_RED_CYV, ocal_d, ocal_p, ocal_n1)                               \
    OCAL_RED_ADVANCE(ocal_p, 8 * ocal_n1);                                                   \
    OCAL_FOR_LANES_OF(OCAL_SV_ADD4, NAME)                                                    \
    OCAL_FOR_LANES_OF(OCAL_SV_ADD4_HI, NAME)                                                 \
    OCAL_FOR_LANES_OF(OCAL_SV_ADD4_C, NAME)                                                  \
    OCAL_FOR_LANES_OF(OCAL_SV_ADD4_C_HI, NAME)                                               \
  }
#elif OCAL_RED_ROWS == 8
#define OCAL_SV_ROWS16(NAME)
#else
#error "reduce.cl: OCAL_RED_ROWS is 8 or 16"
#endif

#if OCAL_RED_PIPE
/* The next eight rows (c, d) are loaded before the current ones (a, b) are added. */
#define OCAL_SV_SHIFT8(X)                                                                      \
  X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define OCAL_SV_MOVE(k) ocal_a##k = ocal_c##k; ocal_b##k = ocal_d##k;
#define OCAL_SV_LOADS8_INTO(LD, P, c, n1)                                                      \
  P##0 = LD(c, 0); P##1 = LD(c, n1); P##2 = LD(c, 2 * (n1)); P##3 = LD(c, 3 * (n1));         \
  P##4 = LD(c, 4 * (n1)); P##5 = LD(c, 5 * (n1)); P##6 = LD(c, 6 * (n1)); P##7 = LD(c, 7 * (n1));
#define OCAL_SV_PIPE(NAME)                                                                     \
  if (ocal_r + 8 <= ocal_r1) {                                                               \
    TV ocal_a0, ocal_a1, ocal_a2, ocal_a3, ocal_a4, ocal_a5, ocal_a6, ocal_a7;               \
    TV ocal_b0, ocal_b1, ocal_b2, ocal_b3, ocal_b4, ocal_b5, ocal_b6, ocal_b7;               \
    OCAL_SV_LOADS8_INTO(OCAL_RED_CXV, ocal_a, ocal_p, ocal_n1)                               \
    OCAL_SV_LOADS8_INTO(OCAL_RED_CYV, ocal_b, ocal_p, ocal_n1)                               \
    OCAL_RED_ADVANCE(ocal_p, 8 * ocal_n1);                                                   \
    for (; ocal_r + 16 <= ocal_r1; ocal_r += 8) {                                            \
      OCAL_RED_LOADS8(TV, OCAL_RED_CXV, ocal_c, ocal_p, ocal_n1)                             \
      OCAL_RED_LOADS8(TV, OCAL_RED_CYV, ocal_d, ocal_p, ocal_n1)                             \
      OCAL_RED_ADVANCE(ocal_p, 8 * ocal_n1);                                                 \
      OCAL_FOR_LANES_OF(OCAL_SV_ADD4, NAME)                                                  \
      OCAL_FOR_LANES_OF(OCAL_SV_ADD4_HI, NAME)                                               \
      OCAL_SV_SHIFT8(OCAL_SV_MOVE)                                                           \
    }                                                                                        \
    OCAL_FOR_LANES_OF(OCAL_SV_ADD4, NAME)                                                    \
    OCAL_FOR_LANES_OF(OCAL_SV_ADD4_HI, NAME)                                                 \
    ocal_r += 8;                                                                             \
  }
#else
#define OCAL_SV_PIPE(NAME)
#endif

#ifdef OCAL_FOR_LANES_OF
#define OCAL_RED_STRIDED_V(NAME)                                                               \
  __kernel void NAME##_strided_v(OCAL_RED_KERNEL_ARGS) {                                     \
    const ulong ocal_iv = ocal_inner / VW, ocal_total = ocal_outer * ocal_chunks * ocal_iv;  \
    for (ulong ocal_t = get_global_id(0); ocal_t < ocal_total; ocal_t += get_global_size(0)) { \
      const ulong ocal_jv = ocal_t % ocal_iv, ocal_q = ocal_t / ocal_iv,                     \
                  ocal_s = ocal_q % ocal_chunks, ocal_o = ocal_q / ocal_chunks,              \
                  ocal_j = ocal_jv * VW;                                                     \
      const ulong ocal_r0 = ocal_s * ocal_clen;                                              \
      const ulong ocal_r1 = ocal_r0 + ocal_clen < ocal_R ? ocal_r0 + ocal_clen : ocal_R;     \
      const ulong ocal_n1 = ocal_inner;                                                      \
      OCAL_RED_CURSOR(ocal_p, (ocal_o * ocal_R + ocal_r0) * ocal_inner + ocal_j);            \
      OCAL_FOR_LANES_OF(OCAL_SV_INIT, NAME)                                                  \
      ulong ocal_r = ocal_r0;                                                                \
      OCAL_SV_ROWS16(NAME)                                                                   \
      OCAL_SV_PIPE(NAME)                                                                     \
      for (; ocal_r + 8 <= ocal_r1; ocal_r += 8) {                                           \
        OCAL_RED_LOADS8(TV, OCAL_RED_CXV, ocal_a, ocal_p, ocal_n1)                           \
        OCAL_RED_LOADS8(TV, OCAL_RED_CYV, ocal_b, ocal_p, ocal_n1)                           \
        OCAL_FOR_LANES_OF(OCAL_SV_ADD4, NAME)                                                \
        OCAL_FOR_LANES_OF(OCAL_SV_ADD4_HI, NAME)                                             \
        OCAL_RED_ADVANCE(ocal_p, 8 * ocal_n1);                                               \
      }                                                                                      \
      for (; ocal_r < ocal_r1; ocal_r++) {                                                   \
        TV ocal_a0 = OCAL_RED_CXV(ocal_p, 0), ocal_b0 = OCAL_RED_CYV(ocal_p, 0);             \
        OCAL_FOR_LANES_OF(OCAL_SV_ADD1, NAME)                                                \
        OCAL_RED_ADVANCE(ocal_p, ocal_n1);                                                   \
      }                                                                                      \
      OCAL_FOR_LANES_OF(OCAL_SV_STORE, NAME)                                                 \
    }                                                                                        \
  }
#else
#define OCAL_RED_STRIDED_V(NAME) /* u8: VW is 16, too many states per work-item */
#endif

/* Only the kernel the host launches is compiled: the host names one operation and one kernel
 * (-DOCAL_ONLY -DOCAL_ONLY_<operation> -DOCAL_KERNEL -DOCAL_KERNEL_<kernel>), so a first
 * reduction compiles one small program instead of fifty kernels (seconds per type).
 * Without OCAL_ONLY_* every built-in kernel is built (tools and tests that compile the whole
 * file). */
#if defined(OCAL_KERNEL_contig) || !defined(OCAL_KERNEL)
#define OCAL_RED_K_contig(NAME) OCAL_RED_FIN_FUNCS(NAME) OCAL_RED_CONTIG(NAME)
#else
#define OCAL_RED_K_contig(NAME)
#endif
#if defined(OCAL_KERNEL_strided) || !defined(OCAL_KERNEL)
#define OCAL_RED_K_strided(NAME) OCAL_RED_STRIDED(NAME)
#else
#define OCAL_RED_K_strided(NAME)
#endif
#if defined(OCAL_KERNEL_merge_strided) || !defined(OCAL_KERNEL)
#define OCAL_RED_K_merge_strided(NAME) OCAL_RED_MERGE_STRIDED(NAME)
#else
#define OCAL_RED_K_merge_strided(NAME)
#endif
#if defined(OCAL_KERNEL_merge_group) || !defined(OCAL_KERNEL)
#define OCAL_RED_K_merge_group(NAME) OCAL_RED_MERGE_GROUP(NAME)
#else
#define OCAL_RED_K_merge_group(NAME)
#endif
#if defined(OCAL_KERNEL_strided_v) || !defined(OCAL_KERNEL)
#define OCAL_RED_K_strided_v(NAME) OCAL_RED_STRIDED_V(NAME)
#else
#define OCAL_RED_K_strided_v(NAME)
#endif
#define OCAL_RED_ALL_KERNELS(NAME)                                                         \
  OCAL_RED_K_contig(NAME) OCAL_RED_K_strided(NAME) OCAL_RED_K_merge_strided(NAME)         \
  OCAL_RED_K_merge_group(NAME) OCAL_RED_K_strided_v(NAME)

#ifdef OCAL_RED_USER
OCAL_RED_ALL_KERNELS(ocal_user)
#else
#if defined(OCAL_ONLY_sum) || !defined(OCAL_ONLY)
OCAL_RED_ALL_KERNELS(sum)
#endif
#if defined(OCAL_ONLY_prod) || !defined(OCAL_ONLY)
OCAL_RED_ALL_KERNELS(prod)
#endif
#if defined(OCAL_ONLY_minimum) || !defined(OCAL_ONLY)
OCAL_RED_ALL_KERNELS(minimum)
#endif
#if defined(OCAL_ONLY_maximum) || !defined(OCAL_ONLY)
OCAL_RED_ALL_KERNELS(maximum)
#endif
#if defined(OCAL_ONLY_argmin) || !defined(OCAL_ONLY)
OCAL_RED_ALL_KERNELS(argmin)
#endif
#if defined(OCAL_ONLY_argmax) || !defined(OCAL_ONLY)
OCAL_RED_ALL_KERNELS(argmax)
#endif
#if defined(OCAL_ONLY_sumsq) || !defined(OCAL_ONLY)
OCAL_RED_ALL_KERNELS(sumsq)
#endif
#if defined(OCAL_ONLY_dotp) || !defined(OCAL_ONLY)
OCAL_RED_ALL_KERNELS(dotp)
#endif
#if defined(OCAL_ONLY_var) || !defined(OCAL_ONLY)
OCAL_RED_ALL_KERNELS(var)
#endif
#if defined(OCAL_ONLY_fsum) || !defined(OCAL_ONLY)
OCAL_RED_ALL_KERNELS(fsum)
#endif
#endif
