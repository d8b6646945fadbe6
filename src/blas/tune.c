/* ocal — the GEMM tuner: a timed search over CLBlast's kernel parameters.
 *
 * Three phases share the time budget:
 *   A. Xgemm, the fast kernel of the indirect path, timed at the large size S. The search
 *      starts from the parameters in effect (a tuning file or the built-in entry) and from
 *      seeds that did well on devices like this one, then climbs greedily: it mutates one or
 *      two parameters of the best set, and now and then tries a random set.
 *   B. XgemmDirect, the general kernel for small products, timed at a size below the switch
 *      point, the same way.
 *   C. The switch point XGEMM_MIN_INDIRECT_SIZE: both paths timed at sizes up to S; the
 *      indirect one takes over from the smallest size at which it wins from there on.
 * Every candidate is applied with CLBlastOverrideParameters and runs real GEMMs through
 * ocal_gemm; its results are checked against a double-precision host reference (sampled
 * entries of the timed product, and products of odd shapes with alpha and beta through both
 * kernels). A candidate that fails to build or computes wrong results is dropped.
 *
 * The switch point stays fixed during A and B, so that each candidate costs one kernel
 * build: CLBlast builds one program per parameter set, and on a CPU device (PoCL) a build
 * takes seconds. */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "blas_internal.h"

#ifdef OCAL_HAVE_CLBLAST
#include <clblast_c.h>

ocal_status ocal_blas_tune_options_init(ocal_blas_tune_options *o) {
  if (!o) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "options must not be NULL");
  memset(o, 0, sizeof *o);
  o->struct_size = sizeof *o;
  o->dtype = OCAL_F32;
  o->budget_s = 60.0;
  o->store = 1;
  o->size = 0;
  o->seed = 1;
  o->phases = OCAL_TUNE_XGEMM | OCAL_TUNE_DIRECT | OCAL_TUNE_SWITCH;
  return OCAL_OK;
}

/* ---- the search space ----------------------------------------------------------------- */

typedef struct choice {
  int id;
  int n;
  long vals[6];
} choice;

/* Xgemm kernel 0 (GEMMK=0; KWI=2, KREG=1 fixed), as CLBlast's own tuner explores it. */
static const choice xgemm0_space[] = {
    {OCAL__P_MWG, 4, {16, 32, 64, 128}}, {OCAL__P_NWG, 4, {16, 32, 64, 128}},
    {OCAL__P_KWG, 2, {16, 32}},          {OCAL__P_MDIMC, 3, {8, 16, 32}},
    {OCAL__P_NDIMC, 3, {8, 16, 32}},     {OCAL__P_MDIMA, 3, {8, 16, 32}},
    {OCAL__P_NDIMB, 3, {8, 16, 32}},     {OCAL__P_VWM, 4, {1, 2, 4, 8}},
    {OCAL__P_VWN, 4, {1, 2, 4, 8}},      {OCAL__P_STRM, 2, {0, 1}},
    {OCAL__P_STRN, 2, {0, 1}},           {OCAL__P_SA, 2, {0, 1}},
    {OCAL__P_SB, 2, {0, 1}}};
/* Xgemm's kernel 1 (GEMMK=1) is not searched: some of its sets that satisfy CLBlast's tuner
 * constraints computed wrong results or crashed the context on NVIDIA's driver, and none beat
 * kernel 0. A tuning file may still name it. */
static const choice direct_space[] = {
    {OCAL__P_WGD, 4, {8, 16, 32, 64}}, {OCAL__P_MDIMCD, 3, {8, 16, 32}},
    {OCAL__P_NDIMCD, 3, {8, 16, 32}},  {OCAL__P_MDIMAD, 3, {8, 16, 32}},
    {OCAL__P_NDIMBD, 3, {8, 16, 32}},  {OCAL__P_KWID, 3, {2, 8, 16}},
    {OCAL__P_VWMD, 4, {1, 2, 4, 8}},   {OCAL__P_VWND, 4, {1, 2, 4, 8}},
    {OCAL__P_PADA, 2, {0, 1}},         {OCAL__P_PADB, 2, {0, 1}}};
#define NCHOICES(s) ((int)(sizeof(s) / sizeof((s)[0])))

/* Seeds in CLBlast's order: GEMMK KREG KWG KWI MDIMA MDIMC MWG NDIMB NDIMC NWG SA SB STRM
 * STRN VWM VWN. The GPU ones are shapes that did well on recent NVIDIA and AMD GPUs (large
 * tiles with 4-wide vectors first); the CPU ones suit small caches. */
