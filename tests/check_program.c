/* White-box tests of the program and kernel caches and of OpenCL error reporting, through
 * the internal interface (src/core/internal.h) that every ocal operation builds on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "internal.h"

static const char good_source[] =
    "__kernel void count(__global uint *out, const ulong n) {\n"
    "  for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) out[i] += 1u;\n"
    "}\n";

/* Line 3 uses a name that does not exist: the compiler's log must say so. */
static const char broken_source[] =
    "__kernel void broken(__global float *x) {\n"
    "  float y = 1.0f;\n"
    "  x[0] = y + no_such_variable_here;\n"
    "}\n";

START_TEST(test_build_failure_reports_log_and_context_survives) {
  ocal__program *p = NULL;
  ck_assert_ocal_fails(ocal__program_get(fixture_ctx, "broken.cl", broken_source, "", &p),
                       OCAL_BUILD_FAILED);
  const char *msg = ocal_last_error();
  ck_assert_msg(strstr(msg, "broken.cl") != NULL, "message does not name the source: %s", msg);
  ck_assert_msg(strstr(msg, "CL_BUILD_PROGRAM_FAILURE") != NULL, "no error name: %s", msg);
  ck_assert_msg(strstr(msg, "compiler log") != NULL, "no compiler log: %s", msg);
  ck_assert_msg(strstr(msg, "no_such_variable_here") != NULL, "log misses the culprit: %s", msg);
  ocal_device_info info = {sizeof info};
  ck_assert_ocal(ocal_context_get_device_info(fixture_ctx, &info));
  ck_assert_msg(strstr(msg, info.name) != NULL, "message does not name the device: %s", msg);

  /* A failed build is not cached: asking again compiles (and fails) again. */
  ocal_cache_stats before = {sizeof before}, after = {sizeof after};
  ck_assert_ocal(ocal_context_get_cache_stats(fixture_ctx, &before));
  ck_assert_ocal_fails(ocal__program_get(fixture_ctx, "broken.cl", broken_source, "", &p),
                       OCAL_BUILD_FAILED);
  ck_assert_ocal(ocal_context_get_cache_stats(fixture_ctx, &after));
  ck_assert_uint_eq(after.compiles, before.compiles + 1);

  /* The context still works. */
  size_t n = 37;
  ocal_buffer b;
  int32_t v = -12345, out[37];
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_I32, 1, &n, &b));
  ck_assert_ocal(ocal_buffer_fill(b, &v));
  ck_assert_ocal(ocal_buffer_read(b, 0, n, out, NULL));
  for (size_t i = 0; i < n; i++) ck_assert_int_eq(out[i], v);
  ocal_buffer_release(b);
}
END_TEST

START_TEST(test_memory_cache_keys_on_source_and_options) {
  ocal_context_options o;
  ocal_context_options_init(&o);
  o.disk_cache = 0; /* count compiles, not disk hits */
  ocal_context ctx;
  ck_assert_ocal(ocal_context_create(&o, &ctx));
  ocal__program *a, *b, *c;
  ck_assert_ocal(ocal__program_get(ctx, "count.cl", good_source, "", &a));
  ck_assert_ocal(ocal__program_get(ctx, "count.cl", good_source, "", &b));
  ck_assert_ptr_eq(a, b);
  ck_assert_ocal(ocal__program_get(ctx, "count.cl", good_source, "-DUNUSED=1", &c));
  ck_assert_ptr_ne(a, c);
  ocal_cache_stats st = {sizeof st};
  ck_assert_ocal(ocal_context_get_cache_stats(ctx, &st));
  ck_assert_uint_eq(st.compiles, 2);
  ck_assert_uint_eq(st.memory_hits, 1);
  ck_assert_uint_eq(st.disk_hits, 0);

  ocal__kernel *k1, *k2;
  ck_assert_ocal(ocal__kernel_get(ctx, a, "count", &k1));
  ck_assert_ocal(ocal__kernel_get(ctx, a, "count", &k2));
  ck_assert_ptr_eq(k1, k2);
  ck_assert_uint_ge(k1->work_group_size, 1);
  ocal_context_release(ctx);
}
END_TEST

