/*
 * BGP update groups, the members' side: a session's channel joins, leaves,
 * moves between groups, asks for refeeds, and sends what its group packed
 * (bgp_group.h has the picture, bgp_group.c the group's loop).
 */
#include <stdlib.h>
#include <string.h>
#include "proto/bgp/bgp_group_int.h"
#include "lib/printf.h"

/* Is bc joining at a marker, still exporting alone? */
static int
gm_marker_pending(const struct bgp_channel *bc)
{
  return bc->gm && bc->gm->marker && !bc->gm->m_switched;
}

int
bgp_group_member(const struct bgp_channel *bc)
{
  return bc->gm && !gm_marker_pending(bc);
}

static void
gm_filter_reads_table(void *ctx, struct rtable_config *t UNUSED)
{
  *(bool *) ctx = true;
}

/* Does f give a route the same verdict whenever it runs? Not if it reads
 * a ROA or ASPA table. A group relies on that: a member's feed, a class's
 * verdict on the route a change replaces, a member joining at a marker
 * all take a verdict given earlier for one given now. As BIRD 2 does
 * without an export table, such a session's export runs its filter again
 * only when it is fed again (`reload out`, a route refresh), and a
 * group's feed would have sent the group's verdicts of before. */
static bool
gm_filter_of_route(const struct filter *f)
{
  bool reads = false;
  filter_tables(f, gm_filter_reads_table, &reads);
  return !reads;
}

/* Can bc's exports be a group's? */
static int
gm_eligible(const struct bgp_proto *p, const struct bgp_channel *bc)
{
  const struct channel *c = bc->c;
  const struct channel_config *cc = c->cf;
  return c->out_filter != FILTER_REJECT && !cc->export_table && !cc->secondary && !cc->out_limit.max &&
         !p->tx.add_path[bc->af] && !p->gr_deferred && !gr_shutdown_requested() &&
         gm_filter_of_route(c->out_filter);
}

/* bc joins the group of its key, made if need be; cfg holds its export
 * filter; eor: what closes its first feed (struct bgp_gmember.join_eor);
 * marker: it exports alone and joins where its channel is (no feed);
 * from: a member handed back that moves quietly (its map and pin go to
 * the new one). */
static void
gm_join(struct bgp_proto *p, struct bgp_channel *bc, struct config *cfg, int eor, int marker,
        struct bgp_gmember *from)
{
  struct bgp_gmember *gm = calloc(1, sizeof(*gm));
  if (!gm)
    die("Out of memory");
  const struct bgp_xprof *x = bgp_export_profile_of(p, bc);
  gm->filter = bc->c->out_filter;
  gm->key = (struct bgp_group_key) {
    .table = bc->c->table,
    .prof_id = x->id,
    .max_len = p->tx.max_len,
    .af = bc->af,
    .as4 = p->tx.as4,
    .ext_next_hop = p->tx.ext_next_hop[bc->af],
    .rr_client = p->peer->rr_client,
    .interpret_communities = p->peer->interpret_communities,
    .llgr_peer = !!p->caps.llgr_peer,
  };
  gm->proto = &p->p;
  proto_src_ref(gm->proto);
  gm->config = cfg;
  gm->join_eor = eor;
  gm->cc = bc->c->cf;
  gm->xprof = bgp_export_profile_get(&x->prof);
  gm->peer = *p->peer;
  gm->loop = p->p.loop;
  gm->wake = &p->tx_ev;
  bsnprintf(gm->name, sizeof(gm->name), "%s", p->p.name);
  gm->refs = 2;
  gm->state = GM_PENDING;
  if (from) {
    gm->p_map = from->h_map;
    from->h_map = NULL;
    rt_reader_attach_at(bc->c->table, &gm->p_pin, p->p.loop, NULL, &from->h_pin);
  }
  ev_init(&gm->main_ev, group_join_main, gm);
  bc->gm = gm;
  gm->marker = marker;
  if (marker) {
    /* Its own export waits where it is for the group: ahead of the
     * group's reader, it could not take the log from the marker on. */
    gm->m_want = bc->c->reader.seq;
    chan_export_hold(bc->c, gm->m_want);
    bc->marker_until = loop_now() + GROUP_MARKER_HOLD;
    tm_set(&bc->group_tm, bc->marker_until);
  } else {
    /* The group sends End-of-RIB */
    bc->eor_sent = 1;
    chan_export_own(bc->c, 0);
  }
  ev_send(main_loop(), &gm->main_ev);
}

