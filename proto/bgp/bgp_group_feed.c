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
 * A member moving quietly (bgp_group_int.h: its filter changed, its peer
 * takes no enhanced route refresh to purge by) holds what its old class
 * had at its hand-over, p_map. The walk withdraws from it each net whose
 * route there it holds and its new class does not get from the group
 * now (its filter rejects the route, the group exports none, or the
 * route is the member's own); the nets whose route changed since the
 * hand-over come from its pin's journal at the walk's end. A withdrawal
 * too many does no harm: whatever the class gets later comes through the
 * log after it. So the walk visits every net while such a member is in
 * its cohort, not only those the group had exported.
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
  struct group_walk *w = &g->walk;
  for (uint i = 0; i < w->nmoved; i++)
    if (w->moved[i] == gm)
      w->moved[i--] = w->moved[--w->nmoved];
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
  uint len = 0;
  if (gm->eor_due == 3)
    ;                           /* a quiet move: the peer had its End-of-RIB */
  else if (gm->eor_due == 2) {
    struct bgp_route_refresh rr = { .afi = bgp_af_afi(g->key.af), .subtype = BGP_RR_END, .safi = BGP_SAFI_UNICAST };
    len = bgp_route_refresh_encode(buf, sizeof(buf), &rr);
  } else
    len = bgp_update_encode_eor(g->key.af, buf, sizeof(buf));
  if (len)
    bgp_gout_raw(g->out, gm->id, buf, len);
  gm->eor_due = 0;
}

/* Members that came into a group with routes of their own in the table
 * (a regroup, a quiet move: own_due) count those their class
 * gets from what the group exports now (their channels count the class's
 * routes but those); the changes count from here on. One walk for the
 * cohort, at its start: just after a flush, the export map is now. */
static void
group_count_own(struct bgp_group *g, uint count)
{
  if (!count)
    return;
  rcu_read_lock();
  for (struct net *n = rt_feed_first(g->c->table); n; n = rt_feed_next(n)) {
    struct rte *exp = chan_net_exported(g->c, n);
    struct bgp_gmember *gm;
    if (exp && group_src_member(g, exp, &gm) && gm->walk == g->walk.cohort && gm->own_due &&
        group_class_takes(g, gm->cls, &n->n, exp))
      gm->own_count++;
  }
  rcu_read_unlock();
  LIST_WALK_ENTRY(gm, &g->members, struct bgp_gmember, n)
    if (gm->walk == g->walk.cohort && gm->own_due) {
      uatomic_set(&gm->own_routes, gm->own_count);
      gm->own_due = 0;
    }
}

/* Does gm go into the next cohort? Members moving quietly wait for the
 * group's own feed (a new group's, later): its map lacks what it has yet
 * to send, which they would see withdrawn, then announced again
 * (group_feed_end starts their walk). */
static inline bool
walk_now(const struct bgp_gmember *gm, bool later)
{
  return gm->feed_wanted && !(later && gm->p_map);
}

/* A cohort of every member waiting; 0 when none waits. */
static int
group_walk_start(struct bgp_group *g)
{
  struct group_walk *w = &g->walk;
  bool later = g->c->feeding;
  uint count = 0, waiting = 0;
  LIST_WALK_ENTRY(gm, &g->members, struct bgp_gmember, n) {
    count += walk_now(gm, later);
    waiting += gm->feed_wanted && !walk_now(gm, later);
  }
  if (!count)
    return 0;
  /* what an earlier walk sent leaves first: a net once per flush */
  group_flush(g);
  u32 *ids = lp_alloc(loop_tmp(), count * sizeof(u32));
  w->cohort = ++w->seq;
  w->members = 0;
  w->moved = mb_alloc(g->p.run_pool, count * sizeof(*w->moved));
  w->nmoved = 0;
  uint own = 0;
  LIST_WALK_ENTRY(gm, &g->members, struct bgp_gmember, n)
    if (walk_now(gm, later)) {
      gm->feed_wanted = 0;
      gm->walk = w->cohort;
      ids[w->members++] = gm->id;
      if (gm->p_map)
        w->moved[w->nmoved++] = gm;
      gm->own_count = 0;
      own += gm->own_due;
    }
  bgp_gout_define(g->out, w->cohort, ids, count);
  w->classes = group_class_cohort(g, w->cohort, &w->nclasses);
  /* after ids are used: the filters run on the loop's temporary pool */
  group_count_own(g, own);
  /* their new classes are counted now, not half a second later: a
   * `configure` is over once their walks are */
  if (w->nmoved)
    group_class_count(g);
  w->map = w->next;
  /* those left for later lack no more than the export map has now */
  w->next = waiting ? chan_exp_copy(g->c) : NULL;
  rt_reader_attach(g->c->table, &w->pin, g->p.loop, NULL);
  /* nothing had gone out: nothing to walk for, but what moving members hold */
  w->last = chan_exp_count(w->map) || w->nmoved ? rt_feed_last(g->c->table) : NULL;
  w->started = 0;
  return 1;
}

