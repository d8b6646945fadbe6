/* ocal tests — the shared device fixture and helpers.
 *
 * Every suite runs on the device that OCAL_DEVICE selects (PoCL's CPU device in CI) through
 * one context created in a checked fixture, so each test (in its own forked process) gets
 * a fresh context and a failure in one cannot poison the next. */
#ifndef OCAL_TEST_FIXTURE_H
#define OCAL_TEST_FIXTURE_H

#include <math.h>
#include <check.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <ocal.h>

/* The context of the running test, created by fixture_setup. */
extern ocal_context fixture_ctx;

void fixture_setup(void);
/* Releases fixture_ctx and creates it again: the library reads its OCAL_* settings once, at
 * ocal_context_create, so a test that changes one (setenv) reopens the context to use it.
 * Buffers of the old context must be released first. */
void fixture_reopen(void);
void fixture_teardown(void);

/* Adds a test case with the device fixture to a suite. */
TCase *fixture_tcase(const char *name);

/* Runs a suite and returns the process exit status (0 when every test passed). */
int fixture_run(Suite *suite);

/* Asserts that an ocal call succeeded, printing ocal_last_error() otherwise. */
#define ck_assert_ocal(expr)                                                               \
  do {                                                                                     \
    ocal_status ck__s = (expr);                                                            \
    ck_assert_msg(ck__s == OCAL_OK, "%s returned %s: %s", #expr, ocal_status_name(ck__s), \
                  ocal_last_error());                                                      \
  } while (0)

/* Asserts that an ocal call failed with the given status and left a message. */
#define ck_assert_ocal_fails(expr, status)                                                 \
  do {                                                                                     \
    ocal_status ck__s = (expr);                                                            \
    ck_assert_msg(ck__s == (status), "%s returned %s, expected %s (%s)", #expr,            \
                  ocal_status_name(ck__s), ocal_status_name(status), ocal_last_error()); \
    ck_assert_msg(ocal_last_error()[0] != '\0', "%s left no error message", #expr);        \
  } while (0)

/* Host-side helpers the suites share. */
int fixture_has_fp64(void);                      /* the running test's context has fp64 */
int fixture_dtype_usable(ocal_dtype d);          /* d can be used on that context */
void *fixture_malloc(size_t bytes);              /* fails the test instead of returning NULL */
size_t fixture_numel(int ndim, const size_t *shape);
/* Element i of a host array of type d (real types), exactly: long double holds them all. */
long double fixture_get(ocal_dtype d, const void *p, size_t i);
/* Element i of an integer array as 64-bit two's complement (signed types sign-extended). */
uint64_t fixture_get_bits(ocal_dtype d, const void *p, size_t i);

/* A second process: runs the test program `self` again with `args` (NULL-terminated, after
 * argv[0]) through exec, never only fork (a forked child of a process that has started
 * OpenCL can hang); returns its pid. fixture_wait_child waits for it and returns its exit
 * status, or -1 with the signal in *signal_out when it died (exit 127: exec failed). */
pid_t fixture_spawn_self(const char *self, char *const args[]);
int fixture_wait_child(pid_t pid, int *signal_out);

/* The second-process cache test of a suite whose main runs `self --child DIR HIT` as a
 * child (HIT 1: it must find its kernels in the disk cache DIR; 0: it builds them): runs a
 * building child, then a loading one, in a fresh directory, and fails unless both exit 0. */
void fixture_check_cache_children(const char *self, const char *suite);

/* Deterministic pseudo-random bytes for test data (xorshift64*), seeded per test. */
uint64_t fixture_random(uint64_t *state);
void fixture_random_bytes(void *out, size_t bytes, uint64_t seed);

/* NumPy's floor_divide and remainder of doubles (npy_divmod), the references of
 * OCAL_BINARY_FLOOR_DIVIDE and OCAL_BINARY_REMAINDER. */
static inline double fixture_floor_divide(double a, double b) {
  if (b == 0) return a / b;
  double mod = fmod(a, b), div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;
  if (div == 0) return copysign(0, a / b);
  double fl = floor(div);
  return div - fl > 0.5 ? fl + 1 : fl;
}
static inline double fixture_remainder(double a, double b) {
  if (b == 0) return fmod(a, b);
  double mod = fmod(a, b);
  if (mod == 0) return copysign(0, b);
  return ((b < 0) != (mod < 0)) ? mod + b : mod;
}

#endif /* OCAL_TEST_FIXTURE_H */
