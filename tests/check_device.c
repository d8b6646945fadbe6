/* ocal tests — listing devices and resolving selectors.
 *
 * Expectations come from ocal_device_list, never from the name of a particular driver, so the
 * suite passes on PoCL's CPU device and on a GPU machine alike. White-box: the failure tests
 * replace the OpenCL query pointers of src/core/device.c. Tests that need OCAL_DEVICE
 * set or unset change it themselves: Check forks each test, so the change stays in it. */
#include "fixture.h"
#include "internal.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ---------------------------------------------------------------------------- */

/* Lists every device into a malloc'ed array (at least one device is required). */
static ocal_device_info *list_devices(size_t *n) {
  ck_assert_ocal(ocal_device_list(0, NULL, n));
  ck_assert_uint_ge(*n, 1);
  ocal_device_info *infos = calloc(*n, sizeof *infos);
  ck_assert_ptr_nonnull(infos);
  infos[0].struct_size = sizeof *infos;
  size_t again = 0;
  ck_assert_ocal(ocal_device_list(*n, infos, &again));
  ck_assert_uint_eq(again, *n);
  return infos;
}

/* Index of the first device of a type, or -1. */
static long first_of_type(const ocal_device_info *list, size_t n, ocal_device_type type) {
  for (size_t i = 0; i < n; i++)
    if (list[i].type == type) return (long)i;
  return -1;
}

/* The device the default order picks: first GPU, else accelerator, else CPU, else the first. */
static long default_pick(const ocal_device_info *list, size_t n) {
  long pick = first_of_type(list, n, OCAL_DEVICE_GPU);
  if (pick < 0) pick = first_of_type(list, n, OCAL_DEVICE_ACCELERATOR);
  if (pick < 0) pick = first_of_type(list, n, OCAL_DEVICE_CPU);
  return pick < 0 ? 0 : pick;
}

static int same_device(const ocal_device_info *a, const ocal_device_info *b) {
  return a->platform_index == b->platform_index && a->device_index == b->device_index &&
         a->type == b->type && strcmp(a->name, b->name) == 0 &&
         strcmp(a->platform_name, b->platform_name) == 0 &&
         a->global_mem_bytes == b->global_mem_bytes && a->max_alloc_bytes == b->max_alloc_bytes &&
         a->compute_units == b->compute_units;
}

#define ck_assert_same_device(got, want)                                                   \
  ck_assert_msg(same_device((got), (want)), "picked %d:%d '%s', expected %d:%d '%s'",      \
                (got)->platform_index, (got)->device_index, (got)->name,                   \
                (want)->platform_index, (want)->device_index, (want)->name)

/* A failure of device selection lists every device that exists. */
static void assert_lists_devices(const ocal_device_info *list, size_t n) {
  const char *msg = ocal_last_error();
  for (size_t i = 0; i < n; i++) {
    char pd[32];
    snprintf(pd, sizeof pd, "%d:%d", list[i].platform_index, list[i].device_index);
    ck_assert_msg(strstr(msg, list[i].name) != NULL, "message does not list '%s': %s",
                  list[i].name, msg);
    ck_assert_msg(strstr(msg, pd) != NULL, "message does not list %s: %s", pd, msg);
  }
}

/* Selects with `sel` and checks the result against the device at index `want` (-1: none). */
static void check_select(const char *sel, const ocal_device_info *list, size_t n, long want) {
  ocal_device_info got = {sizeof got};
  memset(&got, 0, sizeof got);
  got.struct_size = sizeof got;
  if (want >= 0) {
    ocal_status s = ocal_device_select(sel, &got);
    ck_assert_msg(s == OCAL_OK, "selector '%s' returned %s: %s", sel, ocal_status_name(s),
                  ocal_last_error());
    ck_assert_same_device(&got, &list[want]);
  } else {
    ocal_status s = ocal_device_select(sel, &got);
    ck_assert_msg(s == OCAL_DEVICE_NOT_FOUND, "selector '%s' returned %s, expected not found",
                  sel, ocal_status_name(s));
    ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_device_select"));
    assert_lists_devices(list, n);
  }
}

static void lower(char *s) {
  for (; *s; s++) *s = (char)tolower((unsigned char)*s);
}

static void upper(char *s) {
  for (; *s; s++) *s = (char)toupper((unsigned char)*s);
}

static int contains_nocase(const char *hay, const char *needle) {
  char h[256], n[256];
  snprintf(h, sizeof h, "%s", hay);
  snprintf(n, sizeof n, "%s", needle);
  lower(h);
  lower(n);
  return strstr(h, n) != NULL;
}

/* A selector that would be taken for a keyword or a "P:D" pair instead of a name piece. */
static int is_special(const char *piece) {
  return strcmp(piece, "gpu") == 0 || strcmp(piece, "cpu") == 0 || strchr(piece, ':') != NULL;
}

/* ---- listing ---------------------------------------------------------------------------- */

START_TEST(test_list_count) {
  size_t n = 0;
  ck_assert_ocal(ocal_device_list(0, NULL, &n));
  ck_assert_uint_ge(n, 1);
  /* Listing twice gives the same count. */
  size_t again = 0;
  ck_assert_ocal(ocal_device_list(0, NULL, &again));
  ck_assert_uint_eq(again, n);
}
END_TEST

