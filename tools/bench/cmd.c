/* `ocal bench` and the bench/ programs: arguments, the run, and its outputs. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

static const char usage_text[] =
    "usage: ocal bench [--device SEL] [--quick] [--suite LIST] [--json FILE]\n"
    "                  [--markdown FILE] [--compare FILE] [--plot DIR] [--from FILE]\n"
    "                  [--max-log2 N] [--gemm-max N] [--no-tuning] [--quiet]\n"
    "\n"
    "Runs benchmark suites on one device and reports every figure: GB/s with the ratio to a\n"
    "device copy of the same size for memory-bound operations, GFLOP/s for GEMM and FFT,\n"
    "times for single calls and the kernel cache.\n"
    "\n"
    "  --device SEL      the device (as OCAL_DEVICE: gpu, cpu, P:D, a piece of its name)\n"
    "  --quick           CI sizes: a few seconds a suite on a CPU\n"
    "  --suite LIST      comma-separated, from bandwidth,elementwise,reduce,gemm,fft,cache,\n"
    "                    sparse\n"
    "                    (default: all)\n"
    "  --json FILE       write the results file (format ocal-bench-1; '-' for stdout)\n"
    "  --markdown FILE   write a Markdown table (with --compare: the other file beside)\n"
    "  --compare FILE    print speed ratios against another results file (another run,\n"
    "                    device, or bench/pytorch_reference.py's), matched by suite, op,\n"
    "                    dtype, size and metric\n"
    "  --plot DIR        draw PNG charts with gnuplot (with --compare: the other dashed)\n"
    "  --from FILE       take the results from a results file instead of running\n"
    "  --max-log2 N      largest memory-bound size 2^N floats (default 28, quick 16)\n"
    "  --gemm-max N      largest square GEMM (default 8192, quick 256)\n"
    "  --no-tuning       GEMM with CLBlast's defaults (OCAL_TUNING=0)\n"
    "  --quiet           no progress line on stderr\n"
    "\n"
    "Without --json, --markdown, --compare or --plot, the Markdown table goes to stdout.\n";

static int parse_suites(const char *list, unsigned *out) {
  static const char *names[] = {"bandwidth", "elementwise", "reduce", "gemm", "fft", "cache",
                                "sparse"};
  *out = 0;
  const char *p = list;
  while (*p) {
    size_t len = strcspn(p, ",");
    int found = 0;
    for (unsigned i = 0; i < 7; i++)
      if (len == strlen(names[i]) && strncmp(p, names[i], len) == 0) {
        *out |= 1u << i;
        found = 1;
      }
    if (!found && len == 3 && strncmp(p, "all", 3) == 0) {
      *out = BENCH_ALL;
      found = 1;
    }
    if (!found) {
      fprintf(stderr, "ocal bench: unknown suite '%.*s' (suites: bandwidth, elementwise, "
                      "reduce, gemm, fft, cache, sparse)\n", (int)len, p);
      return 1;
    }
    p += len;
    if (*p == ',') p++;
  }
  if (!*out) {
    fprintf(stderr, "ocal bench: --suite wants at least one suite\n");
    return 1;
  }
  return 0;
}

static int parse_int(const char *flag, const char *v, long lo, long hi, long *out) {
  char *end = NULL;
  long x = v ? strtol(v, &end, 10) : 0;
  if (!v || *end != '\0' || end == v || x < lo || x > hi) {
    fprintf(stderr, "ocal bench: %s wants a number from %ld to %ld\n", flag, lo, hi);
    return 1;
  }
  *out = x;
  return 0;
}

typedef struct bench_args {
  const char *device, *json, *markdown, *compare, *plot, *from, *cache_child;
  unsigned suites;
  int quick, quiet;
  long max_log2, gemm_max;
} bench_args;

/* 0: parsed; 1: bad arguments (message printed); -1: --help printed. */
static int parse_args(int argc, char **argv, int first, bench_args *a) {
  memset(a, 0, sizeof *a);
  a->suites = BENCH_ALL;
  a->max_log2 = a->gemm_max = -1;
  for (int i = first; i < argc; i++) {
    const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    const char **text = !strcmp(f, "--device")        ? &a->device
                        : !strcmp(f, "--json")        ? &a->json
                        : !strcmp(f, "--markdown")    ? &a->markdown
                        : !strcmp(f, "--compare")     ? &a->compare
                        : !strcmp(f, "--plot")        ? &a->plot
                        : !strcmp(f, "--from")        ? &a->from
                        : !strcmp(f, "--cache-child") ? &a->cache_child
                                                      : NULL;
    if (text) {
      if (!v || !v[0]) {
        fprintf(stderr, "ocal bench: %s wants a value\n", f);
        return 1;
      }
      *text = v;
      i++;
    } else if (!strcmp(f, "--suite")) {
      if (!v || parse_suites(v, &a->suites)) {
        if (!v) fprintf(stderr, "ocal bench: --suite wants a list\n");
        return 1;
      }
      i++;
    } else if (!strcmp(f, "--max-log2")) {
      if (parse_int(f, v, 10, 30, &a->max_log2)) return 1;
      i++;
    } else if (!strcmp(f, "--gemm-max")) {
      if (parse_int(f, v, 128, 65536, &a->gemm_max)) return 1;
      i++;
    } else if (!strcmp(f, "--quick")) {
      a->quick = 1;
    } else if (!strcmp(f, "--quiet")) {
      a->quiet = 1;
    } else if (!strcmp(f, "--no-tuning")) {
      setenv("OCAL_TUNING", "0", 1);
    } else if (!strcmp(f, "--help") || !strcmp(f, "-h")) {
      fputs(usage_text, stdout);
      return -1;
    } else {
      fprintf(stderr, "ocal bench: bad argument '%s' (try 'ocal bench --help')\n", f);
      return 1;
    }
  }
  return 0;
}

