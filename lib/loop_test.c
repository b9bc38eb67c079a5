/*
 * Unit tests for lib/loop.c and lib/sched.c: timers, events, exclusion,
 * thread pools, yielding and stopping (fds: lib/loop_fd_test.c). Nothing
 * asserts on elapsed time except "not early".
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/test_loop.h"

/*
 * Timers
 */

struct ttimer {
  struct timer t;
  int id;
  btime deadline;           /* not before this */
  struct tstate *st;
};

struct tstate {
  struct ttimer tt[10];
  int order[64];
  int n;                    /* owner: the loop */
  int expect;
  int done;                 /* atomic */
  int early;                /* fired before its deadline */
  int bad;                  /* other broken expectations inside the loop */
  int recurrent_stop_at;
};

static void
tt_hook(struct timer *t)
{
  struct ttimer *x = container_of(t, struct ttimer, t);
  struct tstate *st = x->st;
  if (time_mono_now() < x->deadline)
    st->early++;
  st->order[st->n++] = x->id;
  if (st->n == st->expect)
    astore(&st->done, 1);
}

static void
tt_setup(struct tstate *st, int id, struct loop *l, void (*hook)(struct timer *))
{
  struct ttimer *x = &st->tt[id];
  x->id = id;
  x->st = st;
  tm_init(&x->t, l, hook, NULL);
}

static void
tt_start(struct tstate *st, int id, btime after)
{
  struct ttimer *x = &st->tt[id];
  btime before = time_mono_now();
  tm_start(&x->t, after);
  x->deadline = before + after;
  if (x->t.expires < x->deadline)
    st->early++;
}

static void
timers_order_start(void *data)
{
  struct tstate *st = data;
  struct loop *l = loop_current();
  for (int i = 0; i < 8; i++)
    tt_setup(st, i, l, tt_hook);

  tt_start(st, 0, MS_ 30);
  tt_start(st, 1, MS_ 10);
  tt_start(st, 2, MS_ 20);
  tt_start(st, 3, 0);
  tt_start(st, 4, MS_ 10);

  /* Equal expiry: start order 6, 5, 7 */
  btime when = time_mono_now() + MS_ 15;
  int same[] = { 6, 5, 7 };
  for (int i = 0; i < 3; i++)
  {
    st->tt[same[i]].deadline = when;
    tm_set(&st->tt[same[i]].t, when);
  }
  /* Restarting moves a timer: 2 goes after 0 */
  tt_start(st, 2, MS_ 40);
  st->expect = 8;
}

static void
test_timers_order(void **state)
{
  struct sched *s = sched_new("timers", 1);
  struct loop *l = loop_new(s, "timers");
  struct tstate st = { 0 };

  loop_call_sync(l, timers_order_start, &st);
  WAIT_FOR(aload(&st.done));

  int expect[] = { 3, 1, 4, 6, 5, 7, 0, 2 };
  assert_int_equal(st.n, 8);
  assert_memory_equal(st.order, expect, sizeof(expect));
  assert_int_equal(st.early, 0);
  for (int i = 0; i < 8; i++)
    assert_false(tm_active(&st.tt[i].t));

  stop_all(s, &l, 1);
}

static void
timers_stop_kill(struct timer *t)
{
  struct tstate *st = t->data;
  tm_stop(&st->tt[2].t);
  tt_hook(t);
}

static void
timers_stop_start(void *data)
{
  struct tstate *st = data;
  struct loop *l = loop_current();
  for (int i = 0; i < 4; i++)
    tt_setup(st, i, l, tt_hook);
  st->tt[1].t.hook = timers_stop_kill;
  st->tt[1].t.data = st;

  tt_start(st, 0, MS_ 10);    /* stopped at once */
  tt_start(st, 1, MS_ 5);     /* stops 2 */
  tt_start(st, 2, MS_ 10);
  tt_start(st, 3, MS_ 30);    /* the last one */

  btime left = tm_remains(&st->tt[3].t);
  if (!(left > 0 && left <= MS_ 30))
    st->bad++;
  tm_stop(&st->tt[0].t);
  if (tm_active(&st->tt[0].t) || tm_remains(&st->tt[0].t))
    st->bad++;
  tm_stop(&st->tt[0].t);      /* twice is fine */
  st->expect = 2;
}

