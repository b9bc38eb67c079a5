/*
 * Unit tests of what frees the export journal: the table loop's cleanup
 * spares what readers hold, a table nothing reads keeps one block, and
 * writers free what every reader passed when the cleanup cannot come,
 * a reader passes its own channel's writes at once, and the least done
 * of readers that move is never above one of them (run under TSan in CI;
 * that last one fails there without its fix, its race window being a
 * few instructions wide).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "conf/conf.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/timeutil.h"
#include "nest/proto.h"
#include "nest/rt.h"
#include "nest/test_attrs.h"
#include "nest/test_loops.h"
#include "nest/test_table.h"

/* r attached to t, then n's route of s replaced over two journal blocks,
 * each time with attributes of its own (preference base + k): the table's
 * route holds the only reference on each. */
static void
replaced_over_two_blocks(struct rtable *t, struct rt_reader *r, struct rte_src *s, const net_addr *n, u32 base)
{
  rt_reader_attach(t, r, main_loop(), NULL);
  for (u32 k = 0; k < 2 * RT_JOURNAL_BLOCK + 2; k++) {
    struct ea_list *a = attrs_pref(base + k, 77);
    rt_update(t, n, s, NULL, a, 0);
    ea_unref(a);
  }
}

/* The cleanup spares the item a reader has in hand: rt_reader_next() has
 * moved the reader's seq past it, but until the reader asks for the next
 * one its retired route keeps its attributes and id (a catch-up takes a
 * reference on those attributes). Here the item ends the journal's oldest
 * block and the table's route held the only reference: a cleanup run then
 * released them (the random update-group test's <BUG> in ea_ref). */
static void
test_cleanup_spares_the_item_in_hand(void **state)
{
  (void) state;
  struct rtable *t = test_table();
  /* static: reachable once its routes went (LeakSanitizer) */
  static struct rte_src *s;
  if (!s)
    s = rt_get_source(fake_proto("hand"), 0);
  net_addr n;
  net4(&n, 9191);
  struct rt_reader r = { 0 };
  replaced_over_two_blocks(t, &r, s, &n, 1000);
  assert_int_equal(uatomic_read(&t->reader_count), 1);
  rcu_read_lock();
  const struct rt_journal_item *it;
  /* to the item that ends the oldest block */
  while ((it = rt_reader_next(&r)) && !(r.seq - uatomic_read(&t->jfirst_seq) == RT_JOURNAL_BLOCK && it->retired))
    ;
  assert_non_null(it);
  u64 in_hand = r.seq - 1;
  struct rte *gone = it->retired;
  loop_call_sync(t->loop, rt_cleanup, t);
  assert_true(uatomic_read(&t->jfirst_seq) <= in_hand);
  assert_true(uatomic_read(&rte_attrs(gone)->uc) > 0);
  /* asking for the next one hands it back: the block may go */
  assert_non_null(rt_reader_next(&r));
  loop_call_sync(t->loop, rt_cleanup, t);
  assert_true(uatomic_read(&t->jfirst_seq) > in_hand);
  rcu_read_unlock();
  rt_reader_detach(&r);
  rt_update(t, &n, s, NULL, NULL, 0);
}

/* A held reader (rt_reader_hold) keeps what every item it was given
 * names: an update group keeps the routes of an export pass in a step and
 * runs the class filters at its end, taking references on their
 * attributes. A route the pass met and a later item of the same pass
 * replaced went with its block once the reader had read past it: the
 * random update-group test's <BUG> in ea_ref under a flood of routes with
 * paths of their own. Held, the cleanup keeps the blocks; released, they
 * go. */
