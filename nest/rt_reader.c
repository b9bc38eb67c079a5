/*
 * DOC: A table's readers: cursors over its journal. Each export channel,
 * pipe and feed owns one and moves it in its own loop (rt_reader_next),
 * telling the table how far it is done so that the cleanup
 * (nest/rt_cleanup.c) can retire what every reader has passed. A reader
 * never holds a pointer to a block it is done with, and reads the items
 * of a block only inside rcu_read_lock().
 *
 * Ownership: a reader is its loop's; the table reads its seq and done
 * (atomics) and lists it under the writer lock.
 */
#include "nest/rt.h"
#include "nest/proto.h"
#include "lib/log.h"
#include "lib/printf.h"

int
rt_reader_may_meet(const struct rt_reader *r)
{
  struct rtable *t = r->table;
  if (uatomic_read(&t->writing))
    return 1;
  cmm_smp_rmb();        /* writing before jend: see rt_writer_unlock */
  return uatomic_read(&t->jend) > uatomic_read(&r->seq);
}

u64
rt_journal_end_settled(struct rtable *t)
{
  wlock_take(&t->lock);
  u64 end = t->jend;
  wlock_give(&t->lock);
  return end;
}

u64
rt_readers_done_min_locked(struct rtable *t)
{
  u64 min = t->jend;
  LIST_WALK_ENTRY(r, &t->readers, struct rt_reader, n) {
    /* each done read once: a reader moving between two reads gave the
     * minimum its new done where another reader stood at its old one (the
     * journal then freed what that other reader still read). MIN() read
     * its arguments twice until session 76; the local keeps this safe
     * whatever the macro does. */
    u64 done = uatomic_read(&r->done);
    min = MIN(min, done);
  }
  return min;
}

u64
rt_readers_done_min(struct rtable *t)
{
  wlock_take(&t->lock);
  u64 min = rt_readers_done_min_locked(t);
  wlock_give(&t->lock);
  return min;
}

/* Sanitizer builds: two threads moving one reader at once, one's cursor
 * written back stale would go back; one taking it off the list while the
 * other reads would read blocks the cleanup no longer keeps for it. */
static inline void
rt_reader_enter(struct rt_reader *r UNUSED)
{
#ifdef BIRD_SANITIZED
  if (uatomic_xchg(&r->busy, 1))
    rt_reader_twice(r);
#endif
}

static inline void
rt_reader_leave(struct rt_reader *r UNUSED)
{
#ifdef BIRD_SANITIZED
  uatomic_set(&r->busy, 0);
#endif
}

void
rt_reader_attach(struct rtable *t, struct rt_reader *r, struct loop *l, struct event *notify)
{
  rt_reader_attach_at(t, r, l, notify, NULL);
}

void
rt_reader_attach_at(struct rtable *t, struct rt_reader *r, struct loop *l, struct event *notify,
                    const struct rt_reader *at)
{
  ASSERT_DIE(!r->table);      /* twice in the readers' list would corrupt it */
  r->table = t;
  r->loop = l;
  r->notify = notify;
  r->block = NULL;
  r->end = 0;
  r->own = r->sender = 0;
  uatomic_set(&r->laggard, 0);
  r->seen_seq = 0;
  r->seen_at = 0;
  uatomic_set(&r->press, 0);
  uatomic_set(&r->idle, 0);
  uatomic_set(&r->polls, NULL);
  wlock_take(&t->lock);
  rt_reader_check_at(t, at);
  /* at is attached, so its items are there until we are too */
  uatomic_set(&r->seq, at ? uatomic_read(&at->seq) : t->jend);
  uatomic_set(&r->done, r->seq);
#ifdef BIRD_SANITIZED
  r->attach_seq = r->seq;
  bsnprintf(r->attach_loop, sizeof(r->attach_loop), "%s", loop_current() ? loop_name(loop_current()) : "none");
#endif
  r->held = 0;
  r->left_oldest = 0;
  list_add_tail(&t->readers, &r->n);
  uatomic_set(&t->reader_count, t->reader_count + 1);
  wlock_give(&t->lock);
}

