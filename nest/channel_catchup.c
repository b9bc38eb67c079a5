/*
 * DOC: Export channels that fell behind their table's journal.
 *
 * Every change waits in the journal until the slowest reader has read it,
 * so one peer that stops reading (TCP window closed, process stopped)
 * would make the journal, and the routes it retires, grow without bound.
 * Once a reader is more than rt_laggard_limit() changes behind, the table
 * flags it, and the channel gives up on the changes: reading them again
 * as a feed of the table's current state costs one walk of its nets,
 * which past twice their number is the cheaper way anyway.
 *
 * What the feed cannot see is a route the channel exported that is no
 * longer in any chain (its net may be gone too). The skipped changes name
 * those: each retired route whose export bit is set. Skipping clears the
 * bit and keeps a copy of the route (with references on its attributes
 * and source: what the protocol needs to withdraw it), and after the feed
 * each copy is withdrawn unless the feed exported something in its place
 * (for a channel exporting every route: a route of the same source). A
 * route whose net holds nothing the feed could put in its place is
 * withdrawn at once instead, where the protocol can always take it
 * (catchup_replaceable).
 *
 * Both steps run in the channel's loop and yield to its budget; the feed
 * is the ordinary resumable one (chan_refeed's), and the reader stays at
 * the journal's end meanwhile, so only the changes made during the feed
 * are kept.
 */
#include <inttypes.h>
#include <stdlib.h>
#include "nest/proto.h"
#include "nest/rt.h"
#include "lib/log.h"

struct chan_gone {
  struct rte r;               /* copy; holds a reference on attrs and src */
  union {
    net_addr n;
    net_addr_roa6 largest;
  } net;
};

/* owner: proto loop */
struct chan_catchup {
  uint count, size, next;     /* next: first not yet processed */
  int walking;                /* skipping the journal (may take steps) */
  struct chan_gone *gone;
};

static struct chan_catchup *
catchup_new(void)
{
  struct chan_catchup *cu = calloc(1, sizeof(struct chan_catchup));
  if (!cu)
    die("Out of memory");
  mem_account(MEM_PROTOCOLS, sizeof(struct chan_catchup), 0);
  return cu;
}

static struct chan_catchup *
catchup_get(struct channel *c)
{
  if (!c->catchup)
    c->catchup = catchup_new();
  return c->catchup;
}

static void
catchup_remember(struct chan_catchup *cu, const net_addr *n, const struct rte *r)
{
  if (cu->count == cu->size) {
    uint size = cu->size ? cu->size * 2 : 64;
    cu->gone = realloc(cu->gone, size * sizeof(struct chan_gone));
    if (!cu->gone)
      die("Out of memory");
    mem_account(MEM_PROTOCOLS, (s64) (size - cu->size) * sizeof(struct chan_gone), 0);
    cu->size = size;
  }
  struct chan_gone *g = &cu->gone[cu->count++];
  g->r = rte_view(r, NULL);
  ea_ref(rte_attrs(&g->r));
  rt_lock_source(rte_src(&g->r));
  net_copy(&g->net.n, n);
}

/* What from has yet to withdraw, to, with references of to's own. */
static void
catchup_append(struct chan_catchup *to, const struct chan_catchup *from)
{
  for (uint i = from->next; i < from->count; i++)
    catchup_remember(to, &from->gone[i].net.n, &from->gone[i].r);
}

static void
catchup_release(struct chan_gone *g)
{
  ea_unref(rte_attrs(&g->r));
  rt_unlock_source(rte_src(&g->r));
}

void
chan_catch_up_discard(struct chan_catchup *cu)
{
  if (!cu)
    return;
  for (uint i = cu->next; i < cu->count; i++)
    catchup_release(&cu->gone[i]);
  mem_account(MEM_PROTOCOLS, -(s64) (sizeof(*cu) + cu->size * sizeof(struct chan_gone)), 0);
  free(cu->gone);
  free(cu);
}

void
chan_catch_up_drop(struct channel *c)
{
  chan_catch_up_discard(c->catchup);
  c->catchup = NULL;
}

/* The copy holds references of its own, so that it outlives the
 * original's finish: the group goes on withdrawing for its other
 * members meanwhile. */
struct chan_catchup *
chan_catch_up_owed(struct channel *c)
{
  struct chan_catchup *cu = c->catchup;
  if (!cu || cu->next == cu->count)
    return NULL;
  struct chan_catchup *copy = catchup_new();
  catchup_append(copy, cu);
  return copy;
}

