/*
 * Unit tests of route sources' slots (nest/rt_src.c): a slot's number
 * leads back to its source across chunks, freed slots are taken again
 * before new ones, and threads making and freeing sources at once each
 * get slots of their own (run under TSan in CI).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include "nest/rt.h"
#include "nest/test_loops.h"

/* More than a chunk, so the second chunk is mapped on the way. */
#define MANY (RT_SRC_CHUNK_SLOTS + 4000)

static void
test_slots_lead_back(void **state)
{
  (void) state;
  assert_null(rt_src_at(0));
  assert_int_equal(rt_src_ix(NULL), 0);

  struct rte_src **s = malloc(MANY * sizeof(*s));
  u32 top = 0;
  for (uint i = 0; i < MANY; i++) {
    s[i] = rt_get_source(NULL, i);
    u32 ix = rt_src_ix(s[i]);
    assert_int_not_equal(ix, 0);
    assert_ptr_equal(rt_src_at(ix), s[i]);
    assert_int_equal(s[i]->private_id, i);
    if (i)
      assert_true(s[i]->global_id > s[i - 1]->global_id);
    top = MAX(top, ix);
  }
  assert_true(top >= RT_SRC_CHUNK_SLOTS);
  for (uint i = 0; i < MANY; i++)
    rt_unlock_source(s[i]);
  rcu_barrier();

  /* All come from the freed slots. */
  for (uint i = 0; i < MANY; i++) {
    s[i] = rt_get_source(NULL, 7);
    assert_true(rt_src_ix(s[i]) <= top);
    assert_ptr_equal(rt_src_at(rt_src_ix(s[i])), s[i]);
  }
  for (uint i = 0; i < MANY; i++)
    rt_unlock_source(s[i]);
  rcu_barrier();
  free(s);
}

#define THREADS 4
#define ROUNDS 20000

static uint thread_errors;    /* atomic: cmocka asserts only in its thread */

static void *
slots_thread(void *arg)
{
  u64 me = (uintptr_t) arg;
  struct rte_src *held[16] = { 0 };
  rcu_thread_register();
  for (uint i = 0; i < ROUNDS; i++) {
    uint k = i % 16;
    if (held[k]) {
      /* nobody else got this slot while it was ours */
      if (held[k]->private_id != me || rt_src_at(rt_src_ix(held[k])) != held[k])
        uatomic_inc(&thread_errors);
      rt_unlock_source(held[k]);
    }
    held[k] = rt_get_source(NULL, me);
  }
  for (uint k = 0; k < 16; k++)
    rt_unlock_source(held[k]);
  rcu_thread_unregister();
  return NULL;
}

static void
test_threads_own_their_slots(void **state)
{
  (void) state;
  pthread_t th[THREADS];
  for (uintptr_t i = 0; i < THREADS; i++)
    pthread_create(&th[i], NULL, slots_thread, (void *) (i + 100));
  for (uint i = 0; i < THREADS; i++)
    pthread_join(th[i], NULL);
  rcu_barrier();
  assert_int_equal(uatomic_read(&thread_errors), 0);
}

static const struct CMUnitTest tests[] = {
  cmocka_unit_test(test_slots_lead_back),
  cmocka_unit_test(test_threads_own_their_slots),
};

int
main(void)
{
  return test_run_with_loops("rt_src_test", tests, NULL);
}
