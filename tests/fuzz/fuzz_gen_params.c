/* Fuzz target: the generators' argument-list parser (ocal__gen_parse_params, the
 * `arguments` of ocal_gen_elementwise/_reduction/_scan) and the raw-kernel signature
 * scanner (ocal__kernel_signature, which reads a kernel's parameters from OpenCL C
 * source), both over the same text. Invariants: a parsed list has valid types and names
 * that are identifiers, not reserved; a failure leaves a message. */
#include <ctype.h>

#include "fuzz.h"
#include "gen_internal.h"
#include "kernel_internal.h"

static int identifier(const char *s) {
  if (!(isalpha((unsigned char)s[0]) || s[0] == '_')) return 0;
  for (; *s; s++)
    if (!(isalnum((unsigned char)*s) || *s == '_')) return 0;
  return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_string(data, size);
  ocal__gen_param *params = NULL;
  int count = -1;
  ocal_status st = ocal__gen_parse_params("fuzz", text, &params, &count);
  if (st == OCAL_OK) {
    FUZZ_ASSERT(count >= 0);
    FUZZ_ASSERT(count == 0 || params != NULL);
    for (int i = 0; i < count; i++) {
      const ocal__gen_param *p = &params[i];
      FUZZ_ASSERT(memchr(p->name, '\0', sizeof p->name) != NULL);
      FUZZ_ASSERT(identifier(p->name));
      FUZZ_ASSERT(strcmp(p->name, "i") != 0 && strcmp(p->name, "n") != 0);
      FUZZ_ASSERT(strncmp(p->name, "ocal_", 5) != 0);
      FUZZ_ASSERT((int)p->dtype >= 0 && p->dtype < OCAL_DTYPE_COUNT);
      for (int j = 0; j < i; j++) FUZZ_ASSERT(strcmp(params[j].name, p->name) != 0);
    }
  } else {
    FUZZ_ASSERT(st == OCAL_INVALID_ARGUMENT || st == OCAL_OUT_OF_HOST_MEMORY);
    FUZZ_ASSERT(ocal_last_error()[0] != '\0');
  }
  free(params);

  ocal__sig_arg *args = NULL;
  int n = ocal__kernel_signature(text, "k", &args);
  FUZZ_ASSERT(n >= -1);
  for (int i = 0; i < n; i++) {
    FUZZ_ASSERT(memchr(args[i].type, '\0', sizeof args[i].type) != NULL);
    FUZZ_ASSERT(memchr(args[i].name, '\0', sizeof args[i].name) != NULL);
  }
  free(args);
  free(text);
  return 0;
}
