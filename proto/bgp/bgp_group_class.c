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
#include "lib/hash.h"
#include "filter/filter.h"
#include "lib/par.h"

/* Only the latest few results are compared: a result like none of them
 * is kept again, which costs a lookup, not a wrong answer. */
#define CLS_RESULTS_MATCH 8

static bool cls_run(const struct bgp_group *g, const struct group_class *k, const net_addr *n, const struct rte *r,
                    const struct ea_list *src, struct ea_list **out, struct cls_results *res, linpool *tmp);

static void
cls_arrays_free(struct bgp_group *g)
{
  mb_free(g->cls);
  mb_free(g->live);
  mb_free(g->cls_now);
  mb_free(g->cls_had);
  mb_free(g->cls_takes);
  mb_free(g->cls_res);
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
  u32 *live = mb_allocz(g->p.run_pool, bgp_class_words(size) * sizeof(u32));
  if (g->cls_size) {
    memcpy(cls, g->cls, g->ncls * sizeof(*cls));
    memcpy(live, g->live, bgp_class_words(g->cls_size) * sizeof(u32));
    cls_arrays_free(g);
  }
  g->cls = cls;
  g->live = live;
  g->cls_now = mb_alloc(g->p.run_pool, size * sizeof(*g->cls_now));
  g->cls_had = mb_alloc(g->p.run_pool, bgp_class_words(size) * sizeof(u32));
  g->cls_takes = mb_alloc(g->p.run_pool, bgp_class_words(size) * sizeof(u32));
  g->cls_res = mb_alloc(g->p.run_pool, size * sizeof(*g->cls_res));
  g->cls_size = size;
}

/* Walks of what the group exports now for many classes at once: a count
 * of new classes, or the maps of members handed over. The filters are
 * the cost (about 10 ms per class at 400k routes, the walk itself twice
 * that), so the pool shares them out: each chunk walks every route for
 * its run of the classes. A chunk's tallies are its own, on its stack. */
#define CLS_WALK_CHUNK 32

/* On the group's loop's stack; while par_run() runs, a chunk writes only
 * its classes' routes and their members' maps. */
struct cls_walk {
  struct bgp_group *g;
  struct group_class **k;       /* the classes; NULL: one that takes everything */
  uint nk, per_chunk;
  u32 *routes;                  /* out: what each class takes */
  /* Maps, or NULL: the members of class i are gm[first[i] .. first[i + 1]);
   * from the h_map of each go the routes its class rejects and its own. */
  struct bgp_gmember **gm;
  uint *first;
};

/* The routes a chunk's walk met, by attributes, source and flags, with
 * its classes' verdicts: with pure filters (filter_pure()) a route like
 * one met gets the same. The table holds a few thousand such sets for
 * hundreds of thousands of nets (an UPDATE's prefixes share one).
 * Direct-mapped: a clash runs the filters again. The walk is one read
 * section, so no list met can be freed and its address reused. */
#define CLS_SEEN 8192
struct cls_seen {
  const struct ea_list *attrs;
  const struct rte_src *src;
  u32 flags, takes;
};

static void
cls_walk_chunk(void *ctx, uint chunk, linpool *tmp)
{
  struct cls_walk *w = ctx;
  struct bgp_group *g = w->g;
  uint lo = chunk * w->per_chunk, hi = MIN(lo + w->per_chunk, w->nk);
  u32 tally[CLS_WALK_CHUNK] = { 0 };
  bool pure = true;
  for (uint i = lo; i < hi; i++)
    pure &= !w->k[i] || filter_pure(w->k[i]->filter);
  struct cls_seen *seen = NULL;
  if (pure) {
    seen = mem_alloc_shared(MEM_PROTOCOLS, CLS_SEEN * sizeof(*seen));
    memset(seen, 0, CLS_SEEN * sizeof(*seen));
  }
  rcu_read_lock();
  struct net *n = uatomic_read(&g->c->stats.exp_routes) ? rt_feed_first(g->c->table) : NULL;
  struct rt_feed_ahead ahead;
  rt_feed_ahead_start(&ahead, n, NULL);
  for (; n; n = rt_feed_next(n), rt_feed_ahead_step(&ahead)) {
    struct rte *e = chan_net_exported(g->c, n);
    if (!e)
      continue;
    struct cls_seen *sn = seen ? &seen[(hash_ptr(rte_attrs(e)) ^ hash_ptr(rte_src(e))) & (CLS_SEEN - 1)] : NULL;
    bool known = sn && sn->attrs == rte_attrs(e) && sn->src == rte_src(e) && sn->flags == rte_flags(e);
    u32 now_takes = 0;
    for (uint i = lo; i < hi; i++) {
      bool takes = known ? (sn->takes >> (i - lo)) & 1
                         : !w->k[i] || cls_run(g, w->k[i], &n->n, e, rte_attrs(e), NULL, NULL, tmp);
      now_takes |= (u32) takes << (i - lo);
      tally[i - lo] += takes;
      if (w->gm)
        for (uint j = w->first[i]; j < w->first[i + 1]; j++)
          if (!takes || (const void *) rte_src(e)->proto == w->gm[j]->proto)
            chan_exp_map_drop(w->gm[j]->h_map, e->id);
    }
    if (sn && !known)
      *sn = (struct cls_seen) { .attrs = rte_attrs(e), .src = rte_src(e), .flags = rte_flags(e), .takes = now_takes };
  }
  rcu_read_unlock();
  if (seen)
    mem_free_shared(MEM_PROTOCOLS, seen, CLS_SEEN * sizeof(*seen));
  for (uint i = lo; i < hi; i++)
    w->routes[i] = tally[i - lo];
}

