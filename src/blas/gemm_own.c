/* ocal — GEMM through ocal's own kernels (cl/blas_gemm.cl) where CLBlast's are weak.
 *
 * Why: CLBlast 1.5.3 keeps one Xgemm parameter set and one direct/indirect switch point per
 * device for the whole process (see splitk.c). On Hopper the set tuned for 4096^3 leaves
 * mid-size products to its direct kernel (1024^3: 15.6 TFLOP/s on an H100, PyTorch FP32
 * 38.5). ocal's kernel picks its tile per call. Which engine runs is decided per call by
 * ocal__gemm_use_own (the rule and the figures it rests on are beside it).
 *
 * OCAL_GEMM: unset or "auto" = the rule, "ocal" = ocal's kernel for every product,
 * "clblast" = CLBlast for every product. OCAL_GEMM_OWN_TILE=BMxBNxBKxTMxTN and
 * OCAL_GEMM_OWN_SPLITK=S override the tile and the split of k (benches use them). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "blas_internal.h"

#ifdef OCAL_HAVE_CLBLAST

typedef struct own_tile {
  unsigned bm, bn, bk, tm, tn;
} own_tile;

/* -1 auto, 0 CLBlast, 1 ocal. */
static int engine_mode(void) {
  const char *v = getenv("OCAL_GEMM");
  if (!v || !*v || strcasecmp(v, "auto") == 0) return -1;
  if (strcasecmp(v, "ocal") == 0 || strcasecmp(v, "own") == 0) return 1;
  if (strcasecmp(v, "clblast") == 0) return 0;
  return -1;
}

static int tile_fits(const own_tile *t, ocal_context ctx, ocal_dtype dtype) {
  if (!t->bm || !t->bn || !t->bk || !t->tm || !t->tn) return 0;
  if (t->tm % 4 || t->tn % 4 || t->bk % 4 || t->bm % t->tm || t->bn % t->tn) return 0;
  size_t nt = (size_t)(t->bm / t->tm) * (t->bn / t->tn);
  if (nt > ctx->info.max_work_group_size || nt > ctx->info.max_work_item_sizes[0]) return 0;
  /* Every work-item loads whole 4-wide pieces of both tiles. */
  if ((t->bm * t->bk / 4) % nt || (t->bn * t->bk / 4) % nt) return 0;
  if ((t->bm * t->bk / 4) < nt || (t->bn * t->bk / 4) < nt) return 0;
  size_t es = dtype == OCAL_F32 ? 4 : 8;
  size_t local = 2 * (size_t)t->bk * ((t->bm + 4) + (t->bn + 4)) * es;
  return local <= ctx->info.local_mem_bytes;
}

static int parse_tile(const char *v, own_tile *t) {
  return v && sscanf(v, "%ux%ux%ux%ux%u", &t->bm, &t->bn, &t->bk, &t->tm, &t->tn) == 5;
}

/* The tile for a product: 64 x 64 blocks keep a mid-size output in enough work-groups
 * (1024^3: 256 of them on 132 SMs), 128 x 128 feed each multiply-add from fewer loads. */
static own_tile choose_tile(ocal_context ctx, ocal_dtype dtype, size_t m, size_t n) {
  own_tile t;
  if (parse_tile(getenv("OCAL_GEMM_OWN_TILE"), &t) && tile_fits(&t, ctx, dtype)) return t;
  if (dtype == OCAL_F64) {
    t = (own_tile){64, 64, 8, 4, 4};
  } else if (m * n >= (size_t)2048 * 2048) {
    t = (own_tile){128, 128, 8, 8, 8};
  } else {
    t = (own_tile){64, 64, 16, 8, 4};
  }
  if (tile_fits(&t, ctx, dtype)) return t;
  return (own_tile){32, 32, 8, 4, 4};
}

