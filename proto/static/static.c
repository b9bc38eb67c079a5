/*
 * DOC: The static protocol.
 *
 * Each configured route is evaluated into an interned attribute list: its
 * destination, and for `via` routes the neighbor's interface (a gateway
 * that is not directly reachable leaves the route out, as in BIRD). The
 * result is imported only when it differs from what was announced, so
 * re-evaluating everything (interface change, reconfiguration) touches
 * exactly the routes that changed. Reconfiguration keeps the protocol up:
 * removed routes are withdrawn, new ones announced, the rest untouched.
 */
#include <string.h>
#include "proto/static/static.h"
#include "nest/iface.h"
#include "nest/ea_bgp.h"
#include "lib/log.h"
#include "lib/printf.h"

/* --- Config --- */

struct static_route *
static_route_new(struct cf_context *cx, const net_addr *n)
{
  struct static_route *r = cf_alloc(cx, sizeof(*r));
  net_copy(&r->net, n);
  return r;
}

void static_route_set_via(struct static_route *r, ip_addr via, const char *dev)
{ r->dest = RTD_UNICAST; r->via = via; r->dev = dev; }
void static_route_set_dev(struct static_route *r, const char *dev)
{ r->dest = RTD_UNICAST; r->via = IPA_NONE; r->dev = dev; }
void static_route_set_dest(struct static_route *r, enum rte_dest dest) { r->dest = dest; }
void static_route_set_onlink(struct static_route *r, int onlink) { r->onlink = onlink; }

/* Kept sorted: RTR and the ASPA profile carry providers ascending, so
 * equal sets intern as one attribute list whatever the config order. */
void
static_route_add_provider(struct cf_context *cx, struct static_route *r, u32 asn)
{
  r->aspa_set = 1;
  uint i = 0;
  while (i < r->aspa_count && r->aspa[i] < asn)
    i++;
  if (i < r->aspa_count && r->aspa[i] == asn)
    return;
  if (r->aspa_count == r->aspa_size) {
    uint size = r->aspa_size ? 2 * r->aspa_size : 4;
    u32 *a = cf_alloc(cx, size * sizeof(u32));
    if (r->aspa_count)
      memcpy(a, r->aspa, r->aspa_count * sizeof(u32));
    r->aspa = a;          /* the old array stays in config memory */
    r->aspa_size = size;
  }
  memmove(r->aspa + i + 1, r->aspa + i, (r->aspa_count - i) * sizeof(u32));
  r->aspa[i] = asn;
  r->aspa_count++;
}

static int
static_net_eq(const struct hash_node *n, const void *key)
{
  return net_equal(&container_of(n, struct static_route, hn)->net, key);
}

const char *
static_route_add(struct static_config *sc, struct static_route *r)
{
  /* A hash, not a scan: configs with a million routes exist. */
  if (!sc->by_net.buckets)
    hash_init(&sc->by_net, sc->c.global->pool, 10);
  u32 h = net_hash(&r->net);
  if (hash_find(&sc->by_net, h, static_net_eq, &r->net))
    return "Duplicate static route";
  hash_insert(&sc->by_net, &r->hn, h);
  if (r->net.type == NET_ASPA && !r->aspa_set)
    return "ASPA route needs providers or transit";
  /* Only IP routes have a destination (BIRD's wording for both mistakes). */
  if ((r->net.type == NET_IP4 || r->net.type == NET_IP6) != (r->dest != RTD_NONE))
    return "Unexpected or missing nexthop/type";
  if (r->dest == RTD_UNICAST && ipa_nonzero(r->via) && r->net.type != NET_ROA4 && r->net.type != NET_ROA6 &&
      ipa_is_ip4(r->via) != (r->net.type == NET_IP4))
    return "Gateway address family does not match the route";
  list_add_tail(&sc->routes, &r->n);
  return NULL;
}

static void
static_preconfig(struct proto_config *pc)
{
  struct static_config *sc = (struct static_config *) pc;
  list_init(&sc->routes);
}

