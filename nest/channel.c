/*
 * DOC: Channels between a protocol and a table: their life and the import
 * path.
 *
 * Import (protocol loop): chan_import() applies the import policy, stamps
 * the channel's preference, and writes to the table; the statistics follow
 * BIRD's "Route change stats" columns. chan_import_batch() does the same
 * for an UPDATE's NLRI and writes them to the table in batches.
 *
 * `import table on` keeps every route the protocol announces, before the
 * import policy, in a table of the channel's own (Adj-RIB-In): a changed
 * import filter re-runs over it instead of asking the peer again.
 * `export table on` (Adj-RIB-Out) needs no copy: the export map says which
 * route of each net went out, and the export policy, deterministic, says
 * with which attributes (nest/channel_export_map.c). `import keep filtered` keeps rejected routes in the
 * main table, flagged, for `show route filtered`.
 *
 * Export: nest/channel_export.c.
 */
#include <stdlib.h>
#include <string.h>
#include "nest/proto.h"
#include "nest/reconf.h"
#include "lib/log.h"

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
  if (cc->import_table) {
    c->in_table = rt_aux_table_new("import", c->net_type);
    c->in_sender_id = rt_sender_add(c->in_table, c);
  }
  c->sender_id = rt_sender_add(c->table, c);
  proto_run_home_add(p->run_info, c->table);
  rt_lock_table(c->table);
  list_add_tail(&p->channels, &c->n);
  return c;
}

void
channel_free(struct channel *c)
{
  list_del(&c->n);
  rt_sender_remove(c->table, c->sender_id);
  rt_unlock_table(c->table);
  if (c->in_table)
    rt_aux_table_free(c->in_table);
  chan_catch_up_drop(c);
  chan_exp_free(c);
  mb_free(c);
}

/* From down, start (paused) or flushing: a flush under way goes on, it
 * takes only routes older than the ones imported from now on. */
void
channel_up(struct channel *c)
{
  if (uatomic_read(&c->state) == CS_UP)
    return;
  uatomic_set(&c->state, CS_UP);
  if (chan_exports(c)) {
    chan_export_start(c);
  }
  chan_roa_subscribe(c);
}

/* The channel's routes stay where they are; it counts none any more. */
static void
chan_forget_imports(struct channel *c)
{
  uatomic_set(&c->stats.imp_routes, 0);
  uatomic_set(&c->stats.filt_routes, 0);
}

/* Both ways down begin alike: no more export, no refresh cycle. */
static int
chan_down_begin(struct channel *c)
{
  if (uatomic_read(&c->state) == CS_DOWN)
    return 0;
  uatomic_set(&c->state, CS_FLUSHING);
  chan_export_stop(c);
  chan_refresh_stop(c);
  chan_reload_stop(c);
  chan_roa_unsubscribe(c);
  return 1;
}

void
channel_down(struct channel *c)
{
  if (!chan_down_begin(c))
    return;
  /* At daemon shutdown every table goes away with its channels, and every
   * session that would hear the withdrawals is closing too: a walk of the
   * whole table per channel (O(channels x nets), and the withdrawals
   * exported) would only delay the exit. The tables' teardown frees what
   * is left. */
  if (config_shutting_down())
    chan_forget_imports(c);
  else
    chan_flush_imports(c);
  uatomic_set(&c->state, CS_DOWN);
}

/* BIRD 2's CS_START after up: the protocol lost its peer for a while
 * (BGP graceful restart). Nothing is exported; what was imported stays. */
void
channel_pause(struct channel *c)
{
  if (uatomic_read(&c->state) != CS_UP)
    return;
  uatomic_set(&c->state, CS_START);
  chan_export_stop(c);
  chan_roa_unsubscribe(c);
}

void
chan_flush_down(struct channel *c)
{
  if (!chan_down_begin(c))
    return;
  chan_refresh_begin(c);
  chan_refresh_end(c);      /* chan_flush_done() when the walk is over */
}

/* A channel that went down counts anew when it comes up again (BIRD 2
 * clears the statistics of a channel going down); the route counts are
 * what the flush left, normally zero. */
void
chan_flush_done(struct channel *c)
{
  struct channel_stats *st = &c->stats;
  if (uatomic_read(&c->state) != CS_FLUSHING)
    return;
  u64 *events[] = {
    &st->imp_updates_received, &st->imp_updates_invalid, &st->imp_updates_filtered, &st->imp_updates_ignored,
    &st->imp_updates_accepted, &st->imp_withdraws_received, &st->imp_withdraws_invalid, &st->imp_withdraws_ignored,
    &st->imp_withdraws_accepted, &st->exp_updates_received, &st->exp_updates_rejected, &st->exp_updates_filtered,
    &st->exp_updates_accepted, &st->exp_withdraws_received, &st->exp_withdraws_accepted,
  };
  for (uint i = 0; i < ARRAY_SIZE(events); i++)
    uatomic_set(events[i], 0);
  uatomic_set(&c->state, CS_DOWN);
}

