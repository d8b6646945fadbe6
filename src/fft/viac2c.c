/* ocal — R2C and C2R plans built from a C2C plan of the same lengths.
 *
 * VkFFT on CPU devices is capped at 256 work-items per group (larger groups
 * overflow the stacks of PoCL's threads), and with that cap it refuses the real transforms of
 * long odd lengths (R2C/C2R f64 of 20001, 32769, 65535, 65537; f32 above 4095), which clFFT
 * does not take either (they have prime factors above 13). Its C2C plans of those lengths
 * work (Bluestein). So, when no engine takes a real plan, plan.c builds it here on one of
 * the engines' C2C plans, in place on a complex scratch buffer of the plan:
 *   R2C: widen the real input to complex, C2C forward, copy out the first n/2+1 bins of
 *        each row;
 *   C2R: rebuild the full spectrum of each row from its n/2+1 bins (conjugate symmetry),
 *        C2C backward, keep the real parts.
 * This costs about twice the time and memory of a real transform; it is a fallback, used only
 * where the engines refuse the plan. The normalisation is the inner plan's: it is asked for
 * the real plan's scales, and what it applies is reported up, so plan.c scales the rest as
 * for any plan. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

typedef struct via_plan {
  const ocal__fft_engine *inner; /* the engine of the C2C plan */
  ocal__fft_problem q;           /* the C2C problem (the inner plan keeps a pointer to it) */
  char text[320];                /* q.text */
  ocal__fft_built built;         /* the inner plan */
  ocal_context ctx;
  ocal_fft_kind kind;
  size_t rsize;                  /* bytes per real */
  size_t n, h, n0, n1, rows;     /* contiguous length, bins kept, outer lengths, rows */
  cl_mem z;                      /* rows x n complex numbers */
  ocal__kernel *before, *after;
} via_plan;

static void via_destroy(void *state) {
  via_plan *v = state;
  if (!v) return;
  if (v->built.state) v->inner->plan_destroy(v->built.state);
  if (v->z) ocal__device_free(v->ctx, v->z);
  free(v);
}

static ocal_status via_create(const ocal__fft_engine *inner, const ocal__fft_problem *p,
                              ocal__fft_built *out) {
  if (p->kind == OCAL_FFT_C2C)
    return ocal__fail(OCAL_INTERNAL, "ocal_fft_plan_create",
                      "a C2C plan (%s) does not go through a C2C plan", p->text);
  via_plan *v = calloc(1, sizeof *v);
  if (!v)
    return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, "ocal_fft_plan_create",
                      "no memory for an FFT plan (%s)", p->text);
  v->inner = inner;
  v->ctx = p->ctx;
  v->kind = p->kind;
  v->rsize = p->dbl ? 8 : 4;
  v->n = p->lengths[p->ndim - 1];
  v->h = v->n / 2 + 1;
  v->n0 = p->ndim == 3 ? p->lengths[0] : 1;
  v->n1 = p->ndim >= 2 ? p->lengths[p->ndim - 2] : 1;
  v->rows = p->batch * v->n0 * v->n1; /* plan.c checked that the sizes do not overflow */

  v->q = *p;
  v->q.kind = OCAL_FFT_C2C;
  v->q.in_place = 1;
  /* A C2C axis of length 1 transforms nothing (a real plan keeps its last one, the halved
   * axis, even at length 1): the engine does not see it. */
  v->q.ndim = 0;
  for (int i = 0; i < p->ndim; i++)
    if (p->lengths[i] != 1) v->q.lengths[v->q.ndim++] = p->lengths[i];
  if (v->q.ndim == 0) v->q.lengths[v->q.ndim++] = 1;
  for (int i = v->q.ndim; i < 3; i++) v->q.lengths[i] = 0;
  snprintf(v->text, sizeof v->text, "c2c%s (for %s)", p->text + 3, p->text);
  v->q.text = v->text;

  char options[128];
  ocal__dtype_options(p->dbl ? OCAL_F64 : OCAL_F32, options, sizeof options);
  int r2c = p->kind == OCAL_FFT_R2C;
  ocal_status s = ocal__library_kernel_from(p->ctx, "fft_via_c2c", options,
                                            r2c ? "ocal_fft_r2c_widen" : "ocal_fft_c2r_expand",
                                            &v->before, NULL, "ocal_fft_plan_create");
  if (s == OCAL_OK)
    s = ocal__library_kernel_from(p->ctx, "fft_via_c2c", options,
                                  r2c ? "ocal_fft_r2c_pick" : "ocal_fft_c2r_real", &v->after, NULL,
                                  "ocal_fft_plan_create");
  if (s == OCAL_OK) s = ocal__device_alloc(p->ctx, v->rows * v->n * 2 * v->rsize, &v->z,
                                               "ocal_fft_plan_create");
  if (s == OCAL_OK) s = inner->plan_create(&v->q, &v->built);
  if (s != OCAL_OK) {
    v->built.state = NULL; /* a failed plan_create leaves nothing to destroy */
    via_destroy(v);
    return s;
  }
  out->state = v;
  out->applied[0] = v->built.applied[0];
  out->applied[1] = v->built.applied[1];
  out->from_disk_cache = v->built.from_disk_cache;
  out->stored_to_disk = v->built.stored_to_disk;
  return OCAL_OK;
}

