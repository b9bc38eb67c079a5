/*
 * DOC: What BGP reads of an attribute list for every route.
 *
 * The best-path comparison reads LOCAL_PREF, the AS path's length and
 * first AS, ORIGIN and MED of both routes, and every export to every
 * session asks for the list's well-known communities. They are found
 * once, when the list is interned, and kept in its memo (nest/rt_attr.h,
 * ea_register_memo), not looked up in both lists at every comparison.
 * What only iBGP route reflection sets (ORIGINATOR_ID, CLUSTER_LIST) and
 * AIGP is only flagged: comparisons read those from the list, as before.
 * The lookups were the smaller cost: at 2-5 paths a net a comparison
 * mostly waits for the other route's list, which a writer has not
 * touched for a while. So the memo shares the list's first cache line
 * with its preference, and a comparison that ends by the MEDs reads one
 * line of each list; the memo alone, a line away from the preference,
 * saved nothing (doc/perf.md, session 61).
 *
 * Owner: the list's; written before it is published, constant after.
 */
#ifndef PROTO_BGP_BGP_MEMO_H
#define PROTO_BGP_BGP_MEMO_H

#include "proto/bgp/bgp_wire.h"

enum {
  BGP_MEMO_WK = 0xf,             /* bgp_wk_communities() */
  BGP_MEMO_LOCAL_PREF = 0x10,    /* has LOCAL_PREF (local_pref) */
  BGP_MEMO_MED = 0x20,           /* has MULTI_EXIT_DISC (med) */
  BGP_MEMO_AIGP = 0x40,          /* has AIGP */
  BGP_MEMO_ORIGINATOR = 0x80,    /* has ORIGINATOR_ID */
  BGP_MEMO_CLUSTER = 0x100,      /* has CLUSTER_LIST */
  BGP_MEMO_ORIGIN_ODD = 0x200,   /* ORIGIN above 2 (no filter sets one): read the list */
  BGP_MEMO_ORIGIN_SHIFT = 10,    /* 2 bits: ORIGIN, ORIGIN_INCOMPLETE when missing */
  BGP_MEMO_UNREACHABLE = 0x1000, /* dest is RTD_UNREACHABLE: the next hop did not resolve */
  BGP_MEMO_SET = 0x2000,         /* the list's memo was made (else: see bgp_memo()) */
};

struct bgp_memo {
  u16 bits;                     /* BGP_MEMO_* */
  u16 path_len;                 /* bgp_as_path_length(), 0 without a path */
  u32 local_pref, med;          /* 0 when missing */
  u32 first_as;                 /* bgp_as_path_first_as(), 0 without a path */
};

static inline uint bgp_memo_origin(const struct bgp_memo *m) { return (m->bits >> BGP_MEMO_ORIGIN_SHIFT) & 3; }

/* Make the memo of every new list (bgp_build). */
void bgp_memo_init(void);
/* a's memo; one made into tmp for a list interned before bgp_memo_init()
 * (unit tests that build lists of their own). */
const struct bgp_memo *bgp_memo_slow(const struct ea_list *a, struct bgp_memo *tmp);
static inline const struct bgp_memo *
bgp_memo(const struct ea_list *a, struct bgp_memo *tmp)
{
  const struct bgp_memo *m = (const struct bgp_memo *) a->memo;
  return (m->bits & BGP_MEMO_SET) ? m : bgp_memo_slow(a, tmp);
}

#endif
