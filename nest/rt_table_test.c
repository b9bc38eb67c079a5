/*
 * Unit tests of the table core: best-route order, the journal's items,
 * refresh cycles, flushes, copies, route groups (run under TSan in CI).
 * Concurrent writers and readers: nest/rt_concurrent_test.c; what frees
 * the journal: nest/rt_journal_test.c; recursive next hops:
 * nest/rt_hostcache_test.c.
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "conf/conf.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "nest/proto.h"
#include "nest/reconf.h"
#include "nest/rt.h"
#include "nest/test_attrs.h"
#include "nest/test_loops.h"
#include "nest/test_table.h"

static void
test_best_order(void **state)
{
  (void) state;
  struct rtable *t = test_table();
  struct two_srcs x = two_srcs_new();
  struct rte_src *s1 = x.s1, *s2 = x.s2;
  struct ea_list *lo = x.lo, *hi = x.hi;
  net_addr n;
  net4(&n, 7777);

  struct rt_reader r = { 0 };
  rt_reader_attach(t, &r, main_loop(), NULL);

  assert_int_equal(rt_update(t, &n, s1, NULL, lo, 0), RT_UPD_ADD);
  assert_int_equal(rt_update(t, &n, s2, NULL, hi, 0), RT_UPD_ADD);
  assert_int_equal(rt_update(t, &n, s2, NULL, hi, 0), RT_UPD_NONE);   /* same attrs: no change */

  rcu_read_lock();
  struct net *net = rt_find_net(t, &n);
  assert_non_null(net);
  assert_ptr_equal(rte_src(net_best(net)), s2);
  assert_ptr_equal(rte_src(net_best(net)->next), s1);
  assert_null(net_best(net)->next->next);

  const struct rt_journal_item *it = rt_reader_next(&r);
  assert_non_null(it);
  assert_ptr_equal(rte_src(it->new_best), s1);
  assert_null(it->old_best);
  it = rt_reader_next(&r);
  assert_ptr_equal(rte_src(it->new_best), s2);
  assert_ptr_equal(rte_src(it->old_best), s1);
  assert_null(rt_reader_next(&r));
  rcu_read_unlock();

  assert_int_equal(rt_update(t, &n, s2, NULL, NULL, 0), RT_UPD_REMOVE);
  rcu_read_lock();
  it = rt_reader_next(&r);
  assert_ptr_equal(rte_src(it->new_best), s1);
  assert_ptr_equal(rte_src(it->old_best), s2);
  assert_ptr_equal(rte_src(it->retired), s2);
  rcu_read_unlock();

  assert_int_equal(rt_update(t, &n, s1, NULL, NULL, 0), RT_UPD_REMOVE);
  rcu_read_lock();
  assert_null(rt_find_net(t, &n));
  it = rt_reader_next(&r);
  assert_null(it->new_best);
  assert_null(it->net->routes);     /* dead: freed with the item */
  rcu_read_unlock();
  rt_reader_detach(&r);
  two_srcs_free(&x);
}

/* `import keep filtered`: a flagged route is kept after the usable ones,
 * never best, never in the journal as an exportable route, and counted
 * apart. */
static void
test_filtered_routes(void **state)
{
  (void) state;
  struct rtable *t = test_table();
  struct two_srcs x = two_srcs_new();
  struct rte_src *s1 = x.s1, *s2 = x.s2;
  struct ea_list *lo = x.lo, *hi = x.hi;
  net_addr n;
  net4(&n, 7778);
  u32 routes = uatomic_read(&t->route_count), filtered = uatomic_read(&t->filtered_count);

  struct rt_reader r = { 0 };
  rt_reader_attach(t, &r, main_loop(), NULL);
  assert_int_equal(rt_update(t, &n, s2, NULL, hi, REF_FILTERED), RT_UPD_FILTERED_ADD);
  assert_int_equal(rt_update(t, &n, s1, NULL, lo, 0), RT_UPD_ADD);
  assert_int_equal(uatomic_read(&t->route_count), routes + 1);
  assert_int_equal(uatomic_read(&t->filtered_count), filtered + 1);

  rcu_read_lock();
  struct net *net = rt_find_net(t, &n);
  /* the better preference does not make a filtered route best */
  assert_ptr_equal(rte_src(net_best(net)), s1);
  assert_ptr_equal(rte_src(net->routes->next), s2);
  const struct rt_journal_item *it = rt_reader_next(&r);
  assert_null(it->new_best);
  assert_null(it->new_rte);
  it = rt_reader_next(&r);
  assert_ptr_equal(rte_src(it->new_best), s1);
  rcu_read_unlock();

  /* the filtered route becomes usable: it wins now */
  assert_int_equal(rt_update(t, &n, s2, NULL, hi, 0), RT_UPD_ADD | RT_UPD_FILTERED_REMOVE);
  rcu_read_lock();
  assert_ptr_equal(rte_src(net_best(rt_find_net(t, &n))), s2);
  rcu_read_unlock();
  /* and back: usable -> filtered is a removal of a usable route */
  assert_int_equal(rt_update(t, &n, s2, NULL, hi, REF_FILTERED), RT_UPD_REMOVE | RT_UPD_FILTERED_ADD);
  assert_int_equal(rt_update(t, &n, s2, NULL, NULL, 0), RT_UPD_FILTERED_REMOVE);
  assert_int_equal(rt_update(t, &n, s1, NULL, NULL, 0), RT_UPD_REMOVE);
  assert_int_equal(uatomic_read(&t->route_count), routes);
  assert_int_equal(uatomic_read(&t->filtered_count), filtered);

  rt_reader_detach(&r);
  two_srcs_free(&x);
}

/* A route seen in a chain may have its item still to come for a reader
 * until that reader read the journal to its end; the settled end is past
 * every change made before. (A writer inside the lock, whose items are not
 * published yet, makes it 1 as well: test_concurrent checks that, and
 * fails 4 runs in 5 where only the published end counts.) */
