/*
 * DOC: Automatic reload when a ROA or ASPA table changes (`rpki reload`).
 *
 * A filter calling roa_check() or aspa_check() may give another verdict
 * once the table it reads has changed: a route accepted as valid must go
 * when its ROA does, one rejected as invalid must come when a ROA covers it.
 * So while a channel is up, it reads the journal of every such table of its
 * filters (filter_tables()), one subscription per table and direction, in
 * the protocol's loop. Changes only start a settle timer: when the table
 * has been quiet for its `min settle time`, or `max settle time` after the
 * first change not yet acted on, the import filter runs again over the
 * channel's routes (chan_reload_in()) or the export filter over the table
 * (chan_refeed()), whichever read the table. An RPKI cache replacing
 * thousands of ROAs thus costs one reload, not thousands; one changing a
 * few ROAs (up to CHAN_RELOAD_ONLY_MAX prefixes, the usual serial update)
 * re-imports only the routes within their prefixes (chan_reload_in_nets(),
 * from an import table) and refeeds only the nets within them
 * (chan_refeed_nets()).
 *
 * As in BIRD 2, a protocol whose reload asks the peer (BGP: route refresh)
 * is reloaded only from its own tables: imports with `import table on`,
 * exports with `export table on`; otherwise a warning says the reload is
 * not active. The tables stay alive while the protocol runs with the config
 * naming them (struct rtable, config_refs).
 *
 * A subscription's event may sit in the loop's queue after it ended (events
 * cannot be taken back), so ended ones wait on the channel's idle list for
 * reuse and go with the protocol's run pool.
 */
#include <stdlib.h>
#include "nest/proto.h"
#include "nest/rt.h"
#include "filter/filter.h"
#include "lib/log.h"
#include "lib/timeutil.h"

/* One table read by one direction's filter; owner: the protocol's loop. */
struct chan_roa_sub {
  struct chan_roa_sub *next;
  struct channel *c;
  int import;                 /* 1: reload imports, 0: refeed exports */
  struct rtable_config *tc;   /* for its settle times */
  struct rt_reader reader;
  struct event ev;            /* the table's journal has news */
  struct timer settle;
  btime first;                /* first change not acted on yet; 0: none */
  int stale;                  /* resubscribing: no filter reads it any more */
  /* The prefixes of the ROAs changed since, for a reload or refeed of
   * what they cover only; more of them (or ASPA) reload everything. */
  net_addr changed[CHAN_RELOAD_ONLY_MAX];
  uint nchanged;
  int all;
};

static void
chan_roa_settled(struct timer *t)
{
  struct chan_roa_sub *s = t->data;
  int all = s->all;
  s->first = 0;
  s->all = 0;
  uint n = s->nchanged;
  s->nchanged = 0;
  if (uatomic_read(&s->c->state) != CS_UP)
    return;
  if (!all && !n)
    return;                   /* only ROAs of the other family changed */
  if (s->import && !all)
    chan_reload_in_nets(s->c, s->changed, n);
  else if (s->import)
    chan_reload_in(s->c);
  else if (!all)
    chan_refeed_nets(s->c, s->changed, n);
  else
    chan_refeed(s->c);
}

/* Note a changed ROA for a reload of what it covers: a route's ROA
 * verdict depends on the ROAs whose prefix contains the route's. */
static void
chan_roa_note(struct chan_roa_sub *s, const net_addr *n)
{
  if (s->all)
    return;
  net_addr px;
  /* ASPA: any path may be concerned; routes other than IP: no prefix test */
  int ip = s->c->net_type == NET_IP4 || s->c->net_type == NET_IP6;
  if (ip && n->type == NET_ROA4)
    net_fill_ip4(&px, ((const net_addr_roa4 *) n)->prefix, n->pxlen);
  else if (ip && n->type == NET_ROA6)
    net_fill_ip6(&px, ((const net_addr_roa6 *) n)->prefix, n->pxlen);
  else {
    s->all = 1;
    return;
  }
  if ((px.type == NET_IP4) != (s->c->net_type == NET_IP4))
    return;                   /* covers none of the channel's routes */
  if (net_in_any(&px, s->changed, s->nchanged))
    return;
  if (s->nchanged == CHAN_RELOAD_ONLY_MAX)
    s->all = 1;
  else
    net_copy(&s->changed[s->nchanged++], &px);
}

