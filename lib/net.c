/*
 * DOC: Network addresses (prefixes): fill, compare, hash, parse, print.
 *
 * A net_addr is compared and hashed as raw bytes over its ->length, so the
 * fill functions write every byte up to that length (the concrete layouts
 * have no padding) and never touch bytes beyond it: callers may fill a
 * net_addr_ip4 cast to net_addr, which is smaller than the generic struct.
 * Equality and hashing therefore agree by construction; ordering is by
 * field so that it follows address order, not memory layout.
 *
 * No state, no allocation; safe from any thread.
 */

#include "lib/net.h"

#include <string.h>

const char *const net_type_names[NET_MAX] = {
  [NET_IP4] = "ipv4",
  [NET_IP6] = "ipv6",
  [NET_ROA4] = "roa4",
  [NET_ROA6] = "roa6",
  [NET_ASPA] = "aspa",
};

const u16 net_addr_length[NET_MAX] = {
  [NET_IP4] = sizeof(net_addr_ip4),
  [NET_IP6] = sizeof(net_addr_ip6),
  [NET_ROA4] = sizeof(net_addr_roa4),
  [NET_ROA6] = sizeof(net_addr_roa6),
  [NET_ASPA] = sizeof(net_addr_aspa),
};

const u8 net_max_prefix_length[NET_MAX] = {
  [NET_IP4] = IP4_MAX_PREFIX_LENGTH,
  [NET_IP6] = IP6_MAX_PREFIX_LENGTH,
  [NET_ROA4] = IP4_MAX_PREFIX_LENGTH,
  [NET_ROA6] = IP6_MAX_PREFIX_LENGTH,
  [NET_ASPA] = 32,
};

_Static_assert(sizeof(net_addr_roa6) <= sizeof(net_addr), "net_addr too small for roa6");
_Static_assert(sizeof(net_addr_ip4) == 8 && sizeof(net_addr_ip6) == 20 &&
               sizeof(net_addr_roa4) == 16 && sizeof(net_addr_roa6) == 28 &&
               sizeof(net_addr_aspa) == 8,
               "net_addr layouts must have no padding: equality is memcmp");

/* pxlen is a u8 in the struct: saturate rather than wrap, so that 256 does
 * not turn into a valid-looking 0 and net_validate() still catches it. */
static inline u8
pxlen_u8(uint pxlen)
{
  return pxlen > 255 ? 255 : pxlen;
}

void
net_fill_ip4(net_addr *a, ip4_addr prefix, uint pxlen)
{
  net_addr_ip4 n = { NET_IP4, pxlen_u8(pxlen), sizeof(n), prefix };
  memcpy(a, &n, sizeof(n));
}

void
net_fill_ip6(net_addr *a, ip6_addr prefix, uint pxlen)
{
  net_addr_ip6 n = { NET_IP6, pxlen_u8(pxlen), sizeof(n), prefix };
  memcpy(a, &n, sizeof(n));
}

void
net_fill_ipa(net_addr *a, ip_addr prefix, uint pxlen)
{
  if (ipa_is_ip4(prefix))
    net_fill_ip4(a, ipa_to_ip4(prefix), pxlen);
  else
    net_fill_ip6(a, ipa_to_ip6(prefix), pxlen);
}

void
net_fill_roa4(net_addr *a, ip4_addr prefix, uint pxlen, uint max_pxlen, u32 asn)
{
  net_addr_roa4 n = { NET_ROA4, pxlen_u8(pxlen), sizeof(n), prefix, max_pxlen, asn };
  memcpy(a, &n, sizeof(n));
}

void
net_fill_roa6(net_addr *a, ip6_addr prefix, uint pxlen, uint max_pxlen, u32 asn)
{
  net_addr_roa6 n = { NET_ROA6, pxlen_u8(pxlen), sizeof(n), prefix, max_pxlen, asn };
  memcpy(a, &n, sizeof(n));
}

void
net_fill_aspa(net_addr *a, u32 customer_asn)
{
  net_addr_aspa n = { NET_ASPA, 32, sizeof(n), customer_asn };
  memcpy(a, &n, sizeof(n));
}


static inline int
cmp_uint(uint a, uint b)
{
  return (a > b) - (a < b);
}

