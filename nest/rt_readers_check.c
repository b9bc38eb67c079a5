/*
 * DOC: Sanitizer builds check what the journal's freeing rests on: every
 * reader of a table is in its list, none behind the journal's first item.
 * A reader missing from the list, or a done ahead of its cursor, would
 * have its blocks freed under it; TSan saw that once (the host cache's
 * reader in rt_reader_next, test_rejoin_under_churn[marker]) and could
 * not say which reader the cleanup had missed. These say it, as a BUG
 * line the functional tests fail on. Plain builds compile none of it
 * (nest/rt.h makes the calls empty).
 */
#include "nest/rt.h"
#include "lib/log.h"
#include "lib/printf.h"

#ifdef BIRD_SANITIZED
/* Under the writer lock. */
static void
rt_readers_dump(struct rtable *t, const char *why)
{
  uint cnt = 0;
  u64 first = uatomic_read(&t->jfirst_seq);
  log_msg(L_BUG, "%s: %s; journal %llu-%llu, %u readers attached", t->name, why, (unsigned long long) first,
          (unsigned long long) t->jend, t->reader_count);
  LIST_WALK_ENTRY(r, &t->readers, struct rt_reader, n)
    log_msg(L_BUG, "%s: reader %u %p of %s in %s: seq %llu done %llu notify %p polls %p", t->name, cnt++, r,
            r->table ? r->table->name : "none", r->loop ? loop_name(r->loop) : "-", (unsigned long long) r->seq,
            (unsigned long long) r->done, r->notify, r->polls);
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

/* The reader's loop, before it reads item seq: still in the journal? */
void
rt_reader_check(struct rt_reader *r, u64 seq)
{
  struct rtable *t = r->table;
  if (seq >= uatomic_read(&t->jfirst_seq))
    return;
  char why[128];
  bsnprintf(why, sizeof(why), "reader %p at %llu, behind the journal's start: its items were freed", r,
            (unsigned long long) seq);
  wlock_take(&t->lock);
  rt_readers_dump(t, why);
  wlock_give(&t->lock);
}
#endif
