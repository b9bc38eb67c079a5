/*
 * Unit tests of dynamic BGP's config side: `neighbor range` parsing, the
 * config clone a spawned instance runs with, and how the clone follows a
 * new config (bgp_respawn_config). Sessions, names and the listener are
 * tested with real peers in test/test_bgp_dynamic.py.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "proto/bgp/bgp.h"
#include "conf/conf.h"
#include "conf/conf_test.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/printf.h"

static struct config *
parse_text(const char *text, char *err, size_t errlen)
{
  return cf_test_parse("router id 10.0.0.1;\n", text, err, errlen);
}

/* A range protocol `rng` with the neighbor option nbr. */
static struct config *
parse_range(const char *nbr)
{
  char text[1024], err[600];
  bsnprintf(text, sizeof(text),
            "filter dynbgp2 { accept; }\n"
            "protocol bgp rng {\n  local as 65001;\n  %s\n  multihop;\n"
            "  dynamic name \"peer\"; dynamic name digits 3;\n"
            "  ipv4 { import all; export all; };\n}\n", nbr);
  struct config *c = parse_text(text, err, sizeof(err));
  if (!c)
    fail_msg("parse failed: %s\n%s", err, text);
  return c;
}

static struct proto_config *
proto_cf(struct config *c, const char *name)
{
  struct symbol *s = cf_find_symbol(c, name);
  assert_non_null(s);
  assert_int_equal(s->class, SYM_PROTO);
  return s->proto;
}

static ip_addr
ip(const char *s)
{
  ip_addr a;
  assert_true(ipa_pton(s, &a));
  return a;
}

static void
test_parse_range(void **state)
{
  (void) state;
  struct config *c = parse_range("neighbor range 10.87.0.0/16 as 65010;");
  const struct bgp_config *cf = (const struct bgp_config *) proto_cf(c, "rng");
  assert_int_equal(cf->remote_range.type, NET_IP4);
  assert_int_equal(cf->remote_range.pxlen, 16);
  assert_true(ipa_zero(cf->remote_ip));
  assert_int_equal(cf->remote_as, 65010);
  assert_true(bgp_cf_is_range(cf));
  assert_true(bgp_cf_passive(cf) && !cf->passive);   /* its instances are not passive */
  assert_string_equal(cf->dynamic_name, "peer");
  assert_int_equal(cf->dynamic_name_digits, 3);

  static const struct { const char *text, *msg; } bad[] = {
    { "neighbor 10.0.0.2 as 1; neighbor range 10.0.0.0/8 as 2;", "Only one neighbor per BGP instance is allowed" },
    { "neighbor range 10.0.0.0/8 as 2; neighbor 10.0.0.2;", "Only one neighbor per BGP instance is allowed" },
    { "neighbor range 10.0.0.0/8 as 2; dynamic name digits 11;", "Dynamic name digits must be at most 10" },
    { "neighbor range 10.0.0.0/8 as 2; dynamic name \"a%b\";", "Forbidden character '%' in dynamic name" },
  };
  for (uint i = 0; i < ARRAY_SIZE(bad); i++) {
    char text[512], err[600];
    bsnprintf(text, sizeof(text), "protocol bgp { local as 1; %s multihop; ipv4 { import all; export all; }; }", bad[i].text);
    assert_null(parse_text(text, err, sizeof(err)));
    if (!strstr(err, bad[i].msg))
      fail_msg("%s: got %s", bad[i].text, err);
  }
}

static void
test_clone(void **state)
{
  (void) state;
  struct config *c = parse_range("neighbor range 10.87.0.0/16 as 65010;");
  struct proto_config *rng = proto_cf(c, "rng");
  struct proto_config *pc = proto_config_clone(rng, "peer001", NULL);
  assert_non_null(pc);
  /* the CLI finds it by name; it is not a configured protocol */
  assert_ptr_equal(proto_cf(c, "peer001"), pc);
  assert_string_equal(pc->name, "peer001");
  assert_ptr_equal(pc->spawned_from, rng);
  assert_ptr_equal(pc->global, c);
  LIST_WALK_ENTRY(x, &c->protos, struct proto_config, n)
    assert_ptr_not_equal(x, pc);
  /* its own copy of the channels, with the parent's table and filters */
  assert_int_equal(list_length(&pc->channels), 1);
  struct channel_config *cc = container_of(list_first(&pc->channels), struct channel_config, n);
  struct channel_config *rc = container_of(list_first(&rng->channels), struct channel_config, n);
  assert_ptr_not_equal(cc, rc);
  assert_ptr_equal(cc->parent, pc);
  assert_ptr_equal(cc->table, rc->table);
  assert_ptr_equal(cc->out_filter, rc->out_filter);
  assert_int_equal(((struct bgp_config *) pc)->remote_as, 65010);

  /* names the config gives another meaning are not free */
  assert_null(proto_config_clone(rng, "dynbgp2", NULL));
  assert_null(proto_config_clone(rng, "rng", NULL));
}

static void
test_respawn(void **state)
{
  (void) state;
  struct config *c = parse_range("neighbor range 10.87.0.0/16 as 65010;");
  struct proto_config *pc = proto_config_clone(proto_cf(c, "rng"), "peer001", NULL);
  ((struct bgp_config *) pc)->remote_ip = ip("10.87.1.2");

  /* the new config of the range: the instance keeps its neighbor */
  struct config *c2 = parse_range("neighbor range 10.87.0.0/16 as 65010;");
  struct proto_config *nc = proto_config_clone(proto_cf(c2, "rng"), "peer001", pc);
  assert_non_null(nc);
  assert_true(ipa_equal(((struct bgp_config *) nc)->remote_ip, ip("10.87.1.2")));
  assert_false(bgp_cf_is_range((struct bgp_config *) nc));
  assert_ptr_equal(proto_cf(c2, "peer001"), nc);

  /* a range without the address, or no range, spawns it no more: no
   * symbol is left behind for it */
  static const char *const gone[] = { "neighbor range 10.88.0.0/16 as 65010;", "neighbor 10.87.1.2 as 65010;" };
  for (uint i = 0; i < ARRAY_SIZE(gone); i++) {
    struct config *c3 = parse_range(gone[i]);
    assert_null(proto_config_clone(proto_cf(c3, "rng"), "peer001", pc));
    struct symbol *s = cf_find_symbol(c3, "peer001");
    assert_true(!s || s->class == SYM_VOID);
  }
}

int
main(void)
{
  resource_init();
  log_init("bgp_dynamic_test");
  hash_seed_init();
  ea_init();
  bgp_build();
  rcu_thread_register();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_parse_range),
    cmocka_unit_test(test_clone),
    cmocka_unit_test(test_respawn),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
