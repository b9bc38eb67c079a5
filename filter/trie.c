/*
 * DOC: Prefix sets as path-compressed binary tries.
 *
 * A set entry P/l{a,b} matches a net N/n when a <= n <= b and the first l
 * bits of N equal P. Entries hang on the trie node of P/l as a bitmap of
 * accepted lengths; entries with a < l (`P/l-`, `{a,b}` below l) are
 * expanded into one node per shorter length, as BIRD does. A lookup walks
 * from the root along N's bits, at most one node per stored prefix length
 * on that path, checking each node's bitmap for n, and stops below depth n.
 *
 * Addresses are left-aligned in u32[4] (IPv4 in word 0), one trie per
 * family. Built at config time, read-only afterwards. IPv4 lookups run on a
 * flattened copy, which big sets start at an 8- or 16-bit stride table.
 */
#include <string.h>
#include <stdlib.h>
#include "filter/data.h"

static inline void
key_of(const net_addr *n, u32 k[4])
{
  if (n->type == NET_IP4 || n->type == NET_ROA4) {
    k[0] = ((const net_addr_ip4 *) n)->prefix.addr;
    k[1] = k[2] = k[3] = 0;
  } else {
    const ip6_addr *a = &((const net_addr_ip6 *) n)->prefix;
    memcpy(k, a->addr, 16);
  }
}

static inline uint
key_bit(const u32 k[4], uint pos)
{
  return (k[pos / 32] >> (31 - pos % 32)) & 1;
}

/* Length of the common prefix of a and b, at most max. */
static uint
key_cpl(const u32 a[4], const u32 b[4], uint max)
{
  uint l = 0;
  for (uint w = 0; w < 4 && l < max; w++) {
    u32 x = a[w] ^ b[w];
    if (x) {
      l += __builtin_clz(x);
      break;
    }
    l += 32;
  }
  return MIN(l, max);
}

static void
key_mask(u32 k[4], uint len)
{
  for (uint w = 0; w < 4; w++) {
    uint bits = len > w * 32 ? MIN(len - w * 32, 32) : 0;
    k[w] &= u32_mkmask(bits);
  }
}

static struct f_trie_node *
node_new(linpool *lp, const u32 k[4], uint plen)
{
  struct f_trie_node *n = lp_allocz(lp, sizeof(*n));
  memcpy(n->addr, k, 16);
  key_mask(n->addr, plen);
  n->plen = plen;
  return n;
}

static void
accept_set(struct f_trie_node *n, uint lo, uint hi)
{
  for (uint l = lo; l <= hi; l++)
    n->accept[l / 32] |= 1U << (l % 32);
}

struct f_trie *
f_trie_new(linpool *lp)
{
  return lp_allocz(lp, sizeof(struct f_trie));
}

/* Add P/plen with accepted lengths lo..hi, lo >= plen. */
static void
trie_insert(linpool *lp, struct f_trie_node **root, const u32 k[4], uint plen, uint lo, uint hi)
{
  struct f_trie_node **pp = root;
  for (;;) {
    struct f_trie_node *n = *pp;
    if (!n) {
      n = node_new(lp, k, plen);
      accept_set(n, lo, hi);
      *pp = n;
      return;
    }
    uint cpl = key_cpl(n->addr, k, MIN(n->plen, plen));
    if (cpl < n->plen) {
      if (cpl == plen) {
        /* The new prefix is above n: it becomes n's parent. */
        struct f_trie_node *x = node_new(lp, k, plen);
        accept_set(x, lo, hi);
        x->c[key_bit(n->addr, plen)] = n;
        *pp = x;
        return;
      }
      /* Diverge at cpl: a branch node with both below it. */
      struct f_trie_node *br = node_new(lp, k, cpl);
      struct f_trie_node *x = node_new(lp, k, plen);
      accept_set(x, lo, hi);
      br->c[key_bit(n->addr, cpl)] = n;
      br->c[key_bit(k, cpl)] = x;
      *pp = br;
      return;
    }
    if (n->plen == plen) {
      accept_set(n, lo, hi);
      return;
    }
    pp = &n->c[key_bit(k, n->plen)];
  }
}

