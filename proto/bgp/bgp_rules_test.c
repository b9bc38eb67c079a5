/*
 * Unit tests of the session rules (bgp_rules.c) and the AS_PATH helpers
 * they use: loops, first AS, route reflection, confederations, RFC 9234
 * roles/OTC. Expected values follow BIRD 2's behaviour.
 */
#include "proto/bgp/bgp_test.h"
#include "proto/bgp/bgp_rules.h"

#define LOCAL_AS 65000
#define ROUTER_ID 0x0a000001    /* 10.0.0.1 */

static struct bgp_peer_info
peer(bool ibgp, u32 remote_as)
{
  return (struct bgp_peer_info){
    .remote_id = 0x0a000063, .remote_as = remote_as, .local_as = LOCAL_AS, .public_as = LOCAL_AS,
    .local_id = ROUTER_ID, .default_local_pref = 100, .local_role = BGP_ROLE_NONE,
    .ibgp = ibgp, .interior = ibgp, .interpret_communities = true,
  };
}

static struct bgp_peer_info
rr_client(u32 cluster, u32 remote_id)
{
  struct bgp_peer_info p = peer(true, LOCAL_AS);
  p.rr_client = true;
  p.rr_cluster_id = cluster;
  p.remote_id = remote_id;
  return p;
}

/* A builder with ORIGIN and the given AS path (internal format). */
static void
bld(struct ea_builder *b, const u8 *path, uint plen)
{
  ea_builder_init(b);
  b->source = RTS_BGP;
  ea_set_int(b, BGP_EA(BA_ORIGIN), EAF_INT, BAF_TRANSITIVE, ORIGIN_IGP);
  ea_set_data(b, BGP_EA(BA_AS_PATH), EAF_AS_PATH, BAF_TRANSITIVE, path, plen);
}

static const struct eattr *
bfind(const struct ea_builder *b, u8 code)
{
  for (uint i = 0; i < b->count; i++)
    if (b->a[i].id == BGP_EA(code))
      return &b->a[i];
  return NULL;
}

static uint
seq(u8 *buf, u8 type, uint n, const u32 *asns)
{
  const uint counts[] = { n };
  return mk_path(buf, 1, &type, counts, asns);
}

static void
test_as_path_helpers(void **state)
{
  (void) state;
  u8 buf[64];
  static const u8 types[] = { AS_PATH_CONFED_SEQUENCE, AS_PATH_SEQUENCE, AS_PATH_CONFED_SET };
  static const uint counts[] = { 2, 2, 1 };
  static const u32 asns[] = { 65010, 65011, 65020, 65000, 65012 };
  uint len = mk_path(buf, 3, types, counts, asns);

  assert_true(bgp_as_path_has_confed(buf, len));
  assert_int_equal(bgp_as_path_first_hop(buf, len), 65010);
  assert_int_equal(bgp_as_path_first_as(buf, len), 65020);   /* past the confed segment */
  assert_int_equal(bgp_as_path_count(buf, len, 65000), 1);
  assert_int_equal(bgp_as_path_count(buf, len, 7), 0);

  uint sl;
  u8 *s = bgp_as_path_strip_confed(test_lp, buf, len, &sl);
  assert_int_equal(sl, 2 + 8);
  assert_false(bgp_as_path_has_confed(s, sl));
  assert_int_equal(bgp_as_path_first_as(s, sl), 65020);
  /* an all-confed path strips to the empty path */
  u8 c[16];
  uint cl = seq(c, AS_PATH_CONFED_SEQUENCE, 1, asns);
  bgp_as_path_strip_confed(test_lp, c, cl, &sl);
  assert_int_equal(sl, 0);

  /* confed prepend joins the leading confed sequence... */
  uint pl;
  u8 *p = bgp_as_path_prepend_confed(test_lp, buf, len, 65001, &pl);
  assert_int_equal(pl, len + 4);
  assert_int_equal(p[0], AS_PATH_CONFED_SEQUENCE);
  assert_int_equal(p[1], 3);
  assert_int_equal(bgp_as_path_first_hop(p, pl), 65001);
  assert_int_equal(bgp_as_path_length(p, pl), 2);     /* confed segments do not count */
  /* ...and opens one in front of a plain sequence */
  u8 q[16];
  uint ql = seq(q, AS_PATH_SEQUENCE, 1, asns + 2);
  p = bgp_as_path_prepend_confed(test_lp, q, ql, 65001, &pl);
  assert_int_equal(pl, ql + 6);
  assert_int_equal(p[0], AS_PATH_CONFED_SEQUENCE);
  assert_int_equal(p[1], 1);
  assert_int_equal(p[6], AS_PATH_SEQUENCE);
  assert_true(bgp_as_path_valid(p, pl));
}

