/*
 * DOC: The memo of an attribute list: what BGP reads of it for every route
 * (proto/bgp/bgp_memo.h), found once when the list is interned.
 */
#include <string.h>
#include "proto/bgp/bgp_memo.h"
#include "proto/bgp/bgp_rules.h"

_Static_assert(sizeof(struct bgp_memo) <= EA_MEMO_SIZE, "struct bgp_memo outgrew the list's memo");

/* The well-known communities the export rules test, in one pass over the
 * COMMUNITIES (hundreds at an IXP). */
static uint
bgp_memo_wk(const struct ea_list *a)
{
  const struct eattr *e = ea_find(a, BGP_EA(BA_COMMUNITY));
  if (!e)
    return 0;
  const u8 *d = ea_data(a, e);
  uint wk = 0;
  for (uint i = 0; i + 4 <= e->len; i += 4) {
    u32 v = bgp_get_host32(d + i);
    if (v < BGP_COMM_GRACEFUL_SHUTDOWN)
      continue;               /* not well-known: most of them */
    wk |= v == BGP_COMM_NO_EXPORT ? BGP_WK_NO_EXPORT :
          v == BGP_COMM_NO_ADVERTISE ? BGP_WK_NO_ADVERTISE :
          v == BGP_COMM_NO_EXPORT_SUBCONFED ? BGP_WK_NO_EXPORT_SUBCONFED :
          v == BGP_COMM_LLGR_STALE ? BGP_WK_LLGR_STALE : 0;
  }
  return wk;
}

static void
bgp_memo_make(const struct ea_list *a, struct bgp_memo *m)
{
  memset(m, 0, sizeof(*m));
  uint bits = BGP_MEMO_SET | bgp_memo_wk(a) | (a->dest == RTD_UNREACHABLE ? BGP_MEMO_UNREACHABLE : 0);
  const struct eattr *e;
  if ((e = ea_find(a, BGP_EA(BA_LOCAL_PREF)))) {
    bits |= BGP_MEMO_LOCAL_PREF;
    m->local_pref = e->val;
  }
  if ((e = ea_find(a, BGP_EA(BA_MULTI_EXIT_DISC)))) {
    bits |= BGP_MEMO_MED;
    m->med = e->val;
  }
  if (ea_find(a, BGP_EA(BA_AIGP)))
    bits |= BGP_MEMO_AIGP;
  if (ea_find(a, BGP_EA(BA_ORIGINATOR_ID)))
    bits |= BGP_MEMO_ORIGINATOR;
  if (ea_find(a, BGP_EA(BA_CLUSTER_LIST)))
    bits |= BGP_MEMO_CLUSTER;
  e = ea_find(a, BGP_EA(BA_ORIGIN));
  u32 origin = e ? e->val : ORIGIN_INCOMPLETE;
  if (origin > ORIGIN_INCOMPLETE)
    bits |= BGP_MEMO_ORIGIN_ODD;
  else
    bits |= origin << BGP_MEMO_ORIGIN_SHIFT;
  if ((e = ea_find(a, BGP_EA(BA_AS_PATH)))) {
    const u8 *p = ea_data(a, e);
    /* an attribute of at most 64 KiB holds fewer than 16,384 ASNs */
    m->path_len = (u16) bgp_as_path_length(p, e->len);
    m->first_as = bgp_as_path_first_as(p, e->len);
  }
  m->bits = (u16) bits;
}

static void
bgp_memo_fill(const struct ea_list *a, u8 *memo)
{
  struct bgp_memo m;
  bgp_memo_make(a, &m);
  memcpy(memo, &m, sizeof(m));
}

void
bgp_memo_init(void)
{
  ea_register_memo(bgp_memo_fill);
}

const struct bgp_memo *
bgp_memo_slow(const struct ea_list *a, struct bgp_memo *tmp)
{
  bgp_memo_make(a, tmp);
  return tmp;
}

uint
bgp_wk_communities(const struct ea_list *a)
{
  struct bgp_memo tmp;
  return bgp_memo(a, &tmp)->bits & BGP_MEMO_WK;
}
