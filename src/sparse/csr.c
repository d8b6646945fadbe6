/* ocal — CSR matrices: creation from host CSR, COO triplets and device buffers, validation,
 * the row-length statistics that choose the SpMV kernel, queries, the transposed copy. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sparse_internal.h"

/* Row lengths above this (and above LONG_FACTOR times the mean) make a row "long": it gets a
 * whole work-group in the adaptive kernel. docs/sparse.md has the measurements. */
#define LONG_ROW_MIN 1024
#define LONG_FACTOR 16
/* Mean row lengths up to this take the stream kernel on GPUs. */
#define STREAM_MAX_MEAN 32.0
/* Rows this short, with none long, take one work-item each on GPUs too (see the rule). */
#define SCALAR_MAX_MEAN 8.0
/* The stream kernel's staging capacity for matrices with long rows (see choose_kernel). */
#define STREAM_CAP_IRREGULAR 512

static int64_t get_idx(ocal_dtype it, const void *p, size_t i) {
  return it == OCAL_I32 ? (int64_t)((const int32_t *)p)[i] : ((const int64_t *)p)[i];
}

static void set_idx(ocal_dtype it, void *p, size_t i, int64_t v) {
  if (it == OCAL_I32)
    ((int32_t *)p)[i] = (int32_t)v;
  else
    ((int64_t *)p)[i] = v;
}

void ocal__csr_options(ocal_dtype vt, ocal_dtype it, const char *extra, char *out, size_t size) {
  snprintf(out, size, "-DT=%s -DIDX=%s%s%s%s", vt == OCAL_F64 ? "double" : "float",
           it == OCAL_I64 ? "long" : "int", vt == OCAL_F64 ? " -DOCAL_NEED_FP64" : "",
           extra && *extra ? " " : "", extra ? extra : "");
}

ocal_status ocal__csr_check(ocal_csr a, const char *func) {
  if (a == NULL || a->magic != OCAL__CSR_MAGIC)
    return ocal__fail(OCAL_INVALID_HANDLE, func,
                      "the CSR matrix is NULL or not a live ocal_csr (released already?)");
  return OCAL_OK;
}

static ocal_status check_types(ocal_context ctx, ocal_dtype vt, ocal_dtype it, const char *func) {
  ocal_status s = ocal__check_context(ctx, func);
  if (s != OCAL_OK) return s;
  if (vt != OCAL_F32 && vt != OCAL_F64)
    return ocal__fail(OCAL_UNSUPPORTED, func,
                      "value type %s is not supported: CSR values are OCAL_F32 or OCAL_F64",
                      ocal_dtype_name(vt));
  if (it != OCAL_I32 && it != OCAL_I64)
    return ocal__fail(OCAL_UNSUPPORTED, func,
                      "index type %s is not supported: CSR indices are OCAL_I32 or OCAL_I64",
                      ocal_dtype_name(it));
  if (vt == OCAL_F64 && !ocal__context_fp64(ctx))
    return ocal__fail(OCAL_UNSUPPORTED, func,
                      "OCAL_F64 values need double precision, which this context (%s) lacks; "
                      "use OCAL_F32",
                      ocal__context_info(ctx)->name);
  return OCAL_OK;
}

/* Checks the structure; names the first bad row or entry. */
static ocal_status validate(ocal_dtype it, size_t rows, size_t cols, const void *rp,
                            const void *ci, const char *func) {
  if (get_idx(it, rp, 0) != 0)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func, "row_ptr[0] is %lld; it must be 0",
                      (long long)get_idx(it, rp, 0));
  for (size_t r = 0; r < rows; r++) {
    int64_t b = get_idx(it, rp, r), e = get_idx(it, rp, r + 1);
    if (e < b)
      return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                        "row_ptr decreases at row %zu (row_ptr[%zu] = %lld > row_ptr[%zu] = "
                        "%lld); row pointers must be non-decreasing",
                        r, r, (long long)b, r + 1, (long long)e);
  }
  size_t nnz = (size_t)get_idx(it, rp, rows);
  for (size_t j = 0; j < nnz; j++) {
    int64_t c = get_idx(it, ci, j);
    if (c < 0 || (uint64_t)c >= cols) {
      /* The row of entry j, for the message: the first row whose end passes j. */
      size_t r = 0;
      while (r < rows && (size_t)get_idx(it, rp, r + 1) <= j) r++;
      return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                        "entry %zu (row %zu) has column index %lld, outside [0, %zu)", j, r,
                        (long long)c, cols);
    }
  }
  return OCAL_OK;
}

/* Reads OCAL_SPMV (auto|scalar|vector|vectorN|adaptive|stream|streamN|merge|mergeN), as the
 * settings module read it into `e` (the context's settings), to override the rule:
 * 0 when unset or auto, 1 when it overrides, -1 for a value it does not know (an error, as for
 * every OCAL_* setting, rather than a silent fallback to the rule). */
