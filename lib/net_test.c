/*
 * DOC: Unit tests for lib/net.c.
 *
 * Besides parse/print round trips, the important property is that
 * net_equal, net_hash and net_compare agree with each other (tables rely
 * on it), including for nets filled into storage of the exact concrete
 * size and into dirty memory.
 */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "lib/net.h"

static net_addr
pton(const char *s)
{
  net_addr n;
  if (!net_pton(s, &n))
    fail_msg("net_pton rejected \"%s\"", s);
  return n;
}

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
check_ntop(const net_addr *n, const char *want)
{
  char buf[NET_MAX_TEXT_LENGTH + 1];
  char *end = net_ntop(n, buf);
  assert_string_equal(buf, want);
  assert_ptr_equal(end, buf + strlen(want));
}

static void
test_tables(void **state)
{
  assert_string_equal(net_type_names[NET_IP4], "ipv4");
  assert_string_equal(net_type_names[NET_IP6], "ipv6");
  assert_string_equal(net_type_names[NET_ROA4], "roa4");
  assert_string_equal(net_type_names[NET_ROA6], "roa6");

  assert_int_equal(net_addr_length[NET_IP4], sizeof(net_addr_ip4));
  assert_int_equal(net_addr_length[NET_IP6], sizeof(net_addr_ip6));
  assert_int_equal(net_addr_length[NET_ROA4], sizeof(net_addr_roa4));
  assert_int_equal(net_addr_length[NET_ROA6], sizeof(net_addr_roa6));
  for (int t = NET_IP4; t < NET_MAX; t++)
    assert_true(net_addr_length[t] <= sizeof(net_addr));

  assert_int_equal(net_max_prefix_length[NET_IP4], 32);
  assert_int_equal(net_max_prefix_length[NET_IP6], 128);
  assert_int_equal(net_max_prefix_length[NET_ROA4], 32);
  assert_int_equal(net_max_prefix_length[NET_ROA6], 128);

  /* ASPA: keyed by the customer ASN, printed as the bare number (BIRD 3). */
  assert_string_equal(net_type_names[NET_ASPA], "aspa");
  net_addr a, b;
  char buf[NET_MAX_TEXT_LENGTH + 1];
  net_fill_aspa(&a, 65002);
  net_fill_aspa(&b, 4200000000u);
  assert_null(net_validate(&a));
  assert_string_equal((net_ntop(&a, buf), buf), "65002");
  assert_string_equal((net_ntop(&b, buf), buf), "4200000000");
  assert_true(net_compare(&a, &b) < 0 && net_compare(&b, &a) > 0 && !net_compare(&a, &a));
  assert_false(net_equal(&a, &b));
}

static void
test_fill(void **state)
{
  net_addr n;

  memset(&n, 0xaa, sizeof(n));
  net_fill_ip4(&n, ip4("10.0.0.0"), 8);
  assert_int_equal(n.type, NET_IP4);
  assert_int_equal(n.pxlen, 8);
  assert_int_equal(n.length, sizeof(net_addr_ip4));
  assert_true(ip4_equal(((net_addr_ip4 *) &n)->prefix, ip4("10.0.0.0")));
  /* Bytes past ->length are not ours: the caller may have a smaller struct. */
  assert_int_equal(((u8 *) &n)[sizeof(net_addr_ip4)], 0xaa);

  net_fill_ip6(&n, ip6("2001:db8::"), 32);
  assert_int_equal(n.type, NET_IP6);
  assert_int_equal(n.length, sizeof(net_addr_ip6));
  assert_true(ip6_equal(((net_addr_ip6 *) &n)->prefix, ip6("2001:db8::")));

  net_fill_ipa(&n, ipa_from_ip4(ip4("192.0.2.0")), 24);
  assert_int_equal(n.type, NET_IP4);
  assert_int_equal(n.length, sizeof(net_addr_ip4));
  net_fill_ipa(&n, ip6("2001:db8::"), 48);
  assert_int_equal(n.type, NET_IP6);
  assert_int_equal(n.pxlen, 48);

  net_fill_roa4(&n, ip4("10.0.0.0"), 8, 24, 65000);
  assert_int_equal(n.type, NET_ROA4);
  assert_int_equal(n.length, sizeof(net_addr_roa4));
  assert_int_equal(((net_addr_roa4 *) &n)->max_pxlen, 24);
  assert_int_equal(((net_addr_roa4 *) &n)->asn, 65000);

  net_fill_roa6(&n, ip6("2001:db8::"), 32, 48, 4200000000U);
  assert_int_equal(n.type, NET_ROA6);
  assert_int_equal(n.length, sizeof(net_addr_roa6));
  assert_int_equal(((net_addr_roa6 *) &n)->max_pxlen, 48);
  assert_int_equal(((net_addr_roa6 *) &n)->asn, 4200000000U);

  /* A too long prefix length saturates instead of wrapping to a valid one. */
  net_fill_ip4(&n, IP4_NONE, 256);
  assert_int_equal(n.pxlen, 255);
  assert_non_null(net_validate(&n));

  /* Filling the exact concrete struct (ASan checks we stay inside it). */
  net_addr_ip4 small;
  net_fill_ip4((net_addr *) &small, ip4("10.0.0.0"), 8);
  assert_int_equal(small.length, sizeof(small));
  net_addr big;
  memset(&big, 0xff, sizeof(big));
  net_fill_ip4(&big, ip4("10.0.0.0"), 8);
  assert_true(net_equal(&big, (net_addr *) &small));
  assert_int_equal(net_hash(&big), net_hash((net_addr *) &small));
  assert_int_equal(net_compare(&big, (net_addr *) &small), 0);
}

