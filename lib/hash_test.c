/*
 * Unit tests for lib/hash.c: the seeded hash and the resizable table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/hash.h"
#include "lib/resource.h"

struct item {
  struct hash_node hn;
  u32 key;
  int seen;
};

static int
item_eq(const struct hash_node *n, const void *key)
{
  return container_of(n, struct item, hn)->key == *(const u32 *) key;
}

static u32 key_hash(u32 key) { return hash_bytes(&key, sizeof(key)); }

static struct item *
find(struct hash_table *t, u32 key)
{
  struct hash_node *n = hash_find(t, key_hash(key), item_eq, &key);
  return n ? container_of(n, struct item, hn) : NULL;
}

enum { N = 100000 };

static void
check_load(struct hash_table *t)
{
  assert_true(t->count <= (2U << t->order));
  if (t->order > t->min_order)
    assert_true(t->count >= ((1U << t->order) >> 2));
}

static void
run_table(pool *p)
{
  struct hash_table t;
  hash_init(&t, p, 4);
  assert_int_equal(t.order, 4);
  assert_int_equal(t.count, 0);

  struct item *items = calloc(N, sizeof(*items));
  for (u32 i = 0; i < N; i++)
  {
    items[i].key = i * 2654435761U;
    hash_insert(&t, &items[i].hn, key_hash(items[i].key));
    if (i % 1000 == 0)
      check_load(&t);
  }
  assert_int_equal(t.count, N);
  check_load(&t);
  assert_true(t.order >= 15);   /* grew from 16 buckets */

  for (u32 i = 0; i < N; i++)
    assert_ptr_equal(find(&t, items[i].key), &items[i]);
  u32 missing = 12345;   /* not i * 2654435761 for any i < N: checked below */
  for (u32 i = 0; i < N; i++)
    assert_true(items[i].key != missing);
  assert_null(find(&t, missing));

  /* HASH_WALK sees every node exactly once */
  u32 walked = 0;
  HASH_WALK(&t, n)
  {
    container_of(n, struct item, hn)->seen++;
    walked++;
  }
  assert_int_equal(walked, N);
  for (u32 i = 0; i < N; i++)
    assert_int_equal(items[i].seen, 1);

  /* Remove the first half; the rest must stay findable */
  uint big_order = t.order;
  for (u32 i = 0; i < N / 2; i++)
  {
    hash_remove(&t, &items[i].hn);
    if (i % 1000 == 0)
      check_load(&t);
  }
  assert_int_equal(t.count, N / 2);
  for (u32 i = 0; i < N / 2; i++)
    assert_null(find(&t, items[i].key));
  for (u32 i = N / 2; i < N; i++)
    assert_ptr_equal(find(&t, items[i].key), &items[i]);

  /* Remove all but a few: shrinks back, not below min_order */
  for (u32 i = N / 2; i < N - 3; i++)
    hash_remove(&t, &items[i].hn);
  assert_int_equal(t.count, 3);
  assert_true(t.order < big_order);
  assert_int_equal(t.order, t.min_order);
  for (u32 i = N - 3; i < N; i++)
    assert_ptr_equal(find(&t, items[i].key), &items[i]);

  hash_free(&t);
  free(items);
}

static void
test_table_malloc(void **state)
{
  run_table(NULL);
}

static void
test_table_pool(void **state)
{
  pool *p = rp_new(root_pool(), MEM_TABLES, "hash");
  run_table(p);

  /* Buckets are accounted in the pool; hash_free gives them back */
  struct hash_table t;
  hash_init(&t, p, 10);
  struct mem_usage u;
  rp_memsize(p, &u);
  assert_int_equal(u.effective, sizeof(void *) << 10);
  hash_free(&t);
  rp_memsize(p, &u);
  assert_int_equal(u.effective, 0);

  /* A table left in its pool goes with the pool */
  hash_init(&t, p, 3);
  rfree(p);
}

