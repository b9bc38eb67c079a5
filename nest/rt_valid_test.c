/*
 * Unit tests of ROA and ASPA validation (nest/rt_roa.c, nest/rt_aspa.c):
 * the ASPA algorithm on the cases of draft-ietf-sidrops-aspa-verification
 * (upstream and downstream, valid / invalid / unknown), AS_PATH handling
 * against a real aspa table (prepends, AS_SET, empty path, confederation
 * segments, several sources, filtered routes), and roa_check by lookups
 * against the brute-force walk of the whole table on random ROA sets.
 */
#include <pthread.h>
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
#include "nest/ea_bgp.h"
#include "nest/proto.h"
#include "nest/rt.h"
#include "nest/test_loops.h"
#include "nest/reconf.h"
#include "nest/rt_valid.h"

static const struct proto_class test_class = { .name = "Test", .keyword = "test", .class_id = 9 };
static struct proto test_proto = { .class = &test_class, .name = "test" };

/* --- The algorithm alone, with an in-memory provider relation --- */

struct aspa_rec { u32 customer; u32 providers[4]; uint count; };

/* The customer-provider relation of the cases below ("-" = transit, AS0):
 *   1 -> 2, 2 -> 3, 3 -> -, 4 -> 3, 5 -> 4, 10 -> -, 11 -> 3 12, 12 -> -
 * 6, 13, 14, 15 have no record. */
static const struct aspa_rec recs[] = {
  { 1, { 2 }, 1 }, { 2, { 3 }, 1 }, { 3, { 0 }, 0 }, { 4, { 3 }, 1 }, { 5, { 4 }, 1 },
  { 10, { 0 }, 0 }, { 11, { 3, 12 }, 2 }, { 12, { 0 }, 0 },
};

static enum aspa_hop
mem_hop(void *ctx, u32 customer, u32 provider)
{
  (void) ctx;
  for (uint i = 0; i < ARRAY_SIZE(recs); i++)
    if (recs[i].customer == customer) {
      for (uint k = 0; k < recs[i].count; k++)
        if (recs[i].providers[k] == provider)
          return ASPA_HOP_PROVIDER;
      return ASPA_HOP_NOT_PROVIDER;
    }
  return ASPA_HOP_NO_ATTESTATION;
}

/* Paths are written origin first, as the draft does; aspa_verify takes
 * them in AS_PATH order (neighbor first). */
static enum aspa_result
verify(int upstream, uint n, ...)
{
  u32 p[16];
  va_list ap;
  va_start(ap, n);
  for (uint i = 0; i < n; i++)
    p[n - 1 - i] = va_arg(ap, u32);
  va_end(ap);
  return aspa_verify(p, n, upstream, mem_hop, NULL);
}

static void
test_aspa_upstream(void **state)
{
  (void) state;
  assert_int_equal(verify(1, 0), ASPA_INVALID);                /* empty path */
  assert_int_equal(verify(1, 1, 6), ASPA_VALID);               /* the neighbor originated it */
  assert_int_equal(verify(1, 2, 1, 2), ASPA_VALID);            /* 1 -> its provider 2 -> us */
  assert_int_equal(verify(1, 3, 1, 2, 3), ASPA_VALID);
  assert_int_equal(verify(1, 2, 2, 1), ASPA_INVALID);          /* 1 is not 2's provider */
  assert_int_equal(verify(1, 2, 6, 2), ASPA_UNKNOWN);          /* 6 attests nothing */
  assert_int_equal(verify(1, 3, 1, 2, 6), ASPA_INVALID);       /* 2 -> 6: not its provider */
  assert_int_equal(verify(1, 3, 6, 2, 1), ASPA_INVALID);       /* invalid beats unknown */
  assert_int_equal(verify(1, 3, 1, 2, 13), ASPA_INVALID);
  assert_int_equal(verify(1, 3, 13, 14, 15), ASPA_UNKNOWN);
  /* a lateral hop is a leak when it comes from a customer or peer */
  assert_int_equal(verify(1, 4, 1, 2, 3, 10), ASPA_INVALID);
  /* transit (AS0): the tier-1 has no provider at all */
  assert_int_equal(verify(1, 2, 3, 10), ASPA_INVALID);
}

