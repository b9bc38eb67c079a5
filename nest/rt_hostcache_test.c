/*
 * Unit tests of the host cache (nest/rt_hostcache.c): how a next hop
 * resolves (the longest match's destination and metric, one level of
 * recursion only) and one entry followed as nets come and go; many
 * entries in one table, nets changing around them (covering one entry,
 * many, none; nets ending right before or starting right after an entry;
 * entries added after the cache's index was built, entries dropped and
 * taken again), every entry's resolution checked against a brute-force
 * longest match over the nets installed. The table loop re-resolves in
 * the background: the checks wait for it.
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
#include "lib/printf.h"
#include "nest/proto.h"
#include "nest/rt.h"
#include "nest/reconf.h"
#include "nest/rt_hostcache.h"
#include "nest/test_loops.h"
#include "nest/test_attrs.h"

static const struct proto_class test_class = { .name = "Test", .keyword = "test", .class_id = 9 };
static struct proto test_proto = { .class = &test_class, .name = "test" };

#define MAX_NETS 1024
#define MAX_ENTRIES 512

struct hc_case {
  struct rtable *t;
  struct rte_src *src;
  net_addr nets[MAX_NETS];
  int on[MAX_NETS];
  uint nets_n;
  struct rt_hostentry *he[MAX_ENTRIES];
  uint he_n;
};

/* A case on a table of its own. */
static void
hc_begin(struct hc_case *c, const char *table, uint src)
{
  memset(c, 0, sizeof(*c));
  c->t = test_aux_table_new(table, NET_IP4);
  c->src = rt_get_source(&test_proto, src);
}

/* Dotted text of an IPv4 address. */
static const char *
hc_text(char a[32], u32 x)
{
  bsnprintf(a, 32, "%u.%u.%u.%u", x >> 24, (x >> 16) & 255, (x >> 8) & 255, x & 255);
  return a;
}

/* Net n's place in the case, made when new. */
static uint
hc_net_slot(struct hc_case *c, const net_addr *n)
{
  uint i;
  for (i = 0; i < c->nets_n && !net_equal(&c->nets[i], n); i++)
    ;
  if (i == c->nets_n) {
    assert_true(c->nets_n < MAX_NETS);
    net_copy(&c->nets[c->nets_n++], n);
  }
  return i;
}

static void
hc_net(struct hc_case *c, const char *pfx, uint len, int on)
{
  ip4_addr a;
  assert_true(ip4_pton(pfx, &a));
  net_addr n;
  net_fill_ip4(&n, a, len);
  net_normalize(&n);
  uint i = hc_net_slot(c, &n);
  c->on[i] = on;
  rt_update(c->t, &n, c->src, NULL, on ? attrs_pref(10, i) : NULL, 0);
}

static struct rt_hostentry *
hc_entry(struct hc_case *c, const char *addr)
{
  ip4_addr a;
  assert_true(ip4_pton(addr, &a));
  assert_true(c->he_n < MAX_ENTRIES);
  return c->he[c->he_n++] = rt_hostentry_get(c->t, ipa_from_ip4(a));
}

/* The longest installed net holding addr: its length, 0 for none. */
static uint
hc_expected(const struct hc_case *c, ip_addr addr)
{
  net_addr host;
  net_fill_ipa(&host, addr, 32);
  uint best = 0;
  for (uint i = 0; i < c->nets_n; i++)
    if (c->on[i] && net_in_net(&host, &c->nets[i]) && c->nets[i].pxlen > best)
      best = c->nets[i].pxlen;
  return best;
}

/* How many entries resolve otherwise than the brute force says. */
static uint
hc_wrong(const struct hc_case *c, int print)
{
  uint wrong = 0;
  rcu_read_lock();
  for (uint i = 0; i < c->he_n; i++) {
    if (!c->he[i])
      continue;
    const struct rt_nh_res *r = rt_hostentry_res(c->he[i]);
    uint want = hc_expected(c, c->he[i]->addr);
    if (r->cover_len != want || r->resolved != !!want || (want && r->dest != RTD_BLACKHOLE)) {
      if (print && wrong < 5) {
        char m[96];
        bsnprintf(m, sizeof(m), "entry %I: resolved by /%u, want /%u", c->he[i]->addr, r->cover_len, want);
        print_message("%s\n", m);
      }
      wrong++;
    }
  }
  rcu_read_unlock();
  return wrong;
}

/* The table loop catches up in the background: give it 5 s. */
static void
hc_check(const struct hc_case *c)
{
  for (int i = 0; i < 500 && hc_wrong(c, 0); i++)
    usleep(10000);
  assert_int_equal(hc_wrong(c, 1), 0);
}

