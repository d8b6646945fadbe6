/* ocal — error messages name the public call the user made (issue 14's API pass): a table of
 * failures through every area, from argument checks at the entry point to failures inside
 * the helpers under it (kernel builds, the Matrix Market reader, FFT planning, emulated
 * limits, the launch checks); each message must start with the public function's name and
 * name no internal function (ocal__...). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

static char message[4096];

/* Runs one failing call and keeps its message (later calls may overwrite the thread's). */
#define FAILS(expr)                                                     \
  do {                                                                  \
    ocal_status s__ = (expr);                                           \
    snprintf(message, sizeof message, "%s", ocal_last_error());         \
    if (s__ == OCAL_OK) snprintf(message, sizeof message, "(no error)"); \
  } while (0)

static ocal_buffer f32(int ndim, const size_t *shape) {
  ocal_buffer b;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, ndim, shape, &b));
  return b;
}

/* ---- core ---------------------------------------------------------------------------- */

static void e_buffer_create(void) {
  size_t shape[1] = {4};
  ocal_buffer b = NULL;
  FAILS(ocal_buffer_create(fixture_ctx, (ocal_dtype)99, 1, shape, &b));
}

static void e_buffer_read(void) {
  size_t shape[1] = {4};
  ocal_buffer b = f32(1, shape);
  float host[8];
  FAILS(ocal_buffer_read(b, 2, 8, host, NULL));
  ocal_buffer_release(b);
}

static void e_context_limits(void) {
  ocal_context_options o;
  ocal_context_options_init(&o);
  o.limits = "no-such-profile";
  ocal_context c = NULL;
  FAILS(ocal_context_create(&o, &c));
  if (c) ocal_context_release(c);
}

static void e_context_device(void) {
  ocal_context_options o;
  ocal_context_options_init(&o);
  o.device = "no device is called this";
  ocal_context c = NULL;
  FAILS(ocal_context_create(&o, &c));
  if (c) ocal_context_release(c);
}

/* ---- user kernels (build failures come from the core's program cache) ------------------- */

static void e_program_build(void) {
  ocal_program p = NULL;
  FAILS(ocal_program_create(fixture_ctx, "__kernel void k(__global float *x) { x[0] = y; }",
                            NULL, &p));
  if (p) ocal_program_release(p);
}

static void e_kernel_launch(void) {
  ocal_program p;
  ck_assert_ocal(
      ocal_program_create(fixture_ctx, "__kernel void k(__global float *x) { }", NULL, &p));
  ocal_kernel k;
  ck_assert_ocal(ocal_kernel_create(p, "k", &k));
  size_t global[3] = {(size_t)1 << 32, (size_t)1 << 32, (size_t)1 << 32};
  FAILS(ocal_kernel_launch(k, 3, global, NULL));
  ocal_kernel_release(k);
  ocal_program_release(p);
}

static void e_gen_elementwise(void) {
  ocal_gen g = NULL;
  FAILS(ocal_gen_elementwise(fixture_ctx, "float *x, float *out", "out[i] = x[i] +* ;", NULL,
                             &g));
  if (g) ocal_gen_release(g);
}

/* ---- ops --------------------------------------------------------------------------------- */

static void e_unary(void) {
  size_t s8[1] = {8}, s7[1] = {7};
  ocal_buffer x = f32(1, s8), y = f32(1, s7);
  FAILS(ocal_unary(OCAL_UNARY_NEG, x, y));
  ocal_buffer_release(x);
  ocal_buffer_release(y);
}

static void e_softmax(void) {
  size_t s[2] = {3, 4};
  ocal_buffer x = f32(2, s), y = f32(2, s);
  FAILS(ocal_softmax(x, 5, y));
  ocal_buffer_release(x);
  ocal_buffer_release(y);
}

static void e_sum(void) {
  size_t s[2] = {4, 6}, bad[1] = {5};
  ocal_buffer x = f32(2, s), y = f32(1, bad);
  FAILS(ocal_sum(x, 0, y));
  ocal_buffer_release(x);
  ocal_buffer_release(y);
}

static void e_cumsum(void) {
  size_t s[2] = {4, 6}, bad[1] = {24};
  ocal_buffer x = f32(2, s), y = f32(1, bad);
  FAILS(ocal_cumsum(x, 3, y));
  ocal_buffer_release(x);
  ocal_buffer_release(y);
}

