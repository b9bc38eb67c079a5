/*
 * Unit tests for lib/slab_shared.c: objects handed out once while live,
 * freed on other threads than their allocator (as routes are, by the RCU
 * thread), batches coming back, accounting exact, magazines returned when
 * a thread exits. Under ASan/TSan the slab is plain malloc and these check
 * the same contract.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/slab_shared.h"

#define OBJ 40
#define PER_THREAD 20000
#define THREADS 4

static struct shslab *ts_slab;

struct obj {
  u64 owner, serial;
  char fill[OBJ - 16];
};

static int
cmp_ptr(const void *a, const void *b)
{
  uintptr_t x = (uintptr_t) *(void *const *) a, y = (uintptr_t) *(void *const *) b;
  return x < y ? -1 : x > y;
}

static void
test_unique_while_live(void **state UNUSED)
{
  enum { N = 5000 };
  void **p = malloc(N * sizeof(*p));
  for (uint i = 0; i < N; i++) {
    p[i] = shslab_alloc(ts_slab);
    memset(p[i], 0xa5, OBJ);
  }
  qsort(p, N, sizeof(*p), cmp_ptr);
  for (uint i = 1; i < N; i++)
    assert_true((uintptr_t) p[i] - (uintptr_t) p[i - 1] >= shslab_size(ts_slab));
  for (uint i = 0; i < N; i++)
    shslab_free(ts_slab, p[i]);
  free(p);
}

/* Accounting: effective grows by exactly the object size per live object. */
static void
test_accounting(void **state UNUSED)
{
  struct mem_usage a, b, c;
  mem_class_usage(MEM_STANDBY, &a);
  void *o[300];
  for (uint i = 0; i < 300; i++)
    o[i] = shslab_alloc(ts_slab);
  mem_class_usage(MEM_STANDBY, &b);
  assert_int_equal(b.effective - a.effective, 300 * shslab_size(ts_slab));
  for (uint i = 0; i < 300; i++)
    shslab_free(ts_slab, o[i]);
  mem_class_usage(MEM_STANDBY, &c);
  assert_int_equal(c.effective, a.effective);
}

/* Producer threads allocate and stamp objects; the consumer on the other
 * side of a ring checks each stamp and frees it, as the RCU thread frees
 * routes allocated by import loops. */
struct ring {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  struct obj *items[1024];
  uint head, tail, producers_left;
};

static struct ring ring = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, { 0 }, 0, 0, THREADS };

static void *
producer(void *arg)
{
  u64 id = (uintptr_t) arg;
  for (u64 i = 0; i < PER_THREAD; i++) {
    struct obj *o = shslab_alloc(ts_slab);
    o->owner = id;
    o->serial = i;
    memset(o->fill, (int) id, sizeof(o->fill));
    pthread_mutex_lock(&ring.lock);
    while (ring.head - ring.tail == 1024)
      pthread_cond_wait(&ring.cond, &ring.lock);
    ring.items[ring.head++ % 1024] = o;
    pthread_cond_broadcast(&ring.cond);
    pthread_mutex_unlock(&ring.lock);
    /* Some churn on the producer's own magazine too. */
    if (i % 7 == 0)
      shslab_free(ts_slab, shslab_alloc(ts_slab));
  }
  pthread_mutex_lock(&ring.lock);
  ring.producers_left--;
  pthread_cond_broadcast(&ring.cond);
  pthread_mutex_unlock(&ring.lock);
  return NULL;
}

static void *
consumer(void *arg UNUSED)
{
  u64 next[THREADS] = { 0 };
  for (;;) {
    pthread_mutex_lock(&ring.lock);
    while (ring.head == ring.tail && ring.producers_left)
      pthread_cond_wait(&ring.cond, &ring.lock);
    if (ring.head == ring.tail) {
      pthread_mutex_unlock(&ring.lock);
      break;
    }
    struct obj *o = ring.items[ring.tail++ % 1024];
    pthread_cond_broadcast(&ring.cond);
    pthread_mutex_unlock(&ring.lock);
    /* Each producer's objects arrive in order and intact: nobody else
     * was handed the same memory meanwhile. */
    assert_true(o->owner < THREADS);
    assert_int_equal(o->serial, next[o->owner]++);
    for (uint k = 0; k < sizeof(o->fill); k++)
      assert_int_equal((u8) o->fill[k], (u8) o->owner);
    shslab_free(ts_slab, o);
  }
  for (uint t = 0; t < THREADS; t++)
    assert_int_equal(next[t], PER_THREAD);
  return NULL;
}

