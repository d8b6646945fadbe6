/* ocal tests — raw kernels (include/ocal/kernel.h, src/kernel/kernel.c): programs built from
 * strings and files, kernels over 1-, 2- and 3-D ranges of odd sizes, scalars of every
 * element type, local memory, the build log with the user's line numbers, argument and
 * launch-size errors, and a disk-cache hit in a second (exec'ed) process. */
#include "fixture.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *const scale_src =
    "__kernel void scale(__global float *y, __global const float *x, const float a,\n"
    "                    const ulong n) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (i < n) y[i] = a * x[i];\n"
    "}\n";

static void random_floats(float *x, size_t n, uint64_t seed) {
  uint64_t st = seed;
  for (size_t i = 0; i < n; i++) x[i] = (float)((double)(fixture_random(&st) >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static ocal_kernel make_kernel(const char *src, const char *options, const char *name) {
  ocal_program p = NULL;
  ocal_kernel k = NULL;
  ck_assert_ocal(ocal_program_create(fixture_ctx, src, options, &p));
  ck_assert_ocal(ocal_kernel_create(p, name, &k));
  ck_assert_ocal(ocal_program_release(p)); /* the kernel outlives the program handle */
  return k;
}

/* y = a * x over n elements, with ocal's local size or the given one. */
static void check_scale(size_t n, const size_t *local) {
  float *x = fixture_malloc(n * sizeof *x), *y = fixture_malloc(n * sizeof *y);
  random_floats(x, n, n + 1);
  ocal_buffer bx, by;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_F32, 1, &n, x, &bx));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &n, &by));
  ocal_kernel k = make_kernel(scale_src, NULL, "scale");
  int nargs = 0;
  ck_assert_ocal(ocal_kernel_get_num_args(k, &nargs));
  ck_assert_int_eq(nargs, 4);
  float a = 2.5f;
  cl_ulong cn = n;
  ck_assert_ocal(ocal_kernel_set_buffer(k, 0, by));
  ck_assert_ocal(ocal_kernel_set_buffer(k, 1, bx));
  ck_assert_ocal(ocal_kernel_set_scalar(k, 2, OCAL_F32, &a));
  ck_assert_ocal(ocal_kernel_set_scalar(k, 3, OCAL_U64, &cn));
  /* The kernel holds its buffers: releasing ours first is fine. */
  ck_assert_ocal(ocal_buffer_release(bx));
  ck_assert_ocal(ocal_kernel_launch(k, 1, &n, local));
  ck_assert_ocal(ocal_buffer_read(by, 0, n, y, NULL));
  for (size_t i = 0; i < n; i++)
    ck_assert_msg(y[i] == a * x[i], "n=%zu: y[%zu] = %g, expected %g", n, i, y[i], a * x[i]);
  ck_assert_ocal(ocal_kernel_release(k));
  ck_assert_ocal(ocal_buffer_release(by));
  free(x);
  free(y);
}

START_TEST(test_raw_1d_odd_sizes) {
  check_scale(1, NULL);
  check_scale(1001, NULL);
  check_scale(100003, NULL);
  size_t local = 64;
  check_scale(1001, &local); /* rounded up to 1024 work-items; the kernel guards */
}
END_TEST

/* Every element of a 2-D or 3-D range writes its coordinates. */
static const char *const coords_src =
    "__kernel void coords(__global uint *out, const uint nx, const uint ny, const uint nz) {\n"
    "  uint x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);\n"
    "  if (x >= nx || y >= ny || z >= nz) return;\n"
    "  out[(z * ny + y) * nx + x] = x + 1000u * y + 1000000u * z;\n"
    "}\n";

