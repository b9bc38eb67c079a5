/*
 * DOC: Unit tests for lib/ip.c.
 *
 * Parsing is checked against hand-picked valid and malformed texts (and,
 * for IPv6, cross-checked with libc inet_pton/inet_ntop on a table so that
 * we agree with the system on everything RFC 4291 allows). Output is
 * checked against RFC 5952 examples. Bit operations are checked on edges:
 * /0, /32, /128, word boundaries and masks with holes.
 */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <string.h>

#include "lib/ip.h"

static ip4_addr
ip4(const char *s)
{
  ip4_addr a;
  assert_true(ip4_pton(s, &a));
  return a;
}

static ip6_addr
ip6(const char *s)
{
  ip6_addr a;
  assert_true(ip6_pton(s, &a));
  return a;
}

static void
test_ip4_pton_valid(void **state)
{
  ip4_addr a;

  assert_true(ip4_pton("1.2.3.4", &a));
  assert_int_equal(ip4_to_u32(a), 0x01020304);
  assert_true(ip4_pton("0.0.0.0", &a));
  assert_int_equal(ip4_to_u32(a), 0);
  assert_true(ip4_pton("255.255.255.255", &a));
  assert_int_equal(ip4_to_u32(a), 0xffffffffU);
  assert_true(ip4_pton("10.255.0.2", &a));
  assert_int_equal(ip4_to_u32(a), 0x0aff0002);
  /* Leading zeros are decimal, as in BIRD, never octal. */
  assert_true(ip4_pton("010.001.000.009", &a));
  assert_int_equal(ip4_to_u32(a), 0x0a010009);
}

static void
test_ip4_pton_invalid(void **state)
{
  static const char *const bad[] = {
    "", "1", "1.2", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1.2.3.256", "1.2.3.1000",
    "0001.2.3.4", "1..2.3", ".1.2.3", "1.2.3.", "1.2.3.4.", " 1.2.3.4", "1.2.3.4 ",
    "1.2.3.4x", "x1.2.3.4", "1.2.3.-4", "+1.2.3.4", "1.2.3.0x4", "a.b.c.d",
    "1.2.3.4/8", "::1", "1,2,3,4",
  };
  for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
  {
    ip4_addr a = ip4_from_u32(0xdeadbeef);
    if (ip4_pton(bad[i], &a))
      fail_msg("ip4_pton accepted \"%s\"", bad[i]);
    assert_int_equal(ip4_to_u32(a), 0xdeadbeef);
  }
}

static void
test_ip6_pton_valid(void **state)
{
  ip6_addr a;

  assert_true(ip6_pton("::", &a));
  assert_true(ip6_zero(a));

  assert_true(ip6_pton("::1", &a));
  assert_true(ip6_equal(a, ip6_build(0, 0, 0, 1)));

  assert_true(ip6_pton("2001:db8::1", &a));
  assert_true(ip6_equal(a, ip6_build(0x20010db8, 0, 0, 1)));

  assert_true(ip6_pton("2001:DB8:0:0:0:0:0:1", &a));
  assert_true(ip6_equal(a, ip6_build(0x20010db8, 0, 0, 1)));

  assert_true(ip6_pton("1:2:3:4:5:6:7:8", &a));
  assert_true(ip6_equal(a, ip6_build(0x00010002, 0x00030004, 0x00050006, 0x00070008)));

  assert_true(ip6_pton("1::", &a));
  assert_true(ip6_equal(a, ip6_build(0x00010000, 0, 0, 0)));

  assert_true(ip6_pton("1:2:3:4:5:6:7::", &a));
  assert_true(ip6_equal(a, ip6_build(0x00010002, 0x00030004, 0x00050006, 0x00070000)));

  assert_true(ip6_pton("::2:3:4:5:6:7:8", &a));
  assert_true(ip6_equal(a, ip6_build(0x00000002, 0x00030004, 0x00050006, 0x00070008)));

  assert_true(ip6_pton("fe80::ffff:ffff", &a));
  assert_true(ip6_equal(a, ip6_build(0xfe800000, 0, 0, 0xffffffffU)));

  /* Embedded IPv4 */
  assert_true(ip6_pton("::ffff:1.2.3.4", &a));
  assert_true(ip6_equal(a, ip6_build(0, 0, 0xffff, 0x01020304)));
  assert_true(ipa_is_ip4(a));
  assert_true(ip6_pton("::1.2.3.4", &a));
  assert_true(ip6_equal(a, ip6_build(0, 0, 0, 0x01020304)));
  assert_true(ip6_pton("64:ff9b::192.0.2.33", &a));
  assert_true(ip6_equal(a, ip6_build(0x0064ff9b, 0, 0, 0xc0000221)));
  assert_true(ip6_pton("1:2:3:4:5:6:1.2.3.4", &a));
  assert_true(ip6_equal(a, ip6_build(0x00010002, 0x00030004, 0x00050006, 0x01020304)));
}

