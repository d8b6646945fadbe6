/* ocal — ocal's own two-pass four-step FFT (cl/fft_fourstep.cl), for long 1-D
 * single-precision C2C transforms of a power-of-two length N = N1 * N2 (N1, N2 from 64 to
 * 8192, so N from 2^12 to 2^24), and 2-D ones of N1 x N2 (each a power of two, 64 to 8192):
 * the same two passes without the twiddles between them, pass 2 writing rows.
 *
 * Why: VkFFT 1.2.26 through OpenCL has 48 KiB of local memory per work-group on NVIDIA, so it
 * reads and writes the whole array three times for every power-of-two length above 2^20; at
 * an H100's copy bandwidth three passes over 2^24 x 8 points already take longer than 0.9x
 * cuFFT. These kernels do it in two: each work-group keeps a few whole columns in registers
 * and exchanges them through local memory (all at once where they fit, else one at a time,
 * else a column's real and imaginary parts in separate rounds). Pass 1 writes the
 * intermediate in tiles (1-D below 2^24) or transposed, so that its writes are contiguous;
 * pass 2 reads a tile's 128 bytes as one piece, or the transposed intermediate 32 bytes a
 * row at a stride.
 *
 * What made them fast is how a group touches global memory: staged through local memory, with
 * consecutive items on consecutive columns, rather than each item reading all C columns of
 * its own rows as one vector (which touches every 32-byte piece of a row twice), several
 * transforms per launch, so that no launch ends with a part-empty wave of groups
 * (docs/measurements.md#fourstep-access), and the tiles, which made 2^20 x 128 1.26x faster
 * than the transposed intermediate on an H200 (docs/measurements.md#fft-tiles).
 *
 * The default engine (VkFFT, else clFFT) offers this engine the shapes of fourstep_rule
 * (device properties, never names): 1-D 2^20 to 2^24 and 2-D 4096 x 4096 on an H100 or H200
 * (docs/measurements.md#fft-tiles, #fft-hints); a measurement on the device then decides
 * between it and VkFFT (choose.c). OCAL_FFT_FOURSTEP=1 turns the engine on for every shape it
 * supports without measuring (tests force it on PoCL), 0 off, measure offers it every shape it
 * supports and measures, auto (or unset) the rule. Batches go through scratch memory, 2^27 points per launch
 * (fewer where the device has not the memory for that).
 *
 * OCAL_FFT_FOURSTEP_TUNE="n1=..,c=..,r=.." picks at plan creation, for the benchmarks and the
 * tests: the split (n1), the columns per work-group of pass 1 (c: 1, 2, 4, 8, 16; 16 are 128
 * bytes of a row) and of pass 2 (c2, default c), the points per work-item of pass 1 (r: 4, 8,
 * 16; default below) and of pass 2 (r2, default r), rows=0 for a 2-D transform's columns
 * first (the default, rows=1, does the rows first: both launches read rows and write
 * transposed, and a strided write costs less than a strided read;
 * docs/measurements.md#fft-rows-first-sixteen-columns-h100), at most cr columns exchanged at
 * once, the intermediate (tt=0 row-major: pass 1 writes at a stride, pass 2 reads rows; tt=1
 * transposed: pass 2 reads 8 c2 bytes a row at a stride; tt=2 tiles of c x c2 values: pass 2
 * reads 8 c c2 bytes a piece, 1-D only; default below), plane=1 to exchange real and
 * imaginary parts separately even where a column fits, g transforms per launch, reg=N
 * registers per item on NVIDIA (-cl-nv-maxrregcount), sr=N at least N rounds of staging
 * global memory (for the tests: PoCL's local memory holds a whole group in one), skip=1 or
 * skip=2 to leave pass 1 or 2 out, to time the other alone (wrong output), ld=0..3 and st=0..2
 * the PTX cache hints of the global accesses (fs_tune; on devices without PTX they are
 * plain). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine.h"

/* Columns per work-group and log2 points per work-item when OCAL_FFT_FOURSTEP_TUNE does not
 * say: the fastest for 2^24 x 8 on an H100 (docs/measurements.md#fourstep-defaults). For 1-D
 * lengths below 2^24, the fastest on an H200 (docs/measurements.md#fft-tiles): the tiled
 * intermediate, rows of 2048 points in pass 2 (N2) from 2^20, and 8 points per item in a pass
 * whose FFTs are 1024 points or shorter. 2^24 keeps the H100's transposed intermediate (the
 * tiles measured 2-3 % either side of it on an H200, where VkFFT wins that length). */
