/* bench/experiments/gemm_own — GFLOP/s of ocal_gemm through CLBlast and through ocal's own kernel
 * (src/blas/gemm_own.c) with several tiles, and of CLBlast with A as stored, transposed by
 * ocal first, or supplied transposed. One JSON object per line:
 *   {"shape":"1024x1024x1024","ta":0,"tb":0,"engine":"ocal","tile":"64x64x16x8x4",
 *    "splitk":1,"gflops":...,"us":...,"maxdiff":...}
 * maxdiff: the largest difference from CLBlast's C for the same product (relative to the
 * largest |C|), a sanity check of the kernel on the device.
 *
 *   bench/experiments/gemm_own [TILE ... | -]   (default: a fixed list; TILE is BMxBNxBKxTMxTN; "-":
 *                                    no sweep, only CLBlast and the automatic choice) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ocal.h>

#define BENCH_NAME "bench/experiments/gemm_own"
#include "gemm_timing.h"

/* Seconds of back-to-back calls per timing round. */
#define ROUND 0.05

static float *fetch(ocal_buffer c, size_t n) {
  float *h = malloc(n * sizeof *h);
  if (ocal_buffer_read(c, 0, n, h, NULL) != OCAL_OK) {
    free(h);
    return NULL;
  }
  return h;
}

static void emit(size_t m, size_t n, size_t k, int ta, int tb, const char *engine,
                 const char *tile, const char *splitk, double t, double maxdiff) {
  printf("{\"shape\":\"%zux%zux%zu\",\"ta\":%d,\"tb\":%d,\"engine\":\"%s\",\"tile\":\"%s\","
         "\"splitk\":\"%s\",\"gflops\":%.1f,\"us\":%.2f,\"maxdiff\":%.3g}\n",
         m, n, k, ta, tb, engine, tile, splitk,
         t > 0 ? 2.0 * (double)m * (double)n * (double)k / t * 1e-9 : -1.0, t * 1e6, maxdiff);
  fflush(stdout);
}

/* The library reads its OCAL_* settings when a context is created: each configuration gets a
 * context of its own, and the operands again (the same seeds give the same values). */
#define REOPEN()                                                                  \
  do {                                                                            \
    ocal_buffer_release(a), ocal_buffer_release(b), ocal_buffer_release(c);       \
    ocal_context_release(ctx);                                                    \
    if (ocal_context_create(NULL, &ctx) != OCAL_OK) {                             \
      fprintf(stderr, "context: %s\n", ocal_last_error());                        \
      return 1;                                                                   \
    }                                                                             \
    a = ta ? matrix(ctx, k, m, 1) : matrix(ctx, m, k, 1);                         \
    b = tb ? matrix(ctx, n, k, 2) : matrix(ctx, k, n, 2);                         \
    c = matrix(ctx, m, n, 3);                                                     \
    if (!a || !b || !c) {                                                         \
      fprintf(stderr, "buffers: %s\n", ocal_last_error());                        \
      return 1;                                                                   \
    }                                                                             \
  } while (0)

