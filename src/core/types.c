/* ocal — element types: sizes and names from the one OCAL_DTYPE_MAP table. */
#include <stdio.h>
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
                   "unknown element type '%s' (use f32, f64, i32, u32, i64, u64, u8, c32 or c64)",
                   name);
}

void ocal__dtype_options(ocal_dtype dtype, char *out, size_t size) {
  int fp64 = dtype == OCAL_F64 || dtype == OCAL_C64;
  snprintf(out, size, "-DT=%s -DOCAL_DTYPE_%s%s", dtypes[dtype].cl_type, dtypes[dtype].name,
           fp64 ? " -DOCAL_NEED_FP64" : "");
}

const char *ocal__dtype_cl_type(ocal_dtype dtype) { return valid(dtype) ? dtypes[dtype].cl_type : "void"; }

int ocal__dtype_is_float(ocal_dtype dtype) { return dtype == OCAL_F32 || dtype == OCAL_F64; }

int ocal__dtype_is_signed(ocal_dtype dtype) { return dtype == OCAL_I32 || dtype == OCAL_I64; }

int ocal__dtype_is_complex(ocal_dtype dtype) { return dtype == OCAL_C32 || dtype == OCAL_C64; }