static void
test_timer_stop(void **state)
{
  struct sched *s = sched_new("tmstop", 1);
  struct loop *l = loop_new(s, "tmstop");
  struct tstate st = { 0 };

  loop_call_sync(l, timers_stop_start, &st);
  WAIT_FOR(aload(&st.done));
  /* 3 fired 20 ms after 0 and 2 were due: had they been queued, they would have fired first */
  assert_int_equal(st.n, 2);
  assert_int_equal(st.order[0], 1);
  assert_int_equal(st.order[1], 3);
  assert_int_equal(st.early, 0);
  assert_int_equal(st.bad, 0);

  stop_all(s, &l, 1);
}

static void
recurrent_hook(struct timer *t)
{
  struct tstate *st = t->data;
  struct ttimer *x = container_of(t, struct ttimer, t);
  if (time_mono_now() < x->deadline)
    st->early++;
  /* Re-armed before the hook, one period later (or later if we are late) */
  if (!tm_active(t) || t->expires < x->deadline + t->recurrent)
    st->early++;
  x->deadline = t->expires;
  st->order[st->n++] = x->id;
  if (st->n == st->recurrent_stop_at)
  {
    tm_stop(t);
    tt_start(st, 1, MS_ 20);
  }
}

static void
recurrent_start(void *data)
{
  struct tstate *st = data;
  struct loop *l = loop_current();
  tt_setup(st, 0, l, recurrent_hook);
  tt_setup(st, 1, l, tt_hook);
  st->tt[0].t.data = st;
  st->tt[0].t.recurrent = MS_ 2;
  st->recurrent_stop_at = 5;
  st->expect = 6;
  tt_start(st, 0, MS_ 2);
}

static void
test_timer_recurrent(void **state)
{
  struct sched *s = sched_new("recur", 1);
  struct loop *l = loop_new(s, "recur");
  struct tstate st = { 0 };

  loop_call_sync(l, recurrent_start, &st);
  WAIT_FOR(aload(&st.done));
  /* Stopped from its own hook after 5 rounds; the 20 ms timer came after */
  assert_int_equal(st.n, 6);
  for (int i = 0; i < 5; i++)
    assert_int_equal(st.order[i], 0);
  assert_int_equal(st.order[5], 1);
  assert_int_equal(st.early, 0);
  assert_false(tm_active(&st.tt[0].t));

  stop_all(s, &l, 1);
}

/* Timers moved later after the run that armed the timerfd for them: the
 * timerfd stays armed for the earlier time and wakes the loop for
 * nothing once; the moved timer fires then at its new time, not before,
 * and the stopped one never. */
static void
later_arm(void *data)
{
  struct tstate *st = data;
  struct loop *l = loop_current();
  tt_setup(st, 0, l, tt_hook);
  tt_setup(st, 1, l, tt_hook);
  tt_start(st, 0, MS_ 10);
  tt_start(st, 1, MS_ 5);
  st->expect = 1;
}

static void
later_move(void *data)
{
  struct tstate *st = data;
  tt_start(st, 0, MS_ 40);
  tm_stop(&st->tt[1].t);
}

static void
test_timer_moved_later(void **state)
{
  struct sched *s = sched_new("tmlater", 1);
  struct loop *l = loop_new(s, "tmlater");
  struct tstate st = { 0 };

  loop_call_sync(l, later_arm, &st);
  usleep(2000);               /* the run that armed it is over */
  loop_call_sync(l, later_move, &st);
  WAIT_FOR(aload(&st.done));
  usleep(30000);              /* past where 1 was due, and 0 first */
  loop_call_sync(l, noop, NULL);
  assert_int_equal(st.n, 1);
  assert_int_equal(st.order[0], 0);
  assert_int_equal(st.early, 0);
  stop_all(s, &l, 1);
}

