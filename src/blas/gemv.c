/* ocal — GEMV through ocal's own kernels (cl/blas_gemv.cl) instead of CLBlast's Xgemv.
 *
 * Why: GEMV reads A once and is bound by memory bandwidth, which CLBlast's Xgemv leaves
 * largely unused; one work-group per row with a local tree sum (y = A x) and row chunks of
 * coalesced columns plus a sum pass (y = A^T x) run near the copy bandwidth
 * (docs/blas-engines.md, section "GEMV"). OCAL_GEMV=clblast goes back to CLBlast. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine.h"

static ocal_status gemv_own(ocal_context ctx, ocal_dtype dtype, int trans, size_t rows,
                           size_t cols, double alpha, ocal_buffer a, ocal_buffer x,
                           double beta, ocal_buffer y) {
  size_t wg = 256;
  while (wg > 1 && wg > ocal__context_info(ctx)->max_work_group_size) wg /= 2;
  int vec4 = !trans && cols % 4 == 0 && a->offset % 4 == 0 && x->offset % 4 == 0;
  char options[256];
  size_t used;
  ocal__dtype_options(dtype, options, sizeof options);
  used = strlen(options);
  /* Only the kernels of this call's form are compiled (OCAL_ONLY: y = A x's, or the two
   * passes of y = A^T x). */
  const char *only =
      trans ? " -DOCAL_ONLY -DOCAL_ONLY_ocal_gemv_t" : " -DOCAL_ONLY -DOCAL_ONLY_ocal_gemv_n";
  snprintf(options + used, sizeof options - used, " -DOCAL_WG=%zu -DT4=%s%s -DOCAL_READ_Y=%d%s",
           wg, dtype == OCAL_F32 ? "float4" : "double4", vec4 ? " -DOCAL_VEC4" : "", beta != 0.0,
           only);
  cl_ulong a_off = a->offset, x_off = x->offset, y_off = y->offset, ncols = cols;
  cl_ulong nrows = rows;
  float alpha_f = (float)alpha, beta_f = (float)beta;
  ocal__arg alpha_arg = dtype == OCAL_F32 ? OCAL__ARG(alpha_f) : OCAL__ARG(alpha);
  ocal__arg beta_arg = dtype == OCAL_F32 ? OCAL__ARG(beta_f) : OCAL__ARG(beta);
  ocal__kernel *k;
  ocal_status s;
  if (!trans) {
    /* The kernel is built for exactly wg items (reqd_work_group_size): where the built
     * kernel takes fewer (rusticl's llvmpipe: 32), build it again for that many. */
    for (;;) {
      s = ocal__library_kernel_from(ctx, "blas_gemv", options, "ocal_gemv_n", &k, NULL,
                                    "ocal_gemv");
      if (s != OCAL_OK) return s;
      if (wg <= k->work_group_size || wg == 1) break;
      while (wg > 1 && wg > k->work_group_size) wg /= 2;
      snprintf(options + used, sizeof options - used,
               " -DOCAL_WG=%zu -DT4=%s%s -DOCAL_READ_Y=%d%s", wg,
               dtype == OCAL_F32 ? "float4" : "double4", vec4 ? " -DOCAL_VEC4" : "",
               beta != 0.0, only);
    }
    size_t global = rows * wg;
    ocal__arg args[] = {OCAL__ARG(a->mem), OCAL__ARG(a_off), OCAL__ARG(x->mem),
                        OCAL__ARG(x_off), OCAL__ARG(y->mem), OCAL__ARG(y_off),
                        OCAL__ARG(ncols), alpha_arg, beta_arg};
    return ocal__kernel_run_nd(ctx, k, 1, &global, &wg, sizeof args / sizeof args[0], args,
                               "ocal_gemv");
  }
  /* About a million work-items in the first pass (the measured 16384 columns x 64 chunks),
   * at most 256 chunks. */
  size_t parts = (1u << 20) / cols;
  if (parts < 1) parts = 1;
  if (parts > 256) parts = 256;
  if (parts > rows) parts = rows;
  size_t chunk = (rows + parts - 1) / parts;
  parts = (rows + chunk - 1) / chunk;
  size_t es = dtype == OCAL_F32 ? 4 : 8;
  cl_mem p;
  s = ocal__device_alloc(ctx, parts * cols * es, &p, "ocal_gemv");
  if (s != OCAL_OK) return s;
  s = ocal__library_kernel_from(ctx, "blas_gemv", options, "ocal_gemv_t_part", &k, NULL,
                                "ocal_gemv");
  cl_ulong nchunk = chunk;
  if (s == OCAL_OK) {
    size_t global[2] = {cols, parts};
    ocal__arg args[] = {OCAL__ARG(a->mem), OCAL__ARG(a_off), OCAL__ARG(x->mem),
                        OCAL__ARG(x_off), OCAL__ARG(p), OCAL__ARG(nrows),
                        OCAL__ARG(ncols), OCAL__ARG(nchunk)};
    s = ocal__kernel_run_nd(ctx, k, 2, global, NULL, sizeof args / sizeof args[0], args,
                            "ocal_gemv");
  }
  if (s == OCAL_OK)
    s = ocal__library_kernel_from(ctx, "blas_gemv", options, "ocal_gemv_t_sum", &k, NULL,
                                  "ocal_gemv");
  if (s == OCAL_OK) {
    cl_uint nparts = (cl_uint)parts;
    size_t global = cols;
    ocal__arg args[] = {OCAL__ARG(p), OCAL__ARG(y->mem), OCAL__ARG(y_off), OCAL__ARG(ncols),
                        OCAL__ARG(nparts), alpha_arg, beta_arg};
    s = ocal__kernel_run_nd(ctx, k, 1, &global, NULL, sizeof args / sizeof args[0], args,
                            "ocal_gemv");
  }
  ocal__device_free(ctx, p);
  return s;
}

const ocal__gemv_engine ocal__gemv_engine_own = {"ocal", gemv_own};
