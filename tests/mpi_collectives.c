/* libocal-mpi's tests, run by tests/mpi.sh under mpirun with 2 and 3 ranks on PoCL: every
 * collective against a double-precision host reference, at sizes that are not multiples of
 * the rank count (some smaller than it) and that span many pipelined chunks (mpi.sh sets a
 * small OCAL_MPI_CHUNK), for every element type and operation; non-blocking collectives in
 * flight while the device computes, ordered by their events; and the errors every rank must
 * see, alike, when the ranks' calls differ. Each rank checks its own results; the exit status
 * is 1 on every rank when any rank failed a check. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ocal/mpi.h>

static int rank, nranks, failures, checks;
static ocal_mpi mpi;
static ocal_context ctx;

#define CHECK(cond, ...)                                         \
  do {                                                           \
    checks++;                                                    \
    if (!(cond)) {                                               \
      failures++;                                                \
      fprintf(stderr, "rank %d: %s:%d: ", rank, __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                              \
      fprintf(stderr, "\n");                                     \
    }                                                            \
  } while (0)

#define OK(call)                                                                        \
  do {                                                                                  \
    ocal_status s_ = (call);                                                            \
    CHECK(s_ == OCAL_OK, "%s -> %s: %s", #call, ocal_status_name(s_), ocal_last_error()); \
  } while (0)

/* Element i of rank r's data for a test `salt`: integers from -50 to 49 (exact in every type,
 * sums exact in f32 too up to 2^24) plus, for floats, a fraction. */
static double value(int r, size_t i, int salt, int is_float) {
  uint64_t x = (uint64_t)r * 0x9E3779B97F4A7C15ull ^ (uint64_t)i * 0xBF58476D1CE4E5B9ull ^
               (uint64_t)salt * 0x94D049BB133111EBull;
  x ^= x >> 31;
  x *= 0xD6E8FEB86CA6B4D9ull;
  x ^= x >> 29;
  double v = (double)(int)(x % 100) - 50.0;
  if (is_float) v += (double)((x >> 20) % 1024) / 1024.0;
  return v;
}

static int is_float(ocal_dtype t) { return t == OCAL_F32 || t == OCAL_F64; }

static void to_host_type(ocal_dtype t, const double *src, void *dst, size_t n) {
  for (size_t i = 0; i < n; i++) switch (t) {
    case OCAL_F32: ((float *)dst)[i] = (float)src[i]; break;
    case OCAL_F64: ((double *)dst)[i] = src[i]; break;
    case OCAL_I32: ((int32_t *)dst)[i] = (int32_t)src[i]; break;
    case OCAL_I64: ((int64_t *)dst)[i] = (int64_t)src[i]; break;
    case OCAL_U8: ((uint8_t *)dst)[i] = (uint8_t)((int)src[i] & 255); break;
    default: break;
    }
}

static double from_host_type(ocal_dtype t, const void *src, size_t i) {
  switch (t) {
  case OCAL_F32: return ((const float *)src)[i];
  case OCAL_F64: return ((const double *)src)[i];
  case OCAL_I32: return ((const int32_t *)src)[i];
  case OCAL_I64: return (double)((const int64_t *)src)[i];
  case OCAL_U8: return ((const uint8_t *)src)[i];
  default: return 0;
  }
}

/* A buffer of n elements holding rank r's data for salt. */
static ocal_buffer make(ocal_dtype t, size_t n, int r, int salt) {
  double *d = malloc((n ? n : 1) * sizeof *d);
  void *h = malloc((n ? n : 1) * 8);
  for (size_t i = 0; i < n; i++) d[i] = value(r, i, salt, is_float(t));
  to_host_type(t, d, h, n);
  ocal_buffer b = NULL;
  OK(ocal_buffer_from_host(ctx, t, 1, &n, h, &b));
  free(d);
  free(h);
  return b;
}

static double *download(ocal_buffer b, ocal_dtype t, size_t n) {
  void *h = malloc((n ? n : 1) * 8);
  double *d = malloc((n ? n : 1) * sizeof *d);
  OK(ocal_buffer_read(b, 0, n, h, NULL));
  for (size_t i = 0; i < n; i++) d[i] = from_host_type(t, h, i);
  free(h);
  return d;
}

/* The reduction of every rank's element i, in double precision. */
static double reference(ocal_mpi_op op, ocal_dtype t, size_t i, int salt) {
  double acc = 0;
  for (int r = 0; r < nranks; r++) {
    double v = value(r, i, salt, is_float(t));
    if (t == OCAL_F32) v = (float)v;
    if (r == 0) acc = v;
    else if (op == OCAL_MPI_SUM) acc += v;
    else if (op == OCAL_MPI_MAX) acc = v > acc ? v : acc;
    else acc = v < acc ? v : acc;
  }
  return acc;
}

static int close_enough(ocal_dtype t, double got, double want) {
  if (!is_float(t)) return got == want;
  double tol = (t == OCAL_F32 ? 1e-5 : 1e-12) * (fabs(want) + 50.0 * nranks);
  return fabs(got - want) <= tol;
}

