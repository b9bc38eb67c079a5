/*
 * Unit tests of list edits with constants (EA_EDIT: deferred until read,
 * memoized per thread by input list and edits run) against the same
 * edits compiled the plain way (a variable operand is never fused): equal
 * results in every order of reads, writes, unsets and verdicts; memo hits
 * give the interned list itself; a run with more edits than a key holds,
 * two filters on one list, and a full memo still give the right lists.
 * Also nest/ea_memo.c on its own: replacement within a bucket, growth,
 * and the references it holds.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "filter/f_cmocka.h"
#include "filter/f_test.h"
#include "filter/filter.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/rcu.h"
#include "nest/ea_memo.h"
#include "nest/proto.h"
#include "proto/device/device.h"

/* Each filter twice: fused (constants) and plain (the same values read
 * from a variable, which the compiler does not fuse). */
static const char *edit_conf =
  "define S = [(64500, *)];\n"
  "define L = (64500, 1000, 1);\n"
  "filter e_scrub { bgp_community.delete(S); bgp_large_community.add(L); accept; }\n"
  "filter p_scrub { pair set ps = S; lc pl = L; bgp_community.delete(ps); bgp_large_community.add(pl); accept; }\n"
  /* read after an edit, and an edit of an attribute read (and cached) before */
  "filter e_read { if (65001, 1) ~ bgp_community then bgp_community.add((1, 1));\n"
  "  bgp_community.add((1, 2)); if (1, 2) ~ bgp_community then bgp_med = bgp_community.len; accept; }\n"
  "filter p_read { pair x = (1, 1); pair y = (1, 2); if (65001, 1) ~ bgp_community then bgp_community.add(x);\n"
  "  bgp_community.add(y); if (1, 2) ~ bgp_community then bgp_med = bgp_community.len; accept; }\n"
  "filter e_unset { bgp_community.add((1, 2)); unset(bgp_community); bgp_large_community.add(L);\n"
  "  if defined(bgp_large_community) then accept; reject; }\n"
  "filter p_unset { lc pl = L; pair y = (1, 2); bgp_community.add(y); unset(bgp_community); bgp_large_community.add(pl);\n"
  "  if defined(bgp_large_community) then accept; reject; }\n"
  "filter e_path { bgp_path.delete(65002); bgp_path.filter([65001, 65003]); accept; }\n"
  "filter p_path { int x = 65002; int set y = [65001, 65003]; bgp_path.delete(x); bgp_path.filter(y); accept; }\n"
  "filter e_reject { bgp_community.add((2, 2)); if bgp_med = 5 then reject; bgp_community.add((3, 3)); accept; }\n"
  "filter p_reject { pair x = (2, 2); pair y = (3, 3); bgp_community.add(x); if bgp_med = 5 then reject;\n"
  "  bgp_community.add(y); accept; }\n"
  /* constants set: a scalar read back, a value equal to the one there */
  "filter e_set { bgp_local_pref = 200; bgp_med = 5; if bgp_local_pref = 200 then bgp_med = 7; accept; }\n"
  "filter p_set { int x = 200; int y = 5; int z = 7; bgp_local_pref = x; bgp_med = y;\n"
  "  if bgp_local_pref = 200 then bgp_med = z; accept; }\n"
  /* nothing to scrub: no change, no list */
  "filter e_none { bgp_community.delete([(9, *)]); accept; }\n"
  /* more edits than a memo key holds, through a function */
  "function many() { bgp_community.add((7, 1)); bgp_community.add((7, 2)); bgp_community.add((7, 3));\n"
  "  bgp_community.add((7, 4)); bgp_community.add((7, 5)); bgp_community.add((7, 6)); bgp_community.add((7, 7)); }\n"
  "filter e_many { many(); many(); bgp_community.delete([(7, 3)]); accept; }\n"
  /* e_scrub's edits in other code (one filter per route-server client),
   * and one constant other than e_scrub's; reading the net, none is pure
   * (only the edits' memo keeps their results) */
  "filter e_scrub_net { if net.len > 32 then reject; bgp_community.delete(S); bgp_large_community.add(L); accept; }\n"
  "filter e_scrub_too { if net.len > 32 || bgp_med = 999 then reject; bgp_community.delete([(64500, *)]);\n"
  "  bgp_large_community.add((64500, 1000, 1)); accept; }\n"
  "filter e_scrub_other { if net.len > 32 then reject; bgp_community.delete([(64501, *)]);\n"
  "  bgp_large_community.add(L); accept; }\n"
  /* pure or not (filter/verdict_memo.c) */
  "function f_pure() { return bgp_med > 10; }\n"
  "function f_net() { return net.len = 8; }\n"
  "filter v_pure { if f_pure() then reject; bgp_community.add((5, 5)); accept; }\n"
  "filter v_net { if f_net() then reject; accept; }\n"
  "filter v_netset { if net ~ [10.0.0.0/8] then reject; accept; }\n"
  "filter v_proto { if proto = \"x\" then reject; accept; }\n"
  "filter v_print { print bgp_med; accept; }\n"
  "filter v_accept_print { accept \"a\"; }\n"
  "filter v_error { if bgp_med = 7 then bgp_med = bgp_med / (bgp_med - 7); accept; }\n";