static void check_coords(int ndim, const size_t *dims, const size_t *local) {
  size_t nx = dims[0], ny = ndim > 1 ? dims[1] : 1, nz = ndim > 2 ? dims[2] : 1;
  size_t n = nx * ny * nz;
  ocal_buffer out;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_U32, 1, &n, &out));
  ocal_kernel k = make_kernel(coords_src, NULL, "coords");
  cl_uint cx = (cl_uint)nx, cy = (cl_uint)ny, cz = (cl_uint)nz;
  ck_assert_ocal(ocal_kernel_set_buffer(k, 0, out));
  ck_assert_ocal(ocal_kernel_set_scalar(k, 1, OCAL_U32, &cx));
  ck_assert_ocal(ocal_kernel_set_scalar(k, 2, OCAL_U32, &cy));
  ck_assert_ocal(ocal_kernel_set_scalar(k, 3, OCAL_U32, &cz));
  ck_assert_ocal(ocal_kernel_launch(k, ndim, dims, local));
  uint32_t *h = fixture_malloc(n * sizeof *h);
  ck_assert_ocal(ocal_buffer_read(out, 0, n, h, NULL));
  for (size_t z = 0; z < nz; z++)
    for (size_t y = 0; y < ny; y++)
      for (size_t x = 0; x < nx; x++) {
        uint32_t want = (uint32_t)(x + 1000 * y + 1000000 * z);
        ck_assert_msg(h[(z * ny + y) * nx + x] == want, "%d-D: (%zu, %zu, %zu) holds %u", ndim, x,
                      y, z, h[(z * ny + y) * nx + x]);
      }
  free(h);
  ck_assert_ocal(ocal_kernel_release(k));
  ck_assert_ocal(ocal_buffer_release(out));
}

START_TEST(test_raw_2d_3d_odd_sizes) {
  const size_t d2[2] = {101, 37}, d3[3] = {37, 23, 5}, thin[2] = {1, 999};
  check_coords(2, d2, NULL);
  check_coords(3, d3, NULL);
  check_coords(2, thin, NULL);
  const size_t l2[2] = {8, 4}, l3[3] = {4, 4, 2};
  check_coords(2, d2, l2);
  check_coords(3, d3, l3);
}
END_TEST

/* A scalar of every element type goes in and comes back out bit for bit. */
START_TEST(test_every_scalar_type) {
  for (int d = 0; d < OCAL_DTYPE_COUNT; d++) {
    ocal_dtype t = (ocal_dtype)d;
    if (!fixture_dtype_usable(t)) continue;
    /* An f16 value (not a pointer) needs cl_khr_fp16 in the kernel, which devices may lack
     * (NVIDIA's driver has none); bf16 travels as its bits, a ushort. */
    if (t == OCAL_F16) continue;
    char options[64];
    const char *cl = t == OCAL_F32 ? "float" : t == OCAL_F64 ? "double" : t == OCAL_I32 ? "int"
                   : t == OCAL_U32 ? "uint" : t == OCAL_I64 ? "long" : t == OCAL_U64 ? "ulong"
                   : t == OCAL_U8 ? "uchar" : t == OCAL_C32 ? "float2" : t == OCAL_BF16 ? "ushort"
                   : "double2";
    snprintf(options, sizeof options, "-DT=%s", cl);
    const char *src =
        "#ifdef cl_khr_fp64\n#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#endif\n"
        "__kernel void put(__global T *out, const T v, const uint n) {\n"
        "  if (get_global_id(0) < n) out[get_global_id(0)] = v;\n"
        "}\n";
    ocal_kernel k = make_kernel(src, options, "put");
    size_t n = 3, es = ocal_dtype_size(t);
    unsigned char value[16], back[48];
    fixture_random_bytes(value, sizeof value, 100 + (uint64_t)d);
    if (t == OCAL_F32 || t == OCAL_C32) {
      float f[2] = {1.25f + (float)d, -3.5f};
      memcpy(value, f, sizeof f);
    } else if (t == OCAL_F64 || t == OCAL_C64) {
      double f[2] = {1.0 / 3.0, -7.25};
      memcpy(value, f, sizeof f);
    }
    ocal_buffer out;
    ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, t, 1, &n, &out));
    cl_uint cn = (cl_uint)n;
    ck_assert_ocal(ocal_kernel_set_buffer(k, 0, out));
    ck_assert_ocal(ocal_kernel_set_scalar(k, 1, t, value));
    ck_assert_ocal(ocal_kernel_set_scalar(k, 2, OCAL_U32, &cn));
    ck_assert_ocal(ocal_kernel_launch(k, 1, &n, NULL));
    ck_assert_ocal(ocal_buffer_read(out, 0, n, back, NULL));
    for (size_t i = 0; i < n; i++)
      ck_assert_msg(memcmp(back + i * es, value, es) == 0, "%s: element %zu differs",
                    ocal_dtype_name(t), i);
    /* Another type for that argument is refused before the driver sees it. */
    ocal_dtype other = t == OCAL_I32 ? OCAL_U32 : OCAL_I32;
    ck_assert_ocal_fails(ocal_kernel_set_scalar(k, 1, other, value), OCAL_TYPE_MISMATCH);
    ck_assert_ocal(ocal_kernel_release(k));
    ck_assert_ocal(ocal_buffer_release(out));
  }
}
END_TEST

