/* The benchmark suites behind `ocal bench` and the programs in bench/ (internal to the tool
 * and the benchmark programs; not installed).
 *
 * A run holds a context, the options and the records measured so far. Every suite appends
 * records: one figure each (suite, operation, dtype, size, metric, value, unit), with the
 * ratio to a device copy of the same size where the operation is memory-bound. The same
 * records are written as a JSON results file, a Markdown table, compared against another
 * results file, or drawn with gnuplot.
 *
 * The results file (format "ocal-bench-1"), also written by bench/pytorch_reference.py:
 *
 *   {"format": "ocal-bench-1", "impl": "ocal", "ocal_version": "0.1.0", "device": "...",
 *    "platform": "...", "driver": "...", "date": "YYYY-MM-DDThh:mm:ssZ", "quick": false,
 *    "records": [
 *      {"suite": "elementwise", "op": "add", "dtype": "f32", "size": "1048576", "n": 1048576,
 *       "metric": "bandwidth", "value": 2710.5, "unit": "GB/s", "ratio_to_copy": 0.91,
 *       "us": 4.64, "note": "..."},
 *      ...]}
 *
 * size is the key of the record's shape as text ("1048576", "4096x4096x4096", "1024x65536");
 * n is a number to plot it against (elements; the matrix side for GEMM; points per transform
 * for FFT). ratio_to_copy, us and note are left out when they do not apply. Records are
 * matched across files by (suite, op, dtype, size, metric). */
#ifndef OCAL_TOOLS_BENCH_H
#define OCAL_TOOLS_BENCH_H

#include <stddef.h>
#include <stdio.h>

#include <ocal.h>

typedef struct bench_record {
  char suite[16];
  char op[32];
  char dtype[8];
  char size[48];
  char metric[24];
  char unit[12];
  char note[64];
  double n;             /* the x of a chart */
  double value;
  double ratio_to_copy; /* < 0: not recorded */
  double us;            /* time per call; < 0: not recorded */
} bench_record;

/* A results file or a run: header facts and records. */
typedef struct bench_results {
  char impl[32], version[32], device[256], platform[256], driver[256], date[32];
  int quick;
  bench_record *recs;
  size_t count, cap;
} bench_results;

/* The suites, in the order a run takes them. */
enum {
  BENCH_BANDWIDTH = 1 << 0,
  BENCH_ELEMENTWISE = 1 << 1,
  BENCH_REDUCE = 1 << 2,
  BENCH_GEMM = 1 << 3,
  BENCH_FFT = 1 << 4,
  BENCH_CACHE = 1 << 5,
  BENCH_SPARSE = 1 << 6,
  BENCH_ALL = (1 << 7) - 1
};

typedef struct bench_run {
  bench_results res;
  ocal_context ctx;
  const char *device;   /* selector, NULL: ocal's default */
  int quick;
  int max_log2;         /* largest memory-bound size, 2^max_log2 elements */
  size_t gemm_max;      /* largest square GEMM */
  const char *self_cmd; /* how to run this program again, for the kernel-cache suite */
  FILE *stream;         /* when set, every record is printed here as one JSON line */
  int progress;         /* progress line on stderr */
  int progress_tty;
  const char *suite_now;
  const char *json_path; /* when set, the results file is rewritten after each suite */
  /* The copy ceiling measured at each size in this run, shared by all suites. */
  size_t copy_n[40];
  double copy_gbps[40];
  int ncopy;
} bench_run;

/* Suites (tools/bench/memory.c, tools/bench/compute.c). Each returns 0, or 1 after printing
 * what failed on stderr. */
int bench_suite_bandwidth(bench_run *r);
int bench_suite_elementwise(bench_run *r);
int bench_suite_reduce(bench_run *r);
int bench_suite_gemm(bench_run *r);
int bench_suite_fft(bench_run *r);
int bench_suite_cache(bench_run *r);
int bench_suite_sparse(bench_run *r); /* tools/bench/sparse.c */
/* The kernel-cache suite's second process: one fill from the disk cache in `dir`, printing
 * "milliseconds compiles" on stdout. */
int bench_cache_child(const char *device, const char *dir);

/* tools/bench/core.c: the run, timing, records. */
double bench_now(void);
int bench_fail(const char *what, ocal_status s);
typedef ocal_status (*bench_fn)(void *arg);
/* Seconds per call: a warm-up, then the best of three rounds of back-to-back calls ended by
 * ocal_context_finish, each round sized to about target_s (at least 3 calls). < 0 on failure. */
double bench_time(bench_run *r, bench_fn fn, void *arg, double target_s);
/* Device-to-device copy bandwidth (bytes read + written) of n floats, measured once per size
 * per run. < 0 on failure. */
double bench_copy_gbps(bench_run *r, size_t n);
void bench_add(bench_run *r, const char *suite, const char *op, const char *dtype,
               const char *size, double n, const char *metric, double value, const char *unit,
               double ratio_to_copy, double us, const char *note);
void bench_progress(bench_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int bench_run_suites(bench_run *r, unsigned suites);
void bench_results_free(bench_results *res);
int bench_results_push(bench_results *res, const bench_record *rec);

/* tools/bench/report.c: files and what is made of them. */
void bench_record_json(FILE *f, const bench_record *rec);
int bench_write_json(const bench_results *res, const char *path);
int bench_load_json(const char *path, bench_results *res);
int bench_write_markdown(const bench_results *res, const bench_results *peer, const char *path);
int bench_print_compare(const bench_results *res, const bench_results *peer, const char *path);
int bench_plot(const bench_results *res, const bench_results *peer, const char *dir);

/* tools/bench/cmd.c: `ocal bench ARGS` (main's argv: argv[1] is "bench") and the bench/
 * programs, which run their suites and print JSON lines. */
int bench_command(int argc, char **argv);
int bench_program_main(unsigned suites, int argc, char **argv);

#endif
