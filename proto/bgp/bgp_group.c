/*
 * BGP update groups: the registry and the group's loop (the members' side
 * is bgp_group_member.c; bgp_group.h has the picture, doc/update-groups.md
 * the reasons).
 */
#include <stdlib.h>
#include "proto/bgp/bgp_group_int.h"
#include "nest/reconf.h"
#include "conf/conf.h"
#include "lib/printf.h"

static struct lnode bgp_groups = { &bgp_groups, &bgp_groups };   /* main loop */
static uint bgp_group_seq;                                        /* main loop */
static const struct proto_class bgp_group_class;

/* --- Members, any loop --- */

static void
gm_free(struct bgp_gmember *gm)
{
  /* a quiet move whose feed never came */
  if (gm->p_map) {
    rt_reader_detach(&gm->p_pin);
    chan_exp_discard(gm->p_map);
  }
  bgp_export_profile_put(gm->xprof);
  proto_src_unref(gm->proto);
  free(gm);
}

/* The main loop lets go of the config it held for the member's filter. */
static void
gm_free_main(void *data)
{
  struct bgp_gmember *gm = data;
  config_unref(gm->config);
  gm_free(gm);
}

void
gm_unref(struct bgp_gmember *gm)
{
  if (uatomic_sub_return(&gm->refs, 1))
    return;
  if (!gm->config_held) {
    gm_free(gm);
    return;
  }
  /* main_ev ran the join long ago */
  ev_init(&gm->main_ev, gm_free_main, gm);
  ev_send(main_loop(), &gm->main_ev);
}

void
gm_request(struct bgp_gmember *gm, u32 req)
{
  __atomic_fetch_or(&gm->req, req, __ATOMIC_SEQ_CST);
  ev_send(gm->group->p.loop, &gm->ev);
}

/* --- The group's loop: who a route came from --- */

static int
gm_proto_eq(const struct hash_node *n, const void *key)
{
  return container_of(n, struct bgp_gmember, hn)->proto == key;
}

/* The member route r was learned from, 0 when none. */
u32
group_src_member(struct bgp_group *g, const struct rte *r, struct bgp_gmember **gmp)
{
  const void *sp = rte_src(r)->proto;
  struct hash_node *n = hash_find(&g->by_proto, hash_ptr(sp), gm_proto_eq, sp);
  if (!n)
    return 0;
  *gmp = container_of(n, struct bgp_gmember, hn);
  return (*gmp)->id;
}

/* --- The group's loop: flushing and flow --- */

static void group_handover(struct bgp_group *g, struct bgp_gmember **gm, uint n, int skip);
static void group_member_delist(struct bgp_group *g, struct bgp_gmember *gm);

/* What waits goes into the log; what every member has read goes. */
static void
group_pack(struct bgp_group *g)
{
  tm_stop(&g->settle);
  group_step_run(g);
  if (bgp_gout_flush(g->out))
    bgp_txlog_publish(g->log);
  bgp_txlog_trim(g->log);
}

static void
group_log_let_go(struct bgp_group *g, struct bgp_gmember *gm)
{
  log_msg(L_WARN, "%s: Too slow for update group %s (%s), exports alone", gm->name, g->name, gm->cc->name);
}

/* Members that fell GROUP_LAG_EVICT behind the log's end, less for a
 * small table (a peer that reads slowly or not at all), are let go: they
 * pass over the rest of the log and export alone, so the log stops
 * growing with them. The group reads on as long as its fastest member
 * does (group_busy). */
