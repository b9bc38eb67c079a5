/*
 * DOC: A table's net index: how nets hash, the lookups (exact, longest
 * prefix, the ROAs of a prefix), walks, and the index's upkeep.
 *
 * The index is an rcu_hash (lib/rcu_hash.h) of the table's nets: readers
 * look up without a lock, the writer inserts and removes under the table's
 * writer lock (nest/rt_table.c).
 *
 * A longest-prefix match and a ROA check probe one prefix at every length
 * from its own down to 0 that the table has nets of (the table counts nets
 * per length). A probe is two cache misses in a big table: the bucket, then
 * its net. Probed one after another, an address outside every net of a 1M
 * net table took 3.1 us (17 lengths, two misses each). So probes go in
 * waves (struct rt_probe): a wave's buckets are all asked for, then their
 * first nets, and only then are the keys compared, longest first; the
 * misses of a wave overlap.
 *
 * A ROA table keeps the lengths per region too: an IPv4 region is a /16,
 * an IPv6 one the hash of a /32. A ROA covering a route covers part of
 * the route's own region, so the ROA is in that region's mask (one
 * shorter than a region is in the mask of each region within it), and
 * only the lengths the mask has are probed: a handful of the 25 that an
 * RPKI's IPv4 ROAs have. Bits are only ever set: a table whose ROAs move
 * probes a few lengths more, never more than it would without them.
 */
#include <stdlib.h>
#include <string.h>
#include "nest/rt.h"
#include "lib/hash.h"

/* The part of a ROA net that roa_check looks up by: header and prefix,
 * without max length and ASN (the layouts of net_addr_roa4/6 start with
 * them, as net_addr_ip4/6 do). */
static size_t
rt_roa_key_len(const net_addr *n)
{
  return n->type == NET_ROA4 ? offsetof(net_addr_roa4, max_pxlen) : offsetof(net_addr_roa6, max_pxlen);
}

/* ROA nets hash by prefix only, as in BIRD: every ROA of one prefix sits
 * in one bucket, which rt_roa_first/next walk without
 * knowing the max lengths and ASNs. */
u32
rt_net_hash(const net_addr *n)
{
  if (n->type == NET_ROA4 || n->type == NET_ROA6)
    return hash_bytes(n, rt_roa_key_len(n));
  return hash_bytes(n, n->length);
}

static u32
rt_node_hash(const struct rcu_hash_node *node)
{
  return rt_net_hash(&caa_container_of(node, struct net, node)->n);
}

static struct net *
rt_node_net(struct rcu_hash_node *node)
{
  if (!node)
    return NULL;
  struct net *n = caa_container_of(node, struct net, node);
  rcu_tsan_found(n);
  return n;
}

struct net *
rt_index_find(struct rtable *t, u32 hash, const net_addr *n, struct rcu_hash_iter *it)
{
  for (struct net *x = rt_node_net(rcu_hash_bucket(&t->nets, hash, it)); x;
       x = rt_node_net(rcu_hash_bucket_next(it)))
    if (net_equal(&x->n, n))
      return x;
  return NULL;
}

struct net *
rt_find_net(struct rtable *t, const net_addr *n)
{
  struct rcu_hash_iter it;
  return rt_index_find(t, rt_net_hash(n), n, &it);
}

/* Keys a wave of rt_find_nets() asks for at once: enough for each miss
 * to have the others' work to arrive in. */
#define RT_FIND_WAVE 32

void
rt_find_nets(struct rtable *t, const net_addr *const *n, uint count, struct net **out)
{
  u32 hash[RT_FIND_WAVE];
  for (uint at = 0; at < count; at += RT_FIND_WAVE) {
    uint k = MIN(count - at, RT_FIND_WAVE);
    for (uint i = 0; i < k; i++) {
      hash[i] = rt_net_hash(n[at + i]);
      rcu_hash_prefetch(&t->nets, hash[i]);
    }
    for (uint i = 0; i < k; i++)
      rcu_hash_prefetch_node(&t->nets, hash[i], 0);
    for (uint i = 0; i < k; i++) {
      struct rcu_hash_iter it;
      out[at + i] = rt_index_find(t, hash[i], n[at + i], &it);
    }
  }
}

/* --- Regions: the lengths of a ROA table's nets per part of the space --- */

#define RT_REGIONS (1 << 16)
/* An IPv6 net shorter than this is in no region's mask (it would be in
 * up to 2^16 of them): its length is probed wherever the table has one. */
