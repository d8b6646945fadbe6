/* ocal — contexts: creation on the selected device, the queue, escape hatches. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

ocal_status ocal__check_context(ocal_context ctx, const char *func) {
  if (!ctx) return ocal__fail(OCAL_INVALID_HANDLE, func, "the context is NULL");
  if (ctx->magic != OCAL__CONTEXT_MAGIC)
    return ocal__fail(OCAL_INVALID_HANDLE, func,
                      "the context handle is not a live ocal context (released already?)");
  return OCAL_OK;
}

const char *ocal_gemm_precision_name(ocal_gemm_precision precision) {
  switch (precision) {
    case OCAL_GEMM_PRECISION_DEFAULT:
      return "default";
    case OCAL_GEMM_PRECISION_FP32:
      return "fp32";
    case OCAL_GEMM_PRECISION_TF32:
      return "tf32";
  }
  return "invalid";
}

ocal_status ocal_context_options_init(ocal_context_options *options) {
  if (!options) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "options must not be NULL");
  memset(options, 0, sizeof *options);
  options->struct_size = sizeof *options;
  options->device = NULL;
  options->profiling = 0;
  options->disk_cache = -1;
  options->cache_dir = NULL;
  options->fp64 = -1;
  options->pool = -1;
  options->pool_limit = -1;
  options->memory_limit = -1;
  options->staging = -1;
  options->gemm_precision = OCAL_GEMM_PRECISION_DEFAULT;
  return OCAL_OK;
}

static void destroy(ocal_context ctx) {
  if (ctx->queue) clFinish(ctx->queue);
  while (ctx->attachments) {
    ocal__attachment *a = ctx->attachments;
    ctx->attachments = a->next;
    a->destroy(a->data);
    free(a);
  }
  ocal__program_cache_clear(ctx);
  ocal__memory_destroy(ctx); /* last: the attachments above may return memory to the pool */
  if (ctx->queue) clReleaseCommandQueue(ctx->queue);
  if (ctx->cl_ctx) clReleaseContext(ctx->cl_ctx);
  pthread_mutex_destroy(&ctx->lock);
  free(ctx->cache_dir);
  ctx->magic = 0;
  free(ctx);
}

ocal_status ocal__context_attachment(ocal_context ctx, const void *key,
                                     ocal_status (*create)(ocal_context ctx, void **data),
                                     void (*destroy_data)(void *data), void **data,
                                     const char *func) {
  ocal_status status = OCAL_OK;
  pthread_mutex_lock(&ctx->lock);
  ocal__attachment *a = ctx->attachments;
  while (a && a->key != key) a = a->next;
  if (!a) {
    a = calloc(1, sizeof *a);
    void *created = NULL;
    if (!a) {
      status = ocal__fail(OCAL_OUT_OF_HOST_MEMORY, func, "no memory for per-context state");
    } else if ((status = create(ctx, &created)) != OCAL_OK) {
      ocal__claim_error(func);
      free(a);
      a = NULL;
    } else {
      a->key = key;
      a->data = created;
      a->destroy = destroy_data;
      a->next = ctx->attachments;
      ctx->attachments = a;
    }
  }
  *data = a ? a->data : NULL;
  pthread_mutex_unlock(&ctx->lock);
  return status;
}

void ocal__context_retain(ocal_context ctx) { atomic_fetch_add(&ctx->refs, 1); }

void ocal__context_unref(ocal_context ctx) {
  if (atomic_fetch_sub(&ctx->refs, 1) == 1) destroy(ctx);
}

/* The first half of making a context, shared by ocal_context_create and ocal_context_from_cl:
 * checks the options into *opt, allocates the context and reads the settings. */
