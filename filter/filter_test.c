/*
 * Unit tests of the filter compiler and interpreter: values and operators
 * of every type (through `define`, which compiles and folds a term), the
 * prefix trie against a brute-force matcher, filters on routes with BGP
 * attributes (copy-on-write, interning), runtime bounds, code equality,
 * concurrent runs of one filter, and a fuzz pass over random config text.
 *
 * FILTER_BENCH=N runs the route-server benchmark on N routes (default 1M
 * when set to 1) and prints ns per route; FILTER_BENCH_NAME=rs_check (or
 * rs_import) runs only that filter (for perf), FILTER_DUMP=1 prints the
 * bytecode of the filters, FILTER_BENCH_REPEAT=R runs R passes (alternating
 * between the filters) and prints the median, min and max.
 * FILTER_BENCH_GROUP=G gives G routes in a row the same attribute set (the
 * prefixes of one UPDATE); by default (1) every route meets the set used
 * 4,095 routes before it.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "conf/conf.h"
#include "filter/f_cmocka.h"
#include "filter/f_inst.h"
#include "filter/f_test.h"
#include "filter/filter.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/printf.h"
#include "nest/ea_bgp.h"
#include "nest/iface.h"
#include "nest/proto.h"
#include "nest/rt.h"
#include "proto/device/device.h"

/* --- helpers --- */

/* "define X = <term>;" and the value as eval prints it. */
static void
check_value(const char *term, const char *want)
{
  char text[1024];
  bsnprintf(text, sizeof(text), "define X = %s;", term);
  struct config *c = f_test_parse_ok(text);
  struct symbol *s = cf_find_symbol(c, "X");
  assert_non_null(s);
  assert_int_equal(s->class, SYM_CONSTANT);
  struct buffer b;
  buffer_init(&b);
  val_format(s->val->fv, &b);
  if (strcmp(b.start, want))
    fail_msg("%s: got %s, want %s", term, b.start, want);
  buffer_free(&b);
  config_unref(c);
}

static void
check_error(const char *text, const char *want)
{
  char err[600];
  struct config *c = f_test_parse(text, err, sizeof(err));
  if (c)
    fail_msg("accepted: %s", text);
  if (!strstr(err, want))
    fail_msg("%s: got error '%s', want '%s'", text, err, want);
}

/* --- tests --- */

static void
test_values(void **state)
{
  (void) state;
  check_value("1 + 2 * 3", "7");
  check_value("5 - 7", "4294967294");
  check_value("7 / 2", "3");
  check_value("(1, 2)", "(1,2)");
  check_value("(1, 2, 3)", "(1, 2, 3)");
  check_value("(rt, 1, 2)", "(rt, 1, 2)");
  check_value("(rt, 100000, 5)", "(rt, 100000, 5)");
  check_value("(ro, 10.0.0.1, 5)", "(ro, 10.0.0.1, 5)");
  check_value("(generic, 0x12345, 0x678)", "(unknown 0x1, 9029, 1656)");
  check_value("1.2.3.4", "1.2.3.4");
  check_value("2001:db8::1", "2001:db8::1");
  check_value("10.0.0.0/8", "10.0.0.0/8");
  check_value("\"abc\"", "abc");
  check_value("true", "TRUE");
  check_value("!true", "FALSE");
  check_value("[1, 2, 5..7]", "[1, 2, 5..7]");
  check_value("[(1,*)]", "[(1,0)..(1,65535)]");
  check_value("[(1,2,3), (4,5,*)]", "[(1, 2, 3), (4, 5, 0)..(4, 5, 4294967295)]");
  check_value("RTS_STATIC", "(enum 30)1");
  check_value("NET_IP6", "(enum 36)2");
  check_value("+empty+", "(path )");
  check_value("-empty-", "(clist )");
  check_value("prepend(prepend(+empty+, 5), 7)", "(path 7 5)");
  check_value("prepend(+empty+, 5).len", "1");
  check_value("add(add(-empty-, (1,2)), (3,4))", "(clist (1,2) (3,4))");
  check_value("add(add(-empty-, (1,2)), (1,2))", "(clist (1,2))");
  check_value("delete(add(add(-empty-, (1,2)), (3,4)), [(1,*)])", "(clist (3,4))");
  check_value("filter(add(add(-empty-, (1,2)), (3,4)), [(1,*)])", "(clist (1,2))");
  /* list scrubbing: first, middle, last, none, all; by set, value, list */
  check_value("delete(add(add(add(-empty-, (1,2)), (3,4)), (5,6)), [(1,*)])", "(clist (3,4) (5,6))");
  check_value("delete(add(add(add(-empty-, (1,2)), (3,4)), (5,6)), [(3,*)])", "(clist (1,2) (5,6))");
  check_value("delete(add(add(add(-empty-, (1,2)), (3,4)), (5,6)), [(5,*)])", "(clist (1,2) (3,4))");
  check_value("delete(add(add(add(-empty-, (1,2)), (3,4)), (5,6)), [(7,*)])", "(clist (1,2) (3,4) (5,6))");
  check_value("delete(add(add(add(-empty-, (1,2)), (3,4)), (5,6)), [(0..9,*)])", "(clist )");
  check_value("filter(add(add(add(-empty-, (1,2)), (3,4)), (5,6)), [(1,*), (5,*)])", "(clist (1,2) (5,6))");
  check_value("delete(add(add(-empty-, (1,2)), (3,4)), (3,4))", "(clist (1,2))");
  check_value("delete(add(add(-empty-, (1,2)), (3,4)), add(-empty-, (1,2)))", "(clist (3,4))");
  check_value("delete(-empty-, [(1,*)])", "(clist )");
  check_value("delete(add(add(---empty---, (1, 2, 3)), (4, 5, 6)), [(1, *, *)])", "(lclist (4, 5, 6))");
  check_value("filter(add(add(--empty--, (rt, 1, 2)), (rt, 3, 4)), [(rt, 3, *)])", "(eclist (rt, 3, 4))");
  check_value("add(--empty--, (rt, 1, 2))", "(eclist (rt, 1, 2))");
  check_value("add(---empty---, (1, 2, 3))", "(lclist (1, 2, 3))");
  check_value("add(add(-empty-, (1,2)), (3,4)).max", "(3,4)");
  check_value("add(add(-empty-, (5,2)), (3,4)).min", "(3,4)");
  check_value("[= * 1 ? 2+ =]", "[= * 1 ? 2 + =]");
  check_value("10.1.2.3.mask(8)", "10.0.0.0");
  check_value("10.0.0.0/8.ip", "10.0.0.0");
  check_value("(1, 2, 3).data2", "3");
  check_value("format((1, 2))", "(1,2)");
  check_value("(1,2) < (1,3) && 1.2.3.4 ~ 1.0.0.0/8", "TRUE");
  check_value("\"foo\" ~ \"f*o\"", "TRUE");
  check_value("10.1.0.0/16 ~ [10.0.0.0/8{16,24}]", "TRUE");
  check_value("10.0.0.0/8 ~ [10.0.0.0/8{16,24}]", "FALSE");
  /* Prefix sets print as BIRD 2's trie dump (outputs of BIRD 2.0.12's eval). */
  check_value("[1.0.0.0/8+, 2.0.0.0/16{18,20}]", "[1.0.0.0/8{1.255.255.255}, 2.0.0.0/16{0.0.112.0}]");
  check_value("[10.0.0.0/8-]",
              "[0.0.0.0/0, 0.0.0.0/1{128.0.0.0}, 0.0.0.0/2{64.0.0.0}, 0.0.0.0/3{32.0.0.0}, 10.0.0.0/8{255.0.0.0}]");
  check_value("[0.0.0.0/0+]", "[0.0.0.0/0, 0.0.0.0/0{255.255.255.255}]");
  check_value("[0.0.0.0/0]", "[0.0.0.0/0]");
  check_value("[10.128.0.0/9{9,12}]",
              "[10.128.0.0/9{0.224.0.0}, 10.128.0.0/12{0.16.0.0}, 10.144.0.0/12{0.16.0.0}, 10.160.0.0/12{0.16.0.0}, "
              "10.176.0.0/12{0.16.0.0}, 10.192.0.0/12{0.16.0.0}, 10.208.0.0/12{0.16.0.0}, 10.224.0.0/12{0.16.0.0}, "
              "10.240.0.0/12{0.16.0.0}]");
  check_value("[10.0.0.0/8{8,9}, 10.0.0.0/9{9,10}]", "[10.0.0.0/8{1.128.0.0}, 10.0.0.0/10{0.64.0.0}, 10.64.0.0/10{0.64.0.0}]");
  check_value("[10.0.0.0/8{5,8}, 11.0.0.0/8]",
              "[8.0.0.0/5{8.0.0.0}, 8.0.0.0/6{4.0.0.0}, 10.0.0.0/7{2.0.0.0}, 10.0.0.0/8{15.0.0.0}, 11.0.0.0/8{1.0.0.0}]");
  check_value("[126.0.0.0/9{1,9}, 0.0.0.0/1{3,4}]",
              "[0.0.0.0/1{128.0.0.0}, 64.0.0.0/2{96.0.0.0}, 0.0.0.0/3{32.0.0.0}, 32.0.0.0/3{32.0.0.0}, 0.0.0.0/4{16.0.0.0}, "
              "16.0.0.0/4{16.0.0.0}, 32.0.0.0/4{16.0.0.0}, 48.0.0.0/4{16.0.0.0}, 64.0.0.0/4{16.0.0.0}, 80.0.0.0/4{16.0.0.0}, "
              "96.0.0.0/4{16.0.0.0}, 112.0.0.0/4{240.0.0.0}, 120.0.0.0/5{8.0.0.0}, 124.0.0.0/6{4.0.0.0}, 126.0.0.0/7{2.0.0.0}, "
              "126.0.0.0/8{255.0.0.0}, 126.0.0.0/9{0.128.0.0}]");
  check_value("[10.0.0.0/24+, 10.0.0.0/25{25,27}]", "[10.0.0.0/24{0.0.1.255}]");
  check_value("[2001:db8::/32+, 2001:db8:1::/48{56,64}]",
              "[2001:db8::/32{0:1:ffff:ffff:ffff:ffff:ffff:ffff}, 2001:db8:1::/48{0:0:0:1ff::}]");
  check_value("[::/0+]", "[::/0, ::/0{ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff}]");
  check_value("[2001:db8::/127, 2001:db8::/128]", "[2001:db8::/127{::2}, 2001:db8::/128{::1}]");
  check_value("prepend(prepend(+empty+, 2), 1) ~ [= 1 2 =]", "TRUE");
  check_value("prepend(prepend(+empty+, 2), 1) ~ [= * 2 =]", "TRUE");
  check_value("prepend(prepend(+empty+, 2), 1) ~ [= 2 * =]", "FALSE");
  check_value("prepend(prepend(prepend(+empty+, 3), 2), 2) ~ [= 2+ 3 =]", "TRUE");
  check_value("delete(prepend(prepend(+empty+, 2), 1), 2)", "(path 1)");
  check_value("from_hex(\"01:ab\")", "01:ab");
  check_value("defined(1)", "TRUE");
}

