/*
 * DOC: The route table benchmarks' inputs (bench/rt_bench.h), all from
 * fixed seeds: 1M unique IPv4 prefixes with a DFZ-like length mix (61%
 * /24, 20% /22-/23, the rest /8-/21) at random addresses, and BGP-like
 * attribute sets (origin, AS path of 2-6 hops, next hop, MED on some,
 * local pref, 0-6 communities, large communities on a quarter). Routes of
 * the bench "protocol" are ordered like BGP: local pref, AS path length,
 * origin, MED, then the source id.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/harness.h"
#include "bench/rt_bench.h"
#include "conf/conf.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "nest/proto.h"
#include "nest/reconf.h"
#include "proto/bgp/bgp_memo.h"

/* --- Deterministic inputs --- */

/* DFZ-like prefix length mix, in 0.1 % units (sums to 1000). */
static const struct { u8 len; u16 permille; } pxlen_mix[] = {
  { 8, 1 }, { 9, 1 }, { 10, 1 }, { 11, 2 }, { 12, 3 }, { 13, 4 }, { 14, 6 }, { 15, 8 },
  { 16, 13 }, { 17, 10 }, { 18, 15 }, { 19, 28 }, { 20, 45 }, { 21, 50 }, { 22, 110 },
  { 23, 90 }, { 24, 613 },
};

static uint
draw_pxlen(u64 *seed)
{
  uint r = bench_rand(seed) % 1000;
  for (uint i = 0; i < ARRAY_SIZE(pxlen_mix); i++) {
    if (r < pxlen_mix[i].permille)
      return pxlen_mix[i].len;
    r -= pxlen_mix[i].permille;
  }
  return 24;
}

net_addr_ip4 *
gen_prefixes(u32 n, u64 seed)
{
  net_addr_ip4 *v = malloc(n * sizeof(*v));
  u32 cap = 1;
  while (cap < n * 2)
    cap <<= 1;
  u64 *set = calloc(cap, sizeof(u64));   /* open addressing; 0 = empty */
  if (!v || !set)
    die("Out of memory");
  for (u32 i = 0; i < n;) {
    uint len = draw_pxlen(&seed);
    u32 a = (u32) bench_rand(&seed);
    uint o1 = 1 + (a >> 24) % 223;
    if (o1 == 10 || o1 == 127)
      continue;
    a = ((u32) o1 << 24 | (a & 0xffffff)) & u32_mkmask(len);
    u64 key = (u64) a << 8 | len;
    u32 h = hash_u32(a ^ len * 0x9e3779b9U) & (cap - 1);
    while (set[h] && set[h] != key)
      h = (h + 1) & (cap - 1);
    if (set[h])
      continue;
    set[h] = key;
    net_fill_ip4((net_addr *) &v[i], ip4_from_u32(a), len);
    i++;
  }
  free(set);
  return v;
}


/* --- BGP-like attributes --- */

#define BENCH_CLASS_ID 90


void
bgp_attrs(struct ea_builder *b, struct bgp_buf *buf, u32 peer, u32 k, u32 variant)
{
  u64 seed = (u64) peer << 40 ^ (u64) k << 8 ^ variant ^ 0x5eedULL;
  u64 r = bench_rand(&seed);
  ea_builder_init(b);
  b->source = RTS_BGP;
  b->dest = RTD_UNICAST;
  b->preference = 100;
  b->gw = buf->nh = ipa_from_ip4(ip4_from_u32(0x0aff0001 | peer << 8));

  ea_set_int(b, BA(BA_ORIGIN), EAF_INT, 0x40, r % 10 < 8 ? 0 : 2);
  uint hops = 2 + (r >> 8) % 5;
  buf->path[0] = 2;
  buf->path[1] = hops;
  for (uint i = 0; i < hops; i++) {
    u32 asn = i ? 1 + bench_rand(&seed) % 400000 : 64500 + peer;
    memcpy(&buf->path[2 + 4 * i], &asn, 4);
  }
  ea_set_data(b, BA(BA_AS_PATH), EAF_AS_PATH, 0x40, buf->path, 2 + 4 * hops);
  ea_set_data(b, BA(BA_NEXT_HOP), EAF_IP, 0x40, &buf->nh, sizeof(buf->nh));
  if (variant || (r >> 16) % 10 < 4)
    ea_set_int(b, BA(BA_MULTI_EXIT_DISC), EAF_INT, 0x80, variant ? 1000 + variant : (r >> 24) % 500);
  ea_set_int(b, BA(BA_LOCAL_PREF), EAF_INT, 0x40, 100 + ((r >> 32) + variant) % 3 * 10);
  uint nc = (r >> 40) % 7;
  for (uint i = 0; i < nc; i++)
    buf->comm[i] = (u32) (64500 + bench_rand(&seed) % 100) << 16 | (u32) (bench_rand(&seed) % 1000);
  if (nc)
    ea_set_data(b, BA(BA_COMMUNITY), EAF_INT_SET, 0xc0, buf->comm, 4 * nc);
  if ((r >> 48) % 4 == 0) {
    uint nl = 1 + (r >> 52) % 2;
    for (uint i = 0; i < 3 * nl; i++)
      buf->lc[i] = (u32) bench_rand(&seed);
    ea_set_data(b, BA(BA_LARGE_COMMUNITY), EAF_LC_SET, 0xc0, buf->lc, 12 * nl);
  }
}

