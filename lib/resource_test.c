/*
 * Unit tests for lib/resource.c: pool trees, accounting, blocks, linpools,
 * slabs. Run under ASan so that leaks and uses after free are caught too.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/resource.h"
#include "lib/rcu.h"
#include "lib/log.h"

struct class_snapshot {
  struct mem_usage u[MEM_CLASS_MAX];
};

static void
snapshot(struct class_snapshot *s)
{
  for (int c = 0; c < MEM_CLASS_MAX; c++)
    mem_class_usage(c, &s->u[c]);
}

/* Standby is left out: freed slab pages go to the page pools' resident
 * reserve there, as much as the reserve takes. */
static void
assert_snapshot_equal(const struct class_snapshot *a, const struct class_snapshot *b)
{
  for (int c = 0; c < MEM_CLASS_MAX; c++)
  {
    if (c == MEM_STANDBY)
      continue;
    assert_int_equal(a->u[c].effective, b->u[c].effective);
    assert_int_equal(a->u[c].overhead, b->u[c].overhead);
  }
}

/* Class counter minus the baseline, for one class. */
static void
class_delta(const struct class_snapshot *base, enum mem_class c, struct mem_usage *d)
{
  struct mem_usage now;
  mem_class_usage(c, &now);
  d->effective = now.effective - base->u[c].effective;
  d->overhead = now.overhead - base->u[c].overhead;
}

static int
setup(void **state)
{
  resource_init();
  return 0;
}

static void
test_class_names(void **state)
{
  assert_string_equal(mem_class_names[MEM_TABLES], "Routing tables");
  assert_string_equal(mem_class_names[MEM_ATTRS], "Route attributes");
  assert_string_equal(mem_class_names[MEM_PROTOCOLS], "Protocols");
  assert_string_equal(mem_class_names[MEM_CONFIG], "Current config");
  assert_string_equal(mem_class_names[MEM_STANDBY], "Standby memory");
}

static void
test_pool_tree_free(void **state)
{
  struct class_snapshot base, after;
  snapshot(&base);

  pool *top = rp_new(root_pool(), MEM_TABLES, "top");
  assert_string_equal(rp_name(top), "top");
  assert_int_equal(rp_class(top), MEM_TABLES);

  pool *a = rp_new_child(top, "a");
  pool *b = rp_new(top, MEM_CONFIG, "b");
  pool *aa = rp_new_child(a, "aa");
  assert_int_equal(rp_class(a), MEM_TABLES);
  assert_int_equal(rp_class(aa), MEM_TABLES);
  assert_int_equal(rp_class(b), MEM_CONFIG);

  /* Something of every kind in every pool */
  pool *all[] = { top, a, b, aa };
  for (uint i = 0; i < ARRAY_SIZE(all); i++)
  {
    for (int k = 0; k < 10; k++)
      mb_alloc(all[i], 100 + k);
    linpool *lp = lp_new(all[i]);
    for (int k = 0; k < 1000; k++)
      lp_alloc(lp, 17);
    slab *s = sl_new(all[i], 40);
    for (int k = 0; k < 500; k++)
      sl_alloc(s);
    mb_strdup(all[i], "hello");
  }

  rdump(top, 0);

  /* One call frees the whole tree; ASan's leak check proves the memory */
  rfree(top);
  snapshot(&after);
  assert_snapshot_equal(&base, &after);
}

