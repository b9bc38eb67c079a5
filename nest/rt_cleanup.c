/*
 * DOC: What every reader of a table passed goes: the journal's blocks, the
 * routes they retired and the nets they emptied, first out of the
 * journal under the writer lock, then (their references let go) freed
 * after an RCU grace period. The table loop's cleanup does it after
 * changes and keeps looking while they come (rt_cleanup_tick), flagging
 * readers too far behind as laggards on the way; a writer trims when that
 * loop is late (rt_journal_trim_due). A table nobody uses any more goes
 * whole here too (rt_table_destroy_data).
 */
#include <stdlib.h>
#include <string.h>
#include "nest/rt.h"
#include "nest/rt_core.h"
#include "nest/rt_trie.h"
#include "nest/rt_hostcache.h"
#include "lib/log.h"
#include "lib/timeutil.h"

/* How long after a cleanup the table loop looks again (rt_cleanup_tick). */
#define RT_CLEANUP_QUIET (S_ 1)

/* After the grace period nobody can reach the block's retired routes and
 * dead nets any more. */
static void
rt_block_free_rcu(struct rcu_head *h)
{
  struct rt_journal_block *b = caa_container_of(h, struct rt_journal_block, rcu);
  for (uint i = 0; i < b->used; i++) {
    struct rt_journal_item *it = &b->items[i];
    if (it->retired)
      rte_free(it->retired);
    if (b->net_died[i / 64] & (1ULL << (i % 64)))
      net_free(it->net);
  }
  rt_journal_block_free(b);
}

/* A block's retired routes let go of what they hold, after the writer
 * lock: their references, an atomic add per run of routes with the same
 * attribute list or source (an UPDATE's routes share both, and the
 * writers are adding to those very counters), and their ids, read here
 * into ids (returns how many) for the caller to give back under the lock.
 * Read under it, each retired route was a cache miss that held every
 * writer up (387 a block). The block goes after a grace period. */
static uint
rt_block_retire(struct rt_journal_block *b, uint used, u32 *ids)
{
  uint n = 0, na = 0, ns = 0;
  struct ea_list *a = NULL;
  struct rte_src *s = NULL;
  b->used = used;
  for (uint i = 0; i < used; i++) {
    if (i + 8 < used && b->items[i + 8].retired)
      __builtin_prefetch(b->items[i + 8].retired);
    struct rte *r = b->items[i].retired;
    if (!r)
      continue;
    ids[n++] = r->id;
    if (rte_attrs(r) != a) {
      ea_unref_many(a, na);
      a = rte_attrs(r);
      na = 0;
    }
    na++;
    if (rte_src(r) != s) {
      if (s)
        rt_unlock_source_many(s, ns);
      s = rte_src(r);
      ns = 0;
    }
    ns++;
  }
  ea_unref_many(a, na);
  if (s)
    rt_unlock_source_many(s, ns);
  call_rcu(&b->rcu, rt_block_free_rcu);
  return n;
}

/* Ids of retired routes back to the map, under the writer lock: taken
 * once for several blocks' (a cleanup after a flush retires thousands,
 * and each taking contends with the writers). */
#define RT_RETIRE_BLOCKS 8

static void
rt_ids_give_back(struct rtable *t, const u32 *ids, uint n)
{
  if (!n)
    return;
  wlock_take(&t->lock);
  for (uint k = 0; k < n; k++)
    rt_id_free(t, ids[k]);
  wlock_give(&t->lock);
}

/* Under the writer lock, in a read section: the blocks every reader
 * passed (those before the one holding the least done; never the last)
 * leave the journal, and the mark for the next trim is set. The cleanup
 * and a trim alike read the least done here. Sanitizer builds check the
 * readers' list before and after (where: the cleanup or a trim). Returns
 * the first block gone; *kept is the first left. */
static struct rt_journal_block *
rt_journal_unlink_done(struct rtable *t, const char *where, struct rt_journal_block **kept)
{
  rt_readers_check(t, where);
  u64 min = rt_readers_done_min_locked(t);
  u64 from = uatomic_read(&t->jfirst_seq);
  struct rt_journal_block *b = t->jfirst, *gone = b;
  while (b && b != t->jlast && b->first_seq + RT_JOURNAL_BLOCK <= min) {
    struct rt_journal_block *next = b->next;
    rcu_assign_pointer(t->jfirst, next);
    uatomic_set(&t->jfirst_seq, next->first_seq);
    b = next;
  }
  *kept = b;
  if (gone != b)
    rt_readers_unlinked(t, where, min, from);
  uatomic_set(&t->jtrim_at, t->jend);
  return gone;
}

/* After the lock, in the same read section: the unlinked blocks' chain
 * stays as it was (a reader may still walk it), and the read section
 * keeps them from being freed under us. */