START_TEST(test_list_facts) {
  size_t n;
  ocal_device_info *list = list_devices(&n);
  for (size_t i = 0; i < n; i++) {
    const ocal_device_info *d = &list[i];
    ck_assert_msg(d->name[0] != '\0', "device %zu has no name", i);
    ck_assert_msg(d->platform_name[0] != '\0', "device %zu has no platform name", i);
    ck_assert_msg(d->driver_version[0] != '\0', "device %zu has no driver version", i);
    ck_assert_msg(strncmp(d->opencl_c_version, "OpenCL C", 8) == 0,
                  "device %zu: OpenCL C version '%s'", i, d->opencl_c_version);
    ck_assert_msg(strncmp(d->device_version, "OpenCL ", 7) == 0, "device %zu: version '%s'", i,
                  d->device_version);
    ck_assert_msg(strncmp(d->platform_version, "OpenCL ", 7) == 0,
                  "device %zu: platform version '%s'", i, d->platform_version);
    ck_assert_uint_gt(d->global_mem_bytes, 0);
    ck_assert_uint_gt(d->max_alloc_bytes, 0);
    ck_assert_uint_le(d->max_alloc_bytes, d->global_mem_bytes);
    ck_assert_uint_ge(d->compute_units, 1);
    ck_assert_uint_ge(d->max_work_group_size, 1);
    ck_assert_uint_ge(d->max_work_item_sizes[0], 1);
    ck_assert_uint_gt(d->mem_base_align_bytes, 0);
    ck_assert_msg(d->type >= OCAL_DEVICE_OTHER && d->type <= OCAL_DEVICE_ACCELERATOR,
                  "device %zu has type %d", i, (int)d->type);
    ck_assert_msg(d->has_fp64 == 0 || d->has_fp64 == 1, "has_fp64 is %d", d->has_fp64);
    /* The strings are terminated within their fields. */
    ck_assert_uint_lt(strlen(d->name), sizeof d->name);
    ck_assert_uint_lt(strlen(d->vendor), sizeof d->vendor);
  }
  free(list);
}
END_TEST

START_TEST(test_list_indices_match_position) {
  size_t n;
  ocal_device_info *list = list_devices(&n);
  ck_assert_int_ge(list[0].platform_index, 0);
  ck_assert_int_eq(list[0].device_index, 0);
  for (size_t i = 1; i < n; i++) {
    if (list[i].platform_index == list[i - 1].platform_index) {
      /* Devices of one platform are numbered 0, 1, 2, ... in list order. */
      ck_assert_int_eq(list[i].device_index, list[i - 1].device_index + 1);
    } else {
      ck_assert_int_gt(list[i].platform_index, list[i - 1].platform_index);
      ck_assert_int_eq(list[i].device_index, 0);
    }
  }
  free(list);
}
END_TEST

START_TEST(test_list_matches_select_by_index) {
  size_t n;
  ocal_device_info *list = list_devices(&n);
  for (size_t i = 0; i < n; i++) {
    char sel[32];
    snprintf(sel, sizeof sel, "%d:%d", list[i].platform_index, list[i].device_index);
    check_select(sel, list, n, (long)i);
    /* Blanks around a "P:D" pair are ignored too. */
    snprintf(sel, sizeof sel, "  %d:%d\t", list[i].platform_index, list[i].device_index);
    check_select(sel, list, n, (long)i);
  }
  free(list);
}
END_TEST

START_TEST(test_list_capacity_smaller) {
  size_t n;
  ocal_device_info *list = list_devices(&n);
  size_t capacity = n - 1; /* 0 on a one-device machine: nothing may be written */
  ocal_device_info *infos = malloc((n + 1) * sizeof *infos);
  ocal_device_info sentinel;
  ck_assert_ptr_nonnull(infos);
  memset(infos, 0xa5, (n + 1) * sizeof *infos);
  memset(&sentinel, 0xa5, sizeof sentinel);
  if (capacity > 0) infos[0].struct_size = sizeof *infos;
  size_t count = 12345;
  ck_assert_ocal(ocal_device_list(capacity, infos, &count));
  ck_assert_uint_eq(count, n);
  for (size_t i = 0; i < capacity; i++) ck_assert_same_device(&infos[i], &list[i]);
  for (size_t i = capacity; i < n + 1; i++)
    ck_assert_msg(memcmp(&infos[i], &sentinel, sizeof sentinel) == 0,
                  "entry %zu was written with capacity %zu", i, capacity);
  free(infos);
  free(list);
}
END_TEST

START_TEST(test_list_capacity_larger) {
  size_t n;
  ocal_device_info *list = list_devices(&n);
  size_t capacity = n + 3;
  ocal_device_info *infos = malloc(capacity * sizeof *infos);
  ocal_device_info sentinel;
  ck_assert_ptr_nonnull(infos);
  memset(infos, 0x5a, capacity * sizeof *infos);
  memset(&sentinel, 0x5a, sizeof sentinel);
  infos[0].struct_size = sizeof *infos;
  size_t count = 0;
  ck_assert_ocal(ocal_device_list(capacity, infos, &count));
  ck_assert_uint_eq(count, n);
  for (size_t i = 0; i < n; i++) ck_assert_same_device(&infos[i], &list[i]);
  for (size_t i = n; i < capacity; i++)
    ck_assert_msg(memcmp(&infos[i], &sentinel, sizeof sentinel) == 0,
                  "entry %zu past the count was written", i);
  free(infos);
  free(list);
}
END_TEST