static void
test_cleanup_spares_what_a_hold_keeps(void **state)
{
  (void) state;
  struct rtable *t = test_table();
  static struct rte_src *s;
  if (!s)
    s = rt_get_source(fake_proto("held"), 0);
  net_addr n;
  net4(&n, 9192);
  struct rt_reader r = { 0 };
  replaced_over_two_blocks(t, &r, s, &n, 2000);
  rcu_read_lock();
  rt_reader_hold(&r);
  const struct rt_journal_item *it = rt_reader_next(&r);
  assert_non_null(it);
  u64 first = r.seq - 1;
  const struct rte *kept = it->new_rte;
  /* the rest of the pass: the next item retires kept, two blocks end */
  while (rt_reader_next(&r))
    ;
  loop_call_sync(t->loop, rt_cleanup, t);
  u64 kept_from = uatomic_read(&t->jfirst_seq);
  u32 uc = uatomic_read(&rte_attrs(kept)->uc);
  /* the pass is over: its blocks may go */
  rt_reader_release(&r);
  loop_call_sync(t->loop, rt_cleanup, t);
  u64 then_from = uatomic_read(&t->jfirst_seq);
  rcu_read_unlock();
  rt_reader_detach(&r);
  rt_update(t, &n, s, NULL, NULL, 0);
  /* checked out of the read section: a failure must not leave it held */
  assert_true(kept_from <= first);
  assert_true(uc > 0);
  assert_true(then_from > first);
}

/* A table nothing reads keeps no more than its last journal block, even
 * with fewer changes than RT_CLEANUP_THRESHOLD: a pipe's peer table that
 * no channel reads kept 8 blocks (128 kB) and the routes they retired for
 * good. Replacing routes, so that the blocks hold retired routes too. */
static void
test_journal_freed_without_readers(void **state)
{
  (void) state;
  struct rtable *t = test_aux_table_new("unread", NET_IP4);
  struct two_srcs x = two_srcs_new();
  net_addr n;
  const uint changes = 3 * RT_JOURNAL_BLOCK;
  for (uint k = 0; k < changes; k++) {
    net4(&n, 400000 + k % 100);
    rt_update(t, &n, x.s1, NULL, (k / 100) & 1 ? x.hi : x.lo, 0);
  }
  btime until = time_mono_now() + S_ 8;
  while (uatomic_read(&t->jend) - uatomic_read(&t->jfirst_seq) > RT_JOURNAL_BLOCK && time_mono_now() < until)
    usleep(20000);
  assert_true(uatomic_read(&t->jend) - uatomic_read(&t->jfirst_seq) <= RT_JOURNAL_BLOCK);
  for (uint k = 0; k < 100; k++) {
    net4(&n, 400000 + k);
    rt_update(t, &n, x.s1, NULL, NULL, 0);
  }
  test_aux_table_free(t);
  two_srcs_free(&x);
}

/* The table loop held in a hook of its own until let go: its cleanup
 * cannot run meanwhile. */
static pthread_mutex_t stall_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t stall_cond = PTHREAD_COND_INITIALIZER;
static int stall_state;         /* 1: the loop is held, 2: let go */

static void
stall_hook(void *data)
{
  (void) data;
  pthread_mutex_lock(&stall_lock);
  stall_state = 1;
  pthread_cond_broadcast(&stall_cond);
  while (stall_state != 2)
    pthread_cond_wait(&stall_cond, &stall_lock);
  pthread_mutex_unlock(&stall_lock);
}

static void
stall_set(int state)
{
  pthread_mutex_lock(&stall_lock);
  if (state == 2)
    stall_state = 2;
  pthread_cond_broadcast(&stall_cond);
  while (stall_state != state)
    pthread_cond_wait(&stall_cond, &stall_lock);
  pthread_mutex_unlock(&stall_lock);
}

/* Writers free what every reader passed when the table loop's cleanup
 * cannot come (its loop waits for a thread behind the importers'): the
 * journal stays within about RT_CLEANUP_THRESHOLD of the slowest reader,
 * not the whole load. Without the writers' trim it held all 25k items. */
