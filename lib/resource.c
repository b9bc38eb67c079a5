/*
 * DOC: Resource pools, memory blocks, linear pools and slabs.
 *
 * Every resource starts with struct resource and sits on the list of the
 * pool that owns it; a pool is itself a resource, so the pools form a
 * tree rooted at root_pool(). rfree() on a pool frees its resources newest
 * first, recursing into sub-pools, then the pool.
 *
 * Accounting. Each resource has a usage (struct mem_usage) reported by its
 * class's memsize hook, or c->size as overhead when there is none. The
 * per-class atomic counters hold, for every memory class, the sum of the
 * usage of all resources whose owning pool has that class (a pool's own
 * struct counts in the pool's class), plus mem_alloc_shared()/mem_account()
 * amounts. Internal classes keep this exact: every allocation, free, slab
 * page or linpool chunk change adds its delta immediately, and rfree()
 * subtracts the usage the hook reports just before freeing. rmove() between
 * pools of different classes moves the usage across.
 *
 * What counts as what:
 *   memory block: effective = size asked; overhead = struct mblock header.
 *   linpool: effective = bytes handed out since the last flush/restore,
 *     rounded up to the 8-byte alignment unit (as in BIRD); overhead = the
 *     struct, chunk headers, unused chunk tails and spare chunks.
 *   slab: effective = live objects * object size asked; overhead = the
 *     struct, page headers, rounding and free slots.
 *   pool: overhead = the struct and its name.
 *
 * Ownership: a pool and everything in it belong to one loop, so nothing
 * here locks; only the class counters are atomic, because `show memory`
 * reads them from another thread.
 *
 * Under AddressSanitizer, freed slab objects and released linpool memory
 * are poisoned, so a use after sl_free()/lp_flush() is reported.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include "lib/resource.h"
#include "lib/page_pool.h"
#include "lib/log.h"
#include "lib/printf.h"
#include "lib/rcu.h"

#if defined(__SANITIZE_ADDRESS__)
#define RES_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RES_ASAN 1
#endif
#endif

#ifdef RES_ASAN
#include <sanitizer/asan_interface.h>
static inline void mem_poison(const void *p, size_t n) { ASAN_POISON_MEMORY_REGION(p, n); }
static inline void mem_unpoison(const void *p, size_t n) { ASAN_UNPOISON_MEMORY_REGION(p, n); }
static inline int mem_is_poisoned(const void *p) { return __asan_address_is_poisoned(p); }
#else
static inline void mem_poison(const void *p UNUSED, size_t n UNUSED) {}
static inline void mem_unpoison(const void *p UNUSED, size_t n UNUSED) {}
static inline int mem_is_poisoned(const void *p UNUSED) { return 0; }
#endif

const char *const mem_class_names[MEM_CLASS_MAX] = {
  [MEM_TABLES] = "Routing tables",
  [MEM_ATTRS] = "Route attributes",
  [MEM_PROTOCOLS] = "Protocols",
  [MEM_CONFIG] = "Current config",
  [MEM_STANDBY] = "Standby memory",
};

/*
 * Per-class counters
 *
 * Every allocation and free of every thread counts here, so one shared
 * counter per class bounced its cache line between the workers (6% of a
 * convergence profile). Threads add to one of a few stripes each, on its
 * own cache line; `show memory` sums them. Up to MEM_OWNED threads at a
 * time own a stripe: they add with a plain load and store (a locked add
 * still cost 5% of a 100-peer convergence profile). Others share the last
 * MEM_STRIPES - MEM_OWNED stripes, which only ever see atomic adds. A
 * thread gives its stripe back when it exits (a worker pool that a
 * configure shrinks and grows again, a benchmark's threads of each
 * sample), so the next thread owns it: the counts stay in it, and the
 * release and the claim order the last owner's stores before the next
 * one's loads. Sixty-four: a daemon with `threads 16` runs 18 threads or
 * more (the main loop's, rcu-free's, the workers), and with 16 owned
 * stripes its last workers shared theirs; `show memory` reads all of them
 * (9 kB), rarely.
 */

#define MEM_OWNED 64            /* the mask below is a u64 */
#define MEM_STRIPES 68
struct mem_stripe {
  _Atomic s64 effective[MEM_CLASS_MAX], overhead[MEM_CLASS_MAX];
} __attribute__((aligned(64)));