START_TEST(test_list_null_arguments) {
  ocal_device_info info = {sizeof info};
  ck_assert_ocal_fails(ocal_device_list(0, NULL, NULL), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_device_list"));
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "count"));
  ck_assert_ocal_fails(ocal_device_list(1, &info, NULL), OCAL_INVALID_ARGUMENT);
  size_t count = 777;
  ck_assert_ocal_fails(ocal_device_list(3, NULL, &count), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_device_list"));
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "infos"));
  /* An unset struct_size: the message names the field as C spells it, and the fix. */
  ocal_device_info unset[2];
  memset(unset, 0, sizeof unset);
  ck_assert_ocal_fails(ocal_device_list(2, unset, &count), OCAL_INVALID_ARGUMENT);
  ck_assert_msg(strstr(ocal_last_error(), "ocal_device_list: infos->struct_size is 0") &&
                    strstr(ocal_last_error(), "set it to sizeof(ocal_device_info)"),
                "%s", ocal_last_error());
}
END_TEST

/* ---- selection -------------------------------------------------------------------------- */

/* Checks one type keyword in several spellings against the list. */
static void check_type_keyword(const char *keyword, ocal_device_type type) {
  size_t n;
  ocal_device_info *list = list_devices(&n);
  long want = first_of_type(list, n, type);
  char spelled[64];
  check_select(keyword, list, n, want);
  snprintf(spelled, sizeof spelled, "%s", keyword);
  upper(spelled);
  check_select(spelled, list, n, want);
  snprintf(spelled, sizeof spelled, " %s ", keyword);
  check_select(spelled, list, n, want);
  snprintf(spelled, sizeof spelled, "\t%c%s\n", toupper((unsigned char)keyword[0]), keyword + 1);
  check_select(spelled, list, n, want);
  if (want < 0) {
    ocal_device_info info = {sizeof info};
    ck_assert_ocal_fails(ocal_device_select(keyword, &info), OCAL_DEVICE_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(ocal_last_error(), keyword));
  }
  free(list);
}

START_TEST(test_select_cpu) { check_type_keyword("cpu", OCAL_DEVICE_CPU); }
END_TEST

START_TEST(test_select_gpu) { check_type_keyword("gpu", OCAL_DEVICE_GPU); }
END_TEST

START_TEST(test_select_accelerator) { check_type_keyword("accelerator", OCAL_DEVICE_ACCELERATOR); }
END_TEST

START_TEST(test_select_zero_zero) {
  size_t n;
  ocal_device_info *list = list_devices(&n);
  long want = -1;
  for (size_t i = 0; i < n; i++)
    if (list[i].platform_index == 0 && list[i].device_index == 0) want = (long)i;
  check_select("0:0", list, n, want);
  free(list);
}
END_TEST

START_TEST(test_select_index_out_of_range) {
  size_t n;
  ocal_device_info *list = list_devices(&n);
  const char *bad[] = {"99:0", "0:99"};
  for (size_t b = 0; b < 2; b++) {
    ocal_device_info info = {sizeof info};
    ck_assert_ocal_fails(ocal_device_select(bad[b], &info), OCAL_DEVICE_NOT_FOUND);
    const char *msg = ocal_last_error();
    ck_assert_msg(strstr(msg, bad[b]) != NULL, "message does not quote '%s': %s", bad[b], msg);
    ck_assert_msg(strstr(msg, list[0].name) != NULL, "message does not list '%s': %s",
                  list[0].name, msg);
    assert_lists_devices(list, n);
  }
  free(list);
}
END_TEST

START_TEST(test_select_device_name_piece) {
  size_t n;
  ocal_device_info *list = list_devices(&n);
  const char *name = list[0].name;
  size_t len = strlen(name);
  char piece[8] = "";
  if (len <= 4) {
    snprintf(piece, sizeof piece, "%s", name);
  } else {
    /* Four characters from the middle, moved until they have no blank at either end and do
     * not read as a keyword or a "P:D" pair. */
    for (size_t k = 0; k + 4 <= len; k++) {
      size_t start = (len / 2 - 2 + k) % (len - 3);
      char cand[5];
      memcpy(cand, name + start, 4);
      cand[4] = '\0';
      lower(cand);
      if (isspace((unsigned char)cand[0]) || isspace((unsigned char)cand[3]) || is_special(cand))
        continue;
      snprintf(piece, sizeof piece, "%s", cand);
      break;
    }
  }
  ck_assert_msg(piece[0] != '\0', "no usable piece of the device name '%s'", name);
  lower(piece);
  /* The first device whose name contains the piece is device 0 of the list itself. */
  check_select(piece, list, n, 0);
  upper(piece);
  check_select(piece, list, n, 0);
  /* The whole name, in upper case, picks it too. */
  char whole[256];
  snprintf(whole, sizeof whole, "%s", name);
  upper(whole);
  check_select(whole, list, n, 0);
  free(list);
}
END_TEST

