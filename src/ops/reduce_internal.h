/* ocal — what the reductions (reduce.c) and scans (scan.c) share: per-context state (the
 * kernel table and a scratch buffer for partial results), the (outer, R, inner) view of an
 * axis, argument checks and launches. Never installed. */
#ifndef OCAL_OPS_REDUCE_INTERNAL_H
#define OCAL_OPS_REDUCE_INTERNAL_H

#include "internal.h"
#include "ocal.h" /* an area may call any area's public API; the core sees only its own */

/* The two embedded programs, built once per input element type. */
enum { OCAL__RS_REDUCE, OCAL__RS_SCAN, OCAL__RS_PROGRAMS };
#define OCAL__RS_MAX_KERNELS 128
/* Table slots from here on hold the reductions' kernels built with cache hints. */
#define OCAL__RS_HINTED_SLOTS 64

/* Work-group size the kernels' local arrays are sized for (OCAL_WG_MAX in the .cl files). */
#define OCAL__RS_WG_MAX 256

/* Per-context state. `lock` is held across everything one operation enqueues: the scratch
 * buffer holds that operation's partial results until its last launch has read them. */
typedef struct ocal__rs {
  ocal_context ctx; /* the owner (no reference: the state dies with it) */
  pthread_mutex_t lock;
  cl_mem scratch;
  size_t scratch_bytes;
  ocal__lookback lb; /* the single-pass scan's tile states (cl/scan.cl, NAME_lookback) */
  int plain_loads;   /* the automatic cache hint failed to build here: plain loads */
  ocal__kernel *kernels[OCAL__RS_PROGRAMS][OCAL_DTYPE_COUNT][OCAL__RS_MAX_KERNELS];
} ocal__rs;

/* The context's state, created on first use; a failure names `func`, the public call. */
ocal_status ocal__rs_get(ocal_context ctx, ocal__rs **rs, const char *func);

/* With rs->lock held: kernel `name` (table slot `id`) of program `program` for `dtype`. */
ocal_status ocal__rs_kernel(ocal_context ctx, ocal__rs *rs, int program, ocal_dtype dtype,
                            int id, const char *name, ocal__kernel **k);
/* The same; `hinted` asks for the reduction's contig or strided_v kernel with cache hints on
 * its vector loads, where the device takes them (plain loads elsewhere). */
ocal_status ocal__rs_kernel_hinted(ocal_context ctx, ocal__rs *rs, int program, ocal_dtype dtype,
                                   int id, const char *name, int hinted, ocal__kernel **k);

/* The axis as a row-major (outer, R, inner) block; axis_all when OCAL_AXIS_ALL. */
typedef struct ocal__rs_geom {
  int axis_all;
  int axis; /* normalised (0 .. ndim-1) unless axis_all */
  size_t outer, R, inner;
} ocal__rs_geom;

ocal_status ocal__rs_geometry(const char *func, ocal_buffer x, int axis, ocal__rs_geom *g);

/* Checks that x and other are valid buffers of one context, x of a supported element type
 * (no complex). Pass other = x to check x alone. */
ocal_status ocal__rs_check_buffers(const char *func, ocal_buffer x, ocal_buffer other);

/* The largest power of two <= want, <= OCAL__RS_WG_MAX and <= what the kernel allows. */
size_t ocal__rs_local(const ocal__kernel *k, size_t want);

/* Work-items that fill the device: 2048 per compute unit (an H100 SM keeps 2048 threads in
 * flight; on a CPU a work-group is a loop, so the number only sets how work is split). */
size_t ocal__rs_target_items(ocal_context ctx);

/* The reductions' launch shape as OCAL_REDUCE_TUNE sets it, 0 where it leaves the rule's:
 * contig work-group size, its groups per compute unit for long rows, vectors in flight
 * per work-item (cl/reduce.cl's OCAL_RED_UNROLL), one pass (1, and 0: the rule's) or a second
 * launch (2, from onepass=0) for single-output reductions; the strided kernels' fraction of
 * the device's work-items (cdiv: a half is 2), their work-group size, and rows in flight per
 * work-item of strided_v (OCAL_RED_ROWS); loading a step ahead (OCAL_RED_PIPE) in contig and strided_v
 * (pipe 1), in neither (2, from pipe=0), or by default in strided_v alone (0); the cache hint
 * of their vector loads (ld, cl/reduce.cl's OCAL_RED_LDH, 0: the rule's). */
/* The cache hint of the contig and strided_v kernels' vector loads where the driver reports a
 * PTX compute capability (cl/reduce.cl's OCAL_RED_LDH; 1: plain loads), for inputs of at
 * least OCAL__RED_HINT_MIN bytes: 8, .L1::no_allocate (rows are read once). With the L2
 * prefetch hint (.L2::256B) as well, an H200 read 6-9% slower; without any hint, its column
 * sums 2% slower (docs/reduce.md). A hinted load made 16 MiB (in an H100's 50 MB L2 between
 * calls) 6-33% slower. */
#define OCAL__RED_LDH_AUTO 8
#define OCAL__RED_HINT_MIN ((size_t)64 << 20)

typedef struct ocal__reduce_tune {
  long wg, gpc, unroll, onepass, cdiv, cwg, rows, pipe, ld;
} ocal__reduce_tune;

/* Reads the context's OCAL_REDUCE_TUNE; a value out of range fails naming `func`. */
ocal_status ocal__reduce_tune_read(ocal_context ctx, const char *func, ocal__reduce_tune *t);

/* Whether a dtype is an integer type, and a signed one. */
/* Floating-point inputs, whose sums, means and norms keep their type: f16 and bf16 too
 * (computed and accumulated in f32, stored rounded to nearest even). */
static inline int ocal__rs_is_float(ocal_dtype d) {
  return d == OCAL_F32 || d == OCAL_F64 || d == OCAL_F16 || d == OCAL_BF16;
}
static inline int ocal__rs_is_signed(ocal_dtype d) { return d == OCAL_I32 || d == OCAL_I64; }

#endif /* OCAL_OPS_REDUCE_INTERNAL_H */
