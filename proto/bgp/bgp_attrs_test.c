/*
 * Unit tests for proto/bgp/bgp_attrs.c: attribute round trips, AS4
 * narrowing and merging (RFC 6793), and every RFC 7606 class on
 * hand-made byte vectors.
 */
#include "proto/bgp/bgp_test.h"

#define T BAF_TRANSITIVE
#define O BAF_OPTIONAL
#define OT (BAF_OPTIONAL | BAF_TRANSITIVE)

static struct bgp_attrs res;

static enum bgp_attr_verdict
parse_b(const struct bgp_rx_ctx *c, const u8 *a, uint len, bool nlri, struct ea_builder *b)
{
  ea_builder_init(b);
  return bgp_attrs_parse(c, test_lp, a, len, nlri, b, &res);
}

/* Parse; on OK return the interned list (caller unrefs). */
static struct ea_list *
parse(const struct bgp_rx_ctx *c, const u8 *a, uint len, bool nlri, enum bgp_attr_verdict want)
{
  struct ea_builder b;
  assert_int_equal(parse_b(c, a, len, nlri, &b), want);
  return want == BGP_ATTR_SESSION_RESET ? NULL : ea_intern(&b);
}

/* ORIGIN IGP, AS_PATH [65001], NEXT_HOP 192.0.2.1 */
static u8 *
base_attrs(u8 *p, bool as4)
{
  static const u8 origin = 0, nh[] = { 192, 0, 2, 1 };
  static const u8 path4[] = { 2, 1, 0, 0, 0xfd, 0xe9 }, path2[] = { 2, 1, 0xfd, 0xe9 };
  p = put_attr(p, T, BA_ORIGIN, &origin, 1);
  p = as4 ? put_attr(p, T, BA_AS_PATH, path4, 6) : put_attr(p, T, BA_AS_PATH, path2, 4);
  return put_attr(p, T, BA_NEXT_HOP, nh, 4);
}

/* A builder with every attribute we know, long AS path included. */
static struct ea_list *
full_list(void)
{
  static u8 path[4096];
  static u32 asns[700];
  static const u8 types[] = { AS_PATH_CONFED_SEQUENCE, AS_PATH_SEQUENCE, AS_PATH_SEQUENCE, AS_PATH_SEQUENCE, AS_PATH_SET };
  static const uint counts[] = { 2, 255, 255, 90, 3 };
  uint k = 0;
  asns[k++] = 64512;
  asns[k++] = 64513;
  for (uint i = 0; i < 600; i++)
    asns[k++] = i % 3 ? 65000 + i : 4200000000u + i;
  asns[k++] = 4200000001u;
  asns[k++] = 65010;
  asns[k++] = 7;
  uint plen = mk_path(path, 5, types, counts, asns);

  static ip_addr nh;
  nh = ipa_from_ip4(ip4_from_u32(0xc6336401));
  static const u32 aggr[2] = { 4200000002u, 0x0a000001 };
  static const u32 comm[] = { (65000u << 16) | 1, BGP_COMM_NO_EXPORT, BGP_COMM_BLACKHOLE };
  static const u32 cl[] = { 1, 2 };
  static u64 ec[2] = { 0x0002fde800000064ULL, 0x000300000000abcdULL };
  static const u32 lc[] = { 4200000000u, 1, 2, 65000, 3, 4 };
  static const u8 unk[] = { 1, 2, 3 };

  struct ea_builder b;
  ea_builder_init(&b);
  ea_set_int(&b, BGP_EA(BA_ORIGIN), EAF_INT, T, ORIGIN_INCOMPLETE);
  ea_set_data(&b, BGP_EA(BA_AS_PATH), EAF_AS_PATH, T, path, plen);
  ea_set_data(&b, BGP_EA(BA_NEXT_HOP), EAF_IP, T, &nh, sizeof(nh));
  ea_set_int(&b, BGP_EA(BA_MULTI_EXIT_DISC), EAF_INT, O, 100);
  ea_set_int(&b, BGP_EA(BA_LOCAL_PREF), EAF_INT, T, 200);
  ea_set_data(&b, BGP_EA(BA_ATOMIC_AGGR), EAF_OPAQUE, T, unk, 0);
  ea_set_data(&b, BGP_EA(BA_AGGREGATOR), EAF_OPAQUE, OT, aggr, 8);
  ea_set_data(&b, BGP_EA(BA_COMMUNITY), EAF_INT_SET, OT, comm, sizeof(comm));
  ea_set_int(&b, BGP_EA(BA_ORIGINATOR_ID), EAF_ROUTER_ID, O, 0x0a010101);
  ea_set_data(&b, BGP_EA(BA_CLUSTER_LIST), EAF_INT_SET, O, cl, sizeof(cl));
  ea_set_data(&b, BGP_EA(BA_EXT_COMMUNITY), EAF_EC_SET, OT, ec, sizeof(ec));
  ea_set_data(&b, BGP_EA(BA_LARGE_COMMUNITY), EAF_LC_SET, OT, lc, sizeof(lc));
  ea_set_int(&b, BGP_EA(BA_OTC), EAF_INT, OT, 65001);
  ea_set_data(&b, BGP_EA(99), EAF_OPAQUE, OT | BAF_PARTIAL, unk, sizeof(unk));
  return ea_intern(&b);
}

