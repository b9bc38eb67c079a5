/*
 * DOC: BGP listening sockets (main loop).
 *
 * One dual-stack listening socket per local (address, port), shared by
 * every BGP instance using it and reference-counted. An accepted
 * connection is matched to the instance whose neighbor address (and local
 * address, when set) fits, and handed to that instance's loop; failing
 * that, a neighbor range holding the address spawns an instance for it
 * (bgp_dynamic.c). Unknown peers are closed at once, as BIRD does.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "proto/bgp/bgp.h"
#include "lib/log.h"
#include "lib/printf.h"

struct bgp_listener {
  struct bgp_listener *next;
  ip_addr addr;                 /* IPA_NONE: any */
  uint port;
  int fd;
  int uses;
  struct loop_fd lfd;
};

static struct bgp_listener *listeners;   /* main loop */

static ip_addr
sa_to_ipa(const struct sockaddr_in6 *sa)
{
  return ip6_get((const u8 *) &sa->sin6_addr);
}

static int
bgp_running(const struct proto *pp)
{
  return pp->loop && !pp->stopping;
}

/* The running instance with this neighbor address. Without one, *range is
 * the range protocol to spawn one, unless an instance for the address
 * exists but is down (BIRD refuses then too, and a disabled instance of a
 * range keeps its address until `configure` removes it). Of nested ranges
 * the most specific spawns: BIRD takes the last in the config, but the
 * narrower range is the one written for these peers. */
static struct bgp_proto *
bgp_find_peer(ip_addr remote, ip_addr local, uint port, struct bgp_proto **range)
{
  const struct bgp_config *best = NULL;
  int known = 0;
  *range = NULL;
  LIST_WALK_ENTRY(pp, proto_list(), struct proto, n) {
    if (pp->class != &proto_bgp)
      continue;
    const struct bgp_config *cf = (const struct bgp_config *) pp->cf;
    if ((cf->local_port ? cf->local_port : BGP_PORT) != port)
      continue;
    if (ipa_nonzero(cf->local_ip) && !ipa_equal(cf->local_ip, local))
      continue;
    if (ipa_equal(cf->remote_ip, remote)) {
      if (bgp_running(pp))
        return (struct bgp_proto *) pp;
      known = 1;
      continue;
    }
    if (bgp_cf_is_range(cf) && bgp_running(pp) && net_contains_ip(&cf->remote_range, remote) &&
        (!best || cf->remote_range.pxlen > best->remote_range.pxlen)) {
      *range = (struct bgp_proto *) pp;
      best = cf;
    }
  }
  if (known)
    *range = NULL;
  return NULL;
}

static void
bgp_listen_accept(struct loop_fd *f)
{
  struct bgp_listener *l = f->data;
  for (;;) {
    struct sockaddr_in6 sa;
    socklen_t salen = sizeof(sa);
    int fd = accept4(f->fd, (struct sockaddr *) &sa, &salen, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED)
        continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK)
        log_msg(L_ERR, "BGP: accept on port %u: %m", l->port);
      return;
    }
    struct sockaddr_in6 la;
    socklen_t lalen = sizeof(la);
    getsockname(fd, (struct sockaddr *) &la, &lalen);
    ip_addr remote = sa_to_ipa(&sa), local = sa_to_ipa(&la);
    struct bgp_proto *range, *p = bgp_find_peer(remote, local, l->port, &range);
    if (!p && range)
      p = bgp_dynamic_spawn(range, remote);
    if (!p) {
      log_msg(L_WARN, "BGP: Unexpected connect from unknown address %I (port %u)", remote, ntohs(sa.sin6_port));
      close(fd);
      continue;
    }
    int none = -1;
    if (!__atomic_compare_exchange_n(&p->incoming_fd, &none, fd, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      /* The previous incoming connection was not picked up yet. */
      close(fd);
      continue;
    }
    ev_send(p->p.loop, &p->incoming_ev);
  }
}

static struct bgp_listener *
bgp_listener_find(ip_addr addr, uint port)
{
  for (struct bgp_listener *l = listeners; l; l = l->next)
    if (l->port == port && ipa_equal(l->addr, addr))
      return l;
  return NULL;
}

int
bgp_listen_open(ip_addr addr, uint port, char *err, size_t errlen)
{
  struct bgp_listener *l = bgp_listener_find(addr, port);
  if (l) {
    l->uses++;
    return 0;
  }
  int fd = socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    bsnprintf(err, errlen, "Cannot create listening socket: %m");
    return -1;
  }
  int one = 1, zero = 0;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
  struct sockaddr_in6 sa = { .sin6_family = AF_INET6, .sin6_port = htons(port) };
  ip6_put((u8 *) &sa.sin6_addr, addr);
  if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 || listen(fd, 128) < 0) {
    bsnprintf(err, errlen, "Cannot listen on port %u: %m", port);
    close(fd);
    return -1;
  }
  l = calloc(1, sizeof(*l));
  if (!l)
    die("Out of memory");
  l->addr = addr;
  l->port = port;
  l->fd = fd;
  l->uses = 1;
  l->lfd.rx = bgp_listen_accept;
  l->lfd.data = l;
  loop_fd_add(main_loop(), &l->lfd, fd);
  l->next = listeners;
  listeners = l;
  return 0;
}

int
bgp_listen_md5(ip_addr addr, uint port, ip_addr remote, int pxlen, const char *password)
{
  struct bgp_listener *l = bgp_listener_find(addr, port);
  return l ? bgp_md5_set(l->fd, remote, pxlen, password) : -1;
}

void
bgp_listen_close(ip_addr addr, uint port)
{
  for (struct bgp_listener **pp = &listeners; *pp; pp = &(*pp)->next) {
    struct bgp_listener *l = *pp;
    if (l->port != port || !ipa_equal(l->addr, addr))
      continue;
    if (--l->uses)
      return;
    *pp = l->next;
    loop_fd_remove(&l->lfd);
    close(l->fd);
    free(l);
    return;
  }
}
