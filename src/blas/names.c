/* ocal — the names of the BLAS enums. */
#include "ocal/blas.h"

const char *ocal_transpose_name(ocal_transpose ta) {
  return ta == OCAL_NO_TRANS ? "N" : ta == OCAL_TRANS ? "T" : "invalid";
}

const char *ocal_blas_tuning_source_name(ocal_blas_tuning_source source) {
  static const char *const names[] = {[OCAL_TUNING_DEFAULT] = "default",
                                      [OCAL_TUNING_DISABLED] = "disabled",
                                      [OCAL_TUNING_BUILTIN] = "builtin",
                                      [OCAL_TUNING_FILE] = "file",
                                      [OCAL_TUNING_USER] = "user"};
  return (unsigned)source < sizeof names / sizeof *names && names[source] ? names[source]
                                                                           : "invalid";
}
