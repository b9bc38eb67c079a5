/*
 * DOC: Where received routes go: BIRD's `gateway direct|recursive`.
 *
 * Direct mode (single-hop sessions): the NEXT_HOP must be a neighbor on a
 * connected network, else the route is treated as withdrawn. Recursive mode
 * (multihop sessions): the next hop resolves in the channel's IGP table
 * through its host cache (nest/rt_hostcache.h); the route carries the
 * resolution's destination and IGP metric, unreachable when nothing
 * resolves it, and stays in the table (it may still be exported).
 *
 * Each channel keeps the host entries of its next hops in a hash of its
 * own, so an UPDATE costs one local lookup and one RCU read, whatever the
 * number of prefixes in it. When the cache says a resolution changed, the
 * channel walks its routes in the table in bounded chunks and replaces
 * those whose destination differs (the stored attributes with the new
 * destination; filters do not run again, as in BIRD).
 *
 * Ownership: everything here belongs to the instance loop, except the IGP
 * table locks (main loop: bgp_nh_lock at init, bgp_nh_cleanup).
 */
#include <string.h>
#include "proto/bgp/bgp.h"
#include "nest/ea_bgp.h"
#include "nest/iface.h"
#include "nest/rt_hostcache.h"
#include "lib/log.h"

#define BGP_NH_WALK_BATCH 256       /* nets per rt_stale_walk call */

struct bgp_nh_entry {
  struct hash_node hn;
  ip_addr addr;
  struct rt_hostentry *he;          /* reference held */
};

static int
bgp_nh_entry_eq(const struct hash_node *n, const void *key)
{
  return ipa_equal(container_of(n, struct bgp_nh_entry, hn)->addr, *(const ip_addr *) key);
}

static struct rtable *
bgp_nh_igp(const struct bgp_channel_config *cf, ip_addr nh)
{
  const struct rtable_config *t = ipa_is_ip4(nh) ? cf->igp_table4 : cf->igp_table6;
  return t ? t->table : NULL;
}

/* The host entry of next hop nh for channel bc, NULL without an IGP table. */
static struct rt_hostentry *
bgp_nh_entry(struct bgp_channel *bc, ip_addr nh)
{
  u32 h = hash_bytes(&nh, sizeof(nh));
  struct hash_node *n = hash_find(&bc->nh_cache, h, bgp_nh_entry_eq, &nh);
  if (n)
    return container_of(n, struct bgp_nh_entry, hn)->he;
  struct rtable *t = bgp_nh_igp(bc->cf, nh);
  if (!t)
    return NULL;
  struct bgp_nh_entry *e = mb_allocz(bc->c->proto->run_pool, sizeof(*e));
  e->addr = nh;
  e->he = rt_hostentry_get(t, nh);
  hash_insert(&bc->nh_cache, &e->hn, h);
  return e->he;
}

/* The next hop of a route as received: the global address, or the
 * link-local one alone (BIRD's gw / ll). */
static ip_addr
bgp_nh_of(const struct eattr *e, const void *data, ip_addr *ll)
{
  ip_addr gw = IPA_NONE;
  *ll = IPA_NONE;
  if (e->len >= sizeof(ip_addr))
    memcpy(&gw, data, sizeof(ip_addr));
  if (e->len >= 2 * sizeof(ip_addr))
    memcpy(ll, (const u8 *) data + sizeof(ip_addr), sizeof(ip_addr));
  return gw;
}