static void
cls_walk_run(struct cls_walk *w)
{
  uint chunks = MAX((w->nk + CLS_WALK_CHUNK - 1) / CLS_WALK_CHUNK, MIN(w->nk, par_width(w->g->par)));
  w->per_chunk = (w->nk + chunks - 1) / chunks;
  w->routes = mb_alloc(w->g->p.run_pool, w->nk * sizeof(u32));
  par_run(w->g->par, (w->nk + w->per_chunk - 1) / w->per_chunk, cls_walk_chunk, w, w->g->ftmp);
}

/* What the classes being counted get of what the group exports now.
 * Their counts so far followed the changes since they were made, which
 * what the group exports now includes; from here on each change counts.
 * One verdict of each class's filter per exported route. */
void
group_class_count(struct bgp_group *g)
{
  tm_stop(&g->count_tm);
  struct cls_walk w = { .g = g, .k = mb_alloc(g->p.run_pool, MAX(g->ncls, 1U) * sizeof(*w.k)) };
  for (uint i = 0; i < g->ncls; i++)
    if (g->cls[i]->counting)
      w.k[w.nk++] = g->cls[i];
  if (w.nk) {
    cls_walk_run(&w);
    for (uint i = 0; i < w.nk; i++)
      uatomic_set(&w.k[i]->routes, w.routes[i]);
    mb_free(w.routes);
    /* a member's channel takes its class's count when it next sends */
    LIST_WALK_ENTRY(gm, &g->members, struct bgp_gmember, n)
      if (gm->in_class && gm->cls->counting)
        ev_send(gm->loop, gm->wake);
    for (uint i = 0; i < w.nk; i++)
      w.k[i]->counting = false;
  }
  mb_free(w.k);
}

void
group_class_peer_maps(struct bgp_group *g, struct bgp_gmember **gm, uint n)
{
  /* the members by class, those in none (NULL: takes everything) too */
  struct cls_walk w = {
    .g = g,
    .k = mb_alloc(g->p.run_pool, n * sizeof(*w.k)),
    .gm = mb_alloc(g->p.run_pool, n * sizeof(*w.gm)),
    .first = mb_alloc(g->p.run_pool, (n + 1) * sizeof(*w.first)),
  };
  uint done = 0;
  for (uint i = 0; i < n; i++) {
    struct group_class *k = gm[i]->in_class ? gm[i]->cls : NULL;
    uint j = 0;
    while (j < w.nk && w.k[j] != k)
      j++;
    if (j < w.nk)
      continue;                 /* its class's members are in already */
    w.first[w.nk] = done;
    w.k[w.nk++] = k;
    for (uint m = i; m < n; m++)
      if ((gm[m]->in_class ? gm[m]->cls : NULL) == k)
        w.gm[done++] = gm[m];
  }
  w.first[w.nk] = done;
  cls_walk_run(&w);
  mb_free(w.routes);
  mb_free(w.k);
  mb_free(w.gm);
  mb_free(w.first);
}