static const long xgemm_seeds_gpu[][OCAL__XGEMM_COUNT] = {
    {0, 1, 32, 2, 16, 16, 128, 32, 8, 128, 1, 1, 1, 1, 4, 4},
    {0, 1, 16, 2, 16, 16, 128, 16, 16, 128, 1, 1, 0, 0, 4, 4},
    {0, 1, 32, 2, 16, 16, 128, 16, 16, 128, 1, 1, 0, 0, 4, 4},
    {0, 1, 32, 2, 8, 8, 64, 32, 16, 128, 1, 1, 1, 1, 2, 2},
    {0, 1, 32, 2, 16, 16, 64, 8, 8, 64, 1, 1, 0, 0, 4, 4},
    {0, 1, 32, 2, 8, 32, 128, 16, 8, 128, 1, 1, 1, 1, 2, 2},
    {0, 1, 32, 2, 8, 8, 32, 16, 16, 64, 1, 1, 0, 0, 4, 4}};
static const long xgemm_seeds_cpu[][OCAL__XGEMM_COUNT] = {
    {0, 1, 32, 2, 8, 8, 32, 16, 16, 32, 1, 1, 0, 0, 4, 2},
    {0, 1, 32, 2, 16, 16, 32, 8, 8, 32, 1, 1, 0, 0, 2, 4}};
/* KWID MDIMAD MDIMCD NDIMBD NDIMCD PADA PADB VWMD VWND WGD */
static const long direct_seeds_gpu[][OCAL__DIRECT_COUNT] = {
    {2, 16, 16, 16, 16, 1, 1, 2, 2, 32},
    {8, 16, 16, 16, 16, 1, 1, 4, 4, 64},
    {2, 8, 8, 8, 8, 1, 1, 4, 4, 32},
    {2, 16, 8, 32, 16, 1, 1, 1, 1, 32}};
static const long direct_seeds_cpu[][OCAL__DIRECT_COUNT] = {
    {2, 8, 8, 8, 8, 1, 1, 1, 1, 16},
    {2, 8, 8, 8, 8, 1, 1, 2, 2, 16}};

/* ---- test problems -------------------------------------------------------------------- */

/* One GEMM problem: device operands and the seed of their host values, which are a pure
 * function of (seed, index), so the reference needs no host copy of A and B. */
typedef struct problem {
  size_t m, n, k;
  ocal_buffer a, b, c;
  uint64_t seed;
} problem;

static double value_at(uint64_t seed, size_t i) {
  uint64_t x = (seed + 0x9e3779b97f4a7c15ull * (i + 1)) ^ 0xd1b54a32d192ed03ull;
  x ^= x >> 31;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 29;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 32;
  return (double)(x >> 11) / (double)(1ull << 52) - 1.0; /* [-1, 1) */
}

typedef struct tuner {
  ocal_context ctx; /* the tuner's own context on the device, rebuilt when a candidate breaks it */
  ocal_context user; /* the caller's */
  problem big, mid, check_ind, check_dir;
  problem mid2, mid4; /* mid/2 and mid/4 (when >= 128): the direct kernel is scored on all */
  int dead; /* no working context could be made */
  ocal_dtype dtype;
  int precision;
  const ocal_blas_tune_options *o;
  double start;
  uint64_t rng;
  ocal__gemm_params *tried;
  int ntried, cap_tried;
  int candidates, rejected;
  double longest; /* the longest a candidate took so far (kernel build included) */
} tuner;

static uint64_t next_rand(tuner *t) {
  uint64_t x = t->rng;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  t->rng = x;
  return x * 0x2545f4914f6cdd1dull;
}

