/*
 * DOC: A table's prefix trie (nest/rt_trie.h).
 *
 * A node holds a prefix (its bits, zero past its length) and the two
 * subtrees of the prefixes extending it, by their next bit. A node whose prefix no net has is a branch point and always has both
 * subtrees: removing a net's prefix takes out its node when that leaves
 * it with one subtree or none, and a branch point left with one goes too.
 *
 * A writer builds each new node whole before one pointer store publishes
 * it, and never changes an unlinked node again, so a reader standing on
 * one goes on through a consistent (if old) subtree. Unlinked nodes wait
 * in a list and go to rcu_call() 64 at a time, carried by a node-sized
 * slot of the same slab: a table losing a million nets makes 16k
 * callbacks, not a million.
 */
#include <pthread.h>
#include "nest/rt_trie.h"
#include "lib/rcu.h"
#include "lib/slab_shared.h"

struct rt_trie_node {
  struct rt_trie_node *child[2];      /* RCU; written under the lock */
  struct rt_trie_node *retired;       /* writer's: the list of unlinked nodes */
  u8 len;                             /* fixed once published */
  u8 has;                             /* atomic: a net has this prefix */
  /* Fixed once published: the prefix, most significant word first; one
   * word in an IPv4 trie, whose nodes take 32 bytes, four in an IPv6
   * one (48). */
  u32 key[];
};
#define RT_TRIE_NODE_BYTES(v6) (sizeof(struct rt_trie_node) + ((v6) ? 16 : 4))

/* A batch of unlinked nodes on its way through rcu_call(). */
struct rt_trie_batch {
  struct rcu_head head;
  struct rt_trie_node *list;
};
_Static_assert(sizeof(struct rt_trie_batch) <= RT_TRIE_NODE_BYTES(0), "a batch rides in a node's slot");

#define RT_TRIE_BATCH 64

struct rt_trie {
  struct shslab *slab;                /* of its nodes' size */
  uint net_type;
  struct rt_trie_node *root;          /* RCU; written under the lock */
  struct rt_trie_node *retired;       /* under the lock: unlinked, not yet batched */
  u32 retired_count;
  u32 prefixes, nodes;                /* atomic; written under the lock */
};

struct rt_trie_key { u64 hi, lo; uint len; };

/* By family: IPv4, IPv6 (whose slots carry the tries' heads too). */
static struct shslab *node_slab[2];
static pthread_once_t node_slab_once = PTHREAD_ONCE_INIT;

static void
node_slab_init(void)
{
  node_slab[0] = shslab_new(MEM_TABLES, RT_TRIE_NODE_BYTES(0));
  node_slab[1] = shslab_new(MEM_TABLES, RT_TRIE_NODE_BYTES(1));
}

static struct rt_trie_key
key_of(const net_addr *n)
{
  if (n->type == NET_IP4)
    return (struct rt_trie_key){ (u64) ((const net_addr_ip4 *) n)->prefix.addr << 32, 0, n->pxlen };
  const u32 *a = ((const net_addr_ip6 *) n)->prefix.addr;
  return (struct rt_trie_key){ (u64) a[0] << 32 | a[1], (u64) a[2] << 32 | a[3], n->pxlen };
}

static void
key_to_net(const struct rt_trie *t, struct rt_trie_key k, net_addr *out)
{
  if (t->net_type == NET_IP4)
    net_fill_ip4(out, ip4_from_u32(k.hi >> 32), k.len);
  else
    net_fill_ip6(out, ip6_build(k.hi >> 32, (u32) k.hi, k.lo >> 32, (u32) k.lo), k.len);
}

static inline struct rt_trie_key
node_key(const struct rt_trie *t, const struct rt_trie_node *x)
{
  if (t->net_type == NET_IP4)
    return (struct rt_trie_key){ (u64) x->key[0] << 32, 0, x->len };
  return (struct rt_trie_key){ (u64) x->key[0] << 32 | x->key[1], (u64) x->key[2] << 32 | x->key[3], x->len };
}

/* Bit i of k, counted from the top. */
static inline uint
key_bit(struct rt_trie_key k, uint i)
{
  return i < 64 ? (k.hi >> (63 - i)) & 1 : (k.lo >> (127 - i)) & 1;
}