static int spmv_override(const char *e, ocal__spmv_kind *kind, unsigned *lanes, unsigned *cap,
                         unsigned *ipt) {
  if (e == NULL || *e == '\0' || strcmp(e, "auto") == 0) return 0;
  if (strncmp(e, "merge", 5) == 0) {
    if (e[5] != '\0') {
      char *end;
      unsigned long v = strtoul(e + 5, &end, 10);
      if (*end != '\0' || v < 1 || v > 32) return -1;
      *ipt = (unsigned)v;
    }
    *kind = OCAL__SPMV_MERGE;
    return 1;
  }
  if (strcmp(e, "scalar") == 0) {
    *kind = OCAL__SPMV_SCALAR;
    return 1;
  }
  if (strcmp(e, "adaptive") == 0) {
    *kind = OCAL__SPMV_ADAPTIVE;
    return 1;
  }
  int stream = strncmp(e, "stream", 6) == 0, vector = strncmp(e, "vector", 6) == 0;
  if (!stream && !vector) return -1;
  unsigned n = 0;
  if (e[6] != '\0') {
    char *end;
    unsigned long v = strtoul(e + 6, &end, 10);
    if (*end != '\0' || v == 0 || (v & (v - 1)) != 0) return -1;
    if (stream ? v < OCAL__SPMV_STREAM_WG || v > 4096 : v < 2 || v > 64) return -1;
    n = (unsigned)v;
  }
  *kind = stream ? OCAL__SPMV_STREAM : OCAL__SPMV_VECTOR;
  if (n) *(stream ? cap : lanes) = n;
  return 1;
}

static unsigned lanes_for(double mean) {
  unsigned l = 2;
  while (l < 32 && 2.0 * l <= mean) l *= 2;
  return l;
}

ocal__spmv_kind ocal__spmv_rule(int cpu, double mean_len, size_t n_long) {
  /* On CPU devices (PoCL) one work-item per row wins at every row length measured: the
   * runtime vectorises across work-items, and the vector kernels' work-group barriers cost
   * more than they save (docs/sparse.md). */
  if (cpu) return OCAL__SPMV_SCALAR;
  /* On an H100, one work-item per row ran the 5- and 7-point Laplacians at the copy bandwidth,
   * where every cooperative kernel lost to it (docs/measurements.md#spmv-rule): neighbouring
   * rows' entries are neighbours in memory, so the cache serves what a warp's strided loads
   * miss. Long rows stall a warp on one item, so a matrix with any goes to the stream
   * kernel. The merge-path kernel balances the groups exactly but ran 3 % slower than it on
   * the power-law matrix, plain or with the same cache hints (docs/sparse.md): the gathers
   * of x set the pace there, not the balance. */
  if (n_long == 0 && mean_len <= SCALAR_MAX_MEAN) return OCAL__SPMV_SCALAR;
  if (mean_len <= STREAM_MAX_MEAN) return OCAL__SPMV_STREAM;
  if (n_long > 0) return OCAL__SPMV_ADAPTIVE;
  return OCAL__SPMV_VECTOR;
}

/* A row block of the stream kernel: rows [r0, r1), nnz entries. */
typedef struct {
  size_t r0, r1, nnz;
} row_block;

/* Longest first. */
static int longer_first(const void *a, const void *b) {
  size_t x = ((const row_block *)a)->nnz, y = ((const row_block *)b)->nnz;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* The stream kernel's block that starts at row r0: consecutive rows while the block has
 * fewer than its work-group size of rows and at most `cap` entries, or one row longer than
 * `cap` (summed by the whole group). Returns its end; *nnz receives its entries. */
static size_t block_end(ocal_csr a, const void *rp, size_t r0, size_t *nnz) {
  size_t r = r0, sum = 0;
  while (r < a->rows && r - r0 < a->swg) {
    size_t l = (size_t)(get_idx(a->it, rp, r + 1) - get_idx(a->it, rp, r));
    if (r > r0 && sum + l > a->cap) break;
    sum += l;
    r++;
    if (sum > a->cap) break; /* one long row: a block of its own */
  }
  *nnz = sum;
  return r;
}

/* Cuts the rows into the stream kernel's blocks and stores each one's first row and end:
 * the long rows' blocks first, longest first, then the others in row order. A group sums a
 * long row alone, and one that started last would finish after all the others (+0.3 % on a
 * power-law matrix, docs/measurements.md#spmv-long-first). */
static ocal_status stream_blocks(ocal_csr a, const void *rp, const char *func) {
  size_t rows = a->rows, es = ocal_dtype_size(a->it), n = 0, nlong = 0, nnz;
  for (size_t r = 0; r < rows; n++) {
    r = block_end(a, rp, r, &nnz);
    nlong += nnz > a->cap;
  }
  unsigned char *bl = calloc(2 * (n ? n : 1), es);
  row_block *lg = malloc((nlong ? nlong : 1) * sizeof *lg);
  if (bl == NULL || lg == NULL) {
    free(bl);
    free(lg);
    return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, func, "no host memory for the row blocks");
  }
  for (size_t r = 0, e, j = 0, k = nlong; r < rows; r = e) {
    e = block_end(a, rp, r, &nnz);
    if (nnz > a->cap) {
      lg[j++] = (row_block){r, e, nnz};
    } else {
      set_idx(a->it, bl, 2 * k, (int64_t)r);
      set_idx(a->it, bl, 2 * k++ + 1, (int64_t)e);
    }
  }
  qsort(lg, nlong, sizeof *lg, longer_first);
  for (size_t i = 0; i < nlong; i++) {
    set_idx(a->it, bl, 2 * i, (int64_t)lg[i].r0);
    set_idx(a->it, bl, 2 * i + 1, (int64_t)lg[i].r1);
  }
  free(lg);
  a->nblocks = n;
  size_t len = 2 * (n ? n : 1);
  ocal_status s = ocal_buffer_from_host(a->ctx, a->it, 1, &len, bl, &a->blocks);
  free(bl);
  return s;
}