static void say(tuner *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void say(tuner *t, const char *fmt, ...) {
  if (!t->o->progress) return;
  char line[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  t->o->progress(line, t->o->user);
}

/* Writes count values (from value_at(seed, first...)) into buf. */
static ocal_status fill_values(tuner *t, ocal_buffer buf, uint64_t seed) {
  size_t n = buf->numel, es = ocal_dtype_size(t->dtype);
  if (n == 0) return OCAL_OK;
  void *host = malloc(n * es);
  if (!host) return OCAL_FAIL(OCAL_OUT_OF_HOST_MEMORY, "no memory for tuning data");
  for (size_t i = 0; i < n; i++) {
    double v = value_at(seed, i);
    if (t->dtype == OCAL_F32)
      ((float *)host)[i] = (float)v;
    else
      ((double *)host)[i] = v;
  }
  ocal_status s = ocal_buffer_write(buf, 0, n, host, NULL);
  free(host);
  return s;
}

/* The value of an operand as the device saw it (rounded to the element type). */
static double operand(const tuner *t, uint64_t seed, size_t i) {
  double v = value_at(seed, i);
  return t->dtype == OCAL_F32 ? (double)(float)v : v;
}

static void problem_free(problem *p) {
  ocal_buffer_release(p->a);
  ocal_buffer_release(p->b);
  ocal_buffer_release(p->c);
  memset(p, 0, sizeof *p);
}

static ocal_status problem_make(tuner *t, problem *p, size_t m, size_t n, size_t k,
                                uint64_t seed) {
  memset(p, 0, sizeof *p);
  p->m = m, p->n = n, p->k = k, p->seed = seed;
  size_t sa[2] = {m, k}, sb[2] = {k, n}, sc[2] = {m, n};
  ocal_status s = ocal_buffer_create(t->ctx, t->dtype, 2, sa, &p->a);
  if (s == OCAL_OK) s = ocal_buffer_create(t->ctx, t->dtype, 2, sb, &p->b);
  if (s == OCAL_OK) s = ocal_buffer_create(t->ctx, t->dtype, 2, sc, &p->c);
  if (s == OCAL_OK) s = fill_values(t, p->a, seed * 3 + 1);
  if (s == OCAL_OK) s = fill_values(t, p->b, seed * 3 + 2);
  if (s != OCAL_OK) problem_free(p);
  return s;
}

/* Creates the tuner's context on the caller's device and its four problems. */
static ocal_status work_open(tuner *t, size_t big, size_t mid, size_t sw) {
  char selector[32];
  snprintf(selector, sizeof selector, "%d:%d", t->user->info.platform_index,
           t->user->info.device_index);
  ocal_context_options o;
  ocal_context_options_init(&o);
  o.device = selector;
  o.disk_cache = 0;
  o.fp64 = t->user->fp64;
  ocal_status s = ocal_context_create(&o, &t->ctx);
  if (s == OCAL_OK) s = problem_make(t, &t->big, big, big, big, 1);
  if (s == OCAL_OK) s = problem_make(t, &t->mid, mid, mid, mid, 2);
  if (s == OCAL_OK) s = problem_make(t, &t->check_ind, sw + 3, sw + 5, sw + 1, 3);
  if (s == OCAL_OK) s = problem_make(t, &t->check_dir, 37, 29, 23, 4);
  if (s == OCAL_OK && mid / 4 >= 128) s = problem_make(t, &t->mid2, mid / 2, mid / 2, mid / 2, 5);
  if (s == OCAL_OK && mid / 4 >= 128) s = problem_make(t, &t->mid4, mid / 4, mid / 4, mid / 4, 6);
  return s;
}

static void work_close(tuner *t) {
  problem_free(&t->big);
  problem_free(&t->mid);
  problem_free(&t->check_ind);
  problem_free(&t->check_dir);
  problem_free(&t->mid2);
  problem_free(&t->mid4);
  ocal_context_release(t->ctx);
  t->ctx = NULL;
  /* CLBlast caches every program it built, per context, for the life of the process: the
   * search's hundred-odd candidates would stay in memory (and keep the released context's
   * programs alive). The user's contexts rebuild what they use on their next call. */
  CLBlastClearCache();
}

/* After a failed candidate: whether the context still runs commands. A kernel that crashed
 * (an illegal address on a GPU) leaves it unusable, and everything after fails. */
static int work_healthy(tuner *t) {
  if (ocal_context_finish(t->ctx) != OCAL_OK) return 0;
  size_t one = 1;
  float v = 1.0f, back = 0.0f;
  ocal_buffer b;
  if (ocal_buffer_create(t->ctx, OCAL_F32, 1, &one, &b) != OCAL_OK) return 0;
  int ok = ocal_buffer_write(b, 0, 1, &v, NULL) == OCAL_OK &&
           ocal_buffer_read(b, 0, 1, &back, NULL) == OCAL_OK && back == v;
  ocal_buffer_release(b);
  return ok;
}

static void work_rebuild(tuner *t) {
  size_t big = t->big.m, mid = t->mid.m, sw = t->check_ind.k - 1;
  work_close(t);
  say(t, "        the candidate broke the context: starting a new one");
  if (work_open(t, big, mid, sw) != OCAL_OK) {
    say(t, "        no new context: %s", ocal_last_error());
    work_close(t);
    t->dead = 1;
  }
}

/* Runs C = alpha*A*B + beta*C0 (C0 rewritten first when beta != 0) and compares `samples`
 * entries (all when 0) with the host reference. Returns OCAL_OK, an error, or
 * OCAL_INTERNAL with a message when the numbers are wrong. */
static ocal_status problem_check(tuner *t, problem *p, double alpha, double beta,
                                 size_t samples, int run) {
  ocal_status s = OCAL_OK;
  if (run) {
    if (beta != 0.0) s = fill_values(t, p->c, p->seed * 3 + 3);
    if (s == OCAL_OK) s = ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, alpha, p->a, p->b, beta, p->c);
    if (s != OCAL_OK) return s;
  }
  size_t count = p->m * p->n, es = ocal_dtype_size(t->dtype);
  void *host = malloc(count * es);
  if (!host) return OCAL_FAIL(OCAL_OUT_OF_HOST_MEMORY, "no memory for tuning data");
  s = ocal_buffer_read(p->c, 0, count, host, NULL);
  double tol = t->dtype == OCAL_F32 ? 1e-4 : 1e-12;
  size_t todo = samples && samples < count ? samples : count;
  for (size_t q = 0; s == OCAL_OK && q < todo; q++) {
    size_t idx = todo == count ? q : (size_t)(next_rand(t) % count);
    size_t i = idx / p->n, j = idx % p->n;
    double ref = 0.0, bound = 0.0;
    for (size_t kk = 0; kk < p->k; kk++) {
      double prod = operand(t, p->seed * 3 + 1, i * p->k + kk) *
                    operand(t, p->seed * 3 + 2, kk * p->n + j);
      ref += prod;
      bound += fabs(prod);
    }
    ref *= alpha;
    bound *= fabs(alpha);
    if (beta != 0.0) {
      double c0 = operand(t, p->seed * 3 + 3, idx);
      ref += beta * c0;
      bound += fabs(beta * c0);
    }
    double got = t->dtype == OCAL_F32 ? (double)((float *)host)[idx] : ((double *)host)[idx];
    if (!(fabs(got - ref) <= tol * (bound + 1.0) * sqrt((double)p->k + 1.0)))
      s = OCAL_FAIL(OCAL_INTERNAL, "wrong result at (%zu, %zu) of a %zux%zux%zu product: %g, "
                    "expected %g",
                    i, j, p->m, p->n, p->k, got, ref);
  }
  free(host);
  return s;
}

/* Times C = A*B: returns the rate in GFLOP/s (0 on failure, status in *st). The first run
 * (which builds the kernels) is checked on sampled entries. */
static double problem_time(tuner *t, problem *p, ocal_status *st) {
  ocal_context ctx = t->ctx;
  *st = ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1.0, p->a, p->b, 0.0, p->c);
  if (*st == OCAL_OK) *st = ocal_context_finish(ctx);
  if (*st == OCAL_OK) *st = problem_check(t, p, 1.0, 0.0, 48, 0);
  if (*st != OCAL_OK) return 0.0;
  double t0 = ocal__seconds_now();
  *st = ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1.0, p->a, p->b, 0.0, p->c);
  if (*st == OCAL_OK) *st = ocal_context_finish(ctx);
  double one = ocal__seconds_now() - t0;
  if (*st != OCAL_OK) return 0.0;
  int reps = one > 0.02 ? 1 : (int)(0.02 / (one > 1e-6 ? one : 1e-6)) + 1;
  if (reps > 500) reps = 500;
  double best = one;
  for (int round = 0; round < 3 && *st == OCAL_OK; round++) {
    t0 = ocal__seconds_now();
    for (int r = 0; r < reps && *st == OCAL_OK; r++)
      *st = ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1.0, p->a, p->b, 0.0, p->c);
    if (*st == OCAL_OK) *st = ocal_context_finish(ctx);
    double each = (ocal__seconds_now() - t0) / reps;
    if (each < best) best = each;
    if (one > 0.5) break; /* slow devices: one measurement is enough */
  }
  if (*st != OCAL_OK) return 0.0;
  return 2.0 * (double)p->m * (double)p->n * (double)p->k / best * 1e-9;
}