/* Each work-group reverses its piece through local memory given as an argument. */
START_TEST(test_local_memory) {
  const char *src =
      "__kernel void rev(__global const float *x, __global float *y, __local float *tmp,\n"
      "                  const uint n) {\n"
      "  uint g = get_global_id(0), l = get_local_id(0), L = get_local_size(0);\n"
      "  tmp[l] = g < n ? x[g] : 0.0f;\n"
      "  barrier(CLK_LOCAL_MEM_FENCE);\n"
      "  uint base = g - l, src = base + (L - 1 - l);\n"
      "  if (g < n) y[g] = tmp[L - 1 - l] + (src < n ? 0.0f : 1000.0f);\n"
      "}\n";
  const size_t n = 64 * 7 + 13, local = 64;
  float *x = fixture_malloc(n * sizeof *x), *y = fixture_malloc(n * sizeof *y);
  random_floats(x, n, 7);
  ocal_buffer bx, by;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_F32, 1, &n, x, &bx));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &n, &by));
  ocal_kernel k = make_kernel(src, NULL, "rev");
  cl_uint cn = (cl_uint)n;
  ck_assert_ocal(ocal_kernel_set_buffer(k, 0, bx));
  ck_assert_ocal(ocal_kernel_set_buffer(k, 1, by));
  ck_assert_ocal(ocal_kernel_set_local(k, 2, local * sizeof(float)));
  ck_assert_ocal(ocal_kernel_set_scalar(k, 3, OCAL_U32, &cn));
  ck_assert_ocal(ocal_kernel_launch(k, 1, &n, &local));
  ck_assert_ocal(ocal_buffer_read(by, 0, n, y, NULL));
  for (size_t g = 0; g < n; g++) {
    size_t l = g % local, src_i = g - l + (local - 1 - l);
    float want = src_i < n ? x[src_i] : 1000.0f;
    ck_assert_msg(y[g] == want, "y[%zu] = %g, expected %g", g, y[g], want);
  }
  ck_assert_ocal(ocal_kernel_release(k));
  ck_assert_ocal(ocal_buffer_release(bx));
  ck_assert_ocal(ocal_buffer_release(by));
  free(x);
  free(y);
}
END_TEST

START_TEST(test_from_file) {
  char path[] = "/tmp/ocal-check-kernel-XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq((int)write(fd, scale_src, strlen(scale_src)), (int)strlen(scale_src));
  close(fd);
  ocal_program p;
  ck_assert_ocal(ocal_program_create_from_file(fixture_ctx, path, NULL, &p));
  ocal_kernel k;
  ck_assert_ocal(ocal_kernel_create(p, "scale", &k));
  ck_assert_ocal(ocal_kernel_release(k));
  ck_assert_ocal(ocal_program_release(p));
  unlink(path);
  ck_assert_ocal_fails(ocal_program_create_from_file(fixture_ctx, path, NULL, &p), OCAL_IO_ERROR);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), path));
}
END_TEST

/* What is not a regular source file of sane size is refused unread, without blocking. */
START_TEST(test_from_file_hostile) {
  alarm(30); /* a FIFO used to block the open for ever */
  char dir[] = "/tmp/ocal-check-kernel-dir-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char fifo[128], big[128];
  snprintf(fifo, sizeof fifo, "%s/fifo.cl", dir);
  snprintf(big, sizeof big, "%s/big.cl", dir);
  ck_assert_int_eq(mkfifo(fifo, 0644), 0);
  /* A sparse file just over the bound: refused by its size, not read. */
  int fd = open(big, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(ftruncate(fd, (off_t)OCAL_PROGRAM_FILE_MAX + 1), 0);
  close(fd);
  const char *const paths[] = {fifo, "/dev/zero", dir, big};
  const char *const words[] = {"FIFO", "character device", "directory", "bytes"};
  for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
    ocal_program p = (ocal_program)&p;
    ck_assert_ocal_fails(ocal_program_create_from_file(fixture_ctx, paths[i], NULL, &p),
                         OCAL_IO_ERROR);
    ck_assert_ptr_null(p);
    ck_assert_msg(strstr(ocal_last_error(), paths[i]) && strstr(ocal_last_error(), words[i]),
                  "%s: the message does not say what is wrong: %s", paths[i], ocal_last_error());
  }
  /* At the bound itself the file is read (and then refused as text with NUL bytes). */
  ck_assert_int_eq(truncate(big, (off_t)OCAL_PROGRAM_FILE_MAX), 0);
  ocal_program p;
  ck_assert_ocal_fails(ocal_program_create_from_file(fixture_ctx, big, NULL, &p),
                       OCAL_INVALID_ARGUMENT);
  alarm(0);
  unlink(fifo);
  unlink(big);
  rmdir(dir);
}
END_TEST

