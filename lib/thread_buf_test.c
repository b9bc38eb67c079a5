/*
 * Unit tests for lib/thread_buf.c: per-thread buffers, their growth,
 * their accounting and their release when a thread leaves RCU.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <cmocka.h>

#include "lib/thread_buf.h"
#include "lib/rcu.h"

THREAD_BUF(tb_a, MEM_PROTOCOLS);
THREAD_BUF(tb_b, MEM_PROTOCOLS);

static size_t
protocols_now(void)
{
  struct mem_usage u;
  mem_class_usage(MEM_PROTOCOLS, &u);
  return u.effective;
}

static void
test_grow_and_keep(void **state UNUSED)
{
  size_t base = protocols_now();
  u8 *p = thread_buf_get(&tb_a, 100);
  assert_non_null(p);
  memset(p, 0xab, 100);
  /* no larger than it is: the same memory, contents kept */
  assert_ptr_equal(thread_buf_get(&tb_a, 50), p);
  assert_ptr_equal(thread_buf_get(&tb_a, 100), p);
  assert_int_equal(p[99], 0xab);
  assert_int_equal(protocols_now() - base, 100);
  u8 *q = thread_buf_get(&tb_a, 70000);
  memset(q, 0, 70000);
  assert_int_equal(protocols_now() - base, 70000);
  assert_non_null(thread_buf_get(&tb_b, 10));
  assert_int_equal(protocols_now() - base, 70010);
  thread_buf_release_all();
  assert_int_equal(protocols_now(), base);
  /* usable again after a release */
  assert_non_null(thread_buf_get(&tb_a, 10));
  thread_buf_release_all();
  assert_int_equal(protocols_now(), base);
}

struct helper {
  u8 *mine;
  pthread_barrier_t *bar;
};

static void *
helper_main(void *arg)
{
  struct helper *h = arg;
  rcu_thread_register();
  h->mine = thread_buf_get(&tb_a, 4096);
  memset(h->mine, 1, 4096);
  pthread_barrier_wait(h->bar);       /* both hold theirs at once */
  pthread_barrier_wait(h->bar);       /* the main thread has looked */
  rcu_thread_unregister();            /* gives it back */
  return NULL;
}

static void
test_threads_own_theirs(void **state UNUSED)
{
  size_t base = protocols_now();
  pthread_barrier_t bar;
  pthread_barrier_init(&bar, NULL, 3);
  struct helper h[2] = { { .bar = &bar }, { .bar = &bar } };
  pthread_t th[2];
  for (int i = 0; i < 2; i++)
    assert_int_equal(pthread_create(&th[i], NULL, helper_main, &h[i]), 0);
  pthread_barrier_wait(&bar);
  assert_ptr_not_equal(h[0].mine, h[1].mine);
  assert_int_equal(protocols_now() - base, 2 * 4096);
  /* the main thread's own is not theirs and is made apart */
  assert_null(tb_a.mem);
  pthread_barrier_wait(&bar);
  for (int i = 0; i < 2; i++)
    pthread_join(th[i], NULL);
  assert_int_equal(protocols_now(), base);
  pthread_barrier_destroy(&bar);
}

int
main(void)
{
  resource_init();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_grow_and_keep),
    cmocka_unit_test(test_threads_own_theirs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
