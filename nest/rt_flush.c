/*
 * DOC: One walk of a table for every channel flushing it.
 *
 * A channel going down withdraws its routes by a walk of every net of its
 * table (rt_walk.c). When a route server's sessions all go down at once,
 * a hundred walks of the same million nets were three quarters of the
 * CPU of their flush; here the table's loop walks the table once for all
 * the channels that joined. Each channel joins where the walk is and is
 * done when the walk comes round to that point again: positions of the
 * net index stay valid across resizes (rcu_hash_walk), so "every net
 * since the join" is a position reached twice.
 *
 * The walk withdraws in the channel's name, in the table's loop, while
 * the channel's own loop may import again (a session back up): each
 * withdrawal takes the route only if it is still older than the flush's
 * generation (rt_import.stale_only), checked under the writer lock.
 *
 * Ownership: the joins and the position are under the table's
 * flush_lock, which the walk holds for each part (a few thousand nets),
 * so that a channel that leaves (rt_flush_leave) is no longer named once
 * it has the lock.
 */
#include <stdlib.h>
#include "nest/rt.h"
#include "nest/proto.h"
#include "nest/rt_walk.h"
#include "lib/log.h"

#define RT_FLUSH_JOIN_BATCH 64      /* withdrawals a channel's batch holds */
#define RT_FLUSH_JOIN_NETS 4096     /* nets a part of the walk visits */

/* One channel's flush. Under the table's flush_lock. */
struct rt_flush_join {
  struct rt_flush_join *next;
  u16 gen;
  u64 start;                  /* the walk's position when c joined */
  int wrapped;                /* the walk went past the end since */
  struct loop *loop;          /* where done goes */
  struct event *done;
  struct rt_walk_batch b;     /* the channel, its sender number; im: imb */
  struct rt_import imb[RT_FLUSH_JOIN_BATCH];
};

/* A part's joins by their channel's sender number. */
struct rt_flush_part {
  struct rt_flush_join **by_sid;
  uint sids;
};

/* The end of a part: what is left of j's batch, and c's counts of what
 * the part withdrew. */
static void
rt_flush_apply(struct rtable *t, struct rt_flush_join *j)
{
  struct rt_walk_batch *b = &j->b;
  if (b->k)
    rt_walk_batch_apply(t, b);
  if (b->removed)
    uatomic_sub(&b->c->stats.imp_routes, b->removed);
  if (b->filt_removed)
    uatomic_sub(&b->c->stats.filt_routes, b->filt_removed);
  b->removed = b->filt_removed = 0;
}

/* One net, inside the part's read section. Its routes are picked first
 * and withdrawn later, each by its source (rt_flush_net's way). */
static void
rt_flush_join_net(struct rtable *t, struct net *n, void *ctx)
{
  struct rt_flush_part *p = ctx;
  for (struct rte *r = rcu_dereference(n->routes); r; r = rcu_dereference(r->next)) {
    struct rt_flush_join *j = r->sender < p->sids ? p->by_sid[r->sender] : NULL;
    if (!j || !rte_gen_older(r, j->gen))
      continue;
    rt_walk_batch_add(t, &j->b, (struct rt_import){ .net = &n->n, .src = rte_src(r), .stale_only = 1, .gen = j->gen });
  }
}

static void
rt_flush_done(struct rt_flush_join *j)
{
  ev_send(j->loop, j->done);
  free(j);
}

/* The table's loop: a part of the walk for every channel joined. */
static void
rt_flush_run(void *data)
{
  struct rtable *t = data;
  pthread_mutex_lock(&t->flush_lock);
  if (!t->flush_joins) {
    pthread_mutex_unlock(&t->flush_lock);
    return;
  }
  struct rt_flush_part p = { 0 };
  for (struct rt_flush_join *j = t->flush_joins; j; j = j->next)
    p.sids = MAX(p.sids, (uint) j->b.sid + 1);
  p.by_sid = calloc(p.sids, sizeof(*p.by_sid));
  if (!p.by_sid)
    die("Out of memory");
  for (struct rt_flush_join *j = t->flush_joins; j; j = j->next)
    p.by_sid[j->b.sid] = j;
  rcu_read_lock();
  int end = rt_walk_part(t, &t->flush_pos, RT_FLUSH_JOIN_NETS, rt_flush_join_net, &p);
  for (struct rt_flush_join *j = t->flush_joins; j; j = j->next)
    rt_flush_apply(t, j);
  rcu_read_unlock();
  free(p.by_sid);
  /* At the end the walk starts over from 0: a join from 0 is done, the
   * others have the nets before their start to go. */
  for (struct rt_flush_join **jp = &t->flush_joins, *j; (j = *jp);) {
    int done = end ? !j->start || j->wrapped : j->wrapped && t->flush_pos >= j->start;
    if (end)
      j->wrapped = 1;
    if (done) {
      *jp = j->next;
      rt_flush_done(j);
    } else
      jp = &j->next;
  }
  int more = !!t->flush_joins;
  pthread_mutex_unlock(&t->flush_lock);
  if (more) {
    if (loop_budget_left() <= 0)
      loop_yield();
    ev_schedule(&t->flush_ev);
  }
}

/* Under flush_lock: c's join, unlinked (NULL: none). */
static struct rt_flush_join *
rt_flush_unlink(struct rtable *t, struct channel *c)
{
  for (struct rt_flush_join **jp = &t->flush_joins, *j; (j = *jp); jp = &j->next)
    if (j->b.c == c) {
      *jp = j->next;
      return j;
    }
  return NULL;
}

void
rt_flush_join(struct rtable *t, struct channel *c, u16 gen, struct event *done)
{
  pthread_mutex_lock(&t->flush_lock);
  /* a join again (the flush's generation moved) starts over from here
   * (between parts, batches are empty) */
  struct rt_flush_join *j = rt_flush_unlink(t, c);
  if (!j && !(j = malloc(sizeof(*j))))
    die("Out of memory");
  *j = (struct rt_flush_join){ .gen = gen, .start = t->flush_pos, .loop = loop_current(), .done = done,
                               .next = t->flush_joins,
                               .b = { .c = c, .sid = chan_sender_id(c, t), .cap = RT_FLUSH_JOIN_BATCH } };
  j->b.im = j->imb;
  t->flush_joins = j;
  pthread_mutex_unlock(&t->flush_lock);
  ev_send(t->loop, &t->flush_ev);
}

void
rt_flush_leave(struct rtable *t, struct channel *c)
{
  pthread_mutex_lock(&t->flush_lock);
  struct rt_flush_join *j = rt_flush_unlink(t, c);
  pthread_mutex_unlock(&t->flush_lock);
  free(j);
}

int
rt_flush_pending(struct rtable *t, struct channel *c)
{
  pthread_mutex_lock(&t->flush_lock);
  struct rt_flush_join *j = t->flush_joins;
  while (j && j->b.c != c)
    j = j->next;
  pthread_mutex_unlock(&t->flush_lock);
  return !!j;
}

void
rt_flush_init(struct rtable *t)
{
  pthread_mutex_init(&t->flush_lock, NULL);
  ev_init(&t->flush_ev, rt_flush_run, t);
}
