/* ocal — GEMV kernels (src/blas/gemv.c), built per element type with -DT=float|double and
 * -DOCAL_WG=<work-group size, a power of two>. They run near the copy bandwidth, several
 * times CLBlast's Xgemv (docs/blas-engines.md, section "GEMV").
 * beta == 0 must not read y (BLAS semantics: NaNs in y go away): -DOCAL_READ_Y=0 builds
 * that variant, since a run-time flag lets the compiler fold the read into a multiply.
 * -DOCAL_ONLY -DOCAL_ONLY_ocal_gemv_n (or _ocal_gemv_t: both passes) compiles only what one
 * form launches; without OCAL_ONLY every kernel is built. */
#ifdef OCAL_NEED_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

/* y = alpha A x + beta y, A row-major rows x cols: one work-group per row, the row read in
 * coalesced (OCAL_VEC4: 4-wide, when cols and both offsets are multiples of 4) steps, then
 * a tree sum in local memory. */
#if !defined(OCAL_ONLY) || defined(OCAL_ONLY_ocal_gemv_n)
__kernel __attribute__((reqd_work_group_size(OCAL_WG, 1, 1)))
void ocal_gemv_n(__global const T *a, const ulong a_off, __global const T *x, const ulong x_off,
                 __global T *y, const ulong y_off, const ulong cols, const T alpha,
                 const T beta) {
  __local T part[OCAL_WG];
  const ulong r = get_group_id(0);
  const uint l = get_local_id(0);
  __global const T *ar = a + a_off + r * cols;
  __global const T *xv = x + x_off;
  T s = 0;
#ifdef OCAL_VEC4
  __global const T *a4p = ar, *x4p = xv;
  for (ulong j = l; j < cols / 4; j += OCAL_WG) {
    T4 v = ((__global const T4 *)a4p)[j] * ((__global const T4 *)x4p)[j];
    s += v.x + v.y + v.z + v.w;
  }
#else
  for (ulong j = l; j < cols; j += OCAL_WG) s += ar[j] * xv[j];
#endif
  part[l] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint o = OCAL_WG / 2; o > 0; o >>= 1) {
    if (l < o) part[l] += part[l + o];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) {
    __global T *out = y + y_off + r;
    *out = OCAL_READ_Y ? alpha * part[0] + beta * *out : alpha * part[0];
  }
}

#endif /* ocal_gemv_n */

#if !defined(OCAL_ONLY) || defined(OCAL_ONLY_ocal_gemv_t)
/* y = alpha A^T x + beta y, first pass: partial sums of `chunk` rows per (column, chunk);
 * consecutive work-items read consecutive columns of a row (coalesced). */
__kernel void ocal_gemv_t_part(__global const T *a, const ulong a_off, __global const T *x,
                               const ulong x_off, __global T *p, const ulong rows,
                               const ulong cols, const ulong chunk) {
  const ulong c = get_global_id(0), q = get_global_id(1);
  if (c >= cols) return;
  const ulong r0 = q * chunk, r1 = min(rows, r0 + chunk);
  T s = 0;
  for (ulong r = r0; r < r1; r++) s += a[a_off + r * cols + c] * x[x_off + r];
  p[q * cols + c] = s;
}

/* Second pass: y = alpha (sum of the parts) + beta y. */
__kernel void ocal_gemv_t_sum(__global const T *p, __global T *y, const ulong y_off,
                              const ulong cols, const uint parts, const T alpha,
                              const T beta) {
  const ulong c = get_global_id(0);
  if (c >= cols) return;
  T s = 0;
  for (uint q = 0; q < parts; q++) s += p[q * cols + c];
  __global T *out = y + y_off + c;
  *out = OCAL_READ_Y ? alpha * s + beta * *out : alpha * s;
}
#endif /* ocal_gemv_t */
