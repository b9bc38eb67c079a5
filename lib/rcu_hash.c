/*
 * RCU hash index for one writer at a time: see lib/rcu_hash.h.
 *
 * A retired array is handed over between the writer and its RCU callback
 * through its state word, so that neither touches the struct rcu_hash
 * after the other may have freed it:
 *   PENDING  the grace period runs; the generation's links are in use;
 *   DONE     set by the callback: the writer may free the array and reuse
 *            the generation;
 *   ORPHAN   set by rcu_hash_free() while still pending: the callback
 *            frees the array itself.
 */
#include "lib/rcu_hash.h"
#include "lib/huge_alloc.h"

enum { RH_PENDING, RH_DONE, RH_ORPHAN };

static rcu_hash_bucket_word
rh_word(struct rcu_hash_node *first, uintptr_t summary)
{
  /* a first node beyond the pointer bits would have its address cut */
  ASSERT_DIE(!((uintptr_t) first & ~RCU_HASH_PTR_MASK));
  return first ? (uintptr_t) first | summary : 0;
}

/* A bucket's word with n pushed in front of its chain. */
static rcu_hash_bucket_word
rh_word_push(rcu_hash_bucket_word w, struct rcu_hash_node *n, u32 hash)
{
  return rh_word(n, (w | rcu_hash_summary_bits(hash)) & ~RCU_HASH_PTR_MASK);
}

static struct rcu_hash_array *
rh_array_new(uint order, uint gen)
{
  size_t n = (size_t) 1 << order;
  /* Big arrays come zeroed, on huge pages: buckets are hit at random. */
  struct rcu_hash_array *a = huge_zalloc(sizeof(*a) + n * sizeof(a->b[0]));
  a->mask = (u32) (n - 1);
  a->gen = gen;
  return a;
}

static size_t
rh_array_bytes(const struct rcu_hash_array *a)
{
  return sizeof(*a) + ((size_t) a->mask + 1) * sizeof(a->b[0]);
}

static void
rh_array_free(struct rcu_hash_array *a)
{
  if (a)
    huge_free(a, rh_array_bytes(a));
}

void
rcu_hash_init(struct rcu_hash *h, uint min_order, rcu_hash_fn hash, int key_offset)
{
  *h = (struct rcu_hash){ .min_order = min_order, .hash = hash, .key_offset = key_offset };
  h->cur = rh_array_new(min_order, 0);
}

static void
rh_retired_rcu(struct rcu_head *head)
{
  struct rcu_hash_array *a = caa_container_of(head, struct rcu_hash_array, rcu);
  if (uatomic_cmpxchg(&a->state, RH_PENDING, RH_DONE) != RH_PENDING)
    rh_array_free(a);         /* orphaned: its index is gone */
}

/* True when no retired array holds the other generation's links. */
static int
rh_spare_free(struct rcu_hash *h)
{
  if (!h->retiring)
    return 1;
  if (uatomic_read(&h->retiring->state) != RH_DONE)
    return 0;
  rh_array_free(h->retiring);
  h->retiring = NULL;
  return 1;
}

size_t
rcu_hash_bytes(const struct rcu_hash *h)
{
  return rh_array_bytes(h->cur) + (h->retiring ? rh_array_bytes(h->retiring) : 0);
}

void
rcu_hash_free(struct rcu_hash *h)
{
  if (h->retiring && uatomic_cmpxchg(&h->retiring->state, RH_PENDING, RH_ORPHAN) != RH_PENDING)
    rh_array_free(h->retiring); /* done already */
  h->retiring = NULL;
  /* Nobody reads any more (the caller's promise): no grace period. */
  rh_array_free(h->cur);
  h->cur = NULL;
}

