/*
 * Shared slabs (see slab_shared.h).
 *
 * Free objects are never written to. A thread's magazine is an array of
 * pointers to them; behind the magazines, a chunk's header keeps a bit per
 * object slot, set while the slot is free in the slab. Magazines trade
 * SHSLAB_BATCH objects at once with the bitmaps under the slab's mutex. A
 * free list linked through the objects made every allocation wait for the
 * object before it to come from memory (a million freed routes are cold),
 * one cache miss after another; arrays of pointers to free objects (the
 * design before session 25) took 8 bytes per free object, 34 MB while 10
 * peers' 3M routes went, which was most of the memory peak then.
 *
 * A thread's magazine holds up to 2 * SHSLAB_BATCH objects: it refills one
 * batch when empty and hands one back when full, so a thread that
 * alternates allocations and frees near either bound does not bounce
 * batches through the mutex on every call. A thread's magazines go back to
 * their slabs when it exits.
 *
 * Chunks are aligned to their size, so an object finds its chunk's header
 * by masking its address. A refill takes the lowest free slots of the
 * first chunks on the slab's list: chunks that had objects freed go to the
 * list's head, a fresh chunk to its tail, so freed slots are reused before
 * untouched pages are faulted in, and a run of allocations walks a chunk
 * upwards.
 *
 * Giving pages back: a page whose slots, and the one reaching in from the
 * page before, are all free is empty; shslab_trim() gives empty pages back
 * to the kernel (madvise). The slots stay free in the bitmap: a released
 * page is touched again only when one of its objects is handed out, and
 * reads as zeros then, which an allocation (not zeroed) allows. The release
 * happens under the mutex, so no thread can take one of the page's objects
 * meanwhile. A fresh chunk's object pages count as released until touched.
 *
 * Accounting: the header's pages and every touched page count as overhead
 * of the slab's class; an allocation moves the object's size to effective
 * and a free moves it back, so free slots on resident pages show as
 * overhead.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/slab_shared.h"
#include "lib/log.h"


#define SHSLAB_MAX 16               /* slabs in the process */
#define SHSLAB_BATCH 64             /* objects traded at once */
#define SHSLAB_AHEAD 8              /* allocations a prefetch runs ahead */
#define SHSLAB_CHUNK (1U << 20)     /* mapped at once, aligned to its size */
#define SHSLAB_PAGES (SHSLAB_CHUNK / 4096)  /* released bits, enough for the smallest page */
#define SHSLAB_TRIM_KEEP (4U << 20) /* the daemon's: free bytes resident before a trim bothers */
#define SHSLAB_TRIM_MAX 64          /* chunks looked at per trim: bounds the mutex's hold */

/* The links of a chunk on its slab's circular list of chunks with free slots. */
struct shslab_link {
  struct shslab_link *next, *prev;
};

/* At the start of each chunk; under the slab's mutex. */
struct shslab_chunk {
  struct shslab_link link;          /* first: a link is its chunk */
  struct shslab_chunk *next_dirty;
  uint nfree;                       /* slots free in the slab */
  uint hint;                        /* no free slot in the map's words below */
  u8 dirty;                         /* on the slab's list: slots freed since a trim */
  u64 released[SHSLAB_PAGES / 64];  /* object pages not resident */
  u64 map[];                        /* a bit per slot: free in the slab */
};

struct shslab {
  pthread_mutex_t lock;
  enum mem_class cls;
  uint size;
  uint index;                       /* of the magazines in every thread */
  uint head;                        /* bytes before a chunk's first slot */
  uint head_pages;                  /* pages never released: the header's */
  uint slots;                       /* per chunk */
  u64 recip;                        /* 2^40 / size, rounded up: slot of an offset */
  struct shslab_link avail;         /* under lock: chunks with free slots */
  struct shslab_chunk *dirty;       /* under lock: chunks with slots freed since a trim */
  size_t free_slots;                /* under lock: in all chunks */
  size_t released;                  /* under lock: pages given back or never touched */
};

/* Owned by its thread. */
struct shslab_mag {
  uint count;
  void *obj[2 * SHSLAB_BATCH];
};

static struct shslab *shslab_all[SHSLAB_MAX];
static uint shslab_count;           /* atomic; slabs are only added */
static pthread_mutex_t shslab_new_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t shslab_key;
static pthread_once_t shslab_once = PTHREAD_ONCE_INIT;
static size_t shslab_page;          /* the system's; the pages of a chunk's header stay */
static uint shslab_page_shift;

static void shslab_thread_exit(void *unused);

