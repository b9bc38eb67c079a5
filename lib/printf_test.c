/*
 * DOC: Unit tests for lib/printf.c.
 *
 * Standard conversions are compared with the C library: every case runs
 * through libc vsnprintf() and our bvsnprintf() at several buffer sizes
 * (0, 1, 2, 7, exact fit and around it, roomy), and the return values and
 * whole buffers, canary bytes past the size included, must be identical.
 * That checks formatting, truncation, NUL termination and that nothing is
 * written past size in one go. The routing conversions have no libc
 * counterpart and are checked against expected text.
 */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "lib/printf.h"
#include "lib/ip.h"
#include "lib/net.h"

#define BUF 640
#define CANARY 0x5a

static void
compare_at_size(int line, size_t size, const char *fmt, va_list args)
{
  char want[BUF], got[BUF];
  va_list a1, a2;

  memset(want, CANARY, sizeof(want));
  memset(got, CANARY, sizeof(got));
  va_copy(a1, args);
  va_copy(a2, args);
  int rw = vsnprintf(want, size, fmt, a1);
  int rg = bvsnprintf(got, size, fmt, a2);
  va_end(a1);
  va_end(a2);

  if (rw != rg || memcmp(want, got, sizeof(want)))
    fail_msg("line %d: format \"%s\" size %zu: libc %d \"%.*s\", ours %d \"%.*s\"",
             line, fmt, size, rw, (int) MIN(size, (size_t) MAX(rw, 0)), want,
             rg, (int) MIN(size, (size_t) MAX(rg, 0)), got);
}

static void
check_same(int line, const char *fmt, ...)
{
  va_list args;
  va_start(args, fmt);

  va_list probe;
  va_copy(probe, args);
  int n = vsnprintf(NULL, 0, fmt, probe);
  va_end(probe);
  assert_true(n >= 0 && n < BUF - 8);

  size_t sizes[] = { 0, 1, 2, 7, n > 0 ? n - 1 : 0, n, n + 1, n + 2, BUF - 8 };
  for (size_t i = 0; i < ARRAY_SIZE(sizes); i++)
  {
    va_list a;
    va_copy(a, args);
    compare_at_size(line, sizes[i], fmt, a);
    va_end(a);
  }
  va_end(args);
}

/* The dead printf() lets the compiler check argument types against the
 * format; CHECK_ODD is for cases that -Wformat rightly frowns upon but that
 * must still behave as in libc. */
#define CHECK(...) do { if (0) printf(__VA_ARGS__); check_same(__LINE__, __VA_ARGS__); } while (0)
#define CHECK_ODD(...) check_same(__LINE__, __VA_ARGS__)

static void
test_std_signed(void **state)
{
  CHECK("%d", 0);
  CHECK("%d", 42);
  CHECK("%d", -42);
  CHECK("%i", -1);
  CHECK("%d", INT_MAX);
  CHECK("%d", INT_MIN);
  CHECK("%5d|", 42);
  CHECK("%-5d|", 42);
  CHECK("%-5d|", -42);
  CHECK("%05d", 42);
  CHECK("%05d", -42);
  CHECK("%+d", 42);
  CHECK("%+d", -42);
  CHECK("%+d", 0);
  CHECK("% d", 42);
  CHECK("% d", -42);
  CHECK("%+05d", 42);
  CHECK("% 05d", 42);
  CHECK("%.3d", 7);
  CHECK("%.3d", -7);
  CHECK("%8.3d|", -7);
  CHECK("%-8.3d|", 7);
  CHECK("%.0d|", 0);
  CHECK("%5.0d|", 0);
  CHECK("%+.0d|", 0);
  CHECK("%.d|", 0);
  CHECK("%*d|", 6, 42);
  CHECK("%-*d|", 6, 42);
  CHECK("%*d|", -6, 42);
  CHECK("%.*d|", 4, 42);
  CHECK("%.*d|", -1, 42);
  CHECK("%*.*d|", 8, 4, -42);
  CHECK("%1d", 12345);
  CHECK("%ld", LONG_MIN);
  CHECK("%ld", LONG_MAX);
  CHECK("%lld", LLONG_MIN);
  CHECK("%lld", LLONG_MAX);
  CHECK("%+lld", LLONG_MAX);
  CHECK("%30lld|", LLONG_MIN);
  CHECK("%-30lld|", LLONG_MIN);
  CHECK("%030lld|", LLONG_MIN);
  CHECK("%hd", (short) -32768);
  CHECK("%hhd", (signed char) -128);
  CHECK("%zd", (ssize_t) -5);
  CHECK("%jd", INTMAX_MIN);
  CHECK("%td", (ptrdiff_t) -7);
  /* h and hh truncate what was promoted to int */
  CHECK_ODD("%hd", 70000);
  CHECK_ODD("%hhd", 300);
  CHECK_ODD("%hhd", 200);
}

