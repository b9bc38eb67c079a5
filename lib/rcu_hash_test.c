/*
 * Unit tests for lib/rcu_hash.c: lookups, removal and walks against a
 * plain array of what should be there, growing and shrinking (memory
 * follows), compacting after a grow, a walk resumed from positions while the index grows and
 * shrinks in between (every node once), and readers racing one
 * writer that grows and shrinks the index under them: every key that is
 * always present must always be found, by lookup and by walk. And the
 * buckets' summaries: a lookup of a missing key in a bucket of one node
 * stops at the bucket nearly always, every key present is found, and a
 * bucket emptied starts its summary afresh.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/rcu_hash.h"

struct item {
  struct rcu_hash_node node;
  u32 key;
  struct rcu_head rcu;
};

/* A poor hash on purpose: neighbours share low bits, so buckets collide. */
static u32 key_hash(u32 k) { return k * 0x9e3779b1u >> 3; }

static u32
item_hash(const struct rcu_hash_node *n)
{
  return key_hash(caa_container_of(n, struct item, node)->key);
}

static struct item *
find(const struct rcu_hash *h, u32 key, struct rcu_hash_iter *it)
{
  for (struct rcu_hash_node *n = rcu_hash_bucket(h, key_hash(key), it); n; n = rcu_hash_bucket_next(it)) {
    struct item *i = caa_container_of(n, struct item, node);
    if (i->key == key)
      return i;
  }
  return NULL;
}

/* Keys 0 to n - 1 are all there, each its own item. */
static void
assert_all_found(const struct rcu_hash *h, struct item **items, u32 n)
{
  struct rcu_hash_iter it;
  rcu_read_lock();
  for (u32 k = 0; k < n; k++)
    assert_ptr_equal(find(h, k, &it), items[k]);
  rcu_read_unlock();
}

static struct item *
item_new(u32 key)
{
  struct item *i = calloc(1, sizeof(*i));
  i->key = key;
  return i;
}

static void
item_free_rcu(struct rcu_head *h)
{
  free(caa_container_of(h, struct item, rcu));
}

#define N 20000

/* Outside any read section: the retired array's grace period ends, and
 * what maintenance then wants to do can be done. */
static void
grace_and_maintain(struct rcu_hash *h)
{
  for (int i = 0; i < 2; i++) {
    synchronize_rcu();
    rcu_barrier();
    rcu_hash_maintain(h);
  }
}

static void
test_against_array(void **state UNUSED)
{
  rcu_thread_register();
  struct rcu_hash h;
  rcu_hash_init(&h, 4, item_hash, 0);
  size_t small = rcu_hash_bytes(&h);
  static struct item *items[N];
  struct rcu_hash_iter it;
  for (u32 k = 0; k < N; k++) {
    rcu_read_lock();
    assert_null(find(&h, k, &it));
    items[k] = item_new(k);
    rcu_hash_insert(&h, key_hash(k), &items[k]->node);
    rcu_read_unlock();
  }
  assert_int_equal(h.count, N);
  /* Grows that had to wait for a grace period happen now. */
  grace_and_maintain(&h);
  assert_true(rcu_hash_bytes(&h) >= N * sizeof(void *));
  rcu_read_lock();
  for (u32 k = 0; k < N; k++)
    assert_ptr_equal(find(&h, k, &it), items[k]);
  assert_null(find(&h, N + 7, &it));

  /* Remove the odd ones; the even ones stay findable. */
  for (u32 k = 1; k < N; k += 2)
    rcu_hash_remove(&h, key_hash(k), &items[k]->node);
  for (u32 k = 0; k < N; k++)
    assert_ptr_equal(find(&h, k, &it), k % 2 ? NULL : items[k]);

  /* A walk sees every node once. */
  static u8 seen[N];
  memset(seen, 0, sizeof(seen));
  uint walked = 0;
  for (struct rcu_hash_node *n = rcu_hash_walk(&h, 0, &it); n; n = rcu_hash_next(&it)) {
    u32 k = caa_container_of(n, struct item, node)->key;
    assert_int_equal(k % 2, 0);
    assert_int_equal(seen[k]++, 0);
    walked++;
  }
  assert_int_equal(walked, N / 2);

  rcu_read_unlock();

  /* Removing nearly everything shrinks it, once the grace period of the
   * last resize is over. */
  size_t big = rcu_hash_bytes(&h);
  for (u32 k = 0; k < N; k += 2)
    if (k > 20) {
      rcu_read_lock();
      rcu_hash_remove(&h, key_hash(k), &items[k]->node);
      rcu_read_unlock();
    }
  grace_and_maintain(&h);
  assert_true(rcu_hash_bytes(&h) < big / 16);
  assert_true(rcu_hash_bytes(&h) >= small);
  rcu_read_lock();
  for (u32 k = 0; k <= 20; k += 2)
    assert_ptr_equal(find(&h, k, &it), items[k]);
  rcu_read_unlock();
  rcu_hash_free(&h);
  for (u32 k = 0; k < N; k++)
    free(items[k]);
  rcu_thread_unregister();
}