static void
test_roundtrip_all(void **state)
{
  struct ea_list *l1 = full_list();
  static u8 buf[8192];
  for (int as4 = 1; as4 >= 0; as4--) {
    struct bgp_tx_ctx tx = tx_ctx(as4);
    int len = bgp_attrs_encode(&tx, l1, true, buf, sizeof(buf));
    assert_true(len > 2400);
    struct bgp_rx_ctx rx = rx_ctx(as4, false);
    struct ea_list *l2 = parse(&rx, buf, len, true, BGP_ATTR_OK);
    assert_int_equal(res.discarded, 0);
    /* interned: equal lists are the very same object */
    assert_ptr_equal(l1, l2);
    ea_unref(l2);
  }
  /* too small a buffer is an error, not an overrun */
  struct bgp_tx_ctx tx = tx_ctx(true);
  assert_int_equal(bgp_attrs_encode(&tx, l1, true, buf, 100), -1);
  ea_unref(l1);
}

static void
test_partial_bit(void **state)
{
  static const u8 val[] = { 9, 9 };
  u8 buf[256], out[256], *p = base_attrs(buf, true);
  p = put_attr(p, OT, 200, val, 2);           /* unknown optional transitive */
  p = put_attr(p, O, 201, val, 2);            /* unknown optional non-transitive */
  struct bgp_rx_ctx rx = rx_ctx(true, true);
  struct ea_list *l = parse(&rx, buf, p - buf, true, BGP_ATTR_OK);
  const struct eattr *e = find_bgp(l, 200);
  assert_non_null(e);
  assert_int_equal(e->flags, OT);
  assert_int_equal(e->type, EAF_OPAQUE);
  assert_null(find_bgp(l, 201));

  struct bgp_tx_ctx tx = tx_ctx(true);
  int len = bgp_attrs_encode(&tx, l, false, out, sizeof(out));
  const u8 *q = out;
  while (q < out + len && q[1] != 200)
    q += 3 + q[2];
  assert_true(q < out + len);
  assert_int_equal(q[0], OT | BAF_PARTIAL);
  ea_unref(l);
}

/* One segment of one ASN, as paths are stored (host order). */
static u8 *
put_seg(u8 *p, u8 type, u32 asn)
{
  p[0] = type;
  p[1] = 1;
  memcpy(p + 2, &asn, 4);
  return p + 6;
}

/* The neighbor AS of RFC 4271 9.1.2.2 c): past confederation segments;
 * none where a set or nothing follows them. */
static void
test_as_path_first_as(void **state)
{
  (void) state;
  u8 path[18], *p = put_seg(path, AS_PATH_CONFED_SEQUENCE, 65100);
  assert_int_equal(bgp_as_path_first_as(path, p - path), 0);
  p = put_seg(p, AS_PATH_CONFED_SET, 65101);
  u8 *seq = p;
  p = put_seg(p, AS_PATH_SEQUENCE, 65002);
  assert_int_equal(bgp_as_path_first_as(path, p - path), 65002);
  assert_int_equal(bgp_as_path_first_as(path, p - path - 1), 0);   /* truncated */
  put_seg(seq, AS_PATH_SET, 65002);
  assert_int_equal(bgp_as_path_first_as(path, p - path), 0);
  assert_int_equal(bgp_as_path_first_as(path, 0), 0);
}