#define DEFAULT_C 4
#define DEFAULT_LOGR 4
#define DEFAULT_LOGR_SHORT 3
#define SHORT_LEN 1024
#define SPLIT_N2 2048
#define TILES_BELOW ((size_t)1 << 24)
/* Loads with a 128-byte L2 prefetch on devices of PTX compute capability 7.5 and later: the
 * groups beside a group read the rest of each 128 bytes (docs/measurements.md#fft-hints). */
#define DEFAULT_LD 2

/* One of a plan's two launches: FFTs of length len, c of them per work-group, 2^logr points
 * per work-item, stage tables at o_stage in the twiddle buffer; the other side's length
 * (N / len) is the row stride of its strided side. */
typedef struct fs_launch {
  size_t len;
  int c, logr;
  cl_uint o_stage;
} fs_launch;

typedef struct fs_plan {
  const ocal__fft_problem *p;
  size_t n, n1, n2;
  int skip, maxreg, cr, tt, plane, sr, ld, st;
  int two_d;               /* 1: a 2-D transform of n1 rows of n2 points */
  int rows;                /* 2-D only: the rows' FFTs first, both launches reading rows and
                            * writing transposed (pass 2's kernel with tt=0, twice) */
  fs_launch ln[2];         /* in launch order */
  size_t group;            /* transforms per launch (the scratch holds that many) */
  cl_mem scratch;          /* one transform: pass 1 writes it, pass 2 reads it */
  cl_mem tw;               /* twiddle tables: W_N1^i (N1), W_N2^i (N2), W_N^l (l < N1) */
  ocal__kernel *k[2];      /* pass 1, pass 2 */
} fs_plan;

static int log2_exact(size_t n) {
  int l = 0;
  if (n == 0 || (n & (n - 1))) return -1;
  while (((size_t)1 << l) < n) l++;
  return l;
}

/* Local memory one work-group of an FFT of length l needs (PAD in the .cl). */
static size_t lds_bytes(size_t l) { return ((l - 1) + ((l - 1) >> 4) + 1) * 8; }

typedef struct fs_tune {
  size_t n1; /* 0: the default split */
  int c;
  int logr;  /* log2 points per work-item of pass 1 (0: the default) */
  int logr2; /* log2 points per work-item of pass 2 (0: logr) */
  int rows;  /* 2-D: 1 the rows' FFTs first (fs_plan; the default), 0 the columns' */
  int skip;  /* 1 or 2: leave that pass out (timing each pass only: the output is wrong) */
  int maxreg; /* registers per work-item the NVIDIA compiler may use (0: its choice) */
  int cr;     /* at most this many columns exchanged at once (0: as many as fit) */
  int c2;     /* columns per work-group of pass 2 (0: c) */
  int tt;     /* 1: pass 1 writes the intermediate transposed (contiguous), 0: row-major, 2:
               * in tiles (1-D); -1: the default */
  size_t group; /* transforms per launch (0: enough for 2^27 points) */
  int sr;       /* at least this many staging rounds (0: as few as local memory allows) */
  int plane;    /* 1: real and imaginary parts exchanged in separate rounds even where
                 * local memory holds a whole column (for the tests) */
  int ld, st;   /* PTX cache hints of the global loads (1 cs, 2 L2::128B, 3 L2::256B; -1:
                 * the default) and stores (1 cs in pass 2, 2 cs in both passes); 0 plain */
} fs_tune;

/* Reads OCAL_FFT_FOURSTEP_TUNE ("n1=1024,c=4,r=8") as the settings module read it (`env`,
 * its keys checked there); fails on a value it does not know. */
