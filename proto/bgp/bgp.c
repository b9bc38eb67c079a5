/*
 * DOC: The BGP protocol class: configuration checks, start, stop,
 * reconfiguration. Sessions are in bgp_conn.c, import in bgp_rx.c, export
 * in bgp_tx.c, CLI and best path in bgp_show.c, listening in bgp_listen.c,
 * neighbor ranges in bgp_dynamic.c.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "proto/bgp/bgp.h"
#include "proto/bgp/bgp_group.h"
#include "proto/bgp/bgp_memo.h"
#include "nest/reconf.h"
#include "lib/log.h"
#include "lib/printf.h"

extern const struct ea_class_desc bgp_ea_class;

static void
bgp_preconfig(struct proto_config *pc)
{
  struct bgp_config *c = (struct bgp_config *) pc;
  c->multihop = -1;
  c->hold_time = 240;
  c->connect_retry_time = 120;
  c->connect_delay_time = 5;
  c->error_wait_min = 60;
  c->error_wait_max = 300;
  c->error_forget_time = 300;
  c->startup_hold_time = 240;
  c->enable_refresh = 1;
  c->enable_as4 = 1;
  c->capabilities = -1;
  c->gr_mode = BGP_GR_AWARE;
  c->gr_time = 120;
  c->llgr_mode = -1;
  c->llgr_time = 3600;
  c->default_local_pref = 100;
  c->interpret_communities = 1;
  c->allow_as_sets = 1;
  c->igp_metric = 1;
  c->path_metric = 1;
  c->local_role = BGP_ROLE_NONE;
}

/* The IGP table of one next-hop family by default: the channel's own
 * table if of that type, else that of the protocol's other channel
 * (BIRD's bgp_default_igp_table). */
static struct rtable_config *
bgp_default_igp_table(const struct bgp_config *c, const struct bgp_channel_config *bc, uint net_type)
{
  if (bc->c.table->net_type == net_type)
    return bc->c.table;
  LIST_WALK_ENTRY(cc, &c->c.channels, struct channel_config, n)
    if (cc->table && cc->table->net_type == net_type)
      return cc->table;
  /* last, the config's default table of the type (master6 for the IPv6
   * next hops of an IPv4 channel with extended next hops) */
  return c->c.global->def_tables[net_type];
}

/* Gateway mode and IGP tables, with BIRD 2's checks in its order. */
static int
bgp_postconfig_gw(struct bgp_channel_config *bc, const struct bgp_config *c, char *err, size_t errlen)
{
  if (bc->gw_mode == BGP_GW_UNSET)
    bc->gw_mode = c->multihop ? BGP_GW_RECURSIVE : BGP_GW_DIRECT;
  int v4 = bc->c.net_type == NET_IP4;
  if (bc->gw_mode == BGP_GW_RECURSIVE) {
    /* with extended next hops an IPv4 channel resolves IPv6 ones too */
    int xnh = bc->ext_next_hop;
    if (!bc->igp_table4 && (v4 || xnh))
      bc->igp_table4 = bgp_default_igp_table(c, bc, NET_IP4);
    if (!bc->igp_table6 && (!v4 || xnh))
      bc->igp_table6 = bgp_default_igp_table(c, bc, NET_IP6);
    if (((bc->igp_table4 && !v4) || (bc->igp_table6 && v4)) && !xnh) {
      bsnprintf(err, errlen, "Mismatched IGP table type");
      return -1;
    }
  }
  if (c->multihop && bc->gw_mode == BGP_GW_DIRECT) {
    bsnprintf(err, errlen, "Multihop BGP cannot use direct gateway mode");
    return -1;
  }
  if (bc->gw_mode == BGP_GW_RECURSIVE && bc->c.table->sorted) {
    bsnprintf(err, errlen, "BGP in recursive mode prohibits sorted table");
    return -1;
  }
  if (bc->c.secondary && !bc->c.table->sorted) {
    bsnprintf(err, errlen, "BGP with secondary option requires sorted table");
    return -1;
  }
  return 0;
}

