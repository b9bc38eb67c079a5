/*
 * Unit tests for proto/bgp/bgp_aigp.c and the AIGP attribute in the codec:
 * TLV checks, what a malformed AIGP does to an UPDATE (RFC 7311 3.1), the
 * round trip, the metric at our next hop and what we send.
 */
#include "proto/bgp/bgp_test.h"

#define T BAF_TRANSITIVE
#define O BAF_OPTIONAL

/* An AIGP TLV list with one metric TLV (type 1, length 11). */
static const u8 aigp_100[] = { 1, 0, 11, 0, 0, 0, 0, 0, 0, 0, 100 };

static u8 *
base_attrs(u8 *p)
{
  static const u8 origin = 0, nh[] = { 192, 0, 2, 1 }, path[] = { 2, 1, 0, 0, 0xfd, 0xe9 };
  p = put_attr(p, T, BA_ORIGIN, &origin, 1);
  p = put_attr(p, T, BA_AS_PATH, path, 6);
  return put_attr(p, T, BA_NEXT_HOP, nh, 4);
}

static void
test_check(void **state)
{
  static const u8 other[] = { 9, 0, 4, 7 };
  static const u8 short_tlv[] = { 1, 0, 2 };
  static const u8 over[] = { 1, 0, 12, 0, 0, 0, 0, 0, 0, 0, 0 };
  static const u8 bad_len[] = { 1, 0, 10, 0, 0, 0, 0, 0, 0, 0 };
  u64 m = 0;
  assert_null(bgp_aigp_check(aigp_100, sizeof(aigp_100)));
  assert_true(bgp_aigp_metric(aigp_100, sizeof(aigp_100), &m));
  assert_int_equal(m, 100);
  /* other TLV types pass, but carry no metric */
  assert_null(bgp_aigp_check(other, sizeof(other)));
  assert_false(bgp_aigp_metric(other, sizeof(other), &m));
  assert_string_equal(bgp_aigp_check(short_tlv, 2), "TLV framing error");
  assert_string_equal(bgp_aigp_check(short_tlv, 3), "Bad TLV length");
  assert_string_equal(bgp_aigp_check(over, sizeof(over)), "TLV framing error");
  assert_string_equal(bgp_aigp_check(bad_len, sizeof(bad_len)), "Bad AIGP TLV length");
}

static void
test_parse_and_roundtrip(void **state)
{
  u8 buf[256], *p = base_attrs(buf);
  u8 *end = put_attr(p, O, BA_AIGP, aigp_100, sizeof(aigp_100));
  struct bgp_rx_ctx rx = rx_ctx(true, false);
  struct bgp_attrs res;
  struct ea_builder b;
  ea_builder_init(&b);
  assert_int_equal(bgp_attrs_parse(&rx, test_lp, buf, end - buf, true, &b, &res), BGP_ATTR_OK);
  struct ea_list *l = ea_intern(&b);
  const struct eattr *e = find_bgp(l, BA_AIGP);
  assert_non_null(e);
  assert_int_equal(e->flags, O);
  assert_int_equal(e->len, sizeof(aigp_100));
  assert_int_equal(bgp_aigp_total(l), 101);   /* plus the distance, at least 1 */

  /* encoded back as it came, optional non-transitive */
  u8 out[256];
  struct bgp_tx_ctx tx = tx_ctx(true);
  int len = bgp_attrs_encode(&tx, l, true, out, sizeof(out));
  assert_int_equal(len, end - buf);
  assert_memory_equal(out + (p - buf), p, end - p);
  ea_unref(l);
}

/* RFC 7311 3.1: a malformed AIGP, flags included, is dropped; the route stays. */
static void
test_malformed_discarded(void **state)
{
  static const u8 bad[] = { 1, 0, 10, 0, 0, 0, 0, 0, 0, 0 };
  static const struct { u8 flags; const u8 *v; uint len; } cases[] = {
    { O, bad, sizeof(bad) },
    { O | T, aigp_100, sizeof(aigp_100) },
    { T, aigp_100, sizeof(aigp_100) },
  };
  for (uint i = 0; i < ARRAY_SIZE(cases); i++) {
    u8 buf[256], *p = put_attr(base_attrs(buf), cases[i].flags, BA_AIGP, cases[i].v, cases[i].len);
    struct bgp_rx_ctx rx = rx_ctx(true, false);
    struct bgp_attrs res;
    struct ea_builder b;
    ea_builder_init(&b);
    assert_int_equal(bgp_attrs_parse(&rx, test_lp, buf, p - buf, true, &b, &res), BGP_ATTR_OK);
    assert_int_equal(res.discarded, 1);
    struct ea_list *l = ea_intern(&b);
    assert_null(find_bgp(l, BA_AIGP));
    assert_int_equal(bgp_aigp_total(l), BGP_AIGP_MAX);
    ea_unref(l);
  }
}