void
f_trie_add(linpool *lp, struct f_trie *t, const net_addr *net, uint lo, uint hi)
{
  u32 k[4];
  key_of(net, k);
  int fam = !(net->type == NET_IP4 || net->type == NET_ROA4);
  uint plen = net->pxlen;
  /* Lengths below the prefix: the prefix's supernets of that length. */
  for (uint l = lo; l < plen && l <= hi; l++)
    trie_insert(lp, &t->root[fam], k, l, l, l);
  if (hi >= plen)
    trie_insert(lp, &t->root[fam], k, plen, MAX(lo, plen), hi);
  t->count++;
}

static int
entry_cmp(const void *x, const void *y)
{
  const struct f_trie_entry *a = x, *b = y;
  int c = net_compare(&a->net, &b->net);
  if (c)
    return c;
  if (a->lo != b->lo)
    return a->lo < b->lo ? -1 : 1;
  return a->hi < b->hi ? -1 : a->hi > b->hi;
}

static uint
trie_count(const struct f_trie_node *n)
{
  return n ? 1 + trie_count(n->c[0]) + trie_count(n->c[1]) : 0;
}

static u32
trie_flatten4(struct f_trie_node4 *out, u32 *next, const struct f_trie_node *n)
{
  u32 i = (*next)++;
  out[i].addr = n->addr[0];
  out[i].plen = n->plen;
  out[i].accept = n->accept[0] | ((u64) n->accept[1] << 32);
  out[i].c[0] = n->c[0] ? trie_flatten4(out, next, n->c[0]) : 0;
  out[i].c[1] = n->c[1] ? trie_flatten4(out, next, n->c[1]) : 0;
  return i;
}

/*
 * Big IPv4 tries also get stride tables: a lookup starts from the entry of
 * its first 8 bits, or of its first 16 where that /8 has enough nodes below
 * it, instead of walking a dozen nodes from the root. An entry holds the
 * union of the accept bitmaps of every node the walk would pass within
 * those bits (a node of length p only accepts lengths >= p, so for a net
 * no longer than the stride that union is the whole answer) and the node
 * where the walk goes on for longer nets.
 */
#define TRIE_STRIDE_MIN_NODES 8    /* smaller tries: the walk is as short */
#define TRIE_STRIDE_SUB_NODES 16   /* a /8 with this many nodes below gets a /16 table */

/* The walk over the first depth bits of a, accept bits ignored. */
static struct f_trie_stride
trie_stride_entry(const struct f_trie *t, u32 a, uint depth)
{
  struct f_trie_stride e = { 0 };
  u32 i = 0;
  for (;;) {
    const struct f_trie_node4 *x = &t->v4[i];
    if ((x->addr ^ a) & u32_mkmask(MIN(x->plen, depth)))
      return e;                 /* leaves the path within the known bits */
    if (x->plen > depth) {
      e.resume = i + 1;         /* whether it matches depends on later bits */
      return e;
    }
    e.accept |= x->accept;
    if (x->plen == depth) {
      e.resume = i + 1;         /* its child depends on bit `depth` */
      return e;
    }
    u32 c = x->c[(a >> (31 - x->plen)) & 1];
    if (!c)
      return e;
    i = c;
  }
}

/* Nodes in the subtree of node i (preorder: they follow it). */
static uint
trie_subtree4(const struct f_trie *t, u32 i)
{
  const struct f_trie_node4 *x = &t->v4[i];
  return 1 + (x->c[0] ? trie_subtree4(t, x->c[0]) : 0) + (x->c[1] ? trie_subtree4(t, x->c[1]) : 0);
}

