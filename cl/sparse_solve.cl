/* ocal — the vector updates of the sparse solvers, fused so that each CG iteration reads
 * and writes every vector as few times as it can. Built per value type: -DT=float|double.
 * The step lengths come from dot products that stay on the device (s[] holds them), so
 * the host does not wait for them. Offsets of views come as element counts. */
#ifdef OCAL_NEED_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

/* alpha = s[irz] / s[ipq]; x += alpha p; r -= alpha q. */
__kernel void cg_update_xr(const ulong n, __global T *x, const ulong xo, __global T *r,
                           const ulong ro, __global const T *p, const ulong po,
                           __global const T *q, const ulong qo, __global const T *s,
                           const ulong so, const uint irz, const uint ipq) {
  const T alpha = s[so + irz] / s[so + ipq];
  for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) {
    x[xo + i] += alpha * p[po + i];
    r[ro + i] -= alpha * q[qo + i];
  }
}

/* p = z + (s[inew] / s[iold]) p, or p = z on the first iteration. */
__kernel void cg_update_p(const ulong n, __global T *p, const ulong po, __global const T *z,
                          const ulong zo, __global const T *s, const ulong so, const uint inew,
                          const uint iold, const int first) {
  const T beta = first ? (T)0 : s[so + inew] / s[so + iold];
  for (ulong i = get_global_id(0); i < n; i += get_global_size(0))
    p[po + i] = first ? z[zo + i] : z[zo + i] + beta * p[po + i];
}

/* The Jacobi preconditioner: z = r * dinv (dinv = 1 / diag(A), computed once). */
__kernel void cg_jacobi(const ulong n, __global T *z, const ulong zo, __global const T *r,
                        const ulong ro, __global const T *dinv, const ulong dofs) {
  for (ulong i = get_global_id(0); i < n; i += get_global_size(0))
    z[zo + i] = r[ro + i] * dinv[dofs + i];
}

/* dinv = 1 / d; a zero or negative diagonal entry is written as 0 and counted in bad[0] (A
 * is not positive definite then). */
__kernel void cg_invert_diag(const ulong n, __global T *dinv, __global const T *d,
                             const ulong dofs, __global int *bad) {
  for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) {
    const T v = d[dofs + i];
    if (v > (T)0) {
      dinv[i] = (T)1 / v;
    } else {
      dinv[i] = (T)0;
      atomic_inc(bad);
    }
  }
}

/* LOBPCG's Gram products G = X^T Y of tall-skinny blocks (X {n, a} and Y {n, b}
 * row-major, a, b small): one work-group per element of G, its work-items striding down the
 * rows and summing in a fixed order (so a run is repeatable). A GEMM library tiles such a
 * product poorly and may transpose or pad the operands in extra launches; this is one
 * launch. */
#define GRAM_WG 128
__kernel __attribute__((reqd_work_group_size(GRAM_WG, 1, 1)))
void lobpcg_gram(const ulong n, const uint a, const uint b, __global const T *x, const ulong xo,
                 __global const T *y, const ulong yo, __global T *g, const ulong go) {
  __local T part[GRAM_WG];
  const uint lid = get_local_id(0);
  const uint i = get_group_id(0) / b, j = get_group_id(0) % b;
  T sum = 0;
  for (ulong r = lid; r < n; r += GRAM_WG) sum += x[xo + r * a + i] * y[yo + r * b + j];
  part[lid] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = GRAM_WG / 2; s > 0; s >>= 1) {
    if (lid < s) part[lid] += part[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) g[go + (ulong)i * b + j] = part[0];
}

/* LOBPCG's block updates Y = alpha X C + beta Y (X {n, a}, C {a, b}, Y {n, b} row-major, a
 * and b small): one work-item per element of Y, the a terms summed in order. One launch,
 * where a GEMM library would tile and pad for sizes it is not made for. With beta = 0 the
 * old Y is not read. */
__kernel void lobpcg_times(const ulong n, const uint a, const uint b, const T alpha,
                           __global const T *x, const ulong xo, __global const T *c,
                           const ulong co, const T beta, __global T *y, const ulong yo) {
  const ulong total = n * b;
  for (ulong g = get_global_id(0); g < total; g += get_global_size(0)) {
    const ulong r = g / b;
    const uint j = (uint)(g % b);
    T sum = 0;
    for (uint q = 0; q < a; q++) sum += x[xo + r * a + q] * c[co + (ulong)q * b + j];
    y[yo + g] = beta == (T)0 ? alpha * sum : alpha * sum + beta * y[yo + g];
  }
}