static struct ea_list *
route(u8 source, u32 igp_metric, const u8 *aigp, uint len)
{
  struct ea_builder b;
  ea_builder_init(&b);
  b.source = source;
  b.igp_metric = igp_metric;
  if (aigp)
    ea_set_data(&b, BGP_EA(BA_AIGP), EAF_OPAQUE, O, aigp, len);
  return ea_intern(&b);
}

static u64
exported(const struct ea_list *a, bool originate, bool *has)
{
  struct ea_builder b;
  ea_builder_from(&b, a);
  bgp_aigp_export(&b, a, originate, test_lp);
  struct ea_list *l = ea_intern(&b);
  const struct eattr *e = find_bgp(l, BA_AIGP);
  u64 m = 0;
  *has = e && bgp_aigp_metric(ea_data(l, e), e->len, &m);
  ea_unref(l);
  return m;
}

static void
test_export(void **state)
{
  bool has;
  /* through us: the metric grows by the distance to the old next hop */
  struct ea_list *bgp = route(RTS_BGP, 0, aigp_100, sizeof(aigp_100));
  assert_int_equal(exported(bgp, false, &has), 101);
  assert_true(has);
  ea_unref(bgp);
  bgp = route(RTS_BGP, 20, aigp_100, sizeof(aigp_100));
  assert_int_equal(exported(bgp, false, &has), 120);
  ea_unref(bgp);

  /* originate: other protocols' routes with a known IGP metric only */
  struct ea_list *st = route(RTS_STATIC, 17, NULL, 0);
  assert_int_equal(exported(st, true, &has), 17);
  assert_true(has);
  exported(st, false, &has);
  assert_false(has);
  ea_unref(st);
  st = route(RTS_STATIC, 0, NULL, 0);
  exported(st, true, &has);
  assert_false(has);
  ea_unref(st);
  struct ea_list *dev = route(RTS_DEVICE, 0, NULL, 0);
  assert_int_equal(exported(dev, true, &has), 0);
  assert_true(has);
  ea_unref(dev);
  /* a BGP route without AIGP gets none */
  bgp = route(RTS_BGP, 5, NULL, 0);
  exported(bgp, true, &has);
  assert_false(has);
  ea_unref(bgp);

  /* the sum saturates */
  static const u8 huge[] = { 1, 0, 11, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
  bgp = route(RTS_BGP, 3, huge, sizeof(huge));
  assert_true(bgp_aigp_total(bgp) == BGP_AIGP_MAX);
  ea_unref(bgp);
}

static void
test_set_metric(void **state)
{
  static const u8 other[] = { 9, 0, 4, 7 };
  uint len;
  u64 m;
  u8 *v = bgp_aigp_set_metric(test_lp, other, sizeof(other), 5, &len);
  assert_int_equal(len, 15);
  assert_null(bgp_aigp_check(v, len));
  assert_true(bgp_aigp_metric(v, len, &m));
  assert_int_equal(m, 5);
  assert_memory_equal(v + 11, other, sizeof(other));   /* the other TLV kept */
  u8 *w = bgp_aigp_set_metric(test_lp, v, len, 7, &len);
  assert_int_equal(len, 15);
  assert_true(bgp_aigp_metric(w, len, &m));
  assert_int_equal(m, 7);
}

int
main(void)
{
  bgp_test_init("bgp_aigp_test");
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_check),
    cmocka_unit_test(test_parse_and_roundtrip),
    cmocka_unit_test(test_malformed_discarded),
    cmocka_unit_test(test_export),
    cmocka_unit_test(test_set_metric),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
