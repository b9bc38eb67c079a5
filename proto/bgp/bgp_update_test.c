/*
 * Unit tests for proto/bgp/bgp_update.c: header checks, small messages,
 * NLRI decode (ADD-PATH, errors), UPDATE packing and re-parse, MP_REACH
 * with IPv6 and extended next hops, withdrawals and End-of-RIB.
 */
#include "proto/bgp/bgp_test.h"

#define T BAF_TRANSITIVE
#define OT (BAF_OPTIONAL | BAF_TRANSITIVE)

static u8 msg[BGP_MAX_EXT_MSG_LEN];

/* ORIGIN, AS_PATH [65001 65002 65003 65004], nh, MED, 3 communities, 1 large */
static struct ea_list *
typical_list(ip_addr nh1, ip_addr nh2, bool two)
{
  static u8 path[64];
  static const u8 types[] = { AS_PATH_SEQUENCE };
  static const uint counts[] = { 4 };
  static const u32 asns[] = { 65001, 65002, 65003, 65004 };
  static const u32 comm[] = { 0xfde90001, 0xfde90002, 0xfde90003 };
  static const u32 lc[] = { 65001, 1, 2 };
  static ip_addr nh[2];
  nh[0] = nh1;
  nh[1] = nh2;
  struct ea_builder b;
  ea_builder_init(&b);
  ea_set_int(&b, BGP_EA(BA_ORIGIN), EAF_INT, T, ORIGIN_IGP);
  ea_set_data(&b, BGP_EA(BA_AS_PATH), EAF_AS_PATH, T, path, mk_path(path, 1, types, counts, asns));
  ea_set_data(&b, BGP_EA(BA_NEXT_HOP), EAF_IP, T, nh, (two ? 2 : 1) * sizeof(ip_addr));
  ea_set_int(&b, BGP_EA(BA_MULTI_EXIT_DISC), EAF_INT, BAF_OPTIONAL, 10);
  ea_set_data(&b, BGP_EA(BA_COMMUNITY), EAF_INT_SET, OT, comm, sizeof(comm));
  ea_set_data(&b, BGP_EA(BA_LARGE_COMMUNITY), EAF_LC_SET, OT, lc, sizeof(lc));
  return ea_intern(&b);
}

static ip_addr
v4(u32 a)
{
  return ipa_from_ip4(ip4_from_u32(a));
}

static void
test_header(void **state)
{
  u8 h[BGP_HEADER_LEN];
  uint len;
  u8 type;
  struct bgp_error err;

  bgp_header_put(h, 19, BGP_MSG_KEEPALIVE);
  assert_int_equal(bgp_header_check(h, 4096, &len, &type, &err), 0);
  assert_int_equal(type, BGP_MSG_KEEPALIVE);

  h[3] = 0;
  assert_int_equal(bgp_header_check(h, 4096, &len, &type, &err), -1);
  assert_int_equal(err.code, BGP_ERR_HEADER);
  assert_int_equal(err.subcode, BGP_ERR_HDR_NOT_SYNC);

  bgp_header_put(h, 18, BGP_MSG_UPDATE);
  assert_int_equal(bgp_header_check(h, 4096, &len, &type, &err), -1);
  assert_int_equal(err.subcode, BGP_ERR_HDR_BAD_LENGTH);
  assert_int_equal(err.len, 2);
  assert_int_equal(bgp_load16(bgp_error_data(&err)), 18);

  bgp_header_put(h, 4097, BGP_MSG_UPDATE);
  assert_int_equal(bgp_header_check(h, 4096, &len, &type, &err), -1);
  assert_int_equal(bgp_load16(bgp_error_data(&err)), 4097);
  assert_int_equal(bgp_header_check(h, 65535, &len, &type, &err), 0);
  /* RFC 8654: OPEN stays within 4096 even with extended messages */
  bgp_header_put(h, 4097, BGP_MSG_OPEN);
  assert_int_equal(bgp_header_check(h, 65535, &len, &type, &err), -1);

  bgp_header_put(h, 20, BGP_MSG_KEEPALIVE);
  assert_int_equal(bgp_header_check(h, 4096, &len, &type, &err), -1);
  assert_int_equal(err.subcode, BGP_ERR_HDR_BAD_LENGTH);
  bgp_header_put(h, 22, BGP_MSG_UPDATE);
  assert_int_equal(bgp_header_check(h, 4096, &len, &type, &err), -1);

  bgp_header_put(h, 19, 6);
  assert_int_equal(bgp_header_check(h, 4096, &len, &type, &err), -1);
  assert_int_equal(err.subcode, BGP_ERR_HDR_BAD_TYPE);
  assert_int_equal(err.len, 1);
  assert_int_equal(bgp_error_data(&err)[0], 6);
}

