/*
 * DOC: Dynamic BGP: `neighbor range PREFIX`, as BIRD 2 has it.
 *
 * A protocol with a neighbor range has no session of its own: it stays in
 * Start, "Passive", and stands for every address of the range. When no
 * protocol has the exact neighbor address of an incoming connection, the
 * shared listener (bgp_listen.c, main loop) picks the range protocol and
 * bgp_dynamic_spawn() clones its config into a new instance with the
 * connecting address as neighbor, named `dynamic name` + number (dynbgp1,
 * dynbgp2, ... or peer001 with `dynamic name digits 3`). The listener then
 * hands the socket to that instance's loop as for any other instance.
 *
 * Afterwards a spawned instance is an ordinary BGP instance: it takes the
 * next connections from its address, and after a session drop it stays
 * and connects again, as BIRD 2.0.12's do. At `configure` it follows its
 * parent's new config (nest/proto.c, protos_commit): in place when it can,
 * else it is removed, as are the instances of a removed range and those
 * disabled by hand; their peers connect again and spawn fresh ones.
 *
 * Ownership: main loop only (the listener, the name counter, the config
 * clones, which live in the parent's struct config).
 */
#include "proto/bgp/bgp.h"
#include "lib/log.h"
#include "lib/printf.h"

/* BIRD numbers the spawns of one config from 1, skipping names in use: a
 * configure that removed instances makes their names free again. */
static struct proto_config *
bgp_dynamic_config(struct bgp_proto *range)
{
  const struct bgp_config *cf = (const struct bgp_config *) range->p.cf;
  if (range->dynamic_seq_cf != range->p.cf) {
    range->dynamic_seq_cf = range->p.cf;
    range->dynamic_seq = 0;
  }
  const char *base = cf->dynamic_name ? cf->dynamic_name : "dynbgp";
  /* every try skips a protocol or a symbol: this ends */
  for (;;) {
    char name[64];
    bsnprintf(name, sizeof(name), "%s%0*u", base, (int) cf->dynamic_name_digits, ++range->dynamic_seq);
    if (proto_find_by_name(name))
      continue;
    struct proto_config *pc = proto_config_clone(range->p.cf, name, NULL);
    if (pc)
      return pc;
  }
}

struct bgp_proto *
bgp_dynamic_spawn(struct bgp_proto *range, ip_addr remote)
{
  struct proto_config *pc = bgp_dynamic_config(range);
  ((struct bgp_config *) pc)->remote_ip = remote;
  struct proto *p = proto_spawn(pc);
  return p->loop ? (struct bgp_proto *) p : NULL;
}

int
bgp_respawn_config(struct proto_config *nc, const struct proto_config *oc)
{
  struct bgp_config *n = (struct bgp_config *) nc;
  const struct bgp_config *o = (const struct bgp_config *) oc;
  if (!bgp_cf_is_range(n) || !net_contains_ip(&n->remote_range, o->remote_ip))
    return 0;
  n->remote_ip = o->remote_ip;
  return 1;
}