static void
rt_journal_retire(struct rtable *t, struct rt_journal_block *gone, struct rt_journal_block *kept)
{
  u32 ids[RT_RETIRE_BLOCKS * RT_JOURNAL_BLOCK];
  uint n = 0;
  for (struct rt_journal_block *b = gone; b != kept; ) {
    struct rt_journal_block *next = b->next;
    if (n > (RT_RETIRE_BLOCKS - 1) * RT_JOURNAL_BLOCK) {
      rt_ids_give_back(t, ids, n);
      n = 0;
    }
    n += rt_block_retire(b, RT_JOURNAL_BLOCK, ids + n);
    b = next;
  }
  rt_ids_give_back(t, ids, n);
}

/* A writer's share of the cleanup, in a read section: the blocks every
 * reader is done with go. The table loop's cleanup waits its turn for a
 * thread like any loop: at one table 10 x 10k on two cores it ran once at
 * the start and next 51 ms later, once the ten sessions' import was over,
 * and the journal of the whole load waited for it. */
static void
rt_journal_trim(struct rtable *t)
{
  wlock_take(&t->lock);
  struct rt_journal_block *kept, *gone = rt_journal_unlink_done(t, "journal trim", &kept);
  wlock_give(&t->lock);
  rt_journal_retire(t, gone, kept);
}

/* After a writer's batch: a trim when the cleanup the table asked its
 * loop for has not come and the journal grew by RT_CLEANUP_THRESHOLD
 * since the last cleanup or trim. */
void
rt_journal_trim_due(struct rtable *t)
{
  u64 end = uatomic_read(&t->jend);
  if (end - uatomic_read(&t->jtrim_at) >= RT_CLEANUP_THRESHOLD && ev_active(&t->cleanup_ev))
    rt_journal_trim(t);
}

static void rt_cleanup_run(struct rtable *t);

/* After a cleanup: another look later, while the table changes. */
static void
rt_cleanup_arm(struct rtable *t)
{
  if (tm_active(&t->cleanup_tm))
    return;
  t->cleanup_seen = uatomic_read(&t->jend);
  uatomic_set(&t->cleanup_armed, 1);
  tm_start(&t->cleanup_tm, RT_CLEANUP_QUIET);
}

void
rt_cleanup(void *data)
{
  struct rtable *t = data;
  rt_cleanup_run(t);
  rt_cleanup_arm(t);
}

/* The look again: on while changes came since the last, else off, and
 * the next new block asks again (rt_journal_publish). */
void
rt_cleanup_tick(struct timer *tm)
{
  struct rtable *t = tm->data;
  u64 end = uatomic_read(&t->jend);
  rt_cleanup_run(t);
  if (end == t->cleanup_seen) {
    uatomic_set(&t->cleanup_armed, 0);
    cmm_smp_mb();       /* armed before jend: a writer that saw it on published before this */
    end = uatomic_read(&t->jend);
    if (end == t->cleanup_seen)
      return;
    uatomic_set(&t->cleanup_armed, 1);
  }
  t->cleanup_seen = end;
  tm_start(&t->cleanup_tm, RT_CLEANUP_QUIET);
}

static void
rt_cleanup_run(struct rtable *t)
{
  u32 debug = uatomic_read(&t->debug);
  uint laggards = 0;
  u64 max_lag = 0;
  rcu_read_lock();
  wlock_take(&t->lock);
  rcu_hash_maintain(&t->nets);
  rt_index_settle(t);
  rt_index_account(t);
  u64 limit = rt_laggard_limit(t);
  btime now = time_mono_now();
  LIST_WALK_ENTRY(r, &t->readers, struct rt_reader, n) {
    u64 seq = uatomic_read(&r->seq);
    if (seq != r->seen_seq || !r->seen_at) {
      r->seen_seq = seq;
      r->seen_at = now;
    }
    u64 lag = t->jend - seq;
    /* one that has not moved for a while is let go until it reads again
     * (the importers' next batch would take it back else) */
    if (uatomic_read(&r->press) && (now - r->seen_at >= RT_PRESS_STUCK || uatomic_read(&r->laggard))) {
      uatomic_xchg(&r->idle, 1);
      rt_reader_press(r, RT_PRESS_NONE);
    }
    /* A stalled peer would pin every change from now on: tell its loop. */
    int stuck = now - r->seen_at >= RT_LAGGARD_STUCK;
    if (r->notify && ((lag > limit && stuck) || lag > 4 * limit) && !uatomic_read(&r->laggard)) {
      uatomic_set(&r->laggard, 1);
      rt_reader_press(r, RT_PRESS_NONE);
      ev_send(r->loop, r->notify);
      laggards++;
      max_lag = MAX(max_lag, lag);
    }
  }

  u64 from = uatomic_read(&t->jfirst_seq);
  struct rt_journal_block *kept, *gone = rt_journal_unlink_done(t, "journal cleanup", &kept);
  uint freed = (uint) (uatomic_read(&t->jfirst_seq) - from);
  u64 left = t->jend - uatomic_read(&t->jfirst_seq);
  wlock_give(&t->lock);
  rt_journal_retire(t, gone, kept);
  rcu_read_unlock();
  if ((debug & D_EVENTS) && laggards)
    log_msg(L_TRACE, "%s: %u readers up to %llu changes behind: they skip them and feed the table again",
            t->name, laggards, (unsigned long long) max_lag);
  if ((debug & D_EVENTS) && freed)
    log_msg(L_TRACE, "%s: Journal cleanup: %u changes freed, %llu kept for the slowest reader", t->name, freed,
            (unsigned long long) left);
}