/* The compiler's log comes back with the line numbers of the user's source. */
START_TEST(test_build_error_line) {
  const char *src =
      "__kernel void broken(__global float *y) {\n"
      "  size_t i = get_global_id(0);\n"
      "  y[i] = undeclared_thing * 2.0f;\n"
      "}\n";
  ocal_program p = NULL;
  ck_assert_ocal_fails(ocal_program_create(fixture_ctx, src, NULL, &p), OCAL_BUILD_FAILED);
  ck_assert_ptr_null(p);
  const char *msg = ocal_last_error();
  ck_assert_msg(strstr(msg, "undeclared_thing") != NULL, "no compiler log: %s", msg);
  ck_assert_msg(strstr(msg, ":3:") != NULL, "the log does not point at line 3: %s", msg);
}
END_TEST

/* Options the compiler does not know are a bad argument of the call (the header's
 * OCAL_INVALID_ARGUMENT), or a failed build where the driver reports them so; never a bare
 * OpenCL error. The context builds good programs after. */
START_TEST(test_build_bad_options) {
  const char *src = "__kernel void one(__global float *y) { y[get_global_id(0)] = 1.0f; }\n";
  ocal_program p = NULL;
  ocal_status s = ocal_program_create(fixture_ctx, src, "-cl-no-such-option", &p);
  ck_assert_msg(s == OCAL_INVALID_ARGUMENT || s == OCAL_BUILD_FAILED, "%s: %s",
                ocal_status_name(s), ocal_last_error());
  ck_assert_ptr_null(p);
  const char *msg = ocal_last_error();
  ck_assert_msg(strstr(msg, "ocal_program_create") && strstr(msg, "-cl-no-such-option"),
                "the message names neither the call nor the option: %s", msg);
  ck_assert_ocal(ocal_program_create(fixture_ctx, src, NULL, &p));
  ck_assert_ocal(ocal_program_release(p));
}
END_TEST

START_TEST(test_argument_errors) {
  ocal_kernel k = make_kernel(scale_src, NULL, "scale");
  const size_t n = 16;
  ocal_buffer f, i32;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &n, &f));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_I32, 1, &n, &i32));
  float a = 1.0f;
  ck_assert_ocal_fails(ocal_kernel_set_buffer(k, 4, f), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "takes 4 arguments"));
  ck_assert_ocal_fails(ocal_kernel_set_buffer(k, -1, f), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_kernel_set_buffer(k, 2, f), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "scalar"));
  ck_assert_ocal_fails(ocal_kernel_set_scalar(k, 0, OCAL_F32, &a), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_kernel_set_buffer"));
  /* The declaration is quoted as written, the pointer's star included. */
  ck_assert_msg(strstr(ocal_last_error(), "('float *y')") != NULL, "%s", ocal_last_error());
  ck_assert_ocal_fails(ocal_kernel_set_local(k, 0, 64), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_kernel_set_buffer(k, 0, i32), OCAL_TYPE_MISMATCH);
  ck_assert_ocal_fails(ocal_kernel_set_scalar(k, 2, OCAL_I32, &a), OCAL_TYPE_MISMATCH);
  ck_assert_ocal_fails(ocal_kernel_set_scalar(k, 2, OCAL_F32, NULL), OCAL_INVALID_ARGUMENT);
  /* Launch with arguments missing: named before the driver is asked. */
  ck_assert_ocal(ocal_kernel_set_buffer(k, 0, f));
  ck_assert_ocal(ocal_kernel_set_buffer(k, 1, f));
  ck_assert_ocal_fails(ocal_kernel_launch(k, 1, &n, NULL), OCAL_INVALID_ARGUMENT);
  ck_assert_msg(strstr(ocal_last_error(), "argument 2 ('a')") != NULL, "%s", ocal_last_error());
  /* A kernel that is not there: the message lists those that are. */
  ocal_program p;
  ocal_kernel k2 = NULL;
  ck_assert_ocal(ocal_program_create(fixture_ctx, scale_src, NULL, &p));
  ck_assert_ocal_fails(ocal_kernel_create(p, "scael", &k2), OCAL_INVALID_ARGUMENT);
  ck_assert_msg(strstr(ocal_last_error(), "scale") != NULL, "%s", ocal_last_error());
  ck_assert_ptr_null(k2);
  ck_assert_ocal(ocal_program_release(p));
  /* A program without kernels: the list says none, and nothing but text is printed. */
  ck_assert_ocal(ocal_program_create(fixture_ctx, "int helper(int x) { return x; }\n", NULL, &p));
  ck_assert_ocal_fails(ocal_kernel_create(p, "helper", &k2), OCAL_INVALID_ARGUMENT);
  for (const char *c = ocal_last_error(); *c; c++)
    ck_assert_msg(*c == '\n' || (*c >= 32 && *c < 127), "byte 0x%02x in: %s", (unsigned char)*c,
                  ocal_last_error());
  const char *listed = strstr(ocal_last_error(), "its kernels:");
  ck_assert_msg(!listed || strncmp(listed, "its kernels: none)", 18) == 0, "%s", ocal_last_error());
  ck_assert_ocal(ocal_program_release(p));
  ck_assert_ocal_fails(ocal_kernel_create(NULL, "scale", &k2), OCAL_INVALID_HANDLE);
  ck_assert_ocal_fails(ocal_program_create(fixture_ctx, NULL, NULL, &p), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_program_create(NULL, scale_src, NULL, &p), OCAL_INVALID_HANDLE);
  ck_assert_ocal(ocal_kernel_release(k));
  ck_assert_ocal(ocal_buffer_release(f));
  ck_assert_ocal(ocal_buffer_release(i32));
}
END_TEST

