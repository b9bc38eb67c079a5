/*
 * Unit tests of code that needs loops (tables, channels): cmocka runs in a
 * thread of its own, registered with RCU, while the main thread runs the
 * main loop, as in the daemon. Test programs only; include after cmocka.h.
 */
#ifndef NEST_TEST_LOOPS_H
#define NEST_TEST_LOOPS_H

#include <pthread.h>
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

static inline void *
test_loops_thread(void *arg)
{
  struct test_loops_run *r = arg;
  rcu_thread_register();
  if (r->setup)
    r->setup();
  r->result = _cmocka_run_group_tests(r->name, r->tests, r->count, NULL, NULL);
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