/* Cuts the merge path (the row ends and the entries, rows + nnz items in order: row r ends
 * at item rp[r + 1] + r) into tiles of `wg * ipt` items and stores each tile's first row,
 * the rows ended before it, plus `rows` at the end; allocates the kernel's partial sums. */
static ocal_status merge_tiles(ocal_csr a, const void *rp, const char *func) {
  size_t rows = a->rows, es = ocal_dtype_size(a->it), tile = (size_t)a->swg * a->ipt;
  size_t n = ocal__ceil_div(rows + a->nnz, tile);
  unsigned char *tl = malloc((n + 1) * es);
  if (tl == NULL) return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, func, "no host memory for the tiles");
  size_t r = 0;
  for (size_t g = 0; g < n; g++) {
    while (r < rows && (size_t)get_idx(a->it, rp, r + 1) + r < g * tile) r++;
    set_idx(a->it, tl, g, (int64_t)r);
  }
  set_idx(a->it, tl, n, (int64_t)rows);
  a->ntiles = n;
  size_t len = n + 1, two = 2 * n;
  ocal_status s = ocal_buffer_from_host(a->ctx, a->it, 1, &len, tl, &a->tiles);
  free(tl);
  if (s == OCAL_OK) s = ocal_buffer_create(a->ctx, a->vt, 1, &two, &a->carry);
  return s;
}