START_TEST(test_launch_limits) {
  ocal_kernel k = make_kernel(scale_src, NULL, "scale");
  const size_t n = 16;
  ocal_buffer f;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &n, &f));
  float a = 1.0f;
  cl_ulong cn = n;
  ck_assert_ocal(ocal_kernel_set_buffer(k, 0, f));
  ck_assert_ocal(ocal_kernel_set_buffer(k, 1, f));
  ck_assert_ocal(ocal_kernel_set_scalar(k, 2, OCAL_F32, &a));
  ck_assert_ocal(ocal_kernel_set_scalar(k, 3, OCAL_U64, &cn));
  size_t huge_local = (size_t)1 << 20, zero = 0;
  ck_assert_ocal_fails(ocal_kernel_launch(k, 1, &n, &huge_local), OCAL_UNSUPPORTED);
  ck_assert_ocal_fails(ocal_kernel_launch(k, 1, &zero, NULL), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_kernel_launch(k, 4, &n, NULL), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_kernel_launch(k, 0, &n, NULL), OCAL_INVALID_ARGUMENT);
  /* A work-group whose every dimension fits but whose product does not. */
  ocal_device_info info = {sizeof info};
  ck_assert_ocal(ocal_context_get_device_info(fixture_ctx, &info));
  const size_t g3[3] = {64, 64, 64}, l3[3] = {64, 64, 64};
  ocal_kernel k3 = make_kernel(coords_src, NULL, "coords");
  cl_uint one = 1;
  ocal_buffer u;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_U32, 1, &n, &u));
  ck_assert_ocal(ocal_kernel_set_buffer(k3, 0, u));
  ck_assert_ocal(ocal_buffer_release(u));
  for (int i = 1; i < 4; i++) ck_assert_ocal(ocal_kernel_set_scalar(k3, i, OCAL_U32, &one));
  ck_assert_ocal_fails(ocal_kernel_launch(k3, 3, g3, l3), OCAL_UNSUPPORTED);
  /* A range whose every dimension is addressable but whose product is not (issue 19, bug
   * 7): refused, where the driver ran nothing (2^96 items) or aborted at ocal_context_finish (2^64). */
  if (sizeof(size_t) == 8) {
    const size_t big[3] = {(size_t)1 << 32, (size_t)1 << 32, (size_t)1 << 32};
    for (int dims = 2; dims <= 3; dims++) {
      ck_assert_ocal_fails(ocal_kernel_launch(k3, dims, big, NULL), OCAL_UNSUPPORTED);
      ck_assert_ptr_nonnull(strstr(ocal_last_error(), "can address"));
    }
    const size_t wide[2] = {(size_t)1 << 40, (size_t)1 << 30};
    ck_assert_ocal_fails(ocal_kernel_launch(k3, 2, wide, NULL), OCAL_UNSUPPORTED);
    /* Addressable ranges of 2^32 work-groups or more, in one dimension or in all together:
     * refused before PoCL sees them, which aborts the process (its work-group index is 32
     * bits wide). */
    const size_t groups1[1] = {(size_t)1 << 33}, ones[3] = {1, 1, 1};
    const size_t groups3[3] = {(size_t)1 << 16, (size_t)1 << 16, 2};
    ck_assert_ocal_fails(ocal_kernel_launch(k3, 1, groups1, ones), OCAL_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ocal_last_error(), "work-groups"));
    ck_assert_ocal_fails(ocal_kernel_launch(k3, 3, groups3, ones), OCAL_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ocal_last_error(), "4294967295"));
  }
  ck_assert_ocal(ocal_context_finish(fixture_ctx));
  ck_assert_ocal(ocal_kernel_release(k3));
  /* More local memory than the device has. */
  const char *src = "__kernel void l(__local float *t, __global float *y) { t[0] = 1; y[0] = t[0]; }\n";
  ocal_kernel kl = make_kernel(src, NULL, "l");
  ck_assert_ocal_fails(ocal_kernel_set_local(kl, 0, (size_t)1 << 40), OCAL_UNSUPPORTED);
  ck_assert_ocal_fails(ocal_kernel_set_local(kl, 0, 0), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal(ocal_kernel_set_local(kl, 0, 16));
  ck_assert_ocal(ocal_kernel_set_buffer(kl, 1, f));
  const size_t one_item = 1;
  ck_assert_ocal(ocal_kernel_launch(kl, 1, &one_item, NULL));
  ck_assert_ocal(ocal_kernel_release(kl));
  ck_assert_ocal(ocal_kernel_release(k));
  ck_assert_ocal(ocal_buffer_release(f));
  ck_assert_ocal(ocal_context_finish(fixture_ctx));
}
END_TEST

