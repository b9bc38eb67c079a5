/*
 * Unit tests of the net index's lookups (nest/rt_index.c): longest-prefix
 * matches and exact lookups against the brute-force walk of the whole
 * table, on random nets of every length (so the probes go in several
 * waves), some with only filtered routes, some withdrawn.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include "conf/conf.h"
#include "nest/reconf.h"
#include "nest/rt.h"
#include "nest/test_loops.h"
#include "nest/test_table.h"

/* The walk: the longest net with a usable route that holds n. */
static struct net *
lpm_brute(struct rtable *t, const net_addr *n)
{
  struct net *best = NULL;
  struct rcu_hash_iter it;
  for (struct net *x = rt_first_net(t, &it); x; x = rt_next_net(t, &it))
    if (net_best(x) && net_in_net(n, &x->n) && (!best || x->n.pxlen > best->n.pxlen))
      best = x;
  return best;
}

/* A random prefix of length len in a small space (nests are the point):
 * 10.0.0.0/12 or 2001:db8::/40, one in four anywhere. */
static void
rand_prefix(net_addr *n, int v6, uint len)
{
  u32 hi = 0x0a000000 | (random() & 0x000fffff), top = 0x20010db8;
  if (random() % 4 == 0) {
    hi |= random() & 0xfff00000;
    top = random();
  }
  if (v6)
    net_fill_ip6(n, ip6_build(top, (hi << 8) & 0x00ffffff, random() % 4 ? 0 : random(), random()), len);
  else
    net_fill_ip4(n, ip4_from_u32(hi), len);
  net_normalize(n);
}

/* Lengths: every one of /8../32 (/16../128) now and then, most of them
 * in a band (as in a real table), so that some lookups find their net in
 * the first wave and some only after several. Shorter ones would hold
 * every query (test_lpm_default has /0). */
static uint
rand_len(int v6)
{
  uint min = v6 ? 16 : 8, max = v6 ? 128 : 32;
  if (random() % 3 == 0)
    return min + random() % (max - min + 1);
  return v6 ? 24 + random() % 41 : 8 + random() % 17;
}

/* A random host address inside net p. */
static void
host_in(net_addr *n, const net_addr *p)
{
  if (p->type == NET_IP6) {
    ip6_addr host = ip6_and(ip6_build(random(), random(), random(), random()), ip6_not(ip6_mkmask(p->pxlen)));
    ip6_addr a = ((const net_addr_ip6 *) p)->prefix;
    for (uint i = 0; i < 4; i++)
      a.addr[i] |= host.addr[i];
    net_fill_ip6(n, a, 128);
  } else
    net_fill_ip4(n, ip4_from_u32(((const net_addr_ip4 *) p)->prefix.addr | ((u32) random() & ~u32_mkmask(p->pxlen))), 32);
}

