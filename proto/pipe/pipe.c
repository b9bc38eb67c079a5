/*
 * DOC: The pipe protocol.
 *
 * A pipe reads both tables' journals in its own loop (through its two
 * channels) and writes every route (not only the best, as BIRD's pipes)
 * its policies accept into the other table,
 * keeping the route's original source, so several routes of one network
 * stay distinct on the other side as they were on this one.
 *
 * Writes go in batches: what one export pass of a channel hands over waits
 * in a queue and enters the other table through rt_update_batch() when
 * the pass ends (export_flush) or the queue is full.
 *
 * Loops of pipes would bounce a route forever; a route is therefore never
 * written into a table the run of its source's protocol writes into
 * itself (where it came from: in a ring of pipes, copies of a route gone
 * would otherwise keep one another alive; proto_run_home), nor into one
 * that already holds a route of the same source from someone else
 * (another pipe's copy), and such attempts are logged and count as
 * rejected exports, so that the route's withdrawal is not passed on
 * either. When two pipes bring copies of one route into a
 * table (a diamond), the second pipe's copy is refused while the first's
 * is there; when the first pipe goes down, its copies leave and the second
 * offers what it left out again (copies_gone, a refeed). So it does when
 * the first pipe stays up but takes its copy back while the route is
 * still there (its filter changed, or passes the route's new version no
 * more): the main loop hears of it (gone_ev) and tells the others.
 */
#include <string.h>
#include "proto/pipe/pipe.h"
#include "lib/log.h"
#include "lib/printf.h"

static void
pipe_preconfig(struct proto_config *pc)
{
  (void) pc;
}

/* The primary channel (the one the grammar fills) exists from the start of
 * the protocol block, so `table`, `import` and `export` have a place to go. */
struct channel_config *
pipe_main_channel(struct cf_context *cx)
{
  struct proto_config *pc = cx->this_proto;
  struct pipe_config *p = (struct pipe_config *) pc;
  if (!p->pri) {
    p->pri = cf_alloc(cx, sizeof(struct channel_config));
    p->pri->name = "pri";   /* as BIRD 2 names it in logs; shown as "main" */
    p->pri->parent = pc;
    p->pri->in_filter = FILTER_ACCEPT;
    p->pri->out_filter = FILTER_REJECT;
    p->pri->preference = 70;
    p->pri->rpki_reload = 1;          /* as every channel by default (BIRD 2) */
  }
  return p->pri;
}

static int
pipe_postconfig(struct proto_config *pc, char *err, size_t errlen)
{
  struct pipe_config *p = (struct pipe_config *) pc;
  struct channel_config *pri = p->pri;
  if (!pri || !pri->table) {
    bsnprintf(err, errlen, "Primary routing table not specified");
    return -1;
  }
  if (!p->peer) {
    bsnprintf(err, errlen, "Secondary routing table not specified");
    return -1;
  }
  if (pri->table == p->peer) {
    bsnprintf(err, errlen, "Primary table and peer table must be different");
    return -1;
  }
  if (pri->table->net_type != p->peer->net_type) {
    bsnprintf(err, errlen, "Table type mismatch");
    return -1;
  }
  pri->net_type = pri->table->net_type;
  /* `debug` in a pipe's block is read as the channel's (the grammar
   * takes channel options there): it is the pipe's. Not the default
   * every channel gets (`debug channels`), which is no pipe's own. */
  if (pri->debug && pri->debug != pc->global->channel_default_debug)
    pc->debug = pri->debug;
  /* The secondary channel: its export policy is the pipe's import. */
  struct channel_config *sec = lp_allocz(pc->global->mem, sizeof(*sec));
  sec->name = "sec";
  sec->parent = pc;
  sec->net_type = p->peer->net_type;
  sec->table = p->peer;
  sec->preference = pri->preference;
  sec->in_filter = FILTER_ACCEPT;
  sec->out_filter = pri->in_filter;
  sec->out_filter_set = 1;
  sec->rpki_reload = pri->rpki_reload;
  pri->in_filter = FILTER_ACCEPT;
  p->sec = sec;
  list_init(&pc->channels);
  list_add_tail(&pc->channels, &pri->n);
  list_add_tail(&pc->channels, &sec->n);
  return 0;
}