static ocal_status read_tune(const char *env, fs_tune *t) {
  t->n1 = 0;
  t->c = DEFAULT_C;
  t->logr = 0;
  t->logr2 = 0;
  t->rows = 1;
  t->skip = 0;
  t->maxreg = 0;
  t->cr = 0;
  t->c2 = 0;
  t->tt = -1;
  t->group = 0;
  t->plane = 0;
  t->sr = 0;
  t->ld = -1;
  t->st = 0;
  if (!env || !env[0]) return OCAL_OK;
  char buf[128];
  if (strlen(env) >= sizeof buf)
    return ocal__fail(OCAL_INVALID_ARGUMENT, "ocal_fft_plan_create",
                      "OCAL_FFT_FOURSTEP_TUNE is too long");
  strcpy(buf, env);
  char *save = NULL;
  for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(tok, '='), *end;
    if (!eq) goto bad;
    *eq = '\0';
    long v = strtol(eq + 1, &end, 10);
    if (*end || end == eq + 1) goto bad;
    if (strcmp(tok, "n1") == 0 && v >= 64 && v <= 8192 && log2_exact((size_t)v) > 0)
      t->n1 = (size_t)v;
    else if (strcmp(tok, "c") == 0 && v >= 1 && v <= 16 && log2_exact((size_t)v) >= 0)
      t->c = (int)v;
    else if (strcmp(tok, "r") == 0 && (v == 4 || v == 8 || v == 16))
      t->logr = log2_exact((size_t)v);
    else if (strcmp(tok, "r2") == 0 && (v == 4 || v == 8 || v == 16))
      t->logr2 = log2_exact((size_t)v);
    else if (strcmp(tok, "rows") == 0 && (v == 0 || v == 1))
      t->rows = (int)v;
    else if (strcmp(tok, "skip") == 0 && (v == 1 || v == 2))
      t->skip = (int)v;
    else if (strcmp(tok, "reg") == 0 && v >= 0 && v <= 255)
      t->maxreg = (int)v;
    else if (strcmp(tok, "cr") == 0 && (v == 1 || v == 2 || v == 4))
      t->cr = (int)v;
    else if (strcmp(tok, "c2") == 0 && v >= 1 && v <= 16 && log2_exact((size_t)v) >= 0)
      t->c2 = (int)v;
    else if (strcmp(tok, "tt") == 0 && v >= 0 && v <= 2)
      t->tt = (int)v;
    else if (strcmp(tok, "g") == 0 && v >= 1 && v <= 4096)
      t->group = (size_t)v;
    else if (strcmp(tok, "sr") == 0 && v >= 1 && v <= 16 && log2_exact((size_t)v) >= 0)
      t->sr = (int)v;
    else if (strcmp(tok, "plane") == 0 && (v == 0 || v == 1))
      t->plane = (int)v;
    else if (strcmp(tok, "ld") == 0 && v >= 0 && v <= 3)
      t->ld = (int)v;
    else if (strcmp(tok, "st") == 0 && v >= 0 && v <= 2)
      t->st = (int)v;
    else
      goto bad;
  }
  /* a round holds at least one row per item (of the fewest a default r gives) */
  int rmin = t->logr ? 1 << t->logr : 1 << DEFAULT_LOGR_SHORT;
  if (t->sr <= rmin && (!t->logr2 || t->sr <= 1 << t->logr2)) return OCAL_OK;
bad:
  return ocal__fail(
      OCAL_INVALID_ARGUMENT, "ocal_fft_plan_create",
      "OCAL_FFT_FOURSTEP_TUNE='%s': expected n1=64..8192 (a power of two), "
      "c=1|2|4|8|16, c2=1|2|4|8|16, r=4|8|16, r2=4|8|16, rows=0|1, skip=1|2, reg=0..255, "
      "cr=1|2|4, tt=0|1|2, g=1..4096, plane=0|1, sr=1|2|4|8|16 (at most r), ld=0..3, st=0..2, "
      "separated by commas",
      env);
}

/* The split of n: N1 from the tuning, else N2 = SPLIT_N2 from 2^20 to 2^23, else the larger
 * half of the bits (N1 >= N2). Returns 0
 * when n cannot be split into two lengths of 64..8192. A 2-D transform (ndim 2) is split
 * along its axes: N1 rows of N2 points. */