static void
test_as_path_long_and_helpers(void **state)
{
  /* 300-ASN sequence from the wire in two segments (255 + 45) */
  static u8 wire[2048];
  u8 *p = wire;
  *p++ = AS_PATH_SEQUENCE;
  *p++ = 255;
  for (uint i = 0; i < 255; i++, p += 4)
    bgp_store32(p, 100000 + i);
  *p++ = AS_PATH_SEQUENCE;
  *p++ = 45;
  for (uint i = 255; i < 300; i++, p += 4)
    bgp_store32(p, 100000 + i);
  u8 buf[4096], *a = buf;
  static const u8 origin = 0, nh[] = { 192, 0, 2, 1 };
  a = put_attr(a, T, BA_ORIGIN, &origin, 1);
  a = put_attr(a, T, BA_AS_PATH, wire, p - wire);
  a = put_attr(a, T, BA_NEXT_HOP, nh, 4);
  struct bgp_rx_ctx rx = rx_ctx(true, true);
  struct ea_list *l = parse(&rx, buf, a - buf, true, BGP_ATTR_OK);
  const struct eattr *e = find_bgp(l, BA_AS_PATH);
  const u8 *path = ea_data(l, e);
  assert_true(bgp_as_path_valid(path, e->len));
  assert_int_equal(bgp_as_path_length(path, e->len), 300);
  assert_int_equal(bgp_as_path_first_as(path, e->len), 100000);
  assert_true(bgp_as_path_contains(path, e->len, 100299));
  assert_false(bgp_as_path_contains(path, e->len, 7));

  /* prepend 300 more: the leading segment fills to 255, then new ones */
  uint nl;
  u8 *np = bgp_as_path_prepend(test_lp, path, e->len, 65000, 300, &nl);
  assert_true(bgp_as_path_valid(np, nl));
  assert_int_equal(bgp_as_path_length(np, nl), 600);
  assert_int_equal(bgp_as_path_first_as(np, nl), 65000);
  assert_int_equal(np[1], 255);

  /* 2-byte encode of a wide path: AS_TRANS everywhere plus AS4_PATH */
  struct bgp_tx_ctx tx = tx_ctx(false);
  int len = bgp_attrs_encode(&tx, l, false, buf, sizeof(buf));
  assert_true(len > 0);
  const u8 *q = buf;
  bool seen_as4 = false;
  while (q < buf + len) {
    uint hl = q[0] & BAF_EXT_LEN ? 4 : 3, vl = hl == 4 ? bgp_load16(q + 2) : q[2];
    if (q[1] == BA_AS_PATH) {
      assert_int_equal(vl, 2 + 255 * 2 + 2 + 45 * 2);
      assert_int_equal(bgp_load16(q + hl + 2), BGP_AS_TRANS);
    }
    if (q[1] == BA_AS4_PATH) {
      seen_as4 = true;
      assert_int_equal(q[0] & ~BAF_EXT_LEN, OT);
      assert_int_equal(vl, 2 + 255 * 4 + 2 + 45 * 4);
    }
    q += hl + vl;
  }
  assert_true(seen_as4);
  ea_unref(l);
}

/* Build AS_PATH(2-byte)/AS4_PATH/AGGREGATOR vectors and check the merge. */
static struct ea_list *
as4_case(const u8 *p2, uint l2, const u8 *p4, uint l4, const u8 *aggr, const u8 *aggr4)
{
  u8 buf[512], *a = buf;
  static const u8 origin = 0, nh[] = { 192, 0, 2, 1 };
  a = put_attr(a, T, BA_ORIGIN, &origin, 1);
  a = put_attr(a, T, BA_AS_PATH, p2, l2);
  a = put_attr(a, T, BA_NEXT_HOP, nh, 4);
  if (aggr)
    a = put_attr(a, OT, BA_AGGREGATOR, aggr, 6);
  if (p4)
    a = put_attr(a, OT, BA_AS4_PATH, p4, l4);
  if (aggr4)
    a = put_attr(a, OT, BA_AS4_AGGREGATOR, aggr4, 8);
  struct bgp_rx_ctx rx = rx_ctx(false, true);
  return parse(&rx, buf, a - buf, true, BGP_ATTR_OK);
}

static void
expect_path(const struct ea_list *l, const u8 *want, uint want_len)
{
  const struct eattr *e = find_bgp(l, BA_AS_PATH);
  assert_non_null(e);
  assert_int_equal(e->len, want_len);
  assert_memory_equal(ea_data(l, e), want, want_len);
}

