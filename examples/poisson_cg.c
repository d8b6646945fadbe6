/* poisson_cg — the Poisson equation -u'' = f on the unit square (zero on the boundary),
 * discretised by the 5-point stencil on an n x n grid of interior points and solved with
 * conjugate gradients on the device.
 *
 * The right-hand side is made from a known solution, u(x, y) = sin(pi x) sin(2 pi y) + x y
 * (1 - x)(1 - y), as b = A u on the grid, so the discrete solution is known exactly and the
 * program checks the CG result against it. The matrix is built on the host as COO triplets
 * (ocal_csr_from_coo), the solve runs through ocal_cg (ocal_spmv, ocal's dot products and
 * fused vector updates; one scalar comes back per iteration).
 *
 *   ./poisson_cg [--device SELECTOR] [--n N] [--f32] [--jacobi] [--rtol R]
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ocal.h>

#include "example_args.h"

#define TRY(call)                                                                         \
  do {                                                                                    \
    ocal_status s_ = (call);                                                              \
    if (s_ != OCAL_OK) {                                                                  \
      fprintf(stderr, "poisson_cg: %s failed: %s\n%s\n", #call, ocal_status_name(s_),   \
              ocal_last_error());                                                         \
      return 1;                                                                           \
    }                                                                                     \
  } while (0)

static int usage(FILE *f, int status) {
  fprintf(f,
          "usage: poisson_cg [--device SELECTOR] [--n N] [--f32] [--jacobi] [--rtol R]\n"
          "Solves the 2-D Poisson equation on an N x N interior grid (default 200) with\n"
          "conjugate gradients on the device and checks the result against the known\n"
          "discrete solution. --f32 solves in single precision (default double where the\n"
          "device has it), --jacobi adds the Jacobi preconditioner, --rtol sets the relative\n"
          "tolerance (default 1e-10, 1e-5 in f32). Exit status 1 when a check fails, 2 for\n"
          "bad arguments.\n");
  return status;
}

static double solution(double x, double y) {
  const double pi = 3.14159265358979323846;
  return sin(pi * x) * sin(2 * pi * y) + x * y * (1 - x) * (1 - y);
}

int main(int argc, char **argv) {
  const char *device = NULL;
  long n = 200;
  int f32 = 0, jacobi = 0;
  double rtol = 0;
  for (int i = 1; i < argc; i++) {
    int common = example_common_arg(argc, argv, &i, "poisson_cg", usage, &device);
    if (common == 1) return 0;
    if (common < 0) return usage(stderr, 2);
    if (common == 2) continue;
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    char *end = NULL;
    if (strcmp(argv[i], "--f32") == 0) {
      f32 = 1;
      continue;
    }
    if (strcmp(argv[i], "--jacobi") == 0) {
      jacobi = 1;
      continue;
    }
    if (strcmp(argv[i], "--n") == 0 && v && (n = strtol(v, &end, 10), *end == '\0') &&
               n >= 1 && n <= 20000) {
    } else if (strcmp(argv[i], "--rtol") == 0 && v && (rtol = strtod(v, &end), *end == '\0') &&
               rtol > 0 && rtol < 1) {
    } else {
      fprintf(stderr, "poisson_cg: bad argument '%s'%s\n", argv[i],
              v ? "" : " (or its value is missing)");
      return usage(stderr, 2);
    }
    i++;
  }

  ocal_context_options opts;
  ocal_context_options_init(&opts);
  opts.device = device;
  ocal_context ctx;
  TRY(ocal_context_create(&opts, &ctx));
  ocal_device_info info = {.struct_size = sizeof info};
  TRY(ocal_context_get_device_info(ctx, &info));
  int fp64 = 0;
  TRY(ocal_context_get_fp64(ctx, &fp64));
  if (!fp64) f32 = 1;
  ocal_dtype vt = f32 ? OCAL_F32 : OCAL_F64;
  if (rtol == 0) rtol = f32 ? 1e-5 : 1e-10;
  printf("device: %s (%s), %s\n", info.name, info.platform_name, f32 ? "f32" : "f64");

  /* The 5-point Laplacian scaled by 1/h^2, as COO triplets: point (i, j) is row i * n + j. */
  size_t N = (size_t)n * (size_t)n, cap = 5 * N;
  int32_t *ri = malloc(cap * sizeof *ri), *cj = malloc(cap * sizeof *cj);
  double *val = malloc(cap * sizeof *val), *u = malloc(N * sizeof *u), *bh = malloc(N * sizeof *bh);
  if (!ri || !cj || !val || !u || !bh) {
    fprintf(stderr, "poisson_cg: out of host memory\n");
    return 1;
  }
  double h = 1.0 / (double)(n + 1), s = 1.0 / (h * h);
  size_t nnz = 0;
  for (long i = 0; i < n; i++)
    for (long j = 0; j < n; j++) {
      int32_t row = (int32_t)(i * n + j);
      u[row] = solution((double)(i + 1) * h, (double)(j + 1) * h);
      const long di[5] = {0, -1, 1, 0, 0}, dj[5] = {0, 0, 0, -1, 1};
      for (int k = 0; k < 5; k++) {
        long a = i + di[k], b = j + dj[k];
        if (a < 0 || a >= n || b < 0 || b >= n) continue;
        ri[nnz] = row;
        cj[nnz] = (int32_t)(a * n + b);
        val[nnz++] = k == 0 ? 4 * s : -s;
      }
    }
  /* b = A u on the host in double precision. */
  for (size_t r = 0; r < N; r++) bh[r] = 0;
  for (size_t k = 0; k < nnz; k++) bh[ri[k]] += val[k] * u[cj[k]];

  void *vals = val, *bvals = bh;
  float *vf = NULL, *bf = NULL;
  if (f32) {
    vf = malloc(nnz * sizeof *vf);
    bf = malloc(N * sizeof *bf);
    if (!vf || !bf) return 1;
    for (size_t k = 0; k < nnz; k++) vf[k] = (float)val[k];
    for (size_t r = 0; r < N; r++) bf[r] = (float)bh[r];
    vals = vf;
    bvals = bf;
  }
  ocal_csr a;
  TRY(ocal_csr_from_coo(ctx, vt, OCAL_I32, N, N, nnz, ri, cj, vals, &a));
  ocal_operator op;
  TRY(ocal_operator_from_csr(a, &op));
  ocal_buffer b, x;
  TRY(ocal_buffer_from_host(ctx, vt, 1, &N, bvals, &b));
  TRY(ocal_buffer_create(ctx, vt, 1, &N, &x));

  ocal_cg_options co;
  TRY(ocal_cg_options_init(&co));
  co.rtol = rtol;
  co.precond = jacobi ? OCAL_PRECOND_JACOBI : OCAL_PRECOND_NONE;
  ocal_cg_result res = {.struct_size = sizeof res};
  TRY(ocal_cg(&op, b, x, &co, &res));
  /* OCAL_OK means the true residual ||b - A x||, not only the recurrence's, met rtol. */
  printf("%ld x %ld grid (%zu unknowns, %zu nonzeros): CG%s converged in %zu iterations, "
         "||b - A x|| / ||b|| = %.3g\n",
         n, n, N, nnz, jacobi ? " with Jacobi" : "", res.iterations,
         res.true_residual_norm / res.b_norm);

  /* The check: the error against the known discrete solution, relative to its size, must be
   * within what the tolerance allows (the condition number of A grows like n^2). */
  double *xh = malloc(N * sizeof *xh);
  if (!xh) return 1;
  if (f32) {
    TRY(ocal_buffer_read(x, 0, N, bf, NULL));
    for (size_t r = 0; r < N; r++) xh[r] = bf[r];
  } else {
    TRY(ocal_buffer_read(x, 0, N, xh, NULL));
  }
  double err = 0, unorm = 0;
  for (size_t r = 0; r < N; r++) {
    err = fmax(err, fabs(xh[r] - u[r]));
    unorm = fmax(unorm, fabs(u[r]));
  }
  double cond = 4.0 / (sin(3.14159265358979323846 * h / 2) * sin(3.14159265358979323846 * h / 2) * 2);
  double allowed = fmax(rtol, f32 ? 1e-6 : 1e-15) * cond * 10;
  int ok = err / unorm <= allowed;
  printf("max |x - u| / max |u| = %.3g (allowed %.3g): %s\n", err / unorm, allowed,
         ok ? "ok" : "FAILED");

  free(ri); free(cj); free(val); free(u); free(bh); free(vf); free(bf); free(xh);
  ocal_buffer_release(b);
  ocal_buffer_release(x);
  ocal_csr_release(a);
  ocal_context_release(ctx);
  return ok ? 0 : 1;
}
