/*
 * Unit tests for proto/bgp/bgp_open.c: OPEN round trips with every
 * capability, OPEN validation errors, and the negotiation matrix.
 */
#include "proto/bgp/bgp_test.h"

static struct bgp_open_msg
full_open(void)
{
  struct bgp_open_msg m = { .version = 4, .my_as = BGP_AS_TRANS, .hold_time = 90, .router_id = 0x0a000001 };
  struct bgp_caps *c = &m.caps;
  bgp_caps_init(c);
  c->mp[BGP_AF_IPV4] = c->mp[BGP_AF_IPV6] = true;
  c->route_refresh = c->enhanced_refresh = c->ext_messages = true;
  c->ext_next_hop[BGP_AF_IPV4] = true;
  c->as4 = true;
  c->as4_number = 4200000000u;
  c->add_path[BGP_AF_IPV4] = BGP_ADD_PATH_RX | BGP_ADD_PATH_TX;
  c->add_path[BGP_AF_IPV6] = BGP_ADD_PATH_RX;
  c->gr = true;
  c->gr_flags = BGP_GRF_RESTART | BGP_GRF_NOTIFICATION;
  c->gr_time = 120;
  c->gr_af[BGP_AF_IPV4] = BGP_GR_AF_PRESENT | BGP_GR_AF_FORWARDING;
  c->gr_af[BGP_AF_IPV6] = BGP_GR_AF_PRESENT;
  c->llgr = true;
  c->llgr_af[BGP_AF_IPV6] = BGP_LLGR_AF_PRESENT | BGP_LLGR_AF_FORWARDING;
  c->llgr_time[BGP_AF_IPV6] = 0xabcdef;
  c->role = BGP_ROLE_RS;
  strcpy(c->hostname, "rs1");
  strcpy(c->domain, "example.net");
  return m;
}

static int
decode(const u8 *buf, uint len, struct bgp_open_msg *m, struct bgp_error *err)
{
  uint mlen;
  u8 type;
  assert_int_equal(bgp_header_check(buf, 4096, &mlen, &type, err), 0);
  assert_int_equal(type, BGP_MSG_OPEN);
  assert_int_equal(mlen, len);
  return bgp_open_decode(buf + 19, len - 19, m, err);
}

static void
test_open_roundtrip(void **state)
{
  struct bgp_open_msg m = full_open(), d;
  struct bgp_error err;
  u8 buf[4096];
  uint len = bgp_open_encode(buf, sizeof(buf), &m);
  assert_true(len > 29);
  assert_int_equal(decode(buf, len, &d, &err), 0);
  assert_int_equal(d.peer_as, 4200000000u);
  assert_int_equal(d.my_as, BGP_AS_TRANS);
  assert_int_equal(d.hold_time, 90);
  assert_int_equal(d.router_id, 0x0a000001);
  /* what was announced comes back field by field */
  m.caps.mp_any = true;
  assert_memory_equal(&d.caps, &m.caps, sizeof(m.caps));

  /* too small a buffer */
  assert_int_equal(bgp_open_encode(buf, 40, &m), 0);

  /* no capabilities at all */
  struct bgp_open_msg plain = { .version = 4, .my_as = 65000, .hold_time = 0, .router_id = 1 };
  bgp_caps_init(&plain.caps);
  len = bgp_open_encode(buf, sizeof(buf), &plain);
  assert_int_equal(len, 29);
  assert_int_equal(decode(buf, len, &d, &err), 0);
  assert_int_equal(d.peer_as, 65000);
  assert_false(d.caps.mp_any);
}

static void
test_open_extended_params(void **state)
{
  /* a hostname long enough to push the parameters past 255 octets:
   * RFC 9072 extended optional parameters */
  struct bgp_open_msg m = full_open(), d;
  memset(m.caps.hostname, 'h', 200);
  m.caps.hostname[200] = 0;
  struct bgp_error err;
  u8 buf[4096];
  uint len = bgp_open_encode(buf, sizeof(buf), &m);
  assert_int_equal(buf[28], 255);
  assert_int_equal(buf[29], 255);
  assert_int_equal(decode(buf, len, &d, &err), 0);
  assert_string_equal(d.caps.hostname, m.caps.hostname);
  assert_true(d.caps.as4);
}

