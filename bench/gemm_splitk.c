/* bench/gemm_splitk — GFLOP/s of ocal_gemm with split-K off, automatic and forced to S
 * slices, under the stored GEMM tuning and with its direct/indirect switch point lowered
 * (the slices only reach CLBlast's indirect kernel above it). One JSON object per line:
 *   {"shape":"1024x1024x1024","ta":0,"tb":0,"min_indirect":1536,"splitk":"auto",
 *    "slices":0,"gflops":...,"us":...}
 *
 *   bench/gemm_splitk [MIN_INDIRECT ...]   (default: the stored value, 512, 256) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ocal.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static ocal_buffer matrix(ocal_context ctx, size_t r, size_t c) {
  size_t shape[2] = {r, c}, n = r * c;
  float *h = malloc(n * sizeof *h);
  for (size_t i = 0; i < n; i++) h[i] = (float)((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
  ocal_buffer b = NULL;
  if (ocal_buffer_from_host(ctx, OCAL_F32, 2, shape, h, &b) != OCAL_OK) b = NULL;
  free(h);
  return b;
}

/* Seconds per call, best of 3 rounds of ~0.1 s; -1 on failure. */
static double time_gemm(ocal_context ctx, int ta, int tb, ocal_buffer a, ocal_buffer b,
                        ocal_buffer c) {
  ocal_transpose A = ta ? OCAL_TRANS : OCAL_NO_TRANS, B = tb ? OCAL_TRANS : OCAL_NO_TRANS;
  if (ocal_gemm(A, B, 1.0, a, b, 0.0, c) != OCAL_OK || ocal_finish(ctx) != OCAL_OK) return -1;
  double t0 = now();
  if (ocal_gemm(A, B, 1.0, a, b, 0.0, c) != OCAL_OK || ocal_finish(ctx) != OCAL_OK) return -1;
  double one = now() - t0, best = one;
  long reps = (long)(0.1 / (one > 1e-6 ? one : 1e-6));
  if (reps < 3) reps = 3;
  if (reps > 20000) reps = 20000;
  for (int r = 0; r < 3; r++) {
    t0 = now();
    for (long i = 0; i < reps; i++)
      if (ocal_gemm(A, B, 1.0, a, b, 0.0, c) != OCAL_OK) return -1;
    if (ocal_finish(ctx) != OCAL_OK) return -1;
    double each = (now() - t0) / (double)reps;
    if (each < best) best = each;
  }
  return best;
}

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
  if (ocal_context_create(&ctx, NULL) != OCAL_OK) {
    fprintf(stderr, "context: %s\n", ocal_last_error());
    return 1;
  }
  ocal_blas_tuning info;
  if (ocal_blas_tuning_info(ctx, OCAL_F32, &info) != OCAL_OK) return 1;
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
      ocal_buffer a = ta ? matrix(ctx, k, m) : matrix(ctx, m, k);
      ocal_buffer b = tb ? matrix(ctx, n, k) : matrix(ctx, k, n);
      ocal_buffer c = matrix(ctx, m, n);
      for (size_t md = 0; md < sizeof modes / sizeof modes[0] && a && b && c; md++) {
        if (m * n >= 4096 * 4096 && md > 2) continue;
        setenv("OCAL_GEMM_SPLITK", modes[md], 1);
        double t = time_gemm(ctx, ta, tb, a, b, c);
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
