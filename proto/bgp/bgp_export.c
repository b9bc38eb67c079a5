/*
 * DOC: What a BGP session exports: the rules before the export filter and
 * the attributes a route goes out with.
 *
 * The attributes are a function of the route (its attributes and the
 * session it came from) and of the receiving session's export profile
 * (struct bgp_export_profile), nothing else: that is what lets the
 * thread's memo (bgp_export_cache.c) serve every session with an equal
 * profile, and what lets an update group compute them once for all its
 * members. The receiving side is therefore rebuilt from the profile here,
 * never read from the session.
 */
#include <string.h>
#include "proto/bgp/bgp.h"

/* The session a route was learned from, NULL when not from BGP: the
 * identity of the run that made it, which its source holds, not the
 * protocol's run now (bgp_rules.h). */
const struct bgp_peer_info *
bgp_src_peer(const struct rte *r)
{
  const struct rte_src *s = rte_src(r);
  if (s->proto->class != &proto_bgp || !s->run_info)
    return NULL;
  return &caa_container_of(s->run_info, const struct bgp_run, ri)->peer;
}

/* Before the export filter, as BIRD 2: the route's own attributes decide
 * (a NO_EXPORT the export filter adds is for the receiver to honour). */
int
bgp_preexport(struct channel *c, const struct rte *r)
{
  const struct bgp_proto *p = (const struct bgp_proto *) c->proto;
  /* RFC 9494 4.6: long-lived stale routes only to peers that know them */
  uint wk = bgp_wk_communities(rte_attrs(r));
  if (!p->caps.llgr_peer && (wk & BGP_WK_LLGR_STALE))
    return -1;
  return bgp_rules_export_ok(p->peer, bgp_src_peer(r), rte_attrs(r), wk) ? 0 : -1;
}

/* The receiving session as the export rules read it: the profile's
 * fields; the others (identifiers, import options) stay zero. */
static void
bgp_profile_peer(const struct bgp_export_profile *x, struct bgp_peer_info *pi)
{
  memset(pi, 0, sizeof(*pi));
  pi->local_as = x->local_as;
  pi->public_as = x->public_as;
  pi->confederation = x->confederation;
  pi->default_local_pref = x->default_local_pref;
  pi->rr_cluster_id = x->rr_cluster_id;
  pi->local_role = x->local_role;
  pi->ibgp = x->ibgp;
  pi->interior = x->interior;
  pi->rs_client = x->rs_client;
}

/* The attributes a session of profile x sends for route r, interned;
 * NULL = do not send. */
static struct ea_list *
bgp_export_attrs(const struct bgp_export_profile *x, const struct rte *r, int med_fresh)
{
  const struct ea_list *a = rte_attrs(r);
  struct bgp_peer_info peer;
  bgp_profile_peer(x, &peer);

  struct ea_builder b;
  ea_builder_from(&b, a);
  /* Only BGP attributes matter on the wire; clearing the rest lets equal
   * exports share one bucket. */
  b.source = RTS_BGP;
  b.dest = RTD_UNICAST;
  b.scope = 0;
  b.flags = 0;
  b.preference = 0;
  b.gw = IPA_NONE;
  b.iface = NULL;
  b.igp_metric = 0;
  for (uint i = 0; i < b.count;)
    if (!bgp_ea_is_bgp(b.a[i].id))
      ea_unset(&b, b.a[i].id);
    else
      i++;

  bgp_rules_export_attrs(&peer, bgp_src_peer(r), a, med_fresh, &b, loop_tmp());

  /* Next hop: kept towards route-server clients and inside the AS or
   * confederation, ours otherwise. */
  /* The builder keeps a pointer to the value until ea_intern(). */
  ip_addr self;
  const struct eattr *nh = ea_find(a, BGP_EA(BA_NEXT_HOP));
  int keep = x->next_hop_mode == BGP_NH_KEEP ||
             ((x->rs_client || x->interior) && x->next_hop_mode != BGP_NH_SELF);
  if (!nh || !keep) {
    self = ipa_nonzero(x->next_hop_addr) ? x->next_hop_addr : x->local_addr;
    int want_v4 = x->af == BGP_AF_IPV4;
    /* no address of the family: BIRD needs `next hop address` then, or an
     * IPv6 one for IPv4 routes where the neighbor took extended next hops */
    if (want_v4 != ipa_is_ip4(self) && !ipa_nonzero(x->next_hop_addr) && !(want_v4 && x->ext_next_hop_v4))
      return NULL;
    ea_set_data(&b, BGP_EA(BA_NEXT_HOP), EAF_IP, BAF_TRANSITIVE, &self, sizeof(self));
  }
  /* RFC 7311: AIGP to sessions that agree on it; through us it grows */
  if (!x->aigp)
    ea_unset(&b, BGP_EA(BA_AIGP));
  else if (!nh || !keep)
    bgp_aigp_export(&b, a, x->aigp_originate, loop_tmp());
  return ea_intern(&b);
}