/* Rebuild the chains in the other generation's links and publish. */
static void
rh_resize(struct rcu_hash *h, uint order)
{
  struct rcu_hash_array *old = h->cur;
  uint g = old->gen, ng = !g;
  struct rcu_hash_array *a = rh_array_new(order, ng);
  /* The writer waits for this: keep several nodes' cache misses in
   * flight (chains are about one node long). */
  const u32 ahead = 8;
  for (u32 i = 0; i <= old->mask; i++) {
    struct rcu_hash_node *soon = i + ahead <= old->mask ? rcu_hash_word_node(old->b[i + ahead]) : NULL;
    if (soon) {
      __builtin_prefetch(soon);
      __builtin_prefetch((const char *) soon + h->key_offset);
    }
    for (struct rcu_hash_node *n = rcu_hash_word_node(old->b[i]); n; n = n->next[g]) {
      u32 hash = h->hash(n);
      rcu_hash_bucket_word *slot = &a->b[hash & a->mask];
      n->next[ng] = rcu_hash_word_node(*slot);
      *slot = rh_word_push(*slot, n, hash);
    }
  }
  /* Release: the new links and buckets are visible before the array. */
  rcu_assign_pointer(h->cur, a);
  old->state = RH_PENDING;
  h->retiring = old;
  call_rcu(&old->rcu, rh_retired_rcu);
}

static uint
rh_order(const struct rcu_hash_array *a)
{
  return (uint) __builtin_ctzll((u64) a->mask + 1);
}

/* The order that fits one node per bucket for n nodes. */
static uint
rh_fit_n(const struct rcu_hash *h, u64 n)
{
  uint fit = h->min_order;
  while (fit < 31 && ((u64) 1 << fit) < n)
    fit++;
  return fit;
}

static uint
rh_fit(const struct rcu_hash *h)
{
  return rh_fit_n(h, h->count);
}

/* A grow makes four times the buckets, not twice: each grow rewrites
 * every node's link, a cache miss per node, and a table loaded from empty
 * (a peer's full table) then rewrites a third of its nodes instead of all
 * of them. At 1M inserts that was 40% of their time. The buckets cost 8
 * to 32 bytes per node instead of 8 to 16; past RH_GROW4_MAX_ORDER (8 MB
 * of buckets) it doubles again, where 16 bytes per node more would be
 * tens of megabytes. A grow that had to wait for a grace period goes to
 * one node per bucket at least. With nodes expected (rcu_hash_expect), a
 * grow goes to fit them at once: no steps on the way, and no step past
 * them. */
#define RH_GROW4_MAX_ORDER 20
static uint
rh_grow_order(const struct rcu_hash *h)
{
  uint order = rh_order(h->cur);
  uint to = order + 2 <= RH_GROW4_MAX_ORDER ? order + 2 : order + 1;
  if (h->expect > h->count && rh_fit_n(h, h->expect) > order)
    to = rh_fit_n(h, h->expect);
  return MIN(MAX(to, rh_fit(h)), 31);
}

void
rcu_hash_insert(struct rcu_hash *h, u32 hash, struct rcu_hash_node *n)
{
  struct rcu_hash_array *a = h->cur;
  uint g = a->gen;
  rcu_hash_bucket_word *slot = &a->b[hash & a->mask];
  n->next[g] = rcu_hash_word_node(*slot);
  rcu_assign_pointer(*slot, rh_word_push(*slot, n, hash));
  h->inserts++;
  /* At most one node per bucket on average: a lookup then costs the
   * bucket and the node. */
  if (++h->count > a->mask + 1 && rh_order(a) < 31 && rh_spare_free(h))
    rh_resize(h, rh_grow_order(h));
}

void
rcu_hash_remove(struct rcu_hash *h, u32 hash, struct rcu_hash_node *n)
{
  struct rcu_hash_array *a = h->cur;
  uint g = a->gen;
  rcu_hash_bucket_word *slot = &a->b[hash & a->mask];
  struct rcu_hash_node *p = rcu_hash_word_node(*slot);
  /* n keeps its link: a reader standing on it goes on from there. Its
   * summary bits stay while other nodes do: taking them out would read
   * and hash each of those (cache misses). A bucket that empties starts
   * afresh, and a resize sums each bucket up again. */
  if (p == n)
    rcu_assign_pointer(*slot, rh_word(n->next[g], *slot & ~RCU_HASH_PTR_MASK));
  else {
    while (p->next[g] != n) {
      ASSERT_DIE(p->next[g]);
      p = p->next[g];
    }
    rcu_assign_pointer(p->next[g], n->next[g]);
  }
  h->count--;
  if (((u64) h->count << 4) < (u64) a->mask + 1 && rh_order(a) > h->min_order && rh_spare_free(h))
    rh_resize(h, rh_fit(h));
}