static void
test_std_unsigned(void **state)
{
  CHECK("%u", 0U);
  CHECK("%u", 42U);
  CHECK("%u", UINT_MAX);
  CHECK("%u", 3000000000U);
  CHECK("%lu", ULONG_MAX);
  CHECK("%llu", ULLONG_MAX);
  CHECK("%llu", 18000000000000000000ULL);
  CHECK("%zu", SIZE_MAX);
  CHECK("%ju", UINTMAX_MAX);
  CHECK("%10u|", 7U);
  CHECK("%-10u|", 7U);
  CHECK("%010u", 7U);
  CHECK("%.5u", 7U);
  CHECK("%hu", (unsigned short) 65535);
  CHECK("%hhu", (unsigned char) 255);
  CHECK_ODD("%u", -1);
  CHECK_ODD("%hu", 70000);
  CHECK_ODD("%hhu", 300);
  CHECK_ODD("%+u", 5U);
  CHECK_ODD("% u", 5U);

  CHECK("%x", 0U);
  CHECK("%x", 255U);
  CHECK("%x", 0xdeadbeefU);
  CHECK("%X", 0xdeadbeefU);
  CHECK("%#x", 0U);
  CHECK("%#x", 255U);
  CHECK("%#X", 255U);
  CHECK("%#10x|", 255U);
  CHECK("%-#10x|", 255U);
  CHECK("%#010x", 255U);
  CHECK("%#.5x", 255U);
  CHECK("%#.0x|", 0U);
  CHECK("%08X", 0xabcU);
  CHECK("%lx", ULONG_MAX);
  CHECK("%llX", 0x0123456789abcdefULL);
  CHECK("%hhx", (unsigned char) 0xff);
  CHECK("%hx", (unsigned short) 0x2345);
  CHECK("%zx", SIZE_MAX);
  CHECK("%jx", UINTMAX_MAX);
  CHECK_ODD("%hhx", 0x1ff);
  CHECK_ODD("%hx", 0x12345);
  CHECK_ODD("%x", -1);
  CHECK_ODD("%tx", (ptrdiff_t) -1);

  CHECK("%o", 0U);
  CHECK("%o", 8U);
  CHECK("%#o", 8U);
  CHECK("%#o", 0U);
  CHECK("%.0o|", 0U);
  CHECK("%#.0o|", 0U);
  CHECK("%#.3o", 8U);
  CHECK("%#.2o", 8U);
  CHECK("%#5o|", 8U);
  CHECK("%#-5o|", 8U);
  CHECK("%#05o|", 8U);
  CHECK("%llo", ULLONG_MAX);
  CHECK("%#llo", ULLONG_MAX);
}

static void
test_std_text(void **state)
{
  static const char abc[3] = { 'a', 'b', 'c' };   /* not NUL-terminated */
  int x;

  CHECK("%c", 'A');
  CHECK("%5c|", 'A');
  CHECK("%-5c|", 'A');
  CHECK("[%c]", 0);   /* a NUL inside the output counts */
  CHECK("%c%c%c", 'x', 'y', 'z');

  CHECK("%s", "hello");
  CHECK("%s", "");
  CHECK("%10s|", "hello");
  CHECK("%-10s|", "hello");
  CHECK("%-10s|", "longer than ten");
  CHECK("%.3s", "hello");
  CHECK("%.3s", abc);
  CHECK("%.2s", abc);
  CHECK("%10.3s|", "hello");
  CHECK("%-10.3s|", "hello");
  CHECK("%.0s|", "hello");
  CHECK("%.*s|", 2, "abc");
  CHECK("%.*s|", -1, "abc");
  CHECK("%*s|", -8, "abc");
  CHECK("%.10s|", "abc");

  CHECK("%%");
  CHECK("100%%");
  CHECK("%d%%", 50);
  CHECK("no conversions at all");
  CHECK_ODD("");

  CHECK("%p", (void *) &x);
  CHECK("%p", (void *) 0x1234);
  CHECK("%p", (void *) 0);
  CHECK("%20p|", (void *) &x);
  CHECK("%-20p|", (void *) &x);
  CHECK("%10p|", (void *) 0);
  CHECK("%-10p|", (void *) 0);

  CHECK("%s=%d, %#x%% %c %lu %p", "key", -1, 16U, '!', 123456789UL, (void *) 0xbeef);
  CHECK("%-10s|%10s|%-+5d|%5.2s|", "a", "b", 3, "xyz");
  CHECK("%300d|", 1);
  CHECK("%-300s|", "pad");
  CHECK("%.300d|", -9);
}