static void
lpm_random_round(int v6, uint seed)
{
  srandom(seed);
  struct rtable *t = test_aux_table_new(v6 ? "l6" : "l4", v6 ? NET_IP6 : NET_IP4);
  struct two_srcs x = two_srcs_new();
  struct rte_src *src[2] = { x.s1, x.s2 };

  uint nnet = 200 + random() % 1500;
  net_addr *nets = calloc(nnet, sizeof(net_addr));
  for (uint i = 0; i < nnet; i++) {
    rand_prefix(&nets[i], v6, rand_len(v6));
    /* one in eight only filtered: in the index, but no match */
    rt_update(t, &nets[i], src[random() % 2], NULL, random() % 2 ? x.lo : x.hi, random() % 8 ? 0 : REF_FILTERED);
  }
  for (int round = 0; round < 2; round++) {
    uint found = 0, missed = 0;
    for (uint q = 0; q < 3000; q++) {
      net_addr n;
      if (q % 3)            /* an address or a prefix anywhere in the space */
        rand_prefix(&n, v6, random() % 2 ? (v6 ? 128 : 32) : rand_len(v6));
      else                  /* an address inside a net */
        host_in(&n, &nets[random() % nnet]);
      rcu_read_lock();
      struct net *want = lpm_brute(t, &n), *got = rt_lookup_lpm(t, &n);
      if (want != got) {
        char buf[NET_MAX_TEXT_LENGTH + 1], wbuf[NET_MAX_TEXT_LENGTH + 1] = "-", gbuf[NET_MAX_TEXT_LENGTH + 1] = "-";
        net_ntop(&n, buf);
        if (want)
          net_ntop(&want->n, wbuf);
        if (got)
          net_ntop(&got->n, gbuf);
        rcu_read_unlock();
        fail_msg("seed %u round %d: %s: lookup %s, walk %s", seed, round, buf, gbuf, wbuf);
      }
      /* an exact lookup finds what the walk found, by its own key */
      if (want)
        assert_ptr_equal(rt_find_net(t, &want->n), want);
      rcu_read_unlock();
      if (want)
        found++;
      else
        missed++;
    }
    /* the nets are dense enough that both outcomes happen often */
    if (!(found > 300 && missed > 100))
      fail_msg("seed %u round %d: %u found, %u missed", seed, round, found, missed);
    /* withdraw about half (per source), then compare again */
    for (uint i = 0; i < nnet; i++)
      if (random() % 2)
        for (uint s = 0; s < 2; s++)
          rt_update(t, &nets[i], src[s], NULL, NULL, 0);
  }
  rt_flush_channel(t, NULL);
  two_srcs_free(&x);
  free(nets);
}

static void
test_lpm_random(void **state)
{
  (void) state;
  for (uint seed = 1; seed <= 8; seed++)
    lpm_random_round(seed % 2, seed);
}

/* A table without nets of some lengths, and the default route: a probe at
 * a length no net has costs nothing, and /0 is the last resort. */
static void
test_lpm_default(void **state)
{
  (void) state;
  struct rtable *t = test_aux_table_new("d4", NET_IP4);
  struct two_srcs x = two_srcs_new();
  net_addr dflt, n24, q;
  net_fill_ip4(&dflt, IP4_NONE, 0);
  net_fill_ip4(&n24, ip4_from_u32(0x0a010200), 24);
  rt_update(t, &n24, x.s1, NULL, x.lo, 0);

  rcu_read_lock();
  net_fill_ip4(&q, ip4_from_u32(0x0a0102ff), 32);
  assert_ptr_equal(rt_lookup_lpm(t, &q), rt_find_net(t, &n24));
  net_fill_ip4(&q, ip4_from_u32(0x0a010300), 32);
  assert_null(rt_lookup_lpm(t, &q));
  /* a prefix shorter than every net: nothing */
  net_fill_ip4(&q, ip4_from_u32(0x0a000000), 16);
  assert_null(rt_lookup_lpm(t, &q));
  rcu_read_unlock();

  rt_update(t, &dflt, x.s2, NULL, x.hi, 0);
  rcu_read_lock();
  net_fill_ip4(&q, ip4_from_u32(0x0a010300), 32);
  assert_ptr_equal(rt_lookup_lpm(t, &q), rt_find_net(t, &dflt));
  assert_ptr_equal(rt_lookup_lpm(t, &dflt), rt_find_net(t, &dflt));
  net_fill_ip4(&q, ip4_from_u32(0x0a010280), 25);
  assert_ptr_equal(rt_lookup_lpm(t, &q), rt_find_net(t, &n24));
  rcu_read_unlock();

  rt_flush_channel(t, NULL);
  two_srcs_free(&x);
}

static void
index_setup(void)
{
  config_commit(config_new_empty("test"));
}

static const struct CMUnitTest tests[] = {
  cmocka_unit_test(test_lpm_random),
  cmocka_unit_test(test_lpm_default),
};

int
main(void)
{
  return test_run_with_loops("rt_index_test", tests, index_setup);
}
