/* ocal tests — every public function with NULL for each of its pointer arguments.
 *
 * The table below has one row per function that include/ocal/ *.h declares with OCAL_API (the
 * last test reads the headers and fails when a declared function has no row, so a new one
 * cannot be forgotten). A row's caller passes valid arguments except the k-th pointer
 * argument (handles count), which it passes as NULL; k = -1 passes none, the baseline that
 * must succeed, so that the NULL is what each failing call refuses. A NULL must give a
 * status other than OCAL_OK and a message naming the function, never a crash, unless the
 * header documents it as allowed (optional out-parameters, options, release of NULL): then
 * the call must succeed. Using a released handle is undefined (README, Errors) and not
 * tested here. */
#include "fixture.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <string.h>
#include <unistd.h>

/* Arguments: NULL for pointer argument i when k == i. */
#define P(i, v) (k == (i) ? NULL : (v))

/* The objects the calls use, made once per test (the fixture's context is fresh). */
static struct {
  ocal_context ctx;
  ocal_buffer m44a, m44b, m44c, x, y, r1, rows, labels, loss, grad, mask, cin, cout, xi, idx;
  ocal_program program;
  ocal_kernel kernel;
  ocal_gen red, ew;
  ocal_fft_plan plan;
  ocal_fft_desc desc;
  ocal_event event;
  cl_event user_event;
  void *pinned;
  char path[64];
  char mtx[64];
  ocal_context_options options;
  /* sparse.h: a 4 x 4 diagonal matrix on the f32 vectors, its index buffers, its operator,
   * and a 10 x 10 one for LOBPCG (which needs n >= 5 k). */
  ocal_csr csr, csr10;
  ocal_buffer rp, ci, x10;
  ocal_operator op, op10;
  float host[64];
} o;

static const char kernel_src[] =
    "__kernel void fill1(__global float *y) { y[get_global_id(0)] = 1.0f; }\n";

static ocal_buffer f32(int ndim, size_t a, size_t b) {
  const size_t shape[2] = {a, b};
  ocal_buffer buf;
  ck_assert_ocal(ocal_buffer_from_host(o.ctx, OCAL_F32, ndim, shape, o.host, &buf));
  return buf;
}

/* Diagonal CSR matrices: SPD, so CG converges at once. */
static const int32_t csr_rp[5] = {0, 1, 2, 3, 4}, csr_ci[4] = {0, 1, 2, 3};
static const float csr_v[4] = {1.0f, 2.0f, 3.0f, 4.0f};
static const char mtx_text[] =
    "%%MatrixMarket matrix coordinate real general\n4 4 4\n1 1 1\n2 2 2\n3 3 3\n4 4 4\n";

static void make_sparse_objects(void) {
  ck_assert_ocal(ocal_csr_from_host(o.ctx, OCAL_F32, OCAL_I32, 4, 4, csr_rp, csr_ci, csr_v,
                                    &o.csr));
  ck_assert_ocal(ocal_operator_from_csr(o.csr, &o.op));
  const size_t five = 5, four = 4, ten = 10;
  ck_assert_ocal(ocal_buffer_from_host(o.ctx, OCAL_I32, 1, &five, csr_rp, &o.rp));
  ck_assert_ocal(ocal_buffer_from_host(o.ctx, OCAL_I32, 1, &four, csr_ci, &o.ci));
  /* LOBPCG in double precision where the device has it: f32 may stop short of its
   * tolerance, and a baseline must succeed. */
  int fp64 = 0;
  ck_assert_ocal(ocal_context_get_fp64(o.ctx, &fp64));
  const ocal_dtype t = fp64 ? OCAL_F64 : OCAL_F32;
  int32_t rp10[11], ci10[10];
  double v64[10];
  float v32[10];
  for (int i = 0; i < 10; i++) {
    rp10[i] = i;
    ci10[i] = i;
    /* One eigenvalue far below the others: LOBPCG converges in a few iterations. */
    v64[i] = i == 0 ? 1.0 : 100.0 + i;
    v32[i] = (float)v64[i];
  }
  rp10[10] = 10;
  ck_assert_ocal(ocal_csr_from_host(o.ctx, t, OCAL_I32, 10, 10, rp10, ci10,
                                    fp64 ? (const void *)v64 : (const void *)v32, &o.csr10));
  ck_assert_ocal(ocal_operator_from_csr(o.csr10, &o.op10));
  const size_t shape10[2] = {10, 1};
  ck_assert_ocal(ocal_buffer_zeros(o.ctx, t, 2, shape10, &o.x10));
  (void)ten;
  snprintf(o.mtx, sizeof o.mtx, "/tmp/ocal-check-api-null-mtx-XXXXXX");
  int fd = mkstemp(o.mtx);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq((int)write(fd, mtx_text, strlen(mtx_text)), (int)strlen(mtx_text));
  close(fd);
}

static void make_objects(void) {
  memset(&o, 0, sizeof o);
  o.ctx = fixture_ctx;
  for (int i = 0; i < 64; i++) o.host[i] = (float)(i % 7) * 0.25f + 0.5f;
  o.m44a = f32(2, 4, 4);
  o.m44b = f32(2, 4, 4);
  o.m44c = f32(2, 4, 4);
  o.x = f32(1, 4, 0);
  o.y = f32(1, 4, 0);
  o.r1 = f32(1, 1, 0);
  o.rows = f32(2, 2, 4);
  o.loss = f32(1, 2, 0);
  o.grad = f32(2, 2, 4);
  const size_t two = 2, four = 4, eight = 8;
  const int32_t lab[2] = {1, 3};
  ck_assert_ocal(ocal_buffer_from_host(o.ctx, OCAL_I32, 1, &two, lab, &o.labels));
  ck_assert_ocal(ocal_buffer_zeros(o.ctx, OCAL_U8, 1, &four, &o.mask));
  ck_assert_ocal(ocal_buffer_zeros(o.ctx, OCAL_I32, 1, &four, &o.xi));
  const size_t one = 1;
  ck_assert_ocal(ocal_buffer_zeros(o.ctx, OCAL_I64, 1, &one, &o.idx));
  ck_assert_ocal(ocal_buffer_from_host(o.ctx, OCAL_C32, 1, &eight, o.host, &o.cin));
  ck_assert_ocal(ocal_buffer_zeros(o.ctx, OCAL_C32, 1, &eight, &o.cout));
  ck_assert_ocal(ocal_program_create(o.ctx, kernel_src, NULL, &o.program));
  ck_assert_ocal(ocal_kernel_create(o.program, "fill1", &o.kernel));
  ck_assert_ocal(ocal_kernel_set_buffer(o.kernel, 0, o.y));
  ck_assert_ocal(ocal_gen_reduction(o.ctx, OCAL_F32, "0", "a + b", "x[i]", "const float *x",
                                    NULL, &o.red));
  ck_assert_ocal(ocal_gen_elementwise(o.ctx, "float *y", "y[i] = 2.0f", NULL, &o.ew));
  ck_assert_ocal(ocal_fft_desc_init(&o.desc));
  o.desc.lengths[0] = 8;
  ck_assert_ocal(ocal_fft_plan_create(o.ctx, &o.desc, &o.plan));
  ck_assert_ocal(ocal_context_enqueue_marker(o.ctx, &o.event));
  cl_context clc;
  ck_assert_ocal(ocal_context_get_cl_context(o.ctx, &clc));
  cl_int err;
  o.user_event = clCreateUserEvent(clc, &err);
  ck_assert_int_eq(err, CL_SUCCESS);
  ck_assert_int_eq(clSetUserEventStatus(o.user_event, CL_COMPLETE), CL_SUCCESS);
  ck_assert_ocal(ocal_pinned_alloc(o.ctx, 256, &o.pinned));
  snprintf(o.path, sizeof o.path, "/tmp/ocal-check-api-null-XXXXXX");
  int fd = mkstemp(o.path);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq((int)write(fd, kernel_src, strlen(kernel_src)), (int)strlen(kernel_src));
  close(fd);
  ck_assert_ocal(ocal_context_options_init(&o.options));
  make_sparse_objects();
}