static int
bgp_postconfig(struct proto_config *pc, char *err, size_t errlen)
{
  struct bgp_config *c = (struct bgp_config *) pc;
  if (!c->local_as) {
    bsnprintf(err, errlen, "Local AS number must be set");
    return -1;
  }
  if (ipa_zero(c->remote_ip) && !c->remote_range.type) {
    bsnprintf(err, errlen, "Neighbor must be configured");
    return -1;
  }
  if (!c->remote_as && c->peer_type == BGP_PT_UNSPEC) {
    bsnprintf(err, errlen, "Remote AS number must be set");
    return -1;
  }
  int ibgp = c->peer_type == BGP_PT_INTERNAL || (c->remote_as && c->remote_as == c->local_as);
  if (c->rr_client && !ibgp) {
    bsnprintf(err, errlen, "Only internal neighbor can be RR client");
    return -1;
  }
  if (c->rs_client && ibgp) {
    bsnprintf(err, errlen, "Only external neighbor can be RS client");
    return -1;
  }
  if (!c->confederation && c->confederation_member) {
    bsnprintf(err, errlen, "Confederation ID must be set for member sessions");
    return -1;
  }
  if (ibgp && c->local_role != BGP_ROLE_NONE) {
    bsnprintf(err, errlen, "Local role cannot be set on IBGP sessions");
    return -1;
  }
  if (c->require_roles && c->local_role == BGP_ROLE_NONE) {
    bsnprintf(err, errlen, "Local role must be set if roles are required");
    return -1;
  }
  if (list_empty(&pc->channels)) {
    /* BIRD's default: one IPv4 or IPv6 channel by the neighbor's family. */
    bsnprintf(err, errlen, "No channel configured");
    return -1;
  }
  LIST_WALK_ENTRY(cc, &pc->channels, struct channel_config, n) {
    struct bgp_channel_config *bc = (struct bgp_channel_config *) cc;
    if (!bc->aigp_set)
      bc->aigp = ibgp;          /* BIRD 2: AIGP within the AS only, unless asked */
    if (!ibgp && !cc->in_filter_set) {
      bsnprintf(err, errlen, "EBGP requires explicit import policy");   /* RFC 8212 */
      return -1;
    }
    if (!ibgp && !cc->out_filter_set) {
      bsnprintf(err, errlen, "EBGP requires explicit export policy");
      return -1;
    }
  }
  if (c->multihop < 0)
    c->multihop = ibgp ? 64 : 0;
  LIST_WALK_ENTRY(cc, &pc->channels, struct channel_config, n)
    if (bgp_postconfig_gw((struct bgp_channel_config *) cc, c, err, errlen) < 0)
      return -1;
  if (c->gr_mode == BGP_GR_OFF && c->llgr_mode > BGP_GR_OFF) {
    bsnprintf(err, errlen, "Long-lived graceful restart requires basic graceful restart");
    return -1;
  }
  /* BIRD: long-lived GR follows GR unless configured */
  if (c->llgr_mode < 0)
    c->llgr_mode = c->gr_mode ? BGP_GR_AWARE : BGP_GR_OFF;
  /* A channel restarts gracefully as the protocol does unless told */
  LIST_WALK_ENTRY(cc, &pc->channels, struct channel_config, n) {
    struct bgp_channel_config *bc = (struct bgp_channel_config *) cc;
    if (!bc->gr_able_set)
      bc->gr_able = c->gr_mode == BGP_GR_ABLE;
    if (!bc->llgr_able_set)
      bc->llgr_able = c->llgr_mode == BGP_GR_ABLE;
    if (!bc->llgr_time_set)
      bc->llgr_time = c->llgr_time;
  }
  return 0;
}

static void
bgp_copy_config(struct proto_config *dst, const struct proto_config *src)
{
  size_t off = sizeof(struct proto_config);
  memcpy((u8 *) dst + off, (const u8 *) src + off, sizeof(struct bgp_config) - off);
}

