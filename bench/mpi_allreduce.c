/* bench/mpi_allreduce — allreduce of f32 device buffers across MPI ranks, 1 MiB to 1 GiB:
 * libocal-mpi's pipelined ring (ocal_mpi_allreduce) against the obvious way (download,
 * MPI_Allreduce of host memory, upload), beside the pinned copy speeds of the same device and
 * MPI_Allreduce of host memory alone. One JSON record per size on rank 0's stdout; every
 * result is checked (each rank contributes rank + 1, so every element must be P(P+1)/2).
 *
 *   mpirun -np 2 bench/mpi_allreduce [--quick] [--min-kib N] [--max-mib N] [--repeat R]
 *                                    [--ours-only] [--bytes N[,N...]]
 *
 * Sizes go from --min-kib KiB (default 1024) up by 4x; --bytes runs the sizes listed instead
 * (at most 8, each at least 4, rounded down to a multiple of 4: e.g. a gradient bucket's,
 * 12861440 for mlp_train_mpi's layer 1 at hidden 4096); --ours-only leaves out the others (for
 * runs that compare libocal-mpi's paths under OCAL_MPI_* settings; "path" says which ran).
 *
 * GB/s are algorithm bandwidth (the buffer's bytes over the time); NCCL's "bus bandwidth" is
 * that times 2(P-1)/P. Times are the slowest rank's, median of R runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ocal/mpi.h>

#define BENCH_NAME "mpi_allreduce"
#include "common.h"

static int rank, nranks;

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Median over runs of the slowest rank's time. */
static double median(double *t, int n) {
  MPI_Allreduce(MPI_IN_PLACE, t, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  qsort(t, (size_t)n, sizeof *t, cmp);
  return t[n / 2];
}

/* "N[,N...]": up to 8 sizes of at least 4 bytes, each rounded down to whole f32 elements;
 * returns 0 for anything else. */
static int parse_sizes(const char *text, size_t *sizes, size_t *n) {
  *n = 0;
  for (const char *p = text;; p++) {
    char *end;
    unsigned long long v = strtoull(p, &end, 10);
    if (end == p || *p == '-' || v < 4 || *n == 8 || (*end && *end != ',')) return 0;
    sizes[(*n)++] = (size_t)v / 4 * 4;
    if (!*end) return 1;
    p = end;
  }
}

#define TRYB(call)                                                                       \
  do {                                                                                   \
    ocal_status s_ = (call);                                                             \
    if (s_ != OCAL_OK) {                                                                 \
      fprintf(stderr, "mpi_allreduce: rank %d: %s: %s\n", rank, #call, ocal_last_error()); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                      \
    }                                                                                    \
  } while (0)

static int check(ocal_buffer b, float *host, size_t n, const char *what) {
  TRYB(ocal_buffer_read(b, 0, n, host, NULL));
  float want = (float)nranks * (float)(nranks + 1) / 2;
  size_t bad = 0;
  for (size_t i = 0; i < n; i++) bad += host[i] != want;
  if (bad) fprintf(stderr, "mpi_allreduce: rank %d: %s: %zu of %zu elements wrong\n", rank, what, bad, n);
  return bad == 0;
}

int main(int argc, char **argv) {
  int level;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &level);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  int quick = 0, repeat = 5, ours_only = 0;
  size_t max_mib = 1024, min_kib = 1024, sizes[8], nsizes = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick")) quick = 1;
    else if (!strcmp(argv[i], "--max-mib") && i + 1 < argc) max_mib = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--min-kib") && i + 1 < argc) min_kib = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--ours-only")) ours_only = 1;
    else if (!strcmp(argv[i], "--bytes") && i + 1 < argc &&
             parse_sizes(argv[i + 1], sizes, &nsizes))
      i++;
    else {
      if (rank == 0) fprintf(stderr, "usage: mpirun -np P mpi_allreduce [--quick] [--min-kib N] [--max-mib N] [--repeat R] [--ours-only] [--bytes N[,N...]]\n");
      MPI_Finalize();
      return 2;
    }
  }
  if (quick) {
    max_mib = 4;
    repeat = 3;
  }
  if (repeat < 1 || repeat > 100) repeat = 5;
  ocal_mpi mpi;
  ocal_context ctx;
  TRYB(ocal_mpi_create(MPI_COMM_WORLD, NULL, &mpi));
  TRYB(ocal_mpi_get_context(mpi, &ctx));
  ocal_mpi_info info = {sizeof info};
  ocal_device_info dev = {sizeof dev};
  TRYB(ocal_mpi_get_info(mpi, &info));
  TRYB(ocal_context_get_device_info(ctx, &dev));
  int ok = 1;
  double *t = calloc((size_t)repeat, sizeof *t);
  if (min_kib < 1) min_kib = 1;
  for (size_t kib = min_kib, j = 0; nsizes ? j < nsizes : kib <= max_mib << 10; kib *= 4, j++) {
    size_t bytes = nsizes ? sizes[j] : kib << 10, n = bytes / 4;
    ocal_buffer b;
    float *host = malloc(bytes), *pinned = NULL, mine = (float)(rank + 1);
    TRYB(ocal_buffer_create(ctx, OCAL_F32, 1, &n, &b));
    TRYB(ocal_pinned_alloc(ctx, bytes, (void **)&pinned));
    if (!host || !t) MPI_Abort(MPI_COMM_WORLD, 1);
    /* Ours, after one run that builds the kernel. */
    for (int r = -1; r < repeat; r++) {
      TRYB(ocal_buffer_fill(b, &mine));
      TRYB(ocal_context_finish(ctx));
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = now();
      TRYB(ocal_mpi_allreduce(mpi, b, OCAL_MPI_SUM));
      if (r >= 0) t[r] = now() - t0;
    }
    ok &= check(b, host, n, "ocal_mpi_allreduce");
    double ours = median(t, repeat);
    double naive = 0, mpi_host = 0, d2h = 0, h2d = 0;
    if (ours_only) goto report;
    /* The obvious way: download, MPI_Allreduce on the host, upload. */
    for (int r = -1; r < repeat; r++) {
      TRYB(ocal_buffer_fill(b, &mine));
      TRYB(ocal_context_finish(ctx));
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = now();
      TRYB(ocal_buffer_read(b, 0, n, host, NULL));
      MPI_Allreduce(MPI_IN_PLACE, host, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      TRYB(ocal_buffer_write(b, 0, n, host, NULL));
      if (r >= 0) t[r] = now() - t0;
    }
    ok &= check(b, host, n, "download + MPI_Allreduce + upload");
    naive = median(t, repeat);
    /* MPI_Allreduce of host memory alone. */
    for (int r = -1; r < repeat; r++) {
      for (size_t i = 0; i < n; i++) host[i] = mine;
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = now();
      MPI_Allreduce(MPI_IN_PLACE, host, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      if (r >= 0) t[r] = now() - t0;
    }
    mpi_host = median(t, repeat);
    /* Pinned copies, every rank at once (as during a collective). */
    for (int r = -1; r < repeat; r++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = now();
      TRYB(ocal_buffer_read(b, 0, n, pinned, NULL));
      if (r >= 0) t[r] = now() - t0;
    }
    d2h = median(t, repeat);
    for (int r = -1; r < repeat; r++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = now();
      TRYB(ocal_buffer_write(b, 0, n, pinned, NULL));
      if (r >= 0) t[r] = now() - t0;
    }
    h2d = median(t, repeat);
  report:
    if (rank == 0) {
      printf("{\"bench\": \"mpi_allreduce\", \"device\": \"%s\", \"ranks\": %d, \"sharers\": %d, "
             "\"bytes\": %zu, \"ours_gbps\": %.3f, \"naive_gbps\": %.3f, \"speedup\": %.2f, "
             "\"mpi_host_gbps\": %.3f, \"d2h_pinned_gbps\": %.3f, \"h2d_pinned_gbps\": %.3f, "
             "\"chunk\": %zu, \"slots\": %d, \"async\": %d, \"small\": %zu, \"path\": \"%s\"}\n",
             dev.name, nranks, info.device_sharers, bytes, bytes / ours * 1e-9,
             naive > 0 ? bytes / naive * 1e-9 : 0, naive / ours,
             mpi_host > 0 ? bytes / mpi_host * 1e-9 : 0, d2h > 0 ? bytes / d2h * 1e-9 : 0,
             h2d > 0 ? bytes / h2d * 1e-9 : 0, info.chunk_bytes, info.slots, info.async,
             info.small_bytes, info.path);
      fflush(stdout);
    }
    TRYB(ocal_pinned_free(ctx, pinned));
    ocal_buffer_release(b);
    free(host);
  }
  free(t);
  TRYB(ocal_mpi_release(mpi));
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Finalize();
  return all ? 0 : 1;
}
