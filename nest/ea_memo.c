/*
 * Per-thread memos of attribute-list transformations (see ea_memo.h).
 *
 * Layout for the hit path: an entry is the key, the hash and both lists
 * in one stride (one cache line for a filter's key, two for an export
 * profile), a bucket EM_WAYS entries side by side, the table aligned to
 * cache lines. Entries in a bucket go from the newest to the oldest: a new
 * one goes first, the others move down and the last one is dropped.
 */
#include <pthread.h>
#include <string.h>
#include "nest/ea_memo.h"
#include "lib/rcu.h"
#include "lib/resource.h"

#define EM_WAYS 4

struct em_entry {
  u32 hash;
  u32 len;
  const struct ea_list *src;           /* reference held; NULL: empty */
  struct ea_list *out;                 /* reference held; may be NULL */
  u64 bytes[];                         /* len bytes of key */
};

/* owner: one thread */
struct em_memo {
  void *mem;                           /* as allocated (the table is aligned in it) */
  size_t size;
  u32 mask;                            /* buckets - 1 */
  u32 stride;                          /* bytes per entry */
  u8 *tab;
};

struct em_kind {
  u32 buckets;                         /* a power of two */
  u32 key_max;                         /* bytes, a multiple of 8 */
  enum mem_class cls;
};

/* A filter memo meets every attribute set of the routes it imports, some
 * with two or three edit runs (accept, reject) in one bucket; the export
 * memo one entry per set and export profile. 16,384 entries each (1 and 2
 * MB per thread). */
static const struct em_kind em_kinds[EA_MEMO_KINDS] = {
  [EA_MEMO_BGP_EXPORT] = { .buckets = 4096, .key_max = EA_MEMO_KEY_MAX, .cls = MEM_PROTOCOLS },
  [EA_MEMO_FILTER] = { .buckets = 4096, .key_max = 40, .cls = MEM_ATTRS },
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
  if (e->out)
    ea_unref(e->out);
  e->src = NULL;
}

static void
em_thread_exit(void)
{
  for (uint k = 0; k < EA_MEMO_KINDS; k++) {
    struct em_memo *m = &em_mine[k];
    if (!m->mem)
      continue;
    for (u32 b = 0; b <= m->mask; b++)
      for (uint i = 0; i < EM_WAYS; i++)
        em_drop(em_entry(m, b, i));
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
    const struct em_kind *k = &em_kinds[kind];
    pthread_once(&em_once, em_hook_init);
    m->stride = (sizeof(struct em_entry) + k->key_max + 63) & ~63u;
    m->mask = k->buckets - 1;
    m->size = (size_t) k->buckets * EM_WAYS * m->stride + 64;
    m->mem = mem_alloc_shared(k->cls, m->size);
    memset(m->mem, 0, m->size);
    m->tab = (u8 *) (((uintptr_t) m->mem + 63) & ~(uintptr_t) 63);
  }
  return m;
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

int
ea_memo_get(enum ea_memo_kind kind, const struct ea_memo_key *k, struct ea_list **out)
{
  struct em_memo *m = em_get(kind);
  u32 b = k->hash & m->mask;
  for (uint i = 0; i < EM_WAYS; i++) {
    const struct em_entry *e = em_entry(m, b, i);
    if (em_match(e, k)) {
      *out = e->out;
      return 1;
    }
  }
  return 0;
}

void
ea_memo_prefetch(enum ea_memo_kind kind, u32 hash)
{
  struct em_memo *m = em_get(kind);
  u32 b = hash & m->mask;
  for (uint i = 0; i < EM_WAYS; i++)
    __builtin_prefetch(em_entry(m, b, i));
}

void
ea_memo_prefetch_out(enum ea_memo_kind kind, u32 hash, const struct ea_list *src)
{
  struct em_memo *m = em_get(kind);
  u32 b = hash & m->mask;
  for (uint i = 0; i < EM_WAYS; i++) {
    const struct em_entry *e = em_entry(m, b, i);
    if (e->hash == hash && e->src == src) {
      if (e->out)
        __builtin_prefetch(e->out, 1);
      return;
    }
  }
}

void
ea_memo_put(enum ea_memo_kind kind, const struct ea_memo_key *k, struct ea_list *out)
{
  struct em_memo *m = em_get(kind);
  ASSERT(k->len <= em_kinds[kind].key_max && !(k->len % 8));
  u32 b = k->hash & m->mask;
  /* The key's own entry if it has one, else the oldest, makes room at
   * the front. */
  uint i = 0;
  while (i < EM_WAYS - 1 && !em_match(em_entry(m, b, i), k))
    i++;
  struct em_entry *first = em_entry(m, b, 0);
  em_drop(em_entry(m, b, i));
  if (i)
    memmove((u8 *) first + m->stride, first, (size_t) i * m->stride);
  first->src = NULL;
  first->hash = k->hash;
  first->len = k->len;
  first->src = ea_ref((struct ea_list *) k->src);
  first->out = out;
  memcpy(first->bytes, k->bytes, k->len);
}
