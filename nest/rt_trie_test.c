/*
 * Unit tests of a table's prefix trie (nest/rt_trie.c): random adds and
 * removes against a plain list of the prefixes, walks inside random
 * prefixes whole and in steps of any size; and readers walking while a
 * writer changes the trie, each seeing in order every prefix that stayed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <cmocka.h>

#include "nest/rt_trie.h"
#include "lib/rcu.h"

/* Prefixes in a small space, so that they nest and share branch points:
 * 10.0.0.0/12 (2001:db8::/40), one in eight anywhere; lengths 8-32
 * (16-128), most of them in a band. */
static void
rand_prefix(net_addr *n, int v6, unsigned *seed)
{
  u32 hi = 0x0a000000 | (rand_r(seed) & 0x000fffff);
  u32 top = 0x20010db8;
  if (rand_r(seed) % 8 == 0) {
    hi ^= (u32) rand_r(seed) << 20;
    top ^= (u32) rand_r(seed) << 8;
  }
  uint len = v6 ? (rand_r(seed) % 3 ? 32 + rand_r(seed) % 33 : 16 + rand_r(seed) % 113)
                : (rand_r(seed) % 3 ? 12 + rand_r(seed) % 13 : 8 + rand_r(seed) % 25);
  if (v6)
    net_fill_ip6(n, ip6_build(top, hi << 8, rand_r(seed) % 4 ? 0 : (u32) rand_r(seed), (u32) rand_r(seed)), len);
  else
    net_fill_ip4(n, ip4_from_u32(hi), len);
  net_normalize(n);
}

static int
net_cmp_q(const void *a, const void *b)
{
  return net_compare(a, b);
}

/* The model: the prefixes held, unordered. */
struct model { net_addr *v; uint len; };

static int
model_find(const struct model *m, const net_addr *n)
{
  for (uint i = 0; i < m->len; i++)
    if (net_equal(&m->v[i], n))
      return (int) i;
  return -1;
}

/* What a walk inside `in` must give: the model's prefixes within it, sorted. */
static uint
model_within(const struct model *m, const net_addr *in, net_addr *out)
{
  uint k = 0;
  for (uint i = 0; i < m->len; i++)
    if (net_in_net(&m->v[i], in))
      net_copy(&out[k++], &m->v[i]);
  qsort(out, k, sizeof(net_addr), net_cmp_q);
  return k;
}

/* The walk inside `in` in steps of step prefixes (each in its own read
 * section, resuming after the last): how many into out. */
static uint
walk_steps(const struct rt_trie *t, const net_addr *in, uint step, net_addr *out, uint cap)
{
  uint k = 0, got;
  do {
    rcu_read_lock();
    got = rt_trie_walk(t, in, k ? &out[k - 1] : NULL, &out[k], MIN(step, cap - k));
    rcu_read_unlock();
    k += got;
  } while (got == step && k < cap);
  return k;
}

static void
check_walks(const struct rt_trie *t, const struct model *m, int v6, unsigned *seed)
{
  enum { CAP = 4096 };
  static net_addr want[CAP], got[CAP];
  net_addr in;
  for (uint q = 0; q < 40; q++) {
    rand_prefix(&in, v6, seed);
    if (q == 0)
      v6 ? net_fill_ip6(&in, IP6_NONE, 0) : net_fill_ip4(&in, IP4_NONE, 0);
    else if (q % 3 == 0) {
      /* a shorter prefix, so that walks find more */
      in.pxlen = in.pxlen > 8 ? in.pxlen - 8 : 0;
      net_normalize(&in);
    }
    uint nw = model_within(m, &in, want);
    uint step = q % 4 == 0 ? CAP : 1 + rand_r(seed) % 7;
    uint ng = walk_steps(t, &in, step, got, CAP);
    assert_int_equal(ng, nw);
    for (uint i = 0; i < nw; i++)
      assert_true(net_equal(&got[i], &want[i]));
  }
}

