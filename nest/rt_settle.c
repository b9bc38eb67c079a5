/*
 * DOC: Export settle: a table's readers woken once its changes settle.
 *
 * By default a writer wakes the table's readers as it publishes, and a
 * reader coalesces whatever changes of a net it finds when it runs (a
 * channel runs its export filter once for those it finds together, up
 * to 1024 items: nest/channel_window.h; BGP sends a prefix's last state
 * once anyway). BIRD 3's
 * `export settle time MIN MAX` (and `route refresh export settle time`
 * while a channel writing here refreshes its routes) asks for the other
 * trade: a net that flaps is exported once its flapping is over. The
 * writers then send the table's loop one event instead; the loop wakes
 * the readers once no change came for MIN, or MAX after the first one.
 *
 * Backlog is not what settling is for: a reader far enough behind to
 * press the table (nest/rt_press.c) is woken at once, or the importers
 * waiting on it would wait out the settle time, and a reader asleep with
 * a growing journal would be taken for a laggard.
 *
 * Owner: the times and `on` are the main loop's (rt_commit), read
 * atomically by writers and the table loop; the rest is the table loop's.
 */
#include "nest/rt.h"
#include "lib/timeutil.h"

static struct rt_settle_times
rt_settle_times(const struct rtable *t)
{
  const struct rt_settle *s = &t->settle;
  struct rt_settle_times rr = { uatomic_read(&s->rr.min), uatomic_read(&s->rr.max) };
  if (uatomic_read(&t->refreshing) && (rr.min || rr.max))
    return rr;
  return (struct rt_settle_times) { uatomic_read(&s->exp.min), uatomic_read(&s->exp.max) };
}

/* Writers take the writer lock, so the readers' list holds still. */
static void
rt_settle_wake(struct timer *tm)
{
  struct rtable *t = tm->data;
  wlock_take(&t->lock);
  LIST_WALK_ENTRY(r, &t->readers, struct rt_reader, n)
    rt_reader_wake(r);
  wlock_give(&t->lock);
}

/* A change was published (or the times changed): the wake-up moves to MIN
 * from now, never past MAX from the first change it waits for. New times
 * with no change waiting start no wait: MAX would count from them, not
 * from the first change (a kick of new times that came late, under load,
 * woke a reader before MAX had passed since its first change). */
static void
rt_settle_kick(void *data)
{
  struct rtable *t = data;
  struct rt_settle *s = &t->settle;
  if (s->gone)
    return;
  int changed = uatomic_xchg(&s->changed, 0);
  /* fresh time, as tm_start's: the loop's is from before its events, and
   * MIN from then could come before MIN has passed since this change */
  btime now = time_mono_now();
  if (!tm_active(&s->tm)) {
    if (!changed)
      return;
    s->first = now;
  }
  struct rt_settle_times st = rt_settle_times(t);
  tm_set(&s->tm, MIN(now + st.min, s->first + st.max));
}

void
rt_settle_init(struct rtable *t)
{
  ev_init(&t->settle.ev, rt_settle_kick, t);
  tm_init(&t->settle.tm, t->loop, rt_settle_wake, t);
}

void
rt_settle_set(struct rtable *t, struct rt_settle_times exp, struct rt_settle_times rr)
{
  struct rt_settle *s = &t->settle;
  uatomic_set(&s->exp.min, exp.min);
  uatomic_set(&s->exp.max, exp.max);
  uatomic_set(&s->rr.min, rr.min);
  uatomic_set(&s->rr.max, rr.max);
  u32 on = exp.min || exp.max || rr.min || rr.max;
  u32 was = uatomic_xchg(&s->on, on);
  /* a wake-up pending under the old times comes at the new ones */
  if (was)
    ev_send(t->loop, &s->ev);
}

void
rt_settle_publish(struct rtable *t)
{
  if (!uatomic_read(&t->settle.changed))
    uatomic_set(&t->settle.changed, 1);
  if (!ev_active(&t->settle.ev))
    ev_send(t->loop, &t->settle.ev);
}

void
rt_settle_stop(struct rtable *t)
{
  t->settle.gone = 1;
  tm_stop(&t->settle.tm);
}