void
rt_reader_detach(struct rt_reader *r)
{
  struct rtable *t = r->table;
  if (!t)
    return;
  rt_reader_enter(r);
  wlock_take(&t->lock);
  list_del(&r->n);
  uatomic_set(&t->reader_count, t->reader_count - 1);
  wlock_give(&t->lock);
  /* Only now: writers raise the level of readers in the list, under the
   * lock; before, one could raise it after us, and the table would stay
   * pressed for good. */
  rt_reader_press(r, RT_PRESS_NONE);
  r->table = NULL;
  r->block = NULL;
  rt_reader_leave(r);
  ev_send(t->loop, &t->cleanup_ev);
}

struct net *
rt_feed_last(struct rtable *t)
{
  wlock_take(&t->lock);
  struct net *n = t->feed_tail;
  wlock_give(&t->lock);
  return n;
}

u64
rt_reader_lag(const struct rt_reader *r)
{
  return uatomic_read(&r->table->jend) - r->seq;
}

u64
rt_laggard_limit(struct rtable *t)
{
  return RT_LAGGARD_MIN + (u64) uatomic_read(&t->net_count);
}

/* The reader is done with the items before seq. */
static void
rt_reader_done_to(struct rt_reader *r, u64 seq)
{
  if (uatomic_read(&r->done) == seq)
    return;
#ifdef BIRD_SANITIZED
  if (seq < uatomic_read(&r->done))
    rt_reader_back(r, seq);
#endif
  uatomic_set(&r->done, seq);
  /* Done with the oldest block: we may have been what kept it. Without
   * this, what the slowest reader still held when the last change came
   * in would stay until the table changes again. */
  if (r->left_oldest) {
    r->left_oldest = 0;
    ev_send(r->table->loop, &r->table->cleanup_ev);
  }
}

void
rt_reader_hold(struct rt_reader *r)
{
  r->held = 1;
}

void
rt_reader_release(struct rt_reader *r)
{
  r->held = 0;
  if (r->table)
    rt_reader_done_to(r, r->seq);
}

/* The reader's cursor, the block of item seq (its next). Inside
 * rcu_read_lock(). */
static inline struct rt_journal_block *
rt_reader_block(struct rt_reader *r, u64 seq)
{
  if (!r->block) {
    struct rt_journal_block *b = rcu_dereference(r->table->jfirst);
    while (b->first_seq + RT_JOURNAL_BLOCK <= seq)
      b = rcu_dereference(b->next);
    r->block = b;
  }
  return r->block;
}

/* The reader was given item seq. Never keep a pointer to a block we are
 * done with: cleanup may free it as soon as our done passes its end. NULL
 * is found again from jfirst. */
static inline void
rt_reader_moved(struct rt_reader *r, u64 seq)
{
  struct rtable *t = r->table;
  if (seq + 1 != r->block->first_seq + RT_JOURNAL_BLOCK)
    return;
  /* the cleanup is told once we are done with this item */
  r->left_oldest |= r->block->first_seq == uatomic_read(&t->jfirst_seq);
  r->block = rcu_dereference(r->block->next);
  /* a block's worth at a time: jend's line is the importers' */
  if (uatomic_read(&r->press))
    rt_reader_press_ease(r, uatomic_read(&t->jend) - seq);
}

static inline const struct rt_journal_item *
rt_reader_next_one(struct rt_reader *r)
{
  struct rtable *t = r->table;
  u64 seq = r->seq;
  if (uatomic_read(&r->idle))
    uatomic_set(&r->idle, 0);
  /* Asking for the next item, the reader is done with the one before */
  if (!r->held)
    rt_reader_done_to(r, seq);
  if (seq >= r->end) {
    r->end = uatomic_read(&t->jend);      /* acquire: pairs with publish */
    if (seq >= r->end) {
      /* Caught up with blocks still kept behind: whoever kept them (a
       * pin, a reader that went) may be gone with no one left to pass
       * the oldest block below, and no import to come. */
      if (seq - uatomic_read(&t->jfirst_seq) >= 2 * RT_JOURNAL_BLOCK && !ev_active(&t->cleanup_ev))
        ev_send(t->loop, &t->cleanup_ev);
      rt_reader_press(r, RT_PRESS_NONE);
      return NULL;
    }
  }
  rt_reader_check(r, seq);
  /* the block first: the call sets r->block, which the index must not be
   * read from before it (the two are unsequenced in one expression) */
  struct rt_journal_block *b = rt_reader_block(r, seq);
  uint i = (uint) (seq - b->first_seq);
  const struct rt_journal_item *item = &b->items[i];
  r->sender = b->sender[i];
  uatomic_set(&r->seq, seq + 1);
  rt_reader_moved(r, seq);
  return item;
}

