/*
 * Unit tests for lib/wlock.h: mutual exclusion under contention, the
 * sleepers' path (a holder that keeps the lock past the spin), and the
 * word's own cache line.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <cmocka.h>

#include "lib/wlock.h"

enum { THREADS = 8, ROUNDS = 200000 };

static struct wlock lock;
/* Updated under the lock only, with plain reads and writes: a lost
 * increment shows a section two threads were in at once. */
static u64 counter;
static u32 inside;

static void *
hammer(void *arg)
{
  (void) arg;
  for (uint i = 0; i < ROUNDS; i++) {
    wlock_take(&lock);
    if (__atomic_fetch_add(&inside, 1, __ATOMIC_RELAXED))
      abort();
    counter = counter + 1;
    __atomic_fetch_sub(&inside, 1, __ATOMIC_RELAXED);
    wlock_give(&lock);
  }
  return NULL;
}

static void
test_no_two_inside(void **state)
{
  (void) state;
  pthread_t th[THREADS];
  wlock_init(&lock);
  counter = 0;
  for (uint i = 0; i < THREADS; i++)
    assert_int_equal(pthread_create(&th[i], NULL, hammer, NULL), 0);
  for (uint i = 0; i < THREADS; i++)
    pthread_join(th[i], NULL);
  assert_int_equal(counter, (u64) THREADS * ROUNDS);
  assert_int_equal(lock.state, 0);
}

/* Holders that keep the lock 2 ms each, far past the spin: the others go
 * to sleep, and each give must wake one of them, or the test hangs. */
static void *
slow_holder(void *arg)
{
  (void) arg;
  for (uint i = 0; i < 20; i++) {
    wlock_take(&lock);
    counter = counter + 1;
    nanosleep(&(struct timespec){ .tv_nsec = 2000000 }, NULL);
    wlock_give(&lock);
  }
  return NULL;
}

static void
test_sleepers_are_woken(void **state)
{
  (void) state;
  pthread_t th[4];
  wlock_init(&lock);
  counter = 0;
  for (uint i = 0; i < 4; i++)
    assert_int_equal(pthread_create(&th[i], NULL, slow_holder, NULL), 0);
  for (uint i = 0; i < 4; i++)
    pthread_join(th[i], NULL);
  assert_int_equal(counter, 80);
  assert_int_equal(lock.state, 0);
  assert_true(wlock_try(&lock));
  assert_false(wlock_try(&lock));
  wlock_give(&lock);
}

static void
test_word_has_its_own_line(void **state)
{
  (void) state;
  struct { u64 before; struct wlock l; u64 after; } s;
  uintptr_t w = (uintptr_t) &s.l.state;
  assert_true(w - (uintptr_t) &s.before >= 64);
  assert_true((uintptr_t) &s.after - w >= 64);
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_no_two_inside),
    cmocka_unit_test(test_sleepers_are_woken),
    cmocka_unit_test(test_word_has_its_own_line),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
