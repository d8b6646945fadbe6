/* ocal — enumerating OpenCL devices and resolving selectors to one of them. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

const char *ocal_device_type_name(ocal_device_type type) {
  switch (type) {
    case OCAL_DEVICE_CPU:
      return "CPU";
    case OCAL_DEVICE_GPU:
      return "GPU";
    case OCAL_DEVICE_ACCELERATOR:
      return "accelerator";
    case OCAL_DEVICE_OTHER:
      return "other";
  }
  return "invalid";
}

/* One device as enumerated: its facts and handles. */
typedef struct {
  ocal_device_info info;
  cl_platform_id platform;
  cl_device_id device;
} device_entry;

/* The OpenCL calls of enumeration, through pointers so that a white-box test can make one
 * of them fail (tests/check_device.c): a query that fails must fail the enumeration, never
 * leave a zero or an empty name in a context's facts. */
ocal__cl_get_device_ids_fn ocal__cl_get_device_ids = clGetDeviceIDs;
ocal__cl_get_device_info_fn ocal__cl_get_device_info = clGetDeviceInfo;

/* The public call an enumeration serves, for messages (set under enumerate_lock). */
static const char *enum_func = "ocal_device_list";

/* Records a failed query of device or platform facts; returns the mapped status. */
static ocal_status query_fail(cl_int err, const char *call, const char *what) {
  ocal_status status = ocal__cl_fail(NULL, err, call, enum_func);
  ocal__append_error(" querying %s while enumerating devices", what);
  return status;
}

/* Reads a string fact, truncated to the field's size. */
static ocal_status get_string(cl_device_id dev, cl_device_info what, const char *label,
                              char *out, size_t size) {
  out[0] = '\0';
  size_t need = 0;
  cl_int err = ocal__cl_get_device_info(dev, what, 0, NULL, &need);
  if (err != CL_SUCCESS) return query_fail(err, "clGetDeviceInfo", label);
  if (need == 0) return OCAL_OK;
  char *tmp = need <= size ? out : malloc(need);
  if (!tmp) return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, enum_func, "no memory for a device's %s", label);
  err = ocal__cl_get_device_info(dev, what, need, tmp, NULL);
  if (err == CL_SUCCESS && tmp != out) snprintf(out, size, "%.*s", (int)(need - 1), tmp);
  if (tmp != out) free(tmp);
  out[size - 1] = '\0';
  if (err != CL_SUCCESS) {
    out[0] = '\0';
    return query_fail(err, "clGetDeviceInfo", label);
  }
  return OCAL_OK;
}

static ocal_status get_fixed(cl_device_id dev, cl_device_info what, const char *label,
                             size_t size, void *out) {
  cl_int err = ocal__cl_get_device_info(dev, what, size, out, NULL);
  return err == CL_SUCCESS ? OCAL_OK : query_fail(err, "clGetDeviceInfo", label);
}

static ocal_status get_platform_string(cl_platform_id p, cl_platform_info what,
                                       const char *label, char *out, size_t size) {
  out[0] = '\0';
  size_t need = 0;
  cl_int err = clGetPlatformInfo(p, what, 0, NULL, &need);
  char *tmp = NULL;
  if (err == CL_SUCCESS && need > 0) {
    tmp = malloc(need);
    if (!tmp)
      return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, enum_func, "no memory for a platform's %s", label);
    err = clGetPlatformInfo(p, what, need, tmp, NULL);
    if (err == CL_SUCCESS) snprintf(out, size, "%.*s", (int)(need - 1), tmp);
    free(tmp);
  }
  if (err != CL_SUCCESS) return query_fail(err, "clGetPlatformInfo", label);
  return OCAL_OK;
}

static ocal_status has_extension(cl_device_id dev, const char *ext, int *found) {
  *found = 0;
  size_t need = 0;
  cl_int err = ocal__cl_get_device_info(dev, CL_DEVICE_EXTENSIONS, 0, NULL, &need);
  if (err != CL_SUCCESS) return query_fail(err, "clGetDeviceInfo", "CL_DEVICE_EXTENSIONS");
  if (need == 0) return OCAL_OK;
  char *list = malloc(need);
  if (!list)
    return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, enum_func, "no memory for a device's extensions");
  err = ocal__cl_get_device_info(dev, CL_DEVICE_EXTENSIONS, need, list, NULL);
  if (err != CL_SUCCESS) {
    free(list);
    return query_fail(err, "clGetDeviceInfo", "CL_DEVICE_EXTENSIONS");
  }
  list[need - 1] = '\0';
  size_t len = strlen(ext);
  for (const char *p = list; (p = strstr(p, ext)) != NULL; p += len) {
    int starts = p == list || p[-1] == ' ';
    int ends = p[len] == '\0' || p[len] == ' ';
    if (starts && ends) {
      *found = 1;
      break;
    }
  }
  free(list);
  return OCAL_OK;
}