int
net_compare(const net_addr *a, const net_addr *b)
{
  if (a->type != b->type)
    return cmp_uint(a->type, b->type);

  int r;
  switch (a->type)
  {
  case NET_IP4:
  case NET_ROA4:
    r = ip4_compare(((const net_addr_ip4 *) a)->prefix, ((const net_addr_ip4 *) b)->prefix);
    break;
  case NET_IP6:
  case NET_ROA6:
    r = ip6_compare(((const net_addr_ip6 *) a)->prefix, ((const net_addr_ip6 *) b)->prefix);
    break;
  case NET_ASPA:
    return cmp_uint(((const net_addr_aspa *) a)->asn, ((const net_addr_aspa *) b)->asn);
  default:
    /* Not a real net; any total order consistent with net_equal will do. */
    if (a->length != b->length)
      return cmp_uint(a->length, b->length);
    r = memcmp(a, b, a->length);
    return (r > 0) - (r < 0);
  }
  if (r || (r = cmp_uint(a->pxlen, b->pxlen)))
    return r;

  if (a->type == NET_ROA4)
  {
    const net_addr_roa4 *x = (const void *) a, *y = (const void *) b;
    if ((r = cmp_uint(x->max_pxlen, y->max_pxlen)))
      return r;
    return cmp_uint(x->asn, y->asn);
  }
  if (a->type == NET_ROA6)
  {
    const net_addr_roa6 *x = (const void *) a, *y = (const void *) b;
    if ((r = cmp_uint(x->max_pxlen, y->max_pxlen)))
      return r;
    return cmp_uint(x->asn, y->asn);
  }
  return 0;
}

/*
 * Hashes exactly the bytes net_equal() compares, so equal nets hash equal
 * whatever their type. Lengths of real nets are multiples of four; a stray
 * tail is folded in byte by byte anyway. Not seeded: tables that hold nets
 * a peer chooses mix in their own seed.
 */
u32
net_hash(const net_addr *a)
{
  const u8 *p = (const u8 *) a;
  uint len = a->length;
  u32 h = 0x811c9dc5U;
  uint i = 0;

  for (; i + 4 <= len; i += 4)
  {
    u32 w;
    memcpy(&w, p + i, 4);
    h = (h ^ w) * 0x9e3779b1U;
    h = (h << 13) | (h >> 19);
  }
  for (; i < len; i++)
    h = (h ^ p[i]) * 0x01000193U;

  h ^= h >> 16;
  h *= 0x7feb352dU;
  h ^= h >> 15;
  h *= 0x846ca68bU;
  h ^= h >> 16;
  return h;
}

static inline int
net_is_v4(const net_addr *a)
{
  return a->type == NET_IP4 || a->type == NET_ROA4;
}

static inline int
net_is_v6(const net_addr *a)
{
  return a->type == NET_IP6 || a->type == NET_ROA6;
}

/* The ROA layouts start like the IP ones, so one cast serves both. */
static inline ip4_addr *
net4_prefix(net_addr *a)
{
  return &((net_addr_ip4 *) a)->prefix;
}

static inline ip6_addr *
net6_prefix(net_addr *a)
{
  return &((net_addr_ip6 *) a)->prefix;
}

ip_addr
net_prefix(const net_addr *a)
{
  if (net_is_v4(a))
    return ipa_from_ip4(((const net_addr_ip4 *) a)->prefix);
  if (net_is_v6(a))
    return ipa_from_ip6(((const net_addr_ip6 *) a)->prefix);
  return IPA_NONE;
}

/* The prefix with host bits cleared, in net_prefix() form. */
static ip_addr
net_prefix_masked(const net_addr *a)
{
  if (net_is_v4(a))
    return ipa_from_ip4(ip4_and(((const net_addr_ip4 *) a)->prefix, ip4_mkmask(a->pxlen)));
  if (net_is_v6(a))
    return ip6_and(((const net_addr_ip6 *) a)->prefix, ip6_mkmask(a->pxlen));
  return IPA_NONE;
}

int
net_normalize(net_addr *a)
{
  if (net_is_v4(a))
  {
    ip4_addr *p = net4_prefix(a);
    ip4_addr m = ip4_and(*p, ip4_mkmask(a->pxlen));
    int changed = !ip4_equal(m, *p);
    *p = m;
    return changed;
  }
  if (net_is_v6(a))
  {
    ip6_addr *p = net6_prefix(a);
    ip6_addr m = ip6_and(*p, ip6_mkmask(a->pxlen));
    int changed = !ip6_equal(m, *p);
    *p = m;
    return changed;
  }
  return 0;
}

const char *
net_validate(const net_addr *a)
{
  if (a->type <= NET_INVALID || a->type >= NET_MAX || a->length != net_addr_length[a->type])
    return "Invalid network type";

  uint max = net_max_prefix_length[a->type];
  if (a->pxlen > max)
    return "Invalid prefix length";

  if (!ipa_equal(net_prefix(a), net_prefix_masked(a)))
    return "Host bits set";

  uint max_pxlen = a->pxlen;
  if (a->type == NET_ROA4)
    max_pxlen = ((const net_addr_roa4 *) a)->max_pxlen;
  else if (a->type == NET_ROA6)
    max_pxlen = ((const net_addr_roa6 *) a)->max_pxlen;
  if (max_pxlen < a->pxlen || max_pxlen > max)
    return "Invalid max prefix length";

  return 0;
}