static void
group_evict(struct bgp_group *g)
{
  u64 routes = uatomic_read(&g->c->stats.exp_routes);
  u64 limit = MIN(MAX(routes * GROUP_EVICT_PER_ROUTE, GROUP_LAG_EVICT_MIN), GROUP_LAG_EVICT);
  if (bgp_txlog_held(g->log) <= limit)
    return;
  /* those joined go together: one walk for their maps */
  uint members = 0, slow = 0;
  LIST_WALK_ENTRY(gm, &g->members, struct bgp_gmember, n)
    members++;
  struct bgp_gmember **gone = mb_alloc(g->p.run_pool, MAX(members, 1U) * sizeof(*gone));
  LIST_WALK_ENTRY_SAFE(gm, &g->members, struct bgp_gmember, n) {
    int state = uatomic_read(&gm->state);
    if ((state != GM_JOINED && state != GM_MARKER) || bgp_txlog_lag(g->log, &gm->cur) <= limit)
      continue;
    if (state == GM_JOINED)
      gone[slow++] = gm;
    else if (uatomic_cmpxchg(&gm->state, GM_MARKER, GM_CANCELLED) == GM_MARKER) {
      /* It still exports alone, and has not sent its own yet: it stays
       * alone, and its cursor goes once it has seen this */
      group_member_delist(g, gm);
      log_msg(L_WARN, "%s: Too slow to join update group %s (%s)", gm->name, g->name, gm->cc->name);
      bgp_txlog_wake(g->log, &gm->cur);
    }
  }
  if (slow)
    group_handover(g, gone, slow, 1);
  mb_free(gone);
  /* One handed over that its peer does not let get to the hand-over's
   * end holds the log as much: it passes over the rest of it. One that
   * took over already (LEAVING, its leave on the way) reads no more. */
  LIST_WALK_ENTRY(gm, &g->handing, struct bgp_gmember, n)
    if (uatomic_read(&gm->state) == GM_HANDOVER && !uatomic_read(&gm->h_skip) &&
        bgp_txlog_lag(g->log, &gm->cur) > limit) {
      uatomic_set(&gm->h_skip, 1);
      group_log_let_go(g, gm);
      bgp_txlog_wake(g->log, &gm->cur);
    }
}

/* A member's channel shows the group's counters, taken when it next
 * sends (gm_stats). Changes that went to nobody (every class's filter
 * rejected them, or the group's rules did) publish nothing to wake it:
 * wake every member for them (GROUP_STATS_WAKE later), unless a
 * publication just did. */
static void
group_stats_wake(struct bgp_group *g, bool published)
{
  const struct channel_stats *s = &g->c->stats;
  u64 seen = uatomic_read(&s->exp_updates_received) + uatomic_read(&s->exp_withdraws_received);
  if (seen == g->stats_seen)
    return;
  g->stats_seen = seen;
  if (!published && !tm_active(&g->stats_tm))
    tm_start(&g->stats_tm, GROUP_STATS_WAKE);
}

static void
group_stats_hook(struct timer *t)
{
  struct bgp_group *g = t->data;
  bgp_txlog_wake_all(g->log);
}

void
group_flush(struct bgp_group *g)
{
  u64 end = bgp_txlog_end(g->log);
  group_pack(g);
  group_evict(g);
  group_stats_wake(g, bgp_txlog_end(g->log) != end);
}

static void
group_flush_hook(void *data)
{
  group_flush(data);
}

static void
group_settle_hook(struct timer *t)
{
  group_flush(t->data);
}

/* Pack now when enough waits, else soon. */
void
group_settle(struct bgp_group *g)
{
  uint n = bgp_gout_pending(g->out);
  if (n >= GROUP_SETTLE_PREFIXES)
    group_flush(g);
  else if (n && !tm_active(&g->settle))
    tm_start(&g->settle, GROUP_SETTLE);
  else if (!n)
    group_stats_wake(g, false);
}

/* Everyone has plenty to send: read no further for now. For the channel
 * (export_busy) that is 1 when the member closest to the end waits for
 * its peer to read, 2 when it may only wait for the CPU (which imports
 * take: the group may go on holding them off). */
int
group_busy(struct bgp_group *g)
{
  if (bgp_gout_pending(g->out) >= BGP_GOUT_PENDING_MAX)
    group_flush(g);
  /* no one lags more than the log holds: most often no walk of members */
  int blocked = 0;
  if (bgp_txlog_held(g->log) <= GROUP_LAG_PAUSE || bgp_txlog_min_lag(g->log, &blocked) <= GROUP_LAG_PAUSE)
    return 0;
  uatomic_set(&g->paused, 1);
  /* a member may have drained between the test and the flag (the
   * barrier pairs with the member's, in bgp_group_tx()) */
  cmm_smp_mb();
  if (bgp_txlog_min_lag(g->log, NULL) <= GROUP_LAG_RESUME)
    ev_schedule(&g->resume_ev);
  return blocked ? 1 : 2;
}

static int
group_export_busy(struct proto *pp, struct channel *c UNUSED)
{
  return group_busy((struct bgp_group *) pp);
}

