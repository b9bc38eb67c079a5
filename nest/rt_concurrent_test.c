/*
 * Unit tests of the table core under concurrency (run under TSan in CI):
 * writers single and batched, a journal reader that must see every
 * change once, readers that come and go at its place, feeds pinning the
 * net list, the host cache reading in the table loop, and a walker of
 * the chains, all at once on one table.
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
#include "nest/rt.h"
#include "nest/rt_hostcache.h"
#include "nest/test_attrs.h"
#include "nest/test_loops.h"
#include "nest/test_table.h"

static int stop_readers;

/* --- Concurrency --- */

#define WRITERS 4
#define SRCS 2              /* per writer: chains of up to 8 routes, past what
                               a batch's stages read ahead of its lock */
#define NETS 512
#define OPS 20000

struct writer {
  pthread_t th;
  struct rtable *t;
  struct rte_src *src[SRCS];
  struct ea_list *attrs[3];
  u8 have[SRCS][NETS];      /* final state per source and net */
  u64 changes;
  unsigned seed;
  int batched;              /* writes with rt_update_batch */
};

static void *
writer_main(void *arg)
{
  struct writer *w = arg;
  rcu_thread_register();
  struct rt_import im[40];
  net_addr nets[40];
  for (int i = 0; i < OPS;) {
    /* a batch of 1-40 updates, or a single one */
    uint count = w->batched ? 1 + rand_r(&w->seed) % 40 : 1;
    for (uint j = 0; j < count; j++) {
      u32 k = rand_r(&w->seed) % NETS;
      int op = rand_r(&w->seed) % 4;
      uint s = rand_r(&w->seed) % SRCS;
      net4(&nets[j], k);
      im[j] = (struct rt_import){ .net = &nets[j], .src = w->src[s], .attrs = op == 3 ? NULL : w->attrs[op] };
      w->have[s][k] = op != 3;
    }
    if (w->batched)
      rt_update_batch(w->t, NULL, im, count);
    else
      im[0].result = rt_update(w->t, im[0].net, im[0].src, NULL, im[0].attrs, 0);
    for (uint j = 0; j < count; j++)
      w->changes += im[j].result != RT_UPD_NONE;
    i += count;
  }
  rcu_thread_unregister();
  return NULL;
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
        /* Routes read here are live (ASan reports a route read after its
         * free; a chain may show a source twice while it changes). */
        for (struct rte *r = rcu_dereference(n->routes); r; r = rcu_dereference(r->next))
          assert_true(rte_attrs(r) && rte_src(r));
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

#define MET_SLOTS (1u << 18)  /* > WRITERS * OPS: the routes items brought */

struct jreader {
  struct rtable *t;
  struct rt_reader r;
  u64 items;
  const struct rte **met;     /* open addressing: routes whose item was read */
  u64 missed;                 /* routes seen before their item of which
                                 rt_reader_may_meet() said 0 */
};

/* r's slot in the set: where it is, or the empty one it would take. */
static const struct rte **
met_slot(struct jreader *j, const struct rte *r)
{
  u32 i = hash_ptr(r) & (MET_SLOTS - 1);
  while (j->met[i] && j->met[i] != r)
    i = (i + 1) & (MET_SLOTS - 1);
  return &j->met[i];
}

/* Readers that come and go: each starts where the journal reader is
 * (as an update group's member does at the group's reader), reads a few
 * items slowly, each in a read section of its own, and leaves. With the
 * writers trimming the journal and the table's host cache reading it in
 * the table loop, none may find its items freed (sanitizer builds check
 * every item read: rt_reader_check). */
static void *
tagalong_main(void *arg)
{
  struct jreader *j = arg;
  long rounds = 0;
  unsigned seed = 99;
  rcu_thread_register();
  do {      /* once at least: on a busy host the writers may be done first */
    struct rt_reader r = { 0 };
    rt_reader_attach_at(j->t, &r, NULL, NULL, &j->r);
    for (uint k = rand_r(&seed) % 2000; k; k--) {
      rcu_read_lock();
      const struct rt_journal_item *it = rt_reader_next(&r);
      assert_true(!it || it->net);
      rcu_read_unlock();
      if (!(k & 63))
        sched_yield();
    }
    rt_reader_detach(&r);
    rounds++;
  } while (!uatomic_read(&stop_readers));
  rcu_thread_unregister();
  return (void *) rounds;
}

/* Reads the journal to its end, then looks at a few chains the way a
 * feed does: a route whose item it has not read yet must be one that
 * rt_reader_may_meet() says may come (a freed route's address used again
 * can only hide a case, not make one up). */
static void *
journal_main(void *arg)
{
  struct jreader *j = arg;
  unsigned seed = 77;
  rcu_thread_register();
  for (;;) {
    int stop = uatomic_read(&stop_readers);
    rcu_read_lock();
    const struct rt_journal_item *it;
    while ((it = rt_reader_next(&j->r))) {
      j->items++;
      if (it->new_rte)
        *met_slot(j, it->new_rte) = it->new_rte;
    }
    for (uint k = 0; k < 8; k++) {
      net_addr a;
      net4(&a, rand_r(&seed) % NETS);
      struct net *n = rt_find_net(j->t, &a);
      for (struct rte *r = n ? rcu_dereference(n->routes) : NULL; r; r = rcu_dereference(r->next))
        if (!*met_slot(j, r))
          j->missed += !rt_reader_may_meet(&j->r);
    }
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

  struct jreader j = { .t = t, .met = calloc(MET_SLOTS, sizeof(*j.met)) };
  rt_reader_attach(t, &j.r, main_loop(), NULL);

  for (int i = 0; i < WRITERS; i++) {
    char name[16];
    w[i].t = t;
    for (int s = 0; s < SRCS; s++) {
      snprintf(name, sizeof(name), "w%d.%d", i, s);
      w[i].src[s] = rt_get_source(fake_proto(strdup(name)), 0);
    }
    for (int k = 0; k < 3; k++)
      w[i].attrs[k] = attrs_pref(100 + (i * 3 + k) % 5, i * 10 + k);
    w[i].seed = 1234 + i;
    w[i].batched = i & 1;
  }
  pthread_t walker, jr, feeder, tagalong;
  struct chain_walk cw = { .t = t };
  uatomic_set(&stop_readers, 0);
  /* the table's host cache reads the journal in the table loop */
  struct rt_hostentry *he = rt_hostentry_get(t, ipa_from_ip4(ip4_from_u32(0x0a0b0c0d)));
#ifdef BIRD_SANITIZED
  u32 bugs = uatomic_read(&rt_readers_bugs);
#endif
  pthread_create(&walker, NULL, chain_walk_main, &cw);
  pthread_create(&feeder, NULL, feeder_main, t);
  pthread_create(&jr, NULL, journal_main, &j);
  pthread_create(&tagalong, NULL, tagalong_main, &j);
  for (int i = 0; i < WRITERS; i++)
    pthread_create(&w[i].th, NULL, writer_main, &w[i]);
  for (int i = 0; i < WRITERS; i++)
    pthread_join(w[i].th, NULL);
  uatomic_set(&stop_readers, 1);
  uatomic_set(&cw.stop, 1);
  void *bad;
  pthread_join(walker, &bad);
  pthread_join(jr, NULL);
  assert_int_equal((long) bad, 0);
  void *walks, *rounds;
  pthread_join(feeder, &walks);
  assert_true((long) walks > 0);
  pthread_join(tagalong, &rounds);
  assert_true((long) rounds > 0);
  rt_hostentry_put(he);
#ifdef BIRD_SANITIZED
  assert_int_equal(uatomic_read(&rt_readers_bugs), bugs);
#endif

  /* Every change became exactly one journal item, seen once; no route
   * seen before its item was said not to come. (The reader leaves first:
   * a failed check must not leave it in the table's list.) */
  u64 changes = 0;
  for (int i = 0; i < WRITERS; i++)
    changes += w[i].changes;
  rt_reader_detach(&j.r);
  free(j.met);
  assert_int_equal(j.items, changes);
  assert_int_equal(j.missed, 0);

  /* Final content equals each writer's last operation per net. */
  u32 expect = 0;
  rcu_read_lock();
  for (u32 k = 0; k < NETS; k++) {
    net_addr n;
    net4(&n, k);
    struct net *net = rt_find_net(t, &n);
    uint want = 0, have = 0;
    for (int i = 0; i < WRITERS; i++)
      for (int s = 0; s < SRCS; s++)
        want += w[i].have[s][k];
    if (net)
      for (struct rte *r = net_best(net); r; r = r->next) {
        have++;
        /* best first: the place a writer found before the lock was
         * still right when it took it (rt_upd_walk) */
        assert_false(r->next && rte_better(r->next, r));
      }
    assert_int_equal(have, want);
    expect += want;
  }
  rcu_read_unlock();
  assert_int_equal(uatomic_read(&t->route_count) - base_routes, expect);

  /* Withdraw everything; the table must end empty. */
  for (int i = 0; i < WRITERS; i++)
    for (int s = 0; s < SRCS; s++)
      for (u32 k = 0; k < NETS; k++) {
        net_addr n;
        net4(&n, k);
        rt_update(t, &n, w[i].src[s], NULL, NULL, 0);
      }
  assert_int_equal(uatomic_read(&t->route_count), base_routes);
  struct proto *ps[WRITERS][SRCS];
  for (int i = 0; i < WRITERS; i++) {
    for (int k = 0; k < 3; k++)
      ea_unref(w[i].attrs[k]);
    for (int s = 0; s < SRCS; s++) {
      ps[i][s] = w[i].src[s]->proto;
      rt_unlock_source(w[i].src[s]);
    }
  }
  rcu_barrier();
  for (int i = 0; i < WRITERS; i++)
    for (int s = 0; s < SRCS; s++) {
      free((char *) ps[i][s]->name);
      free(ps[i][s]);
    }
}

static const struct CMUnitTest tests[] = {
  cmocka_unit_test(test_concurrent),
};

int
main(void)
{
  return test_run_with_loops("rt_concurrent_test", tests, NULL);
}