/* Gathers row-length statistics and chooses the kernel (and the row lists of "adaptive"). */
static ocal_status choose_kernel(ocal_csr a, const void *rp, const char *func) {
  size_t rows = a->rows, maxl = 0;
  for (size_t r = 0; r < rows; r++) {
    size_t l = (size_t)(get_idx(a->it, rp, r + 1) - get_idx(a->it, rp, r));
    if (l > maxl) maxl = l;
  }
  a->mean_len = (double)a->nnz / (double)rows;
  a->max_len = maxl;
  /* The kernels' work-groups, a power of two within the device's limits (an emulated mobile
   * GPU allows 128 items; OCAL_LIMITS=max_work_group=N and the profiles test this). The
   * context's facts already hold the smaller of the group and the first dimension's limits. */
  size_t most = ocal__context_info(a->ctx)->max_work_item_sizes[0];
  a->wg = OCAL__SPMV_WG;
  a->swg = OCAL__SPMV_STREAM_WG;
  while (a->wg > 1 && a->wg > most) a->wg /= 2;
  while (a->swg > 1 && a->swg > most) a->swg /= 2;
  double long_min = fmax((double)LONG_ROW_MIN, LONG_FACTOR * a->mean_len);
  size_t n_long = 0;
  for (size_t r = 0; r < rows; r++)
    if ((double)(get_idx(a->it, rp, r + 1) - get_idx(a->it, rp, r)) > long_min) n_long++;
  ocal__spmv_kind kind =
      ocal__spmv_rule(ocal__context_info(a->ctx)->type == OCAL_DEVICE_CPU, a->mean_len, n_long);
  /* With long rows, smaller stream blocks balance the groups better (H100, power-law matrix:
   * docs/measurements.md#spmv-rule). */
  unsigned lanes = lanes_for(a->mean_len),
           cap = n_long > 0 ? STREAM_CAP_IRREGULAR : OCAL__SPMV_STREAM_CAP,
           ipt = OCAL__SPMV_MERGE_IPT;
  const char *named = a->ctx->settings.spmv;
  if (spmv_override(named, &kind, &lanes, &cap, &ipt) < 0)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "OCAL_SPMV='%s' is not a kernel: use auto, scalar, adaptive, vector, "
                      "vectorN (N = 2..64, a power of two), stream or streamN (N = 256..4096, "
                      "a power of two), merge or mergeN (N = 1..32)", named);
  /* The stream kernel stages `cap` values and its group's row pointers in local memory:
   * halve the blocks until they fit the device (an emulated 32 KiB one cannot hold 4096
   * doubles beside them). */
  size_t vsz = ocal_dtype_size(a->vt), isz = ocal_dtype_size(a->it);
  while (cap > a->swg &&
         (size_t)cap * vsz + (a->swg + 1) * isz > ocal__context_info(a->ctx)->local_mem_bytes)
    cap /= 2;
  if (lanes > a->wg) lanes = a->wg;
  /* The merge kernel stages a tile's products and row ends, and a value and a row per
   * work-item: fewer items per work-item until that fits. */
  while (ipt > 1 && ((size_t)ipt + 1) * a->swg * (vsz + 4) >
                        ocal__context_info(a->ctx)->local_mem_bytes)
    ipt--;
  a->kind = kind;
  a->lanes = lanes;
  a->cap = cap;
  a->ipt = ipt;
  if (kind == OCAL__SPMV_STREAM) return stream_blocks(a, rp, func);
  if (kind == OCAL__SPMV_MERGE) return merge_tiles(a, rp, func);
  if (kind != OCAL__SPMV_ADAPTIVE) return OCAL_OK;

  /* The short rows' mean decides the vector width of the adaptive kernel's first part. */
  size_t es = ocal_dtype_size(a->it);
  unsigned char *sl = malloc((rows - n_long + 1) * es), *ll = malloc((n_long + 1) * es);
  if (sl == NULL || ll == NULL) {
    free(sl);
    free(ll);
    return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, func, "no host memory for the row lists");
  }
  size_t ns = 0, nl = 0, short_nnz = 0;
  for (size_t r = 0; r < rows; r++) {
    size_t l = (size_t)(get_idx(a->it, rp, r + 1) - get_idx(a->it, rp, r));
    if ((double)l > long_min) {
      set_idx(a->it, ll, nl++, (int64_t)r);
    } else {
      set_idx(a->it, sl, ns++, (int64_t)r);
      short_nnz += l;
    }
  }
  if (strncmp(named, "vector", 6) != 0)
    a->lanes = lanes_for(ns ? (double)short_nnz / (double)ns : 1.0);
  a->n_short = ns;
  a->n_long = nl;
  size_t s1 = ns ? ns : 1, s2 = nl ? nl : 1;
  ocal_status s = ocal_buffer_from_host(a->ctx, a->it, 1, &s1, sl, &a->short_rows);
  if (s == OCAL_OK) s = ocal_buffer_from_host(a->ctx, a->it, 1, &s2, ll, &a->long_rows);
  free(sl);
  free(ll);
  return s;
}

static void csr_free(ocal_csr a) {
  if (a == NULL) return;
  a->magic = 0;
  ocal_buffer_release(a->rp);
  ocal_buffer_release(a->ci);
  ocal_buffer_release(a->v);
  ocal_buffer_release(a->short_rows);
  ocal_buffer_release(a->long_rows);
  ocal_buffer_release(a->blocks);
  ocal_buffer_release(a->tiles);
  ocal_buffer_release(a->carry);
  if (a->t) csr_free(a->t);
  pthread_mutex_destroy(&a->lock);
  free(a);
}

ocal_status ocal__csr_create(ocal_context ctx, ocal_dtype vt, ocal_dtype it, size_t rows,
                             size_t cols, const void *rp, const void *ci, const void *v,
                             const char *func, ocal_csr *out) {
  ocal_status s = validate(it, rows, cols, rp, ci, func);
  if (s != OCAL_OK) return s;
  ocal_csr a = calloc(1, sizeof *a);
  if (a == NULL) return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, func, "no host memory");
  a->magic = OCAL__CSR_MAGIC;
  a->ctx = ctx;
  a->vt = vt;
  a->it = it;
  a->rows = rows;
  a->cols = cols;
  a->nnz = (size_t)get_idx(it, rp, rows);
  pthread_mutex_init(&a->lock, NULL);
  size_t nr = rows + 1, nz = a->nnz ? a->nnz : 1;
  /* Empty matrices still get one-element index and value buffers, so that every kernel
   * argument is a real cl_mem; the row pointers keep the kernels from reading them. */
  const int64_t zero = 0;
  const double dzero = 0;
  s = ocal_buffer_from_host(ctx, it, 1, &nr, rp, &a->rp);
  if (s == OCAL_OK) s = ocal_buffer_from_host(ctx, it, 1, &nz, a->nnz ? ci : &zero, &a->ci);
  if (s == OCAL_OK) s = ocal_buffer_from_host(ctx, vt, 1, &nz, a->nnz ? v : &dzero, &a->v);
  if (s == OCAL_OK) s = choose_kernel(a, rp, func);
  if (s != OCAL_OK) {
    csr_free(a);
    return s;
  }
  *out = a;
  return OCAL_OK;
}