/* A grow goes to four times the nodes (sparse); compacting goes back to
 * at most two buckets per node, with every node still found, and frees
 * the grown array after its grace period. */
static void
test_grow_then_compact(void **state UNUSED)
{
  rcu_thread_register();
  struct rcu_hash h;
  rcu_hash_init(&h, 4, item_hash, 0);
  enum { M = (1 << 12) + 1 };   /* one past a power of two: a grow */
  static struct item *items[M];
  for (u32 k = 0; k < M; k++) {
    /* Before an insert that grows: no grow waits for a grace period,
     * which would go to one node per bucket. */
    if (!(k & (k - 1)))
      grace_and_maintain(&h);
    items[k] = item_new(k);
    if (k == M - 1)
      rcu_read_lock();          /* holds the last grow's grace period */
    rcu_hash_insert(&h, key_hash(k), &items[k]->node);
  }
  size_t grown = rcu_hash_bytes(&h);
  assert_true(grown >= 4 * (M - 1) * sizeof(void *));
  assert_true(rcu_hash_sparse(&h));

  /* Not while the array the grow retired waits for its grace period. */
  rcu_hash_compact(&h);
  assert_true(rcu_hash_sparse(&h));
  rcu_read_unlock();
  grace_and_maintain(&h);
  assert_true(rcu_hash_sparse(&h));     /* maintenance leaves it grown */
  rcu_hash_compact(&h);
  assert_false(rcu_hash_sparse(&h));
  assert_true(rcu_hash_retiring(&h));   /* the grown array, until its grace period */
  assert_all_found(&h, items, M);
  grace_and_maintain(&h);
  assert_false(rcu_hash_retiring(&h));
  size_t compact = rcu_hash_bytes(&h);
  assert_true(compact < grown / 2);
  assert_true(compact >= M * sizeof(void *));
  /* Compact already: nothing to do. */
  rcu_hash_compact(&h);
  assert_int_equal(rcu_hash_bytes(&h), compact);
  rcu_hash_free(&h);
  for (u32 k = 0; k < M; k++)
    free(items[k]);
  rcu_thread_unregister();
}

/* With nodes expected, the first grow goes to one node per bucket for
 * them (not four times the nodes there are), and the index is full again
 * only once they are all in. */
static void
test_grow_to_expected(void **state UNUSED)
{
  rcu_thread_register();
  struct rcu_hash h;
  rcu_hash_init(&h, 4, item_hash, 0);
  enum { E = 100, M = E + 40 };
  static struct item *items[M];
  size_t before = 0;
  for (u32 k = 0; k < M; k++) {
    grace_and_maintain(&h);     /* no grow waits for a grace period */
    if (k == 16) {
      assert_true(rcu_hash_full(&h));
      rcu_hash_expect(&h, E);
      before = rcu_hash_bytes(&h);
    }
    items[k] = item_new(k);
    rcu_hash_insert(&h, key_hash(k), &items[k]->node);
    /* 128 buckets fit 100, where a grow by four would give 64 */
    if (k == 16) {
      assert_true(rcu_hash_bytes(&h) - before >= (128 - 16) * sizeof(void *));
      assert_true(rcu_hash_bytes(&h) - before < (256 - 16) * sizeof(void *));
    }
    if (k > 16 && k < 127)
      assert_false(rcu_hash_full(&h));
  }
  assert_true(rcu_hash_bytes(&h) - before >= (512 - 16) * sizeof(void *));  /* then by four */
  assert_all_found(&h, items, M);
  grace_and_maintain(&h);
  rcu_hash_free(&h);
  for (u32 k = 0; k < M; k++)
    free(items[k]);
  rcu_thread_unregister();
}

/* --- Walks that resume across resizes --- */

#define WSTABLE 2000
#define WEXTRA 60000

static u32 item_key(const struct rcu_hash_node *n) { return caa_container_of(n, struct item, node)->key; }

/* About max nodes from pos on, stopping between buckets; the position to
 * resume from, RCU_HASH_END when done. */
static u64
walk_chunk(struct rcu_hash *h, u64 pos, u8 *seen, uint max)
{
  struct rcu_hash_iter it;
  rcu_read_lock();
  struct rcu_hash_node *n = rcu_hash_walk(h, pos, &it);
  for (uint done = 0; n; ) {
    u32 step = it.step;
    u32 k = item_key(n);
    if (k < WSTABLE)
      seen[k]++;
    n = rcu_hash_next(&it);
    if (++done >= max && n && it.step != step)
      break;
  }
  u64 next = n ? rcu_hash_pos(&it) : RCU_HASH_END;
  rcu_read_unlock();
  return next;
}

