/* ocal tests — contexts: creation and options, escape hatches, argument checks, threads. */
#include "fixture.h"

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ---------------------------------------------------------------------------- */

static ocal_context create_with(const ocal_context_options *opts) {
  ocal_context ctx = NULL;
  ck_assert_ocal(ocal_context_create(opts, &ctx));
  ck_assert_ptr_nonnull(ctx);
  return ctx;
}

static int context_fp64(ocal_context ctx) {
  int fp64 = -7;
  ck_assert_ocal(ocal_context_get_fp64(ctx, &fp64));
  ck_assert_msg(fp64 == 0 || fp64 == 1, "has_fp64 gave %d", fp64);
  return fp64;
}

static int device_fp64(ocal_context ctx) {
  ocal_device_info info = {sizeof info};
  ck_assert_ocal(ocal_context_get_device_info(ctx, &info));
  return info.has_fp64;
}

/* The context's fp64 after creating it with the given fp64 option (and the environment). */
static int fp64_with_option(int fp64_option, int *device_has) {
  ocal_context_options opts;
  ck_assert_ocal(ocal_context_options_init(&opts));
  opts.fp64 = fp64_option;
  ocal_context ctx = create_with(&opts);
  int fp64 = context_fp64(ctx);
  if (device_has) *device_has = device_fp64(ctx);
  ck_assert_ocal(ocal_context_release(ctx));
  return fp64;
}

/* The cache directory the context reports (a copy, or "(null)"), for the given options. */
static void cache_dir_with(int disk_cache, const char *cache_dir, char *out, size_t size) {
  ocal_context_options opts;
  ck_assert_ocal(ocal_context_options_init(&opts));
  opts.disk_cache = disk_cache;
  opts.cache_dir = cache_dir;
  ocal_context ctx = create_with(&opts);
  const char *dir = (const char *)&opts; /* must be overwritten */
  ck_assert_ocal(ocal_context_get_cache_dir(ctx, &dir));
  snprintf(out, size, "%s", dir ? dir : "(null)");
  ck_assert_ocal(ocal_context_release(ctx));
}

/* ---- creation and options --------------------------------------------------------------- */

START_TEST(test_create_null_options) {
  ocal_context ctx = NULL;
  ck_assert_ocal(ocal_context_create(NULL, &ctx));
  ck_assert_ptr_nonnull(ctx);
  ck_assert_ptr_ne(ctx, fixture_ctx);
  ocal_device_info info = {sizeof info};
  ck_assert_ocal(ocal_context_get_device_info(ctx, &info));
  ck_assert_msg(info.name[0] != '\0', "the context's device has no name");
  ck_assert_ocal(ocal_context_release(ctx));
}
END_TEST

START_TEST(test_options_init_defaults) {
  ocal_context_options opts;
  memset(&opts, 0x5a, sizeof opts);
  ck_assert_ocal(ocal_context_options_init(&opts));
  ck_assert_ptr_null(opts.device);
  ck_assert_int_eq(opts.profiling, 0);
  ck_assert_int_eq(opts.disk_cache, -1);
  ck_assert_ptr_null(opts.cache_dir);
  ck_assert_int_eq(opts.fp64, -1);
  ocal_context ctx = create_with(&opts);
  ck_assert_ocal(ocal_context_release(ctx));
}
END_TEST

START_TEST(test_options_init_null) {
  ck_assert_ocal_fails(ocal_context_options_init(NULL), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_context_options_init"));
}
END_TEST

/* struct_size: set by ocal_context_options_init; a caller built against 0.2's struct (the
 * first with struct_size) passes exactly its size, a shorter or longer one is refused before
 * anything is created, naming the init function. */
START_TEST(test_options_struct_size) {
  ocal_context_options o;
  ck_assert_ocal(ocal_context_options_init(&o));
  ck_assert_uint_eq(o.struct_size, sizeof o);
  ocal_context ctx = (ocal_context)&o;
  o.struct_size = sizeof(size_t);
  ck_assert_ocal_fails(ocal_context_create(&o, &ctx), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_null(ctx);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_context_create"));
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_context_options_init"));
  o.struct_size = sizeof o + 1;
  ck_assert_ocal_fails(ocal_context_create(&o, &ctx), OCAL_INVALID_ARGUMENT);
  o.struct_size = sizeof o;
  ck_assert_ocal(ocal_context_create(&o, &ctx));
  ck_assert_ocal(ocal_context_release(ctx));
}
END_TEST

START_TEST(test_create_device_zero_zero) {
  size_t n = 0;
  ck_assert_ocal(ocal_device_list(0, NULL, &n));
  ocal_device_info *list = calloc(n, sizeof *list);
  ck_assert_ptr_nonnull(list);
  list[0].struct_size = sizeof *list;
  ck_assert_ocal(ocal_device_list(n, list, &n));
  long want = -1;
  for (size_t i = 0; i < n; i++)
    if (list[i].platform_index == 0 && list[i].device_index == 0) want = (long)i;

  ocal_context_options opts;
  ck_assert_ocal(ocal_context_options_init(&opts));
  opts.device = "0:0";
  ocal_context ctx = NULL;
  if (want >= 0) {
    ck_assert_ocal(ocal_context_create(&opts, &ctx));
    ocal_device_info info = {sizeof info};
    ck_assert_ocal(ocal_context_get_device_info(ctx, &info));
    ck_assert_int_eq(info.platform_index, 0);
    ck_assert_int_eq(info.device_index, 0);
    ck_assert_str_eq(info.name, list[want].name);
    ck_assert_ocal(ocal_context_release(ctx));
  } else {
    ck_assert_ocal_fails(ocal_context_create(&opts, &ctx), OCAL_DEVICE_NOT_FOUND);
    ck_assert_ptr_null(ctx);
  }
  free(list);
}
END_TEST

START_TEST(test_create_bad_device_option) {
  ocal_context_options opts;
  ck_assert_ocal(ocal_context_options_init(&opts));
  opts.device = "no-such-device-xyz";
  ocal_context ctx = (ocal_context)&opts; /* must be reset to NULL */
  ck_assert_ocal_fails(ocal_context_create(&opts, &ctx), OCAL_DEVICE_NOT_FOUND);
  ck_assert_ptr_null(ctx);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_context_create"));
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "no-such-device-xyz"));
}
END_TEST

/* Every option outside the values its field documents is refused, naming the field, and a
 * context with good options still comes after. */