static void
test_small_messages(void **state)
{
  u8 buf[128];
  assert_int_equal(bgp_keepalive_encode(buf, sizeof(buf)), 19);
  assert_int_equal(bgp_keepalive_encode(buf, 10), 0);

  /* NOTIFICATION with data, truncated to the message limit */
  static u8 data[5000];
  memset(data, 'x', sizeof(data));
  struct bgp_error e = { .code = BGP_ERR_UPDATE, .subcode = 5, .len = sizeof(data), .data = data };
  uint len = bgp_notification_encode(msg, sizeof(msg), 4096, &e);
  assert_int_equal(len, 4096);
  struct bgp_error d;
  assert_int_equal(bgp_notification_decode(msg + 19, len - 19, &d), 0);
  assert_int_equal(d.code, 3);
  assert_int_equal(d.subcode, 5);
  assert_int_equal(d.len, 4096 - 21);
  assert_int_equal(bgp_notification_decode(msg + 19, 1, &d), -1);

  /* RFC 9003 shutdown communication */
  u8 sd[] = { BGP_ERR_CEASE, BGP_ERR_CEASE_ADMIN_SHUTDOWN, 5, 'b', 'y', 'e', '\n', '!' };
  char txt[64];
  bgp_notification_decode(sd, sizeof(sd), &d);
  assert_int_equal(bgp_notification_shutdown_msg(&d, txt, sizeof(txt)), 1);
  assert_string_equal(txt, "bye?!");
  sd[2] = 50;   /* longer than the data */
  bgp_notification_decode(sd, sizeof(sd), &d);
  assert_int_equal(bgp_notification_shutdown_msg(&d, txt, sizeof(txt)), 0);

  /* ROUTE-REFRESH and the enhanced subtypes */
  struct bgp_route_refresh rr = { BGP_AFI_IPV6, BGP_RR_BEGIN, BGP_SAFI_UNICAST }, out;
  len = bgp_route_refresh_encode(buf, sizeof(buf), &rr);
  assert_int_equal(len, 23);
  assert_int_equal(bgp_route_refresh_decode(buf, len, &out, &e), 0);
  assert_int_equal(out.afi, BGP_AFI_IPV6);
  assert_int_equal(out.subtype, BGP_RR_BEGIN);
  /* BoRR longer than 4 octets -> ROUTE-REFRESH error, data = the message */
  bgp_header_put(buf, 24, BGP_MSG_ROUTE_REFRESH);
  assert_int_equal(bgp_route_refresh_decode(buf, 24, &out, &e), -1);
  assert_int_equal(e.code, BGP_ERR_ROUTE_REFRESH);
  assert_int_equal(e.subcode, BGP_ERR_RR_INVALID_LENGTH);
  assert_int_equal(e.len, 24);
  assert_ptr_equal(e.data, buf);
  /* a plain refresh may carry ORF data; unknown subtypes are ignored */
  buf[21] = BGP_RR_NORMAL;
  assert_int_equal(bgp_route_refresh_decode(buf, 24, &out, &e), 0);
  buf[21] = 7;
  assert_int_equal(bgp_route_refresh_decode(buf, 24, &out, &e), 1);
}