static struct mem_stripe mem_stripes[MEM_STRIPES];
static _Atomic uint mem_stripe_next;
static _Atomic u64 mem_stripe_taken;    /* owned stripes with a thread now */
static pthread_key_t mem_stripe_key;
static pthread_once_t mem_stripe_once = PTHREAD_ONCE_INIT;
static __thread int mem_stripe_id = -1;
static __thread int mem_stripe_owned;

static int
mem_shared_stripe(void)
{
  uint n = atomic_fetch_add_explicit(&mem_stripe_next, 1, memory_order_relaxed);
  return (int) (MEM_OWNED + n % (MEM_STRIPES - MEM_OWNED));
}

/* At thread exit: the stripe goes back. Whatever the thread counts after
 * this (other keys' destructors) goes to a shared stripe. */
static void
mem_stripe_give(void *arg)
{
  u64 bit = 1ULL << ((uint) (uintptr_t) arg - 1);
  mem_stripe_id = mem_shared_stripe();
  mem_stripe_owned = 0;
  atomic_fetch_and_explicit(&mem_stripe_taken, ~bit, memory_order_release);
}

static void
mem_stripe_init(void)
{
  if (pthread_key_create(&mem_stripe_key, mem_stripe_give))
    abort();
}

static struct mem_stripe *
mem_my_stripe(void)
{
  if (mem_stripe_id < 0) {
    pthread_once(&mem_stripe_once, mem_stripe_init);
    u64 taken = atomic_load_explicit(&mem_stripe_taken, memory_order_relaxed);
    while (~taken) {
      uint id = (uint) __builtin_ctzll(~taken);
      if (atomic_compare_exchange_weak_explicit(&mem_stripe_taken, &taken, taken | (1ULL << id),
                                                memory_order_acquire, memory_order_relaxed)) {
        mem_stripe_id = (int) id;
        mem_stripe_owned = 1;
        pthread_setspecific(mem_stripe_key, (void *) (uintptr_t) (id + 1));
        return &mem_stripes[id];
      }
    }
    mem_stripe_id = mem_shared_stripe();
  }
  return &mem_stripes[mem_stripe_id];
}

int
mem_stripe_mine(void)
{
  mem_my_stripe();
  return mem_stripe_owned;
}

static inline void
mem_add(_Atomic s64 *x, s64 d)
{
  if (mem_stripe_owned)
    atomic_store_explicit(x, atomic_load_explicit(x, memory_order_relaxed) + d, memory_order_relaxed);
  else
    atomic_fetch_add_explicit(x, d, memory_order_relaxed);
}

void
mem_account(enum mem_class cls, s64 effective, s64 overhead)
{
  ASSERT_DIE((uint) cls < MEM_CLASS_MAX);
  struct mem_stripe *st = mem_my_stripe();
  if (effective)
    mem_add(&st->effective[cls], effective);
  if (overhead)
    mem_add(&st->overhead[cls], overhead);
}

void
mem_class_usage(enum mem_class cls, struct mem_usage *u)
{
  ASSERT_DIE((uint) cls < MEM_CLASS_MAX);
  s64 e = 0, o = 0;
  for (uint i = 0; i < MEM_STRIPES; i++) {
    e += atomic_load_explicit(&mem_stripes[i].effective[cls], memory_order_relaxed);
    o += atomic_load_explicit(&mem_stripes[i].overhead[cls], memory_order_relaxed);
  }
  /* Concurrent updates are not ordered against each other; never show a
   * transiently negative number. */
  u->effective = e > 0 ? (size_t) e : 0;
  u->overhead = o > 0 ? (size_t) o : 0;
}

static void *
xmalloc(size_t size)
{
  void *p = malloc(size ? size : 1);
  if (!p)
    die("Unable to allocate %zu bytes of memory", size);
  return p;
}

void *
mem_alloc_shared(enum mem_class cls, size_t size)
{
  void *m = xmalloc(size);
  mem_account(cls, size, 0);
  return m;
}

void
mem_free_shared(enum mem_class cls, void *m, size_t size)
{
  if (!m)
    return;
  free(m);
  mem_account(cls, -(s64) size, 0);
}

/*
 * Pools
 */

struct pool {
  struct resource r;
  struct lnode inside;      /* struct resource.n of what the pool owns */
  enum mem_class cls;
  char name[];              /* copied: names often come from a config */
};

static pool *res_root;

static void pool_free(struct resource *r);
static void pool_dump(struct resource *r, int indent);
static void pool_memsize(struct resource *r, struct mem_usage *u);

static const struct resclass pool_class = {
  .name = "Pool",
  .size = sizeof(pool),
  .free = pool_free,
  .dump = pool_dump,
  .memsize = pool_memsize,
};