/* One launch of k over n items with its arguments: mems[i] goes to argument mem_at[i], the
 * cl_ulongs to the other argument indices in order. */
static ocal_status launch(via_plan *v, ocal__kernel *k, size_t n, const cl_mem mems[2],
                          const int mem_at[2], int nargs, const cl_ulong *ulongs,
                          const char *func) {
  pthread_mutex_lock(&k->lock);
  cl_int err = CL_SUCCESS;
  for (int i = 0, m = 0, u = 0; i < nargs && err == CL_SUCCESS; i++) {
    if (m < 2 && i == mem_at[m])
      err = clSetKernelArg(k->kernel, (cl_uint)i, sizeof(cl_mem), &mems[m++]);
    else
      err = clSetKernelArg(k->kernel, (cl_uint)i, sizeof(cl_ulong), &ulongs[u++]);
  }
  ocal_status s = err == CL_SUCCESS ? ocal__launch_1d(v->ctx, k, n, func)
                                    : ocal__cl_fail(ocal__context_info(v->ctx)->name, err,
                                                    "clSetKernelArg", func);
  pthread_mutex_unlock(&k->lock);
  return s;
}

static ocal_status via_execute(void *state, int direction, cl_mem in, size_t in_offset,
                               cl_mem out, size_t out_offset, const char *func) {
  via_plan *v = state;
  const cl_ulong in_off = in_offset / v->rsize, out_off = out_offset / v->rsize;
  const cl_ulong total = (cl_ulong)v->rows * v->n;
  const cl_mem before[2] = {in, v->z}, after[2] = {v->z, out};
  ocal_status s;
  if (v->kind == OCAL_FFT_R2C) {
    /* ocal_fft_r2c_widen(x, x_off, z, count) */
    const cl_ulong a[2] = {in_off, total};
    s = launch(v, v->before, (size_t)total, before, (const int[2]){0, 2}, 4, a, func);
  } else {
    /* ocal_fft_c2r_expand(x, x_off, z, n0, n1, n, h, count) */
    const cl_ulong a[6] = {in_off, v->n0, v->n1, v->n, v->h, total};
    s = launch(v, v->before, (size_t)total, before, (const int[2]){0, 2}, 8, a, func);
  }
  if (s == OCAL_OK) s = v->inner->execute(v->built.state, direction, v->z, 0, v->z, 0, func);
  if (s != OCAL_OK) return s;
  if (v->kind == OCAL_FFT_R2C) {
    /* ocal_fft_r2c_pick(z, y, y_off, n, h, rows) */
    const cl_ulong a[4] = {out_off, v->n, v->h, v->rows};
    return launch(v, v->after, v->rows * v->h, after, (const int[2]){0, 1}, 6, a, func);
  }
  /* ocal_fft_c2r_real(z, y, y_off, count) */
  const cl_ulong a[2] = {out_off, total};
  return launch(v, v->after, (size_t)total, after, (const int[2]){0, 1}, 4, a, func);
}

#ifdef OCAL_HAVE_VKFFT
static ocal_status via_vkfft_create(const ocal__fft_problem *p, ocal__fft_built *out) {
  return via_create(&ocal__fft_vkfft, p, out);
}
static const ocal__fft_engine via_vkfft = {"vkfft (via c2c)", 1, via_vkfft_create, via_execute,
                                           via_destroy};
#endif
#ifdef OCAL_HAVE_CLFFT
static ocal_status via_clfft_create(const ocal__fft_problem *p, ocal__fft_built *out) {
  return via_create(&ocal__fft_clfft, p, out);
}
static const ocal__fft_engine via_clfft = {"clfft (via c2c)", 1, via_clfft_create, via_execute,
                                           via_destroy};
#endif

const ocal__fft_engine *ocal__fft_via_c2c(ocal_fft_engine inner) {
  switch (inner) {
#ifdef OCAL_HAVE_VKFFT
    case OCAL_FFT_ENGINE_VKFFT:
      return &via_vkfft;
#endif
#ifdef OCAL_HAVE_CLFFT
    case OCAL_FFT_ENGINE_CLFFT:
      return &via_clfft;
#endif
    default:
      return NULL;
  }
}
