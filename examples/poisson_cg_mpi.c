/* poisson_cg_mpi — distributed conjugate gradients on the 2-D Poisson matrix (5-point stencil,
 * Dirichlet boundary, N x N grid of unknowns), the grid rows split in contiguous blocks over
 * the ranks, each rank on its own device.
 *
 * Each rank holds its block of rows as CSR matrices on its device, with columns numbered in
 * an extended local vector: one ghost grid row above its rows, its own rows, one ghost grid
 * row below. Its rows are split into interior rows, which read only its own part, and the two
 * boundary grid rows, which read a ghost row. A product y = A p then runs as
 *   start the halo exchange (ocal_mpi_iexchange: the first and last own rows to the
 *   neighbours, their rows into the ghost rows), run the interior SpMV, wait, run the two
 *   boundary SpMVs,
 * so that the exchange overlaps the interior product (with MPI_THREAD_MULTIPLE libocal-mpi
 * progresses it on its own thread).
 *
 * Why the CG loop is written here and not run through ocal_cg's operator form: ocal_cg keeps
 * its dot products on the device, in a scalar buffer that its fused update kernels read, so a
 * distributed solve would need a hook inside the library at every dot product (and for ||b||).
 * CG reads its two scalars back to the host each iteration anyway, so the distributed loop
 * reduces each local dot product (ocal_dot_to_host) with one MPI_Allreduce of a double: no
 * change to the library's API, and no device round trip for an 8-byte allreduce. CG needs its
 * two dot products one after the other (p.Ap gives alpha, which r.r needs), so they cannot be
 * fused without changing the method (Chronopoulos-Gear), which would no longer match one
 * rank's ocal_cg step for step.
 *
 * The right-hand side is b = A x* for a pseudo-random x* that depends only on the global
 * index, so every partition solves the same problem, and the error against x* is checked.
 * --check also solves the whole problem on rank 0 with ocal_cg and checks that the iteration
 * count, the residual and the solution agree. --bench K times K iterations and a breakdown
 * (SpMV, halo, allreduce) per rank.
 *
 *   mpirun -np P ./poisson_cg_mpi [--n N] [--rtol R] [--max-iter M] [--check] [--bench K]
 *
 * With PoCL, give each rank its own POCL_CACHE_DIR (tests/mpi.sh shows how). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ocal/mpi.h>

#define TRY(call)                                                                           \
  do {                                                                                      \
    ocal_status s_ = (call);                                                                \
    if (s_ != OCAL_OK) {                                                                    \
      fprintf(stderr, "poisson_cg_mpi: %s failed: %s\n%s\n", #call, ocal_status_name(s_), \
              ocal_last_error());                                                           \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                         \
    }                                                                                       \
  } while (0)

/* The known solution: uniform in [-1, 1), a hash of the global index (splitmix64). */
static double xstar(uint64_t g) {
  uint64_t z = g + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return (double)(z >> 11) * 0x1.0p-52 - 1.0;
}

/* Builds the CSR block of local grid rows [l0, l1) of a rank owning global grid rows
 * [r0, r0 + nr): the column of point (gi, j) is (gi - r0 + 1) * n + j - shift in a vector of
 * cols elements (shift 0: the extended local vector with its ghost rows; shift n with r0 = 0
 * and nr = n: the whole square matrix). Columns come in ascending order. */