START_TEST(test_select_platform_name_piece) {
  size_t n;
  ocal_device_info *list = list_devices(&n);
  const char *platform = list[0].platform_name;
  size_t len = strlen(platform);
  /* A piece of the platform name that the device name does not contain, so only platform
   * matching can explain the pick. */
  char piece[8] = "";
  for (size_t start = 0; start + 4 <= len; start++) {
    char cand[5];
    memcpy(cand, platform + start, 4);
    cand[4] = '\0';
    lower(cand);
    if (isspace((unsigned char)cand[0]) || isspace((unsigned char)cand[3]) || is_special(cand) ||
        contains_nocase(list[0].name, cand))
      continue;
    snprintf(piece, sizeof piece, "%s", cand);
    break;
  }
  if (piece[0] == '\0') {
    /* The device name contains the whole platform name: still, the platform name picks it. */
    check_select(platform, list, n, 0);
  } else {
    check_select(piece, list, n, 0);
    upper(piece);
    check_select(piece, list, n, 0);
  }
  char whole[256];
  snprintf(whole, sizeof whole, "%s", platform);
  lower(whole);
  check_select(whole, list, n, 0);
  free(list);
}
END_TEST

START_TEST(test_select_no_match) {
  size_t n;
  ocal_device_info *list = list_devices(&n);
  ocal_device_info info = {sizeof info};
  ck_assert_ocal_fails(ocal_device_select("no-such-device-xyz", &info), OCAL_DEVICE_NOT_FOUND);
  const char *msg = ocal_last_error();
  ck_assert_ptr_nonnull(strstr(msg, "no-such-device-xyz"));
  ck_assert_ptr_nonnull(strstr(msg, "selector"));
  assert_lists_devices(list, n);
  check_select("no-such-device-xyz", list, n, -1);
  free(list);
}
END_TEST

