/*
 * Unit tests of import backpressure (nest/rt_press.c): readers that fall
 * behind press or crowd their table, and the pipes share one crowding
 * mark. A program of its own: no other reader (the host cache's) may be
 * attached to master4 while these count how far behind readers are.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <unistd.h>

#include "lib/loop.h"
#include "nest/rt.h"
#include "nest/test_loops.h"
#include "nest/test_table.h"

static void press_notified(void *data) { (void) data; }
/* A poller's event: counts the times a writer had it read. */
static void press_poked(void *data) { uatomic_inc((u32 *) data); }

/* Changes that a route source makes to PRESS_NETS nets: n of them. A
 * reader r, if given, moves on by one every 256 of them: it reads, but
 * slowly (one that does not move at all for RT_PRESS_STUCK is let go by
 * the table, and a sanitizer build is that slow). */
#define PRESS_NETS 4096
static void
press_churn(struct rtable *t, struct two_srcs *x, uint from, uint n, struct rt_reader *r)
{
  for (uint i = from; i < from + n; i++) {
    net_addr a;
    net4(&a, 40000 + i % PRESS_NETS);
    rt_update(t, &a, x->s1, NULL, (i / PRESS_NETS) & 1 ? x->hi : x->lo, 0);
    if (r && !(i & 255)) {
      rcu_read_lock();
      assert_non_null(rt_reader_next(r));
      rcu_read_unlock();
    }
  }
}

/* What press_churn() left: its nets withdrawn, its sources freed. */
static void
press_done(struct rtable *t, struct two_srcs *x)
{
  for (uint i = 0; i < PRESS_NETS; i++) {
    net_addr a;
    net4(&a, 40000 + i);
    rt_update(t, &a, x->s1, NULL, NULL, 0);
  }
  two_srcs_free(x);
}

/* The crowding mark follows a table's size up to the pipes' share: n
 * more nets of x's second source (11.0.0.0/24 on, away from the
 * churn's), added or withdrawn. */
#define PRESS_FULL (RT_PRESS_COPIES_SHARE * RT_PRESS_COPIES_MAX)
static void
press_fill(struct rtable *t, struct two_srcs *x, uint n, int add)
{
  for (uint i = 0; i < n; i++) {
    net_addr a;
    net_fill_ip4(&a, ip4_from_u32(0x0b000000 | (i << 8)), 24);
    rt_update(t, &a, x->s2, NULL, add ? x->lo : NULL, 0);
  }
}

/* Import backpressure: a reader that reads presses the table once it is
 * high behind, until it is back within low (the table's marks); one that
 * stopped of its own accord (rt_reader_idle) does not, until it reads
 * again; a reader's leaving takes its pressure along; a pin never
 * presses, a reader without notify that polls does. (The table lets a
 * reader go that has not moved for RT_PRESS_STUCK; the middle part,
 * between a read and a check, is faster than that even under TSan.) */
static void
press_marks(struct rtable *t, u32 low, u32 high, struct event *ev)
{
  struct two_srcs x = two_srcs_new();
  ev_init(ev, press_notified, NULL);
  struct rt_reader r = { 0 };
  rt_reader_attach(t, &r, main_loop(), ev);
  uint done = 0;
  press_churn(t, &x, done, high, &r), done += high;
  assert_false(rt_import_pressed(t));
  press_churn(t, &x, done, 1000, &r), done += 1000;
  assert_true(rt_import_pressed(t));

  /* reading to within low lets go */
  rcu_read_lock();
  while (rt_reader_lag(&r) > low + RT_JOURNAL_BLOCK)
    assert_non_null(rt_reader_next(&r));
  assert_true(rt_import_pressed(t));
  for (uint i = 0; i < 2 * RT_JOURNAL_BLOCK; i++)
    assert_non_null(rt_reader_next(&r));
  assert_false(rt_import_pressed(t));
  while (rt_reader_next(&r))
    ;
  rcu_read_unlock();

  /* idle: no pressure, however far behind, until it reads again */
  rt_reader_idle(&r);
  press_churn(t, &x, done, high + 1000, NULL), done += high + 1000;
  assert_false(rt_import_pressed(t));
  rcu_read_lock();
  assert_non_null(rt_reader_next(&r));
  rcu_read_unlock();
  press_churn(t, &x, done, 1, NULL), done += 1;
  assert_true(rt_import_pressed(t));

  rt_reader_detach(&r);
  assert_false(rt_import_pressed(t));

  /* without notify: a pin never presses, a reader that polls (the host
   * cache while the table is busy) does, and is sent its event to read
   * at once rather than at its next tick */
  struct rt_reader pin = { 0 }, polled = { 0 };
  rt_reader_attach(t, &pin, main_loop(), NULL);
  rt_reader_attach(t, &polled, main_loop(), NULL);
  press_churn(t, &x, done, high + 1000, &polled), done += high + 1000;
  assert_false(rt_import_pressed(t));
  static u32 poked;
  static struct event poke;
  ev_init(&poke, press_poked, &poked);
  rt_reader_polls(&polled, &poke);
  press_churn(t, &x, done, 256, &polled), done += 256;
  assert_true(rt_import_pressed(t));
  btime until = time_mono_now() + S_ 5;
  while (!uatomic_read(&poked) && time_mono_now() < until)
    usleep(1000);
  assert_true(uatomic_read(&poked) > 0);
  rt_reader_detach(&polled);
  assert_false(rt_import_pressed(t));
  rt_reader_detach(&pin);
  press_done(t, &x);
}