static void
random_against_model(int v6)
{
  rcu_thread_register();
  unsigned seed = v6 ? 77 : 42;
  struct rt_trie *t = rt_trie_new(v6 ? NET_IP6 : NET_IP4);
  struct model m = { calloc(3000, sizeof(net_addr)), 0 };
  for (uint round = 0; round < 12; round++) {
    /* grow to some 2,500 prefixes, then shrink, then grow again */
    uint target = round % 4 == 3 ? 200 : 2500;
    for (uint op = 0; op < 3000; op++) {
      net_addr n;
      rand_prefix(&n, v6, &seed);
      int at = model_find(&m, &n);
      int add = m.len < target ? rand_r(&seed) % 4 != 0 : rand_r(&seed) % 4 == 0;
      if (at < 0 && add && m.len < 3000) {
        rt_trie_add(t, &n);
        net_copy(&m.v[m.len++], &n);
      } else if (!add && m.len) {
        /* a held prefix most of the time, else one that is not there */
        if (at < 0 && rand_r(&seed) % 8)
          net_copy(&n, &m.v[(at = (int) (rand_r(&seed) % m.len))]);
        rt_trie_remove(t, &n);
        if (at >= 0)
          net_copy(&m.v[at], &m.v[--m.len]);
      }
    }
    assert_int_equal(rt_trie_prefixes(t), m.len);
    /* branch points have two subtrees: fewer of them than prefixes */
    assert_true(rt_trie_nodes(t) < 2 * m.len + 1);
    check_walks(t, &m, v6, &seed);
  }
  /* removing every prefix leaves no node */
  while (m.len)
    rt_trie_remove(t, &m.v[--m.len]);
  assert_int_equal(rt_trie_prefixes(t), 0);
  assert_int_equal(rt_trie_nodes(t), 0);
  rt_trie_free(t);
  free(m.v);
  rcu_thread_unregister();
}

static void test_random_ip4(void **state UNUSED) { random_against_model(0); }
static void test_random_ip6(void **state UNUSED) { random_against_model(1); }

/* The walk's order and bounds on a small example: a prefix first, then
 * what is inside it by address; the prefix walked in holds itself; a
 * branch point (10.0.0.0/14 here, of /15s) is no prefix. */
static void
test_order_and_bounds(void **state UNUSED)
{
  rcu_thread_register();
  const char *held[] = { "10.1.0.0/24", "10.1.0.0/16", "10.1.128.0/17", "10.0.0.0/8", "9.0.0.0/8",
                         "10.1.0.0/17", "11.0.0.0/8", "10.0.0.0/15", "10.2.0.0/15", "0.0.0.0/0" };
  struct rt_trie *t = rt_trie_new(NET_IP4);
  net_addr n[16], in, out[16];
  for (uint i = 0; i < ARRAY_SIZE(held); i++) {
    assert_true(net_pton(held[i], &n[i]));
    rt_trie_add(t, &n[i]);
  }
  const char *want[] = { "10.0.0.0/8", "10.0.0.0/15", "10.1.0.0/16", "10.1.0.0/17", "10.1.0.0/24",
                         "10.1.128.0/17", "10.2.0.0/15" };
  assert_true(net_pton("10.0.0.0/8", &in));
  rcu_read_lock();
  uint k = rt_trie_walk(t, &in, NULL, out, 16);
  assert_int_equal(k, ARRAY_SIZE(want));
  char buf[NET_MAX_TEXT_LENGTH + 1];
  for (uint i = 0; i < k; i++) {
    net_ntop(&out[i], buf);
    assert_string_equal(buf, want[i]);
  }
  /* after a prefix that is not held: from the next one that is (a
   * longer one at the same address comes after it) */
  assert_true(net_pton("10.1.0.0/20", &n[15]));
  assert_int_equal(rt_trie_walk(t, &in, &n[15], out, 16), 3);
  net_ntop(&out[0], buf);
  assert_string_equal(buf, "10.1.0.0/24");
  assert_true(net_pton("10.1.0.0/25", &n[15]));
  assert_int_equal(rt_trie_walk(t, &in, &n[15], out, 16), 2);
  net_ntop(&out[0], buf);
  assert_string_equal(buf, "10.1.128.0/17");
  /* inside a prefix no net has: its subtree only */
  assert_true(net_pton("10.1.0.0/18", &in));
  assert_int_equal(rt_trie_walk(t, &in, NULL, out, 16), 1);
  net_ntop(&out[0], buf);
  assert_string_equal(buf, "10.1.0.0/24");
  rcu_read_unlock();
  rt_trie_free(t);
  rcu_thread_unregister();
}

/* --- Readers while a writer changes the trie --- */

enum { STABLE = 500, CHURN = 3000, READERS = 2 };
static struct rt_trie *shared;
static net_addr stable[STABLE];
static int writer_done;
static u32 reader_faults;