int
bgp_group_join(struct bgp_proto *p, struct bgp_channel *bc)
{
  bgp_group_leave(p, bc);
  bc->soft_dirty = 0;           /* a new session: everything goes afresh */
  bc->quiet_move = 0;
  if (!bc->c)
    return 0;
  if (!gm_eligible(p, bc)) {
    chan_export_own(bc->c, 1);
    /* Our own graceful restart's recovery keeps it out for a while only */
    bc->rejoin = p->gr_deferred;
    return 0;
  }
  gm_join(p, bc, p->p.pcf->global, 1, 0, NULL);
  return 1;
}

int
bgp_group_regroup(struct bgp_proto *p, struct bgp_channel *bc, struct config *cfg)
{
  if (!bc->c || !p->conn || !p->caps.enhanced_refresh || !bc->eor_out || !gm_eligible(p, bc))
    return 0;
  /* Whatever the old export had yet to send is dropped: the EoRR that
   * closes the new group's feed purges what it did not resend. */
  bgp_tx_reset_channel(p, bc);
  bc->eorr_pending = 0;
  bgp_send_rr(p, bc->af, BGP_RR_BEGIN);
  log_msg(L_TRACE, "%s: Export changed, refreshing the peer through an update group (%s)", p->p.name,
          bc->c->cf->name);
  gm_join(p, bc, cfg, 2, 0, NULL);
  return 1;
}

void
bgp_group_rejoin(struct bgp_proto *p, struct bgp_channel *bc)
{
  struct channel *c = bc->c;
  if (!c || bc->gm || !p->conn) {
    bc->rejoin = 0;
    return;
  }
  /* Not yet: the tx hook comes by again when its export is idle and
   * steady (past its last feed's journal end too: past the marker, a
   * change the feed ran ahead of would be the group's, whose class may
   * never have had the route the peer got under an earlier filter) */
  if (p->gr_deferred || !bc->eor_sent || !bc->eor_out || bc->eorr_pending || !chan_export_steady(c) ||
      loop_now() < bc->rejoin_after)
    return;
  /* Looked at last: it walks the filter's code (gm_filter_of_route),
   * and the tx hook comes by on every pass of a busy export */
  if (!gm_eligible(p, bc)) {
    bc->rejoin = 0;
    return;
  }
  /* What a `configure soft` left it holding is not what the group's
   * class would have sent: alone until a feed began since set it right */
  if (bc->soft_dirty && bc->c->feed_seq == bc->soft_seq)
    return;
  bc->soft_dirty = 0;
  bc->rejoin = 0;
  gm_join(p, bc, p->p.pcf->global, 0, 1, NULL);
}

/* Joining at a marker, not there yet: leave it (the channel exports
 * alone as before) and try again later. */
static void
gm_marker_abort(struct bgp_proto *p, struct bgp_channel *bc, const char *why, btime wait)
{
  log_msg(L_TRACE, "%s: Stays out of update group (%s) for now: %s", p->p.name, bc->c->cf->name, why);
  bgp_group_leave(p, bc);
  bc->rejoin = 1;
  bc->rejoin_after = loop_now() + wait;
  /* an idle export would not run the tx hook again */
  tm_set(&bc->group_tm, bc->rejoin_after);
}

void
bgp_group_soft_change(struct bgp_proto *p, struct bgp_channel *bc)
{
  if (!bc->c)
    return;
  bc->soft_dirty = 1;
  bc->soft_seq = bc->c->feed_seq;
  bc->quiet_move = 0;           /* nothing is sent again */
  if (gm_marker_pending(bc))
    gm_marker_abort(p, bc, "its export changed", GROUP_REJOIN_WAIT);
  else if (bgp_group_member(bc)) {
    bc->takeover_quiet = 1;
    bgp_group_solo(p, bc);
  }
  ev_schedule(&p->tx_ev);
}

