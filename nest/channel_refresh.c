/*
 * DOC: Refresh cycles of a channel's imports.
 *
 * Route refresh (RFC 2918/7313), graceful restart (RFC 4724) and its
 * long-lived variant (RFC 9494) all say "what you have from this peer may
 * be outdated; the peer sends it again; what it does not send again goes".
 * The table side is generic (rt.h DOC): a refresh generation per channel
 * and per route. Here is the channel's side, in the protocol's loop:
 * beginning a cycle bumps the generation (O(1), whatever the table size),
 * ending it starts a walk that withdraws what is still older. The walk
 * does a bounded batch of nets per event and yields when the loop's time
 * budget runs out, resuming by key, so a million-route flush never stalls
 * the session that runs beside it. A walk that only withdraws is the
 * table's, in its loop, shared by every channel flushing the table at the
 * time (nest/rt_flush.c); the import table's, after it, is ours.
 *
 * Ownership: struct chan_refresh belongs to the protocol's loop; only gen
 * and walking are read from elsewhere (atomics).
 */
#include "nest/proto.h"
#include "lib/log.h"

#define CHAN_REFRESH_BATCH 256      /* nets per rt_stale_walk call */

void chan_flush_done(struct channel *c);    /* channel.c */

/* The walk is over. */
static void
chan_refresh_finish(struct channel *c)
{
  struct chan_refresh *rf = &c->refresh;
  rf->op.flush = 0;
  rf->op.modify = NULL;
  chan_flush_done(c);     /* chan_flush_down()'s walk: the channel is down */
  /* last: whoever waits for the walk may free the channel after this */
  uatomic_set(&rf->walking, 0);
}

static void
chan_refresh_run(void *data)
{
  struct channel *c = data;
  struct chan_refresh *rf = &c->refresh;
  if (!uatomic_read(&rf->walking) || (rf->joined && !rf->in_table_phase))
    return;           /* stopped while queued, or the table walks */
  for (;;) {
    uint removed = 0, modified = 0;
    /* the table first, then the channel's import table (Adj-RIB-In): what
     * the peer did not send again goes from both */
    struct rtable *t = rf->in_table_phase ? c->in_table : c->table;
    int done = rt_stale_walk(t, &rf->op, &rf->pos, CHAN_REFRESH_BATCH, &removed, &modified);
    if (removed && !rf->in_table_phase)
      (void) uatomic_sub_return(&c->stats.imp_routes, removed);
    if (modified && !rf->in_table_phase)
      (void) uatomic_add_return(&c->stats.imp_updates_accepted, modified);
    if (done && !rf->in_table_phase && c->in_table) {
      rf->in_table_phase = 1;
      rf->pos = 0;
      done = 0;
    }
    if (done) {
      chan_refresh_finish(c);
      return;
    }
    if (loop_budget_left() <= 0) {
      loop_yield();
      ev_schedule(&rf->ev);
      return;
    }
  }
}

/* The table's walk for a flush is over (rt_flush_join's done): the
 * import table's, in this loop, or the end. A done of a join left since
 * (chan_refresh_stop) or made again finds it no longer or still pending. */
static void
chan_refresh_joined(void *data)
{
  struct channel *c = data;
  struct chan_refresh *rf = &c->refresh;
  if (!rf->joined || rt_flush_pending(c->table, c))
    return;
  rf->joined = 0;
  if (!c->in_table) {
    chan_refresh_finish(c);
    return;
  }
  rf->in_table_phase = 1;
  rf->pos = 0;
  ev_schedule(&rf->ev);
}

static void
chan_refresh_leave(struct channel *c)
{
  struct chan_refresh *rf = &c->refresh;
  if (!rf->joined)
    return;
  rt_flush_leave(c->table, c);
  rf->joined = 0;
}

/* (Re)start the walk from the first net with the op as it is now: the
 * part walked before may need the new op too. A flush alone walks with
 * those of the other channels of the table going down (nest/rt_flush.c). */
static void
chan_refresh_walk(struct channel *c)
{
  struct chan_refresh *rf = &c->refresh;
  if (!rf->ev.hook) {
    ev_init(&rf->ev, chan_refresh_run, c);
    ev_init(&rf->joined_ev, chan_refresh_joined, c);
  }
  rf->op.c = c;
  rf->pos = 0;
  rf->in_table_phase = 0;
  uatomic_set(&rf->walking, 1);
  if (rf->op.flush && !rf->op.modify) {
    rf->joined = 1;
    rt_flush_join(c->table, c, rf->op.flush_gen, &rf->joined_ev);
    return;
  }
  chan_refresh_leave(c);
  ev_schedule(&rf->ev);
}

/* The table counts its channels in a cycle: its exports settle by the
 * route refresh times meanwhile (nest/rt_settle.c). */
static void
chan_refresh_active(struct channel *c, int on)
{
  struct chan_refresh *rf = &c->refresh;
  if (rf->active == on)
    return;
  rf->active = on;
  if (on)
    uatomic_inc(&c->table->refreshing);
  else
    uatomic_dec(&c->table->refreshing);
}

void
chan_refresh_begin(struct channel *c)
{
  struct chan_refresh *rf = &c->refresh;
  /* A cycle that begins again (BoRR twice, a second restart) keeps the
   * routes stale that already were. */
  chan_refresh_active(c, 1);
  uatomic_set(&rf->gen, (u16) (rf->gen + 1));
}

void
chan_refresh_end(struct channel *c)
{
  struct chan_refresh *rf = &c->refresh;
  if (!rf->active)
    return;
  chan_refresh_active(c, 0);
  rf->op.flush = 1;
  rf->op.flush_gen = rf->gen;
  rf->op.modify = NULL;   /* whatever it would modify is flushed */
  chan_refresh_walk(c);
}

void
chan_refresh_modify_stale(struct channel *c, struct ea_list *(*hook)(struct channel *, const struct rte *))
{
  struct chan_refresh *rf = &c->refresh;
  if (!rf->active)
    return;
  rf->op.modify = hook;
  rf->op.modify_gen = rf->gen;
  chan_refresh_walk(c);
}

void
chan_refresh_stop(struct channel *c)
{
  struct chan_refresh *rf = &c->refresh;
  chan_refresh_active(c, 0);
  chan_refresh_leave(c);
  rf->op.flush = 0;
  rf->op.modify = NULL;
  uatomic_set(&rf->walking, 0);
}