/* Every rank holds the same bits of b: an FNV-1a hash of its bytes, compared across ranks. */
static void check_same_bits(ocal_buffer b, ocal_dtype t, size_t n, const char *what) {
  size_t bytes = n * ocal_dtype_size(t);
  unsigned char *h = malloc(bytes ? bytes : 1);
  OK(ocal_buffer_read(b, 0, n, h, NULL));
  unsigned long long x = 1469598103934665603ull, lo = 0, hi = 0;
  for (size_t i = 0; i < bytes; i++) x = (x ^ h[i]) * 1099511628211ull;
  free(h);
  MPI_Allreduce(&x, &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&x, &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  CHECK(lo == hi, "%s: the ranks' results differ in their bits", what);
}

static const ocal_dtype types[] = {OCAL_F32, OCAL_F64, OCAL_I32, OCAL_I64};
static const size_t sizes[] = {1, 2, 7, 1000, 40037};

static void test_allreduce(int has_fp64) {
  int salt = 1;
  for (size_t ti = 0; ti < 4; ti++) {
    ocal_dtype t = types[ti];
    if (t == OCAL_F64 && !has_fp64) continue;
    for (int op = 0; op < 3; op++)
      for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++, salt++) {
        size_t n = sizes[si];
        ocal_buffer b = make(t, n, rank, salt);
        OK(ocal_mpi_allreduce(mpi, b, (ocal_mpi_op)op));
        check_same_bits(b, t, n, "allreduce");
        double *got = download(b, t, n);
        size_t bad = 0, first = 0;
        for (size_t i = 0; i < n; i++)
          if (!close_enough(t, got[i], reference((ocal_mpi_op)op, t, i, salt)) && !bad++) first = i;
        CHECK(bad == 0, "allreduce %s %s n=%zu: %zu wrong, first [%zu] = %.17g, want %.17g",
              ocal_dtype_name(t), ocal_mpi_op_name((ocal_mpi_op)op), n, bad, first, got[first],
              reference((ocal_mpi_op)op, t, first, salt));
        free(got);
        ocal_buffer_release(b);
      }
  }
}

/* A view in the middle of a larger buffer: only its elements take part. */
static void test_allreduce_view(void) {
  size_t n = 5003, off = 37, len = 4001;
  ocal_buffer whole = make(OCAL_F32, n, rank, 500), v;
  OK(ocal_buffer_view(whole, off, 1, &len, &v));
  OK(ocal_mpi_allreduce(mpi, v, OCAL_MPI_SUM));
  double *got = download(whole, OCAL_F32, n);
  size_t bad = 0;
  for (size_t i = 0; i < n; i++) {
    double want = i >= off && i < off + len ? reference(OCAL_MPI_SUM, OCAL_F32, i, 500)
                                            : (float)value(rank, i, 500, 1);
    if (!close_enough(OCAL_F32, got[i], want)) bad++;
  }
  CHECK(bad == 0, "allreduce of a view: %zu elements wrong (outside the view must not change)",
        bad);
  free(got);
  ocal_buffer_release(v);
  ocal_buffer_release(whole);
}

static void test_broadcast(void) {
  const ocal_dtype bt[] = {OCAL_U8, OCAL_F32, OCAL_I64};
  const size_t bn[] = {13, 40037, 999};
  for (int k = 0; k < 3; k++) {
    int root = (k + nranks - 1) % nranks;
    ocal_buffer b = make(bt[k], bn[k], rank, 600 + k);
    OK(ocal_mpi_broadcast(mpi, b, root));
    double *got = download(b, bt[k], bn[k]);
    size_t bad = 0;
    double *want = malloc(bn[k] * sizeof *want);
    void *h = malloc(bn[k] * 8);
    for (size_t i = 0; i < bn[k]; i++) want[i] = value(root, i, 600 + k, is_float(bt[k]));
    to_host_type(bt[k], want, h, bn[k]);
    for (size_t i = 0; i < bn[k]; i++)
      if (got[i] != from_host_type(bt[k], h, i)) bad++;
    CHECK(bad == 0, "broadcast %s n=%zu from %d: %zu wrong", ocal_dtype_name(bt[k]), bn[k], root,
          bad);
    free(want);
    free(h);
    free(got);
    ocal_buffer_release(b);
  }
}

static void test_allgather(void) {
  const ocal_dtype gt[] = {OCAL_F32, OCAL_I64, OCAL_U8};
  const size_t gn[] = {1001, 3, 10007};
  for (int k = 0; k < 3; k++) {
    size_t n = gn[k], total = n * (size_t)nranks;
    ocal_buffer s = make(gt[k], n, rank, 700 + k), r;
    OK(ocal_buffer_zeros(ctx, gt[k], 1, &total, &r));
    OK(ocal_mpi_allgather(mpi, s, r));
    double *got = download(r, gt[k], total);
    size_t bad = 0;
    void *h = malloc(8);
    for (int q = 0; q < nranks; q++)
      for (size_t i = 0; i < n; i++) {
        double w = value(q, i, 700 + k, is_float(gt[k]));
        to_host_type(gt[k], &w, h, 1);
        if (got[(size_t)q * n + i] != from_host_type(gt[k], h, 0)) bad++;
      }
    CHECK(bad == 0, "allgather %s n=%zu: %zu wrong", ocal_dtype_name(gt[k]), n, bad);
    free(h);
    free(got);
    ocal_buffer_release(s);
    ocal_buffer_release(r);
  }
}

