/*
 * DOC: Seeded hashing and the intrusive chained hash table.
 *
 * hash_bytes_seeded() reads the key in 8-byte words and folds each into a
 * 64-bit state with a 64x64->128 bit multiply of (word ^ seed) by the state,
 * folding the two halves back together (the wyhash "mum" step); the length
 * and the seed go into a final multiply. Keys of 32 bytes or more first
 * go 32 bytes a step through two independent states, each multiplying two
 * words at once (as wyhash's main loop). It is fast and, with a secret
 * seed, keys a peer sends cannot be picked to collide; it is not a MAC.
 * The seed is set once at start-up from getrandom(); before that a fixed
 * nonzero default is used, so early hashing works (but is predictable).
 *
 * struct hash_table: power-of-two buckets of singly linked chains, nodes
 * embedded in the caller's objects. It grows (doubles) when the load passes
 * 2 and shrinks (halves) below 1/4, never under the order it was created
 * with; a sparse table grows past 1/2 and never shrinks. One owning loop, no locking. Bucket arrays come from the table's
 * pool (mb_alloc) or from malloc when the pool is NULL.
 *
 * A sparse table gets its buckets at its first insert: until then it
 * reads one shared empty bucket (order 0). A BGP session in an update
 * group never queues a prefix of its own, and its 8 KB of buckets were
 * 0.8 MB of a 100-peer route server.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "lib/hash.h"
#include "lib/log.h"

#define HASH_K1 0x9e3779b97f4a7c15ULL
#define HASH_K2 0xe7037ed1a0b428dbULL
#define HASH_K3 0x8ebc6af09c88c6e3ULL

#define HASH_MAX_ORDER 30

static _Atomic u64 hash_seed_val = 0x243f6a8885a308d3ULL;   /* digits of pi */

static inline u64
hash_mum(u64 a, u64 b)
{
  __uint128_t r = (__uint128_t) a * b;
  return (u64) r ^ (u64) (r >> 64);
}

void
hash_seed_init(void)
{
  u64 seed = 0;
  ssize_t got;
  do
    got = getrandom(&seed, sizeof(seed), 0);
  while (got < 0 && errno == EINTR);

  if (got != (ssize_t) sizeof(seed))
  {
    /* No entropy source at all is unusual enough to say so; the clock and
     * pid are still better than a constant everybody knows. */
    log_msg(L_WARN, "Cannot get a random hash seed, using the clock: %m");
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    seed = hash_mum((u64) ts.tv_nsec ^ HASH_K1, (u64) ts.tv_sec ^ ((u64) getpid() << 32) ^ HASH_K2);
  }
  if (!seed)
    seed = HASH_K3;
  atomic_store_explicit(&hash_seed_val, seed, memory_order_relaxed);
}

u64 hash_seed(void) { return atomic_load_explicit(&hash_seed_val, memory_order_relaxed); }

u32
hash_bytes_seeded(const void *data, size_t len, u64 seed)
{
  const u8 *p = data;
  u64 h = seed ^ HASH_K1;
  size_t left = len;

  if (left >= 32)
  {
    /* Long keys (interned attribute lists): two independent lanes, one
     * multiply per 16 bytes each, so the multiplies overlap. */
    u64 h2 = h ^ HASH_K3;
    for (; left >= 32; left -= 32, p += 32)
    {
      u64 w[4];
      memcpy(w, p, 32);
      h = hash_mum(w[0] ^ seed ^ HASH_K2, w[1] ^ h);
      h2 = hash_mum(w[2] ^ seed ^ HASH_K3, w[3] ^ h2);
    }
    h ^= h2;
  }
  for (; left >= 8; left -= 8, p += 8)
  {
    u64 w;
    memcpy(&w, p, 8);
    h ^= hash_mum(w ^ seed ^ HASH_K2, h ^ HASH_K3);
  }
  if (left)
  {
    u64 w = 0;
    memcpy(&w, p, left);
    h ^= hash_mum(w ^ seed ^ HASH_K2, h ^ HASH_K3);
  }

  h = hash_mum(h ^ HASH_K1, (u64) len ^ seed ^ HASH_K2);
  h ^= h >> 29;
  return (u32) (h ^ (h >> 32));
}

u32 hash_bytes(const void *data, size_t len) { return hash_bytes_seeded(data, len, hash_seed()); }

/*
 * The table
 */

static struct hash_node **
hash_buckets_alloc(struct hash_table *t, uint order)
{
  size_t size = sizeof(struct hash_node *) << order;
  if (t->pool)
    return mb_allocz(t->pool, size);

  struct hash_node **b = calloc(1, size);
  if (!b)
    die("Unable to allocate %zu bytes of memory", size);
  return b;
}