static void
test_aspa_downstream(void **state)
{
  (void) state;
  assert_int_equal(verify(0, 0), ASPA_INVALID);
  assert_int_equal(verify(0, 1, 6), ASPA_VALID);
  /* up to two ASes anything goes: one lateral hop at most */
  assert_int_equal(verify(0, 2, 2, 1), ASPA_VALID);
  assert_int_equal(verify(0, 2, 13, 14), ASPA_VALID);
  /* up 1 -> 2 -> 3, down 3 -> 4 -> 5 */
  assert_int_equal(verify(0, 5, 1, 2, 3, 4, 5), ASPA_VALID);
  /* up 1 -> 2 -> 3, one lateral hop 3 - 10 (both transit-free) */
  assert_int_equal(verify(0, 4, 1, 2, 3, 10), ASPA_VALID);
  /* pure down ramp: 3 -> 4 -> 5 */
  assert_int_equal(verify(0, 3, 3, 4, 5), ASPA_VALID);
  /* a valley: 11 got it from its provider 3 and leaked it to its provider 12 */
  assert_int_equal(verify(0, 3, 3, 11, 12), ASPA_INVALID);
  /* two lateral hops: 3 - 10 - 12 */
  assert_int_equal(verify(0, 3, 3, 10, 12), ASPA_INVALID);
  /* nobody attests anything: could be valley-free */
  assert_int_equal(verify(0, 3, 13, 14, 15), ASPA_UNKNOWN);
  /* the up ramp stops at 2 -> 6 (6 unknown, 2's providers known: leak) */
  assert_int_equal(verify(0, 4, 1, 2, 6, 5), ASPA_INVALID);
  /* 2's and 4's records rule 13 out as their provider: 2 -> 13 is not up,
   * 13 -> 4 is not down, so there are two lateral-or-worse hops */
  assert_int_equal(verify(0, 5, 1, 2, 13, 4, 5), ASPA_INVALID);
  /* 1 -> 2 -> 3 up, then 3 - 14 - 15 unattested: maybe 3 -> 14 -> 15 down */
  assert_int_equal(verify(0, 5, 1, 2, 3, 14, 15), ASPA_UNKNOWN);
  /* 14 -> 2 unattested, then 2 -> 3 up, 3 -> 4 -> 5 down */
  assert_int_equal(verify(0, 5, 14, 2, 3, 4, 5), ASPA_UNKNOWN);
}

/* --- Against a table --- */

static struct ea_list *
aspa_attrs(const u32 *prov, uint n)
{
  struct ea_builder b;
  ea_builder_init(&b);
  b.source = RTS_STATIC;
  b.preference = 200;
  static const u32 none;
  ea_set_data(&b, EA_GEN_ASPA_PROVIDERS, EAF_INT_SET, 0, n ? prov : &none, 4 * n);
  return ea_intern(&b);
}

static void
aspa_add(struct rtable *t, struct rte_src *src, u32 customer, const u32 *prov, uint n, u16 flags)
{
  net_addr k;
  net_fill_aspa(&k, customer);
  struct ea_list *a = aspa_attrs(prov, n);
  rt_update(t, &k, src, NULL, a, flags);
  ea_unref(a);
}

/* A path attribute from segments: type, count, ASNs..., 0 to end. */
static uint
mkpath(u8 *buf, ...)
{
  va_list ap;
  va_start(ap, buf);
  uint len = 0;
  for (int type; (type = va_arg(ap, int));) {
    uint cnt = va_arg(ap, uint);
    buf[len++] = type;
    buf[len++] = cnt;
    for (uint i = 0; i < cnt; i++) {
      u32 asn = va_arg(ap, u32);
      memcpy(buf + len, &asn, 4);
      len += 4;
    }
  }
  va_end(ap);
  return len;
}

static enum aspa_result
tcheck(struct rtable *t, const u8 *p, uint len, int up)
{
  rcu_read_lock();
  enum aspa_result r = rt_aspa_check(t, p, len, up);
  rcu_read_unlock();
  return r;
}

