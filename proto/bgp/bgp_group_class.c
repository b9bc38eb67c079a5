/*
 * DOC: Update groups: export classes, grouping by filter result.
 *
 * A route server gives every client its own export filter. Groups keyed by
 * the filter would be groups of one. Instead, members whose filters read
 * only the route share a group whatever their filters, each filter making
 * an export class: per change of the table, the group runs each class's
 * filter on the new route (and on the old one: which classes had it) and
 * computes the attributes of each class's result. The flush sends every
 * distinct result once, its log entry naming the classes that get it
 * (bgp_gout.h, bgp_txlog.h). Filters are functions of the route, so a
 * class's verdict on a route is the same whenever it is asked; that is
 * what lets the group keep no per-class record of what went out.
 *
 * Class ids are small and reused. A new class is only made right after a
 * flush, when nothing pending names an old class of that id, and its
 * members' cursors start at the log's end.
 *
 * Owner: the group's loop.
 */
#include <string.h>
#include "proto/bgp/bgp_group_int.h"
#include "filter/filter.h"

static bool cls_run(struct bgp_group *g, struct group_class *k, const net_addr *n, const struct rte *r,
                    const struct ea_list *src, struct ea_list **out, struct ea_list **base);

static uint
cls_words(uint count)
{
  return (count + 31) / 32;
}

static void
cls_bit(u32 *set, u32 k, bool on)
{
  if (on)
    set[k / 32] |= 1U << (k % 32);
  else
    set[k / 32] &= ~(1U << (k % 32));
}

static bool
cls_has(const u32 *set, u32 k)
{
  return set[k / 32] & (1U << (k % 32));
}

/* Room for class id k: the bitmap grows by words, never while anything
 * is pending (the caller has packed). */
static void
cls_room(struct bgp_group *g, uint k)
{
  if (k < g->cls_size)
    return;
  uint size = MAX(32U, 2 * g->cls_size);
  struct group_class **cls = mb_allocz(g->p.run_pool, size * sizeof(*cls));
  u32 *live = mb_allocz(g->p.run_pool, cls_words(size) * sizeof(u32));
  if (g->cls_size) {
    memcpy(cls, g->cls, g->ncls * sizeof(*cls));
    memcpy(live, g->live, cls_words(g->cls_size) * sizeof(u32));
    mb_free(g->cls);
    mb_free(g->live);
  }
  g->cls = cls;
  g->live = live;
  g->cls_size = size;
}

/* What a new class gets of what the group exports now: from here on
 * each change counts, and a change takes back what the route it replaces
 * counted. One run of the filter per exported route, as the class's feed
 * takes anyway. */
static void
cls_count(struct bgp_group *g, struct group_class *k)
{
  if (k->filter == FILTER_ACCEPT) {
    uatomic_set(&k->routes, uatomic_read(&g->c->stats.exp_routes));
    return;
  }
  u32 count = 0;
  rcu_read_lock();
  for (struct net *n = uatomic_read(&g->c->stats.exp_routes) ? rt_feed_first(g->c->table) : NULL; n;
       n = rt_feed_next(n)) {
    struct rte *e = chan_net_exported(g->c, n);
    count += e && cls_run(g, k, &n->n, e, e->attrs, NULL, NULL);
  }
  rcu_read_unlock();
  uatomic_set(&k->routes, count);
}

void
group_class_enter(struct bgp_group *g, struct bgp_gmember *gm)
{
  struct group_class *k = NULL;
  for (uint i = 0; i < g->ncls && !k; i++)
    if (g->cls[i]->members && (g->cls[i]->filter == gm->filter || filter_same(g->cls[i]->filter, gm->filter)))
      k = g->cls[i];
  if (!k) {
    /* the lowest free id: the log's bitmaps stay short */
    for (uint i = 0; i < g->ncls && !k; i++)
      if (!g->cls[i]->members)
        k = g->cls[i];
    if (!k) {
      cls_room(g, g->ncls);
      k = mb_allocz(g->p.run_pool, sizeof(*k));
      k->id = g->ncls;
      g->cls[g->ncls++] = k;
    }
    k->filter = gm->filter;
    k->owner = gm;
    uatomic_set(&k->routes, 0);
    cls_bit(g->live, k->id, true);
    bgp_gout_classes(g->out, g->ncls, g->live);
    cls_count(g, k);
  }
  k->members++;
  gm->cls = k;
  gm->in_class = 1;
}

void
group_class_leave(struct bgp_group *g, struct bgp_gmember *gm)
{
  struct group_class *k = gm->cls;
  if (!gm->in_class)
    return;
  gm->in_class = 0;
  if (--k->members) {
    /* its filter lives in the config of a member still in it */
    if (k->owner == gm)
      LIST_WALK_ENTRY(o, &g->members, struct bgp_gmember, n)
        if (o != gm && o->cls == k) {
          k->owner = o;
          k->filter = o->filter;
          break;
        }
    return;
  }
  k->owner = NULL;
  k->filter = NULL;
  cls_bit(g->live, k->id, false);
}