static struct config *cfg;
static linpool *lp;
static net_addr net;

/* f on a (fresh or memoized), the verdict in *res; the result list
 * (a reference for the caller) or a itself when unchanged. */
static struct ea_list *
run(const char *name, struct ea_list *a, enum f_result *res)
{
  struct f_route r = { .net = &net, .attrs = a };
  *res = f_run(f_test_find(cfg, name), &r, lp);
  lp_flush(lp);
  return r.out ? r.out : ea_ref(a);
}

static struct ea_list *
route(u32 first, u32 med)
{
  u32 path[] = { first, 65002, 65003 };
  u32 comm[] = { (64500u << 16) | 1, (65001u << 16) | 1, (64500u << 16) | 7 };
  return f_test_bgp_attrs(path, 3, comm, 3, med);
}

/* Fused and plain agree; the fused one answers the same again (memo). */
static void
check_same(const char *fused, const char *plain, struct ea_list *a)
{
  enum f_result r1, r2, r3;
  struct ea_list *x = run(fused, a, &r1);
  struct ea_list *y = run(plain, a, &r2);
  struct ea_list *z = run(fused, a, &r3);
  assert_int_equal(r1, r2);
  assert_int_equal(r1, r3);
  assert_ptr_equal(x, y);   /* interned: equal lists are one list */
  assert_ptr_equal(x, z);
  ea_unref(x);
  ea_unref(y);
  ea_unref(z);
}

static uint
edits_in(const char *name)
{
  const struct filter *f = f_test_find(cfg, name);
  uint n = 0;
  for (uint i = 0; i < f->len; i++)
    n += f->code[i].op == FI_EA_EDIT;
  return n;
}

static void
test_fused_as_plain(void **state UNUSED)
{
  static const char *const pairs[][2] = {
    { "e_scrub", "p_scrub" }, { "e_read", "p_read" }, { "e_unset", "p_unset" },
    { "e_path", "p_path" }, { "e_reject", "p_reject" }, { "e_set", "p_set" },
  };
  for (uint i = 0; i < ARRAY_SIZE(pairs); i++) {
    assert_int_equal(edits_in(pairs[i][0]), i == 5 ? 3 : 2);
    assert_int_equal(edits_in(pairs[i][1]), 0);
  }
  for (u32 med = 4; med <= 6; med++)
    for (u32 first = 65001; first <= 65002; first++) {
      struct ea_list *a = route(first, med);
      for (uint i = 0; i < ARRAY_SIZE(pairs); i++)
        check_same(pairs[i][0], pairs[i][1], a);
      ea_unref(a);
    }
}

static void
test_unchanged(void **state UNUSED)
{
  struct ea_list *a = route(65001, 5);
  for (int i = 0; i < 2; i++) {
    struct f_route r = { .net = &net, .attrs = a };
    assert_int_equal(f_run(f_test_find(cfg, "e_none"), &r, lp), F_ACCEPT);
    assert_null(r.out);
  }
  ea_unref(a);
}

