/* ocal tests — status codes, the thread-local error message, element types, the version. */
#include "fixture.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- status names and descriptions ------------------------------------------------------ */

typedef struct {
  ocal_status value;
  const char *expected_name;
  const char *expected_text;
} status_row;

static const status_row status_rows[] = {
#define ROW(name, value, text) {OCAL_##name, "OCAL_" #name, text},
    OCAL_STATUS_MAP(ROW)
#undef ROW
};
#define N_STATUS (sizeof status_rows / sizeof status_rows[0])

START_TEST(test_status_ok_is_zero) {
  ck_assert_int_eq(OCAL_OK, 0);
  ck_assert_str_eq(ocal_status_name(OCAL_OK), "OCAL_OK");
}
END_TEST

START_TEST(test_status_names_match_map) {
  ck_assert_uint_ge(N_STATUS, 15);
  for (size_t i = 0; i < N_STATUS; i++) {
    const char *name = ocal_status_name(status_rows[i].value);
    ck_assert_ptr_nonnull(name);
    ck_assert_str_eq(name, status_rows[i].expected_name);
    ck_assert_msg(strncmp(name, "OCAL_", 5) == 0 && name[5] != '\0', "bad name %s", name);
  }
}
END_TEST

START_TEST(test_status_names_and_values_distinct) {
  for (size_t i = 0; i < N_STATUS; i++) {
    for (size_t j = i + 1; j < N_STATUS; j++) {
      ck_assert_int_ne(status_rows[i].value, status_rows[j].value);
      ck_assert_str_ne(ocal_status_name(status_rows[i].value),
                       ocal_status_name(status_rows[j].value));
    }
  }
}
END_TEST

START_TEST(test_status_descriptions) {
  for (size_t i = 0; i < N_STATUS; i++) {
    const char *text = ocal_status_description(status_rows[i].value);
    ck_assert_ptr_nonnull(text);
    ck_assert_msg(text[0] != '\0', "%s has an empty description",
                  status_rows[i].expected_name);
    ck_assert_str_eq(text, status_rows[i].expected_text);
  }
}
END_TEST

START_TEST(test_status_unknown) {
  /* One past the largest code, and values far outside the table. */
  int max = 0;
  for (size_t i = 0; i < N_STATUS; i++)
    if ((int)status_rows[i].value > max) max = (int)status_rows[i].value;
  const int unknown[] = {max + 1, 1000, 123456};
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
    ocal_status s = (ocal_status)unknown[i];
    ck_assert_str_eq(ocal_status_name(s), "OCAL_UNKNOWN_STATUS");
    const char *text = ocal_status_description(s);
    ck_assert_ptr_nonnull(text);
    ck_assert_msg(text[0] != '\0', "status %d has an empty description", unknown[i]);
    for (size_t j = 0; j < N_STATUS; j++) ck_assert_str_ne(text, status_rows[j].expected_text);
  }
}
END_TEST

/* ---- the thread-local last error -------------------------------------------------------- */

/* Provokes a failure whose message contains `marker` (an unknown element type name). */
static ocal_status fail_with(const char *marker) {
  ocal_dtype dt;
  return ocal_dtype_from_name(marker, &dt);
}

typedef struct {
  char initial[256];       /* ocal_last_error() when the thread started */
  char after_fail[1024];   /* after its own failure */
  char after_main[1024];   /* after the main thread failed in between */
  ocal_status status;
  pthread_barrier_t *barrier; /* NULL: no rendezvous with the main thread */
} thread_report;

static void *error_thread(void *arg) {
  thread_report *r = arg;
  snprintf(r->initial, sizeof r->initial, "%s", ocal_last_error());
  r->status = fail_with("thread-marker-B");
  snprintf(r->after_fail, sizeof r->after_fail, "%s", ocal_last_error());
  if (r->barrier) {
    pthread_barrier_wait(r->barrier); /* 1: our failure is recorded */
    pthread_barrier_wait(r->barrier); /* 2: the main thread has failed meanwhile */
  }
  snprintf(r->after_main, sizeof r->after_main, "%s", ocal_last_error());
  return NULL;
}

START_TEST(test_last_error_empty_in_fresh_thread) {
  /* Make sure the main thread has a message, so "" in the thread is not a coincidence. */
  ck_assert_int_eq(fail_with("main-marker-A"), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "main-marker-A"));
  thread_report r;
  memset(&r, 0, sizeof r);
  strcpy(r.initial, "not written");
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, error_thread, &r), 0);
  ck_assert_int_eq(pthread_join(t, NULL), 0);
  ck_assert_str_eq(r.initial, "");
}
END_TEST