/* Fills in a device's facts; every query must succeed. */
static ocal_status fill_info(device_entry *e, int pi, int di) {
  ocal_device_info *info = &e->info;
  cl_device_id dev = e->device;
  memset(info, 0, sizeof *info);
  info->platform_index = pi;
  info->device_index = di;
  ocal_status s;
#define OCAL__Q(call) \
  if ((s = (call)) != OCAL_OK) return s
  OCAL__Q(get_string(dev, CL_DEVICE_NAME, "CL_DEVICE_NAME", info->name, sizeof info->name));
  OCAL__Q(get_string(dev, CL_DEVICE_VENDOR, "CL_DEVICE_VENDOR", info->vendor,
                     sizeof info->vendor));
  OCAL__Q(get_string(dev, CL_DEVICE_VERSION, "CL_DEVICE_VERSION", info->device_version,
                     sizeof info->device_version));
  OCAL__Q(get_string(dev, CL_DRIVER_VERSION, "CL_DRIVER_VERSION", info->driver_version,
                     sizeof info->driver_version));
  OCAL__Q(get_string(dev, CL_DEVICE_OPENCL_C_VERSION, "CL_DEVICE_OPENCL_C_VERSION",
                     info->opencl_c_version, sizeof info->opencl_c_version));
  OCAL__Q(get_platform_string(e->platform, CL_PLATFORM_NAME, "CL_PLATFORM_NAME",
                              info->platform_name, sizeof info->platform_name));
  OCAL__Q(get_platform_string(e->platform, CL_PLATFORM_VERSION, "CL_PLATFORM_VERSION",
                              info->platform_version, sizeof info->platform_version));

  cl_device_type type = 0;
  OCAL__Q(get_fixed(dev, CL_DEVICE_TYPE, "CL_DEVICE_TYPE", sizeof type, &type));
  info->type = (type & CL_DEVICE_TYPE_GPU)           ? OCAL_DEVICE_GPU
               : (type & CL_DEVICE_TYPE_ACCELERATOR) ? OCAL_DEVICE_ACCELERATOR
               : (type & CL_DEVICE_TYPE_CPU)         ? OCAL_DEVICE_CPU
                                                     : OCAL_DEVICE_OTHER;
  cl_ulong u64 = 0;
  OCAL__Q(get_fixed(dev, CL_DEVICE_GLOBAL_MEM_SIZE, "CL_DEVICE_GLOBAL_MEM_SIZE", sizeof u64,
                    &u64));
  info->global_mem_bytes = u64;
  OCAL__Q(get_fixed(dev, CL_DEVICE_MAX_MEM_ALLOC_SIZE, "CL_DEVICE_MAX_MEM_ALLOC_SIZE",
                    sizeof u64, &u64));
  info->max_alloc_bytes = u64;
  OCAL__Q(get_fixed(dev, CL_DEVICE_LOCAL_MEM_SIZE, "CL_DEVICE_LOCAL_MEM_SIZE", sizeof u64,
                    &u64));
  info->local_mem_bytes = u64;
  cl_uint u32 = 0;
  OCAL__Q(get_fixed(dev, CL_DEVICE_MAX_COMPUTE_UNITS, "CL_DEVICE_MAX_COMPUTE_UNITS", sizeof u32,
                    &u32));
  info->compute_units = u32;
  OCAL__Q(get_fixed(dev, CL_DEVICE_MAX_CLOCK_FREQUENCY, "CL_DEVICE_MAX_CLOCK_FREQUENCY",
                    sizeof u32, &u32));
  info->max_clock_mhz = u32;
  OCAL__Q(get_fixed(dev, CL_DEVICE_MEM_BASE_ADDR_ALIGN, "CL_DEVICE_MEM_BASE_ADDR_ALIGN",
                    sizeof u32, &u32));
  info->mem_base_align_bytes = u32 / 8;
  size_t wg = 0;
  OCAL__Q(get_fixed(dev, CL_DEVICE_MAX_WORK_GROUP_SIZE, "CL_DEVICE_MAX_WORK_GROUP_SIZE",
                    sizeof wg, &wg));
  info->max_work_group_size = wg;
  size_t items[3] = {0, 0, 0};
  OCAL__Q(get_fixed(dev, CL_DEVICE_MAX_WORK_ITEM_SIZES, "CL_DEVICE_MAX_WORK_ITEM_SIZES",
                    sizeof items, items));
  memcpy(info->max_work_item_sizes, items, sizeof items);
  /* OpenCL 1.0 and 1.1 devices without double precision may answer CL_INVALID_VALUE for
   * this query (the value was added to the core in 1.2): that means no fp64, not an error. */
  cl_device_fp_config fp = 0;
  cl_int err = ocal__cl_get_device_info(dev, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp, &fp, NULL);
  if (err == CL_INVALID_VALUE)
    fp = 0;
  else if (err != CL_SUCCESS)
    return query_fail(err, "clGetDeviceInfo", "CL_DEVICE_DOUBLE_FP_CONFIG");
  int ext = 0;
  OCAL__Q(has_extension(dev, "cl_khr_fp64", &ext));
  info->has_fp64 = fp != 0 || ext;
#undef OCAL__Q
  return OCAL_OK;
}