static void
test_errors(void **state)
{
  (void) state;
  check_error("function f() int x; { x = \"a\"; }", "Argument 1 of VAR_SET must be of type int, got type string");
  check_error("function f() { if 1 < \"a\" then print 1; }", "Arguments 1 and 2 of LT must be of the same type");
  check_error("filter f { bgp_med = \"x\"; accept; }", "Argument 1 of EA_SET must be of type int, got type string");
  check_error("function f() { print foo; }", "Undefined symbol foo");
  check_error("filter f { net = 10.0.0.0/8; accept; }", "read-only");
  check_error("filter f { bgp_aigp = 5; accept; }", "Attribute bgp_aigp is read-only");
  check_error("function f(int a) { return a; } function g() { return f(1, 2); }", "takes 1 arguments");
  check_error("function f() { if 1 then print 1; }", "Argument 1 of CONDITION must be of type bool");
  check_error("define x = [1, 2.0.0.0];", "Mixed types in set");
  check_error("define x = [10.0.0.0/8, 2001:db8::/32];", "Mixed IPv4/IPv6");
  check_error("define x = 1 / 0;", "divide by 0");
  check_error("function f() { int a; int a; }", "already defined");
}

/* Run-time errors in conditions (compiled to fused jumps) name the
 * operation they always named. */
static const char *cond_error_conf =
  "function nothing() { }\n"
  "function e_if() { if nothing() then return 1; return 2; }\n"
  "function e_not() { if !nothing() then return 1; return 2; }\n"
  "function e_and(bool b) { if b && nothing() then return 1; return 2; }\n"
  "function e_and_left(bool b) { if nothing() && b then return 1; return 2; }\n"
  "function e_or_not(bool b) { if !(b || nothing()) then return 1; return 2; }\n"
  "function e_val(bool b) bool x; { x = b && nothing(); return x; }\n"
  "function e_lt() int i; { if i < 5 then return 1; return 2; }\n"
  "function e_eq() int i; { if i = 5 then return 1; return 2; }\n"
  "function e_match() int i; { if i ~ [1, 2] then return 1; return 2; }\n"
  "function w_and() { return e_and(true); }\n"
  "function w_and_left() { return e_and_left(true); }\n"
  "function w_or_not() { return e_or_not(false); }\n"
  "function w_val() { if e_val(true) then return 1; return 2; }\n"
  "function zero() { return 0; }\n"
  "function divz() {\n"
  "  return 10 / zero();\n"
  "}\n"
  "function w_divz() { if divz() > 1 then return 1; return 2; }\n"
  "filter e_med { if bgp_med < 5 then accept; reject; }\n"
  "filter e_path { if bgp_path.first > 5 then accept; reject; }\n";

static void
capture(void *ctx, const char *text)
{
  bsnprintf(ctx, 160, "%s", text);
}

static void
check_cond_error(struct config *c, const char *fn, const char *want)
{
  linpool *lp = lp_new(root_pool());
  char err[160] = "";
  struct f_exec_opts o = { .silent = 1, .errbuf = err, .errsize = sizeof(err) };
  struct f_val ret;
  enum f_result res = f_exec(f_test_find(c, fn), NULL, lp, &ret, &o);
  if (!want) {
    if (res != F_RETURN || ret.type != T_INT || ret.val.i != 2)
      fail_msg("%s: result %d (%s)", fn, res, err);
  } else if (res != F_ERROR || strcmp(err, want))
    fail_msg("%s: result %d, error '%s', want '%s'", fn, res, err, want);
  rfree(lp);
}

