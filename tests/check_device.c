#include "fixture.h"

START_TEST(test_placeholder_device) { ck_assert_ocal(OCAL_OK); }
END_TEST

int main(void) {
  Suite *s = suite_create("device");
  TCase *tc = fixture_tcase("basic");
  tcase_add_test(tc, test_placeholder_device);
  suite_add_tcase(s, tc);
  return fixture_run(s);
}