static void
hc_done(struct hc_case *c)
{
  for (uint i = 0; i < c->he_n; i++)
    if (c->he[i])
      rt_hostentry_put(c->he[i]);
  rt_flush_channel(c->t, NULL);
  rt_unlock_source(c->src);
}

static void
test_hostcache_cases(void **state)
{
  (void) state;
  static struct hc_case c;
  hc_begin(&c, "igp4", 1);
  char a[32];
  /* one next hop per neighbor of a route server: 10.i.0.1 */
  for (uint i = 0; i < 200; i++) {
    bsnprintf(a, sizeof(a), "10.%u.0.1", i);
    hc_entry(&c, a);
  }
  /* right at the ends of 10.9.0.0/16 and 10.10.0.0/16 */
  hc_entry(&c, "10.9.255.255");
  hc_entry(&c, "10.10.0.0");
  hc_check(&c);                               /* nothing resolves */

  hc_net(&c, "10.5.0.0", 16, 1);              /* one entry */
  hc_check(&c);
  hc_net(&c, "10.5.0.0", 24, 1);              /* the same, longer */
  hc_net(&c, "11.0.0.0", 8, 1);               /* none */
  hc_net(&c, "10.5.1.0", 24, 1);              /* none, beside one */
  hc_check(&c);
  hc_net(&c, "10.0.0.0", 8, 1);               /* all; 10.5.0.1 keeps its /24 */
  hc_check(&c);
  hc_net(&c, "10.10.0.0", 16, 1);             /* 10.10.0.0 and 10.10.0.1, not 10.9.255.255 */
  hc_net(&c, "10.9.0.0", 16, 1);              /* 10.9.0.1 and 10.9.255.255 */
  hc_check(&c);
  hc_net(&c, "10.9.255.255", 32, 1);          /* a host route */
  hc_check(&c);
  hc_net(&c, "10.5.0.0", 24, 0);              /* back to the /16 */
  hc_check(&c);
  hc_net(&c, "10.5.0.0", 16, 0);              /* back to the /8 */
  hc_check(&c);

  /* an entry made after the index: changes reach it too */
  hc_entry(&c, "10.250.0.1");
  hc_check(&c);
  hc_net(&c, "10.250.0.0", 16, 1);
  hc_check(&c);
  /* dropped, its net changes, taken again: resolved afresh */
  rt_hostentry_put(c.he[7]);
  c.he[7] = NULL;
  hc_net(&c, "10.7.0.0", 16, 1);
  hc_check(&c);
  hc_entry(&c, "10.7.0.1");
  hc_check(&c);
  hc_net(&c, "10.0.0.0", 8, 0);
  hc_check(&c);
  hc_done(&c);
}

/* Random nets in 10.0.0.0/12 against random entries there, withdrawn and
 * announced again in rounds. */
static void
test_hostcache_random(void **state)
{
  (void) state;
  static struct hc_case c;
  srandom(7);
  hc_begin(&c, "igp4r", 2);
  char a[32];
  for (uint i = 0; i < 300; i++)
    hc_entry(&c, hc_text(a, 0x0a000000 | (random() & 0x000fffff)));
  for (uint round = 0; round < 20; round++) {
    for (uint k = 0; k < 40; k++)
      hc_net(&c, hc_text(a, 0x0a000000 | (random() & 0x000fffff)), 12 + random() % 21, 1);
    for (uint i = 0; i < c.nets_n; i++)
      if (c.on[i] && random() % 3 == 0) {
        c.on[i] = 0;
        rt_update(c.t, &c.nets[i], c.src, NULL, NULL, 0);
      }
    hc_check(&c);
  }
  hc_done(&c);
}

/* Writers churn the table from threads of their own (nets filled and
 * emptied, so that blocks free dead nets), a pin comes and goes and
 * another reader reads beside them, while the table loop's cache reader
 * polls and the cleanup frees the blocks every reader has passed: a
 * reader's cursor must never outlive its block (the sanitizer builds
 * catch a read of a freed one), and the entries end resolved as the
 * nets left say. */
#define CHURN_WRITERS 2
#define CHURN_NETS 256

struct churn {
  struct hc_case *c;
  struct rte_src *src;
  struct ea_list *attrs;
  uint seed, rounds;
  int stop;
};

static u32
churn_net_addr(uint k)
{
  return 0x0a000000 | (k << 8);
}