/* A torn-down table's nets and routes, with the index that holds them:
 * freed by a walk of that index after one grace period, when no reader
 * can be on them. Freeing them one by one through batches of pointers
 * took 16 bytes per object at the very moment (67 MB for the 4.2M routes
 * and nets of a 10 x 300k route server, whose RSS then rose by 40% on
 * the way out), and removing each net from the index shrank it again and
 * again. */
struct rt_corpse {
  struct rcu_head rcu;
  struct rcu_hash nets;
  u64 *regions;
  struct rt_trie *trie;
};

static void
rt_corpse_free_rcu(struct rcu_head *h)
{
  struct rt_corpse *c = caa_container_of(h, struct rt_corpse, rcu);
  struct rcu_hash_iter it;
  for (struct rcu_hash_node *x = rcu_hash_walk(&c->nets, 0, &it), *next; x; x = next) {
    next = rcu_hash_next(&it);          /* before x goes */
    struct net *n = caa_container_of(x, struct net, node);
    for (struct rte *r = n->routes, *rn; r; r = rn) {
      rn = r->next;
      rte_free(r);
    }
    net_free(n);
  }
  rcu_hash_free(&c->nets);
  rt_index_regions_free(c->regions);
  if (c->trie)
    rt_trie_free(c->trie);
  free(c);
}

/* Free everything of a table nobody uses any more (table loop, last act).
 * At the daemon's exit a plain build leaves the routes, nets and journal
 * to the end of the process: freeing them one by one, with the references
 * they hold, took 35 s of the shutdown of a multi layout's 101 tables of
 * a million routes each (2 cores). Sanitizer builds free everything (their
 * slabs are malloc's), so that the leak checker and the use-after-free
 * checks still see every reference a route held let go. */
void
rt_table_destroy_data(struct rtable *t, int at_exit)
{
  rt_hostcache_free(t);
  rt_settle_stop(t);
  tm_stop(&t->cleanup_tm);
#ifndef BIRD_SANITIZED
  if (at_exit) {
    tm_stop(&t->index_tm);
    return;
  }
#else
  (void) at_exit;
#endif
  rcu_read_lock();
  wlock_take(&t->lock);
  ASSERT_DIE(list_empty(&t->readers));
  for (struct rt_journal_block *b = t->jfirst, *next; b; b = next) {
    next = b->next;
    uint used = b == t->jlast ? t->jend - b->first_seq : RT_JOURNAL_BLOCK;
    u32 ids[RT_JOURNAL_BLOCK];
    for (uint k = 0, n = rt_block_retire(b, used, ids); k < n; k++)
      rt_id_free(t, ids[k]);
  }
  t->jfirst = t->jlast = NULL;
  /* Remaining routes: none after a reconfigure removed the table (its
   * channels flushed them), all of them at daemon shutdown (channel_down()).
   * What they hold goes now; they go with their index, later. */
  struct rcu_hash_iter it;
  for (struct net *n = rt_first_net(t, &it); n; n = rt_next_net(t, &it))
    for (struct rte *r = n->routes; r; r = r->next)
      rte_release(t, r);
  struct rt_corpse *corpse = malloc(sizeof(*corpse));
  if (!corpse)
    die("Out of memory");
  corpse->nets = t->nets;
  memset(&t->nets, 0, sizeof(t->nets));
  corpse->regions = t->regions;
  t->regions = NULL;
  corpse->trie = t->trie;
  t->trie = NULL;
  t->feed_head = t->feed_tail = NULL;
  call_rcu(&corpse->rcu, rt_corpse_free_rcu);
  wlock_give(&t->lock);
  rcu_read_unlock();
  mem_account(MEM_TABLES, -(s64) t->id_map_size / 8, 0);
  mem_account(MEM_TABLES, 0, -(s64) t->index_bytes);
  t->index_bytes = 0;
  tm_stop(&t->index_tm);
  free(t->id_map);
  t->id_map = NULL;
}
