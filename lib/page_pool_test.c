/*
 * Unit tests for lib/page_pool.c: blocks zeroed, distinct and aligned,
 * accounting exact (the resident reserve is standby overhead, blocks in
 * use and released ones count nothing), released pages really gone from
 * memory (mincore), the recent swing of the use kept resident up to its
 * bound, and blocks allocated and freed on several threads. Under ASan/TSan
 * the pool is calloc and the residency check is skipped.
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

#include "lib/page_pool.h"


#define RESERVE 4
#define THREADS 4
#define ROUNDS 3000

static struct page_pool *tp;
struct page_pool *one_page, *four_pages;   /* pools live for the process (not static: a write-only static is dropped, and LeakSanitizer then sees a leak) */
static size_t page;

static int
all_zero(const u8 *b, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (b[i])
      return 0;
  return 1;
}

/* Standby bytes of the pools other than tp (each keeps the block its
 * last epoch churned): the tests that count tp's take them off. */
static size_t others;

static size_t
tp_standby(void)
{
  struct mem_usage u;
  mem_class_usage(MEM_STANDBY, &u);
  assert_int_equal(u.effective, 0);
  return u.overhead - others;
}

/* Three epochs of one block at a time: the pool forgets its last swing
 * in two, and what it kept for it goes back in the third (two blocks a
 * free). */
static void
forget_swing(struct page_pool *p)
{
  for (int i = 0; i < 3 * PAGE_POOL_EPOCH; i++)
    page_pool_free(p, page_pool_alloc(p));
}

static void
test_size_rounds_to_pages(void **state UNUSED)
{
  assert_int_equal(page_pool_block_size(tp), 3 * page);
  one_page = page_pool_new(1, 0);
  assert_int_equal(page_pool_block_size(one_page), page);
}

/* A power-of-two size aligns its blocks to it (slab pages rely on it). */
static void
test_aligned(void **state UNUSED)
{
  struct page_pool *q = four_pages = page_pool_new(4 * page, 0);
  void *b[100];
  for (int i = 0; i < 100; i++) {
    b[i] = page_pool_alloc(q);
    assert_int_equal((uintptr_t) b[i] % (4 * page), 0);
  }
  for (int i = 0; i < 100; i++)
    page_pool_free(q, b[i]);
  for (int i = 0; i < 100; i++) {
    b[i] = page_pool_alloc(q);
    assert_int_equal((uintptr_t) b[i] % (4 * page), 0);
  }
  for (int i = 0; i < 100; i++)
    page_pool_free(q, b[i]);
  forget_swing(q);
  others = tp_standby();      /* tp is untouched so far */
}

/* Every block comes zeroed, whether new, from the reserve or released. */
static void
test_zeroed_and_distinct(void **state UNUSED)
{
  enum { N = 40 };
  u8 *b[N];
  size_t size = page_pool_block_size(tp);
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < N; i++) {
      b[i] = page_pool_alloc(tp);
      assert_true(all_zero(b[i], size));
      memset(b[i], 0x5a, size);
    }
    for (int i = 0; i < N; i++)
      for (int j = i + 1; j < N; j++)
        assert_true(b[i] + size <= b[j] || b[j] + size <= b[i]);
    for (int i = 0; i < N; i++)
      page_pool_free(tp, b[i]);
  }
}

/* The resident reserve is standby overhead; blocks in use are their
 * owners' to count and released ones count nothing. */
static void
test_accounting(void **state UNUSED)
{
  enum { N = RESERVE + 6 };
  void *blk[N];
  forget_swing(tp);
  size_t a = tp_standby();
  for (int i = 0; i < N; i++)
    blk[i] = page_pool_alloc(tp);
  assert_int_equal(tp_standby(), 0);
  for (int i = 0; i < N; i++)
    page_pool_free(tp, blk[i]);
  size_t c = tp_standby();
#ifdef BIRD_SANITIZED
  assert_int_equal(a + c, 0);
#else
  /* the reserve, then the swing of this test: every block it took */
  assert_int_equal(a, RESERVE * page_pool_block_size(tp));
  assert_int_equal(c, N * page_pool_block_size(tp));
#endif
}

/* Blocks freed beyond the swing's bound leave memory at once, those the
 * swing kept once it is forgotten; the reserve stays. */