static void free_objects(void) {
  ocal_buffer *bufs[] = {&o.m44a, &o.m44b, &o.m44c, &o.x,    &o.y,   &o.r1,  &o.rows,
                         &o.labels, &o.loss, &o.grad, &o.mask, &o.cin, &o.cout, &o.xi, &o.idx,
                         &o.rp,     &o.ci,   &o.x10};
  ck_assert_ocal(ocal_kernel_release(o.kernel));
  ck_assert_ocal(ocal_program_release(o.program));
  ck_assert_ocal(ocal_gen_release(o.red));
  ck_assert_ocal(ocal_gen_release(o.ew));
  ck_assert_ocal(ocal_fft_plan_release(o.plan));
  ck_assert_ocal(ocal_event_release(o.event));
  clReleaseEvent(o.user_event);
  ck_assert_ocal(ocal_pinned_free(o.ctx, o.pinned));
  ck_assert_ocal(ocal_context_finish(o.ctx));
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
    ck_assert_ocal(ocal_buffer_release(*bufs[i]));
  unlink(o.path);
  unlink(o.mtx);
  ck_assert_ocal(ocal_csr_release(o.csr));
  ck_assert_ocal(ocal_csr_release(o.csr10));
}

/* ---- the callers ------------------------------------------------------------------------ */

/* Releases what a successful creating call made (a baseline, or an allowed NULL). */
#define KEEP_OR_RELEASE(s, release, obj) \
  do {                                   \
    if ((s) == OCAL_OK) release(obj);    \
  } while (0)

