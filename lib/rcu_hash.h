/*
 * DOC: An RCU hash index for one writer at a time.
 *
 * Nodes are intrusive (struct rcu_hash_node inside the indexed object) and
 * chained per bucket. Readers walk it inside rcu_read_lock() without any
 * lock; writers are serialised by the caller's lock (the route table's
 * writer lock), so inserting and removing are plain pointer stores, with no
 * compare-and-swap, no dummy nodes and no clean-up walk. That is what a
 * table index needs: the lock is already held for the route change, and a
 * lookup costs the bucket and the node, nothing more.
 *
 * Each node has two links, one per array generation. A resize builds the new
 * array's chains in the links of the other generation while readers of the
 * old array go on through theirs, then publishes the new array; the old one
 * is freed after a grace period. Only once that grace period is over may the
 * next resize reuse the old generation's links, so a resize that comes
 * sooner is postponed (chains just run a little longer meanwhile).
 *
 * The index grows when it holds more nodes than buckets, to four times as
 * many buckets as nodes (twice past a million buckets), and shrinks when it holds fewer than a sixteenth,
 * to one node per bucket; rcu_hash_maintain() does what had to wait. Once
 * nodes stop coming, the caller may compact a grown index to one node per
 * bucket (rcu_hash_compact).
 *
 * Each bucket carries, in its pointer's unused top bits, a 16-bit summary
 * of the hashes of its nodes: each sets two bits, picked by its hash
 * (a Bloom filter). A lookup whose bits are not all there knows the key
 * is missing without reading a node: in a big index every node is a
 * cache miss, and a key that is not there (a new net, a longest-prefix
 * probe of a length the address has no net of) then costs its bucket
 * alone. With one node in the bucket, one such lookup in about a hundred
 * reads the node anyway. A removal leaves its bits while other nodes stay
 * in the bucket (a superset rules nothing out wrongly); an emptied bucket
 * and a resize start the summary afresh.
 *
 * Ownership: struct rcu_hash and the links belong to whoever holds the
 * writer lock; arrays and links are read under RCU by anyone.
 */
#ifndef LIB_RCU_HASH_H
#define LIB_RCU_HASH_H

#include "lib/birdlib.h"
#include "lib/rcu.h"

struct rcu_hash_node {
  struct rcu_hash_node *next[2];  /* RCU; per array generation */
};

/* A bucket: its first node's address, the summary in the top bits (no
 * summary where pointers have no spare bits: every lookup reads on). */
typedef uintptr_t rcu_hash_bucket_word;

#if UINTPTR_MAX == UINT64_MAX
#define RCU_HASH_SUMMARY_SHIFT 48
#define RCU_HASH_PTR_MASK (((uintptr_t) 1 << RCU_HASH_SUMMARY_SHIFT) - 1)
/* Bucket-mates share the hash's low bits (the bucket's index): the bits
 * come from a product that mixes in all of them. */
static inline uintptr_t
rcu_hash_summary_bits(u32 hash)
{
  u32 m = hash * 2654435761U;
  return (((uintptr_t) 1 << (m >> 28)) | ((uintptr_t) 1 << ((m >> 24) & 15))) << RCU_HASH_SUMMARY_SHIFT;
}
#else
#define RCU_HASH_PTR_MASK UINTPTR_MAX
static inline uintptr_t rcu_hash_summary_bits(u32 hash) { (void) hash; return 0; }
#endif

static inline struct rcu_hash_node *
rcu_hash_word_node(rcu_hash_bucket_word w)
{
  return (struct rcu_hash_node *) (w & RCU_HASH_PTR_MASK);
}

/* The bucket's first node, or NULL when hash's bits say that none of its
 * nodes is hash's. */
static inline struct rcu_hash_node *
rcu_hash_word_match(rcu_hash_bucket_word w, u32 hash)
{
  uintptr_t bits = rcu_hash_summary_bits(hash);
  return (w & bits) == bits ? rcu_hash_word_node(w) : NULL;
}

struct rcu_hash_array {
  u32 mask;                   /* buckets - 1 */
  u32 gen;                    /* which link of the nodes chains this array */
  u32 state;                  /* atomic: retiring array's hand-over (rcu_hash.c) */
  struct rcu_head rcu;
  rcu_hash_bucket_word b[];   /* RCU */
};

/* Recomputes a node's hash when its chains are rebuilt. */
typedef u32 (*rcu_hash_fn)(const struct rcu_hash_node *n);

struct rcu_hash {
  struct rcu_hash_array *cur; /* RCU */
  struct rcu_hash_array *retiring;  /* waits for its grace period */
  u32 count;                  /* nodes */
  u32 inserts;                /* nodes ever inserted (wraps): has any come? */
  u32 min_order;
  u32 expect;                 /* nodes the writer expects (rcu_hash_expect) */
  int key_offset;             /* of the key from the node (prefetches) */
  rcu_hash_fn hash;
};

/* A lookup's bucket (rcu_hash_bucket) or a walk's place (rcu_hash_walk). */
struct rcu_hash_iter {
  const struct rcu_hash *h;
  const struct rcu_hash_array *a;
  u32 bucket;
  u32 step;                   /* walks: buckets passed, in walk order */
  u64 from;                   /* walks: skip what lies before in the first bucket */
  struct rcu_hash_node *node;
};