START_TEST(test_missing_kernel_names_the_opencl_error) {
  ocal__program *p;
  ocal__kernel *k;
  ck_assert_ocal(ocal__program_get(fixture_ctx, "count.cl", good_source, "", &p));
  ck_assert_ocal_fails(ocal__kernel_get(fixture_ctx, p, "no_such_kernel", &k), OCAL_OPENCL_ERROR);
  const char *msg = ocal_last_error();
  ck_assert_msg(strstr(msg, "clCreateKernel failed with CL_INVALID_KERNEL_NAME (-46)") != NULL,
                "message: %s", msg);
  ck_assert_msg(strstr(msg, "no_such_kernel") != NULL, "message: %s", msg);
}
END_TEST

/* Every element is visited exactly once by a grid-stride launch, whatever n. */
START_TEST(test_launch_covers_every_element_once) {
  static const size_t sizes[] = {1, 3, 255, 257, 1000003};
  ocal__program *p;
  ocal__kernel *k;
  ck_assert_ocal(ocal__program_get(fixture_ctx, "count.cl", good_source, "", &p));
  ck_assert_ocal(ocal__kernel_get(fixture_ctx, p, "count", &k));
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    size_t n = sizes[s];
    ocal_buffer b;
    ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_U32, 1, &n, &b));
    cl_mem mem;
    ck_assert_ocal(ocal_buffer_get_cl_mem(b, &mem, NULL));
    cl_ulong n64 = n;
    pthread_mutex_lock(&k->lock);
    ck_assert_int_eq(clSetKernelArg(k->kernel, 0, sizeof mem, &mem), CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(k->kernel, 1, sizeof n64, &n64), CL_SUCCESS);
    ocal_status st = ocal__launch_1d(fixture_ctx, k, n, "check_program");
    pthread_mutex_unlock(&k->lock);
    ck_assert_ocal(st);
    uint32_t *out = malloc(n * sizeof *out);
    ck_assert_ptr_nonnull(out);
    ck_assert_ocal(ocal_buffer_read(b, 0, n, out, NULL));
    size_t wrong = 0;
    for (size_t i = 0; i < n; i++) wrong += out[i] != 1u;
    ck_assert_msg(wrong == 0, "n=%zu: %zu elements not visited exactly once", n, wrong);
    free(out);
    ocal_buffer_release(b);
  }
}
END_TEST

START_TEST(test_cl_errors_by_name_and_status) {
  ck_assert_str_eq(ocal__cl_error_name(CL_OUT_OF_RESOURCES), "CL_OUT_OF_RESOURCES");
  ck_assert_str_eq(ocal__cl_error_name(CL_INVALID_VALUE), "CL_INVALID_VALUE");
  ck_assert_str_eq(ocal__cl_error_name(-1001), "CL_PLATFORM_NOT_FOUND_KHR");
  ck_assert_str_eq(ocal__cl_error_name(-12345), "CL_UNKNOWN_ERROR");
  ck_assert_int_eq(ocal__cl_fail("dev", CL_MEM_OBJECT_ALLOCATION_FAILURE, "clFoo(a, b)", "f"),
                   OCAL_OUT_OF_DEVICE_MEMORY);
  ck_assert_str_eq(ocal_last_error(),
                   "f: clFoo failed with CL_MEM_OBJECT_ALLOCATION_FAILURE (-4) on device 'dev'");
  ck_assert_int_eq(ocal__cl_fail(NULL, CL_OUT_OF_HOST_MEMORY, "clBar", "g"),
                   OCAL_OUT_OF_HOST_MEMORY);
  ck_assert_str_eq(ocal_last_error(), "g: clBar failed with CL_OUT_OF_HOST_MEMORY (-6)");
  ck_assert_int_eq(ocal__cl_fail("d", CL_OUT_OF_RESOURCES, "clBaz", "h"), OCAL_OPENCL_ERROR);
}
END_TEST

START_TEST(test_fnv1a64_reference_values) {
  /* The published FNV-1a 64-bit test vectors. */
  ck_assert_uint_eq(ocal__fnv1a64("", 0, OCAL__FNV_SEED), 0xcbf29ce484222325ull);
  ck_assert_uint_eq(ocal__fnv1a64("a", 1, OCAL__FNV_SEED), 0xaf63dc4c8601ec8cull);
  ck_assert_uint_eq(ocal__fnv1a64("foobar", 6, OCAL__FNV_SEED), 0x85944171f73967e8ull);
  /* Streaming equals one pass. */
  uint64_t h = ocal__fnv1a64("foo", 3, OCAL__FNV_SEED);
  ck_assert_uint_eq(ocal__fnv1a64("bar", 3, h), 0x85944171f73967e8ull);
}
END_TEST

