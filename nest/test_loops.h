/*
 * Unit tests of code that needs loops (tables, channels): cmocka runs in a
 * thread of its own, registered with RCU, while the main thread runs the
 * main loop, as in the daemon. Test programs only; include after cmocka.h.
 */
#ifndef NEST_TEST_LOOPS_H
#define NEST_TEST_LOOPS_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/rcu.h"
#include "lib/resource.h"
#include "nest/rt.h"
#include "nest/rt_attr.h"

struct test_loops_run {
  const char *name;
  const struct CMUnitTest *tests;
  size_t count;
  void (*setup)(void);        /* in the test thread first, may be NULL */
  int result;
};

/* After each test: a test that failed inside a table's writer lock (an
 * assertion in a hook the table calls under it; cmocka leaves the test
 * by a long jump) left the lock held, and the next test to write there
 * would wait for it for ever, make check with it. The run stops here
 * instead, the assertion's report above. Another thread may hold the
 * lock for a moment (the table loop's cleanup): only a lock held for
 * seconds on end is taken for a left one. The tables are the main loop's
 * to list. */
static inline void
test_loops_tables_unlocked_(void *data)
{
  (void) data;
  LIST_WALK_ENTRY(t, rt_tables(), struct rtable, n)
    for (uint ms = 0; wlock_held(&t->lock); ms++) {
      if (ms == 5000) {
        fprintf(stderr, "table %s: the test that just ended left its writer lock held; the tests after it would "
                        "wait for it, stopping\n", t->name);
        fflush(NULL);
        _exit(1);
      }
      usleep(1000);
    }
}

static inline int
test_loops_tables_unlocked(void **state)
{
  (void) state;
  loop_call_sync(main_loop(), test_loops_tables_unlocked_, NULL);
  return 0;
}

static inline void *
test_loops_thread(void *arg)
{
  struct test_loops_run *r = arg;
  rcu_thread_register();
  if (r->setup)
    r->setup();
  struct CMUnitTest *tests = malloc(r->count * sizeof(*tests));
  memcpy(tests, r->tests, r->count * sizeof(*tests));
  for (size_t i = 0; i < r->count; i++)
    if (!tests[i].teardown_func)
      tests[i].teardown_func = test_loops_tables_unlocked;
  r->result = _cmocka_run_group_tests(r->name, tests, r->count, NULL, NULL);
  free(tests);
  rcu_thread_unregister();
  loop_main_quit();
  return NULL;
}

static inline int
test_run_with_loops_(struct test_loops_run *r)
{
  resource_init();
  log_init(r->name);
  hash_seed_init();
  ea_init();
  sched_main_init();
  pthread_t th;
  pthread_create(&th, NULL, test_loops_thread, r);
  sched_main_run();
  pthread_join(th, NULL);
  return r->result;
}

/* Aux tables are the main loop's, as their resources are (rt.h): a test
 * makes and frees them there, not in its own thread, where they would
 * meet whatever that loop does meanwhile (a previous test's table going,
 * say). */
struct test_aux_table {
  const char *name;
  uint net_type;
  struct rtable *t;
};

static inline void
test_aux_table_new_(void *data)
{
  struct test_aux_table *a = data;
  a->t = rt_aux_table_new(a->name, a->net_type);
}

static inline struct rtable *
test_aux_table_new(const char *name, uint net_type)
{
  struct test_aux_table a = { name, net_type, NULL };
  loop_call_sync(main_loop(), test_aux_table_new_, &a);
  return a.t;
}

static inline void test_aux_table_free_(void *t) { rt_aux_table_free(t); }
static inline void test_aux_table_free(struct rtable *t) { loop_call_sync(main_loop(), test_aux_table_free_, t); }

/* The exit status of main(): run the array `tests` in a loop-aware process. */
#define test_run_with_loops(name, tests, setup) \
  test_run_with_loops_(&(struct test_loops_run){ (name), (tests), sizeof(tests) / sizeof((tests)[0]), (setup), 0 })

#endif