static int
bgp_init(struct proto *pp, char *err, size_t errlen)
{
  struct bgp_proto *p = (struct bgp_proto *) pp;
  const struct bgp_config *cf = (const struct bgp_config *) pp->cf;
  p->incoming_fd = -1;
  p->listen_port = cf->local_port ? cf->local_port : BGP_PORT;
  p->listen_addr = cf->strict_bind ? cf->local_ip : IPA_NONE;
  /* here, not in the loop: the listener may send it as soon as the loop runs */
  ev_init(&p->incoming_ev, bgp_incoming_hook, p);
  int rv = bgp_listen_open(p->listen_addr, p->listen_port, err, errlen);
  if (!rv && cf->password) {
    /* A SYN signed for a socket without the key is dropped by the kernel:
     * the listener needs it too, for this neighbor or the whole range */
    int range = bgp_cf_is_range(cf);
    p->md5_remote = range ? net_prefix(&cf->remote_range) : cf->remote_ip;
    p->md5_pxlen = range ? (int) net_pxlen(&cf->remote_range) : -1;
    if (bgp_listen_md5(p->listen_addr, p->listen_port, p->md5_remote, p->md5_pxlen, cf->password) < 0) {
      bsnprintf(err, errlen, "Cannot set TCP-MD5 password: %m");
      bgp_listen_close(p->listen_addr, p->listen_port);
      rv = -1;
    } else
      p->md5_set = 1;
  }
  /* a range has no routes of its own to recover: it would only hold the recovery up */
  if (!rv && !bgp_cf_is_range(cf))
    bgp_gr_recovery_init(p);
  if (!rv)
    bgp_nh_lock(p);
  return rv;
}

static void
bgp_cleanup(struct proto *pp)
{
  struct bgp_proto *p = (struct bgp_proto *) pp;
  int fd = __atomic_exchange_n(&p->incoming_fd, -1, __ATOMIC_ACQ_REL);
  if (fd >= 0)
    close(fd);
  if (p->md5_set)
    bgp_listen_md5(p->listen_addr, p->listen_port, p->md5_remote, p->md5_pxlen, NULL);
  bgp_listen_close(p->listen_addr, p->listen_port);
  bgp_gr_recovery_cleanup(p);
  bgp_nh_cleanup(p);
  struct bgp_show *s = rcu_xchg_pointer(&p->show, NULL);
  if (s)
    call_rcu(&s->rcu, (void (*)(struct rcu_head *)) free);
}

void
bgp_local_caps(struct bgp_proto *p)
{
  const struct bgp_config *cf = p->cf;
  struct bgp_caps *k = &p->local_caps;
  bgp_caps_init(k);
  if (!cf->capabilities)
    return;
  for (int af = 0; af < BGP_AF_MAX; af++)
    if (p->ch[af].c) {
      k->mp[af] = 1;
      k->add_path[af] = p->ch[af].cf->add_path;
      k->ext_next_hop[af] = af == BGP_AF_IPV4 && p->ch[af].cf->ext_next_hop;
      k->mp_mandatory[af] = p->ch[af].cf->mandatory;
    }
  k->route_refresh = cf->enable_refresh;
  k->enhanced_refresh = cf->enable_refresh;
  k->as4 = cf->enable_as4;
  k->as4_number = p->peer->public_as;
  k->ext_messages = cf->enable_ext_msg;
  bgp_gr_local_caps(p, k);
  k->role = cf->local_role;
  k->role_strict = cf->require_roles;
  if (cf->hostname)
    bsnprintf(k->hostname, sizeof(k->hostname), "%s", cf->hostname);
}

static void bgp_run_free(struct proto_run_info *ri) { mem_free_shared(MEM_PROTOCOLS, ri, sizeof(struct bgp_run)); }

/* The run's session identity, which the rules and the best path read
 * (bgp_rules.h): a new one for each run, since routes of the last run may
 * still be read (exports from the journal, copies in other tables) while
 * this one starts with other settings. */
