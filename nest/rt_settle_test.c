/*
 * Unit tests of export settle (nest/rt_settle.c): when a table's readers
 * are woken after its changes, with `export settle time`, with `route
 * refresh export settle time` while a channel writing there refreshes,
 * and at once for a reader far enough behind to press the table.
 * The readers are woken in the main loop; the tests run beside it and
 * look at the clock only for lower bounds of a second or so and generous
 * upper ones, which a sanitizer build keeps too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/loop.h"
#include "lib/timeutil.h"
#include "nest/rt.h"
#include "nest/test_loops.h"
#include "nest/test_table.h"

static u32 woken;               /* atomic: the readers' notify hook ran */

static void settle_notified(void *data) { (void) data; uatomic_inc(&woken); }

/* Seconds on the monotonic clock. */
static double now_s(void) { return (double) time_mono_now() / S_ 1; }

static void sleep_ms(uint ms) { usleep(ms * 1000); }

/* Seconds from now until the reader is woken, polling up to limit. */
static double
wait_woken(double limit)
{
  double start = now_s();
  while (!uatomic_read(&woken) && now_s() - start < limit)
    sleep_ms(5);
  return uatomic_read(&woken) ? now_s() - start : -1;
}

#define SETTLE_NETS 1000
static void
settle_write(struct rtable *t, struct two_srcs *x, uint i)
{
  net_addr a;
  net4(&a, 50000 + i % SETTLE_NETS);
  rt_update(t, &a, x->s1, NULL, (i / SETTLE_NETS) & 1 ? x->hi : x->lo, 0);
}

struct settle_case {
  struct rtable *t;
  struct two_srcs x;
  struct rt_reader r;
  struct event *ev;
};

static void
settle_begin(struct settle_case *c, struct event *ev, struct rt_settle_times exp, struct rt_settle_times rr)
{
  c->t = test_table();
  c->x = two_srcs_new();
  c->r = (struct rt_reader) { 0 };
  c->ev = ev;
  ev_init(ev, settle_notified, NULL);
  rt_settle_set(c->t, exp, rr);
  rt_reader_attach(c->t, &c->r, main_loop(), ev);
  /* The table is the previous test's too: the wake-up for its last
   * withdrawals, or the kick of the new times, may still be on its way
   * and would wake this reader early on a loaded machine. */
  sleep_ms(200);
  uatomic_set(&woken, 0);
}

static void
settle_end(struct settle_case *c)
{
  rt_settle_set(c->t, (struct rt_settle_times) { 0 }, (struct rt_settle_times) { 0 });
  rt_reader_detach(&c->r);
  for (uint i = 0; i < SETTLE_NETS; i++) {
    net_addr a;
    net4(&a, 50000 + i);
    rt_update(c->t, &a, c->x.s1, NULL, NULL, 0);
  }
  two_srcs_free(&c->x);
}

/* Without settle times, at once; with them, once no change came for
 * the minimum. */
static void
test_settle_minimum(void **state)
{
  (void) state;
  static struct event ev;
  struct settle_case c;
  settle_begin(&c, &ev, (struct rt_settle_times) { 0 }, (struct rt_settle_times) { 0 });
  settle_write(c.t, &c.x, 0);
  assert_true(wait_woken(5) >= 0);

  rt_settle_set(c.t, (struct rt_settle_times) { MS_ 1000, S_ 10 }, (struct rt_settle_times) { 0 });
  /* the kick that moves the times may still be on its way */
  sleep_ms(100);
  uatomic_set(&woken, 0);
  double start = now_s();
  settle_write(c.t, &c.x, 1);
  sleep_ms(500);
  assert_int_equal(uatomic_read(&woken), 0);
  double at = wait_woken(10);
  assert_true(at >= 0);
  assert_true(now_s() - start >= 0.9);
  settle_end(&c);
}

/* Changes that keep coming: woken the maximum after the first one.
 * A loaded machine can stall this writer past the minimum, and then an
 * early wake is right: the largest gap between writes says whether one
 * was allowed. The checks come after settle_end, so a failure leaves no
 * reader attached for the next test. */
static void
test_settle_maximum(void **state)
{
  (void) state;
  static struct event ev;
  struct settle_case c;
  settle_begin(&c, &ev, (struct rt_settle_times) { MS_ 800, MS_ 1500 }, (struct rt_settle_times) { 0 });
  double start = now_s(), last = start, max_gap = 0;
  uint i = 0;
  while (!uatomic_read(&woken) && now_s() - start < 6) {
    double t = now_s();
    if (t - last > max_gap)
      max_gap = t - last;
    last = t;
    settle_write(c.t, &c.x, i++);
    sleep_ms(100);
  }
  double at = now_s() - start;
  bool was_woken = uatomic_read(&woken);
  settle_end(&c);
  assert_true(was_woken);
  assert_true(at < 5);
  if (max_gap < 0.75)
    assert_true(at >= 1.4);
}

/* While a channel writing into the table refreshes, the route refresh
 * times; the export times again after it. */
static void
test_settle_refresh(void **state)
{
  (void) state;
  static struct event ev;
  struct settle_case c;
  settle_begin(&c, &ev, (struct rt_settle_times) { MS_ 1, MS_ 2 }, (struct rt_settle_times) { S_ 2, S_ 4 });
  uatomic_inc(&c.t->refreshing);
  settle_write(c.t, &c.x, 0);
  sleep_ms(1000);
  assert_int_equal(uatomic_read(&woken), 0);
  assert_true(wait_woken(10) >= 0);
  uatomic_dec(&c.t->refreshing);
  uatomic_set(&woken, 0);
  settle_write(c.t, &c.x, 1);
  double at = wait_woken(10);
  assert_true(at >= 0 && at < 1.5);
  settle_end(&c);
}

/* A reader far enough behind to press the table is woken at once. */
static void
test_settle_pressing_reader(void **state)
{
  (void) state;
  static struct event ev;
  struct settle_case c;
  settle_begin(&c, &ev, (struct rt_settle_times) { S_ 20, S_ 60 }, (struct rt_settle_times) { 0 });
  uatomic_set(&c.t->press_low, 100);
  uatomic_set(&c.t->press_high, 500);
  for (uint i = 0; i < 400; i++)
    settle_write(c.t, &c.x, i);
  sleep_ms(300);
  assert_int_equal(uatomic_read(&woken), 0);
  for (uint i = 400; i < 600; i++)
    settle_write(c.t, &c.x, i);
  assert_true(rt_import_pressed(c.t));
  double at = wait_woken(10);
  assert_true(at >= 0 && at < 5);
  rt_reader_detach(&c.r);       /* its pressure with it */
  rt_reader_attach(c.t, &c.r, main_loop(), c.ev);
  uatomic_set(&c.t->press_low, RT_PRESS_LOW);
  uatomic_set(&c.t->press_high, RT_PRESS_HIGH);
  settle_end(&c);
}

static const struct CMUnitTest tests[] = {
  cmocka_unit_test(test_settle_minimum),
  cmocka_unit_test(test_settle_maximum),
  cmocka_unit_test(test_settle_refresh),
  cmocka_unit_test(test_settle_pressing_reader),
};

int
main(void)
{
  return test_run_with_loops("rt_settle_test", tests, NULL);
}
