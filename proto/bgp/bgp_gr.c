/*
 * DOC: BGP graceful restart helper (RFC 4724), long-lived graceful restart
 * (RFC 9494) and enhanced route refresh (RFC 7313), as BIRD 2 does them.
 *
 * All three are refresh cycles of a channel's imports (nest/channel_refresh.c):
 * the neighbor's routes become stale at once, routes it announces again are
 * fresh, and the stale rest is withdrawn in chunks at the end of the cycle.
 *
 * Helper side, per family: when an established session with a neighbor
 * that announced GR for the family ends without a NOTIFICATION (TCP reset
 * or close, hold timer), its routes stay, stale, for the neighbor's restart
 * time (state Regular). If the session comes back and the neighbor kept
 * its forwarding state (F bit), the cycle ends at its End-of-RIB (or when
 * the same timer, now guarding the stale routes, fires); without the F bit
 * the stale routes go at once. If the restart time runs out, a family the
 * neighbor announced LLGR for becomes Long-lived: its stale routes get the
 * LLGR_STALE community (65535:6), lose every best-path comparison against
 * fresh ones, are not exported to peers without LLGR, and stay for the long
 * lived stale time; routes tagged NO_LLGR go right away. BIRD 2 requires
 * the F bit, not the R flag, of the new session, as RFC 4724 4.2 does.
 *
 * Enhanced route refresh: BoRR from the neighbor begins a cycle, EoRR ends
 * it. When the neighbor asks us, we send BoRR, the whole table, EoRR.
 *
 * Ownership: everything here belongs to the instance's loop; the CLI sees
 * the state through the struct bgp_show snapshot.
 */
#include <stdlib.h>
#include <string.h>
#include "proto/bgp/bgp.h"
#include "proto/bgp/bgp_group.h"
#include "nest/cli.h"
#include "lib/log.h"

static const char *const gr_state_names[] = { [BGP_GRS_NONE] = "None", [BGP_GRS_ACTIVE] = "Regular",
                                              [BGP_GRS_LLGR] = "Long-lived" };

static void bgp_gr_timeout(struct timer *t);
static void bgp_gr_stale_timeout(struct timer *t);

void
bgp_gr_init(struct bgp_proto *p)
{
  p->gr_active_num = 0;
  tm_init(&p->gr_timer, p->p.loop, bgp_gr_timeout, p);
  for (int af = 0; af < BGP_AF_MAX; af++)
    tm_init(&p->ch[af].stale_timer, p->p.loop, bgp_gr_stale_timeout, &p->ch[af]);
}

/* What we announce: `graceful restart aware` is the bare capability (we
 * keep the neighbor's routes); the families that can restart (the
 * channels' `graceful restart`, the protocol's `on` by default) are listed
 * with our restart time. The same for LLGR, with each family's stale time.
 * As BIRD 2, a protocol with GR off announces no family of its channels. */
void
bgp_gr_local_caps(struct bgp_proto *p, struct bgp_caps *k)
{
  const struct bgp_config *cf = p->cf;
  if (cf->gr_mode != BGP_GR_OFF)
    k->gr = 1;
  if (cf->llgr_mode != BGP_GR_OFF)
    k->llgr = 1;
  for (int af = 0; af < BGP_AF_MAX; af++) {
    const struct bgp_channel_config *cc = p->ch[af].cf;
    if (!p->ch[af].c)
      continue;
    if (k->gr && cc->gr_able) {
      k->gr_time = cf->gr_time;
      k->gr_af[af] = BGP_GR_AF_PRESENT;
    }
    if (k->llgr && cc->llgr_able) {
      k->llgr_af[af] = BGP_LLGR_AF_PRESENT;
      k->llgr_time[af] = cc->llgr_time;
    }
  }
  /* After our own restart (bird -R) as BIRD: R flag, and the forwarding
   * state of every family counts as kept (F bits). */
  if (p->gr_deferred && cf->gr_mode == BGP_GR_ABLE) {
    k->gr_flags |= BGP_GRF_RESTART;
    for (int af = 0; af < BGP_AF_MAX; af++) {
      if (k->gr_af[af])
        k->gr_af[af] |= BGP_GR_AF_FORWARDING;
      if (k->llgr_af[af])
        k->llgr_af[af] |= BGP_LLGR_AF_FORWARDING;
    }
  }
}

