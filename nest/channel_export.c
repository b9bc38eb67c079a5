/*
 * DOC: Channels' export: a channel's reader of its table's journal, its
 * feeds, and what it hands its protocol (rt_notify).
 *
 * Export (protocol loop): when the channel goes up with an export policy
 * other than `none`, it attaches a reader to the table's journal and feeds
 * the current best routes. Each journal item says how the best route of a
 * net changed; the channel calls the class's rt_notify with what it now
 * exports and what it exported before. Which route is exported is kept in
 * a bitmap by route id, so a route rejected by the policy is never
 * withdrawn and the previous export is always known exactly. Several
 * changes of a net that the reader finds together go out as one
 * (nest/channel_window.h).
 *
 * A feed runs ahead of the journal: the items of routes imported while it
 * walks come after it, and for a route the feed met they are old news,
 * neither sent nor counted again. The bitmap tells the exported ones; the
 * rejected ones go into a second map while the feed runs, which lives
 * until the reader has passed where the journal ended when the feed did.
 *
 * Ownership: the channel's protocol loop, as the reader.
 */
#include <stdlib.h>
#include <string.h>
#include "nest/proto.h"
#include "nest/channel_window.h"
#include "lib/log.h"

static void chan_export_run(void *data);

int
chan_exports(struct channel *c)
{
  return c->out_filter != FILTER_REJECT && c->proto->class->rt_notify && !c->export_elsewhere;
}

/* Read the journal from where reader at is (NULL: its end). */
static void
chan_export_attach(struct channel *c, const struct rt_reader *at)
{
  /* Made once: it may still be queued from the last time the channel
   * read (ev_init() of a queued event breaks its loop's queue) */
  if (!c->export_ev.hook)
    ev_init(&c->export_ev, chan_export_run, c);
  rt_reader_attach_at(c->table, &c->reader, c->proto->loop, &c->export_ev, at);
}

/* Read the journal, from a full feed. */
void
chan_export_start(struct channel *c)
{
  chan_export_attach(c, NULL);
  chan_refeed(c);
}

/* Forget a partial feed's prefixes (chan_refeed_nets). */
static void
chan_feed_only_clear(struct channel *c)
{
  chan_nets_clear(&c->feed_only, &c->feed_only_count);
}

/* Stop reading the table: whoever got our exports lost them. */
void
chan_export_stop(struct channel *c)
{
  if (c->reader.table)
    rt_reader_detach(&c->reader);
  c->feeding = CHAN_FEED_NONE;
  c->feed_cursor = NULL;
  c->feed_ahead_until = 0;
  chan_feed_rejected_drop(c);
  chan_feed_only_clear(c);
  chan_catch_up_drop(c);
  chan_exp_clear(c);
  uatomic_set(&c->stats.exp_routes, 0);
}

/* Did r (of c's table) come in through a channel of c's protocol?
 * Sender numbers are compared, never looked up: a route of an old journal
 * item may carry the number of a channel freed since, when its protocol
 * restarted (nest/rt_sender.c reuses numbers last). Proto loop of c. */
static int
chan_route_is_own(const struct channel *c, const struct rte *r)
{
  if (r->sender)
    LIST_WALK_ENTRY(o, &c->proto->channels, struct channel, n)
      if (o->table == c->table && chan_sent(o, r))
        return 1;
  return 0;
}

/* chan_export_policy() telling why: 0 accepted, else the counter. */
static int
chan_policy_run(struct channel *c, const net_addr *n, const struct rte *r, struct ea_list **out, u64 **why)
{
  struct channel_stats *st = &c->stats;
  *out = NULL;
  /* Never send a route back to the protocol that announced it. */
  if (chan_route_is_own(c, r) ||
      (c->proto->class->preexport && c->proto->class->preexport(c, r) < 0)) {
    *why = &st->exp_updates_rejected;
    return 0;
  }
  if (c->out_filter == FILTER_ACCEPT)
    return 1;
  struct f_route fr = { .net = n, .attrs = rte_attrs(r), .src = rte_src(r) };
  if (!f_run_export(c->out_filter, &fr, c->filter_tmp)) {
    *why = &st->exp_updates_filtered;
    return 0;
  }
  *out = fr.out;
  return fr.out ? 2 : 1;
}