static void
test_as4_merge_vectors(void **state)
{
  u8 want[128];
  /* RFC 6793 4.2.3: AS_PATH [65001 T T 65004], AS4_PATH [4200000002 4200000003 65004]
   * -> [65001 4200000002 4200000003 65004] */
  static const u8 p2a[] = { 2, 4, 0xfd, 0xe9, 0x5b, 0xa0, 0x5b, 0xa0, 0xfd, 0xec };
  static const u8 p4a[] = { 2, 3, 0xfa, 0x56, 0xea, 0x02, 0xfa, 0x56, 0xea, 0x03, 0, 0, 0xfd, 0xec };
  struct ea_list *l = as4_case(p2a, sizeof(p2a), p4a, sizeof(p4a), NULL, NULL);
  static const u8 ta[] = { AS_PATH_SEQUENCE };
  static const uint ca[] = { 4 };
  static const u32 aa[] = { 65001, 4200000002u, 4200000003u, 65004 };
  expect_path(l, want, mk_path(want, 1, ta, ca, aa));
  ea_unref(l);

  /* AS4_PATH longer than AS_PATH -> ignored */
  static const u8 p2b[] = { 2, 1, 0x5b, 0xa0 };
  static const u8 p4b[] = { 2, 2, 0, 0, 0, 1, 0, 0, 0, 2 };
  l = as4_case(p2b, sizeof(p2b), p4b, sizeof(p4b), NULL, NULL);
  static const uint cb[] = { 1 };
  static const u32 ab[] = { BGP_AS_TRANS };
  expect_path(l, want, mk_path(want, 1, ta, cb, ab));
  ea_unref(l);

  /* with a set: [65001 T] {T 65005} + AS4 [4200000001] {4200000002 65005} */
  static const u8 p2c[] = { 2, 2, 0xfd, 0xe9, 0x5b, 0xa0, 1, 2, 0x5b, 0xa0, 0xfd, 0xed };
  static const u8 p4c[] = { 2, 1, 0xfa, 0x56, 0xea, 0x01, 1, 2, 0xfa, 0x56, 0xea, 0x02, 0, 0, 0xfd, 0xed };
  l = as4_case(p2c, sizeof(p2c), p4c, sizeof(p4c), NULL, NULL);
  static const u8 tc[] = { AS_PATH_SEQUENCE, AS_PATH_SET };
  static const uint cc[] = { 2, 2 };
  static const u32 ac[] = { 65001, 4200000001u, 4200000002u, 65005 };
  expect_path(l, want, mk_path(want, 2, tc, cc, ac));
  ea_unref(l);

  /* AGGREGATOR without AS_TRANS: AS4_PATH and AS4_AGGREGATOR are ignored */
  static const u8 ag[] = { 0xfd, 0xf2, 10, 0, 0, 1 }, ag4[] = { 0xfa, 0x56, 0xea, 0x05, 10, 0, 0, 2 };
  l = as4_case(p2a, sizeof(p2a), p4a, sizeof(p4a), ag, ag4);
  static const u32 ad[] = { 65001, BGP_AS_TRANS, BGP_AS_TRANS, 65004 };
  expect_path(l, want, mk_path(want, 1, ta, ca, ad));
  const struct eattr *e = find_bgp(l, BA_AGGREGATOR);
  assert_int_equal(bgp_get_host32(ea_data(l, e)), 65010);
  assert_int_equal(bgp_get_host32((const u8 *) ea_data(l, e) + 4), 0x0a000001);
  ea_unref(l);

  /* AGGREGATOR with AS_TRANS: AS4_AGGREGATOR wins, AS4_PATH merged */
  static const u8 agt[] = { 0x5b, 0xa0, 10, 0, 0, 1 };
  l = as4_case(p2a, sizeof(p2a), p4a, sizeof(p4a), agt, ag4);
  expect_path(l, want, mk_path(want, 1, ta, ca, aa));
  e = find_bgp(l, BA_AGGREGATOR);
  assert_int_equal(bgp_get_host32(ea_data(l, e)), 4200000005u);
  assert_int_equal(bgp_get_host32((const u8 *) ea_data(l, e) + 4), 0x0a000002);
  ea_unref(l);

  /* AS4_PATH with a confed segment: discarded (RFC 6793 6), route kept */
  static const u8 p4f[] = { 3, 1, 0, 0, 0xfc, 0x00 };
  l = as4_case(p2b, sizeof(p2b), p4f, sizeof(p4f), NULL, NULL);
  assert_int_equal(res.discarded, 1);
  expect_path(l, want, mk_path(want, 1, ta, cb, ab));
  ea_unref(l);

  /* AS4_PATH and AS4_AGGREGATOR from an AS4 peer: discarded */
  u8 buf[128], *a = base_attrs(buf, true);
  a = put_attr(a, OT, BA_AS4_PATH, p4a, sizeof(p4a));
  a = put_attr(a, OT, BA_AS4_AGGREGATOR, ag4, 8);
  struct bgp_rx_ctx rx = rx_ctx(true, true);
  l = parse(&rx, buf, a - buf, true, BGP_ATTR_OK);
  assert_int_equal(res.discarded, 2);
  ea_unref(l);
}

/* ---------------------------------------------------------------- */
/* RFC 7606 classes                                                   */