static void test_reduce_scatter(int has_fp64) {
  int salt = 800;
  for (size_t ti = 0; ti < 4; ti++) {
    ocal_dtype t = types[ti];
    if (t == OCAL_F64 && !has_fp64) continue;
    for (int op = 0; op < 3; op++, salt++) {
      size_t n = 3331, total = n * (size_t)nranks;
      ocal_buffer s = make(t, total, rank, salt), r;
      double *before = download(s, t, total);
      OK(ocal_buffer_create(ctx, t, 1, &n, &r));
      OK(ocal_mpi_reduce_scatter(mpi, s, r, (ocal_mpi_op)op));
      double *got = download(r, t, n), *after = download(s, t, total);
      size_t bad = 0, changed = 0;
      for (size_t i = 0; i < n; i++)
        if (!close_enough(t, got[i],
                          reference((ocal_mpi_op)op, t, (size_t)rank * n + i, salt)))
          bad++;
      for (size_t i = 0; i < total; i++) changed += after[i] != before[i];
      CHECK(bad == 0, "reduce_scatter %s %s n=%zu: %zu wrong", ocal_dtype_name(t),
            ocal_mpi_op_name((ocal_mpi_op)op), n, bad);
      CHECK(changed == 0, "reduce_scatter changed %zu elements of send", changed);
      free(got);
      free(before);
      free(after);
      ocal_buffer_release(s);
      ocal_buffer_release(r);
    }
  }
}

/* Non-blocking: three allreduces in flight while the device computes something else; device
 * work ordered after one of them through its event, read back without waiting for the
 * request first; the others finished by polling and by waiting, out of order. */
static void test_nonblocking(void) {
  size_t n = 30011;
  ocal_buffer a = make(OCAL_F32, n, rank, 900), b = make(OCAL_F32, n, rank, 901);
  ocal_buffer c = make(OCAL_I32, n, rank, 902), doubled, other;
  OK(ocal_buffer_create(ctx, OCAL_F32, 1, &n, &doubled));
  OK(ocal_buffer_create(ctx, OCAL_F32, 1, &n, &other));
  ocal_mpi_request ra, rb, rc;
  OK(ocal_mpi_iallreduce(mpi, a, OCAL_MPI_SUM, &ra));
  OK(ocal_mpi_iallreduce(mpi, b, OCAL_MPI_MAX, &rb));
  OK(ocal_mpi_iallreduce(mpi, c, OCAL_MPI_MIN, &rc));
  /* Independent device work while they run. */
  ocal_buffer d = make(OCAL_F32, n, rank, 903);
  OK(ocal_unary(OCAL_UNARY_SQUARE, d, other));
  /* Device work after a's allreduce, through its event only. */
  ocal_event ev = NULL;
  OK(ocal_mpi_request_event(ra, &ev));
  OK(ocal_context_enqueue_wait(ctx, 1, &ev));
  OK(ocal_binary_scalar(OCAL_BINARY_MUL, a, 2.0, doubled));
  double *dd = download(doubled, OCAL_F32, n); /* a blocking read on the main queue */
  size_t bad = 0;
  for (size_t i = 0; i < n; i++)
    if (!close_enough(OCAL_F32, dd[i], 2.0 * reference(OCAL_MPI_SUM, OCAL_F32, i, 900))) bad++;
  CHECK(bad == 0, "device work ordered after iallreduce by its event: %zu wrong", bad);
  free(dd);
  ocal_event_release(ev);
  /* c by polling, then b and a by waiting, out of order. */
  int done = 0;
  ocal_status ts = OCAL_OK;
  for (long spin = 0; !done && ts == OCAL_OK && spin < 100000000L; spin++) ts = ocal_mpi_test(&rc, &done);
  OK(ts);
  CHECK(done && rc == NULL, "ocal_mpi_test never reported the request done");
  OK(ocal_mpi_wait(&rb));
  OK(ocal_mpi_wait(&ra));
  CHECK(ra == NULL && rb == NULL, "ocal_mpi_wait did not clear the request");
  double *gb = download(b, OCAL_F32, n), *gc = download(c, OCAL_I32, n);
  size_t bad_b = 0, bad_c = 0;
  for (size_t i = 0; i < n; i++) {
    bad_b += !close_enough(OCAL_F32, gb[i], reference(OCAL_MPI_MAX, OCAL_F32, i, 901));
    bad_c += !close_enough(OCAL_I32, gc[i], reference(OCAL_MPI_MIN, OCAL_I32, i, 902));
  }
  CHECK(bad_b == 0 && bad_c == 0, "non-blocking max/min: %zu and %zu wrong", bad_b, bad_c);
  free(gb);
  free(gc);
  double *go = download(other, OCAL_F32, n);
  bad = 0;
  for (size_t i = 0; i < n; i++) {
    double v = (float)value(rank, i, 903, 1);
    if (fabs(go[i] - v * v) > 1e-4 * (v * v + 1)) bad++;
  }
  CHECK(bad == 0, "device work beside the collectives: %zu wrong", bad);
  free(go);
  OK(ocal_mpi_wait(&ra) == OCAL_INVALID_ARGUMENT ? OCAL_OK : OCAL_INTERNAL);
  ocal_buffer_release(a);
  ocal_buffer_release(b);
  ocal_buffer_release(c);
  ocal_buffer_release(d);
  ocal_buffer_release(doubled);
  ocal_buffer_release(other);
}

/* A blocking call on one rank meets non-blocking calls on the others (on three or more ranks
 * of a node the two take different paths unless every rank blocks): the ranks agree on one
 * path, and every rank gets the sum, with the same bits. */