static void
test_ip6_pton_invalid(void **state)
{
  static const char *const bad[] = {
    "", ":", ":::", "::1::", "1::2::3", "2001:db8::1%", "2001:db8::1%eth0", "fe80::1%1",
    "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8::", "::1:2:3:4:5:6:7:8",
    "1:2:3:4::5:6:7:8", ":1::", "1:", ":1", "1::2:", "12345::", "g::1", "::g",
    " ::1", "::1 ", "x::1", "::1x", "[::1]", "::1/64", "1.2.3.4",
    "::ffff:1.2.3", "::ffff:256.1.1.1", "::ffff:1.2.3.4.5", "::1.2.3.4:5",
    "1:2:3:4:5:6:7:1.2.3.4", "1.2.3.4::", "::ffff:1.2.3.4x", "::-1", "::+1",
    "2001:db8:::1", "1:2:3:4:5:6:7:8:",
  };
  for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
  {
    ip6_addr a = ip6_build(1, 2, 3, 4);
    if (ip6_pton(bad[i], &a))
      fail_msg("ip6_pton accepted \"%s\"", bad[i]);
    assert_true(ip6_equal(a, ip6_build(1, 2, 3, 4)));

    /* Sanity of the table itself: libc rejects these too. */
    struct in6_addr x;
    if (inet_pton(AF_INET6, bad[i], &x) == 1)
      fail_msg("libc accepts \"%s\": test table is wrong", bad[i]);
  }
}

/* Agree with libc on a spread of valid texts, both ways. */
static void
test_ip6_vs_libc(void **state)
{
  static const char *const good[] = {
    "::", "::1", "1::", "2001:db8::1", "2001:db8:0:1:1:1:1:1", "2001:0:0:1::1",
    "2001:db8::1:0:0:1", "fe80::1:2:3:4", "ff02::1:ff00:1", "1:0:0:2:0:0:0:3",
    "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "0:0:0:0:0:0:0:1", "1:2:3:4:5:6:7:8",
    "2001:db8::", "::ffff:0:0", "::fffe:1.2.3.4", "1:0:0:0:0:0:0:0", "0:1:0:1:0:1:0:1",
  };
  for (size_t i = 0; i < ARRAY_SIZE(good); i++)
  {
    ip6_addr a;
    struct in6_addr x;
    u8 wire[16];
    if (!ip6_pton(good[i], &a))
      fail_msg("ip6_pton rejected \"%s\"", good[i]);
    assert_int_equal(inet_pton(AF_INET6, good[i], &x), 1);
    ip6_put(wire, a);
    assert_memory_equal(wire, x.s6_addr, 16);

    /* Our output must re-parse to the same value; where libc's output is
     * RFC 5952 too (no mixed IPv4 notation), it must match. */
    char ours[IP6_MAX_TEXT_LENGTH + 1], theirs[INET6_ADDRSTRLEN];
    ip6_ntop(a, ours);
    assert_non_null(inet_ntop(AF_INET6, &x, theirs, sizeof(theirs)));
    if (!strchr(theirs, '.'))
      assert_string_equal(ours, theirs);
    ip6_addr b;
    assert_true(ip6_pton(ours, &b));
    assert_true(ip6_equal(a, b));
  }
}