static void
test_nlri_decode(void **state)
{
  net_addr nets[8];
  u32 ids[8];
  struct bgp_error err;
  struct bgp_nlri_iter it;

  /* host bits cleared, /0 and /32, short tail read byte-wise */
  static const u8 a[] = { 24, 10, 1, 2, 0, 31, 192, 168, 1, 255, 32, 1, 2, 3, 4, 8, 11 };
  bgp_nlri_iter_init(&it, bgp_cur_init(a, sizeof(a)), BGP_AF_IPV4, false);
  assert_int_equal(bgp_nlri_decode(&it, nets, ids, 8, &err), 5);
  char s[64];
  net_ntop(&nets[0], s);
  assert_string_equal(s, "10.1.2.0/24");
  net_ntop(&nets[1], s);
  assert_string_equal(s, "0.0.0.0/0");
  net_ntop(&nets[2], s);
  assert_string_equal(s, "192.168.1.254/31");
  net_ntop(&nets[3], s);
  assert_string_equal(s, "1.2.3.4/32");
  net_ntop(&nets[4], s);
  assert_string_equal(s, "11.0.0.0/8");
  assert_int_equal(bgp_nlri_decode(&it, nets, ids, 8, &err), 0);

  /* batches */
  bgp_nlri_iter_init(&it, bgp_cur_init(a, sizeof(a)), BGP_AF_IPV4, false);
  assert_int_equal(bgp_nlri_decode(&it, nets, NULL, 2, &err), 2);
  assert_int_equal(bgp_nlri_decode(&it, nets, NULL, 2, &err), 2);
  assert_int_equal(bgp_nlri_decode(&it, nets, NULL, 2, &err), 1);

  /* RFC 7606 5.3: length > 32 or overrun -> session reset */
  static const u8 bad1[] = { 33, 1, 2, 3, 4, 5 }, bad2[] = { 24, 10, 1 };
  bgp_nlri_iter_init(&it, bgp_cur_init(bad1, sizeof(bad1)), BGP_AF_IPV4, false);
  assert_int_equal(bgp_nlri_decode(&it, nets, NULL, 8, &err), -1);
  assert_int_equal(err.code, BGP_ERR_UPDATE);
  assert_int_equal(err.subcode, BGP_ERR_UPD_INVALID_NETWORK);
  assert_int_equal(bgp_nlri_decode(&it, nets, NULL, 8, &err), 0);
  bgp_nlri_iter_init(&it, bgp_cur_init(bad2, sizeof(bad2)), BGP_AF_IPV4, false);
  uint cnt;
  assert_int_equal(bgp_nlri_validate(it, &cnt, &err), -1);

  /* ADD-PATH: path id first; a truncated id is an error */
  static const u8 ap[] = { 0, 0, 0, 7, 24, 10, 0, 0, 0, 0, 1, 0, 16, 10, 1 };
  bgp_nlri_iter_init(&it, bgp_cur_init(ap, sizeof(ap)), BGP_AF_IPV4, true);
  assert_int_equal(bgp_nlri_decode(&it, nets, ids, 8, &err), 2);
  assert_int_equal(ids[0], 7);
  assert_int_equal(ids[1], 256);
  bgp_nlri_iter_init(&it, bgp_cur_init(ap, 3), BGP_AF_IPV4, true);
  assert_int_equal(bgp_nlri_decode(&it, nets, ids, 8, &err), -1);

  /* IPv6, with ADD-PATH; length > 128 -> error */
  static const u8 v6[] = { 0, 0, 0, 1, 48, 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x01, 0, 0, 0, 2, 0 };
  bgp_nlri_iter_init(&it, bgp_cur_init(v6, sizeof(v6)), BGP_AF_IPV6, true);
  assert_int_equal(bgp_nlri_decode(&it, nets, ids, 8, &err), 2);
  net_ntop(&nets[0], s);
  assert_string_equal(s, "2001:db8:1::/48");
  net_ntop(&nets[1], s);
  assert_string_equal(s, "::/0");
  static const u8 v6bad[] = { 129, 0 };
  bgp_nlri_iter_init(&it, bgp_cur_init(v6bad, sizeof(v6bad)), BGP_AF_IPV6, false);
  assert_int_equal(bgp_nlri_decode(&it, nets, ids, 8, &err), -1);
}

