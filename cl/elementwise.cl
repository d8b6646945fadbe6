/* ocal — elementwise kernels: unary, binary (flat, scalar, broadcast), where, axpby, cast,
 * arange, linspace. Built per operation and element types with -D options:
 *   -DT=<input type> -DR=<output type>  OpenCL C types (float, uint, uchar, ...)
 *   -DOP_<name>                        the operation (OP_exp, OP_add, ...)
 *   -DT_FLOAT / -DR_FLOAT               the type is floating-point
 *   -DT_SIGNED                          the input type is a signed integer
 *   -DVEC4                              offsets are multiples of 4: use 4-wide loads
 *   -DSCALAR_LEFT                       scalar kernels compute s op x instead of x op s
 *   -DIDX=uint|ulong                    index type of the broadcast kernels
 *   -DT_HALF / -DT_BF16, -DR_HALF / -DR_BF16  the buffer holds f16 or bf16 (T or R is then
 *                                       float: values are computed in f32)
 *   -DRTO=<type>                        cast and arange: the source type, converted to f32
 *                                       rounding to odd before a half output rounds it
 * Element offsets (views) come as arguments, counted in elements. */
#ifdef OCAL_NEED_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

/* Two levels, so that macro arguments (T, R) expand before they are pasted. */
#define OCAL_CAT_(a, b) a##b
#define OCAL_CAT(a, b) OCAL_CAT_(a, b)
#define OCAL_VEC(t, n) OCAL_CAT(t, n)
#define T4 OCAL_VEC(T, 4)
#define R4 OCAL_VEC(R, 4)

#include "prelude.cl"

/* ---- storage: loads give T, stores take R ---------------------------------------------
 * f16 is read and written with the core vload_half/vstore_half_rte (no cl_khr_fp16 needed);
 * bf16 with the prelude's ocal_bf16_load and ocal_bf16_round. */
#if defined(T_HALF)
#define TS half
#define LD_T(p, i) vload_half((i), (p))
/* VEC4 means 4-element-aligned offsets: the aligned forms (one 8-byte access) apply. */
#define LD_T4(p, i) vloada_half4((i), (p))
#elif defined(T_BF16)
#define TS ushort
#define LD_T(p, i) ocal_bf16_load((p)[i])
#define LD_T4(p, i) ocal_bf16_load4(vload4((i), (p)))
#else
#define TS T
#define LD_T(p, i) ((p)[i])
#define LD_T4(p, i) (((__global const T4 *)(p))[i])
#endif
#if defined(R_HALF)
#define RS half
#define ST_R(p, i, v) vstore_half_rte((v), (i), (p))
#define ST_R4(p, i, v) vstorea_half4_rte((v), (i), (p))
#elif defined(R_BF16)
#define RS ushort
#define ST_R(p, i, v) ((p)[i] = ocal_bf16_round(v))
#define ST_R4(p, i, v) vstore4(ocal_bf16_round4(v), (i), (p))
#else
#define RS R
#define ST_R(p, i, v) ((p)[i] = (v))
#define ST_R4(p, i, v) (((__global R4 *)(p))[i] = (v))
#endif

/* A value of type RTO to f32 rounding to odd (truncate, then set the last bit when anything
 * was dropped): rounding that to f16 or bf16 then equals rounding the value itself once,
 * where going through a round-to-nearest f32 could round twice (f64 or 64-bit integers to
 * bf16, for instance). */
#ifdef RTO
inline float ocal_rto(const RTO x) {
  float f = convert_float_rtz(x);
  if (!isinf(f) && (RTO)f != x) f = as_float(as_uint(f) | 1u);
  return f;
}
#endif

