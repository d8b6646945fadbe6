/* ocal — the scan engine's interface for generated scans (src/gen): the one host planner of
 * src/ops/scan.c, which ocal_cumsum and ocal_gen_scan both run, and the kernels it launches
 * (cl/scan.cl, written once against an operation NAME and an input; the built-in operations
 * and a generated one are instances). Never installed. */
#ifndef OCAL_OPS_SCAN_ENGINE_H
#define OCAL_OPS_SCAN_ENGINE_H

#include "internal.h"

/* The kernels of cl/scan.cl a plan launches; kernel NAME_<ocal__scan_kernel_names[kind]>. */
enum {
  OCAL__SCAN_CONTIG_REDUCE,
  OCAL__SCAN_TILES,
  OCAL__SCAN_TILES_ACC,
  OCAL__SCAN_STRIDED_REDUCE,
  OCAL__SCAN_STRIDED,
  OCAL__SCAN_STRIDED_ACC,
  OCAL__SCAN_LOOKBACK,
  OCAL__SCAN_KINDS
};
extern const char *const ocal__scan_kernel_names[OCAL__SCAN_KINDS];

/* Most kernel arguments that name a scan's input (OCAL_IN_PARAMS): a generated scan's `n` and
 * two per user argument. */
#define OCAL__SCAN_MAX_IN 160

/* One scan: the (outer, R, inner) block scanned along R into out (the same shape). */
typedef struct ocal__scan_job {
  ocal_context ctx;
  const char *func; /* the public call, for messages */
  /* Kernel `kind` of the job's program (built on first use). */
  ocal_status (*kernel)(void *data, int kind, ocal__kernel **k);
  void *data;
  const ocal__arg *in; /* the values OCAL_IN_PARAMS names, in order */
  size_t nin;
  cl_mem out;
  cl_ulong ooff;       /* out's first element */
  size_t result_bytes; /* bytes of one result (NAME_A) */
  size_t outer, R, inner;
  int exclusive;
  /* The caller's single-pass tile states and scratch buffer, which the caller's lock guards
   * across the whole job. */
  ocal__lookback *lb;
  cl_mem *scratch;
  size_t *scratch_bytes;
} ocal__scan_job;

/* Plans and enqueues the job: one pass with decoupled look-back, three passes over pieces
 * of rows, or a work-item per column (src/ops/scan.c says when). The caller holds the lock
 * that guards job->lb and job->scratch. */
ocal_status ocal__scan_enqueue(const ocal__scan_job *job);

/* Whether the device's local memory holds the wide look-back tile (OCAL_LB_WIDE in
 * cl/scan.cl: 32 elements a work-item for results of 4 bytes or less, where 24 fit the 32 KB
 * every device has). */
int ocal__scan_lookback_wide(ocal_context ctx);

/* Elements per work-item of a look-back tile for results of `result_bytes` bytes on ctx's
 * device (NAME_LB_IPT in cl/scan.cl). */
size_t ocal__scan_lookback_ipt(ocal_context ctx, size_t result_bytes);

#endif /* OCAL_OPS_SCAN_ENGINE_H */