static void
chan_roa_changed(void *data)
{
  struct chan_roa_sub *s = data;
  if (!s->reader.table)
    return;                   /* ended meanwhile */
  uint n = 0;
  const struct rt_journal_item *it;
  rcu_read_lock();
  /* An RPKI cache's full load is a million items: in turns, like exports */
  while ((it = rt_reader_next(&s->reader))) {
    chan_roa_note(s, &it->net->n);
    if (!(++n & 1023) && loop_budget_left() <= 0) {
      loop_yield();
      ev_schedule(&s->ev);
      break;
    }
  }
  rcu_read_unlock();
  if (!n)
    return;
  btime now = time_mono_now();     /* not the loop's: see rt_settle_kick */
  if (!s->first)
    s->first = now;
  btime when = MIN(now + s->tc->min_settle, s->first + s->tc->max_settle);
  tm_set(&s->settle, when);
}

struct chan_roa_walk {
  struct channel *c;
  int import;
  int valid;
  int found;
};

static void
chan_roa_add(void *ctx, struct rtable_config *tc)
{
  struct chan_roa_walk *w = ctx;
  struct channel *c = w->c;
  w->found = 1;
  if (!w->valid || !tc->table)
    return;
  /* Kept across a reconfiguration, so no change between the two configs'
   * commits (another protocol's, in its own loop) goes unseen. */
  for (struct chan_roa_sub *s = c->roa_subs; s; s = s->next)
    if (s->reader.table == tc->table && s->import == w->import) {
      s->tc = tc;
      s->stale = 0;
      return;
    }
  struct chan_roa_sub *s = NULL, **pp = &c->roa_idle;
  for (; *pp; pp = &(*pp)->next)
    if (!ev_active(&(*pp)->ev)) {
      s = *pp;
      *pp = s->next;
      break;
    }
  if (!s)
    s = mb_alloc(c->proto->run_pool, sizeof(*s));
  *s = (struct chan_roa_sub){ 0 };
  s->c = c;
  s->import = w->import;
  s->tc = tc;
  ev_init(&s->ev, chan_roa_changed, s);
  tm_init(&s->settle, c->proto->loop, chan_roa_settled, s);
  rt_reader_attach(tc->table, &s->reader, c->proto->loop, &s->ev);
  s->next = c->roa_subs;
  c->roa_subs = s;
}

static void
chan_roa_subscribe_dir(struct channel *c, int import)
{
  const struct filter *f = import ? c->in_filter : c->out_filter;
  if (f == FILTER_ACCEPT || f == FILTER_REJECT)
    return;
  const struct proto_class *pc = c->proto->class;
  struct chan_roa_walk w = { .c = c, .import = import, .valid = 1 };
  if (import)
    w.valid = c->in_table || (pc->reload_routes && !pc->reload_asks_peer);
  else
    w.valid = pc->rt_notify && (!pc->reload_asks_peer || c->cf->export_table);
  filter_tables(f, chan_roa_add, &w);
  if (w.found && !w.valid)
    log_msg(L_WARN, "%s.%s: Automatic RPKI reload not active for %s", c->proto->name, c->name,
            import ? "import" : "export");
}

static void
chan_roa_end(struct channel *c, struct chan_roa_sub *s)
{
  tm_stop(&s->settle);
  rt_reader_detach(&s->reader);
  s->next = c->roa_idle;
  c->roa_idle = s;
}

void
chan_roa_subscribe(struct channel *c)
{
  for (struct chan_roa_sub *s = c->roa_subs; s; s = s->next)
    s->stale = 1;
  if (c->cf->rpki_reload) {
    chan_roa_subscribe_dir(c, 1);
    chan_roa_subscribe_dir(c, 0);
  }
  for (struct chan_roa_sub **pp = &c->roa_subs; *pp;) {
    struct chan_roa_sub *s = *pp;
    if (s->stale) {
      *pp = s->next;
      chan_roa_end(c, s);
    } else
      pp = &s->next;
  }
}

void
chan_roa_resubscribe(struct channel *c)
{
  if (uatomic_read(&c->state) == CS_UP)
    chan_roa_subscribe(c);
}

void
chan_roa_unsubscribe(struct channel *c)
{
  while (c->roa_subs) {
    struct chan_roa_sub *s = c->roa_subs;
    c->roa_subs = s->next;
    chan_roa_end(c, s);
  }
}