struct case7606 {
  const char *name;
  u8 flags, code;
  u8 len;
  u8 val[20];
  bool ebgp;
  enum bgp_attr_verdict want;
  u8 subcode;       /* for WITHDRAW / RESET */
  u8 discarded;
};

static const struct case7606 cases[] = {
  /* 7.1 */ { "ORIGIN len 2", T, BA_ORIGIN, 2, { 0, 0 }, 1, BGP_ATTR_TREAT_AS_WITHDRAW, 5, 0 },
  /* 7.1 */ { "ORIGIN 3", T, BA_ORIGIN, 1, { 3 }, 1, BGP_ATTR_TREAT_AS_WITHDRAW, 6, 0 },
  /* 7.2 */ { "AS_PATH bad type", T, BA_AS_PATH, 6, { 5, 1, 0, 0, 0, 1 }, 1, BGP_ATTR_TREAT_AS_WITHDRAW, 11, 0 },
  /* 7.2 */ { "AS_PATH zero seg", T, BA_AS_PATH, 2, { 2, 0 }, 1, BGP_ATTR_TREAT_AS_WITHDRAW, 11, 0 },
  /* 7.2 */ { "AS_PATH overrun", T, BA_AS_PATH, 6, { 2, 2, 0, 0, 0, 1 }, 1, BGP_ATTR_TREAT_AS_WITHDRAW, 11, 0 },
  /* 7.2 */ { "AS_PATH underrun", T, BA_AS_PATH, 7, { 2, 1, 0, 0, 0, 1, 2 }, 1, BGP_ATTR_TREAT_AS_WITHDRAW, 11, 0 },
  /* 7.2 */ { "AS_PATH confed eBGP", T, BA_AS_PATH, 6, { 3, 1, 0, 0, 0, 1 }, 1, BGP_ATTR_TREAT_AS_WITHDRAW, 11, 0 },
  /* 7.2 */ { "AS_PATH confed iBGP", T, BA_AS_PATH, 6, { 3, 1, 0, 0, 0, 1 }, 0, BGP_ATTR_OK, 0, 0 },
  /* 7.3 */ { "NEXT_HOP len 5", T, BA_NEXT_HOP, 5, { 1, 2, 3, 4, 5 }, 1, BGP_ATTR_TREAT_AS_WITHDRAW, 5, 0 },
  /* 7.3 */ { "NEXT_HOP 0.0.0.0", T, BA_NEXT_HOP, 4, { 0 }, 1, BGP_ATTR_TREAT_AS_WITHDRAW, 8, 0 },
  /* 7.3 */ { "NEXT_HOP mcast", T, BA_NEXT_HOP, 4, { 224, 0, 0, 1 }, 1, BGP_ATTR_TREAT_AS_WITHDRAW, 8, 0 },
  /* 7.4 */ { "MED len 3", O, BA_MULTI_EXIT_DISC, 3, { 0 }, 1, BGP_ATTR_TREAT_AS_WITHDRAW, 5, 0 },
  /* 7.5 */ { "LOCAL_PREF eBGP", T, BA_LOCAL_PREF, 4, { 0, 0, 0, 100 }, 1, BGP_ATTR_OK, 0, 1 },
  /* 7.5 */ { "LOCAL_PREF eBGP bad", T, BA_LOCAL_PREF, 3, { 0 }, 1, BGP_ATTR_OK, 0, 1 },
  /* 7.5 */ { "LOCAL_PREF iBGP len 3", T, BA_LOCAL_PREF, 3, { 0 }, 0, BGP_ATTR_TREAT_AS_WITHDRAW, 5, 0 },
  /* 7.6 */ { "ATOMIC_AGGR len 1", T, BA_ATOMIC_AGGR, 1, { 0 }, 1, BGP_ATTR_OK, 0, 1 },
  /* 7.7 */ { "AGGREGATOR len 7", OT, BA_AGGREGATOR, 7, { 0 }, 1, BGP_ATTR_OK, 0, 1 },
  /* 7.8 */ { "COMMUNITIES len 0", OT, BA_COMMUNITY, 0, { 0 }, 1, BGP_ATTR_TREAT_AS_WITHDRAW, 9, 0 },
  /* 7.8 */ { "COMMUNITIES len 5", OT, BA_COMMUNITY, 5, { 0 }, 1, BGP_ATTR_TREAT_AS_WITHDRAW, 9, 0 },
  /* 7.9 */ { "ORIGINATOR_ID len 3", O, BA_ORIGINATOR_ID, 3, { 0 }, 0, BGP_ATTR_TREAT_AS_WITHDRAW, 5, 0 },
  /* 4456 */ { "ORIGINATOR_ID eBGP", O, BA_ORIGINATOR_ID, 4, { 1, 1, 1, 1 }, 1, BGP_ATTR_OK, 0, 1 },
  /* 7.10 */ { "CLUSTER_LIST len 6", O, BA_CLUSTER_LIST, 6, { 0 }, 0, BGP_ATTR_TREAT_AS_WITHDRAW, 5, 0 },
  /* 7.14 */ { "EXT_COMM len 12", OT, BA_EXT_COMMUNITY, 12, { 0 }, 1, BGP_ATTR_TREAT_AS_WITHDRAW, 9, 0 },
  /* 8092 */ { "LARGE len 8", OT, BA_LARGE_COMMUNITY, 8, { 0 }, 1, BGP_ATTR_TREAT_AS_WITHDRAW, 9, 0 },
  /* 9234 */ { "OTC len 2", OT, BA_OTC, 2, { 0 }, 1, BGP_ATTR_TREAT_AS_WITHDRAW, 5, 0 },
  /* 3c */ { "ORIGIN optional", OT, BA_ORIGIN, 1, { 0 }, 1, BGP_ATTR_TREAT_AS_WITHDRAW, 4, 0 },
  /* 3c */ { "COMMUNITIES non-trans", O, BA_COMMUNITY, 4, { 0 }, 1, BGP_ATTR_TREAT_AS_WITHDRAW, 4, 0 },
  /* 3c */ { "MP_REACH transitive", OT, BA_MP_REACH_NLRI, 5, { 0, 2, 1, 0, 0 }, 1, BGP_ATTR_SESSION_RESET, 4, 0 },
  /* 3c */ { "AGGREGATOR flags", T, BA_AGGREGATOR, 6, { 0 }, 1, BGP_ATTR_TREAT_AS_WITHDRAW, 4, 0 },
  /* 5.1 */ { "MP_REACH short", O, BA_MP_REACH_NLRI, 3, { 0, 2, 1 }, 1, BGP_ATTR_SESSION_RESET, 9, 0 },
  /* 7.11 */ { "MP_REACH nh len 8", O, BA_MP_REACH_NLRI, 13, { 0, 2, 1, 8, 0 }, 1, BGP_ATTR_SESSION_RESET, 9, 0 },
  /* 7.11 */ { "MP_REACH nh 0.0.0.0", O, BA_MP_REACH_NLRI, 12, { 0, 1, 1, 4, 0, 0, 0, 0, 0 }, 1, BGP_ATTR_TREAT_AS_WITHDRAW, 9, 0 },
  /* 4760 */ { "MP_REACH bad AF", O, BA_MP_REACH_NLRI, 9, { 0, 1, 128, 4, 1, 2, 3, 4, 0 }, 1, BGP_ATTR_OK, 0, 1 },
  /* 5.1 */ { "MP_UNREACH short", O, BA_MP_UNREACH_NLRI, 2, { 0, 2 }, 1, BGP_ATTR_SESSION_RESET, 9, 0 },
  /* 6793 */ { "AS4_PATH malformed", OT, BA_AS4_PATH, 3, { 2, 1, 0 }, 1, BGP_ATTR_OK, 0, 1 },
  /* 6793 */ { "AS4_AGGR len 6", OT, BA_AS4_AGGREGATOR, 6, { 0 }, 1, BGP_ATTR_OK, 0, 1 },
  /* 4271 */ { "unknown well-known", T, 222, 1, { 0 }, 1, BGP_ATTR_TREAT_AS_WITHDRAW, 2, 0 },
  /* 4271 */ { "unknown opt non-trans", O, 222, 1, { 0 }, 1, BGP_ATTR_OK, 0, 0 },
};