static void
test_import_as_loop(void **state)
{
  (void) state;
  struct bgp_peer_info p = peer(false, 65001);
  u8 path[32];
  static const u32 asns[] = { 65001, LOCAL_AS, 65003, LOCAL_AS };
  struct ea_builder b;

  bld(&b, path, seq(path, AS_PATH_SEQUENCE, 3, asns));
  assert_int_equal(bgp_rules_import(&p, &b), BGP_RX_LOOP);
  p.allow_local_as = 1;                     /* once allowed... */
  assert_int_equal(bgp_rules_import(&p, &b), BGP_RX_ACCEPT);
  bld(&b, path, seq(path, AS_PATH_SEQUENCE, 4, asns));
  assert_int_equal(bgp_rules_import(&p, &b), BGP_RX_LOOP);   /* ...twice is too much */
  p.allow_local_as = -1;                    /* `allow local as;` without a number */
  assert_int_equal(bgp_rules_import(&p, &b), BGP_RX_ACCEPT);

  /* toward true eBGP a confederation is one AS: its ASN is ours too */
  p = peer(false, 65001);
  p.confederation = p.public_as = 100;
  static const u32 conf[] = { 65001, 100 };
  bld(&b, path, seq(path, AS_PATH_SEQUENCE, 2, conf));
  assert_int_equal(bgp_rules_import(&p, &b), BGP_RX_LOOP);
}

static void
test_import_first_as(void **state)
{
  (void) state;
  struct bgp_peer_info p = peer(false, 65001);
  u8 path[32];
  static const u32 asns[] = { 65002, 65001 };
  struct ea_builder b;
  bld(&b, path, seq(path, AS_PATH_SEQUENCE, 2, asns));
  assert_int_equal(bgp_rules_import(&p, &b), BGP_RX_ACCEPT);   /* off by default */
  p.enforce_first_as = true;
  assert_int_equal(bgp_rules_import(&p, &b), BGP_RX_FIRST_AS);
  bld(&b, path, seq(path, AS_PATH_SEQUENCE, 1, asns + 1));
  assert_int_equal(bgp_rules_import(&p, &b), BGP_RX_ACCEPT);

  /* a confederation member must lead with its AS_CONFED_SEQUENCE */
  p = peer(false, 65002);
  p.interior = true;
  p.confederation = 100;
  bld(&b, path, seq(path, AS_PATH_SEQUENCE, 2, asns));
  assert_int_equal(bgp_rules_import(&p, &b), BGP_RX_FIRST_AS);
  bld(&b, path, seq(path, AS_PATH_CONFED_SEQUENCE, 1, asns));
  assert_int_equal(bgp_rules_import(&p, &b), BGP_RX_ACCEPT);
  p.enforce_first_as = true;                /* the member's AS is its first hop */
  assert_int_equal(bgp_rules_import(&p, &b), BGP_RX_ACCEPT);
}