static inline pool *res_pool(struct resource *r) { return r->class == &pool_class ? (pool *) r : NULL; }

/* The class a resource's own usage is counted in. */
static enum mem_class
res_mem_class(struct resource *r)
{
  pool *p = res_pool(r);
  return p ? p->cls : r->parent->cls;
}

/* Own (non-recursive for pools) usage of one resource. */
static void
res_usage(struct resource *r, struct mem_usage *u)
{
  if (r->class->memsize)
    r->class->memsize(r, u);
  else
    *u = (struct mem_usage) { .effective = 0, .overhead = r->class->size };
}

static inline void
res_account(struct resource *r, const struct mem_usage *u, int sign)
{
  mem_account(res_mem_class(r), sign * (s64) u->effective, sign * (s64) u->overhead);
}

/* Allocate size bytes (at least c->size) zeroed, link it into p. The caller
 * accounts for it. */
static struct resource *
res_new(pool *p, const struct resclass *c, size_t size)
{
  struct resource *r = xmalloc(size);
  memset(r, 0, size);
  r->class = c;
  r->parent = p;
  if (p)
    list_add_tail(&p->inside, &r->n);
  else
    list_init(&r->n);
  return r;
}

static pool *
pool_new(pool *parent, enum mem_class cls, const char *name)
{
  ASSERT_DIE((uint) cls < MEM_CLASS_MAX);
  if (!name)
    name = "?";
  size_t len = strlen(name);
  pool *p = (pool *) res_new(parent, &pool_class, sizeof(pool) + len + 1);
  list_init(&p->inside);
  p->cls = cls;
  memcpy(p->name, name, len + 1);
  mem_account(cls, 0, sizeof(pool) + len + 1);
  return p;
}

void
resource_init(void)
{
  if (!res_root)
    res_root = pool_new(NULL, MEM_PROTOCOLS, "Root");
}

pool *
root_pool(void)
{
  if (!res_root)
    resource_init();
  return res_root;
}

pool *
rp_new(pool *parent, enum mem_class cls, const char *name)
{
  return pool_new(parent ? parent : root_pool(), cls, name);
}

pool *
rp_new_child(pool *parent, const char *name)
{
  parent = parent ? parent : root_pool();
  return pool_new(parent, parent->cls, name);
}

const char *rp_name(pool *p) { return p->name; }
enum mem_class rp_class(pool *p) { return p->cls; }

/* Unlink, free what it holds, unaccount, free the object. */
static void
res_release(struct resource *r)
{
  struct mem_usage u;
  res_usage(r, &u);
  enum mem_class cls = res_mem_class(r);

  list_del(&r->n);
  if (r->class->free)
    r->class->free(r);
  mem_account(cls, -(s64) u.effective, -(s64) u.overhead);
  free(r);
}

static void
pool_free(struct resource *r)
{
  pool *p = (pool *) r;

  /* Newest first: later resources may refer to earlier ones */
  while (!list_empty(&p->inside))
    res_release(container_of(p->inside.prev, struct resource, n));
}

static void
pool_memsize(struct resource *r, struct mem_usage *u)
{
  pool *p = (pool *) r;
  *u = (struct mem_usage) { .effective = 0, .overhead = sizeof(pool) + strlen(p->name) + 1 };
}

void
rp_memsize(pool *p, struct mem_usage *u)
{
  pool_memsize(&p->r, u);
  LIST_WALK_ENTRY(r, &p->inside, struct resource, n)
  {
    struct mem_usage sub;
    pool *sp = res_pool(r);
    if (sp)
      rp_memsize(sp, &sub);
    else
      res_usage(r, &sub);
    u->effective += sub.effective;
    u->overhead += sub.overhead;
  }
}

static void
pool_dump(struct resource *r, int indent)
{
  pool *p = (pool *) r;
  struct mem_usage u;
  rp_memsize(p, &u);
  debug_msg("%*sPool %s (%s): %zu B effective, %zu B overhead",
            indent, "", p->name, mem_class_names[p->cls], u.effective, u.overhead);
  LIST_WALK_ENTRY(c, &p->inside, struct resource, n)
  {
    if (c->class->dump)
      c->class->dump(c, indent + 3);
    else
      debug_msg("%*s%s %p", indent + 3, "", c->class->name, (void *) c);
  }
}

void rdump(pool *p, int indent) { pool_dump(&p->r, indent); }