/* A table's own marks, as rt_commit() sets them for `cork threshold LOW
 * HIGH`; low 0: the defaults, scaled to the table's size again. */
static void
press_cork(struct rtable *t, u32 low, u32 high)
{
  uatomic_set(&t->press_low, low ? low : RT_PRESS_LOW);
  uatomic_set(&t->press_high, low ? high : RT_PRESS_HIGH);
  uatomic_set(&t->press_auto, !low);
}

/* The default marks follow the table's size: RT_PRESS_HIGH_MIN and a
 * quarter of it for a small table, an eighth of its nets for a larger
 * one, RT_PRESS_HIGH and RT_PRESS_LOW at most. */
static void
test_import_press(void **state)
{
  (void) state;
  struct rtable *t = test_table();
  assert_int_equal(t->press_low, RT_PRESS_LOW);
  assert_int_equal(t->press_high, RT_PRESS_HIGH);
  assert_true(t->press_auto);
  u64 low, high;
  rt_press_marks(t, &low, &high);
  assert_int_equal(high, RT_PRESS_HIGH_MIN);
  assert_int_equal(low, RT_PRESS_HIGH_MIN / 4);
  static struct event ev;     /* may still be queued in the main loop after the test */
  press_marks(t, RT_PRESS_HIGH_MIN / 4, RT_PRESS_HIGH_MIN, &ev);

  /* the churn's nets and the fill's make BIG nets */
  enum { BIG = RT_PRESS_SHARE * 2 * RT_PRESS_HIGH_MIN };
  _Static_assert(BIG - PRESS_NETS <= PRESS_FULL, "press_fill makes PRESS_FULL nets at most");
  struct two_srcs x = two_srcs_new();
  press_fill(t, &x, BIG - PRESS_NETS, 1);
  static struct event ev2;
  press_marks(t, 2 * RT_PRESS_HIGH_MIN / 4, 2 * RT_PRESS_HIGH_MIN, &ev2);
  /* the defaults (here lower than usual) cap what the size calls for */
  uatomic_set(&t->press_high, 6000);
  rt_press_marks(t, &low, &high);
  assert_int_equal(high, 6000);
  assert_int_equal(low, RT_PRESS_LOW);
  uatomic_set(&t->press_high, RT_PRESS_HIGH);
  press_fill(t, &x, BIG - PRESS_NETS, 0);
  two_srcs_free(&x);
}

/* A table's own marks (`cork threshold 3000 12000`): the low one below
 * the copiers' half mark, which must not let the pressing go before the
 * reader is within it; the table's size does not move them. */
static void
test_cork_threshold(void **state)
{
  (void) state;
  struct rtable *t = test_table();
  struct two_srcs x = two_srcs_new();
  press_fill(t, &x, PRESS_FULL, 1);
  ASSERT_DIE(3000 + RT_JOURNAL_BLOCK < rt_press_copies_high(t) / 2);
  press_cork(t, 3000, 12000);
  static struct event ev;
  press_marks(t, 3000, 12000, &ev);
  press_cork(t, 0, 0);
  press_fill(t, &x, PRESS_FULL, 0);
  two_srcs_free(&x);
}