void
group_class_count_hook(struct timer *t)
{
  group_class_count(t->data);
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
    bgp_class_put(g->live, k->id, true);
    uatomic_set(&k->filtered, 0);
    bgp_gout_classes(g->out, g->ncls, g->live);
    if (k->filter == FILTER_ACCEPT) {
      uatomic_set(&k->routes, uatomic_read(&g->c->stats.exp_routes));
      k->counting = false;
    } else {
      uatomic_set(&k->routes, 0);
      k->counting = true;
      if (!tm_active(&g->count_tm))
        tm_start(&g->count_tm, GROUP_COUNT_DELAY);
    }
  }
  if (!k->members++)
    g->nlive++;
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
  g->nlive--;
  k->owner = NULL;
  k->filter = NULL;
  k->counting = false;
  bgp_class_put(g->live, k->id, false);
}

void
group_class_free(struct bgp_group *g)
{
  if (!g->cls_size)
    return;
  for (uint i = 0; i < g->ncls; i++)
    mb_free(g->cls[i]);
  cls_arrays_free(g);
  g->cls_size = g->ncls = g->nlive = 0;
}

/* The group's scratch for one change. */
static struct cls_verdicts
cls_scratch(struct bgp_group *g)
{
  return (struct cls_verdicts) {
    .now = g->cls_now, .had = g->cls_had, .takes = g->cls_takes, .res = { .r = g->cls_res } };
}

/* No result, nothing sent, none had it. */
static void
cls_verdicts_clear(const struct bgp_group *g, struct cls_verdicts *v)
{
  if (!g->ncls)                   /* no arrays before the first class */
    return;
  memset(v->now, 0, g->ncls * sizeof(*v->now));
  memset(v->had, 0, bgp_class_words(g->ncls) * sizeof(u32));
  memset(v->takes, 0, bgp_class_words(g->ncls) * sizeof(u32));
}

static void
cls_results_drop(struct cls_results *res)
{
  for (uint i = 0; i < res->n; i++) {
    ea_unref_many(res->r[i].mod, 1 + res->r[i].extra);
    if (res->r[i].a)
      ea_unref(res->r[i].a);
  }
  res->n = 0;
}

/* Does class k take route r (of net n)? With out, also what it sends
 * (NULL: nothing), valid until res is dropped; without, the filter only
 * gives its verdict. */
static bool
cls_run(const struct bgp_group *g, const struct group_class *k, const net_addr *n, const struct rte *r,
        const struct ea_list *src, struct ea_list **out, struct cls_results *res, linpool *tmp)
{
  struct ea_list *mod = NULL;
  if (k->filter != FILTER_ACCEPT) {
    struct f_route fr = { .net = n, .attrs = rte_attrs(r), .src = rte_src(r), .verdict_only = !out };
    if (!f_run_export(k->filter, &fr, tmp))
      return false;
    mod = fr.out;
  }
  if (!out)
    return true;
  for (uint i = res->n; i > 0 && i + CLS_RESULTS_MATCH > res->n; i--)
    if (res->r[i - 1].mod == mod) {
      /* dropped together: an atomic per class on a list every class
       * shares takes its line from thread to thread (bgp_group_step.c) */
      res->r[i - 1].extra += !!mod;
      *out = res->r[i - 1].a;
      return true;
    }
  struct rte view = rte_view(r, mod);
  /* a reference from the memo's stock: the group's loop drops it, and a
   * helper's atomic add would take the line from it (bgp_group_step.c) */
  struct ea_list *a = bgp_export_attrs_take(g->xprof, &view, src);
  res->r[res->n++] = (struct cls_result) { .mod = mod, .a = a, .extra = 0 };
  *out = a;
  return true;
}

/* Its protocol's mask and its channel's (chan_debug). */
static u32
cls_member_debug_mask(const struct bgp_gmember *gm)
{
  return (uatomic_read(&gm->proto->debug) | uatomic_read(&gm->proto->chan_debug[gm->cc->net_type])) &
         (D_ROUTES | D_FILTERS);
}

void
group_class_look(struct bgp_group *g)
{
  g->traced_gen = uatomic_read(&proto_debug_gen);
  cmm_smp_rmb();                /* then the masks */
  g->traced = 0;
  for (uint i = 0; i < g->ncls; i++)
    g->cls[i]->traced = 0;
  LIST_WALK_ENTRY(gm, &g->members, struct bgp_gmember, n)
    if (gm->in_class) {
      u32 d = cls_member_debug_mask(gm);
      gm->cls->traced |= d;
      g->traced |= d;
    }
}

/* After a debug mask changed anywhere: one atomic read per change. */
static void
cls_look_again(struct bgp_group *g)
{
  if (uatomic_read(&proto_debug_gen) != g->traced_gen)
    group_class_look(g);
}

/* The member's traces, as its own export would print them
 * (chan_export_one), or 0 when it has none on. */