/* ---- unary operations, computed in the output type R ---------------------------------- */
#if defined(OP_neg)
#define F1(a) (-(a))
#elif defined(OP_abs)
#ifdef R_FLOAT
#define F1(a) fabs(a)
#else
#define F1(a) ((a) < (R)0 ? (R)(-(a)) : (a))
#endif
#elif defined(OP_sqrt)
#define F1(a) sqrt(a)
#elif defined(OP_rsqrt)
#define F1(a) rsqrt(a)
#elif defined(OP_exp)
#define F1(a) exp(a)
#elif defined(OP_log)
#define F1(a) log(a)
#elif defined(OP_log1p)
#define F1(a) log1p(a)
#elif defined(OP_expm1)
#define F1(a) expm1(a)
#elif defined(OP_sin)
#define F1(a) sin(a)
#elif defined(OP_cos)
#define F1(a) cos(a)
#elif defined(OP_tanh)
#define F1(a) tanh(a)
#elif defined(OP_sigmoid)
#define F1(a) ((R)1 / ((R)1 + exp(-(a))))
#elif defined(OP_relu)
/* a < 0 is false for NaN, so NaN passes through as in PyTorch. */
#define F1(a) ((a) < (R)0 ? (R)0 : (a))
#elif defined(OP_gelu)
/* The exact (erf) form, PyTorch's default, written with erfc: 1 + erf(t) = erfc(-t), which
 * for negative a keeps its relative accuracy where 1 + erf cancels (at a = -5 the f32 form
 * lost every digit of a 1e-6 result, which f16 outputs show). */
#define F1(a) ((R)0.5 * (a) * erfc((a) * (R)-0.70710678118654752440))
#elif defined(OP_floor)
#ifdef R_FLOAT
#define F1(a) floor(a)
#else
#define F1(a) (a)
#endif
#elif defined(OP_ceil)
#ifdef R_FLOAT
#define F1(a) ceil(a)
#else
#define F1(a) (a)
#endif
#elif defined(OP_round)
/* Half to even, like NumPy and PyTorch (rint), not C's round. */
#ifdef R_FLOAT
#define F1(a) rint(a)
#else
#define F1(a) (a)
#endif
#elif defined(OP_sign)
#ifdef R_FLOAT
#define F1(a) ((a) > (R)0 ? (R)1 : (a) < (R)0 ? (R)-1 : (a))
#else
#define F1(a) ((a) > (R)0 ? (R)1 : (a) < (R)0 ? (R)(-1) : (R)0)
#endif
#elif defined(OP_square)
#define F1(a) ((a) * (a))
#elif defined(OP_reciprocal)
#define F1(a) ((R)1 / (a))
#endif

/* ---- binary operations on T, giving R ------------------------------------------------- */
#if defined(OP_add)
#define F2(a, b) ((a) + (b))
#elif defined(OP_sub)
#define F2(a, b) ((a) - (b))
#elif defined(OP_mul)
#define F2(a, b) ((a) * (b))
#elif defined(OP_div)
#ifdef T_FLOAT
#define F2(a, b) ((a) / (b))
#else
#define F2(a, b) ocal_idiv(a, b)
#endif
#elif defined(OP_fmod)
#ifdef T_FLOAT
#define F2(a, b) fmod(a, b)
#else
#define F2(a, b) ocal_imod(a, b)
#endif
#elif defined(OP_floor_divide)
#ifdef T_FLOAT
#define F2(a, b) ocal_ffloordiv(a, b)
#else
#define F2(a, b) ocal_ifloordiv(a, b)
#endif
#elif defined(OP_remainder)
#ifdef T_FLOAT
#define F2(a, b) ocal_fremainder(a, b)
#else
#define F2(a, b) ocal_iremainder(a, b)
#endif
#elif defined(OP_pow)
#ifdef T_FLOAT
#define F2(a, b) pow(a, b)
#else
#define F2(a, b) ocal_ipow(a, b)
#endif
#elif defined(OP_min)
/* NaN propagates, as in NumPy's minimum and PyTorch's min. */
#ifdef T_FLOAT
#define F2(a, b) ((isnan(a) || (a) < (b)) ? (a) : (b))
#else
#define F2(a, b) min(a, b)
#endif
#elif defined(OP_max)
#ifdef T_FLOAT
#define F2(a, b) ((isnan(a) || (a) > (b)) ? (a) : (b))
#else
#define F2(a, b) max(a, b)
#endif
#elif defined(OP_atan2)
#define F2(a, b) atan2(a, b)
#elif defined(OP_eq)
#define F2(a, b) ((R)((a) == (b)))
#elif defined(OP_ne)
#define F2(a, b) ((R)((a) != (b)))
#elif defined(OP_lt)
#define F2(a, b) ((R)((a) < (b)))
#elif defined(OP_le)
#define F2(a, b) ((R)((a) <= (b)))
#elif defined(OP_gt)
#define F2(a, b) ((R)((a) > (b)))
#elif defined(OP_ge)
#define F2(a, b) ((R)((a) >= (b)))
#endif

