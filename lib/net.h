/*
 * DOC: Network addresses (prefixes) of every type a table can hold.
 *
 * A net_addr is a small tagged value: type, prefix length, total length,
 * then the type's payload. Concrete layouts (net_addr_ip4, ...) share the
 * header, so code can cast after checking ->type. Tables store a net_addr
 * by value in each network node, sized by ->length.
 */
#ifndef LIB_NET_H
#define LIB_NET_H

#include <stddef.h>
#include "lib/ip.h"

enum net_type {
  NET_INVALID = 0,
  NET_IP4 = 1,
  NET_IP6 = 2,
  NET_ROA4 = 3,
  NET_ROA6 = 4,
  NET_ASPA = 5,               /* keyed by customer ASN (BIRD 3) */
  NET_MAX,
};

#define NB_IP4 (1 << NET_IP4)
#define NB_IP6 (1 << NET_IP6)
#define NB_ROA4 (1 << NET_ROA4)
#define NB_ROA6 (1 << NET_ROA6)
#define NB_ASPA (1 << NET_ASPA)
#define NB_IP (NB_IP4 | NB_IP6)

typedef struct net_addr {
  u8 type;
  u8 pxlen;
  u16 length;
  u8 data[24];
} __attribute__((aligned(4))) net_addr;

typedef struct net_addr_ip4 { u8 type, pxlen; u16 length; ip4_addr prefix; } net_addr_ip4;
typedef struct net_addr_ip6 { u8 type, pxlen; u16 length; ip6_addr prefix; } net_addr_ip6;
typedef struct net_addr_roa4 { u8 type, pxlen; u16 length; ip4_addr prefix; u32 max_pxlen; u32 asn; } net_addr_roa4;
typedef struct net_addr_roa6 { u8 type, pxlen; u16 length; ip6_addr prefix; u32 max_pxlen; u32 asn; } net_addr_roa6;
/* An ASPA record's key: the customer AS. pxlen is always 32, as in BIRD 3. */
typedef struct net_addr_aspa { u8 type, pxlen; u16 length; u32 asn; } net_addr_aspa;

/* Longest text form: an IPv6 ROA "xxxx:...:xxxx/128-128 AS4294967295". */
#define NET_MAX_TEXT_LENGTH 64

extern const char *const net_type_names[NET_MAX];  /* "ipv4", "ipv6", "roa4", "roa6", "aspa" */
extern const u16 net_addr_length[NET_MAX];
extern const u8 net_max_prefix_length[NET_MAX];

void net_fill_ip4(net_addr *a, ip4_addr prefix, uint pxlen);
void net_fill_ip6(net_addr *a, ip6_addr prefix, uint pxlen);
/* ip_addr in either family, picks NET_IP4 for v4-mapped addresses */
void net_fill_ipa(net_addr *a, ip_addr prefix, uint pxlen);
void net_fill_roa4(net_addr *a, ip4_addr prefix, uint pxlen, uint max_pxlen, u32 asn);
void net_fill_roa6(net_addr *a, ip6_addr prefix, uint pxlen, uint max_pxlen, u32 asn);
void net_fill_aspa(net_addr *a, u32 customer_asn);

static inline void net_copy(net_addr *dst, const net_addr *src)
{
  __builtin_memcpy(dst, src, src->length);
}

/* Inline: the table index compares a net or two per update, mostly
 * IPv4 ones (a header and an address: one 8-byte compare). */
static inline int net_equal(const net_addr *a, const net_addr *b)
{
  /* Bytes, not members: a net_addr_ip4 is smaller than a net_addr, and
   * gcc's bounds checks object to reading it as one. */
  const u8 *x = (const u8 *) a, *y = (const u8 *) b;
  u64 hx, hy;
  __builtin_memcpy(&hx, x, 8);
  __builtin_memcpy(&hy, y, 8);
  if (hx != hy)
    return 0;             /* type, length, prefix length or the first 4 bytes */
  u16 len;
  __builtin_memcpy(&len, x + offsetof(net_addr, length), 2);
  return len <= 8 || !__builtin_memcmp(x + 8, y + 8, len - 8);
}
/* Total order: by type, then prefix bits, then length, then the rest. */
int net_compare(const net_addr *a, const net_addr *b);
u32 net_hash(const net_addr *a);

/* The prefix as an ip_addr (v4-mapped for IPv4 types). */
ip_addr net_prefix(const net_addr *a);
static inline uint net_pxlen(const net_addr *a) { return a->pxlen; }
/* Zero the host bits; returns 1 if any were set. */
int net_normalize(net_addr *a);
/* 0 when valid; else a static error text ("Invalid prefix length", "Host bits set"). */
const char *net_validate(const net_addr *a);
/* Does a contain b (same family; b more specific or equal)? */
int net_in_net(const net_addr *b, const net_addr *a);
/* Does one of px[0..count) contain n? */
int net_in_any(const net_addr *n, const net_addr *px, uint count);
/* Does the prefix of a contain address ip (same family)? */
int net_contains_ip(const net_addr *a, ip_addr ip);

/* Parse "10.0.0.0/8", "2001:db8::/32"; for ROA types not supported here.
 * Returns 1 on success. Host bits must be zero. */
int net_pton(const char *s, net_addr *a);
/* Text of the net as BIRD prints it (ROA: "10.0.0.0/8-24 AS65000", ASPA: "65000").
 * Returns end pointer. */
char *net_ntop(const net_addr *a, char *buf);

#endif