static void
test_reader_may_meet(void **state)
{
  (void) state;
  struct rtable *t = test_table();
  struct two_srcs x = two_srcs_new();
  net_addr n;
  net4(&n, 7779);
  struct rt_reader r = { 0 };
  rt_reader_attach(t, &r, main_loop(), NULL);
  rcu_read_lock();
  assert_false(rt_reader_may_meet(&r));
  rcu_read_unlock();

  rt_update(t, &n, x.s1, NULL, x.lo, 0);
  assert_true(rt_journal_end_settled(t) > uatomic_read(&r.seq));
  rcu_read_lock();
  assert_non_null(rt_find_net(t, &n));
  assert_true(rt_reader_may_meet(&r));
  assert_non_null(rt_reader_next(&r));
  assert_false(rt_reader_may_meet(&r));
  assert_int_equal(rt_journal_end_settled(t), uatomic_read(&r.seq));
  rcu_read_unlock();

  rt_update(t, &n, x.s1, NULL, NULL, 0);
  rt_reader_detach(&r);
  two_srcs_free(&x);
}

/* rt_update_batch makes the same changes as rt_update one by one: the
 * same results, chains and journal items, whatever the batch holds (a net
 * several times, withdrawals of what is not there, unchanged routes,
 * filtered ones) and wherever its steps split it. Six sources make chains
 * longer than a batch's stages read ahead (three routes: the rest is
 * walked by the whole step together before the lock), with the new
 * route's place and the old route anywhere in them. */
#define BATCH_OPS 600
#define BATCH_NETS 40
#define BATCH_SRCS 6

struct batch_op { u32 net; u8 src, attrs, flags; };

/* What a journal item says, with nets as indices from base. */
struct batch_item { u32 net; struct rte_src *new_best, *old_best, *retired; struct ea_list *best_attrs; };

static struct rte_src *
rte_src_or_null(const struct rte *r)
{
  return r ? rte_src(r) : NULL;
}

static uint
batch_items(struct rt_reader *r, u32 base, struct batch_item *out, uint max)
{
  uint n = 0;
  rcu_read_lock();
  for (const struct rt_journal_item *it; (it = rt_reader_next(r));) {
    assert_true(n < max);
    out[n++] = (struct batch_item){ ((ip4_to_u32(((const net_addr_ip4 *) &it->net->n)->prefix) >> 8) & 0xffff) - base,
                                    rte_src_or_null(it->new_best), rte_src_or_null(it->old_best),
                                    rte_src_or_null(it->retired), it->new_best ? rte_attrs(it->new_best) : NULL };
  }
  rcu_read_unlock();
  return n;
}

/* The use counts of the test's attribute sets (attrs[1..3]) and sources. */
static void
use_counts(struct ea_list *const *attrs, struct rte_src *const *srcs, u32 *out)
{
  for (uint i = 0; i < 3; i++)
    out[i] = uatomic_read(&attrs[i + 1]->uc);
  for (uint i = 0; i < BATCH_SRCS; i++)
    out[3 + i] = uatomic_read(&srcs[i]->uc);
}

static void
test_batch(void **state)
{
  (void) state;
  struct rtable *t = test_table();
  static const char *const names[BATCH_SRCS] = { "b0", "b1", "b2", "b3", "b4", "b5" };
  struct rte_src *srcs[BATCH_SRCS];
  for (uint i = 0; i < BATCH_SRCS; i++)
    srcs[i] = rt_get_source(fake_proto(names[i]), 0);
  /* attribute sets of this test alone: their use counts move with its
   * routes only */
  struct ea_list *lo = attrs_pref(100, 901), *mid = attrs_pref(150, 903), *hi = attrs_pref(200, 902);
  struct ea_list *attrs[4] = { NULL, lo, mid, hi };
  const u32 seq_base = 20000, batch_base = 21000;

  struct batch_op ops[BATCH_OPS];
  u32 rnd = 12345;
  for (uint i = 0; i < BATCH_OPS; i++) {
    rnd = rnd * 1103515245 + 12345;
    ops[i] = (struct batch_op){ (rnd >> 8) % BATCH_NETS, (rnd >> 16) % BATCH_SRCS, (rnd >> 20) % 4,
                                ((rnd >> 23) & 7) == 0 ? REF_FILTERED : 0 };
  }

  /* The reader reads nothing until both runs are done: it pins every
   * route they retire, so the use counts say how many each run holds. */
  struct rt_reader r = { 0 };
  rt_reader_attach(t, &r, main_loop(), NULL);
  u32 uc0[3 + BATCH_SRCS], uc1[3 + BATCH_SRCS], uc2[3 + BATCH_SRCS];
  use_counts(attrs, srcs, uc0);

  uint seq_res[BATCH_OPS];
  net_addr seq_nets[BATCH_OPS], batch_nets[BATCH_OPS];
  for (uint i = 0; i < BATCH_OPS; i++) {
    net4(&seq_nets[i], seq_base + ops[i].net);
    seq_res[i] = rt_update(t, &seq_nets[i], srcs[ops[i].src], NULL, attrs[ops[i].attrs], ops[i].flags);
  }
  use_counts(attrs, srcs, uc1);

  struct rt_import im[BATCH_OPS];
  for (uint i = 0; i < BATCH_OPS; i++) {
    net4(&batch_nets[i], batch_base + ops[i].net);
    im[i] = (struct rt_import){ .net = &batch_nets[i], .src = srcs[ops[i].src], .attrs = attrs[ops[i].attrs],
                                .flags = ops[i].flags, .result = ~0U };
  }
  rt_update_batch(t, NULL, im, BATCH_OPS);
  use_counts(attrs, srcs, uc2);
  for (uint i = 0; i < ARRAY_SIZE(uc2); i++)
    assert_int_equal(uc2[i] - uc1[i], uc1[i] - uc0[i]);

  static struct batch_item items[4 * BATCH_OPS];
  uint nitems = batch_items(&r, seq_base, items, ARRAY_SIZE(items)), nseq = 0;
  while (nseq < nitems && items[nseq].net < BATCH_NETS)
    nseq++;
  for (uint i = nseq; i < nitems; i++)
    items[i].net -= batch_base - seq_base;

  uint changes = 0;
  for (uint i = 0; i < BATCH_OPS; i++) {
    assert_int_equal(im[i].result, seq_res[i]);
    changes += seq_res[i] != RT_UPD_NONE;
  }
  assert_true(changes > BATCH_OPS / 3);     /* the script does change things */
  uint longest = 0;
  assert_int_equal(nitems - nseq, nseq);
  for (uint i = 0; i < nseq; i++)
    assert_memory_equal(&items[nseq + i], &items[i], sizeof(items[i]));

  /* the same chains, then both emptied by one batch each */
  for (uint base = 0; base < 2; base++) {
    struct rt_import wd[BATCH_SRCS * BATCH_NETS];
    net_addr nets[BATCH_NETS];
    for (u32 i = 0; i < BATCH_NETS; i++) {
      net4(&nets[i], (base ? batch_base : seq_base) + i);
      for (uint k = 0; k < BATCH_SRCS; k++)
        wd[BATCH_SRCS * i + k] = (struct rt_import){ .net = &nets[i], .src = srcs[(i + k) % BATCH_SRCS] };
    }
    if (!base) {
      rcu_read_lock();
      for (u32 i = 0; i < BATCH_NETS; i++) {
        net_addr other;
        net4(&other, batch_base + i);
        struct net *na = rt_find_net(t, &nets[i]), *nb = rt_find_net(t, &other);
        assert_int_equal(!na, !nb);
        uint len = 0;
        for (struct rte *ra = na ? na->routes : NULL, *rb = nb ? nb->routes : NULL; ra || rb;
             ra = ra->next, rb = rb->next, len++) {
          assert_true(ra && rb);
          assert_ptr_equal(rte_src(ra), rte_src(rb));
          assert_ptr_equal(rte_attrs(ra), rte_attrs(rb));
          assert_int_equal(rte_flags(ra), rte_flags(rb));
        }
        longest = MAX(longest, len);
      }
      rcu_read_unlock();
      assert_true(longest > 4);
    }
    rt_update_batch(t, NULL, wd, ARRAY_SIZE(wd));
    rcu_read_lock();
    for (u32 i = 0; i < BATCH_NETS; i++)
      assert_null(rt_find_net(t, &nets[i]));
    rcu_read_unlock();
  }
  batch_items(&r, 0, items, ARRAY_SIZE(items));
  rt_reader_detach(&r);
  for (uint i = 1; i < ARRAY_SIZE(attrs); i++)
    ea_unref(attrs[i]);
  test_srcs_free(srcs, BATCH_SRCS);
}