static struct proto_run_info *
bgp_run_info(struct proto *pp)
{
  static u64 gen_counter;     /* main loop */
  const struct bgp_config *cf = (const struct bgp_config *) pp->pcf;
  struct bgp_run *run = mem_alloc_shared(MEM_PROTOCOLS, sizeof(*run));
  memset(run, 0, sizeof(*run));
  run->ri.uc = 1;
  run->ri.free = bgp_run_free;
  struct bgp_peer_info *i = &run->peer;
  i->gen = ++gen_counter;
  i->remote_ip = cf->remote_ip;
  i->remote_as = cf->remote_as;
  i->local_as = cf->local_as;
  i->ibgp = cf->peer_type == BGP_PT_INTERNAL || (cf->remote_as && cf->remote_as == cf->local_as);
  i->interior = i->ibgp || cf->confederation_member;
  i->confederation = cf->confederation;
  /* RFC 5065 4: outside the confederation we are the confederation */
  i->public_as = (cf->confederation && !i->interior) ? cf->confederation : cf->local_as;
  i->local_id = pp->pcf->router_id ? pp->pcf->router_id : config_running()->router_id;
  /* As BIRD: only client sessions have a cluster id, our router id by default */
  i->rr_client = cf->rr_client;
  i->rr_cluster_id = cf->rr_client ? (cf->rr_cluster_id ? cf->rr_cluster_id : i->local_id) : 0;
  i->rs_client = cf->rs_client;
  i->default_local_pref = cf->default_local_pref;
  i->allow_local_as = cf->allow_local_as;
  i->enforce_first_as = cf->enforce_first_as;
  i->interpret_communities = cf->interpret_communities;
  i->local_role = (u8) cf->local_role;
  i->default_med = cf->default_med;
  i->path_metric = cf->path_metric;
  i->med_metric = cf->med_metric;
  i->igp_metric = cf->igp_metric;
  i->prefer_older = cf->prefer_older;
  i->deterministic_med = cf->deterministic_med;
  return &run->ri;
}

static enum proto_state
bgp_start(struct proto *pp)
{
  struct bgp_proto *p = (struct bgp_proto *) pp;
  p->cf = (const struct bgp_config *) pp->pcf;
  p->rx_mem = lp_new(pp->run_pool);
  p->conn = NULL;
  p->down_requested = 0;
  p->last_error[0] = 0;
  p->peer = &caa_container_of(pp->run_info, struct bgp_run, ri)->peer;
  memset(p->ch, 0, sizeof(p->ch));
  LIST_WALK_ENTRY(c, &pp->channels, struct channel, n) {
    int af = bgp_net_af(c->net_type);
    p->ch[af].c = c;
    p->ch[af].af = af;
    p->ch[af].cf = (struct bgp_channel_config *) c->cf;
  }
  bgp_tx_init(p);
  bgp_nh_start(p);
  bgp_gr_init(p);
  bgp_gr_recovery_start(p);
  hash_init(&p->path_srcs, pp->run_pool, 4);
  bgp_local_caps(p);
  bgp_conn_init(p, &p->out, 1);
  bgp_conn_init(p, &p->in, 0);
  ev_init(&p->tx_ev, bgp_tx_hook, p);
  tm_init(&p->tx_settle, pp->loop, bgp_tx_timer_hook, p);
  bgp_start_connect(p);
  /* As BIRD 2: up only while the session is established (bgp_rx.c); a
   * range stays in Start with its channels down. */
  return PS_START;
}

static enum proto_state
bgp_shutdown(struct proto *pp)
{
  struct bgp_proto *p = (struct bgp_proto *) pp;
  p->down_requested = 1;
  bgp_nh_stop(p);
  p->error_wait = 0;          /* an operator's restart starts afresh, as BIRD */
  tm_stop(&p->connect_timer);
  tm_stop(&p->tx_settle);
  struct bgp_error e;
  bgp_error_set(&e, BGP_ERR_CEASE, BGP_ERR_CEASE_ADMIN_SHUTDOWN, NULL, 0, "Administrative shutdown");
  /* `graceful restart`: no NOTIFICATION, so the neighbor keeps our routes */
  int notify = !gr_shutdown_requested();
  if (notify && p->out.state >= BS_OPENSENT)
    bgp_conn_error(&p->out, &e, "Shutdown");
  else
    bgp_conn_close(&p->out);
  if (notify && p->in.state >= BS_OPENSENT)
    bgp_conn_error(&p->in, &e, "Shutdown");
  else
    bgp_conn_close(&p->in);
  bgp_gr_shutdown(p);
  bgp_tx_reset(p);
  bgp_tx_cleanup(p);
  bgp_path_srcs_free(p);
  return PS_DOWN;
}

static void bgp_reload_routes(struct channel *c);

static int
bgp_str_same(const char *a, const char *b)
{
  return a == b || (a && b && !strcmp(a, b));
}

/* Table configs of two configs: the same table when of the same name. */
static int
bgp_same_table(const struct rtable_config *a, const struct rtable_config *b)
{
  return a == b || (a && b && !strcmp(a->name, b->name));
}

