/* Fuzz target: the GEMM tuning parameters' reader (ocal__gemm_params_parse), which reads
 * the NAME=VALUE text of a tuning file (src/blas/tuning.c), of ocal_blas_tuning_apply and
 * of the built-in table. Invariants: what it accepts is valid for the device, and writing
 * it out (ocal__gemm_params_format) and reading that back gives the same parameters. */
#include "blas_internal.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_string(data, size);
  ocal_device_info device = {sizeof device};
  memset(&device, 0, sizeof device);
  device.struct_size = sizeof device;
  device.local_mem_bytes = 64 * 1024;
  device.max_work_group_size = 1024;
  device.max_work_item_sizes[0] = 1024;
  device.max_work_item_sizes[1] = 1024;
  device.max_work_item_sizes[2] = 64;
  for (int precision = 32; precision <= 64; precision += 32) {
    ocal__gemm_params p, q;
    char why[256], again[2048];
    why[0] = '\0';
    if (!ocal__gemm_params_parse(text, &device, precision, &p, why, sizeof why)) {
      FUZZ_ASSERT(why[0] != '\0');
      continue;
    }
    FUZZ_ASSERT(ocal__gemm_params_valid(&p, &device, precision, NULL, 0));
    ocal__gemm_params_format(&p, again, sizeof again);
    FUZZ_ASSERT(ocal__gemm_params_parse(again, &device, precision, &q, why, sizeof why));
    FUZZ_ASSERT(memcmp(&p, &q, sizeof p) == 0);
  }
  free(text);
  return 0;
}
