/* ocal fault injection under MPI — libocal-mpi's collectives with each of their OpenCL calls
 * (and libocal's host allocations) failing in turn, on one rank at a time. Run under mpirun
 * by tests/mpi.sh, once per path (OCAL_MPI_SHARED, OCAL_MPI_ASYNC select it).
 *
 * One mpirun sweeps every injection point itself, so that the sweep costs one start of MPI
 * and one set-up, not one per point: for each collective and each entry point the program
 * counts the calls one run of the collective makes (the largest count of any rank), then for
 * each n of those calls (all of them up to --max-n, else 1, 2, the last two and evenly
 * spaced ones between) arms the shim on one rank (rank n mod P) to fail the n-th call, runs
 * the collective on every rank and requires:
 *   - every rank returns the same status (every rank fails, or every rank succeeds);
 *   - a failure comes with a message; a success with the right result on every rank;
 *   - the same collective then runs correctly with nothing injected (the handle still works).
 * No hang and no leak are the script's to see (mpirun's timeout, LeakSanitizer).
 *
 * Usage: mpi_fault_program [--max-n N]   (N = 0: every n). Exit status 0 when every
 * injected failure passed, 1 when one did not (each printed), 2 for a bad argument. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ocal.h>
#include <ocal/mpi.h>

#include "shim.h"

static int rank, nranks;
static ocal_mpi mpi;
static ocal_context ctx;

/* The collectives under test and their buffers: an allreduce through the path under test
 * (above OCAL_MPI_SMALL), a small blocking one (on the calling thread), a non-blocking one
 * (through the progress thread), broadcast, allgather and reduce-scatter. */
enum { N_BIG = 20011, N_SMALL = 101, N_PART = 1003 };
typedef enum { C_ALLREDUCE, C_SMALL, C_IALLREDUCE, C_BROADCAST, C_ALLGATHER, C_RSCATTER,
               C_COUNT } coll;
static const char *coll_names[C_COUNT] = {"allreduce", "allreduce-small", "iallreduce",
                                          "broadcast", "allgather", "reduce-scatter"};
static ocal_buffer big, small, part, gathered, spread;
static float *host;

/* Rank r's value at i: small integers, so that every sum is exact in f32. */
static float value(int r, size_t i) { return (float)((int)((i * 7 + (size_t)r * 3) % 13) - 6); }

static ocal_status fill(ocal_buffer b, size_t n, int r) {
  for (size_t i = 0; i < n; i++) host[i] = value(r, i);
  return ocal_buffer_write(b, 0, n, host, NULL);
}

/* The OpenCL entry points a collective may call (libocal-mpi's device calls, libocal's in the
 * views and markers of the call). Of the host allocations only the call's first, its request,
 * is failed: a collective that cannot allocate its bookkeeping once running aborts the job
 * (docs/mpi.md, Errors). */
static const char *entries[] = {"clEnqueueReadBuffer", "clEnqueueWriteBuffer",
                                "clEnqueueCopyBuffer", "clEnqueueNDRangeKernel",
                                "clSetKernelArg", "clWaitForEvents", "clFlush", "clFinish",
                                "clEnqueueMarkerWithWaitList", "clEnqueueBarrierWithWaitList",
                                "clCreateBuffer", "clCreateSubBuffer"};
#define N_ENTRIES (sizeof entries / sizeof entries[0])
/* What the next run injects (arm_entry NULL: nothing), and what the last run's collective
 * called: only the collective's own calls count, not the test's copies around it. */
static const char *arm_entry;
static unsigned long arm_n, calls[N_ENTRIES];