START_TEST(test_select_null_info) {
  ck_assert_ocal_fails(ocal_device_select("cpu", NULL), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_device_select(NULL, NULL), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_device_select"));
}
END_TEST

/* Every selector example that README.md and ocal/device.h give, checked against what the
 * list says they should pick (or, where nothing fits, a "not found" that lists the devices).
 * The short names are the documented ones: "pocl" must find PoCL, whose platform calls
 * itself "Portable Computing Language" and whose devices are "pthread-..." or "cpu-...". */
static long expected_pick(const ocal_device_info *list, size_t n, const char *sel) {
  static const struct {
    const char *short_name, *piece;
  } aliases[] = {{"pocl", "Portable Computing Language"},
                 {"amd", "Advanced Micro Devices"},
                 {"mesa", "Clover"},
                 {"mesa", "rusticl"}};
  if (strcmp(sel, "gpu") == 0) return first_of_type(list, n, OCAL_DEVICE_GPU);
  if (strcmp(sel, "cpu") == 0) return first_of_type(list, n, OCAL_DEVICE_CPU);
  if (strcmp(sel, "accelerator") == 0) return first_of_type(list, n, OCAL_DEVICE_ACCELERATOR);
  if (strcmp(sel, "0:0") == 0) {
    for (size_t i = 0; i < n; i++)
      if (list[i].platform_index == 0 && list[i].device_index == 0) return (long)i;
    return -1;
  }
  for (size_t i = 0; i < n; i++) {
    if (contains_nocase(list[i].name, sel) || contains_nocase(list[i].platform_name, sel))
      return (long)i;
    for (size_t k = 0; k < sizeof aliases / sizeof aliases[0]; k++)
      if (strcmp(sel, aliases[k].short_name) == 0 &&
          (contains_nocase(list[i].platform_name, aliases[k].piece) ||
           contains_nocase(list[i].vendor, aliases[k].piece)))
        return (long)i;
  }
  return -1;
}

START_TEST(test_select_documented_examples) {
  static const char *const examples[] = {"gpu",   "cpu",     "accelerator", "0:0",
                                         "nvidia", "h100",   "pocl",        "intel",
                                         "amd",   "rusticl", "oclgrind",    "mesa"};
  size_t n;
  ocal_device_info *list = list_devices(&n);
  for (size_t k = 0; k < sizeof examples / sizeof examples[0]; k++) {
    check_select(examples[k], list, n, expected_pick(list, n, examples[k]));
    char up[32];
    snprintf(up, sizeof up, "%s", examples[k]);
    upper(up);
    check_select(up, list, n, expected_pick(list, n, examples[k]));
  }
  /* The case the docs promised and ocal missed: PoCL by its short name. */
  for (size_t i = 0; i < n; i++) {
    if (strcmp(list[i].platform_name, "Portable Computing Language") != 0) continue;
    ocal_device_info got = {sizeof got};
    ck_assert_msg(ocal_device_select("pocl", &got) == OCAL_OK, "'pocl' finds no PoCL device: %s",
                  ocal_last_error());
    ck_assert_str_eq(got.platform_name, "Portable Computing Language");
    break;
  }
  free(list);
}
END_TEST

/* ---- failing queries (white-box: device.c calls OpenCL through replaceable pointers) --- */

static long fail_at = -1, calls = 0;
static cl_int fail_with = CL_OUT_OF_HOST_MEMORY;

static cl_int failing_device_info(cl_device_id d, cl_device_info w, size_t size, void *v,
                                  size_t *ret) {
  if (calls++ == fail_at) return fail_with;
  return clGetDeviceInfo(d, w, size, v, ret);
}

static cl_int failing_device_ids(cl_platform_id p, cl_device_type t, cl_uint num,
                                 cl_device_id *devs, cl_uint *ret) {
  if (calls++ == fail_at) return fail_with;
  return clGetDeviceIDs(p, t, num, devs, ret);
}

/* Bug 8: any clGetDeviceInfo failing inside ocal_context_create fails the creation with that
 * error, for each query in turn; never a context with a zero among its facts. */
START_TEST(test_failed_device_query_fails_creation) {
  ocal__cl_get_device_info = failing_device_info;
  fail_at = -1;
  calls = 0;
  ocal_context ctx = NULL;
  ck_assert_ocal(ocal_context_create(NULL, &ctx));
  ck_assert_ocal(ocal_context_release(ctx));
  const long total = calls;
  ck_assert_int_ge(total, 15); /* every fact of at least one device */
  for (long k = 0; k < total; k++) {
    fail_at = k;
    calls = 0;
    ctx = (ocal_context)&ctx;
    ocal_status s = ocal_context_create(NULL, &ctx);
    ck_assert_msg(s == OCAL_OUT_OF_HOST_MEMORY,
                  "query %ld of %ld failing: ocal_context_create returned %s (%s)", k, total,
                  ocal_status_name(s), ocal_last_error());
    ck_assert_ptr_null(ctx);
    const char *msg = ocal_last_error();
    ck_assert_msg(strstr(msg, "ocal_context_create") && strstr(msg, "clGetDeviceInfo") &&
                      strstr(msg, "CL_OUT_OF_HOST_MEMORY") && strstr(msg, "querying CL_"),
                  "query %ld: %s", k, msg);
  }
  ocal__cl_get_device_info = clGetDeviceInfo;
  fail_at = -1;
  ck_assert_ocal(ocal_context_create(NULL, &ctx));
  ocal_device_info info = {sizeof info};
  ck_assert_ocal(ocal_context_get_device_info(ctx, &info));
  ck_assert_uint_gt(info.max_work_group_size, 0);
  ck_assert_uint_gt(info.max_alloc_bytes, 0);
  ck_assert_ocal(ocal_context_release(ctx));
}
END_TEST

/* Bug 9: clGetDeviceIDs failing for a reason other than "no devices" is reported by its
 * name (not as "no platform is registered"), and the list grown so far is freed (the
 * sanitizer build's LeakSanitizer sees a leak otherwise). */
START_TEST(test_failed_device_enumeration_named) {
  ocal__cl_get_device_ids = failing_device_ids;
  fail_at = -1;
  calls = 0;
  size_t count = 0;
  ck_assert_ocal(ocal_device_list(0, NULL, &count));
  const long total = calls; /* two calls per platform with devices, one per platform without */
  ck_assert_int_ge(total, 2);
  fail_with = CL_OUT_OF_RESOURCES;
  for (long k = 0; k < total; k++) {
    fail_at = k;
    calls = 0;
    ocal_status s = ocal_device_list(0, NULL, &count);
    ck_assert_msg(s == OCAL_OPENCL_ERROR, "call %ld: ocal_device_list returned %s (%s)", k,
                  ocal_status_name(s), ocal_last_error());
    ck_assert_msg(strstr(ocal_last_error(), "clGetDeviceIDs") &&
                      strstr(ocal_last_error(), "CL_OUT_OF_RESOURCES") &&
                      strstr(ocal_last_error(), "ocal_device_list"),
                  "%s", ocal_last_error());
    calls = 0;
    ocal_context ctx = (ocal_context)&ctx;
    s = ocal_context_create(NULL, &ctx);
    ck_assert_msg(s == OCAL_OPENCL_ERROR && ctx == NULL, "call %ld: creation returned %s (%s)",
                  k, ocal_status_name(s), ocal_last_error());
    ck_assert_ptr_null(strstr(ocal_last_error(), "no platform"));
  }
  /* "No devices" is not an error: a platform answering so is skipped. */
  fail_with = CL_DEVICE_NOT_FOUND;
  fail_at = 0;
  calls = 0;
  ck_assert_ocal(ocal_device_list(0, NULL, &count));
  ocal__cl_get_device_ids = clGetDeviceIDs;
  fail_with = CL_OUT_OF_HOST_MEMORY;
  fail_at = -1;
}
END_TEST

/* Bug 4: eight threads creating their contexts at once as the process's first OpenCL use
 * (a fresh process: this program run again with --child-threads) all succeed. */
#define FIRST_THREADS 8
static pthread_barrier_t first_barrier;
static ocal_status first_status[FIRST_THREADS];
static char first_error[FIRST_THREADS][512];

static void *first_thread(void *arg) {
  long t = (long)arg;
  ocal_context ctx = NULL;
  pthread_barrier_wait(&first_barrier);
  first_status[t] = ocal_context_create(NULL, &ctx);
  snprintf(first_error[t], sizeof first_error[t], "%s", ocal_last_error());
  if (first_status[t] == OCAL_OK) {
    const size_t n = 1000 + (size_t)t;
    ocal_buffer b = NULL;
    int32_t host[1007];
    ocal_status s = ocal_buffer_zeros(ctx, OCAL_I32, 1, &n, &b);
    if (s == OCAL_OK) s = ocal_buffer_read(b, 0, n, host, NULL);
    for (size_t i = 0; s == OCAL_OK && i < n; i++)
      if (host[i] != 0) s = OCAL_INTERNAL;
    if (s != OCAL_OK) {
      first_status[t] = s;
      snprintf(first_error[t], sizeof first_error[t], "zeros: %s", ocal_last_error());
    }
    ocal_buffer_release(b);
    ocal_context_release(ctx);
  }
  return NULL;
}

static int child_threads(void) {
  pthread_t threads[FIRST_THREADS];
  pthread_barrier_init(&first_barrier, NULL, FIRST_THREADS);
  for (long t = 0; t < FIRST_THREADS; t++)
    if (pthread_create(&threads[t], NULL, first_thread, (void *)t) != 0) return 2;
  int bad = 0;
  for (long t = 0; t < FIRST_THREADS; t++) {
    pthread_join(threads[t], NULL);
    if (first_status[t] != OCAL_OK) {
      fprintf(stderr, "thread %ld: %s: %s\n", t, ocal_status_name(first_status[t]),
              first_error[t]);
      bad = 1;
    }
  }
  pthread_barrier_destroy(&first_barrier);
  return bad;
}

static const char *program_path = "";

START_TEST(test_concurrent_first_contexts) {
  for (int round = 0; round < 3; round++) {
    char *args[] = {"--child-threads", NULL};
    int sig = 0, code = fixture_wait_child(fixture_spawn_self(program_path, args), &sig);
    ck_assert_msg(code == 0, "round %d: the child %s %d (its stderr says which thread failed)",
                  round, code < 0 ? "died of signal" : "exited", code < 0 ? sig : code);
  }
}
END_TEST

START_TEST(test_select_default_order) {
  ck_assert_int_eq(unsetenv("OCAL_DEVICE"), 0);
  size_t n;
  ocal_device_info *list = list_devices(&n);
  long want = default_pick(list, n);
  check_select(NULL, list, n, want);
  check_select("", list, n, want);
  /* An empty OCAL_DEVICE counts as unset. */
  ck_assert_int_eq(setenv("OCAL_DEVICE", "", 1), 0);
  check_select(NULL, list, n, want);
  free(list);
}
END_TEST

/* OCAL_DEVICE=<keyword> is honoured by ocal_device_select(NULL) and by ocal_context_create. */
static void check_env_keyword(const char *keyword, ocal_device_type type) {
  size_t n;
  ocal_device_info *list = list_devices(&n);
  long want = first_of_type(list, n, type);
  ck_assert_int_eq(setenv("OCAL_DEVICE", keyword, 1), 0);
  ocal_device_info got = {sizeof got};
  ocal_context ctx = NULL;
  if (want >= 0) {
    ck_assert_ocal(ocal_device_select(NULL, &got));
    ck_assert_same_device(&got, &list[want]);
    ck_assert_ocal(ocal_device_select("", &got));
    ck_assert_same_device(&got, &list[want]);
    ck_assert_ocal(ocal_context_create(NULL, &ctx));
    ck_assert_ptr_nonnull(ctx);
    ck_assert_ocal(ocal_context_get_device_info(ctx, &got));
    ck_assert_same_device(&got, &list[want]);
    ck_assert_ocal(ocal_context_release(ctx));
  } else {
    ck_assert_ocal_fails(ocal_device_select(NULL, &got), OCAL_DEVICE_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(ocal_last_error(), "OCAL_DEVICE"));
    ck_assert_ocal_fails(ocal_context_create(NULL, &ctx), OCAL_DEVICE_NOT_FOUND);
    ck_assert_ptr_null(ctx);
    ck_assert_ptr_nonnull(strstr(ocal_last_error(), "OCAL_DEVICE"));
    assert_lists_devices(list, n);
  }
  free(list);
}

START_TEST(test_env_cpu) { check_env_keyword("cpu", OCAL_DEVICE_CPU); }
END_TEST

/* On a machine without a GPU this shows that OCAL_DEVICE is read at all: the default order
 * would have succeeded. */
START_TEST(test_env_gpu) { check_env_keyword("gpu", OCAL_DEVICE_GPU); }
END_TEST

START_TEST(test_env_index_pairs) {
  size_t n;
  ocal_device_info *list = list_devices(&n);
  for (size_t i = 0; i < n; i++) {
    char sel[32];
    snprintf(sel, sizeof sel, "%d:%d", list[i].platform_index, list[i].device_index);
    ck_assert_int_eq(setenv("OCAL_DEVICE", sel, 1), 0);
    ocal_device_info got = {sizeof got};
    ck_assert_ocal(ocal_device_select(NULL, &got));
    ck_assert_same_device(&got, &list[i]);
  }
  free(list);
}
END_TEST

START_TEST(test_env_bad_value) {
  size_t n;
  ocal_device_info *list = list_devices(&n);
  ck_assert_int_eq(setenv("OCAL_DEVICE", "no-such-device-xyz", 1), 0);
  ocal_context ctx = (ocal_context)&ctx; /* must be reset to NULL */
  ck_assert_ocal_fails(ocal_context_create(NULL, &ctx), OCAL_DEVICE_NOT_FOUND);
  ck_assert_ptr_null(ctx);
  const char *msg = ocal_last_error();
  ck_assert_msg(strstr(msg, "OCAL_DEVICE") != NULL, "message does not mention OCAL_DEVICE: %s",
                msg);
  ck_assert_ptr_nonnull(strstr(msg, "ocal_context_create"));
  ck_assert_ptr_nonnull(strstr(msg, "no-such-device-xyz"));
  assert_lists_devices(list, n);

  /* Options without a device, and an empty device, fall back to OCAL_DEVICE as well. */
  ocal_context_options opts;
  ck_assert_ocal(ocal_context_options_init(&opts));
  ck_assert_ocal_fails(ocal_context_create(&opts, &ctx), OCAL_DEVICE_NOT_FOUND);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "OCAL_DEVICE"));
  opts.device = "";
  ck_assert_ocal_fails(ocal_context_create(&opts, &ctx), OCAL_DEVICE_NOT_FOUND);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "OCAL_DEVICE"));
  ck_assert_ptr_null(ctx);

  /* So does a selector of blanks only (blanks around a selector do not count). */
  opts.device = " \t ";
  ck_assert_ocal_fails(ocal_context_create(&opts, &ctx), OCAL_DEVICE_NOT_FOUND);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "OCAL_DEVICE"));
  ck_assert_ptr_null(ctx);

  ocal_device_info info = {sizeof info};
  ck_assert_ocal_fails(ocal_device_select(NULL, &info), OCAL_DEVICE_NOT_FOUND);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "OCAL_DEVICE"));
  ck_assert_ocal_fails(ocal_device_select("  ", &info), OCAL_DEVICE_NOT_FOUND);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "OCAL_DEVICE"));
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "no-such-device-xyz"));

  /* An OCAL_DEVICE longer than a selector may be is refused as a bad argument (ocal/device.h),
   * where it is read: not when an explicit selector makes it irrelevant. */
  char longer[300];
  memset(longer, 'x', sizeof longer - 1);
  longer[sizeof longer - 1] = '\0';
  ck_assert_int_eq(setenv("OCAL_DEVICE", longer, 1), 0);
  ck_assert_ocal_fails(ocal_device_select(NULL, &info), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_device_select"));
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "OCAL_DEVICE"));
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "too long"));
  ck_assert_ocal_fails(ocal_device_select("", &info), OCAL_INVALID_ARGUMENT);
  char sel[32];
  snprintf(sel, sizeof sel, "%d:%d", list[0].platform_index, list[0].device_index);
  check_select(sel, list, n, 0);
  /* An explicit selector as long is refused too, not matched by its first 255 characters;
   * blanks around one are not part of it. */
  ck_assert_ocal_fails(ocal_device_select(longer, &info), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_device_select: the selector is 299"));
  ocal_context_options opts2;
  ck_assert_ocal(ocal_context_options_init(&opts2));
  opts2.device = longer;
  ck_assert_ocal_fails(ocal_context_create(&opts2, &ctx), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_context_create"));
  ck_assert_ptr_null(ctx);
  char padded[300];
  memset(padded, ' ', sizeof padded - 1);
  padded[sizeof padded - 1] = '\0';
  memcpy(padded + 2, sel, strlen(sel)); /* "  P:D" and blanks to 299 characters */
  check_select(padded, list, n, 0);
  free(list);
}
END_TEST

START_TEST(test_explicit_selector_overrides_env) {
  size_t n;
  ocal_device_info *list = list_devices(&n);
  ck_assert_int_eq(setenv("OCAL_DEVICE", "no-such-device-xyz", 1), 0);
  for (size_t i = 0; i < n; i++) {
    char sel[32];
    snprintf(sel, sizeof sel, "%d:%d", list[i].platform_index, list[i].device_index);
    check_select(sel, list, n, (long)i);

    ocal_context_options opts;
    ck_assert_ocal(ocal_context_options_init(&opts));
    opts.device = sel;
    ocal_context ctx = NULL;
    ck_assert_ocal(ocal_context_create(&opts, &ctx));
    ocal_device_info got = {sizeof got};
    ck_assert_ocal(ocal_context_get_device_info(ctx, &got));
    ck_assert_same_device(&got, &list[i]);
    ck_assert_ocal(ocal_context_release(ctx));
  }
  /* A failing explicit selector is reported as the selector, not as OCAL_DEVICE. */
  ocal_device_info info = {sizeof info};
  ck_assert_ocal_fails(ocal_device_select("also-no-such-device", &info), OCAL_DEVICE_NOT_FOUND);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "also-no-such-device"));
  ck_assert_ptr_null(strstr(ocal_last_error(), "OCAL_DEVICE"));
  free(list);
}
END_TEST