/* Common argument checks of the host creations. */
static ocal_status check_create(ocal_context ctx, ocal_dtype vt, ocal_dtype it, size_t rows,
                                size_t cols, ocal_csr *out, const char *func) {
  if (out == NULL) return ocal__fail(OCAL_INVALID_ARGUMENT, func, "out is NULL");
  *out = NULL;
  ocal_status s = check_types(ctx, vt, it, func);
  if (s != OCAL_OK) return s;
  if (rows == 0 || cols == 0)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "the matrix is %zu x %zu; both sizes must be at least 1", rows, cols);
  uint64_t lim = it == OCAL_I32 ? (uint64_t)INT32_MAX : (uint64_t)INT64_MAX;
  if ((uint64_t)rows >= lim || (uint64_t)cols >= lim)
    return ocal__fail(OCAL_OVERFLOW, func, "a %zu x %zu matrix does not fit %s indices%s", rows,
                      cols, ocal_dtype_name(it), it == OCAL_I32 ? "; use OCAL_I64" : "");
  return OCAL_OK;
}

ocal_status ocal_csr_from_host(ocal_context ctx, ocal_dtype value_type, ocal_dtype index_type,
                               size_t rows, size_t cols, const void *row_ptr,
                               const void *col_idx, const void *values, ocal_csr *out) {
  ocal_status s = check_create(ctx, value_type, index_type, rows, cols, out, __func__);
  if (s != OCAL_OK) return s;
  if (row_ptr == NULL) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "row_ptr is NULL");
  int64_t nnz = get_idx(index_type, row_ptr, rows);
  if (nnz > 0 && (col_idx == NULL || values == NULL))
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT,
                     "col_idx or values is NULL but row_ptr[rows] = %lld entries",
                     (long long)nnz);
  return ocal__csr_create(ctx, value_type, index_type, rows, cols, row_ptr, col_idx, values,
                          __func__, out);
}

/* Sorts entry numbers by (row, column) through a counting sort on rows, then sorts each row
 * by column, and sums duplicates in double precision. */
static int cmp_col(const void *pa, const void *pb, void *cols) {
  const int64_t *c = cols;
  int64_t a = c[*(const size_t *)pa], b = c[*(const size_t *)pb];
  return (a > b) - (a < b);
}

/* qsort_r is a GNU extension; a small insertion-merge keeps this portable instead. */
static void sort_row(size_t *idx, size_t n, const int64_t *cj) {
  if (n < 2) return;
  if (n <= 16) {
    for (size_t i = 1; i < n; i++) {
      size_t v = idx[i], j = i;
      while (j > 0 && cmp_col(&idx[j - 1], &v, (void *)cj) > 0) {
        idx[j] = idx[j - 1];
        j--;
      }
      idx[j] = v;
    }
    return;
  }
  size_t h = n / 2;
  sort_row(idx, h, cj);
  sort_row(idx + h, n - h, cj);
  size_t *tmp = malloc(n * sizeof *tmp);
  if (tmp == NULL) { /* fall back to the quadratic sort rather than fail */
    for (size_t i = 1; i < n; i++) {
      size_t v = idx[i], j = i;
      while (j > 0 && cj[idx[j - 1]] > cj[v]) {
        idx[j] = idx[j - 1];
        j--;
      }
      idx[j] = v;
    }
    return;
  }
  size_t i = 0, j = h, o = 0;
  while (i < h && j < n) tmp[o++] = cj[idx[j]] < cj[idx[i]] ? idx[j++] : idx[i++];
  while (i < h) tmp[o++] = idx[i++];
  while (j < n) tmp[o++] = idx[j++];
  memcpy(idx, tmp, n * sizeof *tmp);
  free(tmp);
}