static ocal_status context_begin(const ocal_context_options *options, ocal_context_options *opt,
                                 ocal_context *out, const char *func) {
  ocal_context_options_init(opt);
  if (options) {
    /* 0.2's struct ends with `limits`: the smallest struct_size a caller can have. */
    ocal_status s = ocal__options_copy(
        func, "ocal_context_options_init", opt, sizeof *opt, options,
        offsetof(ocal_context_options, limits) + sizeof opt->limits);
    if (s != OCAL_OK) return s;
  }
  /* The switches take 1 (on), 0 (off) and, but for profiling, -1 (the default). */
  const struct {
    const char *name;
    int value, lowest;
  } flags[] = {{"profiling", opt->profiling, 0}, {"disk_cache", opt->disk_cache, -1},
               {"fp64", opt->fp64, -1},           {"pool", opt->pool, -1},
               {"staging", opt->staging, -1}};
  for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
    if (flags[i].value < flags[i].lowest || flags[i].value > 1)
      return ocal__fail(OCAL_INVALID_ARGUMENT, func, "options->%s is %d: use 1 (on), 0 (off)%s",
                        flags[i].name, flags[i].value,
                        flags[i].lowest < 0 ? " or -1 (the default)" : "");
  if (opt->pool_limit < -1 || opt->memory_limit < -1)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "options->%s is %lld: use a number of bytes, or -1 (the default)",
                      opt->pool_limit < -1 ? "pool_limit" : "memory_limit",
                      (long long)(opt->pool_limit < -1 ? opt->pool_limit : opt->memory_limit));
  if (opt->gemm_precision < OCAL_GEMM_PRECISION_DEFAULT ||
      opt->gemm_precision > OCAL_GEMM_PRECISION_TF32)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "options->gemm_precision is %d: use OCAL_GEMM_PRECISION_DEFAULT (-1), "
                      "OCAL_GEMM_PRECISION_FP32 (0) or OCAL_GEMM_PRECISION_TF32 (1)",
                      opt->gemm_precision);

  ocal_context ctx = calloc(1, sizeof *ctx);
  if (!ctx) return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, func, "no memory for the context");
  if (pthread_mutex_init(&ctx->lock, NULL) != 0) {
    free(ctx);
    return ocal__fail(OCAL_INTERNAL, func, "pthread_mutex_init failed");
  }
  ctx->magic = OCAL__CONTEXT_MAGIC;
  atomic_init(&ctx->refs, 1);
  atomic_init(&ctx->released, 0);

  /* Every OCAL_* variable is read here, once, before anything depends on one. */
  ocal_status status = ocal__settings_read(&ctx->settings, func);
  if (status != OCAL_OK) {
    destroy(ctx);
    return status;
  }
  /* The option wins over OCAL_GEMM_PRECISION (settings.h's precedence). */
  if (opt->gemm_precision != OCAL_GEMM_PRECISION_DEFAULT)
    ctx->settings.gemm_precision = opt->gemm_precision;
  *out = ctx;
  return OCAL_OK;
}

/* The second half: device limits, the disk cache and the memory pool, once the context has
 * its device, OpenCL context and queue. Destroys the context on failure. */
static ocal_status context_end(ocal_context ctx, const ocal_context_options *opt,
                               ocal_context *out, const char *func) {
  ocal_status status = ocal__limits_init(ctx, opt->limits, opt->fp64, func);
  if (status == OCAL_OK) {
    int disk = opt->disk_cache >= 0 ? opt->disk_cache : ctx->settings.cache != 0;
    if (disk) ctx->cache_dir = ocal__disk_cache_dir(opt->cache_dir, ctx->settings.cache_dir);
    status = ocal__memory_init(ctx, opt);
  }
  if (status != OCAL_OK) {
    destroy(ctx);
    return status;
  }
  *out = ctx;
  return OCAL_OK;
}

/* The context's own in-order queue on its device, profiling as the options ask. */
static ocal_status create_queue(ocal_context ctx, const ocal_context_options *opt,
                                const char *func) {
  cl_int err;
  cl_command_queue_properties qprops = opt->profiling ? CL_QUEUE_PROFILING_ENABLE : 0;
  ctx->queue = clCreateCommandQueue(ctx->cl_ctx, ctx->device, qprops, &err);
  if (err != CL_SUCCESS) return ocal__cl_fail(ctx->info.name, err, "clCreateCommandQueue", func);
  return OCAL_OK;
}