/* ---- candidates ----------------------------------------------------------------------- */

static int tried_before(tuner *t, const ocal__gemm_params *p) {
  for (int i = 0; i < t->ntried; i++)
    if (memcmp(&t->tried[i], p, sizeof *p) == 0) return 1;
  return 0;
}

static void remember(tuner *t, const ocal__gemm_params *p) {
  if (t->ntried == t->cap_tried) {
    int cap = t->cap_tried ? 2 * t->cap_tried : 256;
    ocal__gemm_params *n = realloc(t->tried, (size_t)cap * sizeof *n);
    if (!n) return;
    t->tried = n;
    t->cap_tried = cap;
  }
  t->tried[t->ntried++] = *p;
}

/* "MWG=128 NWG=128 ..." for one kernel's group. */
static void group_text(const ocal__gemm_params *p, int first, int count, char *out,
                       size_t size) {
  size_t used = 0;
  out[0] = '\0';
  for (int i = first; i < first + count && used < size; i++)
    used += (size_t)snprintf(out + used, size - used, "%s%s=%ld", i > first ? " " : "",
                             ocal__gemm_param_defs[i].name, p->v[i]);
}

/* Applies and measures one candidate on problem `timed`, then checks it on `check` (with
 * alpha and beta). Returns the rate, or 0 when it failed (the reason is reported). */
