/*
 * Shared slabs (see slab_shared.h).
 *
 * Free objects are never written to: a thread's magazine is an array of
 * pointers to them, and batches of SHSLAB_BATCH pointers travel between
 * magazines and the slab's stack of full batches. A free list linked
 * through the objects made every allocation wait for the object before it
 * to come from memory (a million freed routes are cold), one cache miss
 * after another.
 *
 * A thread's magazine holds up to 2 * SHSLAB_BATCH objects: it refills one
 * batch when empty and hands one back when full, so a thread that
 * alternates allocations and frees near either bound does not bounce
 * batches through the mutex on every call. A thread's magazines go back to
 * their slabs when it exits.
 *
 * Giving pages back: chunks are aligned to their size, so an object finds
 * its chunk's header by masking its address. The header counts, for each
 * page, the objects starting in it and those of them that sit in the
 * slab's batches, updated as batches come and go (under the lock, never on
 * a magazine's fast path). A page whose objects, and the one reaching in
 * from the page before, all sit in batches is empty; shslab_trim() gives
 * empty pages back to the kernel. Counting pages rather than chunks
 * matters: the few objects in threads' magazines would otherwise pin a
 * chunk each (measured: a quarter to half of the chunks after 10 peers'
 * 3M routes went). The objects stay in the batches: since free objects are
 * never written, a released page is touched again only when one of its
 * objects is handed out, and reads as zeros then, which an allocation (not
 * zeroed) allows. The release happens under the lock, so no thread can
 * take one of the page's objects meanwhile.
 *
 * Accounting: a chunk counts as overhead of the slab's class when mapped;
 * an allocation moves the object's size to effective and a free moves it
 * back, so free slots show as overhead. A released page leaves the
 * overhead and comes back to it when one of its objects is handed out.
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
#define SHSLAB_CHUNK (1U << 20)     /* mapped at once, aligned to its size */
#define SHSLAB_PAGES (SHSLAB_CHUNK / 4096)  /* counters, enough for the smallest page */
#define SHSLAB_TRIM_MIN (4U << 20)  /* free bytes resident before a trim bothers */
#define SHSLAB_TRIM_MAX 64          /* chunks looked at per trim: bounds the lock's hold */

/* At the start of each chunk; under the slab's lock. */
struct shslab_chunk {
  struct shslab_chunk *next_dirty;
  u8 dirty;                         /* on the slab's list: a page emptied */
  u16 carved[SHSLAB_PAGES];         /* objects starting in each page so far */
  u16 free[SHSLAB_PAGES];           /* of them, in the slab's batches */
  u64 released[SHSLAB_PAGES / 64];  /* pages given back */
};

/* Objects start after the header, on a cache line. */
#define SHSLAB_HEAD ((sizeof(struct shslab_chunk) + 63) & ~(size_t) 63)

/* A batch's pointers, on the slab's stack of full batches or of spares. */
struct shslab_batch {
  struct shslab_batch *next;
  uint count;
  void *obj[SHSLAB_BATCH];
};