static void
test_cond_errors(void **state)
{
  (void) state;
  struct config *c = f_test_parse_ok(cond_error_conf);
  check_cond_error(c, "e_if", "Argument 1 of CONDITION must be of type bool, got type void");
  check_cond_error(c, "e_not", "Argument 1 of NOT must be of type bool, got type void");
  check_cond_error(c, "w_and", "Argument 1 of CONDITION must be of type bool, got type void");
  check_cond_error(c, "w_and_left", "Argument 1 of CONDITION must be of type bool, got type void");
  check_cond_error(c, "w_or_not", "Argument 1 of NOT must be of type bool, got type void");
  check_cond_error(c, "w_val", "Argument 1 of CONDITION must be of type bool, got type void");
  check_cond_error(c, "e_lt", "Can't compare values of incompatible types");
  check_cond_error(c, "e_eq", NULL);
  check_cond_error(c, "e_match", "~ applied on unknown type pair");
  /* In an inlined function, the error names that function and its line. */
  check_cond_error(c, "w_divz", "Mother told me not to divide by 0");
  char text[160] = "";
  linpool *lp = lp_new(root_pool());
  struct f_exec_opts o = { .print = capture, .print_ctx = text };
  assert_int_equal(f_exec(f_test_find(c, "w_divz"), NULL, lp, NULL, &o), F_ERROR);
  assert_string_equal(text, "divz, line 18: Mother told me not to divide by 0");
  /* A test of an attribute that is not set (void) against a constant */
  net_addr n;
  net_fill_ip4(&n, ip4_from_u32(0x0a000000), 8);
  u32 path[] = { 65001 };
  struct ea_list *a = f_test_bgp_attrs(path, 1, NULL, 0, 0);
  struct f_route r = { .net = &n, .attrs = a };
  char err[160] = "";
  struct f_exec_opts so = { .silent = 1, .errbuf = err, .errsize = sizeof(err) };
  assert_int_equal(f_exec(f_test_find(c, "e_med"), &r, lp, NULL, &so), F_ERROR);
  assert_string_equal(err, "Can't compare values of incompatible types");
  r = (struct f_route){ .net = &n, .attrs = a };
  assert_int_equal(f_exec(f_test_find(c, "e_path"), &r, lp, NULL, &so), F_ACCEPT);
  assert_null(r.out);
  assert_int_equal(f_exec(f_test_find(c, "e_path"), NULL, lp, NULL, &so), F_ERROR);
  assert_string_equal(err, F_ERR_NO_ROUTE);
  ea_unref(a);
  rfree(lp);
  config_unref(c);
}

/* Inlining is bounded: one-liners that each call the previous one twice
 * would otherwise double the code at every level. */
static void
test_inline_bound(void **state)
{
  (void) state;
  struct buffer b;
  buffer_init(&b);
  buffer_puts(&b, "function f0() { return bgp_med > 5; }\n");
  for (uint i = 1; i <= 24; i++)
    buffer_print(&b, "function f%u() { return f%u() && f%u(); }\n", i, i - 1, i - 1);
  buffer_puts(&b, "filter top { if f24() then accept; reject; }\n");
  struct config *c = f_test_parse_ok(b.start);
  buffer_free(&b);
  assert_true(f_test_find(c, "top")->len < 200);
  assert_true(f_test_find(c, "f2")->origin != NULL);   /* small ones are inlined */
  config_unref(c);
}

/* The ROA/ASPA tables a filter reads, through calls and recursion and in
 * fused tests, for `rpki reload` (filter/f_tables.c). */
struct tables_seen { const char *names[8]; uint n; };

static void
note_table(void *ctx, struct rtable_config *t)
{
  struct tables_seen *s = ctx;
  for (uint i = 0; i < s->n; i++)
    if (!strcmp(s->names[i], t->name))
      return;
  assert_true(s->n < 8);
  s->names[s->n++] = t->name;
}

static void
test_tables_read(void **state)
{
  (void) state;
  struct config *c = f_test_parse_ok(
    "roa4 table r1; roa4 table r2; roa4 table r3; aspa table at;\n"
    "function deep(int n) { if n > 0 then return deep(n - 1); return roa_check(r2, net, 65001) = ROA_VALID; }\n"
    "function upstream_ok() { return aspa_check(at, bgp_path, false) = ASPA_VALID; }\n"
    "filter top { if roa_check(r1, net, bgp_path.last) = ROA_INVALID then reject;"
    " if deep(3) || upstream_ok() then accept; reject; }\n"
    "filter plain { if net.len > 24 then reject; accept; }\n");
  struct tables_seen s = { .n = 0 };
  filter_tables(f_test_find(c, "top"), note_table, &s);
  assert_int_equal(s.n, 3);
  int r1 = 0, r2 = 0, at = 0;
  for (uint i = 0; i < s.n; i++) {
    r1 |= !strcmp(s.names[i], "r1");
    r2 |= !strcmp(s.names[i], "r2");
    at |= !strcmp(s.names[i], "at");
  }
  assert_true(r1 && r2 && at);
  s.n = 0;
  filter_tables(f_test_find(c, "plain"), note_table, &s);
  filter_tables(FILTER_ACCEPT, note_table, &s);
  assert_int_equal(s.n, 0);
  config_unref(c);
}

/* Interning (nest/rt_attr.c) as filters use it: equal lists are one list
 * whatever order the builder has them in and whatever follows a payload
 * in memory (the padding to 4 bytes is not the caller's bytes). */
static void
test_intern(void **state)
{
  (void) state;
  u8 p1[8] = { 2, 1, 1, 0, 0, 0, 0xaa, 0xbb }, p2[8] = { 2, 1, 1, 0, 0, 0, 0, 0 };
  u32 comm[2] = { (64500u << 16) | 1, (64500u << 16) | 2 }, comm2[2] = { comm[0], comm[1] };
  struct ea_builder b;
  ea_builder_init(&b);
  b.preference = 100;
  ea_set_data(&b, EA_BGP(EAB_AS_PATH), EAF_AS_PATH, 0x40, p1, 6);
  ea_set_data(&b, EA_BGP(EAB_COMMUNITY), EAF_INT_SET, 0xc0, comm, 8);
  ea_set_int(&b, EA_BGP(EAB_ORIGIN), EAF_INT, 0x40, 0);
  struct ea_list *l1 = ea_intern(&b);

  ea_builder_init(&b);
  b.preference = 100;
  ea_set_int(&b, EA_BGP(EAB_ORIGIN), EAF_INT, 0x40, 0);
  ea_set_data(&b, EA_BGP(EAB_COMMUNITY), EAF_INT_SET, 0xc0, comm2, 8);
  ea_set_data(&b, EA_BGP(EAB_AS_PATH), EAF_AS_PATH, 0x40, p2, 6);
  struct ea_list *l2 = ea_intern(&b);
  assert_ptr_equal(l1, l2);

  /* From the list, an equal payload elsewhere: the same list again */
  ea_builder_from(&b, l1);
  ea_set_data(&b, EA_BGP(EAB_COMMUNITY), EAF_INT_SET, 0xc0, comm2, 8);
  struct ea_list *l3 = ea_intern(&b);
  assert_ptr_equal(l1, l3);

  /* One byte of a payload differs: another list */
  p2[5] = 1;
  ea_builder_from(&b, l1);
  ea_set_data(&b, EA_BGP(EAB_AS_PATH), EAF_AS_PATH, 0x40, p2, 6);
  struct ea_list *l4 = ea_intern(&b);
  assert_ptr_not_equal(l1, l4);
  assert_int_equal(ea_find(l4, EA_BGP(EAB_AS_PATH))->len, 6);
  assert_memory_equal(ea_data(l4, ea_find(l4, EA_BGP(EAB_AS_PATH))), p2, 6);

  ea_unref(l1);
  ea_unref(l2);
  ea_unref(l3);
  ea_unref(l4);
}