static void
test_walk_resumes_across_resizes(void **state UNUSED)
{
  rcu_thread_register();
  struct rcu_hash h;
  rcu_hash_init(&h, 4, item_hash, 0);
  static struct item *stable[WSTABLE], *extra[WEXTRA];
  for (u32 k = 0; k < WSTABLE; k++) {
    stable[k] = item_new(k);
    rcu_read_lock();
    rcu_hash_insert(&h, key_hash(k), &stable[k]->node);
    rcu_read_unlock();
  }
  grace_and_maintain(&h);
  static u8 seen[WSTABLE];
  uint grows = 0, shrinks = 0, chunks = 0;
  u64 pos = 0;
  while (pos < RCU_HASH_END) {
    pos = walk_chunk(&h, pos, seen, 40);
    chunks++;
    size_t before = rcu_hash_bytes(&h);
    if (chunks % 6 == 1) {           /* grow under the walk */
      for (u32 k = 0; k < WEXTRA; k++) {
        extra[k] = item_new(WSTABLE + k);
        rcu_read_lock();
        rcu_hash_insert(&h, key_hash(extra[k]->key), &extra[k]->node);
        rcu_read_unlock();
      }
      grace_and_maintain(&h);
      grows += rcu_hash_bytes(&h) > before;
    } else if (chunks % 6 == 4) {    /* and shrink */
      for (u32 k = 0; k < WEXTRA; k++) {
        rcu_read_lock();
        rcu_hash_remove(&h, key_hash(extra[k]->key), &extra[k]->node);
        rcu_read_unlock();
      }
      grace_and_maintain(&h);
      for (u32 k = 0; k < WEXTRA; k++)
        free(extra[k]);
      shrinks += rcu_hash_bytes(&h) < before;
    }
  }
  assert_true(grows >= 2);
  assert_true(shrinks >= 2);
  for (u32 k = 0; k < WSTABLE; k++)
    assert_int_equal(seen[k], 1);
  /* Whatever extra items the walk ended with go. */
  if (chunks % 6 >= 1 && chunks % 6 < 4)
    for (u32 k = 0; k < WEXTRA; k++) {
      rcu_read_lock();
      rcu_hash_remove(&h, key_hash(extra[k]->key), &extra[k]->node);
      rcu_read_unlock();
      free(extra[k]);
    }
  grace_and_maintain(&h);
  rcu_hash_free(&h);
  for (u32 k = 0; k < WSTABLE; k++)
    free(stable[k]);
  rcu_thread_unregister();
}

/* --- One writer, several readers --- */

#define STABLE 3000           /* always in the index */
#define CHURN 60000           /* come and go: the index grows and shrinks */
#define READERS 3

static struct rcu_hash shared;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int done;
static u64 reader_misses;

/* find(), for an index that hashes keys as they are (item_key). */
static struct item *
find_as_key(const struct rcu_hash *h, u32 key, struct rcu_hash_iter *it)
{
  for (struct rcu_hash_node *n = rcu_hash_bucket(h, key, it); n; n = rcu_hash_bucket_next(it))
    if (item_key(n) == key)
      return caa_container_of(n, struct item, node);
  return NULL;
}

static void
test_bucket_summary(void **state UNUSED)
{
  rcu_thread_register();
  struct rcu_hash h;
  rcu_hash_init(&h, 4, item_key, 0);   /* keys as hashes; 16 buckets; j << 4: bucket 0 */
  struct item *a = item_new(1 << 4), *b = item_new(2 << 4), *c = item_new(3 << 4);
  rcu_hash_insert(&h, a->key, &a->node);

  /* Missing keys of a's bucket: the summary rules nearly all out. */
  uint passed = 0, tried = 0;
  struct rcu_hash_iter it;
  for (u32 j = 4; j < 20000; j++, tried++)
    passed += !!rcu_hash_bucket(&h, j << 4, &it);
#if UINTPTR_MAX == UINT64_MAX
  assert_true(passed * 20 < tried);    /* two bits of 16: about 1-2% */
#else
  assert_int_equal(passed, tried);     /* no summary: every lookup reads on */
#endif
  assert_ptr_equal(find_as_key(&h, a->key, &it), a);

  /* Three nodes in the bucket, the first removed: the others are found
   * (their bits stay), and so they are once the middle one goes. */
  rcu_hash_insert(&h, b->key, &b->node);
  rcu_hash_insert(&h, c->key, &c->node);
  for (struct item *x = a; x; x = x == a ? b : x == b ? c : NULL)
    assert_ptr_equal(find_as_key(&h, x->key, &it), x);
  rcu_hash_remove(&h, c->key, &c->node);   /* the bucket's first */
  assert_null(find_as_key(&h, c->key, &it));
  assert_ptr_equal(find_as_key(&h, a->key, &it), a);
  assert_ptr_equal(find_as_key(&h, b->key, &it), b);
  rcu_hash_remove(&h, a->key, &a->node);   /* the last in the chain */
  assert_ptr_equal(find_as_key(&h, b->key, &it), b);
  assert_null(find_as_key(&h, a->key, &it));

  /* Emptied: no bits left (the word is all zero). */
  rcu_hash_remove(&h, b->key, &b->node);
  assert_true(h.cur->b[0] == 0);
  rcu_hash_insert(&h, a->key, &a->node);
  assert_true((h.cur->b[0] & ~RCU_HASH_PTR_MASK) == rcu_hash_summary_bits(a->key));
  rcu_hash_remove(&h, a->key, &a->node);
  synchronize_rcu();
  free(a);
  free(b);
  free(c);
  rcu_hash_free(&h);
  rcu_barrier();
  rcu_thread_unregister();
}