static void
shslab_init_key(void)
{
  if (pthread_key_create(&shslab_key, shslab_thread_exit))
    die("pthread_key_create failed");
  shslab_page = (size_t) sysconf(_SC_PAGESIZE);
  shslab_page_shift = (uint) __builtin_ctzl(shslab_page);
  if (shslab_page < 4096 || shslab_page > SHSLAB_CHUNK / 2 || (shslab_page & (shslab_page - 1)))
    die("Unsupported page size %zu", shslab_page);
}

struct shslab *
shslab_new(enum mem_class cls, size_t size)
{
  pthread_once(&shslab_once, shslab_init_key);
  if (size < sizeof(void *))
    size = sizeof(void *);
  struct shslab *s = calloc(1, sizeof(*s));
  if (!s)
    die("Out of memory");
  pthread_mutex_init(&s->lock, NULL);
  s->cls = cls;
  s->size = (uint) ((size + 7) & ~(size_t) 7);
  /* The header's map covers at most CHUNK / size slots. */
  size_t words = (SHSLAB_CHUNK / s->size + 63) / 64;
  s->head = (uint) ((sizeof(struct shslab_chunk) + words * 8 + 63) & ~(size_t) 63);
  s->head_pages = (uint) ((s->head + shslab_page - 1) >> shslab_page_shift);
  s->slots = (SHSLAB_CHUNK - s->head) / s->size;
  s->recip = ((1ULL << 40) + s->size - 1) / s->size;
  s->avail.next = s->avail.prev = &s->avail;
  pthread_mutex_lock(&shslab_new_lock);
  if (shslab_count >= SHSLAB_MAX)
    bug("Too many shared slabs");
  s->index = shslab_count;
  shslab_all[s->index] = s;
  __atomic_store_n(&shslab_count, s->index + 1, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&shslab_new_lock);
  return s;
}

size_t
shslab_size(const struct shslab *s)
{
  return s->size;
}

#ifdef BIRD_SANITIZED

void *
shslab_alloc(struct shslab *s)
{
  return mem_alloc_shared(s->cls, s->size);
}

void
shslab_free(struct shslab *s, void *obj)
{
  mem_free_shared(s->cls, obj, s->size);
}

static void shslab_thread_exit(void *unused UNUSED) {}

size_t shslab_trim(struct shslab *s UNUSED, size_t keep UNUSED) { return 0; }

#else

static __thread struct shslab_mag shslab_mags[SHSLAB_MAX];
static __thread int shslab_registered;

static void
shslab_register_thread(void)
{
  if (!shslab_registered) {
    shslab_registered = 1;
    pthread_setspecific(shslab_key, shslab_mags);  /* any non-NULL value arms the destructor */
  }
}

static struct shslab_chunk *
shslab_chunk_of(void *obj)
{
  return (struct shslab_chunk *) ((uintptr_t) obj & ~(uintptr_t) (SHSLAB_CHUNK - 1));
}

/* Exact for offsets below a chunk: the rounding error stays under 1/size. */
static uint
shslab_slot_of(struct shslab *s, struct shslab_chunk *c, void *obj)
{
  u64 off = (u64) ((uintptr_t) obj - (uintptr_t) c - s->head);
  return (uint) ((off * s->recip) >> 40);
}

static void *
shslab_slot_obj(struct shslab *s, struct shslab_chunk *c, uint i)
{
  return (char *) c + s->head + (size_t) i * s->size;
}

static void
shslab_link_at(struct shslab_link *after, struct shslab_link *l)
{
  l->prev = after;
  l->next = after->next;
  after->next->prev = l;
  after->next = l;
}

static void
shslab_unlink(struct shslab_link *l)
{
  l->prev->next = l->next;
  l->next->prev = l->prev;
}

static int
shslab_released(struct shslab_chunk *c, uint p)
{
  return (c->released[p / 64] >> (p % 64)) & 1;
}

/* Under lock: a fresh chunk, aligned to its size (mapped twice as large,
 * the rest unmapped), at the tail of the list: its pages are faulted in
 * only once the freed slots elsewhere are used up. */