/* Timers of the main loop set before it runs; loop_tmp() in the main loop. */
static void
main_timer_hook(struct timer *t)
{
  int *fired = t->data;
  char *m = lp_alloc(loop_tmp(), 64);
  memset(m, 1, 64);
  (*fired)++;
  loop_main_quit();
}

static void
test_main_loop_timer(void **state)
{
  int fired = 0;
  struct timer t;
  assert_ptr_equal(loop_current(), main_loop());
  tm_init(&t, main_loop(), main_timer_hook, &fired);
  tm_start(&t, MS_ 5);
  sched_main_run();
  assert_int_equal(fired, 1);
  assert_false(tm_active(&t));
}

/*
 * Events
 */

enum { SENDERS = 4, SENDS = 100000, EVS = 1000 };

struct sev {
  struct event e;
  int sent;                 /* owner: sender thread */
  int runs;                 /* owner: the loop */
};

struct sender {
  pthread_t tid;
  struct loop *l;
  struct sev ev[EVS];
};

static void sev_hook(void *data) { ((struct sev *) data)->runs++; }

static void *
sender_main(void *data)
{
  struct sender *s = data;
  for (int i = 0; i < SENDS; i++)
  {
    struct sev *x = &s->ev[i % EVS];
    x->sent += ev_send(s->l, &x->e);
  }
  return NULL;
}

static void
test_ev_send_many(void **state)
{
  struct sched *s = sched_new("evsend", 2);
  struct loop *l = loop_new(s, "evsend");
  struct sender *snd = calloc(SENDERS, sizeof(*snd));

  for (int t = 0; t < SENDERS; t++)
  {
    snd[t].l = l;
    for (int i = 0; i < EVS; i++)
      ev_init(&snd[t].ev[i].e, sev_hook, &snd[t].ev[i]);
  }
  for (int t = 0; t < SENDERS; t++)
    assert_int_equal(pthread_create(&snd[t].tid, NULL, sender_main, &snd[t]), 0);
  for (int t = 0; t < SENDERS; t++)
    pthread_join(snd[t].tid, NULL);

  /* Queued after every send above: when it runs, they all did */
  loop_call_sync(l, noop, NULL);

  long sent = 0, runs = 0;
  for (int t = 0; t < SENDERS; t++)
    for (int i = 0; i < EVS; i++)
    {
      struct sev *x = &snd[t].ev[i];
      assert_true(x->runs >= 1);
      assert_int_equal(x->runs, x->sent);
      assert_false(ev_active(&x->e));
      sent += x->sent;
      runs += x->runs;
    }
  assert_int_equal(sent, runs);
  assert_true(sent <= (long) SENDERS * SENDS);

  free(snd);
  stop_all(s, &l, 1);
}

struct blocker {
  struct event e;
  int entered, release, timeout;
};

static void
blocker_hook(void *data)
{
  struct blocker *b = data;
  astore(&b->entered, 1);
  if (!hook_wait(&b->release))
    b->timeout = 1;
}

static void
blocker_start(struct blocker *b, struct loop *l)
{
  *b = (struct blocker) { 0 };
  ev_init(&b->e, blocker_hook, b);
  ev_send(l, &b->e);
  WAIT_FOR(aload(&b->entered));
}

static void
test_ev_coalesce(void **state)
{
  struct sched *s = sched_new("coalesce", 2);
  struct loop *l = loop_new(s, "coalesce");
  struct blocker b;
  struct sev x = { 0 };
  ev_init(&x.e, sev_hook, &x);

  blocker_start(&b, l);
  assert_int_equal(ev_send(l, &x.e), 1);
  assert_true(ev_active(&x.e));
  assert_int_equal(ev_send(l, &x.e), 0);
  assert_int_equal(ev_send(l, &x.e), 0);
  astore(&b.release, 1);
  loop_call_sync(l, noop, NULL);
  assert_int_equal(x.runs, 1);
  assert_false(ev_active(&x.e));

  /* Once run, it can be sent again */
  assert_int_equal(ev_send(l, &x.e), 1);
  loop_call_sync(l, noop, NULL);
  assert_int_equal(x.runs, 2);
  assert_int_equal(b.timeout, 0);

  stop_all(s, &l, 1);
}