/* Small and zero sizes: full length comes back, output is cut and always
 * NUL-terminated, nothing past size is touched (also covered by CHECK). */
static void
test_truncation(void **state)
{
  char buf[16];

  memset(buf, CANARY, sizeof(buf));
  assert_int_equal(bsnprintf(buf, 0, "hello %d", 12345), 11);
  assert_int_equal((u8) buf[0], CANARY);
  assert_int_equal(bsnprintf(NULL, 0, "hello %d", 12345), 11);

  memset(buf, CANARY, sizeof(buf));
  assert_int_equal(bsnprintf(buf, 1, "hello"), 5);
  assert_int_equal(buf[0], 0);
  assert_int_equal((u8) buf[1], CANARY);

  memset(buf, CANARY, sizeof(buf));
  assert_int_equal(bsnprintf(buf, 6, "%s world", "hello"), 11);
  assert_string_equal(buf, "hello");
  assert_int_equal((u8) buf[6], CANARY);

  memset(buf, CANARY, sizeof(buf));
  assert_int_equal(bsnprintf(buf, 4, "%-10s|", "ab"), 11);
  assert_string_equal(buf, "ab ");

  ip_addr a;
  assert_true(ipa_pton("2001:db8::1", &a));
  memset(buf, CANARY, sizeof(buf));
  assert_int_equal(bsnprintf(buf, 5, "%I", a), 11);
  assert_string_equal(buf, "2001");
  assert_int_equal((u8) buf[5], CANARY);

  memset(buf, CANARY, sizeof(buf));
  assert_int_equal(bsnprintf(buf, 3, "%t", (btime) 212848000), 7);
  assert_string_equal(buf, "21");
}

static void
test_routing_addresses(void **state)
{
  char buf[256];
  ip_addr v4m, v6;
  ip4_addr v4;
  ip6_addr lo6;

  assert_true(ipa_pton("10.0.0.1", &v4m));
  assert_true(ipa_pton("2001:db8::1", &v6));
  assert_true(ip4_pton("192.0.2.1", &v4));
  assert_true(ip6_pton("::1", &lo6));

  assert_int_equal(bsnprintf(buf, sizeof(buf), "%I", v4m), 8);
  assert_string_equal(buf, "10.0.0.1");
  bsnprintf(buf, sizeof(buf), "%I", v6);
  assert_string_equal(buf, "2001:db8::1");
  bsnprintf(buf, sizeof(buf), "%I", IPA_NONE);
  assert_string_equal(buf, "::");
  bsnprintf(buf, sizeof(buf), "%I4", v4);
  assert_string_equal(buf, "192.0.2.1");
  bsnprintf(buf, sizeof(buf), "%I6", lo6);
  assert_string_equal(buf, "::1");
  bsnprintf(buf, sizeof(buf), "%I6", ipa_from_ip4(v4));
  assert_string_equal(buf, "::ffff:192.0.2.1");
  bsnprintf(buf, sizeof(buf), "[%15I]", v4m);
  assert_string_equal(buf, "[       10.0.0.1]");
  bsnprintf(buf, sizeof(buf), "[%-15I]", v4m);
  assert_string_equal(buf, "[10.0.0.1       ]");
  bsnprintf(buf, sizeof(buf), "[%-12I4]", v4);
  assert_string_equal(buf, "[192.0.2.1   ]");
  bsnprintf(buf, sizeof(buf), "[%5I6]", lo6);
  assert_string_equal(buf, "[  ::1]");

  /* Arguments passed by value as structs do not upset the ones after. */
  bsnprintf(buf, sizeof(buf), "%d %I %s %I4 %u %I6 %c", -1, v6, "mid", v4, 7U, lo6, 'z');
  assert_string_equal(buf, "-1 2001:db8::1 mid 192.0.2.1 7 ::1 z");

  assert_int_equal(bsnprintf(buf, sizeof(buf), "%R", 0x0aff0002U), 10);
  assert_string_equal(buf, "10.255.0.2");
  bsnprintf(buf, sizeof(buf), "%R|%-16R|%16R", 0U, 0xffffffffU, 0x01020304U);
  assert_string_equal(buf, "0.0.0.0|255.255.255.255 |         1.2.3.4");
}