void *
ralloc(pool *p, const struct resclass *c)
{
  ASSERT_DIE(c->size >= sizeof(struct resource));
  struct resource *r = res_new(p, c, c->size);
  mem_account(p->cls, 0, c->size);
  return r;
}

void
rfree(void *res)
{
  struct resource *r = res;
  if (!r)
    return;
  if (unlikely(r == &res_root->r))
    bug("Attempt to free the root pool");
  res_release(r);
}

void
rmove(void *res, pool *p)
{
  struct resource *r = res;

  /* Moving a pool below itself would cut the subtree off the tree */
  for (pool *a = p; a; a = a->r.parent)
    if (unlikely(&a->r == r))
      bug("Attempt to move pool %s into itself", ((pool *) r)->name);

  struct mem_usage u;
  res_usage(r, &u);
  res_account(r, &u, -1);

  list_del(&r->n);
  r->parent = p;
  list_add_tail(&p->inside, &r->n);

  res_account(r, &u, +1);
}

/*
 * Memory blocks
 */

struct mblock {
  struct resource r;
  size_t size;
  _Alignas(16) u8 data[];
};

static void
mb_memsize(struct resource *r, struct mem_usage *u)
{
  struct mblock *b = (struct mblock *) r;
  *u = (struct mem_usage) { .effective = b->size, .overhead = sizeof(struct mblock) };
}

static void
mb_dump(struct resource *r, int indent)
{
  struct mblock *b = (struct mblock *) r;
  debug_msg("%*sBlock %p: %zu B", indent, "", (void *) b->data, b->size);
}

static const struct resclass mb_class = {
  .name = "Memory block",
  .size = sizeof(struct mblock),
  .free = NULL,
  .dump = mb_dump,
  .memsize = mb_memsize,
};

static inline struct mblock *mb_of(void *m) { return container_of(m, struct mblock, data); }

void *
mb_alloc(pool *p, size_t size)
{
  struct mblock *b = xmalloc(sizeof(struct mblock) + size);
  b->r.class = &mb_class;
  b->r.parent = p;
  list_add_tail(&p->inside, &b->r.n);
  b->size = size;
  mem_account(p->cls, size, sizeof(struct mblock));
  return b->data;
}

void *
mb_allocz(pool *p, size_t size)
{
  void *m = mb_alloc(p, size);
  memset(m, 0, size);
  return m;
}

void *
mb_realloc(void *m, size_t size)
{
  if (unlikely(!m))
    bug("mb_realloc() of NULL: no pool to allocate from");

  struct mblock *b = mb_of(m);
  size_t old = b->size;
  enum mem_class cls = b->r.parent->cls;

  struct mblock *nb = realloc(b, sizeof(struct mblock) + size);
  if (!nb)
    die("Unable to allocate %zu bytes of memory", size);

  /* The block moved: its own links were copied, the neighbours' were not */
  nb->r.n.prev->next = &nb->r.n;
  nb->r.n.next->prev = &nb->r.n;
  nb->size = size;
  mem_account(cls, (s64) size - (s64) old, 0);
  return nb->data;
}

void
mb_free(void *m)
{
  if (m)
    rfree(&mb_of(m)->r);
}

char *
mb_strdup(pool *p, const char *s)
{
  size_t len = strlen(s) + 1;
  char *d = mb_alloc(p, len);
  memcpy(d, s, len);
  return d;
}

/*
 * Linear pools
 *
 * Chunks are kept in allocation order, the last one being the one we bump
 * allocate from. A request larger than a standard chunk gets a chunk of its
 * own, which becomes the last one (the tail of the previous chunk is left
 * unused). Because chunk order is allocation order, a save point is just
 * (last chunk, bytes used in it), and a restore drops every chunk after it.
 * Dropped standard chunks are kept as spares for reuse until lp_flush(),
 * which hands them to the thread's chunk cache: a linpool at rest holds
 * none (each BGP session and update group kept a 4 kB spare, 800 kB at
 * a hundred peers), and one flushed per route gets its chunk back from
 * the cache without malloc.
 */

#define LP_ALIGN 8
#define LP_CHUNK_ALLOC 4064   /* with malloc's own header, about one page */

struct lp_chunk {
  struct lp_chunk *next;
  size_t size;              /* payload bytes */
  size_t used;              /* valid once the chunk is no longer the last */
  _Alignas(16) u8 data[];
};

#define LP_CHUNK_PAYLOAD (LP_CHUNK_ALLOC - sizeof(struct lp_chunk))

