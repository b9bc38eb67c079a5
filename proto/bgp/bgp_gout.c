/*
 * Update group output: changes and feed items until the flush, then
 * UPDATEs into the log (bgp_gout.h says what goes to whom).
 *
 * Nothing is bucketed while changes come in: a change is one hash lookup
 * and, the first time, one slab node. The flush groups what it sends by
 * (audience, attributes) in one pass, so every run of equal keys packs
 * into full UPDATEs, and a net can give two messages (the announcement to
 * the others, the withdrawal to the member it came from) without living
 * in two buckets. (qsort() did the grouping first: a quarter of the
 * daemon's time at 100 joining peers.)
 */
#include <stdlib.h>
#include <string.h>
#include "proto/bgp/bgp_gout.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "nest/rt_attr.h"

/* A net changed since the last flush. */
struct gout_change {
  struct hash_node hn;
  struct lnode n;               /* in changes, in the order of first change */
  struct ea_list *now;          /* what the members get now; NULL: nothing */
  u32 now_src;                  /* member it came from, 0: none */
  u32 was_src;                  /* at the first change: member the old route came from */
  bool had;                     /* at the first change: the members had a route */
  net_addr net;
};

/* A feed item (attrs set) or a raw message (msg set) for one member. */
struct gout_item {
  struct lnode n;
  u32 aud, cohort, member;      /* the audience (bgp_txlog.h) */
  struct ea_list *attrs;
  u8 *msg;
  uint len;
  net_addr net;
};

struct bgp_gout {
  pool *pool;
  struct bgp_tx_ctx tx;
  enum bgp_af af;
  struct bgp_txlog *log;
  struct hash_table changes_by_net;
  struct lnode changes;         /* struct gout_change */
  struct lnode items;           /* struct gout_item, in order */
  uint n_changes, n_items;
  slab *change_slab, *item_slab;
  /* The flush's scratch (gout_encode), for scratch_size outputs */
  struct gout_run *runs;
  u32 *run_of, *order, *slots;
  net_addr *nets;               /* a run's nets in a row, for the encoder */
  uint scratch_size, slots_size;
  struct log_rate rl;
};

/* One message's worth of the flush: nets with one audience and one set
 * of attributes (NULL: withdraw). Sorted by the key, so equal keys meet. */
struct gout_out {
  const struct ea_list *attrs;
  u32 aud, member, cohort;
  const net_addr *net;
};

static void
gout_scratch_free(struct bgp_gout *g)
{
  if (!g->scratch_size)
    return;
  mb_free(g->nets);
  mb_free(g->runs);
  mb_free(g->run_of);
  mb_free(g->order);
  mb_free(g->slots);
  g->scratch_size = 0;
}

struct bgp_gout *
bgp_gout_new(pool *p, const struct bgp_tx_ctx *tx, enum bgp_af af, struct bgp_txlog *log)
{
  struct bgp_gout *g = mb_allocz(p, sizeof(*g));
  g->pool = p;
  g->tx = *tx;
  g->af = af;
  g->log = log;
  hash_init_sparse(&g->changes_by_net, p, 10);
  list_init(&g->changes);
  list_init(&g->items);
  g->change_slab = sl_new(p, sizeof(struct gout_change));
  g->item_slab = sl_new(p, sizeof(struct gout_item));
  return g;
}

static int
gout_change_eq(const struct hash_node *n, const void *key)
{
  return net_equal(&container_of(n, struct gout_change, hn)->net, key);
}

static struct gout_change *
gout_change_find(const struct bgp_gout *g, const net_addr *n, u32 h)
{
  struct hash_node *hn = hash_find(&g->changes_by_net, h, gout_change_eq, n);
  return hn ? container_of(hn, struct gout_change, hn) : NULL;
}

static void
gout_change_free(struct bgp_gout *g, struct gout_change *c)
{
  if (c->now)
    ea_unref(c->now);
  list_del(&c->n);
  hash_remove(&g->changes_by_net, &c->hn);
  sl_free(g->change_slab, c);
  g->n_changes--;
}

static void
gout_item_free(struct bgp_gout *g, struct gout_item *it)
{
  if (it->attrs)
    ea_unref(it->attrs);
  if (it->msg)
    mb_free(it->msg);
  list_del(&it->n);
  sl_free(g->item_slab, it);
  g->n_items--;
}

void
bgp_gout_free(struct bgp_gout *g)
{
  while (!list_empty(&g->changes))
    gout_change_free(g, container_of(list_first(&g->changes), struct gout_change, n));
  while (!list_empty(&g->items))
    gout_item_free(g, container_of(list_first(&g->items), struct gout_item, n));
  hash_free(&g->changes_by_net);
  rfree(g->change_slab);
  rfree(g->item_slab);
  gout_scratch_free(g);
  mb_free(g);
}