START_TEST(test_disk_cache_round_trip_and_rejects) {
  char dir[] = "/tmp/ocal-check-program-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  unsigned char blob[1001], *got = NULL;
  fixture_random_bytes(blob, sizeof blob, 42);
  size_t size = 0;
  int rejected = -1;
  ck_assert_int_eq(ocal__disk_cache_load(dir, "key one", &got, &size, &rejected), 0);
  ck_assert_int_eq(rejected, 0); /* a miss, not a reject */
  ocal__disk_cache_store(dir, "key one", blob, sizeof blob);
  ck_assert_int_eq(ocal__disk_cache_load(dir, "key one", &got, &size, &rejected), 1);
  ck_assert_uint_eq(size, sizeof blob);
  ck_assert_int_eq(memcmp(got, blob, sizeof blob), 0);
  free(got);
  ck_assert_int_eq(ocal__disk_cache_load(dir, "key two", &got, &size, &rejected), 0);
  ck_assert_int_eq(rejected, 0);

  /* Every single-byte corruption of the file is detected. */
  char cmd[256];
  snprintf(cmd, sizeof cmd, "ls %s/*.bin", dir);
  FILE *ls = popen(cmd, "r");
  char path[512] = "";
  ck_assert_ptr_nonnull(fgets(path, sizeof path, ls));
  pclose(ls);
  path[strcspn(path, "\n")] = '\0';
  FILE *f = fopen(path, "rb");
  ck_assert_ptr_nonnull(f);
  unsigned char file[2048];
  size_t flen = fread(file, 1, sizeof file, f);
  fclose(f);
  ck_assert_uint_gt(flen, sizeof blob);
  for (size_t at = 0; at < flen; at += 7) {
    file[at] ^= 0x5a;
    f = fopen(path, "wb");
    ck_assert_uint_eq(fwrite(file, 1, flen, f), flen);
    fclose(f);
    file[at] ^= 0x5a;
    ck_assert_msg(ocal__disk_cache_load(dir, "key one", &got, &size, &rejected) == 0,
                  "corruption at byte %zu went unnoticed", at);
    ck_assert_int_eq(rejected, 1);
  }
  unlink(path);
  rmdir(dir);
}
END_TEST

static int attachment_destroyed;
static const int attachment_key = 0;
static ocal_status attachment_create(ocal_context ctx, void **data) {
  (void)ctx;
  *data = malloc(sizeof(int));
  if (!*data) return OCAL_OUT_OF_HOST_MEMORY;
  *(int *)*data = 77;
  return OCAL_OK;
}
static ocal_status attachment_refuse(ocal_context ctx, void **data) {
  (void)ctx;
  (void)data;
  return OCAL_FAIL(OCAL_UNSUPPORTED, "refused on purpose");
}
static void attachment_destroy(void *data) {
  ck_assert_int_eq(*(int *)data, 77);
  attachment_destroyed++;
  free(data);
}

START_TEST(test_context_attachment_created_once_and_destroyed) {
  static const int other_key = 0;
  ocal_context ctx;
  ck_assert_ocal(ocal_context_create(NULL, &ctx));
  void *a = NULL, *b = NULL;
  ck_assert_ocal(ocal__context_attachment(ctx, &attachment_key, attachment_create,
                                          attachment_destroy, &a, "test"));
  ck_assert_ocal(ocal__context_attachment(ctx, &attachment_key, attachment_create,
                                          attachment_destroy, &b, "test"));
  ck_assert_ptr_nonnull(a);
  ck_assert_ptr_eq(a, b);
  ck_assert_ocal_fails(ocal__context_attachment(ctx, &other_key, attachment_refuse,
                                                attachment_destroy, &b, "test"),
                       OCAL_UNSUPPORTED);
  ck_assert_ptr_null(b);
  ck_assert_msg(strstr(ocal_last_error(), "refused on purpose") != NULL, "%s", ocal_last_error());
  attachment_destroyed = 0;
  ck_assert_ocal(ocal_context_release(ctx));
  ck_assert_int_eq(attachment_destroyed, 1);
}
END_TEST