static void
pipe_copy_config(struct proto_config *dst, const struct proto_config *src)
{
  struct pipe_config *d = (struct pipe_config *) dst;
  const struct pipe_config *s = (const struct pipe_config *) src;
  d->peer = s->peer;
  /* Generic copy made the channel list; find the primary in it again. */
  d->pri = list_empty(&dst->channels) ? NULL : container_of(list_first(&dst->channels), struct channel_config, n);
  list_init(&dst->channels);
}

/* Copies left out because another pipe's were there may go in now: the
 * direction that left any out feeds its table again (what is there
 * already changes nothing). Once per departure of a pipe, so a walk. */
static void
pipe_reoffer(void *data)
{
  struct pipe_proto *p = data;
  for (int dir = 0; dir < 2; dir++)
    if (p->declined[dir]) {
      p->declined[dir] = 0;
      chan_refeed(dir ? p->sec : p->pri);
    }
}

static void
pipe_copies_gone(struct proto *pp, struct rtable *t UNUSED)
{
  ev_send(pp->loop, &((struct pipe_proto *) pp)->reoffer_ev);
}

/* Main loop. The pipe's loop sent this before it could stop, and its
 * stop reaches the main loop after, so the pipe is still there. */
static void
pipe_gone_main(void *data)
{
  struct pipe_proto *p = data;
  for (int dir = 0; dir < 2; dir++)
    if (uatomic_xchg(&p->gone[dir], 0) && p->p.state == PS_UP)
      proto_copies_gone(&p->p, (dir ? p->pri : p->sec)->table);
}

/* Has the source of r (which rt_notify gives as old) still a route of
 * the net: did the policy take the copy back, not the table? (Perhaps
 * the source's route of now is newer than the change: a needless
 * offer, no more.) */
static int
pipe_route_there(struct channel *c, const net_addr *n, const struct rte *r)
{
  struct net *net = rt_find_net(c->table, n);
  for (const struct rte *x = net ? rcu_dereference(net->routes) : NULL; x; x = rcu_dereference(x->next))
    if (x->src_ix == r->src_ix)
      return 1;
  return 0;
}

/* A direction holds its copies while the table they go into is crowded,
 * if fewer channels read that table than the one they come from: they
 * wait in the source's journal, which its readers share (nest/rt_press.c).
 * Held, the channel's reader is idle: it presses its own table no more. */
static int
pipe_export_busy(struct proto *pp, struct channel *c)
{
  struct pipe_proto *p = (struct pipe_proto *) pp;
  int dir = c != p->pri;
  struct rtable *dst = (dir ? p->pri : p->sec)->table;
  int crowded = rt_reader_count(dst) < rt_reader_count(c->table) && rt_import_wait(dst, &p->hold[dir].wait);
  return rt_hold_check(&p->hold[dir], crowded);
}

static enum proto_state
pipe_start(struct proto *pp)
{
  struct pipe_proto *p = (struct pipe_proto *) pp;
  p->pri = p->sec = NULL;
  p->declined[0] = p->declined[1] = 0;
  ev_init(&p->reoffer_ev, pipe_reoffer, p);
  ev_init(&p->gone_ev, pipe_gone_main, p);
  p->gone[0] = p->gone[1] = 0;
  LIST_WALK_ENTRY(c, &pp->channels, struct channel, n) {
    if (!p->pri)
      p->pri = c;
    else
      p->sec = c;
  }
  rt_hold_init(&p->hold[0], pp->loop, &p->pri->export_ev, 1);
  rt_hold_init(&p->hold[1], pp->loop, &p->sec->export_ev, 1);
  /* what each side writes is a copy of the other side's table */
  rt_sender_set_origin(p->pri->table, p->pri->sender_id, p->sec->table);
  rt_sender_set_origin(p->sec->table, p->sec->sender_id, p->pri->table);
  proto_set_info(pp, "%s <=> %s", p->pri->table->name, p->sec->table->name);
  return PS_UP;
}

/* Writes into one table waiting for the end of the export pass that made
 * them (export_flush), to go in as one rt_update_batch(). A pass runs in
 * one event of its pipe's loop and flushes before it returns, so one
 * queue per thread serves every pipe (4.7 KB each, two a pipe, were 0.9 MB
 * of a 100-pipe route server). Owner: the thread; between its pass's
 * first write and the flush, the channel `owner`. */