/* ---- BLAS ---------------------------------------------------------------------------------- */

static void e_gemm(void) {
  size_t sa[2] = {2, 3}, sb[2] = {4, 2}, sc[2] = {2, 2};
  ocal_buffer a = f32(2, sa), b = f32(2, sb), c = f32(2, sc);
  FAILS(ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1.0, a, b, 0.0, c));
  ocal_buffer_release(a);
  ocal_buffer_release(b);
  ocal_buffer_release(c);
}

static void e_blas_tuning(void) {
  FAILS(ocal_blas_tuning_apply(fixture_ctx, OCAL_F32, "MWG=7,NOT_A_PARAMETER=3"));
}

/* ---- FFT --------------------------------------------------------------------------------- */

static void e_fft_plan(void) {
  ocal_fft_desc d;
  ocal_fft_desc_init(&d);
  d.lengths[0] = 0;
  ocal_fft_plan p = NULL;
  FAILS(ocal_fft_plan_create(fixture_ctx, &d, &p));
  if (p) ocal_fft_plan_release(p);
}

static void e_fft_execute(void) {
  ocal_fft_desc d;
  ocal_fft_desc_init(&d);
  d.lengths[0] = 16;
  ocal_fft_plan p;
  ck_assert_ocal(ocal_fft_plan_create(fixture_ctx, &d, &p));
  size_t s[1] = {15};
  ocal_buffer x, y;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_C32, 1, s, &x));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_C32, 1, s, &y));
  FAILS(ocal_fft_execute(p, OCAL_FFT_FORWARD, x, y));
  ocal_buffer_release(x);
  ocal_buffer_release(y);
  ocal_fft_plan_release(p);
}

/* ---- sparse ------------------------------------------------------------------------------ */

static void e_csr_read_mtx(void) {
  char path[] = "/tmp/ocal-error-names-XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  const char text[] = "%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1.0\n";
  ck_assert_int_eq(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
  close(fd);
  ocal_csr a = NULL;
  FAILS(ocal_csr_read_mtx(fixture_ctx, path, OCAL_F32, OCAL_I32, &a));
  unlink(path);
  if (a) ocal_csr_release(a);
}

static void e_csr_from_host(void) {
  const int32_t row_ptr[3] = {0, 1, 2}, col_idx[2] = {0, 5};
  const float values[2] = {1, 2};
  ocal_csr a = NULL;
  FAILS(ocal_csr_from_host(fixture_ctx, OCAL_F32, OCAL_I32, 2, 2, row_ptr, col_idx, values, &a));
  if (a) ocal_csr_release(a);
}

static ocal_csr identity(size_t n) {
  int32_t *row_ptr = fixture_malloc((n + 1) * sizeof *row_ptr);
  int32_t *col_idx = fixture_malloc(n * sizeof *col_idx);
  float *values = fixture_malloc(n * sizeof *values);
  for (size_t i = 0; i <= n; i++) row_ptr[i] = (int32_t)i;
  for (size_t i = 0; i < n; i++) {
    col_idx[i] = (int32_t)i;
    values[i] = 2.0f;
  }
  ocal_csr a;
  ck_assert_ocal(
      ocal_csr_from_host(fixture_ctx, OCAL_F32, OCAL_I32, n, n, row_ptr, col_idx, values, &a));
  free(row_ptr);
  free(col_idx);
  free(values);
  return a;
}

static void e_spmv(void) {
  ocal_csr a = identity(5);
  size_t s5[1] = {5}, s4[1] = {4};
  ocal_buffer x = f32(1, s5), y = f32(1, s4);
  FAILS(ocal_spmv(OCAL_NO_TRANS, 1.0, a, x, 0.0, y));
  ocal_buffer_release(x);
  ocal_buffer_release(y);
  ocal_csr_release(a);
}

static void e_cg(void) {
  ocal_csr a = identity(5);
  ocal_operator op;
  ck_assert_ocal(ocal_operator_from_csr(a, &op));
  size_t s5[1] = {5};
  ocal_buffer b = f32(1, s5), x = f32(1, s5);
  ocal_cg_options o;
  ocal_cg_options_init(&o);
  o.rtol = -1;
  ocal_cg_result r = {sizeof r};
  FAILS(ocal_cg(&op, b, x, &o, &r));
  ocal_buffer_release(b);
  ocal_buffer_release(x);
  ocal_csr_release(a);
}

static void e_lobpcg(void) {
  ocal_csr a = identity(5);
  ocal_operator op;
  ck_assert_ocal(ocal_operator_from_csr(a, &op));
  size_t s[2] = {5, 4}; /* 4 eigenpairs of a 5 x 5 matrix: too many (5 < 3 * 4) */
  ocal_buffer x = f32(2, s);
  double ev[4], res[4];
  ocal_lobpcg_result r = {sizeof r};
  FAILS(ocal_lobpcg(&op, x, NULL, ev, res, &r));
  ocal_buffer_release(x);
  ocal_csr_release(a);
}

/* ---- memory -------------------------------------------------------------------------------- */

/* f16 and bf16 where a call does not take them: the message names the call. */
static void e_cumsum_half(void) {
  size_t shape[1] = {4};
  ocal_buffer x, y;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F16, 1, shape, &x));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F16, 1, shape, &y));
  FAILS(ocal_cumsum(x, 0, y));
  ocal_buffer_release(x);
  ocal_buffer_release(y);
}