/* Re-parse a message produced by an encoder; checks framing too. */
static enum bgp_attr_verdict
reparse(const struct bgp_rx_ctx *rx, const u8 *m, uint len, struct ea_builder *b, struct bgp_update *u)
{
  uint mlen;
  u8 type;
  struct bgp_error err;
  assert_int_equal(bgp_header_check(m, BGP_MAX_EXT_MSG_LEN, &mlen, &type, &err), 0);
  assert_int_equal(mlen, len);
  assert_int_equal(type, BGP_MSG_UPDATE);
  ea_builder_init(b);
  lp_flush(test_lp);
  return bgp_update_parse(rx, test_lp, m + 19, len - 19, b, u);
}

/* Collect NLRI of an iterator into seen[] by third octet / index. */
static uint
collect(struct bgp_nlri_iter *it, u8 *seen, uint n, u32 *last_id)
{
  net_addr nets[128];
  u32 ids[128];
  struct bgp_error err;
  int k;
  uint total = 0;
  while ((k = bgp_nlri_decode(it, nets, ids, ARRAY_SIZE(nets), &err)) > 0)
    for (int i = 0; i < k; i++, total++) {
      uint idx;
      if (nets[i].type == NET_IP4)
        idx = (ipa_to_ip4(net_prefix(&nets[i])).addr >> 8) & 0xffff;
      else
        idx = net_prefix(&nets[i]).addr[1] >> 16;
      assert_true(idx < n);
      seen[idx]++;
      if (last_id)
        *last_id = ids[i];
    }
  assert_int_equal(k, 0);
  return total;
}

static void
fill_nets(net_addr *nets, uint n, enum bgp_af af)
{
  for (uint i = 0; i < n; i++)
    if (af == BGP_AF_IPV4)
      net_fill_ip4(&nets[i], ip4_from_u32(0x0a000000 | (i << 8)), 24);
    else
      net_fill_ip6(&nets[i], ip6_build(0x20010db8, i << 16, 0, 0), 48);
}

static void
test_pack_1000(void **state)
{
  static net_addr nets[1000];
  static u8 seen[1000];
  fill_nets(nets, 1000, BGP_AF_IPV4);
  struct ea_list *l = typical_list(v4(0xc0000201), IPA_NONE, false);
  struct bgp_tx_ctx tx = tx_ctx(true);
  struct bgp_rx_ctx rx = rx_ctx(true, true);
  uint off = 0, msgs = 0;
  memset(seen, 0, sizeof(seen));
  while (off < 1000) {
    uint done;
    uint len = bgp_update_encode_reach(&tx, l, BGP_AF_IPV4, nets + off, NULL, 1000 - off, msg, sizeof(msg), &done);
    assert_true(len > 0 && len <= BGP_MAX_MSG_LEN);
    /* packed full: the next /24 (4 octets) would not have fit */
    if (off + done < 1000)
      assert_true(len + 4 > BGP_MAX_MSG_LEN);
    struct ea_builder b;
    struct bgp_update u;
    assert_int_equal(reparse(&rx, msg, len, &b, &u), BGP_ATTR_OK);
    struct ea_list *l2 = ea_intern(&b);
    assert_ptr_equal(l, l2);
    ea_unref(l2);
    struct bgp_nlri_iter it;
    bgp_update_reach_iter(&rx, &u, &it);
    assert_int_equal(collect(&it, seen, 1000, NULL), done);
    off += done;
    msgs++;
  }
  /* 4096 - 23 header - 43 attribute bytes = 4030 -> 1007 /24s per message */
  assert_int_equal(msgs, 1);
  for (uint i = 0; i < 1000; i++)
    assert_int_equal(seen[i], 1);

  /* with 3000 prefixes: 3 messages; with extended messages: 1 */
  static net_addr many[3000];
  for (uint i = 0; i < 3000; i++)
    net_fill_ip4(&many[i], ip4_from_u32(0x0a000000 | (i << 8)), 24);
  uint done, n = 0;
  for (off = 0; off < 3000; off += done, n++)
    assert_true(bgp_update_encode_reach(&tx, l, BGP_AF_IPV4, many + off, NULL, 3000 - off, msg, sizeof(msg), &done));
  assert_int_equal(n, 3);
  tx.max_len = BGP_MAX_EXT_MSG_LEN;
  assert_true(bgp_update_encode_reach(&tx, l, BGP_AF_IPV4, many, NULL, 3000, msg, sizeof(msg), &done) > 4096);
  assert_int_equal(done, 3000);
  ea_unref(l);
}