START_TEST(test_create_bad_option_values) {
  static const struct {
    size_t offset;
    int value;
    const char *name;
  } bad_ints[] = {
      {offsetof(ocal_context_options, profiling), 2, "profiling"},
      {offsetof(ocal_context_options, profiling), -1, "profiling"},
      {offsetof(ocal_context_options, disk_cache), 7, "disk_cache"},
      {offsetof(ocal_context_options, fp64), 3, "fp64"},
      {offsetof(ocal_context_options, fp64), -9, "fp64"},
      {offsetof(ocal_context_options, pool), 5, "pool"},
      {offsetof(ocal_context_options, pool), -2, "pool"},
      {offsetof(ocal_context_options, staging), 9, "staging"},
      {offsetof(ocal_context_options, gemm_precision), 7, "gemm_precision"},
  };
  for (size_t i = 0; i < sizeof bad_ints / sizeof bad_ints[0]; i++) {
    ocal_context_options o;
    ck_assert_ocal(ocal_context_options_init(&o));
    memcpy((char *)&o + bad_ints[i].offset, &bad_ints[i].value, sizeof(int));
    ocal_context ctx = NULL;
    ck_assert_ocal_fails(ocal_context_create(&o, &ctx), OCAL_INVALID_ARGUMENT);
    ck_assert_ptr_null(ctx);
    char want[64];
    snprintf(want, sizeof want, "options->%s is %d", bad_ints[i].name, bad_ints[i].value);
    ck_assert_msg(strstr(ocal_last_error(), want) != NULL, "%s", ocal_last_error());
  }
  ocal_context_options o;
  ck_assert_ocal(ocal_context_options_init(&o));
  o.pool_limit = -7;
  ocal_context ctx = NULL;
  ck_assert_ocal_fails(ocal_context_create(&o, &ctx), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "options->pool_limit is -7"));
  o.pool_limit = -1;
  o.memory_limit = -5;
  ck_assert_ocal_fails(ocal_context_create(&o, &ctx), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "options->memory_limit is -5"));
  o.memory_limit = -1;
  o.pool = 0;
  o.fp64 = 1;
  o.staging = 0;
  ck_assert_ocal(ocal_context_create(&o, &ctx));
  ck_assert_ocal(ocal_context_release(ctx));
}
END_TEST

static cl_command_queue_properties queue_properties(ocal_context ctx) {
  cl_command_queue queue = NULL;
  ck_assert_ocal(ocal_context_get_cl_queue(ctx, &queue));
  ck_assert_ptr_nonnull(queue);
  cl_command_queue_properties props = 0;
  ck_assert_int_eq(clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL),
                   CL_SUCCESS);
  return props;
}

START_TEST(test_profiling_option) {
  /* Off by default. */
  ck_assert_msg((queue_properties(fixture_ctx) & CL_QUEUE_PROFILING_ENABLE) == 0,
                "the default queue has profiling on");

  ocal_context_options opts;
  ck_assert_ocal(ocal_context_options_init(&opts));
  opts.profiling = 1;
  ocal_context ctx = create_with(&opts);
  cl_command_queue_properties props = queue_properties(ctx);
  ck_assert_msg(props & CL_QUEUE_PROFILING_ENABLE, "profiling=1 gave queue properties %#llx",
                (unsigned long long)props);
  /* The queue is in order, as documented. */
  ck_assert_msg((props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) == 0, "the queue is out of order");

  /* And profiling works: a command on the queue has start and end times. */
  cl_context clctx;
  cl_command_queue queue;
  ck_assert_ocal(ocal_context_get_cl_context(ctx, &clctx));
  ck_assert_ocal(ocal_context_get_cl_queue(ctx, &queue));
  cl_int err;
  cl_mem mem = clCreateBuffer(clctx, CL_MEM_READ_WRITE, 1024, NULL, &err);
  ck_assert_int_eq(err, CL_SUCCESS);
  unsigned char data[1024] = {0};
  cl_event ev;
  ck_assert_int_eq(clEnqueueWriteBuffer(queue, mem, CL_TRUE, 0, sizeof data, data, 0, NULL, &ev),
                   CL_SUCCESS);
  ck_assert_int_eq(clWaitForEvents(1, &ev), CL_SUCCESS);
  cl_ulong start = 0, end = 0;
  ck_assert_int_eq(
      clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL),
      CL_SUCCESS);
  ck_assert_int_eq(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL),
                   CL_SUCCESS);
  ck_assert_uint_ge(end, start);
  ck_assert_uint_gt(end, 0);
  clReleaseEvent(ev);
  clReleaseMemObject(mem);
  ck_assert_ocal(ocal_context_release(ctx));
}
END_TEST

/* ---- escape hatches --------------------------------------------------------------------- */

START_TEST(test_escape_hatches_consistent) {
  cl_context clctx = NULL;
  cl_device_id dev = NULL;
  cl_command_queue queue = NULL;
  ck_assert_ocal(ocal_context_get_cl_context(fixture_ctx, &clctx));
  ck_assert_ocal(ocal_context_get_cl_device(fixture_ctx, &dev));
  ck_assert_ocal(ocal_context_get_cl_queue(fixture_ctx, &queue));
  ck_assert_ptr_nonnull(clctx);
  ck_assert_ptr_nonnull(dev);
  ck_assert_ptr_nonnull(queue);

  cl_context qctx = NULL;
  cl_device_id qdev = NULL;
  ck_assert_int_eq(clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof qctx, &qctx, NULL),
                   CL_SUCCESS);
  ck_assert_int_eq(clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof qdev, &qdev, NULL),
                   CL_SUCCESS);
  ck_assert_ptr_eq(qctx, clctx);
  ck_assert_ptr_eq(qdev, dev);

  /* The context holds exactly that one device. */
  cl_uint ndev = 0;
  ck_assert_int_eq(clGetContextInfo(clctx, CL_CONTEXT_NUM_DEVICES, sizeof ndev, &ndev, NULL),
                   CL_SUCCESS);
  ck_assert_uint_eq(ndev, 1);
  cl_device_id cdev = NULL;
  ck_assert_int_eq(clGetContextInfo(clctx, CL_CONTEXT_DEVICES, sizeof cdev, &cdev, NULL),
                   CL_SUCCESS);
  ck_assert_ptr_eq(cdev, dev);

  /* The cl_device_id is the device ocal_context_get_device_info describes. */
  ocal_device_info info = {sizeof info};
  ck_assert_ocal(ocal_context_get_device_info(fixture_ctx, &info));
  char name[256] = "";
  ck_assert_int_eq(clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL), CL_SUCCESS);
  ck_assert_str_eq(name, info.name);
  cl_ulong mem = 0;
  ck_assert_int_eq(clGetDeviceInfo(dev, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL),
                   CL_SUCCESS);
  ck_assert_uint_eq(mem, info.global_mem_bytes);
  cl_platform_id platform = NULL;
  ck_assert_int_eq(clGetDeviceInfo(dev, CL_DEVICE_PLATFORM, sizeof platform, &platform, NULL),
                   CL_SUCCESS);
  char pname[256] = "";
  ck_assert_int_eq(clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof pname, pname, NULL),
                   CL_SUCCESS);
  ck_assert_str_eq(pname, info.platform_name);

  /* The handles do not change between calls. */
  cl_context clctx2;
  ck_assert_ocal(ocal_context_get_cl_context(fixture_ctx, &clctx2));
  ck_assert_ptr_eq(clctx2, clctx);
}
END_TEST