int
bgp_nh_rx_fields(struct bgp_proto *p, struct ea_builder *b, struct bgp_channel *bc)
{
  const void *data = NULL;
  const struct eattr *e = NULL;
  for (uint i = 0; i < b->count; i++)
    if (b->a[i].id == BGP_EA(BA_NEXT_HOP) && b->payload[i]) {
      e = &b->a[i];
      data = b->payload[i];
    }
  ip_addr ll, gw = e ? bgp_nh_of(e, data, &ll) : IPA_NONE;
  if (!e)
    ll = IPA_NONE;
  if (bc->cf->gw_mode == BGP_GW_RECURSIVE) {
    /* BIRD resolves the global address, or the link-local one (IPv6 with
     * only that) */
    ip_addr nh = ipa_nonzero(gw) ? gw : ll;
    struct rt_hostentry *he = ipa_nonzero(nh) ? bgp_nh_entry(bc, nh) : NULL;
    struct rt_nh_res r;
    rcu_read_lock();
    if (he)
      r = *rt_hostentry_res(he);
    else
      rt_nh_resolve(NULL, nh, &r);
    rcu_read_unlock();
    rt_nh_apply(b, &r);
    return 0;
  }
  ip_addr nh = ipa_nonzero(gw) ? gw : ll;
  rcu_read_lock();
  struct iface *i = ipa_nonzero(nh) ? neigh_find(nh, NULL) : NULL;
  int local = !i && ipa_nonzero(nh) && iface_addr_is_local(nh);
  rcu_read_unlock();
  if (!i) {
    if (ipa_zero(nh))
      log_rl(&p->rl, L_REMOTE, "%s: Invalid NEXT_HOP attribute - zero address", p->p.name);
    else if (local)
      log_rl(&p->rl, L_REMOTE, "%s: Invalid NEXT_HOP attribute - address %I is local", p->p.name, nh);
    else
      log_rl(&p->rl, L_REMOTE, "%s: Invalid NEXT_HOP attribute - address %I not directly reachable", p->p.name, nh);
    return -1;
  }
  b->dest = RTD_UNICAST;
  b->gw = nh;
  b->iface = i;
  return 0;
}

/* --- Re-resolution --- */

/* Inside rcu_read_lock() (rt_stale_walk). */
static const struct rt_nh_res *
bgp_nh_current(struct channel *c, const struct rte *r)
{
  if (!(rte_attrs(r)->flags & EAL_RECURSIVE))
    return NULL;
  struct bgp_proto *p = (struct bgp_proto *) c->proto;
  struct bgp_channel *bc = &p->ch[bgp_net_af(c->net_type)];
  const struct eattr *e = ea_find(rte_attrs(r), BGP_EA(BA_NEXT_HOP));
  if (!e)
    return NULL;
  ip_addr ll, gw = bgp_nh_of(e, ea_data(rte_attrs(r), e), &ll);
  ip_addr nh = ipa_nonzero(gw) ? gw : ll;
  u32 h = hash_bytes(&nh, sizeof(nh));
  struct hash_node *n = hash_find(&bc->nh_cache, h, bgp_nh_entry_eq, &nh);
  return n ? rt_hostentry_res(container_of(n, struct bgp_nh_entry, hn)->he) : NULL;
}

static int
bgp_nh_select(struct channel *c, const struct rte *r)
{
  const struct rt_nh_res *res = bgp_nh_current(c, r);
  return res && !rt_nh_same(rte_attrs(r), res);
}

static struct ea_list *
bgp_nh_modify(struct channel *c, const struct rte *r)
{
  struct ea_builder b;
  ea_builder_from(&b, rte_attrs(r));
  const struct rt_nh_res *res = bgp_nh_current(c, r);
  if (res)
    rt_nh_apply(&b, res);
  return ea_intern(&b);
}

static void
bgp_nh_walk(void *data)
{
  struct bgp_channel *bc = data;
  struct channel *c = bc->c;
  for (;;) {
    if (uatomic_read(&c->state) != CS_UP) {
      bc->nh_walking = 0;
      return;
    }
    uint removed = 0, modified = 0;
    /* the table, then the import table: a reload from there must not bring
     * back an old destination */
    struct rtable *t = bc->nh_in_table_phase ? c->in_table : c->table;
    if (rt_stale_walk(t, &bc->nh_op, &bc->nh_pos, BGP_NH_WALK_BATCH, &removed, &modified)) {
      if (!bc->nh_in_table_phase && c->in_table) {
        bc->nh_in_table_phase = 1;
        bc->nh_pos = 0;
        continue;
      }
      bc->nh_walking = 0;
      return;
    }
    if (loop_budget_left() <= 0) {
      loop_yield();
      ev_schedule(&bc->nh_walk_ev);
      return;
    }
  }
}