ocal_status ocal__csr_from_triplets(ocal_context ctx, ocal_dtype vt, ocal_dtype it, size_t rows,
                                    size_t cols, size_t nnz, const int64_t *ri,
                                    const int64_t *cj, const double *val, const char *func,
                                    ocal_csr *out) {
  size_t es = ocal_dtype_size(it), vs = ocal_dtype_size(vt);
  /* The row pointers end up in one device buffer: a count they cannot fit is refused before
   * any host memory is taken, since a system that overcommits would hand out the host arrays
   * and end the process when they are filled. */
  uint64_t max_alloc = ocal__context_info(ctx)->max_alloc_bytes;
  if (rows >= max_alloc / es) {
    return ocal__fail(OCAL_OUT_OF_DEVICE_MEMORY, func,
                      "the %zu row pointers of %zu rows need %zu bytes each, more in all than "
                      "the device's largest buffer (%llu bytes): is the row count right?",
                      rows + 1, rows, es, (unsigned long long)max_alloc);
  }
  size_t *count = calloc(rows + 1, sizeof *count);
  size_t *order = malloc((nnz ? nnz : 1) * sizeof *order);
  void *rp = malloc((rows + 1) * es), *ci = malloc((nnz ? nnz : 1) * es);
  void *v = malloc((nnz ? nnz : 1) * vs);
  ocal_status s = OCAL_OK;
  if (!count || !rp) {
    s = ocal__fail(OCAL_OUT_OF_HOST_MEMORY, func,
                   "no host memory for the %zu row pointers of %zu rows (%zu bytes each, twice "
                   "over while the matrix is built): is the row count right?",
                   rows + 1, rows, es > sizeof *count ? es : sizeof *count);
    goto done;
  }
  if (!order || !ci || !v) {
    s = ocal__fail(OCAL_OUT_OF_HOST_MEMORY, func, "no host memory for %zu entries", nnz);
    goto done;
  }
  for (size_t k = 0; k < nnz; k++) count[ri[k] + 1]++;
  for (size_t r = 0; r < rows; r++) count[r + 1] += count[r];
  for (size_t k = 0; k < nnz; k++) order[count[ri[k]]++] = k;
  /* count[r] now ends row r; rebuild the starts. */
  for (size_t r = rows; r > 0; r--) count[r] = count[r - 1];
  count[0] = 0;
  size_t out_n = 0;
  set_idx(it, rp, 0, 0);
  for (size_t r = 0; r < rows; r++) {
    size_t b = count[r], e = count[r + 1];
    sort_row(order + b, e - b, cj);
    for (size_t k = b; k < e;) {
      int64_t c = cj[order[k]];
      double sum = 0;
      while (k < e && cj[order[k]] == c) sum += val[order[k++]];
      set_idx(it, ci, out_n, c);
      if (vt == OCAL_F32)
        ((float *)v)[out_n] = (float)sum;
      else
        ((double *)v)[out_n] = sum;
      out_n++;
    }
    set_idx(it, rp, r + 1, (int64_t)out_n);
  }
  s = ocal__csr_create(ctx, vt, it, rows, cols, rp, ci, v, func, out);
done:
  free(count);
  free(order);
  free(rp);
  free(ci);
  free(v);
  return s;
}

ocal_status ocal_csr_from_coo(ocal_context ctx, ocal_dtype value_type, ocal_dtype index_type,
                              size_t rows, size_t cols, size_t nnz, const void *row_idx,
                              const void *col_idx, const void *values, ocal_csr *out) {
  ocal_status s = check_create(ctx, value_type, index_type, rows, cols, out, __func__);
  if (s != OCAL_OK) return s;
  if (nnz > 0 && (row_idx == NULL || col_idx == NULL || values == NULL))
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "row_idx, col_idx or values is NULL for %zu entries",
                     nnz);
  if (index_type == OCAL_I32 && nnz > (size_t)INT32_MAX)
    return OCAL_FAIL(OCAL_OVERFLOW, "%zu entries do not fit OCAL_I32 indices; use OCAL_I64", nnz);
  /* The three conversion arrays take 8 bytes an entry: a count whose byte size wraps
   * around size_t would get a tiny array and the loop below would write past it. */
  if (nnz > SIZE_MAX / sizeof(int64_t))
    return OCAL_FAIL(OCAL_OUT_OF_HOST_MEMORY,
                     "the %zu entries need 8 bytes each of host memory to convert, more than "
                     "size_t can count: is nnz right?",
                     nnz);
  size_t n1 = nnz ? nnz : 1;
  int64_t *ri = malloc(n1 * sizeof *ri), *cj = malloc(n1 * sizeof *cj);
  double *val = malloc(n1 * sizeof *val);
  if (!ri || !cj || !val) {
    s = OCAL_FAIL(OCAL_OUT_OF_HOST_MEMORY, "no host memory for %zu entries", nnz);
    goto done;
  }
  for (size_t k = 0; k < nnz; k++) {
    ri[k] = get_idx(index_type, row_idx, k);
    cj[k] = get_idx(index_type, col_idx, k);
    val[k] = value_type == OCAL_F32 ? (double)((const float *)values)[k]
                                    : ((const double *)values)[k];
    if (ri[k] < 0 || (uint64_t)ri[k] >= rows || cj[k] < 0 || (uint64_t)cj[k] >= cols) {
      s = OCAL_FAIL(OCAL_INVALID_ARGUMENT,
                    "entry %zu is at (%lld, %lld), outside the %zu x %zu matrix (indices are "
                    "0-based)",
                    k, (long long)ri[k], (long long)cj[k], rows, cols);
      goto done;
    }
  }
  s = ocal__csr_from_triplets(ctx, value_type, index_type, rows, cols, nnz, ri, cj, val,
                              __func__, out);
done:
  free(ri);
  free(cj);
  free(val);
  return s;
}

