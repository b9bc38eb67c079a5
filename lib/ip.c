/*
 * DOC: IPv4 and IPv6 address operations.
 *
 * Pure functions on values kept in host byte order (see lib/ip.h). An IPv6
 * address is four u32 words, most significant first, so masks, bit tests and
 * comparison work word by word without byte swapping; only *_hton, *_put and
 * *_get touch network order.
 *
 * Text parsing is strict: the whole string must be one address, nothing
 * before or after it, no zone index ("%eth0"). Text output for IPv6 follows
 * RFC 5952 so that what we print can be compared as a string. No state, no
 * allocation; safe from any thread.
 */

#include "lib/ip.h"

#include <string.h>

static inline int
u32_cmp(u32 a, u32 b)
{
  return (a > b) - (a < b);
}

int
ip4_compare(ip4_addr a, ip4_addr b)
{
  return u32_cmp(a.addr, b.addr);
}

int
ip6_compare(ip6_addr a, ip6_addr b)
{
  for (int i = 0; i < 4; i++)
    if (a.addr[i] != b.addr[i])
      return u32_cmp(a.addr[i], b.addr[i]);
  return 0;
}

/* Prefix lengths beyond the family maximum saturate to a full mask instead
 * of shifting by 32 or more, which C leaves undefined. */
ip4_addr
ip4_mkmask(uint pxlen)
{
  return ip4_from_u32(u32_mkmask(MIN(pxlen, IP4_MAX_PREFIX_LENGTH)));
}

ip6_addr
ip6_mkmask(uint pxlen)
{
  ip6_addr m;
  pxlen = MIN(pxlen, IP6_MAX_PREFIX_LENGTH);
  for (int i = 0; i < 4; i++)
  {
    uint n = pxlen > 32 ? 32 : pxlen;
    m.addr[i] = u32_mkmask(n);
    pxlen -= n;
  }
  return m;
}

/* A contiguous mask has an inverse of the form 0...01...1; adding one to
 * that clears every set bit, which is how holes are detected. */
static int
u32_masklen(u32 mask)
{
  u32 inv = ~mask;
  if (inv & (inv + 1))
    return -1;
  return __builtin_popcount(mask);
}

int
ip4_masklen(ip4_addr mask)
{
  return u32_masklen(mask.addr);
}

int
ip6_masklen(ip6_addr *mask)
{
  int i = 0;
  while (i < 4 && mask->addr[i] == 0xffffffffU)
    i++;
  if (i == 4)
    return 128;

  int len = u32_masklen(mask->addr[i]);
  if (len < 0)
    return -1;
  for (int j = i + 1; j < 4; j++)
    if (mask->addr[j])
      return -1;
  return 32 * i + len;
}

ip4_addr
ip4_and(ip4_addr a, ip4_addr b)
{
  return ip4_from_u32(a.addr & b.addr);
}

ip6_addr
ip6_and(ip6_addr a, ip6_addr b)
{
  return ip6_build(a.addr[0] & b.addr[0], a.addr[1] & b.addr[1],
                   a.addr[2] & b.addr[2], a.addr[3] & b.addr[3]);
}

ip4_addr
ip4_not(ip4_addr a)
{
  return ip4_from_u32(~a.addr);
}

ip6_addr
ip6_not(ip6_addr a)
{
  return ip6_build(~a.addr[0], ~a.addr[1], ~a.addr[2], ~a.addr[3]);
}

/* Out-of-range positions read as 0 rather than shifting out of range. */
uint
ip4_getbit(ip4_addr a, uint pos)
{
  if (pos >= IP4_MAX_PREFIX_LENGTH)
    return 0;
  return (a.addr >> (31 - pos)) & 1;
}

uint
ip6_getbit(ip6_addr a, uint pos)
{
  if (pos >= IP6_MAX_PREFIX_LENGTH)
    return 0;
  return (a.addr[pos / 32] >> (31 - pos % 32)) & 1;
}

uint
ip4_pxlen(ip4_addr a, ip4_addr b)
{
  u32 x = a.addr ^ b.addr;
  return x ? (uint) __builtin_clz(x) : 32;
}

uint
ip6_pxlen(ip6_addr a, ip6_addr b)
{
  for (int i = 0; i < 4; i++)
  {
    u32 x = a.addr[i] ^ b.addr[i];
    if (x)
      return 32 * i + __builtin_clz(x);
  }
  return 128;
}

/* Explicit shifts rather than htonl(): no dependency on <arpa/inet.h> and
 * the same code is correct on either host byte order. */
static inline u32
u32_swap_to_net(u32 x)
{
  u8 b[4] = { x >> 24, x >> 16, x >> 8, x };
  u32 r;
  memcpy(&r, b, 4);
  return r;
}