void
bgp_gout_change(struct bgp_gout *g, const net_addr *n, struct ea_list *now, u32 now_src, bool had, u32 was_src)
{
  u32 h = net_hash(n);
  struct gout_change *c = gout_change_find(g, n, h);
  if (!c) {
    c = sl_alloc(g->change_slab);
    memset(c, 0, sizeof(*c));
    net_copy(&c->net, n);
    c->had = had;
    c->was_src = had ? was_src : 0;
    hash_insert(&g->changes_by_net, &c->hn, h);
    list_add_tail(&g->changes, &c->n);
    g->n_changes++;
  } else if (c->now)
    ea_unref(c->now);
  c->now = now ? ea_ref(now) : NULL;
  c->now_src = now ? now_src : 0;
}

bool
bgp_gout_changed(const struct bgp_gout *g, const net_addr *n)
{
  return g->n_changes && gout_change_find(g, n, net_hash(n));
}

static struct gout_item *
gout_item_new(struct bgp_gout *g, u32 aud, u32 cohort, u32 member)
{
  struct gout_item *it = sl_alloc(g->item_slab);
  memset(it, 0, sizeof(*it));
  it->aud = aud;
  it->cohort = cohort;
  it->member = member;
  list_add_tail(&g->items, &it->n);
  g->n_items++;
  return it;
}

static void
gout_feed(struct bgp_gout *g, const net_addr *n, struct ea_list *attrs, u32 aud, u32 cohort, u32 member)
{
  struct gout_item *it = gout_item_new(g, aud, cohort, member);
  it->attrs = ea_ref(attrs);
  net_copy(&it->net, n);
}

static void
gout_raw(struct bgp_gout *g, u32 aud, u32 cohort, u32 member, const void *msg, uint len)
{
  struct gout_item *it = gout_item_new(g, aud, cohort, member);
  it->msg = mb_alloc(g->pool, len);
  memcpy(it->msg, msg, len);
  it->len = len;
}

void
bgp_gout_feed(struct bgp_gout *g, const net_addr *n, struct ea_list *attrs, u32 member)
{
  gout_feed(g, n, attrs, BGP_TXLOG_ONLY, 0, member);
}

void
bgp_gout_feed_cohort(struct bgp_gout *g, const net_addr *n, struct ea_list *attrs, u32 cohort, u32 but)
{
  gout_feed(g, n, attrs, but ? BGP_TXLOG_COHORT_BUT : BGP_TXLOG_COHORT, cohort, but);
}

void
bgp_gout_raw(struct bgp_gout *g, u32 member, const void *msg, uint len)
{
  gout_raw(g, BGP_TXLOG_ONLY, 0, member, msg, len);
}

void
bgp_gout_define(struct bgp_gout *g, u32 cohort, const u32 *members, uint count)
{
  gout_raw(g, BGP_TXLOG_DEFINE, cohort, 0, members, count * sizeof(u32));
}

uint
bgp_gout_pending(const struct bgp_gout *g)
{
  return g->n_changes + g->n_items;
}

/* The outputs of one key: one audience, one set of attributes (NULL:
 * withdraw). */
struct gout_run {
  const struct ea_list *attrs;
  u32 aud, member, cohort;
  u32 count, start;
};

static void
gout_scratch(struct bgp_gout *g, uint n)
{
  if (n <= g->scratch_size)
    return;
  uint size = MAX(n, 2 * g->scratch_size);
  gout_scratch_free(g);
  g->scratch_size = size;
  g->nets = mb_alloc(g->pool, size * sizeof(net_addr));
  g->runs = mb_alloc(g->pool, size * sizeof(struct gout_run));
  g->run_of = mb_alloc(g->pool, size * sizeof(u32));
  g->order = mb_alloc(g->pool, size * sizeof(u32));
  g->slots_size = 1;
  while (g->slots_size < 2 * size)
    g->slots_size *= 2;
  g->slots = mb_alloc(g->pool, g->slots_size * sizeof(u32));
}

/* Encode the nets of run r (their outputs' indices in idx), as many
 * UPDATEs as it takes: all full but the last. */
static uint
gout_encode_run(struct bgp_gout *g, const struct gout_run *r, const struct gout_out *o, const u32 *idx)
{
  static __thread u8 buf[BGP_TXLOG_MAX_MSG];
  net_addr *nets = g->nets;
  uint n = r->count, msgs = 0;
  for (uint i = 0; i < n; i++)
    net_copy(&nets[i], o[idx[i]].net);
  for (uint sent = 0; sent < n;) {
    uint done = 0;
    uint len = r->attrs
      ? bgp_update_encode_reach(&g->tx, r->attrs, g->af, nets + sent, NULL, n - sent, buf, sizeof(buf), &done)
      : bgp_update_encode_withdraw(&g->tx, g->af, nets + sent, NULL, n - sent, buf, sizeof(buf), &done);
    if (!len || !done) {
      /* Unencodable (a next hop of the wrong family): drop, loudly. */
      log_rl(&g->rl, L_ERR, "Update group: cannot encode UPDATE for %N", &nets[sent]);
      done = 1;
    } else {
      bgp_txlog_append_cohort(g->log, r->aud, r->cohort, r->member, buf, len);
      msgs++;
    }
    sent += done;
  }
  return msgs;
}