/* The first enumeration of a process initialises the ICD loader and the drivers, which are
 * not safe to enter from several threads at once (eight threads creating their first
 * contexts together saw "no platform" and crashes inside clGetDeviceInfo): every
 * enumeration runs under this lock. It is short next to creating a context. */
static pthread_mutex_t enumerate_lock = PTHREAD_MUTEX_INITIALIZER;

/* Enumerates all devices of all platforms into a malloc'ed array. */
static ocal_status enumerate_locked(device_entry **out, size_t *count) {
  *out = NULL;
  *count = 0;
  cl_uint np = 0;
  cl_int err = clGetPlatformIDs(0, NULL, &np);
  if (err == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || (err == CL_SUCCESS && np == 0))
    return OCAL_OK;
  if (err != CL_SUCCESS) return ocal__cl_fail(NULL, err, "clGetPlatformIDs", enum_func);
  cl_platform_id *platforms = calloc(np, sizeof *platforms);
  if (!platforms)
    return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, enum_func, "no memory for the platform list");
  err = clGetPlatformIDs(np, platforms, NULL);
  if (err != CL_SUCCESS) {
    free(platforms);
    return ocal__cl_fail(NULL, err, "clGetPlatformIDs", enum_func);
  }
  device_entry *list = NULL;
  size_t n = 0;
  ocal_status status = OCAL_OK;
  for (cl_uint p = 0; p < np && status == OCAL_OK; p++) {
    cl_uint nd = 0;
    /* A platform without devices answers CL_DEVICE_NOT_FOUND: skip it. Any other error is
     * one (out of host memory, a broken driver), reported by its name. */
    err = ocal__cl_get_device_ids(platforms[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd);
    if (err == CL_DEVICE_NOT_FOUND || (err == CL_SUCCESS && nd == 0)) continue;
    if (err != CL_SUCCESS) {
      status = ocal__cl_fail(NULL, err, "clGetDeviceIDs", enum_func);
      break;
    }
    cl_device_id *devs = calloc(nd, sizeof *devs);
    device_entry *grown = realloc(list, (n + nd) * sizeof *list);
    if (grown) list = grown;
    if (!devs || !grown) {
      free(devs);
      status = ocal__fail(OCAL_OUT_OF_HOST_MEMORY, enum_func, "no memory for the device list");
      break;
    }
    err = ocal__cl_get_device_ids(platforms[p], CL_DEVICE_TYPE_ALL, nd, devs, NULL);
    if (err != CL_SUCCESS) {
      status = ocal__cl_fail(NULL, err, "clGetDeviceIDs", enum_func);
    } else {
      for (cl_uint d = 0; d < nd && status == OCAL_OK; d++) {
        list[n].platform = platforms[p];
        list[n].device = devs[d];
        status = fill_info(&list[n], (int)p, (int)d);
        n++;
      }
    }
    free(devs);
  }
  free(platforms);
  if (status != OCAL_OK) {
    free(list);
    return status;
  }
  *out = list;
  *count = n;
  return OCAL_OK;
}