void
bgp_group_marker(struct bgp_proto *p, struct bgp_channel *bc)
{
  if (!gm_marker_pending(bc))
    return;
  struct bgp_gmember *gm = bc->gm;
  struct channel *c = bc->c;
  if (!chan_export_steady(c)) {
    gm_marker_abort(p, bc, "its export restarted", GROUP_REJOIN_WAIT);
    return;
  }
  int state = uatomic_read(&gm->state);
  if (state == GM_CANCELLED) {
    gm_marker_abort(p, bc, "too slow", GROUP_REJOIN_WAIT_SLOW);
    return;
  }
  if (state != GM_MARKER) {
    /* the group is not there yet */
    if (loop_now() >= bc->marker_until)
      gm_marker_abort(p, bc, "the group is behind", GROUP_REJOIN_WAIT);
    return;
  }
  /* Held where it asked, it cannot be past the marker; if it is anyway
   * (its export ran on), another time */
  if (c->reader.seq > gm->m_seq) {
    gm_marker_abort(p, bc, "ahead of the group", GROUP_REJOIN_WAIT);
    return;
  }
  if (c->reader.seq < gm->m_seq) {
    if (c->export_until != gm->m_seq)
      chan_export_hold(c, gm->m_seq);
    return;
  }
  /* What its own export has yet to send goes first */
  if (!bgp_tx_idle(bc))
    return;
  if (uatomic_cmpxchg(&gm->state, GM_MARKER, GM_JOINED) != GM_MARKER)
    return;                         /* cancelled: the next call leaves */
  gm->own_base = (s64) gm->m_routes - (s64) uatomic_read(&c->stats.exp_routes);
  chan_export_release(c);
  chan_export_own(c, 0);
  tm_stop(&bc->group_tm);
  gm->m_switched = 1;
  log_msg(L_TRACE, "%s: Exports through update group %s (%s), joined where it was, export class %u", p->p.name,
          gm->group->name, c->cf->name, gm->cls->id);
}

void
bgp_group_leave(struct bgp_proto *p UNUSED, struct bgp_channel *bc)
{
  struct bgp_gmember *gm = bc->gm;
  if (!gm)
    return;
  if (gm_marker_pending(bc) && bc->c)
    chan_export_release(bc->c);
  bc->gm = NULL;
  if (bc->c)
    uatomic_set(&bc->c->export_via, NULL);
  if (uatomic_cmpxchg(&gm->state, GM_PENDING, GM_LEAVING) == GM_PENDING) {
    /* The main loop or the group drops it when the join comes by. */
    gm_unref(gm);
    return;
  }
  /* MARKER may become CANCELLED meanwhile, which only we leave */
  if (uatomic_cmpxchg(&gm->state, GM_MARKER, GM_LEAVING) != GM_MARKER &&
      uatomic_cmpxchg(&gm->state, GM_CANCELLED, GM_LEAVING) != GM_CANCELLED &&
      uatomic_cmpxchg(&gm->state, GM_JOINED, GM_LEAVING) != GM_JOINED) {
    /* HANDOVER: what the group handed over is ours to drop */
    rt_reader_detach(&gm->h_pin);
    chan_exp_discard(gm->h_map);
    chan_catch_up_discard(gm->h_owed);
  }
  /* Off the log first, so that nothing wakes us any more */
  bgp_txlog_leave(gm->group->log, &gm->cur);
  /* the group's reference keeps gm until the group has seen it */
  gm_request(gm, GM_REQ_LEAVE);
  gm_unref(gm);
}

/* Handed back for a filter change (quiet_move), the peer without enhanced
 * route refresh: rather than refeed it alone and join again at a marker,
 * which encodes everything for this peer alone, join the group of the new
 * settings at once, taking what the peer holds (the hand-over's map and
 * journal pin): the group's feed sends what the new class gets and
 * withdraws what the peer holds that it does not (bgp_group_feed.c). Only
 * where the peer holds just what the map says: it had its End-of-RIB, it
 * read the whole log up to the hand-over, and nothing else is owed to it
 * (withdrawals of a catch-up, an EoRR). */