#ifndef T_FLOAT
/* Integer division and remainder never trap: x / 0 gives 0 (NumPy's result), and
 * MIN / -1 wraps instead of faulting (x86 CPUs raise SIGFPE for both). */
inline T ocal_idiv(T a, T b) {
#ifdef T_SIGNED
  if (b == (T)(-1)) return (T)(0 - a);
#endif
  return b == (T)0 ? (T)0 : (T)(a / b);
}
inline T ocal_imod(T a, T b) {
#ifdef T_SIGNED
  if (b == (T)(-1)) return (T)0;
#endif
  return b == (T)0 ? (T)0 : (T)(a % b);
}
/* Floor division and the remainder with the divisor's sign (NumPy's // and %): the
 * truncated quotient, one less where the remainder is non-zero and of the other sign. */
inline T ocal_ifloordiv(T a, T b) {
  const T q = ocal_idiv(a, b);
#ifdef T_SIGNED
  const T r = ocal_imod(a, b);
  return (r != (T)0 && ((r < (T)0) != (b < (T)0))) ? (T)(q - (T)1) : q;
#else
  return q;
#endif
}
inline T ocal_iremainder(T a, T b) {
  const T r = ocal_imod(a, b);
#ifdef T_SIGNED
  return (r != (T)0 && ((r < (T)0) != (b < (T)0))) ? (T)(r + b) : r;
#else
  return r;
#endif
}
/* Integer power by squaring; a negative exponent gives 0 unless the base is 1 or -1. */
inline T ocal_ipow(T a, T b) {
#ifdef T_SIGNED
  if (b < (T)0) return a == (T)1 ? (T)1 : a == (T)(-1) ? (((b & (T)1) != (T)0) ? a : (T)1) : (T)0;
#endif
  T result = (T)1;
  while (b != (T)0) {
    if ((b & (T)1) != (T)0) result = (T)(result * a);
    a = (T)(a * a);
    b = (T)(b >> 1);
  }
  return result;
}
#endif

#ifdef T_FLOAT
/* NumPy's floor_divide and remainder of floats (npy_divmod): from the exact fmod, so that
 * the quotient is the floor of the exact one (floor(a / b) can be one off after rounding);
 * division by zero gives a / b (inf or NaN) and fmod's NaN. */
inline T ocal_ffloordiv(T a, T b) {
  if (b == (T)0) return a / b;
  const T mod = fmod(a, b);
  T div = (a - mod) / b;
  if (mod != (T)0 && ((b < (T)0) != (mod < (T)0))) div -= (T)1;
  if (div == (T)0) return copysign((T)0, a / b);
  T fl = floor(div);
  if (div - fl > (T)0.5) fl += (T)1;
  return fl;
}
inline T ocal_fremainder(T a, T b) {
  if (b == (T)0) return fmod(a, b);
  T mod = fmod(a, b);
  if (mod == (T)0) return copysign((T)0, b);
  return ((b < (T)0) != (mod < (T)0)) ? mod + b : mod;
}
#endif

/* Applies f to the four lanes of a vector, keeping scalar semantics per element. */
#define MAP4(f, v) ((R4)(f((v).x), f((v).y), f((v).z), f((v).w)))
#define ZIP4(f, u, v) ((R4)(f((u).x, (v).x), f((u).y, (v).y), f((u).z, (v).z), f((u).w, (v).w)))

