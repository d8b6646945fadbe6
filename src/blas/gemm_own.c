/* ocal — GEMM through ocal's own kernels (cl/blas_gemm.cl) where CLBlast's are weak.
 *
 * Why: CLBlast 1.5.3 keeps one Xgemm parameter set and one direct/indirect switch point per
 * device for the whole process (see splitk.c), so a set tuned for large products leaves
 * mid-size ones to its slower direct kernel. ocal's kernel picks its tile per call. Which
 * engine runs is decided per call by the rule in rule.c (f32 on a GPU below 4096^3: here).
 * Without CLBlast this engine runs every product. The figures the rule and choose_plan()
 * rest on: docs/blas-engines.md, section "ocal's GEMM kernel".
 *
 * OCAL_GEMM: unset or "auto" = the rule, "ocal" = ocal's kernel for every product,
 * "clblast" = CLBlast for every product. OCAL_GEMM_OWN_TILE=BMxBNxBKxTMxTN and
 * OCAL_GEMM_OWN_SPLITK=S override the tile and the split of k (benches use them). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine.h"

typedef struct own_tile {
  unsigned bm, bn, bk, tm, tn;
} own_tile;

static int tile_fits(const own_tile *t, ocal_context ctx, ocal_dtype dtype) {
  if (!t->bm || !t->bn || !t->bk || !t->tm || !t->tn) return 0;
  if (t->tm % 4 || t->tn % 4 || t->bk % 4 || t->bm % t->tm || t->bn % t->tn) return 0;
  size_t nt = (size_t)(t->bm / t->tm) * (t->bn / t->tn);
  if (nt > ocal__context_info(ctx)->max_work_group_size || nt > ocal__context_info(ctx)->max_work_item_sizes[0]) return 0;
  /* Every work-item loads whole 4-wide pieces of both tiles. */
  if ((t->bm * t->bk / 4) % nt || (t->bn * t->bk / 4) % nt) return 0;
  if ((t->bm * t->bk / 4) < nt || (t->bn * t->bk / 4) < nt) return 0;
  size_t es = dtype == OCAL_F32 ? 4 : 8;
  size_t local = 2 * (size_t)t->bk * ((t->bm + 4) + (t->bn + 4)) * es;
  return local <= ocal__context_info(ctx)->local_mem_bytes;
}

typedef struct own_plan {
  own_tile tile;
  size_t slices; /* split of k: 1 = none */
} own_plan;

/* The tile and split of k for a product (figures: docs/blas-engines.md, section "ocal's GEMM
 * kernel"); a compute unit holds two 256-thread 128 x 128 work-groups:
 *  - an output of at least ~2 work-groups per compute unit in 128 x 128 tiles runs them
 *    unsplit, where every split was slower;
 *  - a smaller output of at least 1024^2 keeps 128 x 128 tiles and splits k until there
 *    are 4 work-groups per compute unit, no slice under 256;
 *  - below that, 64 x 64 tiles (128 work-items), split the same way when k >= 512, no
 *    slice under 64;
 *  - an output under 64 wide or tall (an MLP's last layer) splits k into slices of at least
 *    32 where k >= 128: its few tiles leave the device idle, and the split's extra pass
 *    costs less than that.
 * f64 takes 64 x 64 tiles of 4 x 4, unsplit (not measured). */