static void test_mixed_blocking(void) {
  size_t n = 30011;
  ocal_buffer a = make(OCAL_F32, n, rank, 950);
  if (rank == 0) {
    OK(ocal_mpi_allreduce(mpi, a, OCAL_MPI_SUM));
  } else {
    ocal_mpi_request r;
    OK(ocal_mpi_iallreduce(mpi, a, OCAL_MPI_SUM, &r));
    OK(ocal_mpi_wait(&r));
  }
  double *got = download(a, OCAL_F32, n);
  size_t bad = 0;
  for (size_t i = 0; i < n; i++)
    if (!close_enough(OCAL_F32, got[i], reference(OCAL_MPI_SUM, OCAL_F32, i, 950))) bad++;
  CHECK(bad == 0, "blocking on rank 0, non-blocking elsewhere: %zu wrong", bad);
  /* The same bits on every rank: the sum of the results' bit patterns agrees. */
  float *f = malloc(n * sizeof *f);
  unsigned long long mine = 0, lo = 0, hi = 0;
  OK(ocal_buffer_read(a, 0, n, f, NULL));
  for (size_t i = 0; i < n; i++) {
    uint32_t u;
    memcpy(&u, &f[i], sizeof u);
    mine = mine * 1000003ull + u;
  }
  MPI_Allreduce(&mine, &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&mine, &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  CHECK(lo == hi, "mixed blocking: the ranks' results differ in their bits");
  free(f);
  free(got);
  ocal_buffer_release(a);
}

/* The ranks' calls differ: every rank gets the same status, nobody hangs, and the next
 * collective works. */
static void expect_all(ocal_status got, ocal_status want, const char *what, const char *words) {
  CHECK(got == want, "%s: %s, want %s (%s)", what, ocal_status_name(got),
        ocal_status_name(want), ocal_last_error());
  if (words)
    CHECK(strstr(ocal_last_error(), words) != NULL, "%s: message '%s' lacks '%s'", what,
          ocal_last_error(), words);
  CHECK(strncmp(ocal_last_error(), "ocal_mpi_", 9) == 0, "%s: message '%s' names no call", what,
        ocal_last_error());
}

static void test_mismatch(void) {
  if (nranks < 2) return; /* one rank cannot disagree with itself */
  size_t n = rank == 0 ? 10 : 11;
  ocal_buffer b = make(OCAL_F32, n, rank, 1000);
  expect_all(ocal_mpi_allreduce(mpi, b, OCAL_MPI_SUM), OCAL_SHAPE_MISMATCH, "counts differ",
             "element count");
  ocal_buffer_release(b);

  n = 16;
  b = make(rank == nranks - 1 ? OCAL_I32 : OCAL_F32, n, rank, 1001);
  expect_all(ocal_mpi_allreduce(mpi, b, OCAL_MPI_MAX), OCAL_TYPE_MISMATCH, "types differ",
             "on others (this rank: "); /* the types by name */
  CHECK(strstr(ocal_last_error(), "f32") && strstr(ocal_last_error(), "i32"),
        "types differ: message '%s' does not name f32 and i32", ocal_last_error());
  ocal_buffer_release(b);

  b = make(OCAL_F32, n, rank, 1002);
  expect_all(ocal_mpi_allreduce(mpi, b, rank == 0 ? OCAL_MPI_MIN : OCAL_MPI_SUM),
             OCAL_INVALID_ARGUMENT, "operations differ", "operation");
  expect_all(ocal_mpi_broadcast(mpi, b, rank == 0 ? 1 : 0), OCAL_INVALID_ARGUMENT,
             "roots differ", "root");
  /* One rank's arguments are wrong (NULL buffer): all fail with its status, that rank with
   * its own words. */
  ocal_status st = ocal_mpi_allreduce(mpi, rank == 1 ? NULL : b, OCAL_MPI_SUM);
  expect_all(st, OCAL_INVALID_HANDLE, "one rank passed NULL",
             rank == 1 ? "buf is NULL" : "another rank");
  /* Two ranks' arguments are wrong in different ways: each of them gets its own status with
   * its own message, the others the greatest of the two. */
  if (nranks >= 2) {
    ocal_buffer small_u8 = make(OCAL_U8, n, rank, 1006);
    st = ocal_mpi_allreduce(mpi, rank == 0 ? NULL : rank == 1 ? small_u8 : b, OCAL_MPI_SUM);
    expect_all(st, rank == 0 ? OCAL_INVALID_HANDLE : OCAL_TYPE_MISMATCH,
               "one rank passed NULL, another u8",
               rank == 0 ? "buf is NULL" : rank == 1 ? "not u8" : "another rank");
    ocal_buffer_release(small_u8);
  }
  /* One rank passes a type reductions do not take (u8), the others f32: every rank gets
   * OCAL_TYPE_MISMATCH, blocking and not. */
  ocal_buffer odd = make(rank == 0 ? OCAL_U8 : OCAL_F32, n, rank, 1004);
  expect_all(ocal_mpi_allreduce(mpi, odd, OCAL_MPI_SUM), OCAL_TYPE_MISMATCH, "u8 on one rank",
             rank == 0 ? "not u8" : "another rank");
  ocal_mpi_request ro;
  OK(ocal_mpi_iallreduce(mpi, odd, OCAL_MPI_MAX, &ro));
  expect_all(ocal_mpi_wait(&ro), OCAL_TYPE_MISMATCH, "u8 on one rank, non-blocking", NULL);
  ocal_buffer_release(odd);
  /* Device work ordered after a failed collective through its event runs, a finish returns
   * (no hang), and the status comes from the wait. */
  size_t bad_n = rank == 0 ? 10 : 12;
  ocal_buffer lop = make(OCAL_F32, bad_n, rank, 1005);
  ocal_mpi_request rl;
  ocal_event lev = NULL;
  OK(ocal_mpi_iallreduce(mpi, lop, OCAL_MPI_SUM, &rl));
  OK(ocal_mpi_request_event(rl, &lev));
  OK(ocal_context_enqueue_wait(ctx, 1, &lev));
  float seven = 7.0f;
  OK(ocal_buffer_fill(lop, &seven));
  OK(ocal_context_finish(ctx));
  OK(ocal_event_wait(lev));
  expect_all(ocal_mpi_wait(&rl), OCAL_SHAPE_MISMATCH, "counts differ, ordered by its event",
             "element count");
  double *sevens = download(lop, OCAL_F32, bad_n);
  CHECK(sevens[0] == 7.0 && sevens[bad_n - 1] == 7.0,
        "the fill ordered after a failed collective did not run");
  free(sevens);
  ocal_event_release(lev);
  ocal_buffer_release(lop);
  /* A non-blocking mismatch reports at wait. */
  ocal_mpi_request r;
  ocal_buffer u = make(OCAL_U8, n, rank, 1003);
  OK(ocal_mpi_iallreduce(mpi, u, OCAL_MPI_SUM, &r));
  expect_all(ocal_mpi_wait(&r), OCAL_TYPE_MISMATCH, "u8 allreduce", "f32, f64, i32 or i64");
  CHECK(strncmp(ocal_last_error(), "ocal_mpi_iallreduce:", 20) == 0,
        "a non-blocking call's failure names '%s', not the call made", ocal_last_error());
  /* An allgather whose send is a view inside recv (MPI's in-place form, which mpi.h does not
   * take) on the last rank only: every rank fails before any data moves, not with an OpenCL
   * copy error inside the collective. */
  size_t all = n * (size_t)nranks;
  ocal_buffer gathered, inside;
  OK(ocal_buffer_zeros(ctx, OCAL_F32, 1, &all, &gathered));
  OK(ocal_buffer_view(gathered, (size_t)rank * n, 1, &n, &inside));
  ocal_status ag = ocal_mpi_allgather(mpi, rank == nranks - 1 ? inside : b, gathered);
  expect_all(ag, OCAL_INVALID_ARGUMENT, "allgather, send inside recv on one rank",
             rank == nranks - 1 ? "overlap" : "another rank");
  ocal_buffer_release(inside);
  ocal_buffer_release(gathered);
  /* A reduce-scatter whose recv is a view inside send on the first rank only: send must stay
   * unchanged, so every rank fails before any data moves. */
  ocal_buffer scattered, mine;
  OK(ocal_buffer_zeros(ctx, OCAL_F32, 1, &all, &scattered));
  OK(ocal_buffer_view(scattered, (size_t)rank * n, 1, &n, &mine));
  ocal_status rs = ocal_mpi_reduce_scatter(mpi, scattered, rank == 0 ? mine : b, OCAL_MPI_SUM);
  expect_all(rs, OCAL_INVALID_ARGUMENT, "reduce-scatter, recv inside send on one rank",
             rank == 0 ? "overlap" : "another rank");
  ocal_buffer_release(mine);
  ocal_buffer_release(scattered);
  /* Still in step: the next collective works. */
  OK(ocal_mpi_allreduce(mpi, b, OCAL_MPI_SUM));
  double *got = download(b, OCAL_F32, n);
  size_t bad = 0;
  for (size_t i = 0; i < n; i++)
    bad += !close_enough(OCAL_F32, got[i], reference(OCAL_MPI_SUM, OCAL_F32, i, 1002));
  CHECK(bad == 0, "allreduce after the errors: %zu wrong", bad);
  free(got);
  /* Local errors of the handle itself. */
  CHECK(ocal_mpi_allreduce(NULL, b, OCAL_MPI_SUM) == OCAL_INVALID_HANDLE, "NULL handle");
  CHECK(ocal_mpi_iallreduce(mpi, b, OCAL_MPI_SUM, NULL) == OCAL_INVALID_ARGUMENT, "NULL req");
  CHECK(ocal_mpi_wait(NULL) == OCAL_INVALID_ARGUMENT, "wait on NULL");
  ocal_buffer_release(u);
  ocal_buffer_release(b);
}

/* A halo exchange on a ring: each rank sends its first 3 elements left and its last 3 right,
 * and receives its neighbours' into halo buffers. */
static void test_exchange(void) {
  size_t n = 1009, h = 3;
  ocal_buffer x = make(OCAL_F32, n, rank, 1100), halo;
  size_t two = 2 * h;
  OK(ocal_buffer_zeros(ctx, OCAL_F32, 1, &two, &halo));
  int left = (rank + nranks - 1) % nranks, right = (rank + 1) % nranks;
  ocal_mpi_transfer sends[2] = {{x, 0, h, left, 1}, {x, n - h, h, right, 2}};
  ocal_mpi_transfer recvs[2] = {{halo, 0, h, left, 2}, {halo, h, h, right, 1}};
  ocal_mpi_request r;
  OK(ocal_mpi_iexchange(mpi, 2, sends, 2, recvs, &r));
  OK(ocal_mpi_wait(&r));
  double *got = download(halo, OCAL_F32, two);
  size_t bad = 0;
  for (size_t i = 0; i < h; i++) {
    bad += got[i] != (float)value(left, n - h + i, 1100, 1);
    bad += got[h + i] != (float)value(right, i, 1100, 1);
  }
  CHECK(bad == 0, "halo exchange: %zu wrong", bad);
  free(got);
  ocal_mpi_transfer wrong = {x, n - 1, 2, left, 1};
  CHECK(ocal_mpi_iexchange(mpi, 1, &wrong, 0, NULL, &r) == OCAL_SHAPE_MISMATCH,
        "exchange outside the buffer");
  /* The tags mpi.h names, 0 to 32766: the greatest is taken, one more is refused. */
  ocal_mpi_transfer top = {x, 0, 1, rank, 32766}, back = {halo, 0, 1, rank, 32766};
  OK(ocal_mpi_iexchange(mpi, 1, &top, 1, &back, &r));
  OK(ocal_mpi_wait(&r));
  top.tag = 32767;
  CHECK(ocal_mpi_iexchange(mpi, 1, &top, 0, NULL, &r) == OCAL_INVALID_ARGUMENT &&
            strstr(ocal_last_error(), "tags 0 to 32766") != NULL,
        "exchange tag 32767: %s", ocal_last_error());
  ocal_buffer_release(x);
  ocal_buffer_release(halo);
}

/* Every ocal_mpi_* function with NULL for each of its pointer arguments (handles count), the
 * MPI counterpart of tests/check_api_null.c, which cannot call them (it runs without MPI).
 * Every rank passes the same NULL, so a collective that checks its arguments in the ranks'
 * common step still fails alike everywhere and nothing hangs. Each must return a status
 * other than OCAL_OK whose message names the call; the non-blocking collectives report a
 * NULL buffer at ocal_mpi_wait (mpi.h), so there the call and its wait together must fail.
 * The NULLs mpi.h allows (create's options, release's handle, iexchange's arrays when their
 * count is 0) are exercised elsewhere in this file. */
static void expect_null(ocal_status got, const char *fn, const char *what) {
  CHECK(got != OCAL_OK, "%s accepted NULL %s", fn, what);
  CHECK(strstr(ocal_last_error(), fn) != NULL, "%s with NULL %s: message '%s' does not name it",
        fn, what, ocal_last_error());
}

/* A non-blocking call with a NULL argument: it fails at once, or its wait does. */
static void expect_null_async(ocal_status got, ocal_mpi_request *req, const char *fn,
                              const char *what) {
  if (got == OCAL_OK) {
    got = ocal_mpi_wait(req);
    CHECK(got != OCAL_OK, "%s accepted NULL %s (its wait returned OK)", fn, what);
    CHECK(strstr(ocal_last_error(), "is NULL") != NULL || strstr(ocal_last_error(), fn),
          "%s with NULL %s: message '%s' says nothing of it", fn, what, ocal_last_error());
  } else {
    expect_null(got, fn, what);
  }
}

static void test_null_arguments(void) {
  size_t n = 3 * (size_t)nranks;
  ocal_buffer b = make(OCAL_F32, n, rank, 1200), part = make(OCAL_F32, 3, rank, 1201);
  ocal_buffer all = make(OCAL_F32, n * (size_t)nranks, rank, 1202);
  ocal_mpi_request r = NULL;
  ocal_mpi m = NULL;
  expect_null(ocal_mpi_create(MPI_COMM_WORLD, NULL, NULL), "ocal_mpi_create", "mpi");
  ocal_context c;
  ocal_mpi_info info = {sizeof info};
  expect_null(ocal_mpi_get_context(NULL, &c), "ocal_mpi_get_context", "mpi");
  expect_null(ocal_mpi_get_context(mpi, NULL), "ocal_mpi_get_context", "ctx");
  expect_null(ocal_mpi_get_info(NULL, &info), "ocal_mpi_get_info", "mpi");
  expect_null(ocal_mpi_get_info(mpi, NULL), "ocal_mpi_get_info", "info");
  expect_null(ocal_mpi_allreduce(m, b, OCAL_MPI_SUM), "ocal_mpi_allreduce", "mpi");
  expect_null(ocal_mpi_allreduce(mpi, NULL, OCAL_MPI_SUM), "ocal_mpi_allreduce", "buf");
  expect_null(ocal_mpi_broadcast(m, b, 0), "ocal_mpi_broadcast", "mpi");
  expect_null(ocal_mpi_broadcast(mpi, NULL, 0), "ocal_mpi_broadcast", "buf");
  expect_null(ocal_mpi_allgather(m, part, all), "ocal_mpi_allgather", "mpi");
  expect_null(ocal_mpi_allgather(mpi, NULL, all), "ocal_mpi_allgather", "send");
  expect_null(ocal_mpi_allgather(mpi, part, NULL), "ocal_mpi_allgather", "recv");
  expect_null(ocal_mpi_reduce_scatter(m, b, part, OCAL_MPI_SUM), "ocal_mpi_reduce_scatter",
              "mpi");
  expect_null(ocal_mpi_reduce_scatter(mpi, NULL, part, OCAL_MPI_SUM),
              "ocal_mpi_reduce_scatter", "send");
  expect_null(ocal_mpi_reduce_scatter(mpi, b, NULL, OCAL_MPI_SUM), "ocal_mpi_reduce_scatter",
              "recv");
  expect_null(ocal_mpi_iallreduce(m, b, OCAL_MPI_SUM, &r), "ocal_mpi_iallreduce", "mpi");
  expect_null_async(ocal_mpi_iallreduce(mpi, NULL, OCAL_MPI_SUM, &r), &r,
                    "ocal_mpi_iallreduce", "buf");
  expect_null(ocal_mpi_iallreduce(mpi, b, OCAL_MPI_SUM, NULL), "ocal_mpi_iallreduce", "req");
  expect_null(ocal_mpi_ibroadcast(m, b, 0, &r), "ocal_mpi_ibroadcast", "mpi");
  expect_null_async(ocal_mpi_ibroadcast(mpi, NULL, 0, &r), &r, "ocal_mpi_ibroadcast", "buf");
  expect_null(ocal_mpi_ibroadcast(mpi, b, 0, NULL), "ocal_mpi_ibroadcast", "req");
  expect_null(ocal_mpi_iallgather(m, part, all, &r), "ocal_mpi_iallgather", "mpi");
  expect_null_async(ocal_mpi_iallgather(mpi, NULL, all, &r), &r, "ocal_mpi_iallgather", "send");
  expect_null_async(ocal_mpi_iallgather(mpi, part, NULL, &r), &r, "ocal_mpi_iallgather",
                    "recv");
  expect_null(ocal_mpi_iallgather(mpi, part, all, NULL), "ocal_mpi_iallgather", "req");
  expect_null(ocal_mpi_ireduce_scatter(m, b, part, OCAL_MPI_SUM, &r),
              "ocal_mpi_ireduce_scatter", "mpi");
  expect_null_async(ocal_mpi_ireduce_scatter(mpi, NULL, part, OCAL_MPI_SUM, &r), &r,
                    "ocal_mpi_ireduce_scatter", "send");
  expect_null_async(ocal_mpi_ireduce_scatter(mpi, b, NULL, OCAL_MPI_SUM, &r), &r,
                    "ocal_mpi_ireduce_scatter", "recv");
  expect_null(ocal_mpi_ireduce_scatter(mpi, b, part, OCAL_MPI_SUM, NULL),
              "ocal_mpi_ireduce_scatter", "req");
  /* iexchange is not collective: each rank's NULLs fail locally. */
  ocal_mpi_transfer t = {b, 0, 1, (rank + 1) % nranks, 7};
  expect_null(ocal_mpi_iexchange(m, 1, &t, 1, &t, &r), "ocal_mpi_iexchange", "mpi");
  expect_null(ocal_mpi_iexchange(mpi, 1, NULL, 0, NULL, &r), "ocal_mpi_iexchange", "sends");
  expect_null(ocal_mpi_iexchange(mpi, 0, NULL, 1, NULL, &r), "ocal_mpi_iexchange", "recvs");
  expect_null(ocal_mpi_iexchange(mpi, 0, NULL, 0, NULL, NULL), "ocal_mpi_iexchange", "req");
  ocal_mpi_request none = NULL;
  int done = 0;
  ocal_event ev = NULL;
  expect_null(ocal_mpi_wait(NULL), "ocal_mpi_wait", "req");
  expect_null(ocal_mpi_wait(&none), "ocal_mpi_wait", "*req");
  expect_null(ocal_mpi_test(NULL, &done), "ocal_mpi_test", "req");
  expect_null(ocal_mpi_test(&none, &done), "ocal_mpi_test", "*req");
  expect_null(ocal_mpi_request_event(NULL, &ev), "ocal_mpi_request_event", "req");
  /* A live request for the out-parameters: the collective still has to be finished. */
  OK(ocal_mpi_iallreduce(mpi, b, OCAL_MPI_SUM, &r));
  expect_null(ocal_mpi_test(&r, NULL), "ocal_mpi_test", "done");
  expect_null(ocal_mpi_request_event(r, NULL), "ocal_mpi_request_event", "event");
  OK(ocal_mpi_wait(&r));
  CHECK(ocal_mpi_release(NULL) == OCAL_OK, "release of NULL is documented as a no-op");
  CHECK(strcmp(ocal_mpi_op_name((ocal_mpi_op)99), "invalid") == 0, "op name of an unknown op");
  /* Still in step after all that. */
  OK(ocal_mpi_allreduce(mpi, b, OCAL_MPI_SUM));
  ocal_buffer_release(b);
  ocal_buffer_release(part);
  ocal_buffer_release(all);
}

/* Arguments: --path WORDS (ocal_mpi_info's path must contain them) and --nodes N (the number
 * of nodes it must see), set by tests/mpi.sh for each path it runs. */
int main(int argc, char **argv) {
  const char *want_path = NULL;
  int want_nodes = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--path")) want_path = argv[i + 1];
    else if (!strcmp(argv[i], "--nodes")) want_nodes = atoi(argv[i + 1]);
  }
  int level;
  MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &level);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  CHECK(ocal_mpi_create(MPI_COMM_NULL, NULL, &mpi) == OCAL_INVALID_ARGUMENT, "MPI_COMM_NULL");
  /* A device that fails (on every rank: no rank waits) names the call made, not the libocal
   * call inside it that failed. */
  ocal_context_options nowhere;
  ocal_context_options_init(&nowhere);
  nowhere.device = "no-such-device";
  CHECK(ocal_mpi_create(MPI_COMM_WORLD, &nowhere, &mpi) == OCAL_DEVICE_NOT_FOUND && !mpi,
        "a device that matches nothing: %s", ocal_last_error());
  CHECK(strncmp(ocal_last_error(), "ocal_mpi_create: ", 17) == 0 &&
            !strstr(ocal_last_error(), "ocal_context_create") &&
            strstr(ocal_last_error(), "'no-such-device'"),
        "a device that matches nothing: message '%s'", ocal_last_error());
  /* Options not started from ocal_context_options_init (struct_size 0) are refused, as
   * ocal_context_create refuses them, not read as the defaults with the device ignored. */
  ocal_context_options unset;
  memset(&unset, 0, sizeof unset);
  unset.device = "no-such-device";
  CHECK(ocal_mpi_create(MPI_COMM_WORLD, &unset, &mpi) == OCAL_INVALID_ARGUMENT && !mpi &&
            strncmp(ocal_last_error(), "ocal_mpi_create: ", 17) == 0 &&
            strstr(ocal_last_error(), "struct_size"),
        "options with struct_size 0: %s", ocal_last_error());
  ocal_mpi_release(mpi);
  mpi = NULL;
  ocal_status st = ocal_mpi_create(MPI_COMM_WORLD, NULL, &mpi);
  if (st != OCAL_OK) {
    fprintf(stderr, "rank %d: ocal_mpi_create: %s\n", rank, ocal_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  OK(ocal_mpi_get_context(mpi, &ctx));
  ocal_mpi_info info = {sizeof info};
  OK(ocal_mpi_get_info(mpi, &info));
  ocal_device_info dev = {sizeof dev};
  OK(ocal_context_get_device_info(ctx, &dev));
  CHECK(info.rank == rank && info.size == nranks, "info rank %d size %d", info.rank, info.size);
  CHECK(info.local_size == nranks && info.local_rank == rank, "one node: local %d of %d",
        info.local_rank, info.local_size);
  /* On one CPU device every rank shares it; on GPUs, ranks beyond the GPUs share. */
  if (dev.type == OCAL_DEVICE_CPU)
    CHECK(info.device_sharers == nranks, "sharers %d on the CPU device", info.device_sharers);
  CHECK(info.device_id[0] != '\0', "no device id");
  CHECK(info.nodes == want_nodes, "info.nodes %d, want %d", info.nodes, want_nodes);
  if (want_path)
    CHECK(strstr(info.path, want_path) != NULL, "info.path '%s' lacks '%s'", info.path, want_path);
  CHECK(info.shared == (strncmp(info.path, "node-local", 10) == 0), "info.shared %d, path '%s'",
        info.shared, info.path);
  const char *async_env = getenv("OCAL_MPI_ASYNC");
  int want_async = level == MPI_THREAD_MULTIPLE && !(async_env && !strcmp(async_env, "0"));
  CHECK(info.async == want_async, "async %d at thread level %d", info.async, level);
  if (rank == 0)
    printf("mpi_collectives: %d ranks on %s (%s), device shared by %d, async %d, chunk %zu B x %d, "
           "%d node(s), below %zu B MPI_Allreduce; %s\n",
           nranks, dev.name, info.device_id, info.device_sharers, info.async, info.chunk_bytes,
           info.slots, info.nodes, info.small_bytes, info.path);
  int has_fp64 = 0;
  ocal_context_get_fp64(ctx, &has_fp64);

  test_allreduce(has_fp64);
  test_allreduce_view();
  test_broadcast();
  test_allgather();
  test_reduce_scatter(has_fp64);
  test_nonblocking();
  test_mixed_blocking();
  test_mismatch();
  test_exchange();
  test_null_arguments();

  /* Release refuses while a request is unfinished, and leaves everything usable. */
  size_t one = 1;
  ocal_buffer last;
  ocal_mpi_request lr;
  OK(ocal_buffer_zeros(ctx, OCAL_I64, 1, &one, &last));
  OK(ocal_mpi_iallreduce(mpi, last, OCAL_MPI_SUM, &lr));
  CHECK(ocal_mpi_release(mpi) == OCAL_INVALID_ARGUMENT, "release with a request in flight");
  OK(ocal_mpi_wait(&lr));
  ocal_buffer_release(last);
  OK(ocal_mpi_release(mpi));
  /* A released handle fails every call with OCAL_INVALID_HANDLE, its freed memory unread
   * (AddressSanitizer's build would report a read), and no message is sent. */
  ocal_context gone;
  ocal_mpi_info gone_info = {sizeof gone_info};
  ocal_mpi_request gone_req;
  CHECK(ocal_mpi_get_context(mpi, &gone) == OCAL_INVALID_HANDLE &&
            strstr(ocal_last_error(), "released") != NULL,
        "get_context after release: %s", ocal_last_error());
  CHECK(ocal_mpi_get_info(mpi, &gone_info) == OCAL_INVALID_HANDLE, "get_info after release");
  CHECK(ocal_mpi_allreduce(mpi, NULL, OCAL_MPI_SUM) == OCAL_INVALID_HANDLE,
        "allreduce after release");
  CHECK(ocal_mpi_ibroadcast(mpi, NULL, 0, &gone_req) == OCAL_INVALID_HANDLE,
        "ibroadcast after release");
  CHECK(ocal_mpi_release(mpi) == OCAL_INVALID_HANDLE, "a second release");
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("mpi_collectives: %d checks per rank, %d failures on %d ranks\n", checks, total,
           nranks);
  MPI_Finalize();
  return total ? 1 : 0;
}
