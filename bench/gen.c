/* ocal benchmark — generated kernels against the built-ins they imitate: a generated
 * y = a*x + y against ocal_axpy, a generated dot (map "x[i] * y[i]", reduce "a + b")
 * against ocal_dot, at sizes 2^10 .. 2^max; and the creation of a generated kernel in a
 * fresh process (exec'ed) with an empty disk cache, then again with the cache filled.
 *
 *   bench/gen [--quick] [--max-log2 N]
 *
 * One JSON line per measurement. Bytes: axpy reads x and y and writes y (12 bytes per f32
 * element); dot reads x and y (8). Times are wall-clock over back-to-back calls ended by
 * ocal_context_finish, the best of three trials; "ratio" is generated GB/s over built-in GB/s
 * measured at the same size in the same run. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ocal.h>

#define BENCH_NAME "bench/gen"
#include "common.h"

enum { OP_AXPY, OP_GEN_AXPY, OP_DOT, OP_GEN_DOT, OP_RAW_AXPY };
static const char *const op_names[] = {"axpy", "gen_axpy", "dot", "gen_dot", "raw_axpy"};

/* The same axpy as a raw kernel: one work-item per element, no loop. */
static const char *const raw_src =
    "__kernel void axpy(const float a, __global const float *x, __global float *y,\n"
    "                   const ulong n) {\n"
    "  const size_t i = get_global_id(0);\n"
    "  if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

typedef struct {
  ocal_context ctx;
  ocal_gen axpy, dot;
  ocal_kernel raw;
  ocal_buffer x, y, out;
  size_t n;
} state;

static const char *const axpy_args = "float a, const float *x, float *y";
static const char *const axpy_body = "y[i] = a * x[i] + y[i]";

static ocal_status make_dot(ocal_context ctx, ocal_gen *g) {
  return ocal_gen_reduction(ctx, OCAL_F32, "0", "a + b", "x[i] * y[i]",
                            "const float *x, const float *y", NULL, g);
}

static void run_op(state *b, int op) {
  static float a = 1e-3f;
  const ocal_gen_arg axpy[] = {OCAL_GEN_SCALAR(&a), OCAL_GEN_BUFFER(b->x), OCAL_GEN_BUFFER(b->y)};
  const ocal_gen_arg dot[] = {OCAL_GEN_BUFFER(b->x), OCAL_GEN_BUFFER(b->y)};
  switch (op) {
    case OP_AXPY: CHECK(ocal_axpy(a, b->x, b->y)); break;
    case OP_GEN_AXPY: CHECK(ocal_gen_run(b->axpy, b->n, 3, axpy, NULL)); break;
    case OP_DOT: CHECK(ocal_dot(b->x, b->y, OCAL_AXIS_ALL, b->out)); break;
    case OP_GEN_DOT: CHECK(ocal_gen_run(b->dot, b->n, 2, dot, b->out)); break;
    default: CHECK(ocal_kernel_launch(b->raw, 1, &b->n, NULL)); break;
  }
}

static double time_op(state *b, int op, double target) {
  run_op(b, op);
  CHECK(ocal_context_finish(b->ctx));
  double t0 = now();
  run_op(b, op);
  CHECK(ocal_context_finish(b->ctx));
  double one = now() - t0;
  int reps = one > 0 ? (int)(target / one) : 1000;
  if (reps < 3) reps = 3;
  if (reps > 2000) reps = 2000;
  double best = 1e30;
  for (int trial = 0; trial < 3; trial++) {
    t0 = now();
    for (int r = 0; r < reps; r++) run_op(b, op);
    CHECK(ocal_context_finish(b->ctx));
    double t = (now() - t0) / reps;
    if (t < best) best = t;
  }
  return best;
}

/* The child: creates the generated axpy and dot in a context on dir and prints the time
 * and the cache counters as one JSON fragment on stdout. */
static int child(const char *dir) {
  ocal_context_options opt;
  ocal_context_options_init(&opt);
  opt.disk_cache = 1;
  opt.cache_dir = dir;
  ocal_context ctx;
  CHECK(ocal_context_create(&opt, &ctx));
  double t0 = now();
  ocal_gen g1, g2;
  CHECK(ocal_gen_elementwise(ctx, axpy_args, axpy_body, NULL, &g1));
  CHECK(make_dot(ctx, &g2));
  double t = now() - t0;
  ocal_cache_stats st = {sizeof st};
  CHECK(ocal_context_get_cache_stats(ctx, &st));
  printf("\"ms\":%.2f,\"compiles\":%llu,\"disk_hits\":%llu", t * 1e3,
         (unsigned long long)st.compiles, (unsigned long long)st.disk_hits);
  ocal_gen_release(g1);
  ocal_gen_release(g2);
  ocal_context_release(ctx);
  return 0;
}

/* Runs this program again as the child and copies its output into buf. */
static void spawn(const char *self, const char *dir, char *buf, size_t size) {
  int fds[2];
  if (pipe(fds) != 0) exit(1);
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) exit(1);
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    execl("/proc/self/exe", self, "--child-cache", dir, (char *)NULL);
    execl(self, self, "--child-cache", dir, (char *)NULL);
    _exit(127);
  }
  close(fds[1]);
  size_t got = 0;
  ssize_t r;
  while (got + 1 < size && (r = read(fds[0], buf + got, size - 1 - got)) != 0) {
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) break;
    got += (size_t)r;
  }
  buf[got] = '\0';
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "bench/gen: the child process failed\n");
    exit(1);
  }
}

