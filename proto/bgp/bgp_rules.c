/*
 * DOC: Route processing rules of a BGP session (see bgp_rules.h).
 *
 * The names follow BIRD: a session is internal (same AS), interior
 * (internal or a confederation member) or external. Drops are treat-as-
 * withdraw on import and "not exported" on export, never errors: a loop or
 * a leak says nothing about the health of the session.
 */
#include <string.h>
#include "proto/bgp/bgp_rules.h"

/* The builder's eattr with id, or NULL; *data gets its payload. */
static const struct eattr *
bld_find(const struct ea_builder *b, u16 id, const void **data)
{
  for (uint i = 0; i < b->count; i++)
    if (b->a[i].id == id) {
      if (data)
        *data = b->payload[i];
      return &b->a[i];
    }
  return NULL;
}

static bool
u32_set_contains(const void *d, uint len, u32 v)
{
  for (uint i = 0; i + 4 <= len; i += 4)
    if (bgp_get_host32((const u8 *) d + i) == v)
      return true;
  return false;
}

/* --- Import --- */

static bool
rules_as_loop(const struct bgp_peer_info *p, const u8 *path, uint len)
{
  if (p->allow_local_as < 0)
    return false;
  uint max = (uint) p->allow_local_as;
  if (bgp_as_path_count(path, len, p->local_as) > max)
    return true;
  /* RFC 5065 4: toward true eBGP peers our ASN is the confederation's */
  return p->public_as != p->local_as && bgp_as_path_count(path, len, p->public_as) > max;
}

/* RFC 9234 5: routes from below must not carry OTC, routes from a peer only
 * the peer's own; routes from above get it. */
static enum bgp_rx_verdict
rules_otc_ingress(const struct bgp_peer_info *p, struct ea_builder *b)
{
  const struct eattr *otc = bld_find(b, BGP_EA(BA_OTC), NULL);
  switch (p->local_role) {
  case BGP_ROLE_PROVIDER:
  case BGP_ROLE_RS:
    return otc ? BGP_RX_LEAK : BGP_RX_ACCEPT;
  case BGP_ROLE_PEER:
    if (otc && otc->val != p->remote_as)
      return BGP_RX_LEAK;
    break;
  case BGP_ROLE_CUSTOMER:
  case BGP_ROLE_RS_CLIENT:
    break;
  default:
    return BGP_RX_ACCEPT;
  }
  if (!otc)
    ea_set_int(b, BGP_EA(BA_OTC), EAF_INT, BAF_OPTIONAL | BAF_TRANSITIVE, p->remote_as);
  return BGP_RX_ACCEPT;
}

enum bgp_rx_verdict
bgp_rules_import(const struct bgp_peer_info *p, struct ea_builder *b)
{
  const void *d = NULL;
  const struct eattr *e = bld_find(b, BGP_EA(BA_AS_PATH), &d);
  if (e) {
    const u8 *path = d ? d : (const u8 *) "";
    /* RFC 5065 5: a member's routes start with its AS_CONFED_SEQUENCE */
    if (p->interior && !p->ibgp && (e->len < 2 || path[0] != AS_PATH_CONFED_SEQUENCE))
      return BGP_RX_FIRST_AS;
    /* RFC 4271 6.3, optional (BIRD: `enforce first as`, default off) */
    if (!p->ibgp && p->enforce_first_as && bgp_as_path_first_hop(path, e->len) != p->remote_as)
      return BGP_RX_FIRST_AS;
    if (rules_as_loop(p, path, e->len))
      return BGP_RX_LOOP;
  }
  /* RFC 4456 8 */
  e = bld_find(b, BGP_EA(BA_ORIGINATOR_ID), NULL);
  if (p->ibgp && e && e->val == p->local_id)
    return BGP_RX_LOOP;
  e = bld_find(b, BGP_EA(BA_CLUSTER_LIST), &d);
  if (p->rr_client && e && u32_set_contains(d, e->len, p->rr_cluster_id))
    return BGP_RX_LOOP;
  return rules_otc_ingress(p, b);
}

/* --- Export --- */

/* Both ends iBGP in the same AS: route reflection territory. */
static inline bool
rules_ibgp_to_ibgp(const struct bgp_peer_info *p, const struct bgp_peer_info *src)
{
  return src && src->ibgp && p->ibgp && src->local_as == p->local_as;
}

bool
bgp_rules_export_ok(const struct bgp_peer_info *p, const struct bgp_peer_info *src, const struct ea_list *a,
                    uint wk)
{
  /* BIRD 2 accepts routes of other protocols here: their communities and
   * OTC are what the operator's export filter made them. */
  if (!src)
    return true;
  /* RFC 1997, RFC 5065 (NO_EXPORT_SUBCONFED stays in the member AS) */
  if (p->interpret_communities &&
      ((wk & BGP_WK_NO_ADVERTISE) || (!p->ibgp && (wk & BGP_WK_NO_EXPORT_SUBCONFED)) ||
       (!p->interior && (wk & BGP_WK_NO_EXPORT))))
    return false;

  /* RFC 4456: iBGP routes go to iBGP peers only through a reflector, from
   * a client to everyone, from a non-client to clients only. */
  if (rules_ibgp_to_ibgp(p, src)) {
    if (!p->rr_client && !src->rr_client)
      return false;
    /* Normally dropped on receipt already; the source may have another
     * cluster id (or none) */
    const struct eattr *cl = ea_find(a, BGP_EA(BA_CLUSTER_LIST));
    if (p->rr_client && cl && u32_set_contains(ea_data(a, cl), cl->len, p->rr_cluster_id))
      return false;
  }

  /* RFC 9234 5: a route marked OTC goes only down, to customers */
  if ((p->local_role == BGP_ROLE_CUSTOMER || p->local_role == BGP_ROLE_PEER || p->local_role == BGP_ROLE_RS_CLIENT) &&
      ea_find(a, BGP_EA(BA_OTC)))
    return false;
  return true;
}