static void
run_ring(void)
{
  ring.head = ring.tail = 0;
  ring.producers_left = THREADS;
  pthread_t p[THREADS], c;
  pthread_create(&c, NULL, consumer, NULL);
  for (uintptr_t i = 0; i < THREADS; i++)
    pthread_create(&p[i], NULL, producer, (void *) i);
  for (uint i = 0; i < THREADS; i++)
    pthread_join(p[i], NULL);
  pthread_join(c, NULL);
}

static void
test_cross_thread(void **state UNUSED)
{
  struct mem_usage before, after;
  mem_class_usage(MEM_STANDBY, &before);
  run_ring();
  mem_class_usage(MEM_STANDBY, &after);
  assert_int_equal(after.effective, before.effective);

  /* Allocations after the threads are gone come from free slots: effective
   * rises by their size, and with the slab (not malloc) nothing new is
   * mapped, so the sum stays. */
  struct mem_usage mid;
  enum { N = THREADS * 2 * 64 };
  void **o = malloc(N * sizeof(*o));
  for (uint i = 0; i < N; i++)
    o[i] = shslab_alloc(ts_slab);
  mem_class_usage(MEM_STANDBY, &mid);
  assert_int_equal(mid.effective - after.effective, N * shslab_size(ts_slab));
  if (after.overhead)
    assert_int_equal(mid.effective + mid.overhead, after.effective + after.overhead);
  for (uint i = 0; i < N; i++)
    shslab_free(ts_slab, o[i]);
  free(o);
}

/* Pages of this many objects' that are resident now. */
static uint
resident_pages(void **o, uint n)
{
  size_t page = (size_t) sysconf(_SC_PAGESIZE);
  uint res = 0;
  uintptr_t last = 0;
  for (uint i = 0; i < n; i++) {
    uintptr_t p = (uintptr_t) o[i] & ~(uintptr_t) (page - 1);
    if (p == last)
      continue;
    last = p;
    unsigned char v;
    assert_int_equal(mincore((void *) p, page, &v), 0);
    res += v & 1;
  }
  return res;
}

/* A table that empties (its peers gone): the chunks whose objects all came
 * back are given to the kernel by a trim, all but a small reserve, and
 * their objects are handed out again, intact once written, with the
 * accounting back where it was. */
static void
test_trim(void **state UNUSED)
{
  enum { N = 8 << 20 >> 5 };        /* over eight chunks' worth at 40 bytes */
  void **o = malloc(N * sizeof(*o));
  for (uint i = 0; i < N; i++)
    memset(o[i] = shslab_alloc(ts_slab), 0x5a, OBJ);
  qsort(o, N, sizeof(*o), cmp_ptr);
  uint before = resident_pages(o, N);
  for (uint i = 0; i < N; i++)
    shslab_free(ts_slab, o[i]);

  struct mem_usage a, c;
  mem_class_usage(MEM_STANDBY, &a);
  size_t given = shslab_trim(ts_slab, 0);
#ifdef BIRD_SANITIZED
  assert_int_equal(given, 0);
  (void) before;
#else
  /* Eight chunks' worth, less the pages the magazine pins and the chunk
   * still carved from. */
  assert_true(given >= 4 * (1 << 20));
  struct mem_usage b;
  mem_class_usage(MEM_STANDBY, &b);
  assert_int_equal(a.overhead - b.overhead, given);
  uint after = resident_pages(o, N);
  assert_true(before - after >= given / (size_t) sysconf(_SC_PAGESIZE));
  /* Nothing more to give until chunks idle again. */
  assert_int_equal(shslab_trim(ts_slab, 0), 0);
#endif

  for (uint i = 0; i < N; i++) {
    struct obj *x = o[i] = shslab_alloc(ts_slab);
    x->owner = i;
    x->serial = ~(u64) i;
  }
  for (uint i = 0; i < N; i++) {
    struct obj *x = o[i];
    assert_int_equal(x->owner, i);
    assert_int_equal(x->serial, ~(u64) i);
  }
  mem_class_usage(MEM_STANDBY, &c);
#ifndef BIRD_SANITIZED
  /* Every chunk is in use again: as before the trim, nothing mapped anew. */
  assert_int_equal(c.effective + c.overhead, a.effective + a.overhead);
#else
  assert_int_equal(c.effective - a.effective, N * shslab_size(ts_slab));
#endif
  for (uint i = 0; i < N; i++)
    shslab_free(ts_slab, o[i]);
  free(o);
}