/* --- Refresh cycles --- */

/* Routes of c in nets [0, count): how many, and how many are stale. */
static void
chan_count(struct rtable *t, struct channel *c, u32 base, u32 count, u32 *routes, u32 *stale)
{
  *routes = *stale = 0;
  rcu_read_lock();
  for (u32 k = 0; k < count; k++) {
    net_addr n;
    net4(&n, base + k);
    struct net *net = rt_find_net(t, &n);
    for (struct rte *r = net ? net_best(net) : NULL; r; r = rcu_dereference(r->next))
      if (chan_sent(c, r)) {
        (*routes)++;
        *stale += chan_rte_stale(c, r);
      }
  }
  rcu_read_unlock();
}

#define RF_BASE 20000
#define RF_NETS 1000
#define RF_GROW 5000         /* nets added mid-walk: the index grows */

/* Begin marks everything stale at once; routes announced again are fresh
 * (an unchanged one without a journal item); end withdraws the rest in
 * chunks, leaving other senders' routes on the same nets alone, even when
 * the index grows between chunks. */
static void
test_refresh_cycle(void **state)
{
  (void) state;
  struct rtable *t = test_table();
  struct channel *c = fake_channel(t, "rf"), *o = fake_channel(t, "other");
  struct rte_src *s = rt_get_source(c->proto, 0), *so = rt_get_source(o->proto, 0);
  struct ea_list *a1 = attrs_pref(100, 1), *a2 = attrs_pref(100, 2), *ao = attrs_pref(50, 3);
  u32 routes, stale;
  net_addr n;

  for (u32 k = 0; k < RF_NETS; k++) {
    net4(&n, RF_BASE + k);
    assert_int_equal(rt_update(t, &n, s, c, a1, 0), RT_UPD_ADD);
    if (k % 2)
      rt_update(t, &n, so, o, ao, 0);
  }
  chan_count(t, c, RF_BASE, RF_NETS, &routes, &stale);
  assert_int_equal(routes, RF_NETS);
  assert_int_equal(stale, 0);

  chan_refresh_begin(c);
  chan_count(t, c, RF_BASE, RF_NETS, &routes, &stale);
  assert_int_equal(stale, RF_NETS);

  struct rt_reader r = { 0 };
  rt_reader_attach(t, &r, main_loop(), NULL);
  /* nets 0..299 unchanged, 300..599 changed: fresh; the rest stays stale */
  for (u32 k = 0; k < 600; k++) {
    net4(&n, RF_BASE + k);
    assert_int_equal(rt_update(t, &n, s, c, k < 300 ? a1 : a2, 0), k < 300 ? RT_UPD_NONE : RT_UPD_REPLACE);
  }
  u32 items = 0;
  rcu_read_lock();
  while (rt_reader_next(&r))
    items++;
  rcu_read_unlock();
  assert_int_equal(items, 300);       /* unchanged routes made no journal items */
  chan_count(t, c, RF_BASE, RF_NETS, &routes, &stale);
  assert_int_equal(routes, RF_NETS);
  assert_int_equal(stale, RF_NETS - 600);

  /* Stale routes are still there for everybody: best of their nets. */
  rcu_read_lock();
  net4(&n, RF_BASE + 999);
  assert_ptr_equal(rte_src(net_best(rt_find_net(t, &n))), s);
  rcu_read_unlock();

  struct rt_stale_op op = { .c = c, .flush = 1, .flush_gen = c->refresh.gen };
  u64 pos = 0;
  uint removed = 0, modified = 0, calls = 0, by_hand = 0;
  while (!rt_stale_walk(t, &op, &pos, 7, &removed, &modified)) {
    calls++;
    if (calls == 20) {
      /* Mid-walk, a net loses every route and the index grows: the walk
       * resumes by position, whatever the index looks like now. */
      net4(&n, RF_BASE + RF_NETS - 1);
      by_hand = rt_update(t, &n, s, c, NULL, 0) == RT_UPD_REMOVE;
      rt_update(t, &n, so, o, NULL, 0);
      for (u32 k = 0; k < RF_GROW; k++) {
        net4(&n, RF_BASE + RF_NETS + k);
        rt_update(t, &n, so, o, ao, 0);
      }
      loop_call_sync(t->loop, rt_cleanup, t);   /* a grow that waited */
    }
  }
  for (u32 k = 0; k < RF_GROW; k++) {
    net4(&n, RF_BASE + RF_NETS + k);
    rt_update(t, &n, so, o, NULL, 0);
  }
  assert_true(calls > 100);
  chan_count(t, c, RF_BASE, RF_NETS, &routes, &stale);
  assert_int_equal(stale, 0);
  assert_int_equal(routes + removed + by_hand, RF_NETS);
  assert_int_equal(modified, 0);
  chan_count(t, o, RF_BASE, RF_NETS, &routes, &stale);
  assert_true(routes >= RF_NETS / 2 - 1);
  assert_int_equal(stale, 0);

  for (u32 k = 0; k < RF_NETS; k++) {
    net4(&n, RF_BASE + k);
    rt_update(t, &n, s, c, NULL, 0);
    rt_update(t, &n, so, o, NULL, 0);
  }
  rt_reader_detach(&r);
  ea_unref(a1);
  ea_unref(a2);
  ea_unref(ao);
  rt_unlock_source(s);
  rt_unlock_source(so);
  fake_channel_free(c);
  fake_channel_free(o);
}