/* Set membership (binary searches, value.c/data.h) against a linear scan:
 * random, overlapping ranges of ints and of large communities. */
static void
test_sets(void **state)
{
  (void) state;
  pool *p = rp_new(root_pool(), MEM_CONFIG, "set test");
  linpool *lp = lp_new(p);
  srandom(7);
  struct f_val from[40], to[40];
  for (int round = 0; round < 200; round++) {
    int lc = round % 2;
    uint n = random() % 40;
    for (uint i = 0; i < n; i++) {
      u32 a = random() % 1000, b = a + (random() % 4 ? random() % 50 : 0);
      if (lc) {
        from[i] = (struct f_val){ .type = T_LC, .val.lc = { random() % 3, a, 0 } };
        to[i] = (struct f_val){ .type = T_LC, .val.lc = { from[i].val.lc.asn, b, random() % 2 ? ~0u : 0 } };
      } else {
        from[i] = f_int(T_INT, a);
        to[i] = f_int(T_INT, b);
      }
    }
    const char *err = NULL;
    struct f_set *set = f_set_build(lp, lc ? T_LC : T_INT, from, to, n, &err);
    assert_non_null(set);
    for (int k = 0; k < 500; k++) {
      struct f_val x = lc ? (struct f_val){ .type = T_LC, .val.lc = { random() % 3, random() % 1100, random() % 2 } }
                          : f_int(T_INT, random() % 1100);
      int want = 0;
      for (uint i = 0; i < n; i++)
        if (val_compare(&from[i], &x) <= 0 && val_compare(&x, &to[i]) <= 0)
          want = 1;
      if (f_set_contains(set, &x) != want)
        fail_msg("round %d: set membership differs from a scan", round);
    }
  }
  rfree(p);
}

/* Prefix trie against a brute-force matcher on random sets and nets. */
static int
brute_match(const struct f_trie_entry *e, uint n, const net_addr *x)
{
  for (uint i = 0; i < n; i++) {
    const net_addr *p = &e[i].net;
    if (p->type != x->type)
      continue;
    uint l = x->pxlen;
    if (l < e[i].lo || l > e[i].hi)
      continue;
    uint k = MIN(p->pxlen, l);
    net_addr a = *p, b = *x;
    a.pxlen = b.pxlen = k;
    net_normalize(&a);
    net_normalize(&b);
    if (net_equal(&a, &b))
      return 1;
  }
  return 0;
}

/* Does the printed form of a prefix set (BIRD 2's trie dump, IPv4) accept
 * x? Each "A/p{M}" accepts, for every length L whose bit (32 - L) is set
 * in M, the nets of length L under A/p (L >= p) or A's supernet of
 * length L (L < p); a bare "0.0.0.0/0" accepts the default route. */
static int
dump_match(const char *dump, const net_addr *x)
{
  u32 xa = ip4_to_u32(((const net_addr_ip4 *) x)->prefix);
  for (const char *s = dump + 1; *s && *s != ']';) {
    uint a[4], pl, m[4];
    int got = sscanf(s, "%u.%u.%u.%u/%u{%u.%u.%u.%u}", &a[0], &a[1], &a[2], &a[3], &pl, &m[0], &m[1], &m[2], &m[3]);
    assert_true(got == 5 || got == 9);
    u32 addr = a[0] << 24 | a[1] << 16 | a[2] << 8 | a[3], mask = got == 9 ? m[0] << 24 | m[1] << 16 | m[2] << 8 | m[3] : 0;
    if (got == 5 && !x->pxlen)
      return 1;
    for (uint l = 1; l <= 32; l++) {
      if (!(mask & (1u << (32 - l))) || x->pxlen != l)
        continue;
      uint k = MIN(l, pl);
      u32 km = k ? ~0u << (32 - k) : 0;
      if ((xa & km) == (addr & km))
        return 1;
    }
    s = strchr(s, ',');
    if (!s)
      break;
    s += 2;
  }
  return 0;
}

static void
test_trie(void **state)
{
  (void) state;
  pool *p = rp_new(root_pool(), MEM_CONFIG, "trie test");
  linpool *lp = lp_new(p);
  srandom(42);
  /* Rounds from 40 on: big sets in a few /8s (stride tables, trie.c). */
  struct f_trie_entry *e = malloc(2000 * sizeof(*e));
  for (int round = 0; round < 60; round++) {
    int big = round >= 40;
    uint n = big ? 50 + random() % 1500 : 1 + random() % 60;
    struct f_trie *t = f_trie_new(lp);
    for (uint i = 0; i < n; i++) {
      uint len = random() % 33;
      u32 a = (random() & 0xff000000) | ((random() & 3) << 22);
      if (big)
        a = ((10 + random() % 3) << 24) | (random() & 0xffff00);
      net_fill_ip4(&e[i].net, ip4_from_u32(a), len);
      net_normalize(&e[i].net);
      uint lo = random() % 33, hi = lo + random() % (33 - lo);
      if (random() % 3 == 0) { lo = len; hi = len; }
      e[i].lo = lo;
      e[i].hi = hi;
      f_trie_add(lp, t, &e[i].net, lo, hi);
    }
    f_trie_finish(lp, t, e, n);
    /* The printed form (filter/trie_format.c) must describe the same set. */
    struct buffer dump;
    buffer_init(&dump);
    f_trie_format(t, &dump);
    for (int k = 0; k < 3000; k++) {
      net_addr x;
      u32 a = (random() & 0xff000000) | ((random() & 3) << 22) | (random() & 0xffff);
      if (big && k % 4)
        a = k % 2 ? ((const net_addr_ip4 *) &e[random() % n].net)->prefix.addr ^ (random() & 0x1ff) : ((9 + random() % 5) << 24) | (random() & 0xffffff);
      net_fill_ip4(&x, ip4_from_u32(a), random() % 33);
      net_normalize(&x);
      int want = brute_match(e, n, &x);
      if (f_trie_match(t, &x) != want)
        fail_msg("round %d: trie and brute force differ on %N", round, &x);
      if (k < 500 && dump_match(dump.start, &x) != want) {
        char net[NET_MAX_TEXT_LENGTH + 1];
        bsnprintf(net, sizeof(net), "%N", &x);
        fail_msg("round %d: the printed set and brute force differ on %s: %s", round, net, dump.start);
      }
    }
    if (big && !t->v4_sub)
      fail_msg("round %d: %u entries and no /16 stride table", round, n);
    buffer_free(&dump);
  }
  /* IPv6 sets: printed without memory errors (the ASan build), well formed. */
  for (int round = 0; round < 40; round++) {
    uint n = 1 + random() % 60;
    struct f_trie_entry e[64];
    struct f_trie *t = f_trie_new(lp);
    for (uint i = 0; i < n; i++) {
      uint len = random() % 129;
      net_fill_ip6(&e[i].net, ip6_build(0x20010db8, random(), random(), random()), len);
      net_normalize(&e[i].net);
      uint lo = random() % 129, hi = lo + random() % (129 - lo);
      e[i].lo = random() % 2 ? lo : len;
      e[i].hi = random() % 2 ? hi : MAX(len, e[i].lo);
      if (e[i].lo > e[i].hi)
        e[i].hi = e[i].lo;
      f_trie_add(lp, t, &e[i].net, e[i].lo, e[i].hi);
    }
    f_trie_finish(lp, t, e, n);
    struct buffer dump;
    buffer_init(&dump);
    f_trie_format(t, &dump);
    assert_true(dump.len >= 2 && dump.start[0] == '[' && dump.start[dump.len - 1] == ']');
    buffer_free(&dump);
  }
  free(e);
  rfree(p);
}