static void
test_routing_nets(void **state)
{
  char buf[256];
  net_addr n4, n6, r4;

  assert_true(net_pton("10.0.0.0/8", &n4));
  assert_true(net_pton("2001:db8::/32", &n6));
  net_fill_roa4(&r4, ip4_from_u32(0x0a020000), 16, 24, 65002);

  bsnprintf(buf, sizeof(buf), "%N", &n4);
  assert_string_equal(buf, "10.0.0.0/8");
  bsnprintf(buf, sizeof(buf), "%N", &n6);
  assert_string_equal(buf, "2001:db8::/32");
  bsnprintf(buf, sizeof(buf), "%N", &r4);
  assert_string_equal(buf, "10.2.0.0/16-24 AS65002");

  /* As "show route" prints the net column. */
  assert_int_equal(bsnprintf(buf, sizeof(buf), "%-20N unicast", &n4), 28);
  assert_string_equal(buf, "10.0.0.0/8           unicast");
  bsnprintf(buf, sizeof(buf), "%-20N|", &r4);
  assert_string_equal(buf, "10.2.0.0/16-24 AS65002|");   /* longer than width: no cut */
  bsnprintf(buf, sizeof(buf), "%20N|", &n6);
  assert_string_equal(buf, "       2001:db8::/32|");
  bsnprintf(buf, sizeof(buf), "%N", (net_addr *) NULL);
  assert_string_equal(buf, "(null)");
}

static void
test_routing_time(void **state)
{
  char buf[64];

  assert_int_equal(bsnprintf(buf, sizeof(buf), "%t", (btime) 212848000), 7);
  assert_string_equal(buf, "212.848");
  bsnprintf(buf, sizeof(buf), "%t", (btime) 0);
  assert_string_equal(buf, "0.000");
  bsnprintf(buf, sizeof(buf), "%.1t", (btime) 212848000);
  assert_string_equal(buf, "212.8");
  bsnprintf(buf, sizeof(buf), "%.0t", (btime) 212848000);
  assert_string_equal(buf, "212");
  bsnprintf(buf, sizeof(buf), "%.6t", (btime) 1);
  assert_string_equal(buf, "0.000001");
  bsnprintf(buf, sizeof(buf), "%.9t", (btime) 212848000);
  assert_string_equal(buf, "212.848000");   /* capped at microseconds */
  bsnprintf(buf, sizeof(buf), "%t", (btime) 999999);
  assert_string_equal(buf, "0.999");         /* truncated, not rounded */
  bsnprintf(buf, sizeof(buf), "%t", (btime) 5 * TO_S);
  assert_string_equal(buf, "5.000");
  bsnprintf(buf, sizeof(buf), "%t", (btime) -1500000);
  assert_string_equal(buf, "-1.500");
  bsnprintf(buf, sizeof(buf), "%t", (btime) -1);
  assert_string_equal(buf, "-0.000");
  bsnprintf(buf, sizeof(buf), "%t", (btime) INT64_MIN);
  assert_string_equal(buf, "-9223372036854.775");
  bsnprintf(buf, sizeof(buf), "%t", BTIME_NEVER);
  assert_string_equal(buf, "9223372036854.775");
  bsnprintf(buf, sizeof(buf), "[%10t]", (btime) 212848000);
  assert_string_equal(buf, "[   212.848]");
  bsnprintf(buf, sizeof(buf), "[%-10.1t]", (btime) 212848000);
  assert_string_equal(buf, "[212.8     ]");
  bsnprintf(buf, sizeof(buf), "%t s, %d", (btime) 1500, 9);
  assert_string_equal(buf, "0.001 s, 9");
}

static void
test_routing_errors(void **state)
{
  char buf[256], want[256];

  errno = ENOENT;
  bsnprintf(buf, sizeof(buf), "open: %m");
  assert_int_equal(errno, ENOENT);   /* preserved */
  snprintf(want, sizeof(want), "open: %s", strerror(ENOENT));
  assert_string_equal(buf, want);

  bsnprintf(buf, sizeof(buf), "%M", ENOENT);
  assert_string_equal(buf, strerror(ENOENT));
  bsnprintf(buf, sizeof(buf), "%M, %d", EACCES, 5);
  snprintf(want, sizeof(want), "%s, 5", strerror(EACCES));
  assert_string_equal(buf, want);

  bsnprintf(buf, sizeof(buf), "%-30M|", ENOENT);
  snprintf(want, sizeof(want), "%-30s|", strerror(ENOENT));
  assert_string_equal(buf, want);
  bsnprintf(buf, sizeof(buf), "%.2M", ENOENT);
  snprintf(want, sizeof(want), "%.2s", strerror(ENOENT));
  assert_string_equal(buf, want);

  /* an unknown number still prints something */
  assert_true(bsnprintf(buf, sizeof(buf), "%M", 99999) > 0);
}

