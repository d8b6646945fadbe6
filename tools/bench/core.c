/* The benchmark run: timing, the copy ceiling, records and the progress line. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int bench_fail(const char *what, ocal_status s) {
  fprintf(stderr, "ocal bench: %s: %s: %s\n", what, ocal_status_name(s), ocal_last_error());
  return 1;
}

double bench_time(bench_run *r, bench_fn fn, void *arg, double target_s) {
  ocal_status s = fn(arg);
  if (s == OCAL_OK) s = ocal_context_finish(r->ctx);
  double t0 = bench_now();
  if (s == OCAL_OK) s = fn(arg);
  if (s == OCAL_OK) s = ocal_context_finish(r->ctx);
  double one = bench_now() - t0, best = one;
  /* Rounds long enough to hide the launch of the first call and the final ocal_context_finish. */
  double want = target_s / (one > 1e-7 ? one : 1e-7);
  long reps = want < 3 ? 3 : want > 100000 ? 100000 : (long)want;
  for (int round = 0; round < 3 && s == OCAL_OK; round++) {
    t0 = bench_now();
    for (long i = 0; i < reps && s == OCAL_OK; i++) s = fn(arg);
    if (s == OCAL_OK) s = ocal_context_finish(r->ctx);
    double each = (bench_now() - t0) / (double)reps;
    if (each < best) best = each;
  }
  if (s != OCAL_OK) {
    bench_fail("timing", s);
    return -1;
  }
  return best;
}

typedef struct copy_arg {
  ocal_buffer dst, src;
} copy_arg;

static ocal_status run_copy(void *p) {
  copy_arg *c = p;
  return ocal_buffer_copy(c->src, c->dst);
}

double bench_copy_gbps(bench_run *r, size_t n) {
  for (int i = 0; i < r->ncopy; i++)
    if (r->copy_n[i] == n) return r->copy_gbps[i];
  copy_arg c = {NULL, NULL};
  ocal_status s = ocal_buffer_create(r->ctx, OCAL_F32, 1, &n, &c.src);
  if (s == OCAL_OK) s = ocal_buffer_create(r->ctx, OCAL_F32, 1, &n, &c.dst);
  float v = 0.5f;
  if (s == OCAL_OK) s = ocal_buffer_fill(c.src, &v);
  double t = -1;
  if (s == OCAL_OK)
    t = bench_time(r, run_copy, &c, r->quick ? 0.002 : 0.02);
  else
    bench_fail("copy buffers", s);
  ocal_buffer_release(c.src);
  ocal_buffer_release(c.dst);
  if (t <= 0) return -1;
  double gbps = 2.0 * 4.0 * (double)n / t / 1e9;
  if (r->ncopy < (int)(sizeof r->copy_n / sizeof r->copy_n[0])) {
    r->copy_n[r->ncopy] = n;
    r->copy_gbps[r->ncopy++] = gbps;
  }
  return gbps;
}

int bench_results_push(bench_results *res, const bench_record *rec) {
  if (res->count == res->cap) {
    size_t cap = res->cap ? 2 * res->cap : 64;
    bench_record *grown = realloc(res->recs, cap * sizeof *grown);
    if (!grown) return 1;
    res->recs = grown;
    res->cap = cap;
  }
  res->recs[res->count++] = *rec;
  return 0;
}

void bench_results_free(bench_results *res) {
  free(res->recs);
  res->recs = NULL;
  res->count = res->cap = 0;
}

static void copy_text(char *dst, size_t cap, const char *src) {
  snprintf(dst, cap, "%s", src ? src : "");
}

void bench_add(bench_run *r, const char *suite, const char *op, const char *dtype,
               const char *size, double n, const char *metric, double value, const char *unit,
               double ratio_to_copy, double us, const char *note) {
  bench_record rec;
  memset(&rec, 0, sizeof rec);
  copy_text(rec.suite, sizeof rec.suite, suite);
  copy_text(rec.op, sizeof rec.op, op);
  copy_text(rec.dtype, sizeof rec.dtype, dtype);
  copy_text(rec.size, sizeof rec.size, size);
  copy_text(rec.metric, sizeof rec.metric, metric);
  copy_text(rec.unit, sizeof rec.unit, unit);
  copy_text(rec.note, sizeof rec.note, note);
  rec.n = n;
  rec.value = value;
  rec.ratio_to_copy = ratio_to_copy;
  rec.us = us;
  if (bench_results_push(&r->res, &rec)) fprintf(stderr, "ocal bench: out of memory\n");
  if (r->stream) {
    bench_record_json(r->stream, &rec);
    fputc('\n', r->stream);
    fflush(r->stream);
  }
  bench_progress(r, "%s %s %s", op, size, metric);
}

void bench_progress(bench_run *r, const char *fmt, ...) {
  if (!r->progress) return;
  char what[160];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  /* On a terminal one line is rewritten in place; in a log, only each suite's start shows. */
  if (r->progress_tty)
    fprintf(stderr, "\r\033[Kocal bench: [%s] %zu figures: %s", r->suite_now, r->res.count,
            what);
  fflush(stderr);
}

int bench_run_suites(bench_run *r, unsigned suites) {
  static const struct {
    unsigned bit;
    const char *name;
    int (*fn)(bench_run *);
  } all[] = {{BENCH_BANDWIDTH, "bandwidth", bench_suite_bandwidth},
             {BENCH_ELEMENTWISE, "elementwise", bench_suite_elementwise},
             {BENCH_REDUCE, "reduce", bench_suite_reduce},
             {BENCH_GEMM, "gemm", bench_suite_gemm},
             {BENCH_FFT, "fft", bench_suite_fft},
             {BENCH_CACHE, "cache", bench_suite_cache},
             {BENCH_SPARSE, "sparse", bench_suite_sparse}};
  int rc = 0;
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
    if (!(suites & all[i].bit)) continue;
    r->suite_now = all[i].name;
    double t0 = bench_now();
    if (r->progress && !r->progress_tty) fprintf(stderr, "ocal bench: %s ...\n", all[i].name);
    bench_progress(r, "starting");
    int failed = all[i].fn(r);
    rc |= failed;
    /* A long run cut short still leaves the suites it finished. */
    if (r->json_path) bench_write_json(&r->res, r->json_path);
    if (r->progress && r->progress_tty) fprintf(stderr, "\r\033[K");
    if (r->progress)
      fprintf(stderr, "ocal bench: %s %s in %.1f s\n", all[i].name, failed ? "FAILED" : "done",
              bench_now() - t0);
  }
  return rc;
}
