/*
 * Unit tests for lib/birdlib.h's MIN and MAX: each argument is evaluated
 * once (a shared value read twice gave a minimum that was never there),
 * the result has the type the plain conditional gives, and the _CONST
 * forms stay constant expressions.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/birdlib.h"

/* Array sizes and static initializers need constant expressions. */
static const int table_of_min[MIN_CONST(3, 5)] = { 1, 2, 3 };
_Static_assert(MAX_CONST(3, 5) == 5, "MAX_CONST is a constant expression");
_Static_assert(sizeof(table_of_min) == 3 * sizeof(int), "MIN_CONST sizes an array");

static uint reads;

/* A value that moves each time it is read, like another thread's counter. */
static u32
moving(u32 *v)
{
  reads++;
  return (*v)++;
}

static void
test_once(void **state)
{
  (void) state;
  u32 v = 10;
  reads = 0;
  /* read twice, the old macro returned 11 (the second read) */
  assert_int_equal(MIN(moving(&v), 20U), 10);
  assert_int_equal(reads, 1);
  assert_int_equal(MAX(5U, moving(&v)), 11);
  assert_int_equal(reads, 2);
  /* nested, and an argument named like the macro's own locals would be */
  int a_1 = 7, b_1 = 4;
  assert_int_equal(MIN(MAX(a_1, b_1), MIN(b_1, a_1)), 4);
  assert_int_equal(MAX(MIN(a_1, 9), MAX(b_1, 2)), 7);
}

static void
test_types(void **state)
{
  (void) state;
  /* the usual conversions of a conditional, as before: -1 compares as
   * UINT_MAX against an unsigned */
  assert_true(MIN(-1, 1U) == 1U);
  assert_true(MAX(-1, 1U) == UINT_MAX);
  u64 big = 1ULL << 40;
  u32 small = 3;
  assert_true(MAX(big, small) == big);
  assert_true(MIN(big, small) == 3);
  assert_int_equal(sizeof(MIN(big, small)), sizeof(u64));
  s64 neg = -5;
  assert_true(MIN(neg, (s64) 2) == -5);
  assert_int_equal(table_of_min[2], 3);
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_once),
    cmocka_unit_test(test_types),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