static ocal_status c_gemm(int k) {
  return ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1.0, P(0, o.m44a), P(1, o.m44b), 0.0,
                   P(2, o.m44c));
}
static ocal_status c_gemv(int k) {
  return ocal_gemv(OCAL_NO_TRANS, 1.0, P(0, o.m44a), P(1, o.x), 0.0, P(2, o.y));
}
static ocal_status c_gemm_engine_query(int k) {
  const char *e, *r;
  return ocal_gemm_engine_query(P(0, o.ctx), OCAL_F32, OCAL_NO_TRANS, 8, 8, 8, 1, P(1, &e),
                                P(2, &r));
}
static ocal_status c_gemm_get_precision(int k) {
  ocal_gemm_precision p;
  int tc;
  const char *detail;
  return ocal_gemm_get_precision(P(0, o.ctx), P(1, &p), P(2, &tc), P(3, &detail));
}
static ocal_status c_blas_get_tuning(int k) {
  ocal_blas_tuning t = {sizeof t};
  return ocal_blas_get_tuning(P(0, o.ctx), OCAL_F32, P(1, &t));
}
static ocal_status c_blas_tuning_apply(int k) {
  /* A parameter text that does not parse: the baseline is a failure, so only the NULL
   * checks are compared (row flag NO_BASE); applying real parameters changes CLBlast. */
  return ocal_blas_tuning_apply(P(0, o.ctx), OCAL_F32, P(1, "not parameters"));
}
static ocal_status c_blas_tune_options_init(int k) {
  ocal_blas_tune_options t;
  return ocal_blas_tune_options_init(P(0, &t));
}
static ocal_status c_blas_tune(int k) {
  ocal_blas_tune_options t;
  ocal_blas_tune_options_init(&t);
  ocal_blas_tuning r = {sizeof r};
  return ocal_blas_tune(P(0, o.ctx), P(1, &t), P(2, &r));
}
static ocal_status c_buffer_create(int k) {
  const size_t shape[1] = {3};
  ocal_buffer b = NULL;
  ocal_status s = ocal_buffer_create(P(0, o.ctx), OCAL_F32, 1, P(1, shape), P(2, &b));
  KEEP_OR_RELEASE(s, ocal_buffer_release, b);
  return s;
}
static ocal_status c_buffer_zeros(int k) {
  const size_t shape[1] = {3};
  ocal_buffer b = NULL;
  ocal_status s = ocal_buffer_zeros(P(0, o.ctx), OCAL_F32, 1, P(1, shape), P(2, &b));
  KEEP_OR_RELEASE(s, ocal_buffer_release, b);
  return s;
}
static ocal_status c_buffer_from_host(int k) {
  const size_t shape[1] = {3};
  ocal_buffer b = NULL;
  ocal_status s =
      ocal_buffer_from_host(P(0, o.ctx), OCAL_F32, 1, P(1, shape), P(2, o.host), P(3, &b));
  KEEP_OR_RELEASE(s, ocal_buffer_release, b);
  return s;
}
static ocal_status c_buffer_release(int k) { return ocal_buffer_release(P(0, (ocal_buffer)NULL)); }
static ocal_status c_buffer_view(int k) {
  const size_t shape[1] = {2};
  ocal_buffer v = NULL;
  ocal_status s = ocal_buffer_view(P(0, o.x), 1, 1, P(1, shape), P(2, &v));
  KEEP_OR_RELEASE(s, ocal_buffer_release, v);
  return s;
}
static ocal_status c_buffer_write(int k) {
  ocal_event e = NULL;
  ocal_status s = ocal_buffer_write(P(0, o.x), 0, 4, P(1, o.host), P(2, &e));
  KEEP_OR_RELEASE(s, ocal_event_release, e);
  return s;
}
static ocal_status c_buffer_read(int k) {
  float back[4];
  ocal_event e = NULL;
  ocal_status s = ocal_buffer_read(P(0, o.x), 0, 4, P(1, back), P(2, &e));
  if (s == OCAL_OK && e) ocal_event_wait(e);
  KEEP_OR_RELEASE(s, ocal_event_release, e);
  return s;
}
static ocal_status c_buffer_copy(int k) { return ocal_buffer_copy(P(1, o.x), P(0, o.y)); }
static ocal_status c_buffer_fill(int k) {
  const float v = 1.5f;
  return ocal_buffer_fill(P(0, o.y), P(1, &v));
}
static ocal_status c_buffer_get_dtype(int k) {
  ocal_dtype t;
  return ocal_buffer_get_dtype(P(0, o.x), P(1, &t));
}
static ocal_status c_buffer_get_shape(int k) {
  int nd;
  size_t shape[OCAL_MAX_DIMS];
  return ocal_buffer_get_shape(P(0, o.x), P(1, &nd), P(2, shape));
}
static ocal_status c_buffer_get_numel(int k) {
  size_t n;
  return ocal_buffer_get_numel(P(0, o.x), P(1, &n));
}
static ocal_status c_buffer_get_nbytes(int k) {
  size_t n;
  return ocal_buffer_get_nbytes(P(0, o.x), P(1, &n));
}
static ocal_status c_buffer_get_context(int k) {
  ocal_context c;
  return ocal_buffer_get_context(P(0, o.x), P(1, &c));
}
static ocal_status c_buffer_get_cl_mem(int k) {
  cl_mem m;
  size_t off;
  return ocal_buffer_get_cl_mem(P(0, o.x), P(1, &m), P(2, &off));
}
static ocal_status c_buffer_from_cl_mem(int k) {
  cl_mem m;
  ck_assert_ocal(ocal_buffer_get_cl_mem(o.x, &m, NULL));
  const size_t shape[1] = {2};
  ocal_buffer b = NULL;
  ocal_status s = ocal_buffer_from_cl_mem(P(0, o.ctx), P(1, m), 4, OCAL_F32, 1, P(2, shape),
                                          P(3, &b));
  KEEP_OR_RELEASE(s, ocal_buffer_release, b);
  return s;
}
static ocal_status c_event_wait(int k) { return ocal_event_wait(P(0, o.event)); }
static ocal_status c_event_release(int k) { return ocal_event_release(P(0, (ocal_event)NULL)); }
static ocal_status c_event_get_cl_event(int k) {
  cl_event e;
  return ocal_event_get_cl_event(P(0, o.event), P(1, &e));
}
static ocal_status c_context_options_init(int k) {
  ocal_context_options opt;
  return ocal_context_options_init(P(0, &opt));
}
static ocal_status c_context_create(int k) {
  ocal_context c = NULL;
  ocal_status s = ocal_context_create(P(1, &o.options), P(0, &c));
  KEEP_OR_RELEASE(s, ocal_context_release, c);
  return s;
}
static ocal_status c_context_from_cl(int k) {
  cl_context clc;
  cl_device_id dev;
  cl_command_queue q;
  ck_assert_ocal(ocal_context_get_cl_context(o.ctx, &clc));
  ck_assert_ocal(ocal_context_get_cl_device(o.ctx, &dev));
  ck_assert_ocal(ocal_context_get_cl_queue(o.ctx, &q));
  ocal_context c = NULL;
  ocal_status s = ocal_context_from_cl(P(0, clc), P(1, dev), P(2, q), P(3, &o.options), P(4, &c));
  KEEP_OR_RELEASE(s, ocal_context_release, c);
  return s;
}
static ocal_status c_context_release(int k) {
  return ocal_context_release(P(0, (ocal_context)NULL));
}
static ocal_status c_context_finish(int k) { return ocal_context_finish(P(0, o.ctx)); }
static ocal_status c_context_get_device_info(int k) {
  ocal_device_info info = {sizeof info};
  return ocal_context_get_device_info(P(0, o.ctx), P(1, &info));
}
static ocal_status c_context_get_fp64(int k) {
  int f;
  return ocal_context_get_fp64(P(0, o.ctx), P(1, &f));
}
static ocal_status c_context_get_cache_stats(int k) {
  ocal_cache_stats st = {sizeof st};
  return ocal_context_get_cache_stats(P(0, o.ctx), P(1, &st));
}
static ocal_status c_context_get_cache_dir(int k) {
  const char *d;
  return ocal_context_get_cache_dir(P(0, o.ctx), P(1, &d));
}
static ocal_status c_context_get_cl_context(int k) {
  cl_context c;
  return ocal_context_get_cl_context(P(0, o.ctx), P(1, &c));
}
static ocal_status c_context_get_cl_device(int k) {
  cl_device_id d;
  return ocal_context_get_cl_device(P(0, o.ctx), P(1, &d));
}
static ocal_status c_context_get_cl_queue(int k) {
  cl_command_queue q;
  return ocal_context_get_cl_queue(P(0, o.ctx), P(1, &q));
}
static ocal_status c_setting_get(int k) {
  long long v;
  char text[16];
  /* A byte-count setting: its text out-parameter may be NULL. */
  return ocal_setting_get(P(0, "OCAL_MPI_CHUNK"), P(1, &v), P(2, text), sizeof text);
}
static ocal_status c_device_list(int k) {
  ocal_device_info infos[4] = {{sizeof infos[0]}};
  size_t n;
  return ocal_device_list(4, P(0, infos), P(1, &n));
}
static ocal_status c_device_select(int k) {
  ocal_device_info info = {sizeof info};
  /* "0:0" names a device on every machine (a GPU-only one has no "cpu"). */
  return ocal_device_select(P(0, "0:0"), P(1, &info));
}
static ocal_status c_fft_plan_create(int k) {
  ocal_fft_plan p = NULL;
  ocal_status s = ocal_fft_plan_create(P(0, o.ctx), P(1, &o.desc), P(2, &p));
  KEEP_OR_RELEASE(s, ocal_fft_plan_release, p);
  return s;
}
static ocal_status c_fft_desc_init(int k) {
  ocal_fft_desc d;
  return ocal_fft_desc_init(P(0, &d));
}
static ocal_status c_fft_execute(int k) {
  return ocal_fft_execute(P(0, o.plan), OCAL_FFT_FORWARD, P(1, o.cin), P(2, o.cout));
}
static ocal_status c_fft_plan_release(int k) {
  return ocal_fft_plan_release(P(0, (ocal_fft_plan)NULL));
}
static ocal_status c_fft_plan_get_info(int k) {
  ocal_fft_plan_info info = {sizeof info};
  return ocal_fft_plan_get_info(P(0, o.plan), P(1, &info));
}
static ocal_status c_fft_get_cache_stats(int k) {
  ocal_fft_cache_stats st = {sizeof st};
  return ocal_fft_get_cache_stats(P(0, o.ctx), P(1, &st));
}
static ocal_status c_fft_engine_available(int k) {
  int a;
  return ocal_fft_engine_available(OCAL_FFT_ENGINE_DEFAULT, P(0, &a));
}
static ocal_status c_fft_get_default_engine(int k) {
  ocal_fft_engine e;
  return ocal_fft_get_default_engine(P(0, &e));
}
static ocal_status c_program_create(int k) {
  ocal_program p = NULL;
  ocal_status s = ocal_program_create(P(0, o.ctx), P(1, kernel_src), P(2, "-DOCAL_NULL_TEST=1"),
                                      P(3, &p));
  KEEP_OR_RELEASE(s, ocal_program_release, p);
  return s;
}
static ocal_status c_program_create_from_file(int k) {
  ocal_program p = NULL;
  ocal_status s = ocal_program_create_from_file(P(0, o.ctx), P(1, (const char *)o.path),
                                                P(2, "-DOCAL_NULL_TEST=2"), P(3, &p));
  KEEP_OR_RELEASE(s, ocal_program_release, p);
  return s;
}
static ocal_status c_program_release(int k) {
  return ocal_program_release(P(0, (ocal_program)NULL));
}
static ocal_status c_kernel_create(int k) {
  ocal_kernel kk = NULL;
  ocal_status s = ocal_kernel_create(P(0, o.program), P(1, "fill1"), P(2, &kk));
  KEEP_OR_RELEASE(s, ocal_kernel_release, kk);
  return s;
}
static ocal_status c_kernel_release(int k) { return ocal_kernel_release(P(0, (ocal_kernel)NULL)); }
static ocal_status c_kernel_get_num_args(int k) {
  int n;
  return ocal_kernel_get_num_args(P(0, o.kernel), P(1, &n));
}
static ocal_status c_kernel_set_buffer(int k) {
  return ocal_kernel_set_buffer(P(0, o.kernel), 0, P(1, o.y));
}
static ocal_status c_kernel_set_scalar(int k) {
  /* fill1 has no scalar argument: the baseline fails (NO_BASE); the NULLs are checked. */
  const float v = 1.0f;
  return ocal_kernel_set_scalar(P(0, o.kernel), 0, OCAL_F32, P(1, &v));
}
static ocal_status c_kernel_set_local(int k) {
  /* fill1's argument is global: the baseline fails (NO_BASE). */
  return ocal_kernel_set_local(P(0, o.kernel), 0, 16);
}
static ocal_status c_kernel_launch(int k) {
  const size_t g[1] = {4}, l[1] = {1};
  return ocal_kernel_launch(P(0, o.kernel), 1, P(1, g), P(2, l));
}
static ocal_status c_kernel_get_cl_kernel(int k) {
  cl_kernel kk;
  return ocal_kernel_get_cl_kernel(P(0, o.kernel), P(1, &kk));
}
static ocal_status c_gen_elementwise(int k) {
  ocal_gen g = NULL;
  ocal_status s = ocal_gen_elementwise(P(0, o.ctx), P(1, "float *y"), P(2, "y[i] = 3.0f"),
                                       P(3, "#define OCAL_NULL_TEST 3\n"), P(4, &g));
  KEEP_OR_RELEASE(s, ocal_gen_release, g);
  return s;
}
static ocal_status c_gen_reduction(int k) {
  ocal_gen g = NULL;
  ocal_status s = ocal_gen_reduction(P(0, o.ctx), OCAL_F32, P(1, "0"), P(2, "a + b"),
                                     P(3, "x[i]"), P(4, "const float *x"),
                                     P(5, "#define OCAL_NULL_TEST 4\n"), P(6, &g));
  KEEP_OR_RELEASE(s, ocal_gen_release, g);
  return s;
}
static ocal_status c_gen_scan(int k) {
  ocal_gen g = NULL;
  ocal_status s = ocal_gen_scan(P(0, o.ctx), OCAL_F32, P(1, "0"), P(2, "a + b"), P(3, "x[i]"),
                                P(4, "const float *x"), P(5, "#define OCAL_NULL_TEST 5\n"), 0,
                                P(6, &g));
  KEEP_OR_RELEASE(s, ocal_gen_release, g);
  return s;
}
static ocal_status c_gen_run(int k) {
  const ocal_gen_arg args[1] = {OCAL_GEN_BUFFER(o.x)};
  return ocal_gen_run(P(0, o.red), OCAL_GEN_AUTO, 1, P(1, args), P(2, o.r1));
}
static ocal_status c_gen_run_axis(int k) {
  const ocal_gen_arg args[1] = {OCAL_GEN_BUFFER(o.x)};
  return ocal_gen_run_axis(P(0, o.red), OCAL_AXIS_ALL, 1, P(1, args), P(2, o.r1));
}
static ocal_status c_gen_get_source(int k) {
  const char *src;
  return ocal_gen_get_source(P(0, o.red), P(1, &src));
}
static ocal_status c_gen_release(int k) { return ocal_gen_release(P(0, (ocal_gen)NULL)); }
static ocal_status c_memory_get_stats(int k) {
  ocal_memory_stats st = {sizeof st};
  return ocal_memory_get_stats(P(0, o.ctx), P(1, &st));
}
static ocal_status c_memory_trim(int k) { return ocal_memory_trim(P(0, o.ctx)); }
static ocal_status c_memory_set_pool_limit(int k) {
  return ocal_memory_set_pool_limit(P(0, o.ctx), (uint64_t)1 << 30);
}
static ocal_status c_pinned_alloc(int k) {
  void *p = NULL;
  ocal_status s = ocal_pinned_alloc(P(0, o.ctx), 64, P(1, &p));
  if (s == OCAL_OK) ocal_pinned_free(o.ctx, p);
  return s;
}
static ocal_status c_pinned_free(int k) {
  return ocal_pinned_free(P(0, o.ctx), P(1, (void *)NULL));
}
static ocal_status c_pinned_query(int k) {
  int pinned;
  cl_mem m;
  size_t off;
  return ocal_pinned_query(P(0, o.ctx), P(1, o.pinned), P(2, &pinned), P(3, &m), P(4, &off));
}
static ocal_status c_transfer_write(int k) {
  ocal_event e = NULL;
  ocal_status s =
      ocal_transfer_write(P(0, o.x), 0, 4, P(1, o.host), 1, P(2, &o.event), P(3, &e));
  if (s == OCAL_OK && e) ocal_event_wait(e);
  KEEP_OR_RELEASE(s, ocal_event_release, e);
  return s;
}
static ocal_status c_transfer_read(int k) {
  float back[4];
  ocal_event e = NULL;
  ocal_status s = ocal_transfer_read(P(0, o.x), 0, 4, P(1, back), 1, P(2, &o.event), P(3, &e));
  if (s == OCAL_OK && e) ocal_event_wait(e);
  else if (s == OCAL_OK) ocal_context_finish(o.ctx);
  KEEP_OR_RELEASE(s, ocal_event_release, e);
  return s;
}
static ocal_status c_context_enqueue_wait(int k) {
  return ocal_context_enqueue_wait(P(0, o.ctx), 1, P(1, &o.event));
}
static ocal_status c_context_enqueue_marker(int k) {
  ocal_event e = NULL;
  ocal_status s = ocal_context_enqueue_marker(P(0, o.ctx), P(1, &e));
  KEEP_OR_RELEASE(s, ocal_event_release, e);
  return s;
}
static ocal_status c_event_from_cl(int k) {
  ocal_event e = NULL;
  ocal_status s = ocal_event_from_cl(P(0, o.user_event), P(1, &e));
  KEEP_OR_RELEASE(s, ocal_event_release, e);
  return s;
}
static ocal_status c_softmax(int k) { return ocal_softmax(P(0, o.rows), -1, P(1, o.grad)); }
static ocal_status c_log_softmax(int k) {
  return ocal_log_softmax(P(0, o.rows), -1, P(1, o.grad));
}
static ocal_status c_softmax_cross_entropy(int k) {
  return ocal_softmax_cross_entropy(P(0, o.rows), P(1, o.labels), P(2, o.loss), P(3, o.grad));
}
static ocal_status c_unary(int k) { return ocal_unary(OCAL_UNARY_NEG, P(0, o.x), P(1, o.y)); }
static ocal_status c_binary(int k) {
  return ocal_binary(OCAL_BINARY_ADD, P(0, o.x), P(1, o.x), P(2, o.y));
}
static ocal_status c_binary_scalar(int k) {
  return ocal_binary_scalar(OCAL_BINARY_ADD, P(0, o.x), 1.0, P(1, o.y));
}
static ocal_status c_scalar_binary(int k) {
  return ocal_scalar_binary(OCAL_BINARY_ADD, 1.0, P(0, o.x), P(1, o.y));
}
static ocal_status c_where(int k) {
  return ocal_where(P(0, o.mask), P(1, o.x), P(2, o.x), P(3, o.y));
}
static ocal_status c_axpy(int k) { return ocal_axpy(0.5, P(0, o.x), P(1, o.y)); }
static ocal_status c_axpby(int k) { return ocal_axpby(0.5, P(0, o.x), 0.5, P(1, o.y)); }
static ocal_status c_scale(int k) { return ocal_scale(1.0, P(0, o.y)); }
static ocal_status c_cast(int k) { return ocal_cast(P(0, o.x), P(1, o.xi)); }
static ocal_status c_arange(int k) { return ocal_arange(0.0, 1.0, P(0, o.y)); }
static ocal_status c_linspace(int k) { return ocal_linspace(0.0, 1.0, P(0, o.y)); }
static ocal_status c_random_uniform(int k) {
  return ocal_random_uniform(1, 0, 0.0, 1.0, P(0, o.y));
}
static ocal_status c_random_normal(int k) { return ocal_random_normal(1, 0, 0.0, 1.0, P(0, o.y)); }
static ocal_status c_reduce_dtype(int k) {
  ocal_dtype t;
  return ocal_reduce_dtype(OCAL_REDUCE_SUM, OCAL_F32, P(0, &t));
}
static ocal_status c_reduce(int k) {
  return ocal_reduce(OCAL_REDUCE_SUM, P(0, o.x), OCAL_AXIS_ALL, P(1, o.r1));
}
#define AXIS_ALL_CALLER(fn)                                                     \
  static ocal_status c_##fn(int k) { return ocal_##fn(P(0, o.x), OCAL_AXIS_ALL, P(1, o.r1)); }