/* A minimal OPEN body with the given optional parameter bytes. */
static uint
open_body(u8 *b, u8 version, u16 as, u16 hold, u32 id, const u8 *opt, uint opt_len)
{
  b[0] = version;
  bgp_store16(b + 1, as);
  bgp_store16(b + 3, hold);
  bgp_store32(b + 5, id);
  b[9] = opt_len;
  memcpy(b + 10, opt, opt_len);
  return 10 + opt_len;
}

static void
expect_open_error(const u8 *opt, uint opt_len, u8 version, u16 as, u16 hold, u32 id, u8 code, u8 sub)
{
  u8 b[512];
  struct bgp_open_msg m;
  struct bgp_error err;
  uint len = open_body(b, version, as, hold, id, opt, opt_len);
  assert_int_equal(bgp_open_decode(b, len, &m, &err), -1);
  assert_int_equal(err.code, code);
  assert_int_equal(err.subcode, sub);
}

static void
test_open_errors(void **state)
{
  static const u8 none[1];
  struct bgp_error err;
  struct bgp_open_msg m;
  u8 b[64];

  /* version: data = the version we support */
  uint len = open_body(b, 3, 65000, 90, 1, none, 0);
  assert_int_equal(bgp_open_decode(b, len, &m, &err), -1);
  assert_int_equal(err.subcode, BGP_ERR_OPEN_BAD_VERSION);
  assert_int_equal(err.len, 2);
  assert_int_equal(bgp_load16(bgp_error_data(&err)), 4);

  expect_open_error(none, 0, 4, 65000, 1, 1, BGP_ERR_OPEN, BGP_ERR_OPEN_BAD_HOLD_TIME);
  expect_open_error(none, 0, 4, 65000, 2, 1, BGP_ERR_OPEN, BGP_ERR_OPEN_BAD_HOLD_TIME);
  expect_open_error(none, 0, 4, 65000, 90, 0, BGP_ERR_OPEN, BGP_ERR_OPEN_BAD_BGP_ID);
  expect_open_error(none, 0, 4, 0, 90, 1, BGP_ERR_OPEN, BGP_ERR_OPEN_BAD_PEER_AS);
  /* hold time 0 and 3 are fine */
  len = open_body(b, 4, 65000, 3, 1, none, 0);
  assert_int_equal(bgp_open_decode(b, len, &m, &err), 0);

  /* authentication parameter (type 1) -> Unsupported Optional Parameter */
  static const u8 auth[] = { 1, 2, 0, 0 };
  expect_open_error(auth, sizeof(auth), 4, 65000, 90, 1, BGP_ERR_OPEN, BGP_ERR_OPEN_UNSUP_OPT_PARAM);
  /* malformed capability lengths -> OPEN error, unspecific */
  static const u8 mp3[] = { 2, 5, 1, 3, 0, 1, 0 };
  expect_open_error(mp3, sizeof(mp3), 4, 65000, 90, 1, BGP_ERR_OPEN, BGP_ERR_OPEN_UNSPECIFIC);
  static const u8 as4_2[] = { 2, 4, 65, 2, 0, 1 };
  expect_open_error(as4_2, sizeof(as4_2), 4, 65000, 90, 1, BGP_ERR_OPEN, BGP_ERR_OPEN_UNSPECIFIC);
  static const u8 gr3[] = { 2, 5, 64, 3, 0, 1, 0 };
  expect_open_error(gr3, sizeof(gr3), 4, 65000, 90, 1, BGP_ERR_OPEN, BGP_ERR_OPEN_UNSPECIFIC);
  static const u8 ap5[] = { 2, 7, 69, 5, 0, 1, 1, 1, 0 };
  expect_open_error(ap5, sizeof(ap5), 4, 65000, 90, 1, BGP_ERR_OPEN, BGP_ERR_OPEN_UNSPECIFIC);
  static const u8 rr1[] = { 2, 3, 2, 1, 0 };
  expect_open_error(rr1, sizeof(rr1), 4, 65000, 90, 1, BGP_ERR_OPEN, BGP_ERR_OPEN_UNSPECIFIC);
  /* capability running past its parameter */
  static const u8 over[] = { 2, 3, 65, 4, 0 };
  expect_open_error(over, sizeof(over), 4, 65000, 90, 1, BGP_ERR_OPEN, BGP_ERR_OPEN_UNSPECIFIC);
  /* parameter running past the message */
  len = open_body(b, 4, 65000, 90, 1, none, 0);
  b[9] = 4;
  assert_int_equal(bgp_open_decode(b, len, &m, &err), -1);
  /* AS4 capability with ASN 0 -> Bad Peer AS (RFC 7607) */
  static const u8 as4_0[] = { 2, 6, 65, 4, 0, 0, 0, 0 };
  expect_open_error(as4_0, sizeof(as4_0), 4, 65000, 90, 1, BGP_ERR_OPEN, BGP_ERR_OPEN_BAD_PEER_AS);
  /* truncated fixed part */
  assert_int_equal(bgp_open_decode(b, 5, &m, &err), -1);
  assert_int_equal(err.code, BGP_ERR_HEADER);

  /* unknown capabilities and a malformed hostname are ignored */
  static const u8 unk[] = { 2, 9, 200, 1, 0, 73, 4, 10, 'a', 'b', 'c' };
  len = open_body(b, 4, 65000, 90, 1, unk, sizeof(unk));
  assert_int_equal(bgp_open_decode(b, len, &m, &err), 0);
  assert_int_equal(m.caps.unknown, 1);
  assert_string_equal(m.caps.hostname, "");
  /* hostile hostname bytes are made printable */
  static const u8 hn[] = { 2, 7, 73, 5, 3, 'a', 1, 'b', 0 };
  len = open_body(b, 4, 65000, 90, 1, hn, sizeof(hn));
  assert_int_equal(bgp_open_decode(b, len, &m, &err), 0);
  assert_string_equal(m.caps.hostname, "a?b");
}