/* A hook that sends its own event again runs again, in the same loop. */
struct resend {
  struct event e;
  int runs, done, wrong_loop;
  struct loop *l;
};

static void
resend_hook(void *data)
{
  struct resend *r = data;
  if (loop_current() != r->l)
    r->wrong_loop++;
  if (++r->runs < 1000)
    ev_schedule(&r->e);
  else
    astore(&r->done, 1);
}

static void
test_ev_resend(void **state)
{
  struct sched *s = sched_new("resend", 2);
  struct resend r = { .l = loop_new(s, "resend") };
  ev_init(&r.e, resend_hook, &r);
  ev_send(r.l, &r.e);
  WAIT_FOR(aload(&r.done));
  assert_int_equal(r.runs, 1000);
  assert_int_equal(r.wrong_loop, 0);
  stop_all(s, &r.l, 1);
}

/*
 * Exclusion and parallelism
 */

enum { XLOOPS = 8, XEVS = 16, XSENDERS = 4, XROUNDS = 20000 };

struct xloop {
  struct loop *l;
  int inside;               /* atomic */
  int violations;           /* atomic */
  int runs;                 /* owner: the loop */
  struct sev ev[XSENDERS][XEVS];
};

struct xevent_data {
  struct xloop *x;
  struct sev *sev;
};

static struct xloop xl[XLOOPS];
static int x_parallel_max;  /* atomic: most loops seen inside at once */
static int x_parallel_now;  /* atomic */

