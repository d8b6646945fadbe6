/* ocal tests — the shared device fixture. */
#include "fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ocal_context fixture_ctx = NULL;

void fixture_setup(void) {
  ocal_status s = ocal_context_create(&fixture_ctx, NULL);
  ck_assert_msg(s == OCAL_OK, "no context on OCAL_DEVICE='%s': %s",
                getenv("OCAL_DEVICE") ? getenv("OCAL_DEVICE") : "", ocal_last_error());
}

void fixture_teardown(void) {
  ocal_context_release(fixture_ctx);
  fixture_ctx = NULL;
}

TCase *fixture_tcase(const char *name) {
  TCase *tc = tcase_create(name);
  tcase_add_checked_fixture(tc, fixture_setup, fixture_teardown);
  /* PoCL compiles kernels with LLVM on first use: CLBlast's and VkFFT's take 15-25 s each
   * there when its cache is cold, and longer on a loaded machine. */
  tcase_set_timeout(tc, 300);
  return tc;
}

int fixture_run(Suite *suite) {
  /* No OpenCL call may happen here, before Check forks each test: OpenCL drivers start
   * threads that a forked child does not inherit, and the child then hangs (PoCL does).
   * The same holds inside a test: a second process must be exec'ed, not merely forked. */
  SRunner *runner = srunner_create(suite);
  srunner_run_all(runner, CK_NORMAL);
  int failed = srunner_ntests_failed(runner);
  srunner_free(runner);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

uint64_t fixture_random(uint64_t *state) {
  uint64_t x = *state ? *state : 0x9e3779b97f4a7c15ull;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * 0x2545f4914f6cdd1dull;
}

void fixture_random_bytes(void *out, size_t bytes, uint64_t seed) {
  unsigned char *p = out;
  uint64_t state = seed;
  while (bytes > 0) {
    uint64_t r = fixture_random(&state);
    size_t n = bytes < sizeof r ? bytes : sizeof r;
    memcpy(p, &r, n);
    p += n;
    bytes -= n;
  }
}