struct linpool {
  struct resource r;
  struct lp_chunk *first, *last;   /* in use, in allocation order */
  struct lp_chunk *spare;          /* standard chunks for reuse */
  u8 *ptr, *end;                   /* free space in last */
  size_t effective;                /* bytes handed out (aligned) */
  size_t chunk_mem;                /* malloc'd for chunks, spares included */
};

static inline void
lp_account(linpool *lp, s64 effective, s64 overhead)
{
  mem_account(lp->r.parent->cls, effective, overhead);
}

static inline size_t chunk_alloc_size(struct lp_chunk *c) { return sizeof(struct lp_chunk) + c->size; }

/* A chunk's memory joins (sign 1) or leaves (-1) what lp counts. */
static void
lp_chunk_count(linpool *lp, struct lp_chunk *c, int sign)
{
  s64 sz = sign * (s64) chunk_alloc_size(c);
  lp->chunk_mem += (size_t) sz;
  lp_account(lp, 0, sz);
}

static struct lp_chunk *
lp_chunk_new(size_t payload)
{
  struct lp_chunk *c = xmalloc(sizeof(struct lp_chunk) + payload);
  c->size = payload;
  mem_poison(c->data, payload);
  return c;
}

static void
lp_chunk_free(linpool *lp, struct lp_chunk *c)
{
  lp_chunk_count(lp, c, -1);
  free(c);
}

/* The thread's standard chunks between linpools: counted as Standby
 * memory, freed when the thread leaves RCU. */
#define LP_CACHE_MAX 8
static __thread struct lp_chunk *lp_cache;
static __thread uint lp_cache_count;

static void
lp_cache_release(void)
{
  for (struct lp_chunk *c = lp_cache, *nx; c; c = nx) {
    nx = c->next;
    mem_account(MEM_STANDBY, 0, -(s64) chunk_alloc_size(c));
    free(c);
  }
  lp_cache = NULL;
  lp_cache_count = 0;
}

static pthread_once_t lp_cache_once = PTHREAD_ONCE_INIT;
static void lp_cache_hook(void) { rcu_thread_at_exit(lp_cache_release); }

/* A spare leaves lp for the cache, or for good when the cache is full. */
static void
lp_chunk_cache(linpool *lp, struct lp_chunk *c)
{
  if (lp_cache_count >= LP_CACHE_MAX) {
    lp_chunk_free(lp, c);
    return;
  }
  lp_chunk_count(lp, c, -1);
  pthread_once(&lp_cache_once, lp_cache_hook);
  mem_account(MEM_STANDBY, 0, (s64) chunk_alloc_size(c));
  c->next = lp_cache;
  lp_cache = c;
  lp_cache_count++;
}

/* A standard chunk for lp: a spare of its own, the cache's, or new. */
static struct lp_chunk *
lp_chunk_take(linpool *lp)
{
  struct lp_chunk *c = lp->spare;
  if (c) {
    lp->spare = c->next;
    return c;
  }
  if ((c = lp_cache)) {
    lp_cache = c->next;
    lp_cache_count--;
    mem_account(MEM_STANDBY, 0, -(s64) chunk_alloc_size(c));
  } else
    c = lp_chunk_new(LP_CHUNK_PAYLOAD);
  lp_chunk_count(lp, c, 1);
  return c;
}

/* A chunk leaves use: standard ones become spares, big ones are freed. */
static void
lp_chunk_drop(linpool *lp, struct lp_chunk *c)
{
  if (c->size != LP_CHUNK_PAYLOAD)
  {
    lp_chunk_free(lp, c);
    return;
  }
  mem_poison(c->data, c->size);
  c->next = lp->spare;
  lp->spare = c;
}

static struct lp_chunk *
lp_chunk_get(linpool *lp, size_t need)
{
  struct lp_chunk *c;
  if (need <= LP_CHUNK_PAYLOAD)
    c = lp_chunk_take(lp);
  else
  {
    c = lp_chunk_new(need);
    lp_chunk_count(lp, c, 1);
  }

  if (lp->last)
  {
    lp->last->used = lp->ptr - lp->last->data;
    lp->last->next = c;
  }
  else
    lp->first = c;
  c->next = NULL;
  c->used = 0;
  lp->last = c;
  lp->ptr = c->data;
  lp->end = c->data + c->size;
  return c;
}

static void
lp_free(struct resource *r)
{
  linpool *lp = (linpool *) r;
  for (struct lp_chunk *c = lp->first, *nx; c; c = nx)
  {
    nx = c->next;
    free(c);
  }
  for (struct lp_chunk *c = lp->spare, *nx; c; c = nx)
  {
    nx = c->next;
    free(c);
  }
}