/* The host cache changed something: walk again from the start (a walk under
 * way may have passed routes the change concerns). */
static void
bgp_nh_changed(void *data)
{
  struct bgp_channel *bc = data;
  struct channel *c = bc->c;
  bc->nh_op = (struct rt_stale_op){
    .c = c, .modify = bgp_nh_modify, .select = bgp_nh_select,
    /* every route of the channel, stale or not: nothing is newer */
    .modify_gen = (u16) (uatomic_read(&c->refresh.gen) + 1),
  };
  bc->nh_pos = 0;
  bc->nh_in_table_phase = 0;
  bc->nh_walking = 1;
  ev_schedule(&bc->nh_walk_ev);
}

void
bgp_nh_lock(struct bgp_proto *p)
{
  int k = 0;
  LIST_WALK_ENTRY(cc, &p->p.cf->channels, struct channel_config, n) {
    const struct bgp_channel_config *bc = (const struct bgp_channel_config *) cc;
    if (bc->gw_mode != BGP_GW_RECURSIVE)
      continue;
    const struct rtable_config *ts[2] = { bc->igp_table4, bc->igp_table6 };
    for (int i = 0; i < 2; i++)
      if (ts[i] && ts[i]->table && k < (int) ARRAY_SIZE(p->igp_locked)) {
        p->igp_locked[k++] = ts[i]->table;
        rt_lock_table(ts[i]->table);
      }
  }
}

void
bgp_nh_start(struct bgp_proto *p)
{
  for (int af = 0; af < BGP_AF_MAX; af++) {
    struct bgp_channel *bc = &p->ch[af];
    if (!bc->c || bc->cf->gw_mode != BGP_GW_RECURSIVE)
      continue;
    hash_init(&bc->nh_cache, p->p.run_pool, 4);
    ev_init(&bc->nh_changed_ev, bgp_nh_changed, bc);
    ev_init(&bc->nh_walk_ev, bgp_nh_walk, bc);
    const struct rtable_config *ts[2] = { bc->cf->igp_table4, bc->cf->igp_table6 };
    for (int i = 0; i < 2; i++)
      if (ts[i] && ts[i]->table && (i == 0 || !ts[0] || ts[0]->table != ts[1]->table))
        rt_hostcache_subscribe(ts[i]->table, p->p.loop, &bc->nh_changed_ev);
    bc->nh_subscribed = 1;
  }
}

void
bgp_nh_stop(struct bgp_proto *p)
{
  for (int af = 0; af < BGP_AF_MAX; af++) {
    struct bgp_channel *bc = &p->ch[af];
    if (!bc->nh_subscribed)
      continue;
    bc->nh_subscribed = 0;
    const struct rtable_config *ts[2] = { bc->cf->igp_table4, bc->cf->igp_table6 };
    for (int i = 0; i < 2; i++)
      if (ts[i] && ts[i]->table)
        rt_hostcache_unsubscribe(ts[i]->table, &bc->nh_changed_ev);
  }
}

void
bgp_nh_cleanup(struct bgp_proto *p)
{
  for (int af = 0; af < BGP_AF_MAX; af++) {
    struct bgp_channel *bc = &p->ch[af];
    if (!bc->nh_cache.buckets)
      continue;
    /* the entries go with the run pool */
    HASH_WALK(&bc->nh_cache, n)
      rt_hostentry_put(container_of(n, struct bgp_nh_entry, hn)->he);
    bc->nh_cache.buckets = NULL;
  }
  for (uint i = 0; i < ARRAY_SIZE(p->igp_locked); i++)
    if (p->igp_locked[i]) {
      rt_unlock_table(p->igp_locked[i]);
      p->igp_locked[i] = NULL;
    }
}
