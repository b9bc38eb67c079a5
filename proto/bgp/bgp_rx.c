/*
 * DOC: Received UPDATEs into the tables, and session up/down.
 *
 * One UPDATE is one unit of work: the attributes are parsed once into a
 * builder, completed with the route fields the nest needs (source, dest,
 * gateway, LOCAL_PREF, the generic `from`), checked against the session's
 * rules (bgp_rules.c: loops, first AS, OTC), interned once, and then every
 * prefix of the message is imported with that one attribute list. Withdrawals need no attributes.
 * Prefixes are decoded in batches into a stack array, never allocated.
 */
#include <string.h>
#include "proto/bgp/bgp.h"
#include "proto/bgp/bgp_group.h"
#include "nest/ea_bgp.h"
#include "nest/iface.h"
#include "lib/log.h"

#define BGP_RX_BATCH 256

static struct channel *
bgp_af_channel(struct bgp_proto *p, int af)
{
  return (af >= 0 && af < BGP_AF_MAX) ? p->ch[af].c : NULL;
}

int
bgp_import_pressed(struct bgp_proto *p, struct rt_press_wait *w)
{
  for (int af = 0; af < BGP_AF_MAX; af++) {
    struct channel *c = p->ch[af].c;
    if (c && c->table && rt_import_wait(c->table, w))
      return 1;
  }
  return 0;
}

static int
bgp_path_src_eq(const struct hash_node *n, const void *key)
{
  return container_of(n, struct bgp_path_src, hn)->path_id == *(const u32 *) key;
}

/* Paths of one prefix (ADD-PATH) are different routes: one source each. */
static struct rte_src *
bgp_path_src(struct bgp_proto *p, u32 path_id)
{
  if (!path_id)
    return p->p.main_source;
  u32 h = hash_u32(path_id);
  struct hash_node *n = hash_find(&p->path_srcs, h, bgp_path_src_eq, &path_id);
  if (n)
    return container_of(n, struct bgp_path_src, hn)->src;
  struct bgp_path_src *ps = mb_allocz(p->p.run_pool, sizeof(*ps));
  ps->path_id = path_id;
  ps->src = rt_get_source(&p->p, path_id);
  hash_insert(&p->path_srcs, &ps->hn, h);
  return ps->src;
}

void
bgp_path_srcs_free(struct bgp_proto *p)
{
  if (!p->path_srcs.buckets)
    return;
  HASH_WALK_DELSAFE(&p->path_srcs, n) {
    struct bgp_path_src *ps = container_of(n, struct bgp_path_src, hn);
    hash_remove(&p->path_srcs, n);
    rt_unlock_source(ps->src);
    mb_free(ps);
  }
}

/* Import (attrs != NULL) or withdraw every prefix an iterator yields. */
static int
bgp_rx_nlri(struct bgp_proto *p, struct bgp_nlri_iter *it, struct ea_list *attrs)
{
  net_addr nets[BGP_RX_BATCH];
  u32 ids[BGP_RX_BATCH];
  struct rte_src *srcs[BGP_RX_BATCH];
  struct channel *c = bgp_af_channel(p, it->af);
  for (;;) {
    struct bgp_error err;
    int n = bgp_nlri_decode(it, nets, ids, BGP_RX_BATCH, &err);
    if (n < 0) {
      bgp_conn_error(p->conn, &err, "Error: Malformed NLRI");
      return -1;
    }
    if (!n)
      return 0;
    if (!c)
      continue;
    for (int i = 0; i < n; i++)
      srcs[i] = it->add_path ? bgp_path_src(p, ids[i]) : p->p.main_source;
    chan_import_batch(c, nets, srcs, (uint) n, attrs);
  }
}

/* Session rules on received attributes (bgp_rules.c); 0 = accept, else
 * treat as withdraw. Loops are expected in any meshed topology and are
 * dropped silently, as BIRD does; first-AS mismatches and leaks are news. */