START_TEST(test_escape_hatches_usable) {
  cl_context clctx;
  cl_command_queue queue;
  ck_assert_ocal(ocal_context_get_cl_context(fixture_ctx, &clctx));
  ck_assert_ocal(ocal_context_get_cl_queue(fixture_ctx, &queue));
  enum { N = 4096 };
  static unsigned in[N], out[N];
  for (unsigned i = 0; i < N; i++) {
    in[i] = i * 2654435761u + 17u;
    out[i] = 0;
  }
  cl_int err;
  cl_mem mem = clCreateBuffer(clctx, CL_MEM_READ_WRITE, sizeof in, NULL, &err);
  ck_assert_int_eq(err, CL_SUCCESS);
  /* Non-blocking write: ocal_context_finish must wait for it. */
  cl_event ev;
  ck_assert_int_eq(clEnqueueWriteBuffer(queue, mem, CL_FALSE, 0, sizeof in, in, 0, NULL, &ev),
                   CL_SUCCESS);
  ck_assert_ocal(ocal_context_finish(fixture_ctx));
  cl_int exec = -1;
  ck_assert_int_eq(
      clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof exec, &exec, NULL), CL_SUCCESS);
  ck_assert_int_eq(exec, CL_COMPLETE);
  clReleaseEvent(ev);
  ck_assert_int_eq(clEnqueueReadBuffer(queue, mem, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL),
                   CL_SUCCESS);
  ck_assert_int_eq(memcmp(in, out, sizeof in), 0);
  ck_assert_int_eq(clReleaseMemObject(mem), CL_SUCCESS);
}
END_TEST

START_TEST(test_escape_hatches_mix_with_ocal_buffers) {
  /* Write with OpenCL into an ocal buffer's memory on the context's queue; read with ocal. */
  cl_command_queue queue;
  ck_assert_ocal(ocal_context_get_cl_queue(fixture_ctx, &queue));
  size_t shape[1] = {256};
  ocal_buffer buf;
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_I32, 1, shape, &buf));
  cl_mem mem = NULL;
  size_t offset = 99;
  ck_assert_ocal(ocal_buffer_get_cl_mem(buf, &mem, &offset));
  ck_assert_ptr_nonnull(mem);
  ck_assert_uint_eq(offset, 0);
  int in[256], out[256];
  for (int i = 0; i < 256; i++) in[i] = 1000 - 7 * i;
  ck_assert_int_eq(clEnqueueWriteBuffer(queue, mem, CL_FALSE, 0, sizeof in, in, 0, NULL, NULL),
                   CL_SUCCESS);
  /* In order: ocal's read runs after the write above. */
  ck_assert_ocal(ocal_buffer_read(buf, 0, 256, out, NULL));
  ck_assert_int_eq(memcmp(in, out, sizeof in), 0);
  ck_assert_ocal(ocal_buffer_release(buf));
}
END_TEST