/* --- Our own restart: the recovery (nest/gr_recovery.c) --- */

static void
bgp_gr_recovery_release(struct bgp_proto *p, enum bgp_af af)
{
  if (!p->gr_recovery_lock[af])
    return;
  p->gr_recovery_lock[af] = 0;
  gr_recovery_unlock();
}

/* Main loop, before the protocol starts: one lock per channel, taken
 * before any loop can release one, so the recovery cannot end early. */
void
bgp_gr_recovery_init(struct bgp_proto *p)
{
  const struct bgp_config *cf = (const struct bgp_config *) p->p.cf;
  p->gr_deferred = 0;
  if (!gr_recovery_active() || cf->gr_mode != BGP_GR_ABLE)
    return;
  LIST_WALK_ENTRY(cc, &cf->c.channels, struct channel_config, n) {
    int af = bgp_net_af(cc->net_type);
    if (!p->gr_recovery_lock[af]) {
      p->gr_recovery_lock[af] = 1;
      gr_recovery_lock();
    }
  }
  p->gr_deferred = 1;
}

/* The recovery is over: feed the neighbor, End-of-RIB follows. */
static void
bgp_gr_recovery_done(void *data)
{
  struct bgp_proto *p = data;
  if (!p->gr_deferred)
    return;
  p->gr_deferred = 0;
  bgp_local_caps(p);        /* no R flag in later sessions */
  for (int af = 0; af < BGP_AF_MAX; af++)
    if (p->conn && p->ch[af].c && p->caps.af[af])
      bgp_refeed(p, af);
  bgp_update_show(p);
}

/* Protocol loop, at start. */
void
bgp_gr_recovery_start(struct bgp_proto *p)
{
  ev_init(&p->gr_recovery_ev, bgp_gr_recovery_done, p);
  p->gr_waiter.loop = p->p.loop;
  p->gr_waiter.ev = &p->gr_recovery_ev;
  if (p->gr_deferred && !gr_recovery_wait(&p->gr_waiter))
    p->gr_deferred = 0;
}

/* Main loop, after the run: whatever we still hold. */
void
bgp_gr_recovery_cleanup(struct bgp_proto *p)
{
  gr_recovery_cancel(&p->gr_waiter);
  for (int af = 0; af < BGP_AF_MAX; af++)
    bgp_gr_recovery_release(p, af);
  p->gr_deferred = 0;
}

/* --- The neighbor's routes --- */

/* From the well-known communities cached in the list (bgp_rules.c):
 * every comparison of two routes asks this of both, and an IXP's routes
 * carry hundreds of communities to scan. */
int
bgp_llgr_stale(const struct ea_list *a)
{
  return !!(bgp_wk_communities(a) & BGP_WK_LLGR_STALE);
}

#define BGP_LLGR_STACK_COMM 256

/* RFC 9494 4.2: the stale route with LLGR_STALE added; NO_LLGR ones go. */
static struct ea_list *
bgp_llgr_modify(struct channel *c, const struct rte *r)
{
  (void) c;
  const struct eattr *e = ea_find(rte_attrs(r), BGP_EA(BA_COMMUNITY));
  uint n = e ? e->len / 4 : 0;
  const u32 *v = e ? ea_data(rte_attrs(r), e) : NULL;
  for (uint i = 0; i < n; i++) {
    if (v[i] == BGP_COMM_NO_LLGR)
      return NULL;
    if (v[i] == BGP_COMM_LLGR_STALE)
      return ea_ref(rte_attrs(r));
  }
  /* a peer's list may hold 16k communities: past a few hundred, the heap */
  u32 local[BGP_LLGR_STACK_COMM];
  u32 *comm = n < BGP_LLGR_STACK_COMM ? local : malloc((n + 1) * sizeof(u32));
  if (!comm)
    die("Unable to allocate %zu bytes of memory", (n + 1) * sizeof(u32));
  if (n)
    memcpy(comm, v, n * 4);
  comm[n] = BGP_COMM_LLGR_STALE;
  struct ea_builder b;
  ea_builder_from(&b, rte_attrs(r));
  ea_set_data(&b, BGP_EA(BA_COMMUNITY), EAF_INT_SET, BAF_OPTIONAL | BAF_TRANSITIVE, comm, (n + 1) * sizeof(u32));
  struct ea_list *a = ea_intern(&b);
  if (comm != local)
    free(comm);
  return a;
}