static int
bgp_rx_check(struct bgp_proto *p, struct ea_builder *b)
{
  /* `allow as sets off`: BIRD 2 treats routes with AS_SETs as withdrawn */
  if (!p->cf->allow_as_sets)
    for (uint i = 0; i < b->count; i++)
      if (b->a[i].id == BGP_EA(BA_AS_PATH) && b->payload[i]) {
        int at = bgp_as_path_set_at(b->payload[i], b->a[i].len);
        if (at >= 0) {
          log_rl(&p->rl, L_REMOTE, "%s: Malformed AS_PATH attribute - AS_SET segment (%u) at %d", p->p.name,
                 AS_PATH_SET, at);
          return -1;
        }
      }
  switch (bgp_rules_import(p->peer, b)) {
  case BGP_RX_ACCEPT:
    return 0;
  case BGP_RX_LOOP:
    return -1;
  case BGP_RX_FIRST_AS:
    log_rl(&p->rl, L_REMOTE, "%s: Invalid route - first AS in AS_PATH differs from neighbor AS", p->p.name);
    return -1;
  case BGP_RX_LEAK:
    log_rl(&p->rl, L_REMOTE, "%s: Invalid route - route leak detected (OTC)", p->p.name);
    return -1;
  }
  return -1;
}

/* RFC 7311 3: AIGP only between sessions that agree on it (`aigp`, on
 * for iBGP by default); BIRD logs what it drops. */
static void
bgp_rx_aigp(struct bgp_proto *p, struct ea_builder *b, int af)
{
  if (af < 0 || af >= BGP_AF_MAX || !p->ch[af].cf || p->ch[af].cf->aigp)
    return;
  for (uint i = 0; i < b->count; i++)
    if (b->a[i].id == BGP_EA(BA_AIGP)) {
      log_rl(&p->rl, L_REMOTE, "%s: Discarding AIGP attribute received on non-AIGP session", p->p.name);
      ea_unset(b, BGP_EA(BA_AIGP));
      return;
    }
}

/* Fill the nest's route fields; the next hop gives the destination
 * (bgp_nexthop.c). Returns -1 when the routes must be treated as withdrawn. */
static int
bgp_rx_route_fields(struct bgp_proto *p, struct ea_builder *b, int af, bool local_pref_seen)
{
  struct channel *c = bgp_af_channel(p, af);
  b->source = RTS_BGP;
  b->scope = SCOPE_UNIVERSE;
  b->preference = c ? c->preference : 100;
  if (!c)
    return -1;                  /* nothing to import into */
  if (bgp_nh_rx_fields(p, b, &p->ch[af]) < 0)
    return -1;
  /* BIRD 2 gives the default LOCAL_PREF on import to routes that came
   * without one; not to those whose LOCAL_PREF was dropped (from an eBGP
   * peer): they go without (best path takes the default for them). */
  if (!local_pref_seen)
    ea_set_int(b, BGP_EA(BA_LOCAL_PREF), EAF_INT, BAF_TRANSITIVE, p->cf->default_local_pref);
  /* The generic `from` of filters: the same for every route of the
   * session, so it is one more eattr of the one interned set per UPDATE. */
  ea_set_data(b, EA_GEN_FROM, EAF_IP, 0, &p->peer->remote_ip, sizeof(ip_addr));
  return 0;
}