static void
test_ipv6_mp_reach_addpath(void **state)
{
  static net_addr nets[600];
  static u32 ids[600];
  static u8 seen[600];
  fill_nets(nets, 600, BGP_AF_IPV6);
  for (uint i = 0; i < 600; i++)
    ids[i] = i + 1;
  ip_addr gl = ip6_build(0x20010db8, 0, 0, 1), ll = ip6_build(0xfe800000, 0, 0, 1);
  struct ea_list *l = typical_list(gl, ll, true);
  struct bgp_tx_ctx tx = tx_ctx(true);
  struct bgp_rx_ctx rx = rx_ctx(true, true);
  tx.add_path[BGP_AF_IPV6] = rx.add_path[BGP_AF_IPV6] = true;
  memset(seen, 0, sizeof(seen));
  uint off = 0, done, msgs = 0;
  while (off < 600) {
    uint len = bgp_update_encode_reach(&tx, l, BGP_AF_IPV6, nets + off, ids + off, 600 - off, msg, sizeof(msg), &done);
    assert_true(len > 0 && len <= 4096);
    struct ea_builder b;
    struct bgp_update u;
    assert_int_equal(reparse(&rx, msg, len, &b, &u), BGP_ATTR_OK);
    /* MP_REACH comes first (RFC 7606 5.1) */
    assert_int_equal(msg[24], BA_MP_REACH_NLRI);
    assert_int_equal(u.a.mp_nh_count, 2);
    assert_true(ipa_equal(u.a.mp_nh[1], ll));
    assert_false(u.a.has_next_hop);
    bgp_attrs_use_mp_next_hop(&b, &u.a);
    struct ea_list *l2 = ea_intern(&b);
    assert_ptr_equal(l, l2);
    ea_unref(l2);
    struct bgp_nlri_iter it;
    u32 last = 0;
    bgp_update_mp_reach_iter(&rx, &u, &it);
    assert_int_equal(collect(&it, seen, 600, &last), done);
    assert_int_equal(last, off + done);   /* path ids survived */
    off += done;
    msgs++;
  }
  assert_int_equal(msgs, 2);   /* 600 * 12 bytes > 4096 */
  for (uint i = 0; i < 600; i++)
    assert_int_equal(seen[i], 1);
  ea_unref(l);
}

static void
test_ext_next_hop(void **state)
{
  static net_addr nets[10];
  fill_nets(nets, 10, BGP_AF_IPV4);
  ip_addr gl = ip6_build(0x20010db8, 0, 0, 0x99);
  struct ea_list *l = typical_list(gl, IPA_NONE, false);
  struct bgp_tx_ctx tx = tx_ctx(true);
  struct bgp_rx_ctx rx = rx_ctx(true, true);
  uint done;
  /* RFC 8950: not without the capability */
  assert_int_equal(bgp_update_encode_reach(&tx, l, BGP_AF_IPV4, nets, NULL, 10, msg, sizeof(msg), &done), 0);
  tx.ext_next_hop[BGP_AF_IPV4] = true;
  uint len = bgp_update_encode_reach(&tx, l, BGP_AF_IPV4, nets, NULL, 10, msg, sizeof(msg), &done);
  assert_int_equal(done, 10);
  struct ea_builder b;
  struct bgp_update u;
  /* a receiver that did not agree: the next hop length is wrong -> reset */
  assert_int_equal(reparse(&rx, msg, len, &b, &u), BGP_ATTR_SESSION_RESET);
  assert_int_equal(u.a.err.subcode, BGP_ERR_UPD_OPTIONAL_ATTR);
  rx.ext_next_hop[BGP_AF_IPV4] = true;
  assert_int_equal(reparse(&rx, msg, len, &b, &u), BGP_ATTR_OK);
  assert_int_equal(u.a.mp_reach.af, BGP_AF_IPV4);
  assert_true(ipa_equal(u.a.mp_nh[0], gl));
  bgp_attrs_use_mp_next_hop(&b, &u.a);
  struct ea_list *l2 = ea_intern(&b);
  assert_ptr_equal(l, l2);
  ea_unref(l2);
  static u8 seen[10];
  struct bgp_nlri_iter it;
  bgp_update_mp_reach_iter(&rx, &u, &it);
  assert_int_equal(collect(&it, seen, 10, NULL), 10);
  ea_unref(l);
}