/* A kernel declaring reqd_work_group_size runs with that work-group when ocal chooses, and a
 * launch asking for another one is refused before the driver sees it. */
START_TEST(test_required_work_group) {
  const char *src =
      "__kernel __attribute__((reqd_work_group_size(4, 1, 1)))\n"
      "void ids(__global uint *y, const uint n) {\n"
      "  uint i = get_global_id(0);\n"
      "  if (i < n) y[i] = i * 16 + get_local_size(0);\n"
      "}\n";
  ocal_kernel k = make_kernel(src, NULL, "ids");
  const size_t n = 1001;
  ocal_buffer y;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_U32, 1, &n, &y));
  cl_uint cn = (cl_uint)n;
  ck_assert_ocal(ocal_kernel_set_buffer(k, 0, y));
  ck_assert_ocal(ocal_kernel_set_scalar(k, 1, OCAL_U32, &cn));
  const size_t eight = 8, four = 4, g2[2] = {n, 1};
  ck_assert_ocal_fails(ocal_kernel_launch(k, 1, &n, &eight), OCAL_INVALID_ARGUMENT);
  ck_assert_msg(strstr(ocal_last_error(), "reqd_work_group_size(4, 1, 1)") != NULL, "%s",
                ocal_last_error());
  ck_assert_ocal(ocal_kernel_launch(k, 1, &n, NULL));
  cl_uint *out = fixture_malloc(n * sizeof *out);
  ck_assert_ocal(ocal_buffer_read(y, 0, n, out, NULL));
  for (size_t i = 0; i < n; i++) ck_assert_uint_eq(out[i], (cl_uint)(i * 16 + 4));
  ck_assert_ocal(ocal_buffer_fill(y, &(cl_uint){0}));
  ck_assert_ocal(ocal_kernel_launch(k, 1, &n, &four));
  ck_assert_ocal(ocal_kernel_launch(k, 2, g2, NULL)); /* dimensions past the first: 1 */
  ck_assert_ocal(ocal_buffer_read(y, 0, n, out, NULL));
  for (size_t i = 0; i < n; i++) ck_assert_uint_eq(out[i], (cl_uint)(i * 16 + 4));
  free(out);
  ck_assert_ocal(ocal_kernel_release(k));
  ck_assert_ocal(ocal_buffer_release(y));
  ck_assert_ocal(ocal_context_finish(fixture_ctx));
}
END_TEST

