/*
 * DOC: Channels: the import and export paths between a protocol and a table.
 *
 * Import (protocol loop): chan_import() applies the import policy, stamps
 * the channel's preference, and writes to the table; the statistics follow
 * BIRD's "Route change stats" columns.
 *
 * Export (protocol loop): when the channel goes up with an export policy
 * other than `none`, it attaches a reader to the table's journal and feeds
 * the current best routes. Each journal item says how the best route of a
 * net changed; the channel calls the class's rt_notify with what it now
 * exports and what it exported before. Which route is exported is kept in
 * a bitmap by route id, so a route rejected by the policy is never
 * withdrawn and the previous export is always known exactly.
 */
#include <stdlib.h>
#include <string.h>
#include "nest/proto.h"
#include "lib/log.h"

/* --- Export map --- */

static int
exp_bit(struct channel *c, u32 id)
{
  return id < c->export_map_size && (c->export_map[id / 32] & (1U << (id % 32)));
}

static void
exp_set(struct channel *c, u32 id, int on)
{
  if (id >= c->export_map_size) {
    if (!on)
      return;
    u32 nsize = MAX(c->export_map_size * 2, ALIGN_UP(id + 1, 1024));
    c->export_map = realloc(c->export_map, nsize / 8);
    if (!c->export_map)
      die("Out of memory");
    memset((u8 *) c->export_map + c->export_map_size / 8, 0, (nsize - c->export_map_size) / 8);
    mem_account(MEM_PROTOCOLS, (nsize - c->export_map_size) / 8, 0);
    c->export_map_size = nsize;
  }
  if (on)
    c->export_map[id / 32] |= 1U << (id % 32);
  else
    c->export_map[id / 32] &= ~(1U << (id % 32));
}

/* --- Lifecycle (channel_new/free: main loop while the proto loop is idle) --- */

struct channel *
channel_new(struct proto *p, struct channel_config *cc)
{
  struct channel *c = mb_allocz(p->run_pool, sizeof(struct channel));
  c->name = cc->name;
  c->proto = p;
  c->cf = cc;
  c->table = cc->table->table;
  c->net_type = cc->net_type;
  c->preference = cc->preference;
  c->in_filter = cc->in_filter;
  c->out_filter = cc->out_filter;
  c->in_keep_filtered = cc->in_keep_filtered;
  c->filter_tmp = lp_new(p->run_pool);
  rt_lock_table(c->table);
  list_add_tail(&p->channels, &c->n);
  return c;
}

void
channel_free(struct channel *c)
{
  list_del(&c->n);
  rt_unlock_table(c->table);
  if (c->export_map) {
    mem_account(MEM_PROTOCOLS, -(s64) c->export_map_size / 8, 0);
    free(c->export_map);
  }
  mb_free(c);
}

static void chan_export_run(void *data);

static int
chan_exports(struct channel *c)
{
  return c->out_filter != FILTER_REJECT && c->proto->class->rt_notify;
}

void
channel_up(struct channel *c)
{
  if (uatomic_read(&c->state) == CS_UP)
    return;
  uatomic_set(&c->state, CS_UP);
  if (chan_exports(c)) {
    ev_init(&c->export_ev, chan_export_run, c);
    rt_reader_attach(c->table, &c->reader, c->proto->loop, &c->export_ev);
    chan_refeed(c);
  }
}

void
channel_down(struct channel *c)
{
  if (uatomic_read(&c->state) == CS_DOWN)
    return;
  uatomic_set(&c->state, CS_FLUSHING);
  if (c->reader.table)
    rt_reader_detach(&c->reader);
  chan_refresh_stop(c);
  rt_flush_channel(c->table, c);
  uatomic_set(&c->stats.imp_routes, 0);
  uatomic_set(&c->stats.filt_routes, 0);
  uatomic_set(&c->stats.exp_routes, 0);
  uatomic_set(&c->state, CS_DOWN);
}

/* Returns 1 when the import filter changed and the protocol must send its
 * routes again. */
int
channel_reconfigure(struct channel *c, struct channel_config *cc)
{
  int refeed = !filter_same(cc->out_filter, c->out_filter);
  int reimport = !filter_same(cc->in_filter, c->in_filter);
  c->cf = cc;
  c->in_filter = cc->in_filter;
  c->in_keep_filtered = cc->in_keep_filtered;
  c->preference = cc->preference;
  if (!refeed) {
    uatomic_set(&c->out_filter, cc->out_filter);   /* same code: the new config's copy */
    return reimport;
  }
  int was = chan_exports(c);
  uatomic_set(&c->out_filter, cc->out_filter);   /* atomic: `show route export` reads it */
  if (uatomic_read(&c->state) != CS_UP)
    return reimport;
  if (was && !chan_exports(c)) {
    /* The policy now rejects everything: the refeed withdraws what we
     * exported; then stop reading. */
    chan_refeed(c);
    rt_reader_detach(&c->reader);
  } else if (!was && chan_exports(c)) {
    ev_init(&c->export_ev, chan_export_run, c);
    rt_reader_attach(c->table, &c->reader, c->proto->loop, &c->export_ev);
    chan_refeed(c);
  } else
    chan_refeed(c);
  return reimport;
}