START_TEST(test_device_type_string) {
  ck_assert_str_eq(ocal_device_type_name(OCAL_DEVICE_CPU), "CPU");
  ck_assert_str_eq(ocal_device_type_name(OCAL_DEVICE_GPU), "GPU");
  ck_assert_str_eq(ocal_device_type_name(OCAL_DEVICE_ACCELERATOR), "accelerator");
  ck_assert_str_eq(ocal_device_type_name(OCAL_DEVICE_OTHER), "other");
  ck_assert_str_eq(ocal_device_type_name((ocal_device_type)42), "invalid");
}
END_TEST

static TCase *plain_tcase(const char *name) {
  TCase *tc = tcase_create(name);
  tcase_set_timeout(tc, 120);
  return tc;
}

/* A later ocal may append fields to a struct it fills; a program compiled against the older
 * struct passes the older size and gets the fields it knows, nothing past them. Simulated
 * with a struct of two versions through the helpers every such call uses. */
typedef struct grown {
  size_t struct_size;
  uint64_t old_field;
  uint64_t new_field;
} grown;

START_TEST(test_filled_struct_older_size) {
  const grown lib = {sizeof lib, 11, 22};
  const size_t older = OCAL__SIZE_THROUGH(grown, old_field);
  _Alignas(16) unsigned char room[sizeof(grown) + 16];
  memset(room, 0xa5, sizeof room);
  memcpy(room, &older, sizeof older);
  ck_assert_ocal(ocal__filled_check("ocal_try", "out", "grown", room, older, sizeof lib));
  ocal__filled_write(room, &lib);
  size_t size;
  uint64_t old_field;
  memcpy(&size, room, sizeof size);
  memcpy(&old_field, room + offsetof(grown, old_field), sizeof old_field);
  ck_assert_uint_eq(size, older);
  ck_assert_uint_eq(old_field, 11);
  for (size_t i = older; i < sizeof room; i++)
    ck_assert_msg(room[i] == 0xa5, "byte %zu past the older struct was written", i);

  /* The newer size gets the new field as well. */
  size = sizeof lib;
  memcpy(room, &size, sizeof size);
  ck_assert_ocal(ocal__filled_check("ocal_try", "out", "grown", room, older, sizeof lib));
  ocal__filled_write(room, &lib);
  grown got;
  memcpy(&got, room, sizeof got);
  ck_assert_uint_eq(got.new_field, 22);

  /* Below the first size or above the library's own: refused, saying what to do. */
  const size_t bad[] = {older - 1, sizeof lib + 1};
  const char *const want[] = {
      "ocal_try: out->struct_size is 15, but this library takes 16 to 24: set it to "
      "sizeof(grown) before the call",
      "ocal_try: out->struct_size is 25, but this library takes 16 to 24: set it to "
      "sizeof(grown) before the call"};
  for (int b = 0; b < 2; b++) {
    memcpy(room, &bad[b], sizeof bad[b]);
    ck_assert_ocal_fails(ocal__filled_check("ocal_try", "out", "grown", room, older, sizeof lib),
                         OCAL_INVALID_ARGUMENT);
    ck_assert_str_eq(ocal_last_error(), want[b]);
  }
  /* NULL is for the caller to refuse (some calls allow it). */
  ck_assert_ocal(ocal__filled_check("ocal_try", "out", "grown", NULL, older, sizeof lib));
}
END_TEST

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--child-threads") == 0) return child_threads();
  if (argc > 0) program_path = argv[0];
  Suite *s = suite_create("device");

  TCase *tc = plain_tcase("list");
  tcase_add_test(tc, test_list_count);
  tcase_add_test(tc, test_list_facts);
  tcase_add_test(tc, test_list_indices_match_position);
  tcase_add_test(tc, test_list_matches_select_by_index);
  tcase_add_test(tc, test_list_capacity_smaller);
  tcase_add_test(tc, test_list_capacity_larger);
  tcase_add_test(tc, test_list_null_arguments);
  tcase_add_test(tc, test_filled_struct_older_size);
  suite_add_tcase(s, tc);

  tc = plain_tcase("select");
  tcase_add_test(tc, test_select_cpu);
  tcase_add_test(tc, test_select_gpu);
  tcase_add_test(tc, test_select_accelerator);
  tcase_add_test(tc, test_select_zero_zero);
  tcase_add_test(tc, test_select_index_out_of_range);
  tcase_add_test(tc, test_select_device_name_piece);
  tcase_add_test(tc, test_select_platform_name_piece);
  tcase_add_test(tc, test_select_no_match);
  tcase_add_test(tc, test_select_null_info);
  tcase_add_test(tc, test_select_documented_examples);
  tcase_add_test(tc, test_device_type_string);
  suite_add_tcase(s, tc);

  tc = plain_tcase("environment");
  tcase_add_test(tc, test_select_default_order);
  tcase_add_test(tc, test_env_cpu);
  tcase_add_test(tc, test_env_gpu);
  tcase_add_test(tc, test_env_index_pairs);
  tcase_add_test(tc, test_env_bad_value);
  tcase_add_test(tc, test_explicit_selector_overrides_env);
  suite_add_tcase(s, tc);

  tc = plain_tcase("failures");
  tcase_add_test(tc, test_failed_device_query_fails_creation);
  tcase_add_test(tc, test_failed_device_enumeration_named);
  tcase_add_test(tc, test_concurrent_first_contexts);
  suite_add_tcase(s, tc);

  return fixture_run(s);
}