static void
test_accounting(void **state)
{
  struct class_snapshot base, after;
  snapshot(&base);

  pool *p = rp_new(root_pool(), MEM_ATTRS, "acct");
  pool *sub = rp_new(p, MEM_CONFIG, "sub");

  void *m = mb_alloc(p, 1000);
  linpool *lp = lp_new(p);
  lp_alloc(lp, 5000);   /* a chunk of its own */
  lp_alloc(lp, 24);
  slab *s = sl_new(p, 24);
  void *o = sl_alloc(s);
  mb_alloc(sub, 300);

  /* The class counter is the pool's own usage, excluding the sub-pool of
   * another class; rp_memsize() is recursive and includes it. */
  struct mem_usage tot, subu, d;
  rp_memsize(p, &tot);
  rp_memsize(sub, &subu);
  class_delta(&base, MEM_ATTRS, &d);
  assert_int_equal(d.effective, tot.effective - subu.effective);
  assert_int_equal(d.overhead, tot.overhead - subu.overhead);
  class_delta(&base, MEM_CONFIG, &d);
  assert_int_equal(d.effective, subu.effective);
  assert_int_equal(d.overhead, subu.overhead);

  assert_int_equal(tot.effective, 1000 + 5000 + 24 + 24 + 300);
  assert_int_equal(subu.effective, 300);

  /* Moving a linpool across classes moves its accounting */
  struct mem_usage lpu;
  rmove(lp, sub);
  rp_memsize(sub, &subu);
  lpu.effective = subu.effective - 300;
  assert_int_equal(lpu.effective, 5000 + 24);
  class_delta(&base, MEM_CONFIG, &d);
  assert_int_equal(d.effective, subu.effective);
  assert_int_equal(d.overhead, subu.overhead);
  rp_memsize(p, &tot);
  class_delta(&base, MEM_ATTRS, &d);
  assert_int_equal(d.effective, tot.effective - subu.effective);
  assert_int_equal(d.overhead, tot.overhead - subu.overhead);

  /* Operations after the move count in the new class */
  lp_alloc(lp, 8);
  class_delta(&base, MEM_CONFIG, &d);
  assert_int_equal(d.effective, subu.effective + 8);

  sl_free(s, o);
  mb_free(m);
  rp_memsize(p, &tot);
  rp_memsize(sub, &subu);
  class_delta(&base, MEM_ATTRS, &d);
  assert_int_equal(d.effective, tot.effective - subu.effective);
  assert_int_equal(d.overhead, tot.overhead - subu.overhead);

  rfree(p);
  snapshot(&after);
  assert_snapshot_equal(&base, &after);
}

/* A resource class of our own, as other modules define them. */
struct test_res {
  struct resource r;
  int *freed;
};

static void test_res_free(struct resource *r) { (*((struct test_res *) r)->freed)++; }

static const struct resclass test_res_class = {
  .name = "Test",
  .size = sizeof(struct test_res),
  .free = test_res_free,
};

static void
test_ralloc_rmove(void **state)
{
  struct class_snapshot base, after;
  snapshot(&base);

  int freed = 0;
  pool *p1 = rp_new(root_pool(), MEM_TABLES, "p1");
  pool *p2 = rp_new(root_pool(), MEM_PROTOCOLS, "p2");

  struct test_res *t = ralloc(p1, &test_res_class);
  assert_non_null(t);
  assert_ptr_equal(t->r.parent, p1);
  t->freed = &freed;

  struct mem_usage u1, u2, d;
  rp_memsize(p1, &u1);
  rmove(t, p2);
  rp_memsize(p1, &u2);
  assert_int_equal(u1.overhead - u2.overhead, sizeof(struct test_res));

  /* A sub-pool moved along keeps its own class */
  pool *c = rp_new(p1, MEM_CONFIG, "c");
  mb_alloc(c, 77);
  rmove(c, p2);
  assert_int_equal(rp_class(c), MEM_CONFIG);

  rp_memsize(p2, &u2);
  assert_int_equal(u2.effective, 77);

  class_delta(&base, MEM_TABLES, &d);
  rp_memsize(p1, &u1);
  assert_int_equal(d.overhead, u1.overhead);

  rfree(p2);
  assert_int_equal(freed, 1);
  rfree(p1);
  snapshot(&after);
  assert_snapshot_equal(&base, &after);
}