struct ea_list *
bgp_attrs_intern(u32 peer, u32 k, u32 variant)
{
  struct ea_builder b;
  struct bgp_buf buf;
  bgp_attrs(&b, &buf, peer, k, variant);
  return ea_intern(&b);
}

u64 better_calls;   /* sanity: the table does call our hook */

/* BGP's decision after preference (proto/bgp/bgp_show.c, bgp_rte_better)
 * up to the MEDs, on what it reads: the lists' memos (bgp_memo.h), with
 * the defaults of a session without options. */
static int
bench_rte_better(const struct rte *a, const struct rte *b)
{
  better_calls++;   /* bench thread only in the benchmarks that check it */
  struct bgp_memo tx, ty;
  const struct bgp_memo *x = bgp_memo(rte_attrs(a), &tx), *y = bgp_memo(rte_attrs(b), &ty);
  u32 lx = (x->bits & BGP_MEMO_LOCAL_PREF) ? x->local_pref : 100;
  u32 ly = (y->bits & BGP_MEMO_LOCAL_PREF) ? y->local_pref : 100;
  if (lx != ly)
    return lx > ly;
  if (x->path_len != y->path_len)
    return x->path_len < y->path_len;
  if (bgp_memo_origin(x) != bgp_memo_origin(y))
    return bgp_memo_origin(x) < bgp_memo_origin(y);
  if (x->first_as == y->first_as && x->med != y->med)
    return x->med < y->med;
  return rte_src(a)->global_id < rte_src(b)->global_id;
}

static const struct proto_class bench_class = {
  .name = "Bench", .keyword = "bench", .class_id = BENCH_CLASS_ID, .source = RTS_BGP,
  .rte_better = bench_rte_better,
};

/* --- Sources, attribute pools, the table --- */

struct rtable *tab;


struct peer peers[16];

/* Replacements only need a set that differs from the route's current one
 * (variant 1 always does): a small pool keeps setup short. */
#define VARIANT_POOL 4096

struct rte_src *
peer_source(u32 i)
{
  if (!peers[i].src) {
    struct proto *p = calloc(1, sizeof(*p));
    char *name = malloc(16);
    snprintf(name, 16, "peer%u", i);
    p->class = &bench_class;
    p->name = name;
    peers[i].src = rt_get_source(p, 0);
  }
  return peers[i].src;
}

static void
peer_pool_set(u32 i, int v, u32 n)
{
  struct peer *p = &peers[i];
  if (p->nattrs[v] == n)
    return;
  for (u32 k = 0; k < p->nattrs[v]; k++)
    ea_unref(p->attrs[v][k]);
  free(p->attrs[v]);
  p->attrs[v] = n ? malloc(n * sizeof(struct ea_list *)) : NULL;
  for (u32 k = 0; k < n; k++)
    p->attrs[v][k] = bgp_attrs_intern(i, k, v);
  p->nattrs[v] = n;
}

void
peer_pool(u32 i, u32 n, int updates)
{
  peer_source(i);
  peer_pool_set(i, 0, MAX(n, 1));
  if (updates)
    peer_pool_set(i, 1, MIN(MAX(n, 1), VARIANT_POOL));
}


void
commit_empty_config(void *arg)
{
  (void) arg;
  config_commit(config_new_empty("bench"));
  tab = rt_find_table("master4");
}

void
table_quiesce(void)
{
  loop_call_sync(tab->loop, rt_cleanup, tab);
  rcu_barrier();
}

u64 unexpected;