static int split(int ndim, const size_t *lengths, const fs_tune *t, size_t *n1, size_t *n2) {
  if (ndim == 2) {
    size_t r = lengths[0], c = lengths[1];
    if (log2_exact(r) < 6 || log2_exact(c) < 6 || r > 8192 || c > 8192) return 0;
    *n1 = r;
    *n2 = c;
    return 1;
  }
  if (ndim != 1) return 0;
  size_t n = lengths[0];
  int l = log2_exact(n);
  if (l < 12 || l > 24) return 0;
  size_t a = t->n1                    ? t->n1
             : l >= 20 && n < TILES_BELOW ? n / SPLIT_N2
                                          : (size_t)1 << ((l + 1) / 2);
  if (a > n || n / a < 64 || n / a > 8192 || a < 64 || a > 8192) return 0;
  *n1 = a;
  *n2 = n / a;
  return 1;
}

/* The two launches of an N1 x N2 split under the tuning t (fs_plan's ln): pass 1 on columns
 * of N1 (stage tables at 0), pass 2 on rows of N2 (at N1); a 2-D plan with rows=1 the other
 * way round. */
static void plan_launches(const fs_tune *t, int two_d, size_t n1, size_t n2, fs_launch *ln) {
  /* the default points per item: fewer for short 1-D FFTs */
  int logr = t->logr ? t->logr : !two_d && n1 <= SHORT_LEN ? DEFAULT_LOGR_SHORT : DEFAULT_LOGR;
  int logr2 = t->logr2   ? t->logr2
              : t->logr ? t->logr
              : !two_d && n2 <= SHORT_LEN ? DEFAULT_LOGR_SHORT
                                           : DEFAULT_LOGR;
  int c2 = t->c2 ? t->c2 : t->c;
  int rows = two_d && t->rows;
  ln[0] = (fs_launch){rows ? n2 : n1, t->c, logr, rows ? (cl_uint)n1 : 0};
  ln[1] = (fs_launch){rows ? n1 : n2, c2, logr2, rows ? 0 : (cl_uint)n1};
}

/* Whether the device can run the two launches ln. */
static int device_fits(ocal_context ctx, const fs_launch *ln, const fs_tune *t) {
  const ocal_device_info *di = ocal__context_info(ctx);
  for (int k = 0; k < 2; k++) {
    size_t len = ln[k].len, items = len >> ln[k].logr;
    if ((size_t)1 << ln[k].logr > len) return 0;
    if (items > di->max_work_group_size || items > di->max_work_item_sizes[0]) return 0;
    /* a column too long for local memory goes through in two halves (real, imaginary), one
     * column at a time (at most 8 columns per group there) */
    if (di->local_mem_bytes < lds_bytes(len) / 2) return 0;
    if (ln[k].c > 8 && (t->plane || lds_bytes(len) > di->local_mem_bytes)) return 0;
    /* global memory staged through local memory, a row per item and column at least */
    if ((uint64_t)ln[k].c * (items + 8) * 8 > di->local_mem_bytes) return 0;
  }
  return 1;
}

/* The default rule, on device properties: offer these kernels the 1-D lengths from the
 * longest that VkFFT does in two passes to the longest that they do in two. VkFFT puts S =
 * 2^floor(log2(local memory - 16)) / 32 points of a column in one work-group, so it takes two
 * passes up to S^2 and three above (S = 1024 with NVIDIA's 48 KiB); these kernels take two up
 * to l^2, l the longest column whose exchange fits in local memory (4096 there): 2^20 to 2^24
 * on an H100 or H200. Whether they or VkFFT is faster differs by length and board (on an H200
 * they win at 2^20 to 2^23 and lose at 2^24; docs/measurements.md#fft-tiles), so
 * the plan measures both (choose.c). Shorter lengths, which VkFFT does in one pass, are not
 * offered. */
/* The longest power-of-two column whose exchange fits in local memory. */
static size_t longest_column(ocal_context ctx) {
  size_t l = 64;
  while (l < 8192 && lds_bytes(2 * l) <= ocal__context_info(ctx)->local_mem_bytes) l *= 2;
  return l;
}

static int fourstep_rule(ocal_context ctx, size_t n) {
  if (ocal__context_info(ctx)->type != OCAL_DEVICE_GPU) return 0;
  uint64_t have = ocal__context_info(ctx)->local_mem_bytes;
  uint64_t local = have > 16 ? have - 16 : 0, p2 = 1;
  while (p2 * 2 <= local) p2 *= 2;
  uint64_t s = p2 / 32;
  size_t l = longest_column(ctx);
  return (uint64_t)n >= s * s && n <= l * l;
}