#define RT_REGION6_LOW 16

static int
rt_is_v4(const net_addr *n)
{
  return n->type == NET_IP4 || n->type == NET_ROA4;
}

/* The region of an IPv4 /16 (top: its first 32 bits), or an IPv6 /32. */
static u32
rt_region(int v4, u32 top)
{
  return v4 ? top >> 16 : (top * 2654435761U) >> 16;
}

/* n: an IP or ROA net (their prefixes lie at the same place). */
static u32
rt_prefix_top(const net_addr *n)
{
  return rt_is_v4(n) ? ip4_to_u32(((const net_addr_ip4 *) n)->prefix) : ((const net_addr_ip6 *) n)->prefix.addr[0];
}

static void
rt_regions_init(struct rtable *t)
{
  if (t->net_type != NET_ROA4 && t->net_type != NET_ROA6)
    return;
  t->region_low = t->net_type == NET_ROA4 ? 0 : RT_REGION6_LOW;
  t->regions = calloc(RT_REGIONS, sizeof(u64));
  if (!t->regions)
    die("Out of memory");
  mem_account(MEM_TABLES, RT_REGIONS * sizeof(u64), 0);
}

/* A net is in the mask of each region it covers part of: its own, or
 * every one within it when it is shorter than a region. */
void
rt_index_mark(struct rtable *t, const net_addr *n)
{
  uint d = n->pxlen - t->region_low;
  if (!t->regions || n->pxlen < t->region_low || d >= 64)
    return;
  int v4 = rt_is_v4(n);
  uint region_len = v4 ? 16 : 32;
  u32 top = rt_prefix_top(n), span = n->pxlen < region_len ? 1U << (region_len - n->pxlen) : 1;
  u64 bit = 1ULL << d;
  for (u32 k = 0; k < span; k++) {
    u64 *w = &t->regions[rt_region(v4, top + (k << (32 - region_len)))];
    u64 v = __atomic_load_n(w, __ATOMIC_RELAXED);
    if (!(v & bit))
      __atomic_store_n(w, v | bit, __ATOMIC_RELEASE);
  }
}

void
rt_index_regions_free(u64 *regions)
{
  if (!regions)
    return;
  free(regions);
  mem_account(MEM_TABLES, -(s64) (RT_REGIONS * sizeof(u64)), 0);
}

/* --- Probes of a prefix at each length --- */

void
rt_probe_start(struct rt_probe *p, struct rtable *t, const net_addr *of)
{
  p->t = t;
  p->of = of;
  p->len = of->pxlen;
  p->count = p->next = 0;
  p->region_low = IP6_MAX_PREFIX_LENGTH + 1;
  u64 *regions = t->regions;
  if (regions && rt_is_v4(of) == (t->net_type == NET_ROA4)) {
    p->region_low = t->region_low;
    p->region_lens = __atomic_load_n(&regions[rt_region(rt_is_v4(of), rt_prefix_top(of))], __ATOMIC_ACQUIRE);
  }
}

/* The next wave: its keys made, their buckets and then their first nets
 * asked for. */
static void
rt_probe_wave(struct rt_probe *p)
{
  struct rtable *t = p->t;
  uint k = 0;
  for (; p->len >= 0 && k < RT_PROBE_WAVE; p->len--) {
    if (!uatomic_read(&t->pxlen_count[p->len]))
      continue;         /* no net of this length: no probe */
    uint d = p->len - p->region_low;
    if (d < 64 && !(p->region_lens >> d & 1))
      continue;         /* none in the region */
    net_addr *x = &p->key[k];
    net_copy(x, p->of);
    x->pxlen = p->len;
    net_normalize(x);
    p->hash[k] = rt_net_hash(x);
    rcu_hash_prefetch(&t->nets, p->hash[k]);
    k++;
  }
  /* each waits for its own bucket, the others' already on their way */
  for (uint i = 0; i < k; i++)
    rcu_hash_prefetch_node(&t->nets, p->hash[i], 0);
  p->count = k;
  p->next = 0;
}

const net_addr *
rt_probe_next(struct rt_probe *p, u32 *hash)
{
  if (p->next == p->count) {
    rt_probe_wave(p);
    if (!p->count)
      return NULL;
  }
  *hash = p->hash[p->next];
  return &p->key[p->next++];
}