ocal_status ocal_csr_from_buffers(ocal_buffer row_ptr, ocal_buffer col_idx, ocal_buffer values,
                                  size_t cols, ocal_csr *out) {
  if (out == NULL) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "out is NULL");
  *out = NULL;
  ocal_status s = ocal__check_buffer_arg(row_ptr, "row_ptr", __func__);
  if (s == OCAL_OK) s = ocal__check_buffer_arg(col_idx, "col_idx", __func__);
  if (s == OCAL_OK) s = ocal__check_buffer_arg(values, "values", __func__);
  if (s != OCAL_OK) return s;
  ocal_context ctx = row_ptr->ctx;
  if (col_idx->ctx != ctx || values->ctx != ctx)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "the three buffers belong to different contexts");
  /* The types themselves first: a row_ptr of a type no index has is refused as such, not
   * as a mismatch that would send the caller to a col_idx of that refused type. */
  s = check_types(ctx, values->dtype, row_ptr->dtype, __func__);
  if (s != OCAL_OK) return s;
  if (col_idx->dtype != row_ptr->dtype)
    return OCAL_FAIL(OCAL_TYPE_MISMATCH, "row_ptr is %s but col_idx is %s; they must match",
                     ocal_dtype_name(row_ptr->dtype), ocal_dtype_name(col_idx->dtype));
  if (row_ptr->numel < 2)
    return OCAL_FAIL(OCAL_SHAPE_MISMATCH,
                     "row_ptr has %zu elements; it needs rows + 1 >= 2", row_ptr->numel);
  size_t rows = row_ptr->numel - 1;
  s = check_create(ctx, values->dtype, row_ptr->dtype, rows, cols, out, __func__);
  if (s != OCAL_OK) return s;
  size_t es = ocal_dtype_size(row_ptr->dtype), vs = ocal_dtype_size(values->dtype);
  void *rp = malloc(row_ptr->numel * es);
  if (rp == NULL) return OCAL_FAIL(OCAL_OUT_OF_HOST_MEMORY, "no host memory");
  void *ci = NULL, *v = NULL;
  s = ocal_buffer_read(row_ptr, 0, row_ptr->numel, rp, NULL);
  if (s != OCAL_OK) goto done;
  int64_t nnz = get_idx(row_ptr->dtype, rp, rows);
  if (nnz < 0 || (size_t)nnz != col_idx->numel || (size_t)nnz != values->numel) {
    s = OCAL_FAIL(OCAL_SHAPE_MISMATCH,
                  "row_ptr[%zu] = %lld entries, but col_idx has %zu and values %zu elements",
                  rows, (long long)nnz, col_idx->numel, values->numel);
    goto done;
  }
  ci = malloc((nnz ? (size_t)nnz : 1) * es);
  v = malloc((nnz ? (size_t)nnz : 1) * vs);
  if (!ci || !v) {
    s = OCAL_FAIL(OCAL_OUT_OF_HOST_MEMORY, "no host memory for %lld entries", (long long)nnz);
    goto done;
  }
  s = ocal_buffer_read(col_idx, 0, (size_t)nnz, ci, NULL);
  if (s == OCAL_OK) s = ocal_buffer_read(values, 0, (size_t)nnz, v, NULL);
  if (s == OCAL_OK)
    s = ocal__csr_create(ctx, values->dtype, row_ptr->dtype, rows, cols, rp, ci, v, __func__, out);
done:
  free(rp);
  free(ci);
  free(v);
  return s;
}

ocal_status ocal_csr_release(ocal_csr a) {
  if (a == NULL) return OCAL_OK;
  ocal_status s = ocal__csr_check(a, __func__);
  if (s != OCAL_OK) return s;
  csr_free(a);
  return OCAL_OK;
}

ocal_status ocal_csr_get_shape(ocal_csr a, size_t *rows, size_t *cols) {
  ocal_status s = ocal__csr_check(a, __func__);
  if (s != OCAL_OK) return s;
  if (rows == NULL || cols == NULL)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "rows or cols is NULL");
  *rows = a->rows;
  *cols = a->cols;
  return OCAL_OK;
}

ocal_status ocal_csr_get_nnz(ocal_csr a, size_t *nnz) {
  ocal_status s = ocal__csr_check(a, __func__);
  if (s != OCAL_OK) return s;
  if (nnz == NULL) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "nnz is NULL");
  *nnz = a->nnz;
  return OCAL_OK;
}

ocal_status ocal_csr_get_dtypes(ocal_csr a, ocal_dtype *value_type, ocal_dtype *index_type) {
  ocal_status s = ocal__csr_check(a, __func__);
  if (s != OCAL_OK) return s;
  if (value_type) *value_type = a->vt;
  if (index_type) *index_type = a->it;
  return OCAL_OK;
}

ocal_status ocal_csr_get_context(ocal_csr a, ocal_context *ctx) {
  ocal_status s = ocal__csr_check(a, __func__);
  if (s != OCAL_OK) return s;
  if (ctx == NULL) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "ctx is NULL");
  *ctx = a->ctx;
  return OCAL_OK;
}