static void build_block(ocal_context ctx, long n, long r0, long l0, long l1, long shift,
                        size_t cols, ocal_csr *out) {
  size_t rows = (size_t)(l1 - l0) * (size_t)n;
  int32_t *rp = malloc((rows + 1) * sizeof *rp), *ci = malloc(5 * rows * sizeof *ci);
  double *v = malloc(5 * rows * sizeof *v);
  if (!rp || !ci || !v) {
    fprintf(stderr, "poisson_cg_mpi: out of host memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  size_t k = 0, row = 0;
  rp[0] = 0;
  for (long lr = l0; lr < l1; lr++) {
    long gi = r0 + lr;
    for (long j = 0; j < n; j++) {
      long base = (lr + 1) * n + j - shift; /* this point's column */
      if (gi > 0) ci[k] = (int32_t)(base - n), v[k++] = -1;
      if (j > 0) ci[k] = (int32_t)(base - 1), v[k++] = -1;
      ci[k] = (int32_t)base, v[k++] = 4;
      if (j + 1 < n) ci[k] = (int32_t)(base + 1), v[k++] = -1;
      if (gi + 1 < n) ci[k] = (int32_t)(base + n), v[k++] = -1;
      rp[++row] = (int32_t)k;
    }
  }
  TRY(ocal_csr_from_host(ctx, OCAL_F64, OCAL_I32, rows, cols, rp, ci, v, out));
  free(rp);
  free(ci);
  free(v);
}

/* One rank's part of the distributed operator and its timers. */
typedef struct {
  ocal_mpi mpi;
  int rank, size;
  long n, r0, nr;        /* grid size; own grid rows [r0, r0 + nr) */
  ocal_csr a_int, a_top, a_bot; /* interior rows 1..nr-2, row 0, row nr-1 (NULL if absent) */
  ocal_buffer q_int, q_top, q_bot; /* their parts of the product */
  ocal_mpi_transfer sends[2], recvs[2];
  size_t nsend, nrecv;
} dist;

/* q = A p, p being the extended vector (ghost rows filled here). With sync set, each phase is
 * finished before the next starts (the timed breakdown of --bench; no overlap): t[0] interior
 * SpMV, t[1] halo exchange, t[2] boundary SpMV. */
static void apply(dist *d, ocal_buffer pext, int sync, double *t) {
  ocal_context ctx;
  TRY(ocal_mpi_get_context(d->mpi, &ctx));
  ocal_mpi_request req = NULL;
  double t0 = MPI_Wtime();
  if (sync) {
    if (d->nsend) TRY(ocal_mpi_iexchange(d->mpi, d->nsend, d->sends, d->nrecv, d->recvs, &req));
    if (req) TRY(ocal_mpi_wait(&req));
    double t1 = MPI_Wtime();
    t[1] += t1 - t0;
    if (d->a_int) TRY(ocal_spmv(OCAL_NO_TRANS, 1.0, d->a_int, pext, 0.0, d->q_int));
    TRY(ocal_context_finish(ctx));
    t0 = MPI_Wtime();
    t[0] += t0 - t1;
  } else {
    if (d->nsend) TRY(ocal_mpi_iexchange(d->mpi, d->nsend, d->sends, d->nrecv, d->recvs, &req));
    if (d->a_int) TRY(ocal_spmv(OCAL_NO_TRANS, 1.0, d->a_int, pext, 0.0, d->q_int));
    if (req) TRY(ocal_mpi_wait(&req));
  }
  TRY(ocal_spmv(OCAL_NO_TRANS, 1.0, d->a_top, pext, 0.0, d->q_top));
  if (d->a_bot) TRY(ocal_spmv(OCAL_NO_TRANS, 1.0, d->a_bot, pext, 0.0, d->q_bot));
  if (sync) {
    TRY(ocal_context_finish(ctx));
    t[2] += MPI_Wtime() - t0;
  }
}

/* The global dot product: ocal's local one, then the sum over the ranks. t[0] gets the local
 * time, t[1] the allreduce's (which includes waiting for the slowest rank). */
static double gdot(ocal_buffer x, ocal_buffer y, double *t) {
  double v, t0 = MPI_Wtime();
  TRY(ocal_dot_to_host(x, y, OCAL_F64, &v));
  double t1 = MPI_Wtime();
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (t) t[0] += t1 - t0, t[1] += MPI_Wtime() - t1;
  return v;
}

/* Phase timers of the breakdown, in the order printed. */
enum { T_SPMV_INT, T_HALO, T_SPMV_BND, T_DOT, T_ALLREDUCE, T_AXPY, T_COUNT };

/* Plain CG from x = 0: r = b, p = r; q = A p, alpha = r.r / p.q, x += alpha p, r -= alpha q,
 * beta = r.r(new) / r.r, p = r + beta p. Runs until ||r|| <= rtol ||b|| or max_iter
 * iterations (rtol 0: always max_iter). With t non-NULL, every phase is finished and timed.
 * Returns the iteration count; *res receives ||r|| as the recurrence has it, *true_res (when
 * not NULL) ||b - A x|| computed afresh, *bnorm ||b||. */
static size_t cg(dist *d, ocal_buffer pext, ocal_buffer pown, ocal_buffer q, ocal_buffer x,
                 ocal_buffer r, ocal_buffer b, double rtol, size_t max_iter, double *t,
                 double *res, double *true_res, double *bnorm) {
  ocal_context ctx;
  TRY(ocal_mpi_get_context(d->mpi, &ctx));
  const double zero = 0;
  TRY(ocal_buffer_fill(x, &zero));
  TRY(ocal_buffer_copy(b, r));
  TRY(ocal_buffer_copy(b, pown));
  double rr = gdot(r, r, NULL), tol = rtol * sqrt(rr);
  *bnorm = sqrt(rr);
  size_t it = 0;
  double dummy[T_COUNT] = {0}, *tt = t ? t : dummy;
  while (it < max_iter && !(sqrt(rr) <= tol)) {
    it++;
    apply(d, pext, t != NULL, tt);
    double pq = gdot(pown, q, t ? tt + T_DOT : NULL);
    if (!(pq > 0)) {
      fprintf(stderr, "poisson_cg_mpi: p.Ap = %g <= 0 at iteration %zu\n", pq, it);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double alpha = rr / pq, t0 = MPI_Wtime();
    TRY(ocal_axpy(alpha, pown, x));
    TRY(ocal_axpy(-alpha, q, r));
    if (t) {
      TRY(ocal_context_finish(ctx));
      tt[T_AXPY] += MPI_Wtime() - t0;
    }
    double rr_new = gdot(r, r, t ? tt + T_DOT : NULL);
    t0 = MPI_Wtime();
    TRY(ocal_axpby(1.0, r, rr_new / rr, pown));
    if (t) {
      TRY(ocal_context_finish(ctx));
      tt[T_AXPY] += MPI_Wtime() - t0;
    }
    rr = rr_new;
  }
  /* The recurrence drifts from b - A x by rounding (far, on a badly scaled system): the
   * caller judges convergence by the true residual, one more product with x in p's place. */
  if (true_res) {
    TRY(ocal_buffer_copy(x, pown));
    apply(d, pext, 0, dummy);
    TRY(ocal_buffer_copy(b, r));
    TRY(ocal_axpy(-1.0, q, r));
    *true_res = sqrt(gdot(r, r, NULL));
  }
  TRY(ocal_context_finish(ctx));
  *res = sqrt(rr);
  return it;
}

static int usage(FILE *f, int status) {
  fprintf(f,
          "usage: mpirun -np P poisson_cg_mpi [--n N] [--rtol R] [--max-iter M] [--check]\n"
          "                                  [--bench K] [--device SELECTOR]\n"
          "Solves the 5-point Poisson matrix of an N x N grid (default 256; every rank needs\n"
          "at least one grid row) with distributed CG, b = A x* for a known random x*, to\n"
          "||r|| <= R ||b|| (default 1e-10) within M iterations (default 10 N^2), and checks\n"
          "the error against x*. --check also solves on rank 0 alone with ocal_cg and\n"
          "compares. --bench K times K iterations (after the solve; --max-iter 0 skips it)\n"
          "and a per-rank breakdown of K synchronised ones. Exit status 1 when a check fails,\n"
          "2 for bad arguments.\n");
  return status;
}

int main(int argc, char **argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  dist d;
  memset(&d, 0, sizeof d);
  MPI_Comm_rank(MPI_COMM_WORLD, &d.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &d.size);
  long n = 256, bench = 0;
  double rtol = 1e-10;
  long max_iter = -1;
  int check = 0;
  const char *device = NULL;
  for (int i = 1; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    char *end = NULL;
    if (!strcmp(argv[i], "--help")) {
      if (d.rank == 0) usage(stdout, 0);
      MPI_Finalize();
      return 0;
    }
    if (!strcmp(argv[i], "--check")) {
      check = 1;
      continue;
    }
    if (!strcmp(argv[i], "--n") && v && (n = strtol(v, &end, 10), !*end) && n >= 2 &&
        n <= 40000) {
    } else if (!strcmp(argv[i], "--rtol") && v && (rtol = strtod(v, &end), !*end) && rtol >= 0 &&
               rtol < 1) {
    } else if (!strcmp(argv[i], "--max-iter") && v && (max_iter = strtol(v, &end, 10), !*end) &&
               max_iter >= 0) {
    } else if (!strcmp(argv[i], "--bench") && v && (bench = strtol(v, &end, 10), !*end) &&
               bench >= 1) {
    } else if (!strcmp(argv[i], "--device") && v) {
      device = v;
    } else {
      if (d.rank == 0) fprintf(stderr, "poisson_cg_mpi: bad argument '%s'\n", argv[i]);
      if (d.rank == 0) usage(stderr, 2);
      MPI_Finalize();
      return 2;
    }
    i++;
  }
  if (n < d.size) {
    if (d.rank == 0)
      fprintf(stderr, "poisson_cg_mpi: %d ranks need N >= %d (one grid row each)\n", d.size,
              d.size);
    MPI_Finalize();
    return 2;
  }
  /* The CSR arrays use 32-bit indices: each rank's nonzeros (and, with --check, the whole
   * matrix's on rank 0) must fit. */
  long most = (n + d.size - 1) / d.size + 2;
  if (5 * most * n >= INT32_MAX || (check && 5 * n * n >= INT32_MAX)) {
    if (d.rank == 0)
      fprintf(stderr, "poisson_cg_mpi: N = %ld is too large for 32-bit indices on %d ranks%s\n",
              n, d.size, check ? " with --check (one rank solves the whole matrix)" : "");
    MPI_Finalize();
    return 2;
  }
  if (max_iter < 0) max_iter = 10 * n * n;
  d.n = n;
  d.r0 = n * d.rank / d.size;
  d.nr = n * (d.rank + 1) / d.size - d.r0;

  ocal_context_options co;
  ocal_context_options_init(&co);
  co.device = device;
  ocal_context ctx;
  TRY(ocal_mpi_create(MPI_COMM_WORLD, &co, &d.mpi));
  TRY(ocal_mpi_get_context(d.mpi, &ctx));
  int fp64 = 0;
  TRY(ocal_context_get_fp64(ctx, &fp64));
  if (!fp64) {
    fprintf(stderr, "poisson_cg_mpi: rank %d's device has no double precision\n", d.rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  ocal_mpi_info mi = {.struct_size = sizeof mi};
  TRY(ocal_mpi_get_info(d.mpi, &mi));
  ocal_device_info di = {.struct_size = sizeof di};
  TRY(ocal_context_get_device_info(ctx, &di));
  if (d.rank == 0)
    printf("poisson_cg_mpi: %ld x %ld grid (%ld unknowns) on %d ranks, device %s%s%s\n", n, n,
           n * n, d.size, di.name, mi.async ? "" : " (no progress thread: no overlap)",
           mi.device_sharers > 1 ? " (ranks share the device)" : "");

  /* The local matrices, the extended vector p (ghost row, own rows, ghost row) and its own
   * part, and the product's three parts. */
  size_t nn = (size_t)n, own = (size_t)d.nr * nn, ext = own + 2 * nn;
  build_block(ctx, n, d.r0, 0, 1, 0, ext, &d.a_top);
  if (d.nr >= 2) build_block(ctx, n, d.r0, d.nr - 1, d.nr, 0, ext, &d.a_bot);
  if (d.nr >= 3) build_block(ctx, n, d.r0, 1, d.nr - 1, 0, ext, &d.a_int);
  ocal_buffer pext, pown, q, x, r, b;
  TRY(ocal_buffer_zeros(ctx, OCAL_F64, 1, &ext, &pext));
  TRY(ocal_buffer_view(pext, nn, 1, &own, &pown));
  TRY(ocal_buffer_create(ctx, OCAL_F64, 1, &own, &q));
  TRY(ocal_buffer_view(q, 0, 1, &nn, &d.q_top));
  if (d.a_bot) TRY(ocal_buffer_view(q, own - nn, 1, &nn, &d.q_bot));
  if (d.a_int) {
    size_t ni = own - 2 * nn;
    TRY(ocal_buffer_view(q, nn, 1, &ni, &d.q_int));
  }
  /* The halo: the first own row goes up (tag 1) and the row above comes into the top ghost
   * row (its owner sends it with tag 2); the same downwards. */
  if (d.rank > 0) {
    d.sends[d.nsend++] = (ocal_mpi_transfer){pext, nn, nn, d.rank - 1, 1};
    d.recvs[d.nrecv++] = (ocal_mpi_transfer){pext, 0, nn, d.rank - 1, 2};
  }
  if (d.rank + 1 < d.size) {
    d.sends[d.nsend++] = (ocal_mpi_transfer){pext, own, nn, d.rank + 1, 2};
    d.recvs[d.nrecv++] = (ocal_mpi_transfer){pext, own + nn, nn, d.rank + 1, 1};
  }

  /* b = A x* on the host (x* is known everywhere, so no exchange is needed for it). */
  double *bh = malloc(own * sizeof *bh), *xh = malloc(own * sizeof *xh);
  if (!bh || !xh) {
    fprintf(stderr, "poisson_cg_mpi: out of host memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (long li = 0; li < d.nr; li++) {
    long gi = d.r0 + li;
    for (long j = 0; j < n; j++) {
      uint64_t g = (uint64_t)gi * (uint64_t)n + (uint64_t)j;
      double s = 4 * xstar(g);
      if (gi > 0) s -= xstar(g - (uint64_t)n);
      if (gi + 1 < n) s -= xstar(g + (uint64_t)n);
      if (j > 0) s -= xstar(g - 1);
      if (j + 1 < n) s -= xstar(g + 1);
      bh[(size_t)li * nn + (size_t)j] = s;
    }
  }
  TRY(ocal_buffer_from_host(ctx, OCAL_F64, 1, &own, bh, &b));
  TRY(ocal_buffer_create(ctx, OCAL_F64, 1, &own, &x));
  TRY(ocal_buffer_create(ctx, OCAL_F64, 1, &own, &r));

  int ok = 1;
  double res = 0, true_res = 0, bnorm = 0;
  size_t iters = 0;
  if (max_iter > 0) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    iters = cg(&d, pext, pown, q, x, r, b, rtol, (size_t)max_iter, NULL, &res, &true_res,
               &bnorm);
    double t = MPI_Wtime() - t0;
    int converged = true_res <= rtol * bnorm;
    /* The error against x*, relative to max |x*|, within what the tolerance allows (the
     * condition number of A is about (2 (n + 1) / pi)^2 / 2). */
    TRY(ocal_buffer_read(x, 0, own, xh, NULL));
    double err = 0, xmax = 0;
    for (size_t k = 0; k < own; k++) {
      double xs = xstar((uint64_t)d.r0 * nn + k);
      err = fmax(err, fabs(xh[k] - xs));
      xmax = fmax(xmax, fabs(xs));
    }
    MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &xmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double cond = 2 * pow((double)(n + 1) / 3.14159265358979323846, 2);
    double allowed = fmax(rtol, 1e-15) * cond * 10;
    int err_ok = err / xmax <= allowed;
    ok = converged && err_ok;
    if (d.rank == 0) {
      printf("CG %s in %zu iterations, ||b - A x|| / ||b|| = %.3e (recurrence %.3e), %.3f s "
             "(%.3f ms per iteration)\n",
             converged ? "converged" : "did NOT converge", iters, true_res / bnorm, res / bnorm,
             t, iters ? 1e3 * t / (double)iters : 0.0);
      printf("max |x - x*| / max |x*| = %.3g (allowed %.3g): %s\n", err / xmax, allowed,
             err_ok ? "ok" : "FAILED");
    }

    if (check) {
      /* One rank's ocal_cg on the whole matrix, against the distributed solve. */
      int *counts = NULL, *displs = NULL;
      double *xall = NULL;
      if (d.rank == 0) {
        counts = malloc((size_t)d.size * sizeof *counts);
        displs = malloc((size_t)d.size * sizeof *displs);
        xall = malloc(nn * nn * sizeof *xall);
        if (!counts || !displs || !xall) MPI_Abort(MPI_COMM_WORLD, 1);
        for (int k = 0; k < d.size; k++) {
          long a = n * k / d.size, e = n * (k + 1) / d.size;
          counts[k] = (int)((e - a) * n);
          displs[k] = (int)(a * n);
        }
      }
      MPI_Gatherv(xh, (int)own, MPI_DOUBLE, xall, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      int check_ok = 1;
      if (d.rank == 0) {
        size_t total = nn * nn;
        ocal_csr full;
        build_block(ctx, n, 0, 0, n, n, total, &full);
        double *xref = malloc(total * sizeof *xref);
        if (!xref) MPI_Abort(MPI_COMM_WORLD, 1);
        /* b on every grid point, made on the device from x* this time. */
        for (size_t k = 0; k < total; k++) xref[k] = xstar(k);
        ocal_buffer xs_d, b1, x1;
        TRY(ocal_buffer_from_host(ctx, OCAL_F64, 1, &total, xref, &xs_d));
        TRY(ocal_buffer_create(ctx, OCAL_F64, 1, &total, &b1));
        TRY(ocal_buffer_create(ctx, OCAL_F64, 1, &total, &x1));
        TRY(ocal_spmv(OCAL_NO_TRANS, 1.0, full, xs_d, 0.0, b1));
        ocal_operator op;
        TRY(ocal_operator_from_csr(full, &op));
        ocal_cg_options o;
        TRY(ocal_cg_options_init(&o));
        o.rtol = rtol;
        o.max_iter = (size_t)max_iter;
        ocal_cg_result cr = {.struct_size = sizeof cr};
        ocal_status s = ocal_cg(&op, b1, x1, &o, &cr);
        if (s != OCAL_OK && s != OCAL_NOT_CONVERGED) TRY(s);
        TRY(ocal_buffer_read(x1, 0, total, xref, NULL));
        double dx = 0, xm = 0;
        for (size_t k = 0; k < total; k++) {
          dx = fmax(dx, fabs(xall[k] - xref[k]));
          xm = fmax(xm, fabs(xref[k]));
        }
        /* Sums in another order round differently, so the residual may cross the tolerance
         * one iteration apart; otherwise the iterates agree to rounding (a residual that has
         * reached rounding level, about 1e-16 ||b||, is noise: hence the absolute term). */
        long di_ = (long)cr.iterations - (long)iters;
        double dres = fabs(cr.residual_norm - res);
        check_ok = labs(di_) <= 1 &&
                   (di_ != 0 || dres <= 1e-6 * fmax(cr.residual_norm, res) + 1e-13 * bnorm) &&
                   dx <= 1e-8 * xm && cr.converged == converged;
        printf("check: one rank's ocal_cg: %zu iterations, ||r|| / ||b|| = %.3e; "
               "max |x - x_1| / max |x_1| = %.2g\n",
               cr.iterations, cr.residual_norm / cr.b_norm, dx / xm);
        printf("check: %d ranks %s one rank's\n", d.size, check_ok ? "equal" : "DIFFER from");
        free(xref);
        free(xall);
        free(counts);
        free(displs);
        ocal_buffer_release(xs_d);
        ocal_buffer_release(b1);
        ocal_buffer_release(x1);
        ocal_csr_release(full);
      }
      MPI_Bcast(&check_ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
      ok = ok && check_ok;
    }
  }

  if (bench > 0) {
    /* K overlapped iterations (the solver as it runs), then K with every phase finished and
     * timed on its own: the breakdown that parallel efficiency is read from. */
    double tb[T_COUNT] = {0}, rb, bb;
    /* Two iterations first, so that no kernel is compiled inside the timings. */
    cg(&d, pext, pown, q, x, r, b, 0, 2, tb, &rb, NULL, &bb);
    memset(tb, 0, sizeof tb);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    size_t k = cg(&d, pext, pown, q, x, r, b, 0, (size_t)bench, NULL, &rb, NULL, &bb);
    double t_iter = (MPI_Wtime() - t0) / (double)k;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (long i = 0; i < bench; i++) apply(&d, pext, 0, tb);
    TRY(ocal_context_finish(ctx));
    double t_apply = (MPI_Wtime() - t0) / (double)bench;
    memset(tb, 0, sizeof tb);
    MPI_Barrier(MPI_COMM_WORLD);
    k = cg(&d, pext, pown, q, x, r, b, 0, (size_t)bench, tb, &rb, NULL, &bb);
    double mine[T_COUNT + 2], *all = NULL;
    mine[0] = t_iter;
    mine[1] = t_apply;
    for (int i = 0; i < T_COUNT; i++) mine[2 + i] = tb[i] / (double)k;
    if (d.rank == 0) {
      all = malloc((size_t)d.size * (T_COUNT + 2) * sizeof *all);
      if (!all) MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Gather(mine, T_COUNT + 2, MPI_DOUBLE, all, T_COUNT + 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (d.rank == 0) {
      printf("bench: per rank, ms per iteration: iter (overlapped) | A p overlapped | "
             "breakdown, synchronised: spmv interior, halo, spmv boundary, dot local, "
             "allreduce, axpy\n");
      double tmax = 0;
      for (int p = 0; p < d.size; p++) {
        double *m = all + (size_t)p * (T_COUNT + 2);
        printf("bench: rank %d: %.3f | %.3f | %.3f %.3f %.3f %.3f %.3f %.3f\n", p, 1e3 * m[0],
               1e3 * m[1], 1e3 * m[2], 1e3 * m[3], 1e3 * m[4], 1e3 * m[5], 1e3 * m[6],
               1e3 * m[7]);
        tmax = fmax(tmax, m[0]);
      }
      double *m = all;
      printf("{\"bench\": \"poisson_cg_mpi\", \"ranks\": %d, \"device_sharers\": %d, \"n\": %ld, "
             "\"unknowns\": %ld, \"iterations\": %ld, \"ms_per_iter\": %.4f, "
             "\"munknowns_iter_per_s\": %.1f, \"rank0_ms\": {\"apply_overlapped\": %.4f, "
             "\"spmv_interior\": %.4f, \"halo\": %.4f, \"spmv_boundary\": %.4f, "
             "\"dot_local\": %.4f, \"allreduce\": %.4f, \"axpy\": %.4f}}\n",
             d.size, mi.device_sharers, n, n * n, bench, 1e3 * tmax,
             (double)(n * n) / tmax / 1e6, 1e3 * m[1], 1e3 * m[2], 1e3 * m[3], 1e3 * m[4],
             1e3 * m[5], 1e3 * m[6], 1e3 * m[7]);
      free(all);
    }
  }

  free(bh);
  free(xh);
  ocal_buffer_release(d.q_int);
  ocal_buffer_release(d.q_top);
  ocal_buffer_release(d.q_bot);
  ocal_buffer_release(pown);
  ocal_buffer_release(pext);
  ocal_buffer_release(q);
  ocal_buffer_release(x);
  ocal_buffer_release(r);
  ocal_buffer_release(b);
  ocal_csr_release(d.a_int);
  ocal_csr_release(d.a_top);
  ocal_csr_release(d.a_bot);
  TRY(ocal_mpi_release(d.mpi));
  MPI_Finalize();
  return ok ? 0 : 1;
}