static ocal_status enumerate(const char *func, device_entry **out, size_t *count) {
  pthread_mutex_lock(&enumerate_lock);
  enum_func = func;
  ocal_status status = enumerate_locked(out, count);
  pthread_mutex_unlock(&enumerate_lock);
  return status;
}

ocal_status ocal_device_list(size_t capacity, ocal_device_info *infos, size_t *count) {
  if (!count) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "count must not be NULL");
  if (!infos && capacity > 0)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "infos is NULL but capacity is %zu", capacity);
  /* infos[0].struct_size (infos->struct_size in the message) is the size of every entry: the
   * caller's array has that stride. */
  size_t entry = 0;
  if (capacity > 0) {
    ocal_status status = ocal__filled_check(__func__, "infos", "ocal_device_info", infos,
                                            OCAL__DEVICE_INFO_MIN, sizeof *infos);
    if (status != OCAL_OK) return status;
    entry = infos[0].struct_size;
  }
  device_entry *list;
  size_t n;
  ocal_status status = enumerate(__func__, &list, &n);
  if (status != OCAL_OK) return status;
  for (size_t i = 0; i < n && i < capacity; i++) {
    ocal_device_info *dst = (ocal_device_info *)((char *)infos + i * entry);
    memcpy(dst, &entry, sizeof entry);
    ocal__filled_write(dst, &list[i].info);
  }
  *count = n;
  free(list);
  return OCAL_OK;
}

static int contains_nocase(const char *haystack, const char *needle) {
  size_t nl = strlen(needle);
  for (const char *h = haystack; *h; h++) {
    size_t i = 0;
    while (i < nl && h[i] && tolower((unsigned char)h[i]) == tolower((unsigned char)needle[i])) i++;
    if (i == nl) return 1;
  }
  return nl == 0;
}

/* Parses "P:D" with decimal P and D; returns 1 on a match. */
static int parse_index_pair(const char *s, int *p, int *d) {
  char *end;
  if (!isdigit((unsigned char)s[0])) return 0;
  long a = strtol(s, &end, 10);
  if (*end != ':' || !isdigit((unsigned char)end[1])) return 0;
  long b = strtol(end + 1, &end, 10);
  if (*end != '\0' || a > 100000 || b > 100000) return 0;
  *p = (int)a;
  *d = (int)b;
  return 1;
}

static long find_type(const device_entry *list, size_t n, ocal_device_type type) {
  for (size_t i = 0; i < n; i++)
    if (list[i].info.type == type) return (long)i;
  return -1;
}

/* The length of s without leading and trailing blanks, and where it starts (*from). */
static size_t trimmed(const char *s, const char **from) {
  while (isspace((unsigned char)*s)) s++;
  size_t len = strlen(s);
  while (len > 0 && isspace((unsigned char)s[len - 1])) len--;
  *from = s;
  return len;
}

int ocal__selector_blank(const char *selector) {
  const char *from;
  return !selector || trimmed(selector, &from) == 0;
}

/* Short names users know platforms by, where the platform's own name does not contain them:
 * PoCL calls itself "Portable Computing Language" (its devices "pthread-..." or "cpu-..."),
 * AMD's platform and devices may say "Advanced Micro Devices", Mesa's are "Clover" and
 * "rusticl". (nvidia, intel, rusticl and oclgrind are in their platforms' names already.) */
static const struct {
  const char *short_name, *platform_piece;
} short_names[] = {
    {"pocl", "Portable Computing Language"},
    {"amd", "Advanced Micro Devices"},
    {"mesa", "Clover"},
    {"mesa", "rusticl"},
};

static int matches_short_name(const ocal_device_info *info, const char *sel) {
  for (size_t k = 0; k < sizeof short_names / sizeof short_names[0]; k++)
    if (strcasecmp(sel, short_names[k].short_name) == 0 &&
        (contains_nocase(info->platform_name, short_names[k].platform_piece) ||
         contains_nocase(info->vendor, short_names[k].platform_piece)))
      return 1;
  return 0;
}