/* 2^min_order buckets at least. key_offset: where the key the caller
 * compares lies from the node, in bytes. Small objects (48 bytes) straddle
 * cache lines: the key's line is fetched together with the node's. */
void rcu_hash_init(struct rcu_hash *h, uint min_order, rcu_hash_fn hash, int key_offset);
/* Nobody reads or writes it any more; the nodes are the caller's. */
void rcu_hash_free(struct rcu_hash *h);
/* Memory of the bucket arrays, for accounting. */
size_t rcu_hash_bytes(const struct rcu_hash *h);

/* --- Readers (inside rcu_read_lock(); the writer may use them as well) --- */

/* The first node of hash's bucket, then its others: the caller compares
 * keys (several hashes share a bucket). None when the bucket's summary
 * rules hash out. */
static inline struct rcu_hash_node *
rcu_hash_bucket(const struct rcu_hash *h, u32 hash, struct rcu_hash_iter *it)
{
  const struct rcu_hash_array *a = rcu_dereference(((struct rcu_hash *) h)->cur);
  it->h = h;
  it->a = a;
  it->bucket = hash & a->mask;
  return it->node = rcu_hash_word_match(rcu_dereference(((struct rcu_hash_array *) a)->b[it->bucket]), hash);
}

static inline struct rcu_hash_node *
rcu_hash_bucket_next(struct rcu_hash_iter *it)
{
  return it->node = rcu_dereference(it->node->next[it->a->gen]);
}

/* Start the bucket's cache misses early (before taking a lock). */
static inline void
rcu_hash_prefetch(const struct rcu_hash *h, u32 hash)
{
  const struct rcu_hash_array *a = rcu_dereference(((struct rcu_hash *) h)->cur);
  __builtin_prefetch(&a->b[hash & a->mask]);
}

/* Then, once the bucket has come, its node number depth (0: the first),
 * when the ones before it have come too: a pipeline asks for one more
 * link of the chain per stage. Nothing when the summary rules hash out. */
static inline void
rcu_hash_prefetch_node(const struct rcu_hash *h, u32 hash, uint depth)
{
  struct rcu_hash_iter it;
  struct rcu_hash_node *x = rcu_hash_bucket(h, hash, &it);
  for (; x && depth; depth--)
    x = rcu_hash_bucket_next(&it);
  if (x) {
    __builtin_prefetch(x);
    __builtin_prefetch((const char *) x + h->key_offset);
  }
}

/*
 * Walks: every node once. The order is that of the bit-reversed hash: the
 * buckets go by their bit-reversed index, and doubling or halving the
 * array splits or merges buckets that are neighbours in that order. So a
 * position in it means the same whatever resizes happen in between: a walk
 * can stop between two buckets (rcu_hash_pos), leave its read section and
 * resume from that position later; nodes added meanwhile may or may not be
 * seen. Within one read section a walk stays on the array it started on.
 * Positions run from 0 (the start) to RCU_HASH_END.
 */
#define RCU_HASH_END ((u64) 1 << 32)
struct rcu_hash_node *rcu_hash_walk(const struct rcu_hash *h, u64 from, struct rcu_hash_iter *it);
struct rcu_hash_node *rcu_hash_next(struct rcu_hash_iter *it);
/* Where the bucket of the walk's current node begins. */
u64 rcu_hash_pos(const struct rcu_hash_iter *it);

/* --- The writer (under the caller's lock) --- */

/* n must not be in the index yet (the caller looked). May resize. */
void rcu_hash_insert(struct rcu_hash *h, u32 hash, struct rcu_hash_node *n);
/* Would one more node grow the index? */
static inline int rcu_hash_full(const struct rcu_hash *h) { return (u64) h->count >= (u64) h->cur->mask + 1; }
/* About n nodes are to come (0: not known): the next grow goes straight
 * to one node per bucket for them, not four times the nodes there are.
 * The shrinks stand (a sixteenth of the buckets used): expect at most
 * eight times the nodes there are. */
static inline void rcu_hash_expect(struct rcu_hash *h, u32 n) { h->expect = n; }
/* n must be in the index. Readers standing on it go on from its links,
 * which stay as they are: free it only after a grace period. */
void rcu_hash_remove(struct rcu_hash *h, u32 hash, struct rcu_hash_node *n);
/* Free a retired array whose grace period is over, and grow or shrink
 * as an insert or removal would have if it had not had to wait; call now
 * and then (the table's clean-up). */
void rcu_hash_maintain(struct rcu_hash *h);
/* More than twice the buckets one node per bucket needs: what a grow
 * leaves (four times the nodes) until the nodes catch up. */
int rcu_hash_sparse(const struct rcu_hash *h);
/* Down to one node per bucket at least, at the cost of rewriting every
 * node's link: for when nodes have stopped coming (a loaded table). Does
 * nothing while a retired array waits for its grace period; call again. */
void rcu_hash_compact(struct rcu_hash *h);
/* A retired array waits for its grace period; rcu_hash_maintain() frees
 * it after that. */
static inline int rcu_hash_retiring(const struct rcu_hash *h) { return !!h->retiring; }

#endif
