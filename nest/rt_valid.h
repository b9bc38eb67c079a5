/*
 * DOC: Route origin (ROA) and AS path (ASPA) validation against tables.
 *
 * roa_check and aspa_check of the filter language end here. Both are
 * lookups, never walks: ROA nets are found by prefix for each length from
 * the route's down to 0 (lengths without nets skipped), ASPA records by
 * the customer ASN. They run in whatever loop runs the filter, inside
 * rcu_read_lock() held by the caller, and take no locks.
 *
 * The ASPA algorithm itself (aspa_verify) is separate from the table so
 * that it can be checked against the draft's examples with any provider
 * relation.
 */
#ifndef NEST_RT_VALID_H
#define NEST_RT_VALID_H

#include "nest/rt.h"

/* Values of the filter enums (ROA_UNKNOWN ..., ASPA_UNKNOWN ...). */
enum roa_result { ROA_UNKNOWN = 0, ROA_VALID = 1, ROA_INVALID = 2 };
enum aspa_result { ASPA_UNKNOWN = 0, ASPA_VALID = 1, ASPA_INVALID = 2 };

/*
 * RFC 6811 origin validation of n (ip4/ip6) originated by asn: VALID if a
 * ROA covers n with max length >= n's length and this ASN (asn 0 never
 * matches), INVALID if ROAs cover n but none matches, else UNKNOWN. A
 * table of the other family gives UNKNOWN. Inside rcu_read_lock().
 */
enum roa_result rt_roa_check(struct rtable *t, const net_addr *n, u32 asn);

/* hop(customer, provider) of draft-ietf-sidrops-aspa-verification. */
enum aspa_hop {
  ASPA_HOP_NO_ATTESTATION = 0,  /* the customer has no ASPA record */
  ASPA_HOP_PROVIDER,            /* "Provider+": provider is in the record */
  ASPA_HOP_NOT_PROVIDER,        /* the record exists and does not list it */
};
typedef enum aspa_hop (*aspa_hop_fn)(void *ctx, u32 customer, u32 provider);

/*
 * Verify a path of n ASNs in AS_PATH order (asns[0] the neighbor, the most
 * recently added AS; asns[n - 1] the origin) with prepends already
 * collapsed. upstream: received from a customer or a lateral peer (the
 * whole path must climb); else from a provider (up ramp, at most one
 * lateral hop, down ramp). n == 0 is INVALID.
 */
enum aspa_result aspa_verify(const u32 *asns, uint n, int upstream, aspa_hop_fn hop, void *ctx);

/*
 * Verify an AS_PATH attribute (nest/ea_bgp.h storage format) against an
 * ASPA table: AS_SET segments make it INVALID, confederation segments are
 * skipped (they never leave the confederation, where verification is not
 * done), consecutive duplicates (prepends) collapse. Several routes of one
 * customer (several sources) count as the union of their provider sets.
 * A table of another type gives UNKNOWN. Inside rcu_read_lock().
 */
enum aspa_result rt_aspa_check(struct rtable *t, const u8 *path, uint len, int upstream);

#endif