static void
lp_memsize(struct resource *r, struct mem_usage *u)
{
  linpool *lp = (linpool *) r;
  *u = (struct mem_usage) {
    .effective = lp->effective,
    .overhead = sizeof(linpool) + lp->chunk_mem - lp->effective,
  };
}

static void
lp_dump(struct resource *r, int indent)
{
  linpool *lp = (linpool *) r;
  uint used = 0, spare = 0;
  for (struct lp_chunk *c = lp->first; c; c = c->next)
    used++;
  for (struct lp_chunk *c = lp->spare; c; c = c->next)
    spare++;
  debug_msg("%*sLinpool %p: %zu B used, %u chunks, %u spare", indent, "", (void *) lp,
            lp->effective, used, spare);
}

static const struct resclass lp_class = {
  .name = "Linpool",
  .size = sizeof(linpool),
  .free = lp_free,
  .dump = lp_dump,
  .memsize = lp_memsize,
};

linpool *
lp_new(pool *p)
{
  linpool *lp = (linpool *) res_new(p, &lp_class, sizeof(linpool));
  mem_account(p->cls, 0, sizeof(linpool));
  return lp;
}

void *
lp_alloc(linpool *lp, size_t size)
{
  size_t need = ALIGN_UP(size ? size : 1, LP_ALIGN);
  if (!lp->last || (size_t) (lp->end - lp->ptr) < need)
    lp_chunk_get(lp, need);

  void *m = lp->ptr;
  lp->ptr += need;
  lp->effective += need;
  lp_account(lp, need, -(s64) need);
  mem_unpoison(m, size);
  return m;
}

void *
lp_allocz(linpool *lp, size_t size)
{
  void *m = lp_alloc(lp, size);
  memset(m, 0, size);
  return m;
}

char *
lp_strdup(linpool *lp, const char *s)
{
  size_t len = strlen(s) + 1;
  char *d = lp_alloc(lp, len);
  memcpy(d, s, len);
  return d;
}

char *
lp_sprintf(linpool *lp, const char *fmt, ...)
{
  char tmp[256];
  va_list args, again;
  int saved_errno = errno;   /* for %m in the second pass */

  va_start(args, fmt);
  va_copy(again, args);
  int len = bvsnprintf(tmp, sizeof(tmp), fmt, args);
  va_end(args);

  char *out = lp_alloc(lp, len + 1);
  if ((size_t) len < sizeof(tmp))
    memcpy(out, tmp, len + 1);
  else
  {
    errno = saved_errno;
    bvsnprintf(out, len + 1, fmt, again);
  }
  va_end(again);
  return out;
}

void
lp_save(linpool *lp, struct lp_state *s)
{
  s->chunk = lp->last;
  s->used = lp->last ? (size_t) (lp->ptr - lp->last->data) : 0;
}

void
lp_restore(linpool *lp, struct lp_state *s)
{
  struct lp_chunk *keep = s->chunk;
  size_t dropped = 0;

  for (struct lp_chunk *c = keep ? keep->next : lp->first, *nx; c; c = nx)
  {
    nx = c->next;
    dropped += (c == lp->last) ? (size_t) (lp->ptr - c->data) : c->used;
    lp_chunk_drop(lp, c);
  }

  if (keep)
  {
    size_t now_used = (keep == lp->last) ? (size_t) (lp->ptr - keep->data) : keep->used;
    ASSERT_DIE(s->used <= now_used);
    dropped += now_used - s->used;
    keep->next = NULL;
    lp->last = keep;
    lp->ptr = keep->data + s->used;
    lp->end = keep->data + keep->size;
    mem_poison(lp->ptr, lp->end - lp->ptr);
  }
  else
  {
    lp->first = lp->last = NULL;
    lp->ptr = lp->end = NULL;
  }

  lp->effective -= dropped;
  lp_account(lp, -(s64) dropped, dropped);
}

size_t
lp_used(const linpool *lp)
{
  return lp->effective;
}

void
lp_flush(linpool *lp)
{
  /* Nothing allocated since the last flush (filters that only read, run
   * once per route): nothing to do. */
  if (!lp->first && !lp->spare)
    return;
  struct lp_state empty = { NULL, 0 };
  lp_restore(lp, &empty);
  for (struct lp_chunk *c = lp->spare, *nx; c; c = nx)
  {
    nx = c->next;
    lp_chunk_cache(lp, c);
  }
  lp->spare = NULL;
}