static void
test_writers_trim_the_journal(void **state)
{
  (void) state;
  enum { BATCH = 256, BATCHES = 99, BASE = 23000 };
  /* a table of its own: a reader other tests leave on master4 would hold
   * its journal */
  struct rtable *t = test_aux_table_new("trimmed", NET_IP4);
  struct two_srcs x = two_srcs_new();
  struct rt_reader r = { 0 };
  rt_reader_attach(t, &r, main_loop(), NULL);
  static struct event stall;
  ev_init(&stall, stall_hook, NULL);
  stall_state = 0;
  ev_send(t->loop, &stall);
  stall_set(1);
  static net_addr nets[BATCH];
  struct rt_import im[BATCH];
  u64 most = 0;
  for (uint b = 0; b < BATCHES; b++) {
    for (uint k = 0; k < BATCH; k++) {
      net4(&nets[k], BASE + b * BATCH + k);
      im[k] = (struct rt_import){ .net = &nets[k], .src = x.s1, .attrs = x.lo };
    }
    rt_update_batch(t, NULL, im, BATCH);
    rcu_read_lock();
    while (rt_reader_next(&r))
      ;
    rcu_read_unlock();
    most = MAX(most, uatomic_read(&t->jend) - uatomic_read(&t->jfirst_seq));
  }
  stall_set(2);
  for (uint b = 0; b < BATCHES; b++) {
    for (uint k = 0; k < BATCH; k++) {
      net4(&nets[k], BASE + b * BATCH + k);
      im[k] = (struct rt_import){ .net = &nets[k], .src = x.s1 };
    }
    rt_update_batch(t, NULL, im, BATCH);
  }
  rt_reader_detach(&r);
  test_aux_table_free(t);
  two_srcs_free(&x);
  assert_true(most <= 2 * RT_CLEANUP_THRESHOLD);
}

/* Writes of `count` routes of nets base.. through c: routes of src, or
 * their withdrawals (attrs NULL). */
static void
write_through(struct rtable *t, struct channel *c, struct rte_src *src, struct ea_list *attrs, u32 base, u32 count)
{
  enum { BATCH = 64 };
  net_addr nets[BATCH];
  struct rt_import im[BATCH];
  for (u32 done = 0; done < count;) {
    uint k = 0;
    for (; k < BATCH && done < count; k++, done++) {
      net4(&nets[k], base + done);
      im[k] = (struct rt_import){ .net = &nets[k], .src = src, .attrs = attrs };
    }
    rt_update_batch(t, c, im, k);
  }
}

/* A pipe's reader passes the copies the pipe just wrote into its table
 * (rt_reader_pass_own), across blocks, up to the first item of another
 * sender, which it reads as before; a reader in a pass (held) is left
 * alone. Passed, the items no longer keep the journal. */
static void
test_reader_passes_own_writes(void **state)
{
  (void) state;
  enum { BASE = 31000, OWN = RT_JOURNAL_BLOCK + 40, GONE = 30, LATER = 2 * RT_JOURNAL_BLOCK };
  struct rtable *t = test_aux_table_new("passing", NET_IP4);
  struct channel *own = fake_channel(t, "pipe"), *other = fake_channel(t, "peer");
  struct two_srcs x = two_srcs_new();
  struct rt_reader r = { 0 };
  rt_reader_attach(t, &r, main_loop(), NULL);
  r.own = own->sender_id;
  u64 start = r.seq;
  write_through(t, own, x.s1, x.lo, BASE, OWN);
  write_through(t, own, x.s1, NULL, BASE, GONE);
  write_through(t, other, x.s2, x.hi, BASE + OWN, 1);
  uint wd = 0;
  assert_int_equal(rt_reader_pass_own(&r, &wd), OWN + GONE);
  assert_int_equal(wd, GONE);
  assert_int_equal(r.seq, start + OWN + GONE);
  assert_int_equal(uatomic_read(&r.done), r.seq);
  /* another's item stops it; read, as ever */
  assert_int_equal(rt_reader_pass_own(&r, &wd), 0);
  rcu_read_lock();
  const struct rt_journal_item *it = rt_reader_next(&r);
  assert_non_null(it);
  assert_int_equal(r.sender, other->sender_id);
  assert_null(rt_reader_next(&r));
  rcu_read_unlock();
  /* in a pass, the reader's items are its pass's */
  write_through(t, own, x.s1, x.lo, BASE + OWN + 1, LATER);
  rt_reader_hold(&r);
  assert_int_equal(rt_reader_pass_own(&r, &wd), 0);
  rt_reader_release(&r);
  wd = 0;
  assert_int_equal(rt_reader_pass_own(&r, &wd), LATER);
  assert_int_equal(wd, 0);
  /* nothing holds the blocks passed */
  loop_call_sync(t->loop, rt_cleanup, t);
  assert_true(uatomic_read(&t->jfirst_seq) > start + OWN + GONE + 1);
  rt_reader_detach(&r);
  write_through(t, own, x.s1, NULL, BASE + GONE, OWN + 1 + LATER - GONE);
  write_through(t, other, x.s2, NULL, BASE + OWN, 1);
  fake_channel_free(own);
  fake_channel_free(other);
  test_aux_table_free(t);
  two_srcs_free(&x);
}

