/* ocal under ThreadSanitizer: two LOBPCG runs at once, in two threads on one context, each
 * with its own matrix, block size and stopping state. A run keeps everything it counts or
 * switches in its own state, so ThreadSanitizer must see no race; and each run's smallest
 * eigenvalues are checked against the Laplacian's analytic ones, so a run that read the
 * other's state fails here even where ThreadSanitizer cannot see it.
 *
 * Usage: lobpcg_pair [ROUNDS] (default 2). Exit status 0 when every check passed;
 * ThreadSanitizer's reports fail the run through TSAN_OPTIONS=halt_on_error=1 or its exit
 * code (tests/defences.sh). */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <ocal.h>

static ocal_context ctx;
static pthread_barrier_t start_line;

typedef struct job {
  size_t nx, ny, k; /* an nx x ny grid Laplacian, k eigenpairs */
  int rounds;
  int failed;
} job;

/* The 5-point Laplacian of an nx x ny grid (Dirichlet boundary) as CSR. */
static ocal_status laplacian(size_t nx, size_t ny, ocal_csr *out) {
  size_t n = nx * ny, nz = 0;
  int32_t *rp = malloc((n + 1) * sizeof *rp), *ci = malloc(5 * n * sizeof *ci);
  double *v = malloc(5 * n * sizeof *v);
  ocal_status s = OCAL_OUT_OF_HOST_MEMORY;
  if (rp && ci && v) {
    for (size_t i = 0; i < nx; i++)
      for (size_t j = 0; j < ny; j++) {
        size_t r = i * ny + j;
        rp[r] = (int32_t)nz;
        if (i > 0) ci[nz] = (int32_t)(r - ny), v[nz++] = -1;
        if (j > 0) ci[nz] = (int32_t)(r - 1), v[nz++] = -1;
        ci[nz] = (int32_t)r, v[nz++] = 4;
        if (j + 1 < ny) ci[nz] = (int32_t)(r + 1), v[nz++] = -1;
        if (i + 1 < nx) ci[nz] = (int32_t)(r + ny), v[nz++] = -1;
      }
    rp[n] = (int32_t)nz;
    s = ocal_csr_from_host(ctx, OCAL_F64, OCAL_I32, n, n, rp, ci, v, out);
  }
  free(rp);
  free(ci);
  free(v);
  return s;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void *run(void *arg) {
  job *j = arg;
  size_t n = j->nx * j->ny, shape[2] = {n, j->k};
  double *want = malloc(n * sizeof *want), ev[8];
  for (size_t a = 0; a < j->nx; a++)
    for (size_t b = 0; b < j->ny; b++) {
      double sa = sin(M_PI * (double)(a + 1) / (2.0 * (double)(j->nx + 1)));
      double sb = sin(M_PI * (double)(b + 1) / (2.0 * (double)(j->ny + 1)));
      want[a * j->ny + b] = 4 * sa * sa + 4 * sb * sb;
    }
  qsort(want, n, sizeof *want, cmp);
  ocal_csr a = NULL;
  ocal_buffer x = NULL;
  ocal_operator op;
  ocal_status s = laplacian(j->nx, j->ny, &a);
  if (s == OCAL_OK) s = ocal_operator_from_csr(a, &op);
  if (s == OCAL_OK) s = ocal_buffer_create(ctx, OCAL_F64, 2, shape, &x);
  pthread_barrier_wait(&start_line);
  for (int r = 0; s == OCAL_OK && r < j->rounds; r++) {
    ocal_lobpcg_options o;
    ocal_lobpcg_options_init(&o);
    o.tol = 1e-6;
    o.max_iter = 300;
    o.seed = (uint64_t)r + 1;
    ocal_lobpcg_result res = {sizeof res};
    s = ocal_lobpcg(&op, x, &o, ev, NULL, &res);
    for (size_t i = 0; s == OCAL_OK && i < j->k; i++)
      if (fabs(ev[i] - want[i]) > 1e-8 * want[i]) {
        fprintf(stderr, "lobpcg_pair: %zux%zu eigenvalue %zu is %.15g, want %.15g\n", j->nx,
                j->ny, i, ev[i], want[i]);
        j->failed = 1;
      }
    if (s == OCAL_OK && res.stop != OCAL_LOBPCG_CONVERGED) {
      fprintf(stderr, "lobpcg_pair: stopped with %s\n", ocal_lobpcg_stop_name(res.stop));
      j->failed = 1;
    }
  }
  if (s != OCAL_OK) {
    fprintf(stderr, "lobpcg_pair: %s: %s\n", ocal_status_name(s), ocal_last_error());
    j->failed = 1;
  }
  ocal_buffer_release(x);
  ocal_csr_release(a);
  free(want);
  return NULL;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 2;
  ocal_status s = ocal_context_create(NULL, &ctx);
  if (s != OCAL_OK) {
    fprintf(stderr, "lobpcg_pair: %s\n", ocal_last_error());
    return 1;
  }
  int fp64 = 0;
  if (ocal_context_get_fp64(ctx, &fp64) != OCAL_OK || !fp64) {
    printf("lobpcg_pair: the device has no fp64; nothing to run\n");
    ocal_context_release(ctx);
    return 0;
  }
  /* Two problems of different sizes and block sizes, so that the runs interleave. */
  job jobs[2] = {{14, 11, 4, rounds, 0}, {19, 17, 3, rounds, 0}};
  pthread_t t[2];
  pthread_barrier_init(&start_line, NULL, 2);
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, run, &jobs[i]);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&start_line);
  ocal_context_release(ctx);
  int failed = jobs[0].failed || jobs[1].failed;
  printf("lobpcg_pair: %s\n", failed ? "FAILED" : "two LOBPCG runs at once agree with the analytic eigenvalues");
  return failed;
}