static inline u32
u32_swap_from_net(u32 x)
{
  u8 b[4];
  memcpy(b, &x, 4);
  return ((u32) b[0] << 24) | ((u32) b[1] << 16) | ((u32) b[2] << 8) | b[3];
}

ip4_addr
ip4_hton(ip4_addr a)
{
  return ip4_from_u32(u32_swap_to_net(a.addr));
}

ip4_addr
ip4_ntoh(ip4_addr a)
{
  return ip4_from_u32(u32_swap_from_net(a.addr));
}

ip6_addr
ip6_hton(ip6_addr a)
{
  for (int i = 0; i < 4; i++)
    a.addr[i] = u32_swap_to_net(a.addr[i]);
  return a;
}

ip6_addr
ip6_ntoh(ip6_addr a)
{
  for (int i = 0; i < 4; i++)
    a.addr[i] = u32_swap_from_net(a.addr[i]);
  return a;
}

/* Byte-wise so that buf needs no alignment: wire buffers rarely have it. */
static inline void
put_u32(u8 *buf, u32 x)
{
  buf[0] = x >> 24;
  buf[1] = x >> 16;
  buf[2] = x >> 8;
  buf[3] = x;
}

static inline u32
get_u32(const u8 *buf)
{
  return ((u32) buf[0] << 24) | ((u32) buf[1] << 16) | ((u32) buf[2] << 8) | buf[3];
}

void
ip4_put(u8 *buf, ip4_addr a)
{
  put_u32(buf, a.addr);
}

ip4_addr
ip4_get(const u8 *buf)
{
  return ip4_from_u32(get_u32(buf));
}

void
ip6_put(u8 *buf, ip6_addr a)
{
  for (int i = 0; i < 4; i++)
    put_u32(buf + 4 * i, a.addr[i]);
}

ip6_addr
ip6_get(const u8 *buf)
{
  return ip6_build(get_u32(buf), get_u32(buf + 4), get_u32(buf + 8), get_u32(buf + 12));
}

/* 169.254.0.0/16 (RFC 3927) */
int
ip4_is_link_local(ip4_addr a)
{
  return (a.addr & 0xffff0000U) == 0xa9fe0000U;
}

/* fe80::/10 (RFC 4291) */
int
ip6_is_link_local(ip6_addr a)
{
  return (a.addr[0] & 0xffc00000U) == 0xfe800000U;
}

int
ipa_is_link_local(ip_addr a)
{
  return ipa_is_ip4(a) ? ip4_is_link_local(ipa_to_ip4(a)) : ip6_is_link_local(a);
}

/*
 * Dotted quad, exactly four decimal parts of one to three digits, each at
 * most 255. Leading zeros are read as decimal ("010" is 10), as BIRD does;
 * inet_aton() would read octal, which is why it is not used.
 */
int
ip4_pton(const char *s, ip4_addr *a)
{
  u32 v = 0;

  for (int part = 0; part < 4; part++)
  {
    if (part && *s++ != '.')
      return 0;

    uint n = 0, digits = 0;
    while (*s >= '0' && *s <= '9')
    {
      if (++digits > 3)
        return 0;
      n = n * 10 + (uint) (*s++ - '0');
    }
    if (!digits || n > 255)
      return 0;
    v = (v << 8) | n;
  }

  if (*s)
    return 0;
  *a = ip4_from_u32(v);
  return 1;
}

