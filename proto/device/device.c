/*
 * DOC: The device protocol.
 *
 * Scans interfaces and their addresses with getifaddrs() at start and then
 * every `scan time` (BIRD's default 60 s), and publishes a new snapshot
 * only when something changed, so subscribers (static routes via a
 * gateway) re-evaluate only on real changes. `interface "pattern", ...`
 * limits which interfaces are seen.
 */
#include <fnmatch.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>
#include "proto/device/device.h"
#include "nest/iface.h"
#include "lib/log.h"
#include "lib/printf.h"

void
device_cfg_add_iface(struct device_config *dc, const char *pattern)
{
  if (dc->pattern_count < DEVICE_MAX_PATTERNS)
    dc->patterns[dc->pattern_count++] = pattern;
}

static void
device_preconfig(struct proto_config *pc)
{
  ((struct device_config *) pc)->scan_time = 60 * S_ 1;
}

static void
device_copy_config(struct proto_config *dst, const struct proto_config *src)
{
  struct device_config *d = (struct device_config *) dst;
  const struct device_config *s = (const struct device_config *) src;
  d->scan_time = s->scan_time;
  memcpy(d->patterns, s->patterns, sizeof(d->patterns));
  d->pattern_count = s->pattern_count;
}

static int
device_wanted(const struct device_config *dc, const char *name)
{
  if (!dc->pattern_count)
    return 1;
  for (uint i = 0; i < dc->pattern_count; i++) {
    const char *p = dc->patterns[i];
    int neg = p[0] == '-';
    if (!fnmatch(neg ? p + 1 : p, name, 0))
      return !neg;
  }
  return 0;
}

static struct iface_info *
device_info_get(struct iface_set *s, const char *name)
{
  for (uint i = 0; i < s->count; i++)
    if (!strcmp(s->ifs[i].iface->name, name))
      return &s->ifs[i];
  s->ifs = realloc(s->ifs, (s->count + 1) * sizeof(struct iface_info));
  if (!s->ifs)
    die("Out of memory");
  struct iface_info *ii = &s->ifs[s->count++];
  memset(ii, 0, sizeof(*ii));
  ii->iface = iface_get(name, if_nametoindex(name));
  return ii;
}

static int
sockaddr_ip(const struct sockaddr *sa, ip_addr *ip)
{
  if (!sa)
    return 0;
  if (sa->sa_family == AF_INET) {
    const struct sockaddr_in *s4 = (const struct sockaddr_in *) sa;
    *ip = ipa_from_ip4(ip4_get((const u8 *) &s4->sin_addr));
    return 4;
  }
  if (sa->sa_family == AF_INET6) {
    const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *) sa;
    *ip = ip6_get((const u8 *) &s6->sin6_addr);
    return 6;
  }
  return 0;
}

/* BIRD classifies an address by its own ranges, not by the kernel's
 * scope: loopback is host; IPv4 private (RFC 1918) and IPv6 unique-local
 * and site-local are site; IPv6 fe80::/10 is link; the rest universe. */
static int
device_addr_scope(ip_addr ip)
{
  if (ipa_is_ip4(ip)) {
    u32 a = ip4_to_u32(ipa_to_ip4(ip));
    if ((a >> 24) == 127)
      return SCOPE_HOST;
    if ((a >> 24) == 10 || (a & 0xffff0000) == 0xc0a80000 || (a & 0xfff00000) == 0xac100000)
      return SCOPE_SITE;
    return SCOPE_UNIVERSE;
  }
  if (ip6_is_link_local(ip))
    return SCOPE_LINK;
  u32 x = ip.addr[0];
  if ((x & 0xffc00000) == 0xfec00000 || (x & 0xfe000000) == 0xfc000000)
    return SCOPE_SITE;
  if (!x && !ip.addr[1] && !ip.addr[2] && ip.addr[3] == 1)
    return SCOPE_HOST;
  return SCOPE_UNIVERSE;
}

static int
device_addr_kind(ip_addr ip)
{
  return ipa_is_ip4(ip) ? 4 : ip6_is_link_local(ip) ? 1 : 6;
}

static void
device_add_addr(struct iface_info *ii, const struct ifaddrs *a)
{
  ip_addr ip, mask;
  int fam = sockaddr_ip(a->ifa_addr, &ip);
  if (!fam || !sockaddr_ip(a->ifa_netmask, &mask))
    return;
  int len = fam == 4 ? ip4_masklen(ipa_to_ip4(mask)) : ip6_masklen(&mask);
  if (len < 0)
    return;
  ii->addrs = realloc(ii->addrs, (ii->addr_count + 1) * sizeof(struct ifa));
  if (!ii->addrs)
    die("Out of memory");
  struct ifa *fa = &ii->addrs[ii->addr_count++];
  memset(fa, 0, sizeof(*fa));
  fa->ip = ip;
  net_fill_ipa(&fa->prefix, ip, len);
  net_normalize(&fa->prefix);
  fa->scope = device_addr_scope(ip);
  if ((a->ifa_flags & IFF_POINTOPOINT) && sockaddr_ip(a->ifa_dstaddr, &fa->opposite) && !ipa_equal(fa->opposite, ip))
    fa->flags |= IA_PEER;
  /* BIRD: the first address of each kind is the preferred one: IPv4,
   * IPv6, IPv6 link-local (getifaddrs does not say which the kernel
   * marks secondary; the first of a subnet is the primary one there too) */
  int kind = device_addr_kind(ip);
  for (uint i = 0; i + 1 < ii->addr_count; i++)
    if ((ii->addrs[i].flags & IA_PRIMARY) && device_addr_kind(ii->addrs[i].ip) == kind)
      return;
  fa->flags |= IA_PRIMARY;
}