/* 2-D transforms: both axes as long as the longest column local memory holds (4096 x 4096 on
 * an H100), where the two passes are VkFFT's two, each a little faster
 * (docs/measurements.md#fft-hints); other shapes were not measured. */
static int fourstep_rule_2d(ocal_context ctx, size_t rows, size_t cols) {
  if (ocal__context_info(ctx)->type != OCAL_DEVICE_GPU) return 0;
  size_t l = longest_column(ctx);
  return rows == l && cols == l;
}

ocal_status ocal__fft_fourstep_wanted(ocal_context ctx, const ocal_fft_desc *d, int *use) {
  *use = 0;
  int setting = ctx->settings.fft_fourstep; /* OCAL_FFT_FOURSTEP */
  if (setting == OCAL__FOURSTEP_OFF || d->ndim > 2 || d->kind != OCAL_FFT_C2C ||
      d->precision != OCAL_F32)
    return OCAL_OK;
  fs_tune t;
  ocal_status s = read_tune(ctx->settings.fft_fourstep_tune, &t);
  if (s != OCAL_OK) return s;
  size_t n1, n2;
  fs_launch ln[2];
  if (!split(d->ndim, d->lengths, &t, &n1, &n2)) return OCAL_OK;
  plan_launches(&t, d->ndim == 2, n1, n2, ln);
  if (!device_fits(ctx, ln, &t)) return OCAL_OK;
  int offered = setting == OCAL__FOURSTEP_ON || setting == OCAL__FOURSTEP_MEASURE ||
                (d->ndim == 1 && fourstep_rule(ctx, d->lengths[0])) ||
                (d->ndim == 2 && fourstep_rule_2d(ctx, d->lengths[0], d->lengths[1]));
  *use = !offered ? 0 : setting == OCAL__FOURSTEP_ON ? 1 : 2;
  return OCAL_OK;
}

/* Whether the device's compiler takes NVIDIA's options (cl_nv_compiler_options), such as
 * -cl-nv-maxrregcount, which trades registers for more work-groups per multiprocessor. */
static int has_nv_options(ocal_context ctx) {
  size_t len = 0;
  if (clGetDeviceInfo(ocal__context_device(ctx), CL_DEVICE_EXTENSIONS, 0, NULL, &len) !=
          CL_SUCCESS ||
      !len)
    return 0;
  char *ext = malloc(len + 1);
  int yes = 0;
  if (ext && clGetDeviceInfo(ocal__context_device(ctx), CL_DEVICE_EXTENSIONS, len, ext, NULL) ==
                 CL_SUCCESS) {
    ext[len] = '\0';
    yes = strstr(ext, "cl_nv_compiler_options") != NULL;
  }
  free(ext);
  return yes;
}

/* One program per (length, points per item, columns) holds both passes' kernels, so a plan
 * of N1 = N2 compiles one program (which matters on PoCL, where it takes seconds). Launch k
 * (0, 1) runs pass k + 1's kernel, or pass 2's both times for a 2-D plan with rows=1. */
