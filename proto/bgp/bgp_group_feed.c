/*
 * DOC: Update groups: feeding members that join late, together.
 *
 * A member that joins, or asks for everything again (route refresh,
 * `reload out`), needs what the group has exported so far. One walk over
 * the table serves every member that asked by the time it starts (a
 * cohort, bgp_txlog.h); those that ask meanwhile wait for the next. At
 * 100 peers coming up together, a walk per member was most of the
 * daemon's time.
 *
 * What a member lacks is what went into the log before its cursor: so a
 * request flushes what is pending and copies the group's export map
 * (which routes went out) there. The walk sends a net's route if the
 * group exports it now and it was in that copy; a route exported since
 * reached the member through the log (and one replaced since, too). A
 * cohort takes the copy of its last request: everything its earlier
 * members lack is still in it, beside a few routes they got already.
 * The route goes through the policy again (a function of the route), so
 * a member gets what the others got. A net with a change waiting for the
 * flush is left to the flush, which goes to the cohort too. A route
 * learned from a member of the cohort goes to the others in it only. The
 * walk ends at the newest net at its start: a net made later was never
 * sent before.
 *
 * Owner: the group's loop.
 */
#include "proto/bgp/bgp_group_int.h"

void
group_feed_request(struct bgp_group *g, struct bgp_gmember *gm, int eor)
{
  struct group_walk *w = &g->walk;
  if (eor)
    gm->eor_due = eor;
  gm->feed_wanted = 1;
  group_flush(g);
  if (w->next)
    chan_exp_discard(w->next);
  w->next = chan_exp_copy(g->c);
  ev_schedule(&g->feed_ev);
}

void
group_feed_forget(struct bgp_group *g, struct bgp_gmember *gm)
{
  if (gm->walk && gm->walk == g->walk.cohort)
    g->walk.members--;
  gm->walk = 0;
  gm->feed_wanted = 0;
}

void
group_eor_check(struct bgp_group *g, struct bgp_gmember *gm)
{
  if (!gm->eor_due || gm->walk || gm->feed_wanted || g->c->feeding)
    return;
  u8 buf[64];
  uint len;
  if (gm->eor_due == 2) {
    struct bgp_route_refresh rr = { .afi = bgp_af_afi(g->key.af), .subtype = BGP_RR_END, .safi = BGP_SAFI_UNICAST };
    len = bgp_route_refresh_encode(buf, sizeof(buf), &rr);
  } else
    len = bgp_update_encode_eor(g->key.af, buf, sizeof(buf));
  if (len)
    bgp_gout_raw(g->out, gm->id, buf, len);
  gm->eor_due = 0;
}

/* A cohort of every member waiting; 0 when none waits. */
static int
group_walk_start(struct bgp_group *g)
{
  struct group_walk *w = &g->walk;
  uint count = 0;
  LIST_WALK_ENTRY(gm, &g->members, struct bgp_gmember, n)
    count += gm->feed_wanted;
  if (!count)
    return 0;
  /* what an earlier walk sent leaves first: a net once per flush */
  group_flush(g);
  u32 *ids = lp_alloc(loop_tmp(), count * sizeof(u32));
  w->cohort = ++w->seq;
  w->members = 0;
  LIST_WALK_ENTRY(gm, &g->members, struct bgp_gmember, n)
    if (gm->feed_wanted) {
      gm->feed_wanted = 0;
      gm->walk = w->cohort;
      ids[w->members++] = gm->id;
    }
  bgp_gout_define(g->out, w->cohort, ids, count);
  w->classes = group_class_cohort(g, w->cohort, &w->nclasses);
  w->map = w->next;
  w->next = NULL;
  rt_reader_attach(g->c->table, &w->pin, g->p.loop, NULL);
  /* nothing had gone out: nothing to walk for */
  w->last = chan_exp_count(w->map) ? rt_feed_last(g->c->table) : NULL;
  w->started = 0;
  return 1;
}

static void
group_walk_end(struct bgp_group *g)
{
  struct group_walk *w = &g->walk;
  rt_reader_detach(&w->pin);
  chan_exp_discard(w->map);
  w->map = NULL;
  mb_free(w->classes);
  w->classes = NULL;
  u32 cohort = w->cohort;
  w->cohort = 0;
  w->cursor = w->last = NULL;
  LIST_WALK_ENTRY(gm, &g->members, struct bgp_gmember, n)
    if (gm->walk == cohort) {
      gm->walk = 0;
      group_eor_check(g, gm);
    }
}

void
group_feed_stop(struct bgp_group *g)
{
  struct group_walk *w = &g->walk;
  if (w->cohort) {
    rt_reader_detach(&w->pin);
    chan_exp_discard(w->map);
    mb_free(w->classes);
    w->classes = NULL;
  }
  if (w->next)
    chan_exp_discard(w->next);
  w->map = w->next = NULL;
  w->cohort = 0;
}

static void
group_walk_net(struct bgp_group *g, struct net *n)
{
  struct group_walk *w = &g->walk;
  struct rte *exp = chan_net_exported(g->c, n);
  if (!exp || !chan_exp_map_bit(w->map, exp->id) || bgp_gout_changed(g->out, &n->n))
    return;
  struct bgp_gmember *src = NULL;
  u32 but = group_src_member(g, exp, &src) && src->walk == w->cohort ? src->id : 0;
  if (but && w->members == 1)
    return;
  struct ea_list *mod = NULL;
  if (chan_export_policy(g->c, &n->n, exp, &mod))
    group_step_feed(g, &n->n, exp, mod, but);
  else if (mod)
    ea_unref(mod);
}

/* Walk steps within the loop's budget, pausing while the members are
 * behind (group_busy); then the next cohort, if one waits. */
void
group_feed_hook(void *data)
{
  struct bgp_group *g = data;
  struct group_walk *w = &g->walk;
  if (!w->cohort && !group_walk_start(g))
    return;
  rcu_read_lock();
  struct net *n = w->started ? w->cursor : w->last ? rt_feed_first(g->c->table) : NULL;
  w->started = 1;
  struct rt_feed_ahead ahead;
  rt_feed_ahead_start(&ahead, n, w->last);
  for (uint k = 0; n && w->members; k++) {
    if (!(k & 63) && (loop_budget_left() <= 0 || group_busy(g))) {
      w->cursor = n;
      group_step_run(g);        /* the nets kept are the read section's */
      rcu_read_unlock();
      group_settle(g);
      if (!uatomic_read(&g->paused)) {
        loop_yield();
        ev_schedule(&g->feed_ev);
      }
      return;
    }
    group_walk_net(g, n);
    n = n == w->last ? NULL : rt_feed_next(n);
    rt_feed_ahead_step(&ahead);
  }
  group_step_run(g);
  rcu_read_unlock();
  group_walk_end(g);
  group_flush(g);
  ev_schedule(&g->feed_ev);
}