static void
test_released_pages_not_resident(void **state UNUSED)
{
#ifdef BIRD_SANITIZED
  skip();
#else
  size_t size = page_pool_block_size(tp), pages = size / page;
  enum { N = 100 };
  uint swing = PAGE_POOL_SWING_MAX / size;
  assert_true(swing + 8 <= N);
  u8 *blk[N];
  forget_swing(tp);
  for (int i = 0; i < N; i++) {
    blk[i] = page_pool_alloc(tp);
    memset(blk[i], 1, size);
  }
  for (int i = 0; i < N; i++)
    page_pool_free(tp, blk[i]);
  unsigned char vec[16];
  assert_true(pages <= sizeof(vec));
  for (int i = 0; i < N; i++) {
    assert_int_equal(mincore(blk[i], size, vec), 0);
    for (size_t k = 0; k < pages; k++)
      assert_int_equal(vec[k] & 1, i < (int) swing);
  }
  /* The swing forgotten: the blocks freed last went first. */
  forget_swing(tp);
  for (int i = 0; i < (int) swing; i++) {
    assert_int_equal(mincore(blk[i], size, vec), 0);
    assert_int_equal(vec[0] & 1, i < RESERVE);
  }
#endif
}

/* Beyond the floor, a quarter as many blocks as are in use wait
 * resident, or what the recent swing took; once the swing is forgotten
 * they go back with the use. */
static void
test_reserve_follows_use(void **state UNUSED)
{
#ifdef BIRD_SANITIZED
  skip();
#else
  enum { N = 40, FIRST = 8 };
  size_t size = page_pool_block_size(tp);
  void *blk[N];
  forget_swing(tp);
  for (int i = 0; i < N; i++)
    blk[i] = page_pool_alloc(tp);
  assert_int_equal(tp_standby(), 0);            /* the reserve was taken first */
  for (int i = 0; i < FIRST; i++)
    page_pool_free(tp, blk[i]);
  assert_int_equal(tp_standby(), FIRST * size); /* 32 in use: 8 may wait */
  unsigned char vec[16];
  assert_int_equal(mincore(blk[FIRST - 1], size, vec), 0);
  assert_int_equal(vec[0] & 1, 1);
  for (int i = FIRST; i < N; i++)
    page_pool_free(tp, blk[i]);
  assert_int_equal(tp_standby(), N * size);     /* the swing: 40 were in use */
  forget_swing(tp);
  assert_int_equal(tp_standby(), RESERVE * size);
#endif
}

/* The swing keeps at most PAGE_POOL_SWING_MAX bytes, however many blocks
 * it took. */
static void
test_swing_bounded(void **state UNUSED)
{
#ifdef BIRD_SANITIZED
  skip();
#else
  enum { N = 600 };
  static void *blk[N];
  uint swing = PAGE_POOL_SWING_MAX / page;
  assert_true(swing < N);
  size_t u0 = tp_standby();
  for (int i = 0; i < N; i++)
    blk[i] = page_pool_alloc(one_page);
  for (int i = 0; i < N; i++)
    page_pool_free(one_page, blk[i]);
  assert_int_equal(tp_standby() - u0, swing * page);
  /* one_page has no floor: the last epoch's single block is all that stays */
  forget_swing(one_page);
  assert_int_equal(tp_standby() - u0, page);
  others += page;
#endif
}

/* Each thread fills its blocks with its own pattern and checks it before
 * freeing: a block handed to two threads at once would show the other's. */
static void *
churn(void *arg)
{
  u8 mark = (u8) (uintptr_t) arg;
  size_t size = page_pool_block_size(tp);
  u8 *held[8] = { 0 };
  for (uint i = 0; i < ROUNDS; i++) {
    uint k = (i * 7 + mark) % 8;
    if (held[k]) {
      for (size_t j = 0; j < size; j += 512)
        if (held[k][j] != mark)
          return (void *) 1;
      page_pool_free(tp, held[k]);
      held[k] = NULL;
    } else {
      held[k] = page_pool_alloc(tp);
      if (!all_zero(held[k], size))
        return (void *) 1;
      memset(held[k], mark, size);
    }
  }
  for (uint k = 0; k < 8; k++)
    page_pool_free(tp, held[k]);
  return NULL;
}

static void
test_threads(void **state UNUSED)
{
  pthread_t t[THREADS];
  for (uintptr_t i = 0; i < THREADS; i++)
    pthread_create(&t[i], NULL, churn, (void *) (i + 1));
  for (uint i = 0; i < THREADS; i++) {
    void *rc;
    pthread_join(t[i], &rc);
    assert_null(rc);
  }
#ifndef BIRD_SANITIZED
  forget_swing(tp);
  assert_int_equal(tp_standby(), RESERVE * page_pool_block_size(tp));
#endif
}

int
main(void)
{
  resource_init();
  page = (size_t) sysconf(_SC_PAGESIZE);
  /* Nothing else here counts in MEM_STANDBY. */
  tp = page_pool_new(2 * page + 1, RESERVE * 3 * page);
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_size_rounds_to_pages),
    cmocka_unit_test(test_aligned),
    cmocka_unit_test(test_zeroed_and_distinct),
    cmocka_unit_test(test_accounting),
    cmocka_unit_test(test_released_pages_not_resident),
    cmocka_unit_test(test_reserve_follows_use),
    cmocka_unit_test(test_swing_bounded),
    cmocka_unit_test(test_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