/* Group the outputs by key (a hash of the keys, then a counting pass,
 * which keeps their order within a run) and encode each run:
 * withdrawals first, as a session alone sends them. */
static uint
gout_encode(struct bgp_gout *g, const struct gout_out *o, uint n)
{
  if (!n)
    return 0;
  gout_scratch(g, n);
  struct gout_run *runs = g->runs;
  u32 *slots = g->slots, mask = g->slots_size - 1, nruns = 0;
  memset(slots, 0, g->slots_size * sizeof(u32));
  for (uint i = 0; i < n; i++) {
    u32 h = hash_mix(hash_ptr(o[i].attrs), (o[i].aud << 24) ^ o[i].member ^ (o[i].cohort * 0x9e3779b9U)) & mask;
    for (;; h = (h + 1) & mask) {
      if (!slots[h]) {
        runs[nruns] = (struct gout_run) { o[i].attrs, o[i].aud, o[i].member, o[i].cohort, 0, 0 };
        slots[h] = ++nruns;
        break;
      }
      const struct gout_run *r = &runs[slots[h] - 1];
      if (r->attrs == o[i].attrs && r->aud == o[i].aud && r->member == o[i].member && r->cohort == o[i].cohort)
        break;
    }
    g->run_of[i] = slots[h] - 1;
    runs[slots[h] - 1].count++;
  }
  uint pos = 0;
  for (int withdrawals = 1; withdrawals >= 0; withdrawals--)
    for (uint r = 0; r < nruns; r++)
      if ((runs[r].attrs == NULL) == withdrawals) {
        runs[r].start = pos;
        pos += runs[r].count;
        runs[r].count = 0;
      }
  for (uint i = 0; i < n; i++) {
    struct gout_run *r = &runs[g->run_of[i]];
    g->order[r->start + r->count++] = i;
  }
  uint msgs = 0;
  for (int withdrawals = 1; withdrawals >= 0; withdrawals--)
    for (uint r = 0; r < nruns; r++)
      if ((runs[r].attrs == NULL) == withdrawals)
        msgs += gout_encode_run(g, &runs[r], o, g->order + runs[r].start);
  return msgs;
}

static void
gout_put(struct gout_out *o, uint *n, const struct ea_list *attrs, u32 aud, u32 member, u32 cohort,
         const net_addr *net)
{
  o[(*n)++] = (struct gout_out) { attrs, aud, member, cohort, net };
}

/* Feed items and raw messages, in their order: a raw message closes the
 * feed items before it. */
static uint
gout_flush_items(struct bgp_gout *g, struct gout_out *o)
{
  uint n = 0, msgs = 0;
  LIST_WALK(x, &g->items) {
    struct gout_item *it = container_of(x, struct gout_item, n);
    if (it->attrs) {
      gout_put(o, &n, it->attrs, it->aud, it->member, it->cohort, &it->net);
      continue;
    }
    msgs += gout_encode(g, o, n);
    n = 0;
    bgp_txlog_append_cohort(g->log, it->aud, it->cohort, it->member, it->msg, it->len);
    msgs++;
  }
  return msgs + gout_encode(g, o, n);
}

/* The split horizon of bgp_gout.h. */
static uint
gout_flush_changes(struct bgp_gout *g, struct gout_out *o)
{
  uint n = 0;
  LIST_WALK(x, &g->changes) {
    struct gout_change *c = container_of(x, struct gout_change, n);
    if (c->now) {
      gout_put(o, &n, c->now, c->now_src ? BGP_TXLOG_ALL_BUT : BGP_TXLOG_ALL, c->now_src, 0, &c->net);
      /* the member the route came from had the old one, unless that was its own too */
      if (c->now_src && c->had && c->was_src != c->now_src)
        gout_put(o, &n, NULL, BGP_TXLOG_ONLY, c->now_src, 0, &c->net);
    } else if (c->had)
      gout_put(o, &n, NULL, c->was_src ? BGP_TXLOG_ALL_BUT : BGP_TXLOG_ALL, c->was_src, 0, &c->net);
  }
  return gout_encode(g, o, n);
}

uint
bgp_gout_flush(struct bgp_gout *g)
{
  if (!g->n_changes && !g->n_items)
    return 0;
  /* at most two outputs per change, one per item */
  struct gout_out *o = mb_alloc(g->pool, sizeof(*o) * (2 * g->n_changes + g->n_items + 1));
  uint msgs = gout_flush_items(g, o);
  msgs += gout_flush_changes(g, o);
  mb_free(o);
  while (!list_empty(&g->items))
    gout_item_free(g, container_of(list_first(&g->items), struct gout_item, n));
  while (!list_empty(&g->changes))
    gout_change_free(g, container_of(list_first(&g->changes), struct gout_change, n));
  return msgs;
}