static int
gm_move_quietly(struct bgp_proto *p, struct bgp_channel *bc, struct bgp_gmember *gm)
{
  if (gm->p_map || uatomic_read(&gm->h_skip) || !gm->h_eor_sent || gm->h_eorr || gm->eorr_asked || gm->h_owed ||
      bc->eorr_pending || !p->conn || !bc->eor_out || gm->key.table != bc->c->table || !gm_eligible(p, bc))
    return 0;
  uatomic_set(&bc->c->export_via, NULL);
  uatomic_set(&gm->state, GM_LEAVING);
  bgp_txlog_leave(gm->group->log, &gm->cur);
  bc->gm = NULL;
  log_msg(L_TRACE, "%s: Export changed, into an update group without route refresh (%s)", p->p.name,
          bc->c->cf->name);
  gm_join(p, bc, p->p.pcf->global, 3, 0, gm);
  rt_reader_detach(&gm->h_pin);
  gm_request(gm, GM_REQ_LEAVE);
  gm_unref(gm);
  return 1;
}

/* A quiet move handed over before its walk was over (a `configure soft`
 * right behind the `configure`, while the new group still fed the table):
 * its peer may hold, beside what the log gave it, what its old class had
 * at the move, which that walk would have withdrawn where the new class
 * gets nothing. A client kept 134,000 of 200,000 routes its new filter
 * rejected, `reload out` or not (test_configure_soft_while_moving). The
 * channel, which has taken over the hand-over's map, takes those as
 * exported too: the move's map, and the route now at each net whose held
 * route changed since the move's pin; a net emptied since is withdrawn.
 * The refeed that follows withdraws what the filter rejects; a withdrawal
 * too many is harmless. Member's loop: the group forgot the move at the
 * hand-over. */
static void
gm_move_unfinished(struct bgp_proto *p, struct bgp_channel *bc, struct bgp_gmember *gm)
{
  struct channel *c = bc->c;
  if (uatomic_read(&c->state) == CS_UP && c->reader.table) {
    u32 added = chan_exp_merge(c, gm->p_map);
    rcu_read_lock();
    struct net *n;
    for (const net_addr *a; (a = gm_moved_next(gm, c->table, &n));) {
      struct rte *best = n ? net_best(n) : NULL;
      if (!best)
        bgp_tx_withdraw(p, bc, a);
      else if (!chan_exp_bit(c, best->id)) {
        chan_exp_set(c, best->id, 1);
        added++;
      }
    }
    rcu_read_unlock();
    uatomic_add(&c->stats.exp_routes, added);
  }
  gm_moved_drop(gm);
}

/* The log has given us everything up to the hand-over: our channel
 * exports from the state the group was in then. */
static void
gm_takeover(struct bgp_proto *p, struct bgp_channel *bc, struct bgp_gmember *gm)
{
  int move = bc->quiet_move;
  bc->quiet_move = 0;
  if (move && gm_move_quietly(p, bc, gm))
    return;
  bc->eor_sent = gm->h_eor_sent;
  bc->eorr_pending |= gm->h_eorr || gm->eorr_asked;
  uatomic_set(&bc->c->export_via, NULL);
  /* Without a feed only where the peer has all the map says: not when
   * it passed over part of the log, nor before its feed's End-of-RIB, nor
   * with an EoRR due (which purges what a feed did not send again), nor
   * in the middle of a quiet move (no feed has met the filter it was for). */
  int moving = !!gm->p_map;
  int refeed = moving || !bc->takeover_quiet || uatomic_read(&gm->h_skip) || !gm->h_eor_sent || gm->h_eorr ||
               gm->eorr_asked;
  bc->takeover_quiet = 0;
  chan_export_takeover(bc->c, &gm->h_pin, gm->h_map, gm->h_owed, refeed);   /* detaches the pin */
  if (moving)
    gm_move_unfinished(p, bc, gm);
  uatomic_set(&gm->state, GM_LEAVING);
  bgp_txlog_leave(gm->group->log, &gm->cur);
  bc->gm = NULL;
  gm_request(gm, GM_REQ_LEAVE);
  gm_unref(gm);
  /* once its own export has caught up, it joins the group of its settings */
  bc->rejoin = 1;
  ev_schedule(&p->tx_ev);
}