START_TEST(test_escape_hatches_null_out) {
  ck_assert_ocal_fails(ocal_context_get_cl_context(fixture_ctx, NULL), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_context_get_cl_context"));
  ck_assert_ocal_fails(ocal_context_get_cl_device(fixture_ctx, NULL), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_context_get_cl_device"));
  ck_assert_ocal_fails(ocal_context_get_cl_queue(fixture_ctx, NULL), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_context_get_cl_queue"));
}
END_TEST

START_TEST(test_retained_handles_outlive_context) {
  ocal_context ctx = create_with(NULL);
  cl_context clctx;
  cl_command_queue queue;
  ck_assert_ocal(ocal_context_get_cl_context(ctx, &clctx));
  ck_assert_ocal(ocal_context_get_cl_queue(ctx, &queue));
  ck_assert_int_eq(clRetainContext(clctx), CL_SUCCESS);
  ck_assert_int_eq(clRetainCommandQueue(queue), CL_SUCCESS);
  ck_assert_ocal(ocal_context_release(ctx));
  /* Still usable after ocal let go of them. */
  cl_int err;
  cl_mem mem = clCreateBuffer(clctx, CL_MEM_READ_WRITE, 64, NULL, &err);
  ck_assert_int_eq(err, CL_SUCCESS);
  char in[64], out[64];
  memset(in, 0x3c, sizeof in);
  memset(out, 0, sizeof out);
  ck_assert_int_eq(clEnqueueWriteBuffer(queue, mem, CL_TRUE, 0, 64, in, 0, NULL, NULL), CL_SUCCESS);
  ck_assert_int_eq(clEnqueueReadBuffer(queue, mem, CL_TRUE, 0, 64, out, 0, NULL, NULL), CL_SUCCESS);
  ck_assert_int_eq(memcmp(in, out, 64), 0);
  clReleaseMemObject(mem);
  ck_assert_int_eq(clReleaseCommandQueue(queue), CL_SUCCESS);
  ck_assert_int_eq(clReleaseContext(clctx), CL_SUCCESS);
}
END_TEST

/* A buffer keeps its context alive after the user's release; a second release of the
 * context is refused rather than freeing it under the buffer. */
START_TEST(test_second_release_refused_while_buffers_live) {
  ocal_context ctx = create_with(NULL);
  ocal_buffer b = NULL;
  const size_t n = 7;
  const float in[7] = {1, 2, 3, 4, 5, 6, 7};
  float out[7] = {0};
  ck_assert_ocal(ocal_buffer_create(ctx, OCAL_F32, 1, &n, &b));
  ck_assert_ocal(ocal_context_release(ctx));
  ck_assert_ocal_fails(ocal_context_release(ctx), OCAL_INVALID_HANDLE);
  ck_assert_msg(strstr(ocal_last_error(), "released already") != NULL, "%s", ocal_last_error());
  ck_assert_ocal(ocal_buffer_write(b, 0, n, in, NULL));
  ck_assert_ocal(ocal_buffer_read(b, 0, n, out, NULL));
  ck_assert_int_eq(memcmp(in, out, sizeof in), 0);
  ck_assert_ocal(ocal_buffer_release(b));
}
END_TEST

/* ---- adopting another library's OpenCL objects ------------------------------------------ */

/* A context and queue made with plain OpenCL on the fixture's device, as PyOpenCL makes them. */
static void raw_opencl(cl_context *clctx, cl_device_id *dev, cl_command_queue *queue,
                       cl_command_queue_properties props) {
  ck_assert_ocal(ocal_context_get_cl_device(fixture_ctx, dev));
  cl_int err;
  *clctx = clCreateContext(NULL, 1, dev, NULL, NULL, &err);
  ck_assert_int_eq(err, CL_SUCCESS);
  *queue = clCreateCommandQueue(*clctx, *dev, props, &err);
  ck_assert_int_eq(err, CL_SUCCESS);
}

START_TEST(test_adopt_context_and_memory) {
  cl_context clctx;
  cl_device_id dev;
  cl_command_queue queue;
  raw_opencl(&clctx, &dev, &queue, 0);
  enum { N = 1001 };
  static float in[N + 3], out[N + 3];
  for (int i = 0; i < N + 3; i++) in[i] = 0.5f * (float)i - 7.0f;
  cl_int err;
  cl_mem mem = clCreateBuffer(clctx, CL_MEM_READ_WRITE, sizeof in, NULL, &err);
  ck_assert_int_eq(err, CL_SUCCESS);
  ck_assert_int_eq(clEnqueueWriteBuffer(queue, mem, CL_TRUE, 0, sizeof in, in, 0, NULL, NULL),
                   CL_SUCCESS);

  ocal_context ctx = NULL;
  ck_assert_ocal(ocal_context_from_cl(clctx, dev, queue, NULL, &ctx));
  cl_context got_ctx;
  cl_command_queue got_queue;
  ck_assert_ocal(ocal_context_get_cl_context(ctx, &got_ctx));
  ck_assert_ocal(ocal_context_get_cl_queue(ctx, &got_queue));
  ck_assert_ptr_eq(got_ctx, clctx);
  ck_assert_ptr_eq(got_queue, queue);
  ocal_memory_stats before = {.struct_size = sizeof before}, after = {.struct_size = sizeof after};
  ck_assert_ocal(ocal_memory_get_stats(ctx, &before));

  /* Elements 3 .. N+2 of the caller's memory, doubled in place by ocal on the shared queue. */
  const size_t shape[1] = {N};
  ocal_buffer buf;
  ck_assert_ocal(ocal_buffer_from_cl_mem(ctx, mem, 3 * sizeof(float), OCAL_F32, 1, shape, &buf));
  ck_assert_ocal(ocal_memory_get_stats(ctx, &after));
  ck_assert_uint_eq(after.bytes_in_use, before.bytes_in_use);
  ck_assert_uint_eq(after.device_allocs, before.device_allocs);
  cl_mem same;
  size_t offset;
  ck_assert_ocal(ocal_buffer_get_cl_mem(buf, &same, &offset));
  ck_assert_ptr_eq(same, mem);
  ck_assert_uint_eq(offset, 3 * sizeof(float));
  ck_assert_ocal(ocal_binary_scalar(OCAL_BINARY_MUL, buf, 2.0, buf));
  ck_assert_int_eq(clEnqueueReadBuffer(queue, mem, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL),
                   CL_SUCCESS);
  for (int i = 0; i < N + 3; i++)
    ck_assert_float_eq(out[i], i < 3 ? in[i] : 2.0f * in[i]);

  /* ocal holds its own references: the caller's release first, then ocal's, frees nothing
   * twice (LeakSanitizer and the driver would tell). */
  ck_assert_int_eq(clReleaseMemObject(mem), CL_SUCCESS);
  float back[N];
  ck_assert_ocal(ocal_buffer_read(buf, 0, N, back, NULL));
  ck_assert_float_eq(back[0], 2.0f * in[3]);
  ck_assert_ocal(ocal_buffer_release(buf));
  ck_assert_ocal(ocal_context_release(ctx));
  ck_assert_int_eq(clFinish(queue), CL_SUCCESS);
  ck_assert_int_eq(clReleaseCommandQueue(queue), CL_SUCCESS);
  ck_assert_int_eq(clReleaseContext(clctx), CL_SUCCESS);
}
END_TEST

START_TEST(test_adopt_errors) {
  cl_context clctx;
  cl_device_id dev;
  cl_command_queue queue;
  raw_opencl(&clctx, &dev, &queue, 0);
  ocal_context ctx = (ocal_context)&ctx;
  ck_assert_ocal_fails(ocal_context_from_cl(NULL, dev, queue, NULL, &ctx), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_null(ctx);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_context_from_cl"));
  ocal_context_options opts;
  ck_assert_ocal(ocal_context_options_init(&opts));
  opts.device = "cpu";
  ck_assert_ocal_fails(ocal_context_from_cl(clctx, dev, queue, &opts, &ctx), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "options->device"));
  /* A queue of the fixture's context, not of clctx. */
  cl_command_queue other;
  ck_assert_ocal(ocal_context_get_cl_queue(fixture_ctx, &other));
  ck_assert_ocal_fails(ocal_context_from_cl(clctx, dev, other, NULL, &ctx), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "another OpenCL context"));
  /* Without a queue ocal makes its own. */
  ck_assert_ocal(ocal_context_from_cl(clctx, dev, NULL, NULL, &ctx));
  cl_command_queue own;
  ck_assert_ocal(ocal_context_get_cl_queue(ctx, &own));
  ck_assert_ptr_ne(own, queue);

  cl_int err;
  cl_mem mem = clCreateBuffer(clctx, CL_MEM_READ_WRITE, 64, NULL, &err);
  ck_assert_int_eq(err, CL_SUCCESS);
  const size_t four = 4, seventeen = 17;
  ocal_buffer buf = (ocal_buffer)&buf;
  ck_assert_ocal_fails(ocal_buffer_from_cl_mem(ctx, mem, 2, OCAL_F32, 1, &four, &buf),
                       OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_null(buf);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "multiple"));
  ck_assert_ocal_fails(ocal_buffer_from_cl_mem(ctx, mem, 0, OCAL_F32, 1, &seventeen, &buf),
                       OCAL_SHAPE_MISMATCH);
  ck_assert_ocal_fails(ocal_buffer_from_cl_mem(ctx, mem, 52, OCAL_F32, 1, &four, &buf),
                       OCAL_SHAPE_MISMATCH);
  /* The fixture's context is another OpenCL context than mem's. */
  ck_assert_ocal_fails(ocal_buffer_from_cl_mem(fixture_ctx, mem, 0, OCAL_F32, 1, &four, &buf),
                       OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "another OpenCL context"));
  ck_assert_ocal(ocal_buffer_from_cl_mem(ctx, mem, 48, OCAL_F32, 1, &four, &buf));
  ck_assert_ocal(ocal_buffer_release(buf));
  clReleaseMemObject(mem);
  /* A cl_mem that kernels may only read, or only write, is refused at the wrap, naming the
   * flag: any ocal call may write the buffer from a kernel, undefined on a read-only one.
   * Flags that limit only the host's access are taken as they are. */
  const struct { cl_mem_flags flags; const char *name; } kernel_limits[] = {
      {CL_MEM_READ_ONLY, "CL_MEM_READ_ONLY"}, {CL_MEM_WRITE_ONLY, "CL_MEM_WRITE_ONLY"}};
  for (int i = 0; i < 2; i++) {
    mem = clCreateBuffer(clctx, kernel_limits[i].flags, 64, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    buf = (ocal_buffer)&buf;
    ck_assert_ocal_fails(ocal_buffer_from_cl_mem(ctx, mem, 0, OCAL_F32, 1, &four, &buf),
                         OCAL_INVALID_ARGUMENT);
    ck_assert_ptr_null(buf);
    ck_assert_msg(strstr(ocal_last_error(), kernel_limits[i].name) &&
                      strstr(ocal_last_error(), "CL_MEM_READ_WRITE"),
                  "%s", ocal_last_error());
    clReleaseMemObject(mem);
  }
  mem = clCreateBuffer(clctx, CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS, 64, NULL, &err);
  ck_assert_int_eq(err, CL_SUCCESS);
  ck_assert_ocal(ocal_buffer_from_cl_mem(ctx, mem, 0, OCAL_F32, 1, &four, &buf));
  ck_assert_ocal(ocal_buffer_fill(buf, &(float){2.0f}));
  /* OpenCL has the driver refuse the host read; PoCL does. */
  float back[4];
  if (ocal_buffer_read(buf, 0, 4, back, NULL) != OCAL_OK)
    ck_assert_msg(strstr(ocal_last_error(), "CL_INVALID_OPERATION"), "%s", ocal_last_error());
  ck_assert_ocal(ocal_buffer_release(buf));
  clReleaseMemObject(mem);
  ck_assert_ocal(ocal_context_release(ctx));

  /* ocal needs its queue in order. */
  cl_command_queue ooo = clCreateCommandQueue(clctx, dev, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
                                              &err);
  if (err == CL_SUCCESS) {
    ck_assert_ocal_fails(ocal_context_from_cl(clctx, dev, ooo, NULL, &ctx), OCAL_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ocal_last_error(), "in-order"));
    clReleaseCommandQueue(ooo);
  }
  clReleaseCommandQueue(queue);
  clReleaseContext(clctx);
}
END_TEST

