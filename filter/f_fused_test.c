/*
 * Unit tests of the fused tests on route operands (`net.len <= 24`,
 * `net ~ SET`, `bgp_path.first != 3320`, `roa_check(...) = ROA_INVALID`,
 * `(64500, 0) ~ bgp_community`): the compiler emits the typed forms
 * (JCMP_NET, JMATCH_NET, JCMP_PATH, JMATCH_PATH, JMATCH_CLIST) where it
 * knows the operand's type, and every test, typed or checked at run time
 * (JCMP_RT, JMATCH_RT), decides as the same test does on a variable (never
 * fused) on random IPv4 and IPv6 routes, with empty, short and long paths,
 * against a ROA table with entries.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "conf/conf.h"
#include "filter/f_cmocka.h"
#include "filter/f_test.h"
#include "filter/filter.h"
#include "nest/proto.h"
#include "nest/reconf.h"
#include "nest/rt.h"
#include "nest/test_loops.h"
#include "proto/device/device.h"

/* Pairs: f_NAME fused, p_NAME the same test on a local variable. Each
 * accepts when its test holds. The fused form each pair should get. */
struct fused_pair { const char *name; uint op; };

static const struct fused_pair pairs[] = {
  { "len_ge", FI_JCMP_NET }, { "len_rev", FI_JCMP_NET }, { "len_ne", FI_JCMP_NET },
  { "type4", FI_JCMP_NET }, { "type6", FI_JCMP_NET },
  { "in_set", FI_JMATCH_NET }, { "not_in_set", FI_JMATCH_NET }, { "in_set6", FI_JMATCH_NET },
  { "nmatch", FI_JMATCH_NET },
  { "plen", FI_JCMP_PATH }, { "plen_rev", FI_JCMP_PATH }, { "first", FI_JCMP_PATH },
  { "last", FI_JCMP_PATH }, { "last_le", FI_JCMP_PATH }, { "nonagg", FI_JCMP_PATH },
  { "roa_inv", FI_JCMP_PATH }, { "roa_valid", FI_JCMP_PATH },
  { "path_in", FI_JMATCH_PATH }, { "path_mask", FI_JMATCH_PATH },
  { "comm_in", FI_JMATCH_CLIST }, { "comm_not", FI_JMATCH_CLIST },
  /* Not typed: the operand may be unset (a void bgp_med), or the type
   * differs from the constant's. */
  { "med", FI_JCMP_RT }, { "comm_len", FI_JCMP_RT }, { "comm_ip", FI_JMATCH_RT },
};