static void *
writer(void *arg UNUSED)
{
  rcu_thread_register();
  static struct item *churn[CHURN];
  for (int round = 0; round < 6; round++) {
    for (u32 k = 0; k < CHURN; k++) {
      churn[k] = item_new(STABLE + k);
      pthread_mutex_lock(&lock);
      rcu_read_lock();
      rcu_hash_insert(&shared, key_hash(churn[k]->key), &churn[k]->node);
      rcu_read_unlock();
      pthread_mutex_unlock(&lock);
    }
    for (u32 k = 0; k < CHURN; k++) {
      pthread_mutex_lock(&lock);
      rcu_read_lock();
      rcu_hash_remove(&shared, key_hash(churn[k]->key), &churn[k]->node);
      if (k % 1024 == 0)
        rcu_hash_maintain(&shared);
      rcu_read_unlock();
      pthread_mutex_unlock(&lock);
      call_rcu(&churn[k]->rcu, item_free_rcu);
    }
  }
  uatomic_set(&done, 1);
  rcu_thread_unregister();
  return NULL;
}

static void *
reader(void *arg)
{
  uintptr_t seed = (uintptr_t) arg;
  rcu_thread_register();
  u64 misses = 0, rounds = 0;
  while (!uatomic_read(&done) || rounds < 4) {
    struct rcu_hash_iter it;
    rcu_read_lock();
    for (u32 i = 0; i < 2000; i++) {
      seed = seed * 6364136223846793005ULL + 1;
      u32 k = (u32) (seed >> 33) % STABLE;
      struct item *x = find(&shared, k, &it);
      misses += !x || x->key != k;
    }
    rcu_read_unlock();
    if (rounds++ % 8 == 0) {
      /* A walk finds every stable key. */
      static __thread u8 seen[STABLE];
      memset(seen, 0, sizeof(seen));
      uint found = 0;
      rcu_read_lock();
      for (struct rcu_hash_node *n = rcu_hash_walk(&shared, 0, &it); n; n = rcu_hash_next(&it)) {
        u32 k = caa_container_of(n, struct item, node)->key;
        if (k < STABLE && !seen[k]++)
          found++;
      }
      rcu_read_unlock();
      misses += STABLE - found;
    }
  }
  __atomic_add_fetch(&reader_misses, misses, __ATOMIC_SEQ_CST);
  rcu_thread_unregister();
  return NULL;
}

static void
test_readers_and_resizes(void **state UNUSED)
{
  rcu_thread_register();
  rcu_hash_init(&shared, 4, item_hash, 0);
  static struct item *stable[STABLE];
  rcu_read_lock();
  for (u32 k = 0; k < STABLE; k++) {
    stable[k] = item_new(k);
    rcu_hash_insert(&shared, key_hash(k), &stable[k]->node);
  }
  rcu_read_unlock();
  pthread_t w, r[READERS];
  for (uintptr_t i = 0; i < READERS; i++)
    pthread_create(&r[i], NULL, reader, (void *) (i + 1));
  pthread_create(&w, NULL, writer, NULL);
  pthread_join(w, NULL);
  for (int i = 0; i < READERS; i++)
    pthread_join(r[i], NULL);
  assert_int_equal(reader_misses, 0);
  assert_int_equal(shared.count, STABLE);
  rcu_barrier();
  rcu_hash_free(&shared);
  for (u32 k = 0; k < STABLE; k++)
    free(stable[k]);
  rcu_thread_unregister();
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_against_array),
    cmocka_unit_test(test_grow_then_compact),
    cmocka_unit_test(test_grow_to_expected),
    cmocka_unit_test(test_walk_resumes_across_resizes),
    cmocka_unit_test(test_readers_and_resizes),
    cmocka_unit_test(test_bucket_summary),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