static own_plan choose_plan(ocal_context ctx, ocal_dtype dtype, size_t m, size_t n, size_t k,
                            size_t batch) {
  own_plan p = {{128, 128, 8, 8, 8}, 1};
  size_t cu = ocal__context_info(ctx)->compute_units ? ocal__context_info(ctx)->compute_units : 1;
  if (dtype == OCAL_F64) {
    p.tile = (own_tile){64, 64, 8, 4, 4};
  } else if (ocal__ceil_div(m, 128) * ocal__ceil_div(n, 128) * batch * 10 >= cu * 2 * 9) {
    /* unsplit 128 x 128 */
  } else {
    size_t min_kc = 256;
    if (m * n < (size_t)1024 * 1024) p.tile = (own_tile){64, 64, 16, 8, 4}, min_kc = 64;
    size_t tiles = ocal__ceil_div(m, p.tile.bm) * ocal__ceil_div(n, p.tile.bn);
    int skinny = m < 64 || n < 64;
    if (skinny) min_kc = 32;
    int may_split = batch == 1 && (skinny ? k >= 128 : min_kc == 256 || k >= 512);
    while (may_split && p.slices < 8 && tiles * p.slices < 4 * cu &&
           k / (p.slices * 2) >= min_kc)
      p.slices *= 2;
  }
  /* OCAL_GEMM_OWN_TILE and OCAL_GEMM_OWN_SPLITK (benches measure tiles and splits so). */
  const unsigned *st = ctx->settings.gemm_own_tile;
  own_tile t = {st[0], st[1], st[2], st[3], st[4]};
  if (st[0] && tile_fits(&t, ctx, dtype)) p.tile = t;
  if (!tile_fits(&p.tile, ctx, dtype)) p.tile = (own_tile){32, 32, 8, 4, 4};
  if (ctx->settings.gemm_own_splitk > 0) p.slices = (size_t)ctx->settings.gemm_own_splitk;
  if (batch != 1 || k < 2) p.slices = 1;
  return p;
}