int ocal__gemm_use_own(ocal_context ctx, ocal_dtype dtype, size_t m, size_t n, size_t k,
                       size_t batch) {
  /* The kernel indexes with 32-bit counts. */
  if (m > 0x7fffffffu || n > 0x7fffffffu || k > 0x7fffffffu) return 0;
  int mode = engine_mode();
  if (mode >= 0) return mode;
  (void)ctx, (void)dtype, (void)batch;
  return 0;
}

int ocal__gemm_pretranspose(ocal_context ctx, ocal_dtype dtype, size_t m, size_t n,
                            size_t k) {
  const char *v = getenv("OCAL_GEMM_PRETRANSPOSE");
  if (v && strcmp(v, "0") == 0) return 0;
  if (m > 0x7fffffffu || k > 0x7fffffffu) return 0;
  if (v && strcmp(v, "1") == 0) return 1;
  /* Only the indirect kernel transposes A; below the switch point nothing would be saved. */
  ocal__gemm_params p;
  if (!ocal__blas_params_in_effect(ctx, dtype, &p)) return 0;
  double t = (double)p.v[OCAL__P_MIN_INDIRECT];
  return (double)m * (double)n * (double)k >= t * t * t;
}

/* Sets the arguments and enqueues one 3-D launch, holding the kernel's lock. */
static ocal_status launch(ocal_context ctx, ocal__kernel *k, const size_t *global,
                          const size_t *local, size_t nargs, const ocal__arg *args) {
  ocal_status status = OCAL_OK;
  pthread_mutex_lock(&k->lock);
  for (size_t i = 0; i < nargs && status == OCAL_OK; i++) {
    cl_int err = clSetKernelArg(k->kernel, (cl_uint)i, args[i].size, args[i].value);
    if (err != CL_SUCCESS)
      status = ocal__cl_fail(ctx->info.name, err, "clSetKernelArg", "ocal_gemm");
  }
  if (status == OCAL_OK) {
    cl_int err = clEnqueueNDRangeKernel(ctx->queue, k->kernel, 3, NULL, global, local, 0, NULL,
                                        NULL);
    if (err != CL_SUCCESS)
      status = ocal__cl_fail(ctx->info.name, err, "clEnqueueNDRangeKernel", "ocal_gemm");
  }
  pthread_mutex_unlock(&k->lock);
  return status;
}

static size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