static void e_gemv_half(void) {
  size_t shape[2] = {4, 4}, n = 4;
  ocal_buffer a, x, y;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_BF16, 2, shape, &a));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_BF16, 1, &n, &x));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_BF16, 1, &n, &y));
  FAILS(ocal_gemv(OCAL_NO_TRANS, 1, a, x, 0, y));
  ocal_buffer_release(a);
  ocal_buffer_release(x);
  ocal_buffer_release(y);
}

static void e_transfer_write(void) {
  size_t s[1] = {4};
  ocal_buffer b = f32(1, s);
  float host[8] = {0};
  FAILS(ocal_transfer_write(b, 3, 8, host, 0, NULL, NULL));
  ocal_buffer_release(b);
}

static const struct {
  const char *call; /* the public function the message must start with */
  void (*run)(void);
} cases[] = {
    {"ocal_buffer_create", e_buffer_create},
    {"ocal_buffer_read", e_buffer_read},
    {"ocal_context_create", e_context_limits},
    {"ocal_context_create", e_context_device},
    {"ocal_program_create", e_program_build},
    {"ocal_kernel_launch", e_kernel_launch},
    {"ocal_gen_elementwise", e_gen_elementwise},
    {"ocal_unary", e_unary},
    {"ocal_softmax", e_softmax},
    {"ocal_sum", e_sum},
    {"ocal_cumsum", e_cumsum},
    {"ocal_gemm", e_gemm},
    {"ocal_blas_tuning_apply", e_blas_tuning},
    {"ocal_fft_plan_create", e_fft_plan},
    {"ocal_fft_execute", e_fft_execute},
    {"ocal_csr_read_mtx", e_csr_read_mtx},
    {"ocal_csr_from_host", e_csr_from_host},
    {"ocal_spmv", e_spmv},
    {"ocal_cg", e_cg},
    {"ocal_lobpcg", e_lobpcg},
    {"ocal_transfer_write", e_transfer_write},
    {"ocal_cumsum", e_cumsum_half},
    {"ocal_gemv", e_gemv_half},
};

START_TEST(test_error_names) {
  const char *call = cases[_i].call;
  message[0] = '\0';
  cases[_i].run();
  ck_assert_msg(strcmp(message, "(no error)") != 0, "case %d: %s did not fail", _i, call);
  size_t n = strlen(call);
  ck_assert_msg(strncmp(message, call, n) == 0 && (message[n] == ':' || message[n] == ' '),
                "case %d: the message does not start with %s: %s", _i, call, message);
  ck_assert_msg(strstr(message, "ocal__") == NULL,
                "case %d (%s): the message names an internal function: %s", _i, call, message);
}
END_TEST

int main(void) {
  Suite *s = suite_create("error_names");
  TCase *tc = fixture_tcase("error_names");
  tcase_add_loop_test(tc, test_error_names, 0, (int)(sizeof cases / sizeof cases[0]));
  suite_add_tcase(s, tc);
  return fixture_run(s);
}