/* The owed withdrawals wait for the end of c's next feed, as a
 * catch-up's own do. */
void
chan_catch_up_adopt(struct channel *c, struct chan_catchup *owed)
{
  if (!owed)
    return;
  struct chan_catchup *cu = c->catchup;
  if (!cu) {
    c->catchup = owed;
    return;
  }
  catchup_append(cu, owed);
  chan_catch_up_discard(owed);
}

/* Could the feed export something of net n in place of a route that went
 * (of source src, for a channel exporting every route)? When not, a
 * protocol that takes changes whenever they come (a pipe: no export_busy,
 * or export_always) is told of the withdrawal while the journal is
 * skipped, as a reader in step would be. A mass withdrawal (peers with
 * full tables gone) makes laggards of the pipes out of master4 in the
 * multi layout, and a copy of every route they had taken, held until the
 * feed was over, cost more than the journal's items they skipped. One
 * whose export_busy is a limit (BGP) may be unable to take them now: it
 * keeps the copies. */
static int
catchup_replaceable(struct net *n, struct rte_src *src)
{
  for (struct rte *r = rcu_dereference(n->routes); r; r = rcu_dereference(r->next))
    if (!src || rte_src(r) == src)
      return 1;
  return 0;
}

int
chan_catch_up(struct channel *c)
{
  struct chan_catchup *cu = c->catchup;
  if (!(cu && cu->walking)) {
    /* A running feed holds the reader where it began, and starting over
     * loses its progress: give it twice the slack. */
    if (c->feeding && rt_reader_lag(&c->reader) <= 2 * rt_laggard_limit(c->table)) {
      uatomic_set(&c->reader.laggard, 0);
      return 1;
    }
    log_msg(L_WARN, "%s.%s: %" PRIu64 " changes behind the table, feeding it again",
            c->proto->name, c->name, rt_reader_lag(&c->reader));
    cu = catchup_get(c);
    cu->walking = 1;
  }
  const struct rt_journal_item *it;
  int any = chan_exports_every_route(c);
  int now = !c->proto->class->export_busy || c->proto->class->export_always;
  uint k = 0;
  while ((it = rt_reader_next(&c->reader))) {
    struct rte *r = it->retired;
    if (r && chan_exp_bit(c, r->id)) {
      if (now && !catchup_replaceable(it->net, any ? rte_src(r) : NULL))
        chan_export_withdraw(c, it->net, r);
      else {
        chan_exp_set(c, r->id, 0);
        chan_stat_add(&c->stats.exp_routes, -1);
        catchup_remember(cu, &it->net->n, r);
      }
    }
    if (!(++k & 1023) && loop_budget_left() <= 0) {
      loop_yield();
      ev_schedule(&c->export_ev);
      return 0;
    }
  }
  cu->walking = 0;
  uatomic_set(&c->reader.laggard, 0);
  chan_feed_all(c);
  return 1;
}

/* Does the channel export a route of net n (of source src, if given)? */
static int
chan_net_exports(struct channel *c, struct net *n, struct rte_src *src)
{
  if (!n)
    return 0;
  for (struct rte *r = rcu_dereference(n->routes); r; r = rcu_dereference(r->next))
    if (chan_exp_bit(c, r->id) && (!src || rte_src(r) == src))
      return 1;
  return 0;
}

int
chan_catch_up_finish(struct channel *c, int (*busy)(struct proto *, struct channel *))
{
  struct chan_catchup *cu = c->catchup;
  int any = chan_exports_every_route(c);
  while (cu->next < cu->count) {
    if (busy && !(cu->next & 63) && busy(c->proto, c))
      return 0;       /* the protocol sends export_ev when it drained */
    struct chan_gone *g = &cu->gone[cu->next++];
    if (!chan_net_exports(c, rt_find_net(c->table, &g->net.n), any ? rte_src(&g->r) : NULL)) {
      chan_stat_add(&c->stats.exp_withdraws_accepted, 1);
      c->proto->class->rt_notify(c->proto, c, &g->net.n, NULL, &g->r, NULL);
      chan_export_flush(c);     /* before the copy goes */
    }
    catchup_release(g);
    if (busy && cu->next < cu->count && loop_budget_left() <= 0) {
      loop_yield();
      ev_schedule(&c->export_ev);
      return 0;
    }
  }
  chan_catch_up_drop(c);
  return 1;
}
