/* bench/gemv_own — ocal_gemv (CLBlast Xgemv) against two plain OpenCL kernels of the kind
 * ocal could own: y = A x as one work-group per row (float4 loads, local tree sum), and
 * y = A^T x as row chunks of float4 columns plus a sum of the chunks. f32, A 4096 x 16384
 * (the shape of the gemm suite's gemv). One JSON object per line, GB/s over A's bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <ocal.h>

static const char *src =
    "__kernel __attribute__((reqd_work_group_size(256, 1, 1)))\n"
    "void gemv_n(__global const float *a_, __global const float *x_, __global float *y,\n"
    "            const int rows, const int cols4) {\n"
    "  __global const float4 *a = (__global const float4 *)a_, *x = (__global const float4 *)x_;\n"
    "  __local float part[256];\n"
    "  int r = get_group_id(0), l = get_local_id(0);\n"
    "  __global const float4 *ar = a + (size_t)r * cols4;\n"
    "  float s = 0;\n"
    "  for (int j = l; j < cols4; j += 256) { float4 v = ar[j] * x[j]; s += v.x + v.y + v.z + v.w; }\n"
    "  part[l] = s; barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  for (int o = 128; o > 0; o >>= 1) { if (l < o) part[l] += part[l + o]; barrier(CLK_LOCAL_MEM_FENCE); }\n"
    "  if (l == 0 && r < rows) y[r] = part[0];\n"
    "}\n"
    "__kernel void gemv_t1(__global const float *a_, __global const float *x, __global float *p_,\n"
    "                      const int rows, const int cols4, const int chunk) {\n"
    "  __global const float4 *a = (__global const float4 *)a_; __global float4 *p = (__global float4 *)p_;\n"
    "  int c = get_global_id(0), q = get_global_id(1);\n"
    "  if (c >= cols4) return;\n"
    "  float4 s = 0; int r0 = q * chunk, r1 = min(rows, r0 + chunk);\n"
    "  for (int r = r0; r < r1; r++) s += a[(size_t)r * cols4 + c] * x[r];\n"
    "  p[(size_t)q * cols4 + c] = s;\n"
    "}\n"
    "__kernel void gemv_t2(__global const float *p_, __global float *y_, const int cols4, const int parts) {\n"
    "  __global const float4 *p = (__global const float4 *)p_; __global float4 *y = (__global float4 *)y_;\n"
    "  int c = get_global_id(0); if (c >= cols4) return;\n"
    "  float4 s = 0; for (int q = 0; q < parts; q++) s += p[(size_t)q * cols4 + c];\n"
    "  y[c] = s;\n"
    "}\n";

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#define CHECK(x)                                                          \
  do {                                                                    \
    if ((x) != OCAL_OK) {                                                 \
      fprintf(stderr, "%s: %s\n", #x, ocal_last_error());                 \
      return 1;                                                           \
    }                                                                     \
  } while (0)

static int reps_run(ocal_context ctx, int which, ocal_buffer A, ocal_buffer x, ocal_buffer y,
                    ocal_buffer xt, ocal_buffer yt, ocal_kernel kn, ocal_kernel k1,
                    ocal_kernel k2, size_t rows, size_t cols, int parts, int reps) {
  for (int i = 0; i < reps; i++) {
    if (which == 0) CHECK(ocal_gemv(OCAL_NO_TRANS, 1.0, A, x, 0.0, y));
    if (which == 1) CHECK(ocal_gemv(OCAL_TRANS, 1.0, A, xt, 0.0, yt));
    if (which == 2) {
      size_t g = rows * 256, l = 256;
      CHECK(ocal_kernel_launch(kn, 1, &g, &l));
    }
    if (which == 3) {
      size_t g[2] = {cols / 4, (size_t)parts};
      CHECK(ocal_kernel_launch(k1, 2, g, NULL));
      size_t g2 = cols / 4;
      CHECK(ocal_kernel_launch(k2, 1, &g2, NULL));
    }
  }
  CHECK(ocal_finish(ctx));
  return 0;
}

int main(void) {
  size_t rows = 4096, cols = 16384, shape[2] = {rows, cols};
  ocal_context ctx;
  CHECK(ocal_context_create(&ctx, NULL));
  float *h = malloc(rows * cols * sizeof *h);
  for (size_t i = 0; i < rows * cols; i++) h[i] = (float)((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
  ocal_buffer A, x, y, xt, yt, p;
  CHECK(ocal_buffer_from_host(ctx, OCAL_F32, 2, shape, h, &A));
  CHECK(ocal_buffer_from_host(ctx, OCAL_F32, 1, &cols, h, &x));
  CHECK(ocal_buffer_from_host(ctx, OCAL_F32, 1, &rows, h, &xt));
  CHECK(ocal_buffer_create(ctx, OCAL_F32, 1, &rows, &y));
  CHECK(ocal_buffer_create(ctx, OCAL_F32, 1, &cols, &yt));
  int parts = 64, rows_i = (int)rows, cols4 = (int)(cols / 4), chunk = (int)(rows / 64);
  size_t pn = (size_t)parts * cols;
  CHECK(ocal_buffer_create(ctx, OCAL_F32, 1, &pn, &p));
  ocal_program prog;
  CHECK(ocal_program_create(ctx, src, NULL, &prog));
  ocal_kernel kn, k1, k2;
  CHECK(ocal_kernel_create(prog, "gemv_n", &kn));
  CHECK(ocal_kernel_create(prog, "gemv_t1", &k1));
  CHECK(ocal_kernel_create(prog, "gemv_t2", &k2));
  CHECK(ocal_kernel_set_buffer(kn, 0, A));
  CHECK(ocal_kernel_set_buffer(kn, 1, x));
  CHECK(ocal_kernel_set_buffer(kn, 2, y));
  CHECK(ocal_kernel_set_scalar(kn, 3, OCAL_I32, &rows_i));
  CHECK(ocal_kernel_set_scalar(kn, 4, OCAL_I32, &cols4));
  CHECK(ocal_kernel_set_buffer(k1, 0, A));
  CHECK(ocal_kernel_set_buffer(k1, 1, xt));
  CHECK(ocal_kernel_set_buffer(k1, 2, p));
  CHECK(ocal_kernel_set_scalar(k1, 3, OCAL_I32, &rows_i));
  CHECK(ocal_kernel_set_scalar(k1, 4, OCAL_I32, &cols4));
  CHECK(ocal_kernel_set_scalar(k1, 5, OCAL_I32, &chunk));
  CHECK(ocal_kernel_set_buffer(k2, 0, p));
  CHECK(ocal_kernel_set_buffer(k2, 1, yt));
  CHECK(ocal_kernel_set_scalar(k2, 2, OCAL_I32, &cols4));
  CHECK(ocal_kernel_set_scalar(k2, 3, OCAL_I32, &parts));
  static const char *names[] = {"clblast_gemv_n", "clblast_gemv_t", "own_gemv_n", "own_gemv_t"};
  float *ref = malloc(cols * sizeof *ref), *got = malloc(cols * sizeof *got);
  for (int w = 0; w < 4; w++) {
    if (reps_run(ctx, w, A, x, y, xt, yt, kn, k1, k2, rows, cols, parts, 2)) return 1;
    double best = 1e9;
    for (int r = 0; r < 3; r++) {
      double t0 = now();
      if (reps_run(ctx, w, A, x, y, xt, yt, kn, k1, k2, rows, cols, parts, 200)) return 1;
      double t = (now() - t0) / 200;
      if (t < best) best = t;
    }
    /* Agreement of ours with CLBlast's (max relative difference). */
    double diff = 0;
    ocal_buffer out = (w & 1) ? yt : y;
    size_t n = (w & 1) ? cols : rows;
    CHECK(ocal_buffer_read(out, 0, n, got, NULL));
    if (w < 2) {
      for (size_t i = 0; i < n; i++) ref[i] = got[i];
      if (w == 0) {
        float *keep = malloc(rows * sizeof *keep);
        for (size_t i = 0; i < rows; i++) keep[i] = got[i];
        free(h);
        h = keep; /* the A x reference */
      }
    } else {
      const float *r = w == 2 ? h : ref;
      for (size_t i = 0; i < n; i++) {
        double d = (got[i] - r[i]) / (1e-3 + (r[i] < 0 ? -r[i] : r[i]));
        if (d < 0) d = -d;
        if (d > diff) diff = d;
      }
    }
    printf("{\"op\":\"%s\",\"size\":\"%zux%zu\",\"us\":%.2f,\"gbps\":%.1f,\"maxreldiff\":%.3g}\n",
           names[w], rows, cols, best * 1e6, 4.0 * (double)rows * (double)cols / best / 1e9, diff);
    fflush(stdout);
  }
  return 0;
}