int
chan_export_policy(struct channel *c, const net_addr *n, const struct rte *r, struct ea_list **out)
{
  u64 *why;
  return chan_policy_run(c, n, r, out, &why);
}

/* Would this channel export route r now? 0: no (rejected by the protocol
 * rule or the policy), 1: yes as it is, 2: yes with the attributes the
 * export filter made, in *out (one reference, the caller drops it).
 * Counts the update as rejected or filtered. */
static int
chan_accepts(struct channel *c, const net_addr *n, const struct rte *r, struct ea_list **out)
{
  *out = NULL;
  if (!r)
    return 0;
  u64 *why = NULL;
  int acc = chan_policy_run(c, n, r, out, &why);
  if (!acc) {
    chan_stat_add(why, 1);
    if (chan_debug(c, D_FILTERS))
      chan_trace(c, '<', why == &c->stats.exp_updates_filtered ? "filtered out" : "rejected by protocol", n, rte_src(r),
                 rte_attrs(r));
  }
  return acc;
}

/* A feed exports the table as it is now, ahead of the changes the reader
 * has yet to read. Where a net's exported route went by such a change,
 * the feed cannot see it (it is in no chain) and replaces it in the
 * protocol without naming it; that change names it later, and if it
 * withdraws it, the protocol drops the net's route (a channel exporting
 * every route: the source's) the feed sent. The feed's route still has
 * its export bit, and its own change would pass for old news: lost.
 * So, until the reader passed the journal's end of the feed's, whatever
 * goes out for a net (of a source) is what the protocol holds of it:
 * the other routes of the net's chain now lose their bits, and their
 * changes, which come later (the feed saw them), send them again. */
static void
chan_export_forget_others(struct channel *c, struct net *net, const struct rte *new, const struct rte *old)
{
  if (!c->feed_ahead_until)
    return;
  if (uatomic_read(&c->reader.seq) > c->feed_ahead_until) {
    c->feed_ahead_until = 0;
    return;
  }
  /* the change's net may have emptied since, and its prefix be another's */
  if (!rcu_dereference(net->routes) && !(net = rt_find_net(c->table, &net->n)))
    return;
  const struct rte_src *src = chan_exports_every_route(c) ? rte_src(new ? new : old) : NULL;
  for (struct rte *r; (r = chan_net_exported_but(c, net, new, old, src));) {
    chan_exp_set(c, r->id, 0);
    chan_stat_add(&c->stats.exp_routes, -1);
  }
}

