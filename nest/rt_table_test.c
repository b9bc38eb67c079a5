/*
 * Unit tests of the table core: best-route order, the journal, and
 * concurrent writers and readers (run under TSan in CI).
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "conf/conf.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "nest/proto.h"
#include "nest/reconf.h"
#include "nest/rt.h"

static const struct proto_class test_class = { .name = "Test", .keyword = "test", .class_id = 9 };

static struct proto *
fake_proto(const char *name)
{
  struct proto *p = calloc(1, sizeof(*p));
  p->class = &test_class;
  p->name = name;
  return p;
}

static struct ea_list *
attrs_pref(u32 pref, u32 tag)
{
  struct ea_builder b;
  ea_builder_init(&b);
  b.source = RTS_STATIC;
  b.dest = RTD_BLACKHOLE;
  b.preference = pref;
  ea_set_int(&b, EA_CODE(1, 1), EAF_INT, 0, tag);
  return ea_intern(&b);
}

static struct rtable *
test_table(void)
{
  static struct rtable *t;
  if (!t) {
    struct config *c = config_new_empty("test");
    config_commit(c);
    t = rt_find_table("master4");
  }
  return t;
}

static void
net4(net_addr *n, u32 i)
{
  net_fill_ip4(n, ip4_from_u32(0x0a000000 | (i << 8)), 24);
}

static void
test_best_order(void **state)
{
  (void) state;
  struct rtable *t = test_table();
  struct rte_src *s1 = rt_get_source(fake_proto("a"), 0), *s2 = rt_get_source(fake_proto("b"), 0);
  struct ea_list *lo = attrs_pref(100, 1), *hi = attrs_pref(200, 2);
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
  assert_ptr_equal(net_best(net)->src, s2);
  assert_ptr_equal(net_best(net)->next->src, s1);
  assert_null(net_best(net)->next->next);

  const struct rt_journal_item *it = rt_reader_next(&r);
  assert_non_null(it);
  assert_ptr_equal(it->new_best->src, s1);
  assert_null(it->old_best);
  it = rt_reader_next(&r);
  assert_ptr_equal(it->new_best->src, s2);
  assert_ptr_equal(it->old_best->src, s1);
  assert_null(rt_reader_next(&r));
  rcu_read_unlock();

  assert_int_equal(rt_update(t, &n, s2, NULL, NULL, 0), RT_UPD_REMOVE);
  rcu_read_lock();
  it = rt_reader_next(&r);
  assert_ptr_equal(it->new_best->src, s1);
  assert_ptr_equal(it->old_best->src, s2);
  assert_ptr_equal(it->retired->src, s2);
  rcu_read_unlock();

  assert_int_equal(rt_update(t, &n, s1, NULL, NULL, 0), RT_UPD_REMOVE);
  rcu_read_lock();
  assert_null(rt_find_net(t, &n));
  it = rt_reader_next(&r);
  assert_null(it->new_best);
  assert_non_null(it->dead_net);
  rcu_read_unlock();
  rt_reader_detach(&r);
  ea_unref(lo);
  ea_unref(hi);
  struct proto *p1 = s1->proto, *p2 = s2->proto;
  rt_unlock_source(s1);
  rt_unlock_source(s2);
  rcu_barrier();
  free(p1);
  free(p2);
}

/* `import keep filtered`: a flagged route is kept after the usable ones,
 * never best, never in the journal as an exportable route, and counted
 * apart. */