static void
test_aspa_table(void **state)
{
  (void) state;
  struct rtable *t = test_aux_table_new("aspa", NET_ASPA);
  struct rte_src *sa = rt_get_source(&test_proto, 1), *sb = rt_get_source(&test_proto, 2);
  for (uint i = 0; i < ARRAY_SIZE(recs); i++)
    aspa_add(t, sa, recs[i].customer, recs[i].providers, recs[i].count, 0);
  u32 p21 = 21, p22 = 22, p31 = 31;
  aspa_add(t, sa, 20, &p21, 1, 0);              /* two sources: providers united */
  aspa_add(t, sb, 20, &p22, 1, 0);
  aspa_add(t, sa, 30, &p31, 1, REF_FILTERED);   /* only a filtered record: none */

  u8 p[512];
  uint len;
  /* AS_PATH order: neighbor first. 3 2 1 = origin 1, up to 2, up to 3. */
  len = mkpath(p, EAB_AS_SEQUENCE, 3, 3, 2, 1, 0);
  assert_int_equal(tcheck(t, p, len, 1), ASPA_VALID);
  /* prepends collapse, also across segments */
  len = mkpath(p, EAB_AS_SEQUENCE, 4, 3, 3, 3, 2, EAB_AS_SEQUENCE, 3, 2, 1, 1, 0);
  assert_int_equal(tcheck(t, p, len, 1), ASPA_VALID);
  assert_int_equal(tcheck(t, p, len, 0), ASPA_VALID);
  /* an AS_SET anywhere: invalid */
  len = mkpath(p, EAB_AS_SEQUENCE, 2, 3, 2, EAB_AS_SET, 2, 1, 6, 0);
  assert_int_equal(tcheck(t, p, len, 1), ASPA_INVALID);
  assert_int_equal(tcheck(t, p, len, 0), ASPA_INVALID);
  /* the empty path */
  assert_int_equal(tcheck(t, p, 0, 1), ASPA_INVALID);
  assert_int_equal(tcheck(t, NULL, 0, 0), ASPA_INVALID);
  /* confederation segments are not verified */
  len = mkpath(p, EAB_AS_CONFED_SEQUENCE, 2, 65500, 65501, EAB_AS_SEQUENCE, 3, 3, 2, 1, 0);
  assert_int_equal(tcheck(t, p, len, 1), ASPA_VALID);
  /* a leak and an unattested hop */
  len = mkpath(p, EAB_AS_SEQUENCE, 2, 1, 2, 0);
  assert_int_equal(tcheck(t, p, len, 1), ASPA_INVALID);
  len = mkpath(p, EAB_AS_SEQUENCE, 2, 2, 6, 0);
  assert_int_equal(tcheck(t, p, len, 1), ASPA_UNKNOWN);
  len = mkpath(p, EAB_AS_SEQUENCE, 3, 12, 11, 3, 0);
  assert_int_equal(tcheck(t, p, len, 0), ASPA_INVALID);
  len = mkpath(p, EAB_AS_SEQUENCE, 5, 5, 4, 3, 2, 1, 0);
  assert_int_equal(tcheck(t, p, len, 0), ASPA_VALID);
  assert_int_equal(tcheck(t, p, len, 1), ASPA_INVALID);
  /* several sources */
  len = mkpath(p, EAB_AS_SEQUENCE, 2, 21, 20, 0);
  assert_int_equal(tcheck(t, p, len, 1), ASPA_VALID);
  len = mkpath(p, EAB_AS_SEQUENCE, 2, 22, 20, 0);
  assert_int_equal(tcheck(t, p, len, 1), ASPA_VALID);
  len = mkpath(p, EAB_AS_SEQUENCE, 2, 23, 20, 0);
  assert_int_equal(tcheck(t, p, len, 1), ASPA_INVALID);
  /* withdrawing one source's record leaves the other's */
  net_addr k;
  net_fill_aspa(&k, 20);
  rt_update(t, &k, sb, NULL, NULL, 0);
  len = mkpath(p, EAB_AS_SEQUENCE, 2, 22, 20, 0);
  assert_int_equal(tcheck(t, p, len, 1), ASPA_INVALID);
  /* a filtered record is no record */
  len = mkpath(p, EAB_AS_SEQUENCE, 2, 31, 30, 0);
  assert_int_equal(tcheck(t, p, len, 1), ASPA_UNKNOWN);
  /* a long path of prepends (more than the stack buffer) */
  p[0] = EAB_AS_SEQUENCE;
  p[1] = 120;
  for (uint i = 0; i < 120; i++) {
    u32 asn = i < 60 ? 2 : 1;
    memcpy(p + 2 + 4 * i, &asn, 4);
  }
  uint l2 = 2 + 4 * 120;
  u8 big[6 * 1024];
  uint bl = 0;
  for (uint k2 = 0; k2 < 10; k2++, bl += l2)
    memcpy(big + bl, p, l2);     /* 2...2 1...1 repeated: 2 1 2 1 ...: 1 -> 2 up, 2 -> 1 not */
  assert_int_equal(tcheck(t, big, bl, 1), ASPA_INVALID);
  assert_int_equal(tcheck(t, big, l2, 1), ASPA_VALID);
  /* not an aspa table */
  struct rtable *t4 = test_aux_table_new("ip4", NET_IP4);
  assert_int_equal(tcheck(t4, p, l2, 1), ASPA_UNKNOWN);

  rt_flush_channel(t, NULL);
  rt_unlock_source(sa);
  rt_unlock_source(sb);
}

/* --- roa_check: lookups against the brute-force walk --- */

struct roa_case { net_addr n; u32 asn; };

/* The walk roa_check did before: every ROA net of the table. */
static enum roa_result
roa_brute(struct rtable *t, const net_addr *n, u32 asn)
{
  int anything = 0, valid = 0;
  struct rcu_hash_iter it;
  for (struct net *x = rt_first_net(t, &it); x; x = rt_next_net(t, &it)) {
    if (!net_best(x))
      continue;
    const net_addr *r = &x->n;
    u32 maxlen = r->type == NET_ROA4 ? ((const net_addr_roa4 *) r)->max_pxlen : ((const net_addr_roa6 *) r)->max_pxlen;
    u32 rasn = r->type == NET_ROA4 ? ((const net_addr_roa4 *) r)->asn : ((const net_addr_roa6 *) r)->asn;
    if (r->pxlen > n->pxlen || !net_in_net(n, r))
      continue;
    anything = 1;
    if (asn && rasn == asn && n->pxlen <= maxlen)
      valid = 1;
  }
  return valid ? ROA_VALID : anything ? ROA_INVALID : ROA_UNKNOWN;
}