void
bgp_flush_af(struct bgp_proto *p, enum bgp_af af)
{
  struct channel *c = p->ch[af].c;
  if (!c)
    return;
  chan_refresh_begin(c);
  chan_refresh_end(c);
}

static u32
bgp_llgr_time(struct bgp_proto *p, enum bgp_af af)
{
  if (p->cf->llgr_mode == BGP_GR_OFF || !(p->caps.llgr_peer_af[af] & BGP_LLGR_AF_PRESENT))
    return 0;
  return MIN(p->ch[af].cf->llgr_time, p->caps.llgr_peer_time[af]);
}

int
bgp_llgr_ready(struct bgp_proto *p)
{
  for (int af = 0; af < BGP_AF_MAX; af++)
    if (p->ch[af].c && p->caps.af[af] && p->cf->llgr_mode != BGP_GR_OFF &&
        (p->caps.llgr_peer_af[af] & BGP_LLGR_AF_PRESENT))
      return 1;
  return 0;
}

/* The cycle of a family ends: what is still stale goes (in chunks). */
static void
bgp_gr_done(struct bgp_proto *p, enum bgp_af af)
{
  struct bgp_channel *bc = &p->ch[af];
  if (bc->gr_state == BGP_GRS_NONE)
    return;
  log_msg(L_TRACE, "%s: Neighbor graceful restart done (%s)", p->p.name, af == BGP_AF_IPV4 ? "ipv4" : "ipv6");
  bc->gr_state = BGP_GRS_NONE;
  tm_stop(&bc->stale_timer);
  chan_refresh_end(bc->c);
  if (!--p->gr_active_num)
    tm_stop(&p->gr_timer);
}

static void
bgp_gr_enter_llgr(struct bgp_proto *p, enum bgp_af af, u32 stale_time)
{
  struct bgp_channel *bc = &p->ch[af];
  bc->gr_state = BGP_GRS_LLGR;
  tm_start(&bc->stale_timer, (btime) stale_time * S_ 1);
  chan_refresh_modify_stale(bc->c, bgp_llgr_modify);
}

/* GR negotiated for the family: we help, the neighbor can restart it. */
static int
bgp_gr_af_ready(const struct bgp_proto *p, enum bgp_af af)
{
  return p->ch[af].c && p->caps.af[af] && p->cf->gr_mode != BGP_GR_OFF &&
         (p->caps.gr_peer_af[af] & BGP_GR_AF_PRESENT);
}

int
bgp_gr_ready(const struct bgp_proto *p)
{
  for (int af = 0; af < BGP_AF_MAX; af++)
    if (bgp_gr_af_ready(p, af))
      return 1;
  return 0;
}

/* Will the family's routes be kept when the session goes down now? */
static int
bgp_gr_keeps(struct bgp_proto *p, enum bgp_af af, int graceful, int *gr, u32 *llgr)
{
  *gr = graceful && bgp_gr_af_ready(p, af);
  *llgr = graceful && p->caps.af[af] ? bgp_llgr_time(p, af) : 0;
  return *gr || *llgr || (graceful && p->ch[af].gr_state == BGP_GRS_LLGR);
}