static void
test_mb(void **state)
{
  struct class_snapshot base, after;
  snapshot(&base);

  pool *p = rp_new(root_pool(), MEM_PROTOCOLS, "mb");
  char *a = mb_alloc(p, 10);
  char *b = mb_allocz(p, 64);
  char *c = mb_alloc(p, 10);
  for (int i = 0; i < 64; i++)
    assert_int_equal(b[i], 0);
  assert_int_equal((uintptr_t) a % 16, 0);

  struct mem_usage u;
  rp_memsize(p, &u);
  assert_int_equal(u.effective, 84);
  assert_true(u.overhead >= 3 * 32);   /* three headers and the pool */
  assert_true(u.overhead < 3 * 64 + 256);

  /* Grow the middle block a lot: it moves, and the pool list must follow */
  memset(b, 'x', 64);
  for (size_t sz = 128; sz <= 1 << 20; sz *= 2)
  {
    b = mb_realloc(b, sz);
    for (int i = 0; i < 64; i++)
      assert_int_equal(b[i], 'x');
  }
  rp_memsize(p, &u);
  assert_int_equal(u.effective, 10 + 10 + (1 << 20));

  b = mb_realloc(b, 16);
  rp_memsize(p, &u);
  assert_int_equal(u.effective, 36);

  mb_free(a);
  mb_free(NULL);
  rp_memsize(p, &u);
  assert_int_equal(u.effective, 26);

  char *s = mb_strdup(p, "route");
  assert_string_equal(s, "route");
  (void) c;

  rfree(p);
  snapshot(&after);
  assert_snapshot_equal(&base, &after);
}

static void
test_lp_basic(void **state)
{
  struct class_snapshot base, after;
  snapshot(&base);

  pool *p = rp_new(root_pool(), MEM_CONFIG, "lp");
  linpool *lp = lp_new(p);

  for (size_t sz = 1; sz < 300; sz++)
  {
    u8 *m = lp_alloc(lp, sz);
    assert_int_equal((uintptr_t) m % 8, 0);
    memset(m, 0xaa, sz);
  }

  u8 *z = lp_allocz(lp, 1000);
  for (int i = 0; i < 1000; i++)
    assert_int_equal(z[i], 0);

  /* Larger than a chunk */
  u8 *big = lp_alloc(lp, 100000);
  memset(big, 1, 100000);
  assert_int_equal((uintptr_t) big % 8, 0);

  char *s = lp_strdup(lp, "abc");
  assert_string_equal(s, "abc");
  char *f = lp_sprintf(lp, "%s-%d", "peer", 42);
  assert_string_equal(f, "peer-42");

  /* Longer than lp_sprintf's first-try buffer */
  char longstr[1000];
  memset(longstr, 'y', sizeof(longstr) - 1);
  longstr[sizeof(longstr) - 1] = 0;
  char *g = lp_sprintf(lp, "<%s>", longstr);
  assert_int_equal(strlen(g), 1001);
  assert_int_equal(g[0], '<');
  assert_int_equal(g[1000], '>');

  struct mem_usage u;
  rp_memsize(p, &u);
  assert_true(u.effective >= 100000 + 1000);

  lp_flush(lp);
  rp_memsize(p, &u);
  assert_int_equal(u.effective, 0);
  /* No chunk kept: its spares went to the thread's cache */
  assert_true(u.overhead < 512);

  /* Works again after flush */
  u8 *m = lp_alloc(lp, 10);
  memset(m, 0, 10);
  rp_memsize(p, &u);
  assert_int_equal(u.effective, 16);

  rfree(p);
  snapshot(&after);
  assert_snapshot_equal(&base, &after);
}

static size_t
standby_now(void)
{
  struct mem_usage u;
  mem_class_usage(MEM_STANDBY, &u);
  return u.overhead;
}

/* Linpools at rest hold no chunk; the thread's cache takes up to 8 of
 * their spares and gives them to the next linpool that needs one. The
 * thread notes what it sees (cmocka asserts in the main thread). */
struct lp_cache_seen {
  size_t freed, cached, after_take, after_reflush, after_exit;
};