static void
shslab_map_chunk(struct shslab *s)
{
  char *m = mmap(NULL, 2 * SHSLAB_CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED)
    die("Unable to map %u bytes of memory", 2 * SHSLAB_CHUNK);
  char *a = (char *) (((uintptr_t) m + SHSLAB_CHUNK - 1) & ~(uintptr_t) (SHSLAB_CHUNK - 1));
  if (a > m)
    munmap(m, (size_t) (a - m));
  if (m + 2 * SHSLAB_CHUNK > a + SHSLAB_CHUNK)
    munmap(a + SHSLAB_CHUNK, (size_t) (m + 2 * SHSLAB_CHUNK - (a + SHSLAB_CHUNK)));
  struct shslab_chunk *c = (struct shslab_chunk *) a;
  /* The mapping reads as zeros: only the set bits are written. */
  c->nfree = s->slots;
  memset(c->map, 0xff, s->slots / 64 * 8);
  if (s->slots % 64)
    c->map[s->slots / 64] = (1ULL << (s->slots % 64)) - 1;
  uint pages = SHSLAB_CHUNK >> shslab_page_shift;
  for (uint p = s->head_pages; p < pages; p++)
    c->released[p / 64] |= 1ULL << (p % 64);
  s->released += pages - s->head_pages;
  s->free_slots += s->slots;
  shslab_link_at(s->avail.prev, &c->link);
  mem_account(s->cls, 0, (s64) s->head_pages << shslab_page_shift);
}

/* Under lock: pages of the object that were released are resident again
 * once it is written. */
static void
shslab_touch(struct shslab *s, struct shslab_chunk *c, void *obj)
{
  uint p = (uint) (((uintptr_t) obj - (uintptr_t) c) >> shslab_page_shift);
  uint last = (uint) (((uintptr_t) obj + s->size - 1 - (uintptr_t) c) >> shslab_page_shift);
  for (; p <= last; p++)
    if (shslab_released(c, p)) {
      c->released[p / 64] &= ~(1ULL << (p % 64));
      s->released--;
      mem_account(s->cls, 0, (s64) shslab_page);
    }
}

/* Under lock: the lowest free slots of chunk c into tmp, up to want. */
static uint
shslab_take_from(struct shslab *s, struct shslab_chunk *c, void **tmp, uint want)
{
  uint n = 0, w = c->hint, words = (s->slots + 63) / 64;
  for (; w < words && n < want; w++)
    while (c->map[w] && n < want) {
      uint b = (uint) __builtin_ctzll(c->map[w]);
      c->map[w] &= c->map[w] - 1;
      void *o = shslab_slot_obj(s, c, w * 64 + b);
      shslab_touch(s, c, o);
      tmp[n++] = o;
    }
  /* The loop stepped past the last word it took from, which may hold more. */
  c->hint = w > 0 && c->map[w - 1] ? w - 1 : w;
  c->nfree -= n;
  s->free_slots -= n;
  if (!c->nfree)
    shslab_unlink(&c->link);
  return n;
}

/* Under lock: SHSLAB_BATCH free slots into obj, the lowest last (a
 * magazine hands out from its top). A chunk with only a few free slots
 * does not leave the magazine short: the next chunks on the list fill the
 * batch, so a thread takes the mutex once per batch even when frees are
 * scattered. */
static uint
shslab_take(struct shslab *s, void **obj)
{
  void *tmp[SHSLAB_BATCH];
  uint n = 0;
  while (n < SHSLAB_BATCH) {
    if (s->avail.next == &s->avail)
      shslab_map_chunk(s);
    n += shslab_take_from(s, (struct shslab_chunk *) s->avail.next, tmp + n, SHSLAB_BATCH - n);
  }
  for (uint i = 0; i < n; i++)
    obj[i] = tmp[n - 1 - i];
  return n;
}

/* Under lock: n objects back to their chunks' maps. */
static void
shslab_give(struct shslab *s, void **obj, uint n)
{
  for (uint i = 0; i < n; i++) {
    struct shslab_chunk *c = shslab_chunk_of(obj[i]);
    uint slot = shslab_slot_of(s, c, obj[i]);
    u64 bit = 1ULL << (slot % 64);
    if (c->map[slot / 64] & bit)
      bug("Shared slab: object %p freed twice", obj[i]);
    c->map[slot / 64] |= bit;
    c->hint = MIN(c->hint, slot / 64);
    if (!c->nfree++)
      shslab_link_at(&s->avail, &c->link);
    if (!c->dirty) {
      c->dirty = 1;
      c->next_dirty = s->dirty;
      s->dirty = c;
    }
  }
  s->free_slots += n;
}

static void
shslab_refill(struct shslab *s, struct shslab_mag *m)
{
  shslab_register_thread();
  pthread_mutex_lock(&s->lock);
  m->count = shslab_take(s, m->obj);
  pthread_mutex_unlock(&s->lock);
}

void *
shslab_alloc(struct shslab *s)
{
  struct shslab_mag *m = &shslab_mags[s->index];
  if (!m->count)
    shslab_refill(s, m);
  void *o = m->obj[--m->count];
  /* The caller writes the object at once, and the objects to come are
   * likely cold (freed long ago): the one SHSLAB_AHEAD allocations on is
   * asked for now. A batch of route updates allocates 16 routes in a
   * row; asking only for the next one left most of its miss to wait for
   * (inserts of 2-5 paths a net: 3.2-3.7 M/s, with 8 ahead 3.6-3.9). */
  if (m->count >= SHSLAB_AHEAD)
    __builtin_prefetch(m->obj[m->count - SHSLAB_AHEAD], 1);
  mem_account(s->cls, s->size, -(s64) s->size);
  return o;
}