/* The gentler level: a reader rt_press_copies_high(t) behind crowds the
 * table, which holds copiers (waits whose `copies` is set) and not
 * importers, until it is back within half of it; pressed, it is
 * crowded too, and reading to within RT_PRESS_LOW leaves it crowded. A
 * copier waiting is sent its event (its wait's table cleared) once no
 * reader crowds any more. The table counts its readers. */
static void
test_import_crowd(void **state)
{
  (void) state;
  struct rtable *t = test_table();
  struct two_srcs x = two_srcs_new();
  static struct event ev, copier_ev, importer_ev;
  ev_init(&ev, press_notified, NULL);
  ev_init(&copier_ev, press_notified, NULL);
  ev_init(&importer_ev, press_notified, NULL);
  struct rt_press_wait copier = { .loop = main_loop(), .ev = &copier_ev, .copies = 1 };
  struct rt_press_wait importer = { .loop = main_loop(), .ev = &importer_ev };
  struct rt_reader r = { 0 };
  u32 readers = rt_reader_count(t);
  press_fill(t, &x, PRESS_FULL, 1);
  press_cork(t, RT_PRESS_LOW, RT_PRESS_HIGH);   /* the pressing's low mark above the crowding's */
  rt_reader_attach(t, &r, main_loop(), &ev);
  assert_int_equal(rt_reader_count(t), readers + 1);

  uint done = 0, high = rt_press_copies_high(t);
  assert_int_equal(high, RT_PRESS_COPIES_MAX);   /* no pipe shares it */
  press_churn(t, &x, done, high, &r), done += high;
  assert_false(rt_import_crowded(t));
  press_churn(t, &x, done, 512, &r), done += 512;
  assert_true(rt_import_crowded(t));
  assert_false(rt_import_pressed(t));
  assert_false(rt_import_wait(t, &importer));
  assert_null(importer.table);
  assert_true(rt_import_wait(t, &copier));
  assert_ptr_equal(copier.table, t);

  /* pressed: crowded as well; back within RT_PRESS_LOW: crowded still */
  press_churn(t, &x, done, RT_PRESS_HIGH, &r), done += RT_PRESS_HIGH;
  assert_true(rt_import_pressed(t));
  rcu_read_lock();
  while (rt_reader_lag(&r) > RT_PRESS_LOW - 2 * RT_JOURNAL_BLOCK)
    assert_non_null(rt_reader_next(&r));
  assert_false(rt_import_pressed(t));
  assert_true(rt_import_crowded(t));
  assert_ptr_equal(copier.table, t);
  /* within half the mark: the copier is sent its event */
  while (rt_reader_lag(&r) > high / 2 - 2 * RT_JOURNAL_BLOCK)
    assert_non_null(rt_reader_next(&r));
  assert_false(rt_import_crowded(t));
  assert_null(copier.table);
  while (rt_reader_next(&r))
    ;
  rcu_read_unlock();

  /* an idle reader crowds no more, however far behind; its leaving takes
   * its level along */
  press_churn(t, &x, done, high + 512, &r), done += high + 512;
  assert_true(rt_import_crowded(t));
  assert_true(rt_import_wait(t, &copier));
  rt_reader_idle(&r);
  assert_false(rt_import_crowded(t));
  assert_null(copier.table);
  press_churn(t, &x, done, 1, NULL), done += 1;
  rcu_read_lock();
  assert_non_null(rt_reader_next(&r));
  rcu_read_unlock();
  press_churn(t, &x, done, 1, NULL), done += 1;
  assert_true(rt_import_crowded(t));
  assert_true(rt_import_wait(t, &copier));
  rt_import_unwait(&copier);
  assert_null(copier.table);
  rt_reader_detach(&r);
  assert_false(rt_import_crowded(t));
  assert_int_equal(rt_reader_count(t), readers);
  press_cork(t, 0, 0);
  press_fill(t, &x, PRESS_FULL, 0);
  press_done(t, &x);
}

/* A small table's mark is an eighth of its nets, RT_PRESS_COPIES_MIN at
 * least (an empty one's), and a reader crowds it there. */
