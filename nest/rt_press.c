/*
 * DOC: Import backpressure: readers far behind hold importers off.
 *
 * The policy is in nest/rt.h (RT_PRESS_HIGH). A reader presses at the
 * level its `press` holds (enum rt_press_level); the table counts the
 * readers at RT_PRESS_ALL in `pressing` and those at RT_PRESS_COPIES or
 * above in `crowding`. A writer raises the level, seeing the reader
 * behind when it publishes (a reader short of CPU cannot say so itself:
 * its loop waits behind the importers'); the reader lowers it (caught up
 * to within the level's low mark, stopped of its own accord, detached),
 * and so does the table's cleanup (not moving). Importers that found the
 * table pressed wait in its list and are sent their event when the last
 * reader at their level lets go, so that no importer polls.
 *
 * Two levels, because two kinds of importer cost the table differently
 * when they wait. A BGP session that waits keeps what it has not sent in
 * its peer's socket; held at the lower mark it would wait for its own
 * table's exports (a peer's own table in the multi layout, read by that
 * peer's session) and converge late. A pipe copying from a table with
 * more readers than the table it writes into keeps what it holds back in
 * the source's journal, where one item serves every reader, instead of
 * the destination's, where the item is a copy of its own: so it waits at
 * the lower mark (proto/pipe/pipe.c). Since a copier waits only toward a
 * table with fewer readers than the one it reads, waits never go round a
 * ring, and a waiting copier's reader is idle: it presses no one.
 */
#include "nest/rt.h"

/* Atomic: copiers' holds alive, two a pipe (one a direction; the one
 * toward fewer readers is what waits). */
static u32 rt_press_copy_holds;

u64
rt_press_copies_high(struct rtable *t)
{
  u32 pipes = MAX((uatomic_read(&rt_press_copy_holds) + 1) / 2, 1U);
  u64 mark = MIN(RT_PRESS_COPIES_ALL / pipes, uatomic_read(&t->net_count) / RT_PRESS_COPIES_SHARE);
  return mark < RT_PRESS_COPIES_MIN ? RT_PRESS_COPIES_MIN : mark > RT_PRESS_COPIES_MAX ? RT_PRESS_COPIES_MAX : mark;
}

void
rt_press_marks(struct rtable *t, u64 *low, u64 *high)
{
  *low = uatomic_read(&t->press_low);
  *high = uatomic_read(&t->press_high);
  /* With pipes about, the crowding mark (which follows the table
   * already) holds their copies back, and lower marks for the sessions
   * cost 3-5% of `multi` 32 x 1M's time and no memory (nest/rt.h) */
  if (!uatomic_read(&t->press_auto) || uatomic_read(&rt_press_copy_holds))
    return;
  u64 fit = MAX(uatomic_read(&t->net_count) / RT_PRESS_SHARE, (u64) RT_PRESS_HIGH_MIN);
  if (fit < *high) {
    *high = fit;
    *low = MIN(*low, fit / 4);
  }
}

/* Waiters whose level no reader holds any more: sent their events. */
static void
rt_press_wake(struct rtable *t)
{
  pthread_mutex_lock(&t->press_lock);
  /* a reader may have pressed again meanwhile: the waiters would find
   * that out and wait again, so let them */
  int crowded = rt_import_crowded(t), pressed = rt_import_pressed(t);
  struct rt_press_wait **p = &t->press_waiters;
  while (*p) {
    struct rt_press_wait *w = *p;
    if (w->copies ? crowded : pressed) {
      p = &w->next;
      continue;
    }
    *p = w->next;
    ev_send(w->loop, w->ev);
    uatomic_set(&w->table, NULL);      /* after the send: see rt_import_unwait */
  }
  pthread_mutex_unlock(&t->press_lock);
}

/* Counts of the levels at or above each: the transition from old to level. */
static void
rt_press_count(struct rtable *t, u32 old, u32 level)
{
  int woke = 0;
  if ((old >= RT_PRESS_COPIES) != (level >= RT_PRESS_COPIES)) {
    if (level >= RT_PRESS_COPIES)
      uatomic_inc(&t->crowding);
    else
      woke |= !uatomic_sub_return(&t->crowding, 1);
  }
  if ((old >= RT_PRESS_ALL) != (level >= RT_PRESS_ALL)) {
    if (level >= RT_PRESS_ALL)
      uatomic_inc(&t->pressing);
    else
      woke |= !uatomic_sub_return(&t->pressing, 1);
  }
  if (woke)
    rt_press_wake(t);
}

/* Whoever makes the move from the level it saw counts it: each move is
 * counted once, however the writers, the reader and the cleanup meet. */
static void
rt_press_move(struct rt_reader *r, u32 old, u32 level)
{
  if (old != level && uatomic_cmpxchg(&r->press, old, level) == old)
    rt_press_count(r->table, old, level);
}

void
rt_reader_press(struct rt_reader *r, u32 level)
{
  u32 old;
  while ((old = uatomic_read(&r->press)) != level)
    if (uatomic_cmpxchg(&r->press, old, level) == old) {
      rt_press_count(r->table, old, level);
      return;
    }
}