/* Both sides are masked to a's length, so an unnormalised a still works. */
int
net_in_net(const net_addr *b, const net_addr *a)
{
  if (a->pxlen > b->pxlen)
    return 0;

  if (net_is_v4(a) && net_is_v4(b))
  {
    ip4_addr m = ip4_mkmask(a->pxlen);
    return ip4_equal(ip4_and(((const net_addr_ip4 *) a)->prefix, m),
                     ip4_and(((const net_addr_ip4 *) b)->prefix, m));
  }
  if (net_is_v6(a) && net_is_v6(b))
  {
    ip6_addr m = ip6_mkmask(a->pxlen);
    return ip6_equal(ip6_and(((const net_addr_ip6 *) a)->prefix, m),
                     ip6_and(((const net_addr_ip6 *) b)->prefix, m));
  }
  return 0;
}

int
net_in_any(const net_addr *n, const net_addr *px, uint count)
{
  for (uint i = 0; i < count; i++)
    if (net_in_net(n, &px[i]))
      return 1;
  return 0;
}

/* A v4-mapped ip is an IPv4 address, never inside an IPv6 net: ip_addr
 * carries the family in the mapping. */
int
net_contains_ip(const net_addr *a, ip_addr ip)
{
  if (net_is_v4(a))
  {
    if (!ipa_is_ip4(ip))
      return 0;
    ip4_addr m = ip4_mkmask(a->pxlen);
    return ip4_equal(ip4_and(((const net_addr_ip4 *) a)->prefix, m),
                     ip4_and(ipa_to_ip4(ip), m));
  }
  if (net_is_v6(a))
  {
    if (ipa_is_ip4(ip))
      return 0;
    ip6_addr m = ip6_mkmask(a->pxlen);
    return ip6_equal(ip6_and(((const net_addr_ip6 *) a)->prefix, m),
                     ip6_and(ipa_to_ip6(ip), m));
  }
  return 0;
}

/* Decimal prefix length: one to three digits, no sign, no junk. */
static int
pxlen_pton(const char *s, uint *len)
{
  uint v = 0, digits = 0;
  for (; *s >= '0' && *s <= '9'; s++)
  {
    if (++digits > 3)
      return 0;
    v = v * 10 + (uint) (*s - '0');
  }
  if (!digits || *s)
    return 0;
  *len = v;
  return 1;
}

int
net_pton(const char *s, net_addr *a)
{
  /* Longest address text: six IPv6 groups and a dotted quad. */
  char addr[48];
  const char *slash = strchr(s, '/');
  uint pxlen;

  if (!slash || (size_t) (slash - s) >= sizeof(addr) || !pxlen_pton(slash + 1, &pxlen))
    return 0;
  memcpy(addr, s, slash - s);
  addr[slash - s] = 0;

  net_addr n;
  ip4_addr v4;
  ip6_addr v6;
  if (ip4_pton(addr, &v4))
  {
    if (pxlen > IP4_MAX_PREFIX_LENGTH)
      return 0;
    net_fill_ip4(&n, v4, pxlen);
  }
  else if (ip6_pton(addr, &v6))
  {
    if (pxlen > IP6_MAX_PREFIX_LENGTH)
      return 0;
    net_fill_ip6(&n, v6, pxlen);
  }
  else
    return 0;

  if (net_validate(&n))
    return 0;
  net_copy(a, &n);
  return 1;
}

static char *
put_dec(char *p, u32 v)
{
  char tmp[10];
  int n = 0;
  do
    tmp[n++] = '0' + v % 10;
  while (v /= 10);
  while (n)
    *p++ = tmp[--n];
  *p = 0;
  return p;
}

char *
net_ntop(const net_addr *a, char *buf)
{
  char *p;
  u32 max_pxlen, asn;

  switch (a->type)
  {
  case NET_IP4:
  case NET_ROA4:
    p = ip4_ntop(((const net_addr_ip4 *) a)->prefix, buf);
    break;
  case NET_IP6:
  case NET_ROA6:
    p = ip6_ntop(((const net_addr_ip6 *) a)->prefix, buf);
    break;
  case NET_ASPA:
    return put_dec(buf, ((const net_addr_aspa *) a)->asn);
  default:
    strcpy(buf, "???");
    return buf + 3;
  }

  *p++ = '/';
  p = put_dec(p, a->pxlen);

  if (a->type == NET_ROA4)
  {
    max_pxlen = ((const net_addr_roa4 *) a)->max_pxlen;
    asn = ((const net_addr_roa4 *) a)->asn;
  }
  else if (a->type == NET_ROA6)
  {
    max_pxlen = ((const net_addr_roa6 *) a)->max_pxlen;
    asn = ((const net_addr_roa6 *) a)->asn;
  }
  else
    return p;

  /* Only a corrupt ROA has max_pxlen over 255 (RTR carries a u8); capping
   * it keeps the text within NET_MAX_TEXT_LENGTH whatever the input. */
  *p++ = '-';
  p = put_dec(p, MIN(max_pxlen, 255));
  memcpy(p, " AS", 3);
  return put_dec(p + 3, asn);
}