static int
static_postconfig(struct proto_config *pc, char *err, size_t errlen)
{
  struct static_config *sc = (struct static_config *) pc;
  struct channel_config *cc = list_empty(&pc->channels) ? NULL :
    container_of(list_first(&pc->channels), struct channel_config, n);
  if (!cc) {
    bsnprintf(err, errlen, "Channel not specified");
    return -1;
  }
  LIST_WALK_ENTRY(r, &sc->routes, struct static_route, n)
    if (r->net.type != cc->net_type) {
      bsnprintf(err, errlen, "Route %N incompatible with channel type", &r->net);
      return -1;
    }
  return 0;
}

static void
static_copy_config(struct proto_config *dst, const struct proto_config *src)
{
  struct static_config *d = (struct static_config *) dst;
  const struct static_config *s = (const struct static_config *) src;
  d->check_link = s->check_link;
  LIST_WALK_ENTRY(r, &s->routes, struct static_route, n) {
    struct static_route *x = lp_allocz(dst->global->mem, sizeof(*x));
    *x = *r;
    list_add_tail(&d->routes, &x->n);
  }
}

/* --- Run time (protocol loop) --- */

static struct channel *
static_channel(struct static_proto *sp)
{
  return list_empty(&sp->p.channels) ? NULL : container_of(list_first(&sp->p.channels), struct channel, n);
}

struct iface *
static_route_iface(const struct static_route *r)
{
  struct iface *dev = r->dev ? iface_get(r->dev, 0) : NULL;
  const struct iface_set *set = iface_current();
  if (ipa_nonzero(r->via) && !r->onlink)
    return neigh_find(r->via, dev);
  /* `dev X` and `via A dev X onlink`: the interface itself, while up */
  const struct iface_info *ii = dev ? iface_find_info(set, dev) : NULL;
  return (ii && (ii->flags & IF_UP)) ? dev : NULL;
}

/* Attributes the route should have now, or NULL if it cannot be installed. */
static struct ea_list *
static_evaluate(struct static_proto *sp, const struct static_route *r)
{
  struct channel *c = static_channel(sp);
  struct ea_builder b;
  ea_builder_init(&b);
  b.source = RTS_STATIC;
  b.dest = r->dest;
  b.scope = SCOPE_UNIVERSE;
  b.preference = c->preference;

  if (r->net.type == NET_ASPA) {
    static const u32 none;
    ea_set_data(&b, EA_GEN_ASPA_PROVIDERS, EAF_INT_SET, 0, r->aspa_count ? r->aspa : &none, 4 * r->aspa_count);
  }
  if (r->dest == RTD_UNICAST) {
    rcu_read_lock();
    b.gw = r->via;
    b.iface = static_route_iface(r);
    rcu_read_unlock();
    if (!b.iface)
      return NULL;
  }
  struct ea_list *a = ea_intern(&b);
  if (r->cmds) {
    /* The route's own statements; an error leaves the route as it was. */
    struct f_route fr = { .net = &r->net, .attrs = a, .src = sp->p.main_source };
    f_eval_rte(r->cmds, &fr, sp->filter_tmp);
    lp_flush(sp->filter_tmp);
    if (fr.out) {
      ea_unref(a);
      a = fr.out;
    }
  }
  return a;
}

static void
static_update(struct static_proto *sp, struct static_state *st)
{
  struct ea_list *a = st->cf ? static_evaluate(sp, st->cf) : NULL;
  if (a == st->attrs) {
    if (a)
      ea_unref(a);
    return;
  }
  chan_import(static_channel(sp), &st->cf->net, sp->p.main_source, a);
  if (st->attrs)
    ea_unref(st->attrs);
  st->attrs = a;
}

static void
static_update_all(void *data)
{
  struct static_proto *sp = data;
  for (uint i = 0; i < sp->count; i++)
    static_update(sp, &sp->st[i]);
  uatomic_set(&sp->announced, 1);
}

static int
static_announced(struct proto *p)
{
  return uatomic_read(&((struct static_proto *) p)->announced);
}

