/*
 * Unit tests of attribute interning (nest/rt_attr.c): equal lists are
 * one, and threads that intern and drop the same few lists at once (so
 * that last references race with lookups of the same list) always get a
 * list equal to what they asked for, and leave nothing behind. Run under
 * TSan in CI.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "nest/rt_attr.h"
#include "nest/test_attrs.h"

static void
test_equal_lists_are_one(void **state)
{
  (void) state;
  rcu_thread_register();
  u64 before = ea_count();
  struct ea_list *a = attrs_pref(100, 1), *b = attrs_pref(100, 1), *c = attrs_pref(100, 2), *d = attrs_pref(101, 1);
  assert_ptr_equal(a, b);
  assert_ptr_not_equal(a, c);
  assert_ptr_not_equal(a, d);
  assert_int_equal(ea_count(), before + 3);
  ea_unref(a);
  ea_unref(b);
  ea_unref(c);
  ea_unref(d);
  assert_int_equal(ea_count(), before);
  /* Many lists: the hash grows, and shrinks again as they go. */
  enum { MANY = 50000 };
  static struct ea_list *v[MANY];
  for (u32 i = 0; i < MANY; i++)
    v[i] = attrs_pref(7, 1000 + i);
  for (u32 i = 0; i < MANY; i++) {
    struct ea_list *again = attrs_pref(7, 1000 + i);
    assert_ptr_equal(again, v[i]);
    ea_unref(again);
  }
  assert_int_equal(ea_count(), before + MANY);
  for (u32 i = 0; i < MANY; i++)
    ea_unref(v[i]);
  assert_int_equal(ea_count(), before);
  rcu_thread_unregister();
}

#define THREADS 4
#define ROUNDS 40000
#define KINDS 8               /* few lists: last references race with lookups */

static u32 wrong;

static void *
churn(void *arg)
{
  uintptr_t seed = (uintptr_t) arg;
  rcu_thread_register();
  u32 bad = 0;
  for (u32 i = 0; i < ROUNDS; i++) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    u32 k = (u32) (seed >> 40) % KINDS;
    struct ea_list *l = attrs_pref(50, k);
    const struct eattr *e = ea_find(l, EA_CODE(1, 1));
    bad += !e || e->val != k || l->preference != 50;
    ea_unref(l);
  }
  __atomic_add_fetch(&wrong, bad, __ATOMIC_SEQ_CST);
  rcu_thread_unregister();
  return NULL;
}

static void
test_racing_last_references(void **state)
{
  (void) state;
  rcu_thread_register();
  u64 before = ea_count();
  pthread_t th[THREADS];
  for (uintptr_t i = 0; i < THREADS; i++)
    pthread_create(&th[i], NULL, churn, (void *) (i + 1));
  for (int i = 0; i < THREADS; i++)
    pthread_join(th[i], NULL);
  assert_int_equal(wrong, 0);
  assert_int_equal(ea_count(), before);
  rcu_barrier();
  rcu_thread_unregister();
}

int
main(void)
{
  ea_init();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_equal_lists_are_one),
    cmocka_unit_test(test_racing_last_references),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