/* Sets the inputs, runs collective c; *ok is 1 when the result is right (status OK only). */
static ocal_status run(coll c, int *ok) {
  ocal_status st = OCAL_OK;
  ocal_mpi_request rq;
  size_t n = c == C_SMALL ? N_SMALL : c == C_ALLGATHER ? N_PART : c == C_RSCATTER
             ? (size_t)nranks * N_PART : N_BIG;
  ocal_buffer in = c == C_SMALL ? small : c == C_ALLGATHER ? part : c == C_RSCATTER ? spread : big;
  *ok = 0;
  if ((st = fill(in, n, c == C_BROADCAST && rank != nranks - 1 ? 99 : rank)) != OCAL_OK) return st;
  for (size_t e = 0; e < N_ENTRIES; e++) calls[e] = fault_calls(entries[e]);
  if (arm_entry) fault_arm(arm_entry, arm_n);
  switch (c) {
  case C_ALLREDUCE: case C_SMALL: st = ocal_mpi_allreduce(mpi, in, OCAL_MPI_SUM); break;
  case C_IALLREDUCE:
    st = ocal_mpi_iallreduce(mpi, in, OCAL_MPI_SUM, &rq);
    if (st == OCAL_OK) st = ocal_mpi_wait(&rq);
    break;
  case C_BROADCAST: st = ocal_mpi_broadcast(mpi, in, nranks - 1); break;
  case C_ALLGATHER: st = ocal_mpi_allgather(mpi, part, gathered); break;
  case C_RSCATTER: st = ocal_mpi_reduce_scatter(mpi, spread, part, OCAL_MPI_SUM); break;
  default: break;
  }
  fault_disarm();
  for (size_t e = 0; e < N_ENTRIES; e++) calls[e] = fault_calls(entries[e]) - calls[e];
  if (st != OCAL_OK) return st;
  ocal_buffer out = c == C_ALLGATHER ? gathered : c == C_RSCATTER ? part : in;
  size_t m = c == C_ALLGATHER ? (size_t)nranks * N_PART : c == C_RSCATTER ? N_PART : n;
  ocal_status rs = ocal_buffer_read(out, 0, m, host, NULL);
  if (rs != OCAL_OK) return rs;
  *ok = 1;
  for (size_t i = 0; i < m && *ok; i++) {
    double want = 0;
    if (c == C_BROADCAST) want = value(nranks - 1, i);
    else if (c == C_ALLGATHER) want = value((int)(i / N_PART), i % N_PART);
    else
      for (int r = 0; r < nranks; r++)
        want += value(r, c == C_RSCATTER ? (size_t)rank * N_PART + i : i);
    *ok = host[i] == (float)want;
  }
  return OCAL_OK;
}

static int failures, runs, reported, verbose;