static const char *route_conf =
  "define RS = 64500;\n"
  "filter f_mod {\n"
  "  if bgp_path.first != 65001 then reject;\n"
  "  if bgp_path.len > 5 then reject;\n"
  "  bgp_community.delete([(64500, *)]);\n"
  "  bgp_community.add((RS, 1));\n"
  "  bgp_large_community.add((RS, 2, 3));\n"
  "  bgp_path.prepend(RS);\n"
  "  bgp_med = 7;\n"
  "  preference = 120;\n"
  "  accept;\n"
  "}\n"
  "filter f_read { if bgp_med = 5 && (65001, 1) ~ bgp_community && bgp_path ~ [= 65001 * =] then accept; reject; }\n"
  "filter f_fall { if false then accept; }\n"
  "function inf(int n) { return inf(n + 1); }\n"
  "filter f_rec { if inf(0) = 1 then accept; reject; }\n"
  "function spin() int i; { i = 0; for int a in prepend(prepend(prepend(+empty+, 1), 2), 3) do i = i + spin(); return i; }\n"
  "filter f_spin { if spin() = 0 then accept; reject; }\n"
  "function fib(int n) { if n < 2 then return n; return fib(n - 1) + fib(n - 2); }\n"
  "filter f_fib { if fib(40) > 0 then accept; reject; }\n"
  /* Found by the interpreter fuzzer: well within the step budget, this
   * copies a path of millions of ASNs millions of times (terabytes). */
  "function grow(bgppath p) bgppath q; { q = p; for int a in p do for int b in p do q = prepend(q, a + b); return q; }\n"
  "filter f_grow { bgp_path = grow(grow(grow(prepend(prepend(prepend(bgp_path, 1), 2), 3)))); accept; }\n"
  "filter f_print { print \"a\", 1; printn \"b\"; printn 2; print \"\"; accept \"c\", bgp_med; }\n";

static void
test_routes(void **state)
{
  (void) state;
  struct config *c = f_test_parse_ok(route_conf);
  pool *p = rp_new(root_pool(), MEM_CONFIG, "route test");
  linpool *lp = lp_new(p);
  net_addr n;
  net_fill_ip4(&n, ip4_from_u32(0x0a000000), 8);
  u32 path[] = { 65001, 65002 };
  u32 comm[] = { (64500u << 16) | 9, (65001u << 16) | 1 };
  struct ea_list *a = f_test_bgp_attrs(path, 2, comm, 2, 5);

  struct f_route r = { .net = &n, .attrs = a };
  assert_int_equal(f_run(f_test_find(c, "f_read"), &r, lp), F_ACCEPT);
  assert_null(r.out);   /* read-only: no copy, no intern */

  r = (struct f_route){ .net = &n, .attrs = a };
  assert_int_equal(f_run(f_test_find(c, "f_mod"), &r, lp), F_ACCEPT);
  assert_non_null(r.out);
  struct ea_list *o = r.out;
  assert_int_equal(o->preference, 120);
  const struct eattr *e = ea_find(o, EA_BGP(EAB_MULTI_EXIT_DISC));
  assert_non_null(e);
  assert_int_equal(e->val, 7);
  e = ea_find(o, EA_BGP(EAB_COMMUNITY));
  assert_int_equal(e->len, 8);
  const u32 *cv = ea_data(o, e);
  assert_int_equal(cv[0], (65001u << 16) | 1);
  assert_int_equal(cv[1], (64500u << 16) | 1);
  e = ea_find(o, EA_BGP(EAB_AS_PATH));
  assert_int_equal(e->len, 2 + 3 * 4);
  e = ea_find(o, EA_BGP(EAB_LARGE_COMMUNITY));
  assert_int_equal(e->len, 12);
  /* The input is untouched. */
  assert_int_equal(ea_find(a, EA_BGP(EAB_MULTI_EXIT_DISC))->val, 5);

  /* Same input, same output: interned once. */
  struct f_route r2 = { .net = &n, .attrs = a };
  assert_int_equal(f_run(f_test_find(c, "f_mod"), &r2, lp), F_ACCEPT);
  assert_ptr_equal(r2.out, o);
  ea_unref(r2.out);
  ea_unref(o);
  /* The verdict only: the same, and no attributes made */
  r = (struct f_route){ .net = &n, .attrs = a, .verdict_only = true };
  assert_int_equal(f_run(f_test_find(c, "f_mod"), &r, lp), F_ACCEPT);
  assert_null(r.out);

  u32 bad[] = { 65009 };
  struct ea_list *b = f_test_bgp_attrs(bad, 1, NULL, 0, 0);
  r = (struct f_route){ .net = &n, .attrs = b };
  assert_int_equal(f_run(f_test_find(c, "f_mod"), &r, lp), F_REJECT);
  assert_null(r.out);
  r = (struct f_route){ .net = &n, .attrs = b };
  assert_int_equal(f_run(f_test_find(c, "f_read"), &r, lp), F_REJECT);
  r = (struct f_route){ .net = &n, .attrs = b, .verdict_only = true };
  assert_int_equal(f_run(f_test_find(c, "f_mod"), &r, lp), F_REJECT);

  /* No verdict, runaway recursion, runaway work: errors, not hangs. */
  r = (struct f_route){ .net = &n, .attrs = a };
  assert_int_equal(f_run(f_test_find(c, "f_fall"), &r, lp), F_ERROR);
  r = (struct f_route){ .net = &n, .attrs = a };
  assert_int_equal(f_run(f_test_find(c, "f_rec"), &r, lp), F_ERROR);
  r = (struct f_route){ .net = &n, .attrs = a };
  assert_int_equal(f_run(f_test_find(c, "f_spin"), &r, lp), F_ERROR);
  r = (struct f_route){ .net = &n, .attrs = a };
  assert_int_equal(f_run(f_test_find(c, "f_fib"), &r, lp), F_ERROR);   /* step budget */
  r = (struct f_route){ .net = &n, .attrs = a };
  char err[160] = "";
  struct f_exec_opts eo = { .silent = 1, .errbuf = err, .errsize = sizeof(err) };
  assert_int_equal(f_exec(f_test_find(c, "f_grow"), &r, lp, NULL, &eo), F_ERROR);   /* memory budget */
  assert_string_equal(err, "Filter uses too much memory (more than 32 MB)");
  lp_flush(lp);

  ea_unref(a);
  ea_unref(b);
  rfree(p);
  config_unref(c);
}

