/*
 * Per-thread memos of attribute-list transformations (see ea_memo.h).
 *
 * Layout for the hit path: an entry is the key, the hash and both lists
 * in one stride (one cache line for a filter's key, two for an export
 * profile), a bucket EM_WAYS entries side by side, the table aligned to
 * cache lines. Entries in a bucket go from the newest to the oldest: a new
 * one goes first, the others move down and the last one is dropped.
 *
 * Size: every thread that uses a memo pays for its table in resident
 * memory, so a memo starts small and doubles while the working set does
 * not fit: when as many entries were pushed out since the last doubling
 * as the table holds. A route server whose UPDATEs carry hundreds of
 * prefixes per attribute set hits within a few entries; one that meets
 * thousands of sets in turn grows its memo to them.
 */
#include <pthread.h>
#include <string.h>
#include "nest/ea_memo.h"
#include "lib/rcu.h"
#include "lib/resource.h"

#define EM_WAYS 4
/* References on a result an entry takes at once to hand out on hits. */
#define EM_STOCK 1024

struct em_entry {
  u32 hash;
  u16 len;
  u16 stock;                           /* references on out held to hand out */
  const struct ea_list *src;           /* reference held; NULL: empty */
  struct ea_list *out;                 /* 1 + stock references held; may be NULL */
  u64 bytes[];                         /* len bytes of key */
};

/* owner: one thread */
struct em_memo {
  void *mem;                           /* as allocated (the table is aligned in it) */
  size_t size;
  u32 mask;                            /* buckets - 1 */
  u32 stride;                          /* bytes per entry */
  u32 evicted;                         /* entries pushed out since the table was made */
  u8 *tab;
};

struct em_kind {
  u32 min_buckets, max_buckets;        /* powers of two */
  u32 key_max;                         /* bytes, a multiple of 8 */
  enum mem_class cls;
};

/* 256 buckets (64 kB for filters and verdicts, 128 kB for exports) up to
 * 4,096 (16,384 entries: 1 MB, 2 MB). */
static const struct em_kind em_kinds[EA_MEMO_KINDS] = {
  [EA_MEMO_BGP_EXPORT] = { 256, 4096, EA_MEMO_BGP_EXPORT_KEY, MEM_PROTOCOLS },
  [EA_MEMO_FILTER] = { 256, 4096, 40, MEM_ATTRS },
  [EA_MEMO_VERDICT] = { 256, 4096, EA_MEMO_VERDICT_KEY, MEM_ATTRS },
};

static __thread struct em_memo em_mine[EA_MEMO_KINDS];
static pthread_once_t em_once = PTHREAD_ONCE_INIT;

static inline struct em_entry *
em_entry(const struct em_memo *m, u32 bucket, uint i)
{
  return (struct em_entry *) (m->tab + ((size_t) bucket * EM_WAYS + i) * m->stride);
}

static void
em_drop(struct em_entry *e)
{
  if (!e->src)
    return;
  ea_unref((struct ea_list *) e->src);
  ea_unref_many(e->out, 1u + e->stock);
  e->src = NULL;
  e->stock = 0;
}

static void
em_alloc(struct em_memo *m, const struct em_kind *k, u32 buckets)
{
  m->stride = (sizeof(struct em_entry) + k->key_max + 63) & ~63u;
  m->mask = buckets - 1;
  m->evicted = 0;
  m->size = (size_t) buckets * EM_WAYS * m->stride + 64;
  m->mem = mem_alloc_shared(k->cls, m->size);
  memset(m->mem, 0, m->size);
  m->tab = (u8 *) (((uintptr_t) m->mem + 63) & ~(uintptr_t) 63);
}

void
ea_memo_flush(void)
{
  for (uint k = 0; k < EA_MEMO_KINDS; k++) {
    struct em_memo *m = &em_mine[k];
    if (m->mem)
      for (u32 b = 0; b <= m->mask; b++)
        for (uint i = 0; i < EM_WAYS; i++)
          em_drop(em_entry(m, b, i));
  }
}

static void
em_thread_exit(void)
{
  ea_memo_flush();
  for (uint k = 0; k < EA_MEMO_KINDS; k++) {
    struct em_memo *m = &em_mine[k];
    if (m->mem)
      mem_free_shared(em_kinds[k].cls, m->mem, m->size);
    m->mem = NULL;
  }
}