/* PTX retargeting (the wgmma and f64 kernels' route to sm_90a) on text alone: the target
 * replaced, "//@" markers made live, and the ISA version raised to 8.3 only in a program
 * that uses tensor-map instructions, which need it (a driver whose ISA stops below 8.3 must
 * still build the others). */
START_TEST(test_ptx_retarget_text) {
  const char *plain = ".version 8.0\n.target sm_90, texmode_independent\n"
                      "\t//@wgmma.fence.sync.aligned;\n";
  char *out = ocal__ptx_retarget_text(plain, "sm_90a");
  ck_assert_ptr_nonnull(out);
  ck_assert_str_eq(out, ".version 8.0\n.target sm_90a, texmode_independent\n"
                        "\twgmma.fence.sync.aligned;\n");
  free(out);
  const char *maps = ".version 7.8\n.target sm_90\n\t//@tensormap.replace.tile.rank"
                     ".shared::cta.b1024.b32 [%r1], 2;\n";
  out = ocal__ptx_retarget_text(maps, "sm_90a");
  ck_assert_ptr_nonnull(out);
  ck_assert_str_eq(out, ".version 8.3\n.target sm_90a\n\ttensormap.replace.tile.rank"
                        ".shared::cta.b1024.b32 [%r1], 2;\n");
  free(out);
  const char *newer = ".version 8.5\n.target sm_90\n\t//@tensormap.cp_fenceproxy;\n";
  out = ocal__ptx_retarget_text(newer, "sm_90a");
  ck_assert_ptr_nonnull(out);
  ck_assert_ptr_nonnull(strstr(out, ".version 8.5\n"));
  free(out);
  ck_assert_ptr_null(ocal__ptx_retarget_text("not PTX at all", "sm_90a"));
}
END_TEST

/* cl/prelude.cl travels inside the sources that include it: each embedded text holds it
 * verbatim where its #include line was (so a program's cache key, a hash of its text, covers
 * it), and no embedded text keeps an #include of a .cl file, which no compiler could find. */
START_TEST(test_prelude_is_embedded_in_its_sources) {
  char path[4096];
  snprintf(path, sizeof path, "%s/prelude.cl", OCAL_CL_DIR);
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot read %s", path);
  static char prelude[16384];
  size_t n = fread(prelude, 1, sizeof prelude - 1, f);
  fclose(f);
  ck_assert_uint_gt(n, 0);
  ck_assert_uint_lt(n, sizeof prelude - 1);
  prelude[n] = '\0';
  static const char *const users[] = {"elementwise", "random", "reduce", "softmax"};
  int found = 0;
  for (size_t i = 0; i < ocal__source_count; i++) {
    const char *text = ocal__sources[i].text;
    ck_assert_msg(strstr(text, "\n#include \"") == NULL && strncmp(text, "#include \"", 10) != 0,
                  "the embedded %s keeps an #include line", ocal__sources[i].name);
    for (size_t u = 0; u < sizeof users / sizeof users[0]; u++) {
      if (strcmp(ocal__sources[i].name, users[u]) != 0) continue;
      ck_assert_msg(strstr(text, prelude) != NULL, "the embedded %s lacks cl/prelude.cl",
                    users[u]);
      found++;
    }
  }
  ck_assert_int_eq(found, 4);
}
END_TEST

int main(void) {
  Suite *s = suite_create("program");
  TCase *tc = fixture_tcase("program");
  tcase_add_test(tc, test_build_failure_reports_log_and_context_survives);
  tcase_add_test(tc, test_memory_cache_keys_on_source_and_options);
  tcase_add_test(tc, test_missing_kernel_names_the_opencl_error);
  tcase_add_test(tc, test_launch_covers_every_element_once);
  tcase_add_test(tc, test_cl_errors_by_name_and_status);
  tcase_add_test(tc, test_fnv1a64_reference_values);
  tcase_add_test(tc, test_prelude_is_embedded_in_its_sources);
  tcase_add_test(tc, test_ptx_retarget_text);
  tcase_add_test(tc, test_disk_cache_round_trip_and_rejects);
  tcase_add_test(tc, test_context_attachment_created_once_and_destroyed);
  suite_add_tcase(s, tc);
  return fixture_run(s);
}