/* The withdrawals of a message a member passes over are sent before its
 * own export: the peer may hold routes the log withdrew (withdrawing one
 * it does not hold is harmless). They are kept as the log had them, an
 * UPDATE with only its withdrawn routes and MP_UNREACH: no more than the
 * log held. End-of-RIB and EoRR passed over are its own export's to send. */
static void
gm_skipped(struct bgp_channel *bc, struct bgp_gmember *gm, const u8 *msg, uint len)
{
  if (len < BGP_HEADER_LEN)
    return;
  if (msg[18] == BGP_MSG_ROUTE_REFRESH) {
    gm->h_eorr = 1;                 /* the group sends no other kind */
    return;
  }
  struct bgp_update u;
  struct bgp_error err;
  if (msg[18] != BGP_MSG_UPDATE || bgp_update_split(msg + BGP_HEADER_LEN, len - BGP_HEADER_LEN, &u, &err) < 0)
    return;
  /* MP_UNREACH, raw: flags, type, length, value */
  struct bgp_cur a = u.attrs, unreach = bgp_cur_init(NULL, 0);
  int others = 0;
  while (!bgp_cur_empty(&a)) {
    const u8 *start = a.p;
    u8 flags, type, l8;
    u16 alen;
    if (!bgp_get_u8(&a, &flags) || !bgp_get_u8(&a, &type))
      return;
    if (flags & 0x10) {
      if (!bgp_get_u16(&a, &alen))
        return;
    } else if (bgp_get_u8(&a, &l8))
      alen = l8;
    else
      return;
    if (!bgp_skip(&a, alen))
      return;
    if (type == BA_MP_UNREACH_NLRI)
      unreach = bgp_cur_init(start, (size_t) (a.p - start));
    else
      others = 1;
  }
  size_t wlen = bgp_cur_left(&u.withdrawn), ulen = bgp_cur_left(&unreach);
  /* End-of-RIB: an empty UPDATE, or an MP_UNREACH with a family alone */
  if (!wlen && bgp_cur_empty(&u.nlri) && !others &&
      (gm->key.af == BGP_AF_IPV4 ? !ulen : ulen && ulen == (size_t) (unreach.p[0] & 0x10 ? 4 : 3) + 3)) {
    gm->h_eor_sent = 0;
    return;
  }
  if (!wlen && !ulen)
    return;
  uint total = BGP_HEADER_LEN + 2 + (uint) wlen + 2 + (uint) ulen;
  u8 *m = bgp_tx_early_reserve(bc, total), *w = m + BGP_HEADER_LEN;
  bgp_header_put(m, total, BGP_MSG_UPDATE);
  bgp_store16(w, (u16) wlen);
  memcpy(w + 2, u.withdrawn.p, wlen);
  bgp_store16(w + 2 + wlen, (u16) ulen);
  if (ulen)
    memcpy(w + 4 + wlen, unreach.p, ulen);
  bgp_tx_early_commit(bc, total);
}

void
bgp_group_skip(struct bgp_proto *p, struct bgp_channel *bc)
{
  struct bgp_gmember *gm = bc->gm;
  if (!gm || uatomic_read(&gm->state) != GM_HANDOVER || !uatomic_read(&gm->h_skip))
    return;
  struct bgp_group *g = gm->group;
  for (uint budget = GROUP_SKIP_BUDGET; budget; budget--) {
    const struct bgp_txlog_entry *e = bgp_txlog_peek(g->log, &gm->cur);
    if (gm->cur.pos >= gm->h_end) {
      gm_takeover(p, bc, gm);
      return;
    }
    if (!e)
      return;                       /* cannot be: h_end was published */
    gm_skipped(bc, gm, bgp_txlog_msg(e), e->len);
    bgp_txlog_consume(g->log, &gm->cur);
  }
  ev_schedule(&p->tx_ev);
}