static void
rules_export_as_path(const struct bgp_peer_info *p, const struct ea_list *a, struct ea_builder *b, linpool *lp)
{
  const struct eattr *e = ea_find(a, BGP_EA(BA_AS_PATH));
  const u8 *path = e ? ea_data(a, e) : (const u8 *) "";   /* never NULL: memcpy of 0 bytes */
  uint len = e ? e->len : 0;
  bool changed = !e;

  /* RFC 5065 4.1: confederation segments never leave the confederation */
  if ((!p->confederation || !p->interior) && bgp_as_path_has_confed(path, len)) {
    path = bgp_as_path_strip_confed(lp, path, len, &len);
    changed = true;
  }
  if (p->ibgp || p->rs_client)
    ;                                     /* as it is (RFC 7947 for route servers) */
  else if (p->interior) {
    path = bgp_as_path_prepend_confed(lp, path, len, p->local_as, &len);
    changed = true;
  } else {
    path = bgp_as_path_prepend(lp, path, len, p->public_as, 1, &len);
    changed = true;
  }
  if (changed)
    ea_set_data(b, BGP_EA(BA_AS_PATH), EAF_AS_PATH, BAF_TRANSITIVE, path, len);
}

/* RFC 4456 8: ORIGINATOR_ID once, then the cluster ids of the reflection. */
static void
rules_export_reflect(const struct bgp_peer_info *p, const struct bgp_peer_info *src, const struct ea_list *a,
                     struct ea_builder *b, linpool *lp)
{
  if (!ea_find(a, BGP_EA(BA_ORIGINATOR_ID)))
    ea_set_int(b, BGP_EA(BA_ORIGINATOR_ID), EAF_ROUTER_ID, BAF_OPTIONAL, src->remote_id);

  u32 ids[2];
  uint n = 0;
  if (src->rr_cluster_id)
    ids[n++] = src->rr_cluster_id;
  if (p->rr_cluster_id && p->rr_cluster_id != src->rr_cluster_id)
    ids[n++] = p->rr_cluster_id;
  if (!n)
    return;
  const struct eattr *cl = ea_find(a, BGP_EA(BA_CLUSTER_LIST));
  uint old = cl ? cl->len : 0;
  u8 *v = lp_alloc(lp, n * 4 + old);
  /* The cluster nearest to the receiver comes first. */
  for (uint i = 0; i < n; i++)
    bgp_put_host32(v + 4 * i, ids[n - 1 - i]);
  if (old)
    memcpy(v + n * 4, ea_data(a, cl), old);
  ea_set_data(b, BGP_EA(BA_CLUSTER_LIST), EAF_INT_SET, BAF_OPTIONAL, v, n * 4 + old);
}

int
bgp_med_fresh(const struct ea_list *a, const struct ea_list *src)
{
  if (!src || a == src)
    return 0;               /* the filter changed nothing: most exports */
  const struct eattr *m = ea_find(a, BGP_EA(BA_MULTI_EXIT_DISC));
  if (!m)
    return 0;
  const struct eattr *o = ea_find(src, BGP_EA(BA_MULTI_EXIT_DISC));
  return !o || o->val != m->val;
}

void
bgp_rules_export_attrs(const struct bgp_peer_info *p, const struct bgp_peer_info *src, const struct ea_list *a,
                       int med_fresh, struct ea_builder *b, linpool *lp)
{
  if (!ea_find(a, BGP_EA(BA_ORIGIN)))
    ea_set_int(b, BGP_EA(BA_ORIGIN), EAF_INT, BAF_TRANSITIVE, src ? ORIGIN_INCOMPLETE : ORIGIN_IGP);

  rules_export_as_path(p, a, b, lp);

  /* A MED is for the neighbor AS only: not passed on across eBGP, except
   * by route servers, inside a confederation (RFC 5065 5.3), and when our
   * export filter set it for this neighbor */
  if (!p->interior && !p->rs_client && src && !med_fresh)
    ea_unset(b, BGP_EA(BA_MULTI_EXIT_DISC));

  if (!p->interior)
    ea_unset(b, BGP_EA(BA_LOCAL_PREF));
  else if (!ea_find(a, BGP_EA(BA_LOCAL_PREF)))
    ea_set_int(b, BGP_EA(BA_LOCAL_PREF), EAF_INT, BAF_TRANSITIVE, p->default_local_pref);

  if (!p->ibgp) {
    ea_unset(b, BGP_EA(BA_ORIGINATOR_ID));
    ea_unset(b, BGP_EA(BA_CLUSTER_LIST));
  } else if (rules_ibgp_to_ibgp(p, src))
    rules_export_reflect(p, src, a, b, lp);

  /* RFC 9234 5: routes going down (or sideways) are marked with our AS */
  if ((p->local_role == BGP_ROLE_PROVIDER || p->local_role == BGP_ROLE_PEER || p->local_role == BGP_ROLE_RS) &&
      !ea_find(a, BGP_EA(BA_OTC)))
    ea_set_int(b, BGP_EA(BA_OTC), EAF_INT, BAF_OPTIONAL | BAF_TRANSITIVE, p->public_as);
}
