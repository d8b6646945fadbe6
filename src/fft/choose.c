/* ocal — the default engine's choice between ocal's four-step kernels and VkFFT, measured.
 *
 * Where the device rule offers a shape to the four-step kernels (fourstep.c), which of them
 * and VkFFT is faster depends on more than OpenCL's device properties say: on an H100 the
 * four-step kernels' two passes beat VkFFT's three at 2^24 x 8, on an H200 VkFFT wins by 10 %
 * (docs/measurements.md#fft-measured-choice). So the plan builds both, times each on scratch
 * buffers of the plan's size (one transform to warm up, then the best of three rounds of two),
 * keeps the faster and releases the other. The times are wall-clock on the context's queue,
 * so work that other threads queue there meanwhile counts against whichever engine it meets.
 *
 * The answer goes to the disk cache beside the kernels, keyed like them (platform, device,
 * driver, ocal version, the four-step kernels' source), by the problem and by the tuning
 * fields of VkFFT's configuration (ocal's rule, then OCAL_VKFFT_TUNE), so that a later
 * context or process builds the faster engine's plan only. A record that is not exactly what
 * this file writes counts as no answer. Where the scratch buffers cannot be had (or would take
 * more than a quarter of the device's memory), or VkFFT cannot take the plan, the four-step
 * plan is kept and nothing is stored. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

#define CHOICE_FORMAT "ocal fft engine choice 1\nengine=%s\n"

static char *choice_key(const ocal__fft_problem *p) {
  const char *src = NULL;
  for (size_t i = 0; i < ocal__source_count; i++)
    if (strcmp(ocal__sources[i].name, "fft_fourstep") == 0) src = ocal__sources[i].text;
  if (!src) return NULL;
  char what[1024], vk[384] = "";
#ifdef OCAL_HAVE_VKFFT
  ocal__vkfft_tune_key(p, vk, sizeof vk); /* a change of VkFFT's configuration measures again */
#endif
  snprintf(what, sizeof what, "fft engine choice: %s; vkfft: %s", p->text, vk);
  return ocal__disk_cache_key(p->ctx, src, what);
}

int ocal__fft_choice_load(const ocal__fft_problem *p) {
  const char *dir = ocal__context_cache_dir(p->ctx);
  char *key = dir ? choice_key(p) : NULL;
  if (!key) return -1;
  unsigned char *bin = NULL;
  size_t size = 0;
  int rejected = 0, got = ocal__disk_cache_load(dir, key, &bin, &size, &rejected);
  free(key);
  int answer = -1;
  for (int four = 0; got && four < 2 && answer < 0; four++) {
    char text[64];
    int n = snprintf(text, sizeof text, CHOICE_FORMAT, four ? "fourstep" : "vkfft");
    if ((size_t)n == size && memcmp(bin, text, size) == 0) answer = four;
  }
  free(bin);
  return answer;
}

void ocal__fft_choice_store(const ocal__fft_problem *p, int fourstep) {
  const char *dir = ocal__context_cache_dir(p->ctx);
  char *key = dir ? choice_key(p) : NULL;
  if (!key) return;
  char text[64];
  int n = snprintf(text, sizeof text, CHOICE_FORMAT, fourstep ? "fourstep" : "vkfft");
  ocal__disk_cache_store(dir, key, (const unsigned char *)text, (size_t)n);
  free(key);
}

#ifdef OCAL_HAVE_VKFFT
static ocal_status finish(const ocal__fft_problem *p) {
  cl_int err = clFinish(ocal__context_queue(p->ctx));
  return err == CL_SUCCESS ? OCAL_OK
                           : ocal__cl_fail(ocal__context_info(p->ctx)->name, err, "clFinish",
                                           "ocal_fft_plan_create");
}

/* *best: the seconds a transform of engine e's plan takes, the best of three rounds of two
 * after one to warm up. */
static ocal_status time_plan(const ocal__fft_problem *p, const ocal__fft_engine *e, void *state,
                             cl_mem in, cl_mem out, double *best) {
  ocal_status s = e->execute(state, OCAL_FFT_FORWARD, in, 0, out, 0, "ocal_fft_plan_create");
  if (s == OCAL_OK) s = finish(p);
  *best = INFINITY;
  for (int round = 0; round < 3 && s == OCAL_OK; round++) {
    double t0 = ocal__seconds_now();
    for (int i = 0; i < 2 && s == OCAL_OK; i++)
      s = e->execute(state, OCAL_FFT_FORWARD, in, 0, out, 0, "ocal_fft_plan_create");
    if (s == OCAL_OK) s = finish(p);
    double t = (ocal__seconds_now() - t0) / 2;
    if (t < *best) *best = t;
  }
  return s;
}