static ocal_status get_kernel(fs_plan *f, int k, ocal__program_origin *origin) {
  char opts[192];
  size_t l = f->ln[k].len;
  int c = f->ln[k].c, logr = f->ln[k].logr, pass = f->rows ? 2 : k + 1;
  /* rows=1: pass 2's kernel reading rows (tt=0) and writing at a stride, no twiddles (1-D) */
  int tt = f->rows ? 0 : f->two_d ? 1 : f->tt, two_d = f->two_d && !f->rows;
  uint64_t local = ocal__context_info(f->p->ctx)->local_mem_bytes;
  /* columns exchanged at once: as many as local memory holds (all at 1024 points and below
   * on 48 KiB; one at a time at 4096), each round costing two barriers; a column that does
   * not fit (8192 points) goes in two rounds, real parts then imaginary parts */
  int cr = f->cr && f->cr < c ? f->cr : c, plane = f->plane || lds_bytes(l) > local;
  while (cr > 1 && (uint64_t)cr * lds_bytes(l) > local) cr /= 2;
  if (plane) cr = 1;
  /* rows staged at a time on the way in and out (cl/fft_fourstep.cl): all that fit */
  int sr = f->sr ? f->sr : 1;
  while (sr < (1 << logr) && (uint64_t)c * (l / (size_t)sr + 8) * 8 > local) sr *= 2;
  /* cache hints only where the device takes PTX (plain accesses elsewhere) */
  int ptx = ocal__ptx_hints_allowed(f->p->ctx);
  int st = f->st == 2 || (f->st == 1 && pass == 2);
  int n = snprintf(opts, sizeof opts,
                   "-DFS_LOGL=%d -DFS_LOGR=%d -DFS_C=%d -DFS_CR=%d -DFS_PLANE=%d -DFS_TT=%d "
                   "-DFS_SR=%d -DFS_2D=%d -DFS_LD=%d -DFS_ST=%d -DFS_C1=%d -DFS_C2=%d",
                   log2_exact(l), logr, c, cr, plane, tt, sr, two_d,
                   ptx ? f->ld : 0, ptx ? st : 0, f->ln[0].c, f->ln[1].c);
  /* the form with '=' (NVIDIA's compiler rejects "-cl-nv-maxrregcount N") */
  if (f->maxreg > 0 && has_nv_options(f->p->ctx))
    snprintf(opts + n, sizeof opts - (size_t)n, " -cl-nv-maxrregcount=%d", f->maxreg);
  return ocal__library_kernel_from(
      f->p->ctx, "fft_fourstep", opts,
      pass == 1 ? "ocal_fft_fourstep_pass1" : "ocal_fft_fourstep_pass2", &f->k[k], origin,
      "ocal_fft_plan_create");
}

/* Stage tables of an FFT of length 2^logl in radix-2^logr stages (cl/fft_fourstep.cl):
 * stage s >= 1 (ns = 2^(s logr) butterflies apart, radix r, the last one smaller when logr
 * does not divide logl) holds W_(ns r)^k for k < ns, after those of stages 1 .. s-1; fewer
 * than 2^logl entries in all. */
static void stage_tables(float *h, int logl, int logr) {
  int nfull = logl / logr, nst = nfull + (logl % logr > 0);
  size_t at = 0;
  for (int s = 1; s < nst; s++) {
    size_t ns = (size_t)1 << (s * logr), r = (size_t)1 << (s < nfull ? logr : logl % logr);
    for (size_t k = 0; k < ns; k++, at++) {
      double a = 2.0 * M_PI * (double)k / (double)(ns * r);
      h[2 * at] = (float)cos(a);
      h[2 * at + 1] = (float)sin(a);
    }
  }
}

/* The twiddle tables, (cos, sin) of the positive angle in double, rounded once: the stage
 * tables of length N1 (N1 entries reserved) and of N2 (N2), then W_N^l for l < N1 and
 * W_N2^h for h < N2 (pass 1's W_N^e is the product of two of these). */
static ocal_status make_twiddles(fs_plan *f) {
  ocal_context ctx = f->p->ctx;
  size_t count = 2 * (f->n1 + f->n2);
  float *h = calloc(count * 2, sizeof *h);
  if (!h)
    return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, "ocal_fft_plan_create",
                      "no memory for FFT twiddles");
  /* each length's tables for the points per item of the launch that runs it (N1: the first,
   * or the second with rows=1) */
  int k1 = f->rows;
  stage_tables(h, log2_exact(f->n1), f->ln[k1].logr);
  stage_tables(h + 2 * f->n1, log2_exact(f->n2), f->ln[1 - k1].logr);
  size_t at = f->n1 + f->n2;
  const size_t len[2] = {f->n, f->n2}, cnt[2] = {f->n1, f->n2};
  for (int t = 0; t < 2; t++)
    for (size_t i = 0; i < cnt[t]; i++, at++) {
      double a = 2.0 * M_PI * (double)i / (double)len[t];
      h[2 * at] = (float)cos(a);
      h[2 * at + 1] = (float)sin(a);
    }
  ocal_status s = ocal__device_alloc(ctx, count * 2 * sizeof *h, &f->tw, "ocal_fft_plan_create");
  if (s == OCAL_OK) {
    cl_int err = clEnqueueWriteBuffer(ocal__context_queue(ctx), f->tw, CL_TRUE, 0,
                                      count * 2 * sizeof *h, h, 0, NULL, NULL);
    if (err != CL_SUCCESS)
      s = ocal__cl_fail(ocal__context_info(ctx)->name, err, "clEnqueueWriteBuffer",
                        "ocal_fft_plan_create");
  }
  free(h);
  return s;
}