void
chan_flush_imports(struct channel *c)
{
  rt_flush_channel(c->table, c);
  if (c->in_table)
    rt_flush_channel(c->in_table, c);
  chan_forget_imports(c);
}

int
channel_reconfigure(struct channel *c, struct channel_config *cc, int soft)
{
  if (!cc->import_table != !c->in_table)
    return -1;
  int refeed = !filter_same(cc->out_filter, c->out_filter);
  /* routes keep the preference they came in with: a new one is an import again */
  int reimport = !filter_same(cc->in_filter, c->in_filter) || cc->preference != c->preference;
  if ((refeed || reimport) && uatomic_read(&c->state) == CS_UP) {
    if (!soft)
      log_msg(L_INFO, "Reloading channel %s.%s", c->proto->name, c->name);
    if (soft && reimport)
      log_msg(L_INFO, "Channel %s.%s changed import", c->proto->name, c->name);
    if (soft && refeed)
      log_msg(L_INFO, "Channel %s.%s changed export", c->proto->name, c->name);
  }
  if (soft)
    reimport = 0;
  c->cf = cc;
  c->in_filter = cc->in_filter;
  c->in_keep_filtered = cc->in_keep_filtered;
  c->preference = cc->preference;
  if (!refeed) {
    uatomic_set(&c->out_filter, cc->out_filter);   /* same code: the new config's copy */
    chan_roa_resubscribe(c);
    return reimport;
  }
  /* Reading the journal, not what the filter was: after `configure soft`
   * to `export none` the channel reads on (below), and a later change
   * must not attach it a second time. */
  int was = c->reader.table != NULL;
  uatomic_set(&c->out_filter, cc->out_filter);   /* atomic: `show route export` reads it */
  if (uatomic_read(&c->state) != CS_UP)
    return reimport;
  chan_roa_resubscribe(c);
  if (soft && was) {
    /* what was exported stays; what changes from now on meets the new
     * policy (with `export none` now: is withdrawn as it changes) */
  } else if (!was && chan_exports(c)) {
    chan_export_start(c);
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
    if (rte_src(r) == src && chan_sent(c, r)) {
      found = 1;
      break;
    }
  rcu_read_unlock();
  return found;
}

/* Would a route new for this source exceed a limit? `receive limit` counts
 * what the channel holds including filtered routes, `import limit` only the
 * accepted ones. Returns 1 when the route must be refused. */
int
chan_limits_refuse(struct channel *c, const net_addr *n, struct rte_src *src, int filtered)
{
  struct channel_stats *st = &c->stats;
  const struct channel_config *cf = c->cf;
  u32 in = uatomic_read(&st->imp_routes), rx = in + uatomic_read(&st->filt_routes);
  int rx_over = cf->rx_limit.max && rx >= cf->rx_limit.max;
  int in_over = !filtered && cf->in_limit.max && in >= cf->in_limit.max;
  if ((!rx_over && !in_over) || chan_has_route(c, n, src))
    return 0;
  return !chan_limit_allow(c, &cf->rx_limit, &c->rx_limit_hit, rx, "receive") ||
         (!filtered && !chan_limit_allow(c, &cf->in_limit, &c->in_limit_hit, in, "import"));
}

/* Can k routes more come without either limit being reached? Each adds at
 * most one to what a limit counts, so k routes whose worst case stays
 * within both need no check one by one (chan_limits_refuse), and go to
 * the table as a batch: with a limit on every session (a route server's
 * max-prefix), all but the routes near the limit. */
static int
chan_limits_headroom(struct channel *c, uint k)
{
  const struct channel_config *cf = c->cf;
  u64 in = uatomic_read(&c->stats.imp_routes), rx = in + uatomic_read(&c->stats.filt_routes);
  return (!cf->rx_limit.max || rx + k <= cf->rx_limit.max) && (!cf->in_limit.max || in + k <= cf->in_limit.max);
}

void
chan_tally(struct chan_tally *t, uint r, int update, int filtered)
{
  t->filt += !!(r & RT_UPD_FILTERED_ADD) - !!(r & RT_UPD_FILTERED_REMOVE);
  switch (r & RT_UPD_USABLE) {
  case RT_UPD_ADD:
    t->routes++;
    t->upd_acc++;
    break;
  case RT_UPD_REPLACE:
    t->upd_acc++;
    break;
  case RT_UPD_REMOVE:
    t->routes--;
    t->wd_acc++;
    break;
  case RT_UPD_NONE:
    if (filtered)
      break;
    if (update)
      t->upd_ign++;
    else if (!(r & RT_UPD_FILTERED_REMOVE))
      t->wd_ign++;
    break;
  }
}

void
chan_tally_add(struct channel *c, const struct chan_tally *t)
{
  struct channel_stats *st = &c->stats;
  if (t->routes)
    uatomic_add(&st->imp_routes, t->routes);
  if (t->filt)
    uatomic_add(&st->filt_routes, t->filt);
  if (t->upd_acc)
    uatomic_add(&st->imp_updates_accepted, t->upd_acc);
  if (t->upd_ign)
    uatomic_add(&st->imp_updates_ignored, t->upd_ign);
  if (t->wd_acc)
    uatomic_add(&st->imp_withdraws_accepted, t->wd_acc);
  if (t->wd_ign)
    uatomic_add(&st->imp_withdraws_ignored, t->wd_ign);
}

static void
chan_import_count(struct channel *c, uint r, int update, int filtered)
{
  struct chan_tally t = { 0 };
  chan_tally(&t, r, update, filtered);
  chan_tally_add(c, &t);
}

/* The import policy of one route, up to the table write: im->attrs and
 * im->flags say what goes in; *own is the reference the filter made (to
 * drop after the write), *filtered whether the filter rejected it. */
static void
chan_policy(struct channel *c, struct rt_import *im, struct ea_list **own, u8 *filtered)
{
  struct channel_stats *st = &c->stats;
  *own = NULL;
  *filtered = 0;
  im->flags = 0;
  if (!im->attrs) {
    uatomic_inc(&st->imp_withdraws_received);
    return;
  }
  /* The import policy sees the route with the channel's preference
   * stamped unless the protocol set one (as BIRD does: a static route's
   * `{ preference = 77; }` wins); f_run() interns the result once,
   * whatever it changed. */
  uatomic_inc(&st->imp_updates_received);
  struct f_route fr = { .net = im->net, .attrs = im->attrs, .src = im->src,
                        .set_preference = im->attrs->preference ? 0 : c->preference };
  enum f_result res = f_run(c->in_filter, &fr, c->filter_tmp);
  lp_flush(c->filter_tmp);
  if (res != F_ACCEPT) {
    if (fr.out)
      ea_unref(fr.out);
    uatomic_inc(&st->imp_updates_filtered);
    *filtered = 1;
    if (chan_debug(c, D_FILTERS))
      chan_trace(c, '>', "filtered out", im->net, im->src, im->attrs);
    /* rejected: kept aside (flagged) or withdraw what we may have had */
    if (c->in_keep_filtered)
      im->flags = REF_FILTERED;
    else
      im->attrs = NULL;
  } else if (fr.out)
    im->attrs = *own = fr.out;
}

/* The import policy and the table write, for a route from the protocol or
 * from the channel's import table (reload). */
void
chan_import_policy(struct channel *c, const net_addr *n, struct rte_src *src, struct ea_list *attrs)
{
  struct rt_import im = { .net = n, .src = src, .attrs = attrs };
  struct ea_list *own;
  u8 filtered;
  chan_policy(c, &im, &own, &filtered);
  if (im.attrs && (c->cf->in_limit.max || c->cf->rx_limit.max) && chan_limits_refuse(c, n, src, filtered)) {
    uatomic_inc(&c->stats.imp_updates_ignored);
    if (own)
      ea_unref(own);
    return;
  }
  uint r = rt_update(c->table, n, src, c, im.attrs, im.flags);
  if (own)
    ea_unref(own);
  chan_import_count(c, r, !!attrs, filtered);
}

void
chan_import(struct channel *c, const net_addr *n, struct rte_src *src, struct ea_list *attrs)
{
  if (uatomic_read(&c->state) != CS_UP)
    return;
  /* Adj-RIB-In: what the peer sent, before any policy */
  if (c->in_table)
    rt_update(c->in_table, n, src, c, attrs, 0);
  chan_import_policy(c, n, src, attrs);
}

void
chan_import_policy_batch(struct channel *c, struct rt_import *im, uint k)
{
  if (!k)
    return;
  if (im[0].attrs && (c->cf->in_limit.max || c->cf->rx_limit.max) && !chan_limits_headroom(c, k)) {
    /* Near a limit, each route decides from what the ones before did. */
    for (uint i = 0; i < k; i++)
      chan_import_policy(c, im[i].net, im[i].src, im[i].attrs);
    return;
  }
  struct ea_list *own[CHAN_BATCH];
  u8 filtered[CHAN_BATCH];
  int update[CHAN_BATCH];
  for (uint i = 0; i < k; i++) {
    update[i] = !!im[i].attrs;
    chan_policy(c, &im[i], &own[i], &filtered[i]);
  }
  rt_update_batch(c->table, c, im, k);
  struct chan_tally t = { 0 };
  for (uint i = 0; i < k; i++) {
    if (own[i])
      ea_unref(own[i]);
    chan_tally(&t, im[i].result, update[i], filtered[i]);
  }
  chan_tally_add(c, &t);
}

void
chan_import_batch(struct channel *c, const net_addr *nets, struct rte_src *const *srcs, uint n,
                  struct ea_list *attrs)
{
  if (uatomic_read(&c->state) != CS_UP)
    return;
  struct rt_import im[CHAN_BATCH];
  for (uint s = 0; s < n; s += CHAN_BATCH) {
    uint k = MIN(n - s, CHAN_BATCH);
    for (uint i = 0; i < k; i++)
      im[i] = (struct rt_import){ .net = &nets[s + i], .src = srcs[s + i], .attrs = attrs };
    if (c->in_table)
      rt_update_batch(c->in_table, c, im, k);
    chan_import_policy_batch(c, im, k);
  }
}
