/* ocal_gemm f32 at given shapes in nn, nt, tn and tt, through the public API with the engine the
 * rule picks (or OCAL_GEMM, OCAL_GEMM_OWN_TILE, OCAL_GEMM_OWN_SPLITK as set): the best of five
 * rounds of 20 calls on zero-filled operands, with the engine ocal_gemm_engine_query names.
 * The 784-wide products of the data-parallel MLP and the edge-tile loads of cl/blas_gemm.cl
 * were measured with it (docs/measurements.md).
 *
 *   bench/experiments/gemm_transposes MxNxK ...      (CFG=label prefixes each line) */
#define _POSIX_C_SOURCE 200809L
#include <ocal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define OK(x)                                                            \
  do {                                                                   \
    ocal_status s_ = (x);                                                \
    if (s_ != OCAL_OK) {                                                 \
      fprintf(stderr, "%s: %s\n%s\n", #x, ocal_status_name(s_), ocal_last_error()); \
      exit(1);                                                           \
    }                                                                    \
  } while (0)

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void bench(ocal_context ctx, int ta, int tb, size_t m, size_t n, size_t k) {
  size_t sa[2] = {ta ? k : m, ta ? m : k}, sb[2] = {tb ? n : k, tb ? k : n}, sc[2] = {m, n};
  ocal_buffer a, b, c;
  OK(ocal_buffer_zeros(ctx, OCAL_F32, 2, sa, &a));
  OK(ocal_buffer_zeros(ctx, OCAL_F32, 2, sb, &b));
  OK(ocal_buffer_zeros(ctx, OCAL_F32, 2, sc, &c));
  ocal_transpose oa = ta ? OCAL_TRANS : OCAL_NO_TRANS, ob = tb ? OCAL_TRANS : OCAL_NO_TRANS;
  for (int i = 0; i < 3; i++) OK(ocal_gemm(oa, ob, 1.0, a, b, 0.0, c));
  OK(ocal_context_finish(ctx));
  double best = 1e30;
  for (int r = 0; r < 5; r++) {
    double t0 = now();
    for (int i = 0; i < 20; i++) OK(ocal_gemm(oa, ob, 1.0, a, b, 0.0, c));
    OK(ocal_context_finish(ctx));
    double t = (now() - t0) / 20;
    if (t < best) best = t;
  }
  const char *engine = "?", *why = "";
  ocal_gemm_engine_query(ctx, OCAL_F32, oa, m, n, k, 1, &engine, &why);
  const char *cfg = getenv("CFG");
  printf("%-28s %s%s %zux%zux%zu: %.1f us (%.1f TFLOP/s) engine %s\n", cfg ? cfg : "default",
         ta ? "t" : "n", tb ? "t" : "n", m, n, k, best * 1e6, 2.0 * m * n * k / best / 1e12,
         engine);
  fflush(stdout);
  ocal_buffer_release(a);
  ocal_buffer_release(b);
  ocal_buffer_release(c);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: gemm_transposes MxNxK ...\n");
    return 2;
  }
  ocal_context_options o;
  ocal_context_options_init(&o);
  ocal_context ctx;
  OK(ocal_context_create(&o, &ctx));
  for (int i = 1; i < argc; i++) {
    size_t m, n, k;
    char tail;
    if (sscanf(argv[i], "%zux%zux%zu%c", &m, &n, &k, &tail) != 3 || !m || !n || !k) {
      fprintf(stderr, "gemm_transposes: '%s' is not MxNxK with three positive numbers\n",
              argv[i]);
      ocal_context_release(ctx);
      return 2;
    }
    for (int t = 0; t < 4; t++) bench(ctx, t >> 1, t & 1, m, n, k);
  }
  ocal_context_release(ctx);
  return 0;
}
