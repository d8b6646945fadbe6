/* ocal — helpers shared by the elementwise operations. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ops_common.h"

/* The OpenCL C type a kernel computes in, and the option naming a half type's storage. */
static const char *compute_type(ocal_dtype t) {
  return ocal__dtype_is_half(t) ? "float" : ocal__dtype_cl_type(t);
}
static const char *storage_option(ocal_dtype t, char side) {
  if (t == OCAL_F16) return side == 'T' ? " -DT_HALF" : " -DR_HALF";
  if (t == OCAL_BF16) return side == 'T' ? " -DT_BF16" : " -DR_BF16";
  return "";
}

void ocal__ew_options(char *out, size_t size, ocal_dtype t, ocal_dtype r, const char *op,
                      int vec4, const char *extra) {
  char *at = out, *end = out + size;
  const char *parts[] = {"-DT=",
                         compute_type(t),
                         " -DR=",
                         compute_type(r),
                         " -DOP_",
                         op,
                         ocal__ew_is_real_float(t) ? " -DT_FLOAT" : "",
                         ocal__ew_is_real_float(r) ? " -DR_FLOAT" : "",
                         storage_option(t, 'T'),
                         storage_option(r, 'R'),
                         ocal__dtype_is_signed(t) ? " -DT_SIGNED" : "",
                         t == OCAL_F64 || r == OCAL_F64 ? " -DOCAL_NEED_FP64" : "",
                         vec4 ? " -DVEC4" : "",
                         extra && extra[0] ? " " : "",
                         extra ? extra : ""};
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) ocal__put(&at, end, parts[i]);
}

int ocal__ew_is_real_float(ocal_dtype t) { return ocal__dtype_is_float(t) || ocal__dtype_is_half(t); }

size_t ocal__ew_scalar_size(ocal_dtype t) {
  return ocal__dtype_is_half(t) ? sizeof(float) : ocal_dtype_size(t);
}

ocal_status ocal__ew_check(ocal_buffer buf, ocal_context ctx, const char *role, const char *func) {
  if (!buf) return ocal__fail(OCAL_INVALID_HANDLE, func, "buffer %s is NULL", role);
  /* By its role: a call takes up to four buffers, and "the buffer" would not say which. */
  ocal_status status = ocal__check_buffer_arg(buf, role, func);
  if (status != OCAL_OK) return status;
  if (ctx && buf->ctx != ctx)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func, "buffer %s belongs to another context", role);
  if (ocal__dtype_is_complex(buf->dtype))
    return ocal__fail(OCAL_UNSUPPORTED, func,
                      "buffer %s is %s: elementwise operations take real types only (f32, f64, "
                      "f16, bf16, i32, u32, i64, u64, u8)",
                      role, ocal_dtype_name(buf->dtype));
  return OCAL_OK;
}

ocal_status ocal__ew_check_alias(ocal_buffer in, ocal_buffer out, const char *func) {
  if (!ocal__buffers_overlap(in, out)) return OCAL_OK;
  /* The same elements exactly (element types of one size): in place, which is fine. */
  if (ocal_dtype_size(in->dtype) == ocal_dtype_size(out->dtype) && in->offset == out->offset &&
      in->numel == out->numel)
    return OCAL_OK;
  return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                    "the output overlaps an input in part (views of one buffer at different "
                    "offsets); write to the input itself or to separate memory");
}

ocal_status ocal__ew_scalar(double v, ocal_dtype t, unsigned char out[8], const char *func) {
  memset(out, 0, 8);
  /* Half types compute in f32, so their scalars are f32 values (not rounded to 16 bits
   * first, as PyTorch keeps a Python scalar in the operation's compute type). */
  if (t == OCAL_F32 || ocal__dtype_is_half(t)) {
    float f = (float)v;
    if (isinf(f) && isfinite(v)) /* a finite value would become inf without a word */
      return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                        "the scalar %.17g is beyond f32's range (magnitude at most %.9g), in "
                        "which %s is computed; pass a smaller value, or an infinity itself",
                        v, (double)FLT_MAX, ocal_dtype_name(t));
    memcpy(out, &f, sizeof f);
    return OCAL_OK;
  }
  if (t == OCAL_F64) {
    memcpy(out, &v, sizeof v);
    return OCAL_OK;
  }
  /* Integer types: the bounds are exact powers of two, so the comparisons are exact. */
  double lo = 0, hi = 0; /* the value must satisfy lo <= v < hi */
  switch (t) {
    case OCAL_I32: lo = -2147483648.0; hi = 2147483648.0; break;
    case OCAL_U32: hi = 4294967296.0; break;
    case OCAL_I64: lo = -9223372036854775808.0; hi = 9223372036854775808.0; break;
    case OCAL_U64: hi = 18446744073709551616.0; break;
    case OCAL_U8: hi = 256.0; break;
    default: return ocal__fail(OCAL_UNSUPPORTED, func, "no scalar of type %s", ocal_dtype_name(t));
  }
  if (!isfinite(v) || v != trunc(v) || v < lo || v >= hi)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "the scalar %.17g is not a whole number in the range of %s", v,
                      ocal_dtype_name(t));
  switch (t) {
    case OCAL_I32: { int32_t x = (int32_t)v; memcpy(out, &x, 4); break; }
    case OCAL_U32: { uint32_t x = (uint32_t)v; memcpy(out, &x, 4); break; }
    case OCAL_I64: { int64_t x = (int64_t)v; memcpy(out, &x, 8); break; }
    case OCAL_U64: { uint64_t x = (uint64_t)v; memcpy(out, &x, 8); break; }
    default: { uint8_t x = (uint8_t)v; memcpy(out, &x, 1); break; }
  }
  return OCAL_OK;
}

int ocal__ew_aligned4(const ocal_buffer *bufs, int count) {
  for (int i = 0; i < count; i++)
    if (bufs[i]->offset % 4 != 0) return 0;
  return 1;
}