/* How this program runs itself again: the binary /proc/self/exe names where there is one
 * (the real program, also under libtool's wrapper), else argv[0]. */
static void self_command(const char *argv0, const char *sub, char *out, size_t cap) {
  char exe[4096];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[len > 0 ? len : 0] = '\0';
  if (len <= 0 || strchr(exe, '\'')) snprintf(exe, sizeof exe, "%s", argv0);
  snprintf(out, cap, "'%s'%s%s", exe, sub ? " " : "", sub ? sub : "");
}

static int run_suites(bench_run *r, const bench_args *a, unsigned suites) {
  r->device = a->device;
  r->quick = a->quick;
  r->max_log2 = a->max_log2 > 0 ? (int)a->max_log2 : a->quick ? 16 : 28;
  r->gemm_max = a->gemm_max > 0 ? (size_t)a->gemm_max : a->quick ? 256 : 8192;
  ocal_context_options o;
  ocal_context_options_init(&o);
  o.device = a->device;
  ocal_status s = ocal_context_create(&o, &r->ctx);
  if (s != OCAL_OK) return bench_fail("creating a context", s);
  ocal_device_info d = {sizeof d};
  ocal_context_get_device_info(r->ctx, &d);
  bench_results *res = &r->res;
  snprintf(res->impl, sizeof res->impl, "ocal");
  snprintf(res->version, sizeof res->version, "%s", ocal_version_string());
  snprintf(res->device, sizeof res->device, "%s", d.name);
  snprintf(res->platform, sizeof res->platform, "%s", d.platform_name);
  snprintf(res->driver, sizeof res->driver, "%s", d.driver_version);
  time_t now = time(NULL);
  strftime(res->date, sizeof res->date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  res->quick = a->quick;
  if (r->progress)
    fprintf(stderr, "ocal bench: %s (%s), %s sizes\n", d.name, d.platform_name,
            a->quick ? "quick" : "full");
  int rc = bench_run_suites(r, suites);
  ocal_context_release(r->ctx);
  r->ctx = NULL;
  return rc;
}

int bench_command(int argc, char **argv) {
  bench_args a;
  int p = parse_args(argc, argv, 2, &a);
  if (p) return p < 0 ? 0 : 2;
  if (a.cache_child) return bench_cache_child(a.device, a.cache_child);
  if (a.from && (a.quick || a.device || a.suites != BENCH_ALL)) {
    fprintf(stderr, "ocal bench: --from reads results; --device, --quick and --suite do not "
                    "apply\n");
    return 2;
  }
  bench_results peer;
  memset(&peer, 0, sizeof peer);
  if (a.compare && bench_load_json(a.compare, &peer)) return 1;
  bench_run r;
  memset(&r, 0, sizeof r);
  char self[4200];
  self_command(argv[0], "bench", self, sizeof self);
  r.self_cmd = self;
  r.progress = !a.quiet;
  r.progress_tty = isatty(2);
  if (a.json && strcmp(a.json, "-") != 0) r.json_path = a.json;
  int rc = 0;
  if (a.from) {
    rc = bench_load_json(a.from, &r.res);
  } else {
    rc = run_suites(&r, &a, a.suites);
  }
  const char *out_json = a.json;
  if (!rc || r.res.count) {
    if (out_json) rc |= bench_write_json(&r.res, out_json);
    if (a.markdown) rc |= bench_write_markdown(&r.res, a.compare ? &peer : NULL, a.markdown);
    if (a.compare) rc |= bench_print_compare(&r.res, &peer, a.compare);
    if (a.plot) rc |= bench_plot(&r.res, a.compare ? &peer : NULL, a.plot);
    if (!a.json && !a.markdown && !a.compare && !a.plot)
      rc |= bench_write_markdown(&r.res, NULL, "-");
  }
  bench_results_free(&r.res);
  bench_results_free(&peer);
  return rc ? 1 : 0;
}

int bench_program_main(unsigned suites, int argc, char **argv) {
  bench_args a;
  int p = parse_args(argc, argv, 1, &a);
  if (p) return p < 0 ? 0 : 2;
  if (a.cache_child) return bench_cache_child(a.device, a.cache_child);
  if (a.suites != BENCH_ALL || a.from || a.compare || a.plot || a.markdown || a.json) {
    fprintf(stderr, "%s: runs its own suite and prints JSON lines; the other options belong "
                    "to 'ocal bench'\n", argv[0]);
    return 2;
  }
  bench_run r;
  memset(&r, 0, sizeof r);
  char self[4200];
  self_command(argv[0], NULL, self, sizeof self);
  r.self_cmd = self;
  r.stream = stdout;
  int rc = run_suites(&r, &a, suites);
  bench_results_free(&r.res);
  return rc;
}
