/* ocal — uniform and normal random numbers (kernels in cl/random.cl). */
#include <math.h>
#include <stdio.h>

#include "ops_common.h"

/* The value of a half type next to bits h, one step up (dir 1) or down (dir -1). */
static float half_step(ocal_dtype d, uint16_t h, int dir) {
  int negative = (h & 0x8000) != 0, zero = (h & 0x7fff) == 0;
  if (zero) h = dir > 0 ? 0x0001 : 0x8001; /* the smallest subnormal of that sign */
  else h = (uint16_t)(negative == (dir > 0) ? h - 1 : h + 1);
  return ocal__half_to_float(d, h);
}

static ocal_status random_fill(ocal_buffer out, uint64_t seed, uint64_t offset, double p0,
                               double p1, int normal, const char *func) {
  ocal_status status = ocal__ew_check(out, NULL, "out", func);
  if (status != OCAL_OK) return status;
  ocal_dtype d = out->dtype;
  if (!ocal__dtype_is_float(d) && !ocal__dtype_is_half(d))
    return ocal__fail(OCAL_TYPE_MISMATCH, func,
                      "random numbers are drawn into f32, f64, f16 or bf16 buffers, not %s; draw "
                      "floats and ocal_cast them",
                      ocal_dtype_name(d));
  /* Half types: the draws are clamped to [lo, hi], the format's values in [low, high), so
   * that rounding an f32 draw to 16 bits cannot leave the interval. */
  float lo = -INFINITY, hi = INFINITY;
  if (ocal__dtype_is_half(d) && !normal) {
    double low = p0, high = p0 + p1;
    uint16_t lb = ocal__half_from_float(d, (float)low), hb = ocal__half_from_float(d, (float)high);
    lo = ocal__half_to_float(d, lb);
    if ((double)lo < low) lo = half_step(d, lb, 1);
    hi = ocal__half_to_float(d, hb);
    if ((double)hi >= high) hi = half_step(d, hb, -1);
    if (!(lo <= hi))
      return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                        "no %s value lies in [%g, %g): widen the interval or draw into f32",
                        ocal_dtype_name(d), low, high);
  }
  if (out->numel == 0) return OCAL_OK;
  int f64 = d == OCAL_F64;
  char options[128];
  snprintf(options, sizeof options, "-DR=%s%s%s -DDIST_%s", f64 ? "double -DR_IS_DOUBLE" : "float",
           f64 ? " -DOCAL_NEED_FP64" : "",
           d == OCAL_F16 ? " -DR_HALF" : d == OCAL_BF16 ? " -DR_BF16" : "",
           normal ? "NORMAL" : "UNIFORM");
  ocal__kernel *k;
  if ((status = ocal__library_kernel_from(out->ctx, "random", options, "ocal_random", &k, NULL,
                                          func)) != OCAL_OK)
    return status;
  float f0 = (float)p0, f1 = (float)p1;
  cl_ulong yoff = out->offset, n = out->numel, off = offset, key = seed;
  const ocal__arg args[] = {OCAL__ARG(out->mem), OCAL__ARG(yoff), OCAL__ARG(n), OCAL__ARG(off),
                            OCAL__ARG(key), f64 ? OCAL__ARG(p0) : OCAL__ARG(f0),
                            f64 ? OCAL__ARG(p1) : OCAL__ARG(f1), OCAL__ARG(lo), OCAL__ARG(hi)};
  return ocal__kernel_run(out->ctx, k, out->numel, ocal__dtype_is_half(d) ? 9 : 7, args);
}

ocal_status ocal_random_uniform(uint64_t seed, uint64_t offset, double low, double high, ocal_buffer out) {
  if (!isfinite(low) || !isfinite(high) || !(low < high))
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "want finite low < high, got [%g, %g)", low, high);
  return random_fill(out, seed, offset, low, high - low, 0, __func__);
}

ocal_status ocal_random_normal(uint64_t seed, uint64_t offset, double mean, double stddev, ocal_buffer out) {
  if (!isfinite(mean) || !isfinite(stddev) || !(stddev > 0))
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "want a finite mean and stddev > 0, got %g and %g",
                     mean, stddev);
  return random_fill(out, seed, offset, mean, stddev, 1, __func__);
}