static void
test_filtered_routes(void **state)
{
  (void) state;
  struct rtable *t = test_table();
  struct rte_src *s1 = rt_get_source(fake_proto("a"), 0), *s2 = rt_get_source(fake_proto("b"), 0);
  struct ea_list *lo = attrs_pref(100, 1), *hi = attrs_pref(200, 2);
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
  assert_ptr_equal(net_best(net)->src, s1);
  assert_ptr_equal(net->routes->next->src, s2);
  const struct rt_journal_item *it = rt_reader_next(&r);
  assert_null(it->new_best);
  assert_null(it->new_rte);
  it = rt_reader_next(&r);
  assert_ptr_equal(it->new_best->src, s1);
  rcu_read_unlock();

  /* the filtered route becomes usable: it wins now */
  assert_int_equal(rt_update(t, &n, s2, NULL, hi, 0), RT_UPD_ADD | RT_UPD_FILTERED_REMOVE);
  rcu_read_lock();
  assert_ptr_equal(net_best(rt_find_net(t, &n))->src, s2);
  rcu_read_unlock();
  /* and back: usable -> filtered is a removal of a usable route */
  assert_int_equal(rt_update(t, &n, s2, NULL, hi, REF_FILTERED), RT_UPD_REMOVE | RT_UPD_FILTERED_ADD);
  assert_int_equal(rt_update(t, &n, s2, NULL, NULL, 0), RT_UPD_FILTERED_REMOVE);
  assert_int_equal(rt_update(t, &n, s1, NULL, NULL, 0), RT_UPD_REMOVE);
  assert_int_equal(uatomic_read(&t->route_count), routes);
  assert_int_equal(uatomic_read(&t->filtered_count), filtered);

  rt_reader_detach(&r);
  ea_unref(lo);
  ea_unref(hi);
  struct proto *p1 = s1->proto, *p2 = s2->proto;
  rt_unlock_source(s1);
  rt_unlock_source(s2);
  rcu_barrier();
  free(p1);
  free(p2);
}

/* --- Concurrency --- */

#define WRITERS 4
#define NETS 512
#define OPS 20000

struct writer {
  pthread_t th;
  struct rtable *t;
  struct rte_src *src;
  struct ea_list *attrs[3];
  u8 have[NETS];            /* final state per net */
  u64 changes;
  unsigned seed;
};

static void *
writer_main(void *arg)
{
  struct writer *w = arg;
  rcu_thread_register();
  for (int i = 0; i < OPS; i++) {
    u32 k = rand_r(&w->seed) % NETS;
    int op = rand_r(&w->seed) % 4;
    net_addr n;
    net4(&n, k);
    struct ea_list *a = op == 3 ? NULL : w->attrs[op];
    if (rt_update(w->t, &n, w->src, NULL, a, 0) != RT_UPD_NONE)
      w->changes++;
    w->have[k] = !!a;
  }
  rcu_thread_unregister();
  return NULL;
}

static int stop_readers;

/* Walk chains lock-free and check they are always in best-first order. */
static void *
walker_main(void *arg)
{
  struct rtable *t = arg;
  long bad = 0;
  rcu_thread_register();
  while (!uatomic_read(&stop_readers)) {
    rcu_read_lock();
    struct cds_lfht_iter it;
    for (struct net *n = rt_first_net(t, &it); n; n = rt_next_net(t, &it)) {
      struct rte *r = rcu_dereference(n->routes), *next;
      /* Each pointer is loaded once: the chain changes under our feet. */
      for (; r && (next = rcu_dereference(r->next)); r = next)
        if (rte_better(next, r))
          bad++;
    }
    rcu_read_unlock();
  }
  rcu_thread_unregister();
  return (void *) bad;
}

/* A feed: walk the net list in small steps, each in its own RCU read
 * section, with a pinned reader keeping removed nets alive (the way an
 * export channel refeeds). ASan/TSan catch a cursor left dangling. */
static void *
feeder_main(void *arg)
{
  struct rtable *t = arg;
  long walks = 0;
  rcu_thread_register();
  while (!uatomic_read(&stop_readers)) {
    struct rt_reader pin = { 0 };
    rt_reader_attach(t, &pin, main_loop(), NULL);
    rcu_read_lock();
    struct net *n = rt_feed_first(t);
    rcu_read_unlock();
    while (n) {
      rcu_read_lock();
      for (int k = 0; n && k < 7; k++) {
        for (struct rte *r = rcu_dereference(n->routes); r; r = rcu_dereference(r->next))
          assert_true(net_equal(&r->net->n, &n->n));
        n = rt_feed_next(n);
      }
      rcu_read_unlock();
      sched_yield();
    }
    rt_reader_detach(&pin);
    walks++;
  }
  rcu_thread_unregister();
  return (void *) walks;
}

struct jreader {
  struct rtable *t;
  struct rt_reader r;
  u64 items;
};

