/*
 * Unit tests for lib/par.c: every chunk runs once, helpers take some,
 * jobs of several callers at once (more than the board's slots) keep
 * their chunks apart, and the helpers stop so that the scheduler can go.
 * Chunks run on scheduler threads, where cmocka cannot fail a test: they
 * record what happened and the test thread asserts on it.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <pthread.h>
#include <unistd.h>

#include "lib/par.h"
#include "lib/log.h"

#define CHUNKS 400

struct job {
  struct par *par;
  uint chunks;
  u32 runs[CHUNKS];             /* atomic: how often each chunk ran */
  pthread_t by[CHUNKS];         /* the thread that ran it */
  uint sleep_us;
  int tmp_dirty;                /* atomic: a chunk found its scratch used */
  linpool *tmp;                 /* the caller's scratch */
};

static void
job_chunk(void *ctx, uint chunk, linpool *tmp)
{
  struct job *j = ctx;
  if (lp_used(tmp))
    __atomic_store_n(&j->tmp_dirty, 1, __ATOMIC_RELAXED);
  lp_alloc(tmp, 64);            /* par_run flushes it after each chunk */
  __atomic_add_fetch(&j->runs[chunk], 1, __ATOMIC_RELAXED);
  j->by[chunk] = pthread_self();
  if (j->sleep_us)
    usleep(j->sleep_us);
}

static void
job_run(void *data)
{
  struct job *j = data;
  par_run(j->par, j->chunks, job_chunk, j, j->tmp);
}

static void noop(void *data UNUSED) {}

static void
job_check(const struct job *j)
{
  for (uint i = 0; i < j->chunks; i++)
    assert_int_equal(j->runs[i], 1);
  assert_int_equal(j->tmp_dirty, 0);
}

static uint
job_threads(const struct job *j)
{
  uint n = 0;
  for (uint i = 0; i < j->chunks; i++) {
    bool seen = false;
    for (uint k = 0; k < i && !seen; k++)
      seen = pthread_equal(j->by[k], j->by[i]);
    n += !seen;
  }
  return n;
}

static uint stops_left;          /* main loop */

static void
stop_done(void *data UNUSED)
{
  if (!--stops_left)
    loop_main_quit();
}

/* Stop p's helpers and the callers' loops and wait until they are gone;
 * then s may go too (sched_free() fails with a loop left). */
static void
stop_all(struct par *p, struct sched *s, struct loop **loops, uint n)
{
  struct event done[n + 1];
  memset(done, 0, sizeof(done));   /* ev_init() checks that it is not queued */
  stops_left = n + 1;
  ev_init(&done[n], stop_done, NULL);
  par_stop(p, &done[n]);
  for (uint i = 0; i < n; i++) {
    ev_init(&done[i], stop_done, NULL);
    loop_stop(loops[i], &done[i]);
  }
  sched_main_run();
  assert_int_equal(stops_left, 0);
  sched_free(s);
}

static void
job_init(struct job *j, struct par *p, uint chunks)
{
  memset(j, 0, sizeof(*j));
  j->par = p;
  j->chunks = chunks;
  j->tmp = lp_new(root_pool());
}

static void
job_done(struct job *j)
{
  job_check(j);
  rfree(j->tmp);
}

/* Without helpers the caller runs every chunk, in order. */
static void
test_no_helpers(void **state UNUSED)
{
  static struct job j;
  job_init(&j, NULL, CHUNKS);
  job_run(&j);
  assert_int_equal(job_threads(&j), 1);
  job_done(&j);
  assert_int_equal(par_width(NULL), 1);
}

/* Chunks that sleep: the idle threads' helpers take some of them. */
static void
test_helpers_take_chunks(void **state UNUSED)
{
  struct sched *s = sched_new("par", 4);
  struct par *p = par_new(s);
  par_helpers(p, 3);
  assert_int_equal(par_width(p), 4);
  struct loop *l = loop_new(s, "caller");
  static struct job j;
  job_init(&j, p, 64);
  j.sleep_us = 1000;
  loop_call_sync(l, job_run, &j);
  assert_true(job_threads(&j) > 1);
  job_done(&j);
  stop_all(p, s, &l, 1);
}

/* Twelve callers at once on a board of eight slots: some run alone, the
 * others share the helpers; every job gets its own chunks, each once. */
#define CALLERS 12
static void
test_many_callers(void **state UNUSED)
{
  struct sched *s = sched_new("par", 4);
  struct par *p = par_new(s);
  par_helpers(p, 3);
  struct loop *l[CALLERS];
  static struct job j[CALLERS];
  for (uint round = 0; round < 20; round++) {
    for (uint i = 0; i < CALLERS; i++) {
      if (!round)
        l[i] = loop_new(s, "caller");
      job_init(&j[i], p, 1 + (i * 37 + round * 11) % CHUNKS);
    }
    struct event ev[CALLERS] = { 0 };
    for (uint i = 0; i < CALLERS; i++) {
      ev_init(&ev[i], job_run, &j[i]);
      ev_send(l[i], &ev[i]);
    }
    /* a loop runs its events in order: the job's ran before the noop */
    for (uint i = 0; i < CALLERS; i++)
      loop_call_sync(l[i], noop, NULL);
    for (uint i = 0; i < CALLERS; i++)
      job_done(&j[i]);
  }
  stop_all(p, s, l, CALLERS);
}

/* Fewer threads later: par_helpers() lowers the width, helpers stay. */
static void
test_width_follows(void **state UNUSED)
{
  struct sched *s = sched_new("par", 2);
  struct par *p = par_new(s);
  par_helpers(p, 5);
  assert_int_equal(par_width(p), 6);
  par_helpers(p, 1);
  assert_int_equal(par_width(p), 2);
  par_helpers(p, 0);
  assert_int_equal(par_width(p), 1);
  struct loop *l = loop_new(s, "caller");
  static struct job j;
  job_init(&j, p, 100);
  loop_call_sync(l, job_run, &j);
  assert_int_equal(job_threads(&j), 1);
  job_done(&j);
  stop_all(p, s, &l, 1);
}

static int
setup_test(void **state UNUSED)
{
  alarm(120);                   /* a hang is a failure, not a stuck CI job */
  return 0;
}

int
main(void)
{
  log_init("par_test");
  resource_init();
  sched_main_init();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup(test_no_helpers, setup_test),
    cmocka_unit_test_setup(test_helpers_take_chunks, setup_test),
    cmocka_unit_test_setup(test_many_callers, setup_test),
    cmocka_unit_test_setup(test_width_follows, setup_test),
  };
  int rv = cmocka_run_group_tests(tests, NULL, NULL);
  rcu_barrier();
  return rv;
}