/* Each case: the base attributes, with the case's attribute first (so it
 * wins over the base's one of the same code) on an AS4 session. */
static void
test_rfc7606_table(void **state)
{
  for (uint i = 0; i < ARRAY_SIZE(cases); i++) {
    const struct case7606 *c = &cases[i];
    u8 buf[256], *p = put_attr(buf, c->flags, c->code, c->val, c->len);
    p = base_attrs(p, true);
    struct bgp_rx_ctx rx = rx_ctx(c->code == BA_AS4_PATH || c->code == BA_AS4_AGGREGATOR ? false : true, c->ebgp);
    if (!rx.as4) {
      p = put_attr(buf, c->flags, c->code, c->val, c->len);
      p = base_attrs(p, false);
    }
    struct ea_builder b;
    enum bgp_attr_verdict v = parse_b(&rx, buf, p - buf, true, &b);
    if (v != c->want || (v != BGP_ATTR_OK && res.err.subcode != c->subcode) ||
        res.discarded != c->discarded + (c->code <= BA_NEXT_HOP ? 1 : 0))
      fail_msg("case '%s': verdict %d subcode %d discarded %d", c->name, v, res.err.subcode, res.discarded);
    if (v == BGP_ATTR_SESSION_RESET)
      assert_int_equal(res.err.code, BGP_ERR_UPDATE);
  }
}