/* Did gm's peer hold r from its old class at the hand-over? */
static inline bool
moved_held(const struct bgp_gmember *gm, const struct rte *r)
{
  return r && chan_exp_map_bit(gm->p_map, r->id);
}

/* gm's peer may hold a route of n from its old class: withdraw it, unless
 * its new class gets exp, the route the group exports for n now (the feed
 * or the log brings it). */
static void
moved_withdraw(struct bgp_group *g, struct bgp_gmember *gm, const net_addr *n, const struct rte *exp)
{
  if (exp && rte_src(exp)->proto != gm->proto && group_class_takes(g, gm->cls, n, exp))
    return;
  bgp_gout_feed_withdraw(g->out, n, gm->id);
}

const net_addr *
gm_moved_next(struct bgp_gmember *gm, struct rtable *t, struct net **now)
{
  for (const struct rt_journal_item *it; (it = rt_reader_next(&gm->p_pin));) {
    if (!moved_held(gm, it->old_best) && !moved_held(gm, it->retired))
      continue;
    /* the net may have emptied since, and its prefix be another's */
    *now = rcu_dereference(it->net->routes) ? it->net : rt_find_net(t, &it->net->n);
    return &it->net->n;
  }
  return NULL;
}

void
gm_moved_drop(struct bgp_gmember *gm)
{
  rt_reader_detach(&gm->p_pin);
  chan_exp_discard(gm->p_map);
  gm->p_map = NULL;
}

/* What the pin of a member moving quietly met since its hand-over: the
 * nets whose route its peer holds from its old class changed since, and
 * the walk may have found another route there, or none. Then its map and
 * pin go. */
static void
group_moved_journal(struct bgp_group *g, struct bgp_gmember *gm)
{
  rcu_read_lock();
  struct net *n;
  for (const net_addr *a; (a = gm_moved_next(gm, g->c->table, &n));)
    moved_withdraw(g, gm, a, n ? chan_net_exported(g->c, n) : NULL);
  rcu_read_unlock();
  gm_moved_drop(gm);
}

/* A net the walk does not feed: a member moving quietly that holds its
 * route (the one best now, unchanged since its hand-over, or the one the
 * group exports) gets a withdrawal unless its class gets exp, the route
 * the group exports now, from the log (it came after the member's cursor,
 * or a change of it waits for the flush). */
static void
group_moved_direct(struct bgp_group *g, struct net *n, struct rte *exp)
{
  struct group_walk *w = &g->walk;
  const struct rte *best = net_best(n);
  for (uint i = 0; i < w->nmoved; i++)
    if (moved_held(w->moved[i], best) || moved_held(w->moved[i], exp))
      moved_withdraw(g, w->moved[i], &n->n, exp);
}

void
group_feed_moved(struct bgp_group *g, const net_addr *n, const struct rte *exp, u32 but,
                 struct ea_list *const *now)
{
  struct group_walk *w = &g->walk;
  for (uint i = 0; i < w->nmoved; i++) {
    struct bgp_gmember *gm = w->moved[i];
    /* the feed sends it its class's route; one of its own it never had */
    if ((now[gm->cls->id] && gm->id != but) || !moved_held(gm, exp))
      continue;
    bgp_gout_feed_withdraw(g->out, n, gm->id);
  }
}

static void
group_walk_end(struct bgp_group *g)
{
  struct group_walk *w = &g->walk;
  for (uint i = 0; i < w->nmoved; i++)
    group_moved_journal(g, w->moved[i]);
  mb_free(w->moved);
  w->moved = NULL;
  w->nmoved = 0;
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
  /* the moving members' maps and pins are gm_free()'s */
  mb_free(w->moved);
  w->moved = NULL;
  w->nmoved = 0;
}

static void
group_walk_net(struct bgp_group *g, struct net *n)
{
  struct group_walk *w = &g->walk;
  struct rte *exp = chan_net_exported(g->c, n);
  if (!exp || !chan_exp_map_bit(w->map, exp->id) || bgp_gout_changed(g->out, &n->n))
    goto moved;
  struct bgp_gmember *src = NULL;
  u32 but = group_src_member(g, exp, &src) && src->walk == w->cohort ? src->id : 0;
  if (but && w->members == 1)
    goto moved;
  struct ea_list *mod = NULL;
  if (chan_export_policy(g->c, &n->n, exp, &mod)) {
    group_step_feed(g, &n->n, exp, mod, but);   /* group_feed_moved() from there */
    return;
  }
  if (mod)
    ea_unref(mod);
moved:
  if (w->nmoved)
    group_moved_direct(g, n, exp);
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