void
bgp_rx_update(struct bgp_conn *conn, const u8 *body, uint len)
{
  struct bgp_proto *p = conn->p;
  struct ea_builder b;
  struct bgp_update u;
  ea_builder_init(&b);
  lp_flush(p->rx_mem);

  enum bgp_attr_verdict v = bgp_update_parse(&p->rx, p->rx_mem, body, len, &b, &u);
  if (v == BGP_ATTR_SESSION_RESET) {
    bgp_conn_error(conn, &u.a.err, "Error: Malformed UPDATE");
    return;
  }
  if (u.eor >= 0) {
    if (u.eor < BGP_AF_MAX) {
      p->ch[u.eor].eor_received = 1;
      bgp_gr_rx_eor(p, u.eor);
    }
    return;
  }

  struct bgp_nlri_iter it;
  bgp_update_withdrawn_iter(&p->rx, &u, &it);
  if (bgp_rx_nlri(p, &it, NULL) < 0)
    return;
  bgp_update_mp_unreach_iter(&p->rx, &u, &it);
  if (bgp_rx_nlri(p, &it, NULL) < 0)
    return;

  if (v == BGP_ATTR_OK && bgp_rx_check(p, &b) < 0)
    v = BGP_ATTR_TREAT_AS_WITHDRAW;

  /* Body NLRI (IPv4) and MP_REACH NLRI share the attributes, not the next hop. */
  for (int part = 0; part < 2; part++) {
    if (part == 0)
      bgp_update_reach_iter(&p->rx, &u, &it);
    else
      bgp_update_mp_reach_iter(&p->rx, &u, &it);
    if (bgp_cur_empty(&it.c))
      continue;
    struct ea_list *a = NULL;
    if (v == BGP_ATTR_OK) {
      struct ea_builder pb = b;
      if (part == 1)
        bgp_attrs_use_mp_next_hop(&pb, &u.a);
      bgp_rx_aigp(p, &pb, it.af);
      if (bgp_rx_route_fields(p, &pb, it.af, u.a.local_pref_seen) == 0)
        a = ea_intern(&pb);
    }
    int rv = bgp_rx_nlri(p, &it, a);
    if (a)
      ea_unref(a);
    if (rv < 0)
      return;
  }
}

void
bgp_session_established(struct bgp_proto *p)
{
  struct bgp_conn *c = p->conn;
  /* Stale routes of the last session may be compared in other loops right
   * now: store only what changed (normally nothing). */
  if (p->peer->remote_id != c->remote.router_id)
    uatomic_set(&p->peer->remote_id, c->remote.router_id);
  if (p->peer->remote_as != c->remote.peer_as)
    uatomic_set(&p->peer->remote_as, c->remote.peer_as);
  p->down_notified = 0;
  memset(&p->rx, 0, sizeof(p->rx));
  p->rx.as4 = p->caps.as4;
  p->rx.ebgp = !p->peer->ibgp;
  p->rx.confed = p->peer->interior && !p->peer->ibgp;
  p->rx.local_as = p->cf->local_as;
  p->rx.peer_as = c->remote.peer_as;
  memset(&p->tx, 0, sizeof(p->tx));
  p->tx.as4 = p->caps.as4;
  p->tx.max_len = p->caps.tx_max_len ? p->caps.tx_max_len : BGP_MAX_MSG_LEN;
  for (int af = 0; af < BGP_AF_MAX; af++) {
    p->rx.af[af] = p->caps.af[af];
    p->rx.add_path[af] = !!(p->caps.add_path[af] & BGP_ADD_PATH_RX);
    p->rx.ext_next_hop[af] = p->caps.ext_next_hop[af];
    p->tx.add_path[af] = !!(p->caps.add_path[af] & BGP_ADD_PATH_TX);
    p->tx.ext_next_hop[af] = p->caps.ext_next_hop[af];
    p->ch[af].eor_sent = p->ch[af].eor_received = p->ch[af].eor_out = 0;
  }
  log_msg(L_TRACE, "%s: BGP session established", p->p.name);
  bgp_gr_session_up(p);
  /* The protocol is up (as BIRD 2, only now): the channels of the
   * negotiated families come up and feed us everything; End-of-RIB
   * follows. A family the neighbor did not take stays down. */
  for (int af = 0; af < BGP_AF_MAX; af++)
    if (p->ch[af].c) {
      p->ch[af].c->disabled = !p->caps.af[af];
      p->ch[af].c->export_all_paths = p->tx.add_path[af];
      if (p->caps.af[af])
        bgp_group_join(p, &p->ch[af]);
    }
  proto_notify_state(&p->p, PS_UP);
  ev_schedule(&p->tx_ev);
}

void
bgp_session_down(struct bgp_proto *p)
{
  /* Back to start (BIRD 2): the channels stop exporting. Without graceful
   * restart the peer's routes go (in chunks) and the channels go down;
   * with it they stay, and so do the ADD-PATH sources, so that the
   * restarted peer's routes replace them. */
  if (!p->down_requested)
    proto_notify_state(&p->p, PS_START);
  if (!bgp_gr_session_down(p, !p->down_notified && !p->down_requested))
    bgp_path_srcs_free(p);
  bgp_tx_reset(p);
}