static long match(const device_entry *list, size_t n, const char *sel) {
  int p, d;
  if (strcasecmp(sel, "gpu") == 0) return find_type(list, n, OCAL_DEVICE_GPU);
  if (strcasecmp(sel, "cpu") == 0) return find_type(list, n, OCAL_DEVICE_CPU);
  if (strcasecmp(sel, "accelerator") == 0) return find_type(list, n, OCAL_DEVICE_ACCELERATOR);
  if (parse_index_pair(sel, &p, &d)) {
    for (size_t i = 0; i < n; i++)
      if (list[i].info.platform_index == p && list[i].info.device_index == d) return (long)i;
    return -1;
  }
  for (size_t i = 0; i < n; i++)
    if (contains_nocase(list[i].info.name, sel) ||
        contains_nocase(list[i].info.platform_name, sel) ||
        matches_short_name(&list[i].info, sel))
      return (long)i;
  return -1;
}

ocal_status ocal__device_resolve(const char *func, const char *selector, const char *env_selector,
                                 ocal_device_info *info,
                                 cl_platform_id *platform, cl_device_id *device) {
  const char *origin = "selector";
  if (ocal__selector_blank(selector)) {
    selector = env_selector;
    origin = "OCAL_DEVICE";
  }
  char sel[256] = "";
  if (selector) {
    const char *from;
    size_t len = trimmed(selector, &from);
    /* a longer one would be matched by its first 255 characters only */
    if (len >= sizeof sel)
      return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                        "the %s is %zu characters long, too long for a device selector (at "
                        "most %zu): give a keyword, \"P:D\" or a piece of the device's name",
                        origin, len, sizeof sel - 1);
    memcpy(sel, from, len);
    sel[len] = '\0';
  }

  device_entry *list;
  size_t n;
  ocal_status status = enumerate(func, &list, &n);
  if (status != OCAL_OK) return status;
  if (n == 0) {
    return ocal__fail(OCAL_NO_DEVICE, func,
                     "no OpenCL device found: no platform is registered with the ICD loader "
                     "(install a driver, e.g. pocl-opencl-icd for the CPU, and check "
                     "/etc/OpenCL/vendors)");
  }
  long pick;
  if (sel[0]) {
    pick = match(list, n, sel);
  } else {
    pick = find_type(list, n, OCAL_DEVICE_GPU);
    if (pick < 0) pick = find_type(list, n, OCAL_DEVICE_ACCELERATOR);
    if (pick < 0) pick = find_type(list, n, OCAL_DEVICE_CPU);
    if (pick < 0) pick = 0;
  }
  if (pick < 0) {
    status = ocal__fail(OCAL_DEVICE_NOT_FOUND, func,
                       "no OpenCL device matches %s '%s'; use gpu, cpu, accelerator, P:D or a "
                       "piece of a device or platform name. Devices:",
                       origin, sel);
    for (size_t i = 0; i < n; i++)
      ocal__append_error("\n  %d:%d  %s  (%s, %s)", list[i].info.platform_index,
                         list[i].info.device_index, list[i].info.name,
                         ocal_device_type_name(list[i].info.type), list[i].info.platform_name);
    free(list);
    return status;
  }
  if (info) *info = list[pick].info;
  if (platform) *platform = list[pick].platform;
  if (device) *device = list[pick].device;
  free(list);
  return OCAL_OK;
}

ocal_status ocal__device_find(const char *func, cl_device_id device, ocal_device_info *info,
                              cl_platform_id *platform) {
  device_entry *list;
  size_t n;
  ocal_status status = enumerate(func, &list, &n);
  if (status != OCAL_OK) return status;
  for (size_t i = 0; i < n; i++) {
    if (list[i].device == device) {
      *info = list[i].info;
      *platform = list[i].platform;
      free(list);
      return OCAL_OK;
    }
  }
  free(list);
  return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                    "the cl_device_id is none of the devices the ICD loader lists (a "
                    "sub-device, or a handle of another loader?); pass a root device");
}

ocal_status ocal_device_select(const char *selector, ocal_device_info *info) {
  if (!info) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "info must not be NULL");
  ocal_status status = ocal__filled_check(__func__, "info", "ocal_device_info", info,
                                          OCAL__DEVICE_INFO_MIN, sizeof *info);
  if (status != OCAL_OK) return status;
  ocal__settings settings;
  settings.device[0] = '\0';
  if (ocal__selector_blank(selector)) {
    status = ocal__settings_read_one("OCAL_DEVICE", &settings, __func__);
    if (status != OCAL_OK) return status;
  }
  ocal_device_info chosen = {sizeof chosen};
  status = ocal__device_resolve(__func__, selector, settings.device, &chosen, NULL, NULL);
  if (status == OCAL_OK) ocal__filled_write(info, &chosen);
  return status;
}