static void
hash_buckets_free(struct hash_table *t, struct hash_node **b)
{
  if (t->pool)
    mb_free(b);
  else
    free(b);
}

static void
hash_resize(struct hash_table *t, uint order)
{
  struct hash_node **old = t->buckets;
  uint old_size = 1U << t->order;
  u32 mask = (1U << order) - 1;

  t->buckets = hash_buckets_alloc(t, order);
  t->order = order;
  for (uint i = 0; i < old_size; i++)
    for (struct hash_node *n = old[i], *nx; n; n = nx)
    {
      nx = n->next;
      n->next = t->buckets[n->hash & mask];
      t->buckets[n->hash & mask] = n;
    }
  hash_buckets_free(t, old);
}

/* Never written: a table reading it has no nodes. */
static struct hash_node *hash_no_buckets[1];

/* An empty table without buckets of its own yet. */
static void
hash_setup(struct hash_table *t, pool *p, uint order, int sparse)
{
  t->pool = p;
  t->order = 0;
  t->min_order = MIN(order, HASH_MAX_ORDER);
  t->count = 0;
  t->walking = 0;
  t->sparse = sparse;
  t->buckets = hash_no_buckets;
}

void
hash_init(struct hash_table *t, pool *p, uint order)
{
  hash_setup(t, p, order, 0);
  t->order = t->min_order;
  t->buckets = hash_buckets_alloc(t, t->order);
}

void
hash_init_sparse(struct hash_table *t, pool *p, uint order)
{
  hash_setup(t, p, order, 1);
}

void
hash_free(struct hash_table *t)
{
  if (t->buckets && t->buckets != hash_no_buckets)
    hash_buckets_free(t, t->buckets);
  t->buckets = NULL;
  t->count = 0;
}

void
hash_insert(struct hash_table *t, struct hash_node *n, u32 hash)
{
  ASSERT(!t->walking);
  if (t->buckets == hash_no_buckets) {
    t->buckets = hash_buckets_alloc(t, t->min_order);
    t->order = t->min_order;
  }
  struct hash_node **b = &t->buckets[hash & ((1U << t->order) - 1)];
  n->hash = hash;
  n->next = *b;
  *b = n;

  if (++t->count > ((2U << t->order) >> (t->sparse ? 2 : 0)) && t->order < HASH_MAX_ORDER)
    hash_resize(t, t->order + 1);
}

#define HASH_CLEAR_SPAN 32

int
hash_clear_dense(struct hash_table *t)
{
  ASSERT(!t->walking);
  if (((u64) t->count * HASH_CLEAR_SPAN) >> t->order == 0)
    return 0;
  memset(t->buckets, 0, sizeof(struct hash_node *) << t->order);
  t->count = 0;
  return 1;
}

void
hash_trim(struct hash_table *t)
{
  ASSERT(!t->walking);
  if (t->count || t->buckets == hash_no_buckets)
    return;
  if (t->sparse) {
    hash_buckets_free(t, t->buckets);
    t->order = 0;
    t->buckets = hash_no_buckets;
    return;
  }
  if (t->order == t->min_order)
    return;
  hash_buckets_free(t, t->buckets);
  t->order = t->min_order;
  t->buckets = hash_buckets_alloc(t, t->order);
}

struct hash_node *
hash_find(const struct hash_table *t, u32 hash, hash_eq_fn eq, const void *key)
{
  for (struct hash_node *n = t->buckets[hash & ((1U << t->order) - 1)]; n; n = n->next)
    if (n->hash == hash && eq(n, key))
      return n;
  return NULL;
}

static void
hash_may_shrink(struct hash_table *t)
{
  uint order = t->order;
  if (t->sparse)
    return;
  while (order > t->min_order && t->count < ((1U << order) >> 2))
    order--;
  if (order != t->order)
    hash_resize(t, order);
}

void
hash_remove(struct hash_table *t, struct hash_node *n)
{
  struct hash_node **pp = &t->buckets[n->hash & ((1U << t->order) - 1)];
  while (*pp != n)
  {
    if (unlikely(!*pp))
      bug("hash_remove(): node %p not in table", (void *) n);
    pp = &(*pp)->next;
  }
  *pp = n->next;
  n->next = NULL;
  t->count--;

  if (!t->walking)
    hash_may_shrink(t);
}

void
hash_walk_end(struct hash_table *t)
{
  ASSERT_DIE(t->walking);
  if (!--t->walking)
    hash_may_shrink(t);
}