ocal_status ocal_csr_get_spmv_kernel(ocal_csr a, const char **name) {
  ocal_status s = ocal__csr_check(a, __func__);
  if (s != OCAL_OK) return s;
  if (name == NULL) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "name is NULL");
  static const char *names[] = {"scalar", "vector", "adaptive", "stream", "merge"};
  *name = names[a->kind];
  return OCAL_OK;
}

ocal_status ocal_csr_diagonal(ocal_csr a, ocal_buffer out) {
  ocal_status s = ocal__csr_check(a, __func__);
  if (s == OCAL_OK) s = ocal__check_buffer_arg(out, "out", __func__);
  if (s != OCAL_OK) return s;
  if (a->rows != a->cols)
    return OCAL_FAIL(OCAL_SHAPE_MISMATCH, "the matrix is %zu x %zu, not square", a->rows,
                     a->cols);
  if (out->ctx != a->ctx)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "out belongs to another context than the matrix");
  if (out->dtype != a->vt)
    return OCAL_FAIL(OCAL_TYPE_MISMATCH, "out is %s but the matrix holds %s",
                     ocal_dtype_name(out->dtype), ocal_dtype_name(a->vt));
  if (out->numel != a->rows)
    return OCAL_FAIL(OCAL_SHAPE_MISMATCH, "out has %zu elements; the diagonal has %zu",
                     out->numel, a->rows);
  char opt[128];
  ocal__csr_options(a->vt, a->it, NULL, opt, sizeof opt);
  ocal__kernel *k;
  s = ocal__library_kernel_from(a->ctx, "sparse_spmv", opt, "csr_diagonal", &k, NULL, __func__);
  if (s != OCAL_OK) return s;
  int64_t rows64 = (int64_t)a->rows;
  int32_t rows32 = (int32_t)a->rows;
  cl_ulong off = out->offset;
  ocal__arg args[] = {a->it == OCAL_I64 ? OCAL__ARG(rows64) : OCAL__ARG(rows32),
                      OCAL__ARG(a->rp->mem), OCAL__ARG(a->ci->mem), OCAL__ARG(a->v->mem),
                      OCAL__ARG(out->mem), OCAL__ARG(off)};
  return ocal__kernel_run(a->ctx, k, a->rows, 6, args, __func__);
}

/* The transpose on the host from the matrix read back: a counting sort by column keeps the
 * entries of each new row in the order of the old rows, so the result is the same each run. */
static ocal_status build_transpose(ocal_csr a, const char *func, ocal_csr *t) {
  size_t es = ocal_dtype_size(a->it), vs = ocal_dtype_size(a->vt), nz = a->nnz ? a->nnz : 1;
  void *rp = malloc((a->rows + 1) * es), *ci = malloc(nz * es), *v = malloc(nz * vs);
  void *trp = malloc((a->cols + 1) * es), *tci = malloc(nz * es), *tv = malloc(nz * vs);
  size_t *next = calloc(a->cols + 1, sizeof *next);
  ocal_status s = OCAL_OK;
  if (!rp || !ci || !v || !trp || !tci || !tv || !next) {
    s = ocal__fail(OCAL_OUT_OF_HOST_MEMORY, func, "no host memory for the transposed copy");
    goto done;
  }
  s = ocal_buffer_read(a->rp, 0, a->rows + 1, rp, NULL);
  if (s == OCAL_OK) s = ocal_buffer_read(a->ci, 0, nz, ci, NULL);
  if (s == OCAL_OK) s = ocal_buffer_read(a->v, 0, nz, v, NULL);
  if (s != OCAL_OK) goto done;
  for (size_t j = 0; j < a->nnz; j++) next[get_idx(a->it, ci, j) + 1]++;
  for (size_t c = 0; c < a->cols; c++) next[c + 1] += next[c];
  for (size_t c = 0; c <= a->cols; c++) set_idx(a->it, trp, c, (int64_t)next[c]);
  for (size_t r = 0; r < a->rows; r++) {
    for (int64_t j = get_idx(a->it, rp, r); j < get_idx(a->it, rp, r + 1); j++) {
      size_t c = (size_t)get_idx(a->it, ci, (size_t)j), o = next[c]++;
      set_idx(a->it, tci, o, (int64_t)r);
      memcpy((char *)tv + o * vs, (const char *)v + (size_t)j * vs, vs);
    }
  }
  s = ocal__csr_create(a->ctx, a->vt, a->it, a->cols, a->rows, trp, tci, tv, func, t);
done:
  free(rp);
  free(ci);
  free(v);
  free(trp);
  free(tci);
  free(tv);
  free(next);
  return s;
}

ocal_status ocal__csr_transposed(ocal_csr a, const char *func, ocal_csr *t) {
  pthread_mutex_lock(&a->lock);
  ocal_status s = OCAL_OK;
  if (a->t == NULL) s = build_transpose(a, func, &a->t);
  *t = a->t;
  pthread_mutex_unlock(&a->lock);
  return s;
}
