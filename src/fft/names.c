/* ocal — the names of the FFT enums (the engine's is in plan.c, next to its table). */
#include "ocal/fft.h"

const char *ocal_fft_kind_name(ocal_fft_kind kind) {
  switch (kind) {
    case OCAL_FFT_C2C:
      return "c2c";
    case OCAL_FFT_R2C:
      return "r2c";
    case OCAL_FFT_C2R:
      return "c2r";
  }
  return "invalid";
}

const char *ocal_fft_direction_name(ocal_fft_direction direction) {
  switch (direction) {
    case OCAL_FFT_FORWARD:
      return "forward";
    case OCAL_FFT_INVERSE:
      return "inverse";
  }
  return "invalid";
}

const char *ocal_fft_norm_name(ocal_fft_norm norm) {
  switch (norm) {
    case OCAL_FFT_NORM_BACKWARD:
      return "backward";
    case OCAL_FFT_NORM_ORTHO:
      return "ortho";
    case OCAL_FFT_NORM_FORWARD:
      return "forward";
  }
  return "invalid";
}
