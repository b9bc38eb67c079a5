/*
 * DOC: Route traces of a protocol's `debug { routes, filters }`.
 *
 * The lines are BIRD 2's: the channel, `>` for what comes in and `<` for
 * what goes out, what happened, the network, the route's source ids and
 * its destination. A table's own `debug routes` (BIRD 3) prints the same
 * after the table's name (rt_trace_change). The mask is the protocol's
 * or'ed with its channel's (chan_debug), which the `debug` command changes
 * in the main loop while the channel's loop, a writer into a table, or an
 * update group exporting for the channel (chan_trace_as) reads it.
 */
#include "nest/proto.h"
#include "lib/log.h"

void
chan_trace_as(const char *proto, const char *chan, char dir, const char *msg, const net_addr *n,
              const struct rte_src *src, const struct ea_list *a)
{
  log_msg(L_TRACE, "%s.%s %c %s %N %luL %uG %s", proto, chan ? chan : "?", dir, msg, n,
          (unsigned long) src->private_id, src->global_id, a ? rte_dest_names[a->dest] : "?");
}

void
chan_trace(const struct channel *c, char dir, const char *msg, const net_addr *n, const struct rte_src *src,
           const struct ea_list *a)
{
  chan_trace_as(c->proto->name, c->name, dir, msg, n, src, a);
}