static void
test_many_edits(void **state UNUSED)
{
  struct ea_list *a = route(65001, 5);
  for (int i = 0; i < 2; i++) {
    enum f_result res;
    struct ea_list *o = run("e_many", a, &res);
    assert_int_equal(res, F_ACCEPT);
    const struct eattr *e = ea_find(o, EA_BGP(EAB_COMMUNITY));
    /* 3 + (7,1),(7,2),(7,4)..(7,7): adding a community twice keeps one */
    assert_int_equal(e->len, 4 * (3 + 6));
    ea_unref(o);
  }
  ea_unref(a);
}

/* Two filters, one list: each its own result. Then more lists than the
 * memo holds, twice over: every answer right. */
static void
test_filters_and_overflow(void **state UNUSED)
{
  struct ea_list *a = route(65001, 5);
  enum f_result r1, r2;
  struct ea_list *x = run("e_scrub", a, &r1), *y = run("e_reject", a, &r2);
  assert_ptr_not_equal(x, y);
  assert_int_equal(r2, F_REJECT);
  ea_unref(x);
  ea_unref(y);
  ea_unref(a);

  enum { N = 20000 };
  for (int pass = 0; pass < 2; pass++)
    for (u32 i = 0; i < N; i++) {
      struct ea_list *b = route(65001, 100 + i);
      struct ea_list *o = run("e_scrub", b, &r1);
      assert_int_equal(ea_find(o, EA_BGP(EAB_MULTI_EXIT_DISC))->val, 100 + i);
      assert_int_equal(ea_find(o, EA_BGP(EAB_COMMUNITY))->len, 4);
      ea_unref(o);
      ea_unref(b);
    }
}

/* --- nest/ea_memo.c --- */

static struct ea_list *
med_list(u32 med)
{
  struct ea_builder b;
  ea_builder_init(&b);
  ea_set_int(&b, EA_BGP(EAB_MULTI_EXIT_DISC), EAF_INT, 0x80, med);
  return ea_intern(&b);
}

static u32
uc(const struct ea_list *l)
{
  return __atomic_load_n(&l->uc, __ATOMIC_RELAXED);
}

/* The edits of filter name, in order. */
static uint
edits_of(const char *name, const struct f_edit **out, uint max)
{
  const struct filter *f = f_test_find(cfg, name);
  uint n = 0;
  for (uint i = 0; i < f->len && n < max; i++)
    if (f->code[i].op == FI_EA_EDIT)
      out[n++] = f->code[i].p.p;
  return n;
}

/* Filters of one config making the same edits (an update group's class
 * filters) share one edit each and one memo entry per list: the second
 * filter's run is a hit, which takes no reference on the list. An edit
 * with another constant is an edit of its own, and its run a miss. */
static void
test_same_edits_share_entries(void **state UNUSED)
{
  const struct f_edit *x[2], *y[2], *z[2];
  assert_int_equal(edits_of("e_scrub_net", x, 2), 2);
  assert_int_equal(edits_of("e_scrub_too", y, 2), 2);
  assert_int_equal(edits_of("e_scrub_other", z, 2), 2);
  assert_ptr_equal(x[0], y[0]);
  assert_ptr_equal(x[1], y[1]);
  assert_ptr_not_equal(x[0], z[0]);
  assert_ptr_equal(x[1], z[1]);
  const struct filter *fx = f_test_find(cfg, "e_scrub_net"), *fy = f_test_find(cfg, "e_scrub_too");
  assert_true(fx->memo_seed == fy->memo_seed);

  struct ea_list *a = route(65001, 77777);   /* a list no test met before */
  u32 a_uc = uc(a);
  enum f_result r1, r2, r3;
  struct ea_list *o1 = run("e_scrub_net", a, &r1);
  assert_int_equal(uc(a), a_uc + 1);          /* the memo's entry holds it */
  struct ea_list *o2 = run("e_scrub_too", a, &r2);
  assert_int_equal(uc(a), a_uc + 1);          /* the same entry */
  assert_ptr_equal(o1, o2);
  struct ea_list *o3 = run("e_scrub_other", a, &r3);
  assert_int_equal(uc(a), a_uc + 2);
  assert_ptr_not_equal(o1, o3);
  assert_int_equal(r1, F_ACCEPT);
  assert_int_equal(r2, F_ACCEPT);
  assert_int_equal(r3, F_ACCEPT);
  /* e_scrub_other kept (64500, 1) and (64500, 7) */
  assert_int_equal(ea_find(o1, EA_BGP(EAB_COMMUNITY))->len, 4);
  assert_int_equal(ea_find(o3, EA_BGP(EAB_COMMUNITY))->len, 12);
  ea_unref(o1);
  ea_unref(o2);
  ea_unref(o3);
  ea_unref(a);
}