struct shslab {
  pthread_mutex_t lock;
  enum mem_class cls;
  uint size;
  uint index;                       /* of the magazines in every thread */
  struct shslab_batch *full;        /* under lock: batches of free objects */
  struct shslab_batch *spare;       /* under lock: empty batches, kept */
  char *carve, *carve_end;          /* under lock: unused part of the newest chunk */
  struct shslab_chunk *carving;     /* under lock: the newest chunk */
  struct shslab_chunk *dirty;       /* under lock: chunks with pages emptied since a trim */
  size_t batched;                   /* under lock: objects in full batches */
  size_t released;                  /* under lock: pages given back */
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
static size_t shslab_page;          /* the system's; page 0 of a chunk, with its header, stays */
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

size_t shslab_trim(struct shslab *s UNUSED) { return 0; }

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

static uint
shslab_page_of(struct shslab_chunk *c, void *obj)
{
  return (uint) (((uintptr_t) obj - (uintptr_t) c) >> shslab_page_shift);
}

static void
shslab_mark_dirty(struct shslab *s, struct shslab_chunk *c)
{
  if (!c->dirty) {
    c->dirty = 1;
    c->next_dirty = s->dirty;
    s->dirty = c;
  }
}

/* Under lock: n objects came back to the slab's batches. */
static void
shslab_count_back(struct shslab *s, void **obj, uint n)
{
  for (uint i = 0; i < n; i++) {
    struct shslab_chunk *c = shslab_chunk_of(obj[i]);
    uint p = shslab_page_of(c, obj[i]);
    if (++c->free[p] == c->carved[p])
      shslab_mark_dirty(s, c);
  }
  s->batched += n;
}

/* Under lock: n objects leave the slab's batches for a magazine; the
 * released pages they lie on will be touched again. */
static void
shslab_count_out(struct shslab *s, void **obj, uint n)
{
  for (uint i = 0; i < n; i++) {
    struct shslab_chunk *c = shslab_chunk_of(obj[i]);
    uint p = shslab_page_of(c, obj[i]);
    c->free[p]--;
    for (uint last = shslab_page_of(c, (char *) obj[i] + s->size - 1); p <= last; p++)
      if (c->released[p / 64] & (1ULL << (p % 64))) {
        c->released[p / 64] &= ~(1ULL << (p % 64));
        s->released--;
        mem_account(s->cls, 0, (s64) shslab_page);
      }
  }
  s->batched -= n;
}

/* Under lock: n objects of m (its oldest) into a batch on the slab's stack. */
static void
shslab_push_batch(struct shslab *s, void **obj, uint n)
{
  struct shslab_batch *b = s->spare;
  if (b)
    s->spare = b->next;
  else {
    b = malloc(sizeof(*b));
    if (!b)
      die("Out of memory");
    mem_account(s->cls, 0, sizeof(*b));
  }
  memcpy(b->obj, obj, n * sizeof(void *));
  b->count = n;
  b->next = s->full;
  s->full = b;
  shslab_count_back(s, obj, n);
}

/* Under lock: a fresh chunk, aligned to its size (mapped twice as large,
 * the rest unmapped). */
static void
shslab_map_chunk(struct shslab *s)
{
  char *m = mmap(NULL, 2 * SHSLAB_CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED)
    die("Unable to map %u bytes of memory", 2 * SHSLAB_CHUNK);
  char *c = (char *) (((uintptr_t) m + SHSLAB_CHUNK - 1) & ~(uintptr_t) (SHSLAB_CHUNK - 1));
  if (c > m)
    munmap(m, (size_t) (c - m));
  if (m + 2 * SHSLAB_CHUNK > c + SHSLAB_CHUNK)
    munmap(c + SHSLAB_CHUNK, (size_t) (m + 2 * SHSLAB_CHUNK - (c + SHSLAB_CHUNK)));
  mem_account(s->cls, 0, SHSLAB_CHUNK);
  /* Pages of the previous chunk may have emptied while it was carved from
   * (a trim leaves the chunk being carved partly alone). */
  if (s->carving)
    shslab_mark_dirty(s, s->carving);
  s->carving = (struct shslab_chunk *) c;
  /* The tail of the previous chunk (less than one object) is lost. */
  s->carve = c + SHSLAB_HEAD;
  s->carve_end = c + SHSLAB_CHUNK;
}

/* Under lock: up to SHSLAB_BATCH new objects from the chunk. */
static uint
shslab_carve(struct shslab *s, void **obj)
{
  if (s->carve_end - s->carve < (ptrdiff_t) s->size)
    shslab_map_chunk(s);
  /* Handed out from the top of the magazine: the lowest address last, so
   * a run of allocations walks the chunk upwards. */
  uint n = 0;
  while (n < SHSLAB_BATCH && s->carve_end - s->carve >= (ptrdiff_t) s->size) {
    s->carving->carved[shslab_page_of(s->carving, s->carve)]++;
    obj[n++] = s->carve;
    s->carve += s->size;
  }
  for (uint i = 0; i < n / 2; i++) {
    void *x = obj[i];
    obj[i] = obj[n - 1 - i];
    obj[n - 1 - i] = x;
  }
  return n;
}

static void
shslab_refill(struct shslab *s, struct shslab_mag *m)
{
  shslab_register_thread();
  pthread_mutex_lock(&s->lock);
  struct shslab_batch *b = s->full;
  if (b) {
    s->full = b->next;
    memcpy(m->obj, b->obj, b->count * sizeof(void *));
    m->count = b->count;
    shslab_count_out(s, m->obj, m->count);
    b->next = s->spare;
    s->spare = b;
  } else
    m->count = shslab_carve(s, m->obj);
  pthread_mutex_unlock(&s->lock);
}

void *
shslab_alloc(struct shslab *s)
{
  struct shslab_mag *m = &shslab_mags[s->index];
  if (!m->count)
    shslab_refill(s, m);
  void *o = m->obj[--m->count];
  /* The caller writes the object at once; the next one is likely cold
   * (freed long ago), so its line is asked for now. */
  if (m->count)
    __builtin_prefetch(m->obj[m->count - 1], 1);
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
    shslab_push_batch(s, m->obj, SHSLAB_BATCH);
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
    for (uint at = 0; at < m->count; at += SHSLAB_BATCH)
      shslab_push_batch(s, m->obj + at, MIN(SHSLAB_BATCH, m->count - at));
    pthread_mutex_unlock(&s->lock);
    m->count = 0;
  }
}

/* Under lock: page p (not the header's) holds no live object. The object
 * reaching in from the page before is known free only when all of that
 * page's are; on the chunk being carved, the page must be carved through. */
static int
shslab_page_empty(struct shslab *s, struct shslab_chunk *c, uint p)
{
  char *start = (char *) c + ((size_t) p << shslab_page_shift);
  if (c == s->carving && s->carve < start + shslab_page)
    return 0;
  if (!c->carved[p] || c->free[p] != c->carved[p] || (c->released[p / 64] & (1ULL << (p % 64))))
    return 0;
  size_t off = (size_t) (start - (char *) c) - SHSLAB_HEAD;
  return off % s->size == 0 || c->free[p - 1] == c->carved[p - 1];
}

/* Under lock: give back the chunk's empty pages, in runs. */
static size_t
shslab_release_chunk(struct shslab *s, struct shslab_chunk *c)
{
  uint pages = (uint) (SHSLAB_CHUNK >> shslab_page_shift), given = 0;
  for (uint p = 1; p < pages; ) {
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
  return (size_t) given << shslab_page_shift;
}

size_t
shslab_trim(struct shslab *s)
{
  size_t given = 0;
  pthread_mutex_lock(&s->lock);
  /* Free and still resident: when it is little, the pages would soon be
   * faulted in again for the next routes. */
  if (s->batched * s->size >= SHSLAB_TRIM_MIN + (s->released << shslab_page_shift))
    for (uint n = 0; s->dirty && n < SHSLAB_TRIM_MAX; n++) {
      struct shslab_chunk *c = s->dirty;
      s->dirty = c->next_dirty;
      c->dirty = 0;
      given += shslab_release_chunk(s, c);
    }
  s->released += given >> shslab_page_shift;
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
    given += shslab_trim(shslab_all[i]);
  return given;
}