ocal_status ocal__gemm_own(ocal_context ctx, ocal_dtype dtype, int ta, int tb, size_t m,
                           size_t n, size_t k, size_t batch, double alpha, ocal_buffer a,
                           ocal_buffer b, double beta, ocal_buffer c) {
  own_tile t = choose_tile(ctx, dtype, m, n);
  size_t lda = a->shape[a->ndim - 1], ldb = b->shape[b->ndim - 1], ldc = n;
  size_t a_stride = a->ndim == 3 ? a->shape[1] * lda : 0;
  size_t b_stride = b->ndim == 3 ? b->shape[1] * ldb : 0;

  /* Split-K: only forced (OCAL_GEMM_OWN_SPLITK), for a non-batched product; slices of
   * whole BK steps. */
  size_t slices = 1, kc = k;
  const char *sv = getenv("OCAL_GEMM_OWN_SPLITK");
  if (sv && batch == 1) {
    long s = atol(sv);
    if (s > 1) {
      kc = ceil_div(ceil_div(k, (size_t)s), t.bk) * t.bk;
      slices = ceil_div(k, kc);
    }
  }
  if (slices < 2) slices = 1, kc = k;

  int full = m % t.bm == 0 && n % t.bn == 0 && k % t.bk == 0 && kc % t.bk == 0;
  int vec = lda % 4 == 0 && ldb % 4 == 0 && ldc % 4 == 0 && a->offset % 4 == 0 &&
            b->offset % 4 == 0 && c->offset % 4 == 0;
  char options[320];
  ocal__dtype_options(dtype, options, sizeof options);
  size_t used = strlen(options);
  snprintf(options + used, sizeof options - used,
           " -DT4=%s -DBM=%u -DBN=%u -DBK=%u -DTM=%u -DTN=%u -DFULL=%d -DVEC=%d",
           dtype == OCAL_F32 ? "float4" : "double4", t.bm, t.bn, t.bk, t.tm, t.tn, full, vec);
  static const char *const names[4] = {"ocal_gemm_nn", "ocal_gemm_nt", "ocal_gemm_tn",
                                       "ocal_gemm_tt"};
  ocal__kernel *kern;
  ocal_status s = ocal__library_kernel(ctx, "blas_gemm", options, names[ta * 2 + tb], &kern);
  if (s != OCAL_OK) return s;

  size_t es = dtype == OCAL_F32 ? 4 : 8;
  cl_mem w = NULL, out = c->mem;
  cl_ulong c_off = c->offset, c_stride = (cl_ulong)m * n;
  cl_int read_c = beta != 0.0;
  if (slices > 1) {
    s = ocal__device_alloc(ctx, m * n * slices * es, &w);
    if (s != OCAL_OK) return s;
    out = w, c_off = 0, read_c = 0;
  }
  cl_ulong a_off = a->offset, b_off = b->offset, as = a_stride, bs = b_stride;
  cl_uint ulda = (cl_uint)lda, uldb = (cl_uint)ldb, uldc = (cl_uint)ldc;
  cl_uint um = (cl_uint)m, un = (cl_uint)n, uk = (cl_uint)k, ukc = (cl_uint)kc;
  cl_uint us = (cl_uint)slices;
  float alpha_f = (float)alpha, beta_f = (float)beta;
  ocal__arg alpha_arg = dtype == OCAL_F32 ? OCAL__ARG(alpha_f) : OCAL__ARG(alpha);
  ocal__arg beta_arg = dtype == OCAL_F32 ? OCAL__ARG(beta_f) : OCAL__ARG(beta);
  ocal__arg args[] = {OCAL__ARG(a->mem), OCAL__ARG(a_off), OCAL__ARG(ulda), OCAL__ARG(as),
                      OCAL__ARG(b->mem), OCAL__ARG(b_off), OCAL__ARG(uldb), OCAL__ARG(bs),
                      OCAL__ARG(out),    OCAL__ARG(c_off), OCAL__ARG(uldc), OCAL__ARG(c_stride),
                      OCAL__ARG(um),     OCAL__ARG(un),    OCAL__ARG(uk),   OCAL__ARG(ukc),
                      OCAL__ARG(us),     alpha_arg,        beta_arg,        OCAL__ARG(read_c)};
  size_t nt = (size_t)(t.bm / t.tm) * (t.bn / t.tn);
  size_t local[3] = {nt, 1, 1};
  size_t global[3] = {ceil_div(n, t.bn) * nt, ceil_div(m, t.bm), batch * slices};
  s = launch(ctx, kern, global, local, sizeof args / sizeof args[0], args);
  if (s == OCAL_OK && slices > 1) s = ocal__gemm_splitk_sum(ctx, dtype, w, m * n, slices, beta, c);
  if (w) ocal__device_free(ctx, w);
  return s;
}

ocal_status ocal__gemm_transpose(ocal_context ctx, ocal_dtype dtype, ocal_buffer a,
                                 size_t rows, size_t cols, cl_mem out) {
  char options[128];
  ocal__dtype_options(dtype, options, sizeof options);
  ocal__kernel *kern;
  ocal_status s = ocal__library_kernel(ctx, "blas_gemm", options, "ocal_gemm_transpose", &kern);
  if (s != OCAL_OK) return s;
  cl_ulong off = a->offset;
  cl_uint r = (cl_uint)rows, cc = (cl_uint)cols;
  ocal__arg args[] = {OCAL__ARG(a->mem), OCAL__ARG(off), OCAL__ARG(r), OCAL__ARG(cc),
                      OCAL__ARG(out)};
  size_t local[3] = {32, 8, 1};
  size_t global[3] = {ceil_div(cols, 32) * 32, ceil_div(rows, 32) * 8, 1};
  return launch(ctx, kern, global, local, sizeof args / sizeof args[0], args);
}

#endif /* OCAL_HAVE_CLBLAST */