/* print output: one line per print (printn continues it), and accept's
 * message. The line buffer is reused and freed once at the end of the run
 * (it leaked on every print before: LeakSanitizer in the ASan build). */
struct print_log {
  char lines[4][32];
  uint n;
};

static void
print_line(void *ctx, const char *text)
{
  struct print_log *pl = ctx;
  if (pl->n < ARRAY_SIZE(pl->lines))
    bsnprintf(pl->lines[pl->n], sizeof(pl->lines[0]), "%s", text);
  pl->n++;
}

/* Leave a stack full of 0xff bytes where f_exec's frame will be. */
static __attribute__((noinline)) void
dirty_stack(void)
{
  volatile u8 junk[256 * 1024];
  memset((u8 *) junk, 0xff, sizeof(junk));
}

static __attribute__((noinline)) enum f_result
run_after_dirty_stack(const struct filter *f, struct f_route *r, linpool *lp)
{
  return f_exec(f, r, lp, NULL, NULL);
}

/* A filter that prints nothing must not read the print buffer's length
 * uninitialised (it counted toward the 32 MB memory limit: routes failed
 * with "Filter uses too much memory" depending on the stack's old bytes). */
static void
test_exec_on_dirty_stack(void **state)
{
  (void) state;
  /* a call counts as a step: the limit is checked before anything printed */
  struct config *c = f_test_parse_ok("function is_long(prefix p) { return p.len >= 20; }\n"
                              "filter f_call { if is_long(net) then accept; reject; }\n");
  linpool *lp = lp_new(root_pool());
  net_addr n;
  net_fill_ip4(&n, ip4_from_u32(0x0a000000), 24);
  u32 path[] = { 65001 };
  struct ea_list *a = f_test_bgp_attrs(path, 1, NULL, 0, 5);
  for (int i = 0; i < 10; i++) {
    struct f_route r = { .net = &n, .attrs = a };
    dirty_stack();
    assert_int_equal(run_after_dirty_stack(f_test_find(c, "f_call"), &r, lp), F_ACCEPT);
    if (r.out)
      ea_unref(r.out);
    lp_flush(lp);
  }
  ea_unref(a);
  rfree(lp);
  config_unref(c);
}

static void
test_print(void **state)
{
  (void) state;
  struct config *c = f_test_parse_ok(route_conf);
  pool *p = rp_new(root_pool(), MEM_CONFIG, "print test");
  linpool *lp = lp_new(p);
  net_addr n;
  net_fill_ip4(&n, ip4_from_u32(0x0a000000), 8);
  u32 path[] = { 65001 };
  struct ea_list *a = f_test_bgp_attrs(path, 1, NULL, 0, 5);
  for (int i = 0; i < 100; i++) {
    struct print_log pl = { .n = 0 };
    struct f_exec_opts o = { .print = print_line, .print_ctx = &pl };
    struct f_route r = { .net = &n, .attrs = a };
    assert_int_equal(f_exec(f_test_find(c, "f_print"), &r, lp, NULL, &o), F_ACCEPT);
    assert_null(r.out);
    assert_int_equal(pl.n, 3);
    assert_string_equal(pl.lines[0], "a1");
    assert_string_equal(pl.lines[1], "b2");
    assert_string_equal(pl.lines[2], "c5");
    lp_flush(lp);
  }
  ea_unref(a);
  rfree(p);
  config_unref(c);
}

static void
test_same(void **state)
{
  (void) state;
  struct config *c1 = f_test_parse_ok("filter a { if net ~ [10.0.0.0/8+] then accept; reject; }\n"
                               "filter b { if net ~ [10.0.0.0/8+] then reject; accept; }\n"
                               "filter c { if bgp_med > 5 || bgp_next_hop ~ 1.0.0.0/8 then reject; accept; }\n"
                               "filter d { if bgp_med > 5 then reject; accept; }\n"
                               "roa4 table r4; roa4 table r5;\n"
                               "filter e { if roa_check(r4, net, bgp_path.last) = ROA_INVALID then reject; accept; }\n"
                               "filter f { if roa_check(r4, net, bgp_path.last) = ROA_INVALID then reject; accept; }");
  struct config *c2 = f_test_parse_ok("filter a { if net ~ [ 10.0.0.0/8+ ] then accept;\n reject; }\n"
                               "filter b { if net ~ [10.0.0.0/8+] then reject; accept; bgp_med = 1; }\n"
                               "define FIVE = 5;\n"
                               "filter c { if bgp_med > FIVE || bgp_next_hop ~ 1.0.0.0/8 then reject; accept; }\n"
                               "filter d { if bgp_med > 6 then reject; accept; }\n"
                               "roa4 table r4; roa4 table r5;\n"
                               "filter e { if roa_check(r4, net, bgp_path.last) = ROA_INVALID then reject; accept; }\n"
                               "filter f { if roa_check(r5, net, bgp_path.last) = ROA_INVALID then reject; accept; }");
  assert_true(filter_same(f_test_find(c1, "a"), f_test_find(c2, "a")));
  assert_false(filter_same(f_test_find(c1, "b"), f_test_find(c2, "b")));
  assert_true(filter_same(f_test_find(c1, "c"), f_test_find(c2, "c")));
  assert_false(filter_same(f_test_find(c1, "d"), f_test_find(c2, "d")));
  assert_true(filter_same(f_test_find(c1, "e"), f_test_find(c2, "e")));
  assert_false(filter_same(f_test_find(c1, "f"), f_test_find(c2, "f")));
  assert_false(filter_same(f_test_find(c1, "a"), f_test_find(c1, "b")));
  assert_true(filter_same(FILTER_ACCEPT, FILTER_ACCEPT));
  assert_false(filter_same(FILTER_ACCEPT, FILTER_REJECT));
  assert_string_equal(filter_name(f_test_find(c1, "a")), "a");
  assert_string_equal(filter_name(FILTER_REJECT), "REJECT");
  config_unref(c1);
  config_unref(c2);
}

/* One compiled filter, many threads at once: results must not mix.
 * Each thread's pool is made by the main thread, which owns the root
 * pool (lib/resource.c: pools do not lock). */
struct conc_arg {
  const struct filter *f;
  pool *p;
  int ok;
};