void
group_class_free(struct bgp_group *g)
{
  if (!g->cls_size)
    return;
  for (uint i = 0; i < g->ncls; i++)
    mb_free(g->cls[i]);
  mb_free(g->cls);
  mb_free(g->live);
  g->cls_size = g->ncls = 0;
}

/* Does class k take route r (of net n)? With out, also what it sends
 * (NULL: nothing), with a reference; base caches the attributes of r
 * unchanged by a filter. */
static bool
cls_run(struct bgp_group *g, struct group_class *k, const net_addr *n, const struct rte *r,
        const struct ea_list *src, struct ea_list **out, struct ea_list **base)
{
  struct ea_list *mod = NULL;
  if (k->filter != FILTER_ACCEPT) {
    struct f_route fr = { .net = n, .attrs = r->attrs, .src = r->src };
    if (!f_run_export(k->filter, &fr, g->ftmp))
      return false;
    mod = fr.out;
  }
  if (!out) {
    if (mod)
      ea_unref(mod);
    return true;
  }
  struct ea_list *a;
  if (mod) {
    struct rte tmp = *r;
    tmp.attrs = mod;
    a = bgp_export_attrs_get(g->xprof, &tmp, bgp_med_fresh(mod, src));
    if (a)
      ea_ref(a);
    ea_unref(mod);
  } else {
    if (!*base)
      *base = bgp_export_attrs_get(g->xprof, r, bgp_med_fresh(r->attrs, src));
    a = *base ? ea_ref(*base) : NULL;
  }
  *out = a;
  return true;
}

static void
cls_drop(struct ea_list **now, uint count)
{
  for (uint i = 0; i < count; i++)
    if (now[i])
      ea_unref(now[i]);
}

void
group_class_change(struct bgp_group *g, const net_addr *n, const struct rte *new, const struct rte *old,
                   const struct ea_list *new_src)
{
  struct bgp_gmember *now_gm = NULL, *was_gm = NULL;
  u32 now_src = new ? group_src_member(g, new, &now_gm) : 0;
  u32 was_src = old ? group_src_member(g, old, &was_gm) : 0;
  linpool *lp = loop_tmp();
  uint count = g->ncls;
  struct ea_list **now = lp_allocz(lp, count * sizeof(*now));
  u32 *had = lp_allocz(lp, cls_words(count) * sizeof(u32));
  struct ea_list *base = NULL;
  bool any = false;
  for (uint i = 0; i < count; i++) {
    struct group_class *k = g->cls[i];
    if (!k->members)
      continue;
    /* old went out before, to the classes that took it: the same verdict now */
    bool took = old && cls_run(g, k, n, old, old->attrs, NULL, NULL);
    bool takes = new && cls_run(g, k, n, new, new_src, &now[i], &base);
    cls_bit(had, i, took);
    any |= took || now[i];
    if (took != takes)
      uatomic_set(&k->routes, uatomic_read(&k->routes) + (takes ? 1 : -1));
    /* a member's own routes it never gets: its channel counts the class's
     * routes but those */
    if (now_gm && now_gm->cls == k && takes)
      uatomic_set(&now_gm->own_routes, uatomic_read(&now_gm->own_routes) + 1);
    if (was_gm && was_gm->cls == k && took)
      uatomic_set(&was_gm->own_routes, uatomic_read(&was_gm->own_routes) - 1);
  }
  if (any)
    bgp_gout_change_classes(g->out, n, now, now_src, now_gm ? now_gm->cls->id : 0, had, was_src);
  cls_drop(now, count);
}

u32 *
group_class_cohort(struct bgp_group *g, u32 cohort, uint *count)
{
  *count = g->ncls;
  u32 *set = mb_allocz(g->p.run_pool, cls_words(MAX(g->ncls, 1U)) * sizeof(u32));
  LIST_WALK_ENTRY(gm, &g->members, struct bgp_gmember, n)
    if (gm->walk == cohort)
      cls_bit(set, gm->cls->id, true);
  return set;
}

void
group_class_feed(struct bgp_group *g, const net_addr *n, const struct rte *exp, const struct ea_list *src, u32 but)
{
  const struct group_walk *w = &g->walk;
  linpool *lp = loop_tmp();
  uint count = g->ncls;
  struct ea_list **now = lp_allocz(lp, count * sizeof(*now));
  struct ea_list *base = NULL;
  /* a class made during the walk has none of the cohort */
  for (uint i = 0; i < w->nclasses; i++)
    if (cls_has(w->classes, i) && g->cls[i]->members)
      cls_run(g, g->cls[i], n, exp, src, &now[i], &base);
  bgp_gout_feed_classes(g->out, n, now, g->walk.cohort, but);
  cls_drop(now, count);
}