AXIS_ALL_CALLER(sum)
AXIS_ALL_CALLER(prod)
AXIS_ALL_CALLER(amin)
AXIS_ALL_CALLER(amax)
AXIS_ALL_CALLER(mean)
AXIS_ALL_CALLER(norm2)
static ocal_status c_argmin(int k) { return ocal_argmin(P(0, o.x), 0, P(1, o.idx)); }
static ocal_status c_argmax(int k) { return ocal_argmax(P(0, o.x), 0, P(1, o.idx)); }
static ocal_status c_var(int k) { return ocal_var(P(0, o.x), OCAL_AXIS_ALL, 0, P(1, o.r1)); }
static ocal_status c_std(int k) { return ocal_std(P(0, o.x), OCAL_AXIS_ALL, 0, P(1, o.r1)); }
static ocal_status c_dot(int k) {
  return ocal_dot(P(0, o.x), P(1, o.y), OCAL_AXIS_ALL, P(2, o.r1));
}
static ocal_status c_reduce_to_host(int k) {
  float r;
  return ocal_reduce_to_host(OCAL_REDUCE_SUM, P(0, o.x), OCAL_F32, P(1, &r));
}
static ocal_status c_dot_to_host(int k) {
  float r;
  return ocal_dot_to_host(P(0, o.x), P(1, o.y), OCAL_F32, P(2, &r));
}
static ocal_status c_scan_dtype(int k) {
  ocal_dtype t;
  return ocal_scan_dtype(OCAL_SCAN_SUM, OCAL_F32, P(0, &t));
}
static ocal_status c_scan(int k) {
  return ocal_scan(OCAL_SCAN_SUM, P(0, o.x), 0, 0, P(1, o.y));
}
static ocal_status c_cumsum(int k) { return ocal_cumsum(P(0, o.x), 0, P(1, o.y)); }
static ocal_status c_cummax(int k) { return ocal_cummax(P(0, o.x), 0, P(1, o.y)); }
static ocal_status c_dtype_from_name(int k) {
  ocal_dtype t;
  return ocal_dtype_from_name(P(0, "f32"), P(1, &t));
}
static ocal_status c_half_encode(int k) {
  const float f[2] = {1.0f, -0.5f};
  uint16_t h[2];
  return ocal_half_encode(OCAL_F16, P(0, f), P(1, h), 2);
}
static ocal_status c_half_decode(int k) {
  const uint16_t h[2] = {0x3c00, 0xbf00};
  float f[2];
  return ocal_half_decode(OCAL_BF16, P(0, h), P(1, f), 2);
}