#define PIPE_BATCH 64
struct pipe_queue {
  struct channel *owner;
  uint n;
  struct rt_import im[PIPE_BATCH];
  union { net_addr n; net_addr_roa6 roa6; } net[PIPE_BATCH];
  u8 own[PIPE_BATCH];           /* a reference on im[].attrs is ours (the export filter's list) */
  u32 from[PIPE_BATCH];         /* an update's: the id of the route copied */
  int live_gone;                /* this pass: a withdrawal of a route still in its table */
};

static __thread struct pipe_queue pipe_tq;

/* The thread's queue, for the exports of channel c. Left with another
 * channel's writes, a pass would have ended without its flush: their
 * table would get them from another pipe's hands, or never. */
static struct pipe_queue *
pipe_q(struct channel *c)
{
  struct pipe_queue *q = &pipe_tq;
  ASSERT_DIE(!q->n || q->owner == c);
  q->owner = c;
  return q;
}

/* Write what the queue of the exports of channel c holds into the other table. */
static void
pipe_flush(struct proto *pp, struct channel *c)
{
  struct pipe_proto *p = (struct pipe_proto *) pp;
  struct pipe_queue *q = pipe_q(c);
  if (!q->n)
    return;
  struct channel *dst = c == p->pri ? p->sec : p->pri;
  rt_update_batch(dst->table, dst, q->im, q->n);
  chan_export_pass_own(dst);
  /* The import side of dst counts what entered its table (BIRD's pipe
   * statistics). A copy the table refused (a route of its source from
   * someone else is there: a loop) did not go out: its withdrawal, later,
   * is not ours to pass on either. */
  struct chan_tally t = { 0 };
  int gone = 0;
  for (uint i = 0; i < q->n; i++) {
    chan_tally(&t, q->im[i].result, !!q->im[i].attrs, 0);
    gone |= !q->im[i].attrs && (q->im[i].result & RT_UPD_USABLE) == RT_UPD_REMOVE;
    if ((q->im[i].result & RT_UPD_CLASH) && q->im[i].attrs) {
      log_rl(&p->rl, L_WARN, "%s: Route loop detected for %N", pp->name, q->im[i].net);
      chan_export_decline(c, q->from[i]);
      p->declined[c != p->pri] = 1;
    }
    if (q->own[i])
      ea_unref(q->im[i].attrs);
  }
  chan_tally_add(dst, &t);
  q->n = 0;
  if (gone && q->live_gone) {
    uatomic_set(&p->gone[c != p->pri], 1);
    ev_send(main_loop(), &p->gone_ev);
  }
  q->live_gone = 0;
}

/* The routes rt_notify gets stay valid until the end of the export pass
 * (RCU), and so do their sources and attributes (the pass holds its
 * reader's items, rt_reader_hold()); the export filter's
 * list (attrs other than the table route's own) goes right after: hold it. */
static void
pipe_queue(struct proto *pp, struct channel *c, const net_addr *n, struct rte_src *src, const struct rte *from,
           struct ea_list *attrs, const struct ea_list *table_attrs)
{
  struct pipe_queue *q = pipe_q(c);
  /* `import limit` (the primary channel's): what enters the primary table
   * counts against it, decided on the counts so far, so what is queued
   * goes in first. */
  struct pipe_proto *p = (struct pipe_proto *) pp;
  struct channel *dst = c == p->pri ? p->sec : p->pri;
  if (attrs && dst->cf->in_limit.max) {
    pipe_flush(pp, c);
    if (chan_limits_refuse(dst, n, src, 0)) {
      uatomic_inc(&dst->stats.imp_updates_ignored);
      return;
    }
  }
  uint i = q->n++;
  net_copy(&q->net[i].n, n);
  q->own[i] = attrs && attrs != table_attrs;
  q->from[i] = from ? from->id : 0;
  q->im[i] = (struct rt_import){ .net = &q->net[i].n, .src = src, .attrs = q->own[i] ? ea_ref(attrs) : attrs };
  if (q->n == PIPE_BATCH)
    pipe_flush(pp, c);
}

/* Did a pipe copy r into c's table from dst's? Then it goes no further:
 * copied back, it would replace or withdraw the route it was made of, or
 * (two pipes between the same tables) circle between them for good once
 * that route is gone. */