static void
chan_export_one(struct channel *c, struct net *net, struct rte *new, struct rte *old)
{
  struct channel_stats *st = &c->stats;
  const net_addr *n = &net->n;
  struct rte *old_exp = (old && chan_exp_bit(c, old->id)) ? old : NULL;
  struct rte *new_exp = NULL;
  /* With `secondary` the exported route of a net may be retired by a
   * journal item not read yet; then we export its successor before we see
   * it go, and the map briefly holds both. Count routes, not bits twice. */
  int new_was_set = new && new != old_exp && chan_exp_bit(c, new->id);
  struct ea_list *mod = NULL;
  struct rte tmp;

  /* A route leaving takes its feed mark along: once every reader passed
   * this item its id may be a new route's, whose item must not pass for
   * the feed's news. Clearing more than that is safe, as an item that is
   * not skipped is only counted twice. */
  if (old && c->feed_rejected)
    chan_feed_rejected_take(c, old->id);

  /* A feed running ahead of the journal already sent this very route (a
   * route never changes, nor did the policy: a changed filter refeeds with
   * the exported route as old), so its journal item is old news. */
  if (new_was_set && !old_exp && !c->cf->secondary)
    return;
  /* The same for a route it rejected, which has no export bit; with an
   * exported route going, the item still withdraws it. */
  if (new && c->feed_rejected && c->feeding == CHAN_FEED_NONE && chan_feed_rejected_take(c, new->id) && !old_exp)
    return;

  if (new) {
    chan_stat_add(&st->exp_updates_received, 1);
    int acc = chan_accepts(c, n, new, &mod);
    /* Only a route imported after the reader's place has an item to come;
     * on a quiet table a feed keeps no map. */
    if (!acc && c->feeding == CHAN_FEED_RUNNING && rt_reader_may_meet(&c->reader))
      chan_feed_rejected_set(c, new->id);
    if (acc == 1)
      new_exp = new;
    else if (acc == 2) {
      /* The protocol sees a copy carrying the filter's attributes; the
       * export map still tracks the table's route. */
      tmp = rte_view(new, mod);
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
    chan_stat_add(&st->exp_withdraws_received, 1);

  if (!new_exp && !old_exp)
    return;
  chan_export_forget_others(c, net, new_exp ? new : NULL, old_exp);
  if (old_exp)
    chan_exp_set(c, old_exp->id, 0);
  if (new_exp)
    chan_exp_set(c, new->id, 1);

  if (new_exp)
    chan_stat_add(&st->exp_updates_accepted, 1);
  else
    chan_stat_add(&st->exp_withdraws_accepted, 1);
  if (new_exp && !old_exp && !new_was_set)
    chan_stat_add(&st->exp_routes, 1);
  else if (!new_exp && old_exp)
    chan_stat_add(&st->exp_routes, -1);

  if (chan_debug(c, D_ROUTES)) {
    const struct rte *r = new_exp ? new_exp : old_exp;
    chan_trace(c, '<', new_exp && old_exp ? "replaced" : new_exp ? "added" : "removed", n, rte_src(r), rte_attrs(r));
  }
  c->proto->class->rt_notify(c->proto, c, n, new_exp, old_exp, new_exp ? rte_attrs(new) : NULL);
  if (mod)
    ea_unref(mod);
}

void
chan_export_withdraw(struct channel *c, struct net *n, struct rte *old)
{
  chan_export_one(c, n, NULL, old);
}

void
chan_export_decline(struct channel *c, u32 id)
{
  if (!chan_exp_bit(c, id))
    return;
  chan_exp_set(c, id, 0);
  chan_stat_add(&c->stats.exp_routes, -1);
  chan_stat_add(&c->stats.exp_updates_accepted, -1);
  chan_stat_add(&c->stats.exp_updates_rejected, 1);
}

/* `secondary`: export the first route of the net the policy accepts. Any
 * change of the net may change which one that is. `retired` is a route
 * just removed from the chain, which may be the one we exported. */
static void
chan_export_first_accepted(struct channel *c, struct net *n, struct rte *retired, int refeed)
{
  struct rte *old = retired && chan_exp_bit(c, retired->id) ? retired : NULL, *cand = NULL;
  for (struct rte *r = net_best(n); rte_usable(r); r = rcu_dereference(r->next)) {
    if (!old && chan_exp_bit(c, r->id))
      old = r;
    if (!cand) {
      struct ea_list *mod;
      if (chan_accepts(c, &n->n, r, &mod))
        cand = r;
      if (mod)
        ea_unref(mod);
    }
    if (cand && old)
      break;
  }
  /* chan_export_one() runs the policy on the winner again, for its
   * attributes; a route is immutable, so the same winner means no change */
  if (cand != old || refeed)
    chan_export_one(c, n, cand, old);
}

/* Send one net again: what of it we exported before counts as old, the
 * current best (or every route) goes through the export policy again. */
static void
chan_feed_net(struct channel *c, struct net *n, int any)
{
  struct rte *best = net_best(n), *prev = NULL;
  if (any) {
    /* Every route counts on its own (pipes, ADD-PATH): each goes
     * through the export policy again, replacing what was exported. */
    for (struct rte *r = best; rte_usable(r); r = rcu_dereference(r->next))
      chan_export_one(c, n, r, chan_exp_bit(c, r->id) ? r : NULL);
    return;
  }
  if (c->cf->secondary) {
    chan_export_first_accepted(c, n, NULL, 1);
    return;
  }
  prev = chan_net_exported(c, n);
  if (best || prev)
    chan_export_one(c, n, best, prev);
}

/*
 * The feed walks the table's nets in steps (rt_feed_next), pausing for
 * backpressure and the loop's budget, so a refeed of a million nets to a
 * slow peer neither blocks the loop nor piles up a million pending
 * exports. The reader does not move meanwhile, which keeps the cursor
 * valid; changes made during the feed are read from the journal after it,
 * and a duplicate update is harmless. Returns 1 when the feed is done.
 */
static int
chan_feed_step(struct channel *c, int (*busy)(struct proto *, struct channel *))
{
  int any = chan_exports_every_route(c);
  struct net *n = c->feed_cursor;
  if (c->feeding == CHAN_FEED_START) {
    /* The feed ends at the table's last net of now: a net made after
     * that has its journal item behind the reader, which stays where it
     * is. Chasing the end of a table still filling would feed every net
     * made meanwhile twice. The last net can only be freed once the
     * reader passed its death, so its address stays its own. */
    c->feed_last = rt_feed_last(c->table);
    n = c->feed_last ? rt_feed_first(c->table) : NULL;
  }
  c->feeding = CHAN_FEED_RUNNING;
  struct rt_feed_ahead ahead;
  rt_feed_ahead_start(&ahead, n, c->feed_last);
  for (uint k = 0; n; k++) {
    if (busy && !(k & 63) && busy(c->proto, c)) {
      c->feed_cursor = n;      /* the protocol sends export_ev when it drained */
      return 0;
    }
    /* a dead net has no routes: nothing happens */
    if (!c->feed_only || net_in_any(&n->n, c->feed_only, c->feed_only_count))
      chan_feed_net(c, n, any);
    n = n == c->feed_last ? NULL : rt_feed_next(n);
    rt_feed_ahead_step(&ahead);
    if (n && loop_budget_left() <= 0) {
      c->feed_cursor = n;
      loop_yield();
      ev_schedule(&c->export_ev);
      return 0;
    }
  }
  c->feeding = CHAN_FEED_NONE;
  c->feed_cursor = c->feed_last = NULL;
  u64 end = rt_journal_end_settled(c->table);
  if (uatomic_read(&c->reader.seq) < end)
    c->feed_ahead_until = end;
  if (c->feed_rejected) {
    c->feed_rejected_until = end;
    if (uatomic_read(&c->reader.seq) >= c->feed_rejected_until)
      chan_feed_rejected_drop(c);   /* nothing came while it ran */
  }
  chan_feed_only_clear(c);
  if (c->proto->class->feed_end)
    c->proto->class->feed_end(c);
  return 1;
}

void
chan_export_flush(struct channel *c)
{
  if (c->proto->class->export_flush)
    c->proto->class->export_flush(c->proto, c);
}

/* Under `export none` (a reconfigure, a hand-over from an update group)
 * the channel reads on, with a refeed, until nothing it exported is left:
 * the refeed withdraws the routes still in the table, the journal those
 * that went meanwhile (a walk of the table meets those no more, and a
 * reader detached at once would lose their withdrawals); then it stops
 * reading. */
static int
chan_export_drained(struct channel *c)
{
  return uatomic_read(&c->out_filter) == FILTER_REJECT && !c->feeding && !c->catchup &&
         !uatomic_read(&c->reader.laggard) && !uatomic_read(&c->stats.exp_routes);
}

/* What a pass counts of the channel's own items it skips. */
static void
chan_export_own_count(struct channel *c, uint updates, uint withdrawals)
{
  chan_stat_add(&c->stats.exp_updates_received, updates);
  chan_stat_add(&c->stats.exp_updates_rejected, updates);
  chan_stat_add(&c->stats.exp_withdraws_received, withdrawals);
}

/* An item of a route that came in through this channel, read while it
 * exports every route: chan_export_one() would reject the route (never
 * back to the protocol that announced it) without more than counting.
 * The route it retires is of the same source, so of the same protocol,
 * and was never exported here either. Neither route is loaded: in a
 * pipe's peer table nearly every item is the pipe's own copy. 0: not
 * such an item, or not done here. */
static int
chan_export_own_item(struct channel *c, const struct rt_journal_item *it)
{
  /* a feed's bookkeeping and the filters' trace want the routes */
  if (!c->reader.own || c->reader.sender != c->reader.own || c->feed_rejected || chan_debug(c, D_FILTERS))
    return 0;
  chan_export_own_count(c, !!it->new_rte, !it->new_rte);
  return 1;
}

void
chan_export_pass_own(struct channel *c)
{
  /* what chan_export_own_item() asks, and a reader that reads on from
   * where it is: no walk of the table going on or to come, no stop */
  if (!c->reader.table || !c->reader.own || c->reader.own != c->sender_id || c->cf->secondary ||
      !chan_exports_every_route(c) || c->feed_rejected || chan_debug(c, D_FILTERS) || c->feeding || c->catchup ||
      c->export_hold || uatomic_read(&c->reader.laggard))
    return;
  uint withdrawals = 0, n = rt_reader_pass_own(&c->reader, &withdrawals);
  if (n)
    chan_export_own_count(c, n - withdrawals, withdrawals);
}

/* Items of one export pass at most. A pass holds what it read until its
 * export_flush (rt_reader_hold), so the table keeps those journal blocks
 * meanwhile: a pass of a whole loop budget (10 ms) of a load arriving
 * faster than it is exported kept them that long, and with the writers'
 * trim (rt_cleanup.c) one table at 10 peers x 10k routes peaked 1.9 MB
 * lower once passes were shorter. */
#define CHAN_EXPORT_PASS_MAX 2048

/* One item as it comes */
static void
chan_export_item(struct channel *c, const struct rt_journal_item *it, int any)
{
  if (any) {
    if (!chan_export_own_item(c, it))
      chan_export_one(c, it->net, it->new_rte, it->retired);
  }
  else if (c->cf->secondary)
    chan_export_first_accepted(c, it->net, it->retired, 0);
  else if (it->new_best != it->old_best)
    chan_export_one(c, it->net, it->new_best, it->old_best);
}

/* The window's next item: exported as part of its net's changes, or as
 * it comes */
static void
chan_window_export(struct channel *c, struct chan_window *w, const struct rt_journal_item *it, int any)
{
  struct rte *new, *old;
  int take = chan_window_take(w, it, any, &new, &old);
  if (take < 0)
    chan_export_item(c, it, any);
  else if (take)
    chan_export_one(c, it->net, new, old);
}

static void
chan_export_run(void *data)
{
  struct channel *c = data;
  if (!c->reader.table)
    return;
  rcu_read_lock();
  const struct rt_journal_item *it = NULL;
  int any = chan_exports_every_route(c);
  /* Exporting every route, each item is its route's: the channel's own
   * are rejected unread (chan_export_own_item) */
  c->reader.own = any && !c->cf->secondary ? c->sender_id : 0;
  int (*busy)(struct proto *, struct channel *) = c->proto->class->export_busy;
  void (*ahead)(struct proto *, const net_addr *) = c->proto->class->rt_notify_ahead;
  /* A feed, a catch-up or a hold stops the reader: it presses the
   * table's importers no more (nest/rt.h), nor does backpressure of a
   * protocol whose peers read slowly (busy() == 1); a protocol that has
   * yet to send what it has (an update group's members, busy() == 2)
   * may go on pressing, as it moves on once they got the CPU. */
  if ((uatomic_read(&c->reader.laggard) && !chan_catch_up(c)) ||
      (c->feeding && !chan_feed_step(c, busy)) ||
      (c->catchup && !c->feeding && !chan_catch_up_finish(c, busy))) {
    rt_reader_idle(&c->reader);
    chan_export_flush(c);
    rcu_read_unlock();
    return;
  }
  /* What the protocol keeps of the pass until its export_flush (an update
   * group's step, a pipe's queue) keeps its references meanwhile */
  rt_reader_hold(&c->reader);
  uint since_busy = 64, passed = 0;
  int stop = 0;
  struct chan_window w;                 /* not cleared: 38 KiB, set by chan_window_open */
  w.left = 0;
  for (;;) {
    /* Between windows only: where a pass may stop (nothing of a window
     * is carried past its end) */
    if (!w.left) {
      if (busy && since_busy >= 64 && ((since_busy = 0), (stop = busy(c->proto, c))))
        break;
      if (c->export_hold && c->reader.seq >= c->export_until) {
        stop = 1;
        break;
      }
      if (passed && loop_budget_left() <= 0) {
        loop_yield();
        ev_schedule(&c->export_ev);
        break;
      }
      if (passed >= CHAN_EXPORT_PASS_MAX) {
        ev_schedule(&c->export_ev);
        break;
      }
      chan_window_open(c, &w, any);
    }
    if (!(it = rt_reader_next(&c->reader)))
      break;
    w.left--;
    since_busy++;
    passed++;
    rt_reader_prefetch(&c->reader);
    /* past the last item a feed could have met again */
    if (c->feed_rejected && uatomic_read(&c->reader.seq) > c->feed_rejected_until)
      chan_feed_rejected_drop(c);
    if (ahead) {
      const struct rt_journal_item *a = rt_reader_ahead(&c->reader);
      if (a && (any || a->new_best != a->old_best))
        ahead(c->proto, &a->net->n);
    }
    if (w.coalesce)
      chan_window_export(c, &w, it, any);
    else
      chan_export_item(c, it, any);
  }
  if (stop == 1)
    rt_reader_idle(&c->reader);
  chan_export_flush(c);
  rt_reader_release(&c->reader);
  rcu_read_unlock();
  if (!stop && !it && chan_export_drained(c))
    chan_export_stop(c);
}

/* Forget what was exported (the receiver lost it, e.g. a BGP session
 * restarted) and feed everything again. */
void
chan_export_reset(struct channel *c)
{
  chan_catch_up_drop(c);
  chan_exp_clear(c);
  uatomic_set(&c->stats.exp_routes, 0);
  if (c->reader.table)
    chan_refeed(c);
}

void
chan_export_own(struct channel *c, int own)
{
  if (!own == !!c->export_elsewhere)
    return;
  if (!own) {
    if (c->reader.table)
      chan_export_stop(c);
    c->export_elsewhere = 1;
    return;
  }
  c->export_elsewhere = 0;
  if (uatomic_read(&c->state) == CS_UP && chan_exports(c))
    chan_export_start(c);
}

void
chan_export_hold(struct channel *c, u64 seq)
{
  c->export_hold = 1;
  c->export_until = seq;
  ev_schedule(&c->export_ev);
}

void
chan_export_release(struct channel *c)
{
  if (!c->export_hold)
    return;
  c->export_hold = 0;
  ev_schedule(&c->export_ev);
}

int
chan_export_steady(struct channel *c)
{
  return c->reader.table && !c->feeding && !c->catchup && !uatomic_read(&c->reader.laggard) &&
         uatomic_read(&c->reader.seq) >= c->feed_ahead_until;
}

void
chan_export_takeover(struct channel *c, struct rt_reader *pin, struct chan_export_map *map,
                     struct chan_catchup *owed, int refeed)
{
  c->export_elsewhere = 0;
  uatomic_set(&c->stats.exp_routes, chan_exp_adopt(c, map));
  if (uatomic_read(&c->state) == CS_UP && c->proto->class->rt_notify) {
    chan_export_attach(c, pin);
    /* the map may hold a feed's routes, sent ahead of the pin */
    c->feed_ahead_until = rt_journal_end_settled(c->table);
    chan_catch_up_adopt(c, owed);
    if (!refeed)
      ev_send(c->proto->loop, &c->export_ev);   /* on from the pin, owed withdrawals first */
    else
      chan_refeed(c);                           /* `export none`: until drained */
  } else {
    chan_exp_clear(c);
    chan_catch_up_discard(owed);
  }
  rt_reader_detach(pin);
}

/* Export the current best route of every net again (initial feed,
 * refeed): in steps, from the channel's loop. A refeed asked for during a
 * feed starts it over. */
void
chan_refeed(struct channel *c)
{
  if (!c->reader.table)
    return;
  chan_feed_all(c);
  ev_send(c->proto->loop, &c->export_ev);
}

void
chan_feed_all(struct channel *c)
{
  c->feed_seq++;
  chan_feed_only_clear(c);
  c->feeding = CHAN_FEED_START;
  c->feed_cursor = NULL;
}

/* `rpki reload` after a few ROAs changed: the export filter runs again over
 * the nets they cover only. The walk still visits every net (a cheap read
 * of the chain head); the filters and exports are what a whole refeed
 * spends its time on. */
void
chan_refeed_nets(struct channel *c, const net_addr *nets, uint count)
{
  if (!c->reader.table || !count)
    return;
  /* A whole feed under way starts over and covers them; a partial one
   * starts over for the union, unless that grows too big. */
  int whole = c->feeding && !c->feed_only;
  if (!whole && !chan_nets_add(&c->feed_only, &c->feed_only_count, nets, count)) {
    chan_refeed(c);
    return;
  }
  c->feeding = CHAN_FEED_START;
  c->feed_cursor = NULL;
  ev_send(c->proto->loop, &c->export_ev);
}