static double evaluate(tuner *t, const ocal__gemm_params *p, problem *timed, problem *check,
                       const char *phase, int first, int count) {
  if (t->dead) return 0.0;
  char why[256], text[512];
  remember(t, p);
  t->candidates++;
  group_text(p, first, count, text, sizeof text);
  if (!ocal__blas_apply(t->ctx, t->precision, p, why, sizeof why)) {
    t->rejected++;
    say(t, "%-6s %3d  rejected: %s  [%s]", phase, t->candidates, why, text);
    return 0.0;
  }
  double t0 = ocal__seconds_now();
  ocal_status st;
  double gflops = problem_time(t, timed, &st);
  /* The direct kernel serves every product below the switch point: its score is the
   * geometric mean of its rates at mid, mid/2 and mid/4, so that a set tuned for one size
   * does not starve the smaller ones. */
  double at_mid = gflops, at_mid2 = 0, at_mid4 = 0;
  if (st == OCAL_OK && timed == &t->mid && t->mid2.a) {
    at_mid2 = problem_time(t, &t->mid2, &st);
    if (st == OCAL_OK) at_mid4 = problem_time(t, &t->mid4, &st);
    gflops = st == OCAL_OK ? cbrt(at_mid * at_mid2 * at_mid4) : 0.0;
  }
  if (st == OCAL_OK) st = problem_check(t, check, 1.5, -0.75, check->m * check->n > 4096 ? 64 : 0, 1);
  if (st != OCAL_OK) {
    t->rejected++;
    say(t, "%-6s %3d  failed (%s): %s  [%s]", phase, t->candidates, ocal_status_name(st),
        ocal_last_error(), text);
    if (!work_healthy(t)) work_rebuild(t);
    return 0.0;
  }
  double took = ocal__seconds_now() - t0;
  if (took > t->longest) t->longest = took;
  if (at_mid2 > 0)
    say(t, "%-6s %3d  %10.1f GFLOP/s  %5.2f s  [%s] (%.0f, %.0f, %.0f at %zu, %zu, %zu)", phase,
        t->candidates, gflops, took, text, at_mid, at_mid2, at_mid4, t->mid.m, t->mid2.m,
        t->mid4.m);
  else
    say(t, "%-6s %3d  %10.1f GFLOP/s  %5.2f s  [%s]", phase, t->candidates, gflops, took, text);
  return gflops;
}

/* A random valid untried neighbour of best in the given space (mutating one or two
 * parameters), or a random point of it when explore is set. Returns 0 when none is found. */
static int propose(tuner *t, const ocal__gemm_params *best, const choice *space, int n,
                   int explore, ocal__gemm_params *out) {
  for (int attempt = 0; attempt < 4000; attempt++) {
    ocal__gemm_params p = *best;
    if (explore) {
      for (int i = 0; i < n; i++) p.v[space[i].id] = space[i].vals[next_rand(t) % space[i].n];
    } else {
      int changes = 1 + (int)(next_rand(t) % 2);
      for (int c = 0; c < changes; c++) {
        const choice *ch = &space[next_rand(t) % (uint64_t)n];
        p.v[ch->id] = ch->vals[next_rand(t) % (uint64_t)ch->n];
      }
    }
    p.v[OCAL__P_GEMMK] = space == xgemm0_space ? 0 : p.v[OCAL__P_GEMMK];
    if (space == xgemm0_space) p.v[OCAL__P_KREG] = 1, p.v[OCAL__P_KWI] = 2;
    if (!ocal__gemm_params_valid(&p, ocal__context_info(t->ctx), t->precision, NULL, 0)) continue;
    if (tried_before(t, &p)) continue;
    *out = p;
    return 1;
  }
  return 0;
}

/* Greedy search of one kernel's group until `until`; best/best_rate are updated. The
 * first candidate (best itself, if untried, then the seeds) always runs. */