static void *
journal_main(void *arg)
{
  struct jreader *j = arg;
  rcu_thread_register();
  for (;;) {
    int stop = uatomic_read(&stop_readers);
    rcu_read_lock();
    while (rt_reader_next(&j->r))
      j->items++;
    rcu_read_unlock();
    if (stop)
      break;
  }
  rcu_thread_unregister();
  return NULL;
}

static void
test_concurrent(void **state)
{
  (void) state;
  struct rtable *t = test_table();
  static struct writer w[WRITERS];
  u32 base_routes = uatomic_read(&t->route_count);

  struct jreader j = { .t = t };
  rt_reader_attach(t, &j.r, main_loop(), NULL);

  for (int i = 0; i < WRITERS; i++) {
    char name[16];
    snprintf(name, sizeof(name), "w%d", i);
    w[i].t = t;
    w[i].src = rt_get_source(fake_proto(strdup(name)), 0);
    for (int k = 0; k < 3; k++)
      w[i].attrs[k] = attrs_pref(100 + (i * 3 + k) % 5, i * 10 + k);
    w[i].seed = 1234 + i;
  }
  pthread_t walker, jr, feeder;
  uatomic_set(&stop_readers, 0);
  pthread_create(&walker, NULL, walker_main, t);
  pthread_create(&feeder, NULL, feeder_main, t);
  pthread_create(&jr, NULL, journal_main, &j);
  for (int i = 0; i < WRITERS; i++)
    pthread_create(&w[i].th, NULL, writer_main, &w[i]);
  for (int i = 0; i < WRITERS; i++)
    pthread_join(w[i].th, NULL);
  uatomic_set(&stop_readers, 1);
  void *bad;
  pthread_join(walker, &bad);
  pthread_join(jr, NULL);
  assert_int_equal((long) bad, 0);
  void *walks;
  pthread_join(feeder, &walks);
  assert_true((long) walks > 0);

  /* Every change became exactly one journal item, seen once. */
  u64 changes = 0;
  for (int i = 0; i < WRITERS; i++)
    changes += w[i].changes;
  assert_int_equal(j.items, changes);

  /* Final content equals each writer's last operation per net. */
  u32 expect = 0;
  rcu_read_lock();
  for (u32 k = 0; k < NETS; k++) {
    net_addr n;
    net4(&n, k);
    struct net *net = rt_find_net(t, &n);
    uint want = 0, have = 0;
    for (int i = 0; i < WRITERS; i++)
      want += w[i].have[k];
    if (net)
      for (struct rte *r = net_best(net); r; r = r->next)
        have++;
    assert_int_equal(have, want);
    expect += want;
  }
  rcu_read_unlock();
  assert_int_equal(uatomic_read(&t->route_count) - base_routes, expect);
  rt_reader_detach(&j.r);

  /* Withdraw everything; the table must end empty. */
  for (int i = 0; i < WRITERS; i++)
    for (u32 k = 0; k < NETS; k++) {
      net_addr n;
      net4(&n, k);
      rt_update(t, &n, w[i].src, NULL, NULL, 0);
    }
  assert_int_equal(uatomic_read(&t->route_count), base_routes);
  for (int i = 0; i < WRITERS; i++) {
    for (int k = 0; k < 3; k++)
      ea_unref(w[i].attrs[k]);
    rt_unlock_source(w[i].src);
  }
}

static int test_result;

/* Tests run in their own thread; the process's main thread runs the main
 * loop, which the table code sends its cleanup events through. */
static void *
test_thread(void *arg)
{
  (void) arg;
  rcu_thread_register();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_best_order),
    cmocka_unit_test(test_filtered_routes),
    cmocka_unit_test(test_concurrent),
  };
  test_result = cmocka_run_group_tests(tests, NULL, NULL);
  rcu_thread_unregister();
  loop_main_quit();
  return NULL;
}

int
main(void)
{
  resource_init();
  log_init("rt_table_test");
  hash_seed_init();
  ea_init();
  sched_main_init();
  pthread_t th;
  pthread_create(&th, NULL, test_thread, NULL);
  sched_main_run();
  pthread_join(th, NULL);
  return test_result;
}