/* One injected failure: the n-th call of entry e on rank `victim`, in collective c. */
static void inject(coll c, const char *e, unsigned long n, int victim) {
  int ok = 0;
  if (verbose) fprintf(stderr, "rank %d: %s %s:%lu on rank %d\n", rank, coll_names[c], e, n, victim);
  arm_entry = rank == victim ? e : NULL;
  arm_n = n;
  ocal_status st = run(c, &ok);
  arm_entry = NULL;
  const char *msg = st != OCAL_OK ? ocal_last_error() : "";
  int mine[3] = {(int)st, st != OCAL_OK && (!msg || !*msg), st == OCAL_OK && !ok};
  int lo[3], hi[3];
  MPI_Allreduce(mine, lo, 3, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(mine, hi, 3, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  /* The handle works after it: the same collective, nothing injected. */
  int again = 0;
  ocal_status st2 = run(c, &again);
  int bad_after = st2 != OCAL_OK || !again, any_after = 0;
  MPI_Allreduce(&bad_after, &any_after, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  const char *why = lo[0] != hi[0] ? "the ranks' statuses differ"
                    : hi[1] ? "an error status without a message"
                    : hi[2] ? "a wrong result with OCAL_OK"
                    : any_after ? "the next collective failed" : NULL;
  runs++;
  reported += lo[0] != OCAL_OK;
  if (why) {
    failures++;
    if (rank == 0)
      printf("FAIL %s %s:%lu on rank %d: %s (statuses %s .. %s)\n", coll_names[c], e, n, victim,
             why, ocal_status_name((ocal_status)lo[0]), ocal_status_name((ocal_status)hi[0]));
    if (st != OCAL_OK) fprintf(stderr, "  rank %d: %s\n", rank, msg);
  }
}

int main(int argc, char **argv) {
  int level;
  long max_n = 6;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &level);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  verbose = getenv("MPI_FAULT_VERBOSE") != NULL;
  if (argc == 3 && !strcmp(argv[1], "--max-n")) max_n = atol(argv[2]);
  else if (argc != 1) {
    if (rank == 0) fprintf(stderr, "usage: mpi_fault_program [--max-n N]\n");
    MPI_Finalize();
    return 2;
  }
  size_t nb = N_BIG, ns = N_SMALL, np = N_PART, ng = (size_t)nranks * N_PART;
  host = fault_host_alloc((nb > ng ? nb : ng) * sizeof *host);
  if (!host || ocal_mpi_create(MPI_COMM_WORLD, NULL, &mpi) != OCAL_OK ||
      ocal_mpi_get_context(mpi, &ctx) != OCAL_OK ||
      ocal_buffer_create(ctx, OCAL_F32, 1, &nb, &big) != OCAL_OK ||
      ocal_buffer_create(ctx, OCAL_F32, 1, &ns, &small) != OCAL_OK ||
      ocal_buffer_create(ctx, OCAL_F32, 1, &np, &part) != OCAL_OK ||
      ocal_buffer_create(ctx, OCAL_F32, 1, &ng, &gathered) != OCAL_OK ||
      ocal_buffer_create(ctx, OCAL_F32, 1, &ng, &spread) != OCAL_OK) {
    fprintf(stderr, "mpi_fault_program: rank %d: set-up failed: %s\n", rank, ocal_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  ocal_mpi_info info = {.struct_size = sizeof info};
  ocal_mpi_get_info(mpi, &info);
  if (rank == 0) printf("mpi_fault_program: %d ranks, %s\n", nranks, info.path);
  for (int c = 0; c < C_COUNT; c++) {
    int ok = 0;
    /* Once to build its kernels, once to count. */
    if (run((coll)c, &ok) != OCAL_OK || !ok) {
      fprintf(stderr, "mpi_fault_program: %s fails without a fault\n", coll_names[c]);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    run((coll)c, &ok);
    unsigned long counted[N_ENTRIES];
    memcpy(counted, calls, sizeof calls);
    for (size_t e = 0; e < N_ENTRIES; e++) {
      unsigned long k = counted[e], most = 0;
      MPI_Allreduce(&k, &most, 1, MPI_UNSIGNED_LONG, MPI_MAX, MPI_COMM_WORLD);
      for (unsigned long n = 1; n <= most; n++) {
        /* 1, 2, the last two, and max_n - 4 evenly spaced between (all when few). */
        int pick = max_n <= 0 || most <= (unsigned long)max_n || n <= 2 || n + 1 >= most;
        for (long j = 1; !pick && j <= max_n - 4; j++)
          pick = n == 1 + (unsigned long)j * (most - 1) / (unsigned long)(max_n - 3);
        if (pick) inject((coll)c, entries[e], n, (int)(n % (unsigned long)nranks));
      }
    }
    /* The call's first host allocation, its request: the call must still meet its peers. */
    inject((coll)c, "malloc", 1, c % nranks);
  }
  if (rank == 0)
    printf("mpi_fault_program: %d injected failures on %d ranks: %d failed the collective on every "
           "rank alike, %d were absorbed (correct results), %d broke a rule\n", runs, nranks,
           reported, runs - reported - failures, failures);
  ocal_buffer_release(big);
  ocal_buffer_release(small);
  ocal_buffer_release(part);
  ocal_buffer_release(gathered);
  ocal_buffer_release(spread);
  ocal_mpi_release(mpi);
  free(host);
  MPI_Finalize();
  return failures ? 1 : 0;
}