static u32
cls_member_debug(const struct bgp_gmember *gm)
{
  if (!gm->in_class || !gm->cls->traced || uatomic_read(&gm->state) == GM_LEAVING)
    return 0;
  return cls_member_debug_mask(gm);
}

/* What a change did for each traced member: the group's flush sends it
 * for them all. A member never gets its own routes (BGP's rules). */
static void
cls_trace_change(struct bgp_group *g, const net_addr *n, const struct rte *new, const struct rte *old,
                 const struct cls_verdicts *v, const struct bgp_gmember *now_gm, const struct bgp_gmember *was_gm)
{
  LIST_WALK_ENTRY(gm, &g->members, struct bgp_gmember, n) {
    u32 d = cls_member_debug(gm);
    if (!d)
      continue;
    uint i = gm->cls->id;
    /* a verdict again, for traces only: filters are functions of the route */
    bool takes = bgp_class_has(v->takes, i);
    bool new_exp = takes && v->now[i] && now_gm != gm;
    bool old_exp = bgp_class_has(v->had, i) && was_gm != gm;
    if (new && !new_exp && (d & D_FILTERS))
      chan_trace_as(gm->name, gm->cc->name, '<', takes || now_gm == gm ? "rejected by protocol" : "filtered out", n,
                    rte_src(new), rte_attrs(new));
    if ((new_exp || old_exp) && (d & D_ROUTES)) {
      const struct rte *r = new_exp ? new : old;
      chan_trace_as(gm->name, gm->cc->name, '<', new_exp && old_exp ? "replaced" : new_exp ? "added" : "removed", n,
                    rte_src(r), rte_attrs(r));
    }
  }
}

bool
group_class_pure(const struct bgp_group *g)
{
  for (uint i = 0; i < g->ncls; i++)
    if (g->cls[i]->members && !filter_pure(g->cls[i]->filter))
      return false;
  return true;
}

/* v takes what same took of an equal new route: its bits, its lists, and
 * references of its own on the results. */
static void
cls_verdicts_share(const struct bgp_group *g, struct cls_verdicts *v, const struct cls_verdicts *same)
{
  memcpy(v->takes, same->takes, bgp_class_words(g->ncls) * sizeof(u32));
  memcpy(v->now, same->now, g->ncls * sizeof(*v->now));
  for (uint i = 0; i < same->res.n; i++) {
    const struct cls_result *r = &same->res.r[i];
    if (r->mod)
      ea_ref_many(r->mod, 1 + r->extra);
    if (r->a)
      ea_ref(r->a);
    v->res.r[i] = *r;
  }
  v->res.n = same->res.n;
}

void
group_class_verdicts(const struct bgp_group *g, const net_addr *n, const struct rte *new, const struct rte *old,
                     const struct ea_list *new_src, struct cls_verdicts *v, linpool *tmp)
{
  cls_verdicts_clear(g, v);
  v->res.n = 0;
  for (uint i = 0; i < g->ncls; i++) {
    const struct group_class *k = g->cls[i];
    if (!k->members)
      continue;
    /* old went out before, to the classes that took it: the same verdict now */
    if (old)
      bgp_class_put(v->had, i, cls_run(g, k, n, old, rte_attrs(old), NULL, NULL, tmp));
    if (new)
      bgp_class_put(v->takes, i, cls_run(g, k, n, new, new_src, &v->now[i], &v->res, tmp));
  }
}

void
group_class_share(const struct bgp_group *g, struct cls_verdicts *v, const struct cls_verdicts *same_new,
                  const struct cls_verdicts *same_old)
{
  if (same_new)
    cls_verdicts_share(g, v, same_new);
  if (same_old)
    memcpy(v->had, same_old->had, bgp_class_words(g->ncls) * sizeof(u32));
}