static void
test_negotiate_matrix(void **state)
{
  struct bgp_caps l, r;
  struct bgp_session_caps s;
  struct bgp_error err;

  /* ADD-PATH per direction: local x remote over {none, RX, TX, both} */
  for (u8 la = 0; la < 4; la++)
    for (u8 ra = 0; ra < 4; ra++) {
      bgp_caps_init(&l);
      bgp_caps_init(&r);
      l.mp[BGP_AF_IPV4] = r.mp[BGP_AF_IPV4] = r.mp_any = true;
      l.add_path[BGP_AF_IPV4] = la;
      r.add_path[BGP_AF_IPV4] = ra;
      assert_int_equal(bgp_caps_negotiate(&l, &r, &s, &err), 0);
      u8 want = ((la & BGP_ADD_PATH_RX) && (ra & BGP_ADD_PATH_TX) ? BGP_ADD_PATH_RX : 0) |
                ((la & BGP_ADD_PATH_TX) && (ra & BGP_ADD_PATH_RX) ? BGP_ADD_PATH_TX : 0);
      assert_int_equal(s.add_path[BGP_AF_IPV4], want);
    }

  /* boolean capabilities: both sides needed, except route refresh which
   * only says what the peer accepts */
  for (int a = 0; a < 2; a++)
    for (int b = 0; b < 2; b++) {
      bgp_caps_init(&l);
      bgp_caps_init(&r);
      l.as4 = a, r.as4 = b;
      l.ext_messages = a, r.ext_messages = b;
      l.enhanced_refresh = a, r.enhanced_refresh = b;
      l.route_refresh = a, r.route_refresh = b;
      l.mp[BGP_AF_IPV4] = r.mp[BGP_AF_IPV4] = r.mp_any = true;
      l.ext_next_hop[BGP_AF_IPV4] = a, r.ext_next_hop[BGP_AF_IPV4] = b;
      bgp_caps_negotiate(&l, &r, &s, &err);
      assert_int_equal(s.as4, a && b);
      assert_int_equal(s.tx_max_len, a && b ? 65535 : 4096);
      assert_int_equal(s.rx_max_len, a && b ? 65535 : 4096);
      assert_int_equal(s.enhanced_refresh, a && b);
      assert_int_equal(s.route_refresh, b);
      assert_int_equal(s.ext_next_hop[BGP_AF_IPV4], a && b);
    }

  /* families: intersection; a peer without MP capabilities is IPv4 only */
  bgp_caps_init(&l);
  bgp_caps_init(&r);
  l.mp[BGP_AF_IPV4] = l.mp[BGP_AF_IPV6] = true;
  l.add_path[BGP_AF_IPV6] = BGP_ADD_PATH_RX | BGP_ADD_PATH_TX;
  bgp_caps_negotiate(&l, &r, &s, &err);
  assert_true(s.af[BGP_AF_IPV4]);
  assert_false(s.af[BGP_AF_IPV6]);
  r.mp_any = r.mp[BGP_AF_IPV6] = true;
  r.add_path[BGP_AF_IPV6] = BGP_ADD_PATH_RX | BGP_ADD_PATH_TX;
  bgp_caps_negotiate(&l, &r, &s, &err);
  assert_false(s.af[BGP_AF_IPV4]);
  assert_true(s.af[BGP_AF_IPV6]);
  assert_int_equal(s.add_path[BGP_AF_IPV6], BGP_ADD_PATH_RX | BGP_ADD_PATH_TX);

  /* graceful restart: the peer's state, per negotiated family */
  r.gr = true;
  r.gr_flags = BGP_GRF_RESTART | BGP_GRF_NOTIFICATION;
  r.gr_time = 300;
  r.gr_af[BGP_AF_IPV6] = BGP_GR_AF_PRESENT | BGP_GR_AF_FORWARDING;
  r.llgr = true;
  r.llgr_af[BGP_AF_IPV6] = BGP_LLGR_AF_PRESENT;
  r.llgr_time[BGP_AF_IPV6] = 3600;
  bgp_caps_negotiate(&l, &r, &s, &err);
  assert_true(s.gr_peer && s.gr_peer_restarting);
  assert_false(s.gr_peer_notification);   /* we did not set N */
  assert_int_equal(s.gr_peer_time, 300);
  assert_int_equal(s.gr_peer_af[BGP_AF_IPV6], BGP_GR_AF_PRESENT | BGP_GR_AF_FORWARDING);
  assert_int_equal(s.llgr_peer_time[BGP_AF_IPV6], 3600);
  l.gr = true;
  l.gr_flags = BGP_GRF_NOTIFICATION;
  bgp_caps_negotiate(&l, &r, &s, &err);
  assert_true(s.gr_peer_notification);
}

