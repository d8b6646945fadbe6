/* ocal — the device limits a context works within, and their emulation (OCAL_LIMITS).
 *
 * device.c reads what the driver reports into the context's ocal_device_info; this file is
 * the one place that turns that into the limits ocal plans with: it reads the few facts that
 * only some drivers report (sub-group width, vendor id), parses the OpenCL version, and, when
 * the limits option or OCAL_LIMITS asks, makes the device look smaller than it is (never
 * larger), so that every fallback path for a smaller AMD, Intel or mobile GPU can be run on
 * the machine at hand. Every planner reads ctx->info and ctx->limits, never the driver, and
 * program.c enforces the emulated work-group and local-memory limits on every kernel, so a
 * planner that ignored them fails the suite rather than passing by luck. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

/* Vendor extensions that report the width of the device's SIMD groups. */
#define OCAL__CL_DEVICE_WARP_SIZE_NV 0x4003
/* cl_nv_device_attribute_query's compute capability: the PTX target a device's compiler
 * emits for, which the tensor-core probe (src/blas/tc_probe.c) needs to be worth building. */
#define OCAL__CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV 0x4000
#define OCAL__CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV 0x4001
#define OCAL__CL_DEVICE_WAVEFRONT_WIDTH_AMD 0x4043
#define OCAL__CL_DEVICE_SUB_GROUP_SIZES_INTEL 0x4108

/* Named profiles: the limits of device families no machine here has. */
static const struct {
  const char *name;
  const char *spec;
} profiles[] = {
    /* A GCN/RDNA card: work-groups of 256 by default in its driver, 64 KiB of LDS. */
    {"amd", "max_work_group=256,local_mem=65536"},
    /* An Intel integrated GPU (Xe-LP): no double precision, 64 KiB of shared local memory. */
    {"intel-igpu", "fp64=0,local_mem=65536,max_work_group=512"},
    /* A small mobile GPU (Mali/Adreno class): OpenCL 1.2, 32 KiB, work-groups of 128. */
    {"mobile", "cl_version=1.2,local_mem=32768,max_work_group=128,max_items=128x128x64"},
};

static int has_extension(cl_device_id dev, const char *ext) {
  size_t need = 0;
  if (clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, 0, NULL, &need) != CL_SUCCESS || need == 0)
    return 0;
  char *list = malloc(need + 2);
  int found = 0;
  if (list && clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, need, list, NULL) == CL_SUCCESS) {
    list[need] = '\0';
    size_t len = strlen(ext);
    for (const char *p = list; (p = strstr(p, ext)) != NULL; p += len)
      if ((p == list || p[-1] == ' ') && (p[len] == '\0' || p[len] == ' ')) {
        found = 1;
        break;
      }
  }
  free(list);
  return found;
}

/* "OpenCL 3.0 CUDA" -> 300; 0 when the text has no version. */
static unsigned parse_version(const char *text) {
  const char *p = strstr(text, "OpenCL ");
  if (p) p += 7;
  else p = text;
  if (strncmp(p, "C ", 2) == 0) p += 2;
  unsigned major = 0, minor = 0;
  if (sscanf(p, "%u.%u", &major, &minor) != 2) return 0;
  return major * 100 + minor * 10;
}

/* Reads the facts beyond ocal_device_info that planners may need. */
static void read_device(ocal_context ctx) {
  ocal__limits *l = &ctx->limits;
  cl_device_id dev = ctx->device;
  cl_uint u = 0;
  if (clGetDeviceInfo(dev, CL_DEVICE_VENDOR_ID, sizeof u, &u, NULL) == CL_SUCCESS)
    l->vendor_id = u;
  l->sub_group_size = 0;
  l->compute_capability = 0;
  l->int64_atomics = has_extension(dev, "cl_khr_int64_base_atomics");
  int nv_query = has_extension(dev, "cl_nv_device_attribute_query");
  cl_uint major = 0, minor = 0;
  if (nv_query &&
      clGetDeviceInfo(dev, OCAL__CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV, sizeof major, &major,
                      NULL) == CL_SUCCESS &&
      clGetDeviceInfo(dev, OCAL__CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV, sizeof minor, &minor,
                      NULL) == CL_SUCCESS && major < 100 && minor < 10)
    l->compute_capability = major * 10 + minor;
  if (nv_query &&
      clGetDeviceInfo(dev, OCAL__CL_DEVICE_WARP_SIZE_NV, sizeof u, &u, NULL) == CL_SUCCESS)
    l->sub_group_size = u;
  else if (has_extension(dev, "cl_amd_device_attribute_query") &&
           clGetDeviceInfo(dev, OCAL__CL_DEVICE_WAVEFRONT_WIDTH_AMD, sizeof u, &u, NULL) ==
               CL_SUCCESS)
    l->sub_group_size = u;
  else if (has_extension(dev, "cl_intel_required_subgroup_size")) {
    /* Intel's compiler picks one of several widths per kernel: the smallest is the one a
     * kernel may count on. */
    size_t sizes[8] = {0}, bytes = 0;
    if (clGetDeviceInfo(dev, OCAL__CL_DEVICE_SUB_GROUP_SIZES_INTEL, sizeof sizes, sizes,
                        &bytes) == CL_SUCCESS && bytes >= sizeof sizes[0]) {
      size_t least = sizes[0];
      for (size_t i = 1; i < bytes / sizeof sizes[0] && i < 8; i++)
        if (sizes[i] && sizes[i] < least) least = sizes[i];
      l->sub_group_size = (unsigned)least;
    }
  }
  unsigned dv = parse_version(ctx->info.device_version);
  unsigned cv = parse_version(ctx->info.opencl_c_version);
  l->cl_version = dv && cv ? (dv < cv ? dv : cv) : dv ? dv : cv;
}