/* --- Copies: a pipe's sender keeps off the routes of others --- */

static uint
copy_route_sender(struct rtable *t, u32 i, struct ea_list **attrs)
{
  net_addr n;
  net4(&n, i);
  rcu_read_lock();
  struct net *x = rt_find_net(t, &n);
  struct rte *r = x ? net_best(x) : NULL;
  uint sender = r ? r->sender : 0;
  *attrs = r ? rte_attrs(r) : NULL;
  rcu_read_unlock();
  return sender;
}

static void
test_copy_clash(void **state)
{
  (void) state;
  struct rtable *t = test_table();
  struct channel *a = fake_channel(t, "orig"), *p1 = fake_channel(t, "pipe1"), *p2 = fake_channel(t, "pipe2");
  /* what p1 and p2 write are copies of another table's routes */
  rt_sender_set_origin(t, p1->sender_id, t);
  rt_sender_set_origin(t, p2->sender_id, t);
  struct rte_src *s = rt_get_source(a->proto, 0);
  struct ea_list *x = attrs_pref(100, 1), *y = attrs_pref(100, 2), *at;
  net_addr n;
  const u32 N1 = 7001, N2 = 7002;

  /* the original stays: a copy of its source neither replaces nor withdraws it */
  net4(&n, N1);
  assert_int_equal(rt_update(t, &n, s, a, x, 0), RT_UPD_ADD);
  assert_int_equal(rt_update(t, &n, s, p1, y, 0), RT_UPD_CLASH);
  assert_int_equal(rt_update(t, &n, s, p1, NULL, 0), RT_UPD_CLASH);
  assert_int_equal(copy_route_sender(t, N1, &at), a->sender_id);
  assert_ptr_equal(at, x);

  /* the first copy stays against a second one; its own sender changes it */
  net4(&n, N2);
  assert_int_equal(rt_update(t, &n, s, p1, y, 0), RT_UPD_ADD);
  assert_int_equal(rt_update(t, &n, s, p2, x, 0), RT_UPD_CLASH);
  assert_int_equal(rt_update(t, &n, s, p2, NULL, 0), RT_UPD_CLASH);
  assert_int_equal(rt_update(t, &n, s, p1, x, 0), RT_UPD_REPLACE);
  assert_int_equal(copy_route_sender(t, N2, &at), p1->sender_id);
  /* a writer that is no copy takes the route over, and then keeps it */
  assert_int_equal(rt_update(t, &n, s, a, y, 0), RT_UPD_REPLACE);
  assert_int_equal(copy_route_sender(t, N2, &at), a->sender_id);
  assert_int_equal(rt_update(t, &n, s, p1, NULL, 0), RT_UPD_CLASH);
  assert_int_equal(rt_update(t, &n, s, a, NULL, 0), RT_UPD_REMOVE);

  /* the same in a batch: N1 is the original's, N2 is free */
  net_addr nets[2];
  net4(&nets[0], N1);
  net4(&nets[1], N2);
  struct rt_import im[2] = { { .net = &nets[0], .src = s, .attrs = y }, { .net = &nets[1], .src = s, .attrs = y } };
  rt_update_batch(t, p2, im, 2);
  assert_int_equal(im[0].result, RT_UPD_CLASH);
  assert_int_equal(im[1].result, RT_UPD_ADD);
  assert_int_equal(copy_route_sender(t, N1, &at), a->sender_id);
  assert_int_equal(copy_route_sender(t, N2, &at), p2->sender_id);
  assert_int_equal(rt_flush_channel(t, p2), 1);
  assert_int_equal(rt_flush_channel(t, a), 1);
  assert_int_equal(copy_route_sender(t, N1, &at), 0);

  ea_unref(x);
  ea_unref(y);
  rt_unlock_source(s);
  fake_channel_free(a);
  fake_channel_free(p1);
  fake_channel_free(p2);
}

#define FLUSH_BASE 50000
#define FLUSH_NETS 12000     /* a few of rt_flush_channel's read sections */

/* A flush takes every route of its channel, across read sections and
 * batches, two sources of it on some nets, and leaves other senders'
 * routes (and their nets) alone. */