static void
x_hook(void *data)
{
  struct sev *sev = data;
  struct xloop *x = NULL;
  for (int i = 0; i < XLOOPS && !x; i++)
    if ((char *) sev >= (char *) xl[i].ev && (char *) sev < (char *) (xl[i].ev + XSENDERS))
      x = &xl[i];
  ASSERT_DIE(x);

  if (ainc(&x->inside) != 0)
    ainc(&x->violations);
  int now = ainc(&x_parallel_now) + 1;
  int max = aload(&x_parallel_max);
  while (now > max &&
         !__atomic_compare_exchange_n(&x_parallel_max, &max, now, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
    ;
  /* Stay inside a while, so that other threads have a chance to enter */
  btime until = time_mono_now() + 2;
  while (time_mono_now() < until)
    ;
  if (aload(&x->inside) != 1)
    ainc(&x->violations);
  adec(&x_parallel_now);
  adec(&x->inside);
  x->runs++;
  sev->runs++;
}

struct xsender {
  pthread_t tid;
  int id;
};

static void *
x_sender_main(void *data)
{
  struct xsender *s = data;
  for (int r = 0; r < XROUNDS; r++)
    for (int i = 0; i < XLOOPS; i++)
    {
      struct sev *sev = &xl[(i + r) % XLOOPS].ev[s->id][r % XEVS];
      sev->sent += ev_send(xl[(i + r) % XLOOPS].l, &sev->e);
      if (!(r % 64) && !i)
        usleep(10);         /* let the loops catch up now and then */
    }
  return NULL;
}

static void
test_loop_exclusive(void **state)
{
  struct sched *s = sched_new("exclusive", 4);
  struct loop *loops[XLOOPS];
  memset(xl, 0, sizeof(xl));
  for (int i = 0; i < XLOOPS; i++)
  {
    xl[i].l = loops[i] = loop_new(s, "x");
    for (int t = 0; t < XSENDERS; t++)
      for (int e = 0; e < XEVS; e++)
        ev_init(&xl[i].ev[t][e].e, x_hook, &xl[i].ev[t][e]);
  }

  struct xsender snd[XSENDERS];
  for (int t = 0; t < XSENDERS; t++)
  {
    snd[t].id = t;
    assert_int_equal(pthread_create(&snd[t].tid, NULL, x_sender_main, &snd[t]), 0);
  }
  for (int t = 0; t < XSENDERS; t++)
    pthread_join(snd[t].tid, NULL);
  for (int i = 0; i < XLOOPS; i++)
    loop_call_sync(loops[i], noop, NULL);

  long total = 0;
  for (int i = 0; i < XLOOPS; i++)
  {
    assert_int_equal(aload(&xl[i].violations), 0);
    long sent = 0;
    for (int t = 0; t < XSENDERS; t++)
      for (int e = 0; e < XEVS; e++)
      {
        assert_int_equal(xl[i].ev[t][e].runs, xl[i].ev[t][e].sent);
        sent += xl[i].ev[t][e].sent;
      }
    assert_int_equal(xl[i].runs, sent);
    total += sent;
  }
  assert_true(total > 0);
  print_message("exclusive: %ld hooks, up to %d loops at once\n", total, aload(&x_parallel_max));

  stop_all(s, loops, XLOOPS);
}

/* Hooks of n loops that each wait until all n are inside at once. */
struct meet {
  struct event e[8];
  int n;
  int inside;               /* atomic */
  int met;                  /* atomic */
  int failed;               /* atomic */
  pthread_t tid[8];
};

struct meet_arg {
  struct meet *m;
  int i;
};

static void
meet_hook(void *data)
{
  struct meet_arg *a = data;
  struct meet *m = a->m;
  m->tid[a->i] = pthread_self();
  ainc(&m->inside);
  btime end = time_mono_now() + WAIT_S * (btime) TO_S;
  while (aload(&m->inside) < m->n)
    if (time_mono_now() > end)
    {
      ainc(&m->failed);
      break;
    }
  ainc(&m->met);
}

/* All n loops run at once: needs at least n threads. */
static void
meet_all(struct loop **loops, int n)
{
  struct meet m = { .n = n };
  struct meet_arg args[8];
  for (int i = 0; i < n; i++)
  {
    args[i] = (struct meet_arg) { &m, i };
    ev_init(&m.e[i], meet_hook, &args[i]);
    ev_send(loops[i], &m.e[i]);
  }
  WAIT_FOR(aload(&m.met) == n);
  assert_int_equal(aload(&m.failed), 0);
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      assert_false(pthread_equal(m.tid[i], m.tid[j]));
}

static void
test_loops_parallel(void **state)
{
  struct sched *s = sched_new("parallel", 2);
  struct loop *loops[2] = { loop_new(s, "p1"), loop_new(s, "p2") };
  meet_all(loops, 2);
  stop_all(s, loops, 2);
}

static void
record_tid(void *data)
{
  *(pthread_t *) data = pthread_self();
}

static void
test_sched_set_threads(void **state)
{
  struct sched *s = sched_new("pool", 1);
  assert_string_equal(sched_name(s), "pool");
  assert_int_equal(sched_threads(s), 1);
  struct loop *loops[4];
  for (int i = 0; i < 4; i++)
    loops[i] = loop_new(s, "pool");

  sched_set_threads(s, 4);
  assert_int_equal(sched_threads(s), 4);
  meet_all(loops, 4);

  sched_set_threads(s, 1);
  WAIT_FOR(sched_threads(s) == 1);
  pthread_t first, tid;
  loop_call_sync(loops[0], record_tid, &first);
  for (int r = 0; r < 20; r++)
  {
    loop_call_sync(loops[r % 4], record_tid, &tid);
    assert_true(pthread_equal(first, tid));
  }

  /* Shrink and grow again before the threads had a chance to leave */
  sched_set_threads(s, 3);
  assert_int_equal(sched_threads(s), 3);
  sched_set_threads(s, 2);
  sched_set_threads(s, 3);
  WAIT_FOR(sched_threads(s) == 3);
  meet_all(loops, 3);

  stop_all(s, loops, 4);
}

/*
 * Yielding
 */

struct ystate {
  struct event a, b;
  struct loop *la, *lb;
  char order[16];
  int n;                    /* written by both loops, one at a time (1 thread) */
  int rounds;
  int spin_budget;          /* A spends its budget instead of yielding */
  int done;                 /* atomic */
};

static void
yield_b(void *data)
{
  struct ystate *y = data;
  y->order[y->n++] = 'B';
}

static void
yield_a(void *data)
{
  struct ystate *y = data;
  y->order[y->n++] = '0' + y->rounds;
  if (y->rounds == 0)
    ev_send(y->lb, &y->b);
  if (++y->rounds == 4)
  {
    astore(&y->done, 1);
    return;
  }
  ev_schedule(&y->a);
  if (y->spin_budget)
    while (loop_budget_left() > 0)
      ;
  else
    loop_yield();
}

static void
yield_case(int spin_budget)
{
  /* One thread: the order of runs is the order of wake-ups */
  struct sched *s = sched_new("yield", 1);
  struct ystate y = { .spin_budget = spin_budget };
  y.la = loop_new(s, "ya");
  y.lb = loop_new(s, "yb");
  ev_init(&y.a, yield_a, &y);
  ev_init(&y.b, yield_b, &y);
  ev_send(y.la, &y.a);
  WAIT_FOR(aload(&y.done));
  loop_call_sync(y.lb, noop, NULL);
  assert_int_equal(y.n, 5);
  assert_memory_equal(y.order, "0B123", 5);
  struct loop *loops[2] = { y.la, y.lb };
  stop_all(s, loops, 2);
}

static void test_loop_yield(void **state) { yield_case(0); }
static void test_loop_budget(void **state) { yield_case(1); }

/*
 * Stopping
 */

struct stopst {
  struct loop *l;
  struct event stopper, late, done;
  struct timer tick;
  struct loop_fd f;
  int sv[2];                /* a socket pair, f on sv[0] */
  int stopped;              /* owner: l, then main after done */
  int after_stop;           /* hooks run after loop_stop() */
  int done_in_main;
  int late_active_at_done;
  int tick_active_at_done;
  int ticks;                /* atomic */
  struct blocker blk;
  struct event queued[3];
  int queued_runs;
};

static void
stop_tick(struct timer *t)
{
  struct stopst *st = t->data;
  st->after_stop += st->stopped;
  ainc(&st->ticks);
}

static void
stop_late(void *data)
{
  struct stopst *st = data;
  st->after_stop++;
}

static void
stop_rx(struct loop_fd *f)
{
  struct stopst *st = container_of(f, struct stopst, f);
  st->after_stop += st->stopped;
  char buf[64];
  while (read(f->fd, buf, sizeof(buf)) > 0)
    ;
}

static void
stop_stopper(void *data)
{
  struct stopst *st = data;
  loop_stop(st->l, &st->done);
  st->stopped = 1;
  ev_schedule(&st->late);   /* queued in a stopping loop: discarded */
}

static void
stop_done_hook(void *data)
{
  struct stopst *st = data;
  st->done_in_main = loop_current() == main_loop();
  st->late_active_at_done = ev_active(&st->late);
  st->tick_active_at_done = tm_active(&st->tick);
  loop_main_quit();
}

static void
stop_setup(void *data)
{
  struct stopst *st = data;
  tm_init(&st->tick, st->l, stop_tick, st);
  st->tick.recurrent = MS_ 1;
  tm_start(&st->tick, MS_ 1);
  st->f.rx = stop_rx;
  loop_fd_add(st->l, &st->f, st->sv[0]);
}

static void
test_loop_stop_inside(void **state)
{
  struct sched *s = sched_new("stop", 2);
  struct stopst st = { .l = loop_new(s, "stop") };
  ev_init(&st.stopper, stop_stopper, &st);
  ev_init(&st.late, stop_late, &st);
  ev_init(&st.done, stop_done_hook, &st);
  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, st.sv), 0);
  loop_call_sync(st.l, stop_setup, &st);
  WAIT_FOR(aload(&st.ticks) >= 3);
  if (write(st.sv[1], "data", 4) != 4)
    fail();

  ev_send(st.l, &st.stopper);
  sched_main_run();

  /* The loop is gone: more input reaches nobody */
  assert_int_equal(write(st.sv[1], "more", 4), 4);
  close(st.sv[0]);
  close(st.sv[1]);

  assert_int_equal(st.stopped, 1);
  assert_int_equal(st.after_stop, 0);
  assert_int_equal(st.done_in_main, 1);
  assert_int_equal(st.late_active_at_done, 0);
  assert_int_equal(st.tick_active_at_done, 0);
  assert_false(ev_active(&st.late));
  sched_free(s);
}