#ifdef F1
#define UNARY(a) F1((R)(a))
__kernel void ocal_unary(__global const TS *x, const ulong xoff, __global RS *y, const ulong yoff,
                         const ulong n) {
  const ulong gid = get_global_id(0), gsz = get_global_size(0);
  ulong done = 0;
#ifdef VEC4
  const ulong n4 = n / 4;
  for (ulong i = gid; i < n4; i += gsz) {
    const T4 v = LD_T4(x + xoff, i);
    ST_R4(y + yoff, i, MAP4(UNARY, v));
  }
  done = n4 * 4;
#endif
  for (ulong i = done + gid; i < n; i += gsz) ST_R(y, yoff + i, UNARY(LD_T(x, xoff + i)));
}
#endif

#ifdef F2
__kernel void ocal_binary_flat(__global const TS *a, const ulong aoff, __global const TS *b,
                               const ulong boff, __global RS *y, const ulong yoff, const ulong n) {
  const ulong gid = get_global_id(0), gsz = get_global_size(0);
  ulong done = 0;
#ifdef VEC4
  const ulong n4 = n / 4;
  for (ulong i = gid; i < n4; i += gsz) {
    const T4 u = LD_T4(a + aoff, i), v = LD_T4(b + boff, i);
    ST_R4(y + yoff, i, ZIP4(F2, u, v));
  }
  done = n4 * 4;
#endif
  for (ulong i = done + gid; i < n; i += gsz) {
    const T u = LD_T(a, aoff + i), v = LD_T(b, boff + i);
    ST_R(y, yoff + i, F2(u, v));
  }
}

#ifdef SCALAR_LEFT
#define WITH_SCALAR(v) F2(s, v)
#else
#define WITH_SCALAR(v) F2(v, s)
#endif
__kernel void ocal_binary_scalar(__global const TS *x, const ulong xoff, const T s,
                                 __global RS *y, const ulong yoff, const ulong n) {
  const ulong gid = get_global_id(0), gsz = get_global_size(0);
  ulong done = 0;
#ifdef VEC4
  const ulong n4 = n / 4;
  for (ulong i = gid; i < n4; i += gsz) {
    const T4 v = LD_T4(x + xoff, i);
    ST_R4(y + yoff, i, MAP4(WITH_SCALAR, v));
  }
  done = n4 * 4;
#endif
  for (ulong i = done + gid; i < n; i += gsz) {
    const T v = LD_T(x, xoff + i);
    ST_R(y, yoff + i, WITH_SCALAR(v));
  }
}
#endif

/* Broadcasting: the output has shape d (4 dims, leading ones for fewer), contiguous; each
 * input has its own element strides, 0 along broadcast dimensions. */
#ifndef IDX
#define IDX ulong
#endif
inline IDX ocal_bcast_index(IDX i, const IDX d1, const IDX d2, const IDX d3, const ulong4 st) {
  IDX i3 = i % d3;
  i /= d3;
  IDX i2 = i % d2;
  i /= d2;
  IDX i1 = i % d1;
  IDX i0 = i / d1;
  return (IDX)(i0 * st.x + i1 * st.y + i2 * st.z + i3 * st.w);
}

#ifdef F2
__kernel void ocal_binary_bcast(__global const TS *a, const ulong aoff, const ulong4 ast,
                                __global const TS *b, const ulong boff, const ulong4 bst,
                                __global RS *y, const ulong yoff, const ulong4 dims) {
  const IDX n = (IDX)(dims.x * dims.y * dims.z * dims.w);
  const IDX d1 = (IDX)dims.y, d2 = (IDX)dims.z, d3 = (IDX)dims.w;
  for (IDX i = (IDX)get_global_id(0); i < n; i += (IDX)get_global_size(0)) {
    T va = LD_T(a, aoff + ocal_bcast_index(i, d1, d2, d3, ast));
    T vb = LD_T(b, boff + ocal_bcast_index(i, d1, d2, d3, bst));
    ST_R(y, yoff + i, F2(va, vb));
  }
}
#endif