static int
pipe_copied_from(struct channel *c, const struct rte *r, struct channel *dst)
{
  return r && rt_sender_origin(c->table, r->sender) == dst->table;
}

static void
pipe_rt_notify(struct proto *pp, struct channel *c, const net_addr *n, struct rte *new, struct rte *old,
               const struct ea_list *new_src)
{
  struct pipe_proto *p = (struct pipe_proto *) pp;
  struct channel *dst = c == p->pri ? p->sec : p->pri;
  /* A route of the same source someone else put into dst (another
   * pipe's copy) is neither replaced nor withdrawn by ours: the table
   * refuses (RT_UPD_CLASH, pipe_flush). Nor does a copy go where the run
   * that made the route writes itself. */
  int take = new && !pipe_copied_from(c, new, dst) && !proto_run_home(rte_src(new)->run_info, dst->table);
  if (pipe_copied_from(c, old, dst))
    old = NULL;                     /* never ours to withdraw */
  if (old && (!take || new->src_ix != old->src_ix)) {
    /* one lookup per withdrawal, until one batch has a live one */
    struct pipe_queue *q = pipe_q(c);
    if (!new && !q->live_gone && pipe_route_there(c, n, old))
      q->live_gone = 1;
    pipe_queue(pp, c, n, rte_src(old), NULL, NULL, NULL);
  }
  if (take) {
    pipe_queue(pp, c, n, rte_src(new), new, rte_attrs(new), new_src);
    return;
  }
  /* A route not copied is not exported: its withdrawal, later, is not ours
   * to pass on either (it would take the original, same source). */
  if (new) {
    log_rl(&p->rl, L_WARN, "%s: Route loop detected for %N", pp->name, n);
    chan_export_decline(c, new->id);
  }
}

/* As BIRD's: `reload in` offers the peer table's routes to this one
 * again (through the import filter), `reload out` this table's to the
 * peer table. */
static void
pipe_reload(struct proto *pp, int dir)
{
  struct pipe_proto *p = (struct pipe_proto *) pp;
  if ((dir & PROTO_RELOAD_IN) && uatomic_read(&p->sec->state) == CS_UP && p->sec->reader.table)
    chan_refeed(p->sec);
  if ((dir & PROTO_RELOAD_OUT) && uatomic_read(&p->pri->state) == CS_UP && p->pri->reader.table)
    chan_refeed(p->pri);
}

static enum proto_state
pipe_shutdown(struct proto *pp)
{
  struct pipe_proto *p = (struct pipe_proto *) pp;
  rt_hold_stop(&p->hold[0]);
  rt_hold_stop(&p->hold[1]);
  return PS_DOWN;
}

static void
pipe_down_info(const struct proto *pp, char *buf, size_t size)
{
  const struct pipe_config *cf = (const struct pipe_config *) pp->cf;
  bsnprintf(buf, size, "%s <=> %s", cf->pri->table->name, cf->peer->name);
}

static int
pipe_reconfigure(struct proto *pp, struct proto_config *new)
{
  const struct pipe_config *o = (const struct pipe_config *) pp->pcf, *n = (const struct pipe_config *) new;
  return o->peer->table == n->peer->table && o->pri->table->table == n->pri->table->table;
}

const struct proto_class proto_pipe = {
  .name = "Pipe",
  .template_name = "pipe%d",
  .keyword = "pipe",
  .class_id = 4,
  .config_size = sizeof(struct pipe_config),
  .proto_size = sizeof(struct pipe_proto),
  .channel_mask = NB_IP | NB_ROA4 | NB_ROA6,
  .max_channels = 2,
  .source = RTS_PIPE,
  .default_preference = 70,
  .export_any = 1,
  .preconfig = pipe_preconfig,
  .postconfig = pipe_postconfig,
  .copy_config = pipe_copy_config,
  .start = pipe_start,
  .shutdown = pipe_shutdown,
  .rt_notify = pipe_rt_notify,
  .export_busy = pipe_export_busy,
  .export_always = 1,
  .export_flush = pipe_flush,
  .copies_gone = pipe_copies_gone,
  .show_channels = pipe_show_channels,
  .reconfigure = pipe_reconfigure,
  .reload = pipe_reload,
  .down_info = pipe_down_info,
};
