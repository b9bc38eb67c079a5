/*
 * DOC: Interfaces and neighbors.
 *
 * The device protocol scans the system's interfaces and publishes an
 * immutable snapshot (struct iface_set) through RCU; anyone can read it.
 * struct iface is the stable identity of an interface (name, index); it is
 * never freed, so routes may point to it. Protocols that resolve next hops
 * subscribe to changes (an event sent after each new snapshot).
 */
#ifndef NEST_IFACE_H
#define NEST_IFACE_H

#include "lib/birdlib.h"
#include "lib/ip.h"
#include "lib/net.h"
#include "lib/loop.h"
#include "lib/rcu.h"

#define IFNAMSIZ_BIRD 16

struct iface {                 /* identity: never freed */
  char name[IFNAMSIZ_BIRD];
  uint index;
};

#define IA_PRIMARY 1
#define IA_PEER 2
#define IA_HOST 4

struct ifa {                   /* one address of an interface */
  ip_addr ip;
  net_addr prefix;
  ip_addr opposite;            /* point-to-point peer */
  uint flags;
  int scope;
};

#define IF_UP 1
#define IF_ADMIN_UP 2
#define IF_LINK_UP 4
#define IF_LOOPBACK 8
#define IF_BROADCAST 16
#define IF_MULTICAST 32
#define IF_MULTIACCESS 64

struct iface_info {
  struct iface *iface;
  uint flags;
  uint mtu;
  uint addr_count;
  struct ifa *addrs;
};

struct iface_set {             /* RCU-published snapshot */
  struct rcu_head rcu;
  uint count;
  struct iface_info *ifs;
  u64 generation;
};

/* Get (or create) the stable identity of an interface. Any loop. */
struct iface *iface_get(const char *name, uint index);
/* Replace the snapshot (device protocol). Takes ownership of set. */
void iface_publish(struct iface_set *set);
/* Current snapshot, inside rcu_read_lock(); may be an empty set. */
const struct iface_set *iface_current(void);
const struct iface_info *iface_find_info(const struct iface_set *s, const struct iface *i);

/* Neighbor resolution: the interface on which ip is directly reachable
 * (an up interface with an address whose prefix contains ip, not the
 * address itself). NULL if none. Inside rcu_read_lock(). */
struct iface *neigh_find(ip_addr ip, const struct iface *restrict_to);
/* Is ip one of our own addresses (on any interface that is up, loopback
 * included)? Inside rcu_read_lock(). */
int iface_addr_is_local(ip_addr ip);

/* Subscribe to snapshot changes: ev is sent to loop l after each publish. */
void iface_subscribe(struct loop *l, struct event *ev);
void iface_unsubscribe(struct event *ev);

#endif
