/*
 * DOC: Import backpressure: readers far behind hold importers off.
 *
 * The policy is in nest/rt.h (RT_PRESS_HIGH). A reader presses while its
 * `press` flag is set; the table counts such readers in `pressing`. The
 * flag goes on from a writer, which sees the reader behind when it
 * publishes (a reader short of CPU cannot say so itself: its loop waits
 * behind the importers'), and off from the reader (caught up to within
 * RT_PRESS_LOW, stopped of its own accord, detached) or from the table's
 * cleanup (not moving). Importers that found the table pressed wait in
 * its list and are sent their event when the last pressing reader lets
 * go, so that no importer polls.
 */
#include "nest/rt.h"

static void
rt_press_wake(struct rtable *t)
{
  pthread_mutex_lock(&t->press_lock);
  /* a reader may have pressed again meanwhile: the waiters would find
   * that out and wait again, so let them */
  struct rt_press_wait *w = t->press_waiters;
  t->press_waiters = NULL;
  while (w) {
    struct rt_press_wait *next = w->next;
    ev_send(w->loop, w->ev);
    uatomic_set(&w->table, NULL);      /* after the send: see rt_import_unwait */
    w = next;
  }
  pthread_mutex_unlock(&t->press_lock);
}

void
rt_reader_press(struct rt_reader *r, u32 on)
{
  if (uatomic_read(&r->press) == on || uatomic_cmpxchg(&r->press, !on, on) != !on)
    return;
  if (on)
    uatomic_inc(&r->table->pressing);
  else if (!uatomic_sub_return(&r->table->pressing, 1))
    rt_press_wake(r->table);
}

void
rt_reader_idle(struct rt_reader *r)
{
  if (!r->table)
    return;
  uatomic_xchg(&r->idle, 1);
  rt_reader_press(r, 0);
}

void
rt_press_check(struct rtable *t, struct rt_reader *r)
{
  if (t->jend - uatomic_read(&r->seq) <= RT_PRESS_HIGH || uatomic_read(&r->press) || uatomic_read(&r->idle) ||
      uatomic_read(&r->laggard))
    return;
  rt_reader_press(r, 1);
  /* it may have gone idle meanwhile (rt_reader_idle: the other side of
   * this order) */
  if (__atomic_load_n(&r->idle, __ATOMIC_SEQ_CST))
    rt_reader_press(r, 0);
}

int
rt_import_wait(struct rtable *t, struct rt_press_wait *w)
{
  if (!rt_import_pressed(t))
    return 0;
  pthread_mutex_lock(&t->press_lock);
  /* the last reader's letting go wakes the list under the lock: seen
   * pressed here, we are in the list before it does */
  int pressed = rt_import_pressed(t);
  if (pressed && !uatomic_read(&w->table)) {
    uatomic_set(&w->table, t);
    w->next = t->press_waiters;
    t->press_waiters = w;
  }
  pthread_mutex_unlock(&t->press_lock);
  return pressed;
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