static const char *fused_conf =
  "roa4 table r4;\n"
  "define SET = [ 10.0.0.0/8{8,16}, 20.0.0.0/12+ ];\n"
  "define SET6 = [ 2001:db8::/32{32,48} ];\n"
  "filter f_len_ge { if net.len >= 16 then accept; reject; }\n"
  "filter p_len_ge { int x = net.len; if x >= 16 then accept; reject; }\n"
  "filter f_len_rev { if 20 > net.len then accept; reject; }\n"
  "filter p_len_rev { int x = net.len; if 20 > x then accept; reject; }\n"
  "filter f_len_ne { if net.len != 24 then accept; reject; }\n"
  "filter p_len_ne { int x = net.len; if x != 24 then accept; reject; }\n"
  "filter f_type4 { if net.type = NET_IP4 then accept; reject; }\n"
  "filter p_type4 { bool x = net.type = NET_IP4; if x then accept; reject; }\n"
  "filter f_type6 { if NET_IP6 != net.type then accept; reject; }\n"
  "filter p_type6 { bool x = NET_IP6 != net.type; if x then accept; reject; }\n"
  "filter f_in_set { if net ~ SET then accept; reject; }\n"
  "filter p_in_set { prefix x = net; if x ~ SET then accept; reject; }\n"
  "filter f_not_in_set { if !(net ~ SET) then accept; reject; }\n"
  "filter p_not_in_set { prefix x = net; if !(x ~ SET) then accept; reject; }\n"
  "filter f_in_set6 { if net ~ SET6 then accept; reject; }\n"
  "filter p_in_set6 { prefix x = net; if x ~ SET6 then accept; reject; }\n"
  "filter f_nmatch { if net !~ SET then accept; reject; }\n"
  "filter p_nmatch { prefix x = net; if x !~ SET then accept; reject; }\n"
  "filter f_plen { if bgp_path.len > 2 then accept; reject; }\n"
  "filter p_plen { int x = bgp_path.len; if x > 2 then accept; reject; }\n"
  "filter f_plen_rev { if 1 >= bgp_path.len then accept; reject; }\n"
  "filter p_plen_rev { int x = bgp_path.len; if 1 >= x then accept; reject; }\n"
  "filter f_first { if bgp_path.first = 65001 then accept; reject; }\n"
  "filter p_first { int x = bgp_path.first; if x = 65001 then accept; reject; }\n"
  "filter f_last { if bgp_path.last != 65003 then accept; reject; }\n"
  "filter p_last { int x = bgp_path.last; if x != 65003 then accept; reject; }\n"
  "filter f_last_le { if bgp_path.last <= 65002 then accept; reject; }\n"
  "filter p_last_le { int x = bgp_path.last; if x <= 65002 then accept; reject; }\n"
  "filter f_nonagg { if bgp_path.last_nonaggregated < 65003 then accept; reject; }\n"
  "filter p_nonagg { int x = bgp_path.last_nonaggregated; if x < 65003 then accept; reject; }\n"
  "filter f_roa_inv { if roa_check(r4, net, bgp_path.last) = ROA_INVALID then accept; reject; }\n"
  "filter p_roa_inv { bool x = roa_check(r4, net, bgp_path.last) = ROA_INVALID; if x then accept; reject; }\n"
  "filter f_roa_valid { if roa_check(r4, net, bgp_path.last) != ROA_VALID then accept; reject; }\n"
  "filter p_roa_valid { bool x = roa_check(r4, net, bgp_path.last) != ROA_VALID; if x then accept; reject; }\n"
  "filter f_med { if bgp_med > 50 then accept; reject; }\n"
  "filter p_med { int x = 50; if bgp_med > x then accept; reject; }\n"
  "filter f_path_in { if bgp_path ~ [65002, 65010..65020] then accept; reject; }\n"
  "filter p_path_in { bgppath x = bgp_path; if x ~ [65002, 65010..65020] then accept; reject; }\n"
  "filter f_path_mask { if bgp_path ~ [= * 65003 ? =] then accept; reject; }\n"
  "filter p_path_mask { bgppath x = bgp_path; if x ~ [= * 65003 ? =] then accept; reject; }\n"
  "filter f_comm_in { if (65000, 1) ~ bgp_community then accept; reject; }\n"
  "filter p_comm_in { clist x = bgp_community; if (65000, 1) ~ x then accept; reject; }\n"
  "filter f_comm_not { if (65000, 1) !~ bgp_community then accept; reject; }\n"
  "filter p_comm_not { clist x = bgp_community; if (65000, 1) !~ x then accept; reject; }\n"
  "filter f_comm_ip { if 253.232.0.1 ~ bgp_community then accept; reject; }\n"
  "filter p_comm_ip { clist x = bgp_community; if 253.232.0.1 ~ x then accept; reject; }\n"
  "filter f_comm_len { if bgp_community.len = 0 then accept; reject; }\n"
  "filter p_comm_len { int x = bgp_community.len; if x = 0 then accept; reject; }\n";

static uint
count_op(const struct filter *f, uint op)
{
  uint n = 0;
  for (uint i = 0; i < f->len; i++)
    n += f->code[i].op == op;
  return n;
}

static void
random_net(net_addr *n)
{
  uint len;
  if (random() % 4) {
    u32 a = random() % 3 == 0 ? 0x0a000000 | (random() & 0xffffff) : random() % 2 ? 0x14000000 | (random() & 0xfffff) : random();
    len = 4 + random() % 29;
    net_fill_ip4(n, ip4_from_u32(a), len);
  } else {
    ip6_addr a = { { 0x20010db8, random(), random(), random() } };
    if (random() % 2)
      a.addr[0] = random();
    len = 16 + random() % 49;
    net_fill_ip6(n, a, len);
  }
  net_normalize(n);
}

/* ROAs for 10.0.0.0/8 (max 16) from 65003 and 20.0.0.0/12 (max 24) from
 * 65002: routes of the set are valid or invalid by their origin and
 * length, others unknown. */
