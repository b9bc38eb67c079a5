/*
 * DOC: The static protocol: routes from the config.
 */
#ifndef PROTO_STATIC_STATIC_H
#define PROTO_STATIC_STATIC_H

#include "nest/proto.h"
#include "conf/cf_context.h"
#include "lib/hash.h"

struct cli;
struct iface;

struct static_route {
  struct lnode n;
  struct hash_node hn;        /* in static_config.by_net (parse time) */
  net_addr net;
  enum rte_dest dest;
  ip_addr via;                /* RTD_UNICAST with a gateway */
  const char *dev;            /* interface name, or NULL */
  int onlink;
  const struct filter *cmds;  /* `{ ... }` statements setting attributes, or NULL */
  /* ASPA record (net type NET_ASPA): providers ascending, no duplicates;
   * aspa_set without providers is `transit` (AS0). Config memory. */
  u32 *aspa;
  uint aspa_count, aspa_size;
  int aspa_set;
};

struct static_config {
  struct proto_config c;
  struct lnode routes;        /* struct static_route */
  struct hash_table by_net;   /* duplicate check while parsing */
  int check_link;
};

/* Per-route run state, owner: the protocol's loop. */
struct static_state {
  const struct static_route *cf;
  struct ea_list *attrs;      /* what we announced (reference held); NULL:
                                 not installed (dormant) */
};

struct static_proto {
  struct proto p;
  struct static_state *st;    /* owner: proto loop; one per configured route */
  uint count;
  struct event iface_ev;
  linpool *filter_tmp;        /* owner: proto loop; scratch of route statements */
  int announced;              /* atomic: every route evaluated once (bird -T waits) */
};

extern const struct proto_class proto_static;

static inline struct static_config *static_cfg(struct cf_context *cx)
{ return (struct static_config *) cx->this_proto; }

struct static_route *static_route_new(struct cf_context *cx, const net_addr *n);
void static_route_set_via(struct static_route *r, ip_addr via, const char *dev);
void static_route_set_dev(struct static_route *r, const char *dev);
void static_route_set_dest(struct static_route *r, enum rte_dest dest);
void static_route_set_onlink(struct static_route *r, int onlink);
void static_route_add_provider(struct cf_context *cx, struct static_route *r, u32 asn);
/* Validate and add; returns an error text or NULL. */
const char *static_route_add(struct static_config *sc, struct static_route *r);

/* The interface a unicast route (RTD_UNICAST) goes out of now: its
 * gateway's neighbor interface, or the `dev` interface while up; NULL when
 * it cannot be installed (BIRD's "dormant"). Any loop, inside
 * rcu_read_lock(). */
struct iface *static_route_iface(const struct static_route *r);

/* `show static [name]` (proto/static/show.c), main loop: name NULL walks
 * every static protocol not down. */
void static_show(struct cli *c, const char *name);

#endif
