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
 * Accounting: a chunk counts as overhead of the slab's class when mapped;
 * an allocation moves the object's size to effective and a free moves it
 * back, so free slots show as overhead.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "lib/slab_shared.h"
#include "lib/log.h"


#define SHSLAB_MAX 16               /* slabs in the process */
#define SHSLAB_BATCH 64             /* objects traded at once */
#define SHSLAB_CHUNK (1U << 20)     /* mapped at once */

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

static void shslab_thread_exit(void *unused);

static void
shslab_init_key(void)
{
  if (pthread_key_create(&shslab_key, shslab_thread_exit))
    die("pthread_key_create failed");
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
}

/* Under lock: up to SHSLAB_BATCH new objects from the chunk. */
static uint
shslab_carve(struct shslab *s, void **obj)
{
  if (s->carve_end - s->carve < (ptrdiff_t) s->size) {
    void *c = mmap(NULL, SHSLAB_CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (c == MAP_FAILED)
      die("Unable to map %u bytes of memory", SHSLAB_CHUNK);
    /* The tail of the previous chunk (less than one object) is lost. */
    s->carve = c;
    s->carve_end = (char *) c + SHSLAB_CHUNK;
    mem_account(s->cls, 0, SHSLAB_CHUNK);
  }
  /* Handed out from the top of the magazine: the lowest address last, so
   * a run of allocations walks the chunk upwards. */
  uint n = 0;
  while (n < SHSLAB_BATCH && s->carve_end - s->carve >= (ptrdiff_t) s->size) {
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

#endif
