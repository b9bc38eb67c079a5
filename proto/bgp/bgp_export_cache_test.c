/*
 * Unit tests for proto/bgp/bgp_export_cache.c: one entry per (attributes,
 * source session, MED flag, profile); equal profiles share it, any field
 * of the key that differs misses; a full cache empties and keeps
 * answering right; references are held while cached and dropped when a
 * thread's cache goes with it. Equal export profiles intern to one
 * number, others to others, and a number is never given out again.
 */
#include <pthread.h>
#include "proto/bgp/bgp_test.h"
#include "proto/bgp/bgp.h"

static uint makes;

struct make_ctx {
  u32 med;                      /* the made list's MED: tells results apart */
};

static struct ea_list *
make_list(void *ctx)
{
  struct make_ctx *m = ctx;
  makes++;
  struct ea_builder b;
  ea_builder_init(&b);
  ea_set_int(&b, BGP_EA(BA_MULTI_EXIT_DISC), EAF_INT, BAF_OPTIONAL, m->med);
  return ea_intern(&b);
}

static struct ea_list *
src_list(u32 local_pref)
{
  struct ea_builder b;
  ea_builder_init(&b);
  ea_set_int(&b, BGP_EA(BA_LOCAL_PREF), EAF_INT, BAF_TRANSITIVE, local_pref);
  return ea_intern(&b);
}

static u32
med_of(const struct ea_list *l)
{
  const struct eattr *e = ea_find(l, BGP_EA(BA_MULTI_EXIT_DISC));
  assert_non_null(e);
  return e->val;
}

static struct bgp_export_key
key(const struct ea_list *src, u32 local_as)
{
  struct bgp_export_key k;
  memset(&k, 0, sizeof(k));
  k.src = src;
  k.gen = 7;
  k.prof_id = local_as;         /* the cache does not look into profiles */
  return k;
}

static void
test_hits_and_misses(void **state UNUSED)
{
  struct ea_list *s1 = src_list(100), *s2 = src_list(200);
  struct bgp_export_key k = key(s1, 65000);
  struct make_ctx m = { 1 };
  makes = 0;
  assert_int_equal(med_of(bgp_export_cache_get(&k, make_list, &m)), 1);
  m.med = 2;
  /* an equal key from another session with the same profile: cached */
  struct bgp_export_key same = key(s1, 65000);
  assert_int_equal(med_of(bgp_export_cache_get(&same, make_list, &m)), 1);
  assert_int_equal(makes, 1);

  /* each part of the key on its own */
  struct bgp_export_key v[4] = { key(s2, 65000), key(s1, 65000), key(s1, 65000), key(s1, 65001) };
  v[1].gen = 8;
  v[2].med_fresh = 1;
  for (int i = 0; i < 4; i++) {
    m.med = 10 + i;
    assert_int_equal(med_of(bgp_export_cache_get(&v[i], make_list, &m)), 10 + i);
  }
  assert_int_equal(makes, 5);
  for (int i = 0; i < 4; i++)
    assert_int_equal(med_of(bgp_export_cache_get(&v[i], make_list, &m)), 10 + i);
  assert_int_equal(makes, 5);
  ea_unref(s1);
  ea_unref(s2);
}

/* "Not exported" (NULL) is a result like any other. */
static struct ea_list *make_null(void *ctx UNUSED) { makes++; return NULL; }

static void
test_null_cached(void **state UNUSED)
{
  struct ea_list *s = src_list(300);
  struct bgp_export_key k = key(s, 64999);
  makes = 0;
  assert_null(bgp_export_cache_get(&k, make_null, NULL));
  assert_null(bgp_export_cache_get(&k, make_null, NULL));
  assert_int_equal(makes, 1);
  ea_unref(s);
}

/* Far more keys than the cache holds, twice: every answer right. */
static void
test_overflow(void **state UNUSED)
{
  enum { N = 20000 };
  struct ea_list *s = src_list(400);
  for (int pass = 0; pass < 2; pass++)
    for (u32 i = 0; i < N; i++) {
      struct bgp_export_key k = key(s, 1000 + i);
      struct make_ctx m = { i };
      assert_int_equal(med_of(bgp_export_cache_get(&k, make_list, &m)), i);
    }
  ea_unref(s);
}

/* A cached source stays referenced; a thread's exit lets go of it. */
static void *
cache_in_thread(void *arg)
{
  rcu_thread_register();
  struct bgp_export_key k = key(arg, 4242);
  struct make_ctx m = { 5 };
  bgp_export_cache_get(&k, make_list, &m);
  rcu_thread_unregister();
  return NULL;
}

static void
test_thread_exit_drops_refs(void **state UNUSED)
{
  struct ea_list *s = src_list(500);
  u32 before = __atomic_load_n(&s->uc, __ATOMIC_RELAXED);
  pthread_t t;
  pthread_create(&t, NULL, cache_in_thread, s);
  pthread_join(t, NULL);
  assert_int_equal(__atomic_load_n(&s->uc, __ATOMIC_RELAXED), before);
  struct bgp_export_key k = key(s, 4242);
  struct make_ctx m = { 6 };
  bgp_export_cache_get(&k, make_list, &m);
  assert_int_equal(__atomic_load_n(&s->uc, __ATOMIC_RELAXED), before + 1);
  ea_unref(s);
}

static void
test_profiles(void **state UNUSED)
{
  struct bgp_export_profile a, b;
  memset(&a, 0, sizeof(a));
  memset(&b, 0, sizeof(b));
  a.local_as = b.local_as = 65000;
  a.rs_client = b.rs_client = 1;
  struct bgp_xprof *xa = bgp_export_profile_get(&a), *xb = bgp_export_profile_get(&b);
  assert_ptr_equal(xa, xb);
  b.ibgp = 1;
  struct bgp_xprof *xc = bgp_export_profile_get(&b);
  assert_true(xc->id != xa->id);
  u64 old = xc->id;
  bgp_export_profile_put(xc);
  /* the last reference gone, the same value comes back under a new number */
  xc = bgp_export_profile_get(&b);
  assert_true(xc->id != old && xc->id != xa->id);
  bgp_export_profile_put(xc);
  bgp_export_profile_put(xb);
  /* still held once */
  assert_int_equal(bgp_export_profile_get(&a)->id, xa->id);
  bgp_export_profile_put(xa);
  bgp_export_profile_put(xa);
}

int
main(void)
{
  bgp_test_init("bgp_export_cache_test");
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_hits_and_misses),
    cmocka_unit_test(test_null_cached),
    cmocka_unit_test(test_overflow),
    cmocka_unit_test(test_thread_exit_drops_refs),
    cmocka_unit_test(test_profiles),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