/* The reader's loop, lag items behind: down to what the lag calls for. A
 * writer may have raised the level meanwhile; then it stays. */
void
rt_reader_press_ease(struct rt_reader *r, u64 lag)
{
  u32 old = uatomic_read(&r->press), level = old;
  u64 low, high;
  rt_press_marks(r->table, &low, &high);
  if (level == RT_PRESS_ALL && lag < low)
    level = RT_PRESS_COPIES;
  if (level == RT_PRESS_COPIES && lag < rt_press_copies_high(r->table) / 2)
    level = RT_PRESS_NONE;
  rt_press_move(r, old, level);
}

void
rt_reader_idle(struct rt_reader *r)
{
  if (!r->table)
    return;
  uatomic_xchg(&r->idle, 1);
  rt_reader_press(r, RT_PRESS_NONE);
}

void
rt_press_check(struct rtable *t, struct rt_reader *r)
{
  u64 lag = t->jend - uatomic_read(&r->seq), low, high;
  rt_press_marks(t, &low, &high);
  u32 level = lag > high ? RT_PRESS_ALL
              : lag > rt_press_copies_high(t) ? RT_PRESS_COPIES : RT_PRESS_NONE;
  u32 old = uatomic_read(&r->press);
  if (level <= old || uatomic_read(&r->idle) || uatomic_read(&r->laggard))
    return;
  rt_press_move(r, old, level);
  /* it may have gone idle meanwhile (rt_reader_idle: the other side of
   * this order) */
  if (__atomic_load_n(&r->idle, __ATOMIC_SEQ_CST))
    rt_reader_press(r, RT_PRESS_NONE);
  /* A poller reads now: until its timer (the host cache's 20 ms), the
   * copiers it crowds and the importers it presses would wait with it
   * (with a quarter of the crowding mark, both threads idled a quarter
   * of `multi` 32 x 312, doc/perf.md session 53). */
  struct event *poll = r->notify ? NULL : uatomic_read(&r->polls);
  if (poll && !ev_active(poll))
    ev_send(r->loop, poll);
}

int
rt_import_wait(struct rtable *t, struct rt_press_wait *w)
{
  int (*pressed)(struct rtable *) = w->copies ? rt_import_crowded : rt_import_pressed;
  if (!pressed(t))
    return 0;
  pthread_mutex_lock(&t->press_lock);
  /* the last reader's letting go wakes the list under the lock: seen
   * pressed here, we are in the list before it does */
  int still = pressed(t);
  if (still && !uatomic_read(&w->table)) {
    uatomic_set(&w->table, t);
    w->next = t->press_waiters;
    t->press_waiters = w;
  }
  pthread_mutex_unlock(&t->press_lock);
  return still;
}

/* A waker clears w->table only after its send, under the lock it holds
 * for its whole list: NULL here means no send is under way any more. */
void
rt_import_unwait(struct rt_press_wait *w)
{
  struct rtable *t = uatomic_read(&w->table);
  if (!t)
    return;
  pthread_mutex_lock(&t->press_lock);
  for (struct rt_press_wait **p = &t->press_waiters; *p; p = &(*p)->next)
    if (*p == w) {
      *p = w->next;
      break;
    }
  uatomic_set(&w->table, NULL);
  pthread_mutex_unlock(&t->press_lock);
}

/* --- Holds --- */

static void
rt_hold_timer(struct timer *tm)
{
  struct rt_hold *h = tm->data;
  ev_send(h->wait.loop, h->wait.ev);
}

void
rt_hold_init(struct rt_hold *h, struct loop *l, struct event *ev, int copies)
{
#ifdef BIRD_SANITIZED
  /* still in a table's list of waiters, it would cut the list there */
  if (uatomic_read(&h->wait.table))
    bug("rt_hold_init() of a hold still waiting in %s", uatomic_read(&h->wait.table)->name);
#endif
  h->wait = (struct rt_press_wait) { .loop = l, .ev = ev, .copies = !!copies };
  tm_init(&h->tm, l, rt_hold_timer, h);
  h->since = 0;
  h->counted = !!copies;
  if (copies)
    uatomic_inc(&rt_press_copy_holds);
}

int
rt_hold_check(struct rt_hold *h, int pressed)
{
  if (!pressed) {
    if (h->since)
      tm_stop(&h->tm);          /* let go before its time: no wake-up left */
    h->since = 0;
    return 0;
  }
  btime now = loop_now();
  if (!h->since) {
    h->since = now;
    tm_start(&h->tm, RT_PRESS_HOLD_MAX);
  } else if (now - h->since >= RT_PRESS_HOLD_MAX) {
    h->since = 0;
    return 0;
  }
  return 1;
}

void
rt_hold_stop(struct rt_hold *h)
{
  tm_stop(&h->tm);
  rt_import_unwait(&h->wait);
  h->since = 0;
  if (h->counted)
    uatomic_dec(&rt_press_copy_holds);
  h->counted = 0;
}