int main(int argc, char **argv) {
  int quick = 0, max_log2 = 26;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--child-cache") == 0 && i + 1 < argc) return child(argv[i + 1]);
    if (strcmp(argv[i], "--quick") == 0) {
      quick = 1;
    } else if (strcmp(argv[i], "--max-log2") == 0 && i + 1 < argc) {
      max_log2 = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: %s [--quick] [--max-log2 N]\n", argv[0]);
      return strcmp(argv[i], "--help") == 0 ? 0 : 2;
    }
  }
  if (quick && max_log2 > 16) max_log2 = 16;
  if (max_log2 < 10) max_log2 = 10;
  double target = quick ? 0.002 : 0.05;

  state b;
  memset(&b, 0, sizeof b);
  CHECK(ocal_context_create(NULL, &b.ctx));
  ocal_device_info info = {sizeof info};
  CHECK(ocal_context_get_device_info(b.ctx, &info));
  char dev[300];
  size_t k = 0;
  for (const char *p = info.name; *p && k < sizeof dev - 1; p++)
    if (*p != '"' && *p != '\\') dev[k++] = *p;
  dev[k] = '\0';
  CHECK(ocal_gen_elementwise(b.ctx, axpy_args, axpy_body, NULL, &b.axpy));
  CHECK(make_dot(b.ctx, &b.dot));
  ocal_program prog;
  CHECK(ocal_program_create(b.ctx, raw_src, NULL, &prog));
  CHECK(ocal_kernel_create(prog, "axpy", &b.raw));
  CHECK(ocal_program_release(prog));
  const size_t one = 1;
  CHECK(ocal_buffer_create(b.ctx, OCAL_F32, 1, &one, &b.out));

  for (int lg = 10; lg <= max_log2; lg += 2) {
    size_t n = (size_t)1 << lg;
    b.n = n;
    CHECK(ocal_buffer_create(b.ctx, OCAL_F32, 1, &n, &b.x));
    CHECK(ocal_buffer_create(b.ctx, OCAL_F32, 1, &n, &b.y));
    float v = 0.5f, w = -0.25f;
    CHECK(ocal_buffer_fill(b.x, &v));
    CHECK(ocal_buffer_fill(b.y, &w));
    float a = 1e-3f;
    cl_ulong cn = n;
    CHECK(ocal_kernel_set_scalar(b.raw, 0, OCAL_F32, &a));
    CHECK(ocal_kernel_set_buffer(b.raw, 1, b.x));
    CHECK(ocal_kernel_set_buffer(b.raw, 2, b.y));
    CHECK(ocal_kernel_set_scalar(b.raw, 3, OCAL_U64, &cn));
    /* Interleaved pairs, so that a drifting clock or a warming device hits both alike. */
    for (int pair = 0; pair < 2; pair++) {
      int builtin = pair == 0 ? OP_AXPY : OP_DOT, gen = builtin + 1;
      double bytes = (double)n * sizeof(float) * (pair == 0 ? 3 : 2);
      double tb = time_op(&b, builtin, target), tg = time_op(&b, gen, target);
      double tb2 = time_op(&b, builtin, target), tg2 = time_op(&b, gen, target);
      if (tb2 < tb) tb = tb2;
      if (tg2 < tg) tg = tg2;
      double gb = bytes / tb / 1e9, gg = bytes / tg / 1e9;
      printf("{\"bench\":\"gen\",\"device\":\"%s\",\"op\":\"%s\",\"dtype\":\"f32\",\"n\":%zu,"
             "\"us\":%.2f,\"gbps\":%.1f}\n",
             dev, op_names[builtin], n, tb * 1e6, gb);
      printf("{\"bench\":\"gen\",\"device\":\"%s\",\"op\":\"%s\",\"dtype\":\"f32\",\"n\":%zu,"
             "\"us\":%.2f,\"gbps\":%.1f,\"builtin_gbps\":%.1f,\"ratio\":%.3f}\n",
             dev, op_names[gen], n, tg * 1e6, gg, gb, gg / gb);
      if (pair == 0) {
        double tr = time_op(&b, OP_RAW_AXPY, target), gr = bytes / tr / 1e9;
        printf("{\"bench\":\"gen\",\"device\":\"%s\",\"op\":\"raw_axpy\",\"dtype\":\"f32\","
               "\"n\":%zu,\"us\":%.2f,\"gbps\":%.1f,\"builtin_gbps\":%.1f,\"ratio\":%.3f}\n",
               dev, n, tr * 1e6, gr, gb, gr / gb);
      }
    }
    fflush(stdout);
    ocal_buffer_release(b.x);
    ocal_buffer_release(b.y);
  }

  /* A generated kernel's creation in a new process: cold disk cache, then warm. */
  char dir[] = "/tmp/ocal-bench-gen-XXXXXX";
  if (!mkdtemp(dir)) {
    fprintf(stderr, "bench/gen: mkdtemp failed\n");
    return 1;
  }
  char first[256], second[256];
  spawn(argv[0], dir, first, sizeof first);
  spawn(argv[0], dir, second, sizeof second);
  printf("{\"bench\":\"gen\",\"device\":\"%s\",\"op\":\"gen_cache\",\"first_process\":{%s},"
         "\"second_process\":{%s}}\n",
         dev, first, second);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "bench/gen: could not remove %s\n", dir);

  ocal_buffer_release(b.out);
  ocal_kernel_release(b.raw);
  ocal_gen_release(b.axpy);
  ocal_gen_release(b.dot);
  ocal_context_release(b.ctx);
  return 0;
}