/* As BIRD 2 (bgp_reconfigure, bgp_channel_reconfigure, checked by
 * experiment): any change of the protocol's own options restarts it, timers
 * included (so new timers never wait for the next session); so do a new
 * router ID in use, and in a channel the options that change capabilities
 * or tables. Next hop and AIGP options apply in place: the channel exports
 * again, and AIGP also asks the neighbor to send its routes again; after
 * `configure soft`, neither (BIRD 2 only logs the change). Filters are
 * the channel's business (nest/channel.c). */
static int
bgp_reconfigure(struct proto *pp, struct proto_config *new)
{
  struct bgp_proto *p = (struct bgp_proto *) pp;
  const struct bgp_config *o = p->cf, *n = (const struct bgp_config *) new;
  size_t off = sizeof(struct proto_config);
  if (memcmp((const u8 *) o + off, (const u8 *) n + off, offsetof(struct bgp_config, password) - off) ||
      !bgp_str_same(o->password, n->password) || !bgp_str_same(o->iface, n->iface) ||
      !bgp_str_same(o->hostname, n->hostname))
    return 0;
  if ((new->router_id ? new->router_id : new->global->router_id) != p->peer->local_id)
    return 0;
  u8 refeed[BGP_AF_MAX] = { 0 }, reload[BGP_AF_MAX] = { 0 }, policy[BGP_AF_MAX] = { 0 };
  LIST_WALK_ENTRY(cc, &new->channels, struct channel_config, n) {
    const struct bgp_channel_config *nb = (const struct bgp_channel_config *) cc;
    int af = bgp_net_af(cc->net_type);
    const struct bgp_channel_config *ob = p->ch[af].cf;
    if (!ob || nb->add_path != ob->add_path || nb->gr_able != ob->gr_able || nb->llgr_able != ob->llgr_able ||
        nb->llgr_time != ob->llgr_time || cc->export_table != ob->c.export_table ||
        nb->gw_mode != ob->gw_mode || nb->ext_next_hop != ob->ext_next_hop || nb->mandatory != ob->mandatory ||
        !bgp_same_table(nb->igp_table4, ob->igp_table4) ||
        !bgp_same_table(nb->igp_table6, ob->igp_table6))
      return 0;
    refeed[af] = nb->next_hop_mode != ob->next_hop_mode || !ipa_equal(nb->next_hop_addr, ob->next_hop_addr) ||
                 nb->aigp != ob->aigp || nb->aigp_originate != ob->aigp_originate;
    /* The export policy changed: the channel refeeds alone (nest/channel.c),
     * but a member of an update group leaves it (bgp_refeed) */
    policy[af] = !filter_same(cc->out_filter, ob->c.out_filter) || cc->secondary != ob->c.secondary ||
                 cc->out_limit.max != ob->c.out_limit.max;
    reload[af] = nb->aigp != ob->aigp && p->conn && p->caps.af[af];
    /* AIGP is taken or dropped at parsing, so even an import table cannot
     * reload it; without route refresh BIRD 2 restarts. */
    if (reload[af] && !p->caps.route_refresh)
      return 0;
  }
  LIST_WALK_ENTRY(cc, &new->channels, struct channel_config, n) {
    int af = bgp_net_af(cc->net_type);
    struct bgp_channel *bc = &p->ch[af];
    bc->cf = (struct bgp_channel_config *) cc;
    if (new->global->soft) {
      /* `configure soft`: nothing is sent again, what changes from now on
       * goes out under the new settings; a member's group exports under
       * the old ones, so it goes alone (and later into the group of the
       * new ones, at a marker) */
      if ((refeed[af] || policy[af]) && p->conn)
        bgp_group_soft_change(p, bc);
      continue;
    }
    /* Into the group of the new settings, with a refresh the peer purges
     * by; else a member leaves its group, and goes into the group of its
     * new settings once handed back (bgp_group.c, gm_move_quietly) */
    if ((refeed[af] || policy[af]) && p->conn && p->caps.af[af] && !bgp_group_regroup(p, bc, new->global) &&
        (refeed[af] || bgp_group_member(bc))) {
      bc->quiet_move = bgp_group_member(bc);
      bgp_resend(p, af);
    }
    /* Exporting alone (settings that kept it out of groups, an export
     * limit say, or let go for lagging): its new ones may fit a group, which
     * it joins at a marker once its refeed is out (bgp_group_rejoin) */
    if ((refeed[af] || policy[af]) && p->conn && !bc->gm) {
      bc->rejoin = 1;
      ev_schedule(&p->tx_ev);
    }
    if (reload[af])
      bgp_reload_routes(p->ch[af].c);
  }
  p->cf = n;
  return 1;
}

