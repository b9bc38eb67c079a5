/*
 * DOC: Channel route limits (`receive limit`, `import limit`, `export
 * limit` with `action warn|block|restart|disable`).
 *
 * Checked in the protocol's loop when a route would be added. warn logs
 * once and lets the route in; block refuses routes beyond the limit;
 * restart and disable ask the main loop to act on the protocol (the
 * protocol loop cannot change its own lifecycle).
 */
#include "nest/proto.h"
#include "lib/log.h"

const char *const limit_action_names[] = { "disable", "warn", "block", "restart" };

static void
chan_limit_main_hook(void *data)
{
  struct proto *p = data;
  int what = __atomic_exchange_n(&p->limit_request, 0, __ATOMIC_ACQ_REL);
  if (what == LIMIT_RESTART)
    proto_cmd_restart(p, "route limit exceeded");
  else if (what == LIMIT_DISABLE + 0x100)
    proto_cmd_disable(p, "route limit exceeded");
}

void
chan_limit_init(struct proto *p)
{
  ev_init(&p->limit_ev, chan_limit_main_hook, p);
}

/*
 * A route is about to be added while `count` routes are counted; returns
 * 1 to accept it, 0 to refuse it. `hit` is the channel's [HIT] flag.
 */
int
chan_limit_allow(struct channel *c, const struct channel_limit *l, int *hit, u32 count, const char *dir)
{
  if (!l->max || count < l->max)
    return 1;
  struct proto *p = c->proto;
  if (!__atomic_exchange_n(hit, 1, __ATOMIC_ACQ_REL))
    log_msg(L_WARN, "Protocol %s hits route %s limit (%u), action: %s", p->name, dir, l->max,
            limit_action_names[l->action]);
  switch (l->action) {
  case LIMIT_WARN:
    return 1;
  case LIMIT_BLOCK:
    return 0;
  case LIMIT_RESTART:
  case LIMIT_DISABLE:
    __atomic_store_n(&p->limit_request, l->action == LIMIT_RESTART ? LIMIT_RESTART : LIMIT_DISABLE + 0x100,
                     __ATOMIC_RELEASE);
    ev_send(main_loop(), &p->limit_ev);
    return 0;
  }
  return 1;
}