/* ---- device, finish, release ------------------------------------------------------------ */

START_TEST(test_context_device_matches_select) {
  ocal_device_info selected = {sizeof selected}, ctx_info = {sizeof ctx_info};
  memset(&selected, 0, sizeof selected);
  selected.struct_size = sizeof selected;
  memset(&ctx_info, 0xff, sizeof ctx_info);
  ctx_info.struct_size = sizeof ctx_info;
  ck_assert_ocal(ocal_device_select(NULL, &selected));
  ck_assert_ocal(ocal_context_get_device_info(fixture_ctx, &ctx_info));
  ck_assert_int_eq(ctx_info.platform_index, selected.platform_index);
  ck_assert_int_eq(ctx_info.device_index, selected.device_index);
  ck_assert_int_eq(ctx_info.type, selected.type);
  ck_assert_str_eq(ctx_info.name, selected.name);
  ck_assert_str_eq(ctx_info.vendor, selected.vendor);
  ck_assert_str_eq(ctx_info.platform_name, selected.platform_name);
  ck_assert_str_eq(ctx_info.driver_version, selected.driver_version);
  ck_assert_str_eq(ctx_info.opencl_c_version, selected.opencl_c_version);
  ck_assert_uint_eq(ctx_info.compute_units, selected.compute_units);
  /* OCAL_LIMITS (tests/implementations.sh runs the suite under profiles) may make the
   * context's device smaller than the one selected, never larger. */
  const char *limits = getenv("OCAL_LIMITS");
  if (limits && limits[0]) {
    ck_assert_uint_le(ctx_info.global_mem_bytes, selected.global_mem_bytes);
    ck_assert_uint_le(ctx_info.max_alloc_bytes, selected.max_alloc_bytes);
    ck_assert_uint_le(ctx_info.max_work_group_size, selected.max_work_group_size);
    ck_assert_uint_le(ctx_info.local_mem_bytes, selected.local_mem_bytes);
    ck_assert_int_le(ctx_info.has_fp64, selected.has_fp64);
  } else {
    ck_assert_uint_eq(ctx_info.global_mem_bytes, selected.global_mem_bytes);
    ck_assert_uint_eq(ctx_info.max_alloc_bytes, selected.max_alloc_bytes);
    ck_assert_uint_eq(ctx_info.max_work_group_size, selected.max_work_group_size);
    ck_assert_uint_eq(ctx_info.local_mem_bytes, selected.local_mem_bytes);
    ck_assert_int_eq(ctx_info.has_fp64, selected.has_fp64);
  }
}
END_TEST

/* The limits option shrinks the device (never grows it), rejects what it does not know
 * naming where it came from, and a smaller device still runs kernels. */
START_TEST(test_context_limits_option) {
  ocal_device_info real = {sizeof real};
  ck_assert_ocal(ocal_device_select(NULL, &real));
  ocal_context_options o;
  ocal_context_options_init(&o);
  ck_assert_ptr_null(o.limits);
  o.limits = "local_mem=16k,max_work_group=64,max_items=64x8x4,fp64=0,max_alloc=1m,"
             "cl_version=1.1";
  ocal_context ctx = NULL;
  ck_assert_ocal(ocal_context_create(&o, &ctx));
  ocal_device_info d = {sizeof d};
  ck_assert_ocal(ocal_context_get_device_info(ctx, &d));
  ck_assert_uint_eq(d.local_mem_bytes, real.local_mem_bytes < 16384 ? real.local_mem_bytes : 16384);
  ck_assert_uint_eq(d.max_work_group_size, real.max_work_group_size < 64 ? real.max_work_group_size : 64);
  ck_assert_uint_le(d.max_work_item_sizes[1], 8);
  ck_assert_uint_le(d.max_work_item_sizes[2], 4);
  ck_assert_uint_eq(d.max_alloc_bytes, 1u << 20);
  ck_assert_int_eq(d.has_fp64, 0);
  int fp64 = 1;
  ck_assert_ocal(ocal_context_get_fp64(ctx, &fp64));
  ck_assert_int_eq(fp64, 0);
  /* A buffer above the emulated largest allocation is refused; one below it works, and a
   * kernel (fill) runs on it, compiled as OpenCL C 1.1. */
  size_t big = (1u << 20) / 4 + 1, small = 1000;
  ocal_buffer b = NULL;
  ck_assert_int_ne(ocal_buffer_create(ctx, OCAL_F32, 1, &big, &b), OCAL_OK);
  ck_assert_ocal(ocal_buffer_create(ctx, OCAL_F32, 1, &small, &b));
  float v = 2.5f, back[1000];
  ck_assert_ocal(ocal_buffer_fill(b, &v));
  ck_assert_ocal(ocal_buffer_read(b, 0, small, back, NULL));
  for (size_t i = 0; i < small; i++) ck_assert_float_eq(back[i], 2.5f);
  ck_assert_ocal(ocal_buffer_release(b));
  ck_assert_ocal(ocal_context_release(ctx));

  /* Larger than the device: clamped to what it has. */
  o.limits = "local_mem=1g,max_work_group=1000000";
  ck_assert_ocal(ocal_context_create(&o, &ctx));
  ck_assert_ocal(ocal_context_get_device_info(ctx, &d));
  ck_assert_uint_eq(d.local_mem_bytes, real.local_mem_bytes);
  ck_assert_uint_eq(d.max_work_group_size, real.max_work_group_size);
  ck_assert_ocal(ocal_context_release(ctx));

  static const char *const bad[] = {"local_mem=abc", "frobnicate=1", "fp64=2", "cl_version=x",
                                    "max_items=4x4", "nosuchprofile", "local_mem=0"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    o.limits = bad[i];
    ctx = (ocal_context)1;
    ck_assert_int_eq(ocal_context_create(&o, &ctx), OCAL_INVALID_ARGUMENT);
    ck_assert_ptr_null(ctx);
    ck_assert_msg(strstr(ocal_last_error(), "limits option") != NULL, "%s", ocal_last_error());
  }
  /* The variable, when the option leaves it to the environment. */
  o.limits = NULL;
  setenv("OCAL_LIMITS", "mobile,bogus=1", 1);
  ck_assert_int_eq(ocal_context_create(&o, &ctx), OCAL_INVALID_ARGUMENT);
  ck_assert_msg(strstr(ocal_last_error(), "OCAL_LIMITS") != NULL, "%s", ocal_last_error());
  setenv("OCAL_LIMITS", "mobile", 1);
  ck_assert_ocal(ocal_context_create(&o, &ctx));
  ck_assert_ocal(ocal_context_get_device_info(ctx, &d));
  ck_assert_uint_le(d.local_mem_bytes, 32768);
  ck_assert_uint_le(d.max_work_group_size, 128);
  ck_assert_ocal(ocal_context_release(ctx));
  unsetenv("OCAL_LIMITS");
}
END_TEST