static void
test_withdraw_and_eor(void **state)
{
  static net_addr nets[1500];
  static u8 seen[1500];
  struct bgp_tx_ctx tx = tx_ctx(true);
  struct bgp_rx_ctx rx = rx_ctx(true, true);
  for (uint af = 0; af < BGP_AF_MAX; af++) {
    fill_nets(nets, 1500, af);
    memset(seen, 0, sizeof(seen));
    uint off = 0, done, msgs = 0;
    while (off < 1500) {
      uint len = bgp_update_encode_withdraw(&tx, af, nets + off, NULL, 1500 - off, msg, sizeof(msg), &done);
      assert_true(len > 0 && len <= 4096);
      struct ea_builder b;
      struct bgp_update u;
      assert_int_equal(reparse(&rx, msg, len, &b, &u), BGP_ATTR_OK);
      assert_int_equal(u.eor, -1);
      struct bgp_nlri_iter it;
      if (af == BGP_AF_IPV4)
        bgp_update_withdrawn_iter(&rx, &u, &it);
      else
        bgp_update_mp_unreach_iter(&rx, &u, &it);
      assert_int_equal(collect(&it, seen, 1500, NULL), done);
      off += done;
      msgs++;
    }
    /* /24: 4 octets, 1018 a message; /48: 7 octets, 580 a message */
    assert_int_equal(msgs, af == BGP_AF_IPV4 ? 2 : 3);
    for (uint i = 0; i < 1500; i++)
      assert_int_equal(seen[i], 1);

    uint len = bgp_update_encode_eor(af, msg, sizeof(msg));
    struct ea_builder b;
    struct bgp_update u;
    assert_int_equal(reparse(&rx, msg, len, &b, &u), BGP_ATTR_OK);
    assert_int_equal(u.eor, af);
  }
  /* an MP_UNREACH with prefixes is not an EoR; one for an unknown AF neither */
  static const u8 unr[] = { 0, 0, 0, 9, 0x80, 15, 6, 0, 2, 1, 16, 0x20, 0x01 };
  static const u8 unk[] = { 0, 0, 0, 6, 0x80, 15, 3, 0, 3, 1 };
  struct ea_builder b;
  struct bgp_update u;
  ea_builder_init(&b);
  assert_int_equal(bgp_update_parse(&rx, test_lp, unr, sizeof(unr), &b, &u), BGP_ATTR_OK);
  assert_int_equal(u.eor, -1);
  ea_builder_init(&b);
  assert_int_equal(bgp_update_parse(&rx, test_lp, unk, sizeof(unk), &b, &u), BGP_ATTR_OK);
  assert_int_equal(u.eor, -1);
  assert_true(u.a.mp_unreach.ignored);
}

