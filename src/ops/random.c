/* ocal — uniform and normal random numbers (kernels in cl/random.cl). */
#include <float.h>
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

/* Uniform: p0 = low, p1 = high; normal: p0 = mean, p1 = stddev. */
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
  /* Bounds, mean and stddev are scalars of ocal/ops.h: a type computed in f32 refuses finite
   * values beyond f32's range (they would become infinities), as that header's other calls do. */
  if (d != OCAL_F64 && (isinf((float)p0) || isinf((float)p1)))
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "%s %.17g is beyond f32's range (magnitude at most %.9g), in which %s draws "
                      "are computed; pass values within it, or draw into f64",
                      isinf((float)p0) ? (normal ? "the mean" : "low")
                                       : (normal ? "stddev" : "high"),
                      isinf((float)p0) ? p0 : p1, (double)FLT_MAX, ocal_dtype_name(d));
  /* Uniform draws are clamped to [lo, hi], the type's values in [low, high): low + (high -
   * low) * u can round up to high (u = 1 - 2^-24 over [1, 2) in f32), and rounding to 16 bits
   * can reach high or fall below low. */
  int f64 = d == OCAL_F64;
  double lo = -INFINITY, hi = INFINITY;
  if (!normal) {
    double low = p0, high = p1;
    if (f64) {
      lo = low;
      hi = nextafter(high, -INFINITY);
    } else if (d == OCAL_F32) {
      lo = (float)low;
      if (lo < low) lo = nextafterf((float)lo, INFINITY);
      hi = (float)high;
      if (hi >= high) hi = nextafterf((float)hi, -INFINITY);
    } else {
      uint16_t lb = ocal__half_from_float(d, (float)low);
      uint16_t hb = ocal__half_from_float(d, (float)high);
      lo = ocal__half_to_float(d, lb);
      if (lo < low) lo = half_step(d, lb, 1);
      hi = ocal__half_to_float(d, hb);
      if (hi >= high) hi = half_step(d, hb, -1);
    }
    if (!(lo <= hi))
      return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                        "no %s value lies in [%.17g, %.17g): widen the interval%s",
                        ocal_dtype_name(d), low, high,
                        f64 ? "" : d == OCAL_F32 ? " or draw into f64" : " or draw into f32");
  }
  if (out->numel == 0) return OCAL_OK;
  /* A span high - low beyond the type's range (f32: [-3e38, 3e38)) would make every draw inf:
   * the kernel then adds half the span twice (-DHALF_SPAN). */
  double scale = normal ? p1 : p1 - p0;
  int half_span = !normal && (f64 ? isinf(scale) : isinf((float)scale));
  if (half_span) scale = p1 / 2 - p0 / 2;
  char options[160];
  snprintf(options, sizeof options, "-DR=%s%s%s -DDIST_%s%s",
           f64 ? "double -DR_IS_DOUBLE" : "float",
           f64 ? " -DOCAL_NEED_FP64" : "",
           d == OCAL_F16 ? " -DR_HALF" : d == OCAL_BF16 ? " -DR_BF16" : "",
           normal ? "NORMAL" : "UNIFORM", half_span ? " -DHALF_SPAN" : "");
  ocal__kernel *k;
  if ((status = ocal__library_kernel_from(out->ctx, "random", options, "ocal_random", &k, NULL,
                                          func)) != OCAL_OK)
    return status;
  float f0 = (float)p0, f1 = (float)scale, flo = (float)lo, fhi = (float)hi;
  cl_ulong yoff = out->offset, n = out->numel, off = offset, key = seed;
  const ocal__arg args[] = {OCAL__ARG(out->mem), OCAL__ARG(yoff), OCAL__ARG(n), OCAL__ARG(off),
                            OCAL__ARG(key), f64 ? OCAL__ARG(p0) : OCAL__ARG(f0),
                            f64 ? OCAL__ARG(scale) : OCAL__ARG(f1),
                            f64 ? OCAL__ARG(lo) : OCAL__ARG(flo),
                            f64 ? OCAL__ARG(hi) : OCAL__ARG(fhi)};
  return ocal__kernel_run(out->ctx, k, out->numel, ocal__dtype_is_half(d) || !normal ? 9 : 7,
                          args, func);
}

ocal_status ocal_random_uniform(uint64_t seed, uint64_t offset, double low, double high, ocal_buffer out) {
  if (!isfinite(low) || !isfinite(high) || !(low < high))
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "want finite low < high, got [%g, %g)", low, high);
  return random_fill(out, seed, offset, low, high, 0, __func__);
}

ocal_status ocal_random_normal(uint64_t seed, uint64_t offset, double mean, double stddev, ocal_buffer out) {
  if (!isfinite(mean) || !isfinite(stddev) || !(stddev > 0))
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "want a finite mean and stddev > 0, got %g and %g",
                     mean, stddev);
  return random_fill(out, seed, offset, mean, stddev, 1, __func__);
}