static void
static_build_state(struct static_proto *sp, struct static_config *sc)
{
  uint n = list_length(&sc->routes);
  sp->st = mb_allocz(sp->p.run_pool, (n ? n : 1) * sizeof(struct static_state));
  sp->count = 0;
  LIST_WALK_ENTRY(r, &sc->routes, struct static_route, n)
    sp->st[sp->count++].cf = r;
}

static enum proto_state
static_start(struct proto *p)
{
  struct static_proto *sp = (struct static_proto *) p;
  sp->filter_tmp = lp_new(p->run_pool);
  uatomic_set(&sp->announced, 0);
  static_build_state(sp, (struct static_config *) p->pcf);
  ev_init(&sp->iface_ev, static_update_all, sp);
  iface_subscribe(p->loop, &sp->iface_ev);
  /* Channels go up when we report Up; announce right after that. */
  ev_schedule(&sp->iface_ev);
  return PS_UP;
}

static enum proto_state
static_shutdown(struct proto *p)
{
  struct static_proto *sp = (struct static_proto *) p;
  iface_unsubscribe(&sp->iface_ev);
  for (uint i = 0; i < sp->count; i++)
    if (sp->st[i].attrs) {
      ea_unref(sp->st[i].attrs);
      sp->st[i].attrs = NULL;
    }
  /* The channel flush removes our routes from the table. */
  return PS_DOWN;
}

static int
static_reconfigure(struct proto *p, struct proto_config *new)
{
  struct static_proto *sp = (struct static_proto *) p;
  struct static_config *nc = (struct static_config *) new;
  struct static_state *old = sp->st;
  uint old_count = sp->count;

  static_build_state(sp, nc);
  /* Carry over what was announced for each net still configured. */
  for (uint i = 0; i < sp->count; i++)
    for (uint k = 0; k < old_count; k++)
      if (old[k].cf && net_equal(&old[k].cf->net, &sp->st[i].cf->net)) {
        sp->st[i].attrs = old[k].attrs;
        old[k].attrs = NULL;
        old[k].cf = NULL;
        break;
      }
  /* Withdraw routes no longer configured. */
  for (uint k = 0; k < old_count; k++)
    if (old[k].cf && old[k].attrs) {
      chan_import(static_channel(sp), &old[k].cf->net, p->main_source, NULL);
      ea_unref(old[k].attrs);
    }
  mb_free(old);
  /* The channel's new preference is in place already (see proto.c). */
  static_update_all(sp);
  return 1;
}

/* The import filter changed: announce everything again through it. */
static void
static_reload_routes(struct channel *c)
{
  struct static_proto *sp = (struct static_proto *) c->proto;
  for (uint i = 0; i < sp->count; i++)
    if (sp->st[i].attrs)
      chan_import(c, &sp->st[i].cf->net, sp->p.main_source, sp->st[i].attrs);
}

static void
static_rte_info(const struct rte *r, char *buf, size_t size)
{
  /* BIRD 2 shows a route's igp_metric after the preference */
  if (rte_attrs(r)->igp_metric)
    bsnprintf(buf, size, " (%u/%u)", rte_attrs(r)->preference, rte_attrs(r)->igp_metric);
  else
    bsnprintf(buf, size, " (%u)", rte_attrs(r)->preference);
}

const struct proto_class proto_static = {
  .name = "Static",
  .template_name = "static%d",
  .keyword = "static",
  .class_id = 2,
  .config_size = sizeof(struct static_config),
  .proto_size = sizeof(struct static_proto),
  .channel_mask = NB_IP | NB_ROA4 | NB_ROA6 | NB_ASPA,
  .max_channels = 1,
  .source = RTS_STATIC,
  .default_preference = 200,
  .preconfig = static_preconfig,
  .postconfig = static_postconfig,
  .copy_config = static_copy_config,
  .start = static_start,
  .shutdown = static_shutdown,
  .reconfigure = static_reconfigure,
  .reload_routes = static_reload_routes,
  .rte_info = static_rte_info,
  .announced = static_announced,
};
