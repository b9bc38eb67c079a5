/*
 * DOC: Sanitizer builds check what the journal's freeing rests on: every
 * reader of a table is in its list, none behind the journal's first item,
 * one sent events or polling is read in its own loop only, and a reader
 * started at another starts where that one's items still are. A reader
 * missing from the list, a done ahead of its cursor, or a cursor moved by
 * two threads would have its blocks freed under it. TSan saw readers
 * behind the journal's start four times before these could say how; the
 * unlink notes then showed a minimum above a reader's done in one hold of
 * the lock: MIN() read a moving reader's done twice (fixed in
 * rt_readers_done_min_locked). They say which reader and where, as BUG lines
 * the functional tests fail on: the list is checked before and after each
 * cleanup or trim frees blocks (after: that one freed what a reader still
 * reads; before: something since did), and a reader whose done would go
 * back is reported at once. The dump tells where each reader was
 * attached and the table's last unlinks, each with the readers and the
 * done it saw: an unlink that freed past a reader did not see it in the
 * list, saw a done it later left, or took a minimum above a done it saw
 * (the MIN() case). Plain builds compile none of
 * it (nest/rt.h makes the calls empty).
 */
#include <stdarg.h>
#include "nest/rt.h"
#include "lib/log.h"
#include "lib/printf.h"

#ifdef BIRD_SANITIZED
u32 rt_readers_bugs;

/* Under the writer lock. */
static void
rt_readers_dump(struct rtable *t, const char *why)
{
  uint cnt = 0;
  uatomic_inc(&rt_readers_bugs);
  u64 first = uatomic_read(&t->jfirst_seq);
  log_msg(L_BUG, "%s: %s; journal %llu-%llu, %u readers attached", t->name, why, (unsigned long long) first,
          (unsigned long long) t->jend, t->reader_count);
  LIST_WALK_ENTRY(r, &t->readers, struct rt_reader, n)
    log_msg(L_BUG, "%s: reader %u %p of %s in %s: seq %llu done %llu notify %p polls %p, attached at %llu in %s",
            t->name, cnt++, r, r->table ? r->table->name : "none", r->loop ? loop_name(r->loop) : "-",
            (unsigned long long) uatomic_read(&r->seq), (unsigned long long) uatomic_read(&r->done), r->notify,
            uatomic_read(&r->polls), (unsigned long long) r->attach_seq, r->attach_loop);
  /* the unlinks, oldest first: which one freed what a reader still
   * reads, and which readers (at what done) it saw */
  for (uint i = 0; i < RT_UNLINK_LOG; i++) {
    const struct rt_unlink_note *u = &t->unlinks[(t->unlink_next + i) % RT_UNLINK_LOG];
    if (!u->where)
      continue;
    char seen[RT_UNLINK_READERS * 48] = "", *p = seen;
    for (uint k = 0; k < MIN(u->readers, RT_UNLINK_READERS); k++)
      p += bsnprintf(p, seen + sizeof(seen) - p, " %p@%llu", u->seen[k].r, (unsigned long long) u->seen[k].done);
    log_msg(L_BUG, "%s: unlink by %s in %s: journal %llu-%llu, freed to %llu for min %llu; %u readers:%s", t->name,
            u->where, u->loop, (unsigned long long) u->from, (unsigned long long) u->end,
            (unsigned long long) u->to, (unsigned long long) u->min, u->readers, seen);
  }
}

void
rt_readers_unlinked(struct rtable *t, const char *where, u64 min, u64 from)
{
  struct rt_unlink_note *u = &t->unlinks[t->unlink_next++ % RT_UNLINK_LOG];
  *u = (struct rt_unlink_note) { .where = where, .min = min, .from = from, .to = uatomic_read(&t->jfirst_seq),
                                 .end = t->jend };
  bsnprintf(u->loop, sizeof(u->loop), "%s", loop_current() ? loop_name(loop_current()) : "none");
  LIST_WALK_ENTRY(r, &t->readers, struct rt_reader, n) {
    if (u->readers < RT_UNLINK_READERS) {
      u->seen[u->readers].r = r;
      u->seen[u->readers].done = uatomic_read(&r->done);
    }
    u->readers++;
  }
  char why[64];
  bsnprintf(why, sizeof(why), "after %s", where);
  rt_readers_check(t, why);
}

void
rt_readers_check(struct rtable *t, const char *where)
{
  uint cnt = 0;
  u64 first = uatomic_read(&t->jfirst_seq);
  LIST_WALK_ENTRY(r, &t->readers, struct rt_reader, n) {
    cnt++;
    u64 done = uatomic_read(&r->done);      /* before seq: the owner moves both up, done first */
    if (r->table != t || done < first || uatomic_read(&r->seq) < done) {
      rt_readers_dump(t, where);
      return;
    }
  }
  if (cnt != t->reader_count)
    rt_readers_dump(t, where);
}

/* Outside the lock: the dump under it, for a reason made like printf's. */
static void
rt_readers_dump_why(struct rtable *t, const char *fmt, ...)
{
  char why[128];
  va_list args;
  va_start(args, fmt);
  bvsnprintf(why, sizeof(why), fmt, args);
  va_end(args);
  wlock_take(&t->lock);
  rt_readers_dump(t, why);
  wlock_give(&t->lock);
}

/* The reader's loop, before it reads item seq: still in the journal? */
void
rt_reader_check(struct rt_reader *r, u64 seq)
{
  struct rtable *t = r->table;
  /* Only its loop moves a reader that is sent events or polls (a pin
   * goes from hand to hand): from two threads, one's stale cursor written
   * back would take it behind what the cleanup freed. (Unit tests read in
   * threads of no loop.) */
  struct loop *l = loop_current();
  if ((r->notify || uatomic_read(&r->polls)) && l && l != r->loop)
    rt_readers_dump_why(t, "reader %p of loop %s read in loop %s", r, loop_name(r->loop), loop_name(l));
  if (seq < uatomic_read(&t->jfirst_seq))
    rt_readers_dump_why(t, "reader %p at %llu, behind the journal's start: its items were freed", r,
                        (unsigned long long) seq);
}

/* The reader's loop: its done was to go back to seq. */
void
rt_reader_back(struct rt_reader *r, u64 seq)
{
  rt_readers_dump_why(r->table, "reader %p done goes back from %llu to %llu", r,
                      (unsigned long long) uatomic_read(&r->done), (unsigned long long) seq);
}

/* The reader's loop: another thread is in rt_reader_next() for r too. */
void
rt_reader_twice(struct rt_reader *r)
{
  struct loop *l = loop_current();
  rt_readers_dump_why(r->table, "reader %p read by two threads at once (one in loop %s)", r,
                      l ? loop_name(l) : "none");
}

/* Under the writer lock: a new reader takes at's place, so at must be
 * one of the table's, whose items are still there. */
void
rt_reader_check_at(struct rtable *t, const struct rt_reader *at)
{
  if (!at || (at->table == t && uatomic_read(&at->seq) >= uatomic_read(&t->jfirst_seq)))
    return;
  char why[128];
  bsnprintf(why, sizeof(why), "a reader starts at %p (of %s), at %llu", at, at->table ? at->table->name : "none",
            (unsigned long long) uatomic_read(&at->seq));
  rt_readers_dump(t, why);
}
#endif