static void
test_flush_many(void **state)
{
  (void) state;
  struct rtable *t = test_table();
  struct channel *f = fake_channel(t, "flushed"), *o = fake_channel(t, "other");
  struct rte_src *s0 = rt_get_source(f->proto, 0), *s1 = rt_get_source(f->proto, 1), *so = rt_get_source(o->proto, 0);
  struct ea_list *a = attrs_pref(100, 1), *b = attrs_pref(100, 2);
  u32 nets0 = uatomic_read(&t->net_count), routes0 = uatomic_read(&t->route_count);
  for (u32 k = 0; k < FLUSH_NETS; k++) {
    net_addr n;
    net4(&n, FLUSH_BASE + k);
    assert_int_equal(rt_update(t, &n, s0, f, a, 0), RT_UPD_ADD);
    if (k % 3 == 0)
      assert_int_equal(rt_update(t, &n, s1, f, b, 0), RT_UPD_ADD);
    if (k % 2 == 0)
      assert_int_equal(rt_update(t, &n, so, o, b, 0), RT_UPD_ADD);
  }
  u32 mine = FLUSH_NETS + FLUSH_NETS / 3, theirs = FLUSH_NETS / 2, routes, stale;
  chan_count(t, f, FLUSH_BASE, FLUSH_NETS, &routes, &stale);
  assert_int_equal(routes, mine);
  assert_int_equal(rt_flush_channel(t, f), mine);
  chan_count(t, f, FLUSH_BASE, FLUSH_NETS, &routes, &stale);
  assert_int_equal(routes, 0);
  chan_count(t, o, FLUSH_BASE, FLUSH_NETS, &routes, &stale);
  assert_int_equal(routes, theirs);
  assert_int_equal(uatomic_read(&t->route_count), routes0 + theirs);
  assert_int_equal(uatomic_read(&t->net_count), nets0 + theirs);
  assert_int_equal(rt_flush_channel(t, f), 0);
  assert_int_equal(rt_flush_channel(t, o), theirs);
  assert_int_equal(uatomic_read(&t->net_count), nets0);

  ea_unref(a);
  ea_unref(b);
  rt_unlock_source(s0);
  rt_unlock_source(s1);
  rt_unlock_source(so);
  fake_channel_free(f);
  fake_channel_free(o);
}

/* A run's home tables: where its channels write themselves, known for as
 * long as the run's info lives (its routes' sources hold it), whatever
 * became of the channels and their sender numbers; a table by its id, not
 * its address, which a table made later may get. */
struct run_home_arg { struct proto_run_info *ri; struct rtable *t; };
static void run_home_add_(void *data)
{
  struct run_home_arg *a = data;
  proto_run_home_add(a->ri, a->t);
}
static void run_home_add(struct proto_run_info *ri, struct rtable *t)
{
  struct run_home_arg a = { ri, t };
  loop_call_sync(main_loop(), run_home_add_, &a);
}
static void run_info_free(struct proto_run_info *ri) { free(ri); }

static void
test_run_home(void **state)
{
  (void) state;
  struct rtable *t = test_table();
  struct rtable *aux = test_aux_table_new("home", NET_IP4);
  struct proto_run_info *ri = calloc(1, sizeof(*ri)), *other = calloc(1, sizeof(*other));
  ri->uc = other->uc = 1;
  ri->free = other->free = run_info_free;
  run_home_add(ri, t);
  run_home_add(other, aux);
  rcu_read_lock();
  assert_true(proto_run_home(ri, t));
  assert_false(proto_run_home(ri, aux));
  assert_false(proto_run_home(other, t));
  assert_false(proto_run_home(NULL, t));
  rcu_read_unlock();
  /* a second table: both */
  run_home_add(ri, aux);
  rcu_read_lock();
  assert_true(proto_run_home(ri, t) && proto_run_home(ri, aux));
  rcu_read_unlock();
  /* the table goes; tables made since are no run's home */
  u32 gone_id = aux->id;
  test_aux_table_free(aux);
  rcu_barrier();
  for (int i = 0; i < 4; i++) {
    struct rtable *n = test_aux_table_new("home", NET_IP4);
    assert_true(n->id != gone_id);
    rcu_read_lock();
    assert_false(proto_run_home(ri, n));
    assert_false(proto_run_home(other, n));
    rcu_read_unlock();
    test_aux_table_free(n);
  }
  proto_run_info_drop(ri);
  proto_run_info_drop(other);
  rcu_barrier();
}

/* A gone channel's number is not reused while a reader has yet to read
 * the journal's items that carry it, and is reused once it has. */
static void
test_sender_reuse(void **state)
{
  (void) state;
  struct rtable *t = test_aux_table_new("senders", NET_IP4);
  struct two_srcs x = two_srcs_new();
  struct rt_reader r = { 0 };
  rt_reader_attach(t, &r, main_loop(), NULL);
  struct channel *c[7];
  for (int i = 0; i < 7; i++)
    c[i] = fake_channel(t, "num");        /* the first array's every number */
  u16 gone = c[0]->sender_id;
  net_addr n;
  net4(&n, 4242);
  rt_update(t, &n, x.s1, c[0], x.lo, 0);
  rt_update(t, &n, x.s1, c[0], NULL, 0);  /* flushed: the channel goes */
  fake_channel_free(c[0]);
  /* the reader has not seen those items: no number is free */
  struct channel *d = fake_channel(t, "num");
  assert_int_not_equal(d->sender_id, gone);
  rcu_read_lock();
  while (rt_reader_next(&r))
    ;
  rt_reader_release(&r);
  rcu_read_unlock();
  /* read: the number comes back in its turn, after the grown array's */
  int back = 0;
  struct channel *more[16];
  uint k = 0;
  while (k < 16 && !back) {
    more[k] = fake_channel(t, "num");
    back = more[k++]->sender_id == gone;
  }
  assert_true(back);
  while (k)
    fake_channel_free(more[--k]);
  fake_channel_free(d);
  for (int i = 1; i < 7; i++)
    fake_channel_free(c[i]);
  rt_reader_detach(&r);
  two_srcs_free(&x);
  test_aux_table_free(t);
  rcu_barrier();
}

static struct ea_list *
modify_tag(struct channel *c, const struct rte *r)
{
  (void) c;
  const struct eattr *e = ea_find(rte_attrs(r), EA_CODE(1, 1));
  if (e && e->val == 13)
    return NULL;                  /* "NO_LLGR": withdraw instead */
  struct ea_builder b;
  ea_builder_from(&b, rte_attrs(r));
  b.preference = 10;
  ea_set_int(&b, EA_CODE(1, 1), EAF_INT, 0, 99);
  return ea_intern(&b);
}

/* Modify (long-lived GR): stale routes get new attributes and stay stale;
 * the hook may withdraw; fresh routes are left alone. */
