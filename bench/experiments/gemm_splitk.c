/* bench/experiments/gemm_splitk — GFLOP/s of ocal_gemm with split-K off, automatic and forced to S
 * slices, under the stored GEMM tuning and with its direct/indirect switch point lowered
 * (the slices only reach CLBlast's indirect kernel above it). One JSON object per line:
 *   {"shape":"1024x1024x1024","ta":0,"tb":0,"min_indirect":1536,"splitk":"auto",
 *    "slices":0,"gflops":...,"us":...}
 *
 *   bench/experiments/gemm_splitk [MIN_INDIRECT ...]   (default: the stored value, 512, 256) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ocal.h>

#define BENCH_NAME "bench/experiments/gemm_splitk"
#include "gemm_timing.h"

/* The tuning text in effect with XGEMM_MIN_INDIRECT_SIZE replaced. */
static int with_min_indirect(const char *params, long v, char *out, size_t size) {
  const char *p = strstr(params, "XGEMM_MIN_INDIRECT_SIZE=");
  if (!p) return 0;
  const char *end = strchr(p, '\n');
  snprintf(out, size, "%.*sXGEMM_MIN_INDIRECT_SIZE=%ld\n%s", (int)(p - params), params, v,
           end ? end + 1 : "");
  return 1;
}

int main(int argc, char **argv) {
  static const struct {
    size_t m, n, k;
    int ta, tb;
  } shapes[] = {{512, 512, 512, 0, 0},    {1024, 1024, 1024, 0, 0}, {1536, 1536, 1536, 0, 0},
                {2048, 2048, 2048, 0, 0}, {4096, 4096, 4096, 0, 0}, {256, 512, 784, 0, 0},
                {256, 10, 512, 0, 0},     {784, 512, 256, 1, 0},    {512, 10, 256, 1, 0},
                {256, 512, 10, 0, 1},     {256, 784, 512, 0, 1},    {1024, 1024, 4096, 0, 0}};
  static const char *modes[] = {"0", "1", "2", "4", "8", "16"};
  ocal_context ctx;
  if (ocal_context_create(NULL, &ctx) != OCAL_OK) {
    fprintf(stderr, "context: %s\n", ocal_last_error());
    return 1;
  }
  ocal_blas_tuning info = {sizeof info};
  if (ocal_blas_get_tuning(ctx, OCAL_F32, &info) != OCAL_OK) return 1;
  char stored[1024];
  snprintf(stored, sizeof stored, "%s", info.params);
  long mins[8] = {0, 512, 256};
  int nmins = 3;
  if (argc > 1) {
    nmins = 0;
    for (int i = 1; i < argc && nmins < 8; i++) mins[nmins++] = atol(argv[i]);
  }
  for (int mi = 0; mi < nmins; mi++) {
    char params[1200];
    if (mins[mi] > 0) {
      if (!with_min_indirect(stored, mins[mi], params, sizeof params) ||
          ocal_blas_tuning_apply(ctx, OCAL_F32, params) != OCAL_OK) {
        fprintf(stderr, "apply MIN_INDIRECT=%ld: %s\n", mins[mi], ocal_last_error());
        continue;
      }
    }
    const char *mp = strstr(stored, "XGEMM_MIN_INDIRECT_SIZE=");
    long min_now = mins[mi] > 0 ? mins[mi] : mp ? atol(mp + 24) : -1;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
      size_t m = shapes[s].m, n = shapes[s].n, k = shapes[s].k;
      int ta = shapes[s].ta, tb = shapes[s].tb;
      ocal_buffer a = ta ? matrix(ctx, k, m, 0) : matrix(ctx, m, k, 0);
      ocal_buffer b = tb ? matrix(ctx, n, k, 0) : matrix(ctx, k, n, 0);
      ocal_buffer c = matrix(ctx, m, n, 0);
      for (size_t md = 0; md < sizeof modes / sizeof modes[0] && a && b && c; md++) {
        if (m * n >= 4096 * 4096 && md > 2) continue;
        setenv("OCAL_GEMM_SPLITK", modes[md], 1);
        /* The library reads its settings when a context is created: one per mode, and the
         * operands again (the tuning applied above holds for the device, not the context). */
        ocal_buffer_release(a), ocal_buffer_release(b), ocal_buffer_release(c);
        ocal_context_release(ctx);
        if (ocal_context_create(NULL, &ctx) != OCAL_OK) {
          fprintf(stderr, "context: %s\n", ocal_last_error());
          return 1;
        }
        a = ta ? matrix(ctx, k, m, 0) : matrix(ctx, m, k, 0);
        b = tb ? matrix(ctx, n, k, 0) : matrix(ctx, k, n, 0);
        c = matrix(ctx, m, n, 0);
        if (!a || !b || !c) break;
        double t = time_gemm(ctx, ta, tb, a, b, c, 0.1);
        printf("{\"shape\":\"%zux%zux%zu\",\"ta\":%d,\"tb\":%d,\"min_indirect\":%ld,"
               "\"splitk\":\"%s\",\"gflops\":%.1f,\"us\":%.2f}\n",
               m, n, k, ta, tb, min_now, md == 1 ? "auto" : modes[md],
               t > 0 ? 2.0 * (double)m * (double)n * (double)k / t * 1e-9 : -1.0, t * 1e6);
        fflush(stdout);
      }
      ocal_buffer_release(a), ocal_buffer_release(b), ocal_buffer_release(c);
    }
  }
  ocal_context_release(ctx);
  return 0;
}