/* status.h: ocal_error_set's func and fmt may be NULL (documented); it returns its status.
 * Called through a pointer so that the format check does not see the NULL format. */
static ocal_status c_error_set(int k) {
  ocal_status (*volatile fn)(ocal_status, const char *, const char *, ...) = ocal_error_set;
  ocal_status s = fn(OCAL_OK, P(0, "ocal_error_set_test"), P(1, "value %d"), 7);
  if (s != OCAL_OK) return OCAL_INTERNAL;
  const char *want = k == 0   ? "value 7"
                     : k == 1 ? "ocal_error_set_test"
                              : "ocal_error_set_test: value 7";
  if (strcmp(ocal_last_error(), want) != 0) return OCAL_INTERNAL;
  return fn(OCAL_INVALID_ARGUMENT, NULL, NULL) == OCAL_INVALID_ARGUMENT ? OCAL_OK : OCAL_INTERNAL;
}

/* sparse.h */
static ocal_status c_csr_from_host(int k) {
  ocal_csr a = NULL;
  ocal_status s = ocal_csr_from_host(P(0, o.ctx), OCAL_F32, OCAL_I32, 4, 4, P(1, csr_rp),
                                     P(2, csr_ci), P(3, csr_v), P(4, &a));
  KEEP_OR_RELEASE(s, ocal_csr_release, a);
  return s;
}
static ocal_status c_csr_from_coo(int k) {
  ocal_csr a = NULL;
  ocal_status s = ocal_csr_from_coo(P(0, o.ctx), OCAL_F32, OCAL_I32, 4, 4, 4, P(1, csr_ci),
                                    P(2, csr_ci), P(3, csr_v), P(4, &a));
  KEEP_OR_RELEASE(s, ocal_csr_release, a);
  return s;
}
static ocal_status c_csr_from_buffers(int k) {
  ocal_csr a = NULL;
  ocal_status s = ocal_csr_from_buffers(P(0, o.rp), P(1, o.ci), P(2, o.x), 4, P(3, &a));
  KEEP_OR_RELEASE(s, ocal_csr_release, a);
  return s;
}
static ocal_status c_csr_read_mtx(int k) {
  ocal_csr a = NULL;
  ocal_status s = ocal_csr_read_mtx(P(0, o.ctx), P(1, (const char *)o.mtx), OCAL_F32, OCAL_I32,
                                    P(2, &a));
  KEEP_OR_RELEASE(s, ocal_csr_release, a);
  return s;
}
static ocal_status c_csr_release(int k) { return ocal_csr_release(P(0, (ocal_csr)NULL)); }
static ocal_status c_csr_get_shape(int k) {
  size_t r, c;
  return ocal_csr_get_shape(P(0, o.csr), P(1, &r), P(2, &c));
}
static ocal_status c_csr_get_nnz(int k) {
  size_t n;
  return ocal_csr_get_nnz(P(0, o.csr), P(1, &n));
}
static ocal_status c_csr_get_dtypes(int k) {
  ocal_dtype v, i;
  return ocal_csr_get_dtypes(P(0, o.csr), P(1, &v), P(2, &i));
}
static ocal_status c_csr_get_context(int k) {
  ocal_context c;
  return ocal_csr_get_context(P(0, o.csr), P(1, &c));
}
static ocal_status c_csr_get_spmv_kernel(int k) {
  const char *n;
  return ocal_csr_get_spmv_kernel(P(0, o.csr), P(1, &n));
}
static ocal_status c_csr_diagonal(int k) { return ocal_csr_diagonal(P(0, o.csr), P(1, o.y)); }
static ocal_status c_spmv(int k) {
  return ocal_spmv(OCAL_NO_TRANS, 1.0, P(0, o.csr), P(1, o.x), 0.0, P(2, o.y));
}
static ocal_status c_spmm(int k) {
  return ocal_spmm(OCAL_NO_TRANS, 1.0, P(0, o.csr), P(1, o.x), 0.0, P(2, o.y));
}
static ocal_status c_operator_from_csr(int k) {
  ocal_operator op;
  return ocal_operator_from_csr(P(0, o.csr), P(1, &op));
}
static ocal_status c_cg_options_init(int k) {
  ocal_cg_options opt;
  return ocal_cg_options_init(P(0, &opt));
}
static ocal_status c_cg(int k) {
  ocal_cg_options opt;
  ocal_cg_options_init(&opt);
  ocal_cg_result res = {sizeof res};
  return ocal_cg(P(0, (const ocal_operator *)&o.op), P(1, o.x), P(2, o.y), P(3, &opt),
                 P(4, &res));
}
static ocal_status c_lobpcg_options_init(int k) {
  ocal_lobpcg_options opt;
  return ocal_lobpcg_options_init(P(0, &opt));
}
static ocal_status c_lobpcg(int k) {
  ocal_lobpcg_options opt;
  ocal_lobpcg_options_init(&opt);
  ocal_lobpcg_result res = {sizeof res};
  double ev[1], rn[1];
  return ocal_lobpcg(P(0, (const ocal_operator *)&o.op10), P(1, o.x10), P(2, &opt), P(3, ev),
                     P(4, rn), P(5, &res));
}

