/* Fuzz target: the parsers of ocal's settings — byte counts (ocal__parse_bytes:
 * OCAL_POOL_LIMIT, OCAL_MEMORY_LIMIT, OCAL_STAGING_*), on/off flags (ocal__parse_flag:
 * OCAL_POOL, OCAL_STAGING, ...) and the four-step FFT's tuning string
 * (OCAL_FFT_FOURSTEP_TUNE, read_tune, static in src/fft/fourstep.c, which this file
 * includes). Invariants: a byte count parses only when it is digits with an optional
 * binary suffix, and to the value those digits say. */
#include "../../src/fft/fourstep.c"

#include <ctype.h>

#include "fuzz.h"
#include "memory_internal.h"

/* Sets NAME=text through putenv on a buffer of its own, rewritten in place every time: setenv
 * would keep every value it replaced, and the fuzzer's memory would grow without end. */
static int put(char *buf, size_t cap, const char *name, const char *text) {
  if (strlen(name) + 1 + strlen(text) + 1 > cap) return -1;
  snprintf(buf, cap, "%s=%s", name, text);
  return putenv(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char flag_env[4200], tune_env[4200];
  char *text = fuzz_string(data, size);
  uint64_t v = 0;
  if (ocal__parse_bytes(text, &v) == 0) {
    FUZZ_ASSERT(isdigit((unsigned char)text[0]));
    char *end;
    unsigned long long digits = strtoull(text, &end, 10);
    if (*end == '\0') FUZZ_ASSERT(v == digits); /* no suffix: the number itself */
    else FUZZ_ASSERT(v >= digits);              /* a suffix only multiplies */
    /* The suffix is [KMGT][i][B], any case, each part optional, the i only after a unit. */
    const char *s = end;
    int unit = *s && strchr("kKmMgGtT", *s);
    if (unit) s++;
    if (unit && (*s == 'i' || *s == 'I')) s++;
    if (*s == 'b' || *s == 'B') s++;
    FUZZ_ASSERT(*s == '\0');
  }
  if (put(flag_env, sizeof flag_env, "OCAL_FUZZ_FLAG", text) == 0) {
    int f = 2;
    if (ocal__parse_flag(getenv("OCAL_FUZZ_FLAG"), &f) == 0) FUZZ_ASSERT(f == -1 || f == 0 || f == 1);
    else FUZZ_ASSERT(f == 2);
  }
  if (put(tune_env, sizeof tune_env, "OCAL_FFT_FOURSTEP_TUNE", text) == 0) {
    fs_tune t;
    if (read_tune(text, &t) == OCAL_OK) {
      FUZZ_ASSERT(t.c == 1 || t.c == 2 || t.c == 4 || t.c == 8 || t.c == 16);
      FUZZ_ASSERT(t.ld >= -1 && t.ld <= 3 && t.st >= 0 && t.st <= 2);
      FUZZ_ASSERT(t.logr == 0 || (t.logr >= 2 && t.logr <= 4)); /* 0: the default */
      FUZZ_ASSERT(t.tt >= -1 && t.tt <= 2);
      FUZZ_ASSERT(t.n1 == 0 || (t.n1 >= 64 && t.n1 <= 8192 && (t.n1 & (t.n1 - 1)) == 0));
    } else {
      FUZZ_ASSERT(ocal_last_error()[0] != '\0');
    }
  }
  free(text);
  return 0;
}