ocal_status ocal_context_create(const ocal_context_options *options, ocal_context *out) {
  if (!out) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "ctx (the out-parameter) must not be NULL");
  *out = NULL;
  ocal_context_options opt;
  ocal_context ctx;
  ocal_status status = context_begin(options, &opt, &ctx, __func__);
  if (status != OCAL_OK) return status;
  status = ocal__device_resolve(__func__, opt.device, ctx->settings.device, &ctx->info,
                                &ctx->platform, &ctx->device);
  if (status != OCAL_OK) goto fail;

  cl_int err;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)ctx->platform, 0};
  ctx->cl_ctx = clCreateContext(props, 1, &ctx->device, NULL, NULL, &err);
  if (err != CL_SUCCESS) {
    status = ocal__cl_fail(ctx->info.name, err, "clCreateContext", __func__);
    goto fail;
  }
  if ((status = create_queue(ctx, &opt, __func__)) != OCAL_OK) goto fail;
  return context_end(ctx, &opt, out, __func__);
fail:
  destroy(ctx);
  return status;
}

/* Checks that an adopted queue belongs to the adopted context and device and runs in order
 * (ocal's commands rely on the order of one queue). */
static ocal_status check_adopted_queue(ocal_context ctx, cl_command_queue queue,
                                       const char *func) {
  cl_context qctx = NULL;
  cl_device_id qdev = NULL;
  cl_command_queue_properties props = 0;
  cl_int err = clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof qctx, &qctx, NULL);
  if (err == CL_SUCCESS)
    err = clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof qdev, &qdev, NULL);
  if (err == CL_SUCCESS)
    err = clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL);
  if (err != CL_SUCCESS) return ocal__cl_fail(ctx->info.name, err, "clGetCommandQueueInfo", func);
  if (qctx != ctx->cl_ctx || qdev != ctx->device)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "the queue belongs to another OpenCL context or device than the ones "
                      "given; pass the queue's own context and device");
  if (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "the queue runs out of order; ocal needs an in-order queue (create it "
                      "without CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, or pass NULL)");
  return OCAL_OK;
}

ocal_status ocal_context_from_cl(cl_context cl_ctx, cl_device_id device, cl_command_queue queue,
                                 const ocal_context_options *options, ocal_context *out) {
  if (!out) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "ctx (the out-parameter) must not be NULL");
  *out = NULL;
  if (!cl_ctx || !device)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "the cl_context and the cl_device_id must not be "
                                            "NULL (the queue may be)");
  if (options && options->struct_size >= offsetof(ocal_context_options, device) +
                                             sizeof options->device && options->device)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "options->device is set, but an adopted context "
                                            "runs on the cl_device_id given; leave it NULL");
  ocal_context_options opt;
  ocal_context ctx;
  ocal_status status = context_begin(options, &opt, &ctx, __func__);
  if (status != OCAL_OK) return status;
  status = ocal__device_find(__func__, device, &ctx->info, &ctx->platform);
  if (status != OCAL_OK) goto fail;
  ctx->device = device;
  cl_int err = clRetainContext(cl_ctx);
  if (err != CL_SUCCESS) {
    status = ocal__cl_fail(ctx->info.name, err, "clRetainContext", __func__);
    goto fail;
  }
  ctx->cl_ctx = cl_ctx;
  if (queue) {
    if ((status = check_adopted_queue(ctx, queue, __func__)) != OCAL_OK) goto fail;
    if ((err = clRetainCommandQueue(queue)) != CL_SUCCESS) {
      status = ocal__cl_fail(ctx->info.name, err, "clRetainCommandQueue", __func__);
      goto fail;
    }
    ctx->queue = queue;
  } else if ((status = create_queue(ctx, &opt, __func__)) != OCAL_OK) {
    goto fail;
  }
  return context_end(ctx, &opt, out, __func__);
fail:
  destroy(ctx);
  return status;
}

ocal_status ocal_context_release(ocal_context ctx) {
  if (!ctx) return OCAL_OK;
  ocal_status status = ocal__check_context(ctx, __func__);
  if (status != OCAL_OK) return status;
  /* Once only: a second release while buffers hold the context would free it under them. */
  if (atomic_exchange(&ctx->released, 1))
    return OCAL_FAIL(OCAL_INVALID_HANDLE, "the context was released already");
  /* Buffers still alive hold their own references: the context goes when the last does. */
  ocal__context_unref(ctx);
  return OCAL_OK;
}

