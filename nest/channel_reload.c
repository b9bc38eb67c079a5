/*
 * DOC: Re-import from a channel's import table.
 *
 * A changed import filter, or `reload in`, runs the channel's new import
 * policy over what the peer sent, kept in the import table; no route
 * refresh is needed. A million routes through a filter take a second or
 * more, which one event must not hold the protocol's loop for (keepalives,
 * other channels), so the walk goes in steps over the table's net list and
 * yields to the loop's budget.
 *
 * Between steps the cursor must stay valid: a pin on the import table (a
 * journal reader without notify) keeps the nets removed meanwhile from
 * being freed, as for `show route`. The import table is written only in
 * this loop (chan_import), so a route the peer changes between steps has
 * already gone through the new policy; the walk meeting it again writes
 * the same result, which changes nothing.
 */
#include <stdlib.h>
#include "nest/proto.h"
#include "nest/rt.h"

static int
chan_reload_wants(const struct channel *c, const net_addr *n)
{
  return !c->reload_only || net_in_any(n, c->reload_only, c->reload_only_count);
}

void
chan_nets_clear(net_addr **set, uint *have)
{
  free(*set);
  *set = NULL;
  *have = 0;
}

int
chan_nets_add(net_addr **set, uint *have, const net_addr *nets, uint count)
{
  if (*have + count > CHAN_RELOAD_ONLY_MAX)
    return 0;
  net_addr *all = realloc(*set, (*have + count) * sizeof(net_addr));
  if (!all)
    die("Out of memory");
  for (uint i = 0; i < count; i++)
    net_copy(&all[*have + i], &nets[i]);
  *set = all;
  *have += count;
  return 1;
}

static void
chan_reload_step(void *data)
{
  struct channel *c = data;
  if (!c->reloading)
    return;
  /* The table writes go in batches, as the protocol's imports do; the
   * nets' addresses stay valid until the read section ends, the batch
   * before it. */
  struct rt_import im[CHAN_BATCH];
  uint k = 0;
  rcu_read_lock();
  struct net *n = c->reload_cursor ? c->reload_cursor : rt_feed_first(c->in_table);
  struct rt_feed_ahead ahead;
  rt_feed_ahead_start(&ahead, n, NULL);
  for (; n; rt_feed_ahead_step(&ahead)) {
    if (chan_reload_wants(c, &n->n))
      for (struct rte *r = rcu_dereference(n->routes); r; r = rcu_dereference(r->next)) {
        im[k++] = (struct rt_import){ .net = &n->n, .src = rte_src(r), .attrs = rte_attrs(r) };
        if (k == CHAN_BATCH) {
          chan_import_policy_batch(c, im, k);
          k = 0;
        }
      }
    n = rt_feed_next(n);
    if (n && loop_budget_left() <= 0) {
      chan_import_policy_batch(c, im, k);
      c->reload_cursor = n;
      rcu_read_unlock();
      loop_yield();
      ev_schedule(&c->reload_ev);
      return;
    }
  }
  chan_import_policy_batch(c, im, k);
  rcu_read_unlock();
  chan_reload_stop(c);
}

/* Start (or start over) a walk of the import table. */
static int
chan_reload_walk(struct channel *c)
{
  if (!c->reloading) {
    /* made once: a walk stopped (channel down) may have left it queued */
    if (!c->reload_ev.hook)
      ev_init(&c->reload_ev, chan_reload_step, c);
    rt_reader_attach(c->in_table, &c->reload_pin, c->proto->loop, NULL);
    c->reloading = 1;
  }
  c->reload_cursor = NULL;      /* a reload asked for during one starts over */
  ev_schedule(&c->reload_ev);
  return 1;
}

static void
chan_reload_all(struct channel *c)
{
  chan_nets_clear(&c->reload_only, &c->reload_only_count);
}

int
chan_reload_in_nets(struct channel *c, const net_addr *nets, uint count)
{
  if (!c->in_table || uatomic_read(&c->state) != CS_UP)
    return chan_reload_in(c);
  if (!count)
    return 1;
  /* Added to a partial reload under way; a whole one covers them already
   * once it starts over. */
  if (!c->reloading || c->reload_only) {
    if (!c->reloading)
      c->reload_only_count = 0;
    if (!chan_nets_add(&c->reload_only, &c->reload_only_count, nets, count))
      return chan_reload_in(c);
  }
  return chan_reload_walk(c);
}

int
chan_reload_in(struct channel *c)
{
  if (!c->in_table) {
    if (!c->proto->class->reload_routes)
      return 0;
    c->proto->class->reload_routes(c);
    return 1;
  }
  if (uatomic_read(&c->state) != CS_UP)
    return 1;
  chan_reload_all(c);
  return chan_reload_walk(c);
}

void
chan_reload_stop(struct channel *c)
{
  if (!c->reloading)
    return;
  rt_reader_detach(&c->reload_pin);
  c->reload_cursor = NULL;
  c->reloading = 0;
  chan_reload_all(c);
}