/* The same net filled into dirty and clean memory is equal and hashes equal. */
static void
test_equal_hash_consistency(void **state)
{
  net_addr a, b;
  memset(&a, 0x00, sizeof(a));
  memset(&b, 0xff, sizeof(b));

  net_fill_ip4(&a, ip4("10.1.0.0"), 16);
  net_fill_ip4(&b, ip4("10.1.0.0"), 16);
  assert_true(net_equal(&a, &b));
  assert_int_equal(net_hash(&a), net_hash(&b));
  assert_int_equal(net_compare(&a, &b), 0);

  net_fill_roa6(&a, ip6("2001:db8::"), 32, 48, 65000);
  net_fill_roa6(&b, ip6("2001:db8::"), 32, 48, 65000);
  assert_true(net_equal(&a, &b));
  assert_int_equal(net_hash(&a), net_hash(&b));
  assert_int_equal(net_compare(&a, &b), 0);

  /* Any field difference breaks equality, and compare agrees. */
  net_addr v[12];
  net_fill_ip4(&v[0], ip4("10.0.0.0"), 8);
  net_fill_ip4(&v[1], ip4("10.0.0.0"), 16);
  net_fill_ip4(&v[2], ip4("11.0.0.0"), 8);
  net_fill_ip6(&v[3], ip6("2001:db8::"), 32);
  net_fill_ip6(&v[4], ip6("2001:db8::"), 33);
  net_fill_ip6(&v[5], ip6("::ffff:10.0.0.0"), 104);
  net_fill_roa4(&v[6], ip4("10.0.0.0"), 8, 24, 65000);
  net_fill_roa4(&v[7], ip4("10.0.0.0"), 8, 24, 65001);
  net_fill_roa4(&v[8], ip4("10.0.0.0"), 8, 16, 65000);
  net_fill_roa6(&v[9], ip6("2001:db8::"), 32, 48, 65000);
  net_fill_roa6(&v[10], ip6("2001:db8::"), 32, 48, 65001);
  net_fill_ip4(&v[11], IP4_NONE, 0);
  for (size_t i = 0; i < ARRAY_SIZE(v); i++)
    for (size_t j = 0; j < ARRAY_SIZE(v); j++)
    {
      int eq = net_equal(&v[i], &v[j]);
      int cmp = net_compare(&v[i], &v[j]);
      assert_int_equal(eq, i == j);
      assert_int_equal(cmp == 0, eq);
      assert_int_equal(cmp, -net_compare(&v[j], &v[i]));
      if (eq)
        assert_int_equal(net_hash(&v[i]), net_hash(&v[j]));
    }

  /* The hash spreads similar nets over a power-of-two table. */
  enum { N = 4096, BUCKETS = 256 };
  uint bucket[BUCKETS] = { 0 };
  for (u32 i = 0; i < N; i++)
  {
    net_addr n;
    net_fill_ip4(&n, ip4_from_u32(0x0a000000 + (i << 8)), 24);
    bucket[net_hash(&n) % BUCKETS]++;
  }
  for (uint i = 0; i < BUCKETS; i++)
    assert_true(bucket[i] > 0 && bucket[i] < 48);
}