/* The functions that return a value, not a status, take no pointer: they must answer any
 * argument, out-of-range enums included, with something usable. */
static ocal_status c_no_pointers(int k) {
  (void)k;
  const char *texts[] = {ocal_device_type_name((ocal_device_type)99),
                         ocal_unary_op_name((ocal_unary_op)-5),
                         ocal_binary_op_name((ocal_binary_op)1000),
                         ocal_reduce_op_name((ocal_reduce_op)77),
                         ocal_status_name((ocal_status)-12345),
                         ocal_status_description((ocal_status)12345),
                         ocal_last_error(),
                         ocal_dtype_name((ocal_dtype)999),
                         ocal_version_string(),
                         ocal_cl_error_name(-9999),
                         ocal_cl_error_name(0),
                         ocal_fft_engine_name((ocal_fft_engine)-1),
                         ocal_lobpcg_stop_name((ocal_lobpcg_stop)-1),
                         ocal_fft_kind_name((ocal_fft_kind)9),
                         ocal_fft_direction_name((ocal_fft_direction)0),
                         ocal_fft_norm_name((ocal_fft_norm)-3),
                         ocal_transpose_name((ocal_transpose)2),
                         ocal_blas_tuning_source_name((ocal_blas_tuning_source)-1),
                         ocal_gemm_precision_name((ocal_gemm_precision)7),
                         ocal_scan_op_name((ocal_scan_op)5),
                         ocal_cg_precond_name((ocal_cg_precond)-2)};
  for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
    if (!texts[i]) return OCAL_INTERNAL;
  if (ocal_dtype_size((ocal_dtype)999) != 0 || ocal_version() == 0) return OCAL_INTERNAL;
  return OCAL_OK;
}

/* ---- the table -------------------------------------------------------------------------- */

enum {
  NO_BASE = 1u << 30, /* the k = -1 call is not expected to succeed (see its caller) */
  SKIP = 1u << 29,    /* allowed NULLs that would start a long run: not called */
};
#define ALLOW(i) (1u << (i))

typedef struct api_row {
  const char *name;
  int nptr;          /* pointer arguments, handles included */
  unsigned flags;    /* ALLOW(i): NULL for argument i is documented as accepted */
  ocal_status (*call)(int k);
  const char *also;  /* further functions this row covers (no pointer arguments) */
} api_row;