/* How many leading bits a and b share, at most max. */
static uint
common_len(struct rt_trie_key a, struct rt_trie_key b, uint max)
{
  u64 x = a.hi ^ b.hi;
  uint c = x ? (uint) __builtin_clzll(x) : (a.lo ^ b.lo) ? 64 + (uint) __builtin_clzll(a.lo ^ b.lo) : 128;
  return MIN(c, max);
}

/* Is b within a (a's length or longer, a's bits first)? */
static inline int
key_within(struct rt_trie_key b, struct rt_trie_key a)
{
  return b.len >= a.len && common_len(a, b, a.len) == a.len;
}

/* The order of net_compare(): address, then length. */
static int
key_cmp(struct rt_trie_key a, struct rt_trie_key b)
{
  if (a.hi != b.hi)
    return a.hi < b.hi ? -1 : 1;
  if (a.lo != b.lo)
    return a.lo < b.lo ? -1 : 1;
  return (a.len > b.len) - (a.len < b.len);
}

/* k cut to its first len bits. */
static struct rt_trie_key
key_cut(struct rt_trie_key k, uint len)
{
  if (len < 64) {
    k.hi = len ? k.hi & (~0ULL << (64 - len)) : 0;
    k.lo = 0;
  } else if (len < 128)
    k.lo = len > 64 ? k.lo & (~0ULL << (128 - len)) : 0;
  k.len = len;
  return k;
}

/* The counters change under the lock and are read by anyone. */
static inline void
count_add(u32 *c, int d)
{
  __atomic_store_n(c, *c + d, __ATOMIC_RELAXED);
}

static struct rt_trie_node *
node_new(struct rt_trie *t, struct rt_trie_key k, int has)
{
  struct rt_trie_node *x = shslab_alloc(t->slab);
  *x = (struct rt_trie_node){ .len = k.len, .has = has };
  x->key[0] = k.hi >> 32;
  if (t->net_type == NET_IP6) {
    x->key[1] = (u32) k.hi;
    x->key[2] = k.lo >> 32;
    x->key[3] = (u32) k.lo;
  }
  count_add(&t->nodes, 1);
  return x;
}

static void
list_free(struct shslab *slab, struct rt_trie_node *x)
{
  for (struct rt_trie_node *next; x; x = next) {
    next = x->retired;
    shslab_free(slab, x);
  }
}

/* A batch of an IPv6 trie rides in an IPv6 node's slot, of an IPv4 one
 * in an IPv4 node's: its slab is the one whose slots are of its size. */
static void
batch_free(struct rcu_head *h, struct shslab *slab)
{
  struct rt_trie_batch *b = (struct rt_trie_batch *) h;
  list_free(slab, b->list);
  shslab_free(slab, b);
}

static void batch_free_ip4(struct rcu_head *h) { batch_free(h, node_slab[0]); }
static void batch_free_ip6(struct rcu_head *h) { batch_free(h, node_slab[1]); }

/* x is unlinked: it goes once every reader that may stand on it left. */
static void
node_retire(struct rt_trie *t, struct rt_trie_node *x)
{
  count_add(&t->nodes, -1);
  x->retired = t->retired;
  t->retired = x;
  if (++t->retired_count < RT_TRIE_BATCH)
    return;
  struct rt_trie_batch *b = shslab_alloc(t->slab);
  b->list = t->retired;
  t->retired = NULL;
  t->retired_count = 0;
  rcu_call(&b->head, t->net_type == NET_IP4 ? batch_free_ip4 : batch_free_ip6);
}

struct rt_trie *
rt_trie_new(uint net_type)
{
  ASSERT_DIE(net_type == NET_IP4 || net_type == NET_IP6);
  pthread_once(&node_slab_once, node_slab_init);
  struct rt_trie *t = shslab_alloc(node_slab[1]);
  _Static_assert(sizeof(struct rt_trie) <= RT_TRIE_NODE_BYTES(1), "a trie's head rides in an IPv6 node's slot");
  *t = (struct rt_trie){ .slab = node_slab[net_type == NET_IP6], .net_type = net_type };
  return t;
}

static void
subtree_free(struct shslab *slab, struct rt_trie_node *x)
{
  while (x) {
    subtree_free(slab, x->child[0]);
    struct rt_trie_node *next = x->child[1];
    shslab_free(slab, x);
    x = next;
  }
}