static void *
lp_cache_thread(void *arg)
{
  struct lp_cache_seen *x = arg;
  rcu_thread_register();
  size_t base = standby_now();
  pool *p = rp_new(root_pool(), MEM_PROTOCOLS, "lp cache");
  linpool *lp[10];
  for (int i = 0; i < 10; i++) {
    lp[i] = lp_new(p);
    memset(lp_alloc(lp[i], 100), 1, 100);
  }
  struct mem_usage u;
  rp_memsize(p, &u);
  size_t held = u.overhead;
  for (int i = 0; i < 10; i++)
    lp_flush(lp[i]);
  rp_memsize(p, &u);
  x->freed = held - u.overhead;
  x->cached = standby_now() - base;
  memset(lp_alloc(lp[0], 100), 2, 100);       /* taken back from the cache */
  x->after_take = standby_now() - base;
  lp_flush(lp[0]);
  x->after_reflush = standby_now() - base;
  rfree(p);
  rcu_thread_unregister();          /* the cache goes with the thread */
  x->after_exit = standby_now() - base;
  return NULL;
}

static void
test_lp_flush_cache(void **state UNUSED)
{
  struct lp_cache_seen x;
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, lp_cache_thread, &x), 0);
  pthread_join(th, NULL);
  assert_int_equal(x.freed, 10 * (4064 - 104));   /* 104 of each were in use */
  assert_int_equal(x.cached, 8 * 4064);
  assert_int_equal(x.after_take, 7 * 4064);
  assert_int_equal(x.after_reflush, 8 * 4064);
  assert_int_equal(x.after_exit, 0);
}

static void
test_lp_save_restore(void **state)
{
  struct class_snapshot base, after;
  snapshot(&base);

  pool *p = rp_new(root_pool(), MEM_CONFIG, "lp");
  linpool *lp = lp_new(p);

  /* Restore on an empty pool */
  struct lp_state s0;
  lp_save(lp, &s0);
  lp_alloc(lp, 100);
  lp_restore(lp, &s0);
  struct mem_usage u;
  rp_memsize(p, &u);
  assert_int_equal(u.effective, 0);

  char *keep = lp_strdup(lp, "keep me");
  struct mem_usage u0;
  rp_memsize(p, &u0);

  struct lp_state s1;
  lp_save(lp, &s1);
  void *first = lp_alloc(lp, 32);

  /* Nested save inside the first */
  struct lp_state s2;
  lp_save(lp, &s2);
  for (int i = 0; i < 1000; i++)      /* several chunks */
    lp_alloc(lp, 100);
  lp_alloc(lp, 50000);                /* and a big one */
  lp_alloc(lp, 8);
  lp_restore(lp, &s2);

  rp_memsize(p, &u);
  assert_int_equal(u.effective, u0.effective + 32);

  lp_restore(lp, &s1);
  rp_memsize(p, &u);
  assert_int_equal(u.effective, u0.effective);

  /* The same memory comes back after a restore */
  void *again = lp_alloc(lp, 32);
  assert_ptr_equal(first, again);
  assert_string_equal(keep, "keep me");

  /* Restore across a big allocation made right at the save point */
  struct lp_state s3;
  lp_save(lp, &s3);
  lp_alloc(lp, 20000);
  lp_restore(lp, &s3);
  rp_memsize(p, &u);
  assert_int_equal(u.effective, u0.effective + 32);
  assert_string_equal(keep, "keep me");

  rfree(p);
  snapshot(&after);
  assert_snapshot_equal(&base, &after);
}