static void
test_treat_as_withdraw_and_split(void **state)
{
  struct bgp_rx_ctx rx = rx_ctx(true, true);
  struct ea_builder b;
  struct bgp_update u;
  /* body NLRI with a bad ORIGIN: the NLRI are still there to withdraw */
  static const u8 body[] = { 0, 0, 0, 14,
                             0x40, 1, 1, 9,                    /* ORIGIN 9 */
                             0x40, 2, 0,                       /* empty AS_PATH */
                             0x40, 3, 4, 192, 0, 2, 1,         /* NEXT_HOP */
                             24, 10, 0, 1, 16, 10, 2 };
  ea_builder_init(&b);
  assert_int_equal(bgp_update_parse(&rx, test_lp, body, sizeof(body), &b, &u), BGP_ATTR_TREAT_AS_WITHDRAW);
  static u8 seen[1024];
  struct bgp_nlri_iter it;
  bgp_update_reach_iter(&rx, &u, &it);
  memset(seen, 0, sizeof(seen));
  assert_int_equal(collect(&it, seen, 1024, NULL), 2);

  /* lengths that do not add up -> reset, Malformed Attribute List */
  static const u8 bad[] = { 0, 5, 24, 10, 0, 1 };
  assert_int_equal(bgp_update_parse(&rx, test_lp, bad, sizeof(bad), &b, &u), BGP_ATTR_SESSION_RESET);
  assert_int_equal(u.a.err.subcode, BGP_ERR_UPD_MALFORMED_ATTR_LIST);
  static const u8 bad2[] = { 0, 0, 0, 9, 0x40, 1, 1, 0 };
  assert_int_equal(bgp_update_parse(&rx, test_lp, bad2, sizeof(bad2), &b, &u), BGP_ATTR_SESSION_RESET);
  /* a session reset yields no NLRI */
  bgp_update_reach_iter(&rx, &u, &it);
  assert_true(bgp_cur_empty(&it.c));
}

static void
test_mixed_body_and_mp(void **state)
{
  /* IPv4 in the body with NEXT_HOP, IPv6 in MP_REACH: two next hops */
  u8 body[256], *p = body + 4;
  static const u8 origin = 0, nh[] = { 192, 0, 2, 1 }, path[] = { 2, 1, 0, 0, 0xfd, 0xe9 };
  static const u8 mp[] = { 0, 2, 1, 16, 0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 32, 0x20, 1, 0xd, 0xb8 };
  p = put_attr(p, BAF_OPTIONAL, BA_MP_REACH_NLRI, mp, sizeof(mp));
  p = put_attr(p, T, BA_ORIGIN, &origin, 1);
  p = put_attr(p, T, BA_AS_PATH, path, 6);
  p = put_attr(p, T, BA_NEXT_HOP, nh, 4);
  bgp_store16(body, 0);
  bgp_store16(body + 2, p - body - 4);
  *p++ = 24, *p++ = 10, *p++ = 0, *p++ = 1;
  struct bgp_rx_ctx rx = rx_ctx(true, true);
  struct ea_builder b;
  struct bgp_update u;
  ea_builder_init(&b);
  assert_int_equal(bgp_update_parse(&rx, test_lp, body, p - body, &b, &u), BGP_ATTR_OK);
  struct ea_list *l4 = ea_intern(&b);
  bgp_attrs_use_mp_next_hop(&b, &u.a);
  struct ea_list *l6 = ea_intern(&b);
  assert_ptr_not_equal(l4, l6);
  const struct eattr *e4 = find_bgp(l4, BA_NEXT_HOP), *e6 = find_bgp(l6, BA_NEXT_HOP);
  assert_true(ipa_is_ip4(*(const ip_addr *) ea_data(l4, e4)));
  assert_false(ipa_is_ip4(*(const ip_addr *) ea_data(l6, e6)));
  ea_unref(l4);
  ea_unref(l6);
}

int
main(void)
{
  bgp_test_init("bgp_update_test");
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_header),
    cmocka_unit_test(test_small_messages),
    cmocka_unit_test(test_nlri_decode),
    cmocka_unit_test(test_pack_1000),
    cmocka_unit_test(test_ipv6_mp_reach_addpath),
    cmocka_unit_test(test_ext_next_hop),
    cmocka_unit_test(test_withdraw_and_eor),
    cmocka_unit_test(test_treat_as_withdraw_and_split),
    cmocka_unit_test(test_mixed_body_and_mp),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