#ifdef F2
/* The common broadcasts without index arithmetic. The output is seen as a rows x cols
 * matrix (cols: its trailing dimensions from some split point on); each input is full
 * (mode 0), a row repeated down the rows (mode 1, a bias), a column repeated across
 * (mode 2, e.g. a row maximum), or one element (mode 3). Dimension 0 runs along the
 * columns, dimension 1 loops over rows (GPUs cap that dimension's size). */
inline ulong ocal_mode_index(const uint mode, const ulong i, const ulong r, const ulong c) {
  return mode == 0 ? i : mode == 1 ? c : mode == 2 ? r : 0;
}
__kernel void ocal_binary_2d(__global const TS *a, const ulong aoff, const uint amode,
                             __global const TS *b, const ulong boff, const uint bmode,
                             __global RS *y, const ulong yoff, const ulong cols,
                             const ulong rows) {
  const ulong c = get_global_id(0);
  if (c >= cols) return;
  __global const TS *pa = a + aoff, *pb = b + boff;
  __global RS *py = y + yoff;
  for (ulong r = get_global_id(1); r < rows; r += get_global_size(1)) {
    const ulong i = r * cols + c;
    const T va = LD_T(pa, ocal_mode_index(amode, i, r, c));
    const T vb = LD_T(pb, ocal_mode_index(bmode, i, r, c));
    ST_R(py, i, F2(va, vb));
  }
}
#ifdef VEC4
/* The same with 4 columns a work-item (cols a multiple of 4, every offset too): c counts
 * vectors; a full or row input is read 4 elements at a time, a column or single element
 * once and repeated. */
inline T4 ocal_mode_load4(__global const TS *p, const uint mode, const ulong i4, const ulong r,
                          const ulong c4) {
  return mode == 0 ? LD_T4(p, i4) : mode == 1 ? LD_T4(p, c4) : (T4)(LD_T(p, mode == 2 ? r : 0));
}
__kernel void ocal_binary_2d4(__global const TS *a, const ulong aoff, const uint amode,
                              __global const TS *b, const ulong boff, const uint bmode,
                              __global RS *y, const ulong yoff, const ulong cols,
                              const ulong rows) {
  const ulong c4 = get_global_id(0), cols4 = cols / 4;
  if (c4 >= cols4) return;
  __global const TS *pa = a + aoff, *pb = b + boff;
  __global RS *py = y + yoff;
  for (ulong r = get_global_id(1); r < rows; r += get_global_size(1)) {
    const ulong i4 = r * cols4 + c4;
    const T4 va = ocal_mode_load4(pa, amode, i4, r, c4);
    const T4 vb = ocal_mode_load4(pb, bmode, i4, r, c4);
    ST_R4(py, i4, ZIP4(F2, va, vb));
  }
}
#endif
#endif

#ifdef OP_where
__kernel void ocal_where(__global const uchar *m, const ulong moff, const ulong4 mst,
                         __global const T *a, const ulong aoff, const ulong4 ast,
                         __global const T *b, const ulong boff, const ulong4 bst,
                         __global T *y, const ulong yoff, const ulong4 dims) {
  const IDX n = (IDX)(dims.x * dims.y * dims.z * dims.w);
  const IDX d1 = (IDX)dims.y, d2 = (IDX)dims.z, d3 = (IDX)dims.w;
  for (IDX i = (IDX)get_global_id(0); i < n; i += (IDX)get_global_size(0)) {
    uchar c = m[moff + ocal_bcast_index(i, d1, d2, d3, mst)];
    y[yoff + i] = c ? a[aoff + ocal_bcast_index(i, d1, d2, d3, ast)]
                    : b[boff + ocal_bcast_index(i, d1, d2, d3, bst)];
  }
}
#endif

