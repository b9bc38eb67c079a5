/*
 * DOC: Seeded hashing and an intrusive resizable hash table.
 *
 * hash_bytes() is seeded per process (hash_seed_init) so that keys a peer
 * controls cannot be chosen to collide. struct hash_table is a chained,
 * power-of-two sized table that grows and shrinks on its own; it is not
 * thread-safe (one owning loop). Hashes read from several threads are
 * lib/rcu_hash.h (one writer at a time: the route tables' net index) and
 * liburcu's cds_lfht (any number of writers: interned attributes).
 */
#ifndef LIB_HASH_H
#define LIB_HASH_H

#include "lib/birdlib.h"
#include "lib/resource.h"

void hash_seed_init(void);        /* once at start-up, from getrandom() */
u64 hash_seed(void);
u32 hash_bytes(const void *data, size_t len);   /* seeded */
u32 hash_bytes_seeded(const void *data, size_t len, u64 seed);
static inline u32 hash_u32(u32 x)
{
  x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU; x ^= x >> 16;
  return x;
}
static inline u32 hash_mix(u32 a, u32 b) { return hash_u32(a ^ (b * 0x9e3779b9U)); }
/* An object's address (the low 4 bits are alignment). */
static inline u32 hash_ptr(const void *p)
{
  return hash_u32((u32) ((uintptr_t) p >> 4)) ^ hash_u32((u32) ((uintptr_t) p >> 36));
}

struct hash_node {
  struct hash_node *next;
  u32 hash;
};

struct hash_table {
  struct hash_node **buckets;
  pool *pool;
  u32 order;     /* buckets = 1 << order */
  u32 count;
  u32 min_order;
  u32 walking;   /* HASH_WALK_DELSAFE in progress: shrinking is deferred */
  u32 sparse;    /* hash_init_sparse() */
};

typedef int (*hash_eq_fn)(const struct hash_node *n, const void *key);

void hash_init(struct hash_table *t, pool *p, uint order);
/* A table kept at most half full, which never shrinks: a lookup that
 * misses loads the bucket and rarely a node. For tables that fill and
 * empty over and over and whose nodes are cold (a BGP session's pending
 * prefixes): buckets for twice the peak count. Its buckets come with
 * the first insert: a table that is never used costs none. */
void hash_init_sparse(struct hash_table *t, pool *p, uint order);
void hash_free(struct hash_table *t);
void hash_insert(struct hash_table *t, struct hash_node *n, u32 hash);
/* First node with this hash for which eq(n, key) holds, or NULL. */
struct hash_node *hash_find(const struct hash_table *t, u32 hash, hash_eq_fn eq, const void *key);
void hash_remove(struct hash_table *t, struct hash_node *n);
/* Forget all nodes at once, where that costs less than removing them one
 * by one (a removal is a cache miss on a bucket; this writes the buckets
 * in a row): when there is a node per HASH_CLEAR_SPAN buckets or more.
 * 1: done, the caller frees its nodes without hash_remove(); 0: not.
 * The buckets stay as many. Not while walking. */
int hash_clear_dense(struct hash_table *t);
/* An empty table back to the buckets it was made with, a sparse one to
 * none until its next insert: what a burst grew goes back (a BGP update
 * group's, one per peer in the multi layout, 8 KB each at least, held
 * at rest). Not while walking. */
void hash_trim(struct hash_table *t);
/* Ask for the bucket of hash: a lookup to come (only a hint). */
static inline void
hash_prefetch(const struct hash_table *t, u32 hash)
{
  __builtin_prefetch(&t->buckets[hash & ((1U << t->order) - 1)]);
}

/* End of a HASH_WALK_DELSAFE: does the shrinking removals deferred. */
void hash_walk_end(struct hash_table *t);

/* Iterate all nodes; removal of the current node inside the walk is allowed
 * only through HASH_WALK_DELSAFE, which defers shrinking (a resize would
 * reshuffle the buckets under the walk) until the walk ends. Insertion is
 * never allowed inside a walk. `break` leaves only the current bucket, and a
 * DELSAFE walk must not be left by return or goto (the table would never
 * shrink again). */
#define HASH_WALK(t, n) \
  for (u32 _i = 0; _i < (1U << (t)->order); _i++) \
    for (struct hash_node *n = (t)->buckets[_i]; n; n = n->next)
#define HASH_WALK_DELSAFE(t, n) \
  for (struct hash_table *_ht = (t), *_ht_once = (_ht->walking++, _ht); _ht_once; \
       _ht_once = NULL, hash_walk_end(_ht)) \
    for (u32 _i = 0; _i < (1U << _ht->order); _i++) \
      for (struct hash_node *n = _ht->buckets[_i], *n##_nx = n ? n->next : NULL; n; \
           n = n##_nx, n##_nx = n ? n->next : NULL)

#endif