/* The least done of a table's readers, while they move: never above
 * where one of them is. Two readers stand at the same item; one moves on
 * while the other stays. MIN() evaluated its arguments twice, and a
 * reader moving between the two reads gave the minimum its new done: the
 * cleanup freed a block the reader that stayed had yet to read (the host
 * cache's reader, TSan, random group test). The readers are moved here by
 * their done alone, as rt_reader_next() moves it, by a thread of their
 * own; the walk runs under the writer lock, as the cleanup's does. */
struct done_mover {
  struct rt_reader *stays, *moves;
  u64 at;                       /* atomic: where both stand now */
  u32 stop;                     /* atomic */
};

static void *
done_mover_main(void *arg)
{
  struct done_mover *m = arg;
  for (u64 k = 1; !uatomic_read(&m->stop); k++) {
    uatomic_set(&m->moves->done, k);
    uatomic_set(&m->stays->done, k);
    uatomic_set(&m->at, k);
    for (uint i = 0; i < 64; i++)
      caa_cpu_relax();
    uatomic_set(&m->moves->done, k + 1);        /* one moves on; the other stays a while */
    for (uint i = 0; i < 256; i++)
      caa_cpu_relax();
  }
  return NULL;
}

static void
test_done_min_while_readers_move(void **state)
{
  (void) state;
  struct rtable *t = test_aux_table_new("donemin", NET_IP4);
  static struct rt_reader stays, moves;
  rt_reader_attach(t, &stays, NULL, NULL);
  rt_reader_attach(t, &moves, NULL, NULL);
  struct done_mover m = { .stays = &stays, .moves = &moves };
  /* the table's end past every done the mover writes: the walk starts from it */
  wlock_take(&t->lock);
  u64 jend = t->jend;
  t->jend = (u64) 1 << 40;
  wlock_give(&t->lock);
  pthread_t th;
  pthread_create(&th, NULL, done_mover_main, &m);
  uint above = 0, walks = 0;
  btime until = time_mono_now() + S_ 2;
  while (time_mono_now() < until && !above) {
    wlock_take(&t->lock);
    u64 min = rt_readers_done_min_locked(t);
    u64 stayed = uatomic_read(&stays.done);
    wlock_give(&t->lock);
    above += min > stayed;
    walks++;
  }
  uatomic_set(&m.stop, 1);
  pthread_join(th, NULL);
  wlock_take(&t->lock);
  t->jend = jend;
  wlock_give(&t->lock);
  uatomic_set(&stays.done, jend);
  uatomic_set(&moves.done, jend);
  uatomic_set(&stays.seq, jend);
  uatomic_set(&moves.seq, jend);
  rt_reader_detach(&stays);
  rt_reader_detach(&moves);
  test_aux_table_free(t);
  assert_true(walks > 0);
  assert_int_equal(above, 0);
}

/* Run by nest/test_loops.h in a thread of their own; the main thread runs
 * the main loop, which the table code sends its cleanup events through. */
static const struct CMUnitTest tests[] = {
  cmocka_unit_test(test_cleanup_spares_the_item_in_hand),
  cmocka_unit_test(test_cleanup_spares_what_a_hold_keeps),
  cmocka_unit_test(test_journal_freed_without_readers),
  cmocka_unit_test(test_writers_trim_the_journal),
  cmocka_unit_test(test_reader_passes_own_writes),
  cmocka_unit_test(test_done_min_while_readers_move),
};

int
main(void)
{
  return test_run_with_loops("rt_journal_test", tests, NULL);
}