struct net *
rt_lookup_lpm(struct rtable *t, const net_addr *n)
{
  struct rt_probe p;
  rt_probe_start(&p, t, n);
  u32 hash;
  for (const net_addr *key; (key = rt_probe_next(&p, &hash));) {
    struct rcu_hash_iter it;
    struct net *found = rt_index_find(t, hash, key, &it);
    if (found && net_best(found))
      return found;
  }
  return NULL;
}

/* --- ROAs of a prefix --- */

static int
rt_roa_prefix_match(const struct net *n, const net_addr *k)
{
  return n->n.type == k->type && !memcmp(&n->n, k, rt_roa_key_len(k));
}

/* The bucket holds other nets too: skip to the next ROA of the prefix. */
static struct net *
rt_roa_scan(struct net *x, const net_addr *key, struct rcu_hash_iter *it)
{
  while (x && !rt_roa_prefix_match(x, key))
    x = rt_node_net(rcu_hash_bucket_next(it));
  return x;
}

struct net *
rt_roa_first(struct rtable *t, const net_addr *key, u32 hash, struct rcu_hash_iter *it)
{
  return rt_roa_scan(rt_node_net(rcu_hash_bucket(&t->nets, hash, it)), key, it);
}

struct net *
rt_roa_next(const net_addr *key, struct rcu_hash_iter *it)
{
  return rt_roa_scan(rt_node_net(rcu_hash_bucket_next(it)), key, it);
}

/* --- Walks --- */

struct net *
rt_net_at(struct rtable *t, u64 pos, struct rcu_hash_iter *it)
{
  return rt_node_net(rcu_hash_walk(&t->nets, pos, it));
}

struct net *
rt_first_net(struct rtable *t, struct rcu_hash_iter *it)
{
  return rt_net_at(t, 0, it);
}

struct net *
rt_next_net(struct rtable *t UNUSED, struct rcu_hash_iter *it)
{
  return rt_node_net(rcu_hash_next(it));
}

/* --- Upkeep (under the writer lock) --- */

void
rt_index_account(struct rtable *t)
{
  size_t b = rcu_hash_bytes(&t->nets);
  if (b != t->index_bytes) {
    mem_account(MEM_TABLES, 0, (s64) b - (s64) t->index_bytes);
    t->index_bytes = b;
  }
}

/* A table filled with copies of another's routes (a pipe's peer table
 * in a route server's `multi` layout) tends to that table's size: its
 * index grows there at once instead of in steps of four, each rewriting
 * every net's link, and the last of which (to 2^20 buckets at 262,144
 * nets) doubled the buckets of a table of 400,000 nets. Only once it
 * holds an eighth of the other's nets: a pipe whose filter passes fewer
 * grows as any table, and one that passes more gets at most twice the
 * buckets a grow would have made. */
void
rt_index_expect_copies(struct rtable *t, u16 copy)
{
  const struct rtable *from = rt_sender_origin(t, copy);
  u32 there = from ? uatomic_read(&from->net_count) : 0;
  rcu_hash_expect(&t->nets, (u64) t->nets.count * 8 >= there ? there : 0);
}

/* A grow leaves the index four times as big as its nets; kept so, a
 * loaded table would hold up to 16 bytes a net more. */
void
rt_index_settle(struct rtable *t)
{
  btime now = loop_now();
  if (rcu_hash_sparse(&t->nets)) {
    if (t->nets.inserts != t->index_mark || !t->index_mark_at) {
      t->index_mark = t->nets.inserts;
      t->index_mark_at = now;
    } else if (now - t->index_mark_at >= RT_INDEX_QUIET)
      rcu_hash_compact(&t->nets);
  }
  /* Look again: when the quiet time is over, and until the array a
   * resize retired is freed after its grace period (once the table is
   * quiet, nothing else comes to free it). */
  btime after = 0;
  if (rcu_hash_sparse(&t->nets))
    after = MAX(t->index_mark_at + RT_INDEX_QUIET - now, MS_ 20);
  else if (rcu_hash_retiring(&t->nets))
    after = MS_ 20;
  if (after && !tm_active(&t->index_tm))
    tm_start(&t->index_tm, after);
}

static void
rt_index_look(struct timer *tm)
{
  struct rtable *t = tm->data;
  ev_send(t->loop, &t->cleanup_ev);
}

void
rt_index_init(struct rtable *t)
{
  tm_init(&t->index_tm, t->loop, rt_index_look, t);
  rcu_hash_init(&t->nets, RT_INDEX_MIN_ORDER, rt_node_hash,
                (int) (offsetof(struct net, n) - offsetof(struct net, node)));
  rt_index_account(t);
  rt_regions_init(t);
}