/* f_run() of name on a at net n: the verdict, and the result list (a
 * reference for the caller, NULL if none). */
static enum f_result
run_at(const char *name, struct ea_list *a, const net_addr *n, bool verdict_only, struct ea_list **out)
{
  struct f_route r = { .net = n, .attrs = a, .verdict_only = verdict_only };
  enum f_result res = f_run(f_test_find(cfg, name), &r, lp);
  lp_flush(lp);
  *out = r.out;
  return res;
}

/* Which filters are pure: reading the net (also through a function), the
 * protocol, printing, are not. A pure one's verdict is remembered per
 * list (a hit takes no reference on it, and gives the same result); an
 * impure one is run each time: a memo would give the /8's verdict to the
 * /16. Run-time errors are not remembered. */
static void
test_pure_verdicts(void **state UNUSED)
{
  static const struct { const char *name; bool pure; } want[] = {
    { "e_scrub", true }, { "v_pure", true }, { "e_scrub_net", false }, { "v_net", false },
    { "v_netset", false }, { "v_proto", false }, { "v_print", false }, { "v_accept_print", false },
    { "v_error", true },
  };
  for (uint i = 0; i < ARRAY_SIZE(want); i++)
    if (!!f_test_find(cfg, want[i].name)->pure != want[i].pure)
      fail_msg("%s: pure %d, want %d", want[i].name, f_test_find(cfg, want[i].name)->pure, want[i].pure);

  net_addr n16;
  net_fill_ip4(&n16, ip4_from_u32(0x0a000000), 16);
  struct ea_list *a = route(65001, 5), *o1, *o2, *o3;
  u32 a_uc = uc(a);
  /* v_net: the net decides */
  assert_int_equal(run_at("v_net", a, &net, false, &o1), F_REJECT);
  assert_int_equal(run_at("v_net", a, &n16, false, &o2), F_ACCEPT);
  assert_int_equal(uc(a), a_uc);
  /* v_pure accepts with a community added: the second run is a hit */
  assert_int_equal(run_at("v_pure", a, &net, false, &o1), F_ACCEPT);
  assert_non_null(o1);
  u32 held = uc(a);
  assert_int_equal(held, a_uc + 2);     /* the verdict's entry and the edits' */
  assert_int_equal(run_at("v_pure", a, &n16, false, &o2), F_ACCEPT);
  assert_ptr_equal(o1, o2);
  assert_int_equal(uc(a), held);
  /* a verdict only: no list */
  assert_int_equal(run_at("v_pure", a, &net, true, &o3), F_ACCEPT);
  assert_null(o3);
  ea_unref(o1);
  ea_unref(o2);
  /* verdicts only leave nothing; a full run's reject is remembered */
  struct ea_list *b = route(65001, 6), *c = route(65001, 11);
  u32 b_uc = uc(b), c_uc = uc(c);
  assert_int_equal(run_at("v_pure", b, &net, true, &o1), F_ACCEPT);
  assert_null(o1);
  assert_int_equal(uc(b), b_uc);
  assert_int_equal(run_at("v_pure", c, &net, true, &o1), F_REJECT);
  assert_int_equal(uc(c), c_uc);
  for (int i = 0; i < 2; i++) {
    assert_int_equal(run_at("v_pure", c, &net, false, &o1), F_REJECT);
    assert_null(o1);
    assert_int_equal(uc(c), c_uc + 1);
  }
  /* v_error divides by zero at med 7, each time */
  struct ea_list *d = route(65001, 7);
  u32 d_uc = uc(d);
  for (int i = 0; i < 2; i++) {
    assert_int_equal(run_at("v_error", d, &net, false, &o1), F_ERROR);
    assert_null(o1);
  }
  assert_int_equal(uc(d), d_uc);
  ea_unref(d);
  ea_unref(c);
  ea_unref(b);
  ea_unref(a);
}