static void
test_import_reflection_loops(void **state)
{
  (void) state;
  struct ea_builder b;
  struct bgp_peer_info p = peer(true, LOCAL_AS);
  bld(&b, (const u8 *) "", 0);
  ea_set_int(&b, BGP_EA(BA_ORIGINATOR_ID), EAF_ROUTER_ID, BAF_OPTIONAL, ROUTER_ID);
  assert_int_equal(bgp_rules_import(&p, &b), BGP_RX_LOOP);
  ea_set_int(&b, BGP_EA(BA_ORIGINATOR_ID), EAF_ROUTER_ID, BAF_OPTIONAL, ROUTER_ID + 1);
  assert_int_equal(bgp_rules_import(&p, &b), BGP_RX_ACCEPT);

  /* our cluster id in CLUSTER_LIST: checked on client sessions (as BIRD) */
  u32 cl[2] = { 0x01020304, 0x05060708 };
  ea_set_data(&b, BGP_EA(BA_CLUSTER_LIST), EAF_INT_SET, BAF_OPTIONAL, cl, sizeof(cl));
  assert_int_equal(bgp_rules_import(&p, &b), BGP_RX_ACCEPT);
  p = rr_client(0x05060708, 2);
  assert_int_equal(bgp_rules_import(&p, &b), BGP_RX_LOOP);
  p.rr_cluster_id = 0x0a0b0c0d;
  assert_int_equal(bgp_rules_import(&p, &b), BGP_RX_ACCEPT);
}

static void
test_import_otc(void **state)
{
  (void) state;
  struct ea_builder b;
  struct bgp_peer_info p = peer(false, 65001);
  static const struct {
    u8 role;
    bool with_otc;
    u32 otc;
    enum bgp_rx_verdict want;
    u32 otc_after;              /* 0: none */
  } cases[] = {
    /* from a customer or RS client: any OTC is a leak */
    { BGP_ROLE_PROVIDER, false, 0, BGP_RX_ACCEPT, 0 },
    { BGP_ROLE_PROVIDER, true, 65001, BGP_RX_LEAK, 0 },
    { BGP_ROLE_RS, true, 65001, BGP_RX_LEAK, 0 },
    { BGP_ROLE_RS, false, 0, BGP_RX_ACCEPT, 0 },
    /* from a peer: only the peer's own ASN; marked if absent */
    { BGP_ROLE_PEER, true, 65001, BGP_RX_ACCEPT, 65001 },
    { BGP_ROLE_PEER, true, 65099, BGP_RX_LEAK, 0 },
    { BGP_ROLE_PEER, false, 0, BGP_RX_ACCEPT, 65001 },
    /* from a provider or RS: marked with the neighbor's ASN if absent */
    { BGP_ROLE_CUSTOMER, false, 0, BGP_RX_ACCEPT, 65001 },
    { BGP_ROLE_CUSTOMER, true, 65099, BGP_RX_ACCEPT, 65099 },
    { BGP_ROLE_RS_CLIENT, false, 0, BGP_RX_ACCEPT, 65001 },
    /* no role: no procedure */
    { BGP_ROLE_NONE, false, 0, BGP_RX_ACCEPT, 0 },
    { BGP_ROLE_NONE, true, 65099, BGP_RX_ACCEPT, 65099 },
  };
  static const u32 asns[] = { 65001 };
  u8 path[16];
  uint plen = seq(path, AS_PATH_SEQUENCE, 1, asns);
  for (uint i = 0; i < ARRAY_SIZE(cases); i++) {
    p.local_role = cases[i].role;
    bld(&b, path, plen);
    if (cases[i].with_otc)
      ea_set_int(&b, BGP_EA(BA_OTC), EAF_INT, BAF_OPTIONAL | BAF_TRANSITIVE, cases[i].otc);
    enum bgp_rx_verdict v = bgp_rules_import(&p, &b);
    if (v != cases[i].want)
      fail_msg("case %u: verdict %d, want %d", i, v, cases[i].want);
    const struct eattr *e = bfind(&b, BA_OTC);
    if (v == BGP_RX_ACCEPT && (e ? e->val : 0) != cases[i].otc_after)
      fail_msg("case %u: OTC %u, want %u", i, e ? e->val : 0, cases[i].otc_after);
  }
}