void
rcu_hash_maintain(struct rcu_hash *h)
{
  if (!rh_spare_free(h))
    return;
  /* A grow or a shrink that had to wait for a grace period. */
  uint order = rh_order(h->cur), fit = rh_fit(h);
  if (fit > order)
    rh_resize(h, rh_grow_order(h));
  else if (fit < order && ((u64) h->count << 4) < ((u64) 1 << order))
    rh_resize(h, fit);
}

int
rcu_hash_sparse(const struct rcu_hash *h)
{
  return rh_order(h->cur) > rh_fit(h);
}

void
rcu_hash_compact(struct rcu_hash *h)
{
  if (rcu_hash_sparse(h) && rh_spare_free(h))
    rh_resize(h, rh_fit(h));
}

/* --- Walks --- */

static u32
rh_rev32(u32 x)
{
  x = __builtin_bswap32(x);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  return ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
}

/* Positions per bucket of the walk's array: a power of two. */
static u64
rh_span(const struct rcu_hash_array *a)
{
  return RCU_HASH_END >> rh_order(a);
}

/* The bucket a walk visits at step s: s's bits reversed (order bits). */
static u32
rh_step_bucket(const struct rcu_hash_array *a, u32 s)
{
  uint order = rh_order(a);
  return order ? rh_rev32(s) >> (32 - order) : 0;
}

/* While the walk is in its first bucket and started inside it (the array
 * shrank since the position was taken): skip the nodes before the start,
 * walked already. Chains are not ordered, so every node is checked. */
static struct rcu_hash_node *
rh_skip_before(struct rcu_hash_iter *it, struct rcu_hash_node *n)
{
  uint g = it->a->gen;
  while (n && it->from && rh_rev32(it->h->hash(n)) < it->from)
    n = rcu_dereference(n->next[g]);
  return n;
}

/* A walk's steps go to buckets far apart (bit-reversed): each bucket's
 * word and first node a cache miss, one after the other, 200 ns a net of
 * a table of a million. Steps ahead, the walk asks for the word of the
 * bucket RH_WALK_AHEAD steps on and for the first node of the bucket
 * half as far, whose word it asked for then. */
#define RH_WALK_AHEAD 16

static inline void
rh_walk_prefetch(const struct rcu_hash_array *a, u64 s)
{
  if (s + RH_WALK_AHEAD <= a->mask)
    __builtin_prefetch(&a->b[rh_step_bucket(a, (u32) (s + RH_WALK_AHEAD))]);
  if (s + RH_WALK_AHEAD / 2 <= a->mask) {
    struct rcu_hash_node *n = rcu_hash_word_node(
        rcu_dereference(((struct rcu_hash_array *) a)->b[rh_step_bucket(a, (u32) (s + RH_WALK_AHEAD / 2))]));
    if (n)
      __builtin_prefetch(n);
  }
}

/* From step s on: the first node of a non-empty bucket. */
static struct rcu_hash_node *
rh_walk_buckets(struct rcu_hash_iter *it, u64 s)
{
  const struct rcu_hash_array *a = it->a;
  for (; s <= a->mask; s++) {
    rh_walk_prefetch(a, s);
    it->step = (u32) s;
    it->bucket = rh_step_bucket(a, it->step);
    struct rcu_hash_node *n = rh_skip_before(it, rcu_hash_word_node(rcu_dereference(((struct rcu_hash_array *) a)->b[it->bucket])));
    if (n)
      return it->node = n;
    it->from = 0;
  }
  it->step = a->mask + 1;
  return it->node = NULL;
}

struct rcu_hash_node *
rcu_hash_walk(const struct rcu_hash *h, u64 from, struct rcu_hash_iter *it)
{
  const struct rcu_hash_array *a = rcu_dereference(((struct rcu_hash *) h)->cur);
  it->h = h;
  it->a = a;
  u64 span = rh_span(a);
  /* A start inside a bucket (the array shrank since the position was
   * taken): that bucket's nodes before it were walked already. */
  it->from = from % span ? from : 0;
  return rh_walk_buckets(it, from / span);
}

struct rcu_hash_node *
rcu_hash_next(struct rcu_hash_iter *it)
{
  struct rcu_hash_node *n = rh_skip_before(it, rcu_dereference(it->node->next[it->a->gen]));
  if (n)
    return it->node = n;
  it->from = 0;
  return rh_walk_buckets(it, (u64) it->step + 1);
}

u64
rcu_hash_pos(const struct rcu_hash_iter *it)
{
  return (u64) it->step * rh_span(it->a);
}