START_TEST(test_last_error_thread_does_not_touch_main) {
  ck_assert_int_eq(fail_with("main-marker-A"), OCAL_INVALID_ARGUMENT);
  char before[1024];
  snprintf(before, sizeof before, "%s", ocal_last_error());

  thread_report r;
  memset(&r, 0, sizeof r);
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, error_thread, &r), 0);
  ck_assert_int_eq(pthread_join(t, NULL), 0);

  ck_assert_int_eq(r.status, OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(r.after_fail, "thread-marker-B"));
  ck_assert_ptr_null(strstr(r.after_fail, "main-marker-A"));
  /* The thread's failure left the main thread's message exactly as it was. */
  ck_assert_str_eq(ocal_last_error(), before);
  ck_assert_ptr_null(strstr(ocal_last_error(), "thread-marker-B"));
}
END_TEST

START_TEST(test_last_error_main_does_not_touch_thread) {
  pthread_barrier_t barrier;
  ck_assert_int_eq(pthread_barrier_init(&barrier, NULL, 2), 0);
  thread_report r;
  memset(&r, 0, sizeof r);
  r.barrier = &barrier;
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, error_thread, &r), 0);
  pthread_barrier_wait(&barrier); /* 1 */
  /* While the thread holds its message, the main thread fails. */
  ocal_status s = fail_with("main-marker-C");
  pthread_barrier_wait(&barrier); /* 2 */
  ck_assert_int_eq(pthread_join(t, NULL), 0);
  pthread_barrier_destroy(&barrier);

  ck_assert_int_eq(s, OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "main-marker-C"));
  ck_assert_ptr_nonnull(strstr(r.after_main, "thread-marker-B"));
  ck_assert_ptr_null(strstr(r.after_main, "main-marker-C"));
  ck_assert_str_eq(r.after_main, r.after_fail);
}
END_TEST

START_TEST(test_last_error_success_keeps_message_failure_replaces_it) {
  ck_assert_int_eq(fail_with("first-marker"), OCAL_INVALID_ARGUMENT);
  char first[1024];
  snprintf(first, sizeof first, "%s", ocal_last_error());
  ck_assert_ptr_nonnull(strstr(first, "first-marker"));

  /* Success does not clear the message. */
  ocal_dtype dt;
  ck_assert_ocal(ocal_dtype_from_name("f32", &dt));
  ck_assert_ocal(ocal_context_finish(fixture_ctx));
  ck_assert_str_eq(ocal_last_error(), first);

  /* The next failure replaces it rather than appending to it. */
  ck_assert_int_eq(fail_with("second-marker"), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "second-marker"));
  ck_assert_ptr_null(strstr(ocal_last_error(), "first-marker"));
}
END_TEST

/* The message of a failing call starts with the name of the public function. */
static void assert_names_function(const char *func) {
  const char *msg = ocal_last_error();
  size_t n = strlen(func);
  ck_assert_msg(strncmp(msg, func, n) == 0 && msg[n] == ':',
                "message '%s' does not start with '%s:'", msg, func);
  ck_assert_msg(strlen(msg) > n + 2, "message '%s' says nothing after the function", msg);
}