static void
test_slab(void **state)
{
  struct class_snapshot base, after;
  snapshot(&base);

  pool *p = rp_new(root_pool(), MEM_TABLES, "slab");
  slab *s = sl_new(p, 40);

  enum { N = 20000 };
  u32 **objs = calloc(N, sizeof(*objs));
  for (u32 i = 0; i < N; i++)
  {
    objs[i] = sl_alloc(s);
    assert_int_equal((uintptr_t) objs[i] % 8, 0);
    for (int k = 0; k < 10; k++)
      objs[i][k] = i;
  }

  struct mem_usage u;
  rp_memsize(p, &u);
  assert_int_equal(u.effective, (size_t) N * 40);
  /* Pages are dense: overhead well under the payload */
  assert_true(u.overhead < (size_t) N * 40 / 5);

  /* All distinct and intact */
  for (u32 i = 0; i < N; i++)
    for (int k = 0; k < 10; k++)
      assert_int_equal(objs[i][k], i);

  /* Free every other one in a scattered order, then reallocate */
  for (u32 i = 0; i < N; i += 2)
  {
    u32 j = (i * 7919) % N;
    j &= ~1U;
    if (objs[j])
    {
      sl_free(s, objs[j]);
      objs[j] = NULL;
    }
  }
  for (u32 i = 0; i < N; i += 2)
    if (objs[i])
    {
      sl_free(s, objs[i]);
      objs[i] = NULL;
    }
  rp_memsize(p, &u);
  assert_int_equal(u.effective, (size_t) N / 2 * 40);

  for (u32 i = 1; i < N; i += 2)
    for (int k = 0; k < 10; k++)
      assert_int_equal(objs[i][k], i);

  /* Reuse: a freed slot is what the next allocation returns */
  void *x = sl_alloc(s);
  sl_free(s, x);
  void *y = sl_alloc(s);
  assert_ptr_equal(x, y);
  sl_free(s, y);

  u32 *z = sl_allocz(s);
  for (int k = 0; k < 10; k++)
    assert_int_equal(z[k], 0);
  sl_free(s, z);

  /* Free everything but one object: its page and one free page stay */
  for (u32 i = 3; i < N; i += 2)
    sl_free(s, objs[i]);
  rp_memsize(p, &u);
  assert_int_equal(u.effective, 40);
  assert_true(u.overhead >= 2 * 4096 - 40 && u.overhead < 2 * 4096 + 512);
  /* The last one: an empty slab keeps no page */
  sl_free(s, objs[1]);
  rp_memsize(p, &u);
  assert_int_equal(u.effective, 0);
  assert_true(u.overhead < 512);

  /* And a second round on the emptied slab */
  for (u32 i = 0; i < N; i++)
    objs[i] = sl_alloc(s);
  rp_memsize(p, &u);
  assert_int_equal(u.effective, (size_t) N * 40);

  free(objs);
  rfree(p);   /* slab with live objects goes with its pool */
  snapshot(&after);
  assert_snapshot_equal(&base, &after);
}

static void
test_slab_sizes(void **state)
{
  struct class_snapshot base, after;
  snapshot(&base);
  pool *p = rp_new(root_pool(), MEM_TABLES, "slab sizes");

  size_t sizes[] = { 1, 4, 8, 12, 16, 24, 100, 1000, 3000, 10000 };
  for (uint i = 0; i < ARRAY_SIZE(sizes); i++)
  {
    slab *s = sl_new(p, sizes[i]);
    void *o[50];
    for (int k = 0; k < 50; k++)
    {
      o[k] = sl_alloc(s);
      memset(o[k], k, sizes[i]);
    }
    for (int k = 0; k < 50; k++)
      assert_int_equal(((u8 *) o[k])[sizes[i] - 1], k);
    for (int k = 0; k < 50; k += 3)
      sl_free(s, o[k]);
    if (sizes[i] >= 16 && sizes[i] % 16 == 0)
      assert_int_equal((uintptr_t) o[1] % 16, 0);
    rfree(s);
  }

  rfree(p);
  snapshot(&after);
  assert_snapshot_equal(&base, &after);
}

static void
test_shared(void **state)
{
  struct class_snapshot base, after;
  snapshot(&base);

  void *m = mem_alloc_shared(MEM_ATTRS, 123);
  struct mem_usage d;
  class_delta(&base, MEM_ATTRS, &d);
  assert_int_equal(d.effective, 123);
  mem_free_shared(MEM_ATTRS, m, 123);

  mem_account(MEM_STANDBY, 10, 20);
  class_delta(&base, MEM_STANDBY, &d);
  assert_int_equal(d.effective, 10);
  assert_int_equal(d.overhead, 20);
  mem_account(MEM_STANDBY, -10, -20);

  snapshot(&after);
  assert_snapshot_equal(&base, &after);
}

/* More threads than stripes: the first ones own theirs (plain adds), the
 * rest share (atomic adds); not one count is lost either way. */