static void fs_plan_destroy(void *state) {
  fs_plan *f = state;
  if (!f) return;
  if (f->scratch) ocal__device_free(f->p->ctx, f->scratch);
  if (f->tw) ocal__device_free(f->p->ctx, f->tw);
  free(f);
}

static ocal_status fs_plan_create(const ocal__fft_problem *p, ocal__fft_built *out) {
  ocal_context ctx = p->ctx;
  fs_tune t;
  ocal_status s = read_tune(ctx->settings.fft_fourstep_tune, &t);
  if (s != OCAL_OK) return s;
  fs_plan *f = calloc(1, sizeof *f);
  if (!f)
    return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, "ocal_fft_plan_create",
                      "no memory for a four-step FFT plan");
  f->p = p;
  f->skip = t.skip;
  f->maxreg = t.maxreg;
  f->cr = t.cr;
  f->tt = t.tt;
  f->plane = t.plane;
  f->sr = t.sr;
  f->ld = t.ld;
  f->st = t.st;
  f->two_d = p->ndim == 2;
  f->rows = f->two_d && t.rows;
  int ok = p->kind == OCAL_FFT_C2C && !p->dbl && split(p->ndim, p->lengths, &t, &f->n1, &f->n2);
  if (ok) plan_launches(&t, f->two_d, f->n1, f->n2, f->ln);
  if (!ok || !device_fits(ctx, f->ln, &t)) {
    free(f);
    return ocal__fail(OCAL_UNSUPPORTED, "ocal_fft_plan_create",
                      "the four-step FFT does single-precision C2C of 1-D lengths 2^12..2^24 "
                      "and 2-D lengths 64..8192, powers of two only (%s)",
                      p->text);
  }
  f->n = f->n1 * f->n2;
  if (f->tt < 0) f->tt = !f->two_d && f->n < TILES_BELOW ? 2 : 1;
  /* The plan reports a disk-cache hit when no pass was compiled and one came from disk, and
   * a store when a pass was compiled with the disk cache on: the build call says which. */
  ocal__program_origin origin[2] = {OCAL__PROGRAM_FROM_MEMORY, OCAL__PROGRAM_FROM_MEMORY};
  /* the L2 prefetch qualifier is PTX 7.4 for sm_75 and later: plain loads below that */
  int auto_ld = f->ld < 0;
  if (auto_ld) f->ld = ocal__context_compute_capability(ctx) >= 75 ? DEFAULT_LD : 0;
  for (int k = 0; k < 2 && s == OCAL_OK; k++) s = get_kernel(f, k, &origin[k]);
  /* the default hints where the compiler refused them: plain loads */
  if (s == OCAL_BUILD_FAILED && auto_ld && f->ld && ocal__context_compute_capability(ctx) > 0) {
    f->ld = 0;
    s = OCAL_OK;
    for (int k = 0; k < 2 && s == OCAL_OK; k++) s = get_kernel(f, k, &origin[k]);
  }
  /* a kernel whose registers leave fewer items per group than it needs (eight columns of
   * long columns on an H100) is refused here, so the default engine takes the plan */
  for (int k = 0; k < 2 && s == OCAL_OK; k++) {
    size_t need = f->ln[k].len >> f->ln[k].logr;
    if (f->k[k]->work_group_size < need)
      s = ocal__fail(OCAL_UNSUPPORTED, "ocal_fft_plan_create",
                     "the four-step FFT's pass %d needs work-groups of %zu items, and its "
                     "kernel takes %zu on this device (%s): fewer columns per group (c, c2) "
                     "or more points per item (r, r2) in OCAL_FFT_FOURSTEP_TUNE",
                     k + 1, need, f->k[k]->work_group_size, p->text);
  }
  /* transforms per launch: 2^27 points, so that a launch has enough work-groups to keep every
   * multiprocessor busy to the end and few launches end (docs/measurements.md#fft-hints;
   * fewer, cache-sized launches were slower); the scratch holds that many, and where it
   * cannot be had, fewer */
  f->group = t.group ? t.group : ((size_t)1 << 27) / f->n;
  if (f->group < 1) f->group = 1;
  if (f->group > p->batch) f->group = p->batch;
  while (s == OCAL_OK) {
    s = ocal__device_alloc(ctx, f->group * f->n * 8, &f->scratch, "ocal_fft_plan_create");
    if (s != OCAL_OUT_OF_DEVICE_MEMORY || f->group == 1 || t.group) break;
    f->group /= 2;
    s = OCAL_OK;
  }
  if (s == OCAL_OK) s = make_twiddles(f);
  if (s != OCAL_OK) {
    fs_plan_destroy(f);
    return s;
  }
  int compiled = 0, from_disk = 0, stored = 0;
  for (int i = 0; i < 2; i++) {
    compiled |= origin[i] == OCAL__PROGRAM_BUILT || origin[i] == OCAL__PROGRAM_BUILT_STORED;
    from_disk |= origin[i] == OCAL__PROGRAM_FROM_DISK;
    stored |= origin[i] == OCAL__PROGRAM_BUILT_STORED;
  }
  out->from_disk_cache = !compiled && from_disk;
  out->stored_to_disk = stored;
  out->state = f;
  /* pass 2 scales its output: the whole normalisation is done here */
  out->applied[0] = p->scale[0];
  out->applied[1] = p->scale[1];
  return OCAL_OK;
}

