/*
 * DOC: Route processing rules of a BGP session, as pure functions.
 *
 * What a session does to routes beyond the wire codec, in BIRD 2's order:
 * on import, loop detection (AS_PATH with `allow local as`, ORIGINATOR_ID
 * and CLUSTER_LIST of RFC 4456 8), `enforce first as`, the leading
 * AS_CONFED_SEQUENCE of confederation members (RFC 5065 5) and the RFC 9234
 * OTC ingress procedure; on export, the well-known communities, the iBGP
 * split horizon with route reflection (RFC 4456), the OTC egress procedure,
 * and the attributes the peer gets (AS_PATH prepend or confederation
 * handling of RFC 5065, MED, LOCAL_PREF, ORIGINATOR_ID, CLUSTER_LIST, OTC).
 *
 * The functions read only session identities (struct bgp_peer_info) and
 * attributes, so the unit tests drive them directly (bgp_rules_test.c);
 * bgp_rx.c and bgp_tx.c apply them once per UPDATE or per attribute set.
 */
#ifndef PROTO_BGP_BGP_RULES_H
#define PROTO_BGP_BGP_RULES_H

#include "proto/bgp/bgp_wire.h"

/*
 * One session as the rules and the best-path comparison see it.
 * Owner: the main loop makes one for each run of the protocol
 * (bgp_run_info()), and nothing changes it after but the instance loop,
 * atomically, when the session comes up (remote_id, remote_as). Other
 * loops read it through the run's routes, whose sources hold it (best
 * path, export of the session's routes), so a restart with other
 * settings leaves the last run's routes their own. A configuration change
 * of any field here restarts the protocol (bgp_reconfigure()).
 */
struct bgp_peer_info {
  u64 gen;                      /* unique per protocol start: export cache key */
  u32 remote_id;                /* the peer's BGP identifier */
  ip_addr remote_ip;
  u32 remote_as, local_as;
  u32 public_as;                /* local_as, or the confederation ASN toward true eBGP */
  u32 confederation;            /* confederation ASN, 0 without one */
  u32 local_id;                 /* our router id */
  u32 rr_cluster_id;            /* RR client sessions: our cluster id; 0 otherwise (as BIRD) */
  u32 default_local_pref;
  int allow_local_as;           /* -1: any number of our ASN, N: up to N times */
  u8 local_role;                /* enum bgp_role, BGP_ROLE_NONE without one */
  bool ibgp;                    /* same AS (BIRD's is_internal) */
  bool interior;                /* iBGP or confederation member (BIRD's is_interior) */
  bool rs_client, rr_client;
  bool enforce_first_as;
  bool interpret_communities;
  /* The best-path options (bgp_rte_better, bgp_rte_group): copied here
   * because copies of the session's routes in other tables are compared
   * after configure has released the session's config. */
  u32 default_med;
  bool path_metric, med_metric, igp_metric, prefer_older, deterministic_med;
};

enum bgp_rx_verdict {
  BGP_RX_ACCEPT = 0,
  BGP_RX_LOOP,                  /* our ASN, router id or cluster id: withdraw silently */
  BGP_RX_FIRST_AS,              /* first AS is not the neighbor's: withdraw */
  BGP_RX_LEAK,                  /* RFC 9234 route leak: withdraw */
};

/* Check the received attributes in b (before interning) for session p;
 * on accept the OTC ingress procedure may have added OTC to b. */
enum bgp_rx_verdict bgp_rules_import(const struct bgp_peer_info *p, struct ea_builder *b);

/* The well-known communities the export rules test: this runs for every
 * route and every session, so they are found once, in the list's memo
 * (bgp_memo.c). */
enum {
  BGP_WK_NO_EXPORT = 1,
  BGP_WK_NO_ADVERTISE = 2,
  BGP_WK_NO_EXPORT_SUBCONFED = 4,
  BGP_WK_LLGR_STALE = 8,
};
uint bgp_wk_communities(const struct ea_list *a);

/* Would session p send a route with attributes a learned from session src?
 * wk: bgp_wk_communities(a). Runs before the export filter (a is the
 * route's own); routes not from BGP (src NULL) always pass, as in BIRD 2. */
bool bgp_rules_export_ok(const struct bgp_peer_info *p, const struct bgp_peer_info *src, const struct ea_list *a,
                         uint wk);

/* Turn b (started from a, non-BGP attributes cleared) into what session p
 * sends, all but NEXT_HOP. Payloads come from lp and must live until
 * ea_intern(). */
void bgp_rules_export_attrs(const struct bgp_peer_info *p, const struct bgp_peer_info *src, const struct ea_list *a,
                            int med_fresh, struct ea_builder *b, linpool *lp);
/* Did the export filter set the MED? Its output a against the route's own
 * attributes src (BIRD's "fresh" attribute; a value set equal to the
 * learned one does not count). */
int bgp_med_fresh(const struct ea_list *a, const struct ea_list *src);

#endif
