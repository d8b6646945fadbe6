/* ocal benchmark — GEMM GFLOP/s through ocal_gemm (CLBlast), square and neural-network
 * shapes, and the BLAS-1/2 calls in GB/s beside a device copy of the same bytes.
 *
 * Prints one JSON line per measurement. The tuning in effect (tuning file, built-in, or
 * CLBlast's defaults) is in each line; --no-tuning sets OCAL_TUNING=0 first.
 *
 *   bench/gemm [--no-tuning] [--f64] [--device SEL] [--max N] [--no-blas1] [--quick]
 *
 * Rates are taken over repeated calls until 0.2 s have passed (wall clock, ocal_finish at the
 * end), best of three rounds, so launch overheads count as they do for a user. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ocal.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int check(ocal_status s, const char *what) {
  if (s == OCAL_OK) return 0;
  fprintf(stderr, "bench/gemm: %s: %s: %s\n", what, ocal_status_string(s), ocal_last_error());
  return 1;
}

static ocal_buffer random_matrix(ocal_context ctx, ocal_dtype dt, size_t rows, size_t cols) {
  size_t shape[2] = {rows, cols}, n = rows * cols, es = ocal_dtype_size(dt);
  void *host = malloc(n * es);
  ocal_buffer b = NULL;
  if (!host) return NULL;
  unsigned x = 12345u;
  for (size_t i = 0; i < n; i++) {
    x = x * 1103515245u + 12345u;
    double v = (double)(x >> 8) / 16777216.0 - 0.5;
    if (dt == OCAL_F32)
      ((float *)host)[i] = (float)v;
    else
      ((double *)host)[i] = v;
  }
  if (check(ocal_buffer_from_host(ctx, dt, 2, shape, host, &b), "upload")) b = NULL;
  free(host);
  return b;
}

typedef ocal_status (*op_fn)(void *arg);

/* Seconds per call: best of three rounds of >= 0.2 s (or >= 3 calls). */
static double time_calls(ocal_context ctx, op_fn fn, void *arg) {
  if (check(fn(arg), "warm-up") || check(ocal_finish(ctx), "finish")) return -1;
  double t0 = now_s();
  if (check(fn(arg), "run") || check(ocal_finish(ctx), "finish")) return -1;
  double one = now_s() - t0;
  long reps = one > 0.2 ? 1 : (long)(0.2 / (one > 1e-7 ? one : 1e-7)) + 1;
  if (reps < 3) reps = 3;
  if (reps > 100000) reps = 100000;
  double best = one;
  for (int round = 0; round < 3; round++) {
    t0 = now_s();
    for (long r = 0; r < reps; r++)
      if (check(fn(arg), "run")) return -1;
    if (check(ocal_finish(ctx), "finish")) return -1;
    double each = (now_s() - t0) / (double)reps;
    if (each < best) best = each;
  }
  return best;
}

typedef struct gemm_arg {
  ocal_transpose ta, tb;
  ocal_buffer a, b, c;
} gemm_arg;

static ocal_status run_gemm(void *p) {
  gemm_arg *g = p;
  return ocal_gemm(g->ta, g->tb, 1.0, g->a, g->b, 0.0, g->c);
}

static const char *tuning_name(ocal_blas_tuning_source s) {
  switch (s) {
    case OCAL_TUNING_DISABLED: return "off";
    case OCAL_TUNING_BUILTIN: return "builtin";
    case OCAL_TUNING_FILE: return "file";
    case OCAL_TUNING_USER: return "user";
    default: return "clblast-default";
  }
}

static int bench_gemm(ocal_context ctx, ocal_dtype dt, const char *label, size_t m, size_t n,
                      size_t k, ocal_transpose ta, ocal_transpose tb, const char *tuning) {
  gemm_arg g = {ta, tb, NULL, NULL, NULL};
  g.a = ta ? random_matrix(ctx, dt, k, m) : random_matrix(ctx, dt, m, k);
  g.b = tb ? random_matrix(ctx, dt, n, k) : random_matrix(ctx, dt, k, n);
  g.c = random_matrix(ctx, dt, m, n);
  int rc = 1;
  if (g.a && g.b && g.c) {
    double s = time_calls(ctx, run_gemm, &g);
    if (s > 0) {
      printf("{\"bench\":\"gemm\",\"impl\":\"ocal\",\"shape\":\"%s\",\"dtype\":\"%s\",\"m\":%zu,"
             "\"n\":%zu,\"k\":%zu,\"ta\":\"%c\",\"tb\":\"%c\",\"tuning\":\"%s\",\"us\":%.2f,"
             "\"gflops\":%.1f}\n",
             label, ocal_dtype_name(dt), m, n, k, ta ? 'T' : 'N', tb ? 'T' : 'N', tuning,
             s * 1e6, 2.0 * (double)m * (double)n * (double)k / s * 1e-9);
      fflush(stdout);
      rc = 0;
    }
  }
  ocal_buffer_release(g.a);
  ocal_buffer_release(g.b);
  ocal_buffer_release(g.c);
  return rc;
}

typedef struct vec_arg {
  int op;
  ocal_buffer x, y, r, a;
} vec_arg;

static ocal_status run_vec(void *p) {
  vec_arg *v = p;
  switch (v->op) {
    case 0: return ocal_buffer_copy(v->y, v->x);
    case 1: return ocal_blas_axpy(0.5, v->x, v->y);
    case 2: return ocal_blas_scal(0.999, v->x);
    case 3: return ocal_dot(v->x, v->y, v->r);
    case 4: return ocal_nrm2(v->x, v->r);
    case 5: return ocal_gemv(OCAL_NO_TRANS, 1.0, v->a, v->x, 0.0, v->r);
    case 6: return ocal_axpy(0.5, v->x, v->y);
    default: return ocal_scale(0.999, v->x);
  }
}