/*
 * Slabs
 *
 * Objects live in pages of page_size bytes, allocated aligned to their
 * size, so sl_free() finds an object's page by masking its address. Each
 * page has its own free list; pages with free slots are on `partial`, full
 * ones on `full`. One completely free page is cached in `empty`, more go
 * back to a page pool per page size (lib/page_pool.h): the pages of a
 * burst (a peer's pending exports while it converges) leave memory
 * afterwards instead of staying as holes in a malloc arena.
 */

#define SL_MIN_PAGE 4096
#define SL_MIN_OBJS 4

struct sl_page {
  struct lnode n;
  slab *slab;
  void *free;               /* free list through the first word of objects */
  uint used;
  _Alignas(16) u8 data[];
};

struct slab {
  struct resource r;
  size_t size;              /* as asked */
  size_t obj_size;          /* rounded: holds a pointer, keeps alignment */
  size_t page_size;
  struct page_pool *page_pool;  /* of page_size (shared by all slabs of it) */
  uint objs_per_page;
  struct lnode partial, full;
  struct sl_page *empty;
  size_t pages;             /* including the empty one */
  size_t live;
  s64 unaccounted;          /* bytes that went from overhead to effective, not yet counted */
};

static inline void
sl_account(slab *s, s64 effective, s64 overhead)
{
  mem_account(s->r.parent->cls, effective, overhead);
}

/* An allocation or a free moves bytes between the class's overhead and
 * effective use, not its total: counted SL_ACCOUNT_BATCH bytes at a time
 * (a call per object was 5% of a route server's convergence profile), so
 * `show memory` splits a slab's pages up to that much off, never their
 * sum; sl_memsize() counts the rest. */
#define SL_ACCOUNT_BATCH 4096

static void
sl_account_flush(slab *s)
{
  sl_account(s, s->unaccounted, -s->unaccounted);
  s->unaccounted = 0;
}

static inline void
sl_account_move(slab *s, s64 bytes)
{
  s->unaccounted += bytes;
  if (s->unaccounted >= SL_ACCOUNT_BATCH || s->unaccounted <= -SL_ACCOUNT_BATCH)
    sl_account_flush(s);
}

#define SL_PAGE_POOLS 16            /* page sizes SL_MIN_PAGE << 0..15 */
#define SL_PAGE_RESERVE (1 << 20)   /* free pages kept resident, per size */
static struct page_pool *sl_page_pools[SL_PAGE_POOLS];
static pthread_mutex_t sl_page_pools_lock = PTHREAD_MUTEX_INITIALIZER;

