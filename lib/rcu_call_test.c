/*
 * Unit tests for lib/rcu_call.c: a callback waits for every read section
 * that began before it was given, callbacks from one thread run in the
 * order given, rcu_barrier() waits for all given before it, callbacks may
 * give more, and frees from many threads at once each run exactly once.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/rcu.h"

struct cb {
  struct rcu_head rcu;
  int *ran;                   /* atomic: set by the callback */
  int order;
  int *log, *log_len;         /* the thread's: callbacks run one at a time */
};

static void
cb_run(struct rcu_head *h)
{
  struct cb *c = caa_container_of(h, struct cb, rcu);
  if (c->log)
    c->log[(*c->log_len)++] = c->order;
  __atomic_add_fetch(c->ran, 1, __ATOMIC_RELEASE);
}

static void
sleep_ms(int ms)
{
  struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
  nanosleep(&ts, NULL);
}

/* A reader that holds its read section until told to leave. */
struct reader {
  pthread_t t;
  int entered, leave;         /* atomic */
};

static void *
reader_main(void *arg)
{
  struct reader *r = arg;
  rcu_thread_register();
  rcu_read_lock();
  __atomic_store_n(&r->entered, 1, __ATOMIC_RELEASE);
  while (!__atomic_load_n(&r->leave, __ATOMIC_ACQUIRE))
    sleep_ms(1);
  rcu_read_unlock();
  rcu_thread_unregister();
  return NULL;
}

static void
test_waits_for_earlier_reader(void **state)
{
  (void) state;
  rcu_thread_register();
  struct reader r = { 0 };
  assert_int_equal(pthread_create(&r.t, NULL, reader_main, &r), 0);
  while (!__atomic_load_n(&r.entered, __ATOMIC_ACQUIRE))
    sleep_ms(1);
  int ran = 0;
  struct cb c = { .ran = &ran };
  rcu_call(&c.rcu, cb_run);
  /* Far longer than the thread's pause: only the reader holds it back. */
  sleep_ms(50);
  assert_int_equal(__atomic_load_n(&ran, __ATOMIC_ACQUIRE), 0);
  __atomic_store_n(&r.leave, 1, __ATOMIC_RELEASE);
  pthread_join(r.t, NULL);
  rcu_barrier();
  assert_int_equal(ran, 1);
}

static void
test_order_and_barrier(void **state)
{
  (void) state;
  enum { N = 5000 };
  struct cb *cbs = calloc(N, sizeof(*cbs));
  int *log = calloc(N, sizeof(*log));
  int log_len = 0, ran = 0;
  for (int i = 0; i < N; i++) {
    cbs[i] = (struct cb) { .ran = &ran, .order = i, .log = log, .log_len = &log_len };
    rcu_call(&cbs[i].rcu, cb_run);
    if (i % 700 == 0)
      sleep_ms(1);            /* spread over several batches */
  }
  rcu_barrier();
  assert_int_equal(ran, N);
  assert_int_equal(log_len, N);
  for (int i = 0; i < N; i++)
    assert_int_equal(log[i], i);
  free(cbs);
  free(log);
}

/* A callback that gives another, a few levels deep. */
struct chain {
  struct rcu_head rcu;
  int left;
  int *ran;
};

static void
chain_run(struct rcu_head *h)
{
  struct chain *c = caa_container_of(h, struct chain, rcu);
  __atomic_add_fetch(c->ran, 1, __ATOMIC_RELEASE);
  if (c->left-- > 0)
    rcu_call(&c->rcu, chain_run);
}

static void
test_callback_gives_more(void **state)
{
  (void) state;
  int ran = 0;
  struct chain c = { .left = 3, .ran = &ran };
  rcu_call(&c.rcu, chain_run);
  /* A barrier waits for what was given before it, not for what those
   * give: one per level. */
  for (int i = 0; i < 4; i++)
    rcu_barrier();
  assert_int_equal(ran, 4);
}

enum { PRODUCERS = 6, PER_PRODUCER = 20000 };

struct producer {
  pthread_t t;
  struct cb *cbs;
  int *ran;
};

static void *
producer_main(void *arg)
{
  struct producer *p = arg;
  rcu_thread_register();
  for (int i = 0; i < PER_PRODUCER; i++) {
    p->cbs[i] = (struct cb) { .ran = &p->ran[i] };
    if (i % 3 == 0)
      rcu_read_lock();        /* a free from inside a read section too */
    rcu_call(&p->cbs[i].rcu, cb_run);
    if (i % 3 == 0)
      rcu_read_unlock();
  }
  rcu_thread_unregister();
  return NULL;
}

static void
test_many_producers(void **state)
{
  (void) state;
  struct producer p[PRODUCERS];
  for (int k = 0; k < PRODUCERS; k++) {
    p[k].cbs = calloc(PER_PRODUCER, sizeof(struct cb));
    p[k].ran = calloc(PER_PRODUCER, sizeof(int));
    assert_int_equal(pthread_create(&p[k].t, NULL, producer_main, &p[k]), 0);
  }
  for (int k = 0; k < PRODUCERS; k++)
    pthread_join(p[k].t, NULL);
  rcu_barrier();
  for (int k = 0; k < PRODUCERS; k++) {
    for (int i = 0; i < PER_PRODUCER; i++)
      assert_int_equal(p[k].ran[i], 1);
    free(p[k].cbs);
    free(p[k].ran);
  }
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_waits_for_earlier_reader),
    cmocka_unit_test(test_order_and_barrier),
    cmocka_unit_test(test_callback_gives_more),
    cmocka_unit_test(test_many_producers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