void
shslab_free(struct shslab *s, void *obj)
{
  if (!obj)
    return;
  struct shslab_mag *m = &shslab_mags[s->index];
  if (m->count == 2 * SHSLAB_BATCH) {
    /* Hand the older half back, keep the ones freed last (warmest). */
    pthread_mutex_lock(&s->lock);
    shslab_give(s, m->obj, SHSLAB_BATCH);
    pthread_mutex_unlock(&s->lock);
    memmove(m->obj, m->obj + SHSLAB_BATCH, SHSLAB_BATCH * sizeof(void *));
    m->count = SHSLAB_BATCH;
  }
  m->obj[m->count++] = obj;
  mem_account(s->cls, -(s64) s->size, s->size);
  shslab_register_thread();
}

/* Objects cached by an exiting thread go back to their slabs. */
static void
shslab_thread_exit(void *unused UNUSED)
{
  uint n = __atomic_load_n(&shslab_count, __ATOMIC_ACQUIRE);
  for (uint i = 0; i < n; i++) {
    struct shslab_mag *m = &shslab_mags[i];
    struct shslab *s = shslab_all[i];
    pthread_mutex_lock(&s->lock);
    shslab_give(s, m->obj, m->count);
    pthread_mutex_unlock(&s->lock);
    m->count = 0;
  }
}

/* Under lock: slots i to j (inclusive) all free. */
static int
shslab_all_free(struct shslab_chunk *c, uint i, uint j)
{
  for (uint w = i / 64; w <= j / 64; w++) {
    u64 mask = ~0ULL;
    if (w == i / 64)
      mask &= ~0ULL << (i % 64);
    if (w == j / 64 && j % 64 != 63)
      mask &= (1ULL << (j % 64 + 1)) - 1;
    if ((c->map[w] & mask) != mask)
      return 0;
  }
  return 1;
}

/* Under lock: page p (past the header's) is resident and no live object
 * lies on it. */
static int
shslab_page_empty(struct shslab *s, struct shslab_chunk *c, uint p)
{
  if (shslab_released(c, p))
    return 0;
  size_t start = ((size_t) p << shslab_page_shift) - s->head;
  uint i = (uint) (start / s->size);
  if (i >= s->slots)
    return 0;                       /* the chunk's unused tail */
  uint j = (uint) MIN((start + shslab_page - 1) / s->size, (size_t) s->slots - 1);
  return shslab_all_free(c, i, j);
}

/* Under lock: give back the chunk's empty pages, in runs; pages given. */
static uint
shslab_release_chunk(struct shslab *s, struct shslab_chunk *c)
{
  uint pages = (uint) (SHSLAB_CHUNK >> shslab_page_shift), given = 0;
  for (uint p = s->head_pages; p < pages; ) {
    uint q = p;
    while (q < pages && shslab_page_empty(s, c, q))
      q++;
    if (q == p) {
      p++;
      continue;
    }
    if (madvise((char *) c + ((size_t) p << shslab_page_shift), (size_t) (q - p) << shslab_page_shift,
                MADV_DONTNEED))
      die("madvise failed: %m");
    for (uint i = p; i < q; i++)
      c->released[i / 64] |= 1ULL << (i % 64);
    given += q - p;
    p = q;
  }
  return given;
}

size_t
shslab_trim(struct shslab *s, size_t keep)
{
  size_t given = 0;
  pthread_mutex_lock(&s->lock);
  /* Free and still resident, roughly: fresh pages count as released. */
  if (s->free_slots * s->size > keep + (s->released << shslab_page_shift))
    for (uint n = 0; s->dirty && n < SHSLAB_TRIM_MAX; n++) {
      struct shslab_chunk *c = s->dirty;
      s->dirty = c->next_dirty;
      c->dirty = 0;
      given += shslab_release_chunk(s, c);
    }
  s->released += given;
  given <<= shslab_page_shift;
  if (given)
    mem_account(s->cls, 0, -(s64) given);
  pthread_mutex_unlock(&s->lock);
  return given;
}

#endif

size_t
shslab_trim_all(void)
{
  size_t given = 0;
  uint n = __atomic_load_n(&shslab_count, __ATOMIC_ACQUIRE);
  for (uint i = 0; i < n; i++)
    given += shslab_trim(shslab_all[i], SHSLAB_TRIM_KEEP);
  return given;
}