#define ROW(fn, n, fl) {"ocal_" #fn, n, fl, c_##fn, NULL}

static const api_row rows[] = {
    /* blas.h */
    ROW(gemm, 3, 0), ROW(gemm_engine_query, 3, 0), ROW(gemv, 3, 0),
    ROW(gemm_get_precision, 4, ALLOW(3)),
    ROW(blas_get_tuning, 2, 0), ROW(blas_tuning_apply, 2, NO_BASE),
    ROW(blas_tune_options_init, 1, 0),
    /* options NULL = defaults and result NULL are allowed, but start a tuning run */
    ROW(blas_tune, 3, NO_BASE | SKIP | ALLOW(1) | ALLOW(2)),
    /* buffer.h */
    ROW(buffer_create, 3, 0), ROW(buffer_zeros, 3, 0), ROW(buffer_from_host, 4, 0),
    ROW(buffer_release, 1, NO_BASE | ALLOW(0)), ROW(buffer_view, 3, 0),
    ROW(buffer_write, 3, ALLOW(2)), ROW(buffer_read, 3, ALLOW(2)), ROW(buffer_copy, 2, 0),
    ROW(buffer_fill, 2, 0), ROW(buffer_get_dtype, 2, 0), ROW(buffer_get_shape, 3, 0),
    ROW(buffer_get_numel, 2, 0), ROW(buffer_get_nbytes, 2, 0), ROW(buffer_get_context, 2, 0),
    ROW(buffer_get_cl_mem, 3, ALLOW(2)), ROW(buffer_from_cl_mem, 4, 0), ROW(event_wait, 1, 0), ROW(event_release, 1, NO_BASE | ALLOW(0)),
    ROW(event_get_cl_event, 2, 0),
    /* context.h */
    ROW(context_options_init, 1, 0), ROW(context_create, 2, ALLOW(1)),
    ROW(context_from_cl, 5, ALLOW(2) | ALLOW(3)),
    ROW(context_release, 1, NO_BASE | ALLOW(0)), ROW(context_finish, 1, 0), ROW(context_get_device_info, 2, 0),
    ROW(context_get_fp64, 2, 0), ROW(context_get_cache_stats, 2, 0), ROW(context_get_cache_dir, 2, 0),
    ROW(context_get_cl_context, 2, 0), ROW(context_get_cl_device, 2, 0), ROW(context_get_cl_queue, 2, 0),
    ROW(setting_get, 3, ALLOW(2)),
    /* device.h (selector NULL: OCAL_DEVICE or the default order) */
    ROW(device_list, 2, 0), ROW(device_select, 2, ALLOW(0)),
    /* fft.h */
    ROW(fft_desc_init, 1, 0), ROW(fft_plan_create, 3, 0), ROW(fft_execute, 3, 0),
    ROW(fft_plan_release, 1, NO_BASE | ALLOW(0)), ROW(fft_plan_get_info, 2, 0),
    ROW(fft_get_cache_stats, 2, 0), ROW(fft_engine_available, 1, 0),
    ROW(fft_get_default_engine, 1, 0),
    /* kernel.h (options and preambles are optional) */
    ROW(program_create, 4, ALLOW(2)), ROW(program_create_from_file, 4, ALLOW(2)),
    ROW(program_release, 1, NO_BASE | ALLOW(0)), ROW(kernel_create, 3, 0),
    ROW(kernel_release, 1, NO_BASE | ALLOW(0)), ROW(kernel_get_num_args, 2, 0),
    ROW(kernel_set_buffer, 2, 0), ROW(kernel_set_scalar, 2, NO_BASE),
    ROW(kernel_set_local, 1, NO_BASE), ROW(kernel_launch, 3, ALLOW(2)),
    ROW(kernel_get_cl_kernel, 2, 0), ROW(gen_elementwise, 5, ALLOW(3)),
    ROW(gen_reduction, 7, ALLOW(5)), ROW(gen_scan, 7, ALLOW(5)), ROW(gen_run, 3, 0),
    ROW(gen_run_axis, 3, 0), ROW(gen_get_source, 2, 0), ROW(gen_release, 1, NO_BASE | ALLOW(0)),
    /* memory.h */
    ROW(memory_get_stats, 2, 0), ROW(memory_trim, 1, 0), ROW(memory_set_pool_limit, 1, 0),
    ROW(pinned_alloc, 2, 0), ROW(pinned_free, 2, NO_BASE | ALLOW(1)),
    ROW(pinned_query, 5, ALLOW(1) | ALLOW(3) | ALLOW(4)), ROW(transfer_write, 4, 0),
    ROW(transfer_read, 4, 0), ROW(context_enqueue_wait, 2, 0), ROW(context_enqueue_marker, 2, 0),
    ROW(event_from_cl, 2, 0),
    /* nn.h (loss and grad are optional outputs) */
    ROW(softmax, 2, 0), ROW(log_softmax, 2, 0),
    ROW(softmax_cross_entropy, 4, ALLOW(2) | ALLOW(3)),
    /* ops.h */
    ROW(unary, 2, 0), ROW(binary, 3, 0), ROW(binary_scalar, 2, 0), ROW(scalar_binary, 2, 0),
    ROW(where, 4, 0), ROW(axpy, 2, 0), ROW(axpby, 2, 0), ROW(scale, 1, 0), ROW(cast, 2, 0),
    ROW(arange, 1, 0), ROW(linspace, 1, 0), ROW(random_uniform, 1, 0), ROW(random_normal, 1, 0),
    /* reduce.h */
    ROW(reduce_dtype, 1, 0), ROW(reduce, 2, 0), ROW(sum, 2, 0), ROW(prod, 2, 0),
    ROW(amin, 2, 0), ROW(amax, 2, 0), ROW(argmin, 2, 0), ROW(argmax, 2, 0), ROW(mean, 2, 0),
    ROW(norm2, 2, 0), ROW(var, 2, 0), ROW(std, 2, 0), ROW(dot, 3, 0),
    ROW(reduce_to_host, 2, 0), ROW(dot_to_host, 3, 0), ROW(scan_dtype, 1, 0), ROW(scan, 2, 0),
    ROW(cumsum, 2, 0), ROW(cummax, 2, 0),
    /* types.h, status.h, version.h, and the value-returning functions of the others */
    ROW(dtype_from_name, 2, 0), ROW(half_encode, 2, 0), ROW(half_decode, 2, 0),
    ROW(error_set, 2, ALLOW(0) | ALLOW(1)),
    /* sparse.h (LOBPCG's residual norms, and CG's and LOBPCG's options and results, are
     * optional) */
    ROW(csr_from_host, 5, 0), ROW(csr_from_coo, 5, 0), ROW(csr_from_buffers, 4, 0),
    ROW(csr_read_mtx, 3, 0), ROW(csr_release, 1, NO_BASE | ALLOW(0)), ROW(csr_get_shape, 3, 0),
    ROW(csr_get_nnz, 2, 0), ROW(csr_get_dtypes, 3, ALLOW(1) | ALLOW(2)), ROW(csr_get_context, 2, 0),
    ROW(csr_get_spmv_kernel, 2, 0), ROW(csr_diagonal, 2, 0), ROW(spmv, 3, 0), ROW(spmm, 3, 0),
    ROW(operator_from_csr, 2, 0), ROW(cg_options_init, 1, 0),
    ROW(cg, 5, ALLOW(3) | ALLOW(4)), ROW(lobpcg_options_init, 1, 0),
    ROW(lobpcg, 6, ALLOW(2) | ALLOW(4) | ALLOW(5)),
    {"(value-returning functions)", 0, 0, c_no_pointers,
     "ocal_device_type_name ocal_unary_op_name ocal_binary_op_name ocal_reduce_op_name "
     "ocal_status_name ocal_status_description ocal_last_error ocal_dtype_size "
     "ocal_dtype_name ocal_version ocal_version_string ocal_cl_error_name ocal_fft_engine_name "
     "ocal_lobpcg_stop_name ocal_fft_kind_name ocal_fft_direction_name ocal_fft_norm_name "
     "ocal_transpose_name ocal_blas_tuning_source_name ocal_gemm_precision_name "
     "ocal_scan_op_name ocal_cg_precond_name"},
};
#define NROWS (int)(sizeof rows / sizeof rows[0])