START_TEST(test_message_names_function) {
  ocal_buffer buf = (ocal_buffer)&buf; /* must be reset to NULL on failure */
  size_t shape[1] = {4};
  ck_assert_ocal_fails(ocal_buffer_create(fixture_ctx, OCAL_F32, 0, shape, &buf),
                       OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_null(buf);
  assert_names_function("ocal_buffer_create");
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ndim"));

  ck_assert_ocal_fails(ocal_context_finish(NULL), OCAL_INVALID_HANDLE);
  assert_names_function("ocal_context_finish");

  ck_assert_ocal_fails(ocal_context_create(NULL, NULL), OCAL_INVALID_ARGUMENT);
  assert_names_function("ocal_context_create");

  ocal_device_info info = {sizeof info};
  ck_assert_ocal_fails(ocal_device_select("no-such-device-xyz", &info), OCAL_DEVICE_NOT_FOUND);
  assert_names_function("ocal_device_select");

  ck_assert_ocal_fails(fail_with("bogus"), OCAL_INVALID_ARGUMENT);
  assert_names_function("ocal_dtype_from_name");

  size_t numel;
  ck_assert_ocal_fails(ocal_buffer_get_numel(NULL, &numel), OCAL_INVALID_HANDLE);
  assert_names_function("ocal_buffer_get_numel");
}
END_TEST

/* ocal_error_set is how libraries built on ocal (libocal-mpi) report errors: the message reads
 * as ocal's own, and the status comes back as given. */
START_TEST(test_error_set) {
  ck_assert_int_eq(ocal_error_set(OCAL_SHAPE_MISMATCH, "my_call", "count %d differs", 7),
                   OCAL_SHAPE_MISMATCH);
  ck_assert_str_eq(ocal_last_error(), "my_call: count 7 differs");
  ck_assert_int_eq(ocal_error_set(OCAL_INTERNAL, NULL, "plain"), OCAL_INTERNAL);
  ck_assert_str_eq(ocal_last_error(), "plain");
  ck_assert_int_eq(ocal_error_set(OCAL_INTERNAL, "only_func", NULL), OCAL_INTERNAL);
  ck_assert_str_eq(ocal_last_error(), "only_func");
  ck_assert_str_eq(ocal_cl_error_name(CL_OUT_OF_RESOURCES), "CL_OUT_OF_RESOURCES");
  ck_assert_str_eq(ocal_cl_error_name(12345), "CL_UNKNOWN_ERROR");
}
END_TEST

/* ---- element types ---------------------------------------------------------------------- */

typedef struct {
  ocal_dtype dtype;
  const char *name;
  size_t size;
} dtype_row;

static const dtype_row dtype_rows[] = {
    {OCAL_F32, "f32", 4}, {OCAL_F64, "f64", 8}, {OCAL_I32, "i32", 4},
    {OCAL_U32, "u32", 4}, {OCAL_I64, "i64", 8}, {OCAL_U64, "u64", 8},
    {OCAL_U8, "u8", 1},   {OCAL_C32, "c32", 8}, {OCAL_C64, "c64", 16},
    {OCAL_F16, "f16", 2}, {OCAL_BF16, "bf16", 2},
};
#define N_DTYPE (sizeof dtype_rows / sizeof dtype_rows[0])

START_TEST(test_dtype_size_and_name) {
  ck_assert_int_eq(OCAL_DTYPE_COUNT, (int)N_DTYPE);
  for (size_t i = 0; i < N_DTYPE; i++) {
    ck_assert_uint_eq(ocal_dtype_size(dtype_rows[i].dtype), dtype_rows[i].size);
    ck_assert_str_eq(ocal_dtype_name(dtype_rows[i].dtype), dtype_rows[i].name);
    for (size_t j = i + 1; j < N_DTYPE; j++)
      ck_assert_str_ne(ocal_dtype_name(dtype_rows[i].dtype), ocal_dtype_name(dtype_rows[j].dtype));
  }
  /* The sizes match the C types the documentation promises. */
  ck_assert_uint_eq(ocal_dtype_size(OCAL_F32), sizeof(float));
  ck_assert_uint_eq(ocal_dtype_size(OCAL_F64), sizeof(double));
  ck_assert_uint_eq(ocal_dtype_size(OCAL_C32), 2 * sizeof(float));
  ck_assert_uint_eq(ocal_dtype_size(OCAL_C64), 2 * sizeof(double));
}
END_TEST

START_TEST(test_dtype_invalid) {
  ck_assert_uint_eq(ocal_dtype_size(OCAL_DTYPE_COUNT), 0);
  ck_assert_str_eq(ocal_dtype_name(OCAL_DTYPE_COUNT), "invalid");
  ck_assert_uint_eq(ocal_dtype_size((ocal_dtype)1000), 0);
  ck_assert_str_eq(ocal_dtype_name((ocal_dtype)1000), "invalid");
}
END_TEST

START_TEST(test_dtype_from_name_round_trip) {
  for (size_t i = 0; i < N_DTYPE; i++) {
    ocal_dtype dt = OCAL_DTYPE_COUNT;
    ck_assert_ocal(ocal_dtype_from_name(ocal_dtype_name(dtype_rows[i].dtype), &dt));
    ck_assert_int_eq(dt, dtype_rows[i].dtype);

    /* Case-insensitive: upper case, and mixed case. */
    char upper[16], mixed[16];
    snprintf(upper, sizeof upper, "%s", dtype_rows[i].name);
    snprintf(mixed, sizeof mixed, "%s", dtype_rows[i].name);
    for (char *p = upper; *p; p++)
      if (*p >= 'a' && *p <= 'z') *p = (char)(*p - 'a' + 'A');
    mixed[0] = upper[0];
    dt = OCAL_DTYPE_COUNT;
    ck_assert_ocal(ocal_dtype_from_name(upper, &dt));
    ck_assert_int_eq(dt, dtype_rows[i].dtype);
    dt = OCAL_DTYPE_COUNT;
    ck_assert_ocal(ocal_dtype_from_name(mixed, &dt));
    ck_assert_int_eq(dt, dtype_rows[i].dtype);
  }
}
END_TEST

START_TEST(test_dtype_from_name_unknown) {
  const char *bad[] = {"float", "half", "f8", "bf32", "f3", "f320", "", "complex64", "xyz"};
  for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
    ocal_dtype dt = OCAL_I64;
    ck_assert_ocal_fails(ocal_dtype_from_name(bad[b], &dt), OCAL_INVALID_ARGUMENT);
    ck_assert_int_eq(dt, OCAL_I64); /* untouched on failure */
    const char *msg = ocal_last_error();
    ck_assert_ptr_nonnull(strstr(msg, "ocal_dtype_from_name"));
    char quoted[64];
    snprintf(quoted, sizeof quoted, "'%s'", bad[b]);
    ck_assert_msg(strstr(msg, quoted) != NULL, "message '%s' does not quote %s", msg, quoted);
    /* The message lists every valid name. */
    for (size_t i = 0; i < N_DTYPE; i++)
      ck_assert_msg(strstr(msg, dtype_rows[i].name) != NULL, "message '%s' does not list %s",
                    msg, dtype_rows[i].name);
  }
}
END_TEST