static void
trie_stride_build(linpool *lp, struct f_trie *t)
{
  t->v4_top = lp_alloc(lp, 256 * sizeof(struct f_trie_stride));
  uint nsub = 0;
  for (uint i = 0; i < 256; i++) {
    t->v4_top[i] = trie_stride_entry(t, i << 24, 8);
    if (t->v4_top[i].resume && trie_subtree4(t, t->v4_top[i].resume - 1) >= TRIE_STRIDE_SUB_NODES)
      t->v4_top[i].sub = ++nsub;
  }
  if (!nsub)
    return;
  t->v4_sub = lp_alloc(lp, nsub * 256 * sizeof(struct f_trie_stride));
  for (uint i = 0; i < 256; i++)
    if (t->v4_top[i].sub)
      for (uint j = 0; j < 256; j++)
        t->v4_sub[(t->v4_top[i].sub - 1) * 256 + j] = trie_stride_entry(t, (i << 24) | (j << 16), 16);
}

/* Keep the entries (sorted) for printing and for comparing sets; flatten
 * the IPv4 trie for lookups. */
void
f_trie_finish(linpool *lp, struct f_trie *t, struct f_trie_entry *list, uint count)
{
  if (t->root[0]) {
    uint n = trie_count(t->root[0]);
    t->v4 = lp_alloc(lp, n * sizeof(struct f_trie_node4) + 64);
    t->v4 = (struct f_trie_node4 *) ALIGN_UP((uintptr_t) t->v4, 64);
    u32 next = 0;
    trie_flatten4(t->v4, &next, t->root[0]);
    t->v4_count = n;
    if (n >= TRIE_STRIDE_MIN_NODES)
      trie_stride_build(lp, t);
  }
  t->entries = lp_alloc(lp, (count + 1) * sizeof(struct f_trie_entry));
  memcpy(t->entries, list, count * sizeof(struct f_trie_entry));
  qsort(t->entries, count, sizeof(struct f_trie_entry), entry_cmp);
  t->count = count;
}

int
f_trie_match(const struct f_trie *t, const net_addr *net)
{
  uint n = net->pxlen;
  if (net->type == NET_IP4 || net->type == NET_ROA4) {
    u32 a = ((const net_addr_ip4 *) net)->prefix.addr;
    if (!t->v4)
      return 0;
    u64 bit = 1ULL << n;
    const struct f_trie_node4 *x = t->v4;
    if (t->v4_top) {
      const struct f_trie_stride *e = &t->v4_top[a >> 24];
      uint depth = 8;
      if (e->sub) {
        e = &t->v4_sub[(e->sub - 1) * 256 + ((a >> 16) & 0xff)];
        depth = 16;
      }
      if (e->accept & bit)
        return 1;
      if (n <= depth || !e->resume)
        return 0;
      x = &t->v4[e->resume - 1];
    }
    for (;;) {
      if (x->plen > n || ((x->addr ^ a) & u32_mkmask(x->plen)))
        return 0;
      if (x->accept & bit)
        return 1;
      if (x->plen == n)
        return 0;
      u32 c = x->c[(a >> (31 - x->plen)) & 1];
      if (!c)
        return 0;
      x = &t->v4[c];
    }
  }
  u32 k[4];
  key_of(net, k);
  const struct f_trie_node *x = t->root[1];
  while (x && x->plen <= n) {
    if (key_cpl(x->addr, k, x->plen) < x->plen)
      return 0;
    if (x->accept[n / 32] & (1U << (n % 32)))
      return 1;
    if (x->plen == n)
      return 0;
    x = x->c[key_bit(k, x->plen)];
  }
  return 0;
}

int
f_trie_same(const struct f_trie *a, const struct f_trie *b)
{
  if (a->count != b->count)
    return 0;
  for (uint i = 0; i < a->count; i++)
    if (entry_cmp(&a->entries[i], &b->entries[i]))
      return 0;
  return 1;
}