static void *
conc_main(void *data)
{
  struct conc_arg *ca = data;
  rcu_thread_register();
  linpool *lp = lp_new(ca->p);
  ca->ok = 1;
  for (u32 i = 0; i < 20000; i++) {
    net_addr n;
    net_fill_ip4(&n, ip4_from_u32(0x0b000000 | (i << 8)), 24);
    u32 path[] = { 65001, 64600 + (i % 50) };
    struct ea_list *a = f_test_bgp_attrs(path, 2, NULL, 0, i % 7);
    struct f_route r = { .net = &n, .attrs = a };
    enum f_result res = f_run(ca->f, &r, lp);
    lp_flush(lp);
    if (res != F_ACCEPT || !r.out)
      ca->ok = 0;
    else {
      const struct eattr *e = ea_find(r.out, EA_BGP(EAB_AS_PATH));
      if (!e || e->len != 2 + 3 * 4)
        ca->ok = 0;
      ea_unref(r.out);
    }
    ea_unref(a);
  }
  rfree(lp);
  rcu_thread_unregister();
  return NULL;
}

static void
test_concurrent(void **state)
{
  (void) state;
  struct config *c = f_test_parse_ok(route_conf);
  struct conc_arg args[4];
  pthread_t th[4];
  for (int i = 0; i < 4; i++) {
    args[i].f = f_test_find(c, "f_mod");
    args[i].p = rp_new(root_pool(), MEM_CONFIG, "conc");
    pthread_create(&th[i], NULL, conc_main, &args[i]);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    rfree(args[i].p);
    assert_true(args[i].ok);
  }
  config_unref(c);
}

/* Random config text made of filter tokens: the parser must never crash. */
static void
test_fuzz_parser(void **state)
{
  (void) state;
  static const char *tok[] = {
    "filter", "function", "f", "g", "x", "(", ")", "{", "}", "[", "]", "[=", "=]", ";", ",", "=", "==", "!=",
    "<", ">", "~", "!~", "+", "-", "*", "/", "&&", "||", "!", ".", "..", "1", "65535", "10.0.0.0/8", "1.2.3.4",
    "2001:db8::/32", "\"s\"", "if", "then", "else", "case", "for", "in", "do", "int", "bool", "prefix", "set",
    "bgppath", "clist", "accept", "reject", "return", "print", "bgp_path", "bgp_community", "net", "len",
    "add", "delete", "filter", "prepend", "+empty+", "-empty-", "true", "RTS_BGP", "?", ":", "else:", "define",
    "bt_assert", "defined", "unset", "first", "last", "mask", "ip", "asn", "data", "rt", "ro",
  };
  srandom(7);
  char text[2048];
  for (int i = 0; i < 3000; i++) {
    size_t len = 0;
    int n = 1 + random() % 40;
    len += bsnprintf(text + len, sizeof(text) - len, "%s", random() % 2 ? "filter f " : "function f() ");
    for (int k = 0; k < n && len < sizeof(text) - 64; k++)
      len += bsnprintf(text + len, sizeof(text) - len, " %s", tok[random() % ARRAY_SIZE(tok)]);
    char err[600];
    struct config *c = f_test_parse(text, err, sizeof(err));
    if (c)
      config_unref(c);
  }
}

/* Random values through every binary operator and method: no crash. */
static void
test_fuzz_interp(void **state)
{
  (void) state;
  static const char *vals[] = {
    "1", "0", "4294967295", "(1,2)", "1.2.3.4", "2001:db8::1", "10.0.0.0/8", "\"a*\"", "true", "[1, 3..5]",
    "[10.0.0.0/8+]", "+empty+", "prepend(+empty+, 1)", "-empty-", "add(-empty-, (1,2))", "(rt, 1, 2)",
    "(1, 2, 3)", "[= * 1 =]", "RTS_BGP", "[(1,*)]", "--empty--", "---empty---",
  };
  static const char *ops[] = { "+", "-", "*", "/", "=", "!=", "<", "<=", ">", ">=", "~", "!~", "&&", "||" };
  static const char *meths[] = { ".len", ".ip", ".asn", ".data", ".first", ".last", ".min", ".max", ".type", ".is_v4" };
  char text[512];
  for (uint a = 0; a < ARRAY_SIZE(vals); a++)
    for (uint b = 0; b < ARRAY_SIZE(vals); b++)
      for (uint o = 0; o < ARRAY_SIZE(ops); o++) {
        bsnprintf(text, sizeof(text), "function f() { print %s %s %s; }", vals[a], ops[o], vals[b]);
        struct config *c = f_test_parse(text, NULL, 0);
        if (c)
          config_unref(c);
      }
  for (uint a = 0; a < ARRAY_SIZE(vals); a++)
    for (uint m = 0; m < ARRAY_SIZE(meths); m++) {
      bsnprintf(text, sizeof(text), "define X = %s%s;", vals[a], meths[m]);
      struct config *c = f_test_parse(text, NULL, 0);
      if (c)
        config_unref(c);
    }
}

/* --- The route-server benchmark --- */

static const char *bench_conf_head =
  "define RS_ASN = 64500;\n"
  "define BOGONS_V4 = [ 0.0.0.0/8+, 10.0.0.0/8+, 100.64.0.0/10+, 127.0.0.0/8+, 169.254.0.0/16+,\n"
  "  172.16.0.0/12+, 192.0.2.0/24+, 192.168.0.0/16+, 198.18.0.0/15+, 198.51.100.0/24+,\n"
  "  203.0.113.0/24+, 224.0.0.0/4+, 240.0.0.0/4+ ];\n"
  "define BOGON_ASNS = [ 0, 23456, 64496..64511, 64512..65534, 65535, 65536..65551, 4200000000..4294967295 ];\n"
  "roa4 table r4;\n";

static const char *bench_conf_tail =
  "function rs_prefix_len_ok() { return net.len >= 8 && net.len <= 24; }\n"
  "filter rs_import {\n"
  "  if net.type != NET_IP4 then reject;\n"
  "  if net ~ BOGONS_V4 then reject;\n"
  "  if !rs_prefix_len_ok() then reject;\n"
  "  if bgp_path.len > 32 then reject;\n"
  "  if bgp_path.first != 3320 then reject;\n"
  "  if bgp_path ~ BOGON_ASNS then reject;\n"
  "  if !(net ~ AS65001_PFX) then {\n"
  "    bgp_large_community.add((RS_ASN, 1101, 9));\n"
  "    reject;\n"
  "  }\n"
  "  if roa_check(r4, net, bgp_path.last) = ROA_INVALID then reject;\n"
  "  if (RS_ASN, 0) ~ bgp_community then reject;\n"
  "  bgp_community.delete([(RS_ASN, *)]);\n"
  "  bgp_large_community.delete([(RS_ASN, *, *)]);\n"
  "  bgp_large_community.add((RS_ASN, 1000, 1));\n"
  "  accept;\n"
  "}\n"
  "filter rs_check {\n"
  "  if net.type != NET_IP4 then reject;\n"
  "  if net ~ BOGONS_V4 then reject;\n"
  "  if !rs_prefix_len_ok() then reject;\n"
  "  if bgp_path.len > 32 then reject;\n"
  "  if bgp_path.first != 3320 then reject;\n"
  "  if bgp_path ~ BOGON_ASNS then reject;\n"
  "  if !(net ~ AS65001_PFX) then reject;\n"
  "  if roa_check(r4, net, bgp_path.last) = ROA_INVALID then reject;\n"
  "  if (RS_ASN, 0) ~ bgp_community then reject;\n"
  "  accept;\n"
  "}\n";

