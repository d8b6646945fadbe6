/* ocal fuzz targets (docs/defences.md) — what they share. Each target file defines
 * LLVMFuzzerTestOneInput; built with clang -fsanitize=fuzzer,address,undefined by
 * tests/fuzz/build.sh, and with replay.c's main (any compiler) into a program that
 * `make check` runs over the checked-in corpus and regression inputs. */
#ifndef OCAL_FUZZ_H
#define OCAL_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken invariant: reported and turned into a crash that the fuzzer keeps. */
#define FUZZ_ASSERT(cond)                                                            \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, #cond);   \
      abort();                                                                       \
    }                                                                                \
  } while (0)

/* The input as a NUL-terminated string (malloc'ed; the fuzzer's bytes may hold NULs, which
 * end the string as they would end a C string from a user). */
static inline char *fuzz_string(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (!s) abort();
  memcpy(s, data, size);
  s[size] = '\0';
  return s;
}

#endif /* OCAL_FUZZ_H */
