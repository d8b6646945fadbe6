/* ocal — element types: sizes and names from the one OCAL_DTYPE_MAP table. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

static const struct {
  const char *name;
  const char *cl_type;
  size_t size;
} dtypes[OCAL_DTYPE_COUNT] = {
#define OCAL__DTYPE_ROW(name, lname, cltype, size) {lname, cltype, size},
    OCAL_DTYPE_MAP(OCAL__DTYPE_ROW)
#undef OCAL__DTYPE_ROW
};

static int valid(ocal_dtype dtype) { return (unsigned)dtype < (unsigned)OCAL_DTYPE_COUNT; }

size_t ocal_dtype_size(ocal_dtype dtype) { return valid(dtype) ? dtypes[dtype].size : 0; }

const char *ocal_dtype_name(ocal_dtype dtype) {
  return valid(dtype) ? dtypes[dtype].name : "invalid";
}

ocal_status ocal_dtype_from_name(const char *name, ocal_dtype *dtype) {
  if (!name || !dtype) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "name and dtype must not be NULL");
  for (int i = 0; i < OCAL_DTYPE_COUNT; i++) {
    if (strcasecmp(name, dtypes[i].name) == 0) {
      *dtype = (ocal_dtype)i;
      return OCAL_OK;
    }
  }
  return OCAL_FAIL(OCAL_INVALID_ARGUMENT,
                   "unknown element type '%s' (use f32, f64, i32, u32, i64, u64, u8, c32, c64, f16 or "
                   "bf16)",
                   name);
}

void ocal__dtype_options(ocal_dtype dtype, char *out, size_t size) {
  int fp64 = dtype == OCAL_F64 || dtype == OCAL_C64;
  /* Half types travel as their 16-bit storage: `half` itself needs cl_khr_fp16 as a value
   * (a kernel argument, a variable), which NVIDIA's driver does not report. */
  snprintf(out, size, "-DT=%s -DOCAL_DTYPE_%s%s",
           ocal__dtype_is_half(dtype) ? "ushort" : dtypes[dtype].cl_type, dtypes[dtype].name,
           fp64 ? " -DOCAL_NEED_FP64" : "");
}

const char *ocal__dtype_cl_type(ocal_dtype dtype) { return valid(dtype) ? dtypes[dtype].cl_type : "void"; }

int ocal__dtype_is_float(ocal_dtype dtype) { return dtype == OCAL_F32 || dtype == OCAL_F64; }

int ocal__dtype_is_signed(ocal_dtype dtype) { return dtype == OCAL_I32 || dtype == OCAL_I64; }

int ocal__dtype_is_complex(ocal_dtype dtype) { return dtype == OCAL_C32 || dtype == OCAL_C64; }

int ocal__dtype_is_half(ocal_dtype dtype) { return dtype == OCAL_F16 || dtype == OCAL_BF16; }

ocal_status ocal__reject_half(ocal_dtype dtype, const char *what, const char *func) {
  if (!ocal__dtype_is_half(dtype)) return OCAL_OK;
  return ocal__fail(OCAL_UNSUPPORTED, func,
                    "%s of %s are not supported; convert to f32 with ocal_cast first", what,
                    ocal_dtype_name(dtype));
}

/* f32 to binary16, round to nearest even, in integer arithmetic so that the host's floating
 * point modes (flush to zero, x87 precision) cannot change the answer. */
static uint16_t f32_to_f16(float v) {
  uint32_t u;
  memcpy(&u, &v, sizeof u);
  uint32_t sign = (u >> 16) & 0x8000u, mag = u & 0x7fffffffu;
  if (mag > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((mag >> 13) & 0x3ffu)); /* NaN */
  if (mag >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds to inf, or is inf */
  if (mag < 0x38800000u) {
    /* Below the smallest normal (2^-14): a subnormal, in units of 2^-24. */
    if (mag < 0x33000000u) return (uint16_t)sign; /* below half of 2^-24: zero */
    uint32_t m = (mag & 0x7fffffu) | 0x800000u;
    int shift = 126 - (int)(mag >> 23); /* 14 .. 24 */
    uint32_t q = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) q++;
    return (uint16_t)(sign | q);
  }
  /* Normal: rebias the exponent and round the 13 dropped bits; a carry into the exponent is
   * the right answer (and reaches inf only from values the test above caught). */
  uint32_t h = ((mag >> 13) - (112u << 10)), rem = mag & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++;
  return (uint16_t)(sign | h);
}

static float f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, u;
  if (e == 0x1f) {
    u = sign | 0x7f800000u | (m << 13);
  } else if (e != 0) {
    u = sign | ((e + 112u) << 23) | (m << 13);
  } else if (m == 0) {
    u = sign;
  } else { /* subnormal: normalise */
    int shift = 0;
    while (!(m & 0x400u)) m <<= 1, shift++;
    u = sign | ((uint32_t)(113 - shift) << 23) | ((m & 0x3ffu) << 13);
  }
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* f32 to bfloat16: the upper 16 bits rounded to nearest even; a NaN keeps its sign and top
 * payload bits and is made quiet (a truncated signalling NaN could become an infinity). */
static uint16_t f32_to_bf16(float v) {
  uint32_t u;
  memcpy(&u, &v, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

static float bf16_to_f32(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

uint16_t ocal__half_from_float(ocal_dtype dtype, float v) {
  return dtype == OCAL_BF16 ? f32_to_bf16(v) : f32_to_f16(v);
}

float ocal__half_to_float(ocal_dtype dtype, uint16_t h) {
  return dtype == OCAL_BF16 ? bf16_to_f32(h) : f16_to_f32(h);
}

static ocal_status check_half_args(ocal_dtype dtype, const void *src, const void *dst, size_t n,
                                   const char *func) {
  if (!ocal__dtype_is_half(dtype))
    return ocal__fail(OCAL_INVALID_ARGUMENT, func, "dtype is %s: it must be OCAL_F16 or OCAL_BF16",
                      ocal_dtype_name(dtype));
  if (n > 0 && (!src || !dst))
    return ocal__fail(OCAL_INVALID_ARGUMENT, func, "src and dst must not be NULL (n is %zu)", n);
  return OCAL_OK;
}

ocal_status ocal_half_encode(ocal_dtype dtype, const float *src, uint16_t *dst, size_t n) {
  ocal_status status = check_half_args(dtype, src, dst, n, __func__);
  if (status != OCAL_OK) return status;
  for (size_t i = 0; i < n; i++) dst[i] = ocal__half_from_float(dtype, src[i]);
  return OCAL_OK;
}

ocal_status ocal_half_decode(ocal_dtype dtype, const uint16_t *src, float *dst, size_t n) {
  ocal_status status = check_half_args(dtype, src, dst, n, __func__);
  if (status != OCAL_OK) return status;
  for (size_t i = 0; i < n; i++) dst[i] = ocal__half_to_float(dtype, src[i]);
  return OCAL_OK;
}