static void
test_walk_delsafe(void **state)
{
  struct hash_table t;
  hash_init(&t, NULL, 2);

  struct item *items = calloc(N, sizeof(*items));
  for (u32 i = 0; i < N; i++)
  {
    items[i].key = i;
    hash_insert(&t, &items[i].hn, key_hash(i));
  }
  uint big_order = t.order;

  /* Remove 99% during one walk: every node still visited exactly once, and
   * the shrinking waits for the end of the walk */
  u32 walked = 0;
  HASH_WALK_DELSAFE(&t, n)
  {
    struct item *it = container_of(n, struct item, hn);
    it->seen++;
    walked++;
    if (it->key % 100)
      hash_remove(&t, n);
    assert_int_equal(t.order, big_order);
  }
  assert_int_equal(walked, N);
  for (u32 i = 0; i < N; i++)
    assert_int_equal(items[i].seen, 1);

  assert_int_equal(t.count, N / 100);
  assert_int_equal(t.walking, 0);
  assert_true(t.order < big_order);
  check_load(&t);
  for (u32 i = 0; i < N; i++)
    if (i % 100)
      assert_null(find(&t, i));
    else
      assert_ptr_equal(find(&t, i), &items[i]);

  /* Remove the rest in a second walk */
  HASH_WALK_DELSAFE(&t, n)
    hash_remove(&t, n);
  assert_int_equal(t.count, 0);
  assert_int_equal(t.order, t.min_order);

  hash_free(&t);
  free(items);
}

/* Sparse: at most half full while it grows, and it keeps its size when
 * emptied (it fills again the same way). */
static void
test_sparse(void **state)
{
  (void) state;
  enum { M = 5000 };
  struct hash_table t;
  hash_init_sparse(&t, NULL, 4);
  struct item *items = calloc(M, sizeof(*items));
  /* no buckets of its own before the first insert, yet it reads, walks,
   * clears and trims as an empty table; then the order it was made with */
  assert_int_equal(t.order, 0);
  assert_null(find(&t, 12345));
  HASH_WALK(&t, n)
    fail();
  assert_int_equal(hash_clear_dense(&t), 0);
  hash_trim(&t);
  assert_int_equal(t.order, 0);
  items[0].key = 1;
  hash_insert(&t, &items[0].hn, key_hash(items[0].key));
  assert_int_equal(t.order, 4);
  assert_ptr_equal(find(&t, 1), &items[0]);
  hash_remove(&t, &items[0].hn);
  for (int round = 0; round < 2; round++) {
    for (u32 i = 0; i < M; i++) {
      items[i].key = i * 2654435761U;
      hash_insert(&t, &items[i].hn, key_hash(items[i].key));
      assert_true(t.count <= (1U << t.order) / 2);
    }
    uint full = t.order;
    assert_int_equal(full, 14);       /* 5000 nodes: 16384 buckets */
    for (u32 i = 0; i < M; i++)
      assert_ptr_equal(find(&t, items[i].key), &items[i]);
    for (u32 i = 0; i < M; i++)
      hash_remove(&t, &items[i].hn);
    assert_int_equal(t.count, 0);
    assert_int_equal(t.order, full);
    assert_null(find(&t, items[0].key));
  }
  hash_free(&t);
  free(items);
}

/* A sparse table keeps its buckets: 100 nodes in 16384 buckets are
 * removed one by one, 1000 are cleared at once, and either way it is empty
 * and takes new nodes after; hash_trim() gives the buckets back. */
static void
test_clear_dense(void **state)
{
  (void) state;
  enum { M = 5000 };
  struct hash_table t;
  hash_init_sparse(&t, NULL, 4);
  struct item *items = calloc(M, sizeof(*items));
  for (u32 i = 0; i < M; i++) {
    items[i].key = i * 2654435761U;
    hash_insert(&t, &items[i].hn, key_hash(items[i].key));
  }
  for (u32 i = 0; i < M; i++)
    hash_remove(&t, &items[i].hn);
  assert_int_equal(t.order, 14);
  for (u32 i = 0; i < 100; i++)
    hash_insert(&t, &items[i].hn, key_hash(items[i].key));
  assert_int_equal(hash_clear_dense(&t), 0);
  assert_int_equal(t.count, 100);
  for (u32 i = 100; i < 1000; i++)
    hash_insert(&t, &items[i].hn, key_hash(items[i].key));
  assert_int_equal(hash_clear_dense(&t), 1);
  assert_int_equal(t.count, 0);
  assert_int_equal(t.order, 14);
  for (u32 i = 0; i < M; i++)
    assert_null(find(&t, items[i].key));
  hash_insert(&t, &items[7].hn, key_hash(items[7].key));
  assert_ptr_equal(find(&t, items[7].key), &items[7]);
  /* trimmed only once empty, then without buckets until the next
   * insert, which makes them at its first size again */
  hash_trim(&t);
  assert_int_equal(t.order, 14);
  hash_remove(&t, &items[7].hn);
  hash_trim(&t);
  assert_int_equal(t.order, 0);
  assert_null(find(&t, items[7].key));
  hash_trim(&t);
  hash_insert(&t, &items[0].hn, key_hash(items[0].key));
  assert_int_equal(t.order, 4);
  for (u32 i = 1; i < 20; i++)
    hash_insert(&t, &items[i].hn, key_hash(items[i].key));
  for (u32 i = 0; i < 20; i++)
    assert_ptr_equal(find(&t, items[i].key), &items[i]);
  hash_free(&t);
  free(items);
}