/* The session's profile as it is now, interned. Every export checks each
 * field against the session's state (never stale) and interns again only
 * when one changed. Field by field: a profile built in a scratch copy of
 * byte stores and compared as words stalled every export on store
 * forwarding. */
#define XPROF_SET(x, ch, field, val) do { \
    __typeof__((x)->field) v_ = (val); \
    if (memcmp(&(x)->field, &v_, sizeof(v_))) { (x)->field = v_; (ch) = 1; } \
  } while (0)

const struct bgp_xprof *
bgp_export_profile_of(const struct bgp_proto *p, struct bgp_channel *bc)
{
  struct bgp_export_profile *x = &bc->xprof;
  int ch = !bc->xprof_ref;
  XPROF_SET(x, ch, local_addr, p->conn->local_addr);
  XPROF_SET(x, ch, next_hop_addr, bc->cf->next_hop_addr);
  XPROF_SET(x, ch, local_as, p->peer->local_as);
  XPROF_SET(x, ch, public_as, p->peer->public_as);
  XPROF_SET(x, ch, confederation, p->peer->confederation);
  XPROF_SET(x, ch, default_local_pref, p->peer->default_local_pref);
  XPROF_SET(x, ch, rr_cluster_id, p->peer->rr_cluster_id);
  XPROF_SET(x, ch, af, (u8) bc->af);
  XPROF_SET(x, ch, local_role, p->peer->local_role);
  XPROF_SET(x, ch, ibgp, p->peer->ibgp);
  XPROF_SET(x, ch, interior, p->peer->interior);
  XPROF_SET(x, ch, rs_client, p->cf->rs_client);
  XPROF_SET(x, ch, next_hop_mode, (u8) bc->cf->next_hop_mode);
  XPROF_SET(x, ch, ext_next_hop_v4, (u8) !!p->tx.ext_next_hop[BGP_AF_IPV4]);
  XPROF_SET(x, ch, aigp, (u8) !!bc->cf->aigp);
  XPROF_SET(x, ch, aigp_originate, (u8) !!bc->cf->aigp_originate);
  if (ch) {
    bgp_export_profile_put(bc->xprof_ref);
    bc->xprof_ref = bgp_export_profile_get(x);
  }
  return bc->xprof_ref;
}

struct bgp_export_make {
  const struct bgp_export_profile *x;
  const struct rte *r;
  int med_fresh;
};

static struct ea_list *
bgp_export_make(void *ctx)
{
  struct bgp_export_make *m = ctx;
  return bgp_export_attrs(m->x, m->r, m->med_fresh);
}

static struct ea_list *
bgp_export_attrs_lookup(const struct bgp_xprof *x, const struct rte *r, const struct ea_list *src, bool take)
{
  const struct bgp_peer_info *sp = bgp_src_peer(r);
  /* Whether the filter set the MED matters only where a learned MED is
   * dropped (bgp_rules_export_attrs): the lookups of both lists' MEDs
   * were a twentieth of a route server client's refeed. */
  int med_fresh = sp && !x->prof.interior && !x->prof.rs_client && bgp_med_fresh(rte_attrs(r), src);
  struct bgp_export_key k = { .src = rte_attrs(r), .gen = sp ? sp->gen : 0, .prof_id = x->id,
                              .med_fresh = (u32) med_fresh };
  struct bgp_export_make m = { &x->prof, r, med_fresh };
  return take ? bgp_export_cache_take(&k, bgp_export_make, &m) : bgp_export_cache_get(&k, bgp_export_make, &m);
}

struct ea_list *
bgp_export_attrs_get(const struct bgp_xprof *x, const struct rte *r, const struct ea_list *src)
{
  return bgp_export_attrs_lookup(x, r, src, false);
}

struct ea_list *
bgp_export_attrs_take(const struct bgp_xprof *x, const struct rte *r, const struct ea_list *src)
{
  return bgp_export_attrs_lookup(x, r, src, true);
}
