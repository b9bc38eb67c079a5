/*
 * Shared slabs (see slab_shared.h).
 *
 * A free object's first word links it to the next free object. Batches
 * (chains) of free objects travel between a thread's magazine and the
 * slab's stack of batches; a batch on that stack keeps the next batch in
 * its first object's second word and its length in the third.
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
#include <sys/mman.h>

#include "lib/slab_shared.h"
#include "lib/log.h"


#define SHSLAB_MAX 16               /* slabs in the process */
#define SHSLAB_BATCH 64             /* objects traded at once */
#define SHSLAB_CHUNK (1U << 20)     /* mapped at once */

struct shslab {
  pthread_mutex_t lock;
  enum mem_class cls;
  uint size;
  uint index;                       /* of the magazines in every thread */
  void *batches;                    /* under lock: stack of free batches */
  char *carve, *carve_end;          /* under lock: unused part of the newest chunk */
};

struct shslab_mag {
  void *head;
  uint count;
};

static struct shslab *shslab_all[SHSLAB_MAX];
static uint shslab_count;           /* atomic; slabs are only added */
static pthread_mutex_t shslab_new_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t shslab_key;
static pthread_once_t shslab_once = PTHREAD_ONCE_INIT;

static inline void **obj_words(void *o) { return (void **) o; }

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
  if (size < 3 * sizeof(void *))
    size = 3 * sizeof(void *);
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

/* Push a chain of n objects (head .. its n-th) on the slab's stack. */
static void
shslab_push_batch(struct shslab *s, void *head, uint n)
{
  pthread_mutex_lock(&s->lock);
  obj_words(head)[1] = s->batches;
  obj_words(head)[2] = (void *) (uintptr_t) n;
  s->batches = head;
  pthread_mutex_unlock(&s->lock);
}

/* Under lock: a chain of up to SHSLAB_BATCH new objects from the chunk. */
static uint
shslab_carve(struct shslab *s, void **head)
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
  uint n = 0;
  void *first = NULL, **link = &first;
  while (n < SHSLAB_BATCH && s->carve_end - s->carve >= (ptrdiff_t) s->size) {
    *link = s->carve;
    link = &obj_words(s->carve)[0];
    s->carve += s->size;
    n++;
  }
  *link = NULL;
  *head = first;
  return n;
}

static void
shslab_refill(struct shslab *s, struct shslab_mag *m)
{
  if (!shslab_registered) {
    shslab_registered = 1;
    pthread_setspecific(shslab_key, shslab_mags);  /* any non-NULL value arms the destructor */
  }
  pthread_mutex_lock(&s->lock);
  if (s->batches) {
    void *b = s->batches;
    s->batches = obj_words(b)[1];
    m->head = b;
    m->count = (uint) (uintptr_t) obj_words(b)[2];
  } else
    m->count = shslab_carve(s, &m->head);
  pthread_mutex_unlock(&s->lock);
}

void *
shslab_alloc(struct shslab *s)
{
  struct shslab_mag *m = &shslab_mags[s->index];
  if (!m->count)
    shslab_refill(s, m);
  void *o = m->head;
  m->head = obj_words(o)[0];
  m->count--;
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
    /* Hand the older half back: the batch after the first SHSLAB_BATCH. */
    void *last = m->head;
    for (uint i = 1; i < SHSLAB_BATCH; i++)
      last = obj_words(last)[0];
    void *rest = obj_words(last)[0];
    obj_words(last)[0] = NULL;
    shslab_push_batch(s, rest, SHSLAB_BATCH);
    m->count = SHSLAB_BATCH;
  }
  obj_words(obj)[0] = m->head;
  m->head = obj;
  m->count++;
  mem_account(s->cls, -(s64) s->size, s->size);
  if (!shslab_registered) {
    shslab_registered = 1;
    pthread_setspecific(shslab_key, shslab_mags);
  }
}

/* Objects cached by an exiting thread go back to their slabs. */
static void
shslab_thread_exit(void *unused UNUSED)
{
  uint n = __atomic_load_n(&shslab_count, __ATOMIC_ACQUIRE);
  for (uint i = 0; i < n; i++) {
    struct shslab_mag *m = &shslab_mags[i];
    if (m->count)
      shslab_push_batch(shslab_all[i], m->head, m->count);
    m->head = NULL;
    m->count = 0;
  }
}

#endif
