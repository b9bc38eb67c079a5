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
#include "nest/proto.h"
#include "nest/rt.h"

static void
chan_reload_step(void *data)
{
  struct channel *c = data;
  if (!c->reloading)
    return;
  rcu_read_lock();
  struct net *n = c->reload_cursor ? c->reload_cursor : rt_feed_first(c->in_table);
  while (n) {
    for (struct rte *r = rcu_dereference(n->routes); r; r = rcu_dereference(r->next))
      chan_import_policy(c, &n->n, r->src, r->attrs);
    n = rt_feed_next(n);
    if (n && loop_budget_left() <= 0) {
      c->reload_cursor = n;
      rcu_read_unlock();
      loop_yield();
      ev_schedule(&c->reload_ev);
      return;
    }
  }
  rcu_read_unlock();
  chan_reload_stop(c);
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
  if (!c->reloading) {
    ev_init(&c->reload_ev, chan_reload_step, c);
    rt_reader_attach(c->in_table, &c->reload_pin, c->proto->loop, NULL);
    c->reloading = 1;
  }
  c->reload_cursor = NULL;      /* a reload asked for during one starts over */
  ev_schedule(&c->reload_ev);
  return 1;
}

void
chan_reload_stop(struct channel *c)
{
  if (!c->reloading)
    return;
  rt_reader_detach(&c->reload_pin);
  c->reload_cursor = NULL;
  c->reloading = 0;
}