static void
test_unknown_conversions(void **state)
{
  char buf[64];

  /* Shown as written; a following conversion still reads its argument. */
  assert_int_equal(bsnprintf(buf, sizeof(buf), "%q %d", 5), 4);
  assert_string_equal(buf, "%q 5");
  bsnprintf(buf, sizeof(buf), "50%");
  assert_string_equal(buf, "50%");
  bsnprintf(buf, sizeof(buf), "x%-5");
  assert_string_equal(buf, "x%-5");
}

static void
test_buffer(void **state)
{
  struct buffer b;
  char want[8192];
  size_t wlen = 0;

  buffer_init(&b);
  assert_non_null(b.start);
  assert_string_equal(b.start, "");
  assert_int_equal(b.len, 0);

  /* Grow through several reallocations; keep a shadow copy to compare. */
  for (int i = 0; i < 200; i++)
  {
    buffer_print(&b, "line %d: %s\n", i, i % 2 ? "odd" : "even");
    wlen += snprintf(want + wlen, sizeof(want) - wlen, "line %d: %s\n", i, i % 2 ? "odd" : "even");
    assert_int_equal(b.len, wlen);
    assert_true(b.size > b.len);
    assert_int_equal(b.start[b.len], 0);
  }
  assert_string_equal(b.start, want);

  buffer_puts(&b, "tail");
  memcpy(want + wlen, "tail", 5);
  wlen += 4;
  assert_int_equal(b.len, wlen);
  assert_string_equal(b.start, want);

  buffer_append(&b, "xyz", 2);
  assert_int_equal(b.len, wlen + 2);
  assert_string_equal(b.start + wlen, "xy");
  buffer_append(&b, "", 0);
  assert_int_equal(b.len, wlen + 2);

  /* Reset keeps memory and starts over. */
  size_t size = b.size;
  buffer_reset(&b);
  assert_int_equal(b.len, 0);
  assert_int_equal(b.size, size);
  assert_string_equal(b.start, "");

  /* Routing conversions work through the buffer too. */
  net_addr n;
  assert_true(net_pton("10.0.0.0/8", &n));
  buffer_print(&b, "%-20N|%R", &n, 0x0aff0002U);
  assert_string_equal(b.start, "10.0.0.0/8          |10.255.0.2");

  buffer_free(&b);
  assert_int_equal(b.len, 0);
  assert_int_equal(b.size, 0);
  assert_string_equal(b.start, "");
  buffer_free(&b);   /* harmless twice */

  /* Every output length around the growth boundaries. */
  char chunk[300];
  memset(chunk, 'a', sizeof(chunk));
  for (int k = 1; k < (int) sizeof(chunk); k += 7)
  {
    buffer_init(&b);
    wlen = 0;
    for (int round = 0; round < 6; round++)
    {
      if (round % 3 == 0)
        buffer_print(&b, "%.*s", k, chunk);
      else if (round % 3 == 1)
        buffer_append(&b, chunk, k);
      else
        buffer_print(&b, "%*s", k, "");
      memset(want + wlen, round % 3 == 2 ? ' ' : 'a', k);
      wlen += k;
      want[wlen] = 0;
      assert_int_equal(b.len, wlen);
      assert_string_equal(b.start, want);
    }
    buffer_free(&b);
  }

  /* %m sees the caller's errno even when the buffer has to grow. */
  buffer_init(&b);
  errno = EACCES;
  buffer_print(&b, "%-100s %m", "x");
  snprintf(want, sizeof(want), "%-100s %s", "x", strerror(EACCES));
  assert_string_equal(b.start, want);
  buffer_free(&b);

  /* An empty buffer never allocated is fine to reset and free. */
  buffer_init(&b);
  buffer_reset(&b);
  buffer_print(&b, "%s", "");
  assert_string_equal(b.start, "");
  buffer_free(&b);
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_std_signed),
    cmocka_unit_test(test_std_unsigned),
    cmocka_unit_test(test_std_text),
    cmocka_unit_test(test_truncation),
    cmocka_unit_test(test_routing_addresses),
    cmocka_unit_test(test_routing_nets),
    cmocka_unit_test(test_routing_time),
    cmocka_unit_test(test_routing_errors),
    cmocka_unit_test(test_unknown_conversions),
    cmocka_unit_test(test_buffer),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