static struct ea_list *
route(u32 otc, u32 community)
{
  struct ea_builder b;
  static const u32 asns[] = { 65010 };
  static u8 path[16];
  bld(&b, path, seq(path, AS_PATH_SEQUENCE, 1, asns));
  ea_set_int(&b, BGP_EA(BA_LOCAL_PREF), EAF_INT, BAF_TRANSITIVE, 200);
  ea_set_int(&b, BGP_EA(BA_MULTI_EXIT_DISC), EAF_INT, BAF_OPTIONAL, 5);
  if (otc)
    ea_set_int(&b, BGP_EA(BA_OTC), EAF_INT, BAF_OPTIONAL | BAF_TRANSITIVE, otc);
  static u32 comm;
  comm = community;
  if (community)
    ea_set_data(&b, BGP_EA(BA_COMMUNITY), EAF_INT_SET, BAF_OPTIONAL | BAF_TRANSITIVE, &comm, 4);
  return ea_intern(&b);
}

/* The well-known communities are cached in the list: the same answer
 * each time, for lists with and without them, and equal lists still
 * intern to one (the cache is not part of the key). */
static void
test_wk_cached(void **state)
{
  (void) state;
  struct ea_list *a = route(0, BGP_COMM_NO_EXPORT), *none = route(0, 0), *other = route(0, 65000U << 16 | 1);
  for (int i = 0; i < 2; i++) {
    assert_int_equal(bgp_wk_communities(a), BGP_WK_NO_EXPORT);
    assert_int_equal(bgp_wk_communities(none), 0);
    assert_int_equal(bgp_wk_communities(other), 0);
  }
  struct ea_list *again = route(0, BGP_COMM_NO_EXPORT);
  assert_ptr_equal(again, a);
  ea_unref(again);
  ea_unref(a);
  ea_unref(none);
  ea_unref(other);
}

static void
test_export_ok(void **state)
{
  (void) state;
  struct ea_list *a = route(0, 0);
  struct bgp_peer_info client = rr_client(ROUTER_ID, 2), client2 = rr_client(ROUTER_ID, 3);
  struct bgp_peer_info ibgp = peer(true, LOCAL_AS), ibgp2 = peer(true, LOCAL_AS), ebgp = peer(false, 65001);

  /* RFC 4456: non-client to non-client no; anything involving a client yes */
  assert_false(bgp_rules_export_ok(&ibgp, &ibgp2, a, bgp_wk_communities(a)));
  assert_true(bgp_rules_export_ok(&ibgp, &client, a, bgp_wk_communities(a)));
  assert_true(bgp_rules_export_ok(&client, &ibgp, a, bgp_wk_communities(a)));
  assert_true(bgp_rules_export_ok(&client, &client2, a, bgp_wk_communities(a)));
  assert_true(bgp_rules_export_ok(&ibgp, NULL, a, bgp_wk_communities(a)));      /* not from BGP */
  assert_true(bgp_rules_export_ok(&ibgp, &ebgp, a, bgp_wk_communities(a)));
  assert_true(bgp_rules_export_ok(&ebgp, &ibgp, a, bgp_wk_communities(a)));
  ea_unref(a);

  /* our cluster id already in the list: not back to clients */
  struct ea_builder b;
  struct ea_list *plain = route(0, 0);
  ea_builder_from(&b, plain);
  u32 cl = ROUTER_ID;
  ea_set_data(&b, BGP_EA(BA_CLUSTER_LIST), EAF_INT_SET, BAF_OPTIONAL, &cl, 4);
  a = ea_intern(&b);
  ea_unref(plain);
  assert_false(bgp_rules_export_ok(&client, &ibgp, a, bgp_wk_communities(a)));
  assert_true(bgp_rules_export_ok(&ibgp, &client, a, bgp_wk_communities(a)));
  ea_unref(a);

  /* NO_EXPORT stays inside the confederation, NO_EXPORT_SUBCONFED inside the AS */
  struct bgp_peer_info member = peer(false, 65002);
  member.interior = true;
  struct bgp_peer_info other = peer(false, 65003);
  a = route(0, BGP_COMM_NO_EXPORT);
  assert_false(bgp_rules_export_ok(&ebgp, &ibgp, a, bgp_wk_communities(a)));
  assert_true(bgp_rules_export_ok(&member, &ibgp, a, bgp_wk_communities(a)));
  assert_true(bgp_rules_export_ok(&ebgp, NULL, a, bgp_wk_communities(a)));       /* not from BGP: as BIRD 2 */
  ea_unref(a);
  a = route(0, BGP_COMM_NO_EXPORT_SUBCONFED);
  assert_false(bgp_rules_export_ok(&member, &other, a, bgp_wk_communities(a)));
  assert_true(bgp_rules_export_ok(&ibgp, &other, a, bgp_wk_communities(a)));
  ea_unref(a);

  /* RFC 9234 egress: OTC routes go to customers (and peers/RS clients when we are RS) only */
  a = route(65099, 0);
  static const u8 up[] = { BGP_ROLE_CUSTOMER, BGP_ROLE_PEER, BGP_ROLE_RS_CLIENT };
  static const u8 down[] = { BGP_ROLE_PROVIDER, BGP_ROLE_RS, BGP_ROLE_NONE };
  for (uint i = 0; i < 3; i++) {
    ebgp.local_role = up[i];
    assert_false(bgp_rules_export_ok(&ebgp, &other, a, bgp_wk_communities(a)));
    assert_true(bgp_rules_export_ok(&ebgp, NULL, a, bgp_wk_communities(a)));     /* not from BGP: as BIRD 2 */
    ebgp.local_role = down[i];
    assert_true(bgp_rules_export_ok(&ebgp, &other, a, bgp_wk_communities(a)));
  }
  ea_unref(a);
}