const struct rt_journal_item *
rt_reader_next(struct rt_reader *r)
{
  rt_reader_enter(r);
  const struct rt_journal_item *it = rt_reader_next_one(r);
  rt_reader_leave(r);
  return it;
}

uint
rt_reader_window(struct rt_reader *r, const struct rt_journal_item **out, u16 *senders, uint max)
{
  u64 seq = r->seq;
  ASSERT(r->held);
  if (seq >= r->end)
    r->end = uatomic_read(&r->table->jend);       /* acquire: pairs with publish */
  if (seq >= r->end)
    return 0;
  rt_reader_check(r, seq);
  /* The blocks past the reader's are the journal's (published up to
   * r->end); none of them goes before the reader passes it. */
  struct rt_journal_block *b = rt_reader_block(r, seq);
  uint n = (uint) MIN((u64) max, r->end - seq);
  uint at = (uint) (seq - b->first_seq);
  for (uint i = 0; i < n; i++, at++) {
    if (at == RT_JOURNAL_BLOCK) {
      b = rcu_dereference(b->next);
      at = 0;
    }
    out[i] = &b->items[at];
    senders[i] = b->sender[at];
  }
  return n;
}

uint
rt_reader_pass_own(struct rt_reader *r, uint *withdrawals)
{
  struct rtable *t = r->table;
  if (!t || !r->own || r->held)
    return 0;
  rt_reader_enter(r);
  rcu_read_lock();
  u64 start = r->seq, seq = start, end = uatomic_read(&t->jend);   /* acquire: pairs with publish */
  if (seq < end)
    rt_reader_check(r, seq);
  for (; seq < end; seq++) {
    struct rt_journal_block *b = rt_reader_block(r, seq);
    uint i = seq - b->first_seq;
    if (b->sender[i] != r->own)
      break;
    *withdrawals += !b->items[i].new_rte;
    r->sender = r->own;
    uatomic_set(&r->seq, seq + 1);
    rt_reader_moved(r, seq);
  }
  uint n = seq - start;
  if (n) {
    r->end = end;
    rt_reader_done_to(r, seq);
  }
  rcu_read_unlock();
  rt_reader_leave(r);
  return n;
}

/* Distances ahead of the reader: the records of an item, then (once those
 * arrived) the attributes of its new route. */
#define RT_PREFETCH_FAR 8
#define RT_PREFETCH_NEAR 4

/* Items of the reader's own sender are not worth loading. */
static inline const struct rt_journal_item *
rt_reader_peek(const struct rt_reader *r, u64 seq, u64 end)
{
  const struct rt_journal_block *b = r->block;
  if (!b || seq >= end || seq - b->first_seq >= RT_JOURNAL_BLOCK)
    return NULL;
  if (r->own && b->sender[seq - b->first_seq] == r->own)
    return NULL;
  return &b->items[seq - b->first_seq];
}

void
rt_reader_prefetch(const struct rt_reader *r)
{
  u64 end = r->end;
  const struct rt_journal_item *far = rt_reader_peek(r, r->seq + RT_PREFETCH_FAR, end);
  if (far) {
    /* the address is the reader's key (hash lookups): in a net of 48
     * bytes it lies on the next line as often as not */
    __builtin_prefetch(far->net);
    __builtin_prefetch(&far->net->n);
    rt_prefetch_rte(far->new_rte);
    rt_prefetch_rte(far->new_best);
    rt_prefetch_rte(far->old_best);
    rt_prefetch_rte(far->retired);
  }
  const struct rt_journal_item *near = rt_reader_peek(r, r->seq + RT_PREFETCH_NEAR, end);
  if (near && near->new_rte)
    __builtin_prefetch(rte_attrs(near->new_rte));
}

const struct rt_journal_item *
rt_reader_ahead(const struct rt_reader *r)
{
  return rt_reader_peek(r, r->seq + RT_PREFETCH_NEAR, r->end);
}

void
rt_reader_prefetch_net(const struct rt_reader *r)
{
  const struct rt_journal_item *far = rt_reader_peek(r, r->seq + RT_PREFETCH_FAR, r->end);
  if (far && far->new_best != far->old_best)
    __builtin_prefetch(&far->net->n);
}
