/*
 * DOC: Recursive next hops: resolution in an IGP table and the host cache.
 *
 * A BGP route in recursive gateway mode (BIRD's `gateway recursive`) goes
 * where the best route of the longest prefix covering its next hop in the
 * IGP table goes: that route's gateway, or the next hop itself on a device
 * route's interface, or its blackhole/unreachable/prohibit; unreachable
 * when nothing covers the next hop or the covering route is itself
 * recursive (one level only, as BIRD).
 *
 * The host cache of a table keeps one entry per next hop in use, with its
 * current resolution (immutable, RCU-published). Importers hold entries
 * and read the resolution once per UPDATE, not per prefix. The cache reads
 * the table's journal in the table's loop: a change of a net that covers an
 * entry's address at or below its resolving prefix length re-resolves it,
 * and when a resolution changes the subscribers (the channels whose routes
 * use the table) are told to re-apply resolutions to their routes.
 *
 * Ownership: struct rt_hostcache belongs to its table (created on first
 * use, freed with the table's data); the entry list is RCU, changed under
 * hc->lock; subscribers are under hc->lock; resolutions are RCU, replaced
 * only by the reader, which runs in the table's loop.
 */
#ifndef NEST_RT_HOSTCACHE_H
#define NEST_RT_HOSTCACHE_H

#include "nest/rt.h"

/* Route fields a resolution sets (struct ea_list has the same ones). */
struct rt_nh_res {
  struct rcu_head rcu;        /* the cache's copies are retired through RCU */
  u8 dest;                    /* enum rte_dest */
  ip_addr gw;                 /* RTD_UNICAST: gateway, or none for `dev` */
  struct iface *iface;
  u32 igp_metric;             /* the resolving route's; 0 when none resolves */
  u32 cover_len;              /* prefix length of the resolving net (0: none) */
  u8 resolved;                /* a usable route resolves it (BIRD's he->src) */
};

/* BIRD's rt_get_igp_metric() of a route: its igp_metric if set, 0 for a
 * device route, else unknown. */
u32 rt_igp_metric(const struct ea_list *a);
/* Resolve addr in t; inside rcu_read_lock(). */
void rt_nh_resolve(struct rtable *t, ip_addr addr, struct rt_nh_res *res);
/* Does the route (its attributes) hold resolution r? As BIRD 2
 * (rta_next_hop_outdated), an unresolved next hop leaves a route that is
 * unreachable already as it is, old IGP metric included. */
int rt_nh_same(const struct ea_list *a, const struct rt_nh_res *r);
/* Set a route's destination fields from r, marked recursive. */
void rt_nh_apply(struct ea_builder *b, const struct rt_nh_res *r);

struct rt_hostcache;
struct rt_hostentry {
  struct rt_hostentry *next;  /* RCU list hc->entries; written under hc->lock */
  struct rt_hostcache *hc;
  ip_addr addr;
  u32 uc;                     /* under hc->lock */
  int dirty;                  /* atomic: the table loop must resolve it again */
  struct rt_nh_res *res;      /* RCU; replaced only by the table loop */
  struct rcu_head rcu;
};

/* An entry for addr in t's cache, with one reference; any loop. */
struct rt_hostentry *rt_hostentry_get(struct rtable *t, ip_addr addr);
void rt_hostentry_put(struct rt_hostentry *he);
/* The entry's resolution; inside rcu_read_lock(). */
static inline const struct rt_nh_res *rt_hostentry_res(const struct rt_hostentry *he)
{ return rcu_dereference(he->res); }

/* ev is sent to l whenever a resolution in t's cache changes. Any loop;
 * unsubscribe before ev or l goes away. */
void rt_hostcache_subscribe(struct rtable *t, struct loop *l, struct event *ev);
void rt_hostcache_unsubscribe(struct rtable *t, struct event *ev);

/* The table's data goes (table loop, no channel left): drop the cache. */
void rt_hostcache_free(struct rtable *t);
/* The table's loop is gone (main loop): free what rt_hostcache_free() had
 * to leave behind. */
void rt_hostcache_release(struct rtable *t);

#endif