static void
test_duplicates(void **state)
{
  static const u8 med1[] = { 0, 0, 0, 1 }, med2[] = { 0, 0, 0, 2 };
  u8 buf[256], *p = base_attrs(buf, true);
  p = put_attr(p, O, BA_MULTI_EXIT_DISC, med1, 4);
  p = put_attr(p, O, BA_MULTI_EXIT_DISC, med2, 4);
  struct bgp_rx_ctx rx = rx_ctx(true, true);
  /* RFC 7606 3 g: all but the first discarded */
  struct ea_list *l = parse(&rx, buf, p - buf, true, BGP_ATTR_OK);
  assert_int_equal(find_bgp(l, BA_MULTI_EXIT_DISC)->val, 1);
  assert_int_equal(res.discarded, 1);
  ea_unref(l);

  /* ... but a repeated MP_UNREACH resets the session, Malformed Attribute List */
  static const u8 unr[] = { 0, 2, 1 };
  p = put_attr(buf, O, BA_MP_UNREACH_NLRI, unr, 3);
  p = put_attr(p, O, BA_MP_UNREACH_NLRI, unr, 3);
  parse(&rx, buf, p - buf, false, BGP_ATTR_SESSION_RESET);
  assert_int_equal(res.err.subcode, BGP_ERR_UPD_MALFORMED_ATTR_LIST);
}

static void
test_missing_mandatory(void **state)
{
  static const u8 origin = 0, nh[] = { 192, 0, 2, 1 }, path[] = { 2, 1, 0, 0, 0xfd, 0xe9 };
  u8 buf[64], *p;
  struct bgp_rx_ctx rx = rx_ctx(true, true);

  /* no ORIGIN, NLRI present -> treat-as-withdraw, data = the missing code */
  p = put_attr(buf, T, BA_AS_PATH, path, 6);
  p = put_attr(p, T, BA_NEXT_HOP, nh, 4);
  ea_unref(parse(&rx, buf, p - buf, true, BGP_ATTR_TREAT_AS_WITHDRAW));
  assert_int_equal(res.err.subcode, BGP_ERR_UPD_MISSING_WELL_KNOWN);
  assert_int_equal(res.err.len, 1);
  assert_int_equal(bgp_error_data(&res.err)[0], BA_ORIGIN);

  /* no NEXT_HOP with body NLRI -> treat-as-withdraw; without NLRI fine */
  p = put_attr(buf, T, BA_ORIGIN, &origin, 1);
  p = put_attr(p, T, BA_AS_PATH, path, 6);
  ea_unref(parse(&rx, buf, p - buf, true, BGP_ATTR_TREAT_AS_WITHDRAW));
  ea_unref(parse(&rx, buf, p - buf, false, BGP_ATTR_OK));

  /* a malformed NEXT_HOP is ignored when there is no body NLRI (RFC 4760 3) */
  static const u8 bad_nh[] = { 1, 2, 3 };
  p = put_attr(p, T, BA_NEXT_HOP, bad_nh, 3);
  ea_unref(parse(&rx, buf, p - buf, false, BGP_ATTR_OK));

  /* an MP_REACH alone needs ORIGIN and AS_PATH too */
  static const u8 mp[] = { 0, 2, 1, 16, 0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 32, 0x20, 1, 0xd, 0xb8 };
  p = put_attr(buf, O, BA_MP_REACH_NLRI, mp, sizeof(mp));
  p = put_attr(p, T, BA_ORIGIN, &origin, 1);
  ea_unref(parse(&rx, buf, p - buf, false, BGP_ATTR_TREAT_AS_WITHDRAW));
  assert_true(res.mp_reach.present);
  assert_int_equal(res.mp_reach.af, BGP_AF_IPV6);
}