uint
bgp_gr_session_down(struct bgp_proto *p, int graceful)
{
  uint kept = 0, regular = 0;
  /* Unless some family is kept, BIRD 2 restarts the protocol: the
   * channels go down. Otherwise they all stay paused, the families not
   * kept flushed. */
  int any = 0, gr;
  u32 llgr;
  for (int af = 0; af < BGP_AF_MAX; af++)
    any |= p->ch[af].c && bgp_gr_keeps(p, af, graceful, &gr, &llgr);
  for (int af = 0; af < BGP_AF_MAX; af++) {
    struct bgp_channel *bc = &p->ch[af];
    if (!bc->c)
      continue;
    bc->rr_active = 0;
    bc->eorr_pending = 0;
    int keep_llgr = graceful && bc->gr_state == BGP_GRS_LLGR;
    if (!bgp_gr_keeps(p, af, graceful, &gr, &llgr)) {
      if (bc->gr_state != BGP_GRS_NONE) {
        bc->gr_state = BGP_GRS_NONE;
        p->gr_active_num--;
      }
      tm_stop(&bc->stale_timer);
      chan_refresh_stop(bc->c);
      if (any)
        bgp_flush_af(p, af);
      else
        chan_flush_down(bc->c);
      continue;
    }
    /* Down again before the cycle ended: what came meanwhile is stale too. */
    chan_refresh_begin(bc->c);
    kept++;
    if (bc->gr_state == BGP_GRS_NONE)
      p->gr_active_num++;
    if (keep_llgr) {
      /* Its stale timer runs on; what came meanwhile gets LLGR_STALE too. */
      chan_refresh_modify_stale(bc->c, bgp_llgr_modify);
      continue;
    }
    if (gr) {
      bc->gr_state = BGP_GRS_ACTIVE;
      regular++;
    } else
      bgp_gr_enter_llgr(p, af, llgr);   /* LLGR without GR: no restart time */
  }
  if (!p->gr_active_num)
    tm_stop(&p->gr_timer);
  else if (regular) {
    log_msg(L_TRACE, "%s: Neighbor graceful restart detected", p->p.name);
    tm_start(&p->gr_timer, (btime) p->caps.gr_peer_time * S_ 1);
  }
  return kept;
}

void
bgp_gr_session_up(struct bgp_proto *p)
{
  int regular = 0;
  for (int af = 0; af < BGP_AF_MAX; af++) {
    struct bgp_channel *bc = &p->ch[af];
    /* Our recovery waits for the neighbor's End-of-RIB, if it sends one. */
    if (!p->caps.af[af] || !p->conn->remote.caps.gr)
      bgp_gr_recovery_release(p, af);
    bc->rr_active = 0;
    bc->eorr_pending = 0;
    if (bc->gr_state == BGP_GRS_NONE)
      continue;
    /* RFC 4724 4.2, RFC 9494 4.2: without the F bit the forwarding state
     * is lost, and so is every stale route. */
    int kept = p->caps.af[af] && (bc->gr_state == BGP_GRS_ACTIVE
                                    ? (p->caps.gr_peer_af[af] & BGP_GR_AF_FORWARDING)
                                    : (p->caps.llgr_peer_af[af] & BGP_LLGR_AF_FORWARDING));
    if (!kept)
      bgp_gr_done(p, af);
    else
      regular += bc->gr_state == BGP_GRS_ACTIVE;
  }
  /* The restart timer goes on as the stale routes timer: a neighbor that
   * never sends End-of-RIB does not keep its stale routes for good. */
  if (regular)
    tm_start(&p->gr_timer, (btime) MAX(p->caps.gr_peer_time, 1) * S_ 1);
  else
    tm_stop(&p->gr_timer);
}

void
bgp_gr_rx_eor(struct bgp_proto *p, enum bgp_af af)
{
  bgp_gr_recovery_release(p, af);
  bgp_gr_done(p, af);
  bgp_update_show(p);
}