static void *
churn_writer(void *arg)
{
  struct churn *w = arg;
  rcu_thread_register();
  uint x = w->seed;
  net_addr n;
  for (uint i = 0; i < w->rounds; i++) {
    x = x * 1103515245 + 12345;
    uint k = (x >> 8) % CHURN_NETS;
    net_fill_ip4(&n, ip4_from_u32(churn_net_addr(k)), 16 + (x >> 28) % 9);
    net_normalize(&n);
    rt_update(w->c->t, &n, w->src, NULL, (x >> 4) & 1 ? w->attrs : NULL, 0);
  }
  rcu_thread_unregister();
  return NULL;
}

/* A pin attached and detached over and over, and a reader reading to
 * the end now and then: the readers' list changes under the cleanup. */
static void *
churn_readers(void *arg)
{
  struct churn *w = arg;
  rcu_thread_register();
  static struct rt_reader pin, rd;
  rt_reader_attach(w->c->t, &rd, NULL, NULL);
  while (!uatomic_read(&w->stop)) {
    rt_reader_attach(w->c->t, &pin, NULL, NULL);
    rcu_read_lock();
    for (uint i = 0; i < 5000 && rt_reader_next(&rd); i++)
      ;
    rcu_read_unlock();
    rt_reader_detach(&pin);
    usleep(100);
  }
  rt_reader_detach(&rd);
  rcu_thread_unregister();
  return NULL;
}

static void
test_hostcache_churn(void **state)
{
  (void) state;
  static struct hc_case c;
  hc_begin(&c, "igp4c", 3);
  char a[32];
  for (uint i = 0; i < 64; i++)
    hc_entry(&c, hc_text(a, churn_net_addr((i * 37) % CHURN_NETS) | (1 + i)));
  struct churn w[CHURN_WRITERS], rd = { .c = &c };
  pthread_t th[CHURN_WRITERS], rth;
  for (uint i = 0; i < CHURN_WRITERS; i++) {
    w[i] = (struct churn){ .c = &c, .src = rt_get_source(&test_proto, 10 + i), .attrs = attrs_pref(10 + i, i),
                           .seed = 17 + i, .rounds = 150000 };
    pthread_create(&th[i], NULL, churn_writer, &w[i]);
  }
  pthread_create(&rth, NULL, churn_readers, &rd);
  for (uint i = 0; i < CHURN_WRITERS; i++)
    pthread_join(th[i], NULL);
  uatomic_set(&rd.stop, 1);
  pthread_join(rth, NULL);

  /* what the writers left, as hc_case's brute force knows it */
  rcu_read_lock();
  for (uint k = 0; k < CHURN_NETS; k++)
    for (uint len = 16; len <= 24; len++) {
      net_addr n;
      net_fill_ip4(&n, ip4_from_u32(churn_net_addr(k)), len);
      net_normalize(&n);
      struct net *nt = rt_find_net(c.t, &n);
      if (nt && net_best(nt))
        c.on[hc_net_slot(&c, &n)] = 1;
    }
  rcu_read_unlock();
  hc_check(&c);
  hc_done(&c);        /* flushes the writers' routes too */
  for (uint i = 0; i < CHURN_WRITERS; i++) {
    ea_unref(w[i].attrs);
    rt_unlock_source(w[i].src);
  }
}

/* --- Resolution, and one entry followed through changes --- */

static struct ea_list *
attrs_dest(u8 dest, ip_addr gw, u32 igp_metric, u8 flags)
{
  struct ea_builder b;
  ea_builder_init(&b);
  b.source = RTS_STATIC;
  b.dest = dest;
  b.gw = gw;
  b.igp_metric = igp_metric;
  b.flags = flags;
  b.preference = 200;
  return ea_intern(&b);
}

static ip_addr
ip4(u32 a)
{
  return ipa_from_ip4(ip4_from_u32(a));
}

/* Wait for the table loop's host cache run to publish a change. */
static const struct rt_nh_res *
hc_wait(struct rt_hostentry *he, u8 dest)
{
  for (int i = 0; i < 2000; i++) {
    rcu_read_lock();
    const struct rt_nh_res *r = rt_hostentry_res(he);
    u8 d = r->dest;
    rcu_read_unlock();
    if (d == dest)
      return r;
    usleep(1000);
  }
  return NULL;
}