static void
test_compare_order(void **state)
{
  net_addr a, b;

  /* type first: any IPv4 before any IPv6 */
  net_fill_ip4(&a, ip4("255.0.0.0"), 8);
  net_fill_ip6(&b, IP6_NONE, 0);
  assert_true(net_compare(&a, &b) < 0);
  net_fill_roa4(&b, IP4_NONE, 0, 0, 0);
  assert_true(net_compare(&a, &b) < 0);

  /* then the address, as an unsigned number */
  net_fill_ip4(&a, ip4("10.0.0.0"), 24);
  net_fill_ip4(&b, ip4("128.0.0.0"), 8);
  assert_true(net_compare(&a, &b) < 0);
  net_fill_ip6(&a, ip6("2001:db8::"), 64);
  net_fill_ip6(&b, ip6("2001:db9::"), 32);
  assert_true(net_compare(&a, &b) < 0);

  /* then the length */
  net_fill_ip4(&a, ip4("10.0.0.0"), 8);
  net_fill_ip4(&b, ip4("10.0.0.0"), 16);
  assert_true(net_compare(&a, &b) < 0);
  assert_true(net_compare(&b, &a) > 0);

  /* ROA: then max length, then ASN (numerically, not by bytes) */
  net_fill_roa4(&a, ip4("10.0.0.0"), 8, 16, 65001);
  net_fill_roa4(&b, ip4("10.0.0.0"), 8, 24, 65000);
  assert_true(net_compare(&a, &b) < 0);
  net_fill_roa4(&a, ip4("10.0.0.0"), 8, 24, 255);
  net_fill_roa4(&b, ip4("10.0.0.0"), 8, 24, 256);
  assert_true(net_compare(&a, &b) < 0);
  net_fill_roa6(&a, ip6("2001:db8::"), 32, 48, 255);
  net_fill_roa6(&b, ip6("2001:db8::"), 32, 48, 256);
  assert_true(net_compare(&a, &b) < 0);
  net_fill_roa6(&a, ip6("2001:db8::"), 32, 40, 65001);
  net_fill_roa6(&b, ip6("2001:db8::"), 32, 48, 65000);
  assert_true(net_compare(&a, &b) < 0);
}

static void
test_pton(void **state)
{
  net_addr n = pton("10.0.0.0/8");
  assert_int_equal(n.type, NET_IP4);
  assert_int_equal(n.pxlen, 8);
  assert_int_equal(n.length, sizeof(net_addr_ip4));
  assert_true(ip4_equal(((net_addr_ip4 *) &n)->prefix, ip4("10.0.0.0")));

  n = pton("2001:db8::/32");
  assert_int_equal(n.type, NET_IP6);
  assert_int_equal(n.pxlen, 32);
  assert_true(ip6_equal(((net_addr_ip6 *) &n)->prefix, ip6("2001:db8::")));

  n = pton("0.0.0.0/0");
  assert_int_equal(n.pxlen, 0);
  n = pton("::/0");
  assert_int_equal(n.type, NET_IP6);
  n = pton("192.0.2.1/32");
  assert_int_equal(n.pxlen, 32);
  n = pton("2001:db8::1/128");
  assert_int_equal(n.pxlen, 128);
  n = pton("::ffff:10.0.0.0/104");
  assert_int_equal(n.type, NET_IP6);

  static const char *const bad[] = {
    "10.0.0.1/8",        /* host bits set */
    "2001:db8::1/32",    /* host bits set */
    "10.0.0.0/33", "10.0.0.0/-1", "10.0.0.0/+8", "10.0.0.0/8x", "10.0.0.0/ 8", "10.0.0.0/",
    "10.0.0.0/0008", "2001:db8::/129", "::/1000", "10.0.0.0", "/8", "10.0.0/8",
    "10.0.0.0//8", "10.0.0.0/8/8", " 10.0.0.0/8", "2001:db8::%1/32",
    "10.0.0.0/8-24 AS65000",   /* ROA text is not parsed here */
    "1234567890123456789012345678901234567890123456789012345678901234567890/8",
    "",
  };
  for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
  {
    net_addr x;
    memset(&x, 0x5a, sizeof(x));
    if (net_pton(bad[i], &x))
      fail_msg("net_pton accepted \"%s\"", bad[i]);
    assert_int_equal(x.type, 0x5a);   /* untouched on failure */
  }
}