static void search(tuner *t, ocal__gemm_params *best, double *best_rate, const long *seeds,
                   int nseeds, int first, int count, problem *timed, problem *check,
                   double until, const char *phase) {
  ocal__gemm_params start = *best;
  int ran = 0;
  /* The set in effect first, then the seeds. */
  for (int s = -1; s < nseeds; s++) {
    ocal__gemm_params p = start;
    if (s >= 0)
      for (int i = 0; i < count; i++) p.v[first + i] = seeds[s * count + i];
    /* The set in effect runs even if an earlier phase tried it: this phase times another
     * kernel of it. */
    if (!ocal__gemm_params_valid(&p, ocal__context_info(t->ctx), t->precision, NULL, 0) ||
        (s >= 0 && tried_before(t, &p)))
      continue;
    if (t->dead || (ran && ocal__seconds_now() + t->longest >= until)) return;
    double r = evaluate(t, &p, timed, check, phase, first, count);
    ran = 1;
    if (r > *best_rate) *best_rate = r, *best = p;
  }
  while (!t->dead && ocal__seconds_now() + t->longest < until) {
    const choice *space;
    int n;
    if (first == OCAL__DIRECT_FIRST)
      space = direct_space, n = NCHOICES(direct_space);
    else
      space = xgemm0_space, n = NCHOICES(xgemm0_space);
    int explore = next_rand(t) % 6 == 0;
    ocal__gemm_params p;
    if (!propose(t, *best_rate > 0 ? best : &start, space, n, explore, &p) &&
        !propose(t, best, space, n, 1, &p))
      return; /* the space is exhausted */
    double r = evaluate(t, &p, timed, check, phase, first, count);
    if (r > *best_rate) *best_rate = r, *best = p;
  }
}

/* ---- the tuner ------------------------------------------------------------------------ */

/* Phase C: the size from which the indirect path wins, with the Xgemm and XgemmDirect
 * parameters of best. Returns 0 when it could not be measured. */
static long find_switch_point(tuner *t, const ocal__gemm_params *best, size_t big) {
  static const size_t sizes[] = {64, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072};
  double rate[2][sizeof sizes / sizeof sizes[0]];
  size_t count = 0;
  while (count < sizeof sizes / sizeof sizes[0] && sizes[count] <= big) count++;
  if (count < 2) return 0;
  for (int path = 0; path < 2; path++) {
    ocal__gemm_params p = *best;
    p.v[OCAL__P_MIN_INDIRECT] = path == 0 ? ocal__gemm_param_defs[OCAL__P_MIN_INDIRECT].max : 1;
    char why[256];
    if (!ocal__blas_apply(t->ctx, t->precision, &p, why, sizeof why)) return 0;
    for (size_t i = 0; i < count; i++) {
      problem pr;
      ocal_status st = problem_make(t, &pr, sizes[i], sizes[i], sizes[i], 99 + i);
      rate[path][i] = st == OCAL_OK ? problem_time(t, &pr, &st) : 0.0;
      problem_free(&pr);
      if (st != OCAL_OK) return 0;
      say(t, "switch      %-8s %5zu^3  %10.1f GFLOP/s", path == 0 ? "direct" : "indirect",
          sizes[i], rate[path][i]);
    }
  }
  /* The smallest size from which indirect wins at every measured size. */
  long point = (long)sizes[count - 1] + 1;
  for (size_t i = count; i-- > 0;) {
    if (rate[1][i] < rate[0][i]) break;
    point = (long)sizes[i];
  }
  return point;
}