static void *
writer_main(void *arg UNUSED)
{
  rcu_thread_register();
  unsigned seed = 9;
  static net_addr churn[CHURN];
  static u8 in[CHURN];
  for (uint i = 0; i < CHURN; i++) {
    /* prefixes of 10.0.0.0/12, none of them stable (those are 10.16/12) */
    rand_prefix(&churn[i], 0, &seed);
    ((net_addr_ip4 *) &churn[i])->prefix.addr &= ~0x00f00000u;
  }
  for (uint op = 0; op < 400000; op++) {
    uint i = rand_r(&seed) % CHURN;
    /* the table's writer lock stands alone here: one writer */
    if (in[i])
      rt_trie_remove(shared, &churn[i]);
    else
      rt_trie_add(shared, &churn[i]);
    in[i] ^= 1;
  }
  __atomic_store_n(&writer_done, 1, __ATOMIC_RELEASE);
  rcu_thread_unregister();
  return NULL;
}

static void *
reader_main(void *arg)
{
  rcu_thread_register();
  unsigned seed = (unsigned) (uintptr_t) arg;
  net_addr in, out[64], last;
  static __thread u8 seen[STABLE];
  u32 faults = 0;
  assert_true(net_pton("10.0.0.0/8", &in));
  while (!__atomic_load_n(&writer_done, __ATOMIC_ACQUIRE)) {
    memset(seen, 0, sizeof(seen));
    int walked = 0;
    uint got;
    do {
      uint step = 1 + rand_r(&seed) % 64;
      rcu_read_lock();
      got = rt_trie_walk(shared, &in, walked ? &last : NULL, out, step);
      rcu_read_unlock();
      for (uint i = 0; i < got; i++) {
        /* strictly in order, across steps too */
        faults += walked && net_compare(&out[i], &last) <= 0;
        net_copy(&last, &out[i]);
        walked = 1;
        const net_addr_ip4 *a = (const net_addr_ip4 *) &out[i];
        if ((a->prefix.addr & 0xfff00000) == 0x0a100000) {
          net_addr *x = bsearch(&out[i], stable, STABLE, sizeof(net_addr), net_cmp_q);
          faults += !x;
          if (x)
            seen[x - stable] = 1;
        }
      }
      if (got < step)
        break;
    } while (1);
    /* every stable prefix was seen */
    for (uint i = 0; i < STABLE; i++)
      faults += !seen[i];
  }
  __atomic_add_fetch(&reader_faults, faults, __ATOMIC_SEQ_CST);
  rcu_thread_unregister();
  return NULL;
}

static void
test_readers_during_changes(void **state UNUSED)
{
  rcu_thread_register();
  shared = rt_trie_new(NET_IP4);
  unsigned seed = 5;
  for (uint i = 0; i < STABLE; i++) {
    net_addr n;
    do {
      rand_prefix(&n, 0, &seed);
      ((net_addr_ip4 *) &n)->prefix.addr = (((net_addr_ip4 *) &n)->prefix.addr & ~0x00f00000u) | 0x00100000u;
      net_normalize(&n);
    } while ((((net_addr_ip4 *) &n)->prefix.addr & 0xfff00000) != 0x0a100000 || n.pxlen < 12 ||
             bsearch(&n, stable, i, sizeof(net_addr), net_cmp_q));
    net_copy(&stable[i], &n);
    qsort(stable, i + 1, sizeof(net_addr), net_cmp_q);
  }
  for (uint i = 0; i < STABLE; i++)
    rt_trie_add(shared, &stable[i]);
  pthread_t w, r[READERS];
  for (uint i = 0; i < READERS; i++)
    assert_int_equal(pthread_create(&r[i], NULL, reader_main, (void *) (uintptr_t) (i + 1)), 0);
  assert_int_equal(pthread_create(&w, NULL, writer_main, NULL), 0);
  pthread_join(w, NULL);
  for (uint i = 0; i < READERS; i++)
    pthread_join(r[i], NULL);
  assert_int_equal(reader_faults, 0);
  rcu_call_barrier();
  rt_trie_free(shared);
  rcu_thread_unregister();
}

static const struct CMUnitTest tests[] = {
  cmocka_unit_test(test_order_and_bounds),
  cmocka_unit_test(test_random_ip4),
  cmocka_unit_test(test_random_ip6),
  cmocka_unit_test(test_readers_during_changes),
};

int
main(void)
{
  return cmocka_run_group_tests(tests, NULL, NULL);
}