static void
queued_hook(void *data)
{
  struct stopst *st = data;
  st->queued_runs++;
}

static void
stop_from_main(void *data)
{
  struct stopst *st = data;
  loop_stop(st->l, &st->done);
  astore(&st->blk.release, 1);
}

static void
test_loop_stop_from_main(void **state)
{
  struct sched *s = sched_new("stopmain", 2);
  struct stopst st = { .l = loop_new(s, "stopmain") };
  ev_init(&st.done, stop_done_hook, &st);
  ev_init(&st.late, stop_from_main, &st);

  /* Busy in a hook while events queue up and main stops it */
  blocker_start(&st.blk, st.l);
  for (int i = 0; i < 3; i++)
  {
    ev_init(&st.queued[i], queued_hook, &st);
    assert_int_equal(ev_send(st.l, &st.queued[i]), 1);
  }
  ev_send(main_loop(), &st.late);
  sched_main_run();

  assert_int_equal(st.blk.timeout, 0);
  assert_int_equal(st.done_in_main, 1);
  assert_int_equal(st.queued_runs, 0);
  for (int i = 0; i < 3; i++)
    assert_false(ev_active(&st.queued[i]));

  /* Their owners may use them again */
  struct loop *l2 = loop_new(s, "again");
  for (int i = 0; i < 3; i++)
    assert_int_equal(ev_send(l2, &st.queued[i]), 1);
  loop_call_sync(l2, noop, NULL);
  assert_int_equal(st.queued_runs, 3);
  stop_all(s, &l2, 1);
}