static void
test_ntop(void **state)
{
  net_addr n;

  net_fill_ip4(&n, ip4("10.0.0.0"), 8);
  check_ntop(&n, "10.0.0.0/8");
  net_fill_ip4(&n, IP4_NONE, 0);
  check_ntop(&n, "0.0.0.0/0");
  net_fill_ip6(&n, ip6("2001:db8::"), 32);
  check_ntop(&n, "2001:db8::/32");
  net_fill_ip6(&n, IP6_NONE, 0);
  check_ntop(&n, "::/0");
  net_fill_roa4(&n, ip4("10.0.0.0"), 8, 24, 65000);
  check_ntop(&n, "10.0.0.0/8-24 AS65000");
  net_fill_roa4(&n, ip4("10.2.0.0"), 16, 24, 65002);
  check_ntop(&n, "10.2.0.0/16-24 AS65002");
  net_fill_roa6(&n, ip6("2001:db8::"), 32, 48, 4200000000U);
  check_ntop(&n, "2001:db8::/32-48 AS4200000000");

  /* The longest text fits NET_MAX_TEXT_LENGTH, even for a corrupt ROA. */
  ip6_addr full = ip6("ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe");
  net_fill_roa6(&n, full, 128, 128, 4294967295U);
  check_ntop(&n, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe/128-128 AS4294967295");
  net_fill_roa6(&n, full, 255, 4294967295U, 4294967295U);
  char buf[NET_MAX_TEXT_LENGTH + 1];
  assert_true(net_ntop(&n, buf) - buf <= NET_MAX_TEXT_LENGTH);

  /* round trip */
  static const char *const texts[] = {
    "10.0.0.0/8", "192.0.2.0/24", "255.255.255.255/32", "2001:db8::/32",
    "2001:db8:0:1::/64", "fe80::/10", "::1/128", "::ffff:0.0.0.0/96",
  };
  for (size_t i = 0; i < ARRAY_SIZE(texts); i++)
  {
    net_addr x = pton(texts[i]);
    check_ntop(&x, texts[i]);
  }
}

static void
test_prefix_and_normalize(void **state)
{
  net_addr n;

  net_fill_ip4(&n, ip4("10.1.2.3"), 16);
  assert_true(ip6_equal(net_prefix(&n), ipa_from_ip4(ip4("10.1.2.3"))));
  assert_int_equal(net_pxlen(&n), 16);
  assert_string_equal(net_validate(&n), "Host bits set");
  assert_int_equal(net_normalize(&n), 1);
  assert_true(ip4_equal(((net_addr_ip4 *) &n)->prefix, ip4("10.1.0.0")));
  assert_int_equal(net_normalize(&n), 0);
  assert_null(net_validate(&n));

  net_fill_ip6(&n, ip6("2001:db8:1:2::1"), 48);
  assert_true(ip6_equal(net_prefix(&n), ip6("2001:db8:1:2::1")));
  assert_int_equal(net_normalize(&n), 1);
  assert_true(ip6_equal(net_prefix(&n), ip6("2001:db8:1::")));
  assert_int_equal(net_normalize(&n), 0);

  net_fill_roa4(&n, ip4("10.0.0.1"), 8, 24, 1);
  assert_int_equal(net_normalize(&n), 1);
  check_ntop(&n, "10.0.0.0/8-24 AS1");
  net_fill_roa6(&n, ip6("2001:db8::1"), 32, 48, 1);
  assert_int_equal(net_normalize(&n), 1);
  check_ntop(&n, "2001:db8::/32-48 AS1");

  /* /0 clears everything, full length clears nothing */
  net_fill_ip4(&n, ip4("1.2.3.4"), 0);
  assert_int_equal(net_normalize(&n), 1);
  check_ntop(&n, "0.0.0.0/0");
  net_fill_ip6(&n, ip6("2001:db8::1"), 128);
  assert_int_equal(net_normalize(&n), 0);
}

static void
test_validate(void **state)
{
  net_addr n;

  net_fill_ip4(&n, ip4("10.0.0.0"), 8);
  assert_null(net_validate(&n));
  net_fill_ip4(&n, ip4("10.0.0.0"), 33);
  assert_string_equal(net_validate(&n), "Invalid prefix length");
  net_fill_ip6(&n, ip6("2001:db8::"), 129);
  assert_string_equal(net_validate(&n), "Invalid prefix length");
  net_fill_ip6(&n, ip6("2001:db8::1"), 64);
  assert_string_equal(net_validate(&n), "Host bits set");
  net_fill_ip6(&n, ip6("2001:db8::1"), 128);
  assert_null(net_validate(&n));

  net_fill_roa4(&n, ip4("10.0.0.0"), 8, 24, 65000);
  assert_null(net_validate(&n));
  net_fill_roa4(&n, ip4("10.0.0.0"), 8, 8, 65000);
  assert_null(net_validate(&n));
  net_fill_roa4(&n, ip4("10.0.0.0"), 16, 8, 65000);
  assert_non_null(net_validate(&n));
  net_fill_roa4(&n, ip4("10.0.0.0"), 8, 33, 65000);
  assert_non_null(net_validate(&n));
  net_fill_roa6(&n, ip6("2001:db8::"), 32, 129, 65000);
  assert_non_null(net_validate(&n));
  net_fill_roa6(&n, ip6("2001:db8::"), 32, 128, 65000);
  assert_null(net_validate(&n));

  memset(&n, 0, sizeof(n));
  assert_non_null(net_validate(&n));
  n.type = NET_MAX;
  assert_non_null(net_validate(&n));
  net_fill_ip4(&n, ip4("10.0.0.0"), 8);
  n.length = sizeof(net_addr_ip6);   /* length does not match type */
  assert_non_null(net_validate(&n));
}

static void
test_in_net(void **state)
{
  net_addr a = pton("10.0.0.0/8");
  net_addr b = pton("10.1.0.0/16");
  net_addr c = pton("11.0.0.0/16");
  net_addr d = pton("0.0.0.0/0");
  net_addr e = pton("2001:db8::/32");
  net_addr f = pton("2001:db8:1::/48");
  net_addr g = pton("::/0");

  assert_true(net_in_net(&b, &a));
  assert_false(net_in_net(&a, &b));
  assert_true(net_in_net(&a, &a));
  assert_false(net_in_net(&c, &a));
  assert_true(net_in_net(&a, &d));
  assert_true(net_in_net(&c, &d));
  assert_true(net_in_net(&f, &e));
  assert_false(net_in_net(&e, &f));
  assert_true(net_in_net(&f, &g));
  /* never across families */
  assert_false(net_in_net(&a, &g));
  assert_false(net_in_net(&e, &d));

  /* ROA prefixes compare with IP nets of their family */
  net_addr r;
  net_fill_roa4(&r, ip4("10.0.0.0"), 8, 24, 65000);
  assert_true(net_in_net(&b, &r));
  assert_false(net_in_net(&c, &r));

  assert_true(net_contains_ip(&a, ipa_from_ip4(ip4("10.255.255.255"))));
  assert_true(net_contains_ip(&a, ipa_from_ip4(ip4("10.0.0.0"))));
  assert_false(net_contains_ip(&a, ipa_from_ip4(ip4("11.0.0.0"))));
  assert_false(net_contains_ip(&a, ipa_from_ip4(ip4("9.255.255.255"))));
  assert_true(net_contains_ip(&d, ipa_from_ip4(ip4("1.2.3.4"))));
  assert_true(net_contains_ip(&e, ip6("2001:db8:ffff::1")));
  assert_false(net_contains_ip(&e, ip6("2001:db9::")));
  assert_true(net_contains_ip(&g, ip6("::1")));
  /* family is part of the question */
  assert_false(net_contains_ip(&a, ip6("2001:db8::1")));
  assert_false(net_contains_ip(&g, ipa_from_ip4(ip4("10.0.0.1"))));
  net_addr h = pton("192.0.2.1/32");
  assert_true(net_contains_ip(&h, ipa_from_ip4(ip4("192.0.2.1"))));
  assert_false(net_contains_ip(&h, ipa_from_ip4(ip4("192.0.2.0"))));
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_tables),
    cmocka_unit_test(test_fill),
    cmocka_unit_test(test_equal_hash_consistency),
    cmocka_unit_test(test_compare_order),
    cmocka_unit_test(test_pton),
    cmocka_unit_test(test_ntop),
    cmocka_unit_test(test_prefix_and_normalize),
    cmocka_unit_test(test_validate),
    cmocka_unit_test(test_in_net),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