static void
group_resume_hook(void *data)
{
  struct bgp_group *g = data;
  if (!uatomic_read(&g->paused) || bgp_txlog_min_lag(g->log, NULL) > GROUP_LAG_RESUME)
    return;
  uatomic_set(&g->paused, 0);
  ev_schedule(&g->c->export_ev);
  ev_schedule(&g->feed_ev);
}

/* --- The group's loop: export --- */

static int
group_preexport(struct channel *c, const struct rte *r)
{
  struct bgp_group *g = (struct bgp_group *) c->proto;
  uint wk = bgp_wk_communities(rte_attrs(r));
  if (!g->key.llgr_peer && (wk & BGP_WK_LLGR_STALE))
    return -1;
  return bgp_rules_export_ok(&g->peer, bgp_src_peer(r), rte_attrs(r), wk) ? 0 : -1;
}

static void
group_rt_notify(struct proto *pp, struct channel *c UNUSED, const net_addr *n, struct rte *new, struct rte *old,
                const struct ea_list *new_src)
{
  /* Once `graceful restart` was ordered nothing goes out (bgp_rt_notify). */
  if (!gr_shutdown_requested())
    group_step_change((struct bgp_group *) pp, n, new, old, new_src);
}

/* The pending change of each net is looked up in a hash as big as the
 * changes since the last flush: a cache miss per change, in the loop
 * every member waits for. */
static void
group_rt_notify_ahead(struct proto *pp, const net_addr *n)
{
  bgp_gout_ahead(((struct bgp_group *) pp)->out, n);
}

static void
group_export_flush(struct proto *pp, struct channel *c UNUSED)
{
  group_step_run((struct bgp_group *) pp);
  group_settle((struct bgp_group *) pp);
  group_marker_check((struct bgp_group *) pp);
}

/* The group's own feed ended: members waiting for it get their End-of-RIB. */
static void
group_feed_end(struct channel *c)
{
  struct bgp_group *g = (struct bgp_group *) c->proto;
  /* the feed's last changes go out before any End-of-RIB: a flush writes
   * raw messages ahead of the changes beside them */
  group_flush(g);
  LIST_WALK_ENTRY(gm, &g->members, struct bgp_gmember, n)
    group_eor_check(g, gm);
  group_flush(g);
  group_marker_check(g);
  ev_schedule(&g->feed_ev);     /* members moving quietly waited for it */
}

/* --- The group's loop: members come and go --- */

static void
group_unref(struct bgp_group *g)
{
  if (!uatomic_sub_return(&g->refs, 1))
    ev_send(main_loop(), &g->close_ev);
}

/* Its class, then its cursor in the log: right after a pack (a class
 * made now may have the id of one gone). */
static void
group_member_cursor(struct bgp_group *g, struct bgp_gmember *gm, u32 id)
{
  group_class_enter(g, gm);
  bgp_txlog_join(g->log, &gm->cur, id, gm->cls->id, gm->loop, gm->wake);
}

/* Into the group's lists. */
static void
group_member_list(struct bgp_group *g, struct bgp_gmember *gm, u32 id)
{
  gm->id = id;
  gm->listed = 1;
  list_add_tail(&g->members, &gm->n);
  hash_insert(&g->by_proto, &gm->hn, hash_ptr(gm->proto));
  group_class_look(g);
}

/* It gave up before it saw the cursor. */
static void
group_member_drop(struct bgp_group *g, struct bgp_gmember *gm)
{
  group_class_leave(g, gm);
  bgp_txlog_leave(g->log, &gm->cur);
  gm_unref(gm);
  group_unref(g);
}

/* The group's state and the log agree at its reader's journal position
 * once it has packed, unless a feed or a catch-up is under way. */