int main(int argc, char **argv) {
  static const struct {
    size_t m, n, k;
    int ta, tb;
  } shapes[] = {{512, 512, 512, 0, 0},    {1024, 1024, 1024, 0, 0}, {1024, 1024, 1024, 1, 1},
                {1536, 1536, 1536, 0, 0}, {2048, 2048, 2048, 0, 0}, {4096, 4096, 4096, 0, 0},
                {8192, 8192, 8192, 0, 0}, {256, 512, 784, 0, 0},    {256, 10, 512, 0, 0},
                {784, 512, 256, 1, 0},    {256, 784, 512, 0, 1},    {1024, 1024, 4096, 0, 0}};
  static const char *default_tiles[] = {"64x64x16x8x4",  "64x64x16x4x4",   "64x128x8x8x8",
                                        "64x128x16x8x8", "128x64x16x8x4",  "128x128x8x8x8",
                                        "128x128x16x8x8"};
  const char **tiles = default_tiles;
  int ntiles = (int)(sizeof default_tiles / sizeof default_tiles[0]);
  if (argc > 1) tiles = (const char **)argv + 1, ntiles = argc - 1;
  if (argc == 2 && strcmp(argv[1], "-") == 0) ntiles = 0; /* engines only, no tile sweep */
  ocal_context ctx;
  if (ocal_context_create(NULL, &ctx) != OCAL_OK) {
    fprintf(stderr, "context: %s\n", ocal_last_error());
    return 1;
  }
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    size_t m = shapes[s].m, n = shapes[s].n, k = shapes[s].k;
    int ta = shapes[s].ta, tb = shapes[s].tb;
    ocal_buffer a = ta ? matrix(ctx, k, m, 1) : matrix(ctx, m, k, 1);
    ocal_buffer b = tb ? matrix(ctx, n, k, 2) : matrix(ctx, k, n, 2);
    ocal_buffer c = matrix(ctx, m, n, 3);
    if (!a || !b || !c) {
      fprintf(stderr, "buffers: %s\n", ocal_last_error());
      return 1;
    }
    int big = m * n >= (size_t)4096 * 4096;
    /* CLBlast: A as stored, with and without ocal's pre-transposition; and the same product
     * with A supplied transposed (TN), for the square NN shapes. */
    setenv("OCAL_GEMM", "clblast", 1);
    setenv("OCAL_GEMM_PRETRANSPOSE", "0", 1);
    REOPEN();
    emit(m, n, k, ta, tb, "clblast", "-", "pretranspose=0",
         time_gemm(ctx, ta, tb, a, b, c, ROUND), 0);
    float *ref = fetch(c, m * n);
    double cmax = 0;
    for (size_t i = 0; ref && i < m * n; i++) cmax = fmax(cmax, fabs(ref[i]));
    if (!ta) {
      setenv("OCAL_GEMM_PRETRANSPOSE", "1", 1);
      REOPEN();
      emit(m, n, k, ta, tb, "clblast", "-", "pretranspose=1",
           time_gemm(ctx, ta, tb, a, b, c, ROUND), 0);
      unsetenv("OCAL_GEMM_PRETRANSPOSE");
      REOPEN();
      if (m == n && n == k && !tb && m >= 2048) {
        ocal_buffer at = matrix(ctx, k, m, 1);
        emit(m, n, k, 1, tb, "clblast", "-", "A supplied transposed",
             time_gemm(ctx, 1, tb, at, b, c, ROUND), 0);
        ocal_buffer_release(at);
      }
    }
    unsetenv("OCAL_GEMM_PRETRANSPOSE");
    setenv("OCAL_GEMM", "ocal", 1);
    for (int t = 0; t < ntiles; t++) {
      if (big && strstr(tiles[t], "128x128") != tiles[t]) continue;
      setenv("OCAL_GEMM_OWN_TILE", tiles[t], 1);
      static const char *splits[] = {"1", "2", "4", "8"};
      for (int sp = 0; sp < 4; sp++) {
        if (sp && (m * n > (size_t)2048 * 2048 || k < 512 || n < 64)) break;
        setenv("OCAL_GEMM_OWN_SPLITK", splits[sp], 1);
        REOPEN();
        double tm = time_gemm(ctx, ta, tb, a, b, c, ROUND);
        float *got = fetch(c, m * n);
        double md = -1;
        if (got && ref) {
          md = 0;
          for (size_t i = 0; i < m * n; i++) md = fmax(md, fabs((double)got[i] - ref[i]));
          md /= cmax > 0 ? cmax : 1;
        }
        free(got);
        emit(m, n, k, ta, tb, "ocal", tiles[t], splits[sp], tm, md);
      }
      unsetenv("OCAL_GEMM_OWN_SPLITK");
    }
    unsetenv("OCAL_GEMM_OWN_TILE");
    unsetenv("OCAL_GEMM");
    REOPEN();
    /* The automatic choice of engine, tile and split. */
    emit(m, n, k, ta, tb, "auto", "-", "-", time_gemm(ctx, ta, tb, a, b, c, ROUND), 0);
    free(ref);
    ocal_buffer_release(a), ocal_buffer_release(b), ocal_buffer_release(c);
  }
  ocal_context_release(ctx);
  return 0;
}
