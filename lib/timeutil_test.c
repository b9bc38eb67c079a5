/*
 * Unit tests for lib/timeutil.c. Runs in UTC so that the expected strings
 * do not depend on the machine's zone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/timeutil.h"

/* 2023-11-14 22:13:20.123456 UTC */
static const btime T0 = (btime) 1700000000 * TO_S + 123456;

static void
check_fmt(const char *fmt, btime t, const char *want)
{
  char buf[TM_DATETIME_BUFFER_SIZE];
  assert_int_equal(tm_format_real_time(buf, sizeof(buf), fmt, t), 0);
  assert_string_equal(buf, want);
}

static void
test_fraction(void **state)
{
  check_fmt("%F %T", T0, "2023-11-14 22:13:20");
  check_fmt(TM_ISO_LONG_MS, T0, "2023-11-14 22:13:20.123");
  check_fmt(TM_ISO_LONG_US, T0, "2023-11-14 22:13:20.123456");
  check_fmt(TM_ISO_SHORT_MS, T0, "22:13:20.123");
  check_fmt(TM_ISO_SHORT_S, T0, "22:13:20");
  check_fmt("%1f|%2f|%3f|%4f|%5f|%6f", T0, "1|12|123|1234|12345|123456");
  /* Digits are truncated, not rounded; leading zeros kept */
  check_fmt("%3f", (btime) 5 * TO_S + 999999, "999");
  check_fmt("%3f", (btime) 5 * TO_S + 7, "000");
  check_fmt("%6f", (btime) 5 * TO_S + 7, "000007");
  /* "%%3f" is a literal percent sign followed by "3f" */
  check_fmt("%%3f %3f", T0, "%3f 123");
  /* Only 1..6 are fractions; other strftime conversions pass through */
  check_fmt("%s", T0, "1700000000");
  check_fmt("%Y%m%d", T0, "20231114");
  /* Before the epoch the fraction stays positive */
  check_fmt("%T.%6f", -1, "23:59:59.999999");
  check_fmt("", T0, "");
}

static void
test_too_small(void **state)
{
  char buf[9];
  assert_int_equal(tm_format_real_time(buf, sizeof(buf), "%F %T.%6f", T0), -1);
  assert_string_equal(buf, "");
  /* "22:13:20" and its NUL fit exactly; one byte less does not */
  assert_int_equal(tm_format_real_time(buf, sizeof(buf), "%T", T0), 0);
  assert_string_equal(buf, "22:13:20");
  assert_int_equal(tm_format_real_time(buf, sizeof(buf) - 1, "%T", T0), -1);
  /* Fraction digits count too */
  assert_int_equal(tm_format_real_time(buf, sizeof(buf), "%T.%6f", T0), -1);

  /* tm_format_time never leaves garbage */
  const struct timeformat tf = { "%F %T.%6f", NULL, 0 };
  tm_format_time(buf, sizeof(buf), &tf, T0);
  assert_string_equal(buf, "<error>");
}

static void
test_clocks(void **state)
{
  btime m1 = time_mono_now();
  btime r1 = time_real_now();
  btime m2 = time_mono_now();
  assert_true(m2 >= m1);
  assert_true(r1 > (btime) 1600000000 * TO_S);

  /* Converting "now" gives about the real now */
  btime r2 = time_mono_to_real(time_mono_now());
  btime d = r2 - time_real_now();
  assert_true(d > -(btime) TO_S && d < (btime) TO_S);
}

static void
test_defaults(void **state)
{
  assert_string_equal(tf_default_route.fmt1, "%T.%3f");
  assert_string_equal(tf_default_route.fmt2, "%F");
  assert_int_equal(tf_default_route.limit, (btime) 20 * 3600 * TO_S);
  assert_string_equal(tf_default_proto.fmt1, "%T.%3f");
  assert_string_equal(tf_default_proto.fmt2, "%F");
  assert_int_equal(tf_default_proto.limit, (btime) 20 * 3600 * TO_S);
  assert_string_equal(tf_default_base.fmt1, "%F %T.%3f");
  assert_null(tf_default_base.fmt2);
  assert_string_equal(tf_default_log.fmt1, "%F %T.%3f");
  assert_null(tf_default_log.fmt2);
}

static void
test_limit_switch(void **state)
{
  char buf[TM_DATETIME_BUFFER_SIZE];
  const struct timeformat tf = { "near", "far", 10 * TO_S };
  btime now = time_real_now();

  tm_format_time(buf, sizeof(buf), &tf, now);
  assert_string_equal(buf, "near");
  tm_format_time(buf, sizeof(buf), &tf, now - 5 * TO_S);
  assert_string_equal(buf, "near");
  tm_format_time(buf, sizeof(buf), &tf, now - 20 * TO_S);
  assert_string_equal(buf, "far");
  /* Distance counts both ways */
  tm_format_time(buf, sizeof(buf), &tf, now + 20 * TO_S);
  assert_string_equal(buf, "far");

  /* No fmt2: always fmt1 */
  const struct timeformat one = { "only", NULL, 10 * TO_S };
  tm_format_time(buf, sizeof(buf), &one, now - (btime) 1000 * TO_S);
  assert_string_equal(buf, "only");

  /* BIRD's route default: time today, date long ago */
  tm_format_time(buf, sizeof(buf), &tf_default_route, T0);
  assert_string_equal(buf, "2023-11-14");
  tm_format_time(buf, sizeof(buf), &tf_default_route, now);
  assert_int_equal(strlen(buf), strlen("22:13:20.123"));
  assert_int_equal(buf[2], ':');
  assert_int_equal(buf[8], '.');
}

int
main(void)
{
  setenv("TZ", "UTC", 1);
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_fraction),
    cmocka_unit_test(test_too_small),
    cmocka_unit_test(test_clocks),
    cmocka_unit_test(test_defaults),
    cmocka_unit_test(test_limit_switch),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