static ocal_status own_gemm(ocal_context ctx, ocal_dtype dtype, int ta, int tb, size_t m,
                            size_t n, size_t k, size_t batch, double alpha, ocal_buffer a,
                            ocal_buffer b, double beta, ocal_buffer c) {
  own_plan plan = choose_plan(ctx, dtype, m, n, k, batch);
  own_tile t = plan.tile;
  /* Where the built kernel cannot run the planned tile, smaller ones in turn: 64, 32, 16, 4
   * and 1 work-items (rusticl's llvmpipe builds these kernels for 32 items at most). */
  static const own_tile fallbacks[] = {
      {32, 32, 8, 4, 4}, {32, 32, 8, 8, 4}, {32, 32, 8, 8, 8}, {16, 16, 8, 8, 8}, {8, 8, 8, 8, 8}};
  const size_t nfallbacks = sizeof fallbacks / sizeof fallbacks[0];
  size_t next = 0; /* the next fallback to try */
retry:;
  size_t lda = a->shape[a->ndim - 1], ldb = b->shape[b->ndim - 1], ldc = n;
  size_t a_stride = a->ndim == 3 ? a->shape[1] * lda : 0;
  size_t b_stride = b->ndim == 3 ? b->shape[1] * ldb : 0;
  /* Slices of whole BK steps; the last may be shorter. */
  size_t slices = 1, kc = k;
  if (plan.slices > 1) {
    kc = ocal__round_up(ocal__ceil_div(k, plan.slices), t.bk);
    slices = ocal__ceil_div(k, kc);
  }
  if (slices < 2) slices = 1, kc = k;

  int full = m % t.bm == 0 && n % t.bn == 0 && k % t.bk == 0 && kc % t.bk == 0;
  int vec = lda % 4 == 0 && ldb % 4 == 0 && ldc % 4 == 0 && a->offset % 4 == 0 &&
            b->offset % 4 == 0 && c->offset % 4 == 0;
  static const char *const names[4] = {"ocal_gemm_nn", "ocal_gemm_nt", "ocal_gemm_tn",
                                       "ocal_gemm_tt"};
  const char *name = names[ta * 2 + tb];
  /* The 8 x 4 warp arrangement with fragment prefetch (cl/blas_gemm.cl) where it was measured
   * to pay: f32, A and B not transposed, the 128 x 128 x 8 tile in 8 x 8 (the other
   * transposes measured the same or 1% slower; docs/blas-engines.md). It is laid out for
   * 32-wide warps: a device that reports another SIMD width keeps 16 x 2; one that reports
   * none (PoCL) takes it, so that the CPU tests run the code GPUs run. */
  unsigned simd = ocal__context_sub_group_size(ctx);
  int warp_tile = (simd == 32 || simd == 0) && dtype == OCAL_F32 && !ta && !tb && t.bm == 128 &&
                  t.bn == 128 && t.bk == 8 && t.tm == 8 && t.tn == 8;
  /* The launched kernel alone (OCAL_ONLY): its program compiles a quarter of the file's
   * unrolled tiles, the cost of a first GEMM (bench/first_calls). */
  char options[384];
  ocal__dtype_options(dtype, options, sizeof options);
  size_t used = strlen(options);
  /* Edge tiles' whole runs as 16-byte loads: measured faster for tn only (cl/blas_gemm.cl). */
  int edge_vec = vec && !full && ta && !tb;
  /* Whole blocks without checks, edge blocks with (cl/blas_gemm.cl, SPLIT_WHOLE), where whole
   * blocks are at least half the launch: measured faster for nn, nt and tt at most such
   * sizes; tn, whose edge tiles load 16 bytes at a time already, lost 1-7 %
   * (docs/measurements.md, "whole blocks"). */
  size_t kslices_whole = kc % t.bk == 0 ? slices - ((k - (slices - 1) * kc) % t.bk != 0) : 0;
  size_t whole = (m / t.bm) * (n / t.bn) * kslices_whole;
  size_t blocks = ocal__ceil_div(m, t.bm) * ocal__ceil_div(n, t.bn) * slices;
  int split_whole = !full && !(ta && !tb) && 2 * whole >= blocks;
  snprintf(options + used, sizeof options - used,
           " -DT4=%s -DBM=%u -DBN=%u -DBK=%u -DTM=%u -DTN=%u -DFULL=%d -DVEC=%d -DWARP_TILE=%d"
           "%s%s -DOCAL_ONLY -DOCAL_ONLY_%s",
           dtype == OCAL_F32 ? "float4" : "double4", t.bm, t.bn, t.bk, t.tm, t.tn, full, vec,
           warp_tile, edge_vec ? " -DEDGE_VEC=1" : "", split_whole ? " -DSPLIT_WHOLE=1" : "",
           name);
  ocal__kernel *kern;
  ocal_status s =
      ocal__library_kernel_from(ctx, "blas_gemm", options, name, &kern, NULL, "ocal_gemm");
  size_t nt = (size_t)(t.bm / t.tm) * (t.bn / t.tn);
  /* The driver's figures for the built kernel rule: where it needs more local memory than
   * the device has (rusticl's llvmpipe counts twice what PoCL does) or takes fewer items
   * than the tile needs, the next smaller tile that could fit is built instead. */
  if (s == OCAL_UNSUPPORTED || (s == OCAL_OK && kern->work_group_size < nt)) {
    size_t cap = s == OCAL_OK ? kern->work_group_size : nt;
    while (next < nfallbacks) {
      const own_tile *f = &fallbacks[next++];
      size_t items = (size_t)(f->bm / f->tm) * (f->bn / f->tn);
      if (items < nt && (items <= cap || s != OCAL_OK) && tile_fits(f, ctx, dtype)) {
        t = *f;
        goto retry;
      }
    }
  }
  if (s == OCAL_OK && kern->work_group_size < nt)
    return ocal__fail(OCAL_UNSUPPORTED, "ocal_gemm",
                      "device '%s' runs ocal's GEMM kernel with at most %zu work-items, fewer "
                      "than its smallest tile needs (%zu); set OCAL_GEMM=clblast",
                      ocal__context_info(ctx)->name, kern->work_group_size, nt);
  if (s != OCAL_OK) return s;

  size_t es = dtype == OCAL_F32 ? 4 : 8;
  cl_mem w = NULL, out = c->mem;
  cl_ulong c_off = c->offset, c_stride = (cl_ulong)m * n;
  cl_int read_c = beta != 0.0;
  if (slices > 1) {
    s = ocal__device_alloc(ctx, m * n * slices * es, &w, "ocal_gemm");
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
  size_t local[3] = {nt, 1, 1};
  size_t global[3] = {ocal__ceil_div(n, t.bn) * nt, ocal__ceil_div(m, t.bm), batch * slices};
  s = ocal__kernel_run_nd(ctx, kern, 3, global, local, sizeof args / sizeof args[0], args,
                          "ocal_gemm");
  if (s == OCAL_OK && slices > 1) s = ocal__gemm_splitk_sum(ctx, dtype, w, m * n, slices, beta, c);
  if (w) ocal__device_free(ctx, w);
  return s;
}

ocal_status ocal__gemm_transpose(ocal_context ctx, ocal_dtype dtype, ocal_buffer a,
                                 size_t rows, size_t cols, cl_mem out) {
  /* 32 x 8 work-groups, or 32 x 4, 2, 1 where the device or the built kernel takes fewer
   * items (a mobile GPU's 128, rusticl's llvmpipe 32). */
  size_t ty = 8;
  ocal__kernel *kern = NULL;
  ocal_status s;
  for (;;) {
    while (ty > 1 && 32 * ty > ocal__context_info(ctx)->max_work_group_size) ty /= 2;
    char options[224];
    ocal__dtype_options(dtype, options, sizeof options);
    size_t used = strlen(options);
    snprintf(options + used, sizeof options - used,
             " -DTR_Y=%zu -DOCAL_ONLY -DOCAL_ONLY_ocal_gemm_transpose", ty);
    s = ocal__library_kernel_from(ctx, "blas_gemm", options, "ocal_gemm_transpose", &kern,
                                  NULL, "ocal_gemm");
    if (s != OCAL_OK) return s;
    if (32 * ty <= kern->work_group_size || ty == 1) break;
    ty /= 2;
  }
  cl_ulong off = a->offset;
  cl_uint r = (cl_uint)rows, cc = (cl_uint)cols;
  ocal__arg args[] = {OCAL__ARG(a->mem), OCAL__ARG(off), OCAL__ARG(r), OCAL__ARG(cc),
                      OCAL__ARG(out)};
  size_t local[3] = {32, ty, 1};
  size_t global[3] = {ocal__round_up(cols, 32), ocal__ceil_div(rows, 32) * ty, 1};
  return ocal__kernel_run_nd(ctx, kern, 3, global, local, sizeof args / sizeof args[0], args,
                             "ocal_gemm");
}

ocal_status ocal__gemm_splitk_sum(ocal_context ctx, ocal_dtype dtype, cl_mem w, size_t mn,
                                  size_t slices, double beta, ocal_buffer c) {
  char options[128];
  ocal__dtype_options(dtype, options, sizeof options);
  ocal__kernel *k;
  ocal_status s = ocal__library_kernel_from(ctx, "blas_splitk", options, "ocal_splitk_sum", &k,
                                            NULL, "ocal_gemm");
  if (s != OCAL_OK) return s;
  cl_ulong c_offset = c->offset, n = mn;
  cl_uint count = (cl_uint)slices;
  cl_int read_c = beta != 0.0;
  float beta_f = (float)beta;
  ocal__arg args[] = {OCAL__ARG(c->mem), OCAL__ARG(c_offset), OCAL__ARG(w), OCAL__ARG(n),
                      OCAL__ARG(count),
                      dtype == OCAL_F32 ? OCAL__ARG(beta_f) : OCAL__ARG(beta),
                      OCAL__ARG(read_c)};
  return ocal__kernel_run(ctx, k, mn, sizeof args / sizeof args[0], args, "ocal_gemm");
}

static ocal_status own_run(const ocal__gemm_call *g, const ocal__gemm_choice *choice,
                           int *not_built) {
  (void)choice;
  *not_built = 0;
  return own_gemm(g->ctx, g->dtype, g->ta == OCAL_TRANS, g->tb == OCAL_TRANS, g->m, g->n, g->k,
                  g->batch, g->alpha, g->a, g->b, g->beta, g->c);
}

const ocal__gemm_engine ocal__gemm_engine_own = {"ocal", NULL, own_run};