static void
check_ip6_ntop(ip6_addr a, const char *want)
{
  char buf[IP6_MAX_TEXT_LENGTH + 1];
  char *end = ip6_ntop(a, buf);
  assert_string_equal(buf, want);
  assert_ptr_equal(end, buf + strlen(want));
}

static void
test_ip6_ntop_rfc5952(void **state)
{
  check_ip6_ntop(IP6_NONE, "::");
  check_ip6_ntop(ip6_build(0, 0, 0, 1), "::1");
  check_ip6_ntop(ip6_build(0x20010db8, 0, 0, 1), "2001:db8::1");
  /* 4.1 no leading zeros; 4.3 lowercase */
  check_ip6_ntop(ip6_build(0x20010db8, 0x00aa00bb, 0x0ABC0000, 0x000000ff), "2001:db8:aa:bb:abc::ff");
  /* 4.2.2 a single zero group is not compressed */
  check_ip6_ntop(ip6_build(0x20010db8, 0x00000001, 0x00010001, 0x00010001), "2001:db8:0:1:1:1:1:1");
  check_ip6_ntop(ip6_build(0x20010db8, 0x00010001, 0x00010001, 0x00010000), "2001:db8:1:1:1:1:1:0");
  /* 4.2.3 the longest run wins, the first one on a tie */
  check_ip6_ntop(ip6_build(0x20010000, 0x00000001, 0, 0x00000001), "2001:0:0:1::1");
  check_ip6_ntop(ip6_build(0x20010db8, 0, 0x00010000, 0x00000001), "2001:db8::1:0:0:1");
  check_ip6_ntop(ip6_build(0x00010000, 0x00000002, 0, 0x00000003), "1:0:0:2::3");
  /* runs at the very start and end */
  check_ip6_ntop(ip6_build(0x00010000, 0, 0, 0), "1::");
  check_ip6_ntop(ip6_build(0, 0, 0, 0x00010002), "::1:2");
  check_ip6_ntop(ip6_build(0x00010002, 0x00030004, 0x00050006, 0x00070008), "1:2:3:4:5:6:7:8");
  check_ip6_ntop(ip6_build(0xffffffffU, 0xffffffffU, 0xffffffffU, 0xffffffffU),
                 "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
  /* 5: v4-mapped in mixed notation */
  check_ip6_ntop(ip6_build(0, 0, 0xffff, 0xc0000201), "::ffff:192.0.2.1");
  /* v4-compatible is deprecated: plain hex */
  check_ip6_ntop(ip6_build(0, 0, 0, 0x01020304), "::102:304");
}

static void
test_ipa_text(void **state)
{
  char buf[IPA_MAX_TEXT_LENGTH + 1];
  ip_addr a;

  assert_true(ipa_pton("10.0.0.1", &a));
  assert_true(ipa_is_ip4(a));
  assert_true(ip6_equal(a, ip6_build(0, 0, 0xffff, 0x0a000001)));
  ipa_ntop(a, buf);
  assert_string_equal(buf, "10.0.0.1");

  assert_true(ipa_pton("::ffff:1.2.3.4", &a));
  assert_true(ipa_is_ip4(a));
  ipa_ntop(a, buf);
  assert_string_equal(buf, "1.2.3.4");

  assert_true(ipa_pton("2001:db8::1", &a));
  assert_false(ipa_is_ip4(a));
  char *end = ipa_ntop(a, buf);
  assert_string_equal(buf, "2001:db8::1");
  assert_ptr_equal(end, buf + 11);

  assert_false(ipa_pton("1.2.3", &a));
  assert_false(ipa_pton("::1::", &a));
  assert_false(ipa_pton("", &a));

  char b4[IP4_MAX_TEXT_LENGTH + 1];
  end = ip4_ntop(ip4_from_u32(0xffffffffU), b4);
  assert_string_equal(b4, "255.255.255.255");
  assert_ptr_equal(end, b4 + IP4_MAX_TEXT_LENGTH);
  ip4_ntop(IP4_NONE, b4);
  assert_string_equal(b4, "0.0.0.0");

  /* The longest IPv6 text fits the advertised size. */
  char b6[IP6_MAX_TEXT_LENGTH + 1];
  end = ip6_ntop(ip6_build(0xffffffffU, 0xffffffffU, 0xffffffffU, 0xfffffffeU), b6);
  assert_int_equal(end - b6, IP6_MAX_TEXT_LENGTH);
}

static void
test_masks(void **state)
{
  assert_int_equal(ip4_to_u32(ip4_mkmask(0)), 0);
  assert_int_equal(ip4_to_u32(ip4_mkmask(1)), 0x80000000U);
  assert_int_equal(ip4_to_u32(ip4_mkmask(8)), 0xff000000U);
  assert_int_equal(ip4_to_u32(ip4_mkmask(31)), 0xfffffffeU);
  assert_int_equal(ip4_to_u32(ip4_mkmask(32)), 0xffffffffU);
  assert_int_equal(ip4_to_u32(ip4_mkmask(40)), 0xffffffffU);   /* saturates */

  assert_true(ip6_equal(ip6_mkmask(0), IP6_NONE));
  assert_true(ip6_equal(ip6_mkmask(32), ip6_build(0xffffffffU, 0, 0, 0)));
  assert_true(ip6_equal(ip6_mkmask(33), ip6_build(0xffffffffU, 0x80000000U, 0, 0)));
  assert_true(ip6_equal(ip6_mkmask(64), ip6_build(0xffffffffU, 0xffffffffU, 0, 0)));
  assert_true(ip6_equal(ip6_mkmask(127), ip6_build(~0U, ~0U, ~0U, 0xfffffffeU)));
  assert_true(ip6_equal(ip6_mkmask(128), ip6_build(~0U, ~0U, ~0U, ~0U)));
  assert_true(ip6_equal(ip6_mkmask(200), ip6_build(~0U, ~0U, ~0U, ~0U)));

  for (uint i = 0; i <= 32; i++)
    assert_int_equal(ip4_masklen(ip4_mkmask(i)), i);
  for (uint i = 0; i <= 128; i++)
  {
    ip6_addr m = ip6_mkmask(i);
    assert_int_equal(ip6_masklen(&m), i);
  }

  /* holes */
  assert_int_equal(ip4_masklen(ip4_from_u32(0xff00ff00U)), -1);
  assert_int_equal(ip4_masklen(ip4_from_u32(0x00000001U)), -1);
  assert_int_equal(ip4_masklen(ip4_from_u32(0x7fffffffU)), -1);
  assert_int_equal(ip4_masklen(ip4_from_u32(0xfffffffdU)), -1);
  ip6_addr h1 = ip6_build(0xffffffffU, 0, 1, 0);
  ip6_addr h2 = ip6_build(0xffffffffU, 0xfffffffeU, 0xffffffffU, 0);
  ip6_addr h3 = ip6_build(0xffff0000U, 0, 0, 1);
  ip6_addr h4 = ip6_build(0x7fffffffU, ~0U, ~0U, ~0U);
  assert_int_equal(ip6_masklen(&h1), -1);
  assert_int_equal(ip6_masklen(&h2), -1);
  assert_int_equal(ip6_masklen(&h3), -1);
  assert_int_equal(ip6_masklen(&h4), -1);
}

static void
test_bit_ops(void **state)
{
  ip4_addr a = ip4("10.1.2.3");
  assert_int_equal(ip4_to_u32(ip4_and(a, ip4_mkmask(16))), 0x0a010000);
  assert_int_equal(ip4_to_u32(ip4_not(ip4_mkmask(24))), 0x000000ff);
  ip6_addr b = ip6("2001:db8:1:2:3:4:5:6");
  assert_true(ip6_equal(ip6_and(b, ip6_mkmask(48)), ip6("2001:db8:1::")));
  assert_true(ip6_equal(ip6_not(ip6_mkmask(120)), ip6("::ff")));

  /* getbit counts from the most significant bit */
  ip4_addr g = ip4_from_u32(0x80000001U);
  assert_int_equal(ip4_getbit(g, 0), 1);
  assert_int_equal(ip4_getbit(g, 1), 0);
  assert_int_equal(ip4_getbit(g, 30), 0);
  assert_int_equal(ip4_getbit(g, 31), 1);
  assert_int_equal(ip4_getbit(g, 32), 0);
  ip6_addr g6 = ip6_build(0x80000000U, 0x00000001U, 0x80000000U, 0x00000001U);
  assert_int_equal(ip6_getbit(g6, 0), 1);
  assert_int_equal(ip6_getbit(g6, 1), 0);
  assert_int_equal(ip6_getbit(g6, 63), 1);
  assert_int_equal(ip6_getbit(g6, 64), 1);
  assert_int_equal(ip6_getbit(g6, 65), 0);
  assert_int_equal(ip6_getbit(g6, 127), 1);
  assert_int_equal(ip6_getbit(g6, 128), 0);

  /* common prefix length */
  assert_int_equal(ip4_pxlen(a, a), 32);
  assert_int_equal(ip4_pxlen(ip4("10.0.0.0"), ip4("10.0.0.1")), 31);
  assert_int_equal(ip4_pxlen(ip4("10.0.0.0"), ip4("11.0.0.0")), 7);
  assert_int_equal(ip4_pxlen(ip4("0.0.0.0"), ip4("128.0.0.0")), 0);
  assert_int_equal(ip6_pxlen(b, b), 128);
  assert_int_equal(ip6_pxlen(ip6("2001:db8::"), ip6("2001:db9::")), 31);
  assert_int_equal(ip6_pxlen(ip6("2001:db8::"), ip6("2001:db8::1")), 127);
  assert_int_equal(ip6_pxlen(ip6("2001:db8::"), ip6("2001:db8:0:0:8000::")), 64);
  assert_int_equal(ip6_pxlen(ip6("::"), ip6("8000::")), 0);
}

static void
test_byte_order(void **state)
{
  u8 buf[20] = { 0 };
  ip4_addr a = ip4_from_u32(0x0a000102);

  ip4_put(buf + 1, a);   /* unaligned on purpose */
  assert_memory_equal(buf + 1, "\x0a\x00\x01\x02", 4);
  assert_true(ip4_equal(ip4_get(buf + 1), a));

  ip4_addr n = ip4_hton(a);
  assert_memory_equal(&n.addr, "\x0a\x00\x01\x02", 4);
  assert_int_equal(n.addr, htonl(0x0a000102));
  assert_true(ip4_equal(ip4_ntoh(n), a));

  ip6_addr b = ip6("2001:db8:1:2:3:4:5:6");
  ip6_put(buf + 3, b);
  assert_memory_equal(buf + 3, "\x20\x01\x0d\xb8\x00\x01\x00\x02\x00\x03\x00\x04\x00\x05\x00\x06", 16);
  assert_true(ip6_equal(ip6_get(buf + 3), b));

  ip6_addr bn = ip6_hton(b);
  assert_memory_equal(bn.addr, "\x20\x01\x0d\xb8\x00\x01\x00\x02\x00\x03\x00\x04\x00\x05\x00\x06", 16);
  assert_true(ip6_equal(ip6_ntoh(bn), b));
}

static void
test_compare(void **state)
{
  assert_int_equal(ip4_compare(ip4("1.2.3.4"), ip4("1.2.3.4")), 0);
  assert_true(ip4_compare(ip4("1.2.3.4"), ip4("1.2.3.5")) < 0);
  assert_true(ip4_compare(ip4("128.0.0.0"), ip4("127.255.255.255")) > 0);   /* unsigned */
  assert_true(ip4_compare(ip4("255.0.0.0"), ip4("0.0.0.1")) > 0);

  assert_int_equal(ip6_compare(ip6("2001:db8::1"), ip6("2001:db8::1")), 0);
  assert_true(ip6_compare(ip6("2001:db8::1"), ip6("2001:db8::2")) < 0);
  assert_true(ip6_compare(ip6("2001:db9::"), ip6("2001:db8:ffff::")) > 0);   /* first word decides */
  assert_true(ip6_compare(ip6("8000::"), ip6("7fff:ffff::")) > 0);
  assert_true(ip6_compare(ip6("::ffff:1.2.3.4"), ip6("::1")) > 0);
  /* antisymmetric */
  assert_int_equal(ip6_compare(ip6("::1"), ip6("::2")), -ip6_compare(ip6("::2"), ip6("::1")));
}

static void
test_link_local(void **state)
{
  assert_true(ip4_is_link_local(ip4("169.254.1.1")));
  assert_false(ip4_is_link_local(ip4("169.253.1.1")));
  assert_true(ip6_is_link_local(ip6("fe80::1")));
  assert_true(ip6_is_link_local(ip6("febf::1")));
  assert_false(ip6_is_link_local(ip6("fec0::1")));
  assert_false(ip6_is_link_local(ip6("2001:db8::1")));
  assert_true(ipa_is_link_local(ipa_from_ip4(ip4("169.254.0.1"))));
  assert_false(ipa_is_link_local(ipa_from_ip4(ip4("10.0.0.1"))));
  assert_true(ipa_is_link_local(ip6("fe80::2")));
}

static void
test_hash(void **state)
{
  /* Deterministic, and spreads consecutive keys over the low bits that a
   * power-of-two table uses. */
  assert_int_equal(ip4_hash(ip4("10.0.0.1")), ip4_hash(ip4("10.0.0.1")));
  assert_int_equal(ip6_hash(ip6("2001:db8::1")), ip6_hash(ip6("2001:db8::1")));

  enum { N = 4096, BUCKETS = 256 };
  uint b4[BUCKETS] = { 0 }, b6[BUCKETS] = { 0 }, bw[BUCKETS] = { 0 };
  for (u32 i = 0; i < N; i++)
  {
    b4[ip4_hash(ip4_from_u32(0x0a000000 + (i << 8))) % BUCKETS]++;
    b6[ip6_hash(ip6_build(0x20010db8, i, 0, 0)) % BUCKETS]++;
    bw[ip6_hash(ip6_build(0x20010db8, 0, 0, i)) % BUCKETS]++;
  }
  for (uint i = 0; i < BUCKETS; i++)
  {
    /* expected 16 per bucket; a weak hash puts them all in a few */
    assert_true(b4[i] > 0 && b4[i] < 48);
    assert_true(b6[i] > 0 && b6[i] < 48);
    assert_true(bw[i] > 0 && bw[i] < 48);
  }

  /* Every word of an IPv6 address matters. */
  ip6_addr base = ip6("2001:db8:1:2:3:4:5:6");
  for (int w = 0; w < 4; w++)
  {
    ip6_addr x = base;
    x.addr[w] ^= 1;
    assert_int_not_equal(ip6_hash(x), ip6_hash(base));
  }
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_ip4_pton_valid),
    cmocka_unit_test(test_ip4_pton_invalid),
    cmocka_unit_test(test_ip6_pton_valid),
    cmocka_unit_test(test_ip6_pton_invalid),
    cmocka_unit_test(test_ip6_vs_libc),
    cmocka_unit_test(test_ip6_ntop_rfc5952),
    cmocka_unit_test(test_ipa_text),
    cmocka_unit_test(test_masks),
    cmocka_unit_test(test_bit_ops),
    cmocka_unit_test(test_byte_order),
    cmocka_unit_test(test_compare),
    cmocka_unit_test(test_link_local),
    cmocka_unit_test(test_hash),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