START_TEST(test_dtype_from_name_null) {
  ocal_dtype dt;
  ck_assert_ocal_fails(ocal_dtype_from_name(NULL, &dt), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_dtype_from_name("f32", NULL), OCAL_INVALID_ARGUMENT);
}
END_TEST

/* ---- version ---------------------------------------------------------------------------- */

START_TEST(test_version) {
  ck_assert_uint_eq(ocal_version(), OCAL_VERSION_HEX);
  ck_assert_str_eq(ocal_version_string(), OCAL_VERSION_STRING);
  ck_assert_uint_eq(OCAL_VERSION_HEX,
                    OCAL_VERSION_MAJOR * 10000 + OCAL_VERSION_MINOR * 100 + OCAL_VERSION_PATCH);
  char expected[64];
  snprintf(expected, sizeof expected, "%d.%d.%d", OCAL_VERSION_MAJOR, OCAL_VERSION_MINOR,
           OCAL_VERSION_PATCH);
  ck_assert_str_eq(ocal_version_string(), expected);
}
END_TEST

static TCase *plain_tcase(const char *name) {
  TCase *tc = tcase_create(name);
  tcase_set_timeout(tc, 60);
  return tc;
}

int main(void) {
  Suite *s = suite_create("status");

  TCase *tc = plain_tcase("status");
  tcase_add_test(tc, test_status_ok_is_zero);
  tcase_add_test(tc, test_status_names_match_map);
  tcase_add_test(tc, test_status_names_and_values_distinct);
  tcase_add_test(tc, test_status_descriptions);
  tcase_add_test(tc, test_status_unknown);
  suite_add_tcase(s, tc);

  tc = plain_tcase("last_error");
  tcase_add_test(tc, test_last_error_empty_in_fresh_thread);
  tcase_add_test(tc, test_last_error_thread_does_not_touch_main);
  tcase_add_test(tc, test_last_error_main_does_not_touch_thread);
  suite_add_tcase(s, tc);

  tc = fixture_tcase("messages");
  tcase_add_test(tc, test_last_error_success_keeps_message_failure_replaces_it);
  tcase_add_test(tc, test_message_names_function);
  tcase_add_test(tc, test_error_set);
  suite_add_tcase(s, tc);

  tc = plain_tcase("dtype");
  tcase_add_test(tc, test_dtype_size_and_name);
  tcase_add_test(tc, test_dtype_invalid);
  tcase_add_test(tc, test_dtype_from_name_round_trip);
  tcase_add_test(tc, test_dtype_from_name_unknown);
  tcase_add_test(tc, test_dtype_from_name_null);
  suite_add_tcase(s, tc);

  tc = plain_tcase("version");
  tcase_add_test(tc, test_version);
  suite_add_tcase(s, tc);

  return fixture_run(s);
}