static void
test_recursive_nexthop(void **state)
{
  (void) state;
  struct rtable *t = rt_find_table("master4");
  struct rte_src *src = rt_get_source(&test_proto, 99);
  net_addr n16, n24, n25;
  net_fill_ip4(&n16, ip4_from_u32(0xac100000), 16);     /* 172.16.0.0/16 blackhole, metric 5 */
  net_fill_ip4(&n24, ip4_from_u32(0xac100200), 24);     /* 172.16.2.0/24 via 10.9.9.9 */
  net_fill_ip4(&n25, ip4_from_u32(0xac100300), 24);     /* 172.16.3.0/24, itself recursive */
  struct ea_list *bh = attrs_dest(RTD_BLACKHOLE, IPA_NONE, 5, 0);
  struct ea_list *via = attrs_dest(RTD_UNICAST, ip4(0x0a090909), 0, 0);
  struct ea_list *rec = attrs_dest(RTD_UNICAST, ip4(0x0a090909), 0, EAL_RECURSIVE);
  rt_update(t, &n16, src, NULL, bh, 0);
  rt_update(t, &n24, src, NULL, via, 0);
  rt_update(t, &n25, src, NULL, rec, 0);

  struct rt_nh_res r;
  rcu_read_lock();
  rt_nh_resolve(t, ip4(0xac100101), &r);      /* 172.16.1.1: the /16 */
  assert_int_equal(r.dest, RTD_BLACKHOLE);
  assert_int_equal(r.igp_metric, 5);
  assert_int_equal(r.cover_len, 16);
  assert_true(r.resolved);
  rt_nh_resolve(t, ip4(0xac100201), &r);      /* the /24's gateway, metric unknown */
  assert_int_equal(r.dest, RTD_UNICAST);
  assert_true(ipa_equal(r.gw, ip4(0x0a090909)));
  assert_int_equal(r.igp_metric, IGP_METRIC_UNKNOWN);
  rt_nh_resolve(t, ip4(0xac100301), &r);      /* one level only */
  assert_int_equal(r.dest, RTD_UNREACHABLE);
  assert_false(r.resolved);
  assert_int_equal(r.igp_metric, 0);
  rt_nh_resolve(t, ip4(0xc0000201), &r);      /* nothing covers it */
  assert_int_equal(r.dest, RTD_UNREACHABLE);
  assert_int_equal(r.cover_len, 0);
  rcu_read_unlock();

  /* A route that stays unreachable when its next hop stops resolving
   * keeps its fields (BIRD's rta_next_hop_outdated). */
  struct ea_list *unr = attrs_dest(RTD_UNREACHABLE, IPA_NONE, 7, EAL_RECURSIVE);
  assert_true(rt_nh_same(unr, &r));
  struct ea_builder b;
  ea_builder_from(&b, unr);
  rt_nh_apply(&b, &(struct rt_nh_res){ .dest = RTD_BLACKHOLE, .igp_metric = 5, .resolved = 1 });
  struct ea_list *bl = ea_intern(&b);
  assert_int_equal(bl->dest, RTD_BLACKHOLE);
  assert_int_equal(bl->igp_metric, 5);
  assert_false(rt_nh_same(bl, &r));

  /* The cache: one entry per address, re-resolved when the table changes
   * under it, not when a shorter net changes. */
  struct rt_hostentry *he = rt_hostentry_get(t, ip4(0xac100401));    /* 172.16.4.1 */
  assert_ptr_equal(rt_hostentry_get(t, ip4(0xac100401)), he);
  rt_hostentry_put(he);
  assert_non_null(hc_wait(he, RTD_BLACKHOLE));
  net_addr n4;
  net_fill_ip4(&n4, ip4_from_u32(0xac100400), 24);
  rt_update(t, &n4, src, NULL, via, 0);
  const struct rt_nh_res *now = hc_wait(he, RTD_UNICAST);
  assert_non_null(now);
  assert_int_equal(now->cover_len, 24);
  rt_update(t, &n4, src, NULL, NULL, 0);
  assert_non_null(hc_wait(he, RTD_BLACKHOLE));
  rt_update(t, &n16, src, NULL, NULL, 0);
  assert_non_null(hc_wait(he, RTD_UNREACHABLE));
  rt_hostentry_put(he);

  rt_update(t, &n24, src, NULL, NULL, 0);
  rt_update(t, &n25, src, NULL, NULL, 0);
  ea_unref(bh);
  ea_unref(via);
  ea_unref(rec);
  ea_unref(unr);
  ea_unref(bl);
  rt_unlock_source(src);
}

static void
hc_setup(void)
{
  config_commit(config_new_empty("test"));
}

static const struct CMUnitTest tests[] = {
  cmocka_unit_test(test_recursive_nexthop),
  cmocka_unit_test(test_hostcache_cases),
  cmocka_unit_test(test_hostcache_random),
  cmocka_unit_test(test_hostcache_churn),
};

int
main(void)
{
  return test_run_with_loops("rt_hostcache_test", tests, hc_setup);
}