#ifdef OP_axpby
/* y = alpha * x + beta * y; with -DBETA_ONE the y term is a plain add (axpy). */
#ifdef BETA_ONE
#define AXPBY(xv, yv) (alpha * (xv) + (yv))
#else
#define AXPBY(xv, yv) (alpha * (xv) + beta * (yv))
#endif
/* y is read through LD_T and written through ST_R: the host builds it with R = T. */
__kernel void ocal_axpby(const T alpha, __global const TS *x, const ulong xoff, const T beta,
                         __global RS *y, const ulong yoff, const ulong n) {
  const ulong gid = get_global_id(0), gsz = get_global_size(0);
  ulong done = 0;
#ifdef VEC4
  const ulong n4 = n / 4;
  for (ulong i = gid; i < n4; i += gsz) {
    const T4 xv = LD_T4(x + xoff, i), yv = LD_T4((__global const TS *)y + yoff, i);
    ST_R4(y + yoff, i, AXPBY(xv, yv));
  }
  done = n4 * 4;
#endif
  for (ulong i = done + gid; i < n; i += gsz) {
    const T xv = LD_T(x, xoff + i), yv = LD_T((__global const TS *)y, yoff + i);
    ST_R(y, yoff + i, AXPBY(xv, yv));
  }
}
#endif

#ifdef OP_cast
/* Float to integer truncates toward zero and saturates (NaN gives 0): defined results where
 * C leaves the conversion undefined. Every other pair converts as C does. */
#if defined(T_FLOAT) && !defined(R_FLOAT)
/* The explicit NaN test: NVIDIA's driver does not give 0 for NaN as the spec says. */
#define CONVERT(v) (isnan(v) ? (R)0 : OCAL_CAT(OCAL_CAT(convert_, R), _sat_rtz)(v))
#elif defined(RTO)
#define CONVERT(v) ocal_rto(v) /* to a half type: rounded once, by the store */
#else
#define CONVERT(v) ((R)(v))
#endif
__kernel void ocal_cast(__global const TS *x, const ulong xoff, __global RS *y, const ulong yoff,
                        const ulong n) {
  for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) {
    const T v = LD_T(x, xoff + i);
    ST_R(y, yoff + i, CONVERT(v));
  }
}
#endif

#ifdef OP_arange
/* y[i] = start + i * step, computed in C (long for integer outputs; double where the device
 * has fp64, else float, for floating-point ones) and then converted, as NumPy does. */
#ifdef RTO
#define FROM_C(v) ocal_rto(v)
#else
#define FROM_C(v) ((R)(v))
#endif
__kernel void ocal_arange(__global RS *y, const ulong yoff, const C start, const C step,
                          const ulong n) {
  for (ulong i = get_global_id(0); i < n; i += get_global_size(0))
    ST_R(y, yoff + i, FROM_C(start + (C)i * step));
}
#endif

#ifdef OP_linspace
/* n evenly spaced values from start to stop inclusive, computed in the floating-point type C;
 * the last one is stop exactly. */
#ifdef RTO
#define FROM_C(v) ocal_rto(v)
#else
#define FROM_C(v) ((R)(v))
#endif
__kernel void ocal_linspace(__global RS *y, const ulong yoff, const C start, const C stop,
                            const ulong n) {
  /* Finite bounds whose difference overflows C (-1.5e308 to 1.5e308 in double) would give an
   * infinite step, and NaN at start (0 * inf): such a span is then stepped in halves, added
   * twice. Other spans take the plain formula, NumPy's. */
  const int halves = isinf(stop - start);
  const C span = halves ? stop * (C)0.5 - start * (C)0.5 : stop - start;
  const C step = n > 1 ? span / (C)(n - 1) : (C)0;
  for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) {
    const C v = halves ? (start + (C)i * step) + (C)i * step : start + (C)i * step;
    ST_R(y, yoff + i, FROM_C(i + 1 == n && n > 1 ? stop : v));
  }
}
#endif