/* Pages holding a live object, or the end of one reaching in from the
 * page before, stay: the survivors read as written after a trim gave the
 * pages around them back. */
static void
test_trim_keeps_live(void **state UNUSED)
{
  enum { N = 8 << 20 >> 5 };
  size_t page = (size_t) sysconf(_SC_PAGESIZE);
  void **o = malloc(N * sizeof(*o));
  for (uint i = 0; i < N; i++)
    o[i] = shslab_alloc(ts_slab);
  qsort(o, N, sizeof(*o), cmp_ptr);
  u8 *live = calloc(N, 1);
  uint kept = 0;
  for (uint i = 0; i < N; i++) {
    uintptr_t a = (uintptr_t) o[i];
    int straddles = a / page != (a + OBJ - 1) / page;
    live[i] = i % 1000 == 0 || (straddles && (a / page) % 4 == 0);
    kept += live[i];
    struct obj *x = o[i];
    x->owner = i;
    x->serial = ~(u64) i;
    memset(x->fill, (int) (i & 0xff), sizeof(x->fill));
  }
  for (uint i = 0; i < N; i++)
    if (!live[i])
      shslab_free(ts_slab, o[i]);
  size_t given = shslab_trim(ts_slab, 0);
#ifdef BIRD_SANITIZED
  assert_int_equal(given, 0);
#else
  assert_true(given > 0);
#endif
  for (uint i = 0; i < N; i++)
    if (live[i]) {
      struct obj *x = o[i];
      assert_int_equal(x->owner, i);
      assert_int_equal(x->serial, ~(u64) i);
      for (uint k = 0; k < sizeof(x->fill); k++)
        assert_int_equal((u8) x->fill[k], (u8) (i & 0xff));
      shslab_free(ts_slab, x);
    }
  assert_true(kept > N / 1000);
  free(live);
  free(o);
}

static int trim_stop;

static void *
trimmer(void *arg)
{
  size_t *given = arg;
  while (!__atomic_load_n(&trim_stop, __ATOMIC_ACQUIRE))
    __atomic_add_fetch(given, shslab_trim(ts_slab, 0), __ATOMIC_RELAXED);
  return NULL;
}

/* Trims racing the ring: pages empty behind the consumer and are given
 * back while producers take their slots again. No object in flight may
 * lose its contents (the consumer checks every stamp). */
static void
test_trim_concurrent(void **state UNUSED)
{
  enum { N = 8 << 20 >> 5 };
  void **o = malloc(N * sizeof(*o));
  for (uint i = 0; i < N; i++)
    memset(o[i] = shslab_alloc(ts_slab), 0x33, OBJ);
  for (uint i = 0; i < N; i++)
    shslab_free(ts_slab, o[i]);
  free(o);
  /* Those pages go now; what the trimmer gives back went during the ring. */
  shslab_trim(ts_slab, 0);
  size_t given = 0;
  __atomic_store_n(&trim_stop, 0, __ATOMIC_RELEASE);
  pthread_t tr;
  pthread_create(&tr, NULL, trimmer, &given);
  /* Whether a page empties while the trimmer looks is up to the
   * scheduler: measured, a hundred or so times a run. */
  for (uint r = 0; r < 3 && !__atomic_load_n(&given, __ATOMIC_RELAXED); r++)
    run_ring();
  __atomic_store_n(&trim_stop, 1, __ATOMIC_RELEASE);
  pthread_join(tr, NULL);
#ifdef BIRD_SANITIZED
  assert_int_equal(given, 0);
#else
  assert_true(given > 0);
#endif
}

int
main(void)
{
  resource_init();
  /* MEM_STANDBY is otherwise unused here: its counters are this slab's. */
  ts_slab = shslab_new(MEM_STANDBY, OBJ);
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_unique_while_live),
    cmocka_unit_test(test_accounting),
    cmocka_unit_test(test_cross_thread),
    cmocka_unit_test(test_trim),
    cmocka_unit_test(test_trim_keeps_live),
    cmocka_unit_test(test_trim_concurrent),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