static int
hex_value(char c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/*
 * RFC 4291 section 2.2: eight groups of one to four hex digits, at most one
 * "::" standing for one or more zero groups, and an optional dotted quad in
 * place of the last two groups. Groups are collected left to right and the
 * ones after "::" are shifted to the end at the finish.
 */
int
ip6_pton(const char *s, ip6_addr *a)
{
  u16 w[8];
  int n = 0;
  int gap = -1;   /* group index where "::" stands, or -1 */

  if (s[0] == ':')
  {
    if (s[1] != ':')
      return 0;
    gap = 0;
    s += 2;
  }

  while (*s)
  {
    if (n >= 8)
      return 0;

    const char *group = s;
    uint v = 0, digits = 0;
    int h;
    while ((h = hex_value(*s)) >= 0)
    {
      v = (v << 4) | (uint) h;
      s++;
      if (++digits > 4)
        break;
    }

    /* The digits we just read start a dotted quad: it must end the text. */
    if (*s == '.')
    {
      ip4_addr v4;
      if (n > 6 || !ip4_pton(group, &v4))
        return 0;
      w[n++] = v4.addr >> 16;
      w[n++] = v4.addr & 0xffff;
      break;
    }

    if (!digits || digits > 4)
      return 0;
    w[n++] = v;

    if (!*s)
      break;
    if (*s++ != ':')
      return 0;
    if (*s == ':')
    {
      if (gap >= 0)
        return 0;
      gap = n;
      s++;
    }
    else if (!*s)
      return 0;   /* trailing single colon */
  }

  if (gap >= 0)
  {
    /* "::" must stand for at least one group */
    if (n >= 8)
      return 0;
    int tail = n - gap;
    memmove(w + 8 - tail, w + gap, tail * sizeof(w[0]));
    memset(w + gap, 0, (8 - n) * sizeof(w[0]));
  }
  else if (n != 8)
    return 0;

  for (int i = 0; i < 4; i++)
    a->addr[i] = ((u32) w[2 * i] << 16) | w[2 * i + 1];
  return 1;
}

int
ipa_pton(const char *s, ip_addr *a)
{
  ip4_addr v4;
  if (ip4_pton(s, &v4))
  {
    *a = ipa_from_ip4(v4);
    return 1;
  }
  return ip6_pton(s, a);
}

static char *
put_dec(char *p, uint v)
{
  char tmp[10];
  int n = 0;
  do
    tmp[n++] = '0' + v % 10;
  while (v /= 10);
  while (n)
    *p++ = tmp[--n];
  return p;
}

static char *
put_ip4(char *p, u32 v)
{
  for (int i = 3; i >= 0; i--)
  {
    p = put_dec(p, (v >> (8 * i)) & 0xff);
    if (i)
      *p++ = '.';
  }
  return p;
}

char *
ip4_ntop(ip4_addr a, char *buf)
{
  char *p = put_ip4(buf, a.addr);
  *p = 0;
  return p;
}

static char *
put_hex16(char *p, uint v)
{
  static const char digits[] = "0123456789abcdef";
  int shift = 12;
  while (shift > 0 && !(v >> shift))
    shift -= 4;
  for (; shift >= 0; shift -= 4)
    *p++ = digits[(v >> shift) & 0xf];
  return p;
}

/*
 * RFC 5952: lowercase, no leading zeros, the longest run of two or more zero
 * groups becomes "::" (the first one on a tie). The v4-mapped range
 * (section 5) is written ::ffff:a.b.c.d.
 */
char *
ip6_ntop(ip6_addr a, char *buf)
{
  char *p = buf;

  if (ipa_is_ip4(a))
  {
    memcpy(p, "::ffff:", 7);
    p = put_ip4(p + 7, a.addr[3]);
    *p = 0;
    return p;
  }

  uint w[8];
  for (int i = 0; i < 8; i++)
    w[i] = (a.addr[i / 2] >> (i % 2 ? 0 : 16)) & 0xffff;

  int best = -1, best_len = 1;
  for (int i = 0; i < 8;)
  {
    if (w[i])
    {
      i++;
      continue;
    }
    int j = i;
    while (j < 8 && !w[j])
      j++;
    if (j - i > best_len)
    {
      best = i;
      best_len = j - i;
    }
    i = j;
  }

  for (int i = 0; i < 8; i++)
  {
    if (i == best)
    {
      *p++ = ':';
      *p++ = ':';
      i += best_len - 1;
      continue;
    }
    if (i && i != best + best_len)
      *p++ = ':';
    p = put_hex16(p, w[i]);
  }
  *p = 0;
  return p;
}

char *
ipa_ntop(ip_addr a, char *buf)
{
  return ipa_is_ip4(a) ? ip4_ntop(ipa_to_ip4(a), buf) : ip6_ntop(a, buf);
}

/*
 * Unseeded mixers for tables keyed by our own data; tables keyed by what a
 * peer sends use the seeded hash_bytes() instead. ip4_hash is the
 * "lowbias32" finaliser (also hash_u32() in lib/hash.h, not included here to
 * keep this file free of the pool headers); ip6_hash feeds the two halves
 * through the 64-bit MurmurHash3 finaliser, which is a bijection, so two
 * addresses collide in 64 bits only if they are equal.
 */
static inline u32
mix32(u32 x)
{
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

static inline u64
mix64(u64 x)
{
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

u32
ip4_hash(ip4_addr a)
{
  return mix32(a.addr);
}

u32
ip6_hash(ip6_addr a)
{
  u64 hi = ((u64) a.addr[0] << 32) | a.addr[1];
  u64 lo = ((u64) a.addr[2] << 32) | a.addr[3];
  u64 h = mix64(mix64(hi) ^ lo);
  return (u32) (h ^ (h >> 32));
}
