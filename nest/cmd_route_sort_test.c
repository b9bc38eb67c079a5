/*
 * Unit tests of a sorted table's listing order in steps (nest/cmd_route_sort.c):
 * random nets of both families, sorted in runs of several lengths, must
 * come out as one sort of them all, each step sorting one run at most.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "nest/cmd_route_sort.h"

/* Random nets, some nested and some equal but for the length. */
static void
rand_net(net_addr *n, int v6)
{
  uint len = random() % (v6 ? 129 : 33);
  /* the host bits cleared, as in a table */
  if (v6)
    net_fill_ip6(n, ip6_and(ip6_build(0x20010db8, random() & 0xff, random(), random()), ip6_mkmask(len)), len);
  else
    net_fill_ip4(n, ip4_and(ip4_from_u32(0x0a000000 | (random() & 0xffff00)), ip4_mkmask(len)), len);
}

static int
cmp(const void *x, const void *y)
{
  return net_compare(x, y);
}

static void
check_order(int v6, size_t count, size_t run)
{
  size_t stride = net_addr_length[v6 ? NET_IP6 : NET_IP4];
  char *all = calloc(count + 1, stride);
  struct sr_sort s;
  sr_sort_init(&s, stride, run);
  for (size_t i = 0; i < count; i++) {
    net_addr *n = (net_addr *) (all + i * stride);
    rand_net(n, v6);
    sr_sort_add(&s, n);
  }
  qsort(all, count, stride, cmp);

  /* a run a step, then the step that starts the merge */
  size_t steps = 1;
  while (!sr_sort_step(&s))
    steps++;
  assert_int_equal(steps, (count + run - 1) / run + 1);
  assert_int_equal(sr_sort_step(&s), 1);

  for (size_t i = 0; i < count; i++) {
    const net_addr *n = sr_sort_next(&s);
    assert_non_null(n);
    assert_true(net_equal(n, (net_addr *) (all + i * stride)));
  }
  assert_null(sr_sort_next(&s));
  assert_null(sr_sort_next(&s));
  sr_sort_free(&s);
  free(all);
}

static void
test_orders(void **state)
{
  (void) state;
  srandom(7);
  static const size_t counts[] = { 0, 1, 2, 5, 100, 4097, 30000 };
  static const size_t runs[] = { 1, 3, 64, 4096 };
  for (int v6 = 0; v6 < 2; v6++)
    for (uint c = 0; c < sizeof(counts) / sizeof(counts[0]); c++)
      for (uint r = 0; r < sizeof(runs) / sizeof(runs[0]); r++)
        if (counts[c] / runs[r] <= 10000)  /* the heap's pops are what counts, not 30000 runs of one */
          check_order(v6, counts[c], runs[r]);
}

/* A listing given up before its merge frees what it gathered. */
static void
test_free_early(void **state)
{
  (void) state;
  struct sr_sort s;
  sr_sort_init(&s, net_addr_length[NET_IP4], 16);
  net_addr n;
  for (int i = 0; i < 100; i++) {
    rand_net(&n, 0);
    sr_sort_add(&s, &n);
  }
  assert_int_equal(sr_sort_step(&s), 0);
  sr_sort_free(&s);
  sr_sort_free(&s);
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_orders),
    cmocka_unit_test(test_free_early),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
