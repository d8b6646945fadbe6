/* ocal — the reduction engine's interface for generated reductions (src/gen): the one host
 * planner of src/ops/reduce.c, which ocal_sum and friends and ocal_gen_reduction all run,
 * and the kernels it launches (cl/reduce.cl, written once against an input and an operation
 * NAME; the built-in operations and a generated one are instances). Never installed. */
#ifndef OCAL_OPS_REDUCE_ENGINE_H
#define OCAL_OPS_REDUCE_ENGINE_H

#include "internal.h"

/* The kernels of cl/reduce.cl a plan launches; kernel NAME_<ocal__reduce_kernel_names[kind]>. */
enum {
  OCAL__RED_CONTIG,
  OCAL__RED_STRIDED,
  OCAL__RED_MERGE_STRIDED,
  OCAL__RED_MERGE_GROUP,
  OCAL__RED_STRIDED_V,
  OCAL__RED_KINDS
};
extern const char *const ocal__reduce_kernel_names[OCAL__RED_KINDS];
/* Added to OCAL__RED_CONTIG or OCAL__RED_STRIDED_V for a job with `hinted_kinds`: the kernel
 * built with cache hints on its vector loads (a separate build; src/ops/reduce.c says when). */
#define OCAL__RED_HINTED 8

/* Most kernel arguments that name a reduction's input (OCAL_RED_IN_PARAMS): a generated
 * reduction's `n` and two per user argument. */
#define OCAL__REDUCE_MAX_IN 160

/* Bytes of one partial state (the largest state type in cl/reduce.cl). */
#define OCAL__REDUCE_STATE_BYTES 32

/* One reduction: the (outer, R, inner) block reduced along R into out (outer * inner
 * results). */
typedef struct ocal__reduce_job {
  ocal_context ctx;
  const char *func; /* the public call, for messages */
  /* Kernel `kind` (OCAL__RED_*) of the job's program (built on first use). */
  ocal_status (*kernel)(void *data, int kind, ocal__kernel **k);
  void *data;
  const ocal__arg *in; /* the values OCAL_RED_IN_PARAMS names, in order */
  size_t nin;
  ocal_dtype dtype; /* the input's element type T (its vector width VW: 16 bytes) */
  /* Whether OCAL_RED_XV at a flat index that is a multiple of VW is an aligned load (the
   * built-ins: x's and y's offsets are multiples of VW; a generated input gathers, so any);
   * the plan then may read VW neighbouring columns per work-item (NAME_strided_v). */
  int columns_aligned;
  cl_mem out;
  cl_ulong ooff;  /* out's first element */
  cl_int kind;    /* out's element type (an enum ocal_dtype value), for NAME_final */
  cl_long ddof;   /* the variance's */
  cl_int mode;    /* NAME_final's: 1 divides by the count, 2 takes the square root */
  size_t outer, R, inner;
  /* The caller's scratch buffer for partial states, which the caller's lock guards across
   * the whole job. */
  cl_mem *scratch;
  size_t *scratch_bytes;
  /* The caller's look-back state (shared with its scans, under the same lock): where it is
   * given and the device has 64-bit atomics, a single-output reduction is one launch whose
   * last work-group merges the others' states (cl/reduce.cl); NULL keeps a second launch. */
  ocal__lookback *lb;
  /* Whether the kernel callback takes OCAL__RED_HINTED kinds (the built-ins; a generated
   * input reads through its own gathers). */
  int hinted_kinds;
} ocal__reduce_job;

/* Plans and enqueues the job: a work-group per row or a work-item per column, and a second
 * launch merging chunks where the first alone would not fill the device (src/ops/reduce.c
 * says when). The caller holds the lock that guards job->scratch. */
ocal_status ocal__reduce_enqueue(const ocal__reduce_job *job);

#endif /* OCAL_OPS_REDUCE_ENGINE_H */