/* CPU time of this thread: the benchmark shares its machine. */
static double
now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* FILTER_DUMP=1: the bytecode of the benchmark filters (and of what they call). */
static void
dump_code(const struct filter *f, int depth)
{
  printf("%*s-- %s (%u insns)\n", depth * 2, "", f->name ? f->name : "?", f->len);
  for (uint i = 0; i < f->len; i++) {
    const struct f_insn *in = &f->code[i];
    printf("%*s%3u %-14s b=%u a=%u", depth * 2, "", i, f_op_names[in->op], in->b, in->a);
    if (in->op == FI_CONST)
      printf(" type=%#x", in->p.v->type);
    printf("\n");
    if (in->op == FI_CALL && depth < 2)
      dump_code(in->p.p, depth + 1);
  }
}

static int
double_cmp(const void *x, const void *y)
{
  double a = *(const double *) x, b = *(const double *) y;
  return a < b ? -1 : a > b;
}

static void
run_bench(uint nroutes, int print)
{
  /* A few thousand client prefixes (the IRR-derived set). */
  struct buffer b;
  buffer_init(&b);
  buffer_puts(&b, bench_conf_head);
  buffer_puts(&b, "define AS65001_PFX = [ ");
  uint npfx = 4000;
  for (uint i = 0; i < npfx; i++)
    buffer_print(&b, "%s%u.%u.0.0/16{16,24}", i ? ", " : "", 20 + i / 256, i % 256);
  buffer_puts(&b, " ];\n");
  buffer_puts(&b, bench_conf_tail);
  struct config *c = f_test_parse_ok(b.start);
  buffer_free(&b);

  /* Attribute sets shared by many routes, as in real UPDATEs. */
  uint nattrs = 4096;
  struct ea_list **attrs = malloc(nattrs * sizeof(*attrs));
  srandom(1);
  for (uint i = 0; i < nattrs; i++) {
    u32 path[6] = { 3320 };
    uint plen = 2 + random() % 4;
    for (uint k = 1; k < plen; k++)
      path[k] = 1000 + random() % 60000;
    if (i % 50 == 0)
      path[0] = 3321;                  /* wrong first AS */
    u32 comm[3] = { (64500u << 16) | (1 + random() % 3), (3320u << 16) | 100, (3320u << 16) | (random() % 10) };
    attrs[i] = f_test_bgp_attrs(path, plen, comm, 3, random() % 100);
  }
  net_addr *nets = malloc(nroutes * sizeof(net_addr));
  for (uint i = 0; i < nroutes; i++) {
    u32 a;
    uint len;
    if (i % 20 == 0) { a = 0x0a000000 | (random() & 0xffff00); len = 24; }          /* bogon */
    else if (i % 20 == 1) { a = random() & 0xffffff00; len = 24; }                   /* not registered */
    else { uint k = random() % npfx; a = ((20 + k / 256) << 24) | ((k % 256) << 16) | (random() & 0xff00); len = 16 + random() % 9; }
    net_fill_ip4(&nets[i], ip4_from_u32(a), len);
    net_normalize(&nets[i]);
  }
  struct ea_list **out = calloc(nroutes, sizeof(*out));
  pool *p = rp_new(root_pool(), MEM_CONFIG, "bench");
  linpool *lp = lp_new(p);
  static const char *const names[] = { "rs_check", "rs_import" };
  const char *only = getenv("FILTER_BENCH_NAME");
  const char *rep = getenv("FILTER_BENCH_REPEAT");
  const char *grp = getenv("FILTER_BENCH_GROUP");
  uint group = grp && atoi(grp) > 1 ? (uint) atoi(grp) : 1;
  uint passes = rep && atoi(rep) > 1 ? MIN((uint) atoi(rep), 99) : 1;
  double ns[ARRAY_SIZE(names)][99];
  uint accepted[ARRAY_SIZE(names)] = { 0 };
  /* Passes alternate between the filters, so that a busy spell of the
   * machine hits both alike. */
  for (uint pass = 0; pass < passes; pass++)
    for (uint k = 0; k < ARRAY_SIZE(names); k++) {
      if (only && strcmp(only, names[k]))
        continue;
      const struct filter *f = f_test_find(c, names[k]);
      if (!pass && getenv("FILTER_DUMP"))
        dump_code(f, 0);
      accepted[k] = 0;
      double t0 = now_ns();
      for (uint i = 0; i < nroutes; i++) {
        struct f_route r = { .net = &nets[i], .attrs = attrs[(i / group) % nattrs] };
        if (f_run(f, &r, lp) == F_ACCEPT)
          accepted[k]++;
        out[i] = r.out;                  /* the table would hold it */
        lp_flush(lp);
      }
      ns[k][pass] = (now_ns() - t0) / nroutes;
      assert_true(accepted[k] > nroutes / 2);
      for (uint i = 0; i < nroutes; i++)
        if (out[i])
          ea_unref(out[i]);
    }
  for (uint k = 0; k < ARRAY_SIZE(names); k++) {
    if (!print || (only && strcmp(only, names[k])))
      continue;
    qsort(ns[k], passes, sizeof(double), double_cmp);
    char name[40];
    bsnprintf(name, sizeof(name), group > 1 ? "%s/g%u" : "%s", names[k], group);
    printf("filter benchmark %s: %u routes, %u accepted, %.1f ns/route (CPU time", name, nroutes,
           accepted[k], ns[k][passes / 2]);
    if (passes > 1)
      printf("; median of %u passes, min %.1f, max %.1f", passes, ns[k][0], ns[k][passes - 1]);
    printf(")\n");
  }
  for (uint i = 0; i < nattrs; i++)
    ea_unref(attrs[i]);
  free(out);
  free(nets);
  free(attrs);
  rfree(p);
  config_unref(c);
}

static void
test_bench(void **state)
{
  (void) state;
  const char *env = getenv("FILTER_BENCH");
  uint n = env ? (uint) atoi(env) : 0;
  if (n == 1)
    n = 1000000;
  run_bench(n ? n : 20000, !!n);
}

int
main(void)
{
  resource_init();
  log_init("filter_test");
  hash_seed_init();
  ea_init();
  proto_build(&proto_device);
  rcu_thread_register();
  if (getenv("FILTER_BENCH_ONLY")) {
    const struct CMUnitTest bench[] = { cmocka_unit_test(test_bench) };
    return cmocka_run_group_tests(bench, NULL, NULL);
  }
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_values),
    cmocka_unit_test(test_errors),
    cmocka_unit_test(test_cond_errors),
    cmocka_unit_test(test_inline_bound),
    cmocka_unit_test(test_tables_read),
    cmocka_unit_test(test_intern),
    cmocka_unit_test(test_sets),
    cmocka_unit_test(test_trie),
    cmocka_unit_test(test_routes),
    cmocka_unit_test(test_print),
    cmocka_unit_test(test_exec_on_dirty_stack),
    cmocka_unit_test(test_same),
    cmocka_unit_test(test_concurrent),
    cmocka_unit_test(test_fuzz_parser),
    cmocka_unit_test(test_fuzz_interp),
    cmocka_unit_test(test_bench),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