struct channel *
proto_find_channel(struct proto *p, uint net_type)
{
  LIST_WALK_ENTRY(c, &p->channels, struct channel, n)
    if (c->net_type == net_type)
      return c;
  return NULL;
}

/* --- Import --- */

/* Does the table hold a route of this source for n (sent by us)? */
static int
chan_has_route(struct channel *c, const net_addr *n, struct rte_src *src)
{
  int found = 0;
  rcu_read_lock();
  struct net *net = rt_find_net(c->table, n);
  for (struct rte *r = net ? rcu_dereference(net->routes) : NULL; r; r = rcu_dereference(r->next))
    if (r->src == src && r->sender == c) {
      found = 1;
      break;
    }
  rcu_read_unlock();
  return found;
}

void
chan_import(struct channel *c, const net_addr *n, struct rte_src *src, struct ea_list *attrs)
{
  struct channel_stats *st = &c->stats;
  if (uatomic_read(&c->state) != CS_UP)
    return;

  /* The import policy sees the route with the channel's preference
   * stamped unless the protocol set one (as BIRD does: a static route's
   * `{ preference = 77; }` wins); f_run() interns the result once,
   * whatever it changed. */
  struct ea_list *own = NULL;
  int filtered = 0;
  if (attrs) {
    uatomic_inc(&st->imp_updates_received);
    struct f_route fr = { .net = n, .attrs = attrs, .src = src,
                          .set_preference = attrs->preference ? 0 : c->preference };
    enum f_result res = f_run(c->in_filter, &fr, c->filter_tmp);
    lp_flush(c->filter_tmp);
    if (res != F_ACCEPT) {
      if (fr.out)
        ea_unref(fr.out);
      uatomic_inc(&st->imp_updates_filtered);
      attrs = NULL;        /* rejected: withdraw what we may have had */
      filtered = 1;
    } else if (fr.out)
      attrs = own = fr.out;
  } else
    uatomic_inc(&st->imp_withdraws_received);

  /* Limits count routes; only a route new for this source can exceed them. */
  if (attrs && (c->cf->in_limit.max || c->cf->rx_limit.max) &&
      uatomic_read(&st->imp_routes) >= MIN(c->cf->in_limit.max ? c->cf->in_limit.max : ~0U,
                                           c->cf->rx_limit.max ? c->cf->rx_limit.max : ~0U) &&
      !chan_has_route(c, n, src)) {
    u32 cnt = uatomic_read(&st->imp_routes);
    if (!chan_limit_allow(c, &c->cf->rx_limit, &c->rx_limit_hit, cnt, "receive") ||
        !chan_limit_allow(c, &c->cf->in_limit, &c->in_limit_hit, cnt, "import")) {
      uatomic_inc(&st->imp_updates_ignored);
      if (own)
        ea_unref(own);
      return;
    }
  }

  enum rt_update_result r = rt_update(c->table, n, src, c, attrs, 0);
  if (own)
    ea_unref(own);

  switch (r) {
  case RT_UPD_ADD:
    uatomic_inc(&st->imp_routes);
    /* fall through */
  case RT_UPD_REPLACE:
    if (attrs)
      uatomic_inc(&st->imp_updates_accepted);
    else
      uatomic_inc(&st->imp_withdraws_accepted);
    break;
  case RT_UPD_REMOVE:
    uatomic_dec(&st->imp_routes);
    uatomic_inc(&st->imp_withdraws_accepted);
    break;
  case RT_UPD_NONE:
    if (attrs)
      uatomic_inc(&st->imp_updates_ignored);
    else if (!filtered)
      uatomic_inc(&st->imp_withdraws_ignored);
    break;
  }
}

/* --- Export --- */

/* Would this channel export route r now? 0: no (rejected by the protocol
 * rule or the policy), 1: yes as it is, 2: yes with the attributes the
 * export filter made, in *out (one reference, the caller drops it).
 * Counts the update as rejected or filtered. */
