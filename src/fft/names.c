/* ocal — the names of the FFT enums (the engine's is in plan.c, next to its table). */
#include "ocal/fft.h"

const char *ocal_fft_kind_name(ocal_fft_kind kind) {
  return kind == OCAL_FFT_C2C   ? "c2c"
         : kind == OCAL_FFT_R2C ? "r2c"
         : kind == OCAL_FFT_C2R ? "c2r"
                                : "invalid";
}

const char *ocal_fft_direction_name(ocal_fft_direction direction) {
  return direction == OCAL_FFT_FORWARD ? "forward"
         : direction == OCAL_FFT_INVERSE ? "inverse"
                                         : "invalid";
}

const char *ocal_fft_norm_name(ocal_fft_norm norm) {
  return norm == OCAL_FFT_NORM_BACKWARD ? "backward"
         : norm == OCAL_FFT_NORM_ORTHO  ? "ortho"
         : norm == OCAL_FFT_NORM_FORWARD ? "forward"
                                         : "invalid";
}