static void print_vec(const char *op, ocal_dtype dt, size_t n, double s, double bytes) {
  printf("{\"bench\":\"blas1\",\"impl\":\"ocal\",\"op\":\"%s\",\"dtype\":\"%s\",\"n\":%zu,"
         "\"us\":%.2f,\"gbps\":%.1f}\n",
         op, ocal_dtype_name(dt), n, s * 1e6, bytes / s * 1e-9);
  fflush(stdout);
}

static int bench_blas1(ocal_context ctx, ocal_dtype dt, size_t n) {
  static const char *names[] = {"copy",     "blas_axpy", "blas_scal", "dot",
                                "nrm2",     "gemv",      "ops_axpy",  "ops_scale"};
  /* Bytes each call moves: copy and scal read and write x, axpy reads x and y, writes y. */
  static const double passes[] = {2, 3, 2, 2, 1, 1, 3, 2};
  size_t es = ocal_dtype_size(dt), one = 1, rows = 4096, cols = n / rows;
  size_t ashape[2] = {rows, cols};
  vec_arg v = {0, NULL, NULL, NULL, NULL};
  ocal_buffer r1 = NULL, xs = NULL, ys = NULL;
  v.x = random_matrix(ctx, dt, 1, n);
  v.y = random_matrix(ctx, dt, 1, n);
  int rc = !v.x || !v.y || check(ocal_buffer_create(ctx, dt, 1, &one, &r1), "result") ||
           check(ocal_buffer_view(v.y, 0, 2, ashape, &v.a), "view") ||
           check(ocal_buffer_view(v.x, 0, 1, &cols, &xs), "view") ||
           check(ocal_buffer_create(ctx, dt, 1, &rows, &ys), "gemv output");
  for (int op = 0; op < 8 && !rc; op++) {
    vec_arg w = v;
    w.op = op;
    w.r = r1;
    if (op == 5) w.x = xs, w.r = ys;
    double s = time_calls(ctx, run_vec, &w);
    if (s <= 0) {
      rc = 1;
      break;
    }
    print_vec(names[op], dt, op == 5 ? rows * cols : n, s,
              passes[op] * (double)((op == 5 ? rows * cols : n) * es));
  }
  ocal_buffer_release(v.a);
  ocal_buffer_release(xs);
  ocal_buffer_release(ys);
  ocal_buffer_release(r1);
  ocal_buffer_release(v.x);
  ocal_buffer_release(v.y);
  return rc;
}

int main(int argc, char **argv) {
  const char *device = NULL;
  ocal_dtype dt = OCAL_F32;
  size_t max = 8192;
  int blas1 = 1, quick = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--no-tuning") == 0)
      setenv("OCAL_TUNING", "0", 1);
    else if (strcmp(argv[i], "--f64") == 0)
      dt = OCAL_F64;
    else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc)
      device = argv[++i];
    else if (strcmp(argv[i], "--max") == 0 && i + 1 < argc)
      max = (size_t)strtoul(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--no-blas1") == 0)
      blas1 = 0;
    else if (strcmp(argv[i], "--quick") == 0)
      quick = 1;
    else {
      fprintf(stderr,
              "usage: bench/gemm [--no-tuning] [--f64] [--device SEL] [--max N] [--no-blas1] "
              "[--quick]\n");
      return 2;
    }
  }
  ocal_context_options o;
  ocal_context_options_init(&o);
  o.device = device;
  ocal_context ctx;
  if (check(ocal_context_create(&ctx, &o), "context")) return 1;
  ocal_device_info info;
  ocal_context_device(ctx, &info);
  ocal_blas_tuning tuning;
  if (check(ocal_blas_tuning_info(ctx, dt, &tuning), "tuning info")) {
    ocal_context_release(ctx);
    return 1;
  }
  const char *tname = tuning_name(tuning.source);
  printf("{\"bench\":\"info\",\"device\":\"%s\",\"driver\":\"%s\",\"ocal\":\"%s\","
         "\"tuning\":\"%s\"}\n",
         info.name, info.driver_version, ocal_version_string(), tname);
  int rc = 0;
  for (size_t s = 256; s <= max && !rc; s *= 2) {
    rc |= bench_gemm(ctx, dt, "square", s, s, s, OCAL_NO_TRANS, OCAL_NO_TRANS, tname);
    if (quick) break;
  }
  /* The MLP 784-512-10 with batch 256: forward, weight gradients, input gradients. */
  static const struct {
    const char *label;
    size_t m, n, k;
    ocal_transpose ta, tb;
  } nn[] = {{"fc1-fwd", 256, 512, 784, OCAL_NO_TRANS, OCAL_NO_TRANS},
            {"fc2-fwd", 256, 10, 512, OCAL_NO_TRANS, OCAL_NO_TRANS},
            {"fc1-dW", 784, 512, 256, OCAL_TRANS, OCAL_NO_TRANS},
            {"fc2-dW", 512, 10, 256, OCAL_TRANS, OCAL_NO_TRANS},
            {"fc2-dX", 256, 512, 10, OCAL_NO_TRANS, OCAL_TRANS},
            {"fc1-dX", 256, 784, 512, OCAL_NO_TRANS, OCAL_TRANS}};
  for (size_t i = 0; i < sizeof nn / sizeof nn[0] && !rc && !quick; i++)
    rc |= bench_gemm(ctx, dt, nn[i].label, nn[i].m, nn[i].n, nn[i].k, nn[i].ta, nn[i].tb,
                     tname);
  if (blas1 && !rc) rc |= bench_blas1(ctx, dt, quick ? (size_t)1 << 20 : (size_t)1 << 26);
  ocal_context_release(ctx);
  return rc;
}