static void
test_seeded_hash(void **state)
{
  const u64 s1 = 0x0123456789abcdefULL, s2 = 0xfedcba9876543210ULL;
  u8 buf[200];
  for (uint i = 0; i < sizeof(buf); i++)
    buf[i] = i * 37 + 1;

  /* Every length (tail handling), stable per seed, different across seeds */
  uint same = 0;
  for (size_t len = 0; len <= sizeof(buf); len++)
  {
    u32 a = hash_bytes_seeded(buf, len, s1);
    assert_int_equal(a, hash_bytes_seeded(buf, len, s1));
    if (a == hash_bytes_seeded(buf, len, s2))
      same++;
  }
  assert_true(same <= 1);

  /* A one-bit change anywhere changes the hash (200 bytes: the two-lane
   * loop of long keys, then the tail) */
  for (size_t pos = 0; pos < sizeof(buf); pos++)
  {
    u32 a = hash_bytes_seeded(buf, sizeof(buf), s1);
    buf[pos] ^= 0x10;
    assert_true(a != hash_bytes_seeded(buf, sizeof(buf), s1));
    buf[pos] ^= 0x10;
  }

  /* Trailing zero bytes are not ignored */
  u8 z[16] = { 0 };
  assert_true(hash_bytes_seeded(z, 3, s1) != hash_bytes_seeded(z, 4, s1));
  assert_true(hash_bytes_seeded(z, 8, s1) != hash_bytes_seeded(z, 9, s1));

  /* The process seed: nonzero before init, changed by init */
  u64 d = hash_seed();
  assert_true(d != 0);
  u32 before = hash_bytes(buf, 20);
  assert_int_equal(before, hash_bytes_seeded(buf, 20, d));
  hash_seed_init();
  assert_true(hash_seed() != 0);
  assert_true(hash_seed() != d);
  assert_int_equal(hash_bytes(buf, 20), hash_bytes_seeded(buf, 20, hash_seed()));
}

static void
test_distribution(void **state)
{
  /* Sequential keys, as peers' prefixes often are, spread evenly */
  enum { B = 1024, K = 200000 };
  static u32 bucket[B];
  memset(bucket, 0, sizeof(bucket));
  for (u32 i = 0; i < K; i++)
    bucket[hash_bytes_seeded(&i, sizeof(i), 42) % B]++;

  u32 max = 0, min = K;
  for (int i = 0; i < B; i++)
  {
    max = MAX(max, bucket[i]);
    min = MIN(min, bucket[i]);
  }
  /* Mean is ~195; binomial spread is ~14 */
  assert_true(max < 195 + 100);
  assert_true(min > 195 - 100);

  /* The high bits matter too (table index uses the low bits only after
   * hashing, but cds_lfht orders by the bits reversed, and lib/rcu_hash.h
   * walks in that order) */
  memset(bucket, 0, sizeof(bucket));
  for (u32 i = 0; i < K; i++)
    bucket[hash_bytes_seeded(&i, sizeof(i), 42) >> 22]++;
  max = 0;
  for (int i = 0; i < B; i++)
    max = MAX(max, bucket[i]);
  assert_true(max < 195 + 100);
}

static void
test_u32_mix(void **state)
{
  assert_true(hash_u32(1) != hash_u32(2));
  assert_true(hash_mix(1, 2) != hash_mix(2, 1));
}

int
main(void)
{
  resource_init();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_table_malloc),
    cmocka_unit_test(test_table_pool),
    cmocka_unit_test(test_walk_delsafe),
    cmocka_unit_test(test_sparse),
    cmocka_unit_test(test_clear_dense),
    cmocka_unit_test(test_seeded_hash),
    cmocka_unit_test(test_distribution),
    cmocka_unit_test(test_u32_mix),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
