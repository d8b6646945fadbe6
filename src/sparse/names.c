/* ocal — the names of the sparse enums. */
#include "ocal/sparse.h"

const char *ocal_cg_precond_name(ocal_cg_precond precond) {
  switch (precond) {
    case OCAL_PRECOND_NONE:
      return "none";
    case OCAL_PRECOND_JACOBI:
      return "jacobi";
  }
  return "invalid";
}