/* Random prefixes in a small space (overlaps are the point), over a few
 * of the table's regions (an IPv4 /16, an IPv6 /32: nest/rt_index.c). */
static void
rand_net(net_addr *n, int v6, uint minlen, uint maxlen)
{
  uint len = minlen + random() % (maxlen - minlen + 1);
  u32 hi = 0x0a000000 | (random() & 0x000fff00) | (random() % 4 ? 0 : random() & 0xff);
  if (v6)
    net_fill_ip6(n, ip6_build(0x20010db8 ^ (random() % 4 << 8), hi, random() % 8 ? 0 : random(), 0), len);
  else
    net_fill_ip4(n, ip4_from_u32(hi), len > 32 ? 32 : len);
  net_normalize(n);
}

static void
roa_random_round(int v6, uint seed)
{
  srandom(seed);
  struct rtable *t = test_aux_table_new(v6 ? "r6" : "r4", v6 ? NET_ROA6 : NET_ROA4);
  struct rte_src *src[2] = { rt_get_source(&test_proto, 10), rt_get_source(&test_proto, 11) };
  struct ea_builder b;
  ea_builder_init(&b);
  b.source = RTS_STATIC;
  b.preference = 200;
  struct ea_list *a = ea_intern(&b);

  uint nroa = 50 + random() % 400;
  net_addr *roas = calloc(nroa, sizeof(net_addr));
  for (uint i = 0; i < nroa; i++) {
    net_addr p;
    uint top = v6 ? 64 : 32;
    rand_net(&p, v6, v6 ? 16 : 8, v6 ? 48 : 24);
    uint maxlen = p.pxlen + random() % (top - p.pxlen + 1);
    u32 asn = 1 + random() % 5;
    if (v6)
      net_fill_roa6(&roas[i], ((net_addr_ip6 *) &p)->prefix, p.pxlen, maxlen, asn);
    else
      net_fill_roa4(&roas[i], ((net_addr_ip4 *) &p)->prefix, p.pxlen, maxlen, asn);
    rt_update(t, &roas[i], src[random() % 2], NULL, a, random() % 10 ? 0 : REF_FILTERED);
  }
  for (int round = 0; round < 2; round++) {
    uint counts[3] = { 0 };
    for (uint q = 0; q < 3000; q++) {
      net_addr n;
      rand_net(&n, v6, 0, v6 ? 64 : 32);
      u32 asn = random() % 6;
      rcu_read_lock();
      enum roa_result want = roa_brute(t, &n, asn), got = rt_roa_check(t, &n, asn);
      rcu_read_unlock();
      if (want != got) {
        char buf[NET_MAX_TEXT_LENGTH + 1];
        net_ntop(&n, buf);
        fail_msg("seed %u round %d: %s AS%u: lookup %d, walk %d", seed, round, buf, asn, got, want);
      }
      counts[got]++;
    }
    /* the sets are dense enough that every outcome happens */
    assert_true(counts[ROA_VALID] && counts[ROA_INVALID] && counts[ROA_UNKNOWN]);
    /* withdraw about half (per source), then compare again */
    for (uint i = 0; i < nroa; i++)
      if (random() % 2)
        for (uint s = 0; s < 2; s++)
          rt_update(t, &roas[i], src[s], NULL, NULL, 0);
  }
  /* other families and other table types say unknown */
  net_addr x;
  rand_net(&x, !v6, 8, 24);
  rcu_read_lock();
  assert_int_equal(rt_roa_check(t, &x, 1), ROA_UNKNOWN);
  rcu_read_unlock();

  for (uint s = 0; s < 2; s++) {
    rt_flush_channel(t, NULL);
    rt_unlock_source(src[s]);
  }
  ea_unref(a);
  free(roas);
}

static void
test_roa_lookup(void **state)
{
  (void) state;
  for (uint seed = 1; seed <= 6; seed++)
    roa_random_round(seed % 2, seed);
}

/* thread groups for table loops */
static void
valid_setup(void)
{
  config_commit(config_new_empty("test"));
}

static const struct CMUnitTest tests[] = {
  cmocka_unit_test(test_aspa_upstream),
  cmocka_unit_test(test_aspa_downstream),
  cmocka_unit_test(test_aspa_table),
  cmocka_unit_test(test_roa_lookup),
};

int
main(void)
{
  return test_run_with_loops("rt_valid_test", tests, valid_setup);
}
