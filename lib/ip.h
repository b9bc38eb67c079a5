/*
 * DOC: IPv4 and IPv6 addresses.
 *
 * Addresses are kept in host byte order so comparison and masking are plain
 * integer operations; conversion to network order happens only at the wire
 * (ip4_hton, ip6_hton and friends). A generic ip_addr is an IPv6 address;
 * IPv4 lives in it as the v4-mapped ::ffff:a.b.c.d, so one type serves
 * next hops, router IDs and CLI arguments of either family.
 */
#ifndef LIB_IP_H
#define LIB_IP_H

#include "lib/birdlib.h"

typedef struct ip4_addr { u32 addr; } ip4_addr;
typedef struct ip6_addr { u32 addr[4]; } ip6_addr;
typedef ip6_addr ip_addr;

#define IP4_MAX_PREFIX_LENGTH 32
#define IP6_MAX_PREFIX_LENGTH 128
#define IP4_MAX_TEXT_LENGTH 15  /* "255.255.255.255" */
#define IP6_MAX_TEXT_LENGTH 39
#define IPA_MAX_TEXT_LENGTH 39

static inline ip4_addr ip4_from_u32(u32 a) { return (ip4_addr){ a }; }
static inline u32 ip4_to_u32(ip4_addr a) { return a.addr; }
static inline ip6_addr ip6_build(u32 a, u32 b, u32 c, u32 d) { return (ip6_addr){ { a, b, c, d } }; }

#define IP4_NONE ((ip4_addr){ 0 })
#define IP6_NONE ((ip6_addr){ { 0, 0, 0, 0 } })
#define IPA_NONE IP6_NONE

static inline int ip4_equal(ip4_addr a, ip4_addr b) { return a.addr == b.addr; }
static inline int ip6_equal(ip6_addr a, ip6_addr b)
{ return a.addr[0] == b.addr[0] && a.addr[1] == b.addr[1] && a.addr[2] == b.addr[2] && a.addr[3] == b.addr[3]; }
#define ipa_equal ip6_equal
static inline int ip4_zero(ip4_addr a) { return a.addr == 0; }
static inline int ip6_zero(ip6_addr a) { return !a.addr[0] && !a.addr[1] && !a.addr[2] && !a.addr[3]; }
#define ipa_zero ip6_zero
static inline int ipa_nonzero(ip_addr a) { return !ipa_zero(a); }

/* v4-mapped embedding */
static inline int ipa_is_ip4(ip_addr a) { return !a.addr[0] && !a.addr[1] && a.addr[2] == 0xffff; }
static inline ip_addr ipa_from_ip4(ip4_addr a) { return ip6_build(0, 0, 0xffff, a.addr); }
static inline ip_addr ipa_from_ip6(ip6_addr a) { return a; }
static inline ip4_addr ipa_to_ip4(ip_addr a) { return ip4_from_u32(a.addr[3]); }
static inline ip6_addr ipa_to_ip6(ip_addr a) { return a; }

int ip4_compare(ip4_addr a, ip4_addr b);
int ip6_compare(ip6_addr a, ip6_addr b);
#define ipa_compare ip6_compare

ip4_addr ip4_mkmask(uint pxlen);
ip6_addr ip6_mkmask(uint pxlen);
/* Length of a contiguous mask, or -1 if the mask has holes. */
int ip4_masklen(ip4_addr mask);
int ip6_masklen(ip6_addr *mask);
ip4_addr ip4_and(ip4_addr a, ip4_addr b);
ip6_addr ip6_and(ip6_addr a, ip6_addr b);
ip4_addr ip4_not(ip4_addr a);
ip6_addr ip6_not(ip6_addr a);
/* Bit at position pos counted from the most significant bit (0-based). */
uint ip4_getbit(ip4_addr a, uint pos);
uint ip6_getbit(ip6_addr a, uint pos);
/* Length of the common prefix of two addresses. */
uint ip4_pxlen(ip4_addr a, ip4_addr b);
uint ip6_pxlen(ip6_addr a, ip6_addr b);

/* Byte order for the wire. */
ip4_addr ip4_hton(ip4_addr a);
ip4_addr ip4_ntoh(ip4_addr a);
ip6_addr ip6_hton(ip6_addr a);
ip6_addr ip6_ntoh(ip6_addr a);
void ip4_put(u8 *buf, ip4_addr a);     /* 4 bytes, network order */
ip4_addr ip4_get(const u8 *buf);
void ip6_put(u8 *buf, ip6_addr a);     /* 16 bytes, network order */
ip6_addr ip6_get(const u8 *buf);

/* Scope/class of an address, for interface and neighbor logic. */
enum ip_scope { SCOPE_HOST = 0, SCOPE_LINK = 1, SCOPE_SITE = 2, SCOPE_ORGANIZATION = 3, SCOPE_UNIVERSE = 4, SCOPE_UNDEFINED = 255 };
int ip4_is_link_local(ip4_addr a);
int ip6_is_link_local(ip6_addr a);
int ipa_is_link_local(ip_addr a);

/* Text conversion. *_pton return 1 on success, 0 on malformed input; they
 * accept exactly the whole string. *_ntop write a NUL-terminated string and
 * return a pointer to its end. */
int ip4_pton(const char *s, ip4_addr *a);
int ip6_pton(const char *s, ip6_addr *a);
/* Either family; an IPv4 address comes back v4-mapped. */
int ipa_pton(const char *s, ip_addr *a);
char *ip4_ntop(ip4_addr a, char *buf);
char *ip6_ntop(ip6_addr a, char *buf);
/* Prints a v4-mapped address as IPv4. */
char *ipa_ntop(ip_addr a, char *buf);

u32 ip4_hash(ip4_addr a);
u32 ip6_hash(ip6_addr a);
#define ipa_hash ip6_hash

#endif