void
group_class_apply(struct bgp_group *g, const net_addr *n, const struct rte *new, const struct rte *old,
                  struct cls_verdicts *v)
{
  struct bgp_gmember *now_gm = NULL, *was_gm = NULL;
  u32 now_src = new ? group_src_member(g, new, &now_gm) : 0;
  u32 was_src = old ? group_src_member(g, old, &was_gm) : 0;
  /* By words of the live classes' bits: most classes take what they took
   * and a new route too, so the classes that count something are few (a
   * loop over a hundred classes per change was the group's loop's first
   * cost). A class takes a route exactly when it has a result for it. */
  u32 any = 0;
  for (uint w = 0; w < bgp_class_words(g->ncls); w++) {
    u32 live = g->live[w], had = v->had[w] & live, takes = v->takes[w] & live;
    any |= had | takes;
    for (u32 rej = new ? live & ~takes : 0; rej; rej &= rej - 1) {
      struct group_class *k = g->cls[32 * w + (u32) __builtin_ctz(rej)];
      uatomic_set(&k->filtered, uatomic_read(&k->filtered) + 1);
    }
    for (u32 moved = had ^ takes; moved; moved &= moved - 1) {
      u32 i = 32 * w + (u32) __builtin_ctz(moved);
      struct group_class *k = g->cls[i];
      if (!k->counting)
        uatomic_set(&k->routes, uatomic_read(&k->routes) + (bgp_class_has(v->takes, i) ? 1 : -1));
    }
  }
  /* a member's own routes it never gets: its channel counts the class's
   * routes but those */
  if (now_gm && now_gm->cls && now_gm->cls->members && bgp_class_has(v->takes, now_gm->cls->id))
    uatomic_set(&now_gm->own_routes, uatomic_read(&now_gm->own_routes) + 1);
  if (was_gm && was_gm->cls && was_gm->cls->members && bgp_class_has(v->had, was_gm->cls->id))
    uatomic_set(&was_gm->own_routes, uatomic_read(&was_gm->own_routes) - 1);
  cls_look_again(g);
  if (g->traced)
    cls_trace_change(g, n, new, old, v, now_gm, was_gm);
  if (any)
    bgp_gout_change_classes(g->out, n, v->now, now_src, now_gm ? now_gm->cls->id : 0, v->had, was_src);
  cls_results_drop(&v->res);
}

void
group_class_change(struct bgp_group *g, const net_addr *n, const struct rte *new, const struct rte *old,
                   const struct ea_list *new_src)
{
  struct cls_verdicts v = cls_scratch(g);
  group_class_verdicts(g, n, new, old, new_src, &v, g->ftmp);
  group_class_apply(g, n, new, old, &v);
}

u32 *
group_class_cohort(struct bgp_group *g, u32 cohort, uint *count)
{
  *count = g->ncls;
  u32 *set = mb_allocz(g->p.run_pool, bgp_class_words(MAX(g->ncls, 1U)) * sizeof(u32));
  LIST_WALK_ENTRY(gm, &g->members, struct bgp_gmember, n)
    if (gm->walk == cohort)
      bgp_class_put(set, gm->cls->id, true);
  return set;
}

void
group_class_feed_verdicts(const struct bgp_group *g, const net_addr *n, const struct rte *exp,
                          const struct ea_list *src, struct cls_verdicts *v, linpool *tmp)
{
  const struct group_walk *w = &g->walk;
  cls_verdicts_clear(g, v);
  v->res.n = 0;
  /* a class made during the walk has none of the cohort */
  for (uint i = 0; i < w->nclasses; i++)
    if (bgp_class_has(w->classes, i) && g->cls[i]->members)
      cls_run(g, g->cls[i], n, exp, src, &v->now[i], &v->res, tmp);
}

void
group_class_feed_apply(struct bgp_group *g, const net_addr *n, const struct rte *exp, u32 but,
                       struct cls_verdicts *v)
{
  const struct group_walk *w = &g->walk;
  cls_look_again(g);
  if (g->traced)
    LIST_WALK_ENTRY(gm, &g->members, struct bgp_gmember, n)
      if (gm->walk == w->cohort && gm->id != but && (cls_member_debug(gm) & D_ROUTES) &&
          bgp_class_has(w->classes, gm->cls->id) && v->now[gm->cls->id])
        chan_trace_as(gm->name, gm->cc->name, '<', "added", n, rte_src(exp), rte_attrs(exp));
  if (w->nmoved)
    group_feed_moved(g, n, exp, but, v->now);
  bgp_gout_feed_classes(g->out, n, v->now, w->cohort, but);
  cls_results_drop(&v->res);
}

bool
group_class_takes(struct bgp_group *g, const struct group_class *k, const net_addr *n, const struct rte *r)
{
  return cls_run(g, k, n, r, rte_attrs(r), NULL, NULL, loop_tmp());
}

void
group_class_feed(struct bgp_group *g, const net_addr *n, const struct rte *exp, const struct ea_list *src, u32 but)
{
  struct cls_verdicts v = cls_scratch(g);
  group_class_feed_verdicts(g, n, exp, src, &v, g->ftmp);
  group_class_feed_apply(g, n, exp, but, &v);
}