/* Keys that share a bucket (same hash): the newest four stay, an old one
 * goes and drops its references, a key put again replaces itself. */
static void
test_memo_bucket(void **state UNUSED)
{
  struct ea_list *src = med_list(1);
  struct ea_list *out[6];
  u64 key[6];
  for (int i = 0; i < 6; i++) {
    out[i] = med_list(10 + i);
    key[i] = 1000 + i;
  }
  u32 src_uc = uc(src), out_uc = uc(out[0]);
  for (int i = 0; i < 5; i++) {
    struct ea_memo_key k = { .src = src, .hash = 77, .len = 8, .bytes = &key[i] };
    ea_memo_put(EA_MEMO_FILTER, &k, ea_ref(out[i]));
  }
  assert_int_equal(uc(src), src_uc + 4);
  assert_int_equal(uc(out[0]), out_uc);   /* the oldest went */
  for (int i = 0; i < 5; i++) {
    struct ea_memo_key k = { .src = src, .hash = 77, .len = 8, .bytes = &key[i] };
    struct ea_list *o = NULL;
    int found = ea_memo_get(EA_MEMO_FILTER, &k, &o);
    assert_int_equal(found, i > 0);
    if (found)
      assert_ptr_equal(o, out[i]);
  }
  /* key 3 again, another result: one entry, the new one */
  struct ea_memo_key k3 = { .src = src, .hash = 77, .len = 8, .bytes = &key[3] };
  ea_memo_put(EA_MEMO_FILTER, &k3, ea_ref(out[5]));
  struct ea_list *o;
  assert_true(ea_memo_get(EA_MEMO_FILTER, &k3, &o));
  assert_ptr_equal(o, out[5]);
  assert_int_equal(uc(out[3]), out_uc);
  assert_int_equal(uc(src), src_uc + 4);
  /* a different length is a different key */
  struct ea_memo_key k16 = { .src = src, .hash = 77, .len = 16, .bytes = (u64[2]){ 1003, 0 } };
  assert_false(ea_memo_get(EA_MEMO_FILTER, &k16, &o));
  /* a flush lets go of everything */
  ea_memo_flush();
  assert_int_equal(uc(src), src_uc);
  assert_int_equal(uc(out[5]), out_uc);
  assert_false(ea_memo_get(EA_MEMO_FILTER, &k3, &o));
  for (int i = 0; i < 6; i++)
    ea_unref(out[i]);
  ea_unref(src);
}

/* ea_memo_take() hands out references from the entry's stock: the result
 * gets one reference per take (never fewer), the stock goes back when the
 * entry is replaced, and a take of NULL takes nothing. */
static void
test_memo_take(void **state UNUSED)
{
  struct ea_list *src = med_list(4), *out = med_list(40), *other = med_list(41);
  u32 out_uc = uc(out);
  u64 key = 9, key2 = 10;
  struct ea_memo_key k = { .src = src, .hash = 91, .len = 8, .bytes = &key };
  struct ea_memo_key k2 = { .src = src, .hash = 92, .len = 8, .bytes = &key2 };
  ea_memo_put(EA_MEMO_FILTER, &k, ea_ref(out));
  ea_memo_put(EA_MEMO_FILTER, &k2, NULL);
  struct ea_list *taken[200];
  for (int i = 0; i < 200; i++) {
    assert_true(ea_memo_take(EA_MEMO_FILTER, &k, &taken[i]));
    assert_ptr_equal(taken[i], out);
    assert_true(uc(out) >= out_uc + 1 + (u32) i + 1);
  }
  struct ea_list *o = out;
  assert_true(ea_memo_take(EA_MEMO_FILTER, &k2, &o));
  assert_null(o);
  /* The takers let go first; then replacing the entry returns the rest. */
  for (int i = 0; i < 200; i++)
    ea_unref(taken[i]);
  assert_true(uc(out) > out_uc);
  ea_memo_put(EA_MEMO_FILTER, &k, ea_ref(other));
  assert_int_equal(uc(out), out_uc);
  ea_memo_flush();
  ea_unref(other);
  ea_unref(out);
  ea_unref(src);
}