static void
em_hook_init(void)
{
  rcu_thread_at_exit(em_thread_exit);
}

static struct em_memo *
em_get(enum ea_memo_kind kind)
{
  struct em_memo *m = &em_mine[kind];
  if (!m->mem) {
    pthread_once(&em_once, em_hook_init);
    em_alloc(m, &em_kinds[kind], em_kinds[kind].min_buckets);
  }
  return m;
}

/* Twice the buckets; the entries move over (their references with them),
 * in their order within each bucket. */
static void
em_grow(struct em_memo *m, const struct em_kind *k)
{
  struct em_memo old = *m;
  em_alloc(m, k, (old.mask + 1) * 2);
  for (u32 b = 0; b <= old.mask; b++)
    for (uint i = 0; i < EM_WAYS; i++) {
      const struct em_entry *e = em_entry(&old, b, i);
      if (!e->src)
        continue;
      u32 nb = e->hash & m->mask;
      uint j = 0;
      while (em_entry(m, nb, j)->src)
        j++;                           /* a bucket splits in two: room for all */
      memcpy(em_entry(m, nb, j), e, old.stride);
    }
  mem_free_shared(k->cls, old.mem, old.size);
}

static inline int
em_match(const struct em_entry *e, const struct ea_memo_key *k)
{
  if (e->hash != k->hash || e->src != k->src || e->len != k->len)
    return 0;
  const u64 *x = k->bytes;
  for (u32 i = 0; i < k->len / 8; i++)
    if (e->bytes[i] != x[i])
      return 0;
  return 1;
}

/* The entry of key k in this thread's memo of a kind, or NULL. */
static struct em_entry *
em_find(enum ea_memo_kind kind, const struct ea_memo_key *k)
{
  struct em_memo *m = em_get(kind);
  u32 b = k->hash & m->mask;
  for (uint i = 0; i < EM_WAYS; i++) {
    struct em_entry *e = em_entry(m, b, i);
    if (em_match(e, k))
      return e;
  }
  return NULL;
}

int
ea_memo_get(enum ea_memo_kind kind, const struct ea_memo_key *k, struct ea_list **out)
{
  struct em_entry *e = em_find(kind, k);
  if (e)
    *out = e->out;
  return !!e;
}

int
ea_memo_take(enum ea_memo_kind kind, const struct ea_memo_key *k, struct ea_list **out)
{
  struct em_entry *e = em_find(kind, k);
  if (!e)
    return 0;
  if (e->out) {
    if (!e->stock) {
      ea_ref_many(e->out, EM_STOCK);
      e->stock = EM_STOCK;
    }
    e->stock--;
  }
  *out = e->out;
  return 1;
}

void
ea_memo_prefetch(enum ea_memo_kind kind, u32 hash)
{
  struct em_memo *m = em_get(kind);
  u32 b = hash & m->mask;
  /* A bucket's newest entries: where a key that is met often sits (the
   * two others cost more bandwidth than their rare hits save). */
  __builtin_prefetch(em_entry(m, b, 0));
  __builtin_prefetch(em_entry(m, b, 1));
}

void
ea_memo_put(enum ea_memo_kind kind, const struct ea_memo_key *k, struct ea_list *out)
{
  const struct em_kind *kd = &em_kinds[kind];
  struct em_memo *m = em_get(kind);
  ASSERT(k->len <= kd->key_max && !(k->len % 8));
  u32 b = k->hash & m->mask;
  /* The key's own entry if it has one, else the oldest, makes room at
   * the front. */
  uint i = 0;
  while (i < EM_WAYS - 1 && !em_match(em_entry(m, b, i), k))
    i++;
  struct em_entry *last = em_entry(m, b, i);
  if (i == EM_WAYS - 1 && last->src && !em_match(last, k) && ++m->evicted > (m->mask + 1) * EM_WAYS &&
      m->mask + 1 < kd->max_buckets) {
    em_grow(m, kd);
    ea_memo_put(kind, k, out);
    return;
  }
  struct em_entry *first = em_entry(m, b, 0);
  em_drop(last);
  if (i)
    memmove((u8 *) first + m->stride, first, (size_t) i * m->stride);
  first->hash = k->hash;
  first->len = (u16) k->len;
  first->stock = 0;
  first->src = ea_ref((struct ea_list *) k->src);
  first->out = out;
  memcpy(first->bytes, k->bytes, k->len);
}