/* Launch k of f over count transforms: N / len lines of len points, c per work-group. */
static ocal_status launch(fs_plan *f, int k, size_t count, cl_mem src, cl_ulong src_off,
                          cl_mem dst, cl_ulong dst_off, float dir, float scale,
                          const char *func) {
  const fs_launch *ln = &f->ln[k];
  int pass = f->rows ? 2 : k + 1;
  cl_uint o_stage = ln->o_stage, o_lo = (cl_uint)(f->n1 + f->n2),
          o_hi = (cl_uint)(2 * f->n1 + f->n2), stride = (cl_uint)(f->n / ln->len);
  size_t local = ln->len >> ln->logr, groups = stride / (size_t)ln->c;
  size_t global[2] = {groups * local, count}, lsz[2] = {local, 1};
  ocal__arg args[10] = {OCAL__ARG(src),   OCAL__ARG(src_off), OCAL__ARG(dst),
                        OCAL__ARG(dst_off), OCAL__ARG(stride), OCAL__ARG(dir),
                        OCAL__ARG(f->tw), OCAL__ARG(o_stage)};
  size_t nargs = 8;
  if (pass == 1) {
    args[nargs++] = OCAL__ARG(o_lo);
    args[nargs++] = OCAL__ARG(o_hi);
  } else {
    args[nargs++] = OCAL__ARG(scale);
  }
  return ocal__kernel_run_nd(f->p->ctx, f->k[k], 2, global, lsz, nargs, args, func);
}

static ocal_status fs_execute(void *state, int direction, cl_mem in, size_t in_offset_bytes,
                              cl_mem out, size_t out_offset_bytes, const char *func) {
  fs_plan *f = state;
  int inv = direction == OCAL_FFT_INVERSE;
  (void)in_offset_bytes; /* takes_offsets is 0: always 0 */
  (void)out_offset_bytes;
  float scale = (float)f->p->scale[inv], dir = inv ? 1.0f : -1.0f;
  ocal_status s = OCAL_OK;
  /* f->group transforms at a time through the scratch buffer (in place works: pass 1 moves
   * all of them into the scratch before pass 2 writes them back) */
  for (size_t b = 0; b < f->p->batch && s == OCAL_OK; b += f->group) {
    size_t count = f->p->batch - b < f->group ? f->p->batch - b : f->group;
    cl_ulong off = (cl_ulong)(b * f->n);
    if (f->skip != 1) s = launch(f, 0, count, in, off, f->scratch, 0, dir, 1.0f, func);
    if (s == OCAL_OK && f->skip != 2)
      s = launch(f, 1, count, f->scratch, 0, out, off, dir, scale, func);
  }
  return s;
}

const ocal__fft_engine ocal__fft_fourstep = {"fourstep", 0, fs_plan_create, fs_execute,
                                             fs_plan_destroy};