ocal_status ocal_context_finish(ocal_context ctx) {
  ocal_status status = ocal__check_context(ctx, __func__);
  if (status != OCAL_OK) return status;
  OCAL_CL_CHECK(ctx->info.name, clFinish(ctx->queue));
  return ocal__transfer_finish(ctx, __func__); /* the transfer queues are the context's too */
}

ocal_status ocal_context_get_device_info(ocal_context ctx, ocal_device_info *info) {
  ocal_status status = ocal__check_context(ctx, __func__);
  if (status != OCAL_OK) return status;
  if (!info) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "info must not be NULL");
  status = ocal__filled_check(__func__, "info", "ocal_device_info", info,
                              OCAL__DEVICE_INFO_MIN, sizeof *info);
  if (status != OCAL_OK) return status;
  ocal__filled_write(info, &ctx->info);
  return OCAL_OK;
}

ocal_status ocal_context_get_fp64(ocal_context ctx, int *has_fp64) {
  ocal_status status = ocal__check_context(ctx, __func__);
  if (status != OCAL_OK) return status;
  if (!has_fp64) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "has_fp64 must not be NULL");
  *has_fp64 = ctx->fp64;
  return OCAL_OK;
}

ocal_status ocal_context_get_cache_stats(ocal_context ctx, ocal_cache_stats *stats) {
  ocal_status status = ocal__check_context(ctx, __func__);
  if (status != OCAL_OK) return status;
  if (!stats) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "stats must not be NULL");
  /* The first ocal_cache_stats with struct_size ends with disk_rejects. */
  status = ocal__filled_check(__func__, "stats", "ocal_cache_stats", stats,
                              OCAL__SIZE_THROUGH(ocal_cache_stats, disk_rejects), sizeof *stats);
  if (status != OCAL_OK) return status;
  pthread_mutex_lock(&ctx->lock);
  ocal__filled_write(stats, &ctx->stats);
  pthread_mutex_unlock(&ctx->lock);
  return OCAL_OK;
}

ocal_status ocal_context_get_cache_dir(ocal_context ctx, const char **dir) {
  ocal_status status = ocal__check_context(ctx, __func__);
  if (status != OCAL_OK) return status;
  if (!dir) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "dir must not be NULL");
  *dir = ctx->cache_dir;
  return OCAL_OK;
}

/* The three escape hatches share one shape: check, then hand out a handle the context owns. */
#define OCAL__ESCAPE_HATCH(fn, type, field)                                      \
  ocal_status fn(ocal_context ctx, type *out) {                                  \
    ocal_status status = ocal__check_context(ctx, __func__);                     \
    if (status != OCAL_OK) return status;                                        \
    if (!out) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "out must not be NULL");   \
    *out = ctx->field;                                                           \
    return OCAL_OK;                                                              \
  }
OCAL__ESCAPE_HATCH(ocal_context_get_cl_context, cl_context, cl_ctx)
OCAL__ESCAPE_HATCH(ocal_context_get_cl_device, cl_device_id, device)
OCAL__ESCAPE_HATCH(ocal_context_get_cl_queue, cl_command_queue, queue)

/* The accessors of internal.h: the only way areas read the context's fields. */
cl_platform_id ocal__context_platform(ocal_context ctx) { return ctx->platform; }
cl_device_id ocal__context_device(ocal_context ctx) { return ctx->device; }
cl_context ocal__context_cl(ocal_context ctx) { return ctx->cl_ctx; }
cl_command_queue ocal__context_queue(ocal_context ctx) { return ctx->queue; }
const ocal_device_info *ocal__context_info(ocal_context ctx) { return &ctx->info; }
int ocal__context_fp64(ocal_context ctx) { return ctx->fp64; }
const char *ocal__context_cache_dir(ocal_context ctx) { return ctx->cache_dir; }
const char *ocal__context_build_options(ocal_context ctx) { return ctx->limits.build_options; }
unsigned ocal__context_vendor_id(ocal_context ctx) { return ctx->limits.vendor_id; }
unsigned ocal__context_compute_capability(ocal_context ctx) {
  return ctx->limits.compute_capability;
}
unsigned ocal__context_sub_group_size(ocal_context ctx) { return ctx->limits.sub_group_size; }
int ocal__context_int64_atomics(ocal_context ctx) { return ctx->limits.int64_atomics; }