enum { ACC_THREADS = 80, ACC_ADDS = 250000, ACC_SUBS = 100000 };
static pthread_barrier_t acc_start;

static void *
account_thread(void *arg UNUSED)
{
  pthread_barrier_wait(&acc_start);     /* all at once: stripes are shared */
  for (int i = 0; i < ACC_ADDS; i++)
    mem_account(MEM_PROTOCOLS, 3, 1);
  for (int i = 0; i < ACC_SUBS; i++)
    mem_account(MEM_PROTOCOLS, -3, -1);
  return NULL;
}

static void
test_accounting_threads(void **state)
{
  (void) state;
  struct class_snapshot base;
  snapshot(&base);
  pthread_t t[ACC_THREADS];
  pthread_barrier_init(&acc_start, NULL, ACC_THREADS);
  for (int i = 0; i < ACC_THREADS; i++)
    pthread_create(&t[i], NULL, account_thread, NULL);
  for (int i = 0; i < ACC_THREADS; i++)
    pthread_join(t[i], NULL);
  pthread_barrier_destroy(&acc_start);
  struct mem_usage d;
  class_delta(&base, MEM_PROTOCOLS, &d);
  assert_int_equal(d.effective, (size_t) ACC_THREADS * (ACC_ADDS - ACC_SUBS) * 3);
  assert_int_equal(d.overhead, (size_t) ACC_THREADS * (ACC_ADDS - ACC_SUBS));
  mem_account(MEM_PROTOCOLS, -(s64) d.effective, -(s64) d.overhead);
}

/* Threads that come and go (a worker pool resized by configure): each
 * wave of fewer threads than owned stripes owns one stripe a thread,
 * taken over from the waves before (four waves need 160), and no count is
 * lost in the handover. */
enum { WAVES = 4, WAVE_THREADS = 40, WAVE_ADDS = 50000 };
static pthread_barrier_t wave_start;

static void *
wave_thread(void *arg UNUSED)
{
  pthread_barrier_wait(&wave_start);
  int mine = mem_stripe_mine();
  for (int i = 0; i < WAVE_ADDS; i++)
    mem_account(MEM_PROTOCOLS, 2, 1);
  return (void *) (uintptr_t) mine;
}

static void
test_accounting_thread_waves(void **state)
{
  (void) state;
  struct class_snapshot base;
  snapshot(&base);
  for (int w = 0; w < WAVES; w++) {
    pthread_t t[WAVE_THREADS];
    pthread_barrier_init(&wave_start, NULL, WAVE_THREADS);
    for (int i = 0; i < WAVE_THREADS; i++)
      pthread_create(&t[i], NULL, wave_thread, NULL);
    int owned = 0;
    for (int i = 0; i < WAVE_THREADS; i++) {
      void *mine;
      pthread_join(t[i], &mine);
      owned += (int) (uintptr_t) mine;
    }
    pthread_barrier_destroy(&wave_start);
    /* the main thread holds one; every other stripe came back */
    assert_int_equal(owned, WAVE_THREADS);
  }
  struct mem_usage d;
  class_delta(&base, MEM_PROTOCOLS, &d);
  assert_int_equal(d.effective, (size_t) WAVES * WAVE_THREADS * WAVE_ADDS * 2);
  assert_int_equal(d.overhead, (size_t) WAVES * WAVE_THREADS * WAVE_ADDS);
  mem_account(MEM_PROTOCOLS, -(s64) d.effective, -(s64) d.overhead);
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_class_names),
    cmocka_unit_test(test_pool_tree_free),
    cmocka_unit_test(test_accounting),
    cmocka_unit_test(test_ralloc_rmove),
    cmocka_unit_test(test_mb),
    cmocka_unit_test(test_lp_basic),
    cmocka_unit_test(test_lp_flush_cache),
    cmocka_unit_test(test_lp_save_restore),
    cmocka_unit_test(test_slab),
    cmocka_unit_test(test_slab_sizes),
    cmocka_unit_test(test_shared),
    cmocka_unit_test(test_accounting_threads),
    cmocka_unit_test(test_accounting_thread_waves),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