static struct page_pool *
sl_page_pool(size_t page_size)
{
  uint i = (uint) __builtin_ctzl(page_size / SL_MIN_PAGE);
  ASSERT_DIE(i < SL_PAGE_POOLS && page_size == (size_t) SL_MIN_PAGE << i);
  struct page_pool *pp = __atomic_load_n(&sl_page_pools[i], __ATOMIC_ACQUIRE);
  if (!pp) {
    pthread_mutex_lock(&sl_page_pools_lock);
    pp = sl_page_pools[i];
    if (!pp) {
      pp = page_pool_new(page_size, SL_PAGE_RESERVE);
      __atomic_store_n(&sl_page_pools[i], pp, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&sl_page_pools_lock);
  }
  return pp;
}

static struct sl_page *
sl_page_new(slab *s)
{
  /* Dirty: every object's first word is written below, the rest by the
   * caller (sl_allocz zeroes its own) */
  struct sl_page *pg = page_pool_alloc_dirty(s->page_pool);

  pg->slab = s;
  pg->used = 0;
  pg->free = NULL;
  /* Link objects so that the first allocation gets the lowest address */
  for (uint i = s->objs_per_page; i--;)
  {
    void **o = (void **) (pg->data + i * s->obj_size);
    *o = pg->free;
    pg->free = o;
  }
  mem_poison(pg->data, s->objs_per_page * s->obj_size);

  s->pages++;
  sl_account(s, 0, s->page_size);
  return pg;
}

/* Back to the page pool, unaccounted (the caller or the slab's end does that). */
static void
sl_page_release(slab *s, struct sl_page *pg)
{
  mem_unpoison(pg->data, s->objs_per_page * s->obj_size);
  page_pool_free(s->page_pool, pg);
}

static void
sl_page_free(slab *s, struct sl_page *pg)
{
  s->pages--;
  sl_account(s, 0, -(s64) s->page_size);
  sl_page_release(s, pg);
}

static void
sl_free_pages(slab *s, struct lnode *list)
{
  LIST_WALK_SAFE(n, list)
    sl_page_release(s, container_of(n, struct sl_page, n));
}

static void
sl_free_all(struct resource *r)
{
  slab *s = (slab *) r;
  sl_free_pages(s, &s->partial);
  sl_free_pages(s, &s->full);
  if (s->empty)
    sl_page_release(s, s->empty);
}

/* Also brings the class counters to what it says: res_release() and
 * rmove() take that away from them (they, and rp_memsize(), run where
 * the slab is used). */
static void
sl_memsize(struct resource *r, struct mem_usage *u)
{
  slab *s = (slab *) r;
  sl_account_flush(s);
  size_t eff = s->live * s->size;
  *u = (struct mem_usage) {
    .effective = eff,
    .overhead = sizeof(slab) + s->pages * s->page_size - eff,
  };
}

static void
sl_dump(struct resource *r, int indent)
{
  slab *s = (slab *) r;
  debug_msg("%*sSlab %p: %zu B objects, %zu live, %zu pages of %zu B", indent, "",
            (void *) s, s->size, s->live, s->pages, s->page_size);
}

static const struct resclass sl_class = {
  .name = "Slab",
  .size = sizeof(slab),
  .free = sl_free_all,
  .dump = sl_dump,
  .memsize = sl_memsize,
};

slab *
sl_new(pool *p, size_t size)
{
  slab *s = (slab *) res_new(p, &sl_class, sizeof(slab));
  s->size = size;
  /* Rounding to 8 keeps natural alignment: a type needing 16 has a size
   * that is a multiple of 16, and pages are 16-aligned. */
  s->obj_size = ALIGN_UP(MAX(size, sizeof(void *)), 8);
  s->page_size = SL_MIN_PAGE;
  while ((s->page_size - sizeof(struct sl_page)) / s->obj_size < SL_MIN_OBJS)
    s->page_size *= 2;
  s->objs_per_page = (s->page_size - sizeof(struct sl_page)) / s->obj_size;
  s->page_pool = sl_page_pool(s->page_size);
  list_init(&s->partial);
  list_init(&s->full);
  mem_account(p->cls, 0, sizeof(slab));
  return s;
}

void *
sl_alloc(slab *s)
{
  struct sl_page *pg;
  if (!list_empty(&s->partial))
    pg = container_of(s->partial.next, struct sl_page, n);
  else
  {
    pg = s->empty ? s->empty : sl_page_new(s);
    s->empty = NULL;
    list_add_head(&s->partial, &pg->n);
  }

  void **o = pg->free;
  mem_unpoison(o, s->obj_size);
  pg->free = *o;
  if (++pg->used == s->objs_per_page)
  {
    list_del(&pg->n);
    list_add_head(&s->full, &pg->n);
  }
  /* Keep the rounding slack poisoned to catch small overruns */
  if (s->obj_size > s->size)
    mem_poison((u8 *) o + s->size, s->obj_size - s->size);

  s->live++;
  sl_account_move(s, (s64) s->size);
  return o;
}

void *
sl_allocz(slab *s)
{
  void *o = sl_alloc(s);
  memset(o, 0, s->size);
  return o;
}

void
sl_free(slab *s, void *obj)
{
  if (!obj)
    return;

  struct sl_page *pg = (struct sl_page *) ((uintptr_t) obj & ~(uintptr_t) (s->page_size - 1));
  ASSERT_DIE(pg->slab == s);
  if (unlikely(mem_is_poisoned(obj)))
    bug("sl_free(): object %p freed twice", obj);

  mem_unpoison(obj, s->obj_size);
  *(void **) obj = pg->free;
  pg->free = obj;
  mem_poison(obj, s->obj_size);

  if (pg->used-- == s->objs_per_page)
  {
    list_del(&pg->n);
    list_add_head(&s->partial, &pg->n);
  }
  s->live--;
  sl_account_move(s, -(s64) s->size);

  if (!pg->used)
  {
    list_del(&pg->n);
    /* One free page stays for the next object while others live; a slab
     * left empty keeps none: a route server's hundred idle update groups
     * held 800 kB so. The page pool keeps its own reserve for the next
     * burst, shared by all slabs. */
    if (!s->empty && s->live)
      s->empty = pg;
    else
      sl_page_free(s, pg);
    if (!s->live && s->empty)
    {
      sl_page_free(s, s->empty);
      s->empty = NULL;
    }
  }
}
