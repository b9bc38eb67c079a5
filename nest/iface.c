/*
 * DOC: Interface snapshots and neighbor lookup.
 *
 * The identity registry (struct iface) and the subscriber list are small
 * and rarely change, so a mutex guards them; the snapshot itself is read
 * lock-free through RCU.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "nest/iface.h"
#include "lib/log.h"
#include "lib/printf.h"
#include "lib/resource.h"

static pthread_mutex_t iface_lock = PTHREAD_MUTEX_INITIALIZER;

struct iface_ident {
  struct iface_ident *next;
  struct iface iface;
};
static struct iface_ident *idents;   /* under iface_lock; never freed */

struct iface_sub {
  struct iface_sub *next;
  struct loop *loop;
  struct event *ev;
};
static struct iface_sub *subs;       /* under iface_lock */

static struct iface_set empty_set;
static struct iface_set *current = &empty_set;   /* RCU */

struct iface *
iface_get(const char *name, uint index)
{
  pthread_mutex_lock(&iface_lock);
  struct iface_ident *i;
  for (i = idents; i; i = i->next)
    if (!strcmp(i->iface.name, name))
      break;
  if (!i) {
    i = calloc(1, sizeof(*i));
    if (!i)
      die("Out of memory");
    bsnprintf(i->iface.name, sizeof(i->iface.name), "%s", name);
    i->next = idents;
    idents = i;
    mem_account(MEM_PROTOCOLS, sizeof(*i), 0);
  }
  if (index)                  /* 0: a lookup by name (static `dev`), index unknown */
    i->iface.index = index;
  pthread_mutex_unlock(&iface_lock);
  return &i->iface;
}

static void
iface_set_free_rcu(struct rcu_head *h)
{
  struct iface_set *s = caa_container_of(h, struct iface_set, rcu);
  for (uint i = 0; i < s->count; i++)
    free(s->ifs[i].addrs);
  free(s->ifs);
  free(s);
}

void
iface_publish(struct iface_set *set)
{
  pthread_mutex_lock(&iface_lock);
  set->generation = current->generation + 1;
  struct iface_set *old = rcu_xchg_pointer(&current, set);
  if (old != &empty_set)
    call_rcu(&old->rcu, iface_set_free_rcu);
  for (struct iface_sub *s = subs; s; s = s->next)
    ev_send(s->loop, s->ev);
  pthread_mutex_unlock(&iface_lock);
}

const struct iface_set *
iface_current(void)
{
  return rcu_dereference(current);
}

const struct iface_info *
iface_find_info(const struct iface_set *s, const struct iface *i)
{
  for (uint k = 0; k < s->count; k++)
    if (s->ifs[k].iface == i)
      return &s->ifs[k];
  return NULL;
}

struct iface *
neigh_find(ip_addr ip, const struct iface *restrict_to)
{
  const struct iface_set *s = iface_current();
  int v4 = ipa_is_ip4(ip);
  for (uint k = 0; k < s->count; k++) {
    const struct iface_info *ii = &s->ifs[k];
    /* As in BIRD, nothing is a neighbor through a loopback interface. */
    if (!(ii->flags & IF_UP) || (ii->flags & IF_LOOPBACK) || (restrict_to && ii->iface != restrict_to))
      continue;
    for (uint a = 0; a < ii->addr_count; a++) {
      const struct ifa *fa = &ii->addrs[a];
      if ((fa->prefix.type == NET_IP4) != v4)
        continue;
      if (ipa_equal(fa->ip, ip))
        return NULL;             /* our own address is no neighbor */
      if (fa->flags & IA_PEER) {
        if (ipa_equal(fa->opposite, ip))
          return ii->iface;
        continue;
      }
      if (net_contains_ip(&fa->prefix, ip))
        return ii->iface;
    }
  }
  return NULL;
}

int
iface_addr_is_local(ip_addr ip)
{
  const struct iface_set *s = iface_current();
  for (uint k = 0; k < s->count; k++) {
    const struct iface_info *ii = &s->ifs[k];
    if (ii->flags & IF_UP)
      for (uint a = 0; a < ii->addr_count; a++)
        if (ipa_equal(ii->addrs[a].ip, ip))
          return 1;
  }
  return 0;
}

void
iface_subscribe(struct loop *l, struct event *ev)
{
  struct iface_sub *s = calloc(1, sizeof(*s));
  if (!s)
    die("Out of memory");
  s->loop = l;
  s->ev = ev;
  pthread_mutex_lock(&iface_lock);
  s->next = subs;
  subs = s;
  pthread_mutex_unlock(&iface_lock);
}

void
iface_unsubscribe(struct event *ev)
{
  pthread_mutex_lock(&iface_lock);
  for (struct iface_sub **pp = &subs; *pp; pp = &(*pp)->next)
    if ((*pp)->ev == ev) {
      struct iface_sub *s = *pp;
      *pp = s->next;
      free(s);
      break;
    }
  pthread_mutex_unlock(&iface_lock);
}
