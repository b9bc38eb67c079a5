/*
 * DOC: Attribute ids and storage formats shared by BGP and the filters.
 *
 * The BGP codec (proto/bgp/bgp_wire.h) defines the same convention for
 * itself; nest/ and filter/ must not include a protocol's header, so the
 * names here carry their own EAB_ prefix and never collide with it.
 *
 * BGP path attributes live in a route's ea_list as id EA_CODE(EAP_BGP,
 * type code). Payloads are host order:
 *   AS_PATH            EAF_AS_PATH: segments of (u8 type, u8 count, count * u32 ASN)
 *   COMMUNITY          EAF_INT_SET: u32[]
 *   EXT_COMMUNITY      EAF_EC_SET:  u64[]
 *   LARGE_COMMUNITY    EAF_LC_SET:  u32[3n] (global, local1, local2)
 *   NEXT_HOP           EAF_IP:      ip_addr (one; a second one for IPv6 link-local)
 *   MED, LOCAL_PREF, ORIGIN, OTC   EAF_INT
 *   ORIGINATOR_ID      EAF_ROUTER_ID
 *   CLUSTER_LIST       EAF_INT_SET
 *   AGGREGATOR         EAF_OPAQUE: 8 bytes (u32 ASN, u32 router id)
 *   ATOMIC_AGGREGATE   EAF_OPAQUE: empty
 * Generic (protocol-independent) attributes use EAP_GENERIC; user
 * attributes declared in the config (`attribute int foo;`) use EAP_USER.
 */
#ifndef NEST_EA_BGP_H
#define NEST_EA_BGP_H

#include "nest/rt_attr.h"

#define EAP_GENERIC 0
#define EAP_BGP 1
#define EAP_USER 2

/* BGP attribute type codes (RFC 4271 and later). */
#define EAB_ORIGIN 0x01
#define EAB_AS_PATH 0x02
#define EAB_NEXT_HOP 0x03
#define EAB_MULTI_EXIT_DISC 0x04
#define EAB_LOCAL_PREF 0x05
#define EAB_ATOMIC_AGGR 0x06
#define EAB_AGGREGATOR 0x07
#define EAB_COMMUNITY 0x08
#define EAB_ORIGINATOR_ID 0x09
#define EAB_CLUSTER_LIST 0x0a
#define EAB_EXT_COMMUNITY 0x10
#define EAB_AS4_PATH 0x11
#define EAB_AS4_AGGREGATOR 0x12
#define EAB_AIGP 0x1a
#define EAB_LARGE_COMMUNITY 0x20
#define EAB_ONLY_TO_CUSTOMER 0x23

#define EA_BGP(code) EA_CODE(EAP_BGP, code)

/* Generic attributes. */
#define EA_GEN_FROM EA_CODE(EAP_GENERIC, 1)        /* EAF_IP: neighbor that sent the route */
#define EA_GEN_WEIGHT EA_CODE(EAP_GENERIC, 2)      /* EAF_INT */
#define EA_GEN_ONLINK EA_CODE(EAP_GENERIC, 3)      /* EAF_INT (bool) */
/* ASPA record (route in an aspa table): the customer's providers, u32[]
 * ascending; empty for `transit` (AS0: no providers at all). */
#define EA_GEN_ASPA_PROVIDERS EA_CODE(EAP_GENERIC, 4)   /* EAF_INT_SET */

/* AS_PATH segment types. */
#define EAB_AS_SET 1
#define EAB_AS_SEQUENCE 2
#define EAB_AS_CONFED_SEQUENCE 3
#define EAB_AS_CONFED_SET 4

/* ORIGIN values. */
#define EAB_ORIGIN_IGP 0
#define EAB_ORIGIN_EGP 1
#define EAB_ORIGIN_INCOMPLETE 2

#endif