ocal_status ocal_blas_tune(ocal_context ctx, const ocal_blas_tune_options *options,
                           ocal_blas_tuning *result) {
  ocal_blas_tune_options defaults;
  ocal_blas_tune_options_init(&defaults);
  ocal_status s;
  /* Only the caller's struct_size bytes are read (0.2's struct ends with `user`). */
  if (options &&
      (s = ocal__options_copy(__func__, "ocal_blas_tune_options_init", &defaults,
                              sizeof defaults, options,
                              offsetof(ocal_blas_tune_options, user) + sizeof defaults.user)) !=
          OCAL_OK)
    return s;
  const ocal_blas_tune_options *o = &defaults;
  s = ocal__blas_check_tuning_call(ctx, o->dtype, __func__);
  if (s != OCAL_OK) return s;
  s = ocal__filled_check(__func__, "result", "ocal_blas_tuning", result, OCAL__BLAS_TUNING_MIN,
                         sizeof *result);
  if (s != OCAL_OK) return s;
  if (!(o->budget_s >= 0.0))
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "budget_s must be >= 0, not %g", o->budget_s);
  const unsigned all = OCAL_TUNE_XGEMM | OCAL_TUNE_DIRECT | OCAL_TUNE_SWITCH;
  if (o->phases & ~all)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT,
                     "phases is 0x%x: take OCAL_TUNE_XGEMM, OCAL_TUNE_DIRECT and OCAL_TUNE_SWITCH "
                     "(0x%x together), or 0 for all of them",
                     o->phases, all);

  tuner t;
  memset(&t, 0, sizeof t);
  t.user = ctx;
  t.dtype = o->dtype;
  t.precision = o->dtype == OCAL_F64 ? 64 : 32;
  t.o = o;
  t.start = ocal__seconds_now();
  t.rng = 0x9e3779b97f4a7c15ull ^ ((uint64_t)o->seed * 0x2545f4914f6cdd1dull);
  const ocal_device_info *d = ocal__context_info(ctx);
  int gpu = d->type == OCAL_DEVICE_GPU || d->type == OCAL_DEVICE_ACCELERATOR;

  /* Start from what is in effect when it is known, else from the first seeds. */
  ocal_blas_tuning current = {sizeof current};
  s = ocal_blas_get_tuning(ctx, o->dtype, &current);
  if (s != OCAL_OK) return s;
  ocal__gemm_params best;
  char why[256];
  if (!current.params[0] ||
      !ocal__gemm_params_parse(current.params, d, t.precision, &best, why, sizeof why)) {
    const long *xs = gpu ? xgemm_seeds_gpu[0] : xgemm_seeds_cpu[0];
    const long *ds = gpu ? direct_seeds_gpu[0] : direct_seeds_cpu[0];
    for (int i = 0; i < OCAL__XGEMM_COUNT; i++) best.v[OCAL__XGEMM_FIRST + i] = xs[i];
    for (int i = 0; i < OCAL__DIRECT_COUNT; i++) best.v[OCAL__DIRECT_FIRST + i] = ds[i];
    best.v[OCAL__P_MIN_INDIRECT] = gpu ? 768 : 256;
  }

  /* Sizes: the indirect kernel is timed at big (>= the switch point), the direct one below
   * it; the check products have odd shapes on either side of the switch point. */
  size_t big = o->size;
  uint64_t bytes = 3ull * 4096 * 4096 * ocal_dtype_size(o->dtype);
  if (big == 0) big = gpu && d->global_mem_bytes > 4 * bytes ? 4096 : 512;
  if (big < 64) big = 64;
  long sw = best.v[OCAL__P_MIN_INDIRECT];
  if (sw > (long)big / 2) sw = (long)big / 2;
  if (sw < 64) sw = 64;
  size_t mid = (size_t)sw - 1;
  mid = mid > 64 ? mid / 32 * 32 : 32;
  /* On a large GPU the direct kernel is tuned at 1024^3, where it competes with the indirect
   * one (whose large tiles leave SMs idle there); the switch point is measured afterwards. */
  if (gpu && big >= 2048) sw = 1088, mid = 1024;
  /* Searching the kernels needs the switch point between the sizes they are timed at; it is
   * kept as it is when it is not searched and no kernel is. */
  unsigned searched = o->phases ? o->phases : OCAL_TUNE_XGEMM | OCAL_TUNE_DIRECT;
  if (searched & (OCAL_TUNE_XGEMM | OCAL_TUNE_DIRECT)) best.v[OCAL__P_MIN_INDIRECT] = sw;

  say(&t, "tuning %s GEMM on %s (%s) for %.0f s: indirect at %zu^3, direct at %zu^3, switch "
      "%ld",
      o->dtype == OCAL_F32 ? "f32" : "f64", d->name, d->driver_version, o->budget_s, big, mid,
      sw);
  s = work_open(&t, big, mid, (size_t)sw);
  double rate_x = 0.0, rate_d = 0.0;
  unsigned phases = o->phases ? o->phases : OCAL_TUNE_XGEMM | OCAL_TUNE_DIRECT | OCAL_TUNE_SWITCH;
  if (s == OCAL_OK) {
    /* The budget is shared 60:25:15 among the phases searched. */
    double wx = phases & OCAL_TUNE_XGEMM ? 0.6 : 0, wd = phases & OCAL_TUNE_DIRECT ? 0.25 : 0;
    double ws = phases & OCAL_TUNE_SWITCH ? 0.15 : 0, total = wx + wd + ws;
    double budget = o->budget_s / (total > 0 ? total : 1);
    const long *xs = gpu ? &xgemm_seeds_gpu[0][0] : &xgemm_seeds_cpu[0][0];
    int nxs = gpu ? (int)(sizeof xgemm_seeds_gpu / sizeof xgemm_seeds_gpu[0])
                  : (int)(sizeof xgemm_seeds_cpu / sizeof xgemm_seeds_cpu[0]);
    if (phases & OCAL_TUNE_XGEMM) {
      search(&t, &best, &rate_x, xs, nxs, OCAL__XGEMM_FIRST, OCAL__XGEMM_COUNT, &t.big,
             &t.check_ind, t.start + wx * budget, "xgemm");
    } else {
      /* Kept as it is: measured once, for the record. */
      rate_x = evaluate(&t, &best, &t.big, &t.check_ind, "xgemm", OCAL__XGEMM_FIRST,
                        OCAL__XGEMM_COUNT);
    }
    if ((phases & OCAL_TUNE_DIRECT) && rate_x > 0 &&
        ocal__seconds_now() < t.start + (wx + wd) * budget) {
      const long *ds = gpu ? &direct_seeds_gpu[0][0] : &direct_seeds_cpu[0][0];
      int nds = gpu ? (int)(sizeof direct_seeds_gpu / sizeof direct_seeds_gpu[0])
                    : (int)(sizeof direct_seeds_cpu / sizeof direct_seeds_cpu[0]);
      search(&t, &best, &rate_d, ds, nds, OCAL__DIRECT_FIRST, OCAL__DIRECT_COUNT, &t.mid,
             &t.check_dir, t.start + (wx + wd) * budget, "direct");
    }
    if ((phases & OCAL_TUNE_SWITCH) && !t.dead && rate_x > 0 &&
        (rate_d > 0 || !(phases & OCAL_TUNE_DIRECT)) && ocal__seconds_now() < t.start + budget) {
      long point = find_switch_point(&t, &best, big);
      if (point > 0) best.v[OCAL__P_MIN_INDIRECT] = point;
      say(&t, "switch      XGEMM_MIN_INDIRECT_SIZE=%ld", best.v[OCAL__P_MIN_INDIRECT]);
    }
  }

  /* The winner, checked once more through both paths before anyone relies on it. */
  if (s == OCAL_OK && rate_x <= 0)
    s = OCAL_FAIL(OCAL_INTERNAL, "no GEMM parameter set ran correctly on %s (%d tried)",
                  d->name, t.candidates);
  if (s == OCAL_OK && t.dead)
    s = OCAL_FAIL(OCAL_OPENCL_ERROR, "the device stopped working during the search");
  if (s == OCAL_OK && !ocal__blas_apply(ctx, t.precision, &best, why, sizeof why))
    s = OCAL_FAIL(OCAL_INTERNAL, "the winning parameters were not applied: %s", why);
  if (s == OCAL_OK) s = problem_check(&t, &t.check_ind, 1.5, -0.75, 64, 1);
  if (s == OCAL_OK) s = problem_check(&t, &t.check_dir, 1.5, -0.75, 0, 1);
  work_close(&t);
  free(t.tried);
  if (s != OCAL_OK) return s;

  char text[1024], payload[2048], note[256];
  ocal__gemm_params_format(&best, text, sizeof text);
  snprintf(note, sizeof note,
           "ocal tune gemm on %.80s, driver %.40s: %.0f GFLOP/s at %zu^3 (Xgemm), %.0f at %zu^3 "
           "(XgemmDirect), %d candidates in %.0f s",
           d->name, d->driver_version, rate_x, big, rate_d, mid, t.candidates,
           ocal__seconds_now() - t.start);
  snprintf(payload, sizeof payload, "# %s\n%s", note, text);
  ocal_blas_tuning_source source = OCAL_TUNING_USER;
  if (o->store) {
    char *dir = ocal__blas_tuning_dir(ctx);
    char *key = ocal__blas_tuning_key(ctx, t.precision);
    if (dir && key) {
      ocal__disk_cache_store(dir, key, (const unsigned char *)payload, strlen(payload));
      source = OCAL_TUNING_FILE;
    }
    free(dir);
    free(key);
  }
  ocal__blas_record(ctx, t.precision, source, &best, note, rate_x);
  say(&t, "winner: %s", note);
  if (result) {
    s = ocal_blas_get_tuning(ctx, o->dtype, result);
    if (s != OCAL_OK) return s;
    if (o->store && source == OCAL_TUNING_FILE) {
      /* The store never fails the caller; say when the file is not there. */
      /* stat, not fopen: whatever is at the path (a FIFO, say) must not block this call. */
      struct stat st;
      if (lstat(result->path, &st) != 0 || !S_ISREG(st.st_mode))
        return OCAL_FAIL(OCAL_IO_ERROR, "could not write the tuning file %s", result->path);
    }
  }
  return OCAL_OK;
}

#else /* !OCAL_HAVE_CLBLAST */

ocal_status ocal_blas_tune_options_init(ocal_blas_tune_options *o) {
  if (!o) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "options must not be NULL");
  memset(o, 0, sizeof *o);
  o->struct_size = sizeof *o;
  o->dtype = OCAL_F32;
  o->budget_s = 60.0;
  o->store = 1;
  o->seed = 1;
  o->phases = OCAL_TUNE_XGEMM | OCAL_TUNE_DIRECT | OCAL_TUNE_SWITCH;
  return OCAL_OK;
}

ocal_status ocal_blas_tune(ocal_context ctx, const ocal_blas_tune_options *options,
                           ocal_blas_tuning *result) {
  (void)ctx, (void)options, (void)result;
  return OCAL_FAIL(OCAL_UNSUPPORTED, "this ocal was built without CLBlast");
}

#endif /* OCAL_HAVE_CLBLAST */