static void
bgp_gr_timeout(struct timer *t)
{
  struct bgp_proto *p = t->data;
  for (int af = 0; af < BGP_AF_MAX; af++) {
    struct bgp_channel *bc = &p->ch[af];
    if (bc->gr_state != BGP_GRS_ACTIVE)
      continue;
    u32 llgr = p->conn ? 0 : bgp_llgr_time(p, af);
    if (llgr) {
      log_msg(L_TRACE, "%s: Neighbor graceful restart timeout, long-lived stale routes kept", p->p.name);
      bgp_gr_enter_llgr(p, af, llgr);
    } else
      bgp_gr_done(p, af);
  }
  /* Nothing kept and no session: BIRD 2 restarts the protocol here, the
   * channels go down (the flush bgp_gr_done began goes on there). */
  if (!p->conn && !p->gr_active_num)
    for (int af = 0; af < BGP_AF_MAX; af++)
      if (p->ch[af].c)
        chan_flush_down(p->ch[af].c);
  bgp_update_show(p);
}

static void
bgp_gr_stale_timeout(struct timer *t)
{
  struct bgp_channel *bc = t->data;
  struct bgp_proto *p = (struct bgp_proto *) bc->c->proto;
  bgp_gr_done(p, bc->af);
  bgp_update_show(p);
}

void
bgp_gr_shutdown(struct bgp_proto *p)
{
  tm_stop(&p->gr_timer);
  for (int af = 0; af < BGP_AF_MAX; af++) {
    tm_stop(&p->ch[af].stale_timer);
    p->ch[af].gr_state = BGP_GRS_NONE;
  }
  p->gr_active_num = 0;
}

/* --- Enhanced route refresh --- */

void
bgp_send_rr(struct bgp_proto *p, enum bgp_af af, u8 subtype)
{
  struct bgp_route_refresh rr = { .afi = bgp_af_afi(af), .subtype = subtype, .safi = BGP_SAFI_UNICAST };
  u8 buf[64];
  uint len = bgp_route_refresh_encode(buf, sizeof(buf), &rr);
  if (len)
    bgp_send(p->conn, buf, len);
}

void
bgp_gr_rx_route_refresh(struct bgp_proto *p, enum bgp_af af, u8 subtype)
{
  struct bgp_channel *bc = &p->ch[af];
  if (!bc->c || !p->caps.af[af])
    return;
  switch (subtype) {
  case BGP_RR_NORMAL:
    /* RFC 7313 4: the whole table between BoRR and EoRR, which the tx
     * hook sends once the refeed has left. */
    if (p->caps.enhanced_refresh)
      bgp_send_rr(p, af, BGP_RR_BEGIN);
    /* in a group, the group resends and closes with EoRR in the log */
    if (bgp_group_refeed(p, bc, p->caps.enhanced_refresh))
      break;
    bc->eorr_pending = p->caps.enhanced_refresh;
    bgp_resend(p, af);
    break;
  case BGP_RR_BEGIN:
    if (!p->caps.enhanced_refresh)
      break;
    bc->rr_active = 1;
    chan_refresh_begin(bc->c);
    break;
  case BGP_RR_END:
    /* RFC 7313 4: an EoRR without BoRR is ignored. */
    if (!p->caps.enhanced_refresh || !bc->rr_active)
      break;
    bc->rr_active = 0;
    chan_refresh_end(bc->c);
    /* A GR cycle of the family ended with it. */
    if (bc->gr_state != BGP_GRS_NONE)
      bgp_gr_done(p, af);
    break;
  }
}

/* --- CLI (main loop, RCU snapshot) --- */

void
bgp_gr_show_channel(struct proto *pp, struct channel *c, struct cli *cli)
{
  struct bgp_proto *p = (struct bgp_proto *) pp;
  int af = bgp_net_af(c->net_type);
  rcu_read_lock();
  const struct bgp_show *s = pp->loop ? rcu_dereference(p->show) : NULL;
  if (s && s->gr_state[af] != BGP_GRS_NONE)
    cli_printf(cli, -1006, "    Neighbor GR:    %s", gr_state_names[s->gr_state[af]]);
  if (s && s->gr_stale_expires[af])
    cli_printf(cli, -1006, "    LL stale timer: %t/-", MAX(s->gr_stale_expires[af] - time_mono_now(), 0));
  rcu_read_unlock();
}
