/* ocal — transforms of length 1 (every length 1): a length-1 DFT is its input, so C2C is a
 * copy, R2C widens each real to a complex number and C2R keeps each real part. The
 * normalisation of N = 1 is 1 for every norm, so nothing is scaled. No engine is asked: VkFFT
 * has no radix for 1 and clFFT's bake can end the process when the driver fails under it. */
#include "config.h"

#include <stdlib.h>

#include "engine.h"

typedef struct unit_plan {
  ocal_context ctx;
  ocal_fft_kind kind;
  size_t count;    /* transforms (the batch) */
  size_t rsize;    /* bytes per real */
  ocal__kernel *k; /* widen (R2C) or real parts (C2R) */
} unit_plan;

static void unit_destroy(void *state) { free(state); }

static ocal_status unit_create(const ocal__fft_problem *p, ocal__fft_built *out) {
  unit_plan *u = calloc(1, sizeof *u);
  if (!u)
    return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, "ocal_fft_plan_create",
                      "no memory for an FFT plan (%s)", p->text);
  u->ctx = p->ctx;
  u->kind = p->kind;
  u->count = p->batch;
  u->rsize = p->dbl ? 8 : 4;
  ocal_status s = OCAL_OK;
  if (p->kind != OCAL_FFT_C2C) {
    char options[128];
    ocal__dtype_options(p->dbl ? OCAL_F64 : OCAL_F32, options, sizeof options);
    s = ocal__library_kernel_from(p->ctx, "fft_via_c2c", options,
                                  p->kind == OCAL_FFT_R2C ? "ocal_fft_r2c_widen"
                                                          : "ocal_fft_c2r_real",
                                  &u->k, NULL, "ocal_fft_plan_create");
  }
  if (s != OCAL_OK) {
    free(u);
    return s;
  }
  out->state = u;
  out->applied[0] = out->applied[1] = 1.0;
  return OCAL_OK;
}

/* plan.c passes offsets of 0 (takes_offsets is 0) and, for C2R, a copy of the input. */
static ocal_status unit_execute(void *state, int direction, cl_mem in, size_t in_offset,
                                cl_mem out, size_t out_offset, const char *func) {
  unit_plan *u = state;
  (void)direction, (void)in_offset, (void)out_offset;
  if (u->kind == OCAL_FFT_C2C) {
    if (in == out) return OCAL_OK;
    cl_int err = clEnqueueCopyBuffer(ocal__context_queue(u->ctx), in, out, 0, 0,
                                     u->count * 2 * u->rsize, 0, NULL, NULL);
    return err == CL_SUCCESS ? OCAL_OK
                             : ocal__cl_fail(ocal__context_info(u->ctx)->name, err,
                                             "clEnqueueCopyBuffer", func);
  }
  /* ocal_fft_r2c_widen(x, x_off, z, count) and ocal_fft_c2r_real(z, y, y_off, count) */
  cl_ulong zero = 0, count = u->count;
  ocal__arg args[4] = {OCAL__ARG(in), OCAL__ARG(zero), OCAL__ARG(out), OCAL__ARG(count)};
  if (u->kind == OCAL_FFT_C2R) {
    args[1] = OCAL__ARG(out);
    args[2] = OCAL__ARG(zero);
  }
  return ocal__kernel_run(u->ctx, u->k, u->count, 4, args, func);
}

const ocal__fft_engine ocal__fft_unit = {"ocal (length 1)", 0, unit_create, unit_execute,
                                         unit_destroy};