static void
test_refresh_modify(void **state)
{
  (void) state;
  struct rtable *t = test_table();
  struct channel *c = fake_channel(t, "mod");
  struct rte_src *s = rt_get_source(c->proto, 0);
  struct ea_list *a1 = attrs_pref(100, 1), *a13 = attrs_pref(100, 13);
  net_addr n;
  for (u32 k = 0; k < 100; k++) {
    net4(&n, RF_BASE + k);
    rt_update(t, &n, s, c, k < 10 ? a13 : a1, 0);
  }
  chan_refresh_begin(c);
  for (u32 k = 90; k < 100; k++) {     /* fresh again */
    net4(&n, RF_BASE + k);
    rt_update(t, &n, s, c, a1, 0);
  }
  struct rt_stale_op op = { .c = c, .modify = modify_tag, .modify_gen = c->refresh.gen };
  u64 pos = 0;
  uint removed = 0, modified = 0;
  while (!rt_stale_walk(t, &op, &pos, 16, &removed, &modified))
    ;
  assert_int_equal(removed, 10);
  assert_int_equal(modified, 80);
  u32 routes, stale;
  chan_count(t, c, RF_BASE, 100, &routes, &stale);
  assert_int_equal(routes, 90);
  assert_int_equal(stale, 80);
  rcu_read_lock();
  net4(&n, RF_BASE + 50);
  const struct rte *r = net_best(rt_find_net(t, &n));
  assert_int_equal(rte_attrs(r)->preference, 10);
  assert_int_equal(ea_find(rte_attrs(r), EA_CODE(1, 1))->val, 99);
  net4(&n, RF_BASE + 95);
  assert_int_equal(rte_attrs(net_best(rt_find_net(t, &n)))->preference, 100);
  rcu_read_unlock();

  /* A second modify pass finds nothing new to do. */
  removed = modified = 0;
  while (!rt_stale_walk(t, &op, &pos, 16, &removed, &modified))
    ;
  assert_int_equal(removed + modified, 0);

  op = (struct rt_stale_op){ .c = c, .flush = 1, .flush_gen = c->refresh.gen };
  while (!rt_stale_walk(t, &op, &pos, 16, &removed, &modified))
    ;
  assert_int_equal(removed, 80);
  chan_count(t, c, RF_BASE, 100, &routes, &stale);
  assert_int_equal(routes, 10);
  for (u32 k = 90; k < 100; k++) {
    net4(&n, RF_BASE + k);
    rt_update(t, &n, s, c, NULL, 0);
  }
  ea_unref(a1);
  ea_unref(a13);
  rt_unlock_source(s);
  fake_channel_free(c);
}

/* The channel's chunked flush in its loop (here the main loop), with a
 * concurrent lock-free walker: TSan checks the in-place refresh_gen store. */
static struct channel *loop_chan;
static int refresh_step;

static void
refresh_in_loop(void *data)
{
  (void) data;
  if (uatomic_read(&refresh_step) == 0)
    chan_refresh_begin(loop_chan);
  else
    chan_refresh_end(loop_chan);
  uatomic_set(&refresh_step, uatomic_read(&refresh_step) + 10);
}


static void
test_refresh_in_loop(void **state)
{
  (void) state;
  struct rtable *t = test_table();
  struct channel *c = loop_chan = fake_channel(t, "loop");
  struct rte_src *s = rt_get_source(c->proto, 0);
  struct ea_list *a1 = attrs_pref(100, 1);
  net_addr n;
  const u32 nets = 20000;
  for (u32 k = 0; k < nets; k++) {
    net4(&n, 100000 + k);
    rt_update(t, &n, s, c, a1, 0);
  }
  uatomic_set(&c->stats.imp_routes, nets);
  pthread_t walker;
  struct chain_walk cw = { .t = t };
  pthread_create(&walker, NULL, chain_walk_main, &cw);

  struct event ev = { 0 };
  ev_init(&ev, refresh_in_loop, NULL);
  uatomic_set(&refresh_step, 0);
  ev_send(main_loop(), &ev);
  while (uatomic_read(&refresh_step) != 10)
    usleep(1000);
  for (u32 k = 0; k < nets; k += 2) {     /* even nets: announced again */
    net4(&n, 100000 + k);
    rt_update(t, &n, s, c, a1, 0);
  }
  ev_send(main_loop(), &ev);
  while (uatomic_read(&refresh_step) != 20 || uatomic_read(&c->refresh.walking))
    usleep(1000);
  uatomic_set(&cw.stop, 1);
  void *bad;
  pthread_join(walker, &bad);
  assert_int_equal((long) bad, 0);

  u32 routes, stale;
  chan_count(t, c, 100000, nets, &routes, &stale);
  assert_int_equal(routes, nets / 2);
  assert_int_equal(stale, 0);
  assert_int_equal(uatomic_read(&c->stats.imp_routes), nets / 2);
  for (u32 k = 0; k < nets; k += 2) {
    net4(&n, 100000 + k);
    rt_update(t, &n, s, c, NULL, 0);
  }
  ea_unref(a1);
  rt_unlock_source(s);
  fake_channel_free(c);
}

/* A withdrawal of a walk outside the sender's loop (rt_flush_join) takes
 * the route only if it is older than the walk's generation: one imported
 * again since (a session back up) stays. */
static void
test_stale_only_withdrawal(void **state)
{
  (void) state;
  struct rtable *t = test_aux_table_new("stale-only", NET_IP4);
  struct channel *c = fake_channel(t, "stale");
  struct rte_src *s = rt_get_source(c->proto, 0);
  struct ea_list *a = attrs_pref(100, 1);
  net_addr n;
  net4(&n, 7001);
  rt_update(t, &n, s, c, a, 0);           /* generation 0 */
  struct rt_import im = { .net = &n, .src = s, .stale_only = 1, .gen = 0 };
  rt_update_batch(t, c, &im, 1);
  u32 routes, stale;
  chan_count(t, c, 7001, 1, &routes, &stale);
  assert_int_equal(im.result, RT_UPD_NONE);
  assert_int_equal(routes, 1);
  im = (struct rt_import){ .net = &n, .src = s, .stale_only = 1, .gen = 1 };
  rt_update_batch(t, c, &im, 1);
  chan_count(t, c, 7001, 1, &routes, &stale);
  assert_int_equal(im.result & RT_UPD_USABLE, RT_UPD_REMOVE);
  assert_int_equal(routes, 0);
  ea_unref(a);
  rt_unlock_source(s);
  fake_channel_free(c);
  test_aux_table_free(t);
}

