/*
 * Unit tests of code that needs loops (tables, channels): cmocka runs in a
 * thread of its own while the main thread runs the main loop, as in the
 * daemon. Test programs only.
 */
#ifndef NEST_TEST_LOOPS_H
#define NEST_TEST_LOOPS_H

#include <pthread.h>
#include <stdint.h>
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/resource.h"
#include "nest/rt_attr.h"

/* body runs the tests, calls loop_main_quit() and returns its exit status
 * cast to a pointer. */
static inline int
test_run_with_loops(const char *name, void *(*body)(void *))
{
  resource_init();
  log_init(name);
  hash_seed_init();
  ea_init();
  sched_main_init();
  pthread_t th;
  void *res = NULL;
  pthread_create(&th, NULL, body, NULL);
  sched_main_run();
  pthread_join(th, &res);
  return (int) (intptr_t) res;
}

#endif
