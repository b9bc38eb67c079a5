/*
 * DOC: A table's senders: the channels that write routes into it, by number.
 *
 * Every route names the channel it came in through (flushes, limits, the
 * `preferred` counters, split horizon on export). As a pointer that cost 8
 * bytes of every route, a full route server's largest structure; a table
 * has a few hundred writers at most, so a route keeps a 16-bit number and
 * the table maps it to the channel.
 *
 * A route of an old journal item may still carry the number of a channel
 * gone since (its protocol restarted), and readers compare numbers there
 * (chan_route_is_own, a pipe's rt_sender_origin): so a freed number is
 * reused only once every reader of the table is done with the journal up
 * to where the channel went (its routes were flushed by then, so no live
 * route carries it either), and numbers go round the array besides, a
 * freed one taken last. With a reader that far behind and no number
 * free, the array grows; the reader reads on or is made a laggard
 * (nest/rt_cleanup.c), and the numbers come free. (Only at 64k numbers is
 * one taken before every reader passed it: the one gone longest ago.)
 *
 * The main loop adds and removes senders (channel_new, channel_free);
 * anyone reads the array under RCU. A sender whose routes are copies of
 * another table's (a pipe's) names that table, so that a pipe never
 * copies them back where they came from; the number keeps naming it after
 * the channel goes, until the number is reused. (Which tables a
 * protocol's run writes into itself is the run's to say, for as long as
 * any route of it lives: proto_run_home.) A grown array replaces the old
 * one, which stays allocated until the table goes: growth is by doubling,
 * so the old ones together are smaller than the current one.
 */
#include <stdlib.h>
#include <string.h>
#include "nest/rt.h"
#include "nest/proto.h"
#include "lib/log.h"

#define RT_SENDERS_FIRST 8
#define RT_SENDERS_MAX 65536        /* u16 numbers, 0 is none */


static pthread_mutex_t rt_senders_lock = PTHREAD_MUTEX_INITIALIZER;

static struct rt_senders *
rt_senders_alloc(u32 size)
{
  struct rt_senders *s =
    calloc(1, sizeof(*s) + size * (sizeof(s->ch[0]) + sizeof(s->origin[0]) + sizeof(s->gone_at[0])));
  if (!s)
    die("Out of memory");
  s->gone_at = (u64 *) (s->ch + size);
  s->origin = (const struct rtable **) (s->gone_at + size);
  s->size = size;
  s->next = 1;
  return s;
}

u16
rt_sender_add(struct rtable *t, struct channel *c)
{
  /* the readers only move on: a number free by this is free for good */
  u64 passed = rt_readers_done_min(t);
  pthread_mutex_lock(&rt_senders_lock);
  struct rt_senders *s = t->senders;
  if (!s)
    rcu_assign_pointer(t->senders, s = rt_senders_alloc(RT_SENDERS_FIRST));
  u32 id = 0, early = 0;     /* early: free, but not passed yet */
  for (u32 i = 0; i < s->size - 1 && !id; i++) {
    u32 k = 1 + (s->next - 1 + i) % (s->size - 1);
    if (s->ch[k])
      continue;
    if (s->gone_at[k] <= passed)
      id = k;
    else if (!early || s->gone_at[k] < s->gone_at[early])
      early = k;
  }
  if (!id && s->size >= RT_SENDERS_MAX) {
    /* a pin held for ages (a stalled CLI listing) and 64k channels gone
     * meanwhile: the one gone longest ago, as before the readers' rule */
    if (!early)
      die("Table %s: more than %u channels write into it", t->name, RT_SENDERS_MAX - 1);
    id = early;
  }
  if (!id) {
    struct rt_senders *g = rt_senders_alloc(s->size * 2);
    memcpy(g->ch, s->ch, s->size * sizeof(s->ch[0]));
    memcpy(g->origin, s->origin, s->size * sizeof(s->origin[0]));
    memcpy(g->gone_at, s->gone_at, s->size * sizeof(s->gone_at[0]));
    g->older = s;
    id = s->size;
    rcu_assign_pointer(t->senders, s = g);
  }
  /* Before any route with this number is published (the publish orders it):
   * the number's origin from its last user goes (set_origin may follow) */
  __atomic_store_n(&s->origin[id], NULL, __ATOMIC_RELAXED);
  __atomic_store_n(&s->ch[id], c, __ATOMIC_RELEASE);
  s->next = id + 1 < s->size ? id + 1 : 1;
  pthread_mutex_unlock(&rt_senders_lock);
  return (u16) id;
}

void
rt_sender_remove(struct rtable *t, u16 id)
{
  if (!id)
    return;
  /* the channel's routes are flushed: its last items lie before this */
  u64 end = rt_journal_end_settled(t);
  pthread_mutex_lock(&rt_senders_lock);
  struct rt_senders *s = t->senders;
  ASSERT_DIE(s && id < s->size);
  s->gone_at[id] = end;
  /* The origin stays: a pipe reading an old journal item must still know
   * a copy for one after the pipe that made it went (else it would pass
   * on the copy's withdrawal as the original's, same source). */
  __atomic_store_n(&s->ch[id], NULL, __ATOMIC_RELAXED);
  pthread_mutex_unlock(&rt_senders_lock);
}

void
rt_sender_set_origin(struct rtable *t, u16 id, const struct rtable *from)
{
  if (!id)
    return;
  /* under the lock: a growing array copies what is set */
  pthread_mutex_lock(&rt_senders_lock);
  struct rt_senders *s = t->senders;
  ASSERT_DIE(s && id < s->size);
  __atomic_store_n(&s->origin[id], from, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&rt_senders_lock);
}

void
rt_senders_free(struct rtable *t)
{
  for (struct rt_senders *s = t->senders, *o; s; s = o) {
    o = s->older;
    free(s);
  }
  t->senders = NULL;
}