/* Channels going down together are flushed by one walk of the table
 * (nest/rt_flush.c): two channels with routes on the same nets, a third
 * whose routes stay, the flushes begun and ended in the main loop (the
 * channels' loop here) one after the other, so that the second joins the
 * walk where the first has taken it. */
#define JF_BASE 60000
#define JF_NETS 20000
static struct channel *jf_chan[2];
static int jf_step;

static void
jf_flush(void *data)
{
  (void) data;
  for (int i = 0; i < 2; i++) {
    chan_refresh_begin(jf_chan[i]);
    chan_refresh_end(jf_chan[i]);
    if (!i)
      usleep(2000);
  }
  uatomic_set(&jf_step, 1);
}

static void
test_flush_joined_walk(void **state)
{
  (void) state;
  struct rtable *t = test_aux_table_new("joined", NET_IP4);
  struct channel *stay = fake_channel(t, "stays");
  struct rte_src *src[3];
  struct ea_list *a = attrs_pref(100, 1);
  for (int i = 0; i < 3; i++) {
    struct channel *c = i < 2 ? (jf_chan[i] = fake_channel(t, i ? "two" : "one")) : stay;
    src[i] = rt_get_source(c->proto, 0);
    for (u32 k = 0; k < JF_NETS; k++) {
      net_addr n;
      net4(&n, JF_BASE + k);
      rt_update(t, &n, src[i], c, a, 0);
    }
    uatomic_set(&c->stats.imp_routes, JF_NETS);
  }
  struct event ev = { 0 };
  ev_init(&ev, jf_flush, NULL);
  uatomic_set(&jf_step, 0);
  ev_send(main_loop(), &ev);
  while (!uatomic_read(&jf_step) || uatomic_read(&jf_chan[0]->refresh.walking) ||
         uatomic_read(&jf_chan[1]->refresh.walking))
    usleep(1000);
  assert_false(rt_flush_pending(t, jf_chan[0]) || rt_flush_pending(t, jf_chan[1]));
  u32 routes, stale;
  for (int i = 0; i < 3; i++) {
    struct channel *c = i < 2 ? jf_chan[i] : stay;
    chan_count(t, c, JF_BASE, JF_NETS, &routes, &stale);
    assert_int_equal(routes, i < 2 ? 0 : JF_NETS);
    assert_int_equal(uatomic_read(&c->stats.imp_routes), i < 2 ? 0 : JF_NETS);
  }
  for (u32 k = 0; k < JF_NETS; k++) {
    net_addr n;
    net4(&n, JF_BASE + k);
    rt_update(t, &n, src[2], stay, NULL, 0);
  }
  ea_unref(a);
  for (int i = 0; i < 3; i++)
    rt_unlock_source(src[i]);
  fake_channel_free(jf_chan[0]);
  fake_channel_free(jf_chan[1]);
  fake_channel_free(stay);
  test_aux_table_free(t);
}

/* --- Route groups: a class comparing MEDs within a neighbor AS only ---
 * Attributes 1.1 neighbor AS, 1.2 MED, 1.3 router id. */

static u32
grp_val(const struct ea_list *a, u16 code)
{
  return ea_find(a, EA_CODE(1, code))->val;
}

static int
grp_better(const struct rte *a, const struct rte *b)
{
  if (grp_val(rte_attrs(a), 1) == grp_val(rte_attrs(b), 1) && grp_val(rte_attrs(a), 2) != grp_val(rte_attrs(b), 2))
    return grp_val(rte_attrs(a), 2) < grp_val(rte_attrs(b), 2);
  return grp_val(rte_attrs(a), 3) < grp_val(rte_attrs(b), 3);
}

static u64
grp_group(const struct rte *r)
{
  return 1ULL << 32 | grp_val(rte_attrs(r), 1);
}

/* Routes of a group with the best's MED tie with it (as BGP's through the
 * MEDs) */
static int
grp_mergable(const struct rte *best, const struct rte *r)
{
  return grp_val(rte_attrs(best), 2) == grp_val(rte_attrs(r), 2);
}

static const struct proto_class group_class = {
  .name = "Grp", .keyword = "grp", .class_id = 10, .rte_better = grp_better, .rte_group = grp_group,
};

static const struct proto_class group_merge_class = {
  .name = "Grp", .keyword = "grp", .class_id = 10, .rte_better = grp_better, .rte_group = grp_group,
  .rte_mergable = grp_mergable,
};

static struct ea_list *
grp_attrs(u32 as, u32 med, u32 id)
{
  struct ea_builder b;
  ea_builder_init(&b);
  b.source = RTS_STATIC;
  b.dest = RTD_BLACKHOLE;
  b.preference = 100;
  ea_set_int(&b, EA_CODE(1, 1), EAF_INT, 0, as);
  ea_set_int(&b, EA_CODE(1, 2), EAF_INT, 0, med);
  ea_set_int(&b, EA_CODE(1, 3), EAF_INT, 0, id);
  return ea_intern(&b);
}

/* Whether have[i] is the best of its AS: by MED, then id. */
static int
grp_is_group_best(struct ea_list *const *have, uint n, uint i)
{
  for (uint j = 0; j < n; j++)
    if (have[j] && j != i && grp_val(have[j], 1) == grp_val(have[i], 1) &&
        (grp_val(have[j], 2) < grp_val(have[i], 2) ||
         (grp_val(have[j], 2) == grp_val(have[i], 2) && grp_val(have[j], 3) < grp_val(have[i], 3))))
      return 0;
  return 1;
}

/* Whether have[i] is to be unsuppressed: its AS's best, or, where the
 * class merges, of that best's MED. */
static int
grp_kept(struct ea_list *const *have, uint n, uint i, int merge)
{
  for (uint j = 0; j < n; j++)
    if (have[j] && grp_val(have[j], 1) == grp_val(have[i], 1) && grp_is_group_best(have, n, j))
      return j == i || (merge && grp_val(have[j], 2) == grp_val(have[i], 2));
  return 0;
}

/* The RFC 4271 answer by brute force: each AS's best by MED (then id),
 * then the lowest id among those. */