void
rt_trie_free(struct rt_trie *t)
{
  subtree_free(t->slab, t->root);
  list_free(t->slab, t->retired);
  shslab_free(node_slab[1], t);
}

void
rt_trie_add(struct rt_trie *t, const net_addr *n)
{
  struct rt_trie_key k = key_of(n);
  struct rt_trie_node **slot = &t->root, *x;
  while ((x = *slot)) {
    uint c = common_len(k, node_key(t, x), MIN(k.len, (uint) x->len));
    if (c == x->len) {
      if (k.len == x->len) {
        if (!x->has) {
          __atomic_store_n(&x->has, 1, __ATOMIC_RELEASE);
          count_add(&t->prefixes, 1);
        }
        return;
      }
      slot = &x->child[key_bit(k, x->len)];
      continue;
    }
    /* k leaves x's path at bit c: a node there takes both */
    struct rt_trie_node *up;
    if (c == k.len)
      up = node_new(t, k, 1);
    else {
      up = node_new(t, key_cut(k, c), 0);
      up->child[key_bit(k, c)] = node_new(t, k, 1);
    }
    up->child[key_bit(node_key(t, x), c)] = x;
    rcu_assign_pointer(*slot, up);
    count_add(&t->prefixes, 1);
    return;
  }
  rcu_assign_pointer(*slot, node_new(t, k, 1));
  count_add(&t->prefixes, 1);
}

void
rt_trie_remove(struct rt_trie *t, const net_addr *n)
{
  struct rt_trie_key k = key_of(n);
  struct rt_trie_node **slot = &t->root, **up_slot = NULL, *x, *up = NULL;
  while ((x = *slot) && x->len < k.len) {
    if (common_len(k, node_key(t, x), x->len) < x->len)
      return;
    up_slot = slot;
    up = x;
    slot = &x->child[key_bit(k, x->len)];
  }
  if (!x || x->len != k.len || common_len(k, node_key(t, x), k.len) < k.len || !x->has)
    return;
  __atomic_store_n(&x->has, 0, __ATOMIC_RELEASE);
  count_add(&t->prefixes, -1);
  if (x->child[0] && x->child[1])
    return;                           /* a branch point now */
  struct rt_trie_node *only = x->child[0] ? x->child[0] : x->child[1];
  rcu_assign_pointer(*slot, only);
  node_retire(t, x);
  /* a branch point left with one subtree gives way to it */
  if (!only && up && !up->has) {
    rcu_assign_pointer(*up_slot, up->child[0] ? up->child[0] : up->child[1]);
    node_retire(t, up);
  }
}

struct rt_trie_walk {
  const struct rt_trie *t;
  struct rt_trie_key in, after;
  int has_after;
  net_addr *out;
  uint max, count;
};

static void
walk(struct rt_trie_walk *w, const struct rt_trie_node *x)
{
  if (!x || w->count >= w->max)
    return;
  struct rt_trie_key k = node_key(w->t, x);
  /* on the way down to `in`, or inside it */
  if (k.len < w->in.len ? !key_within(w->in, k) : !key_within(k, w->in))
    return;
  int fresh = 1;
  if (w->has_after) {
    if (key_within(w->after, k))
      fresh = 0;                      /* k is after or holds it: only below may follow */
    else if (key_cmp(k, w->after) < 0)
      return;                         /* all of x's subtree lies before after */
  }
  if (fresh && k.len >= w->in.len && __atomic_load_n(&x->has, __ATOMIC_ACQUIRE))
    key_to_net(w->t, k, &w->out[w->count++]);
  walk(w, rcu_dereference(x->child[0]));
  walk(w, rcu_dereference(x->child[1]));
}

uint
rt_trie_walk(const struct rt_trie *t, const net_addr *in, const net_addr *after, net_addr *out, uint max)
{
  ASSERT_DIE(in->type == t->net_type && (!after || after->type == t->net_type));
  struct rt_trie_walk w = { .t = t, .in = key_of(in), .has_after = !!after, .out = out, .max = max };
  if (after)
    w.after = key_of(after);
  walk(&w, rcu_dereference(t->root));
  return w.count;
}

u32 rt_trie_prefixes(const struct rt_trie *t) { return __atomic_load_n(&t->prefixes, __ATOMIC_RELAXED); }
u32 rt_trie_nodes(const struct rt_trie *t) { return __atomic_load_n(&t->nodes, __ATOMIC_RELAXED); }