/* Scratch input and output (zeros) of the plan's size, out == in for an in-place plan; 0 when
 * the device has not the memory (or a call fails): nothing is then measured. */
static int scratch(const ocal__fft_problem *p, cl_mem *in, cl_mem *out) {
  size_t bytes = ocal__fft_problem_n(p) * p->batch * (p->dbl ? 16u : 8u);
  /* Not more than a quarter of the device's memory, so that the measurement never takes what
   * the program's own buffers need. */
  *in = *out = NULL;
  if ((uint64_t)bytes * (p->in_place ? 1 : 2) > ocal__context_info(p->ctx)->global_mem_bytes / 4)
    return 0;
  cl_context cl = ocal__context_cl(p->ctx);
  cl_int err;
  *in = clCreateBuffer(cl, CL_MEM_READ_WRITE, bytes, NULL, &err);
  if (err != CL_SUCCESS) return *in = NULL, *out = NULL, 0;
  *out = *in;
  if (!p->in_place) {
    *out = clCreateBuffer(cl, CL_MEM_READ_WRITE, bytes, NULL, &err);
    if (err != CL_SUCCESS) {
      clReleaseMemObject(*in);
      return *in = NULL, *out = NULL, 0;
    }
  }
  /* Both filled, so that a driver which allocates on first use says now, not in a transform,
   * when it has not the memory. */
  cl_command_queue q = ocal__context_queue(p->ctx);
  const cl_uint zero = 0;
  if (clEnqueueFillBuffer(q, *in, &zero, sizeof zero, 0, bytes, 0, NULL, NULL) == CL_SUCCESS &&
      (*out == *in ||
       clEnqueueFillBuffer(q, *out, &zero, sizeof zero, 0, bytes, 0, NULL, NULL) == CL_SUCCESS) &&
      clFinish(q) == CL_SUCCESS)
    return 1;
  if (*out != *in) clReleaseMemObject(*out);
  clReleaseMemObject(*in);
  return *in = NULL, *out = NULL, 0;
}
#endif

ocal_status ocal__fft_choose(const ocal__fft_problem *p, const ocal__fft_engine **engine,
                             ocal_fft_engine *id, ocal__fft_built *built) {
  *engine = &ocal__fft_fourstep;
  *id = OCAL_FFT_ENGINE_FOURSTEP;
#ifndef OCAL_HAVE_VKFFT
  return ocal__fft_fourstep.plan_create(p, built);
#else
  int answer = ocal__fft_choice_load(p);
  if (answer == 0) {
    *engine = &ocal__fft_vkfft;
    *id = OCAL_FFT_ENGINE_VKFFT;
  }
  if (answer >= 0) return (*engine)->plan_create(p, built);

  ocal__fft_built four = {0}, vk = {0};
  ocal_status s = ocal__fft_fourstep.plan_create(p, &four);
  if (s != OCAL_OK) return s;
  cl_mem in, out;
  if (ocal__fft_vkfft.plan_create(p, &vk) != OCAL_OK || !scratch(p, &in, &out)) {
    if (vk.state) ocal__fft_vkfft.plan_destroy(vk.state);
    *built = four;
    return OCAL_OK;
  }
  double t_four, t_vk;
  s = time_plan(p, &ocal__fft_fourstep, four.state, in, out, &t_four);
  if (s == OCAL_OK) s = time_plan(p, &ocal__fft_vkfft, vk.state, in, out, &t_vk);
  if (out != in) clReleaseMemObject(out);
  clReleaseMemObject(in);
  if (s != OCAL_OK) {
    ocal__fft_fourstep.plan_destroy(four.state);
    ocal__fft_vkfft.plan_destroy(vk.state);
    return s;
  }
  int keep_four = t_four <= t_vk;
  if (keep_four) {
    ocal__fft_vkfft.plan_destroy(vk.state);
    *built = four;
  } else {
    ocal__fft_fourstep.plan_destroy(four.state);
    *built = vk;
    *engine = &ocal__fft_vkfft;
    *id = OCAL_FFT_ENGINE_VKFFT;
  }
  ocal__fft_choice_store(p, keep_four);
  return OCAL_OK;
#endif
}
