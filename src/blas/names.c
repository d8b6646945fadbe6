/* ocal — the names of the BLAS enums. */
#include "ocal/blas.h"

const char *ocal_transpose_name(ocal_transpose ta) {
  switch (ta) {
    case OCAL_NO_TRANS:
      return "N";
    case OCAL_TRANS:
      return "T";
  }
  return "invalid";
}

const char *ocal_blas_tuning_source_name(ocal_blas_tuning_source source) {
  switch (source) {
    case OCAL_TUNING_DEFAULT:
      return "default";
    case OCAL_TUNING_DISABLED:
      return "disabled";
    case OCAL_TUNING_BUILTIN:
      return "builtin";
    case OCAL_TUNING_FILE:
      return "file";
    case OCAL_TUNING_USER:
      return "user";
  }
  return "invalid";
}
