/* What the standalone bench programs share: a monotonic clock, and CHECK, which ends the
 * program with ocal's message when a call fails. Define BENCH_NAME (the program's name, for
 * messages) before including it. */
#ifndef OCAL_BENCH_COMMON_H
#define OCAL_BENCH_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <ocal.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

#define CHECK(expr)                                                                         \
  do {                                                                                      \
    ocal_status s_ = (expr);                                                                \
    if (s_ != OCAL_OK) {                                                                    \
      fprintf(stderr, "%s: %s failed: %s: %s\n", BENCH_NAME, #expr, ocal_status_name(s_), \
              ocal_last_error());                                                           \
      exit(1);                                                                              \
    }                                                                                       \
  } while (0)

#endif
