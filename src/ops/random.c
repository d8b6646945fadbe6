/* ocal — uniform and normal random numbers (kernels in cl/random.cl). */
#include <math.h>
#include <stdio.h>

#include "ops_common.h"

static ocal_status random_fill(ocal_buffer out, uint64_t seed, uint64_t offset, double p0,
                               double p1, int normal, const char *func) {
  ocal_status status = ocal__ew_check(out, NULL, "out", func);
  if (status != OCAL_OK) return status;
  if (!ocal__dtype_is_float(out->dtype))
    return ocal__fail(OCAL_TYPE_MISMATCH, func,
                      "random numbers are drawn into f32 or f64 buffers, not %s; draw floats and "
                      "ocal_cast them",
                      ocal_dtype_name(out->dtype));
  if (out->numel == 0) return OCAL_OK;
  int f64 = out->dtype == OCAL_F64;
  char options[128];
  snprintf(options, sizeof options, "-DR=%s%s -DDIST_%s", f64 ? "double -DR_IS_DOUBLE" : "float",
           f64 ? " -DOCAL_NEED_FP64" : "", normal ? "NORMAL" : "UNIFORM");
  ocal__kernel *k;
  if ((status = ocal__library_kernel_from(out->ctx, "random", options, "ocal_random", &k, NULL,
                                          func)) != OCAL_OK)
    return status;
  float f0 = (float)p0, f1 = (float)p1;
  cl_ulong yoff = out->offset, n = out->numel, off = offset, key = seed;
  const ocal__arg args[] = {OCAL__ARG(out->mem), OCAL__ARG(yoff), OCAL__ARG(n), OCAL__ARG(off),
                            OCAL__ARG(key), f64 ? OCAL__ARG(p0) : OCAL__ARG(f0),
                            f64 ? OCAL__ARG(p1) : OCAL__ARG(f1)};
  return ocal__kernel_run(out->ctx, k, out->numel, 7, args);
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
