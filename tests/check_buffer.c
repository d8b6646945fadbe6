#include "fixture.h"

START_TEST(test_placeholder_buffer) { ck_assert_ocal(OCAL_OK); }
END_TEST

int main(void) {
  Suite *s = suite_create("buffer");
  TCase *tc = fixture_tcase("basic");
  tcase_add_test(tc, test_placeholder_buffer);
  suite_add_tcase(s, tc);
  return fixture_run(s);
}