static void
test_framing(void **state)
{
  static const u8 med[] = { 0, 0, 0, 1 };
  u8 buf[128], *p = base_attrs(buf, true);
  struct bgp_rx_ctx rx4 = rx_ctx(true, true), rx6 = rx_ctx(true, true);
  rx4.af[BGP_AF_IPV6] = false;

  /* RFC 7606 4: attribute length past the block -> treat-as-withdraw ... */
  u8 *q = put_attr(p, O, BA_MULTI_EXIT_DISC, med, 4);
  ea_unref(parse(&rx4, buf, q - buf - 1, true, BGP_ATTR_TREAT_AS_WITHDRAW));
  assert_int_equal(res.err.subcode, BGP_ERR_UPD_MALFORMED_ATTR_LIST);
  /* ... fewer than 3 octets left -> the same */
  ea_unref(parse(&rx4, buf, (p - buf) + 2, true, BGP_ATTR_TREAT_AS_WITHDRAW));
  /* ... extended length bit with only 3 octets left */
  p[0] = O | BAF_EXT_LEN;
  ea_unref(parse(&rx4, buf, (p - buf) + 3, true, BGP_ATTR_TREAT_AS_WITHDRAW));
  p[0] = O;
  /* ... but when IPv6 is negotiated an MP_REACH may hide there -> reset */
  parse(&rx6, buf, q - buf - 1, true, BGP_ATTR_SESSION_RESET);

  /* an overrunning MP_REACH itself -> session reset */
  static const u8 mp[] = { 0, 1, 1, 4, 10, 0, 0, 1, 0, 24, 10, 1, 1 };
  q = put_attr(p, O, BA_MP_REACH_NLRI, mp, sizeof(mp));
  parse(&rx4, buf, q - buf - 1, false, BGP_ATTR_SESSION_RESET);
  /* and complete it is fine */
  ea_unref(parse(&rx4, buf, q - buf, false, BGP_ATTR_OK));
  assert_int_equal(res.mp_nh_count, 1);
}

static void
test_severity_order(void **state)
{
  /* discard + withdraw -> withdraw; withdraw + reset -> reset (RFC 7606 3 h) */
  static const u8 bad_aggr[7] = { 0 }, bad_med[3] = { 0 }, unr[] = { 0, 2 };
  u8 buf[128], *p = base_attrs(buf, true);
  p = put_attr(p, OT, BA_AGGREGATOR, bad_aggr, 7);
  p = put_attr(p, O, BA_MULTI_EXIT_DISC, bad_med, 3);
  struct bgp_rx_ctx rx = rx_ctx(true, true);
  ea_unref(parse(&rx, buf, p - buf, true, BGP_ATTR_TREAT_AS_WITHDRAW));
  assert_int_equal(res.err.subcode, BGP_ERR_UPD_ATTR_LENGTH);
  p = put_attr(p, O, BA_MP_UNREACH_NLRI, unr, 2);
  parse(&rx, buf, p - buf, true, BGP_ATTR_SESSION_RESET);
  assert_int_equal(res.err.subcode, BGP_ERR_UPD_OPTIONAL_ATTR);
  /* NOTIFICATION data is the offending attribute */
  assert_int_equal(res.err.len, 5);
  assert_int_equal(bgp_error_data(&res.err)[1], BA_MP_UNREACH_NLRI);
}

static void
test_many_unknown(void **state)
{
  static u8 buf[4096];
  static const u8 v = 1;
  u8 *p = base_attrs(buf, true);
  for (uint code = 100; code < 250; code++)
    p = put_attr(p, OT, code, &v, 1);
  struct bgp_rx_ctx rx = rx_ctx(true, true);
  struct ea_list *l = parse(&rx, buf, p - buf, true, BGP_ATTR_OK);
  assert_true(res.discarded > 0);
  assert_true(l->count <= EA_BUILDER_MAX);
  ea_unref(l);
}

static void
test_encode_rejects_bad_shapes(void **state)
{
  static const u8 bad_path[] = { 2, 3, 0, 0, 0, 1 };   /* count says 3, has 1 */
  struct ea_builder b;
  ea_builder_init(&b);
  ea_set_data(&b, BGP_EA(BA_AS_PATH), EAF_AS_PATH, T, bad_path, sizeof(bad_path));
  struct ea_list *l = ea_intern(&b);
  u8 buf[256];
  struct bgp_tx_ctx tx = tx_ctx(true);
  assert_int_equal(bgp_attrs_encode(&tx, l, false, buf, sizeof(buf)), -1);
  ea_unref(l);
}

int
main(void)
{
  bgp_test_init("bgp_attrs_test");
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_roundtrip_all),
    cmocka_unit_test(test_partial_bit),
    cmocka_unit_test(test_as_path_long_and_helpers),
    cmocka_unit_test(test_as_path_first_as),
    cmocka_unit_test(test_as4_merge_vectors),
    cmocka_unit_test(test_rfc7606_table),
    cmocka_unit_test(test_duplicates),
    cmocka_unit_test(test_missing_mandatory),
    cmocka_unit_test(test_framing),
    cmocka_unit_test(test_severity_order),
    cmocka_unit_test(test_many_unknown),
    cmocka_unit_test(test_encode_rejects_bad_shapes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