static int
grp_expected(struct ea_list *const *have, uint n)
{
  int best = -1;
  for (uint i = 0; i < n; i++)
    if (have[i] && grp_is_group_best(have, n, i) && (best < 0 || grp_val(have[i], 3) < grp_val(have[best], 3)))
      best = i;
  return best;
}

/* Random announcements and withdrawals of 6 sources in 3 ASes: the best
 * is always the order-independent one, every route is in the chain once,
 * suppressed unless kept (grp_kept), and the journal's last word on the
 * net is the chain's best. */
static void
route_groups_run(const struct proto_class *class)
{
  enum { SRCS = 6, STEPS = 3000 };
  struct rtable *t = test_table();
  struct rte_src *src[SRCS];
  struct ea_list *have[SRCS] = { 0 };
  for (uint i = 0; i < SRCS; i++) {
    struct proto *p = fake_proto("g");
    p->class = class;
    src[i] = rt_get_source(p, 0);
  }
  net_addr n;
  net4(&n, 8888);
  struct rt_reader rd = { 0 };
  rt_reader_attach(t, &rd, main_loop(), NULL);
  srandom(4271);
  for (uint step = 0; step < STEPS; step++) {
    uint i = random() % SRCS;
    if (have[i])
      ea_unref(have[i]);
    /* ids differ per source: the expected best is unambiguous */
    have[i] = random() % 4 ? grp_attrs(65000 + random() % 3, random() % 4 * 10, 100 + i) : NULL;
    rt_update(t, &n, src[i], NULL, have[i], 0);

    rcu_read_lock();
    const struct rt_journal_item *it, *last = NULL;
    while ((it = rt_reader_next(&rd)))
      last = it;
    struct net *net = rt_find_net(t, &n);
    struct rte *best = net ? net_best(net) : NULL;
    int want = grp_expected(have, SRCS);
    if (want < 0)
      assert_null(best);
    else
      assert_ptr_equal(rte_src(best), src[want]);
    if (last)
      assert_ptr_equal(last->new_best, best);
    uint seen = 0;
    for (struct rte *r = best; r; r = r->next)
      for (uint k = 0; k < SRCS; k++)
        if (rte_src(r) == src[k]) {
          assert_false(seen & (1u << k));
          assert_ptr_equal(rte_attrs(r), have[k]);
          assert_int_equal(!rte_suppressed(r), grp_kept(have, SRCS, k, class->rte_mergable != NULL));
          seen |= 1u << k;
        }
    for (uint k = 0; k < SRCS; k++)
      assert_int_equal(!!(seen & (1u << k)), !!have[k]);
    rcu_read_unlock();
  }
  for (uint i = 0; i < SRCS; i++) {
    rt_update(t, &n, src[i], NULL, NULL, 0);
    if (have[i])
      ea_unref(have[i]);
  }
  rcu_read_lock();
  while (rt_reader_next(&rd))
    ;
  rcu_read_unlock();
  rt_reader_detach(&rd);
  test_srcs_free(src, SRCS);
}

static void
test_route_groups(void **state)
{
  (void) state;
  route_groups_run(&group_class);
}

/* Routes that tie with their group's best stay unsuppressed beside it. */
static void
test_route_groups_merging(void **state)
{
  (void) state;
  route_groups_run(&group_merge_class);
}

/* Grown, or waiting to free an array it retired. */
static int
index_sparse(struct rtable *t, size_t *bytes)
{
  wlock_take(&t->lock);
  int sparse = rcu_hash_sparse(&t->nets) || rcu_hash_retiring(&t->nets);
  *bytes = t->index_bytes;
  wlock_give(&t->lock);
  return sparse;
}

/* A net index that grew (to four times its nets) is compacted once no net
 * has come for RT_INDEX_QUIET, by the table's own timer; every net stays
 * found. */
static void
test_index_compacts_when_quiet(void **state)
{
  (void) state;
  struct rtable *t = test_table();
  struct two_srcs x = two_srcs_new();
  wlock_take(&t->lock);
  u32 more = t->nets.cur->mask + 1 - t->nets.count + 1;    /* one past full: a grow */
  wlock_give(&t->lock);
  const u32 base = 300000;
  net_addr n;
  for (u32 k = 0; k < more; k++) {
    net4(&n, base + k);
    rt_update(t, &n, x.s1, NULL, x.lo, 0);
  }
  loop_call_sync(t->loop, rt_cleanup, t);   /* a grow that waited; the quiet time starts */
  size_t grown, now;
  wlock_take(&t->lock);
  assert_true(rcu_hash_sparse(&t->nets));
  wlock_give(&t->lock);
  index_sparse(t, &grown);
  btime until = time_mono_now() + RT_INDEX_QUIET + S_ 5;
  while (index_sparse(t, &now) && time_mono_now() < until)
    usleep(20000);
  assert_false(index_sparse(t, &now));
  assert_true(now < grown);
  rcu_read_lock();
  for (u32 k = 0; k < more; k++) {
    net4(&n, base + k);
    assert_non_null(rt_find_net(t, &n));
  }
  rcu_read_unlock();
  for (u32 k = 0; k < more; k++) {
    net4(&n, base + k);
    rt_update(t, &n, x.s1, NULL, NULL, 0);
  }
  two_srcs_free(&x);
}

/* Run by nest/test_loops.h in a thread of their own; the main thread runs
 * the main loop, which the table code sends its cleanup events through. */
static const struct CMUnitTest tests[] = {
  cmocka_unit_test(test_best_order),
  cmocka_unit_test(test_filtered_routes),
  cmocka_unit_test(test_reader_may_meet),
  cmocka_unit_test(test_batch),
  cmocka_unit_test(test_refresh_cycle),
  cmocka_unit_test(test_copy_clash),
  cmocka_unit_test(test_flush_many),
  cmocka_unit_test(test_run_home),
  cmocka_unit_test(test_sender_reuse),
  cmocka_unit_test(test_refresh_modify),
  cmocka_unit_test(test_refresh_in_loop),
  cmocka_unit_test(test_stale_only_withdrawal),
  cmocka_unit_test(test_flush_joined_walk),
  cmocka_unit_test(test_route_groups),
  cmocka_unit_test(test_route_groups_merging),
  cmocka_unit_test(test_index_compacts_when_quiet),
};

int
main(void)
{
  return test_run_with_loops("rt_table_test", tests, NULL);
}