static void
test_import_crowd_small(void **state)
{
  (void) state;
  struct rtable *t = test_table();
  struct two_srcs x = two_srcs_new();
  assert_int_equal(rt_press_copies_high(t), RT_PRESS_COPIES_MIN);
  enum { HIGH = 2 * RT_PRESS_COPIES_MIN };
  press_fill(t, &x, RT_PRESS_COPIES_SHARE * HIGH - PRESS_NETS, 1);
  assert_int_equal(rt_press_copies_high(t), HIGH - PRESS_NETS / RT_PRESS_COPIES_SHARE);
  static struct event ev;
  ev_init(&ev, press_notified, NULL);
  struct rt_reader r = { 0 };
  rt_reader_attach(t, &r, main_loop(), &ev);
  press_churn(t, &x, 0, PRESS_NETS, &r);        /* the churn's nets make it HIGH */
  assert_int_equal(rt_press_copies_high(t), HIGH);
  rcu_read_lock();
  while (rt_reader_next(&r))
    ;
  rcu_read_unlock();
  press_churn(t, &x, PRESS_NETS, HIGH, &r);
  assert_false(rt_import_crowded(t));
  press_churn(t, &x, PRESS_NETS + HIGH, 512, &r);
  assert_true(rt_import_crowded(t));
  rt_reader_detach(&r);
  assert_false(rt_import_crowded(t));
  press_fill(t, &x, RT_PRESS_COPIES_SHARE * HIGH - PRESS_NETS, 0);
  press_done(t, &x);
  assert_int_equal(rt_press_copies_high(t), RT_PRESS_COPIES_MIN);
}

/* The pipes share the crowding mark: RT_PRESS_COPIES_ALL over the pipes
 * alive (two copier holds a pipe), between RT_PRESS_COPIES_MIN and _MAX;
 * BGP's holds do not count, and a hold stopped twice counts off once.
 * With enough pipes a reader crowds its table at the lowest mark. */
static void
test_import_crowd_shared(void **state)
{
  (void) state;
  enum { PIPES = RT_PRESS_COPIES_ALL / RT_PRESS_COPIES_MIN + 1 };
  static struct rt_hold holds[2 * PIPES], bgp;
  static struct event ev;
  ev_init(&ev, press_notified, NULL);
  struct rtable *t = test_table();
  struct two_srcs x = two_srcs_new();
  press_fill(t, &x, PRESS_FULL, 1);
  assert_int_equal(rt_press_copies_high(t), RT_PRESS_COPIES_MAX);
  rt_hold_init(&bgp, main_loop(), &ev, 0);
  assert_int_equal(rt_press_copies_high(t), RT_PRESS_COPIES_MAX);
  for (uint i = 0; i < 2 * PIPES; i++) {
    rt_hold_init(&holds[i], main_loop(), &ev, 1);
    uint pipes = (i + 2) / 2;
    u64 want = RT_PRESS_COPIES_ALL / pipes;
    want = want > RT_PRESS_COPIES_MAX ? RT_PRESS_COPIES_MAX : want < RT_PRESS_COPIES_MIN ? RT_PRESS_COPIES_MIN : want;
    assert_int_equal(rt_press_copies_high(t), want);
  }
  assert_int_equal(rt_press_copies_high(t), RT_PRESS_COPIES_MIN);
  /* with pipes about, the sessions' marks do not follow the table */
  u64 low, high;
  rt_press_marks(t, &low, &high);
  assert_int_equal(high, RT_PRESS_HIGH);
  assert_int_equal(low, RT_PRESS_LOW);

  struct rt_reader r = { 0 };
  rt_reader_attach(t, &r, main_loop(), &ev);
  press_churn(t, &x, 0, RT_PRESS_COPIES_MIN + 512, &r);
  assert_true(rt_import_crowded(t));
  rt_reader_detach(&r);
  assert_false(rt_import_crowded(t));

  for (uint i = 0; i < 2 * PIPES; i++)
    rt_hold_stop(&holds[i]);
  rt_hold_stop(&holds[0]);
  rt_hold_stop(&bgp);
  assert_int_equal(rt_press_copies_high(t), RT_PRESS_COPIES_MAX);
  press_fill(t, &x, PRESS_FULL, 0);
  press_done(t, &x);
}

/* Run by nest/test_loops.h in a thread of their own; the main thread runs
 * the main loop, which the table sends its events through. */
static const struct CMUnitTest tests[] = {
  cmocka_unit_test(test_import_press),
  cmocka_unit_test(test_cork_threshold),
  cmocka_unit_test(test_import_crowd),
  cmocka_unit_test(test_import_crowd_small),
  cmocka_unit_test(test_import_crowd_shared),
};

int
main(void)
{
  return test_run_with_loops("rt_press_test", tests, NULL);
}