/* One pass finds every well-known community the export rules test, in
 * any position, and nothing else (BLACKHOLE and ordinary ones are no bit). */
static void
test_wk_communities(void **state)
{
  (void) state;
  struct ea_list *plain = route(0, 0);
  assert_int_equal(bgp_wk_communities(plain), 0);
  struct ea_builder b;
  ea_builder_from(&b, plain);
  static const u32 comms[] = { 0x00010002, BGP_COMM_LLGR_STALE, BGP_COMM_BLACKHOLE, 0xFFFEFFFF,
                               BGP_COMM_NO_EXPORT, BGP_COMM_GRACEFUL_SHUTDOWN, 0xFFFFFFFF };
  ea_set_data(&b, BGP_EA(BA_COMMUNITY), EAF_INT_SET, BAF_OPTIONAL | BAF_TRANSITIVE, comms, sizeof(comms));
  struct ea_list *a = ea_intern(&b);
  assert_int_equal(bgp_wk_communities(a), BGP_WK_LLGR_STALE | BGP_WK_NO_EXPORT);
  ea_unref(a);
  ea_builder_from(&b, plain);
  static const u32 comms2[] = { BGP_COMM_NO_EXPORT_SUBCONFED, 0x00010002, BGP_COMM_NO_ADVERTISE };
  ea_set_data(&b, BGP_EA(BA_COMMUNITY), EAF_INT_SET, BAF_OPTIONAL | BAF_TRANSITIVE, comms2, sizeof(comms2));
  a = ea_intern(&b);
  assert_int_equal(bgp_wk_communities(a), BGP_WK_NO_EXPORT_SUBCONFED | BGP_WK_NO_ADVERTISE);
  ea_unref(a);
  ea_unref(plain);
}

/* Export attributes for p of a route a from src, interned. */
static struct ea_list *
export(const struct bgp_peer_info *p, const struct bgp_peer_info *src, struct ea_list *a)
{
  struct ea_builder b;
  ea_builder_from(&b, a);
  bgp_rules_export_attrs(p, src, a, 0, &b, test_lp);
  return ea_intern(&b);
}