void
bgp_group_solo(struct bgp_proto *p, struct bgp_channel *bc)
{
  struct bgp_gmember *gm = bc->gm;
  if (!bc->c)
    return;
  if (!gm) {
    chan_export_own(bc->c, 1);
    return;
  }
  if (uatomic_cmpxchg(&gm->state, GM_PENDING, GM_LEAVING) == GM_PENDING) {
    /* Nothing came from the group yet */
    bc->takeover_quiet = 0;
    bc->quiet_move = 0;
    bc->gm = NULL;
    uatomic_set(&bc->c->export_via, NULL);
    if (gm->p_map) {
      /* A quiet move (gm_move_quietly): the peer holds what the map
       * says, and a plain start would never withdraw it (a `configure
       * soft` right behind a `configure` left a client 200 routes that
       * both its filters since rejected). The channel takes the map and
       * the pin, and refeeds: no feed has met the filter the move was
       * for. The peer had its End-of-RIB. */
      struct chan_export_map *map = gm->p_map;
      gm->p_map = NULL;
      chan_export_takeover(bc->c, &gm->p_pin, map, NULL, 1);   /* detaches the pin */
      bc->rejoin = 1;
    } else {
      /* A plain start, closed by End-of-RIB, and by EoRR where a regroup
       * sent its BoRR (bgp_group_regroup) */
      bc->eor_sent = 0;
      bc->eorr_pending |= gm->join_eor == 2;
      chan_export_own(bc->c, 1);
    }
    gm_unref(gm);
    return;
  }
  /* Joined: the group hands over where it is (bgp_group_tx finishes).
   * Without a refeed to follow (`configure soft`) at once: what the
   * group sends meanwhile would not meet the new filter, and nothing
   * would put it right. */
  if (!gm->solo_asked) {
    gm->solo_asked = 1;
    gm_request(gm, GM_REQ_SOLO | (bc->takeover_quiet ? GM_REQ_SOLO_NOW : 0));
  }
}

int
bgp_group_refeed(struct bgp_proto *p, struct bgp_channel *bc, int eorr)
{
  if (gm_marker_pending(bc))
    gm_marker_abort(p, bc, "the peer asked for a refresh", GROUP_REJOIN_WAIT);
  struct bgp_gmember *gm = bc->gm;
  if (!gm)
    return 0;
  /* Still joining: the join's feed covers it, and sends End-of-RIB; an
   * EoRR is due all the same. */
  if (uatomic_read(&gm->state) == GM_PENDING)
    return 1;
  /* Going solo: the member's own feed follows */
  if (gm->solo_asked)
    return 0;
  /* Let go for lagging: the own feed that follows covers it */
  if (uatomic_read(&gm->state) == GM_HANDOVER) {
    gm->h_eorr |= eorr;
    return 1;
  }
  gm->eorr_asked |= eorr;
  gm_request(gm, GM_REQ_REFEED | (eorr ? GM_REQ_EORR : 0));
  return 1;
}

void
bgp_group_reload_out(struct channel *c)
{
  struct bgp_proto *p = (struct bgp_proto *) c->proto;
  enum bgp_af af = bgp_net_af(c->net_type);
  /* on its way out (a soft change hands it back without a feed): its
   * own export feeds it */
  if (!bgp_group_refeed(p, &p->ch[af], 0))
    bgp_refeed(p, af);
}

/* The channel's export counters are the group's, but for what its
 * class's filter rejected and the routes it never sends back to this
 * member. */