/* loop_call_sync() into the main loop from another thread */
struct main_call {
  pthread_t tid;
  int in_main;
};

static void
main_call_fn(void *data)
{
  struct main_call *c = data;
  c->in_main = loop_current() == main_loop() && pthread_equal(pthread_self(), c->tid);
}

static void *
main_call_thread(void *data)
{
  loop_call_sync(main_loop(), main_call_fn, data);
  loop_main_quit();
  return NULL;
}

static void
test_main_call_sync(void **state)
{
  struct main_call c = { .tid = pthread_self() };
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, main_call_thread, &c), 0);
  sched_main_run();
  pthread_join(t, NULL);
  assert_int_equal(c.in_main, 1);
}

int
main(void)
{
  log_init("loop_test");
  resource_init();
  sched_main_init();

  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup(test_timers_order, setup_test),
    cmocka_unit_test_setup(test_timer_stop, setup_test),
    cmocka_unit_test_setup(test_timer_recurrent, setup_test),
    cmocka_unit_test_setup(test_timer_moved_later, setup_test),
    cmocka_unit_test_setup(test_main_loop_timer, setup_test),
    cmocka_unit_test_setup(test_ev_send_many, setup_test),
    cmocka_unit_test_setup(test_ev_coalesce, setup_test),
    cmocka_unit_test_setup(test_ev_resend, setup_test),
    cmocka_unit_test_setup(test_loop_exclusive, setup_test),
    cmocka_unit_test_setup(test_loops_parallel, setup_test),
    cmocka_unit_test_setup(test_sched_set_threads, setup_test),
    cmocka_unit_test_setup(test_loop_yield, setup_test),
    cmocka_unit_test_setup(test_loop_budget, setup_test),
    cmocka_unit_test_setup(test_loop_stop_inside, setup_test),
    cmocka_unit_test_setup(test_loop_stop_from_main, setup_test),
    cmocka_unit_test_setup(test_main_call_sync, setup_test),
  };
  int rv = cmocka_run_group_tests(tests, NULL, NULL);
  rcu_barrier();
  return rv;
}