void
group_marker_check(struct bgp_group *g)
{
  struct channel *c = g->c;
  if (list_empty(&g->marker_wait) || !chan_export_steady(c))
    return;
  /* Those at their position get their cursor and class first, then one
   * count of the new classes for all (their own_base needs their class's
   * routes), then the marker. */
  struct lnode ready;
  list_init(&ready);
  LIST_WALK_ENTRY_SAFE(gm, &g->marker_wait, struct bgp_gmember, mn) {
    if (uatomic_read(&gm->state) == GM_LEAVING) {
      /* it gave up waiting; it never had a cursor */
      list_del(&gm->mn);
      gm->waiting = 0;
      gm_unref(gm);
      group_unref(g);
      continue;
    }
    if (c->reader.seq < gm->m_want)
      continue;
    if (list_empty(&ready))
      group_pack(g);
    list_del(&gm->mn);
    gm->waiting = 0;
    gm->id = ++g->next_id;
    group_member_cursor(g, gm, gm->id);
    gm->m_seq = c->reader.seq;
    list_add_tail(&ready, &gm->mn);
  }
  if (list_empty(&ready))
    return;
  group_class_count(g);
  LIST_WALK_ENTRY_SAFE(gm, &ready, struct bgp_gmember, mn) {
    list_del(&gm->mn);
    gm->m_routes = uatomic_read(&gm->cls->routes);
    if (uatomic_cmpxchg(&gm->state, GM_PENDING, GM_MARKER) != GM_PENDING) {
      group_member_drop(g, gm);
      continue;
    }
    group_member_list(g, gm, gm->id);
    bgp_txlog_wake(g->log, &gm->cur);
  }
}

static void
group_marker_hook(void *data)
{
  group_marker_check(data);
}

static void
group_member_join(struct bgp_group *g, struct bgp_gmember *gm)
{
  if (gm->marker) {
    gm->waiting = 1;
    list_add_tail(&g->marker_wait, &gm->mn);
    /* after the joins queued behind this one: one count for them all */
    ev_schedule(&g->marker_ev);
    return;
  }
  u32 id = ++g->next_id;
  /* the cursor starts after what is pending: the feed's copy of the
   * export map (group_feed_request) is then exactly what gm lacks */
  group_flush(g);
  group_member_cursor(g, gm, id);
  if (uatomic_cmpxchg(&gm->state, GM_PENDING, GM_JOINED) != GM_PENDING) {
    /* it gave up before: it never saw the cursor */
    group_member_drop(g, gm);
    return;
  }
  log_msg(L_TRACE, "%s: Exports through update group %s (%s), export class %u", gm->name, g->name, gm->cc->name,
          gm->cls->id);
  group_member_list(g, gm, id);
  gm->own_due = gm->join_eor >= 2;
  /* Its End-of-RIB (or EoRR), at least, goes into the log: publishing
   * it wakes the member (never woken directly: it may be gone by now). */
  group_feed_request(g, gm, gm->join_eor);
}

static void
group_member_delist(struct bgp_group *g, struct bgp_gmember *gm)
{
  if (gm->handing) {
    gm->handing = 0;
    list_del(&gm->n);
  }
  if (gm->waiting) {
    gm->waiting = 0;
    list_del(&gm->mn);
  }
  if (gm->solo_waiting) {
    gm->solo_waiting = 0;
    list_del(&gm->sn);
  }
  if (!gm->listed)
    return;
  gm->listed = 0;
  group_class_leave(g, gm);
  group_feed_forget(g, gm);
  list_del(&gm->n);
  hash_remove(&g->by_proto, &gm->hn);
}

/* It left the log already (bgp_group_leave). */
static void
group_member_leave(struct bgp_group *g, struct bgp_gmember *gm)
{
  group_member_delist(g, gm);
  gm_unref(gm);
  group_unref(g);
}

/* Each member of gm[0..n) exports alone from now on: it gets the log up
 * to here (or with skip, passes over it) and the group's state here; the
 * group forgets it (its leave follows once it has read that far). */
static void
group_handover(struct bgp_group *g, struct bgp_gmember **gm, uint n, int skip)
{
  group_pack(g);
  for (uint i = 0; i < n; i++) {
    uatomic_set(&gm[i]->h_skip, skip);
    gm[i]->h_end = bgp_txlog_end(g->log);
    gm[i]->h_map = chan_exp_copy(g->c);
    gm[i]->h_owed = chan_catch_up_owed(g->c);
  }
  group_class_peer_maps(g, gm, n);
  for (uint i = 0; i < n; i++) {
    struct bgp_gmember *m = gm[i];
    rt_reader_attach_at(g->c->table, &m->h_pin, m->loop, NULL, &g->c->reader);
    m->h_eor_sent = m->eor_due != 1;
    m->h_eorr = m->eor_due == 2;
    if (uatomic_cmpxchg(&m->state, GM_JOINED, GM_HANDOVER) != GM_JOINED) {
      /* it left first: its leave is on the way */
      rt_reader_detach(&m->h_pin);
      chan_exp_discard(m->h_map);
      chan_catch_up_discard(m->h_owed);
      m->h_map = NULL;
      m->h_owed = NULL;
      continue;
    }
    group_member_delist(g, m);
    m->handing = 1;
    list_add_tail(&g->handing, &m->n);
    if (skip)
      group_log_let_go(g, m);
    else
      log_msg(L_TRACE, "%s: Exports alone, out of update group %s (%s)", m->name, g->name, m->cc->name);
    bgp_txlog_wake(g->log, &m->cur);
  }
}

