/* mpi_sum — the smallest libocal-mpi program: a large array spread over the ranks, each rank
 * sums its part on its own device, and one allreduce of the partial sums gives every rank the
 * total. The array is arange(N) in 64-bit integers, so the total N(N-1)/2 is exact and checked.
 *
 *   mpirun -np 2 ./mpi_sum [--n N]
 *
 * With PoCL, give each rank its own POCL_CACHE_DIR (PoCL's kernel cache is not safe to share
 * between processes); tests/mpi.sh shows how. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ocal/mpi.h>

#define TRY(call)                                                                          \
  do {                                                                                     \
    ocal_status s_ = (call);                                                               \
    if (s_ != OCAL_OK) {                                                                   \
      fprintf(stderr, "mpi_sum: %s failed: %s\n%s\n", #call, ocal_status_name(s_),       \
              ocal_last_error());                                                          \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                        \
    }                                                                                      \
  } while (0)

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  uint64_t n = 100000000;
  for (int i = 1; i < argc; i++) {
    char *end = NULL;
    if (!strcmp(argv[i], "--help")) {
      if (rank == 0)
        printf("usage: mpirun -np P mpi_sum [--n N]\n"
               "Sums arange(N) (default 10^8), each rank its part on its own device, then\n"
               "allreduces the partial sums; checks the total. Exit status 1 when the check\n"
               "fails, 2 for bad arguments.\n");
      MPI_Finalize();
      return 0;
    }
    if (!strcmp(argv[i], "--n") && i + 1 < argc && argv[i + 1][0] != '-' &&
        (n = strtoull(argv[i + 1], &end, 10)) > 0 && !*end) {
      i++;
      continue;
    }
    if (rank == 0) fprintf(stderr, "mpi_sum: bad argument '%s' (try --help)\n", argv[i]);
    MPI_Finalize();
    return 2;
  }

  ocal_mpi mpi;
  ocal_context ctx;
  TRY(ocal_mpi_create(MPI_COMM_WORLD, NULL, &mpi));
  TRY(ocal_mpi_get_context(mpi, &ctx));

  /* This rank's part: elements [lo, hi) of arange(n), made on the device. */
  uint64_t lo = n * (uint64_t)rank / (uint64_t)size, hi = n * (uint64_t)(rank + 1) / (uint64_t)size;
  size_t len = (size_t)(hi - lo), one = 1;
  ocal_buffer part = NULL, partial;
  TRY(ocal_buffer_create(ctx, OCAL_I64, 1, &one, &partial));
  if (len > 0) {
    TRY(ocal_buffer_create(ctx, OCAL_I64, 1, &len, &part));
    TRY(ocal_arange((double)lo, 1.0, part));
    TRY(ocal_sum(part, OCAL_AXIS_ALL, partial));
  } else {
    int64_t zero = 0;
    TRY(ocal_buffer_fill(partial, &zero));
  }

  /* Every rank's partial sum, added on the device: afterwards each holds the total. */
  TRY(ocal_mpi_allreduce(mpi, partial, OCAL_MPI_SUM));
  int64_t total;
  TRY(ocal_buffer_read(partial, 0, 1, &total, NULL));

  /* n(n-1)/2 without overflow for the n this accepts. */
  unsigned __int128 exact = (unsigned __int128)n * (n - 1) / 2;
  int ok = (unsigned __int128)(uint64_t)total == exact;
  if (rank == 0)
    printf("mpi_sum: sum of arange(%" PRIu64 ") over %d ranks = %" PRId64 " (%s)\n", n, size,
           total, ok ? "exact" : "WRONG");
  ocal_buffer_release(part);
  ocal_buffer_release(partial);
  TRY(ocal_mpi_release(mpi));
  MPI_Finalize();
  return ok ? 0 : 1;
}