/* One value: a size with an optional k/m/g suffix (powers of 1024), or a version "1.2". */
static int parse_size(const char *v, uint64_t *out) {
  if (!isdigit((unsigned char)v[0])) return 0;
  errno = 0;
  char *end;
  unsigned long long x = strtoull(v, &end, 10);
  if (errno) return 0;
  uint64_t mult = 1;
  if (*end == 'k' || *end == 'K') mult = 1024, end++;
  else if (*end == 'm' || *end == 'M') mult = 1024 * 1024, end++;
  else if (*end == 'g' || *end == 'G') mult = 1024ull * 1024 * 1024, end++;
  if (*end != '\0' || x == 0 || x > UINT64_MAX / mult) return 0;
  *out = x * mult;
  return 1;
}

#define BAD(...) ocal__fail(OCAL_INVALID_ARGUMENT, func, __VA_ARGS__)

/* Applies one "key=value" of the spec to a device's description and limits; `what` names
 * where the spec came from. */
static ocal_status apply_one(ocal_device_info *d, ocal__limits *l, const char *func,
                             const char *what, char *item, int depth) {
  char *eq = strchr(item, '=');
  if (!eq) {
    for (size_t i = 0; i < sizeof profiles / sizeof profiles[0]; i++)
      if (strcasecmp(item, profiles[i].name) == 0 && depth == 0) {
        char copy[256];
        snprintf(copy, sizeof copy, "%s", profiles[i].spec);
        for (char *save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
          ocal_status s = apply_one(d, l, func, what, t, 1);
          if (s != OCAL_OK) return s;
        }
        return OCAL_OK;
      }
    return BAD("%s: '%s' is neither key=value nor a profile (amd, intel-igpu, mobile)", what,
               item);
  }
  *eq = '\0';
  const char *key = item, *val = eq + 1;
  uint64_t v = 0;
  if (strcmp(key, "cl_version") == 0) {
    unsigned major = 0, minor = 0;
    char tail;
    if (sscanf(val, "%u.%u%c", &major, &minor, &tail) != 2 || major == 0 || minor > 9)
      return BAD("%s: cl_version='%s' is not an OpenCL version such as 1.2", what, val);
    unsigned want = major * 100 + minor * 10;
    if (want < l->cl_version) {
      l->cl_version = want;
      l->emulated = 1;
    }
    return OCAL_OK;
  }
  if (strcmp(key, "fp64") == 0) {
    if (strcmp(val, "0") != 0 && strcmp(val, "1") != 0)
      return BAD("%s: fp64='%s' must be 0 or 1", what, val);
    if (val[0] == '0' && d->has_fp64) {
      d->has_fp64 = 0;
      l->emulated = 1;
    }
    return OCAL_OK;
  }
  if (strcmp(key, "max_items") == 0) {
    unsigned long long it[3];
    char tail;
    if (sscanf(val, "%llux%llux%llu%c", &it[0], &it[1], &it[2], &tail) != 3 || !it[0] ||
        !it[1] || !it[2])
      return BAD("%s: max_items='%s' must be three sizes such as 256x256x64", what, val);
    for (int i = 0; i < 3; i++)
      if (it[i] < d->max_work_item_sizes[i]) {
        d->max_work_item_sizes[i] = (size_t)it[i];
        l->emulated = 1;
      }
    return OCAL_OK;
  }
  if (!parse_size(val, &v))
    return BAD("%s: %s='%s' is not a positive size (digits, optionally k, m or g)", what, key,
               val);
  uint64_t *u64 = NULL;
  size_t *sz = NULL;
  if (strcmp(key, "local_mem") == 0) u64 = &d->local_mem_bytes;
  else if (strcmp(key, "max_alloc") == 0) u64 = &d->max_alloc_bytes;
  else if (strcmp(key, "global_mem") == 0) u64 = &d->global_mem_bytes;
  else if (strcmp(key, "max_work_group") == 0) sz = &d->max_work_group_size;
  else
    return BAD("%s: unknown key '%s' (known: local_mem, max_work_group, max_items, fp64, "
               "cl_version, max_alloc, global_mem, or a profile name)", what, key);
  /* Clamp: a device can be made to look smaller, never larger than it is. */
  if (u64 && v < *u64) *u64 = v, l->emulated = 1;
  if (sz && v < *sz) *sz = (size_t)v, l->emulated = 1;
  return OCAL_OK;
}