/* Members that asked to export alone within GROUP_SOLO_WAIT are handed
 * over together: one walk of the table makes all their maps. */
static void
group_solo(struct bgp_group *g)
{
  tm_stop(&g->solo_tm);
  uint n = 0;
  LIST_WALK_ENTRY(gm, &g->solo_wait, struct bgp_gmember, sn)
    n++;
  if (!n)
    return;
  struct bgp_gmember **gms = mb_alloc(g->p.run_pool, n * sizeof(*gms));
  n = 0;
  LIST_WALK_ENTRY_SAFE(gm, &g->solo_wait, struct bgp_gmember, sn) {
    list_del(&gm->sn);
    gm->solo_waiting = 0;
    gms[n++] = gm;
  }
  if (n > 1)
    log_msg(L_TRACE, "Update group %s (%s): %u members export alone, maps in one walk", g->name, g->cc.name, n);
  group_handover(g, gms, n, 0);
  mb_free(gms);
}

static void
group_solo_hook(struct timer *t)
{
  group_solo(t->data);
}

static void
group_member_hook(void *data)
{
  struct bgp_gmember *gm = data;
  struct bgp_group *g = gm->group;
  u32 req = uatomic_xchg(&gm->req, 0);
  if (req & GM_REQ_JOIN)
    group_member_join(g, gm);       /* may drop gm: then nothing else was asked */
  else if (req & GM_REQ_LEAVE)
    group_member_leave(g, gm);
  else {
    /* a refresh first: a hand-over with it passes its EoRR on */
    if ((req & GM_REQ_REFEED) && gm->listed)
      group_feed_request(g, gm, (req & GM_REQ_EORR) ? 2 : 0);
    if ((req & GM_REQ_SOLO) && gm->listed && !gm->solo_waiting) {
      gm->solo_waiting = 1;
      list_add_tail(&g->solo_wait, &gm->sn);
      if (req & GM_REQ_SOLO_NOW)
        group_solo(g);
      else if (!tm_active(&g->solo_tm))
        tm_start(&g->solo_tm, GROUP_SOLO_WAIT);
    }
  }
}

static void
group_start_hook(void *data)
{
  struct bgp_group *g = data;
  hash_init(&g->by_proto, g->p.run_pool, 4);
  list_init(&g->members);
  list_init(&g->marker_wait);
  list_init(&g->handing);
  list_init(&g->solo_wait);
  struct bgp_tx_ctx tx = { .as4 = g->key.as4, .max_len = g->key.max_len };
  tx.ext_next_hop[g->key.af] = g->key.ext_next_hop;
  g->out = bgp_gout_new(g->p.run_pool, &tx, g->key.af, g->log);
  g->ftmp = lp_new(g->p.run_pool);
  channel_up(g->c);
}

static void
group_stop_hook(void *data)
{
  struct bgp_group *g = data;
  channel_pause(g->c);
  group_feed_stop(g);
  tm_stop(&g->settle);
  tm_stop(&g->count_tm);
  tm_stop(&g->solo_tm);
  tm_stop(&g->stats_tm);
  bgp_gout_free(g->out);
  g->out = NULL;
  group_step_free(g);
  group_class_free(g);
  loop_stop(g->p.loop, &g->done_ev);
}

/* --- Main loop: the registry --- */

static int
group_key_equal(const struct bgp_group_key *a, const struct bgp_group_key *b)
{
  return a->table == b->table && a->prof_id == b->prof_id && a->max_len == b->max_len && a->af == b->af &&
         a->as4 == b->as4 && a->ext_next_hop == b->ext_next_hop && a->rr_client == b->rr_client &&
         a->interpret_communities == b->interpret_communities && a->llgr_peer == b->llgr_peer;
}

