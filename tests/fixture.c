/* ocal tests — the shared device fixture. */
#include "fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

ocal_context fixture_ctx = NULL;

void fixture_setup(void) {
  ocal_status s = ocal_context_create(NULL, &fixture_ctx);
  ck_assert_msg(s == OCAL_OK, "no context on OCAL_DEVICE='%s': %s",
                getenv("OCAL_DEVICE") ? getenv("OCAL_DEVICE") : "", ocal_last_error());
}

void fixture_reopen(void) {
  ocal_context_release(fixture_ctx);
  fixture_ctx = NULL;
  fixture_setup();
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

int fixture_has_fp64(void) {
  int has = 0;
  ck_assert_ocal(ocal_context_get_fp64(fixture_ctx, &has));
  return has;
}

int fixture_dtype_usable(ocal_dtype d) { return (d != OCAL_F64 && d != OCAL_C64) || fixture_has_fp64(); }

void *fixture_malloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  ck_assert_ptr_nonnull(p);
  return p;
}

size_t fixture_numel(int ndim, const size_t *shape) {
  size_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  return n;
}

long double fixture_get(ocal_dtype d, const void *p, size_t i) {
  switch (d) {
    case OCAL_F32: return ((const float *)p)[i];
    case OCAL_F64: return ((const double *)p)[i];
    case OCAL_I32: return ((const int32_t *)p)[i];
    case OCAL_U32: return ((const uint32_t *)p)[i];
    case OCAL_I64: return ((const int64_t *)p)[i];
    case OCAL_U64: return ((const uint64_t *)p)[i];
    case OCAL_U8: return ((const uint8_t *)p)[i];
    case OCAL_F16:
    case OCAL_BF16: {
      float f;
      ocal_half_decode(d, (const uint16_t *)p + i, &f, 1);
      return f;
    }
    default: ck_abort_msg("fixture_get: not a real dtype"); return 0;
  }
}

uint64_t fixture_get_bits(ocal_dtype d, const void *p, size_t i) {
  switch (d) {
    case OCAL_I32: return (uint64_t)(int64_t)((const int32_t *)p)[i];
    case OCAL_U32: return ((const uint32_t *)p)[i];
    case OCAL_I64: return (uint64_t)((const int64_t *)p)[i];
    case OCAL_U64: return ((const uint64_t *)p)[i];
    case OCAL_U8: return ((const uint8_t *)p)[i];
    default: ck_abort_msg("fixture_get_bits: not an integer dtype"); return 0;
  }
}

pid_t fixture_spawn_self(const char *self, char *const args[]) {
  char *argv[16];
  int n = 0;
  argv[n++] = (char *)self;
  while (args[n - 1] && n < 15) {
    argv[n] = args[n - 1];
    n++;
  }
  argv[n] = NULL;
  fflush(NULL);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    execv("/proc/self/exe", argv);
    execv(self, argv);
    _exit(127);
  }
  return pid;
}

int fixture_wait_child(pid_t pid, int *signal_out) {
  int status = 0;
  pid_t got;
  do got = waitpid(pid, &status, 0);
  while (got < 0 && errno == EINTR);
  ck_assert_int_eq(got, pid);
  if (signal_out) *signal_out = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void run_cache_child(const char *self, const char *dir, int expect_hit) {
  char *args[] = {"--child", (char *)dir, expect_hit ? "1" : "0", NULL};
  int code = fixture_wait_child(fixture_spawn_self(self, args), NULL);
  ck_assert_msg(code == 0, "child (expecting %s) failed: exit %d (see its stderr)",
                expect_hit ? "a disk hit" : "a build", code);
}

void fixture_check_cache_children(const char *self, const char *suite) {
  char dir[96];
  snprintf(dir, sizeof dir, "/tmp/ocal-check-%s-cache-XXXXXX", suite);
  ck_assert_ptr_nonnull(mkdtemp(dir));
  run_cache_child(self, dir, 0);
  run_cache_child(self, dir, 1);
  char cmd[160];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);
}