/* A view is passed at its first element (as a sub-buffer) where the device allows it. */
START_TEST(test_views) {
  cl_device_id dev;
  ck_assert_ocal(ocal_context_get_cl_device(fixture_ctx, &dev));
  cl_uint bits = 0;
  ck_assert_int_eq(clGetDeviceInfo(dev, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof bits, &bits, NULL),
                   CL_SUCCESS);
  size_t align = bits / 8 / sizeof(float); /* in floats */
  const size_t n = 4 * align + 100, m = 50;
  float *x = fixture_malloc(n * sizeof *x), y[50];
  random_floats(x, n, 3);
  ocal_buffer bx, vx, vy, bad, by;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_F32, 1, &n, x, &bx));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &n, &by));
  ck_assert_ocal(ocal_buffer_view(bx, align, 1, &m, &vx));
  ck_assert_ocal(ocal_buffer_view(by, 2 * align, 1, &m, &vy));
  ocal_kernel k = make_kernel(scale_src, NULL, "scale");
  float a = -1.0f;
  cl_ulong cm = m;
  ck_assert_ocal(ocal_kernel_set_buffer(k, 0, vy));
  ck_assert_ocal(ocal_kernel_set_buffer(k, 1, vx));
  ck_assert_ocal(ocal_kernel_set_scalar(k, 2, OCAL_F32, &a));
  ck_assert_ocal(ocal_kernel_set_scalar(k, 3, OCAL_U64, &cm));
  ck_assert_ocal(ocal_kernel_launch(k, 1, &m, NULL));
  ck_assert_ocal(ocal_buffer_read(by, 2 * align, m, y, NULL));
  for (size_t i = 0; i < m; i++) ck_assert_msg(y[i] == -x[align + i], "y[%zu] = %g", i, y[i]);
  if (align > 1) {
    ck_assert_ocal(ocal_buffer_view(bx, 1, 1, &m, &bad));
    ck_assert_ocal_fails(ocal_kernel_set_buffer(k, 1, bad), OCAL_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ocal_last_error(), "offset as a scalar"));
    ck_assert_ocal(ocal_buffer_release(bad));
  }
  ck_assert_ocal(ocal_kernel_release(k));
  ck_assert_ocal(ocal_buffer_release(vx));
  ck_assert_ocal(ocal_buffer_release(vy));
  ck_assert_ocal(ocal_buffer_release(bx));
  ck_assert_ocal(ocal_buffer_release(by));
  free(x);
}
END_TEST

/* ---- the disk cache, seen from a second process ------------------------------------- */

static const char *program_path = "";

/* The child: builds scale_src in a context on dir; expects a disk hit (no compiler) when
 * `expect_hit`; runs it, and checks that argument checks still work on a loaded binary. */
static int child_main(const char *dir, int expect_hit) {
  ocal_context_options opt;
  ocal_context_options_init(&opt);
  opt.disk_cache = 1;
  opt.cache_dir = dir;
  ocal_context ctx;
  if (ocal_context_create(&opt, &ctx) != OCAL_OK) return 10;
  int code = 0;
  ocal_program p = NULL;
  ocal_kernel k = NULL;
  ocal_buffer b = NULL;
  ocal_cache_stats st = {sizeof st};
  const size_t n = 33;
  float h[33], a = 3.0f;
  cl_ulong cn = n;
  for (size_t i = 0; i < n; i++) h[i] = (float)i;
  if (ocal_program_create(ctx, scale_src, NULL, &p) != OCAL_OK ||
      ocal_kernel_create(p, "scale", &k) != OCAL_OK)
    code = 11;
  else if (ocal_context_get_cache_stats(ctx, &st) != OCAL_OK ||
           (expect_hit ? st.compiles != 0 || st.disk_hits != 1 : st.compiles != 1))
    code = 12;
  else if (ocal_buffer_from_host(ctx, OCAL_F32, 1, &n, h, &b) != OCAL_OK ||
           ocal_kernel_set_buffer(k, 0, b) != OCAL_OK || ocal_kernel_set_buffer(k, 1, b) != OCAL_OK ||
           ocal_kernel_set_scalar(k, 2, OCAL_F32, &a) != OCAL_OK ||
           ocal_kernel_set_scalar(k, 3, OCAL_U64, &cn) != OCAL_OK ||
           ocal_kernel_launch(k, 1, &n, NULL) != OCAL_OK || ocal_buffer_read(b, 0, n, h, NULL) != OCAL_OK)
    code = 13;
  else if (ocal_kernel_set_scalar(k, 2, OCAL_I32, &a) != OCAL_TYPE_MISMATCH ||
           ocal_kernel_set_scalar(k, 0, OCAL_F32, &a) != OCAL_INVALID_ARGUMENT)
    code = 14; /* the checks read the source when the binary has no argument info */
  for (size_t i = 0; code == 0 && i < n; i++)
    if (h[i] != 3.0f * (float)i) code = 15;
  if (code) fprintf(stderr, "child: code %d: %s\n", code, ocal_last_error());
  ocal_buffer_release(b);
  ocal_kernel_release(k);
  ocal_program_release(p);
  ocal_context_release(ctx);
  return code;
}