static void
test_export_reflection(void **state)
{
  (void) state;
  struct bgp_peer_info client = rr_client(0x01020304, 0x0a000002), client2 = rr_client(0x01020304, 0x0a000003);
  struct bgp_peer_info nonclient = peer(true, LOCAL_AS);
  nonclient.remote_id = 0x0a000004;
  struct ea_list *a = route(0, 0);

  /* client -> non-client: ORIGINATOR_ID = the client, CLUSTER_LIST = ours */
  struct ea_list *o = export(&nonclient, &client, a);
  const struct eattr *e = find_bgp(o, BA_ORIGINATOR_ID);
  assert_non_null(e);
  assert_int_equal(e->val, 0x0a000002);
  e = find_bgp(o, BA_CLUSTER_LIST);
  assert_non_null(e);
  assert_int_equal(e->len, 4);
  assert_int_equal(bgp_get_host32(ea_data(o, e)), 0x01020304);
  assert_int_equal(find_bgp(o, BA_LOCAL_PREF)->val, 200);   /* kept inside the AS */
  assert_int_equal(find_bgp(o, BA_MULTI_EXIT_DISC)->val, 5);
  assert_int_equal(find_bgp(o, BA_AS_PATH)->len, 6);        /* no prepend */
  ea_unref(o);

  /* client -> client of the same cluster: the cluster id once */
  o = export(&client2, &client, a);
  assert_int_equal(find_bgp(o, BA_CLUSTER_LIST)->len, 4);
  ea_unref(o);

  /* existing ORIGINATOR_ID stays; a different destination cluster goes first */
  struct ea_builder b;
  ea_builder_from(&b, a);
  ea_set_int(&b, BGP_EA(BA_ORIGINATOR_ID), EAF_ROUTER_ID, BAF_OPTIONAL, 0x0a0000ff);
  u32 old = 0x09090909;
  ea_set_data(&b, BGP_EA(BA_CLUSTER_LIST), EAF_INT_SET, BAF_OPTIONAL, &old, 4);
  struct ea_list *a2 = ea_intern(&b);
  struct bgp_peer_info other = rr_client(0x05050505, 0x0a000005);
  o = export(&other, &client, a2);
  assert_int_equal(find_bgp(o, BA_ORIGINATOR_ID)->val, 0x0a0000ff);
  e = find_bgp(o, BA_CLUSTER_LIST);
  assert_int_equal(e->len, 12);
  const u8 *d = ea_data(o, e);
  assert_int_equal(bgp_get_host32(d), 0x05050505);
  assert_int_equal(bgp_get_host32(d + 4), 0x01020304);
  assert_int_equal(bgp_get_host32(d + 8), 0x09090909);
  ea_unref(o);

  /* to eBGP: reflection attributes, LOCAL_PREF and a BGP route's MED go */
  struct bgp_peer_info ebgp = peer(false, 65001);
  o = export(&ebgp, &client, a2);
  assert_null(find_bgp(o, BA_ORIGINATOR_ID));
  assert_null(find_bgp(o, BA_CLUSTER_LIST));
  assert_null(find_bgp(o, BA_LOCAL_PREF));
  assert_null(find_bgp(o, BA_MULTI_EXIT_DISC));
  ea_unref(o);
  ea_unref(a2);
  ea_unref(a);
}

static void
test_export_confederation(void **state)
{
  (void) state;
  /* we are sub-AS 65000 of confederation 100 */
  struct bgp_peer_info member = peer(false, 65002), external = peer(false, 65001);
  member.interior = true;
  member.confederation = external.confederation = 100;
  external.public_as = 100;
  struct bgp_peer_info src = member;

  struct ea_list *a = route(0, 0);
  /* to a member: AS_CONFED_SEQUENCE of our sub-AS, MED and LOCAL_PREF kept */
  struct ea_list *o = export(&member, NULL, a);
  const struct eattr *e = find_bgp(o, BA_AS_PATH);
  const u8 *p = ea_data(o, e);
  assert_int_equal(p[0], AS_PATH_CONFED_SEQUENCE);
  assert_int_equal(bgp_as_path_first_hop(p, e->len), 65000);
  assert_int_equal(find_bgp(o, BA_LOCAL_PREF)->val, 200);
  assert_int_equal(find_bgp(o, BA_MULTI_EXIT_DISC)->val, 5);

  /* what came from a member goes out to true eBGP with the confed segments
   * replaced by the confederation ASN */
  struct ea_list *o1 = o;
  o = export(&external, &src, o1);
  ea_unref(o1);
  e = find_bgp(o, BA_AS_PATH);
  p = ea_data(o, e);
  assert_false(bgp_as_path_has_confed(p, e->len));
  assert_int_equal(bgp_as_path_first_as(p, e->len), 100);
  assert_int_equal(bgp_as_path_length(p, e->len), 2);     /* 100 65010 */
  assert_null(find_bgp(o, BA_LOCAL_PREF));
  assert_null(find_bgp(o, BA_MULTI_EXIT_DISC));
  ea_unref(o);
  ea_unref(a);
}