START_TEST(test_finish) {
  ck_assert_ocal(ocal_context_finish(fixture_ctx));
  /* With work queued by ocal itself. */
  size_t shape[1] = {1 << 16};
  ocal_buffer buf;
  float value = 2.5f, back[4] = {0};
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 1, shape, &buf));
  ck_assert_ocal(ocal_buffer_fill(buf, &value));
  ck_assert_ocal(ocal_context_finish(fixture_ctx));
  ck_assert_ocal(ocal_buffer_read(buf, shape[0] - 4, 4, back, NULL));
  for (int i = 0; i < 4; i++) ck_assert_float_eq(back[i], 2.5f);
  ck_assert_ocal(ocal_buffer_release(buf));
  ck_assert_ocal(ocal_context_finish(fixture_ctx));
}
END_TEST

START_TEST(test_release_null) { ck_assert_ocal(ocal_context_release(NULL)); }
END_TEST

START_TEST(test_create_null_out) {
  ck_assert_ocal_fails(ocal_context_create(NULL, NULL), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_context_create"));
  ocal_context_options opts;
  ck_assert_ocal(ocal_context_options_init(&opts));
  ck_assert_ocal_fails(ocal_context_create(&opts, NULL), OCAL_INVALID_ARGUMENT);
}
END_TEST

/* Every context function refuses a NULL context with OCAL_INVALID_HANDLE and names itself. */
static void assert_null_handle(ocal_status s, const char *func) {
  ck_assert_msg(s == OCAL_INVALID_HANDLE, "%s(NULL) returned %s", func, ocal_status_name(s));
  const char *msg = ocal_last_error();
  ck_assert_msg(strstr(msg, func) != NULL, "message does not name %s: '%s'", func, msg);
  ck_assert_msg(strstr(msg, "NULL") != NULL, "message does not say NULL: '%s'", msg);
}

START_TEST(test_null_context) {
  ocal_device_info info = {sizeof info};
  int fp64 = 5;
  ocal_cache_stats stats = {sizeof stats};
  const char *dir = "untouched";
  cl_context clctx = (cl_context)&info;
  cl_device_id dev = (cl_device_id)&info;
  cl_command_queue queue = (cl_command_queue)&info;
  assert_null_handle(ocal_context_finish(NULL), "ocal_context_finish");
  assert_null_handle(ocal_context_get_device_info(NULL, &info), "ocal_context_get_device_info");
  assert_null_handle(ocal_context_get_fp64(NULL, &fp64), "ocal_context_get_fp64");
  assert_null_handle(ocal_context_get_cache_stats(NULL, &stats), "ocal_context_get_cache_stats");
  assert_null_handle(ocal_context_get_cache_dir(NULL, &dir), "ocal_context_get_cache_dir");
  assert_null_handle(ocal_context_get_cl_context(NULL, &clctx), "ocal_context_get_cl_context");
  assert_null_handle(ocal_context_get_cl_device(NULL, &dev), "ocal_context_get_cl_device");
  assert_null_handle(ocal_context_get_cl_queue(NULL, &queue), "ocal_context_get_cl_queue");
  /* Nothing was written through the out pointers. */
  ck_assert_int_eq(fp64, 5);
  ck_assert_str_eq(dir, "untouched");
  ck_assert_ptr_eq(clctx, (cl_context)&info);
  ck_assert_ptr_eq(dev, (cl_device_id)&info);
  ck_assert_ptr_eq(queue, (cl_command_queue)&info);
}
END_TEST

START_TEST(test_null_out_pointers) {
  ck_assert_ocal_fails(ocal_context_get_device_info(fixture_ctx, NULL), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_context_get_device_info"));
  ck_assert_ocal_fails(ocal_context_get_fp64(fixture_ctx, NULL), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_context_get_fp64"));
  ck_assert_ocal_fails(ocal_context_get_cache_stats(fixture_ctx, NULL), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_context_get_cache_stats"));
  ck_assert_ocal_fails(ocal_context_get_cache_dir(fixture_ctx, NULL), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_context_get_cache_dir"));
}
END_TEST

/* ---- fp64 ------------------------------------------------------------------------------- */

START_TEST(test_fp64_option_off) {
  ck_assert_int_eq(unsetenv("OCAL_FP64"), 0);
  ck_assert_int_eq(fp64_with_option(0, NULL), 0);

  /* An f64 buffer is then refused, also on a device that has fp64. */
  ocal_context_options opts;
  ck_assert_ocal(ocal_context_options_init(&opts));
  opts.fp64 = 0;
  ocal_context ctx = create_with(&opts);
  size_t shape[1] = {4};
  ocal_buffer buf = NULL;
  ck_assert_ocal_fails(ocal_buffer_create(ctx, OCAL_F64, 1, shape, &buf), OCAL_UNSUPPORTED);
  ck_assert_ptr_null(buf);
  ck_assert_ocal_fails(ocal_buffer_create(ctx, OCAL_C64, 1, shape, &buf), OCAL_UNSUPPORTED);
  ck_assert_ocal(ocal_context_release(ctx));
}
END_TEST

START_TEST(test_fp64_option_on_and_default) {
  ck_assert_int_eq(unsetenv("OCAL_FP64"), 0);
  int device_has = -1;
  /* On (1) and default (-1) both give what the device has. */
  ck_assert_int_eq(fp64_with_option(1, &device_has), device_has);
  ck_assert_int_eq(fp64_with_option(-1, &device_has), device_has);
  ck_assert_int_eq(device_has == 0 || device_has == 1, 1);
}
END_TEST

START_TEST(test_fp64_env) {
  int device_has = -1;
  const char *off[] = {"0", "off", "OFF", "no", "false"};
  for (size_t i = 0; i < sizeof off / sizeof off[0]; i++) {
    ck_assert_int_eq(setenv("OCAL_FP64", off[i], 1), 0);
    ck_assert_msg(fp64_with_option(-1, &device_has) == 0, "OCAL_FP64=%s left fp64 on", off[i]);
  }
  /* An explicit option wins over the environment. */
  ck_assert_int_eq(setenv("OCAL_FP64", "0", 1), 0);
  ck_assert_int_eq(fp64_with_option(1, &device_has), device_has);
  /* Any other value leaves it to the device. */
  ck_assert_int_eq(setenv("OCAL_FP64", "1", 1), 0);
  ck_assert_int_eq(fp64_with_option(-1, &device_has), device_has);
}
END_TEST

/* ---- the disk cache options ------------------------------------------------------------- */

START_TEST(test_disk_cache_off) {
  char dir[4096];
  cache_dir_with(0, NULL, dir, sizeof dir);
  ck_assert_str_eq(dir, "(null)");
  /* Off wins over a directory given in the options too. */
  cache_dir_with(0, "/nonexistent/ocal-test-cache", dir, sizeof dir);
  ck_assert_str_eq(dir, "(null)");
  /* OCAL_CACHE=0 turns the default off. */
  ck_assert_int_eq(setenv("OCAL_CACHE", "0", 1), 0);
  cache_dir_with(-1, "/nonexistent/ocal-test-cache", dir, sizeof dir);
  ck_assert_str_eq(dir, "(null)");
  /* But an explicit 1 wins over OCAL_CACHE=0. */
  cache_dir_with(1, "/nonexistent/ocal-test-cache", dir, sizeof dir);
  ck_assert_str_eq(dir, "/nonexistent/ocal-test-cache");
}
END_TEST

START_TEST(test_cache_dir_option) {
  ck_assert_int_eq(unsetenv("OCAL_CACHE"), 0);
  ck_assert_int_eq(setenv("OCAL_CACHE_DIR", "/nonexistent/from-env", 1), 0);
  char dir[4096];
  cache_dir_with(-1, "/nonexistent/ocal-test-cache", dir, sizeof dir);
  ck_assert_str_eq(dir, "/nonexistent/ocal-test-cache");
  cache_dir_with(1, "/nonexistent/other-cache", dir, sizeof dir);
  ck_assert_str_eq(dir, "/nonexistent/other-cache");

  /* The context keeps its own copy of the string. */
  char option[64];
  snprintf(option, sizeof option, "/nonexistent/copied");
  ocal_context_options opts;
  ck_assert_ocal(ocal_context_options_init(&opts));
  opts.cache_dir = option;
  ocal_context ctx = create_with(&opts);
  memset(option, 'x', sizeof option - 1);
  const char *got = NULL;
  ck_assert_ocal(ocal_context_get_cache_dir(ctx, &got));
  ck_assert_ptr_nonnull(got);
  ck_assert_str_eq(got, "/nonexistent/copied");
  ck_assert_ocal(ocal_context_release(ctx));
}
END_TEST

START_TEST(test_cache_dir_environment) {
  ck_assert_int_eq(unsetenv("OCAL_CACHE"), 0);
  char dir[4096];
  ck_assert_int_eq(setenv("OCAL_CACHE_DIR", "/nonexistent/from-env", 1), 0);
  ck_assert_int_eq(setenv("XDG_CACHE_HOME", "/nonexistent/xdg", 1), 0);
  ck_assert_int_eq(setenv("HOME", "/nonexistent/home", 1), 0);
  cache_dir_with(-1, NULL, dir, sizeof dir);
  ck_assert_str_eq(dir, "/nonexistent/from-env");
  ck_assert_int_eq(unsetenv("OCAL_CACHE_DIR"), 0);
  cache_dir_with(-1, NULL, dir, sizeof dir);
  ck_assert_str_eq(dir, "/nonexistent/xdg/ocal");
  ck_assert_int_eq(unsetenv("XDG_CACHE_HOME"), 0);
  cache_dir_with(-1, NULL, dir, sizeof dir);
  ck_assert_str_eq(dir, "/nonexistent/home/.cache/ocal");
}
END_TEST

START_TEST(test_cache_stats_start_at_zero) {
  ocal_cache_stats stats = {sizeof stats};
  memset(&stats, 0xff, sizeof stats);
  stats.struct_size = sizeof stats;
  ck_assert_ocal(ocal_context_get_cache_stats(fixture_ctx, &stats));
  ck_assert_uint_eq(stats.compiles, 0);
  ck_assert_uint_eq(stats.disk_hits, 0);
  ck_assert_uint_eq(stats.memory_hits, 0);
  ck_assert_uint_eq(stats.disk_rejects, 0);
}
END_TEST

/* ---- many contexts, and one context from many threads ----------------------------------- */

START_TEST(test_many_contexts_in_a_loop) {
  ocal_device_info first = {sizeof first};
  ck_assert_ocal(ocal_context_get_device_info(fixture_ctx, &first));
  for (int i = 0; i < 20; i++) {
    ocal_context ctx = NULL;
    ocal_status s = ocal_context_create(NULL, &ctx);
    ck_assert_msg(s == OCAL_OK, "context %d: %s", i, ocal_last_error());
    ocal_device_info info = {sizeof info};
    ck_assert_ocal(ocal_context_get_device_info(ctx, &info));
    ck_assert_str_eq(info.name, first.name);
    ck_assert_ocal(ocal_context_finish(ctx));
    ck_assert_ocal(ocal_context_release(ctx));
  }
}
END_TEST

START_TEST(test_many_contexts_alive_at_once) {
  enum { N = 8 };
  ocal_context ctx[N];
  for (int i = 0; i < N; i++) ctx[i] = create_with(NULL);
  for (int i = 0; i < N; i++)
    for (int j = i + 1; j < N; j++) ck_assert_ptr_ne(ctx[i], ctx[j]);
  /* Each has its own OpenCL context and queue. */
  cl_context a, b;
  ck_assert_ocal(ocal_context_get_cl_context(ctx[0], &a));
  ck_assert_ocal(ocal_context_get_cl_context(ctx[N - 1], &b));
  ck_assert_ptr_ne(a, b);
  /* Released in an order other than creation. */
  for (int i = 0; i < N; i += 2) ck_assert_ocal(ocal_context_release(ctx[i]));
  for (int i = 1; i < N; i += 2) {
    ck_assert_ocal(ocal_context_finish(ctx[i]));
    ck_assert_ocal(ocal_context_release(ctx[i]));
  }
}
END_TEST

enum { THREADS = 4, ROUNDS = 6 };

typedef struct {
  ocal_context ctx;
  int id;
  pthread_barrier_t *start;
  int fills;        /* ocal_buffer_fill calls made */
  int bad_elements; /* elements read back with a wrong value */
  char error[512];  /* the first failure, "" if none */
} worker;

static void *worker_main(void *arg) {
  worker *w = arg;
  pthread_barrier_wait(w->start); /* all threads ask for the fill kernel at once */
  for (int round = 0; round < ROUNDS && !w->error[0]; round++) {
    size_t shape[2] = {(size_t)(17 + 31 * w->id + round), (size_t)(64 + round * 100)};
    size_t numel = shape[0] * shape[1];
    float value = (float)(w->id * 1000 + round) + 0.25f;
    ocal_buffer buf = NULL;
    float *back = malloc(numel * sizeof *back);
    ocal_status s = back ? ocal_buffer_create(w->ctx, OCAL_F32, 2, shape, &buf)
                         : OCAL_OUT_OF_HOST_MEMORY;
    if (s == OCAL_OK) {
      s = ocal_buffer_fill(buf, &value);
      if (s == OCAL_OK) w->fills++;
    }
    if (s == OCAL_OK) s = ocal_buffer_read(buf, 0, numel, back, NULL);
    if (s == OCAL_OK) {
      for (size_t i = 0; i < numel; i++)
        if (back[i] != value) w->bad_elements++;
    } else {
      snprintf(w->error, sizeof w->error, "thread %d round %d: %s: %s", w->id, round,
               ocal_status_name(s), ocal_last_error());
    }
    ocal_buffer_release(buf);
    free(back);
  }
  return NULL;
}

START_TEST(test_shared_context_from_threads) {
  ocal_context_options opts;
  ck_assert_ocal(ocal_context_options_init(&opts));
  opts.disk_cache = 0; /* count compiles, not disk hits */
  ocal_context ctx = create_with(&opts);
  const char *dir = "x";
  ck_assert_ocal(ocal_context_get_cache_dir(ctx, &dir));
  ck_assert_ptr_null(dir);

  pthread_barrier_t start;
  ck_assert_int_eq(pthread_barrier_init(&start, NULL, THREADS), 0);
  worker w[THREADS];
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].ctx = ctx;
    w[i].id = i;
    w[i].start = &start;
    ck_assert_int_eq(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
  }
  for (int i = 0; i < THREADS; i++) ck_assert_int_eq(pthread_join(t[i], NULL), 0);
  pthread_barrier_destroy(&start);

  int fills = 0;
  for (int i = 0; i < THREADS; i++) {
    ck_assert_msg(w[i].error[0] == '\0', "%s", w[i].error);
    ck_assert_msg(w[i].bad_elements == 0, "thread %d read %d wrong elements", i,
                  w[i].bad_elements);
    ck_assert_int_eq(w[i].fills, ROUNDS);
    fills += w[i].fills;
  }

  /* One f32 fill program, compiled once; every other request came from the memory cache. */
  ocal_cache_stats stats = {sizeof stats};
  ck_assert_ocal(ocal_context_get_cache_stats(ctx, &stats));
  ck_assert_uint_eq(stats.compiles, 1);
  ck_assert_uint_eq(stats.disk_hits, 0);
  ck_assert_uint_eq(stats.disk_rejects, 0);
  ck_assert_uint_eq(stats.compiles + stats.memory_hits, (uint64_t)fills);
  ck_assert_ocal(ocal_context_release(ctx));
}
END_TEST

/* ---- structs the library fills -------------------------------------------------------- */

/* Each call fills one struct whose struct_size the caller set; `out` is the caller's room. */
typedef ocal_status (*fill_fn)(void *out);
static ocal_status fill_device_info(void *out) {
  return ocal_context_get_device_info(fixture_ctx, out);
}
static ocal_status fill_cache_stats(void *out) {
  return ocal_context_get_cache_stats(fixture_ctx, out);
}
static ocal_status fill_memory_stats(void *out) { return ocal_memory_get_stats(fixture_ctx, out); }
static ocal_status fill_device_select(void *out) { return ocal_device_select(NULL, out); }
static ocal_status fill_device_list(void *out) {
  size_t n;
  return ocal_device_list(1, out, &n);
}

enum { PAST = 64 }; /* bytes of the caller's memory after the struct, which must stay as they are */

/* With struct_size = sizeof the struct, the call writes the struct and not one byte past it;
 * a struct_size this library cannot have been built with is refused, naming the call, the
 * field and the type, before anything is written. */
static void check_struct_size(const char *call, const char *type, fill_fn fill, size_t size) {
  unsigned char *room = malloc(size + PAST);
  ck_assert_ptr_nonnull(room);
  memset(room, 0xa5, size + PAST);
  memcpy(room, &size, sizeof size);
  ck_assert_msg(fill(room) == OCAL_OK, "%s: %s", call, ocal_last_error());
  size_t kept;
  memcpy(&kept, room, sizeof kept);
  ck_assert_uint_eq(kept, size);
  int written = 0;
  for (size_t i = sizeof size; i < size; i++) written |= room[i] != 0xa5;
  ck_assert_msg(written, "%s wrote nothing", call);
  for (size_t i = size; i < size + PAST; i++)
    ck_assert_msg(room[i] == 0xa5, "%s wrote byte %zu, past struct_size %zu", call, i, size);

  const size_t bad[] = {0, sizeof(size_t), size - 1, size + 1, size + PAST, (size_t)-1};
  for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
    memset(room, 0x5a, size + PAST);
    memcpy(room, &bad[b], sizeof bad[b]);
    ck_assert_msg(fill(room) == OCAL_INVALID_ARGUMENT, "%s took struct_size %zu", call, bad[b]);
    const char *msg = ocal_last_error();
    ck_assert_msg(strncmp(msg, call, strlen(call)) == 0 && strstr(msg, "struct_size") &&
                      strstr(msg, type),
                  "%s, struct_size %zu: the message does not name the call, the field and "
                  "the type: %s",
                  call, bad[b], msg);
    for (size_t i = sizeof(size_t); i < size + PAST; i++)
      ck_assert_msg(room[i] == 0x5a, "%s refused struct_size %zu but wrote byte %zu", call,
                    bad[b], i);
  }
  free(room);
}

START_TEST(test_filled_structs_honour_struct_size) {
  check_struct_size("ocal_context_get_device_info", "ocal_device_info", fill_device_info,
                    sizeof(ocal_device_info));
  check_struct_size("ocal_context_get_cache_stats", "ocal_cache_stats", fill_cache_stats,
                    sizeof(ocal_cache_stats));
  check_struct_size("ocal_memory_get_stats", "ocal_memory_stats", fill_memory_stats,
                    sizeof(ocal_memory_stats));
  check_struct_size("ocal_device_select", "ocal_device_info", fill_device_select,
                    sizeof(ocal_device_info));
  check_struct_size("ocal_device_list", "ocal_device_info", fill_device_list,
                    sizeof(ocal_device_info));
}
END_TEST

int main(void) {
  Suite *s = suite_create("context");

  TCase *tc = fixture_tcase("create");
  tcase_add_test(tc, test_create_null_options);
  tcase_add_test(tc, test_options_init_defaults);
  tcase_add_test(tc, test_options_init_null);
  tcase_add_test(tc, test_options_struct_size);
  tcase_add_test(tc, test_create_device_zero_zero);
  tcase_add_test(tc, test_create_bad_device_option);
  tcase_add_test(tc, test_create_bad_option_values);
  tcase_add_test(tc, test_profiling_option);
  tcase_add_test(tc, test_release_null);
  tcase_add_test(tc, test_create_null_out);
  suite_add_tcase(s, tc);

  tc = fixture_tcase("escape_hatches");
  tcase_add_test(tc, test_escape_hatches_consistent);
  tcase_add_test(tc, test_escape_hatches_usable);
  tcase_add_test(tc, test_escape_hatches_mix_with_ocal_buffers);
  tcase_add_test(tc, test_escape_hatches_null_out);
  tcase_add_test(tc, test_retained_handles_outlive_context);
  suite_add_tcase(s, tc);

  tc = fixture_tcase("queries");
  tcase_add_test(tc, test_context_device_matches_select);
  tcase_add_test(tc, test_context_limits_option);
  tcase_add_test(tc, test_finish);
  tcase_add_test(tc, test_null_context);
  tcase_add_test(tc, test_null_out_pointers);
  suite_add_tcase(s, tc);

  tc = fixture_tcase("options");
  tcase_add_test(tc, test_fp64_option_off);
  tcase_add_test(tc, test_fp64_option_on_and_default);
  tcase_add_test(tc, test_fp64_env);
  tcase_add_test(tc, test_disk_cache_off);
  tcase_add_test(tc, test_cache_dir_option);
  tcase_add_test(tc, test_cache_dir_environment);
  tcase_add_test(tc, test_cache_stats_start_at_zero);
  tcase_add_test(tc, test_filled_structs_honour_struct_size);
  suite_add_tcase(s, tc);

  tc = fixture_tcase("lifetime_and_threads");
  tcase_add_test(tc, test_second_release_refused_while_buffers_live);
  tcase_add_test(tc, test_many_contexts_in_a_loop);
  tcase_add_test(tc, test_many_contexts_alive_at_once);
  tcase_add_test(tc, test_shared_context_from_threads);
  tcase_add_test(tc, test_adopt_context_and_memory);
  tcase_add_test(tc, test_adopt_errors);
  suite_add_tcase(s, tc);

  return fixture_run(s);
}