START_TEST(test_disk_cache_second_process) {
  fixture_check_cache_children(program_path, "kernel");
}
END_TEST

/* Programs, kernels and generators hold references to their context (ocal/context.h): with
 * the context's handle released first they still build, launch and compute, and the context
 * goes with the last of them (the sanitizer build checks that nothing is read after free). */
START_TEST(test_context_released_first) {
  ocal_context ctx = NULL;
  ck_assert_ocal(ocal_context_create(NULL, &ctx));
  const size_t n = 1000;
  float *x = fixture_malloc(n * sizeof *x), *y = fixture_malloc(n * sizeof *y);
  random_floats(x, n, 4242);
  ocal_buffer bx, by;
  ck_assert_ocal(ocal_buffer_from_host(ctx, OCAL_F32, 1, &n, x, &bx));
  ck_assert_ocal(ocal_buffer_zeros(ctx, OCAL_F32, 1, &n, &by));
  ocal_program p = NULL;
  ocal_gen g = NULL;
  ck_assert_ocal(ocal_program_create(ctx, scale_src, NULL, &p));
  ck_assert_ocal(ocal_gen_elementwise(ctx, "float a, const float *x, float *y", "y[i] += a * x[i]",
                                      NULL, &g));
  ck_assert_ocal(ocal_context_release(ctx));

  ocal_kernel k = NULL;
  ck_assert_ocal(ocal_kernel_create(p, "scale", &k)); /* from the program alone */
  ck_assert_ocal(ocal_program_release(p));
  float a = -1.75f, b = 0.5f;
  cl_ulong cn = n;
  ck_assert_ocal(ocal_kernel_set_buffer(k, 0, by));
  ck_assert_ocal(ocal_kernel_set_buffer(k, 1, bx));
  ck_assert_ocal(ocal_kernel_set_scalar(k, 2, OCAL_F32, &a));
  ck_assert_ocal(ocal_kernel_set_scalar(k, 3, OCAL_U64, &cn));
  ck_assert_ocal(ocal_buffer_release(bx)); /* the kernel and the buffers hold the context */
  ck_assert_ocal(ocal_kernel_launch(k, 1, &n, NULL));
  const ocal_gen_arg args[] = {OCAL_GEN_SCALAR(&b), OCAL_GEN_BUFFER(by), OCAL_GEN_BUFFER(by)};
  ck_assert_ocal(ocal_kernel_release(k));
  ck_assert_ocal(ocal_gen_run(g, OCAL_GEN_AUTO, 3, args, NULL)); /* y = 1.5 * y */
  ck_assert_ocal(ocal_gen_release(g));
  ck_assert_ocal(ocal_buffer_read(by, 0, n, y, NULL));
  for (size_t i = 0; i < n; i++) {
    float want = a * x[i];
    want += b * want;
    ck_assert_msg(y[i] == want, "y[%zu] = %.9g, expected %.9g", i, y[i], want);
  }
  ck_assert_ocal(ocal_buffer_release(by)); /* the last reference: the context goes */
  free(x);
  free(y);
}
END_TEST

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "--child") == 0) return child_main(argv[2], atoi(argv[3]));
  program_path = argv[0];
  Suite *s = suite_create("kernel");
  TCase *tc = fixture_tcase("raw");
  tcase_add_test(tc, test_raw_1d_odd_sizes);
  tcase_add_test(tc, test_raw_2d_3d_odd_sizes);
  tcase_add_test(tc, test_every_scalar_type);
  tcase_add_test(tc, test_local_memory);
  tcase_add_test(tc, test_from_file);
  tcase_add_test(tc, test_from_file_hostile);
  tcase_add_test(tc, test_build_error_line);
  tcase_add_test(tc, test_build_bad_options);
  tcase_add_test(tc, test_argument_errors);
  tcase_add_test(tc, test_launch_limits);
  tcase_add_test(tc, test_required_work_group);
  tcase_add_test(tc, test_views);
  tcase_add_test(tc, test_disk_cache_second_process);
  tcase_add_test(tc, test_context_released_first);
  suite_add_tcase(s, tc);
  return fixture_run(s);
}