/* The import filter changed: have the peer send everything again (RFC
 * 2918); without route refresh, only a new session gets the routes again. */
static void
bgp_reload_routes(struct channel *c)
{
  struct bgp_proto *p = (struct bgp_proto *) c->proto;
  if (!p->conn)
    return;           /* the next session imports through the new filter */
  int af = bgp_net_af(c->net_type);
  if (!p->caps.route_refresh) {
    struct bgp_error e;
    bgp_error_set(&e, BGP_ERR_CEASE, BGP_ERR_CEASE_CONFIG_CHANGE, NULL, 0, "Configuration change");
    bgp_conn_error(p->conn, &e, "Error: Reload needs route refresh");
    return;
  }
  struct bgp_route_refresh rr = { .afi = bgp_af_afi(af), .subtype = BGP_RR_NORMAL, .safi = BGP_SAFI_UNICAST };
  u8 buf[64];
  uint len = bgp_route_refresh_encode(buf, sizeof(buf), &rr);
  if (len)
    bgp_send_now(p->conn, buf, len);
}

/* BIRD 2: a session that is not up has nothing to reload (the protocol is
 * in start there); without route refresh a reload in fails. */
static int
bgp_can_reload_in(struct proto *pp)
{
  struct bgp_proto *p = (struct bgp_proto *) pp;
  int rv;
  rcu_read_lock();
  const struct bgp_show *s = rcu_dereference(p->show);
  if (!s || s->state != BS_ESTABLISHED || !s->have_remote_caps)
    rv = 0;
  else
    rv = s->remote_caps.route_refresh ? 1 : -1;
  rcu_read_unlock();
  /* Channels with an import table reload from it, no refresh needed (the
   * channel list changes only on reconfiguration, driven from here). */
  if (rv < 0) {
    rv = 1;
    LIST_WALK_ENTRY(c, &pp->channels, struct channel, n)
      if (!c->in_table)
        rv = -1;
  }
  return rv;
}

static void
bgp_dump(struct proto *pp)
{
  struct bgp_proto *p = (struct bgp_proto *) pp;
  debug_msg("  BGP: out %s, in %s\n", bgp_state_name(p->out.state), bgp_state_name(p->in.state));
}

const struct proto_class proto_bgp = {
  .name = "BGP",
  .template_name = "bgp%d",
  .keyword = "bgp",
  .class_id = 3,
  .config_size = sizeof(struct bgp_config),
  .proto_size = sizeof(struct bgp_proto),
  .channel_config_size = sizeof(struct bgp_channel_config),
  .channel_mask = NB_IP,
  .max_channels = 2,
  .source = RTS_BGP,
  .default_preference = 100,
  .preconfig = bgp_preconfig,
  .postconfig = bgp_postconfig,
  .copy_config = bgp_copy_config,
  .respawn_config = bgp_respawn_config,
  .init = bgp_init,
  .cleanup = bgp_cleanup,
  .run_info = bgp_run_info,
  .start = bgp_start,
  .shutdown = bgp_shutdown,
  .reconfigure = bgp_reconfigure,
  .preexport = bgp_preexport,
  .rt_notify = bgp_rt_notify,
  .export_busy = bgp_export_busy,
  .export_flush = bgp_export_flush,
  .feed_end = bgp_feed_end,
  .refeed_elsewhere = bgp_group_reload_out,
  .reload_routes = bgp_reload_routes,
  .reload_asks_peer = 1,
  .can_reload_in = bgp_can_reload_in,
  .rte_better = bgp_rte_better,
  .rte_group = bgp_rte_group,
  .rte_mergable = bgp_rte_mergable,
  .rte_info = bgp_rte_info,
  .rte_from = bgp_rte_from,
  .show_info = bgp_show_info,
  .show_channel_info = bgp_show_channel,
  .dump = bgp_dump,
};

void
bgp_build(void)
{
  proto_build(&proto_bgp);
  ea_register_class(EAP_BGP, &bgp_ea_class);
  bgp_memo_init();
}