/* A fresh memo (256 buckets) meets 2,048 keys spread evenly, twice: it
 * doubles once it has pushed out more entries than it holds, and then
 * holds them all. */
struct grow_arg {
  struct ea_list *src;
  uint found;
};

static void *
memo_grow_thread(void *arg)
{
  struct grow_arg *g = arg;
  rcu_thread_register();
  for (int pass = 0; pass < 2; pass++)
    for (u64 i = 0; i < 2048; i++) {
      struct ea_memo_key k = { .src = g->src, .hash = i, .len = 8, .bytes = &i };
      ea_memo_put(EA_MEMO_FILTER, &k, NULL);
    }
  g->found = 0;
  for (u64 i = 0; i < 2048; i++) {
    struct ea_memo_key k = { .src = g->src, .hash = i, .len = 8, .bytes = &i };
    struct ea_list *o;
    g->found += ea_memo_get(EA_MEMO_FILTER, &k, &o);
  }
  rcu_thread_unregister();
  return NULL;
}

static void
test_memo_grows(void **state UNUSED)
{
  struct grow_arg g = { .src = med_list(3) };
  u32 before = uc(g.src);
  pthread_t t;
  pthread_create(&t, NULL, memo_grow_thread, &g);
  pthread_join(t, NULL);
  assert_int_equal(g.found, 2048);
  assert_int_equal(uc(g.src), before);
  ea_unref(g.src);
}

static void *
memo_in_thread(void *arg)
{
  rcu_thread_register();
  u64 key = 5;
  struct ea_memo_key k = { .src = arg, .hash = 5, .len = 8, .bytes = &key };
  ea_memo_put(EA_MEMO_FILTER, &k, ea_ref(arg));
  ea_memo_prefetch(EA_MEMO_FILTER, 5);
  struct ea_list *o;
  assert_true(ea_memo_take(EA_MEMO_FILTER, &k, &o));
  ea_unref(o);
  rcu_thread_unregister();
  return NULL;
}

static void
test_memo_thread_exit(void **state UNUSED)
{
  struct ea_list *src = med_list(2);
  u32 before = uc(src);
  pthread_t t;
  pthread_create(&t, NULL, memo_in_thread, src);
  pthread_join(t, NULL);
  assert_int_equal(uc(src), before);
  ea_unref(src);
}

int
main(void)
{
  resource_init();
  log_init("f_edit_test");
  hash_seed_init();
  ea_init();
  proto_build(&proto_device);
  rcu_thread_register();
  cfg = f_test_parse_ok(edit_conf);
  lp = lp_new(rp_new(root_pool(), MEM_CONFIG, "edit test"));
  net_fill_ip4(&net, ip4_from_u32(0x0a000000), 8);
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_fused_as_plain),
    cmocka_unit_test(test_unchanged),
    cmocka_unit_test(test_many_edits),
    cmocka_unit_test(test_filters_and_overflow),
    cmocka_unit_test(test_same_edits_share_entries),
    cmocka_unit_test(test_pure_verdicts),
    cmocka_unit_test(test_memo_bucket),
    cmocka_unit_test(test_memo_thread_exit),
    cmocka_unit_test(test_memo_take),
    cmocka_unit_test(test_memo_grows),
  };
  int res = cmocka_run_group_tests(tests, NULL, NULL);
  config_unref(cfg);
  return res;
}