/* BIRD's "fresh" MED: one the export filter set goes to eBGP, a learned one
 * does not */
static void
test_export_med_fresh(void **state)
{
  (void) state;
  struct bgp_peer_info ebgp = peer(false, 65001), src = peer(false, 65002);
  struct ea_list *a = route(0, 0);                  /* MED 5, as learned */
  struct ea_builder b;
  ea_builder_from(&b, a);
  ea_set_int(&b, BGP_EA(BA_MULTI_EXIT_DISC), EAF_INT, BAF_OPTIONAL, 77);
  struct ea_list *f = ea_intern(&b);                /* the export filter's result */
  assert_false(bgp_med_fresh(a, a));
  assert_false(bgp_med_fresh(a, NULL));
  assert_true(bgp_med_fresh(f, a));

  ea_builder_from(&b, f);
  bgp_rules_export_attrs(&ebgp, &src, f, 1, &b, test_lp);
  struct ea_list *o = ea_intern(&b);
  assert_int_equal(find_bgp(o, BA_MULTI_EXIT_DISC)->val, 77);
  ea_unref(o);
  ea_builder_from(&b, f);
  bgp_rules_export_attrs(&ebgp, &src, f, bgp_med_fresh(a, a), &b, test_lp);
  o = ea_intern(&b);
  assert_null(find_bgp(o, BA_MULTI_EXIT_DISC));
  ea_unref(o);
  ea_unref(f);
  ea_unref(a);
}

static void
test_export_otc(void **state)
{
  (void) state;
  struct bgp_peer_info p = peer(false, 65001);
  p.public_as = 100;                        /* the ASN the peer sees */
  struct ea_list *a = route(0, 0);
  static const struct {
    u8 role;
    u32 want;
  } cases[] = {
    { BGP_ROLE_PROVIDER, 100 }, { BGP_ROLE_PEER, 100 }, { BGP_ROLE_RS, 100 },
    { BGP_ROLE_CUSTOMER, 0 }, { BGP_ROLE_RS_CLIENT, 0 }, { BGP_ROLE_NONE, 0 },
  };
  for (uint i = 0; i < ARRAY_SIZE(cases); i++) {
    p.local_role = cases[i].role;
    struct ea_list *o = export(&p, NULL, a);
    const struct eattr *e = find_bgp(o, BA_OTC);
    if ((e ? e->val : 0) != cases[i].want)
      fail_msg("role %u: OTC %u, want %u", cases[i].role, e ? e->val : 0, cases[i].want);
    ea_unref(o);
  }
  ea_unref(a);
  /* an existing OTC is never replaced */
  a = route(65099, 0);
  p.local_role = BGP_ROLE_PROVIDER;
  struct ea_list *o = export(&p, NULL, a);
  assert_int_equal(find_bgp(o, BA_OTC)->val, 65099);
  ea_unref(o);
  ea_unref(a);
}

int
main(void)
{
  bgp_test_init("bgp_rules_test");
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_as_path_helpers),
    cmocka_unit_test(test_import_as_loop),
    cmocka_unit_test(test_import_first_as),
    cmocka_unit_test(test_import_reflection_loops),
    cmocka_unit_test(test_import_otc),
    cmocka_unit_test(test_wk_cached),
    cmocka_unit_test(test_export_ok),
    cmocka_unit_test(test_wk_communities),
    cmocka_unit_test(test_export_reflection),
    cmocka_unit_test(test_export_confederation),
    cmocka_unit_test(test_export_med_fresh),
    cmocka_unit_test(test_export_otc),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