static void
roas_add(struct rtable *t, struct rte_src *src, struct ea_list *a)
{
  net_addr r;
  net_fill_roa4(&r, ip4_from_u32(0x0a000000), 8, 16, 65003);
  rt_update(t, &r, src, NULL, a, 0);
  net_fill_roa4(&r, ip4_from_u32(0x14000000), 12, 24, 65002);
  rt_update(t, &r, src, NULL, a, 0);
}

static const struct proto_class test_class = { .name = "Test", .keyword = "test", .class_id = 9 };
static struct proto test_proto = { .class = &test_class, .name = "test" };

static void config_unref_in_loop(void *c) { config_unref(c); }

static void
test_fused_same(void **state)
{
  (void) state;
  struct config *c = f_test_parse_ok(fused_conf);
  struct symbol *ts = cf_find_symbol(c, "r4");
  assert_non_null(ts);
  struct rtable *t = test_aux_table_new("r4", NET_ROA4);
  ts->table->table = t;
  struct rte_src *src = rt_get_source(&test_proto, 1);
  struct ea_builder b;
  ea_builder_init(&b);
  b.source = RTS_STATIC;
  struct ea_list *roa_attrs = ea_intern(&b);
  roas_add(t, src, roa_attrs);

  for (uint i = 0; i < ARRAY_SIZE(pairs); i++) {
    char name[40];
    bsnprintf(name, sizeof(name), "f_%s", pairs[i].name);
    if (!count_op(f_test_find(c, name), pairs[i].op))
      fail_msg("%s: no %s instruction", name, f_op_names[pairs[i].op]);
  }

  pool *p = rp_new(root_pool(), MEM_CONFIG, "fused test");
  linpool *lp = lp_new(p);
  srandom(7);
  uint accepted[ARRAY_SIZE(pairs)] = { 0 };
  const uint routes = 4000;
  for (uint k = 0; k < routes; k++) {
    net_addr n;
    random_net(&n);
    u32 path[40];
    uint plen = random() % 4 ? random() % 5 : random() % 40;
    for (uint j = 0; j < plen; j++)
      path[j] = 65000 + random() % 22;
    u32 comm[1] = { (65000u << 16) | 1 };
    struct ea_list *a = f_test_bgp_attrs(path, plen, comm, random() % 2, random() % 100);
    for (uint i = 0; i < ARRAY_SIZE(pairs); i++) {
      char fname[40], pname[40];
      bsnprintf(fname, sizeof(fname), "f_%s", pairs[i].name);
      bsnprintf(pname, sizeof(pname), "p_%s", pairs[i].name);
      struct f_route rf = { .net = &n, .attrs = a }, rp = { .net = &n, .attrs = a };
      /* An unset bgp_med does not compare: both fail alike, quietly. */
      struct f_exec_opts eo = { .silent = 1 };
      enum f_result x = f_exec(f_test_find(c, fname), &rf, lp, NULL, &eo);
      enum f_result y = f_exec(f_test_find(c, pname), &rp, lp, NULL, &eo);
      lp_flush(lp);
      if (x != y)
        fail_msg("%s on route %u: fused %d, plain %d", pairs[i].name, k, x, y);
      accepted[i] += x == F_ACCEPT;
    }
    ea_unref(a);
  }
  /* Every test went both ways on these routes. */
  for (uint i = 0; i < ARRAY_SIZE(pairs); i++)
    if (!accepted[i] || accepted[i] == routes)
      fail_msg("%s: accepted %u of %u routes", pairs[i].name, accepted[i], routes);

  rfree(p);
  ts->table->table = NULL;
  net_addr r;
  net_fill_roa4(&r, ip4_from_u32(0x0a000000), 8, 16, 65003);
  rt_update(t, &r, src, NULL, NULL, 0);
  net_fill_roa4(&r, ip4_from_u32(0x14000000), 12, 24, 65002);
  rt_update(t, &r, src, NULL, NULL, 0);
  rt_unlock_source(src);
  test_aux_table_free(t);
  ea_unref(roa_attrs);
  /* the table's pool goes in the main loop, after this returns: the
   * config's must go there too, or both leave the root pool at once */
  loop_call_sync(main_loop(), config_unref_in_loop, c);
}

static void
fused_setup(void)
{
  proto_build(&proto_device);
  config_commit(config_new_empty("test"));
}

static const struct CMUnitTest tests[] = {
  cmocka_unit_test(test_fused_same),
};

int
main(void)
{
  return test_run_with_loops("f_fused_test", tests, fused_setup);
}