static void
gm_stats(struct bgp_channel *bc, struct bgp_gmember *gm)
{
  const struct channel_stats *gs = &gm->group->c->stats;
  struct channel_stats *st = &bc->c->stats;
  u64 *to[] = { &st->exp_updates_received, &st->exp_updates_rejected, &st->exp_withdraws_received,
                &st->exp_withdraws_accepted };
  const u64 *from[] = { &gs->exp_updates_received, &gs->exp_updates_rejected, &gs->exp_withdraws_received,
                        &gs->exp_withdraws_accepted };
  for (uint i = 0; i < ARRAY_SIZE(to); i++)
    uatomic_set(to[i], uatomic_read(from[i]));
  u64 filtered = uatomic_read(&gm->cls->filtered), accepted = uatomic_read(&gs->exp_updates_accepted);
  uatomic_set(&st->exp_updates_filtered, uatomic_read(&gs->exp_updates_filtered) + filtered);
  uatomic_set(&st->exp_updates_accepted, accepted > filtered ? accepted - filtered : 0);
  /* own_routes counts from the marker of a member that joined at one */
  s64 own = (s32) uatomic_read(&gm->own_routes) + gm->own_base, routes = uatomic_read(&gm->cls->routes);
  uatomic_set(&st->exp_routes, (u32) (routes > own ? routes - own : 0));
}

/* Is this message of the log an End-of-RIB? */
static int
gm_is_eor(const struct bgp_gmember *gm, const u8 *msg, uint len)
{
  u8 eor[64];
  return len < sizeof(eor) && msg[18] == BGP_MSG_UPDATE && len == bgp_update_encode_eor(gm->key.af, eor, sizeof(eor)) &&
         !memcmp(msg, eor, len);
}

int
bgp_group_tx(struct bgp_proto *p, struct bgp_channel *bc)
{
  struct bgp_gmember *gm = bc->gm;
  int state = gm ? uatomic_read(&gm->state) : GM_PENDING;
  if (state != GM_JOINED && state != GM_HANDOVER)
    return 0;
  struct bgp_group *g = gm->group;
  if (state == GM_HANDOVER && uatomic_read(&gm->h_skip))
    return 0;                       /* bgp_group_skip() has it */
  if (!bc->c->export_via)
    uatomic_set(&bc->c->export_via, g->c);    /* `show route exported` */
  const struct bgp_txlog_entry *e;
  while (txq_queued(&p->conn->tx) < BGP_TX_HIGH) {
    e = bgp_txlog_peek(g->log, &gm->cur);
    /* The group may hand us over while we send (we asked to go alone,
     * or it let us go): what it publishes after h_end is not ours. peek
     * read the log's end with acquire, so an entry published after the
     * hand-over comes with the state the group set before it. */
    if (state == GM_JOINED)
      state = uatomic_read(&gm->state);
    if (state == GM_HANDOVER && uatomic_read(&gm->h_skip)) {
      ev_schedule(&p->tx_ev);       /* bgp_group_skip() has it */
      break;
    }
    if (state == GM_HANDOVER && gm->cur.pos >= gm->h_end) {
      gm_takeover(p, bc, gm);
      return 0;
    }
    if (!e)
      break;
    bgp_send(p->conn, bgp_txlog_msg(e), e->len);
    /* a failed send closed the session, which left the group: gm is gone */
    if (!p->conn)
      return -1;
    if (!bc->eor_out && gm_is_eor(gm, bgp_txlog_msg(e), e->len))
      bc->eor_out = 1;
    if (bgp_txlog_msg(e)[18] == BGP_MSG_ROUTE_REFRESH)
      gm->eorr_asked = 0;         /* the group sends no other kind than EoRR */
    bgp_txlog_consume(g->log, &gm->cur);
  }
  uatomic_set(&gm->cur.blocked, txq_queued(&p->conn->tx) >= BGP_TX_HIGH);
  gm_stats(bc, gm);
  /* Our position stored, then paused read; group_busy() stores paused,
   * then reads the positions. Without a full barrier on each side both
   * may read the old value (a store waits in the store buffer while the
   * load after it goes ahead): the group stays paused, and we, with
   * nothing left to send, never wake it. */
  cmm_smp_mb();
  if (uatomic_read(&g->paused) && bgp_txlog_lag(g->log, &gm->cur) <= GROUP_LAG_RESUME)
    ev_send(g->p.loop, &g->resume_ev);
  return 0;
}