static int
chan_accepts(struct channel *c, const struct rte *r, struct ea_list **out)
{
  struct channel_stats *st = &c->stats;
  *out = NULL;
  if (!r)
    return 0;
  /* Never send a route back to the protocol that announced it. */
  if (r->sender && r->sender->proto == c->proto) {
    uatomic_inc(&st->exp_updates_rejected);
    return 0;
  }
  if (c->out_filter == FILTER_ACCEPT)
    return 1;
  struct f_route fr = { .net = &r->net->n, .attrs = r->attrs, .src = r->src };
  enum f_result res = f_run(c->out_filter, &fr, c->filter_tmp);
  lp_flush(c->filter_tmp);
  if (res != F_ACCEPT) {
    if (fr.out)
      ea_unref(fr.out);
    uatomic_inc(&st->exp_updates_filtered);
    return 0;
  }
  if (fr.out && fr.out == r->attrs) {
    ea_unref(fr.out);
    return 1;
  }
  *out = fr.out;
  return fr.out ? 2 : 1;
}

static void
chan_export_one(struct channel *c, const net_addr *n, struct rte *new, struct rte *old)
{
  struct channel_stats *st = &c->stats;
  struct rte *old_exp = (old && exp_bit(c, old->id)) ? old : NULL;
  struct rte *new_exp = NULL;
  struct ea_list *mod = NULL;
  struct rte tmp;

  if (new) {
    uatomic_inc(&st->exp_updates_received);
    int acc = chan_accepts(c, new, &mod);
    if (acc == 1)
      new_exp = new;
    else if (acc == 2) {
      /* The protocol sees a copy carrying the filter's attributes; the
       * export map still tracks the table's route. */
      tmp = *new;
      tmp.attrs = mod;
      new_exp = &tmp;
    }
    if (new_exp && !old_exp && c->cf->out_limit.max &&
        !chan_limit_allow(c, &c->cf->out_limit, &c->out_limit_hit, uatomic_read(&st->exp_routes), "export")) {
      new_exp = NULL;
      if (mod) {
        ea_unref(mod);
        mod = NULL;
      }
    }
  } else
    uatomic_inc(&st->exp_withdraws_received);

  if (!new_exp && !old_exp)
    return;
  if (old_exp)
    exp_set(c, old_exp->id, 0);
  if (new_exp)
    exp_set(c, new->id, 1);

  if (new_exp)
    uatomic_inc(&st->exp_updates_accepted);
  else
    uatomic_inc(&st->exp_withdraws_accepted);
  if (new_exp && !old_exp)
    uatomic_inc(&st->exp_routes);
  else if (!new_exp && old_exp)
    uatomic_dec(&st->exp_routes);

  c->proto->class->rt_notify(c->proto, c, n, new_exp, old_exp);
  if (mod)
    ea_unref(mod);
}

static void
chan_export_run(void *data)
{
  struct channel *c = data;
  if (!c->reader.table)
    return;
  rcu_read_lock();
  const struct rt_journal_item *it;
  int any = c->proto->class->export_any;
  int (*busy)(struct proto *, struct channel *) = c->proto->class->export_busy;
  uint n = 0;
  while (!(busy && !(n++ & 63) && busy(c->proto, c)) && (it = rt_reader_next(&c->reader))) {
    if (any)
      chan_export_one(c, &it->net->n, it->new_rte, it->retired);
    else if (it->new_best != it->old_best)
      chan_export_one(c, &it->net->n, it->new_best, it->old_best);
    if (loop_budget_left() <= 0) {
      loop_yield();
      ev_schedule(&c->export_ev);
      break;
    }
  }
  rcu_read_unlock();
}

/* Forget what was exported (the receiver lost it, e.g. a BGP session
 * restarted) and feed everything again. */
void
chan_export_reset(struct channel *c)
{
  if (c->export_map)
    memset(c->export_map, 0, c->export_map_size / 8);
  uatomic_set(&c->stats.exp_routes, 0);
  if (c->reader.table)
    chan_refeed(c);
}

/* Export the current best route of every net (initial feed, refeed). The
 * reader already sits at the journal's end, so changes during the walk are
 * seen again from the journal; a duplicate update is harmless. */
void
chan_refeed(struct channel *c)
{
  struct cds_lfht_iter it;
  int any = c->proto->class->export_any;
  rcu_read_lock();
  for (struct net *n = rt_first_net(c->table, &it); n; n = rt_next_net(c->table, &it)) {
    struct rte *best = rcu_dereference(n->routes), *prev = NULL;
    if (any) {
      /* Every route counts on its own (pipes): each goes through the
       * export policy again, replacing what was exported for it. */
      for (struct rte *r = best; r; r = rcu_dereference(r->next))
        chan_export_one(c, &n->n, r, exp_bit(c, r->id) ? r : NULL);
      continue;
    }
    /* Whatever of this net we exported before counts as old; the best
     * route goes through the (possibly new) export policy again. */
    for (struct rte *r = best; r; r = rcu_dereference(r->next))
      if (exp_bit(c, r->id)) {
        prev = r;
        break;
      }
    if (best || prev)
      chan_export_one(c, &n->n, best, prev);
  }
  rcu_read_unlock();
}
