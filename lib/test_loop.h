/*
 * Helpers of the unit tests of lib/loop.c and lib/sched.c (lib/loop_test.c,
 * lib/loop_fd_test.c). Hooks run on scheduler threads, where cmocka cannot
 * fail a test, so they count violations and the test thread asserts on the
 * counters; completion is awaited with a generous timeout. Test programs
 * only; include after cmocka.h.
 */
#ifndef LIB_TEST_LOOP_H
#define LIB_TEST_LOOP_H

#include <string.h>
#include <unistd.h>

#include "lib/loop.h"
#include "lib/log.h"
#include "lib/timeutil.h"

#define WAIT_S 20

/* Poll for a condition; fail the test if it does not come true in time. */
#define WAIT_FOR(cond) \
  do { \
    btime wait_end_ = time_mono_now() + WAIT_S * (btime) TO_S; \
    while (!(cond)) \
    { \
      if (time_mono_now() > wait_end_) \
        fail_msg("Timed out waiting for %s", #cond); \
      usleep(100); \
    } \
  } while (0)

static inline int aload(int *p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
static inline void astore(int *p, int v) { __atomic_store_n(p, v, __ATOMIC_SEQ_CST); }
static inline int ainc(int *p) { return __atomic_fetch_add(p, 1, __ATOMIC_SEQ_CST); }
static inline int adec(int *p) { return __atomic_fetch_sub(p, 1, __ATOMIC_SEQ_CST); }

/* Wait (spinning) in a hook until *flag is set; returns 0 on timeout. */
static inline int
hook_wait(int *flag)
{
  btime end = time_mono_now() + WAIT_S * (btime) TO_S;
  while (!aload(flag))
    if (time_mono_now() > end)
      return 0;
  return 1;
}

/* Stop loops from the main loop and free their scheduler. */
static int stops_left;

static inline void
stop_done(void *data)
{
  ASSERT_DIE(loop_current() == main_loop());
  if (!--stops_left)
    loop_main_quit();
}

static inline void
stop_all(struct sched *s, struct loop **loops, int n)
{
  struct event done[n];
  memset(done, 0, sizeof(done));   /* ev_init() checks that it is not queued */
  stops_left = n;
  for (int i = 0; i < n; i++)
  {
    ev_init(&done[i], stop_done, NULL);
    loop_stop(loops[i], &done[i]);
  }
  sched_main_run();
  assert_int_equal(stops_left, 0);
  if (s)
    sched_free(s);
}

static inline void noop(void *data) {}

/* Each test's setup: a hang is a failure, not a stuck CI job. */
static inline int
setup_test(void **state)
{
  alarm(120);
  return 0;
}

#endif