/* Applies every item of a spec (comma-separated) to d and l. */
static ocal_status apply_spec(ocal_device_info *d, ocal__limits *l, const char *func,
                              const char *what, const char *spec) {
  size_t len = strlen(spec);
  char *copy = malloc(len + 1);
  if (!copy) return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, func, "no memory for the limits");
  memcpy(copy, spec, len + 1);
  ocal_status s = OCAL_OK;
  for (char *save = NULL, *t = strtok_r(copy, ",", &save); t && s == OCAL_OK;
       t = strtok_r(NULL, ",", &save)) {
    while (isspace((unsigned char)*t)) t++;
    if (*t) s = apply_one(d, l, func, what, t, 0);
  }
  free(copy);
  return s;
}

int ocal__limits_spec_valid(const char *spec) {
  ocal_device_info d = {0};
  ocal__limits l = {0};
  return apply_spec(&d, &l, "ocal_setting_get", "OCAL_LIMITS", spec) == OCAL_OK;
}

ocal_status ocal__limits_init(ocal_context ctx, const char *option, int fp64_option,
                              const char *func) {
  read_device(ctx);
  unsigned device_version = ctx->limits.cl_version;
  const char *spec = option;
  const char *origin = "the limits option";
  if (!spec) {
    spec = ctx->settings.limits;
    origin = "OCAL_LIMITS";
  }
  if (spec && spec[0]) {
    /* Messages name where the spec came from and quote it whole, as every setting's do. */
    char what[sizeof ctx->settings.limits + 32];
    snprintf(what, sizeof what, "%s='%s'", origin, spec);
    ocal_status s = apply_spec(&ctx->info, &ctx->limits, func, what, spec);
    if (s != OCAL_OK) return s;
    snprintf(ctx->limits.text, sizeof ctx->limits.text, "%s", spec);
  }
  /* Work-groups cannot be larger than the device allows in total. */
  for (int i = 0; i < 3; i++)
    if (ctx->info.max_work_item_sizes[i] > ctx->info.max_work_group_size)
      ctx->info.max_work_item_sizes[i] = ctx->info.max_work_group_size;
  if (ctx->info.max_alloc_bytes > ctx->info.global_mem_bytes)
    ctx->info.max_alloc_bytes = ctx->info.global_mem_bytes;
  /* A lower OpenCL version is emulated by compiling every program for that version of
   * OpenCL C, so a kernel that uses something newer fails to build, as it would there. */
  ctx->limits.build_options[0] = '\0';
  if (ctx->limits.cl_version && ctx->limits.cl_version < device_version)
    snprintf(ctx->limits.build_options, sizeof ctx->limits.build_options, "-cl-std=CL%u.%u",
             ctx->limits.cl_version / 100, ctx->limits.cl_version / 10 % 10);

  /* fp64: the device (after OCAL_LIMITS), the fp64 option, else OCAL_FP64. */
  int wanted = fp64_option;
  if (wanted < 0) wanted = ctx->settings.fp64 != 0;
  ctx->fp64 = ctx->info.has_fp64 && wanted;
  return OCAL_OK;
}

ocal_status ocal__limits_check_launch(ocal_context ctx, const ocal__kernel *k, cl_uint dims,
                                      const size_t *local, const char *func) {
  if (!local) return OCAL_OK;
  size_t total = 1;
  for (cl_uint i = 0; i < dims; i++) {
    total *= local[i];
    if (i < 3 && local[i] > ctx->info.max_work_item_sizes[i])
      return ocal__fail(OCAL_INTERNAL, func,
                        "kernel %s: a work-group of %zu items in dimension %u exceeds the "
                        "device's limit of %zu%s (a bug in ocal's planner: please report it)",
                        k->name, local[i], i, ctx->info.max_work_item_sizes[i],
                        ctx->limits.emulated ? " (emulated by OCAL_LIMITS)" : "");
  }
  if (total > k->work_group_size)
    return ocal__fail(OCAL_INTERNAL, func,
                      "kernel %s: a work-group of %zu items exceeds the limit of %zu for this "
                      "kernel on this device%s (a bug in ocal's planner: please report it)",
                      k->name, total, k->work_group_size,
                      ctx->limits.emulated ? " (emulated by OCAL_LIMITS)" : "");
  return OCAL_OK;
}