static uint
iface_mtu(const char *name)
{
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return 0;
  struct ifreq ifr;
  memset(&ifr, 0, sizeof(ifr));
  bsnprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
  uint mtu = ioctl(fd, SIOCGIFMTU, &ifr) < 0 ? 0 : (uint) ifr.ifr_mtu;
  close(fd);
  return mtu;
}

static int
device_set_equal(const struct iface_set *a, const struct iface_set *b)
{
  if (a->count != b->count)
    return 0;
  for (uint i = 0; i < a->count; i++) {
    const struct iface_info *x = &a->ifs[i], *y = &b->ifs[i];
    if (x->iface != y->iface || x->flags != y->flags || x->mtu != y->mtu || x->addr_count != y->addr_count)
      return 0;
    if (x->addr_count && memcmp(x->addrs, y->addrs, x->addr_count * sizeof(struct ifa)))
      return 0;
  }
  return 1;
}

static void
device_scan(struct device_proto *dp)
{
  const struct device_config *dc = (const struct device_config *) dp->p.pcf;
  struct ifaddrs *list;
  if (getifaddrs(&list) < 0) {
    log_msg(L_ERR, "%s: Interface scan failed: %m", dp->p.name);
    return;
  }
  struct iface_set *s = calloc(1, sizeof(*s));
  if (!s)
    die("Out of memory");
  for (struct ifaddrs *a = list; a; a = a->ifa_next) {
    if (!a->ifa_name || !device_wanted(dc, a->ifa_name))
      continue;
    struct iface_info *ii = device_info_get(s, a->ifa_name);
    uint f = 0;
    if (a->ifa_flags & IFF_UP) f |= IF_ADMIN_UP;
    if (a->ifa_flags & IFF_RUNNING) f |= IF_LINK_UP;
    if ((a->ifa_flags & IFF_UP) && (a->ifa_flags & IFF_RUNNING)) f |= IF_UP;
    /* BIRD 2's classes: loopback and NBMA are multi-access; a broadcast
     * interface is multicast-capable whatever the kernel flag says */
    if (a->ifa_flags & IFF_LOOPBACK) f |= IF_LOOPBACK | IF_MULTIACCESS;
    else if (a->ifa_flags & IFF_POINTOPOINT) f |= IF_MULTICAST;
    else if (a->ifa_flags & IFF_BROADCAST) f |= IF_BROADCAST | IF_MULTIACCESS | IF_MULTICAST;
    else f |= IF_MULTIACCESS;
    if (a->ifa_flags & IFF_MULTICAST) f |= IF_MULTICAST;
    ii->flags = f;
    device_add_addr(ii, a);
  }
  freeifaddrs(list);
  for (uint i = 0; i < s->count; i++)
    s->ifs[i].mtu = iface_mtu(s->ifs[i].iface->name);

  rcu_read_lock();
  int same = device_set_equal(iface_current(), s);
  rcu_read_unlock();
  if (same) {
    for (uint i = 0; i < s->count; i++)
      free(s->ifs[i].addrs);
    free(s->ifs);
    free(s);
    return;
  }
  iface_publish(s);
}

static void
device_scan_timer(struct timer *t)
{
  device_scan(t->data);
}

static enum proto_state
device_start(struct proto *p)
{
  struct device_proto *dp = (struct device_proto *) p;
  const struct device_config *dc = (const struct device_config *) p->pcf;
  tm_init(&dp->scan_timer, p->loop, device_scan_timer, dp);
  dp->scan_timer.recurrent = dc->scan_time;
  device_scan(dp);
  tm_start(&dp->scan_timer, dc->scan_time);
  return PS_UP;
}

static enum proto_state
device_shutdown(struct proto *p)
{
  struct device_proto *dp = (struct device_proto *) p;
  tm_stop(&dp->scan_timer);
  return PS_DOWN;
}

static int
device_reconfigure(struct proto *p, struct proto_config *new)
{
  struct device_proto *dp = (struct device_proto *) p;
  const struct device_config *dc = (const struct device_config *) new;
  p->pcf = new;
  dp->scan_timer.recurrent = dc->scan_time;
  tm_start(&dp->scan_timer, dc->scan_time);
  device_scan(dp);
  return 1;
}

const struct proto_class proto_device = {
  .name = "Device",
  .template_name = "device%d",
  .keyword = "device",
  .class_id = 1,
  .config_size = sizeof(struct device_config),
  .proto_size = sizeof(struct device_proto),
  .channel_mask = 0,
  .max_channels = 0,
  .source = RTS_DEVICE,
  .default_preference = 240,
  .preconfig = device_preconfig,
  .copy_config = device_copy_config,
  .start = device_start,
  .shutdown = device_shutdown,
  .reconfigure = device_reconfigure,
};
