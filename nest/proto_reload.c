/*
 * DOC: `reload [in|out] <proto>`: re-import and re-export without a restart.
 *
 * The CLI (main loop) asks; the protocol's loop does it. Re-import is the
 * class's reload_routes (BGP: ROUTE-REFRESH to the neighbor, an enhanced
 * refresh then runs as a refresh cycle; static: the routes again through
 * the filter). Re-export is a refeed of the channel through its export
 * filter. Requests that meet a pending one merge (bits of an atomic word).
 */
#include "nest/proto.h"
#include "lib/log.h"

static void
proto_reload_hook(void *data)
{
  struct proto *p = data;
  int dir = uatomic_xchg(&p->reload_request, 0);
  if (p->class->reload) {
    p->class->reload(p, dir);
    return;
  }
  LIST_WALK_ENTRY(c, &p->channels, struct channel, n) {
    if (uatomic_read(&c->state) != CS_UP)
      continue;
    if (dir & PROTO_RELOAD_IN)
      chan_reload_in(c);      /* from the import table if kept, else the protocol resends */
    if ((dir & PROTO_RELOAD_OUT) && c->reader.table)
      chan_refeed(c);
    else if ((dir & PROTO_RELOAD_OUT) && c->export_elsewhere && p->class->refeed_elsewhere)
      p->class->refeed_elsewhere(c);
  }
}

int
proto_cmd_reload(struct proto *p, int dir)
{
  ASSERT_INSIDE(main_loop());
  if (p->state != PS_UP || !p->loop)
    return 0;
  /* BIRD 2: every channel must be able to reload (none: nothing to do) */
  if ((dir & PROTO_RELOAD_IN) && !list_empty(&p->cf->channels) &&
      ((!p->class->reload_routes && !p->class->reload) || (p->class->can_reload_in && p->class->can_reload_in(p) < 0)))
    return -1;
  if (p->class->can_reload_in && !p->class->can_reload_in(p))
    return 0;
  log_msg(L_INFO, "Reloading protocol %s", p->name);
  if (!p->reload_ev.hook)
    ev_init(&p->reload_ev, proto_reload_hook, p);
  __atomic_or_fetch(&p->reload_request, dir, __ATOMIC_SEQ_CST);
  ev_send(p->loop, &p->reload_ev);
  return 1;
}