static void
group_done_hook(void *data)
{
  struct bgp_group *g = data;
  channel_free(g->c);
  bgp_txlog_free(g->log);
  bgp_export_profile_put(g->xprof);
  config_unref(g->config);
  rfree(g->p.pool);
  config_shutdown_release();
}

/* No member any more: unless one joined since, take the group apart. */
static void
group_close_hook(void *data)
{
  struct bgp_group *g = data;
  if (uatomic_read(&g->refs))
    return;
  list_del(&g->n);
  ev_send(g->p.loop, &g->stop_ev);
}

static struct bgp_group *
group_new(struct bgp_gmember *gm)
{
  pool *pl = rp_new(root_pool(), MEM_PROTOCOLS, "BGP update group");
  struct bgp_group *g = mb_allocz(pl, sizeof(*g));
  bsnprintf(g->name, sizeof(g->name), "bgp_group%u", ++bgp_group_seq);
  g->p.class = &bgp_group_class;
  g->p.name = g->name;
  g->p.pool = pl;
  g->p.run_pool = rp_new_child(pl, "run");
  list_init(&g->p.channels);
  g->p.loop = loop_new(thread_group_sched(NULL), g->name);
  g->par = thread_group_par(thread_group_sched(NULL));
  g->key = gm->key;
  config_ref(gm->config);
  g->config = gm->config;
  /* The members' channel, exporting only: no import table or filter,
   * nothing kept, no limits (those keep a session out of groups). */
  g->cc = *gm->cc;
  g->cc.out_filter = FILTER_ACCEPT;
  g->cc.in_filter = FILTER_REJECT;
  g->cc.import_table = g->cc.export_table = 0;
  g->cc.in_keep_filtered = 0;
  g->cc.rpki_reload = 0;        /* no member's filter reads a table (gm_eligible) */
  g->c = channel_new(&g->p, &g->cc);
  g->xprof = bgp_export_profile_get(&gm->xprof->prof);
  /* The export rules read the receiving side's profile and these */
  g->peer = gm->peer;
  g->peer.gen = 0;
  g->peer.remote_id = 0;
  g->peer.remote_ip = IPA_NONE;
  g->peer.remote_as = 0;
  g->log = bgp_txlog_new();
  tm_init(&g->settle, g->p.loop, group_settle_hook, g);
  tm_init(&g->count_tm, g->p.loop, group_class_count_hook, g);
  tm_init(&g->solo_tm, g->p.loop, group_solo_hook, g);
  tm_init(&g->stats_tm, g->p.loop, group_stats_hook, g);
  ev_init(&g->start_ev, group_start_hook, g);
  ev_init(&g->stop_ev, group_stop_hook, g);
  ev_init(&g->flush_ev, group_flush_hook, g);
  ev_init(&g->resume_ev, group_resume_hook, g);
  ev_init(&g->feed_ev, group_feed_hook, g);
  ev_init(&g->marker_ev, group_marker_hook, g);
  ev_init(&g->close_ev, group_close_hook, g);
  ev_init(&g->done_ev, group_done_hook, g);
  list_add_tail(&bgp_groups, &g->n);
  config_shutdown_hold();
  ev_send(g->p.loop, &g->start_ev);
  return g;
}

void
group_join_main(void *data)
{
  struct bgp_gmember *gm = data;
  if (uatomic_read(&gm->state) == GM_LEAVING) {
    gm_unref(gm);
    return;
  }
  config_ref(gm->config);
  gm->config_held = 1;
  struct bgp_group *g = NULL;
  LIST_WALK_ENTRY(x, &bgp_groups, struct bgp_group, n)
    if (group_key_equal(&x->key, &gm->key)) {
      g = x;
      break;
    }
  if (!g)
    g = group_new(gm);
  uatomic_inc(&g->refs);
  gm->group = g;
  ev_init(&gm->ev, group_member_hook, gm);
  gm_request(gm, GM_REQ_JOIN);
}

static const struct proto_class bgp_group_class = {
  .name = "BGP group",
  .class_id = 5,
  .preexport = group_preexport,
  .rt_notify = group_rt_notify,
  .rt_notify_ahead = group_rt_notify_ahead,
  .export_busy = group_export_busy,
  .export_flush = group_export_flush,
  .feed_end = group_feed_end,
};