static void
test_roles(void **state)
{
  struct bgp_caps l, r;
  struct bgp_session_caps s;
  struct bgp_error err;
  static const u8 roles[] = { BGP_ROLE_PROVIDER, BGP_ROLE_RS, BGP_ROLE_RS_CLIENT, BGP_ROLE_CUSTOMER,
                              BGP_ROLE_PEER, BGP_ROLE_NONE };
  /* RFC 9234 4.2 table 2 */
  static const u8 ok[6][6] = {
    /* remote:        prov rs  rsc  cust peer none */
    /* provider */  { 0,   0,  0,   1,   0,   1 },
    /* rs */        { 0,   0,  1,   0,   0,   1 },
    /* rs-client */ { 0,   1,  0,   0,   0,   1 },
    /* customer */  { 1,   0,  0,   0,   0,   1 },
    /* peer */      { 0,   0,  0,   0,   1,   1 },
    /* none */      { 1,   1,  1,   1,   1,   1 },
  };
  for (uint i = 0; i < 6; i++)
    for (uint j = 0; j < 6; j++)
      for (int strict = 0; strict < 2; strict++) {
        bgp_caps_init(&l);
        bgp_caps_init(&r);
        l.role = roles[i];
        l.role_strict = strict;
        r.role = roles[j];
        bool want = ok[i][j] && !(strict && roles[i] != BGP_ROLE_NONE && roles[j] == BGP_ROLE_NONE);
        int rv = bgp_caps_negotiate(&l, &r, &s, &err);
        if (want != !rv)
          fail_msg("roles %u/%u strict %d: got %d", i, j, strict, rv);
        if (rv) {
          assert_int_equal(rv, BGP_ERR_OPEN_ROLE_MISMATCH);
          assert_int_equal(err.code, BGP_ERR_OPEN);
          assert_int_equal(err.subcode, BGP_ERR_OPEN_ROLE_MISMATCH);
        }
      }

  /* two different Role capabilities from the peer -> mismatch */
  u8 b[64];
  static const u8 two[] = { 2, 6, 9, 1, 3, 9, 1, 4 };
  struct bgp_open_msg m;
  uint len = open_body(b, 4, 65000, 90, 1, two, sizeof(two));
  assert_int_equal(bgp_open_decode(b, len, &m, &err), 0);
  assert_true(m.caps.role_conflict);
  bgp_caps_init(&l);
  l.role = BGP_ROLE_PROVIDER;
  assert_int_equal(bgp_caps_negotiate(&l, &m.caps, &s, &err), BGP_ERR_OPEN_ROLE_MISMATCH);
}

int
main(void)
{
  bgp_test_init("bgp_open_test");
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_open_roundtrip),
    cmocka_unit_test(test_open_extended_params),
    cmocka_unit_test(test_open_errors),
    cmocka_unit_test(test_negotiate_matrix),
    cmocka_unit_test(test_roles),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