/* The row being called, named on stderr if it crashes (Check then reports only a signal). */
static const char *volatile current_row = "";
static int current_arg = -2;

static void crash_report(int sig) {
  char msg[256];
  int n = snprintf(msg, sizeof msg, "check_api_null: signal %d in %s (NULL argument %d)\n", sig,
                   current_row, current_arg);
  if (n > 0) (void)!write(2, msg, (size_t)n);
  signal(sig, SIG_DFL);
  raise(sig);
}

/* All rows in one process, on one set of objects: a process per row took 40 s. */
START_TEST(test_null_arguments) {
  make_objects();
  signal(SIGSEGV, crash_report);
  signal(SIGBUS, crash_report);
  signal(SIGABRT, crash_report);
  for (int i = 0; i < NROWS; i++) {
    const api_row *r = &rows[i];
    current_row = r->name;
    current_arg = -1;
    if (!(r->flags & NO_BASE)) {
      ocal_status s = r->call(-1);
      ck_assert_msg(s == OCAL_OK, "%s with valid arguments returned %s: %s", r->name,
                    ocal_status_name(s), ocal_last_error());
    }
    for (int k = 0; k < r->nptr; k++) {
      int allowed = (r->flags & ALLOW(k)) != 0;
      if (allowed && (r->flags & SKIP)) continue;
      current_arg = k;
      ocal_status s = r->call(k);
      if (allowed) {
        ck_assert_msg(s == OCAL_OK, "%s with NULL pointer argument %d (documented as "
                      "accepted) returned %s: %s", r->name, k, ocal_status_name(s),
                      ocal_last_error());
      } else {
        ck_assert_msg(s != OCAL_OK, "%s accepted NULL for pointer argument %d", r->name, k);
        ck_assert_msg(strstr(ocal_last_error(), r->name) != NULL,
                      "%s with NULL pointer argument %d returned %s; the message does not "
                      "name the function: '%s'", r->name, k, ocal_status_name(s),
                      ocal_last_error());
      }
    }
  }
  signal(SIGSEGV, SIG_DFL);
  signal(SIGBUS, SIG_DFL);
  signal(SIGABRT, SIG_DFL);
  ck_assert_ocal(ocal_context_finish(o.ctx));
  free_objects();
}
END_TEST

/* The guard: every function the public headers declare has a row. */
static int in_table(const char *name) {
  for (int i = 0; i < NROWS; i++) {
    if (strcmp(rows[i].name, name) == 0) return 1;
    if (rows[i].also) {
      const char *p = rows[i].also;
      size_t len = strlen(name);
      while ((p = strstr(p, name)) != NULL) {
        if ((p == rows[i].also || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0')) return 1;
        p += len;
      }
    }
  }
  return 0;
}

/* Every header of include/ocal, read from the directory so that a new header cannot be
 * forgotten; version.h.in stands for the generated version.h. mpi.h is left out: its
 * functions need MPI_Init, which this program does not call; tests/mpi_collectives.c
 * (run by tests/mpi.sh under mpirun) calls each of them with NULL for each pointer. */
static int is_public_header(const char *name) {
  size_t len = strlen(name);
  if (strcmp(name, "mpi.h") == 0) return 0;
  if (strcmp(name, "version.h.in") == 0) return 1;
  return len > 2 && strcmp(name + len - 2, ".h") == 0 && strcmp(name, "version.h") != 0;
}

START_TEST(test_table_covers_every_public_function) {
  DIR *dir = opendir(OCAL_PUBLIC_HEADER_DIR);
  ck_assert_msg(dir != NULL, "cannot open %s", OCAL_PUBLIC_HEADER_DIR);
  int found = 0, headers = 0;
  struct dirent *de;
  while ((de = readdir(dir)) != NULL) {
    if (!is_public_header(de->d_name)) continue;
    headers++;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", OCAL_PUBLIC_HEADER_DIR, de->d_name);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot read %s", path);
    char line[1024];
    while (fgets(line, sizeof line, f)) {
      const char *p = strstr(line, "OCAL_API ");
      if (p != line) continue; /* declarations start their line with OCAL_API */
      const char *paren = strchr(p, '(');
      if (!paren) continue;
      const char *end = paren;
      while (end > p && (end[-1] == ' ')) end--;
      const char *start = end;
      while (start > p && (start[-1] == '_' || (start[-1] >= 'a' && start[-1] <= 'z') ||
                           (start[-1] >= '0' && start[-1] <= '9')))
        start--;
      char name[128];
      snprintf(name, sizeof name, "%.*s", (int)(end - start), start);
      ck_assert_msg(in_table(name), "%s declares %s, which tests/check_api_null.c's table "
                    "lacks: add a row that calls it with NULL for each pointer argument",
                    de->d_name, name);
      found++;
    }
    fclose(f);
  }
  closedir(dir);
  /* blas buffer cl context device export fft kernel memory nn ops reduce sparse status
   * types version.h.in: a directory read that found fewer went wrong. */
  ck_assert_int_ge(headers, 16);
  ck_assert_int_ge(found, 140);
}
END_TEST

int main(void) {
  Suite *s = suite_create("api_null");
  TCase *tc = fixture_tcase("null");
  tcase_add_test(tc, test_null_arguments);
  tcase_add_test(tc, test_table_covers_every_public_function);
  suite_add_tcase(s, tc);
  return fixture_run(s);
}
