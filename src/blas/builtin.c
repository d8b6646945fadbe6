/* ocal — GEMM parameters measured by ocal's authors, shipped as data in the library and
 * applied on a matching device when it has no tuning file of its own (see tuning.c).
 *
 * Each entry names the device (CL_DEVICE_NAME, matched exactly), the precision, and in its
 * note the driver and the measurement it came from; the parameters are the text a tuning
 * file holds, validated the same way before use. To add a device: run
 * `ocal tune gemm --budget 300` on it and copy the printed parameters here. */
#include "blas_internal.h"

/* Hopper (compute capability 9.0), found with `ocal tune gemm`: the Xgemm set on one card,
 * the XgemmDirect set and the switch point (`--phases direct,switch`, the direct kernel
 * scored on 1024^3, 512^3 and 256^3 together) on the other. The two cards have the same
 * compute units; both get the set (docs/blas-engines.md, section "Tuning"). */
#define OCAL__HOPPER_F32                                                                   \
  "GEMMK=0\nKREG=1\nKWG=32\nKWI=2\nMDIMA=32\nMDIMC=8\nMWG=64\nNDIMB=32\nNDIMC=8\nNWG=128\n"  \
  "SA=1\nSB=1\nSTRM=1\nSTRN=1\nVWM=2\nVWN=2\n"                                           \
  "KWID=8\nMDIMAD=16\nMDIMCD=8\nNDIMBD=32\nNDIMCD=16\nPADA=1\nPADB=1\nVWMD=1\nVWND=1\n"  \
  "WGD=32\nXGEMM_MIN_INDIRECT_SIZE=1536\n"

const ocal__builtin_tuning ocal__builtin_tunings[] = {
    {"NVIDIA H100 80GB HBM3", 32, OCAL__HOPPER_F32,
     "built into ocal: measured on NVIDIA H100 80GB HBM3 and H200, driver 580.159.04"},
    {"NVIDIA H200", 32, OCAL__HOPPER_F32,
     "built into ocal: measured on NVIDIA H200 and H100 80GB HBM3, driver 580.159.04"},
};
const size_t ocal__builtin_tuning_count =
    sizeof ocal__builtin_tunings / sizeof ocal__builtin_tunings[0];
